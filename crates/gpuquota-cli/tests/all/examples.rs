//! `gpuquota example`: every sample input runs unchanged, under `--strict`, through every command
//! that `gpuquota example list` says reads it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn gpuquota(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpuquota"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the gpuquota binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gpuquota-examples-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// The (name, file, command lines) of `gpuquota example list`: a sample is saved as
/// `NAME.yaml` unless a `> FILE` line under it names another file.
fn listed(dir: &Path) -> Vec<(String, String, Vec<String>)> {
    let out = gpuquota(dir, &["example", "list"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let mut samples: Vec<(String, String, Vec<String>)> = Vec::new();
    for line in text(&out.stdout).lines().skip(1).filter(|l| !l.is_empty()) {
        let trimmed = line.trim_start();
        let last = samples.last_mut();
        if let Some(file) = trimmed.strip_prefix("> ") {
            last.expect("a file follows its sample").1 = file.to_string();
        } else if trimmed.starts_with("gpuquota ") {
            last.expect("a command follows its sample")
                .2
                .push(trimmed.to_string());
        } else {
            let name = trimmed.split_whitespace().next().expect("a name");
            samples.push((name.to_string(), format!("{name}.yaml"), Vec::new()));
        }
    }
    samples
}

#[test]
fn every_sample_runs_unchanged_through_every_listed_command() {
    let dir = temp_dir("run");
    let samples = listed(&dir);
    let names: Vec<&str> = samples.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "kueue",
            "kai",
            "kai-usage",
            "mig-plan",
            "meter",
            "sim",
            "budget",
            "seed-platform",
            "seed-month",
            "seed-resourcequota",
            "seed-kueue",
            "advice",
            "seed-kueue-no-lending-limit",
            "seed-kai-platform",
            "seed-kai-month",
            "seed-kai",
            "advice-kai",
            "seed-mig-configs",
            "seed-drill-server-fails-resourcequota",
            "seed-drill-server-fails-kueue",
            "seed-drill-mig-window-resourcequota",
            "seed-drill-mig-window-kueue",
            "seed-mig-plan"
        ]
    );
    // The seed platform's files go to their own directory: they name each other by the names
    // the default run gives them, which the other samples also use; the advice reads them.
    let seed = dir.join("seed");
    std::fs::create_dir_all(&seed).expect("seed dir");
    let home = |name: &str| {
        if name.starts_with("seed-") || name.starts_with("advice") {
            &seed
        } else {
            &dir
        }
    };
    // Save every sample first: a command may read several (kai with kai-usage).
    for (name, file, _) in &samples {
        let out = gpuquota(&dir, &["example", name]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert!(
            text(&out.stdout).starts_with("# "),
            "{name} opens with a comment"
        );
        std::fs::write(home(name).join(file), &out.stdout).expect("save sample");
    }
    let mut runs = 0;
    for (name, _, commands) in &samples {
        assert!(!commands.is_empty(), "{name} lists no command");
        for line in commands {
            let mut args: Vec<&str> = line.split_whitespace().skip(1).collect();
            args.insert(0, "--strict");
            let out = gpuquota(home(name), &args);
            assert_eq!(out.status.code(), Some(0), "{line}: {}", text(&out.stderr));
            assert_eq!(text(&out.stderr), "", "{line} warns");
            assert!(!out.stdout.is_empty(), "{line} prints nothing");
            runs += 1;
        }
    }
    assert_eq!(runs, 19 + 12 + 5); // advice-kai; the seed drills and their MIG configs: one command each
    std::fs::remove_dir_all(&dir).ok();
}

/// What the samples' comments promise, checked on the commands' output.
#[test]
fn samples_decide_what_their_comments_say() {
    let dir = temp_dir("decide");
    for name in ["kueue", "kai", "kai-usage"] {
        let out = gpuquota(&dir, &["example", name]);
        std::fs::write(dir.join(format!("{name}.yaml")), &out.stdout).expect("save sample");
    }
    // Kueue: the report borrows research's idle cards, the backfill exceeds the limit.
    let out = gpuquota(
        &dir,
        &["kueue", "schedule", "kueue.yaml", "--output", "json"],
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(report["admitted"][0]["workload"], "analytics/report");
    assert_eq!(report["pending"][0]["workload"], "analytics/backfill");
    assert_eq!(report["pending"][0]["reason"], "WaitingForQuota");
    // KAI: usage moves one over-quota GPU from vision (heavy past use) to nlp.
    let share = |extra: &[&str]| {
        let mut args = vec!["kai", "fairshare", "kai.yaml", "--output", "table"];
        args.extend_from_slice(extra);
        let out = text(&gpuquota(&dir, &args).stdout);
        let fair = |queue: &str| -> String {
            let row = out
                .lines()
                .find(|l| l.starts_with(queue))
                .expect("queue row");
            row.split_whitespace()
                .nth(2)
                .expect("fair share")
                .to_string()
        };
        (fair("nlp"), fair("vision"))
    };
    assert_eq!(share(&[]), ("5".to_string(), "11".to_string()));
    assert_eq!(
        share(&["--usage", "kai-usage.yaml"]),
        ("6".to_string(), "10".to_string())
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn example_defaults_to_the_list_and_rejects_unknown_names() {
    let dir = temp_dir("names");
    let default = gpuquota(&dir, &["example"]);
    let list = gpuquota(&dir, &["example", "list"]);
    assert_eq!(default.stdout, list.stdout);
    let bad = gpuquota(&dir, &["example", "nope"]);
    assert_eq!(bad.status.code(), Some(2));
    let stderr = text(&bad.stderr);
    assert!(
        stderr.starts_with("error: invalid value 'nope'"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "[possible values: list, kueue, kai, kai-usage, mig-plan, meter, sim, budget, seed-platform, seed-month, seed-resourcequota, seed-kueue, advice, seed-kueue-no-lending-limit, seed-kai-platform, seed-kai-month, seed-kai, advice-kai, seed-mig-configs, seed-drill-server-fails-resourcequota, seed-drill-server-fails-kueue, seed-drill-mig-window-resourcequota, seed-drill-mig-window-kueue, seed-mig-plan, grafana-dashboard]"
        ),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
