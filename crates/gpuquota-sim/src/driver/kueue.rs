//! The Kueue event loop: `gpuquota-cohort`'s scheduler driven instant by instant, its
//! admissions and preemptions turned into runs.

use gpuquota_cohort::fair::ClockEvent;
use gpuquota_cohort::tree::FrId;
use gpuquota_cohort::world::{QueueRef, WlId};
use gpuquota_cohort::{Policy, Scheduler};
use gpuquota_model::Amount;
use gpuquota_model::diag::Diagnostic;

use super::capacity::Capacity;
use super::{Context, EndOfRun, Finish, created_after_end};
use crate::engine::{
    CYCLE_BOUND, Counters, HeldBack, Outcome, QueueOutcome, Run, RunEnd, UNSCHEDULABLE,
    WorkloadOutcome,
};
use crate::kernel::{Driver, Event, Kind, Queue};
use crate::scenario::Engine;

/// A run's usage as the engine's reservation holds it.
fn engine_usage(usage: &[(u32, i64)]) -> Vec<(FrId, Amount)> {
    usage
        .iter()
        .map(|&(fr, a)| (FrId::new(fr as usize), Amount(a)))
        .collect()
}

/// A reservation's usage as a [`Run`] records it.
fn run_usage(usage: &[(FrId, Amount)]) -> Vec<(u32, i64)> {
    usage.iter().map(|&(fr, a)| (u32::from(fr), a.0)).collect()
}

struct Live {
    reserved: i64,
    run_start: i64,
    generation: u32,
    done_ms: i64,
    usage: Vec<(u32, i64)>,
}

/// An admitted workload whose pods wait for free devices.
struct Waiting {
    reserved: i64,
    usage: Vec<(u32, i64)>,
}

/// Every workload's history so far, indexed by workload.
struct Histories {
    runs: Vec<Vec<Run>>,
    live: Vec<Option<Live>>,
    waiting: Vec<Option<Waiting>>,
    finished: Vec<Option<i64>>,
    /// Completion events of older runs are stale.
    generation: Vec<u32>,
    /// Runtime done by the ended runs (resumed with `resume`).
    done: Vec<i64>,
    /// The instant of each workload's last eviction by a preemption (`None`: never).
    evicted_at: Vec<Option<i64>>,
}

impl Histories {
    fn new(n: usize) -> Histories {
        Histories {
            runs: vec![Vec::new(); n],
            live: (0..n).map(|_| None).collect(),
            waiting: (0..n).map(|_| None).collect(),
            finished: vec![None; n],
            generation: vec![0; n],
            done: vec![0; n],
            evicted_at: vec![None; n],
        }
    }

    /// Ends the live run of `v` at `t` as preempted by `by` for `reason` (a run whose pods
    /// still waited ends where it starts); returns its usage as the engine holds it, `None`
    /// when `v` was not admitted.
    fn preempt(&mut self, v: usize, t: i64, reason: &str, by: &str) -> Option<Vec<(FrId, Amount)>> {
        let end = RunEnd::Preempted {
            reason: reason.to_owned(),
            by: by.to_owned(),
        };
        if let Some(wt) = self.waiting[v].take() {
            self.runs[v].push(Run {
                reserved_ms: wt.reserved,
                start_ms: t,
                end_ms: t,
                end,
                usage: wt.usage.clone(),
            });
            return Some(engine_usage(&wt.usage));
        }
        let l = self.live[v].take()?;
        let usage = engine_usage(&l.usage);
        self.generation[v] += 1;
        self.done[v] = l.done_ms + (t - l.run_start);
        self.runs[v].push(Run {
            reserved_ms: l.reserved,
            start_ms: l.run_start,
            end_ms: t,
            end,
            usage: l.usage,
        });
        Some(usage)
    }
}

/// The Kueue driver's state: the scheduler, every workload's history and the instant's
/// wake-up, with one method per phase of an instant.
struct KueueRun<'a, 'p, P: Policy> {
    cx: Context<'a, 'p>,
    s: Scheduler<'a, P>,
    h: Histories,
    /// Whether an event of the current instant may let a cycle change something.
    wake: bool,
    counters: Counters,
    /// With a cycle latency, no cycle runs before this instant.
    busy_until: Option<i64>,
    last_t: i64,
    /// The scheduler's admissions and preemptions already turned into runs.
    seen_admitted: usize,
    seen_preempted: usize,
    /// The most cycles at one instant.
    bound: u32,
    /// The budget wake-up already in the heap.
    budget_at: Option<i64>,
    /// The victims held back to the next millisecond after a second eviction at one
    /// instant, in time order.
    held_back: Vec<HeldBack>,
    /// The nodes' devices, when the cluster has Nodes.
    cap: Option<Capacity>,
}

/// The Kueue driver over the checked input (`cx.world` is `input.world()`) run by the
/// kernel, with fair sharing's policy when the input has one (else Kueue's classical
/// ordering and preemption).
///
/// # Complexity
/// O(events × log events + cycles × cycle cost); a cycle costs
/// O(ClusterQueues + nodes × flavor-resources + heads × (assignment + preemption)).
pub(crate) fn run_kueue<'a>(cx: Context<'a, '_>, input: &'a gpuquota_cohort::Input) -> Outcome {
    let end = cx.sc.end_ms;
    match input.scheduler() {
        gpuquota_cohort::Stepper::FairSharing(s) => {
            let (run, q) = KueueRun::new(cx, s);
            crate::kernel::run(run, q, end)
        }
        gpuquota_cohort::Stepper::Classical(s) => {
            let (run, q) = KueueRun::new(cx, s);
            crate::kernel::run(run, q, end)
        }
    }
}

impl<'a, 'p, P: Policy> KueueRun<'a, 'p, P> {
    /// Withholds every workload until its arrival; the workloads admitted in the input run
    /// from the start, and admission fair sharing's LocalQueue ledgers start with the run.
    fn new(cx: Context<'a, 'p>, mut s: Scheduler<'a, P>) -> (KueueRun<'a, 'p, P>, Queue) {
        let n = cx.world.workloads.len();
        for wl in cx.world.workloads.ids() {
            s.withhold(wl);
        }
        let bound = (n as u32).saturating_mul(4).saturating_add(64);
        let cap = Capacity::new(&cx.sc.model, cx.world);
        let mut run = KueueRun {
            cap,
            cx,
            s,
            h: Histories::new(n),
            wake: false,
            counters: Counters::default(),
            busy_until: None,
            last_t: 0,
            seen_admitted: 0,
            seen_preempted: 0,
            bound,
            budget_at: None,
            held_back: Vec::new(),
        };
        let q = run.seed();
        run.start_clock();
        run.seen_admitted = run.s.admitted.len();
        run.seen_preempted = run.s.preempted.len();
        (run, q)
    }

    /// The first events: the completions of the runs admitted in the input, every other
    /// workload's arrival.
    fn seed(&mut self) -> Queue {
        let insts = self.cx.insts;
        let mut arrivals = Vec::new();
        let mut completions = Vec::new();
        for (wl, inst) in insts.iter().enumerate() {
            if let Some(r) = &self.s.reservations()[WlId::new(wl)] {
                let usage = run_usage(&r.usage);
                if let Some(c) = self.cap.as_mut() {
                    let needs = c.kueue_needs(self.cx.world, &usage);
                    if let Err(m) = c.place(wl as u32, &needs) {
                        c.wait(wl as u32, needs, m);
                        self.h.waiting[wl] = Some(Waiting { reserved: 0, usage });
                        continue;
                    }
                }
                self.h.live[wl] = Some(Live {
                    reserved: 0,
                    run_start: 0,
                    generation: 0,
                    done_ms: 0,
                    usage,
                });
                if let Some(rt) = inst.and_then(|i| i.runtime_ms) {
                    completions.push(Event::new(
                        rt,
                        Kind::Completion {
                            index: wl as u32,
                            generation: 0,
                        },
                    ));
                }
            } else {
                let created = inst.map_or(0, |i| i.created_ms).max(0);
                arrivals.push(Event::new(created, Kind::Arrival(wl as u32)));
            }
        }
        let mut q = Queue::with_known(arrivals);
        for e in completions {
            q.push(e);
        }
        q
    }

    /// Admission fair sharing's ledgers open at 0 with the runs admitted in the input.
    fn start_clock(&mut self) {
        self.s.clock(&ClockEvent::Start(0));
        for (wl, (l, wt)) in self.h.live.iter().zip(&self.h.waiting).enumerate() {
            let held = l
                .as_ref()
                .map(|l| &l.usage)
                .or(wt.as_ref().map(|w| &w.usage));
            if let Some(held) = held {
                let usage = engine_usage(held);
                self.s.clock(&ClockEvent::RunStarted {
                    wl: WlId::new(wl),
                    usage: &usage,
                    at: 0,
                });
            }
        }
    }

    /// A victim held back by [`KueueRun::preemptions`] goes back to its queue (through the
    /// budgets' gate when the scenario has budgets, which may hold it back in turn).
    fn requeue_held(&mut self, wl: u32) {
        match self.cx.budgets.as_mut() {
            Some(b) => {
                let orig = b.original(wl).unwrap_or(wl);
                crate::budget::offer(&mut self.s, b, orig, false);
            }
            None => self.s.requeue(WlId::new(wl as usize)),
        }
    }

    /// The completion of run `g` of `wl` at `t`; false when that run already ended.
    fn complete(&mut self, q: &mut Queue, t: i64, wl: u32, g: u32) -> bool {
        let w = wl as usize;
        if self.h.live[w].as_ref().is_none_or(|l| l.generation != g) {
            return false;
        }
        let l = self.h.live[w].take();
        self.s.finish(WlId::new(w));
        if let Some(b) = self.cx.budgets.as_mut() {
            b.stopped(t, wl);
        }
        if let Some(l) = l {
            let usage = engine_usage(&l.usage);
            self.s.clock(&ClockEvent::RunEnded {
                wl: WlId::new(w),
                usage: &usage,
                at: t,
            });
            self.h.runs[w].push(Run {
                reserved_ms: l.reserved,
                start_ms: l.run_start,
                end_ms: t,
                end: RunEnd::Finished,
                usage: l.usage,
            });
        }
        self.h.finished[w] = Some(t);
        self.release(wl);
        self.start_waiting(q, t);
        true
    }

    /// Frees what `wl`'s pods hold, or takes it out of the waiting ones.
    fn release(&mut self, wl: u32) {
        if let Some(c) = self.cap.as_mut() {
            c.release(wl);
            c.unwait(wl);
        }
    }

    /// The waiting workloads whose devices are free at `t` start, in the order they began
    /// to wait.
    fn start_waiting(&mut self, q: &mut Queue, t: i64) {
        let Some(c) = self.cap.as_mut() else {
            return;
        };
        for wl in c.start_waiting() {
            if let Some(wt) = self.h.waiting[wl as usize].take() {
                self.start_run(q, wl as usize, wt.reserved, t, wt.usage);
            }
        }
    }

    /// `w`'s pods run from `begin`, its quota reserved since `reserved`: its budgets charge
    /// from `begin` and its runtime (what is left of it under `resume`) counts from there.
    fn start_run(
        &mut self,
        q: &mut Queue,
        w: usize,
        reserved: i64,
        begin: i64,
        usage: Vec<(u32, i64)>,
    ) {
        let already = if self.cx.sc.resume { self.h.done[w] } else { 0 };
        if let Some(b) = self.cx.budgets.as_mut() {
            b.started(begin, w as u32, &usage);
        }
        self.h.generation[w] += 1;
        let generation = self.h.generation[w];
        self.h.live[w] = Some(Live {
            reserved,
            run_start: begin,
            generation,
            done_ms: already,
            usage,
        });
        if let Some(rt) = self.cx.insts[w].and_then(|i| i.runtime_ms) {
            let left = (rt - already).max(0);
            q.push(Event::new(
                begin + left,
                Kind::Completion {
                    index: w as u32,
                    generation,
                },
            ));
        }
    }

    /// The budgets' step at `t` ([`crate::budget::kueue_step`]): the runs it stops end as
    /// preempted. Returns whether anything changed.
    fn budget_stops(&mut self, q: &mut Queue, t: i64) -> bool {
        let Some(b) = self.cx.budgets.as_mut() else {
            return false;
        };
        let mut stops = Vec::new();
        let wake = crate::budget::kueue_step(&mut self.s, b, t, &mut stops);
        for (v, by) in stops {
            self.h
                .preempt(v as usize, t, gpuquota_model::budget::BUDGET_EXHAUSTED, &by);
            self.release(v);
        }
        self.start_waiting(q, t);
        wake
    }

    /// The cycles at `t`, until one changes nothing, the cycle latency defers the next,
    /// or the instant reaches its bound (a warning).
    fn cycles_at(&mut self, q: &mut Queue, t: i64) {
        let latency = self.cx.sc.cycle_latency_ms.max(0);
        let mut cycles_here = 0u32;
        loop {
            let o = self.s.cycle();
            if !o.ran {
                break;
            }
            self.counters.cycles += 1;
            cycles_here += 1;
            // evictions take effect at the cycle's start, admissions when it ends
            self.preemptions(q, t);
            self.admissions(q, t, t + latency);
            if !o.changed() {
                break;
            }
            if latency > 0 {
                self.busy_until = Some(t + latency);
                q.push(Event::new(t + latency, Kind::Tick));
                break;
            }
            if cycles_here >= self.bound {
                let bound = self.bound;
                self.cx.warnings.push(Diagnostic::warning(
                    CYCLE_BOUND,
                    format!("the cycles at {t} ms did not settle within {bound} cycles; the instant was cut there"),
                ));
                break;
            }
        }
    }

    /// The cycle's preemptions end their victims' runs at `t`. A victim evicted for the
    /// second time at `t` (it was readmitted ahead of its preemptor: a preemption loop) is
    /// taken out of its queue until `t + 1` ms, when a `REQUEUE` event puts it back: an
    /// eviction takes time upstream, so one instant never sees a third run of it.
    fn preemptions(&mut self, q: &mut Queue, t: i64) {
        let world = self.cx.world;
        let mut ended: Vec<(WlId, Vec<(FrId, Amount)>)> = Vec::new();
        let mut held: Vec<WlId> = Vec::new();
        for p in &self.s.preempted[self.seen_preempted..] {
            if let Some(b) = self.cx.budgets.as_mut() {
                b.stopped(t, u32::from(p.wl));
            }
            let by = &world.workloads[p.preemptor].key;
            if let Some(usage) = self.h.preempt(p.wl.index(), t, p.reason.as_str(), by) {
                ended.push((p.wl, usage));
                let again = self.h.evicted_at[p.wl.index()] == Some(t);
                self.h.evicted_at[p.wl.index()] = Some(t);
                if again {
                    held.push(p.wl);
                    self.held_back.push(HeldBack {
                        victim: world.workloads[p.wl]
                            .key
                            .trim_end_matches(crate::budget::TWIN_SUFFIX)
                            .to_owned(),
                        preemptor: by.clone(),
                        at_ms: t,
                    });
                }
            }
            if let Some(c) = self.cap.as_mut() {
                c.release(u32::from(p.wl));
                c.unwait(u32::from(p.wl));
            }
        }
        self.seen_preempted = self.s.preempted.len();
        for wl in held {
            self.s.withhold(wl);
            q.push(Event::new(
                t.saturating_add(1),
                Kind::Requeue(u32::from(wl)),
            ));
        }
        self.start_waiting(q, t);
        for (wl, usage) in &ended {
            self.s.clock(&ClockEvent::RunEnded {
                wl: *wl,
                usage,
                at: t,
            });
        }
    }

    /// The cycle's admissions at `t` start their runs at `begin` (after the cycle latency),
    /// or wait for free devices holding their quota.
    fn admissions(&mut self, q: &mut Queue, t: i64, begin: i64) {
        let mut started: Vec<(WlId, Vec<(FrId, Amount)>)> = Vec::new();
        for a in &self.s.admitted[self.seen_admitted..] {
            if let Some(r) = &self.s.reservations()[a.wl] {
                started.push((a.wl, r.usage.clone()));
            }
        }
        self.seen_admitted = self.s.admitted.len();
        for (wl, held) in &started {
            let (w, usage) = (wl.index(), run_usage(held));
            if let Some(c) = self.cap.as_mut() {
                let needs = c.kueue_needs(self.cx.world, &usage);
                if let Err(m) = c.place(u32::from(*wl), &needs) {
                    c.wait(u32::from(*wl), needs, m);
                    self.h.waiting[w] = Some(Waiting {
                        reserved: begin,
                        usage,
                    });
                    continue;
                }
            }
            self.start_run(q, w, begin, begin, usage);
        }
        // a workload admitted without admission checks is Admitted as the cycle reserves
        // its quota: admission fair sharing settles its entry penalty then
        for (wl, usage) in &started {
            self.s.clock(&ClockEvent::RunStarted {
                wl: *wl,
                usage,
                at: t,
            });
        }
    }
}

impl<'a, 'p, P: Policy> Driver for KueueRun<'a, 'p, P> {
    type Report = Outcome;

    /// The scheduler's clock advances to `t`.
    fn instant(&mut self, t: i64) {
        self.last_t = t;
        self.cx.progress.tick(t, self.counters.events);
        self.s.clock(&ClockEvent::Advance(t));
        self.wake = false;
    }

    /// An arrival (through the budgets' gate), a completion, a held-back victim's
    /// requeue, a budget boundary or the end of a cycle latency.
    fn apply(&mut self, e: Event, q: &mut Queue) {
        self.counters.events += 1;
        let t = e.t;
        match e.kind {
            Kind::Completion { index, generation } => {
                self.wake |= self.complete(q, t, index, generation);
            }
            Kind::Arrival(wl) => {
                match self.cx.budgets.as_mut() {
                    Some(b) => crate::budget::offer(&mut self.s, b, wl, true),
                    None => self.s.arrive(WlId::new(wl as usize)),
                }
                self.wake = true;
            }
            Kind::Budget => self.wake = true,
            Kind::Requeue(wl) => {
                self.requeue_held(wl);
                self.wake = true;
            }
            Kind::Tick | Kind::Timeline(_) => {
                self.busy_until = None;
                self.wake = true;
            }
        }
    }

    /// The budgets' stops, then the cycles when something may have changed, then the next
    /// budget boundary.
    fn decide(&mut self, t: i64, q: &mut Queue) -> bool {
        let end = self.cx.sc.end_ms;
        let mut wake = self.wake;
        wake |= self.budget_stops(q, t);
        if wake && self.busy_until.is_none_or(|b| b <= t) {
            self.cycles_at(q, t);
        }
        if let Some(b) = self.cx.budgets.as_mut() {
            crate::budget::schedule(b, t, end, q, &mut self.budget_at);
        }
        true
    }

    fn report(self) -> Outcome {
        super::finish(self)
    }
}

impl<'a, 'p, P: Policy> Finish<'a, 'p> for KueueRun<'a, 'p, P> {
    const ENGINE: Engine = Engine::Kueue;

    fn cx(&mut self) -> &mut Context<'a, 'p> {
        &mut self.cx
    }

    fn end(&self) -> EndOfRun {
        EndOfRun {
            running: self.h.live.iter().any(Option::is_some),
            last_t: self.last_t,
            counters: self.counters,
            held_back: self.held_back.clone(),
            nodes: self.cap.as_ref().map_or(0, Capacity::node_count),
        }
    }

    /// Every workload's history, the pending ones with upstream's reason.
    fn workload_outcomes(&mut self, end_ms: i64) -> Vec<WorkloadOutcome> {
        let world = self.cx.world;
        let end = self.cx.sc.end_ms;
        let mut workloads = Vec::with_capacity(world.workloads.len());
        for (i, w) in world.workloads.iter().enumerate() {
            if let Some(l) = self.h.live[i].take() {
                self.h.runs[i].push(Run {
                    reserved_ms: l.reserved,
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
            let running_at_end = self.h.runs[i].last().is_some_and(|r| r.end == RunEnd::Cut);
            let (class, created_ms) = self.cx.class_and_created(i);
            let unschedulable = self.cap.as_ref().and_then(|c| {
                c.waiting(i as u32)
                    .map(|m| (UNSCHEDULABLE.to_owned(), m.to_owned()))
            });
            let pending = if self.h.finished[i].is_none() && !running_at_end {
                if unschedulable.is_some() {
                    unschedulable
                } else if end.is_some_and(|e| created_ms >= e) {
                    Some(created_after_end())
                } else {
                    self.cx
                        .budgets
                        .as_ref()
                        .and_then(|b| b.pending(i as u32))
                        .or_else(|| {
                            self.s
                                .pending_reason(WlId::new(i))
                                .map(|p| (p.reason().to_owned(), p.message(world)))
                        })
                }
            } else {
                None
            };
            workloads.push(WorkloadOutcome {
                key: w.key.clone(),
                queue,
                class,
                created_ms,
                runs: std::mem::take(&mut self.h.runs[i]),
                finished_ms: self.h.finished[i],
                pending,
            });
        }
        workloads
    }

    /// Every ClusterQueue's nominal quotas.
    fn queue_outcomes(&self) -> Vec<QueueOutcome> {
        let world = self.cx.world;
        world
            .cluster_queues
            .iter()
            .map(|c| {
                let mut nominal = Vec::new();
                for g in &c.groups {
                    for &f in &g.flavors {
                        for &r in &g.covered {
                            if let Some(fr) = world.fr(f, r) {
                                nominal
                                    .push((u32::from(fr), world.tree.quota(c.node, fr).nominal.0));
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
            .collect()
    }
}
