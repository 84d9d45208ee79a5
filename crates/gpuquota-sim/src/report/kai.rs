//! The KAI run's outcome and its renderings: JSON, the CSV of KAI's time-based-fairshare
//! simulator, and a table.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use gpuquota_model::Timestamp;
use gpuquota_model::diag::Diagnostic;
use gpuquota_rank::division::Resource;
use gpuquota_rank::ids::PerResource;
use gpuquota_rank::session::{Action, fmt_res};
use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

/// The engine name of a KAI report: always `kai`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum KaiEngine {
    /// KAI Scheduler's sessions (`gpuquota-rank`).
    Kai,
}

/// The JSON document of a KAI run (`spec.engine: kai`, or KAI's time-based-fairshare
/// simulator config): what `gpuquota sim --output json` prints (fields in this order;
/// `gpuquota schema sim` prints its JSON Schema).
///
/// Every `…Ms` is integer milliseconds since `start`; GPU amounts are KAI's units (devices,
/// fractions as decimals).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct KaiReport {
    /// `kai`.
    pub engine: KaiEngine,
    /// Virtual time 0 (RFC 3339).
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub start: Timestamp,
    /// The end, ms.
    pub end_ms: i64,
    /// The last completion, ms (0 without any).
    pub makespan_ms: i64,
    /// The session interval, ms.
    pub session_interval_ms: i64,
    /// Sessions simulated (points per queue series).
    pub sessions: u64,
    /// Every job (PodGroup), in key (`namespace/name`) order.
    pub workloads: Vec<KaiWorkloadOut>,
    /// Per class (`""` for jobs without one), in name order; admission is the first
    /// binding.
    pub classes: BTreeMap<String, crate::report::ClassOut>,
    /// Per queue, in the queue tree's input order.
    pub queues: IndexMap<String, KaiQueueOut>,
    /// Evicted runs per action (`reclaim`, `preempt`, `consolidation`, `stale`), in name
    /// order.
    pub evictions: BTreeMap<String, u64>,
    /// Evicted runs in all.
    pub preemptions: u64,
    /// Per budget, its rule and every period; only when the scenario has budgets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budgets: Option<Vec<crate::report::BudgetOut>>,
    /// The bill of the runs; only when the scenario has `spec.metering`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chargeback: Option<crate::report::Chargeback>,
    /// The run against the recorded history; only when the workloads were recorded (a
    /// `history:` source): the same section as a Kueue run's
    /// ([`crate::history::fidelity`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fidelity: Option<crate::history::fidelity::Fidelity>,
    /// What each event of `spec.timeline` did (the Kueue report's section: Queue changes,
    /// node events, the runs they ended, the schedulable devices before and after; a KAI
    /// Queue change takes effect at the next session, and `capacityBefore`/`capacityAfter`
    /// stay empty); only when the scenario has a timeline.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub timeline: Vec<crate::report::TimelineOut>,
    /// The input's and the engine's warnings, as printed on stderr.
    pub warnings: Vec<String>,
}

/// One job of a [`KaiReport`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct KaiWorkloadOut {
    /// `namespace/name` of the PodGroup.
    pub workload: String,
    /// Its leaf queue.
    pub queue: String,
    /// Its class (`""` without one).
    pub class: String,
    /// Arrival, ms.
    pub created_ms: i64,
    /// Its runs, in order.
    pub runs: Vec<KaiRunOut>,
    /// Completion, ms; `null` when it did not finish.
    pub finished_ms: Option<i64>,
    /// Present when pending at the end: upstream's reason and message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending: Option<crate::report::PendingOut>,
}

/// How a KAI run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum KaiRunEndOut {
    /// Its runtime elapsed.
    Finished,
    /// A session evicted it (with `action` and `by`).
    Evicted,
    /// Still running at the end.
    Cut,
}

/// One run of a job: from its pods' binding to their end.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct KaiRunOut {
    /// Start (session + bind latency), ms.
    pub start_ms: i64,
    /// End, ms.
    pub end_ms: i64,
    /// How it ended.
    pub end: KaiRunEndOut,
    /// Only when `Evicted`: the action (`reclaim`, `preempt`, `consolidation`, `stale` for
    /// stale gangs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<&'static str>,
    /// Only when a budget stopped the run (`action: budget`): `BudgetExhausted`; when a
    /// node of the timeline ended it (`action: node`): `NodeFailures` or
    /// `EvictionByEvictionAPI`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
    /// Only when `Evicted`: the job it made room for (`namespace/name`), `null` for stale
    /// gangs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<Option<String>>,
    /// `gpu` (always), `cpu` and `memory` (when not zero) of its running pods, as KAI
    /// prints them.
    pub usage: IndexMap<String, String>,
    /// Its nodes, by name.
    pub nodes: Vec<String>,
}

/// One queue's series, one point per session.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct KaiQueueOut {
    /// The parent queue, `null` for a top-level queue.
    pub parent: Option<String>,
    /// The mean of `allocated`, six decimals.
    pub mean_allocated_gpu: Option<f64>,
    /// The GPU fair share each session divided, six decimals.
    pub fair_share: Vec<Option<f64>>,
    /// GPUs allocated after each session, six decimals.
    pub allocated: Vec<Option<f64>>,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KaiRunEnd {
    /// Its runtime elapsed.
    Finished,
    /// A session evicted it.
    Evicted {
        /// The action.
        action: Action,
        /// The job it made room for (`None` for stale gangs).
        by: Option<String>,
    },
    /// Still running at the end.
    Cut,
    /// Ended by a policy outside KAI (a spent `stopRunning` budget): `by` names it
    /// (`Budget/<name>`).
    Stopped {
        /// Who ended it.
        by: String,
    },
    /// Its pods were lost with a node of the timeline (`nodes.down`, reason
    /// `NodeFailures`) or evicted at a drain's deadline (`EvictionByEvictionAPI`): `by` is
    /// `Node/<name>`.
    Lost {
        /// The reason (Kueue's and the Eviction API's spelling, as under the Kueue driver).
        reason: &'static str,
        /// The node (`Node/<name>`).
        by: String,
    },
}

impl KaiRunEnd {
    /// True for a run that ended before its work was done and whose job went back to
    /// pending (evicted, stopped or lost).
    pub fn is_eviction(&self) -> bool {
        matches!(
            self,
            KaiRunEnd::Evicted { .. } | KaiRunEnd::Stopped { .. } | KaiRunEnd::Lost { .. }
        )
    }
}

/// One run of a job: from its pods' binding to their end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KaiRun {
    /// Start, ms since start (session + bind latency).
    pub start_ms: i64,
    /// End, ms since start.
    pub end_ms: i64,
    /// How it ended.
    pub end: KaiRunEnd,
    /// GPU, CPU, memory of its running pods (nano-units: devices, millicores, bytes).
    pub usage: PerResource<i128>,
    /// Its nodes, by name.
    pub nodes: Vec<String>,
    /// Usage per node (nano-units), by node name.
    pub placement: Vec<(String, PerResource<i128>)>,
    /// GPU holdings per node, by node name: GPU devices outside MIG (nano-units; a fraction
    /// is a share of one device) and MIG instances per resource (`nvidia.com/mig-1g.24gb`).
    pub devices: Vec<NodeDevices>,
}

/// One node's GPU holdings in a run: node name, GPU devices outside MIG (nano-units), MIG
/// instances per resource name.
pub type NodeDevices = (String, i128, Vec<(String, i64)>);

/// One job (PodGroup) of the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KaiJob {
    /// `namespace/name`.
    pub key: String,
    /// The leaf queue.
    pub queue: String,
    /// Class.
    pub class: String,
    /// Arrival, ms.
    pub created_ms: i64,
    /// Runs in order.
    pub runs: Vec<KaiRun>,
    /// First start, ms.
    pub first_start_ms: Option<i64>,
    /// Completion, ms.
    pub finished_ms: Option<i64>,
    /// Upstream's reason and message when pending at the end.
    pub pending: Option<(String, String)>,
}

/// One queue's series, one point per session.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueSeries {
    /// Queue name.
    pub name: String,
    /// Parent queue.
    pub parent: Option<String>,
    /// GPU fair share the session divided.
    pub fair_share: Vec<f64>,
    /// GPUs allocated after the session.
    pub allocated: Vec<f64>,
}

/// Everything a KAI run produced.
#[derive(Debug, Clone)]
pub struct KaiOutcome {
    /// Scenario name.
    pub name: String,
    /// Virtual time 0.
    pub start: Timestamp,
    /// The end, ms.
    pub end_ms: i64,
    /// The last completion, ms.
    pub makespan_ms: i64,
    /// Session interval, ms.
    pub session_interval_ms: i64,
    /// Sessions (points per series).
    pub sessions: u64,
    /// Sessions that ran the KAI session (the others would have decided nothing).
    pub sessions_run: u64,
    /// Evicted runs.
    pub evictions: u64,
    /// Jobs in key order.
    pub jobs: Vec<KaiJob>,
    /// Series per queue (tree input order).
    pub queues: Vec<QueueSeries>,
    /// The simulator config's queue order (the CSV's), empty for a `Simulation`.
    pub queue_order: Vec<String>,
    /// Warnings.
    pub warnings: Vec<Diagnostic>,
    /// The `budgets` section of the JSON, when the scenario has budgets.
    pub budgets: Option<Vec<crate::report::BudgetOut>>,
    /// The `chargeback` section of the JSON, when the scenario has `spec.metering`.
    pub chargeback: Option<crate::report::Chargeback>,
    /// The `fidelity` section of the JSON, when the workloads were recorded.
    pub fidelity: Option<crate::history::fidelity::Fidelity>,
    /// What each event of `spec.timeline` did, in the order they applied; empty without a
    /// timeline.
    pub timeline: Vec<crate::engine::TimelineEffect>,
}

fn usage_out(u: &PerResource<i128>) -> IndexMap<String, String> {
    let mut m = IndexMap::new();
    for r in Resource::ALL {
        let v = u[r];
        if v != 0 || r == Resource::Gpu {
            m.insert(r.as_str().to_owned(), fmt_res(r, v));
        }
    }
    m
}

/// A float for JSON rounded to six decimals (the series are finite; NaN would be `null`).
fn num(x: f64) -> Option<f64> {
    let v = (x * 1e6).round() / 1e6;
    v.is_finite().then_some(v)
}

/// Per class: count, finished, evictions, times to admission, times to finish, waits from
/// an eviction to the readmission after it.
type ClassAcc = (u64, u64, u64, Vec<i64>, Vec<i64>, Vec<i64>);

fn nearest_rank(sorted: &[i64], p: usize) -> i64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (p * sorted.len()).div_ceil(100).max(1);
    sorted[rank - 1]
}

impl KaiOutcome {
    /// Queues in the CSV's order: the simulator config's, else the tree's.
    fn csv_queues(&self) -> Vec<usize> {
        if self.queue_order.is_empty() {
            return (0..self.queues.len()).collect();
        }
        self.queue_order
            .iter()
            .filter_map(|n| self.queues.iter().position(|q| &q.name == n))
            .collect()
    }

    /// The CSV KAI's time-based-fairshare simulator writes
    /// (`kai-scheduler/KAI-Scheduler: pkg/env-tests/timeaware/data.go`, `ToCSV`):
    /// `Time,QueueID,Allocation,FairShare`, one row per queue per session (cycle), `Time` the
    /// session's index, the numbers as Go's `%f` prints them (six decimals).
    ///
    /// # Complexity
    /// O(sessions × queues).
    pub fn to_csv(&self) -> String {
        let order = self.csv_queues();
        let mut out = String::with_capacity(32 + self.sessions as usize * order.len() * 40);
        out.push_str("Time,QueueID,Allocation,FairShare\n");
        for i in 0..self.sessions as usize {
            for &q in &order {
                let s = &self.queues[q];
                let _ = writeln!(
                    out,
                    "{i},{},{:.6},{:.6}",
                    s.name,
                    s.allocated.get(i).copied().unwrap_or(0.0),
                    s.fair_share.get(i).copied().unwrap_or(0.0)
                );
            }
        }
        out
    }

    /// The typed JSON report ([`KaiReport`]): what `gpuquota sim --output json` prints for
    /// a KAI scenario.
    ///
    /// # Complexity
    /// O(jobs × runs + sessions × queues).
    pub fn to_output(&self) -> KaiReport {
        let workloads =
            self.jobs
                .iter()
                .map(|j| KaiWorkloadOut {
                    workload: j.key.clone(),
                    queue: j.queue.clone(),
                    class: j.class.clone(),
                    created_ms: j.created_ms,
                    runs: j
                        .runs
                        .iter()
                        .map(|r| {
                            let (end, action, reason, by) = match &r.end {
                                KaiRunEnd::Finished => (KaiRunEndOut::Finished, None, None, None),
                                KaiRunEnd::Cut => (KaiRunEndOut::Cut, None, None, None),
                                KaiRunEnd::Evicted { action, by } => (
                                    KaiRunEndOut::Evicted,
                                    Some(action_str(*action)),
                                    None,
                                    Some(by.clone()),
                                ),
                                KaiRunEnd::Stopped { by } => (
                                    KaiRunEndOut::Evicted,
                                    Some(BUDGET_ACTION),
                                    Some(gpuquota_model::budget::BUDGET_EXHAUSTED),
                                    Some(Some(by.clone())),
                                ),
                                KaiRunEnd::Lost { reason, by } => (
                                    KaiRunEndOut::Evicted,
                                    Some(NODE_ACTION),
                                    Some(*reason),
                                    Some(Some(by.clone())),
                                ),
                            };
                            KaiRunOut {
                                start_ms: r.start_ms,
                                end_ms: r.end_ms,
                                end,
                                action,
                                reason,
                                by,
                                usage: usage_out(&r.usage),
                                nodes: r.nodes.clone(),
                            }
                        })
                        .collect(),
                    finished_ms: j.finished_ms,
                    pending: j.pending.as_ref().map(|(reason, message)| {
                        crate::report::PendingOut {
                            reason: reason.clone(),
                            message: message.clone(),
                        }
                    }),
                })
                .collect();
        let mut classes: BTreeMap<&str, ClassAcc> = BTreeMap::new();
        for j in &self.jobs {
            let c = classes.entry(j.class.as_str()).or_default();
            c.0 += 1;
            if j.finished_ms.is_some() {
                c.1 += 1;
            }
            c.2 += j.runs.iter().filter(|r| r.end.is_eviction()).count() as u64;
            if let Some(s) = j.first_start_ms {
                c.3.push(s - j.created_ms.max(0));
            }
            if let Some(f) = j.finished_ms {
                c.4.push(f - j.created_ms.max(0));
            }
            let spans: Vec<(i64, i64, bool)> = j
                .runs
                .iter()
                .map(|r| (r.start_ms, r.end_ms, r.end.is_eviction()))
                .collect();
            c.5.extend(crate::report::requeue_waits(&spans));
        }
        let classes = classes
            .into_iter()
            .map(|(name, acc)| {
                let (count, finished, evictions, mut adm, fin, mut requeue) = acc;
                adm.sort_unstable();
                requeue.sort_unstable();
                let mean = |v: &[i64]| {
                    if v.is_empty() {
                        0
                    } else {
                        v.iter().sum::<i64>() / v.len() as i64
                    }
                };
                (
                    name.to_owned(),
                    crate::report::ClassOut {
                        count,
                        finished,
                        evictions,
                        mean_time_to_admission_ms: mean(&adm),
                        p50_time_to_admission_ms: nearest_rank(&adm, 50),
                        p95_time_to_admission_ms: nearest_rank(&adm, 95),
                        mean_time_to_finish_ms: mean(&fin),
                        readmissions: requeue.len() as u64,
                        mean_requeue_wait_ms: mean(&requeue),
                        p95_requeue_wait_ms: nearest_rank(&requeue, 95),
                    },
                )
            })
            .collect();
        let queues = self
            .queues
            .iter()
            .map(|q| {
                let mean = if q.allocated.is_empty() {
                    0.0
                } else {
                    q.allocated.iter().sum::<f64>() / q.allocated.len() as f64
                };
                (
                    q.name.clone(),
                    KaiQueueOut {
                        parent: q.parent.clone(),
                        mean_allocated_gpu: num(mean),
                        fair_share: q.fair_share.iter().map(|&x| num(x)).collect(),
                        allocated: q.allocated.iter().map(|&x| num(x)).collect(),
                    },
                )
            })
            .collect();
        let mut by_action: BTreeMap<String, u64> = BTreeMap::new();
        for j in &self.jobs {
            for r in &j.runs {
                match r.end {
                    KaiRunEnd::Evicted { action, .. } => {
                        *by_action.entry(action_str(action).to_owned()).or_default() += 1;
                    }
                    KaiRunEnd::Stopped { .. } => {
                        *by_action.entry(BUDGET_ACTION.to_owned()).or_default() += 1;
                    }
                    KaiRunEnd::Lost { .. } => {
                        *by_action.entry(NODE_ACTION.to_owned()).or_default() += 1;
                    }
                    _ => {}
                }
            }
        }
        KaiReport {
            engine: KaiEngine::Kai,
            start: self.start,
            end_ms: self.end_ms,
            makespan_ms: self.makespan_ms,
            session_interval_ms: self.session_interval_ms,
            sessions: self.sessions,
            workloads,
            classes,
            queues,
            evictions: by_action,
            preemptions: self.evictions,
            budgets: self.budgets.clone(),
            chargeback: self.chargeback.clone(),
            fidelity: self.fidelity.clone(),
            timeline: crate::report::timeline_out(&self.timeline, |_: &[(u32, i64)]| {
                crate::report::UsageOut::new()
            }),
            warnings: self.warnings.iter().map(ToString::to_string).collect(),
        }
    }

    /// The JSON report as a [`serde_json::Value`] (for reading fields;
    /// [`KaiOutcome::to_json_string`] prints the contract's field order).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.to_output()).unwrap_or(Value::Null)
    }

    /// The JSON report, pretty printed, with a final newline.
    pub fn to_json_string(&self) -> String {
        let mut s = serde_json::to_string_pretty(&self.to_output()).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Per queue: mean and last allocation and fair share; then the evictions per action;
    /// with `spec.metering`, the bill (per department and card type, idle, total) and the
    /// lost work.
    pub fn to_table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{:<28} {:>10} {:>10} {:>10} {:>10}",
            "QUEUE", "MEAN GPU", "LAST GPU", "MEAN FS", "LAST FS"
        );
        let mean = |v: &[f64]| {
            if v.is_empty() {
                0.0
            } else {
                v.iter().sum::<f64>() / v.len() as f64
            }
        };
        for q in &self.queues {
            let _ = writeln!(
                out,
                "{:<28} {:>10.2} {:>10.2} {:>10.2} {:>10.2}",
                q.name,
                mean(&q.allocated),
                q.allocated.last().copied().unwrap_or(0.0),
                mean(&q.fair_share),
                q.fair_share.last().copied().unwrap_or(0.0)
            );
        }
        let mut by: BTreeMap<(String, &str), u64> = BTreeMap::new();
        for j in &self.jobs {
            for r in &j.runs {
                match r.end {
                    KaiRunEnd::Evicted { action, .. } => {
                        *by.entry((j.queue.clone(), action_str(action))).or_default() += 1;
                    }
                    KaiRunEnd::Stopped { .. } => {
                        *by.entry((j.queue.clone(), BUDGET_ACTION)).or_default() += 1;
                    }
                    KaiRunEnd::Lost { .. } => {
                        *by.entry((j.queue.clone(), NODE_ACTION)).or_default() += 1;
                    }
                    _ => {}
                }
            }
        }
        let finished = self.jobs.iter().filter(|j| j.finished_ms.is_some()).count();
        let _ = writeln!(
            out,
            "\n{} sessions of {} ms; {} of {} jobs finished.",
            self.sessions,
            self.session_interval_ms,
            finished,
            self.jobs.len()
        );
        for ((q, a), n) in by {
            let _ = writeln!(out, "{n} of {q}'s runs were evicted by {a}.");
        }
        let timeline = self.timeline_sentences();
        if !timeline.is_empty() {
            out.push('\n');
            for line in timeline {
                let _ = writeln!(out, "{line}");
            }
        }
        if let Some(c) = &self.chargeback {
            crate::report::bill_section(&mut out, c);
        }
        if let Some(f) = &self.fidelity {
            crate::history::fidelity::table_section(
                &mut out,
                f,
                gpuquota_model::text::Width::default(),
            );
        }
        out
    }
}

/// The `action` of a run a spent `stopRunning` budget ended.
pub const BUDGET_ACTION: &str = "budget";

/// The `action` of a run a node of the timeline ended (failed, or drained past its
/// deadline).
pub const NODE_ACTION: &str = "node";

impl KaiOutcome {
    /// One line per timeline event for the table (the Kueue table's sentences): when, what
    /// changed, and its effect.
    pub fn timeline_sentences(&self) -> Vec<String> {
        crate::report::timeline_lines(&self.timeline, self.start, |_: &[(u32, i64)]| {
            "none".to_owned()
        })
    }
}

/// The contract's spelling of an eviction action (`stale` for stale gangs).
pub fn action_str(a: Action) -> &'static str {
    match a {
        Action::StaleGang => "stale",
        other => other.as_str(),
    }
}
