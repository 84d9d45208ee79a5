//! `gpuquota validate FILES… [--complete]`: lint of manifests against upstream's validation
//! and against every engine that reads them ([`gpuquota::lint`], whose docs give the three
//! passes).
//!
//! Exit codes: 0 when nothing is wrong (one summary line on stdout; warnings on stderr
//! prefixed `warning: `); 1 when a file is not UTF-8 text or too large, a document cannot be
//! read, an object is invalid or an engine refuses the input (every problem on stderr, one per
//! line, then a count); 2 when a file cannot be opened.

use std::path::PathBuf;

use gpuquota::lint::Settings;

use crate::common::CliError;

/// Arguments of `gpuquota validate`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  gpuquota validate kueue.yaml             every problem, naming object and field
  gpuquota validate --complete kueue.yaml  a reference to a missing object is an error
  gpuquota --strict validate kai.yaml      warnings fail too (exit 1)")]
pub(crate) struct ValidateArgs {
    /// Manifest files: YAML (several documents each) or JSON, Kueue, KAI and core kinds.
    #[arg(required = true, value_name = "FILES")]
    files: Vec<PathBuf>,
    /// The files are the whole picture: a reference to an object that is not in them is an
    /// error (without it, a warning).
    #[arg(long)]
    complete: bool,
}

/// Imports every file (a JSON file as a stream; [`crate::common::import_files`]): files that
/// are not UTF-8 or too large are input errors, all reported together (exit 1), and one that
/// cannot be opened ends the command (exit 2), whatever the other files hold.
pub(crate) fn run(args: ValidateArgs) -> Result<(), CliError> {
    let imported = gpuquota::command::inputs::import_all(&mut crate::common::cx(), &args.files)?;
    let settings = Settings::default()
        .with_complete(args.complete)
        .with_strict(crate::common::strict());
    let report = gpuquota::lint::check_imported(imported, args.files.len(), settings);
    if !report.ok {
        return Err(CliError::with_lines(1, report.stderr));
    }
    for line in &report.stderr {
        eprintln!("{line}");
    }
    for line in &report.stdout {
        outln!("{line}");
    }
    Ok(())
}
