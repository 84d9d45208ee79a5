//! The consolidation action (`kai-scheduler/KAI-Scheduler:
//! pkg/scheduler/actions/consolidation`).

use super::*;

impl Engine<'_> {
    pub(super) fn consolidate(&mut self) {
        let lists = self.leaf_lists(|e, ji| e.job(ji).preemptible);
        self.run_action(
            Step::Consolidate,
            lists,
            |_, _| false,
            |e, leaf, ji| e.memoized(Step::Consolidate, ji, |e| e.consolidate_job(leaf, ji)),
        );
    }

    /// Consolidation for one pending job of leaf `leaf`.
    fn consolidate_job(&mut self, leaf: QueueId, ji: JobId) {
        let Some(tasks) = self.still_pending_gang(ji) else {
            return;
        };
        let req = self.job_req(ji, &tasks);
        if self.capacity(leaf, req, false).is_some() {
            return;
        }
        // Only when the free capacity would hold the job.
        let (free, free_dev) = self.free_for_consolidation();
        if Resource::ALL.into_iter().any(|r| free[r] < req[r]) {
            return;
        }
        // Whole and fractional GPUs of a node with devices are held in its devices, not
        // in `idle`: their free share bounds what any move can make room for (moves keep
        // the total). MIG instances are placed apart, so the bound is only taken for a job
        // without them. A cheaper refusal of hopeless candidates; the decisions are the
        // same.
        if tasks.iter().all(|&t| self.task(ji, t).mig.is_empty()) && free_dev < req[GPU] {
            return;
        }
        let all = self.consolidation_candidates();
        // The job itself is a candidate only when some of its pods run (an elastic job).
        let cands: std::rc::Rc<Vec<JobId>> = if self.tstate[ji].contains(&TState::Running) {
            std::rc::Rc::new(all.iter().copied().filter(|&vj| vj != ji).collect())
        } else {
            all
        };
        self.consolidate_with(ji, &tasks, &cands);
    }

    /// The free capacity on the nodes (idle amounts summed) and [`Engine::free_device_gpus`],
    /// computed once per [`Engine::epoch`] (only a commit or an eviction changes the nodes
    /// outside a probe).
    ///
    /// # Complexity
    /// O(N · G) once per epoch, else O(1).
    fn free_for_consolidation(&mut self) -> (Amt, i128) {
        if let Some((epoch, free, dev)) = self.cons_free
            && epoch == self.epoch
        {
            return (free, dev);
        }
        let mut free = Amt::ZERO;
        for n in &self.nodes {
            inc_all(&mut free, &n.idle, self.overflow);
        }
        let dev = self.free_device_gpus();
        self.cons_free = Some((self.epoch, free, dev));
        (free, dev)
    }

    /// The running jobs consolidation may move, in victim order (victim queue order, then
    /// victim job order), computed once per [`Engine::epoch`]: the filter reads the pods'
    /// states and the evicted jobs, the order the queues' allocations, and only a commit or
    /// an eviction changes them outside a probe.
    ///
    /// # Complexity
    /// O(J + C log C) for C candidates once per epoch, else O(1).
    fn consolidation_candidates(&mut self) -> std::rc::Rc<Vec<JobId>> {
        if let Some((epoch, c)) = &self.cons_cands
            && *epoch == self.epoch
        {
            return c.clone();
        }
        let mut cands: Vec<JobId> = self
            .job_ids()
            .filter(|&vj| {
                let v = self.job(vj);
                v.preemptible
                    && !self.evicted_job[vj]
                    && self.tstate[vj]
                        .iter()
                        .all(|s| !matches!(s, TState::Placed(_) | TState::Releasing))
                    && self.tstate[vj].contains(&TState::Running)
            })
            .collect();
        // Victim queue order, then victim job order. The queue order reads only the queues'
        // allocations, fixed during the sort, and is a total order on distinct queues (it
        // ends with the name): each queue's rank in it is computed once, O(Q log Q)
        // comparisons instead of O(C log C) for C candidates.
        let queue_of = |vj: JobId| self.job(vj).queue.unwrap_or(QueueId::new(0));
        let mut qs: Vec<QueueId> = cands.iter().map(|&vj| queue_of(vj)).collect();
        qs.sort_unstable();
        qs.dedup();
        qs.sort_by(|&a, &b| self.victim_order(a, self.alloc[a], b, self.alloc[b]));
        let mut rank = PerQueue::filled(0usize, self.c.hierarchy.queues().len().max(1));
        for (i, &q) in qs.iter().enumerate() {
            rank[q] = i;
        }
        cands.sort_by(|&a, &b| {
            rank[queue_of(a)]
                .cmp(&rank[queue_of(b)])
                .then(self.victim_job_cmp(a, b))
        });
        let cands = std::rc::Rc::new(cands);
        self.cons_cands = Some((self.epoch, cands.clone()));
        cands
    }

    /// Consolidation for job `ji`'s pending gang `tasks` over the candidates `cands` (in
    /// victim order, without the job itself).
    fn consolidate_with(&mut self, ji: JobId, tasks: &[TaskId], cands: &[JobId]) {
        let tasks = tasks.to_vec();
        let max = self.o.max_consolidation_preemptees.min(cands.len());
        // The first prefix of the victim order that frees room for the job, cut to the
        // victims the job needs (KAI's solver finds such per-node scenarios), then checked
        // for re-placement; failing that, the whole prefix with every victim moved.
        let units = |e: &Engine<'_>, vs: &[JobId]| -> Vec<(JobId, Vec<TaskId>)> {
            vs.iter()
                .map(|&vj| (vj, tasks_where(&e.tstate[vj], |s| *s == TState::Running)))
                .collect()
        };
        let mut found: Option<Vec<JobId>> = None;
        for k in 1..=max {
            let prefix = &cands[..k];
            let u = units(self, prefix);
            if !self.fits_with(ji, &tasks, &u) {
                continue;
            }
            let mut sub = prefix.to_vec();
            for i in (0..k).rev() {
                if sub.len() == 1 {
                    break;
                }
                let rest: Vec<JobId> = sub.iter().copied().filter(|&v| v != cands[i]).collect();
                let ru = units(self, &rest);
                if self.fits_with(ji, &tasks, &ru) {
                    sub = rest;
                }
            }
            if self.consolidation_moves(ji, &tasks, &sub) {
                found = Some(sub);
                break;
            }
            if self.consolidation_moves(ji, &tasks, prefix) {
                found = Some(prefix.to_vec());
                break;
            }
        }
        let Some(mut victims) = found else {
            return;
        };
        // Like reclaim and preempt: a victim the job does not need stays where it is
        // (KAI re-places every scenario victim after the preemptor; test "verify not all
        // preemptors are evicted as well"). Tried from the last victim to the first.
        for i in (0..cands.len().min(max)).rev() {
            if victims.len() == 1 {
                break;
            }
            let Some(pos) = victims.iter().position(|&v| v == cands[i]) else {
                continue;
            };
            let mut rest = victims.clone();
            rest.remove(pos);
            if self.consolidation_moves(ji, &tasks, &rest) {
                victims = rest;
            }
        }
        let key = self.job(ji).key.clone();
        let moved: Vec<(JobId, Vec<TaskId>)> = victims
            .iter()
            .map(|&vj| (vj, tasks_where(&self.tstate[vj], |s| *s == TState::Running)))
            .collect();
        for (vj, ts) in &moved {
            self.evict(*vj, ts, Action::Consolidation, Some(&key));
        }
        if let Some(r) = self.place_all(ji, &tasks) {
            self.commit_pipelined(ji, &tasks, r);
        }
        for (vj, ts) in &moved {
            if let Some(r) = self.place_all(*vj, ts) {
                self.commit_placed(*vj, ts, r);
                self.evicted_job[*vj] = true;
                // A moved job starts once its evicted pods are gone: KAI reports it
                // Pipelined wherever it lands.
                if let Some(i) = self.alloc_idx[*vj] {
                    self.allocated[i].pipelined = true;
                }
            }
        }
        self.fail[ji] = None;
    }

    /// Free GPU capacity on the nodes (devices' free shares on nodes with devices, idle GPUs
    /// elsewhere), nano-units.
    ///
    /// # Complexity
    /// O(N · G).
    fn free_device_gpus(&self) -> i128 {
        let of = self.overflow;
        let mut free = 0i128;
        for n in &self.nodes {
            if n.devs.is_empty() {
                free = plus(free, n.idle[GPU].max(0), of);
            } else {
                for d in &n.devs {
                    free = plus(free, minus(SCALE, d.0, of).max(0), of);
                }
            }
        }
        free
    }

    /// Whether moving `victims` lets job `ji` be placed with every victim re-placed (not on
    /// resources being freed); the state is restored.
    ///
    /// # Complexity
    /// One placement of the job and of each victim: O((1 + V) · N · G).
    pub(super) fn consolidation_moves(
        &mut self,
        ji: JobId,
        tasks: &[TaskId],
        victims: &[JobId],
    ) -> bool {
        // Only the victims' pod states and the nodes change: `release` puts each record
        // back, and the placements probed here are never committed.
        self.begin_probe();
        let saved_state: Vec<((JobId, TaskId), TState)> = victims
            .iter()
            .flat_map(|&vj| {
                self.tstate[vj]
                    .iter()
                    .enumerate()
                    .map(move |(t, &s)| ((vj, TaskId::new(t)), s))
            })
            .collect();
        for &vj in victims {
            for t in task_ids(self.job(vj)) {
                if self.tstate[(vj, t)] == TState::Running {
                    self.release(vj, t);
                }
            }
        }
        let mut ok = self.place_all(ji, tasks).is_some();
        if ok {
            for &vj in victims {
                let ts = tasks_where(&self.tstate[vj], |s| *s == TState::Releasing);
                // Victims may not land back on resources that are being freed.
                if self.place_all(vj, &ts).is_none() {
                    ok = false;
                    break;
                }
            }
        }
        self.end_probe();
        for (pod, s) in saved_state {
            self.tstate[pod] = s;
        }
        ok
    }
}
