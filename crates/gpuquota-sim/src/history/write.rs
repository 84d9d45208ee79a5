//! A run written out as the Kueue Workloads a cluster would have recorded
//! (`gpuquota sim --output workloads`): one YAML `List` of `kueue.x-k8s.io/v1beta1`
//! Workloads, as `kubectl get workloads -A -o yaml` prints it, which a `history:` source
//! reads back.
//!
//! Per workload of the run, in key order:
//! - `metadata`: the scenario's name, namespace, labels and uid, `creationTimestamp` its
//!   arrival; `spec`: the scenario's Workload spec as imported (pod sets, queue, priority);
//! - `status.conditions`, each with its `lastTransitionTime` (RFC 3339, ms) — the state a
//!   cluster keeps at the end of the run, one condition per type:
//!   - `QuotaReserved` and `Admitted`: `True` (reasons `QuotaReserved`, `Admitted`) at the
//!     last run's reservation when it holds its quota at the end or finished; `False`
//!     (`Pending`, with upstream's pending message) when it is pending at the end;
//!   - `PodsReady`: `True` (`PodsReady`) when the last run's pods ran;
//!   - `Evicted` and `Preempted`: after a preemption, `True` (reasons `Preempted` and
//!     upstream's preemption reason, `InClusterQueue` …) at the eviction when it is still
//!     pending, else `False` (reason `QuotaReserved`, message `Previously: …`) at the
//!     readmission;
//!   - `Requeued`: `True` (reason `Preempted`) at the last eviction;
//!   - after an eviction by `waitForPodsReady`, `Evicted` has reason `PodsReadyTimeout`
//!     (message `Exceeded the PodsReady timeout ns/name`) or
//!     `DeactivatedDueToRequeuingLimitExceeded`, `Requeued` the same reason, and there is
//!     no `Preempted` condition; `status.requeueState.count` counts the timeouts since the
//!     last deactivation, and `schedulingStats.evictions` has those reasons (underlying
//!     cause `WaitForStart` for the timeout);
//!   - `Finished`: `True` (`Succeeded`) at completion;
//! - `status.admission` (ClusterQueue, per pod set its flavors, its count and, for a
//!   Workload of one pod set, the resource usage) while the last run holds its quota or
//!   after it finished;
//! - `status.schedulingStats.evictions`: per preemption reason (`reason: Preempted`,
//!   `underlyingCause` upstream's preemption reason) the count;
//! - `status.accumulatedPastExexcutionTimeSeconds`: the whole seconds each run before the
//!   last (every run, when it is pending at the end) held its quota, summed.
//!
//! Read back under the same scenario (`history: {files: [...]}`, the same cluster, `end`
//! and options), the replay is the run again and its fidelity exact: zero error of time to
//! admission, τ = 1, every preemption matched, the same GPU-seconds. Exact as long as no
//! pods waited for free devices after their reservation (the reader's runtime counts from
//! the admission), `spec.resume` is off (the runtime read is the last run's) and evicted
//! runs last whole seconds (Kueue's field is in seconds).

use serde_json::{Map, Value, json};

use crate::engine::{RunEnd, WorkloadOutcome};
use crate::report::Report;
use crate::scenario::{Scenario, at_ms};

/// The run's Workloads as one YAML `List` (module docs).
///
/// # Errors
/// The YAML writer's message.
///
/// # Complexity
/// O(workloads + runs).
pub fn workloads_yaml(sc: &Scenario, report: &Report) -> Result<String, String> {
    let items: Vec<Value> = report
        .outcome
        .workloads
        .iter()
        .map(|w| workload(sc, report, w))
        .collect();
    let list = json!({"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}});
    serde_saphyr::to_string(&list).map_err(|e| e.to_string())
}

/// The Workload condition reason and message of an eviction by `waitForPodsReady`
/// (kubernetes-sigs/kueue pkg/controller/core/workload_controller.go); `None` for a
/// preemption.
fn pods_ready_eviction(reason: &str, key: &str) -> Option<(&'static str, String)> {
    match reason {
        PODS_READY_TIMEOUT => Some((
            PODS_READY_TIMEOUT,
            format!("Exceeded the PodsReady timeout {key}"),
        )),
        DEACTIVATED => Some((
            DEACTIVATED,
            "The workload is deactivated due to exceeding the maximum number of re-queuing retries"
                .to_owned(),
        )),
        _ => None,
    }
}

/// `PodsReadyTimeout`.
const PODS_READY_TIMEOUT: &str = "PodsReadyTimeout";
/// `DeactivatedDueToRequeuingLimitExceeded`.
const DEACTIVATED: &str = "DeactivatedDueToRequeuingLimitExceeded";

fn cond(ty: &str, on: bool, reason: &str, message: &str, at: String) -> Value {
    json!({
        "type": ty,
        "status": if on { "True" } else { "False" },
        "reason": reason,
        "message": message,
        "lastTransitionTime": at,
    })
}

fn workload(sc: &Scenario, report: &Report, w: &WorkloadOutcome) -> Value {
    let t = |ms: i64| at_ms(sc.start, ms).to_string();
    let model = sc.model.workloads.get(&w.key);
    let (ns, name) = w.key.split_once('/').unwrap_or(("default", w.key.as_str()));
    let mut meta = Map::new();
    meta.insert("name".into(), Value::String(name.to_owned()));
    meta.insert("namespace".into(), Value::String(ns.to_owned()));
    meta.insert("creationTimestamp".into(), Value::String(t(w.created_ms)));
    if let Some(m) = model {
        if !m.metadata.labels.is_empty() {
            meta.insert(
                "labels".into(),
                serde_json::to_value(&m.metadata.labels).unwrap_or(Value::Null),
            );
        }
        if let Some(uid) = m.metadata.uid.as_ref().filter(|u| !u.is_empty()) {
            meta.insert("uid".into(), Value::String(uid.clone()));
        }
    }
    let spec = model
        .and_then(|m| serde_json::to_value(&m.spec).ok())
        .unwrap_or_else(|| json!({}));

    let holds = w
        .runs
        .last()
        .filter(|r| matches!(r.end, RunEnd::Finished | RunEnd::Cut));
    let preemptions: Vec<(&str, i64)> = w
        .runs
        .iter()
        .filter_map(|r| match &r.end {
            RunEnd::Preempted { reason, .. } => Some((reason.as_str(), r.end_ms)),
            _ => None,
        })
        .collect();
    let mut conditions = Vec::new();
    match holds {
        Some(r) => {
            conditions.push(cond(
                "QuotaReserved",
                true,
                "QuotaReserved",
                &format!("Quota reserved in ClusterQueue {}", w.queue),
                t(r.reserved_ms),
            ));
            conditions.push(cond(
                "Admitted",
                true,
                "Admitted",
                "The workload is admitted",
                t(r.reserved_ms),
            ));
            if r.end_ms > r.start_ms || matches!(r.end, RunEnd::Finished) {
                conditions.push(cond(
                    "PodsReady",
                    true,
                    "PodsReady",
                    "All pods reached readiness and the workload is running",
                    t(r.start_ms),
                ));
            }
        }
        None => {
            let message = w.pending.as_ref().map_or("", |p| p.1.as_str());
            let at = preemptions.last().map_or(w.created_ms, |p| p.1);
            conditions.push(cond("QuotaReserved", false, "Pending", message, t(at)));
        }
    }
    if let Some(&(reason, at)) = preemptions.last() {
        let evicted_now = holds.is_none();
        // the PodsReady timeout and the deactivation after it evict without a preemption
        let controller = pods_ready_eviction(reason, &w.key);
        let message = controller.as_ref().map_or_else(
            || format!("Preempted to accommodate a workload due to {reason}"),
            |c| c.1.clone(),
        );
        let evicted_reason = controller.as_ref().map_or("Preempted", |c| c.0);
        if evicted_now {
            conditions.push(cond("Evicted", true, evicted_reason, &message, t(at)));
            if controller.is_none() {
                conditions.push(cond("Preempted", true, reason, &message, t(at)));
            }
        } else {
            let back = holds.map_or(at, |r| r.reserved_ms);
            let prev = format!("Previously: {message}");
            conditions.push(cond("Evicted", false, "QuotaReserved", &prev, t(back)));
            if controller.is_none() {
                conditions.push(cond("Preempted", false, "QuotaReserved", &prev, t(back)));
            }
        }
        conditions.push(cond(
            "Requeued",
            true,
            evicted_reason,
            "The workload was requeued after its eviction",
            t(at),
        ));
    }
    if let Some(f) = w.finished_ms {
        conditions.push(cond(
            "Finished",
            true,
            "Succeeded",
            "Job finished successfully",
            t(f),
        ));
    }
    let mut status = Map::new();
    if let Some(r) = holds {
        let sets = model.map_or(&[][..], |m| m.spec.pod_sets.as_slice());
        let one = sets.len() == 1;
        let assignments: Vec<Value> = sets
            .iter()
            .map(|ps| {
                let mut flavors = Map::new();
                let mut usage = Map::new();
                for &(fr, a) in &r.usage {
                    let (f, res) = &report.outcome.frs[fr as usize];
                    if !f.is_empty() {
                        flavors.insert(res.as_str().to_owned(), Value::String(f.clone()));
                    }
                    if one {
                        usage.insert(
                            res.as_str().to_owned(),
                            Value::String(res.quantity_of(gpuquota_model::Amount(a)).to_string()),
                        );
                    }
                }
                let mut m = Map::new();
                m.insert("name".into(), Value::String(ps.name.clone()));
                m.insert("flavors".into(), Value::Object(flavors));
                if one {
                    m.insert("resourceUsage".into(), Value::Object(usage));
                }
                m.insert("count".into(), json!(ps.count));
                Value::Object(m)
            })
            .collect();
        status.insert(
            "admission".into(),
            json!({"clusterQueue": w.queue, "podSetAssignments": assignments}),
        );
    }
    status.insert("conditions".into(), Value::Array(conditions));
    if !preemptions.is_empty() {
        let mut by: std::collections::BTreeMap<&str, u64> = std::collections::BTreeMap::new();
        for (reason, _) in &preemptions {
            *by.entry(reason).or_insert(0) += 1;
        }
        let evictions: Vec<Value> = by
            .into_iter()
            .map(|(cause, n)| match pods_ready_eviction(cause, &w.key) {
                Some((r, _)) => {
                    let under = if r == PODS_READY_TIMEOUT {
                        "WaitForStart"
                    } else {
                        ""
                    };
                    json!({"reason": r, "underlyingCause": under, "count": n})
                }
                None => json!({"reason": "Preempted", "underlyingCause": cause, "count": n}),
            })
            .collect();
        status.insert("schedulingStats".into(), json!({"evictions": evictions}));
        // upstream's requeue count: the timeouts since the last deactivation (which clears it)
        let count = w
            .runs
            .iter()
            .rev()
            .take_while(|r| !matches!(&r.end, RunEnd::Preempted { reason, .. } if reason == DEACTIVATED))
            .filter(|r| matches!(&r.end, RunEnd::Preempted { reason, .. } if reason == PODS_READY_TIMEOUT))
            .count();
        if count > 0 {
            status.insert("requeueState".into(), json!({"count": count}));
        }
    }
    let past_runs = if holds.is_some() {
        &w.runs[..w.runs.len().saturating_sub(1)]
    } else {
        &w.runs[..]
    };
    if !past_runs.is_empty() {
        let secs: i64 = past_runs
            .iter()
            .map(|r| (r.end_ms - r.reserved_ms).max(0) / 1000)
            .sum();
        status.insert("accumulatedPastExexcutionTimeSeconds".into(), json!(secs));
    }
    json!({
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": meta,
        "spec": spec,
        "status": status,
    })
}
