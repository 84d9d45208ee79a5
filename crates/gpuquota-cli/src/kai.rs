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
use gpuquota::kai::division::{DivisionOptions, Mode};
use gpuquota::kai::fixed::SCALE;
use gpuquota::kai::session::{Placement, SessionOptions, run_session};
use gpuquota::kai::snapshot::{BuildOptions, Cluster, parse_total};
use gpuquota::kai::usage::UsageInput;
use gpuquota::model::{Model, Timestamp};

use crate::common::{CliError, output_or, print_diagnostics, read_file, table_width, to_json};
use gpuquota::kai::snapshot::{ENGINE, codes};
use gpuquota::model::Diagnostic;

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

/// Prints warnings (`warning: …`, or `error: …` under `--strict`); true when `--strict` makes
/// them fail the command.
fn warn(warnings: &[Diagnostic]) -> bool {
    print_diagnostics(warnings)
}

struct Prepared {
    cluster: Cluster,
    options: DivisionOptions,
}

/// Imports the manifests ([`crate::common::load_model`]), lets `edit` change the model, and
/// builds the cluster.
fn prepare(
    args: &KaiArgs,
    edit: impl FnOnce(&mut Model) -> Result<(), CliError>,
) -> Result<Prepared, CliError> {
    let mut model = crate::common::load_model(
        &args.files,
        gpuquota::model::validate::KAI_USABLE,
        "gpuquota kai",
    )?;
    edit(&mut model)?;
    text_to_cluster(model, args)
}

fn text_to_cluster(model: Model, args: &KaiArgs) -> Result<Prepared, CliError> {
    let mut problems = Vec::new();
    let total = match args.total.as_deref().map(parse_total) {
        None => [None; 3],
        Some(Ok(t)) => t,
        Some(Err(e)) => {
            problems.push(e);
            [None; 3]
        }
    };
    let now = match args.now.as_deref().map(Timestamp::parse) {
        None => None,
        Some(Ok(t)) => Some(t),
        Some(Err(e)) => {
            problems.push(format!("--now: {e}"));
            None
        }
    };
    if let Some(k) = args.k_value
        && !k.is_finite()
    {
        problems.push("--k-value: not a number".into());
    }
    let usage = match &args.usage {
        Some(p) => match UsageInput::parse(&read_file(p)?) {
            Ok(u) => Some(u),
            Err(e) => {
                problems.push(format!("{}: {e}", p.display()));
                None
            }
        },
        None => None,
    };
    if !problems.is_empty() {
        return Err(CliError::input(problems));
    }
    let model = match &args.node_pool {
        Some(pool) => gpuquota::kai::runai::node_pool_view(&model, pool),
        None => model,
    };
    let mut cluster = match Cluster::from_model(
        &model,
        &BuildOptions::default()
            .with_total(total)
            .with_now(now)
            .with_queue_label_key(args.queue_label_key.clone()),
    ) {
        Ok(c) => c,
        // Errors print bare, one per line (the contract the CLI tests pin).
        Err(errs) => return Err(CliError::input(errs.iter().map(ToString::to_string))),
    };
    let mut warnings: Vec<Diagnostic> = cluster.warnings.iter().cloned().collect();
    let mut options = DivisionOptions::default()
        .with_mode(if args.corrected {
            Mode::Corrected
        } else {
            Mode::Kai
        })
        .with_k_value(SCALE);
    if let Some(u) = &usage {
        if let Some(k) = u.k_value_nanos() {
            options.k_value = k;
        }
        match u.apply(&mut cluster.hierarchy, cluster.now) {
            Ok(unknown) => {
                warnings.extend(unknown.into_iter().map(|q| {
                    Diagnostic::warning(
                        codes::UNKNOWN_USAGE_QUEUE,
                        format!("usage: queue {q:?} does not exist"),
                    )
                    .engine(ENGINE)
                }));
            }
            Err(e) => {
                let _ = warn(&warnings);
                return Err(CliError::input([e.to_string()]));
            }
        }
    }
    if let Some(k) = args.k_value {
        options.k_value = (k.max(0.0) * SCALE as f64).round() as i128;
    }
    if args.weight_follows_quota {
        gpuquota::kai::runai::weight_follows_quota(&mut cluster.hierarchy, false);
    }
    if warn(&warnings) {
        // `--strict`: the warnings (printed as errors) fail the command.
        return Err(CliError::exit(1));
    }
    Ok(Prepared { cluster, options })
}

pub(crate) fn run(command: KaiCommand) -> Result<(), CliError> {
    match command {
        KaiCommand::Fairshare(args) => {
            let p = prepare(&args, |_| Ok(()))?;
            let report = gpuquota::kai::report::fairshare_report(&p.cluster, &p.options)?;
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
            let p = prepare(&args, |m| {
                // held-back PodGroups are listed on stderr (the schedule JSON is unchanged)
                if let Some(a) =
                    crate::budgets::apply(m, budgets.as_deref(), budget_usage.as_deref())?
                {
                    for (g, q, message) in a.held {
                        eprintln!(
                            "note: PodGroup {g} (queue {q}) is held back: BudgetExhausted: {message}"
                        );
                    }
                    for g in a.deprioritized {
                        eprintln!(
                            "note: PodGroup {g} is admitted only as priority class train (BudgetExhausted)"
                        );
                    }
                }
                Ok(())
            })?;
            let options = SessionOptions::default()
                .with_division(p.options)
                .with_placement(match placement {
                    PlacementArg::Binpack => Placement::Binpack,
                    PlacementArg::Spread => Placement::Spread,
                });
            let result = run_session(&p.cluster, &options)?;
            let report = gpuquota::kai::report::schedule_report(&result);
            match output_or(args.output, KaiOutput::Table, KaiOutput::Json) {
                KaiOutput::Json => out!("{}", to_json(&report)?),
                KaiOutput::Table => out!("{}", report.table()),
            }
            Ok(())
        }
    }
}
