//! The quota tree: Cohorts as inner nodes, ClusterQueues as leaves, per flavor-resource quotas,
//! subtree quota, guaranteed (local) quota and usage flowing upward (kubernetes-sigs/kueue:
//! `pkg/cache/scheduler/resource_node.go`).
//!
//! Every node and every (flavor, resource) pair has a dense integer id; quotas live in flat
//! `Vec`s indexed by `node * frs + fr`. The tree itself ([`QuotaForest`]) is immutable once built;
//! the only mutable part is [`Usage`], which the scheduler updates incrementally with
//! [`QuotaForest::add_usage`] / [`QuotaForest::remove_usage`].

use gpuquota_model::Amount;

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

/// A node's own quota on one flavor-resource (`nominalQuota`, `borrowingLimit`,
/// `lendingLimit`) in Kueue units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FrQuota {
    /// `nominalQuota` (0 when the node has no entry).
    pub nominal: Amount,
    /// `borrowingLimit` (`None` = unlimited).
    pub borrowing_limit: Option<Amount>,
    /// `lendingLimit` (`None` = lend everything).
    pub lending_limit: Option<Amount>,
    /// True when the node's spec lists this flavor-resource.
    pub declared: bool,
}

/// The immutable quota forest with precomputed subtree quota, local quota and potential
/// availability.
#[derive(Debug, Clone)]
pub struct QuotaForest {
    /// Nodes, by id.
    pub nodes: Table<NodeId, Node>,
    /// Number of flavor-resources.
    pub frs: usize,
    quota: Vec<FrQuota>,
    subtree: Vec<Amount>,
    local: Vec<Amount>,
    potential: Vec<Amount>,
}

/// Usage counters of every node and flavor-resource (the only mutable part of a snapshot).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Usage(pub Vec<Amount>);

fn sat_add(a: Amount, b: Amount) -> Amount {
    a.saturating_add(b)
}

fn sat_sub(a: Amount, b: Amount) -> Amount {
    a.saturating_sub(b)
}

impl QuotaForest {
    /// Builds the tree from nodes (parents and children already linked, no cycles) and each
    /// node's own quotas (`quotas[node * frs + fr]`).
    ///
    /// # Complexity
    /// O(nodes × frs).
    pub fn new(mut nodes: Table<NodeId, Node>, frs: usize, quotas: Vec<FrQuota>) -> QuotaForest {
        let n = nodes.len();
        debug_assert_eq!(quotas.len(), n * frs);
        // Post-order (children before parents) via an explicit stack from every root.
        let mut order = Vec::with_capacity(n);
        for r in nodes.ids() {
            if nodes[r].parent.is_some() {
                continue;
            }
            let mut stack = vec![(r, false)];
            while let Some((id, done)) = stack.pop() {
                if done {
                    order.push(id);
                    continue;
                }
                stack.push((id, true));
                for &c in nodes[id].children.iter().rev() {
                    stack.push((c, false));
                }
            }
        }
        // Roots.
        for &id in order.iter().rev() {
            let root = match nodes[id].parent {
                Some(p) => nodes[p].root,
                None => id,
            };
            nodes[id].root = root;
        }
        // Heights.
        for &id in &order {
            let node = &nodes[id];
            let h = match node.kind {
                NodeKind::ClusterQueue(_) => 0,
                NodeKind::Cohort => {
                    let mut h = u32::from(!node.children.is_empty());
                    for &c in &node.children {
                        if nodes[c].kind == NodeKind::Cohort {
                            h = h.max(nodes[c].height + 1);
                        }
                    }
                    h
                }
            };
            nodes[id].height = h;
        }
        let mut subtree = vec![Amount::ZERO; n * frs];
        let mut local = vec![Amount::ZERO; n * frs];
        for &id in &order {
            let base = id.index() * frs;
            for fr in 0..frs {
                let mut s = quotas[base + fr].nominal;
                if nodes[id].kind == NodeKind::Cohort {
                    for &c in &nodes[id].children {
                        let cb = c.index() * frs + fr;
                        s = sat_add(s, sat_sub(subtree[cb], local[cb]));
                    }
                }
                subtree[base + fr] = s;
                local[base + fr] = match quotas[base + fr].lending_limit {
                    Some(ll) => sat_sub(s, ll).max(Amount::ZERO),
                    None => Amount::ZERO,
                };
            }
        }
        let mut potential = vec![Amount::ZERO; n * frs];
        for &id in order.iter().rev() {
            let base = id.index() * frs;
            for fr in 0..frs {
                let i = base + fr;
                potential[i] = match nodes[id].parent {
                    None => subtree[i],
                    Some(p) => {
                        let mut a = sat_add(local[i], potential[p.index() * frs + fr]);
                        if let Some(bl) = quotas[i].borrowing_limit {
                            a = a.min(sat_add(subtree[i], bl));
                        }
                        a
                    }
                };
            }
        }
        QuotaForest {
            nodes,
            frs,
            quota: quotas,
            subtree,
            local,
            potential,
        }
    }

    /// Every flavor-resource id, in order.
    pub fn fr_ids(&self) -> impl DoubleEndedIterator<Item = FrId> + ExactSizeIterator + use<> {
        (0..self.frs).map(FrId::new)
    }

    /// Zero usage for every node.
    pub fn empty_usage(&self) -> Usage {
        Usage(vec![Amount::ZERO; self.nodes.len() * self.frs])
    }

    #[inline]
    fn ix(&self, n: NodeId, fr: FrId) -> usize {
        n.index() * self.frs + fr.index()
    }

    /// The node's own quota entry.
    pub fn quota(&self, n: NodeId, fr: FrId) -> FrQuota {
        self.quota[self.ix(n, fr)]
    }

    /// `SubtreeQuota(n)`: the capacity of the subtree visible at `n`.
    pub fn subtree_quota(&self, n: NodeId, fr: FrId) -> Amount {
        self.subtree[self.ix(n, fr)]
    }

    /// `localQuota(n)`: the guaranteed part never visible to the parent.
    pub fn local_quota(&self, n: NodeId, fr: FrId) -> Amount {
        self.local[self.ix(n, fr)]
    }

    /// Kueue's cohort height of `n`.
    pub fn height(&self, n: NodeId) -> u32 {
        self.nodes[n].height
    }

    /// The node's parent.
    pub fn parent(&self, n: NodeId) -> Option<NodeId> {
        self.nodes[n].parent
    }

    /// `Usage(n)`.
    pub fn usage(&self, u: &Usage, n: NodeId, fr: FrId) -> Amount {
        u.0[self.ix(n, fr)]
    }

    /// `LocalAvailable(n) = max(0, localQuota − Usage)`.
    pub fn local_available(&self, u: &Usage, n: NodeId, fr: FrId) -> Amount {
        let i = self.ix(n, fr);
        sat_sub(self.local[i], u.0[i]).max(Amount::ZERO)
    }

    /// Adds `v` to `n`'s usage; the part beyond `n`'s unused local quota flows to the parent.
    ///
    /// # Complexity
    /// O(depth).
    pub fn add_usage(&self, u: &mut Usage, n: NodeId, fr: FrId, v: Amount) {
        let mut node = n;
        let mut v = v;
        loop {
            let la = self.local_available(u, node, fr);
            let i = self.ix(node, fr);
            u.0[i] = sat_add(u.0[i], v);
            match self.nodes[node].parent {
                Some(p) if v > la => {
                    v = sat_sub(v, la);
                    node = p;
                }
                _ => return,
            }
        }
    }

    /// Removes `v` from `n`'s usage, releasing what `n` had charged to its ancestors.
    ///
    /// # Complexity
    /// O(depth).
    pub fn remove_usage(&self, u: &mut Usage, n: NodeId, fr: FrId, v: Amount) {
        let mut node = n;
        let mut v = v;
        loop {
            let i = self.ix(node, fr);
            let stored = sat_sub(u.0[i], self.local[i]);
            u.0[i] = sat_sub(u.0[i], v);
            match self.nodes[node].parent {
                Some(p) if stored > Amount::ZERO => {
                    v = v.min(stored);
                    node = p;
                }
                _ => return,
            }
        }
    }

    /// Kueue's `available(n)` (may be negative after over-admission).
    ///
    /// # Complexity
    /// O(depth).
    pub fn available_raw(&self, u: &Usage, n: NodeId, fr: FrId) -> Amount {
        let i = self.ix(n, fr);
        match self.nodes[n].parent {
            None => sat_sub(self.subtree[i], u.0[i]),
            Some(p) => {
                let mut pa = self.available_raw(u, p, fr);
                if let Some(bl) = self.quota[i].borrowing_limit {
                    let lq = self.local[i];
                    let stored = sat_sub(self.subtree[i], lq);
                    let used = sat_sub(u.0[i], lq).max(Amount::ZERO);
                    pa = pa.min(sat_add(sat_sub(stored, used), bl));
                }
                sat_add(self.local_available(u, n, fr), pa)
            }
        }
    }

    /// `Available(cq) = max(0, available(cq))`: what fits now without preemption.
    ///
    /// # Complexity
    /// O(depth).
    pub fn available(&self, u: &Usage, n: NodeId, fr: FrId) -> Amount {
        self.available_raw(u, n, fr).max(Amount::ZERO)
    }

    /// `PotentialAvailable(n)`: the most `n` could ever get (precomputed).
    ///
    /// # Complexity
    /// O(1).
    pub fn potential_available(&self, n: NodeId, fr: FrId) -> Amount {
        self.potential[self.ix(n, fr)]
    }

    /// `BorrowingWith(n, fr, v)`: `SubtreeQuota < Usage + v`.
    pub fn borrowing_with(&self, u: &Usage, n: NodeId, fr: FrId, v: Amount) -> bool {
        let i = self.ix(n, fr);
        self.subtree[i] < sat_add(u.0[i], v)
    }

    /// `IsWithinNominalInResources(n, frs)`: no listed flavor-resource is above quota.
    pub fn within_nominal(&self, u: &Usage, n: NodeId, frs: &[FrId]) -> bool {
        frs.iter().all(|&fr| {
            let i = self.ix(n, fr);
            self.subtree[i] >= u.0[i]
        })
    }

    /// Kueue's `FindHeightOfLowestSubtreeThatFits`: the borrowing level of `v` more on `fr`
    /// in `cq`, and whether the lowest fitting subtree has a parent ("may reclaim in hierarchy").
    ///
    /// # Complexity
    /// O(depth).
    pub fn borrowing_level(&self, u: &Usage, cq: NodeId, fr: FrId, v: Amount) -> (u32, bool) {
        let has_parent = self.nodes[cq].parent.is_some();
        if !self.borrowing_with(u, cq, fr, v) || !has_parent {
            return (0, has_parent);
        }
        let mut remaining = sat_sub(v, self.local_available(u, cq, fr));
        let mut node = self.nodes[cq].parent;
        let mut last = cq;
        while let Some(a) = node {
            if !self.borrowing_with(u, a, fr, remaining) {
                return (self.height(a), self.nodes[a].parent.is_some());
            }
            remaining = sat_sub(remaining, self.local_available(u, a, fr));
            last = a;
            node = self.nodes[a].parent;
        }
        (self.height(last), false)
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
