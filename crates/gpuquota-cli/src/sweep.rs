//! `gpuquota sim sweep` and `gpuquota sim merge`: parameter sweeps over one scenario (the
//! table and its columns are documented in `gpuquota::sim::sweep`).

use std::path::PathBuf;
use std::process::ExitCode;

use gpuquota::sim::sweep::{self, Axis, Table};

use crate::common::{CliError, print_diagnostics, strict};

/// `--output` of `sweep` and `merge`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum TableOutput {
    /// The JSON table.
    Json,
    /// One CSV row per run.
    Csv,
}

/// `gpuquota sim sweep|merge`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum SweepCommand {
    /// Simulate the cartesian product of `--set` values, in parallel, one row per run.
    #[command(after_help = "\
Examples:
  gpuquota sim sweep sim.yaml --set engine=kueue,resourcequota --shard 0/2 > s0.json
  gpuquota sim sweep sim.yaml --set clusterQueues.analytics.borrowingLimit=0,2,4 -o csv --plot sweep.svg
  gpuquota sim sweep sim.yaml --set kueue.fairSharing=true,false -j 2 --quiet   two threads, no progress bar")]
    Sweep(SweepArgs),
    /// Join the JSON tables of a sweep's shards into the unsharded table.
    #[command(after_help = "\
Examples:
  gpuquota sim sweep sim.yaml --set engine=kueue,resourcequota --shard 0/2 > s0.json && gpuquota sim sweep sim.yaml --set engine=kueue,resourcequota --shard 1/2 > s1.json && gpuquota sim merge s0.json s1.json
  gpuquota sim merge s0.json s1.json -o csv                         the same table as CSV")]
    Merge(MergeArgs),
}

/// `gpuquota sim sweep` arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct SweepArgs {
    /// The scenario.
    file: PathBuf,
    /// `PATH=v1,v2,…` (a dotted path under `spec`, `clusterQueues.CQ[.FLAVOR[.RESOURCE]].FIELD`
    /// or `seed` of generated traces, as `seed=1..20`; `A..B` for integer ranges); repeatable.
    #[arg(long = "set", value_name = "PATH=VALUES")]
    set: Vec<String>,
    /// Run only slice I (0-based) of N.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// Output format.
    #[arg(short, long, value_enum, default_value = "json")]
    output: TableOutput,
    /// Instead of running, print a Kubernetes Indexed Job with this many shards (pods).
    #[arg(long, value_name = "N")]
    emit_job: Option<usize>,
    /// The emitted Job's LocalQueue (`kueue.x-k8s.io/queue-name`).
    #[arg(long, default_value = "default")]
    queue: String,
    /// The emitted Job's namespace.
    #[arg(long, default_value = "default")]
    namespace: String,
    /// The emitted Job's container image (it must hold the `gpuquota` binary).
    #[arg(long, default_value = "ghcr.io/gpuquota/gpuquota:latest")]
    image: String,
    /// Also write an SVG chart of the table (usage and GPU-hours per run).
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Worker threads [default: all cores, or RAYON_NUM_THREADS].
    #[arg(short = 'j', long, value_name = "N")]
    jobs: Option<usize>,
    /// No progress bar (there is none anyway when stderr is not a terminal).
    #[arg(short, long)]
    quiet: bool,
}

/// `gpuquota sim merge` arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct MergeArgs {
    /// The shards' JSON tables.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Output format.
    #[arg(short, long, value_enum, default_value = "json")]
    output: TableOutput,
}

/// A progress bar of sweep runs on stderr; hidden when `quiet` or stderr is not a terminal.
fn progress_bar(quiet: bool) -> indicatif::ProgressBar {
    use std::io::IsTerminal as _;
    if quiet || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar =
        indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{elapsed_precise} [{bar:40}] {pos}/{len} runs, {per_sec}, {eta} left",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// A spinner on stderr naming the phase of a long run (reading a trace, simulating) with
/// the time spent; hidden when `quiet` or stderr is not a terminal.
pub(crate) fn spinner(quiet: bool, phase: &'static str) -> indicatif::ProgressBar {
    use std::io::IsTerminal as _;
    if quiet || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar =
        indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
    if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {msg} {elapsed}") {
        bar.set_style(style);
    }
    bar.set_message(phase);
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar
}

fn render(t: &Table, o: TableOutput) -> String {
    match o {
        TableOutput::Json => t.to_json_string(),
        TableOutput::Csv => t.to_csv(),
    }
}

fn parse_shard(s: &str) -> Result<(usize, usize), CliError> {
    let bad = || CliError(format!("--shard {s:?}: expected I/N with 0 <= I < N"));
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n) = (
        i.parse::<usize>().map_err(|_| bad())?,
        n.parse::<usize>().map_err(|_| bad())?,
    );
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

pub(crate) fn run(c: SweepCommand) -> Result<ExitCode, CliError> {
    match c {
        SweepCommand::Sweep(a) => run_sweep(a),
        SweepCommand::Merge(a) => run_merge(a),
    }
}

fn run_sweep(a: SweepArgs) -> Result<ExitCode, CliError> {
    let axes = a
        .set
        .iter()
        .map(|s| Axis::parse(s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(CliError)?;
    if let Some(n) = a.emit_job {
        if n == 0 {
            return Err(CliError("--emit-job needs at least 1 shard".into()));
        }
        let stem = a
            .file
            .file_stem()
            .map(|s| gpuquota::sim::trace::sanitize(&s.to_string_lossy()))
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "scenario".into());
        let file = a
            .file
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let job = sweep::indexed_job(
            &format!("sweep-{stem}"),
            &a.namespace,
            &a.queue,
            &a.image,
            &file,
            &axes,
            n,
        );
        let yaml = sweep::to_yaml(&job).map_err(CliError)?;
        print!("{yaml}");
        return Ok(ExitCode::SUCCESS);
    }
    let shard = a.shard.as_deref().map(parse_shard).transpose()?;
    let name = gpuquota::model::source::display_name(&a.file);
    let text = match gpuquota::model::source::read_text(&a.file) {
        Ok(t) => t,
        Err(d) => {
            print_diagnostics([&d]);
            return Ok(crate::sim::load_failed([&d]));
        }
    };
    let dir = a.file.parent().map(PathBuf::from).unwrap_or_default();
    let stem = a
        .file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let read = move |rel: &str| {
        let p = dir.join(rel);
        let shown = gpuquota::model::source::display_name(&p);
        gpuquota::model::source::read_text(&p).map(|t| (shown, t))
    };
    if a.jobs == Some(0) {
        return Err(CliError("--jobs needs at least 1 thread".into()));
    }
    let bar = progress_bar(a.quiet);
    let tick = |n: usize, total: usize| {
        bar.set_length(total as u64);
        bar.set_position(n as u64);
    };
    let opts = sweep::Options {
        shard,
        threads: a.jobs,
        progress: Some(&tick),
    };
    let result = sweep::run_with(&name, &text, &stem, &axes, &opts, &read);
    bar.finish_and_clear();
    let table = match result {
        Ok(t) => t,
        Err(d) => {
            print_diagnostics(d.iter());
            return Ok(crate::sim::load_failed(d.iter()));
        }
    };
    let warned = table.rows.iter().filter(|r| r.warnings > 0).count();
    if warned > 0 {
        eprintln!(
            "warning: {warned} of {} runs have warnings (`gpuquota sim FILE` with their parameters shows them)",
            table.rows.len()
        );
        if strict() {
            return Ok(ExitCode::from(1));
        }
    }
    if let Some(path) = &a.plot {
        let svg = table.svg().map_err(CliError)?;
        std::fs::write(path, svg).map_err(|e| CliError(format!("{}: {e}", path.display())))?;
    }
    print!("{}", render(&table, a.output));
    Ok(ExitCode::SUCCESS)
}

fn run_merge(a: MergeArgs) -> Result<ExitCode, CliError> {
    let mut shards = Vec::new();
    for f in &a.files {
        let text = crate::common::read_file(f)?;
        let v: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| CliError(format!("{}: {e}", f.display())))?;
        shards.push(Table::from_json(&v).map_err(|m| CliError(format!("{}: {m}", f.display())))?);
    }
    let t = sweep::merge(shards).map_err(CliError)?;
    print!("{}", render(&t, a.output));
    Ok(ExitCode::SUCCESS)
}
