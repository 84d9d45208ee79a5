//! `gpuquota sim`: the virtual-time simulator (library crate `gpuquota-sim`; its docs
//! describe the scenario file and the JSON contract).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::common::{CliError, print_diagnostics};

/// `--output` of `sim`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SimOutput {
    /// The JSON report (documented in the `gpuquota-sim` crate docs).
    Json,
    /// Per queue and per class, with a plain-language summary.
    Table,
    /// One row per run and flavor-resource.
    Csv,
    /// The summary document Kueue's perf runner writes.
    KueueSummary,
}

/// `gpuquota sim` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  gpuquota sim sim.yaml -o table                        per queue and class, then what happened
  gpuquota sim sim.yaml --plot usage.svg > report.json  the JSON report and a usage plot
  gpuquota sim sim.yaml -o kueue-summary                the summary Kueue's perf runner writes")]
pub(crate) struct SimArgs {
    /// A `Simulation` scenario, Kueue's perf-test generator config, or KAI's
    /// time-based-fairshare simulator config.
    file: PathBuf,
    /// Output format [default: table on a terminal, json otherwise].
    #[arg(short, long, value_enum)]
    output: Option<SimOutput>,
    /// Also write an SVG plot of usage per queue over time.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
}

pub(crate) fn run(args: SimArgs) -> Result<ExitCode, CliError> {
    if let Ok(text) = gpuquota_model::source::read_text(&args.file)
        && gpuquota_sim::kai::is_kai(&text)
    {
        return run_kai(&args);
    }
    let scenario = match gpuquota_sim::scenario::load(&args.file) {
        Ok(s) => s,
        Err(d) => {
            print_diagnostics(d.iter());
            // the scenario named on the command line cannot be read: exit 2, as for every
            // command (a file the scenario names is part of the input: exit 1)
            let unreadable = std::fs::File::open(&args.file).is_err()
                && d.iter()
                    .any(|x| x.code == gpuquota_model::diag::codes::READ_FAILED);
            return Ok(ExitCode::from(if unreadable { 2 } else { 1 }));
        }
    };
    let report = match gpuquota_sim::simulate(&scenario) {
        Ok(r) => r,
        Err(d) => {
            print_diagnostics(d.iter());
            return Ok(ExitCode::from(1));
        }
    };
    if print_diagnostics(report.diagnostics.iter()) {
        return Ok(ExitCode::from(1));
    }
    let text = match crate::common::output_or(args.output, SimOutput::Table, SimOutput::Json) {
        SimOutput::Json => report.to_json_string(),
        SimOutput::Table => report.table(crate::common::table_width()),
        SimOutput::Csv => report.to_csv(),
        SimOutput::KueueSummary => {
            let classes: BTreeMap<String, String> = scenario
                .model
                .cluster_queues
                .iter()
                .map(|(n, c)| {
                    (
                        n.clone(),
                        c.metadata
                            .labels
                            .get(gpuquota_sim::scenario::PERF_CLASS_LABEL)
                            .cloned()
                            .unwrap_or_default(),
                    )
                })
                .collect();
            report.to_kueue_summary(&classes)
        }
    };
    if let Some(path) = &args.plot {
        let svg = gpuquota_sim::plot::svg(&report).map_err(CliError)?;
        std::fs::write(path, svg).map_err(|e| CliError(format!("{}: {e}", path.display())))?;
    }
    out!("{text}");
    Ok(ExitCode::SUCCESS)
}

/// `engine: kai` scenarios and KAI's time-based-fairshare simulator config.
fn run_kai(args: &SimArgs) -> Result<ExitCode, CliError> {
    let scenario = match gpuquota_sim::kai::load(&args.file) {
        Ok(s) => s,
        Err(d) => {
            print_diagnostics(d.iter());
            return Ok(ExitCode::from(1));
        }
    };
    let outcome = match gpuquota_sim::kai::simulate(&scenario) {
        Ok(r) => r,
        Err(d) => {
            print_diagnostics(d.iter());
            return Ok(ExitCode::from(1));
        }
    };
    if print_diagnostics(outcome.warnings.iter()) {
        return Ok(ExitCode::from(1));
    }
    let text = match args.output {
        SimOutput::Json => outcome.to_json_string(),
        SimOutput::Table => outcome.to_table(),
        SimOutput::Csv => outcome.to_csv(),
        SimOutput::KueueSummary => {
            return Err(CliError(
                "--output kueue-summary is Kueue's perf summary; a KAI run writes json, table or csv"
                    .to_owned(),
            ));
        }
    };
    if let Some(path) = &args.plot {
        let svg = gpuquota_sim::kai::plot::svg(&outcome).map_err(CliError)?;
        std::fs::write(path, svg).map_err(|e| CliError(format!("{}: {e}", path.display())))?;
    }
    print!("{text}");
    Ok(ExitCode::SUCCESS)
}
