//! The seed platform's month, simulated: the scenario shipped as data files
//! (`data/seed/`: `platform.yaml`, `month.yaml`, `kueue.yaml`, `resourcequota.yaml`, and
//! for KAI / Run:ai `kai-platform.yaml`, `kai-month.yaml`, `kai.yaml`), readable with
//! `gpuquota sim`, and the one-screen account the default run prints. The same directory
//! holds the platform's other inputs: a day of Kueue Workloads (`kueue-day.yaml`) and the
//! MIG plan (`mig-plan.yaml`).
//!
//! ```
//! let month = gpuquota_sim::seed::run().expect("the seed scenario simulates");
//! assert_eq!(month.runs.len(), 2); // ResourceQuota only, Kueue
//! assert_eq!(month.kai.1.name, "seed-kai"); // and KAI / Run:ai
//! assert!(gpuquota_sim::seed::summary(&month).contains("KAI / Run:ai"));
//! ```
//!
//! The KAI month has the same five workloads and the same batch budget; departments are
//! top-level KAI queues with one project each (deserved quota = the Kueue nominal quota
//! summed over card types, over-quota weight = quota), sessions every minute (the
//! workloads arrive on whole hours, so no start is delayed by it).

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

/// `data/seed/kai-platform.yaml`: nodes, KAI department and project queues, the batch
/// budget.
pub const KAI_PLATFORM: &str = include_str!("../data/seed/kai-platform.yaml");
/// `data/seed/kai-month.yaml`: the five workloads as KAI PodGroups, repeated daily.
pub const KAI_MONTH: &str = include_str!("../data/seed/kai-month.yaml");
/// `data/seed/kai.yaml`: the month under KAI Scheduler / Run:ai.
pub const KAI: &str = include_str!("../data/seed/kai.yaml");
/// `data/seed/kueue-day.yaml`: one day of the seed platform (2026-03-02) as Kueue Workloads
/// for the objects of [`PLATFORM`]: the admitted inference services, six notebooks, sixteen
/// nightly batch jobs and the 02:00 fine-tuning job that reclaims their cards.
pub const KUEUE_DAY: &str = include_str!("../data/seed/kueue-day.yaml");
/// `data/seed/mig-plan.yaml`: the MIG planning request of the seed platform (the notebooks'
/// eight `nvidia.com/mig-1g.24gb` instances on node `rtx-b`), as `gpuquota mig plan` reads it.
pub const MIG_PLAN: &str = include_str!("../data/seed/mig-plan.yaml");
/// The KAI control: (label, scenario file name, text); simulated by the KAI mode.
pub const KAI_ENGINE: (&str, &str, &str) = ("KAI / Run:ai", "kai.yaml", KAI);

/// The controls of the Kueue mode the month is simulated under, in order: (label, scenario
/// file name, text); [`KAI_ENGINE`] is the third.
pub const ENGINES: &[(&str, &str, &str)] = &[
    ("ResourceQuota only", "resourcequota.yaml", RESOURCEQUOTA),
    ("Kueue", "kueue.yaml", KUEUE),
];

/// The simulated month: one (label, scenario, report) per control of [`ENGINES`].
#[derive(Debug, Clone)]
pub struct SeedMonth {
    /// The runs.
    pub runs: Vec<(&'static str, Scenario, Report)>,
    /// The KAI run.
    pub kai: (crate::kai::KaiScenario, crate::kai::KaiOutcome),
}

/// Reads the shipped KAI scenario.
///
/// # Errors
/// The scenario's problems (none for the shipped files; a test checks it).
pub fn kai_scenario() -> Result<crate::kai::KaiScenario, Diagnostics> {
    crate::kai::scenario::from_str(KAI_ENGINE.1, KAI, "kai", &|f: &str| match f {
        "kai-platform.yaml" => Ok(("kai-platform.yaml".into(), KAI_PLATFORM.into())),
        "kai-month.yaml" => Ok(("kai-month.yaml".into(), KAI_MONTH.into())),
        other => Err(gpuquota_model::diag::Diagnostic::error(
            gpuquota_model::diag::codes::READ_FAILED,
            format!("{other}: not a shipped seed file"),
        )),
    })
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
    let ksc = kai_scenario()?;
    let kout = crate::kai::simulate(&ksc)?;
    Ok(SeedMonth {
        runs,
        kai: (ksc, kout),
    })
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
    section(r, "chargeback").map_or_else(BTreeMap::new, |c| utilisation_of(&c))
}

/// Utilisation of each card type from a `chargeback` section, per mille.
pub fn utilisation_of(c: &Value) -> BTreeMap<String, i128> {
    let mut out = BTreeMap::new();
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

/// One workload as the summary counts it: key, arrival, runs (end, and for a run that was
/// ended early: who or what ended it), first start, pending reason at the end.
struct Acct {
    key: String,
    created_ms: i64,
    first_start_ms: Option<i64>,
    ends: Vec<(i64, Option<Ender>)>,
    pending: Option<String>,
}

/// What ended a run early: a workload (its key, with the engine's action) or a budget.
enum Ender {
    Workload(String, Option<&'static str>),
    Budget(String),
}

fn kueue_accts(r: &Report) -> Vec<Acct> {
    r.outcome
        .workloads
        .iter()
        .map(|w| Acct {
            key: w.key.clone(),
            created_ms: w.created_ms,
            first_start_ms: w.runs.first().map(|x| x.start_ms),
            ends: w
                .runs
                .iter()
                .map(|run| {
                    let e = match &run.end {
                        RunEnd::Preempted { reason, by } => {
                            Some(if reason == gpuquota_model::budget::BUDGET_EXHAUSTED {
                                Ender::Budget(by.clone())
                            } else {
                                Ender::Workload(by.clone(), None)
                            })
                        }
                        _ => None,
                    };
                    (run.end_ms, e)
                })
                .collect(),
            pending: w.pending.as_ref().map(|p| p.0.clone()),
        })
        .collect()
}

fn kai_accts(o: &crate::kai::KaiOutcome) -> Vec<Acct> {
    use crate::kai::KaiRunEnd;
    o.jobs
        .iter()
        .map(|j| Acct {
            key: j.key.clone(),
            created_ms: j.created_ms,
            first_start_ms: j.first_start_ms,
            ends: j
                .runs
                .iter()
                .map(|run| {
                    let e = match &run.end {
                        KaiRunEnd::Evicted { action, by } => Some(Ender::Workload(
                            by.clone().unwrap_or_default(),
                            Some(crate::kai::report::action_str(*action)),
                        )),
                        KaiRunEnd::Stopped { by } => Some(Ender::Budget(by.clone())),
                        _ => None,
                    };
                    (run.end_ms, e)
                })
                .collect(),
            pending: j.pending.as_ref().map(|p| p.0.clone()),
        })
        .collect()
}

/// The one-screen account of the month (what happened, the chargeback); the CLI adds the
/// MIG plan, the plots and the commands.
///
/// # Complexity
/// O(runs log runs) per control.
pub fn summary(m: &SeedMonth) -> String {
    let mut s = String::new();
    let (ksc, kout) = &m.kai;
    let kai_section = |k: &str| -> Option<Value> {
        match k {
            "budgets" => kout
                .budgets
                .as_ref()
                .and_then(|b| serde_json::to_value(b).ok()),
            "chargeback" => kout
                .chargeback
                .as_ref()
                .and_then(|c| serde_json::to_value(c).ok()),
            _ => None,
        }
    };
    let _ = writeln!(
        s,
        "The seed platform's month (April 2026), simulated under {} controls:",
        m.runs.len() + 1
    );
    // utilisation per card type and control
    let _ = writeln!(
        s,
        "\nUtilisation of each card type (allocated / capacity x 720 h):"
    );
    let mut util: Vec<(&str, BTreeMap<String, i128>)> = m
        .runs
        .iter()
        .map(|(label, _, r)| (*label, utilisation(r)))
        .collect();
    util.push((
        KAI_ENGINE.0,
        kai_section("chargeback").map_or_else(BTreeMap::new, |c| utilisation_of(&c)),
    ));
    for (label, u) in &util {
        let parts: Vec<String> = u
            .iter()
            .map(|(c, pm)| format!("{c} {}.{} %", pm / 10, pm % 10))
            .collect();
        let _ = writeln!(s, "  {label:<20} {}", parts.join(", "));
    }
    for (label, sc, r) in &m.runs {
        block(
            &mut s,
            label,
            sc.metering.as_ref(),
            &kueue_accts(r),
            section(r, "chargeback").as_ref(),
            section(r, "budgets").as_ref(),
            r.outcome.end_ms,
        );
    }
    block(
        &mut s,
        KAI_ENGINE.0,
        ksc.metering.as_ref(),
        &kai_accts(kout),
        kai_section("chargeback").as_ref(),
        kai_section("budgets").as_ref(),
        kout.end_ms,
    );
    s
}

/// One control's account: borrowed, preempted, waited, budget, chargeback.
fn block(
    s: &mut String,
    label: &str,
    metering: Option<&Value>,
    accts: &[Acct],
    chargeback: Option<&Value>,
    budgets: Option<&Value>,
    end: i64,
) {
    let _ = writeln!(s, "\n{label}:");
    let dept_of_ns = departments_by_namespace(metering);
    if let Some(c) = chargeback {
        borrowed_line(s, c);
    }
    preempted_and_waited_lines(s, accts, &dept_of_ns);
    if let Some(Value::Array(bs)) = budgets {
        budget_lines(s, bs, end);
    }
    if let Some(c) = chargeback {
        chargeback_line(s, c);
    }
}

/// The department of each namespace, from the `spec.metering` departments.
fn departments_by_namespace(metering: Option<&Value>) -> BTreeMap<String, String> {
    metering
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
        .collect()
}

/// `borrowed:` the borrowed hours per department and card type of the chargeback.
fn borrowed_line(s: &mut String, c: &Value) {
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

/// `preempted:` preemptions by department, time of day and preemptor; `waited:` the
/// workloads that waited a minute or more for quota, or never ran, by department.
fn preempted_and_waited_lines(
    s: &mut String,
    accts: &[Acct],
    dept_of_ns: &BTreeMap<String, String>,
) {
    let mut pre: BTreeMap<(String, String, String), u32> = BTreeMap::new();
    let mut waited: BTreeMap<(String, String), u32> = BTreeMap::new();
    let dept = |ns: &str| dept_of_ns.get(ns).cloned().unwrap_or_else(|| ns.to_owned());
    for w in accts {
        let d = dept(w.key.split('/').next().unwrap_or(""));
        for (end_ms, e) in &w.ends {
            let Some(e) = e else { continue };
            let tod = end_ms.rem_euclid(86_400_000) / 60_000;
            let who = match e {
                Ender::Budget(by) => by.clone(),
                Ender::Workload(by, action) => {
                    let d2 = if by.is_empty() {
                        "nobody".to_owned()
                    } else {
                        dept(by.split('/').next().unwrap_or(""))
                    };
                    match action {
                        Some(a) => format!("{d2} ({a})"),
                        None => d2,
                    }
                }
            };
            *pre.entry((d.clone(), format!("{:02}:{:02}", tod / 60, tod % 60), who))
                .or_default() += 1;
        }
        if let Some(first) = w.first_start_ms {
            if first - w.created_ms >= 60_000 {
                *waited
                    .entry((d.clone(), "waited for quota".into()))
                    .or_default() += 1;
            }
        } else if let Some(reason) = &w.pending {
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
}

/// `budget:` per budget, its last period that started before `end`.
fn budget_lines(s: &mut String, bs: &[Value], end: i64) {
    for b in bs {
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

/// `chargeback (CURRENCY):` the total per department, and the total with idle time.
fn chargeback_line(s: &mut String, c: &Value) {
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
