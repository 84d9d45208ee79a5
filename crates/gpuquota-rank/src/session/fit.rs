//! The node feasibility index: which nodes a pod could go to, kept up to date by the nodes
//! that changed since the pod was last placed or refused, so that a backlog of pending
//! pods retried every session costs what changed instead of a scan of every node.
//!
//! Every change to a node's state (a placement, an undo, a release, an eviction, a
//! departure, the settling of what was being released) appends the node to a change log.
//! A pod's entry records the log position of its last node search and the nodes that
//! passed the feasibility test then (they admit the pod and will have room for it, MIG
//! instances included). A node that failed the test and has not changed since still fails
//! it: the next search tests only the nodes that passed, plus those changed since, in node
//! order, and scores them as the full scan does. The chosen node is the full scan's: every
//! node left out would have been skipped by it.
//!
//! The log lives as long as the open state ([`Kept`]) and is cut when it grows past
//! [`LOG_CAP_PER_NODE`] entries per node; an entry older than the cut is searched in full.

use super::*;

/// How many log entries per node are kept before the log is cut (entries older than the
/// cut search every node again).
const LOG_CAP_PER_NODE: usize = 64;

/// The change log and per-pod search records.
#[derive(Debug, Clone, Default)]
pub(super) struct FitIndex {
    /// Log position of `log[0]`.
    base: u64,
    /// Nodes in the order they changed.
    log: Vec<NodeId>,
    /// Per pod: the log position of its last search and the nodes that passed the
    /// feasibility test then, in node order (`None`: never searched, or a record dropped).
    pods: Option<Jagged<Option<FitRec>>>,
    /// Scratch per node: the search stamp it was last collected in.
    seen: Vec<u64>,
    /// The search stamp.
    stamp: u64,
}

/// A pod's last node search.
#[derive(Debug, Clone)]
pub(super) struct FitRec {
    /// Log position at the search.
    at: u64,
    /// The nodes that passed the feasibility test, in node order.
    ok: Vec<NodeId>,
}

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

    /// The log position after the last change.
    fn end(&self) -> u64 {
        self.base + self.log.len() as u64
    }

    /// Records a change of node `n`.
    ///
    /// # Complexity
    /// Amortized O(1); a cut of the log is O(1) (the log is cleared).
    pub(super) fn changed(&mut self, n: NodeId, nodes: usize) {
        if self.log.len() >= LOG_CAP_PER_NODE * nodes.max(1) + 1024 {
            self.base = self.end();
            self.log.clear();
        }
        self.log.push(n);
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

    /// Drops pod `pod`'s record (it was placed: a record is only read again for a pod that
    /// looks for a node, and a fresh search costs at most one scan).
    pub(super) fn forget(&mut self, pod: (JobId, TaskId)) {
        if let Some(p) = self.pods.as_mut() {
            p[pod] = None;
        }
    }

    /// The nodes pod `pod`'s search must test, in node order: `None` for every node (no
    /// usable record, or more changes since it than nodes).
    ///
    /// # Complexity
    /// O(K log K) for the K nodes passed at the last search plus the log entries since.
    pub(super) fn candidates(&mut self, pod: (JobId, TaskId), nodes: usize) -> Option<Vec<NodeId>> {
        let rec = self.pods.as_ref()?[pod].as_ref()?;
        if rec.at < self.base {
            return None;
        }
        let from = usize::try_from(rec.at - self.base).ok()?;
        let changes = &self.log[from..];
        if changes.len() + rec.ok.len() >= nodes {
            return None;
        }
        if self.seen.len() != nodes {
            self.seen = vec![0; nodes];
            self.stamp = 0;
        }
        self.stamp += 1;
        let stamp = self.stamp;
        let mut out = Vec::with_capacity(changes.len() + rec.ok.len());
        for &n in rec.ok.iter().chain(changes) {
            let s = &mut self.seen[n.index()];
            if *s != stamp {
                *s = stamp;
                out.push(n);
            }
        }
        out.sort_unstable();
        Some(out)
    }

    /// Records pod `pod`'s search: `ok` are the nodes that passed, in node order.
    pub(super) fn record(&mut self, pod: (JobId, TaskId), ok: Vec<NodeId>) {
        let at = self.end();
        if let Some(p) = self.pods.as_mut() {
            p[pod] = Some(FitRec { at, ok });
        }
    }
}
