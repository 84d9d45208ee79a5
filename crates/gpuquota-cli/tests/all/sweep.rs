//! `gpuquota sim sweep`, `--shard`, `gpuquota sim merge` and `--emit-job` end to end.

use std::path::PathBuf;
use std::process::{Command, Output};

fn gpuquota(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpuquota"))
        .args(args)
        .output()
        .expect("runs")
}

fn data(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../gpuquota-sim/tests/data")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sweep-tests");
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

const SETS: [&str; 4] = [
    "--set",
    "kueue.fairSharing=true,false",
    "--set",
    "engine=kueue,resourcequota",
];

fn sweep(extra: &[&str]) -> Output {
    let file = data("kueue.yaml");
    let mut args = vec!["sim", "sweep", file.as_str()];
    args.extend(SETS);
    args.extend(extra);
    gpuquota(&args)
}

#[test]
fn sweep_table_has_one_row_per_run_in_product_order() {
    let out = sweep(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["parameters"],
        serde_json::json!(["kueue.fairSharing", "engine"])
    );
    assert_eq!(v["runs"], 4);
    let rows = v["rows"].as_array().unwrap();
    let got: Vec<(String, String, String)> = rows
        .iter()
        .map(|r| {
            (
                r["parameters"]["kueue.fairSharing"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
                r["parameters"]["engine"].as_str().unwrap().to_owned(),
                r["engine"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let want: Vec<(String, String, String)> = [
        ("true", "kueue"),
        ("true", "resourcequota"),
        ("false", "kueue"),
        ("false", "resourcequota"),
    ]
    .iter()
    .map(|(f, e)| (f.to_string(), e.to_string(), e.to_string()))
    .collect();
    assert_eq!(got, want);
    // a run's row summarises the report `gpuquota sim` prints for the same scenario
    let single = gpuquota(&["sim", data("kueue.yaml").as_str()]);
    let s: serde_json::Value = serde_json::from_slice(&single.stdout).unwrap();
    let same_engine: Vec<&serde_json::Value> =
        rows.iter().filter(|r| r["engine"] == s["engine"]).collect();
    assert!(
        same_engine
            .iter()
            .any(|r| r["preemptions"] == s["preemptions"])
    );
    // deterministic: the same bytes again
    assert_eq!(sweep(&[]).stdout, out.stdout);
}

#[test]
fn merged_shards_equal_the_unsharded_table() {
    let whole = sweep(&[]);
    assert!(whole.status.success());
    for n in [1usize, 3, 5] {
        let mut files = Vec::new();
        for i in 0..n {
            let shard = format!("{i}/{n}");
            let out = sweep(&["--shard", shard.as_str()]);
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let f = scratch(&format!("shard-{i}-of-{n}.json"));
            std::fs::write(&f, &out.stdout).unwrap();
            files.push(f.to_string_lossy().into_owned());
        }
        // shards in any order
        files.reverse();
        let mut args = vec!["sim", "merge"];
        args.extend(files.iter().map(String::as_str));
        let merged = gpuquota(&args);
        assert!(
            merged.status.success(),
            "{}",
            String::from_utf8_lossy(&merged.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&merged.stdout),
            String::from_utf8_lossy(&whole.stdout),
            "{n} shards"
        );
        args.extend(["--output", "csv"]);
        let csv = gpuquota(&args);
        assert_eq!(csv.stdout, sweep(&["--output", "csv"]).stdout);
    }
}

#[test]
fn merge_refuses_a_missing_shard() {
    let out = sweep(&["--shard", "0/2"]);
    let f = scratch("only-first.json");
    std::fs::write(&f, &out.stdout).unwrap();
    let merged = gpuquota(&["sim", "merge", f.to_str().unwrap()]);
    assert!(!merged.status.success());
    assert!(String::from_utf8_lossy(&merged.stderr).contains("run 2 is missing"));
}

#[test]
fn sweep_csv_has_parameters_then_results() {
    let out = sweep(&["--output", "csv"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let head = text.lines().next().unwrap();
    assert!(
        head.starts_with(
            "run,kueue.fairSharing,engine,meanUsagePercent,gpuHours,lostGpuHours,preemptions,"
        ),
        "{head}"
    );
    assert!(head.ends_with(",warnings"));
    assert_eq!(text.lines().count(), 5);
}

#[test]
fn a_bad_path_or_shard_fails() {
    let file = data("kueue.yaml");
    let bad = gpuquota(&["sim", "sweep", file.as_str(), "--set", "engine=kai2"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("run 0 (engine=kai2)"));
    let bad = gpuquota(&["sim", "sweep", file.as_str(), "--shard", "2/2"]);
    assert!(!bad.status.success());
}

#[test]
fn emitted_indexed_job_validates_with_its_local_queue() {
    let file = data("kueue.yaml");
    let mut args = vec!["sim", "sweep", file.as_str()];
    args.extend(SETS);
    args.extend([
        "--emit-job",
        "3",
        "--queue",
        "sweeps",
        "--namespace",
        "research",
    ]);
    let out = gpuquota(&args);
    assert!(out.status.success());
    let job = String::from_utf8(out.stdout).unwrap();
    assert!(job.contains("completionMode: Indexed"));
    assert!(job.contains("completions: 3"));
    assert!(job.contains("kueue.x-k8s.io/queue-name: sweeps"));
    assert!(job.contains("$(JOB_COMPLETION_INDEX)/3"));
    let jf = scratch("job.yaml");
    std::fs::write(&jf, &job).unwrap();
    let qf = scratch("queue.yaml");
    std::fs::write(
        &qf,
        "apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: sweeps}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors: [{name: default, resources: [{name: cpu, nominalQuota: 8}, {name: memory, nominalQuota: 16Gi}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: sweeps, namespace: research}
spec: {clusterQueue: sweeps}
",
    )
    .unwrap();
    let v = gpuquota(&[
        "--strict",
        "validate",
        jf.to_str().unwrap(),
        qf.to_str().unwrap(),
    ]);
    assert!(
        v.status.success(),
        "{}{}",
        String::from_utf8_lossy(&v.stdout),
        String::from_utf8_lossy(&v.stderr)
    );
}

fn seed_kueue() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../gpuquota-sim/data/seed/kueue.yaml")
        .to_string_lossy()
        .into_owned()
}

#[test]
fn cluster_queue_paths_set_limits_and_rows_carry_cost_per_department() {
    let file = seed_kueue();
    let plot = scratch("limits.svg");
    let run = |jobs: &str| {
        let out = gpuquota(&[
            "sim",
            "sweep",
            &file,
            "--set",
            "clusterQueues.batch.h200-nvl.nvidia.com/gpu.borrowingLimit=0,4,none",
            "-j",
            jobs,
            "--plot",
            plot.to_str().unwrap(),
            // each run rewrites the plot (and the scratch directory outlives a test run)
            "--force",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // stderr is not a terminal here: no progress bar
        assert_eq!(String::from_utf8_lossy(&out.stderr), "");
        out.stdout
    };
    let one = run("1");
    assert_eq!(one, run("2"), "the table does not depend on the threads");
    let v: serde_json::Value = serde_json::from_slice(&one).unwrap();
    let rows = v["rows"].as_array().unwrap();
    let got: Vec<(u64, String, String)> = rows
        .iter()
        .map(|r| {
            (
                r["preemptions"].as_u64().unwrap(),
                r["cost"]["departments"]["batch"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
                r["cost"]["total"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    // The other departments' bill: the assistant's (6 × 24 + 2 × 3) × 30 = 4500 h × 1.80
    // = 8100.00, data science's 960 H200-h × 4.50 = 4320.00 and 1080 RTX-h (its 01:00-10:00
    // evaluation on its own four cards) × 1.80 = 1944.00, notebooks 972.00, translation
    // 2592.00: 17928.00, plus batch's.
    // No H200 borrowing: batch borrows only data science's four RTX whenever they are idle
    // (10:00-01:00; on 1 Apr 20:00-01:00, on 30 Apr 10:00-24:00): (5 + 28 × 15 + 14) × 4
    // = 1756 h × 1.80 = 3160.80; the evaluation reclaims them at 01:00 on 29 days: 116.
    // H200 limit 4: each of 29 nights, 4 jobs on H200 (20:00-02:00 reclaimed, rerun
    // 06:00-14:00: 24 + 32 h) and 4 on RTX (20:00-01:00 reclaimed, rerun 10:00-18:00:
    // 20 + 32 h), the 30th night 4 + 4 jobs for 4 h: H200 29 × 56 + 16 = 1640 h (within
    // the budget) × 4.50 = 7380.00, RTX 29 × 52 + 16 = 1524 h × 1.80 = 2743.20: 10123.20,
    // 29 × 8 = 232 preemptions.
    // Unlimited is the seed's 8: 17 nights of 112 H200-h (the budget holds the rest back)
    // = 1904 h × 4.50 = 8568.00, 17 × 8 = 136 preemptions.
    assert_eq!(
        got,
        [
            (116, "3160.80".into(), "21088.80".into()),
            (232, "10123.20".into(), "28051.20".into()),
            (136, "8568.00".into(), "26496.00".into()),
        ]
    );
    assert_eq!(rows[0]["cost"]["currency"], "EUR");
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("meanUsagePercent"));
}

#[test]
fn cluster_queue_csv_has_cost_columns() {
    let file = seed_kueue();
    let out = gpuquota(&[
        "sim",
        "sweep",
        &file,
        "--set",
        "clusterQueues.batch.h200-nvl.nvidia.com/gpu.borrowingLimit=0",
        "-o",
        "csv",
        "--quiet",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let head = text.lines().next().unwrap();
    assert!(
        head.ends_with(",currency,cost.assistant,cost.batch,cost.data-science,cost.notebooks,cost.translation,cost,warnings"),
        "{head}"
    );
    // batch borrows only data science's idle RTX: 1756 h × 1.80 = 3160.80; data science
    // 960 H200-h × 4.50 + 1080 RTX-h × 1.80 = 6264.00 (see the sweep test above)
    assert!(
        text.lines()
            .nth(1)
            .unwrap()
            .ends_with(",EUR,8100.00,3160.80,6264.00,972.00,2592.00,21088.80,0")
    );
}

#[test]
fn a_short_cluster_queue_path_over_several_quotas_names_them() {
    let file = seed_kueue();
    let out = gpuquota(&[
        "sim",
        "sweep",
        &file,
        "--set",
        "clusterQueues.batch.borrowingLimit=0",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("has several quotas")
            && err.contains("h200-nvl.nvidia.com/gpu, rtx-pro-6000.nvidia.com/gpu"),
        "{err}"
    );
    let out = gpuquota(&[
        "sim",
        "sweep",
        &file,
        "--set",
        "clusterQueues.nope.h200-nvl.nvidia.com/gpu.nominalQuota=1",
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no ClusterQueue \"nope\""));
    let out = gpuquota(&[
        "sim",
        "sweep",
        &file,
        "--set",
        "clusterQueues.batch.weight=1",
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("FIELD one of nominalQuota"));
}

#[test]
fn seed_sweeps_a_generated_trace_and_is_refused_without_one() {
    let file = data("traces/philly-generated.yaml");
    let out = gpuquota(&["sim", "sweep", &file, "--set", "seed=1..3"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    let hours: Vec<f64> = rows
        .iter()
        .map(|r| r["gpuHours"].as_f64().unwrap())
        .collect();
    // three draws of the same shape: different traces, each replayed deterministically
    assert!(hours[0] != hours[1] && hours[1] != hours[2], "{hours:?}");
    let again = gpuquota(&["sim", "sweep", &file, "--set", "seed=1..3"]);
    assert_eq!(out.stdout, again.stdout);
    let out = gpuquota(&["sim", "sweep", &data("kueue.yaml"), "--set", "seed=1,2"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no generated trace"));
}

/// KAI Queue fields as `--set` paths: `infer`'s GPU quota (0, 4) × `train`'s GPU limit
/// (4, -1 = unlimited) over one 8-GPU node for 6 h. By hand: the inference server (4 GPUs,
/// 00:30, 1 h) needs a deserved quota of 4 to start at all; with train limited to 4 its
/// second 2 h gang waits until 02:00 (train's mean wait 1 h); with train unlimited and
/// infer's quota 4 the server reclaims that gang at 00:30 (4 GPUs × 30 min = 2 GPU-hours
/// lost, one eviction) and the gang runs again 01:30–03:30: 8 + 2 + 4 + 8 = 22 GPU-hours.
#[test]
fn kai_queue_fields_sweep() {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../gpuquota-advise/tests/data/kai/sim.yaml")
        .to_string_lossy()
        .into_owned();
    let out = gpuquota(&[
        "sim",
        "sweep",
        &file,
        "--set",
        "queues.infer.gpu.quota=0,4",
        "--set",
        "queues.train.gpu.limit=4,-1",
        "-o",
        "json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let got: Vec<(String, String, f64, f64, u64, i64)> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["parameters"]["queues.infer.gpu.quota"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
                r["parameters"]["queues.train.gpu.limit"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
                r["gpuHours"].as_f64().unwrap(),
                r["lostGpuHours"].as_f64().unwrap(),
                r["preemptions"].as_u64().unwrap(),
                r["timeToAdmissionMs"]["train"].as_i64().unwrap(),
            )
        })
        .collect();
    let row = |q: &str, l: &str, h: f64, lost: f64, p: u64, t: i64| {
        (q.to_owned(), l.to_owned(), h, lost, p, t)
    };
    assert_eq!(
        got,
        [
            row("0", "4", 16.0, 0.0, 0, 3_600_000),
            row("0", "-1", 16.0, 0.0, 0, 0),
            row("4", "4", 20.0, 0.0, 0, 3_600_000),
            row("4", "-1", 22.0, 2.0, 1, 0),
        ]
    );
    assert!(
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["engine"] == "kai")
    );
    // Kueue's paths on a KAI scenario: refused by name, nothing printed
    let out = gpuquota(&[
        "sim",
        "sweep",
        &file,
        "--set",
        "clusterQueues.a.nominalQuota=1",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "--set clusterQueues.a.nominalQuota: a KAI scenario has no ClusterQueues, Cohorts or ResourceQuotas"
        ),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // a misspelt field: refused before any run, naming the forms
    let out = gpuquota(&["sim", "sweep", &file, "--set", "queues.infer.gpu.quotas=1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "queues.infer.gpu.quotas: expected queues.QUEUE.RESOURCE.FIELD (RESOURCE one of gpu, cpu, memory, FIELD one of quota, limit, overQuotaWeight) or queues.QUEUE.priority"
        ),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
