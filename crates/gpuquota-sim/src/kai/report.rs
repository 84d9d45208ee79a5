//! The KAI run's outcome and its renderings: JSON, the CSV of KAI's time-based-fairshare
//! simulator, and a table.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use gpuquota_model::Timestamp;
use gpuquota_model::diag::Diagnostic;
use gpuquota_rank::division::Resource;
use gpuquota_rank::session::{Action, fmt_res};
use serde_json::{Value, json};

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
    pub usage: [i128; 3],
    /// Its nodes, by name.
    pub nodes: Vec<String>,
    /// Usage per node (nano-units), by node name.
    pub placement: Vec<(String, [i128; 3])>,
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
    /// Further sections of the JSON, in order, before `warnings` (`budgets`, `chargeback`).
    pub sections: Vec<(String, Value)>,
}

fn usage_json(u: &[i128; 3]) -> Value {
    let mut m = serde_json::Map::new();
    for r in Resource::ALL {
        let v = u[r.index()];
        if v != 0 || r == Resource::Gpu {
            m.insert(r.as_str().to_owned(), Value::String(fmt_res(r, v)));
        }
    }
    Value::Object(m)
}

/// A finite float for JSON (the series are finite; NaN would be `null`).
fn num(x: f64) -> Value {
    serde_json::Number::from_f64((x * 1e6).round() / 1e6).map_or(Value::Null, Value::Number)
}

/// Per class: count, finished, evictions, times to admission, times to finish.
type ClassAcc = (u64, u64, u64, Vec<i64>, Vec<i64>);

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

    /// The JSON report (documented in the crate docs, KAI mode).
    pub fn to_json(&self) -> Value {
        let workloads: Vec<Value> = self
            .jobs
            .iter()
            .map(|j| {
                let runs: Vec<Value> = j
                    .runs
                    .iter()
                    .map(|r| {
                        let mut o = serde_json::Map::new();
                        o.insert("startMs".into(), r.start_ms.into());
                        o.insert("endMs".into(), r.end_ms.into());
                        match &r.end {
                            KaiRunEnd::Finished => {
                                o.insert("end".into(), "Finished".into());
                            }
                            KaiRunEnd::Cut => {
                                o.insert("end".into(), "Cut".into());
                            }
                            KaiRunEnd::Evicted { action, by } => {
                                o.insert("end".into(), "Evicted".into());
                                o.insert("action".into(), action_str(*action).into());
                                o.insert("by".into(), by.clone().map_or(Value::Null, Value::from));
                            }
                            KaiRunEnd::Stopped { by } => {
                                o.insert("end".into(), "Evicted".into());
                                o.insert("action".into(), BUDGET_ACTION.into());
                                o.insert(
                                    "reason".into(),
                                    gpuquota_model::budget::BUDGET_EXHAUSTED.into(),
                                );
                                o.insert("by".into(), by.clone().into());
                            }
                        }
                        o.insert("usage".into(), usage_json(&r.usage));
                        o.insert("nodes".into(), json!(r.nodes));
                        Value::Object(o)
                    })
                    .collect();
                let mut o = serde_json::Map::new();
                o.insert("workload".into(), j.key.clone().into());
                o.insert("queue".into(), j.queue.clone().into());
                o.insert("class".into(), j.class.clone().into());
                o.insert("createdMs".into(), j.created_ms.into());
                o.insert("runs".into(), Value::Array(runs));
                o.insert(
                    "finishedMs".into(),
                    j.finished_ms.map_or(Value::Null, Value::from),
                );
                if let Some((reason, message)) = &j.pending {
                    o.insert(
                        "pending".into(),
                        json!({"reason": reason, "message": message}),
                    );
                }
                Value::Object(o)
            })
            .collect();
        let mut classes: BTreeMap<&str, ClassAcc> = BTreeMap::new();
        for j in &self.jobs {
            let c = classes.entry(j.class.as_str()).or_default();
            c.0 += 1;
            if j.finished_ms.is_some() {
                c.1 += 1;
            }
            c.2 += j
                .runs
                .iter()
                .filter(|r| matches!(r.end, KaiRunEnd::Evicted { .. } | KaiRunEnd::Stopped { .. }))
                .count() as u64;
            if let Some(s) = j.first_start_ms {
                c.3.push(s - j.created_ms.max(0));
            }
            if let Some(f) = j.finished_ms {
                c.4.push(f - j.created_ms.max(0));
            }
        }
        let classes: serde_json::Map<String, Value> = classes
            .into_iter()
            .map(|(name, (count, finished, evictions, mut adm, fin))| {
                adm.sort_unstable();
                let mean = |v: &[i64]| {
                    if v.is_empty() {
                        0
                    } else {
                        v.iter().sum::<i64>() / v.len() as i64
                    }
                };
                (
                    name.to_owned(),
                    json!({
                        "count": count, "finished": finished, "evictions": evictions,
                        "meanTimeToAdmissionMs": mean(&adm),
                        "p50TimeToAdmissionMs": nearest_rank(&adm, 50),
                        "p95TimeToAdmissionMs": nearest_rank(&adm, 95),
                        "meanTimeToFinishMs": mean(&fin),
                    }),
                )
            })
            .collect();
        let queues: serde_json::Map<String, Value> = self
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
                    json!({
                        "parent": q.parent,
                        "meanAllocatedGpu": num(mean),
                        "fairShare": q.fair_share.iter().map(|&x| num(x)).collect::<Vec<_>>(),
                        "allocated": q.allocated.iter().map(|&x| num(x)).collect::<Vec<_>>(),
                    }),
                )
            })
            .collect();
        let mut by_action: BTreeMap<&str, u64> = BTreeMap::new();
        for j in &self.jobs {
            for r in &j.runs {
                match r.end {
                    KaiRunEnd::Evicted { action, .. } => {
                        *by_action.entry(action_str(action)).or_default() += 1;
                    }
                    KaiRunEnd::Stopped { .. } => *by_action.entry(BUDGET_ACTION).or_default() += 1,
                    _ => {}
                }
            }
        }
        let mut out = json!({
            "engine": "kai",
            "start": self.start.to_string(),
            "endMs": self.end_ms,
            "makespanMs": self.makespan_ms,
            "sessionIntervalMs": self.session_interval_ms,
            "sessions": self.sessions,
            "workloads": workloads,
            "classes": classes,
            "queues": queues,
            "evictions": by_action,
            "preemptions": self.evictions,
        });
        if let Value::Object(m) = &mut out {
            for (k, v) in &self.sections {
                m.insert(k.clone(), v.clone());
            }
            m.insert(
                "warnings".into(),
                json!(
                    self.warnings
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                ),
            );
        }
        out
    }

    /// The JSON report, pretty printed, with a final newline.
    pub fn to_json_string(&self) -> String {
        let mut s = serde_json::to_string_pretty(&self.to_json()).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Per queue: mean and last allocation and fair share; then the evictions per action.
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
        out
    }
}

/// The `action` of a run a spent `stopRunning` budget ended.
pub const BUDGET_ACTION: &str = "budget";

/// The contract's spelling of an eviction action (`stale` for stale gangs).
pub fn action_str(a: Action) -> &'static str {
    match a {
        Action::StaleGang => "stale",
        other => other.as_str(),
    }
}
