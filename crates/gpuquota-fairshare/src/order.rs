//! Fair-sharing entry ordering: the tournament (upstream
//! `fair_sharing_iterator.go`).
//!
//! One head per ClusterQueue. To pop, the iterator takes the remaining head whose ClusterQueue
//! name is smallest (upstream takes an arbitrary one); without a cohort that head is returned,
//! otherwise a tournament runs over that head's whole cohort tree: at every cohort, each child
//! (the winner of a child cohort, or the head of a child ClusterQueue) is valued by the DRS of
//! the child node with the candidate's usage added, and the best one wins:
//!
//! 1. (gate `FairSharingPrioritizeNonBorrowing`, on) a child not borrowing on any
//!    flavor-resource its candidate requests beats one that is;
//! 2. lower DRS (`CompareDRS`);
//! 3. (gate `PrioritySortingWithinCohort`, on) higher priority;
//! 4. earlier queue-order timestamp;
//! 5. (ours, for determinism; upstream keeps the first child) smaller workload key, then the
//!    earlier head.
//!
//! Between pops the engine processes the popped head and may add its usage to the tree (as
//! Kueue's scheduler does with the cycle snapshot). The iterator caches each node's winner and
//! recomputes only the nodes on the path of a changed ClusterQueue: the popped one
//! automatically, any other through [`FairSharingOrder::invalidate`].

use std::cmp::Ordering;
use std::collections::BTreeMap;

use gpuquota_model::{Amount, Timestamp};

use crate::drs::{DrsLite, FrQuantities};
use crate::error::FairShareError;
use crate::view::{self, NodeId, NodeKind, QuotaView, QuotaViewMut};

/// A ClusterQueue's head workload for this cycle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// The ClusterQueue.
    pub cluster_queue: String,
    /// The workload key (`namespace/name`), the final tie-break.
    pub workload: String,
    /// Effective priority.
    pub priority: i64,
    /// Queue-order timestamp.
    pub queue_order: Timestamp,
    /// The usage of its assignment, per flavor-resource.
    pub usage: FrQuantities,
}

/// Feature gates that change the tournament.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderOptions {
    /// `FairSharingPrioritizeNonBorrowing` (beta, on since v0.17).
    pub prioritize_non_borrowing: bool,
    /// `PrioritySortingWithinCohort` (beta, on).
    pub priority_sorting_within_cohort: bool,
}

impl Default for OrderOptions {
    fn default() -> Self {
        OrderOptions {
            prioritize_non_borrowing: true,
            priority_sorting_within_cohort: true,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Cand {
    head: usize,
    drs: DrsLite,
    borrowing_on: bool,
}

/// The fair-sharing iterator over a cycle's heads.
#[derive(Debug, Clone)]
pub struct FairSharingOrder {
    heads: Vec<Head>,
    head_cq: Vec<NodeId>,
    dense: Vec<Vec<(usize, Amount)>>,
    requested: Vec<Vec<usize>>,
    remaining: BTreeMap<String, usize>,
    entry_of: Vec<Option<usize>>,
    cache: Vec<Option<Cand>>,
    dirty: Vec<bool>,
    opts: OrderOptions,
}

impl FairSharingOrder {
    /// Prepares the order of `heads` over `tree` (any [`QuotaView`]; the same tree, with its
    /// usage as the caller changes it, is passed to every later call).
    ///
    /// # Errors
    /// A head of an unknown ClusterQueue, or two heads of one ClusterQueue.
    ///
    /// # Complexity
    /// O(N + H·(log N + |usage| log F)) for N nodes and H heads.
    pub fn new<T: QuotaView + ?Sized>(
        tree: &T,
        heads: Vec<Head>,
        opts: OrderOptions,
    ) -> Result<FairSharingOrder, FairShareError> {
        let mut entry_of = vec![None; tree.node_count()];
        let mut head_cq = Vec::with_capacity(heads.len());
        let mut remaining = BTreeMap::new();
        let mut dense = Vec::with_capacity(heads.len());
        for (i, h) in heads.iter().enumerate() {
            let cq = tree.cluster_queue(&h.cluster_queue).ok_or_else(|| {
                FairShareError::UnknownReference {
                    object: format!("head \"{}\"", h.workload),
                    field: "clusterQueue".into(),
                    kind: "ClusterQueue".into(),
                    name: h.cluster_queue.clone(),
                }
            })?;
            if entry_of[cq.index()].is_some() {
                return Err(FairShareError::Duplicate {
                    kind: "head of ClusterQueue".into(),
                    name: h.cluster_queue.clone(),
                });
            }
            entry_of[cq.index()] = Some(i);
            head_cq.push(cq);
            remaining.insert(h.cluster_queue.clone(), i);
            dense.push(view::dense(tree, &h.usage));
        }
        let requested = dense
            .iter()
            .map(|d| d.iter().filter(|(_, a)| a.0 > 0).map(|(f, _)| *f).collect())
            .collect();
        Ok(FairSharingOrder {
            heads,
            head_cq,
            dense,
            requested,
            remaining,
            entry_of,
            cache: vec![None; tree.node_count()],
            dirty: vec![true; tree.node_count()],
            opts,
        })
    }

    /// The heads, as given.
    pub fn heads(&self) -> &[Head] {
        &self.heads
    }

    /// True while heads remain.
    pub fn has_next(&self) -> bool {
        !self.remaining.is_empty()
    }

    fn mark_path<T: QuotaView + ?Sized>(&mut self, tree: &T, cq: NodeId) {
        let mut cur = Some(cq);
        while let Some(c) = cur {
            self.dirty[c.index()] = true;
            cur = tree.parent(c);
        }
    }

    /// Tells the iterator that the usage of ClusterQueue `cq` changed (other than by the
    /// popped head, which is handled automatically).
    pub fn invalidate<T: QuotaView + ?Sized>(&mut self, tree: &T, cq: &str) {
        if let Some(id) = tree.cluster_queue(cq) {
            self.mark_path(tree, id);
        }
    }

    fn less(&self, a: &Cand, b: &Cand) -> Ordering {
        let (ha, hb) = (&self.heads[a.head], &self.heads[b.head]);
        let mut o = Ordering::Equal;
        if self.opts.prioritize_non_borrowing {
            o = a.borrowing_on.cmp(&b.borrowing_on);
        }
        o = o.then_with(|| a.drs.compare(&b.drs));
        if self.opts.priority_sorting_within_cohort {
            o = o.then_with(|| hb.priority.cmp(&ha.priority));
        }
        o.then_with(|| ha.queue_order.cmp(&hb.queue_order))
            .then_with(|| ha.workload.cmp(&hb.workload))
            .then_with(|| a.head.cmp(&b.head))
    }

    /// The head's usage as it arrives at `node` (an ancestor of its ClusterQueue).
    fn delta_at<T: QuotaView + ?Sized>(
        &self,
        tree: &T,
        head: usize,
        node: NodeId,
    ) -> Vec<(usize, Amount)> {
        let mut cur = self.head_cq[head];
        let mut req = self.dense[head].clone();
        while cur != node {
            req = view::pass_up(tree, cur, &req);
            match tree.parent(cur) {
                Some(p) => cur = p,
                None => break,
            }
        }
        req
    }

    fn eval<T: QuotaView + ?Sized>(&mut self, tree: &T, node: NodeId) -> Option<Cand> {
        if !self.dirty[node.index()] {
            return self.cache[node.index()];
        }
        let out = match tree.kind(node) {
            NodeKind::ClusterQueue => self.entry_of[node.index()].map(|h| {
                let (drs, borrowing_on) =
                    view::drs_lite(tree, node, &self.dense[h], &self.requested[h]);
                Cand {
                    head: h,
                    drs,
                    borrowing_on,
                }
            }),
            NodeKind::Cohort => {
                let mut best: Option<Cand> = None;
                let nc = tree.child_cohorts(node).len();
                let nq = tree.child_cluster_queues(node).len();
                for k in 0..nc + nq {
                    let c = if k < nc {
                        tree.child_cohorts(node)[k]
                    } else {
                        tree.child_cluster_queues(node)[k - nc]
                    };
                    if let Some(cand) = self.eval(tree, c)
                        && best
                            .as_ref()
                            .is_none_or(|b| self.less(&cand, b) == Ordering::Less)
                    {
                        best = Some(cand);
                    }
                }
                best.map(|w| {
                    // Value of this cohort at its parent's level, with the winner's usage.
                    if tree.parent(node).is_some() {
                        let delta = self.delta_at(tree, w.head, node);
                        let (drs, borrowing_on) =
                            view::drs_lite(tree, node, &delta, &self.requested[w.head]);
                        Cand {
                            head: w.head,
                            drs,
                            borrowing_on,
                        }
                    } else {
                        w
                    }
                })
            }
        };
        self.cache[node.index()] = out;
        self.dirty[node.index()] = false;
        out
    }

    /// Pops the next head (its index in [`FairSharingOrder::heads`]).
    ///
    /// # Complexity
    /// O(Σ over the popped tree's dirty cohorts of their child count · F log R) — after the
    /// first pop, only the path of the changed ClusterQueue is recomputed.
    pub fn next_head<T: QuotaView + ?Sized>(&mut self, tree: &T) -> Option<usize> {
        let (_, &first) = self.remaining.iter().next()?;
        let cq = self.head_cq[first];
        let winner = match tree.parent(cq) {
            None => first,
            Some(p) => {
                let root = tree.root(p);
                self.eval(tree, root).map_or(first, |c| c.head)
            }
        };
        let wcq = self.head_cq[winner];
        self.remaining.remove(&self.heads[winner].cluster_queue);
        self.entry_of[wcq.index()] = None;
        self.mark_path(tree, wcq);
        Some(winner)
    }
}

/// Runs the whole fair-sharing order of a cycle: pops every head; when `admit` accepts a head
/// its usage is added to the tree (as Kueue's scheduler adds an admitted or preempting entry's
/// usage to the cycle snapshot), so later pops see it. The tree is restored before returning.
///
/// # Errors
/// As [`FairSharingOrder::new`].
///
/// # Complexity
/// O(H · depth · B · F log R) for H heads and branching factor B.
pub fn fair_sharing_order<T: QuotaViewMut + ?Sized>(
    tree: &mut T,
    heads: Vec<Head>,
    opts: OrderOptions,
    mut admit: impl FnMut(&T, &Head) -> bool,
) -> Result<Vec<usize>, FairShareError> {
    let saved = view::save_usage(tree);
    let mut it = FairSharingOrder::new(tree, heads, opts)?;
    let mut out = Vec::with_capacity(it.heads.len());
    while let Some(h) = it.next_head(tree) {
        out.push(h);
        if admit(tree, &it.heads[h]) {
            let cq = it.head_cq[h];
            let d = it.dense[h].clone();
            view::add_usage_dense(tree, cq, &d);
        }
    }
    view::restore_usage(tree, &saved);
    Ok(out)
}
