//! KAI Scheduler's kinds: Queue (quota, limit, weight, durations) and PodGroup.

use super::*;

pub(super) fn minus_one() -> Quantity {
    Quantity::from_integer(-1)
}

pub(super) fn kai_resource(cx: &mut Ctx<'_>, field: &str, r: &QueueResource) {
    let m1 = minus_one();
    for (name, v) in [("quota", &r.quota), ("limit", &r.limit)] {
        if let Some(v) = v
            && v.is_negative()
            && *v != m1
        {
            cx.invalid(
                format!("{field}.{name}"),
                v.to_string(),
                "must be -1 (unlimited) or greater than or equal to 0",
            );
        }
    }
    if let Some(w) = &r.over_quota_weight
        && w.is_negative()
    {
        cx.invalid(format!("{field}.overQuotaWeight"), w.to_string(), GE0);
    }
    for (name, v) in [
        ("quota", &r.quota),
        ("limit", &r.limit),
        ("overQuotaWeight", &r.over_quota_weight),
    ] {
        if let Some(v) = v {
            at_most_max(cx, &format!("{field}.{name}"), v);
        }
    }
}

/// `(field, message)` per resource of a KAI Queue whose `limit` is below its `quota`: KAI
/// accepts it (kai-scheduler/KAI-Scheduler `pkg/admission/webhook/queuehooks/queue_validator.go`
/// never compares the two) and its proportion plugin caps what the queue may
/// request at the limit (`pkg/scheduler/plugins/proportion/resource_division`), so the part
/// of the quota above the limit is never used.
pub(super) fn limits_below_quota(q: &Queue) -> Vec<(String, String)> {
    let Some(r) = &q.spec.resources else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (name, res) in [("gpu", &r.gpu), ("cpu", &r.cpu), ("memory", &r.memory)] {
        if let Some(QueueResource {
            quota: Some(quota),
            limit: Some(limit),
            ..
        }) = res
            && !quota.is_negative()
            && !limit.is_negative()
            && limit < quota
        {
            out.push((
                format!("spec.resources.{name}.limit"),
                format!(
                    "{limit} is below the quota ({quota}); KAI accepts it and never gives the \
                     queue more than the limit, so the rest of its quota stays unused"
                ),
            ));
        }
    }
    out
}

pub(super) fn go_duration(cx: &mut Ctx<'_>, field: &str, value: Option<&String>) {
    if let Some(v) = value
        && kai::parse_go_duration(v).is_none()
    {
        cx.invalid(
            field,
            quote(v),
            "must be a duration such as \"90s\" or \"1h30m\"",
        );
    }
}

pub(super) fn kai_queue(
    cx: &mut Ctx<'_>,
    q: &Queue,
    model: &Model,
    cycles: &BTreeMap<&str, Vec<&str>>,
) {
    object_meta(cx, &q.metadata, false);
    match &q.spec.resources {
        None => cx.required("spec.resources", "resources must be specified"),
        Some(r) => {
            for (name, res) in [("gpu", &r.gpu), ("cpu", &r.cpu), ("memory", &r.memory)] {
                if let Some(res) = res {
                    kai_resource(cx, &format!("spec.resources.{name}"), res);
                }
            }
        }
    }
    go_duration(
        cx,
        "spec.preemptMinRuntime",
        q.spec.preempt_min_runtime.as_ref(),
    );
    go_duration(
        cx,
        "spec.reclaimMinRuntime",
        q.spec.reclaim_min_runtime.as_ref(),
    );
    let Some(parent) = q.spec.parent_queue.as_deref().filter(|p| !p.is_empty()) else {
        return;
    };
    if !model.queues.contains_key(parent) {
        cx.not_found("spec.parentQueue", parent, "no Queue of this name");
        return;
    }
    if let Some(cycle) = cycles.get(q.metadata.name.as_str()) {
        cx.invalid(
            "spec.parentQueue",
            quote(parent),
            format!("queue cycle: {}", show_cycle(cycle)),
        );
    }
}

pub(super) fn pod_group(cx: &mut Ctx<'_>, pg: &crate::kai::PodGroup, model: &Model) {
    object_meta(cx, &pg.metadata, true);
    let spec = &pg.spec;
    if let Some(m) = spec.min_member
        && m < 1
    {
        cx.invalid(
            "spec.minMember",
            m.to_string(),
            "must be greater than or equal to 1",
        );
    }
    // An empty `spec.queue` is accepted (KAI's CRD does not require it): a warning of
    // `diagnostics_of`.
    let queue = spec.queue.as_str();
    if queue.is_empty() {
        // nothing to resolve
    } else if !model.queues.contains_key(queue) {
        cx.not_found("spec.queue", &spec.queue, "no Queue of this name");
    } else if model.queues.values().any(|q| {
        q.spec.parent_queue.as_deref() == Some(spec.queue.as_str()) && q.metadata.name != spec.queue
    }) {
        cx.invalid(
            "spec.queue",
            quote(&spec.queue),
            "is a parent queue; only leaf queues hold jobs",
        );
    }
    if let Some(p) = &spec.preemptibility {
        const ALLOWED: &[&str] = &["", "preemptible", "non-preemptible"];
        if !ALLOWED.contains(&p.as_str()) {
            cx.not_supported("spec.preemptibility", p, ALLOWED);
        }
    }
    if let Some(pc) = spec
        .priority_class_name
        .as_deref()
        .filter(|p| !p.is_empty())
        && kai::builtin_priority_class(pc).is_none()
        && !model.priority_classes.contains_key(pc)
    {
        cx.not_found(
            "spec.priorityClassName",
            pc,
            "neither a built-in KAI priority class nor a PriorityClass",
        );
    }
    go_duration(
        cx,
        "spec.stalenessGracePeriod",
        spec.staleness_grace_period.as_ref(),
    );
    go_duration(cx, "spec.preemptionDelay", spec.preemption_delay.as_ref());
}
