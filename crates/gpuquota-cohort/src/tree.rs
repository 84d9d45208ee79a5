//! The quota tree: Cohorts as inner nodes, ClusterQueues leaves, per flavor-resource quotas,
//! subtree quota, guaranteed (local) quota and usage flowing upward (kubernetes-sigs/kueue:
//! `pkg/cache/scheduler/resource_node.go`).
//!
//! [`QuotaForest`] is the engine's forest: typed node and flavor-resource ids, names, the
//! ClusterQueue behind each leaf, and the numbers of a [`QuotaTree`], the workspace's one
//! implementation of Kueue's quota arithmetic (`gpuquota_fairshare::quota`, shared with fair
//! sharing and the quota picture); the methods here only translate ids. The forest is
//! immutable once built; the only mutable part is [`Usage`], which the scheduler updates
//! incrementally with [`QuotaForest::add_usage`] / [`QuotaForest::remove_usage`].

use gpuquota_model::Amount;

pub use gpuquota_fairshare::quota::{FrQuota, QuotaTree, Usage};

use crate::ids::{CqId, Table};
pub use crate::ids::{FrId, NodeId};

/// What a tree node is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// A Cohort (explicit object or implicit name).
    Cohort,
    /// A ClusterQueue; the payload is its index in the world's ClusterQueue table.
    ClusterQueue(CqId),
}

/// One node of the forest.
#[derive(Debug, Clone)]
pub struct Node {
    /// The object's name.
    pub name: String,
    /// Cohort or ClusterQueue.
    pub kind: NodeKind,
    /// Parent cohort, if any.
    pub parent: Option<NodeId>,
    /// Children (cohorts and ClusterQueues), in name order.
    pub children: Vec<NodeId>,
    /// Kueue's cohort height (0 for a ClusterQueue; see [`QuotaForest::height`]).
    pub height: u32,
    /// Root of this node's tree.
    pub root: NodeId,
}

/// The immutable quota forest with precomputed subtree quota, local quota and potential
/// availability.
#[derive(Debug, Clone)]
pub struct QuotaForest {
    /// Nodes, by id.
    pub nodes: Table<NodeId, Node>,
    /// Number of flavor-resources.
    pub frs: usize,
    tree: QuotaTree,
}

impl QuotaForest {
    /// Builds the tree from nodes (parents and children already linked, no cycles) and each
    /// node's own quotas (`quotas[node * frs + fr]`); fills in every node's root and height.
    ///
    /// # Complexity
    /// O(nodes × frs).
    pub fn new(mut nodes: Table<NodeId, Node>, frs: usize, quotas: Vec<FrQuota>) -> QuotaForest {
        let parent: Vec<Option<usize>> =
            nodes.iter().map(|n| n.parent.map(NodeId::index)).collect();
        let children: Vec<Vec<usize>> = nodes
            .iter()
            .map(|n| n.children.iter().map(|c| c.index()).collect())
            .collect();
        let cohort: Vec<bool> = nodes.iter().map(|n| n.kind == NodeKind::Cohort).collect();
        let tree = QuotaTree::new(&parent, &children, &cohort, frs, quotas);
        for (i, node) in nodes.iter_mut().enumerate() {
            node.root = NodeId::new(tree.root(i));
            node.height = tree.height(i);
        }
        QuotaForest { nodes, frs, tree }
    }

    /// The forest's quota numbers, by dense node and flavor-resource index (what fair
    /// sharing's view reads).
    pub fn quota_tree(&self) -> &QuotaTree {
        &self.tree
    }

    /// Every flavor-resource id, in order.
    pub fn fr_ids(&self) -> impl DoubleEndedIterator<Item = FrId> + ExactSizeIterator + use<> {
        (0..self.frs).map(FrId::new)
    }

    /// Zero usage for every node.
    pub fn empty_usage(&self) -> Usage {
        self.tree.empty_usage()
    }

    /// The node's own quota entry.
    #[inline]
    pub fn quota(&self, n: NodeId, fr: FrId) -> FrQuota {
        self.tree.quota(n.index(), fr.index())
    }

    /// `SubtreeQuota(n)`: the capacity of the subtree visible at `n`.
    #[inline]
    pub fn subtree_quota(&self, n: NodeId, fr: FrId) -> Amount {
        self.tree.subtree_quota(n.index(), fr.index())
    }

    /// `localQuota(n)`: the guaranteed part never visible to the parent.
    #[inline]
    pub fn local_quota(&self, n: NodeId, fr: FrId) -> Amount {
        self.tree.local_quota(n.index(), fr.index())
    }

    /// Kueue's cohort height of `n`.
    #[inline]
    pub fn height(&self, n: NodeId) -> u32 {
        self.nodes[n].height
    }

    /// The node's parent.
    #[inline]
    pub fn parent(&self, n: NodeId) -> Option<NodeId> {
        self.nodes[n].parent
    }

    /// `Usage(n)`.
    #[inline]
    pub fn usage(&self, u: &Usage, n: NodeId, fr: FrId) -> Amount {
        self.tree.usage(u, n.index(), fr.index())
    }

    /// `LocalAvailable(n) = max(0, localQuota − Usage)`.
    #[inline]
    pub fn local_available(&self, u: &Usage, n: NodeId, fr: FrId) -> Amount {
        self.tree.local_available(u, n.index(), fr.index())
    }

    /// Adds `v` to `n`'s usage; the part beyond `n`'s unused local quota flows to the parent.
    ///
    /// # Complexity
    /// O(depth).
    #[inline]
    pub fn add_usage(&self, u: &mut Usage, n: NodeId, fr: FrId, v: Amount) {
        self.tree.add_usage(u, n.index(), fr.index(), v);
    }

    /// Removes `v` from `n`'s usage, releasing what `n` had charged to its ancestors.
    ///
    /// # Complexity
    /// O(depth).
    #[inline]
    pub fn remove_usage(&self, u: &mut Usage, n: NodeId, fr: FrId, v: Amount) {
        self.tree.remove_usage(u, n.index(), fr.index(), v);
    }

    /// Kueue's `available(n)` (may be negative after over-admission).
    ///
    /// # Complexity
    /// O(depth).
    #[inline]
    pub fn available_raw(&self, u: &Usage, n: NodeId, fr: FrId) -> Amount {
        self.tree.available_raw(u, n.index(), fr.index())
    }

    /// `Available(cq) = max(0, available(cq))`: what fits now without preemption.
    ///
    /// # Complexity
    /// O(depth).
    #[inline]
    pub fn available(&self, u: &Usage, n: NodeId, fr: FrId) -> Amount {
        self.tree.available(u, n.index(), fr.index())
    }

    /// `PotentialAvailable(n)`: the most `n` could ever get (precomputed).
    ///
    /// # Complexity
    /// O(1).
    #[inline]
    pub fn potential_available(&self, n: NodeId, fr: FrId) -> Amount {
        self.tree.potential_available(n.index(), fr.index())
    }

    /// `BorrowingWith(n, fr, v)`: `SubtreeQuota < Usage + v`.
    #[inline]
    pub fn borrowing_with(&self, u: &Usage, n: NodeId, fr: FrId, v: Amount) -> bool {
        self.tree.borrowing_with(u, n.index(), fr.index(), v)
    }

    /// `IsWithinNominalInResources(n, frs)`: no listed flavor-resource is above quota.
    pub fn within_nominal(&self, u: &Usage, n: NodeId, frs: &[FrId]) -> bool {
        frs.iter()
            .all(|&fr| !self.borrowing_with(u, n, fr, Amount::ZERO))
    }

    /// Kueue's `FindHeightOfLowestSubtreeThatFits`: the borrowing level of `v` more on `fr`
    /// in `cq`, and whether the lowest fitting subtree has a parent ("may reclaim in hierarchy").
    ///
    /// # Complexity
    /// O(depth).
    #[inline]
    pub fn borrowing_level(&self, u: &Usage, cq: NodeId, fr: FrId, v: Amount) -> (u32, bool) {
        self.tree.borrowing_level(u, cq.index(), fr.index(), v)
    }

    /// Iterates `n`'s ancestors from its parent to the root.
    pub fn ancestors(&self, n: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        let mut cur = self.nodes[n].parent;
        std::iter::from_fn(move || {
            let c = cur?;
            cur = self.nodes[c].parent;
            Some(c)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worked example of hierarchical-cohort quota in `gpuquota::design`.
    fn example() -> (QuotaForest, Usage, [NodeId; 5]) {
        // ids: 0 root, 1 teamA, 2 a1, 3 a2, 4 b1
        let id = NodeId::new;
        let mk = |name: &str, kind, parent: Option<usize>, children: Vec<usize>| Node {
            name: name.into(),
            kind,
            parent: parent.map(id),
            children: children.into_iter().map(id).collect(),
            height: 0,
            root: id(0),
        };
        let cq = |i| NodeKind::ClusterQueue(CqId::new(i));
        let nodes = Table::from_vec(vec![
            mk("root", NodeKind::Cohort, None, vec![1, 4]),
            mk("teamA", NodeKind::Cohort, Some(0), vec![2, 3]),
            mk("a1", cq(0), Some(1), vec![]),
            mk("a2", cq(1), Some(1), vec![]),
            mk("b1", cq(2), Some(0), vec![]),
        ]);
        let q = |n: i64, bl: Option<i64>, ll: Option<i64>| FrQuota {
            nominal: Amount(n),
            borrowing_limit: bl.map(Amount),
            lending_limit: ll.map(Amount),
            declared: true,
        };
        let quotas = vec![
            q(0, None, None),
            q(4, Some(6), Some(2)),
            q(10, None, Some(4)),
            q(6, Some(3), None),
            q(8, None, None),
        ];
        let t = QuotaForest::new(nodes, 1, quotas);
        let mut u = t.empty_usage();
        let f = FrId::new(0);
        t.add_usage(&mut u, id(2), f, Amount(9));
        t.add_usage(&mut u, id(3), f, Amount(7));
        t.add_usage(&mut u, id(4), f, Amount(5));
        (t, u, [0, 1, 2, 3, 4].map(id))
    }

    #[test]
    fn worked_example_matches_kueue_md() {
        let (t, u, [root, team_a, a1, a2, b1]) = example();
        let f = FrId::new(0);
        let row = |n| {
            (
                t.subtree_quota(n, f).0,
                t.local_quota(n, f).0,
                t.usage(&u, n, f).0,
                t.available(&u, n, f).0,
                t.potential_available(n, f).0,
            )
        };
        assert_eq!(row(a1), (10, 6, 9, 7, 26));
        assert_eq!(row(a2), (6, 0, 7, 2, 9));
        assert_eq!(row(team_a), (14, 12, 10, 7, 20));
        assert_eq!(row(b1), (8, 0, 5, 5, 10));
        assert_eq!(row(root), (10, 0, 5, 5, 10));
        assert_eq!(t.borrowing_level(&u, a2, f, Amount(1)), (1, true));
        assert_eq!(t.height(root), 2);
    }

    #[test]
    fn remove_usage_undoes_add_usage() {
        let (t, mut u, [_, _, a1, a2, _]) = example();
        let before = u.clone();
        let f = FrId::new(0);
        t.add_usage(&mut u, a2, f, Amount(3));
        t.add_usage(&mut u, a1, f, Amount(4));
        t.remove_usage(&mut u, a2, f, Amount(3));
        t.remove_usage(&mut u, a1, f, Amount(4));
        assert_eq!(u, before);
    }
}
