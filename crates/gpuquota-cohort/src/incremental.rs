//! The incremental API: a [`Scheduler`] driven event by event, as a simulator over virtual
//! time drives it (arrivals, completions, evictions, cycles), without building the
//! [`crate::World`] again per event.
//!
//! A simulator builds one input ([`crate::Input::from_model`]) with every workload instance
//! it will ever submit, takes its scheduler ([`crate::Input::scheduler`]), withholds
//! them all ([`Scheduler::withhold`]), then at each instant reports completions
//! ([`Scheduler::finish`]), arrivals ([`Scheduler::arrive`]) and runs cycles
//! ([`Scheduler::cycle`] or [`Scheduler::settle`]). Every decision is the engine's own: the
//! cycle, the heads, the ordering, the preemption targets and the requeueing (inadmissible
//! sets, StrictFIFO/BestEffortFIFO, requeue of a cohort tree's inadmissible workloads when
//! capacity is freed) are those of [`Scheduler::run_cycle`].
//!
//! ```
//! use gpuquota_cohort::{Input, Options, Stepper};
//! use gpuquota_cohort::ids::WlId;
//! use gpuquota_model::import_str;
//!
//! let yaml = r#"
//! apiVersion: kueue.x-k8s.io/v1beta2
//! kind: ClusterQueue
//! metadata: {name: cq}
//! spec:
//!   namespaceSelector: {}
//!   resourceGroups:
//!   - coveredResources: [cpu]
//!     flavors: [{name: default, resources: [{name: cpu, nominalQuota: 4}]}]
//! ---
//! apiVersion: kueue.x-k8s.io/v1beta2
//! kind: ResourceFlavor
//! metadata: {name: default}
//! ---
//! apiVersion: kueue.x-k8s.io/v1beta2
//! kind: LocalQueue
//! metadata: {name: lq, namespace: ns}
//! spec: {clusterQueue: cq}
//! ---
//! apiVersion: kueue.x-k8s.io/v1beta2
//! kind: Workload
//! metadata: {name: a, namespace: ns}
//! spec:
//!   queueName: lq
//!   podSets: [{name: main, count: 4, template: {spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}}]
//! ---
//! apiVersion: kueue.x-k8s.io/v1beta2
//! kind: Workload
//! metadata: {name: b, namespace: ns}
//! spec:
//!   queueName: lq
//!   podSets: [{name: main, count: 4, template: {spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}}]
//! "#;
//! let model = import_str("example.yaml", yaml).expect("valid YAML").model;
//! let input = Input::from_model(&model, &Options::default()).expect("well-formed objects");
//! let world = input.world();
//! let Stepper::Classical(mut s) = input.scheduler() else {
//!     unreachable!("no fair sharing in this input")
//! };
//! for wl in world.workloads.ids() {
//!     s.withhold(wl);
//! }
//! let (a, b) = (WlId::new(0), WlId::new(1));
//! s.arrive(a);
//! s.arrive(b);
//! let (cycles, _) = s.settle(100);
//! assert_eq!(s.admitted.len(), 1); // a fits, b waits (inadmissible)
//! assert!(cycles >= 2);
//! assert!(s.finish(a)); // a completes: its quota is released, b is requeued
//! s.settle(100);
//! assert_eq!(s.admitted.len(), 2);
//! assert_eq!(world.workloads[s.admitted[1].wl].key, "ns/b");
//! ```

use crate::cycle::{Policy, Scheduler};
use crate::preempt::remove_reservation;
use crate::world::{CqId, QueueRef, WlId};

/// What one scheduling cycle changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CycleOutcome {
    /// False when no ClusterQueue had a head (no cycle ran).
    pub ran: bool,
    /// Workloads the cycle admitted (new entries of [`Scheduler::admitted`]).
    pub admitted: usize,
    /// Victims the cycle evicted (new entries of [`Scheduler::preempted`]).
    pub preempted: usize,
    /// Workloads the cycle moved to an inadmissible set (they wait for a capacity event).
    pub parked: usize,
}

impl CycleOutcome {
    /// True when the cycle admitted, evicted or parked something: the next cycle can decide
    /// differently. A cycle that changes nothing is a fixed point: every later cycle at the
    /// same instant would repeat it.
    pub fn changed(&self) -> bool {
        self.admitted > 0 || self.preempted > 0 || self.parked > 0
    }
}

impl<P: Policy> Scheduler<'_, P> {
    fn parked_total(&self) -> usize {
        self.queues.iter().map(|q| q.parked_len()).sum()
    }

    /// Runs one scheduling cycle ([`Scheduler::run_cycle`]) and says what it changed.
    ///
    /// # Complexity
    /// One cycle plus O(ClusterQueues) to count the inadmissible sets.
    pub fn cycle(&mut self) -> CycleOutcome {
        let (a, p, i) = (
            self.admitted.len(),
            self.preempted.len(),
            self.parked_total(),
        );
        let ran = self.run_cycle();
        CycleOutcome {
            ran,
            admitted: self.admitted.len() - a,
            preempted: self.preempted.len() - p,
            parked: self.parked_total().saturating_sub(i),
        }
    }

    /// Runs cycles until one changes nothing ([`CycleOutcome::changed`]), no ClusterQueue has
    /// a head, or `max` cycles ran; returns the cycles run and whether the last one still
    /// changed something (true only when `max` cut the loop). The stop rule is the one
    /// [`Scheduler::run`] applies without a cycle limit.
    ///
    /// # Complexity
    /// O(cycles × cycle cost).
    pub fn settle(&mut self, max: u32) -> (u32, bool) {
        let mut n = 0;
        while n < max {
            let o = self.cycle();
            if !o.ran {
                return (n, false);
            }
            n += 1;
            if !o.changed() {
                return (n, false);
            }
        }
        (n, true)
    }

    /// A running workload completes: its quota is released and it leaves the system (it is
    /// not requeued). As upstream's cache does when a workload finishes, the inadmissible
    /// workloads of every ClusterQueue in its cohort tree go back to their queues. Returns
    /// false when the workload held no reservation.
    ///
    /// # Complexity
    /// O(admitted in its queue + frs × depth + ClusterQueues + requeued × log W).
    pub fn finish(&mut self, wl: WlId) -> bool {
        let Some(r) = self.reservations[wl].take() else {
            return false;
        };
        remove_reservation(&self.world, &mut self.usage, &r);
        self.by_cq[r.cq].retain(|k| k.4 != wl);
        self.generation[self.world.cluster_queues[r.cq].node] += 1;
        self.pending[wl] = None;
        self.requeue_inadmissible(r.cq);
        true
    }

    /// Evicts a running workload outside a cycle (a controller or a user stops it): its
    /// quota is released, it goes back to its queue, and the inadmissible workloads of its
    /// cohort tree are requeued. Returns false when the workload held no reservation.
    ///
    /// # Complexity
    /// As [`Scheduler::finish`] plus O(log W).
    pub fn evict(&mut self, wl: WlId) -> bool {
        let Some(cq) = self.reservations[wl].as_ref().map(|r| r.cq) else {
            return false;
        };
        self.release(wl);
        self.requeue_inadmissible(cq);
        true
    }

    /// Moves the inadmissible workloads of every ClusterQueue in `cq`'s cohort tree back to
    /// their queues (upstream `QueueAssociatedInadmissibleWorkloadsAfter`: a capacity event).
    ///
    /// # Complexity
    /// O(ClusterQueues of the tree) plus, per ClusterQueue, the queue's merge of each
    /// shape group's parked workloads into its active ones (the smaller set into the larger).
    pub fn requeue_inadmissible(&mut self, cq: CqId) {
        let root = self.tree_root(cq);
        for i in 0..self.tree_cqs[root].len() {
            let c = self.tree_cqs[root][i];
            self.queues[c].unpark_all();
        }
    }

    /// The policy (fair sharing, admission fair sharing).
    pub fn policy(&self) -> &P {
        &self.policy
    }

    /// Tells the policy that virtual time passed ([`Policy::clock`]).
    pub fn clock(&mut self, event: &crate::fair::ClockEvent<'_>) {
        self.policy.clock(&self.world, event);
    }

    /// Puts a withheld workload back into its queue although it queued before (its last
    /// pending reason is kept): a gate outside the engine (a GPU-hour budget, or a
    /// simulator holding an evicted workload back until a later instant) had taken it out.
    /// A workload still waiting for evaluation after a preemption goes back as an evicted
    /// one, as the cycle's own requeue puts it. A workload holding a reservation is left
    /// alone.
    ///
    /// # Complexity
    /// O(log W).
    pub fn requeue(&mut self, wl: WlId) {
        if self.reservations[wl].is_some() {
            return;
        }
        match (&self.pending[wl], &self.world.workloads[wl].queue) {
            (Some(crate::explain::Pending::Preempted { .. }), &QueueRef::Cq(c)) => {
                let k = self.heap_key(wl);
                self.queues[c].insert_evicted(k, self.slot[wl]);
            }
            _ => self.enqueue(wl),
        }
    }

    /// True while the workload waits in a queue (its heap or an inadmissible set).
    ///
    /// # Complexity
    /// O(log W).
    pub fn is_queued(&self, wl: WlId) -> bool {
        match self.world.workloads[wl].queue {
            QueueRef::Cq(c) => {
                let (k, g) = (self.heap_key(wl), self.slot[wl]);
                self.queues[c].contains(&k, g) || self.queues[c].is_parked(&k, g)
            }
            _ => false,
        }
    }
}
