//! Fixtures shared by the simulator's integration tests (`mod common;`): file readers, the
//! one-node KAI platform, pods, budgets and the `Simulation` document. Each test file uses
//! the part it needs.
#![allow(dead_code)]

use std::path::Path;

use serde_json::Value;

/// One hour in ms.
pub(crate) const H: i64 = 3_600_000;

/// A scenario's file reader over in-memory files, by name; one of the files next to a
/// scenario file.
pub(crate) use gpuquota_testkit::files::{beside, in_memory as files};

/// A file of the crate's `tests/data/traces`.
pub(crate) fn trace_data(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/traces")
        .join(name)
}

/// A KAI platform of one node (`labels`, `allocatable` as YAML flow mappings), department
/// `dept` and its leaf queue `q`, both deserving `quota` GPUs.
pub(crate) fn kai_platform(node: &str, labels: &str, allocatable: &str, quota: u32) -> String {
    format!(
        r#"apiVersion: v1
kind: Node
metadata:
  name: {node}
  labels: {labels}
status: {{allocatable: {allocatable}}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {{name: dept}}
spec: {{resources: {{gpu: {{quota: {quota}, overQuotaWeight: 1, limit: -1}}}}}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {{name: q}}
spec: {{parentQueue: dept, resources: {{gpu: {{quota: {quota}, overQuotaWeight: 1, limit: -1}}}}}}
"#
    )
}

/// A `Budget` document (`spec` a YAML flow mapping).
pub(crate) fn budget(name: &str, spec: &str) -> String {
    format!(
        r#"---
apiVersion: gpuquota.dev/v1alpha1
kind: Budget
metadata: {{name: {name}}}
spec: {spec}
"#
    )
}

/// A one-pod KAI job of queue `q`, `gpus` GPUs, created on 2026-04-01 at `at` (`HH:MM`),
/// running `runtime`.
pub(crate) fn kai_pod(ns: &str, name: &str, at: &str, gpus: u32, runtime: &str) -> String {
    format!(
        r#"---
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: {ns}
  creationTimestamp: "2026-04-01T{at}:00Z"
  labels: {{kai.scheduler/queue: q}}
  annotations: {{gpuquota.dev/runtime: {runtime}}}
spec: {{schedulerName: kai-scheduler, containers: [{{name: c, resources: {{limits: {{nvidia.com/gpu: "{gpus}"}}}}}}]}}
"#
    )
}

/// A `Simulation` of `cluster.yaml` and `jobs.yaml` from 2026-04-01T00:00Z to `end`
/// under `engine`, metered with `metering` (the lines under `metering:`, indented 4).
pub(crate) fn simulation(engine: &str, end: &str, metering: &str) -> String {
    format!(
        r#"apiVersion: gpuquota.dev/v1alpha1
kind: Simulation
metadata: {{name: t}}
spec:
  engine: {engine}
  cluster: [cluster.yaml]
  start: "2026-04-01T00:00:00Z"
  end: "{end}"
  workloads: [{{file: jobs.yaml}}]
  metering:
{metering}"#
    )
}

/// Each workload's first run's `startMs`, in report order.
pub(crate) fn first_starts(j: &Value) -> Vec<i64> {
    j["workloads"]
        .as_array()
        .expect("workloads")
        .iter()
        .map(|w| w["runs"][0]["startMs"].as_i64().expect("a run"))
        .collect()
}

/// A Kueue trace scenario of `tests/data/traces` with `edit` applied to its text.
pub(crate) fn kueue_edited(
    name: &str,
    edit: impl Fn(String) -> String,
) -> gpuquota_sim::Simulation {
    let p = trace_data(name);
    let text = edit(std::fs::read_to_string(&p).unwrap());
    gpuquota_sim::fuzzing::scenario(name, &text, "x", &beside(&p)).expect("valid scenario")
}

/// The warnings of a scenario about quotas (`…quotas not applied…`, `…share…`), as
/// `field: message`.
pub(crate) fn quota_warnings(ws: &gpuquota_model::diag::Diagnostics) -> Vec<String> {
    ws.iter()
        .filter(|d| d.message.contains("quota") || d.message.contains("share"))
        .map(|d| format!("{}: {}", d.field, d.message))
        .collect()
}

/// The quota warnings ([`quota_warnings`]) of trace scenario `name` with `from` replaced by
/// `to` in its text.
pub(crate) fn edited_quota_warnings(name: &str, from: &str, to: &str) -> Vec<String> {
    quota_warnings(
        &kueue_edited(name, |t| t.replace(from, to))
            .kueue()
            .expect("a Kueue scenario")
            .warnings,
    )
}
