//! Bad input: [`Cluster::from_model`] reports every problem in the manifests at once (kind,
//! name and field of each), not only the first, and builds nothing.

use gpuquota_model::import_str;
use gpuquota_rank::snapshot::{BuildOptions, Cluster, SnapshotError, SnapshotErrors};

/// Nine independent mistakes across every kind the snapshot reads.
pub(crate) const NINE_MISTAKES: &str = r#"apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: a}
spec:
  resources:
    gpu: {quota: -3, overQuotaWeight: -2, limit: -1}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: b}
spec:
  resources:
    gpu: {quota: 2, overQuotaWeight: 1, limit: -1}
  preemptMinRuntime: soonish
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {nvidia.com/gpu: "-1", cpu: "8", memory: 64Gi}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata:
  name: pg
  namespace: ns
  annotations: {kai.scheduler/stale-podgroup-timestamp: yesterday}
spec: {queue: b, minMember: -1, preemptibility: sometimes}
---
apiVersion: v1
kind: Pod
metadata:
  name: p-0
  namespace: ns
  labels: {kai.scheduler/queue: b}
  annotations: {pod-group-name: pg, gpu-fraction: "1.5"}
spec: {containers: [{name: c}]}
status: {phase: Pending}
---
apiVersion: v1
kind: Pod
metadata:
  name: p-1
  namespace: ns
  labels: {kai.scheduler/queue: b}
  deletionTimestamp: soon
spec: {nodeName: n1, containers: [{name: c, resources: {requests: {nvidia.com/gpu: "1"}}}]}
status: {phase: Running}
"#;

fn errors(yaml: &str) -> SnapshotErrors {
    let imported = import_str("bad.yaml", yaml).unwrap();
    Cluster::from_model(&imported.model, &BuildOptions::default()).unwrap_err()
}

/// `(kind, name, field)` of every `Invalid` problem, in reading order.
fn fields(errs: &SnapshotErrors) -> Vec<(&'static str, String, String)> {
    errs.iter()
        .map(|e| match e {
            SnapshotError::Invalid {
                kind, name, field, ..
            } => (*kind, name.clone(), field.clone()),
            other => panic!("unexpected problem {other}"),
        })
        .collect()
}

fn f(kind: &'static str, name: &str, field: &str) -> (&'static str, String, String) {
    (kind, name.to_string(), field.to_string())
}

#[test]
fn every_independent_mistake_is_reported_in_reading_order() {
    let errs = errors(NINE_MISTAKES);
    assert_eq!(
        fields(&errs),
        [
            f("Queue", "a", "spec.resources.gpu.quota"),
            f("Queue", "a", "spec.resources.gpu.overQuotaWeight"),
            f("Queue", "b", "spec.preemptMinRuntime"),
            f("Node", "n1", "status.allocatable.nvidia.com/gpu"),
            f("PodGroup", "ns/pg", "spec.preemptibility"),
            f("PodGroup", "ns/pg", "spec.minMember"),
            f(
                "PodGroup",
                "ns/pg",
                "metadata.annotations.kai.scheduler/stale-podgroup-timestamp"
            ),
            f("Pod", "ns/p-0", "metadata.annotations.gpu-fraction"),
            f("Pod", "ns/p-1", "metadata.deletionTimestamp"),
        ]
    );
    // Display: one problem per line, each naming kind, name and field.
    let text = errs.to_string();
    assert_eq!(text.lines().count(), 9);
    assert_eq!(
        text.lines().next(),
        Some(r#"Queue "a": spec.resources.gpu.quota: negative value other than -1"#)
    );
    assert_eq!(
        text.lines().nth(7),
        Some(r#"Pod "ns/p-0": metadata.annotations.gpu-fraction: must be in (0, 1]"#)
    );
}

#[test]
fn one_mistake_is_a_one_element_list() {
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns, labels: {kai.scheduler/queue: a}, annotations: {gpu-fraction: \"0\"}}\nspec: {containers: [{name: c}]}\nstatus: {phase: Pending}\n";
    let errs = errors(yaml);
    assert_eq!(
        fields(&errs),
        [f("Pod", "ns/p", "metadata.annotations.gpu-fraction")]
    );
}

#[test]
fn a_queue_cycle_is_reported_with_the_field_problems() {
    let yaml = "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: a}\nspec: {parentQueue: b, resources: {gpu: {quota: 1, limit: -5}}}\n---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: b}\nspec: {parentQueue: a}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns, labels: {kai.scheduler/queue: a}}\nspec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: \"-2\"}}}]}\nstatus: {phase: Pending}\n";
    let errs = errors(yaml);
    let text: Vec<String> = errs.iter().map(ToString::to_string).collect();
    assert_eq!(text.len(), 3, "{text:?}");
    assert_eq!(
        text[0],
        r#"Queue "a": spec.resources.gpu.limit: negative value other than -1"#
    );
    assert_eq!(
        text[1],
        r#"Pod "ns/p": resources.requests.nvidia.com/gpu: negative"#
    );
    assert!(
        matches!(
            errs.0[2],
            SnapshotError::Division(gpuquota_rank::division::DivisionError::Cycle { .. })
        ),
        "{}",
        text[2]
    );
}
