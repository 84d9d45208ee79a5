//! What-if: two simulated runs of the same workloads (fair sharing on and off,
//! `lendingLimit: 0` against unset, Kueue against ResourceQuota only) compared per
//! department.
//!
//! `gpuquota sim diff A.yaml B.yaml [--output json|table] [--plot FILE.svg]`.
//!
//! A department is a `spec.metering` department of scenario A (by its namespaces), else a
//! workload's namespace. Per department, for A, B and B − A:
//!
//! - `gpuHours`: ∫ GPU usage over its runs, weighted as metering weighs it
//!   ([`gpuquota_metering::budget::CardMap`]), six decimals;
//! - `borrowedHours`: its `chargeback` lines' `borrowedHours` when the scenario meters,
//!   else ∫ max(0, usage − nominal) of GPU resources of the queue named like the department
//!   (GPU-hours), else `null`;
//! - `meanTimeToAdmissionMs`, `p95TimeToAdmissionMs`: first admission − creation over its
//!   admitted workloads (floor mean, nearest-rank p95), `null` without any;
//! - `preemptions`: its `Preempted` runs; `lostHours`: their GPU-hours (0 under `resume`);
//! - `utilizationPercent`: its `gpuHours` × 100 ÷ the GPU-hours of the nominal quota of the
//!   ClusterQueue named like the department (its GPU resources weighted as metering weighs
//!   them, × the run's length), rounded half-up to 0.1; `null` without such a queue or with
//!   a nominal quota of 0 (a borrower: its use is in `gpuHours` and `borrowedHours`). The
//!   same under both engines (the ResourceQuota run's queues are namespaces, but the
//!   platform's ClusterQueues are still its quota picture), so a department whose use did
//!   not change shows a delta of 0;
//! - `cost`: the sum of its `chargeback` lines' `total`, `null` without metering.
//!
//! JSON: `{"a": name, "b": name, "departments": {dept: {metric: {"a", "b", "delta"}}}}`;
//! numbers stay numbers, hours and money strings with their decimals (delta computed
//! exactly on the decimals, in the more precise of the two). What did not change shows a
//! delta of 0 (`0`, `0.0`, `0.000000`), never `-0.0`.

use std::collections::BTreeMap;

use gpuquota_metering::budget::CardMap;
use serde::Serialize;

use crate::{Report, RunEnd, Scenario};

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

fn dept_of(sc: &Scenario) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    if let Some(ds) = sc
        .metering
        .as_ref()
        .and_then(|m| m["departments"].as_array())
    {
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

fn micro_str(micro: i128) -> String {
    gpuquota_metering::money::format_fixed(micro, 6)
}

/// One run's metrics of one department (module docs); `None` is the JSON's `null`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Metrics {
    /// GPU-hours, six decimals.
    pub gpu_hours: Option<String>,
    /// Borrowed GPU-hours, six decimals.
    pub borrowed_hours: Option<String>,
    /// Mean time to admission, ms.
    pub mean_time_to_admission_ms: Option<i64>,
    /// Nearest-rank p95 time to admission, ms.
    pub p95_time_to_admission_ms: Option<i64>,
    /// `Preempted` runs.
    pub preemptions: Option<i64>,
    /// GPU-hours of `Preempted` runs, six decimals.
    pub lost_hours: Option<String>,
    /// GPU-hours ÷ nominal quota GPU-hours of the queue named like it, percent (module docs).
    pub utilization_percent: Option<f64>,
    /// Σ of the chargeback lines' `total`, in the currency's digits.
    pub cost: Option<String>,
}

/// Per department, the metrics of one run.
///
/// # Complexity
/// O(runs × flavor-resources + W log W).
pub fn metrics(
    sc: &Scenario,
    report: &Report,
    depts: &BTreeMap<String, String>,
) -> BTreeMap<String, Metrics> {
    let cards: CardMap = crate::bill::card_map(sc.metering.as_ref());
    let o = &report.outcome;
    let per_ms_hour = gpuquota_metering::budget::UNITS_PER_GPU_HOUR;
    let mut gpu: BTreeMap<String, (i128, i128, u64, Vec<i64>)> = BTreeMap::new();
    for w in &o.workloads {
        let ns = w.key.split('/').next().unwrap_or("");
        let d = depts.get(ns).cloned().unwrap_or_else(|| ns.to_owned());
        let e = gpu.entry(d).or_default();
        if let Some(r) = w.runs.first() {
            e.3.push(r.start_ms - w.created_ms);
        }
        for r in &w.runs {
            let mut units = 0i128;
            for &(fr, a) in &r.usage {
                let (f, res) = &o.frs[fr as usize];
                if let Some((_, wt)) = cards.weigh(f, res.as_str()) {
                    units += wt * i128::from(a) * i128::from(r.end_ms - r.start_ms);
                }
            }
            e.0 += units;
            if matches!(r.end, RunEnd::Preempted { .. }) {
                e.2 += 1;
                if !sc.resume {
                    e.1 += units;
                }
            }
        }
    }
    let bill = report.chargeback.as_ref();
    // nominal GPUs (weighted, L units per device) of each ClusterQueue
    let quota_units = |d: &str| -> i128 {
        let Some(cq) = sc.model.cluster_queues.get(d) else {
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
    };
    let mut out = BTreeMap::new();
    for (d, (units, lost, pre, mut adm)) in gpu {
        adm.sort_unstable();
        let lines: Vec<&gpuquota_metering::report::LineOut> = bill
            .map(|b| b.meter.lines.as_slice())
            .into_iter()
            .flatten()
            .filter(|l| l.department == d)
            .collect();
        let queue = report.queues.get(&d);
        let borrowed_hours = if bill.is_some() {
            let mut micro = 0i128;
            let mut ok = true;
            for l in &lines {
                match gpuquota_metering::money::parse_decimal(&l.borrowed_hours, 6, "borrowedHours")
                {
                    Ok(v) => micro += v,
                    Err(_) => ok = false,
                }
            }
            ok.then(|| micro_str(micro))
        } else if let Some(q) = queue {
            let mut u = 0i128;
            for (&fr, &b) in &q.borrowed {
                let (f, res) = &o.frs[fr as usize];
                if let Some((_, wt)) = cards.weigh(f, res.as_str()) {
                    u += wt * b;
                }
            }
            Some(micro_str(u * 1_000_000 / per_ms_hour))
        } else {
            None
        };
        let quota = quota_units(&d);
        let mean = (!adm.is_empty()).then(|| adm.iter().sum::<i64>().div_euclid(adm.len() as i64));
        let p95 = (!adm.is_empty()).then(|| {
            let k = (adm.len() * 95).div_ceil(100).max(1);
            adm[k - 1]
        });
        let cost = bill.map(|_| {
            let mut minor = 0i128;
            let mut digits = 2usize;
            for l in &lines {
                let t = &l.total;
                digits = t.split_once('.').map_or(0, |x| x.1.len());
                minor += t.replace('.', "").parse::<i128>().unwrap_or(0);
            }
            gpuquota_metering::money::format_fixed(minor, digits as u32)
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
                utilization_percent: utilization(units, quota, o.end_ms),
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

impl Delta for String {
    /// Exact on the decimals, in the more precise of the two's digits (so `10.5` against
    /// `10.50` is `0.00`, not a difference of the digit strings).
    fn delta(a: &String, b: &String) -> Option<String> {
        let digits_of = |s: &str| s.split_once('.').map_or(0, |p| p.1.len());
        let digits = digits_of(a).max(digits_of(b)).min(18);
        let p = |s: &str| -> Option<i128> {
            let pad = digits.checked_sub(digits_of(s))?;
            let v = s.replace('.', "").parse::<i128>().ok()?;
            v.checked_mul(10i128.checked_pow(u32::try_from(pad).ok()?)?)
        };
        Some(gpuquota_metering::money::format_fixed(
            p(b)?.checked_sub(p(a)?)?,
            digits as u32,
        ))
    }
    fn show(&self) -> String {
        self.clone()
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
    pub gpu_hours: Compared<String>,
    /// Borrowed GPU-hours (the chargeback's, else above the queue's nominal), six decimals.
    pub borrowed_hours: Compared<String>,
    /// First admission − creation, floor mean over admitted workloads, ms.
    pub mean_time_to_admission_ms: Compared<i64>,
    /// First admission − creation, nearest-rank p95, ms.
    pub p95_time_to_admission_ms: Compared<i64>,
    /// `Preempted` runs.
    pub preemptions: Compared<i64>,
    /// GPU-hours of `Preempted` runs (0 under `resume`), six decimals.
    pub lost_hours: Compared<String>,
    /// GPU-hours ÷ the nominal quota GPU-hours of the ClusterQueue named like the
    /// department, percent (`null` for a borrower or a department of no ClusterQueue).
    pub utilization_percent: Compared<f64>,
    /// Σ of its chargeback lines' `total`, in the currency's digits.
    pub cost: Compared<String>,
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
    /// Per department (of either run), in name order.
    pub departments: BTreeMap<String, DepartmentDiff>,
}

impl DiffReport {
    /// The document as a [`serde_json::Value`] (for reading fields).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

/// The comparison document (module docs).
///
/// # Complexity
/// Two [`metrics`] passes plus O(departments).
pub fn diff(sa: &Scenario, a: &Report, sb: &Scenario, b: &Report) -> DiffReport {
    let depts = dept_of(sa);
    let ma = metrics(sa, a, &depts);
    let mb = metrics(sb, b, &depts);
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
        a: a.name.clone(),
        b: b.name.clone(),
        departments,
    }
}

/// The comparison as a table: one block per department, one row per metric.
pub fn table(doc: &DiffReport) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
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

/// Both runs' GPU usage per department over time, side by side (two panels, the same axes).
///
/// # Errors
/// The plotting backend's error as text.
pub fn svg(sa: &Scenario, a: &Report, sb: &Scenario, b: &Report) -> Result<String, String> {
    use plotters::prelude::*;
    const B: usize = 200;
    let depts = dept_of(sa);
    let end = a.outcome.end_ms.max(b.outcome.end_ms).max(1);
    let width = end as f64 / B as f64;
    let series = |sc: &Scenario, r: &Report| -> BTreeMap<String, Vec<f64>> {
        let cards = crate::bill::card_map(sc.metering.as_ref());
        let mut m: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for w in &r.outcome.workloads {
            let ns = w.key.split('/').next().unwrap_or("");
            let d = depts.get(ns).cloned().unwrap_or_else(|| ns.to_owned());
            for run in &w.runs {
                let g: f64 = run
                    .usage
                    .iter()
                    .filter_map(|&(fr, x)| {
                        let (f, res) = &r.outcome.frs[fr as usize];
                        cards.weigh(f, res.as_str()).map(|(_, wt)| {
                            wt as f64 / gpuquota_metering::money::L as f64 * x as f64
                        })
                    })
                    .sum();
                if g == 0.0 {
                    continue;
                }
                let s = m.entry(d.clone()).or_insert_with(|| vec![0.0; B]);
                let (t0, t1) = (run.start_ms.max(0) as f64, run.end_ms.min(end) as f64);
                for (k, v) in s.iter_mut().enumerate() {
                    let (lo, hi) = (k as f64 * width, (k + 1) as f64 * width);
                    let o = t1.min(hi) - t0.max(lo);
                    if o > 0.0 {
                        *v += g * o / width;
                    }
                }
            }
        }
        m
    };
    let (pa, pb) = (series(sa, a), series(sb, b));
    let mut names: Vec<&String> = pa.keys().chain(pb.keys()).collect();
    names.sort();
    names.dedup();
    let peak = [&pa, &pb]
        .iter()
        .flat_map(|m| (0..B).map(move |k| m.values().map(|s| s[k]).sum::<f64>()))
        .fold(1.0, f64::max)
        * 1.1;
    let x_end = end as f64 / 3_600_000.0;
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, (1200, 520)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let panels = root.split_evenly((1, 2));
        for (panel, (title, m)) in panels.iter().zip([(&a.name, &pa), (&b.name, &pb)]) {
            let mut chart = ChartBuilder::on(panel)
                .caption(
                    format!("{title}: GPUs in use per department (stacked)"),
                    ("sans-serif", 18),
                )
                .margin(10)
                .x_label_area_size(34)
                .y_label_area_size(48)
                .build_cartesian_2d(0.0..x_end, 0.0..peak)
                .map_err(|e| e.to_string())?;
            chart
                .configure_mesh()
                .x_desc("hours since start")
                .y_desc("GPUs (MIG- and replica-weighted)")
                .draw()
                .map_err(|e| e.to_string())?;
            let xs: Vec<f64> = (0..B)
                .map(|k| (k as f64 + 0.5) * width / 3_600_000.0)
                .collect();
            let mut acc = vec![0.0; B];
            let mut stacks = Vec::new();
            for (i, n) in names.iter().enumerate() {
                if let Some(s) = m.get(*n) {
                    for (x, v) in acc.iter_mut().zip(s) {
                        *x += v;
                    }
                }
                stacks.push((i, (*n).clone(), acc.clone()));
            }
            for (i, n, s) in stacks.into_iter().rev() {
                let color = Palette99::pick(i).to_rgba();
                chart
                    .draw_series(AreaSeries::new(
                        xs.iter().copied().zip(s),
                        0.0,
                        color.mix(0.7),
                    ))
                    .map_err(|e| e.to_string())?
                    .label(n)
                    .legend(move |(x, y)| {
                        Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled())
                    });
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()
                .map_err(|e| e.to_string())?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(text)
}
