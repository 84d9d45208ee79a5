//! Fair-sharing preemption (upstream `fairPreemptions` and
//! `preemption/fairsharing/*`).
//!
//! The engine hands over the preemptor (ClusterQueue, total usage, the flavor-resources that
//! need preemption) and the candidate workloads it collected — already filtered by
//! `withinClusterQueue` / `reclaimWithinCohort` and sorted by Kueue's `CandidatesOrdering` —
//! plus a `fits` oracle. [`fair_preemptions`] returns the targets with their reasons, using the
//! tree only to evaluate shares; the tree is left exactly as it was.

use std::collections::{BTreeMap, VecDeque};

use gpuquota_model::Amount;

use crate::drs::{Drs, FlavorResource, FrQuantities, compare_drs};
use crate::error::FairShareError;
use crate::view::{self, NodeId, QuotaView, QuotaViewMut};

/// A fair-sharing preemption strategy (`fairSharing.preemptionStrategies`, KEP-1714 rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FairSharingStrategy {
    /// Rule S2-a: the preemptor's share after admission ≤ the target's share after the
    /// preemption (`CompareDRS(preemptorNew, targetNew) ≤ 0`).
    LessThanOrEqualToFinalShare,
    /// Rule S2-b: the preemptor's share after admission < the target's share before it
    /// (`CompareDRS(preemptorNew, targetOld) < 0`).
    LessThanInitialShare,
}

impl FairSharingStrategy {
    /// Upstream's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            FairSharingStrategy::LessThanOrEqualToFinalShare => "LessThanOrEqualToFinalShare",
            FairSharingStrategy::LessThanInitialShare => "LessThanInitialShare",
        }
    }

    /// Parses upstream's spelling.
    pub fn parse(s: &str) -> Option<FairSharingStrategy> {
        match s {
            "LessThanOrEqualToFinalShare" => Some(FairSharingStrategy::LessThanOrEqualToFinalShare),
            "LessThanInitialShare" => Some(FairSharingStrategy::LessThanInitialShare),
            _ => None,
        }
    }

    /// Whether the strategy allows preempting a workload, given the preemptor's share with the
    /// incoming workload, the target's share before and after removing the workload (shares of
    /// the nodes just below the least common ancestor).
    pub fn allows(self, preemptor_new: &Drs, target_old: &Drs, target_new: &Drs) -> bool {
        match self {
            FairSharingStrategy::LessThanOrEqualToFinalShare => {
                compare_drs(preemptor_new, target_new).is_le()
            }
            FairSharingStrategy::LessThanInitialShare => {
                compare_drs(preemptor_new, target_old).is_lt()
            }
        }
    }
}

/// The `Preempted` condition reason of a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PreemptionReason {
    /// `InClusterQueue`: a workload of the preemptor's own ClusterQueue.
    InClusterQueue,
    /// `InCohortReclamation`: the preemptor is within nominal and reclaims.
    InCohortReclamation,
    /// `InCohortFairSharing`: allowed by a fair-sharing strategy.
    InCohortFairSharing,
}

impl PreemptionReason {
    /// Upstream's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            PreemptionReason::InClusterQueue => "InClusterQueue",
            PreemptionReason::InCohortReclamation => "InCohortReclamation",
            PreemptionReason::InCohortFairSharing => "InCohortFairSharing",
        }
    }
}

/// A candidate victim: an admitted workload with its ClusterQueue and usage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The ClusterQueue holding the workload's quota.
    pub cluster_queue: String,
    /// The workload's usage per flavor-resource.
    pub usage: FrQuantities,
}

/// A chosen victim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    /// Index into the candidate list.
    pub candidate: usize,
    /// Why it is preempted.
    pub reason: PreemptionReason,
}

/// Input of [`fair_preemptions`].
#[derive(Debug, Clone, Copy)]
pub struct PreemptionRequest<'a> {
    /// The preemptor's ClusterQueue.
    pub cluster_queue: &'a str,
    /// The preemptor's total usage over all its flavor-resources.
    pub usage: &'a FrQuantities,
    /// The flavor-resources whose assignment mode is `Preempt`.
    pub frs_need_preemption: &'a [FlavorResource],
    /// Candidates, filtered and sorted by `CandidatesOrdering` by the engine.
    pub candidates: &'a [Candidate],
    /// The configured strategies (empty = the default `[S2-a, S2-b]`).
    pub strategies: &'a [FairSharingStrategy],
    /// Gate `FairSharingPreemptWithinNominal` (beta, on by default since v0.17): a preemptor
    /// within nominal on every flavor-resource needing preemption reclaims without the
    /// strategies.
    pub preempt_within_nominal: bool,
}

/// Picks target ClusterQueues from the root down (upstream `TargetClusterQueueOrdering`).
struct TargetOrdering {
    preemptor: NodeId,
    ancestors: Vec<NodeId>,
    queues: BTreeMap<NodeId, VecDeque<usize>>,
    pruned: Vec<bool>,
}

impl TargetOrdering {
    fn new<T: QuotaView + ?Sized>(
        tree: &T,
        preemptor: NodeId,
        cands: &[(usize, NodeId)],
    ) -> TargetOrdering {
        let mut ancestors = Vec::new();
        let mut cur = tree.parent(preemptor);
        while let Some(c) = cur {
            ancestors.push(c);
            cur = tree.parent(c);
        }
        let mut queues: BTreeMap<NodeId, VecDeque<usize>> = BTreeMap::new();
        for &(i, cq) in cands {
            queues.entry(cq).or_default().push_back(i);
        }
        TargetOrdering {
            preemptor,
            ancestors,
            queues,
            pruned: vec![false; tree.node_count()],
        }
    }

    fn has(&self, cq: NodeId) -> bool {
        self.queues.get(&cq).is_some_and(|q| !q.is_empty())
    }

    fn pop(&mut self, cq: NodeId) -> Option<usize> {
        self.queues.get_mut(&cq).and_then(VecDeque::pop_front)
    }

    fn drain(&mut self, cq: NodeId) -> Vec<usize> {
        self.queues
            .get_mut(&cq)
            .map(|q| q.drain(..).collect())
            .unwrap_or_default()
    }

    fn drop_queue(&mut self, cq: NodeId) {
        self.pruned[cq.index()] = true;
    }

    fn next<T: QuotaView + ?Sized>(&mut self, tree: &T) -> Option<NodeId> {
        let Some(parent) = tree.parent(self.preemptor) else {
            return self.has(self.preemptor).then_some(self.preemptor);
        };
        let root = tree.root(parent);
        while !self.pruned[root.index()] {
            if let Some(t) = self.next_target(tree, root) {
                return Some(t);
            }
        }
        None
    }

    fn next_target<T: QuotaView + ?Sized>(&mut self, tree: &T, cohort: NodeId) -> Option<NodeId> {
        let mut best_cq: Option<(NodeId, Drs)> = None;
        for &cq in tree.child_cluster_queues(cohort) {
            if self.pruned[cq.index()] {
                continue;
            }
            let drs = view::drs(tree, cq);
            if (!drs.borrowing && cq != self.preemptor) || !self.has(cq) {
                self.pruned[cq.index()] = true;
                continue;
            }
            let better = match &best_cq {
                None => true,
                Some((b, bd)) => match compare_drs(&drs, bd) {
                    std::cmp::Ordering::Greater => true,
                    std::cmp::Ordering::Less => false,
                    // Tie: the queue whose first candidate comes first in CandidatesOrdering.
                    std::cmp::Ordering::Equal => self.queues[&cq].front() < self.queues[b].front(),
                },
            };
            if better {
                best_cq = Some((cq, drs));
            }
        }
        let mut best_cohort: Option<(NodeId, Drs)> = None;
        for &c in tree.child_cohorts(cohort) {
            if self.pruned[c.index()] {
                continue;
            }
            let drs = view::drs(tree, c);
            if !drs.borrowing && !self.ancestors.contains(&c) {
                self.pruned[c.index()] = true;
                continue;
            }
            // Ties: the later cohort wins (upstream `>=`).
            if best_cohort
                .as_ref()
                .is_none_or(|(_, bd)| compare_drs(&drs, bd).is_ge())
            {
                best_cohort = Some((c, drs));
            }
        }
        match (best_cohort, best_cq) {
            (None, None) => {
                self.pruned[cohort.index()] = true;
                None
            }
            (Some((c, _)), None) => self.next_target(tree, c),
            (Some((c, cd)), Some((_, qd))) if compare_drs(&cd, &qd).is_ge() => {
                self.next_target(tree, c)
            }
            (_, Some((q, _))) => Some(q),
        }
    }
}

/// The two nodes just below the least common ancestor of `a` and `b` (same tree, a ≠ b).
fn almost_lcas<T: QuotaView + ?Sized>(tree: &T, a: NodeId, b: NodeId) -> (NodeId, NodeId) {
    let path = |mut n: NodeId| {
        let mut v = vec![n];
        while let Some(p) = tree.parent(n) {
            v.push(p);
            n = p;
        }
        v.reverse();
        v
    };
    let (pa, pb) = (path(a), path(b));
    let mut i = 0;
    while i + 1 < pa.len() && i + 1 < pb.len() && pa[i + 1] == pb[i + 1] {
        i += 1;
    }
    (pa[(i + 1).min(pa.len() - 1)], pb[(i + 1).min(pb.len() - 1)])
}

/// Kueue's fair-sharing preemption: which candidates to preempt so that the preemptor fits.
///
/// Steps (upstream `pkg/scheduler/preemption/fairsharing`): the preemptor's usage is simulated in
/// its ClusterQueue; target ClusterQueues are visited from the root by highest share; own-queue
/// candidates are taken with reason `InClusterQueue`; a preemptor within nominal (gate on) takes
/// cohort candidates unconditionally (`InCohortReclamation`); otherwise the first strategy decides
/// per candidate (`InCohortFairSharing`), rejected candidates go to a retry list that the second
/// strategy (if configured) revisits, taking at most one per ClusterQueue. Once `fits` holds,
/// targets are filled back in reverse order (each one kept only if the preemptor no longer fits
/// without evicting it). Returns an empty list when nothing makes the preemptor fit.
///
/// `fits(tree, removed)` is called with the preemptor's simulated usage removed and the
/// candidates listed in `removed` taken out of the tree; the default oracle is
/// [`view::fits`] ([`fair_preemptions_in_tree`]). `tree` is any [`QuotaViewMut`]: this crate's
/// [`crate::tree::FairShareTree`] or an engine's own tree with its snapshot usage.
///
/// # Errors
/// An unknown ClusterQueue, or a candidate in another cohort tree.
///
/// # Complexity
/// O(T · (C + N·F log R)) for T targets, C candidates, N nodes.
pub fn fair_preemptions<T: QuotaViewMut + ?Sized>(
    tree: &mut T,
    req: &PreemptionRequest<'_>,
    mut fits: impl FnMut(&T, &[usize]) -> bool,
) -> Result<Vec<Target>, FairShareError> {
    let (pcq, cands) = resolve_candidates(tree, req)?;
    let strategies: Vec<FairSharingStrategy> = if req.strategies.is_empty() {
        crate::config::DEFAULT_STRATEGIES.to_vec()
    } else {
        req.strategies.to_vec()
    };
    let saved = view::save_usage(tree);
    let dense_usage: Vec<Vec<(usize, Amount)>> = req
        .candidates
        .iter()
        .map(|c| view::dense(tree, &c.usage))
        .collect();
    let preemptor_usage = view::dense(tree, req.usage);
    let cq_of: Vec<NodeId> = cands.iter().map(|(_, id)| *id).collect();

    view::add_usage_dense(tree, pcq, &preemptor_usage);
    let within_nominal = req.preempt_within_nominal
        && !req
            .frs_need_preemption
            .iter()
            .any(|fr| view::is_borrowing(tree, pcq, fr));

    let mut targets: Vec<Target> = Vec::new();
    let mut check = |tree: &mut T, targets: &[Target]| {
        let s = view::save_path(tree, pcq);
        view::remove_usage_dense(tree, pcq, &preemptor_usage);
        let ids: Vec<usize> = targets.iter().map(|t| t.candidate).collect();
        let ok = fits(tree, &ids);
        view::restore_path(tree, s);
        ok
    };
    let remove = |tree: &mut T, c: usize| view::remove_usage_dense(tree, cq_of[c], &dense_usage[c]);

    let mut done = false;
    let mut retry: Vec<(usize, NodeId)> = Vec::new();
    let mut ord = TargetOrdering::new(tree, pcq, &cands);
    'first: while let Some(t) = ord.next(tree) {
        if t == pcq || within_nominal {
            let Some(c) = ord.pop(t) else { continue };
            remove(tree, c);
            let reason = if t == pcq {
                PreemptionReason::InClusterQueue
            } else {
                PreemptionReason::InCohortReclamation
            };
            targets.push(Target {
                candidate: c,
                reason,
            });
            if check(tree, &targets) {
                done = true;
                break;
            }
            continue;
        }
        let (pa, ta) = almost_lcas(tree, pcq, t);
        let p_new = view::drs(tree, pa);
        let t_old = view::drs(tree, ta);
        if p_new.zero_weight_borrows() && !t_old.zero_weight_borrows() {
            retry.extend(ord.drain(t).into_iter().map(|c| (c, t)));
            continue;
        }
        while let Some(c) = ord.pop(t) {
            let s = view::save_path(tree, t);
            remove(tree, c);
            let t_new = view::drs(tree, ta);
            view::restore_path(tree, s);
            if strategies[0].allows(&p_new, &t_old, &t_new) {
                remove(tree, c);
                targets.push(Target {
                    candidate: c,
                    reason: PreemptionReason::InCohortFairSharing,
                });
                if check(tree, &targets) {
                    done = true;
                    break 'first;
                }
                break;
            }
            retry.push((c, t));
        }
    }
    if !done && strategies.len() > 1 {
        let mut ord2 = TargetOrdering::new(tree, pcq, &retry);
        while let Some(t) = ord2.next(tree) {
            let (pa, ta) = almost_lcas(tree, pcq, t);
            let p_new = view::drs(tree, pa);
            let t_old = view::drs(tree, ta);
            if FairSharingStrategy::LessThanInitialShare.allows(&p_new, &t_old, &t_old)
                && let Some(c) = ord2.pop(t)
            {
                remove(tree, c);
                targets.push(Target {
                    candidate: c,
                    reason: PreemptionReason::InCohortFairSharing,
                });
                if check(tree, &targets) {
                    done = true;
                    break;
                }
            }
            ord2.drop_queue(t);
        }
    }
    if !done {
        view::restore_usage(tree, &saved);
        return Ok(Vec::new());
    }
    // Revert the preemptor's simulated usage, then fill back in reverse order.
    view::remove_usage_dense(tree, pcq, &preemptor_usage);
    if targets.len() > 1 {
        for i in (0..targets.len() - 1).rev() {
            let c = targets[i].candidate;
            view::add_usage_dense(tree, cq_of[c], &dense_usage[c]);
            let without: Vec<usize> = targets
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, t)| t.candidate)
                .collect();
            if fits(tree, &without) {
                targets.swap_remove(i);
            } else {
                view::remove_usage_dense(tree, cq_of[c], &dense_usage[c]);
            }
        }
    }
    view::restore_usage(tree, &saved);
    Ok(targets)
}

/// The preemptor's ClusterQueue and every candidate's (input index, ClusterQueue), all in
/// the preemptor's cohort tree.
///
/// # Errors
/// An unknown ClusterQueue, or a candidate in another cohort tree.
fn resolve_candidates<T: QuotaView + ?Sized>(
    tree: &T,
    req: &PreemptionRequest<'_>,
) -> Result<(NodeId, Vec<(usize, NodeId)>), FairShareError> {
    let unknown = |name: &str, field: &str| FairShareError::UnknownReference {
        object: "preemption".into(),
        field: field.into(),
        kind: "ClusterQueue".into(),
        name: name.into(),
    };
    let pcq = tree
        .cluster_queue(req.cluster_queue)
        .ok_or_else(|| unknown(req.cluster_queue, "clusterQueue"))?;
    let proot = tree.root(pcq);
    let mut cands = Vec::with_capacity(req.candidates.len());
    for (i, c) in req.candidates.iter().enumerate() {
        let id = tree
            .cluster_queue(&c.cluster_queue)
            .ok_or_else(|| unknown(&c.cluster_queue, &format!("candidates[{i}].clusterQueue")))?;
        if tree.root(id) != proot {
            return Err(FairShareError::invalid(
                format!("candidates[{i}]"),
                "clusterQueue",
                format!(
                    "ClusterQueue \"{}\" is not in the cohort tree of \"{}\"",
                    c.cluster_queue, req.cluster_queue
                ),
            ));
        }
        cands.push((i, id));
    }
    Ok((pcq, cands))
}

/// [`fair_preemptions`] with the tree's own fit check ([`view::fits`] of the preemptor's
/// usage in its ClusterQueue).
///
/// # Errors
/// As [`fair_preemptions`].
pub fn fair_preemptions_in_tree<T: QuotaViewMut + ?Sized>(
    tree: &mut T,
    req: &PreemptionRequest<'_>,
) -> Result<Vec<Target>, FairShareError> {
    let cq = tree.cluster_queue(req.cluster_queue);
    let usage = req.usage.clone();
    fair_preemptions(tree, req, |t, _| {
        cq.is_some_and(|cq| view::fits(t, cq, &usage))
    })
}
