//! The scheduling cycle (kubernetes-sigs/kueue: `pkg/scheduler/scheduler.go`, `Scheduler.schedule`)
//! and the run of cycles.
//!
//! The cache state ([`Scheduler`]) holds the committed usage and the per-ClusterQueue pending
//! queues. Each cycle copies only the usage counters (nodes × flavor-resources integers) as its
//! snapshot, pops one head per active ClusterQueue, nominates, orders, and processes the
//! entries; preempted workloads are evicted when the cycle ends.

use std::collections::{BTreeMap, BTreeSet};

use gpuquota_model::{Amount, Timestamp};

use crate::assign::{
    Assigner, Assignment, LastTried, Mode, Oracle, Possibility, reduced_counts, reducible,
};
use crate::explain::{Pending, PodSetReasons};
use crate::ids::{Slot, Table};
use crate::preempt::{
    Admitted, PreemptReason, Reservation, Target, add_reservation, remove_reservation,
};
use crate::tree::{FrId, NodeId, Usage};
use crate::world::{CqId, FlavorId, QueueRef, ResourceId, WlId, World};

/// How entries of a cycle are ordered and how preemption targets are found: the seam where
/// fair sharing (DRS tournament, fair-sharing preemption) plugs in.
pub trait Policy {
    /// Orders the cycle's entries in place (upstream `makeIterator`).
    fn order(&mut self, world: &World, snapshot: &Usage, entries: &mut [Entry]);
    /// Finds preemption targets for `requests` of workload `wl` in `cq` (upstream
    /// `GetTargets`); `snapshot` must be restored before returning.
    #[allow(clippy::too_many_arguments)]
    fn targets(
        &mut self,
        admitted: &Admitted<'_>,
        snapshot: &mut Usage,
        cq: CqId,
        wl: WlId,
        requests: &[(FrId, Amount)],
        frs_need: &[FrId],
    ) -> Vec<Target>;
    /// The index (into `entries`, as [`Policy::order`] left them) of the `step`-th entry to
    /// process, given the cycle snapshot as the previous entries left it (upstream
    /// `iterator.pop()`). The default takes the entries in order.
    fn next(
        &mut self,
        _world: &World,
        _snapshot: &Usage,
        entries: &[Entry],
        step: usize,
    ) -> Option<usize> {
        (step < entries.len()).then_some(step)
    }
    /// The head of ClusterQueue `cq` this cycle among its queued workloads, given in the
    /// engine's heap order (priority, queue time, UID); upstream's heap may put another key
    /// first (admission fair sharing). The default takes the first.
    fn head(
        &mut self,
        _world: &World,
        _cq: CqId,
        queued: &mut dyn Iterator<Item = WlId>,
    ) -> Option<WlId> {
        queued.next()
    }
    /// Called when a cycle admits `wl` in `cq` with `assignment` (admission fair sharing
    /// charges its LocalQueue's entry penalty here). The default does nothing.
    fn admitted(&mut self, _world: &World, _wl: WlId, _cq: CqId, _assignment: &Assignment) {}
    /// True under fair sharing: the flavor assigner then simulates preemption whenever
    /// `reclaimWithinCohort` is not `Never` (upstream `canPreemptWhileBorrowing`).
    fn fair_sharing(&self) -> bool {
        false
    }
    /// Virtual time passes (a simulator drives it; see [`crate::fair::ClockEvent`]): admission
    /// fair sharing samples and settles its LocalQueues' usage. The default does nothing.
    fn clock(&mut self, _world: &World, _event: &crate::fair::ClockEvent<'_>) {}
    /// True when the policy keeps no state of its own from one cycle to the next, so that
    /// a run whose scheduling state repeats exactly repeats for ever and [`Scheduler::run`]
    /// may skip its whole periods (the `repeat` module). The default is false.
    fn stateless(&self) -> bool {
        false
    }
    /// The policy a rebuilt input ([`crate::Input::from_model`] of `model`) would give a
    /// scheduler over `world`, for [`Scheduler::update`] (`world` is this policy's world
    /// with the updated quotas). `None`: this policy cannot be rebuilt so, and the caller
    /// builds the input again. The default is `None`.
    fn updated(&self, _world: &World, _model: &gpuquota_model::Model) -> Option<Self>
    where
        Self: Sized,
    {
        None
    }
}

/// Kueue's classical (non fair-sharing) ordering and preemption.
#[derive(Debug, Clone, Copy, Default)]
pub struct Classical;

impl Policy for Classical {
    /// Borrowing level ascending, priority descending, queue timestamp, UID (upstream
    /// `makeClassicalIterator`); with `PrioritizePreemptorWorkloads` on, heads waiting for
    /// their preemptions first; with `PrioritySortingWithinCohort` off, no priority.
    ///
    /// # Complexity
    /// O(E log E).
    fn order(&mut self, world: &World, _snapshot: &Usage, entries: &mut [Entry]) {
        let gates = world.feature_gates;
        entries.sort_by(|a, b| {
            let (wa, wb) = (&world.workloads[a.wl], &world.workloads[b.wl]);
            let preemptor = if gates.prioritize_preemptor_workloads {
                b.preemptor.cmp(&a.preemptor)
            } else {
                std::cmp::Ordering::Equal
            };
            preemptor
                .then_with(|| a.assignment.borrowing.cmp(&b.assignment.borrowing))
                .then_with(|| {
                    if gates.priority_sorting_within_cohort {
                        wb.priority.cmp(&wa.priority)
                    } else {
                        std::cmp::Ordering::Equal
                    }
                })
                .then_with(|| a.queue_order.cmp(&b.queue_order))
                .then_with(|| wa.uid.cmp(&wb.uid))
                .then_with(|| a.wl.cmp(&b.wl))
        });
    }

    fn targets(
        &mut self,
        admitted: &Admitted<'_>,
        snapshot: &mut Usage,
        cq: CqId,
        wl: WlId,
        requests: &[(FrId, Amount)],
        frs_need: &[FrId],
    ) -> Vec<Target> {
        admitted.targets(snapshot, cq, wl, requests, frs_need)
    }

    fn stateless(&self) -> bool {
        true
    }

    /// Classical ordering derives nothing from the quotas.
    fn updated(&self, _world: &World, _model: &gpuquota_model::Model) -> Option<Classical> {
        Some(Classical)
    }
}

/// A nominated head of a ClusterQueue.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The workload.
    pub wl: WlId,
    /// Its ClusterQueue.
    pub cq: CqId,
    /// Its flavor assignment.
    pub assignment: Assignment,
    /// Its preemption targets.
    pub targets: Vec<Target>,
    /// It was waiting for the evictions of its preemption targets when popped (upstream
    /// `Head.IsPreemptor`; read only under the `PrioritizePreemptorWorkloads` gate).
    pub preemptor: bool,
    /// Its queue-order timestamp (upstream `GetQueueOrderTimestamp`).
    pub queue_order: Timestamp,
}

/// A workload admitted during the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdmittedRecord {
    /// Workload.
    pub wl: WlId,
    /// ClusterQueue.
    pub cq: CqId,
    /// Cycle (1-based).
    pub cycle: u32,
    /// Per PodSet: (name, count, flavor per resource).
    pub pod_sets: Vec<(String, i32, BTreeMap<String, String>)>,
    /// Borrowing level of the admission.
    pub borrowing: u32,
    /// The borrowing level the cycle's ordering saw for the entry (records of one cycle are in
    /// entry order).
    pub(crate) sort_borrowing: u32,
}

/// A preemption issued during the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreemptedRecord {
    /// Victim.
    pub wl: WlId,
    /// Victim's ClusterQueue.
    pub cq: CqId,
    /// Preemptor.
    pub preemptor: WlId,
    /// Reason.
    pub reason: PreemptReason,
    /// Cycle (1-based).
    pub cycle: u32,
    /// The borrowing level the cycle's ordering saw for the preemptor's entry.
    pub(crate) sort_borrowing: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Requeue {
    Immediate,
    Default,
    Namespace,
}

use crate::queues::{HeapKey, Queue};

/// The cache and queues; runs cycles.
pub struct Scheduler<'w, P: Policy = Classical> {
    /// The world, shared with the [`crate::Input`] it came from until
    /// [`Scheduler::update`] changes it (then this scheduler's own copy).
    world: std::sync::Arc<World>,
    /// The input the scheduler was taken from (its lifetime only).
    _input: std::marker::PhantomData<&'w World>,
    policy: P,
    usage: Usage,
    reservations: Table<WlId, Option<Reservation>>,
    by_cq: Table<CqId, Vec<crate::preempt::CandKey>>,
    /// Cached namespace-selector check of every workload: (ClusterQueue, matches).
    ns_match: Table<WlId, Option<(CqId, bool)>>,
    /// Per ClusterQueue: its active heap and inadmissible set.
    queues: Table<CqId, Queue>,
    /// Shape-group slot of every workload in its ClusterQueue's [`Queue`].
    slot: Table<WlId, Slot>,
    /// ClusterQueues of every cohort tree, by root node.
    tree_cqs: Table<NodeId, Vec<CqId>>,
    sticky: Table<CqId, Option<WlId>>,
    /// Per ClusterQueue, the workload waiting for the evictions of its preemption targets
    /// (upstream's `preemptorWorkload`, kept in StrictFIFO queues too), until it is admitted
    /// or deleted; read only under `PrioritizePreemptorWorkloads`.
    preemptor: Table<CqId, Option<WlId>>,
    /// Queue-order timestamps that differ from the world's (upstream `GetQueueOrderTimestamp`):
    /// with `PrioritySortingWithinCohort` off, a workload preempted during the run with
    /// reason `InCohortReclaimWhileBorrowing` queues one millisecond after its preemption;
    /// a caller sets others with [`Scheduler::queue_by`] (a PodsReady timeout's eviction
    /// time). A later preemption for another reason drops the entry.
    requeued_at: BTreeMap<WlId, Timestamp>,
    uid_rank: Table<WlId, u32>,
    /// Scheduling-shape id per workload (`u32::MAX` = not computed yet) and the shapes seen.
    shape: Table<WlId, u32>,
    shapes: BTreeMap<Vec<u8>, u32>,
    /// ClusterQueues with two or more workloads of one shape (the only ones where a failed
    /// head can take equivalent workloads with it).
    shared_shapes: BTreeSet<(CqId, u32)>,
    pending: Table<WlId, Option<Pending>>,
    last_tried: Table<WlId, Option<(LastTried, u32, u64)>>,
    generation: Table<NodeId, u64>,
    cycle: u32,
    /// Cycles of [`Scheduler::cycles`] that a run skipped as whole repeated periods.
    skipped: u32,
    /// ClusterQueues a cycle leaves out (their cohort tree's cycles are replayed; empty:
    /// none).
    held: Table<CqId, bool>,
    /// The ClusterQueues that had a head in the last cycle.
    last_heads: Vec<CqId>,
    /// Workloads admitted during the run, in order.
    pub admitted: Vec<AdmittedRecord>,
    /// Preemptions issued during the run, in order.
    pub preempted: Vec<PreemptedRecord>,
    /// Victims keep their quota until released ([`Scheduler::hold_evictions`]).
    hold_evictions: bool,
}

struct OracleImpl<'a, 'w, P: Policy> {
    world: &'w World,
    policy: &'a mut P,
    reservations: &'a Table<WlId, Option<Reservation>>,
    by_cq: &'a Table<CqId, Vec<crate::preempt::CandKey>>,
    uid_rank: &'a Table<WlId, u32>,
    cq: CqId,
    wl: WlId,
}

impl<P: Policy> Oracle for OracleImpl<'_, '_, P> {
    fn fair_sharing(&self) -> bool {
        self.policy.fair_sharing()
    }

    fn simulate(&mut self, usage: &mut Usage, fr: FrId, quantity: Amount) -> (Possibility, u32) {
        let adm = Admitted {
            world: self.world,
            reservations: self.reservations,
            by_cq: self.by_cq,
            uid_rank: self.uid_rank,
        };
        let targets = self
            .policy
            .targets(&adm, usage, self.cq, self.wl, &[(fr, quantity)], &[fr]);
        let node = self.world.cluster_queues[self.cq].node;
        if targets.is_empty() {
            let (b, _) = self.world.tree.borrowing_level(usage, node, fr, quantity);
            return (Possibility::NoCandidates, b);
        }
        for t in &targets {
            if let Some(r) = &self.reservations[t.wl] {
                remove_reservation(self.world, usage, r);
            }
        }
        let (b, _) = self.world.tree.borrowing_level(usage, node, fr, quantity);
        for t in &targets {
            if let Some(r) = &self.reservations[t.wl] {
                add_reservation(self.world, usage, r);
            }
        }
        let own = targets.iter().any(|t| {
            self.reservations[t.wl]
                .as_ref()
                .is_some_and(|r| r.cq == self.cq)
        });
        (
            if own {
                Possibility::Preempt
            } else {
                Possibility::Reclaim
            },
            b,
        )
    }
}

impl<'w> Scheduler<'w, Classical> {
    /// A scheduler over `world` with classical ordering and preemption.
    pub(crate) fn new(world: std::sync::Arc<World>) -> Scheduler<'w, Classical> {
        Scheduler::with_policy(world, Classical)
    }
}

impl<'w, P: Policy> Scheduler<'w, P> {
    /// A scheduler with a custom [`Policy`] (the fair-sharing seam).
    ///
    /// # Complexity
    /// O(W log W) for W workloads (plus one scheduling-shape key per workload).
    pub(crate) fn with_policy(world_arc: std::sync::Arc<World>, policy: P) -> Scheduler<'w, P> {
        let world: &World = &world_arc;
        let n = world.workloads.len();
        let ncq = world.cluster_queues.len();
        let mut order: Vec<WlId> = world.workloads.ids().collect();
        order.sort_by(|&a, &b| {
            world.workloads[a]
                .uid
                .cmp(&world.workloads[b].uid)
                .then(a.cmp(&b))
        });
        let mut uid_rank = Table::filled(0, n);
        for (rank, &w) in order.iter().enumerate() {
            uid_rank[w] = u32::try_from(rank).unwrap_or(u32::MAX);
        }
        let mut s = Scheduler {
            world: std::sync::Arc::clone(&world_arc),
            _input: std::marker::PhantomData,
            policy,
            usage: world.initial_usage.clone(),
            reservations: Table::filled(None, n),
            by_cq: Table::filled(Vec::new(), ncq),
            ns_match: Table::filled(None, n),
            queues: Table::new(),
            slot: Table::filled(Slot::default(), n),
            tree_cqs: Table::filled(Vec::new(), world.tree.nodes.len()),
            sticky: Table::filled(None, ncq),
            preemptor: Table::filled(None, ncq),
            requeued_at: BTreeMap::new(),
            uid_rank,
            shape: Table::filled(u32::MAX, n),
            shapes: BTreeMap::new(),
            shared_shapes: BTreeSet::new(),
            pending: Table::filled(None, n),
            last_tried: Table::filled(None, n),
            generation: Table::filled(0, world.tree.nodes.len()),
            cycle: 0,
            skipped: 0,
            held: Table::new(),
            last_heads: Vec::new(),
            admitted: Vec::new(),
            preempted: Vec::new(),
            hold_evictions: false,
        };
        // scheduling shapes, their group slots per ClusterQueue, and the shared ones
        let mut slots: Table<CqId, BTreeMap<u32, Slot>> = Table::filled(BTreeMap::new(), ncq);
        let mut seen: BTreeSet<(CqId, u32)> = BTreeSet::new();
        for (i, w) in world.workloads.iter_enumerated() {
            if let QueueRef::Cq(c) = w.queue {
                let shape = s.shape_of(i);
                let key = (c, shape);
                if !seen.insert(key) {
                    s.shared_shapes.insert(key);
                }
                let m = &mut slots[c];
                let next = Slot::new(m.len());
                s.slot[i] = *m.entry(shape).or_insert(next);
            }
        }
        s.queues = slots
            .iter_enumerated()
            .map(|(c, m)| Queue::with_groups(c, m.len()))
            .collect();
        for (c, cq) in world.cluster_queues.iter_enumerated() {
            let root = world.tree.nodes[cq.node].root;
            s.tree_cqs[root].push(c);
        }
        s.start();
        s
    }

    /// The start of a run over the world: the reservations of the workloads admitted in it,
    /// every other workload queued or pending with its reason (the tail of
    /// [`Scheduler::with_policy`], and of [`Scheduler::restart`]).
    ///
    /// # Complexity
    /// O(W log W + admitted log admitted).
    fn start(&mut self) {
        let world_arc = std::sync::Arc::clone(&self.world);
        let world: &World = &world_arc;
        for (i, w) in world.workloads.iter_enumerated() {
            let id = i;
            if let Some(a) = &w.admitted
                && a.drained
            {
                // evicted by HoldAndDrain before the run: quota released, pending below
                let node = world.cluster_queues[a.cq].node;
                for &(fr, amount) in &a.usage {
                    world.tree.remove_usage(&mut self.usage, node, fr, amount);
                }
            } else if let Some(a) = &w.admitted {
                self.reservations[i] = Some(Reservation {
                    cq: a.cq,
                    usage: a.usage.clone(),
                    uses: a.uses.clone(),
                    time: (a.time, 0),
                    evicted: a.evicted,
                });
                self.by_cq[a.cq].push((0, 0, std::cmp::Reverse((Timestamp::EPOCH, 0)), 0, id, 0));
                continue;
            }
            let blocked = match &w.queue {
                // Kueue's workload reconciler refuses the claims before the Workload is
                // queued (kubernetes-sigs/kueue: pkg/controller/core/workload_controller.go)
                _ if w.dra_refused.is_some() => Some(Pending::DraRefused(
                    w.dra_refused.clone().unwrap_or_default(),
                )),
                QueueRef::LocalQueueMissing(q) => Some(Pending::LocalQueueMissing(q.clone())),
                QueueRef::LocalQueueStopped(q) => Some(Pending::LocalQueueInactive(q.clone())),
                QueueRef::ClusterQueueMissing(q) => Some(Pending::ClusterQueueMissing(q.clone())),
                QueueRef::Cq(c) => {
                    let cq = &world.cluster_queues[*c];
                    if cq.inactive.is_some() {
                        Some(Pending::ClusterQueueInactive(cq.name.clone()))
                    } else if !w.active {
                        Some(Pending::Deactivated)
                    } else {
                        w.gated_by.clone().map(Pending::AdmissionGated)
                    }
                }
            };
            match blocked {
                Some(p) => self.pending[i] = Some(p),
                None => self.enqueue(id),
            }
        }
        for c in world.cluster_queues.ids() {
            let mut list: Vec<crate::preempt::CandKey> = self.by_cq[c]
                .iter()
                .map(|k| Admitted::key(world, &self.reservations, &self.uid_rank, k.4))
                .collect();
            list.sort_unstable();
            self.by_cq[c] = list;
        }
    }

    /// This scheduler as [`Scheduler::with_policy`] would make it over its (updated) world
    /// with `policy`, keeping what depends on the workloads only (UID ranks, scheduling
    /// shapes and their group slots, namespace-selector checks, cohort trees).
    ///
    /// # Complexity
    /// O(W log W), without the shape keys and the UID sort of a new scheduler.
    pub(crate) fn restart(&mut self, policy: P) {
        let n = self.world.workloads.len();
        let ncq = self.world.cluster_queues.len();
        let nodes = self.world.tree.nodes.len();
        self.policy = policy;
        self.usage = self.world.initial_usage.clone();
        self.reservations = Table::filled(None, n);
        self.by_cq = Table::filled(Vec::new(), ncq);
        self.queues = self.queues.iter().map(Queue::emptied).collect();
        self.sticky = Table::filled(None, ncq);
        self.pending = Table::filled(None, n);
        self.last_tried = Table::filled(None, n);
        self.generation = Table::filled(0, nodes);
        self.cycle = 0;
        self.skipped = 0;
        self.held = Table::new();
        self.last_heads.clear();
        self.admitted.clear();
        self.preempted.clear();
        self.start();
    }

    /// Inserts an admitted workload into its queue's sorted candidate list.
    fn insert_admitted(&mut self, cq: CqId, wl: WlId) {
        let key = Admitted::key(&self.world, &self.reservations, &self.uid_rank, wl);
        let pos = self.by_cq[cq].partition_point(|k| *k < key);
        self.by_cq[cq].insert(pos, key);
    }

    /// Upstream's scheduling-equivalence shape: effective priority and, per PodSet, name,
    /// count, minCount, per-pod requests, node selector, affinity and tolerations.
    ///
    /// # Complexity
    /// O(PodSets × (resources + selector terms) + log shapes) the first time, O(1) after.
    fn shape_of(&mut self, wl: WlId) -> u32 {
        let cached = self.shape[wl];
        if cached != u32::MAX {
            return cached;
        }
        let key = shape_key(&self.world.workloads[wl]);
        let next = self.shapes.len() as u32;
        let id = *self.shapes.entry(key).or_insert(next);
        self.shape[wl] = id;
        id
    }

    /// Puts a workload into its ClusterQueue's active heap (no-op when there, or without
    /// a ClusterQueue).
    ///
    /// # Complexity
    /// O(log W).
    fn enqueue(&mut self, wl: WlId) {
        if let QueueRef::Cq(c) = self.world.workloads[wl].queue {
            let k = self.heap_key(wl);
            self.queues[c].insert(k, self.slot[wl]);
        }
    }

    /// Takes a workload out of its ClusterQueue's active heap; true when it was there.
    ///
    /// # Complexity
    /// O(log W).
    fn dequeue(&mut self, wl: WlId) -> bool {
        let QueueRef::Cq(c) = self.world.workloads[wl].queue else {
            return false;
        };
        let k = self.heap_key(wl);
        self.queues[c].remove(&k, self.slot[wl])
    }

    /// True while the workload is in its ClusterQueue's active heap.
    ///
    /// # Complexity
    /// O(log W).
    fn in_heap(&self, wl: WlId) -> bool {
        match self.world.workloads[wl].queue {
            QueueRef::Cq(c) => self.queues[c].contains(&self.heap_key(wl), self.slot[wl]),
            _ => false,
        }
    }

    fn heap_key(&self, wl: WlId) -> HeapKey {
        let w = &self.world.workloads[wl];
        (
            -i64::from(w.priority),
            self.queue_order(wl),
            self.uid_rank[wl],
            wl,
        )
    }

    /// The queue-order timestamp of `wl` (upstream `GetQueueOrderTimestamp`).
    pub(crate) fn queue_order(&self, wl: WlId) -> Timestamp {
        match self.requeued_at.get(&wl) {
            Some(&t) => t,
            None => self.world.workloads[wl].created,
        }
    }

    /// From now on `wl` queues by `at` instead of its creation time (upstream
    /// `GetQueueOrderTimestamp`: a workload evicted by the PodsReady timeout under the
    /// requeuing timestamp `Eviction` queues by its eviction time). Call it while `wl` is
    /// out of its queue (admitted or withheld).
    ///
    /// # Complexity
    /// O(log W).
    pub fn queue_by(&mut self, wl: WlId, at: Timestamp) {
        self.requeued_at.insert(wl, at);
    }

    /// Takes a pending workload out of its queue (it has not arrived yet).
    ///
    /// # Complexity
    /// O(log W).
    pub fn withhold(&mut self, wl: WlId) {
        if let QueueRef::Cq(c) = self.world.workloads[wl].queue {
            let k = self.heap_key(wl);
            self.dequeue(wl);
            self.queues[c].unpark(&k, self.slot[wl]);
        }
    }

    /// Puts a withheld workload into its queue (it arrives now).
    ///
    /// # Complexity
    /// O(log W).
    pub fn arrive(&mut self, wl: WlId) {
        let w = &self.world.workloads[wl];
        if self.reservations[wl].is_some() || self.pending[wl].is_some() {
            return;
        }
        if let QueueRef::Cq(_) = w.queue {
            self.enqueue(wl);
        }
    }

    /// One admission decision outside a cycle: pops `cq`'s head, assigns flavors against the
    /// committed usage and, when it fits, reserves its quota. Returns the head and its mode
    /// (a head that does not fit goes back to its queue).
    ///
    /// # Complexity
    /// O(log W + resources × flavors × depth) when no preemption is simulated.
    pub fn admit_head(&mut self, cq: CqId) -> Option<(WlId, Mode)> {
        let world_arc = std::sync::Arc::clone(&self.world);
        let world: &World = &world_arc;
        let wl = self.queues[cq].pop_first()?.3;
        let assigner = Assigner {
            world,
            cq,
            wl,
            pinned: None,
        };
        let mut oracle = OracleImpl {
            world,
            policy: &mut self.policy,
            reservations: &self.reservations,
            by_cq: &self.by_cq,
            uid_rank: &self.uid_rank,
            cq,
            wl,
        };
        let a = assigner.assign(&mut self.usage, &mut oracle, None, None);
        let mode = a.mode();
        if mode == Mode::Fit {
            let uses: Vec<FrId> = a.usage.iter().map(|x| x.0).collect();
            let res = Reservation {
                cq,
                usage: a.usage,
                uses,
                time: (crate::preempt::now(), self.cycle),
                evicted: false,
            };
            add_reservation(world, &mut self.usage, &res);
            self.reservations[wl] = Some(res);
            self.insert_admitted(cq, wl);
        } else {
            self.enqueue(wl);
        }
        Some((wl, mode))
    }

    /// Releases a workload's reservation and puts it back in its queue (the inverse of
    /// [`Scheduler::admit_head`]).
    ///
    /// # Complexity
    /// O(admitted in its queue + frs × depth + log W).
    pub fn release(&mut self, wl: WlId) {
        let Some(r) = self.reservations[wl].take() else {
            return;
        };
        remove_reservation(&self.world, &mut self.usage, &r);
        self.by_cq[r.cq].retain(|k| k.4 != wl);
        self.generation[self.world.cluster_queues[r.cq].node] += 1;
        self.enqueue(wl);
    }

    /// The preemption targets classical preemption would choose for `wl`'s full assignment
    /// against the committed usage (nothing is changed).
    ///
    /// # Complexity
    /// The cost of [`Admitted::targets`] plus one flavor assignment.
    pub fn preemption_targets(&mut self, wl: WlId) -> Vec<Target> {
        let world_arc = std::sync::Arc::clone(&self.world);
        let world: &World = &world_arc;
        let QueueRef::Cq(cq) = world.workloads[wl].queue else {
            return Vec::new();
        };
        let mut usage = std::mem::replace(&mut self.usage, Usage(Vec::new()));
        let (_, t) = self.get_assignments(&mut usage, wl, cq, None, None);
        self.usage = usage;
        t
    }

    /// A read view of the admitted workloads for [`Admitted::targets`].
    pub fn admitted_view(&self) -> Admitted<'_> {
        Admitted {
            world: &self.world,
            reservations: &self.reservations,
            by_cq: &self.by_cq,
            uid_rank: &self.uid_rank,
        }
    }

    /// The committed usage (cache).
    pub fn usage(&self) -> &Usage {
        &self.usage
    }

    /// The current reservation of every workload.
    pub fn reservations(&self) -> &Table<WlId, Option<Reservation>> {
        &self.reservations
    }

    /// Cycles run so far.
    pub fn cycles(&self) -> u32 {
        self.cycle
    }

    /// How many of the [`Scheduler::cycles`] a run skipped because they repeated a proven
    /// period (0 when every cycle ran; see [`Scheduler::run`]).
    pub fn skipped_cycles(&self) -> u32 {
        self.skipped
    }

    /// Why a workload is pending now (`None` for admitted workloads).
    pub fn pending_reason(&self, wl: WlId) -> Option<Pending> {
        self.pending_reason_ref(wl)
            .map(std::borrow::Cow::into_owned)
    }

    /// [`Scheduler::pending_reason`] without copying a recorded reason.
    ///
    /// # Complexity
    /// O(log W).
    pub(crate) fn pending_reason_ref(&self, wl: WlId) -> Option<std::borrow::Cow<'_, Pending>> {
        use std::borrow::Cow;
        if self.reservations[wl].is_some() {
            return None;
        }
        if let Some(p) = &self.pending[wl] {
            return Some(Cow::Borrowed(p));
        }
        let w = &self.world.workloads[wl];
        if let QueueRef::Cq(c) = w.queue {
            let cq = &self.world.cluster_queues[c];
            if cq.strict_fifo
                && let Some((_, _, _, head)) = self.queues[c].first()
                && head != wl
            {
                return Some(Cow::Owned(Pending::BehindHead {
                    head: self.world.workloads[head].key.clone(),
                }));
            }
        }
        Some(Cow::Owned(Pending::NotConsidered))
    }

    fn tree_root(&self, cq: CqId) -> NodeId {
        let node = self.world.cluster_queues[cq].node;
        self.world.tree.nodes[node].root
    }

    /// Whether `wl`'s namespace matches `cq`'s selector, cached per workload (a workload is
    /// only ever checked against its own ClusterQueue, and namespaces do not change).
    ///
    /// # Complexity
    /// O(1) after the first check of the workload.
    fn namespace_matches(&mut self, wl: WlId, cq: CqId) -> bool {
        match self.ns_match[wl] {
            Some((c, m)) if c == cq => m,
            _ => {
                let m = self.namespace_matches_uncached(wl, cq);
                self.ns_match[wl] = Some((cq, m));
                m
            }
        }
    }

    fn namespace_matches_uncached(&self, wl: WlId, cq: CqId) -> bool {
        let w = &self.world.workloads[wl];
        let Some(sel) = &self.world.cluster_queues[cq].namespace_selector else {
            return false;
        };
        let empty = BTreeMap::new();
        let labels = self.world.namespaces.get(&w.namespace).unwrap_or(&empty);
        // Kubernetes adds this label to every namespace.
        let mut l = labels.clone();
        l.entry("kubernetes.io/metadata.name".to_owned())
            .or_insert_with(|| w.namespace.clone());
        sel.matches(&l)
    }

    /// The ResourceQuota check: `Some(reason)` when admitting `counts` pods of `wl` would
    /// exceed a hard cap of its namespace. A quota's usage is that of the reserved workloads
    /// of its own namespace and scope; a workload admitted earlier in the same cycle already
    /// holds its reservation, so it is counted there, once, and only against the quotas that
    /// cover it.
    fn resource_quota_violation(&self, wl: WlId, counts: &[i32]) -> Option<Pending> {
        let world_arc = std::sync::Arc::clone(&self.world);
        let world: &World = &world_arc;
        let w = &world.workloads[wl];
        let demand = |id: WlId, counts: &[i32], r: Option<ResourceId>| -> i64 {
            let ww = &world.workloads[id];
            let mut total: i64 = 0;
            for (ps, &c) in ww.pod_sets.iter().zip(counts) {
                let per = match r {
                    None => 1,
                    Some(r) => ps
                        .per_pod
                        .iter()
                        .find(|x| x.0 == r)
                        .map(|x| x.1)
                        .unwrap_or(0),
                };
                total = total.saturating_add(per.saturating_mul(i64::from(c)));
            }
            total
        };
        for rq in world
            .resource_quotas
            .iter()
            .filter(|q| q.namespace == w.namespace)
        {
            if !rq
                .object
                .applies_to_priority_class(w.priority_class.as_deref())
            {
                continue;
            }
            for (key, r, hard) in &rq.hard {
                let req = demand(wl, counts, *r);
                if req == 0 {
                    continue;
                }
                let mut used: i64 = 0;
                for (i, other) in world.workloads.iter_enumerated() {
                    if other.namespace != w.namespace || i == wl {
                        continue;
                    }
                    if !rq
                        .object
                        .applies_to_priority_class(other.priority_class.as_deref())
                    {
                        continue;
                    }
                    if self.reservations[i].is_some() {
                        let counts: Vec<i32> = match &other.admitted {
                            Some(a) if self.admitted.iter().all(|x| x.wl != i) => a.counts.clone(),
                            _ => self
                                .admitted
                                .iter()
                                .rev()
                                .find(|x| x.wl == i)
                                .map(|x| x.pod_sets.iter().map(|p| p.1).collect())
                                .unwrap_or_else(|| {
                                    other.pod_sets.iter().map(|p| p.count).collect()
                                }),
                        };
                        used = used.saturating_add(demand(i, &counts, *r));
                    }
                }
                if used.saturating_add(req) > hard.0 {
                    let fmt = |v: i64| match r {
                        Some(r) => world.resources[*r].format_amount(Amount(v)),
                        None => v.to_string(),
                    };
                    return Some(Pending::ResourceQuotaExceeded {
                        quota: rq.name.clone(),
                        key: key.clone(),
                        requested: fmt(req),
                        used: fmt(used),
                        hard: fmt(hard.0),
                    });
                }
            }
            if let Some(p) = self.claim_quota_violation(wl, counts, rq) {
                return Some(p);
            }
        }
        None
    }

    /// The ResourceClaim keys of `rq` that the claims `wl`'s pods would create exceed (kube's
    /// claim evaluator charges every claim made from a template: kubernetes/kubernetes
    /// pkg/quota/v1/evaluator/core/resource_claims.go); the claims of the namespace's
    /// reserved workloads are the usage.
    fn claim_quota_violation(
        &self,
        wl: WlId,
        counts: &[i32],
        rq: &crate::world::RqInfo,
    ) -> Option<Pending> {
        let world_arc = std::sync::Arc::clone(&self.world);
        let world: &World = &world_arc;
        let demand = |id: WlId, counts: &[i32], key: &str| -> i64 {
            world.workloads[id]
                .pod_sets
                .iter()
                .zip(counts)
                .map(|(ps, &c)| {
                    ps.claims
                        .iter()
                        .find(|x| x.0 == key)
                        .map_or(0, |x| x.1.saturating_mul(i64::from(c)))
                })
                .fold(0_i64, i64::saturating_add)
        };
        let w = &world.workloads[wl];
        for ((key, hard), standing) in rq.claims.iter().zip(&rq.claims_used) {
            let req = demand(wl, counts, key);
            if req == 0 {
                continue;
            }
            let mut used: i64 = *standing;
            for (i, other) in world.workloads.iter_enumerated() {
                if i == wl || other.namespace != w.namespace || self.reservations[i].is_none() {
                    continue;
                }
                let c: Vec<i32> = match &other.admitted {
                    Some(a) if self.admitted.iter().all(|x| x.wl != i) => a.counts.clone(),
                    _ => self
                        .admitted
                        .iter()
                        .rev()
                        .find(|x| x.wl == i)
                        .map(|x| x.pod_sets.iter().map(|p| p.1).collect())
                        .unwrap_or_else(|| other.pod_sets.iter().map(|p| p.count).collect()),
                };
                used = used.saturating_add(demand(i, &c, key));
            }
            if used.saturating_add(req) > *hard {
                return Some(Pending::ResourceQuotaExceeded {
                    quota: rq.name.clone(),
                    key: key.clone(),
                    requested: req.to_string(),
                    used: used.to_string(),
                    hard: hard.to_string(),
                });
            }
        }
        None
    }

    /// The assignment of `wl` computed again with `removed` (the victims other entries chose
    /// this cycle) gone from `snapshot` and from the candidates, on the flavors `pinned` at
    /// nomination (upstream's nomination mapping); `snapshot` is restored.
    ///
    /// # Complexity
    /// O(admitted workloads of the victims' ClusterQueues) to filter their candidate lists,
    /// plus one [`Self::get_assignments`].
    fn recompute_without(
        &mut self,
        snapshot: &mut Usage,
        wl: WlId,
        cq: CqId,
        removed: &BTreeSet<WlId>,
        pinned: &[Vec<(ResourceId, FlavorId)>],
    ) -> (Assignment, Vec<Target>) {
        let world_arc = std::sync::Arc::clone(&self.world);
        let world: &World = &world_arc;
        for &v in removed {
            if let Some(r) = &self.reservations[v] {
                remove_reservation(world, snapshot, r);
            }
        }
        // only the victims' ClusterQueues list removed workloads
        let mut touched: Vec<CqId> = removed
            .iter()
            .filter_map(|&v| self.reservations[v].as_ref().map(|r| r.cq))
            .collect();
        touched.sort_unstable();
        touched.dedup();
        let mut saved: Vec<(CqId, Vec<crate::preempt::CandKey>)> =
            Vec::with_capacity(touched.len());
        for c in touched {
            let filtered: Vec<crate::preempt::CandKey> = self.by_cq[c]
                .iter()
                .filter(|k| !removed.contains(&k.4))
                .copied()
                .collect();
            saved.push((c, std::mem::replace(&mut self.by_cq[c], filtered)));
        }
        let out = self.get_assignments(snapshot, wl, cq, None, Some(pinned));
        for (c, l) in saved {
            self.by_cq[c] = l;
        }
        for &v in removed {
            if let Some(r) = &self.reservations[v] {
                add_reservation(world, snapshot, r);
            }
        }
        out
    }

    fn get_assignments(
        &mut self,
        snapshot: &mut Usage,
        wl: WlId,
        cq: CqId,
        last: Option<&LastTried>,
        pinned: Option<&[Vec<(ResourceId, FlavorId)>]>,
    ) -> (Assignment, Vec<Target>) {
        let world_arc = std::sync::Arc::clone(&self.world);
        let world: &World = &world_arc;
        let assigner = Assigner {
            world,
            cq,
            wl,
            pinned,
        };
        let reservations = &self.reservations;
        let by_cq = &self.by_cq;
        let uid_rank = &self.uid_rank;
        let mut oracle = OracleImpl {
            world,
            policy: &mut self.policy,
            reservations,
            by_cq,
            uid_rank,
            cq,
            wl,
        };
        let full = assigner.assign(snapshot, &mut oracle, None, last);
        let mode = full.mode();
        if mode == Mode::Fit {
            return (full, Vec::new());
        }
        if mode == Mode::Preempt {
            let frs_need = full.frs_need_preemption(world);
            let adm = Admitted {
                world,
                reservations,
                by_cq,
                uid_rank,
            };
            let t = oracle
                .policy
                .targets(&adm, snapshot, cq, wl, &full.usage, &frs_need);
            if !t.is_empty() {
                return (full, t);
            }
        }
        let pod_sets = &world.workloads[wl].pod_sets;
        // upstream tries fewer pods only under the PartialAdmission gate
        let total = if world.feature_gates.partial_admission {
            reducible(pod_sets)
        } else {
            0
        };
        if total > 0 {
            // smallest k in [0, D] whose reduced assignment fits or preempts with targets
            let (mut lo, mut hi) = (0i64, total + 1);
            let mut found: Option<(Assignment, Vec<Target>)> = None;
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                let counts = reduced_counts(pod_sets, mid, total);
                let a = assigner.assign(snapshot, &mut oracle, Some(&counts), last);
                let ok = match a.mode() {
                    Mode::Fit => Some((a, Vec::new())),
                    Mode::Preempt => {
                        let frs_need = a.frs_need_preemption(world);
                        let adm = Admitted {
                            world,
                            reservations,
                            by_cq,
                            uid_rank,
                        };
                        let t = oracle
                            .policy
                            .targets(&adm, snapshot, cq, wl, &a.usage, &frs_need);
                        (!t.is_empty()).then_some((a, t))
                    }
                    Mode::NoFit => None,
                };
                match ok {
                    Some(r) => {
                        found = Some(r);
                        hi = mid;
                    }
                    None => lo = mid + 1,
                }
            }
            if let Some(f) = found {
                return f;
            }
        }
        (full, Vec::new())
    }

    fn pod_set_reasons(&self, wl: WlId, a: &Assignment) -> Vec<PodSetReasons> {
        let w = &self.world.workloads[wl];
        a.pod_sets
            .iter()
            .filter(|p| !p.reasons.is_empty())
            .map(|p| PodSetReasons {
                pod_set: w.pod_sets[p.index].name.clone(),
                reasons: p.reasons.clone(),
            })
            .collect()
    }

    /// Runs cycles until one admits, preempts and moves nothing, or `max` cycles ran.
    ///
    /// Under a [`Policy::stateless`] policy a run whose whole state comes back to what it
    /// was `p` cycles earlier (a preemption loop) skips the whole periods left before the
    /// bound and runs only the rest; the records and the final state are those of running
    /// every cycle (the `repeat` module).
    ///
    /// # Complexity
    /// O(cycles × cycle cost); a run that repeats with period p from cycle c costs
    /// O((c + 3p) × cycle cost + records).
    pub fn run(&mut self, max: Option<u32>) {
        self.run_with(max, true);
    }

    /// [`Scheduler::run`], with the skipping of proven periods on or off (off runs every
    /// cycle; both give the same records and final state).
    ///
    /// # Complexity
    /// That of [`Scheduler::run`].
    pub fn run_with(&mut self, max: Option<u32>, skip_repeats: bool) {
        let bound = max.unwrap_or_else(|| {
            let n = self.world.workloads.len() as u32;
            n.saturating_mul(4).saturating_add(64).min(1_000_000)
        });
        // the repeat detection does not record the preemptor table that
        // PrioritizePreemptorWorkloads reads, nor the queue times that
        // PrioritySortingWithinCohort off or a caller's `queue_by` change
        if skip_repeats
            && self.policy.stateless()
            && !self.world.feature_gates.prioritize_preemptor_workloads
            && self.world.feature_gates.priority_sorting_within_cohort
            && self.requeued_at.is_empty()
        {
            self.run_replaying(max, bound);
            return;
        }
        while self.cycle < bound {
            let before = (
                self.admitted.len(),
                self.preempted.len(),
                self.queue_fingerprint(),
            );
            if !self.run_cycle() {
                break;
            }
            let after = (
                self.admitted.len(),
                self.preempted.len(),
                self.queue_fingerprint(),
            );
            if max.is_none() && before == after {
                break;
            }
        }
    }

    /// An order-independent fingerprint of every active heap (equal contents, equal
    /// fingerprints).
    ///
    /// # Complexity
    /// O(ClusterQueues).
    fn queue_fingerprint(&self) -> (usize, u64) {
        self.queues.iter().fold((0, 0), |(n, h), q| {
            let (qn, qh) = q.fingerprint();
            (n + qn, h.wrapping_add(qh))
        })
    }
}

/// Upstream's preemption message for a victim.
pub fn preemption_message(
    world: &World,
    reason: PreemptReason,
    preemptor: WlId,
    victim: WlId,
    victim_cq: CqId,
) -> String {
    let p = &world.workloads[preemptor];
    let path = |cq: CqId| -> String {
        let node = world.cluster_queues[cq].node;
        let mut names: Vec<&str> = world
            .tree
            .ancestors(node)
            .map(|a| world.tree.nodes[a].name.as_str())
            .collect();
        names.reverse();
        names.push(world.cluster_queues[cq].name.as_str());
        format!("/{}", names.join("/"))
    };
    let pcq = match p.queue {
        QueueRef::Cq(c) => path(c),
        _ => String::new(),
    };
    let _ = victim;
    format!(
        "Preempted to accommodate a workload (UID: {}, JobUID: {}) due to {}; preemptor path: {}; preemptee path: {}",
        p.uid_raw.as_deref().unwrap_or("UNKNOWN"),
        p.job_uid.as_deref().unwrap_or("UNKNOWN"),
        reason.phrase(),
        pcq,
        path(victim_cq)
    )
}

// Exact repetitions of a run (period detection and skipping) live in their own file.
#[path = "repeat.rs"]
mod repeat;

// The incremental API lives in its own file; as a child module it drives the cache's queues.
#[path = "incremental.rs"]
pub mod incremental;

// Platform changes at an instant (a rebuilt world that keeps the admitted workloads).
#[path = "transition.rs"]
pub mod transition;
/// In-place quota updates of a scheduler's world.
pub mod update;

// One function per phase of the cycle, and the scheduling-shape key, in their own files.
mod phases;
mod shape;
// Evictions that keep the victim's quota until its pods are gone.
#[path = "terminating.rs"]
mod terminating;
use shape::shape_key;
