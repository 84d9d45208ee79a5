//! `gpuquota quotas FILES… [--output table|json]`: the static quota picture of every cohort
//! tree and every KAI queue tree. Usage plays no part: the picture says what each node owns,
//! reserves, lends and can reach at most.
//!
//! The picture is [`gpuquota_model::picture`] (its JSON documented there; `gpuquota schema
//! quotas`); this command reads the files and prints it.
//!
//! Import warnings (unknown kinds and fields) go to stderr prefixed `warning: `; under the
//! global `--strict` they are errors. An input with no ClusterQueue, Cohort or KAI Queue is an
//! error.
//!
//! Exit codes: 0; 1 when a file is not UTF-8 text, a document cannot be read, a warning is
//! given under `--strict`, nothing can be shown, or the cohorts form a cycle; 2 when a file
//! cannot be opened.

use std::path::PathBuf;

use gpuquota::model::picture::picture;
use gpuquota::model::{Importer, Model};

use crate::common::{CliError, table_width, to_json};

/// `--output` of `quotas`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum QuotasOutput {
    /// Tables, one per cohort tree and flavor-resource, then the KAI queues.
    Table,
    /// The JSON contract (documented above; `gpuquota schema quotas`).
    Json,
}

/// Arguments of `gpuquota quotas`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  gpuquota quotas kueue.yaml                  the cohort tree: owns, lends, can use at most
  gpuquota quotas kai.yaml -o json            the KAI queue tree as JSON
  gpuquota quotas kueue.yaml kai.yaml --all-resources   both; every KAI resource")]
pub(crate) struct QuotasArgs {
    /// Manifest files: YAML (several documents each) or JSON.
    #[arg(required = true, value_name = "FILES")]
    files: Vec<PathBuf>,
    /// Output format [default: table on a terminal, json otherwise].
    #[arg(short, long, value_enum)]
    output: Option<QuotasOutput>,
    /// In the KAI queue table, also the resources that are unlimited with no quota (quota
    /// and limit -1), left out by default. JSON always has them.
    #[arg(long)]
    all_resources: bool,
}

fn import(
    sources: &[(String, String)],
) -> Result<(Model, Vec<gpuquota::model::Diagnostic>), Vec<String>> {
    let mut importer = Importer::new();
    for (name, text) in sources {
        importer.add_str(name, text);
    }
    finish(importer.finish())
}

/// The model and warnings of a finished import, or its errors.
fn finish(
    imported: Result<gpuquota::model::Imported, gpuquota::model::import::ImportErrors>,
) -> Result<(Model, Vec<gpuquota::model::Diagnostic>), Vec<String>> {
    match imported {
        Ok(imported) => Ok((imported.model, imported.warnings)),
        Err(errors) => Err(errors.0.iter().map(ToString::to_string).collect()),
    }
}

pub(crate) fn run(args: QuotasArgs) -> Result<(), CliError> {
    let imported = crate::validate::import_files(&args.files)?;
    let (model, warnings) = finish(imported).map_err(|errors| {
        let count = format!("{} document error(s)", errors.len());
        CliError::input(errors.into_iter().chain([count]))
    })?;
    if crate::common::print_diagnostics(&warnings) {
        return Err(CliError::exit(1));
    }
    if model.cluster_queues.is_empty() && model.cohorts.is_empty() && model.queues.is_empty() {
        let d = gpuquota::model::Diagnostic::error(
            gpuquota::model::diag::codes::NO_OBJECTS,
            "no ClusterQueue, Cohort or KAI Queue in the input; nothing to show",
        );
        return Err(CliError::input([format!("error: {d}")]));
    }
    let p = picture(&model).map_err(|e| CliError::input([e.to_string()]))?;
    match crate::common::output_or(args.output, QuotasOutput::Table, QuotasOutput::Json) {
        QuotasOutput::Json => out!("{}", to_json(&p)?),
        QuotasOutput::Table => out!("{}", p.table_with(table_width(), args.all_resources)),
    }
    Ok(())
}

/// The seed platform's quota picture (the first section of `gpuquota` without arguments).
pub(crate) fn seed_section() -> Result<String, CliError> {
    let sources = [
        (
            "platform.yaml".to_owned(),
            gpuquota::sim::seed::PLATFORM.to_owned(),
        ),
        // the KAI half: the objects the simulated KAI month of the default run uses
        (
            "kai-platform.yaml".to_owned(),
            gpuquota::sim::seed::KAI_PLATFORM.to_owned(),
        ),
    ];
    let (model, _) = import(&sources).map_err(|e| CliError::usage(e.join("\n")))?;
    Ok(picture(&model)?.to_table())
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuquota::model::picture::{FrQuota, Picture};

    fn seed_picture() -> Picture {
        let sources = [
            (
                "platform.yaml".to_owned(),
                gpuquota::sim::seed::PLATFORM.to_owned(),
            ),
            (
                "kai-platform.yaml".to_owned(),
                gpuquota::sim::seed::KAI_PLATFORM.to_owned(),
            ),
        ];
        picture(&import(&sources).unwrap().0).unwrap()
    }

    fn find<'a>(p: &'a Picture, node: &str, flavor: &str) -> &'a FrQuota {
        p.cohort_trees[0]
            .nodes
            .iter()
            .find(|n| n.name == node)
            .and_then(|n| n.quotas.iter().find(|q| q.flavor == flavor))
            .unwrap()
    }

    #[test]
    fn seed_quota_picture() {
        let p = seed_picture();
        assert_eq!(p.cohort_trees.len(), 1);
        let t = &p.cohort_trees[0];
        assert_eq!(t.root, "platform");
        let names: Vec<&str> = t.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "platform",
                "assistant",
                "batch",
                "data-science",
                "notebooks",
                "translation"
            ]
        );
        // (node, flavor, nominal, guaranteed, lends at most, most it can use)
        let expected = [
            // No borrowingLimit: the inference queues may borrow data science's 4 idle cards.
            ("assistant", "rtx-pro-6000", "8", "8", "0", "12"),
            ("translation", "rtx-pro-6000", "2", "2", "0", "6"),
            ("data-science", "h200-nvl", "8", "0", "8", "8"),
            ("data-science", "rtx-pro-6000", "4", "0", "4", "4"),
            ("notebooks", "rtx-pro-6000-1g24", "8", "0", "8", "8"),
            ("batch", "h200-nvl", "0", "0", "0", "8"),
            ("batch", "rtx-pro-6000", "0", "0", "0", "4"),
            ("platform", "rtx-pro-6000", "0", "4", "0", "4"),
            ("platform", "h200-nvl", "0", "8", "0", "8"),
        ];
        for (node, flavor, nominal, guaranteed, lends, most) in expected {
            let q = find(&p, node, flavor);
            assert_eq!(
                (
                    q.nominal_quota.as_str(),
                    q.guaranteed.as_str(),
                    q.lends_at_most.as_str(),
                    q.most_it_can_use.as_str()
                ),
                (nominal, guaranteed, lends, most),
                "{node} {flavor}"
            );
        }
        assert_eq!(
            find(&p, "batch", "h200-nvl").borrowing_limit.as_deref(),
            Some("8")
        );
        assert_eq!(
            find(&p, "assistant", "rtx-pro-6000")
                .lending_limit
                .as_deref(),
            Some("0")
        );
        assert_eq!(p.kai_queue_trees.len(), 5);
        let ds = p
            .kai_queue_trees
            .iter()
            .find(|t| t.root == "data-science")
            .unwrap();
        assert_eq!(ds.queues.len(), 2);
        assert_eq!(ds.queues[1].name, "fine-tuning");
        assert_eq!(ds.queues[1].depth, 1);
        assert_eq!(ds.queues[1].resources["gpu"].quota, Some(12.0));
        assert_eq!(ds.queues[1].resources["cpu"].limit, Some(-1.0));
    }

    #[test]
    fn tables_fit_80_columns() {
        let text = seed_picture().to_table();
        for line in text.lines() {
            assert!(line.chars().count() <= 80, "{line:?}");
        }
        assert!(text.contains("Cohort tree \"platform\": h200-nvl / nvidia.com/gpu"));
    }
}
