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
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub(crate) struct SimArgs {
    /// Sweep or merge instead of one simulation.
    #[command(subcommand)]
    command: Option<crate::sweep::SweepCommand>,
    /// A `Simulation` scenario, or Kueue's perf-test generator config.
    #[arg(required = true)]
    file: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "json")]
    output: SimOutput,
    /// Also write an SVG plot of usage per queue over time.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
}

pub(crate) fn run(args: SimArgs) -> Result<ExitCode, CliError> {
    if let Some(c) = args.command {
        return crate::sweep::run(c);
    }
    let Some(file) = args.file else {
        return Err(CliError("a scenario file is required".into()));
    };
    let scenario = match gpuquota_sim::scenario::load(&file) {
        Ok(s) => s,
        Err(d) => {
            print_diagnostics(d.iter());
            return Ok(ExitCode::from(1));
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
    let text = match args.output {
        SimOutput::Json => report.to_json_string(),
        SimOutput::Table => report.to_table(),
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
    print!("{text}");
    Ok(ExitCode::SUCCESS)
}
