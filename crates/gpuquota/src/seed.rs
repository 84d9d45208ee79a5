//! The built-in seed platform of `mission.md`: three servers, 24 cards, five departments.
//!
//! `gpuquota` with no arguments prints one section per engine for this platform, each
//! followed by the commands that reproduce it from the scenario files `gpuquota example
//! seed-…` prints. It writes no file unless asked: `gpuquota --out DIR` writes those files
//! and the plots into `DIR` (created if missing) through [`gpuquota::model::write::file`], and
//! refuses to replace a file already there unless `--force` is given. The files are the
//! simulator crate's ([`gpuquota::sim::seed`]), the one copy of the seed platform.

use std::path::Path;

use crate::common::CliError;

/// The scenario files of the default run: (the `gpuquota example` name, the file name it is
/// saved as, the text). The scenarios name the files they read by these names.
pub(crate) const FILES: &[(&str, &str, &str)] = &[
    (
        "seed-platform",
        "platform.yaml",
        gpuquota::sim::seed::PLATFORM,
    ),
    ("seed-month", "month.yaml", gpuquota::sim::seed::MONTH),
    (
        "seed-resourcequota",
        "resourcequota.yaml",
        gpuquota::sim::seed::RESOURCEQUOTA,
    ),
    ("seed-kueue", "kueue.yaml", gpuquota::sim::seed::KUEUE),
    ("advice", "advice.yaml", gpuquota::sim::seed::ADVICE),
    (
        "seed-kueue-no-lending-limit",
        "kueue-no-lending-limit.yaml",
        gpuquota::sim::seed::KUEUE_NO_LENDING_LIMIT,
    ),
    (
        "seed-kai-platform",
        "kai-platform.yaml",
        gpuquota::sim::seed::KAI_PLATFORM,
    ),
    (
        "seed-kai-month",
        "kai-month.yaml",
        gpuquota::sim::seed::KAI_MONTH,
    ),
    ("seed-kai", "kai.yaml", gpuquota::sim::seed::KAI),
    (
        "seed-mig-plan",
        "seed-mig-plan.yaml",
        gpuquota::sim::seed::MIG_PLAN,
    ),
];

/// The plots `--out` writes besides the scenario files.
const PLOTS: [&str; 4] = ["resourcequota.svg", "kueue.svg", "kai.svg", "diff.svg"];

/// The page `--out` writes: the month as one self-contained HTML file.
const REPORT: &str = "report.html";

/// Where the reproduction commands find the files: in `DIR` after `--out DIR`, else in the
/// current directory after saving them with `gpuquota example`.
struct Place<'a>(Option<&'a str>);

impl Place<'_> {
    /// The path of `file` as a command line names it.
    fn of(&self, file: &str) -> String {
        match self.0 {
            Some(dir) => format!("{dir}/{file}"),
            None => file.to_owned(),
        }
    }

    /// The commands that reproduce a section reading `files` (saved first when there is no
    /// `--out`), then `commands`, indented as the run prints them.
    fn reproduce(&self, files: &[&str], commands: &[String]) -> String {
        let mut text = String::from("\nReproduce it:\n");
        if self.0.is_none() {
            for f in files {
                if let Some((name, file, _)) = FILES.iter().find(|(_, file, _)| file == f) {
                    text.push_str(&format!("  gpuquota example {name} > {file}\n"));
                }
            }
        }
        for c in commands {
            text.push_str(&format!("  {c}\n"));
        }
        text
    }
}

/// `gpuquota [--out DIR [--force]]`.
pub(crate) fn run(out: Option<&Path>, force: bool) -> Result<(), CliError> {
    // refuse before any work: an existing file without --force, a link, a non-file
    if let Some(dir) = out {
        for name in FILES.iter().map(|f| f.1).chain(PLOTS).chain([REPORT]) {
            gpuquota::model::write::check_target(&dir.join(name), force)?;
        }
    }
    let shown = out.map(|d| {
        let d = d.display().to_string();
        match d.trim_end_matches('/') {
            "" => "/".to_owned(),
            t => t.to_owned(),
        }
    });
    let place = Place(shown.as_deref());
    let p = |f: &str| place.of(f);

    let month = gpuquota::sim::seed::run().map_err(|d| CliError::usage(d.to_string()))?;
    let mut text = String::from(
        "gpuquota: the seed platform (rtx-a, rtx-b: 8 x RTX PRO 6000 each; h200: 8 x H200 NVL)\n",
    );
    text.push_str("\n== Quota picture: the cohort tree and the KAI queues ==\n");
    text.push_str(&crate::quotas::seed_section()?);
    text.push_str(&place.reproduce(
        &["platform.yaml", "kai-platform.yaml"],
        &[format!(
            "gpuquota quotas {} {} -o table",
            p("platform.yaml"),
            p("kai-platform.yaml")
        )],
    ));

    text.push_str("\n== The month, simulated: who borrowed, was preempted, waited; the bill ==\n");
    text.push_str(&gpuquota::sim::seed::summary(&month));
    text.push_str(&place.reproduce(
        &[
            "platform.yaml",
            "month.yaml",
            "resourcequota.yaml",
            "kueue.yaml",
            "kueue-no-lending-limit.yaml",
            "kai-platform.yaml",
            "kai-month.yaml",
            "kai.yaml",
        ],
        &[
            format!(
                "gpuquota sim {} -o table --plot resourcequota.svg",
                p("resourcequota.yaml")
            ),
            format!("gpuquota sim {} -o table --plot kueue.svg", p("kueue.yaml")),
            format!("gpuquota sim {} -o table --plot kai.svg", p("kai.yaml")),
            format!(
                "gpuquota sim diff {} {} --plot diff.svg",
                p("resourcequota.yaml"),
                p("kueue.yaml")
            ),
            format!(
                "gpuquota sim diff {} {} -o table   # what the assistant's lendingLimit 0 does",
                p("kueue.yaml"),
                p("kueue-no-lending-limit.yaml")
            ),
            format!(
                "gpuquota sim {} | jq .chargeback      # the month's bill (also kai.yaml)",
                p("kueue.yaml")
            ),
        ],
    ));

    text.push_str("\n== What the advisor would change and why ==\n");
    text.push_str(&gpuquota::advise::seed::section().map_err(|d| CliError::usage(d.to_string()))?);
    text.push_str(&place.reproduce(
        &["platform.yaml", "month.yaml", "kueue.yaml", "advice.yaml"],
        &[format!("gpuquota advise {} --explain", p("advice.yaml"))],
    ));

    text.push_str("\n== MIG plan: notebooks (8 x nvidia.com/mig-1g.24gb) on rtx-b ==\n");
    text.push_str(&crate::mig::seed_section()?);
    text.push_str(&place.reproduce(
        &["seed-mig-plan.yaml"],
        &[format!(
            "gpuquota mig plan {} -o table",
            p("seed-mig-plan.yaml")
        )],
    ));

    match out {
        None => text.push_str(
            "\n`gpuquota --out DIR` writes these files and the plots (resourcequota.svg, kueue.svg: GPUs in use per department and card type over the month; kai.svg: KAI's allocation against fair share per leaf queue; diff.svg: ResourceQuota only and Kueue side by side) and report.html (the month as one page to open in a browser, mail or print) into DIR.\n",
        ),
        Some(dir) => {
            let runs = &month.runs;
            let (Some((_, sa, ra)), Some((_, sb, rb))) = (runs.first(), runs.get(1)) else {
                return Err(CliError::usage("the seed month has no Kueue run"));
            };
            let plots = [
                gpuquota::sim::plot::svg(sa, ra).map_err(CliError::usage)?,
                gpuquota::sim::plot::svg(sb, rb).map_err(CliError::usage)?,
                gpuquota::sim::kai::plot::svg(&month.kai.0, &month.kai.1).map_err(CliError::usage)?,
                gpuquota::sim::diff::svg(sa, ra, sb, rb).map_err(CliError::usage)?,
            ];
            let html = gpuquota::report::seed(&month).map_err(CliError::usage)?;
            gpuquota::model::write::create_dir(dir)?;
            for (_, name, body) in FILES {
                gpuquota::model::write::file(&dir.join(name), body.as_bytes(), force)?;
            }
            for (name, svg) in PLOTS.iter().zip(&plots) {
                gpuquota::model::write::file(&dir.join(name), svg.as_bytes(), force)?;
            }
            gpuquota::model::write::file(&dir.join(REPORT), html.as_bytes(), force)?;
            let names: Vec<&str> = FILES.iter().map(|f| f.1).collect();
            text.push_str(&format!(
                "\nWritten to {}/: {}; the plots {} (GPUs in use per department and card type over the month), kai.svg (KAI's allocation against fair share per leaf queue), diff.svg (ResourceQuota only and Kueue side by side); and {REPORT}, the month as one page to open in a browser, mail or print.\n",
                place.0.unwrap_or("."),
                names.join(", "),
                PLOTS[..2].join(", ")
            ));
        }
    }
    crate::common::write_stdout(text.as_bytes())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_manifests_import_without_warnings() {
        let mut importer = gpuquota::model::Importer::new();
        importer.add_str("platform.yaml", gpuquota::sim::seed::PLATFORM);
        importer.add_str("kueue-day.yaml", gpuquota::sim::seed::KUEUE_DAY);
        importer.add_str("kai-platform.yaml", gpuquota::sim::seed::KAI_PLATFORM);
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
        // platform.yaml holds what every control shares, kai-platform.yaml only KAI's Queues
        assert!(m.duplicates.is_empty());
        assert_eq!(m.budgets.len(), 1);
        let problems: Vec<String> = gpuquota::model::validate::problems(m)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(problems, Vec::<String>::new());
    }

    #[test]
    fn every_file_of_the_default_run_is_an_example_under_its_name() {
        for (name, file, text) in FILES {
            let sample = crate::example::SAMPLES
                .iter()
                .find(|s| s.name == *name)
                .unwrap_or_else(|| panic!("no sample {name}"));
            assert_eq!(sample.file, *file);
            assert_eq!(sample.text, *text);
        }
    }
}

#[cfg(test)]
mod width_tests {
    use gpuquota::model::text::Width;

    /// The whitespace-separated tokens of a text, sorted: equal for two renderings when
    /// neither splits a word or number.
    fn tokens(s: &str) -> Vec<&str> {
        let mut t: Vec<&str> = s.split_whitespace().collect();
        t.sort_unstable();
        t
    }

    /// The default run's tables and the commands' main tables, at 80 columns: every line
    /// fits and every token is the full-width rendering's, whole.
    #[test]
    fn key_tables_at_80_columns_split_no_word_or_number() {
        let month = gpuquota::sim::seed::run().unwrap();
        // (name, fits within 80, rendering): the simulation report opens with a prose line
        // longer than 80, and its class table needs 82 columns for its words and numbers
        #[allow(clippy::type_complexity)]
        let mut tables: Vec<(&str, bool, Box<dyn Fn(Width) -> String>)> = Vec::new();
        for (label, _, report) in &month.runs {
            tables.push((label, false, Box::new(move |w| report.table(w))));
        }
        tables.push((
            "mig profiles",
            true,
            Box::new(|w| {
                let c = gpuquota::mig::Catalogue::builtin();
                let models: Vec<&gpuquota::mig::GpuModel> = c.models().iter().collect();
                gpuquota::mig::profiles_table(&models, w)
            }),
        ));
        let mut importer = gpuquota::model::Importer::new();
        importer.add_str("platform.yaml", gpuquota::sim::seed::PLATFORM);
        importer.add_str("kai-platform.yaml", gpuquota::sim::seed::KAI_PLATFORM);
        let model = importer.finish().unwrap().model;
        let picture = gpuquota::model::picture::picture(&model).unwrap();
        tables.push(("quotas", true, Box::new(move |w| picture.table(w))));
        for (name, fits, render) in &tables {
            let fit = render(Width::Fit(80));
            let full = render(Width::Full);
            assert!(
                !fits || fit.lines().all(|l| l.chars().count() <= 80),
                "{name} wider than 80:\n{fit}"
            );
            assert_eq!(tokens(&fit), tokens(&full), "{name} splits a token:\n{fit}");
        }
    }
}
