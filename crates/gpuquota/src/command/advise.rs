//! `gpuquota advise`: the advisor on an `Advice` file and the scenario it names (the method,
//! metrics and output are documented in [`crate::advise`]).

use std::path::{Path, PathBuf};

use crate::advise;
use crate::command::sweep::{Job, ScenarioFile, job_name};
use crate::command::{Context, Failure, Progress};
use crate::model::text::Width;

/// How the advice is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The front, the recommendation and the binding constraint as text (with `explain`:
    /// which knob moved which figure).
    Table {
        /// Which knob moved which figure, one at a time around the recommendation.
        explain: bool,
        /// How wide the table is.
        width: Width,
    },
    /// The whole advice (`gpuquota schema advice`).
    Json,
    /// One CSV row per configuration shown.
    Csv,
}

/// One `gpuquota advise` run: the flags.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The `Advice` file (its `spec.scenario` is read relative to it).
    pub file: &'a Path,
    /// How the advice is printed.
    pub format: Format,
    /// Write the recommendation as YAML (the changed ClusterQueues, KAI Queues and Nodes) here.
    pub patch_out: Option<&'a Path>,
    /// Also print `sim diff` of the scenario as written against the recommendation.
    pub diff: bool,
    /// Write the `sim diff` plot of current against recommended (SVG) here.
    pub plot: Option<&'a Path>,
    /// Write the advice as one HTML page here.
    pub report: Option<&'a Path>,
    /// Replace the files written if they exist (else refused).
    pub force: bool,
    /// Simulate every configuration instead of decomposing the grid.
    pub exhaustive: bool,
    /// Worker threads (`None`: all cores, or `RAYON_NUM_THREADS`).
    pub threads: Option<usize>,
    /// Simulate only slice `(index, count)` and print it as JSON.
    pub shard: Option<(usize, usize)>,
    /// Make the advice from these shards' JSON instead of simulating.
    pub merge: &'a [PathBuf],
    /// Instead of running, print the Kubernetes Job of this many shards.
    pub job: Option<Job<'a>>,
}

/// Runs the advice as `request` asks and returns what the command prints on standard output:
/// the advice (and `sim diff` of current against recommended with `diff`), a shard's JSON, or
/// the emitted Job. The patch, plot and page are written as asked.
///
/// # Errors
/// A file that exists without `force`, an advice or scenario that cannot be read or does not
/// apply (exit 2 when a file cannot be opened, else 1), a plan's warnings under `strict`.
pub fn run(
    cx: &mut Context<'_>,
    request: &Request<'_>,
    progress: &dyn Progress,
) -> Result<String, Failure> {
    let a = request;
    let strict = cx.strict;
    // refuse before any work: an existing file without force, a link, a non-file
    for path in [a.patch_out, a.plot, a.report].into_iter().flatten() {
        crate::model::write::check_target(path, a.force)?;
    }
    let advice_file = ScenarioFile::read(a.file)?;
    let (name, text) = (&advice_file.name, &advice_file.text);
    let scenario_rel = serde_saphyr::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| v["spec"]["scenario"].as_str().map(str::to_owned));
    let Some(scenario_rel) = scenario_rel else {
        // the parser names what is wrong
        return Err(match advise::parse(name, text, &|_| Vec::new()) {
            Err(d) => Failure::diagnostics(d.iter(), strict),
            Ok(_) => Failure::input([format!("{name}: spec.scenario: missing")]),
        });
    };
    let s = ScenarioFile::read(&advice_file.dir.join(&scenario_rel))?;
    let read = s.reader();
    let prepared = advise::prepare(&s.name, &s.text, &s.stem, &read)
        .map_err(|d| Failure::load(d.iter(), strict))?;
    let plan = match advise::parse(name, text, &|p| advise::split_queues(&prepared.model, p)) {
        Ok(p) => p,
        Err(d) => return Err(Failure::diagnostics(d.iter(), strict)),
    };
    if cx.diagnostics(plan.warnings.iter()) && strict {
        return Err(Failure::exit(1));
    }
    let fingerprint = advise::shard::fingerprint(text, &s.text, &prepared);
    if let Some(job) = &a.job {
        let files = crate::sim::sweep::scenario_files(&s.name, &s.text, &s.stem, &[], &read)
            .map_err(|d| Failure::diagnostics(d.iter(), strict))?;
        let stem = a.file.file_stem().map(|s| s.to_string_lossy().into_owned());
        let file = a.file.file_name().map(|s| s.to_string_lossy().into_owned());
        return advise::shard::manifests(
            &crate::sim::sweep::JobRequest {
                name: &job_name("advise", &stem.unwrap_or_default()),
                namespace: job.namespace,
                queue: job.queue,
                image: job.image,
                scenario: ("", ""),
                files: &[],
                axes: &[],
                shards: job.shards,
            },
            &advise::shard::JobFiles {
                advice: (&file.unwrap_or_default(), text),
                scenario: (&scenario_rel, &s.text),
                files: &files,
            },
            a.exhaustive,
        )
        .map_err(Failure::usage);
    }
    progress.start();
    let tick = |n: usize, total: usize| progress.tick(n, total);
    let opts = advise::Options {
        threads: a.threads,
        progress: Some(&tick),
        exhaustive: a.exhaustive,
    };
    if let Some(shard) = a.shard {
        let result = advise::shard::run(&plan, &prepared, &opts, fingerprint, shard);
        progress.finish();
        return match result {
            Ok(s) => Ok(s.to_json_string()),
            Err(d) => Err(Failure::load(d.iter(), strict)),
        };
    }
    let result = if a.merge.is_empty() {
        advise::advise(&plan, &prepared, &opts)
    } else {
        let mut shards = Vec::new();
        for f in a.merge {
            let t = crate::model::source::read_text(f).map_err(Failure::read)?;
            let s = advise::shard::Shard::from_json(&t)
                .map_err(|m| Failure::usage(format!("{}: {m}", f.display())))?;
            shards.push((crate::model::source::display_name(f), s));
        }
        advise::shard::merge(&plan, &prepared, &fingerprint, shards)
    };
    progress.finish();
    let advice = result.map_err(|d| Failure::load(d.iter(), strict))?;
    let mut out = match a.format {
        Format::Table { explain, width } => advice.to_table(explain, width),
        Format::Json => advice.to_json_string(),
        Format::Csv => advice.to_csv(),
    };
    if let (Some(p), None) = (a.report, &advice.recommended) {
        // nothing to compare against: the page shows the closest configurations
        let html = crate::report::advise(&advice, None).map_err(Failure::usage)?;
        crate::model::write::file(p, html.as_bytes(), a.force)?;
    }
    let page_with_what_if = a.report.is_some() && advice.recommended.is_some();
    if a.patch_out.is_some() || a.diff || a.plot.is_some() || page_with_what_if {
        let Some(settings) = advice.chosen_settings(&plan) else {
            return Err(Failure::usage("no configuration to recommend"));
        };
        // the scenario as written and the recommendation, simulated, of either engine
        let (current, chosen) = if prepared.scenario.is_some() {
            let run = |p: &[(String, String)]| {
                prepared
                    .evaluator
                    .run(p)
                    .map(|(sc, r)| Runs::Kueue(Box::new((sc, r))))
            };
            let chosen = run(&settings).map_err(|d| Failure::diagnostics(d.iter(), strict))?;
            let current = run(&[]).map_err(|d| Failure::diagnostics(d.iter(), strict))?;
            (current, chosen)
        } else {
            let run = |p: &[(String, String)]| {
                prepared
                    .evaluator
                    .run_kai(p)
                    .map(|(sim, o)| Runs::Kai(Box::new((sim, o))))
            };
            let chosen = run(&settings).map_err(|d| Failure::diagnostics(d.iter(), strict))?;
            let current = run(&[]).map_err(|d| Failure::diagnostics(d.iter(), strict))?;
            (current, chosen)
        };
        let (Some(run_a), Some(run_b)) = (current.simulated(), chosen.simulated()) else {
            return Err(Failure::usage("a KAI scenario's run gave no KAI report"));
        };
        if let Some(p) = a.patch_out {
            let yaml = advise::output::patch_yaml_of(
                current.model(),
                chosen.model(),
                chosen.name(),
                &settings,
            )
            .map_err(Failure::usage)?;
            crate::model::write::file(p, yaml.as_bytes(), a.force)?;
        }
        if a.diff {
            let d = crate::sim::diff::diff_runs(run_a, run_b);
            out.push_str("\ncurrent (A) against recommended (B):\n");
            out.push_str(&crate::sim::diff::table(&d));
        }
        if let Some(p) = a.plot {
            let svg = crate::sim::diff::svg_runs(run_a, run_b).map_err(Failure::usage)?;
            crate::model::write::file(p, svg.as_bytes(), a.force)?;
        }
        if let Some(p) = a.report.filter(|_| page_with_what_if) {
            let html =
                crate::report::advise(&advice, Some((run_a, run_b))).map_err(Failure::usage)?;
            crate::model::write::file(p, html.as_bytes(), a.force)?;
        }
    }
    Ok(out)
}

/// One configuration simulated for the advice's outputs: a Kueue or ResourceQuota run, or a
/// KAI run.
enum Runs {
    Kueue(Box<(crate::sim::Scenario, crate::sim::Report)>),
    Kai(Box<(crate::sim::Simulation, crate::sim::kai::KaiOutcome)>),
}

impl Runs {
    fn simulated(&self) -> Option<crate::sim::diff::Simulated<'_>> {
        use crate::sim::diff::Simulated;
        match self {
            Runs::Kueue(r) => Some(Simulated::Kueue(&r.0, &r.1)),
            Runs::Kai(r) => r.0.kai().map(|sc| Simulated::Kai(sc, &r.1)),
        }
    }

    fn name(&self) -> &str {
        match self {
            Runs::Kueue(r) => &r.0.name,
            Runs::Kai(r) => r.0.name(),
        }
    }

    fn model(&self) -> &crate::model::Model {
        match self {
            Runs::Kueue(r) => &r.0.model,
            Runs::Kai(r) => r.0.model(),
        }
    }
}
