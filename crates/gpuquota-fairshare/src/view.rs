//! The quota tree as fair sharing reads it: the [`QuotaView`] trait, and Kueue's quota and
//! share arithmetic written once over it.
//!
//! Every fair-sharing algorithm of this crate ([`crate::order`], [`crate::preemption`], the
//! shares of [`crate::tree::FairShareTree::drs`]) reads the cohort forest through
//! [`QuotaView`] and changes usage through [`QuotaViewMut`]. The quota numbers behind every
//! view are one [`QuotaTree`] ([`crate::quota`], Kueue's quota arithmetic written once); the
//! functions here add the share arithmetic over it. Two types implement the view:
//!
//! * [`crate::tree::FairShareTree`], this crate's standalone tree (for `gpuquota kueue shares`,
//!   the scenario tests and any embedder without an admission engine);
//! * the Kueue engine's own quota forest with its cycle snapshot's usage
//!   (`gpuquota_cohort::fair::ForestView`), so the engine's fair sharing reads the very numbers
//!   it admits against, with no second tree to keep in step.
//!
//! Nodes are dense [`NodeId`]s `0..node_count()`; flavor-resources are dense indices
//! `0..flavor_resources().len()` in the implementor's own order. The arithmetic follows
//! kubernetes-sigs/kueue: `pkg/cache/scheduler/resource_node.go` (usage flowing upward past
//! the local quota, `available`) and `pkg/cache/scheduler/fair_sharing.go` (the dominant
//! resource share).

use std::collections::BTreeMap;

use gpuquota_model::{Amount, ResourceName};

use crate::drs::{
    Drs, DrsInput, DrsLite, FlavorResource, FrQuantities, dominant_resource_share, lendable,
};
use crate::quota::{QuotaTree, Usage};

/// A node of a cohort forest seen through a [`QuotaView`]: its dense index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub(crate) usize);

impl NodeId {
    /// The node with dense index `index` (`0..view.node_count()`); an index out of range
    /// makes the view's accessors panic.
    pub fn from_index(index: usize) -> NodeId {
        NodeId(index)
    }

    /// The dense index of the node (`0..view.node_count()`).
    pub fn index(self) -> usize {
        self.0
    }
}

/// Whether a node is a ClusterQueue or a Cohort.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NodeKind {
    /// A ClusterQueue (leaf).
    ClusterQueue,
    /// A Cohort (inner node; may be implicit).
    Cohort,
}

/// Read access to a cohort forest with Kueue's quota numbers and the current usage: what
/// dominant resource shares, the tournament order and fair-sharing preemption read.
///
/// The quota numbers come from the implementor's [`QuotaTree`] (Kueue's quota arithmetic,
/// written once) and its current [`Usage`]; the implementor adds what fair sharing needs on
/// top: names, children by name, weights and the lendable amounts at each node's parent (see
/// [`lendables`]). Every accessor is expected to be O(1) (except
/// [`QuotaView::flavor_resource_index`] and [`QuotaView::cluster_queue`], O(log n)).
pub trait QuotaView {
    /// The quota tree (node ids and flavor-resource indices are the view's own).
    fn quota_tree(&self) -> &QuotaTree;
    /// The usage the view reads.
    fn current_usage(&self) -> &Usage;
    /// Number of nodes; ids are `0..node_count()`.
    fn node_count(&self) -> usize {
        self.quota_tree().len()
    }
    /// Cohort or ClusterQueue.
    fn kind(&self, n: NodeId) -> NodeKind {
        if self.quota_tree().is_cohort(n.0) {
            NodeKind::Cohort
        } else {
            NodeKind::ClusterQueue
        }
    }
    /// The parent cohort (`None` for a root).
    fn parent(&self, n: NodeId) -> Option<NodeId> {
        self.quota_tree().parent(n.0).map(NodeId)
    }
    /// The root of the node's tree (itself for a root).
    fn root(&self, n: NodeId) -> NodeId {
        NodeId(self.quota_tree().root(n.0))
    }
    /// Child cohorts, by name.
    fn child_cohorts(&self, n: NodeId) -> &[NodeId];
    /// Child ClusterQueues, by name.
    fn child_cluster_queues(&self, n: NodeId) -> &[NodeId];
    /// The ClusterQueue called `name`.
    fn cluster_queue(&self, name: &str) -> Option<NodeId>;
    /// The node's `fairSharing.weight`.
    fn weight(&self, n: NodeId) -> f64;
    /// Every flavor-resource, by dense index.
    fn flavor_resources(&self) -> &[FlavorResource];
    /// The dense index of a flavor-resource.
    fn flavor_resource_index(&self, fr: &FlavorResource) -> Option<usize>;
    /// The dense flavor-resource indices of each resource, resources by ascending name (the
    /// index of a group is the resource index of [`QuotaView::lendable_at`]).
    fn resource_groups(&self) -> &[Vec<usize>];
    /// True when flavor-resource `f` is a key of the node's `SubtreeQuota` (the node or a
    /// descendant declares it); only those count in the node's share.
    fn in_subtree(&self, n: NodeId, f: usize) -> bool {
        self.quota_tree().in_subtree(n.0, f)
    }
    /// `SubtreeQuota(n)[f]`.
    fn subtree_quota_at(&self, n: NodeId, f: usize) -> Amount {
        self.quota_tree().subtree_quota(n.0, f)
    }
    /// `localQuota(n)[f]`: the guaranteed part never visible to the parent.
    fn local_quota_at(&self, n: NodeId, f: usize) -> Amount {
        self.quota_tree().local_quota(n.0, f)
    }
    /// The node's own `borrowingLimit` on `f`, if set.
    fn borrowing_limit_at(&self, n: NodeId, f: usize) -> Option<Amount> {
        self.quota_tree().quota(n.0, f).borrowing_limit
    }
    /// `Usage(n)[f]`.
    fn usage_at(&self, n: NodeId, f: usize) -> Amount {
        self.quota_tree().usage(self.current_usage(), n.0, f)
    }
    /// Kueue's `calculateLendable` at the node's parent, per resource (empty for a root).
    fn lendable(&self, n: NodeId) -> &BTreeMap<ResourceName, Amount>;
    /// The same amount for the resource of group `r` of [`QuotaView::resource_groups`]
    /// (0 for a root).
    fn lendable_at(&self, n: NodeId, r: usize) -> Amount;
}

/// A [`QuotaView`] whose usage can change (simulated additions and removals).
pub trait QuotaViewMut: QuotaView {
    /// The quota tree and the usage, the latter to change; callers keep every node
    /// consistent with Kueue's propagation rules ([`add_usage_dense`], [`remove_usage_dense`],
    /// exact restores).
    fn usage_mut(&mut self) -> (&QuotaTree, &mut Usage);
    /// Overwrites `Usage(n)[f]` (exact restores).
    fn set_usage_at(&mut self, n: NodeId, f: usize, amount: Amount) {
        let (t, u) = self.usage_mut();
        t.set_usage(u, n.0, f, amount);
    }
}

/// Kueue's `calculateLendable` at every node's parent: per node, by resource name and by
/// resource group of `groups` (resources by ascending name), the sum of the parent's
/// `potentialAvailable` over the flavor-resources of the root's `SubtreeQuota`; empty and
/// zero for a root. `frs` names the tree's flavor-resources by index.
///
/// # Complexity
/// O(N·F log R).
#[allow(clippy::type_complexity)]
pub fn lendables(
    tree: &QuotaTree,
    frs: &[FlavorResource],
    groups: &[Vec<usize>],
) -> (Vec<BTreeMap<ResourceName, Amount>>, Vec<Vec<Amount>>) {
    let n = tree.len();
    let mut by_name = vec![BTreeMap::new(); n];
    let mut dense = vec![Vec::new(); n];
    for i in 0..n {
        let Some(p) = tree.parent(i) else { continue };
        let root = tree.root(i);
        let l = lendable(
            frs.iter()
                .enumerate()
                .filter(|(f, _)| tree.in_subtree(root, *f))
                .map(|(f, fr)| (fr, tree.potential_available(p, f))),
        );
        dense[i] = groups
            .iter()
            .map(|g| {
                g.first()
                    .and_then(|&f| l.get(&frs[f].resource))
                    .copied()
                    .unwrap_or(Amount::ZERO)
            })
            .collect();
        by_name[i] = l;
    }
    (by_name, dense)
}

/// Dense `(flavor-resource index, amount)` pairs of `q` (flavor-resources the view does not
/// know are dropped).
///
/// # Complexity
/// O(|q| log F).
pub fn dense<T: QuotaView + ?Sized>(t: &T, q: &FrQuantities) -> Vec<(usize, Amount)> {
    q.iter()
        .filter_map(|(fr, a)| t.flavor_resource_index(fr).map(|i| (i, *a)))
        .collect()
}

/// `LocalAvailable(n)[f] = max(0, localQuota − Usage)` ([`QuotaTree::local_available`]).
pub fn local_available<T: QuotaView + ?Sized>(t: &T, n: NodeId, f: usize) -> Amount {
    t.quota_tree().local_available(t.current_usage(), n.0, f)
}

/// Kueue's `available(n)[f]` (negative after over-admission; [`QuotaTree::available_raw`]).
///
/// # Complexity
/// O(depth).
pub fn available_raw<T: QuotaView + ?Sized>(t: &T, n: NodeId, f: usize) -> Amount {
    t.quota_tree().available_raw(t.current_usage(), n.0, f)
}

/// True when `request` fits the ClusterQueue now: `request[fr] ≤ max(0, available(cq, fr))`
/// for every flavor-resource with a positive request (Kueue's `workloadFits` with borrowing
/// allowed, without TAS); a flavor-resource the view does not know never fits.
///
/// # Complexity
/// O(|request| · (log F + depth)).
pub fn fits<T: QuotaView + ?Sized>(t: &T, cq: NodeId, request: &FrQuantities) -> bool {
    request.iter().all(|(fr, a)| {
        if a.0 <= 0 {
            return true;
        }
        match t.flavor_resource_index(fr) {
            Some(i) => *a <= available_raw(t, cq, i).max(Amount::ZERO),
            None => false,
        }
    })
}

/// Kueue's `Borrowing(cq, fr)` / cohort `BorrowingWith(c, fr, 0)`: usage above subtree quota.
pub fn is_borrowing<T: QuotaView + ?Sized>(t: &T, n: NodeId, fr: &FlavorResource) -> bool {
    t.flavor_resource_index(fr).is_some_and(|i| {
        t.quota_tree()
            .borrowing_with(t.current_usage(), n.0, i, Amount::ZERO)
    })
}

/// Kueue's `addUsage`: adds `q` (dense) at node `n`; the part above each node's local
/// availability flows up to its parent.
///
/// # Complexity
/// O(|q| · depth).
pub fn add_usage_dense<T: QuotaViewMut + ?Sized>(t: &mut T, n: NodeId, q: &[(usize, Amount)]) {
    let (tree, usage) = t.usage_mut();
    for &(i, v) in q {
        tree.add_usage(usage, n.0, i, v);
    }
}

/// Kueue's `removeUsage`, the exact inverse of [`add_usage_dense`].
///
/// # Complexity
/// O(|q| · depth).
pub fn remove_usage_dense<T: QuotaViewMut + ?Sized>(t: &mut T, n: NodeId, q: &[(usize, Amount)]) {
    let (tree, usage) = t.usage_mut();
    for &(i, v) in q {
        tree.remove_usage(usage, n.0, i, v);
    }
}

/// The part of `request` (already at node `n`) that reaches `n`'s parent when added at `n`.
pub(crate) fn pass_up<T: QuotaView + ?Sized>(
    t: &T,
    n: NodeId,
    request: &[(usize, Amount)],
) -> Vec<(usize, Amount)> {
    let (tree, usage) = (t.quota_tree(), t.current_usage());
    request
        .iter()
        .filter_map(|&(i, v)| tree.passed_up(usage, n.0, i, v).map(|up| (i, up)))
        .collect()
}

/// The DRS of `n` with `request` (dense, already propagated to `n`) added to its usage.
///
/// # Complexity
/// O(F log R).
pub fn drs_dense<T: QuotaView + ?Sized>(t: &T, n: NodeId, request: &[(usize, Amount)]) -> Drs {
    let frs = t.flavor_resources();
    let entries = (0..frs.len()).filter(|f| t.in_subtree(n, *f)).map(|f| {
        let r = request
            .iter()
            .find(|(i, _)| *i == f)
            .map_or(Amount::ZERO, |(_, a)| *a);
        DrsInput {
            fr: &frs[f],
            subtree_quota: t.subtree_quota_at(n, f),
            usage: t.usage_at(n, f),
            request: r,
        }
    });
    dominant_resource_share(t.parent(n).is_some(), t.weight(n), entries, t.lendable(n))
}

/// The node's DRS with its current usage (what `status.fairSharing` reports).
///
/// # Complexity
/// O(F log R).
pub fn drs<T: QuotaView + ?Sized>(t: &T, n: NodeId) -> Drs {
    drs_dense(t, n, &[])
}

/// [`drs_dense`] without allocation, plus whether the node borrows on one of the `requested`
/// flavor-resources. Same arithmetic, same order.
pub(crate) fn drs_lite<T: QuotaView + ?Sized>(
    t: &T,
    n: NodeId,
    request: &[(usize, Amount)],
    requested: &[usize],
) -> (DrsLite, bool) {
    let mut lite = DrsLite {
        weight: t.weight(n),
        ratio: 0.0,
        borrowing: false,
    };
    if t.parent(n).is_none() {
        return (lite, false);
    }
    let mut on = false;
    for (r, frs) in t.resource_groups().iter().enumerate() {
        let mut b = Amount::ZERO;
        for &f in frs {
            if !t.in_subtree(n, f) {
                continue;
            }
            let req = request
                .iter()
                .find(|(i, _)| *i == f)
                .map_or(Amount::ZERO, |(_, a)| *a);
            let x = req
                .saturating_add(t.usage_at(n, f))
                .saturating_sub(t.subtree_quota_at(n, f));
            if x.0 > 0 {
                b = b.saturating_add(x);
                lite.borrowing = true;
                if requested.contains(&f) {
                    on = true;
                }
            }
        }
        if b.0 > 0 {
            let l = t.lendable_at(n, r);
            if l.0 > 0 {
                let ratio = b.0 as f64 * 1000.0 / l.0 as f64;
                if ratio > lite.ratio {
                    lite.ratio = ratio;
                }
            }
        }
    }
    (lite, on)
}

/// Every node's usage, node by node (for an exact restore with [`restore_usage`]).
///
/// # Complexity
/// O(N·F).
pub(crate) fn save_usage<T: QuotaView + ?Sized>(t: &T) -> Vec<Amount> {
    let nf = t.flavor_resources().len();
    (0..t.node_count())
        .flat_map(|n| (0..nf).map(move |f| (n, f)))
        .map(|(n, f)| t.usage_at(NodeId(n), f))
        .collect()
}

/// Restores what [`save_usage`] saved.
///
/// # Complexity
/// O(N·F).
pub(crate) fn restore_usage<T: QuotaViewMut + ?Sized>(t: &mut T, saved: &[Amount]) {
    let nf = t.flavor_resources().len();
    for (i, &a) in saved.iter().enumerate() {
        if let (Some(n), Some(f)) = (i.checked_div(nf), i.checked_rem(nf)) {
            t.set_usage_at(NodeId(n), f, a);
        }
    }
}

/// The usage of `n` and of each ancestor (for an exact restore with [`restore_path`]).
///
/// # Complexity
/// O(depth·F).
pub(crate) fn save_path<T: QuotaView + ?Sized>(t: &T, n: NodeId) -> Vec<(NodeId, Vec<Amount>)> {
    let nf = t.flavor_resources().len();
    let mut out = Vec::new();
    let mut cur = Some(n);
    while let Some(c) = cur {
        out.push((c, (0..nf).map(|f| t.usage_at(c, f)).collect()));
        cur = t.parent(c);
    }
    out
}

/// Restores what [`save_path`] saved.
///
/// # Complexity
/// O(depth·F).
pub(crate) fn restore_path<T: QuotaViewMut + ?Sized>(t: &mut T, saved: Vec<(NodeId, Vec<Amount>)>) {
    for (n, u) in saved {
        for (f, a) in u.into_iter().enumerate() {
            t.set_usage_at(n, f, a);
        }
    }
}
