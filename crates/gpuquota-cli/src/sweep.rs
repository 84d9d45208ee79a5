//! `gpuquota sim sweep` and `gpuquota sim merge`: parameter sweeps over one scenario (the
//! table and its columns are documented in `gpuquota::sim::sweep`).

use std::path::PathBuf;

use gpuquota::sim::sweep::{self, Axis, Table};

use crate::common::{CliError, strict};

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
  gpuquota sim sweep sim.yaml --set clusterQueues.analytics.borrowingLimit=0,2,4 -o csv --plot sweep.svg --report sweep.html
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
#[command(group(clap::ArgGroup::new("written").multiple(true).args(["plot", "report"])))]
pub(crate) struct SweepArgs {
    /// The scenario.
    file: PathBuf,
    /// `PATH=v1,v2,…` (a dotted path under `spec`, `clusterQueues.CQ[.FLAVOR[.RESOURCE]].FIELD`
    /// or `seed` of generated traces, as `seed=1..20`; `A..B` for integer ranges); repeatable,
    /// each path once, at most 1,000,000 runs in all.
    #[arg(long = "set", value_name = "PATH=VALUES")]
    set: Vec<String>,
    /// Run only slice I (0-based) of N (N at most 100,000).
    #[arg(long, value_name = "I/N", value_parser = sweep::parse_shard)]
    shard: Option<(usize, usize)>,
    /// Output format.
    #[arg(short, long, value_enum, default_value = "json")]
    output: TableOutput,
    /// Instead of running, print a Kubernetes Indexed Job with this many shards (pods, at most
    /// 100,000), the ConfigMap holding the scenario's files, and how to collect and merge the
    /// shards.
    #[arg(long, value_name = "N", value_parser = sweep::parse_shard_count)]
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
    /// Also write the table as one self-contained HTML page (one row per run, and the chart).
    #[arg(long, value_name = "FILE.html")]
    report: Option<PathBuf>,
    /// Replace the `--plot` and `--report` files if they exist (else refused).
    #[arg(long, requires = "written")]
    force: bool,
    /// Worker threads, 1 to 1024 [default: all cores, or RAYON_NUM_THREADS].
    #[arg(short = 'j', long, value_name = "N", value_parser = sweep::parse_threads)]
    jobs: Option<usize>,
    /// No progress bar (there is none anyway when stderr is not a terminal) and no summary
    /// of the runs' warnings on stderr (each row counts its own).
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
pub(crate) fn progress_bar(quiet: bool) -> indicatif::ProgressBar {
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

pub(crate) fn run(c: SweepCommand) -> Result<(), CliError> {
    match c {
        SweepCommand::Sweep(a) => run_sweep(a),
        SweepCommand::Merge(a) => run_merge(a),
    }
}

/// Reads the scenario named on the command line: its display name, text, directory and stem
/// (exit 2 when it cannot be read, as for every command).
pub(crate) fn read_scenario(
    file: &std::path::Path,
) -> Result<(String, String, PathBuf, String), CliError> {
    let name = gpuquota::model::source::display_name(file);
    let text = gpuquota::model::source::read_text(file).map_err(|d| CliError::load([&d]))?;
    let dir = file.parent().map(PathBuf::from).unwrap_or_default();
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok((name, text, dir, stem))
}

fn run_sweep(a: SweepArgs) -> Result<(), CliError> {
    let axes = sweep::parse_axes(&a.set).map_err(CliError::usage)?;
    let (name, text, dir, stem) = read_scenario(&a.file)?;
    let read = move |rel: &str| {
        let p = dir.join(rel);
        let shown = gpuquota::model::source::display_name(&p);
        gpuquota::model::source::read_text(&p).map(|t| (shown, t))
    };
    if let Some(n) = a.emit_job {
        return emit_job(&a, &name, &text, &stem, &axes, n, &read);
    }
    // refuse before any work: an existing file without --force, a link, a non-file
    for path in [&a.plot, &a.report].into_iter().flatten() {
        gpuquota::model::write::check_target(path, a.force)?;
    }
    // rayon's own default reads RAYON_NUM_THREADS: held to the same limit as `-j`
    if a.jobs.is_none()
        && let Ok(v) = std::env::var("RAYON_NUM_THREADS")
        && v.trim()
            .parse::<u128>()
            .is_ok_and(|n| n > sweep::MAX_THREADS as u128)
    {
        return Err(CliError::usage(format!(
            "RAYON_NUM_THREADS={v}: more than the limit of {} threads",
            sweep::MAX_THREADS
        )));
    }
    let bar = progress_bar(a.quiet);
    let tick = |n: usize, total: usize| {
        bar.set_length(total as u64);
        bar.set_position(n as u64);
    };
    let opts = sweep::Options {
        shard: a.shard,
        threads: a.jobs,
        progress: Some(&tick),
    };
    let result = sweep::run_with(&name, &text, &stem, &axes, &opts, &read);
    bar.finish_and_clear();
    let table = result.map_err(|d| CliError::load(d.iter()))?;
    let warned = table.rows.iter().filter(|r| r.warnings > 0).count();
    if warned > 0 {
        if !a.quiet || strict() {
            eprintln!(
                "{}: {warned} of {} runs have warnings (`gpuquota sim FILE` with their parameters shows them)",
                if strict() { "error" } else { "warning" },
                table.rows.len()
            );
        }
        if strict() {
            return Err(CliError::exit(1));
        }
    }
    if let Some(path) = &a.plot {
        let svg = table.svg().map_err(CliError::usage)?;
        gpuquota::model::write::file(path, svg.as_bytes(), a.force)?;
    }
    if let Some(path) = &a.report {
        let html = gpuquota::report::sweep(&table).map_err(CliError::usage)?;
        gpuquota::model::write::file(path, html.as_bytes(), a.force)?;
    }
    print!("{}", render(&table, a.output));
    Ok(())
}

/// `--emit-job N`: the ConfigMap and the Indexed Job (see `gpuquota::sim::sweep::manifests`).
fn emit_job(
    a: &SweepArgs,
    name: &str,
    text: &str,
    stem: &str,
    axes: &[Axis],
    shards: usize,
    read: &sweep::SyncReadFn<'_>,
) -> Result<(), CliError> {
    let files = sweep::scenario_files(name, text, stem, axes, read)
        .map_err(|d| CliError::diagnostics(d.iter()))?;
    let job_name = job_name("sweep", stem);
    let file = a
        .file
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let yaml = sweep::manifests(&sweep::JobRequest {
        name: &job_name,
        namespace: &a.namespace,
        queue: &a.queue,
        image: &a.image,
        scenario: (&file, text),
        files: &files,
        axes,
        shards,
    })
    .map_err(CliError::usage)?;
    print!("{yaml}");
    Ok(())
}

/// An emitted Job's name, a DNS-1123 label: `PREFIX-` and the file stem, cut to 57
/// characters so that the pods' host names (`NAME-INDEX`, up to index 99999) stay within 63.
pub(crate) fn job_name(prefix: &str, stem: &str) -> String {
    let mut name = format!("{prefix}-{}", gpuquota::sim::trace::sanitize(stem));
    name.truncate(57);
    name.trim_end_matches('-').to_owned()
}

fn run_merge(a: MergeArgs) -> Result<(), CliError> {
    let mut shards = Vec::new();
    for f in &a.files {
        let text = crate::common::read_file(f)?;
        let v: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| CliError::usage(format!("{}: {e}", f.display())))?;
        let t =
            Table::from_json(&v).map_err(|m| CliError::usage(format!("{}: {m}", f.display())))?;
        shards.push((gpuquota::model::source::display_name(f), t));
    }
    let t = sweep::merge_named(shards).map_err(|m| CliError::input([m]))?;
    print!("{}", render(&t, a.output));
    Ok(())
}
