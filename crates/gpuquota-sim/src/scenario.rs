//! The scenario: a `Simulation` document (or Kueue's perf-test generator config) resolved into
//! one [`Model`] holding every workload instance the run will submit, with arrival times and
//! runtimes in virtual milliseconds.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gpuquota_model::diag::{Code, Diagnostic, Diagnostics, codes};
use gpuquota_model::kueue::Workload;
use gpuquota_model::{Importer, Model, Timestamp};
use serde::Deserialize;

pub mod kai;
mod perf;

pub use perf::PerfConfig;
use perf::perf_scenario;

/// Workload annotation (or label) delaying its `PodsReady` after all its pods run, under
/// Kueue's `waitForPodsReady`: a Go duration (`90s`) or `never`.
pub const PODS_READY_AFTER_ANNOTATION: &str = "gpuquota.dev/pods-ready-after";

/// `spec.runtime` annotation: a workload's runtime (Go duration).
pub const RUNTIME_ANNOTATION: &str = "gpuquota.dev/runtime";
/// The annotation that states how long a Kueue workload's pods take to go once it is
/// evicted (a Go duration); it overrides the pod templates' `terminationGracePeriodSeconds`
/// (see the crate docs, "Evictions that take time").
pub const EVICTION_TIME_ANNOTATION: &str = "gpuquota.dev/eviction-time";
/// `gpuquota.dev/repeat` annotation: resubmit a fresh copy every period (Go duration).
pub const REPEAT_ANNOTATION: &str = "gpuquota.dev/repeat";
/// `gpuquota.dev/class` label or annotation: the workload's class in the report.
pub const CLASS_KEY: &str = "gpuquota.dev/class";
/// Kueue's perf runner label holding the runtime in ms (`runner/generator`).
pub const PERF_RUNTIME_LABEL: &str = "kueue.x-k8s.io/performance-scheduler-running-ms";
/// Kueue's perf runner class label (`runner/generator`).
pub const PERF_CLASS_LABEL: &str = "kueue.x-k8s.io/performance-scheduler-class";

/// A scenario field is malformed (bad duration, timestamp, engine, missing file …).
pub const INVALID_SCENARIO: Code = Code::new("invalid-scenario");
/// A scenario feature is accepted but not simulated (KAI mode, TAS, DRA, …).
pub const NOT_SIMULATED: Code = Code::new("not-simulated");

/// The engine that decides admissions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum Engine {
    /// Kueue's admission engine (`gpuquota-cohort`).
    Kueue,
    /// Namespaces with ResourceQuota only: no queueing, 403 and retry.
    ResourceQuota,
}

impl Engine {
    /// The name in the scenario and the report.
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Kueue => "kueue",
            Engine::ResourceQuota => "resourcequota",
        }
    }
}

/// How a rejected workload is retried by its controller (`resourcequota` engine).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// Kubernetes' Job controller: the first retry after 1 s, doubling up to 60 s
    /// (`DefaultJobApiBackOff`, `MaxJobApiBackOff`).
    JobBackoff,
    /// A fixed interval (ms).
    Fixed(i64),
}

impl Retry {
    /// The delay before retry number `attempt` (1-based), ms.
    pub fn delay_ms(self, attempt: u32) -> i64 {
        match self {
            Retry::Fixed(ms) => ms,
            Retry::JobBackoff => {
                let exp = attempt.saturating_sub(1).min(16);
                (1000i64 << exp).min(60_000)
            }
        }
    }
}

/// One workload instance the simulation submits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    /// `namespace/name` (a repeat copy is `name-k`).
    pub key: String,
    /// Class (report grouping; `""` without one).
    pub class: String,
    /// Creation (arrival) time, ms since start (may be negative for objects created before).
    pub created_ms: i64,
    /// Runtime in ms; `None` runs until the end.
    pub runtime_ms: Option<i64>,
    /// The wait between arrival and start the source recorded, ms (traces that record
    /// starts: Helios, AcmeTrace); `None` otherwise. Not used by the run.
    pub recorded_wait_ms: Option<i64>,
}

/// A resolved scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// `metadata.name` (the file stem for a perf-generator config).
    pub name: String,
    /// The engine.
    pub engine: Engine,
    /// `spec.start`.
    pub start: Timestamp,
    /// `spec.end` as ms since start.
    pub end_ms: Option<i64>,
    /// `spec.kueue.fairSharing` (`None`: from a Kueue Configuration in the cluster files).
    pub fair_sharing: Option<bool>,
    /// `spec.kueue.cycleLatency`, ms.
    pub cycle_latency_ms: i64,
    /// `spec.resume`.
    pub resume: bool,
    /// `spec.resourceQuota.retryInterval`.
    pub retry: Retry,
    /// `spec.metering` as written ([`crate::bill`]).
    pub metering: Option<serde_json::Value>,
    /// Every object, with every workload instance (repeat copies included).
    pub model: Model,
    /// The instances by key.
    pub instances: BTreeMap<String, Instance>,
    /// Import and scenario warnings.
    pub warnings: Diagnostics,
    /// `spec.timeline`, read and checked ([`crate::timeline`]); empty without one.
    pub timeline: crate::timeline::Timeline,
    /// The recorded histories of `history:` sources, by key ([`crate::history`]); the
    /// report's `fidelity` compares the run with them.
    pub recorded: Vec<crate::history::Recorded>,
}

/// A `Simulation` scenario file for the `kueue` and `resourcequota` engines, as it is read
/// (format in the crate docs); `gpuquota schema scenario` prints its JSON Schema. Unknown
/// fields are warnings of `gpuquota sim`, so the schema leaves objects open.
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["kind"])))]
pub struct SimulationDoc {
    /// `gpuquota.dev/v1alpha1`.
    #[serde(default)]
    api_version: String,
    /// `Simulation`.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(extend("const" = "Simulation")))]
    kind: String,
    #[serde(default)]
    metadata: Meta,
    #[serde(default)]
    spec: Spec,
}

#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct Meta {
    #[serde(default)]
    name: String,
}

#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
struct Spec {
    /// `kueue` (default) or `resourcequota`.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "Option<Engine>"))]
    engine: Option<String>,
    /// The manifest files (relative to the scenario) with the platform's objects.
    #[serde(default)]
    cluster: Vec<String>,
    #[serde(default)]
    start: Option<String>,
    /// The end of the run (RFC 3339). A `gpuquota.dev/repeat` period repeats until it: the
    /// workloads of the scenario with every repeat copy and trace row may number at most
    /// 500,000, and the periods of its Budgets up to the end at most 1,000,000; a scenario
    /// that would make more is refused before the run, naming the number.
    #[serde(default)]
    end: Option<String>,
    #[serde(default)]
    kueue: Option<KueueOpts>,
    #[serde(default)]
    resume: Option<bool>,
    #[serde(default)]
    resource_quota: Option<RqOpts>,
    #[serde(default)]
    workloads: Vec<WorkloadSource>,
    /// Read by [`crate::bill`] (the `meter` document without `window` and `records`), plus
    /// `chargeLostWork` (default `true`; `false` books the hours of preempted runs to a
    /// `lost-work` line instead of the department that held the cards).
    #[serde(default)]
    metering: Option<serde_json::Value>,
    /// `clusterQueues.CQ[.FLAVOR[.RESOURCE]].FIELD` → value, applied to the cluster files'
    /// ClusterQueues after they are read (the grammar of `sim sweep --set`; `none` unsets a
    /// limit).
    #[serde(default)]
    set: BTreeMap<String, Scalar>,
    /// The platform's changes while the run goes on ([`crate::timeline`]): each event's
    /// `at` (RFC 3339, or a Go duration from `spec.start`), manifests to `apply`, merge
    /// patches (`patch`), deletions (`delete`), node events (`nodes`) and a MIG layout
    /// change (`migLayout`).
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<Vec<crate::timeline::EventDoc>>")
    )]
    timeline: Option<serde_json::Value>,
}

#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
struct KueueOpts {
    #[serde(default)]
    fair_sharing: Option<bool>,
    #[serde(default)]
    cycle_latency: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
struct RqOpts {
    #[serde(default)]
    retry_interval: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct WorkloadSource {
    #[serde(default)]
    file: Option<String>,
    #[serde(default)]
    generator: Option<Generator>,
    #[serde(default)]
    trace: Option<crate::trace::TraceSource>,
    #[serde(default)]
    history: Option<crate::history::HistorySource>,
}

#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
struct Generator {
    namespace: String,
    local_queue: String,
    #[serde(default)]
    resource: Option<String>,
    #[serde(default)]
    workloads_sets: Vec<WorkloadsSet>,
}

/// A string the YAML may write as a number (`nominalQuota: 20`), as `sigs.k8s.io/yaml`
/// converts scalars for a string field.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
enum Scalar {
    S(String),
    I(i64),
    F(f64),
}

impl Scalar {
    fn text(&self) -> String {
        match self {
            Scalar::S(s) => s.clone(),
            Scalar::I(i) => i.to_string(),
            Scalar::F(f) => f.to_string(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
struct WorkloadsSet {
    #[serde(default)]
    count: u32,
    #[serde(default)]
    creation_interval_ms: u64,
    #[serde(default)]
    workloads: Vec<WorkloadTemplate>,
}

#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
struct WorkloadTemplate {
    #[serde(default)]
    class_name: String,
    #[serde(default)]
    runtime_ms: u64,
    #[serde(default)]
    priority: i32,
    request: Scalar,
    #[serde(default)]
    pod_count: Option<u32>,
    #[serde(default)]
    tas_constraint: Option<String>,
    #[serde(default)]
    tas_level: Option<String>,
    #[serde(default)]
    slice_size: Option<i32>,
    #[serde(default)]
    devices: Option<i64>,
}

fn err(msg: impl Into<String>) -> Diagnostic {
    Diagnostic::error(INVALID_SCENARIO, msg)
}

/// A Go duration as whole milliseconds (fractions of a millisecond round up).
///
/// ```
/// assert_eq!(gpuquota_sim::scenario::duration_ms("4h30m"), Some(16_200_000));
/// assert_eq!(gpuquota_sim::scenario::duration_ms("200ms"), Some(200));
/// assert_eq!(gpuquota_sim::scenario::duration_ms("soon"), None);
/// // beyond i64 milliseconds: not a duration, never an overflow
/// assert_eq!(gpuquota_sim::scenario::duration_ms("170141183460469231731687303715884105727ns"), None);
/// ```
pub fn duration_ms(s: &str) -> Option<i64> {
    let ns = gpuquota_model::kai::parse_go_duration(s)?;
    if ns < 0 {
        return None;
    }
    let ms = ns.div_euclid(1_000_000) + i128::from(ns.rem_euclid(1_000_000) != 0);
    i64::try_from(ms).ok()
}

/// Milliseconds from `a` to `b` (floor), saturating.
pub fn ms_between(a: Timestamp, b: Timestamp) -> i64 {
    let d = b.unix_nanos() - a.unix_nanos();
    i64::try_from(d.div_euclid(1_000_000)).unwrap_or(if d < 0 { i64::MIN } else { i64::MAX })
}

/// `start` plus `ms` milliseconds.
pub fn at_ms(start: Timestamp, ms: i64) -> Timestamp {
    let ns = start.unix_nanos() + i128::from(ms) * 1_000_000;
    let secs = ns.div_euclid(1_000_000_000);
    let nanos = ns.rem_euclid(1_000_000_000) as u32;
    Timestamp::from_unix(i64::try_from(secs).unwrap_or(i64::MAX), nanos).unwrap_or(start)
}

/// A YAML reader error of the file `name` in the user's words (the parser's advice to its own
/// callers and its snippet left out).
pub(crate) fn yaml_problem(name: &str, e: &serde_saphyr::Error) -> Diagnostics {
    let (code, message) = gpuquota_model::import::yaml_error(e);
    Diagnostics(vec![Diagnostic::error(code, message).source(name)])
}

/// Deserializes a document read as a tree, each unknown field a warning (shared by the
/// Kueue and KAI readers).
///
/// # Errors
/// A type error, with the parser's message.
pub(crate) fn from_value<T: serde::de::DeserializeOwned>(
    name: &str,
    value: &serde_json::Value,
    warnings: &mut Diagnostics,
) -> Result<T, Diagnostics> {
    let mut unknown = Vec::new();
    let doc: T = serde_ignored::deserialize(value, |p| unknown.push(p.to_string())).map_err(
        |e: serde_json::Error| {
            Diagnostics(vec![
                Diagnostic::error(codes::INVALID_TYPE, e.to_string()).source(name),
            ])
        },
    )?;
    for u in unknown {
        warnings.push(
            Diagnostic::warning(codes::UNKNOWN_FIELD, "unknown field")
                .source(name)
                .field(u),
        );
    }
    Ok(doc)
}

/// The display name, directory and stem of a scenario read from `path` (`-`: standard
/// input, stem `stdin`, files it names relative to the current directory); shared by the
/// Kueue and KAI readers' `load_text`.
pub(crate) fn text_source(path: &Path) -> (String, std::path::PathBuf, String) {
    let name = gpuquota_model::source::display_name(path);
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let stem = if path.as_os_str() == "-" {
        "stdin".to_owned()
    } else {
        path.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    (name, dir, stem)
}

/// Reads `rel`, a file a scenario names, beside the scenario (`dir`): (its display name, text).
pub(crate) fn read_beside(dir: &Path, rel: &str) -> Result<(String, String), Diagnostic> {
    let p = dir.join(rel);
    let shown = gpuquota_model::source::display_name(&p);
    gpuquota_model::source::read_text(&p).map(|t| (shown, t))
}

/// The shared resolver of a `Simulation`'s `spec.start` (required, RFC 3339) and
/// `spec.end` (optional, after the start) for both engines: the start, and the end in ms
/// since the start. Each problem is pushed to `errors` naming its field (the start is the
/// epoch then).
pub(crate) fn time_window(
    name: &str,
    start: Option<&str>,
    end: Option<&str>,
    errors: &mut Diagnostics,
) -> (Timestamp, Option<i64>) {
    let start = match start {
        None => {
            errors.push(
                err("required: the simulation's start (RFC 3339)")
                    .source(name)
                    .field("spec.start"),
            );
            Timestamp::EPOCH
        }
        Some(s) => Timestamp::parse(s).unwrap_or_else(|e| {
            errors.push(err(e.to_string()).source(name).field("spec.start"));
            Timestamp::EPOCH
        }),
    };
    let end_ms = end.and_then(|s| match Timestamp::parse(s) {
        Ok(t) => {
            let ms = ms_between(start, t);
            if ms <= 0 {
                errors.push(
                    err("must be after spec.start")
                        .source(name)
                        .field("spec.end"),
                );
            }
            Some(ms)
        }
        Err(e) => {
            errors.push(err(e.to_string()).source(name).field("spec.end"));
            None
        }
    });
    (start, end_ms)
}

/// A file reader of the scenario readers: a path relative to the scenario to (display name,
/// text).
pub(crate) type ReadFn<'a> = dyn Fn(&str) -> Result<(String, String), Diagnostic> + 'a;

/// Parses a Kueue or ResourceQuota scenario from text (once); `read` loads the files it
/// names (relative paths).
///
/// # Errors
/// Every problem found (unreadable files, malformed YAML, bad fields, import errors).
pub(crate) fn from_str(
    name: &str,
    text: &str,
    stem: &str,
    read: &ReadFn<'_>,
) -> Result<Scenario, Diagnostics> {
    let probe = parse_document(name, text)?;
    from_doc(name, &probe, stem, read)
}

/// A scenario document's text parsed into a value: the one parse of a scenario (counted by
/// the tests that prove a run parses its scenario once).
///
/// # Errors
/// Malformed YAML, named after `name`.
pub(crate) fn parse_document(name: &str, text: &str) -> Result<serde_json::Value, Diagnostics> {
    crate::count::bump(|c| &mut c.scenario_parses);
    serde_saphyr::from_str(text).map_err(|e| yaml_problem(name, &e))
}

/// Resolves a parsed scenario document: a `Simulation`, or Kueue's perf-test generator
/// config (a top-level `cohorts` list); `read` loads the files it names.
///
/// # Errors
/// As [`from_str`].
///
/// # Complexity
/// O(input size + instances × log instances).
pub(crate) fn from_doc(
    name: &str,
    probe: &serde_json::Value,
    stem: &str,
    read: &ReadFn<'_>,
) -> Result<Scenario, Diagnostics> {
    let mut warnings = Diagnostics::default();
    if probe.get("cohorts").is_some() && probe.get("kind").is_none() {
        let cfg: PerfConfig = from_value(name, probe, &mut warnings)?;
        return perf_scenario(stem, cfg, warnings);
    }
    let doc: SimulationDoc = from_value(name, probe, &mut warnings)?;
    let mut errors = Diagnostics::default();
    check_header(
        name,
        &doc.api_version,
        &doc.kind,
        "Simulation (or a Kueue perf generator config with `cohorts`)",
        &mut warnings,
        &mut errors,
    );
    let spec = doc.spec;
    let engine = engine_of(name, spec.engine.as_deref(), &mut errors);
    let (start, end_ms) = time_window(
        name,
        spec.start.as_deref(),
        spec.end.as_deref(),
        &mut errors,
    );
    let kopts = spec.kueue.unwrap_or_default();
    let cycle_latency_ms = cycle_latency_ms(name, kopts.cycle_latency.as_deref(), &mut errors);
    let retry = retry_of(
        name,
        spec.resource_quota.and_then(|r| r.retry_interval),
        &mut errors,
    );
    let mut gathered = Gathered::default();
    gathered.cluster(&spec.cluster, read, &mut errors);
    let mut generated: Vec<(Workload, Instance)> = Vec::new();
    let mut recorded = Vec::new();
    for (i, w) in spec.workloads.iter().enumerate() {
        if let Some(t) = w
            .trace
            .as_ref()
            .filter(|_| w.file.is_none() && w.generator.is_none())
        {
            gathered.trace(name, i, t, read, &mut errors);
            continue;
        }
        if let Some(h) = w
            .history
            .as_ref()
            .filter(|_| w.file.is_none() && w.generator.is_none() && w.trace.is_none())
        {
            crate::history::gather(
                name,
                (i, false),
                h,
                read,
                (&mut gathered.files, &mut recorded),
                &mut errors,
                &mut warnings,
            );
            continue;
        }
        match (&w.file, &w.generator) {
            (Some(f), None) if w.trace.is_none() => gathered.file(i, f, read, &mut errors),
            (None, Some(g)) if w.trace.is_none() => {
                generate(name, i, g, start, &mut generated, &mut errors);
            }
            _ => errors.push(
                err("each entry needs exactly one of file, generator, trace or history")
                    .source(name)
                    .field(format!("spec.workloads[{i}]")),
            ),
        }
    }
    if errors.has_errors() {
        return Err(failure(errors, warnings));
    }
    let mut model = gathered.import(&mut warnings)?;
    for (path, value) in &spec.set {
        if let Err(e) = crate::sweep::set_cluster_queue(&mut model, path, &value.text()) {
            errors.push(err(e).source(name).field(format!("spec.set.{path}")));
        }
    }
    let counted = model.workloads.len() as u64 + generated.len() as u64;
    check_trace_rows(name, counted, &gathered.traces, &mut errors);
    if errors.has_errors() {
        return Err(failure(errors, warnings));
    }
    let mut instances = BTreeMap::new();
    for (w, inst) in generated {
        model.workloads.insert(inst.key.clone(), w);
        instances.insert(inst.key.clone(), inst);
    }
    for (field, p) in gathered.traces {
        crate::trace::apply(
            p,
            &field,
            engine == Engine::Kueue,
            (start, end_ms),
            &mut model,
            &mut instances,
            &mut warnings,
        );
    }
    resolve_file_workloads(
        &mut model,
        &mut instances,
        start,
        end_ms,
        &mut errors,
        &mut warnings,
    );
    if let Some(e) = engine_mismatch(engine, &model) {
        errors.push(e.source(name).field("spec.engine"));
    }
    if errors.has_errors() {
        return Err(failure(errors, warnings));
    }
    let mut timeline = match spec.timeline.as_ref() {
        None => crate::timeline::Timeline::default(),
        Some(v) => match crate::timeline::Timeline::parse(name, v, start, end_ms, &model, read) {
            Ok(t) => t,
            Err(e) => return Err(failure(e, warnings)),
        },
    };
    warnings.extend(std::mem::take(&mut timeline.warnings).0);
    let mut sc = Scenario {
        name: if doc.metadata.name.is_empty() {
            stem.to_owned()
        } else {
            doc.metadata.name
        },
        engine,
        start,
        end_ms,
        fair_sharing: kopts.fair_sharing,
        cycle_latency_ms,
        resume: spec.resume.unwrap_or(false),
        retry,
        metering: spec.metering.clone(),
        model,
        instances,
        warnings,
        timeline,
        recorded,
    };
    recorded_sorted(&mut sc.recorded);
    apply_fair_sharing(&mut sc);
    Ok(sc)
}

/// Several `history:` sources' records in one key order.
fn recorded_sorted(r: &mut [crate::history::Recorded]) {
    r.sort_by(|a, b| a.key.cmp(&b.key));
}

/// `spec.kueue.fairSharing: false` written into the model's `Configuration`
/// (`fairSharing.enable: false`, which Kueue honours in both API versions), so that the
/// engine's entry point reads the forced setting from the model it is given; `true` is
/// passed to it as its own option.
pub(crate) fn apply_fair_sharing(sc: &mut Scenario) {
    if sc.fair_sharing != Some(false) {
        return;
    }
    if let Some(fs) = sc
        .model
        .configuration
        .as_mut()
        .and_then(|c| c.fair_sharing.as_mut())
    {
        fs.enable = Some(false);
    }
}

/// The `apiVersion` and `kind` checks of a `Simulation` document, shared by the Kueue and
/// KAI readers: another API version is a warning, another kind an error; `expected` names
/// the kinds the reader accepts.
pub(crate) fn check_header(
    name: &str,
    api_version: &str,
    kind: &str,
    expected: &str,
    warnings: &mut Diagnostics,
    errors: &mut Diagnostics,
) {
    if api_version != "gpuquota.dev/v1alpha1" {
        warnings.push(
            Diagnostic::warning(
                codes::UNKNOWN_API_VERSION,
                format!("expected apiVersion gpuquota.dev/v1alpha1, got {api_version:?}"),
            )
            .source(name)
            .field("apiVersion"),
        );
    }
    if kind != "Simulation" {
        errors.push(
            Diagnostic::error(
                codes::UNKNOWN_KIND,
                format!("expected kind {expected}, got {kind:?}"),
            )
            .source(name)
            .field("kind"),
        );
    }
}

/// A reader's failure: the errors, then the warnings, sorted.
pub(crate) fn failure(mut errors: Diagnostics, warnings: Diagnostics) -> Diagnostics {
    errors.extend(warnings.0);
    errors.sort();
    errors
}

/// The files and traces a `Simulation` names, read and prepared; shared by the Kueue and
/// KAI readers, so both resolve `spec.cluster`, `spec.workloads[].file` and
/// `spec.workloads[].trace` the same way.
#[derive(Default)]
pub(crate) struct Gathered {
    /// (display name, text) of every manifest file, in order.
    pub(crate) files: Vec<(String, String)>,
    /// (field, prepared trace) of every trace entry, in order.
    pub(crate) traces: Vec<(String, crate::trace::Prepared)>,
}

impl Gathered {
    /// Reads the `spec.cluster` files; each one that cannot be read is an error at its index.
    pub(crate) fn cluster(
        &mut self,
        cluster: &[String],
        read: &ReadFn<'_>,
        errors: &mut Diagnostics,
    ) {
        for (i, f) in cluster.iter().enumerate() {
            match read(f) {
                Ok(t) => self.files.push(t),
                Err(d) => errors.push(d.field(format!("spec.cluster[{i}]"))),
            }
        }
    }

    /// Reads `spec.workloads[i].file`.
    pub(crate) fn file(&mut self, i: usize, f: &str, read: &ReadFn<'_>, errors: &mut Diagnostics) {
        match read(f) {
            Ok(t) => self.files.push(t),
            Err(d) => errors.push(d.field(format!("spec.workloads[{i}].file"))),
        }
    }

    /// Prepares `spec.workloads[i].trace`; each problem is an error under that field.
    pub(crate) fn trace(
        &mut self,
        name: &str,
        i: usize,
        t: &crate::trace::TraceSource,
        read: &ReadFn<'_>,
        errors: &mut Diagnostics,
    ) {
        let field = format!("spec.workloads[{i}].trace");
        match crate::trace::prepare(t, read) {
            Ok(p) => self.traces.push((field, p)),
            Err(crate::trace::Failure::Fields(es)) => {
                for (f, m) in es {
                    errors.push(err(m).source(name).field(format!("{field}.{f}")));
                }
            }
            // a trace file's own problem, under its name
            Err(crate::trace::Failure::File(f, d)) => {
                errors.push(d.field(format!("{field}.{f}")));
            }
        }
    }

    /// Imports the files; their warnings join `warnings`.
    ///
    /// # Errors
    /// The import's problems, already diagnostics with their source, object and field.
    pub(crate) fn import(&self, warnings: &mut Diagnostics) -> Result<Model, Diagnostics> {
        let mut importer = Importer::new();
        for (n, t) in &self.files {
            importer.add_str(n, t);
        }
        let imported = importer.finish().map_err(|e| Diagnostics(e.0))?;
        warnings.extend(imported.warnings);
        Ok(imported.model)
    }
}

/// What the files hold, for the messages of an engine over another engine's objects:
/// `3 ClusterQueues, 2 Workloads` (the non-zero counts of the kinds the engines read).
pub(crate) fn holdings(model: &Model) -> String {
    let counts = [
        (model.cluster_queues.len(), "ClusterQueue"),
        (model.local_queues.len(), "LocalQueue"),
        (model.workloads.len(), "Workload"),
        (model.resource_quotas.len(), "ResourceQuota"),
        (model.queues.len(), "Queue"),
        (model.pod_groups.len(), "PodGroup"),
        (model.pods.len(), "Pod"),
        (model.nodes.len(), "Node"),
    ];
    let parts: Vec<String> = counts
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, k)| format!("{n} {k}{}", if *n == 1 { "" } else { "s" }))
        .collect();
    if parts.is_empty() {
        "nothing".to_owned()
    } else {
        parts.join(", ")
    }
}

/// An error when the objects are another engine's: `kueue` without a ClusterQueue, or
/// `resourcequota` without a Workload, over files holding KAI Queues or PodGroups (every
/// workload would be dropped and the run would be empty).
pub(crate) fn engine_mismatch(engine: Engine, model: &Model) -> Option<Diagnostic> {
    let kai = !model.queues.is_empty() || !model.pod_groups.is_empty();
    let msg = match engine {
        Engine::Kueue if kai && model.cluster_queues.is_empty() => format!(
            "engine kueue needs Kueue ClusterQueues, LocalQueues and Workloads (or jobs queued to them); the files hold {} and no ClusterQueue (KAI Queues and PodGroups are simulated with spec.engine: kai)",
            holdings(model)
        ),
        Engine::ResourceQuota if kai && model.workloads.is_empty() => format!(
            "engine resourcequota needs Kueue Workloads (or jobs queued to a LocalQueue) under namespace ResourceQuotas; the files hold {} and no Workload (KAI Queues and PodGroups are simulated with spec.engine: kai)",
            holdings(model)
        ),
        _ => return None,
    };
    Some(err(msg))
}

/// The limit on a scenario's workloads ([`MAX_INSTANCES`]) over its trace rows: `counted`
/// workloads come from the files and generators, then each trace's usable rows; the trace
/// that goes past the limit is an error naming the number, before any row becomes a workload.
pub(crate) fn check_trace_rows(
    name: &str,
    counted: u64,
    traces: &[(String, crate::trace::Prepared)],
    errors: &mut Diagnostics,
) {
    let mut total = counted;
    for (field, p) in traces {
        let rows = p.loaded.jobs.len() as u64;
        total = total.saturating_add(rows);
        if total > instance_limit() {
            errors.push(
                err(format!(
                    "{rows} trace rows make {total} workloads in all: more than the limit of {} \
                     (a guard against exhausting memory); cut the trace or simulate part of it",
                    instance_limit()
                ))
                .source(name)
                .field(format!("{field}.file")),
            );
            return;
        }
    }
}

/// `spec.engine`: `kueue` (the default) or `resourcequota`; `kai` is read elsewhere.
fn engine_of(name: &str, engine: Option<&str>, errors: &mut Diagnostics) -> Engine {
    match engine.unwrap_or("kueue") {
        "kueue" => Engine::Kueue,
        "resourcequota" => Engine::ResourceQuota,
        "kai" => {
            errors.push(
                Diagnostic::error(NOT_SIMULATED, "engine kai: a KAI scenario, which the Kueue and ResourceQuota simulator does not run; `gpuquota sim FILE` and `gpuquota sim sweep FILE` run it, `gpuquota sim diff` does not")
                    .source(name)
                    .field("spec.engine"),
            );
            Engine::Kueue
        }
        other => {
            errors.push(
                err(format!(
                    "unknown engine {other:?}: expected kueue or resourcequota"
                ))
                .source(name)
                .field("spec.engine"),
            );
            Engine::Kueue
        }
    }
}

/// `spec.kueue.cycleLatency` in ms (default 0).
fn cycle_latency_ms(name: &str, s: Option<&str>, errors: &mut Diagnostics) -> i64 {
    match s {
        None => 0,
        Some(s) => duration_ms(s).unwrap_or_else(|| {
            errors.push(
                err(format!("invalid Go duration {s:?} (e.g. 0s, 100ms)"))
                    .source(name)
                    .field("spec.kueue.cycleLatency"),
            );
            0
        }),
    }
}

/// `spec.resourceQuota.retryInterval`: a fixed positive interval, else the Job controller's
/// backoff.
fn retry_of(name: &str, s: Option<String>, errors: &mut Diagnostics) -> Retry {
    match s {
        None => Retry::JobBackoff,
        Some(s) => match duration_ms(&s) {
            Some(ms) if ms > 0 => Retry::Fixed(ms),
            _ => {
                errors.push(
                    err(format!(
                        "invalid Go duration {s:?}: a positive interval such as 10s"
                    ))
                    .source(name)
                    .field("spec.resourceQuota.retryInterval"),
                );
                Retry::JobBackoff
            }
        },
    }
}

/// The workloads of `spec.workloads[i].generator`, one set after the other.
fn generate(
    name: &str,
    i: usize,
    g: &Generator,
    start: Timestamp,
    generated: &mut Vec<(Workload, Instance)>,
    errors: &mut Diagnostics,
) {
    let resource = g.resource.clone().unwrap_or_else(|| "cpu".to_owned());
    for (si, set) in g.workloads_sets.iter().enumerate() {
        generate_set(
            set,
            si,
            &g.namespace,
            &g.local_queue,
            &resource,
            0,
            start,
            generated,
        )
        .map_err(|m| {
            errors.push(
                err(m)
                    .source(name)
                    .field(format!("spec.workloads[{i}].generator")),
            )
        })
        .ok();
    }
}

/// Reads arrivals, runtimes, classes and repeats of the workloads that came from files.
pub(crate) fn resolve_file_workloads(
    model: &mut Model,
    instances: &mut BTreeMap<String, Instance>,
    start: Timestamp,
    end_ms: Option<i64>,
    errors: &mut Diagnostics,
    warnings: &mut Diagnostics,
) {
    let mut copies: Vec<(String, Workload, Instance)> = Vec::new();
    // every workload there is before the copies: the copies may add up to the limit
    let before = model.workloads.len() as u64;
    for (key, w) in model.workloads.iter_mut() {
        if instances.contains_key(key) {
            continue;
        }
        let obj = |d: Diagnostic| d.object("Workload", key.clone());
        let ann = |k: &str| {
            w.metadata
                .annotations
                .get(k)
                .or_else(|| w.metadata.labels.get(k))
                .cloned()
        };
        let runtime_ms = match ann(RUNTIME_ANNOTATION) {
            Some(s) => match duration_ms(&s) {
                Some(ms) => Some(ms),
                None => {
                    errors.push(obj(err(format!(
                        "invalid Go duration {s:?} (e.g. 200ms, 4h30m)"
                    ))
                    .field(format!("metadata.annotations[{RUNTIME_ANNOTATION}]"))));
                    None
                }
            },
            None => match w.metadata.labels.get(PERF_RUNTIME_LABEL) {
                Some(s) => match s.parse::<i64>() {
                    Ok(ms) if ms >= 0 => Some(ms),
                    _ => {
                        errors.push(obj(err(format!(
                            "invalid runtime {s:?}: whole milliseconds"
                        ))
                        .field(format!("metadata.labels[{PERF_RUNTIME_LABEL}]"))));
                        None
                    }
                },
                None => None,
            },
        };
        if let Err(d) = crate::driver::eviction::latency_ms(w) {
            errors.push(obj(d));
        }
        if let Err(d) = crate::driver::retries::fail_after(w) {
            errors.push(obj(d));
        }
        // without a runtime, pods finishing one by one end the run with the last of them
        let runtime_ms = match crate::driver::reclaim::pod_runtimes(w) {
            Ok(pods) => runtime_ms.or_else(|| pods.iter().copied().max()),
            Err(d) => {
                errors.push(obj(d));
                runtime_ms
            }
        };
        if let Some(s) = ann(PODS_READY_AFTER_ANNOTATION)
            && s.trim() != "never"
            && duration_ms(&s).is_none()
        {
            errors.push(obj(err(format!(
                "invalid value {s:?}: a Go duration (e.g. 90s) or never"
            ))
            .field(format!(
                "metadata.annotations[{PODS_READY_AFTER_ANNOTATION}]"
            ))));
        }
        let class = workload_class(w);
        let created = *w.metadata.creation_timestamp.get_or_insert(start);
        let created_ms = ms_between(start, created);
        let inst = Instance {
            key: key.clone(),
            class,
            created_ms,
            runtime_ms,
            recorded_wait_ms: None,
        };
        if let Some(p) = ann(REPEAT_ANNOTATION) {
            match (duration_ms(&p), end_ms) {
                (Some(period), Some(end)) if period > 0 => {
                    let n = repeat_copies(created_ms, period, end);
                    let total = before.saturating_add(copies.len() as u64).saturating_add(n);
                    if total > instance_limit() {
                        errors.push(
                            obj(too_many_copies(&p, n, total, instance_limit()))
                                .field(format!("metadata.annotations[{REPEAT_ANNOTATION}]")),
                        );
                        instances.insert(key.clone(), inst);
                        continue;
                    }
                    let mut k = 1i64;
                    while let Some(at) = period
                        .checked_mul(k)
                        .and_then(|d| created_ms.max(0).checked_add(d))
                    {
                        if at >= end {
                            break;
                        }
                        let mut c = w.clone();
                        c.metadata.name = format!("{}-{k}", w.metadata.name);
                        c.metadata.creation_timestamp = Some(at_ms(start, at));
                        c.metadata.uid = None;
                        c.status = None;
                        let ckey = c.key();
                        copies.push((
                            ckey.clone(),
                            c,
                            Instance {
                                key: ckey,
                                class: inst.class.clone(),
                                created_ms: at,
                                runtime_ms,
                                recorded_wait_ms: None,
                            },
                        ));
                        k += 1;
                    }
                }
                (Some(p), None) if p > 0 => errors.push(obj(err(
                    "a repeating workload needs spec.end (the period repeats until the end)",
                )
                .field(format!("metadata.annotations[{REPEAT_ANNOTATION}]")))),
                _ => errors.push(obj(err(format!(
                    "invalid Go duration {p:?} (a positive period such as 24h)"
                ))
                .field(format!("metadata.annotations[{REPEAT_ANNOTATION}]")))),
            }
        }
        instances.insert(key.clone(), inst);
    }
    for (k, w, inst) in copies {
        if model.workloads.contains_key(&k) {
            warnings.push(
                Diagnostic::warning(
                    INVALID_SCENARIO,
                    "a repeat copy's name is taken by another workload; the copy is skipped",
                )
                .object("Workload", k.clone()),
            );
            continue;
        }
        model.workloads.insert(k.clone(), w);
        instances.insert(k, inst);
    }
}

/// A workload's class in the report: its WorkloadPriorityClass, else the PriorityClass
/// of the workload or of its pods, else `gpuquota.dev/class` (annotation, else label), else
/// Kueue's perf label; `""` without any.
fn workload_class(w: &Workload) -> String {
    let class = w.spec.priority_class();
    if let Some((true, name)) = class {
        return name.to_owned();
    }
    class
        .map(|(_, name)| name.to_owned())
        .or_else(|| {
            w.spec
                .pod_sets
                .iter()
                .find_map(|p| p.template.spec.priority_class_name.clone())
        })
        .or_else(|| {
            w.metadata
                .annotations
                .get(CLASS_KEY)
                .or_else(|| w.metadata.labels.get(CLASS_KEY))
                .cloned()
        })
        .or_else(|| w.metadata.labels.get(PERF_CLASS_LABEL).cloned())
        .unwrap_or_default()
}

#[allow(clippy::too_many_arguments)]
fn workload_template(
    name: String,
    namespace: &str,
    local_queue: &str,
    class: &str,
    runtime_ms: u64,
    priority: i32,
    resource: &str,
    request: &str,
    pods: u32,
    created: Timestamp,
) -> Result<Workload, String> {
    let v = serde_json::json!({
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {PERF_RUNTIME_LABEL: runtime_ms.to_string(), PERF_CLASS_LABEL: class},
            "creationTimestamp": created.to_string(),
        },
        "spec": {
            "queueName": local_queue,
            "priority": priority,
            "podSets": [{"name": "main", "count": pods, "template": {"spec": {"containers": [
                {"name": "c", "resources": {"requests": {resource: request}}}
            ]}}}],
        },
    });
    serde_json::from_value(v).map_err(|e| format!("workload class {class:?}: {e}"))
}

/// Workloads of one workloads set, named and timed as upstream's generator creates them:
/// `count` rounds, each template after a sleep of `creationIntervalMs`, named
/// `<className>-<setIndex>-<round>-<templateIndex>`; `offset` is subtracted from every time.
#[allow(clippy::too_many_arguments)]
fn generate_set(
    set: &WorkloadsSet,
    set_idx: usize,
    namespace: &str,
    local_queue: &str,
    resource: &str,
    offset: i64,
    start: Timestamp,
    out: &mut Vec<(Workload, Instance)>,
) -> Result<(), String> {
    let interval =
        i64::try_from(set.creation_interval_ms).map_err(|_| "creationIntervalMs too large")?;
    let total = u64::from(set.count) * set.workloads.len() as u64 + out.len() as u64;
    if total > instance_limit() {
        return Err(format!(
            "{total} workloads: more than the limit of {} (a guard against exhausting memory)",
            instance_limit()
        ));
    }
    let mut templates = Vec::new();
    for t in &set.workloads {
        if t.tas_level.is_some()
            || t.tas_constraint.is_some()
            || t.slice_size.is_some()
            || t.devices.is_some()
        {
            return Err(format!(
                "workload class {:?}: topology (TAS) and device requests are not simulated",
                t.class_name
            ));
        }
        let base = workload_template(
            String::new(),
            namespace,
            local_queue,
            &t.class_name,
            t.runtime_ms,
            t.priority,
            resource,
            &t.request.text(),
            t.pod_count.unwrap_or(1).max(1),
            start,
        )?;
        templates.push(base);
    }
    let mut n: i64 = 0;
    for si in 0..set.count {
        for (i, t) in set.workloads.iter().enumerate() {
            n += 1;
            let created_ms = n.saturating_mul(interval).saturating_sub(offset);
            let mut w = templates[i].clone();
            w.metadata.name = format!("{}-{set_idx}-{si}-{i}", t.class_name);
            w.metadata.creation_timestamp = Some(at_ms(start, created_ms));
            let key = format!("{namespace}/{}", w.metadata.name);
            out.push((
                w,
                Instance {
                    key,
                    class: t.class_name.clone(),
                    created_ms,
                    runtime_ms: Some(i64::try_from(t.runtime_ms).unwrap_or(i64::MAX)),
                    recorded_wait_ms: None,
                },
            ));
        }
    }
    Ok(())
}

/// The most workloads one scenario may hold: those of its files, generator sets, trace rows
/// and repeat copies together. A scenario that would make more is refused before they are
/// made, naming the number (about 4 KB of memory per workload in a run: the limit keeps a
/// run's peak near 2 GB; `benches/README.md`, "Up-front limits").
pub const MAX_INSTANCES: u64 = 500_000;

/// The number of repeat copies of a workload created at `created_ms` (clamped to the start)
/// with the period `period` before `end` (all ms since the start; `period > 0`): every
/// `created + k·period < end`, `k ≥ 1`.
pub(crate) fn repeat_copies(created_ms: i64, period: i64, end: i64) -> u64 {
    let first = created_ms.max(0);
    if end <= first || period <= 0 {
        return 0;
    }
    u64::try_from((end - 1 - first) / period).unwrap_or(0)
}

/// The error of a `gpuquota.dev/repeat` period `p` whose `n` copies make `total` workloads,
/// more than `limit`.
pub(crate) fn too_many_copies(p: &str, n: u64, total: u64, limit: u64) -> Diagnostic {
    err(format!(
        "the period {p} makes {n} copies before spec.end, {total} workloads in all: more than \
         the limit of {limit} (a guard against exhausting memory); use a longer period or an \
         earlier spec.end"
    ))
}

thread_local! {
    static INSTANCE_LIMIT: std::cell::Cell<u64> = const { std::cell::Cell::new(MAX_INSTANCES) };
}

/// The guard in force on this thread: [`MAX_INSTANCES`] unless [`with_instance_limit`]
/// lowered it.
pub(crate) fn instance_limit() -> u64 {
    INSTANCE_LIMIT.with(|l| l.get())
}

/// Parses with the guard against exhausting memory lowered to `limit` workload instances
/// (and ClusterQueues of a perf-generator config) on this thread while `f` runs: an
/// embedder with a small memory budget, or the fuzz target, gets the usual error for a
/// scenario that would generate more, instead of the allocation.
pub fn with_instance_limit<T>(limit: u64, f: impl FnOnce() -> T) -> T {
    let old = INSTANCE_LIMIT.with(|l| l.replace(limit.min(MAX_INSTANCES)));
    let out = f();
    INSTANCE_LIMIT.with(|l| l.set(old));
    out
}

/// The start time of a perf-generator scenario (its first creation).
pub const PERF_START: &str = "1970-01-01T00:00:00Z";

/// Resolves `rel` against the directory of `base`.
pub fn relative_to(base: &Path, rel: &str) -> PathBuf {
    base.parent()
        .map(|d| d.join(rel))
        .unwrap_or_else(|| PathBuf::from(rel))
}

/// Which reader a parsed scenario document goes to, decided from its structure alone (its
/// `kind` and `spec.engine`, else its top-level fields), never from its text: one decision
/// for every way in ([`crate::Simulation::from_files`], sweeps, the advisor).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// A document with a `kind` whose `spec.engine` is not `kai` (a Kueue or ResourceQuota
    /// `Simulation`), Kueue's perf-test generator config (no `kind`, `cohorts`), or anything
    /// else: the Kueue reader decides and names what is wrong.
    Kueue,
    /// A document with a `kind` (a `Simulation`) and `spec.engine: kai`.
    Kai,
    /// KAI's time-based-fairshare simulator config: no `kind`, no `cohorts`, and one of its
    /// top-level fields (`Cycles`, `WindowSize`, `HalfLifePeriod`, `KValue`, `Nodes`,
    /// `Queues`, `Jobs`, any letter case).
    KaiSimulator,
}

/// The top-level fields of KAI's time-based-fairshare simulator config.
pub(crate) const KAI_SIMULATOR_FIELDS: [&str; 7] = [
    "Cycles",
    "WindowSize",
    "HalfLifePeriod",
    "KValue",
    "Nodes",
    "Queues",
    "Jobs",
];

impl Format {
    /// The reader of `doc` (type docs).
    pub(crate) fn of(doc: &serde_json::Value) -> Format {
        let Some(m) = doc.as_object() else {
            return Format::Kueue;
        };
        if m.contains_key("kind") {
            return if doc.pointer("/spec/engine").and_then(|e| e.as_str()) == Some("kai") {
                Format::Kai
            } else {
                Format::Kueue
            };
        }
        let kai_fields = m.keys().any(|k| {
            KAI_SIMULATOR_FIELDS
                .iter()
                .any(|t| t.eq_ignore_ascii_case(k))
        });
        if kai_fields && !m.contains_key("cohorts") {
            Format::KaiSimulator
        } else {
            Format::Kueue
        }
    }

    /// True for the KAI reader's formats.
    pub(crate) fn is_kai(self) -> bool {
        self != Format::Kueue
    }
}
