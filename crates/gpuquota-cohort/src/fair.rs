//! Kueue's fair sharing as a [`Policy`] (upstream
//! `fair_sharing_iterator.go`, `preemption.go` `fairPreemptions`, `preemption/fairsharing/*`),
//! built on the `gpuquota-fairshare` crate.
//!
//! The fair-sharing algorithms read the engine's own quota forest and cycle snapshot through
//! [`ForestView`], this engine's implementation of [`gpuquota_fairshare::view::QuotaView`]
//! (an index built once adds the weights, `SubtreeQuota` keys and lendable amounts), so dominant
//! resource shares are always computed from exactly the numbers the engine admits against,
//! with no second tree to keep in step.
//!
//! * **Entry order** (upstream `makeFairSharingIterator`): each cycle's heads run the DRS
//!   tournament of [`gpuquota_fairshare::order::FairSharingOrder`], one pop per processed
//!   entry, so an entry admitted (or preempting, or reserving capacity) earlier in the cycle
//!   raises its subtree's share for the next pops. The gates `FairSharingPrioritizeNonBorrowing`
//!   and `PrioritySortingWithinCohort` (on by default) are the tournament's options; with
//!   `PrioritizePreemptorWorkloads` on, heads waiting for their preemptions run their own
//!   tournament first (upstream's comparer ranks them first at every level of a cohort tree;
//!   across cohort trees, whose order upstream leaves open, they also go first here).
//! * **Preemption** (upstream `fairPreemptions`): candidates are the preemptor queue's own
//!   workloads allowed by `withinClusterQueue` and, when the queue has a cohort and
//!   `reclaimWithinCohort` is not `Never`, the workloads of every other active ClusterQueue
//!   of the whole cohort tree that borrows on a flavor-resource needing preemption, allowed by
//!   `reclaimWithinCohort` (`borrowWithinCohort` is ignored, as upstream); each candidate must
//!   use a flavor-resource needing preemption. They are sorted by upstream's
//!   `CandidatesOrdering` (evicted first, other queues before the own queue, lower priority,
//!   most recently admitted, UID) and handed to
//!   [`gpuquota_fairshare::preemption::fair_preemptions`] with the configured strategies
//!   (default `[LessThanOrEqualToFinalShare, LessThanInitialShare]`) and the
//!   `FairSharingPreemptWithinNominal` gate (on by default). Reasons: `InClusterQueue` for the own queue,
//!   `InCohortReclamation` when the preemptor stays within nominal, `InCohortFairSharing`
//!   otherwise. The fit check runs on the engine's own snapshot.
//! * **Flavor assignment**: under fair sharing a flavor that needs preemption is simulated
//!   whenever `reclaimWithinCohort` is not `Never` (upstream `canPreemptWhileBorrowing`).
//! * **Admission fair sharing** (KEP-4136; gate `AdmissionFairSharing` on, so it needs only the
//!   Configuration's `admissionFairSharing` and works with or without `fairSharing`): in a
//!   ClusterQueue with `admissionScope.admissionMode: UsageBasedAdmissionFairSharing` the
//!   cycle's head is the queued workload whose LocalQueue has the lowest weighted usage
//!   (`Σ resourceWeight · (consumed + penalty) / LocalQueue weight`; ties keep priority,
//!   queue time, UID). `consumed` is read from the LocalQueue's
//!   `status.fairSharing.admissionFairSharingStatus.consumedResources` (0 when absent); each
//!   admission during the run charges its LocalQueue the entry penalty
//!   `α(usageSamplingInterval) · requests`. Fair-sharing preemption orders candidates of one
//!   such queue by higher LocalQueue usage first (`CandidatesOrdering` step 3).
//!
//! Over virtual time (a simulator drives [`Policy::clock`] with [`ClockEvent`]s) the
//! LocalQueues' usage is sampled, decayed and settled as upstream's controllers do it; see
//! [`crate::afs_clock`].
//!
//! Deliberate deviations: on a snapshot (`kueue schedule`, no clock) no usage sampling happens
//! during a run, so entry penalties accumulate instead of being settled into `consumed`; the entry penalty
//! counts the requests the ClusterQueue covers (upstream: all requests, unless
//! `IgnoreUndeclared`); the LocalQueue-usage step of `CandidatesOrdering` also separates
//! candidates of two different admission-fair-sharing queues (upstream compares only within
//! one queue), which can only change which of two equal-share target queues is visited
//! first; classical preemption does not apply that step.
//!
//! ```
//! use gpuquota_cohort::{Input, Options, run};
//! use gpuquota_model::import_str;
//!
//! // Two queues of 4 GPUs share a cohort; "a" runs 6 (borrows 2), "b" now wants its 4 back.
//! let mut yaml = String::from("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: gpu}\n");
//! for cq in ["a", "b"] {
//!     yaml += &format!("---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {cq}}}\nspec:\n  cohortName: org\n  namespaceSelector: {{}}\n  preemption: {{reclaimWithinCohort: Any}}\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors: [{{name: gpu, resources: [{{name: nvidia.com/gpu, nominalQuota: 4}}]}}]\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: {cq}, namespace: ns}}\nspec: {{clusterQueue: {cq}}}\n");
//! }
//! for (name, q, gpus, admitted) in [("a1", "a", 3, true), ("a2", "a", 3, true), ("b1", "b", 4, false)] {
//!     yaml += &format!("---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: {name}, namespace: ns}}\nspec:\n  queueName: {q}\n  podSets: [{{name: main, count: 1, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: \"{gpus}\"}}}}}}]}}}}}}]\n");
//!     if admitted {
//!         yaml += &format!("status:\n  admission:\n    clusterQueue: {q}\n    podSetAssignments: [{{name: main, count: 1, flavors: {{nvidia.com/gpu: gpu}}, resourceUsage: {{nvidia.com/gpu: \"{gpus}\"}}}}]\n");
//!     }
//! }
//! let model = import_str("fs.yaml", &yaml).unwrap().model;
//! // fair sharing on without a Configuration that turns it on
//! let input = Input::from_model(&model, &Options::default().with_fair_sharing(true)).unwrap();
//! assert!(input.fair_sharing());
//! let report = run(&input);
//! // b is within nominal: it reclaims one of a's workloads, then is admitted.
//! assert_eq!(report.preempted.len(), 1);
//! assert_eq!(report.preempted[0].reason, "InCohortReclamation");
//! assert_eq!(report.admitted[0].workload, "ns/b1");
//! ```

use gpuquota_fairshare::afs::{LocalQueueUsage, ResourceAmounts, entry_penalty, quantity_to_f64};
use gpuquota_fairshare::config::{AdmissionFairSharingSettings, FairSharingSettings};
use gpuquota_fairshare::drs::parse_weight;
use gpuquota_fairshare::order::{FairSharingOrder, Head, OrderOptions};
use gpuquota_fairshare::preemption::{
    Candidate, PreemptionReason, PreemptionRequest, fair_preemptions,
};
use gpuquota_fairshare::{FairShareError, FlavorResource, FrQuantities};
#[cfg(feature = "serde")]
use gpuquota_model::ResourceName;
use gpuquota_model::kueue::AdmissionMode;
use gpuquota_model::{Amount, Model, Quantity};
use ordered_float::OrderedFloat;

use crate::afs_clock::{Ledger, Nanos, mul_by_float};
use crate::assign::Assignment;
use crate::cycle::{Classical, Entry, Policy};
use crate::ids::Table;
use crate::preempt::{Admitted, PreemptReason, Target};
use crate::tree::{FrId, NodeKind, Usage};

mod view;
use crate::world::{CqId, ReclaimPolicy, WithinPolicy, WlId, World};
use view::FairIndex;
pub use view::ForestView;

/// Kueue's fair-sharing ordering and preemption (see the module docs).
#[derive(Debug, Clone)]
pub struct FairSharing {
    /// What fair sharing adds to the engine's quota forest (weights, `SubtreeQuota` keys,
    /// lendable amounts); the usage is always the scheduler's own snapshot.
    index: FairIndex,
    settings: FairSharingSettings,
    options: OrderOptions,
    order: Option<FairSharingOrder>,
    /// Under `PrioritizePreemptorWorkloads`, when some heads wait for their preemptions:
    /// their own tournament (popped first), their entry indices, and the entry indices of
    /// the heads in [`FairSharing::order`].
    preemptors: Option<(FairSharingOrder, Vec<usize>, Vec<usize>)>,
    afs: Option<Afs>,
}

/// Admission fair sharing state (kubernetes-sigs/kueue: `pkg/util/admissionfairsharing`).
#[derive(Debug, Clone)]
struct Afs {
    settings: AdmissionFairSharingSettings,
    /// `admissionScope.admissionMode: UsageBasedAdmissionFairSharing`, by ClusterQueue.
    cq_on: Table<CqId, bool>,
    /// LocalQueue index of every workload.
    wl_lq: Table<WlId, Option<usize>>,
    /// `spec.fairSharing.weight` of every LocalQueue (1 when unset or missing).
    lq_weight: Vec<f64>,
    /// Consumed usage (from the LocalQueue's status) and entry penalties of the run.
    lq_usage: Vec<LocalQueueUsage>,
    /// `consumedResources` of every LocalQueue's status in nano-units (the clock's seed).
    seed: Vec<Nanos>,
    /// `namespace/name` of every LocalQueue.
    lq_keys: Vec<String>,
    /// Usage over virtual time, once a simulator started the clock ([`ClockEvent::Start`]).
    clock: Option<AfsClock>,
}

/// The LocalQueues' ledgers over virtual time (see [`crate::afs_clock`]).
#[derive(Debug, Clone)]
struct AfsClock {
    ledgers: Vec<Ledger>,
    /// Next sample of every LocalQueue: (ms, LocalQueue).
    due: std::collections::BTreeSet<(i64, usize)>,
    /// `CalculateUsage` of every LocalQueue as its ledger stands.
    weighted: Vec<f64>,
    interval_ms: i64,
}

impl Afs {
    fn build(world: &World, model: &Model, settings: AdmissionFairSharingSettings) -> Afs {
        let cq_on = world
            .cluster_queues
            .iter()
            .map(|c| {
                model.cluster_queues.get(&c.name).is_some_and(|o| {
                    o.spec
                        .admission_scope
                        .as_ref()
                        .and_then(|a| a.admission_mode.as_ref())
                        == Some(&AdmissionMode::UsageBasedAdmissionFairSharing)
                })
            })
            .collect();
        let mut keys: Vec<String> = Vec::new();
        let wl_lq = world
            .workloads
            .iter()
            .map(|w| {
                let q = model.workloads.get(&w.key)?.spec.queue_name.as_deref()?;
                let key = format!("{}/{q}", w.namespace);
                Some(match keys.iter().position(|k| *k == key) {
                    Some(i) => i,
                    None => {
                        keys.push(key);
                        keys.len() - 1
                    }
                })
            })
            .collect();
        let mut lq_weight = Vec::with_capacity(keys.len());
        let mut lq_usage = Vec::with_capacity(keys.len());
        let mut seed = Vec::with_capacity(keys.len());
        for k in &keys {
            let lq = model.local_queues.get(k);
            lq_weight.push(
                lq.and_then(|l| l.spec.fair_sharing.as_ref())
                    .and_then(|f| f.weight.as_ref())
                    .map_or(1.0, quantity_to_f64),
            );
            #[cfg_attr(not(feature = "serde"), allow(unused_mut))]
            let mut u = LocalQueueUsage::default();
            #[cfg_attr(not(feature = "serde"), allow(unused_mut))]
            let mut nanos = Nanos::new();
            // The status is kept verbatim only with the `serde` feature.
            #[cfg(feature = "serde")]
            let consumed = lq
                .and_then(|l| l.status.as_ref())
                .and_then(|s| s.get("fairSharing"))
                .and_then(|f| f.get("admissionFairSharingStatus"))
                .and_then(|a| a.get("consumedResources"))
                .and_then(|c| c.as_object());
            #[cfg(feature = "serde")]
            for (r, v) in consumed.into_iter().flatten() {
                if let Ok(q) = serde_json::from_value::<Quantity>(v.clone()) {
                    u.consumed
                        .insert(ResourceName::new(r.clone()), quantity_to_f64(&q));
                    nanos.insert(ResourceName::new(r.clone()), quantity_nanos(&q));
                }
            }
            lq_usage.push(u);
            seed.push(nanos);
        }
        Afs {
            settings,
            cq_on,
            wl_lq,
            lq_weight,
            lq_usage,
            seed,
            lq_keys: keys,
            clock: None,
        }
    }

    fn half_life(&self) -> i128 {
        self.settings.usage_half_life_nanos
    }

    /// Recomputes one LocalQueue's ordering key after its ledger changed.
    fn refresh(&mut self, lq: usize) {
        if let Some(c) = self.clock.as_mut() {
            c.weighted[lq] =
                c.ledgers[lq].weighted(&self.settings.resource_weights, self.lq_weight[lq]);
        }
    }

    /// The LocalQueue controller's reconcile at `now_ms`: a decay step (with a half-life of 0,
    /// `consumed` is reset to empty), and the next sample one interval later.
    fn sample(&mut self, lq: usize, now_ms: i64) {
        let hl = self.half_life();
        let Some(c) = self.clock.as_mut() else { return };
        let l = &mut c.ledgers[lq];
        c.due.remove(&(l.last_update + c.interval_ms, lq));
        if hl == 0 {
            l.consumed.clear();
            l.last_update = now_ms;
        } else {
            l.decay(now_ms, hl);
        }
        c.due.insert((l.last_update + c.interval_ms, lq));
        self.refresh(lq);
    }

    /// The clock's events (see [`ClockEvent`]).
    ///
    /// # Complexity
    /// Start: O(LocalQueues × resources); Advance: O(samples due × resources × log LocalQueues);
    /// RunStarted / RunEnded: O(resources × log LocalQueues).
    fn clock_event(&mut self, world: &World, event: &ClockEvent<'_>) {
        match *event {
            ClockEvent::Start(now) => {
                let interval_ms = (self.settings.usage_sampling_interval_nanos / 1_000_000)
                    .clamp(1, i128::from(i64::MAX / 4)) as i64;
                let n = self.seed.len();
                self.clock = Some(AfsClock {
                    ledgers: self
                        .seed
                        .iter()
                        .map(|s| Ledger {
                            consumed: s.clone(),
                            last_update: now,
                            ..Ledger::default()
                        })
                        .collect(),
                    due: std::collections::BTreeSet::new(),
                    weighted: vec![0.0; n],
                    interval_ms,
                });
                for lq in 0..n {
                    self.sample(lq, now);
                }
            }
            ClockEvent::Advance(now) => {
                while let Some(&(t, lq)) = self.clock.as_ref().and_then(|c| c.due.first()) {
                    if t > now {
                        break;
                    }
                    self.sample(lq, t);
                }
            }
            ClockEvent::RunStarted { wl, usage, at } => {
                let Some(lq) = self.wl_lq.get(wl).copied().flatten() else {
                    return;
                };
                let hl = self.half_life();
                let on = match world.workloads[wl].queue {
                    crate::world::QueueRef::Cq(c) => self.cq_on[c],
                    _ => false,
                };
                let Some(c) = self.clock.as_mut() else { return };
                let l = &mut c.ledgers[lq];
                for (r, v) in usage_nanos(world, usage) {
                    let e = l.admitted.entry(r).or_insert(0);
                    *e = e.saturating_add(v);
                }
                if on {
                    // the workload controller settles the penalty when it becomes Admitted
                    c.due.remove(&(l.last_update + c.interval_ms, lq));
                    l.decay(at, hl);
                    if let Some(p) = l.penalties.remove(&wl) {
                        for (r, v) in p {
                            let e = l.consumed.entry(r).or_insert(0);
                            *e = e.saturating_add(v);
                        }
                    }
                    c.due.insert((l.last_update + c.interval_ms, lq));
                }
                self.refresh(lq);
            }
            ClockEvent::RunEnded { wl, usage, .. } => {
                let Some(lq) = self.wl_lq.get(wl).copied().flatten() else {
                    return;
                };
                let Some(c) = self.clock.as_mut() else { return };
                let l = &mut c.ledgers[lq];
                for (r, v) in usage_nanos(world, usage) {
                    if let Some(e) = l.admitted.get_mut(&r) {
                        *e = e.saturating_sub(v).max(0);
                    }
                }
                l.penalties.remove(&wl);
                self.refresh(lq);
            }
        }
    }

    /// The weighted usage of the workload's LocalQueue (0 without one).
    fn usage(&self, wl: WlId) -> f64 {
        match self.wl_lq.get(wl).copied().flatten() {
            Some(i) => self.lq_usage_of(i),
            None => 0.0,
        }
    }

    /// The weighted usage of LocalQueue `i`.
    fn lq_usage_of(&self, i: usize) -> f64 {
        match &self.clock {
            Some(c) => c.weighted[i],
            None => {
                self.lq_usage[i].weighted_usage(&self.settings.resource_weights, self.lq_weight[i])
            }
        }
    }
}

/// A quantity in nano-units of its base unit, rounded up as Kubernetes rounds a finer value.
#[cfg_attr(not(feature = "serde"), allow(dead_code))]
fn quantity_nanos(q: &Quantity) -> i128 {
    let (m, e) = q.as_decimal();
    let shift = e + 9;
    if shift >= 0 {
        10i128
            .checked_pow(shift as u32)
            .and_then(|p| m.checked_mul(p))
            .unwrap_or(i128::MAX)
    } else {
        match 10i128.checked_pow((-shift) as u32) {
            Some(p) => (m + p - 1).div_euclid(p),
            None => i128::from(m > 0),
        }
    }
}

/// A reservation's usage per resource (flavors summed) in nano-units of the base unit.
fn usage_nanos(world: &World, usage: &[(FrId, Amount)]) -> Nanos {
    let mut out = Nanos::new();
    for &(fr, a) in usage {
        let r = world.fr_resource(fr);
        // the engine counts CPU in millicores, everything else in its base unit
        let scale: i128 = if r.is_cpu() { 1_000_000 } else { 1_000_000_000 };
        let e = out.entry(r.clone()).or_insert(0);
        *e = e.saturating_add(i128::from(a.0).saturating_mul(scale));
    }
    out
}

/// What a simulator tells the policy as virtual time passes (see [`Policy::clock`]);
/// admission fair sharing keeps its LocalQueues' usage with it ([`crate::afs_clock`]).
#[derive(Debug, Clone, Copy)]
pub enum ClockEvent<'a> {
    /// Time starts (ms since start): the LocalQueues' ledgers are created from their status.
    Start(i64),
    /// Time reached this instant (ms): every sample due at or before it runs.
    Advance(i64),
    /// A workload admitted by a cycle becomes Admitted and runs with `usage`.
    RunStarted {
        /// The workload.
        wl: WlId,
        /// Its reservation's usage.
        usage: &'a [(FrId, Amount)],
        /// ms since start.
        at: i64,
    },
    /// A workload's run ended (finished or evicted); its usage leaves its LocalQueue.
    RunEnded {
        /// The workload.
        wl: WlId,
        /// Its reservation's usage.
        usage: &'a [(FrId, Amount)],
        /// ms since start.
        at: i64,
    },
}

impl FairSharing {
    /// Builds the policy for `world` (weights, admission scopes and LocalQueues come from
    /// `model`, the manifests `world` was built from) with validated `settings`: fair sharing
    /// when `settings.enabled` (otherwise the classical order and preemption), admission fair
    /// sharing when `settings.admission` is set.
    ///
    /// # Errors
    /// An invalid `fairSharing.weight` (negative, or in `(0, 1e-9]`).
    ///
    /// # Complexity
    /// O(N·F + N log N) for N nodes and F flavor-resources.
    pub fn new(
        world: &World,
        model: &Model,
        settings: FairSharingSettings,
    ) -> Result<FairSharing, FairShareError> {
        let mut weights = Vec::with_capacity(world.tree.nodes.len());
        for node in &world.tree.nodes {
            let (object, w) = match node.kind {
                NodeKind::Cohort => (
                    format!("Cohort \"{}\"", node.name),
                    model
                        .cohorts
                        .get(&node.name)
                        .and_then(|c| c.spec.fair_sharing.as_ref())
                        .and_then(|f| f.weight.as_ref()),
                ),
                NodeKind::ClusterQueue(_) => (
                    format!("ClusterQueue \"{}\"", node.name),
                    model
                        .cluster_queues
                        .get(&node.name)
                        .and_then(|c| c.spec.fair_sharing.as_ref())
                        .and_then(|f| f.weight.as_ref()),
                ),
            };
            weights.push(parse_weight(&object, w)?);
        }
        Ok(FairSharing {
            index: FairIndex::new(world, weights),
            afs: settings
                .admission
                .clone()
                .map(|a| Afs::build(world, model, a)),
            settings,
            options: OrderOptions::default(),
            order: None,
            preemptors: None,
        })
    }

    /// The settings in force.
    pub fn settings(&self) -> &FairSharingSettings {
        &self.settings
    }

    /// The engine's quota forest with `usage` (a snapshot of `world`, the world this policy
    /// was built for), as the fair-sharing algorithms read it: dominant resource shares with
    /// [`gpuquota_fairshare::view::drs`], quota numbers through
    /// [`gpuquota_fairshare::view::QuotaView`].
    pub fn view<'a>(&'a self, world: &'a World, usage: &'a Usage) -> ForestView<'a, &'a Usage> {
        ForestView::new(&world.tree, &self.index, usage)
    }

    fn quantities(&self, usage: &[(FrId, Amount)]) -> FrQuantities {
        let mut out = FrQuantities::new();
        for &(fr, a) in usage {
            let slot = out
                .entry(self.index.fr_names[fr].clone())
                .or_insert(Amount::ZERO);
            *slot = slot.saturating_add(a);
        }
        out
    }
}

fn uses_any(admitted: &Admitted<'_>, wl: WlId, frs: &[FrId]) -> bool {
    admitted.reservations[wl]
        .as_ref()
        .is_some_and(|r| frs.iter().any(|f| r.uses.binary_search(f).is_ok()))
}

/// The order of fair-sharing preemption candidates (upstream `CandidatesOrdering`):
/// evicted first, other ClusterQueues before the preemptor's, (admission fair sharing, same
/// queue) higher LocalQueue usage, then the per-queue key (priority, recency, UID).
type FairSortKey = (
    u8,
    u8,
    std::cmp::Reverse<OrderedFloat<f64>>,
    crate::preempt::CandKey,
);

impl Policy for FairSharing {
    /// Prepares the tournament over the cycle's heads (the entries keep the classical order,
    /// which only serves as a fallback).
    ///
    /// # Complexity
    /// O(E log E + N) for E entries and N nodes (the tournament starts with every node to compute).
    fn order(&mut self, world: &World, snapshot: &Usage, entries: &mut [Entry]) {
        Classical.order(world, snapshot, entries);
        self.order = None;
        self.preemptors = None;
        if !self.settings.enabled {
            return;
        }
        let gates = world.feature_gates;
        self.options = OrderOptions {
            prioritize_non_borrowing: gates.fair_sharing_prioritize_non_borrowing,
            priority_sorting_within_cohort: gates.priority_sorting_within_cohort,
        };
        let head = |e: &Entry| {
            let w = &world.workloads[e.wl];
            Head {
                cluster_queue: world.cluster_queues[e.cq].name.clone(),
                workload: w.key.clone(),
                priority: i64::from(w.priority),
                queue_order: e.queue_order,
                usage: self.quantities(&e.assignment.usage),
            }
        };
        // upstream's comparer puts a head waiting for its preemptions before any other at
        // every level of the tournament: within a cohort tree that is the tournament of those
        // heads first, then the tournament of the others
        if gates.prioritize_preemptor_workloads && entries.iter().any(|e| e.preemptor) {
            let (first, rest): (Vec<usize>, Vec<usize>) =
                (0..entries.len()).partition(|&i| entries[i].preemptor);
            let view = ForestView::new(&world.tree, &self.index, snapshot);
            let po = FairSharingOrder::new(
                &view,
                first.iter().map(|&i| head(&entries[i])).collect(),
                self.options,
            );
            let ro = FairSharingOrder::new(
                &view,
                rest.iter().map(|&i| head(&entries[i])).collect(),
                self.options,
            );
            if let (Ok(po), Ok(ro)) = (po, ro) {
                self.order = Some(ro);
                self.preemptors = Some((po, first, rest));
            }
            return;
        }
        let heads = entries.iter().map(head).collect();
        let view = ForestView::new(&world.tree, &self.index, snapshot);
        self.order = FairSharingOrder::new(&view, heads, self.options).ok();
    }

    /// The tournament's next winner over the snapshot as the cycle left it.
    ///
    /// Between two pops the scheduler changes the snapshot only on the path of the popped
    /// entry's ClusterQueue (a target search in between restores it exactly), and the
    /// tournament recomputes that path by itself, so its cache stays exact without any copy.
    ///
    /// # Complexity
    /// The tournament's recomputation of the changed path (see
    /// [`FairSharingOrder::next_head`]).
    fn next(
        &mut self,
        world: &World,
        snapshot: &Usage,
        entries: &[Entry],
        step: usize,
    ) -> Option<usize> {
        let Some(order) = self.order.as_mut() else {
            return (step < entries.len()).then_some(step);
        };
        let view = ForestView::new(&world.tree, &self.index, snapshot);
        if let Some((po, first, rest)) = self.preemptors.as_mut() {
            if let Some(h) = po.next_head(&view) {
                let ei = first[h];
                // the popped entry changes the snapshot on its queue's path only
                order.invalidate(&view, &world.cluster_queues[entries[ei].cq].name);
                return Some(ei);
            }
            return order.next_head(&view).map(|h| rest[h]);
        }
        order.next_head(&view)
    }

    /// Upstream `fairPreemptions` (see the module docs). `snapshot` is left as it was.
    ///
    /// # Complexity
    /// O(Q + C log C) to collect and sort C candidates among Q ClusterQueues, plus
    /// [`fair_preemptions`]'s cost with an O(R·depth) fit check per step (R requested flavor-resources).
    fn targets(
        &mut self,
        admitted: &Admitted<'_>,
        snapshot: &mut Usage,
        cq: CqId,
        wl: WlId,
        requests: &[(FrId, Amount)],
        frs_need: &[FrId],
    ) -> Vec<Target> {
        if !self.settings.enabled {
            return admitted.targets(snapshot, cq, wl, requests, frs_need);
        }
        let found = self.fair_candidates(admitted, snapshot, cq, wl, frs_need);
        if found.is_empty() {
            return Vec::new();
        }
        self.fair_targets(admitted, snapshot, cq, requests, frs_need, &found)
    }

    /// Under admission fair sharing (for a ClusterQueue whose admission scope asks for it),
    /// the queued workload of the LocalQueue with the lowest weighted usage; ties keep the
    /// heap order (priority, queue time, UID).
    ///
    /// # Complexity
    /// O(Q) for Q queued workloads of an admission-fair-sharing queue, else O(1).
    fn head(
        &mut self,
        _world: &World,
        cq: CqId,
        queued: &mut dyn Iterator<Item = WlId>,
    ) -> Option<WlId> {
        let Some(afs) = self.afs.as_ref().filter(|a| a.cq_on[cq]) else {
            return queued.next();
        };
        let mut best: Option<(f64, WlId)> = None;
        for w in queued {
            let u = afs.usage(w);
            if best.is_none_or(|(b, _)| OrderedFloat(u) < OrderedFloat(b)) {
                best = Some((u, w));
            }
        }
        best.map(|(_, w)| w)
    }

    /// Admission fair sharing: the LocalQueue of a workload admitted in an
    /// admission-fair-sharing ClusterQueue is charged the entry penalty
    /// `α(usageSamplingInterval) · requests` (no sampling happens during a run, so it stays).
    fn admitted(&mut self, world: &World, wl: WlId, cq: CqId, assignment: &Assignment) {
        let Some(afs) = self.afs.as_mut().filter(|a| a.cq_on[cq]) else {
            return;
        };
        let Some(lq) = afs.wl_lq.get(wl).copied().flatten() else {
            return;
        };
        if afs.clock.is_some() {
            // the scheduler pushes the entry penalty MulByFloat(requests, α(interval))
            let a = gpuquota_fairshare::afs::alpha_rate(
                afs.settings.usage_sampling_interval_nanos,
                afs.settings.usage_half_life_nanos,
            );
            let penalty: Nanos = usage_nanos(world, &assignment.usage)
                .into_iter()
                .map(|(r, v)| (r, mul_by_float(v, a)))
                .collect();
            if let Some(c) = afs.clock.as_mut() {
                c.ledgers[lq].penalties.insert(wl, penalty);
            }
            afs.refresh(lq);
            return;
        }
        let mut requests = ResourceAmounts::new();
        for &(fr, a) in &assignment.usage {
            let r = world.fr_resource(fr);
            let v = if r.is_cpu() {
                a.0 as f64 / 1000.0
            } else {
                a.0 as f64
            };
            *requests.entry(r.clone()).or_insert(0.0) += v;
        }
        let penalty = entry_penalty(&requests, &afs.settings);
        afs.lq_usage[lq].add_penalty(&penalty);
    }

    fn fair_sharing(&self) -> bool {
        self.settings.enabled
    }

    /// Admission fair sharing over virtual time (see [`crate::afs_clock`]); nothing without
    /// an `admissionFairSharing` configuration.
    fn clock(&mut self, world: &World, event: &ClockEvent<'_>) {
        if let Some(afs) = self.afs.as_mut() {
            afs.clock_event(world, event);
        }
    }

    /// A rebuilt input's policy: the same settings, the weights and quotas as `model` and
    /// `world` have them (`None` when a weight is refused: the rebuild reports it).
    fn updated(&self, world: &World, model: &gpuquota_model::Model) -> Option<FairSharing> {
        FairSharing::new(world, model, self.settings.clone()).ok()
    }
}

impl FairSharing {
    /// Fair-sharing preemption's candidates for `wl` in `cq`, sorted
    /// ([`FairSortKey`]): the ClusterQueue's own admitted workloads its
    /// `withinClusterQueue` policy allows, and those of the borrowing ClusterQueues of its
    /// cohort tree its `reclaimWithinCohort` policy allows; only workloads using a
    /// flavor-resource that needs preemption.
    ///
    /// # Complexity
    /// O(Q + C log C) for Q ClusterQueues and C candidates.
    fn fair_candidates(
        &self,
        admitted: &Admitted<'_>,
        snapshot: &Usage,
        cq: CqId,
        wl: WlId,
        frs_need: &[FrId],
    ) -> Vec<(FairSortKey, WlId)> {
        let world = admitted.world;
        let t = &world.tree;
        let cqi = &world.cluster_queues[cq];
        let node = cqi.node;
        let me = &world.workloads[wl];
        // CandidatesOrdering: evicted, other queues first, (admission fair sharing, same
        // queue) higher LocalQueue usage, then the per-queue key (priority, recency, UID)
        let afs_key = |c: CqId, v: WlId| match &self.afs {
            Some(a) if a.cq_on[c] => std::cmp::Reverse(OrderedFloat(a.usage(v))),
            _ => std::cmp::Reverse(OrderedFloat(0.0)),
        };
        let mut found: Vec<(FairSortKey, WlId)> = Vec::new();
        if cqi.within != WithinPolicy::Never {
            for k in &admitted.by_cq[cq] {
                let v = k.4;
                if v == wl || !uses_any(admitted, v, frs_need) {
                    continue;
                }
                let vw = &world.workloads[v];
                let ok = match cqi.within {
                    WithinPolicy::Never => false,
                    WithinPolicy::LowerPriority => vw.priority < me.priority,
                    WithinPolicy::LowerOrNewerEqualPriority => {
                        vw.priority < me.priority
                            || (vw.priority == me.priority && me.created < vw.created)
                    }
                };
                if ok {
                    found.push(((k.0, 1, afs_key(cq, v), *k), v));
                }
            }
        }
        if t.parent(node).is_some() && cqi.reclaim != ReclaimPolicy::Never {
            let root = t.nodes[node].root;
            for (c, other) in world.cluster_queues.iter_enumerated() {
                let on = other.node;
                if c == cq
                    || other.inactive.is_some()
                    || t.nodes[on].root != root
                    || t.parent(on).is_none()
                {
                    continue;
                }
                let borrowing = frs_need
                    .iter()
                    .any(|&fr| t.usage(snapshot, on, fr) > t.subtree_quota(on, fr));
                if !borrowing {
                    continue;
                }
                for k in &admitted.by_cq[c] {
                    let v = k.4;
                    if v == wl || !uses_any(admitted, v, frs_need) {
                        continue;
                    }
                    let vp = world.workloads[v].priority;
                    let ok = match cqi.reclaim {
                        ReclaimPolicy::Never => false,
                        ReclaimPolicy::LowerPriority => vp < me.priority,
                        ReclaimPolicy::Any => true,
                    };
                    if ok {
                        found.push(((k.0, 0, afs_key(c, v), *k), v));
                    }
                }
            }
        }
        found.sort_unstable();
        found
    }

    /// Upstream `fairPreemptions` over the sorted candidates `found`: the targets that
    /// make `requests` fit in `cq` by the configured strategies. `snapshot` is left as it
    /// was.
    ///
    /// # Complexity
    /// [`fair_preemptions`]'s cost with an O(R·depth) fit check per step (R requested
    /// flavor-resources).
    fn fair_targets(
        &self,
        admitted: &Admitted<'_>,
        snapshot: &mut Usage,
        cq: CqId,
        requests: &[(FrId, Amount)],
        frs_need: &[FrId],
        found: &[(FairSortKey, WlId)],
    ) -> Vec<Target> {
        let world = admitted.world;
        let t = &world.tree;
        let cqi = &world.cluster_queues[cq];
        let node = cqi.node;
        let mut victims: Vec<WlId> = Vec::with_capacity(found.len());
        let mut candidates: Vec<Candidate> = Vec::with_capacity(found.len());
        for (_, v) in found {
            let Some(r) = &admitted.reservations[*v] else {
                continue;
            };
            victims.push(*v);
            candidates.push(Candidate {
                cluster_queue: world.cluster_queues[r.cq].name.clone(),
                usage: self.quantities(&r.usage),
            });
        }
        let usage = self.quantities(requests);
        let need: Vec<FlavorResource> = frs_need
            .iter()
            .map(|&f| self.index.fr_names[f].clone())
            .collect();
        let req = PreemptionRequest {
            cluster_queue: &cqi.name,
            usage: &usage,
            frs_need_preemption: &need,
            candidates: &candidates,
            strategies: &self.settings.strategies,
            preempt_within_nominal: world.feature_gates.fair_sharing_preempt_within_nominal,
        };
        // The fit check reads the view's usage: at every call it is the snapshot with the
        // removed candidates taken out (a snapshot's usage depends only on the reservations
        // it holds, not on the order they were added or removed in). Debug builds check that
        // against removing the reservations from a copy of the snapshot.
        #[cfg(debug_assertions)]
        let original = snapshot.clone();
        let mut view = ForestView::new(&world.tree, &self.index, &mut *snapshot);
        let chosen = fair_preemptions(&mut view, &req, |v, _removed| {
            let fits = requests
                .iter()
                .all(|&(fr, a)| a <= t.available(v.usage(), node, fr));
            #[cfg(debug_assertions)]
            {
                let mut copy = original.clone();
                for &i in _removed {
                    if let Some(r) = &admitted.reservations[victims[i]] {
                        crate::preempt::remove_reservation(world, &mut copy, r);
                    }
                }
                let expected = requests
                    .iter()
                    .all(|&(fr, a)| a <= t.available(&copy, node, fr));
                debug_assert_eq!(fits, expected, "fit check on the view out of step");
            }
            fits
        });
        #[cfg(debug_assertions)]
        debug_assert_eq!(
            &original, &*snapshot,
            "fair-sharing preemption left the snapshot changed"
        );
        match chosen {
            Ok(list) => list
                .into_iter()
                .map(|x| Target {
                    wl: victims[x.candidate],
                    reason: match x.reason {
                        PreemptionReason::InClusterQueue => PreemptReason::InClusterQueue,
                        PreemptionReason::InCohortReclamation => PreemptReason::InCohortReclamation,
                        PreemptionReason::InCohortFairSharing => PreemptReason::InCohortFairSharing,
                    },
                })
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    /// The ordering key of a LocalQueue (`namespace/name`) under admission fair sharing: its
    /// weighted usage as the clock left it (or as the snapshot's status and penalties give
    /// it); `None` without admission fair sharing or for a LocalQueue no workload names.
    pub fn local_queue_usage(&self, key: &str) -> Option<f64> {
        let afs = self.afs.as_ref()?;
        let i = afs.lq_keys.iter().position(|k| k == key)?;
        Some(afs.lq_usage_of(i))
    }
}
