//! Kueue Workloads and the priority classes they name.

use super::*;

/// The detail of a `podSetAssignments[].name` naming a podSet the Workload does not have: a
/// reference within the object, so an error even without `--complete` (Kueue's webhook
/// rejects it: kubernetes-sigs/kueue pkg/webhooks/workload_webhook.go, `field.NotFound`).
pub(super) const NO_SUCH_POD_SET: &str = "no podSet of this name";
use crate::kueue::{Admission, WorkloadSpec, WorkloadStatus};

pub(super) const WPC_GROUP: &str = "kueue.x-k8s.io";
pub(super) const PC_GROUP: &str = "scheduling.k8s.io";

pub(super) fn workload(cx: &mut Ctx<'_>, wl: &Workload, model: &Model) {
    object_meta(cx, &wl.metadata, true);
    let spec = &wl.spec;
    let namespace = wl.metadata.namespace.as_deref().unwrap_or("default");
    pod_sets(cx, spec);
    if let Some(q) = spec.queue_name.as_deref().filter(|q| !q.is_empty()) {
        reference_name(cx, "spec.queueName", q);
        if !model.local_queues.contains_key(&format!("{namespace}/{q}")) {
            cx.not_found(
                "spec.queueName",
                q,
                format!("no LocalQueue of this name in namespace {namespace:?}"),
            );
        }
    }
    priority_class(cx, spec, model);
    if let Some(t) = spec.maximum_execution_time_seconds
        && t < 1
    {
        cx.invalid(
            "spec.maximumExecutionTimeSeconds",
            t.to_string(),
            "must be greater than or equal to 1",
        );
    }
    if let Some(boost) = wl.metadata.annotations.get("kueue.x-k8s.io/priority-boost")
        && boost.trim().parse::<i32>().is_err()
    {
        cx.invalid(
            "metadata.annotations[kueue.x-k8s.io/priority-boost]",
            quote(boost),
            "must be a signed 32-bit integer",
        );
    }
    let Some(status) = &wl.status else {
        return;
    };
    if let Some(adm) = &status.admission {
        admission(cx, wl, adm, model);
    }
    reclaimable_pods(cx, spec, status);
}

/// `spec.podSets`: 1–18 of them, unique DNS-label names, counts, at most one `minCount`,
/// the containers' resources.
fn pod_sets(cx: &mut Ctx<'_>, spec: &WorkloadSpec) {
    if spec.pod_sets.is_empty() {
        cx.required("spec.podSets", "must have at least 1 item");
    } else if spec.pod_sets.len() > 18 {
        cx.too_many("spec.podSets", spec.pod_sets.len(), 18);
    }
    let mut names: BTreeSet<&str> = BTreeSet::new();
    let mut with_min_count = 0usize;
    for (i, ps) in spec.pod_sets.iter().enumerate() {
        let pp = format!("spec.podSets[{i}]");
        for p in dns1123_label_problems(&ps.name) {
            cx.invalid(format!("{pp}.name"), quote(&ps.name), p);
        }
        if !names.insert(ps.name.as_str()) {
            cx.duplicate(format!("{pp}.name"), &ps.name);
        }
        if ps.count < 0 {
            cx.invalid(format!("{pp}.count"), ps.count.to_string(), GE0);
        }
        if let Some(min) = ps.min_count {
            with_min_count += 1;
            if min < 1 || min > ps.count {
                cx.invalid(
                    format!("{pp}.minCount"),
                    min.to_string(),
                    "minCount should be positive and less or equal to count",
                );
            }
        }
        let tp = format!("{pp}.template.spec");
        containers(
            cx,
            &format!("{tp}.containers"),
            &ps.template.spec.containers,
            true,
        );
        containers(
            cx,
            &format!("{tp}.initContainers"),
            &ps.template.spec.init_containers,
            true,
        );
    }
    if with_min_count > 1 {
        cx.invalid(
            "spec.podSets",
            with_min_count.to_string(),
            "at most one podSet can use minCount",
        );
    }
}

/// The priority class: a v1beta2 `priorityClassRef` or a v1beta1 name and source, with the
/// priority it needs, naming a class of the input.
fn priority_class(cx: &mut Ctx<'_>, spec: &WorkloadSpec, model: &Model) {
    // Priority class: v1beta2 reference or v1beta1 name + source.
    if let Some(r) = &spec.priority_class_ref {
        let field = "spec.priorityClassRef";
        match r.group.as_str() {
            WPC_GROUP if r.kind != "WorkloadPriorityClass" => cx.invalid(
                format!("{field}.kind"),
                quote(&r.kind),
                "must be WorkloadPriorityClass when group is kueue.x-k8s.io",
            ),
            PC_GROUP if r.kind != "PriorityClass" => cx.invalid(
                format!("{field}.kind"),
                quote(&r.kind),
                "must be PriorityClass when group is scheduling.k8s.io",
            ),
            WPC_GROUP | PC_GROUP => {}
            other => cx.not_supported(format!("{field}.group"), other, &[WPC_GROUP, PC_GROUP]),
        }
        if r.name.is_empty() {
            cx.required(format!("{field}.name"), "");
        }
        if spec.priority.is_none() {
            cx.required(
                "spec.priority",
                "priority should not be nil when priorityClassRef is set",
            );
        }
    }
    if let Some(source) = &spec.priority_class_source {
        const SOURCES: &[&str] = &[
            "",
            "kueue.x-k8s.io/workloadpriorityclass",
            "scheduling.k8s.io/priorityclass",
        ];
        if !SOURCES.contains(&source.as_str()) {
            cx.not_supported("spec.priorityClassSource", source, SOURCES);
        }
    }
    if spec.priority_class_ref.is_none()
        && spec
            .priority_class_name
            .as_deref()
            .is_some_and(|n| !n.is_empty())
        && spec.priority.is_none()
    {
        cx.required(
            "spec.priority",
            "priority should not be nil when priorityClassName is set",
        );
    }
    if let Some((is_wpc, name)) = spec.priority_class().filter(|(_, n)| !n.is_empty()) {
        let (found, what, field) = if is_wpc {
            (
                model.workload_priority_classes.contains_key(name),
                "WorkloadPriorityClass",
                "name",
            )
        } else {
            (
                model.priority_classes.contains_key(name),
                "PriorityClass",
                "name",
            )
        };
        if !found {
            let path = if spec.priority_class_ref.is_some() {
                format!("spec.priorityClassRef.{field}")
            } else {
                "spec.priorityClassName".to_owned()
            };
            cx.not_found(path, name, format!("no {what} of this name"));
        }
    }
}

/// `status.admission` against the spec: the ClusterQueue, one assignment per podSet while
/// quota is reserved, counts, usage divisible by the count, flavors of the input.
fn admission(cx: &mut Ctx<'_>, wl: &Workload, adm: &Admission, model: &Model) {
    let spec = &wl.spec;
    let ap = "status.admission";
    if adm.cluster_queue.is_empty() {
        cx.required(format!("{ap}.clusterQueue"), "");
    } else if !model.cluster_queues.contains_key(&adm.cluster_queue) {
        cx.not_found(
            format!("{ap}.clusterQueue"),
            &adm.cluster_queue,
            "no ClusterQueue of this name",
        );
    }
    let reserved = wl
        .condition("QuotaReserved")
        .is_some_and(crate::meta::Condition::is_true);
    if reserved && adm.pod_set_assignments.len() != spec.pod_sets.len() {
        cx.invalid(
            format!("{ap}.podSetAssignments"),
            adm.pod_set_assignments.len().to_string(),
            format!(
                "must have the same number of podSets as the spec ({})",
                spec.pod_sets.len()
            ),
        );
    }
    for (i, psa) in adm.pod_set_assignments.iter().enumerate() {
        let pp = format!("{ap}.podSetAssignments[{i}]");
        let pod_set = spec.pod_sets.iter().find(|p| p.name == psa.name);
        if pod_set.is_none() {
            cx.not_found(format!("{pp}.name"), &psa.name, NO_SUCH_POD_SET);
        }
        let count = psa.count.or(pod_set.map(|p| p.count));
        if let Some(c) = psa.count
            && c < 0
        {
            cx.invalid(format!("{pp}.count"), c.to_string(), GE0);
        }
        for (r, q) in &psa.resource_usage {
            let field = format!("{pp}.resourceUsage[{r}]");
            non_negative(cx, &field, q);
            if let Some(c) = count.filter(|c| *c > 0) {
                let amount = q.to_amount(r);
                if !amount.is_unlimited() && amount.0 % i64::from(c) != 0 {
                    cx.invalid(field, quote_q(q), format!("must be divisible by count {c}"));
                }
            }
        }
        for (r, f) in &psa.flavors {
            if !model.resource_flavors.contains_key(f) {
                cx.not_found(
                    format!("{pp}.flavors[{r}]"),
                    f,
                    "no ResourceFlavor of this name",
                );
            }
        }
    }
}

/// `status.reclaimablePods`: podSets of the spec, counts within theirs.
fn reclaimable_pods(cx: &mut Ctx<'_>, spec: &WorkloadSpec, status: &WorkloadStatus) {
    for (i, rp) in status.reclaimable_pods.iter().enumerate() {
        let field = format!("status.reclaimablePods[{i}]");
        match spec.pod_sets.iter().find(|p| p.name == rp.name) {
            None => cx.not_found(format!("{field}.name"), &rp.name, "no podSet of this name"),
            Some(ps) => {
                if rp.count < 0 {
                    cx.invalid(format!("{field}.count"), rp.count.to_string(), GE0);
                } else if rp.count > ps.count {
                    cx.invalid(
                        format!("{field}.count"),
                        rp.count.to_string(),
                        format!("should be less or equal to {}", ps.count),
                    );
                }
            }
        }
    }
}

pub(super) fn priority_classes(out: &mut Vec<ValidationError>, model: &Model) {
    let defaults: Vec<&str> = model
        .priority_classes
        .values()
        .filter(|p| p.global_default)
        .map(|p| p.metadata.name.as_str())
        .collect();
    for (key, pc) in &model.priority_classes {
        let mut cx = Ctx::new(out, Kind::PriorityClass, key);
        object_meta(&mut cx, &pc.metadata, false);
        if pc.value > 1_000_000_000 && !pc.metadata.name.starts_with("system-") {
            cx.forbidden(
                "value",
                "maximum allowed value of a user defined priority is 1000000000",
            );
        }
        if let Some(p) = &pc.preemption_policy {
            const POLICIES: &[&str] = &["PreemptLowerPriority", "Never"];
            if !POLICIES.contains(&p.as_str()) {
                cx.not_supported("preemptionPolicy", p, POLICIES);
            }
        }
        if pc.global_default && defaults.len() > 1 {
            let others: Vec<&str> = defaults
                .iter()
                .copied()
                .filter(|n| *n != pc.metadata.name)
                .collect();
            cx.invalid(
                "globalDefault",
                "true".to_owned(),
                format!(
                    "only one PriorityClass can be marked globalDefault; also marked: {}",
                    others.join(", ")
                ),
            );
        }
    }
}

/// A WorkloadPriorityClass: metadata and the length of its description.
pub(super) fn workload_priority_class(cx: &mut Ctx<'_>, wpc: &crate::kueue::WorkloadPriorityClass) {
    object_meta(cx, &wpc.metadata, false);
    if let Some(d) = &wpc.description
        && d.chars().count() > 2048
    {
        cx.push(
            "description",
            ErrorType::TooLong,
            None,
            "may not be more than 2048 characters",
        );
    }
}
