//! `node.k8s.io/v1` RuntimeClasses: the pod overhead they add to the requests of every pod
//! that names them.
//!
//! - **Read**: `metadata.name` and `overhead.podFixed`; `handler` and `scheduling` are kept
//!   and not interpreted.
//! - **Kueue** adds the class's `overhead.podFixed` as `spec.overhead` to every pod template
//!   of a Workload that names a `runtimeClassName` and has no overhead yet, before the
//!   LimitRange defaults (kubernetes-sigs/kueue: `pkg/workload/resources.go`,
//!   `handlePodOverhead`, `AdjustResources`). It is applied here to every Workload, converted
//!   or given. The requests then include it ([`PodSpec::effective_requests`]).
//! - **Pods** (given, or made by the KAI conversion) get the same overhead when they have
//!   none, as the API server's RuntimeClass admission plugin sets it on a new pod
//!   (kubernetes/kubernetes: `plugin/pkg/admission/runtimeclass/admission.go`,
//!   `setOverhead`), so KAI and ResourceQuota count it too.
//! - **Missing class**: a `runtimeClassName` no RuntimeClass in the files has gets a
//!   `missing-reference` warning naming the Workload or Pod and the class, and no overhead
//!   (Kueue logs the failed lookup and goes on without it).
//!
//! [`PodSpec::effective_requests`]: crate::core::PodSpec::effective_requests

#[cfg(feature = "serde")]
use std::collections::BTreeMap;

#[cfg(feature = "serde")]
use crate::core::{PodSpec, ResourceList};
#[cfg(feature = "serde")]
use crate::model::Model;

#[cfg(feature = "serde")]
use super::ObjectKind;

/// `overhead` of a RuntimeClass.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct Overhead {
    /// The fixed overhead of every pod of the class.
    #[cfg_attr(feature = "serde", serde(default))]
    pub pod_fixed: crate::core::ResourceList,
}

/// The top-level fields of a RuntimeClass that are read.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct RuntimeClassFields {
    /// The pod overhead, if any.
    #[cfg_attr(feature = "serde", serde(default))]
    pub overhead: Option<Overhead>,
}

/// The RuntimeClasses of `model` by name, with their `overhead.podFixed` (empty when unset),
/// and a message per RuntimeClass whose fields do not read.
///
/// # Complexity
/// Linear in the RuntimeClasses.
#[cfg(feature = "serde")]
pub fn overheads(model: &Model) -> (BTreeMap<String, ResourceList>, Vec<(String, String)>) {
    let mut out = BTreeMap::new();
    let mut bad = Vec::new();
    for obj in model.workload_objects.values() {
        if obj.kind != ObjectKind::RuntimeClass {
            continue;
        }
        match obj.spec_as::<RuntimeClassFields>() {
            Ok(f) => {
                out.insert(
                    obj.metadata.name.clone(),
                    f.overhead.map(|o| o.pod_fixed).unwrap_or_default(),
                );
            }
            Err(e) => bad.push((obj.metadata.name.clone(), e)),
        }
    }
    (out, bad)
}

/// Sets `spec.overhead` of `spec` from its RuntimeClass when it names one and has no
/// overhead. Returns the class name when it is not in `classes`.
#[cfg(feature = "serde")]
fn set_overhead(spec: &mut PodSpec, classes: &BTreeMap<String, ResourceList>) -> Option<String> {
    let name = spec
        .other
        .get("runtimeClassName")
        .and_then(|v| v.as_str())
        .filter(|n| !n.is_empty())?
        .to_owned();
    if !spec.overhead.is_empty() {
        return None;
    }
    match classes.get(&name) {
        Some(o) => {
            spec.overhead = o.clone();
            None
        }
        None => Some(name),
    }
}

/// Adds the RuntimeClass overhead to every Workload pod template and every Pod of `model`
/// (see the module docs), warning about classes not in the files.
///
/// # Complexity
/// Linear in the Workloads' pod sets and the Pods.
#[cfg(feature = "serde")]
pub(crate) fn apply(model: &mut Model, warnings: &mut super::Warnings) {
    let (classes, bad) = overheads(model);
    for (name, e) in bad {
        warnings.push(
            None,
            super::codes::INVALID_OBJECT,
            "RuntimeClass",
            &name,
            format!("{e}; its overhead is not applied"),
        );
    }
    let missing = |kind: &str, name: &str, field: String, class: &str| {
        (
            kind.to_owned(),
            name.to_owned(),
            field,
            format!(
                "RuntimeClass {class:?} is not in the files; its pod overhead is not added \
                 to the requests"
            ),
        )
    };
    let mut found = Vec::new();
    for (key, wl) in &mut model.workloads {
        for (i, ps) in wl.spec.pod_sets.iter_mut().enumerate() {
            if let Some(class) = set_overhead(&mut ps.template.spec, &classes) {
                found.push(missing(
                    "Workload",
                    key,
                    format!("spec.podSets[{i}].template.spec.runtimeClassName"),
                    &class,
                ));
            }
        }
    }
    for (key, pod) in &mut model.pods {
        if let Some(class) = set_overhead(&mut pod.spec, &classes) {
            found.push(missing("Pod", key, "spec.runtimeClassName".into(), &class));
        }
    }
    for (kind, name, field, msg) in found {
        warnings.field(
            None,
            super::codes::MISSING_REFERENCE,
            &kind,
            &name,
            &field,
            msg,
        );
    }
}
