//! Files the command writes: only where asked (`--out`, `--out-dir`, `--plot`), never through
//! a symbolic link, never over an existing file without `--force`; and `sim -` reads its
//! scenario from standard input.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn run(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpuquota"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("the gpuquota binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A fresh empty directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gpuquota-files-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut n: Vec<String> = std::fs::read_dir(dir)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    n.sort();
    n
}

/// The old default run wrote its files into `$TMPDIR/gpuquota-seed/`, following a link
/// another user could plant there. Now it writes nothing at all: the link's target keeps its
/// content, and neither that directory nor the current one gets a file.
#[cfg(unix)]
#[test]
fn the_default_run_writes_no_file_and_follows_no_planted_link() {
    let root = scratch("planted");
    let tmp = root.join("tmp");
    let planted = tmp.join("gpuquota-seed");
    std::fs::create_dir_all(&planted).unwrap();
    let victim = root.join("victim.txt");
    std::fs::write(&victim, "the victim's file\n").unwrap();
    std::os::unix::fs::symlink(&victim, planted.join("platform.yaml")).unwrap();
    let cwd = root.join("cwd");
    std::fs::create_dir_all(&cwd).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_gpuquota"))
        .current_dir(&cwd)
        .env("TMPDIR", &tmp)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "the victim's file\n"
    );
    assert_eq!(names(&planted), ["platform.yaml"]);
    assert_eq!(names(&tmp), ["gpuquota-seed"]);
    assert_eq!(names(&cwd), Vec::<String>::new());
    let stdout = text(&out.stdout);
    assert!(!stdout.contains("gpuquota-seed"), "{stdout}");
    assert!(
        stdout.contains("  gpuquota example seed-kueue > kueue.yaml\n"),
        "{stdout}"
    );
    std::fs::remove_dir_all(&root).ok();
}

/// `--out DIR` creates DIR and writes the fifteen scenario files (the advice, the drills and
/// their MIG configs among them), four plots and the HTML report; a second run
/// refuses (exit 2, before any work, nothing on stdout, the files as they were) until
/// `--force` replaces them.
#[test]
fn out_writes_the_files_refuses_to_replace_them_and_force_does() {
    let root = scratch("out");
    let dir = root.join("new").join("seed");
    let d = dir.display().to_string();
    let out = run(&root, &["--out", &d]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        names(&dir),
        [
            "advice.yaml",
            "diff.svg",
            "drill-mig-window-kueue.yaml",
            "drill-mig-window-resourcequota.yaml",
            "drill-server-fails-kueue.yaml",
            "drill-server-fails-resourcequota.yaml",
            "kai-month.yaml",
            "kai-platform.yaml",
            "kai.svg",
            "kai.yaml",
            "kueue-no-lending-limit.yaml",
            "kueue.svg",
            "kueue.yaml",
            "mig-configs.yaml",
            "month.yaml",
            "platform.yaml",
            "report.html",
            "resourcequota.svg",
            "resourcequota.yaml",
            "seed-mig-plan.yaml",
        ]
    );
    let page = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"), "{}", &page[..40]);
    let platform = run(&root, &["example", "seed-platform"]).stdout;
    assert_eq!(std::fs::read(dir.join("platform.yaml")).unwrap(), platform);
    for svg in ["diff.svg", "kai.svg", "kueue.svg", "resourcequota.svg"] {
        let body = std::fs::read_to_string(dir.join(svg)).unwrap();
        assert!(body.starts_with("<svg"), "{svg}");
    }
    assert!(
        text(&out.stdout).contains(&format!("  gpuquota sim {d}/kueue.yaml -o table")),
        "{}",
        text(&out.stdout)
    );

    std::fs::write(dir.join("platform.yaml"), "edited\n").unwrap();
    let again = run(&root, &["--out", &d]);
    assert_eq!(again.status.code(), Some(2));
    assert_eq!(text(&again.stdout), "");
    assert_eq!(
        text(&again.stderr),
        format!("error: {d}/platform.yaml: exists; --force replaces it\n")
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("platform.yaml")).unwrap(),
        "edited\n"
    );

    let forced = run(&root, &["--out", &d, "--force"]);
    assert_eq!(forced.status.code(), Some(0), "{}", text(&forced.stderr));
    assert_eq!(std::fs::read(dir.join("platform.yaml")).unwrap(), platform);
    // no temporary file is left beside them
    assert_eq!(names(&dir).len(), 20, "{:?}", names(&dir));
    std::fs::remove_dir_all(&root).ok();
}

/// A symbolic link where `--out` would write is refused even with `--force`, before any
/// file is written; the link's target keeps its content.
#[cfg(unix)]
#[test]
fn out_refuses_a_symbolic_link_even_with_force() {
    let root = scratch("outlink");
    let dir = root.join("seed");
    std::fs::create_dir_all(&dir).unwrap();
    let victim = root.join("victim.svg");
    std::fs::write(&victim, "mine\n").unwrap();
    std::os::unix::fs::symlink(&victim, dir.join("kueue.svg")).unwrap();
    let d = dir.display().to_string();
    let out = run(&root, &["--out", &d, "--force"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stdout), "");
    assert_eq!(
        text(&out.stderr),
        format!("error: {d}/kueue.svg: is a symbolic link; not written\n")
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine\n");
    assert_eq!(names(&dir), ["kueue.svg"]);
    std::fs::remove_dir_all(&root).ok();
}

/// `--out` and `--force` belong to the run without a command.
#[test]
fn out_with_a_command_is_a_usage_error() {
    let root = scratch("outcmd");
    let out = run(&root, &["--out", "x", "example", "kueue"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr)
            .starts_with("error: --out and --force belong to the run without a command"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(names(&root), Vec::<String>::new());
    std::fs::remove_dir_all(&root).ok();
}

/// Saves the `sim` sample and the `kueue` sample it names into `dir`.
fn save_sim(dir: &Path) {
    for name in ["sim", "kueue"] {
        let out = run(dir, &["example", name]);
        std::fs::write(dir.join(format!("{name}.yaml")), out.stdout).unwrap();
    }
}

/// `sim -` reads the scenario from standard input; the files it names are relative to the
/// current directory: the same report as from the file.
#[test]
fn sim_reads_the_scenario_from_standard_input() {
    let dir = scratch("stdin");
    save_sim(&dir);
    let from_file = run(&dir, &["sim", "sim.yaml", "-o", "json"]);
    assert_eq!(from_file.status.code(), Some(0));
    let stdin = |cwd: &Path| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_gpuquota"))
            .args(["sim", "-", "-o", "json"])
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let scenario = std::fs::read(dir.join("sim.yaml")).unwrap();
        child.stdin.take().unwrap().write_all(&scenario).unwrap();
        child.wait_with_output().expect("wait")
    };
    let out = stdin(&dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), text(&from_file.stdout));
    // elsewhere, kueue.yaml is not beside it: a file that cannot be read, named (exit 2,
    // the README's code for an unreadable file, also one a scenario names)
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let out = stdin(&elsewhere);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stdout), "");
    assert!(
        text(&out.stderr).starts_with("error: kueue.yaml"),
        "{}",
        text(&out.stderr)
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `--plot FILE` refuses an existing file without `--force` (exit 2, nothing on stdout).
#[test]
fn sim_plot_refuses_an_existing_file_without_force() {
    let dir = scratch("plot");
    save_sim(&dir);
    std::fs::write(dir.join("usage.svg"), "old\n").unwrap();
    let out = run(&dir, &["sim", "sim.yaml", "--plot", "usage.svg"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stdout), "");
    assert_eq!(
        text(&out.stderr),
        "error: usage.svg: exists; --force replaces it\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("usage.svg")).unwrap(),
        "old\n"
    );
    let out = run(&dir, &["sim", "sim.yaml", "--plot", "usage.svg", "--force"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let svg = std::fs::read_to_string(dir.join("usage.svg")).unwrap();
    assert!(svg.starts_with("<svg"));
    std::fs::remove_dir_all(&dir).ok();
}

/// `man --out-dir DIR` creates DIR (and its parents) and writes one page per command;
/// again, it refuses to replace them without `--force`.
#[test]
fn man_out_dir_creates_the_directory() {
    let root = scratch("man");
    let dir = root.join("share").join("man1");
    let d = dir.display().to_string();
    let out = run(&root, &["man", "--out-dir", &d]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let pages = names(&dir);
    for page in [
        "gpuquota.1",
        "gpuquota-kueue-schedule.1",
        "gpuquota-sim-diff.1",
    ] {
        assert!(pages.contains(&page.to_owned()), "{pages:?}");
    }
    assert!(pages.iter().all(|p| p.ends_with(".1")), "{pages:?}");
    let root_page = std::fs::read(dir.join("gpuquota.1")).unwrap();
    assert_eq!(root_page, run(&root, &["man"]).stdout);
    let again = run(&root, &["man", "--out-dir", &d]);
    assert_eq!(again.status.code(), Some(2));
    assert_eq!(
        text(&again.stderr),
        format!("error: {d}/gpuquota.1: exists; --force replaces it\n")
    );
    let forced = run(&root, &["man", "--out-dir", &d, "--force"]);
    assert_eq!(forced.status.code(), Some(0));
    assert_eq!(names(&dir), pages);
    std::fs::remove_dir_all(&root).ok();
}
