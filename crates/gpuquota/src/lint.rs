//! `gpuquota validate FILES… [--complete]`: lint of manifests against upstream's validation
//! and against every engine that reads them.
//!
//! Three passes, each only when the one before found no error:
//! 1. **import**: every document is read; malformed text, duplicate keys and fields of the
//!    wrong type are errors; unknown kinds and fields are warnings (with a "did you mean");
//! 2. **validation** ([`gpuquota::model::validate::diagnostics`]): the API server's and
//!    webhooks' rules; a reference to an object that is not in the files (a ResourceFlavor, a
//!    LocalQueue, a KAI Queue, a priority class) is a warning, or an error with `--complete`
//!    (the files are the whole picture);
//! 3. **engines**: the input builders of every engine the objects are for run on the model,
//!    so `validate` fails exactly when a command would refuse the input: the Kueue engine
//!    (`World::build` and the Configuration's fair-sharing settings) when there is a Kueue
//!    object, the KAI engine (`Cluster::from_model`) when there is a KAI Queue, PodGroup, Pod
//!    or Node. Their errors are printed prefixed with the engine (`kueue engine: …`,
//!    `kai engine: …`). The engines' decision notes (an implicit cohort, an inactive queue) are
//!    not input problems and are left to the engines' own commands.
//!
//! The engines' input builders run pass 2's validator first themselves (on the kinds each
//! reads), so every engine command refuses what pass 2 refuses with the same line; pass 3
//! only adds what is truly engine-specific. A cohort cycle is an error of pass 2 (see
//! `gpuquota-cohort`'s crate docs for why gpuquota deviates from Kueue there).
//!
//! An input with no object gpuquota reads is an error. Under the global `--strict`, every
//! warning is an error.
//!
//! Exit codes: 0 when nothing is wrong (one summary line on stdout; warnings on stderr
//! prefixed `warning: `); 1 when a file is not UTF-8 text or too large, a document cannot be
//! read, an object is invalid or an engine refuses the input (every problem on stderr, one per
//! line, then a count); 2 when a file cannot be opened.

use std::path::PathBuf;

use gpuquota::model::diag::codes;
use gpuquota::model::import::ImportErrors;
use gpuquota::model::validate::Options;
use gpuquota::model::{Diagnostic, Imported, Model};

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

/// What `validate` found, as lines for stdout and stderr and the exit code.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Report {
    pub(crate) stdout: Vec<String>,
    pub(crate) stderr: Vec<String>,
    pub(crate) ok: bool,
}

/// How `validate` judges its input.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Settings {
    /// `--complete`.
    pub(crate) complete: bool,
    /// The global `--strict`.
    pub(crate) strict: bool,
}

/// Imports and validates `(name, text)` sources with the default settings.
#[cfg(test)]
pub(crate) fn check(sources: &[(String, String)]) -> Report {
    check_with(sources, Settings::default())
}

/// Prints warnings as `warning: …` (as `error: …` under `--strict`); true when one is an error.
fn push_warning(stderr: &mut Vec<String>, d: &Diagnostic, strict: bool) -> bool {
    stderr.push(format!("{}: {d}", if strict { "error" } else { "warning" }));
    strict
}

/// Imports, validates and runs the engines' input builders on `(name, text)` sources.
#[cfg(test)]
pub(crate) fn check_with(sources: &[(String, String)], settings: Settings) -> Report {
    let mut importer = gpuquota::model::Importer::new();
    for (name, text) in sources {
        importer.add_str(name, text);
    }
    check_imported(importer.finish(), sources.len(), settings)
}

/// [`check_with`] on a finished import of `files` files.
pub(crate) fn check_imported(
    imported: Result<Imported, ImportErrors>,
    files: usize,
    settings: Settings,
) -> Report {
    let mut stderr = Vec::new();
    let fail = |stderr: Vec<String>| Report {
        stdout: Vec::new(),
        stderr,
        ok: false,
    };
    let imported = match imported {
        Ok(imported) => imported,
        Err(errors) => {
            stderr.extend(errors.0.iter().map(|e| format!("error: {e}")));
            stderr.push(format!("error: {} document error(s)", errors.0.len()));
            return fail(stderr);
        }
    };
    let mut warnings = 0usize;
    let mut strict_errors = 0usize;
    for w in &imported.warnings {
        warnings += 1;
        strict_errors += usize::from(push_warning(&mut stderr, w, settings.strict));
    }
    let model = &imported.model;
    if model.is_empty() {
        let d = Diagnostic::error(
            codes::NO_OBJECTS,
            "no object gpuquota reads (Kueue, KAI or core kinds) in the input; nothing to validate",
        );
        stderr.push(format!("error: {d}"));
        stderr.push("error: 1 problem(s) in 0 object(s)".to_owned());
        return fail(stderr);
    }
    let diagnostics =
        gpuquota::model::validate::diagnostics(model, &Options::complete(settings.complete));
    let mut errors = 0usize;
    for d in diagnostics.warnings() {
        warnings += 1;
        strict_errors += usize::from(push_warning(&mut stderr, d, settings.strict));
    }
    for d in diagnostics.errors() {
        errors += 1;
        stderr.push(format!("error: {d}"));
    }
    if errors == 0 {
        for line in engine_problems(model) {
            errors += 1;
            stderr.push(crate::common::error_line(&line));
        }
    }
    if errors + strict_errors == 0 {
        Report {
            stdout: vec![format!(
                "ok: {} object(s) in {} file(s) are valid ({} warning(s))",
                model.len(),
                files,
                warnings
            )],
            stderr,
            ok: true,
        }
    } else {
        stderr.push(format!(
            "error: {} problem(s) in {} object(s)",
            errors + strict_errors,
            model.len()
        ));
        fail(stderr)
    }
}

/// The errors of every engine's input builder that applies to `model`, tagged with the engine.
///
/// Called once the validator found no error, so the builders run without repeating it
/// (`World::build` and `Cluster::from_model` are the validator followed by these).
pub(crate) fn engine_problems(model: &Model) -> Vec<String> {
    let mut out = Vec::new();
    let kueue = !(model.resource_flavors.is_empty()
        && model.cluster_queues.is_empty()
        && model.cohorts.is_empty()
        && model.local_queues.is_empty()
        && model.workloads.is_empty()
        && model.workload_priority_classes.is_empty()
        && model.configuration.is_none());
    if kueue {
        if let Err(e) = gpuquota::cohort::World::build_unvalidated(model) {
            out.extend(e.problems.iter().map(|p| format!("kueue engine: {p}")));
        }
        if let Err(e) = gpuquota::fairshare::config::settings_from_configuration(
            model.configuration.as_ref(),
            false,
        ) {
            out.extend(e.0.iter().map(|p| format!("kueue engine: {p}")));
        }
    }
    let kai = !(model.queues.is_empty()
        && model.pod_groups.is_empty()
        && model.pods.is_empty()
        && model.nodes.is_empty());
    if kai
        && let Err(e) = gpuquota::rank::Cluster::from_model_unvalidated(
            model,
            &gpuquota::rank::BuildOptions::default(),
        )
    {
        out.extend(e.0.iter().map(|p| format!("kai engine: {p}")));
    }
    out
}

/// Imports every file (a JSON file as a stream; [`crate::common::import_files`]): files that
/// are not UTF-8 or too large are input errors, all reported together (exit 1), and one that
/// cannot be opened ends the command (exit 2), whatever the other files hold.
pub(crate) fn import_files(files: &[PathBuf]) -> Result<Result<Imported, ImportErrors>, CliError> {
    let stdin = gpuquota::model::source::display_name(std::path::Path::new("-"));
    crate::common::import_files(files, &stdin, true)
}

pub(crate) fn run(args: ValidateArgs) -> Result<(), CliError> {
    let imported = import_files(&args.files)?;
    let report = check_imported(
        imported,
        args.files.len(),
        Settings {
            complete: args.complete,
            strict: crate::common::strict(),
        },
    );
    if !report.ok {
        return Err(CliError {
            code: 1,
            lines: report.stderr,
        });
    }
    for line in &report.stderr {
        eprintln!("{line}");
    }
    for line in &report.stdout {
        outln!("{line}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_platform_is_valid() {
        let report = check(&[
            ("platform.yaml".into(), gpuquota::sim::seed::PLATFORM.into()),
            (
                "kueue-day.yaml".into(),
                gpuquota::sim::seed::KUEUE_DAY.into(),
            ),
            (
                "kai-platform.yaml".into(),
                gpuquota::sim::seed::KAI_PLATFORM.into(),
            ),
        ]);
        assert!(report.ok, "{:?}", report.stderr);
        assert_eq!(
            report.stdout,
            // platform.yaml 32 (3 Nodes, 3 flavors, 1 cohort, 5 ClusterQueues, 5 namespaces, 5
            // LocalQueues, 5 ResourceQuotas, 4 priority classes, the Budget), kueue-day.yaml 26
            // Workloads, kai-platform.yaml 10 Queues
            ["ok: 68 object(s) in 3 file(s) are valid (0 warning(s))"]
        );
        assert!(report.stderr.is_empty());
    }

    #[test]
    fn malformed_documents_fail() {
        let report = check(&[("bad.yaml".into(), "a: [1, 2\nb: }".into())]);
        assert!(!report.ok);
        assert_eq!(
            report.stderr.last().map(String::as_str),
            Some("error: 1 document error(s)")
        );
    }

    #[test]
    fn an_empty_input_fails() {
        for text in ["", "# nothing\n", "---\n---\n"] {
            let report = check(&[("empty.yaml".into(), text.into())]);
            assert!(!report.ok, "{text:?}");
            assert!(
                report.stderr[0].contains("no object gpuquota reads"),
                "{:?}",
                report.stderr
            );
        }
        // Only kinds gpuquota does not read: a warning each, then the error.
        let report = check(&[(
            "cm.yaml".into(),
            "apiVersion: v1\nkind: Secret\nmetadata: {name: c}\n".into(),
        )]);
        assert!(!report.ok);
        assert!(report.stderr[0].starts_with("warning: "));
    }

    #[test]
    fn strict_turns_warnings_into_errors() {
        let sources = [(
            "f.yaml".to_owned(),
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\nspec: {nodeLabel: {a: b}}\n".to_owned(),
        )];
        let relaxed = check_with(&sources, Settings::default());
        assert!(relaxed.ok);
        assert_eq!(
            relaxed.stderr,
            [
                "warning: f.yaml (document 1): ResourceFlavor \"f\": spec.nodeLabel: unknown field; ignored; did you mean \"nodeLabels\"?"
            ]
        );
        let strict = check_with(
            &sources,
            Settings {
                strict: true,
                ..Settings::default()
            },
        );
        assert!(!strict.ok);
        assert!(strict.stderr[0].starts_with("error: f.yaml"));
        assert_eq!(
            strict.stderr.last().map(String::as_str),
            Some("error: 1 problem(s) in 1 object(s)")
        );
    }
}
