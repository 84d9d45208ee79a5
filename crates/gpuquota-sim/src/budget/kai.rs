//! GPU-hour budgets in the KAI mode: the engine-neutral gate of [`crate::budget`] behind a
//! [`SessionHook`], so the KAI sessions decide and the budgets only open, close or demote.
//!
//! - **Charging**: every run is charged from its start to its end at its GPUs per node,
//!   weighed by the node's card type (the `spec.metering.cardTypes` entry whose `model`,
//!   spaces written as `-`, is the node's `nvidia.com/gpu.product` label, as GPU feature
//!   discovery writes it; else the label itself; `""` without one). On a time-sliced or MPS
//!   node (the `nvidia.com/gpu.replicas` label the device plugin, or the import from its
//!   sharing configuration, sets) each advertised GPU is `1/replicas` of a card. KAI counts MIG instances
//!   and fractions as GPU equivalents; the ledger takes them at that weight (`L` per
//!   device, [`gpuquota_metering::money::L`]), floored to its unit.
//! - **Enforcement** happens when a session runs: a budget spent between two sessions acts
//!   from the next one (at most `sessionInterval` later; the Kueue mode acts at the exact
//!   instant), and its usage is charged in full meanwhile.
//! - `Wait`: the covered pending jobs are held (invisible to the session) until the budget
//!   renews; held at the end, a job is pending `BudgetExhausted` with the hours used and the
//!   renewal time.
//! - `Deprioritize`: the covered pending jobs may start only demoted: preemptible, at a
//!   priority one below the lowest of the scenario's jobs. KAI has no per-job marker for
//!   over-quota work, so this is the nearest KAI says it: the job is the last of its queue to
//!   be allocated and the first victim of in-queue preemption (the `preempt` action evicts
//!   lower-priority preemptible jobs of the same queue), it never counts as non-preemptible
//!   work within deserved quota (only preemptible jobs may go over quota), and the
//!   `reclaim` action takes it back as soon as its queue is above its fair share
//!   (`kai-scheduler/KAI-Scheduler: pkg/scheduler/actions/preempt/preempt.go`,
//!   `pkg/scheduler/actions/reclaim/reclaim.go`, `pkg/scheduler/plugins/proportion`). A
//!   demoted job keeps its demotion until it ends (as a Kueue twin does); pending again, it
//!   gets its own priority back once the budget renews.
//! - `Notify`: only reported.
//! - `stopRunning: true`: the running covered jobs are evicted (pods deleted and recreated
//!   pending) in the first session after the budget is spent; their run ends `Evicted` with
//!   `action: budget`, `reason: BudgetExhausted` and `by: Budget/<name>`. Demoted jobs of a
//!   `Deprioritize` budget are left running.
//!
//! A `spec.queue` budget covers the jobs of that leaf queue; `spec.namespaces` the jobs in
//! those namespaces.

use std::collections::BTreeMap;

use gpuquota_metering::money::L;
use gpuquota_model::budget::BudgetRule;
use gpuquota_rank::division::Resource;
use gpuquota_rank::ids::PerResource;

use crate::budget::{Budgets, Gate};
use crate::driver::kai::{Admission, NodeLabels, SessionHook};
use crate::scenario::kai::KaiScenario;

/// The label GPU feature discovery puts the card's product name in.
pub const PRODUCT_LABEL: &str = "nvidia.com/gpu.product";

/// The budgets of a KAI scenario as a session hook.
#[derive(Debug, Clone)]
pub struct KaiBudgets {
    /// The gate and its ledger.
    pub budgets: Budgets,
    index: BTreeMap<String, u32>,
    keys: Vec<String>,
    /// (product label, card type name).
    cards: Vec<(String, String)>,
    last: Vec<Admission>,
    first: bool,
}

/// The card type of a node with these labels (module docs).
pub fn card_of_node(cards: &[(String, String)], labels: &NodeLabels) -> String {
    let Some(product) = labels.get(PRODUCT_LABEL) else {
        return String::new();
    };
    cards
        .iter()
        .find(|(p, _)| p == product)
        .map_or_else(|| product.clone(), |(_, c)| c.clone())
}

/// `(product label, card type)` of the scenario's `spec.metering.cardTypes`.
pub fn card_products(metering: Option<&serde_json::Value>) -> Vec<(String, String)> {
    metering
        .and_then(|m| m["cardTypes"].as_array())
        .into_iter()
        .flatten()
        .filter_map(|c| {
            let name = c["name"].as_str()?;
            let model = c["model"].as_str().unwrap_or(name);
            Some((model.replace(' ', "-"), name.to_owned()))
        })
        .collect()
}

impl KaiBudgets {
    /// The hook for `rules` over the scenario's jobs, each in its leaf queue (`queue_of`:
    /// job key → queue name, as the KAI snapshot reads it).
    ///
    /// # Complexity
    /// O(jobs × budgets).
    pub fn new(
        sc: &KaiScenario,
        rules: Vec<BudgetRule>,
        queue_of: &BTreeMap<String, String>,
    ) -> KaiBudgets {
        let keys: Vec<String> = sc.jobs.keys().cloned().collect();
        let queues: Vec<String> = keys
            .iter()
            .map(|k| queue_of.get(k).cloned().unwrap_or_default())
            .collect();
        let wls: Vec<(&str, &str, &str)> = keys
            .iter()
            .zip(&queues)
            .map(|(k, q)| (k.split('/').next().unwrap_or(""), q.as_str(), k.as_str()))
            .collect();
        let origin = i64::try_from(sc.start.unix_nanos().div_euclid(1_000_000)).unwrap_or(0);
        let budgets = Budgets::new(rules, origin, &wls, &[], &Default::default());
        let index = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (k.clone(), i as u32))
            .collect();
        KaiBudgets {
            budgets,
            index,
            last: vec![Admission::Open; keys.len()],
            keys,
            cards: card_products(sc.metering.as_ref()),
            first: true,
        }
    }

    /// The report's `budgets` section ([`crate::budget::to_json`]).
    pub fn to_json(&self) -> serde_json::Value {
        crate::budget::to_json(&self.budgets)
    }
}

impl SessionHook for KaiBudgets {
    fn may_admit(&mut self, queue: &str, _now_ms: i64) -> bool {
        // A queue as a whole is closed when a spent `Wait` budget names it.
        !(0..self.budgets.ledger.len()).any(|b| {
            let r = self.budgets.ledger.rule(b);
            r.when_spent == gpuquota_model::budget::WhenSpent::Wait
                && self.budgets.ledger.spent(b)
                && r.scope.covers("", queue)
        })
    }

    fn admission(&mut self, job: &str, queue: &str, now_ms: i64) -> Admission {
        let Some(&wl) = self.index.get(job) else {
            return if self.may_admit(queue, now_ms) {
                Admission::Open
            } else {
                Admission::Closed
            };
        };
        let a = match self.budgets.gate(wl) {
            Gate::Wait(b) => {
                self.budgets.hold(wl, b);
                Admission::Closed
            }
            _ if self.budgets.deprioritized(wl) => Admission::Deprioritized,
            _ => Admission::Open,
        };
        self.last[wl as usize] = a;
        a
    }

    fn advance(&mut self, now_ms: i64) -> bool {
        self.budgets.advance(now_ms);
        let moved = !self.budgets.transitions().is_empty();
        let renewed = !self.budgets.renewed().is_empty();
        std::mem::take(&mut self.first) || moved || renewed
    }

    fn started(&mut self, job: &str, now_ms: i64, placement: &[(&NodeLabels, PerResource<i128>)]) {
        let Some(&wl) = self.index.get(job) else {
            return;
        };
        let mut per: BTreeMap<String, i128> = BTreeMap::new();
        for (labels, u) in placement {
            // a time-sliced or MPS node advertises replicas: each is 1/replicas of a GPU
            let replicas = labels
                .get(gpuquota_model::workloads::sharing::REPLICAS_LABEL)
                .and_then(|r| r.parse::<i128>().ok())
                .filter(|r| *r > 1)
                .unwrap_or(1);
            let rate = u[Resource::Gpu].saturating_mul(L) / 1_000_000_000 / replicas;
            let e = per.entry(card_of_node(&self.cards, labels)).or_default();
            *e = e.saturating_add(rate);
        }
        let per: Vec<(String, i128)> = per.into_iter().collect();
        self.budgets
            .set_demoted(wl, self.last[wl as usize] == Admission::Deprioritized);
        self.budgets.started_cards(now_ms, wl, &per);
    }

    fn stopped(&mut self, job: &str, now_ms: i64) {
        if let Some(&wl) = self.index.get(job) {
            self.budgets.stopped(now_ms, wl);
        }
    }

    fn to_stop(&mut self, _now_ms: i64) -> Vec<(String, String)> {
        self.budgets
            .to_stop()
            .into_iter()
            .filter_map(|(w, by)| self.keys.get(w as usize).map(|k| (k.clone(), by)))
            .collect()
    }

    fn pending(&self, job: &str) -> Option<(String, String)> {
        self.index.get(job).and_then(|&w| self.budgets.pending(w))
    }
}
