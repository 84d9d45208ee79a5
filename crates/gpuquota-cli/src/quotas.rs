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

use gpuquota::fairshare::picture::picture;
use gpuquota::model::Model;

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
    let imported = gpuquota::command::inputs::import_all(&mut crate::common::cx(), &args.files)?;
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
