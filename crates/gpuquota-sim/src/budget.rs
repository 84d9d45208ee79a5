//! GPU-hour budgets in the simulator: an engine-neutral gate that every engine's event loop
//! calls (the Kueue and `resourcequota` loops here; the KAI mode calls the same methods).
//!
//! The engine tells [`Budgets`] when a run starts ([`Budgets::started`], with its usage per
//! flavor-resource) and stops ([`Budgets::stopped`]); before deciding at an instant it calls
//! [`Budgets::advance`], asks [`Budgets::gate`] before letting a workload queue, re-offers
//! the workloads [`Budgets::renewed`] returns, stops the runs [`Budgets::to_stop`] names and
//! schedules a wake-up at [`Budgets::next_event`]. Workloads are the engine's dense indexes
//! (`0..n`), each with its namespace and queue (`""` for none).
//!
//! - `Wait`: a covered workload that would queue while the budget is spent is held back
//!   (pending `BudgetExhausted`, with the hours used and the renewal time) and offered
//!   again when the budget renews; workloads already queued when it becomes spent are taken
//!   out of their queue the same way.
//! - `Deprioritize`: the workload queues as its lowest-priority twin (see
//!   [`with_twins`]): the same workload at a priority below every other, which the
//!   engine's ordinary preemption may evict. Under `resourcequota`, which has neither
//!   priorities nor preemption, `Deprioritize` only reports.
//! - `Notify`: only reported.
//! - `stopRunning`: the runs of a spent budget's workloads end `Preempted` with reason
//!   `BudgetExhausted` and `by` = `Budget/<name>`; the workload then goes through the gate
//!   again.
//!
//! Charging is the ledger's ([`gpuquota_metering::budget`]): usage weighted as metering
//! weighs it, continuous, split at period boundaries, an overrun charged in full.

use std::collections::BTreeSet;

use gpuquota_metering::budget::{CardMap, Ledger, PeriodState};
use gpuquota_model::budget::{BUDGET_EXHAUSTED, BudgetRule, WhenSpent};
use gpuquota_model::{Model, ResourceName};

pub mod kai;

/// The suffix of a Deprioritize twin's name.
pub const TWIN_SUFFIX: &str = ".deprioritized";

/// What the gate says about a workload that wants to queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// Queue it.
    Admit,
    /// Hold it back until the budget renews.
    Wait(u32),
    /// Queue its lowest-priority twin instead (the twin's index).
    Twin(u32),
    /// It is a twin: it never queues by itself.
    Skip,
}

/// The budget state of a simulation.
#[derive(Debug, Clone)]
pub struct Budgets {
    /// The ledger.
    pub ledger: Ledger,
    cover: Vec<Vec<u32>>,
    fr_weight: Vec<Option<(String, i128)>>,
    running: Vec<Option<Vec<(u32, i128)>>>,
    waiting: Vec<BTreeSet<u32>>,
    held: Vec<Option<String>>,
    twin_of: Vec<Option<u32>>,
    original_of: Vec<Option<u32>>,
    applied: Vec<Option<i64>>,
    demoted: Vec<bool>,
    /// Workloads held back at least once, per budget.
    pub held_count: Vec<u32>,
    /// Runs stopped, per budget.
    pub stopped_count: Vec<u32>,
}

impl Budgets {
    /// The gate for `rules` over the engine's workloads (`(namespace, queue, key)` per
    /// index) and flavor-resources (`(flavor, resource)`), time 0 being `origin_unix_ms`.
    ///
    /// # Complexity
    /// O(workloads × budgets + frs × card types).
    pub fn new(
        rules: Vec<BudgetRule>,
        origin_unix_ms: i64,
        workloads: &[(&str, &str, &str)],
        frs: &[(String, ResourceName)],
        cards: &CardMap,
    ) -> Budgets {
        let n = workloads.len();
        let cover: Vec<Vec<u32>> = workloads
            .iter()
            .map(|(ns, q, _)| {
                rules
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| r.scope.covers(ns, q))
                    .map(|(i, _)| i as u32)
                    .collect()
            })
            .collect();
        let fr_weight = frs
            .iter()
            .map(|(f, r)| crate::bill::weigh(cards, f, r.as_str()))
            .collect();
        let mut twin_of = vec![None; n];
        let mut original_of = vec![None; n];
        let index: std::collections::BTreeMap<&str, usize> = workloads
            .iter()
            .enumerate()
            .map(|(i, w)| (w.2, i))
            .collect();
        for (i, (_, _, key)) in workloads.iter().enumerate() {
            if let Some(orig) = key.strip_suffix(TWIN_SUFFIX)
                && let Some(&j) = index.get(orig)
            {
                twin_of[j] = Some(i as u32);
                original_of[i] = Some(j as u32);
            }
        }
        let b = rules.len();
        Budgets {
            ledger: Ledger::new(rules, origin_unix_ms),
            cover,
            fr_weight,
            running: vec![None; n],
            waiting: vec![BTreeSet::new(); b],
            held: vec![None; n],
            twin_of,
            original_of,
            applied: vec![None; b],
            demoted: vec![false; n],
            held_count: vec![0; b],
            stopped_count: vec![0; b],
        }
    }

    /// The card types the run's flavor-resources are weighed by (what a budget's
    /// `spec.cardType` can match under the Kueue and `resourcequota` engines).
    pub fn card_types(&self) -> BTreeSet<String> {
        self.fr_weight
            .iter()
            .flatten()
            .map(|(c, _)| c.clone())
            .collect()
    }

    /// True when no budget covers any workload.
    pub fn is_idle(&self) -> bool {
        self.ledger.is_empty()
    }

    /// The twin of a workload, when it has one.
    pub fn twin(&self, wl: u32) -> Option<u32> {
        self.twin_of[wl as usize]
    }

    /// The original of a twin.
    pub fn original(&self, wl: u32) -> Option<u32> {
        self.original_of[wl as usize]
    }

    /// May `wl` queue now? (as of the last [`Budgets::advance`]).
    pub fn gate(&self, wl: u32) -> Gate {
        if self.original_of[wl as usize].is_some() {
            return Gate::Skip;
        }
        let mut depri = false;
        for &b in &self.cover[wl as usize] {
            if !self.ledger.spent(b as usize) {
                continue;
            }
            match self.ledger.rule(b as usize).when_spent {
                WhenSpent::Wait => return Gate::Wait(b),
                WhenSpent::Deprioritize => depri = true,
                WhenSpent::Notify => {}
            }
        }
        match (depri, self.twin_of[wl as usize]) {
            (true, Some(t)) => Gate::Twin(t),
            _ => Gate::Admit,
        }
    }

    /// Holds `wl` back for budget `b` until it renews (records the pending reason).
    pub fn hold(&mut self, wl: u32, b: u32) {
        let s = self.ledger.state(b as usize);
        let renew = gpuquota_metering::time::format_rfc3339(
            (self.ledger.origin_ms() + s.end_ms).div_euclid(1000),
        );
        self.held[wl as usize] = Some(format!(
            "Budget {:?} is spent: {} of {} GPU-hours used this period; it renews at {renew}",
            s.budget,
            s.used_hours(),
            s.budget_hours()
        ));
        if self.waiting[b as usize].insert(wl) {
            self.held_count[b as usize] += 1;
        }
    }

    /// The pending reason and message of a workload held back at the end, if it is.
    pub fn pending(&self, wl: u32) -> Option<(String, String)> {
        let waiting = self.waiting.iter().any(|w| w.contains(&wl));
        waiting.then(|| {
            (
                BUDGET_EXHAUSTED.to_owned(),
                self.held[wl as usize].clone().unwrap_or_default(),
            )
        })
    }

    /// A run of `wl` starts at `t` with `usage` per flavor-resource (engine units: GPUs are
    /// counted in devices).
    pub fn started(&mut self, t: i64, wl: u32, usage: &[(u32, i64)]) {
        let mut rates = Vec::new();
        for &b in &self.cover[wl as usize] {
            let want = self.ledger.rule(b as usize).card_type.clone();
            let mut rate = 0i128;
            for &(fr, a) in usage {
                if let Some(Some((card, w))) = self.fr_weight.get(fr as usize)
                    && want.as_ref().is_none_or(|c| c == card)
                {
                    rate = rate.saturating_add(i128::from(a).saturating_mul(*w));
                }
            }
            if rate != 0 {
                self.ledger.add_rate(b as usize, t, rate);
                rates.push((b, rate));
            }
        }
        self.running[wl as usize] = Some(rates);
    }

    /// A run of `wl` starts at `t` using, per card type, `rate` ledger units per ms (`L`
    /// per whole GPU: [`gpuquota_metering::money::L`]); the KAI mode, whose usage is per node
    /// rather than per flavor, charges this way.
    pub fn started_cards(&mut self, t: i64, wl: u32, cards: &[(String, i128)]) {
        let mut rates = Vec::new();
        for &b in &self.cover[wl as usize] {
            let want = self.ledger.rule(b as usize).card_type.clone();
            let rate = cards
                .iter()
                .filter(|(c, _)| want.as_ref().is_none_or(|w| w == c))
                .fold(0i128, |a, (_, r)| a.saturating_add(*r));
            if rate != 0 {
                self.ledger.add_rate(b as usize, t, rate);
                rates.push((b, rate));
            }
        }
        self.running[wl as usize] = Some(rates);
    }

    /// Marks the run of `wl` as deprioritized work (the KAI mode demotes the job itself
    /// instead of queueing a twin): a `stopRunning` `Deprioritize` budget leaves it running,
    /// as it leaves a twin.
    pub fn set_demoted(&mut self, wl: u32, demoted: bool) {
        self.demoted[wl as usize] = demoted;
    }

    /// True when a spent `Deprioritize` budget covers `wl` (and no spent `Wait` budget
    /// does: [`Budgets::gate`] says `Wait` first).
    pub fn deprioritized(&self, wl: u32) -> bool {
        self.cover[wl as usize].iter().any(|&b| {
            self.ledger.spent(b as usize)
                && self.ledger.rule(b as usize).when_spent == WhenSpent::Deprioritize
        })
    }

    /// The run of `wl` stops at `t` (finished, preempted, stopped).
    pub fn stopped(&mut self, t: i64, wl: u32) {
        if let Some(rates) = self.running[wl as usize].take() {
            for (b, r) in rates {
                self.ledger.add_rate(b as usize, t, -r);
            }
        }
    }

    /// Charges every budget up to `t`.
    pub fn advance(&mut self, t: i64) {
        self.ledger.advance(t);
    }

    /// Workloads held back by budgets that are no longer spent: offer them to the gate
    /// again.
    pub fn renewed(&mut self) -> Vec<u32> {
        let mut out = Vec::new();
        for b in 0..self.waiting.len() {
            if !self.ledger.spent(b) && !self.waiting[b].is_empty() {
                out.extend(std::mem::take(&mut self.waiting[b]));
            }
        }
        out.sort_unstable();
        out.dedup();
        for &w in &out {
            self.held[w as usize] = None;
        }
        out
    }

    /// Budgets that became spent, or renewed, since the last call: `(budget, spent)`. The
    /// engine re-gates the covered workloads waiting in a queue (and their twins).
    pub fn transitions(&mut self) -> Vec<(u32, bool)> {
        let mut out = Vec::new();
        for b in 0..self.applied.len() {
            let s = self.ledger.state(b);
            let now = s.spent().then_some(s.start_ms);
            if now != self.applied[b] {
                out.push((b as u32, now.is_some()));
                self.applied[b] = now;
            }
        }
        out
    }

    /// The workloads a budget covers.
    pub fn covered(&self, b: u32) -> impl Iterator<Item = u32> + '_ {
        self.cover
            .iter()
            .enumerate()
            .filter(move |(_, c)| c.contains(&b))
            .map(|(i, _)| i as u32)
    }

    /// Running workloads to stop now: covered by a spent `stopRunning` budget. Each comes
    /// with the budget's name (the run's `by`).
    ///
    /// # Complexity
    /// O(B) for B budgets while no `stopRunning` budget is spent (the common instant, so a
    /// session or cycle does not walk every workload); otherwise O(W + C) for W workloads
    /// and C (workload, budget) covers.
    pub fn to_stop(&mut self) -> Vec<(u32, String)> {
        let stopping: Vec<bool> = (0..self.stopped_count.len())
            .map(|b| self.ledger.rule(b).stop_running && self.ledger.spent(b))
            .collect();
        if !stopping.contains(&true) {
            return Vec::new();
        }
        let mut out = Vec::new();
        for (w, r) in self.running.iter().enumerate() {
            if r.is_none() {
                continue;
            }
            for &b in &self.cover[w] {
                let rule = self.ledger.rule(b as usize);
                if stopping[b as usize] {
                    let twin_ok = rule.when_spent == WhenSpent::Deprioritize
                        && (self.original_of[w].is_some() || self.demoted[w]);
                    if !twin_ok {
                        out.push((w as u32, format!("Budget/{}", rule.name)));
                        self.stopped_count[b as usize] += 1;
                        break;
                    }
                }
            }
        }
        out
    }

    /// The next instant after `t` at which a budget is spent or renews.
    pub fn next_event(&self, t: i64) -> Option<i64> {
        self.ledger.next_event(t)
    }

    /// Every period of every budget, for the report.
    pub fn periods(&self) -> Vec<PeriodState> {
        self.ledger.periods()
    }
}

/// The model with a lowest-priority twin (`<name>.deprioritized`) of every Workload whose
/// key is in `keys`: the same spec at a priority below every other workload's.
pub fn with_twins(model: &Model, keys: &[String], lowest: i32) -> Model {
    let mut m = model.clone();
    for k in keys {
        if let Some(w) = model.workloads.get(k) {
            let mut t = w.clone();
            t.metadata.name = format!("{}{TWIN_SUFFIX}", w.metadata.name);
            t.spec.priority = Some(lowest);
            t.status = Default::default();
            m.workloads.insert(format!("{k}{TWIN_SUFFIX}"), t);
        }
    }
    m
}

/// Folds each twin's outcome into its original (runs in time order; the twin disappears
/// from the report).
pub fn merge_twins(outcome: &mut crate::Outcome) {
    let mut twins: Vec<crate::WorkloadOutcome> = Vec::new();
    outcome.workloads.retain(|w| {
        if w.key.ends_with(TWIN_SUFFIX) {
            twins.push(w.clone());
            false
        } else {
            true
        }
    });
    for t in twins {
        let orig = t.key.trim_end_matches(TWIN_SUFFIX);
        if let Some(o) = outcome.workloads.iter_mut().find(|w| w.key == orig) {
            let twin_ran = !t.runs.is_empty();
            o.runs.extend(t.runs);
            o.runs.sort_by_key(|r| (r.start_ms, r.end_ms));
            if o.finished_ms.is_none() {
                o.finished_ms = t.finished_ms;
            }
            let running = o.runs.last().is_some_and(|r| r.end == crate::RunEnd::Cut);
            if o.finished_ms.is_some() || running {
                o.pending = None;
            } else if twin_ran && t.pending.is_some() {
                o.pending = t.pending;
            }
        }
    }
}

/// Offers `wl` to a Kueue scheduler through the gate: it queues, waits, or queues as its twin.
pub(crate) fn offer<P: gpuquota_cohort::Policy>(
    s: &mut gpuquota_cohort::Scheduler<'_, P>,
    b: &mut Budgets,
    wl: u32,
    first: bool,
) {
    let put = |s: &mut gpuquota_cohort::Scheduler<'_, P>, w: u32| {
        if first {
            s.arrive(gpuquota_cohort::ids::WlId::new(w as usize))
        } else {
            s.requeue(gpuquota_cohort::ids::WlId::new(w as usize))
        }
    };
    match b.gate(wl) {
        Gate::Admit => put(s, wl),
        Gate::Wait(bi) => b.hold(wl, bi),
        Gate::Twin(t) => put(s, t),
        Gate::Skip => {}
    }
}

/// The Kueue loop's budget step at instant `t`, before its cycles: charges up to `t`,
/// stops the runs of spent `stopRunning` budgets (returned with their `by`, for the engine
/// to end them; their quota is already released), re-gates the queued workloads of budgets
/// that became spent or renewed, and re-offers the held-back workloads of renewed budgets.
/// Returns whether anything changed.
pub(crate) fn kueue_step<P: gpuquota_cohort::Policy>(
    s: &mut gpuquota_cohort::Scheduler<'_, P>,
    b: &mut Budgets,
    t: i64,
    stops: &mut Vec<(u32, String)>,
) -> bool {
    b.advance(t);
    let mut changed = false;
    for (w, by) in b.to_stop() {
        b.stopped(t, w);
        s.evict(gpuquota_cohort::ids::WlId::new(w as usize));
        s.withhold(gpuquota_cohort::ids::WlId::new(w as usize));
        let orig = b.original(w).unwrap_or(w);
        offer(s, b, orig, false);
        stops.push((w, by));
        changed = true;
    }
    for (bi, _) in b.transitions() {
        let covered: Vec<u32> = b.covered(bi).collect();
        for w in covered {
            if s.is_queued(gpuquota_cohort::ids::WlId::new(w as usize)) {
                s.withhold(gpuquota_cohort::ids::WlId::new(w as usize));
                let orig = b.original(w).unwrap_or(w);
                offer(s, b, orig, false);
                changed = true;
            }
        }
    }
    for w in b.renewed() {
        offer(s, b, w, false);
        changed = true;
    }
    changed
}

/// Pushes a budget boundary event at the next instant a budget is spent or renews, once:
/// only when other events remain, a workload is held back, or the run has an end (so a
/// scenario without `spec.end` still terminates).
pub(crate) fn schedule(
    b: &Budgets,
    t: i64,
    end: Option<i64>,
    queue: &mut crate::kernel::Queue,
    at: &mut Option<i64>,
) {
    let Some(next) = b.next_event(t) else {
        return;
    };
    if at.is_some_and(|a| a > t && a <= next) {
        return;
    }
    let needed =
        end.is_some() || b.waiting.iter().any(|w| !w.is_empty()) || queue.has_other_than_budget();
    if needed && end.is_none_or(|e| next < e) {
        queue.push(crate::kernel::Event::new(next, crate::kernel::Kind::Budget));
        *at = Some(next);
    }
}

/// The warnings about what a scenario's budgets name but the scenario does not hold, each
/// a budget that would never be charged: the validator's `Not found` references (a
/// `spec.queue` that is neither a ClusterQueue nor a KAI Queue, a namespace without a
/// Namespace or any object in it; [`mod@gpuquota_model::validate`]), and a `spec.cardType`
/// that none of `known_cards` (the card types the run's usage is weighed by) is. Warnings,
/// as the validator judges references without `--complete`; errors under `--strict`.
pub fn reference_warnings(
    model: &Model,
    known_cards: &BTreeSet<String>,
) -> Vec<gpuquota_model::Diagnostic> {
    use gpuquota_model::validate::{Options, diagnostics_of};
    let mut out: Vec<gpuquota_model::Diagnostic> = diagnostics_of(
        model,
        &Options::default(),
        &[gpuquota_model::import::Kind::Budget],
    )
    .warnings()
    .cloned()
    .collect();
    for (name, b) in &model.budgets {
        if let Some(card) = b.spec.card_type.as_deref()
            && !known_cards.contains(card)
        {
            let known: Vec<&str> = known_cards
                .iter()
                .map(String::as_str)
                .filter(|c| !c.is_empty())
                .collect();
            let known = if known.is_empty() {
                "none".to_owned()
            } else {
                known.join(", ")
            };
            out.push(
                gpuquota_model::Diagnostic::warning(
                    gpuquota_model::diag::codes::NOT_FOUND,
                    format!(
                        "Not found: \"{card}\": no card type of this name in the scenario (its card types: {known}; spec.metering.cardTypes, or each ResourceFlavor without it); the budget is never charged"
                    ),
                )
                .object("Budget", name.clone())
                .field("spec.cardType"),
            );
        }
    }
    out
}

/// The card types a scenario's budgets weigh usage by (`spec.metering.cardTypes`; without
/// it each flavor is its own card type).
pub fn card_map(sc: &crate::Scenario) -> CardMap {
    crate::bill::card_map(sc.metering.as_ref())
}

/// The report's `budgets` section: per budget, its rule and every period
/// ([`crate::report::BudgetOut`]).
///
/// `[{"budget", "scope": {"queue"} | {"namespaces"}, "cardType", "whenSpent",
/// "stopRunning", "heldBack", "stopped", "periods": [{"startMs", "endMs", "gpuHours",
/// "usedGpuHours", "remainingGpuHours", "spentAtMs"}]}]`: times in ms since `spec.start`,
/// hours with six decimals (remaining is negative after an overrun), `spentAtMs` `null`
/// when the period's budget was not reached; `heldBack` counts the workloads held back,
/// `stopped` the runs stopped.
pub fn report(b: &Budgets) -> Vec<crate::report::BudgetOut> {
    use crate::report::{BudgetOut, PeriodOut, ScopeOut};
    let periods = b.periods();
    (0..b.ledger.len())
        .map(|i| {
            let r = b.ledger.rule(i);
            BudgetOut {
                budget: r.name.clone(),
                scope: match &r.scope {
                    gpuquota_model::budget::Scope::Queue(q) => ScopeOut::Queue(q.clone()),
                    gpuquota_model::budget::Scope::Namespaces(ns) => {
                        ScopeOut::Namespaces(ns.clone())
                    }
                },
                card_type: r.card_type.clone(),
                when_spent: r.when_spent.as_str().to_owned(),
                stop_running: r.stop_running,
                held_back: b.held_count[i],
                stopped: b.stopped_count[i],
                periods: periods
                    .iter()
                    .filter(|p| p.budget == r.name)
                    .map(|p| PeriodOut {
                        start_ms: p.start_ms,
                        end_ms: p.end_ms,
                        gpu_hours: p.budget_hours(),
                        used_gpu_hours: p.used_hours(),
                        remaining_gpu_hours: p.remaining_hours(),
                        spent_at_ms: p.spent_at_ms,
                    })
                    .collect(),
            }
        })
        .collect()
}

/// [`report`] as a JSON value.
pub fn to_json(b: &Budgets) -> serde_json::Value {
    serde_json::to_value(report(b)).unwrap_or(serde_json::Value::Null)
}
