//! A scenario's file reader as the simulator and the advisor take it (a file name to the
//! name shown in messages and the file's text, or a diagnostic), over files held in memory or
//! over a directory: the readers the simulator's, the advisor's and the reports' tests share.

use std::path::{Path, PathBuf};

use gpuquota_model::Diagnostic;
use gpuquota_model::diag::codes::READ_FAILED;

/// A reader over `files` (name, text): a name among them gives itself and its text, any
/// other name a `read-failed` error naming it.
pub fn in_memory(
    files: Vec<(&'static str, String)>,
) -> impl Fn(&str) -> Result<(String, String), Diagnostic> {
    move |f: &str| {
        files
            .iter()
            .find(|(n, _)| *n == f)
            .map(|(n, t)| ((*n).to_owned(), t.clone()))
            .ok_or_else(|| Diagnostic::error(READ_FAILED, format!("{f}: no such file")))
    }
}

/// A reader of the files in `dir`, by their path relative to it (shown as given); a file
/// that cannot be read is a `read-failed` error with the system's message.
pub fn in_dir(dir: impl Into<PathBuf>) -> impl Fn(&str) -> Result<(String, String), Diagnostic> {
    let dir = dir.into();
    move |f: &str| {
        std::fs::read_to_string(dir.join(f))
            .map(|t| (f.to_owned(), t))
            .map_err(|e| Diagnostic::error(READ_FAILED, e.to_string()))
    }
}

/// A reader of the files next to the file `scenario` ([`in_dir`] of its directory).
pub fn beside(scenario: &Path) -> impl Fn(&str) -> Result<(String, String), Diagnostic> {
    in_dir(scenario.parent().unwrap_or(Path::new("")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_memory_finds_by_name_and_names_a_missing_file() {
        let read = in_memory(vec![("a.yaml", "x: 1".to_owned())]);
        assert_eq!(
            read("a.yaml").unwrap(),
            ("a.yaml".to_owned(), "x: 1".to_owned())
        );
        let e = read("b.yaml").unwrap_err();
        assert_eq!(e.code, READ_FAILED);
        assert_eq!(e.message, "b.yaml: no such file");
    }

    #[test]
    fn beside_reads_the_scenarios_neighbours() {
        let read = beside(Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/Cargo.toml"
        )));
        let (name, text) = read("src/files.rs").unwrap();
        assert_eq!(name, "src/files.rs");
        assert!(text.starts_with("//! A scenario's file reader"));
        assert_eq!(read("missing.yaml").unwrap_err().code, READ_FAILED);
    }
}
