//! Victim generation and the search for the smallest victim set (KAI's
//! `pkg/scheduler/actions/common/solvers`, by-pod solver).

use super::*;

impl Engine<'_> {
    pub(super) fn still_pending_gang(&self, ji: JobId) -> Option<Vec<TaskId>> {
        let (pending, gang) = self.needed_tasks(ji);
        if gang == 0 || gang > pending.len() {
            return None;
        }
        Some(pending[..gang].to_vec())
    }

    pub(super) fn delay_elapsed(&self, ji: JobId) -> bool {
        let j = self.job(ji);
        match (j.preemption_delay, j.creation) {
            (Some(d), Some(c)) => {
                minus(self.c.now.unix_nanos(), c.unix_nanos(), self.overflow) >= d
            }
            _ => true,
        }
    }

    pub(super) fn runtime_ok(&self, ji: JobId, min: Option<i128>) -> bool {
        match (min, self.job(ji).last_start) {
            (Some(m), Some(s)) if m > 0 => {
                minus(self.c.now.unix_nanos(), s.unix_nanos(), self.overflow) >= m
            }
            _ => true,
        }
    }

    /// Running units of a job that can be evicted: elastic extras one by one (newest task
    /// name last), then the core as one unit.
    pub(super) fn victim_units(&self, ji: JobId) -> Vec<Vec<TaskId>> {
        let j = self.job(ji);
        let running = tasks_where(&self.tstate[ji], |s| matches!(s, TState::Running));
        if running.is_empty() {
            return Vec::new();
        }
        let mut units = Vec::new();
        let extras = running.len().saturating_sub(j.min_member);
        for k in (0..extras).rev() {
            units.push(vec![running[running.len() - extras + k]]);
        }
        // minMember 0: every pod is an extra and there is no core unit.
        if extras < running.len() {
            units.push(running[..running.len() - extras].to_vec());
        }
        units
    }

    /// Evicts a set of tasks, returning nothing; records the eviction once per job/action/by.
    pub(super) fn evict(&mut self, ji: JobId, tasks: &[TaskId], action: Action, by: Option<&str>) {
        self.epoch += 1;
        self.touched[ji] = self.epoch;
        let j = self.job(ji);
        for &ti in tasks {
            if let Some(q) = j.queue {
                self.account(q, task_of(j, ti).req, !j.preemptible, false);
            }
            self.release(ji, ti);
        }
        if !self.tstate[ji].contains(&TState::Running) {
            self.evicted_job[ji] = true;
        }
        let by = by.map(str::to_string);
        if self.evicted_keys.insert((ji, action, by.clone())) {
            self.evicted.push(Eviction {
                pod_group: j.key.clone(),
                queue: j.queue_name.clone(),
                action,
                by,
            });
        }
    }

    /// Tries victim prefixes (exponential then binary search from `k0`) and returns the
    /// smallest count whose release lets `tasks` be placed.
    pub(super) fn min_prefix(
        &mut self,
        ji: JobId,
        tasks: &[TaskId],
        victims: &Units,
        k0: usize,
    ) -> Option<usize> {
        let fits = |e: &mut Engine<'_>, k: usize| -> bool { e.fits_with(ji, tasks, &victims[..k]) };
        let n = victims.len();
        let k0 = k0.min(n);
        if fits(self, k0) {
            return Some(k0);
        }
        // Exponential probe.
        let mut lo = k0; // known failing
        let mut step = 1;
        let hi = loop {
            let k = (lo + step).min(n);
            if fits(self, k) {
                break k;
            }
            if k == n {
                return None;
            }
            lo = k;
            step *= 2;
        };
        let (mut lo, mut hi) = (lo, hi);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if fits(self, mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Some(hi)
    }

    /// Whether `tasks` of job `ji` can be placed once `victims` are released (state restored).
    ///
    /// # Complexity
    /// For one whole-GPU pod outside a probe ([`Engine::fits_one_with`]): O(V + K · G) for
    /// V victim pods on K nodes of G devices, after one O(N · G) scan per job and
    /// [`Engine::epoch`]. Otherwise a placement of the pods.
    pub(super) fn fits_with(&mut self, ji: JobId, tasks: &[TaskId], victims: &Units) -> bool {
        if let [ti] = *tasks
            && self.shortcuts
            && self.probe.depth == 0
            && !self.c.nodes.is_empty()
            && !self.task(ji, ti).fractional
            && let Some(ok) = self.fits_one_with(ji, ti, victims)
        {
            return ok;
        }
        // `release` puts each record back and the probed placement is not committed: only
        // the nodes it touches and the victims' pod states change.
        let e = self;
        e.begin_probe();
        for (vj, ts) in victims {
            for &t in ts {
                e.release(*vj, t);
            }
        }
        let ok = e.place_all(ji, tasks).is_some();
        e.end_probe();
        for (vj, ts) in victims {
            for &t in ts {
                e.tstate[(*vj, t)] = TState::Running;
            }
        }
        ok
    }

    /// [`Engine::fits_with`] for a job of one pod `ti` that takes whole GPUs (not a
    /// fraction), on the state of the current [`Engine::epoch`] (outside a probe); `None`
    /// when some node admits the pod already (then the placement is run as before).
    ///
    /// Such a pod is placed exactly when some node passes its feasibility test
    /// ([`Engine::node_score`]; placing whole GPUs on a node that passed never fails), and a
    /// node's test reads only that node's state. Releasing victims changes only the nodes
    /// their pods run on, and only adds room there. So when no node passes now, the pod fits
    /// once the victims are released exactly when one of the victims' nodes passes then: only
    /// those are tested, instead of a node search over the cluster. The release itself is
    /// the one [`Engine::fits_with`] makes, and is undone the same way.
    ///
    /// # Complexity
    /// O(N · G) once per job and epoch (is there a node now), then O(V + K · G) for V victim
    /// pods on K nodes.
    fn fits_one_with(&mut self, ji: JobId, ti: TaskId, victims: &Units) -> Option<bool> {
        let t = self.task(ji, ti);
        let req = dev_req(t);
        let now = match self.fit_now {
            Some((epoch, j, p, ok)) if epoch == self.epoch && j == ji && p == ti => ok,
            _ => {
                let ok = self
                    .nodes
                    .ids()
                    .any(|n| self.node_score(n, t, req).is_some());
                self.fit_now = Some((self.epoch, ji, ti, ok));
                ok
            }
        };
        if now {
            return None;
        }
        let mut nodes: Vec<NodeId> = victims
            .iter()
            .flat_map(|(vj, ts)| ts.iter().map(move |&vt| (*vj, vt)))
            .filter_map(|pod| self.place[pod].node)
            .collect();
        nodes.sort_unstable();
        nodes.dedup();
        self.begin_probe();
        for (vj, ts) in victims {
            for &vt in ts {
                self.release(*vj, vt);
            }
        }
        let ok = nodes.iter().any(|&n| self.node_score(n, t, req).is_some());
        self.end_probe();
        for (vj, ts) in victims {
            for &vt in ts {
                self.tstate[(*vj, vt)] = TState::Running;
            }
        }
        Some(ok)
    }

    /// Drops the victims the job does not need, as KAI's solver does when it puts every
    /// victim of a scenario back after placing the preemptor (`TryToVirtuallyAllocate…`): a
    /// victim that can stay where it is keeps running. Tried from the last victim of the
    /// prefix (the least evictable) to the first; `keep_ok` re-checks any other condition
    /// (the capacity policy for preempt). A unit of a job stays evicted while a later unit
    /// of the same job (its core) is evicted.
    ///
    /// # Complexity
    /// O(k) resource checks for a prefix of k victims, plus one placement probe for each
    /// victim smaller than the surplus the prefix frees (none when the prefix frees exactly
    /// what the job needs).
    pub(super) fn prune_victims(
        &mut self,
        ji: JobId,
        tasks: &[TaskId],
        victims: &Units,
        keep_ok: &dyn Fn(&Engine<'_>, &Units) -> bool,
    ) -> Vec<(JobId, Vec<TaskId>)> {
        let mut kept: Vec<bool> = vec![true; victims.len()];
        // What the victims free beyond the job's need, summed over the cluster: a victim
        // larger than this surplus is needed, without a placement probe.
        let need = self.job_req(ji, tasks);
        let mut surplus = self.free_capacity();
        for (vj, ts) in victims {
            let r = self.job_req(*vj, ts);
            inc_all(&mut surplus, &r, self.overflow);
        }
        dec_all(&mut surplus, &need, self.overflow);
        for i in (0..victims.len()).rev() {
            let vj = victims[i].0;
            if (i + 1..victims.len()).any(|j| kept[j] && victims[j].0 == vj) {
                continue;
            }
            let vr = self.job_req(vj, &victims[i].1);
            if Resource::ALL.into_iter().any(|r| vr[r] > surplus[r].max(0)) {
                continue;
            }
            kept[i] = false;
            let rest: Vec<(JobId, Vec<TaskId>)> = victims
                .iter()
                .zip(&kept)
                .filter(|(_, k)| **k)
                .map(|(v, _)| v.clone())
                .collect();
            if keep_ok(self, &rest) && self.fits_with(ji, tasks, &rest) {
                dec_all(&mut surplus, &vr, self.overflow);
            } else {
                kept[i] = true;
            }
        }
        victims
            .iter()
            .zip(&kept)
            .filter(|(_, k)| **k)
            .map(|(v, _)| v.clone())
            .collect()
    }

    /// The leveled pair: the first differing queues on the two root→leaf paths.
    pub(super) fn leveled(&self, a: QueueId, b: QueueId) -> Option<(QueueId, QueueId)> {
        let pa = self.c.hierarchy.path(a);
        let pb = self.c.hierarchy.path(b);
        for i in 0..pa.len().min(pb.len()) {
            if pa[i] != pb[i] {
                return Some((pa[i], pb[i]));
            }
        }
        None
    }

    /// Running preemptible jobs per leaf queue, in victim order (lowest priority, newest
    /// first).
    pub(super) fn running_by_leaf(&self) -> PerQueue<Vec<JobId>> {
        let mut lists = PerQueue::filled(Vec::new(), self.c.hierarchy.queues().len());
        for (vj, job) in jobs_enumerated(self.c) {
            if let Some(q) = job.queue
                && job.preemptible
                && !self.evicted_job[vj]
                && self.tstate[vj].contains(&TState::Running)
            {
                lists[q].push(vj);
            }
        }
        for l in &mut lists {
            l.sort_by(|&a, &b| self.victim_job_cmp(a, b));
        }
        lists
    }

    /// Appends the units of the next eligible victim job: the victim queue first in reverse
    /// queue order given what was already taken from each, then its lowest-priority, newest
    /// job; evicted jobs and jobs protected by min-runtime are skipped.
    pub(super) fn next_victim_job(
        &self,
        vq: &[(QueueId, Option<i128>)],
        running: &PerQueue<Vec<JobId>>,
        vg: &mut VictimGen,
        out: &mut Vec<(JobId, Vec<TaskId>)>,
    ) {
        if vg.cursors.len() != vq.len() {
            vg.cursors = vec![0; vq.len()];
            vg.sim = vq.iter().map(|&(q, _)| self.alloc[q]).collect();
        }
        loop {
            // Advance every cursor to its next eligible job, then pick the best queue.
            let mut best: Option<usize> = None;
            for i in 0..vq.len() {
                let (q, min_rt) = vq[i];
                let list = &running[q];
                while vg.cursors[i] < list.len() {
                    let vj = list[vg.cursors[i]];
                    if self.evicted_job[vj]
                        || !self.tstate[vj].contains(&TState::Running)
                        || !self.runtime_ok(vj, min_rt)
                    {
                        vg.cursors[i] += 1;
                    } else {
                        break;
                    }
                }
                if vg.cursors[i] >= list.len() {
                    continue;
                }
                let better = match best {
                    None => true,
                    Some(b) => {
                        self.victim_order(q, vg.sim[i], vq[b].0, vg.sim[b]) == Ordering::Less
                    }
                };
                if better {
                    best = Some(i);
                }
            }
            let Some(i) = best else { return };
            let vj = running[vq[i].0][vg.cursors[i]];
            vg.cursors[i] += 1;
            let units = self.victim_units(vj);
            if units.is_empty() {
                continue;
            }
            let j = self.job(vj);
            for u in units {
                for &t in &u {
                    dec_all(&mut vg.sim[i], &task_of(j, t).req, self.overflow);
                }
                out.push((vj, u));
            }
            return;
        }
    }

    /// The victim jobs of `victims` that can be re-placed once all of them are released and
    /// job `ji` is placed, tried in job order (the reverse of the victim order); a job is
    /// moved only when it is one unit of the list. The state is restored.
    ///
    /// # Complexity
    /// One placement of the job and of each victim: O((1 + V) · N · G).
    pub(super) fn movable_victims(
        &mut self,
        ji: JobId,
        tasks: &[TaskId],
        victims: &Units,
    ) -> Vec<JobId> {
        if self.c.nodes.is_empty() {
            return Vec::new();
        }
        self.begin_probe();
        let saved: Vec<((JobId, TaskId), TState)> = victims
            .iter()
            .flat_map(|(vj, ts)| ts.iter().map(|&t| ((*vj, t), self.tstate[(*vj, t)])))
            .collect();
        for (vj, ts) in victims {
            for &t in ts {
                self.release(*vj, t);
            }
        }
        let mut moved = Vec::new();
        if self.place_all(ji, tasks).is_some() {
            for (i, (vj, ts)) in victims.iter().enumerate().rev() {
                let single = victims
                    .iter()
                    .enumerate()
                    .all(|(j, (other, _))| j == i || other != vj);
                let whole = self.tstate[*vj]
                    .iter()
                    .all(|s| !matches!(s, TState::Running));
                if single && whole && self.place_all(*vj, ts).is_some() {
                    moved.push(*vj);
                }
            }
        }
        self.end_probe();
        for (pod, st) in saved {
            self.tstate[pod] = st;
        }
        moved
    }

    /// The smallest victim count whose resources cover the gang's shortfall in free capacity
    /// (a lower bound for the placement search).
    pub(super) fn quota_prefix(&self, req: Amt, victims: &Units) -> usize {
        let mut free = self.free_capacity();
        let mut k = 0;
        while k < victims.len() && Resource::ALL.into_iter().any(|r| free[r] < req[r]) {
            let (vj, ts) = &victims[k];
            for &t in ts {
                inc_all(&mut free, &self.task(*vj, t).req, self.overflow);
            }
            k += 1;
        }
        k
    }

    /// Re-places the moved victims after the job they made room for, reported pipelined.
    pub(super) fn replace_moved(&mut self, chosen: &Units, moved: &[JobId]) {
        for (vj, ts) in chosen.iter().filter(|(vj, _)| moved.contains(vj)) {
            if let Some(r) = self.place_all(*vj, ts) {
                self.commit_placed(*vj, ts, r);
                if let Some(i) = self.alloc_idx[*vj] {
                    self.allocated[i].pipelined = true;
                }
            }
        }
    }
}
