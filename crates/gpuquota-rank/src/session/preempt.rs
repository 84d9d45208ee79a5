//! The preempt action (`kai-scheduler/KAI-Scheduler: pkg/scheduler/actions/preempt`).

use super::*;

impl Engine<'_> {
    pub(super) fn preempt(&mut self) {
        let running = self.running_by_leaf();
        let mut lists = self.leaf_lists(|_| true);
        while let Some((leaf, ji)) = self.pick(&lists) {
            lists[leaf].pop();
            let Some(tasks) = self.still_pending_gang(ji) else {
                continue;
            };
            if !self.delay_elapsed(ji) {
                self.delayed[ji] = true;
                continue;
            }
            let prio = self.c.jobs[ji].priority;
            let np = !self.c.jobs[ji].preemptible;
            let req = self.job_req(ji, &tasks);
            // Same leaf, strictly lower priority (the list is sorted by priority first).
            let cands: Vec<usize> = running[leaf]
                .iter()
                .copied()
                .take_while(|&vj| self.c.jobs[vj].priority < prio)
                .filter(|&vj| {
                    vj != ji
                        && !self.evicted_job[vj]
                        && self.tstate[vj].contains(&TState::Running)
                        && self.runtime_ok(vj, self.c.queues[leaf].preempt_min_runtime)
                })
                .collect();
            if cands.is_empty() {
                continue;
            }
            let victims: Vec<(usize, Vec<usize>)> = cands
                .iter()
                .flat_map(|&vj| self.victim_units(vj).into_iter().map(move |u| (vj, u)))
                .collect();
            // The smallest prefix passing the capacity policy (victims freed) and placement.
            let mut k0 = 0;
            loop {
                let freed: Vec<(usize, Amt, bool)> = victims[..k0]
                    .iter()
                    .map(|(vj, ts)| (leaf, self.job_req(*vj, ts), !self.c.jobs[*vj].preemptible))
                    .collect();
                if self.capacity(leaf, req, np, &freed).is_none() {
                    break;
                }
                if k0 == victims.len() {
                    break;
                }
                k0 += 1;
            }
            let freed: Vec<(usize, Amt, bool)> = victims[..k0]
                .iter()
                .map(|(vj, ts)| (leaf, self.job_req(*vj, ts), false))
                .collect();
            if let Some(f) = self.capacity(leaf, req, np, &freed) {
                self.cap_fail(ji, f, req);
                continue;
            }
            let k0 = k0.max(self.quota_prefix(req, &victims));
            let Some(k) = self.min_prefix(ji, &tasks, &victims, k0) else {
                continue;
            };
            let cap_ok = |e: &Engine<'_>, rest: &[(usize, Vec<usize>)]| {
                let freed: Vec<(usize, Amt, bool)> = rest
                    .iter()
                    .map(|(vj, ts)| (leaf, e.job_req(*vj, ts), false))
                    .collect();
                e.capacity(leaf, req, np, &freed).is_none()
            };
            let chosen = self.prune_victims(ji, &tasks, &victims[..k], &cap_ok);
            let mut moved = self.movable_victims(ji, &tasks, &chosen);
            let killed: Vec<(usize, Vec<usize>)> = chosen
                .iter()
                .filter(|(vj, _)| !moved.contains(vj))
                .cloned()
                .collect();
            if !cap_ok(self, &killed) {
                moved.clear();
            }
            let key = self.c.jobs[ji].key.clone();
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
}
