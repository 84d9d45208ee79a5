//! What every published package carries: both license texts and a README from its own
//! directory (links to the top-level files, which `cargo package` follows), and the workspace
//! version. A link turned into a stale copy fails here.

use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

const CRATES: [&str; 11] = [
    "gpuquota",
    "gpuquota-advise",
    "gpuquota-cli",
    "gpuquota-cohort",
    "gpuquota-fairshare",
    "gpuquota-metering",
    "gpuquota-mig",
    "gpuquota-model",
    "gpuquota-rank",
    "gpuquota-report",
    "gpuquota-sim",
];

/// Test support for the other crates' tests, never published (`publish = false`).
const UNPUBLISHED: [&str; 1] = ["gpuquota-testkit"];

#[test]
fn every_package_carries_both_licenses_and_a_readme() {
    let root = workspace();
    let mut dirs: Vec<String> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| {
            !(UNPUBLISHED.contains(&name.as_str())
                && read(&root.join("crates").join(name).join("Cargo.toml"))
                    .contains("\npublish = false\n"))
        })
        .collect();
    dirs.sort();
    assert_eq!(
        dirs, CRATES,
        "a new crate needs its LICENSE-* and README.md"
    );
    for name in CRATES {
        let dir = root.join("crates").join(name);
        for license in ["LICENSE-MIT", "LICENSE-APACHE"] {
            assert_eq!(
                read(&dir.join(license)),
                read(&root.join(license)),
                "{name}/{license}"
            );
        }
        let manifest = read(&dir.join("Cargo.toml"));
        assert!(manifest.contains("\nreadme = \"README.md\"\n"), "{name}");
        assert!(manifest.contains("\nversion.workspace = true\n"), "{name}");
        assert!(!manifest.contains("publish = false"), "{name}");
        let readme = read(&dir.join("README.md"));
        if ["gpuquota", "gpuquota-cli"].contains(&name) {
            // The facade's and the command's page is the project's README.
            assert_eq!(readme, read(&root.join("README.md")), "{name}/README.md");
        } else {
            assert!(
                readme.starts_with(&format!("# {name}\n")),
                "{name}/README.md"
            );
        }
    }
}

#[test]
fn readme_first_screen_has_the_install_command_and_the_exit_status_is_documented() {
    let readme = read(&workspace().join("README.md"));
    let first_screen: String = readme.lines().take(24).collect::<Vec<_>>().join("\n");
    assert!(
        first_screen.contains("cargo install gpuquota-cli"),
        "{first_screen}"
    );
    assert!(readme.contains(
        "Exit status, the same for every command: **0** success; **1** problems in the input"
    ));
}

#[test]
fn ci_runs_the_readmes_test_command() {
    let readme = read(&workspace().join("README.md"));
    let ci = read(&workspace().join(".ci/run"));
    assert!(readme.contains("\ncargo test --workspace       #"));
    assert!(ci.lines().any(|l| l == "cargo test --workspace"), "{ci}");
}
