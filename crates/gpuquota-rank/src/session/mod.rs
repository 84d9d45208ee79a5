//! One KAI scheduling session: allocate → consolidation → reclaim → preempt →
//! stalegangeviction, on a [`Cluster`] snapshot.
//!
//! Fair shares are computed once when the session opens (as the proportion plugin does in
//! `OnSessionOpen`) and stay fixed; allocations and evictions update the queues' allocated
//! amounts as decisions are committed. With no nodes, the session runs at quota level on one
//! virtual pool of [`Cluster::totals`].
//!
//! A job placed by an action that evicts victims (reclaim, preempt, consolidation) is
//! reported `pipelined`, even where it lands on idle resources: KAI's job solver allocates
//! the preemptor pipeline-only (`kai-scheduler/KAI-Scheduler:
//! pkg/scheduler/actions/common/solvers`, `AllocateJob(…, isPipelineOnly=true)`), so it binds
//! once its victims are gone (allocate test "interactive after train when over-quota").
//!
//! The code follows upstream's `pkg/scheduler/actions` layout, one file per action
//! (`allocate`, `consolidate`, `reclaim`, `preempt`, `stale` for stalegangeviction) plus
//! the shared parts: `place` (node placement), `order` (job and queue order), `victims`
//! (victim generation and the smallest-victim-set search, KAI's solvers), `capacity` (the
//! queue accounting and the proportion plugin's capacity policy) and `pending` (reasons);
//! this file holds the engine state, the session's entry points and the memo.
//!
//! Amounts are [`PerResource`] values and every sum, difference and product of them goes
//! through the checked helpers of `amount` (an overflow ends the session with
//! [`SessionError::Overflow`]). Queues, jobs, pods and nodes are named by their typed ids
//! ([`crate::ids`]) wherever they cross this module's boundary (the tree's API, the kept
//! state, placement records, capacity failures, memo keys). Inside the session every table
//! is indexed by its own kind of id, so a position of one kind cannot index another kind's
//! table: node state by [`NodeId`] ([`IdVec`]); queue allocations, fair shares and the
//! per-leaf job lists by [`QueueId`] ([`PerQueue`]); the per-job tables (evicted jobs,
//! failures, allocation indices, delays, pick requests) by [`JobId`] ([`PerJob`]); the
//! per-pod tables (pod states, placement records) by the pair of a [`JobId`] and a
//! [`TaskId`]. Job lists, victim lists, gangs and memo entries hold [`JobId`]s and
//! [`TaskId`]s. Only [`Cluster::jobs`], [`Cluster::nodes`] and each job's pod list (the
//! snapshot's public `Vec`s) are read by position, each through one helper.

use std::cell::Cell;
use std::cmp::Ordering;

use crate::division::{Division, DivisionError, DivisionOptions, Resource};
use crate::fixed::{SCALE, cmp_products, format_decimal};
use crate::ids::{IdVec, JobId, NodeId, PerJob, PerQueue, PerResource, QueueId, TaskId};
use crate::snapshot::{Cluster, DEFAULT_STALENESS_GRACE_NANOS, TaskStatus};
use crate::snapshot::{Job, NodeInfo, Task};

/// GPU, CPU and memory amounts (nano-units).
type Amt = PerResource<i128>;

const GPU: Resource = Resource::Gpu;

use amount::*;
use capacity::{CapFail, unl_le};

mod allocate;
mod amount;
mod capacity;
mod consolidate;
mod cover;
mod fit;
mod order;
mod pending;
mod place;
mod preempt;
mod reclaim;
mod stale;
#[cfg(test)]
mod tests;
mod victims;

/// Node scoring strategy (upstream `pkg/scheduler/plugins/nodeplacement`), for GPUs and CPU alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Placement {
    /// Fullest node (and most used GPU) first — KAI's default.
    #[default]
    Binpack,
    /// Emptiest node (and least used GPU) first.
    Spread,
}

/// Session settings (upstream defaults).
///
/// Build them with [`SessionOptions::default`] and the `with_*` methods: fields may be added
/// in later versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionOptions {
    /// Division options (mode, kValue).
    pub division: DivisionOptions,
    /// Node placement.
    pub placement: Placement,
    /// `max-consolidation-preemptees` (16).
    pub max_consolidation_preemptees: usize,
    /// `default-staleness-grace-period` (60 s), nanoseconds; negative = never.
    pub default_staleness_grace: i128,
    /// `reclaimerSaturationMultiplier` in nano (10⁹ = 1.0; values below 1 count as 1).
    pub reclaimer_saturation_multiplier: i128,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            division: DivisionOptions::default(),
            placement: Placement::Binpack,
            max_consolidation_preemptees: 16,
            default_staleness_grace: DEFAULT_STALENESS_GRACE_NANOS,
            reclaimer_saturation_multiplier: SCALE,
        }
    }
}

impl SessionOptions {
    /// Sets [`SessionOptions::division`].
    pub fn with_division(mut self, division: DivisionOptions) -> SessionOptions {
        self.division = division;
        self
    }

    /// Sets [`SessionOptions::placement`].
    pub fn with_placement(mut self, placement: Placement) -> SessionOptions {
        self.placement = placement;
        self
    }

    /// Sets [`SessionOptions::max_consolidation_preemptees`].
    pub fn with_max_consolidation_preemptees(mut self, n: usize) -> SessionOptions {
        self.max_consolidation_preemptees = n;
        self
    }

    /// Sets [`SessionOptions::default_staleness_grace`] (nanoseconds; negative = never).
    pub fn with_default_staleness_grace(mut self, nanos: i128) -> SessionOptions {
        self.default_staleness_grace = nanos;
        self
    }

    /// Sets [`SessionOptions::reclaimer_saturation_multiplier`] (nano-units).
    pub fn with_reclaimer_saturation_multiplier(mut self, nano: i128) -> SessionOptions {
        self.reclaimer_saturation_multiplier = nano;
        self
    }
}

/// The action that evicted a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Action {
    /// Cross-queue reclaim.
    Reclaim,
    /// In-queue preemption by priority.
    Preempt,
    /// Moved to defragment.
    Consolidation,
    /// Stale gang eviction.
    StaleGang,
}

impl Action {
    /// The contract's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Reclaim => "reclaim",
            Action::Preempt => "preempt",
            Action::Consolidation => "consolidation",
            Action::StaleGang => "stalegang",
        }
    }
}

/// Upstream's unschedulable reasons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reason {
    /// A non-preemptible job would exceed deserved quota at some level.
    NonPreemptibleOverQuota,
    /// A limit would be exceeded at some level.
    OverLimit,
    /// The job's queue does not exist (or is not a leaf).
    QueueDoesNotExist,
    /// The job may not reclaim/preempt yet.
    PreemptionDelayNotElapsed,
    /// No placement, reclaim or preemption found room for the gang.
    Unschedulable,
}

impl Reason {
    /// Upstream's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::NonPreemptibleOverQuota => "NonPreemptibleOverQuota",
            Reason::OverLimit => "OverLimit",
            Reason::QueueDoesNotExist => "QueueDoesNotExist",
            Reason::PreemptionDelayNotElapsed => "PreemptionDelayNotElapsed",
            Reason::Unschedulable => "Unschedulable",
        }
    }
}

/// Quota numbers behind a reason, at the queue level where the check failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuotaDetails {
    /// The queue where the check failed (the leaf or an ancestor).
    pub queue: String,
    /// The resource.
    pub resource: Resource,
    /// Deserved (`None` = unlimited), nano-units.
    pub deserved: Option<i128>,
    /// Used: allocated (non-preemptible allocated for `NonPreemptibleOverQuota`), nano-units.
    pub used: i128,
    /// Requested by the job, nano-units.
    pub requested: i128,
    /// Limit (`None` = unlimited), nano-units.
    pub limit: Option<i128>,
    /// Fair share, nano-units.
    pub fair_share: i128,
}

/// A job that got pods placed in this session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allocation {
    /// `ns/name` of the PodGroup.
    pub pod_group: String,
    /// Queue.
    pub queue: String,
    /// Placed onto resources still being freed by evictions.
    pub pipelined: bool,
    /// `(pod, node)`; node `None` at quota level.
    pub pods: Vec<(String, Option<String>)>,
}

/// An evicted job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Eviction {
    /// `ns/name` of the PodGroup.
    pub pod_group: String,
    /// Queue.
    pub queue: String,
    /// The action.
    pub action: Action,
    /// The job the eviction made room for (`None` for stale gangs).
    pub by: Option<String>,
}

/// A job still pending after the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    /// `ns/name` of the PodGroup.
    pub pod_group: String,
    /// Queue as written.
    pub queue: String,
    /// Upstream's reason.
    pub reason: Reason,
    /// A plain sentence with the numbers.
    pub message: String,
    /// The quota numbers, when a quota check failed.
    pub details: Option<QuotaDetails>,
}

/// The session's decisions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionResult {
    /// Allocations in decision order.
    pub allocated: Vec<Allocation>,
    /// Evictions in decision order.
    pub evicted: Vec<Eviction>,
    /// Jobs with pending pods left, in PodGroup key order.
    pub pending: Vec<Pending>,
    /// The fair shares the session used.
    pub division: Division,
}

/// Why a session produced no result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The fair-share division refused the tree.
    #[error(transparent)]
    Division(#[from] DivisionError),
    /// An amount the session adds up (a node's free capacity, a queue's allocation)
    /// overflowed.
    #[error("session: an allocated or free amount overflows (requests too large)")]
    Overflow,
}

/// Victim units: `(job, pods)`.
type Units = [(JobId, Vec<TaskId>)];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TState {
    Pending,
    Running,
    /// Placed this session (`true` = pipelined).
    Placed(bool),
    Releasing,
    /// Deleted long ago and still holding its resources: never released and never evicted
    /// (its job's running pods still can be).
    Stuck,
    Other,
}

#[derive(Debug, Clone, Default)]
struct PlaceRec {
    node: Option<NodeId>,
    /// `(device, from_idle, from_releasing)`.
    devs: Vec<(usize, i128, i128)>,
    /// CPU, memory (and GPU at pool level in slot 0): `(from_idle, from_releasing)`.
    take: PerResource<(i128, i128)>,
    /// MIG instances: `(profile, from_idle, from_releasing)`.
    mig: Vec<(usize, i64, i64)>,
}

impl PlaceRec {
    fn pipelined(&self) -> bool {
        self.take.0.iter().any(|t| t.1 > 0)
            || self.devs.iter().any(|d| d.2 > 0)
            || self.mig.iter().any(|m| m.2 > 0)
    }
}

/// One row per job, one value per pod of the job, in a single allocation: row `j` is
/// `data[offs[j]..offs[j + 1]]` (a session opens with O(1) allocations for them instead of
/// one per job, and a copy of the whole is one allocation). A row is indexed by its
/// [`JobId`], one pod's value by `(JobId, TaskId)`.
#[derive(Debug, Clone)]
struct Jagged<T> {
    offs: Vec<usize>,
    data: Vec<T>,
}

impl<T: Clone> Jagged<T> {
    /// A row of `fill` per job of `c`, as long as the job's pod list.
    ///
    /// # Complexity
    /// O(J + T) for J jobs of T pods in all.
    fn new(c: &Cluster, fill: T) -> Jagged<T> {
        let mut offs = Vec::with_capacity(c.jobs.len() + 1);
        offs.push(0);
        let mut n = 0usize;
        for j in &c.jobs {
            n += j.tasks.len();
            offs.push(n);
        }
        Jagged {
            offs,
            data: vec![fill; n],
        }
    }
}

impl<T: Clone> Jagged<T> {
    /// Inserts a row of `len` copies of `fill` before row `j`.
    ///
    /// # Complexity
    /// O(J + T) (the rows after it move).
    fn insert_row(&mut self, j: JobId, len: usize, fill: T) {
        let j = j.index();
        let start = self.offs[j];
        self.data
            .splice(start..start, std::iter::repeat_n(fill, len));
        self.offs.insert(j, start);
        for o in &mut self.offs[j + 1..] {
            *o += len;
        }
    }

    /// Removes row `j`.
    ///
    /// # Complexity
    /// O(J + T) (the rows after it move).
    fn remove_row(&mut self, j: JobId) {
        let j = j.index();
        let (start, end) = (self.offs[j], self.offs[j + 1]);
        self.data.drain(start..end);
        self.offs.remove(j);
        for o in &mut self.offs[j..] {
            *o -= end - start;
        }
    }
}

impl<T> std::ops::Index<JobId> for Jagged<T> {
    type Output = [T];
    #[inline]
    fn index(&self, j: JobId) -> &[T] {
        let j = j.index();
        &self.data[self.offs[j]..self.offs[j + 1]]
    }
}

impl<T> std::ops::IndexMut<JobId> for Jagged<T> {
    #[inline]
    fn index_mut(&mut self, j: JobId) -> &mut [T] {
        let j = j.index();
        &mut self.data[self.offs[j]..self.offs[j + 1]]
    }
}

impl<T> std::ops::Index<(JobId, TaskId)> for Jagged<T> {
    type Output = T;
    /// Pod `t` of job `j` (a pod beyond the job's row is out of range, never another
    /// job's pod).
    #[inline]
    fn index(&self, (j, t): (JobId, TaskId)) -> &T {
        &self[j][t.index()]
    }
}

impl<T> std::ops::IndexMut<(JobId, TaskId)> for Jagged<T> {
    #[inline]
    fn index_mut(&mut self, (j, t): (JobId, TaskId)) -> &mut T {
        &mut self[j][t.index()]
    }
}

#[derive(Debug, Clone)]
struct NodeState {
    idle: Amt,
    rel: Amt,
    /// Per device: (used, releasing).
    devs: Vec<(i128, i128)>,
    /// Per MIG profile: (idle, releasing) instances.
    mig: Vec<(i64, i64)>,
}

/// The engine state a session opens with: every pod's state and placement, and the nodes'
/// and queues' accounting. [`Engine::new`] builds it from a [`Cluster`]; a
/// [`crate::live::LiveCluster`] keeps it across sessions ([`run_kept`]), updated by the
/// applied decisions and by its jobs' arrivals and departures, instead of rebuilding it.
///
/// A kept state equals the one [`Engine::new`] builds from the same cluster in every amount
/// (queue allocations, each node's idle CPU, memory, GPUs, MIG instances and used GPU
/// devices) except which of a node's whole GPU devices a pod holds. No decision reads that:
/// devices with the same use are interchangeable (whole GPUs are counted, and a pod's
/// devices are found through its own record). Fractional GPUs do read it (they pack onto
/// the most used device), so a cluster with a fractional pod is never kept; neither is one
/// whose running pods overcommit a node.
#[derive(Debug, Clone)]
pub(crate) struct Kept {
    alloc: PerQueue<Amt>,
    alloc_np: PerQueue<Amt>,
    nodes: IdVec<NodeId, NodeState>,
    pool: NodeState,
    tstate: Jagged<TState>,
    place: Jagged<PlaceRec>,
    /// The nodes' change log and the pods' last node searches.
    fit: fit::FitIndex,
}

impl Kept {
    /// Adds job `j` (all pods pending) before row `at`, as the cluster's job list does.
    ///
    /// # Complexity
    /// O(J + T).
    pub(crate) fn insert_job(&mut self, at: JobId, pods: usize) {
        self.tstate.insert_row(at, pods, TState::Pending);
        self.place.insert_row(at, pods, PlaceRec::default());
        self.fit.insert_job(at, pods);
    }

    /// Removes the job at row `ji` of `c` (still in `c`), freeing its running pods.
    ///
    /// # Complexity
    /// O(J + T) to remove the row, plus O(d + G) per running pod (d queue levels, G GPU
    /// devices it holds).
    pub(crate) fn remove_job(&mut self, c: &Cluster, ji: JobId) -> Result<(), SessionError> {
        for ti in task_ids(job_info(c, ji)) {
            self.vacate(c, ji, ti)?;
        }
        self.tstate.remove_row(ji);
        self.place.remove_row(ji);
        self.fit.remove_job(ji);
        Ok(())
    }

    /// Makes pod `ti` of job `ji` pending; a running pod's resources are free again.
    fn vacate(&mut self, c: &Cluster, ji: JobId, ti: TaskId) -> Result<(), SessionError> {
        if self.tstate[(ji, ti)] != TState::Running {
            self.tstate[(ji, ti)] = TState::Pending;
            return Ok(());
        }
        let j = job_info(c, ji);
        let t = task_of(j, ti);
        let rec = std::mem::take(&mut self.place[(ji, ti)]);
        self.tstate[(ji, ti)] = TState::Pending;
        let mut cur = j.queue;
        while let Some(q) = cur {
            self.alloc[q] = sub_checked(self.alloc[q], t.req)?;
            if !j.preemptible {
                self.alloc_np[q] = sub_checked(self.alloc_np[q], t.req)?;
            }
            cur = c.hierarchy.queue(q).parent;
        }
        let ns = match rec.node {
            Some(n) => {
                self.fit.changed(n, self.nodes.len());
                &mut self.nodes[n]
            }
            None => &mut self.pool,
        };
        for r in Resource::ALL {
            ns.idle[r] = ns.idle[r]
                .checked_add(rec.take[r].0)
                .ok_or(SessionError::Overflow)?;
        }
        for &(i, used, _) in &rec.devs {
            ns.devs[i].0 = ns.devs[i]
                .0
                .checked_sub(used)
                .ok_or(SessionError::Overflow)?;
        }
        for &(p, count, _) in &rec.mig {
            ns.mig[p].0 = ns.mig[p]
                .0
                .checked_add(count)
                .ok_or(SessionError::Overflow)?;
        }
        Ok(())
    }

    /// Sets the pods `(job, pod)` pending → hidden (`hide`) or back.
    pub(crate) fn hide(&mut self, pods: &[(JobId, TaskId)], hide: bool) {
        let (from, to) = if hide {
            (TState::Pending, TState::Other)
        } else {
            (TState::Other, TState::Pending)
        };
        for &pod in pods {
            if self.tstate[pod] == from {
                self.tstate[pod] = to;
            }
        }
    }

    /// Allocated resources per queue (a parent holds its subtree), nano-units.
    pub(crate) fn queue_allocated(&self) -> crate::ids::PerQueue<Amt> {
        self.alloc.clone()
    }
}

/// Undo state of the probes that try a placement and take it back
/// ([`Engine::begin_probe`]).
#[derive(Debug, Default)]
struct Probe {
    /// Nesting depth (0: no probe).
    depth: u32,
    /// Per node, and the pool in the last slot: the depth it was last copied at.
    saved_at: Vec<u32>,
    /// `(slot, previous saved_at, copy before the change)`, newest last.
    log: Vec<(usize, u32, NodeState)>,
    /// Where each open probe's entries start in `log`.
    starts: Vec<usize>,
}

/// What [`Engine::next_pick`] keeps from one pick to the next within an action.
#[derive(Debug, Default)]
struct PickState {
    /// The last pick: leaf, epoch and the request its job weighed.
    last: Option<(QueueId, u64, Amt)>,
    /// The epoch `best` holds.
    epoch: u64,
    /// Per inner queue, the best (leaf, job) of its subtree at `epoch` (`None`: not known).
    best: PerQueue<Option<Option<(QueueId, JobId)>>>,
}

/// Lazy victim generation state: a cursor into each victim queue's job list and the
/// allocation left in each once the victims so far are gone.
#[derive(Debug, Default)]
struct VictimGen {
    cursors: Vec<usize>,
    sim: Vec<Amt>,
}

struct Engine<'a> {
    c: &'a Cluster,
    /// Set when an amount overflowed (the amount then saturates); the session reports
    /// [`SessionError::Overflow`].
    overflow: &'a Cell<bool>,
    /// `(node, runai-gpu-group)` → device, for running fractions at session open.
    gpu_groups: std::collections::BTreeMap<(NodeId, String), usize>,
    o: SessionOptions,
    fs: PerQueue<Amt>,
    alloc: PerQueue<Amt>,
    alloc_np: PerQueue<Amt>,
    nodes: IdVec<NodeId, NodeState>,
    pool: NodeState,
    tstate: Jagged<TState>,
    place: Jagged<PlaceRec>,
    /// Jobs evicted this session (no longer victims, not stale candidates).
    evicted_job: PerJob<bool>,
    allocated: Vec<Allocation>,
    evicted: Vec<Eviction>,
    /// `(job, action, by)` already recorded.
    evicted_keys: std::collections::BTreeSet<(JobId, Action, Option<String>)>,
    /// Index into `allocated` per job.
    alloc_idx: PerJob<Option<usize>>,
    /// Last failure reason per job.
    fail: PerJob<Option<FailRec>>,
    /// Jobs whose preemption delay had not elapsed when reclaim or preempt picked them.
    delayed: PerJob<bool>,
    /// Bumped by every committed placement ([`Engine::commit_placed`]) and eviction
    /// ([`Engine::evict`]): the state the memo's outcomes were computed on.
    epoch: u64,
    /// Number of [`Engine::set_fail`] calls so far (tells whether a step recorded a failure).
    fail_writes: u64,
    /// Outcomes of steps that changed nothing, for pending jobs of one shape.
    memo: std::collections::BTreeMap<MemoKey, MemoEntry>,
    /// Every candidate job of the session (a queue, a pending pod, not evicted) in job
    /// order, with the [`Engine::epoch`] it was sorted at ([`Engine::leaf_lists`]).
    order: Option<(u64, std::rc::Rc<Vec<JobId>>)>,
    /// Per job, the [`Engine::epoch`] its pods last changed state at by a commit or an
    /// eviction (0: not in this session).
    touched: PerJob<u64>,
    /// Number of outcomes written to the memo so far (tells whether a step was replayed).
    memo_inserts: u64,
    /// Per job, the request of the pods a queue pick weighs it by, with the epoch it was
    /// summed at (a job's pods change state only when the epoch moves).
    pick_req: std::cell::RefCell<PerJob<Option<(u64, Amt)>>>,
    /// Replay memoized steps and repeated picks, and search only the nodes the feasibility
    /// index leaves (always on; off only in the test that checks they change no decision).
    shortcuts: bool,
    /// Undo state of the placement probes.
    probe: Probe,
    /// The nodes' change log and the pods' last node searches.
    fit: fit::FitIndex,
    /// Consolidation's free capacity and free device GPUs, with the epoch they were summed
    /// at.
    cons_free: Option<(u64, Amt, i128)>,
    /// Consolidation's candidates in victim order, with the epoch they were sorted at.
    cons_cands: Option<(u64, std::rc::Rc<Vec<JobId>>)>,
    /// False once the open state cannot be kept ([`Kept`]): a fractional pod, an
    /// overcommitted node.
    keepable: bool,
    /// Whether pod `(job, pod)` passed some node's feasibility test at an epoch, outside a
    /// probe ([`Engine::fits_with`]): `(epoch, job, pod, passed)`.
    fit_now: Option<(u64, JobId, TaskId, bool)>,
}

/// A recorded failure: reason, the quota check that failed, the message.
type FailRec = (Reason, Option<CapFail>, String);

/// The action steps whose outcome for a job is memoized.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    Allocate,
    Consolidate,
    Reclaim,
    Preempt,
}

/// A cheap prefix of a job's shape: step, leaf, priority, preemptible, minMember, pod
/// count and the first pod's request. Jobs with equal keys are compared in full
/// ([`Engine::same_shape`]) before an outcome is reused.
type MemoKey = (Step, QueueId, i32, bool, usize, usize, Amt);

/// A step's outcome for one job: nothing changed, and the failure it recorded, if any.
#[derive(Debug, Clone)]
struct MemoEntry {
    /// The job it was computed for.
    job: JobId,
    /// The [`Engine::epoch`] it was computed at.
    epoch: u64,
    /// The failure the step recorded (`None`: it recorded none).
    fail: Option<FailRec>,
}

/// Runs one session.
///
/// # Errors
/// [`SessionError::Division`] when the fair-share division fails (overflow);
/// [`SessionError::Overflow`] when an amount the session adds up leaves `i128` (an
/// overcommitted input with huge requests); nothing is returned then.
///
/// # Complexity
/// Division as in [`crate::Hierarchy::divide`]; opening the session is O(J + T + N · G) for
/// J jobs of T pods and N nodes of G GPUs, with O(N + T) allocations. Each pending job costs
/// one hierarchical queue pick (O(Q)) plus its placement (O(N · G) per pod); each reclaim or
/// preempt attempt sorts its victims (O(V log V)) and probes O(log V) prefixes. A pending job
/// shaped like one already tried while nothing was committed costs O(log M + P) per action
/// instead (a memoized failure, M memo entries, P pods) and, when it is the next job of the
/// same leaf with the same request, no tree walk for its pick. The victim lists (O(R log R)
/// for R running jobs) are built only when some job reaches the victim search.
pub(crate) fn run_session(
    c: &Cluster,
    options: &SessionOptions,
) -> Result<SessionResult, SessionError> {
    run(c, options, true)
}

/// [`run_session`], with the memo and repeated picks on or off.
fn run(
    c: &Cluster,
    options: &SessionOptions,
    shortcuts: bool,
) -> Result<SessionResult, SessionError> {
    run_with(c, options, shortcuts, None, false).0
}

/// [`run_session`] opening on `kept` (a state kept from the previous session of the same
/// cluster, see [`Kept`]) instead of building the open state, and returning the state the
/// next session opens with once the decisions are applied (`None`: build it again).
///
/// # Complexity
/// As [`run_session`] without opening the session: O(J) for J jobs instead of
/// O(J + T + N · G), plus [`Engine::into_kept`].
pub(crate) fn run_kept(
    c: &Cluster,
    options: &SessionOptions,
    kept: Option<Kept>,
) -> (Result<SessionResult, SessionError>, Option<Kept>) {
    run_with(c, options, true, kept, true)
}

fn run_with(
    c: &Cluster,
    options: &SessionOptions,
    shortcuts: bool,
    kept: Option<Kept>,
    keep: bool,
) -> (Result<SessionResult, SessionError>, Option<Kept>) {
    let division = match c.hierarchy.divide(c.totals, &options.division) {
        Ok(d) => d,
        // Nothing ran: the kept state still describes the cluster.
        Err(e) => return (Err(e.into()), kept),
    };
    let overflow = Cell::new(false);
    let fs = division.fair_share.clone();
    let mut e = match kept {
        Some(k) => Engine::with_state(c, *options, fs, &overflow, k),
        None => Engine::new(c, *options, fs, &overflow),
    };
    e.shortcuts = shortcuts;
    e.allocate();
    if !c.nodes.is_empty() {
        e.consolidate();
    }
    e.reclaim();
    e.preempt();
    e.stale_gangs();
    let pending = e.pending();
    if overflow.get() {
        return (Err(SessionError::Overflow), None);
    }
    let allocated = std::mem::take(&mut e.allocated);
    let evicted = std::mem::take(&mut e.evicted);
    let next = if keep { e.into_kept() } else { None };
    (
        Ok(SessionResult {
            allocated,
            evicted,
            pending,
            division,
        }),
        next,
    )
}

fn ratio(a: i128, b: i128) -> f64 {
    if b == 0 {
        if a > 0 { f64::INFINITY } else { 0.0 }
    } else {
        a as f64 / b as f64
    }
}

impl<'a> Engine<'a> {
    /// The engine on the open state built from `c`.
    ///
    /// # Complexity
    /// O(J + T + N · G) for J jobs of T pods and N nodes of G GPUs.
    pub(super) fn new(
        c: &'a Cluster,
        o: SessionOptions,
        fs: PerQueue<Amt>,
        overflow: &'a Cell<bool>,
    ) -> Engine<'a> {
        let nq = c.hierarchy.queues().len();
        let open = Kept {
            alloc: PerQueue::filled(Amt::ZERO, nq),
            alloc_np: PerQueue::filled(Amt::ZERO, nq),
            nodes: c
                .nodes
                .iter()
                .map(|n| NodeState {
                    idle: n.allocatable,
                    rel: Amt::ZERO,
                    devs: vec![(0, 0); n.gpus],
                    mig: n.mig.iter().map(|&c| (c, 0)).collect(),
                })
                .collect(),
            pool: NodeState {
                idle: c.totals,
                rel: Amt::ZERO,
                devs: Vec::new(),
                mig: Vec::new(),
            },
            tstate: Jagged::new(c, TState::Other),
            place: Jagged::new(c, PlaceRec::default()),
            fit: fit::FitIndex::new(c),
        };
        let mut e = Engine::with_state(c, o, fs, overflow, open);
        for (ji, j) in jobs_enumerated(c) {
            for (ti, t) in tasks_enumerated(j) {
                let s = match t.status {
                    TaskStatus::Pending => TState::Pending,
                    TaskStatus::Running => TState::Running,
                    TaskStatus::Releasing => TState::Releasing,
                    TaskStatus::StuckInReleasing => TState::Stuck,
                    _ => TState::Other,
                };
                // Kept states hold pending and running pods only, and no fraction.
                if t.fractional || matches!(s, TState::Releasing | TState::Stuck) {
                    e.keepable = false;
                }
                let mut rec = PlaceRec::default();
                if matches!(s, TState::Running | TState::Releasing | TState::Stuck) {
                    rec = e.occupy(t);
                }
                if s == TState::Running
                    && let Some(q) = j.queue
                {
                    e.account(q, t.req, !j.preemptible, true);
                }
                e.tstate[(ji, ti)] = s;
                e.place[(ji, ti)] = rec;
            }
            // Pods being deleted at session open: their resources are being freed.
            for (ti, t) in tasks_enumerated(j) {
                if t.status == TaskStatus::Releasing {
                    e.release(ji, ti);
                }
            }
        }
        e
    }

    /// The engine on an open state (built by [`Engine::new`] or kept), with fresh
    /// per-session records.
    ///
    /// # Complexity
    /// O(J) for J jobs.
    fn with_state(
        c: &'a Cluster,
        o: SessionOptions,
        fs: PerQueue<Amt>,
        overflow: &'a Cell<bool>,
        open: Kept,
    ) -> Engine<'a> {
        Engine {
            c,
            overflow,
            gpu_groups: std::collections::BTreeMap::new(),
            o,
            fs,
            alloc: open.alloc,
            alloc_np: open.alloc_np,
            nodes: open.nodes,
            pool: open.pool,
            tstate: open.tstate,
            place: open.place,
            evicted_job: PerJob::filled(false, c.jobs.len()),
            allocated: Vec::new(),
            evicted: Vec::new(),
            evicted_keys: std::collections::BTreeSet::new(),
            alloc_idx: PerJob::filled(None, c.jobs.len()),
            fail: PerJob::filled(None, c.jobs.len()),
            delayed: PerJob::filled(false, c.jobs.len()),
            epoch: 0,
            fail_writes: 0,
            memo: std::collections::BTreeMap::new(),
            memo_inserts: 0,
            order: None,
            touched: PerJob::filled(0, c.jobs.len()),
            pick_req: std::cell::RefCell::new(PerJob::filled(None, c.jobs.len())),
            shortcuts: true,
            probe: Probe::default(),
            fit: open.fit,
            cons_free: None,
            cons_cands: None,
            keepable: true,
            fit_now: None,
        }
    }

    /// The state the next session opens with once the cluster has applied this session's
    /// decisions as [`crate::live::LiveCluster`] does: an evicted job's pods are all
    /// pending (its controller recreates them) except those placed in this session, which
    /// run where they were placed, as every other placed pod does; what was being released
    /// is free. `None` when the state cannot be kept ([`Kept`]) or an amount overflows.
    ///
    /// # Complexity
    /// O(N · (G + M)) for N nodes of G devices and M MIG profiles, plus O(P) for the P pods
    /// of the jobs this session placed or evicted.
    fn into_kept(mut self) -> Option<Kept> {
        if !self.keepable || self.overflow.get() {
            return None;
        }
        let c = self.c;
        let evicted: std::collections::BTreeSet<JobId> =
            self.evicted_keys.iter().map(|k| k.0).collect();
        for &ji in &evicted {
            let j = job_info(c, ji);
            for (ti, t) in tasks_enumerated(j) {
                if self.tstate[(ji, ti)] == TState::Running {
                    if let Some(q) = j.queue {
                        self.account(q, t.req, !j.preemptible, false);
                    }
                    self.release(ji, ti);
                }
            }
        }
        let placed = self
            .alloc_idx
            .ids()
            .filter(|&ji| self.alloc_idx[ji].is_some());
        let touched: std::collections::BTreeSet<JobId> =
            evicted.iter().copied().chain(placed).collect();
        for ji in touched {
            for ti in task_ids(job_info(c, ji)) {
                match self.tstate[(ji, ti)] {
                    TState::Placed(_) => {
                        self.tstate[(ji, ti)] = TState::Running;
                        settle_rec(&mut self.place[(ji, ti)])?;
                    }
                    TState::Releasing => {
                        self.tstate[(ji, ti)] = TState::Pending;
                        self.place[(ji, ti)] = PlaceRec::default();
                    }
                    _ => {}
                }
            }
        }
        let count = self.nodes.len();
        for (n, ns) in self.nodes.iter_enumerated_mut() {
            if settle(ns, node_info(c, n).allocatable[GPU])? {
                self.fit.changed(n, count);
            }
        }
        settle(&mut self.pool, 0)?;
        if self.overflow.get() {
            return None;
        }
        Some(Kept {
            alloc: self.alloc,
            alloc_np: self.alloc_np,
            nodes: self.nodes,
            pool: self.pool,
            tstate: self.tstate,
            place: self.place,
            fit: self.fit,
        })
    }

    /// Job `ji` of the cluster.
    #[inline]
    pub(super) fn job(&self, ji: JobId) -> &'a Job {
        job_info(self.c, ji)
    }

    /// Pod `ti` of job `ji`.
    #[inline]
    pub(super) fn task(&self, ji: JobId, ti: TaskId) -> &'a Task {
        task_of(self.job(ji), ti)
    }

    /// The ids of every job of the cluster, in input order.
    pub(super) fn job_ids(&self) -> impl DoubleEndedIterator<Item = JobId> + use<> {
        (0..self.c.jobs.len()).map(JobId::new)
    }

    pub(super) fn set_fail(
        &mut self,
        ji: JobId,
        reason: Reason,
        cap: Option<CapFail>,
        msg: String,
    ) {
        self.fail_writes += 1;
        self.fail[ji] = Some((reason, cap, msg));
    }

    /// The memo key of job `ji` for `step`, `None` unless every pod of the job is pending
    /// (a job with running or placed pods has a state of its own).
    fn memo_key(&self, step: Step, ji: JobId) -> Option<MemoKey> {
        let j = self.job(ji);
        let q = j.queue?;
        if !self.tstate[ji].iter().all(|s| *s == TState::Pending) {
            return None;
        }
        let first = j.tasks.first().map_or(Amt::ZERO, |t| t.req);
        Some((
            step,
            q,
            j.priority,
            j.preemptible,
            j.min_member,
            j.tasks.len(),
            first,
        ))
    }

    /// True when jobs `a` and `b` are alike in everything a step reads of a job whose pods
    /// are all pending: queue, priority, preemptibility, minMember and every pod's request,
    /// fraction, MIG instances, node selector and tolerations. Name, UID, creation time and
    /// preemption delay are not read by a step (the delay is checked before it, the rest only
    /// orders jobs or names the job in a decision, and a decision bumps the epoch).
    fn same_shape(&self, a: JobId, b: JobId) -> bool {
        let (ja, jb) = (self.job(a), self.job(b));
        ja.queue == jb.queue
            && ja.priority == jb.priority
            && ja.preemptible == jb.preemptible
            && ja.min_member == jb.min_member
            && ja.foreign == jb.foreign
            && ja.tasks.len() == jb.tasks.len()
            && self.tstate[a].iter().all(|s| *s == TState::Pending)
            && self.tstate[b].iter().all(|s| *s == TState::Pending)
            && ja.tasks.iter().zip(&jb.tasks).all(|(x, y)| {
                x.req == y.req
                    && x.fractional == y.fractional
                    && x.mig == y.mig
                    && x.mig_gpu == y.mig_gpu
                    && x.node_selector == y.node_selector
                    && x.tolerations == y.tolerations
            })
    }

    /// Runs `body` (one action's step for job `ji`) or replays its outcome.
    ///
    /// A step that commits nothing (no placement, no eviction) leaves the engine state as it
    /// found it and only records a failure for its job; what it records is a function of
    /// that state and of the job's shape ([`Engine::same_shape`]). So while the
    /// [`Engine::epoch`] stands still, a job shaped like one already tried fails the same
    /// way, and its failure is copied instead of recomputed: the decisions and messages are
    /// those of running the step. This is what keeps a session over many alike pending jobs
    /// (a queue of identical jobs, a backlog of a few job sizes) linear in them.
    ///
    /// # Complexity
    /// O(log M + P) for a replay (M memo entries, P pods of the job), else `body`.
    fn memoized(&mut self, step: Step, ji: JobId, body: impl FnOnce(&mut Self)) {
        if !self.shortcuts {
            body(self);
            return;
        }
        let key = self.memo_key(step, ji);
        if let Some(k) = &key
            && let Some(m) = self.memo.get(k)
            && m.epoch == self.epoch
            && self.same_shape(m.job, ji)
        {
            if let Some(f) = &m.fail {
                self.fail[ji] = Some(f.clone());
            }
            return;
        }
        let (epoch, writes) = (self.epoch, self.fail_writes);
        body(self);
        if let Some(k) = key
            && self.epoch == epoch
        {
            let fail = if self.fail_writes == writes {
                None
            } else {
                self.fail[ji].clone()
            };
            self.memo_inserts += 1;
            self.memo.insert(
                k,
                MemoEntry {
                    job: ji,
                    epoch,
                    fail,
                },
            );
        }
    }
}

/// Node `n` of `c` (the cluster's node list is indexed by position; this is the one place
/// the session turns a [`NodeId`] back into one).
fn node_info(c: &Cluster, n: NodeId) -> &NodeInfo {
    &c.nodes[n.index()]
}

/// Job `j` of `c`. The cluster's job list is a public `Vec` indexed by position; the session
/// reads it only through this and [`jobs_enumerated`] (and [`Engine::job`],
/// [`Engine::job_ids`]), and its own tables are indexed by [`JobId`].
#[inline]
fn job_info(c: &Cluster, j: JobId) -> &Job {
    &c.jobs[j.index()]
}

/// The jobs of `c` with their ids, in input order.
fn jobs_enumerated(c: &Cluster) -> impl Iterator<Item = (JobId, &Job)> {
    c.jobs.iter().enumerate().map(|(i, j)| (JobId::new(i), j))
}

/// Pod `t` of job `j`. A job's pod list is indexed by position; the session reads it only
/// through this, [`tasks_enumerated`] and [`task_ids`] (and [`Engine::task`]), and its own
/// per-pod tables are indexed by `(JobId, TaskId)`.
#[inline]
fn task_of(j: &Job, t: TaskId) -> &Task {
    &j.tasks[t.index()]
}

/// The pods of job `j` with their ids, in input order.
fn tasks_enumerated(j: &Job) -> impl Iterator<Item = (TaskId, &Task)> {
    j.tasks.iter().enumerate().map(|(i, t)| (TaskId::new(i), t))
}

/// The ids of job `j`'s pods, in input order.
fn task_ids(j: &Job) -> impl Iterator<Item = TaskId> + use<> {
    (0..j.tasks.len()).map(TaskId::new)
}

/// The ids of the pods of `row` (one job's row of a [`Jagged`] table) whose value passes
/// `keep`, in order.
fn tasks_where<T>(row: &[T], keep: impl Fn(&T) -> bool) -> Vec<TaskId> {
    row.iter()
        .enumerate()
        .filter(|(_, s)| keep(s))
        .map(|(i, _)| TaskId::new(i))
        .collect()
}

/// The part of a task's request placed on nodes as devices: its GPU request without the
/// MIG GPU-equivalents (MIG instances are placed as their own resources).
fn dev_req(t: &crate::snapshot::Task) -> Amt {
    // `mig_gpu` is part of `req[0]` (added with a checked sum when the snapshot was read).
    let mut req = t.req;
    req[GPU] = req[GPU].saturating_sub(t.mig_gpu);
    req
}

/// A node once what it was releasing is free: idle as [`Engine::new`] opens it (on a node
/// with devices the GPUs are held in the devices and `idle` keeps `allocatable_gpu`). True
/// when the node changed.
fn settle(ns: &mut NodeState, allocatable_gpu: i128) -> Option<bool> {
    let changed = ns.rel != Amt::ZERO
        || (!ns.devs.is_empty() && ns.idle[GPU] != allocatable_gpu)
        || ns.devs.iter().any(|d| d.1 != 0)
        || ns.mig.iter().any(|m| m.1 != 0);
    for r in Resource::ALL {
        ns.idle[r] = ns.idle[r].checked_add(ns.rel[r])?;
    }
    ns.rel = Amt::ZERO;
    if !ns.devs.is_empty() {
        ns.idle[GPU] = allocatable_gpu;
        for d in &mut ns.devs {
            d.1 = 0;
        }
    }
    for m in &mut ns.mig {
        *m = (m.0.checked_add(m.1)?, 0);
    }
    Some(changed)
}

/// A placement record as [`Engine::occupy`] writes it for a running pod: all taken from idle.
fn settle_rec(rec: &mut PlaceRec) -> Option<()> {
    for r in Resource::ALL {
        rec.take[r] = (rec.take[r].0.checked_add(rec.take[r].1)?, 0);
    }
    for d in &mut rec.devs {
        *d = (d.0, d.1.checked_add(d.2)?, 0);
    }
    for m in &mut rec.mig {
        *m = (m.0, m.1.checked_add(m.2)?, 0);
    }
    Some(())
}

/// A nano-unit amount of a resource as the contract prints it (GPUs as decimals, CPU and
/// memory as Kubernetes quantities).
pub fn fmt_res(r: Resource, v: i128) -> String {
    match r {
        Resource::Gpu => format_decimal(v),
        // Nano-millicores are pico-cores; a Kubernetes quantity holds nano-cores.
        Resource::Cpu => {
            crate::fixed::to_quantity(v / 1000).map_or_else(|| format_decimal(v), |q| q.to_string())
        }
        Resource::Memory => memory_string(v),
    }
}

fn memory_string(v: i128) -> String {
    // Bytes (nano): whole bytes print BinarySI when a multiple of 1024, DecimalSI otherwise.
    let bytes = v / SCALE;
    if v % SCALE == 0
        && let Ok(b) = i64::try_from(bytes)
    {
        if b != 0 && b % 1024 == 0 {
            return gpuquota_model::Quantity::from_bytes(b).to_string();
        }
        return gpuquota_model::Quantity::from_integer(b).to_string();
    }
    crate::fixed::to_quantity(v).map_or_else(|| format_decimal(v), |q| q.to_string())
}
