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
    /// A `Simulation` scenario, or Kueue's perf-test generator config.
    #[arg(required = true)]
    file: Option<PathBuf>,
    /// `sim diff A.yaml B.yaml`: compare two scenarios per department.
    #[command(subcommand)]
    command: Option<SimCommand>,
    /// Output format.
    #[arg(long, value_enum, default_value = "json")]
    output: SimOutput,
    /// Also write an SVG plot of usage per queue over time.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
}

/// `sim` subcommands.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum SimCommand {
    /// What-if: simulate two scenarios over the same workloads and compare them per
    /// department (GPU-hours, borrowed hours, time to admission, preemptions, lost hours,
    /// utilisation, cost).
    Diff {
        /// Scenario A.
        a: PathBuf,
        /// Scenario B.
        b: PathBuf,
        /// Output format: json or table.
        #[arg(long, value_enum, default_value = "table")]
        output: SimOutput,
        /// Also write an SVG with both runs' usage side by side.
        #[arg(long, value_name = "FILE.svg")]
        plot: Option<PathBuf>,
    },
}

/// Loads and simulates one scenario; `Err(code)` after printing its problems.
fn load_run(
    path: &std::path::Path,
) -> Result<(gpuquota_sim::Scenario, gpuquota_sim::Report), ExitCode> {
    let scenario = gpuquota_sim::scenario::load(path).map_err(|d| {
        print_diagnostics(d.iter());
        ExitCode::from(1)
    })?;
    let report = gpuquota_sim::simulate(&scenario).map_err(|d| {
        print_diagnostics(d.iter());
        ExitCode::from(1)
    })?;
    if print_diagnostics(report.diagnostics.iter()) {
        return Err(ExitCode::from(1));
    }
    Ok((scenario, report))
}

fn diff(
    a: &std::path::Path,
    b: &std::path::Path,
    output: SimOutput,
    plot: Option<&std::path::Path>,
) -> Result<ExitCode, CliError> {
    let (sa, ra) = match load_run(a) {
        Ok(x) => x,
        Err(code) => return Ok(code),
    };
    let (sb, rb) = match load_run(b) {
        Ok(x) => x,
        Err(code) => return Ok(code),
    };
    let doc = gpuquota_sim::diff::diff(&sa, &ra, &sb, &rb);
    let text = match output {
        SimOutput::Json => crate::common::to_json(&doc)?,
        SimOutput::Table => gpuquota_sim::diff::table(&doc),
        other => {
            return Err(CliError(format!(
                "sim diff: --output {other:?} is not supported (json, table)"
            )));
        }
    };
    if let Some(path) = plot {
        let svg = gpuquota_sim::diff::svg(&sa, &ra, &sb, &rb).map_err(CliError)?;
        std::fs::write(path, svg).map_err(|e| CliError(format!("{}: {e}", path.display())))?;
    }
    print!("{text}");
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn run(args: SimArgs) -> Result<ExitCode, CliError> {
    if let Some(SimCommand::Diff { a, b, output, plot }) = &args.command {
        return diff(a, b, *output, plot.as_deref());
    }
    let Some(file) = &args.file else {
        return Err(CliError("sim: a scenario file is required".into()));
    };
    let scenario = match gpuquota_sim::scenario::load(file) {
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
