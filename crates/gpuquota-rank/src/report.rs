//! The CLI's JSON contracts (issue 5), built from the engine's results.
//!
//! * [`fairshare_json`]: `{"queues": {"<queue>": {"gpu"|"cpu"|"memory": {"deserved",
//!   "fairShare", "allocated", "requested", "limit"}}}}`. GPU values are decimal strings in
//!   devices (`"32.55"`), CPU and memory Kubernetes quantity strings (`"500m"`, `"4Gi"`);
//!   `limit` is `null` when unlimited. An unlimited `deserved` prints as `"-1"`, upstream's
//!   own spelling: the Queue CRD's `quota: -1` and KAI's `queue_deserved_gpus` /
//!   `queue_quota_cpu_cores` / `queue_quota_memory_bytes` metrics all keep the sentinel `-1`
//!   (never scaled by the resource's unit); the queue's `fairShare` is still the number the
//!   division gave it (phase 1 grants it its whole request, capped by the divided total).
//! * [`schedule_json`]: `{"allocated": [{"podGroup", "queue", "pipelined", "pods": [{"pod",
//!   "node"}]}], "evicted": [{"podGroup", "queue", "action", "by"}], "pending": [{"podGroup",
//!   "queue", "reason", "message"}]}`.

use serde_json::{Value, json};

use crate::division::{DivisionError, DivisionOptions, Resource};
use crate::session::{SessionResult, fmt_res};
use crate::snapshot::{Cluster, TaskStatus};

/// How an unlimited (`-1`) deserved quota prints, in every resource: KAI's sentinel.
pub const UNLIMITED_DESERVED: &str = "-1";

fn res_value(r: Resource, v: Option<i128>) -> Value {
    v.map_or(Value::Null, |v| Value::String(fmt_res(r, v)))
}

/// Allocated amounts at session open (running tasks), propagated to every ancestor.
///
/// # Complexity
/// O(T · d) for T tasks at depth d.
pub fn allocated(c: &Cluster) -> Vec<[i128; 3]> {
    let mut alloc = vec![[0i128; 3]; c.hierarchy.queues().len()];
    for j in &c.jobs {
        let Some(q) = j.queue else { continue };
        for t in &j.tasks {
            if t.status != TaskStatus::Running {
                continue;
            }
            let mut cur = Some(q);
            while let Some(x) = cur {
                for (r, a) in alloc[x].iter_mut().enumerate() {
                    *a += t.req[r];
                }
                cur = c.hierarchy.queues()[x].parent;
            }
        }
    }
    alloc
}

/// The `kai fairshare` JSON value.
///
/// # Errors
/// [`DivisionError`] from the division.
///
/// # Complexity
/// The division's, plus O(Q + T · d).
pub fn fairshare_json(c: &Cluster, options: &DivisionOptions) -> Result<Value, DivisionError> {
    let d = c.hierarchy.divide(c.totals, options)?;
    let alloc = allocated(c);
    let mut queues = serde_json::Map::new();
    for (i, q) in c.hierarchy.queues().iter().enumerate() {
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
                    "fairShare": fmt_res(r, d.fair_share[i][ri]),
                    "allocated": fmt_res(r, alloc[i][ri]),
                    "requested": fmt_res(r, d.request[i][ri]),
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
pub fn schedule_json(result: &SessionResult) -> Value {
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
