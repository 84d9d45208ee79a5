//! `sim diff` across engines: a KAI run against a KAI run and a Kueue run against a KAI
//! run of the same platform, with hand-checked figures.
//!
//! The jobs, in namespace `q` (the department, and the queue named like it): `a` 4 GPUs
//! for 2 h and `b` 4 GPUs for 1 h, both at 00:00, and `c` 8 GPUs for 1 h at 00:30; the
//! run ends at 06:00.

use crate::common;

use gpuquota_sim::diff::{self, Simulated};
use gpuquota_sim::{Simulation, SimulationReport};
use serde_json::{Value, json};

const END: &str = "2026-04-01T06:00:00Z";

fn kai_jobs() -> String {
    [
        common::kai_pod("q", "a", "00:00", 4, "2h"),
        common::kai_pod("q", "b", "00:00", 4, "1h"),
        common::kai_pod("q", "c", "00:30", 8, "1h"),
    ]
    .concat()
}

/// One node of `gpus` GPUs; queues `dept` and its leaf `q`, both deserving `gpus`.
fn kai(gpus: u32) -> (Simulation, SimulationReport) {
    let cluster = common::kai_platform(
        "node",
        "{}",
        &format!(r#"{{nvidia.com/gpu: "{gpus}", cpu: "64", memory: 512Gi}}"#),
        gpus,
    );
    run("kai", cluster, kai_jobs())
}

/// ClusterQueue `q` with a nominal quota of 8 GPUs, its LocalQueue in namespace `q`, and
/// the same three jobs as Workloads.
fn kueue() -> (Simulation, SimulationReport) {
    let cluster = r#"apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: q}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: default, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: q}
spec: {clusterQueue: q}
"#;
    let workload = |name: &str, at: &str, gpus: u32, runtime: &str| {
        format!(
            "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata:\n  name: {name}\n  namespace: q\n  creationTimestamp: \"2026-04-01T{at}:00Z\"\n  annotations: {{gpuquota.dev/runtime: {runtime}}}\nspec:\n  queueName: lq\n  podSets: [{{name: main, count: {gpus}, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: \"1\"}}}}}}]}}}}}}]\n"
        )
    };
    let jobs = [
        workload("a", "00:00", 4, "2h"),
        workload("b", "00:00", 4, "1h"),
        workload("c", "00:30", 8, "1h"),
    ]
    .concat();
    run("kueue", cluster.to_owned(), jobs)
}

fn run(engine: &str, cluster: String, jobs: String) -> (Simulation, SimulationReport) {
    let text = format!(
        "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {{name: {engine}}}\nspec:\n  engine: {engine}\n  cluster: [cluster.yaml]\n  start: \"2026-04-01T00:00:00Z\"\n  end: \"{END}\"\n  workloads: [{{file: jobs.yaml}}]\n"
    );
    let read = common::files(vec![("cluster.yaml", cluster), ("jobs.yaml", jobs)]);
    let sim = gpuquota_sim::fuzzing::scenario("t.yaml", &text, "t", &read).expect("scenario");
    let report = gpuquota_sim::simulate(&sim).expect("runs");
    (sim, report)
}

fn doc(a: &(Simulation, SimulationReport), b: &(Simulation, SimulationReport)) -> Value {
    let ra = Simulated::of(&a.0, &a.1).expect("a run");
    let rb = Simulated::of(&b.0, &b.1).expect("a run");
    diff::diff_runs(ra, rb).to_json()
}

#[test]
fn kai_against_kai_per_department() {
    // 8 GPUs: a and b fill the node at 00:00; c (8 GPUs, 00:30) waits for a's end at
    // 02:00: waits 0, 0 and 1.5 h: mean 5,400,000 / 3 = 1,800,000 ms, p95 (nearest rank 3
    // of 3) 5,400,000. 12 GPUs: c fits beside a once b ends at 01:00:
    // waits 0, 0, 30 min: mean 600,000, p95 1,800,000.
    // GPU-hours in both: 4 × 2 + 4 × 1 + 8 × 1 = 20; of queue q's deserved 8 (12) GPUs
    // over 6 h: 20 / 48 = 41.7 %, 20 / 72 = 27.8 %.
    let d = doc(&kai(8), &kai(12));
    assert_eq!(d["a"], "kai");
    assert_eq!(
        d["workloads"],
        json!({"same": true, "onlyInA": 0, "onlyInB": 0, "changed": 0, "first": null})
    );
    let q = &d["departments"]["q"];
    assert_eq!(
        q["gpuHours"],
        json!({"a": "20.000000", "b": "20.000000", "delta": "0.000000"})
    );
    assert_eq!(
        q["meanTimeToAdmissionMs"],
        json!({"a": 1_800_000, "b": 600_000, "delta": -1_200_000})
    );
    assert_eq!(
        q["p95TimeToAdmissionMs"],
        json!({"a": 5_400_000, "b": 1_800_000, "delta": -3_600_000})
    );
    assert_eq!(q["preemptions"], json!({"a": 0, "b": 0, "delta": 0}));
    assert_eq!(
        q["lostHours"],
        json!({"a": "0.000000", "b": "0.000000", "delta": "0.000000"})
    );
    assert_eq!(
        q["utilizationPercent"],
        json!({"a": 41.7, "b": 27.8, "delta": -13.9})
    );
    // KAI has no borrowed figure without a bill, and no bill without spec.metering
    assert_eq!(
        q["borrowedHours"],
        json!({"a": null, "b": null, "delta": null})
    );
    assert_eq!(q["cost"], json!({"a": null, "b": null, "delta": null}));
    assert_eq!(d["departments"].as_object().map(|m| m.len()), Some(1));
}

#[test]
fn kueue_against_kai_of_the_same_platform() {
    // Kueue admits as the KAI session allocates here: a and b at 00:00, c once a ends at
    // 02:00, so every figure both engines have is equal; the borrowed hours (0 under Kueue:
    // usage never exceeds the nominal 8) are Kueue's only.
    let (k, kai8) = (kueue(), kai(8));
    let d = doc(&k, &kai8);
    assert_eq!(d["a"], "kueue");
    assert_eq!(d["workloads"]["same"], true);
    let q = &d["departments"]["q"];
    assert_eq!(
        q["gpuHours"],
        json!({"a": "20.000000", "b": "20.000000", "delta": "0.000000"})
    );
    assert_eq!(
        q["meanTimeToAdmissionMs"],
        json!({"a": 1_800_000, "b": 1_800_000, "delta": 0})
    );
    assert_eq!(
        q["utilizationPercent"],
        json!({"a": 41.7, "b": 41.7, "delta": 0.0})
    );
    assert_eq!(
        q["borrowedHours"],
        json!({"a": "0.000000", "b": null, "delta": null})
    );
    let table = diff::table(&diff::diff_runs(
        Simulated::of(&k.0, &k.1).expect("a run"),
        Simulated::of(&kai8.0, &kai8.1).expect("a run"),
    ));
    assert!(
        table.contains(
            "  borrowedHours                    0.000000                -                -\n"
        ),
        "{table}"
    );
    // the other way round: the departments are A's (the Kueue run's) either way
    let back = doc(&kai8, &k);
    assert_eq!(
        back["departments"]["q"]["borrowedHours"],
        json!({"a": null, "b": "0.000000", "delta": null})
    );
}

#[test]
fn kueue_against_kai_compares_arrival_and_runtime_only() {
    // a KAI job with another runtime is a changed workload; pod sets are not compared
    // across engines (a Workload's pod sets and a PodGroup's pods are different objects)
    let jobs = kai_jobs().replace("gpuquota.dev/runtime: 1h}", "gpuquota.dev/runtime: 90m}");
    let cluster = common::kai_platform(
        "node",
        "{}",
        r#"{nvidia.com/gpu: "8", cpu: "64", memory: 512Gi}"#,
        8,
    );
    let other = run("kai", cluster, jobs);
    let d = doc(&kueue(), &other);
    assert_eq!(
        d["workloads"],
        json!({"same": false, "onlyInA": 0, "onlyInB": 0, "changed": 2, "first": "q/b"})
    );
}

#[test]
fn the_plot_has_both_engines_panels() {
    let (k, kai8) = (kueue(), kai(8));
    let svg = diff::svg_runs(
        Simulated::of(&k.0, &k.1).expect("a run"),
        Simulated::of(&kai8.0, &kai8.1).expect("a run"),
    )
    .expect("plots");
    assert!(svg.contains("kueue: GPUs in use per department"), "{svg}");
    assert!(svg.contains("kai: GPUs in use per department"));
}

#[test]
fn one_plot_entry_draws_either_engine() {
    let (k, kai8) = (kueue(), kai(8));
    let of = |r: &(Simulation, SimulationReport)| {
        gpuquota_sim::plot::svg_of(Simulated::of(&r.0, &r.1).expect("a run")).expect("plots")
    };
    let kueue_svg = of(&k);
    let kai_svg = of(&kai8);
    // each engine's own picture: Kueue's usage per queue, KAI's allocation against fair share
    assert_eq!(
        kueue_svg,
        gpuquota_sim::plot::svg(k.0.kueue().unwrap(), k.1.kueue().unwrap()).unwrap()
    );
    assert_eq!(
        kai_svg,
        gpuquota_sim::kai::plot::svg(kai8.0.kai().unwrap(), kai8.1.kai().unwrap()).unwrap()
    );
}
