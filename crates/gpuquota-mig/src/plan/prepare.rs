//! Preparation: GPUs grouped into classes, candidate layouts and supply options.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use indexmap::IndexMap;

use super::{GpuPlan, Plan, PlanError, PlannedInstance};

use crate::catalogue::{Engines, GpuModel};
use crate::input::{Mode, PlanInstance, ResolvedGpu};
use crate::layout::{Instance, Layout, add_engines, options};

/// Model, current layout, busy instances, whole-GPU busy: GPUs with equal keys share options.
pub(crate) type ClassKey = (u16, Option<Vec<Instance>>, Vec<Instance>, bool);
/// Class, supply option, assigned vector, cost.
pub(crate) type RealiseKey = (usize, Vec<u32>, Vec<u32>, u32);

/// One candidate layout of a class.
#[derive(Debug, Clone)]
pub(crate) struct Cand {
    pub(crate) layout: CandLayout,
    pub(crate) r: u32,
    /// Idle instances that can serve demand: (instance, demand index).
    pub(crate) servable: Vec<(Instance, usize)>,
    /// Supply per demand index (uncapped).
    pub(crate) supply: Vec<u32>,
}

/// Where a candidate's layout lives (no copies of the model's layout table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CandLayout {
    /// MIG disabled.
    Disabled,
    /// The GPU's current layout.
    Current,
    /// `model.layouts()[i]`.
    Model(u32),
}

/// A supply option (greedy, bound).
#[derive(Debug, Clone)]
pub(crate) struct SupplyOpt {
    pub(crate) s: Vec<u32>,
    pub(crate) r: u32,
}

/// An exact option: assigned vector, cost, candidate, subset of `servable`.
#[derive(Debug, Clone)]
pub(crate) struct ExactOpt {
    pub(crate) a: Vec<u32>,
    pub(crate) cost: u64,
    pub(crate) cand: usize,
    pub(crate) subset: u16,
}

#[derive(Debug)]
pub(crate) struct Class<'c> {
    pub(crate) model: &'c GpuModel,
    pub(crate) busy: Vec<Instance>,
    /// Candidate 0: the current layout (or MIG disabled).
    pub(crate) cand0: Cand,
    /// The class-specific candidates 1.. (layouts containing every busy instance), as indices
    /// into the model's layouts: their [`Cand`]s are built on demand ([`Class::cand`]), so a
    /// pinned GPU with a few hundred feasible layouts costs no allocation per layout.
    pub(crate) own: Vec<u32>,
    /// Demand index of each profile of the model (shared by the model's classes).
    pub(crate) qmap: Arc<Vec<Option<usize>>>,
    /// Uncapped supply of every model layout on an idle GPU, `nq` entries per layout.
    pub(crate) idle_supply: Arc<Vec<u32>>,
    /// Supply the busy instances take out of a layout that contains them all.
    pub(crate) busy_supply: Vec<u32>,
    /// The current layout (`None` = MIG disabled).
    pub(crate) current: Option<Layout>,
    /// Candidates shared by every idle GPU of the model.
    pub(crate) shared: Option<Arc<SharedCands>>,
    pub(crate) supply_opts: Vec<SupplyOpt>,
    pub(crate) gpus: Vec<usize>,
}

impl Class<'_> {
    /// Candidates 0 (current) and 1.. (class-specific): the index where shared ones start.
    pub(crate) fn own_len(&self) -> usize {
        1 + self.own.len()
    }

    /// Candidate `k`: the current layout, a class-specific one (built here), or a shared one.
    pub(crate) fn cand(&self, k: usize) -> Cow<'_, Cand> {
        if k == 0 {
            return Cow::Borrowed(&self.cand0);
        }
        match k.checked_sub(self.own_len()) {
            None => Cow::Owned(self.own_cand(k - 1)),
            Some(j) => Cow::Borrowed(
                self.shared
                    .as_ref()
                    .and_then(|v| v.cands.get(j))
                    .unwrap_or(&self.cand0),
            ),
        }
    }

    /// The class-specific candidate `j` (candidate `j + 1`).
    fn own_cand(&self, j: usize) -> Cand {
        let li = self.own[j];
        make_cand(
            &self.qmap,
            &self.busy,
            self.busy_supply.len(),
            (CandLayout::Model(li), self.model.layouts().get(li as usize)),
            1,
        )
    }

    /// Every candidate in index order.
    pub(crate) fn cands(&self) -> impl Iterator<Item = Cow<'_, Cand>> {
        (0..self.own_len()).map(|k| self.cand(k)).chain(
            self.shared
                .iter()
                .flat_map(|v| v.cands.iter().map(Cow::Borrowed)),
        )
    }

    /// Whether the class-specific candidate `j` has capped supply `s`, from the model's
    /// supply table without building the candidate.
    ///
    /// # Complexity
    /// O(Q).
    pub(crate) fn own_supply_is(&self, j: usize, s: &[u32], demand: &[u32]) -> bool {
        let nq = self.busy_supply.len();
        let li = self.own[j] as usize;
        self.idle_supply
            .get(li * nq..(li + 1) * nq)
            .is_some_and(|row| {
                row.iter()
                    .zip(&self.busy_supply)
                    .zip(demand)
                    .map(|((x, b), d)| x.saturating_sub(*b).min(*d))
                    .eq(s.iter().copied())
            })
    }

    pub(crate) fn layout(&self, cand: &Cand) -> Option<&Layout> {
        match cand.layout {
            CandLayout::Disabled => None,
            CandLayout::Current => self.current.as_ref(),
            CandLayout::Model(i) => self.model.layouts().get(i as usize),
        }
    }
}

/// Per-model placement tables for the fragmentation measure.
#[derive(Debug)]
pub(crate) struct Tables {
    pub(crate) opts: Vec<(u16, Engines, u8)>,
}

/// A problem with its option tables built, ready for the greedy or the exact solver.
#[derive(Debug)]
pub(crate) struct Prepared<'p, 'c> {
    pub(crate) problem: &'p PlanInstance<'c>,
    pub(crate) classes: Vec<Class<'c>>,
    pub(crate) class_of: Vec<usize>,
    /// GPUs by class, then input position: the order every pass walks GPUs in.
    pub(crate) order: Vec<usize>,
    pub(crate) demand: Vec<u32>,
    pub(crate) weight: Vec<u64>,
    pub(crate) tables: BTreeMap<u16, Tables>,
}

/// Checks that `Σ weight × count` of the demand fits in `u64`, the one input the planner
/// cannot run.
///
/// # Errors
/// [`PlanError::Overflow`].
///
/// # Complexity
/// O(Q) for Q demanded names.
pub(crate) fn check_weights(problem: &PlanInstance<'_>) -> Result<(), PlanError> {
    let mut total = 0u64;
    for d in &problem.demand {
        total = d
            .weight
            .checked_mul(u64::from(d.count))
            .and_then(|x| total.checked_add(x))
            .ok_or(PlanError::Overflow("sum of weight x count"))?;
    }
    Ok(())
}

impl<'p, 'c> Prepared<'p, 'c> {
    /// Groups identical GPUs and builds their candidate layouts and supply options.
    ///
    /// # Errors
    /// [`PlanError::Overflow`] if `Σ weight × count` exceeds `u64`.
    ///
    /// # Complexity
    /// O(C · L · (n + Q)) for C classes, L layouts per model, n instances, Q demanded names.
    #[cfg(any(test, feature = "testkit"))]
    pub(crate) fn new(problem: &'p PlanInstance<'c>) -> Result<Self, PlanError> {
        check_weights(problem)?;
        Ok(Prepared::build(problem))
    }

    /// [`Prepared::new`] on a problem whose weights are checked ([`check_weights`]).
    pub(crate) fn build(problem: &'p PlanInstance<'c>) -> Self {
        let demand: Vec<u32> = problem.demand.iter().map(|d| d.count).collect();
        let weight: Vec<u64> = problem.demand.iter().map(|d| d.weight).collect();
        // Classes in key order (model, current layout, busy set), never in input order, so
        // that every later pass that walks classes is independent of the GPU order.
        let mut keys: BTreeMap<ClassKey, Vec<usize>> = BTreeMap::new();
        for (gi, g) in problem.gpus.iter().enumerate() {
            let key = (
                g.model.index().0,
                g.current.as_ref().map(|l| l.instances().to_vec()),
                g.busy.clone(),
                g.whole_busy,
            );
            keys.entry(key).or_default().push(gi);
        }
        let mut classes: Vec<Class<'c>> = Vec::with_capacity(keys.len());
        let mut class_of = vec![0usize; problem.gpus.len()];
        let mut order = Vec::with_capacity(problem.gpus.len());
        let mut tables = BTreeMap::new();
        let mut models: BTreeMap<u16, ModelData> = BTreeMap::new();
        for members in keys.into_values() {
            let ci = classes.len();
            let g = &problem.gpus[members[0]];
            let md = models
                .entry(g.model.index().0)
                .or_insert_with(|| model_data(problem, g.model, &demand));
            let mut class = build_class(problem, g, &demand, md);
            tables.entry(g.model.index().0).or_insert_with(|| Tables {
                opts: options(g.model)
                    .into_iter()
                    .map(|(p, _, m, e)| {
                        let c = g.model.profile_at(p).map_or(0, |x| x.compute_slices());
                        (m, e, c)
                    })
                    .collect(),
            });
            for &gi in &members {
                class_of[gi] = ci;
            }
            order.extend_from_slice(&members);
            class.gpus = members;
            classes.push(class);
        }
        Prepared {
            problem,
            classes,
            class_of,
            order,
            demand,
            weight,
            tables,
        }
    }

    pub(crate) fn r_of(&self, choice: &[usize]) -> u32 {
        choice
            .iter()
            .enumerate()
            .map(|(g, &o)| self.classes[self.class_of[g]].supply_opts[o].r)
            .sum()
    }

    pub(crate) fn caps(&self) -> Vec<u32> {
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

    pub(crate) fn value_of(&self, choice: &[usize]) -> u64 {
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

    /// Fragmentation of a GPU whose held instances are the busy ones plus `subset` of the
    /// candidate's servable instances.
    pub(crate) fn frag(&self, class: &Class<'_>, cand: &Cand, subset: u16) -> u32 {
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

    pub(crate) fn instances_of(&self, class: &Class<'_>, cand: &Cand) -> usize {
        class.layout(cand).map_or(0, |l| l.instances().len())
    }

    pub(crate) fn assemble(
        &self,
        picks: &[(usize, u16, u32)],
        optimal: bool,
        bound: Option<u64>,
    ) -> Plan {
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
                .layout(&cand)
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
pub(crate) struct SharedCands {
    pub(crate) cands: Vec<Cand>,
    pub(crate) by_supply: BTreeMap<Vec<u32>, Vec<usize>>,
}

/// Per-model data shared by the classes of one model.
#[derive(Debug)]
pub(crate) struct ModelData {
    pub(crate) qmap: Arc<Vec<Option<usize>>>,
    /// Uncapped supply of every layout on an idle GPU, `Q` entries per layout.
    pub(crate) idle_supply: Arc<Vec<u32>>,
    /// Every layout serving some demand, as a candidate of an idle GPU (cost 1).
    pub(crate) idle: Arc<SharedCands>,
    /// Distinct capped supplies of `idle`.
    pub(crate) idle_opts: Vec<SupplyOpt>,
    /// Indices of the layouts containing each instance.
    pub(crate) containing: BTreeMap<Instance, Vec<u32>>,
    /// Profile-multiset id of each layout (equal ids = equal multisets).
    pub(crate) kappa: Vec<u32>,
}

pub(crate) fn make_cand(
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
pub(crate) fn supply_options<'a>(
    seed: Vec<SupplyOpt>,
    more: impl Iterator<Item = (&'a [u32], u32)>,
    demand: &[u32],
) -> Vec<SupplyOpt> {
    let mut dedup = SupplyDedup::default();
    for o in &seed {
        dedup.add(&o.s, o.r, demand);
    }
    for (s, r) in more {
        dedup.add(s, r, demand);
    }
    dedup.opts
}

/// Distinct capped supplies in first-seen order, each at its least cost; a supply already
/// seen costs one map lookup and no allocation.
#[derive(Default)]
pub(crate) struct SupplyDedup {
    seen: BTreeMap<Vec<u32>, usize>,
    opts: Vec<SupplyOpt>,
    buf: Vec<u32>,
}

impl SupplyDedup {
    /// Adds `s` capped at `demand` at cost `r`.
    ///
    /// # Complexity
    /// O(Q · log k) for k distinct supplies so far.
    pub(crate) fn add(&mut self, s: &[u32], r: u32, demand: &[u32]) {
        self.buf.clear();
        self.buf
            .extend(s.iter().zip(demand).map(|(s, d)| (*s).min(*d)));
        match self.seen.get(self.buf.as_slice()) {
            Some(&i) => self.opts[i].r = self.opts[i].r.min(r),
            None => {
                self.seen.insert(self.buf.clone(), self.opts.len());
                self.opts.push(SupplyOpt {
                    s: self.buf.clone(),
                    r,
                });
            }
        }
    }
}

/// Keeps option 0 (the current layout) and every option no other option dominates
/// (at least the same supply for at most the same cost).
pub(crate) fn pareto(opts: Vec<SupplyOpt>) -> Vec<SupplyOpt> {
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

pub(crate) fn model_data(
    problem: &PlanInstance<'_>,
    model: &GpuModel,
    demand: &[u32],
) -> ModelData {
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
    let mut idle_supply = Vec::with_capacity(model.layouts().len() * demand.len());
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
        idle_supply.extend_from_slice(&c.supply);
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
        qmap: Arc::new(qmap),
        idle_supply: Arc::new(idle_supply),
        idle: Arc::new(SharedCands {
            cands: idle,
            by_supply,
        }),
        idle_opts,
        containing,
        kappa,
    }
}

pub(crate) fn build_class<'c>(
    problem: &PlanInstance<'c>,
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
    let mut own: Vec<u32> = Vec::new();
    let mut shared = None;
    // What the busy instances take out of a layout that holds them all (each counted once,
    // as `make_cand` skips them).
    let mut busy_supply = vec![0u32; nq];
    let distinct: std::collections::BTreeSet<&Instance> = g.busy.iter().collect();
    for b in distinct {
        if let Some(Some(q)) = md.qmap.get(usize::from(b.profile.0)) {
            busy_supply[*q] += 1;
        }
    }
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
            cand0,
            own,
            qmap: Arc::clone(&md.qmap),
            idle_supply: Arc::clone(&md.idle_supply),
            busy_supply,
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
        let mut dedup = SupplyDedup::default();
        dedup.add(&cand0.supply, 0, demand);
        let mut supply = vec![0u32; nq];
        if let (false, Some((first, rest))) = (missing, lists.split_first()) {
            for &li in first.iter() {
                if !rest.iter().all(|v| v.binary_search(&li).is_ok()) {
                    continue;
                }
                if model.layouts().get(li as usize).is_none() {
                    continue;
                }
                if k0.is_some() && md.kappa.get(li as usize).copied() == k0 {
                    continue;
                }
                // The layout holds every busy instance, so its supply here is its idle
                // supply minus theirs: nonzero exactly when an idle instance serves demand.
                let row = li as usize * nq;
                let Some(idle) = md.idle_supply.get(row..row + nq) else {
                    continue;
                };
                for ((x, i), b) in supply.iter_mut().zip(idle).zip(&busy_supply) {
                    *x = i.saturating_sub(*b);
                }
                if supply.iter().any(|x| *x > 0) {
                    own.push(li);
                    dedup.add(&supply, 1, demand);
                }
            }
        }
        dedup.opts
    };
    Class {
        model,
        busy: g.busy.clone(),
        cand0,
        own,
        qmap: Arc::clone(&md.qmap),
        idle_supply: Arc::clone(&md.idle_supply),
        busy_supply,
        current: g.current.clone(),
        shared,
        supply_opts: pareto(opts),
        gpus: Vec::new(),
    }
}

/// `F` of one GPU: free compute slices minus the compute slices of the largest
/// profile that still has a legal placement in the units the held instances leave free.
pub(crate) fn fragmentation(
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

/// `F` of one GPU holding `held` (busy plus assigned instances).
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
