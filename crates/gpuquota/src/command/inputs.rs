//! The one way a command reads manifest files: every file into one importer.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::command::{Context, Failure};
use crate::model::diag::codes;
use crate::model::import::ImportErrors;
use crate::model::{Code, Diagnostic, Imported, Importer, Kind, Model};

/// Under `verbose`, prints which reader took each source `importer` has read from the
/// `from`-th on (one `import: SOURCE: read by the READER (why)` line each).
pub fn report_reads(cx: &mut Context<'_>, importer: &Importer, from: usize) {
    if cx.verbose {
        for read in importer.reads().iter().skip(from) {
            cx.line(&format!("import: {read}"));
        }
    }
}

/// True for the codes of reading a source's bytes (`read-failed`, `input-too-large`,
/// `not-utf8`), as opposed to those of its documents.
fn is_read_code(code: Code) -> bool {
    code == codes::READ_FAILED || code == codes::INPUT_TOO_LARGE || code == codes::NOT_UTF8
}

/// The manifest files of one command, added to one importer.
///
/// Every file is handed to [`Importer::add_file`] (a JSON file is read as a stream, never
/// held whole); standard input (`-`) is read whole and labelled as the command labels it. A
/// file that cannot be read becomes an import error; [`Inputs::read_problems`] finds these
/// again after the import, one per file in argument order, so that commands report them as
/// they did when every file was read before the import.
#[derive(Debug, Default)]
pub struct Inputs {
    /// The source label of each file, in argument order.
    labels: Vec<String>,
    /// Why standard input could not be read, by argument index.
    stdin: BTreeMap<usize, Diagnostic>,
}

impl Inputs {
    /// Adds `files` to `importer` in order; standard input is labelled `stdin_label`.
    pub fn add(
        cx: &mut Context<'_>,
        importer: &mut Importer,
        files: &[PathBuf],
        stdin_label: &str,
    ) -> Inputs {
        let mut inputs = Inputs::default();
        let before = importer.reads().len();
        for (i, path) in files.iter().enumerate() {
            if path.as_os_str() == "-" {
                match crate::model::source::read_text(path) {
                    Ok(text) => importer.add_str(stdin_label, &text),
                    Err(d) => {
                        inputs.stdin.insert(i, d);
                    }
                }
                inputs.labels.push(stdin_label.to_owned());
            } else {
                importer.add_file(path);
                inputs.labels.push(crate::model::source::display_name(path));
            }
        }
        report_reads(cx, importer, before);
        inputs
    }

    /// Why each file that could not be read was not, in argument order, given the import's
    /// `errors` (empty when the import succeeded).
    ///
    /// # Complexity
    /// `O((e + f) log e)` for `e` errors and `f` files.
    pub fn read_problems(&self, errors: &[Diagnostic]) -> Vec<Diagnostic> {
        let mut by_source = BTreeMap::new();
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

/// Every file into one importer ([`Inputs`]), standard input labelled `stdin_label`. A file
/// that cannot be opened ends the command (exit 2). One that is not UTF-8 text or too large
/// is an input error (exit 1): only the first such file is reported, or with
/// `every_read_problem` all of them (unless one cannot be opened). Otherwise the import as
/// it finished.
///
/// # Errors
/// A file that could not be read, as above.
pub fn import_files(
    cx: &mut Context<'_>,
    files: &[PathBuf],
    stdin_label: &str,
    every_read_problem: bool,
) -> Result<Result<Imported, ImportErrors>, Failure> {
    let mut importer = Importer::new();
    let inputs = Inputs::add(cx, &mut importer, files, stdin_label);
    let imported = importer.finish();
    let errors = imported.as_ref().err().map_or(&[][..], |e| &e.0[..]);
    let problems = inputs.read_problems(errors);
    if !every_read_problem {
        if let Some(d) = problems.into_iter().next() {
            return Err(Failure::read(d));
        }
    } else if let Some(d) = problems.iter().find(|d| d.code == codes::READ_FAILED) {
        return Err(Failure::usage(d));
    } else if !problems.is_empty() {
        return Err(Failure::input(
            problems.iter().map(|d| format!("error: {d}")),
        ));
    }
    Ok(imported)
}

/// [`import_files`] of `gpuquota validate` and `gpuquota quotas`: standard input labelled as
/// [`crate::model::source::display_name`] names it, every read problem reported.
///
/// # Errors
/// A file that could not be read.
pub fn import_all(
    cx: &mut Context<'_>,
    files: &[PathBuf],
) -> Result<Result<Imported, ImportErrors>, Failure> {
    let stdin = crate::model::source::display_name(std::path::Path::new("-"));
    import_files(cx, files, &stdin, true)
}

/// The model of an engine command's manifest files ([`import_files`], standard input
/// labelled `-`): the import's errors, its warnings under `strict`, or a model without any of
/// the `usable` kinds end the command (exit 1); the warnings are printed.
///
/// # Errors
/// As above.
pub fn load_model(
    cx: &mut Context<'_>,
    files: &[PathBuf],
    usable: &[Kind],
    command: &str,
) -> Result<Model, Failure> {
    let imported = import_files(cx, files, "-", false)?
        .map_err(|errors| Failure::input(errors.0.iter().map(ToString::to_string)))?;
    // import warnings (unknown fields and kinds): errors under `strict`
    if cx.diagnostics(&imported.warnings) {
        return Err(Failure::exit(1));
    }
    crate::model::validate::require_objects(&imported.model, usable, command)
        .map_err(|d| Failure::input([d.to_string()]))?;
    Ok(imported.model)
}
