//! Output conventions of every command: `--output` values, the table default on a terminal,
//! tables that never cut a value, help that ends with examples that run, and a closed pipe
//! that ends the command quietly.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{gpuquota, text};

fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gpuquota-output-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Saves every `gpuquota example` sample into `dir` as `NAME.yaml`.
fn save_samples(dir: &Path) {
    let list = text(&gpuquota(&["example", "list"]).stdout);
    for line in list.lines().skip(1) {
        let t = line.trim_start();
        if t.is_empty() || t.starts_with("gpuquota ") || t.starts_with("> ") {
            continue;
        }
        let name = t.split_whitespace().next().expect("a name");
        let out = gpuquota(&["example", name]);
        assert!(out.status.success());
        std::fs::write(dir.join(format!("{name}.yaml")), &out.stdout).expect("save sample");
    }
}

/// The subcommands a help text lists (without `help`).
fn subcommands(help: &str) -> Vec<String> {
    let Some(at) = help.find("\nCommands:\n") else {
        return Vec::new();
    };
    help[at + "\nCommands:\n".len()..]
        .lines()
        .take_while(|l| !l.is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "help")
        .map(str::to_owned)
        .collect()
}

/// Every leaf command path (`["kueue", "schedule"]`, ...).
fn leaves() -> Vec<Vec<String>> {
    let mut todo = vec![Vec::<String>::new()];
    let mut leaves = Vec::new();
    while let Some(path) = todo.pop() {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let help = text(&gpuquota(&args).stdout);
        let subs = subcommands(&help);
        for s in &subs {
            let mut p = path.clone();
            p.push(s.clone());
            todo.push(p);
        }
        if subs.is_empty() {
            leaves.push(path);
        }
    }
    leaves.sort();
    leaves
}

/// The example command lines of a help text's `Examples` section.
fn examples(help: &str) -> Vec<String> {
    let Some(at) = help.find("\nExamples") else {
        return Vec::new();
    };
    help[at + 1..]
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter(|l| !l.starts_with("    "))
        .map(|l| {
            let body = l.trim_start();
            body.split("  ").next().unwrap_or(body).to_owned()
        })
        .collect()
}

#[test]
fn every_leaf_help_ends_with_examples_and_they_run_on_the_samples() {
    let dir = temp_dir("examples");
    save_samples(&dir);
    let leaves = leaves();
    assert!(leaves.len() >= 16, "{leaves:?}");
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_gpuquota"));
    let path = format!(
        "{}:{}",
        bin.parent().expect("bin dir").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut ran = 0;
    for leaf in &leaves {
        let mut args: Vec<&str> = leaf.iter().map(String::as_str).collect();
        args.push("--help");
        let help = text(&gpuquota(&args).stdout);
        let found = examples(&help);
        assert!(
            (2..=3).contains(&found.len()),
            "{leaf:?}: two or three examples at the end of\n{help}"
        );
        let tail = &help[help.find("\nExamples").expect("examples")..];
        assert!(
            !tail.contains("\nOptions:") && !tail.contains("\nArguments:"),
            "{leaf:?}: the examples end the help"
        );
        for line in found {
            // lines that need more than the samples: a cluster, a pager, a home directory
            if !line.starts_with("gpuquota ")
                || ["kubectl", "man -l", "~", "$", "/usr"]
                    .iter()
                    .any(|s| line.contains(s))
            {
                continue;
            }
            let out = Command::new("sh")
                .args(["-c", &line])
                .current_dir(&dir)
                .env("PATH", &path)
                .output()
                .expect("sh runs");
            assert_eq!(out.status.code(), Some(0), "{line}: {}", text(&out.stderr));
            assert!(!text(&out.stderr).contains("error"), "{line}");
            ran += 1;
        }
    }
    assert!(ran >= 30, "{ran} examples ran");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_closed_pipe_ends_every_command_quietly_with_status_0() {
    let dir = temp_dir("pipe");
    save_samples(&dir);
    for args in [
        &[][..],
        &["--help"],
        &["example", "kueue"],
        &["man"],
        &["completions", "bash"],
        &["kueue", "schedule", "kueue.yaml"],
        &["kai", "fairshare", "kai.yaml"],
        &["meter", "meter.yaml", "-o", "csv"],
        &["sim", "sim.yaml"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_gpuquota"))
            .args(args)
            .current_dir(&dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        // the reader goes away before the command writes
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("wait");
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert_eq!(text(&out.stderr), "", "{args:?}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_output_a_command_does_not_write_is_a_usage_error_listing_the_possible_values() {
    let dir = temp_dir("values");
    save_samples(&dir);
    let d = dir.display().to_string();
    let file = |f: &str| format!("{d}/{f}");
    for (args, values) in [
        (
            vec!["kai", "fairshare", &file("kai.yaml"), "--output", "csv"],
            "[possible values: table, json]",
        ),
        (
            vec!["mig", "profiles", "--output", "yaml"],
            "[possible values: table, json]",
        ),
        (
            vec!["kueue", "schedule", &file("kueue.yaml"), "-o", "yaml"],
            "[possible values: json, table]",
        ),
        (
            vec!["mig", "plan", &file("mig-plan.yaml"), "-o", "csv"],
            "[possible values: json, yaml, table]",
        ),
        (
            vec!["meter", &file("meter.yaml"), "-o", "yaml"],
            "[possible values: json, csv, table, openmetrics]",
        ),
        (
            vec!["quotas", &file("kueue.yaml"), "-o", "csv"],
            "[possible values: table, json]",
        ),
        (
            vec!["sim", &file("sim.yaml"), "-o", "yaml"],
            "[possible values: json, table, csv, kueue-summary, workloads]",
        ),
    ] {
        let out = gpuquota(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(text(&out.stdout), "", "{args:?}");
        let stderr = text(&out.stderr);
        assert!(stderr.starts_with("error: invalid value"), "{stderr}");
        assert!(stderr.contains(values), "{args:?}: {stderr}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn into_a_pipe_each_command_keeps_its_default() {
    let dir = temp_dir("defaults");
    save_samples(&dir);
    let d = dir.display().to_string();
    let run = |args: &[&str]| {
        let mut a: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
        for x in &mut a {
            if x.ends_with(".yaml") {
                *x = format!("{d}/{x}");
            }
        }
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let out = gpuquota(&a);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
        text(&out.stdout)
    };
    for json in [
        &["kueue", "schedule", "kueue.yaml"][..],
        &["kueue", "shares", "kueue.yaml"],
        &["kueue", "quotas", "kueue.yaml"],
        &["mig", "plan", "mig-plan.yaml"],
        &["meter", "meter.yaml"],
        &["sim", "sim.yaml"],
        // these printed a table into a pipe too; now the one rule holds for every command
        &["kai", "fairshare", "kai.yaml"],
        &["kai", "schedule", "kai.yaml"],
        &["quotas", "kueue.yaml"],
        &["sim", "diff", "sim.yaml", "sim.yaml"],
    ] {
        assert!(run(json).starts_with('{'), "{json:?}");
    }
    // the catalogue is a list of models
    assert!(run(&["mig", "profiles"]).starts_with("[\n  {\n    \"model\": \"A100"));
    assert!(run(&["kai", "fairshare", "kai.yaml", "-o", "table"]).starts_with("QUEUE (GPU)"));
    assert!(run(&["quotas", "kueue.yaml", "-o", "table"]).starts_with("Cohort tree"));
    assert!(run(&["mig", "profiles", "-o", "table"]).starts_with("A100"));
    // `-o` is `--output`
    assert_eq!(
        run(&["kueue", "schedule", "kueue.yaml", "-o", "table"]),
        run(&["kueue", "schedule", "kueue.yaml", "--output", "table"])
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A cluster with names and quantities wider than any column was: the tables print them
/// whole (`18922~` was printed for `18922Gi`).
const WIDE: &str = "\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: a-resource-flavor-with-a-long-name}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: the-platform-cohort-of-the-whole-organisation}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: a-cluster-queue-whose-name-is-longer-than-every-column}
spec:
  cohortName: the-platform-cohort-of-the-whole-organisation
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [memory]
    flavors:
    - name: a-resource-flavor-with-a-long-name
      resources: [{name: memory, nominalQuota: 18922Gi}]
";

#[test]
fn tables_print_every_value_whole() {
    let dir = temp_dir("wide");
    let f = dir.join("wide.yaml");
    std::fs::write(&f, WIDE).expect("fixture");
    let f = f.display().to_string();
    for args in [
        &["kueue", "quotas", &f, "-o", "table"][..],
        &["kueue", "shares", &f, "-o", "table"],
        &["quotas", &f, "-o", "table"],
        &["quotas", &f, "--wide", "-o", "table"],
    ] {
        let out = gpuquota(args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
        let t = text(&out.stdout);
        assert!(
            t.contains("a-cluster-queue-whose-name-is-longer-than-every-column"),
            "{args:?}: {t}"
        );
        assert!(!t.contains('~'), "{args:?}: {t}");
        if args[0] != "kueue" || args[1] == "quotas" {
            assert!(t.contains("18922Gi"), "{args:?}: {t}");
            assert!(
                t.contains("a-resource-flavor-with-a-long-name"),
                "{args:?}: {t}"
            );
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Runs `args` with standard output on a pseudo-terminal (`script`), `COLUMNS` columns wide;
/// `None` when `script` is not installed.
fn on_a_terminal(dir: &Path, args: &str, columns: u16) -> Option<String> {
    let bin = env!("CARGO_BIN_EXE_gpuquota");
    let out = Command::new("script")
        .args(["-qec", &format!("{bin} {args}"), "/dev/null"])
        .current_dir(dir)
        .env("COLUMNS", columns.to_string())
        .stdin(Stdio::null())
        .output()
        .ok()?;
    assert!(out.status.success(), "{args}: {}", text(&out.stdout));
    Some(text(&out.stdout).replace("\r\n", "\n"))
}

#[test]
fn on_a_terminal_the_default_is_a_table_that_fits_the_width() {
    let dir = temp_dir("tty");
    save_samples(&dir);
    std::fs::write(dir.join("wide.yaml"), WIDE).expect("fixture");
    let Some(schedule) = on_a_terminal(&dir, "kueue schedule kueue.yaml", 100) else {
        eprintln!("`script` is not installed: the terminal default is not checked");
        return;
    };
    assert!(schedule.starts_with("cycles: "), "{schedule}");
    let meter = on_a_terminal(&dir, "meter meter.yaml", 100).expect("script");
    assert!(meter.starts_with("department"), "{meter}");
    // 76 columns are too few for these names whole: the table wraps no word, so it stays
    // as wide as its longest words and numbers need rather than split one
    let narrow = on_a_terminal(&dir, "kueue quotas wide.yaml", 76).expect("script");
    for word in [
        "a-cluster-queue-whose-name-is-longer-than-every-column",
        "a-resource-flavor-with-a-long-name",
        "the-platform-cohort-of-the-whole-organisation",
        "18922Gi",
    ] {
        assert!(narrow.contains(word), "{word}: {narrow}");
    }
    // a table whose words fit wraps between them: the kueue sample's schedule at 60 columns
    let fits = on_a_terminal(&dir, "kueue schedule kueue.yaml", 60).expect("script");
    assert!(fits.lines().all(|l| l.chars().count() <= 60), "{fits}");
    let letters = |s: &str| s.chars().filter(|c| c.is_alphanumeric()).count();
    let wide = on_a_terminal(&dir, "kueue quotas wide.yaml --wide", 76).expect("script");
    assert!(wide.lines().any(|l| l.chars().count() > 76), "{wide}");
    // wrapped, not cut: the same characters
    assert_eq!(letters(&narrow), letters(&wide), "{narrow}\n{wide}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Every command: an invalid object and unreadable YAML exit 1, a file that cannot be opened
/// exits 2; nothing on stdout, and the first line on stderr says `error: `.
#[test]
fn every_command_has_the_same_exit_codes_and_error_prefix() {
    let dir = temp_dir("errors");
    std::fs::write(
        dir.join("bad.yaml"),
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: x}\nspec: {resourceGroups: 5}\n",
    )
    .expect("fixture");
    std::fs::write(dir.join("broken.yaml"), "foo: [\n").expect("fixture");
    for command in [
        &["validate"][..],
        &["quotas"],
        &["kueue", "schedule"],
        &["kueue", "shares"],
        &["kueue", "quotas"],
        &["kai", "fairshare"],
        &["kai", "schedule"],
        &["mig", "plan"],
        &["mig", "validate"],
        &["mig", "export"],
        &["meter"],
        &["sim"],
    ] {
        for (file, code) in [("bad.yaml", 1), ("broken.yaml", 1), ("missing.yaml", 2)] {
            let path = dir.join(file).display().to_string();
            let mut args = command.to_vec();
            args.push(&path);
            let out = gpuquota(&args);
            assert_eq!(
                out.status.code(),
                Some(code),
                "{args:?}: {}",
                text(&out.stderr)
            );
            assert_eq!(text(&out.stdout), "", "{args:?}");
            let stderr = text(&out.stderr);
            assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
            for line in stderr
                .lines()
                .filter(|l| l.starts_with(char::is_alphabetic))
            {
                assert!(
                    line.starts_with("error: ") || line.starts_with("warning: "),
                    "{args:?}: {line}"
                );
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
