//! Pieces every subcommand shares: the error type, output formats, file loading.

use std::fmt;

/// An error that ends the command (exit code 2 unless a command says otherwise).
#[derive(Debug)]
pub(crate) struct CliError(pub(crate) String);

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<E: std::error::Error> From<E> for CliError {
    fn from(e: E) -> Self {
        CliError(e.to_string())
    }
}

/// `--output` values shared by the commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum OutputFormat {
    /// A table for an 80-column terminal.
    Table,
    /// Stable JSON (documented per command).
    Json,
    /// YAML (where a command supports it).
    Yaml,
    /// CSV (where a command supports it).
    Csv,
}

/// Reads a file into a string, naming the file in the error.
pub(crate) fn read_file(path: &std::path::Path) -> Result<String, CliError> {
    std::fs::read_to_string(path).map_err(|e| CliError(format!("{}: {e}", path.display())))
}

/// Pretty JSON with a trailing newline.
pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> Result<String, CliError> {
    let mut s = serde_json::to_string_pretty(value)?;
    s.push('\n');
    Ok(s)
}
