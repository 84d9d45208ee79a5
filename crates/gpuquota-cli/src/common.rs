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
    /// OpenMetrics text (`meter`: GPU-hours and budgets as metrics).
    Openmetrics,
}

/// Reads a file (standard input for `-`) through the one bounded reader
/// ([`gpuquota_model::source::read_text`]), naming the file in the error.
pub(crate) fn read_file(path: &std::path::Path) -> Result<String, CliError> {
    gpuquota_model::source::read_text(path).map_err(|d| CliError(d.to_string()))
}

static STRICT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

/// Records the global `--strict` flag (called once by `main`).
pub(crate) fn set_strict(strict: bool) {
    let _ = STRICT.set(strict);
}

/// True under `--strict`: every warning is an error (exit 1).
pub(crate) fn strict() -> bool {
    STRICT.get().copied().unwrap_or(false)
}

/// Prints diagnostics to stderr, one per line with its severity (`warning:` is printed as
/// `error:` under `--strict`); returns true when the command must fail (exit 1).
pub(crate) fn print_diagnostics<'a>(
    diagnostics: impl IntoIterator<Item = &'a gpuquota_model::Diagnostic>,
) -> bool {
    let strict = strict();
    let mut failed = false;
    for d in diagnostics {
        let error = d.is_error(strict);
        failed |= error;
        eprintln!("{}: {d}", if error { "error" } else { "warning" });
    }
    failed
}

/// Pretty JSON with a trailing newline.
pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> Result<String, CliError> {
    let mut s = serde_json::to_string_pretty(value)?;
    s.push('\n');
    Ok(s)
}
