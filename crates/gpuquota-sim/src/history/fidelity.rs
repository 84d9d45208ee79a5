//! Fidelity: how far a replay is from what the cluster recorded, as figures a team can
//! judge the what-if by. A pure function of the recorded histories ([`Recorded`]) and the
//! replay's outcome per workload ([`Simulated`]); nothing is read or written.
//!
//! Per workload ([`WorkloadFidelity`]): the recorded and the simulated first admission,
//! evictions and end, and the error of its time to admission. Per group of the recorded
//! class and LocalQueue (`namespace/queue`), and over all workloads ([`GroupFidelity`]):
//! - **time to admission** (first admission − arrival) of the workloads whose first
//!   admission is known on both sides: the mean absolute error (rounded to the nearest ms,
//!   halves up) and the 95th percentile (nearest rank: the ⌈0.95·n⌉-th smallest error);
//! - **Kendall's τ-b of the admission order**: over the pairs of those workloads, the
//!   concordant minus the discordant pairs, over √((pairs − pairs tied in the record) ×
//!   (pairs − pairs tied in the replay)); 1 is the recorded order exactly, −1 its reverse,
//!   `None` with fewer than two such workloads or when either side ties every pair;
//!   O(n log n) (Knight's algorithm: a sort, then a merge sort counting exchanges);
//! - **preemptions**: per workload, its recorded evictions of reason `Preempted` against
//!   its simulated runs ended by a preemption; `matched` is the smaller count, `missed` the
//!   recorded ones beyond it, `extra` the simulated ones beyond it.
//!
//! Per department (namespace, [`DepartmentHours`]): GPU-seconds recorded (the runs before
//! the last as [`Recorded::past_run_ms`] says, plus the recorded last run: admission to end,
//! or to `until_ms` when still running) and simulated (every run, admission to end), each
//! `gpus × length`, whole GPU-seconds rounded down.
//!
//! Notes ([`FidelityNote`]) explain the differences whose cause the model knows: a recorded
//! eviction of a reason the replay cannot produce (a node failure, a deactivation, a stopped
//! queue: a timeline event replays it), a workload pending or still running when recorded
//! but admitted or finished in the replay, a recorded workload the replay lacks.
//!
//! A workload recorded but not in the replay (or the reverse) counts as not compared.
//! Times of [`Recorded`] are unix ms, those of [`Simulated`] ms since the replay's start;
//! the start joins them. Groups and departments are sorted by name, workloads by key.

use std::collections::BTreeMap;

use super::Recorded;

/// One simulated run of a workload, ms since the replay's start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimRun {
    /// Its admission (quota reserved).
    pub admitted_ms: i64,
    /// Its end.
    pub end_ms: i64,
    /// Ended by a preemption (`Some(reason)`), else `None` (finished, or cut at the end).
    pub preempted: Option<String>,
}

/// A workload's outcome in the replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Simulated {
    /// The workload's key (`namespace/name`).
    pub key: String,
    /// Its runs in time order.
    pub runs: Vec<SimRun>,
    /// When it finished, ms since start.
    pub finished_ms: Option<i64>,
}

impl Simulated {
    /// The outcome a perfect replay of `r` would have, ms since `start_ms` (unix ms): each
    /// recorded preemption a run at its time (at the arrival when its time is not recorded),
    /// the first holding [`Recorded::past_run_ms`], the others of no length, then the last run from its admission to its end (to `until_ms` when
    /// still running, to its admission without it). [`fidelity`] of a history against
    /// these outcomes is exact: no error, every preemption matched, equal GPU-seconds.
    pub fn from_recorded(r: &Recorded, start_ms: i64, until_ms: Option<i64>) -> Simulated {
        let rel = |t: i64| t.saturating_sub(start_ms);
        let mut runs = Vec::new();
        // the runs before the last hold the recorded past time, the first one all of it
        let mut past = r.past_run_ms;
        for e in r.evictions.iter().filter(|e| e.reason == "Preempted") {
            let at = rel(e.at_ms.unwrap_or(r.created_ms));
            for _ in 0..e.count {
                runs.push(SimRun {
                    admitted_ms: at,
                    end_ms: at.saturating_add(std::mem::take(&mut past)),
                    preempted: Some(e.cause.clone()),
                });
            }
        }
        if let Some(a) = r.admitted_ms.map(rel) {
            let end = r
                .end
                .as_ref()
                .map(|e| rel(e.at_ms))
                .or(until_ms)
                .unwrap_or(a);
            runs.push(SimRun {
                admitted_ms: a,
                end_ms: end,
                preempted: None,
            });
        }
        runs.sort_by(|x, y| {
            (x.admitted_ms, x.end_ms, &x.preempted).cmp(&(y.admitted_ms, y.end_ms, &y.preempted))
        });
        Simulated {
            key: r.key.clone(),
            runs,
            finished_ms: r.end.as_ref().map(|e| rel(e.at_ms)),
        }
    }

    /// A run's outcome for a workload: each run from its quota reservation to its end.
    pub fn from_outcome(w: &crate::engine::WorkloadOutcome) -> Simulated {
        Simulated {
            key: w.key.clone(),
            runs: w
                .runs
                .iter()
                .map(|r| SimRun {
                    admitted_ms: r.reserved_ms,
                    end_ms: r.end_ms,
                    preempted: match &r.end {
                        crate::engine::RunEnd::Preempted { reason, .. } => Some(reason.clone()),
                        _ => None,
                    },
                })
                .collect(),
            finished_ms: w.finished_ms,
        }
    }

    /// A KAI run's outcome for a job (PodGroup): each run from its pods' binding (session +
    /// bind latency) to its end; a run evicted by a session (`reclaim`, `preempt`,
    /// `consolidation`, `stale`) ended by a preemption of that action, one a spent budget
    /// stopped not.
    pub fn from_kai_job(j: &crate::kai::report::KaiJob) -> Simulated {
        use crate::kai::report::{KaiRunEnd, action_str};
        Simulated {
            key: j.key.clone(),
            runs: j
                .runs
                .iter()
                .map(|r| SimRun {
                    admitted_ms: r.start_ms,
                    end_ms: r.end_ms,
                    preempted: match &r.end {
                        KaiRunEnd::Evicted { action, .. } => Some(action_str(*action).to_owned()),
                        _ => None,
                    },
                })
                .collect(),
            finished_ms: j.finished_ms,
        }
    }

    fn first_admitted_ms(&self) -> Option<i64> {
        self.runs.first().map(|r| r.admitted_ms)
    }

    fn preemptions(&self) -> u32 {
        let n = self.runs.iter().filter(|r| r.preempted.is_some()).count();
        u32::try_from(n).unwrap_or(u32::MAX)
    }
}

/// One workload compared, times in ms since the replay's start.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WorkloadFidelity {
    /// Key.
    pub key: String,
    /// Recorded class.
    pub class: String,
    /// Recorded LocalQueue, `namespace/queue`.
    pub queue: String,
    /// Recorded arrival.
    pub created_ms: i64,
    /// Recorded first admission, when known.
    pub recorded_admitted_ms: Option<i64>,
    /// Simulated first admission.
    pub simulated_admitted_ms: Option<i64>,
    /// Recorded evictions (all reasons).
    pub recorded_evictions: u32,
    /// Recorded evictions of reason `Preempted`.
    pub recorded_preemptions: u32,
    /// Simulated runs ended by a preemption.
    pub simulated_preemptions: u32,
    /// Recorded end.
    pub recorded_end_ms: Option<i64>,
    /// Simulated end.
    pub simulated_end_ms: Option<i64>,
    /// |simulated − recorded| time to admission, when both are known.
    pub admission_error_ms: Option<i64>,
    /// Whether the replay has this workload.
    pub simulated: bool,
}

/// Preemptions recorded against simulated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Preemptions {
    /// In both.
    pub matched: u32,
    /// Recorded, not simulated.
    pub missed: u32,
    /// Simulated, not recorded.
    pub extra: u32,
}

/// The figures of a group of workloads.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GroupFidelity {
    /// Recorded class (`""` over all groups).
    pub class: String,
    /// Recorded LocalQueue, `namespace/queue` (`""` over all groups).
    pub queue: String,
    /// Workloads recorded.
    pub workloads: u32,
    /// Workloads whose time to admission is known on both sides.
    pub compared: u32,
    /// Mean absolute error of the time to admission, ms.
    pub mean_admission_error_ms: Option<i64>,
    /// 95th percentile (nearest rank) of that error, ms.
    pub p95_admission_error_ms: Option<i64>,
    /// Kendall's τ-b of the admission order.
    pub kendall_tau: Option<f64>,
    /// Preemptions.
    pub preemptions: Preemptions,
}

/// GPU-seconds of a department.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DepartmentHours {
    /// The namespace.
    pub department: String,
    /// Recorded GPU-seconds.
    pub recorded_gpu_seconds: u64,
    /// Simulated GPU-seconds.
    pub simulated_gpu_seconds: u64,
}

/// The fidelity figures of a replay.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Fidelity {
    /// What was recorded: `history` (a `history:` source: the recorded admissions,
    /// evictions and ends) or `trace` (a trace that records waits: the recorded start).
    pub source: String,
    /// Per workload, by key.
    pub workloads: Vec<WorkloadFidelity>,
    /// Per (class, queue).
    pub groups: Vec<GroupFidelity>,
    /// Over all workloads.
    pub all: GroupFidelity,
    /// Per department.
    pub departments: Vec<DepartmentHours>,
    /// The differences the model can explain, by workload, then code.
    pub notes: Vec<FidelityNote>,
}

/// A difference between record and replay whose cause the model knows.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FidelityNote {
    /// The workload's key.
    pub workload: String,
    /// `eviction-not-modelled` (a recorded eviction of a reason the replay cannot produce),
    /// `not-replayed` (recorded, absent from the replay), `pending-recorded` (never admitted
    /// when recorded, admitted in the replay), `running-recorded` (still running when recorded,
    /// finished in the replay).
    pub code: String,
    /// When, ms since start, when known.
    pub at_ms: Option<i64>,
    /// What happened and what would replay it (a timeline event, when one would).
    pub message: String,
}

/// Compares recorded histories with a replay's outcomes (`start_ms`: the replay's start,
/// unix ms; `until_ms`: its end, ms since start, which bounds runs still going).
///
/// # Complexity
/// O(n log n) in the workloads.
pub fn fidelity(
    recorded: &[Recorded],
    simulated: &[Simulated],
    start_ms: i64,
    until_ms: Option<i64>,
) -> Fidelity {
    let sims: BTreeMap<&str, &Simulated> = simulated.iter().map(|s| (s.key.as_str(), s)).collect();
    let rel = |t: i64| t.saturating_sub(start_ms);
    let mut rows: Vec<WorkloadFidelity> = Vec::with_capacity(recorded.len());
    // (recorded tta, simulated tta) pairs per row, for the admission order
    let mut admissions: Vec<Option<(i64, i64)>> = Vec::with_capacity(recorded.len());
    let mut departments: BTreeMap<&str, (u128, u128)> = BTreeMap::new();
    for r in recorded {
        let s = sims.get(r.key.as_str()).copied();
        let created = rel(r.created_ms);
        let rec_adm = r.first_admitted_ms.map(rel);
        let sim_adm = s.and_then(Simulated::first_admitted_ms);
        let pair = rec_adm.zip(sim_adm);
        admissions.push(pair);
        let rec_pre: u32 = r
            .evictions
            .iter()
            .filter(|e| e.reason == "Preempted")
            .map(|e| e.count)
            .sum();
        let gpus = u128::from(r.gpu_milli);
        let d = departments.entry(r.namespace.as_str()).or_default();
        d.0 += gpus * u128::from(r.past_run_ms.unsigned_abs());
        if let Some(a) = r.admitted_ms.map(rel) {
            let end = r.end.as_ref().map(|e| rel(e.at_ms)).or(until_ms);
            if let Some(e) = end.filter(|e| *e > a) {
                d.0 += gpus * (e - a).unsigned_abs() as u128;
            }
        }
        if let Some(s) = s {
            for run in &s.runs {
                let end = until_ms.map_or(run.end_ms, |u| run.end_ms.min(u));
                if end > run.admitted_ms {
                    d.1 += gpus * (end - run.admitted_ms).unsigned_abs() as u128;
                }
            }
        }
        rows.push(WorkloadFidelity {
            key: r.key.clone(),
            class: r.class.clone(),
            queue: format!("{}/{}", r.namespace, r.queue),
            created_ms: created,
            recorded_admitted_ms: rec_adm,
            simulated_admitted_ms: sim_adm,
            recorded_evictions: r.eviction_count(),
            recorded_preemptions: rec_pre,
            simulated_preemptions: s.map_or(0, Simulated::preemptions),
            recorded_end_ms: r.end.as_ref().map(|e| rel(e.at_ms)),
            simulated_end_ms: s.and_then(|s| s.finished_ms),
            admission_error_ms: pair.map(|(a, b)| (b - a).abs()),
            simulated: s.is_some(),
        });
    }
    let mut by_group: BTreeMap<(&str, &str), Vec<usize>> = BTreeMap::new();
    for (i, w) in rows.iter().enumerate() {
        by_group
            .entry((w.class.as_str(), w.queue.as_str()))
            .or_default()
            .push(i);
    }
    let groups = by_group
        .iter()
        .map(|((c, q), idx)| group(c, q, idx, &rows, &admissions))
        .collect();
    let all_idx: Vec<usize> = (0..rows.len()).collect();
    let all = group("", "", &all_idx, &rows, &admissions);
    let departments = departments
        .into_iter()
        .map(|(d, (rec, sim))| DepartmentHours {
            department: d.to_owned(),
            recorded_gpu_seconds: gpu_seconds(rec),
            simulated_gpu_seconds: gpu_seconds(sim),
        })
        .collect();
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by(|a, b| rows[*a].key.cmp(&rows[*b].key).then(a.cmp(b)));
    let workloads = order.into_iter().map(|i| rows[i].clone()).collect();
    Fidelity {
        source: "history".to_owned(),
        workloads,
        groups,
        all,
        departments,
        notes: explain(recorded, &sims, start_ms),
    }
}

/// What a timeline event or the model says about a recorded eviction of `reason`.
fn eviction_remedy(reason: &str) -> &'static str {
    match reason {
        "NodeFailures" => "a node failure; a timeline event taking the node out would replay it",
        "PodsReadyTimeout" => {
            "its pods were not ready in time (waitForPodsReady), which the replay does not model"
        }
        "InactiveWorkload" | "Deactivated" => {
            "deactivated by hand (spec.active: false); a timeline event deleting or deactivating it would replay it"
        }
        "ClusterQueueStopped" | "LocalQueueStopped" => {
            "its queue was stopped; a timeline event changing the queue's stopPolicy would replay it"
        }
        "AdmissionCheck" => "an admission check rejected it, which the replay does not model",
        _ => "a cause the replay does not model; a timeline event at that time may replay it",
    }
}

/// The differences the model can explain (module docs of [`FidelityNote`]).
fn explain(
    recorded: &[Recorded],
    sims: &BTreeMap<&str, &Simulated>,
    start_ms: i64,
) -> Vec<FidelityNote> {
    let rel = |t: i64| t.saturating_sub(start_ms);
    let mut notes = Vec::new();
    for r in recorded {
        let s = sims.get(r.key.as_str()).copied();
        if s.is_none() {
            notes.push(FidelityNote {
                workload: r.key.clone(),
                code: "not-replayed".to_owned(),
                at_ms: Some(rel(r.created_ms)),
                message: format!("recorded ({} {}) but not in the replay", r.kind, r.object),
            });
            continue;
        }
        for e in r.evictions.iter().filter(|e| e.reason != "Preempted") {
            let cause = if e.cause.is_empty() {
                String::new()
            } else {
                format!(" ({})", e.cause)
            };
            let times = if e.count == 1 {
                "once".to_owned()
            } else {
                format!("{} times", e.count)
            };
            notes.push(FidelityNote {
                workload: r.key.clone(),
                code: "eviction-not-modelled".to_owned(),
                at_ms: e.at_ms.map(rel),
                message: format!(
                    "evicted {times} for {}{cause}: {}",
                    e.reason,
                    eviction_remedy(&e.reason)
                ),
            });
        }
        let Some(s) = s else { continue };
        if r.admitted_ms.is_none()
            && r.end.is_none()
            && r.evictions.is_empty()
            && let Some(a) = s.first_admitted_ms()
        {
            notes.push(FidelityNote {
                workload: r.key.clone(),
                code: "pending-recorded".to_owned(),
                at_ms: Some(a),
                message: "pending when recorded, admitted in the replay: a quota lowered or a queue stopped during the month would explain it; timeline events replay such changes".to_owned(),
            });
        }
        if r.admitted_ms.is_some()
            && r.end.is_none()
            && let Some(f) = s.finished_ms
        {
            notes.push(FidelityNote {
                workload: r.key.clone(),
                code: "running-recorded".to_owned(),
                at_ms: Some(f),
                message: "still running when recorded, finished in the replay: its runtime is unknown, so it runs until the end of the replay".to_owned(),
            });
        }
    }
    notes.sort_by(|a, b| (&a.workload, &a.code, a.at_ms).cmp(&(&b.workload, &b.code, b.at_ms)));
    notes
}

/// The fidelity section of a run, when its workloads were recorded: the `history:`
/// sources' records, else the instances whose trace recorded a wait (their recorded
/// admission is arrival + wait, their runtime the trace's); `None` otherwise.
///
/// # Complexity
/// O(n log n) in the workloads.
pub fn of_run(
    sc: &crate::scenario::Scenario,
    outcome: &crate::engine::Outcome,
) -> Option<Fidelity> {
    let start_ms = i64::try_from(sc.start.unix_nanos().div_euclid(1_000_000)).ok()?;
    let simulated: Vec<Simulated> = outcome
        .workloads
        .iter()
        .map(Simulated::from_outcome)
        .collect();
    if !sc.recorded.is_empty() {
        return Some(fidelity(
            &sc.recorded,
            &simulated,
            start_ms,
            Some(outcome.end_ms),
        ));
    }
    let recorded: Vec<Recorded> = sc
        .instances
        .values()
        .filter_map(|i| {
            let wait = i.recorded_wait_ms?;
            let w = sc.model.workloads.get(&i.key);
            let (ns, name) = i.key.split_once('/').unwrap_or(("default", &i.key));
            let admitted = start_ms.saturating_add(i.created_ms).saturating_add(wait);
            Some(Recorded {
                key: i.key.clone(),
                kind: "trace".to_owned(),
                object: name.to_owned(),
                namespace: ns.to_owned(),
                queue: w
                    .and_then(|w| w.spec.queue_name.clone())
                    .unwrap_or_default(),
                class: i.class.clone(),
                gpu_milli: w.map_or(0, workload_gpu_milli),
                created_ms: start_ms.saturating_add(i.created_ms),
                first_admitted_ms: Some(admitted),
                admitted_ms: Some(admitted),
                ready_ms: Some(admitted),
                evictions: Vec::new(),
                requeues: 0,
                end: i.runtime_ms.map(|rt| super::End {
                    at_ms: admitted.saturating_add(rt),
                    reason: "Succeeded".to_owned(),
                }),
                runtime_ms: i.runtime_ms,
                past_run_ms: 0,
            })
        })
        .collect();
    if recorded.is_empty() {
        return None;
    }
    let mut f = fidelity(&recorded, &simulated, start_ms, Some(outcome.end_ms));
    f.source = "trace".to_owned();
    Some(f)
}

/// The fidelity section of a KAI run, when its workloads were recorded (a `history:`
/// source's PodGroups, or trace jobs whose wait the trace recorded: source `trace` when
/// every record is one): the records against the run's jobs, as [`of_run`] compares a
/// Kueue run; `None` otherwise.
///
/// # Complexity
/// O(n log n) in the jobs.
pub fn of_kai_run(
    sc: &crate::kai::scenario::KaiScenario,
    outcome: &crate::kai::report::KaiOutcome,
) -> Option<Fidelity> {
    if sc.recorded.is_empty() {
        return None;
    }
    let start_ms = i64::try_from(sc.start.unix_nanos().div_euclid(1_000_000)).ok()?;
    let simulated: Vec<Simulated> = outcome.jobs.iter().map(Simulated::from_kai_job).collect();
    let mut f = fidelity(&sc.recorded, &simulated, start_ms, Some(outcome.end_ms));
    if sc.recorded.iter().all(|r| r.kind == "trace") {
        f.source = "trace".to_owned();
    }
    Some(f)
}

/// GPUs (`nvidia.com/gpu`) of a Workload's pods, thousandths.
fn workload_gpu_milli(w: &gpuquota_model::kueue::Workload) -> u64 {
    let mut total = 0u64;
    for ps in &w.spec.pod_sets {
        let per = ps
            .template
            .spec
            .effective_requests()
            .and_then(|r| r.get("nvidia.com/gpu").and_then(|q| q.milli_value()))
            .and_then(|m| u64::try_from(m).ok())
            .unwrap_or(0);
        let count = u64::try_from(ps.count).unwrap_or(0);
        total = total.saturating_add(per.saturating_mul(count));
    }
    total
}

/// The most workloads the table lists by error of time to admission, and the most notes it
/// prints (the JSON has them all).
const TABLE_ROWS: usize = 10;

/// GPU-seconds as GPU-hours with two decimals (rounded down).
fn hours(s: u64) -> String {
    format!("{}.{:02}", s / 3600, (s % 3600) * 100 / 3600)
}

fn opt_ms(v: Option<i64>) -> String {
    v.map_or_else(|| "-".to_owned(), crate::report::human_ms)
}

/// The table's fidelity section: a sentence, then per group (all first), per department,
/// the workloads of the largest errors and the notes (at most [`TABLE_ROWS`] of each).
pub(crate) fn table_section(out: &mut String, f: &Fidelity, width: gpuquota_model::text::Width) {
    use gpuquota_model::text::Table;
    use std::fmt::Write as _;
    let what = if f.source == "trace" {
        "the trace's recorded waits"
    } else {
        "the recorded history"
    };
    let _ = writeln!(
        out,
        "\nFidelity: this run against {what}; {} workloads, {} with a time to admission known on both sides",
        f.all.workloads, f.all.compared
    );
    let mut t = Table::new([
        "CLASS",
        "QUEUE",
        "WORKLOADS",
        "COMPARED",
        "MEAN-ERROR",
        "P95-ERROR",
        "KENDALL-TAU",
        "PREEMPTIONS-MATCHED",
        "MISSED",
        "EXTRA",
    ])
    .right(2..10);
    for g in std::iter::once(&f.all).chain(&f.groups) {
        let (class, queue) = if std::ptr::eq(g, &f.all) {
            ("(all)".to_owned(), "-".to_owned())
        } else {
            (
                if g.class.is_empty() {
                    "(none)"
                } else {
                    &g.class
                }
                .to_owned(),
                g.queue.clone(),
            )
        };
        t.row([
            class,
            queue,
            g.workloads.to_string(),
            g.compared.to_string(),
            opt_ms(g.mean_admission_error_ms),
            opt_ms(g.p95_admission_error_ms),
            g.kendall_tau
                .map_or_else(|| "-".to_owned(), |k| format!("{k:.3}")),
            g.preemptions.matched.to_string(),
            g.preemptions.missed.to_string(),
            g.preemptions.extra.to_string(),
        ]);
    }
    out.push_str(&t.render(width));
    let mut d = Table::new(["DEPARTMENT", "RECORDED-GPU-H", "SIMULATED-GPU-H"]).right(1..3);
    for h in &f.departments {
        d.row([
            h.department.clone(),
            hours(h.recorded_gpu_seconds),
            hours(h.simulated_gpu_seconds),
        ]);
    }
    let _ = writeln!(out);
    out.push_str(&d.render(width));
    let mut worst: Vec<&WorkloadFidelity> = f
        .workloads
        .iter()
        .filter(|w| w.admission_error_ms.unwrap_or(0) > 0)
        .collect();
    worst.sort_by(|a, b| {
        b.admission_error_ms
            .cmp(&a.admission_error_ms)
            .then_with(|| a.key.cmp(&b.key))
    });
    if !worst.is_empty() {
        let _ = writeln!(
            out,
            "\nLargest errors of time to admission ({} of {}):",
            worst.len().min(TABLE_ROWS),
            worst.len()
        );
        let mut w = Table::new([
            "WORKLOAD",
            "CREATED",
            "RECORDED-ADMIT",
            "SIMULATED-ADMIT",
            "ERROR",
        ])
        .right(1..5);
        for r in worst.iter().take(TABLE_ROWS) {
            w.row([
                r.key.clone(),
                crate::report::human_ms(r.created_ms),
                opt_ms(r.recorded_admitted_ms),
                opt_ms(r.simulated_admitted_ms),
                opt_ms(r.admission_error_ms),
            ]);
        }
        out.push_str(&w.render(width));
    }
    if !f.notes.is_empty() {
        let _ = writeln!(
            out,
            "\nWhat the model knows about the differences ({} of {}):",
            f.notes.len().min(TABLE_ROWS),
            f.notes.len()
        );
        for n in f.notes.iter().take(TABLE_ROWS) {
            let at = n.at_ms.map_or_else(String::new, |t| {
                format!(" at {}", crate::report::human_ms(t))
            });
            let _ = writeln!(out, "- {}{at}: {}", n.workload, n.message);
        }
    }
}

/// GPU-milli × ms as whole GPU-seconds (rounded down, saturating).
fn gpu_seconds(milli_ms: u128) -> u64 {
    u64::try_from(milli_ms / 1_000_000).unwrap_or(u64::MAX)
}

fn group(
    class: &str,
    queue: &str,
    idx: &[usize],
    rows: &[WorkloadFidelity],
    admissions: &[Option<(i64, i64)>],
) -> GroupFidelity {
    let mut errors: Vec<i64> = idx
        .iter()
        .filter_map(|i| rows[*i].admission_error_ms)
        .collect();
    errors.sort_unstable();
    let n = errors.len();
    let mean = (n > 0).then(|| {
        let sum: i128 = errors.iter().map(|e| i128::from(*e)).sum();
        let n = n as i128;
        i64::try_from((2 * sum + n) / (2 * n)).unwrap_or(i64::MAX)
    });
    let p95 = (n > 0).then(|| errors[(95 * n).div_ceil(100) - 1]);
    // the order compared is that of the first admissions (recorded, simulated)
    let pairs: Vec<(i64, i64)> = idx.iter().filter_map(|i| admissions[*i]).collect();
    let mut preemptions = Preemptions::default();
    for i in idx {
        let (r, s) = (
            rows[*i].recorded_preemptions,
            rows[*i].simulated_preemptions,
        );
        preemptions.matched += r.min(s);
        preemptions.missed += r.saturating_sub(s);
        preemptions.extra += s.saturating_sub(r);
    }
    GroupFidelity {
        class: class.to_owned(),
        queue: queue.to_owned(),
        workloads: u32::try_from(idx.len()).unwrap_or(u32::MAX),
        compared: u32::try_from(n).unwrap_or(u32::MAX),
        mean_admission_error_ms: mean,
        p95_admission_error_ms: p95,
        kendall_tau: kendall_tau_b(&pairs),
        preemptions,
    }
}

/// Kendall's τ-b of paired observations (Knight's O(n log n) algorithm); `None` with fewer
/// than two pairs or when either side ties every pair.
pub fn kendall_tau_b(pairs: &[(i64, i64)]) -> Option<f64> {
    let n = pairs.len() as u128;
    if n < 2 {
        return None;
    }
    let n0 = n * (n - 1) / 2;
    let mut v: Vec<(i64, i64)> = pairs.to_vec();
    v.sort_unstable();
    // pairs tied in x, and tied in both
    let (mut n1, mut n3) = (0u128, 0u128);
    let tied = |run: u128| run * run.saturating_sub(1) / 2;
    let (mut run_x, mut run_xy) = (1u128, 1u128);
    for i in 1..v.len() {
        if v[i].0 == v[i - 1].0 {
            run_x += 1;
            if v[i].1 == v[i - 1].1 {
                run_xy += 1;
            } else {
                n3 += tied(run_xy);
                run_xy = 1;
            }
        } else {
            n1 += tied(run_x);
            n3 += tied(run_xy);
            run_x = 1;
            run_xy = 1;
        }
    }
    n1 += tied(run_x);
    n3 += tied(run_xy);
    // exchanges a stable merge sort by y needs: the discordant pairs
    let mut ys: Vec<i64> = v.iter().map(|p| p.1).collect();
    let swaps = merge_count(&mut ys);
    let mut n2 = 0u128;
    let mut run_y = 1u128;
    for i in 1..ys.len() {
        if ys[i] == ys[i - 1] {
            run_y += 1;
        } else {
            n2 += tied(run_y);
            run_y = 1;
        }
    }
    n2 += tied(run_y);
    let denom_x = n0 - n1;
    let denom_y = n0 - n2;
    if denom_x == 0 || denom_y == 0 {
        return None;
    }
    // concordant − discordant = n0 − n1 − n2 + n3 − 2·swaps
    let num = n0 as f64 - n1 as f64 - n2 as f64 + n3 as f64 - 2.0 * swaps as f64;
    Some(num / ((denom_x as f64) * (denom_y as f64)).sqrt())
}

/// Sorts `v` (stable merge sort) and returns the exchanges: the pairs `i < j` with
/// `v[i] > v[j]`.
fn merge_count(v: &mut [i64]) -> u128 {
    let n = v.len();
    if n < 2 {
        return 0;
    }
    let mid = n / 2;
    let mut swaps = merge_count(&mut v[..mid]) + merge_count(&mut v[mid..]);
    let mut out = Vec::with_capacity(n);
    let (mut i, mut j) = (0, mid);
    while i < mid && j < n {
        if v[j] < v[i] {
            swaps += (mid - i) as u128;
            out.push(v[j]);
            j += 1;
        } else {
            out.push(v[i]);
            i += 1;
        }
    }
    out.extend_from_slice(&v[i..mid]);
    out.extend_from_slice(&v[j..n]);
    v.copy_from_slice(&out);
    swaps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{Eviction, load};
    use proptest::prelude::*;

    /// 2026-11-01T00:00:00Z, unix ms.
    const T0: i64 = 1_793_491_200_000;
    const SIX_HOURS: i64 = 21_600_000;

    fn recorded() -> Vec<Recorded> {
        let dump = include_str!("../../tests/data/history/dump.yaml");
        load(&[("dump.yaml".to_owned(), dump.to_owned())])
            .unwrap()
            .records
    }

    #[test]
    fn a_replay_of_exactly_the_record_has_zero_error() {
        let rec = recorded();
        let sim: Vec<Simulated> = rec
            .iter()
            .map(|r| Simulated::from_recorded(r, T0, Some(SIX_HOURS)))
            .collect();
        let f = fidelity(&rec, &sim, T0, Some(SIX_HOURS));
        // train-a (10 s), prep-e (905 s) and the urgent job (1800 s) have a known first
        // admission; the preempted and the pending ones do not
        assert_eq!(f.all.compared, 3);
        assert_eq!(f.all.workloads, 6);
        assert_eq!(f.all.mean_admission_error_ms, Some(0));
        assert_eq!(f.all.p95_admission_error_ms, Some(0));
        assert_eq!(f.all.kendall_tau, Some(1.0));
        // sweep-b's reclamation and eval-c's preemption
        assert_eq!(
            f.all.preemptions,
            Preemptions {
                matched: 2,
                missed: 0,
                extra: 0
            }
        );
        // team-a: 4 GPUs × 3,600 s + 8 GPUs × (21,600 − 1,800) s still running;
        // team-b: 8 GPUs × 7,200 s + 2 GPUs × 1,800 s
        assert_eq!(
            f.departments,
            [
                DepartmentHours {
                    department: "team-a".into(),
                    recorded_gpu_seconds: 172_800,
                    simulated_gpu_seconds: 172_800
                },
                DepartmentHours {
                    department: "team-b".into(),
                    recorded_gpu_seconds: 61_200,
                    simulated_gpu_seconds: 61_200
                }
            ]
        );
        assert!(
            f.workloads
                .iter()
                .all(|w| w.admission_error_ms.unwrap_or(0) == 0
                    && w.recorded_end_ms == w.simulated_end_ms
                    && w.recorded_preemptions == w.simulated_preemptions)
        );
        let groups: Vec<(&str, &str, u32)> = f
            .groups
            .iter()
            .map(|g| (g.class.as_str(), g.queue.as_str(), g.workloads))
            .collect();
        assert_eq!(
            groups,
            [
                ("", "team-b/main", 2),
                ("high", "team-a/main", 1),
                ("low", "team-a/main", 2),
                ("low", "team-b/main", 1)
            ]
        );
    }

    fn rec(key: &str, admitted_s: i64, preempted: u32) -> Recorded {
        Recorded {
            key: key.into(),
            kind: "Workload".into(),
            object: key.into(),
            namespace: "ns".into(),
            queue: "q".into(),
            class: "c".into(),
            gpu_milli: 1000,
            created_ms: T0,
            first_admitted_ms: Some(T0 + admitted_s * 1000),
            admitted_ms: Some(T0 + admitted_s * 1000),
            ready_ms: None,
            evictions: (preempted > 0)
                .then(|| Eviction {
                    at_ms: None,
                    reason: "Preempted".into(),
                    cause: String::new(),
                    count: preempted,
                })
                .into_iter()
                .collect(),
            requeues: 0,
            end: None,
            runtime_ms: None,
            past_run_ms: 0,
        }
    }

    fn sim(key: &str, admitted_s: i64, preempted: bool) -> Simulated {
        let mut runs = Vec::new();
        if preempted {
            runs.push(SimRun {
                admitted_ms: admitted_s * 1000,
                end_ms: admitted_s * 1000 + 1000,
                preempted: Some("InClusterQueue".into()),
            });
        }
        runs.push(SimRun {
            admitted_ms: admitted_s * 1000 + i64::from(preempted) * 2000,
            end_ms: admitted_s * 1000 + 60_000,
            preempted: None,
        });
        Simulated {
            key: key.into(),
            runs,
            finished_ms: None,
        }
    }

    #[test]
    fn fidelity_errors_order_and_preemptions_by_hand() {
        let r = [rec("ns/a", 10, 0), rec("ns/b", 20, 1), rec("ns/c", 30, 0)];
        let s = [
            sim("ns/a", 10, false),
            sim("ns/b", 40, false),
            sim("ns/c", 25, true),
        ];
        let f = fidelity(&r, &s, T0, None);
        // errors 0, 20 s, 5 s: mean 25,000 / 3 = 8,333.3 → 8,333; p95 the 3rd of 3
        assert_eq!(f.all.mean_admission_error_ms, Some(8_333));
        assert_eq!(f.all.p95_admission_error_ms, Some(20_000));
        // (a,b) and (a,c) concordant, (b,c) discordant: (2 − 1) / 3
        assert!((f.all.kendall_tau.unwrap() - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(
            f.all.preemptions,
            Preemptions {
                matched: 0,
                missed: 1,
                extra: 1
            }
        );
        let b = &f.workloads[1];
        assert_eq!(
            (
                b.recorded_admitted_ms,
                b.simulated_admitted_ms,
                b.admission_error_ms
            ),
            (Some(20_000), Some(40_000), Some(20_000))
        );
        // recorded runs still going without an end bound count nothing; simulated, one GPU:
        // a 10→70 s, b 40→100 s, c 25→26 s (preempted) and 27→85 s: 60 + 60 + 1 + 58
        assert_eq!(f.departments[0].recorded_gpu_seconds, 0);
        assert_eq!(f.departments[0].simulated_gpu_seconds, 179);
        // a recorded workload the replay lacks is not compared
        let f = fidelity(&r, &s[..1], T0, None);
        assert_eq!((f.all.compared, f.all.kendall_tau), (1, None));
        assert!(!f.workloads[2].simulated);
    }

    #[test]
    fn fidelity_notes_explain_what_the_model_knows() {
        let mut evicted = rec("ns/a", 10, 0);
        evicted.evictions.push(Eviction {
            at_ms: Some(T0 + 60_000),
            reason: "NodeFailures".into(),
            cause: String::new(),
            count: 1,
        });
        let mut pending = rec("ns/b", 0, 0);
        pending.first_admitted_ms = None;
        pending.admitted_ms = None;
        let gone = rec("ns/c", 0, 0);
        let s = [sim("ns/a", 10, false), sim("ns/b", 30, false)];
        let f = fidelity(&[evicted, pending, gone], &s, T0, None);
        let notes: Vec<(&str, &str, Option<i64>)> = f
            .notes
            .iter()
            .map(|n| (n.workload.as_str(), n.code.as_str(), n.at_ms))
            .collect();
        assert_eq!(
            notes,
            [
                ("ns/a", "eviction-not-modelled", Some(60_000)),
                ("ns/b", "pending-recorded", Some(30_000)),
                ("ns/c", "not-replayed", Some(0)),
            ]
        );
        assert_eq!(
            f.notes[0].message,
            "evicted once for NodeFailures: a node failure; a timeline event taking the node out would replay it"
        );
        // the runs before the last count in the recorded GPU-seconds: 1 GPU × 90 s
        let mut past = rec("ns/a", 10, 0);
        past.past_run_ms = 90_000;
        let f = fidelity(&[past], &[], T0, Some(10_000));
        assert_eq!(f.departments[0].recorded_gpu_seconds, 90);
    }

    fn brute_tau(p: &[(i64, i64)]) -> Option<f64> {
        let (mut c, mut d, mut tx, mut ty, mut n0) = (0f64, 0f64, 0f64, 0f64, 0f64);
        for i in 0..p.len() {
            for j in i + 1..p.len() {
                n0 += 1.0;
                let a = (p[i].0 - p[j].0).signum();
                let b = (p[i].1 - p[j].1).signum();
                if a == 0 {
                    tx += 1.0;
                }
                if b == 0 {
                    ty += 1.0;
                }
                if a * b > 0 {
                    c += 1.0;
                } else if a * b < 0 {
                    d += 1.0;
                }
            }
        }
        let den = ((n0 - tx) * (n0 - ty)).sqrt();
        (p.len() >= 2 && n0 - tx > 0.0 && n0 - ty > 0.0).then(|| (c - d) / den)
    }

    proptest! {
        #[test]
        fn kendall_tau_b_agrees_with_counting_every_pair(
            p in proptest::collection::vec((0i64..6, 0i64..6), 0..40)
        ) {
            let fast = kendall_tau_b(&p);
            let slow = brute_tau(&p);
            prop_assert_eq!(fast.is_some(), slow.is_some());
            if let (Some(a), Some(b)) = (fast, slow) {
                prop_assert!((a - b).abs() < 1e-9, "{} vs {}", a, b);
            }
        }
    }

    #[test]
    fn kendall_tau_b_by_hand() {
        assert_eq!(kendall_tau_b(&[(1, 1), (2, 2), (3, 3)]), Some(1.0));
        assert_eq!(kendall_tau_b(&[(1, 3), (2, 2), (3, 1)]), Some(-1.0));
        assert_eq!(kendall_tau_b(&[(1, 1)]), None);
        assert_eq!(kendall_tau_b(&[(1, 1), (1, 2)]), None);
    }
}
