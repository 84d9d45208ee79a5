//! `kueue_shares` on manifests: what `status.fairSharing.weightedShare` reports.

use gpuquota_fairshare::shares::{NodeShare, kueue_shares, kueue_shares_unvalidated};
use gpuquota_model::import_str;

const YAML: &str = r#"
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: org}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: research}
spec:
  parentName: org
  fairSharing: {weight: "2"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: vision}
spec:
  cohortName: research
  resourceGroups:
  - coveredResources: [cpu, nvidia.com/gpu]
    flavors:
    - name: a100
      resources:
      - {name: cpu, nominalQuota: "8"}
      - {name: nvidia.com/gpu, nominalQuota: 2}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: prod}
spec:
  cohortName: org
  resourceGroups:
  - coveredResources: [cpu, nvidia.com/gpu]
    flavors:
    - name: a100
      resources:
      - {name: cpu, nominalQuota: "32"}
      - {name: nvidia.com/gpu, nominalQuota: 6}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: lonely}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: a100, resources: [{name: cpu, nominalQuota: "1"}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: implicit-member}
spec:
  cohortName: nobody-declared-me
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: a100, resources: [{name: cpu, nominalQuota: "1"}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: loop-a}
spec: {parentName: loop-b}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: loop-b}
spec: {parentName: loop-a}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: in-loop}
spec:
  cohortName: loop-a
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: a100, resources: [{name: cpu, nominalQuota: "1"}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: big, namespace: vision}
spec:
  queueName: q
  podSets: [{name: main, count: 4, template: {spec: {containers: []}}}]
status:
  admission:
    clusterQueue: vision
    podSetAssignments:
    - name: main
      count: 4
      flavors: {cpu: a100, nvidia.com/gpu: a100}
      resourceUsage: {cpu: "8", nvidia.com/gpu: "4"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: done, namespace: vision}
spec:
  queueName: q
  podSets: [{name: main, count: 1, template: {spec: {containers: []}}}]
status:
  conditions:
  - {type: Finished, status: "True", reason: Succeeded, message: "", lastTransitionTime: "2025-01-01T00:00:00Z"}
  admission:
    clusterQueue: vision
    podSetAssignments:
    - name: main
      flavors: {nvidia.com/gpu: a100}
      resourceUsage: {nvidia.com/gpu: "100"}
"#;

fn share(v: i64, r: Option<&str>) -> Option<NodeShare> {
    Some(NodeShare {
        share: v,
        dominant_resource: r.map(str::to_string),
    })
}

#[test]
fn shares_of_a_hierarchy() {
    let model = import_str("m.yaml", YAML).unwrap().model;
    // The fixture has a cohort cycle, which the validated entry point refuses.
    let e = kueue_shares(&model).unwrap_err().to_string();
    assert!(
        e.contains("Cohort \"loop-a\": spec.parentName: Invalid value: \"loop-b\": cohort cycle: loop-a -> loop-b -> loop-a"),
        "{e}"
    );
    let r = kueue_shares_unvalidated(&model).unwrap();
    // vision borrows 2 GPUs; lendable at research = potentialAvailable(research) = 8 GPUs
    // (research has no limits: 0 local + org's 8) → 2000 / 8 = 250. cpu is within nominal.
    assert_eq!(
        r.cluster_queues["vision"],
        share(250, Some("nvidia.com/gpu"))
    );
    // research (weight 2) borrows 2 of org's 8 → 250 / 2 = 125.
    assert_eq!(r.cohorts["research"], share(125, Some("nvidia.com/gpu")));
    assert_eq!(r.cohorts["org"], share(0, None));
    assert_eq!(r.cluster_queues["prod"], share(0, None));
    assert_eq!(r.cluster_queues["lonely"], share(0, None));
    assert_eq!(r.cluster_queues["implicit-member"], share(0, None));
    // Implicit cohorts have no object and no status.
    assert!(!r.cohorts.contains_key("nobody-declared-me"));
    // A cohort cycle disables the tree: no share.
    assert_eq!(r.cluster_queues["in-loop"], None);
    assert_eq!(r.cohorts["loop-a"], None);
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["clusterQueues"]["vision"]["share"], 250);
    assert_eq!(
        json["clusterQueues"]["vision"]["dominantResource"],
        "nvidia.com/gpu"
    );
    assert_eq!(json["clusterQueues"]["in-loop"], serde_json::Value::Null);
    assert_eq!(
        json["cohorts"]["org"]["dominantResource"],
        serde_json::Value::Null
    );
}

#[test]
fn invalid_weight_is_reported_with_the_object() {
    let yaml = r#"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: bad}
spec:
  cohortName: c
  fairSharing: {weight: "-1"}
"#;
    let model = import_str("m.yaml", yaml).unwrap().model;
    let e = kueue_shares(&model).unwrap_err().to_string();
    assert!(e.contains("ClusterQueue \"bad\""), "{e}");
    assert!(e.contains("fairSharing.weight"), "{e}");
}
