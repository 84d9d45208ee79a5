//! Dynamic Resource Allocation under KAI: GPUs claimed through ResourceClaims count against
//! the queue as GPUs and are placed only on nodes whose ResourceSlices offer GPUs
//! (NVIDIA/KAI-Scheduler: pkg/common/resources/dra.go, dra_node_resources.go).

use std::fmt::Write as _;

use gpuquota_rank::session::{Reason, SessionOptions};
use gpuquota_rank::testkit::run_session;

use crate::scenarios::Sc;

const TEMPLATE: &str = "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: six-gpus, namespace: ns}\nspec:\n  spec:\n    devices:\n      requests:\n      - name: gpus\n        exactly: {deviceClassName: gpu.nvidia.com, allocationMode: ExactCount, count: 6}\n";

/// A PodGroup `ns/train` of one pod taking the six-GPU template.
fn claiming_job(sc: &mut Sc) {
    sc.yaml.push_str(TEMPLATE);
    sc.yaml.push_str("---\napiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: train, namespace: ns, creationTimestamp: \"2025-01-01T00:01:00Z\"}\nspec: {queue: q, minMember: 1, priorityClassName: train}\n");
    sc.yaml.push_str("---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: train-0\n  namespace: ns\n  creationTimestamp: \"2025-01-01T00:01:00Z\"\n  labels: {kai.scheduler/queue: q}\n  annotations: {pod-group-name: train}\nspec:\n  resourceClaims:\n  - {name: gpus, resourceClaimTemplateName: six-gpus}\n  containers: [{name: c, resources: {claims: [{name: gpus}]}}]\nstatus: {phase: Pending}\n");
}

fn slice(sc: &mut Sc, node: &str, devices: usize) {
    let _ = write!(
        sc.yaml,
        "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {{name: {node}-gpus}}\nspec:\n  driver: gpu.nvidia.com\n  nodeName: {node}\n  pool: {{name: {node}, generation: 1, resourceSliceCount: 1}}\n  devices:\n"
    );
    for i in 0..devices {
        let _ = writeln!(sc.yaml, "  - name: gpu-{i}");
    }
}

#[test]
fn claimed_gpus_count_against_the_queue_limit() {
    // six claimed GPUs against a queue limited to 1 GPU, on a node without GPUs: over limit
    let mut sc = Sc::default();
    sc.queue("q", None, 1.0, 1.0, 1.0, 100).node("n1", 0);
    claiming_job(&mut sc);
    let r = run_session(&sc.cluster(None), &SessionOptions::default()).unwrap();
    assert!(r.allocated.is_empty(), "{:?}", r.allocated);
    assert_eq!(r.pending.len(), 1);
    assert_eq!(r.pending[0].reason, Reason::OverLimit);
    assert_eq!(
        r.pending[0].message,
        "queue q would exceed its gpu limit: allocated 0 + requested 6 > limit 1 (deserved 1)"
    );
}

#[test]
fn claimed_gpus_land_only_where_resource_slices_offer_them() {
    // n1 and n2 advertise no device-plugin GPUs; only n2's ResourceSlice offers 8 GPUs
    let mut sc = Sc::default();
    sc.queue("q", None, 8.0, 1.0, -1.0, 100)
        .node("n1", 0)
        .node("n2", 0);
    slice(&mut sc, "n2", 8);
    claiming_job(&mut sc);
    let r = run_session(&sc.cluster(None), &SessionOptions::default()).unwrap();
    assert_eq!(r.allocated.len(), 1, "{:?}", r.pending);
    assert_eq!(r.allocated[0].pods[0].1.as_deref(), Some("n2"));
    // without any slice no node has GPUs: the pod stays pending
    let mut sc = Sc::default();
    sc.queue("q", None, 8.0, 1.0, -1.0, 100).node("n1", 0);
    claiming_job(&mut sc);
    let r = run_session(&sc.cluster(None), &SessionOptions::default()).unwrap();
    assert!(r.allocated.is_empty());
    assert_eq!(r.pending[0].reason, Reason::Unschedulable);
}
