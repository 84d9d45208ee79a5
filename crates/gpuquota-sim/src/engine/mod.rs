//! The event loops: Kueue (driving `gpuquota-cohort` incrementally) and ResourceQuota only.
//! Each is a per-run state with one method per phase of an instant; what both read and
//! write besides their own state is one context (the scenario, the world, the instances,
//! the warnings, the budgets and the progress).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use gpuquota_cohort::World;
use gpuquota_model::ResourceName;
use gpuquota_model::diag::{Code, Diagnostic, Diagnostics};

mod capacity;
mod kueue;
mod resource_quota;

pub(crate) use kueue::run_kueue;
pub(crate) use resource_quota::run_resource_quota;

use crate::scenario::{Engine, Instance, Scenario};

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

// event kinds, in their order at one instant
const COMPLETION: u8 = 0;
const ARRIVAL: u8 = 1;
const TICK: u8 = 2;
/// A budget is spent or renews ([`crate::budget`]).
const BUDGET: u8 = 3;
/// A workload held back after its second eviction at one instant goes back to its queue
/// (Kueue engine; see the crate docs, "Preemption loops").
const REQUEUE: u8 = 4;

pub(crate) type Event = Reverse<(i64, u8, u32, u32)>;

/// The arrivals known before the run, sorted once, beside the heap of the events the run
/// makes: a trace's 10⁵ arrivals then never sit in the heap, whose pops stay O(log running).
/// Both hold the same total order `(t, kind, wl, generation)` and an arrival is never in
/// both, so taking the smaller head of the two yields the heap's own sequence.
#[derive(Default)]
struct Arrivals {
    sorted: Vec<(i64, u8, u32, u32)>,
    next: usize,
}

impl Arrivals {
    /// The next event of the heap and the arrivals, and whether it is an arrival.
    fn peek(&self, heap: &BinaryHeap<Event>) -> Option<((i64, u8, u32, u32), bool)> {
        match (heap.peek(), self.sorted.get(self.next)) {
            (Some(Reverse(h)), Some(a)) if a < h => Some((*a, true)),
            (Some(Reverse(h)), _) => Some((*h, false)),
            (None, Some(a)) => Some((*a, true)),
            (None, None) => None,
        }
    }

    /// Removes the event [`Arrivals::peek`] returned.
    fn pop(&mut self, heap: &mut BinaryHeap<Event>, arrival: bool) {
        if arrival {
            self.next += 1;
        } else {
            heap.pop();
        }
    }
}

/// What an event loop reads and writes besides its own state: the scenario, the built
/// world, each workload's instance, and the run's warnings, budgets and progress.
pub(crate) struct Context<'a, 'p> {
    pub(crate) sc: &'a Scenario,
    pub(crate) world: &'a World,
    pub(crate) insts: &'a [Option<&'a Instance>],
    pub(crate) warnings: &'a mut Diagnostics,
    pub(crate) budgets: &'a mut Option<crate::budget::Budgets>,
    pub(crate) progress: &'a mut crate::progress::Reporter<'p>,
}

impl Context<'_, '_> {
    /// The run's end: `spec.end`, else the last event (`last_t`), with a warning when
    /// workloads still run then. Charges the budgets up to it and tells the progress.
    fn end_of_run(&mut self, running: bool, last_t: i64, events: u64) -> i64 {
        let end = self.sc.end_ms;
        if let Some(b) = self.budgets.as_mut() {
            b.advance(end.unwrap_or(last_t));
        }
        let end_ms = match end {
            Some(e) => e,
            None => {
                if running {
                    self.warnings.push(Diagnostic::warning(
                        NO_END,
                        "workloads without a gpuquota.dev/runtime run until spec.end, and the scenario has none: the run ends at the last event",
                    ));
                }
                last_t
            }
        };
        self.progress.finish(end_ms, events);
        end_ms
    }

    /// A workload's class and creation time as its outcome shows them.
    fn class_and_created(&self, wl: usize) -> (String, i64) {
        (
            self.insts[wl].map(|x| x.class.clone()).unwrap_or_default(),
            self.insts[wl].map_or(0, |x| x.created_ms),
        )
    }
}

/// The pending reason of a workload created at or after the simulation's end.
fn created_after_end() -> (String, String) {
    (
        "Pending".to_owned(),
        "created at or after the simulation's end".to_owned(),
    )
}

/// An engine's run at its end, as [`finish`] reads it to build the outcome.
pub(crate) trait Finish<'a, 'p> {
    /// The engine that ran.
    const ENGINE: Engine;
    /// The context shared with the other engine.
    fn cx(&mut self) -> &mut Context<'a, 'p>;
    /// Where the event loop stopped.
    fn end(&self) -> EndOfRun;
    /// Every workload's history, the runs still live cut at `end_ms`.
    fn workload_outcomes(&mut self, end_ms: i64) -> Vec<WorkloadOutcome>;
    /// Every queue's outcome.
    fn queue_outcomes(&self) -> Vec<QueueOutcome>;
}

/// Where an event loop stopped: what [`finish`] needs of it besides its outcomes.
#[derive(Clone, Debug)]
pub(crate) struct EndOfRun {
    /// Whether a workload still runs.
    pub(crate) running: bool,
    /// The time of the last event, ms since start.
    pub(crate) last_t: i64,
    /// The run's counters.
    pub(crate) counters: Counters,
    /// The victims held back after a second eviction at one instant.
    pub(crate) held_back: Vec<HeldBack>,
    /// The Nodes checked (0: none).
    pub(crate) nodes: u32,
}

/// The outcome of a run: its end ([`Context::end_of_run`]), then every workload's history
/// with the runs still live cut there, then every queue's outcome.
pub(crate) fn finish<'a, 'p: 'a, R: Finish<'a, 'p>>(mut run: R) -> Outcome {
    let mut end = run.end();
    let end_ms = run
        .cx()
        .end_of_run(end.running, end.last_t, end.counters.events);
    let workloads = run.workload_outcomes(end_ms);
    let held_back = std::mem::take(&mut end.held_back);
    Outcome {
        engine: R::ENGINE,
        end_ms,
        frs: flavor_resources(run.cx().world, R::ENGINE),
        workloads,
        queues: run.queue_outcomes(),
        warnings: Vec::new(),
        counters: end.counters,
        held_back,
        nodes: end.nodes,
    }
}

/// The flavor-resources the runs and queues of `engine` name: the world's under Kueue, one
/// pseudo-flavor `""` per resource under ResourceQuota.
pub(crate) fn flavor_resources(world: &World, engine: Engine) -> Vec<(String, ResourceName)> {
    match engine {
        Engine::ResourceQuota => world
            .resources
            .iter()
            .map(|r| (String::new(), r.clone()))
            .collect(),
        Engine::Kueue => world
            .frs
            .iter()
            .map(|&(f, r)| (world.flavors[f].name.clone(), world.resources[r].clone()))
            .collect(),
    }
}
