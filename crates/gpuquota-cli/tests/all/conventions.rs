//! The command's conventions as a user meets them: `--version`, help, exit status, shell
//! completions and manual pages.

use std::process::{Command, Output};

fn gpuquota(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpuquota"))
        .args(args)
        .output()
        .expect("the gpuquota binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn version_prints_the_workspace_version() {
    let out = gpuquota(&["--version"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stdout), "gpuquota 0.1.0\n");
}

#[test]
fn root_help_ends_with_examples_and_exit_status() {
    let out = gpuquota(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = text(&out.stdout);
    let examples = help.find("\nExamples:\n").expect("examples");
    let exit = help.find("\nExit status:\n").expect("exit status");
    assert!(examples < exit, "{help}");
    assert!(help.ends_with(
        "Exit status:\n  0  success\n  1  problems in the input (each printed on stderr), or \
         warnings under --strict\n  2  usage: an unknown command, flag or value, or a file that \
         cannot be read\n"
    ));
    assert!(help.contains("Without a command, gpuquota prints what every engine decides"));
    // `-h` shows the same contract.
    assert!(text(&gpuquota(&["-h"]).stdout).contains("\nExit status:\n"));
}

#[test]
fn usage_errors_exit_2_with_the_error_prefix() {
    for args in [
        &["--no-such-flag"][..],
        &["no-such-command"],
        &["completions", "tcsh"],
        &["man", "kueue", "nope"],
        &["kueue", "schedule"],
    ] {
        let out = gpuquota(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(text(&out.stdout), "", "{args:?}");
        let stderr = text(&out.stderr);
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    }
}

#[test]
fn input_problems_exit_1() {
    let dir = std::env::temp_dir().join(format!("gpuquota-conventions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.yaml");
    std::fs::write(
        &bad,
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n",
    )
    .unwrap();
    let out = gpuquota(&["validate", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn completions_print_a_script_per_shell() {
    let out = gpuquota(&["completions", "bash"]);
    assert_eq!(out.status.code(), Some(0));
    let script = text(&out.stdout);
    assert!(script.contains("complete -F _gpuquota"), "{script}");
    assert!(script.contains("kueue"));
    let zsh = text(&gpuquota(&["completions", "zsh"]).stdout);
    assert!(zsh.starts_with("#compdef gpuquota\n"), "{zsh}");
    let fish = text(&gpuquota(&["completions", "fish"]).stdout);
    assert!(fish.contains("complete -c gpuquota "), "{fish}");
    let bad = gpuquota(&["completions", "tcsh"]);
    let stderr = text(&bad.stderr);
    assert!(stderr.contains("[possible values: bash, elvish, fish, powershell, zsh]"));
}

#[test]
fn man_prints_roff_and_writes_every_page() {
    let out = gpuquota(&["man"]);
    assert_eq!(out.status.code(), Some(0));
    let page = text(&out.stdout);
    assert!(page.contains(".TH gpuquota 1"), "{page}");
    assert!(page.contains(".SH SUBCOMMANDS"), "{page}");
    let sub = text(&gpuquota(&["man", "mig", "plan"]).stdout);
    assert!(sub.contains(".TH gpuquota-mig-plan 1"), "{sub}");

    let dir = std::env::temp_dir().join(format!("gpuquota-man-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = gpuquota(&["man", "--out-dir", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let mut pages: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    for expected in [
        "gpuquota.1",
        "gpuquota-kueue.1",
        "gpuquota-kueue-schedule.1",
        "gpuquota-kai-fairshare.1",
        "gpuquota-mig-plan.1",
        "gpuquota-meter.1",
        "gpuquota-completions.1",
        "gpuquota-man.1",
    ] {
        assert!(
            pages.iter().any(|p| p == expected),
            "{expected} in {pages:?}"
        );
    }
    assert!(!pages.iter().any(|p| p.contains("help")), "{pages:?}");
    // The written root page is the printed one.
    assert_eq!(
        std::fs::read_to_string(dir.join("gpuquota.1")).unwrap(),
        page
    );
    std::fs::remove_dir_all(&dir).ok();
}
