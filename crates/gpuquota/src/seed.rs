//! The run of `gpuquota` without a command: the built-in seed platform (three servers, 24
//! cards, five departments) through every engine.
//!
//! [`run`] renders one section per engine for this platform, each followed by the commands
//! that reproduce it from the scenario files `gpuquota example seed-…` prints. It writes no
//! file unless asked: with a directory (`gpuquota --out DIR`) it writes those files, the plots
//! and the month's HTML page into it (created if missing) through [`crate::model::write`],
//! and refuses to replace a file already there unless `force` (`--force`). The files are the
//! simulator crate's ([`crate::sim::seed`]), the one copy of the seed platform.

use std::path::Path;

use crate::fairshare::picture::picture;
use crate::mig::{Catalogue, Plan, PlanInstance, PlanOptions, PlanRequest};
use crate::model::text::Width;
use crate::model::{Importer, Model};

/// Why the default run could not be rendered or its files written: the message (naming the
/// file, for one that could not be written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedError(String);

impl std::fmt::Display for SeedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SeedError {}

impl From<std::io::Error> for SeedError {
    fn from(e: std::io::Error) -> Self {
        SeedError(e.to_string())
    }
}

impl From<String> for SeedError {
    fn from(message: String) -> Self {
        SeedError(message)
    }
}

/// The scenario files of the default run: (the `gpuquota example` name, the file name it is
/// saved as, the text). The scenarios name the files they read by these names.
pub const FILES: &[(&str, &str, &str)] = &[
    ("seed-platform", "platform.yaml", crate::sim::seed::PLATFORM),
    ("seed-month", "month.yaml", crate::sim::seed::MONTH),
    (
        "seed-resourcequota",
        "resourcequota.yaml",
        crate::sim::seed::RESOURCEQUOTA,
    ),
    ("seed-kueue", "kueue.yaml", crate::sim::seed::KUEUE),
    ("advice", "advice.yaml", crate::sim::seed::ADVICE),
    (
        "seed-kueue-no-lending-limit",
        "kueue-no-lending-limit.yaml",
        crate::sim::seed::KUEUE_NO_LENDING_LIMIT,
    ),
    (
        "seed-kai-platform",
        "kai-platform.yaml",
        crate::sim::seed::KAI_PLATFORM,
    ),
    (
        "seed-kai-month",
        "kai-month.yaml",
        crate::sim::seed::KAI_MONTH,
    ),
    ("seed-kai", "kai.yaml", crate::sim::seed::KAI),
    (
        "seed-mig-plan",
        "seed-mig-plan.yaml",
        crate::sim::seed::MIG_PLAN,
    ),
    (
        "seed-mig-configs",
        "mig-configs.yaml",
        crate::sim::seed::MIG_CONFIGS,
    ),
    (
        "seed-drill-server-fails-resourcequota",
        "drill-server-fails-resourcequota.yaml",
        crate::sim::seed::DRILL_SERVER_FAILS_RESOURCEQUOTA,
    ),
    (
        "seed-drill-server-fails-kueue",
        "drill-server-fails-kueue.yaml",
        crate::sim::seed::DRILL_SERVER_FAILS_KUEUE,
    ),
    (
        "seed-drill-mig-window-resourcequota",
        "drill-mig-window-resourcequota.yaml",
        crate::sim::seed::DRILL_MIG_WINDOW_RESOURCEQUOTA,
    ),
    (
        "seed-drill-mig-window-kueue",
        "drill-mig-window-kueue.yaml",
        crate::sim::seed::DRILL_MIG_WINDOW_KUEUE,
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

/// The text `gpuquota` without a command prints; with `out`, the scenario files, the plots and
/// the month's page are written into that directory first (`force`: files already there are
/// replaced, else refused before any work).
///
/// # Errors
/// A file that may not or could not be written (naming it), or a seed file the engines refuse
/// (a defect of the build, caught by the tests).
pub fn run(out: Option<&Path>, force: bool) -> Result<String, SeedError> {
    // refuse before any work: an existing file without --force, a link, a non-file
    if let Some(dir) = out {
        for name in FILES.iter().map(|f| f.1).chain(PLOTS).chain([REPORT]) {
            crate::model::write::check_target(&dir.join(name), force)?;
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

    let month = crate::sim::seed::run().map_err(|d| SeedError(d.to_string()))?;
    let mut text = String::from(
        "gpuquota: the seed platform (rtx-a, rtx-b: 8 x RTX PRO 6000 each; h200: 8 x H200 NVL)\n",
    );
    text.push_str("\n== Quota picture: the cohort tree and the KAI queues ==\n");
    text.push_str(&quotas_section()?);
    text.push_str(&place.reproduce(
        &["platform.yaml", "kai-platform.yaml"],
        &[format!(
            "gpuquota quotas {} {} -o table",
            p("platform.yaml"),
            p("kai-platform.yaml")
        )],
    ));

    text.push_str("\n== The month, simulated: who borrowed, was preempted, waited; the bill ==\n");
    text.push_str(&crate::sim::seed::summary(&month));
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
    text.push_str(&crate::advise::seed::section().map_err(|d| SeedError(d.to_string()))?);
    text.push_str(&place.reproduce(
        &["platform.yaml", "month.yaml", "kueue.yaml", "advice.yaml"],
        &[format!("gpuquota advise {} --explain", p("advice.yaml"))],
    ));

    text.push_str("\n== MIG plan: notebooks (8 x nvidia.com/mig-1g.24gb) on rtx-b ==\n");
    text.push_str(&mig_section()?);
    text.push_str(&place.reproduce(
        &["seed-mig-plan.yaml"],
        &[format!(
            "gpuquota mig plan {} -o table",
            p("seed-mig-plan.yaml")
        )],
    ));

    text.push_str("\n== Drills: a server fails; a MIG maintenance window ==\n");
    let drills = crate::sim::seed::drills().map_err(|d| SeedError(d.to_string()))?;
    text.push_str(drills.trim_start_matches('\n'));
    let drill_files: Vec<&str> = crate::sim::seed::DRILLS
        .iter()
        .flat_map(|(_, controls)| controls.iter().map(|c| c.1))
        .collect();
    let mut needed = vec!["platform.yaml", "month.yaml", "mig-configs.yaml"];
    needed.extend(&drill_files);
    text.push_str(
        &place.reproduce(
            &needed,
            &drill_files
                .iter()
                .map(|f| format!("gpuquota sim {} -o table", p(f)))
                .collect::<Vec<_>>(),
        ),
    );

    match out {
        None => text.push_str(
            "\n`gpuquota --out DIR` writes these files and the plots (resourcequota.svg, kueue.svg: GPUs in use per department and card type over the month; kai.svg: KAI's allocation against fair share per leaf queue; diff.svg: ResourceQuota only and Kueue side by side) and report.html (the month as one page to open in a browser, mail or print) into DIR.\n",
        ),
        Some(dir) => {
            let runs = &month.runs;
            let (Some((_, sa, ra)), Some((_, sb, rb))) = (runs.first(), runs.get(1)) else {
                return Err(SeedError("the seed month has no Kueue run".into()));
            };
            let plots = [
                crate::sim::plot::svg(sa, ra).map_err(SeedError)?,
                crate::sim::plot::svg(sb, rb).map_err(SeedError)?,
                crate::sim::kai::plot::svg(&month.kai.0, &month.kai.1).map_err(SeedError)?,
                crate::sim::diff::svg(sa, ra, sb, rb).map_err(SeedError)?,
            ];
            let html = crate::report::seed(&month).map_err(SeedError)?;
            crate::model::write::create_dir(dir)?;
            for (_, name, body) in FILES {
                crate::model::write::file(&dir.join(name), body.as_bytes(), force)?;
            }
            for (name, svg) in PLOTS.iter().zip(&plots) {
                crate::model::write::file(&dir.join(name), svg.as_bytes(), force)?;
            }
            crate::model::write::file(&dir.join(REPORT), html.as_bytes(), force)?;
            let names: Vec<&str> = FILES.iter().map(|f| f.1).collect();
            text.push_str(&format!(
                "\nWritten to {}/: {}; the plots {} (GPUs in use per department and card type over the month), kai.svg (KAI's allocation against fair share per leaf queue), diff.svg (ResourceQuota only and Kueue side by side); and {REPORT}, the month as one page to open in a browser, mail or print.\n",
                place.0.unwrap_or("."),
                names.join(", "),
                PLOTS[..2].join(", ")
            ));
        }
    }
    Ok(text)
}

/// The model of `(name, text)` sources and its warnings, or the import's errors.
fn import(
    sources: &[(String, String)],
) -> Result<(Model, Vec<crate::model::Diagnostic>), Vec<String>> {
    let mut importer = Importer::new();
    for (name, text) in sources {
        importer.add_str(name, text);
    }
    match importer.finish() {
        Ok(imported) => Ok((imported.model, imported.warnings)),
        Err(errors) => Err(errors.0.iter().map(ToString::to_string).collect()),
    }
}

/// The seed platform's quota picture (the first section).
fn quotas_section() -> Result<String, SeedError> {
    let sources = [
        (
            "platform.yaml".to_owned(),
            crate::sim::seed::PLATFORM.to_owned(),
        ),
        // the KAI half: the objects the simulated KAI month of the default run uses
        (
            "kai-platform.yaml".to_owned(),
            crate::sim::seed::KAI_PLATFORM.to_owned(),
        ),
    ];
    let (model, _) = import(&sources).map_err(|e| SeedError(e.join("\n")))?;
    Ok(picture(&model)
        .map_err(|e| SeedError(e.to_string()))?
        .to_table())
}

/// A plan as an 80-column table (the seed section's).
fn table(problem: &PlanInstance<'_>, plan: &Plan) -> String {
    crate::mig::plan_table(problem, plan, Width::Fit(80))
}

/// The seed section: the plan for the notebooks' demand (8 × `nvidia.com/mig-1g.24gb`) on
/// node `rtx-b`, whose cards 0 and 1 run all-1g.24gb and cards 2–7 are whole GPUs (2–5 held
/// by the assistant service): the request [`crate::sim::seed::MIG_PLAN`].
fn mig_section() -> Result<String, SeedError> {
    let (req, _, _) = PlanRequest::from_yaml(crate::sim::seed::MIG_PLAN)
        .map_err(|e| SeedError(format!("seed-mig-plan.yaml: {e}")))?;
    let input = crate::mig::Input::new(&req, Catalogue::builtin(), &PlanOptions::default())
        .map_err(|e| {
            SeedError(
                e.diagnostics()
                    .iter()
                    .map(|d| d.message.clone())
                    .collect::<Vec<_>>()
                    .join("; "),
            )
        })?;
    let plan = crate::mig::run(&input);
    Ok(table(input.instance(), &plan))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_manifests_import_without_warnings() {
        let mut importer = crate::model::Importer::new();
        importer.add_str("platform.yaml", crate::sim::seed::PLATFORM);
        importer.add_str("kueue-day.yaml", crate::sim::seed::KUEUE_DAY);
        importer.add_str("kai-platform.yaml", crate::sim::seed::KAI_PLATFORM);
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
        let problems: Vec<String> = crate::model::validate::problems(m)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(problems, Vec::<String>::new());
    }

    #[test]
    fn every_file_of_the_default_run_is_an_example_under_its_name() {
        for (name, file, text) in FILES {
            let sample = crate::samples::SAMPLES
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
    use crate::model::text::Width;

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
        let month = crate::sim::seed::run().unwrap();
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
                let c = crate::mig::Catalogue::builtin();
                let models: Vec<&crate::mig::GpuModel> = c.models().iter().collect();
                crate::mig::profiles_table(&models, w)
            }),
        ));
        let mut importer = crate::model::Importer::new();
        importer.add_str("platform.yaml", crate::sim::seed::PLATFORM);
        importer.add_str("kai-platform.yaml", crate::sim::seed::KAI_PLATFORM);
        let model = importer.finish().unwrap().model;
        let picture = crate::fairshare::picture::picture(&model).unwrap();
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

#[cfg(test)]
mod quota_picture_tests {
    use super::*;
    use crate::fairshare::picture::{FrQuota, Picture};

    fn seed_picture() -> Picture {
        let sources = [
            (
                "platform.yaml".to_owned(),
                crate::sim::seed::PLATFORM.to_owned(),
            ),
            (
                "kai-platform.yaml".to_owned(),
                crate::sim::seed::KAI_PLATFORM.to_owned(),
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

#[cfg(test)]
mod mig_tests {
    use super::*;

    #[test]
    fn seed_section_serves_all_notebooks_without_reconfiguring() {
        let out = mig_section().unwrap();
        assert!(
            out.starts_with("value 8  reconfigured 0  fragmentation 0  optimal yes\n"),
            "{out}"
        );
        assert!(out.contains("nvidia.com/mig-1g.24gb"));
        assert!(out.lines().all(|l| l.len() <= 80), "{out}");
    }

    #[test]
    fn plan_table_wraps_at_80_columns() {
        let (req, _, _) = PlanRequest::from_yaml(
            "gpus:\n  - {node: a-rather-long-node-name, index: 7, model: A100-40GB, instances: []}\n\
             demand:\n  - {profile: 1g.5gb, count: 7}\n",
        )
        .unwrap();
        let input =
            crate::mig::Input::new(&req, Catalogue::builtin(), &PlanOptions::default()).unwrap();
        let plan = crate::mig::run(&input);
        assert_eq!(plan.value, 7);
        let t = table(input.instance(), &plan);
        assert!(t.lines().all(|l| l.len() <= 80), "{t}");
        assert_eq!(t.matches("1g.5gb@").count(), 7);
    }
}
