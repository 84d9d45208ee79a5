//! `gpuquota sim sweep` and `gpuquota sim merge`: parameter sweeps over one scenario (the
//! table and its columns are documented in `gpuquota::sim::sweep`).

use std::path::PathBuf;

use gpuquota::command::sweep::{Job, Written};
use gpuquota::sim::sweep::{self, Table};

use crate::common::{CliError, cx};

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
    #[command(flatten)]
    job: JobArgs,
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

/// The emitted Job's queue, namespace and image (`--emit-job` of `sim sweep` and `advise`).
#[derive(Debug, clap::Args)]
pub(crate) struct JobArgs {
    /// The emitted Job's LocalQueue (`kueue.x-k8s.io/queue-name`).
    #[arg(long, default_value = "default")]
    queue: String,
    /// The emitted Job's namespace.
    #[arg(long, default_value = "default")]
    namespace: String,
    /// The emitted Job's container image (it must hold the `gpuquota` binary).
    #[arg(long, default_value = "ghcr.io/gpuquota/gpuquota:latest")]
    image: String,
}

impl JobArgs {
    /// The Job of `shards` pods.
    pub(crate) fn job(&self, shards: usize) -> Job<'_> {
        Job {
            shards,
            queue: &self.queue,
            namespace: &self.namespace,
            image: &self.image,
        }
    }
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

/// The progress bar ([`progress_bar`]) the library's long runs feed, shown once they start.
pub(crate) struct Bar {
    pub(crate) quiet: bool,
    pub(crate) bar: std::sync::OnceLock<indicatif::ProgressBar>,
}

impl gpuquota::command::Progress for Bar {
    fn start(&self) {
        self.bar.get_or_init(|| progress_bar(self.quiet));
    }
    fn tick(&self, done: usize, total: usize) {
        let bar = self.bar.get_or_init(|| progress_bar(self.quiet));
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    }
    fn finish(&self) {
        if let Some(bar) = self.bar.get() {
            bar.finish_and_clear();
        }
    }
}

fn render(t: &Table, o: TableOutput) -> String {
    match o {
        TableOutput::Json => t.to_json_string(),
        TableOutput::Csv => t.to_csv(),
    }
}

pub(crate) fn run(c: SweepCommand) -> Result<(), CliError> {
    let (table, output) = match c {
        SweepCommand::Sweep(a) => {
            if let Some(shards) = a.emit_job {
                let job = a.job.job(shards);
                let yaml = gpuquota::command::sweep::emit_job(&cx(), &a.file, &a.set, &job)?;
                print!("{yaml}");
                return Ok(());
            }
            let written = Written {
                plot: a.plot.as_deref(),
                report: a.report.as_deref(),
                force: a.force,
            };
            let bar = Bar {
                quiet: a.quiet,
                bar: std::sync::OnceLock::new(),
            };
            let table = gpuquota::command::sweep::run(
                &mut cx(),
                &a.file,
                &a.set,
                a.shard,
                a.jobs,
                written,
                a.quiet,
                &bar,
            )?;
            (table, a.output)
        }
        SweepCommand::Merge(a) => (gpuquota::command::sweep::merge(&a.files)?, a.output),
    };
    print!("{}", render(&table, output));
    Ok(())
}
