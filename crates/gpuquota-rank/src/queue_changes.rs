//! Queue changes at an instant, taking effect at the next session, as in KAI: the scheduler
//! reads its Queues from the cluster snapshot each session opens with
//! (NVIDIA/KAI-Scheduler: pkg/scheduler/cache/cache.go `Snapshot`,
//! pkg/scheduler/framework/session.go `OpenSession`), so a Queue edited between two
//! sessions changes nothing until the next one, and then changes the fair-share division
//! of that session.
//!
//! A driver stages every Queue change of the platform's timeline with
//! [`QueueChanges::stage`] (the object before and after; `None` for created or deleted),
//! and calls [`LiveCluster::apply_queue_changes`] right before the next session. Quota,
//! limit and over-quota weight (per resource) and priority are set in place on the live
//! cluster's queue tree; running jobs are not touched (a queue over its new limit is
//! reclaimed from or preempted only by the session's own rules). A change of the tree's
//! shape (a queue created or deleted, a new parent) or of a min-runtime (inherited down the
//! tree) is returned in [`AppliedQueues::rebuild`]: the driver builds the input from the
//! model for that session and hands its tree to [`LiveCluster::replace_queues`].
//!
//! # Complexity
//! Staging: O(log staged). Applying: O(staged × (queues + resources)) plus reading the
//! staged Queue objects with the engine's reader.

use std::collections::BTreeMap;

use gpuquota_model::Model;
use gpuquota_model::diag::{Diagnostic, Diagnostics};
use gpuquota_model::kai::Queue;

use super::LiveCluster;
use crate::Resource;
use crate::snapshot::{BuildOptions, Cluster};

/// Queue changes waiting for the next session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueueChanges {
    /// By queue name: (object before, object after) — the first staged `before` and the
    /// last staged `after`.
    staged: BTreeMap<String, (Option<Queue>, Option<Queue>)>,
}

impl QueueChanges {
    /// Stages a change: `before` and `after` the change (`None` when created or deleted).
    /// Several changes of one queue before a session add up to one (first before, last
    /// after).
    ///
    /// # Complexity
    /// O(log staged + object size).
    pub fn stage(&mut self, before: Option<&Queue>, after: Option<&Queue>) {
        let Some(name) = after.or(before).map(|q| q.metadata.name.clone()) else {
            return;
        };
        let e = self
            .staged
            .entry(name)
            .or_insert_with(|| (before.cloned(), None));
        e.1 = after.cloned();
    }

    /// True when nothing is staged.
    pub fn is_empty(&self) -> bool {
        self.staged.is_empty()
    }

    /// The queues staged, by name.
    pub fn names(&self) -> Vec<&str> {
        self.staged.keys().map(String::as_str).collect()
    }
}

/// What [`LiveCluster::apply_queue_changes`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AppliedQueues {
    /// Queues whose quota, limit, weight or priority were set in place.
    pub updated: Vec<String>,
    /// Queues whose change needs the cluster rebuilt from the model (created, deleted, new
    /// parent, new min-runtime).
    pub rebuild: Vec<String>,
}

fn shape_changed(before: &Queue, after: &Queue) -> bool {
    let parent = |q: &Queue| q.spec.parent_queue.clone().filter(|p| !p.is_empty());
    parent(before) != parent(after)
        || before.spec.preempt_min_runtime != after.spec.preempt_min_runtime
        || before.spec.reclaim_min_runtime != after.spec.reclaim_min_runtime
}

impl LiveCluster {
    /// Applies the staged Queue changes, right before a session (see the module docs), and
    /// clears them. `options` are the ones the cluster was built with (they decide how a
    /// Queue's values are read, e.g. Run:ai's weight-follows-quota).
    ///
    /// # Errors
    /// The engine reader's diagnostics for a staged Queue it refuses, or a negative value;
    /// nothing is changed then.
    ///
    /// # Complexity
    /// See the module docs.
    pub fn apply_queue_changes(
        &mut self,
        changes: &mut QueueChanges,
        options: &BuildOptions,
    ) -> Result<AppliedQueues, Diagnostics> {
        let staged = std::mem::take(&mut changes.staged);
        let mut out = AppliedQueues::default();
        let mut model = Model::default();
        for (name, (before, after)) in &staged {
            match (before, after) {
                (Some(b), Some(a)) if !shape_changed(b, a) => {
                    let mut q = a.clone();
                    q.spec.parent_queue = None;
                    model.queues.insert(name.clone(), q);
                }
                (None, None) => {}
                _ => out.rebuild.push(name.clone()),
            }
        }
        if model.queues.is_empty() {
            return Ok(out);
        }
        let read = Cluster::from_model_unvalidated(&model, options)?;
        let h = &mut self.cluster.hierarchy;
        let mut plan = Vec::new();
        for name in model.queues.keys() {
            match (h.find(name), read.hierarchy.find(name)) {
                (Some(cur), Some(new)) => plan.push((name, cur, read.hierarchy.queue(new))),
                _ => out.rebuild.push(name.clone()),
            }
        }
        let mut copy = h.clone();
        for (name, cur, new) in plan {
            for r in Resource::ALL {
                let p = &new.resources[r.index()];
                let res = copy
                    .set_quota_limit(cur, r, p.deserved, p.limit)
                    .and_then(|()| copy.set_weight(cur, r, p.weight));
                if let Err(e) = res {
                    return Err(Diagnostics(vec![
                        Diagnostic::error(crate::snapshot::codes::INVALID_VALUE, e.to_string())
                            .object("Queue", name.clone())
                            .engine("kai"),
                    ]));
                }
            }
            if copy.queue(cur).priority != new.priority {
                copy.set_priority(cur, new.priority);
            }
            out.updated.push(name.clone());
        }
        *h = copy;
        out.rebuild.sort();
        Ok(out)
    }
}

impl LiveCluster {
    /// Takes the queue tree of `fresh` (a checked input built from the platform as it is
    /// now: Queues created, deleted or moved), keeping everything else: the jobs, their
    /// pods' states and placements, the nodes (cordons included) and the divided total.
    /// Each job's queue is looked up again by its key in `fresh` (`None`: its Queue is gone,
    /// so no session sees it, as KAI's snapshot ignores a PodGroup whose Queue does not
    /// exist; its running pods keep their nodes). The next session builds its open state
    /// afresh. Returns the names of the queues of the new tree, in its order.
    ///
    /// # Complexity
    /// O(J log J + Q) for J jobs and Q queues.
    pub fn replace_queues(&mut self, fresh: crate::Input) -> Vec<String> {
        let fresh = fresh.into_cluster();
        let queue_of: BTreeMap<&str, Option<crate::ids::QueueId>> = fresh
            .jobs
            .iter()
            .map(|j| (j.key.as_str(), j.queue))
            .collect();
        for j in self.cluster.jobs.iter_mut().chain(self.parked.values_mut()) {
            j.queue = queue_of.get(j.key.as_str()).copied().flatten();
        }
        let names = fresh
            .hierarchy
            .queues()
            .iter()
            .map(|q| q.name.clone())
            .collect();
        self.cluster.hierarchy = fresh.hierarchy;
        self.cluster.queues = fresh.queues;
        self.cluster.orphan_queues = fresh.orphan_queues;
        self.kept = None;
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SessionOptions;

    const CLUSTER: &str = r#"
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {nvidia.com/gpu: "8", cpu: "64", memory: 512Gi}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: a}
spec: {resources: {gpu: {quota: 2, overQuotaWeight: 1, limit: 2}}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: b}
spec: {resources: {gpu: {quota: 1, overQuotaWeight: 3, limit: -1}}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns, labels: {kai.scheduler/queue: a}}
spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: "4"}}}]}
status: {phase: Pending}
"#;

    fn setup() -> (Model, LiveCluster) {
        let model = gpuquota_model::import_str("c.yaml", CLUSTER)
            .expect("valid yaml")
            .model;
        let cluster = Cluster::from_model(&model, &BuildOptions::default()).expect("cluster");
        (model, LiveCluster::from_cluster(cluster))
    }

    fn placed(live: &mut LiveCluster) -> usize {
        live.session(&SessionOptions::default())
            .expect("session")
            .allocated
            .len()
    }

    #[test]
    fn a_limit_raised_between_sessions_takes_effect_at_the_next_session() {
        let (model, mut live) = setup();
        assert!(live.submit("ns/p"));
        // 4 GPUs wanted, limit 2: nothing placed.
        assert_eq!(placed(&mut live), 0);
        let before = &model.queues["a"];
        let mut after = before.clone();
        let gpu = after
            .spec
            .resources
            .as_mut()
            .and_then(|r| r.gpu.as_mut())
            .expect("gpu");
        gpu.limit = Some("-1".parse().expect("quantity"));
        gpu.quota = Some("4".parse().expect("quantity"));
        gpu.over_quota_weight = Some("3".parse().expect("quantity"));
        after.spec.priority = Some(200);
        let mut changes = QueueChanges::default();
        changes.stage(Some(before), Some(&after));
        // Staged only: the next session still sees limit 2.
        assert_eq!(placed(&mut live), 0);
        let applied = live
            .apply_queue_changes(&mut changes, &BuildOptions::default())
            .expect("applied");
        assert_eq!(applied.updated, ["a"]);
        assert!(applied.rebuild.is_empty() && changes.is_empty());
        let h = &live.cluster().hierarchy;
        let a = h.queue(h.find("a").expect("a"));
        let g = &a.resources[Resource::Gpu.index()];
        // Nano-units: quota 4, weight 3, unlimited limit; priority 200.
        assert_eq!(
            (g.deserved, g.limit, g.weight, a.priority),
            (Some(4_000_000_000), None, 3_000_000_000, 200)
        );
        // The session after the change places the 4-GPU pod.
        assert_eq!(placed(&mut live), 1);
    }

    #[test]
    fn new_deleted_or_moved_queues_ask_for_a_rebuild() {
        let (model, mut live) = setup();
        let mut c = model.queues["b"].clone();
        c.metadata.name = "c".into();
        let mut moved = model.queues["b"].clone();
        moved.spec.parent_queue = Some("a".into());
        let mut changes = QueueChanges::default();
        changes.stage(None, Some(&c));
        changes.stage(Some(&model.queues["a"]), None);
        changes.stage(Some(&model.queues["b"]), Some(&moved));
        assert_eq!(changes.names(), ["a", "b", "c"]);
        let applied = live
            .apply_queue_changes(&mut changes, &BuildOptions::default())
            .expect("applied");
        assert_eq!(applied.rebuild, ["a", "b", "c"]);
        assert!(applied.updated.is_empty());
    }

    /// Queue `a` (p's) deleted and `c` created under a new tree: after `replace_queues`
    /// the tree is `b`, `c`, p is still submitted but names no queue (no session sees it),
    /// and the node and total are kept.
    #[test]
    fn replaced_queues_keep_the_jobs_and_look_their_queues_up_again() {
        let (mut model, mut live) = setup();
        assert!(live.submit("ns/p"));
        let totals = live.cluster().totals;
        let mut c = model.queues["b"].clone();
        c.metadata.name = "c".to_owned();
        model.queues.remove("a");
        model.queues.insert("c".to_owned(), c);
        let fresh = crate::Input::from_model(&model, &crate::Options::default()).expect("input");
        assert_eq!(live.replace_queues(fresh), ["b", "c"]);
        assert!(live.is_submitted("ns/p"));
        assert_eq!(live.job("ns/p").expect("p").queue, None);
        assert_eq!(live.cluster().totals, totals);
        let r = live.session(&SessionOptions::default()).expect("session");
        assert!(r.allocated.is_empty());
    }
}
