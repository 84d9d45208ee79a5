//! The node feasibility index: which nodes a pod could go to, kept up to date by the nodes
//! that changed since the pod's last search, so that a backlog of pending pods retried
//! every session scores only what changed instead of every node.
//!
//! Every change to a node's state (a placement, an undo, a release, an eviction, a
//! departure, the settling of what was being released) stamps the node with a counter that
//! only grows. A pod's record holds the counter at its last node search and the nodes that
//! passed the feasibility test then (they admit the pod and will have room for it, MIG
//! instances included). A node that failed the test and has not been stamped since still
//! fails it: the next search scores only the nodes that passed, plus those stamped since,
//! in node order, as the full scan does. The chosen node is the full scan's: every node
//! left out would have been skipped by it.
//!
//! The stamps and records live as long as the open state ([`Kept`]).

use super::*;

/// Node change stamps and per-pod search records.
#[derive(Debug, Clone, Default)]
pub(super) struct FitIndex {
    /// The last stamp given.
    clock: u64,
    /// Per node, the stamp of its last change (grown on demand; a missing node is 0).
    last: Vec<u64>,
    /// Per pod: its last search (`None`: never searched, or not kept).
    pods: Option<Jagged<Option<FitRec>>>,
}

/// A pod's last node search.
#[derive(Debug, Clone)]
pub(super) struct FitRec {
    /// The stamp at the search.
    at: u64,
    /// The nodes that passed the feasibility test, in node order.
    ok: Vec<NodeId>,
}

/// The most passing nodes a record keeps (a pod that fits on more nodes than this is
/// searched in full next time: it is about to be placed, or many nodes have room).
const MAX_OK: usize = 64;

impl FitIndex {
    /// An empty index for the pods of `c` (no pod searched yet).
    ///
    /// # Complexity
    /// O(J + T).
    pub(super) fn new(c: &Cluster) -> FitIndex {
        FitIndex {
            pods: Some(Jagged::new(c, None)),
            ..FitIndex::default()
        }
    }

    /// Records a change of node `n` (of `nodes`).
    ///
    /// # Complexity
    /// O(1) amortized.
    pub(super) fn changed(&mut self, n: NodeId, nodes: usize) {
        if self.last.len() < nodes {
            self.last.resize(nodes, 0);
        }
        self.clock += 1;
        self.last[n.index()] = self.clock;
    }

    /// Adds a row for a job of `pods` pods before row `at`.
    pub(super) fn insert_job(&mut self, at: JobId, pods: usize) {
        if let Some(p) = self.pods.as_mut() {
            p.insert_row(at, pods, None);
        }
    }

    /// Removes row `ji`.
    pub(super) fn remove_job(&mut self, ji: JobId) {
        if let Some(p) = self.pods.as_mut() {
            p.remove_row(ji);
        }
    }

    /// The nodes pod `pod`'s search must score, in node order: those that passed at its
    /// last search and those changed since; `None` for every node (no record).
    ///
    /// # Complexity
    /// O(N) stamp comparisons for N nodes (no node is scored).
    pub(super) fn candidates(&self, pod: (JobId, TaskId), nodes: usize) -> Option<Vec<NodeId>> {
        let rec = self.pods.as_ref()?[pod].as_ref()?;
        let mut out = Vec::new();
        let mut ok = rec.ok.iter().peekable();
        for i in 0..nodes {
            let n = NodeId::new(i);
            let passed = ok.next_if(|&&m| m == n).is_some();
            if passed || self.last.get(i).is_some_and(|&s| s > rec.at) {
                out.push(n);
            }
        }
        Some(out)
    }

    /// Records pod `pod`'s search: `ok` are the nodes that passed, in node order.
    pub(super) fn record(&mut self, pod: (JobId, TaskId), ok: Vec<NodeId>) {
        let at = self.clock;
        if let Some(p) = self.pods.as_mut() {
            p[pod] = (ok.len() <= MAX_OK).then_some(FitRec { at, ok });
        }
    }
}
