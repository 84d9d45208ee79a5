//! `gpuquota sim` end to end: the scenario shipped with the simulator's tests, every output
//! format, the plot, and errors with exit code 1 and nothing on stdout.

use std::path::PathBuf;
use std::process::{Command, Output};

fn gpuquota(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpuquota"))
        .args(args)
        .output()
        .expect("the gpuquota binary runs")
}

fn scenario(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../gpuquota-sim/tests/data")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn json_is_the_contract() {
    let out = gpuquota(&["sim", &scenario("kueue.yaml")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let keys: Vec<&str> = v
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "engine",
            "start",
            "endMs",
            "makespanMs",
            "workloads",
            "classes",
            "queues",
            "preemptions",
            "warnings"
        ]
    );
    assert_eq!(v["preemptions"], 1);
    assert_eq!(v["workloads"][1]["runs"][0]["by"], "data-science/fine-tune");
}

#[test]
fn table_csv_summary_and_plot() {
    let dir = std::env::temp_dir().join(format!("gpuquota-sim-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let svg = dir.join("usage.svg");
    let out = gpuquota(&[
        "sim",
        &scenario("kueue.yaml"),
        "--output",
        "table",
        "--plot",
        &svg.display().to_string(),
    ]);
    assert!(out.status.success());
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains(
            "1 of batch's workloads were preempted at 02:00 when data-science reclaimed."
        ),
        "{table}"
    );
    assert!(
        std::fs::read_to_string(&svg)
            .expect("plot written")
            .starts_with("<svg")
    );
    let out = gpuquota(&["sim", &scenario("resourcequota.yaml"), "--output", "csv"]);
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .starts_with("workload,queue,class,startMs,endMs,end,flavor,resource,amount\n")
    );
    let out = gpuquota(&["sim", &scenario("kueue.yaml"), "--output", "kueue-summary"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("clusterQueueClasses:\n"));
}

#[test]
fn a_bad_scenario_fails_with_every_problem() {
    let dir = std::env::temp_dir().join(format!("gpuquota-sim-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join("bad.yaml");
    std::fs::write(&p, "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nspec:\n  start: soon\n  cluster: [missing.yaml]\n").expect("write");
    let out = gpuquota(&["sim", &p.display().to_string()]);
    // every problem is printed; a file that cannot be read (missing.yaml) makes it exit 2
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("spec.start"), "{err}");
    assert!(err.contains("missing.yaml"), "{err}");
}

/// Kueue and KAI replays: stderr is not a terminal here, so no progress bar (and these
/// scenarios have no warnings): stderr stays empty, with and without `--quiet`.
#[test]
fn a_replay_draws_no_progress_when_stderr_is_not_a_terminal() {
    for args in [
        vec!["sim", "kueue.yaml", "-o", "csv"],
        vec!["sim", "kai/night.yaml", "-o", "csv"],
        vec!["sim", "kueue.yaml", "-o", "csv", "--quiet"],
    ] {
        let file = scenario(args[1]);
        let mut a = args.clone();
        a[1] = file.as_str();
        let out = gpuquota(&a);
        assert!(out.status.success(), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{args:?}");
        assert!(!out.stdout.is_empty());
    }
}
