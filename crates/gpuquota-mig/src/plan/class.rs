//! The class branch and bound, exact in `(W, R)`: integer counts of GPUs per column of a
//! block (a group of classes with identical option lists, or on large components a family of
//! classes that share their layout options), two lexicographic phases per connected
//! component, each a best-first search over LP bounds. One function per step: the LP of a
//! phase ([`Prepared::phase_lp`]), the rounding of a node ([`Prepared::round_node`]) with its
//! heuristics ([`Prepared::node_candidates`]), the branching variable ([`branch_on`]) and the
//! search loop ([`Prepared::branch`]).

use std::collections::{BTreeMap, BinaryHeap};

use microlp::{ComparisonOp, OptimizationDirection, Problem, Solution, Variable};

use super::prepare::*;

/// Branch-and-bound nodes per phase of the class solver before it gives up (and the plan
/// falls back to the heuristic with a certified bound).
const NODE_LIMIT: u64 = 2_000;

/// Work limit per phase: nodes × LP columns (one LP re-solve per node costs about its
/// columns), so large LPs get fewer nodes: 2,000 nodes up to 200 columns, 263 at 1,520.
const NODE_WORK: u64 = 400_000;

/// Absolute tolerance on LP values (they are integers in exact arithmetic).
const EPS: f64 = 1e-6;

/// A component whose group LP has more columns than this is solved over families instead
/// (fewer columns; below it the group LP is small and its search unchanged).
const FAMILY_COLUMNS: usize = 400;

/// A column of a block: how many of the block's GPUs take supply `s` at cost `r` each.
struct Col {
    s: Vec<u32>,
    r: u32,
    /// At most this many GPUs: the block's, or for a stay column its members'.
    ub: u32,
    /// A stay column (current layouts with supply `s`): only the GPUs of these members
    /// (indices into [`Block::classes`]) may take it.
    only: Option<Vec<usize>>,
}

/// GPUs that share columns; the counts of its columns sum to its GPUs.
///
/// A **group** block is a set of classes with identical option lists: one column per option.
/// A **family** block is a set of classes whose layout options have the same maximal
/// supplies (each of them is one of every member's options): one stay column per distinct
/// current supply (cost 0, for the members that have it) and one move column per maximal
/// supply (cost 1). Any GPU of the family can realise any move column with an option of its
/// own class of at least that supply and at most that cost, and every option of a class is
/// covered by a move column or its stay column at no higher cost, so the family programme
/// has the same optimum `(W, R)` as the per-class one.
struct Block {
    classes: Vec<usize>,
    cols: Vec<Col>,
    /// Per member, per column: the member class's option that realises the column (`None`:
    /// a stay column of other members).
    map: Vec<Vec<Option<usize>>>,
    /// Per member, per class option: the column that stands for it.
    back: Vec<Vec<usize>>,
    /// GPUs of the block.
    n: u32,
}

/// The class ILP of one component (or of all movable classes).
struct ClassIlp {
    blocks: Vec<Block>,
    /// Supply of the classes that cannot move.
    fixed: Vec<u64>,
    /// The demand indices this programme serves (a connected component of groups and
    /// demand, or all of them), ascending.
    qs: Vec<usize>,
}

/// Column counts per block.
type Counts = Vec<Vec<u32>>;

/// A step of the residual programme: `R` added so far, the previous state, the column taken.
type Step = (u64, Vec<u64>, usize);

/// An open B&B node (ordered by the heap's other fields only).
struct Node(Solution);

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

impl Phase {
    /// An incumbent's value, "higher is better": `W` to maximise, or `-R` at `W ≥ W*`.
    fn key(self, (w, r): (u64, u64)) -> Option<i128> {
        match self {
            Phase::MaxW => Some(i128::from(w)),
            Phase::MinR(w_star) => (w >= w_star).then(|| -i128::from(r)),
        }
    }

    /// The node's LP bound, rounded to the integer it certifies ("higher is better").
    fn bound(self, sol: &Solution) -> i128 {
        let obj = sol.objective();
        let tol = EPS * (1.0 + obj.abs());
        match self {
            Phase::MaxW => (obj + tol).floor() as i128,
            Phase::MinR(_) => -((obj - tol).ceil() as i128),
        }
    }
}

/// The LP of a phase: per block its column variables, then the served amounts `z`.
struct PhaseLp {
    vars: Vec<Vec<Variable>>,
    z: Vec<Variable>,
    root: Solution,
}

/// A node's counts rounded down and completed: the counts, the GPUs left over per (block,
/// stay column) for the residual programme, and the most fractional column variable.
struct Rounded {
    down: Counts,
    residual: Vec<(usize, usize, u32)>,
    frac: Option<(f64, Variable, f64)>,
}

/// The fractional served amount closest to one half, else the given column variable: the
/// branching variable and its value. `z_q` is `min(demand, supply)`, an integer in some
/// optimal integer solution, and splitting it closes the bound where `W*` is reached with a
/// fractional share of some demand, which single column counts (interchangeable across many
/// columns) do not.
fn branch_on(sol: &Solution, z: &[Variable], frac: (Variable, f64)) -> (Variable, f64) {
    let mut split: Option<(f64, Variable, f64)> = None;
    for &zq in z {
        let v = sol.var_value(zq);
        if (v - v.round()).abs() > EPS {
            let dist = (v - v.floor() - 0.5).abs();
            if split.is_none_or(|(d, _, _)| dist < d) {
                split = Some((dist, zq, v));
            }
        }
    }
    split.map_or(frac, |(_, x, v)| (x, v))
}

impl<'p, 'c> Prepared<'p, 'c> {
    /// The exact lexicographic optimum `(W, R)` over classes: per block, integer counts of
    /// GPUs per column. Returns the per-GPU choice and whether it is proven optimal (`false`
    /// when a phase hit its node limit, [`NODE_LIMIT`] or [`NODE_WORK`] / columns; the
    /// choice is then the best found).
    ///
    /// # Complexity
    /// Per connected component of groups and demand, two phases; per B&B node one LP
    /// re-solve (dual simplex from the parent's basis) over the component's columns
    /// (Σ_groups |options| + Q, or on components above [`FAMILY_COLUMNS`] Σ_families
    /// (|maximal supplies| + |distinct current supplies|) + Q) and blocks + Q rows; at most
    /// min([`NODE_LIMIT`], [`NODE_WORK`] / columns) nodes per phase (at least 50). Building
    /// the families is O(C · k² · Q) for k options per class.
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
        let groups = self.groups();
        let mut fixed = vec![0u64; nq];
        for c in &self.classes {
            if c.supply_opts.len() < 2 {
                for (q, x) in c.supply_opts[0].s.iter().enumerate() {
                    fixed[q] += u64::from(*x) * c.gpus.len() as u64;
                }
            }
        }
        // Incumbent from the heuristic: local search from the current layouts.
        let mut choice = self.greedy_choice();
        // Groups that share no demand are independent programmes: W and R add up over them,
        // so the lexicographic optimum is the optimum of each, and each gets its own bounds
        // (the sum of rounded bounds is stronger than the rounded sum).
        let mut proven = true;
        for (members, qs) in self.components(&groups) {
            let columns: usize = members
                .iter()
                .map(|&g| self.classes[groups[g][0]].supply_opts.len())
                .sum();
            let blocks = if columns > FAMILY_COLUMNS {
                self.families(members.iter().flat_map(|&g| groups[g].iter().copied()))
            } else {
                members
                    .iter()
                    .map(|&g| self.group_block(&groups[g]))
                    .collect()
            };
            let sub = ClassIlp {
                blocks,
                fixed: fixed.clone(),
                qs,
            };
            let start = self.counts_of(&sub, &choice);
            let solved = self
                .branch(&sub, Phase::MaxW, start.clone())
                .and_then(|(w, c1, p1)| {
                    self.branch(&sub, Phase::MinR(w), c1)
                        .map(|(_, c2, p2)| (c2, p1 && p2))
                });
            let counts = match solved {
                Some((c, p)) => {
                    proven &= p;
                    c
                }
                None => {
                    proven = false;
                    start
                }
            };
            self.write_choice(&sub, &counts, &mut choice);
        }
        Some((choice, proven))
    }

    /// Movable classes (more than one supply option) with identical option lists, in class
    /// order.
    ///
    /// # Complexity
    /// O(C · k · Q · log C) for k options per class.
    fn groups(&self) -> Vec<Vec<usize>> {
        let mut by_opts: BTreeMap<Vec<(&[u32], u32)>, usize> = BTreeMap::new();
        let mut groups: Vec<Vec<usize>> = Vec::new();
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
                Some(&k) => groups[k].push(c),
                None => {
                    by_opts.insert(key, groups.len());
                    groups.push(vec![c]);
                }
            }
        }
        groups
    }

    /// The block of a group: one column per option of its (identical) option lists.
    fn group_block(&self, group: &[usize]) -> Block {
        let opts = &self.classes[group[0]].supply_opts;
        let n: u32 = group
            .iter()
            .map(|&c| self.classes[c].gpus.len() as u32)
            .sum();
        let identity: Vec<usize> = (0..opts.len()).collect();
        Block {
            classes: group.to_vec(),
            cols: opts
                .iter()
                .map(|o| Col {
                    s: o.s.clone(),
                    r: o.r,
                    ub: n,
                    only: None,
                })
                .collect(),
            map: group
                .iter()
                .map(|_| identity.iter().map(|&o| Some(o)).collect())
                .collect(),
            back: group.iter().map(|_| identity.clone()).collect(),
            n,
        }
    }

    /// Family blocks of the given classes: classes with the same maximal option supplies form
    /// one family, in order of their first class.
    ///
    /// # Complexity
    /// O(C · k² · Q) for k options per class.
    fn families(&self, classes: impl Iterator<Item = usize>) -> Vec<Block> {
        let mut by_moves: BTreeMap<Vec<Vec<u32>>, usize> = BTreeMap::new();
        let mut members: Vec<(Vec<Vec<u32>>, Vec<usize>)> = Vec::new();
        let mut sorted: Vec<usize> = classes.collect();
        sorted.sort_unstable();
        for c in sorted {
            let opts = &self.classes[c].supply_opts;
            let mut moves: Vec<Vec<u32>> = opts
                .iter()
                .filter(|a| {
                    !opts
                        .iter()
                        .any(|b| b.s != a.s && b.s.iter().zip(&a.s).all(|(x, y)| x >= y))
                })
                .map(|o| o.s.clone())
                .collect();
            moves.sort_unstable();
            moves.dedup();
            match by_moves.get(&moves) {
                Some(&k) => members[k].1.push(c),
                None => {
                    by_moves.insert(moves.clone(), members.len());
                    members.push((moves, vec![c]));
                }
            }
        }
        members
            .into_iter()
            .map(|(moves, classes)| self.family_block(moves, classes))
            .collect()
    }

    /// The block of one family: stay columns per distinct current supply (first-seen order),
    /// then the move columns.
    fn family_block(&self, moves: Vec<Vec<u32>>, classes: Vec<usize>) -> Block {
        let mut cols: Vec<Col> = Vec::new();
        let mut stay_of: Vec<usize> = Vec::with_capacity(classes.len());
        for (m, &c) in classes.iter().enumerate() {
            let class = &self.classes[c];
            let s0 = &class.supply_opts[0].s;
            let n = class.gpus.len() as u32;
            match cols.iter().position(|col| col.s == *s0) {
                Some(j) => {
                    cols[j].ub += n;
                    if let Some(only) = cols[j].only.as_mut() {
                        only.push(m);
                    }
                    stay_of.push(j);
                }
                None => {
                    stay_of.push(cols.len());
                    cols.push(Col {
                        s: s0.clone(),
                        r: 0,
                        ub: n,
                        only: Some(vec![m]),
                    });
                }
            }
        }
        let n: u32 = cols.iter().map(|c| c.ub).sum();
        let stays = cols.len();
        cols.extend(moves.into_iter().map(|s| Col {
            s,
            r: 1,
            ub: n,
            only: None,
        }));
        let covers = |a: &[u32], b: &[u32]| a.iter().zip(b).all(|(x, y)| x >= y);
        let mut map = Vec::with_capacity(classes.len());
        let mut back = Vec::with_capacity(classes.len());
        for (m, &c) in classes.iter().enumerate() {
            let opts = &self.classes[c].supply_opts;
            map.push(
                cols.iter()
                    .enumerate()
                    .map(|(j, col)| match &col.only {
                        Some(_) if j == stay_of[m] => Some(0),
                        Some(_) => None,
                        None => Some(self.match_opt(c, &col.s)),
                    })
                    .collect(),
            );
            back.push(
                opts.iter()
                    .enumerate()
                    .map(|(o, opt)| {
                        if o == 0 {
                            return stay_of[m];
                        }
                        let moves = stays..cols.len();
                        moves
                            .clone()
                            .find(|&j| cols[j].s == opt.s)
                            .or_else(|| moves.clone().find(|&j| covers(&cols[j].s, &opt.s)))
                            .unwrap_or(stay_of[m])
                    })
                    .collect(),
            );
        }
        Block {
            classes,
            cols,
            map,
            back,
            n,
        }
    }

    /// Connected components of groups and the demand their options supply, ordered by their
    /// first group: (group indices, demand indices). Demand no group supplies is in none (its
    /// served amount is fixed).
    ///
    /// # Complexity
    /// O(Σ_groups |options| · Q · α) with a union-find.
    fn components(&self, groups: &[Vec<usize>]) -> Vec<(Vec<usize>, Vec<usize>)> {
        let ng = groups.len();
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
        for (g, group) in groups.iter().enumerate() {
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

    /// Column counts per block of a per-GPU choice.
    fn counts_of(&self, ilp: &ClassIlp, choice: &[usize]) -> Counts {
        ilp.blocks
            .iter()
            .map(|b| {
                let mut n = vec![0u32; b.cols.len()];
                for (m, &c) in b.classes.iter().enumerate() {
                    for &g in &self.classes[c].gpus {
                        if let Some(j) = b.back[m].get(choice[g]) {
                            n[*j] += 1;
                        }
                    }
                }
                n
            })
            .collect()
    }

    /// GPUs of a block with their member index: members in order, each class's GPUs in input
    /// order.
    fn block_gpus<'a>(&'a self, b: &'a Block) -> impl Iterator<Item = (usize, usize)> + 'a {
        b.classes
            .iter()
            .enumerate()
            .flat_map(move |(m, &c)| self.classes[c].gpus.iter().map(move |&g| (m, g)))
    }

    /// Writes a per-GPU choice with the given counts into `choice`: the stay columns take
    /// their members' first GPUs, then the block's other GPUs take the remaining columns in
    /// column order (for a group block: the k-th GPU takes the options in option order).
    fn write_choice(&self, ilp: &ClassIlp, counts: &Counts, choice: &mut [usize]) {
        for (b, n) in ilp.blocks.iter().zip(counts) {
            let mut left = n.clone();
            // Stay columns first: each member's GPUs keep their layouts while its stay
            // column has count left.
            let mut taken = vec![false; b.n as usize];
            if b.cols.iter().any(|c| c.only.is_some()) {
                for (i, (m, g)) in self.block_gpus(b).enumerate() {
                    let j = b.back[m][0];
                    if b.cols[j].only.is_some() && left[j] > 0 {
                        left[j] -= 1;
                        choice[g] = 0;
                        taken[i] = true;
                    }
                }
            }
            let mut col = 0usize;
            for (i, (m, g)) in self.block_gpus(b).enumerate() {
                if taken[i] {
                    continue;
                }
                while col < b.cols.len() && (left[col] == 0 || b.cols[col].only.is_some()) {
                    col += 1;
                }
                if col == b.cols.len() {
                    break;
                }
                left[col] -= 1;
                choice[g] = b.map[m][col].unwrap_or(0);
            }
        }
    }

    /// Exact `(W, R)` of counts (a lower bound of the choice they are written as).
    fn score(&self, ilp: &ClassIlp, counts: &Counts) -> (u64, u64) {
        let mut s = ilp.fixed.clone();
        let mut r = 0u64;
        for (b, n) in ilp.blocks.iter().zip(counts) {
            for (col, &k) in b.cols.iter().zip(n) {
                r += u64::from(col.r) * u64::from(k);
                for (q, x) in col.s.iter().enumerate() {
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

    /// Residual rounding: the GPUs the rounded-down counts leave over (`residual`: block,
    /// stay column, count; counted at that column in `down`) take their columns (their stay
    /// column or any open one) by an exact dynamic programme on the supply capped at demand
    /// (max `W`, then min `R`). `None` when the programme would exceed 200,000 state steps.
    ///
    /// # Complexity
    /// O(min(200,000, Σ states × columns)) map operations of O(Q · log states).
    fn residual(
        &self,
        ilp: &ClassIlp,
        down: &Counts,
        residual: &[(usize, usize, u32)],
    ) -> Option<Counts> {
        let mut base = down.clone();
        let mut gpus: Vec<(usize, usize)> = Vec::new();
        for &(b, j, r) in residual {
            base[b][j] -= r;
            gpus.extend(std::iter::repeat_n((b, j), r as usize));
        }
        if gpus.is_empty() {
            return None;
        }
        let mut s0 = ilp.fixed.clone();
        for (b, n) in ilp.blocks.iter().zip(&base) {
            for (col, &k) in b.cols.iter().zip(n) {
                for (q, x) in col.s.iter().enumerate() {
                    s0[q] += u64::from(*x) * u64::from(k);
                }
            }
        }
        let qs = &ilp.qs;
        let cap: Vec<u64> = qs.iter().map(|&q| u64::from(self.demand[q])).collect();
        let start: Vec<u64> = qs.iter().zip(&cap).map(|(&q, d)| s0[q].min(*d)).collect();
        // layers[i]: state -> (R added, previous state, column of GPU i).
        let mut layers: Vec<BTreeMap<Vec<u64>, Step>> = Vec::new();
        let mut frontier: BTreeMap<Vec<u64>, u64> = BTreeMap::new();
        frontier.insert(start, 0);
        let mut work = 0usize;
        for &(b, j) in &gpus {
            let cols = &ilp.blocks[b].cols;
            let mut next: BTreeMap<Vec<u64>, Step> = BTreeMap::new();
            for (s, &r) in &frontier {
                for (ci, col) in cols.iter().enumerate() {
                    if col.only.is_some() && ci != j {
                        continue;
                    }
                    work += 1;
                    if work > 200_000 {
                        return None;
                    }
                    let t: Vec<u64> = qs
                        .iter()
                        .enumerate()
                        .map(|(k, &q)| (s[k] + u64::from(col.s[q])).min(cap[k]))
                        .collect();
                    let cost = r + u64::from(col.r);
                    let better = next.get(&t).is_none_or(|(c, _, _)| cost < *c);
                    if better {
                        next.insert(t, (cost, s.clone(), ci));
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
        for (i, &(b, _)) in gpus.iter().enumerate().rev() {
            let (_, prev, ci) = layers[i].get(&state)?.clone();
            base[b][ci] += 1;
            state = prev;
        }
        // A stay column never takes more than its members' GPUs.
        let over = ilp
            .blocks
            .iter()
            .zip(&base)
            .any(|(b, n)| b.cols.iter().zip(n).any(|(c, &k)| k > c.ub));
        (!over).then_some(base)
    }

    /// The LP of a phase: per block one variable per column in `[0, ub]` summing to the
    /// block's GPUs, served amounts `z_q ≤ d_q` and `z_q ≤ fixed_q + Σ s_q · x`; objective
    /// `Σ w_q z_q` (max `W`) or `Σ r · x` at `Σ w_q z_q ≥ W* - 1/2` (min `R`). `None` when
    /// the root LP does not solve.
    ///
    /// # Complexity
    /// One simplex solve over Σ_blocks |columns| + Q columns and blocks + Q (+ 1) rows.
    fn phase_lp(&self, ilp: &ClassIlp, phase: Phase) -> Option<PhaseLp> {
        let dir = match phase {
            Phase::MaxW => OptimizationDirection::Maximize,
            Phase::MinR(_) => OptimizationDirection::Minimize,
        };
        let mut lp = Problem::new(dir);
        let mut vars = Vec::with_capacity(ilp.blocks.len());
        for b in &ilp.blocks {
            let n = f64::from(b.n);
            let v: Vec<Variable> = b
                .cols
                .iter()
                .map(|col| {
                    let cost = match phase {
                        Phase::MaxW => 0.0,
                        Phase::MinR(_) => f64::from(col.r),
                    };
                    lp.add_var(cost, (0.0, f64::from(col.ub)))
                })
                .collect();
            lp.add_constraint(v.iter().map(|&x| (x, 1.0)), ComparisonOp::Eq, n);
            vars.push(v);
        }
        let z: Vec<Variable> = ilp
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
            for (b, v) in ilp.blocks.iter().zip(&vars) {
                for (col, &x) in b.cols.iter().zip(v) {
                    if col.s[q] > 0 {
                        row.push((x, -f64::from(col.s[q])));
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
        let root = lp.solve().ok()?.into_solution().ok()?;
        Some(PhaseLp { vars, z, root })
    }

    /// A node's column counts rounded down; per block the GPUs left over go to its stay
    /// columns in order (a group block: its first column), up to their bounds, and are
    /// recorded for the residual programme. Rounding noise above a block's GPUs is taken off
    /// its last columns. Also returns the most fractional column variable.
    ///
    /// # Complexity
    /// O(columns).
    fn round_node(&self, ilp: &ClassIlp, vars: &[Vec<Variable>], sol: &Solution) -> Rounded {
        let mut frac: Option<(f64, Variable, f64)> = None;
        let mut down: Counts = Vec::with_capacity(vars.len());
        let mut residual = Vec::new();
        for (bi, (b, v)) in ilp.blocks.iter().zip(vars).enumerate() {
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
            if used > b.n {
                // Rounding noise: trust the current layout less than the LP.
                let mut over = used - b.n;
                for x in k.iter_mut().rev() {
                    let cut = over.min(*x);
                    *x -= cut;
                    over -= cut;
                }
            } else {
                let mut left = b.n - used;
                let stays: Vec<usize> = match b.cols.iter().any(|c| c.only.is_some()) {
                    true => (0..b.cols.len())
                        .filter(|&j| b.cols[j].only.is_some())
                        .collect(),
                    false => vec![0],
                };
                for j in stays {
                    let room = if b.cols[j].only.is_some() {
                        b.cols[j].ub.saturating_sub(k[j])
                    } else {
                        left
                    };
                    let put = room.min(left);
                    if put > 0 || b.cols[j].only.is_none() {
                        k[j] += put;
                        residual.push((bi, j, put));
                    }
                    left -= put;
                }
            }
            down.push(k);
        }
        Rounded {
            down,
            residual,
            frac,
        }
    }

    /// The incumbent candidates of a node: the rounded counts; every 16th fractional node
    /// also the local search from them and the residual programme.
    fn node_candidates(&self, ilp: &ClassIlp, rounded: &Rounded, nodes: u64) -> Vec<Counts> {
        if rounded.frac.is_none() || nodes % 16 != 1 {
            return vec![rounded.down.clone()];
        }
        let mut choice = vec![0usize; self.class_of.len()];
        self.write_choice(ilp, &rounded.down, &mut choice);
        let polished = self.counts_of(ilp, &self.local_search(choice));
        let mut v = vec![rounded.down.clone(), polished];
        if let Some(r) = self.residual(ilp, &rounded.down, &rounded.residual) {
            v.push(r);
        }
        v
    }

    /// Best-first branch and bound of one phase from an incumbent; returns the best `W`, the
    /// best counts and whether the search finished (the optimum is proven).
    ///
    /// # Complexity
    /// At most min([`NODE_LIMIT`], [`NODE_WORK`] / columns) nodes, each two LP re-solves
    /// from the parent's basis.
    fn branch(
        &self,
        ilp: &ClassIlp,
        phase: Phase,
        incumbent: Counts,
    ) -> Option<(u64, Counts, bool)> {
        let mut best_counts = incumbent;
        let mut best = phase.key(self.score(ilp, &best_counts))?;
        let PhaseLp { vars, z, root } = self.phase_lp(ilp, phase)?;
        // Best-first: the open node with the highest bound next (ties: the newest), so the
        // search stops as soon as no open node can beat the incumbent.
        let mut open: BinaryHeap<(i128, u64, Node)> = BinaryHeap::new();
        let mut seq = 0u64;
        open.push((phase.bound(&root), seq, Node(root)));
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
            let rounded = self.round_node(ilp, &vars, &sol);
            for cand in self.node_candidates(ilp, &rounded, nodes) {
                if let Some(k) = phase.key(self.score(ilp, &cand))
                    && k > best
                {
                    best = k;
                    best_counts = cand;
                }
            }
            let Some((_, x, val)) = rounded.frac else {
                continue;
            };
            if bound <= best {
                continue;
            }
            let (x, val) = branch_on(&sol, &z, (x, val));
            let (lo, hi) = (val.floor(), val.ceil());
            let up = sol.clone().add_constraint([(x, 1.0)], ComparisonOp::Ge, hi);
            let dn = sol.add_constraint([(x, 1.0)], ComparisonOp::Le, lo);
            for child in [dn, up] {
                if let Ok(outcome) = child
                    && let Ok(s) = outcome.into_solution()
                {
                    seq += 1;
                    let b = phase.bound(&s);
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
