//! Ordering: jobs within a queue, sibling queues (KAI's proportion queue order) and
//! the reverse order victims are taken in.

use ordered_float::OrderedFloat;

use super::*;

impl Engine<'_> {
    pub(super) fn job_req(&self, ji: JobId, tasks: &[TaskId]) -> Amt {
        let j = self.job(ji);
        let mut s = Amt::ZERO;
        for &ti in tasks {
            inc_all(&mut s, &task_of(j, ti).req, self.overflow);
        }
        s
    }

    /// Pending tasks to place now: the gang part (to reach minMember) or, for a job already at
    /// minMember, its pending elastic extras.
    pub(super) fn needed_tasks(&self, ji: JobId) -> (Vec<TaskId>, usize) {
        let j = self.job(ji);
        let row = &self.tstate[ji];
        let active = row
            .iter()
            .filter(|s| matches!(s, TState::Running | TState::Placed(_)))
            .count();
        let pending = tasks_where(row, |s| *s == TState::Pending);
        let gang = j.min_member.saturating_sub(active);
        (pending, gang)
    }

    pub(super) fn drs(&self, q: QueueId, extra: Amt, sign: i128) -> f64 {
        let mut m = 0.0f64;
        for r in Resource::ALL {
            let of = self.overflow;
            let a = plus(self.alloc[q][r], times(sign, extra[r], of), of);
            let v = match self.allocatable(q, r) {
                None => ratio(a, self.c.totals[r]),
                Some(0) => a as f64 / SCALE as f64 * 1000.0,
                Some(al) => ratio(a, al),
            };
            m = m.max(v);
        }
        m
    }

    /// Sibling queue order (upstream `plugins/proportion/queue_order/queue_order.go`): `Less` when
    /// `a` (with its candidate job `ja`) goes first.
    pub(super) fn queue_cmp(&self, a: QueueId, ja: Amt, b: QueueId, jb: Amt) -> Ordering {
        let over = |q: QueueId| {
            Resource::ALL
                .into_iter()
                .all(|r| self.fs[q][r] < self.alloc[q][r])
        };
        let starved = |q: QueueId, j: Amt| {
            Resource::ALL.into_iter().all(|r| {
                unl_le(
                    plus(self.alloc[q][r], j[r], self.overflow),
                    self.params(q, r).deserved,
                )
            })
        };
        let penal = |q: QueueId, j: Amt| {
            Resource::ALL.into_iter().any(|r| {
                plus(self.alloc[q][r], j[r], self.overflow) > 0 && self.allocatable(q, r) == Some(0)
            })
        };
        let qa = &self.c.hierarchy.queue(a);
        let qb = &self.c.hierarchy.queue(b);
        // Each key is computed only when the ones before it tie (`then_with`).
        over(a)
            .cmp(&over(b))
            .then_with(|| starved(b, jb).cmp(&starved(a, ja)))
            .then_with(|| qb.priority.cmp(&qa.priority))
            .then_with(|| penal(a, ja).cmp(&penal(b, jb)))
            .then_with(|| OrderedFloat(self.drs(a, ja, 1)).cmp(&OrderedFloat(self.drs(b, jb, 1))))
            .then_with(|| {
                OrderedFloat(self.drs(a, Amt::ZERO, 0)).cmp(&OrderedFloat(self.drs(
                    b,
                    Amt::ZERO,
                    0,
                )))
            })
            .then_with(|| {
                let sa: Vec<Option<i128>> = Resource::ALL
                    .into_iter()
                    .map(|r| self.allocatable(a, r))
                    .collect();
                let sb: Vec<Option<i128>> = Resource::ALL
                    .into_iter()
                    .map(|r| self.allocatable(b, r))
                    .collect();
                let le = |x: Option<i128>, y: Option<i128>| match (x, y) {
                    (_, None) => true,
                    (None, Some(_)) => false,
                    (Some(x), Some(y)) => x <= y,
                };
                let a_le = Resource::ALL
                    .into_iter()
                    .all(|r| le(sa[r.index()], sb[r.index()]))
                    && sa != sb;
                let b_le = Resource::ALL
                    .into_iter()
                    .all(|r| le(sb[r.index()], sa[r.index()]))
                    && sa != sb;
                if a_le {
                    Ordering::Less
                } else if b_le {
                    Ordering::Greater
                } else {
                    Ordering::Equal
                }
            })
            .then_with(|| qa.creation.cmp(&qb.creation))
            .then_with(|| qa.name.cmp(&qb.name))
    }

    pub(super) fn job_cmp(&self, a: JobId, b: JobId) -> Ordering {
        let ja = self.job(a);
        let jb = self.job(b);
        let elastic = |ji: JobId| {
            let j = self.job(ji);
            let active = self.tstate[ji]
                .iter()
                .filter(|s| matches!(s, TState::Running | TState::Placed(_)))
                .count();
            active.cmp(&j.min_member)
        };
        jb.priority
            .cmp(&ja.priority)
            .then_with(|| elastic(a).cmp(&elastic(b)))
            .then_with(|| ja.creation.cmp(&jb.creation))
            .then_with(|| ja.uid.cmp(&jb.uid))
            .then_with(|| ja.key.cmp(&jb.key))
    }

    /// Candidate jobs per leaf queue in job order.
    ///
    /// # Complexity
    /// O(T + C log C) for T pods and C candidates.
    pub(super) fn leaf_lists(
        &mut self,
        pred: impl Fn(&Self, JobId) -> bool,
    ) -> PerQueue<Vec<JobId>> {
        let nq = self.c.hierarchy.queues().len();
        let mut lists = PerQueue::filled(Vec::new(), nq);
        let candidate = |e: &Self, ji: JobId| {
            e.job(ji).queue.is_some()
                && !e.evicted_job[ji]
                && e.tstate[ji].contains(&TState::Pending)
        };
        if !self.shortcuts {
            for ji in self.job_ids() {
                if candidate(self, ji)
                    && pred(self, ji)
                    && let Some(q) = self.job(ji).queue
                {
                    lists[q].push(ji);
                }
            }
            for l in &mut lists {
                l.sort_by(|&a, &b| self.job_cmp(a, b));
                l.reverse(); // pop from the back
            }
            return lists;
        }
        // Every candidate of the session in job order, sorted once: a later action's
        // candidates are among them (no pod becomes pending during a session), and the
        // order of those whose pods have not changed state since the sort is the same
        // (`job_cmp` reads only the job and its pods' states). Sorted again only when a
        // candidate was placed or evicted after it.
        loop {
            if let Some((at, order)) = self.order.clone() {
                let mut stale = false;
                for &ji in order.iter() {
                    if candidate(self, ji) && pred(self, ji) {
                        stale |= self.touched[ji] > at;
                        if let Some(q) = self.job(ji).queue {
                            lists[q].push(ji);
                        }
                    }
                }
                if !stale {
                    for l in &mut lists {
                        l.reverse(); // pop from the back
                    }
                    return lists;
                }
                for l in &mut lists {
                    l.clear();
                }
            }
            let mut all: Vec<JobId> = self.job_ids().filter(|&ji| candidate(self, ji)).collect();
            all.sort_by(|&a, &b| self.job_cmp(a, b));
            self.order = Some((self.epoch, std::rc::Rc::new(all)));
        }
    }

    /// The request a queue pick weighs job `ji` by: its pending gang part (or its first
    /// pending pod once at minMember), summed once per [`Engine::epoch`].
    ///
    /// # Complexity
    /// O(1) when cached, else O(P) for P pods of the job.
    pub(super) fn pick_request(&self, ji: JobId) -> Amt {
        if let Some((epoch, req)) = self.pick_req.borrow()[ji]
            && epoch == self.epoch
        {
            return req;
        }
        let (pend, gang) = self.needed_tasks(ji);
        let take: Vec<TaskId> = pend.iter().copied().take(gang.max(1)).collect();
        let req = self.job_req(ji, &take);
        self.pick_req.borrow_mut()[ji] = Some((self.epoch, req));
        req
    }

    /// The next (leaf, job) in hierarchical queue order, as [`Engine::pick`] gives it. The
    /// caller pops the job from its leaf's list before the next call.
    ///
    /// A pick depends only on the queues' allocations (which move only with the
    /// [`Engine::epoch`]) and on each leaf's head job through its [`Engine::pick_request`].
    /// So when the last pick's step committed nothing and the leaf's new head weighs the
    /// same, the pick is that leaf again, without walking the tree: a backlog of alike jobs
    /// that fail costs O(1) picks each. Otherwise, within an epoch, the best of each inner
    /// queue's subtree is kept from the last walk, except on the path of the leaf popped
    /// since, whose subtrees alone are walked again.
    ///
    /// # Complexity
    /// O(1) for a repeated pick; else O(d · s) queue comparisons for a leaf at depth d with
    /// s siblings per level within an epoch, and [`Engine::pick`]'s O(Q) on a new epoch.
    pub(super) fn next_pick(
        &self,
        lists: &PerQueue<Vec<JobId>>,
        last: &mut PickState,
    ) -> Option<(QueueId, JobId)> {
        if !self.shortcuts {
            return self.pick(lists);
        }
        if let Some((leaf, epoch, req)) = last.last
            && epoch == self.epoch
            && let Some(&ji) = lists[leaf].last()
            && self.pick_request(ji) == req
        {
            return Some((leaf, ji));
        }
        if last.epoch != self.epoch || last.best.len() != lists.len() {
            last.epoch = self.epoch;
            last.best = PerQueue::filled(None, lists.len());
        } else if let Some((leaf, _, _)) = last.last {
            // The caller popped that leaf's head: the subtrees on its path changed.
            let mut cur = self.c.hierarchy.queue(leaf).parent;
            while let Some(q) = cur {
                last.best[q] = None;
                cur = self.c.hierarchy.queue(q).parent;
            }
        }
        let p = self.pick_among_kept(self.c.hierarchy.roots(), lists, &mut last.best);
        last.last = p.map(|(leaf, ji)| (leaf, self.epoch, self.pick_request(ji)));
        p
    }

    /// [`Engine::pick_among`], reading and filling `best`: per inner queue, the best
    /// (leaf, job) of its subtree (`Some(None)`: none) at the current epoch.
    fn pick_among_kept(
        &self,
        sibs: &[QueueId],
        lists: &PerQueue<Vec<JobId>>,
        best_of: &mut PerQueue<Option<Option<(QueueId, JobId)>>>,
    ) -> Option<(QueueId, JobId)> {
        let mut best: Option<(QueueId, QueueId, JobId, Amt)> = None;
        for &q in sibs {
            let cand = if self.c.hierarchy.is_leaf(q) {
                lists[q].last().map(|&j| (q, j))
            } else if let Some(kept) = best_of[q] {
                kept
            } else {
                let b = self.pick_among_kept(self.c.hierarchy.children(q), lists, best_of);
                best_of[q] = Some(b);
                b
            };
            let Some((leaf, ji)) = cand else { continue };
            let req = self.pick_request(ji);
            let better = match &best {
                None => true,
                Some((bq, _, _, breq)) => self.queue_cmp(q, req, *bq, *breq) == Ordering::Less,
            };
            if better {
                best = Some((q, leaf, ji, req));
            }
        }
        best.map(|(_, l, j, _)| (l, j))
    }

    /// The best (leaf, job) in hierarchical queue order.
    pub(super) fn pick(&self, lists: &PerQueue<Vec<JobId>>) -> Option<(QueueId, JobId)> {
        self.pick_among(self.c.hierarchy.roots(), lists)
    }

    pub(super) fn pick_among(
        &self,
        sibs: &[QueueId],
        lists: &PerQueue<Vec<JobId>>,
    ) -> Option<(QueueId, JobId)> {
        let mut best: Option<(QueueId, QueueId, JobId, Amt)> = None;
        for &q in sibs {
            let cand = if self.c.hierarchy.is_leaf(q) {
                lists[q].last().map(|&j| (q, j))
            } else {
                self.pick_among(self.c.hierarchy.children(q), lists)
            };
            let Some((leaf, ji)) = cand else { continue };
            let req = self.pick_request(ji);
            let better = match &best {
                None => true,
                Some((bq, _, _, breq)) => self.queue_cmp(q, req, *bq, *breq) == Ordering::Less,
            };
            if better {
                best = Some((q, leaf, ji, req));
            }
        }
        best.map(|(_, l, j, _)| (l, j))
    }

    pub(super) fn victim_job_cmp(&self, a: JobId, b: JobId) -> Ordering {
        let ja = self.job(a);
        let jb = self.job(b);
        ja.priority
            .cmp(&jb.priority)
            .then_with(|| jb.creation.cmp(&ja.creation))
            .then_with(|| jb.uid.cmp(&ja.uid))
            .then_with(|| jb.key.cmp(&ja.key))
    }

    /// Reverse queue order between two victim queues with their simulated allocations
    /// (`Less` = `a` gives up a job first): over-utilized first, then not starved, then lower
    /// priority, then the higher dominant resource share, then the newer queue.
    pub(super) fn victim_order(&self, a: QueueId, aa: Amt, b: QueueId, ab: Amt) -> Ordering {
        let over = |q: QueueId, al: Amt| Resource::ALL.into_iter().all(|r| self.fs[q][r] < al[r]);
        let starved = |q: QueueId, al: Amt| {
            Resource::ALL
                .into_iter()
                .all(|r| unl_le(al[r], self.params(q, r).deserved))
        };
        let qa = &self.c.hierarchy.queue(a);
        let qb = &self.c.hierarchy.queue(b);
        over(b, ab)
            .cmp(&over(a, aa))
            .then_with(|| starved(a, aa).cmp(&starved(b, ab)))
            .then_with(|| qa.priority.cmp(&qb.priority))
            .then_with(|| OrderedFloat(self.drs_of(b, ab)).cmp(&OrderedFloat(self.drs_of(a, aa))))
            .then_with(|| qb.creation.cmp(&qa.creation))
            .then_with(|| qb.name.cmp(&qa.name))
    }

    pub(super) fn drs_of(&self, q: QueueId, al: Amt) -> f64 {
        let mut m = 0.0f64;
        for r in Resource::ALL {
            let v = match self.allocatable(q, r) {
                None => ratio(al[r], self.c.totals[r]),
                Some(0) => al[r] as f64 / SCALE as f64 * 1000.0,
                Some(x) => ratio(al[r], x),
            };
            m = m.max(v);
        }
        m
    }
}
