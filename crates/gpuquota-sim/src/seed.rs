//! The seed platform's month, simulated: the scenario shipped as data files
//! (`data/seed/`: `platform.yaml`, `month.yaml`, `kueue.yaml`, `resourcequota.yaml`),
//! readable with `gpuquota sim`, and the one-screen account the default run prints.
//!
//! ```
//! let month = gpuquota_sim::seed::run().expect("the seed scenario simulates");
//! assert_eq!(month.runs.len(), 2); // ResourceQuota only, Kueue (KAI: see `ENGINES`)
//! assert!(gpuquota_sim::seed::summary(&month).contains("H200"));
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;

use gpuquota_model::diag::Diagnostics;
use serde_json::Value;

use crate::{Report, RunEnd, Scenario, scenario};

/// `data/seed/platform.yaml`: flavors, cohort, ClusterQueues, namespaces, LocalQueues,
/// ResourceQuota caps, priority classes and the batch budget.
pub const PLATFORM: &str = include_str!("../data/seed/platform.yaml");
/// `data/seed/month.yaml`: the five workloads of the seed, repeated daily.
pub const MONTH: &str = include_str!("../data/seed/month.yaml");
/// `data/seed/kueue.yaml`: the month under Kueue.
pub const KUEUE: &str = include_str!("../data/seed/kueue.yaml");
/// `data/seed/resourcequota.yaml`: the month under ResourceQuota only.
pub const RESOURCEQUOTA: &str = include_str!("../data/seed/resourcequota.yaml");

/// The controls the month is simulated under, in order: (label, scenario file name, text).
// KAI / Run:ai: when the simulator's KAI mode lands, add its scenario here
// (`("KAI / Run:ai", "kai.yaml", KAI)` with `data/seed/kai.yaml`, `engine: kai`); the
// summary and the golden test pick it up as a third column.
pub const ENGINES: &[(&str, &str, &str)] = &[
    ("ResourceQuota only", "resourcequota.yaml", RESOURCEQUOTA),
    ("Kueue", "kueue.yaml", KUEUE),
];

/// The simulated month: one (label, scenario, report) per control of [`ENGINES`].
#[derive(Debug, Clone)]
pub struct SeedMonth {
    /// The runs.
    pub runs: Vec<(&'static str, Scenario, Report)>,
}

/// Reads one of the shipped scenarios.
///
/// # Errors
/// The scenario's problems (none for the shipped files; a test checks it).
pub fn scenario_of(name: &str, text: &str) -> Result<Scenario, Diagnostics> {
    let stem = name.trim_end_matches(".yaml");
    scenario::from_str(name, text, stem, &|f: &str| match f {
        "platform.yaml" => Ok(("platform.yaml".into(), PLATFORM.into())),
        "month.yaml" => Ok(("month.yaml".into(), MONTH.into())),
        other => Err(gpuquota_model::diag::Diagnostic::error(
            gpuquota_model::diag::codes::READ_FAILED,
            format!("{other}: not a shipped seed file"),
        )),
    })
}

/// Simulates the month under every control.
///
/// # Errors
/// Any scenario's problems.
pub fn run() -> Result<SeedMonth, Diagnostics> {
    let mut runs = Vec::new();
    for &(label, name, text) in ENGINES {
        let sc = scenario_of(name, text)?;
        let r = crate::simulate(&sc)?;
        runs.push((label, sc, r));
    }
    Ok(SeedMonth { runs })
}

fn section(r: &Report, k: &str) -> Option<Value> {
    match k {
        "budgets" => r
            .budgets
            .as_ref()
            .and_then(|b| serde_json::to_value(b).ok()),
        "chargeback" => r
            .chargeback
            .as_ref()
            .and_then(|c| serde_json::to_value(c).ok()),
        _ => None,
    }
}

fn micro(s: &str) -> i128 {
    gpuquota_metering::money::parse_decimal(s, 6, "hours").unwrap_or(0)
}

fn hours(m: i128) -> String {
    format!("{}", (m + 500_000).div_euclid(1_000_000))
}

/// Utilisation of each card type: allocated hours ÷ (capacity × window), per mille.
pub fn utilisation(r: &Report) -> BTreeMap<String, i128> {
    let mut out = BTreeMap::new();
    let Some(c) = section(r, "chargeback") else {
        return out;
    };
    let mut alloc: BTreeMap<String, i128> = BTreeMap::new();
    for l in c["lines"].as_array().into_iter().flatten() {
        *alloc
            .entry(l["cardType"].as_str().unwrap_or("").to_owned())
            .or_default() += micro(l["allocatedHours"].as_str().unwrap_or("0"));
    }
    for i in c["idle"].as_array().into_iter().flatten() {
        let card = i["cardType"].as_str().unwrap_or("").to_owned();
        let a = alloc.get(&card).copied().unwrap_or(0);
        let idle = micro(i["hours"].as_str().unwrap_or("0"));
        if a + idle > 0 {
            out.insert(card, a * 1000 / (a + idle));
        }
    }
    out
}

/// The one-screen account of the month (what happened, the chargeback); the CLI adds the
/// MIG plan, the plots and the commands.
///
/// # Complexity
/// O(runs log runs) per control.
pub fn summary(m: &SeedMonth) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "The seed platform's month (April 2026), simulated under {} controls:",
        m.runs.len()
    );
    // utilisation per card type and control
    let _ = writeln!(
        s,
        "\nUtilisation of each card type (allocated / capacity x 720 h):"
    );
    for (label, _, r) in &m.runs {
        let u = utilisation(r);
        let parts: Vec<String> = u
            .iter()
            .map(|(c, pm)| format!("{c} {}.{} %", pm / 10, pm % 10))
            .collect();
        let _ = writeln!(s, "  {label:<20} {}", parts.join(", "));
    }
    for (label, sc, r) in &m.runs {
        let _ = writeln!(s, "\n{label}:");
        let depts = crate::diff::metrics(sc, r, &BTreeMap::new());
        let dept_of_ns: BTreeMap<String, String> = sc
            .metering
            .as_ref()
            .and_then(|v| v["departments"].as_array().cloned())
            .into_iter()
            .flatten()
            .flat_map(|d| {
                let name = d["name"].as_str().unwrap_or("").to_owned();
                d["namespaces"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(move |n| n.as_str().map(|n| (n.to_owned(), name.clone())))
            })
            .collect();
        let _ = depts;
        if let Some(c) = section(r, "chargeback") {
            let borrowed: Vec<String> = c["lines"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|l| micro(l["borrowedHours"].as_str().unwrap_or("0")) > 0)
                .map(|l| {
                    format!(
                        "{} {} h of {}",
                        l["department"].as_str().unwrap_or(""),
                        hours(micro(l["borrowedHours"].as_str().unwrap_or("0"))),
                        l["cardType"].as_str().unwrap_or("")
                    )
                })
                .collect();
            let _ = writeln!(
                s,
                "  borrowed:  {}",
                if borrowed.is_empty() {
                    "nobody (no queue can borrow)".to_owned()
                } else {
                    borrowed.join("; ")
                }
            );
        }
        // preemptions by department, time of day and preemptor
        let mut pre: BTreeMap<(String, String, String), u32> = BTreeMap::new();
        let mut waited: BTreeMap<(String, String), u32> = BTreeMap::new();
        for w in &r.outcome.workloads {
            let ns = w.key.split('/').next().unwrap_or("");
            let d = dept_of_ns.get(ns).cloned().unwrap_or_else(|| ns.to_owned());
            for run in &w.runs {
                if let RunEnd::Preempted { reason, by } = &run.end {
                    let tod = run.end_ms.rem_euclid(86_400_000) / 60_000;
                    let who = if reason == gpuquota_model::budget::BUDGET_EXHAUSTED {
                        by.clone()
                    } else {
                        let ns2 = by.split('/').next().unwrap_or("");
                        dept_of_ns
                            .get(ns2)
                            .cloned()
                            .unwrap_or_else(|| ns2.to_owned())
                    };
                    *pre.entry((d.clone(), format!("{:02}:{:02}", tod / 60, tod % 60), who))
                        .or_default() += 1;
                }
            }
            if let Some(first) = w.runs.first() {
                if first.start_ms - w.created_ms >= 60_000 {
                    *waited
                        .entry((d.clone(), "waited for quota".into()))
                        .or_default() += 1;
                }
            } else if let Some((reason, _)) = &w.pending {
                *waited
                    .entry((d.clone(), format!("never ran: {reason}")))
                    .or_default() += 1;
            }
        }
        let p: Vec<String> = pre
            .iter()
            .map(|((d, t, by), n)| format!("{d} {n} x at {t} by {by}"))
            .collect();
        let _ = writeln!(
            s,
            "  preempted: {}",
            if p.is_empty() {
                "nobody".into()
            } else {
                p.join("; ")
            }
        );
        let wt: Vec<String> = waited
            .iter()
            .map(|((d, why), n)| format!("{d} {n} ({why})"))
            .collect();
        let _ = writeln!(
            s,
            "  waited:    {}",
            if wt.is_empty() {
                "nobody".into()
            } else {
                wt.join("; ")
            }
        );
        if let Some(Value::Array(bs)) = section(r, "budgets") {
            for b in bs {
                let end = r.outcome.end_ms;
                let last = b["periods"]
                    .as_array()
                    .and_then(|p| p.iter().rev().find(|p| p["startMs"].as_i64() < Some(end)));
                if let Some(p) = last {
                    let spent = p["spentAtMs"]
                        .as_i64()
                        .map(|t| {
                            format!(
                                "spent on day {} at {:02}:00",
                                t / 86_400_000 + 1,
                                t % 86_400_000 / 3_600_000
                            )
                        })
                        .unwrap_or_else(|| "not spent".into());
                    let _ = writeln!(
                        s,
                        "  budget:    {} used {} of {} GPU-hours, {spent}; {} workloads held back",
                        b["budget"].as_str().unwrap_or(""),
                        hours(micro(p["usedGpuHours"].as_str().unwrap_or("0"))),
                        hours(micro(p["gpuHours"].as_str().unwrap_or("0"))),
                        b["heldBack"]
                    );
                }
            }
        }
        if let Some(c) = section(r, "chargeback") {
            let mut by: BTreeMap<String, i128> = BTreeMap::new();
            for l in c["lines"].as_array().into_iter().flatten() {
                let t = l["total"].as_str().unwrap_or("0").replace('.', "");
                *by.entry(l["department"].as_str().unwrap_or("").to_owned())
                    .or_default() += t.parse::<i128>().unwrap_or(0);
            }
            let parts: Vec<String> = by
                .iter()
                .map(|(d, c)| format!("{d} {}", gpuquota_metering::money::format_fixed(*c, 2)))
                .collect();
            let _ = writeln!(
                s,
                "  chargeback ({}): {}; total incl. idle {}",
                c["currency"].as_str().unwrap_or(""),
                parts.join(", "),
                c["totals"]["cost"].as_str().unwrap_or("")
            );
        }
    }
    s
}
