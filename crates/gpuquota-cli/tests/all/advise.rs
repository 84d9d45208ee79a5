//! `gpuquota advise`: the table, the patch, the what-if, the exit codes.

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

fn ten_queues() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../gpuquota-advise/tests/data/ten-queues")
}

fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gpuquota-advise-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for f in ["advice.yaml", "sim.yaml", "platform.yaml"] {
        std::fs::copy(ten_queues().join(f), dir.join(f)).expect("copy");
    }
    dir
}

#[test]
fn the_table_recommends_and_explains_and_the_patch_holds_the_changed_queues() {
    let dir = temp_dir("patch");
    let out = run(
        &dir,
        &[
            "advise",
            "advice.yaml",
            "--explain",
            "--patch-out",
            "rec.yaml",
            "--diff",
            "--report",
            "advice.html",
            "-o",
            "table",
            "-q",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    assert!(
        t.starts_with(
            "advice ten-queues over sim.yaml: 540 configurations, 40 simulated (decomposed)\n"
        ),
        "{t}"
    );
    assert!(t.contains("recommended: clusterQueues.a0.nominalQuota = 4, clusterQueues.b0.borrowingLimit = 4, clusterQueues.a1.nominalQuota = 5, nodes.n2.count = 1\n"), "{t}");
    assert!(
        t.contains("  clusterQueues.a1.nominalQuota at 5; moving it to 4:"),
        "{t}"
    );
    assert!(t.contains("current (A) against recommended (B):"), "{t}");
    let patch = std::fs::read_to_string(dir.join("rec.yaml")).unwrap();
    // a1's quota 4 → 5 is the one change: a0 and b0 stay as written, n2 stays one Node
    assert_eq!(patch.matches("kind: ClusterQueue").count(), 1, "{patch}");
    assert!(
        patch.contains("name: a1") && patch.contains("nominalQuota: \"5\""),
        "{patch}"
    );
    assert!(!patch.contains("kind: Node"), "{patch}");
    // the page: the front, the recommendation's figures and the what-if against it
    let page = std::fs::read_to_string(dir.join("advice.html")).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"), "{}", &page[..40]);
    assert!(page.contains("The Pareto front"), "front");
    assert!(
        page.contains("data-figure=\"recommended:cost\""),
        "recommended figures"
    );
    assert!(
        page.contains(" (recommended)<"),
        "the recommended row is marked"
    );
    assert!(
        page.contains("The scenario as written (A) against the recommendation (B)"),
        "what-if"
    );
    // the safe writer refuses to replace the patch without --force
    let again = run(
        &dir,
        &["advise", "advice.yaml", "--patch-out", "rec.yaml", "-q"],
    );
    assert_eq!(again.status.code(), Some(2), "{}", text(&again.stderr));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn csv_has_one_row_per_configuration_shown() {
    let out = run(&ten_queues(), &["advise", "advice.yaml", "-o", "csv", "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    let lines: Vec<&str> = t.lines().collect();
    // header, current, the front's two rows
    assert_eq!(lines.len(), 4, "{t}");
    assert!(
        lines[0].starts_with("role,point,clusterQueues.a0.nominalQuota,"),
        "{t}"
    );
    assert!(lines[1].starts_with("current,,"), "{t}");
    assert!(lines.iter().any(|l| l.starts_with("recommended,")), "{t}");
}

#[test]
fn unreadable_files_exit_2_and_bad_advice_exits_1() {
    let dir = temp_dir("codes");
    let out = run(&dir, &["advise", "missing.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    std::fs::write(dir.join("bad.yaml"), "apiVersion: gpuquota.dev/v1alpha1\nkind: Advice\nspec:\n  scenario: sim.yaml\n  vary: [{path: clusterQueues.a0.nominalQuota, values: 0..2}]\n  objectives: [{minimize: waiting}]\n").unwrap();
    let out = run(&dir, &["advise", "bad.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("unknown metric"),
        "{}",
        text(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    std::fs::write(dir.join("gone.yaml"), "apiVersion: gpuquota.dev/v1alpha1\nkind: Advice\nspec:\n  scenario: nothere.yaml\n  vary: [{path: clusterQueues.a0.nominalQuota, values: 0..2}]\n  objectives: [{minimize: cost}]\n").unwrap();
    let out = run(&dir, &["advise", "gone.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).ok();
}
