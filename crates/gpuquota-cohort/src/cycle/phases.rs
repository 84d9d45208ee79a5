//! The phases of one scheduling cycle ([`Scheduler::run_cycle`]), one method each, in the
//! order of upstream's `schedule` (kubernetes-sigs/kueue: `pkg/scheduler/scheduler.go`):
//! heads, snapshot, nominate, order, process, requeue, evictions. Processing (phase 5) is
//! split once more per entry: the overlap recomputation, the reservation of a head without
//! candidates, the fit check against the snapshot without the cycle's victims, and the
//! admission.

use std::collections::BTreeSet;

use gpuquota_model::Amount;

use super::preemption_message;
use super::{AdmittedRecord, Entry, Policy, PreemptedRecord, Requeue, Scheduler};
use crate::assign::Mode;
use crate::explain::Pending;
use crate::preempt::{PreemptReason, Reservation, Target, add_reservation, remove_reservation};
use crate::tree::{FrId, NodeId, Usage};
use crate::world::{CqId, FlavorId, QueueRef, ReclaimPolicy, ResourceId, WlId, World};

/// What processing the entries of one cycle carries from entry to entry.
struct Processing {
    /// The cycle (1-based).
    cycle: u32,
    /// The cycle's snapshot (usage counters), as processing has left it.
    snapshot: Usage,
    /// The snapshot with every victim chosen so far removed (built at the first victim, then
    /// kept in step with the snapshot): the fit check of each later entry then removes only
    /// its own new targets instead of every victim of the cycle.
    snap_wo: Option<Usage>,
    /// Every target chosen this cycle, with its preemptor and the preemptor's ordering level.
    victims: Vec<(Target, WlId, u32)>,
    /// The workloads of `victims`.
    victim_set: BTreeSet<WlId>,
    /// The heads that go back to their queues at the end of the cycle, and how.
    requeue: Vec<(WlId, CqId, Requeue)>,
    /// The borrowing level the ordering saw, per entry.
    sort_borrowing: Vec<u32>,
}

impl Processing {
    /// Adds `amount` of `fr` at `node` to the snapshot and to the snapshot without victims.
    fn add(&mut self, world: &World, node: NodeId, fr: FrId, amount: Amount) {
        world.tree.add_usage(&mut self.snapshot, node, fr, amount);
        if let Some(w) = self.snap_wo.as_mut() {
            world.tree.add_usage(w, node, fr, amount);
        }
    }
}

impl<P: Policy> Scheduler<'_, P> {
    /// Runs one scheduling cycle. Returns false when no ClusterQueue had a head (nothing ran).
    ///
    /// # Complexity
    /// O(N·F + H × (assignment + preemption)) for N nodes, F flavor-resources and H heads.
    pub fn run_cycle(&mut self) -> bool {
        // 1. heads
        let heads = self.heads();
        if heads.is_empty() {
            return false;
        }
        self.cycle += 1;
        // 2. snapshot (usage counters only)
        let mut p = Processing {
            cycle: self.cycle,
            snapshot: self.usage.clone(),
            snap_wo: None,
            victims: Vec::new(),
            victim_set: BTreeSet::new(),
            requeue: Vec::new(),
            sort_borrowing: Vec::new(),
        };
        // 3. nominate
        let mut entries = self.nominate(&heads, &mut p);
        // 4. order
        self.policy.order(&self.world, &p.snapshot, &mut entries);
        p.sort_borrowing = entries.iter().map(|e| e.assignment.borrowing).collect();
        // 5. process
        self.process(&mut entries, &mut p);
        // 6. requeue
        self.requeue_heads(std::mem::take(&mut p.requeue));
        // 7. evictions at the end of the cycle
        self.evict_victims(std::mem::take(&mut p.victims), p.cycle);
        true
    }

    /// Phase 1: pops one head per active ClusterQueue (its sticky preemptor while that is
    /// still queued, else the policy's pick) and records which ClusterQueues had one.
    ///
    /// # Complexity
    /// O(ClusterQueues × log W).
    fn heads(&mut self) -> Vec<(WlId, CqId)> {
        let world_arc = std::sync::Arc::clone(&self.world);
        let world: &World = &world_arc;
        let mut heads: Vec<(WlId, CqId)> = Vec::new();
        self.last_heads.clear();
        for c in world.cluster_queues.ids() {
            if world.cluster_queues[c].inactive.is_some() || self.held.get(c) == Some(&true) {
                continue;
            }
            let head = match self.sticky[c] {
                Some(s) if self.in_heap(s) => {
                    self.dequeue(s);
                    Some(s)
                }
                _ => {
                    let mut queued = self.queues[c].iter().map(|k| k.3);
                    let pick = self.policy.head(world, c, &mut queued);
                    if let Some(w) = pick {
                        self.dequeue(w);
                    }
                    pick
                }
            };
            if let Some(h) = head {
                heads.push((h, c));
                self.last_heads.push(c);
            }
        }
        heads
    }

    /// Phase 3: checks every head's namespace and ResourceQuotas, then assigns flavors (and
    /// preemption targets) against the snapshot; a head failing a check is requeued.
    ///
    /// # Complexity
    /// O(H × (assignment + preemption)).
    fn nominate(&mut self, heads: &[(WlId, CqId)], p: &mut Processing) -> Vec<Entry> {
        let world_arc = std::sync::Arc::clone(&self.world);
        let world: &World = &world_arc;
        let cycle = p.cycle;
        let mut entries: Vec<Entry> = Vec::new();
        for &(wl, cq) in heads {
            if !self.namespace_matches(wl, cq) {
                self.pending[wl] = Some(Pending::NamespaceMismatch);
                p.requeue.push((wl, cq, Requeue::Namespace));
                continue;
            }
            let full_counts: Vec<i32> = world.workloads[wl]
                .pod_sets
                .iter()
                .map(|p| p.count)
                .collect();
            if let Some(v) = self.resource_quota_violation(wl, &full_counts) {
                self.pending[wl] = Some(v);
                p.requeue.push((wl, cq, Requeue::Default));
                continue;
            }
            // upstream `lastAssignmentOutdated` (FlavorFungibilityPreserveScanProgress on): the
            // scan progress of the current or previous cycle is kept; an older one only while
            // no workload left this ClusterQueue since (with the gate off: only that)
            let gen_node = world.cluster_queues[cq].node;
            let recent = world
                .feature_gates
                .flavor_fungibility_preserve_scan_progress;
            let last = match &self.last_tried[wl] {
                Some((l, c, g))
                    if (recent && *c + 1 >= cycle) || *g >= self.generation[gen_node] =>
                {
                    Some(l.clone())
                }
                _ => None,
            };
            let (assignment, targets) =
                self.get_assignments(&mut p.snapshot, wl, cq, last.as_ref(), None);
            // upstream `recordAssignment`: every nominated assignment becomes the scan progress
            self.last_tried[wl] = Some((assignment.last_tried(), cycle, self.generation[gen_node]));
            entries.push(Entry {
                wl,
                cq,
                assignment,
                targets,
                preemptor: self.preemptor[cq] == Some(wl),
                queue_order: self.queue_order(wl),
            });
        }
        entries
    }

    /// Phase 5: processes the entries in the order the policy pops them.
    ///
    /// # Complexity
    /// O(entries × (fit check + targets)).
    fn process(&mut self, entries: &mut [Entry], p: &mut Processing) {
        let mut step = 0usize;
        while step < entries.len() {
            // upstream `iterator.pop()`: the policy may pick from the snapshot as processing
            // left it (the fair-sharing tournament does)
            let Some(ei) = self
                .policy
                .next(&self.world, &p.snapshot, entries, step)
                .filter(|&i| i < entries.len())
            else {
                break;
            };
            step += 1;
            self.process_entry(entries, ei, p);
        }
    }

    /// One entry of phase 5: skipped (no fit, no candidates, deferred, overlapping targets,
    /// no longer fitting, a ResourceQuota), preempting (its targets become victims), or
    /// admitted.
    ///
    /// # Complexity
    /// O(targets × frs × depth + log W).
    fn process_entry(&mut self, entries: &mut [Entry], ei: usize, p: &mut Processing) {
        let world_arc = std::sync::Arc::clone(&self.world);
        let world: &World = &world_arc;
        let wl = entries[ei].wl;
        let cq = entries[ei].cq;
        let cqi = &world.cluster_queues[cq];
        let node = cqi.node;
        let deferred = self.recompute_if_overlapping(&mut entries[ei], p);
        let e = &entries[ei];
        let mode = e.assignment.mode();
        let reasons = self.pod_set_reasons(wl, &e.assignment);
        if mode == Mode::NoFit {
            let reason = e
                .assignment
                .no_fit_reason
                .unwrap_or(crate::explain::NoFitReason::NoMatchingFlavor);
            self.pending[wl] = Some(Pending::NoFit {
                reason,
                pod_sets: reasons,
            });
            // upstream keeps a preemptor sticky until it is admitted or deleted
            p.requeue.push((wl, cq, Requeue::Default));
            return;
        }
        if mode == Mode::Preempt && e.targets.is_empty() {
            self.pending[wl] = Some(Pending::NoCandidates { pod_sets: reasons });
            p.requeue.push((wl, cq, Requeue::Default));
            // upstream `reserveCapacityForUnreclaimablePreempt`
            if cqi.reclaim != ReclaimPolicy::Any
                || (world.feature_gates.prioritize_preemptor_workloads && e.preemptor)
            {
                reserve_unreclaimable(world, e, node, p);
            }
            return;
        }
        if deferred {
            self.pending[wl] = Some(Pending::DeferredFit);
            self.last_tried[wl] = None;
            for &(fr, req) in &e.assignment.usage {
                p.add(world, node, fr, req);
            }
            if !cqi.strict_fifo {
                self.sticky[cq] = Some(wl);
            }
            self.preemptor[cq] = Some(wl);
            p.requeue.push((wl, cq, Requeue::Immediate));
            return;
        }
        // upstream `markSkipped`: FlavorFungibilityPreserveScanProgress keeps a skipped
        // entry's progress; without it the next cycle scans every flavor again
        let keep = world
            .feature_gates
            .flavor_fungibility_preserve_scan_progress;
        if e.targets.iter().any(|t| p.victim_set.contains(&t.wl)) {
            self.pending[wl] = Some(Pending::OverlappingTargets);
            if !keep {
                self.last_tried[wl] = None;
            }
            p.requeue.push((wl, cq, Requeue::Immediate));
            return;
        }
        if !self.fits_without_victims(e, node, p) {
            self.pending[wl] = Some(Pending::NoLongerFits);
            if !keep {
                self.last_tried[wl] = None;
            }
            p.requeue.push((wl, cq, Requeue::Immediate));
            return;
        }
        let counts: Vec<i32> = e.assignment.pod_sets.iter().map(|p| p.count).collect();
        if mode == Mode::Fit
            && let Some(v) = self.resource_quota_violation(wl, &counts)
        {
            self.pending[wl] = Some(v);
            p.requeue.push((wl, cq, Requeue::Default));
            return;
        }
        for t in &e.targets {
            if p.victim_set.insert(t.wl) {
                let w = p.snap_wo.get_or_insert_with(|| p.snapshot.clone());
                if let Some(r) = &self.reservations[t.wl] {
                    remove_reservation(world, w, r);
                }
            }
        }
        for &(fr, req) in &e.assignment.usage {
            p.add(world, node, fr, req);
        }
        if mode == Mode::Preempt {
            for t in &e.targets {
                p.victims.push((*t, wl, p.sort_borrowing[ei]));
            }
            self.pending[wl] = Some(Pending::WaitingForPreemptions {
                pod_sets: reasons,
                count: e.targets.len(),
            });
            self.last_tried[wl] = None;
            if !cqi.strict_fifo {
                self.sticky[cq] = Some(wl);
            }
            self.preemptor[cq] = Some(wl);
            p.requeue.push((wl, cq, Requeue::Immediate));
            return;
        }
        let sort_borrowing = p.sort_borrowing[ei];
        self.admit_entry(e, sort_borrowing, p);
    }

    /// upstream `updateAssignmentIfNeeded` (RecomputeAssignmentUponPreemptionTargetsOverlap
    /// on): targets already chosen by an earlier entry make the assignment be computed again
    /// on the state those preemptions leave; what then fits without preemption only fits
    /// once they complete. True for such a deferred fit.
    ///
    /// # Complexity
    /// O(targets × log victims), plus one flavor assignment when they overlap.
    fn recompute_if_overlapping(&mut self, e: &mut Entry, p: &mut Processing) -> bool {
        if !self
            .world
            .feature_gates
            .recompute_assignment_upon_preemption_targets_overlap
            || !e.targets.iter().any(|t| p.victim_set.contains(&t.wl))
        {
            return false;
        }
        let pinned: Vec<Vec<(ResourceId, FlavorId)>> = e
            .assignment
            .pod_sets
            .iter()
            .map(|p| p.flavors.iter().map(|f| (f.resource, f.flavor)).collect())
            .collect();
        let (a, t) = self.recompute_without(&mut p.snapshot, e.wl, e.cq, &p.victim_set, &pinned);
        let gen_node = self.world.cluster_queues[e.cq].node;
        self.last_tried[e.wl] = Some((a.last_tried(), p.cycle, self.generation[gen_node]));
        let deferred = a.mode() == Mode::Fit;
        e.assignment = a;
        e.targets = t;
        deferred
    }

    /// Whether the entry fits with every victim chosen so far (and its own targets) removed.
    /// A snapshot's usage depends only on the reservations it holds, not on their order, so
    /// removing the entry's new targets from the snapshot without the earlier victims is the
    /// same; the snapshot is left as it was.
    ///
    /// # Complexity
    /// O(targets × frs × depth).
    fn fits_without_victims(&self, e: &Entry, node: NodeId, p: &mut Processing) -> bool {
        let world_arc = std::sync::Arc::clone(&self.world);
        let world: &World = &world_arc;
        let mut own: Vec<WlId> = e
            .targets
            .iter()
            .map(|t| t.wl)
            .filter(|v| !p.victim_set.contains(v))
            .collect();
        own.sort_unstable();
        own.dedup();
        let base = p.snap_wo.as_mut().unwrap_or(&mut p.snapshot);
        #[cfg(debug_assertions)]
        let restored = base.clone();
        for &v in &own {
            if let Some(r) = &self.reservations[v] {
                remove_reservation(world, base, r);
            }
        }
        let fits = e
            .assignment
            .usage
            .iter()
            .all(|&(fr, req)| req <= world.tree.available(base, node, fr));
        for &v in &own {
            if let Some(r) = &self.reservations[v] {
                add_reservation(world, base, r);
            }
        }
        #[cfg(debug_assertions)]
        {
            debug_assert_eq!(&restored, base, "fit check left its snapshot changed");
            let mut check = p.snapshot.clone();
            for &v in &p.victim_set {
                if let Some(r) = &self.reservations[v] {
                    remove_reservation(world, &mut check, r);
                }
            }
            debug_assert_eq!(
                p.snap_wo.as_ref().unwrap_or(&p.snapshot),
                &check,
                "snapshot without victims out of step"
            );
        }
        fits
    }

    /// Admits a fitting entry: reserves its quota in the cache, updates the queue state and
    /// records the admission.
    ///
    /// # Complexity
    /// O(PodSets × resources + admitted in its queue).
    fn admit_entry(&mut self, e: &Entry, sort_borrowing: u32, p: &mut Processing) {
        let world_arc = std::sync::Arc::clone(&self.world);
        let world: &World = &world_arc;
        let (wl, cq) = (e.wl, e.cq);
        let mut uses: Vec<FrId> = e
            .assignment
            .pod_sets
            .iter()
            .flat_map(|p| p.flavors.iter())
            .filter_map(|f| world.fr(f.flavor, f.resource))
            .collect();
        uses.sort_unstable();
        uses.dedup();
        let res = Reservation {
            cq,
            usage: e.assignment.usage.clone(),
            uses,
            time: (crate::preempt::now(), p.cycle),
            evicted: false,
        };
        add_reservation(world, &mut self.usage, &res);
        self.policy.admitted(world, wl, cq, &e.assignment);
        self.reservations[wl] = Some(res);
        self.insert_admitted(cq, wl);
        self.pending[wl] = None;
        self.last_tried[wl] = None;
        if self.sticky[cq] == Some(wl) {
            self.sticky[cq] = None;
        }
        if self.preemptor[cq] == Some(wl) {
            self.preemptor[cq] = None;
        }
        let wi = &world.workloads[wl];
        let pod_sets = e
            .assignment
            .pod_sets
            .iter()
            .map(|p| {
                let flavors = p
                    .flavors
                    .iter()
                    .map(|f| {
                        (
                            world.resources[f.resource].as_str().to_owned(),
                            world.flavors[f.flavor].name.clone(),
                        )
                    })
                    .collect();
                (wi.pod_sets[p.index].name.clone(), p.count, flavors)
            })
            .collect();
        self.admitted.push(AdmittedRecord {
            wl,
            cq,
            cycle: p.cycle,
            pod_sets,
            borrowing: e.assignment.borrowing,
            sort_borrowing,
        });
    }

    /// Phase 6: every head that was not admitted goes back to its heap or to the
    /// inadmissible set; in BestEffortFIFO a failed head takes the queued workloads of its
    /// scheduling shape with it (SchedulingEquivalenceHashing).
    ///
    /// # Complexity
    /// O(requeued × log W + moved workloads).
    fn requeue_heads(&mut self, requeue: Vec<(WlId, CqId, Requeue)>) {
        let world_arc = std::sync::Arc::clone(&self.world);
        let world: &World = &world_arc;
        for (wl, cq, how) in requeue {
            let cqi = &world.cluster_queues[cq];
            let pending_flavors = self.last_tried[wl]
                .as_ref()
                .is_some_and(|(l, _, _)| l.iter().flatten().any(|x| x.1 >= 0));
            let to_heap = match how {
                Requeue::Namespace => false,
                _ if cqi.strict_fifo => true,
                Requeue::Immediate => true,
                Requeue::Default => pending_flavors,
            };
            if to_heap {
                self.enqueue(wl);
                continue;
            }
            let k = self.heap_key(wl);
            let slot = self.slot[wl];
            self.queues[cq].park(k, slot);
            // SchedulingEquivalenceHashing (beta, on): in BestEffortFIFO a head that does
            // not fit (or finds no candidates) takes every queued workload of the same
            // scheduling shape with it to the inadmissible set
            let equivalent_failure = match &self.pending[wl] {
                Some(Pending::NoFit { reason, .. }) => Some(reason.as_str()),
                Some(Pending::NoCandidates { .. }) => Some("WaitingForQuota"),
                _ => None,
            };
            let mine = self.shape_of(wl);
            if let Some(failed) = equivalent_failure
                && !cqi.strict_fifo
                && self.shared_shapes.contains(&(cq, mine))
            {
                // the queued workloads of the head's shape are exactly its group's
                // active members
                for v in self.queues[cq].park_group(slot) {
                    // upstream's workload controller then shows a workload waiting for
                    // evaluation (an evicted one) with the failed head's reason
                    debug_assert!(matches!(self.pending[v], Some(Pending::Preempted { .. })));
                    self.pending[v] = Some(Pending::Bypassed { reason: failed });
                }
            }
        }
    }

    /// Phase 7: evicts the cycle's victims (their quota is released, each is recorded and
    /// requeued), then brings the inadmissible workloads of every touched cohort tree back
    /// to their heaps.
    ///
    /// # Complexity
    /// O(victims × (admitted in its queue + frs × depth + log W) + moved workloads).
    fn evict_victims(&mut self, victims: Vec<(Target, WlId, u32)>, cycle: u32) {
        let world_arc = std::sync::Arc::clone(&self.world);
        let world: &World = &world_arc;
        let mut touched_roots: BTreeSet<NodeId> = BTreeSet::new();
        for (t, preemptor, sort_borrowing) in victims {
            if self.hold_evictions {
                // the victim keeps its quota until its pods are gone; one eviction only
                if !self.mark_evicting(t.wl) {
                    continue;
                }
                let Some(cq) = self.reservations[t.wl].as_ref().map(|r| r.cq) else {
                    continue;
                };
                let message = preemption_message(world, t.reason, preemptor, t.wl, cq);
                self.pending[t.wl] = Some(Pending::Preempted { message });
                self.preempted.push(PreemptedRecord {
                    wl: t.wl,
                    cq,
                    preemptor,
                    reason: t.reason,
                    cycle,
                    sort_borrowing,
                });
                continue;
            }
            let Some(r) = self.reservations[t.wl].take() else {
                continue;
            };
            remove_reservation(world, &mut self.usage, &r);
            self.by_cq[r.cq].retain(|k| k.4 != t.wl);
            let root = self.tree_root(r.cq);
            touched_roots.insert(root);
            // upstream bumps the AllocatableResourceGeneration of the victim's own queue
            self.generation[world.cluster_queues[r.cq].node] += 1;
            let message = preemption_message(world, t.reason, preemptor, t.wl, r.cq);
            self.pending[t.wl] = Some(Pending::Preempted { message });
            self.preempted.push(PreemptedRecord {
                wl: t.wl,
                cq: r.cq,
                preemptor,
                reason: t.reason,
                cycle,
                sort_borrowing,
            });
            // upstream `GetQueueOrderTimestamp` with PrioritySortingWithinCohort off: a
            // workload preempted while its preemptor borrows queues 1 ms after the preemption
            if !world.feature_gates.priority_sorting_within_cohort {
                if t.reason == PreemptReason::InCohortReclaimWhileBorrowing {
                    self.requeued_at.insert(t.wl, eviction_queue_time());
                } else {
                    self.requeued_at.remove(&t.wl);
                }
            }
            // requeue the victim in its own queue
            let w = &world.workloads[t.wl];
            if let QueueRef::Cq(c) = w.queue
                && world.cluster_queues[c].inactive.is_none()
                && w.active
            {
                let k = self.heap_key(t.wl);
                self.queues[c].insert_evicted(k, self.slot[t.wl]);
            }
        }
        // inadmissible workloads of every touched tree go back to their heaps
        for root in touched_roots {
            for i in 0..self.tree_cqs[root].len() {
                let c = self.tree_cqs[root][i];
                self.queues[c].unpark_all();
            }
        }
    }
}

/// The queue time of a workload preempted with reason `InCohortReclaimWhileBorrowing` under
/// `PrioritySortingWithinCohort` off: one millisecond after the run's "now"
/// ([`crate::preempt::now`]), so after every timestamp of the input.
fn eviction_queue_time() -> gpuquota_model::Timestamp {
    let now = crate::preempt::now();
    gpuquota_model::Timestamp::from_unix(now.unix_seconds(), 1_000_000).unwrap_or(now)
}

/// A head without preemption candidates in a ClusterQueue that does not reclaim with `Any`
/// reserves the capacity it could use, so that later entries cannot take it this cycle.
///
/// # Complexity
/// O(frs × depth).
fn reserve_unreclaimable(world: &World, e: &Entry, node: NodeId, p: &mut Processing) {
    for &(fr, req) in &e.assignment.usage {
        let q = world.tree.quota(node, fr);
        let used = world.tree.usage(&p.snapshot, node, fr);
        let reserve = if e.assignment.borrowing > 0 {
            match q.borrowing_limit {
                None => req,
                Some(bl) => req.min(q.nominal.saturating_add(bl).saturating_sub(used)),
            }
        } else {
            req.min(q.nominal.saturating_sub(used)).max(Amount::ZERO)
        };
        if reserve > Amount::ZERO {
            p.add(world, node, fr, reserve);
        }
    }
}
