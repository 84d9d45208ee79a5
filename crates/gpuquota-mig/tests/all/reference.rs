//! An exhaustive reference solver, written independently of the planner: layouts are
//! enumerated with `check` as the only oracle, fragmentation is recomputed from its definition,
//! and GPUs are combined by brute force.

use std::collections::BTreeMap;
use std::sync::Mutex;

use gpuquota_mig::{GpuModel, Instance, Mode, PlanInstance, check};

/// Every valid layout of `model`, grown one placement at a time (placements in (start,
/// profile) order, so each set appears once); validity is monotone under subsets.
pub(crate) fn all_layouts(model: &GpuModel) -> Vec<Vec<Instance>> {
    static CACHE: Mutex<BTreeMap<u16, Vec<Vec<Instance>>>> = Mutex::new(BTreeMap::new());
    if let Some(v) = CACHE.lock().expect("lock").get(&model.index().0) {
        return v.clone();
    }
    let v = enumerate(model);
    CACHE
        .lock()
        .expect("lock")
        .insert(model.index().0, v.clone());
    v
}

fn enumerate(model: &GpuModel) -> Vec<Vec<Instance>> {
    let mut opts: Vec<Instance> = Vec::new();
    for p in model.profiles() {
        for pl in p.placements() {
            opts.push(Instance {
                start: pl.start,
                profile: p.index(),
            });
        }
    }
    opts.sort();
    let mut out = vec![Vec::new()];
    let mut frontier: Vec<(usize, Vec<Instance>)> = vec![(0, Vec::new())];
    while let Some((from, set)) = frontier.pop() {
        for (i, o) in opts.iter().enumerate().skip(from) {
            let mut next = set.clone();
            next.push(*o);
            if check(model, &next).is_empty() {
                out.push(next.clone());
                frontier.push((i + 1, next));
            }
        }
    }
    for l in &mut out {
        l.sort();
    }
    out.sort();
    out
}

fn units(model: &GpuModel, i: &Instance) -> u32 {
    let size = model.profile_at(i.profile).map_or(0, |p| p.size());
    ((1u32 << size) - 1) << i.start
}

/// F of one GPU by definition: free compute minus the largest profile that can still be
/// legally added (no overlap with held units, engine rules via `check`).
pub(crate) fn frag(model: &GpuModel, held: &[Instance]) -> u32 {
    let any_placement = model.profiles().iter().any(|p| !p.placements().is_empty());
    if !any_placement {
        return 0;
    }
    let used: u32 = held
        .iter()
        .map(|i| {
            u32::from(
                model
                    .profile_at(i.profile)
                    .map_or(0, |p| p.compute_slices()),
            )
        })
        .sum();
    let covered = held.iter().fold(0u32, |m, i| m | units(model, i));
    let mut largest = 0u32;
    for p in model.profiles() {
        for pl in p.placements() {
            let cand = Instance {
                start: pl.start,
                profile: p.index(),
            };
            if units(model, &cand) & covered != 0 {
                continue;
            }
            let mut with = held.to_vec();
            with.push(cand);
            if check(model, &with).is_empty() {
                largest = largest.max(u32::from(p.compute_slices()));
            }
        }
    }
    u32::from(model.compute_slices())
        .saturating_sub(used)
        .saturating_sub(largest)
}

fn multiset(model: &GpuModel, l: &[Instance]) -> Vec<u32> {
    let mut c = vec![0u32; model.profiles().len()];
    for i in l {
        c[usize::from(i.profile.0)] += 1;
    }
    c
}

/// The optimum `(W, R, F)` by exhaustive search.
pub(crate) fn optimum(problem: &PlanInstance<'_>) -> (u64, u32, u32) {
    let nq = problem.demand.len();
    let demand: Vec<u32> = problem.demand.iter().map(|d| d.count).collect();
    // Per GPU: assigned vector -> min (r, f).
    let mut tables: Vec<BTreeMap<Vec<u32>, (u32, u32)>> = Vec::new();
    let mut frag_memo: BTreeMap<(u16, Vec<Instance>), u32> = BTreeMap::new();
    for g in &problem.gpus {
        let m = g.model;
        // (layout or None for MIG disabled, r)
        let mut cands: Vec<(Option<Vec<Instance>>, u32)> =
            vec![(g.current.as_ref().map(|l| l.instances().to_vec()), 0)];
        let movable = match &g.current {
            None => !g.whole_busy,
            Some(_) => problem.mode == Mode::PinBusyInstances || g.busy.is_empty(),
        };
        if movable {
            for l in all_layouts(m) {
                if !g.busy.iter().all(|b| l.contains(b)) {
                    continue;
                }
                if let Some(l0) = &g.current
                    && multiset(m, l0.instances()) == multiset(m, &l)
                {
                    continue;
                }
                cands.push((Some(l), 1));
            }
        }
        let mut table: BTreeMap<Vec<u32>, (u32, u32)> = BTreeMap::new();
        for (layout, r) in cands {
            let Some(layout) = layout else {
                table
                    .entry(vec![0; nq])
                    .and_modify(|c| *c = (*c).min((r, 0)))
                    .or_insert((r, 0));
                continue;
            };
            let servable: Vec<(Instance, usize)> = layout
                .iter()
                .filter(|i| !g.busy.contains(i))
                .filter_map(|i| {
                    let res = m.profile_at(i.profile)?.resource_name();
                    let q = problem.demand.iter().position(|d| d.resource == res)?;
                    Some((*i, q))
                })
                .collect();
            for mask in 0..(1u32 << servable.len()) {
                let mut a = vec![0u32; nq];
                let mut held = g.busy.clone();
                for (bit, (i, q)) in servable.iter().enumerate() {
                    if mask & (1 << bit) != 0 {
                        a[*q] += 1;
                        held.push(*i);
                    }
                }
                if a.iter().zip(&demand).any(|(x, d)| x > d) {
                    continue;
                }
                held.sort();
                let f = *frag_memo
                    .entry((m.index().0, held.clone()))
                    .or_insert_with(|| frag(m, &held));
                let cost = (r, f);
                table
                    .entry(a)
                    .and_modify(|c| *c = (*c).min(cost))
                    .or_insert(cost);
            }
        }
        tables.push(table);
    }
    // Brute-force product over GPUs.
    let mut best: Option<(u64, u32, u32)> = None;
    let mut stack: Vec<(usize, Vec<u32>, u32, u32)> = vec![(0, vec![0; nq], 0, 0)];
    while let Some((g, a, r, f)) = stack.pop() {
        if g == tables.len() {
            let w: u64 = a
                .iter()
                .zip(&problem.demand)
                .map(|(x, d)| u64::from(*x) * d.weight)
                .sum();
            let better = match best {
                None => true,
                Some((bw, br, bf)) => {
                    (w, std::cmp::Reverse((r, f))) > (bw, std::cmp::Reverse((br, bf)))
                }
            };
            if better {
                best = Some((w, r, f));
            }
            continue;
        }
        for (ga, (gr, gf)) in &tables[g] {
            let sum: Vec<u32> = a.iter().zip(ga).map(|(x, y)| x + y).collect();
            if sum.iter().zip(&demand).any(|(x, d)| x > d) {
                continue;
            }
            stack.push((g + 1, sum, r + gr, f + gf));
        }
    }
    best.unwrap_or((0, 0, 0))
}

/// Model, current layout, busy instances, whole-GPU busy.
type GpuKey = (u16, Option<Vec<Instance>>, Vec<Instance>, bool);

/// The optimum `(W, R)` by a dynamic programme over GPUs on the supply vector capped at
/// demand (min `R` per state), with candidate layouts from [`all_layouts`]: written without
/// the planner's classes, options or LP.
pub(crate) fn optimum_wr(problem: &PlanInstance<'_>) -> (u64, u32) {
    let nq = problem.demand.len();
    let demand: Vec<u32> = problem.demand.iter().map(|d| d.count).collect();
    let mut states: BTreeMap<Vec<u32>, u32> = BTreeMap::new();
    states.insert(vec![0; nq], 0);
    let mut memo: BTreeMap<GpuKey, BTreeMap<Vec<u32>, u32>> = BTreeMap::new();
    for g in &problem.gpus {
        let m = g.model;
        let key = (
            m.index().0,
            g.current.as_ref().map(|l| l.instances().to_vec()),
            g.busy.clone(),
            g.whole_busy,
        );
        let table = memo.entry(key).or_insert_with(|| {
            let supply = |l: &[Instance]| -> Vec<u32> {
                let mut s = vec![0u32; nq];
                for i in l.iter().filter(|i| !g.busy.contains(i)) {
                    let res = m.profile_at(i.profile).map(|p| p.resource_name());
                    if let Some(q) = problem
                        .demand
                        .iter()
                        .position(|d| Some(d.resource.as_str()) == res)
                    {
                        s[q] = (s[q] + 1).min(demand[q]);
                    }
                }
                s
            };
            let mut t: BTreeMap<Vec<u32>, u32> = BTreeMap::new();
            t.insert(
                g.current
                    .as_ref()
                    .map_or(vec![0; nq], |l| supply(l.instances())),
                0,
            );
            let movable = match &g.current {
                None => !g.whole_busy,
                Some(_) => problem.mode == Mode::PinBusyInstances || g.busy.is_empty(),
            };
            if movable {
                for l in all_layouts(m) {
                    if !g.busy.iter().all(|b| l.contains(b)) {
                        continue;
                    }
                    if let Some(l0) = &g.current
                        && multiset(m, l0.instances()) == multiset(m, &l)
                    {
                        continue;
                    }
                    t.entry(supply(&l)).or_insert(1);
                }
            }
            t
        });
        let mut next: BTreeMap<Vec<u32>, u32> = BTreeMap::new();
        for (s, r) in &states {
            for (a, ra) in table.iter() {
                let sum: Vec<u32> = s
                    .iter()
                    .zip(a)
                    .zip(&demand)
                    .map(|((x, y), d)| (x + y).min(*d))
                    .collect();
                let e = next.entry(sum).or_insert(u32::MAX);
                *e = (*e).min(r + ra);
            }
        }
        states = next;
    }
    states
        .iter()
        .map(|(s, r)| {
            let w: u64 = s
                .iter()
                .zip(&problem.demand)
                .map(|(x, d)| u64::from(*x) * d.weight)
                .sum();
            (w, std::cmp::Reverse(*r))
        })
        .max()
        .map_or((0, 0), |(w, r)| (w, r.0))
}
