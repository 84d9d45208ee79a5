//! A run written out as Kueue Workloads, or a KAI run as PodGroups and Pods
//! (`sim --output workloads`), and read back as a recorded history under the same
//! configuration replays exactly: its fidelity has no error.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{gpuquota, text};

/// The simulator's recorded-month fixture.
fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../gpuquota-sim/tests/data/history")
        .join(name)
}

fn json(args: &[&str]) -> Value {
    let out = gpuquota(args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON report")
}

#[test]
fn a_run_written_as_workloads_replays_with_zero_error() {
    let first = fixture("replay.yaml");
    let out = gpuquota(&["sim", first.to_str().unwrap(), "-o", "workloads"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let dump = text(&out.stdout);
    // a List of Workloads with the conditions a cluster keeps: eval-c was preempted in
    // its queue and readmitted at 02:35, after 1,190 s admitted in its first run
    assert!(
        dump.starts_with("apiVersion: v1\nkind: List\nitems:\n"),
        "{dump}"
    );
    let parsed: Value = serde_saphyr::from_str(&dump).expect("YAML");
    let items = parsed["items"].as_array().unwrap();
    assert_eq!(items.len(), 6);
    let eval = items
        .iter()
        .find(|i| i["metadata"]["name"] == "eval-c")
        .unwrap();
    let st = &eval["status"];
    let conds: Vec<(&str, &str, &str, &str)> = st["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["type"].as_str().unwrap(),
                c["status"].as_str().unwrap(),
                c["reason"].as_str().unwrap(),
                c["lastTransitionTime"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        conds,
        [
            (
                "QuotaReserved",
                "True",
                "QuotaReserved",
                "2026-11-01T02:35:00Z"
            ),
            ("Admitted", "True", "Admitted", "2026-11-01T02:35:00Z"),
            ("PodsReady", "True", "PodsReady", "2026-11-01T02:35:00Z"),
            ("Evicted", "False", "QuotaReserved", "2026-11-01T02:35:00Z"),
            (
                "Preempted",
                "False",
                "QuotaReserved",
                "2026-11-01T02:35:00Z"
            ),
            ("Requeued", "True", "Preempted", "2026-11-01T00:29:50Z"),
        ]
    );
    assert_eq!(st["admission"]["clusterQueue"], "team-a");
    assert_eq!(
        st["admission"]["podSetAssignments"][0]["flavors"]["nvidia.com/gpu"],
        "a100"
    );
    assert_eq!(
        st["schedulingStats"]["evictions"][0]["underlyingCause"],
        "InClusterQueue"
    );
    // admitted at arrival (00:10:00), preempted at 00:29:50
    assert_eq!(st["accumulatedPastExexcutionTimeSeconds"], 1190);

    // read back as a history under the same cluster, window and options
    let dir =
        std::env::temp_dir().join(format!("gpuquota-history-identity-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(fixture("platform.yaml"), dir.join("platform.yaml")).unwrap();
    std::fs::write(dir.join("dump.yaml"), &dump).unwrap();
    // the same scenario file: its history names dump.yaml beside it
    std::fs::copy(&first, dir.join("replay.yaml")).unwrap();
    let a = json(&["sim", first.to_str().unwrap(), "-o", "json"]);
    let b = json(&[
        "sim",
        dir.join("replay.yaml").to_str().unwrap(),
        "-o",
        "json",
    ]);
    // the same run again
    assert_eq!(a["workloads"], b["workloads"]);
    assert_eq!(a["classes"], b["classes"]);
    let f = &b["fidelity"];
    assert_eq!(f["source"], "history");
    // sweep-b, prep-e and the urgent job were never evicted: their first admission is
    // known (a dump keeps only the last of an evicted one's)
    assert_eq!(
        f["all"],
        serde_json::json!({
            "class": "", "queue": "", "workloads": 6, "compared": 3,
            "meanAdmissionErrorMs": 0, "p95AdmissionErrorMs": 0, "kendallTau": 1.0,
            "preemptions": {"matched": 2, "missed": 0, "extra": 0}
        })
    );
    // team-a: eval-c 4 × (1,190 + 12,300), urgent 8 × 19,810, train-a 4 × (1,790 +
    // 3,600); team-b 8 × 7,200 + 2 × 1,800
    assert_eq!(
        f["departments"],
        serde_json::json!([
            {"department": "team-a", "recordedGpuSeconds": 234_000, "simulatedGpuSeconds": 234_000},
            {"department": "team-b", "recordedGpuSeconds": 61_200, "simulatedGpuSeconds": 61_200}
        ])
    );
    for w in f["workloads"].as_array().unwrap() {
        assert!(
            w["admissionErrorMs"].is_null() || w["admissionErrorMs"] == 0,
            "{w}"
        );
        assert_eq!(w["recordedEndMs"], w["simulatedEndMs"], "{w}");
        assert_eq!(w["recordedPreemptions"], w["simulatedPreemptions"], "{w}");
        assert_eq!(w["simulated"], true);
    }
    assert_eq!(f["notes"], serde_json::json!([]));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_kai_run_written_as_pod_groups_replays_with_zero_error() {
    let first = fixture("kai-reclaim.yaml");
    let out = gpuquota(&["sim", first.to_str().unwrap(), "-o", "workloads"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let dump = text(&out.stdout);
    assert!(
        dump.starts_with("apiVersion: v1\nkind: List\nitems:\n"),
        "{dump}"
    );
    let parsed: Value = serde_saphyr::from_str(&dump).expect("YAML");
    let items = parsed["items"].as_array().unwrap();
    // per job its PodGroup, then its pods: pg-a (2), pg-d (2), pg-b (1), pg-c (1)
    let kinds: Vec<(&str, &str)> = items
        .iter()
        .map(|i| {
            (
                i["kind"].as_str().unwrap(),
                i["metadata"]["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("PodGroup", "pg-a"),
            ("Pod", "pg-a-0"),
            ("Pod", "pg-a-1"),
            ("PodGroup", "pg-d"),
            ("Pod", "pg-d-0"),
            ("Pod", "pg-d-1"),
            ("PodGroup", "pg-b"),
            ("Pod", "pg-b-0"),
            ("PodGroup", "pg-c"),
            ("Pod", "pg-c-0"),
        ]
    );
    // pg-a: bound at 00:00, reclaimed at 00:30, bound again at 01:30, finished at 04:30
    let pg_a = &items[0];
    assert_eq!(pg_a["apiVersion"], "scheduling.run.ai/v2alpha2");
    assert_eq!(pg_a["spec"]["queue"], "qa");
    assert_eq!(pg_a["status"]["phase"], "Succeeded");
    assert_eq!(
        pg_a["metadata"]["annotations"]["gpuquota.dev/evictions"],
        r#"[{"action":"reclaim","startTime":"2026-11-01T00:00:00Z","endTime":"2026-11-01T00:30:00Z"}]"#
    );
    let pod = &items[1];
    assert_eq!(pod["metadata"]["annotations"]["pod-group-name"], "pg-a");
    assert_eq!(pod["spec"]["nodeName"], "node-a");
    assert_eq!(pod["status"]["phase"], "Succeeded");
    assert_eq!(pod["status"]["startTime"], "2026-11-01T01:30:00Z");
    assert_eq!(
        pod["status"]["containerStatuses"][0]["state"]["terminated"]["finishedAt"],
        "2026-11-01T04:30:00Z"
    );
    // pg-d never bound: pending pods without a node; pg-c still running at the end
    assert_eq!(items[3]["status"]["phase"], "Pending");
    assert!(items[4]["spec"].get("nodeName").is_none());
    assert!(items[4]["status"].get("startTime").is_none());
    assert_eq!(items[9]["status"]["phase"], "Running");
    assert_eq!(items[9]["status"]["startTime"], "2026-11-01T05:00:00Z");

    // read back as a history under the same cluster, window and options
    let dir = std::env::temp_dir().join(format!("gpuquota-kai-identity-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        fixture("kai-reclaim-platform.yaml"),
        dir.join("kai-reclaim-platform.yaml"),
    )
    .unwrap();
    std::fs::write(dir.join("kai-reclaim-dump.yaml"), &dump).unwrap();
    std::fs::copy(&first, dir.join("kai-reclaim.yaml")).unwrap();
    let a = json(&["sim", first.to_str().unwrap(), "-o", "json"]);
    let b = json(&[
        "sim",
        dir.join("kai-reclaim.yaml").to_str().unwrap(),
        "-o",
        "json",
    ]);
    // the same run again
    assert_eq!(a["workloads"], b["workloads"]);
    assert_eq!(a["classes"], b["classes"]);
    assert_eq!(a["evictions"], b["evictions"]);
    let f = &b["fidelity"];
    assert_eq!(f["source"], "history");
    // pg-a, pg-b and pg-c bound on both sides (pg-a's first binding is in the annotation);
    // pg-d never; the reclaim matched
    assert_eq!(
        f["all"],
        serde_json::json!({
            "class": "", "queue": "", "workloads": 4, "compared": 3,
            "meanAdmissionErrorMs": 0, "p95AdmissionErrorMs": 0, "kendallTau": 1.0,
            "preemptions": {"matched": 1, "missed": 0, "extra": 0}
        })
    );
    // team-a: 8 GPUs × (1,800 + 10,800) s; team-b: 4 × 3,600 + 4 × 3,600 (cut at 06:00)
    assert_eq!(
        f["departments"],
        serde_json::json!([
            {"department": "team-a", "recordedGpuSeconds": 100_800, "simulatedGpuSeconds": 100_800},
            {"department": "team-b", "recordedGpuSeconds": 28_800, "simulatedGpuSeconds": 28_800}
        ])
    );
    for w in f["workloads"].as_array().unwrap() {
        assert!(
            w["admissionErrorMs"].is_null() || w["admissionErrorMs"] == 0,
            "{w}"
        );
        assert_eq!(w["recordedEndMs"], w["simulatedEndMs"], "{w}");
        assert_eq!(w["recordedPreemptions"], w["simulatedPreemptions"], "{w}");
        assert_eq!(w["simulated"], true);
    }
    assert_eq!(f["notes"], serde_json::json!([]));
    let _ = std::fs::remove_dir_all(&dir);
}
