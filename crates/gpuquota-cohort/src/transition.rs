//! Platform changes at an instant: a Kueue object is created, changed or deleted while
//! workloads run, and the admitted workloads stay as upstream keeps them.
//!
//! A simulator that changes ClusterQueues, Cohorts, ResourceFlavors or LocalQueues at an
//! instant rebuilds the [`World`] from the changed [`Model`] (the world is dense tables built
//! once per platform; a change of the tree renumbers them) and carries the admitted workloads
//! across:
//!
//! 1. `let carried = old_scheduler.carry();` — every reservation by names (workload key,
//!    ClusterQueue, flavor and resource), independent of the old world's ids;
//! 2. build the new model; with [`terminating`] find the deleted ClusterQueues that still
//!    hold admitted workloads and put them back with [`keep_terminating`] (upstream's
//!    `kueue.x-k8s.io/resource-in-use` finalizer keeps a ClusterQueue until its last admitted
//!    workload is gone);
//! 3. build the new model's input ([`crate::Input::from_model`]), mark those ClusterQueues
//!    terminating ([`crate::Input::mark_terminating`]) and take its scheduler
//!    ([`crate::Input::scheduler`]);
//! 4. `new_scheduler.adopt(&carried, &Stops::of(&model), &live)` — the reservations are put
//!    back, those a `HoldAndDrain` stops are evicted ([`Adopted::evicted`], with upstream's
//!    reason and message), and every workload the driver says is live (arrived, not finished,
//!    not held back) is queued again.
//!
//! Upstream semantics kept, each tested below:
//!
//! - **A changed ClusterQueue keeps its admitted workloads.** A quota decrease evicts nothing:
//!   the usage may exceed the new quota, the queue admits nothing while it does, and reclaim
//!   or preemption follow at the next cycle by the queues' own policies
//!   (kubernetes-sigs/kueue: pkg/cache/scheduler/cache.go `UpdateClusterQueue` keeps the
//!   workloads' usage; no controller evicts on a quota change).
//! - **`stopPolicy: Hold`** makes the ClusterQueue (or LocalQueue) inactive: no new
//!   admission, admitted workloads keep running (the world's `inactive = Some("Stopped")`).
//! - **`stopPolicy: HoldAndDrain`** also evicts the admitted workloads: reason
//!   `ClusterQueueStopped`, message `The ClusterQueue is stopped` (a LocalQueue's:
//!   `LocalQueueStopped`, `The LocalQueue is stopped`), as kubernetes-sigs/kueue:
//!   pkg/controller/core/workload_controller.go does with the reasons of
//!   apis/kueue/v1beta2/workload_types.go (`WorkloadEvictedByClusterQueueStopped`,
//!   `WorkloadEvictedByLocalQueueStopped`).
//! - **A deleted ClusterQueue with admitted workloads stays** (terminating: inactive with
//!   reason `Terminating`, kubernetes-sigs/kueue: pkg/controller/core/clusterqueue_controller.go
//!   and the `ClusterQueueActiveReasonTerminating` condition reason) until its last admitted
//!   workload finishes ([`Finalizers`]); its pending workloads stay pending. Without admitted
//!   workloads it leaves at once.
//! - **A new Cohort or ClusterQueue joins the tree** at that instant: the rebuilt world has
//!   it, and every queued workload is active again (upstream moves the inadmissible
//!   workloads of a cohort back to their queues when a ClusterQueue or Cohort changes,
//!   kubernetes-sigs/kueue: pkg/cache/queue/manager.go `UpdateClusterQueue`).
//!
//! What does not carry across: the pending reasons and inadmissible sets (every queued
//! workload starts active, as upstream's requeue after a ClusterQueue update makes it), the
//! run's records ([`Scheduler::admitted`], [`Scheduler::preempted`]: the driver keeps its
//! own log) and the policy's state unless the driver passes the same policy on.
//!
//! # Complexity
//! A change costs a world build (O(objects × log objects)) plus O(W log W) for the new
//! scheduler and O(admitted × flavor-resources × depth) to carry the reservations: linear in
//! the platform and its workloads, not in the objects changed. A driver applies every change
//! of one instant with one rebuild.

use std::collections::{BTreeMap, BTreeSet};

use gpuquota_model::kueue::StopPolicy;
use gpuquota_model::{Amount, Model, ResourceName, Timestamp};

use crate::cycle::{Policy, Scheduler};
use crate::preempt::{Reservation, add_reservation, remove_reservation};
use crate::world::{QueueRef, WlId, World};

/// Upstream's eviction reason when a ClusterQueue's `stopPolicy` is `HoldAndDrain`.
pub const CLUSTER_QUEUE_STOPPED: &str = "ClusterQueueStopped";
/// Upstream's eviction reason when a LocalQueue's `stopPolicy` is `HoldAndDrain`.
pub const LOCAL_QUEUE_STOPPED: &str = "LocalQueueStopped";
/// The inactive reason of a deleted ClusterQueue that still holds admitted workloads.
pub const TERMINATING: &str = "Terminating";

/// Every admitted workload's reservation, by names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Carried {
    /// The reservations, by workload key.
    pub reservations: Vec<CarriedReservation>,
}

/// One reservation by names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CarriedReservation {
    /// Workload key (`namespace/name`).
    pub workload: String,
    /// ClusterQueue name.
    pub cluster_queue: String,
    /// Usage per (flavor, resource).
    pub usage: Vec<(String, ResourceName, Amount)>,
    /// Flavor-resources its flavors use.
    pub uses: Vec<(String, ResourceName)>,
    /// QuotaReserved time.
    pub time: Timestamp,
    /// Already `Evicted=True`.
    pub evicted: bool,
}

impl Carried {
    /// Admitted workloads per ClusterQueue name.
    pub fn per_cluster_queue(&self) -> BTreeMap<&str, usize> {
        let mut out = BTreeMap::new();
        for r in &self.reservations {
            *out.entry(r.cluster_queue.as_str()).or_insert(0) += 1;
        }
        out
    }
}

/// The ClusterQueues and LocalQueues with `stopPolicy: HoldAndDrain` in a model.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stops {
    /// ClusterQueue names.
    pub cluster_queues: BTreeSet<String>,
    /// LocalQueue keys (`namespace/name`).
    pub local_queues: BTreeSet<String>,
}

impl Stops {
    /// The `HoldAndDrain` queues of `model`.
    ///
    /// # Complexity
    /// O(ClusterQueues + LocalQueues).
    pub fn of(model: &Model) -> Stops {
        let drain = |p: &Option<StopPolicy>| p.as_ref() == Some(&StopPolicy::HoldAndDrain);
        Stops {
            cluster_queues: model
                .cluster_queues
                .iter()
                .filter(|(_, c)| drain(&c.spec.stop_policy))
                .map(|(k, _)| k.clone())
                .collect(),
            local_queues: model
                .local_queues
                .iter()
                .filter(|(_, q)| drain(&q.spec.stop_policy))
                .map(|(k, _)| k.clone())
                .collect(),
        }
    }
}

/// An admitted workload evicted by a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Eviction {
    /// The workload (new world's id).
    pub wl: WlId,
    /// Upstream's reason ([`CLUSTER_QUEUE_STOPPED`], [`LOCAL_QUEUE_STOPPED`]).
    pub reason: &'static str,
    /// Upstream's message.
    pub message: &'static str,
}

/// What [`Scheduler::adopt`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Adopted {
    /// Reservations put back (new ids), in carried order.
    pub kept: Vec<WlId>,
    /// Reservations a `HoldAndDrain` ended.
    pub evicted: Vec<Eviction>,
    /// Carried workloads whose ClusterQueue is not in the new world (the driver did not keep
    /// it terminating): their reservation is gone and they queue again when live.
    pub orphaned: Vec<WlId>,
    /// Carried workloads not in the new world (keys).
    pub missing: Vec<String>,
}

impl<P: Policy> Scheduler<'_, P> {
    /// Every admitted workload's reservation by names, for [`Scheduler::adopt`] on a
    /// scheduler over a rebuilt world.
    ///
    /// # Complexity
    /// O(W + admitted × flavor-resources).
    pub fn carry(&self) -> Carried {
        let world_arc = std::sync::Arc::clone(&self.world);
        let w: &World = &world_arc;
        let fr = |f| {
            let (fl, r) = w.frs[f];
            (w.flavors[fl].name.clone(), w.resources[r].clone())
        };
        let reservations = w
            .workloads
            .iter_enumerated()
            .filter_map(|(id, info)| {
                let r = self.reservations[id].as_ref()?;
                Some(CarriedReservation {
                    workload: info.key.clone(),
                    cluster_queue: w.cluster_queues[r.cq].name.clone(),
                    usage: r
                        .usage
                        .iter()
                        .map(|&(f, a)| {
                            let (fl, res) = fr(f);
                            (fl, res, a)
                        })
                        .collect(),
                    uses: r.uses.iter().map(|&f| fr(f)).collect(),
                    time: r.time.0,
                    evicted: r.evicted,
                })
            })
            .collect();
        Carried { reservations }
    }

    /// Takes over the reservations of `carried` (from [`Scheduler::carry`] on the scheduler
    /// before the change) on a scheduler just made over the rebuilt world: the reservations
    /// this scheduler took from the model's workload statuses are replaced by the carried
    /// ones; a reservation in a `HoldAndDrain` ClusterQueue or LocalQueue (`stops`) is
    /// evicted instead; then every workload without a reservation queues when `live(key)`
    /// (it arrived and neither finished nor is held back by a gate of the driver) and is
    /// withheld otherwise. A flavor-resource the new world no longer has is left out of the
    /// usage. See the module docs for the semantics.
    ///
    /// # Complexity
    /// O(W log W + admitted × (flavor-resources × depth + admitted in its queue)).
    pub fn adopt(
        &mut self,
        carried: &Carried,
        stops: &Stops,
        live: &dyn Fn(&str) -> bool,
    ) -> Adopted {
        let world_arc = std::sync::Arc::clone(&self.world);
        let world: &World = &world_arc;
        for id in world.workloads.ids() {
            if let Some(r) = self.reservations[id].take() {
                remove_reservation(world, &mut self.usage, &r);
            }
        }
        for (_, list) in self.by_cq.iter_enumerated_mut() {
            list.clear();
        }
        let mut out = Adopted::default();
        for c in &carried.reservations {
            let Some(wl) = world.workload_id(&c.workload) else {
                out.missing.push(c.workload.clone());
                continue;
            };
            let Some(cq) = world.cq_id(&c.cluster_queue) else {
                out.orphaned.push(wl);
                continue;
            };
            let stopped_lq = match &world.workloads[wl].queue {
                QueueRef::LocalQueueStopped(q) => stops
                    .local_queues
                    .contains(&format!("{}/{q}", world.workloads[wl].namespace)),
                _ => false,
            };
            if stops.cluster_queues.contains(&c.cluster_queue) {
                out.evicted.push(Eviction {
                    wl,
                    reason: CLUSTER_QUEUE_STOPPED,
                    message: "The ClusterQueue is stopped",
                });
                continue;
            }
            if stopped_lq {
                out.evicted.push(Eviction {
                    wl,
                    reason: LOCAL_QUEUE_STOPPED,
                    message: "The LocalQueue is stopped",
                });
                continue;
            }
            let fr = |flavor: &str, r: &ResourceName| {
                let f = world.flavor_id(flavor)?;
                let r = world.resource_id(r.as_str())?;
                world.fr(f, r)
            };
            let mut uses: Vec<_> = c.uses.iter().filter_map(|(f, r)| fr(f, r)).collect();
            uses.sort_unstable();
            let r = Reservation {
                cq,
                usage: c
                    .usage
                    .iter()
                    .filter_map(|(f, r, a)| Some((fr(f, r)?, *a)))
                    .collect(),
                uses,
                time: (c.time, 0),
                evicted: c.evicted,
            };
            add_reservation(world, &mut self.usage, &r);
            self.withhold(wl);
            self.reservations[wl] = Some(r);
            self.pending[wl] = None;
            self.insert_admitted(cq, wl);
            self.generation[world.cluster_queues[cq].node] += 1;
            out.kept.push(wl);
        }
        for id in world.workloads.ids() {
            if self.reservations[id].is_some() {
                continue;
            }
            if live(&world.workloads[id].key) {
                self.arrive(id);
            } else {
                self.withhold(id);
            }
        }
        out
    }
}

/// The ClusterQueues deleted between `old` and `new` that still hold admitted workloads of
/// `carried`: upstream's finalizer keeps them (terminating) until those finish.
///
/// # Complexity
/// O(admitted + ClusterQueues × log ClusterQueues).
pub fn terminating(old: &Model, new: &Model, carried: &Carried) -> Vec<String> {
    carried
        .per_cluster_queue()
        .into_keys()
        .filter(|c| old.cluster_queues.contains_key(*c) && !new.cluster_queues.contains_key(*c))
        .map(str::to_owned)
        .collect()
}

/// Puts the terminating ClusterQueues of `old` back into `new` (the world keeps them).
///
/// # Complexity
/// O(names × (log ClusterQueues + object size)).
pub fn keep_terminating(new: &mut Model, old: &Model, names: &[String]) {
    for n in names {
        if let Some(cq) = old.cluster_queues.get(n) {
            new.cluster_queues.insert(n.clone(), cq.clone());
        }
    }
}

/// Marks the terminating ClusterQueues of a rebuilt world inactive (reason
/// [`TERMINATING`]), before a scheduler is made over it: they admit nothing new.
///
/// # Complexity
/// O(names × log ClusterQueues).
pub fn mark_terminating(world: &mut World, names: &[String]) {
    for n in names {
        if let Some(c) = world.cq_id(n) {
            world.cluster_queues[c].inactive = Some(TERMINATING);
        }
    }
}

/// The admitted workloads that still hold terminating ClusterQueues (their finalizer).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Finalizers {
    holders: BTreeMap<String, BTreeSet<String>>,
}

impl Finalizers {
    /// Tracks the terminating ClusterQueues `names` with their admitted workloads in
    /// `carried`.
    ///
    /// # Complexity
    /// O(admitted × log admitted).
    pub fn add(&mut self, names: &[String], carried: &Carried) {
        for r in &carried.reservations {
            if names.contains(&r.cluster_queue) {
                self.holders
                    .entry(r.cluster_queue.clone())
                    .or_default()
                    .insert(r.workload.clone());
            }
        }
    }

    /// A workload finished or was evicted: the ClusterQueue it held, when it was the last
    /// one there (the finalizer is removed; the driver rebuilds without that queue).
    ///
    /// # Complexity
    /// O(terminating × log admitted).
    pub fn release(&mut self, workload: &str) -> Option<String> {
        let cq = self
            .holders
            .iter_mut()
            .find_map(|(c, ws)| ws.remove(workload).then(|| c.clone()))?;
        if self.holders.get(&cq).is_some_and(BTreeSet::is_empty) {
            self.holders.remove(&cq);
            return Some(cq);
        }
        None
    }

    /// The ClusterQueues still terminating.
    pub fn names(&self) -> Vec<&str> {
        self.holders.keys().map(String::as_str).collect()
    }
}

#[cfg(test)]
#[path = "transition_tests.rs"]
mod tests;
