//! The event loops: Kueue (driving `gpuquota-cohort` incrementally) and ResourceQuota only.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use gpuquota_cohort::fair::ClockEvent;
use gpuquota_cohort::tree::FrId;
use gpuquota_cohort::world::{QueueRef, WlId};
use gpuquota_cohort::{Policy, Scheduler, World};
use gpuquota_model::diag::{Code, Diagnostic, Diagnostics};
use gpuquota_model::{Amount, ResourceName};

/// A run's usage as the engine's reservation holds it.
fn engine_usage(usage: &[(u32, i64)]) -> Vec<(FrId, Amount)> {
    usage
        .iter()
        .map(|&(fr, a)| (FrId::new(fr as usize), Amount(a)))
        .collect()
}

use crate::scenario::{Engine, Instance, Scenario};

/// A workload without a runtime and no `spec.end`: it runs until the last event.
pub const NO_END: Code = Code::new("no-end");
/// A scheduling instant did not settle within its cycle bound.
pub const CYCLE_BOUND: Code = Code::new("cycle-bound");

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEnd {
    /// Its runtime elapsed.
    Finished,
    /// Evicted by a preemption: upstream's reason and the preemptor's key.
    Preempted {
        /// `InClusterQueue`, `InCohortReclamation`, `InCohortReclaimWhileBorrowing`,
        /// `InCohortFairSharing`.
        reason: String,
        /// The preemptor (`namespace/name`).
        by: String,
    },
    /// Still running at the end.
    Cut,
}

impl RunEnd {
    /// `Finished`, `Preempted` or `Cut`.
    pub fn as_str(&self) -> &'static str {
        match self {
            RunEnd::Finished => "Finished",
            RunEnd::Preempted { .. } => "Preempted",
            RunEnd::Cut => "Cut",
        }
    }
}

/// One admission of a workload, from start to end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// ms since start.
    pub start_ms: i64,
    /// ms since start.
    pub end_ms: i64,
    /// How it ended.
    pub end: RunEnd,
    /// Usage charged: (index into [`Outcome::frs`], amount in Kueue units), sorted.
    pub usage: Vec<(u32, i64)>,
}

/// One workload's history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadOutcome {
    /// `namespace/name`.
    pub key: String,
    /// ClusterQueue (Kueue) or namespace (ResourceQuota); `""` when it has none.
    pub queue: String,
    /// Class.
    pub class: String,
    /// ms since start.
    pub created_ms: i64,
    /// Runs in time order.
    pub runs: Vec<Run>,
    /// Completion, ms since start.
    pub finished_ms: Option<i64>,
    /// Upstream's pending reason and message, when pending at the end.
    pub pending: Option<(String, String)>,
}

/// A queue's quota as the report shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueOutcome {
    /// Name.
    pub name: String,
    /// Nominal quota per flavor-resource (index into [`Outcome::frs`], amount).
    pub nominal: Vec<(u32, i64)>,
}

/// Counters of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counters {
    /// Events processed (arrivals, completions, retries, cycle ticks).
    pub events: u64,
    /// Scheduling cycles run.
    pub cycles: u64,
}

/// Everything a simulation produced; the report renders it.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The engine.
    pub engine: Engine,
    /// The end, ms since start.
    pub end_ms: i64,
    /// Flavor-resources named by runs and queues: (flavor, resource); the flavor is `""`
    /// under the `resourcequota` engine.
    pub frs: Vec<(String, ResourceName)>,
    /// Every workload, in key order.
    pub workloads: Vec<WorkloadOutcome>,
    /// Every queue, in name order.
    pub queues: Vec<QueueOutcome>,
    /// Warnings of the run (import, world and simulation), rendered.
    pub warnings: Vec<String>,
    /// Counters.
    pub counters: Counters,
}

// event kinds, in their order at one instant
const COMPLETION: u8 = 0;
const ARRIVAL: u8 = 1;
const TICK: u8 = 2;
/// A budget is spent or renews ([`crate::budget`]).
const BUDGET: u8 = 3;

pub(crate) type Event = Reverse<(i64, u8, u32, u32)>;

/// The arrivals known before the run, sorted once, beside the heap of the events the run
/// makes: a trace's 10⁵ arrivals then never sit in the heap, whose pops stay O(log running).
/// Both hold the same total order `(t, kind, wl, generation)` and an arrival is never in
/// both, so taking the smaller head of the two yields the heap's own sequence.
#[derive(Default)]
struct Arrivals {
    sorted: Vec<(i64, u8, u32, u32)>,
    next: usize,
}

impl Arrivals {
    /// The next event of the heap and the arrivals, and whether it is an arrival.
    fn peek(&self, heap: &BinaryHeap<Event>) -> Option<((i64, u8, u32, u32), bool)> {
        match (heap.peek(), self.sorted.get(self.next)) {
            (Some(Reverse(h)), Some(a)) if a < h => Some((*a, true)),
            (Some(Reverse(h)), _) => Some((*h, false)),
            (None, Some(a)) => Some((*a, true)),
            (None, None) => None,
        }
    }

    /// Removes the event [`Arrivals::peek`] returned.
    fn pop(&mut self, heap: &mut BinaryHeap<Event>, arrival: bool) {
        if arrival {
            self.next += 1;
        } else {
            heap.pop();
        }
    }
}

struct Live {
    run_start: i64,
    generation: u32,
    done_ms: i64,
    usage: Vec<(u32, i64)>,
}

/// The Kueue event loop over a built world.
///
/// # Complexity
/// O(events × log events + cycles × cycle cost); a cycle costs
/// O(ClusterQueues + nodes × flavor-resources + heads × (assignment + preemption)).
pub(crate) fn run_kueue<P: Policy>(
    sc: &Scenario,
    world: &World,
    mut s: Scheduler<'_, P>,
    insts: &[Option<&Instance>],
    warnings: &mut Diagnostics,
    budgets: &mut Option<crate::budget::Budgets>,
    progress: &mut crate::progress::Reporter<'_>,
) -> Outcome {
    let n = world.workloads.len();
    let frs: Vec<(String, ResourceName)> = world
        .frs
        .iter()
        .map(|&(f, r)| (world.flavors[f].name.clone(), world.resources[r].clone()))
        .collect();
    let latency = sc.cycle_latency_ms.max(0);
    let end = sc.end_ms;
    let mut heap: BinaryHeap<Event> = BinaryHeap::new();
    let mut runs: Vec<Vec<Run>> = vec![Vec::new(); n];
    let mut live: Vec<Option<Live>> = (0..n).map(|_| None).collect();
    let mut finished: Vec<Option<i64>> = vec![None; n];
    let mut generation: Vec<u32> = vec![0; n];
    let mut done: Vec<i64> = vec![0; n];
    let runtime = |wl: usize| insts[wl].and_then(|i| i.runtime_ms);
    // with budgets the arrivals stay in the heap: `budget::schedule` asks it whether other
    // events remain
    let mut arrivals = Arrivals::default();
    let split = budgets.is_none();
    for wl in world.workloads.ids() {
        s.withhold(wl);
    }
    // workloads admitted in the input run from the start
    for wl in 0..n {
        if let Some(r) = &s.reservations()[WlId::new(wl)] {
            let usage = r
                .usage
                .iter()
                .map(|&(fr, a)| (u32::from(fr), a.0))
                .collect();
            live[wl] = Some(Live {
                run_start: 0,
                generation: 0,
                done_ms: 0,
                usage,
            });
            if let Some(rt) = runtime(wl) {
                heap.push(Reverse((rt, COMPLETION, wl as u32, 0)));
            }
        } else {
            let created = insts[wl].map_or(0, |i| i.created_ms).max(0);
            if split {
                arrivals.sorted.push((created, ARRIVAL, wl as u32, 0));
            } else {
                heap.push(Reverse((created, ARRIVAL, wl as u32, 0)));
            }
        }
    }
    arrivals.sorted.sort_unstable();
    // admission fair sharing's LocalQueue ledgers start with the run
    s.clock(&ClockEvent::Start(0));
    for (wl, l) in live.iter().enumerate() {
        if let Some(l) = l {
            let usage = engine_usage(&l.usage);
            s.clock(&ClockEvent::RunStarted {
                wl: WlId::new(wl),
                usage: &usage,
                at: 0,
            });
        }
    }
    let mut counters = Counters::default();
    let mut busy_until: Option<i64> = None;
    let mut last_t: i64 = 0;
    let mut seen_admitted = s.admitted.len();
    let mut seen_preempted = s.preempted.len();
    let bound = (n as u32).saturating_mul(4).saturating_add(64);
    let mut budget_at: Option<i64> = None;
    while let Some(((t, _, _, _), _)) = arrivals.peek(&heap) {
        if end.is_some_and(|e| t >= e) {
            break;
        }
        last_t = t;
        progress.tick(t, counters.events);
        s.clock(&ClockEvent::Advance(t));
        let mut wake = false;
        while let Some(((t2, kind, wl, g), arrival)) = arrivals.peek(&heap) {
            if t2 != t {
                break;
            }
            arrivals.pop(&mut heap, arrival);
            counters.events += 1;
            let w = wl as usize;
            match kind {
                COMPLETION => {
                    if live[w].as_ref().is_some_and(|l| l.generation == g) {
                        let l = live[w].take();
                        s.finish(WlId::new(w));
                        if let Some(b) = budgets.as_mut() {
                            b.stopped(t, wl);
                        }
                        if let Some(l) = l {
                            let usage = engine_usage(&l.usage);
                            s.clock(&ClockEvent::RunEnded {
                                wl: WlId::new(w),
                                usage: &usage,
                                at: t,
                            });
                            runs[w].push(Run {
                                start_ms: l.run_start,
                                end_ms: t,
                                end: RunEnd::Finished,
                                usage: l.usage,
                            });
                        }
                        finished[w] = Some(t);
                        wake = true;
                    }
                }
                ARRIVAL => {
                    match budgets.as_mut() {
                        Some(b) => crate::budget::offer(&mut s, b, wl, true),
                        None => s.arrive(WlId::new(w)),
                    }
                    wake = true;
                }
                BUDGET => wake = true,
                _ => {
                    busy_until = None;
                    wake = true;
                }
            }
        }
        if let Some(b) = budgets.as_mut() {
            let mut stops = Vec::new();
            wake |= crate::budget::kueue_step(&mut s, b, t, &mut stops);
            for (v, by) in stops {
                let v = v as usize;
                if let Some(l) = live[v].take() {
                    generation[v] += 1;
                    done[v] = l.done_ms + (t - l.run_start);
                    runs[v].push(Run {
                        start_ms: l.run_start,
                        end_ms: t,
                        end: RunEnd::Preempted {
                            reason: gpuquota_model::budget::BUDGET_EXHAUSTED.to_owned(),
                            by,
                        },
                        usage: l.usage,
                    });
                }
            }
        }
        if !wake || busy_until.is_some_and(|b| b > t) {
            if let Some(b) = budgets.as_mut() {
                crate::budget::schedule(b, t, end, &mut heap, &mut budget_at, BUDGET);
            }
            continue;
        }
        let mut cycles_here = 0u32;
        loop {
            let o = s.cycle();
            if !o.ran {
                break;
            }
            counters.cycles += 1;
            cycles_here += 1;
            // evictions take effect at the cycle's start, admissions when it ends
            let mut ended: Vec<(WlId, Vec<(FrId, Amount)>)> = Vec::new();
            for p in &s.preempted[seen_preempted..] {
                let v = p.wl.index();
                if let Some(b) = budgets.as_mut() {
                    b.stopped(t, u32::from(p.wl));
                }
                if let Some(l) = live[v].take() {
                    ended.push((p.wl, engine_usage(&l.usage)));
                    generation[v] += 1;
                    done[v] = l.done_ms + (t - l.run_start);
                    runs[v].push(Run {
                        start_ms: l.run_start,
                        end_ms: t,
                        end: RunEnd::Preempted {
                            reason: p.reason.as_str().to_owned(),
                            by: world.workloads[p.preemptor].key.clone(),
                        },
                        usage: l.usage,
                    });
                }
            }
            seen_preempted = s.preempted.len();
            for (wl, usage) in &ended {
                s.clock(&ClockEvent::RunEnded {
                    wl: *wl,
                    usage,
                    at: t,
                });
            }
            let begin = t + latency;
            let mut started: Vec<(WlId, Vec<(FrId, Amount)>)> = Vec::new();
            for a in &s.admitted[seen_admitted..] {
                let w = a.wl.index();
                let Some(r) = &s.reservations()[a.wl] else {
                    continue;
                };
                let usage: Vec<(u32, i64)> = r
                    .usage
                    .iter()
                    .map(|&(fr, a)| (u32::from(fr), a.0))
                    .collect();
                started.push((a.wl, r.usage.clone()));
                let already = if sc.resume { done[w] } else { 0 };
                if let Some(b) = budgets.as_mut() {
                    b.started(begin, u32::from(a.wl), &usage);
                }
                generation[w] += 1;
                live[w] = Some(Live {
                    run_start: begin,
                    generation: generation[w],
                    done_ms: already,
                    usage,
                });
                if let Some(rt) = runtime(w) {
                    let left = (rt - already).max(0);
                    heap.push(Reverse((
                        begin + left,
                        COMPLETION,
                        u32::from(a.wl),
                        generation[w],
                    )));
                }
            }
            seen_admitted = s.admitted.len();
            // a workload admitted without admission checks is Admitted as the cycle reserves
            // its quota: admission fair sharing settles its entry penalty then
            for (wl, usage) in &started {
                s.clock(&ClockEvent::RunStarted {
                    wl: *wl,
                    usage,
                    at: t,
                });
            }
            if !o.changed() {
                break;
            }
            if latency > 0 {
                busy_until = Some(t + latency);
                heap.push(Reverse((t + latency, TICK, 0, 0)));
                break;
            }
            if cycles_here >= bound {
                warnings.push(Diagnostic::warning(
                    CYCLE_BOUND,
                    format!("the cycles at {t} ms did not settle within {bound} cycles; the instant was cut there"),
                ));
                break;
            }
        }
        if let Some(b) = budgets.as_mut() {
            crate::budget::schedule(b, t, end, &mut heap, &mut budget_at, BUDGET);
        }
    }
    if let Some(b) = budgets.as_mut() {
        b.advance(end.unwrap_or(last_t));
    }
    let end_ms = match end {
        Some(e) => e,
        None => {
            if live.iter().any(Option::is_some) {
                warnings.push(Diagnostic::warning(
                    NO_END,
                    "workloads without a gpuquota.dev/runtime run until spec.end, and the scenario has none: the run ends at the last event",
                ));
            }
            last_t
        }
    };
    progress.finish(end_ms, counters.events);
    let mut workloads = Vec::with_capacity(n);
    for (i, w) in world.workloads.iter().enumerate() {
        if let Some(l) = live[i].take() {
            runs[i].push(Run {
                start_ms: l.run_start,
                end_ms: end_ms.max(l.run_start),
                end: RunEnd::Cut,
                usage: l.usage,
            });
        }
        let queue = match &w.queue {
            QueueRef::Cq(c) => world.cluster_queues[*c].name.clone(),
            _ => String::new(),
        };
        let running_at_end = runs[i].last().is_some_and(|r| r.end == RunEnd::Cut);
        let pending = if finished[i].is_none() && !running_at_end {
            let created = insts[i].map_or(0, |x| x.created_ms);
            if end.is_some_and(|e| created >= e) {
                Some((
                    "Pending".to_owned(),
                    "created at or after the simulation's end".to_owned(),
                ))
            } else {
                budgets
                    .as_ref()
                    .and_then(|b| b.pending(i as u32))
                    .or_else(|| {
                        s.pending_reason(WlId::new(i))
                            .map(|p| (p.reason().to_owned(), p.message(world)))
                    })
            }
        } else {
            None
        };
        workloads.push(WorkloadOutcome {
            key: w.key.clone(),
            queue,
            class: insts[i].map(|x| x.class.clone()).unwrap_or_default(),
            created_ms: insts[i].map_or(0, |x| x.created_ms),
            runs: std::mem::take(&mut runs[i]),
            finished_ms: finished[i],
            pending,
        });
    }
    let queues = world
        .cluster_queues
        .iter()
        .map(|c| {
            let mut nominal = Vec::new();
            for g in &c.groups {
                for &f in &g.flavors {
                    for &r in &g.covered {
                        if let Some(fr) = world.fr(f, r) {
                            nominal.push((u32::from(fr), world.tree.quota(c.node, fr).nominal.0));
                        }
                    }
                }
            }
            nominal.sort_unstable();
            QueueOutcome {
                name: c.name.clone(),
                nominal,
            }
        })
        .collect();
    Outcome {
        engine: Engine::Kueue,
        end_ms,
        frs,
        workloads,
        queues,
        warnings: Vec::new(),
        counters,
    }
}

/// The ResourceQuota-only loop: a workload is created when its namespace's quotas allow it
/// (403 otherwise, retried by its controller), and runs at once.
///
/// # Complexity
/// O(attempts × (quotas of the namespace × hard keys) + events × log events).
#[allow(clippy::needless_range_loop)] // quota and key indexes address three parallel tables
pub(crate) fn run_resource_quota(
    sc: &Scenario,
    world: &World,
    insts: &[Option<&Instance>],
    warnings: &mut Diagnostics,
    budgets: &mut Option<crate::budget::Budgets>,
    progress: &mut crate::progress::Reporter<'_>,
) -> Outcome {
    let n = world.workloads.len();
    let nres = world.resources.len();
    // flavor-resources: one pseudo-flavor "" per resource
    let frs: Vec<(String, ResourceName)> = world
        .resources
        .iter()
        .map(|r| (String::new(), r.clone()))
        .collect();
    let demand: Vec<Vec<i64>> = world
        .workloads
        .iter()
        .map(|w| {
            let mut d = vec![0i64; nres];
            for ps in &w.pod_sets {
                for &(r, a) in &ps.per_pod {
                    d[r.index()] =
                        d[r.index()].saturating_add(a.saturating_mul(i64::from(ps.count)));
                }
            }
            d
        })
        .collect();
    let pods: Vec<i64> = world
        .workloads
        .iter()
        .map(|w| w.pod_sets.iter().map(|p| i64::from(p.count)).sum())
        .collect();
    // used[quota][hard key]
    let mut used: Vec<Vec<i64>> = world
        .resource_quotas
        .iter()
        .map(|q| vec![0; q.hard.len()])
        .collect();
    let applies = |q: usize, wl: usize| {
        let rq = &world.resource_quotas[q];
        let w = &world.workloads[WlId::new(wl)];
        rq.namespace == w.namespace
            && rq
                .object
                .applies_to_priority_class(w.priority_class.as_deref())
    };
    let charge = |q: usize, k: usize, wl: usize| -> i64 {
        match world.resource_quotas[q].hard[k].1 {
            None => pods[wl],
            Some(r) => demand[wl][r.index()],
        }
    };
    let mut heap: BinaryHeap<Event> = BinaryHeap::new();
    for (wl, inst) in insts.iter().enumerate() {
        let created = inst.map_or(0, |i| i.created_ms).max(0);
        heap.push(Reverse((created, ARRIVAL, wl as u32, 0)));
    }
    let end = sc.end_ms;
    let mut runs: Vec<Vec<Run>> = vec![Vec::new(); n];
    let mut live: Vec<Option<i64>> = vec![None; n];
    let mut finished: Vec<Option<i64>> = vec![None; n];
    let mut attempts: Vec<u32> = vec![0; n];
    let mut rejected: Vec<Option<(String, String)>> = vec![None; n];
    let mut counters = Counters::default();
    let mut last_t = 0;
    let mut budget_at: Option<i64> = None;
    let usage_of = |wl: usize| -> Vec<(u32, i64)> {
        demand[wl]
            .iter()
            .enumerate()
            .filter(|&(_, &a)| a != 0)
            .map(|(r, &a)| (r as u32, a))
            .collect()
    };
    while let Some(Reverse((t, kind, wl, _))) = heap.pop() {
        if end.is_some_and(|e| t >= e) {
            break;
        }
        last_t = t;
        counters.events += 1;
        progress.tick(t, counters.events);
        let w = wl as usize;
        if let Some(b) = budgets.as_mut() {
            b.advance(t);
            for (v, by) in b.to_stop() {
                let v = v as usize;
                if let Some(st) = live[v].take() {
                    b.stopped(t, v as u32);
                    for q in 0..used.len() {
                        if applies(q, v) {
                            for k in 0..used[q].len() {
                                used[q][k] -= charge(q, k, v);
                            }
                        }
                    }
                    runs[v].push(Run {
                        start_ms: st,
                        end_ms: t,
                        end: RunEnd::Preempted {
                            reason: gpuquota_model::budget::BUDGET_EXHAUSTED.to_owned(),
                            by,
                        },
                        usage: usage_of(v),
                    });
                    heap.push(Reverse((t, ARRIVAL, v as u32, 0)));
                }
            }
            for v in b.renewed() {
                heap.push(Reverse((t, ARRIVAL, v, 0)));
            }
            crate::budget::schedule(b, t, end, &mut heap, &mut budget_at, BUDGET);
            if kind == BUDGET {
                continue;
            }
            if kind == ARRIVAL
                && live[w].is_none()
                && let crate::budget::Gate::Wait(bi) = b.gate(wl)
            {
                b.hold(wl, bi);
                rejected[w] = None;
                continue;
            }
        }
        if kind == COMPLETION {
            if let Some(st) = live[w].take() {
                if let Some(b) = budgets.as_mut() {
                    b.stopped(t, wl);
                }
                for q in 0..used.len() {
                    if applies(q, w) {
                        for k in 0..used[q].len() {
                            used[q][k] -= charge(q, k, w);
                        }
                    }
                }
                runs[w].push(Run {
                    start_ms: st,
                    end_ms: t,
                    end: RunEnd::Finished,
                    usage: usage_of(w),
                });
                finished[w] = Some(t);
            }
            continue;
        }
        // an attempt to create the workload's pods
        let mut violation = None;
        'q: for q in 0..used.len() {
            if !applies(q, w) {
                continue;
            }
            for (k, (key, r, hard)) in world.resource_quotas[q].hard.iter().enumerate() {
                let req = charge(q, k, w);
                if req == 0 {
                    continue;
                }
                if used[q][k].saturating_add(req) > hard.0 {
                    let fmt = |v: i64| match r {
                        Some(r) => world.resources[*r].format_amount(Amount(v)),
                        None => v.to_string(),
                    };
                    violation = Some((
                        "Forbidden".to_owned(),
                        format!(
                            "exceeded quota: {}, requested: {}={}, used: {}={}, limited: {}={}",
                            world.resource_quotas[q].name,
                            key,
                            fmt(req),
                            key,
                            fmt(used[q][k]),
                            key,
                            fmt(hard.0)
                        ),
                    ));
                    break 'q;
                }
            }
        }
        match violation {
            Some(v) => {
                attempts[w] += 1;
                rejected[w] = Some(v);
                let delay = sc.retry.delay_ms(attempts[w]);
                heap.push(Reverse((t.saturating_add(delay), ARRIVAL, wl, 0)));
            }
            None => {
                for q in 0..used.len() {
                    if applies(q, w) {
                        for k in 0..used[q].len() {
                            used[q][k] += charge(q, k, w);
                        }
                    }
                }
                rejected[w] = None;
                live[w] = Some(t);
                if let Some(b) = budgets.as_mut() {
                    b.started(t, wl, &usage_of(w));
                    crate::budget::schedule(b, t, end, &mut heap, &mut budget_at, BUDGET);
                }
                if let Some(rt) = insts[w].and_then(|i| i.runtime_ms) {
                    heap.push(Reverse((t + rt, COMPLETION, wl, 0)));
                }
            }
        }
    }
    if let Some(b) = budgets.as_mut() {
        b.advance(end.unwrap_or(last_t));
    }
    let end_ms = match end {
        Some(e) => e,
        None => {
            if live.iter().any(Option::is_some) {
                warnings.push(Diagnostic::warning(
                    NO_END,
                    "workloads without a gpuquota.dev/runtime run until spec.end, and the scenario has none: the run ends at the last event",
                ));
            }
            last_t
        }
    };
    progress.finish(end_ms, counters.events);
    let mut workloads = Vec::with_capacity(n);
    for (i, w) in world.workloads.iter().enumerate() {
        if let Some(st) = live[i].take() {
            runs[i].push(Run {
                start_ms: st,
                end_ms: end_ms.max(st),
                end: RunEnd::Cut,
                usage: usage_of(i),
            });
        }
        let running = runs[i].last().is_some_and(|r| r.end == RunEnd::Cut);
        let held = budgets.as_ref().and_then(|b| b.pending(i as u32));
        let pending = if finished[i].is_none() && !running {
            Some(held.or_else(|| rejected[i].take()).unwrap_or_else(|| {
                (
                    "Pending".to_owned(),
                    "created at or after the simulation's end".to_owned(),
                )
            }))
        } else {
            None
        };
        workloads.push(WorkloadOutcome {
            key: w.key.clone(),
            queue: w.namespace.clone(),
            class: insts[i].map(|x| x.class.clone()).unwrap_or_default(),
            created_ms: insts[i].map_or(0, |x| x.created_ms),
            runs: std::mem::take(&mut runs[i]),
            finished_ms: finished[i],
            pending,
        });
    }
    // queues: namespaces with a ResourceQuota, their requests caps as nominal
    let mut by_ns: BTreeMap<String, BTreeMap<u32, i64>> = BTreeMap::new();
    for q in &world.resource_quotas {
        let e = by_ns.entry(q.namespace.clone()).or_default();
        for (_, r, hard) in &q.hard {
            if let Some(r) = r {
                let v = e.entry(u32::from(*r)).or_insert(i64::MAX);
                *v = (*v).min(hard.0);
            }
        }
    }
    let queues = by_ns
        .into_iter()
        .map(|(name, m)| QueueOutcome {
            name,
            nominal: m.into_iter().collect(),
        })
        .collect();
    Outcome {
        engine: Engine::ResourceQuota,
        end_ms,
        frs,
        workloads,
        queues,
        warnings: Vec::new(),
        counters,
    }
}
