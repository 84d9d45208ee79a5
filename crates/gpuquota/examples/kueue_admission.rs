//! Kueue admission: who a cohort admits, who borrows, who waits and why.
//!
//! Run with `cargo run -p gpuquota --example kueue_admission`.

use gpuquota::kueue::{Input, Options, run};
use gpuquota::model::import_str;

/// Research owns four H200s and lends them; analytics owns none but may borrow up to three.
const MANIFESTS: &str = r#"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h200}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: research}
spec:
  cohortName: gpus
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: h200, resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: analytics}
spec:
  cohortName: gpus
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: h200, resources: [{name: nvidia.com/gpu, nominalQuota: 0, borrowingLimit: 3}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: nightly, namespace: analytics}
spec: {clusterQueue: analytics}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: report, namespace: analytics, creationTimestamp: "2026-03-02T20:00:00Z"}
spec:
  queueName: nightly
  podSets:
  - {name: main, count: 2, template: {spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: 1}}}]}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: backfill, namespace: analytics, creationTimestamp: "2026-03-02T20:05:00Z"}
spec:
  queueName: nightly
  podSets:
  - {name: main, count: 2, template: {spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: 1}}}]}}}
"#;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let imported = import_str("platform.yaml", MANIFESTS)?;
    // The uniform entry point: the checked input from the model, then the run.
    let input = Input::from_model(&imported.model, &Options::default())?;
    let report = run(&input);

    for a in &report.admitted {
        println!(
            "admitted {} in {} (cycle {})",
            a.workload, a.cluster_queue, a.cycle
        );
    }
    for p in &report.pending {
        println!("pending  {}: {} ({})", p.workload, p.reason, p.message);
    }
    // The report borrows two of research's idle cards; a third and fourth would exceed
    // analytics' borrowing limit of three, so the backfill waits.
    assert_eq!(report.admitted[0].workload, "analytics/report");
    assert_eq!(report.pending[0].workload, "analytics/backfill");
    assert_eq!(report.pending[0].reason, "WaitingForQuota");
    Ok(())
}
