//! The simulator's way in, in the shape of the engines' own: a [`Simulation`] is built once,
//! from a [`Model`] and [`Options`] ([`Simulation::from_model`]) or from a `Simulation`
//! scenario document and the files it names ([`Simulation::from_files`]), and
//! [`simulate`] runs it. The engine is chosen by the options or the document's
//! `spec.engine` (a KAI simulator config is KAI's), never by looking at the text twice.

use std::collections::BTreeMap;
use std::path::Path;

use gpuquota_model::diag::{Diagnostic, Diagnostics, codes};
use gpuquota_model::{Error, Model, Timestamp};

use crate::kai::KaiOutcome;
use crate::kai::scenario::{DEFAULT_SESSION_INTERVAL_MS, KaiScenario, Source, UsageParams};
use crate::progress::RunOptions;
use crate::report::Report;
use crate::scenario::{Engine, INVALID_SCENARIO, ReadFn, Retry, Scenario};

/// The engine a simulation runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Mode {
    /// Kueue's admission engine (`gpuquota-cohort`), driven incrementally.
    Kueue,
    /// Namespace ResourceQuotas only: no queueing, 403 and retry.
    ResourceQuota,
    /// KAI Scheduler's sessions (`gpuquota-rank`).
    Kai,
}

/// How a [`Simulation`] built from a model runs: the fields of a scenario document's `spec`
/// (crate docs), without the files.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Options {
    /// The engine (`spec.engine`).
    pub mode: Mode,
    /// The report's name (`metadata.name`).
    pub name: String,
    /// Virtual time 0 (`spec.start`).
    pub start: Timestamp,
    /// The end, ms after `start` (`spec.end`); `None`: when every workload has finished.
    pub end_ms: Option<i64>,
    /// A readmitted workload keeps the work done (`spec.resume`).
    pub resume: bool,
    /// Kueue: fair sharing forced on or off (`spec.kueue.fairSharing`); `None`: as the
    /// model's `Configuration` says.
    pub fair_sharing: Option<bool>,
    /// Kueue: how long one scheduling cycle takes, ms (`spec.kueue.cycleLatency`).
    pub cycle_latency_ms: i64,
    /// ResourceQuota: how a rejected workload is retried (`spec.resourceQuota.retryInterval`).
    pub retry: Retry,
    /// The bill of the run (`spec.metering`, see [`crate::bill`]).
    pub metering: Option<serde_json::Value>,
    /// KAI: the session interval, ms (`spec.kai.sessionInterval`).
    pub session_interval_ms: i64,
    /// KAI: how long after its session an allocated pod starts, ms (`spec.kai.bindLatency`).
    pub bind_latency_ms: i64,
    /// KAI: the proportion plugin's `kValue` (`spec.kai.kValue`).
    pub k_value: f64,
    /// KAI: time-based fairshare (`spec.kai.usage`); `None`: off.
    pub usage: Option<UsageParams>,
}

impl Options {
    /// Options for `mode` from `start`, every other field at the scenario document's
    /// default (named `simulation`, no end, no resume, fair sharing as configured, no cycle
    /// latency, the Job controller's retry, no bill, a 1 s KAI session, kValue 1, no usage).
    pub fn new(mode: Mode, start: Timestamp) -> Options {
        Options {
            mode,
            name: "simulation".to_owned(),
            start,
            end_ms: None,
            resume: false,
            fair_sharing: None,
            cycle_latency_ms: 0,
            retry: Retry::JobBackoff,
            metering: None,
            session_interval_ms: DEFAULT_SESSION_INTERVAL_MS,
            bind_latency_ms: 0,
            k_value: 1.0,
            usage: None,
        }
    }

    /// Sets [`Options::name`].
    pub fn with_name(mut self, name: impl Into<String>) -> Options {
        self.name = name.into();
        self
    }

    /// Sets [`Options::end_ms`].
    pub fn with_end_ms(mut self, end_ms: Option<i64>) -> Options {
        self.end_ms = end_ms;
        self
    }

    /// Sets [`Options::resume`].
    pub fn with_resume(mut self, resume: bool) -> Options {
        self.resume = resume;
        self
    }

    /// Sets [`Options::fair_sharing`].
    pub fn with_fair_sharing(mut self, on: Option<bool>) -> Options {
        self.fair_sharing = on;
        self
    }

    /// Sets [`Options::cycle_latency_ms`].
    pub fn with_cycle_latency_ms(mut self, ms: i64) -> Options {
        self.cycle_latency_ms = ms;
        self
    }

    /// Sets [`Options::retry`].
    pub fn with_retry(mut self, retry: Retry) -> Options {
        self.retry = retry;
        self
    }

    /// Sets [`Options::metering`].
    pub fn with_metering(mut self, metering: Option<serde_json::Value>) -> Options {
        self.metering = metering;
        self
    }

    /// Sets [`Options::session_interval_ms`].
    pub fn with_session_interval_ms(mut self, ms: i64) -> Options {
        self.session_interval_ms = ms;
        self
    }

    /// Sets [`Options::bind_latency_ms`].
    pub fn with_bind_latency_ms(mut self, ms: i64) -> Options {
        self.bind_latency_ms = ms;
        self
    }

    /// Sets [`Options::k_value`].
    pub fn with_k_value(mut self, k: f64) -> Options {
        self.k_value = k;
        self
    }

    /// Sets [`Options::usage`].
    pub fn with_usage(mut self, usage: Option<UsageParams>) -> Options {
        self.usage = usage;
        self
    }
}

/// A resolved simulation: every object, every workload instance with its arrival and
/// runtime, and the engine's settings, ready for [`simulate`].
#[derive(Debug, Clone)]
pub struct Simulation {
    inner: Inner,
}

#[derive(Debug, Clone)]
enum Inner {
    Kueue(Box<Scenario>),
    Kai(Box<KaiScenario>),
}

impl Simulation {
    /// A simulation of `model` (its Workloads, or under [`Mode::Kai`] its PodGroups and
    /// Pods, with the annotations of the crate docs: arrival, runtime, repeat, class) run
    /// as `options` say.
    ///
    /// # Errors
    /// Every problem at once ([`Error::is_invalid_input`]): a malformed annotation, an end
    /// not after the start, objects of another engine than `options.mode`'s.
    ///
    /// # Complexity
    /// O(objects + instances × log instances), one copy of the model.
    pub fn from_model(model: &Model, options: &Options) -> Result<Simulation, Error> {
        let mut model = model.clone();
        let mut errors = Diagnostics::default();
        let mut warnings = Diagnostics::default();
        if options.end_ms.is_some_and(|e| e <= 0) {
            errors.push(
                Diagnostic::error(INVALID_SCENARIO, "must be after spec.start").field("spec.end"),
            );
        }
        let (start, end_ms) = (options.start, options.end_ms);
        let inner = match options.mode {
            Mode::Kueue | Mode::ResourceQuota => {
                let engine = if options.mode == Mode::Kueue {
                    Engine::Kueue
                } else {
                    Engine::ResourceQuota
                };
                let mut instances = BTreeMap::new();
                crate::scenario::resolve_file_workloads(
                    &mut model,
                    &mut instances,
                    start,
                    end_ms,
                    &mut errors,
                    &mut warnings,
                );
                if let Some(e) = crate::scenario::engine_mismatch(engine, &model) {
                    errors.push(e.field("spec.engine"));
                }
                let mut sc = Scenario {
                    name: options.name.clone(),
                    engine,
                    start,
                    end_ms,
                    fair_sharing: options.fair_sharing,
                    cycle_latency_ms: options.cycle_latency_ms.max(0),
                    resume: options.resume,
                    retry: options.retry,
                    metering: options.metering.clone(),
                    model,
                    instances,
                    warnings,
                    timeline: crate::timeline::Timeline::default(),
                    recorded: Vec::new(),
                };
                crate::scenario::apply_fair_sharing(&mut sc);
                Inner::Kueue(Box::new(sc))
            }
            Mode::Kai => {
                let jobs = crate::kai::scenario::resolve_jobs(
                    &mut model,
                    start,
                    end_ms,
                    &mut errors,
                    &mut warnings,
                );
                if let Some(e) = crate::kai::scenario::engine_mismatch(&model, &jobs) {
                    errors.push(e.field("spec.engine"));
                }
                Inner::Kai(Box::new(KaiScenario {
                    name: options.name.clone(),
                    source: Source::Simulation,
                    start,
                    end_ms,
                    session_interval_ms: options.session_interval_ms.max(1),
                    bind_latency_ms: options.bind_latency_ms.max(0),
                    resume: options.resume,
                    k_value: crate::kai::scenario::k_nanos(options.k_value),
                    usage: options.usage.clone(),
                    model,
                    jobs,
                    queue_order: Vec::new(),
                    warnings,
                    metering: options.metering.clone(),
                    timeline: crate::timeline::Timeline::default(),
                    recorded: Vec::new(),
                }))
            }
        };
        if errors.has_errors() {
            let warnings = match &inner {
                Inner::Kueue(sc) => sc.warnings.clone(),
                Inner::Kai(sc) => sc.warnings.clone(),
            };
            return Err(error(crate::scenario::failure(errors, warnings)));
        }
        Ok(Simulation { inner })
    }

    /// Reads the scenario document at `path` (`-`: standard input, the files it names then
    /// relative to the current directory) and every file it names, all through the model's
    /// bounded reader (`gpuquota_model::source::read_text`): a `Simulation` (its
    /// `spec.engine` picks the engine), Kueue's perf-test generator config or KAI's
    /// time-based-fairshare simulator config (crate docs). The document is read once and
    /// parsed once.
    ///
    /// # Errors
    /// Every problem found: a file that cannot be read ([`Error::is_io`]), malformed YAML,
    /// bad fields, import errors ([`Error::is_invalid_input`]).
    ///
    /// # Complexity
    /// O(input size + instances × log instances).
    pub fn from_files(path: &Path) -> Result<Simulation, Error> {
        crate::count::bump(|c| &mut c.scenario_reads);
        let text =
            gpuquota_model::source::read_text(path).map_err(|d| error(Diagnostics(vec![d])))?;
        let (name, dir, stem) = crate::scenario::text_source(path);
        from_text(&name, &text, &stem, &|rel: &str| {
            crate::scenario::read_beside(&dir, rel)
        })
        .map_err(error)
    }

    /// The report's name.
    pub fn name(&self) -> &str {
        match &self.inner {
            Inner::Kueue(sc) => &sc.name,
            Inner::Kai(sc) => &sc.name,
        }
    }

    /// The engine.
    pub fn mode(&self) -> Mode {
        match &self.inner {
            Inner::Kueue(sc) if sc.engine == Engine::Kueue => Mode::Kueue,
            Inner::Kueue(_) => Mode::ResourceQuota,
            Inner::Kai(_) => Mode::Kai,
        }
    }

    /// The end, ms after the start (`None`: when nothing is left to do).
    pub fn end_ms(&self) -> Option<i64> {
        match &self.inner {
            Inner::Kueue(sc) => sc.end_ms,
            Inner::Kai(sc) => sc.end_ms,
        }
    }

    /// Every object, every workload instance included.
    pub fn model(&self) -> &Model {
        match &self.inner {
            Inner::Kueue(sc) => &sc.model,
            Inner::Kai(sc) => &sc.model,
        }
    }

    /// The resolved Kueue or ResourceQuota scenario (`None` under KAI).
    pub fn kueue(&self) -> Option<&Scenario> {
        match &self.inner {
            Inner::Kueue(sc) => Some(sc),
            Inner::Kai(_) => None,
        }
    }

    /// The resolved KAI scenario (`None` under Kueue and ResourceQuota).
    pub fn kai(&self) -> Option<&KaiScenario> {
        match &self.inner {
            Inner::Kai(sc) => Some(sc),
            Inner::Kueue(_) => None,
        }
    }

    /// The resolved Kueue or ResourceQuota scenario, by value.
    pub(crate) fn into_kueue(self) -> Option<Scenario> {
        match self.inner {
            Inner::Kueue(sc) => Some(*sc),
            Inner::Kai(_) => None,
        }
    }

    /// The resolved KAI scenario, by value.
    pub(crate) fn into_kai(self) -> Option<KaiScenario> {
        match self.inner {
            Inner::Kai(sc) => Some(*sc),
            Inner::Kueue(_) => None,
        }
    }

    /// The Kueue or ResourceQuota scenario, to change before a run (`None` under KAI).
    pub fn kueue_mut(&mut self) -> Option<&mut Scenario> {
        match &mut self.inner {
            Inner::Kueue(sc) => Some(sc),
            Inner::Kai(_) => None,
        }
    }
}

/// Parses a scenario document once and resolves it with `read` loading the files it names:
/// KAI's when it is one (`spec.engine: kai`, or KAI's simulator config), else Kueue's or
/// ResourceQuota's.
pub(crate) fn from_text(
    name: &str,
    text: &str,
    stem: &str,
    read: &ReadFn<'_>,
) -> Result<Simulation, Diagnostics> {
    let doc = crate::scenario::parse_document(name, text)?;
    let inner = if crate::scenario::Format::of(&doc).is_kai() {
        Inner::Kai(Box::new(crate::kai::scenario::from_doc(
            name, stem, &doc, read,
        )?))
    } else {
        Inner::Kueue(Box::new(crate::scenario::from_doc(name, &doc, stem, read)?))
    };
    Ok(Simulation { inner })
}

/// The error of diagnostics: a file that cannot be read makes it an I/O error, anything else
/// an invalid input (chosen by the diagnostics' codes).
pub(crate) fn error(d: Diagnostics) -> Error {
    if d.iter().any(|x| x.code == codes::READ_FAILED) {
        Error::io(d)
    } else {
        Error::invalid_input(d)
    }
}

/// What a run produced: the report of the engine's mode.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum SimulationReport {
    /// A Kueue or ResourceQuota run.
    Kueue(Box<Report>),
    /// A KAI run.
    Kai(Box<KaiOutcome>),
}

impl SimulationReport {
    /// The Kueue or ResourceQuota report (`None` for a KAI run).
    pub fn kueue(&self) -> Option<&Report> {
        match self {
            SimulationReport::Kueue(r) => Some(r),
            SimulationReport::Kai(_) => None,
        }
    }

    /// The KAI report (`None` for a Kueue or ResourceQuota run).
    pub fn kai(&self) -> Option<&KaiOutcome> {
        match self {
            SimulationReport::Kai(r) => Some(r),
            SimulationReport::Kueue(_) => None,
        }
    }

    /// The Kueue or ResourceQuota report, by value.
    pub fn into_kueue(self) -> Option<Report> {
        match self {
            SimulationReport::Kueue(r) => Some(*r),
            SimulationReport::Kai(_) => None,
        }
    }

    /// The KAI report, by value.
    pub fn into_kai(self) -> Option<KaiOutcome> {
        match self {
            SimulationReport::Kai(r) => Some(*r),
            SimulationReport::Kueue(_) => None,
        }
    }

    /// The run's warnings, sorted (an error among them under `--strict` semantics is the
    /// caller's to decide).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match self {
            SimulationReport::Kueue(r) => &r.diagnostics.0,
            SimulationReport::Kai(r) => &r.warnings,
        }
    }

    /// The JSON document `gpuquota sim` prints ([`crate::SimReport`] or [`crate::kai::KaiReport`]).
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            SimulationReport::Kueue(r) => r.to_json(),
            SimulationReport::Kai(r) => r.to_json(),
        }
    }

    /// [`SimulationReport::to_json`] pretty printed, with a trailing newline.
    pub fn to_json_string(&self) -> String {
        match self {
            SimulationReport::Kueue(r) => r.to_json_string(),
            SimulationReport::Kai(r) => r.to_json_string(),
        }
    }

    /// The CSV of `--output csv` (one row per run and flavor-resource; KAI's simulator CSV).
    pub fn to_csv(&self) -> String {
        match self {
            SimulationReport::Kueue(r) => r.to_csv(),
            SimulationReport::Kai(r) => r.to_csv(),
        }
    }

    /// The table of `--output table`.
    pub fn to_table(&self) -> String {
        match self {
            SimulationReport::Kueue(r) => r.to_table(),
            SimulationReport::Kai(r) => r.to_table(),
        }
    }
}

/// Runs a simulation.
///
/// # Errors
/// The objects the engine refuses (its own diagnostics and codes), or an invalid budget
/// ([`Error::is_invalid_input`]).
///
/// # Complexity
/// The engine input's build once (Kueue's `Input::from_model`, KAI's
/// `gpuquota_rank::Input::from_model`) plus the kernel's loop over the engine's driver (crate docs,
/// "Kernel and drivers").
pub fn simulate(simulation: &Simulation) -> Result<SimulationReport, Error> {
    simulate_with_options(simulation, &RunOptions::default())
}

/// [`simulate`], calling `options.progress` as the run advances ([`crate::progress`]);
/// the report is the same.
///
/// # Errors
/// As [`simulate`].
pub fn simulate_with_options(
    simulation: &Simulation,
    options: &RunOptions<'_>,
) -> Result<SimulationReport, Error> {
    match &simulation.inner {
        Inner::Kueue(sc) => crate::simulate_scenario(sc, options)
            .map(|r| SimulationReport::Kueue(Box::new(r)))
            .map_err(error),
        Inner::Kai(sc) => crate::kai::simulate_with_options(sc, options)
            .map(|r| SimulationReport::Kai(Box::new(r))),
    }
}
