//! A recorded history (a kubectl dump written for these tests) as a workload source.

use std::path::{Path, PathBuf};

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
