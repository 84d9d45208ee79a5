//! The report of a simulation and its renderings: JSON (the contract), table, CSV and the
//! summary document of Kueue's perf runner.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use gpuquota_metering::figure::GpuHours;
use gpuquota_model::text::{Table, Width};
use gpuquota_model::{Amount, Quantity, ResourceName, Timestamp};
use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

use crate::engine::{Outcome, RunEnd, TimelineEffect};
use crate::scenario::at_ms;

pub mod kai;

/// Per flavor (`""` under `resourcequota`), per resource: a quantity, which the JSON writes
/// as Kubernetes does (`"8"`, `"64Gi"`, `"500m"`, the resource's canonical form); flavors
/// and resources in the cluster's flavor-resource order (Kueue's flavor order within a
/// resource group), not sorted.
pub type UsageOut = IndexMap<String, IndexMap<String, Quantity>>;

/// [`UsageOut`]'s JSON Schema: its quantities are strings.
#[cfg(feature = "schema")]
type UsageSchema = IndexMap<String, IndexMap<String, String>>;

/// Per flavor, per resource: ∫ max(0, usage − nominal) dt in the resource's unit × ms (CPU
/// in cores, memory in bytes, GPUs in devices); same order as [`UsageOut`].
pub type BorrowedOut = IndexMap<String, IndexMap<String, i128>>;

/// The JSON document of a Kueue or ResourceQuota run: what `gpuquota sim --output json`
/// prints (fields in this order; `gpuquota schema sim` prints its JSON Schema).
///
/// Every `…Ms` is integer milliseconds since `start`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SimReport {
    /// The engine that decided admissions: `kueue` or `resourcequota`.
    pub engine: crate::Engine,
    /// `spec.start` (RFC 3339), the simulation's time 0.
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub start: Timestamp,
    /// `spec.end` (or the last event), ms.
    pub end_ms: i64,
    /// The last completion, ms (0 without any).
    pub makespan_ms: i64,
    /// Every workload, in key (`namespace/name`) order.
    pub workloads: Vec<WorkloadOut>,
    /// Per class (`""` for workloads without one), in name order.
    pub classes: BTreeMap<String, ClassOut>,
    /// Per queue (ClusterQueue, or namespace with a ResourceQuota under `resourcequota`), in
    /// name order.
    pub queues: BTreeMap<String, QueueOut>,
    /// `Preempted` runs.
    pub preemptions: u64,
    /// Every preemptor that preempted the same victim more than once (a preemption loop),
    /// by first preemption, then preemptor and victim; only when there is one. Each is also
    /// a `preemption-loop` warning.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub preemption_loops: Vec<PreemptionLoopOut>,
    /// Whether the runs' devices were checked against the cluster's Nodes: `false` when
    /// the cluster files have no Nodes (quotas are then the only cap, and nothing says the
    /// platform has the devices the runs use).
    pub capacity_checked: bool,
    /// What each event of `spec.timeline` did, in the order they applied (time, then
    /// document order); only when the scenario has a timeline ([`crate::timeline`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub timeline: Vec<TimelineOut>,
    /// Every workload with a failed attempt (`gpuquota.dev/fail-after`), in workload order;
    /// only when there is one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<FailureOut>,
    /// Per budget, its rule and every period; only when the scenario has budgets
    /// ([`crate::budget`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budgets: Option<Vec<BudgetOut>>,
    /// The bill of the runs; only with `spec.metering` ([`crate::bill`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chargeback: Option<Chargeback>,
    /// The run against what the cluster recorded; only when the workloads were recorded
    /// (a `history:` source, or a trace that records waits) ([`crate::history::fidelity`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fidelity: Option<crate::history::fidelity::Fidelity>,
    /// The input's and the engine's warnings, as printed on stderr.
    pub warnings: Vec<String>,
}

/// A preemption loop: one preemptor preempted one victim more than once. At its default
/// feature gates Kueue readmits a victim ahead of its preemptor when the scheduling order
/// and the preemption rules disagree (see `gpuquota-cohort`'s crate docs); upstream then
/// loops as fast as evictions complete. The simulator lets a workload be evicted twice at
/// one instant and holds it back to the next millisecond after the second eviction, so
/// virtual time advances (see the crate docs, "Preemption loops").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PreemptionLoopOut {
    /// The preemptor (`namespace/name`).
    pub preemptor: String,
    /// The victim (`namespace/name`).
    pub victim: String,
    /// How many of the victim's runs this preemptor ended (at least 2).
    pub preemptions: u64,
    /// The first of them, ms.
    pub first_ms: i64,
    /// The last of them, ms.
    pub last_ms: i64,
    /// How many of them were the victim's second eviction at one instant, after which the
    /// victim went back to its queue 1 ms later.
    pub held_back: u64,
}

/// One workload's failed attempts and the Job controller's retries.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FailureOut {
    /// The workload (`namespace/name`).
    pub workload: String,
    /// Attempts that failed.
    pub failed_attempts: u32,
    /// The failed attempts the Job controller replaced within `backoffLimit`.
    pub retries: u32,
    /// When the Job failed (failures over `backoffLimit`; the Workload's `Finished`
    /// condition then has reason `Failed`), ms; `null`: it did not fail.
    pub failed_ms: Option<i64>,
    /// The failed attempts' durations × the `nvidia.com/gpu` their runs held, GPU-hours
    /// with six decimals.
    pub lost_gpu_hours: GpuHours,
}

/// One event of `spec.timeline` and what it did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TimelineOut {
    /// The event's index in `spec.timeline`.
    pub index: usize,
    /// Its instant, ms.
    pub at_ms: i64,
    /// The objects it created, replaced or deleted, in the order they changed.
    pub changes: Vec<TimelineChangeOut>,
    /// The queues that stopped admitting: ClusterQueue names and LocalQueue keys
    /// (`namespace/name`) whose `stopPolicy` became `Hold` or `HoldAndDrain`, and deleted
    /// ClusterQueues that still hold admitted workloads; sorted.
    pub admissions_stopped: Vec<String>,
    /// The queues whose `stopPolicy` went back to `None` (or unset), sorted.
    pub admissions_resumed: Vec<String>,
    /// The admitted workloads it evicted (`HoldAndDrain`), in workload order; each also
    /// ends a run as `Preempted` with this reason and `by` the stopped queue
    /// (`ClusterQueue/NAME`, `LocalQueue/NAMESPACE/NAME`).
    pub evicted: Vec<TimelineEvictionOut>,
    /// The deleted ClusterQueues kept (terminating) while they hold admitted workloads.
    pub terminating: Vec<TerminatingOut>,
    /// The nominal quota of all ClusterQueues per flavor and resource (the hard caps of
    /// all ResourceQuotas, flavor `""`, under `resourcequota`) before the event.
    #[cfg_attr(feature = "schema", schemars(with = "UsageSchema"))]
    pub capacity_before: UsageOut,
    /// As `capacityBefore`, after the event.
    #[cfg_attr(feature = "schema", schemars(with = "UsageSchema"))]
    pub capacity_after: UsageOut,
    /// The nodes that failed (`nodes.down`): their pods were lost, their workloads evicted
    /// with reason `NodeFailures` (in `evicted`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nodes_down: Vec<String>,
    /// The nodes cordoned (`nodes.drain`); the workloads still on them at the deadline are
    /// evicted with reason `EvictionByEvictionAPI` (in `evicted`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nodes_drained: Vec<String>,
    /// The drain deadline, ms after the event.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drain_deadline_ms: Option<i64>,
    /// The nodes back (`nodes.up`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nodes_up: Vec<String>,
    /// The devices that take new pods per extended resource (the allocatable of the nodes
    /// neither failed, cordoned nor in a MIG window) before the event; only for an event
    /// with node changes on a cluster with Nodes.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub devices_before: BTreeMap<String, i64>,
    /// As `devicesBefore`, after the event.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub devices_after: BTreeMap<String, i64>,
    /// The MIG maintenance window the event opened (`migLayout`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mig_window: Option<MigWindowOut>,
}

/// A MIG maintenance window: from the event the node takes no new pods; once none of its
/// devices is held, its MIG layout changes to the config and it takes pods again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MigWindowOut {
    /// The node.
    pub node: String,
    /// The mig-parted config.
    pub config: String,
    /// When the window opened, ms.
    pub opened_ms: i64,
    /// When it closed (the new layout in place), ms; absent when it was still open at the
    /// end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closed_ms: Option<i64>,
    /// The workloads it waited for (holding a device on the node when it opened).
    pub waited: Vec<String>,
}

/// One object a timeline event changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TimelineChangeOut {
    /// Its kind (`ClusterQueue`).
    pub kind: String,
    /// Its name (`namespace/name` for namespaced kinds).
    pub name: String,
    /// `created`, `replaced` or `deleted`.
    pub change: String,
}

/// One workload a timeline event evicted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TimelineEvictionOut {
    /// `namespace/name`.
    pub workload: String,
    /// Upstream's reason: `ClusterQueueStopped` or `LocalQueueStopped`.
    pub reason: String,
}

/// A deleted ClusterQueue kept by its admitted workloads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TerminatingOut {
    /// Its name.
    pub cluster_queue: String,
    /// When its last admitted workload ended and it left, ms; absent when it was still
    /// there at the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_ms: Option<i64>,
}

/// Whether a run's `by` names a stopped queue (a timeline's `HoldAndDrain`), not a
/// preemptor.
pub(crate) fn by_queue_stop(by: &str) -> bool {
    by.starts_with("ClusterQueue/") || by.starts_with("LocalQueue/")
}

/// One workload of a [`SimReport`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WorkloadOut {
    /// `namespace/name`.
    pub workload: String,
    /// Its queue (ClusterQueue, or namespace under `resourcequota`).
    pub queue: String,
    /// Its class (`""` without one).
    pub class: String,
    /// Arrival, ms.
    pub created_ms: i64,
    /// Its runs (pods running to end), in order; they never overlap.
    pub runs: Vec<RunOut>,
    /// Completion, ms; `null` when it did not finish.
    pub finished_ms: Option<i64>,
    /// Present when pending at the end (never admitted, evicted and not readmitted, or
    /// admitted with its pods waiting for free devices).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending: Option<PendingOut>,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum RunEndOut {
    /// Its runtime elapsed.
    Finished,
    /// Evicted (with `reason` and `by`).
    Preempted,
    /// Still running at the end.
    Cut,
}

/// One run of a workload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RunOut {
    /// When its quota was reserved (Kueue's admission; under `resourcequota`, its pods'
    /// creation), ms; present only when its pods then waited for free devices on the Nodes
    /// (reason `Unschedulable`) and so started later.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reserved_ms: Option<i64>,
    /// When its pods ran, ms: admission, unless they waited for free devices; a run evicted
    /// while they waited has `startMs` = `endMs`.
    pub start_ms: i64,
    /// End, ms.
    pub end_ms: i64,
    /// How it ended.
    pub end: RunEndOut,
    /// Only when `Preempted`: upstream's eviction reason (`InClusterQueue`,
    /// `InCohortReclamation`, `BudgetExhausted`, `NodeFailures` and `EvictionByEvictionAPI`
    /// for a timeline's node events, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Only when `Preempted`: the preemptor (`namespace/name`, or `Budget/<name>`, or
    /// `Node/<name>` for a node that failed or was drained, or `waitForPodsReady` for the
    /// PodsReady timeout, reasons `PodsReadyTimeout` and
    /// `DeactivatedDueToRequeuingLimitExceeded`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// The quota the engine charged: count × per-pod requests per flavor and resource.
    #[cfg_attr(feature = "schema", schemars(with = "UsageSchema"))]
    pub usage: UsageOut,
}

/// Why a workload is pending at the end.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PendingOut {
    /// Upstream's `QuotaReserved=False` reason (`Forbidden` under `resourcequota`,
    /// `BudgetExhausted` when a budget holds it back), or `Unschedulable` when its quota is
    /// reserved but its pods found no free devices on the Nodes (the kube-scheduler's
    /// `PodScheduled=False` reason and message).
    pub reason: String,
    /// Upstream's message (the API server's under `resourcequota`).
    pub message: String,
}

/// The statistics of one class.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ClassOut {
    /// Workloads.
    pub count: u64,
    /// Workloads that finished.
    pub finished: u64,
    /// `Preempted` runs.
    pub evictions: u64,
    /// First admission − creation, averaged (floor) over admitted workloads; 0 without any.
    pub mean_time_to_admission_ms: i64,
    /// Nearest-rank median of the time to admission.
    pub p50_time_to_admission_ms: i64,
    /// Nearest-rank 95th percentile of the time to admission.
    pub p95_time_to_admission_ms: i64,
    /// Completion − creation, averaged (floor) over finished workloads; 0 without any.
    pub mean_time_to_finish_ms: i64,
    /// Evictions (`Preempted` runs) after which the workload ran again.
    pub readmissions: u64,
    /// Readmission − eviction (the next run's start − the preempted run's end), averaged
    /// (floor) over [`ClassOut::readmissions`]; 0 without any. Apart from the time to
    /// admission, which counts only the first admission.
    pub mean_requeue_wait_ms: i64,
    /// Nearest-rank 95th percentile of the requeue wait.
    pub p95_requeue_wait_ms: i64,
}

/// The statistics of one queue.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct QueueOut {
    /// Its nominal quota.
    #[cfg_attr(feature = "schema", schemars(with = "UsageSchema"))]
    pub nominal: UsageOut,
    /// ∫usage dt × 100 / (nominal × `endMs`), as Kueue's perf checker computes it, averaged
    /// over the flavor-resources with a nominal quota, rounded to 0.1; `null` when none has
    /// one (a queue that only borrows: its use is in `borrowedMs`, not a percentage of 0).
    pub mean_usage_percent: Option<f64>,
    /// ∫ max(0, usage − nominal) dt per flavor-resource with a nominal quota.
    pub borrowed_ms: BorrowedOut,
}

/// Which workloads a budget covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum ScopeOut {
    /// `{"queue": name}`: the workloads of this ClusterQueue (KAI: Queue).
    Queue(String),
    /// `{"namespaces": [...]}`: the workloads of these namespaces (sorted, unique).
    Namespaces(Vec<String>),
}

/// One budget of the `budgets` section: its rule and every period.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BudgetOut {
    /// The Budget's name.
    pub budget: String,
    /// What it covers.
    pub scope: ScopeOut,
    /// The card type it counts (`null`: every card type).
    pub card_type: Option<String>,
    /// `Wait`, `Deprioritize` or `Notify`.
    pub when_spent: String,
    /// Whether running work is stopped when it is spent.
    pub stop_running: bool,
    /// Workloads held back.
    pub held_back: u32,
    /// Runs stopped.
    pub stopped: u32,
    /// Every period, in time order.
    pub periods: Vec<PeriodOut>,
}

/// One period of a budget.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PeriodOut {
    /// Start, ms since `spec.start`.
    pub start_ms: i64,
    /// End, ms since `spec.start`.
    pub end_ms: i64,
    /// The period's budget, GPU-hours with six decimals.
    pub gpu_hours: GpuHours,
    /// Used, GPU-hours with six decimals.
    pub used_gpu_hours: GpuHours,
    /// Budget − used (negative after an overrun), GPU-hours with six decimals.
    pub remaining_gpu_hours: GpuHours,
    /// When the budget was reached, ms; `null` when it was not.
    pub spent_at_ms: Option<i64>,
}

/// The `chargeback` section: the `gpuquota meter --output json` report of the runs
/// ([`gpuquota_metering::report::ReportOut`], its fields first) plus the lost hours of
/// preempted runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Chargeback {
    /// The meter report's fields (`window`, `currency`, `lines`, `idle`, `totals`,
    /// `warnings`).
    #[serde(flatten)]
    pub meter: gpuquota_metering::report::ReportOut,
    /// Per department and card type, the GPU-hours of runs that ended `Preempted`.
    pub preempted: Vec<LostHoursOut>,
    /// `spec.metering.chargeLostWork` (default `true`): whether the departments' lines
    /// include the `preempted` hours; when `false` they are on the `lost-work` lines
    /// ([`crate::bill`]).
    #[serde(rename = "chargeLostWork")]
    pub charge_lost_work: bool,
}

/// GPU-hours lost to preemption by one department on one card type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LostHoursOut {
    /// The department (metering's unassigned name for a namespace of none).
    pub department: String,
    /// The card type.
    pub card_type: String,
    /// GPU-hours, six decimals (0 under `spec.resume`).
    pub hours: GpuHours,
}

/// A simulation's result with the per-class and per-queue statistics derived from its runs.
#[derive(Debug, Clone)]
pub struct Report {
    /// The scenario's name.
    pub name: String,
    /// `spec.start`.
    pub start: Timestamp,
    /// What happened.
    pub outcome: Outcome,
    /// Per class (`""` for workloads without one), in name order.
    pub classes: BTreeMap<String, ClassStats>,
    /// Per queue, in name order.
    pub queues: BTreeMap<String, QueueStats>,
    /// Number of `Preempted` runs.
    pub preemptions: u64,
    /// The last completion, ms.
    pub makespan_ms: i64,
    /// The warnings of the run (also rendered in the JSON's `warnings`).
    pub diagnostics: gpuquota_model::Diagnostics,
    /// The JSON's `budgets` section, when the scenario has budgets.
    pub budgets: Option<Vec<BudgetOut>>,
    /// The JSON's `chargeback` section, when the scenario has `spec.metering`.
    pub chargeback: Option<Chargeback>,
    /// The preemption loops of the run ([`preemption_loops`]).
    pub preemption_loops: Vec<PreemptionLoopOut>,
    /// The JSON's `fidelity` section, when the workloads were recorded.
    pub fidelity: Option<crate::history::fidelity::Fidelity>,
}

/// Every pair of a preemptor (a workload, not a budget) and a victim whose preemptions
/// number more than one, by first preemption, then preemptor and victim, with the
/// hold-backs of [`Outcome::held_back`] counted per pair.
///
/// # Complexity
/// O(R log R) for R runs.
pub fn preemption_loops(outcome: &Outcome) -> Vec<PreemptionLoopOut> {
    let mut pairs: BTreeMap<(&str, &str), (u64, i64, i64, u64)> = BTreeMap::new();
    for w in &outcome.workloads {
        for r in &w.runs {
            if let RunEnd::Preempted { by, .. } = &r.end
                && !by.starts_with("Budget/")
                && !by.starts_with("Node/")
                && !by_queue_stop(by)
            {
                let e = pairs
                    .entry((by.as_str(), w.key.as_str()))
                    .or_insert((0, r.end_ms, r.end_ms, 0));
                e.0 += 1;
                e.1 = e.1.min(r.end_ms);
                e.2 = e.2.max(r.end_ms);
            }
        }
    }
    for h in &outcome.held_back {
        if let Some(e) = pairs.get_mut(&(h.preemptor.as_str(), h.victim.as_str())) {
            e.3 += 1;
        }
    }
    let mut loops: Vec<PreemptionLoopOut> = pairs
        .into_iter()
        .filter(|(_, e)| e.0 > 1)
        .map(|((pre, vic), e)| PreemptionLoopOut {
            preemptor: pre.to_owned(),
            victim: vic.to_owned(),
            preemptions: e.0,
            first_ms: e.1,
            last_ms: e.2,
            held_back: e.3,
        })
        .collect();
    loops.sort_by(|a, b| {
        (a.first_ms, &a.preemptor, &a.victim).cmp(&(b.first_ms, &b.preemptor, &b.victim))
    });
    loops
}

/// The `preemption-loop` warning of one loop, naming both workloads.
pub fn preemption_loop_warning(l: &PreemptionLoopOut) -> gpuquota_model::Diagnostic {
    let held = if l.held_back > 0 {
        format!(
            "; held back to the next millisecond {} time(s) after a second eviction at one instant",
            l.held_back
        )
    } else {
        String::new()
    };
    gpuquota_model::Diagnostic::warning(
        crate::engine::PREEMPTION_LOOP,
        format!(
            "preemption loop: {} preempted {} {} times between {} ms and {} ms{held}; the victim was readmitted ahead of its preemptor (Kueue loops the same way at its default feature gates)",
            l.preemptor, l.victim, l.preemptions, l.first_ms, l.last_ms
        ),
    )
    .object("Workload", l.preemptor.clone())
}

/// Statistics of one workload class.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClassStats {
    /// Workloads.
    pub count: u64,
    /// Workloads that finished.
    pub finished: u64,
    /// `Preempted` runs.
    pub evictions: u64,
    /// Time to first admission of every admitted workload, sorted.
    pub admission_ms: Vec<i64>,
    /// Σ time to first admission over every workload (0 for one never admitted), as
    /// Kueue's recorder sums it.
    pub recorder_admission_total: i64,
    /// Σ time to finish over every workload (0 for one that did not finish), as Kueue's
    /// recorder sums it.
    pub recorder_finish_total: i64,
    /// Time from creation to completion of every finished workload.
    pub finish_ms: Vec<i64>,
    /// Time from each eviction to the readmission that followed it, sorted.
    pub requeue_ms: Vec<i64>,
}

impl ClassStats {
    /// Mean time to admission over admitted workloads (floor), 0 without any.
    pub fn mean_admission(&self) -> i64 {
        mean(&self.admission_ms)
    }

    /// Nearest-rank percentile `p` (0–100) of the time to admission, 0 without any.
    pub fn percentile_admission(&self, p: u32) -> i64 {
        nearest_rank(&self.admission_ms, p)
    }

    /// Mean time from eviction to readmission (floor), 0 without any.
    pub fn mean_requeue(&self) -> i64 {
        mean(&self.requeue_ms)
    }

    /// Nearest-rank percentile `p` (0–100) of the time from eviction to readmission, 0
    /// without any.
    pub fn percentile_requeue(&self, p: u32) -> i64 {
        nearest_rank(&self.requeue_ms, p)
    }

    /// Mean time to finish over finished workloads (floor), 0 without any.
    pub fn mean_finish(&self) -> i64 {
        mean(&self.finish_ms)
    }
}

/// Nearest-rank percentile `p` (0–100) of sorted `v`, 0 when empty.
fn nearest_rank(v: &[i64], p: u32) -> i64 {
    let n = v.len();
    if n == 0 {
        return 0;
    }
    let rank = (u64::from(p) * n as u64).div_ceil(100).max(1) as usize;
    v[rank.min(n) - 1]
}

/// The waits from each eviction to the readmission after it, from a workload's runs in
/// time order as `(start, end, ended by an eviction)`: the next run's start − the evicted
/// run's end. An eviction without a later run (still waiting at the end) has none.
pub fn requeue_waits(runs: &[(i64, i64, bool)]) -> Vec<i64> {
    runs.windows(2)
        .filter(|w| w[0].2)
        .map(|w| w[1].0.saturating_sub(w[0].1))
        .collect()
}

fn mean(v: &[i64]) -> i64 {
    if v.is_empty() {
        return 0;
    }
    let s: i128 = v.iter().map(|&x| i128::from(x)).sum();
    i64::try_from(s.div_euclid(v.len() as i128)).unwrap_or(i64::MAX)
}

/// Statistics of one queue (ClusterQueue, or namespace under `resourcequota`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueueStats {
    /// Per flavor-resource index: nominal.
    pub nominal: Vec<(u32, i64)>,
    /// Per flavor-resource index: ∫ usage dt (amount × ms).
    pub used: BTreeMap<u32, i128>,
    /// Per flavor-resource index: ∫ max(0, usage − nominal) dt (amount × ms).
    pub borrowed: BTreeMap<u32, i128>,
    /// Per flavor-resource index: the largest usage.
    pub max_usage: BTreeMap<u32, i64>,
    /// The last time its usage changed, ms.
    pub last_change_ms: i64,
}

impl QueueStats {
    /// ∫usage dt × 100 / (nominal × elapsed), averaged over the flavor-resources with a
    /// nominal quota, rounded to 0.1; `None` when no flavor-resource has a nominal quota
    /// (or nothing elapsed): a borrower's use is no percentage of a quota of 0.
    pub fn mean_usage_percent(&self, elapsed_ms: i64) -> Option<f64> {
        let mut sum = 0.0;
        let mut k = 0u32;
        for &(fr, nom) in &self.nominal {
            if nom <= 0 || elapsed_ms <= 0 {
                continue;
            }
            let u = self.used.get(&fr).copied().unwrap_or(0);
            sum += (u as f64) * 100.0 / (nom as f64 * elapsed_ms as f64);
            k += 1;
        }
        if k == 0 {
            return None;
        }
        Some(((sum / f64::from(k)) * 10.0).round() / 10.0)
    }
}

/// Amount × ms in the resource's display unit × ms (CPU in cores, bytes for memory).
fn display_integral(r: &ResourceName, v: i128) -> i128 {
    if r.is_cpu() { v.div_euclid(1000) } else { v }
}

impl Report {
    /// Derives the statistics from an outcome.
    ///
    /// # Complexity
    /// O(R log R) for R runs.
    pub fn new(name: String, start: Timestamp, outcome: Outcome) -> Report {
        let mut classes: BTreeMap<String, ClassStats> = BTreeMap::new();
        let mut preemptions = 0u64;
        let mut makespan = 0i64;
        let mut deltas: BTreeMap<String, Vec<(i64, u32, i64)>> = BTreeMap::new();
        for w in &outcome.workloads {
            let c = classes.entry(w.class.clone()).or_default();
            c.count += 1;
            if let Some(r) = w.runs.first() {
                let d = r.reserved_ms - w.created_ms;
                c.admission_ms.push(d);
                c.recorder_admission_total += d;
            }
            if let Some(f) = w.finished_ms {
                c.finished += 1;
                c.finish_ms.push(f - w.created_ms);
                c.recorder_finish_total += f - w.created_ms;
                makespan = makespan.max(f);
            }
            let spans: Vec<(i64, i64, bool)> = w
                .runs
                .iter()
                .map(|r| {
                    let evicted = matches!(r.end, RunEnd::Preempted { .. });
                    (r.start_ms, r.end_ms, evicted)
                })
                .collect();
            c.requeue_ms.extend(requeue_waits(&spans));
            for r in &w.runs {
                if matches!(r.end, RunEnd::Preempted { .. }) {
                    c.evictions += 1;
                    preemptions += 1;
                }
                let e = deltas.entry(w.queue.clone()).or_default();
                for &(fr, a) in &r.usage {
                    e.push((r.start_ms, fr, a));
                    e.push((r.end_ms, fr, -a));
                }
            }
        }
        for c in classes.values_mut() {
            c.admission_ms.sort_unstable();
            c.finish_ms.sort_unstable();
            c.requeue_ms.sort_unstable();
        }
        let mut queues = BTreeMap::new();
        for q in &outcome.queues {
            let mut st = QueueStats {
                nominal: q.nominal.clone(),
                ..QueueStats::default()
            };
            let nominal: BTreeMap<u32, i64> = q.nominal.iter().copied().collect();
            if let Some(ds) = deltas.get_mut(&q.name) {
                // releases before acquisitions at one instant
                ds.sort_by_key(|&(t, fr, a)| (t, a > 0, fr, a));
                let mut cur: BTreeMap<u32, i64> = BTreeMap::new();
                let mut last: BTreeMap<u32, i64> = BTreeMap::new();
                for &(t, fr, a) in ds.iter() {
                    let u = cur.entry(fr).or_insert(0);
                    let lt = last.entry(fr).or_insert(t);
                    let dt = i128::from(t - *lt);
                    let nom = nominal.get(&fr).copied().unwrap_or(0);
                    *st.used.entry(fr).or_insert(0) += i128::from(*u) * dt;
                    *st.borrowed.entry(fr).or_insert(0) += i128::from((*u - nom).max(0)) * dt;
                    *lt = t;
                    *u += a;
                    let m = st.max_usage.entry(fr).or_insert(0);
                    *m = (*m).max(*u);
                    if a != 0 {
                        st.last_change_ms = st.last_change_ms.max(t);
                    }
                }
            }
            queues.insert(q.name.clone(), st);
        }
        Report {
            name,
            start,
            outcome,
            classes,
            queues,
            preemptions,
            makespan_ms: makespan,
            diagnostics: gpuquota_model::Diagnostics::default(),
            budgets: None,
            chargeback: None,
            preemption_loops: Vec::new(),
            fidelity: None,
        }
    }

    fn fr_name(&self, fr: u32) -> (&str, &ResourceName) {
        let (f, r) = &self.outcome.frs[fr as usize];
        (f.as_str(), r)
    }

    fn usage_map(&self, usage: &[(u32, i64)]) -> UsageOut {
        let mut m = UsageOut::new();
        for &(fr, a) in usage {
            let (f, r) = self.fr_name(fr);
            m.entry(f.to_owned())
                .or_default()
                .insert(r.as_str().to_owned(), r.quantity_of(Amount(a)));
        }
        m
    }

    /// The typed JSON document ([`SimReport`]): what `gpuquota sim --output json` prints.
    ///
    /// # Complexity
    /// O(runs × flavor-resources).
    pub fn to_output(&self) -> SimReport {
        let o = &self.outcome;
        let workloads = o
            .workloads
            .iter()
            .map(|w| WorkloadOut {
                workload: w.key.clone(),
                queue: w.queue.clone(),
                class: w.class.clone(),
                created_ms: w.created_ms,
                runs: w
                    .runs
                    .iter()
                    .map(|r| {
                        let (end, reason, by) = match &r.end {
                            RunEnd::Finished => (RunEndOut::Finished, None, None),
                            RunEnd::Cut => (RunEndOut::Cut, None, None),
                            RunEnd::Preempted { reason, by } => {
                                (RunEndOut::Preempted, Some(reason.clone()), Some(by.clone()))
                            }
                        };
                        RunOut {
                            reserved_ms: (r.reserved_ms < r.start_ms).then_some(r.reserved_ms),
                            start_ms: r.start_ms,
                            end_ms: r.end_ms,
                            end,
                            reason,
                            by,
                            usage: self.usage_map(&r.usage),
                        }
                    })
                    .collect(),
                finished_ms: w.finished_ms,
                pending: w.pending.as_ref().map(|(reason, message)| PendingOut {
                    reason: reason.clone(),
                    message: message.clone(),
                }),
            })
            .collect();
        let classes = self
            .classes
            .iter()
            .map(|(name, c)| {
                (
                    name.clone(),
                    ClassOut {
                        count: c.count,
                        finished: c.finished,
                        evictions: c.evictions,
                        mean_time_to_admission_ms: c.mean_admission(),
                        p50_time_to_admission_ms: c.percentile_admission(50),
                        p95_time_to_admission_ms: c.percentile_admission(95),
                        mean_time_to_finish_ms: c.mean_finish(),
                        readmissions: c.requeue_ms.len() as u64,
                        mean_requeue_wait_ms: c.mean_requeue(),
                        p95_requeue_wait_ms: c.percentile_requeue(95),
                    },
                )
            })
            .collect();
        let queues = self.queues_output();
        SimReport {
            engine: o.engine,
            start: self.start,
            end_ms: o.end_ms,
            makespan_ms: self.makespan_ms,
            workloads,
            classes,
            queues,
            preemptions: self.preemptions,
            preemption_loops: self.preemption_loops.clone(),
            capacity_checked: o.nodes > 0,
            timeline: self.timeline_output(),
            failures: self.failures_output(),
            budgets: self.budgets.clone(),
            chargeback: self.chargeback.clone(),
            fidelity: self.fidelity.clone(),
            warnings: o.warnings.clone(),
        }
    }

    /// The JSON's `failures` section ([`SimReport::failures`]).
    ///
    /// # Complexity
    /// O(workloads).
    pub fn failures_output(&self) -> Vec<FailureOut> {
        let o = &self.outcome;
        o.failures
            .iter()
            .zip(&o.workloads)
            .filter(|(f, _)| f.failed_attempts > 0)
            .map(|(f, w)| FailureOut {
                workload: w.key.clone(),
                failed_attempts: f.failed_attempts,
                retries: f.retries,
                failed_ms: f.failed_ms,
                // GPU-ms to millionths of a GPU-hour: × 10⁶ / 3.6·10⁶, rounded down
                lost_gpu_hours: GpuHours::from_micro(i128::from(f.lost_gpu_ms) * 10 / 36),
            })
            .collect()
    }

    /// The JSON's `timeline` section ([`SimReport::timeline`]).
    ///
    /// # Complexity
    /// O(events × (objects changed + evictions + flavor-resources)).
    pub fn timeline_output(&self) -> Vec<TimelineOut> {
        timeline_out(&self.outcome.timeline, |u: &[(u32, i64)]| self.usage_map(u))
    }

    /// One line per timeline event for the table: when, what changed, and its effect.
    pub fn timeline_sentences(&self) -> Vec<String> {
        let quota = |c: &[(u32, i64)]| {
            let v: Vec<String> = c
                .iter()
                .map(|&(fr, a)| {
                    let (f, r) = self.fr_name(fr);
                    format!("{}{}={}", flavor_prefix(f), r, r.format_amount(Amount(a)))
                })
                .collect();
            if v.is_empty() {
                "none".to_owned()
            } else {
                v.join(", ")
            }
        };
        timeline_lines(&self.outcome.timeline, self.start, quota)
    }

    /// The JSON's `queues` section alone (what [`Report::to_output`] puts there), without
    /// building every workload's output.
    ///
    /// # Complexity
    /// O(queues × flavor-resources).
    pub fn queues_output(&self) -> BTreeMap<String, QueueOut> {
        self.queues
            .iter()
            .map(|(name, q)| {
                let mut borrowed = BorrowedOut::new();
                for &(fr, _) in &q.nominal {
                    let (f, r) = self.fr_name(fr);
                    let v = display_integral(r, q.borrowed.get(&fr).copied().unwrap_or(0));
                    borrowed
                        .entry(f.to_owned())
                        .or_default()
                        .insert(r.as_str().to_owned(), v);
                }
                (
                    name.clone(),
                    QueueOut {
                        nominal: self.usage_map(&q.nominal),
                        mean_usage_percent: q.mean_usage_percent(self.outcome.end_ms),
                        borrowed_ms: borrowed,
                    },
                )
            })
            .collect()
    }

    /// The JSON document as a [`serde_json::Value`] (for reading fields in tests and
    /// tools; [`Report::to_json_string`] prints the contract's field order).
    ///
    /// # Complexity
    /// O(runs × flavor-resources).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.to_output()).unwrap_or(Value::Null)
    }

    /// Writes [`Report::to_json_string`]'s text to `w` as it is produced, without holding
    /// the text (the same bytes).
    ///
    /// # Errors
    /// The writer's error.
    pub fn write_json(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        serde_json::to_writer_pretty(&mut *w, &self.to_output()).map_err(std::io::Error::from)?;
        w.write_all(b"\n")
    }

    /// The JSON document as pretty-printed text with a trailing newline.
    pub fn to_json_string(&self) -> String {
        let mut s = serde_json::to_string_pretty(&self.to_output()).unwrap_or_default();
        s.push('\n');
        s
    }

    /// One CSV row per run and flavor-resource: `workload,queue,class,startMs,endMs,end,
    /// flavor,resource,amount` (a run without usage has one row with empty flavor, resource
    /// and amount). Fields are quoted when they hold a comma, quote or newline.
    pub fn to_csv(&self) -> String {
        let mut out =
            String::from("workload,queue,class,startMs,endMs,end,flavor,resource,amount\n");
        for w in &self.outcome.workloads {
            for r in &w.runs {
                let head = format!(
                    "{},{},{},{},{},{}",
                    csv_field(&w.key),
                    csv_field(&w.queue),
                    csv_field(&w.class),
                    r.start_ms,
                    r.end_ms,
                    r.end.as_str()
                );
                if r.usage.is_empty() {
                    let _ = writeln!(out, "{head},,,");
                }
                for &(fr, a) in &r.usage {
                    let (f, res) = self.fr_name(fr);
                    let _ = writeln!(
                        out,
                        "{head},{},{},{}",
                        csv_field(f),
                        csv_field(res.as_str()),
                        res.format_amount(Amount(a))
                    );
                }
            }
        }
        out
    }

    /// The summary document Kueue's perf runner writes (`runner/recorder`: `WriteSummary`),
    /// as YAML with its keys sorted as `sigs.k8s.io/yaml` writes them.
    ///
    /// `clusterQueueClasses` groups the ClusterQueues by their
    /// `kueue.x-k8s.io/performance-scheduler-class` label (`""` without one): `cpuUsed` is
    /// Σ ∫ cpu usage dt in mCPU × ms over the class's queues, `nominalQuota` Σ their cpu
    /// nominal in mCPU (the first flavor of the first resource group, as the recorder reads
    /// it), `cpuAverageUsage` = `cpuUsed` / monitored ms, `firstEventTime` the start and
    /// `lastEventTime` the last usage change. `workloadClasses` has `count`,
    /// `totalEvictions`, `averageTimeToAdmissionMs` and `averageTimeToFinishMs` as the
    /// recorder computes them (sums over every workload divided by `count`).
    pub fn to_kueue_summary(&self, cq_class: &BTreeMap<String, String>) -> String {
        #[derive(Default)]
        struct G {
            used: i128,
            nominal: i64,
            last: i64,
        }
        let mut groups: BTreeMap<String, G> = BTreeMap::new();
        for (name, q) in &self.queues {
            let class = cq_class.get(name).cloned().unwrap_or_default();
            let g = groups.entry(class).or_default();
            let cpu = q
                .nominal
                .iter()
                .find(|(fr, _)| self.fr_name(*fr).1.is_cpu())
                .copied();
            if let Some((fr, nom)) = cpu {
                g.nominal += nom;
                g.used += q.used.get(&fr).copied().unwrap_or(0);
            }
            g.last = g.last.max(q.last_change_ms);
        }
        let mut out = String::from("clusterQueueClasses:\n");
        for (class, g) in &groups {
            let avg = if g.last > 0 {
                g.used / i128::from(g.last)
            } else {
                0
            };
            let _ = writeln!(out, "  {}:", yaml_key(class));
            let _ = writeln!(out, "    cpuAverageUsage: {avg}");
            let _ = writeln!(out, "    cpuUsed: {}", g.used);
            let _ = writeln!(out, "    firstEventTime: \"{}\"", self.start);
            let _ = writeln!(out, "    lastEventTime: \"{}\"", at_ms(self.start, g.last));
            let _ = writeln!(out, "    nominalQuota: {}", g.nominal);
        }
        out.push_str("workloadClasses:\n");
        for (class, c) in &self.classes {
            let n = c.count.max(1) as i64;
            let _ = writeln!(out, "  {}:", yaml_key(class));
            let _ = writeln!(
                out,
                "    averageTimeToAdmissionMs: {}",
                c.recorder_admission_total / n
            );
            let _ = writeln!(
                out,
                "    averageTimeToFinishMs: {}",
                c.recorder_finish_total / n
            );
            let _ = writeln!(out, "    count: {}", c.count);
            let _ = writeln!(out, "    totalEvictions: {}", c.evictions);
        }
        out
    }

    /// [`Report::table`] at full width.
    pub fn to_table(&self) -> String {
        self.table(Width::Full)
    }

    /// The table: per queue and per class, then a plain-language summary, and with
    /// `spec.metering` the bill (one row per department and card type, one idle row per card
    /// type, the total) and the lost work; on the workspace's one table layout
    /// ([`gpuquota_model::text`]: nothing is cut, [`Width::Fit`] wraps).
    ///
    /// # Complexity
    /// O(queues × flavor-resources + classes + runs).
    pub fn table(&self, width: Width) -> String {
        let o = &self.outcome;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "Simulation {} ({}): {} workloads, end {}, makespan {}, {} preemptions, {} cycles",
            self.name,
            o.engine.as_str(),
            o.workloads.len(),
            human_ms(o.end_ms),
            human_ms(self.makespan_ms),
            self.preemptions,
            o.counters.cycles
        );
        let _ = writeln!(out);
        let mut queues = Table::new(["QUEUE", "USAGE%", "NOMINAL", "BORROWED"]).right([1]);
        for (name, q) in &self.queues {
            let nominal: Vec<String> = q
                .nominal
                .iter()
                .map(|&(fr, a)| {
                    let (f, r) = self.fr_name(fr);
                    format!("{}{}={}", flavor_prefix(f), r, r.format_amount(Amount(a)))
                })
                .collect();
            let borrowed: Vec<String> = q
                .nominal
                .iter()
                .filter_map(|&(fr, _)| {
                    let v = q.borrowed.get(&fr).copied().unwrap_or(0);
                    (v > 0).then(|| {
                        let (f, r) = self.fr_name(fr);
                        format!("{}{}: {}", flavor_prefix(f), r, amount_hours(r, v))
                    })
                })
                .collect();
            queues.row([
                name.clone(),
                // a queue without nominal quota only borrows: its hours are in BORROWED
                q.mean_usage_percent(o.end_ms)
                    .map_or_else(|| "-".to_owned(), |p| format!("{p:.1}")),
                nominal.join(", "),
                if borrowed.is_empty() {
                    "-".to_owned()
                } else {
                    borrowed.join(", ")
                },
            ]);
        }
        out.push_str(&queues.render(width));
        let _ = writeln!(out);
        let mut classes = Table::new([
            "CLASS",
            "COUNT",
            "FINISHED",
            "EVICTIONS",
            "MEAN-ADMIT",
            "P50-ADMIT",
            "P95-ADMIT",
            "MEAN-FINISH",
            "MEAN-REQUEUE",
        ])
        .right(1..9);
        for (name, c) in &self.classes {
            classes.row([
                if name.is_empty() { "(none)" } else { name }.to_owned(),
                c.count.to_string(),
                c.finished.to_string(),
                c.evictions.to_string(),
                human_ms(c.mean_admission()),
                human_ms(c.percentile_admission(50)),
                human_ms(c.percentile_admission(95)),
                human_ms(c.mean_finish()),
                if c.requeue_ms.is_empty() {
                    "-".to_owned()
                } else {
                    human_ms(c.mean_requeue())
                },
            ]);
        }
        out.push_str(&classes.render(width));
        let _ = writeln!(out);
        for line in self.summary_sentences() {
            let _ = writeln!(out, "{line}");
        }
        for line in self.timeline_sentences() {
            let _ = writeln!(out, "{line}");
        }
        if let Some(c) = &self.chargeback {
            bill_section(&mut out, c);
        }
        if let Some(f) = &self.fidelity {
            crate::history::fidelity::table_section(&mut out, f, width);
        }
        out
    }

    /// The plain-language summary, one sentence per line: who borrowed what, who was
    /// preempted by whom and when, who never ran.
    pub fn summary_sentences(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for (name, q) in &self.queues {
            for &(fr, _) in &q.nominal {
                let v = q.borrowed.get(&fr).copied().unwrap_or(0);
                if v > 0 {
                    let (f, r) = self.fr_name(fr);
                    let on = if f.is_empty() {
                        String::new()
                    } else {
                        format!(" of {f}")
                    };
                    lines.push(format!("{name} borrowed {}{on}.", amount_hours(r, v)));
                }
            }
        }
        // preemptions grouped by (victim queue, preemptor queue, hour)
        let queue_of: BTreeMap<&str, &str> = self
            .outcome
            .workloads
            .iter()
            .map(|w| (w.key.as_str(), w.queue.as_str()))
            .collect();
        let mut groups: BTreeMap<(String, String, i64), (u64, i64)> = BTreeMap::new();
        for w in &self.outcome.workloads {
            for r in &w.runs {
                if let RunEnd::Preempted { by, .. } = &r.end
                    && !by_queue_stop(by)
                {
                    let pq = queue_of.get(by.as_str()).copied().unwrap_or("");
                    let e = groups
                        .entry((w.queue.clone(), pq.to_owned(), r.end_ms / 3_600_000))
                        .or_insert((0, r.end_ms));
                    e.0 += 1;
                    e.1 = e.1.min(r.end_ms);
                }
            }
        }
        for ((victim, by, _), (count, first)) in groups.iter().take(20) {
            let at = clock(self.start, *first);
            let what = if victim == by {
                "by higher-priority work of its own queue".to_owned()
            } else {
                format!("when {by} reclaimed")
            };
            lines.push(format!(
                "{count} of {victim}'s workloads were preempted at {at} {what}."
            ));
        }
        if groups.len() > 20 {
            lines.push(format!(
                "… and {} more preemption groups.",
                groups.len() - 20
            ));
        }
        for l in self.preemption_loops.iter().take(5) {
            lines.push(format!(
                "{} preempted {} {} times between {} and {} (a preemption loop).",
                l.preemptor,
                l.victim,
                l.preemptions,
                clock(self.start, l.first_ms),
                clock(self.start, l.last_ms)
            ));
        }
        if self.preemption_loops.len() > 5 {
            lines.push(format!(
                "… and {} more preemption loops.",
                self.preemption_loops.len() - 5
            ));
        }
        let never: Vec<&crate::engine::WorkloadOutcome> = self
            .outcome
            .workloads
            .iter()
            .filter(|w| w.runs.is_empty())
            .collect();
        if !never.is_empty() {
            let mut reasons: BTreeMap<&str, u64> = BTreeMap::new();
            for w in &never {
                let r = w.pending.as_ref().map_or("Pending", |p| p.0.as_str());
                *reasons.entry(r).or_default() += 1;
            }
            let parts: Vec<String> = reasons.iter().map(|(r, n)| format!("{n} {r}")).collect();
            lines.push(format!(
                "{} workloads never ran ({}).",
                never.len(),
                parts.join(", ")
            ));
        }
        if lines.is_empty() {
            lines.push("Nobody borrowed, nothing was preempted, every workload ran.".to_owned());
        }
        lines.push(self.capacity_sentence());
        lines
    }

    /// Whether node capacity was checked, and how long runs waited for free devices.
    pub fn capacity_sentence(&self) -> String {
        let o = &self.outcome;
        if o.nodes == 0 {
            return "Node capacity was not checked: the cluster files have no Nodes, so quotas are the only cap.".to_owned();
        }
        let (mut runs, mut total) = (0u64, 0i64);
        for w in &o.workloads {
            for r in &w.runs {
                if r.reserved_ms < r.start_ms {
                    runs += 1;
                    total = total.saturating_add(r.start_ms - r.reserved_ms);
                }
            }
        }
        let still = o
            .workloads
            .iter()
            .filter(|w| {
                w.pending
                    .as_ref()
                    .is_some_and(|p| p.0 == crate::engine::UNSCHEDULABLE)
            })
            .count();
        let mut s = format!("Node capacity was checked against {} Nodes: ", o.nodes);
        if runs == 0 {
            s.push_str("no run waited for free devices");
        } else {
            let _ = write!(
                s,
                "{runs} runs waited for free devices (Unschedulable), {} in all",
                human_ms(total)
            );
        }
        if still > 0 {
            let _ = write!(s, "; {still} workloads still waited at the end");
        }
        s.push('.');
        s
    }
}

fn flavor_prefix(f: &str) -> String {
    if f.is_empty() {
        String::new()
    } else {
        format!("{f}/")
    }
}

fn yaml_key(s: &str) -> String {
    if s.is_empty() || s.contains([':', '#', '"', '\'']) || s.starts_with(' ') {
        format!("{s:?}")
    } else {
        s.to_owned()
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

/// `amount × ms` as hours of the resource (`64 GPU-hours`, `12.5 CPU-hours`).
fn amount_hours(r: &ResourceName, v: i128) -> String {
    let unit = if r.is_gpu() {
        "GPU"
    } else if r.is_cpu() {
        "CPU"
    } else {
        r.as_str()
    };
    let base = display_integral(r, v) as f64 / 3_600_000.0;
    if r.is_byte_sized() {
        return format!("{:.1} GiB-hours", base / 1_073_741_824.0);
    }
    format!("{base:.1} {unit}-hours")
}

/// `86400000` → `24h`, `66400` → `1m6.4s`.
pub fn human_ms(ms: i64) -> String {
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let h = ms / 3_600_000;
    let m = ms % 3_600_000 / 60_000;
    let s = ms % 60_000;
    let mut out = String::new();
    if h > 0 {
        let _ = write!(out, "{h}h");
    }
    if m > 0 {
        let _ = write!(out, "{m}m");
    }
    if s > 0 {
        if s % 1000 == 0 {
            let _ = write!(out, "{}s", s / 1000);
        } else {
            let _ = write!(
                out,
                "{}.{}s",
                s / 1000,
                format!("{:03}", s % 1000).trim_end_matches('0')
            );
        }
    }
    out
}

/// The wall-clock time of `ms` after `start` as `HH:MM` (with the date when not the start's).
fn clock(start: Timestamp, ms: i64) -> String {
    let t = at_ms(start, ms).to_string();
    let s = start.to_string();
    let (date, time) = t.split_at(10);
    let hm = time.get(1..6).unwrap_or("");
    if s.get(..10) == Some(date) {
        hm.to_owned()
    } else {
        format!("{date} {hm}")
    }
}

/// The `sim` table's bill (with `spec.metering`): the rows of [`crate::bill::bill_rows`]
/// and the lost work.
pub(crate) fn bill_section(out: &mut String, chargeback: &Chargeback) {
    let _ = writeln!(
        out,
        "\nThe bill: per department and card type, then idle; the rows add up to the total"
    );
    for line in crate::bill::bill_rows(chargeback) {
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(
        out,
        "Lost work: {}",
        crate::bill::lost_work_sentence(chargeback)
    );
}

/// The JSON's `timeline` section of `effects` (either engine's), each flavor-resource list
/// through `usage_map`.
///
/// # Complexity
/// O(events × (objects changed + evictions + flavor-resources)).
pub(crate) fn timeline_out(
    effects: &[TimelineEffect],
    usage_map: impl Fn(&[(u32, i64)]) -> UsageOut,
) -> Vec<TimelineOut> {
    effects
        .iter()
        .map(|e| TimelineOut {
            index: e.index,
            at_ms: e.at_ms,
            changes: e
                .changes
                .iter()
                .map(|(kind, name, change)| TimelineChangeOut {
                    kind: kind.clone(),
                    name: name.clone(),
                    change: (*change).to_owned(),
                })
                .collect(),
            admissions_stopped: e.admissions_stopped.clone(),
            admissions_resumed: e.admissions_resumed.clone(),
            evicted: e
                .evicted
                .iter()
                .map(|(workload, reason)| TimelineEvictionOut {
                    workload: workload.clone(),
                    reason: reason.clone(),
                })
                .collect(),
            terminating: e
                .terminating
                .iter()
                .map(|(cq, left)| TerminatingOut {
                    cluster_queue: cq.clone(),
                    left_ms: *left,
                })
                .collect(),
            capacity_before: usage_map(&e.capacity_before),
            capacity_after: usage_map(&e.capacity_after),
            nodes_down: e.nodes_down.clone(),
            nodes_drained: e.nodes_drained.clone(),
            drain_deadline_ms: e.drain_deadline_ms,
            nodes_up: e.nodes_up.clone(),
            devices_before: e.devices_before.iter().cloned().collect(),
            devices_after: e.devices_after.iter().cloned().collect(),
            mig_window: e.mig_window.as_ref().map(|w| MigWindowOut {
                node: w.node.clone(),
                config: w.config.clone(),
                opened_ms: w.opened_ms,
                closed_ms: w.closed_ms,
                waited: w.waited.clone(),
            }),
        })
        .collect()
}

/// One line per timeline event of `effects` (either engine's) for the table: when, what
/// changed, and its effect; a quota change written with `quota`.
pub(crate) fn timeline_lines(
    effects: &[TimelineEffect],
    start: Timestamp,
    quota: impl Fn(&[(u32, i64)]) -> String,
) -> Vec<String> {
    let mut lines = Vec::new();
    for e in effects {
        let mut parts: Vec<String> = e
            .changes
            .iter()
            .map(|(k, n, c)| format!("{k} {n} {c}"))
            .collect();
        parts.extend(e.nodes_down.iter().map(|n| format!("node {n} down")));
        parts.extend(e.nodes_drained.iter().map(|n| match e.drain_deadline_ms {
            Some(d) => format!(
                "node {n} drained (deadline {})",
                clock(start, e.at_ms.saturating_add(d))
            ),
            None => format!("node {n} drained"),
        }));
        parts.extend(e.nodes_up.iter().map(|n| format!("node {n} up")));
        if let Some(w) = &e.mig_window {
            parts.push(format!(
                "MIG window on node {} (config {}) {}",
                w.node,
                w.config,
                match w.closed_ms {
                    Some(c) => format!("closed at {}", clock(start, c)),
                    None => "still open at the end".to_owned(),
                }
            ));
        }
        if parts.is_empty() {
            parts.push("no object changed".to_owned());
        }
        let mut line = format!(
            "Timeline event {} at {}: {}.",
            e.index,
            clock(start, e.at_ms),
            parts.join(", ")
        );
        if !e.admissions_stopped.is_empty() {
            let _ = write!(
                line,
                " Admissions stopped: {}.",
                e.admissions_stopped.join(", ")
            );
        }
        if !e.admissions_resumed.is_empty() {
            let _ = write!(
                line,
                " Admissions resumed: {}.",
                e.admissions_resumed.join(", ")
            );
        }
        if !e.evicted.is_empty() {
            let _ = write!(line, " Evicted: {}.", {
                let v: Vec<String> = e
                    .evicted
                    .iter()
                    .map(|(w, r)| format!("{w} ({r})"))
                    .collect();
                v.join(", ")
            });
        }
        for (cq, left) in &e.terminating {
            let _ = match left {
                Some(t) => write!(line, " {cq} terminated until {}.", clock(start, *t)),
                None => write!(line, " {cq} still terminating at the end."),
            };
        }
        if e.capacity_before != e.capacity_after {
            let _ = write!(
                line,
                " Quota {} -> {}.",
                quota(&e.capacity_before),
                quota(&e.capacity_after)
            );
        }
        if let Some(w) = e.mig_window.as_ref().filter(|w| !w.waited.is_empty()) {
            let _ = write!(line, " The window waited for {}.", w.waited.join(", "));
        }
        if e.devices_before != e.devices_after {
            let show = |d: &[(String, i64)]| {
                let v: Vec<String> = d.iter().map(|(r, a)| format!("{r}={a}")).collect();
                v.join(", ")
            };
            let _ = write!(
                line,
                " Schedulable devices {} -> {}.",
                show(&e.devices_before),
                show(&e.devices_after)
            );
        }
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::requeue_waits;

    #[test]
    fn requeue_waits_run_from_each_eviction_to_the_next_start() {
        // run 0–1 h evicted, readmitted at 4 h (3 h), evicted at 5 h, readmitted at once,
        // evicted again at 6 h and never readmitted
        let h = 3_600_000;
        let runs = [(0, h, true), (4 * h, 5 * h, true), (5 * h, 6 * h, true)];
        assert_eq!(requeue_waits(&runs), vec![3 * h, 0]);
        // a finished run is no eviction
        assert_eq!(
            requeue_waits(&[(0, h, false), (2 * h, 3 * h, false)]),
            Vec::<i64>::new()
        );
    }
}
