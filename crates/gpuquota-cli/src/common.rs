//! Pieces every subcommand shares: the error type, the output default and table width,
//! file loading.

use std::fmt;

/// How every command ends other than in success: the exit status and the lines `main` prints
/// on stderr (each already starting with `error: ` or `warning: `). Every command returns
/// `Result<(), CliError>`.
#[derive(Debug)]
pub(crate) struct CliError {
    /// The exit status: 1 for problems in the input, 2 for usage and unreadable files.
    pub(crate) code: u8,
    /// The lines to print on stderr, in order.
    pub(crate) lines: Vec<String>,
}

impl CliError {
    /// Exit status 2 with `error: MESSAGE` (a usage error, a file that cannot be opened or
    /// written).
    pub(crate) fn usage(message: impl fmt::Display) -> CliError {
        CliError {
            code: 2,
            lines: vec![format!("error: {message}")],
        }
    }

    /// Exit status `code` with nothing more to print (what failed is on stderr already).
    pub(crate) fn exit(code: u8) -> CliError {
        CliError {
            code,
            lines: Vec::new(),
        }
    }

    /// Exit status 1 with one line per problem of the input ([`error_line`]).
    pub(crate) fn input<S: AsRef<str>>(problems: impl IntoIterator<Item = S>) -> CliError {
        CliError {
            code: 1,
            lines: problems
                .into_iter()
                .map(|p| error_line(p.as_ref()))
                .collect(),
        }
    }

    /// Exit status 1 with one line per diagnostic, as [`print_diagnostics`] prints them.
    pub(crate) fn diagnostics<'a>(
        diagnostics: impl IntoIterator<Item = &'a gpuquota::model::Diagnostic>,
    ) -> CliError {
        let strict = strict();
        CliError {
            code: 1,
            lines: diagnostics
                .into_iter()
                .map(|d| {
                    format!(
                        "{}: {d}",
                        if d.is_error(strict) {
                            "error"
                        } else {
                            "warning"
                        }
                    )
                })
                .collect(),
        }
    }

    /// [`CliError::diagnostics`] of a scenario or file that could not be loaded: exit status
    /// 2 when one of them says a file (the scenario or one it names: `cluster:`,
    /// `workloads[].file`, a trace) cannot be read, as for every command; else 1.
    pub(crate) fn load<'a>(
        diagnostics: impl IntoIterator<Item = &'a gpuquota::model::Diagnostic> + Clone,
    ) -> CliError {
        let unreadable = diagnostics
            .clone()
            .into_iter()
            .any(|d| d.code == gpuquota::model::diag::codes::READ_FAILED);
        let mut e = CliError::diagnostics(diagnostics);
        if unreadable {
            e.code = 2;
        }
        e
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.lines.join("\n"))
    }
}

impl<E: std::error::Error> From<E> for CliError {
    fn from(e: E) -> Self {
        CliError::usage(e)
    }
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

/// Under `--verbose`, prints on stderr which reader took each source `importer` has read
/// from the `from`-th on (one `import: SOURCE: read by the READER (why)` line each).
pub(crate) fn report_reads(importer: &gpuquota::model::Importer, from: usize) {
    if VERBOSE.get().copied().unwrap_or(false) {
        for read in importer.reads().iter().skip(from) {
            eprintln!("import: {read}");
        }
    }
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

/// Reads a file (standard input for `-`) through the one bounded reader
/// ([`gpuquota::model::source::read_text`]), naming the file in the error.
///
/// A file that is not UTF-8 text or is too large is an input error: the command then exits
/// with 1, like every other input error; one that cannot be opened, with 2.
pub(crate) fn read_file(path: &std::path::Path) -> Result<String, CliError> {
    gpuquota::model::source::read_text(path).map_err(read_error)
}

/// The error that ends a command on a file it could not read ([`read_file`]'s): exit code 1
/// for a file that is not UTF-8 text or too large, 2 for one that cannot be opened.
pub(crate) fn read_error(d: gpuquota::model::Diagnostic) -> CliError {
    let mut e = CliError::usage(&d);
    if d.code != gpuquota::model::diag::codes::READ_FAILED {
        e.code = 1;
    }
    e
}

/// True for the codes of reading a source's bytes (`read-failed`, `input-too-large`,
/// `not-utf8`), as opposed to those of its documents.
fn is_read_code(code: gpuquota::model::Code) -> bool {
    use gpuquota::model::diag::codes;
    code == codes::READ_FAILED || code == codes::INPUT_TOO_LARGE || code == codes::NOT_UTF8
}

/// The manifest files of one command, added to one importer.
///
/// Every file is handed to [`gpuquota::model::Importer::add_file`] (a JSON file is read as a
/// stream, never held whole); standard input (`-`) is read whole and labelled as the command
/// labels it. A file that cannot be read becomes an import error; [`Inputs::read_problems`]
/// finds these again after the import, one per file in argument order, so that commands
/// report them as they did when every file was read before the import.
#[derive(Debug, Default)]
pub(crate) struct Inputs {
    /// The source label of each file, in argument order.
    labels: Vec<String>,
    /// Why standard input could not be read, by argument index.
    stdin: std::collections::BTreeMap<usize, gpuquota::model::Diagnostic>,
}

impl Inputs {
    /// Adds `files` to `importer` in order; standard input is labelled `stdin_label`.
    pub(crate) fn add(
        importer: &mut gpuquota::model::Importer,
        files: &[std::path::PathBuf],
        stdin_label: &str,
    ) -> Inputs {
        let mut inputs = Inputs::default();
        let before = importer.reads().len();
        for (i, path) in files.iter().enumerate() {
            if path.as_os_str() == "-" {
                match gpuquota::model::source::read_text(path) {
                    Ok(text) => importer.add_str(stdin_label, &text),
                    Err(d) => {
                        inputs.stdin.insert(i, d);
                    }
                }
                inputs.labels.push(stdin_label.to_owned());
            } else {
                importer.add_file(path);
                inputs
                    .labels
                    .push(gpuquota::model::source::display_name(path));
            }
        }
        report_reads(importer, before);
        inputs
    }

    /// Why each file that could not be read was not, in argument order, given the import's
    /// `errors` (empty when the import succeeded).
    ///
    /// # Complexity
    /// `O((e + f) log e)` for `e` errors and `f` files.
    pub(crate) fn read_problems(
        &self,
        errors: &[gpuquota::model::Diagnostic],
    ) -> Vec<gpuquota::model::Diagnostic> {
        let mut by_source = std::collections::BTreeMap::new();
        for d in errors.iter().filter(|d| is_read_code(d.code)) {
            by_source.entry(d.source.as_str()).or_insert(d);
        }
        self.labels
            .iter()
            .enumerate()
            .filter_map(|(i, label)| {
                self.stdin
                    .get(&i)
                    .or_else(|| by_source.get(label.as_str()).copied())
                    .cloned()
            })
            .collect()
    }
}

/// The one way a command reads manifest files: every file into one importer ([`Inputs`]),
/// standard input labelled `stdin_label`. A file that cannot be opened ends the command (exit
/// 2). One that is not UTF-8 text or too large is an input error (exit 1): only the first
/// such file is reported, or with `every_read_problem` all of them (unless one cannot be
/// opened). Otherwise the import as it finished.
pub(crate) fn import_files(
    files: &[std::path::PathBuf],
    stdin_label: &str,
    every_read_problem: bool,
) -> Result<Result<gpuquota::model::Imported, gpuquota::model::import::ImportErrors>, CliError> {
    let mut importer = gpuquota::model::Importer::new();
    let inputs = Inputs::add(&mut importer, files, stdin_label);
    let imported = importer.finish();
    let errors = imported.as_ref().err().map_or(&[][..], |e| &e.0[..]);
    let problems = inputs.read_problems(errors);
    if !every_read_problem {
        if let Some(d) = problems.into_iter().next() {
            return Err(read_error(d));
        }
    } else if let Some(d) = problems
        .iter()
        .find(|d| d.code == gpuquota::model::diag::codes::READ_FAILED)
    {
        return Err(CliError::usage(d));
    } else if !problems.is_empty() {
        return Err(CliError::input(
            problems.iter().map(|d| format!("error: {d}")),
        ));
    }
    Ok(imported)
}

/// The model of an engine command's manifest files ([`import_files`], standard input labelled
/// `-`): the import's errors, its warnings under `--strict`, or a model without any of the
/// `usable` kinds end the command (exit 1); the warnings are printed.
pub(crate) fn load_model(
    files: &[std::path::PathBuf],
    usable: &[gpuquota::model::Kind],
    command: &str,
) -> Result<gpuquota::model::Model, CliError> {
    let imported = import_files(files, "-", false)?
        .map_err(|errors| CliError::input(errors.0.iter().map(ToString::to_string)))?;
    // import warnings (unknown fields and kinds): errors under `--strict`
    if print_diagnostics(&imported.warnings) {
        return Err(CliError::exit(1));
    }
    gpuquota::model::validate::require_objects(&imported.model, usable, command)
        .map_err(|d| CliError::input([d.to_string()]))?;
    Ok(imported.model)
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

/// `line` as an error line on stderr: every error starts with `error: ` (a line that already
/// says `error: ` or `warning: ` is kept as it is).
pub(crate) fn error_line(line: &str) -> String {
    if line.starts_with("error: ") || line.starts_with("warning: ") {
        line.to_owned()
    } else {
        format!("error: {line}")
    }
}

/// Prints diagnostics to stderr, one per line with its severity (`warning:` is printed as
/// `error:` under `--strict`); returns true when the command must fail (exit 1).
pub(crate) fn print_diagnostics<'a>(
    diagnostics: impl IntoIterator<Item = &'a gpuquota::model::Diagnostic>,
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
