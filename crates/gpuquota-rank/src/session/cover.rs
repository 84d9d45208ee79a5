//! The loop of an action over its pending jobs, finished early once every job left in it
//! would only replay a failure memoized at the current [`Engine::epoch`].
//!
//! An action pops its jobs in hierarchical queue order ([`Engine::next_pick`]) and runs a
//! step for each ([`Engine::memoized`]). A step that replays a memoized outcome, or that
//! the action skips before the memo (reclaim and preempt skip a job whose gang is not
//! pending or whose preemption delay has not elapsed), changes no node, queue or pod: it
//! only records the job's own failure (or delay). Once every job left in the lists is such
//! a job, the rest of the loop commits nothing, so the order the jobs would be picked in
//! is read by nothing; they are processed leaf by leaf instead, without the tree walk of a
//! pick per job. A backlog of thousands of pending jobs of a few shapes then costs one step
//! per shape and epoch plus one replay per job, instead of one pick per job.
//!
//! Whether every job left replays is known from shape classes: the jobs with every pod
//! pending are grouped by [`Engine::same_shape`] (an equality of the fields a step reads,
//! hence transitive) when the action starts, and a class replays when the memo holds an
//! entry of the current epoch computed for a job of the same shape. Such a job's shape
//! does not change during the action: its pods change state only when its own step commits.
//! A job with a pod that is not pending is never replayed, so the loop is not finished
//! while one is left.

use super::*;

/// A job of an action's lists that the step skips before its memo.
const SKIPPED: u32 = u32::MAX;
/// A job of an action's lists whose step is never replayed (not every pod pending).
const OPEN: u32 = u32::MAX - 1;

/// The shape classes of the jobs in an action's lists.
struct Classes {
    /// Per job in the lists: its class, [`SKIPPED`] or [`OPEN`].
    of: PerJob<u32>,
    /// Per class: its memo key and a job of it.
    reps: Vec<(MemoKey, JobId)>,
    /// Per class: its jobs still in the lists.
    left: Vec<usize>,
    /// [`OPEN`] jobs still in the lists.
    open: usize,
}

impl Engine<'_> {
    /// Runs `one` (a job's step, with whatever the action checks before it) for every job
    /// of `lists` (per leaf, in job order, popped from the back) in hierarchical queue
    /// order; `skipped` tells the jobs `one` skips before its memo without changing
    /// anything but the job's own records (it reads only the job and the session's clock).
    ///
    /// # Complexity
    /// O(J) plus O(C log C) to classify C candidates, then per job a pick
    /// ([`Engine::next_pick`]) and its step until every job left replays; each real step
    /// that fails costs an O(K) check of the K classes; the jobs left then cost their
    /// replay only.
    pub(super) fn run_action(
        &mut self,
        step: Step,
        mut lists: PerQueue<Vec<JobId>>,
        skipped: impl Fn(&Self, JobId) -> bool,
        mut one: impl FnMut(&mut Self, QueueId, JobId),
    ) {
        let mut classes = self.shortcuts.then(|| self.classes(step, &lists, &skipped));
        let mut last = PickState::default();
        while let Some((leaf, ji)) = self.next_pick(&lists, &mut last) {
            lists[leaf].pop();
            let (epoch, inserts) = (self.epoch, self.memo_inserts);
            one(self, leaf, ji);
            let Some(cl) = classes.as_mut() else {
                continue;
            };
            let k = cl.of[ji];
            let was_open = k == OPEN;
            match k {
                SKIPPED => {}
                OPEN => cl.open -= 1,
                k => cl.left[k as usize] -= 1,
            }
            // Only a failure memoized now, or the last job that never replays leaving, can
            // complete the cover.
            if self.epoch == epoch
                && (self.memo_inserts != inserts || was_open)
                && self.every_job_left_replays(cl)
            {
                for (leaf, list) in lists.iter_enumerated_mut() {
                    for ji in std::mem::take(list).into_iter().rev() {
                        one(self, leaf, ji);
                    }
                }
                debug_assert_eq!(self.epoch, epoch, "a replay committed");
                return;
            }
        }
    }

    /// The shape classes of the jobs in `lists` for `step`.
    ///
    /// # Complexity
    /// O(J + C · (P + log K)) for C jobs in the lists of P pods, K classes per memo key.
    fn classes(
        &self,
        step: Step,
        lists: &PerQueue<Vec<JobId>>,
        skipped: &impl Fn(&Self, JobId) -> bool,
    ) -> Classes {
        let mut cl = Classes {
            of: PerJob::filled(OPEN, self.c.jobs.len()),
            reps: Vec::new(),
            left: Vec::new(),
            open: 0,
        };
        let mut by_key: std::collections::BTreeMap<MemoKey, Vec<u32>> =
            std::collections::BTreeMap::new();
        for list in lists.iter() {
            for &ji in list {
                let Some(key) = self.memo_key(step, ji) else {
                    cl.open += 1;
                    continue;
                };
                if skipped(self, ji) {
                    cl.of[ji] = SKIPPED;
                    continue;
                }
                let ks = by_key.entry(key).or_default();
                let k = match ks
                    .iter()
                    .find(|&&k| self.same_shape(cl.reps[k as usize].1, ji))
                {
                    Some(&k) => k,
                    None => {
                        let k = u32::try_from(cl.reps.len()).unwrap_or(OPEN);
                        if k >= OPEN {
                            cl.open += 1;
                            continue;
                        }
                        cl.reps.push((key, ji));
                        cl.left.push(0);
                        ks.push(k);
                        k
                    }
                };
                cl.of[ji] = k;
                cl.left[k as usize] += 1;
            }
        }
        cl
    }

    /// True when every job left in the lists would replay a failure memoized at the
    /// current epoch, or is skipped.
    ///
    /// # Complexity
    /// O(K · (log M + P)) for K classes, M memo entries, P pods per job.
    fn every_job_left_replays(&self, cl: &Classes) -> bool {
        cl.open == 0
            && cl.reps.iter().zip(&cl.left).all(|((key, rep), &left)| {
                left == 0
                    || self
                        .memo
                        .get(key)
                        .is_some_and(|m| m.epoch == self.epoch && self.same_shape(m.job, *rep))
            })
    }
}
