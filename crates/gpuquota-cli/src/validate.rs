//! `gpuquota validate FILES…`: strict lint of manifests against upstream's validation.
//!
//! Exit codes: 0 when every object is valid (one summary line on stdout); 1 when a document
//! cannot be read or any object is invalid (every problem on stderr, one per line, then a
//! count); 2 when a file cannot be opened. Import warnings (unknown kinds or fields) go to
//! stderr prefixed `warning: ` and do not fail the command.

use std::path::PathBuf;
use std::process::ExitCode;

use gpuquota_model::Importer;

use crate::common::{CliError, read_file};

/// Arguments of `gpuquota validate`.
#[derive(Debug, clap::Args)]
pub(crate) struct ValidateArgs {
    /// Manifest files: YAML (several documents each) or JSON, Kueue, KAI and core kinds.
    #[arg(required = true, value_name = "FILES")]
    files: Vec<PathBuf>,
}

/// What `validate` found, as lines for stdout and stderr and the exit code.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Report {
    pub(crate) stdout: Vec<String>,
    pub(crate) stderr: Vec<String>,
    pub(crate) ok: bool,
}

/// Imports and validates `(name, text)` sources.
pub(crate) fn check(sources: &[(String, String)]) -> Report {
    let mut importer = Importer::new();
    for (name, text) in sources {
        importer.add_str(name, text);
    }
    let mut stderr = Vec::new();
    let imported = match importer.finish() {
        Ok(imported) => imported,
        Err(errors) => {
            stderr.extend(errors.0.iter().map(ToString::to_string));
            stderr.push(format!(
                "gpuquota validate: {} document error(s)",
                errors.0.len()
            ));
            return Report {
                stdout: Vec::new(),
                stderr,
                ok: false,
            };
        }
    };
    stderr.extend(imported.warnings.iter().map(|w| format!("warning: {w}")));
    let problems = gpuquota_model::validate::problems(&imported.model);
    if problems.is_empty() {
        Report {
            stdout: vec![format!(
                "ok: {} object(s) in {} file(s) are valid ({} warning(s))",
                imported.model.len(),
                sources.len(),
                imported.warnings.len()
            )],
            stderr,
            ok: true,
        }
    } else {
        stderr.extend(problems.iter().map(ToString::to_string));
        stderr.push(format!(
            "gpuquota validate: {} problem(s) in {} object(s)",
            problems.len(),
            imported.model.len()
        ));
        Report {
            stdout: Vec::new(),
            stderr,
            ok: false,
        }
    }
}

pub(crate) fn run(args: ValidateArgs) -> Result<ExitCode, CliError> {
    let mut sources = Vec::new();
    for path in &args.files {
        sources.push((path.display().to_string(), read_file(path)?));
    }
    let report = check(&sources);
    for line in &report.stderr {
        eprintln!("{line}");
    }
    for line in &report.stdout {
        println!("{line}");
    }
    Ok(if report.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_platform_is_valid() {
        let report = check(&[
            ("kueue.yaml".into(), crate::seed::KUEUE_YAML.into()),
            (
                "kueue-workloads.yaml".into(),
                crate::seed::KUEUE_WORKLOADS_YAML.into(),
            ),
            ("kai.yaml".into(), crate::seed::KAI_YAML.into()),
        ]);
        assert!(report.ok, "{:?}", report.stderr);
        assert_eq!(
            report.stdout,
            ["ok: 67 object(s) in 3 file(s) are valid (0 warning(s))"]
        );
        assert!(report.stderr.is_empty());
    }

    #[test]
    fn malformed_documents_fail() {
        let report = check(&[("bad.yaml".into(), "a: [1, 2\nb: }".into())]);
        assert!(!report.ok);
        assert_eq!(
            report.stderr.last().map(String::as_str),
            Some("gpuquota validate: 1 document error(s)")
        );
    }
}
