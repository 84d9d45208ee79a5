//! The search: which runs to simulate, and every configuration's figures from them.

use std::collections::{BTreeMap, BTreeSet};

use gpuquota_model::diag::{Diagnostic, Diagnostics};
use gpuquota_sim::sweep::Evaluator;
use rayon::prelude::*;

use crate::INVALID_ADVICE;
use crate::metric::{Run, Totals};
use crate::spec::Plan;

/// How an advice runs, beyond its plan.
#[derive(Default)]
pub struct Options<'a> {
    /// Worker threads (`None`: rayon's default, all cores or `RAYON_NUM_THREADS`).
    pub threads: Option<usize>,
    /// Called once per finished simulation (from any thread) with those finished and those
    /// planned: a progress bar's hook.
    pub progress: Option<&'a (dyn Fn(usize, usize) + Sync)>,
    /// Simulate every configuration instead of decomposing (the reference the tests and
    /// the benchmark compare with).
    pub exhaustive: bool,
}

/// The ClusterQueues each ClusterQueue can affect: one set per cohort tree, joined with
/// every other tree whose flavors share a Node (or a flavor, when the scenario has Nodes)
/// with it.
fn coupling(model: &gpuquota_model::Model) -> BTreeMap<String, usize> {
    let names: Vec<&String> = model.cluster_queues.keys().collect();
    let mut parent: Vec<usize> = (0..names.len()).collect();
    fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    let union = |p: &mut Vec<usize>, a: usize, b: usize| {
        let (ra, rb) = (find(p, a), find(p, b));
        if ra != rb {
            p[ra.max(rb)] = ra.min(rb);
        }
    };
    let root_cohort = |c: &str| -> String {
        let mut cur = c.to_owned();
        let mut seen = BTreeSet::new();
        while let Some(p) = model
            .cohorts
            .get(&cur)
            .and_then(|x| x.spec.parent_name.clone())
        {
            if !seen.insert(cur.clone()) {
                break;
            }
            cur = p;
        }
        cur
    };
    // the Nodes each flavor selects (a flavor without labels selects every Node)
    let nodes_of = |flavor: &str| -> BTreeSet<String> {
        let labels = model
            .resource_flavors
            .get(flavor)
            .map(|f| f.spec.node_labels.clone())
            .unwrap_or_default();
        model
            .nodes
            .iter()
            .filter(|(_, n)| {
                labels
                    .iter()
                    .all(|(k, v)| n.metadata.labels.get(k) == Some(v))
            })
            .map(|(name, _)| name.clone())
            .collect()
    };
    let mut by_key: BTreeMap<String, usize> = BTreeMap::new();
    for (i, n) in names.iter().enumerate() {
        let cq = &model.cluster_queues[*n];
        let mut keys = Vec::new();
        if let Some(c) = &cq.spec.cohort_name {
            keys.push(format!("cohort:{}", root_cohort(c)));
        }
        for f in cq.spec.resource_groups.iter().flat_map(|g| &g.flavors) {
            // without Nodes nothing but quota limits admission, so a shared flavor couples
            // queues only through a cohort
            if !model.nodes.is_empty() {
                keys.push(format!("flavor:{}", f.name));
            }
            keys.extend(nodes_of(&f.name).into_iter().map(|n| format!("node:{n}")));
        }
        for k in keys {
            match by_key.get(&k) {
                Some(&j) => union(&mut parent, i, j),
                None => {
                    by_key.insert(k, i);
                }
            }
        }
    }
    names
        .iter()
        .enumerate()
        .map(|(i, n)| ((*n).clone(), find(&mut parent, i)))
        .collect()
}

/// The ClusterQueues a knob's path edits; `None`: the whole scenario (a `spec` path).
fn knob_queues(model: &gpuquota_model::Model, path: &str) -> Option<BTreeSet<String>> {
    if let Some(r) = path.strip_prefix("clusterQueues.") {
        let cq = r.split('.').next().unwrap_or_default();
        if cq == "*" {
            return Some(model.cluster_queues.keys().cloned().collect());
        }
        return Some(BTreeSet::from([cq.to_owned()]));
    }
    if let Some(node) = path
        .strip_prefix("nodes.")
        .and_then(|r| r.strip_suffix(".count"))
    {
        let labels = model.nodes.get(node).map(|n| &n.metadata.labels)?;
        let flavors: BTreeSet<&String> = model
            .resource_flavors
            .iter()
            .filter(|(_, f)| {
                f.spec
                    .node_labels
                    .iter()
                    .all(|(k, v)| labels.get(k) == Some(v))
            })
            .map(|(n, _)| n)
            .collect();
        return Some(
            model
                .cluster_queues
                .iter()
                .filter(|(_, c)| {
                    c.spec
                        .resource_groups
                        .iter()
                        .flat_map(|g| &g.flavors)
                        .any(|f| flavors.contains(&f.name))
                })
                .map(|(n, _)| n.clone())
                .collect(),
        );
    }
    None
}

/// A set of knobs simulated together, and the ClusterQueues whose workloads its runs decide.
#[derive(Debug, Clone)]
pub(crate) struct Component {
    pub knobs: Vec<usize>,
    /// `None`: every queue (a whole-scenario knob).
    pub queues: Option<BTreeSet<String>>,
}

/// Groups the knobs: two knobs are in one component when the ClusterQueues they edit can
/// affect each other ([`coupling`]); a knob of the whole scenario joins everything. A KAI
/// scenario (one with KAI Queues) is one component: each session divides the whole
/// cluster among all queues, so every knob can move every queue's share.
pub(crate) fn components(plan: &Plan, model: &gpuquota_model::Model) -> Vec<Component> {
    if !model.queues.is_empty() {
        return vec![whole(plan)];
    }
    let group = coupling(model);
    let mut comps: Vec<(BTreeSet<usize>, Vec<usize>)> = Vec::new();
    let mut global = false;
    for (k, knob) in plan.knobs.iter().enumerate() {
        let Some(qs) = knob_queues(model, &knob.path) else {
            global = true;
            comps.push((BTreeSet::new(), vec![k]));
            continue;
        };
        let gs: BTreeSet<usize> = qs.iter().filter_map(|q| group.get(q).copied()).collect();
        let mut merged = (gs, vec![k]);
        let mut rest = Vec::new();
        for c in comps {
            if c.0.is_disjoint(&merged.0) {
                rest.push(c);
            } else {
                merged.0.extend(c.0);
                merged.1.extend(c.1);
            }
        }
        rest.push(merged);
        comps = rest;
    }
    if global {
        return vec![Component {
            knobs: (0..plan.knobs.len()).collect(),
            queues: None,
        }];
    }
    let mut out: Vec<Component> = comps
        .into_iter()
        .map(|(gs, mut ks)| {
            ks.sort_unstable();
            Component {
                knobs: ks,
                queues: Some(
                    group
                        .iter()
                        .filter(|(_, g)| gs.contains(g))
                        .map(|(q, _)| q.clone())
                        .collect(),
                ),
            }
        })
        .collect();
    out.sort_by(|a, b| a.knobs.cmp(&b.knobs));
    out
}

/// The sub-grid of a component: every combination of its knobs' values.
fn sub_points(plan: &Plan, c: &Component) -> usize {
    c.knobs
        .iter()
        .map(|&k| plan.knobs[k].labels.len())
        .product()
}

fn sub_coordinates(plan: &Plan, c: &Component, mut i: usize) -> Vec<usize> {
    let mut out = vec![0; c.knobs.len()];
    for (j, &k) in c.knobs.iter().enumerate().rev() {
        let n = plan.knobs[k].labels.len().max(1);
        out[j] = i % n;
        i /= n;
    }
    out
}

/// The runs of a search and how to combine them into every configuration's figures.
pub(crate) struct Evaluated {
    pub components: Vec<Component>,
    /// The scenario as written.
    pub baseline: Run,
    /// Per component, its sub-grid's runs in sub-grid order.
    pub runs: Vec<Vec<Run>>,
    /// Simulations made.
    pub simulated: usize,
    /// Why the decomposition was given up, if it was.
    pub note: Option<String>,
}

/// A simulation: its component (`None`: the scenario as written), its sub-grid point and its
/// sweep parameters.
pub(crate) type Job = (Option<usize>, usize, Vec<(String, String)>);

pub(crate) fn simulate_all(
    ev: &Evaluator<'_>,
    jobs: &[Job],
    opts: &Options<'_>,
) -> Result<Vec<Run>, Diagnostics> {
    let done = std::sync::atomic::AtomicUsize::new(0);
    let total = jobs.len();
    let one = |(_, _, params): &Job| -> Result<Run, Diagnostics> {
        let label = params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        let tag = |mut d: Diagnostics| {
            for x in &mut d.0 {
                x.message = format!("configuration ({label}): {}", x.message);
            }
            d
        };
        let run = if ev.is_kai() {
            let (sim, outcome) = ev.run_kai(params).map_err(tag)?;
            Run::read_kai(&sim, &outcome)
        } else {
            let (sc, report) = ev.run(params).map_err(tag)?;
            Run::read(&sc, &report)
        };
        if let Some(p) = opts.progress {
            p(
                done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
                total,
            );
        }
        Ok(run)
    };
    let all = || jobs.par_iter().map(one).collect::<Vec<_>>();
    let results = match opts.threads {
        None => all(),
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build()
            .map_err(|e| {
                Diagnostics(vec![Diagnostic::error(
                    INVALID_ADVICE,
                    format!("cannot start {n} threads: {e}"),
                )])
            })?
            .install(all),
    };
    results.into_iter().collect()
}

/// The components a search simulates: every knob together when `exhaustive`, else
/// [`components`].
pub(crate) fn planned(
    plan: &Plan,
    model: &gpuquota_model::Model,
    exhaustive: bool,
) -> Vec<Component> {
    if exhaustive {
        vec![whole(plan)]
    } else {
        components(plan, model)
    }
}

fn whole(plan: &Plan) -> Component {
    Component {
        knobs: (0..plan.knobs.len()).collect(),
        queues: None,
    }
}

/// The simulations of `comps`, in order: the scenario as written, then each component's
/// sub-grid in sub-grid order.
pub(crate) fn jobs(plan: &Plan, comps: &[Component]) -> Vec<Job> {
    let mut jobs: Vec<Job> = vec![(None, 0, Vec::new())];
    for (ci, c) in comps.iter().enumerate() {
        for i in 0..sub_points(plan, c) {
            let sub = sub_coordinates(plan, c, i);
            let params = c
                .knobs
                .iter()
                .zip(&sub)
                .flat_map(|(&k, &v)| plan.knobs[k].settings[v].iter().cloned())
                .collect();
            jobs.push((Some(ci), i, params));
        }
    }
    jobs
}

/// The runs of `jobs` ([`jobs`]) as an [`Evaluated`], or why the components are not
/// independent: no component's runs may change a workload or budget outside its queues,
/// and every run must have the same workloads.
pub(crate) fn combine(
    comps: Vec<Component>,
    jobs: &[Job],
    runs: Vec<Run>,
) -> Result<Evaluated, String> {
    let simulated = jobs.len();
    let mut runs = runs.into_iter();
    let baseline = runs.next().unwrap_or_else(unreachable_run);
    let mut per: Vec<Vec<Run>> = comps.iter().map(|_| Vec::new()).collect();
    for ((c, _, _), r) in jobs.iter().skip(1).zip(runs) {
        if let Some(c) = c {
            per[*c].push(r);
        }
    }
    let broken = if comps.len() > 1 {
        comps.iter().zip(&per).find_map(|(c, rs)| {
            let owned = c.queues.as_ref()?;
            rs.iter().find_map(|r| {
                if r.workloads.keys().ne(baseline.workloads.keys()) {
                    return Some("the configurations submit different workloads".to_owned());
                }
                for (k, w) in &r.workloads {
                    if !owned.contains(&w.queue) && baseline.workloads.get(k) != Some(w) {
                        return Some(format!(
                            "workload {k} of queue {} changed with another queue's knob",
                            w.queue
                        ));
                    }
                }
                for (b, x) in &r.budgets {
                    let mine = x.0.as_ref().is_some_and(|q| owned.contains(q));
                    if !mine && baseline.budgets.get(b) != Some(x) {
                        return Some(format!("budget {b} changed with another queue's knob"));
                    }
                }
                None
            })
        })
    } else {
        None
    };
    match broken {
        Some(why) => Err(why),
        None => Ok(Evaluated {
            components: comps,
            baseline,
            runs: per,
            simulated,
            note: None,
        }),
    }
}

/// Simulates the runs the search needs (module docs of the crate).
pub(crate) fn evaluate(
    plan: &Plan,
    ev: &Evaluator<'_>,
    model: &gpuquota_model::Model,
    opts: &Options<'_>,
) -> Result<Evaluated, Diagnostics> {
    let comps = planned(plan, model, opts.exhaustive);
    let js = jobs(plan, &comps);
    let runs = simulate_all(ev, &js, opts)?;
    match combine(comps, &js, runs) {
        Ok(e) => Ok(e),
        Err(why) => {
            // the decomposition does not hold: simulate the whole grid
            let comps = vec![whole(plan)];
            let js = jobs(plan, &comps);
            let runs = simulate_all(ev, &js, opts)?;
            let mut e = combine(comps, &js, runs).map_err(crate::refuse)?;
            e.note = Some(why);
            Ok(e)
        }
    }
}

fn unreachable_run() -> Run {
    Run {
        workloads: BTreeMap::new(),
        budgets: BTreeMap::new(),
        bill: None,
        currency: None,
        cards: BTreeMap::new(),
        card_type: BTreeMap::new(),
        window_ms: 0,
    }
}

impl Evaluated {
    /// The figures of grid point `coords`: each workload and budget from the run of the
    /// component owning its queue, the rest from the scenario as written; the bill and
    /// the cards as the baseline's plus each component's change.
    pub(crate) fn totals(&self, plan: &Plan, coords: &[usize], extra_cost: i64) -> Totals {
        let runs: Vec<&Run> = self
            .components
            .iter()
            .zip(&self.runs)
            .map(|(c, rs)| {
                let i = c.knobs.iter().fold(0usize, |acc, &k| {
                    acc * plan.knobs[k].labels.len() + coords[k]
                });
                &rs[i]
            })
            .collect();
        let owner = |queue: &str| -> Option<usize> {
            self.components
                .iter()
                .position(|c| c.queues.as_ref().is_none_or(|q| q.contains(queue)))
        };
        let mut t = Totals {
            window_ms: self.baseline.window_ms,
            extra_cost,
            bill: self.baseline.bill,
            cards: self.baseline.cards.clone(),
            ..Totals::default()
        };
        if self.components.len() == 1 && self.components[0].queues.is_none() {
            for w in runs[0].workloads.values() {
                t.add(w, runs[0]);
            }
        }
        let whole = self.components.len() == 1 && self.components[0].queues.is_none();
        for (k, w) in self.baseline.workloads.iter().filter(|_| !whole) {
            match owner(&w.queue) {
                Some(c) => {
                    let r = runs[c];
                    if let Some(x) = r.workloads.get(k) {
                        t.add(x, r);
                    }
                }
                None => t.add(w, &self.baseline),
            }
        }
        for (b, (q, left)) in &self.baseline.budgets {
            let v = match q.as_deref().and_then(owner) {
                Some(c) => runs[c].budgets.get(b).map_or(*left, |x| x.1),
                None if self.components.len() == 1 && self.components[0].queues.is_none() => {
                    runs[0].budgets.get(b).map_or(*left, |x| x.1)
                }
                None => *left,
            };
            t.budgets.insert(b.clone(), v);
        }
        for r in &runs {
            if let (Some(total), Some(base), Some(this)) = (t.bill, self.baseline.bill, r.bill) {
                t.bill = Some(total + (this - base));
            }
            for (ty, n) in &r.cards {
                let base = self.baseline.cards.get(ty).copied().unwrap_or(0);
                *t.cards.entry(ty.clone()).or_default() += n - base;
            }
            for ty in self.baseline.cards.keys() {
                if !r.cards.contains_key(ty) {
                    *t.cards.entry(ty.clone()).or_default() -= self.baseline.cards[ty];
                }
            }
        }
        t
    }
}
