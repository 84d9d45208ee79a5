//! `gpuquota example`: a commented sample of every input format the commands read
//! ([`gpuquota::samples`]); `tests/all/examples.rs` runs every one through the binary under
//! `--strict`.

use gpuquota::samples::{SAMPLES, list};

use crate::common::CliError;

/// The name of the Grafana dashboard over `meter --output openmetrics` (no input file: a
/// dashboard to import, built from the metric names the meter writes).
pub(crate) const GRAFANA: &str = "grafana-dashboard";

/// Arguments of `gpuquota example`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  gpuquota example                          list the samples and the commands that read them
  gpuquota example kueue > kueue.yaml       save one
  gpuquota kueue schedule kueue.yaml        and run it")]
pub(crate) struct ExampleArgs {
    /// The sample to print; `list` (the default) lists them all.
    #[arg(value_name = "LIST|NAME", default_value = "list", value_parser = names())]
    name: String,
}

/// `list` and every sample's name, for the argument's possible values.
fn names() -> clap::builder::PossibleValuesParser {
    let mut values = vec![clap::builder::PossibleValue::new("list").help("list the samples")];
    values.extend(
        SAMPLES
            .iter()
            .map(|s| clap::builder::PossibleValue::new(s.name).help(s.about)),
    );
    values.push(
        clap::builder::PossibleValue::new(GRAFANA)
            .help("Grafana dashboard (JSON) over `gpuquota meter --output openmetrics`"),
    );
    clap::builder::PossibleValuesParser::new(values)
}

pub(crate) fn run(args: ExampleArgs) -> Result<(), CliError> {
    let text = match SAMPLES.iter().find(|s| s.name == args.name) {
        Some(sample) => sample.text.to_string(),
        None if args.name == GRAFANA => gpuquota::report::grafana::dashboard_json(),
        None => list(),
    };
    crate::common::write_stdout(text.as_bytes())?;
    Ok(())
}
