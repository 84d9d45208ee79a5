//! KAI scenarios: a `Simulation` with `spec.engine: kai`, or KAI's time-based-fairshare
//! simulator config, resolved into one [`Model`] with every job instance (repeat copies
//! included), arrival times and runtimes in virtual milliseconds.

use std::collections::BTreeMap;

use gpuquota_model::diag::{Diagnostic, Diagnostics};
use gpuquota_model::kai::POD_GROUP_ANNOTATION;
use gpuquota_model::{Kind, Model, Timestamp};
use gpuquota_rank::cron::CronSchedule;
use serde::Deserialize;

mod timeaware;

use timeaware::timeaware;

use crate::scenario::{
    CLASS_KEY, Gathered, INVALID_SCENARIO, REPEAT_ANNOTATION, RUNTIME_ANNOTATION, ReadFn, at_ms,
    check_header, duration_ms, failure, from_value, ms_between,
};

/// KAI's `schedule-period` default: one session per second.
pub const DEFAULT_SESSION_INTERVAL_MS: i64 = 1000;
/// KAI's usage `fetchInterval` default (the usage database is read once a minute).
pub const DEFAULT_FETCH_INTERVAL_MS: i64 = 60_000;
/// KAI's usage `queryResolution` default (Prometheus evaluates the allocation once a minute).
pub const DEFAULT_RESOLUTION_MS: i64 = 60_000;
/// One cycle of KAI's time-based-fairshare simulator (`simulationCycleInterval`, 10 ms).
pub const TIMEAWARE_CYCLE_MS: i64 = 10;

/// Where the scenario came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A `Simulation` document with `spec.engine: kai`.
    Simulation,
    /// KAI's time-based-fairshare simulator config (`Cycles`, `Queues`, `Jobs`, …).
    TimeAware,
}

/// Which usage samples count when the usage is read (KAI's `windowType`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Window {
    /// Samples stamped in `(now − size, now]`.
    Sliding {
        /// Window size, ms.
        size_ms: i64,
    },
    /// Windows of `size_ms` end to end from `start_ms` (ms since the scenario start).
    Tumbling {
        /// The first window's start, ms since the scenario start.
        start_ms: i64,
        /// Window size, ms.
        size_ms: i64,
    },
    /// Windows starting whenever the cron schedule fires (UTC).
    Cron(Box<CronSchedule>),
}

/// KAI's usage parameters (`usageDBConfig.usageParams`, `kai-scheduler/KAI-Scheduler:
/// pkg/scheduler/cache/usagedb/api`), in virtual milliseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageParams {
    /// The window.
    pub window: Window,
    /// `halfLifePeriod`, ms (`None`: no decay).
    pub half_life_ms: Option<i64>,
    /// `fetchInterval`: how often the usage is read, ms.
    pub fetch_interval_ms: i64,
    /// `queryResolution` (extra param): the step at which the allocation is sampled, ms.
    pub resolution_ms: i64,
}

/// One job instance the simulation submits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobInstance {
    /// `namespace/name` of the PodGroup (or of a pod without one).
    pub key: String,
    /// Class (`gpuquota.dev/class`, else `""`).
    pub class: String,
    /// Arrival, ms since start (negative for objects created before it).
    pub created_ms: i64,
    /// Runtime, ms; `None` runs until the end.
    pub runtime_ms: Option<i64>,
}

/// A resolved KAI scenario.
#[derive(Debug, Clone)]
pub struct KaiScenario {
    /// `metadata.name` (the file stem for a simulator config).
    pub name: String,
    /// The input format.
    pub source: Source,
    /// `spec.start` (the epoch for a simulator config).
    pub start: Timestamp,
    /// The end, ms since start (`Cycles × 10 ms` for a simulator config).
    pub end_ms: Option<i64>,
    /// `spec.kai.sessionInterval`, ms (KAI's `schedule-period`).
    pub session_interval_ms: i64,
    /// `spec.kai.bindLatency`, ms: how long after its session an allocated pod starts.
    pub bind_latency_ms: i64,
    /// `spec.resume`: a restarted job keeps the work done.
    pub resume: bool,
    /// `kValue` in nano-units (10⁹ = 1.0).
    pub k_value: i128,
    /// Time-based fairshare (`None`: off, every usage 0).
    pub usage: Option<UsageParams>,
    /// Every object, every job instance included.
    pub model: Model,
    /// The job instances by key.
    pub jobs: BTreeMap<String, JobInstance>,
    /// The queues of the simulator config in its order (the CSV's row order).
    pub queue_order: Vec<String>,
    /// Import and scenario warnings.
    pub warnings: Diagnostics,
    /// `spec.metering`: the bill of the run (see [`crate::bill`]; card types match nodes
    /// by `model`).
    pub metering: Option<serde_json::Value>,
    /// `spec.timeline`, read and checked ([`crate::timeline`]); object events only, empty
    /// without one.
    pub timeline: crate::timeline::Timeline,
    /// The recorded histories of `history:` sources (their PodGroups) and of the trace
    /// jobs whose wait the trace recorded (kind `trace`), by key; the report's `fidelity`
    /// compares the run with them ([`crate::history::fidelity`]).
    pub recorded: Vec<crate::history::Recorded>,
}

fn err(msg: impl Into<String>) -> Diagnostic {
    Diagnostic::error(INVALID_SCENARIO, msg)
}

/// Parses a KAI scenario from text (once); `read` loads the files a `Simulation` names.
///
/// # Errors
/// Every problem found.
pub(crate) fn from_str(
    name: &str,
    text: &str,
    stem: &str,
    read: &ReadFn<'_>,
) -> Result<KaiScenario, Diagnostics> {
    let v = crate::scenario::parse_document(name, text)?;
    from_doc(name, stem, &v, read)
}

/// Resolves a parsed KAI scenario document: KAI's simulator config, or a `Simulation`.
///
/// # Errors
/// Every problem found.
///
/// # Complexity
/// O(input size + instances × log instances).
pub(crate) fn from_doc(
    name: &str,
    stem: &str,
    v: &serde_json::Value,
    read: &ReadFn<'_>,
) -> Result<KaiScenario, Diagnostics> {
    if crate::scenario::Format::of(v) == crate::scenario::Format::KaiSimulator {
        return timeaware(name, stem, v);
    }
    simulation(name, stem, v, read)
}

// ---------------------------------------------------------------------------------------
// `Simulation` with `engine: kai`

/// An error when the objects are another engine's: no KAI Queue, or Kueue Workloads and no
/// Pod (every job would be dropped and the run would be empty).
pub(crate) fn engine_mismatch(
    model: &Model,
    jobs: &BTreeMap<String, JobInstance>,
) -> Option<Diagnostic> {
    if model.queues.is_empty() {
        Some(err(format!(
            "engine kai needs KAI Queues and the jobs' PodGroups or Pods; the files hold {} and no Queue (Kueue objects are simulated with spec.engine: kueue)",
            crate::scenario::holdings(model)
        )))
    } else if jobs.is_empty() && !model.workloads.is_empty() {
        Some(err(format!(
            "engine kai simulates Pods and PodGroups; the files hold {} and no Pod (Kueue Workloads are simulated with spec.engine: kueue)",
            crate::scenario::holdings(model)
        )))
    } else {
        None
    }
}

/// A `Simulation` scenario file with `spec.engine: kai`, as it is read (format in the
/// [module docs](crate::kai)); part of `gpuquota schema scenario`. Unknown fields are
/// warnings of `gpuquota sim`, so the schema leaves objects open.
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["kind", "spec"])))]
pub struct SimulationDoc {
    /// `gpuquota.dev/v1alpha1`.
    #[serde(default)]
    api_version: String,
    /// `Simulation`.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(extend("const" = "Simulation")))]
    kind: String,
    /// `metadata.name`: the scenario's name.
    #[serde(default)]
    metadata: Meta,
    /// The scenario.
    #[serde(default)]
    spec: Spec,
}

/// KAI's time-based-fairshare simulator config (kai-scheduler/KAI-Scheduler:
/// `pkg/env-tests/timeaware/timeaware.go`, `TimeAwareSimulation`) read as a whole scenario:
/// a schema only (the reader takes every key in any letter case; the schema has upstream's
/// spelling). Part of `gpuquota schema scenario`.
#[cfg(feature = "schema")]
#[derive(schemars::JsonSchema)]
#[schemars(extend("not" = {"required": ["kind"]}))]
#[allow(dead_code)] // a schema only: never built
pub struct TimeAwareConfig {
    /// Sessions to simulate (default 100).
    #[serde(rename = "Cycles")]
    cycles: Option<i64>,
    /// The usage window, in cycles (default 5).
    #[serde(rename = "WindowSize")]
    window_size: Option<i64>,
    /// The usage half-life, in cycles (0: no decay).
    #[serde(rename = "HalfLifePeriod")]
    half_life_period: Option<i64>,
    /// KAI's `kValue` (default 1.0).
    #[serde(rename = "KValue")]
    k_value: Option<f64>,
    /// The nodes.
    #[serde(rename = "Nodes")]
    nodes: Option<Vec<TimeAwareNode>>,
    /// The queues, in the CSV's order.
    #[serde(rename = "Queues")]
    queues: Option<Vec<TimeAwareQueue>>,
    /// Per queue name, the jobs it submits.
    #[serde(rename = "Jobs")]
    jobs: Option<BTreeMap<String, TimeAwareJobs>>,
}

/// A node group of [`TimeAwareConfig`].
#[cfg(feature = "schema")]
#[derive(schemars::JsonSchema)]
#[allow(dead_code)] // a schema only: never built
struct TimeAwareNode {
    /// GPUs per node.
    #[serde(rename = "GPUs")]
    gpus: Option<i64>,
    /// Nodes of this shape.
    #[serde(rename = "Count")]
    count: Option<i64>,
}

/// A queue of [`TimeAwareConfig`].
#[cfg(feature = "schema")]
#[derive(schemars::JsonSchema)]
#[allow(dead_code)] // a schema only: never built
struct TimeAwareQueue {
    /// The queue's name (required).
    #[serde(rename = "Name")]
    name: String,
    /// The parent queue (`""`: top level).
    #[serde(rename = "Parent")]
    parent: Option<String>,
    /// Priority (default 100).
    #[serde(rename = "Priority")]
    priority: Option<i64>,
    /// Deserved GPUs (default 0).
    #[serde(rename = "DeservedGPUs")]
    deserved_gpus: Option<f64>,
    /// Over-quota weight (default 1).
    #[serde(rename = "Weight")]
    weight: Option<f64>,
}

/// The jobs of one queue in [`TimeAwareConfig`].
#[cfg(feature = "schema")]
#[derive(schemars::JsonSchema)]
#[allow(dead_code)] // a schema only: never built
struct TimeAwareJobs {
    /// GPUs per pod.
    #[serde(rename = "GPUs")]
    gpus: Option<i64>,
    /// Pods per job.
    #[serde(rename = "NumPods")]
    num_pods: Option<i64>,
    /// Jobs.
    #[serde(rename = "NumJobs")]
    num_jobs: Option<i64>,
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
#[cfg_attr(feature = "schema", schemars(extend("required" = ["engine"])))]
struct Spec {
    /// `kai`.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(extend("const" = "kai")))]
    engine: Option<String>,
    #[serde(default)]
    cluster: Vec<String>,
    #[serde(default)]
    start: Option<String>,
    /// The end of the run (RFC 3339). The jobs with every repeat copy and trace row may
    /// number at most 500,000, the sessions up to the end times the queues at most
    /// 10,000,000 (one series point each), and the Budget periods at most 1,000,000; a
    /// scenario that would make more is refused before the run, naming the number.
    #[serde(default)]
    end: Option<String>,
    #[serde(default)]
    resume: Option<bool>,
    #[serde(default)]
    kai: Option<KaiOpts>,
    #[serde(default)]
    workloads: Vec<WorkloadSource>,
    #[serde(default)]
    metering: Option<serde_json::Value>,
    /// The platform's changes while the run goes on ([`crate::timeline`]), read and checked
    /// as a Kueue scenario's: on a KAI scenario, Queue changes only (`apply`, `patch`); a
    /// Queue's quota, limit, weight and priority take effect at the next session. Node
    /// events, MIG layout changes, deletions and other kinds are refused (`not-simulated`),
    /// and so, when the run reaches it, is a Queue created or given a new parent or
    /// min-runtime.
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
struct KaiOpts {
    #[serde(default)]
    session_interval: Option<String>,
    #[serde(default)]
    bind_latency: Option<String>,
    #[serde(default)]
    k_value: Option<f64>,
    #[serde(default)]
    usage: Option<UsageOpts>,
}

#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
struct UsageOpts {
    #[serde(default)]
    window_type: Option<String>,
    #[serde(default)]
    window_size: Option<String>,
    #[serde(default)]
    half_life_period: Option<String>,
    #[serde(default)]
    tumbling_window_start_time: Option<String>,
    #[serde(default)]
    cron_string: Option<String>,
    #[serde(default)]
    fetch_interval: Option<String>,
    #[serde(default)]
    query_resolution: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct WorkloadSource {
    #[serde(default)]
    file: Option<String>,
    /// A public trace ([`crate::trace`]): the mapped queue name is a leaf Queue.
    #[serde(default)]
    trace: Option<crate::trace::TraceSource>,
    /// A recorded history's PodGroups and their Pods ([`crate::history`]).
    #[serde(default)]
    history: Option<crate::history::HistorySource>,
}

pub(crate) fn k_nanos(k: f64) -> i128 {
    // KAI: a kValue <= 0 counts as 0.
    if k.is_finite() {
        (k.max(0.0) * 1e9).round() as i128
    } else {
        0
    }
}

fn simulation(
    name: &str,
    stem: &str,
    v: &serde_json::Value,
    read: &ReadFn<'_>,
) -> Result<KaiScenario, Diagnostics> {
    let mut warnings = Diagnostics::default();
    let doc: SimulationDoc = from_value(name, v, &mut warnings)?;
    let mut errors = Diagnostics::default();
    check_header(
        name,
        &doc.api_version,
        &doc.kind,
        "Simulation",
        &mut warnings,
        &mut errors,
    );
    let spec = doc.spec;
    if spec.engine.as_deref() != Some("kai") {
        errors.push(
            err("a KAI scenario needs spec.engine: kai")
                .source(name)
                .field("spec.engine"),
        );
    }
    let (start, end_ms) = crate::scenario::time_window(
        name,
        spec.start.as_deref(),
        spec.end.as_deref(),
        &mut errors,
    );
    let kopts = spec.kai.unwrap_or_default();
    let session_interval_ms = duration(
        name,
        "spec.kai.sessionInterval",
        kopts.session_interval.as_deref(),
        (DEFAULT_SESSION_INTERVAL_MS, true),
        &mut errors,
    );
    let bind_latency_ms = duration(
        name,
        "spec.kai.bindLatency",
        kopts.bind_latency.as_deref(),
        (0, false),
        &mut errors,
    );
    let usage = kopts
        .usage
        .as_ref()
        .and_then(|u| usage_params(name, u, start, &mut errors));
    let mut gathered = Gathered::default();
    let mut recorded = Vec::new();
    gathered.cluster(&spec.cluster, read, &mut errors);
    for (i, w) in spec.workloads.iter().enumerate() {
        match (&w.file, &w.trace, &w.history) {
            (Some(f), None, None) => gathered.file(i, f, read, &mut errors),
            (None, Some(t), None) => gathered.trace(name, i, t, read, &mut errors),
            (None, None, Some(h)) => crate::history::gather(
                name,
                (i, true),
                h,
                read,
                (&mut gathered.files, &mut recorded),
                &mut errors,
                &mut warnings,
            ),
            _ => errors.push(
                err(
                    "each entry of a KAI scenario needs a file, a trace or a history (generators are Kueue's)",
                )
                .source(name)
                .field(format!("spec.workloads[{i}]")),
            ),
        }
    }
    if errors.has_errors() {
        return Err(failure(errors, warnings));
    }
    let mut model = gathered.import(&mut warnings)?;
    // a job per PodGroup or lone pod: at most one per pod
    crate::scenario::check_trace_rows(name, model.pods.len() as u64, &gathered.traces, &mut errors);
    if errors.has_errors() {
        return Err(failure(errors, warnings));
    }
    for (field, p) in gathered.traces {
        crate::trace::apply_kai(
            p,
            &field,
            (start, end_ms),
            &mut model,
            (&mut recorded, &mut warnings),
        );
    }
    let jobs = resolve_jobs(&mut model, start, end_ms, &mut errors, &mut warnings);
    if let Some(e) = engine_mismatch(&model, &jobs) {
        errors.push(e.source(name).field("spec.engine"));
    }
    if errors.has_errors() {
        return Err(failure(errors, warnings));
    }
    let timeline = kai_timeline(name, spec.timeline.as_ref(), (start, end_ms), &model, read);
    let mut timeline = timeline.map_err(|e| failure(e, warnings.clone()))?;
    warnings.extend(std::mem::take(&mut timeline.warnings).0);
    Ok(KaiScenario {
        name: if doc.metadata.name.is_empty() {
            stem.to_owned()
        } else {
            doc.metadata.name
        },
        source: Source::Simulation,
        start,
        end_ms,
        session_interval_ms,
        bind_latency_ms,
        resume: spec.resume.unwrap_or(false),
        k_value: k_nanos(kopts.k_value.unwrap_or(1.0)),
        usage,
        model,
        jobs,
        queue_order: Vec::new(),
        warnings,
        metering: spec.metering,
        timeline,
        recorded: {
            recorded.sort_by(|a, b| a.key.cmp(&b.key));
            recorded
        },
    })
}

/// `spec.timeline` of a KAI scenario, read and checked as a Kueue scenario's
/// ([`crate::timeline::Timeline::parse`]), then MIG layout changes and kinds other than
/// Queue refused (`not-simulated`, naming `spec.timeline[i].migLayout` or the object's
/// `apply[j]`/`patch[j]`/`delete[j]`): the KAI driver applies Queue changes (created,
/// replaced, deleted) and node events.
fn kai_timeline(
    name: &str,
    value: Option<&serde_json::Value>,
    (start, end_ms): (Timestamp, Option<i64>),
    model: &Model,
    read: &ReadFn<'_>,
) -> Result<crate::timeline::Timeline, Diagnostics> {
    let Some(v) = value else {
        return Ok(crate::timeline::Timeline::default());
    };
    let timeline = crate::timeline::Timeline::parse(name, v, start, end_ms, model, read)?;
    let mut errors = Diagnostics::default();
    let refuse = |field: &str, msg: String| {
        Diagnostic::error(crate::scenario::NOT_SIMULATED, msg)
            .source(name)
            .field(field.to_owned())
    };
    for e in &timeline.events {
        for o in &e.objects {
            match &o.op {
                crate::timeline::Op::Put { object, .. } if object.kind() != Kind::Queue => {
                    errors.push(refuse(&o.field, format!("a {} change is not simulated on a KAI scenario (its timeline changes Queues only)", object.kind().as_str())));
                }
                crate::timeline::Op::Delete { kind, .. } if *kind != Kind::Queue => {
                    errors.push(refuse(&o.field, format!("deleting a {} is not simulated on a KAI scenario (its timeline changes Queues and nodes only)", kind.as_str())));
                }
                crate::timeline::Op::Delete { .. } => {}
                crate::timeline::Op::Put { .. } => {}
            }
        }
        if e.mig_layout.is_some() {
            errors.push(
                Diagnostic::error(
                    crate::scenario::NOT_SIMULATED,
                    "MIG layout changes are not simulated on a KAI scenario (the KAI driver does not re-lay a node's MIG instances; its timeline changes Queues and nodes: apply, patch, nodes)",
                )
                .source(name)
                .field(format!("spec.timeline[{}].migLayout", e.index)),
            );
        }
    }
    if errors.has_errors() {
        let mut all = errors;
        all.extend(timeline.warnings.0);
        return Err(all);
    }
    Ok(timeline)
}

/// A Go duration at `field` in ms: `default` when absent; when malformed (or not positive
/// where `positive`), an error and the default.
fn duration(
    name: &str,
    field: &str,
    s: Option<&str>,
    (default, positive): (i64, bool),
    errors: &mut Diagnostics,
) -> i64 {
    match s {
        None => default,
        Some(s) => match duration_ms(s) {
            Some(ms) if !positive || ms > 0 => ms,
            _ => {
                errors.push(
                    err(format!(
                        "invalid Go duration {s:?}{}",
                        if positive {
                            " (a positive duration such as 1s)"
                        } else {
                            ""
                        }
                    ))
                    .source(name)
                    .field(field.to_owned()),
                );
                default
            }
        },
    }
}

/// `spec.kai.usage`: the usage window and its timing; `None` (with an error) when the
/// window is not usable.
fn usage_params(
    name: &str,
    u: &UsageOpts,
    start: Timestamp,
    errors: &mut Diagnostics,
) -> Option<UsageParams> {
    let window_size = duration(
        name,
        "spec.kai.usage.windowSize",
        u.window_size.as_deref(),
        (7 * 24 * 3_600_000, true),
        errors,
    );
    let half = duration(
        name,
        "spec.kai.usage.halfLifePeriod",
        u.half_life_period.as_deref(),
        (0, false),
        errors,
    );
    let fetch = duration(
        name,
        "spec.kai.usage.fetchInterval",
        u.fetch_interval.as_deref(),
        (DEFAULT_FETCH_INTERVAL_MS, true),
        errors,
    );
    let resolution = duration(
        name,
        "spec.kai.usage.queryResolution",
        u.query_resolution.as_deref(),
        (DEFAULT_RESOLUTION_MS, true),
        errors,
    );
    let window = usage_window(name, u, window_size, start, errors);
    window.map(|window| UsageParams {
        window,
        half_life_ms: (half > 0).then_some(half),
        fetch_interval_ms: fetch,
        resolution_ms: resolution,
    })
}

/// `spec.kai.usage.windowType` (`sliding`, the default, `tumbling` or `cron`) with the
/// fields that type needs.
fn usage_window(
    name: &str,
    u: &UsageOpts,
    window_size: i64,
    start: Timestamp,
    errors: &mut Diagnostics,
) -> Option<Window> {
    match u.window_type.as_deref().unwrap_or("sliding") {
        "sliding" => Some(Window::Sliding {
            size_ms: window_size,
        }),
        "tumbling" => match u.tumbling_window_start_time.as_deref() {
            None => {
                errors.push(
                    err("required when windowType is tumbling")
                        .source(name)
                        .field("spec.kai.usage.tumblingWindowStartTime"),
                );
                None
            }
            Some(s) => match Timestamp::parse(s) {
                Ok(t) => Some(Window::Tumbling {
                    start_ms: ms_between(start, t),
                    size_ms: window_size,
                }),
                Err(e) => {
                    errors.push(
                        err(e.to_string())
                            .source(name)
                            .field("spec.kai.usage.tumblingWindowStartTime"),
                    );
                    None
                }
            },
        },
        "cron" => match u.cron_string.as_deref().map(CronSchedule::parse) {
            Some(Ok(c)) => Some(Window::Cron(Box::new(c))),
            Some(Err(m)) => {
                errors.push(err(m).source(name).field("spec.kai.usage.cronString"));
                None
            }
            None => {
                errors.push(
                    err("required when windowType is cron")
                        .source(name)
                        .field("spec.kai.usage.cronString"),
                );
                None
            }
        },
        other => {
            errors.push(
                err(format!("{other:?}: expected sliding, tumbling or cron"))
                    .source(name)
                    .field("spec.kai.usage.windowType"),
            );
            None
        }
    }
}

/// The job units of the model (PodGroups, and pods without one), with arrivals, runtimes
/// and repeat copies.
pub(crate) fn resolve_jobs(
    model: &mut Model,
    start: Timestamp,
    end_ms: Option<i64>,
    errors: &mut Diagnostics,
    warnings: &mut Diagnostics,
) -> BTreeMap<String, JobInstance> {
    // Pods per group key.
    let mut members: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (key, pod) in &model.pods {
        let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
        let group = match pod.metadata.annotations.get(POD_GROUP_ANNOTATION) {
            Some(g) => format!("{ns}/{g}"),
            None => key.clone(),
        };
        members.entry(group).or_default().push(key.clone());
    }
    // every job unit there is before the copies: the copies may add up to the limit
    let mut units = JobUnits {
        total: members.len() as u64,
        ..JobUnits::default()
    };
    for (group, pods) in &members {
        units.job(model, group, pods, (start, end_ms), errors);
    }
    let JobUnits {
        mut out,
        copies_pg,
        copies_pod,
        ..
    } = units;
    copy_pod_groups(model, &members, copies_pg, warnings);
    copy_pods(model, copies_pod, &mut out, warnings);
    out
}

/// A repeat copy to make: the original's key, the copy's number and its creation time.
type Copy = (String, i64, Timestamp);

/// The job units found so far, the repeat copies still to make, and the count of job units
/// with the copies (held against [`crate::scenario::MAX_INSTANCES`]).
#[derive(Default)]
struct JobUnits {
    out: BTreeMap<String, JobInstance>,
    copies_pg: Vec<Copy>,
    copies_pod: Vec<Copy>,
    total: u64,
}

impl JobUnits {
    /// The job unit of one group (a PodGroup, or a pod without one) and its repeats.
    fn job(
        &mut self,
        model: &Model,
        group: &str,
        pods: &[String],
        (start, end_ms): (Timestamp, Option<i64>),
        errors: &mut Diagnostics,
    ) {
        let pg = model.pod_groups.get(group);
        let first = pods.first().and_then(|p| model.pods.get(p));
        let (kind, ann, labels, created) = match (pg, first) {
            (Some(pg), _) => (
                "PodGroup",
                &pg.metadata.annotations,
                &pg.metadata.labels,
                pg.metadata.creation_timestamp,
            ),
            (None, Some(p)) => (
                "Pod",
                &p.metadata.annotations,
                &p.metadata.labels,
                p.metadata.creation_timestamp,
            ),
            (None, None) => return,
        };
        // Annotations of the PodGroup (KAI copies the top owner's), else of its first pod.
        let get = |k: &str| {
            ann.get(k)
                .or_else(|| labels.get(k))
                .or_else(|| first.and_then(|p| p.metadata.annotations.get(k)))
                .cloned()
        };
        let runtime_ms = match get(RUNTIME_ANNOTATION) {
            None => None,
            Some(s) => match duration_ms(&s) {
                Some(ms) => Some(ms),
                None => {
                    errors.push(
                        err(format!("invalid Go duration {s:?} (e.g. 200ms, 4h30m)"))
                            .object(kind, group.to_owned())
                            .field(format!("metadata.annotations[{RUNTIME_ANNOTATION}]")),
                    );
                    None
                }
            },
        };
        let job = JobInstance {
            key: group.to_owned(),
            class: get(CLASS_KEY).unwrap_or_default(),
            created_ms: ms_between(start, created.unwrap_or(start)),
            runtime_ms,
        };
        self.out.insert(group.to_owned(), job.clone());
        if let Some(p) = get(REPEAT_ANNOTATION) {
            self.repeats(kind, &job, &p, (start, end_ms), errors);
        }
    }

    /// The copies of `job` that its `gpuquota.dev/repeat` period `p` makes before the end.
    fn repeats(
        &mut self,
        kind: &str,
        job: &JobInstance,
        p: &str,
        (start, end_ms): (Timestamp, Option<i64>),
        errors: &mut Diagnostics,
    ) {
        let group = &job.key;
        let obj = |d: Diagnostic| d.object(kind, group.clone());
        match (duration_ms(p), end_ms) {
            (Some(period), Some(end)) if period > 0 => {
                let n = crate::scenario::repeat_copies(job.created_ms, period, end);
                let limit = crate::scenario::instance_limit();
                if self.total.saturating_add(n) > limit {
                    errors.push(
                        obj(crate::scenario::too_many_copies(
                            p,
                            n,
                            self.total.saturating_add(n),
                            limit,
                        ))
                        .field(format!("metadata.annotations[{REPEAT_ANNOTATION}]")),
                    );
                    return;
                }
                self.total += n;
                let mut k = 1i64;
                while let Some(at) = period
                    .checked_mul(k)
                    .and_then(|d| job.created_ms.max(0).checked_add(d))
                {
                    if at >= end {
                        break;
                    }
                    let when = at_ms(start, at);
                    let (ns, base) = group.split_once('/').unwrap_or(("default", group));
                    let ckey = format!("{ns}/{base}-{k}");
                    if kind == "PodGroup" {
                        self.copies_pg.push((group.clone(), k, when));
                    } else {
                        self.copies_pod.push((group.clone(), k, when));
                    }
                    self.out.insert(
                        ckey.clone(),
                        JobInstance {
                            key: ckey,
                            class: job.class.clone(),
                            created_ms: at,
                            runtime_ms: job.runtime_ms,
                        },
                    );
                    k += 1;
                }
            }
            (Some(period), None) if period > 0 => errors.push(obj(err(
                "a repeating job needs spec.end (the period repeats until the end)",
            )
            .field(format!("metadata.annotations[{REPEAT_ANNOTATION}]")))),
            _ => errors.push(obj(err(format!(
                "invalid Go duration {p:?} (a positive period such as 24h)"
            ))
            .field(format!("metadata.annotations[{REPEAT_ANNOTATION}]")))),
        }
    }
}

/// Repeat copies of PodGroups: a PodGroup `name-k` with its pods `pod-k`; a copy whose name
/// is taken is skipped with a warning.
fn copy_pod_groups(
    model: &mut Model,
    members: &BTreeMap<String, Vec<String>>,
    copies: Vec<Copy>,
    warnings: &mut Diagnostics,
) {
    for (group, k, when) in copies {
        let Some(pg) = model.pod_groups.get(&group).cloned() else {
            continue;
        };
        let mut c = pg;
        let base = c.metadata.name.clone();
        c.metadata.name = format!("{base}-{k}");
        c.metadata.creation_timestamp = Some(when);
        c.metadata.uid = None;
        let ckey = format!(
            "{}/{}",
            c.metadata.namespace.as_deref().unwrap_or("default"),
            c.metadata.name
        );
        if model.pod_groups.contains_key(&ckey) {
            warnings.push(
                Diagnostic::warning(
                    INVALID_SCENARIO,
                    "a repeat copy's name is taken by another PodGroup; the copy is skipped",
                )
                .object("PodGroup", ckey.clone()),
            );
            continue;
        }
        for p in members.get(&group).into_iter().flatten() {
            let Some(pod) = model.pods.get(p).cloned() else {
                continue;
            };
            let mut cp = pod;
            cp.metadata.name = format!("{}-{k}", cp.metadata.name);
            cp.metadata.creation_timestamp = Some(when);
            cp.metadata.uid = None;
            cp.metadata
                .annotations
                .insert(POD_GROUP_ANNOTATION.to_owned(), c.metadata.name.clone());
            let pk = format!(
                "{}/{}",
                cp.metadata.namespace.as_deref().unwrap_or("default"),
                cp.metadata.name
            );
            model.pods.insert(pk, cp);
        }
        model.pod_groups.insert(ckey, c);
    }
}

/// Repeat copies of lone pods: a pod `name-k`; a copy whose name is taken is skipped with a
/// warning, and its job unit dropped.
fn copy_pods(
    model: &mut Model,
    copies: Vec<Copy>,
    out: &mut BTreeMap<String, JobInstance>,
    warnings: &mut Diagnostics,
) {
    for (key, k, when) in copies {
        let Some(pod) = model.pods.get(&key).cloned() else {
            continue;
        };
        let mut cp = pod;
        cp.metadata.name = format!("{}-{k}", cp.metadata.name);
        cp.metadata.creation_timestamp = Some(when);
        cp.metadata.uid = None;
        let pk = format!(
            "{}/{}",
            cp.metadata.namespace.as_deref().unwrap_or("default"),
            cp.metadata.name
        );
        if model.pods.contains_key(&pk) {
            warnings.push(
                Diagnostic::warning(
                    INVALID_SCENARIO,
                    "a repeat copy's name is taken by another pod; the copy is skipped",
                )
                .object("Pod", pk.clone()),
            );
            out.remove(&pk);
            continue;
        }
        model.pods.insert(pk, cp);
    }
}
