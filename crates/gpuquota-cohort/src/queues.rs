//! One ClusterQueue's pending workloads: the active heap (what the next cycle can pop) and
//! the inadmissible set (what waits for a capacity event), both split by scheduling shape so
//! that upstream's bulk moves cost no more than the workloads that really change sides.
//!
//! Every workload of a ClusterQueue belongs to one *group*: the queue's workloads of its
//! scheduling-equivalence shape. A group keeps its active and its parked (inadmissible)
//! members in two ordered sets. The queue's head is the smallest first active key over its
//! groups, kept in an index of group heads. Moving a whole shape to the inadmissible set
//! (upstream's SchedulingEquivalenceHashing bulk move) and moving every inadmissible workload
//! back (a capacity event) merge two sets of one group, the smaller into the larger; in the
//! steady state of a long backlog (a failed head parks its shape, a completion brings it
//! back) each move only touches the workloads that arrived since, not the backlog.
//!
//! The observable contents are exactly those of one ordered heap and one inadmissible set per
//! ClusterQueue: the same keys pop in the same order.

use std::collections::BTreeSet;

use crate::ids::{CqId, Slot, Table};
use crate::world::WlId;
use gpuquota_model::Timestamp;

/// The heap order of a pending workload: priority (negated), queue time, UID rank, id.
pub(crate) type HeapKey = (i64, Timestamp, u32, WlId);

#[derive(Debug, Clone, Default, PartialEq)]
struct Group {
    active: BTreeSet<HeapKey>,
    parked: BTreeSet<HeapKey>,
    /// Active members evicted by a preemption and not popped since (their pending reason is
    /// `Preempted`): a bulk move of the shape shows them as bypassed.
    evicted: BTreeSet<WlId>,
    /// Wrapping sums of the fingerprint terms of the active and the parked members.
    active_fp: u64,
    parked_fp: u64,
}

/// The fingerprint term of a queued (ClusterQueue, workload): SplitMix64's finalizer.
fn term(cq: CqId, wl: WlId) -> u64 {
    let mut z = ((u64::from(u32::from(cq)) << 32) | u64::from(u32::from(wl)))
        .wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Moves every key of `from` into `to`, inserting the smaller set into the larger.
///
/// # Complexity
/// O(min(|from|, |to|) × log max(|from|, |to|)).
fn merge_into(to: &mut BTreeSet<HeapKey>, from: &mut BTreeSet<HeapKey>) {
    if from.len() > to.len() {
        std::mem::swap(to, from);
    }
    while let Some(k) = from.pop_first() {
        to.insert(k);
    }
}

/// One ClusterQueue's active heap and inadmissible set (see the module docs).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Queue {
    cq: CqId,
    groups: Table<Slot, Group>,
    /// First active key of every group with active members.
    heads: BTreeSet<(HeapKey, Slot)>,
    /// Groups with parked members.
    parked_groups: BTreeSet<Slot>,
    active_len: usize,
    parked_len: usize,
    /// Wrapping sum of the fingerprint terms of the active members.
    active_fp: u64,
}

impl Queue {
    /// The queue of ClusterQueue `cq` with `groups` shape groups (slots `0..groups`).
    pub(crate) fn with_groups(cq: CqId, groups: usize) -> Queue {
        Queue {
            cq,
            groups: Table::filled(Group::default(), groups),
            ..Queue::default()
        }
    }

    /// The same queue emptied: its ClusterQueue and shape groups, no members.
    pub(crate) fn emptied(&self) -> Queue {
        Queue::with_groups(self.cq, self.groups.len())
    }

    fn set_head(&mut self, g: Slot, old: Option<HeapKey>) {
        let new = self.groups[g].active.first().copied();
        if old != new {
            if let Some(o) = old {
                self.heads.remove(&(o, g));
            }
            if let Some(n) = new {
                self.heads.insert((n, g));
            }
        }
    }

    /// Adds an active key (no-op when present).
    ///
    /// # Complexity
    /// O(log W).
    pub(crate) fn insert(&mut self, k: HeapKey, g: Slot) {
        let old = self.groups[g].active.first().copied();
        if self.groups[g].active.insert(k) {
            let t = term(self.cq, k.3);
            self.groups[g].active_fp = self.groups[g].active_fp.wrapping_add(t);
            self.active_fp = self.active_fp.wrapping_add(t);
            self.active_len += 1;
            self.set_head(g, old);
        }
    }

    /// Adds an active key of a workload evicted by a preemption (see [`Group::evicted`]).
    ///
    /// # Complexity
    /// O(log W).
    pub(crate) fn insert_evicted(&mut self, k: HeapKey, g: Slot) {
        self.insert(k, g);
        self.groups[g].evicted.insert(k.3);
    }

    /// Removes an active key; true when it was there.
    ///
    /// # Complexity
    /// O(log W).
    pub(crate) fn remove(&mut self, k: &HeapKey, g: Slot) -> bool {
        let old = self.groups[g].active.first().copied();
        if self.groups[g].active.remove(k) {
            let t = term(self.cq, k.3);
            self.groups[g].active_fp = self.groups[g].active_fp.wrapping_sub(t);
            self.active_fp = self.active_fp.wrapping_sub(t);
            self.active_len -= 1;
            self.groups[g].evicted.remove(&k.3);
            self.set_head(g, old);
            true
        } else {
            false
        }
    }

    /// True when the key is active.
    ///
    /// # Complexity
    /// O(log W).
    pub(crate) fn contains(&self, k: &HeapKey, g: Slot) -> bool {
        self.groups[g].active.contains(k)
    }

    /// The smallest active key.
    ///
    /// # Complexity
    /// O(log G) for G groups.
    pub(crate) fn first(&self) -> Option<HeapKey> {
        self.heads.first().map(|h| h.0)
    }

    /// Removes and returns the smallest active key.
    ///
    /// # Complexity
    /// O(log W).
    pub(crate) fn pop_first(&mut self) -> Option<HeapKey> {
        let (k, g) = *self.heads.first()?;
        self.remove(&k, g);
        Some(k)
    }

    /// The active keys in heap order.
    ///
    /// # Complexity
    /// O(1) for the first key, then O(G) per key (a merge of the groups).
    pub(crate) fn iter(&self) -> QueueIter<'_> {
        QueueIter {
            queue: self,
            first: self.first(),
            last: None,
            merge: None,
        }
    }

    /// An order-independent fingerprint of the active heap: (count, wrapping sum of a mix of
    /// every (ClusterQueue, workload)); equal contents give equal fingerprints.
    ///
    /// # Complexity
    /// O(1).
    pub(crate) fn fingerprint(&self) -> (usize, u64) {
        (self.active_len, self.active_fp)
    }

    /// Parks a key in the inadmissible set (no-op when parked already).
    ///
    /// # Complexity
    /// O(log W).
    pub(crate) fn park(&mut self, k: HeapKey, g: Slot) {
        if self.groups[g].parked.insert(k) {
            let t = term(self.cq, k.3);
            self.groups[g].parked_fp = self.groups[g].parked_fp.wrapping_add(t);
            self.parked_len += 1;
            self.parked_groups.insert(g);
        }
    }

    /// Removes a parked key; true when it was there.
    ///
    /// # Complexity
    /// O(log W).
    pub(crate) fn unpark(&mut self, k: &HeapKey, g: Slot) -> bool {
        let grp = &mut self.groups[g];
        if grp.parked.remove(k) {
            grp.parked_fp = grp.parked_fp.wrapping_sub(term(self.cq, k.3));
            self.parked_len -= 1;
            if grp.parked.is_empty() {
                self.parked_groups.remove(&g);
            }
            true
        } else {
            false
        }
    }

    /// True when the key is parked.
    ///
    /// # Complexity
    /// O(log W).
    pub(crate) fn is_parked(&self, k: &HeapKey, g: Slot) -> bool {
        self.groups[g].parked.contains(k)
    }

    /// Parked keys.
    pub(crate) fn parked_len(&self) -> usize {
        self.parked_len
    }

    /// Moves every active key of group `g` to the inadmissible set (upstream's bulk move of
    /// one scheduling shape); returns the moved workloads that were evicted (see
    /// [`Group::evicted`]).
    ///
    /// # Complexity
    /// O(min(active, parked) × log W + evicted) of the group.
    pub(crate) fn park_group(&mut self, g: Slot) -> Vec<WlId> {
        let old = self.groups[g].active.first().copied();
        let grp = &mut self.groups[g];
        let moved = grp.active.len();
        if moved == 0 {
            return Vec::new();
        }
        merge_into(&mut grp.parked, &mut grp.active);
        let fp = std::mem::take(&mut grp.active_fp);
        grp.parked_fp = grp.parked_fp.wrapping_add(fp);
        self.active_fp = self.active_fp.wrapping_sub(fp);
        let evicted: Vec<WlId> = std::mem::take(&mut grp.evicted).into_iter().collect();
        self.active_len -= moved;
        self.parked_len += moved;
        self.parked_groups.insert(g);
        self.set_head(g, old);
        evicted
    }

    /// Moves every parked key back to the active heap (a capacity event).
    ///
    /// # Complexity
    /// O(Σ over groups with parked keys of min(active, parked) × log W).
    pub(crate) fn unpark_all(&mut self) {
        let groups = std::mem::take(&mut self.parked_groups);
        for g in groups {
            let old = self.groups[g].active.first().copied();
            let grp = &mut self.groups[g];
            merge_into(&mut grp.active, &mut grp.parked);
            let fp = std::mem::take(&mut grp.parked_fp);
            grp.active_fp = grp.active_fp.wrapping_add(fp);
            self.active_fp = self.active_fp.wrapping_add(fp);
            self.set_head(g, old);
        }
        self.active_len += self.parked_len;
        self.parked_len = 0;
    }
}

/// The active keys of a [`Queue`] in heap order.
pub(crate) struct QueueIter<'q> {
    queue: &'q Queue,
    first: Option<HeapKey>,
    /// The first key, until the merge is built.
    last: Option<HeapKey>,
    merge: Option<Vec<std::iter::Peekable<std::collections::btree_set::Iter<'q, HeapKey>>>>,
}

impl Iterator for QueueIter<'_> {
    type Item = HeapKey;

    fn next(&mut self) -> Option<HeapKey> {
        if let Some(f) = self.first.take() {
            // the merge is built only when a second key is asked for
            self.merge = Some(Vec::new());
            self.last = Some(f);
            return Some(f);
        }
        if let (Some(f), Some(m)) = (self.last.take(), self.merge.as_ref())
            && m.is_empty()
        {
            // the merge starts after the first key
            let mut m: Vec<_> = self
                .queue
                .groups
                .iter()
                .filter(|g| !g.active.is_empty())
                .map(|g| g.active.iter().peekable())
                .collect();
            for it in &mut m {
                if it.peek() == Some(&&f) {
                    it.next();
                }
            }
            self.merge = Some(m);
        }
        let m = self.merge.as_mut()?;
        let mut best: Option<(usize, HeapKey)> = None;
        for (i, it) in m.iter_mut().enumerate() {
            if let Some(&&k) = it.peek()
                && best.is_none_or(|(_, b)| k < b)
            {
                best = Some((i, k));
            }
        }
        let (i, k) = best?;
        m[i].next();
        Some(k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(p: i64, w: u32) -> HeapKey {
        (p, Timestamp::EPOCH, w, wl(w))
    }

    fn wl(w: u32) -> WlId {
        WlId::new(w as usize)
    }

    fn slot(g: u32) -> Slot {
        Slot::new(g as usize)
    }

    fn wls(ws: &[u32]) -> Vec<WlId> {
        ws.iter().map(|&w| wl(w)).collect()
    }

    /// The queue against a plain heap and set: same first keys, same order, same counts.
    #[test]
    fn behaves_as_one_heap_and_one_set() {
        let mut q = Queue::with_groups(CqId::new(0), 3);
        for w in 0..9u32 {
            q.insert(k(i64::from(w % 3), w), slot(w % 3));
        }
        assert_eq!(q.first(), Some(k(0, 0)));
        let order: Vec<WlId> = q.iter().map(|x| x.3).collect();
        assert_eq!(order, wls(&[0, 3, 6, 1, 4, 7, 2, 5, 8]));
        assert_eq!(q.pop_first(), Some(k(0, 0)));
        q.park(k(0, 0), slot(0));
        // the rest of shape 0 follows its failed head
        assert!(q.park_group(slot(0)).is_empty());
        assert_eq!((q.fingerprint().0, q.parked_len()), (6, 3));
        assert_eq!(q.first(), Some(k(1, 1)));
        assert!(q.is_parked(&k(0, 3), slot(0)) && !q.contains(&k(0, 3), slot(0)));
        q.insert_evicted(k(0, 9), slot(0));
        assert_eq!(q.first(), Some(k(0, 9)));
        assert_eq!(q.park_group(slot(0)), wls(&[9]));
        q.unpark_all();
        assert_eq!((q.fingerprint().0, q.parked_len()), (10, 0));
        let mut fresh = Queue::with_groups(CqId::new(0), 3);
        for w in [8, 0, 3, 6, 9, 1, 4, 7, 2, 5] {
            fresh.insert(k(i64::from(w % 3), w), slot(w % 3));
        }
        assert_eq!(q.fingerprint(), fresh.fingerprint());
        let order: Vec<WlId> = q.iter().map(|x| x.3).collect();
        assert_eq!(order, wls(&[0, 3, 6, 9, 1, 4, 7, 2, 5, 8]));
        assert!(q.remove(&k(0, 0), slot(0)) && !q.remove(&k(0, 0), slot(0)));
        assert_eq!(q.first(), Some(k(0, 3)));
    }
}
