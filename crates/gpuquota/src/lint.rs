//! The lint of `gpuquota validate`: manifests against upstream's validation and against
//! every engine that reads them.
//!
//! Three passes over an import ([`check_imported`]), each only when the one before found no
//! error:
//! 1. **import**: every document is read; malformed text, duplicate keys and fields of the
//!    wrong type are errors; unknown kinds and fields are warnings (with a "did you mean");
//! 2. **validation** ([`crate::model::validate::diagnostics`]): the API server's and
//!    webhooks' rules; a reference to an object that is not in the files (a ResourceFlavor, a
//!    LocalQueue, a KAI Queue, a priority class) is a warning, or an error with
//!    [`Settings::complete`] (the files are the whole picture);
//! 3. **engines** ([`engine_problems`]): the input builders of every engine the objects are
//!    for (and the facade is built with) run on the model, so the lint fails exactly when a
//!    command would refuse the input: the Kueue engine (`kueue::Input::from_model` and the
//!    Configuration's fair-sharing settings) when there is a Kueue object, the KAI engine
//!    (`kai::Input::from_model`) when there is a KAI Queue, PodGroup, Pod or Node. Their errors
//!    are prefixed with the engine (`kueue engine: …`, `kai engine: …`). The engines'
//!    decision notes (an implicit cohort, an inactive queue) are not input problems and are
//!    left to the engines' own commands.
//!
//! The engines' input builders run pass 2's validator first themselves (on the kinds each
//! reads), so every engine command refuses what pass 2 refuses with the same line; pass 3
//! only adds what is truly engine-specific. A cohort cycle is an error of pass 2 (see
//! `gpuquota-cohort`'s crate docs for why gpuquota deviates from Kueue there).
//!
//! An input with no object gpuquota reads is an error. Under [`Settings::strict`], every
//! warning is an error.

use crate::model::diag::codes;
use crate::model::import::ImportErrors;
use crate::model::validate::Options;
use crate::model::{Diagnostic, Imported, Model};

/// What the lint found, as the lines `gpuquota validate` prints.
#[derive(Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Report {
    /// The summary line when nothing is wrong (`ok: N object(s) in F file(s) are valid (W
    /// warning(s))`), else nothing.
    pub stdout: Vec<String>,
    /// Every warning and error, one per line with its severity (`warning: …`, `error: …`),
    /// then, when one is an error, their count.
    pub stderr: Vec<String>,
    /// True when nothing is an error.
    pub ok: bool,
}

/// How the lint judges its input.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct Settings {
    /// The files are the whole picture: a reference to an object that is not in them is an
    /// error (`gpuquota validate --complete`).
    pub complete: bool,
    /// Every warning is an error (`gpuquota --strict`).
    pub strict: bool,
}

impl Settings {
    /// These settings with [`Settings::complete`] set to `complete`.
    #[must_use]
    pub fn with_complete(mut self, complete: bool) -> Self {
        self.complete = complete;
        self
    }

    /// These settings with [`Settings::strict`] set to `strict`.
    #[must_use]
    pub fn with_strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }
}

/// Imports and validates `(name, text)` sources with the default settings.
#[cfg(all(test, feature = "sim", feature = "kai"))]
fn check(sources: &[(String, String)]) -> Report {
    check_with(sources, Settings::default())
}

/// Prints warnings as `warning: …` (as `error: …` under `--strict`); true when one is an error.
fn push_warning(stderr: &mut Vec<String>, d: &Diagnostic, strict: bool) -> bool {
    stderr.push(format!("{}: {d}", if strict { "error" } else { "warning" }));
    strict
}

/// Imports, validates and runs the engines' input builders on `(name, text)` sources.
#[cfg(all(test, feature = "sim", feature = "kai"))]
fn check_with(sources: &[(String, String)], settings: Settings) -> Report {
    let mut importer = crate::model::Importer::new();
    for (name, text) in sources {
        importer.add_str(name, text);
    }
    check_imported(importer.finish(), sources.len(), settings)
}

/// Validates a finished import of `files` files and runs the engines' input builders on it
/// (the three passes of the [module docs](self)).
///
/// # Complexity
/// That of the validator and of each engine's input builder: near-linear in the objects.
pub fn check_imported(
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
            stderr.push(format!("error: {line}"));
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
/// (each engine's `Input::from_model` is the validator followed by these).
pub fn engine_problems(model: &Model) -> Vec<String> {
    #[allow(unused_mut)] // without an engine feature nothing is pushed
    let mut out = Vec::new();
    #[cfg(not(any(feature = "kueue", feature = "kai")))]
    let _ = model;
    #[cfg(feature = "kueue")]
    let kueue = !(model.resource_flavors.is_empty()
        && model.cluster_queues.is_empty()
        && model.cohorts.is_empty()
        && model.local_queues.is_empty()
        && model.workloads.is_empty()
        && model.workload_priority_classes.is_empty()
        && model.configuration.is_none());
    #[cfg(feature = "kueue")]
    if kueue {
        // the engine's own checks alone, and without the fair-sharing settings (below)
        let options = gpuquota::kueue::Options::default()
            .with_validation(gpuquota::model::validate::Validation::EngineOnly)
            .with_ignore_fair_sharing(true);
        if let Err(e) = gpuquota::kueue::Input::from_model(model, &options) {
            out.extend(e.diagnostics().iter().map(|d| {
                format!(
                    "kueue engine: {} {:?}: {}: {}",
                    d.kind, d.name, d.field, d.message
                )
            }));
        }
        if let Err(e) = gpuquota::fairshare::config::settings_from_configuration(
            model.configuration.as_ref(),
            false,
        ) {
            out.extend(e.0.iter().map(|p| format!("kueue engine: {p}")));
        }
    }
    #[cfg(feature = "kai")]
    let kai = !(model.queues.is_empty()
        && model.pod_groups.is_empty()
        && model.pods.is_empty()
        && model.nodes.is_empty());
    #[cfg(feature = "kai")]
    if kai
        && let Err(e) = gpuquota::kai::Input::from_model(
            model,
            &gpuquota::kai::Options::default().with_build(
                gpuquota::kai::BuildOptions::default()
                    .with_validation(gpuquota::model::validate::Validation::EngineOnly),
            ),
        )
    {
        out.extend(e.diagnostics().iter().map(|p| format!("kai engine: {p}")));
    }
    out
}

#[cfg(all(test, feature = "sim", feature = "kai"))]
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
