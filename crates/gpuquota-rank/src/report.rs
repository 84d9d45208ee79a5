//! The CLI's JSON contracts (issue 5) as typed reports, built from the engine's results, and
//! their table renderings.
//!
//! * [`FairshareReport`] (`kai fairshare`): `{"queues": {"<queue>": {"gpu"|"cpu"|"memory":
//!   {"deserved", "fairShare", "allocated", "requested", "limit"}}}}`, queues in input
//!   (name) order. GPU values are decimal strings in devices (`"32.55"`), CPU and memory
//!   Kubernetes quantity strings (`"500m"`, `"4Gi"`); `limit` is `null` when unlimited. An
//!   unlimited `deserved` prints as `"-1"`, upstream's own spelling: the Queue CRD's
//!   `quota: -1` and KAI's `queue_deserved_gpus` / `queue_quota_cpu_cores` /
//!   `queue_quota_memory_bytes` metrics all keep the sentinel `-1` (never scaled by the
//!   resource's unit); the queue's `fairShare` is still the number the division gave it
//!   (phase 1 grants it its whole request, capped by the divided total).
//! * [`ScheduleReport`] (`kai schedule`): `{"allocated": [{"podGroup", "queue", "pipelined",
//!   "pods": [{"pod", "node"}]}], "evicted": [{"podGroup", "queue", "action", "by"}],
//!   "pending": [{"podGroup", "queue", "reason", "message"}]}`; `node` is `null` at quota
//!   level, `by` is `null` for stale gangs.
//!
//! `gpuquota schema kai-fairshare` and `gpuquota schema kai-schedule` print their JSON Schema,
//! generated from these types (feature `schema`).
//!
//! Both serialise with serde in exactly this field order; [`FairshareReport::table`] and
//! [`ScheduleReport::table`] render the text the CLI prints for `--output table`.

use std::fmt::Write as _;

use gpuquota_model::text::{Table, Width};
use indexmap::IndexMap;

use crate::division::{DivisionError, DivisionOptions, Resource};
use crate::ids::{PerQueue, PerResource};
use crate::session::{SessionResult, fmt_res};
use crate::snapshot::{Cluster, TaskStatus};

/// How an unlimited (`-1`) deserved quota prints, in every resource: KAI's sentinel.
pub const UNLIMITED_DESERVED: &str = "-1";

/// Allocated amounts at session open (running tasks), propagated to every ancestor.
///
/// # Complexity
/// O(T · d) for T tasks at depth d.
pub fn allocated(c: &Cluster) -> PerQueue<PerResource<i128>> {
    let mut alloc = PerQueue::from_vec(vec![PerResource::ZERO; c.hierarchy.queues().len()]);
    for j in &c.jobs {
        let Some(q) = j.queue else {
            continue;
        };
        for t in &j.tasks {
            if t.status != TaskStatus::Running {
                continue;
            }
            let mut cur = Some(q);
            while let Some(x) = cur {
                alloc[x] = alloc[x].saturating_add(&t.req);
                cur = c.hierarchy.queue(x).parent;
            }
        }
    }
    alloc
}

/// An exact amount of one of KAI's resources in nano-units (10⁻⁹ GPU, 10⁻¹² core, 10⁻⁹
/// byte), written as the reports write it: GPUs as a decimal in devices (`"32.55"`), CPU and
/// memory as Kubernetes quantities (`"500m"`, `"4Gi"`). With `serde` it serializes as that
/// string.
///
/// ```
/// use gpuquota_rank::division::Resource;
/// use gpuquota_rank::report::ResourceAmount;
/// let g = ResourceAmount::new(Resource::Gpu, 32_550_000_000);
/// assert_eq!(g.to_string(), "32.55");
/// assert_eq!(g.as_f64(), 32.55);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ResourceAmount {
    resource: Resource,
    nano: i128,
}

impl ResourceAmount {
    /// `nano` nano-units of `resource`.
    pub const fn new(resource: Resource, nano: i128) -> ResourceAmount {
        ResourceAmount { resource, nano }
    }

    /// The resource.
    pub const fn resource(self) -> Resource {
        self.resource
    }

    /// The amount in the engine's nano-units.
    pub const fn nano(self) -> i128 {
        self.nano
    }

    /// The amount in the resource's unit (devices, cores, bytes) as a float, for plotting.
    pub fn as_f64(self) -> f64 {
        let per = match self.resource {
            Resource::Cpu => 1e12,
            Resource::Gpu | Resource::Memory => 1e9,
        };
        self.nano as f64 / per
    }
}

impl std::fmt::Display for ResourceAmount {
    /// GPUs as a decimal, CPU and memory as Kubernetes quantities.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&fmt_res(self.resource, self.nano))
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for ResourceAmount {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// An unlimited deserved quota (`None`) as [`UNLIMITED_DESERVED`].
#[cfg(feature = "serde")]
fn deserved_text<S: serde::Serializer>(
    v: &Option<ResourceAmount>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match v {
        Some(a) => s.collect_str(a),
        None => s.serialize_str(UNLIMITED_DESERVED),
    }
}

/// One queue's numbers for one resource, as contract strings.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ResourceShare {
    /// Deserved quota (`"-1"` when unlimited).
    #[cfg_attr(feature = "serde", serde(serialize_with = "deserved_text"))]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub deserved: Option<ResourceAmount>,
    /// Fair share.
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub fair_share: ResourceAmount,
    /// Allocated at session open.
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub allocated: ResourceAmount,
    /// Requested (allocated + pending).
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub requested: ResourceAmount,
    /// Limit, `None` (`null`) when unlimited.
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>"))]
    pub limit: Option<ResourceAmount>,
}

impl ResourceShare {
    /// The deserved quota as the report writes it (`"-1"` when unlimited).
    pub fn deserved_text(&self) -> String {
        self.deserved
            .map_or_else(|| UNLIMITED_DESERVED.to_owned(), |a| a.to_string())
    }
}

/// One queue's numbers per resource.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct QueueShares {
    /// GPU (devices).
    pub gpu: ResourceShare,
    /// CPU (Kubernetes quantity).
    pub cpu: ResourceShare,
    /// Memory (Kubernetes quantity).
    pub memory: ResourceShare,
}

impl QueueShares {
    /// The numbers of resource `r`.
    pub fn get(&self, r: Resource) -> &ResourceShare {
        match r {
            Resource::Gpu => &self.gpu,
            Resource::Cpu => &self.cpu,
            Resource::Memory => &self.memory,
        }
    }
}

/// The `kai fairshare` report.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FairshareReport {
    /// Queues in input (name) order.
    pub queues: IndexMap<String, QueueShares>,
}

/// The `kai fairshare` report of a cluster.
///
/// # Errors
/// [`DivisionError`] from the division.
///
/// # Complexity
/// The division's, plus O(Q + T · d).
pub(crate) fn fairshare_report(
    c: &Cluster,
    options: &DivisionOptions,
) -> Result<FairshareReport, DivisionError> {
    let d = c.hierarchy.divide(c.totals, options)?;
    let alloc = allocated(c);
    let mut queues = IndexMap::with_capacity(c.hierarchy.queues().len());
    for (i, q) in c.hierarchy.ids().zip(c.hierarchy.queues()) {
        let share = |r: Resource| {
            let ri = r.index();
            let p = &q.resources[ri];
            let amount = |v: i128| ResourceAmount::new(r, v);
            ResourceShare {
                deserved: p.deserved.map(amount),
                fair_share: amount(d.fair_share[i][r]),
                allocated: amount(alloc[i][r]),
                requested: amount(d.request[i][r]),
                limit: p.limit.map(amount),
            }
        };
        queues.insert(
            q.name.clone(),
            QueueShares {
                gpu: share(Resource::Gpu),
                cpu: share(Resource::Cpu),
                memory: share(Resource::Memory),
            },
        );
    }
    Ok(FairshareReport { queues })
}

fn dash(v: Option<&str>) -> &str {
    v.unwrap_or("-")
}

impl FairshareReport {
    /// The GPU table `kai fairshare --output table` prints: one line per queue, on the
    /// workspace's one table layout ([`gpuquota_model::text`]; nothing is cut).
    ///
    /// # Complexity
    /// O(Q).
    pub fn table(&self, width: Width) -> String {
        let mut t = Table::new([
            "QUEUE (GPU)",
            "DESERVED",
            "FAIRSHARE",
            "ALLOCATED",
            "REQUESTED",
            "LIMIT",
        ])
        .right(1..6);
        for (name, q) in &self.queues {
            let g = &q.gpu;
            t.row([
                name.clone(),
                g.deserved_text(),
                g.fair_share.to_string(),
                g.allocated.to_string(),
                g.requested.to_string(),
                g.limit.map_or_else(|| "-".to_owned(), |l| l.to_string()),
            ]);
        }
        t.render(width)
    }
}

/// A pod placed by the session.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PlacedPod {
    /// `ns/name`.
    pub pod: String,
    /// Node; `None` (`null`) at quota level.
    pub node: Option<String>,
}

/// A job that got pods placed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AllocatedJob {
    /// `ns/name` of the PodGroup.
    pub pod_group: String,
    /// Queue.
    pub queue: String,
    /// Placed onto resources still being freed.
    pub pipelined: bool,
    /// The pods and their nodes.
    pub pods: Vec<PlacedPod>,
}

/// An evicted job.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EvictedJob {
    /// `ns/name` of the PodGroup.
    pub pod_group: String,
    /// Queue.
    pub queue: String,
    /// `reclaim`, `preempt`, `consolidation` or `stalegang`.
    pub action: &'static str,
    /// The job the eviction made room for (`null` for stale gangs).
    pub by: Option<String>,
}

/// A job still pending.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PendingJob {
    /// `ns/name` of the PodGroup.
    pub pod_group: String,
    /// Queue as written.
    pub queue: String,
    /// Upstream's reason.
    pub reason: &'static str,
    /// A sentence with the numbers.
    pub message: String,
}

/// The `kai schedule` report.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ScheduleReport {
    /// Allocations in decision order.
    pub allocated: Vec<AllocatedJob>,
    /// Evictions in decision order.
    pub evicted: Vec<EvictedJob>,
    /// Pending jobs in PodGroup key order.
    pub pending: Vec<PendingJob>,
}

/// The `kai schedule` report of a session.
///
/// # Complexity
/// O(size of the result).
pub fn schedule_report(result: &SessionResult) -> ScheduleReport {
    ScheduleReport {
        allocated: result
            .allocated
            .iter()
            .map(|a| AllocatedJob {
                pod_group: a.pod_group.clone(),
                queue: a.queue.clone(),
                pipelined: a.pipelined,
                pods: a
                    .pods
                    .iter()
                    .map(|(pod, node)| PlacedPod {
                        pod: pod.clone(),
                        node: node.clone(),
                    })
                    .collect(),
            })
            .collect(),
        evicted: result
            .evicted
            .iter()
            .map(|e| EvictedJob {
                pod_group: e.pod_group.clone(),
                queue: e.queue.clone(),
                action: e.action.as_str(),
                by: e.by.clone(),
            })
            .collect(),
        pending: result
            .pending
            .iter()
            .map(|p| PendingJob {
                pod_group: p.pod_group.clone(),
                queue: p.queue.clone(),
                reason: p.reason.as_str(),
                message: p.message.clone(),
            })
            .collect(),
    }
}

impl ScheduleReport {
    /// The text `kai schedule --output table` prints: one line per allocation and eviction,
    /// two per pending job (reason, then the message), or `nothing to do`.
    ///
    /// # Complexity
    /// O(size of the report).
    pub fn table(&self) -> String {
        let mut out = String::new();
        for a in &self.allocated {
            let _ = writeln!(
                out,
                "allocate {}{} (queue {}): {} pods",
                a.pod_group,
                if a.pipelined { " [pipelined]" } else { "" },
                a.queue,
                a.pods.len()
            );
        }
        for e in &self.evicted {
            let _ = writeln!(
                out,
                "evict    {} (queue {}) by {}: {}",
                e.pod_group,
                e.queue,
                e.action,
                dash(e.by.as_deref())
            );
        }
        for p in &self.pending {
            let _ = writeln!(
                out,
                "pending  {} (queue {}): {}",
                p.pod_group, p.queue, p.reason
            );
            let _ = writeln!(out, "         {}", p.message);
        }
        if out.is_empty() {
            out.push_str("nothing to do\n");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    //! The typed reports serialise byte for byte like the `serde_json::Value` builders they
    //! replaced (kept here as the oracle).
    use super::*;
    use crate::session::{SessionOptions, run_session};
    use crate::snapshot::{BuildOptions, parse_total};
    use serde_json::{Value, json};

    #[test]
    fn resource_amounts_are_written_as_the_contract_writes_them() {
        let g = ResourceAmount::new(Resource::Gpu, 2_500_000_000);
        assert_eq!(g.to_string(), "2.5");
        assert_eq!(g.as_f64(), 2.5);
        // half a core is 5·10¹¹ pico-cores
        let c = ResourceAmount::new(Resource::Cpu, 500_000_000_000);
        assert_eq!(c.to_string(), "500m");
        assert_eq!(c.as_f64(), 0.5);
        let m = ResourceAmount::new(Resource::Memory, 4 * 1024 * 1024 * 1024 * 1_000_000_000);
        assert_eq!(m.to_string(), "4Gi");
        assert_eq!(serde_json::to_value(g).unwrap(), json!("2.5"));
        let share = ResourceShare {
            deserved: None,
            fair_share: g,
            allocated: g,
            requested: g,
            limit: None,
        };
        assert_eq!(share.deserved_text(), "-1");
        assert_eq!(
            serde_json::to_value(&share).unwrap(),
            json!({"deserved": "-1", "fairShare": "2.5", "allocated": "2.5", "requested": "2.5", "limit": null})
        );
    }

    fn res_value(r: Resource, v: Option<i128>) -> Value {
        v.map_or(Value::Null, |v| Value::String(fmt_res(r, v)))
    }

    /// The `kai fairshare` JSON value.
    ///
    /// # Errors
    /// [`DivisionError`] from the division.
    ///
    /// # Complexity
    /// The division's, plus O(Q + T · d).
    fn legacy_fairshare_json(
        c: &Cluster,
        options: &DivisionOptions,
    ) -> Result<Value, DivisionError> {
        let d = c.hierarchy.divide(c.totals, options)?;
        let alloc = allocated(c);
        let mut queues = serde_json::Map::new();
        for (i, q) in c.hierarchy.ids().zip(c.hierarchy.queues()) {
            let mut res = serde_json::Map::new();
            for r in Resource::ALL {
                let ri = r.index();
                let p = &q.resources[ri];
                res.insert(
                    r.as_str().into(),
                    json!({
                        "deserved": p.deserved.map_or_else(
                            || Value::String(UNLIMITED_DESERVED.into()),
                            |v| Value::String(fmt_res(r, v)),
                        ),
                        "fairShare": fmt_res(r, d.fair_share[i][r]),
                        "allocated": fmt_res(r, alloc[i][r]),
                        "requested": fmt_res(r, d.request[i][r]),
                        "limit": res_value(r, p.limit),
                    }),
                );
            }
            queues.insert(q.name.clone(), Value::Object(res));
        }
        Ok(json!({ "queues": queues }))
    }

    /// The `kai schedule` JSON value.
    ///
    /// # Complexity
    /// O(size of the result).
    fn legacy_schedule_json(result: &SessionResult) -> Value {
        json!({
            "allocated": result.allocated.iter().map(|a| json!({
                "podGroup": a.pod_group,
                "queue": a.queue,
                "pipelined": a.pipelined,
                "pods": a.pods.iter().map(|(pod, node)| json!({"pod": pod, "node": node})).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "evicted": result.evicted.iter().map(|e| json!({
                "podGroup": e.pod_group,
                "queue": e.queue,
                "action": e.action.as_str(),
                "by": e.by,
            })).collect::<Vec<_>>(),
            "pending": result.pending.iter().map(|p| json!({
                "podGroup": p.pod_group,
                "queue": p.queue,
                "reason": p.reason.as_str(),
                "message": p.message,
            })).collect::<Vec<_>>(),
        })
    }

    const CASES: [(&str, Option<&str>); 3] = [
        (
            r#"
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: a}
spec: {resources: {gpu: {quota: 2, overQuotaWeight: 1, limit: 3}, cpu: {quota: 4, overQuotaWeight: 1, limit: -1}}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: b}
spec: {resources: {gpu: {quota: -1, overQuotaWeight: 3, limit: -1}, memory: {quota: 1000, limit: 2000}}}
---
apiVersion: v1
kind: Pod
metadata: {name: a-0, namespace: ns, labels: {kai.scheduler/queue: a}}
spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: "10"}, requests: {cpu: 500m, memory: 1Gi}}}]}
status: {phase: Pending}
---
apiVersion: v1
kind: Pod
metadata: {name: b-0, namespace: ns, labels: {kai.scheduler/queue: b}, annotations: {gpu-fraction: "0.5"}}
spec: {containers: [{name: c}]}
status: {phase: Pending}
"#,
            Some("gpu=10,cpu=16,memory=64Gi"),
        ),
        (
            r#"
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: q}
spec: {resources: {gpu: {quota: 1, overQuotaWeight: 1, limit: 1}}}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {nvidia.com/gpu: "2", cpu: "8", memory: 64Gi}}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: train, namespace: ns, creationTimestamp: "2025-01-01T00:00:00Z"}
spec: {queue: q, minMember: 1, priorityClassName: train}
---
apiVersion: v1
kind: Pod
metadata: {name: train-0, namespace: ns, annotations: {pod-group-name: train}}
spec: {nodeName: n1, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]}
status: {phase: Running, startTime: "2025-01-01T00:00:00Z"}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: build, namespace: ns, creationTimestamp: "2025-01-01T00:01:00Z"}
spec: {queue: q, minMember: 1, priorityClassName: build}
---
apiVersion: v1
kind: Pod
metadata: {name: build-0, namespace: ns, annotations: {pod-group-name: build}}
spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]}
status: {phase: Pending}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: gang, namespace: ns, creationTimestamp: "2025-01-01T00:02:00Z", annotations: {kai.scheduler/stale-podgroup-timestamp: "2025-01-01T00:00:00Z"}}
spec: {queue: q, minMember: 3}
---
apiVersion: v1
kind: Pod
metadata: {name: gang-0, namespace: ns, annotations: {pod-group-name: gang}}
spec: {nodeName: n1, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: lost, namespace: ns, labels: {kai.scheduler/queue: nowhere}}
spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]}
status: {phase: Pending}
"#,
            None,
        ),
        ("", None),
    ];

    #[test]
    fn typed_reports_serialise_like_the_value_builders() {
        for (yaml, total) in CASES {
            let model = gpuquota_model::import_str("r.yaml", yaml).unwrap().model;
            let total = total.map_or([None; 3], |t| parse_total(t).unwrap());
            let c = Cluster::from_model(
                &model,
                &BuildOptions {
                    total,
                    ..BuildOptions::default()
                },
            )
            .unwrap();
            let o = DivisionOptions::default();
            let typed = serde_json::to_string_pretty(&fairshare_report(&c, &o).unwrap()).unwrap();
            let legacy =
                serde_json::to_string_pretty(&legacy_fairshare_json(&c, &o).unwrap()).unwrap();
            assert_eq!(typed, legacy);
            let r = run_session(&c, &SessionOptions::default()).unwrap();
            let typed = serde_json::to_string_pretty(&schedule_report(&r)).unwrap();
            let legacy = serde_json::to_string_pretty(&legacy_schedule_json(&r)).unwrap();
            assert_eq!(typed, legacy);
            assert_eq!(
                serde_json::to_value(schedule_report(&r)).unwrap(),
                legacy_schedule_json(&r)
            );
        }
    }

    #[test]
    fn the_second_case_covers_every_field_shape() {
        let model = gpuquota_model::import_str("r.yaml", CASES[1].0)
            .unwrap()
            .model;
        let c = Cluster::from_model(&model, &BuildOptions::default()).unwrap();
        let r = schedule_report(&run_session(&c, &SessionOptions::default()).unwrap());
        assert!(r.allocated.iter().any(|a| a.pipelined));
        assert!(r.evicted.iter().any(|e| e.by.is_none()));
        assert!(r.evicted.iter().any(|e| e.by.is_some()));
        assert!(!r.pending.is_empty());
        assert!(r.table().contains(" [pipelined]"));
    }
}
