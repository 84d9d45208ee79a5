//! The golden corpus: each directory of `tests/golden/` is a scenario (its input files and a
//! `commands` file), and each command's whole result (exit status, standard output, standard
//! error) is pinned byte for byte in `NAME.out` beside it.
//!
//! `commands` holds one `NAME: ARGS` line per run (`#` starts a comment; ARGS are split on
//! whitespace and passed to `gpuquota`, run in a scratch copy of the directory so commands
//! that write files leave the corpus clean). After a reviewed change of behaviour, rewrite the
//! expected files with `UPDATE_GOLDEN=1 cargo test -p gpuquota-cli --test all golden` and review
//! the diff: JSON and CSV are contracts and change only when an issue says so; tables may
//! change layout.

use std::path::{Path, PathBuf};
use std::process::Command;

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// `(name, args)` of a scenario's `commands` file.
fn commands(dir: &Path) -> Vec<(String, Vec<String>)> {
    let text = std::fs::read_to_string(dir.join("commands")).expect("a commands file");
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (name, args) = l.split_once(':').expect("NAME: ARGS");
            (
                name.trim().to_string(),
                args.split_whitespace().map(str::to_string).collect(),
            )
        })
        .collect()
}

/// Copies the scenario's files (not its expected outputs) into a fresh scratch directory.
fn scratch_copy(dir: &Path, scenario: &str) -> PathBuf {
    let to =
        std::env::temp_dir().join(format!("gpuquota-golden-{scenario}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&to);
    std::fs::create_dir_all(&to).expect("scratch dir");
    for entry in std::fs::read_dir(dir).expect("scenario dir") {
        let path = entry.expect("entry").path();
        if path.is_file() && path.extension().is_none_or(|e| e != "out") {
            std::fs::copy(&path, to.join(path.file_name().expect("name"))).expect("copy input");
        }
    }
    to
}

fn snapshot(args: &[String], cwd: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_gpuquota"))
        .args(args)
        .current_dir(cwd)
        .env_remove("COLUMNS")
        .env("NO_COLOR", "1")
        .output()
        .expect("the gpuquota binary runs");
    // paths under the temporary directory (the scratch copy's, in a message) are pinned as
    // `$TMP`, whatever the machine's temporary directory is
    let tmp = std::env::temp_dir().display().to_string();
    let tmp = tmp.trim_end_matches('/');
    format!(
        "$ gpuquota {}\nexit: {}\n--- stdout\n{}--- stderr\n{}",
        args.join(" "),
        out.status
            .code()
            .map_or_else(|| "signal".to_string(), |c| c.to_string()),
        String::from_utf8_lossy(&out.stdout).replace(tmp, "$TMP"),
        String::from_utf8_lossy(&out.stderr).replace(tmp, "$TMP"),
    )
}

/// The first line where two texts differ, for a readable failure.
fn first_difference(got: &str, want: &str) -> String {
    for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
        if g != w {
            return format!("line {}:\n  got:  {g}\n  want: {w}", i + 1);
        }
    }
    format!(
        "one is a prefix of the other ({} vs {} lines)",
        got.lines().count(),
        want.lines().count()
    )
}

#[test]
fn every_scenario_gives_its_pinned_output() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut scenarios: Vec<PathBuf> = std::fs::read_dir(corpus())
        .expect("the corpus")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("commands").is_file())
        .collect();
    scenarios.sort();
    let mut failures = Vec::new();
    let mut runs = 0;
    for dir in &scenarios {
        let scenario = dir
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        let cwd = scratch_copy(dir, &scenario);
        for (name, args) in commands(dir) {
            runs += 1;
            let got = snapshot(&args, &cwd);
            let path = dir.join(format!("{name}.out"));
            if update {
                std::fs::write(&path, &got).expect("write golden file");
            }
            let want = std::fs::read_to_string(&path).unwrap_or_default();
            if got != want {
                failures.push(format!(
                    "{}: {}",
                    path.display(),
                    first_difference(&got, &want)
                ));
            }
        }
        let _ = std::fs::remove_dir_all(&cwd);
    }
    assert!(runs >= 30, "only {runs} pinned runs");
    assert!(
        failures.is_empty(),
        "{} of {runs} runs differ from their pinned output (UPDATE_GOLDEN=1 rewrites them; review the diff):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The seed platform is the corpus's first entry, as the default run's reference.
#[test]
fn the_seed_platform_is_the_first_scenario() {
    let mut names: Vec<String> = std::fs::read_dir(corpus())
        .expect("the corpus")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.contains(&"seed".to_string()));
    let seed = commands(&corpus().join("seed"));
    assert_eq!(seed[0].0, "default");
    assert!(seed[0].1.is_empty(), "the default run takes no arguments");
}

/// The HTML page of the seed month (`gpuquota --out DIR` writes it as `DIR/report.html`) is
/// pinned byte for byte as `seed/report.html`: the same input gives the same page.
#[test]
fn the_seed_month_page_is_pinned() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let dir = std::env::temp_dir().join(format!("gpuquota-golden-page-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = Command::new(env!("CARGO_BIN_EXE_gpuquota"))
        .arg("--out")
        .arg(&dir)
        .output()
        .expect("the gpuquota binary runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = std::fs::read_to_string(dir.join("report.html")).expect("report.html");
    let path = corpus().join("seed/report.html");
    if update {
        std::fs::write(&path, &got).expect("write golden file");
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        got == want,
        "{} differs (UPDATE_GOLDEN=1 rewrites it; review the diff): {}",
        path.display(),
        first_difference(&got, &want)
    );
}
