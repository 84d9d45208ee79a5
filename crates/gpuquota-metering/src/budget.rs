//! The GPU-hour budget ledger: budgets ([`gpuquota_model::budget`]) charged from usage, in
//! metering's exact units, shared by the simulator and the snapshot commands.
//!
//! ```
//! use gpuquota_metering::budget::{CardMap, Ledger};
//! use gpuquota_model::import_str;
//!
//! let yaml = "apiVersion: gpuquota.dev/v1alpha1\nkind: Budget\nmetadata: {name: b}\n\
//!             spec: {queue: batch, gpuHours: 8, period: 24h}\n";
//! let rule = import_str("b.yaml", yaml)?.model.budgets["b"].rule().expect("valid");
//! let mut ledger = Ledger::new(vec![rule], 0);
//! let (_, w) = CardMap::default().weigh("h200", "nvidia.com/gpu").expect("a GPU");
//! ledger.add_rate(0, 0, 4 * w);                       // 4 GPUs from t = 0
//! assert_eq!(ledger.next_spent(0, 0), Some(2 * 3_600_000)); // 8 GPU-hours after 2 h
//! ledger.advance(3 * 3_600_000);
//! assert_eq!(ledger.state(0).used_hours(), "12.000000");   // charged in full: 4 over
//! assert_eq!(ledger.state(0).remaining_hours(), "-4.000000");
//! ledger.advance(25 * 3_600_000);                      // the next day starts at 8 again
//! assert_eq!(ledger.state(0).used_hours(), "4.000000");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Units and weights
//!
//! The ledger counts `1/L` card-milliseconds ([`crate::money::L`] = 720720), so every
//! weight metering uses is exact: a whole GPU (`nvidia.com/gpu`) weighs `L`; a MIG instance
//! (`nvidia.com/mig-<profile>`) its compute slices over the card's ([`crate::mig`]; a card
//! type without a catalogue model takes the 7-slice geometry of the A100/H100/H200 family:
//! `<k>g.` weighs `k/7`); a time-sliced or MPS replica (`nvidia.com/gpu.shared`)
//! `1/replicasPerGpu` of its card type (a whole card when the card type says nothing). Other
//! resources are not GPUs and are not charged.
//!
//! A flavor's card type is the card type that lists it in `flavors`, else the card type of
//! the same name, else the flavor's own name. Usage without a flavor (the `resourcequota`
//! engine) has card type `""` for whole GPUs, and for a MIG profile the first card type (by
//! name) whose model has that profile; a budget with `cardType` counts only its card type.
//!
//! # Periods
//!
//! Usage is integrated continuously and split at period boundaries: the part of a run in
//! each period is charged to that period. A period's usage may exceed its budget (an
//! admitted run is charged in full); the next period starts from zero.

use gpuquota_model::budget::{BudgetRule, WhenSpent};

use crate::figure::GpuHours;
use crate::mig::MigGeometry;
use crate::money::L;

/// `1/L` card-milliseconds per GPU-hour.
pub const UNITS_PER_GPU_HOUR: i128 = L * 3_600_000;

/// A card type as the ledger needs it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CardInfo {
    /// The card type's name (`H200`).
    pub name: String,
    /// Kueue ResourceFlavors of this card type.
    pub flavors: Vec<String>,
    /// Its MIG geometry, when its model is in the MIG catalogue.
    pub geometry: Option<MigGeometry>,
    /// Time-slicing or MPS replicas per card.
    pub replicas_per_gpu: Option<u64>,
}

/// Card types by flavor: how a flavor-resource's usage is weighed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CardMap {
    /// Card types, sorted by name.
    pub cards: Vec<CardInfo>,
}

impl CardMap {
    /// A map of these card types.
    pub fn new(mut cards: Vec<CardInfo>) -> CardMap {
        cards.sort_by(|a, b| a.name.cmp(&b.name));
        CardMap { cards }
    }

    /// The card type of a flavor (see the module docs).
    pub fn card_of(&self, flavor: &str) -> Option<&CardInfo> {
        self.cards
            .iter()
            .find(|c| c.flavors.iter().any(|f| f == flavor))
            .or_else(|| self.cards.iter().find(|c| c.name == flavor))
    }

    /// `(card type, weight in 1/L cards per unit)` of one flavor-resource, or `None` when the
    /// resource is not a GPU.
    ///
    /// # Complexity
    /// O(card types × flavors).
    pub fn weigh(&self, flavor: &str, resource: &str) -> Option<(String, i128)> {
        let card = if flavor.is_empty() {
            None
        } else {
            self.card_of(flavor)
        };
        let name = || card.map_or_else(|| flavor.to_owned(), |c| c.name.clone());
        if resource == "nvidia.com/gpu" {
            return Some((name(), L));
        }
        if resource == "nvidia.com/gpu.shared" {
            let r = card.and_then(|c| c.replicas_per_gpu).unwrap_or(1).max(1);
            let r = i128::from(r);
            return Some((name(), if L % r == 0 { L / r } else { L }));
        }
        let profile = resource.strip_prefix("nvidia.com/mig-")?;
        let (card_name, geometry) = match card {
            Some(c) => (c.name.clone(), c.geometry.as_ref()),
            None if flavor.is_empty() => {
                let found = self.cards.iter().find(|c| {
                    c.geometry
                        .as_ref()
                        .is_some_and(|g| g.profile(profile).is_some())
                });
                (
                    found.map_or_else(String::new, |c| c.name.clone()),
                    found.and_then(|c| c.geometry.as_ref()),
                )
            }
            None => (flavor.to_owned(), None),
        };
        let w = geometry
            .and_then(|g| {
                let p = g.profile(profile)?;
                crate::mig::ratio_units(u64::from(p.compute_slices), u64::from(g.compute_slices))
            })
            .or_else(|| {
                let k: u64 = profile.split('g').next()?.parse().ok()?;
                crate::mig::ratio_units(k.min(7), 7)
            })?;
        Some((card_name, w))
    }
}

/// One period of one budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeriodState {
    /// The budget's name.
    pub budget: String,
    /// What happens once spent.
    pub when_spent: WhenSpent,
    /// Period start, ms since the ledger's origin.
    pub start_ms: i64,
    /// Period end (renewal), ms since the ledger's origin.
    pub end_ms: i64,
    /// The budget in `1/L` card-ms.
    pub budget_units: i128,
    /// Used so far in `1/L` card-ms.
    pub used_units: i128,
    /// When the usage reached the budget, ms since the origin.
    pub spent_at_ms: Option<i64>,
}

impl PeriodState {
    /// Used GPU-hours, in millionths truncated toward zero.
    pub fn used_hours(&self) -> GpuHours {
        gpu_hours(self.used_units)
    }

    /// Budget minus used; negative after an overrun.
    pub fn remaining_hours(&self) -> GpuHours {
        gpu_hours(self.budget_units - self.used_units)
    }

    /// The budget's GPU-hours.
    pub fn budget_hours(&self) -> GpuHours {
        gpu_hours(self.budget_units)
    }

    /// True once the usage reached the budget.
    pub fn spent(&self) -> bool {
        self.used_units >= self.budget_units
    }
}

/// GPU-hours of `units` (`1/L` card-ms) with six decimals, truncated toward zero.
pub fn hours(units: i128) -> String {
    gpu_hours(units).to_string()
}

/// GPU-hours of `units` (`1/L` card-ms) in millionths, truncated toward zero (what
/// [`hours`] prints).
pub fn gpu_hours(units: i128) -> GpuHours {
    GpuHours::from_micro(units / (UNITS_PER_GPU_HOUR / 1_000_000))
}

#[derive(Debug, Clone)]
struct Account {
    rule: BudgetRule,
    cur: PeriodState,
    rate: i128,
    since: i64,
    history: Vec<PeriodState>,
}

/// Every budget's account, charged from usage rates over virtual time.
///
/// Time is in milliseconds since an origin (a simulation's `spec.start`, given as ms since
/// the Unix epoch), which is also the default anchor of the budgets' periods.
#[derive(Debug, Clone)]
pub struct Ledger {
    origin_ms: i64,
    accounts: Vec<Account>,
}

impl Ledger {
    /// A ledger of these budgets, in the order given, at time 0.
    pub fn new(rules: Vec<BudgetRule>, origin_unix_ms: i64) -> Ledger {
        let accounts = rules
            .into_iter()
            .map(|rule| {
                let (s, e) = rule.period_at(origin_unix_ms, origin_unix_ms);
                let cur = PeriodState {
                    budget: rule.name.clone(),
                    when_spent: rule.when_spent,
                    start_ms: s - origin_unix_ms,
                    end_ms: e - origin_unix_ms,
                    budget_units: rule.micro_gpu_hours * (UNITS_PER_GPU_HOUR / 1_000_000),
                    used_units: 0,
                    spent_at_ms: None,
                };
                Account {
                    rule,
                    cur,
                    rate: 0,
                    since: 0,
                    history: Vec::new(),
                }
            })
            .collect();
        Ledger {
            origin_ms: origin_unix_ms,
            accounts,
        }
    }

    /// Number of budgets.
    pub fn len(&self) -> usize {
        self.accounts.len()
    }

    /// True without budgets.
    pub fn is_empty(&self) -> bool {
        self.accounts.is_empty()
    }

    /// The budget's rule.
    pub fn rule(&self, b: usize) -> &BudgetRule {
        &self.accounts[b].rule
    }

    /// Integrates every account up to `t` (ms since the origin), closing the periods that
    /// ended on the way.
    ///
    /// # Complexity
    /// O(budgets + periods passed).
    pub fn advance(&mut self, t: i64) {
        for b in 0..self.accounts.len() {
            self.advance_one(b, t);
        }
    }

    fn advance_one(&mut self, b: usize, t: i64) {
        let origin = self.origin_ms;
        let a = &mut self.accounts[b];
        while a.since < t {
            let upto = t.min(a.cur.end_ms);
            let before = a.cur.used_units;
            let dt = i128::from(upto - a.since);
            a.cur.used_units = before.saturating_add(a.rate.saturating_mul(dt));
            if a.cur.spent_at_ms.is_none() && a.cur.used_units >= a.cur.budget_units {
                let need = a.cur.budget_units - before;
                let at = if a.rate > 0 && need > 0 {
                    a.since + i64::try_from((need + a.rate - 1) / a.rate).unwrap_or(i64::MAX)
                } else {
                    a.since
                };
                a.cur.spent_at_ms = Some(at);
            }
            a.since = upto;
            if upto == a.cur.end_ms {
                let (s, e) = a.rule.period_at(origin + upto, origin);
                let next = PeriodState {
                    start_ms: s - origin,
                    end_ms: e - origin,
                    used_units: 0,
                    spent_at_ms: None,
                    ..a.cur.clone()
                };
                a.history.push(std::mem::replace(&mut a.cur, next));
            }
        }
        let a = &mut self.accounts[b];
        if a.cur.spent_at_ms.is_none() && a.cur.used_units >= a.cur.budget_units {
            a.cur.spent_at_ms = Some(a.since.max(a.cur.start_ms));
        }
    }

    /// Changes a budget's usage rate (in `1/L` cards) by `delta` from `t` on.
    pub fn add_rate(&mut self, b: usize, t: i64, delta: i128) {
        self.advance_one(b, t);
        self.accounts[b].rate += delta;
    }

    /// Charges `units` at once to the period containing `t` (a `meter` report of the
    /// period so far).
    pub fn charge(&mut self, b: usize, t: i64, units: i128) {
        self.advance_one(b, t);
        let a = &mut self.accounts[b];
        a.cur.used_units = a.cur.used_units.saturating_add(units);
        if a.cur.spent_at_ms.is_none() && a.cur.used_units >= a.cur.budget_units {
            a.cur.spent_at_ms = Some(t);
        }
    }

    /// The current period of a budget (as of the last [`Ledger::advance`]).
    pub fn state(&self, b: usize) -> &PeriodState {
        &self.accounts[b].cur
    }

    /// True when the budget's current period is spent.
    pub fn spent(&self, b: usize) -> bool {
        self.accounts[b].cur.spent()
    }

    /// When the budget will be spent at its current rate (ms since the origin), if within
    /// its current period and not spent yet.
    pub fn next_spent(&self, b: usize, t: i64) -> Option<i64> {
        let a = &self.accounts[b];
        if a.cur.spent() || a.rate <= 0 {
            return None;
        }
        let used = a.cur.used_units + a.rate * i128::from(t - a.since);
        let need = a.cur.budget_units - used;
        let at = t + i64::try_from((need + a.rate - 1) / a.rate).ok()?;
        (at < a.cur.end_ms).then_some(at)
    }

    /// The next instant after `t` at which a budget is spent or renews.
    ///
    /// # Complexity
    /// O(budgets).
    pub fn next_event(&self, t: i64) -> Option<i64> {
        (0..self.accounts.len())
            .flat_map(|b| [self.next_spent(b, t), Some(self.accounts[b].cur.end_ms)])
            .flatten()
            .filter(|&x| x > t)
            .min()
    }

    /// Every period of every budget up to the current one, budget by budget.
    pub fn periods(&self) -> Vec<PeriodState> {
        self.accounts
            .iter()
            .flat_map(|a| a.history.iter().chain(std::iter::once(&a.cur)))
            .cloned()
            .collect()
    }

    /// The ledger's origin (ms since the Unix epoch).
    pub fn origin_ms(&self) -> i64 {
        self.origin_ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuquota_model::import_str;

    fn rule(spec: &str) -> BudgetRule {
        let yaml = format!(
            "apiVersion: gpuquota.dev/v1alpha1\nkind: Budget\nmetadata: {{name: b}}\nspec: {spec}\n"
        );
        import_str("b.yaml", &yaml).expect("imports").model.budgets["b"]
            .rule()
            .expect("valid")
    }

    #[test]
    fn a_run_across_the_boundary_is_split_between_periods() {
        let mut l = Ledger::new(vec![rule("{queue: q, gpuHours: 10, period: 1h}")], 0);
        l.add_rate(0, 1_800_000, 2 * L);
        l.advance(5_400_000);
        let p = l.periods();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].used_hours(), "1.000000");
        assert_eq!(p[1].used_hours(), "1.000000");
        assert_eq!(p[1].start_ms, 3_600_000);
    }

    #[test]
    fn weights_follow_metering() {
        let h200 = CardInfo {
            name: "H200".into(),
            flavors: vec!["h200-nvl".into()],
            geometry: MigGeometry::builtin("NVIDIA H200 NVL"),
            replicas_per_gpu: Some(4),
        };
        let m = CardMap::new(vec![h200]);
        assert_eq!(
            m.weigh("h200-nvl", "nvidia.com/gpu"),
            Some(("H200".into(), L))
        );
        assert_eq!(
            m.weigh("h200-nvl", "nvidia.com/mig-1g.18gb"),
            Some(("H200".into(), L / 7))
        );
        assert_eq!(
            m.weigh("h200-nvl", "nvidia.com/gpu.shared"),
            Some(("H200".into(), L / 4))
        );
        assert_eq!(
            m.weigh("", "nvidia.com/mig-3g.71gb"),
            Some(("H200".into(), 3 * L / 7))
        );
        assert_eq!(m.weigh("rtx", "nvidia.com/gpu"), Some(("rtx".into(), L)));
        assert_eq!(m.weigh("rtx", "cpu"), None);
    }
}

/// A budget as it stands at the end of a `meter` report (the period so far).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotBudget {
    /// The rule.
    pub rule: BudgetRule,
    /// Used in the report, `1/L` card-ms.
    pub used_units: i128,
    /// The budget, `1/L` card-ms.
    pub budget_units: i128,
    /// When the current period renews, seconds since the Unix epoch.
    pub renews_at: i64,
}

impl SnapshotBudget {
    /// True when the report's usage reached the budget.
    pub fn spent(&self) -> bool {
        self.used_units >= self.budget_units
    }

    /// The pending message of a workload it holds back.
    pub fn message(&self) -> String {
        format!(
            "Budget {:?} is spent: {} of {} GPU-hours used this period; it renews at {}",
            self.rule.name,
            hours(self.used_units),
            hours(self.budget_units),
            crate::time::format_rfc3339(self.renews_at)
        )
    }
}

#[cfg(feature = "serde")]
fn report_time(v: &serde_json::Value) -> Option<i64> {
    match v {
        serde_json::Value::String(s) => crate::time::parse_rfc3339(s),
        v => v.as_i64(),
    }
}

/// Reads a `meter` report (its JSON, [`crate::report::ReportOut`]) as the usage of the
/// period so far: `now` is the window's end, the budgets' default anchor its start. A
/// budget is charged the `allocatedHours` of the report's lines whose `department` is its
/// `spec.queue` or one of its `spec.namespaces` (metering's departments named like the
/// queues or namespaces they own), of its `cardType` when it has one.
///
/// # Errors
/// A message naming the field of the report that is missing or malformed.
///
/// # Complexity
/// O(budgets × lines).
#[cfg(feature = "serde")]
pub fn from_meter_report(
    rules: Vec<BudgetRule>,
    report: &serde_json::Value,
) -> Result<Vec<SnapshotBudget>, String> {
    let start = report_time(&report["window"]["start"])
        .ok_or("usage report: window.start is missing or not a time")?;
    let end = report_time(&report["window"]["end"])
        .ok_or("usage report: window.end is missing or not a time")?;
    let lines = report["lines"]
        .as_array()
        .ok_or("usage report: lines is missing (expected a `gpuquota meter` JSON report)")?;
    let mut parsed = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let dept = l["department"]
            .as_str()
            .ok_or_else(|| format!("usage report: lines[{i}].department is missing"))?;
        let card = l["cardType"]
            .as_str()
            .ok_or_else(|| format!("usage report: lines[{i}].cardType is missing"))?;
        let h = l["allocatedHours"]
            .as_str()
            .ok_or_else(|| format!("usage report: lines[{i}].allocatedHours is missing"))?;
        let micro = crate::money::parse_decimal(h, 6, "allocatedHours")
            .map_err(|e| format!("usage report: lines[{i}].allocatedHours: {e}"))?;
        parsed.push((dept, card, micro));
    }
    let per_micro = UNITS_PER_GPU_HOUR / 1_000_000;
    Ok(rules
        .into_iter()
        .map(|rule| {
            let used: i128 = parsed
                .iter()
                .filter(|(d, c, _)| {
                    let mine = match &rule.scope {
                        gpuquota_model::budget::Scope::Queue(q) => q == d,
                        gpuquota_model::budget::Scope::Namespaces(ns) => ns.iter().any(|n| n == d),
                    };
                    mine && rule.card_type.as_deref().is_none_or(|t| t == *c)
                })
                .map(|(_, _, m)| m * per_micro)
                .sum();
            let now_ms = end.saturating_mul(1000);
            let (_, renew) = rule.period_at(now_ms.saturating_sub(1), start.saturating_mul(1000));
            SnapshotBudget {
                budget_units: rule.micro_gpu_hours * per_micro,
                used_units: used,
                renews_at: renew.div_euclid(1000),
                rule,
            }
        })
        .collect())
}

/// Whether a PodGroup's status says `phase: Running`. Without the `serde` feature the model
/// keeps no status, so no PodGroup is running.
fn pod_group_running(status: Option<&gpuquota_model::Opaque>) -> bool {
    #[cfg(feature = "serde")]
    {
        status.and_then(|s| s.get("phase")).and_then(|p| p.as_str()) == Some("Running")
    }
    #[cfg(not(feature = "serde"))]
    {
        let _ = status;
        false
    }
}

/// What applying budgets to a snapshot did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Applied {
    /// Workloads (Kueue `namespace/name`) or PodGroups (KAI `namespace/name`) held back:
    /// key, queue, message.
    pub held: Vec<(String, String, String)>,
    /// Workloads or PodGroups admitted only at the lowest priority.
    pub deprioritized: Vec<String>,
    /// One line per spent budget (every `whenSpent`), for stderr.
    pub notes: Vec<String>,
}

/// Applies spent budgets to a snapshot before it is scheduled: `Wait` takes the covered
/// pending Kueue Workloads and KAI PodGroups (and the PodGroups' pods) out of the snapshot
/// and lists them as held back; `Deprioritize` gives the covered pending Workloads a
/// priority below every other workload's and the covered pending PodGroups KAI's lowest
/// built-in priority class `train` (50, preemptible); `Notify` changes nothing. Admitted
/// work is never touched (a snapshot has no "from now on": `stopRunning` is for the
/// simulator).
///
/// # Complexity
/// O(budgets × (workloads + pod groups + pods)).
pub fn apply_to_model(model: &mut gpuquota_model::Model, budgets: &[SnapshotBudget]) -> Applied {
    let mut out = Applied::default();
    let lowest = model
        .workloads
        .values()
        .filter_map(|w| w.spec.priority)
        .chain(model.workload_priority_classes.values().map(|c| c.value))
        .chain(model.priority_classes.values().map(|c| c.value))
        .chain(std::iter::once(0))
        .min()
        .unwrap_or(0)
        .saturating_sub(1);
    let cq_of = |m: &gpuquota_model::Model, w: &gpuquota_model::kueue::Workload| -> String {
        let ns = w.metadata.namespace.as_deref().unwrap_or("default");
        m.local_queues
            .get(&format!(
                "{ns}/{}",
                w.spec.queue_name.as_deref().unwrap_or("")
            ))
            .map(|lq| lq.spec.cluster_queue.clone())
            .unwrap_or_default()
    };
    for b in budgets.iter().filter(|b| b.spent()) {
        out.notes
            .push(format!("{} ({})", b.message(), b.rule.when_spent.as_str()));
        if b.rule.when_spent == WhenSpent::Notify {
            continue;
        }
        let keys: Vec<(String, String)> = model
            .workloads
            .iter()
            .filter(|(_, w)| w.status.as_ref().is_none_or(|s| s.admission.is_none()))
            .map(|(k, w)| (k.clone(), cq_of(model, w)))
            .filter(|(k, q)| {
                let ns = k.split('/').next().unwrap_or("");
                b.rule.scope.covers(ns, q)
            })
            .collect();
        for (k, q) in keys {
            match b.rule.when_spent {
                WhenSpent::Wait => {
                    model.workloads.remove(&k);
                    out.held.push((k, q, b.message()));
                }
                _ => {
                    if let Some(w) = model.workloads.get_mut(&k) {
                        w.spec.priority = Some(lowest);
                        out.deprioritized.push(k);
                    }
                }
            }
        }
        let groups: Vec<(String, String)> = model
            .pod_groups
            .iter()
            .filter(|(_, g)| !pod_group_running(g.status.as_ref()))
            .map(|(k, g)| (k.clone(), g.spec.queue.clone()))
            .filter(|(k, q)| b.rule.scope.covers(k.split('/').next().unwrap_or(""), q))
            .collect();
        for (k, q) in groups {
            let (ns, name) = k.split_once('/').unwrap_or(("", k.as_str()));
            let running = model.pods.values().any(|p| {
                p.metadata.namespace.as_deref() == Some(ns)
                    && p.metadata
                        .annotations
                        .get(gpuquota_model::kai::POD_GROUP_ANNOTATION)
                        .map(String::as_str)
                        == Some(name)
                    && p.spec.node_name.as_deref().is_some_and(|n| !n.is_empty())
            });
            if running {
                continue;
            }
            match b.rule.when_spent {
                WhenSpent::Wait => {
                    model.pod_groups.remove(&k);
                    model.pods.retain(|_, p| {
                        !(p.metadata.namespace.as_deref() == Some(ns)
                            && p.metadata
                                .annotations
                                .get(gpuquota_model::kai::POD_GROUP_ANNOTATION)
                                .map(String::as_str)
                                == Some(name))
                    });
                    out.held.push((k, q, b.message()));
                }
                _ => {
                    if let Some(g) = model.pod_groups.get_mut(&k) {
                        g.spec.priority_class_name = Some("train".into());
                        out.deprioritized.push(k);
                    }
                }
            }
        }
    }
    out.held.sort();
    out.held.dedup();
    out.deprioritized.sort();
    out.deprioritized.dedup();
    out
}
