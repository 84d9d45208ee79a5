//! What-if: two simulated runs of the same workloads (fair sharing on and off,
//! `lendingLimit: 0` against unset, Kueue against ResourceQuota only, Kueue against KAI of
//! the same platform, one KAI policy against another) compared per department.
//!
//! `gpuquota sim diff A.yaml B.yaml [--output json|table] [--plot FILE.svg]`; A and B may
//! each be a Kueue, ResourceQuota or KAI scenario ([`Simulated`], [`diff_runs`]).
//!
//! A department is a `spec.metering` department of scenario A (by its namespaces), else a
//! workload's (KAI: a job's) namespace. Per department, for A, B and B − A:
//!
//! - `gpuHours`: ∫ GPU usage over its runs, weighted as metering weighs it
//!   ([`gpuquota_metering::budget::CardMap`]), six decimals; for KAI per node, as the KAI
//!   bill weighs it (a node's card type by its product label, GPU fractions as their share,
//!   a time-sliced or MPS replica as 1/replicas of a card, a MIG instance as its profile's
//!   share of the card);
//! - `borrowedHours`: its `chargeback` lines' `borrowedHours` when the scenario meters,
//!   else (Kueue, ResourceQuota) ∫ max(0, usage − nominal) of GPU resources of the queue
//!   named like the department (GPU-hours), else `null` (a KAI run without `spec.metering`:
//!   KAI has no borrowing, and its usage above deserved quota is not a figure here);
//! - `meanTimeToAdmissionMs`, `p95TimeToAdmissionMs`: first admission (KAI: the first
//!   run's start, session plus bind latency) − creation over its admitted workloads (floor
//!   mean, nearest-rank p95), `null` without any;
//! - `preemptions`: its `Preempted` runs (KAI: `Evicted` runs, a spent `stopRunning`
//!   budget's included, as Kueue reports those `Preempted`); `lostHours`: their GPU-hours
//!   (0 under `resume`);
//! - `utilizationPercent`: its usage × 100 ÷ the GPU-hours of the quota of the queue named
//!   like the department (× the run's length), rounded half-up to 0.1; `null` without such
//!   a queue or with a quota of 0 or unlimited (a borrower: its use is in `gpuHours` and
//!   `borrowedHours`). Kueue and ResourceQuota: `gpuHours` against the ClusterQueue's
//!   nominal quota of its GPU resources, weighted as metering weighs them (the ResourceQuota
//!   run's queues are namespaces, but the platform's ClusterQueues are still its quota
//!   picture). KAI: the GPUs as KAI counts them (a MIG instance of `g` compute slices is
//!   `g` GPUs) against the Queue's deserved `gpu` quota, KAI's own units on both sides. So a
//!   department whose use did not change shows a delta of 0, across engines too;
//! - `cost`: the sum of its `chargeback` lines' `total`, `null` without metering.
//!
//! A figure one run has and the other has not (`borrowedHours` of a KAI run without
//! metering against a Kueue run, `cost` of a run without metering) is `null` in the JSON
//! and `-` in the table, and so is its delta.
//!
//! The comparison is a what-if only when both scenarios submit the same workloads: the same
//! instances (`namespace/name`, repeat copies included; KAI: the PodGroup's, or a lone pod's)
//! with the same creation time, runtime and pod sets (KAI against KAI: the PodGroup's spec;
//! Kueue against KAI: creation time and runtime only, as a Workload's pod sets and a
//! PodGroup's pods are different objects). When they do not, `workloads.same` is false, the table's first line says so
//! (with the counts and the first workload that differs), and `gpuquota sim diff` warns on
//! stderr (an error under `--strict`, exit 1, nothing printed).
//!
//! JSON: `{"a": name, "b": name, "workloads": {"same", "onlyInA", "onlyInB", "changed",
//! "first"}, "departments": {dept: {metric: {"a", "b", "delta"}}}}`; numbers stay numbers,
//! hours and money strings with their decimals (delta computed exactly on the decimals, in
//! the more precise of the two). What did not change shows a delta of 0 (`0`, `0.0`,
//! `0.000000`), never `-0.0`.

use std::collections::BTreeMap;

use gpuquota_metering::budget::CardMap;
use gpuquota_metering::figure::{GpuHours, Money};
use serde::Serialize;

use crate::kai::{KaiOutcome, KaiScenario};
use crate::{Report, RunEnd, Scenario, Simulation, SimulationReport};

/// The metrics, in output order.
pub const METRICS: [&str; 8] = [
    "gpuHours",
    "borrowedHours",
    "meanTimeToAdmissionMs",
    "p95TimeToAdmissionMs",
    "preemptions",
    "lostHours",
    "utilizationPercent",
    "cost",
];

/// Namespace → department of `spec.metering.departments` (the first that lists it).
pub fn departments_of(metering: Option<&serde_json::Value>) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    if let Some(ds) = metering.and_then(|m| m["departments"].as_array()) {
        for d in ds {
            for n in d["namespaces"].as_array().into_iter().flatten() {
                if let (Some(n), Some(name)) = (n.as_str(), d["name"].as_str()) {
                    m.entry(n.to_owned()).or_insert(name.to_owned());
                }
            }
        }
    }
    m
}

fn micro_str(micro: i128) -> GpuHours {
    GpuHours::from_micro(micro)
}

/// One run's metrics of one department (module docs); `None` is the JSON's `null`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Metrics {
    /// GPU-hours, six decimals.
    pub gpu_hours: Option<GpuHours>,
    /// Borrowed GPU-hours, six decimals.
    pub borrowed_hours: Option<GpuHours>,
    /// Mean time to admission, ms.
    pub mean_time_to_admission_ms: Option<i64>,
    /// Nearest-rank p95 time to admission, ms.
    pub p95_time_to_admission_ms: Option<i64>,
    /// `Preempted` runs.
    pub preemptions: Option<i64>,
    /// GPU-hours of `Preempted` runs, six decimals.
    pub lost_hours: Option<GpuHours>,
    /// GPU-hours ÷ nominal quota GPU-hours of the queue named like it, percent (module docs).
    pub utilization_percent: Option<f64>,
    /// Σ of the chargeback lines' `total`, in the currency's digits.
    pub cost: Option<Money>,
}

/// One of the two runs compared: a scenario of either engine and the report its run made.
#[derive(Debug, Clone, Copy)]
pub enum Simulated<'a> {
    /// A Kueue or ResourceQuota run.
    Kueue(&'a Scenario, &'a Report),
    /// A KAI run.
    Kai(&'a KaiScenario, &'a KaiOutcome),
}

impl<'a> Simulated<'a> {
    /// The run of `simulation` that `report` is (`None` when they are of different engines).
    pub fn of(simulation: &'a Simulation, report: &'a SimulationReport) -> Option<Simulated<'a>> {
        match (simulation.kueue(), simulation.kai(), report) {
            (Some(sc), _, SimulationReport::Kueue(r)) => Some(Simulated::Kueue(sc, r)),
            (_, Some(sc), SimulationReport::Kai(r)) => Some(Simulated::Kai(sc, r)),
            _ => None,
        }
    }

    /// The report's name (the scenario's `metadata.name`).
    pub fn name(&self) -> &'a str {
        match self {
            Simulated::Kueue(_, r) => &r.name,
            Simulated::Kai(_, o) => &o.name,
        }
    }

    /// The engine, as the scenario's `spec.engine` names it (`kueue`, `resourcequota`, `kai`).
    pub fn engine(&self) -> &'static str {
        match self {
            Simulated::Kueue(sc, _) => sc.engine.as_str(),
            Simulated::Kai(..) => "kai",
        }
    }

    /// The scenario's `spec.metering`.
    pub fn metering(&self) -> Option<&'a serde_json::Value> {
        match self {
            Simulated::Kueue(sc, _) => sc.metering.as_ref(),
            Simulated::Kai(sc, _) => sc.metering.as_ref(),
        }
    }

    fn end_ms(&self) -> i64 {
        match self {
            Simulated::Kueue(_, r) => r.outcome.end_ms,
            Simulated::Kai(_, o) => o.end_ms,
        }
    }

    /// Virtual time 0 of the run.
    pub fn start(&self) -> gpuquota_model::Timestamp {
        match self {
            Simulated::Kueue(_, r) => r.start,
            Simulated::Kai(_, o) => o.start,
        }
    }

    fn chargeback(&self) -> Option<&'a crate::report::Chargeback> {
        match self {
            Simulated::Kueue(_, r) => r.chargeback.as_ref(),
            Simulated::Kai(_, o) => o.chargeback.as_ref(),
        }
    }

    fn resume(&self) -> bool {
        match self {
            Simulated::Kueue(sc, _) => sc.resume,
            Simulated::Kai(sc, _) => sc.resume,
        }
    }

    /// Every workload (KAI: job) with its runs' GPUs, weighed as metering weighs them.
    fn jobs(&self) -> Vec<Job<'a>> {
        let cards: CardMap = crate::bill::card_map(self.metering());
        match *self {
            Simulated::Kueue(_, report) => {
                let o = &report.outcome;
                o.workloads
                    .iter()
                    .map(|w| Job {
                        namespace: w.key.split('/').next().unwrap_or(""),
                        first_start_ms: w.runs.first().map(|r| r.start_ms),
                        created_ms: w.created_ms,
                        spans: w
                            .runs
                            .iter()
                            .map(|r| {
                                let mut units = 0i128;
                                for &(fr, a) in &r.usage {
                                    let (f, res) = &o.frs[fr as usize];
                                    if let Some((_, wt)) = cards.weigh(f, res.as_str()) {
                                        units += wt * i128::from(a);
                                    }
                                }
                                Span {
                                    start_ms: r.start_ms,
                                    end_ms: r.end_ms,
                                    units,
                                    quota_units: units,
                                    preempted: matches!(r.end, RunEnd::Preempted { .. }),
                                }
                            })
                            .collect(),
                    })
                    .collect()
            }
            Simulated::Kai(sc, outcome) => {
                let products = crate::kai::budget::card_products(self.metering());
                outcome
                    .jobs
                    .iter()
                    .map(|j| Job {
                        namespace: j.key.split('/').next().unwrap_or(""),
                        first_start_ms: j.runs.first().map(|r| r.start_ms),
                        created_ms: j.created_ms,
                        spans: j
                            .runs
                            .iter()
                            .map(|r| Span {
                                start_ms: r.start_ms,
                                end_ms: r.end_ms,
                                units: kai_units(sc, &cards, &products, &r.devices),
                                quota_units: r.usage[gpuquota_rank::division::Resource::Gpu]
                                    * gpuquota_metering::money::L
                                    / 1_000_000_000,
                                preempted: r.end.is_eviction(),
                            })
                            .collect(),
                    })
                    .collect()
            }
        }
    }

    /// The GPU quota of the queue named `name`, weighted (L units per device): the nominal
    /// quota of a ClusterQueue's GPU resources, a KAI Queue's deserved `gpu` quota.
    fn quota_units(&self, name: &str) -> i128 {
        let cards: CardMap = crate::bill::card_map(self.metering());
        match self {
            Simulated::Kueue(sc, _) => {
                let Some(cq) = sc.model.cluster_queues.get(name) else {
                    return 0;
                };
                let mut q = 0i128;
                for g in &cq.spec.resource_groups {
                    for f in &g.flavors {
                        for r in &f.resources {
                            if !r.name.as_str().starts_with("nvidia.com/") {
                                continue;
                            }
                            let n = r
                                .nominal_quota
                                .as_ref()
                                .and_then(|x| x.value())
                                .unwrap_or(0);
                            if let Some((_, wt)) = cards.weigh(&f.name, r.name.as_str()) {
                                q += wt * i128::from(n);
                            }
                        }
                    }
                }
                q
            }
            Simulated::Kai(sc, _) => sc
                .model
                .queues
                .get(name)
                .and_then(|q| q.spec.resources.as_ref()?.gpu.as_ref()?.quota.as_ref())
                .and_then(|q| q.scaled_ceil(3))
                .map_or(0, |milli| {
                    i128::from(milli) * gpuquota_metering::money::L / 1000
                }),
        }
    }

    /// Borrowed GPU units × ms of the queue named `name`, without a bill: a ClusterQueue's
    /// usage above its nominal quota; `None` for KAI (module docs).
    fn borrowed_units(&self, name: &str, cards: &CardMap) -> Option<i128> {
        let Simulated::Kueue(_, report) = self else {
            return None;
        };
        let q = report.queues.get(name)?;
        let mut u = 0i128;
        for (&fr, &b) in &q.borrowed {
            let (f, res) = &report.outcome.frs[fr as usize];
            if let Some((_, wt)) = cards.weigh(f, res.as_str()) {
                u += wt * b;
            }
        }
        Some(u)
    }
}

/// A workload (KAI: a job) of one run, engine-neutral.
struct Job<'a> {
    namespace: &'a str,
    created_ms: i64,
    first_start_ms: Option<i64>,
    spans: Vec<Span>,
}

/// One run of a workload: its time, its GPUs (weighted, L units per device), its GPUs as
/// its queue's quota counts them (Kueue: the same; KAI: KAI's GPUs, a MIG instance of `g`
/// compute slices being `g`) and whether an eviction (Kueue: `Preempted`; KAI: `Evicted`,
/// or stopped by a budget) ended it.
struct Span {
    start_ms: i64,
    end_ms: i64,
    units: i128,
    quota_units: i128,
    preempted: bool,
}

/// A KAI run's GPUs, weighted as the KAI bill weighs them ([`crate::bill::kai_chargeback`]):
/// per node, its card type by product label; GPU devices (fractions as their share) at L
/// each, or L ÷ replicas on a time-sliced or MPS node; MIG instances as metering weighs the
/// profile on the card type.
fn kai_units(
    sc: &KaiScenario,
    cards: &CardMap,
    products: &[(String, String)],
    devices: &[crate::kai::report::NodeDevices],
) -> i128 {
    let l = gpuquota_metering::money::L;
    let mut units = 0i128;
    for (node, gpu, mig) in devices {
        let labels = sc.model.nodes.get(node).map(|n| &n.metadata.labels);
        let card = labels.map_or_else(String::new, |l| {
            crate::kai::budget::card_of_node(products, l)
        });
        let replicas = labels
            .and_then(|l| {
                l.get(gpuquota_model::workloads::sharing::REPLICAS_LABEL)?
                    .parse::<i128>()
                    .ok()
            })
            .filter(|r| *r > 1)
            .unwrap_or(1);
        units += gpu * (l / replicas) / 1_000_000_000;
        for (res, count) in mig {
            let w = crate::bill::weigh(cards, &card, res).map_or(0, |x| x.1);
            units += w * i128::from(*count);
        }
    }
    units
}

/// Per department, the metrics of one Kueue or ResourceQuota run ([`run_metrics`]).
///
/// # Complexity
/// O(runs × flavor-resources + W log W).
pub fn metrics(
    sc: &Scenario,
    report: &Report,
    depts: &BTreeMap<String, String>,
) -> BTreeMap<String, Metrics> {
    run_metrics(Simulated::Kueue(sc, report), depts)
}

/// Per department (`depts`: namespace → department; else the namespace), the metrics of one
/// run of either engine (module docs).
///
/// # Complexity
/// O(runs × GPU resources per run + W log W).
pub fn run_metrics(
    run: Simulated<'_>,
    depts: &BTreeMap<String, String>,
) -> BTreeMap<String, Metrics> {
    let cards: CardMap = crate::bill::card_map(run.metering());
    let per_ms_hour = gpuquota_metering::budget::UNITS_PER_GPU_HOUR;
    let resume = run.resume();
    let mut gpu: BTreeMap<String, (i128, i128, u64, Vec<i64>)> = BTreeMap::new();
    // GPU units × ms as the queues' quotas count them, per department
    let mut used: BTreeMap<String, i128> = BTreeMap::new();
    for w in run.jobs() {
        let ns = w.namespace;
        let d = depts.get(ns).cloned().unwrap_or_else(|| ns.to_owned());
        let u = used.entry(d.clone()).or_default();
        for r in &w.spans {
            *u += r.quota_units * i128::from(r.end_ms - r.start_ms);
        }
        let e = gpu.entry(d).or_default();
        if let Some(s) = w.first_start_ms {
            e.3.push(s - w.created_ms);
        }
        for r in &w.spans {
            let units = r.units * i128::from(r.end_ms - r.start_ms);
            e.0 += units;
            if r.preempted {
                e.2 += 1;
                if !resume {
                    e.1 += units;
                }
            }
        }
    }
    let bill = run.chargeback();
    let mut out = BTreeMap::new();
    for (d, (units, lost, pre, mut adm)) in gpu {
        adm.sort_unstable();
        let lines: Vec<&gpuquota_metering::report::LineOut> = bill
            .map(|b| b.meter.lines.as_slice())
            .into_iter()
            .flatten()
            .filter(|l| l.department == d)
            .collect();
        let borrowed_hours = if bill.is_some() {
            lines
                .iter()
                .try_fold(GpuHours::ZERO, |sum, l| sum.checked_add(l.borrowed_hours))
        } else {
            run.borrowed_units(&d, &cards)
                .map(|u| micro_str(u * 1_000_000 / per_ms_hour))
        };
        let quota = run.quota_units(&d);
        let used_units = used.get(&d).copied().unwrap_or(0);
        let mean = (!adm.is_empty()).then(|| adm.iter().sum::<i64>().div_euclid(adm.len() as i64));
        let p95 = (!adm.is_empty()).then(|| {
            let k = (adm.len() * 95).div_ceil(100).max(1);
            adm[k - 1]
        });
        let cost = bill.map(|_| {
            // the lines' currency digits (all alike); 2 for a department without lines
            let mut minor = 0i128;
            let mut digits = 2;
            for l in &lines {
                digits = l.total.minor_digits();
                minor = minor.saturating_add(l.total.minor_units());
            }
            Money::new(minor, digits)
        });
        out.insert(
            d,
            Metrics {
                gpu_hours: Some(micro_str(units * 1_000_000 / per_ms_hour)),
                borrowed_hours,
                mean_time_to_admission_ms: mean,
                p95_time_to_admission_ms: p95,
                preemptions: Some(i64::try_from(pre).unwrap_or(i64::MAX)),
                lost_hours: Some(micro_str(lost * 1_000_000 / per_ms_hour)),
                utilization_percent: utilization(used_units, quota, run.end_ms()),
                cost,
            },
        );
    }
    out
}

/// `units` (weighted device × ms) × 100 ÷ (`quota` weighted devices × `end_ms`), rounded
/// half-up to 0.1; `None` without a quota or a run length.
fn utilization(units: i128, quota: i128, end_ms: i64) -> Option<f64> {
    let den = quota.checked_mul(i128::from(end_ms))?;
    if den <= 0 || units < 0 {
        return None;
    }
    let permille = units.checked_mul(2000)?.checked_add(den)? / (2 * den);
    Some(permille as f64 / 10.0)
}

/// One metric of one department in both runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Compared<T> {
    /// Scenario A's value (`null`: the department or the metric is absent in A).
    pub a: Option<T>,
    /// Scenario B's value.
    pub b: Option<T>,
    /// B − A (`null` when either is); decimals keep A's digits.
    pub delta: Option<T>,
}

/// A value [`Compared`] can subtract and the table can show.
pub trait Delta: Sized {
    /// `b − a`, `None` when it cannot be computed.
    fn delta(a: &Self, b: &Self) -> Option<Self>;
    /// The table's text.
    fn show(&self) -> String;
}

impl Delta for i64 {
    fn delta(a: &i64, b: &i64) -> Option<i64> {
        b.checked_sub(*a)
    }
    fn show(&self) -> String {
        self.to_string()
    }
}

impl Delta for f64 {
    /// Rounded to 0.1, as `meanUsagePercent` is.
    fn delta(a: &f64, b: &f64) -> Option<f64> {
        let d = ((b - a) * 10.0).round() / 10.0;
        // an unchanged value is 0, not -0.0
        Some(if d == 0.0 { 0.0 } else { d }).filter(|x| x.is_finite())
    }
    fn show(&self) -> String {
        serde_json::Number::from_f64(*self).map_or_else(|| "-".to_owned(), |n| n.to_string())
    }
}

impl Delta for GpuHours {
    /// Exact, in millionths.
    fn delta(a: &GpuHours, b: &GpuHours) -> Option<GpuHours> {
        b.checked_sub(*a)
    }
    fn show(&self) -> String {
        self.to_string()
    }
}

impl Delta for Money {
    /// Exact, in the more precise of the two's digits (so `10.5` against `10.50` is `0.00`).
    fn delta(a: &Money, b: &Money) -> Option<Money> {
        b.checked_sub(*a)
    }
    fn show(&self) -> String {
        self.to_string()
    }
}

impl<T: Delta + Clone> Compared<T> {
    fn new(a: Option<&T>, b: Option<&T>) -> Compared<T> {
        let delta = match (a, b) {
            (Some(x), Some(y)) => T::delta(x, y),
            _ => None,
        };
        Compared {
            a: a.cloned(),
            b: b.cloned(),
            delta,
        }
    }

    fn cells(&self) -> [String; 3] {
        let show = |v: &Option<T>| v.as_ref().map_or_else(|| "-".to_owned(), T::show);
        [show(&self.a), show(&self.b), show(&self.delta)]
    }
}

/// Every metric of one department, A against B (module docs; fields in [`METRICS`] order).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DepartmentDiff {
    /// ∫ GPU usage, GPU-hours weighted as metering weighs them, six decimals.
    pub gpu_hours: Compared<GpuHours>,
    /// Borrowed GPU-hours (the chargeback's, else above the queue's nominal), six decimals.
    pub borrowed_hours: Compared<GpuHours>,
    /// First admission − creation, floor mean over admitted workloads, ms.
    pub mean_time_to_admission_ms: Compared<i64>,
    /// First admission − creation, nearest-rank p95, ms.
    pub p95_time_to_admission_ms: Compared<i64>,
    /// `Preempted` runs.
    pub preemptions: Compared<i64>,
    /// GPU-hours of `Preempted` runs (0 under `resume`), six decimals.
    pub lost_hours: Compared<GpuHours>,
    /// GPU-hours ÷ the nominal quota GPU-hours of the ClusterQueue named like the
    /// department, percent (`null` for a borrower or a department of no ClusterQueue).
    pub utilization_percent: Compared<f64>,
    /// Σ of its chargeback lines' `total`, in the currency's digits.
    pub cost: Compared<Money>,
}

impl DepartmentDiff {
    fn new(x: &Metrics, y: &Metrics) -> DepartmentDiff {
        fn c<T: Delta + Clone>(a: &Option<T>, b: &Option<T>) -> Compared<T> {
            Compared::new(a.as_ref(), b.as_ref())
        }
        DepartmentDiff {
            gpu_hours: c(&x.gpu_hours, &y.gpu_hours),
            borrowed_hours: c(&x.borrowed_hours, &y.borrowed_hours),
            mean_time_to_admission_ms: c(
                &x.mean_time_to_admission_ms,
                &y.mean_time_to_admission_ms,
            ),
            p95_time_to_admission_ms: c(&x.p95_time_to_admission_ms, &y.p95_time_to_admission_ms),
            preemptions: c(&x.preemptions, &y.preemptions),
            lost_hours: c(&x.lost_hours, &y.lost_hours),
            utilization_percent: c(&x.utilization_percent, &y.utilization_percent),
            cost: c(&x.cost, &y.cost),
        }
    }

    /// The table's rows: metric name, A, B, B − A (`-` for `null`), in [`METRICS`] order.
    pub fn rows(&self) -> [(&'static str, [String; 3]); 8] {
        [
            (METRICS[0], self.gpu_hours.cells()),
            (METRICS[1], self.borrowed_hours.cells()),
            (METRICS[2], self.mean_time_to_admission_ms.cells()),
            (METRICS[3], self.p95_time_to_admission_ms.cells()),
            (METRICS[4], self.preemptions.cells()),
            (METRICS[5], self.lost_hours.cells()),
            (METRICS[6], self.utilization_percent.cells()),
            (METRICS[7], self.cost.cells()),
        ]
    }
}

/// The comparison document: what `gpuquota sim diff --output json` prints (`gpuquota
/// schema sim-diff` prints its JSON Schema).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DiffReport {
    /// Scenario A's name.
    pub a: String,
    /// Scenario B's name.
    pub b: String,
    /// Whether both scenarios submit the same workloads.
    pub workloads: WorkloadsCompared,
    /// Per department (of either run), in name order.
    pub departments: BTreeMap<String, DepartmentDiff>,
}

/// How the two scenarios' workloads compare (module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WorkloadsCompared {
    /// True when both submit the same workload instances, each with the same creation time,
    /// runtime and pod sets: the differences are the policy's alone.
    pub same: bool,
    /// Instances only scenario A submits.
    pub only_in_a: usize,
    /// Instances only scenario B submits.
    pub only_in_b: usize,
    /// Instances both submit, with a different creation time, runtime or pod sets.
    pub changed: usize,
    /// The first instance (in key order) that differs, `null` when none does.
    pub first: Option<String>,
}

impl WorkloadsCompared {
    /// The sentence the table starts with when the workloads differ, `None` when they are the
    /// same.
    pub fn warning(&self) -> Option<String> {
        (!self.same).then(|| {
            format!(
                "the scenarios submit different workloads ({} only in A, {} only in B, {} changed; first: {}): the differences below are not the policy's alone",
                self.only_in_a,
                self.only_in_b,
                self.changed,
                self.first.as_deref().unwrap_or("-")
            )
        })
    }
}

/// Compares the workload instances of two Kueue or ResourceQuota scenarios (module docs).
///
/// # Complexity
/// O(W log W) over the instances of both.
pub fn compare_workloads(sa: &Scenario, sb: &Scenario) -> WorkloadsCompared {
    compare_runs_workloads(Scenarios::Kueue(sa), Scenarios::Kueue(sb))
}

/// The scenario side of a [`Simulated`], for the workload comparison.
#[derive(Clone, Copy)]
enum Scenarios<'a> {
    Kueue(&'a Scenario),
    Kai(&'a KaiScenario),
}

impl Scenarios<'_> {
    fn of(run: Simulated<'_>) -> Scenarios<'_> {
        match run {
            Simulated::Kueue(sc, _) => Scenarios::Kueue(sc),
            Simulated::Kai(sc, _) => Scenarios::Kai(sc),
        }
    }

    fn keys(&self) -> Vec<&String> {
        match self {
            Scenarios::Kueue(sc) => sc.instances.keys().collect(),
            Scenarios::Kai(sc) => sc.jobs.keys().collect(),
        }
    }

    fn contains(&self, key: &str) -> bool {
        match self {
            Scenarios::Kueue(sc) => sc.instances.contains_key(key),
            Scenarios::Kai(sc) => sc.jobs.contains_key(key),
        }
    }

    /// Creation, runtime and, with `pods`, the pod sets (Kueue) or the PodGroup's spec
    /// (KAI) as JSON.
    fn shape(&self, key: &str, pods: bool) -> (Option<(i64, Option<i64>)>, Option<String>) {
        match self {
            Scenarios::Kueue(sc) => (
                sc.instances.get(key).map(|i| (i.created_ms, i.runtime_ms)),
                sc.model
                    .workloads
                    .get(key)
                    .filter(|_| pods)
                    .and_then(|w| serde_json::to_string(&w.spec.pod_sets).ok()),
            ),
            Scenarios::Kai(sc) => (
                sc.jobs.get(key).map(|i| (i.created_ms, i.runtime_ms)),
                sc.model
                    .pod_groups
                    .get(key)
                    .filter(|_| pods)
                    .and_then(|g| serde_json::to_string(&g.spec).ok()),
            ),
        }
    }
}

/// Compares the workload instances of two runs of either engine (module docs): between
/// engines, creation time and runtime only.
///
/// # Complexity
/// O(W log W) over the instances of both.
pub fn compare_run_workloads(a: Simulated<'_>, b: Simulated<'_>) -> WorkloadsCompared {
    compare_runs_workloads(Scenarios::of(a), Scenarios::of(b))
}

fn compare_runs_workloads(sa: Scenarios<'_>, sb: Scenarios<'_>) -> WorkloadsCompared {
    let pods = matches!(
        (sa, sb),
        (Scenarios::Kueue(_), Scenarios::Kueue(_)) | (Scenarios::Kai(_), Scenarios::Kai(_))
    );
    let (mut only_a, mut only_b, mut changed) = (0, 0, 0);
    let mut first: Option<&String> = None;
    for k in sa.keys() {
        if !sb.contains(k) {
            only_a += 1;
            if first.is_none_or(|f| k < f) {
                first = Some(k);
            }
        } else if sa.shape(k, pods) != sb.shape(k, pods) {
            changed += 1;
            if first.is_none_or(|f| k < f) {
                first = Some(k);
            }
        }
    }
    for k in sb.keys() {
        if !sa.contains(k) {
            only_b += 1;
            if first.is_none_or(|f| k < f) {
                first = Some(k);
            }
        }
    }
    WorkloadsCompared {
        same: only_a == 0 && only_b == 0 && changed == 0,
        only_in_a: only_a,
        only_in_b: only_b,
        changed,
        first: first.cloned(),
    }
}

impl DiffReport {
    /// The document as a [`serde_json::Value`] (for reading fields).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

/// The comparison document of two Kueue or ResourceQuota runs ([`diff_runs`]).
///
/// # Complexity
/// Two [`metrics`] passes plus O(departments).
pub fn diff(sa: &Scenario, a: &Report, sb: &Scenario, b: &Report) -> DiffReport {
    diff_runs(Simulated::Kueue(sa, a), Simulated::Kueue(sb, b))
}

/// The comparison document of two runs of either engine (module docs).
///
/// # Complexity
/// Two [`run_metrics`] passes plus O(departments).
pub fn diff_runs(a: Simulated<'_>, b: Simulated<'_>) -> DiffReport {
    let depts = departments_of(a.metering());
    let ma = run_metrics(a, &depts);
    let mb = run_metrics(b, &depts);
    let empty = Metrics::default();
    let mut departments = BTreeMap::new();
    for d in ma.keys().chain(mb.keys()) {
        if departments.contains_key(d) {
            continue;
        }
        let (x, y) = (ma.get(d).unwrap_or(&empty), mb.get(d).unwrap_or(&empty));
        departments.insert(d.clone(), DepartmentDiff::new(x, y));
    }
    DiffReport {
        a: a.name().to_owned(),
        b: b.name().to_owned(),
        workloads: compare_run_workloads(a, b),
        departments,
    }
}

/// The comparison as a table: one block per department, one row per metric.
pub fn table(doc: &DiffReport) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    if let Some(w) = doc.workloads.warning() {
        let _ = writeln!(s, "Note: {w}.");
    }
    let _ = writeln!(s, "What-if: A = {}, B = {}", doc.a, doc.b);
    for (d, m) in &doc.departments {
        let _ = writeln!(s, "\n{d}");
        let _ = writeln!(
            s,
            "  {:<24} {:>16} {:>16} {:>16}",
            "metric", "A", "B", "B - A"
        );
        for (k, [a, b, dl]) in m.rows() {
            let _ = writeln!(s, "  {k:<24} {a:>16} {b:>16} {dl:>16}");
        }
    }
    s
}

/// Both runs' GPU usage per department over time: two panels, A above B, on the same time
/// axis; each department's GPUs (all card types, MIG slices and replicas weighed as metering
/// weighs them) stacked as step functions in the department colours every picture of the
/// scenario uses, the summed `capacity` of the card types (solid), preemptions marked.
/// Departments are scenario A's, as in the comparison.
///
/// # Errors
/// The plotting backend's error as text.
///
/// # Complexity
/// O(runs × flavor-resources + change points × departments).
pub fn svg(sa: &Scenario, a: &Report, sb: &Scenario, b: &Report) -> Result<String, String> {
    svg_runs(Simulated::Kueue(sa, a), Simulated::Kueue(sb, b))
}

/// [`svg`] of two runs of either engine.
///
/// # Errors
/// The plotting backend's error as text.
///
/// # Complexity
/// O(runs × GPU resources per run + change points × departments).
pub fn svg_runs(a: Simulated<'_>, b: Simulated<'_>) -> Result<String, String> {
    use crate::chart::{self, Departments, Line, LineKind, Mark, MarkKind, Panel};
    let mut departments = Departments::of(a.metering());
    let end = a.end_ms().max(b.end_ms()).max(1);
    let mut panels = Vec::new();
    for r in [a, b] {
        let mut deltas: BTreeMap<String, Vec<(i64, i128)>> = BTreeMap::new();
        let mut marks = Vec::new();
        for w in r.jobs() {
            let d = departments.of_namespace(w.namespace);
            for run in &w.spans {
                let g = run.units;
                if g == 0 || run.end_ms <= run.start_ms {
                    continue;
                }
                let e = deltas.entry(d.clone()).or_default();
                e.push((run.start_ms, g));
                e.push((run.end_ms, -g));
                if run.preempted {
                    marks.push(Mark {
                        kind: MarkKind::Triangle,
                        label: "preemption".to_owned(),
                        t_ms: run.end_ms,
                    });
                }
            }
        }
        let unit = gpuquota_metering::money::L as f64;
        let areas: Vec<(String, chart::Steps)> = deltas
            .into_iter()
            .map(|(d, ds)| (d, chart::integrate(ds, unit)))
            .collect();
        for (d, _) in &areas {
            departments.note(d);
        }
        let capacity: f64 = r
            .metering()
            .and_then(|m| m["cardTypes"].as_array())
            .into_iter()
            .flatten()
            .filter_map(|c| c["capacity"].as_f64())
            .sum();
        let lines = if capacity > 0.0 {
            vec![Line {
                label: "capacity (cardTypes, sum)".to_owned(),
                kind: LineKind::Capacity,
                steps: vec![(0, capacity)],
            }]
        } else {
            Vec::new()
        };
        panels.push(Panel {
            title: format!("{}: GPUs in use per department", r.name()),
            y_desc: "GPUs (MIG and replicas weighed)".to_owned(),
            areas,
            lines,
            marks,
        });
    }
    chart::svg(&chart::Picture {
        title: format!("What-if: A = {}, B = {}", a.name(), b.name()),
        clock: chart::Clock::Dates {
            start_unix_ms: a.start().unix_seconds().saturating_mul(1000),
        },
        end_ms: end,
        panels,
        departments: &departments,
        notes: Vec::new(),
        stack: None,
        compact: false,
    })
}
