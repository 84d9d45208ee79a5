//! Core `v1` LimitRanges: the container defaults Kueue applies to a Workload's pod templates
//! before it counts their requests, and the bounds that make a Workload inadmissible
//! (kubernetes-sigs/kueue: `pkg/util/limitrange/limitrange.go`, `pkg/workload/resources.go`,
//! `AdjustResources`, `ValidateLimitRange`).
//!
//! - **Defaulting of the LimitRange itself**, as the API server stores it
//!   (kubernetes/kubernetes: `pkg/apis/core/v1/defaults.go`, `SetDefaults_LimitRangeItem`):
//!   in a `Container` item a resource with `max` and no `default` gets `default = max`; one
//!   with `default` and no `defaultRequest` gets `defaultRequest = default`; one with `min`
//!   and still no `defaultRequest` gets `defaultRequest = min`.
//! - **Summary** of the namespace's LimitRanges (in name order): per item type the lowest
//!   `max`, the highest `min`, the first `default` and `defaultRequest` per resource.
//! - **Applied to every Workload** of the namespace (converted or given), in Kueue's order:
//!   each container and init container gets the `Container` defaults for the resources it
//!   does not name (`default` into `limits`, `defaultRequest` into `requests`), then its
//!   limits stand in for missing requests. A Pod the KAI conversion creates gets what the API
//!   server's LimitRanger gives a new pod: its limits stand in for missing requests first,
//!   then the defaults fill what is still missing.
//! - **Bounds**: a container whose requests or limits exceed the `Container` `max`, or fall
//!   below its `min`, or a pod whose total requests are outside the `Pod` `max`/`min`,
//!   makes the Workload inadmissible in Kueue ("resources didn't satisfy LimitRange
//!   constraints"); `validate` reports it as a warning naming the Workload, PodSet and
//!   resource. Only resources named on both sides are compared, as upstream.
//!   `maxLimitRequestRatio` and `PersistentVolumeClaim` items are not modelled.

use std::collections::BTreeMap;

use crate::core::{Container, PodSpec, ResourceList};
use crate::diag::{Code, Diagnostic, Diagnostics};
use crate::model::Model;

use super::ObjectKind;

/// Diagnostic code of a Workload outside its namespace's LimitRange bounds.
pub const LIMIT_RANGE_VIOLATION: Code = Code::new("limit-range-violation");

/// One `spec.limits[]` item.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct LimitRangeItem {
    /// `Container`, `Pod` or `PersistentVolumeClaim`.
    #[cfg_attr(feature = "serde", serde(default, rename = "type"))]
    pub type_: String,
    /// Upper bounds.
    #[cfg_attr(feature = "serde", serde(default))]
    pub max: ResourceList,
    /// Lower bounds.
    #[cfg_attr(feature = "serde", serde(default))]
    pub min: ResourceList,
    /// Default limits.
    #[cfg_attr(feature = "serde", serde(default))]
    pub default: ResourceList,
    /// Default requests.
    #[cfg_attr(feature = "serde", serde(default))]
    pub default_request: ResourceList,
}

impl LimitRangeItem {
    /// The item as the API server stores it (see the module docs).
    pub fn defaulted(mut self) -> LimitRangeItem {
        if self.type_ == "Container" {
            for (k, v) in &self.max {
                self.default.entry(k.clone()).or_insert(*v);
            }
            for (k, v) in &self.default {
                self.default_request.entry(k.clone()).or_insert(*v);
            }
            for (k, v) in &self.min {
                self.default_request.entry(k.clone()).or_insert(*v);
            }
        }
        self
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
struct LimitRangeSpec {
    #[cfg_attr(feature = "serde", serde(default))]
    limits: Vec<LimitRangeItem>,
}

/// The summary of one namespace's LimitRanges, per item type.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Summary {
    /// `Container` and `Pod` items merged (other types are not modelled).
    pub items: BTreeMap<String, LimitRangeItem>,
}

impl Summary {
    fn add(&mut self, item: LimitRangeItem) {
        let s = self.items.entry(item.type_.clone()).or_default();
        s.type_.clone_from(&item.type_);
        for (k, v) in item.max {
            s.max
                .entry(k)
                .and_modify(|cur| *cur = (*cur).min(v))
                .or_insert(v);
        }
        for (k, v) in item.min {
            s.min
                .entry(k)
                .and_modify(|cur| *cur = (*cur).max(v))
                .or_insert(v);
        }
        for (k, v) in item.default {
            s.default.entry(k).or_insert(v);
        }
        for (k, v) in item.default_request {
            s.default_request.entry(k).or_insert(v);
        }
    }

    /// The `Container` item, if any.
    pub fn container(&self) -> Option<&LimitRangeItem> {
        self.items.get("Container")
    }
}

/// The LimitRange summaries by namespace, and a message per LimitRange that does not read.
///
/// # Complexity
/// Linear in the LimitRanges' size.
pub fn summaries(model: &Model) -> (BTreeMap<String, Summary>, Vec<(String, String)>) {
    let mut out: BTreeMap<String, Summary> = BTreeMap::new();
    let mut bad = Vec::new();
    for obj in model.workload_objects.values() {
        if obj.kind != ObjectKind::LimitRange {
            continue;
        }
        match obj.spec_as::<LimitRangeSpec>() {
            Ok(spec) => {
                let s = out.entry(obj.namespace().to_owned()).or_default();
                for item in spec.limits {
                    s.add(item.defaulted());
                }
            }
            Err(e) => bad.push((obj.ns_name(), e)),
        }
    }
    (out, bad)
}

fn fill(list: &mut ResourceList, defaults: &ResourceList) {
    for (k, v) in defaults {
        list.entry(k.clone()).or_insert(*v);
    }
}

fn containers_mut(spec: &mut PodSpec) -> impl Iterator<Item = &mut Container> {
    spec.init_containers
        .iter_mut()
        .chain(spec.containers.iter_mut())
}

/// Kueue's order (`AdjustResources`): the LimitRange defaults, then limits for missing
/// requests.
pub fn apply_to_workload_template(spec: &mut PodSpec, item: &LimitRangeItem) {
    for c in containers_mut(spec) {
        fill(&mut c.resources.limits, &item.default);
        fill(&mut c.resources.requests, &item.default_request);
        let limits = c.resources.limits.clone();
        fill(&mut c.resources.requests, &limits);
    }
}

/// The API server's order for a new pod: limits for missing requests (defaulting), then the
/// LimitRanger's defaults.
pub fn apply_to_new_pod(spec: &mut PodSpec, item: &LimitRangeItem) {
    for c in containers_mut(spec) {
        let limits = c.resources.limits.clone();
        fill(&mut c.resources.requests, &limits);
        fill(&mut c.resources.limits, &item.default);
        fill(&mut c.resources.requests, &item.default_request);
    }
}

/// Applies the namespaces' LimitRange defaults to every Workload of `model`.
///
/// # Complexity
/// Linear in the Workloads' containers.
#[cfg_attr(not(feature = "serde"), allow(dead_code))]
pub(crate) fn apply(model: &mut Model, warnings: &mut super::Warnings) {
    let (sums, bad) = summaries(model);
    for (name, e) in bad {
        warnings.push(
            None,
            super::codes::INVALID_OBJECT,
            "LimitRange",
            &name,
            format!("{e}; the LimitRange is not applied"),
        );
    }
    if sums.is_empty() {
        return;
    }
    for wl in model.workloads.values_mut() {
        let ns = wl.metadata.namespace.as_deref().unwrap_or("default");
        let Some(item) = sums.get(ns).and_then(Summary::container) else {
            continue;
        };
        for ps in &mut wl.spec.pod_sets {
            apply_to_workload_template(&mut ps.template.spec, item);
        }
    }
}

/// `(resource names above max, resource names below min)` of one container against a
/// `Container` item: its smaller and larger value of request and limit per resource.
fn container_bounds(c: &Container, item: &LimitRangeItem) -> (Vec<String>, Vec<String>) {
    let r = &c.resources;
    let mut lo = r.requests.clone();
    let mut hi = r.requests.clone();
    for (k, v) in &r.limits {
        lo.entry(k.clone())
            .and_modify(|cur| *cur = (*cur).min(*v))
            .or_insert(*v);
        hi.entry(k.clone())
            .and_modify(|cur| *cur = (*cur).max(*v))
            .or_insert(*v);
    }
    above_below(&lo, &hi, item)
}

fn above_below(
    lo: &ResourceList,
    hi: &ResourceList,
    item: &LimitRangeItem,
) -> (Vec<String>, Vec<String>) {
    let above = hi
        .iter()
        .filter(|(k, v)| item.max.get(*k).is_some_and(|m| *v > m))
        .map(|(k, _)| k.to_string())
        .collect();
    let below = item
        .min
        .iter()
        .filter(|(k, m)| lo.get(*k).is_some_and(|v| *m > v))
        .map(|(k, _)| k.to_string())
        .collect();
    (above, below)
}

/// A warning per Workload PodSet outside its namespace's LimitRange bounds (after the
/// defaults are applied, as Kueue checks it).
///
/// # Complexity
/// Linear in the Workloads' containers.
pub fn diagnostics(model: &Model) -> Diagnostics {
    let mut out = Diagnostics::default();
    let (sums, _) = summaries(model);
    if sums.is_empty() {
        return out;
    }
    for (key, wl) in &model.workloads {
        let ns = wl.metadata.namespace.as_deref().unwrap_or("default");
        let Some(sum) = sums.get(ns) else { continue };
        for (i, ps) in wl.spec.pod_sets.iter().enumerate() {
            let mut reasons = Vec::new();
            if let Some(item) = sum.container() {
                for (list, field) in [
                    (&ps.template.spec.init_containers, "initContainers"),
                    (&ps.template.spec.containers, "containers"),
                ] {
                    for (j, c) in list.iter().enumerate() {
                        let (above, below) = container_bounds(c, item);
                        if !above.is_empty() {
                            reasons.push(format!(
                                "{field}[{j}] ({}): {} above the LimitRange max",
                                c.name,
                                above.join(", ")
                            ));
                        }
                        if !below.is_empty() {
                            reasons.push(format!(
                                "{field}[{j}] ({}): {} below the LimitRange min",
                                c.name,
                                below.join(", ")
                            ));
                        }
                    }
                }
            }
            if let Some(item) = sum.items.get("Pod")
                && let Some(total) = ps.template.spec.effective_requests()
            {
                let (above, below) = above_below(&total, &total, item);
                if !above.is_empty() {
                    reasons.push(format!(
                        "pod total: {} above the LimitRange max",
                        above.join(", ")
                    ));
                }
                if !below.is_empty() {
                    reasons.push(format!(
                        "pod total: {} below the LimitRange min",
                        below.join(", ")
                    ));
                }
            }
            if !reasons.is_empty() {
                out.push(
                    Diagnostic::warning(
                        LIMIT_RANGE_VIOLATION,
                        format!(
                            "{}; Kueue never admits this Workload (resources didn't satisfy \
                             LimitRange constraints)",
                            reasons.join("; ")
                        ),
                    )
                    .object("Workload", key.clone())
                    .field(format!("spec.podSets[{i}].template.spec")),
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> crate::quantity::Quantity {
        s.parse().unwrap()
    }

    #[test]
    fn container_items_default_from_max_and_min() {
        let item: LimitRangeItem = serde_json::from_value(serde_json::json!({
            "type": "Container", "max": {"cpu": "4"}, "min": {"memory": "1Gi"}
        }))
        .unwrap();
        let d = item.defaulted();
        assert_eq!(d.default.get("cpu"), Some(&q("4")));
        assert_eq!(d.default_request.get("cpu"), Some(&q("4")));
        assert_eq!(d.default_request.get("memory"), Some(&q("1Gi")));
    }

    #[test]
    fn workload_and_pod_orders_differ_for_a_limit_without_request() {
        let item: LimitRangeItem = serde_json::from_value(serde_json::json!({
            "type": "Container", "default": {"cpu": "2"}, "defaultRequest": {"cpu": "500m"}
        }))
        .unwrap();
        let spec: PodSpec = serde_json::from_value(serde_json::json!({
            "containers": [{"name": "c", "resources": {"limits": {"cpu": "1"}}}]
        }))
        .unwrap();
        let mut wl = spec.clone();
        apply_to_workload_template(&mut wl, &item);
        assert_eq!(
            wl.containers[0].resources.requests.get("cpu"),
            Some(&q("500m"))
        );
        let mut pod = spec;
        apply_to_new_pod(&mut pod, &item);
        assert_eq!(
            pod.containers[0].resources.requests.get("cpu"),
            Some(&q("1"))
        );
    }
}
