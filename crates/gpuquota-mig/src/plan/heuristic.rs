//! The greedy local search and the LP-guided heuristic.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::prepare::*;
use super::*;
use crate::layout::Instance;

impl<'p, 'c> Prepared<'p, 'c> {
    /// The weighted value of the greedy packing alone: which layout (supply vector) each GPU
    /// gets, without realising placements or minimising fragmentation.
    ///
    /// # Complexity
    /// O(G · Q) per pass plus one option scan per class and supply state change.
    #[cfg(any(test, feature = "testkit"))]
    pub(crate) fn greedy_value(&self) -> u64 {
        self.value_of(&self.greedy_choice())
    }

    /// The greedy plan (no bound computed).
    ///
    /// # Complexity
    /// The local search, then per distinct (class, assignment) one scan of the matching
    /// candidates and their subsets (at most 2ⁿ, n ≤ 7).
    #[cfg(any(test, feature = "testkit"))]
    pub(crate) fn greedy(&self) -> Plan {
        let choice = self.greedy_choice();
        self.finish_greedy(&choice, false, None)
    }

    /// The configuration LP over groups of interchangeable GPUs (same model and busy set),
    /// rounded down and completed by the local search. Returns the choice and the LP's supply
    /// duals as multipliers over 2¹⁶ for the bound.
    pub(crate) fn lp_choice(&self) -> (Vec<usize>, Option<Vec<i128>>) {
        const MAX_GROUPS: usize = 40;
        let nq = self.demand.len();
        let gcount = self.class_of.len();
        let mut init = vec![0usize; gcount];
        // Groups of movable classes.
        let mut keys: BTreeMap<(u16, Vec<Instance>), Vec<usize>> = BTreeMap::new();
        for (ci, c) in self.classes.iter().enumerate() {
            if c.supply_opts.len() >= 2 {
                keys.entry((c.model.index().0, c.busy.clone()))
                    .or_default()
                    .push(ci);
            }
        }
        let mut groups: Vec<Vec<usize>> = keys.into_values().collect();
        let size =
            |g: &Vec<usize>| -> usize { g.iter().map(|&c| self.classes[c].gpus.len()).sum() };
        groups.sort_by_key(|g| std::cmp::Reverse(size(g)));
        groups.truncate(MAX_GROUPS);
        if groups.is_empty() || nq == 0 {
            return (self.local_search(init), None);
        }
        let mut in_lp = vec![false; self.classes.len()];
        for g in &groups {
            for &c in g {
                in_lp[c] = true;
            }
        }
        let mut fixed = vec![0f64; nq];
        for (g, &c) in self.class_of.iter().enumerate() {
            if !in_lp[c] {
                for (q, x) in self.classes[c].supply_opts[init[g]].s.iter().enumerate() {
                    fixed[q] += f64::from(*x);
                }
            }
        }
        // Patterns per group: the union of member options, Pareto-pruned.
        let mut patterns: Vec<Vec<Vec<u32>>> = Vec::with_capacity(groups.len());
        for g in &groups {
            let mut set: std::collections::BTreeSet<Vec<u32>> = std::collections::BTreeSet::new();
            for &c in g {
                for o in &self.classes[c].supply_opts {
                    set.insert(o.s.clone());
                }
            }
            let all: Vec<Vec<u32>> = set.into_iter().collect();
            let kept: Vec<Vec<u32>> = all
                .iter()
                .filter(|a| {
                    !all.iter()
                        .any(|b| b != *a && b.iter().zip(a.iter()).all(|(x, y)| x >= y))
                })
                .cloned()
                .collect();
            patterns.push(kept);
        }
        let nvars: usize = patterns.iter().map(Vec::len).sum::<usize>() + nq;
        let mut a: Vec<Vec<f64>> = Vec::new();
        let mut b: Vec<f64> = Vec::new();
        let mut col = 0usize;
        for (gi, g) in groups.iter().enumerate() {
            let mut row = vec![0f64; nvars];
            for k in 0..patterns[gi].len() {
                row[col + k] = 1.0;
            }
            col += patterns[gi].len();
            a.push(row);
            b.push(size(g) as f64);
        }
        let zcol = col;
        for q in 0..nq {
            let mut row = vec![0f64; nvars];
            let mut c0 = 0usize;
            for pats in &patterns {
                for (k, pat) in pats.iter().enumerate() {
                    row[c0 + k] = -f64::from(pat[q]);
                }
                c0 += pats.len();
            }
            row[zcol + q] = 1.0;
            a.push(row);
            b.push(fixed[q]);
        }
        for q in 0..nq {
            let mut row = vec![0f64; nvars];
            row[zcol + q] = 1.0;
            a.push(row);
            b.push(f64::from(self.demand[q]));
        }
        let mut cvec = vec![0f64; nvars];
        for q in 0..nq {
            cvec[zcol + q] = self.weight[q] as f64;
        }
        let Some((x, y)) = crate::lp::maximize(&a, &b, &cvec) else {
            return (self.local_search(init), None);
        };
        let k = 65536f64;
        let mu: Vec<i128> = (0..nq)
            .map(|q| {
                let v = (y[groups.len() + q] * k).round();
                (v as i128).clamp(0, i128::from(self.weight[q]) * 65536)
            })
            .collect();
        // Round down and hand the patterns to GPUs, current layouts first (no reconfiguration).
        let mut c0 = 0usize;
        for (gi, g) in groups.iter().enumerate() {
            let pats = &patterns[gi];
            let mut left: Vec<u64> = (0..pats.len())
                .map(|k| (x[c0 + k] + 1e-7).floor().max(0.0) as u64)
                .collect();
            c0 += pats.len();
            let members: Vec<usize> = g
                .iter()
                .flat_map(|&c| self.classes[c].gpus.iter().copied())
                .collect();
            let mut done = vec![false; members.len()];
            for (mi, &gpu) in members.iter().enumerate() {
                let class = &self.classes[self.class_of[gpu]];
                if let Some(k) = pats.iter().position(|p| *p == class.supply_opts[0].s)
                    && left[k] > 0
                {
                    left[k] -= 1;
                    done[mi] = true;
                }
            }
            let mut k = 0usize;
            for (mi, &gpu) in members.iter().enumerate() {
                if done[mi] {
                    continue;
                }
                while k < pats.len() && left[k] == 0 {
                    k += 1;
                }
                if k == pats.len() {
                    break;
                }
                left[k] -= 1;
                init[gpu] = self.match_opt(self.class_of[gpu], &pats[k]);
            }
        }
        (self.local_search(init), Some(mu))
    }

    /// The class's option serving at least `s`, fewest reconfigurations first.
    pub(crate) fn match_opt(&self, ci: usize, s: &[u32]) -> usize {
        let opts = &self.classes[ci].supply_opts;
        let covers = |o: &SupplyOpt| o.s.iter().zip(s).all(|(a, b)| a >= b);
        opts.iter()
            .enumerate()
            .filter(|(_, o)| covers(o))
            .min_by_key(|(i, o)| (o.r, o.s != s, *i))
            .map_or(0, |(i, _)| i)
    }

    /// Local search: start from the current layouts; move a GPU to the option with the largest
    /// gain in `W` (ties: fewer reconfigurations, then option order) until nothing improves.
    pub(crate) fn greedy_choice(&self) -> Vec<usize> {
        self.local_search(vec![0usize; self.class_of.len()])
    }

    pub(crate) fn local_search(&self, mut choice: Vec<usize>) -> Vec<usize> {
        let nq = self.demand.len();
        let mut supply = vec![0i64; nq];
        for (g, &c) in self.class_of.iter().enumerate() {
            for (q, x) in self.classes[c].supply_opts[choice[g]].s.iter().enumerate() {
                supply[q] += i64::from(*x);
            }
        }
        let demand: Vec<i64> = self.demand.iter().map(|&d| i64::from(d)).collect();
        let weight: Vec<i64> = self
            .weight
            .iter()
            .map(|&w| i64::try_from(w).unwrap_or(i64::MAX / 4))
            .collect();
        let gain = |supply: &[i64], from: &SupplyOpt, to: &SupplyOpt| -> i64 {
            let mut gain = 0i64;
            for q in 0..nq {
                let delta = i64::from(to.s[q]) - i64::from(from.s[q]);
                if delta != 0 {
                    let before = supply[q].min(demand[q]);
                    let after = (supply[q] + delta).min(demand[q]);
                    gain = gain.saturating_add(weight[q].saturating_mul(after - before));
                }
            }
            gain
        };
        // `version` counts moves; a scan of (class, option) at an unchanged version is reused,
        // and the last target of a class is tried before a full scan (identical GPUs).
        let mut version = 1u64;
        let mut scanned: Vec<Vec<u64>> = self
            .classes
            .iter()
            .map(|c| vec![0u64; c.supply_opts.len()])
            .collect();
        let mut hint: Vec<Option<usize>> = vec![None; self.classes.len()];
        for _pass in 0..16 {
            let mut moved = false;
            for &g in &self.order {
                let c = self.class_of[g];
                let opts = &self.classes[c].supply_opts;
                if opts.len() < 2 {
                    continue;
                }
                let cur_i = choice[g];
                if scanned[c][cur_i] == version {
                    continue;
                }
                let cur = &opts[cur_i];
                let mut target = None;
                if let Some(h) = hint[c].filter(|&h| h != cur_i) {
                    let x = gain(&supply, cur, &opts[h]);
                    if x > 0 || (x == 0 && opts[h].r < cur.r) {
                        target = Some(h);
                    }
                }
                if target.is_none() {
                    let (mut best, mut best_gain, mut best_r) = (cur_i, 0i64, cur.r);
                    for (oi, o) in opts.iter().enumerate() {
                        let x = gain(&supply, cur, o);
                        if x > best_gain || (x == best_gain && o.r < best_r) {
                            best = oi;
                            best_gain = x;
                            best_r = o.r;
                        }
                    }
                    if best == cur_i {
                        scanned[c][cur_i] = version;
                    } else {
                        target = Some(best);
                        hint[c] = Some(best);
                    }
                }
                if let Some(t) = target {
                    let new = &opts[t];
                    for ((sq, n), o) in supply.iter_mut().zip(&new.s).zip(&cur.s) {
                        *sq += i64::from(*n) - i64::from(*o);
                    }
                    choice[g] = t;
                    version += 1;
                    moved = true;
                }
            }
            if !moved {
                break;
            }
        }
        choice
    }

    pub(crate) fn finish_greedy(
        &self,
        choice: &[usize],
        optimal: bool,
        bound: Option<u64>,
    ) -> Plan {
        // Assign demand GPU by GPU in class order (never input order, so that `F` does not
        // depend on how the GPUs are listed), then pick the least fragmented realisation.
        let mut remaining = self.demand.clone();
        let mut picks = vec![(0usize, 0u16, 0u32); choice.len()];
        let mut cache: BTreeMap<RealiseKey, (usize, u16, u32)> = BTreeMap::new();
        for &g in &self.order {
            let o = choice[g];
            let ci = self.class_of[g];
            let opt = &self.classes[ci].supply_opts[o];
            let a: Vec<u32> = opt
                .s
                .iter()
                .zip(remaining.iter_mut())
                .map(|(s, r)| {
                    let take = (*s).min(*r);
                    *r -= take;
                    take
                })
                .collect();
            let key = (ci, opt.s.clone(), a.clone(), opt.r);
            let pick = match cache.get(&key) {
                Some(p) => *p,
                None => {
                    let p = self.realise(ci, &opt.s, &a, opt.r);
                    cache.insert(key, p);
                    p
                }
            };
            picks[g] = pick;
        }
        self.assemble(&picks, optimal, bound)
    }

    /// Among the class's candidates with supply `s` (capped) and cost `r`, the candidate and
    /// subset realising exactly `a` with the least fragmentation.
    pub(crate) fn realise(&self, ci: usize, s: &[u32], a: &[u32], r: u32) -> (usize, u16, u32) {
        let class = &self.classes[ci];
        // (F, instances of the layout, candidate, subset).
        let mut best: Option<(u32, usize, usize, u16)> = None;
        let capped_is = |cand: &Cand| {
            cand.supply
                .iter()
                .zip(&self.demand)
                .map(|(x, d)| (*x).min(*d))
                .eq(s.iter().copied())
        };
        let shared = class.shared.iter().flat_map(|v| {
            v.by_supply
                .get(s)
                .into_iter()
                .flatten()
                .map(|&j| (class.own_len() + j, Cow::Borrowed(&v.cands[j])))
        });
        // Class-specific candidates are built only when their supply (read from the model's
        // table) matches.
        let own = (0..class.own.len())
            .filter(|&j| class.own_supply_is(j, s, &self.demand))
            .map(|j| (j + 1, class.cand(j + 1)));
        let candidates: Vec<(usize, Cow<'_, Cand>)> = if r == 0 {
            vec![(0, Cow::Borrowed(&class.cand0))]
        } else {
            own.chain(shared).collect()
        };
        for (k, cand) in candidates {
            if cand.r != r || !capped_is(&cand) {
                continue;
            }
            let n = cand.servable.len();
            let inst = self.instances_of(class, &cand);
            for mask in 0..(1u32 << n) {
                let mut cnt = vec![0u32; a.len()];
                for (bit, (_, q)) in cand.servable.iter().enumerate() {
                    if mask & (1 << bit) != 0 {
                        cnt[*q] += 1;
                    }
                }
                if cnt != a {
                    continue;
                }
                let f = self.frag(class, &cand, mask as u16);
                // Ties: the layout with fewer instances (nothing cut that nobody asked for).
                let better = best.is_none_or(|(bf, bi, _, _)| (f, inst) < (bf, bi));
                if better {
                    best = Some((f, inst, k, mask as u16));
                }
            }
        }
        match best {
            Some((f, _, k, m)) => (k, m, f),
            None => (0, 0, self.frag(class, &class.cand0, 0)),
        }
    }
}
