//! Node placement: occupying, fitting, placing, releasing and committing tasks (KAI's
//! `pkg/scheduler/actions/common` allocation helpers and the binpack/spread node order).

use super::*;

impl Engine<'_> {
    pub(super) fn node_mut(&mut self, node: Option<NodeId>) -> &mut NodeState {
        self.touch(node);
        match node {
            Some(n) => &mut self.nodes[n],
            None => &mut self.pool,
        }
    }

    /// Starts a probe: until [`Engine::end_probe`], every node (or the pool) is copied
    /// before its first change, so the probe's changes can be undone. Probes nest.
    ///
    /// # Complexity
    /// O(1); each node a probe touches costs one copy (O(G + M) for G devices and M MIG
    /// profiles), instead of a copy of every node per probe.
    pub(super) fn begin_probe(&mut self) {
        self.probe.depth += 1;
        self.probe.starts.push(self.probe.log.len());
    }

    /// Undoes every node change since the matching [`Engine::begin_probe`].
    pub(super) fn end_probe(&mut self) {
        let start = self.probe.starts.pop().unwrap_or(0);
        while self.probe.log.len() > start {
            let Some((slot, prev, copy)) = self.probe.log.pop() else {
                break;
            };
            self.probe.saved_at[slot] = prev;
            if slot == self.nodes.len() {
                self.pool = copy;
            } else {
                self.fit.changed(NodeId::new(slot), self.nodes.len());
                self.nodes[NodeId::new(slot)] = copy;
            }
        }
        self.probe.depth = self.probe.depth.saturating_sub(1);
    }

    /// Records `node` (`None`: the pool) before a change, inside a probe.
    fn touch(&mut self, node: Option<NodeId>) {
        if let Some(n) = node {
            self.fit.changed(n, self.nodes.len());
        }
        let depth = self.probe.depth;
        if depth == 0 {
            return;
        }
        let slot = node.map_or(self.nodes.len(), NodeId::index);
        if self.probe.saved_at.len() <= self.nodes.len() {
            self.probe.saved_at = vec![0; self.nodes.len() + 1];
        }
        let prev = self.probe.saved_at[slot];
        if prev < depth {
            let copy = match node {
                Some(n) => self.nodes[n].clone(),
                None => self.pool.clone(),
            };
            self.probe.log.push((slot, prev, copy));
            self.probe.saved_at[slot] = depth;
        }
    }

    /// Marks a running task's resources as used at session start.
    pub(super) fn occupy(&mut self, t: &crate::snapshot::Task) -> PlaceRec {
        let of = self.overflow;
        let pool_level = self.c.nodes.is_empty();
        let node = if pool_level { None } else { t.node };
        let fractional = t.fractional;
        let req = if pool_level { t.req } else { dev_req(t) };
        let ns = self.node_mut(node);
        let mut mig = Vec::new();
        if !pool_level {
            for &(p, c) in &t.mig {
                dec64(&mut ns.mig[p].0, c, of);
                mig.push((p, c, 0));
            }
        }
        let mut rec = PlaceRec {
            node,
            mig,
            ..PlaceRec::default()
        };
        let first = if pool_level || ns.devs.is_empty() {
            0
        } else {
            1
        };
        for &r in &Resource::ALL[first..] {
            dec(&mut ns.idle[r], req[r], of);
            rec.take[r] = (req[r], 0);
        }
        if first == 1 && req[GPU] > 0 {
            if fractional {
                // The device of its GPU group if known; a new group takes the first empty
                // device; otherwise pack onto the most used device that still fits.
                let group = match (node, &t.gpu_group) {
                    (Some(n), Some(g)) => Some((n, g.clone())),
                    _ => None,
                };
                let known = group.as_ref().and_then(|k| self.gpu_groups.get(k).copied());
                // Session open only: no probe is running, so no copy is needed.
                let ns = match node {
                    Some(n) => &mut self.nodes[n],
                    None => &mut self.pool,
                };
                let mut best: Option<usize> = known;
                if best.is_none() && group.is_some() {
                    best = ns.devs.iter().position(|d| d.0 == 0);
                }
                if best.is_none() {
                    for (i, d) in ns.devs.iter().enumerate() {
                        if minus(SCALE, d.0, of) >= req[GPU]
                            && best.is_none_or(|b| d.0 > ns.devs[b].0)
                        {
                            best = Some(i);
                        }
                    }
                }
                let i = best.unwrap_or(0);
                if let Some(k) = group {
                    self.gpu_groups.insert(k, i);
                }
                inc(&mut ns.devs[i].0, req[GPU], of);
                rec.devs.push((i, req[GPU], 0));
            } else {
                let mut need = req[GPU] / SCALE;
                for i in 0..ns.devs.len() {
                    if need == 0 {
                        break;
                    }
                    if ns.devs[i].0 == 0 {
                        ns.devs[i].0 = SCALE;
                        rec.devs.push((i, SCALE, 0));
                        need = minus(need, 1, of);
                    }
                }
                // Overcommitted input: charge the node's idle GPU anyway.
                let charged = times(need, SCALE, of);
                dec(&mut ns.idle[GPU], charged, of);
                rec.take[GPU] = (charged, 0);
                if need > 0 {
                    // Which pod holds the charge depends on the order pods are read in.
                    self.keepable = false;
                }
            }
        }
        rec
    }

    pub(super) fn node_fits(&self, n: NodeId, req: Amt, fractional: bool) -> Option<bool> {
        let of = self.overflow;
        let ns = &self.nodes[n];
        let mut now = true;
        for &r in &Resource::ALL[1..] {
            if req[r] > plus(ns.idle[r], ns.rel[r], of) {
                return None;
            }
            now &= req[r] <= ns.idle[r];
        }
        if req[GPU] > 0 {
            if fractional {
                let fit_future = ns.devs.iter().any(|d| minus(SCALE, d.0, of) >= req[GPU]);
                if !fit_future {
                    return None;
                }
                now &= ns
                    .devs
                    .iter()
                    .any(|d| minus(minus(SCALE, d.0, of), d.1, of) >= req[GPU]);
            } else {
                // A count beyond the address space needs more devices than any node has.
                let need = usize::try_from(req[GPU] / SCALE).unwrap_or(usize::MAX);
                let future = ns.devs.iter().filter(|d| d.0 == 0).count();
                if future < need {
                    return None;
                }
                now &= ns.devs.iter().filter(|d| d.0 == 0 && d.1 == 0).count() >= need;
            }
        }
        Some(now)
    }

    pub(super) fn node_idle_gpu(&self, n: NodeId) -> i128 {
        let of = self.overflow;
        self.nodes[n]
            .devs
            .iter()
            .fold(0, |s, d| plus(s, minus(minus(SCALE, d.0, of), d.1, of), of))
    }

    /// Places one task; `None` when nothing fits.
    ///
    /// # Complexity
    /// O(N + K · G) for N nodes of G devices, where K is the number of nodes the pod passed
    /// the feasibility test on at its last search plus the nodes changed since
    /// ([`fit::FitIndex`]; N stamp comparisons, K nodes scored); a first search scores
    /// every node.
    pub(super) fn place_task(&mut self, ji: JobId, ti: TaskId) -> Option<PlaceRec> {
        let t = self.task(ji, ti);
        if self.c.nodes.is_empty() {
            return self.place_in_pool(t.req);
        }
        let req = dev_req(t);
        let n = self.best_node((ji, ti), t, req)?;
        self.take_on_node(n, (ji, ti), req)
    }

    /// Places a task's request on the pool (quota level, no nodes).
    ///
    /// # Complexity
    /// O(1).
    fn place_in_pool(&mut self, req: Amt) -> Option<PlaceRec> {
        let of = self.overflow;
        self.touch(None);
        let p = &mut self.pool;
        let mut rec = PlaceRec::default();
        for r in Resource::ALL {
            if req[r] > plus(p.idle[r], p.rel[r], of) {
                return None;
            }
        }
        for r in Resource::ALL {
            let from_idle = req[r].min(p.idle[r].max(0));
            let from_rel = minus(req[r], from_idle, of);
            dec(&mut p.idle[r], from_idle, of);
            dec(&mut p.rel[r], from_rel, of);
            rec.take[r] = (from_idle, from_rel);
        }
        Some(rec)
    }

    /// The node a task goes to: among the nodes that admit it and will have room, those
    /// with room now first, then the fullest (binpack) or the emptiest relative to its size
    /// (spread) in the resource that places it (GPUs for a GPU task, else CPU); ties go to
    /// the first node.
    ///
    /// Only the nodes that passed the feasibility test at the pod's last search, or changed
    /// since, are tested ([`fit::FitIndex`]): every other node failed it and still does, so
    /// the full scan would skip it too, and the nodes are visited in the same order.
    ///
    /// # Complexity
    /// O(N + K · G) for N nodes, K of them scored (at most N), of G devices.
    fn best_node(
        &mut self,
        pod: (JobId, TaskId),
        t: &crate::snapshot::Task,
        req: Amt,
    ) -> Option<NodeId> {
        let nodes = self.nodes.len();
        // Without the shortcuts (the test that checks they change no decision) every node
        // is tested.
        let list = if self.shortcuts {
            self.fit.candidates(pod, nodes)
        } else {
            None
        };
        let mut ok = Vec::new();
        let mut best: Option<(NodeId, bool, i128, i128)> = None; // node, now, free, total
        let mut visit = |e: &Self, n: NodeId| {
            let Some((now, free, total)) = e.node_score(n, t, req) else {
                return;
            };
            ok.push(n);
            let better = match best {
                None => true,
                Some((_, bnow, bfree, btotal)) => {
                    if now != bnow {
                        now
                    } else {
                        match e.o.placement {
                            Placement::Binpack => free < bfree,
                            Placement::Spread => {
                                cmp_products(
                                    free.max(0) as u128,
                                    btotal.max(0) as u128,
                                    bfree.max(0) as u128,
                                    total.max(0) as u128,
                                ) == Ordering::Greater
                            }
                        }
                    }
                }
            };
            if better {
                best = Some((n, now, free, total));
            }
        };
        match list {
            Some(l) => l.into_iter().for_each(|n| visit(self, n)),
            None => self.nodes.ids().for_each(|n| visit(self, n)),
        }
        self.fit.record(pod, ok);
        best.map(|b| b.0)
    }

    /// Whether node `n` passes a task's feasibility test (it admits the task and will have
    /// room for it), and if so whether it has room now and its free and total amount of the
    /// resource that places the task (GPUs for a GPU task, else CPU).
    ///
    /// # Complexity
    /// O(G + M) for G devices and M MIG profiles requested.
    pub(super) fn node_score(
        &self,
        n: NodeId,
        t: &crate::snapshot::Task,
        req: Amt,
    ) -> Option<(bool, i128, i128)> {
        let of = self.overflow;
        let ns = &self.nodes[n];
        let info = node_info(self.c, n);
        if !info.admits(t) {
            return None;
        }
        let mut now = self.node_fits(n, req, t.fractional)?;
        if t.mig
            .iter()
            .any(|&(p, c)| plus64(ns.mig[p].0, ns.mig[p].1, of) < c)
        {
            return None;
        }
        now &= t.mig.iter().all(|&(p, c)| ns.mig[p].0 >= c);
        let (free, total) = if req[GPU] > 0 {
            (self.node_idle_gpu(n), info.allocatable[GPU])
        } else {
            (ns.idle[Resource::Cpu], info.allocatable[Resource::Cpu])
        };
        Some((now, free, total))
    }

    /// Takes a task's request on node `n`: MIG instances, CPU and memory from idle first,
    /// then from what is being released; whole GPUs on free devices (idle ones first),
    /// a fraction on the device KAI's GPU-sharing order prefers. `None` when no device takes
    /// the fraction.
    ///
    /// # Complexity
    /// O(G + M) for G devices and M MIG profiles.
    fn take_on_node(&mut self, n: NodeId, pod: (JobId, TaskId), req: Amt) -> Option<PlaceRec> {
        let of = self.overflow;
        let t = self.task(pod.0, pod.1);
        let fractional = t.fractional;
        let spread = self.o.placement == Placement::Spread;
        self.touch(Some(n));
        let ns = &mut self.nodes[n];
        let mut rec = PlaceRec {
            node: Some(n),
            ..PlaceRec::default()
        };
        for &(p, c) in &t.mig {
            let from_idle = c.min(ns.mig[p].0.max(0));
            let from_rel = minus64(c, from_idle, of);
            dec64(&mut ns.mig[p].0, from_idle, of);
            dec64(&mut ns.mig[p].1, from_rel, of);
            rec.mig.push((p, from_idle, from_rel));
        }
        for &r in &Resource::ALL[1..] {
            let from_idle = req[r].min(ns.idle[r].max(0));
            let from_rel = minus(req[r], from_idle, of);
            dec(&mut ns.idle[r], from_idle, of);
            dec(&mut ns.rel[r], from_rel, of);
            rec.take[r] = (from_idle, from_rel);
        }
        if req[GPU] > 0 {
            if fractional {
                // Which device a fraction packs onto is not kept ([`Kept`]).
                self.keepable = false;
                let ns = &mut self.nodes[n];
                let mut pick: Option<usize> = None;
                for (i, d) in ns.devs.iter().enumerate() {
                    if minus(SCALE, d.0, of) < req[GPU] {
                        continue;
                    }
                    let now = minus(minus(SCALE, d.0, of), d.1, of) >= req[GPU];
                    // KAI's gpusharingorder (weight 10,000) outranks availability (1,000): a
                    // GPU already shared by fractions is preferred, even when the room on it
                    // is still being released (pipelined), over an empty GPU.
                    let shared = |d: (i128, i128)| d.0 > 0 || (d.1 > 0 && d.1 < SCALE);
                    let better = match pick {
                        None => true,
                        Some(p) => {
                            let pd = ns.devs[p];
                            let pnow = minus(minus(SCALE, pd.0, of), pd.1, of) >= req[GPU];
                            if shared(*d) != shared(pd) {
                                shared(*d)
                            } else if now != pnow {
                                now
                            } else if spread {
                                plus(d.0, d.1, of) < plus(pd.0, pd.1, of)
                            } else {
                                plus(d.0, d.1, of) > plus(pd.0, pd.1, of)
                            }
                        }
                    };
                    if better {
                        pick = Some(i);
                    }
                }
                let i = pick?;
                let d = &mut ns.devs[i];
                let from_idle = req[GPU].min(minus(minus(SCALE, d.0, of), d.1, of).max(0));
                let from_rel = minus(req[GPU], from_idle, of);
                inc(&mut d.0, req[GPU], of);
                dec(&mut d.1, from_rel, of);
                dec(&mut ns.idle[GPU], from_idle, of);
                dec(&mut ns.rel[GPU], from_rel, of);
                rec.devs.push((i, from_idle, from_rel));
            } else {
                let mut need = req[GPU] / SCALE;
                for pass in 0..2 {
                    for i in 0..ns.devs.len() {
                        if need == 0 {
                            break;
                        }
                        let d = ns.devs[i];
                        if d.0 == 0 && ((pass == 0 && d.1 == 0) || (pass == 1 && d.1 > 0)) {
                            let from_rel = d.1;
                            ns.devs[i] = (SCALE, 0);
                            let from_idle = minus(SCALE, from_rel, of);
                            dec(&mut ns.idle[GPU], from_idle, of);
                            dec(&mut ns.rel[GPU], from_rel, of);
                            rec.devs.push((i, from_idle, from_rel));
                            need = minus(need, 1, of);
                        }
                    }
                }
            }
        }
        Some(rec)
    }

    /// Undoes a placement made in this session.
    pub(super) fn unplace(&mut self, rec: &PlaceRec, req: Amt) {
        let of = self.overflow;
        let pool_level = self.c.nodes.is_empty();
        let ns = self.node_mut(rec.node);
        let first = if pool_level { 0 } else { 1 };
        for &r in &Resource::ALL[first..] {
            inc(&mut ns.idle[r], rec.take[r].0, of);
            inc(&mut ns.rel[r], rec.take[r].1, of);
        }
        if !pool_level {
            for &(i, fi, fr) in &rec.devs {
                dec(&mut ns.devs[i].0, plus(fi, fr, of), of);
                inc(&mut ns.devs[i].1, fr, of);
                inc(&mut ns.idle[GPU], fi, of);
                inc(&mut ns.rel[GPU], fr, of);
            }
            inc(&mut ns.idle[GPU], rec.take[GPU].0, of);
            for &(p, fi, fr) in &rec.mig {
                inc64(&mut ns.mig[p].0, fi, of);
                inc64(&mut ns.mig[p].1, fr, of);
            }
        }
        let _ = req;
    }

    /// Turns a running (or placed) task's resources into releasing ones.
    pub(super) fn release(&mut self, ji: JobId, ti: TaskId) {
        let of = self.overflow;
        let rec = std::mem::take(&mut self.place[(ji, ti)]);
        let req = self.task(ji, ti).req;
        let pool_level = self.c.nodes.is_empty();
        let ns = self.node_mut(rec.node);
        let first = if pool_level { 0 } else { 1 };
        for &r in &Resource::ALL[first..] {
            inc(&mut ns.rel[r], req[r], of);
        }
        if !pool_level {
            for &(i, fi, fr) in &rec.devs {
                let held = plus(fi, fr, of);
                dec(&mut ns.devs[i].0, held, of);
                inc(&mut ns.devs[i].1, held, of);
                inc(&mut ns.rel[GPU], held, of);
            }
            // Overcommitted GPU charged to idle at start comes back as releasing too.
            inc(&mut ns.rel[GPU], rec.take[GPU].0, of);
            for &(p, fi, fr) in &rec.mig {
                inc64(&mut ns.mig[p].1, plus64(fi, fr, of), of);
            }
        }
        self.place[(ji, ti)] = rec;
        self.tstate[(ji, ti)] = TState::Releasing;
    }

    /// Places `tasks` of `ji` all or nothing; returns the records or `None` (rolled back).
    pub(super) fn place_all(&mut self, ji: JobId, tasks: &[TaskId]) -> Option<Vec<PlaceRec>> {
        let mut recs = Vec::with_capacity(tasks.len());
        for &ti in tasks {
            match self.place_task(ji, ti) {
                Some(r) => recs.push(r),
                None => {
                    for (k, r) in recs.iter().enumerate().rev() {
                        let req = self.task(ji, tasks[k]).req;
                        self.unplace(r, req);
                    }
                    return None;
                }
            }
        }
        Some(recs)
    }

    pub(super) fn commit_placed(&mut self, ji: JobId, tasks: &[TaskId], recs: Vec<PlaceRec>) {
        self.epoch += 1;
        self.touched[ji] = self.epoch;
        let j = self.job(ji);
        let Some(q) = j.queue else {
            return;
        };
        let mut pods = Vec::new();
        let mut pipelined = false;
        for (&ti, rec) in tasks.iter().zip(recs) {
            let p = rec.pipelined();
            pipelined |= p;
            let t = task_of(j, ti);
            pods.push((
                t.key.clone(),
                rec.node.map(|n| node_info(self.c, n).name.clone()),
            ));
            self.account(q, t.req, !j.preemptible, true);
            self.tstate[(ji, ti)] = TState::Placed(p);
            self.place[(ji, ti)] = rec;
        }
        if pods.is_empty() {
            return;
        }
        let qname = self.c.hierarchy.queue(q).name.clone();
        if let Some(i) = self.alloc_idx[ji] {
            let a = &mut self.allocated[i];
            a.pipelined |= pipelined;
            a.pods.extend(pods);
        } else {
            self.alloc_idx[ji] = Some(self.allocated.len());
            self.allocated.push(Allocation {
                pod_group: j.key.clone(),
                queue: qname,
                pipelined,
                pods,
            });
        }
    }

    /// Commits a placement found by a victim-evicting action (reclaim, preempt,
    /// consolidation): KAI's job solver allocates the preemptor pipeline-only
    /// (`AllocateJob(…, isPipelineOnly=true)`), so it is reported pipelined even where it
    /// landed on idle resources.
    pub(super) fn commit_pipelined(&mut self, ji: JobId, tasks: &[TaskId], recs: Vec<PlaceRec>) {
        self.commit_placed(ji, tasks, recs);
        for &ti in tasks {
            if let TState::Placed(p) = &mut self.tstate[(ji, ti)] {
                *p = true;
            }
        }
        if let Some(i) = self.alloc_idx[ji] {
            self.allocated[i].pipelined = true;
        }
    }

    pub(super) fn free_capacity(&self) -> Amt {
        let of = self.overflow;
        let mut free = Amt::ZERO;
        if self.c.nodes.is_empty() {
            inc_all(&mut free, &self.pool.idle, of);
            inc_all(&mut free, &self.pool.rel, of);
        } else {
            for n in &self.nodes {
                inc_all(&mut free, &n.idle, of);
                inc_all(&mut free, &n.rel, of);
            }
        }
        free
    }
}
