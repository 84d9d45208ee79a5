//! Node placement: occupying, fitting, placing, releasing and committing tasks (KAI's
//! `pkg/scheduler/actions/common` allocation helpers and the binpack/spread node order).

use super::*;

impl Engine<'_> {
    pub(super) fn node_mut(&mut self, node: Option<usize>) -> &mut NodeState {
        match node {
            Some(n) => &mut self.nodes[n],
            None => &mut self.pool,
        }
    }

    /// Marks a running task's resources as used at session start.
    pub(super) fn occupy(&mut self, t: &crate::snapshot::Task) -> PlaceRec {
        let pool_level = self.c.nodes.is_empty();
        let node = if pool_level { None } else { t.node };
        let fractional = t.fractional;
        let req = if pool_level { t.req } else { dev_req(t) };
        let ns = self.node_mut(node);
        let mut mig = Vec::new();
        if !pool_level {
            for &(p, c) in &t.mig {
                ns.mig[p].0 -= c;
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
        for r in first..3 {
            ns.idle[r] -= req[r];
            rec.take[r] = (req[r], 0);
        }
        if first == 1 && req[0] > 0 {
            if fractional {
                // The device of its GPU group if known; a new group takes the first empty
                // device; otherwise pack onto the most used device that still fits.
                let group = match (node, &t.gpu_group) {
                    (Some(n), Some(g)) => Some((n, g.clone())),
                    _ => None,
                };
                let known = group.as_ref().and_then(|k| self.gpu_groups.get(k).copied());
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
                        if SCALE - d.0 >= req[0] && best.is_none_or(|b| d.0 > ns.devs[b].0) {
                            best = Some(i);
                        }
                    }
                }
                let i = best.unwrap_or(0);
                if let Some(k) = group {
                    self.gpu_groups.insert(k, i);
                }
                ns.devs[i].0 += req[0];
                rec.devs.push((i, req[0], 0));
            } else {
                let mut need = req[0] / SCALE;
                for i in 0..ns.devs.len() {
                    if need == 0 {
                        break;
                    }
                    if ns.devs[i].0 == 0 {
                        ns.devs[i].0 = SCALE;
                        rec.devs.push((i, SCALE, 0));
                        need -= 1;
                    }
                }
                // Overcommitted input: charge the node's idle GPU anyway.
                ns.idle[0] -= need * SCALE;
                rec.take[0] = (need * SCALE, 0);
            }
        }
        rec
    }

    pub(super) fn node_fits(&self, n: usize, req: [i128; 3], fractional: bool) -> Option<bool> {
        let ns = &self.nodes[n];
        let mut now = true;
        for r in 1..3 {
            if req[r] > ns.idle[r] + ns.rel[r] {
                return None;
            }
            now &= req[r] <= ns.idle[r];
        }
        if req[0] > 0 {
            if fractional {
                let fit_future = ns.devs.iter().any(|d| SCALE - d.0 >= req[0]);
                if !fit_future {
                    return None;
                }
                now &= ns.devs.iter().any(|d| SCALE - d.0 - d.1 >= req[0]);
            } else {
                let need = (req[0] / SCALE) as usize;
                let future = ns.devs.iter().filter(|d| d.0 == 0).count();
                if future < need {
                    return None;
                }
                now &= ns.devs.iter().filter(|d| d.0 == 0 && d.1 == 0).count() >= need;
            }
        }
        Some(now)
    }

    pub(super) fn node_idle_gpu(&self, n: usize) -> i128 {
        self.nodes[n].devs.iter().map(|d| SCALE - d.0 - d.1).sum()
    }

    /// Places one task; `None` when nothing fits.
    pub(super) fn place_task(&mut self, ji: usize, ti: usize) -> Option<PlaceRec> {
        let t = &self.c.jobs[ji].tasks[ti];
        let req = if self.c.nodes.is_empty() {
            t.req
        } else {
            dev_req(t)
        };
        if self.c.nodes.is_empty() {
            let p = &mut self.pool;
            let mut rec = PlaceRec::default();
            for r in 0..3 {
                if req[r] > p.idle[r] + p.rel[r] {
                    return None;
                }
            }
            for r in 0..3 {
                let from_idle = req[r].min(p.idle[r].max(0));
                let from_rel = req[r] - from_idle;
                p.idle[r] -= from_idle;
                p.rel[r] -= from_rel;
                rec.take[r] = (from_idle, from_rel);
            }
            return Some(rec);
        }
        let gpu_job = req[0] > 0;
        let mut best: Option<(usize, bool, i128, i128)> = None; // node, now, free, total
        for n in 0..self.nodes.len() {
            if !self.c.nodes[n].admits(t) {
                continue;
            }
            let Some(mut now) = self.node_fits(n, req, t.fractional) else {
                continue;
            };
            let ns = &self.nodes[n];
            if t.mig.iter().any(|&(p, c)| ns.mig[p].0 + ns.mig[p].1 < c) {
                continue;
            }
            now &= t.mig.iter().all(|&(p, c)| ns.mig[p].0 >= c);
            let (free, total) = if gpu_job {
                (self.node_idle_gpu(n), self.c.nodes[n].allocatable[0])
            } else {
                (self.nodes[n].idle[1], self.c.nodes[n].allocatable[1])
            };
            let better = match best {
                None => true,
                Some((_, bnow, bfree, btotal)) => {
                    if now != bnow {
                        now
                    } else {
                        match self.o.placement {
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
        }
        let (n, _, _, _) = best?;
        let fractional = t.fractional;
        let spread = self.o.placement == Placement::Spread;
        let ns = &mut self.nodes[n];
        let mut rec = PlaceRec {
            node: Some(n),
            ..PlaceRec::default()
        };
        for &(p, c) in &t.mig {
            let from_idle = c.min(ns.mig[p].0.max(0));
            let from_rel = c - from_idle;
            ns.mig[p].0 -= from_idle;
            ns.mig[p].1 -= from_rel;
            rec.mig.push((p, from_idle, from_rel));
        }
        for r in 1..3 {
            let from_idle = req[r].min(ns.idle[r].max(0));
            let from_rel = req[r] - from_idle;
            ns.idle[r] -= from_idle;
            ns.rel[r] -= from_rel;
            rec.take[r] = (from_idle, from_rel);
        }
        if req[0] > 0 {
            if fractional {
                let mut pick: Option<usize> = None;
                for (i, d) in ns.devs.iter().enumerate() {
                    if SCALE - d.0 < req[0] {
                        continue;
                    }
                    let now = SCALE - d.0 - d.1 >= req[0];
                    // KAI's gpusharingorder (weight 10,000) outranks availability (1,000): a
                    // GPU already shared by fractions is preferred, even when the room on it
                    // is still being released (pipelined), over an empty GPU.
                    let shared = |d: (i128, i128)| d.0 > 0 || (d.1 > 0 && d.1 < SCALE);
                    let better = match pick {
                        None => true,
                        Some(p) => {
                            let pd = ns.devs[p];
                            let pnow = SCALE - pd.0 - pd.1 >= req[0];
                            if shared(*d) != shared(pd) {
                                shared(*d)
                            } else if now != pnow {
                                now
                            } else if spread {
                                d.0 + d.1 < pd.0 + pd.1
                            } else {
                                d.0 + d.1 > pd.0 + pd.1
                            }
                        }
                    };
                    if better {
                        pick = Some(i);
                    }
                }
                let i = pick?;
                let d = &mut ns.devs[i];
                let from_idle = req[0].min((SCALE - d.0 - d.1).max(0));
                let from_rel = req[0] - from_idle;
                d.0 += req[0];
                d.1 -= from_rel;
                ns.idle[0] -= from_idle;
                ns.rel[0] -= from_rel;
                rec.devs.push((i, from_idle, from_rel));
            } else {
                let mut need = req[0] / SCALE;
                for pass in 0..2 {
                    for i in 0..ns.devs.len() {
                        if need == 0 {
                            break;
                        }
                        let d = ns.devs[i];
                        if d.0 == 0 && ((pass == 0 && d.1 == 0) || (pass == 1 && d.1 > 0)) {
                            let from_rel = d.1;
                            ns.devs[i] = (SCALE, 0);
                            ns.idle[0] -= SCALE - from_rel;
                            ns.rel[0] -= from_rel;
                            rec.devs.push((i, SCALE - from_rel, from_rel));
                            need -= 1;
                        }
                    }
                }
            }
        }
        Some(rec)
    }

    /// Undoes a placement made in this session.
    pub(super) fn unplace(&mut self, rec: &PlaceRec, req: [i128; 3]) {
        let pool_level = self.c.nodes.is_empty();
        let ns = self.node_mut(rec.node);
        let first = if pool_level { 0 } else { 1 };
        for r in first..3 {
            ns.idle[r] += rec.take[r].0;
            ns.rel[r] += rec.take[r].1;
        }
        if !pool_level {
            for &(i, fi, fr) in &rec.devs {
                ns.devs[i].0 -= fi + fr;
                ns.devs[i].1 += fr;
                ns.idle[0] += fi;
                ns.rel[0] += fr;
            }
            ns.idle[0] += rec.take[0].0;
            for &(p, fi, fr) in &rec.mig {
                ns.mig[p].0 += fi;
                ns.mig[p].1 += fr;
            }
        }
        let _ = req;
    }

    /// Turns a running (or placed) task's resources into releasing ones.
    pub(super) fn release(&mut self, ji: usize, ti: usize) {
        let rec = std::mem::take(&mut self.place[ji][ti]);
        let req = self.c.jobs[ji].tasks[ti].req;
        let pool_level = self.c.nodes.is_empty();
        let ns = self.node_mut(rec.node);
        let first = if pool_level { 0 } else { 1 };
        for r in first..3 {
            ns.rel[r] += req[r];
        }
        if !pool_level {
            for &(i, fi, fr) in &rec.devs {
                ns.devs[i].0 -= fi + fr;
                ns.devs[i].1 += fi + fr;
                ns.rel[0] += fi + fr;
            }
            // Overcommitted GPU charged to idle at start comes back as releasing too.
            ns.rel[0] += rec.take[0].0;
            for &(p, fi, fr) in &rec.mig {
                ns.mig[p].1 += fi + fr;
            }
        }
        self.place[ji][ti] = rec;
        self.tstate[ji][ti] = TState::Releasing;
    }

    /// Places `tasks` of `ji` all or nothing; returns the records or `None` (rolled back).
    pub(super) fn place_all(&mut self, ji: usize, tasks: &[usize]) -> Option<Vec<PlaceRec>> {
        let mut recs = Vec::with_capacity(tasks.len());
        for &ti in tasks {
            match self.place_task(ji, ti) {
                Some(r) => recs.push(r),
                None => {
                    for (k, r) in recs.iter().enumerate().rev() {
                        let req = self.c.jobs[ji].tasks[tasks[k]].req;
                        self.unplace(r, req);
                    }
                    return None;
                }
            }
        }
        Some(recs)
    }

    pub(super) fn commit_placed(&mut self, ji: usize, tasks: &[usize], recs: Vec<PlaceRec>) {
        let j = &self.c.jobs[ji];
        let Some(q) = j.queue else { return };
        let mut pods = Vec::new();
        let mut pipelined = false;
        for (&ti, rec) in tasks.iter().zip(recs) {
            let p = rec.pipelined();
            pipelined |= p;
            pods.push((
                j.tasks[ti].key.clone(),
                rec.node.map(|n| self.c.nodes[n].name.clone()),
            ));
            self.account(q, j.tasks[ti].req, !j.preemptible, true);
            self.tstate[ji][ti] = TState::Placed(p);
            self.place[ji][ti] = rec;
        }
        if pods.is_empty() {
            return;
        }
        let qname = self.c.hierarchy.queues()[q].name.clone();
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
    pub(super) fn commit_pipelined(&mut self, ji: usize, tasks: &[usize], recs: Vec<PlaceRec>) {
        self.commit_placed(ji, tasks, recs);
        for &ti in tasks {
            if let TState::Placed(p) = &mut self.tstate[ji][ti] {
                *p = true;
            }
        }
        if let Some(i) = self.alloc_idx[ji] {
            self.allocated[i].pipelined = true;
        }
    }

    pub(super) fn free_capacity(&self) -> [i128; 3] {
        let mut free = [0i128; 3];
        if self.c.nodes.is_empty() {
            for (r, f) in free.iter_mut().enumerate() {
                *f = self.pool.idle[r] + self.pool.rel[r];
            }
        } else {
            for n in &self.nodes {
                for (r, f) in free.iter_mut().enumerate() {
                    *f += n.idle[r] + n.rel[r];
                }
            }
        }
        free
    }
}
