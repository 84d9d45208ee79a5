//! `gpuquota sim` in KAI mode end to end: KAI's time-based-fairshare simulator config as a
//! whole scenario with `--output csv` (KAI's CSV) and `--plot` (a panel per leaf queue), and a
//! `Simulation` with `engine: kai` as JSON.

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
        .join("../gpuquota-sim/tests/data/kai")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn kai_simulator_config_writes_kai_csv_and_two_panels() {
    let dir = std::env::temp_dir().join(format!("gpuquota-sim-kai-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let svg = dir.join("osc.svg");
    let svg_s = svg.display().to_string();
    let out = gpuquota(&[
        "sim",
        &scenario("two-queue-oscillation.yaml"),
        "--output",
        "csv",
        "--plot",
        &svg_s,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = String::from_utf8(out.stdout).expect("utf-8");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 1024 * 3);
    assert_eq!(lines[0], "Time,QueueID,Allocation,FairShare");
    assert_eq!(lines[2], "0,team-a,16.000000,8.000000");
    assert_eq!(lines[3 * 1023 + 3], "1023,team-b,0.000000,3.000000");
    let plot = std::fs::read_to_string(&svg).expect("plot written");
    assert!(plot.starts_with("<svg"));
    // one panel per leaf queue, allocation against fair share, over KAI's cycles
    assert!(plot.contains(">\nteam-a (department simulation)\n</text>"));
    assert!(plot.contains(">\nteam-b (department simulation)\n</text>"));
    assert!(plot.contains(">\nfair share\n</text>"));
    assert!(plot.contains(">\nsession (cycle)\n</text>"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn kai_simulation_json_and_errors() {
    let out = gpuquota(&["sim", &scenario("night.yaml")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["engine"], "kai");
    assert_eq!(v["workloads"][1]["runs"][0]["action"], "reclaim");
    let summary = gpuquota(&["sim", &scenario("night.yaml"), "--output", "kueue-summary"]);
    assert_eq!(summary.status.code(), Some(2));
    assert!(summary.stdout.is_empty());
}
