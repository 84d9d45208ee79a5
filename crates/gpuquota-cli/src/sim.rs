//! `gpuquota sim`: the virtual-time simulator (library crate `gpuquota-sim`; its docs
//! describe the scenario file and the JSON contract).

use std::path::PathBuf;

use gpuquota::command::sim::{Format, Output};
use gpuquota::command::sweep::Written;

use crate::common::{CliError, cx};

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
    /// The run as the objects a kubectl dump of its cluster holds (a YAML List): Kueue
    /// Workloads with their conditions, or for a KAI run its PodGroups and Pods; a
    /// `history:` source reads them back, and the replay under the same scenario is exact
    /// (fidelity without error) when no run resumes and no budget stops one.
    Workloads,
}

/// `gpuquota sim` arguments.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
#[command(group(clap::ArgGroup::new("written").multiple(true).args(["plot", "report"])))]
#[command(after_help = "\
Examples:
  gpuquota sim sim.yaml -o table                        per queue and class, then what happened
  gpuquota sim sim.yaml --plot usage.svg > report.json  the JSON report and a usage plot
  gpuquota sim sim.yaml --report month.html             also the month as one HTML page
  gpuquota sim sim.yaml -o kueue-summary                the summary Kueue's perf runner writes
  gpuquota sim sim.yaml -o workloads > dump.yaml        the run as Workloads, or KAI PodGroups and Pods (history: reads them)
  gpuquota sim diff a.yaml b.yaml -o table              two scenarios compared per department
  gpuquota sim sweep sim.yaml --set engine=kueue,resourcequota   a policy sweep, one row per run")]
pub(crate) struct SimArgs {
    /// A `Simulation` scenario, Kueue's perf-test generator config, or KAI's
    /// time-based-fairshare simulator config; `-` reads it from standard input (the files it
    /// names are then relative to the current directory).
    #[arg(required = true)]
    file: Option<PathBuf>,
    /// `sim diff A.yaml B.yaml`: compare two scenarios per department.
    #[command(subcommand)]
    command: Option<SimCommand>,
    /// Output format [default: table on a terminal, json otherwise].
    #[arg(short, long, value_enum)]
    output: Option<SimOutput>,
    /// Also write an SVG plot of usage per queue over time.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Also write the run as one self-contained HTML page: summary, bill, usage over time,
    /// time to admission, preemptions, the longest waiters, the inputs.
    #[arg(long, value_name = "FILE.html")]
    report: Option<PathBuf>,
    /// Replace the `--plot` and `--report` files if they exist (else refused).
    #[arg(long, requires = "written")]
    force: bool,
    /// No progress bar on stderr (there is none anyway when stderr is not a terminal).
    #[arg(short, long)]
    quiet: bool,
}

/// `sim` subcommands.
/// `--output` of `sim diff`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum DiffOutput {
    /// The differences per department, as JSON.
    Json,
    /// The differences per department, as a table.
    Table,
}

#[derive(Debug, clap::Subcommand)]
pub(crate) enum SimCommand {
    /// What-if: simulate two scenarios over the same workloads and compare them per
    /// department (GPU-hours, borrowed hours, time to admission, preemptions, lost hours,
    /// utilisation, cost); either may be a Kueue, ResourceQuota or KAI scenario.
    #[command(after_help = "\
Examples:
  gpuquota sim diff sim.yaml sim.yaml                   the same scenario twice: no difference
  gpuquota sim diff sim.yaml sim.yaml -o json --plot d.svg  as JSON, with both usages in an SVG
  gpuquota sim diff sim.yaml sim.yaml --report diff.html   both runs side by side in one HTML page")]
    #[command(group(clap::ArgGroup::new("written").multiple(true).args(["plot", "report"])))]
    Diff {
        /// Scenario A.
        a: PathBuf,
        /// Scenario B.
        b: PathBuf,
        /// Output format [default: table on a terminal, json otherwise].
        #[arg(short, long, value_enum)]
        output: Option<DiffOutput>,
        /// Also write an SVG with both runs' usage side by side.
        #[arg(long, value_name = "FILE.svg")]
        plot: Option<PathBuf>,
        /// Also write both runs side by side, and what changed, as one self-contained HTML
        /// page.
        #[arg(long, value_name = "FILE.html")]
        report: Option<PathBuf>,
        /// Replace the `--plot` and `--report` files if they exist (else refused).
        #[arg(long, requires = "written")]
        force: bool,
    },
    /// `sim sweep` and `sim merge`.
    #[command(flatten)]
    Sweeps(crate::sweep::SweepCommand),
}

pub(crate) fn run(mut args: SimArgs) -> Result<(), CliError> {
    match args.command.take() {
        Some(SimCommand::Diff {
            a,
            b,
            output,
            plot,
            report,
            force,
        }) => {
            let json = crate::common::output_or(output, DiffOutput::Table, DiffOutput::Json)
                == DiffOutput::Json;
            let written = Written {
                plot: plot.as_deref(),
                report: report.as_deref(),
                force,
            };
            out!(
                "{}",
                gpuquota::command::sim::diff(&mut cx(), &a, &b, json, written)?
            );
            return Ok(());
        }
        Some(SimCommand::Sweeps(c)) => return crate::sweep::run(c),
        None => {}
    }
    let Some(file) = &args.file else {
        return Err(CliError::usage("sim: a scenario file is required"));
    };
    // refuse before any work: an existing file without --force, a link, a non-file
    for path in [&args.plot, &args.report].into_iter().flatten() {
        gpuquota::model::write::check_target(path, args.force)?;
    }
    // read once and parsed once: standard input (`-`) cannot be read twice; a scenario that
    // cannot be opened exits 2, as for every command (one that is not UTF-8 or too large is
    // input: exit 1)
    let spin = crate::sweep::spinner(args.quiet, "reading the scenario");
    let loaded = gpuquota::sim::Simulation::from_files(file);
    spin.finish_and_clear();
    let simulation =
        loaded.map_err(|e| CliError::load(e.diagnostics().iter(), crate::common::strict()))?;
    let simulated = with_replay_bar(args.quiet, simulation.end_ms().is_some(), |options| {
        gpuquota::sim::simulate_with_options(&simulation, options)
    });
    let format = match crate::common::output_or(args.output, SimOutput::Table, SimOutput::Json) {
        SimOutput::Json => Format::Json,
        SimOutput::Table => Format::Table(crate::common::table_width()),
        SimOutput::Csv => Format::Csv,
        SimOutput::KueueSummary => Format::KueueSummary,
        SimOutput::Workloads => Format::Workloads,
    };
    let written = Written {
        plot: args.plot.as_deref(),
        report: args.report.as_deref(),
        force: args.force,
    };
    match gpuquota::command::sim::output(&mut cx(), simulation, simulated, format, written)? {
        // streamed: a trace's report is tens of megabytes, never held as text
        Output::Json(report) => crate::common::stream_stdout(|w| report.write_json(w))?,
        Output::Text(text) => out!("{text}"),
    }
    Ok(())
}

/// Runs `simulate` with the replay's progress bar (none when `quiet` or stderr is not a
/// terminal; `windowed`: the scenario has an end), cleared when it returns.
fn with_replay_bar<T>(
    quiet: bool,
    windowed: bool,
    simulate: impl FnOnce(&gpuquota::sim::progress::RunOptions<'_>) -> T,
) -> T {
    let bar = replay_bar(quiet, windowed);
    let draw = |p: gpuquota::sim::progress::Progress| {
        if let Some(b) = &bar {
            draw_replay(b, p);
        }
    };
    let options = gpuquota::sim::progress::RunOptions {
        progress: bar
            .as_ref()
            .map(|_| &draw as &dyn Fn(gpuquota::sim::progress::Progress)),
    };
    let simulated = simulate(&options);
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    simulated
}

/// The replay's progress bar on stderr: virtual time reached against `spec.end` (`windowed`),
/// or a spinner with the virtual time and events without one; `None` when `quiet` or stderr
/// is not a terminal, so the simulator gets no callback at all.
fn replay_bar(quiet: bool, windowed: bool) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal as _;
    if quiet || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar =
        indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
    let template = if windowed {
        "{elapsed_precise} [{bar:30}] {percent:>3}% {msg}"
    } else {
        "{spinner} {elapsed_precise} simulated {msg}"
    };
    if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    Some(bar)
}

/// Draws one progress report: the bar counts virtual milliseconds up to `spec.end`.
fn draw_replay(bar: &indicatif::ProgressBar, p: gpuquota::sim::progress::Progress) {
    let day = |ms: i64| ms as f64 / 86_400_000.0;
    let at = u64::try_from(p.at_ms).unwrap_or(0);
    match p.end_ms {
        Some(end) => {
            bar.set_length(u64::try_from(end).unwrap_or(0));
            bar.set_position(at);
            bar.set_message(format!(
                "day {:.1}/{:.1}, {} events",
                day(p.at_ms),
                day(end),
                p.events
            ));
        }
        None => bar.set_message(format!("day {:.1}, {} events", day(p.at_ms), p.events)),
    }
}
