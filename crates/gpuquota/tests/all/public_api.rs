//! The public API of every published library crate against its committed snapshot
//! (`tests/public-api/CRATE.txt`), so that the public surface changes only on purpose.
//!
//! rustdoc's JSON output (an unstable format, so built with one pinned nightly,
//! [`TOOLCHAIN`]) is rendered by the `public-api` crate, one item per line, sorted, blanket
//! impls left out, every feature on. A change to a public item fails here with the lines
//! removed and added; when the change is meant, `UPDATE_PUBLIC_API=1 cargo test -p gpuquota
//! --test all public_api` rewrites the snapshots, and the diff goes into the same commit.
//!
//! Without the pinned toolchain (`rustup toolchain install nightly-2026-05-19 --profile
//! minimal`) the test says on stderr that it is skipped, and passes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The nightly whose rustdoc JSON format (version 57) the pinned `public-api` reads.
const TOOLCHAIN: &str = "nightly-2026-05-19";

/// The published library crates.
const CRATES: [&str; 10] = [
    "gpuquota",
    "gpuquota-model",
    "gpuquota-cohort",
    "gpuquota-fairshare",
    "gpuquota-rank",
    "gpuquota-mig",
    "gpuquota-metering",
    "gpuquota-sim",
    "gpuquota-advise",
    "gpuquota-report",
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `rustup run TOOLCHAIN PROGRAM` without the toolchain choice of the outer `cargo test`.
fn nightly(program: &str) -> Command {
    let mut c = Command::new("rustup");
    c.args(["run", TOOLCHAIN, program]);
    for var in [
        "RUSTUP_TOOLCHAIN",
        "RUSTC",
        "RUSTDOC",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET_DIR",
    ] {
        c.env_remove(var);
    }
    c
}

#[test]
fn the_public_api_of_every_published_crate_is_its_snapshot() {
    let installed = nightly("rustdoc")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !installed {
        eprintln!(
            "public API check skipped: toolchain {TOOLCHAIN} is not installed \
             (rustup toolchain install {TOOLCHAIN} --profile minimal)"
        );
        return;
    }
    let root = workspace();
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| root.join("target"), PathBuf::from)
        .join("public-api");
    // One `cargo doc` for all of them: their dependencies are checked once.
    let mut doc = nightly("cargo");
    doc.current_dir(&root)
        .env("RUSTDOCFLAGS", "-Z unstable-options --output-format json")
        .args(["doc", "--quiet", "--no-deps", "--all-features", "--locked"])
        .arg("--target-dir")
        .arg(&target);
    for c in CRATES {
        doc.args(["-p", c]);
    }
    let status = doc.status().expect("cargo doc runs");
    assert!(
        status.success(),
        "rustdoc JSON of the published crates: {status}"
    );

    let update = std::env::var_os("UPDATE_PUBLIC_API").is_some();
    let snapshots = root.join("crates/gpuquota/tests/public-api");
    let mut differ = Vec::new();
    for c in CRATES {
        let json = target
            .join("doc")
            .join(format!("{}.json", c.replace('-', "_")));
        let api = public_api::Builder::from_rustdoc_json(&json)
            .omit_blanket_impls(true)
            .build()
            .unwrap_or_else(|e| panic!("{}: {e}", json.display()));
        let now = api.to_string();
        let file = snapshots.join(format!("{c}.txt"));
        let before = std::fs::read_to_string(&file).unwrap_or_default();
        if now == before {
            continue;
        }
        if update {
            std::fs::create_dir_all(&snapshots).expect("tests/public-api");
            std::fs::write(&file, &now).expect("write the snapshot");
            continue;
        }
        let old: BTreeSet<&str> = before.lines().collect();
        let new: BTreeSet<&str> = now.lines().collect();
        let mut d = format!("{c} ({}):\n", file.display());
        for l in old.difference(&new) {
            d.push_str(&format!("  - {l}\n"));
        }
        for l in new.difference(&old) {
            d.push_str(&format!("  + {l}\n"));
        }
        differ.push(d);
    }
    assert!(
        differ.is_empty(),
        "the public API changed (UPDATE_PUBLIC_API=1 cargo test -p gpuquota --test all \
         public_api rewrites the snapshots if the change is meant):\n{}",
        differ.concat()
    );
}
