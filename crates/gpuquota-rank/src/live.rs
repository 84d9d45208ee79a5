//! A persistent cluster for simulators: jobs arrive, run, are evicted and finish while one
//! [`Cluster`] is kept in step with the session's decisions, instead of rebuilding it from a
//! model before every session.
//!
//! [`LiveCluster::new`] takes the cluster of a checked input ([`crate::Input::from_model`])
//! and parks every job
//! (none is submitted yet, every pod pending without a node). [`LiveCluster::submit`] puts a
//! job into the cluster, [`LiveCluster::finish`] takes it out, and [`LiveCluster::session`]
//! refreshes the leaves' demand, runs a session (as [`crate::run`] does) and applies its decisions: the evicted
//! jobs' pods go back to pending (their controller recreates them), the allocated pods run
//! on their nodes at once (a pipelined pod too: the evictions that free its resources are
//! applied first). A session on a live cluster decides exactly what [`crate::run`] decides
//! on the input of the same state; this module only keeps the state.
//!
//! It also keeps what a session opens with — each pod's state and placement record, the
//! nodes' free CPU, memory, GPU devices and MIG instances, the queues' allocations — from
//! one session to the next: the applied decisions, arrivals and departures update it, so
//! a session does not rebuild it from every running pod. The kept state equals the rebuilt
//! one in every amount; only which of a node's interchangeable whole GPUs a pod holds may
//! differ, and no decision reads that. A cluster with a fractional-GPU pod (fractions pack
//! onto a particular device) or an overcommitted node rebuilds it every session, as does
//! the session after a job's preemptibility changed.
//!
//! ```
//! use gpuquota_rank::{Input, Options, Resource, SessionOptions};
//! use gpuquota_rank::live::LiveCluster;
//!
//! let yaml = r#"
//! apiVersion: v1
//! kind: Node
//! metadata: {name: n1}
//! status: {allocatable: {nvidia.com/gpu: "8", cpu: "64", memory: 512Gi}}
//! ---
//! apiVersion: scheduling.run.ai/v2
//! kind: Queue
//! metadata: {name: a}
//! spec: {resources: {gpu: {quota: 8, overQuotaWeight: 1, limit: -1}}}
//! ---
//! apiVersion: v1
//! kind: Pod
//! metadata: {name: p, namespace: ns, labels: {kai.scheduler/queue: a}}
//! spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: "4"}}}]}
//! status: {phase: Pending}
//! "#;
//! let model = gpuquota_model::import_str("c.yaml", yaml)?.model;
//! let input = Input::from_model(&model, &Options::default())?;
//! let mut live = LiveCluster::new(input);
//! assert!(live.submit("ns/p"));
//! let result = live.session(&SessionOptions::default())?;
//! assert_eq!(result.allocated[0].pods[0].1.as_deref(), Some("n1"));
//! // The queue now holds 4 GPUs (nano-units).
//! let a = live.cluster().hierarchy.find("a").ok_or("no queue a")?;
//! assert_eq!(live.queue_allocated()[a][Resource::Gpu], 4_000_000_000);
//! assert!(live.finish("ns/p"));
//! assert_eq!(live.queue_allocated()[a][Resource::Gpu], 0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;

// Queue changes staged until the next session, in their own file.
#[path = "queue_changes.rs"]
pub mod queue_changes;

// Nodes cordoned, failed and back between sessions, in their own file.
#[path = "live_nodes.rs"]
mod nodes;

use gpuquota_model::Timestamp;

use crate::division::DivisionError;
use crate::ids::{JobId, NodeId, PerQueue, PerResource, QueueId, TaskId};
use crate::session::{Kept, SessionError, SessionOptions, SessionResult, run_kept};
use crate::snapshot::{Cluster, Job, TaskStatus};

/// A [`Cluster`] kept across sessions.
#[derive(Debug, Clone)]
pub struct LiveCluster {
    cluster: Cluster,
    /// Jobs not in the cluster (not submitted yet, or finished), by key.
    parked: BTreeMap<String, Job>,
    /// Node name → index.
    node_index: BTreeMap<String, usize>,
    /// Jobs whose pending pods the next sessions do not see.
    held: std::collections::BTreeSet<String>,
    /// The state the next session opens with (pods' states and placements, node and queue
    /// accounting), kept in step with the jobs; `None` until a session builds it, and
    /// whenever it cannot be kept (then every session builds it).
    kept: Option<Kept>,
    /// Keep the open state across sessions (always on; off only in the test that checks
    /// keeping it changes no decision).
    keep: bool,
}

fn reset(job: &mut Job) {
    for t in &mut job.tasks {
        t.status = TaskStatus::Pending;
        t.node = None;
    }
}

impl LiveCluster {
    /// The cluster of a checked input ([`crate::Input::from_model`]) kept across sessions:
    /// every job parked with its pods pending and without nodes.
    ///
    /// # Complexity
    /// O(J log J + N log N).
    pub fn new(input: crate::Input) -> LiveCluster {
        LiveCluster::from_cluster(input.into_cluster())
    }

    /// [`LiveCluster::new`] over a cluster built in this crate.
    pub(crate) fn from_cluster(mut cluster: Cluster) -> LiveCluster {
        let mut parked = BTreeMap::new();
        for mut j in std::mem::take(&mut cluster.jobs) {
            reset(&mut j);
            j.last_start = None;
            j.stale_since = None;
            parked.insert(j.key.clone(), j);
        }
        let node_index = cluster
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.clone(), i))
            .collect();
        LiveCluster {
            cluster,
            parked,
            node_index,
            held: Default::default(),
            kept: None,
            keep: true,
        }
    }

    /// The current state (only submitted, unfinished jobs are in [`Cluster::jobs`], in key
    /// order, as [`crate::Input::from_model`] orders them).
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// A job in the cluster or parked.
    pub fn job(&self, key: &str) -> Option<&Job> {
        self.position(key)
            .map(|i| &self.cluster.jobs[i])
            .or_else(|| self.parked.get(key))
    }

    /// True when the job is in the cluster.
    pub fn is_submitted(&self, key: &str) -> bool {
        self.position(key).is_some()
    }

    fn position(&self, key: &str) -> Option<usize> {
        self.cluster
            .jobs
            .binary_search_by(|j| j.key.as_str().cmp(key))
            .ok()
    }

    /// Puts a parked job into the cluster, every pod pending. False when `key` is not parked.
    ///
    /// # Complexity
    /// O(log J) to find it plus O(J) to insert it in key order.
    pub fn submit(&mut self, key: &str) -> bool {
        let Some(mut job) = self.parked.remove(key) else {
            return false;
        };
        reset(&mut job);
        job.last_start = None;
        let at = self
            .cluster
            .jobs
            .binary_search_by(|j| j.key.as_str().cmp(key))
            .unwrap_or_else(|i| i);
        // A fractional pod packs onto a particular device, which a kept state does not
        // track ([`Kept`]): like a session opening on a cluster with one, open the next
        // session afresh (and every one while the job is in the cluster).
        if job.tasks.iter().any(|t| t.fractional) {
            self.kept = None;
        }
        if let Some(k) = self.kept.as_mut() {
            k.insert_job(JobId::new(at), job.tasks.len());
        }
        self.cluster.jobs.insert(at, job);
        true
    }

    /// Takes a job out of the cluster (finished or deleted): its resources are free at once.
    /// False when it is not in the cluster.
    ///
    /// # Complexity
    /// O(J + T) for J jobs of T pods in the cluster.
    pub fn finish(&mut self, key: &str) -> bool {
        let Some(i) = self.position(key) else {
            return false;
        };
        if let Some(k) = self.kept.as_mut()
            && k.remove_job(&self.cluster, JobId::new(i)).is_err()
        {
            self.kept = None;
        }
        let mut job = self.cluster.jobs.remove(i);
        reset(&mut job);
        self.parked.insert(job.key.clone(), job);
        true
    }

    /// True when a submitted job has a pending pod (held jobs' pods included).
    ///
    /// # Complexity
    /// O(T) for T pods of submitted jobs.
    pub fn has_pending_pods(&self) -> bool {
        self.cluster
            .jobs
            .iter()
            .any(|j| j.tasks.iter().any(|t| t.status == TaskStatus::Pending))
    }

    /// Holds (or releases) a job: a held job's pending pods are invisible to the sessions
    /// (neither demand nor candidates), its running pods stay. The hook for admission
    /// policies outside KAI (a budget that closes a queue).
    pub fn set_held(&mut self, key: &str, held: bool) {
        if held {
            self.held.insert(key.to_owned());
        } else {
            self.held.remove(key);
        }
    }

    /// Sets a job's priority and preemptibility (in the cluster or parked): the hook for
    /// admission policies outside KAI that demote a job, as a spent GPU-hour budget does.
    /// False when `key` is unknown.
    ///
    /// # Complexity
    /// O(log J).
    pub fn set_priority(&mut self, key: &str, priority: i32, preemptible: bool) -> bool {
        let job = match self.position(key) {
            Some(i) => {
                // Non-preemptible work is accounted apart: open the next session afresh.
                if self.cluster.jobs[i].preemptible != preemptible {
                    self.kept = None;
                }
                &mut self.cluster.jobs[i]
            }
            None => match self.parked.get_mut(key) {
                Some(j) => j,
                None => return false,
            },
        };
        job.priority = priority;
        job.preemptible = preemptible;
        true
    }

    /// Sets the session time (min-runtime, preemption delay and staleness are measured
    /// from it).
    pub fn set_now(&mut self, now: Timestamp) {
        self.cluster.now = now;
    }

    /// Sets a queue's normalized historical usage (nano-units, `[0, 10⁹]`), as the usage
    /// database feeds the proportion plugin.
    ///
    /// # Errors
    /// [`DivisionError::Negative`] for a negative value.
    pub fn set_usage(
        &mut self,
        queue: QueueId,
        usage: PerResource<i128>,
    ) -> Result<(), DivisionError> {
        self.cluster.hierarchy.set_usage(queue, usage)
    }

    /// Allocated resources per queue (input order; a parent holds its subtree), nano-units.
    /// A sum beyond `i128` (requests no session accepts) saturates here; the session that
    /// would run on it reports [`SessionError::Overflow`].
    ///
    /// # Complexity
    /// O(Q) once a session has run (the kept accounting), else O(T + Q · d) for T pods
    /// of submitted jobs.
    pub fn queue_allocated(&self) -> PerQueue<PerResource<i128>> {
        match &self.kept {
            Some(k) => k.queue_allocated(),
            None => self
                .sum_tasks(|s| s == TaskStatus::Running, true, true)
                .unwrap_or_default(),
        }
    }

    /// Turns keeping the open state across sessions off (the test that checks it changes
    /// no decision).
    #[cfg(test)]
    pub(crate) fn set_keep(&mut self, keep: bool) {
        self.keep = keep;
        self.kept = None;
    }

    /// The requests of the pods `pick` selects, per leaf (and summed up the tree with `up`);
    /// `None` when a sum leaves `i128`, unless `saturate`.
    fn sum_tasks(
        &self,
        pick: impl Fn(TaskStatus) -> bool,
        up: bool,
        saturate: bool,
    ) -> Option<PerQueue<PerResource<i128>>> {
        let add = |a: PerResource<i128>, b: &PerResource<i128>| {
            if saturate {
                Some(a.saturating_add(b))
            } else {
                a.checked_add(b)
            }
        };
        let h = &self.cluster.hierarchy;
        let mut out = PerQueue::from_vec(vec![PerResource::ZERO; h.queues().len()]);
        for j in &self.cluster.jobs {
            let Some(q) = j.queue else {
                continue;
            };
            for t in j.tasks.iter().filter(|t| pick(t.status)) {
                out[q] = add(out[q], &t.req)?;
            }
        }
        if up {
            let mut by_depth: Vec<(usize, QueueId)> =
                h.ids().map(|q| (h.path(q).len(), q)).collect();
            by_depth.sort_by(|a, b| b.cmp(a));
            for (_, q) in by_depth {
                if let Some(p) = h.queue(q).parent {
                    let child = out[q];
                    out[p] = add(out[p], &child)?;
                }
            }
        }
        Some(out)
    }

    /// Runs one session on the current state and applies its decisions: evicted jobs'
    /// pods become pending again, allocated pods run on their nodes (`job.last_start` is set
    /// to the session time when a job starts).
    ///
    /// # Errors
    /// As [`crate::run`]'s session errors; the state is left unchanged then.
    ///
    /// # Complexity
    /// O(T) to refresh the demand plus a session (as [`crate::run`]), which opens on the state kept from
    /// the previous session (updated by the arrivals and departures since) instead of
    /// building it: O(J) instead of O(J + T + N · G) for J jobs of T pods on N nodes of G
    /// GPUs, plus O(N · G) and the placed and evicted jobs' pods to keep it for the next
    /// one. The decisions are those of [`crate::run`] on the input of the
    /// same state.
    pub fn session(&mut self, options: &SessionOptions) -> Result<SessionResult, SessionError> {
        // Held jobs' pending pods are hidden for the session.
        let mut hidden: Vec<(JobId, TaskId)> = Vec::new();
        if !self.held.is_empty() {
            for (ji, j) in self.cluster.jobs.iter_mut().enumerate() {
                if self.held.contains(&j.key) {
                    for (ti, t) in j.tasks.iter_mut().enumerate() {
                        if t.status == TaskStatus::Pending {
                            t.status = TaskStatus::Other;
                            hidden.push((JobId::new(ji), TaskId::new(ti)));
                        }
                    }
                }
            }
        }
        let demand = self.sum_tasks(
            |s| matches!(s, TaskStatus::Running | TaskStatus::Pending),
            false,
            false,
        );
        let mut result = Ok(());
        if demand.is_none() {
            result = Err(SessionError::Overflow);
        }
        for (q, &d) in demand.iter().flat_map(PerQueue::iter_enumerated) {
            if self.cluster.hierarchy.is_leaf(q)
                && let Err(e) = self.cluster.hierarchy.set_request(q, d)
            {
                result = Err(SessionError::Division(e));
            }
        }
        let mut kept = if self.keep { self.kept.take() } else { None };
        if let Some(k) = kept.as_mut() {
            k.hide(&hidden, true);
        }
        let out = match result {
            Ok(()) => {
                let (out, next) = run_kept(&self.cluster, options, kept);
                kept = next;
                out
            }
            Err(e) => Err(e),
        };
        if let Some(k) = kept.as_mut() {
            k.hide(&hidden, false);
        }
        self.kept = kept;
        for (ji, ti) in hidden {
            self.cluster.jobs[ji.index()].tasks[ti.index()].status = TaskStatus::Pending;
        }
        let out = out?;
        for e in &out.evicted {
            if let Some(i) = self.position(&e.pod_group) {
                reset(&mut self.cluster.jobs[i]);
            }
        }
        let now = self.cluster.now;
        for a in &out.allocated {
            let Some(i) = self.position(&a.pod_group) else {
                continue;
            };
            let job = &mut self.cluster.jobs[i];
            let was_running = job.tasks.iter().any(|t| t.status == TaskStatus::Running);
            for (pod, node) in &a.pods {
                if let Some(t) = job.tasks.iter_mut().find(|t| &t.key == pod) {
                    t.status = TaskStatus::Running;
                    t.node = node
                        .as_deref()
                        .and_then(|n| self.node_index.get(n))
                        .map(|&n| NodeId::new(n));
                }
            }
            if !was_running {
                job.last_start = Some(now);
            }
        }
        Ok(out)
    }
}
