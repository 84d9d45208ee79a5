//! The JSON contracts of `gpuquota kueue schedule` and `gpuquota kueue quotas`.
//!
//! - [`ScheduleReport`] (`kueue schedule --output json`): `{"cycles", "admitted":
//!   [{"workload", "clusterQueue", "cycle", "podSets": [{"name", "count", "flavors":
//!   {resource: flavor}}]}], "preempted": [{"workload", "clusterQueue", "preemptor",
//!   "reason", "cycle"}], "pending": [{"workload", "clusterQueue", "reason", "message"}],
//!   "warnings": [{"severity", "code", "kind", "name", "message", "engine"}]}`; `warnings`
//!   only when the run has one (a `preemption-loop`).
//! - [`QuotasReport`] (`kueue quotas --output json`): `{"clusterQueues": {cq: {flavor:
//!   {resource: {"nominal", "borrowingLimit", "lendingLimit", "usage", "available",
//!   "potentialAvailable"}}}}, "cohorts": {cohort: {flavor: {resource: {"nominal",
//!   "subtreeQuota", "usage", "borrowingLimit", "lendingLimit"}}}}}`; quantities are
//!   Kubernetes quantity strings, an unset limit is `null`.
//!
//! Fields serialise in exactly this order. `gpuquota schema kueue-schedule` and `gpuquota
//! schema kueue-quotas` print their JSON Schema, generated from these types (feature
//! `schema`). Their text tables are [`ScheduleReport::table`] and [`QuotasReport::table`].

use std::collections::BTreeMap;

use gpuquota_model::Quantity;

use crate::cycle::Scheduler;
use crate::ids::Table;
use crate::tree::{FrId, NodeId, NodeKind};
use crate::world::{CqId, QueueRef, WlId, World};

/// One PodSet of an admission.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PodSetOut {
    /// PodSet name.
    pub name: String,
    /// Admitted pod count (after partial admission).
    pub count: i32,
    /// Flavor per resource.
    pub flavors: BTreeMap<String, String>,
}

/// A workload admitted during the run.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AdmittedOut {
    /// `namespace/name`.
    pub workload: String,
    /// ClusterQueue.
    pub cluster_queue: String,
    /// Cycle (1-based).
    pub cycle: u32,
    /// PodSets.
    pub pod_sets: Vec<PodSetOut>,
}

/// A preemption.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PreemptedOut {
    /// Victim.
    pub workload: String,
    /// Victim's ClusterQueue.
    pub cluster_queue: String,
    /// Preemptor.
    pub preemptor: String,
    /// `InClusterQueue`, `InCohortReclamation`, `InCohortReclaimWhileBorrowing`.
    pub reason: String,
    /// Cycle (1-based).
    pub cycle: u32,
}

/// A workload not admitted at the end.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PendingOut {
    /// `namespace/name`.
    pub workload: String,
    /// The ClusterQueue it queues in (`""` when its LocalQueue does not exist).
    pub cluster_queue: String,
    /// Short reason (upstream's `QuotaReserved=False` reason).
    pub reason: String,
    /// Upstream-style message.
    pub message: String,
    /// A plain-language sentence (not part of the JSON contract).
    #[cfg_attr(feature = "serde", serde(skip))]
    pub explanation: String,
}

/// The result of `kueue schedule`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct ScheduleReport {
    /// Cycles run.
    pub cycles: u32,
    /// Admissions during the run.
    pub admitted: Vec<AdmittedOut>,
    /// Preemptions during the run.
    pub preempted: Vec<PreemptedOut>,
    /// Every workload not admitted at the end, by key.
    pub pending: Vec<PendingOut>,
    /// Decision warnings of the run ([`crate::error::codes::PREEMPTION_LOOP`]); the JSON has
    /// the field only when there is at least one, so every run without a warning prints
    /// exactly what it printed before the field existed.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Vec::is_empty"))]
    pub warnings: Vec<gpuquota_model::diag::Diagnostic>,
}

impl ScheduleReport {
    /// Builds the report from a scheduler after its run.
    ///
    /// # Complexity
    /// O(W + admissions + preemptions).
    pub fn from_scheduler<P: crate::cycle::Policy>(
        world: &World,
        s: &Scheduler<'_, P>,
    ) -> ScheduleReport {
        let key = |w: WlId| world.workloads[w].key.clone();
        let cqn = |c: CqId| world.cluster_queues[c].name.clone();
        // the last admission of every workload still admitted at the end
        let mut last: Table<WlId, usize> = Table::filled(usize::MAX, world.workloads.len());
        for (i, a) in s.admitted.iter().enumerate() {
            last[a.wl] = i;
        }
        let admitted = s
            .admitted
            .iter()
            .enumerate()
            .filter(|(i, a)| s.reservations()[a.wl].is_some() && last[a.wl] == *i)
            .map(|(_, a)| a)
            .map(|a| AdmittedOut {
                workload: key(a.wl),
                cluster_queue: cqn(a.cq),
                cycle: a.cycle,
                pod_sets: a
                    .pod_sets
                    .iter()
                    .map(|(name, count, flavors)| PodSetOut {
                        name: name.clone(),
                        count: *count,
                        flavors: flavors.clone(),
                    })
                    .collect(),
            })
            .collect();
        let preempted = s
            .preempted
            .iter()
            .map(|p| PreemptedOut {
                workload: key(p.wl),
                cluster_queue: cqn(p.cq),
                preemptor: key(p.preemptor),
                reason: p.reason.as_str().to_owned(),
                cycle: p.cycle,
            })
            .collect();
        // every workload without a reservation is pending: one allocation for all of them
        let reserved = s.reservations().iter().filter(|r| r.is_some()).count();
        let mut pending = Vec::with_capacity(world.workloads.len().saturating_sub(reserved));
        for (i, w) in world.workloads.iter_enumerated() {
            let Some(p) = s.pending_reason_ref(i) else {
                continue;
            };
            let cluster_queue = match &w.queue {
                QueueRef::Cq(c) => cqn(*c),
                QueueRef::ClusterQueueMissing(c) => c.clone(),
                _ => String::new(),
            };
            pending.push(PendingOut {
                workload: w.key.clone(),
                cluster_queue,
                reason: p.reason().to_owned(),
                message: p.message(world),
                explanation: p.plain(world),
            });
        }
        ScheduleReport {
            cycles: s.cycles(),
            admitted,
            preempted,
            pending,
            warnings: preemption_loops(world, &s.preempted),
        }
    }
}

/// One warning per (preemptor, victim) pair that occurs more than once in a run: the victim
/// was readmitted ahead of its preemptor and preempted again, the preempt/readmit loop that
/// upstream Kueue also runs into when its scheduling order and its preemption rules disagree.
///
/// Sorted by the first cycle of the pair, then preemptor and victim key.
///
/// # Complexity
/// O(P log P) for P preemptions.
pub fn preemption_loops(
    world: &World,
    preempted: &[crate::cycle::PreemptedRecord],
) -> Vec<gpuquota_model::diag::Diagnostic> {
    let mut pairs: BTreeMap<(WlId, WlId), Vec<u32>> = BTreeMap::new();
    for p in preempted {
        pairs.entry((p.preemptor, p.wl)).or_default().push(p.cycle);
    }
    let mut loops: Vec<(u32, &str, &str, &[u32])> = pairs
        .iter()
        .filter(|(_, cycles)| cycles.len() > 1)
        .map(|(&(pre, vic), cycles)| {
            (
                cycles[0],
                world.workloads[pre].key.as_str(),
                world.workloads[vic].key.as_str(),
                cycles.as_slice(),
            )
        })
        .collect();
    loops.sort();
    loops
        .into_iter()
        .map(|(_, pre, vic, cycles)| {
            let shown: Vec<String> = cycles.iter().take(4).map(u32::to_string).collect();
            let more = if cycles.len() > 4 { ", ..." } else { "" };
            gpuquota_model::diag::Diagnostic::warning(
                crate::error::codes::PREEMPTION_LOOP,
                format!(
                    "preemption loop: {pre} preempted {vic} {} times (cycles {}{more}); the victim is readmitted ahead of its preemptor each time because the scheduling order and the preemption rules disagree (upstream Kueue loops the same way at its default feature gates)",
                    cycles.len(),
                    shown.join(", "),
                ),
            )
            .object("Workload", pre)
            .engine("kueue")
        })
        .collect()
}

/// One ClusterQueue flavor-resource in `kueue quotas`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CqQuotaOut {
    /// `nominalQuota`.
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub nominal: Quantity,
    /// `borrowingLimit` (null when unset).
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>"))]
    pub borrowing_limit: Option<Quantity>,
    /// `lendingLimit` (null when unset).
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>"))]
    pub lending_limit: Option<Quantity>,
    /// Usage of the admitted workloads.
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub usage: Quantity,
    /// `Available` (clamped at 0).
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub available: Quantity,
    /// `PotentialAvailable`.
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub potential_available: Quantity,
}

/// One Cohort flavor-resource in `kueue quotas`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CohortQuotaOut {
    /// The cohort's own `nominalQuota`.
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub nominal: Quantity,
    /// `SubtreeQuota`.
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub subtree_quota: Quantity,
    /// Usage of the whole subtree: every ClusterQueue below the cohort (upstream's
    /// `cohort_subtree_resource_reservations`; Kueue's internal cohort usage leaves out what
    /// children use inside their guaranteed quota).
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub usage: Quantity,
    /// `borrowingLimit` (null when unset).
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>"))]
    pub borrowing_limit: Option<Quantity>,
    /// `lendingLimit` (null when unset).
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>"))]
    pub lending_limit: Option<Quantity>,
}

/// The result of `kueue quotas`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct QuotasReport {
    /// ClusterQueue → flavor → resource → figures.
    pub cluster_queues: BTreeMap<String, BTreeMap<String, BTreeMap<String, CqQuotaOut>>>,
    /// Cohort → flavor → resource → figures.
    pub cohorts: BTreeMap<String, BTreeMap<String, BTreeMap<String, CohortQuotaOut>>>,
}

impl QuotasReport {
    /// Quotas of every ClusterQueue and Cohort with the admitted workloads' usage.
    ///
    /// # Complexity
    /// O(nodes × frs × depth).
    pub fn build(world: &World) -> QuotasReport {
        let t = &world.tree;
        let u = &world.initial_usage;
        let n = t.nodes.len();
        // flavor-resources present at each node: declared here or below
        let mut present: Table<NodeId, Vec<bool>> = Table::filled(vec![false; t.frs], n);
        fn fill(world: &World, node: NodeId, present: &mut Table<NodeId, Vec<bool>>) {
            let t = &world.tree;
            for &c in &t.nodes[node].children {
                fill(world, c, present);
                let child = present[c].clone();
                for (p, c) in present[node].iter_mut().zip(child) {
                    *p |= c;
                }
            }
            for (fr, p) in t.fr_ids().zip(present[node].iter_mut()) {
                *p |= t.quota(node, fr).declared;
            }
        }
        for r in t.nodes.ids() {
            if t.nodes[r].parent.is_none() {
                fill(world, r, &mut present);
            }
        }
        // usage of the whole subtree, per node and flavor-resource
        let mut subtree_usage: Table<NodeId, Vec<gpuquota_model::Amount>> =
            Table::filled(vec![gpuquota_model::Amount::ZERO; t.frs], n);
        fn sum(
            world: &World,
            u: &crate::tree::Usage,
            node: NodeId,
            out: &mut Table<NodeId, Vec<gpuquota_model::Amount>>,
        ) {
            let t = &world.tree;
            match t.nodes[node].kind {
                NodeKind::ClusterQueue(_) => {
                    for (fr, o) in t.fr_ids().zip(out[node].iter_mut()) {
                        *o = t.usage(u, node, fr);
                    }
                }
                NodeKind::Cohort => {
                    for &c in &t.nodes[node].children {
                        sum(world, u, c, out);
                        let child = out[c].clone();
                        for (o, v) in out[node].iter_mut().zip(child) {
                            *o = o.saturating_add(v);
                        }
                    }
                }
            }
        }
        for r in t.nodes.ids() {
            if t.nodes[r].parent.is_none() {
                sum(world, u, r, &mut subtree_usage);
            }
        }
        let fmt = |fr: FrId, a: gpuquota_model::Amount| world.fr_resource(fr).quantity_of(a);
        let mut cluster_queues = BTreeMap::new();
        let mut cohorts = BTreeMap::new();
        for (id, node) in t.nodes.iter_enumerated() {
            match node.kind {
                NodeKind::ClusterQueue(_) => {
                    let mut flavors: BTreeMap<String, BTreeMap<String, CqQuotaOut>> =
                        BTreeMap::new();
                    for fr in t.fr_ids() {
                        let q = t.quota(id, fr);
                        if !q.declared {
                            continue;
                        }
                        flavors
                            .entry(world.fr_flavor(fr).to_owned())
                            .or_default()
                            .insert(
                                world.fr_resource(fr).as_str().to_owned(),
                                CqQuotaOut {
                                    nominal: fmt(fr, q.nominal),
                                    borrowing_limit: q.borrowing_limit.map(|a| fmt(fr, a)),
                                    lending_limit: q.lending_limit.map(|a| fmt(fr, a)),
                                    usage: fmt(fr, t.usage(u, id, fr)),
                                    available: fmt(fr, t.available(u, id, fr)),
                                    potential_available: fmt(fr, t.potential_available(id, fr)),
                                },
                            );
                    }
                    cluster_queues.insert(node.name.clone(), flavors);
                }
                NodeKind::Cohort => {
                    let mut flavors: BTreeMap<String, BTreeMap<String, CohortQuotaOut>> =
                        BTreeMap::new();
                    for fr in t.fr_ids() {
                        if !present[id][fr.index()] {
                            continue;
                        }
                        let q = t.quota(id, fr);
                        flavors
                            .entry(world.fr_flavor(fr).to_owned())
                            .or_default()
                            .insert(
                                world.fr_resource(fr).as_str().to_owned(),
                                CohortQuotaOut {
                                    nominal: fmt(fr, q.nominal),
                                    subtree_quota: fmt(fr, t.subtree_quota(id, fr)),
                                    usage: fmt(fr, subtree_usage[id][fr.index()]),
                                    borrowing_limit: q.borrowing_limit.map(|a| fmt(fr, a)),
                                    lending_limit: q.lending_limit.map(|a| fmt(fr, a)),
                                },
                            );
                    }
                    cohorts.insert(node.name.clone(), flavors);
                }
            }
        }
        QuotasReport {
            cluster_queues,
            cohorts,
        }
    }
}
