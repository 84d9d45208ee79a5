//! The ResourceQuota-only event loop: a workload is created when its namespace's quotas
//! allow it (403 otherwise, retried by its controller), and runs at once.

use std::collections::BTreeMap;

use gpuquota_cohort::World;
use gpuquota_model::Amount;

use super::capacity::Capacity;
use super::nodes::{Evict, NodeEvents};
use super::{Context, EndOfRun, Finish, Worlds, created_after_end};
use crate::engine::{
    Counters, Outcome, QueueOutcome, Run, RunEnd, TimelineEffect, UNSCHEDULABLE, WorkloadOutcome,
};
use crate::kernel::{Driver, Event, Kind, Queue};
use crate::scenario::Engine;

/// The namespaces' ResourceQuotas and what the running workloads use of them.
struct QuotaUse<'a> {
    world: &'a World,
    /// Each workload's requests per resource, all pods together.
    demand: Vec<Vec<i64>>,
    /// Each workload's pod count.
    pods: Vec<i64>,
    /// `used[quota][hard key]`.
    used: Vec<Vec<i64>>,
}

impl<'a> QuotaUse<'a> {
    fn new(world: &'a World) -> QuotaUse<'a> {
        let nres = world.resources.len();
        let demand = world
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
        let pods = world
            .workloads
            .iter()
            .map(|w| w.pod_sets.iter().map(|p| i64::from(p.count)).sum())
            .collect();
        let used = world
            .resource_quotas
            .iter()
            .map(|q| {
                // the claims by name already in the namespace use their share from the start
                let mut u = vec![0; q.hard.len()];
                u.extend_from_slice(&q.claims_used);
                u
            })
            .collect();
        QuotaUse {
            world,
            demand,
            pods,
            used,
        }
    }

    /// Does quota `q` constrain workload `wl` (its namespace, its priority class)?
    fn applies(&self, q: usize, wl: usize) -> bool {
        let rq = &self.world.resource_quotas[q];
        let w = &self.world.workloads[gpuquota_cohort::world::WlId::new(wl)];
        rq.namespace == w.namespace
            && rq
                .object
                .applies_to_priority_class(w.priority_class.as_deref())
    }

    /// What workload `wl` counts against hard key `k` of quota `q` (the keys after `hard`
    /// are the ResourceClaim keys, charged for the claims its pods make from templates).
    fn charge(&self, q: usize, k: usize, wl: usize) -> i64 {
        let rq = &self.world.resource_quotas[q];
        let Some(h) = rq.hard.get(k) else {
            let key = rq
                .claims
                .get(k - rq.hard.len())
                .map_or("", |c| c.0.as_str());
            return self.world.workloads[gpuquota_cohort::world::WlId::new(wl)]
                .pod_sets
                .iter()
                .map(|ps| {
                    ps.claims
                        .iter()
                        .find(|c| c.0 == key)
                        .map_or(0, |c| c.1.saturating_mul(i64::from(ps.count)))
                })
                .fold(0_i64, i64::saturating_add);
        };
        match h.1 {
            None => self.pods[wl],
            Some(r) => self.demand[wl][r.index()],
        }
    }

    /// Charges (`add`) or releases workload `wl` on every quota that applies to it.
    #[allow(clippy::needless_range_loop)] // quota and key indexes address three parallel tables
    fn book(&mut self, wl: usize, add: bool) {
        for q in 0..self.used.len() {
            if self.applies(q, wl) {
                for k in 0..self.used[q].len() {
                    let c = self.charge(q, k, wl);
                    if add {
                        self.used[q][k] += c;
                    } else {
                        self.used[q][k] -= c;
                    }
                }
            }
        }
    }

    /// The first quota creating `w`'s pods would exceed, as the API server's 403
    /// (`Forbidden` and its message); `None` when every quota allows it.
    #[allow(clippy::needless_range_loop)] // quota and key indexes address three parallel tables
    fn violation(&self, w: usize) -> Option<(String, String)> {
        let world = self.world;
        for q in 0..self.used.len() {
            if !self.applies(q, w) {
                continue;
            }
            for (k, (key, r, hard)) in world.resource_quotas[q].hard.iter().enumerate() {
                let req = self.charge(q, k, w);
                if req == 0 {
                    continue;
                }
                if self.used[q][k].saturating_add(req) > hard.0 {
                    let fmt = |v: i64| match r {
                        Some(r) => world.resources[*r].format_amount(Amount(v)),
                        None => v.to_string(),
                    };
                    return Some((
                        "Forbidden".to_owned(),
                        format!(
                            "exceeded quota: {}, requested: {}={}, used: {}={}, limited: {}={}",
                            world.resource_quotas[q].name,
                            key,
                            fmt(req),
                            key,
                            fmt(self.used[q][k]),
                            key,
                            fmt(hard.0)
                        ),
                    ));
                }
            }
            let rq = &world.resource_quotas[q];
            for (c, (key, hard)) in rq.claims.iter().enumerate() {
                let k = rq.hard.len() + c;
                let req = self.charge(q, k, w);
                if req > 0 && self.used[q][k].saturating_add(req) > *hard {
                    return Some((
                        "Forbidden".to_owned(),
                        format!(
                            "exceeded quota: {}, requested: {key}={req}, used: {key}={}, \
                             limited: {key}={hard}",
                            rq.name, self.used[q][k]
                        ),
                    ));
                }
            }
        }
        None
    }

    /// A run's usage: the workload's non-zero demands, by resource.
    fn usage_of(&self, wl: usize) -> Vec<(u32, i64)> {
        self.demand[wl]
            .iter()
            .enumerate()
            .filter(|&(_, &a)| a != 0)
            .map(|(r, &a)| (r as u32, a))
            .collect()
    }
}

/// The ResourceQuota driver's state: the quotas' usage, every workload's runs, attempts and
/// last rejection, with one method per kind of event.
struct QuotaRun<'a, 'p> {
    cx: Context<'a, 'p>,
    quotas: QuotaUse<'a>,
    runs: Vec<Vec<Run>>,
    /// The (reservation, start) of each workload's live run.
    live: Vec<Option<(i64, i64)>>,
    /// The nodes' devices, when the cluster has Nodes.
    cap: Option<Capacity>,
    /// When each waiting workload's pods were created (its quota charged).
    waiting: Vec<Option<i64>>,
    finished: Vec<Option<i64>>,
    attempts: Vec<u32>,
    rejected: Vec<Option<(String, String)>>,
    counters: Counters,
    last_t: i64,
    /// The budget wake-up already in the heap.
    budget_at: Option<i64>,
    /// The scenario's card types, which the budgets charge usage to.
    cards: gpuquota_metering::budget::CardMap,
    /// The timeline's node events and MIG windows.
    nodes: NodeEvents,
    /// Per workload, its current run's generation (completions of older runs are stale).
    generation: Vec<u32>,
    /// Room for the worlds a timeline's changes make.
    worlds: &'a Worlds,
    /// What each timeline event did.
    effects: Vec<TimelineEffect>,
}

/// The ResourceQuota-only driver run by the kernel: a workload is created when its
/// namespace's quotas allow it (403 otherwise, retried by its controller), and runs at once.
///
/// # Complexity
/// O(attempts × (quotas of the namespace × hard keys) + events × log events).
pub(crate) fn run_resource_quota<'a>(cx: Context<'a, '_>, worlds: &'a Worlds) -> Outcome {
    let (end, platform) = (cx.sc.end_ms, super::platform(cx.sc));
    let (run, q) = QuotaRun::new(cx, worlds);
    crate::kernel::run(run, q, end, platform)
}

impl<'a, 'p> QuotaRun<'a, 'p> {
    /// Every workload arrives at its creation.
    fn new(cx: Context<'a, 'p>, worlds: &'a Worlds) -> (QuotaRun<'a, 'p>, Queue) {
        let n = cx.world.workloads.len();
        let q = Queue::with_known(cx.insts.iter().enumerate().map(|(wl, inst)| {
            let created = inst.map_or(0, |i| i.created_ms).max(0);
            Event::new(created, Kind::Arrival(wl as u32))
        }));
        let cards = crate::budget::card_map(cx.sc);
        let run = QuotaRun {
            quotas: QuotaUse::new(cx.world),
            cap: Capacity::new(&cx.sc.model, cx.world),
            waiting: vec![None; n],
            cx,
            runs: vec![Vec::new(); n],
            live: vec![None; n],
            finished: vec![None; n],
            attempts: vec![0; n],
            rejected: vec![None; n],
            counters: Counters::default(),
            last_t: 0,
            budget_at: None,
            cards,
            nodes: NodeEvents::default(),
            generation: vec![0; n],
            worlds,
            effects: Vec::new(),
        };
        (run, q)
    }

    /// A run of `w`'s budget rates per card type: its usage has no flavor, so each resource
    /// goes to the card type the bill charges it to ([`crate::bill::unflavored_rate`]).
    fn card_rates(&self, w: usize) -> Vec<(String, i128)> {
        if self.cx.budgets.is_none() {
            return Vec::new();
        }
        let world = self.cx.world;
        let key = &world.workloads[gpuquota_cohort::world::WlId::new(w)].key;
        let mut by_card: BTreeMap<String, i128> = BTreeMap::new();
        for (r, a) in self.quotas.usage_of(w) {
            let res = world.resources[gpuquota_cohort::ids::ResourceId::new(r as usize)].as_str();
            if let Some((card, rate)) =
                crate::bill::unflavored_rate(self.cx.sc, &self.cards, key, res, a)
            {
                let e = by_card.entry(card).or_default();
                *e = e.saturating_add(rate);
            }
        }
        by_card.into_iter().collect()
    }

    /// The budgets at `t`: the runs they stop are retried, the workloads of renewed budgets
    /// too; an arrival a spent budget holds back waits. Returns whether the event is done
    /// with.
    fn budget_step(&mut self, q: &mut Queue, t: i64, kind: Kind) -> bool {
        let Some(b) = self.cx.budgets.as_mut() else {
            return false;
        };
        let end = self.cx.sc.end_ms;
        b.advance(t);
        for (v, by) in b.to_stop() {
            let v = v as usize;
            if let Some((rs, st)) = self.live[v].take() {
                b.stopped(t, v as u32);
                self.quotas.book(v, false);
                if let Some(c) = self.cap.as_mut() {
                    c.release(v as u32);
                }
                self.runs[v].push(Run {
                    reserved_ms: rs,
                    start_ms: st,
                    end_ms: t,
                    end: RunEnd::Preempted {
                        reason: gpuquota_model::budget::BUDGET_EXHAUSTED.to_owned(),
                        by,
                    },
                    usage: self.quotas.usage_of(v),
                });
                q.push(Event::new(t, Kind::Arrival(v as u32)));
            }
        }
        for v in b.renewed() {
            q.push(Event::new(t, Kind::Arrival(v)));
        }
        self.start_waiting(q, t);
        let Some(b) = self.cx.budgets.as_mut() else {
            return false;
        };
        crate::budget::schedule(b, t, end, q, &mut self.budget_at);
        let Kind::Arrival(wl) = kind else {
            return kind == Kind::Budget;
        };
        let w = wl as usize;
        if self.live[w].is_none()
            && self.waiting[w].is_none()
            && let crate::budget::Gate::Wait(bi) = b.gate(wl)
        {
            b.hold(wl, bi);
            self.rejected[w] = None;
            return true;
        }
        false
    }

    /// `wl`'s run `g` ends at `t` (nothing when that run already ended).
    fn complete(&mut self, q: &mut Queue, t: i64, wl: u32, g: u32) {
        let w = wl as usize;
        if self.generation[w] != g {
            return;
        }
        if let Some((rs, st)) = self.live[w].take() {
            if let Some(b) = self.cx.budgets.as_mut() {
                b.stopped(t, wl);
            }
            self.quotas.book(w, false);
            self.runs[w].push(Run {
                reserved_ms: rs,
                start_ms: st,
                end_ms: t,
                end: RunEnd::Finished,
                usage: self.quotas.usage_of(w),
            });
            self.finished[w] = Some(t);
            if let Some(c) = self.cap.as_mut() {
                c.release(wl);
            }
            self.start_waiting(q, t);
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
            if let Some(rs) = self.waiting[wl as usize].take() {
                self.start(q, t, rs, wl);
            }
        }
    }

    /// `wl`'s pods run from `t`, their quota charged since `reserved`.
    fn start(&mut self, q: &mut Queue, t: i64, reserved: i64, wl: u32) {
        let w = wl as usize;
        self.live[w] = Some((reserved, t));
        let end = self.cx.sc.end_ms;
        let rates = self.card_rates(w);
        if let Some(b) = self.cx.budgets.as_mut() {
            b.started_cards(t, wl, &rates);
            crate::budget::schedule(b, t, end, q, &mut self.budget_at);
        }
        if let Some(rt) = self.cx.insts[w].and_then(|i| i.runtime_ms) {
            q.push(Event::new(
                t + rt,
                Kind::Completion {
                    index: wl,
                    generation: self.generation[w],
                },
            ));
        }
    }

    /// The runs a node event ends at `t` ([`super::nodes`]): their pods are gone, their
    /// quota released, and their controller creates them again at once.
    fn end_lost(&mut self, q: &mut Queue, t: i64, lost: Vec<Evict>) {
        for (wl, reason, by) in lost {
            let w = wl as usize;
            let Some((rs, st)) = self.live[w].take() else {
                continue;
            };
            if let Some(b) = self.cx.budgets.as_mut() {
                b.stopped(t, wl);
            }
            self.quotas.book(w, false);
            if let Some(c) = self.cap.as_mut() {
                c.release(wl);
            }
            self.generation[w] += 1;
            self.runs[w].push(Run {
                reserved_ms: rs,
                start_ms: st,
                end_ms: t,
                end: RunEnd::Preempted {
                    reason: reason.to_owned(),
                    by,
                },
                usage: self.quotas.usage_of(w),
            });
            q.push(Event::new(t, Kind::Arrival(wl)));
        }
        self.start_waiting(q, t);
    }

    /// An attempt to create `wl`'s pods at `t`: they run at once, wait for free devices
    /// (`Unschedulable`), or are refused and retried after the controller's backoff.
    fn attempt(&mut self, q: &mut Queue, t: i64, wl: u32) {
        let w = wl as usize;
        if self.live[w].is_some() || self.waiting[w].is_some() {
            return;
        }
        match self.quotas.violation(w) {
            Some(v) => {
                self.attempts[w] += 1;
                self.rejected[w] = Some(v);
                let delay = self.cx.sc.retry.delay_ms(self.attempts[w]);
                q.push(Event::new(t.saturating_add(delay), Kind::Arrival(wl)));
            }
            None => {
                self.quotas.book(w, true);
                self.rejected[w] = None;
                if let Some(c) = self.cap.as_mut() {
                    let needs = c.pod_needs(self.cx.world, w);
                    if let Err(m) = c.place(wl, &needs) {
                        c.wait(wl, needs, m);
                        self.waiting[w] = Some(t);
                        return;
                    }
                }
                self.start(q, t, t, wl);
            }
        }
    }
}

impl<'a, 'p> Driver for QuotaRun<'a, 'p> {
    type Report = Outcome;

    fn instant(&mut self, _: i64) {}

    /// Every event is decided as it applies: the budgets' step, then a completion, or an
    /// attempt to create the workload's pods.
    fn apply(&mut self, e: Event, q: &mut Queue) {
        let t = e.t;
        self.last_t = t;
        self.counters.events += 1;
        self.cx.progress.tick(t, self.counters.events);
        if self.budget_step(q, t, e.kind) {
            return;
        }
        match e.kind {
            Kind::Completion { index, generation } => self.complete(q, t, index, generation),
            Kind::Arrival(wl) | Kind::Requeue(wl) => self.attempt(q, t, wl),
            Kind::Deadline { index, generation } => {
                let lost = match self.cap.as_ref() {
                    Some(c) => self.nodes.deadline(c, index, generation),
                    None => Vec::new(),
                };
                self.end_lost(q, t, lost);
            }
            Kind::Tick
            | Kind::Budget
            | Kind::Timeline(_)
            | Kind::Released { .. }
            | Kind::PodsDone { .. }
            | Kind::PodsReady { .. } => {}
        }
    }

    fn decide(&mut self, _: i64, _: &mut Queue) -> bool {
        true
    }

    /// Changed ResourceQuotas (or Namespaces) cap the next attempt to create pods; running
    /// pods are never evicted by a quota change (the API server checks quotas at creation
    /// only), and a rejected workload retries when its controller's backoff says, as before.
    /// Then the event's node changes and MIG window ([`super::nodes`]).
    fn timeline(
        &mut self,
        t: i64,
        event: &crate::timeline::Event,
        changes: &crate::timeline::Changes,
        model: &gpuquota_model::Model,
        q: &mut Queue,
    ) -> bool {
        self.last_t = t;
        let mut effect = super::timeline_effect(t, event, changes);
        if !changes.objects.is_empty() {
            effect.capacity_before = hard_total(self.cx.world);
            match self.rebuild(t, model) {
                Ok(()) => effect.capacity_after = hard_total(self.cx.world),
                Err(d) => {
                    self.cx.warnings.extend(d.0);
                    return false;
                }
            }
        }
        self.effects.push(effect);
        if let Some(c) = self.cap.as_mut() {
            match self.nodes.apply(c, t, event.index, changes, model, q) {
                Ok(lost) => self.end_lost(q, t, lost),
                Err(m) => self.cx.warnings.push(
                    gpuquota_model::diag::Diagnostic::warning(crate::scenario::INVALID_SCENARIO, m)
                        .field(format!("spec.timeline[{}].migLayout", event.index)),
                ),
            }
        }
        true
    }

    fn report(self) -> Outcome {
        super::finish(self)
    }
}

/// Every ResourceQuota's hard caps on resources summed per resource (its index, the
/// report's flavor-resource under `resourcequota`), sorted.
fn hard_total(world: &World) -> Vec<(u32, i64)> {
    let mut total: BTreeMap<u32, i64> = BTreeMap::new();
    for q in &world.resource_quotas {
        for (_, r, hard) in &q.hard {
            if let Some(r) = r {
                let e = total.entry(r.index() as u32).or_insert(0);
                *e = e.saturating_add(hard.0);
            }
        }
    }
    total.into_iter().collect()
}

impl<'a, 'p> QuotaRun<'a, 'p> {
    /// The quotas of the changed platform, charged with every workload whose pods exist
    /// (running, or waiting for devices).
    ///
    /// # Errors
    /// The engine's refusal of the platform, or a change of the workloads or resources.
    ///
    /// # Complexity
    /// One world build plus O(workloads × quotas × hard keys).
    fn rebuild(
        &mut self,
        t: i64,
        model: &gpuquota_model::Model,
    ) -> Result<(), gpuquota_model::Diagnostics> {
        let input = super::rebuilt_world(self.cx.sc, model)?;
        let old = self.cx.world;
        if !super::same_workloads(input.world(), old) {
            return Err(super::unfollowable(t, "workloads"));
        }
        if input.world().resources.iter().ne(old.resources.iter()) {
            return Err(super::unfollowable(t, "resources"));
        }
        let world: &'a World = self
            .worlds
            .add(input)
            .ok_or_else(|| super::unfollowable(t, "platform more often than its events do"))?
            .world();
        let mut quotas = QuotaUse::new(world);
        for w in 0..self.live.len() {
            if self.live[w].is_some() || self.waiting[w].is_some() {
                quotas.book(w, true);
            }
        }
        self.quotas = quotas;
        self.cx.world = world;
        Ok(())
    }
}

impl<'a, 'p> Finish<'a, 'p> for QuotaRun<'a, 'p> {
    const ENGINE: Engine = Engine::ResourceQuota;

    fn cx(&mut self) -> &mut Context<'a, 'p> {
        &mut self.cx
    }

    fn timeline_effects(&mut self) -> Vec<TimelineEffect> {
        let mut effects = std::mem::take(&mut self.effects);
        let world = self.cx.world;
        self.nodes.fill(&mut effects, |w| {
            world.workloads[gpuquota_cohort::world::WlId::new(w as usize)]
                .key
                .clone()
        });
        effects
    }

    fn end(&self) -> EndOfRun {
        EndOfRun {
            running: self.live.iter().any(Option::is_some),
            last_t: self.last_t,
            counters: self.counters,
            held_back: Vec::new(),
            nodes: self.cap.as_ref().map_or(0, Capacity::node_count),
        }
    }

    /// Every workload's history; a pending one says why (a budget, the last 403, or its
    /// creation after the end).
    fn workload_outcomes(&mut self, end_ms: i64) -> Vec<WorkloadOutcome> {
        let world = self.cx.world;
        let mut workloads = Vec::with_capacity(world.workloads.len());
        for (i, w) in world.workloads.iter().enumerate() {
            if let Some((rs, st)) = self.live[i].take() {
                self.runs[i].push(Run {
                    reserved_ms: rs,
                    start_ms: st,
                    end_ms: end_ms.max(st),
                    end: RunEnd::Cut,
                    usage: self.quotas.usage_of(i),
                });
            }
            let running = self.runs[i].last().is_some_and(|r| r.end == RunEnd::Cut);
            let held = self.cx.budgets.as_ref().and_then(|b| b.pending(i as u32));
            let unschedulable = self.cap.as_ref().and_then(|c| {
                c.waiting(i as u32)
                    .map(|m| (UNSCHEDULABLE.to_owned(), m.to_owned()))
            });
            let pending = if self.finished[i].is_none() && !running {
                Some(
                    unschedulable
                        .or(held)
                        .or_else(|| self.rejected[i].take())
                        .unwrap_or_else(created_after_end),
                )
            } else {
                None
            };
            let (class, created_ms) = self.cx.class_and_created(i);
            workloads.push(WorkloadOutcome {
                key: w.key.clone(),
                queue: w.namespace.clone(),
                class,
                created_ms,
                runs: std::mem::take(&mut self.runs[i]),
                finished_ms: self.finished[i],
                pending,
            });
        }
        workloads
    }

    /// The namespaces with a ResourceQuota, their requests caps as nominal quotas.
    fn queue_outcomes(&self) -> Vec<QueueOutcome> {
        let mut by_ns: BTreeMap<String, BTreeMap<u32, i64>> = BTreeMap::new();
        for q in &self.cx.world.resource_quotas {
            let e = by_ns.entry(q.namespace.clone()).or_default();
            for (_, r, hard) in &q.hard {
                if let Some(r) = r {
                    let v = e.entry(u32::from(*r)).or_insert(i64::MAX);
                    *v = (*v).min(hard.0);
                }
            }
        }
        by_ns
            .into_iter()
            .map(|(name, m)| QueueOutcome {
                name,
                nominal: m.into_iter().collect(),
            })
            .collect()
    }
}
