//! Evictions that take time: victims that keep their quota until their pods are gone.
//!
//! By default a preemption releases its victims' quota when the cycle ends. With
//! [`Scheduler::hold_evictions`] on, a victim is marked `Evicted` and keeps its reservation
//! until the caller says its pods are gone ([`Scheduler::release_evicted`]), as upstream's
//! workload controller clears the quota reservation only once the job is suspended and its
//! pods have terminated (kubernetes-sigs/kueue `pkg/controller/jobframework/reconciler.go`).
//! Meanwhile upstream's rules hold:
//!
//! - the preemptor is not admitted: its assignment still sees the victims' usage, so it stays
//!   in `Preempt` mode with the evicted victims as its targets (candidates already evicted come
//!   first in upstream's candidate ordering);
//! - no second preemption for the same need: a target that is already evicted is not evicted
//!   again and is not recorded again (upstream `IssuePreemptions` skips workloads whose
//!   `Evicted` condition is true, kubernetes-sigs/kueue `pkg/scheduler/preemption/preemption.go`);
//! - the freed quota is not taken by others first: a head waiting for its preemptions is
//!   processed before the other entries of the cycle (upstream's classical iterator with
//!   `PrioritizePreemptorWorkloads`, kubernetes-sigs/kueue `pkg/scheduler/scheduler.go`
//!   `makeClassicalIterator`), and its processing adds its whole request to the cycle's
//!   snapshot, so a later entry no longer fits.
//!
//! The mode is off unless a caller turns it on, so the one-shot engine and every run without
//! eviction latency decide as before.

use crate::cycle::{Policy, Scheduler};
use crate::explain::Pending;
use crate::preempt::{Admitted, remove_reservation};
use crate::world::{QueueRef, WlId};

impl<P: Policy> Scheduler<'_, P> {
    /// Turns on (or off) evictions that keep the victim's quota until
    /// [`Scheduler::release_evicted`] (see the module docs).
    pub fn hold_evictions(&mut self, on: bool) {
        self.hold_evictions = on;
    }

    /// Whether `wl` holds quota while its eviction is under way.
    pub fn is_evicting(&self, wl: WlId) -> bool {
        self.reservations[wl].as_ref().is_some_and(|r| r.evicted)
    }

    /// The pods of an evicted workload are gone: its reservation is released, it goes back to
    /// its queue as an evicted workload, and the inadmissible workloads of its cohort tree
    /// are requeued (a capacity event). False when `wl` held no evicted reservation.
    ///
    /// # Complexity
    /// O(admitted in its queue + frs × depth + ClusterQueues of its tree + log W).
    pub fn release_evicted(&mut self, wl: WlId) -> bool {
        if !self.is_evicting(wl) {
            return false;
        }
        let Some(r) = self.reservations[wl].take() else {
            return false;
        };
        let world_arc = std::sync::Arc::clone(&self.world);
        let world: &crate::world::World = &world_arc;
        remove_reservation(world, &mut self.usage, &r);
        self.by_cq[r.cq].retain(|k| k.4 != wl);
        self.generation[world.cluster_queues[r.cq].node] += 1;
        let w = &world.workloads[wl];
        if let QueueRef::Cq(c) = w.queue
            && world.cluster_queues[c].inactive.is_none()
            && w.active
            && matches!(self.pending[wl], Some(Pending::Preempted { .. }))
        {
            let k = self.heap_key(wl);
            self.queues[c].insert_evicted(k, self.slot[wl]);
        }
        self.requeue_inadmissible(r.cq);
        true
    }

    /// Pods of admitted `wl` finished while the others run (upstream's
    /// `status.reclaimablePods`, kubernetes-sigs/kueue `pkg/workload/workload.go`): `usage`
    /// (each amount at most what the reservation holds) leaves its reservation and the
    /// committed usage, and the inadmissible workloads of its cohort tree are requeued (upstream
    /// treats a change of reclaimable pods as freed quota). False when `wl` holds nothing.
    ///
    /// # Complexity
    /// O(frs × depth + ClusterQueues of its tree).
    pub fn reclaim(
        &mut self,
        wl: WlId,
        usage: &[(crate::tree::FrId, gpuquota_model::Amount)],
    ) -> bool {
        let world_arc = std::sync::Arc::clone(&self.world);
        let world: &crate::world::World = &world_arc;
        let Some(r) = self.reservations[wl].as_mut() else {
            return false;
        };
        let node = world.cluster_queues[r.cq].node;
        for &(fr, a) in usage {
            if let Some(held) = r.usage.iter_mut().find(|x| x.0 == fr) {
                let take = a.min(held.1).max(gpuquota_model::Amount::ZERO);
                held.1 = held.1.saturating_sub(take);
                world.tree.remove_usage(&mut self.usage, node, fr, take);
            }
        }
        let cq = r.cq;
        self.generation[node] += 1;
        self.requeue_inadmissible(cq);
        true
    }

    /// With evictions held: marks victim `wl` evicted while it keeps its quota; false when it
    /// already was (no second eviction) or holds nothing.
    ///
    /// # Complexity
    /// O(admitted in its queue).
    pub(crate) fn mark_evicting(&mut self, wl: WlId) -> bool {
        let Some(r) = self.reservations[wl].as_mut() else {
            return false;
        };
        if r.evicted {
            return false;
        }
        r.evicted = true;
        let cq = r.cq;
        // its candidate key changes (evicted first)
        self.by_cq[cq].retain(|k| k.4 != wl);
        let key = Admitted::key(&self.world, &self.reservations, &self.uid_rank, wl);
        let pos = self.by_cq[cq].partition_point(|k| *k < key);
        self.by_cq[cq].insert(pos, key);
        true
    }
}
