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
            "--plot",
            "diff.svg",
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
    // the `sim diff` plot of current against recommended
    let svg = std::fs::read_to_string(dir.join("diff.svg")).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(40)]);
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

#[test]
fn shards_merge_into_the_unsharded_advice_byte_for_byte() {
    let dir = temp_dir("shards");
    let whole = run(&dir, &["advise", "advice.yaml", "-o", "json", "-q"]);
    assert_eq!(whole.status.code(), Some(0), "{}", text(&whole.stderr));
    // 40 simulations (the scenario and 39 of the components) in three contiguous slices
    for (i, (first, len)) in [(0, 14), (14, 13), (27, 13)].into_iter().enumerate() {
        let out = run(
            &dir,
            &["advise", "advice.yaml", "--shard", &format!("{i}/3"), "-q"],
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("shard JSON");
        assert_eq!(v["kind"], "AdviceShard");
        assert_eq!(v["shard"], serde_json::json!({"index": i, "count": 3}));
        assert_eq!(v["simulations"], 40);
        assert_eq!(v["first"], first);
        assert_eq!(v["runs"].as_array().map(Vec::len), Some(len));
        std::fs::write(dir.join(format!("s{i}.json")), &out.stdout).unwrap();
    }
    // any order of the files
    let merged = run(
        &dir,
        &[
            "advise",
            "advice.yaml",
            "--merge",
            "s2.json",
            "s0.json",
            "s1.json",
            "-o",
            "json",
            "-q",
        ],
    );
    assert_eq!(merged.status.code(), Some(0), "{}", text(&merged.stderr));
    assert_eq!(text(&merged.stdout), text(&whole.stdout));
    let table = |extra: &[&str]| {
        let mut args = vec!["advise", "advice.yaml", "-o", "table", "--explain", "-q"];
        args.extend_from_slice(extra);
        let out = run(&dir, &args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    assert_eq!(
        table(&["--merge", "s0.json", "s1.json", "s2.json"]),
        table(&[])
    );
    // a shard missing, a shard twice, a shard of another advice
    let out = run(
        &dir,
        &["advise", "advice.yaml", "--merge", "s0.json", "s2.json"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("shards 1 of 3 are missing"),
        "{}",
        text(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    let out = run(
        &dir,
        &[
            "advise",
            "advice.yaml",
            "--merge",
            "s0.json",
            "s0.json",
            "s1.json",
            "s2.json",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("s0.json: shard 0/3 is given twice (also s0.json)"),
        "{}",
        text(&out.stderr)
    );
    let advice = std::fs::read_to_string(dir.join("advice.yaml")).unwrap();
    std::fs::write(dir.join("other.yaml"), format!("{advice}# another\n")).unwrap();
    let out = run(
        &dir,
        &[
            "advise",
            "other.yaml",
            "--merge",
            "s0.json",
            "s1.json",
            "s2.json",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("s0.json: a shard of another advice, scenario or scenario file"),
        "{}",
        text(&out.stderr)
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn emit_job_runs_the_advice_shards_as_an_indexed_job() {
    let dir = temp_dir("emit");
    // a `$` in the file name reaches the program as written: the kubelet reads `$$` as `$`
    std::fs::copy(dir.join("advice.yaml"), dir.join("a$b.yaml")).unwrap();
    let out = run(
        &dir,
        &[
            "advise",
            "a$b.yaml",
            "--emit-job",
            "4",
            "--namespace",
            "research",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    for want in [
        "# The advice as 4 pods of an Indexed Job, admitted by Kueue through the LocalQueue default.\n",
        "#   gpuquota advise a$b.yaml --merge advise-a-b-*.json\n",
        "  name: advise-a-b-scenario\n  namespace: research\n",
        "  name: advise-a-b\n  namespace: research\n",
        "  completions: 4\n",
        "        - advise\n        - /scenario/a$$b.yaml\n        - --shard\n        - $(JOB_COMPLETION_INDEX)/4\n        - --quiet\n",
        "path: a$b.yaml",
        "path: sim.yaml",
        "path: platform.yaml",
    ] {
        assert!(t.contains(want), "{want:?} not in\n{t}");
    }
    // the sweep's checks and exit code (2): a namespace Kubernetes would refuse
    let out = run(
        &dir,
        &[
            "advise",
            "advice.yaml",
            "--emit-job",
            "2",
            "--namespace",
            "Research",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr)
            .contains("error: --namespace \"Research\": must be a lowercase RFC 1123 label"),
        "{}",
        text(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    std::fs::remove_dir_all(&dir).ok();
}

/// A KAI scenario's advice (`crates/gpuquota-advise/tests/data/kai`, hand-checked in that
/// crate's tests): `infer` needs a GPU quota of 4 and `train` a limit of 4 (point 9); the
/// patch and the what-if compare Kueue runs, so `--diff` is refused (exit 2).
#[test]
fn a_kai_advice_recommends_queue_fields() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../gpuquota-advise/tests/data/kai");
    let out = run(&dir, &["advise", "advice.yaml", "-o", "json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["recommended"]["point"], 9);
    assert_eq!(
        v["recommended"]["knobs"],
        serde_json::json!({
            "queues.infer.gpu.quota": "4",
            "queues.train.gpu.limit": "4",
            "queues.train.gpu.overQuotaWeight": "1"
        })
    );
    assert_eq!(v["search"]["simulated"], 13);
    // the patch, the what-if, its picture and the page, as for a Kueue advice
    let scratch = std::env::temp_dir().join(format!("gpuquota-advise-kai-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let (patch, svg, html) = (
        scratch.join("patch.yaml"),
        scratch.join("d.svg"),
        scratch.join("advice.html"),
    );
    let out = run(
        &dir,
        &[
            "advise",
            "advice.yaml",
            "--diff",
            "--patch-out",
            patch.to_str().unwrap(),
            "--plot",
            svg.to_str().unwrap(),
            "--report",
            html.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
    // the two Queues the recommendation changes (train's weight stays 1), as KAI's CRD
    // types them: numbers
    assert_eq!(
        std::fs::read_to_string(&patch).unwrap(),
        "# The advisor's recommendation: the objects it changes, to apply over the cluster files.\n\
         ---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata:\n  name: infer\nspec:\n  resources:\n    gpu:\n      quota: 4\n      overQuotaWeight: 1\n      limit: -1\n\
         ---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata:\n  name: train\nspec:\n  resources:\n    gpu:\n      quota: 4\n      overQuotaWeight: 1\n      limit: 4\n"
    );
    // as written, infer deserves nothing and its non-preemptible server never starts; with
    // 4 deserved it starts on arrival (00:30, 1 h: 4 GPU-hours), and train's limit of 4
    // holds train-b until train-a ends at 02:00: waits 0 and 2 h, mean 1 h, p95 2 h
    let table = text(&out.stdout);
    let what_if = &table[table
        .find("current (A) against recommended (B):")
        .expect("the diff")..];
    for row in [
        "  meanTimeToAdmissionMs                   0          3600000          3600000\n",
        "  p95TimeToAdmissionMs                    0          7200000          7200000\n",
        "  gpuHours                         0.000000         4.000000         4.000000\n",
        "  meanTimeToAdmissionMs                   -                0                -\n",
    ] {
        assert!(what_if.contains(row), "{row}{what_if}");
    }
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("The scenario as written (A) against the recommendation (B)"),
        "{page}"
    );
    std::fs::remove_dir_all(&scratch).ok();
}

#[test]
fn the_seed_kai_advice_recommends_batchs_limit() {
    let dir = std::env::temp_dir().join(format!("gpuquota-advice-kai-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, file) in [
        ("seed-platform", "platform.yaml"),
        ("seed-kai-platform", "kai-platform.yaml"),
        ("seed-kai-month", "kai-month.yaml"),
        ("seed-kai", "kai.yaml"),
        ("advice-kai", "advice-kai.yaml"),
    ] {
        let out = run(&dir, &["example", name]);
        std::fs::write(dir.join(file), &out.stdout).unwrap();
    }
    let out = run(
        &dir,
        &["--strict", "advise", "advice-kai.yaml", "-o", "json"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // 4 limits × 2 quotas, one component (a KAI grid is simulated whole), plus the
    // scenario as written
    assert_eq!(v["search"]["points"], 8);
    assert_eq!(v["search"]["simulated"], 9);
    // as written (limit 12) batch overruns its 1800 H200-hour budget
    assert_eq!(
        v["current"]["violated"],
        serde_json::json!(["budget{name=batch-monthly} not exceeded"])
    );
    assert_eq!(
        v["recommended"]["knobs"],
        serde_json::json!({"queues.batch.gpu.limit": "6", "queues.assistant.gpu.quota": "8"})
    );
    let f = &v["recommended"]["figures"];
    // the bill charges every card all month, busy or idle: (16 × 1.80 + 8 × 4.50) × 720 h
    // = 46,656.00 EUR, in cents, whatever the queues
    assert_eq!(f["cost"], 4_665_600);
    assert_eq!(f["p95TimeToAdmission{class=assistant}"], 0);
    assert!(f["budget{name=batch-monthly}"].as_f64().unwrap() >= 0.0);
    // the other front row: batch held to 4 GPUs keeps more budget but leaves H200s idle
    let rows = v["front"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["knobs"]["queues.batch.gpu.limit"], "4");
    assert!(
        rows[0]["figures"]["utilisation{cardType=H200}"].as_f64()
            < f["utilisation{cardType=H200}"].as_f64()
    );
    std::fs::remove_dir_all(&dir).ok();
}
