//! Partial completion (`gpuquota.dev/pod-runtimes`): a PodSet's pods finishing one by one
//! release their share of the quota (upstream's reclaimable pods); hand-checked times.

use crate::common;

use common::H;
use serde_json::Value;

const START: &str = "2026-04-01T00:00:00Z";

fn workload(name: &str, at: &str, count: u32, ann: &str) -> String {
    format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: {name}, namespace: ns, creationTimestamp: \"2026-04-01T{at}Z\", annotations: {{{ann}}}}}\nspec:\n  queueName: lq\n  podSets: [{{name: main, count: {count}, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: \"1\"}}}}}}]}}}}}}]\n"
    )
}

fn sim(workloads: &[String]) -> Result<Value, String> {
    let mut d = vec![
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: one}\n".to_owned(),
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors: [{name: one, resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}]\n".to_owned(),
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq, namespace: ns}\nspec: {clusterQueue: cq}\n".to_owned(),
    ];
    d.extend(workloads.iter().cloned());
    let text = format!(
        "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {{name: t}}\nspec:\n  engine: kueue\n  cluster: [c.yaml]\n  start: \"{START}\"\n  end: \"2026-04-01T12:00:00Z\"\n"
    );
    let sim = gpuquota_sim::fuzzing::scenario(
        "t.yaml",
        &text,
        "t",
        &common::files(vec![("c.yaml", d.join("---\n"))]),
    )
    .map_err(|e| format!("{e:?}"))?;
    Ok(gpuquota_sim::fuzzing::run_kueue(&sim)
        .expect("simulates")
        .to_json())
}

/// (start, end, how) of each run of `ns/name`.
fn runs(j: &Value, name: &str) -> Vec<(i64, i64, String)> {
    let w = j["workloads"]
        .as_array()
        .expect("workloads")
        .iter()
        .find(|w| w["workload"] == format!("ns/{name}"))
        .unwrap_or_else(|| panic!("{name}"));
    w["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| {
            (
                r["startMs"].as_i64().expect("start"),
                r["endMs"].as_i64().expect("end"),
                r["end"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// A ClusterQueue of 4 GPUs. `job` (4 pods × 1 GPU, pod runtimes 1 h, 2 h, 2 h, 3 h; no
/// `gpuquota.dev/runtime`, so it ends with its last pod at 3 h) takes them all at 0. `wait`
/// (2 GPUs, 1 h, created 00:01) and `small` (1 GPU, 30 min, created 00:02) queue behind it.
///
/// - 1 h: one pod ends, 1 GPU is reclaimed: `wait` (2) does not fit, `small` (1) is
///   admitted and runs to 1 h 30 m.
/// - 1 h 30 m: `small` ends; 1 GPU free, `wait` still does not fit.
/// - 2 h: two more pods end: 3 GPUs free, `wait` is admitted and runs to 3 h.
/// - 3 h: `job`'s last pod ends, the job finishes.
///
/// Without the pod runtimes (`gpuquota.dev/runtime: 3h`) both wait to 3 h.
#[test]
fn finished_pods_release_their_quota_one_by_one() {
    let rest = [
        workload("wait", "00:01:00", 2, "gpuquota.dev/runtime: 1h"),
        workload("small", "00:02:00", 1, "gpuquota.dev/runtime: 30m"),
    ];
    let mut w = vec![workload(
        "job",
        "00:00:00",
        4,
        "gpuquota.dev/pod-runtimes: \"1h,2h,2h,3h\"",
    )];
    w.extend(rest.iter().cloned());
    let j = sim(&w).expect("valid");
    assert_eq!(runs(&j, "job"), vec![(0, 3 * H, "Finished".into())]);
    assert_eq!(runs(&j, "small"), vec![(H, H + H / 2, "Finished".into())]);
    assert_eq!(runs(&j, "wait"), vec![(2 * H, 3 * H, "Finished".into())]);

    let mut w = vec![workload("job", "00:00:00", 4, "gpuquota.dev/runtime: 3h")];
    w.extend(rest.iter().cloned());
    let j = sim(&w).expect("valid");
    assert_eq!(
        runs(&j, "small"),
        vec![(3 * H, 3 * H + H / 2, "Finished".into())]
    );
    assert_eq!(runs(&j, "wait"), vec![(3 * H, 4 * H, "Finished".into())]);
}

/// One runtime per pod: a list of another length, or a bad duration, is refused naming the
/// annotation.
#[test]
fn pod_runtimes_are_validated() {
    let err = sim(&[workload(
        "job",
        "00:00:00",
        4,
        "gpuquota.dev/pod-runtimes: \"1h,2h\"",
    )])
    .expect_err("refused");
    assert!(
        err.contains("metadata.annotations[gpuquota.dev/pod-runtimes]"),
        "{err}"
    );
    assert!(
        err.contains("2 pod runtimes for a PodSet of 4 pods"),
        "{err}"
    );
    let err = sim(&[workload(
        "job",
        "00:00:00",
        2,
        "gpuquota.dev/pod-runtimes: \"1h,later\"",
    )])
    .expect_err("refused");
    assert!(err.contains("\\\"later\\\""), "{err}");
}
