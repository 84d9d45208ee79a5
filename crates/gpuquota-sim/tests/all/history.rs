//! A recorded history (a kubectl dump written for these tests) as a workload source.

use std::path::{Path, PathBuf};

use gpuquota_sim::history::fidelity::{Preemptions, SimRun, Simulated, fidelity};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/history")
        .join(name)
}

#[test]
fn a_history_dump_replays_with_recorded_arrivals_and_runtimes() {
    let sim = gpuquota_sim::fuzzing::load(&data("replay.yaml")).expect("valid scenario");
    let sc = sim.kueue().expect("a Kueue scenario");
    let text = std::fs::read_to_string(data("dump.yaml")).unwrap();
    let h = gpuquota_sim::history::load(&[("dump.yaml".to_owned(), text)]).unwrap();
    // every recorded workload is one of the replay, under the same key
    let keys: Vec<&String> = sc.instances.keys().collect();
    let recorded: Vec<&String> = h.records.iter().map(|r| &r.key).collect();
    assert_eq!(keys, recorded);
    let inst = |k: &str| {
        let i = &sc.instances[k];
        (i.class.as_str(), i.created_ms, i.runtime_ms)
    };
    assert_eq!(inst("team-a/train-a"), ("low", 0, Some(3_600_000)));
    assert_eq!(inst("team-b/sweep-b"), ("low", 300_000, Some(7_200_000)));
    assert_eq!(inst("team-a/eval-c"), ("low", 600_000, None));
    assert_eq!(inst("team-a/job-urgent-3f2a1"), ("high", 1_790_000, None));
    assert_eq!(inst("team-b/wait-d"), ("", 1_200_000, None));
    // the Job without a Workload becomes one as Kueue names it, with its recorded run
    let prep = h.records.iter().find(|r| r.kind == "Job").unwrap();
    assert_eq!(inst(&prep.key), ("", 900_000, Some(1_800_000)));
    // nothing of the recorded status is carried into the replay
    assert!(sc.model.workloads.values().all(|w| w.status.is_none()));
    let report = gpuquota_sim::fuzzing::run_kueue(&sim).expect("simulates");
    let j = report.to_json();
    assert_eq!(j["workloads"].as_array().unwrap().len(), 6);
    let warnings: Vec<&str> = j["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .filter(|w| w.contains("objects skipped"))
        .collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
}

#[test]
fn a_history_entry_without_files_or_with_a_missing_one_is_an_error() {
    let sim = "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nspec:\n  start: \"2026-11-01T00:00:00Z\"\n  cluster: [platform.yaml]\n  workloads:\n  - history: {files: []}\n  - history: {files: [missing.yaml]}\n";
    let e = gpuquota_sim::fuzzing::scenario("sim.yaml", sim, "sim", &|f: &str| {
        if f == "platform.yaml" {
            Ok((
                f.to_owned(),
                std::fs::read_to_string(data("platform.yaml")).unwrap(),
            ))
        } else {
            Err(gpuquota_model::Diagnostic::error(
                gpuquota_model::diag::codes::READ_FAILED,
                "no such file",
            )
            .source(f.to_owned()))
        }
    })
    .unwrap_err();
    let mut fields: Vec<&str> =
        e.0.iter()
            .filter(|d| d.severity == gpuquota_model::diag::Severity::Error)
            .map(|d| d.field.as_str())
            .collect();
    fields.sort_unstable();
    assert_eq!(
        fields,
        [
            "spec.workloads[0].history.files",
            "spec.workloads[1].history.files[0]"
        ]
    );
}

/// The replay's outcome per workload, from the report's JSON (`runs[].startMs/endMs/end`).
fn simulated(j: &serde_json::Value) -> Vec<Simulated> {
    j["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| Simulated {
            key: w["workload"].as_str().unwrap().to_owned(),
            runs: w["runs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| SimRun {
                    admitted_ms: r["startMs"].as_i64().unwrap(),
                    end_ms: r["endMs"].as_i64().unwrap(),
                    preempted: (r["end"] == "Preempted")
                        .then(|| r["reason"].as_str().unwrap_or("").to_owned()),
                })
                .collect(),
            finished_ms: w["finishedMs"].as_i64(),
        })
        .collect()
}

#[test]
fn the_replay_of_a_recorded_history_is_scored_against_the_record() {
    let sim = gpuquota_sim::fuzzing::load(&data("replay.yaml")).expect("valid scenario");
    let j = gpuquota_sim::fuzzing::run_kueue(&sim).unwrap().to_json();
    let text = std::fs::read_to_string(data("dump.yaml")).unwrap();
    let h = gpuquota_sim::history::load(&[("dump.yaml".to_owned(), text)]).unwrap();
    // 2026-11-01T00:00:00Z; the replay ends 6 h later
    let f = fidelity(
        &h.records,
        &simulated(&j),
        1_793_491_200_000,
        Some(21_600_000),
    );
    // the replay admits train-a at 0 (recorded 10 s), the urgent job on arrival at
    // 1,790 s (recorded 1,800 s), prep-e at 7,500 s (recorded 905 s): errors 10 s, 10 s,
    // 6,595 s
    assert_eq!(f.all.compared, 3);
    assert_eq!(f.all.mean_admission_error_ms, Some(2_205_000));
    assert_eq!(f.all.p95_admission_error_ms, Some(6_595_000));
    // prep-e and the urgent job swap places: (2 − 1) / 3
    assert!((f.all.kendall_tau.unwrap() - 1.0 / 3.0).abs() < 1e-12);
    // eval-c preempted in both; sweep-b's reclamation not replayed; train-a preempted
    // by the urgent job in the replay only
    assert_eq!(
        f.all.preemptions,
        Preemptions {
            matched: 1,
            missed: 1,
            extra: 1
        }
    );
    // team-a recorded: 4 × 3,600 + 8 × 19,800; replayed: eval-c 4 × (1,190 + 12,300),
    // urgent 8 × 19,810, train-a 4 × (1,790 + 3,600); team-b: 8 × 7,200 + 2 × 1,800 in both
    let hours: Vec<(&str, u64, u64)> = f
        .departments
        .iter()
        .map(|d| {
            (
                d.department.as_str(),
                d.recorded_gpu_seconds,
                d.simulated_gpu_seconds,
            )
        })
        .collect();
    assert_eq!(
        hours,
        [("team-a", 172_800, 234_000), ("team-b", 61_200, 61_200)]
    );
    // the report's own section holds the same figures
    let r = &j["fidelity"];
    assert_eq!(r["source"], "history");
    assert_eq!(r["all"]["meanAdmissionErrorMs"], 2_205_000);
    assert_eq!(r["all"]["p95AdmissionErrorMs"], 6_595_000);
    assert_eq!(r["all"]["preemptions"]["missed"], 1);
    assert_eq!(r["departments"][0]["simulatedGpuSeconds"], 234_000);
    assert_eq!(r["workloads"].as_array().unwrap().len(), 6);
    // eval-c was admitted and preempted in both: nothing the model can explain
    assert_eq!(r["notes"], serde_json::json!([]));
    let table = gpuquota_sim::fuzzing::run_kueue(&sim).unwrap().to_table();
    assert!(table.contains("\nFidelity: this run against the recorded history; 6 workloads, 3 with a time to admission known on both sides\n"), "{table}");
    assert!(
        table.contains("team-a               48.00            65.00\n"),
        "{table}"
    );
}

#[test]
fn a_recorded_pod_without_a_workload_replays_as_kueue_would_queue_it() {
    let dump = r#"
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata:
    name: solo
    namespace: team-a
    creationTimestamp: "2026-11-01T00:00:00Z"
    labels: {kueue.x-k8s.io/queue-name: main}
  spec: {containers: [{name: c, image: x, resources: {requests: {nvidia.com/gpu: "1"}}}]}
  status:
    phase: Succeeded
    startTime: "2026-11-01T00:01:00Z"
    containerStatuses:
    - {name: c, state: {terminated: {exitCode: 0, finishedAt: "2026-11-01T00:31:00Z"}}}
"#;
    let sim = "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nspec:\n  start: \"2026-11-01T00:00:00Z\"\n  cluster: [platform.yaml]\n  workloads:\n  - history: {files: [dump.yaml]}\n";
    let s = gpuquota_sim::fuzzing::scenario("sim.yaml", sim, "sim", &|f: &str| {
        let text = if f == "dump.yaml" {
            dump.to_owned()
        } else {
            std::fs::read_to_string(data(f)).unwrap()
        };
        Ok((f.to_owned(), text))
    })
    .expect("valid scenario");
    let h = gpuquota_sim::history::load(&[("dump.yaml".to_owned(), dump.to_owned())]).unwrap();
    let sc = s.kueue().unwrap();
    let keys: Vec<&String> = sc.instances.keys().collect();
    assert_eq!(keys, [&h.records[0].key]);
    let i = &sc.instances[&h.records[0].key];
    // created at the start; ran 00:01 → 00:31
    assert_eq!((i.created_ms, i.runtime_ms), (0, Some(1_800_000)));
}

/// The same month as kube-state-metrics and DCGM series: query_range answers of a
/// Prometheus (2.42) that held the samples of the test `prometheus` of the facade crate
/// (scrapes every 300 s from 2026-11-01T00:00:00Z, asked at a step of 300 s for 6 h).
#[test]
fn a_history_from_prometheus_answers_replays_pods_as_their_jobs() {
    let sim = gpuquota_sim::fuzzing::load(&data("replay-prometheus.yaml")).expect("valid scenario");
    let sc = sim.kueue().expect("a Kueue scenario");
    let files: Vec<(String, String)> = ["ksm.json", "dcgm.json"]
        .iter()
        .map(|f| ((*f).to_owned(), std::fs::read_to_string(data(f)).unwrap()))
        .collect();
    let h = gpuquota_sim::history::prometheus::load(&files).unwrap();
    let keys: Vec<&String> = sc.instances.keys().collect();
    let recorded: Vec<&String> = h.records.iter().map(|r| &r.key).collect();
    assert_eq!(keys, recorded);
    // (object, class, created s, first admission s, runtime s, GPUs), relative to 00:00
    const T0: i64 = 1_793_491_200_000;
    type Row<'a> = (String, &'a str, i64, Option<i64>, Option<i64>, u64);
    let rows: Vec<Row<'_>> = h
        .records
        .iter()
        .map(|r| {
            (
                format!("{} {}", r.kind, r.object),
                r.class.as_str(),
                (r.created_ms - T0) / 1000,
                r.first_admitted_ms.map(|t| (t - T0) / 1000),
                r.runtime_ms.map(|t| t / 1000),
                r.gpu_milli / 1000,
            )
        })
        .collect();
    let want: Vec<Row<'_>> = vec![
        // two pods of 2 GPUs, started 40 s, completed 3,610 s: the Job's arrival is
        // kube_job_created (0 s), not the pods' creation (10 s)
        (
            "Job team-a/train-a".into(),
            "low",
            0,
            Some(40),
            Some(3_570),
            4,
        ),
        // first run's pod deleted at 1,200 s, the second completed at 9,600 s: 310 → 9,600
        (
            "Job team-b/sweep-b".into(),
            "low",
            300,
            Some(310),
            Some(9_290),
            4,
        ),
        // its only pod deleted (preempted) at 1,800 s: no end
        ("Job team-a/eval-c".into(), "low", 600, Some(610), None, 2),
        // still running at the end of the data
        (
            "Job team-a/urgent".into(),
            "high",
            1_790,
            Some(1_805),
            None,
            4,
        ),
        (
            "Job team-a/prep-e".into(),
            "",
            900,
            Some(905),
            Some(1_800),
            1,
        ),
        // a pod without an owner is a Pod of its own
        (
            "Pod team-b/notebook".into(),
            "",
            3_000,
            Some(3_005),
            Some(1_800),
            1,
        ),
    ];
    let mut sorted_want = want.clone();
    let mut sorted_rows = rows.clone();
    sorted_want.sort();
    sorted_rows.sort();
    assert_eq!(sorted_rows, sorted_want);
    let inst = &sc.instances[&h
        .records
        .iter()
        .find(|r| r.object == "team-b/sweep-b")
        .unwrap()
        .key];
    assert_eq!(
        (inst.created_ms, inst.runtime_ms),
        (300_000, Some(9_290_000))
    );
    let w: Vec<String> = h.warnings.0.iter().map(|d| d.message.clone()).collect();
    assert_eq!(
        w,
        [
            "1 objects skipped (Job without a queue-name label)",
            "2 pods gone before they completed (deleted: preempted or removed): no end recorded",
        ]
    );
    // the replay runs (6 workloads) and fidelity scores it as it does a dump's
    let j = gpuquota_sim::fuzzing::run_kueue(&sim)
        .expect("simulates")
        .to_json();
    assert_eq!(j["workloads"].as_array().unwrap().len(), 6);
    let f = fidelity(&h.records, &simulated(&j), T0, Some(21_600_000));
    assert_eq!(f.all.compared, 6);
    // the cohort has room for all: the replay admits each on arrival, the record 40, 10,
    // 10, 5, 15 and 5 s after it (train-a, sweep-b, eval-c, prep-e, urgent, notebook):
    // mean 85 s / 6 = 14,166.7 ms, rounded; p95 the largest, 40 s; the same order, tau 1
    assert_eq!(f.all.mean_admission_error_ms, Some(14_167));
    assert_eq!(f.all.p95_admission_error_ms, Some(40_000));
    assert!((f.all.kendall_tau.unwrap() - 1.0).abs() < 1e-12);
}

#[test]
fn a_trace_that_records_waits_is_scored_against_them() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/traces/acme.yaml");
    let sim = gpuquota_sim::fuzzing::load(&path).expect("valid scenario");
    let j = gpuquota_sim::fuzzing::run_kueue(&sim).unwrap().to_json();
    let f = &j["fidelity"];
    assert_eq!(f["source"], "trace");
    // job 7001 waited 100 s in the cluster (its `queue` column), none here; job 7002 5 s
    // (arrival 08:05:00, start 08:05:05), none here: mean 52.5 s → 52,500 ms, p95 100 s;
    // both in the recorded order
    assert_eq!(f["all"]["compared"], 2);
    assert_eq!(f["all"]["meanAdmissionErrorMs"], 52_500);
    assert_eq!(f["all"]["p95AdmissionErrorMs"], 100_000);
    assert_eq!(f["all"]["kendallTau"], 1.0);
    // 4 GPUs × 3,600 s + 2 GPUs × 600 s on both sides
    assert_eq!(
        f["departments"],
        serde_json::json!([{"department": "research", "recordedGpuSeconds": 15_600, "simulatedGpuSeconds": 15_600}])
    );
    // a trace without recorded waits has no such section
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/traces/philly.yaml");
    let sim = gpuquota_sim::fuzzing::load(&path).expect("valid scenario");
    let j = gpuquota_sim::fuzzing::run_kueue(&sim).unwrap().to_json();
    assert!(j.get("fidelity").is_none());
}

#[test]
fn a_recorded_kai_month_replays_its_pod_groups() {
    let sim = gpuquota_sim::Simulation::from_files(&data("kai-replay.yaml")).expect("valid");
    assert!(sim.kai().is_some());
    let out = gpuquota_sim::simulate(&sim).expect("simulates");
    let j = out.to_json();
    let w = j["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["workload"] == "team-a/pg-train-1")
        .unwrap();
    // arrives at the start, runs its recorded hour (00:05 to 01:05) on arrival
    assert_eq!(w["createdMs"], 0);
    assert_eq!(w["runs"][0]["startMs"], 0);
    assert_eq!(w["runs"][0]["endMs"], 3_600_000);
    assert_eq!(w["finishedMs"], 3_600_000);
    assert_eq!(j["workloads"].as_array().unwrap().len(), 2);
}

#[test]
fn a_recorded_kai_reclaim_is_scored_against_the_run() {
    let sim = gpuquota_sim::Simulation::from_files(&data("kai-reclaim.yaml")).expect("valid");
    let out = gpuquota_sim::simulate(&sim).expect("simulates");
    let j = out.to_json();
    // the run: pg-a binds at 00:00, is reclaimed at 00:30 when pg-b arrives (qa holds 8 of
    // its 4 deserved GPUs), pg-b runs its hour, pg-a its 3 h from 01:30; pg-c binds at
    // 05:00 and is cut at the end; pg-d (16 GPUs) never fits
    let runs = |k: &str| -> Vec<(i64, i64)> {
        let w = j["workloads"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["workload"] == k)
            .unwrap();
        w["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["startMs"].as_i64().unwrap(), r["endMs"].as_i64().unwrap()))
            .collect()
    };
    assert_eq!(
        runs("team-a/pg-a"),
        [(0, 1_800_000), (5_400_000, 16_200_000)]
    );
    assert_eq!(runs("team-b/pg-b"), [(1_800_000, 5_400_000)]);
    assert_eq!(runs("team-b/pg-c"), [(18_000_000, 21_600_000)]);
    assert!(runs("team-a/pg-d").is_empty());
    let f = &j["fidelity"];
    assert_eq!(f["source"], "history");
    // recorded first bindings 00:00:20, 00:31:30, 05:00:10 against 00:00, 00:30, 05:00:
    // errors 20 s, 90 s, 10 s: mean 40 s, p95 the 3rd of 3; the same order; the reclaim
    // matched
    assert_eq!(
        f["all"],
        serde_json::json!({
            "class": "", "queue": "", "workloads": 4, "compared": 3,
            "meanAdmissionErrorMs": 40_000, "p95AdmissionErrorMs": 90_000, "kendallTau": 1.0,
            "preemptions": {"matched": 1, "missed": 0, "extra": 0}
        })
    );
    let groups: Vec<(&str, u64, u64)> = f["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["queue"].as_str().unwrap(),
                g["workloads"].as_u64().unwrap(),
                g["meanAdmissionErrorMs"].as_u64().unwrap(),
            )
        })
        .collect();
    // team-a/qa: pg-a (20 s) and pg-d (not compared); team-b/qb: pg-b 90 s, pg-c 10 s
    assert_eq!(groups, [("team-a/qa", 2, 20_000), ("team-b/qb", 2, 50_000)]);
    // team-a: 8 GPUs × (1,840 + 10,800) s recorded, × (1,800 + 10,800) s simulated;
    // team-b: 4 × 3,600 + 4 × (21,600 − 18,010) recorded, 4 × 3,600 × 2 simulated
    assert_eq!(
        f["departments"],
        serde_json::json!([
            {"department": "team-a", "recordedGpuSeconds": 101_120, "simulatedGpuSeconds": 100_800},
            {"department": "team-b", "recordedGpuSeconds": 28_760, "simulatedGpuSeconds": 28_800}
        ])
    );
    let a = &f["workloads"][0];
    assert_eq!(
        (
            &a["key"],
            &a["recordedAdmittedMs"],
            &a["simulatedAdmittedMs"],
            &a["recordedEndMs"],
            &a["simulatedEndMs"]
        ),
        (
            &serde_json::json!("team-a/pg-a"),
            &serde_json::json!(20_000),
            &serde_json::json!(0),
            &serde_json::json!(16_320_000),
            &serde_json::json!(16_200_000)
        )
    );
    assert_eq!(f["notes"], serde_json::json!([]));
    // the table prints the same section after the queues
    let kai = out.kai().expect("a KAI run");
    let table = kai.to_table();
    assert!(
        table.contains(
            "Fidelity: this run against the recorded history; 4 workloads, 3 with a time to admission known on both sides"
        ),
        "{table}"
    );
    // a KAI run without a record has no such section
    let night =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/kai/two-queue-oscillation.yaml");
    let sim = gpuquota_sim::Simulation::from_files(&night).expect("valid");
    let j = gpuquota_sim::simulate(&sim).expect("simulates").to_json();
    assert!(j.get("fidelity").is_none());
}

#[test]
fn a_kai_trace_that_records_waits_is_scored_against_them() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/traces/kai-helios.yaml");
    let sim = gpuquota_sim::Simulation::from_files(&path).expect("valid");
    let j = gpuquota_sim::simulate(&sim).expect("simulates").to_json();
    let f = &j["fidelity"];
    assert_eq!(f["source"], "trace");
    // recorded (start − submit): job-1 0, job-2 3,000 s, job-3 0; simulated: job-1 at 0,
    // job-2 at 600 s (reclaimed at 1,200 s, again from 3,000 s), job-3 at 1,200 s: errors
    // 0, 3,000 s, 0; admission order recorded 1, 3, 2 against 1, 2, 3: τ = (2 − 1) / 3;
    // the reclaim is extra (a trace records no eviction)
    assert_eq!(f["all"]["compared"], 3);
    assert_eq!(f["all"]["meanAdmissionErrorMs"], 1_000_000);
    assert_eq!(f["all"]["p95AdmissionErrorMs"], 3_000_000);
    assert!((f["all"]["kendallTau"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-12);
    assert_eq!(
        f["all"]["preemptions"],
        serde_json::json!({"matched": 0, "missed": 0, "extra": 1})
    );
    // recorded 8 × 3,600 + 8 × 1,800 + 2 × 1,800; simulated job-2 also its 600 s run
    assert_eq!(
        f["departments"],
        serde_json::json!([{"department": "research", "recordedGpuSeconds": 46_800, "simulatedGpuSeconds": 51_600}])
    );
    let groups: Vec<(&str, &str)> = f["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["class"].as_str().unwrap(), g["queue"].as_str().unwrap()))
        .collect();
    assert_eq!(
        groups,
        [
            ("CANCELLED", "research/vcb"),
            ("COMPLETED", "research/vca"),
            ("FAILED", "research/vca")
        ]
    );
}
