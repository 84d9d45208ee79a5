//! The reclaim action (`kai-scheduler/KAI-Scheduler: pkg/scheduler/actions/reclaim`) and
//! the proportion plugin's victim filter and reclaim validator.

use super::*;

impl Engine<'_> {
    /// The proportion victim prefilter (upstream `plugins/proportion/reclaimable`) on the leveled
    /// pair.
    pub(super) fn filter_victim(&self, rl: QueueId, vl: QueueId, req: Amt) -> bool {
        let exceeds = Resource::ALL.into_iter().any(|r| {
            !unl_le(
                plus(self.alloc[rl][r], req[r], self.overflow),
                self.params(rl, r).deserved,
            )
        });
        if exceeds {
            return Resource::ALL
                .into_iter()
                .any(|r| !unl_le(self.alloc[vl][r], self.allocatable(vl, r)));
        }
        let mut over = false;
        let mut under = false;
        for r in Resource::ALL {
            if req[r] == 0 {
                continue;
            }
            let Some(d) = self.params(vl, r).deserved else {
                continue;
            };
            match self.alloc[vl][r].cmp(&d) {
                Ordering::Greater => over = true,
                Ordering::Less => under = true,
                Ordering::Equal => {}
            }
        }
        over || !under
    }

    /// The reclaim validator (upstream `plugins/proportion/reclaimable/reclaimable.go`).
    pub(super) fn reclaimable(
        &self,
        leaf: QueueId,
        req: Amt,
        victims: &Units,
    ) -> Result<(), String> {
        let nq = self.c.hierarchy.queues().len();
        let mut remaining: PerQueue<Option<Amt>> = PerQueue::filled(None, nq);
        let mut involved: PerQueue<PerResource<bool>> =
            PerQueue::filled(PerResource([false; 3]), nq);
        for (vj, ts) in victims {
            let j = self.job(*vj);
            let Some(vq) = j.queue else {
                continue;
            };
            let Some((rl, vl)) = self.leveled(leaf, vq) else {
                return Err("victim in the reclaimer's own queue".into());
            };
            let rem = remaining[vl].unwrap_or(self.alloc[vl]);
            let maintain = Resource::ALL
                .into_iter()
                .any(|r| !unl_le(rem[r], self.allocatable(vl, r)));
            let guarantee = Resource::ALL.into_iter().all(|r| {
                unl_le(
                    plus(self.alloc[rl][r], req[r], self.overflow),
                    self.params(rl, r).deserved,
                )
            }) && Resource::ALL
                .into_iter()
                .any(|r| !unl_le(rem[r], self.params(vl, r).deserved));
            if !maintain && !guarantee {
                return Err(format!(
                    "queue {} is within its fair share and the reclaimer is not starved",
                    self.c.hierarchy.queue(vl).name
                ));
            }
            let mut vreq = Amt::ZERO;
            for &t in ts {
                inc_all(&mut vreq, &task_of(j, t).req, self.overflow);
            }
            let mut cur = Some(vq);
            while let Some(q) = cur {
                let mut rm = remaining[q].unwrap_or(self.alloc[q]);
                dec_all(&mut rm, &vreq, self.overflow);
                for r in Resource::ALL {
                    involved[q][r] |= vreq[r] > 0;
                }
                remaining[q] = Some(rm);
                cur = self.c.hierarchy.queue(q).parent;
            }
        }
        // Boundary check from the reclaimer's leaf up.
        let mult = self.o.reclaimer_saturation_multiplier.max(SCALE);
        for x in self.c.hierarchy.path(leaf).into_iter().rev() {
            let sibs: &[QueueId] = match self.c.hierarchy.queue(x).parent {
                Some(p) => self.c.hierarchy.children(p),
                None => self.c.hierarchy.roots(),
            };
            let xrem = remaining[x].unwrap_or(self.alloc[x]);
            for &s in sibs {
                if s == x {
                    continue;
                }
                let Some(srem) = remaining[s] else { continue };
                for r in Resource::ALL {
                    if !(involved[s][r] || req[r] > 0) {
                        continue;
                    }
                    let load = plus(xrem[r], req[r], self.overflow);
                    let fx = self.fs[x][r];
                    let fsib = self.fs[s][r];
                    // ratioX > 1 ⇔ load > FS_X (FS 0 with load > 0 is +∞).
                    if load <= fx || fsib <= 0 {
                        continue;
                    }
                    let fail = if fx == 0 {
                        true
                    } else if mult == SCALE {
                        // load/fx ≥ srem/fsib ⇔ load·fsib ≥ srem·fx
                        srem[r] <= 0
                            || cmp_products(load as u128, fsib as u128, srem[r] as u128, fx as u128)
                                != Ordering::Less
                    } else {
                        ratio(load, fx) * (mult as f64 / SCALE as f64) >= ratio(srem[r], fsib)
                    };
                    if fail {
                        return Err(format!(
                            "queue {} would end above its fair share and more saturated than {}",
                            self.c.hierarchy.queue(x).name,
                            self.c.hierarchy.queue(s).name
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    pub(super) fn reclaim(&mut self) {
        self.victims_action(Step::Reclaim, Self::reclaim_job);
    }

    /// Reclaim for one pending job of leaf `leaf` (its gang `tasks`), once its preemption delay has elapsed.
    fn reclaim_job(
        &mut self,
        leaf: QueueId,
        ji: JobId,
        tasks: Vec<TaskId>,
        running: &PerQueue<Vec<JobId>>,
    ) {
        let j = self.job(ji);
        let np = !j.preemptible;
        let req = self.job_req(ji, &tasks);
        if let Some(f) = self.capacity(leaf, req, np) {
            self.cap_fail(ji, f, req);
            return;
        }
        // CanReclaimResources at the leaf.
        if let Some(r) = Resource::ALL
            .into_iter()
            .find(|&r| plus(self.alloc[leaf][r], req[r], self.overflow) > self.fs[leaf][r])
        {
            let res = r;
            self.set_fail(ji, Reason::Unschedulable, None, format!(
                "queue {} cannot reclaim: allocated {} + requested {} {res} exceeds its fair share {}",
                self.c.hierarchy.queue(leaf).name,
                fmt_res(res, self.alloc[leaf][r]),
                fmt_res(res, req[r]),
                fmt_res(res, self.fs[leaf][r])
            ));
            return;
        }
        // Victim queues: other leaves with running preemptible jobs, passing the
        // proportion prefilter on the leveled pair; in reverse queue order.
        let mut vq: Vec<(QueueId, Option<i128>)> = Vec::new();
        for (q, list) in running.iter_enumerated() {
            if q == leaf || list.is_empty() {
                continue;
            }
            let Some((rl, vl)) = self.leveled(leaf, q) else {
                continue;
            };
            if self.filter_victim(rl, vl, req) {
                vq.push((q, self.c.queues[vl.index()].reclaim_min_runtime));
            }
        }
        // Victims are generated lazily: enough to cover the shortfall, then more only if
        // the placement search needs them.
        let mut cursor = VictimGen::default();
        let mut victims: Vec<(JobId, Vec<TaskId>)> = Vec::new();
        let mut free = self.free_capacity();
        while Resource::ALL.into_iter().any(|r| free[r] < req[r]) {
            let before = victims.len();
            self.next_victim_job(&vq, running, &mut cursor, &mut victims);
            if victims.len() == before {
                break;
            }
            for (vj, ts) in &victims[before..] {
                for &t in ts {
                    inc_all(&mut free, &self.task(*vj, t).req, self.overflow);
                }
            }
        }
        let k0 = victims.len();
        for _ in 0..(k0 + 8) {
            self.next_victim_job(&vq, running, &mut cursor, &mut victims);
        }
        if victims.is_empty() {
            self.set_fail(
                ji,
                Reason::Unschedulable,
                None,
                "no free room and no reclaimable victims in other queues".into(),
            );
            return;
        }
        let mut found = self.min_prefix(ji, &tasks, &victims, k0);
        if found.is_none() {
            let before = victims.len();
            loop {
                let n = victims.len();
                self.next_victim_job(&vq, running, &mut cursor, &mut victims);
                if victims.len() == n {
                    break;
                }
            }
            if victims.len() > before {
                found = self.min_prefix(ji, &tasks, &victims, k0);
            }
        }
        let Some(k) = found else {
            self.set_fail(
                ji,
                Reason::Unschedulable,
                None,
                "even evicting every reclaimable victim would not make room for the gang".into(),
            );
            return;
        };
        let chosen = self.prune_victims(ji, &tasks, &victims[..k], &|_, _| true);
        // Consolidating reclaim (KAI's `allow-consolidating-reclaim`, on by default): a
        // victim that fits elsewhere once the reclaimer is placed is moved, not killed,
        // and only the killed victims go to the validator.
        let moved = self.movable_victims(ji, &tasks, &chosen);
        let killed: Vec<(JobId, Vec<TaskId>)> = chosen
            .iter()
            .filter(|(vj, _)| !moved.contains(vj))
            .cloned()
            .collect();
        // With every victim moved the validator sees no victim and approves, as upstream
        // does (PR #1565's bypass); the corrected mode applies that PR's fix: the
        // reclaimer must then stay within its deserved quota.
        if killed.is_empty()
            && self.o.division.mode == crate::division::Mode::Corrected
            && Resource::ALL.into_iter().any(|r| {
                !unl_le(
                    plus(self.alloc[leaf][r], req[r], self.overflow),
                    self.params(leaf, r).deserved,
                )
            })
        {
            self.set_fail(
                ji,
                Reason::Unschedulable,
                None,
                "reclaim refused: every victim would only be moved and the reclaimer would \
                 exceed its deserved quota"
                    .into(),
            );
            return;
        }
        if let Err(msg) = self.reclaimable(leaf, req, &killed) {
            self.set_fail(
                ji,
                Reason::Unschedulable,
                None,
                format!("reclaim refused: {msg}"),
            );
            return;
        }
        let key = self.job(ji).key.clone();
        for (vj, ts) in &chosen {
            self.evict(*vj, ts, Action::Reclaim, Some(&key));
        }
        if let Some(recs) = self.place_all(ji, &tasks) {
            self.commit_pipelined(ji, &tasks, recs);
            self.fail[ji] = None;
        }
        self.replace_moved(&chosen, &moved);
    }
}
