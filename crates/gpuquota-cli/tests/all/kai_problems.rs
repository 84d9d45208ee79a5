//! `gpuquota kai fairshare` and `gpuquota kai schedule` on malformed manifests: every problem
//! on stderr, one per line, exit code 1, nothing on stdout.

use std::path::PathBuf;
use std::process::{Command, Output};

fn gpuquota(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpuquota"))
        .args(args)
        .output()
        .expect("the gpuquota binary runs")
}

fn write(test: &str, body: &str) -> String {
    let dir: PathBuf = std::env::temp_dir().join(format!(
        "gpuquota-kai-problems-{test}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join("bad.yaml");
    std::fs::write(&p, body).expect("write fixture");
    p.display().to_string()
}

/// Three independent mistakes in three objects: a Queue quota, a PodGroup minMember and a
/// Pod's `gpu-fraction` annotation.
const THREE_MISTAKES: &str = r#"apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: a}
spec:
  resources:
    gpu: {quota: -3, overQuotaWeight: 1, limit: -1}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: pg, namespace: ns}
spec: {queue: a, minMember: -1}
---
apiVersion: v1
kind: Pod
metadata:
  name: p-0
  namespace: ns
  labels: {kai.scheduler/queue: a}
  annotations: {pod-group-name: pg, gpu-fraction: "1.5"}
spec: {containers: [{name: c}]}
status: {phase: Pending}
"#;

/// The validator's lines (the one validator every engine runs first, so `gpuquota validate`
/// prints the same), in its order.
const EXPECTED: [&str; 3] = [
    r#"error: Pod "ns/p-0": metadata.annotations[gpu-fraction]: Invalid value: "1.5": must be a number greater than 0 and at most 1"#,
    r#"error: Queue "a": spec.resources.gpu.quota: Invalid value: -3: must be -1 (unlimited) or greater than or equal to 0"#,
    r#"error: PodGroup "ns/pg": spec.minMember: Invalid value: -1: must be greater than or equal to 1"#,
];

fn assert_all_reported(out: &Output) {
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines, EXPECTED, "{stderr}");
}

#[test]
fn fairshare_lists_every_problem_and_exits_1() {
    let f = write("fairshare", THREE_MISTAKES);
    assert_all_reported(&gpuquota(&["kai", "fairshare", &f, "--output", "json"]));
}

#[test]
fn schedule_lists_every_problem_and_exits_1() {
    let f = write("schedule", THREE_MISTAKES);
    assert_all_reported(&gpuquota(&["kai", "schedule", &f, "--output", "json"]));
}

/// An orphan queue (parent missing) and a pod that fits: the orphan is a warning (exit 0 with
/// the JSON on stdout); under the global `--strict` the warning is an error: exit 1, the
/// warning printed as `error: …`, nothing on stdout.
const ORPHAN: &str = r#"apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: a}
spec:
  resources:
    gpu: {quota: 1, overQuotaWeight: 1, limit: -1}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: lost}
spec:
  parentQueue: gone
  resources:
    gpu: {quota: 1, overQuotaWeight: 1, limit: -1}
"#;

const ORPHAN_WARNING: &str = r#"Queue "lost": spec.parentQueue: its parent chain reaches a missing queue; dropped with its children, as KAI does"#;

#[test]
fn warnings_pass_without_strict_and_fail_with_it() {
    let f = write("strict", ORPHAN);
    for cmd in ["fairshare", "schedule"] {
        let out = gpuquota(&["kai", cmd, &f, "--output", "json", "--total", "gpu=4"]);
        assert_eq!(out.status.code(), Some(0), "{cmd}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!("warning: {ORPHAN_WARNING}\n")
        );
        assert!(!out.stdout.is_empty());
        let out = gpuquota(&[
            "--strict", "kai", cmd, &f, "--output", "json", "--total", "gpu=4",
        ]);
        assert_eq!(out.status.code(), Some(1), "{cmd}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!("error: {ORPHAN_WARNING}\n")
        );
    }
}

/// A queue chain one level deeper than the workspace's limit (1,000) is an input error
/// naming the queue (exit 1).
#[test]
fn a_too_deep_queue_tree_is_an_error() {
    let mut y = String::new();
    for i in 0..1001 {
        let parent = if i == 0 {
            String::new()
        } else {
            format!("parentQueue: q{:04}, ", i - 1)
        };
        y.push_str(&format!(
            "---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {{name: q{i:04}}}\nspec: {{{parent}resources: {{gpu: {{quota: 1}}}}}}\n"
        ));
    }
    let f = write("deep", &y);
    let out = gpuquota(&["kai", "fairshare", &f, "--output", "json"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(
            r#"error: Queue "q1000": spec.parentQueue: the queue tree is 1001 levels deep"#
        ),
        "{stderr}"
    );
}

/// Run:ai's `runai/queue` label is read by default; `--queue-label-key` (KAI's
/// `queueLabelKey`) makes only the given label count.
#[test]
fn runai_queue_label_and_queue_label_key_flag() {
    let f = write(
        "label",
        r#"apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team-a}
spec: {resources: {gpu: {quota: 2, overQuotaWeight: 1, limit: -1}}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns, labels: {runai/queue: team-a}}
spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]}
status: {phase: Pending}
"#,
    );
    let requested = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec![
            "kai",
            "fairshare",
            &f,
            "--output",
            "json",
            "--total",
            "gpu=4",
        ];
        args.extend_from_slice(extra);
        let out = gpuquota(&args);
        assert_eq!(out.status.code(), Some(0));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        v["queues"]["team-a"]["gpu"]["requested"].clone()
    };
    assert_eq!(requested(&[]), "1");
    assert_eq!(requested(&["--queue-label-key", "acme/queue"]), "0");
    assert_eq!(requested(&["--queue-label-key", "runai/queue"]), "1");
}
