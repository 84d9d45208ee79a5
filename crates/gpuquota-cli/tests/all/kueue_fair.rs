//! `gpuquota kueue shares` and `gpuquota kueue schedule` with fair sharing, as a user runs
//! them: JSON contracts, exit codes, streams.

use crate::common;
use common::{gpuquota, text};
use std::process::Output;

/// Writes `files` into a fresh directory named after the test.
fn write(test: &str, files: &[(&str, &str)]) -> Vec<String> {
    common::write_in("kueue-fair", test, files)
}

fn cq(name: &str, extra: &str, nominal: u32) -> String {
    format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {name}}}\nspec:\n  cohortName: org\n  namespaceSelector: {{}}\n{extra}  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors: [{{name: g, resources: [{{name: nvidia.com/gpu, nominalQuota: {nominal}}}]}}]\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: {name}, namespace: ns}}\nspec: {{clusterQueue: {name}}}\n---\n"
    )
}

fn workload(name: &str, queue: &str, gpus: u32, minute: u32, admitted: bool) -> String {
    let mut s = format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: {name}, namespace: ns, creationTimestamp: \"2026-01-01T00:{minute:02}:00Z\"}}\nspec:\n  queueName: {queue}\n  podSets: [{{name: main, count: 1, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: \"{gpus}\"}}}}}}]}}}}}}]\n"
    );
    if admitted {
        s += &format!(
            "status:\n  admission:\n    clusterQueue: {queue}\n    podSetAssignments: [{{name: main, count: 1, flavors: {{nvidia.com/gpu: g}}, resourceUsage: {{nvidia.com/gpu: \"{gpus}\"}}}}]\n"
        );
    }
    s + "---\n"
}

/// Three queues of 4 GPUs in `org`: a runs 6, b runs 4; a's older head and b's head ask 2
/// each, 2 are free.
fn cluster() -> String {
    let mut y = String::from(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: g}\n---\n",
    );
    for q in ["a", "b", "c"] {
        y += &cq(q, "", 4);
    }
    y += &workload("a1", "a", 6, 1, true);
    y += &workload("b1", "b", 4, 2, true);
    y += &workload("a-head", "a", 2, 10, false);
    y += &workload("b-head", "b", 2, 20, false);
    y
}

const CONFIG: &str = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing:\n  preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]\n";

fn admitted(out: &Output) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    v["admitted"]
        .as_array()
        .expect("admitted list")
        .iter()
        .map(|a| a["workload"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// With the Configuration's `fairSharing`, the tournament takes b's head (DRS 167 against
/// a's 334, the tournament); without it the classical order takes a's older head; the flag
/// `--fair-sharing` turns fair sharing on without a Configuration.
#[test]
fn schedule_honours_the_configuration_and_the_flag() {
    let files = write(
        "schedule",
        &[("cluster.yaml", &cluster()), ("config.yaml", CONFIG)],
    );
    let fair = gpuquota(&["kueue", "schedule", &files[0], &files[1]]);
    assert_eq!(fair.status.code(), Some(0), "{}", text(&fair.stderr));
    assert_eq!(admitted(&fair), vec!["ns/b-head"]);
    assert!(!text(&fair.stderr).contains("fair sharing is configured"));
    let v: serde_json::Value = serde_json::from_slice(&fair.stdout).unwrap();
    assert_eq!(
        v["admitted"][0],
        serde_json::json!({"workload": "ns/b-head", "clusterQueue": "b", "cycle": 1,
                           "podSets": [{"name": "main", "count": 1,
                                        "flavors": {"nvidia.com/gpu": "g"}}]})
    );
    assert_eq!(v["pending"][0]["workload"], "ns/a-head");
    assert_eq!(v["pending"][0]["reason"], "WaitingForQuota");

    let classical = gpuquota(&["kueue", "schedule", &files[0]]);
    assert_eq!(classical.status.code(), Some(0));
    assert_eq!(admitted(&classical), vec!["ns/a-head"]);

    let flag = gpuquota(&["kueue", "schedule", "--fair-sharing", &files[0]]);
    assert_eq!(flag.status.code(), Some(0));
    assert_eq!(admitted(&flag), vec!["ns/b-head"]);
}

/// Fair-sharing preemption through the CLI: b's head would keep borrowing, a borrows more;
/// S2-a then S2-b preempt a2 with reason InCohortFairSharing (fair-sharing preemption), and b's
/// head is admitted in the next cycle.
#[test]
fn schedule_reports_fair_sharing_preemptions() {
    let mut y = String::from(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: g}\n---\n",
    );
    for q in ["a", "b", "c"] {
        y += &cq(q, "  preemption: {reclaimWithinCohort: Any}\n", 4);
    }
    y += &workload("a1", "a", 4, 1, true);
    y += &workload("a2", "a", 4, 2, true);
    y += &workload("a3", "a", 1, 3, true);
    y += &workload("b1", "b", 3, 4, true);
    y += &workload("b-head", "b", 4, 10, false);
    // Without conditions all three share one admission time: ties go to the UID (the key
    // here), so a1 comes first among equals; it is a2's size that matters for S2-b.
    let files = write("preempt", &[("cluster.yaml", &y), ("config.yaml", CONFIG)]);
    let out = gpuquota(&["kueue", "schedule", &files[0], &files[1]]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let p = v["preempted"].as_array().unwrap();
    assert_eq!(p.len(), 1, "{v}");
    assert_eq!(p[0]["preemptor"], "ns/b-head");
    assert_eq!(p[0]["reason"], "InCohortFairSharing");
    assert_eq!(p[0]["cycle"], 1);
    assert!(["ns/a1", "ns/a2"].contains(&p[0]["workload"].as_str().unwrap()));
    assert_eq!(v["admitted"][0]["workload"], "ns/b-head");
    assert_eq!(v["admitted"][0]["cycle"], 2);
}

/// `kueue shares`: `status.fairSharing.weightedShare` and the dominant resource of every
/// ClusterQueue and Cohort object (kubernetes-sigs/kueue: `pkg/cache/scheduler/fair_sharing.go`): a
/// borrows 2 of the 12 GPUs org can lend (⌈2000/12⌉ = 167; with weight 2, 84); a weight-0 queue
/// that borrows reports the maximum int64; queues within nominal and the root cohort report 0 and
/// no dominant resource.
#[test]
fn shares_json_contract() {
    let mut y = String::from(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: g}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: org}\nspec: {}\n---\n",
    );
    y += &cq("a", "", 4);
    y += &cq("b", "  fairSharing: {weight: \"2\"}\n", 4);
    y += &cq("c", "", 4);
    y += &cq("z", "  fairSharing: {weight: \"0\"}\n", 0);
    y += &workload("a1", "a", 6, 1, true);
    y += &workload("b1", "b", 6, 2, true);
    y += &workload("z1", "z", 0, 3, true);
    let files = write("shares", &[("cluster.yaml", &y)]);
    let out = gpuquota(&["kueue", "shares", &files[0], "--output", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v,
        serde_json::json!({
            "clusterQueues": {
                "a": {"share": 167, "dominantResource": "nvidia.com/gpu"},
                "b": {"share": 84, "dominantResource": "nvidia.com/gpu"},
                "c": {"share": 0, "dominantResource": null},
                "z": {"share": 0, "dominantResource": null}
            },
            "cohorts": {"org": {"share": 0, "dominantResource": null}}
        })
    );
    // z borrowing with weight 0: upstream's maximum int64
    let mut y2 = y.clone();
    y2 += &workload("z2", "z", 1, 4, true);
    let files = write("shares-zero", &[("cluster.yaml", &y2)]);
    let out = gpuquota(&["kueue", "shares", &files[0]]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["clusterQueues"]["z"]["share"], i64::MAX);
    assert_eq!(
        v["clusterQueues"]["z"]["dominantResource"],
        "nvidia.com/gpu"
    );
}

/// An invalid `preemptionStrategies` list is a malformed object: every problem on stderr,
/// exit code 1, nothing on stdout.
#[test]
fn invalid_strategies_exit_1() {
    let bad = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing:\n  preemptionStrategies: [LessThanInitialShare, LessThanOrEqualToFinalShare]\n";
    let files = write("bad", &[("cluster.yaml", &cluster()), ("config.yaml", bad)]);
    let out = gpuquota(&["kueue", "schedule", &files[0], &files[1]]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "");
    assert!(
        text(&out.stderr).contains("fairSharing.preemptionStrategies"),
        "{}",
        text(&out.stderr)
    );
}
