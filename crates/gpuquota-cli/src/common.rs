//! Pieces every subcommand shares: the error type, the output default and table width,
//! file loading.

/// How every command ends other than in success (the library's one result type): the exit
/// status and the lines `main` prints on stderr.
pub(crate) use gpuquota::command::Failure as CliError;

/// The context the library's commands run in: the global flags, stderr for their lines.
pub(crate) fn cx() -> gpuquota::command::Context<'static> {
    gpuquota::command::Context::new(strict(), verbose(), |line| eprintln!("{line}"))
}

/// True when standard output is a terminal (then a command's default `--output` is its table,
/// and tables fit the terminal's width).
pub(crate) fn stdout_is_terminal() -> bool {
    use std::io::IsTerminal as _;
    std::io::stdout().is_terminal()
}

/// The output format, chosen the same way by every command: the one asked for (`--output`),
/// else `table` on a terminal, else `json` (into a pipe or a file).
pub(crate) fn output_or<T>(chosen: Option<T>, table: T, json: T) -> T {
    chosen.unwrap_or(if stdout_is_terminal() { table } else { json })
}

static WIDE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

static VERBOSE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

/// Records the global `--verbose` flag (called once by `main`).
pub(crate) fn set_verbose(verbose: bool) {
    let _ = VERBOSE.set(verbose);
}

/// True under `--verbose`.
fn verbose() -> bool {
    VERBOSE.get().copied().unwrap_or(false)
}

/// Records the global `--wide` flag (called once by `main`).
pub(crate) fn set_wide(wide: bool) {
    let _ = WIDE.set(wide);
}

/// How wide tables are printed: the terminal's width on a terminal (wide cells wrap, nothing
/// is cut), full width into a pipe or file and under `--wide`. `COLUMNS`, when set to a
/// number, is the terminal's width.
pub(crate) fn table_width() -> gpuquota::model::text::Width {
    use gpuquota::model::text::Width;
    if WIDE.get().copied().unwrap_or(false) || !stdout_is_terminal() {
        return Width::Full;
    }
    let columns = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<u16>().ok())
        .filter(|&c| c > 0)
        .or_else(|| comfy_table::Table::new().width());
    Width::Fit(columns.unwrap_or(80))
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
    diagnostics: impl IntoIterator<Item = &'a gpuquota::model::Diagnostic>,
) -> bool {
    cx().diagnostics(diagnostics)
}

/// Pretty JSON with a trailing newline.
pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> Result<String, CliError> {
    let mut s = serde_json::to_string_pretty(value)?;
    s.push('\n');
    Ok(s)
}

/// Pretty JSON with a trailing newline, written to standard output as it is serialised:
/// the same bytes as printing [`to_json`], without holding the whole text in memory (the
/// JSON of a 55,000-Workload `kueue schedule` is 22 MB). A closed pipe ends the command as in
/// [`write_stdout`]. Serialising a report cannot fail but on a write, so nothing is written
/// before an input error.
pub(crate) fn write_json<T: serde::Serialize>(value: &T) -> Result<(), CliError> {
    use std::io::Write as _;
    let stdout = std::io::stdout().lock();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout);
    let written = match serde_json::to_writer_pretty(&mut out, value) {
        Ok(()) => out.write_all(b"\n").and_then(|()| out.flush()),
        Err(e) if e.io_error_kind() == Some(std::io::ErrorKind::BrokenPipe) => {
            std::process::exit(0)
        }
        Err(e) if e.is_io() => {
            return Err(CliError::usage(format!("writing standard output: {e}")));
        }
        Err(e) => return Err(CliError::usage(e.to_string())),
    };
    match written {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => Err(CliError::usage(format!("writing standard output: {e}"))),
    }
}

/// Writes to standard output. When the reader has gone away (`gpuquota | head -1`), the
/// command ends at once, quietly, with status 0, as ripgrep does: the reader took what it
/// wanted. Any other write error ends the command with exit status 2.
pub(crate) fn write_stdout(bytes: &[u8]) -> Result<(), CliError> {
    use std::io::Write as _;
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => Err(CliError::usage(format!("writing standard output: {e}"))),
    }
}

/// Gives `write` the standard output (buffered) to write to as it produces the bytes, with
/// [`write_stdout`]'s handling of a closed pipe and of other errors.
pub(crate) fn stream_stdout(
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), CliError> {
    use std::io::Write as _;
    let mut stdout = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    match write(&mut stdout).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => Err(CliError::usage(format!("writing standard output: {e}"))),
    }
}

/// `print!` through [`write_stdout`] (a closed pipe ends the command quietly, never a panic);
/// `?` returns the error of any other failed write.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::common::write_stdout(format!($($arg)*).as_bytes())?
    };
}

/// `println!` through [`write_stdout`].
macro_rules! outln {
    () => {
        $crate::common::write_stdout(b"\n")?
    };
    ($($arg:tt)*) => {{
        let mut line = format!($($arg)*);
        line.push('\n');
        $crate::common::write_stdout(line.as_bytes())?
    }};
}
