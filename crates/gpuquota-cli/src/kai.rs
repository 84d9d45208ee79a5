//! `gpuquota kai`: KAI Scheduler / Run:ai fair shares and scheduling sessions (engine crate
//! `gpuquota-rank`).
//!
//! JSON contracts (issue 5):
//! * `kai fairshare FILES… --output json` →
//!   `{"queues": {"<queue>": {"gpu"|"cpu"|"memory": {"deserved", "fairShare", "allocated",
//!   "requested", "limit"}}}}`; GPU values are decimal strings in devices, CPU and memory
//!   Kubernetes quantity strings; `limit` is `null` when unlimited; an unlimited `deserved`
//!   is `"-1"` (KAI's sentinel, as in the Queue CRD and KAI's queue metrics).
//! * `kai schedule FILES… --output json` →
//!   `{"allocated": [{"podGroup", "queue", "pipelined", "pods": [{"pod", "node"}]}],
//!   "evicted": [{"podGroup", "queue", "action", "by"}],
//!   "pending": [{"podGroup", "queue", "reason", "message"}]}`.
//!
//! Input problems are printed to stderr, one per line, with exit code 1. Warnings (unknown
//! fields and kinds, orphan queues, usage entries for missing queues) are printed as
//! `warning: …`; under `--strict` they print as `error: …` and the command exits 1 before
//! any output.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use gpuquota::command::kai::Flags;
use gpuquota::kai::session::Placement;

use crate::common::{CliError, cx, output_or, table_width, to_json};

/// KAI subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum KaiCommand {
    /// Fair share of every queue and resource (KAI's proportion plugin division).
    #[command(after_help = "\
Examples:
  gpuquota kai fairshare kai.yaml                         every queue's GPU fair share
  gpuquota kai fairshare kai.yaml --usage kai-usage.yaml  time-based fairshare
  gpuquota kai fairshare kai.yaml --total gpu=16 -o json  a smaller cluster, as JSON")]
    Fairshare(KaiArgs),
    /// One scheduling session: allocate, consolidation, reclaim, preempt, stale-gang eviction.
    #[command(after_help = "\
Examples:
  gpuquota kai schedule kai.yaml                      one session, a line per decision
  gpuquota kai schedule kai.yaml --placement spread   emptiest node first
  gpuquota kai schedule kai.yaml --corrected -o json  corrected mode, as JSON")]
    Schedule {
        #[command(flatten)]
        args: KaiArgs,
        /// Node placement strategy.
        #[arg(long, value_enum, default_value = "binpack")]
        placement: PlacementArg,
        /// GPU-hour Budgets (manifests) to apply, with --budget-usage.
        #[arg(long, requires = "budget_usage")]
        budgets: Option<PathBuf>,
        /// A `gpuquota meter` JSON report of the budgets' period so far (`--usage` is
        /// already the time-based fairshare history here).
        #[arg(long, requires = "budgets")]
        budget_usage: Option<PathBuf>,
    },
}

/// `--output` of the `kai` commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum KaiOutput {
    /// A table (`fairshare`) or one line per decision (`schedule`).
    Table,
    /// The JSON contract (documented in `gpuquota::kai::report`; `gpuquota schema`).
    Json,
}

/// Node placement strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum PlacementArg {
    /// Fullest node first (KAI's default).
    Binpack,
    /// Emptiest node first.
    Spread,
}

/// Arguments shared by the KAI subcommands.
#[derive(Debug, Args)]
pub(crate) struct KaiArgs {
    /// Manifests: KAI Queues and PodGroups, Pods, Nodes (YAML or JSON, many documents).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Output format [default: table on a terminal, json otherwise].
    #[arg(short, long, value_enum)]
    output: Option<KaiOutput>,
    /// Cluster total replacing the node sum: `gpu=N[,cpu=Q,memory=Q]`.
    #[arg(long)]
    total: Option<String>,
    /// Corrected mode instead of KAI-compatible results (caps the leftover unit at request
    /// and limit, clears stale remainder records).
    #[arg(long)]
    corrected: bool,
    /// Session time (RFC 3339); default the latest timestamp in the input.
    #[arg(long)]
    now: Option<String>,
    /// Time-based fairshare: historical usage file (format in `gpuquota::kai::usage`).
    #[arg(long)]
    usage: Option<PathBuf>,
    /// Time-based fairshare kValue (default 1.0, or the usage file's).
    #[arg(long)]
    k_value: Option<f64>,
    /// Run:ai: only this node pool (nodes labelled `kai.scheduler/node-pool` or
    /// `runai/node-pool`), as its own division.
    #[arg(long)]
    node_pool: Option<String>,
    /// Run:ai with the "Over quota weight" setting disabled: every weight follows quota.
    #[arg(long)]
    weight_follows_quota: bool,
    /// KAI's `queueLabelKey` (the `kai.scheduler/v1` Config's `spec.global.queueLabelKey`):
    /// only this pod/PodGroup label names the queue. Default: `kai.scheduler/queue`, then
    /// Run:ai's `runai/queue`.
    #[arg(long)]
    queue_label_key: Option<String>,
}

impl KaiArgs {
    /// The flags that shape the cluster and the division.
    fn flags(&self) -> Flags {
        Flags {
            total: self.total.clone(),
            corrected: self.corrected,
            now: self.now.clone(),
            usage: self.usage.clone(),
            k_value: self.k_value,
            node_pool: self.node_pool.clone(),
            weight_follows_quota: self.weight_follows_quota,
            queue_label_key: self.queue_label_key.clone(),
        }
    }
}

pub(crate) fn run(command: KaiCommand) -> Result<(), CliError> {
    match command {
        KaiCommand::Fairshare(args) => {
            let report = gpuquota::command::kai::fairshare(&mut cx(), &args.files, &args.flags())?;
            match output_or(args.output, KaiOutput::Table, KaiOutput::Json) {
                KaiOutput::Json => out!("{}", to_json(&report)?),
                KaiOutput::Table => out!("{}", report.table(table_width())),
            }
            Ok(())
        }
        KaiCommand::Schedule {
            args,
            placement,
            budgets,
            budget_usage,
        } => {
            let placement = match placement {
                PlacementArg::Binpack => Placement::Binpack,
                PlacementArg::Spread => Placement::Spread,
            };
            let report = gpuquota::command::kai::schedule(
                &mut cx(),
                &args.files,
                &args.flags(),
                placement,
                budgets.as_deref(),
                budget_usage.as_deref(),
            )?;
            match output_or(args.output, KaiOutput::Table, KaiOutput::Json) {
                KaiOutput::Json => out!("{}", to_json(&report)?),
                KaiOutput::Table => out!("{}", report.table()),
            }
            Ok(())
        }
    }
}
