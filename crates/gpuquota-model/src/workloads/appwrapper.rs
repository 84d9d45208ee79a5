//! The pod sets of an AppWrapper (`workload.codeflare.dev/v1beta2`), as the AppWrapper
//! project's utilities find them and Kueue and KAI read them
//! (project-codeflare/appwrapper: `pkg/utils/utils.go`, `GetComponentPodSpecs`,
//! `InferPodSets`).
//!
//! Each `spec.components[]` entry wraps one object (`template`). Its pod sets are the
//! declared ones (`podSets[]`: `path` to a pod template inside the component, `replicas`,
//! default 1) or, when none are declared, the ones inferred for the kinds the AppWrapper
//! controller knows, matched on the exact `apiVersion` and `kind`:
//!
//! | Component | Pod sets (path: replicas) |
//! |---|---|
//! | `v1` Pod | the pod itself: 1 |
//! | `apps/v1` Deployment, StatefulSet | `spec.template`: `spec.replicas` (1) |
//! | `batch/v1` Job | `spec.template`: `parallelism` (1), capped by `completions` |
//! | `jobset.x-k8s.io/v1alpha2` JobSet | per replicated job: `replicas` (1) × its Job's pods |
//! | `kubeflow.org/v1` PyTorchJob | `Master`, then `Worker`: `replicas` (1) |
//! | `ray.io/v1` RayCluster, RayJob | the head: 1; per worker group: `replicas` (1) |
//!
//! A component of another kind without declared pod sets has none (its pods are not
//! counted). A declared path that does not lead to a pod template is skipped, as upstream
//! skips it; the conversion warns about it.

use serde_json::Value;

use crate::kueue::PodTemplateSpec;

/// One pod set: its template and pod count.
#[derive(Debug, Clone, PartialEq)]
pub struct AwPodSet {
    /// The pod template found at the path.
    pub template: PodTemplateSpec,
    /// Pods.
    pub count: i32,
}

/// The value at a path such as `template.spec.replicatedJobs[0].template` inside
/// `{"template": component}` (the AppWrapper's path syntax); `None` when the path does not
/// resolve.
fn at_path<'a>(component: &'a Value, path: &str) -> Option<&'a Value> {
    let rest = path.strip_prefix("template")?;
    let mut cur = component;
    let mut rest = rest;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            let index: usize = r[..end].parse().ok()?;
            cur = cur.as_array()?.get(index)?;
            rest = &r[end + 1..];
        } else if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            cur = cur.as_object()?.get(&r[..end])?;
            rest = &r[end..];
        } else {
            return None;
        }
    }
    Some(cur)
}

/// An integer at `path`, `None` when absent or not an integer.
fn int_at(component: &Value, path: &str) -> Option<i32> {
    at_path(component, path)?
        .as_i64()
        .and_then(|v| i32::try_from(v).ok())
}

/// The pod sets inferred for a component without declared ones: `(path, replicas)`.
fn infer(component: &Value) -> Vec<(String, i32)> {
    let api = component
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind = component.get("kind").and_then(Value::as_str).unwrap_or("");
    let mut out = Vec::new();
    let exists = |p: &str| at_path(component, p).is_some();
    match (api, kind) {
        ("v1", "Pod") => out.push(("template".to_owned(), 1)),
        ("apps/v1", "Deployment" | "StatefulSet") if exists("template.spec.template") => {
            out.push((
                "template.spec.template".to_owned(),
                int_at(component, "template.spec.replicas").unwrap_or(1),
            ));
        }
        ("batch/v1", "Job") => {
            let mut n = int_at(component, "template.spec.parallelism").unwrap_or(1);
            if let Some(c) = int_at(component, "template.spec.completions")
                && c < n
            {
                n = c;
            }
            out.push(("template.spec.template".to_owned(), n));
        }
        ("jobset.x-k8s.io/v1alpha2", "JobSet") => {
            let n = at_path(component, "template.spec.replicatedJobs")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            for i in 0..n {
                let prefix = format!("template.spec.replicatedJobs[{i}].");
                if !exists(&format!("{prefix}template")) {
                    continue;
                }
                let mut pods =
                    int_at(component, &format!("{prefix}template.spec.parallelism")).unwrap_or(1);
                if let Some(c) = int_at(component, &format!("{prefix}template.spec.completions"))
                    && c < pods
                {
                    pods = c;
                }
                let replicas = int_at(component, &format!("{prefix}replicas")).unwrap_or(1);
                out.push((
                    format!("{prefix}template.spec.template"),
                    replicas.saturating_mul(pods),
                ));
            }
        }
        ("kubeflow.org/v1", "PyTorchJob") => {
            for t in ["Master", "Worker"] {
                let prefix = format!("template.spec.pytorchReplicaSpecs.{t}.");
                if exists(&format!("{prefix}template")) {
                    out.push((
                        format!("{prefix}template"),
                        int_at(component, &format!("{prefix}replicas")).unwrap_or(1),
                    ));
                }
            }
        }
        ("ray.io/v1", "RayCluster" | "RayJob") => {
            let cluster = if kind == "RayJob" {
                "template.spec.rayClusterSpec."
            } else {
                "template.spec."
            };
            out.push((format!("{cluster}headGroupSpec.template"), 1));
            let n = at_path(component, &format!("{cluster}workerGroupSpecs"))
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            for i in 0..n {
                let prefix = format!("{cluster}workerGroupSpecs[{i}].");
                if exists(&format!("{prefix}template")) {
                    out.push((
                        format!("{prefix}template"),
                        int_at(component, &format!("{prefix}replicas")).unwrap_or(1),
                    ));
                }
            }
        }
        _ => {}
    }
    out
}

/// The pod sets of an AppWrapper's `spec`, in component order, and a warning for every
/// declared path that leads to no pod template.
///
/// # Errors
/// A message naming the field when a pod template found does not read as one.
///
/// # Complexity
/// Linear in the size of the components.
pub fn pod_sets(spec: &Value) -> Result<(Vec<AwPodSet>, Vec<String>), String> {
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    let components = spec
        .get("components")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (ci, c) in components.iter().enumerate() {
        let template = c.get("template").cloned().unwrap_or(Value::Null);
        let declared: Vec<(String, i32)> = c
            .get("podSets")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .map(|p| {
                        (
                            p.get("path")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_owned(),
                            p.get("replicas")
                                .and_then(Value::as_i64)
                                .and_then(|v| i32::try_from(v).ok())
                                .unwrap_or(1),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let sets = if declared.is_empty() {
            infer(&template)
        } else {
            declared
        };
        for (path, count) in sets {
            let Some(pts) = at_path(&template, &path).filter(|v| v.get("spec").is_some()) else {
                warnings.push(format!(
                    "spec.components[{ci}]: path {path:?} leads to no pod template; the pod set \
                     is skipped (as the AppWrapper controller skips it)"
                ));
                continue;
            };
            let mut t = serde_json::Map::new();
            if let Some(m) = pts.get("metadata") {
                let mut meta = serde_json::Map::new();
                for k in ["labels", "annotations"] {
                    if let Some(v) = m.get(k) {
                        meta.insert(k.to_owned(), v.clone());
                    }
                }
                t.insert("metadata".to_owned(), Value::Object(meta));
            }
            t.insert(
                "spec".to_owned(),
                pts.get("spec").cloned().unwrap_or(Value::Null),
            );
            let template: PodTemplateSpec = serde_path_to_error::deserialize(Value::Object(t))
                .map_err(|e| format!("spec.components[{ci}].{path}.{}: {}", e.path(), e.inner()))?;
            out.push(AwPodSet {
                template,
                count: count.max(0),
            });
        }
    }
    Ok((out, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_resolve_fields_and_indexes() {
        let c = serde_json::json!({"spec": {"replicatedJobs": [{"name": "a"}, {"name": "b"}]}});
        assert_eq!(
            at_path(&c, "template.spec.replicatedJobs[1].name"),
            Some(&Value::String("b".into()))
        );
        assert_eq!(at_path(&c, "template.spec.replicatedJobs[2]"), None);
        assert_eq!(at_path(&c, "spec"), None);
        assert_eq!(at_path(&c, "template.spec.x"), None);
    }
}
