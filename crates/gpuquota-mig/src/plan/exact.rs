//! The exact solvers: the per-GPU dynamic programme (exact in `(W, R, F)` within the budget)
//! and the class branch and bound (exact in `(W, R)`). `branch` is longer than the usual
//! limit (~170 lines) because it builds the phase's LP and runs the search loop with its
//! rounding heuristics in one place: splitting the loop from the LP it branches on would pass
//! the LP's variable handles around for no gain in clarity.

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

/// Branch-and-bound nodes per phase of the class solver before it gives up (and the plan
/// falls back to the heuristic with a certified bound).
const NODE_LIMIT: u64 = 2_000;

/// Work limit per phase: nodes × LP columns (one LP re-solve per node costs about its
/// columns), so large LPs get fewer nodes: 2,000 nodes up to 200 columns, 263 at 1,520.
const NODE_WORK: u64 = 400_000;

/// Absolute tolerance on LP values (they are integers in exact arithmetic).
const EPS: f64 = 1e-6;

/// The class ILP: per movable class `c` and supply option `o`, how many of the class's GPUs
/// take `o`.
struct ClassIlp {
    /// Groups of movable classes (more than one supply option) with identical option lists,
    /// in class order: the LP has one set of variables per group.
    movable: Vec<Vec<usize>>,
    /// Supply of the classes that cannot move.
    fixed: Vec<u64>,
    /// The demand indices this programme serves (a connected component of groups and
    /// demand, or all of them), ascending.
    qs: Vec<usize>,
}

/// A step of the residual programme: `R` added so far, the previous state, the option taken.
type Step = (u64, Vec<u64>, usize);

/// An open B&B node (ordered by the heap's other fields only).
struct Node(microlp::Solution);

impl PartialEq for Node {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for Node {}
impl PartialOrd for Node {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Node {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

/// One B&B phase: maximise `W`, or minimise `R` at `W ≥ W*`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    MaxW,
    MinR(u64),
}

impl<'p, 'c> Prepared<'p, 'c> {
    /// The exact lexicographic optimum `(W, R)` over classes: per class, integer counts of
    /// GPUs per supply option. Returns the per-GPU choice and whether it is proven optimal
    /// (`false` when a phase hit its node limit, [`NODE_LIMIT`] or [`NODE_WORK`] / columns;
    /// the choice is then the best found).
    ///
    /// # Complexity
    /// Per connected component of groups and demand, two phases; per B&B node one LP
    /// re-solve (dual simplex from the parent's basis) over the component's
    /// Σ_c |options_c| + Q variables and C + Q rows; at most min([`NODE_LIMIT`],
    /// [`NODE_WORK`] / columns) nodes per phase (at least 50).
    pub(crate) fn class_exact(&self) -> Option<(Vec<usize>, bool)> {
        let nq = self.demand.len();
        // f64 carries weights and counts exactly below 2^50; beyond that the heuristic runs.
        let total: u128 = self
            .demand
            .iter()
            .zip(&self.weight)
            .map(|(d, w)| u128::from(*d) * u128::from(*w))
            .sum();
        if total > 1 << 50 || self.weight.iter().any(|w| *w > 1 << 20) {
            return None;
        }
        let mut by_opts: BTreeMap<Vec<(&[u32], u32)>, usize> = BTreeMap::new();
        let mut movable: Vec<Vec<usize>> = Vec::new();
        for (c, class) in self.classes.iter().enumerate() {
            if class.supply_opts.len() < 2 {
                continue;
            }
            let key: Vec<(&[u32], u32)> = class
                .supply_opts
                .iter()
                .map(|o| (o.s.as_slice(), o.r))
                .collect();
            match by_opts.get(&key) {
                Some(&k) => movable[k].push(c),
                None => {
                    by_opts.insert(key, movable.len());
                    movable.push(vec![c]);
                }
            }
        }
        let mut fixed = vec![0u64; nq];
        for c in &self.classes {
            if c.supply_opts.len() < 2 {
                for (q, x) in c.supply_opts[0].s.iter().enumerate() {
                    fixed[q] += u64::from(*x) * c.gpus.len() as u64;
                }
            }
        }
        let all = ClassIlp {
            movable,
            fixed,
            qs: (0..nq).collect(),
        };
        // Incumbent from the heuristic: local search from the current layouts.
        let start = self.greedy_choice();
        let mut counts = self.counts_of(&all, &start);
        // Groups that share no demand are independent programmes: W and R add up over them,
        // so the lexicographic optimum is the optimum of each, and each gets its own bounds
        // (the sum of rounded bounds is stronger than the rounded sum).
        let mut proven = true;
        for (groups, qs) in self.components(&all) {
            let sub = ClassIlp {
                movable: groups.iter().map(|&g| all.movable[g].clone()).collect(),
                fixed: all.fixed.clone(),
                qs,
            };
            let start: Vec<Vec<u32>> = groups.iter().map(|&g| counts[g].clone()).collect();
            let solved = self
                .branch(&sub, Phase::MaxW, start)
                .and_then(|(w, c1, p1)| {
                    self.branch(&sub, Phase::MinR(w), c1)
                        .map(|(_, c2, p2)| (c2, p1 && p2))
                });
            match solved {
                Some((c, p)) => {
                    for (k, &g) in groups.iter().enumerate() {
                        counts[g] = c[k].clone();
                    }
                    proven &= p;
                }
                None => proven = false,
            }
        }
        Some((self.choice_of(&all, &counts), proven))
    }

    /// Connected components of movable groups and the demand their options supply, ordered
    /// by their first group: (group indices, demand indices). Demand no group supplies is in
    /// none (its served amount is fixed).
    ///
    /// # Complexity
    /// O(Σ_groups |options| · Q · α) with a union-find.
    fn components(&self, ilp: &ClassIlp) -> Vec<(Vec<usize>, Vec<usize>)> {
        let ng = ilp.movable.len();
        let nq = self.demand.len();
        // Union-find over groups (0..ng) and demand (ng..ng + nq).
        let mut parent: Vec<usize> = (0..ng + nq).collect();
        fn root(parent: &mut [usize], mut x: usize) -> usize {
            while parent[x] != x {
                parent[x] = parent[parent[x]];
                x = parent[x];
            }
            x
        }
        for (g, group) in ilp.movable.iter().enumerate() {
            for o in &self.classes[group[0]].supply_opts {
                for (q, &x) in o.s.iter().enumerate() {
                    if x > 0 {
                        let (a, b) = (root(&mut parent, g), root(&mut parent, ng + q));
                        // The smaller index becomes the root: deterministic.
                        parent[a.max(b)] = a.min(b);
                    }
                }
            }
        }
        let mut out: Vec<(Vec<usize>, Vec<usize>)> = Vec::new();
        let mut slot: BTreeMap<usize, usize> = BTreeMap::new();
        for g in 0..ng {
            let r = root(&mut parent, g);
            let k = *slot.entry(r).or_insert_with(|| {
                out.push((Vec::new(), Vec::new()));
                out.len() - 1
            });
            out[k].0.push(g);
        }
        for q in 0..nq {
            let r = root(&mut parent, ng + q);
            if let Some(&k) = slot.get(&r) {
                out[k].1.push(q);
            }
        }
        out
    }

    /// Counts per movable group and option of a per-GPU choice.
    fn counts_of(&self, ilp: &ClassIlp, choice: &[usize]) -> Vec<Vec<u32>> {
        ilp.movable
            .iter()
            .map(|group| {
                let mut n = vec![0u32; self.classes[group[0]].supply_opts.len()];
                for &c in group {
                    for &g in &self.classes[c].gpus {
                        n[choice[g]] += 1;
                    }
                }
                n
            })
            .collect()
    }

    /// GPUs of a group: its classes in order, each class's GPUs in input order.
    fn group_gpus<'a>(&'a self, group: &'a [usize]) -> impl Iterator<Item = usize> + 'a {
        group
            .iter()
            .flat_map(move |&c| self.classes[c].gpus.iter().copied())
    }

    /// A per-GPU choice with the given counts: the k-th GPU of a group takes the options in
    /// option order.
    fn choice_of(&self, ilp: &ClassIlp, counts: &[Vec<u32>]) -> Vec<usize> {
        let mut choice = vec![0usize; self.class_of.len()];
        for (group, n) in ilp.movable.iter().zip(counts) {
            let mut gpus = self.group_gpus(group);
            for (o, &k) in n.iter().enumerate() {
                for g in gpus.by_ref().take(k as usize) {
                    choice[g] = o;
                }
            }
        }
        choice
    }

    /// Exact `(W, R)` of counts.
    fn score(&self, ilp: &ClassIlp, counts: &[Vec<u32>]) -> (u64, u64) {
        let mut s = ilp.fixed.clone();
        let mut r = 0u64;
        for (group, n) in ilp.movable.iter().zip(counts) {
            for (o, &k) in self.classes[group[0]].supply_opts.iter().zip(n) {
                r += u64::from(o.r) * u64::from(k);
                for (q, x) in o.s.iter().enumerate() {
                    s[q] += u64::from(*x) * u64::from(k);
                }
            }
        }
        let w = ilp
            .qs
            .iter()
            .map(|&q| s[q].min(u64::from(self.demand[q])) * self.weight[q])
            .sum();
        (w, r)
    }

    /// Residual rounding: the GPUs the rounded-down counts leave over (`residual[g]` per group,
    /// counted at option 0 in `down`) take their options by an exact dynamic programme on
    /// the supply capped at demand (max `W`, then min `R`). `None` when the programme would
    /// exceed 200,000 state steps.
    fn residual(
        &self,
        ilp: &ClassIlp,
        down: &[Vec<u32>],
        residual: &[u32],
    ) -> Option<Vec<Vec<u32>>> {
        let mut base = down.to_vec();
        let mut gpus: Vec<usize> = Vec::new();
        for (g, &r) in residual.iter().enumerate() {
            base[g][0] -= r;
            gpus.extend(std::iter::repeat_n(g, r as usize));
        }
        if gpus.is_empty() {
            return None;
        }
        let mut s0 = ilp.fixed.clone();
        for (group, n) in ilp.movable.iter().zip(&base) {
            for (o, &k) in self.classes[group[0]].supply_opts.iter().zip(n) {
                for (q, x) in o.s.iter().enumerate() {
                    s0[q] += u64::from(*x) * u64::from(k);
                }
            }
        }
        let qs = &ilp.qs;
        let cap: Vec<u64> = qs.iter().map(|&q| u64::from(self.demand[q])).collect();
        let start: Vec<u64> = qs.iter().zip(&cap).map(|(&q, d)| s0[q].min(*d)).collect();
        // layers[i]: state -> (R added, previous state, option of GPU i).
        let mut layers: Vec<BTreeMap<Vec<u64>, Step>> = Vec::new();
        let mut frontier: BTreeMap<Vec<u64>, u64> = BTreeMap::new();
        frontier.insert(start, 0);
        let mut work = 0usize;
        for &g in &gpus {
            let opts = &self.classes[ilp.movable[g][0]].supply_opts;
            let mut next: BTreeMap<Vec<u64>, Step> = BTreeMap::new();
            for (s, &r) in &frontier {
                for (oi, o) in opts.iter().enumerate() {
                    work += 1;
                    if work > 200_000 {
                        return None;
                    }
                    let t: Vec<u64> = qs
                        .iter()
                        .enumerate()
                        .map(|(k, &q)| (s[k] + u64::from(o.s[q])).min(cap[k]))
                        .collect();
                    let cost = r + u64::from(o.r);
                    let better = next.get(&t).is_none_or(|(c, _, _)| cost < *c);
                    if better {
                        next.insert(t, (cost, s.clone(), oi));
                    }
                }
            }
            frontier = next.iter().map(|(k, v)| (k.clone(), v.0)).collect();
            layers.push(next);
        }
        let w_of = |s: &[u64]| -> u64 { s.iter().zip(qs).map(|(x, &q)| x * self.weight[q]).sum() };
        let (mut state, _) = frontier
            .iter()
            .map(|(s, r)| (s.clone(), (w_of(s), std::cmp::Reverse(*r))))
            .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))?;
        for (i, &g) in gpus.iter().enumerate().rev() {
            let (_, prev, oi) = layers[i].get(&state)?.clone();
            base[g][oi] += 1;
            state = prev;
        }
        Some(base)
    }

    /// Depth-first branch and bound of one phase from an incumbent; returns the best `W`, the
    /// best counts and whether the search finished (the optimum is proven).
    fn branch(
        &self,
        ilp: &ClassIlp,
        phase: Phase,
        incumbent: Vec<Vec<u32>>,
    ) -> Option<(u64, Vec<Vec<u32>>, bool)> {
        use microlp::{ComparisonOp, OptimizationDirection, Problem};
        let dir = match phase {
            Phase::MaxW => OptimizationDirection::Maximize,
            Phase::MinR(_) => OptimizationDirection::Minimize,
        };
        let mut lp = Problem::new(dir);
        let mut vars = Vec::with_capacity(ilp.movable.len());
        for group in &ilp.movable {
            let class = &self.classes[group[0]];
            let n = self.group_gpus(group).count() as f64;
            let v: Vec<microlp::Variable> = class
                .supply_opts
                .iter()
                .map(|o| {
                    let cost = match phase {
                        Phase::MaxW => 0.0,
                        Phase::MinR(_) => f64::from(o.r),
                    };
                    lp.add_var(cost, (0.0, n))
                })
                .collect();
            lp.add_constraint(v.iter().map(|&x| (x, 1.0)), ComparisonOp::Eq, n);
            vars.push(v);
        }
        let z: Vec<microlp::Variable> = ilp
            .qs
            .iter()
            .map(|&q| {
                let gain = match phase {
                    Phase::MaxW => self.weight[q] as f64,
                    Phase::MinR(_) => 0.0,
                };
                lp.add_var(gain, (0.0, f64::from(self.demand[q])))
            })
            .collect();
        for (&q, &zq) in ilp.qs.iter().zip(&z) {
            let mut row = vec![(zq, 1.0)];
            for (group, v) in ilp.movable.iter().zip(&vars) {
                for (o, &x) in self.classes[group[0]].supply_opts.iter().zip(v) {
                    if o.s[q] > 0 {
                        row.push((x, -f64::from(o.s[q])));
                    }
                }
            }
            lp.add_constraint(row, ComparisonOp::Le, ilp.fixed[q] as f64);
        }
        if let Phase::MinR(w) = phase {
            let row: Vec<_> = ilp
                .qs
                .iter()
                .zip(&z)
                .map(|(&q, &zq)| (zq, self.weight[q] as f64))
                .collect();
            lp.add_constraint(row, ComparisonOp::Ge, w as f64 - 0.5);
        }
        // Incumbent value: W to maximise, or R to minimise (as i128 "higher is better").
        let key = |(w, r): (u64, u64)| -> Option<i128> {
            match phase {
                Phase::MaxW => Some(i128::from(w)),
                Phase::MinR(w_star) => (w >= w_star).then(|| -i128::from(r)),
            }
        };
        let mut best_counts = incumbent;
        let mut best = key(self.score(ilp, &best_counts))?;
        // The node's bound, rounded to the integer it certifies ("higher is better").
        let bound_of = |sol: &microlp::Solution| -> i128 {
            let obj = sol.objective();
            let tol = EPS * (1.0 + obj.abs());
            match phase {
                Phase::MaxW => (obj + tol).floor() as i128,
                Phase::MinR(_) => -((obj - tol).ceil() as i128),
            }
        };
        let root = lp.solve().ok()?.into_solution().ok()?;
        // Best-first: the open node with the highest bound next (ties: the newest), so the
        // search stops as soon as no open node can beat the incumbent.
        let mut open: std::collections::BinaryHeap<(i128, u64, Node)> =
            std::collections::BinaryHeap::new();
        let mut seq = 0u64;
        open.push((bound_of(&root), seq, Node(root)));
        let columns: u64 = vars.iter().map(|v| v.len() as u64).sum::<u64>() + ilp.qs.len() as u64;
        let limit = (NODE_WORK / columns.max(1)).clamp(50, NODE_LIMIT);
        let mut nodes = 0u64;
        let mut finished = true;
        while let Some((bound, _, Node(sol))) = open.pop() {
            if bound <= best {
                break;
            }
            nodes += 1;
            if nodes > limit {
                finished = false;
                break;
            }
            // Rounding heuristic: counts rounded down, the rest at the current layout, then
            // the local search.
            let mut frac: Option<(f64, microlp::Variable, f64)> = None;
            let mut down: Vec<Vec<u32>> = Vec::with_capacity(vars.len());
            let mut residual: Vec<u32> = Vec::with_capacity(vars.len());
            for (group, v) in ilp.movable.iter().zip(&vars) {
                let n = self.group_gpus(group).count() as u32;
                let mut k: Vec<u32> = v
                    .iter()
                    .map(|&x| {
                        let val = sol.var_value(x);
                        let r = val.round();
                        if (val - r).abs() > EPS {
                            let dist = (val - val.floor() - 0.5).abs();
                            if frac.is_none_or(|(d, _, _)| dist < d) {
                                frac = Some((dist, x, val));
                            }
                            val.floor().max(0.0) as u32
                        } else {
                            r.max(0.0) as u32
                        }
                    })
                    .collect();
                let used: u32 = k.iter().sum();
                if used > n {
                    // Rounding noise: trust the current layout less than the LP.
                    let mut over = used - n;
                    for x in k.iter_mut().rev() {
                        let cut = over.min(*x);
                        *x -= cut;
                        over -= cut;
                    }
                    residual.push(0);
                } else {
                    residual.push(n - used);
                    k[0] += n - used;
                }
                down.push(k);
            }
            let integral = frac.is_none();
            let candidates = if integral || nodes % 16 != 1 {
                vec![down]
            } else {
                let polished = self.counts_of(ilp, &self.local_search(self.choice_of(ilp, &down)));
                let mut v = vec![down.clone(), polished];
                if let Some(r) = self.residual(ilp, &down, &residual) {
                    v.push(r);
                }
                v
            };
            for cand in candidates {
                if let Some(k) = key(self.score(ilp, &cand))
                    && k > best
                {
                    best = k;
                    best_counts = cand;
                }
            }
            let Some((_, x, val)) = frac else {
                continue;
            };
            if bound <= best {
                continue;
            }
            // Branch on the served amount `z_q` of a demand when one is fractional (integral
            // in every integer solution: `min(demand, supply)`), else on an option count.
            // The LP bound is weak exactly where `W*` is reached with a fractional share of
            // some demand; splitting that demand's served amount closes the gap where
            // single option counts, interchangeable across many options, do not.
            let mut split: Option<(f64, microlp::Variable, f64)> = None;
            for &zq in &z {
                let v = sol.var_value(zq);
                if (v - v.round()).abs() > EPS {
                    let dist = (v - v.floor() - 0.5).abs();
                    if split.is_none_or(|(d, _, _)| dist < d) {
                        split = Some((dist, zq, v));
                    }
                }
            }
            let (_, x, val) = split.unwrap_or((0.0, x, val));
            let (lo, hi) = (val.floor(), val.ceil());
            let up = sol.clone().add_constraint([(x, 1.0)], ComparisonOp::Ge, hi);
            let dn = sol.add_constraint([(x, 1.0)], ComparisonOp::Le, lo);
            for child in [dn, up] {
                if let Ok(outcome) = child
                    && let Ok(s) = outcome.into_solution()
                {
                    seq += 1;
                    let b = bound_of(&s);
                    if b > best {
                        open.push((b, seq, Node(s)));
                    }
                }
            }
        }
        let (w, _) = self.score(ilp, &best_counts);
        Some((w, best_counts, finished))
    }
}
