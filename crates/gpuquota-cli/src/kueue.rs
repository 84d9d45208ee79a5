//! `gpuquota kueue`: Kueue's admission engine over manifests (engine crate `gpuquota-cohort`).
//!
//! JSON contracts (stdout, pretty printed):
//! - `schedule`: `{"cycles", "admitted": [{workload, clusterQueue, cycle, podSets: [{name,
//!   count, flavors}]}], "preempted": [{workload, clusterQueue, preemptor, reason, cycle}],
//!   "pending": [{workload, clusterQueue, reason, message}], "warnings": [{severity, code,
//!   kind, name, message, engine}]}` — `warnings` only when the run has one (a
//!   `preemption-loop`: the same preemptor preempted the same victim twice), so runs without
//!   one print what they always printed; each warning is also printed on stderr and, under
//!   `--strict`, fails the command (exit 1, nothing on stdout);
//! - `quotas`: `{"clusterQueues": {cq: {flavor: {resource: {nominal, borrowingLimit,
//!   lendingLimit, usage, available, potentialAvailable}}}}, "cohorts": {cohort: {flavor:
//!   {resource: {nominal, subtreeQuota, usage, borrowingLimit, lendingLimit}}}}}`;
//! - `shares`: `{"clusterQueues": {cq: {"share": 250, "dominantResource": "nvidia.com/gpu"}},
//!   "cohorts": {cohort: {…}}}` — `status.fairSharing.weightedShare` as Kueue reports it
//!   (`gpuquota::fairshare::shares::kueue_shares`); `null` where Kueue reports no share.
//!
//! `schedule --budgets FILE --usage REPORT.json` applies GPU-hour Budgets first
//! ([`crate::budgets`]): a workload held back by a spent `Wait` budget is listed in `pending`
//! with reason `BudgetExhausted`; without the flags the output is unchanged.
//!
//! `schedule` runs Kueue's fair sharing (`gpuquota::kueue::fair`) when the Kueue
//! `Configuration` in the files enables it (`fairSharing`) or `--fair-sharing` is given, and
//! admission fair sharing when the Configuration has `admissionFairSharing` (for the
//! ClusterQueues whose `admissionScope` asks for it).
//!
//! Live-cluster states Kueue tolerates are warnings on stderr; malformed objects are listed on
//! stderr with exit code 1.

use std::path::PathBuf;

use clap::Subcommand;
use gpuquota::command::kueue;

use crate::common::{CliError, cx, output_or, table_width, to_json, write_json};

/// `--output` of the `kueue` commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum KueueOutput {
    /// The JSON contract (documented in the engine crate's docs; `gpuquota schema`).
    Json,
    /// Tables (fit to the terminal, full width into a pipe or with `--wide`).
    Table,
}

/// The manifests and the output format of `kueue shares` and `kueue quotas`.
#[derive(Debug, clap::Args)]
pub(crate) struct KueueArgs {
    /// Manifests (YAML or JSON, several documents per file).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Output format [default: table on a terminal, json otherwise].
    #[arg(short, long, value_enum)]
    output: Option<KueueOutput>,
}

/// Kueue subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum KueueCommand {
    /// Run Kueue's scheduling cycles over a cluster state: admissions, preemptions, and why
    /// every other workload waits.
    #[command(after_help = "\
Examples:
  gpuquota kueue schedule kueue.yaml -o table            admissions, preemptions, why each waits
  gpuquota kueue schedule kueue.yaml --fair-sharing      with Kueue's fair sharing
  gpuquota kueue schedule kueue.yaml --cycles 1 -o json  one scheduling cycle, as JSON")]
    Schedule {
        /// Manifests (YAML or JSON, several documents per file).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Stop after N cycles (default: until a cycle changes nothing).
        #[arg(long)]
        cycles: Option<u32>,
        /// Fair sharing (DRS tournament, fair-sharing preemption) even without a
        /// Configuration enabling it.
        #[arg(long)]
        fair_sharing: bool,
        /// Output format [default: table on a terminal, json otherwise].
        #[arg(short, long, value_enum)]
        output: Option<KueueOutput>,
        /// GPU-hour Budgets (manifests) to apply, with --usage.
        #[arg(long, requires = "usage")]
        budgets: Option<PathBuf>,
        /// A `gpuquota meter` JSON report of the budgets' period so far.
        #[arg(long, requires = "budgets")]
        usage: Option<PathBuf>,
    },
    /// Every ClusterQueue's and Cohort's fair-sharing share (`status.fairSharing.
    /// weightedShare`) and dominant resource, as Kueue reports them.
    #[command(after_help = "\
Examples:
  gpuquota kueue shares kueue.yaml -o table  every weighted share and dominant resource
  gpuquota kueue shares kueue.yaml -o json   as JSON (`gpuquota schema kueue-shares`)")]
    Shares(KueueArgs),
    /// Quotas, usage, available and potentially available capacity of every ClusterQueue and
    /// Cohort, as Kueue's cache computes them.
    #[command(after_help = "\
Examples:
  gpuquota kueue quotas kueue.yaml -o table  nominal, usage, available per flavor-resource
  gpuquota kueue quotas kueue.yaml -o json   as JSON (`gpuquota schema kueue-quotas`)")]
    Quotas(KueueArgs),
}

/// Imports the manifests ([`crate::common::load_model`]).
pub(crate) fn run(command: KueueCommand) -> Result<(), CliError> {
    match command {
        KueueCommand::Schedule {
            files,
            cycles,
            fair_sharing,
            output,
            budgets,
            usage,
        } => {
            let options = gpuquota::kueue::Options::default()
                .with_cycles(cycles)
                .with_fair_sharing(fair_sharing);
            let (budgets, usage) = (budgets.as_deref(), usage.as_deref());
            let report = kueue::schedule(&mut cx(), &files, &options, budgets, usage)?;
            match output_or(output, KueueOutput::Table, KueueOutput::Json) {
                KueueOutput::Json => write_json(&report)?,
                KueueOutput::Table => out!("{}", report.table(table_width())),
            }
            Ok(())
        }
        KueueCommand::Shares(KueueArgs { files, output }) => {
            let report = kueue::shares(&mut cx(), &files)?;
            print(output, &report, |r| r.table(table_width()))
        }
        KueueCommand::Quotas(KueueArgs { files, output }) => {
            let report = kueue::quotas(&mut cx(), &files)?;
            print(output, &report, |r| r.table(table_width()))
        }
    }
}

/// Prints `report` as JSON or as its `table`, as `--output` asks.
fn print<T: serde::Serialize>(
    output: Option<KueueOutput>,
    report: &T,
    table: impl FnOnce(&T) -> String,
) -> Result<(), CliError> {
    match output_or(output, KueueOutput::Table, KueueOutput::Json) {
        KueueOutput::Json => out!("{}", to_json(report)?),
        KueueOutput::Table => out!("{}", table(report)),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_json_contract() {
        let yaml = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: on-demand}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors: [{name: on-demand, resources: [{name: cpu, nominalQuota: 6}]}]\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq, namespace: ns}\nspec: {clusterQueue: cq}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w, namespace: ns}\nspec:\n  queueName: lq\n  podSets:\n  - name: main\n    count: 3\n    template: {spec: {containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]}}\n";
        let model = gpuquota::model::import_str("t.yaml", yaml).unwrap().model;
        let input =
            gpuquota::kueue::Input::from_model(&model, &gpuquota::kueue::Options::default())
                .unwrap();
        let json = to_json(&gpuquota::kueue::run(&input)).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "cycles": 1,
                "admitted": [{"workload": "ns/w", "clusterQueue": "cq", "cycle": 1,
                              "podSets": [{"name": "main", "count": 3, "flavors": {"cpu": "on-demand"}}]}],
                "preempted": [],
                "pending": []
            })
        );
        let q = serde_json::to_value(gpuquota::kueue::quotas(&input)).unwrap();
        assert_eq!(
            q["clusterQueues"]["cq"]["on-demand"]["cpu"],
            serde_json::json!({"nominal": "6", "borrowingLimit": null, "lendingLimit": null,
                               "usage": "0", "available": "6", "potentialAvailable": "6"})
        );
    }
}
