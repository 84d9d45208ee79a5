//! The seed platform's month, simulated: the scenario shipped as data files
//! (`data/seed/`: `platform.yaml`, `month.yaml`, `kueue.yaml`, `resourcequota.yaml`, and
//! for KAI / Run:ai `kai-platform.yaml`, `kai-month.yaml`, `kai.yaml`), readable with
//! `gpuquota sim`, and the one-screen account the default run prints. The what-if of the
//! assistant's `lendingLimit: 0` is `kueue-no-lending-limit.yaml` (the Kueue month with the
//! limit unset through `spec.set`); the account compares it with the Kueue month.
//! The same directory holds the platform's other inputs: a day of Kueue Workloads
//! (`kueue-day.yaml`) and the MIG plan (`mig-plan.yaml`).
//!
//! ```
//! let month = gpuquota_sim::seed::run().expect("the seed scenario simulates");
//! assert_eq!(month.runs.len(), 2); // ResourceQuota only, Kueue
//! assert_eq!(month.kai.1.name, "seed-kai"); // and KAI / Run:ai
//! assert!(gpuquota_sim::seed::summary(&month).contains("KAI / Run:ai"));
//! ```
//!
//! The month: the assistant's base load (3 + 3 RTX) and its 08:00-11:00 peak (2 more),
//! translation, the nightly batch (eight one-GPU jobs at 20:00), data science's 02:00
//! fine-tuning on the eight H200 and its 01:00-10:00 evaluation on its own four RTX, and
//! eight MIG notebooks in office hours. The evaluation is why the assistant's
//! `lendingLimit: 0` matters: the batch jobs the fine-tuning preempts find no RTX to borrow
//! but the assistant's two idle cards, which the limit keeps for the 08:00 peak.
//!
//! The drills ([`DRILLS`], [`drills`]) are the month with a timeline: **a server fails**
//! (`drill-server-fails-*.yaml`: rtx-a down on Tuesday 04-14 for a day) and **a MIG
//! maintenance window** (`drill-mig-window-*.yaml`: rtx-b re-laid with mig-parted config
//! `notebooks-12` of `mig-configs.yaml` from Sunday 04-26 00:00), each under ResourceQuota
//! only and Kueue. KAI runs follow node failures and drains (not MIG re-layouts), but the
//! seed has no KAI drill file yet, and the account says so.
//!
//! The KAI month has the same six workloads and the same batch budget; departments are
//! top-level KAI queues with one project each (deserved quota = the Kueue nominal quota
//! summed over card types, over-quota weight = quota), sessions every minute (the
//! workloads arrive on whole hours, so no start is delayed by it).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use gpuquota_model::diag::Diagnostics;
use serde_json::Value;

use crate::report::{BudgetOut, Chargeback};
use crate::{Report, RunEnd, Scenario, scenario};

/// `data/seed/platform.yaml`: the Nodes, flavors, cohort, ClusterQueues, namespaces,
/// LocalQueues, ResourceQuota caps, priority classes and the batch budget; every control
/// reads it (the KAI month adds [`KAI_PLATFORM`]).
pub const PLATFORM: &str = include_str!("../data/seed/platform.yaml");
/// `data/seed/month.yaml`: the six workloads of the seed, repeated daily.
pub const MONTH: &str = include_str!("../data/seed/month.yaml");
/// `data/seed/kueue.yaml`: the month under Kueue.
pub const KUEUE: &str = include_str!("../data/seed/kueue.yaml");
/// `advice.yaml`: what the seed month's quotas should be (`gpuquota advise`; reads
/// kueue.yaml).
pub const ADVICE: &str = include_str!("../data/seed/advice.yaml");
/// `data/seed/resourcequota.yaml`: the month under ResourceQuota only.
pub const RESOURCEQUOTA: &str = include_str!("../data/seed/resourcequota.yaml");
/// `data/seed/kueue-no-lending-limit.yaml`: the Kueue month with the assistant's
/// `lendingLimit: 0` unset (`spec.set`), to show what the limit is for.
pub const KUEUE_NO_LENDING_LIMIT: &str = include_str!("../data/seed/kueue-no-lending-limit.yaml");
/// The what-if of the assistant's `lendingLimit`: (scenario file name, text), compared with
/// the Kueue month by `gpuquota sim diff kueue.yaml kueue-no-lending-limit.yaml`.
pub const NO_LENDING_LIMIT: (&str, &str) = ("kueue-no-lending-limit.yaml", KUEUE_NO_LENDING_LIMIT);

/// `data/seed/kai-platform.yaml`: the KAI department and project queues, read after
/// [`PLATFORM`].
pub const KAI_PLATFORM: &str = include_str!("../data/seed/kai-platform.yaml");
/// `data/seed/kai-month.yaml`: the six workloads as KAI PodGroups, repeated daily.
pub const KAI_MONTH: &str = include_str!("../data/seed/kai-month.yaml");
/// `data/seed/kai.yaml`: the month under KAI Scheduler / Run:ai.
pub const KAI: &str = include_str!("../data/seed/kai.yaml");
/// `data/seed/advice-kai.yaml`: what the seed month's KAI queues should be (`gpuquota
/// advise`; reads kai.yaml): batch's GPU limit and the assistant's deserved quota.
pub const ADVICE_KAI: &str = include_str!("../data/seed/advice-kai.yaml");
/// `data/seed/kueue-day.yaml`: one day of the seed platform (2026-03-02) as Kueue Workloads
/// for the objects of [`PLATFORM`]: the admitted inference services, six notebooks, sixteen
/// nightly batch jobs and the 02:00 fine-tuning job that reclaims their cards.
pub const KUEUE_DAY: &str = include_str!("../data/seed/kueue-day.yaml");
/// `data/seed/mig-plan.yaml`: the MIG planning request of the seed platform (the notebooks'
/// eight `nvidia.com/mig-1g.24gb` instances on node `rtx-b`), as `gpuquota mig plan` reads it.
pub const MIG_PLAN: &str = include_str!("../data/seed/mig-plan.yaml");
/// `data/seed/mig-configs.yaml`: the MIG manager's mig-parted configs (a ConfigMap), which
/// the MIG window drill names.
pub const MIG_CONFIGS: &str = include_str!("../data/seed/mig-configs.yaml");
/// `data/seed/drill-server-fails-kueue.yaml`: the server-failure drill under Kueue.
pub const DRILL_SERVER_FAILS_KUEUE: &str =
    include_str!("../data/seed/drill-server-fails-kueue.yaml");
/// `data/seed/drill-server-fails-resourcequota.yaml`: the server-failure drill under
/// ResourceQuota only.
pub const DRILL_SERVER_FAILS_RESOURCEQUOTA: &str =
    include_str!("../data/seed/drill-server-fails-resourcequota.yaml");
/// `data/seed/drill-mig-window-kueue.yaml`: the MIG maintenance window drill under Kueue.
pub const DRILL_MIG_WINDOW_KUEUE: &str = include_str!("../data/seed/drill-mig-window-kueue.yaml");
/// `data/seed/drill-mig-window-resourcequota.yaml`: the MIG maintenance window drill under
/// ResourceQuota only.
pub const DRILL_MIG_WINDOW_RESOURCEQUOTA: &str =
    include_str!("../data/seed/drill-mig-window-resourcequota.yaml");

/// One control of a drill: (label, scenario file name, text).
pub type DrillControl = (&'static str, &'static str, &'static str);
/// A drill: its title and its controls.
pub type Drill = (&'static str, &'static [DrillControl]);

/// The drills of the seed month: (title, [(control label, scenario file name, text)]), each
/// the month of [`ENGINES`] with a timeline ([`crate::timeline`]). KAI runs do not follow
/// node events yet, so the drills run under ResourceQuota only and Kueue.
pub const DRILLS: &[Drill] = &[
    (
        "a server fails (rtx-a down on Tuesday 04-14 from 00:00 for a day)",
        &[
            (
                "ResourceQuota only",
                "drill-server-fails-resourcequota.yaml",
                DRILL_SERVER_FAILS_RESOURCEQUOTA,
            ),
            (
                "Kueue",
                "drill-server-fails-kueue.yaml",
                DRILL_SERVER_FAILS_KUEUE,
            ),
        ],
    ),
    (
        "a MIG maintenance window (rtx-b re-laid as notebooks-12 from Sunday 04-26 00:00)",
        &[
            (
                "ResourceQuota only",
                "drill-mig-window-resourcequota.yaml",
                DRILL_MIG_WINDOW_RESOURCEQUOTA,
            ),
            (
                "Kueue",
                "drill-mig-window-kueue.yaml",
                DRILL_MIG_WINDOW_KUEUE,
            ),
        ],
    ),
];

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
    /// The Kueue month with the assistant's `lendingLimit` unset ([`NO_LENDING_LIMIT`]).
    pub no_lending_limit: (Scenario, Report),
}

/// Reads the shipped KAI scenario.
///
/// # Errors
/// The scenario's problems (none for the shipped files; a test checks it).
pub fn kai_scenario() -> Result<crate::Simulation, Diagnostics> {
    crate::simulation::from_text(KAI_ENGINE.1, KAI, "kai", &|f: &str| match f {
        "platform.yaml" => Ok(("platform.yaml".into(), PLATFORM.into())),
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
pub fn scenario_of(name: &str, text: &str) -> Result<crate::Simulation, Diagnostics> {
    let stem = name.trim_end_matches(".yaml");
    crate::simulation::from_text(name, text, stem, &|f: &str| match f {
        "platform.yaml" => Ok(("platform.yaml".into(), PLATFORM.into())),
        "month.yaml" => Ok(("month.yaml".into(), MONTH.into())),
        "mig-configs.yaml" => Ok(("mig-configs.yaml".into(), MIG_CONFIGS.into())),
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
        let sc = kueue(scenario_of(name, text)?)?;
        let r = crate::simulate_kueue(&sc)?;
        runs.push((label, sc, r));
    }
    let ksc = kai_scenario()?.into_kai().ok_or_else(|| not_mode("KAI"))?;
    let kout = crate::kai::simulate(&ksc)?;
    let nsc = kueue(scenario_of(NO_LENDING_LIMIT.0, NO_LENDING_LIMIT.1)?)?;
    let nr = crate::simulate_kueue(&nsc)?;
    Ok(SeedMonth {
        runs,
        kai: (ksc, kout),
        no_lending_limit: (nsc, nr),
    })
}

/// The drills' account: per drill and control, what the node event did to the month. For a
/// server failure: the workloads whose pods were lost (and the GPU-hours of work lost with
/// them), the assistant's cards running just after, and when the assistant's 08:00 peak of
/// that day started. For a MIG window: when it opened and closed, what it waited for, and
/// when that day's 08:00 peak started.
///
/// # Errors
/// Any drill scenario's problems (none for the shipped files; a test checks it).
///
/// # Complexity
/// One simulated month per drill and control.
pub fn drills() -> Result<String, Diagnostics> {
    let mut s = String::new();
    for (title, controls) in DRILLS {
        let _ = writeln!(s, "\nDrill: {title}:");
        for &(label, name, text) in *controls {
            let sc = kueue(scenario_of(name, text)?)?;
            let r = crate::simulate_kueue(&sc)?;
            let _ = writeln!(s, "  {label}:");
            for line in drill_lines(&sc, &r) {
                let _ = writeln!(s, "    {line}");
            }
        }
        let _ = writeln!(
            s,
            "  {}: not simulated (the seed has no KAI drill file yet; KAI runs follow node failures and drains, not MIG re-layouts).",
            KAI_ENGINE.0
        );
    }
    Ok(s)
}

/// `MM-DD HH:MM` of `ms` after the start.
fn day_clock(sc: &Scenario, ms: i64) -> String {
    let t = scenario::at_ms(sc.start, ms).to_string();
    format!(
        "{} {}",
        t.get(5..10).unwrap_or(""),
        t.get(11..16).unwrap_or("")
    )
}

/// The cards (`nvidia.com/gpu`) a run holds.
fn cards(r: &Report, run: &crate::Run) -> i64 {
    run.usage
        .iter()
        .filter(|(fr, _)| {
            r.outcome
                .frs
                .get(*fr as usize)
                .is_some_and(|(_, res)| res.as_str() == "nvidia.com/gpu")
        })
        .map(|&(_, a)| a)
        .sum()
}

/// The lines of one drill run: per timeline event its node effect, then the assistant's
/// peak of the event's day.
fn drill_lines(sc: &Scenario, r: &Report) -> Vec<String> {
    const DAY: i64 = 24 * 3_600_000;
    let mut lines = Vec::new();
    let mut day = None;
    for e in &r.outcome.timeline {
        let when = day_clock(sc, e.at_ms);
        for n in &e.nodes_down {
            let by = format!("Node/{n}");
            let mut lost_cards = 0;
            let mut lost_ms: i128 = 0;
            let mut names = Vec::new();
            for w in &r.outcome.workloads {
                for run in w.runs.iter().filter(|x| x.end_ms == e.at_ms) {
                    if let RunEnd::Preempted { by: b, .. } = &run.end
                        && *b == by
                    {
                        let c = cards(r, run);
                        lost_cards += c;
                        lost_ms += i128::from(c) * i128::from(run.end_ms - run.start_ms);
                        names.push(w.key.clone());
                    }
                }
            }
            lines.push(format!(
                "{when} {n} down: {} workloads lost their pods on {lost_cards} cards (their runs so far, {} GPU-hours, are lost work): {}.",
                names.len(),
                hours(lost_ms * 1_000_000 / 3_600_000),
                names.join(", ")
            ));
            let assistant: i64 = r
                .outcome
                .workloads
                .iter()
                .filter(|w| w.key.starts_with("platform-team/"))
                .flat_map(|w| w.runs.iter())
                .filter(|x| x.start_ms <= e.at_ms && x.end_ms > e.at_ms)
                .map(|x| cards(r, x))
                .sum();
            lines.push(format!(
                "the assistant ran on {assistant} cards right after."
            ));
            day.get_or_insert(e.at_ms.div_euclid(DAY) * DAY);
        }
        for n in &e.nodes_up {
            lines.push(format!("{when} {n} up."));
        }
        if let Some(w) = &e.mig_window {
            let closed = w.closed_ms.map_or_else(
                || "was still open at the end".to_owned(),
                |c| format!("closed at {}", day_clock(sc, c)),
            );
            lines.push(format!(
                "{when} window on {} opened (config {}); it {closed}, having waited for {}.",
                w.node,
                w.config,
                if w.waited.is_empty() {
                    "nothing".to_owned()
                } else {
                    w.waited.join(", ")
                }
            ));
            day.get_or_insert(e.at_ms.div_euclid(DAY) * DAY);
        }
    }
    if let Some(d) = day {
        let peak = d + 8 * 3_600_000;
        let started = r
            .outcome
            .workloads
            .iter()
            .find(|w| w.key.starts_with("platform-team/assistant-peak") && w.created_ms == peak)
            .and_then(|w| w.runs.first())
            .map(|x| x.start_ms);
        lines.push(match started {
            Some(t) if t == peak => format!(
                "the assistant's {} peak was served at once.",
                day_clock(sc, peak)
            ),
            Some(t) => format!(
                "the assistant's {} peak waited until {}.",
                day_clock(sc, peak),
                day_clock(sc, t)
            ),
            None => format!(
                "the assistant's {} peak did not start.",
                day_clock(sc, peak)
            ),
        });
    }
    lines
}

/// The Kueue scenario of a shipped simulation.
fn kueue(s: crate::Simulation) -> Result<Scenario, Diagnostics> {
    s.into_kueue().ok_or_else(|| not_mode("Kueue"))
}

/// A shipped scenario of the wrong engine (a test keeps it from happening).
fn not_mode(mode: &str) -> Diagnostics {
    Diagnostics(vec![gpuquota_model::diag::Diagnostic::error(
        scenario::INVALID_SCENARIO,
        format!("not a {mode} scenario"),
    )])
}

fn hours(m: i128) -> String {
    format!("{}", (m + 500_000).div_euclid(1_000_000))
}

/// Utilisation of each card type: allocated hours ÷ (capacity × window), per mille,
/// rounded half-up.
pub fn utilisation(r: &Report) -> BTreeMap<String, i128> {
    r.chargeback
        .as_ref()
        .map_or_else(BTreeMap::new, utilisation_of)
}

/// Utilisation of each card type from a `chargeback` section, per mille, rounded half-up.
pub fn utilisation_of(c: &Chargeback) -> BTreeMap<String, i128> {
    let mut out = BTreeMap::new();
    let mut alloc: BTreeMap<String, i128> = BTreeMap::new();
    for l in &c.meter.lines {
        *alloc.entry(l.card_type.clone()).or_default() += l.allocated_hours.micro();
    }
    for i in &c.meter.idle {
        let card = i.card_type.clone();
        let a = alloc.get(&card).copied().unwrap_or(0);
        let idle = i.hours.micro();
        if a + idle > 0 {
            // rounded half-up to a tenth of a percent, never truncated (67.19 % → 67.2 %)
            out.insert(card, (a * 2000 + (a + idle)) / (2 * (a + idle)));
        }
    }
    out
}

/// One workload as the summary counts it: key, arrival, runs (end, and for a run that was
/// ended early: who or what ended it), first admission, whether its pods ever waited for
/// free devices after admission, pending reason at the end.
struct Acct {
    key: String,
    created_ms: i64,
    first_start_ms: Option<i64>,
    waited_for_devices: bool,
    ends: Vec<(i64, Option<Ender>)>,
    pending: Option<String>,
    /// From each eviction to the readmission after it ([`crate::report::requeue_waits`]).
    requeue_ms: Vec<i64>,
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
            first_start_ms: w.runs.first().map(|x| x.reserved_ms),
            waited_for_devices: w.runs.iter().any(|x| x.start_ms - x.reserved_ms >= 60_000),
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
            requeue_ms: crate::report::requeue_waits(
                &w.runs
                    .iter()
                    .map(|r| {
                        let evicted = matches!(r.end, RunEnd::Preempted { .. });
                        (r.start_ms, r.end_ms, evicted)
                    })
                    .collect::<Vec<_>>(),
            ),
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
            waited_for_devices: false,
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
                        KaiRunEnd::Lost { by, .. } => Some(Ender::Workload(by.clone(), None)),
                        _ => None,
                    };
                    (run.end_ms, e)
                })
                .collect(),
            pending: j.pending.as_ref().map(|p| p.0.clone()),
            requeue_ms: crate::report::requeue_waits(
                &j.runs
                    .iter()
                    .map(|r| {
                        let evicted = r.end.is_eviction();
                        (r.start_ms, r.end_ms, evicted)
                    })
                    .collect::<Vec<_>>(),
            ),
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
        kout.chargeback
            .as_ref()
            .map_or_else(BTreeMap::new, utilisation_of),
    ));
    for (label, u) in &util {
        let parts: Vec<String> = u
            .iter()
            .map(|(c, pm)| format!("{c} {}.{} %", pm / 10, pm % 10))
            .collect();
        let _ = writeln!(s, "  {label:<20} {}", parts.join(", "));
    }
    if let Some((_, sc, _)) = m.runs.first() {
        for note in mig_weights(sc) {
            let _ = writeln!(s, "{note}");
        }
    }
    for (label, sc, r) in &m.runs {
        block(
            &mut s,
            label,
            sc.metering.as_ref(),
            &kueue_accts(r),
            r.chargeback.as_ref(),
            r.budgets.as_deref(),
            r.outcome.end_ms,
        );
    }
    if let Some((_, sc, r)) = m.runs.iter().find(|(l, _, _)| *l == "Kueue") {
        lending_limit_lines(&mut s, sc, r, &m.no_lending_limit.0, &m.no_lending_limit.1);
    }
    block(
        &mut s,
        KAI_ENGINE.0,
        ksc.metering.as_ref(),
        &kai_accts(kout),
        kout.chargeback.as_ref(),
        kout.budgets.as_deref(),
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
    chargeback: Option<&Chargeback>,
    budgets: Option<&[BudgetOut]>,
    end: i64,
) {
    let _ = writeln!(s, "\n{label}:");
    let dept_of_ns = departments_by_namespace(metering);
    if let Some(c) = chargeback {
        borrowed_line(s, c);
    }
    preempted_and_waited_lines(s, accts, &dept_of_ns);
    if let Some(c) = chargeback {
        let _ = writeln!(s, "  lost work: {}", crate::bill::lost_work_sentence(c));
    }
    if let Some(bs) = budgets {
        budget_lines(s, bs, end);
    }
    if let Some(c) = chargeback {
        let _ = writeln!(
            s,
            "  bill:      per department and card type, then idle; the rows add up to the total"
        );
        for line in crate::bill::bill_rows(c) {
            let _ = writeln!(s, "    {line}");
        }
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
fn borrowed_line(s: &mut String, c: &Chargeback) {
    let borrowed: Vec<String> = c
        .meter
        .lines
        .iter()
        .filter(|l| l.borrowed_hours.micro() > 0)
        .map(|l| {
            format!(
                "{} {} h of {}",
                l.department,
                hours(l.borrowed_hours.micro()),
                l.card_type
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
/// workloads that waited a minute or more for quota, or admitted for free devices on the
/// Nodes, or never ran, by department, and the readmissions after a preemption that waited
/// a minute or more, with their mean wait.
fn preempted_and_waited_lines(
    s: &mut String,
    accts: &[Acct],
    dept_of_ns: &BTreeMap<String, String>,
) {
    let mut pre: BTreeMap<(String, String, String), u32> = BTreeMap::new();
    let mut waited: BTreeMap<(String, String), u32> = BTreeMap::new();
    let mut requeued: BTreeMap<String, Vec<i64>> = BTreeMap::new();
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
        if w.waited_for_devices {
            *waited
                .entry((d.clone(), "waited for free devices".into()))
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
        requeued
            .entry(d.clone())
            .or_default()
            .extend(w.requeue_ms.iter().filter(|&&ms| ms >= 60_000));
    }
    for (d, v) in requeued.into_iter().filter(|(_, v)| !v.is_empty()) {
        let total: i128 = v.iter().map(|&x| i128::from(x)).sum();
        let mean = i64::try_from(total / v.len() as i128).unwrap_or(i64::MAX);
        let why = format!(
            "readmitted after a preemption, {} later on average",
            crate::report::human_ms(mean / 60_000 * 60_000)
        );
        waited.insert((d, why), v.len() as u32);
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
fn budget_lines(s: &mut String, bs: &[BudgetOut], end: i64) {
    for b in bs {
        let last = b.periods.iter().rev().find(|p| p.start_ms < end);
        if let Some(p) = last {
            let spent = p
                .spent_at_ms
                .map(|t| {
                    format!(
                        "spent on day {} at {:02}:00",
                        t / 86_400_000 + 1,
                        t % 86_400_000 / 3_600_000
                    )
                })
                .unwrap_or_else(|| "not spent".into());
            let used = p.used_gpu_hours.micro();
            let limit = p.gpu_hours.micro();
            let _ = writeln!(
                s,
                "  budget:    {} used {} of {} GPU-hours, {spent}; {} workloads held back",
                b.budget,
                hours(used),
                hours(limit),
                b.held_back
            );
            if used > limit && !b.stop_running {
                let _ = writeln!(
                    s,
                    "             {} h over: when it was spent, runs admitted before kept running to their end ({} holds back new work, it stops none)",
                    hours(used - limit),
                    b.when_spent
                );
            }
        }
    }
}

/// How the bill weighs each MIG resource of the platform's ClusterQueues: `A MIG 1g.24gb
/// instance counts as 1/4 of an RTX PRO 6000 in the bills below (as the meter weighs it).`
fn mig_weights(sc: &Scenario) -> Vec<String> {
    let cards = crate::bill::card_map(sc.metering.as_ref());
    let mut seen: BTreeMap<(String, String), (i128, i128)> = BTreeMap::new();
    for cq in sc.model.cluster_queues.values() {
        for g in &cq.spec.resource_groups {
            for f in &g.flavors {
                for r in &f.resources {
                    let res = r.name.as_str();
                    let Some(profile) = res.strip_prefix("nvidia.com/mig-") else {
                        continue;
                    };
                    if let Some((card, w)) = cards.weigh(&f.name, res)
                        && w > 0
                        && !card.is_empty()
                    {
                        let l = gpuquota_metering::money::L;
                        let g = gcd(w, l);
                        seen.insert((profile.to_owned(), card), (w / g, l / g));
                    }
                }
            }
        }
    }
    seen.into_iter()
        .map(|((profile, card), (n, d))| {
            format!(
                "A MIG {profile} instance counts as {n}/{d} of an {card} in the bills below (as the meter weighs it)."
            )
        })
        .collect()
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 { a.abs() } else { gcd(b, a % b) }
}

/// Borrowed hours per (department, card type) in a run's bill (none without metering).
fn borrowed_by_card_type(r: &Report) -> BTreeMap<(String, String), i128> {
    let mut out = BTreeMap::new();
    if let Some(c) = r.chargeback.as_ref() {
        for l in &c.meter.lines {
            *out.entry((l.department.clone(), l.card_type.clone()))
                .or_insert(0) += l.borrowed_hours.micro();
        }
    }
    out
}

/// What the assistant's `lendingLimit: 0` is for: the Kueue month against the same month
/// with the limit unset ([`NO_LENDING_LIMIT`]), as `sim diff` compares them: who borrowed
/// more, per card type (the extra hours of the assistant's card type are its idle cards:
/// the variant changes nothing else), whose workloads waited longer for admission.
fn lending_limit_lines(s: &mut String, sa: &Scenario, a: &Report, sb: &Scenario, b: &Report) {
    let d = crate::diff::diff(sa, a, sb, b);
    let (ba, bb) = (borrowed_by_card_type(a), borrowed_by_card_type(b));
    // the assistant's card type (its bill line's) comes first in each department's deltas
    let own = ba
        .keys()
        .find(|(dept, _)| dept == "assistant")
        .map(|(_, card)| card.as_str());
    let mut per_dept: BTreeMap<&str, Vec<(bool, String)>> = BTreeMap::new();
    for key in ba
        .keys()
        .chain(bb.keys())
        .collect::<std::collections::BTreeSet<_>>()
    {
        let x = bb.get(key).copied().unwrap_or(0) - ba.get(key).copied().unwrap_or(0);
        if x != 0 {
            let sign = if x > 0 { "+" } else { "-" };
            let mine = own == Some(key.1.as_str());
            let note = if mine && x > 0 {
                " (the assistant's idle cards)"
            } else {
                ""
            };
            per_dept.entry(key.0.as_str()).or_default().push((
                !mine,
                format!("{sign}{} h of {}{note}", hours(x.abs()), key.1),
            ));
        }
    }
    let borrowed: Vec<String> = per_dept
        .into_iter()
        .map(|(dept, mut parts)| {
            parts.sort();
            let parts: Vec<String> = parts.into_iter().map(|(_, p)| p).collect();
            format!("{dept} {}", parts.join(", "))
        })
        .collect();
    let mut waited = Vec::new();
    for (dept, m) in &d.departments {
        let (ma, mb) = (
            m.mean_time_to_admission_ms.a.unwrap_or(0),
            m.mean_time_to_admission_ms.b.unwrap_or(0),
        );
        let (pa, pb) = (
            m.p95_time_to_admission_ms.a.unwrap_or(0),
            m.p95_time_to_admission_ms.b.unwrap_or(0),
        );
        if ma != mb || pa != pb {
            let with = if ma == 0 && pa == 0 {
                "none".to_owned()
            } else {
                format!(
                    "{} on average, p95 {}",
                    crate::report::human_ms(ma),
                    crate::report::human_ms(pa)
                )
            };
            waited.push(format!(
                "{dept} {} on average, p95 {} (with the limit: {with})",
                crate::report::human_ms(mb),
                crate::report::human_ms(pb),
            ));
        }
    }
    let _ = writeln!(
        s,
        "  without the assistant's lendingLimit 0 ({}):",
        NO_LENDING_LIMIT.0
    );
    let _ = writeln!(
        s,
        "    borrowed:  {}",
        if borrowed.is_empty() {
            "no change: no queue could borrow more than it already did".to_owned()
        } else {
            borrowed.join("; ")
        }
    );
    let _ = writeln!(
        s,
        "    waited:    {}",
        if waited.is_empty() {
            "no change".to_owned()
        } else {
            waited.join("; ")
        }
    );
}
