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
            "capacityChecked",
            "warnings"
        ]
    );
    assert_eq!(v["preemptions"], 1);
    assert_eq!(v["capacityChecked"], false);
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

/// The simulator's warnings reach stderr whatever the output format, and fail the run under
/// `--strict` (exit 1, nothing on stdout): the preemption loop's warning, and the bill's
/// own (3 cards of type F held at once where it has 2) with `spec.metering`.
#[test]
fn warnings_reach_stderr_in_every_format_and_fail_strict() {
    let dir = std::env::temp_dir().join(format!("gpuquota-sim-warn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch");
    std::fs::copy(
        scenario("preemption-loop/cluster.yaml"),
        dir.join("cluster.yaml"),
    )
    .expect("copy");
    let mut metered = std::fs::read_to_string(scenario("preemption-loop/loop.yaml")).expect("loop");
    metered.push_str(
        "  metering:\n    currency: EUR\n    cardTypes:\n    - {name: F, model: NVIDIA H200 NVL, pricePerHour: \"1.00\", capacity: 2, flavors: [f]}\n    departments:\n    - {name: team, namespaces: [ns]}\n",
    );
    std::fs::write(dir.join("metered.yaml"), metered).expect("write");
    let file = dir.join("metered.yaml").display().to_string();
    let lines = |severity: &str| {
        format!(
            "{severity}: Workload \"ns/w1\": preemption loop: ns/w1 preempted ns/w0 2 times between 0 ms and 0 ms; held back to the next millisecond 1 time(s) after a second eviction at one instant; the victim was readmitted ahead of its preemptor (Kueue loops the same way at its default feature gates)\n\
             {severity}: spec.metering: card type F: 3.0000 cards held at 1775001600, more than the capacity 2 (more cards than exist: check the input); idle (capacity × T − charged) shrinks by the excess\n"
        )
    };
    for format in ["json", "table", "csv", "kueue-summary"] {
        let out = gpuquota(&["sim", &file, "--output", format]);
        assert_eq!(out.status.code(), Some(0), "{format}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            lines("warning"),
            "{format}"
        );
        assert!(!out.stdout.is_empty(), "{format}");
        let out = gpuquota(&["--strict", "sim", &file, "--output", format]);
        assert_eq!(out.status.code(), Some(1), "{format}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            lines("error"),
            "{format}"
        );
        assert!(out.stdout.is_empty(), "{format}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
