//! What `gpuquota mig validate` finds in a file: the documents' unknown fields and skipped
//! documents, every mig-parted config's problems against the catalogue, and the planning
//! input's problems, as typed diagnostics naming the file.

use gpuquota_model::diag::{Diagnostic, codes};

use crate::catalogue::Catalogue;
use crate::documents::{MigDocuments, unknown_field_message};
use crate::input::InputError;

/// The warnings of a file's unknown fields (code `unknown-field`, with a "did you mean"),
/// then of its skipped documents (code `unknown-kind`), in order, each naming `source`.
///
/// # Complexity
/// O(n) for n entries.
pub fn unknown_diagnostics(
    source: &str,
    unknown_fields: &[String],
    skipped: &[String],
) -> Vec<Diagnostic> {
    let fields = unknown_fields
        .iter()
        .map(|u| (codes::UNKNOWN_FIELD, unknown_field_message(u)));
    let documents = skipped.iter().map(|u| (codes::UNKNOWN_KIND, u.clone()));
    fields
        .chain(documents)
        .map(|(code, message)| {
            Diagnostic::warning(code, message)
                .source(source.to_owned())
                .engine("mig")
        })
        .collect()
}

/// What [`check_documents`] found.
#[derive(Debug)]
#[non_exhaustive]
pub struct Checked {
    /// The unknown fields and skipped documents ([`unknown_diagnostics`]), then every
    /// config's problems (an unknown field is a warning, anything else an error, with the
    /// field `version` or `mig-configs.NAME[ENTRY]`).
    pub diagnostics: Vec<Diagnostic>,
    /// Why the planning input does not resolve against the catalogue.
    pub errors: Vec<InputError>,
    /// One `ok: …` line for the configs (names and entries checked) and one for the
    /// planning input (GPUs, instances, demanded resources), for what is there.
    pub summary: Vec<String>,
}

/// Checks the documents of the file `source` against `catalogue`: the mig-parted configs,
/// and the planning input with those configs.
///
/// # Complexity
/// Linear in the documents, plus resolving the planning input.
pub fn check_documents(source: &str, docs: MigDocuments, catalogue: &Catalogue) -> Checked {
    let mut diagnostics = unknown_diagnostics(source, &docs.unknown_fields, &docs.skipped);
    let mut summary = Vec::new();
    let mut errors = Vec::new();
    if !docs.configs.is_empty() {
        let (mut names, mut entries) = (0usize, 0usize);
        for cfg in &docs.configs {
            names += cfg.mig_configs.len();
            entries += cfg.mig_configs.values().map(Vec::len).sum::<usize>();
            for p in crate::validate_config(catalogue, cfg) {
                let d = if p.warning {
                    Diagnostic::warning(codes::UNKNOWN_FIELD, p.reason.clone())
                } else {
                    Diagnostic::error(codes::INVALID, p.reason.clone())
                };
                let field = if p.config.is_empty() {
                    "version".to_owned()
                } else {
                    format!("mig-configs.{}[{}]", p.config, p.entry)
                };
                diagnostics.push(d.source(source.to_owned()).field(field).engine("mig"));
            }
        }
        summary.push(format!(
            "ok: {names} mig-parted configs, {entries} entries checked against the catalogue"
        ));
    }
    if let Some(mut req) = docs.request {
        req.mig_parted = docs.configs;
        match req.resolve(catalogue) {
            Ok(problem) => {
                let instances: usize = problem
                    .gpus
                    .iter()
                    .map(|g| g.current.as_ref().map_or(0, |l| l.instances().len()))
                    .sum();
                summary.push(format!(
                    "ok: {} GPUs, {instances} instances, {} demanded resources",
                    problem.gpus.len(),
                    problem.demand.len()
                ));
            }
            Err(e) => errors = e,
        }
    }
    Checked {
        diagnostics,
        errors,
        summary,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_fields_and_skipped_documents_are_warnings_naming_the_file() {
        let d = unknown_diagnostics(
            "f.yaml",
            &["gpus[0].modle".to_owned()],
            &["document 2: kind Pod is not read by mig commands".to_owned()],
        );
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].code, codes::UNKNOWN_FIELD);
        // the code follows the list a line came from, not the line's words
        assert_eq!(d[1].code, codes::UNKNOWN_KIND);
        assert_eq!(
            d[1].message,
            "document 2: kind Pod is not read by mig commands"
        );
        assert_eq!(d[0].source, "f.yaml");
        assert!(!d[0].is_error(false));
    }

    #[cfg(feature = "yaml")]
    #[test]
    fn a_planning_input_is_summarised_or_its_problems_listed() {
        let ok = crate::read_documents(
            "gpus:\n  - {node: a, index: 0, model: A100-40GB, instances: []}\n\
             demand:\n  - {profile: 1g.5gb, count: 7}\n",
        )
        .unwrap();
        let c = check_documents("p.yaml", ok, Catalogue::builtin());
        assert!(c.diagnostics.is_empty() && c.errors.is_empty());
        assert_eq!(c.summary, ["ok: 1 GPUs, 0 instances, 1 demanded resources"]);
        let bad = crate::read_documents(
            "gpus:\n  - {node: a, index: 0, model: NO-SUCH-GPU, instances: []}\ndemand: []\n",
        )
        .unwrap();
        let c = check_documents("p.yaml", bad, Catalogue::builtin());
        assert_eq!(c.errors.len(), 1, "{:?}", c.errors);
        assert!(c.summary.is_empty());
    }
}
