//! Failed attempts (`gpuquota.dev/fail-after`) and the Job controller's retries within the
//! admitted Workload (`spec.backoffLimit`, pod-failure back-off 10 s doubling); hand-checked
//! times on one ClusterQueue of 1 GPU.

use crate::common;

use common::H;
use serde_json::Value;

const START: &str = "2026-04-01T00:00:00Z";

/// A ClusterQueue of 1 GPU, Job `train` (1 pod of 1 GPU, 3 h) at 0 with `backoffLimit`
/// (unset: `None`) and the annotation `fail-after`, and a Workload `next` (1 GPU, 1 h) at
/// 0 that waits for it.
fn sim(backoff_limit: Option<u32>, fail_after: &str) -> Value {
    let limit = backoff_limit.map_or(String::new(), |l| format!("backoffLimit: {l}, "));
    let cluster = format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {{name: one}}\n---\n\
         apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: cq}}\nspec:\n  namespaceSelector: {{}}\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors: [{{name: one, resources: [{{name: nvidia.com/gpu, nominalQuota: 1}}]}}]\n---\n\
         apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: lq, namespace: ns}}\nspec: {{clusterQueue: cq}}\n---\n\
         apiVersion: batch/v1\nkind: Job\nmetadata: {{name: train, namespace: ns, creationTimestamp: \"{START}\", labels: {{kueue.x-k8s.io/queue-name: lq}}, annotations: {{gpuquota.dev/runtime: 3h, gpuquota.dev/fail-after: \"{fail_after}\"}}}}\n\
         spec: {{{limit}parallelism: 1, suspend: true, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: \"1\"}}}}}}]}}}}}}\n---\n\
         apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: next, namespace: ns, creationTimestamp: \"2026-04-01T00:00:01Z\", annotations: {{gpuquota.dev/runtime: 1h}}}}\n\
         spec:\n  queueName: lq\n  podSets: [{{name: main, count: 1, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: \"1\"}}}}}}]}}}}}}]\n"
    );
    let text = format!(
        "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {{name: t}}\nspec:\n  engine: kueue\n  cluster: [c.yaml]\n  start: \"{START}\"\n  end: \"2026-04-01T12:00:00Z\"\n"
    );
    let sim = gpuquota_sim::fuzzing::scenario(
        "t.yaml",
        &text,
        "t",
        &common::files(vec![("c.yaml", cluster)]),
    )
    .expect("valid scenario");
    gpuquota_sim::fuzzing::run_kueue(&sim)
        .expect("simulates")
        .to_json()
}

/// (start, end, how) of each run of the workload whose key starts with `prefix`.
fn runs(j: &Value, prefix: &str) -> Vec<(i64, i64, String)> {
    let w = j["workloads"]
        .as_array()
        .expect("workloads")
        .iter()
        .find(|w| {
            w["workload"]
                .as_str()
                .is_some_and(|k| k.starts_with(prefix))
        })
        .unwrap_or_else(|| panic!("{prefix} in {}", j["workloads"]));
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

const S: i64 = 1_000;

/// `backoffLimit: 2`, attempts failing after 1 h and 1 h: attempt 1 runs 0–1 h and fails,
/// the Job controller waits 10 s, attempt 2 runs 1 h 10 s – 2 h 10 s and fails, it waits 20 s,
/// attempt 3 runs its whole 3 h from 2 h 30 s to 5 h 30 s. The Workload stays admitted
/// throughout (one run, 0 – 5 h 30 s, `Finished`), so `next` is admitted only at 5 h 30 s.
/// Two failed attempts, two retries, 2 × 1 h × 1 GPU = 2 GPU-hours lost, the Job did not
/// fail.
#[test]
fn failed_pods_are_retried_within_the_admitted_workload() {
    let j = sim(Some(2), "1h,1h");
    let end = 5 * H + 30 * S;
    assert_eq!(runs(&j, "ns/job-train-"), vec![(0, end, "Finished".into())]);
    assert_eq!(runs(&j, "ns/next"), vec![(end, end + H, "Finished".into())]);
    let f = &j["failures"];
    assert_eq!(f.as_array().map(Vec::len), Some(1), "{f}");
    assert!(
        f[0]["workload"]
            .as_str()
            .is_some_and(|k| k.starts_with("ns/job-train-"))
    );
    assert_eq!(f[0]["failedAttempts"], 2);
    assert_eq!(f[0]["retries"], 2);
    assert_eq!(f[0]["failedMs"], Value::Null);
    assert_eq!(f[0]["lostGpuHours"], "2.000000");
}

/// `backoffLimit: 1`, every attempt failing after 1 h: attempt 1 fails at 1 h (1 failure ≤ 1:
/// retried after 10 s), attempt 2 fails at 2 h 10 s (2 failures > 1): the Job fails, the
/// Workload finishes (reason `Failed`) and releases its GPU; `next` runs from 2 h 10 s.
#[test]
fn a_job_over_its_backoff_limit_fails_and_releases_its_quota() {
    let j = sim(Some(1), "1h,1h,1h");
    let failed = 2 * H + 10 * S;
    assert_eq!(
        runs(&j, "ns/job-train-"),
        vec![(0, failed, "Finished".into())]
    );
    assert_eq!(
        runs(&j, "ns/next"),
        vec![(failed, failed + H, "Finished".into())]
    );
    let f = &j["failures"][0];
    assert_eq!(f["failedAttempts"], 2);
    assert_eq!(f["retries"], 1);
    assert_eq!(f["failedMs"], failed);
    assert_eq!(f["lostGpuHours"], "2.000000");
}

/// Without `backoffLimit` the Kubernetes default 6 applies: one failure after 30 min is
/// retried after 10 s; the second attempt runs 3 h: 30 min 10 s + 3 h. Lost: 0.5 GPU-hours.
/// An attempt whose runtime ends before its `fail-after` succeeds (`5h` > 3 h: no failure).
#[test]
fn the_default_backoff_limit_is_six_and_a_late_failure_never_comes() {
    let j = sim(None, "30m");
    let end = 3 * H + 30 * 60 * S + 10 * S;
    assert_eq!(runs(&j, "ns/job-train-"), vec![(0, end, "Finished".into())]);
    assert_eq!(j["failures"][0]["retries"], 1);
    assert_eq!(j["failures"][0]["lostGpuHours"], "0.500000");
    let j = sim(None, "5h");
    assert_eq!(
        runs(&j, "ns/job-train-"),
        vec![(0, 3 * H, "Finished".into())]
    );
    assert!(j.get("failures").is_none(), "no failure, no section");
}

/// A bad `fail-after` entry is refused with the annotation named.
#[test]
fn a_bad_fail_after_is_refused() {
    let cluster = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w, namespace: ns, annotations: {gpuquota.dev/fail-after: \"1h,never\"}}\nspec:\n  queueName: lq\n  podSets: [{name: main, count: 1, template: {spec: {containers: []}}}]\n";
    let text = format!(
        "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {{name: t}}\nspec:\n  engine: kueue\n  cluster: [c.yaml]\n  start: \"{START}\"\n"
    );
    let err = gpuquota_sim::fuzzing::scenario(
        "t.yaml",
        &text,
        "t",
        &common::files(vec![("c.yaml", cluster.to_owned())]),
    )
    .expect_err("refused");
    let text = format!("{err:?}");
    assert!(
        text.contains("metadata.annotations[gpuquota.dev/fail-after]"),
        "{text}"
    );
    assert!(text.contains("\\\"never\\\""), "{text}");
}
