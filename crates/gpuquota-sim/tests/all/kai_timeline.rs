//! `spec.timeline` on a KAI scenario: Queue changes take effect at the next session, as in
//! KAI (the scheduler reads its Queues from each session's snapshot); running jobs stay
//! when a Queue's quota or limit falls; node events are refused.

use serde_json::Value;

use crate::common::{self, H};

const M: i64 = 60_000;

/// One 8-GPU node; department `dept` (8 deserved) over `q` (2 deserved, limit 2) and `q2`
/// (4 deserved, no limit, nothing to run).
fn cluster() -> String {
    r#"apiVersion: v1
kind: Node
metadata: {name: gpu-a}
status: {allocatable: {nvidia.com/gpu: "8", cpu: "64", memory: 512Gi}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: dept}
spec: {resources: {gpu: {quota: 8, overQuotaWeight: 1, limit: -1}}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: q}
spec: {parentQueue: dept, resources: {gpu: {quota: 2, overQuotaWeight: 1, limit: 2}}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: q2}
spec: {parentQueue: dept, resources: {gpu: {quota: 4, overQuotaWeight: 1, limit: -1}}}
"#
    .to_owned()
}

/// A 10-minute session, 6 h, the cluster and the jobs, and `timeline` (lines indented 2).
fn scenario(timeline: &str) -> String {
    format!(
        r#"apiVersion: gpuquota.dev/v1alpha1
kind: Simulation
metadata: {{name: t}}
spec:
  engine: kai
  cluster: [cluster.yaml]
  start: "2026-04-01T00:00:00Z"
  end: "2026-04-01T06:00:00Z"
  kai: {{sessionInterval: 10m}}
  workloads: [{{file: jobs.yaml}}]
  timeline:
{timeline}"#
    )
}

fn load(timeline: &str) -> Result<gpuquota_sim::Simulation, gpuquota_model::diag::Diagnostics> {
    let jobs = common::kai_pod("ns", "j1", "00:00", 4, "3h")
        + &common::kai_pod("ns", "j2", "02:00", 2, "1h");
    let read = common::files(vec![("cluster.yaml", cluster()), ("jobs.yaml", jobs)]);
    gpuquota_sim::fuzzing::scenario("t.yaml", &scenario(timeline), "t", &read)
}

fn run(timeline: &str) -> Value {
    let sim = load(timeline).expect("scenario");
    gpuquota_sim::fuzzing::run_kai(&sim)
        .expect("runs")
        .to_json()
}

fn job<'v>(v: &'v Value, name: &str) -> &'v Value {
    v["workloads"]
        .as_array()
        .expect("workloads")
        .iter()
        .find(|w| w["workload"].as_str().is_some_and(|s| s.ends_with(name)))
        .unwrap_or_else(|| panic!("{name} in {v}"))
}

/// j1 (4 GPUs, 3 h) waits for `q`'s limit of 2. At 1h05m `q` is raised to quota 4, limit 8:
/// the change waits for the next session, 1h10m (sessions every 10 min), where j1 starts;
/// it ends at 4h10m. At 2h `q` falls to quota 2, limit 4: j1 (4 GPUs) keeps running, and
/// j2 (2 GPUs, created at 2h), which fits the node's 4 free GPUs and would start at 2h
/// under the raised limit, waits for j1's end: it starts at 4h10m and ends at 5h10m.
#[test]
fn queue_changes_take_effect_at_the_next_session() {
    let raise = "  - at: 1h5m\n    patch:\n    - {kind: Queue, name: q, mergePatch: {spec: {resources: {gpu: {quota: 4, limit: 8}}}}}\n";
    let lower = "  - at: 2h\n    patch:\n    - {kind: Queue, name: q, mergePatch: {spec: {resources: {gpu: {quota: 2, limit: 4}}}}}\n";
    let v = run(&format!("{raise}{lower}"));
    let j1 = job(&v, "j1");
    assert_eq!(j1["runs"].as_array().map(Vec::len), Some(1), "{j1}");
    assert_eq!(j1["runs"][0]["startMs"], H + 10 * M);
    assert_eq!(j1["finishedMs"], 4 * H + 10 * M);
    let j2 = job(&v, "j2");
    assert_eq!(j2["runs"].as_array().map(Vec::len), Some(1), "{j2}");
    assert_eq!(j2["runs"][0]["startMs"], 4 * H + 10 * M);
    assert_eq!(j2["finishedMs"], 5 * H + 10 * M);
    assert_eq!(v["evictions"], serde_json::json!({}));
    // Only the raise: j2 starts when it is created, beside j1.
    let v = run(raise);
    assert_eq!(job(&v, "j1")["runs"][0]["startMs"], H + 10 * M);
    assert_eq!(job(&v, "j2")["runs"][0]["startMs"], 2 * H);
    // Without a timeline j1 never starts (q's limit is 2).
    let v = run("    []\n");
    assert_eq!(job(&v, "j1")["runs"], serde_json::json!([]));
}

/// Node events, MIG layouts and changes of other kinds are not simulated on a KAI
/// scenario: `not-simulated`, naming the event's field.
#[test]
fn node_events_and_other_kinds_are_refused() {
    let e = load("  - at: 1h\n    nodes: {down: [gpu-a]}\n").expect_err("refused");
    let got: Vec<(&str, &str)> = e
        .iter()
        .filter(|d| d.severity == gpuquota_model::diag::Severity::Error)
        .map(|d| (d.code.as_str(), d.field.as_str()))
        .collect();
    assert_eq!(got, [("not-simulated", "spec.timeline[0].nodes")]);
    let e = load("  - at: 1h\n    delete: [{kind: Queue, name: q2}]\n").expect_err("refused");
    let got: Vec<(&str, &str)> = e
        .iter()
        .map(|d| (d.code.as_str(), d.field.as_str()))
        .collect();
    assert_eq!(got, [("not-simulated", "spec.timeline[0].delete[0]")]);
    // an unknown Queue is the common reader's error
    let e = load("  - at: 1h\n    patch: [{kind: Queue, name: nope, mergePatch: {spec: {}}}]\n")
        .expect_err("unknown");
    assert!(
        e.iter()
            .any(|d| d.field.starts_with("spec.timeline[0].patch[0]")),
        "{e:?}"
    );
}

/// A Queue moved in the tree (a new parent) is a change the live cluster cannot take in
/// place: the run stops with `not-simulated`, naming the queue.
#[test]
fn a_queue_moved_in_the_tree_is_refused_when_reached() {
    let sim = load("  - at: 1h\n    patch: [{kind: Queue, name: q2, mergePatch: {spec: {parentQueue: null}}}]\n")
        .expect("read");
    let e = gpuquota_sim::fuzzing::run_kai(&sim).expect_err("refused");
    let text = format!("{e:?}");
    assert!(text.contains("not-simulated"), "{text}");
    assert!(text.contains("Queue(s) q2 created or moved"), "{text}");
}
