//! The Kueue event loop: `gpuquota-cohort`'s scheduler driven instant by instant, its
//! admissions and preemptions turned into runs.
//!
//! A timeline event that changes objects ([`Driver::timeline`]) builds the world again from
//! the changed platform through the engine's entry point and carries every admitted
//! workload across with `gpuquota_cohort::cycle::transition` (kept, or evicted by a
//! `HoldAndDrain`; a deleted ClusterQueue that holds admitted workloads is put back,
//! inactive, until the last of them ends, then the world is built once more without it).
//! Runs record usage by the run's own flavor-resource ids ([`Frs`]), which a rebuilt world
//! does not renumber. Cost per such event: one world build plus the scheduler's adoption,
//! linear in the platform and its workloads. An event that changes only quota numbers (or
//! fair-sharing weights) of ClusterQueues and Cohorts builds no world: the scheduler
//! updates its own in place ([`gpuquota_cohort::Scheduler::update`]) and adopts the
//! admitted workloads as after a rebuild ([`KueueRun::update_in_place`]).

use std::collections::{BTreeMap, BTreeSet};

use gpuquota_cohort::cycle::transition::{self, Carried, Finalizers, Stops};
use gpuquota_cohort::fair::{ClockEvent, FairSharing};
use gpuquota_cohort::tree::FrId;
use gpuquota_cohort::world::{QueueRef, WlId};
use gpuquota_cohort::{Classical, Policy, Scheduler, Stepper, World};
use gpuquota_model::diag::{Diagnostic, Diagnostics};
use gpuquota_model::kueue::{ClusterQueue, StopPolicy};
use gpuquota_model::{Amount, Model, ResourceName};

use super::capacity::Capacity;
use super::eviction::{Evictions, Terminating};
use super::nodes::{Evict, NodeEvents};
use super::pods_ready::{DEACTIVATED, PODS_READY_TIMEOUT, PodsReady, Step};
use super::reclaim::PodRuntimes;
use super::retries::Retries;
use super::{Context, EndOfRun, Finish, Worlds, created_after_end};
use crate::engine::{
    CYCLE_BOUND, Counters, HeldBack, Outcome, QueueOutcome, Run, RunEnd, TimelineEffect,
    UNSCHEDULABLE, WorkloadOutcome,
};
use crate::kernel::{Driver, Event, Kind, Queue};
use crate::scenario::Engine;
use crate::timeline::{self, Change, Object};

/// The run's flavor-resources and their ids in the current world. Runs record usage by the
/// run's ids, which stay fixed while a timeline rebuilds the world (a rebuilt world numbers
/// its flavor-resources afresh); a flavor-resource first seen in a rebuilt world is added at
/// the end. Without a timeline both maps are the identity.
struct Frs {
    /// (flavor, resource) of every run id.
    names: Vec<(String, ResourceName)>,
    /// The current world's flavor-resource → run id.
    to_run: Vec<u32>,
    /// Run id → the current world's flavor-resource (`None`: the world has it no more).
    to_world: Vec<Option<FrId>>,
}

impl Frs {
    fn new(world: &World) -> Frs {
        let mut frs = Frs {
            names: Vec::new(),
            to_run: Vec::new(),
            to_world: Vec::new(),
        };
        frs.follow(world);
        frs
    }

    /// The maps for `world`. O((flavor-resources) × log).
    fn follow(&mut self, world: &World) {
        let ids: BTreeMap<(String, ResourceName), u32> = self
            .names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i as u32))
            .collect();
        self.to_run.clear();
        for &(f, r) in world.frs.iter() {
            let name = (world.flavors[f].name.clone(), world.resources[r].clone());
            let id = match ids.get(&name) {
                Some(&id) => id,
                None => {
                    self.names.push(name);
                    (self.names.len() - 1) as u32
                }
            };
            self.to_run.push(id);
        }
        self.to_world = vec![None; self.names.len()];
        for (w, &id) in self.to_run.iter().enumerate() {
            self.to_world[id as usize] = Some(FrId::new(w));
        }
    }

    /// A run's usage as the engine's reservation holds it.
    fn engine(&self, usage: &[(u32, i64)]) -> Vec<(FrId, Amount)> {
        usage
            .iter()
            .filter_map(|&(fr, a)| Some((self.to_world.get(fr as usize).copied()??, Amount(a))))
            .collect()
    }

    /// A reservation's usage as a [`Run`] records it.
    fn run(&self, usage: &[(FrId, Amount)]) -> Vec<(u32, i64)> {
        usage
            .iter()
            .map(|&(fr, a)| (self.to_run[fr.index()], a.0))
            .collect()
    }

    /// A run's usage by the current world's flavor-resource ids.
    fn world(&self, usage: &[(u32, i64)]) -> Vec<(u32, i64)> {
        self.engine(usage)
            .into_iter()
            .map(|(f, a)| (u32::from(f), a.0))
            .collect()
    }
}

/// A policy the driver can step again over a rebuilt input, from the scheduler the
/// engine's entry point gives for it.
pub(crate) trait Rebuild: Policy + Sized {
    /// The scheduler over the rebuilt input (`None`: the input's policy is another).
    fn rebuilt(stepper: Stepper<'_>) -> Option<Scheduler<'_, Self>>;
}

impl Rebuild for Classical {
    fn rebuilt(stepper: Stepper<'_>) -> Option<Scheduler<'_, Classical>> {
        match stepper {
            Stepper::Classical(s) => Some(s),
            Stepper::FairSharing(_) => None,
        }
    }
}

impl Rebuild for FairSharing {
    fn rebuilt(stepper: Stepper<'_>) -> Option<Scheduler<'_, FairSharing>> {
        match stepper {
            Stepper::FairSharing(s) => Some(s),
            Stepper::Classical(_) => None,
        }
    }
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
    /// still waited ends where it starts); returns its usage, `None` when `v` was not
    /// admitted.
    fn preempt(&mut self, v: usize, t: i64, reason: &str, by: &str) -> Option<Vec<(u32, i64)>> {
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
            return Some(wt.usage);
        }
        let l = self.live[v].take()?;
        let usage = l.usage.clone();
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
    /// The timeline's node events and MIG windows.
    nodes: NodeEvents,
    /// The run's flavor-resources.
    frs: Frs,
    /// The timeline's state (rebuilt worlds, terminating ClusterQueues, effects).
    tl: Tl<'a>,
    /// Evictions that take time ([`super::eviction`]).
    ev: Evictions,
    /// Failed attempts and the Job controller's retries ([`super::retries`]).
    rt: Retries,
    /// Pods that finish one by one ([`super::reclaim`]).
    pr: PodRuntimes,
    /// `waitForPodsReady`, when the Configuration enables it.
    ready: Option<PodsReady>,
}

/// What the Kueue driver keeps for a timeline.
struct Tl<'a> {
    /// Room for the worlds the timeline's rebuilds make.
    worlds: &'a Worlds,
    /// The platform as the last timeline event left it (`None`: no event yet).
    model: Option<Model>,
    /// Workloads that arrived (and so queue again after a rebuild unless finished or held).
    arrived: Vec<bool>,
    /// Victims held back until their requeue event.
    held: Vec<bool>,
    /// Deleted ClusterQueues kept while admitted workloads hold them.
    terminating: BTreeMap<String, ClusterQueue>,
    /// Who holds them.
    finalizers: Finalizers,
    /// A terminating ClusterQueue's last workload ended: rebuild at this instant's decision.
    rebuild_due: bool,
    /// What each event did.
    effects: Vec<TimelineEffect>,
}

/// The Kueue driver over the checked input (`cx.world` is `input.world()`) run by the
/// kernel, with fair sharing's policy when the input has one (else Kueue's classical
/// ordering and preemption).
///
/// # Complexity
/// O(events × log events + cycles × cycle cost); a cycle costs
/// O(ClusterQueues + nodes × flavor-resources + heads × (assignment + preemption)).
pub(crate) fn run_kueue<'a>(
    cx: Context<'a, '_>,
    input: &'a gpuquota_cohort::Input,
    worlds: &'a Worlds,
) -> Outcome {
    let (end, platform) = (cx.sc.end_ms, super::platform(cx.sc));
    match input.scheduler() {
        Stepper::FairSharing(s) => {
            let (run, q) = KueueRun::new(cx, s, worlds);
            crate::kernel::run(run, q, end, platform)
        }
        Stepper::Classical(s) => {
            let (run, q) = KueueRun::new(cx, s, worlds);
            crate::kernel::run(run, q, end, platform)
        }
    }
}

impl<'a, 'p, P: Rebuild> KueueRun<'a, 'p, P> {
    /// Withholds every workload until its arrival; the workloads admitted in the input run
    /// from the start, and admission fair sharing's LocalQueue ledgers start with the run.
    fn new(
        cx: Context<'a, 'p>,
        mut s: Scheduler<'a, P>,
        worlds: &'a Worlds,
    ) -> (KueueRun<'a, 'p, P>, Queue) {
        let n = cx.world.workloads.len();
        for wl in cx.world.workloads.ids() {
            s.withhold(wl);
        }
        let bound = (n as u32).saturating_mul(4).saturating_add(64);
        let cap = Capacity::new(&cx.sc.model, cx.world);
        let timed = !cx.sc.timeline.events.is_empty();
        let ev = Evictions::new(&cx.sc.model, cx.world);
        s.hold_evictions(ev.on());
        let mut run = KueueRun {
            ev,
            rt: Retries::new(&cx.sc.model, cx.world),
            pr: PodRuntimes::new(&cx.sc.model, cx.world),
            ready: PodsReady::new(&cx.sc.model, cx.world),
            cap,
            nodes: NodeEvents::default(),
            frs: Frs::new(cx.world),
            tl: Tl {
                worlds,
                model: None,
                arrived: if timed { vec![false; n] } else { Vec::new() },
                held: if timed { vec![false; n] } else { Vec::new() },
                terminating: BTreeMap::new(),
                finalizers: Finalizers::default(),
                rebuild_due: false,
                effects: Vec::new(),
            },
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
        let mut q = run.seed();
        run.seed_pods_ready(&mut q);
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
                let usage = self.frs.run(&r.usage);
                if let Some(c) = self.cap.as_mut() {
                    let needs = c.kueue_needs(self.cx.world, wl as u32, &self.frs.world(&usage));
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
                let runtime = inst.and_then(|i| i.runtime_ms);
                if let Some(rt) = self.rt.plan(wl, 0, runtime) {
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
                let usage = self.frs.engine(held);
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
        self.finalize(w, t);
        if let Some(b) = self.cx.budgets.as_mut() {
            b.stopped(t, wl);
        }
        if let Some(l) = l {
            let usage = self.frs.engine(&l.usage);
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
        self.nodes.after_release(c, t);
        for wl in c.start_waiting() {
            if let Some(wt) = self.h.waiting[wl as usize].take() {
                self.start_run(q, wl as usize, wt.reserved, t, wt.usage);
            }
        }
    }

    /// The runs a node event ends at `t` ([`super::nodes`]): their pods are lost, their
    /// quota is released (the inadmissible workloads of the cohort tree are requeued, as
    /// for any freed quota) and they queue again at once (Kueue requeues a workload evicted
    /// for node failures without backoff), through the budgets' gate when there are
    /// budgets.
    fn end_lost(&mut self, q: &mut Queue, t: i64, lost: Vec<Evict>) {
        let mut ended = Vec::new();
        for (wl, reason, by) in lost {
            let w = wl as usize;
            if let Some(b) = self.cx.budgets.as_mut() {
                b.stopped(t, wl);
            }
            let Some(usage) = self.h.preempt(w, t, reason, &by) else {
                continue;
            };
            ended.push((WlId::new(w), self.frs.engine(&usage)));
            self.release(wl);
            let id = WlId::new(w);
            self.s.evict(id);
            if let Some(b) = self.cx.budgets.as_mut() {
                // back through the budgets' gate, as a budget's own stop is
                self.s.withhold(id);
                let orig = b.original(wl).unwrap_or(wl);
                crate::budget::offer(&mut self.s, b, orig, false);
            }
            self.finalize(w, t);
        }
        self.start_waiting(q, t);
        for (wl, usage) in &ended {
            self.s.clock(&ClockEvent::RunEnded {
                wl: *wl,
                usage,
                at: t,
            });
        }
        self.wake = true;
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
        if let Some(p) = self.ready.as_mut() {
            p.running(w, begin, self.last_t, q);
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
        let left = self.cx.insts[w]
            .and_then(|i| i.runtime_ms)
            .map(|rt| (rt - already).max(0));
        if self.rt.on() {
            self.commit_failures(w);
        }
        let end = self.rt.plan(w, begin, left);
        if let Some(at) = end {
            q.push(Event::new(
                at,
                Kind::Completion {
                    index: w as u32,
                    generation,
                },
            ));
        }
        if self.pr.on() {
            for at in self.pr.instants(w, begin, end) {
                let index = w as u32;
                q.push(Event::new(at, Kind::PodsDone { index, generation }));
            }
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
            if !o.changed() || self.pods_ready_blocks() {
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
        let mut victims = Vec::new();
        let terminating = self.begin_terminations(q, t);
        let mut released = Vec::new();
        for p in &self.s.preempted[self.seen_preempted..] {
            if terminating.binary_search(&p.wl).is_ok() {
                continue;
            }
            if self.ev.on() {
                released.push(p.wl);
            }
            if let Some(b) = self.cx.budgets.as_mut() {
                b.stopped(t, u32::from(p.wl));
            }
            let by = &world.workloads[p.preemptor].key;
            if let Some(usage) = self.h.preempt(p.wl.index(), t, p.reason.as_str(), by) {
                ended.push((p.wl, self.frs.engine(&usage)));
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
            if !self.tl.terminating.is_empty() {
                victims.push(p.wl.index());
            }
        }
        for v in victims {
            self.finalize(v, t);
        }
        for wl in released {
            self.s.release_evicted(wl);
        }
        self.seen_preempted = self.s.preempted.len();
        for wl in held {
            if let Some(h) = self.tl.held.get_mut(wl.index()) {
                *h = true;
            }
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
            if self.pr.on()
                && let Some(ps) = a.pod_sets.first()
            {
                self.pr.admitted(a.wl.index(), ps.1);
            }
            if let Some(r) = &self.s.reservations()[a.wl] {
                started.push((a.wl, r.usage.clone()));
            }
        }
        self.seen_admitted = self.s.admitted.len();
        let mut blocked = Vec::new();
        for (wl, held) in &started {
            let (w, usage) = (wl.index(), self.frs.run(held));
            if self.ready.is_some() && !self.admit_pods_ready(q, w, begin) {
                blocked.push(*wl);
                continue;
            }
            if let Some(c) = self.cap.as_mut() {
                let needs = c.kueue_needs(self.cx.world, u32::from(*wl), &self.frs.world(&usage));
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
        if !blocked.is_empty() {
            started.retain(|(wl, _)| !blocked.contains(wl));
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

impl<'a, 'p, P: Rebuild> Driver for KueueRun<'a, 'p, P> {
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
                if let Some(a) = self.tl.arrived.get_mut(wl as usize) {
                    *a = true;
                }
                match self.cx.budgets.as_mut() {
                    Some(b) => crate::budget::offer(&mut self.s, b, wl, true),
                    None => self.s.arrive(WlId::new(wl as usize)),
                }
                self.wake = true;
            }
            Kind::Budget => self.wake = true,
            Kind::Requeue(wl) => {
                if let Some(h) = self.tl.held.get_mut(wl as usize) {
                    *h = false;
                }
                self.requeue_held(wl);
                self.wake = true;
            }
            Kind::Deadline { index, generation } => {
                let lost = match self.cap.as_ref() {
                    Some(c) => self.nodes.deadline(c, index, generation),
                    None => Vec::new(),
                };
                self.end_lost(q, t, lost);
            }
            Kind::Tick | Kind::Timeline(_) => {
                self.busy_until = None;
                self.wake = true;
            }
            Kind::Released { index, generation } => {
                self.wake |= self.released(q, t, index, generation);
            }
            Kind::PodsDone { index, generation } => {
                self.wake |= self.pods_done(t, index, generation);
            }
            Kind::PodsReady { index, generation } => {
                self.pods_ready_event(q, t, index, generation);
            }
        }
    }

    /// The budgets' stops, then the cycles when something may have changed, then the next
    /// budget boundary.
    fn decide(&mut self, t: i64, q: &mut Queue) -> bool {
        let end = self.cx.sc.end_ms;
        if self.tl.rebuild_due {
            self.tl.rebuild_due = false;
            let carried = self.s.carry();
            if let Err(d) = self.rebuild(q, t, &carried) {
                self.cx.warnings.extend(d.0);
                return false;
            }
            self.wake = true;
        }
        let mut wake = self.wake;
        wake |= self.budget_stops(q, t);
        if wake && self.busy_until.is_none_or(|b| b <= t) && !self.pods_ready_blocks() {
            self.cycles_at(q, t);
        }
        if let Some(b) = self.cx.budgets.as_mut() {
            crate::budget::schedule(b, t, end, q, &mut self.budget_at);
        }
        true
    }

    /// Object changes rebuild the world and carry the admitted workloads across
    /// ([`KueueRun::rebuild`]); the instant's decision then runs a cycle.
    fn timeline(
        &mut self,
        t: i64,
        event: &timeline::Event,
        changes: &timeline::Changes,
        model: &Model,
        q: &mut Queue,
    ) -> bool {
        let mut effect = super::timeline_effect(t, event, changes);
        if !changes.objects.is_empty() && self.tl.terminating.is_empty() {
            let carried = self.s.carry();
            if let Some(done) = self.update_in_place(q, t, changes, model, &carried) {
                effect.evicted = done.evicted;
                (effect.capacity_before, effect.capacity_after) = (done.before, done.after);
                if let Some(c) = self.cap.as_mut() {
                    match self.nodes.apply(c, t, event.index, changes, model, q) {
                        Ok(lost) => self.end_lost(q, t, lost),
                        Err(m) => self.cx.warnings.push(
                            Diagnostic::warning(crate::scenario::INVALID_SCENARIO, m)
                                .field(format!("spec.timeline[{}].migLayout", event.index)),
                        ),
                    }
                }
                self.tl.effects.push(effect);
                self.busy_until = None;
                self.wake = true;
                return true;
            }
        }
        if !changes.objects.is_empty() {
            let carried = self.s.carry();
            let held = carried.per_cluster_queue();
            let mut newly = Vec::new();
            for c in &changes.objects {
                if c.kind != gpuquota_model::Kind::ClusterQueue {
                    continue;
                }
                if c.change != Change::Deleted {
                    self.tl.terminating.remove(&c.key);
                } else if let (true, Some(Object::ClusterQueue(cq))) =
                    (held.contains_key(c.key.as_str()), &c.before)
                {
                    self.tl.terminating.insert(c.key.clone(), (**cq).clone());
                    newly.push(c.key.clone());
                }
            }
            self.tl.finalizers.add(&newly, &carried);
            // the platform the world is built from: the terminating ClusterQueues kept
            let mut m = model.clone();
            for (name, cq) in &self.tl.terminating {
                if !m.cluster_queues.contains_key(name) {
                    m.cluster_queues.insert(name.clone(), cq.clone());
                }
            }
            self.tl.model = Some(m);
            effect.terminating = newly.iter().map(|n| (n.clone(), None)).collect();
            let (stopped, resumed) = stop_changes(changes, model);
            effect.admissions_stopped = stopped;
            effect.admissions_stopped.extend(newly);
            effect.admissions_stopped.sort();
            effect.admissions_resumed = resumed;
            effect.capacity_before = self.nominal_total();
            match self.rebuild(q, t, &carried) {
                Ok(evicted) => effect.evicted = evicted,
                Err(d) => {
                    self.cx.warnings.extend(d.0);
                    return false;
                }
            }
            effect.capacity_after = self.nominal_total();
        }
        if let Some(c) = self.cap.as_mut() {
            match self.nodes.apply(c, t, event.index, changes, model, q) {
                Ok(lost) => self.end_lost(q, t, lost),
                Err(m) => self.cx.warnings.push(
                    Diagnostic::warning(crate::scenario::INVALID_SCENARIO, m)
                        .field(format!("spec.timeline[{}].migLayout", event.index)),
                ),
            }
        }
        self.tl.effects.push(effect);
        self.busy_until = None;
        self.wake = true;
        true
    }

    fn report(self) -> Outcome {
        super::finish(self)
    }
}

/// What an in-place update did ([`KueueRun::update_in_place`]).
struct InPlace {
    /// The workloads evicted (key, reason).
    evicted: Vec<(String, String)>,
    /// Every ClusterQueue's nominal quota summed per flavor-resource, before.
    before: Vec<(u32, i64)>,
    /// And after.
    after: Vec<(u32, i64)>,
}

/// Whether a queue with this `stopPolicy` admits (unset or `None`).
fn admits(p: Option<&StopPolicy>) -> bool {
    p.is_none_or(|p| *p == StopPolicy::None)
}

/// The ClusterQueues and LocalQueues an event stopped and resumed (`stopPolicy` before and
/// after), each sorted.
fn stop_changes(changes: &timeline::Changes, model: &Model) -> (Vec<String>, Vec<String>) {
    let (mut stopped, mut resumed) = (BTreeSet::new(), BTreeSet::new());
    for c in &changes.objects {
        let (before, after) = match c.kind {
            gpuquota_model::Kind::ClusterQueue => (
                match &c.before {
                    Some(Object::ClusterQueue(q)) => admits(q.spec.stop_policy.as_ref()),
                    _ => true,
                },
                model
                    .cluster_queues
                    .get(&c.key)
                    .is_none_or(|q| admits(q.spec.stop_policy.as_ref())),
            ),
            gpuquota_model::Kind::LocalQueue => (
                match &c.before {
                    Some(Object::LocalQueue(q)) => admits(q.spec.stop_policy.as_ref()),
                    _ => true,
                },
                model
                    .local_queues
                    .get(&c.key)
                    .is_none_or(|q| admits(q.spec.stop_policy.as_ref())),
            ),
            _ => continue,
        };
        if before && !after {
            stopped.insert(c.key.clone());
        } else if !before && after {
            resumed.insert(c.key.clone());
        }
    }
    (stopped.into_iter().collect(), resumed.into_iter().collect())
}

impl<'a, 'p, P: Rebuild> KueueRun<'a, 'p, P> {
    /// `w` ended (finished or evicted): when it was the last admitted workload of a
    /// terminating ClusterQueue, the queue leaves (upstream's finalizer is removed) at this
    /// instant's decision.
    fn finalize(&mut self, w: usize, t: i64) {
        if self.tl.terminating.is_empty() {
            return;
        }
        let key = &self.cx.world.workloads[WlId::new(w)].key;
        if let Some(cq) = self.tl.finalizers.release(key) {
            if self.tl.terminating.remove(&cq).is_some()
                && let Some(m) = self.tl.model.as_mut()
            {
                m.cluster_queues.remove(&cq);
            }
            self.tl.rebuild_due = true;
            for e in &mut self.tl.effects {
                for (name, left) in &mut e.terminating {
                    if *name == cq && left.is_none() {
                        *left = Some(t);
                    }
                }
            }
        }
    }

    /// Every ClusterQueue's nominal quota summed per flavor-resource (run ids), sorted.
    fn nominal_total(&self) -> Vec<(u32, i64)> {
        let mut total: BTreeMap<u32, i64> = BTreeMap::new();
        for q in self.queue_outcomes() {
            for (fr, n) in q.nominal {
                let e = total.entry(fr).or_insert(0);
                *e = e.saturating_add(n);
            }
        }
        total.into_iter().collect()
    }

    /// The platform changed at `t` in quota numbers only (every changed object a replaced
    /// ClusterQueue or Cohort): the scheduler updates its world in place
    /// ([`gpuquota_cohort::Scheduler::update`]) and adopts `carried` as after a rebuild
    /// ([`KueueRun::carry_over`]), with the effect's capacity before and after filled in by
    /// the caller. `None`, with nothing changed, when the change is not one of
    /// quota numbers (the caller rebuilds).
    ///
    /// # Complexity
    /// O(changed objects) to check them, plus the update's O(queue objects × log + N·F +
    /// W log W) and the adoption's.
    fn update_in_place(
        &mut self,
        q: &mut Queue,
        t: i64,
        changes: &timeline::Changes,
        model: &Model,
        carried: &Carried,
    ) -> Option<InPlace> {
        use gpuquota_cohort::cycle::update::Replaced;
        let mut replaced = Vec::with_capacity(changes.objects.len());
        for c in &changes.objects {
            let r = match (&c.before, c.change) {
                (Some(Object::ClusterQueue(b)), Change::Replaced) => {
                    Replaced::ClusterQueue(b, model.cluster_queues.get(&c.key)?)
                }
                (Some(Object::Cohort(b)), Change::Replaced) => {
                    Replaced::Cohort(b, model.cohorts.get(&c.key)?)
                }
                _ => return None,
            };
            replaced.push(r);
        }
        let before = self.nominal_total();
        if !self.s.update(model, &replaced) {
            return None;
        }
        // the platform a later rebuild starts from follows the change
        if let Some(m) = self.tl.model.as_mut() {
            for c in &changes.objects {
                match c.kind {
                    gpuquota_model::Kind::ClusterQueue => {
                        if let Some(cq) = model.cluster_queues.get(&c.key) {
                            m.cluster_queues.insert(c.key.clone(), cq.clone());
                        }
                    }
                    _ => {
                        if let Some(co) = model.cohorts.get(&c.key) {
                            m.cohorts.insert(c.key.clone(), co.clone());
                        }
                    }
                }
            }
        }
        let evicted = self.carry_over(q, t, carried, &Stops::of(model));
        Some(InPlace {
            evicted,
            before,
            after: self.nominal_total(),
        })
    }

    /// The platform changed at `t`: builds the world again from the timeline's model (the
    /// terminating ClusterQueues kept, inactive), makes a scheduler over it with the same
    /// policy, and carries the admitted workloads across (`carried`, taken before the
    /// change): kept, or evicted by a `HoldAndDrain` (their runs end now). Every other
    /// workload that arrived and neither finished nor is held back queues again. Returns
    /// the evictions (workload key, reason).
    ///
    /// # Errors
    /// The engine's refusal of the changed platform, or a rebuilt world this run cannot
    /// follow (other workloads, or other resources while node capacity is checked).
    ///
    /// # Complexity
    /// One world build (O(objects × log objects)) plus
    /// [`gpuquota_cohort::Scheduler::adopt`]'s O(W log W + admitted × flavor-resources).
    fn rebuild(
        &mut self,
        q: &mut Queue,
        t: i64,
        carried: &Carried,
    ) -> Result<Vec<(String, String)>, Diagnostics> {
        let Some(m) = self.tl.model.as_ref() else {
            return Ok(Vec::new());
        };
        let kept: Vec<String> = self.tl.terminating.keys().cloned().collect();
        let mut input = super::rebuilt_world(self.cx.sc, m)?;
        input.mark_terminating(&kept);
        let unfollowable = |what: &str| super::unfollowable(t, what);
        let old = self.cx.world;
        if !super::same_workloads(input.world(), old) {
            return Err(unfollowable("workloads"));
        }
        if self.cap.is_some() && input.world().resources.iter().ne(old.resources.iter()) {
            return Err(unfollowable("resources while node capacity is checked"));
        }
        let input: &'a gpuquota_cohort::Input = self
            .tl
            .worlds
            .add(input)
            .ok_or_else(|| unfollowable("platform more often than its events do"))?;
        let world: &'a World = input.world();
        let s = P::rebuilt(input.scheduler()).ok_or_else(|| unfollowable("fair sharing"))?;
        self.s = s;
        self.s.hold_evictions(self.ev.on());
        self.cx.world = world;
        self.frs.follow(world);
        let stops = Stops::of(m);
        Ok(self.carry_over(q, t, carried, &stops))
    }

    /// After a rebuild or an in-place update: the fresh scheduler (`self.s`) adopts the
    /// admitted workloads (`carried`, taken before the change) with the platform's `stops`, the
    /// runs of the workloads it evicts end now, and the others' runs restart admission fair
    /// sharing's ledgers. Returns the evictions (workload key, reason).
    ///
    /// # Complexity
    /// [`gpuquota_cohort::Scheduler::adopt`]'s O(W log W + admitted × flavor-resources).
    fn carry_over(
        &mut self,
        q: &mut Queue,
        t: i64,
        carried: &Carried,
        stops: &Stops,
    ) -> Vec<(String, String)> {
        let world: &'a World = self.cx.world;
        let (arrived, held, finished) = (&self.tl.arrived, &self.tl.held, &self.h.finished);
        let live = |key: &str| {
            world.workload_id(key).is_some_and(|id| {
                let i = id.index();
                arrived[i] && !held[i] && finished[i].is_none()
            })
        };
        let adopted = self.s.adopt(carried, stops, &live);
        // who evicted whom: the stopped LocalQueue or ClusterQueue
        let evictions: Vec<(usize, String, &'static str)> = adopted
            .evicted
            .iter()
            .map(|e| {
                let info = &world.workloads[e.wl];
                let by = if e.reason == transition::LOCAL_QUEUE_STOPPED {
                    // the workload's `spec.queueName`, as the world resolved it
                    let lq = match &info.queue {
                        QueueRef::LocalQueueStopped(q) => q.as_str(),
                        _ => "",
                    };
                    format!("LocalQueue/{}/{lq}", info.namespace)
                } else {
                    let cq = carried
                        .reservations
                        .iter()
                        .find(|r| r.workload == info.key)
                        .map_or("", |r| r.cluster_queue.as_str());
                    format!("ClusterQueue/{cq}")
                };
                (e.wl.index(), by, e.reason)
            })
            .collect();
        self.seen_admitted = self.s.admitted.len();
        self.seen_preempted = self.s.preempted.len();
        // admission fair sharing's ledgers restart with the rebuilt world
        self.s.clock(&ClockEvent::Start(t));
        let mut evicted = Vec::new();
        for (w, by, reason) in evictions {
            self.h.preempt(w, t, reason, &by);
            self.release(w as u32);
            evicted.push((world.workloads[WlId::new(w)].key.clone(), reason.to_owned()));
            self.finalize(w, t);
        }
        for (wl, (l, wt)) in self.h.live.iter().zip(&self.h.waiting).enumerate() {
            let held = l
                .as_ref()
                .map(|l| &l.usage)
                .or(wt.as_ref().map(|w| &w.usage));
            if let Some(held) = held {
                let usage = self.frs.engine(held);
                self.s.clock(&ClockEvent::RunStarted {
                    wl: WlId::new(wl),
                    usage: &usage,
                    at: t,
                });
            }
        }
        self.start_waiting(q, t);
        evicted
    }
}

impl<'a, 'p, P: Rebuild> Finish<'a, 'p> for KueueRun<'a, 'p, P> {
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
                if let Some(d) = self.ready.as_ref().and_then(|p| p.deactivated_reason(i)) {
                    Some(d)
                } else if unschedulable.is_some() {
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

    fn flavor_resources(&mut self) -> Option<Vec<(String, ResourceName)>> {
        Some(self.frs.names.clone())
    }

    /// The runs ended count their failures up to their end, the runs under way up to
    /// `end_ms`.
    fn failures(&mut self, end_ms: i64) -> Vec<crate::engine::FailureOutcome> {
        if !self.rt.on() {
            return Vec::new();
        }
        for w in 0..self.h.runs.len() {
            match self.h.live[w].as_ref() {
                Some(l) => {
                    let gpus = self.gpus(&l.usage);
                    self.rt.commit(w, end_ms, gpus);
                }
                None => self.commit_failures(w),
            }
        }
        self.rt.outcomes()
    }

    fn timeline_effects(&mut self) -> Vec<TimelineEffect> {
        let mut effects = std::mem::take(&mut self.tl.effects);
        let world = self.cx.world;
        self.nodes.fill(&mut effects, |w| {
            world.workloads[WlId::new(w as usize)].key.clone()
        });
        effects
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
                                nominal.push((
                                    self.frs.to_run[fr.index()],
                                    self.s.world().tree.quota(c.node, fr).nominal.0,
                                ));
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

/// Evictions that take time ([`super::eviction`]).
impl<'a, 'p, P: Rebuild> KueueRun<'a, 'p, P> {
    /// The cycle's new victims with an eviction latency whose pods run: their runs go on
    /// (holding quota and devices) until a `Released` event at `t` + latency. Returns them,
    /// sorted; the others are released at once by [`KueueRun::preemptions`].
    fn begin_terminations(&mut self, q: &mut Queue, t: i64) -> Vec<WlId> {
        let mut out = Vec::new();
        if !self.ev.on() {
            return out;
        }
        let world = self.cx.world;
        for p in &self.s.preempted[self.seen_preempted..] {
            let (w, latency) = (p.wl.index(), self.ev.latency(p.wl));
            let Some(live) = self.h.live[w].as_mut().filter(|_| latency > 0) else {
                continue;
            };
            // the run's completion is stale from now on
            self.h.generation[w] += 1;
            let generation = self.h.generation[w];
            live.generation = generation;
            self.ev.terminating[w] = Some(Terminating {
                reason: p.reason.as_str().to_owned(),
                by: world.workloads[p.preemptor].key.clone(),
            });
            q.push(Event::new(
                t.saturating_add(latency),
                Kind::Released {
                    index: w as u32,
                    generation,
                },
            ));
            out.push(p.wl);
        }
        out.sort_unstable();
        out
    }

    /// The pods of evicted `wl` (run `g`) are gone at `t`: its run ends as preempted, its
    /// quota and devices are released and it queues again. False when that run already
    /// ended.
    fn released(&mut self, q: &mut Queue, t: i64, wl: u32, g: u32) -> bool {
        let w = wl as usize;
        if self.h.live[w].as_ref().is_none_or(|l| l.generation != g) {
            return false;
        }
        let Some(term) = self.ev.terminating.get_mut(w).and_then(Option::take) else {
            return false;
        };
        if let Some(b) = self.cx.budgets.as_mut() {
            b.stopped(t, wl);
        }
        let usage = self.h.preempt(w, t, &term.reason, &term.by);
        self.h.evicted_at[w] = Some(t);
        let id = WlId::new(w);
        self.s.release_evicted(id);
        self.release(wl);
        self.finalize(w, t);
        self.start_waiting(q, t);
        if let Some(usage) = usage {
            let usage = self.frs.engine(&usage);
            self.s.clock(&ClockEvent::RunEnded {
                wl: id,
                usage: &usage,
                at: t,
            });
        }
        true
    }
}

/// Failed attempts and retries ([`super::retries`]).
impl<'a, 'p, P: Rebuild> KueueRun<'a, 'p, P> {
    /// The `nvidia.com/gpu` a run's usage holds.
    fn gpus(&self, usage: &[(u32, i64)]) -> i64 {
        usage
            .iter()
            .filter(|&&(fr, _)| {
                self.frs
                    .names
                    .get(fr as usize)
                    .is_some_and(|(_, r)| r.as_str() == "nvidia.com/gpu")
            })
            .map(|&(_, a)| a)
            .sum()
    }

    /// The failures planned for `w`'s last ended run happened up to its end.
    fn commit_failures(&mut self, w: usize) {
        if let Some(r) = self.h.runs[w].last() {
            let (end, gpus) = (r.end_ms, self.gpus(&r.usage));
            self.rt.commit(w, end, gpus);
        }
    }
}

/// Pods that finish one by one ([`super::reclaim`]).
impl<'a, 'p, P: Rebuild> KueueRun<'a, 'p, P> {
    /// Some pods of `wl`'s run `g` finished at `t`: their share of its quota leaves its
    /// reservation (upstream's reclaimable pods). False when that run already ended.
    fn pods_done(&mut self, t: i64, wl: u32, g: u32) -> bool {
        let w = wl as usize;
        let Some(l) = self.h.live[w].as_ref().filter(|l| l.generation == g) else {
            return false;
        };
        let (n, k) = self.pr.done_at(w, l.run_start, t);
        if n == 0 || k == 0 {
            return false;
        }
        let freed: Vec<(u32, i64)> = l.usage.iter().map(|&(fr, a)| (fr, a / k * n)).collect();
        let freed = self.frs.engine(&freed);
        self.s.reclaim(WlId::new(w), &freed)
    }
}

/// `waitForPodsReady`'s hooks ([`super::pods_ready`]).
impl<'a, 'p, P: Rebuild> KueueRun<'a, 'p, P> {
    /// The workloads admitted in the input are admitted at 0 (their pods run then unless
    /// they wait for devices).
    fn seed_pods_ready(&mut self, q: &mut Queue) {
        let Some(p) = self.ready.as_mut() else {
            return;
        };
        for w in 0..self.h.live.len() {
            if self.h.live[w].is_some() || self.h.waiting[w].is_some() {
                p.admitted(w, 0, q);
                if self.h.live[w].is_some() {
                    p.running(w, 0, 0, q);
                }
            }
        }
    }

    /// Whether `blockAdmission` holds admissions: an admitted workload is not ready.
    fn pods_ready_blocks(&mut self) -> bool {
        let s = &self.s;
        self.ready
            .as_mut()
            .is_some_and(|p| p.blocks(|w| s.reservations()[WlId::new(w)].is_some()))
    }

    /// `w`, admitted by the cycle, is admitted from `begin`; false when `blockAdmission`
    /// holds it: it goes back to its queue as upstream's scheduler never admitted it.
    fn admit_pods_ready(&mut self, q: &mut Queue, w: usize, begin: i64) -> bool {
        if self.pods_ready_blocks() {
            self.s.evict(WlId::new(w));
            return false;
        }
        if let Some(p) = self.ready.as_mut() {
            p.admitted(w, begin, q);
        }
        true
    }

    /// A [`Kind::PodsReady`] event: the pods are ready, or the timeout evicts the workload
    /// (requeued after its backoff, or deactivated).
    fn pods_ready_event(&mut self, q: &mut Queue, t: i64, wl: u32, generation: u32) {
        let (w, id) = (wl as usize, WlId::new(wl as usize));
        let admitted = self.s.reservations()[id].is_some();
        let Some(p) = self.ready.as_mut() else {
            return;
        };
        let by_eviction = p.set.by_eviction;
        let (reason, backoff) = match p.on_event(w, generation, t, admitted) {
            Step::Nothing => return,
            Step::Ready => {
                self.wake = true;
                return;
            }
            Step::Requeue { backoff_ms } => (PODS_READY_TIMEOUT, Some(backoff_ms)),
            Step::Deactivate => (DEACTIVATED, None),
        };
        if let Some(b) = self.cx.budgets.as_mut() {
            b.stopped(t, wl);
        }
        let Some(usage) = self.h.preempt(w, t, reason, super::pods_ready::BY) else {
            return;
        };
        self.release(wl);
        self.s.evict(id);
        self.s.withhold(id);
        if let Some(h) = self.tl.held.get_mut(w) {
            *h = true;
        }
        if let Some(ms) = backoff {
            if by_eviction {
                self.s
                    .queue_by(id, crate::scenario::at_ms(self.cx.sc.start, t));
            }
            q.push(Event::new(t.saturating_add(ms), Kind::Requeue(wl)));
        }
        self.finalize(w, t);
        self.start_waiting(q, t);
        let usage = self.frs.engine(&usage);
        self.s.clock(&ClockEvent::RunEnded {
            wl: id,
            usage: &usage,
            at: t,
        });
        self.wake = true;
    }
}
