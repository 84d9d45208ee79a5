//! Time-sliced GPUs in the simulator: a node whose NVIDIA device plugin configuration shares
//! its 2 GPUs 4 ways advertises 8 `nvidia.com/gpu`; both engines admit against the 8
//! replicas, and metering counts each replica as a quarter of a GPU.

use crate::common;

use common::{H, files, first_starts, kai_platform, simulation};
use serde_json::Value;

const SHARING: &str = r#"---
apiVersion: v1
kind: ConfigMap
metadata: {name: device-plugin-config, namespace: gpu-operator}
data:
  default: |-
    version: v1
    sharing:
      timeSlicing:
        resources:
        - name: nvidia.com/gpu
          replicas: 4
"#;

#[test]
fn kai_admits_against_the_advertised_replicas() {
    let cluster = kai_platform(
        "l4",
        r#"{nvidia.com/gpu.product: NVIDIA-L4, nvidia.com/gpu.count: "2"}"#,
        r#"{nvidia.com/gpu: "2", cpu: "64", memory: 256Gi}"#,
        8,
    ) + &common::budget(
        "team",
        r#"{queue: q, gpuHours: "100", period: 24h, whenSpent: Notify}"#,
    ) + SHARING;
    let jobs: String = (0..10)
        .map(|i| common::kai_pod("team", &format!("p{i}"), "00:00", 1, "1h"))
        .collect();
    let sim = simulation(
        "kai",
        "2026-04-01T06:00:00Z",
        r#"    currency: EUR
    cardTypes: [{name: L4, model: NVIDIA L4, pricePerHour: "1.00", capacity: 2}]
    departments: [{name: team, namespaces: [team]}]
"#,
    );
    let read = files(vec![("cluster.yaml", cluster), ("jobs.yaml", jobs)]);
    let sim = gpuquota_sim::fuzzing::scenario("t.yaml", &sim, "t", &read).expect("scenario");
    let j = gpuquota_sim::fuzzing::run_kai(&sim)
        .expect("runs")
        .to_json();
    let starts = first_starts(&j);
    // 8 replicas of 2 GPUs: eight pods at once, the other two after the first hour
    assert_eq!(starts.iter().filter(|&&s| s == 0).count(), 8);
    assert_eq!(starts.iter().filter(|&&s| s == H).count(), 2);
    // 10 replica-hours = 2.5 GPU-hours, on the bill and on the budget
    let line = &j["chargeback"]["lines"][0];
    assert_eq!(line["cardType"], "L4");
    assert_eq!(line["allocatedHours"], "2.500000");
    assert_eq!(j["budgets"][0]["periods"][0]["usedGpuHours"], "2.500000");
}

#[test]
fn kueue_admits_against_the_advertised_replicas() {
    // Kueue admits against ClusterQueue quota, not nodes: the quota of the time-sliced
    // flavor is the 8 replicas the node advertises.
    let cluster = String::from(
        r#"apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: l4}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: l4, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: team}
spec: {clusterQueue: team}
"#,
    ) + &common::budget(
        "team",
        r#"{queue: team, gpuHours: "100", period: 24h, whenSpent: Notify}"#,
    ) + SHARING;
    let mut jobs = String::new();
    for i in 0..10 {
        jobs.push_str(&format!(
            r#"---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: w{i}
  namespace: team
  creationTimestamp: "2026-04-01T00:00:00Z"
  annotations: {{gpuquota.dev/runtime: 1h}}
spec:
  queueName: lq
  podSets: [{{name: main, count: 1, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: "1"}}}}}}]}}}}}}]
"#
        ));
    }
    let sim = simulation(
        "kueue",
        "2026-04-01T06:00:00Z",
        r#"    currency: EUR
    cardTypes: [{name: L4, pricePerHour: "1.00", capacity: 2, replicasPerGpu: 4, flavors: [l4]}]
    departments: [{name: team, namespaces: [team]}]
"#,
    );
    let read = files(vec![("cluster.yaml", cluster), ("jobs.yaml", jobs)]);
    let sim = gpuquota_sim::fuzzing::scenario("t.yaml", &sim, "t", &read).expect("scenario");
    let r = gpuquota_sim::fuzzing::run_kueue(&sim).expect("runs");
    let j: Value = r.to_json();
    let starts = first_starts(&j);
    assert_eq!(starts.iter().filter(|&&s| s == 0).count(), 8);
    assert_eq!(starts.iter().filter(|&&s| s == H).count(), 2);
    let line = &j["chargeback"]["lines"][0];
    assert_eq!(line["cardType"], "L4");
    assert_eq!(line["allocatedHours"], "2.500000");
    assert_eq!(j["budgets"][0]["periods"][0]["usedGpuHours"], "2.500000");
}

#[test]
fn a_live_node_without_discovery_labels_admits_its_advertised_replicas_once() {
    // A live node whose plugin already shares its 8 GPUs 4 ways reports 32 `nvidia.com/gpu`
    // and carries no GPU feature discovery labels: 32 pods start at once, not 40 (nor 128).
    let cluster = kai_platform(
        "l4x8",
        r#"{nvidia.com/gpu.product: NVIDIA-L4}"#,
        r#"{nvidia.com/gpu: "32", cpu: "192", memory: 1Ti}"#,
        32,
    ) + SHARING;
    let jobs: String = (0..40)
        .map(|i| common::kai_pod("team", &format!("p{i:02}"), "00:00", 1, "1h"))
        .collect();
    let sim = simulation(
        "kai",
        "2026-04-01T06:00:00Z",
        r#"    currency: EUR
    cardTypes: [{name: L4, model: NVIDIA L4, pricePerHour: "1.00", capacity: 8}]
    departments: [{name: team, namespaces: [team]}]
"#,
    );
    let read = files(vec![("cluster.yaml", cluster), ("jobs.yaml", jobs)]);
    let sim = gpuquota_sim::fuzzing::scenario("t.yaml", &sim, "t", &read).expect("scenario");
    let j = gpuquota_sim::fuzzing::run_kai(&sim)
        .expect("runs")
        .to_json();
    let starts = first_starts(&j);
    assert_eq!(starts.iter().filter(|&&s| s == 0).count(), 32);
    assert_eq!(starts.iter().filter(|&&s| s == H).count(), 8);
    // 40 replica-hours of 4 replicas per GPU = 10 GPU-hours.
    assert_eq!(j["chargeback"]["lines"][0]["allocatedHours"], "10.000000");
}
