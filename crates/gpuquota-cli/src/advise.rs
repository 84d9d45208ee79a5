//! `gpuquota advise`: the advisor (the method, metrics and output are documented in
//! `gpuquota::advise`).

use std::path::PathBuf;

use gpuquota::command::advise::{Format, Request};

use crate::common::{CliError, cx};

/// `--output` of `advise`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum AdviceOutput {
    /// The front, the recommendation and the binding constraint as text.
    Table,
    /// The whole advice (`gpuquota schema advice`).
    Json,
    /// One CSV row per configuration shown.
    Csv,
}

/// `gpuquota advise` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  gpuquota --out seed && gpuquota advise seed/advice.yaml --explain    the seed month's advice
  gpuquota advise seed/advice.yaml --patch-out recommended.yaml --diff    the patch and the what-if
  gpuquota advise seed/advice.yaml --report advice.html       the advice as one HTML page")]
pub(crate) struct AdviseArgs {
    /// The `Advice` file (its `spec.scenario` is read relative to it).
    file: PathBuf,
    /// Output format [default: table on a terminal, json otherwise].
    #[arg(short, long, value_enum)]
    output: Option<AdviceOutput>,
    /// With the table: which knob moved which figure, one at a time around the
    /// recommendation.
    #[arg(long)]
    explain: bool,
    /// Write the recommendation as YAML (the changed ClusterQueues, KAI Queues and Nodes) to
    /// this file.
    #[arg(long, value_name = "FILE")]
    patch_out: Option<PathBuf>,
    /// Also print `sim diff` of the scenario as written against the recommendation (table,
    /// on stdout after the advice).
    #[arg(long)]
    diff: bool,
    /// Write the `sim diff` plot of current against recommended (SVG) to this file.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Write the advice as one self-contained HTML page (the front, the recommendation and
    /// why, and the scenario as written against the recommendation).
    #[arg(long, value_name = "FILE.html")]
    report: Option<PathBuf>,
    /// Replace files --patch-out, --plot and --report would overwrite.
    #[arg(long)]
    force: bool,
    /// Simulate every configuration instead of decomposing the grid (the reference).
    #[arg(long)]
    exhaustive: bool,
    /// Worker threads (default: all cores, or RAYON_NUM_THREADS).
    #[arg(short, long, value_name = "N", value_parser = gpuquota::sim::sweep::parse_threads)]
    jobs: Option<usize>,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
    /// Simulate only slice I (0-based) of N of the search's simulations and print them as
    /// JSON (`gpuquota schema advice-shard`), for --merge.
    #[arg(long, value_name = "I/N", value_parser = gpuquota::sim::sweep::parse_shard,
          conflicts_with_all = ["merge", "explain", "patch_out", "diff", "plot", "report"])]
    shard: Option<(usize, usize)>,
    /// Make the advice from every shard's JSON instead of simulating (the output of the
    /// unsharded run, byte for byte).
    #[arg(long, value_name = "SHARD.json", num_args = 1..)]
    merge: Vec<PathBuf>,
    /// Instead of running, print a Kubernetes Indexed Job with this many shards (pods), the
    /// ConfigMap holding the advice and its scenario's files, and how to merge the shards.
    #[arg(long, value_name = "N", value_parser = gpuquota::sim::sweep::parse_shard_count,
          conflicts_with_all = ["shard", "merge"])]
    emit_job: Option<usize>,
    #[command(flatten)]
    job: crate::sweep::JobArgs,
}

pub(crate) fn run(a: AdviseArgs) -> Result<(), CliError> {
    let format = match crate::common::output_or(a.output, AdviceOutput::Table, AdviceOutput::Json) {
        AdviceOutput::Table => Format::Table {
            explain: a.explain,
            width: crate::common::table_width(),
        },
        AdviceOutput::Json => Format::Json,
        AdviceOutput::Csv => Format::Csv,
    };
    let request = Request {
        file: &a.file,
        format,
        patch_out: a.patch_out.as_deref(),
        diff: a.diff,
        plot: a.plot.as_deref(),
        report: a.report.as_deref(),
        force: a.force,
        exhaustive: a.exhaustive,
        threads: a.jobs,
        shard: a.shard,
        merge: &a.merge,
        job: a.emit_job.map(|shards| a.job.job(shards)),
    };
    let bar = crate::sweep::Bar {
        quiet: a.quiet,
        bar: std::sync::OnceLock::new(),
    };
    print!(
        "{}",
        gpuquota::command::advise::run(&mut cx(), &request, &bar)?
    );
    Ok(())
}
