//! Kueue's quota arithmetic over a cohort forest, written once (kubernetes-sigs/kueue:
//! `pkg/cache/scheduler/resource_node.go`): `SubtreeQuota`, `localQuota` (the guaranteed part),
//! `potentialAvailable`, usage flowing upward past the local quota, `available` with
//! `borrowingLimit`, and the borrowing level of a request.
//!
//! Every production reader of these numbers goes through [`QuotaTree`]: the Kueue engine's
//! quota forest (`gpuquota_cohort::tree::QuotaForest`, which adds names and ClusterQueue ids),
//! this crate's standalone [`crate::tree::FairShareTree`], the [`crate::view::QuotaView`]
//! functions fair sharing is written over, and the quota picture ([`crate::picture`]). The
//! slow recursive reference the tests compare it with is kept in the test kit only.
//!
//! Nodes and flavor-resources are dense indices chosen by the caller (`0..len()` and
//! `0..frs()`); numbers live in flat vectors indexed by `node * frs + fr`. The tree is immutable
//! once built; the only mutable part is a [`Usage`], changed with [`QuotaTree::add_usage`] and
//! [`QuotaTree::remove_usage`] (its exact inverse). Amounts use Kueue's saturating arithmetic:
//!
//! ```text
//! subtreeQuota(n) = nominal(n) + Σ_child (subtreeQuota(child) − localQuota(child))
//! localQuota(n)   = max(0, subtreeQuota(n) − lendingLimit(n))   with a lending limit, else 0
//! potentialAvailable(root) = subtreeQuota(root)
//! potentialAvailable(n)    = min(localQuota(n) + potentialAvailable(parent),
//!                                subtreeQuota(n) + borrowingLimit(n))   (the min with a limit)
//! available(root) = subtreeQuota(root) − usage(root)
//! available(n)    = max(0, localQuota(n) − usage(n))
//!                   + min(available(parent),
//!                         subtreeQuota(n) − localQuota(n) − max(0, usage(n) − localQuota(n))
//!                           + borrowingLimit(n))              (the min with a limit)
//! ```
//!
//! ```
//! use gpuquota_fairshare::quota::{FrQuota, QuotaTree};
//! use gpuquota_model::Amount;
//!
//! // a cohort (node 0) with two ClusterQueues of 4 (nodes 1, 2); node 2 lends at most 1
//! let q = |n: i64, ll: Option<i64>| FrQuota {
//!     nominal: Amount(n),
//!     lending_limit: ll.map(Amount),
//!     declared: true,
//!     ..FrQuota::default()
//! };
//! let tree = QuotaTree::new(
//!     &[None, Some(0), Some(0)],
//!     &[vec![1, 2], vec![], vec![]],
//!     &[true, false, false],
//!     1,
//!     vec![FrQuota::default(), q(4, None), q(4, Some(1))],
//! );
//! assert_eq!(tree.subtree_quota(0, 0), Amount(5)); // 4 + 1 lent
//! assert_eq!(tree.local_quota(2, 0), Amount(3));
//! let mut usage = tree.empty_usage();
//! tree.add_usage(&mut usage, 1, 0, Amount(5)); // borrows 1 from the cohort
//! assert_eq!(tree.usage(&usage, 0, 0), Amount(5));
//! assert_eq!(tree.available(&usage, 2, 0), Amount(3)); // its own 3 stay guaranteed
//! assert_eq!(tree.potential_available(1, 0), Amount(5));
//! ```

use gpuquota_model::Amount;

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

/// Usage counters of every node and flavor-resource (`node * frs + fr`), the only mutable part
/// of a quota snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Usage(pub Vec<Amount>);

/// A cohort forest with its static quota numbers precomputed (see the module docs).
#[derive(Debug, Clone)]
pub struct QuotaTree {
    frs: usize,
    parent: Vec<Option<usize>>,
    cohort: Vec<bool>,
    root: Vec<usize>,
    height: Vec<u32>,
    /// Every node, children before parents.
    order: Vec<usize>,
    quota: Vec<FrQuota>,
    subtree: Vec<Amount>,
    local: Vec<Amount>,
    potential: Vec<Amount>,
    in_subtree: Vec<bool>,
}

fn sat_add(a: Amount, b: Amount) -> Amount {
    a.saturating_add(b)
}

fn sat_sub(a: Amount, b: Amount) -> Amount {
    a.saturating_sub(b)
}

impl QuotaTree {
    /// Builds the tree from each node's parent, children (in the order their contributions
    /// are summed), whether it is a cohort, and its own quotas (`quotas[node * frs + fr]`).
    /// The parent links must form a forest (no cycles; the callers' validation refuses them)
    /// and agree with the children lists.
    ///
    /// # Complexity
    /// O(nodes × frs).
    pub fn new(
        parent: &[Option<usize>],
        children: &[Vec<usize>],
        cohort: &[bool],
        frs: usize,
        quotas: Vec<FrQuota>,
    ) -> QuotaTree {
        let n = parent.len();
        debug_assert_eq!(children.len(), n);
        debug_assert_eq!(cohort.len(), n);
        debug_assert_eq!(quotas.len(), n * frs);
        // Post-order (children before parents) via an explicit stack from every root.
        let mut order = Vec::with_capacity(n);
        for r in (0..n).filter(|&r| parent[r].is_none()) {
            let mut stack = vec![(r, false)];
            while let Some((id, done)) = stack.pop() {
                if done {
                    order.push(id);
                    continue;
                }
                stack.push((id, true));
                for &c in children[id].iter().rev() {
                    stack.push((c, false));
                }
            }
        }
        let mut root: Vec<usize> = (0..n).collect();
        for &id in order.iter().rev() {
            if let Some(p) = parent[id] {
                root[id] = root[p];
            }
        }
        // Kueue's cohort height: 0 for a ClusterQueue and an empty cohort, else one more than
        // the highest child cohort (at least 1).
        let mut height = vec![0u32; n];
        for &id in &order {
            if cohort[id] {
                let mut h = u32::from(!children[id].is_empty());
                for &c in &children[id] {
                    if cohort[c] {
                        h = h.max(height[c] + 1);
                    }
                }
                height[id] = h;
            }
        }
        let mut subtree = vec![Amount::ZERO; n * frs];
        let mut local = vec![Amount::ZERO; n * frs];
        let mut in_subtree = vec![false; n * frs];
        for &id in &order {
            let base = id * frs;
            for fr in 0..frs {
                let mut s = quotas[base + fr].nominal;
                let mut keyed = quotas[base + fr].declared;
                for &c in &children[id] {
                    let cb = c * frs + fr;
                    s = sat_add(s, sat_sub(subtree[cb], local[cb]));
                    keyed |= in_subtree[cb];
                }
                subtree[base + fr] = s;
                in_subtree[base + fr] = keyed;
                local[base + fr] = match quotas[base + fr].lending_limit {
                    Some(ll) => sat_sub(s, ll).max(Amount::ZERO),
                    None => Amount::ZERO,
                };
            }
        }
        let mut potential = vec![Amount::ZERO; n * frs];
        for &id in order.iter().rev() {
            let base = id * frs;
            for fr in 0..frs {
                let i = base + fr;
                potential[i] = match parent[id] {
                    None => subtree[i],
                    Some(p) => {
                        let mut a = sat_add(local[i], potential[p * frs + fr]);
                        if let Some(bl) = quotas[i].borrowing_limit {
                            a = a.min(sat_add(subtree[i], bl));
                        }
                        a
                    }
                };
            }
        }
        QuotaTree {
            frs,
            parent: parent.to_vec(),
            cohort: cohort.to_vec(),
            root,
            height,
            order,
            quota: quotas,
            subtree,
            local,
            potential,
            in_subtree,
        }
    }

    /// Number of nodes.
    #[inline]
    pub fn len(&self) -> usize {
        self.parent.len()
    }

    /// True when the forest has no node.
    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    /// Number of flavor-resources.
    #[inline]
    pub fn frs(&self) -> usize {
        self.frs
    }

    /// Every node, children before parents (each tree depth-first from its root, roots by
    /// index).
    pub fn post_order(&self) -> &[usize] {
        &self.order
    }

    /// Zero usage for every node.
    #[inline]
    pub fn empty_usage(&self) -> Usage {
        Usage(vec![Amount::ZERO; self.parent.len() * self.frs])
    }

    #[inline]
    fn ix(&self, n: usize, fr: usize) -> usize {
        n * self.frs + fr
    }

    /// The node's parent.
    #[inline]
    pub fn parent(&self, n: usize) -> Option<usize> {
        self.parent[n]
    }

    /// True for a cohort, false for a ClusterQueue.
    #[inline]
    pub fn is_cohort(&self, n: usize) -> bool {
        self.cohort[n]
    }

    /// The root of the node's tree (itself for a root).
    #[inline]
    pub fn root(&self, n: usize) -> usize {
        self.root[n]
    }

    /// Kueue's cohort height of `n` (0 for a ClusterQueue).
    #[inline]
    pub fn height(&self, n: usize) -> u32 {
        self.height[n]
    }

    /// The node's own quota entry.
    #[inline]
    pub fn quota(&self, n: usize, fr: usize) -> FrQuota {
        self.quota[self.ix(n, fr)]
    }

    /// True when `fr` is a key of the node's `SubtreeQuota`: the node or a descendant
    /// declares it.
    #[inline]
    pub fn in_subtree(&self, n: usize, fr: usize) -> bool {
        self.in_subtree[self.ix(n, fr)]
    }

    /// `SubtreeQuota(n)`: the capacity of the subtree visible at `n`.
    #[inline]
    pub fn subtree_quota(&self, n: usize, fr: usize) -> Amount {
        self.subtree[self.ix(n, fr)]
    }

    /// `localQuota(n)`: the guaranteed part never visible to the parent.
    #[inline]
    pub fn local_quota(&self, n: usize, fr: usize) -> Amount {
        self.local[self.ix(n, fr)]
    }

    /// What the node reserves for itself: its `localQuota` when it has a parent, the whole
    /// `SubtreeQuota` for a root (which shares with nobody).
    #[inline]
    pub fn guaranteed(&self, n: usize, fr: usize) -> Amount {
        match self.parent[n] {
            Some(_) => self.local_quota(n, fr),
            None => self.subtree_quota(n, fr),
        }
    }

    /// The most the node lends to its parent: `SubtreeQuota − localQuota` when it has a
    /// parent, 0 for a root.
    #[inline]
    pub fn lends_at_most(&self, n: usize, fr: usize) -> Amount {
        match self.parent[n] {
            Some(_) => sat_sub(self.subtree_quota(n, fr), self.local_quota(n, fr)),
            None => Amount::ZERO,
        }
    }

    /// `PotentialAvailable(n)`: the most `n` could ever get, usage elsewhere aside
    /// (precomputed).
    ///
    /// # Complexity
    /// O(1).
    #[inline]
    pub fn potential_available(&self, n: usize, fr: usize) -> Amount {
        self.potential[self.ix(n, fr)]
    }

    /// `Usage(n)`.
    #[inline]
    pub fn usage(&self, u: &Usage, n: usize, fr: usize) -> Amount {
        u.0[self.ix(n, fr)]
    }

    /// Overwrites `Usage(n)` (exact restores of a saved snapshot).
    #[inline]
    pub fn set_usage(&self, u: &mut Usage, n: usize, fr: usize, amount: Amount) {
        u.0[self.ix(n, fr)] = amount;
    }

    /// `LocalAvailable(n) = max(0, localQuota − Usage)`.
    #[inline]
    pub fn local_available(&self, u: &Usage, n: usize, fr: usize) -> Amount {
        let i = self.ix(n, fr);
        sat_sub(self.local[i], u.0[i]).max(Amount::ZERO)
    }

    /// Kueue's `addUsage`: adds `v` to `n`'s usage; the part beyond each node's unused local
    /// quota flows on to its parent.
    ///
    /// # Complexity
    /// O(depth).
    #[inline]
    pub fn add_usage(&self, u: &mut Usage, n: usize, fr: usize, v: Amount) {
        let mut node = n;
        let mut v = v;
        loop {
            let la = self.local_available(u, node, fr);
            let i = self.ix(node, fr);
            u.0[i] = sat_add(u.0[i], v);
            match self.parent[node] {
                Some(p) if v > la => {
                    v = sat_sub(v, la);
                    node = p;
                }
                _ => return,
            }
        }
    }

    /// Kueue's `removeUsage`, the exact inverse of [`QuotaTree::add_usage`]: removes `v` from
    /// `n`'s usage, releasing what `n` had charged to its ancestors.
    ///
    /// # Complexity
    /// O(depth).
    #[inline]
    pub fn remove_usage(&self, u: &mut Usage, n: usize, fr: usize, v: Amount) {
        let mut node = n;
        let mut v = v;
        loop {
            let i = self.ix(node, fr);
            let stored = sat_sub(u.0[i], self.local[i]);
            u.0[i] = sat_sub(u.0[i], v);
            match self.parent[node] {
                Some(p) if stored > Amount::ZERO => {
                    v = v.min(stored);
                    node = p;
                }
                _ => return,
            }
        }
    }

    /// The part of `v`, added at `n`, that reaches `n`'s parent (`None` when nothing does).
    #[inline]
    pub fn passed_up(&self, u: &Usage, n: usize, fr: usize, v: Amount) -> Option<Amount> {
        let la = self.local_available(u, n, fr);
        (v > la).then(|| sat_sub(v, la))
    }

    /// Kueue's `available(n)` (may be negative after over-admission).
    ///
    /// # Complexity
    /// O(depth).
    #[inline]
    pub fn available_raw(&self, u: &Usage, n: usize, fr: usize) -> Amount {
        let i = self.ix(n, fr);
        match self.parent[n] {
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

    /// `Available(n) = max(0, available(n))`: what fits now without preemption.
    ///
    /// # Complexity
    /// O(depth).
    #[inline]
    pub fn available(&self, u: &Usage, n: usize, fr: usize) -> Amount {
        self.available_raw(u, n, fr).max(Amount::ZERO)
    }

    /// `BorrowingWith(n, fr, v)`: `SubtreeQuota < Usage + v`.
    #[inline]
    pub fn borrowing_with(&self, u: &Usage, n: usize, fr: usize, v: Amount) -> bool {
        let i = self.ix(n, fr);
        self.subtree[i] < sat_add(u.0[i], v)
    }

    /// Kueue's `FindHeightOfLowestSubtreeThatFits`: the borrowing level of `v` more on `fr`
    /// in `cq`, and whether the lowest fitting subtree has a parent ("may reclaim in
    /// hierarchy").
    ///
    /// # Complexity
    /// O(depth).
    #[inline]
    pub fn borrowing_level(&self, u: &Usage, cq: usize, fr: usize, v: Amount) -> (u32, bool) {
        let has_parent = self.parent[cq].is_some();
        if !self.borrowing_with(u, cq, fr, v) || !has_parent {
            return (0, has_parent);
        }
        let mut remaining = sat_sub(v, self.local_available(u, cq, fr));
        let mut node = self.parent[cq];
        let mut last = cq;
        while let Some(a) = node {
            if !self.borrowing_with(u, a, fr, remaining) {
                return (self.height[a], self.parent[a].is_some());
            }
            remaining = sat_sub(remaining, self.local_available(u, a, fr));
            last = a;
            node = self.parent[a];
        }
        (self.height[last], false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worked example of hierarchical-cohort quota in `gpuquota::design`: 0 root,
    /// 1 teamA, 2 a1, 3 a2, 4 b1.
    fn example() -> (QuotaTree, Usage) {
        let q = |n: i64, bl: Option<i64>, ll: Option<i64>| FrQuota {
            nominal: Amount(n),
            borrowing_limit: bl.map(Amount),
            lending_limit: ll.map(Amount),
            declared: true,
        };
        let t = QuotaTree::new(
            &[None, Some(0), Some(1), Some(1), Some(0)],
            &[vec![1, 4], vec![2, 3], vec![], vec![], vec![]],
            &[true, true, false, false, false],
            1,
            vec![
                q(0, None, None),
                q(4, Some(6), Some(2)),
                q(10, None, Some(4)),
                q(6, Some(3), None),
                q(8, None, None),
            ],
        );
        let mut u = t.empty_usage();
        t.add_usage(&mut u, 2, 0, Amount(9));
        t.add_usage(&mut u, 3, 0, Amount(7));
        t.add_usage(&mut u, 4, 0, Amount(5));
        (t, u)
    }

    #[test]
    fn worked_example() {
        let (t, u) = example();
        let row = |n| {
            (
                t.subtree_quota(n, 0).0,
                t.local_quota(n, 0).0,
                t.usage(&u, n, 0).0,
                t.available(&u, n, 0).0,
                t.potential_available(n, 0).0,
                t.guaranteed(n, 0).0,
                t.lends_at_most(n, 0).0,
            )
        };
        assert_eq!(row(2), (10, 6, 9, 7, 26, 6, 4));
        assert_eq!(row(3), (6, 0, 7, 2, 9, 0, 6));
        assert_eq!(row(1), (14, 12, 10, 7, 20, 12, 2));
        assert_eq!(row(4), (8, 0, 5, 5, 10, 0, 8));
        assert_eq!(row(0), (10, 0, 5, 5, 10, 10, 0));
        assert_eq!(t.borrowing_level(&u, 3, 0, Amount(1)), (1, true));
        assert_eq!(t.height(0), 2);
        assert_eq!(t.height(1), 1);
        assert_eq!(t.root(3), 0);
        assert_eq!(t.post_order(), &[2, 3, 1, 4, 0]);
        assert_eq!(t.passed_up(&u, 2, 0, Amount(1)), Some(Amount(1)));
    }

    #[test]
    fn remove_usage_undoes_add_usage() {
        let (t, mut u) = example();
        let before = u.clone();
        t.add_usage(&mut u, 3, 0, Amount(3));
        t.add_usage(&mut u, 2, 0, Amount(4));
        t.remove_usage(&mut u, 3, 0, Amount(3));
        t.remove_usage(&mut u, 2, 0, Amount(4));
        assert_eq!(u, before);
    }
}
