//! The layout planner of `mig.md` §4.1.
//!
//! Objective, lexicographic: maximise the weighted satisfied demand `W`, then minimise the
//! number of reconfigured GPUs `R` (profile multiset changed, or MIG switched on), then minimise
//! the fragmentation `F`.
//!
//! Method. GPUs with the same model, current layout and busy set form a class and share one
//! option table. An option of a GPU is a candidate layout (the current one at cost 0, every
//! other allowed layout at cost 1) together with the subset of its idle instances assigned to
//! demand; options with the same assigned vector keep the cheapest `(R, F)`. A dynamic
//! programme over GPUs on the assigned vector (mixed radix, capped at what demand and supply
//! allow) then finds the exact lexicographic optimum. When the state space times the options
//! exceeds the budget, a local-search greedy over per-class supply options runs instead, and a
//! Lagrangian bound (the LP bound over per-GPU options, evaluated in exact integer arithmetic)
//! certifies how far its `W` can be from the optimum.

use std::collections::BTreeMap;
use std::sync::Arc;

use indexmap::IndexMap;
use serde::Serialize;

use crate::catalogue::{Engines, GpuModel};
use crate::input::{Mode, Problem, ResolvedGpu};
use crate::layout::{Instance, Layout, add_engines, options};

/// The default work budget of the exact solver (state × option steps, about 1–2 ns each).
pub const DEFAULT_BUDGET: u64 = 200_000_000;

/// The largest back-pointer table of the exact solver (states × GPUs, 2 bytes each).
const MAX_TABLE: u64 = 16_000_000;

/// Planner settings.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PlanOptions {
    /// Work budget of the exact dynamic programme (states × options summed over GPUs); beyond
    /// it the greedy with a certified bound runs.
    pub budget: u64,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            budget: DEFAULT_BUDGET,
        }
    }
}

impl PlanOptions {
    /// Sets the work budget.
    pub fn with_budget(mut self, budget: u64) -> Self {
        self.budget = budget;
        self
    }
}

/// An error planning.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// A weighted value does not fit in 64 bits.
    #[error("weighted demand overflows: {0}")]
    Overflow(&'static str),
}

/// The plan: the JSON contract of `gpuquota mig plan`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// Weighted satisfied demand `W`.
    pub value: u64,
    /// GPUs whose profile counts change (or whose MIG mode is switched on) `R`.
    pub reconfigured: u32,
    /// Fragmentation `F` of `mig.md` §4.1.
    pub fragmentation: u32,
    /// Whether the plan is proven optimal for `(W, R, F)`.
    pub optimal: bool,
    /// Satisfied instances per demanded resource, in demand order.
    pub satisfied: IndexMap<String, u32>,
    /// Every GPU in input order.
    pub gpus: Vec<GpuPlan>,
    /// When not proven optimal: a certified upper bound on `value`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bound: Option<u64>,
}

/// One GPU of the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GpuPlan {
    /// Node.
    pub node: String,
    /// GPU index.
    pub index: u32,
    /// Whether the layout changes.
    pub changed: bool,
    /// The planned instances, by start.
    pub instances: Vec<PlannedInstance>,
    /// Whether MIG is enabled in the plan (false only for a MIG-disabled GPU left alone).
    #[serde(skip)]
    pub mig_enabled: bool,
    /// Catalogue name of the model.
    #[serde(skip)]
    pub model: String,
    /// Instances assigned to demand (planner-internal detail, for tests and tables).
    #[serde(skip)]
    pub assigned: Vec<Instance>,
}

/// One planned instance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlannedInstance {
    /// Profile name.
    pub profile: String,
    /// Start unit.
    pub start: u8,
    /// Whether a workload runs on it (kept from the input).
    pub busy: bool,
}

/// Plans `problem` exactly within the budget, else greedily with a certified bound.
///
/// # Errors
/// [`PlanError::Overflow`] if weights × counts exceed `u64`.
///
/// # Complexity
/// Option tables: O(C · L · 2ⁿ) for C classes of identical GPUs, L ≤ 2,319 layouts per model
/// and n ≤ 7 instances. Exact: O(S · Σ_g |options_g|) for S = Π(c_q + 1) capped demand states.
/// Greedy: O(passes · G · |options| · Q).
pub fn plan(problem: &Problem<'_>, options: &PlanOptions) -> Result<Plan, PlanError> {
    Prepared::new(problem)?.solve(options)
}

/// The greedy fallback alone (local search over per-class supply options), without a bound.
///
/// # Errors
/// [`PlanError::Overflow`].
///
/// # Complexity
/// O(C · L) to build the tables, then O(passes · G · |options| · Q).
pub fn greedy(problem: &Problem<'_>) -> Result<Plan, PlanError> {
    let p = Prepared::new(problem)?;
    let choice = p.greedy_choice();
    Ok(p.finish_greedy(&choice, false, None))
}

/// Model, current layout, busy instances, whole-GPU busy: GPUs with equal keys share options.
type ClassKey = (u16, Option<Vec<Instance>>, Vec<Instance>, bool);
/// Class, supply option, assigned vector, cost.
type RealiseKey = (usize, Vec<u32>, Vec<u32>, u32);

/// One candidate layout of a class.
#[derive(Debug, Clone)]
struct Cand {
    layout: CandLayout,
    r: u32,
    /// Idle instances that can serve demand: (instance, demand index).
    servable: Vec<(Instance, usize)>,
    /// Supply per demand index (uncapped).
    supply: Vec<u32>,
}

/// Where a candidate's layout lives (no copies of the model's layout table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CandLayout {
    /// MIG disabled.
    Disabled,
    /// The GPU's current layout.
    Current,
    /// `model.layouts()[i]`.
    Model(u32),
}

/// A supply option (greedy, bound).
#[derive(Debug, Clone)]
struct SupplyOpt {
    s: Vec<u32>,
    r: u32,
}

/// An exact option: assigned vector, cost, candidate, subset of `servable`.
#[derive(Debug, Clone)]
struct ExactOpt {
    a: Vec<u32>,
    cost: u64,
    cand: usize,
    subset: u16,
}

#[derive(Debug)]
struct Class<'c> {
    model: &'c GpuModel,
    busy: Vec<Instance>,
    /// The current layout first, then class-specific candidates.
    own: Vec<Cand>,
    /// The current layout (`None` = MIG disabled).
    current: Option<Layout>,
    /// Candidates shared by every idle GPU of the model.
    shared: Option<Arc<SharedCands>>,
    supply_opts: Vec<SupplyOpt>,
    gpus: Vec<usize>,
}

impl Class<'_> {
    fn cand(&self, k: usize) -> &Cand {
        match k.checked_sub(self.own.len()) {
            None => &self.own[k],
            Some(j) => self
                .shared
                .as_ref()
                .and_then(|v| v.cands.get(j))
                .unwrap_or(&self.own[0]),
        }
    }

    fn cands(&self) -> impl Iterator<Item = &Cand> {
        self.own
            .iter()
            .chain(self.shared.iter().flat_map(|v| v.cands.iter()))
    }

    fn layout(&self, cand: &Cand) -> Option<&Layout> {
        match cand.layout {
            CandLayout::Disabled => None,
            CandLayout::Current => self.current.as_ref(),
            CandLayout::Model(i) => self.model.layouts().get(i as usize),
        }
    }
}

/// Per-model placement tables for the fragmentation measure.
#[derive(Debug)]
struct Tables {
    opts: Vec<(u16, Engines, u8)>,
}

/// A problem with its option tables built, ready for the greedy or the exact solver.
#[derive(Debug)]
pub struct Prepared<'p, 'c> {
    problem: &'p Problem<'c>,
    classes: Vec<Class<'c>>,
    class_of: Vec<usize>,
    demand: Vec<u32>,
    weight: Vec<u64>,
    tables: BTreeMap<u16, Tables>,
}

impl<'p, 'c> Prepared<'p, 'c> {
    /// Groups identical GPUs and builds their candidate layouts and supply options.
    ///
    /// # Errors
    /// [`PlanError::Overflow`] if `Σ weight × count` exceeds `u64`.
    ///
    /// # Complexity
    /// O(C · L · (n + Q)) for C classes, L layouts per model, n instances, Q demanded names.
    pub fn new(problem: &'p Problem<'c>) -> Result<Self, PlanError> {
        let demand: Vec<u32> = problem.demand.iter().map(|d| d.count).collect();
        let weight: Vec<u64> = problem.demand.iter().map(|d| d.weight).collect();
        let mut total = 0u64;
        for (d, w) in demand.iter().zip(&weight) {
            total = w
                .checked_mul(u64::from(*d))
                .and_then(|x| total.checked_add(x))
                .ok_or(PlanError::Overflow("sum of weight x count"))?;
        }
        let mut keys: BTreeMap<ClassKey, usize> = BTreeMap::new();
        let mut classes: Vec<Class<'c>> = Vec::new();
        let mut class_of = Vec::with_capacity(problem.gpus.len());
        let mut tables = BTreeMap::new();
        let mut models: BTreeMap<u16, ModelData> = BTreeMap::new();
        for (gi, g) in problem.gpus.iter().enumerate() {
            let key = (
                g.model.index().0,
                g.current.as_ref().map(|l| l.instances().to_vec()),
                g.busy.clone(),
                g.whole_busy,
            );
            let ci = match keys.get(&key) {
                Some(&ci) => ci,
                None => {
                    let ci = classes.len();
                    let md = models
                        .entry(g.model.index().0)
                        .or_insert_with(|| model_data(problem, g.model, &demand));
                    classes.push(build_class(problem, g, &demand, md));
                    keys.insert(key, ci);
                    tables.entry(g.model.index().0).or_insert_with(|| Tables {
                        opts: options(g.model)
                            .into_iter()
                            .map(|(p, _, m, e)| {
                                let c = g.model.profile_at(p).map_or(0, |x| x.compute_slices());
                                (m, e, c)
                            })
                            .collect(),
                    });
                    ci
                }
            };
            classes[ci].gpus.push(gi);
            class_of.push(ci);
        }
        Ok(Prepared {
            problem,
            classes,
            class_of,
            demand,
            weight,
            tables,
        })
    }

    /// Solves: exact within the budget, else greedy with a certified bound.
    ///
    /// # Errors
    /// [`PlanError::Overflow`].
    ///
    /// # Complexity
    /// Exact: O(S · Σ_g |options_g|) with S = Π(c_q + 1) states (bounded by the budget).
    /// Otherwise: an LP over at most 40 groups of interchangeable GPUs (dense simplex,
    /// O(iterations · rows · columns)), the local search, and 60 bound iterations of
    /// O(Σ_classes |options| · Q).
    pub fn solve(&self, options: &PlanOptions) -> Result<Plan, PlanError> {
        if let Some(plan) = self.exact(options.budget) {
            return Ok(plan);
        }
        let plain = self.greedy_choice();
        let (guided, mu) = self.lp_choice();
        let score = |c: &[usize]| (self.value_of(c), std::cmp::Reverse(self.r_of(c)));
        let choice = if score(&guided) > score(&plain) {
            guided
        } else {
            plain
        };
        let value = self.value_of(&choice);
        let bound = self.bound(value, mu);
        let optimal = false;
        let mut plan = self.finish_greedy(&choice, optimal, Some(bound));
        if plan.value >= bound && plan.reconfigured == 0 && plan.fragmentation == 0 {
            plan.optimal = true;
            plan.bound = None;
        }
        Ok(plan)
    }

    /// The weighted value of the greedy packing alone: which layout (supply vector) each GPU
    /// gets, without realising placements or minimising fragmentation.
    ///
    /// # Complexity
    /// O(G · Q) per pass plus one option scan per class and supply state change.
    pub fn greedy_value(&self) -> u64 {
        self.value_of(&self.greedy_choice())
    }

    /// The greedy plan (no bound computed).
    ///
    /// # Complexity
    /// The local search, then per distinct (class, assignment) one scan of the matching
    /// candidates and their subsets (at most 2ⁿ, n ≤ 7).
    pub fn greedy(&self) -> Plan {
        let choice = self.greedy_choice();
        self.finish_greedy(&choice, false, None)
    }

    /// A certified upper bound on the weighted satisfied demand of any plan.
    ///
    /// # Complexity
    /// O(iterations · Σ_classes |options| · Q), 60 iterations.
    pub fn upper_bound(&self) -> u64 {
        let (choice, mu) = self.lp_choice();
        let plain = self.greedy_choice();
        self.bound(self.value_of(&choice).max(self.value_of(&plain)), mu)
    }

    fn r_of(&self, choice: &[usize]) -> u32 {
        choice
            .iter()
            .enumerate()
            .map(|(g, &o)| self.classes[self.class_of[g]].supply_opts[o].r)
            .sum()
    }

    /// The configuration LP over groups of interchangeable GPUs (same model and busy set),
    /// rounded down and completed by the local search. Returns the choice and the LP's supply
    /// duals as multipliers over 2¹⁶ for the bound.
    fn lp_choice(&self) -> (Vec<usize>, Option<Vec<i128>>) {
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
            let mut members: Vec<usize> = g
                .iter()
                .flat_map(|&c| self.classes[c].gpus.iter().copied())
                .collect();
            members.sort_unstable();
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
    fn match_opt(&self, ci: usize, s: &[u32]) -> usize {
        let opts = &self.classes[ci].supply_opts;
        let covers = |o: &SupplyOpt| o.s.iter().zip(s).all(|(a, b)| a >= b);
        opts.iter()
            .enumerate()
            .filter(|(_, o)| covers(o))
            .min_by_key(|(i, o)| (o.r, o.s != s, *i))
            .map_or(0, |(i, _)| i)
    }

    fn caps(&self) -> Vec<u32> {
        let mut cap = vec![0u64; self.demand.len()];
        for c in &self.classes {
            for (q, slot) in cap.iter_mut().enumerate() {
                let m = c.supply_opts.iter().map(|o| o.s[q]).max().unwrap_or(0);
                *slot = slot.saturating_add(u64::from(m) * c.gpus.len() as u64);
            }
        }
        cap.iter()
            .zip(&self.demand)
            .map(|(c, d)| u32::try_from((*c).min(u64::from(*d))).unwrap_or(u32::MAX))
            .collect()
    }

    fn value_of(&self, choice: &[usize]) -> u64 {
        let mut s = vec![0u64; self.demand.len()];
        for (g, &o) in choice.iter().enumerate() {
            let opt = &self.classes[self.class_of[g]].supply_opts[o];
            for (q, x) in opt.s.iter().enumerate() {
                s[q] += u64::from(*x);
            }
        }
        s.iter()
            .zip(&self.demand)
            .zip(&self.weight)
            .map(|((s, d), w)| (*s).min(u64::from(*d)) * w)
            .sum()
    }

    /// Local search: start from the current layouts; move a GPU to the option with the largest
    /// gain in `W` (ties: fewer reconfigurations, then option order) until nothing improves.
    fn greedy_choice(&self) -> Vec<usize> {
        self.local_search(vec![0usize; self.class_of.len()])
    }

    fn local_search(&self, mut choice: Vec<usize>) -> Vec<usize> {
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
            for (g, &c) in self.class_of.iter().enumerate() {
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

    /// Lagrangian (LP) bound: for μ in [0, w], W ≤ Σ (w − μ)·d + Σ_g max_o μ·s_o. μ is kept
    /// as integers over 2¹⁶ so the bound is exact; subgradient steps improve it.
    fn bound(&self, lower: u64, start: Option<Vec<i128>>) -> u64 {
        const K: i128 = 1 << 16;
        let caps = self.caps();
        let nq = caps.len();
        let trivial: i128 = caps
            .iter()
            .zip(&self.weight)
            .map(|(c, w)| i128::from(*c) * i128::from(*w))
            .sum();
        let w: Vec<i128> = self.weight.iter().map(|&w| i128::from(w) * K).collect();
        let mut mu: Vec<i128> = start.unwrap_or_else(|| w.iter().map(|x| x / 2).collect());
        let eval = |mu: &[i128], grad: &mut Vec<i128>| -> i128 {
            let mut total: i128 = (0..nq).map(|q| (w[q] - mu[q]) * i128::from(caps[q])).sum();
            grad.clear();
            grad.extend(caps.iter().map(|c| -i128::from(*c)));
            for c in &self.classes {
                let (mut best, mut arg) = (-1i128, 0usize);
                for (oi, o) in c.supply_opts.iter().enumerate() {
                    let v: i128 = (0..nq)
                        .map(|q| mu[q] * i128::from(o.s[q].min(caps[q])))
                        .sum();
                    if v > best {
                        best = v;
                        arg = oi;
                    }
                }
                let n = c.gpus.len() as i128;
                total += best.max(0) * n;
                if let Some(o) = c.supply_opts.get(arg) {
                    for q in 0..nq {
                        grad[q] += i128::from(o.s[q].min(caps[q])) * n;
                    }
                }
            }
            total
        };
        let mut grad = Vec::with_capacity(nq);
        let mut best = trivial * K;
        let mut theta = 1.0f64;
        for _ in 0..60 {
            let ub = eval(&mu, &mut grad);
            if ub < best {
                best = ub;
            } else {
                theta /= 2.0;
            }
            let norm: f64 = grad.iter().map(|g| (*g as f64) * (*g as f64)).sum();
            let gap = (ub as f64) - (lower as f64) * (K as f64);
            if norm == 0.0 || gap <= 0.0 {
                break;
            }
            let step = theta * gap / norm;
            for q in 0..nq {
                let next = (mu[q] as f64) - step * (grad[q] as f64);
                mu[q] = (next.round() as i128).clamp(0, w[q]);
            }
        }
        let ub = (best / K).min(trivial);
        u64::try_from(ub.max(i128::from(lower))).unwrap_or(u64::MAX)
    }

    fn finish_greedy(&self, choice: &[usize], optimal: bool, bound: Option<u64>) -> Plan {
        // Assign demand GPU by GPU in input order, then pick the least fragmented realisation.
        let mut remaining = self.demand.clone();
        let mut picks = Vec::with_capacity(choice.len());
        let mut cache: BTreeMap<RealiseKey, (usize, u16, u32)> = BTreeMap::new();
        for (g, &o) in choice.iter().enumerate() {
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
            picks.push((pick.0, pick.1, pick.2));
        }
        self.assemble(&picks, optimal, bound)
    }

    /// Among the class's candidates with supply `s` (capped) and cost `r`, the candidate and
    /// subset realising exactly `a` with the least fragmentation.
    fn realise(&self, ci: usize, s: &[u32], a: &[u32], r: u32) -> (usize, u16, u32) {
        let class = &self.classes[ci];
        let mut best: Option<(u32, usize, u16)> = None;
        let own = class.own.iter().enumerate();
        let shared = class.shared.iter().flat_map(|v| {
            v.by_supply
                .get(s)
                .into_iter()
                .flatten()
                .map(|&j| (class.own.len() + j, &v.cands[j]))
        });
        let candidates: Vec<(usize, &Cand)> = if r == 0 {
            own.take(1).collect()
        } else {
            own.skip(1).chain(shared).collect()
        };
        for (k, cand) in candidates {
            if cand.r != r
                || !cand
                    .supply
                    .iter()
                    .zip(&self.demand)
                    .map(|(x, d)| (*x).min(*d))
                    .eq(s.iter().copied())
            {
                continue;
            }
            let n = cand.servable.len();
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
                let f = self.frag(class, cand, mask as u16);
                // Ties: the layout with fewer instances (nothing cut that nobody asked for).
                let better = best.is_none_or(|(bf, bk, _)| {
                    (f, self.instances_of(class, cand))
                        < (bf, self.instances_of(class, class.cand(bk)))
                });
                if better {
                    best = Some((f, k, mask as u16));
                }
            }
        }
        match best {
            Some((f, k, m)) => (k, m, f),
            None => (0, 0, self.frag(class, class.cand(0), 0)),
        }
    }

    fn instances_of(&self, class: &Class<'_>, cand: &Cand) -> usize {
        class.layout(cand).map_or(0, |l| l.instances().len())
    }

    /// Fragmentation of a GPU whose held instances are the busy ones plus `subset` of the
    /// candidate's servable instances.
    fn frag(&self, class: &Class<'_>, cand: &Cand, subset: u16) -> u32 {
        if cand.layout == CandLayout::Disabled {
            return 0;
        }
        let held = class.busy.iter().copied().chain(
            cand.servable
                .iter()
                .enumerate()
                .filter(|(bit, _)| subset & (1 << bit) != 0)
                .map(|(_, (i, _))| *i),
        );
        fragmentation(class.model, &self.tables[&class.model.index().0].opts, held)
    }

    /// The exact dynamic programme, or `None` when it would exceed the budget.
    fn exact(&self, budget: u64) -> Option<Plan> {
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

    fn exact_options(&self, class: &Class<'_>, caps: &[u32]) -> Vec<ExactOpt> {
        let mut by_a: BTreeMap<Vec<u32>, usize> = BTreeMap::new();
        let mut out: Vec<ExactOpt> = Vec::new();
        for (k, cand) in class.cands().enumerate() {
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
                let f = self.frag(class, cand, mask as u16);
                let cost = (u64::from(cand.r) << 32) | u64::from(f);
                match by_a.get(&a) {
                    Some(&i) => {
                        let prev = class.cand(out[i].cand);
                        if (cost, self.instances_of(class, cand))
                            < (out[i].cost, self.instances_of(class, prev))
                        {
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

    fn assemble(&self, picks: &[(usize, u16, u32)], optimal: bool, bound: Option<u64>) -> Plan {
        let mut satisfied: IndexMap<String, u32> = self
            .problem
            .demand
            .iter()
            .map(|d| (d.resource.clone(), 0))
            .collect();
        let mut value = 0u64;
        let mut reconfigured = 0u32;
        let mut fragmentation = 0u32;
        let mut gpus = Vec::with_capacity(picks.len());
        for (g, &(k, subset, f)) in picks.iter().enumerate() {
            let class = &self.classes[self.class_of[g]];
            let cand = class.cand(k);
            let spec: &ResolvedGpu<'_> = &self.problem.gpus[g];
            let mut assigned = Vec::new();
            for (bit, (inst, q)) in cand.servable.iter().enumerate() {
                if subset & (1 << bit) != 0 {
                    assigned.push(*inst);
                    if let Some((_, v)) = satisfied.get_index_mut(*q) {
                        *v += 1;
                    }
                    value = value.saturating_add(self.weight[*q]);
                }
            }
            reconfigured += cand.r;
            fragmentation += f;
            let instances = class
                .layout(cand)
                .map(|l| {
                    l.instances()
                        .iter()
                        .map(|i| PlannedInstance {
                            profile: spec
                                .model
                                .profile_at(i.profile)
                                .map_or_else(String::new, |p| p.name().to_owned()),
                            start: i.start,
                            busy: class.busy.contains(i),
                        })
                        .collect()
                })
                .unwrap_or_default();
            gpus.push(GpuPlan {
                node: spec.node.clone(),
                index: spec.index,
                changed: cand.r > 0,
                instances,
                mig_enabled: cand.layout != CandLayout::Disabled,
                model: spec.model.name().to_owned(),
                assigned,
            });
        }
        Plan {
            value,
            reconfigured,
            fragmentation,
            optimal,
            satisfied,
            gpus,
            bound,
        }
    }
}

/// The candidates every idle GPU of a model shares, bucketed by capped supply.
#[derive(Debug)]
struct SharedCands {
    cands: Vec<Cand>,
    by_supply: BTreeMap<Vec<u32>, Vec<usize>>,
}

/// Per-model data shared by the classes of one model.
#[derive(Debug)]
struct ModelData {
    qmap: Vec<Option<usize>>,
    /// Every layout serving some demand, as a candidate of an idle GPU (cost 1).
    idle: Arc<SharedCands>,
    /// Distinct capped supplies of `idle`.
    idle_opts: Vec<SupplyOpt>,
    /// Indices of the layouts containing each instance.
    containing: BTreeMap<Instance, Vec<u32>>,
    /// Profile-multiset id of each layout (equal ids = equal multisets).
    kappa: Vec<u32>,
}

fn make_cand(
    qmap: &[Option<usize>],
    busy: &[Instance],
    nq: usize,
    (layout, l): (CandLayout, Option<&Layout>),
    r: u32,
) -> Cand {
    let mut servable = Vec::new();
    let mut supply = vec![0u32; nq];
    if let Some(l) = l {
        for i in l.instances() {
            if busy.contains(i) {
                continue;
            }
            if let Some(Some(q)) = qmap.get(usize::from(i.profile.0)) {
                servable.push((*i, *q));
                supply[*q] += 1;
            }
        }
    }
    Cand {
        layout,
        r,
        servable,
        supply,
    }
}

/// Distinct capped supplies, cheapest first seen (`seed` first).
fn supply_options<'a>(
    seed: Vec<SupplyOpt>,
    more: impl Iterator<Item = (&'a [u32], u32)>,
    demand: &[u32],
) -> Vec<SupplyOpt> {
    let mut seen: BTreeMap<Vec<u32>, usize> = BTreeMap::new();
    let mut opts: Vec<SupplyOpt> = Vec::new();
    let capped =
        |s: &[u32]| -> Vec<u32> { s.iter().zip(demand).map(|(s, d)| (*s).min(*d)).collect() };
    for o in seed
        .into_iter()
        .map(|o| (capped(&o.s), o.r))
        .chain(more.map(|(s, r)| (capped(s), r)))
    {
        let (s, r) = o;
        match seen.get(&s) {
            Some(&i) => opts[i].r = opts[i].r.min(r),
            None => {
                seen.insert(s.clone(), opts.len());
                opts.push(SupplyOpt { s, r });
            }
        }
    }
    opts
}

/// Keeps option 0 (the current layout) and every option no other option dominates
/// (at least the same supply for at most the same cost).
fn pareto(opts: Vec<SupplyOpt>) -> Vec<SupplyOpt> {
    let keep: Vec<bool> = (0..opts.len())
        .map(|i| {
            i == 0
                || !opts.iter().enumerate().any(|(j, o)| {
                    j != i
                        && o.r <= opts[i].r
                        && o.s.iter().zip(&opts[i].s).all(|(a, b)| a >= b)
                        && (o.s != opts[i].s || j < i)
                })
        })
        .collect();
    opts.into_iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|(o, _)| o)
        .collect()
}

fn model_data(problem: &Problem<'_>, model: &GpuModel, demand: &[u32]) -> ModelData {
    let qmap: Vec<Option<usize>> = model
        .profiles()
        .iter()
        .map(|p| {
            problem
                .demand
                .iter()
                .position(|d| d.resource == p.resource_name())
        })
        .collect();
    let mut idle = Vec::new();
    let mut containing: BTreeMap<Instance, Vec<u32>> = BTreeMap::new();
    let mut ids: BTreeMap<Vec<u8>, u32> = BTreeMap::new();
    let mut kappa = Vec::with_capacity(model.layouts().len());
    for (li, l) in model.layouts().iter().enumerate() {
        let next = ids.len() as u32;
        kappa.push(*ids.entry(l.counts(model)).or_insert(next));
        for i in l.instances() {
            containing.entry(*i).or_default().push(li as u32);
        }
        let c = make_cand(
            &qmap,
            &[],
            demand.len(),
            (CandLayout::Model(li as u32), Some(l)),
            1,
        );
        if c.supply.iter().any(|x| *x > 0) {
            idle.push(c);
        }
    }
    // All cost 1 and distinct: keep the maximal supplies once per model.
    let all = supply_options(
        Vec::new(),
        idle.iter().map(|c| (c.supply.as_slice(), c.r)),
        demand,
    );
    let idle_opts: Vec<SupplyOpt> = all
        .iter()
        .filter(|a| {
            !all.iter()
                .any(|b| b.s != a.s && b.s.iter().zip(&a.s).all(|(x, y)| x >= y))
        })
        .cloned()
        .collect();
    let mut by_supply: BTreeMap<Vec<u32>, Vec<usize>> = BTreeMap::new();
    for (j, c) in idle.iter().enumerate() {
        let capped = c
            .supply
            .iter()
            .zip(demand)
            .map(|(x, d)| (*x).min(*d))
            .collect();
        by_supply.entry(capped).or_default().push(j);
    }
    ModelData {
        qmap,
        idle: Arc::new(SharedCands {
            cands: idle,
            by_supply,
        }),
        idle_opts,
        containing,
        kappa,
    }
}

fn build_class<'c>(
    problem: &Problem<'c>,
    g: &ResolvedGpu<'c>,
    demand: &[u32],
    md: &ModelData,
) -> Class<'c> {
    let model = g.model;
    let nq = demand.len();
    let here = if g.current.is_some() {
        CandLayout::Current
    } else {
        CandLayout::Disabled
    };
    let cand0 = make_cand(&md.qmap, &g.busy, nq, (here, g.current.as_ref()), 0);
    let seed = vec![SupplyOpt {
        s: cand0.supply.clone(),
        r: 0,
    }];
    let movable = match (&g.current, problem.mode) {
        (None, _) => !g.whole_busy,
        (Some(_), Mode::KeepBusyGpus) => g.busy.is_empty(),
        (Some(_), Mode::PinBusyInstances) => true,
    };
    let mut own = vec![cand0];
    let mut shared = None;
    let opts = if !movable {
        supply_options(seed, std::iter::empty(), demand)
    } else if g.busy.is_empty() {
        // Layouts with the current multiset have the current supply: the current layout
        // (cost 0) dominates them, so the shared table may keep them.
        shared = Some(Arc::clone(&md.idle));
        // The model's maximal options, minus those the current layout (cost 0) dominates.
        let mut opts = supply_options(seed, std::iter::empty(), demand);
        let s0 = opts[0].s.clone();
        opts.extend(
            md.idle_opts
                .iter()
                .filter(|o| !s0.iter().zip(&o.s).all(|(x, y)| x >= y))
                .cloned(),
        );
        return Class {
            model,
            busy: g.busy.clone(),
            own,
            current: g.current.clone(),
            shared,
            supply_opts: opts,
            gpus: Vec::new(),
        };
    } else {
        let k0 = g
            .current
            .as_ref()
            .and_then(|l0| model.layouts().binary_search(l0).ok())
            .and_then(|x| md.kappa.get(x).copied());
        let mut lists: Vec<&Vec<u32>> = Vec::new();
        let mut missing = false;
        for b in &g.busy {
            match md.containing.get(b) {
                Some(v) => lists.push(v),
                None => missing = true,
            }
        }
        lists.sort_by_key(|v| v.len());
        if let (false, Some((first, rest))) = (missing, lists.split_first()) {
            for &li in first.iter() {
                if !rest.iter().all(|v| v.binary_search(&li).is_ok()) {
                    continue;
                }
                let Some(l) = model.layouts().get(li as usize) else {
                    continue;
                };
                if k0.is_some() && md.kappa.get(li as usize).copied() == k0 {
                    continue;
                }
                let serves = l.instances().iter().any(|i| {
                    !g.busy.contains(i)
                        && matches!(md.qmap.get(usize::from(i.profile.0)), Some(Some(_)))
                });
                if !serves {
                    continue;
                }
                let c = make_cand(&md.qmap, &g.busy, nq, (CandLayout::Model(li), Some(l)), 1);
                if c.supply.iter().any(|x| *x > 0) {
                    own.push(c);
                }
            }
        }
        let more: Vec<(Vec<u32>, u32)> = own[1..].iter().map(|c| (c.supply.clone(), c.r)).collect();
        supply_options(seed, more.iter().map(|(s, r)| (s.as_slice(), *r)), demand)
    };
    Class {
        model,
        busy: g.busy.clone(),
        own,
        current: g.current.clone(),
        shared,
        supply_opts: pareto(opts),
        gpus: Vec::new(),
    }
}

/// `F` of one GPU (`mig.md` §4.1): free compute slices minus the compute slices of the largest
/// profile that still has a legal placement in the units the held instances leave free.
fn fragmentation(
    model: &GpuModel,
    opts: &[(u16, Engines, u8)],
    held: impl Iterator<Item = Instance>,
) -> u32 {
    if opts.is_empty() {
        return 0;
    }
    let totals = model.engine_totals();
    let (mut mask, mut used, mut compute) = (0u16, Engines::default(), 0u32);
    for i in held {
        if let Some(p) = model.profile_at(i.profile) {
            mask |= crate::catalogue::Placement {
                start: i.start,
                size: p.size(),
            }
            .mask();
            used = add_engines(used, p.engines(), totals).unwrap_or(used);
            compute += u32::from(p.compute_slices());
        }
    }
    let largest = opts
        .iter()
        .filter(|(m, e, _)| m & mask == 0 && add_engines(used, *e, totals).is_some())
        .map(|(_, _, c)| u32::from(*c))
        .max()
        .unwrap_or(0);
    u32::from(model.compute_slices())
        .saturating_sub(compute)
        .saturating_sub(largest)
}

/// `F` of one GPU holding `held` (busy plus assigned instances), per `mig.md` §4.1.
///
/// # Complexity
/// O(n + placements).
pub fn gpu_fragmentation(model: &GpuModel, held: &[Instance]) -> u32 {
    let opts: Vec<(u16, Engines, u8)> = options(model)
        .into_iter()
        .map(|(p, _, m, e)| (m, e, model.profile_at(p).map_or(0, |x| x.compute_slices())))
        .collect();
    fragmentation(model, &opts, held.iter().copied())
}

/// An independent checker of a plan against its problem: every planned layout passes
/// [`crate::check`], busy work is kept as the mode demands (the whole layout under
/// `keep-busy-gpus`, each busy instance under `pin-busy-instances`), `changed` and
/// `reconfigured` match the profile multisets, assigned instances are idle instances of the
/// planned layout whose resource is demanded, `satisfied` never exceeds demand, and `value`
/// and `fragmentation` equal their definitions.
///
/// # Errors
/// A message naming the first broken rule.
///
/// # Complexity
/// O(G · n²).
pub fn verify(problem: &Problem<'_>, plan: &Plan) -> Result<(), String> {
    if plan.gpus.len() != problem.gpus.len() {
        return Err("one plan entry per GPU expected".into());
    }
    let mut satisfied: IndexMap<&str, u32> = problem
        .demand
        .iter()
        .map(|d| (d.resource.as_str(), 0))
        .collect();
    let (mut reconfigured, mut fragmentation) = (0u32, 0u32);
    for (g, p) in problem.gpus.iter().zip(&plan.gpus) {
        let name = format!("node {} GPU {}", g.node, g.index);
        if (p.node.as_str(), p.index) != (g.node.as_str(), g.index) {
            return Err(format!("{name}: plan entries out of order"));
        }
        let mut instances = Vec::new();
        for i in &p.instances {
            let prof = g
                .model
                .profile(&i.profile)
                .map_err(|e| format!("{name}: {e}"))?;
            instances.push(Instance {
                start: i.start,
                profile: prof.index(),
            });
        }
        let problems = crate::layout::check(g.model, &instances);
        if let Some(e) = problems.first() {
            return Err(format!("{name}: {e}"));
        }
        instances.sort();
        let layout = Layout::from_sorted(instances);
        let keeps_all = g.whole_busy || (problem.mode == Mode::KeepBusyGpus && !g.busy.is_empty());
        let same = match &g.current {
            None => !p.mig_enabled,
            Some(l0) => p.mig_enabled && l0.counts(g.model) == layout.counts(g.model),
        };
        if keeps_all && (!same || g.current.as_ref().is_some_and(|l0| *l0 != layout)) {
            return Err(format!("{name}: busy GPU changed"));
        }
        if let Some(b) = g.busy.iter().find(|b| !layout.instances().contains(b)) {
            return Err(format!("{name}: busy instance at {} removed", b.start));
        }
        if p.changed == same {
            return Err(format!(
                "{name}: changed flag is {} but multiset {}",
                p.changed,
                if same { "kept" } else { "changed" }
            ));
        }
        reconfigured += u32::from(p.changed);
        for a in &p.assigned {
            if !layout.instances().contains(a) || g.busy.contains(a) {
                return Err(format!(
                    "{name}: assigned instance at {} is not idle in the layout",
                    a.start
                ));
            }
            let res = g
                .model
                .profile_at(a.profile)
                .map(|x| x.resource_name())
                .unwrap_or("");
            match satisfied.get_mut(res) {
                Some(v) => *v += 1,
                None => return Err(format!("{name}: assigned {res} is not demanded")),
            }
        }
        let mut dedup = p.assigned.clone();
        dedup.sort();
        dedup.dedup();
        if dedup.len() != p.assigned.len() {
            return Err(format!("{name}: an instance is assigned twice"));
        }
        if p.mig_enabled {
            let held: Vec<Instance> = g.busy.iter().chain(&p.assigned).copied().collect();
            fragmentation += gpu_fragmentation(g.model, &held);
        }
    }
    let mut value = 0u64;
    for d in &problem.demand {
        let s = satisfied.get(d.resource.as_str()).copied().unwrap_or(0);
        if s > d.count {
            return Err(format!(
                "{}: {s} assigned, {} demanded",
                d.resource, d.count
            ));
        }
        if plan.satisfied.get(&d.resource) != Some(&s) {
            return Err(format!(
                "{}: satisfied does not match the assignment",
                d.resource
            ));
        }
        value += u64::from(s) * d.weight;
    }
    if value != plan.value {
        return Err(format!("value {} but assignment gives {value}", plan.value));
    }
    if reconfigured != plan.reconfigured {
        return Err(format!(
            "reconfigured {} but {reconfigured} GPUs changed",
            plan.reconfigured
        ));
    }
    if fragmentation != plan.fragmentation {
        return Err(format!(
            "fragmentation {} but layouts give {fragmentation}",
            plan.fragmentation
        ));
    }
    if let Some(b) = plan.bound
        && b < plan.value
    {
        return Err(format!("bound {b} below value {}", plan.value));
    }
    Ok(())
}

impl Plan {
    /// The plan as YAML (the same fields as the JSON contract).
    ///
    /// # Errors
    /// The serializer's message (not expected for this shape).
    pub fn to_yaml(&self) -> Result<String, String> {
        serde_saphyr::to_string(self).map_err(|e| e.to_string())
    }
}
