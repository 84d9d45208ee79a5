//! What the command-line tests share: running the built binary and writing fixtures.

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs the `gpuquota` binary with `args`.
pub(crate) fn gpuquota(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpuquota"))
        .args(args)
        .output()
        .expect("the gpuquota binary runs")
}

/// Output bytes as text.
pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Writes `files` into a fresh directory named after the suite and the test; returns their
/// paths.
pub(crate) fn write_in(suite: &str, test: &str, files: &[(&str, &str)]) -> Vec<String> {
    let dir: PathBuf =
        std::env::temp_dir().join(format!("gpuquota-{suite}-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    files
        .iter()
        .map(|(name, body)| {
            let p = dir.join(name);
            std::fs::write(&p, body).expect("write fixture");
            p.display().to_string()
        })
        .collect()
}
