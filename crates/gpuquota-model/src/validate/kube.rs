//! Kubernetes core kinds: ResourceQuota, containers' resources (Pods, Workloads' pod
//! templates), node taints and tolerations, and the engines' bound on amounts.

use super::*;

pub(super) fn taint(cx: &mut Ctx<'_>, field: &str, t: &Taint) {
    if t.key.is_empty() {
        cx.required(format!("{field}.key"), "");
    } else {
        qualified(cx, &format!("{field}.key"), &t.key);
    }
    if let Some(v) = &t.value {
        for p in label_value_problems(v) {
            cx.invalid(format!("{field}.value"), quote(v), p);
        }
    }
    const EFFECTS: &[&str] = &["NoSchedule", "PreferNoSchedule", "NoExecute"];
    if t.effect.is_empty() {
        cx.required(format!("{field}.effect"), "");
    } else if !EFFECTS.contains(&t.effect.as_str()) {
        cx.not_supported(format!("{field}.effect"), &t.effect, EFFECTS);
    }
}

pub(super) fn toleration(cx: &mut Ctx<'_>, field: &str, t: &Toleration) {
    let key = t.key.as_deref().unwrap_or("");
    let operator = t.operator.as_deref().unwrap_or("");
    if !key.is_empty() {
        qualified(cx, &format!("{field}.key"), key);
    } else if operator != "Exists" {
        cx.invalid(
            format!("{field}.operator"),
            quote(operator),
            "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
        );
    }
    match operator {
        "" | "Equal" => {
            if let Some(v) = &t.value {
                for p in label_value_problems(v) {
                    cx.invalid(format!("{field}.value"), quote(v), p);
                }
            }
        }
        "Exists" => {
            if t.value.as_deref().is_some_and(|v| !v.is_empty()) {
                cx.invalid(
                    format!("{field}.value"),
                    quote(t.value.as_deref().unwrap_or("")),
                    "value must be empty when `operator` is 'Exists'",
                );
            }
        }
        other => cx.not_supported(format!("{field}.operator"), other, &["Equal", "Exists"]),
    }
    let effect = t.effect.as_deref().unwrap_or("");
    const EFFECTS: &[&str] = &["NoSchedule", "PreferNoSchedule", "NoExecute"];
    if !effect.is_empty() && !EFFECTS.contains(&effect) {
        cx.not_supported(format!("{field}.effect"), effect, EFFECTS);
    }
    if t.toleration_seconds.is_some() && effect != "NoExecute" {
        cx.invalid(
            format!("{field}.effect"),
            quote(effect),
            "effect must be 'NoExecute' when `tolerationSeconds` is set",
        );
    }
}

/// Every name of `list` a qualified name and every quantity non-negative; the field path
/// (`field` names the list) is formatted only for an entry with a problem (a snapshot has
/// 10⁵ such lists).
pub(super) fn non_negative_list(cx: &mut Ctx<'_>, field: impl Fn() -> String, list: &ResourceList) {
    for (name, q) in list {
        let problems = qualified_name_problems(name.as_str());
        if problems.is_empty() && !q.is_negative() {
            continue;
        }
        let at = format!("{}[{name}]", field());
        for p in problems {
            cx.invalid(at.as_str(), quote(name.as_str()), p);
        }
        non_negative(cx, &at, q);
    }
}

/// The largest quantity gpuquota's engines hold for a node, pod or KAI queue: 10^18 units
/// (cores, bytes, devices). The KAI engine computes in nano-units of 128-bit integers and sums
/// over every node; Kubernetes itself has no such bound, but no real resource comes near it.
pub const MAX_RESOURCE_UNITS: i64 = 1_000_000_000_000_000_000;

pub(super) fn at_most_max(cx: &mut Ctx<'_>, field: &str, q: &Quantity) {
    if *q > Quantity::from_integer(MAX_RESOURCE_UNITS) {
        cx.invalid(
            field.to_owned(),
            quote_q(q),
            "must be at most 1E (10^18 units), the largest amount gpuquota's engines hold exactly",
        );
    }
}

pub(super) fn at_most_max_list(cx: &mut Ctx<'_>, field: &str, list: &ResourceList) {
    for (name, q) in list {
        at_most_max(cx, &format!("{field}[{name}]"), q);
    }
}

/// Kubernetes' rule for a pod's extended resources (`nvidia.com/gpu`): whole numbers only
/// (kubernetes/kubernetes: pkg/apis/core/validation/validation.go, `ValidateResourceRequirements`).
pub(super) fn pod_extended_integers(cx: &mut Ctx<'_>, field: &str, list: &[Container]) {
    for (i, c) in list.iter().enumerate() {
        for (part, rl) in [
            ("requests", &c.resources.requests),
            ("limits", &c.resources.limits),
        ] {
            let f = format!("{field}[{i}].resources.{part}");
            at_most_max_list(cx, &f, rl);
            for (name, q) in rl {
                let name = name.as_str();
                if is_extended(name)
                    && !name.starts_with("hugepages-")
                    && !q.is_negative()
                    && q.milli_value().is_none_or(|m| m % 1000 != 0)
                {
                    cx.invalid(format!("{f}[{name}]"), quote_q(q), "must be an integer");
                }
            }
        }
    }
}

/// Requests and limits of containers; `kueue` adds Kueue's reserved `pods` key rule.
pub(super) fn containers(cx: &mut Ctx<'_>, field: &str, list: &[Container], kueue: bool) {
    for (i, c) in list.iter().enumerate() {
        // formatted only when a message names it
        let cp = || format!("{field}[{i}].resources");
        for (part, rl) in [
            ("requests", &c.resources.requests),
            ("limits", &c.resources.limits),
        ] {
            non_negative_list(cx, || format!("{}.{part}", cp()), rl);
            if kueue && rl.contains_key("pods") {
                cx.forbidden(
                    format!("{}.{part}[pods]", cp()),
                    "the key is reserved for internal kueue use",
                );
            }
        }
        for (name, req) in &c.resources.requests {
            if let Some(limit) = c.resources.limits.get(name)
                && req > limit
                && !req.is_negative()
            {
                cx.invalid(
                    format!("{}.requests[{name}]", cp()),
                    quote_q(req),
                    format!("must be less than or equal to {name} limit of {limit}"),
                );
            }
        }
    }
}

/// The suffix of a ResourceQuota key counting the devices of one device class.
const CLAIMS_PER_CLASS_SUFFIX: &str = ".deviceclass.resource.k8s.io/devices";

pub(super) const STANDARD_QUOTA_NAMES: &[&str] = &[
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
    "cpu",
    "memory",
    "ephemeral-storage",
    "storage",
    "requests.cpu",
    "requests.memory",
    "requests.storage",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
];

/// Standard names counted in whole objects.
pub(super) const INTEGER_QUOTA_NAMES: &[&str] = &[
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
];

/// True for a resource name outside the `kubernetes.io` namespace (an extended resource).
pub(super) fn is_extended(name: &str) -> bool {
    match name.split_once('/') {
        Some((domain, _)) => !(domain == "kubernetes.io" || domain.ends_with(".kubernetes.io")),
        None => false,
    }
}

pub(super) fn resource_quota(cx: &mut Ctx<'_>, rq: &CoreResourceQuota) {
    object_meta(cx, &rq.metadata, true);
    for (key, value) in &rq.spec.hard {
        let field = format!("spec.hard[{key}]");
        let problems = qualified_name_problems(key);
        let malformed = !problems.is_empty();
        for p in problems {
            cx.invalid(field.clone(), quote(key), p);
        }
        let mut integer = INTEGER_QUOTA_NAMES.contains(&key.as_str());
        if key.ends_with(CLAIMS_PER_CLASS_SUFFIX) && !key.starts_with("requests.") {
            // the devices of one class that ResourceClaims request (kube's claim evaluator:
            // kubernetes/kubernetes pkg/quota/v1/evaluator/core/resource_claims.go)
            integer = true;
        } else if key.starts_with("count/") || key.contains(".storageclass.storage.k8s.io/") {
            integer = key.starts_with("count/") || key.ends_with("persistentvolumeclaims");
        } else if let Some(rest) = key.strip_prefix("requests.") {
            if is_extended(rest) {
                integer = true;
            } else if !rest.contains('/')
                && !STANDARD_QUOTA_NAMES.contains(&key.as_str())
                && !rest.starts_with("hugepages-")
            {
                cx.invalid(
                    field.clone(),
                    quote(key),
                    "must be a standard resource for quota",
                );
            }
        } else if let Some(rest) = key.strip_prefix("limits.")
            && is_extended(rest)
        {
            // Accepted by the API server; quota enforcement ignores it (see `warnings`).
            integer = true;
        } else if is_extended(key) {
            cx.invalid(
                field.clone(),
                quote(key),
                format!(
                    "extended resources accept only quota items with the prefix requests. (use requests.{key})"
                ),
            );
        } else if !malformed
            && !key.contains('/')
            && !STANDARD_QUOTA_NAMES.contains(&key.as_str())
            && !key.starts_with("hugepages-")
            && !key.starts_with("limits.hugepages-")
        {
            cx.invalid(
                field.clone(),
                quote(key),
                "must be a standard resource for quota",
            );
        }
        if value.is_negative() {
            cx.invalid(field, quote_q(value), GE0);
        } else if integer && value.milli_value().is_none_or(|m| m % 1000 != 0) {
            cx.invalid(field, quote_q(value), "must be an integer");
        }
    }
    const SCOPES: &[&str] = &[
        "Terminating",
        "NotTerminating",
        "BestEffort",
        "NotBestEffort",
        "PriorityClass",
        "CrossNamespacePodAffinity",
        "VolumeAttributesClass",
    ];
    for (i, s) in rq.spec.scopes.iter().enumerate() {
        if !SCOPES.contains(&s.as_str()) {
            cx.not_supported(format!("spec.scopes[{i}]"), s, SCOPES);
        }
    }
    if let Some(sel) = &rq.spec.scope_selector {
        for (i, r) in sel.match_expressions.iter().enumerate() {
            let rp = format!("spec.scopeSelector.matchExpressions[{i}]");
            if !SCOPES.contains(&r.scope_name.as_str()) {
                cx.not_supported(format!("{rp}.scopeName"), &r.scope_name, SCOPES);
            }
            match r.operator.as_str() {
                "In" | "NotIn" => {
                    if r.values.is_empty() {
                        cx.required(
                            format!("{rp}.values"),
                            "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
                        );
                    }
                }
                "Exists" | "DoesNotExist" => {
                    if !r.values.is_empty() {
                        cx.invalid(
                            format!("{rp}.values"),
                            format!("{:?}", r.values),
                            "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
                        );
                    }
                }
                other => cx.not_supported(
                    format!("{rp}.operator"),
                    other,
                    &["In", "NotIn", "Exists", "DoesNotExist"],
                ),
            }
        }
    }
}

/// A Namespace: its name is a DNS-1123 label; its labels.
pub(super) fn namespace(cx: &mut Ctx<'_>, ns: &crate::core::Namespace) {
    name_field(cx, "metadata.name", &ns.metadata.name, NameRule::Label);
    labels(cx, "metadata.labels", &ns.metadata.labels);
}

/// A Pod: metadata, containers' resources (extended resources whole), KAI's `gpu-fraction`
/// annotation and queue label.
pub(super) fn pod(cx: &mut Ctx<'_>, pod: &crate::core::Pod, model: &Model) {
    object_meta(cx, &pod.metadata, true);
    containers(cx, "spec.containers", &pod.spec.containers, false);
    containers(cx, "spec.initContainers", &pod.spec.init_containers, false);
    pod_extended_integers(cx, "spec.containers", &pod.spec.containers);
    pod_extended_integers(cx, "spec.initContainers", &pod.spec.init_containers);
    if let Some(frac) = pod.metadata.annotations.get(kai::GPU_FRACTION_ANNOTATION) {
        let ok = Quantity::parse(frac)
            .is_ok_and(|q| !q.is_negative() && !q.is_zero() && q <= Quantity::from_integer(1));
        if !ok {
            cx.invalid(
                format!("metadata.annotations[{}]", kai::GPU_FRACTION_ANNOTATION),
                quote(frac),
                "must be a number greater than 0 and at most 1",
            );
        }
    }
    if let Some(q) = pod.metadata.labels.get(kai::QUEUE_LABEL)
        && !model.queues.contains_key(q)
    {
        cx.not_found(
            format!("metadata.labels[{}]", kai::QUEUE_LABEL),
            q,
            "no KAI Queue of this name",
        );
    }
}

/// A Node: metadata, allocatable and capacity (non-negative, at most 1E), taints.
pub(super) fn node(cx: &mut Ctx<'_>, node: &crate::core::Node) {
    object_meta(cx, &node.metadata, false);
    non_negative_list(
        cx,
        || "status.allocatable".to_owned(),
        &node.status.allocatable,
    );
    non_negative_list(cx, || "status.capacity".to_owned(), &node.status.capacity);
    at_most_max_list(cx, "status.allocatable", &node.status.allocatable);
    at_most_max_list(cx, "status.capacity", &node.status.capacity);
    for (i, t) in node.spec.taints.iter().enumerate() {
        taint(cx, &format!("spec.taints[{i}]"), t);
    }
}
