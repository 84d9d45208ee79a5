//! `gpuquota schema COMMAND`: every command that writes JSON, run on the `gpuquota example`
//! samples, writes JSON its schema accepts; a schema rejects output of another shape.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::text;

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpuquota"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the gpuquota binary runs")
}

fn json(dir: &Path, args: &[&str]) -> serde_json::Value {
    let out = run(dir, args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        text(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gpuquota-schema-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for name in ["kueue", "kai", "kai-usage", "mig-plan", "meter", "sim"] {
        let out = run(&dir, &["example", name]);
        std::fs::write(dir.join(format!("{name}.yaml")), &out.stdout).expect("save sample");
    }
    dir
}

/// (schema name, a command line writing that JSON)
const RUNS: &[(&str, &[&str])] = &[
    (
        "quotas",
        &["quotas", "kueue.yaml", "kai.yaml", "-o", "json"],
    ),
    (
        "kueue-schedule",
        &["kueue", "schedule", "kueue.yaml", "-o", "json"],
    ),
    (
        "kueue-schedule",
        &[
            "kueue",
            "schedule",
            "kueue.yaml",
            "--fair-sharing",
            "-o",
            "json",
        ],
    ),
    (
        "kueue-shares",
        &["kueue", "shares", "kueue.yaml", "-o", "json"],
    ),
    (
        "kueue-quotas",
        &["kueue", "quotas", "kueue.yaml", "-o", "json"],
    ),
    (
        "kai-fairshare",
        &["kai", "fairshare", "kai.yaml", "-o", "json"],
    ),
    (
        "kai-fairshare",
        &[
            "kai",
            "fairshare",
            "kai.yaml",
            "--usage",
            "kai-usage.yaml",
            "-o",
            "json",
        ],
    ),
    (
        "kai-schedule",
        &["kai", "schedule", "kai.yaml", "-o", "json"],
    ),
    ("mig-plan", &["mig", "plan", "mig-plan.yaml", "-o", "json"]),
    ("mig-profiles", &["mig", "profiles", "-o", "json"]),
    (
        "mig-profiles",
        &["mig", "profiles", "A100-40GB", "-o", "json"],
    ),
    ("meter", &["meter", "meter.yaml", "-o", "json"]),
    ("sim", &["sim", "sim.yaml", "-o", "json"]),
    // the seed month: budgets and a chargeback, under both Kueue-mode engines
    ("sim", &["sim", SEED_KUEUE, "-o", "json"]),
    ("sim", &["sim", SEED_RESOURCEQUOTA, "-o", "json"]),
    ("sim", &["sim", KAI_OSCILLATION, "-o", "json"]),
    // a replayed KAI history: its fidelity section
    ("sim", &["sim", KAI_HISTORY, "-o", "json"]),
    (
        "sim-diff",
        &["sim", "diff", SEED_RESOURCEQUOTA, SEED_KUEUE, "-o", "json"],
    ),
    (
        "sim-diff",
        &["sim", "diff", "sim.yaml", "sim.yaml", "-o", "json"],
    ),
    (
        "sim-sweep",
        &[
            "sim",
            "sweep",
            "sim.yaml",
            "--set",
            "engine=kueue,resourcequota",
            "--set",
            "resume=true,false",
            "-o",
            "json",
        ],
    ),
    ("advice", &["advise", TEN_QUEUES, "-o", "json", "-q"]),
    (
        "advice-shard",
        &["advise", TEN_QUEUES, "--shard", "1/3", "-q"],
    ),
    (
        "sim-sweep",
        &[
            "sim",
            "sweep",
            "sim.yaml",
            "--set",
            "engine=kueue,resourcequota",
            "--shard",
            "1/2",
            "-o",
            "json",
        ],
    ),
];

const TEN_QUEUES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../gpuquota-advise/tests/data/ten-queues/advice.yaml"
);
const SEED_KUEUE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../gpuquota-sim/data/seed/kueue.yaml"
);
const SEED_RESOURCEQUOTA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../gpuquota-sim/data/seed/resourcequota.yaml"
);
const KAI_HISTORY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../gpuquota-sim/tests/data/history/kai-reclaim.yaml"
);
const KAI_OSCILLATION: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../gpuquota-sim/tests/data/kai/two-queue-oscillation.yaml"
);

#[test]
fn every_json_output_validates_against_its_schema() {
    let dir = temp_dir("validates");
    for (name, args) in RUNS {
        let schema = json(&dir, &["schema", name]);
        assert_eq!(
            schema["$schema"], "https://json-schema.org/draft/2020-12/schema",
            "{name}"
        );
        let validator = jsonschema::validator_for(&schema)
            .unwrap_or_else(|e| panic!("{name}: not a valid schema: {e}"));
        let output = json(&dir, args);
        let errors: Vec<String> = validator
            .iter_errors(&output)
            .map(|e| format!("{}: {e}", e.instance_path))
            .collect();
        assert!(errors.is_empty(), "{args:?} against {name}: {errors:#?}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_meter_sample_validates_against_the_input_schema() {
    let dir = temp_dir("input");
    let schema = json(&dir, &["schema", "meter-input"]);
    let validator = jsonschema::validator_for(&schema).expect("valid schema");
    let yaml = std::fs::read_to_string(dir.join("meter.yaml")).expect("sample");
    let sample: serde_json::Value = serde_saphyr::from_str(&yaml).expect("YAML");
    let errors: Vec<String> = validator
        .iter_errors(&sample)
        .map(|e| format!("{}: {e}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    // a document without its window is refused, as `meter` refuses it
    let mut no_window = sample.clone();
    no_window
        .as_object_mut()
        .expect("a mapping")
        .remove("window");
    assert!(!validator.is_valid(&no_window));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_schema_rejects_output_of_another_command() {
    let dir = temp_dir("rejects");
    let schema = json(&dir, &["schema", "kueue-schedule"]);
    let validator = jsonschema::validator_for(&schema).expect("valid schema");
    let other = json(&dir, &["meter", "meter.yaml", "-o", "json"]);
    assert!(!validator.is_valid(&other));
    // and a field of the wrong type
    let mut report = json(&dir, &["kueue", "schedule", "kueue.yaml", "-o", "json"]);
    let mut wrong = report.clone();
    wrong["cycles"] = serde_json::json!("two");
    assert!(!validator.is_valid(&wrong));
    // and a field no report type has
    report["admitted"][0]["extra"] = serde_json::json!(1);
    assert!(!validator.is_valid(&report));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_unknown_schema_is_a_usage_error() {
    let dir = temp_dir("unknown");
    let out = run(&dir, &["schema", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("[possible values: quotas, kueue-schedule"));
    std::fs::remove_dir_all(&dir).ok();
}

/// Every scenario file shipped or tested (`Simulation`s for each engine, Kueue's
/// perf-generator configs, KAI's simulator configs) and the `sim` sample.
fn sample_scenarios(dir: &Path) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut dirs = vec![
        dir.to_path_buf(),
        root.join("gpuquota-cli/tests/golden/sim"),
    ];
    for d in [
        "data",
        "data/seed",
        "tests/data",
        "tests/data/kai",
        "tests/data/traces",
    ] {
        dirs.push(root.join("gpuquota-sim").join(d));
    }
    let mut out = Vec::new();
    for d in dirs {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&d)
            .unwrap_or_else(|e| panic!("{}: {e}", d.display()))
            .filter_map(|e| Some(e.ok()?.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
            .collect();
        files.sort();
        for f in files {
            let Ok(v) = serde_saphyr::from_str::<serde_json::Value>(
                &std::fs::read_to_string(&f).expect("readable"),
            ) else {
                continue; // a multi-document manifest, not a scenario
            };
            let scenario = v["kind"] == "Simulation"
                || (v.get("kind").is_none()
                    && (v.get("cohorts").is_some() || v.get("Cycles").is_some()));
            if scenario {
                out.push(f);
            }
        }
    }
    out
}

#[test]
fn every_sample_scenario_validates_against_the_scenario_schema() {
    let dir = temp_dir("scenario");
    let schema = json(&dir, &["schema", "scenario"]);
    let validator = jsonschema::validator_for(&schema).expect("valid schema");
    let files = sample_scenarios(&dir);
    // the sample, 2 seed scenarios, 2 perf configs, 2 KAI, 4 traces, 3 + 2 test scenarios
    assert!(files.len() >= 15, "{files:?}");
    let mut kinds = std::collections::BTreeSet::new();
    for f in &files {
        let v: serde_json::Value =
            serde_saphyr::from_str(&std::fs::read_to_string(f).expect("readable")).expect("YAML");
        let errors: Vec<String> = validator
            .iter_errors(&v)
            .map(|e| format!("{}: {e}", e.instance_path))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:#?}", f.display());
        kinds.insert(if v.get("Cycles").is_some() {
            "kai-simulator"
        } else if v.get("cohorts").is_some() {
            "kueue-generator"
        } else if v["spec"]["engine"] == "kai" {
            "kai"
        } else {
            "kueue"
        });
    }
    assert_eq!(kinds.len(), 4, "{kinds:?}");
    // a field of the wrong type, an engine that does not exist, a cluster manifest
    let sim: serde_json::Value =
        serde_saphyr::from_str(&std::fs::read_to_string(dir.join("sim.yaml")).expect("sample"))
            .expect("YAML");
    let mut wrong = sim.clone();
    wrong["spec"]["cluster"] = serde_json::json!(5);
    assert!(!validator.is_valid(&wrong));
    let mut engine = sim.clone();
    engine["spec"]["engine"] = serde_json::json!("slurm");
    assert!(!validator.is_valid(&engine));
    let cq = serde_json::json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
        "metadata": {"name": "a"}});
    assert!(!validator.is_valid(&cq));
    // a trace's share rule: equal or demand, at least 1 GPU
    let share = |share: serde_json::Value| {
        let mut t = sim.clone();
        t["spec"]["workloads"] = serde_json::json!([{"trace": {"format": "helios",
            "file": "cluster_log.csv", "share": share}}]);
        validator.is_valid(&t)
    };
    assert!(share(serde_json::json!({"by": "demand", "gpus": 64})));
    assert!(share(serde_json::json!({})));
    assert!(!share(serde_json::json!({"by": "fair"})));
    assert!(!share(serde_json::json!({"gpus": 0})));
    std::fs::remove_dir_all(&dir).ok();
}
