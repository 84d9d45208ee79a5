//! The preempt action (`kai-scheduler/KAI-Scheduler: pkg/scheduler/actions/preempt`).

use super::*;

/// One pending gang's step of a victim-taking action: the engine, the gang's leaf, job and
/// tasks, and the running jobs per leaf as of the action's start.
type VictimsStep<E> = fn(&mut E, QueueId, JobId, Vec<TaskId>, &PerQueue<Vec<JobId>>);

impl Engine<'_> {
    pub(super) fn preempt(&mut self) {
        self.victims_action(Step::Preempt, Self::preempt_job);
    }

    /// One of the two actions that take victims for a pending gang (`reclaim`, `preempt`):
    /// `job` runs for every candidate gang still pending whose preemption delay has
    /// elapsed (a gang still inside it is marked delayed), memoized per step, with the
    /// running jobs per leaf as of the action's start.
    ///
    /// # Complexity
    /// The action loop's ([`Engine::run_action`]) plus `job`'s per candidate.
    pub(super) fn victims_action(&mut self, step: Step, job: VictimsStep<Self>) {
        // Built when the first job's step runs: no step commits anything before, so it is
        // the list as of the action's start (and a session without candidates skips it).
        let mut running: Option<PerQueue<Vec<JobId>>> = None;
        let lists = self.leaf_lists(|_, _| true);
        self.run_action(
            step,
            lists,
            |e, ji| e.still_pending_gang(ji).is_none() || !e.delay_elapsed(ji),
            |e, leaf, ji| {
                let Some(tasks) = e.still_pending_gang(ji) else {
                    return;
                };
                if !e.delay_elapsed(ji) {
                    e.delayed[ji] = true;
                    return;
                }
                e.memoized(step, ji, |e| {
                    let running = running.get_or_insert_with(|| e.running_by_leaf());
                    job(e, leaf, ji, tasks, running)
                });
            },
        );
    }

    /// Preemption for one pending job of leaf `leaf` (its gang `tasks`), once its preemption delay has elapsed.
    fn preempt_job(
        &mut self,
        leaf: QueueId,
        ji: JobId,
        tasks: Vec<TaskId>,
        running: &PerQueue<Vec<JobId>>,
    ) {
        let prio = self.job(ji).priority;
        let np = !self.job(ji).preemptible;
        let req = self.job_req(ji, &tasks);
        // Same leaf, strictly lower priority (the list is sorted by priority first).
        let cands: Vec<JobId> = running[leaf]
            .iter()
            .copied()
            .take_while(|&vj| self.job(vj).priority < prio)
            .filter(|&vj| {
                vj != ji
                    && !self.evicted_job[vj]
                    && self.tstate[vj].contains(&TState::Running)
                    && self.runtime_ok(vj, self.c.queues[leaf.index()].preempt_min_runtime)
            })
            .collect();
        if cands.is_empty() {
            return;
        }
        let victims: Vec<(JobId, Vec<TaskId>)> = cands
            .iter()
            .flat_map(|&vj| self.victim_units(vj).into_iter().map(move |u| (vj, u)))
            .collect();
        // The smallest prefix passing the capacity policy (victims freed) and placement.
        // Each victim's request is summed once: O(V) for V victims.
        let mut k0 = 0;
        let mut freed = Amt::ZERO;
        let mut freed_np = Amt::ZERO;
        loop {
            if self
                .capacity_freed(leaf, req, np, freed, freed_np)
                .is_none()
            {
                break;
            }
            if k0 == victims.len() {
                break;
            }
            let (vj, ts) = &victims[k0];
            let v = self.job_req(*vj, ts);
            inc_all(&mut freed, &v, self.overflow);
            if !self.job(*vj).preemptible {
                inc_all(&mut freed_np, &v, self.overflow);
            }
            k0 += 1;
        }
        if let Some(f) = self.capacity_freed(leaf, req, np, freed, Amt::ZERO) {
            self.cap_fail(ji, f, req);
            return;
        }
        let k0 = k0.max(self.quota_prefix(req, &victims));
        let Some(k) = self.min_prefix(ji, &tasks, &victims, k0) else {
            return;
        };
        let cap_ok = |e: &Engine<'_>, rest: &Units| {
            let mut freed = Amt::ZERO;
            for (vj, ts) in rest {
                inc_all(&mut freed, &e.job_req(*vj, ts), e.overflow);
            }
            e.capacity_freed(leaf, req, np, freed, Amt::ZERO).is_none()
        };
        let chosen = self.prune_victims(ji, &tasks, &victims[..k], &cap_ok);
        let mut moved = self.movable_victims(ji, &tasks, &chosen);
        let killed: Vec<(JobId, Vec<TaskId>)> = chosen
            .iter()
            .filter(|(vj, _)| !moved.contains(vj))
            .cloned()
            .collect();
        if !cap_ok(self, &killed) {
            moved.clear();
        }
        let key = self.job(ji).key.clone();
        for (vj, ts) in &chosen {
            self.evict(*vj, ts, Action::Preempt, Some(&key));
        }
        if let Some(recs) = self.place_all(ji, &tasks) {
            self.commit_pipelined(ji, &tasks, recs);
            self.fail[ji] = None;
        }
        self.replace_moved(&chosen, &moved);
    }
}
