//! The built-in seed platform of `mission.md`: three servers, 24 cards, five departments.
//!
//! `gpuquota` with no arguments prints one section per engine for this platform.

use std::process::ExitCode;

use crate::common::CliError;

/// The seed platform as Kueue objects: flavors, cohort `platform`, five ClusterQueues, namespaces,
/// LocalQueues, ResourceQuotas, WorkloadPriorityClasses.
#[allow(dead_code)] // read by the engine sections as they land
pub(crate) const KUEUE_YAML: &str = include_str!("../seed/kueue.yaml");
/// The seed platform's day as Kueue Workloads (admitted inference, notebooks, nightly batch,
/// the 02:00 fine-tuning job).
#[allow(dead_code)]
pub(crate) const KUEUE_WORKLOADS_YAML: &str = include_str!("../seed/kueue-workloads.yaml");
/// The seed platform as KAI objects: department and project Queues, Nodes (the static
/// fair-share table; the default run simulates `gpuquota_sim::seed::KAI` instead).
#[allow(dead_code)]
pub(crate) const KAI_YAML: &str = include_str!("../seed/kai.yaml");

/// Each section prints one engine's view of the seed platform. Engines add theirs here.
#[allow(clippy::type_complexity)] // (title, section) pairs; a type alias would only hide that
const SECTIONS: &[(&str, fn() -> Result<String, CliError>)] = &[
    (
        "Quota picture: the cohort tree and the KAI queues",
        crate::quotas::seed_section,
    ),
    (
        "MIG plan: notebooks (8 x nvidia.com/mig-1g.24gb) on rtx-b",
        crate::mig::seed_section,
    ),
];

pub(crate) fn run() -> Result<ExitCode, CliError> {
    outln!("gpuquota: the seed platform (rtx-a, rtx-b: 8 x RTX PRO 6000 each; h200: 8 x H200 NVL)");
    let month = gpuquota::sim::seed::run().map_err(|d| CliError(d.to_string()))?;
    for (i, (title, section)) in SECTIONS.iter().enumerate() {
        outln!("\n== {title} ==");
        out!("{}", section()?);
        if i == 0 {
            outln!("\n== The month, simulated: who borrowed, was preempted, waited; the bill ==");
            out!("{}", gpuquota::sim::seed::summary(&month));
        }
    }
    // the scenario files and the plots, so every part can be rerun on the user's own files
    let dir = std::env::temp_dir().join("gpuquota-seed");
    std::fs::create_dir_all(&dir).map_err(|e| CliError(format!("{}: {e}", dir.display())))?;
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| CliError(format!("{}: {e}", p.display())))
    };
    write("platform.yaml", gpuquota::sim::seed::PLATFORM)?;
    write("month.yaml", gpuquota::sim::seed::MONTH)?;
    let (nll_file, nll_text) = gpuquota::sim::seed::NO_LENDING_LIMIT;
    write(nll_file, nll_text)?;
    let mut plots = Vec::new();
    for (&(_, file, text), (_, scenario, report)) in
        gpuquota::sim::seed::ENGINES.iter().zip(&month.runs)
    {
        write(file, text)?;
        let svg_name = file.replace(".yaml", ".svg");
        write(
            &svg_name,
            &gpuquota::sim::plot::svg(scenario, report).map_err(CliError)?,
        )?;
        plots.push(svg_name);
    }
    // the KAI month: its scenario files, the allocation plot and the fair share over time
    let (kai_file, kai_text) = (
        gpuquota::sim::seed::KAI_ENGINE.1,
        gpuquota::sim::seed::KAI_ENGINE.2,
    );
    write("kai-platform.yaml", gpuquota::sim::seed::KAI_PLATFORM)?;
    write("kai-month.yaml", gpuquota::sim::seed::KAI_MONTH)?;
    write(kai_file, kai_text)?;
    write(
        "kai.svg",
        &gpuquota::sim::kai::plot::svg(&month.kai.0, &month.kai.1).map_err(CliError)?,
    )?;
    plots.push("kai.svg".into());
    if let [(_, sa, ra), (_, sb, rb), ..] = month.runs.as_slice() {
        write(
            "diff.svg",
            &gpuquota::sim::diff::svg(sa, ra, sb, rb).map_err(CliError)?,
        )?;
        plots.push("diff.svg".into());
    }
    let d = dir.display();
    outln!(
        "\nPlots in {d}/: {} (usage per queue over the month), kai.svg (KAI: allocation and fair share over time per queue), diff.svg (ResourceQuota only and Kueue side by side)",
        plots[..plots.len().saturating_sub(2)].join(", ")
    );
    outln!("Rerun each part on your own copy of the scenario files (written to {d}/):");
    outln!("  gpuquota sim {d}/kueue.yaml --output table --plot kueue.svg");
    outln!("  gpuquota sim {d}/resourcequota.yaml --output table");
    outln!("  gpuquota sim {d}/kai.yaml --output table --plot kai.svg");
    outln!("  gpuquota sim diff {d}/resourcequota.yaml {d}/kueue.yaml --plot diff.svg");
    outln!(
        "  gpuquota sim diff {d}/kueue.yaml {d}/{nll_file}   # what the assistant's lendingLimit 0 does"
    );
    outln!(
        "  gpuquota sim {d}/kueue.yaml | jq .chargeback      # the month's bill (also kai.yaml)"
    );
    outln!(
        "  gpuquota example mig-plan > mig-plan.yaml && gpuquota mig plan mig-plan.yaml   # a MIG plan"
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_manifests_import_without_warnings() {
        let mut importer = gpuquota::model::Importer::new();
        importer.add_str("kueue.yaml", KUEUE_YAML);
        importer.add_str("kueue-workloads.yaml", KUEUE_WORKLOADS_YAML);
        importer.add_str("kai.yaml", KAI_YAML);
        let imported = importer.finish().unwrap();
        assert_eq!(imported.warnings, vec![]);
        let m = &imported.model;
        assert_eq!(m.resource_flavors.len(), 3);
        assert_eq!(m.cluster_queues.len(), 5);
        assert_eq!(m.cohorts.len(), 1);
        assert_eq!(m.local_queues.len(), 5);
        assert_eq!(m.namespaces.len(), 5);
        assert_eq!(m.resource_quotas.len(), 5);
        assert_eq!(m.workload_priority_classes.len(), 4);
        assert_eq!(m.workloads.len(), 2 + 1 + 6 + 16 + 1);
        assert_eq!(m.workloads.values().filter(|w| w.is_admitted()).count(), 3);
        assert_eq!(m.queues.len(), 10);
        assert_eq!(m.nodes.len(), 3);
        assert!(m.duplicates.is_empty());
        let problems: Vec<String> = gpuquota::model::validate::problems(m)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(problems, Vec::<String>::new());
    }
}
