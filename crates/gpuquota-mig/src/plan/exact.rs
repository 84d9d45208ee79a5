//! The per-GPU dynamic programme: exact in `(W, R, F)` within the budget (the class branch
//! and bound is in `class`).

use std::collections::BTreeMap;

use super::prepare::*;
use super::*;

impl<'p, 'c> Prepared<'p, 'c> {
    /// The exact dynamic programme, or `None` when it would exceed the budget.
    pub(crate) fn exact(&self, budget: u64) -> Option<Plan> {
        let caps = self.caps();
        let mut states: u64 = 1;
        let mut stride = Vec::with_capacity(caps.len());
        for c in &caps {
            stride.push(states);
            states = states.checked_mul(u64::from(*c) + 1)?;
        }
        let g = self.class_of.len() as u64;
        if states.checked_mul(g.max(1))? > budget.min(MAX_TABLE) {
            return None;
        }
        // Exact options per class; the work check uses their real number.
        let mut work: u64 = 0;
        let mut class_opts = Vec::with_capacity(self.classes.len());
        for c in &self.classes {
            let opts = self.exact_options(c, &caps);
            if opts.len() >= usize::from(u16::MAX) {
                return None;
            }
            work =
                work.checked_add(states.checked_mul(opts.len() as u64 * c.gpus.len() as u64)?)?;
            if work > budget {
                return None;
            }
            class_opts.push(opts);
        }
        let states = usize::try_from(states).ok()?;
        let nq = caps.len();
        let mut prev = vec![u64::MAX; states];
        prev[0] = 0;
        let mut next = vec![u64::MAX; states];
        let mut choices: Vec<Vec<u16>> = Vec::with_capacity(self.class_of.len());
        let mut digits = vec![0u32; nq];
        for &ci in &self.class_of {
            let opts = &class_opts[ci];
            let offsets: Vec<usize> = opts
                .iter()
                .map(|o| {
                    o.a.iter()
                        .zip(&stride)
                        .map(|(a, s)| *a as usize * *s as usize)
                        .sum()
                })
                .collect();
            next.fill(u64::MAX);
            let mut choice = vec![u16::MAX; states];
            digits.fill(0);
            for (s, &base) in prev.iter().enumerate() {
                if base != u64::MAX {
                    for (oi, o) in opts.iter().enumerate() {
                        if o.a
                            .iter()
                            .zip(&digits)
                            .zip(&caps)
                            .any(|((a, d), c)| a + d > *c)
                        {
                            continue;
                        }
                        let t = s + offsets[oi];
                        let cost = base + o.cost;
                        if cost < next[t] {
                            next[t] = cost;
                            choice[t] = oi as u16;
                        }
                    }
                }
                // Odometer increment of the digits of `s`.
                for q in 0..nq {
                    digits[q] += 1;
                    if digits[q] <= caps[q] {
                        break;
                    }
                    digits[q] = 0;
                }
            }
            std::mem::swap(&mut prev, &mut next);
            choices.push(choice);
        }
        // Best final state: max W, then min cost, then lowest index.
        let mut best: Option<(u64, u64, usize)> = None;
        digits.fill(0);
        for (s, &cost) in prev.iter().enumerate() {
            if cost != u64::MAX {
                let w: u64 = digits
                    .iter()
                    .zip(&self.weight)
                    .map(|(d, w)| u64::from(*d) * w)
                    .sum();
                if best.is_none_or(|(bw, bc, _)| w > bw || (w == bw && cost < bc)) {
                    best = Some((w, cost, s));
                }
            }
            for q in 0..nq {
                digits[q] += 1;
                if digits[q] <= caps[q] {
                    break;
                }
                digits[q] = 0;
            }
        }
        let (_, _, mut s) = best?;
        let mut picks = vec![(0usize, 0u16, 0u32); self.class_of.len()];
        for g in (0..self.class_of.len()).rev() {
            let oi = usize::from(choices[g][s]);
            let o = class_opts[self.class_of[g]].get(oi)?;
            picks[g] = (o.cand, o.subset, (o.cost & 0xFFFF_FFFF) as u32);
            let off: usize =
                o.a.iter()
                    .zip(&stride)
                    .map(|(a, st)| *a as usize * *st as usize)
                    .sum();
            s -= off;
        }
        Some(self.assemble(&picks, true, None))
    }

    pub(crate) fn exact_options(&self, class: &Class<'_>, caps: &[u32]) -> Vec<ExactOpt> {
        let mut by_a: BTreeMap<Vec<u32>, usize> = BTreeMap::new();
        let mut out: Vec<ExactOpt> = Vec::new();
        // Instances of the layout of each option's candidate (the tie-break).
        let mut inst: Vec<usize> = Vec::new();
        for (k, cand) in class.cands().enumerate() {
            let cand_inst = self.instances_of(class, &cand);
            let n = cand.servable.len();
            for mask in 0..(1u32 << n) {
                let mut a = vec![0u32; caps.len()];
                let mut over = false;
                for (bit, (_, q)) in cand.servable.iter().enumerate() {
                    if mask & (1 << bit) != 0 {
                        a[*q] += 1;
                        over |= a[*q] > caps[*q];
                    }
                }
                if over {
                    continue;
                }
                let f = self.frag(class, &cand, mask as u16);
                let cost = (u64::from(cand.r) << 32) | u64::from(f);
                match by_a.get(&a) {
                    Some(&i) => {
                        if (cost, cand_inst) < (out[i].cost, inst[i]) {
                            inst[i] = cand_inst;
                            out[i] = ExactOpt {
                                a,
                                cost,
                                cand: k,
                                subset: mask as u16,
                            };
                        }
                    }
                    None => {
                        by_a.insert(a.clone(), out.len());
                        inst.push(cand_inst);
                        out.push(ExactOpt {
                            a,
                            cost,
                            cand: k,
                            subset: mask as u16,
                        });
                    }
                }
            }
        }
        out
    }
}
