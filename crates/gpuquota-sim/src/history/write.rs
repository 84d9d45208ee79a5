//! A run written out as the objects a cluster would have recorded (`gpuquota sim --output
//! workloads`): a Kueue or ResourceQuota run as one YAML `List` of `kueue.x-k8s.io/v1beta1`
//! Workloads, as `kubectl get workloads -A -o yaml` prints it ([`workloads_yaml`], below);
//! a KAI run as its PodGroups and Pods ([`kai_objects_yaml`]). A `history:` source reads
//! either back.
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

/// A KAI run written out as the objects a `kubectl get podgroups,pods -A -o yaml` of the
/// cluster would hold at its end (`gpuquota sim --output workloads` on a KAI scenario):
/// one YAML `List`, per job of the run in key order its `scheduling.run.ai/v2alpha2`
/// `PodGroup`, then its Pods in name order, which a `history:` source of a KAI scenario
/// reads back ([`super::dump::load_kai`]).
///
/// - **PodGroup**: `metadata` name, namespace, labels, `creationTimestamp` the arrival;
///   `spec` the scenario's (queue, `minMember`, `priorityClassName` …); the annotation
///   [`super::dump::KAI_EVICTIONS_ANNOTATION`] listing every run an eviction ended
///   (`action` `reclaim`, `preempt`, `consolidation`, `stale`, or `budget` for a spent
///   budget, its `startTime` and `endTime`), absent without one; `status.phase` (`Pending`,
///   `Running` or `Succeeded`) and the pods `pending`, `running` and `succeeded`.
/// - **Pods**: the scenario's metadata (the `pod-group-name` annotation names the group;
///   `creationTimestamp` the job's arrival) and spec; `spec.nodeName` a node of the last run
///   when it holds its devices or finished (the run's nodes filled in order by the pods' GPU
///   requests); `status.phase` `Pending`, `Running` (`startTime` the last run's binding,
///   each container `running` since then) or `Succeeded` (each container `terminated`,
///   exit code 0, `finishedAt` the completion).
/// - A pod without a PodGroup is written as a PodGroup of its own name (`minMember: 1`, the
///   queue of its `kai.scheduler/queue` label, its priority class) holding it.
///
/// Read back under the same scenario (`history: {files: [...]}`, the same cluster, `end`
/// and options), the replay is the run again and its fidelity exact: zero error of time to
/// admission, τ = 1, every eviction matched as a preemption, the same GPU-seconds, no
/// note. Exact for PodGroups with `spec.resume` off (the runtime read is the last run's),
/// without budgets that stop runs (a stopped run is recorded, not replayed) and without
/// repeat copies (`gpuquota.dev/repeat`: the copies are written as jobs of their own).
///
/// # Errors
/// The YAML writer's message.
///
/// # Complexity
/// O(jobs × pods + runs).
pub fn kai_objects_yaml(
    sc: &crate::kai::scenario::KaiScenario,
    out: &crate::kai::report::KaiOutcome,
) -> Result<String, String> {
    let mut by_group: std::collections::BTreeMap<String, Vec<&str>> =
        std::collections::BTreeMap::new();
    for (key, pod) in &sc.model.pods {
        let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
        let group = match pod
            .metadata
            .annotations
            .get(gpuquota_model::kai::POD_GROUP_ANNOTATION)
        {
            Some(g) => format!("{ns}/{g}"),
            None => key.clone(),
        };
        by_group.entry(group).or_default().push(key.as_str());
    }
    let mut items = Vec::new();
    for j in &out.jobs {
        let pods = by_group.get(&j.key).map_or(&[][..], Vec::as_slice);
        kai_job(sc, j, pods, &mut items);
    }
    let list = json!({"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}});
    serde_saphyr::to_string(&list).map_err(|e| e.to_string())
}

/// GPUs a pod requests, nano-units of a device.
fn pod_gpu_nanos(pod: &gpuquota_model::core::Pod) -> i128 {
    pod.spec
        .effective_requests()
        .and_then(|r| r.get("nvidia.com/gpu").and_then(|q| q.milli_value()))
        .map_or(0, |m| i128::from(m) * 1_000_000)
}

/// One job's PodGroup and Pods ([`kai_objects_yaml`]).
fn kai_job(
    sc: &crate::kai::scenario::KaiScenario,
    j: &crate::kai::report::KaiJob,
    pods: &[&str],
    items: &mut Vec<Value>,
) {
    use crate::kai::report::{BUDGET_ACTION, KaiRunEnd, action_str};
    let t = |ms: i64| at_ms(sc.start, ms).to_string();
    let (ns, name) = j.key.split_once('/').unwrap_or(("default", j.key.as_str()));
    let last = j.runs.last();
    let holds = last.filter(|r| matches!(r.end, KaiRunEnd::Finished | KaiRunEnd::Cut));
    let finished = j.finished_ms.filter(|_| holds.is_some());
    let evicted: Vec<Value> = j
        .runs
        .iter()
        .filter_map(|r| {
            let action = match &r.end {
                KaiRunEnd::Evicted { action, .. } => action_str(*action),
                KaiRunEnd::Stopped { .. } => BUDGET_ACTION,
                _ => return None,
            };
            Some(json!({"action": action, "startTime": t(r.start_ms), "endTime": t(r.end_ms)}))
        })
        .collect();
    let phase = match (holds, finished) {
        (Some(_), Some(_)) => "Succeeded",
        (Some(_), None) => "Running",
        _ => "Pending",
    };
    let model_pods: Vec<(&str, &gpuquota_model::core::Pod)> = pods
        .iter()
        .filter_map(|k| sc.model.pods.get(*k).map(|p| (*k, p)))
        .collect();
    let mut meta = Map::new();
    meta.insert("name".into(), Value::String(name.to_owned()));
    meta.insert("namespace".into(), Value::String(ns.to_owned()));
    meta.insert("creationTimestamp".into(), Value::String(t(j.created_ms)));
    let spec = match sc.model.pod_groups.get(&j.key) {
        Some(pg) => {
            if !pg.metadata.labels.is_empty() {
                meta.insert(
                    "labels".into(),
                    serde_json::to_value(&pg.metadata.labels).unwrap_or(Value::Null),
                );
            }
            serde_json::to_value(&pg.spec).unwrap_or_else(|_| json!({}))
        }
        None => {
            let first = model_pods.first().map(|(_, p)| *p);
            let queue = first
                .and_then(|p| p.metadata.labels.get(gpuquota_model::kai::QUEUE_LABEL))
                .cloned()
                .unwrap_or_default();
            let mut s = Map::new();
            s.insert("minMember".into(), json!(1));
            s.insert("queue".into(), Value::String(queue));
            if let Some(c) = first.and_then(|p| p.spec.priority_class_name.clone()) {
                s.insert("priorityClassName".into(), Value::String(c));
            }
            Value::Object(s)
        }
    };
    if !evicted.is_empty() {
        let text = serde_json::to_string(&evicted).unwrap_or_default();
        meta.insert(
            "annotations".into(),
            json!({ super::dump::KAI_EVICTIONS_ANNOTATION: text }),
        );
    }
    let n = model_pods.len();
    let count = |p: &str| if phase == p { n } else { 0 };
    items.push(json!({
        "apiVersion": "scheduling.run.ai/v2alpha2",
        "kind": "PodGroup",
        "metadata": meta,
        "spec": spec,
        "status": {
            "phase": phase,
            "pending": count("Pending"),
            "running": count("Running"),
            "succeeded": count("Succeeded"),
        },
    }));
    // the last run's nodes, with the GPUs each still has for the pods
    let mut free: Vec<(String, i128)> = holds.map_or_else(Vec::new, |r| {
        r.placement
            .iter()
            .map(|(node, u)| (node.clone(), u[gpuquota_rank::division::Resource::Gpu]))
            .collect()
    });
    for (key, pod) in model_pods {
        let pname = key.split_once('/').map_or(key, |(_, n)| n);
        let mut pm = Map::new();
        pm.insert("name".into(), Value::String(pname.to_owned()));
        pm.insert("namespace".into(), Value::String(ns.to_owned()));
        pm.insert("creationTimestamp".into(), Value::String(t(j.created_ms)));
        if !pod.metadata.labels.is_empty() {
            pm.insert(
                "labels".into(),
                serde_json::to_value(&pod.metadata.labels).unwrap_or(Value::Null),
            );
        }
        let mut ann = pod.metadata.annotations.clone();
        ann.insert(
            gpuquota_model::kai::POD_GROUP_ANNOTATION.to_owned(),
            name.to_owned(),
        );
        pm.insert(
            "annotations".into(),
            serde_json::to_value(&ann).unwrap_or(Value::Null),
        );
        let mut pspec = serde_json::to_value(&pod.spec).unwrap_or_else(|_| json!({}));
        let mut status = Map::new();
        status.insert("phase".into(), Value::String(phase.to_owned()));
        if let Some(r) = holds {
            let want = pod_gpu_nanos(pod);
            let node = free
                .iter()
                .position(|(_, g)| *g >= want)
                .or_else(|| (!free.is_empty()).then_some(0));
            if let Some(i) = node {
                free[i].1 -= want;
                if let Some(s) = pspec.as_object_mut() {
                    s.insert("nodeName".into(), Value::String(free[i].0.clone()));
                }
            }
            status.insert("startTime".into(), Value::String(t(r.start_ms)));
            let states: Vec<Value> = pod
                .spec
                .containers
                .iter()
                .map(|c| {
                    let state = match finished {
                        Some(f) => json!({"terminated": {
                            "exitCode": 0,
                            "reason": "Completed",
                            "startedAt": t(r.start_ms),
                            "finishedAt": t(f),
                        }}),
                        None => json!({"running": {"startedAt": t(r.start_ms)}}),
                    };
                    json!({"name": c.name, "state": state})
                })
                .collect();
            status.insert("containerStatuses".into(), Value::Array(states));
        }
        items.push(json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": pm,
            "spec": pspec,
            "status": status,
        }));
    }
}
