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
//! - `utilizationPercent`: the `meanUsagePercent` of the queue named like the department,
//!   `null` without one;
//! - `cost`: the sum of its `chargeback` lines' `total`, `null` without metering.
//!
//! JSON: `{"a": name, "b": name, "departments": {dept: {metric: {"a", "b", "delta"}}}}`;
//! numbers stay numbers, hours and money strings with their decimals (delta computed
//! exactly on the decimals).

use std::collections::BTreeMap;

use gpuquota_metering::budget::CardMap;
use serde_json::{Map, Value, json};

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

/// Per department, metric → value, of one run.
///
/// # Complexity
/// O(runs × flavor-resources + W log W).
pub fn metrics(
    sc: &Scenario,
    report: &Report,
    depts: &BTreeMap<String, String>,
) -> BTreeMap<String, BTreeMap<&'static str, Value>> {
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
    let mut out = BTreeMap::new();
    for (d, (units, lost, pre, mut adm)) in gpu {
        adm.sort_unstable();
        let mut m: BTreeMap<&'static str, Value> = BTreeMap::new();
        m.insert(
            "gpuHours",
            micro_str(units * 1_000_000 / per_ms_hour).into(),
        );
        let lines: Vec<&gpuquota_metering::report::LineOut> = bill
            .map(|b| b.meter.lines.as_slice())
            .into_iter()
            .flatten()
            .filter(|l| l.department == d)
            .collect();
        let sum = |k: &str| -> Option<String> {
            let mut micro = 0i128;
            for l in &lines {
                micro += gpuquota_metering::money::parse_decimal(&l.borrowed_hours, 6, k).ok()?;
            }
            Some(micro_str(micro))
        };
        let queue = report.queues.get(&d);
        let borrowed = if bill.is_some() {
            sum("borrowedHours").map(Value::from).unwrap_or(Value::Null)
        } else if let Some(q) = queue {
            let mut u = 0i128;
            for (&fr, &b) in &q.borrowed {
                let (f, res) = &o.frs[fr as usize];
                if let Some((_, wt)) = cards.weigh(f, res.as_str()) {
                    u += wt * b;
                }
            }
            micro_str(u * 1_000_000 / per_ms_hour).into()
        } else {
            Value::Null
        };
        m.insert("borrowedHours", borrowed);
        let mean = (!adm.is_empty()).then(|| adm.iter().sum::<i64>().div_euclid(adm.len() as i64));
        let p95 = (!adm.is_empty()).then(|| {
            let k = (adm.len() * 95).div_ceil(100).max(1);
            adm[k - 1]
        });
        m.insert("meanTimeToAdmissionMs", json!(mean));
        m.insert("p95TimeToAdmissionMs", json!(p95));
        m.insert("preemptions", pre.into());
        m.insert(
            "lostHours",
            micro_str(lost * 1_000_000 / per_ms_hour).into(),
        );
        m.insert(
            "utilizationPercent",
            queue.map_or(Value::Null, |q| json!(q.mean_usage_percent(o.end_ms))),
        );
        let cost = if bill.is_some() {
            let mut minor = 0i128;
            let mut digits = 2usize;
            for l in &lines {
                let t = &l.total;
                digits = t.split_once('.').map_or(0, |x| x.1.len());
                minor += t.replace('.', "").parse::<i128>().unwrap_or(0);
            }
            Value::from(gpuquota_metering::money::format_fixed(minor, digits as u32))
        } else {
            Value::Null
        };
        m.insert("cost", cost);
        out.insert(d, m);
    }
    out
}

fn delta(a: &Value, b: &Value) -> Value {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => json!(y - x),
            _ => json!(
                ((y.as_f64().unwrap_or(0.0) - x.as_f64().unwrap_or(0.0)) * 10.0).round() / 10.0
            ),
        },
        (Value::String(x), Value::String(y)) => {
            let digits = x.split_once('.').map_or(0, |p| p.1.len());
            let p = |s: &str| s.replace('.', "").parse::<i128>().ok();
            match (p(x), p(y)) {
                (Some(x), Some(y)) => {
                    gpuquota_metering::money::format_fixed(y - x, digits as u32).into()
                }
                _ => Value::Null,
            }
        }
        _ => Value::Null,
    }
}

/// The comparison document (module docs).
pub fn diff(sa: &Scenario, a: &Report, sb: &Scenario, b: &Report) -> Value {
    let depts = dept_of(sa);
    let ma = metrics(sa, a, &depts);
    let mb = metrics(sb, b, &depts);
    let mut names: Vec<&String> = ma.keys().chain(mb.keys()).collect();
    names.sort();
    names.dedup();
    let empty = BTreeMap::new();
    let mut ds = Map::new();
    for d in names {
        let (x, y) = (ma.get(d).unwrap_or(&empty), mb.get(d).unwrap_or(&empty));
        let mut m = Map::new();
        for k in METRICS {
            let va = x.get(k).cloned().unwrap_or(Value::Null);
            let vb = y.get(k).cloned().unwrap_or(Value::Null);
            let dl = delta(&va, &vb);
            m.insert(k.into(), json!({"a": va, "b": vb, "delta": dl}));
        }
        ds.insert(d.clone(), Value::Object(m));
    }
    json!({"a": a.name, "b": b.name, "departments": ds})
}

/// The comparison as a table: one block per department, one row per metric.
pub fn table(doc: &Value) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "What-if: A = {}, B = {}",
        doc["a"].as_str().unwrap_or(""),
        doc["b"].as_str().unwrap_or("")
    );
    let show = |v: &Value| match v {
        Value::Null => "-".to_owned(),
        Value::String(x) => x.clone(),
        v => v.to_string(),
    };
    for (d, m) in doc["departments"].as_object().into_iter().flatten() {
        let _ = writeln!(s, "\n{d}");
        let _ = writeln!(
            s,
            "  {:<24} {:>16} {:>16} {:>16}",
            "metric", "A", "B", "B - A"
        );
        for k in METRICS {
            let r = &m[k];
            let _ = writeln!(
                s,
                "  {:<24} {:>16} {:>16} {:>16}",
                k,
                show(&r["a"]),
                show(&r["b"]),
                show(&r["delta"])
            );
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
