//! `gpuquota sim` and `gpuquota sim diff`: what a simulated scenario prints and writes (the
//! scenario file and the JSON contract are documented in [`crate::sim`]).

use std::collections::BTreeMap;
use std::path::Path;

use crate::command::sweep::Written;
use crate::command::{Context, Failure};
use crate::model::text::Width;
use crate::sim::{Report, Scenario, Simulation, SimulationReport};

/// How `gpuquota sim` prints a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The JSON report.
    Json,
    /// Per queue and per class, with a plain-language summary, this wide.
    Table(Width),
    /// One row per run and flavor-resource.
    Csv,
    /// The summary document Kueue's perf runner writes (not of a KAI run).
    KueueSummary,
    /// The run as the Kueue Workloads a cluster would have recorded, one YAML `List` (not
    /// of a KAI run; [`crate::sim::history::write`]).
    Workloads,
}

/// What `gpuquota sim` prints on standard output.
#[derive(Debug)]
pub enum Output {
    /// This text.
    Text(String),
    /// A Kueue or ResourceQuota run's JSON report, to be streamed
    /// ([`Report::write_json`]): a trace's report is tens of megabytes.
    Json(Box<Report>),
}

/// Simulates one loaded Kueue or ResourceQuota scenario; its diagnostics are printed.
///
/// # Errors
/// A scenario that could not be loaded or simulated, a KAI scenario, an error among the
/// run's diagnostics (every warning under `strict`).
pub fn load_run(
    cx: &mut Context<'_>,
    loaded: Result<Simulation, crate::Error>,
) -> Result<(Scenario, Report), Failure> {
    let simulation = loaded.map_err(|e| Failure::load(e.diagnostics().iter(), cx.strict))?;
    let report = crate::sim::simulate(&simulation)
        .map_err(|e| Failure::diagnostics(e.diagnostics().iter(), cx.strict))?;
    let (Some(scenario), Some(report)) = (simulation.kueue(), report.into_kueue()) else {
        return Err(Failure::exit(1));
    };
    if cx.diagnostics(report.diagnostics.iter()) {
        return Err(Failure::exit(1));
    }
    Ok((scenario.clone(), report))
}

/// Simulates one loaded scenario of any engine; its diagnostics are printed.
///
/// # Errors
/// A scenario that could not be loaded or simulated, an error among the run's diagnostics
/// (every warning under `strict`).
pub fn load_any(
    cx: &mut Context<'_>,
    loaded: Result<Simulation, crate::Error>,
) -> Result<(Simulation, SimulationReport), Failure> {
    let simulation = loaded.map_err(|e| Failure::load(e.diagnostics().iter(), cx.strict))?;
    let report = crate::sim::simulate(&simulation)
        .map_err(|e| Failure::diagnostics(e.diagnostics().iter(), cx.strict))?;
    if cx.diagnostics(report.diagnostics()) {
        return Err(Failure::exit(1));
    }
    Ok((simulation, report))
}

/// `gpuquota sim diff A B`: both scenarios (of any engine: Kueue, ResourceQuota or KAI, in
/// any pairing) simulated and compared per department, as a table or (`json`) the JSON
/// document; the plot and page written as asked.
///
/// # Errors
/// A file that exists without `force`, a scenario that fails as in [`load_any`], the
/// workloads' warning under `strict`.
pub fn diff(
    cx: &mut Context<'_>,
    a: &Path,
    b: &Path,
    json: bool,
    written: Written<'_>,
) -> Result<String, Failure> {
    use crate::sim::diff::Simulated;
    // refuse before any work: an existing file without force, a link, a non-file
    for path in [written.plot, written.report].into_iter().flatten() {
        crate::model::write::check_target(path, written.force)?;
    }
    let (la, lb) = (Simulation::from_files(a), Simulation::from_files(b));
    let (sa, ra) = load_any(cx, la)?;
    let (sb, rb) = load_any(cx, lb)?;
    let (Some(run_a), Some(run_b)) = (Simulated::of(&sa, &ra), Simulated::of(&sb, &rb)) else {
        return Err(Failure::usage(
            "a report of another engine than its scenario's",
        ));
    };
    let doc = crate::sim::diff::diff_runs(run_a, run_b);
    if let Some(w) = doc.workloads.warning() {
        cx.warnings(&[w])?;
    }
    let text = if json {
        let mut s = serde_json::to_string_pretty(&doc)?;
        s.push('\n');
        s
    } else {
        crate::sim::diff::table(&doc)
    };
    if let Some(path) = written.plot {
        let svg = crate::sim::diff::svg_runs(run_a, run_b).map_err(Failure::usage)?;
        crate::model::write::file(path, svg.as_bytes(), written.force)?;
    }
    if let Some(path) = written.report {
        let html = crate::report::diff_runs(run_a, run_b).map_err(Failure::usage)?;
        crate::model::write::file(path, html.as_bytes(), written.force)?;
    }
    Ok(text)
}

/// What `gpuquota sim FILE` prints of a simulated scenario (`simulated` is
/// [`crate::sim::simulate_with_options`]'s result); the plot and page are written as asked.
/// The run's diagnostics are printed.
///
/// # Errors
/// A run that failed, an error among its diagnostics (every warning under `strict`),
/// `kueue-summary` of a KAI run, a file that cannot be written.
pub fn output(
    cx: &mut Context<'_>,
    simulation: Simulation,
    simulated: Result<SimulationReport, crate::Error>,
    format: Format,
    written: Written<'_>,
) -> Result<Output, Failure> {
    let simulated =
        simulated.map_err(|e| Failure::diagnostics(e.diagnostics().iter(), cx.strict))?;
    if cx.diagnostics(simulated.diagnostics()) {
        return Err(Failure::exit(1));
    }
    let (scenario, report) = match (&simulation.kueue(), simulated) {
        (Some(scenario), SimulationReport::Kueue(report)) => (*scenario, report),
        (_, SimulationReport::Kai(outcome)) => match simulation.kai() {
            Some(scenario) => return kai(scenario, &outcome, format, written).map(Output::Text),
            None => return Err(Failure::usage("a KAI report of a Kueue scenario")),
        },
        _ => return Err(Failure::usage("a Kueue report of a KAI scenario")),
    };
    let text = match format {
        Format::Json => {
            if let Some(path) = written.plot {
                let svg = crate::sim::plot::svg(scenario, &report).map_err(Failure::usage)?;
                crate::model::write::file(path, svg.as_bytes(), written.force)?;
            }
            return Ok(Output::Json(report));
        }
        Format::Table(width) => report.table(width),
        Format::Csv => report.to_csv(),
        Format::KueueSummary => {
            let classes: BTreeMap<String, String> = scenario
                .model
                .cluster_queues
                .iter()
                .map(|(n, c)| {
                    (
                        n.clone(),
                        c.metadata
                            .labels
                            .get(crate::sim::scenario::PERF_CLASS_LABEL)
                            .cloned()
                            .unwrap_or_default(),
                    )
                })
                .collect();
            report.to_kueue_summary(&classes)
        }
        Format::Workloads => {
            crate::sim::history::write::workloads_yaml(scenario, &report).map_err(Failure::usage)?
        }
    };
    if let Some(path) = written.plot {
        let svg = crate::sim::plot::svg(scenario, &report).map_err(Failure::usage)?;
        crate::model::write::file(path, svg.as_bytes(), written.force)?;
    }
    if let Some(path) = written.report {
        let html = crate::report::sim(scenario, &report).map_err(Failure::usage)?;
        crate::model::write::file(path, html.as_bytes(), written.force)?;
    }
    Ok(Output::Text(text))
}

/// The outputs of a run of an `engine: kai` scenario or KAI's time-based-fairshare simulator
/// config.
fn kai(
    scenario: &crate::sim::kai::KaiScenario,
    outcome: &crate::sim::kai::KaiOutcome,
    format: Format,
    written: Written<'_>,
) -> Result<String, Failure> {
    let text = match format {
        Format::Json => outcome.to_json_string(),
        Format::Table(_) => outcome.to_table(),
        Format::Csv => outcome.to_csv(),
        Format::KueueSummary => {
            return Err(Failure::usage(
                "--output kueue-summary is Kueue's perf summary; a KAI run writes json, table or csv",
            ));
        }
        Format::Workloads => crate::sim::history::write::kai_objects_yaml(scenario, outcome)
            .map_err(Failure::usage)?,
    };
    if let Some(path) = written.plot {
        let svg = crate::sim::kai::plot::svg(scenario, outcome).map_err(Failure::usage)?;
        crate::model::write::file(path, svg.as_bytes(), written.force)?;
    }
    if let Some(path) = written.report {
        let html = crate::report::kai(scenario, outcome).map_err(Failure::usage)?;
        crate::model::write::file(path, html.as_bytes(), written.force)?;
    }
    Ok(text)
}
