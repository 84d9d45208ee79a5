//! The metrics an advice constrains and optimises, read from a simulated run's report.
//!
//! The one list of names (the report's own, as `gpuquota sim diff` and `gpuquota sim sweep`
//! print them), each with its unit in the advice's output:
//!
//! | metric | unit | from the report |
//! |---|---|---|
//! | `p95TimeToAdmission{class=C}` | ms | nearest-rank 95th percentile of first admission − creation over class `C`'s workloads (`classes.C.p95TimeToAdmissionMs`) |
//! | `meanTimeToAdmission{class=C}` | ms | the floor mean of the same (`classes.C.meanTimeToAdmissionMs`) |
//! | `budget{name=B}` | GPU-hours | the least `remainingGpuHours` over budget `B`'s periods (`budgets[]`); negative = exceeded |
//! | `cost` | minor units (cents) | the bill (`chargeback.totals.cost`) plus `costPerMonth` × (value − the scenario's value) of every knob with a price |
//! | `lostGpuHours` | GPU-hours, 0.001 | `nvidia.com/gpu` × duration of the `Preempted` runs (the sweep's `lostGpuHours`) |
//! | `gpuHours` | GPU-hours, 0.001 | the same over every run (the sweep's `gpuHours`) |
//! | `preemptions` | count | `Preempted` runs (`preemptions`) |
//! | `utilisation{cardType=T}` | %, 0.1 | `nvidia.com/gpu` × duration on the flavors of card type `T` (`spec.metering.cardTypes[].flavors`; without metering each flavor is its own type) ÷ (the cards of the Nodes those flavors select × the run's length) |
//!
//! A KAI run has the same names with the same meaning: a workload is a job (a PodGroup, or
//! a pod without one) of its leaf queue, admitted when its pods are bound (the first run's
//! start, the KAI report's `classes`); `Preempted` reads `Evicted` (reclaim, preemption or
//! consolidation: the sweep's `lostGpuHours` and the KAI report's `preemptions`);
//! `nvidia.com/gpu` reads the runs' `gpu`; and a card type is matched to Nodes as KAI's bill
//! matches them, by the `cardTypes[].model` (spaces written as `-`) equal to the Node's
//! `nvidia.com/gpu.product` label, or without metering the label itself (a Node without it
//! is its own type), its cards the Nodes' allocatable `nvidia.com/gpu`.
//!
//! A workload never admitted counts as waiting until the run's end, so that starving a class
//! cannot meet its constraint; when every workload is admitted the percentile is the
//! report's. Constraints: `METRIC <= VALUE`, `METRIC >= VALUE`, `METRIC < VALUE`, `METRIC >
//! VALUE` (a duration such as `1m`, `90s`, `0` for the times; a decimal otherwise) and
//! `budget{name=B} not exceeded` (its figure ≥ 0).

use std::collections::BTreeMap;

/// A metric ([module docs](self)).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Metric {
    /// `p95TimeToAdmission{class=C}`.
    P95Wait(String),
    /// `meanTimeToAdmission{class=C}`.
    MeanWait(String),
    /// `budget{name=B}`.
    Budget(String),
    /// `cost`.
    Cost,
    /// `lostGpuHours`.
    LostGpuHours,
    /// `gpuHours`.
    GpuHours,
    /// `preemptions`.
    Preemptions,
    /// `utilisation{cardType=T}`.
    Utilisation(String),
}

impl std::fmt::Display for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Metric::P95Wait(c) => write!(f, "p95TimeToAdmission{{class={c}}}"),
            Metric::MeanWait(c) => write!(f, "meanTimeToAdmission{{class={c}}}"),
            Metric::Budget(b) => write!(f, "budget{{name={b}}}"),
            Metric::Cost => f.write_str("cost"),
            Metric::LostGpuHours => f.write_str("lostGpuHours"),
            Metric::GpuHours => f.write_str("gpuHours"),
            Metric::Preemptions => f.write_str("preemptions"),
            Metric::Utilisation(t) => write!(f, "utilisation{{cardType={t}}}"),
        }
    }
}

/// The metric names, for messages.
pub const NAMES: &str = "p95TimeToAdmission{class=C}, meanTimeToAdmission{class=C}, budget{name=B}, cost, lostGpuHours, gpuHours, preemptions, utilisation{cardType=T}";

impl Metric {
    /// Parses `name` or `name{key=value}`.
    ///
    /// # Errors
    /// An unknown name or a missing or wrong label, the message listing the names.
    pub fn parse(s: &str) -> Result<Metric, String> {
        let s = s.trim();
        let (name, label) = match s.split_once('{') {
            Some((n, rest)) => {
                let inner = rest
                    .strip_suffix('}')
                    .ok_or_else(|| format!("{s:?}: expected name{{key=value}}"))?;
                let (k, v) = inner
                    .split_once('=')
                    .ok_or_else(|| format!("{s:?}: expected name{{key=value}}"))?;
                (n, Some((k.trim(), v.trim().trim_matches('"'))))
            }
            None => (s, None),
        };
        let need = |key: &str| -> Result<String, String> {
            match label {
                Some((k, v)) if k == key && !v.is_empty() => Ok(v.to_owned()),
                _ => Err(format!("{s:?}: {name} needs {{{key}=…}}")),
            }
        };
        let plain = |m: Metric| -> Result<Metric, String> {
            match label {
                None => Ok(m),
                Some(_) => Err(format!("{s:?}: {name} takes no label")),
            }
        };
        match name {
            "p95TimeToAdmission" => Ok(Metric::P95Wait(need("class")?)),
            "meanTimeToAdmission" => Ok(Metric::MeanWait(need("class")?)),
            "budget" => Ok(Metric::Budget(need("name")?)),
            "utilisation" => Ok(Metric::Utilisation(need("cardType")?)),
            "cost" => plain(Metric::Cost),
            "lostGpuHours" => plain(Metric::LostGpuHours),
            "gpuHours" => plain(Metric::GpuHours),
            "preemptions" => plain(Metric::Preemptions),
            _ => Err(format!("{s:?}: unknown metric; expected one of {NAMES}")),
        }
    }

    /// True for the metrics in milliseconds.
    fn is_time(&self) -> bool {
        matches!(self, Metric::P95Wait(_) | Metric::MeanWait(_))
    }
}

/// A comparison of a [`Constraint`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    /// `<=`.
    Le,
    /// `<`.
    Lt,
    /// `>=`.
    Ge,
    /// `>`.
    Gt,
}

/// A condition a configuration must meet.
#[derive(Debug, Clone, PartialEq)]
pub struct Constraint {
    /// As written.
    pub text: String,
    /// The metric.
    pub metric: Metric,
    /// The comparison.
    pub cmp: Cmp,
    /// The bound, in the metric's unit ([module docs](self)).
    pub bound: f64,
}

fn duration_ms(s: &str) -> Option<f64> {
    let s = s.trim();
    if s == "0" {
        return Some(0.0);
    }
    let units = [
        ("ms", 1.0),
        ("s", 1e3),
        ("m", 6e4),
        ("h", 3.6e6),
        ("d", 8.64e7),
    ];
    for (u, f) in units {
        if let Some(n) = s.strip_suffix(u)
            && let Ok(x) = n.trim().parse::<f64>()
            && x.is_finite()
            && x >= 0.0
        {
            return Some(x * f);
        }
    }
    None
}

impl Constraint {
    /// Parses a constraint ([module docs](self)).
    ///
    /// # Errors
    /// A message naming what does not parse.
    pub fn parse(s: &str) -> Result<Constraint, String> {
        let t = s.trim();
        if let Some(m) = t.strip_suffix("not exceeded") {
            let metric = Metric::parse(m)?;
            if !matches!(metric, Metric::Budget(_)) {
                return Err(format!(
                    "{s:?}: only budget{{name=…}} can be `not exceeded`"
                ));
            }
            return Ok(Constraint {
                text: t.to_owned(),
                metric,
                cmp: Cmp::Ge,
                bound: 0.0,
            });
        }
        let ops = [
            ("<=", Cmp::Le),
            (">=", Cmp::Ge),
            ("<", Cmp::Lt),
            (">", Cmp::Gt),
        ];
        for (op, cmp) in ops {
            if let Some((m, v)) = t.split_once(op) {
                let metric = Metric::parse(m)?;
                let bound = if metric.is_time() {
                    duration_ms(v).ok_or_else(|| {
                        format!(
                            "{s:?}: {:?} is not a duration (e.g. 1m, 90s, 500ms)",
                            v.trim()
                        )
                    })?
                } else {
                    v.trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|x| x.is_finite())
                        .ok_or_else(|| format!("{s:?}: {:?} is not a number", v.trim()))?
                };
                return Ok(Constraint {
                    text: t.to_owned(),
                    metric,
                    cmp,
                    bound,
                });
            }
        }
        Err(format!(
            "{s:?}: expected METRIC <= VALUE, METRIC >= VALUE or budget{{name=B}} not exceeded"
        ))
    }

    /// True when `value` meets the constraint.
    pub fn holds(&self, value: f64) -> bool {
        match self.cmp {
            Cmp::Le => value <= self.bound,
            Cmp::Lt => value < self.bound,
            Cmp::Ge => value >= self.bound,
            Cmp::Gt => value > self.bound,
        }
    }

    /// How far `value` is from meeting it, relative to the bound (0 when it holds).
    pub fn violation(&self, value: f64) -> f64 {
        if self.holds(value) {
            return 0.0;
        }
        let scale = self.bound.abs().max(1.0);
        (value - self.bound).abs() / scale
    }
}

/// An objective: a metric and its direction.
#[derive(Debug, Clone, PartialEq)]
pub struct Objective {
    /// The metric.
    pub metric: Metric,
    /// True for `maximize`.
    pub maximize: bool,
}

impl std::fmt::Display for Objective {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let d = if self.maximize {
            "maximize"
        } else {
            "minimize"
        };
        write!(f, "{d} {}", self.metric)
    }
}

/// One workload's part of a run.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(crate) struct Workload {
    /// Its ClusterQueue (KAI: its leaf queue).
    pub queue: String,
    /// Its class.
    pub class: String,
    /// First admission − creation; `None`: never admitted.
    pub wait_ms: Option<i64>,
    /// Created at, ms.
    pub created_ms: i64,
    /// milli-GPU × ms of its preempted runs.
    pub lost: i128,
    /// milli-GPU × ms of its runs per flavor.
    pub used: BTreeMap<String, i128>,
    /// Its preempted runs.
    pub preemptions: u64,
}

/// What the metrics need of one simulated run (a shard's `runs[]`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(crate) struct Run {
    /// Workloads by key (name, creation, occurrence), in key order.
    pub workloads: BTreeMap<String, Workload>,
    /// Per budget: its scope's ClusterQueue (if a queue) and least remaining micro-GPU-hours.
    pub budgets: BTreeMap<String, (Option<String>, i128)>,
    /// The bill in cents; `None` without metering.
    pub bill: Option<i64>,
    /// The bill's currency.
    pub currency: Option<String>,
    /// Cards (`nvidia.com/gpu` of the Nodes) per card type.
    pub cards: BTreeMap<String, i64>,
    /// Flavor → card type.
    pub card_type: BTreeMap<String, String>,
    /// The run's length, ms.
    pub window_ms: i64,
}

/// A non-negative amount of `minor` units of `10^−digits`, at most two digits, in hundredths
/// (`24000` → 2400000, `1.5` → 150); `None` for a negative amount or more digits.
/// Each budget's least remaining GPU-hours over its periods (micro GPU-hours), with the queue
/// it covers when its scope is one queue; the same for a Kueue and a KAI run.
fn least_remaining(
    budgets: Option<&[gpuquota_sim::report::BudgetOut]>,
) -> BTreeMap<String, (Option<String>, i128)> {
    let mut out = BTreeMap::new();
    for b in budgets.into_iter().flatten() {
        let least = b
            .periods
            .iter()
            .map(|p| p.remaining_gpu_hours.micro())
            .min()
            .unwrap_or(0);
        let queue = match &b.scope {
            gpuquota_sim::report::ScopeOut::Queue(q) => Some(q.clone()),
            _ => None,
        };
        let e = out.entry(b.budget.clone()).or_insert((queue, least));
        e.1 = e.1.min(least);
    }
    out
}

/// The bill's total in cents, when the run was metered and the total fits.
fn bill_cents(chargeback: Option<&gpuquota_sim::report::Chargeback>) -> Option<i64> {
    chargeback.and_then(|c| {
        let cost = c.meter.totals.cost;
        cents(cost.minor_units(), cost.minor_digits())
    })
}

fn cents(minor: i128, digits: u32) -> Option<i64> {
    let scale = 10i128.checked_pow(2u32.checked_sub(digits)?)?;
    let c = minor.checked_mul(scale)?;
    if c < 0 {
        return None;
    }
    i64::try_from(c).ok()
}

impl Run {
    /// Reads a run from its scenario and report.
    pub(crate) fn read(sc: &gpuquota_sim::Scenario, report: &gpuquota_sim::Report) -> Run {
        // the workloads from the outcome itself (the figures the JSON's `workloads[].runs`
        // show, without building the whole document per run); the rest from the sections'
        // own JSON
        let o = &report.outcome;
        let is_gpu: Vec<bool> = o
            .frs
            .iter()
            .map(|(_, r)| r.as_str() == "nvidia.com/gpu")
            .collect();
        let mut workloads = BTreeMap::new();
        for w in &o.workloads {
            let created = w.created_ms;
            let mut lost = 0i128;
            let mut used: BTreeMap<String, i128> = BTreeMap::new();
            let mut preemptions = 0;
            for r in &w.runs {
                let d = i128::from(r.end_ms - r.start_ms);
                let mut here = 0i128;
                let mut flavors: Vec<&str> = Vec::new();
                for &(fr, a) in &r.usage {
                    let Some((flavor, resource)) = o.frs.get(fr as usize) else {
                        continue;
                    };
                    if !is_gpu[fr as usize] {
                        flavors.push(flavor);
                        continue;
                    }
                    let g = resource
                        .quantity_of(gpuquota_model::Amount(a))
                        .scaled_ceil(3)
                        .map_or(0, i128::from);
                    *used.entry(flavor.clone()).or_default() += g * d;
                    here += g * d;
                }
                // a flavor charged without GPUs still appears, with none
                for f in flavors {
                    used.entry(f.to_owned()).or_default();
                }
                if r.end.as_str() == "Preempted" {
                    lost += here;
                    preemptions += 1;
                }
            }
            let name = w.key.as_str();
            let mut key = format!("{name}@{created}");
            let mut n = 1;
            while workloads.contains_key(&key) {
                n += 1;
                key = format!("{name}@{created}#{n}");
            }
            workloads.insert(
                key,
                Workload {
                    queue: w.queue.clone(),
                    class: w.class.clone(),
                    wait_ms: w.runs.first().map(|r| r.start_ms - created),
                    created_ms: created,
                    lost,
                    used,
                    preemptions,
                },
            );
        }
        let budgets = least_remaining(report.budgets.as_deref());
        let bill = bill_cents(report.chargeback.as_ref());
        let currency = report.chargeback.as_ref().map(|c| c.meter.currency.clone());
        // flavor → card type, and each type's cards
        let mut card_type: BTreeMap<String, String> = BTreeMap::new();
        if let Some(types) = sc.metering.as_ref().and_then(|m| m["cardTypes"].as_array()) {
            for t in types {
                let name = t["name"].as_str().unwrap_or_default();
                for f in t["flavors"].as_array().into_iter().flatten() {
                    if let Some(f) = f.as_str() {
                        card_type.entry(f.to_owned()).or_insert(name.to_owned());
                    }
                }
            }
        }
        for f in sc.model.resource_flavors.keys() {
            if sc.metering.is_none() {
                card_type.insert(f.clone(), f.clone());
            }
        }
        let mut cards: BTreeMap<String, i64> = BTreeMap::new();
        for (n, node) in &sc.model.nodes {
            let _ = n;
            let gpus = node
                .status
                .allocatable
                .get("nvidia.com/gpu")
                .and_then(|q| q.scaled_ceil(0))
                .unwrap_or(0);
            let mut types: Vec<&String> = sc
                .model
                .resource_flavors
                .iter()
                .filter(|(_, f)| {
                    !f.spec.node_labels.is_empty()
                        && f.spec
                            .node_labels
                            .iter()
                            .all(|(k, v)| node.metadata.labels.get(k) == Some(v))
                })
                .filter_map(|(f, _)| card_type.get(f))
                .collect();
            types.sort();
            types.dedup();
            for t in types {
                *cards.entry(t.clone()).or_default() += gpus;
            }
        }
        Run {
            workloads,
            budgets,
            bill,
            currency,
            cards,
            card_type,
            window_ms: o.end_ms,
        }
    }
}

impl Run {
    /// Reads a KAI run from its simulation and report: each job (PodGroup, or a pod
    /// without one) as a workload of its leaf queue, its wait the first run's start (its
    /// pods bound) − its creation, its lost GPU-time that of its `Evicted` runs (each one
    /// preemption), its GPU-time per node; a node's card type is the `spec.metering`
    /// card type whose `model` (spaces written as `-`) is the node's
    /// `nvidia.com/gpu.product` label, as KAI's bill matches them, or without metering
    /// that label itself (a node without it is its own type).
    pub(crate) fn read_kai(
        sim: &gpuquota_sim::Simulation,
        outcome: &gpuquota_sim::kai::KaiOutcome,
    ) -> Run {
        use gpuquota_sim::kai::KaiRunEnd;
        // milli-GPUs of nano-GPUs, rounded up as the sweep's figures are
        let milli = |nano: i128| -> i128 { (nano + 999_999).div_euclid(1_000_000) };
        let mut workloads = BTreeMap::new();
        for j in &outcome.jobs {
            let mut lost = 0i128;
            let mut used: BTreeMap<String, i128> = BTreeMap::new();
            let mut preemptions = 0;
            for r in &j.runs {
                let d = i128::from(r.end_ms - r.start_ms);
                for (node, u) in &r.placement {
                    *used.entry(node.clone()).or_default() += milli(u.0[0]) * d;
                }
                if matches!(r.end, KaiRunEnd::Evicted { .. }) {
                    lost += milli(r.usage.0[0]) * d;
                    preemptions += 1;
                }
            }
            workloads.insert(
                j.key.clone(),
                Workload {
                    queue: j.queue.clone(),
                    class: j.class.clone(),
                    wait_ms: j.runs.first().map(|r| r.start_ms - j.created_ms),
                    created_ms: j.created_ms,
                    lost,
                    used,
                    preemptions,
                },
            );
        }
        let budgets = least_remaining(outcome.budgets.as_deref());
        let bill = bill_cents(outcome.chargeback.as_ref());
        let currency = outcome
            .chargeback
            .as_ref()
            .map(|c| c.meter.currency.clone());
        let model = sim.model();
        let metering = sim.kai().and_then(|k| k.metering.as_ref());
        let products: Vec<(String, String)> = metering
            .and_then(|m| m["cardTypes"].as_array())
            .into_iter()
            .flatten()
            .filter_map(|t| {
                Some((
                    t["model"].as_str()?.replace(' ', "-"),
                    t["name"].as_str()?.to_owned(),
                ))
            })
            .collect();
        let mut card_type: BTreeMap<String, String> = BTreeMap::new();
        let mut cards: BTreeMap<String, i64> = BTreeMap::new();
        for (name, node) in &model.nodes {
            let product = node.metadata.labels.get("nvidia.com/gpu.product");
            let ty = if metering.is_some() {
                product.and_then(|p| {
                    products
                        .iter()
                        .find(|(m, _)| m == p)
                        .map(|(_, n)| n.clone())
                })
            } else {
                Some(product.cloned().unwrap_or_else(|| name.clone()))
            };
            let Some(ty) = ty else {
                continue;
            };
            let gpus = node
                .status
                .allocatable
                .get("nvidia.com/gpu")
                .and_then(|q| q.scaled_ceil(0))
                .unwrap_or(0);
            *cards.entry(ty.clone()).or_default() += gpus;
            card_type.insert(name.clone(), ty);
        }
        Run {
            workloads,
            budgets,
            bill,
            currency,
            cards,
            card_type,
            window_ms: outcome.end_ms,
        }
    }
}

/// A configuration's figures, summed from the workloads of its runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Totals {
    /// Waits per class (never admitted: until the end).
    pub waits: BTreeMap<String, Vec<i64>>,
    pub lost: i128,
    pub used: i128,
    pub used_by_type: BTreeMap<String, i128>,
    pub preemptions: u64,
    pub budgets: BTreeMap<String, i128>,
    pub bill: Option<i64>,
    pub cards: BTreeMap<String, i64>,
    pub window_ms: i64,
    pub extra_cost: i64,
}

impl Totals {
    /// Adds one workload of a run.
    pub(crate) fn add(&mut self, w: &Workload, run: &Run) {
        let wait = w.wait_ms.unwrap_or(run.window_ms - w.created_ms).max(0);
        self.waits.entry(w.class.clone()).or_default().push(wait);
        self.lost += w.lost;
        self.preemptions += w.preemptions;
        for (f, u) in &w.used {
            self.used += u;
            if let Some(t) = run.card_type.get(f) {
                *self.used_by_type.entry(t.clone()).or_default() += u;
            }
        }
    }

    /// The value of `m` (its unit in the [module docs](self)); `None` when the run has no
    /// such class, budget or card type, or no bill.
    pub(crate) fn value(&self, m: &Metric) -> Option<f64> {
        match m {
            Metric::P95Wait(c) => {
                let mut v = self.waits.get(c)?.clone();
                v.sort_unstable();
                let n = v.len();
                let rank = (n * 95).div_ceil(100).max(1);
                v.get(rank - 1).map(|x| *x as f64)
            }
            Metric::MeanWait(c) => {
                let v = self.waits.get(c)?;
                let s: i128 = v.iter().map(|x| i128::from(*x)).sum();
                Some((s / v.len().max(1) as i128) as f64)
            }
            Metric::Budget(b) => self.budgets.get(b).map(|x| *x as f64 / 1e6),
            Metric::Cost => self.bill.map(|b| (b + self.extra_cost) as f64),
            Metric::LostGpuHours => Some(round(self.lost as f64 / 3.6e9, 1000.0)),
            Metric::GpuHours => Some(round(self.used as f64 / 3.6e9, 1000.0)),
            Metric::Preemptions => Some(self.preemptions as f64),
            Metric::Utilisation(t) => {
                let cards = *self.cards.get(t)?;
                if cards <= 0 || self.window_ms <= 0 {
                    return Some(0.0);
                }
                let u = self.used_by_type.get(t).copied().unwrap_or(0) as f64;
                Some(round(
                    u / 1000.0 / (cards as f64 * self.window_ms as f64) * 100.0,
                    10.0,
                ))
            }
        }
    }
}

fn round(x: f64, scale: f64) -> f64 {
    (x * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_and_constraints_parse() {
        assert_eq!(
            Metric::parse("p95TimeToAdmission{class=inference}").unwrap(),
            Metric::P95Wait("inference".into())
        );
        assert_eq!(
            Metric::parse("utilisation{cardType=H200}")
                .unwrap()
                .to_string(),
            "utilisation{cardType=H200}"
        );
        assert!(Metric::parse("cost{x=1}").is_err());
        assert!(
            Metric::parse("waiting")
                .unwrap_err()
                .contains("unknown metric")
        );
        let c = Constraint::parse("p95TimeToAdmission{class=notebooks} <= 10m").unwrap();
        assert_eq!((c.cmp, c.bound), (Cmp::Le, 600_000.0));
        assert!(c.holds(600_000.0) && !c.holds(600_001.0));
        let b = Constraint::parse("budget{name=batch-monthly} not exceeded").unwrap();
        assert!(b.holds(0.0) && !b.holds(-104.0));
        assert_eq!(b.violation(-104.0), 104.0);
        assert!(Constraint::parse("cost not exceeded").is_err());
        assert!(Constraint::parse("p95TimeToAdmission{class=a} <= soon").is_err());
    }

    #[test]
    fn p95_is_nearest_rank() {
        let mut t = Totals::default();
        t.waits.insert("a".into(), (1..=20).collect());
        // rank ⌈0.95 × 20⌉ = 19
        assert_eq!(t.value(&Metric::P95Wait("a".into())), Some(19.0));
        assert_eq!(t.value(&Metric::MeanWait("a".into())), Some(10.0));
    }

    #[test]
    fn the_bill_in_hundredths() {
        assert_eq!(cents(2_400_000, 2), Some(2_400_000)); // 24000.00
        assert_eq!(cents(42, 0), Some(4200)); // 42 yen
        assert_eq!(cents(1005, 3), None);
        assert_eq!(cents(-1, 2), None);
    }
}
