//! Queues created, deleted or moved in the tree by the timeline under KAI: the change takes
//! effect at the next session, whose snapshot reads the Queues as they are then
//! (NVIDIA/KAI-Scheduler: pkg/scheduler/cache/cluster_info/cluster_info.go `Snapshot`).
//!
//! - **created** (`apply` of a new Queue, under an existing or a new parent): it joins the
//!   tree at the next session; jobs naming it, pending until then with
//!   `QueueDoesNotExist`, are scheduled from then on.
//! - **deleted** (`delete` of a Queue): KAI's snapshot ignores a PodGroup whose Queue does
//!   not exist (`snapshotPodGroups`), so from the next session its pending jobs stay
//!   pending (`QueueDoesNotExist`) and its running jobs are neither evicted nor counted in
//!   any queue's allocation: their pods keep their nodes until they finish.
//! - **moved** (`parentQueue` changed): its jobs and their allocation count under the new
//!   parent from the next session.
//!
//! The live cluster takes the tree built from the platform as it is then through the
//! engine's entry point ([`gpuquota_rank::live::LiveCluster::replace_queues`]), so every
//! other Queue change staged before that session is part of it. Each queue keeps its series
//! by name: a new queue's starts with zeros for the sessions before it existed, a deleted
//! queue's goes on with zeros. A run with a usage database (`spec.kai.usage`, per-queue
//! usage history) does not simulate these changes (`not-simulated`).

use gpuquota_model::diag::{Diagnostic, Diagnostics};
use gpuquota_model::{Error, Model};
use gpuquota_rank::ids::{PerQueue, QueueId};
use gpuquota_rank::{BuildOptions, Input};

use super::Sim;
use crate::kai::report::QueueSeries;

/// Whether a Queue change needs the tree rebuilt: created, deleted, a new parent, or a
/// min-runtime (inherited down the tree).
pub(super) fn reshapes(
    before: Option<&gpuquota_model::kai::Queue>,
    after: Option<&gpuquota_model::kai::Queue>,
) -> bool {
    match (before, after) {
        (Some(b), Some(a)) => {
            let parent = |q: &gpuquota_model::kai::Queue| {
                q.spec.parent_queue.clone().filter(|p| !p.is_empty())
            };
            parent(b) != parent(a)
                || b.spec.preempt_min_runtime != a.spec.preempt_min_runtime
                || b.spec.reclaim_min_runtime != a.spec.reclaim_min_runtime
        }
        (None, None) => false,
        _ => true,
    }
}

impl Sim<'_> {
    /// The session at `t` (after `sessions` sessions) opens on the Queues of `model`: the
    /// live cluster takes its tree, and every per-queue state follows by name.
    ///
    /// # Errors
    /// `not-simulated` with a usage database; the engine's refusal of the platform.
    ///
    /// # Complexity
    /// A build of the engine input from the model, plus O(J log J + Q²) to follow it.
    pub(super) fn rebuild_queues(
        &mut self,
        model: &Model,
        t: i64,
        sessions: u64,
    ) -> Result<(), Error> {
        if self.db.is_some() {
            return Err(Error::invalid_input(Diagnostics(vec![
                Diagnostic::error(
                    crate::scenario::NOT_SIMULATED,
                    format!(
                        "at {t} ms: a Queue created, deleted or moved in the tree with a usage database (spec.kai.usage), which a KAI run does not simulate; quota, limit, weight and priority changes are"
                    ),
                )
                .field("spec.timeline"),
            ])));
        }
        crate::count::bump(|c| &mut c.cluster_builds);
        let options = gpuquota_rank::Options::default()
            .with_build(BuildOptions::default().with_now(Some(self.sc.start)));
        let input = Input::from_model(model, &options)?;
        let names = self.live.replace_queues(input);
        let h = &self.live.cluster().hierarchy;
        for (key, (_, id)) in self.job_queue.iter_mut() {
            *id = self.live.job(key).and_then(|j| j.queue);
        }
        let len = usize::try_from(sessions).unwrap_or(usize::MAX);
        let mut map = Vec::with_capacity(names.len());
        for (q, name) in names.iter().enumerate() {
            let parent = h.queues()[q].parent.map(|p| names[p.index()].clone());
            let at = match self.series.iter().position(|s| &s.name == name) {
                Some(i) => {
                    self.series[i].parent = parent;
                    i
                }
                None => {
                    self.series.push(QueueSeries {
                        name: name.clone(),
                        parent,
                        fair_share: vec![0.0; len],
                        allocated: vec![0.0; len],
                    });
                    self.series.len() - 1
                }
            };
            map.push(at);
        }
        self.series_of = Some(map);
        self.fair = vec![0.0; names.len()];
        self.paths = h
            .ids()
            .map(|q| h.path(q))
            .collect::<PerQueue<Vec<QueueId>>>();
        self.alloc = self.live.queue_allocated();
        self.last_fs = PerQueue::default();
        self.time_dependent |= self
            .live
            .cluster()
            .queues
            .iter()
            .any(|q| q.preempt_min_runtime.is_some() || q.reclaim_min_runtime.is_some());
        self.dirty = true;
        self.quiet = false;
        Ok(())
    }
}
