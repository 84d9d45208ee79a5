//! What a Kueue or ResourceQuota run produced ([`Outcome`]: every workload's runs, every
//! queue's quota, the counters) and the codes of the run's warnings. The runs themselves are
//! the simulator's one kernel driving the engine's driver (crate docs, "Kernel and drivers").

use gpuquota_model::ResourceName;
use gpuquota_model::diag::Code;

use crate::scenario::Engine;

/// The reason of a workload whose quota is reserved but whose pods find no free devices
/// (the kube-scheduler's `PodScheduled=False` reason).
pub const UNSCHEDULABLE: &str = "Unschedulable";
/// A workload without a runtime and no `spec.end`: it runs until the last event.
pub const NO_END: Code = Code::new("no-end");
/// A scheduling instant did not settle within its cycle bound.
pub const CYCLE_BOUND: Code = Code::new("cycle-bound");
/// The same preemptor preempted the same victim more than once ([`Outcome::held_back`],
/// [`crate::report::PreemptionLoopOut`]).
pub const PREEMPTION_LOOP: Code = Code::new("preemption-loop");

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEnd {
    /// Its runtime elapsed.
    Finished,
    /// Evicted by a preemption: upstream's reason and the preemptor's key.
    Preempted {
        /// `InClusterQueue`, `InCohortReclamation`, `InCohortReclaimWhileBorrowing`,
        /// `InCohortFairSharing`.
        reason: String,
        /// The preemptor (`namespace/name`).
        by: String,
    },
    /// Still running at the end.
    Cut,
}

impl RunEnd {
    /// `Finished`, `Preempted` or `Cut`.
    pub fn as_str(&self) -> &'static str {
        match self {
            RunEnd::Finished => "Finished",
            RunEnd::Preempted { .. } => "Preempted",
            RunEnd::Cut => "Cut",
        }
    }
}

/// One admission of a workload, from start to end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// When its quota was reserved (Kueue's admission; under `resourcequota`, its pods'
    /// creation), ms since start; before `start_ms` when its pods waited for free devices.
    pub reserved_ms: i64,
    /// When its pods ran (its runtime counts from here), ms since start; a run evicted
    /// while its pods waited has `start_ms == end_ms`.
    pub start_ms: i64,
    /// ms since start.
    pub end_ms: i64,
    /// How it ended.
    pub end: RunEnd,
    /// Usage charged: (index into [`Outcome::frs`], amount in Kueue units), sorted.
    pub usage: Vec<(u32, i64)>,
}

/// One workload's failed attempts and the Job controller's retries (Kueue runs with
/// `gpuquota.dev/fail-after`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FailureOutcome {
    /// Attempts that failed.
    pub failed_attempts: u32,
    /// The failed attempts the Job controller replaced (within `backoffLimit`).
    pub retries: u32,
    /// When the Job failed (its failures exceeded `backoffLimit`), ms; `None`: it did not.
    pub failed_ms: Option<i64>,
    /// The failed attempts' durations × the `nvidia.com/gpu` their runs held, GPU-ms.
    pub lost_gpu_ms: i64,
}

/// One workload's history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadOutcome {
    /// `namespace/name`.
    pub key: String,
    /// ClusterQueue (Kueue) or namespace (ResourceQuota); `""` when it has none.
    pub queue: String,
    /// Class.
    pub class: String,
    /// ms since start.
    pub created_ms: i64,
    /// Runs in time order.
    pub runs: Vec<Run>,
    /// Completion, ms since start.
    pub finished_ms: Option<i64>,
    /// Upstream's pending reason and message, when pending at the end.
    pub pending: Option<(String, String)>,
}

/// A queue's quota as the report shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueOutcome {
    /// Name.
    pub name: String,
    /// Nominal quota per flavor-resource (index into [`Outcome::frs`], amount).
    pub nominal: Vec<(u32, i64)>,
}

/// Counters of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counters {
    /// Events processed (arrivals, completions, retries, cycle ticks).
    pub events: u64,
    /// Scheduling cycles run.
    pub cycles: u64,
}

/// Everything a simulation produced; the report renders it.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The engine.
    pub engine: Engine,
    /// The end, ms since start.
    pub end_ms: i64,
    /// Flavor-resources named by runs and queues: (flavor, resource); the flavor is `""`
    /// under the `resourcequota` engine.
    pub frs: Vec<(String, ResourceName)>,
    /// Every workload, in key order.
    pub workloads: Vec<WorkloadOutcome>,
    /// Every queue, in name order.
    pub queues: Vec<QueueOutcome>,
    /// Warnings of the run (import, world and simulation), rendered.
    pub warnings: Vec<String>,
    /// Counters.
    pub counters: Counters,
    /// Evictions whose victim was held back to the next millisecond because it had already
    /// been evicted at that instant (Kueue engine): (victim, preemptor, instant in ms), in
    /// time order. Empty without a preemption loop.
    pub held_back: Vec<HeldBack>,
    /// The Nodes the run's devices were checked against; 0 when the cluster files have none
    /// (node capacity not checked: quotas are the only cap).
    pub nodes: u32,
    /// What each event of `spec.timeline` did, in the order they applied; empty without a
    /// timeline.
    pub timeline: Vec<TimelineEffect>,
    /// Every workload's failed attempts (`gpuquota.dev/fail-after`), by workload index;
    /// empty when no workload fails.
    pub failures: Vec<FailureOutcome>,
}

/// What one event of `spec.timeline` did to the run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TimelineEffect {
    /// The event's index in `spec.timeline`.
    pub index: usize,
    /// Its instant, ms since start.
    pub at_ms: i64,
    /// The objects created, replaced or deleted: (kind, key, `created` / `replaced` /
    /// `deleted`), in the order they changed.
    pub changes: Vec<(String, String, &'static str)>,
    /// The queues that stopped admitting at this event (ClusterQueue names and LocalQueue
    /// keys: `stopPolicy` became `Hold` or `HoldAndDrain`, or a ClusterQueue was deleted
    /// while it held admitted workloads), sorted.
    pub admissions_stopped: Vec<String>,
    /// The queues that admit again (`stopPolicy` back to `None` or unset), sorted.
    pub admissions_resumed: Vec<String>,
    /// The admitted workloads the event evicted: (workload key, upstream's reason), in
    /// workload order.
    pub evicted: Vec<(String, String)>,
    /// The deleted ClusterQueues kept while they held admitted workloads (upstream's
    /// finalizer), with the instant the last one ended and the queue left (ms; `None`: it
    /// was still there at the end).
    pub terminating: Vec<(String, Option<i64>)>,
    /// The nominal quota of every ClusterQueue summed per flavor-resource (index into
    /// [`Outcome::frs`]; the ResourceQuotas' hard caps under `resourcequota`) before and
    /// after the event, sorted; equal when the event changed no quota.
    pub capacity_before: Vec<(u32, i64)>,
    /// As `capacity_before`, after the event.
    pub capacity_after: Vec<(u32, i64)>,
    /// The nodes that failed at this event (`nodes.down`), in the event's order.
    pub nodes_down: Vec<String>,
    /// The nodes cordoned (`nodes.drain`), in the event's order.
    pub nodes_drained: Vec<String>,
    /// The drain deadline, ms after the event.
    pub drain_deadline_ms: Option<i64>,
    /// The nodes back (`nodes.up`), in the event's order.
    pub nodes_up: Vec<String>,
    /// The devices that take new pods (allocatable of the nodes neither failed, cordoned
    /// nor in a MIG window) per extended resource, before the event, sorted by resource;
    /// empty when the event has no node change or the cluster files no Nodes.
    pub devices_before: Vec<(String, i64)>,
    /// As `devices_before`, after the event.
    pub devices_after: Vec<(String, i64)>,
    /// The MIG maintenance window the event opened.
    pub mig_window: Option<MigWindowEffect>,
}

/// A MIG maintenance window of a timeline event (`migLayout`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MigWindowEffect {
    /// The node.
    pub node: String,
    /// The mig-parted config it was re-laid with.
    pub config: String,
    /// When the window opened (the event), ms since start.
    pub opened_ms: i64,
    /// When it closed (the node's devices idle, its new layout in place), ms; `None`: still
    /// open at the end.
    pub closed_ms: Option<i64>,
    /// The workloads it waited for (holding a device on the node when it opened), in
    /// workload order.
    pub waited: Vec<String>,
}

/// One eviction after which the simulator held the victim back to the next millisecond: it
/// had already been evicted at the same instant (a preemption loop; see the crate docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldBack {
    /// The victim (`namespace/name`).
    pub victim: String,
    /// Its preemptor (`namespace/name`).
    pub preemptor: String,
    /// The instant of the eviction, ms since start; the victim is back in its queue at
    /// `at_ms + 1`.
    pub at_ms: i64,
}
