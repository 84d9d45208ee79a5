//! KAI scenarios: a `Simulation` with `spec.engine: kai`, or KAI's time-based-fairshare
//! simulator config, resolved into one [`Model`] with every job instance (repeat copies
//! included), arrival times and runtimes in virtual milliseconds.

use std::collections::BTreeMap;
use std::path::Path;

use gpuquota_model::diag::{Diagnostic, Diagnostics, codes};
use gpuquota_model::kai::POD_GROUP_ANNOTATION;
use gpuquota_model::{Importer, Model, Timestamp};
use gpuquota_rank::cron::CronSchedule;
use serde::Deserialize;

use crate::scenario::{
    CLASS_KEY, INVALID_SCENARIO, MAX_INSTANCES, REPEAT_ANNOTATION, RUNTIME_ANNOTATION, ReadFn,
    at_ms, duration_ms, ms_between,
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
}

fn err(msg: impl Into<String>) -> Diagnostic {
    Diagnostic::error(INVALID_SCENARIO, msg)
}

/// True when `text` is a KAI scenario: a `Simulation` with `spec.engine: kai`, or a
/// top-level mapping with KAI's simulator keys (`Cycles`, `Queues`, `Jobs`, `Nodes`,
/// `WindowSize`, `HalfLifePeriod`, `KValue`, any letter case) and no `kind`.
pub fn is_kai(text: &str) -> bool {
    let Ok(v) = serde_saphyr::from_str::<serde_json::Value>(text) else {
        return false;
    };
    is_kai_value(&v)
}

fn is_kai_value(v: &serde_json::Value) -> bool {
    let Some(m) = v.as_object() else {
        return false;
    };
    if m.contains_key("kind") {
        return v.pointer("/spec/engine").and_then(|e| e.as_str()) == Some("kai");
    }
    m.keys()
        .any(|k| TIMEAWARE_KEYS.iter().any(|t| t.eq_ignore_ascii_case(k)))
        && !m.contains_key("cohorts")
}

const TIMEAWARE_KEYS: [&str; 7] = [
    "Cycles",
    "WindowSize",
    "HalfLifePeriod",
    "KValue",
    "Nodes",
    "Queues",
    "Jobs",
];

/// Reads a KAI scenario file (every file through the bounded reader).
///
/// # Errors
/// Every problem found.
///
/// # Complexity
/// O(input size + instances × log instances).
pub fn load(path: &Path) -> Result<KaiScenario, Diagnostics> {
    let name = gpuquota_model::source::display_name(path);
    let text = gpuquota_model::source::read_text(path).map_err(|d| Diagnostics(vec![d]))?;
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    from_str(&name, &text, &stem, &|rel: &str| {
        let p = dir.join(rel);
        let shown = gpuquota_model::source::display_name(&p);
        gpuquota_model::source::read_text(&p).map(|t| (shown, t))
    })
}

/// Parses a KAI scenario from text; `read` loads the files a `Simulation` names.
///
/// # Errors
/// As [`load`].
pub fn from_str(
    name: &str,
    text: &str,
    stem: &str,
    read: &ReadFn<'_>,
) -> Result<KaiScenario, Diagnostics> {
    let v: serde_json::Value = serde_saphyr::from_str(text).map_err(|e| {
        Diagnostics(vec![
            Diagnostic::error(codes::MALFORMED, e.to_string()).source(name),
        ])
    })?;
    if v.get("kind").is_none() && is_kai_value(&v) {
        return timeaware(name, stem, &v);
    }
    simulation(name, stem, &v, read)
}

// ---------------------------------------------------------------------------------------
// `Simulation` with `engine: kai`

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
}

fn k_nanos(k: f64) -> i128 {
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
    let mut unknown = Vec::new();
    let doc: SimulationDoc = serde_ignored::deserialize(v, |p| unknown.push(p.to_string()))
        .map_err(|e: serde_json::Error| {
            Diagnostics(vec![
                Diagnostic::error(codes::INVALID_TYPE, e.to_string()).source(name),
            ])
        })?;
    for u in unknown {
        warnings.push(
            Diagnostic::warning(codes::UNKNOWN_FIELD, "unknown field")
                .source(name)
                .field(u),
        );
    }
    let mut errors = Diagnostics::default();
    if doc.api_version != "gpuquota.dev/v1alpha1" {
        warnings.push(
            Diagnostic::warning(
                codes::UNKNOWN_API_VERSION,
                format!(
                    "expected apiVersion gpuquota.dev/v1alpha1, got {:?}",
                    doc.api_version
                ),
            )
            .source(name)
            .field("apiVersion"),
        );
    }
    if doc.kind != "Simulation" {
        errors.push(
            Diagnostic::error(
                codes::UNKNOWN_KIND,
                format!("expected kind Simulation, got {:?}", doc.kind),
            )
            .source(name)
            .field("kind"),
        );
    }
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
    let mut dur = |field: &str, s: &Option<String>, default: i64, positive: bool| -> i64 {
        match s.as_deref() {
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
    };
    let session_interval_ms = dur(
        "spec.kai.sessionInterval",
        &kopts.session_interval,
        DEFAULT_SESSION_INTERVAL_MS,
        true,
    );
    let bind_latency_ms = dur("spec.kai.bindLatency", &kopts.bind_latency, 0, false);
    let usage = match &kopts.usage {
        None => None,
        Some(u) => {
            let window_size = dur(
                "spec.kai.usage.windowSize",
                &u.window_size,
                7 * 24 * 3_600_000,
                true,
            );
            let half = dur(
                "spec.kai.usage.halfLifePeriod",
                &u.half_life_period,
                0,
                false,
            );
            let fetch = dur(
                "spec.kai.usage.fetchInterval",
                &u.fetch_interval,
                DEFAULT_FETCH_INTERVAL_MS,
                true,
            );
            let resolution = dur(
                "spec.kai.usage.queryResolution",
                &u.query_resolution,
                DEFAULT_RESOLUTION_MS,
                true,
            );
            let window = match u.window_type.as_deref().unwrap_or("sliding") {
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
            };
            window.map(|window| UsageParams {
                window,
                half_life_ms: (half > 0).then_some(half),
                fetch_interval_ms: fetch,
                resolution_ms: resolution,
            })
        }
    };
    let mut files: Vec<(String, String)> = Vec::new();
    for (i, f) in spec.cluster.iter().enumerate() {
        match read(f) {
            Ok(t) => files.push(t),
            Err(d) => errors.push(d.field(format!("spec.cluster[{i}]"))),
        }
    }
    let mut traces: Vec<(String, crate::trace::Prepared)> = Vec::new();
    for (i, w) in spec.workloads.iter().enumerate() {
        match (&w.file, &w.trace) {
            (Some(f), None) => match read(f) {
                Ok(t) => files.push(t),
                Err(d) => errors.push(d.field(format!("spec.workloads[{i}].file"))),
            },
            (None, Some(t)) => {
                let field = format!("spec.workloads[{i}].trace");
                match crate::trace::prepare(t, read) {
                    Ok(p) => traces.push((field, p)),
                    Err(es) => {
                        for (f, m) in es {
                            errors.push(err(m).source(name).field(format!("{field}.{f}")));
                        }
                    }
                }
            }
            _ => errors.push(
                err(
                    "each entry of a KAI scenario needs a file or a trace (generators are Kueue's)",
                )
                .source(name)
                .field(format!("spec.workloads[{i}]")),
            ),
        }
    }
    if errors.has_errors() {
        errors.extend(warnings.0);
        errors.sort();
        return Err(errors);
    }
    let mut importer = Importer::new();
    for (n, t) in &files {
        importer.add_str(n, t);
    }
    let imported = importer.finish().map_err(|e| Diagnostics(e.0))?;
    warnings.extend(imported.warnings);
    let mut model = imported.model;
    for (field, p) in traces {
        crate::trace::apply_kai(p, &field, (start, end_ms), &mut model, &mut warnings);
    }
    let jobs = resolve_jobs(&mut model, start, end_ms, &mut errors, &mut warnings);
    if errors.has_errors() {
        errors.extend(warnings.0);
        errors.sort();
        return Err(errors);
    }
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
    })
}

/// The job units of the model (PodGroups, and pods without one), with arrivals, runtimes
/// and repeat copies.
fn resolve_jobs(
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
    let mut out = BTreeMap::new();
    let mut copies_pg = Vec::new();
    let mut copies_pod = Vec::new();
    let mut total: u64 = 0;
    for (group, pods) in &members {
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
            (None, None) => continue,
        };
        // Annotations of the PodGroup (KAI copies the top owner's), else of its first pod.
        let get = |k: &str| {
            ann.get(k)
                .or_else(|| labels.get(k))
                .or_else(|| first.and_then(|p| p.metadata.annotations.get(k)))
                .cloned()
        };
        let obj = |d: Diagnostic| d.object(kind, group.clone());
        let runtime_ms = match get(RUNTIME_ANNOTATION) {
            None => None,
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
        };
        let class = get(CLASS_KEY).unwrap_or_default();
        let created = created.unwrap_or(start);
        let created_ms = ms_between(start, created);
        out.insert(
            group.clone(),
            JobInstance {
                key: group.clone(),
                class: class.clone(),
                created_ms,
                runtime_ms,
            },
        );
        total += 1;
        let Some(p) = get(REPEAT_ANNOTATION) else {
            continue;
        };
        match (duration_ms(&p), end_ms) {
            (Some(period), Some(end)) if period > 0 => {
                let mut k = 1i64;
                while let Some(at) = period
                    .checked_mul(k)
                    .and_then(|d| created_ms.max(0).checked_add(d))
                {
                    if at >= end {
                        break;
                    }
                    total += 1;
                    if total > MAX_INSTANCES {
                        errors.push(obj(err(format!("the repeats make more than {MAX_INSTANCES} jobs: not simulated (a guard against exhausting memory)"))
                            .field(format!("metadata.annotations[{REPEAT_ANNOTATION}]"))));
                        break;
                    }
                    let when = at_ms(start, at);
                    let (ns, base) = group.split_once('/').unwrap_or(("default", group));
                    let ckey = format!("{ns}/{base}-{k}");
                    if pg.is_some() {
                        copies_pg.push((group.clone(), k, when));
                    } else {
                        copies_pod.push((group.clone(), k, when));
                    }
                    out.insert(
                        ckey.clone(),
                        JobInstance {
                            key: ckey,
                            class: class.clone(),
                            created_ms: at,
                            runtime_ms,
                        },
                    );
                    k += 1;
                }
            }
            (Some(p), None) if p > 0 => errors.push(obj(err(
                "a repeating job needs spec.end (the period repeats until the end)",
            )
            .field(format!("metadata.annotations[{REPEAT_ANNOTATION}]")))),
            _ => errors.push(obj(err(format!(
                "invalid Go duration {p:?} (a positive period such as 24h)"
            ))
            .field(format!("metadata.annotations[{REPEAT_ANNOTATION}]")))),
        }
    }
    // Copies: a PodGroup `name-k` with its pods `pod-k`, or a lone pod `name-k`.
    for (group, k, when) in copies_pg {
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
    for (key, k, when) in copies_pod {
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
    out
}

// ---------------------------------------------------------------------------------------
// KAI's time-based-fairshare simulator config

/// A case-insensitive view of a mapping (Go's `encoding/json` matches field names without
/// regard to case, and `sigs.k8s.io/yaml` decodes through it).
struct Fields<'a> {
    map: Option<&'a serde_json::Map<String, serde_json::Value>>,
    path: String,
}

impl<'a> Fields<'a> {
    fn get(&self, key: &str) -> Option<&'a serde_json::Value> {
        self.map?
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v)
            .filter(|v| !v.is_null())
    }

    fn unknown(&self, known: &[&str], source: &str, warnings: &mut Diagnostics) {
        for k in self.map.into_iter().flat_map(|m| m.keys()) {
            if !known.iter().any(|n| n.eq_ignore_ascii_case(k)) {
                warnings.push(
                    Diagnostic::warning(codes::UNKNOWN_FIELD, "unknown field")
                        .source(source)
                        .field(format!("{}{k}", self.path)),
                );
            }
        }
    }
}

fn fields<'a>(v: &'a serde_json::Value, path: String) -> Fields<'a> {
    Fields {
        map: v.as_object(),
        path,
    }
}

fn int_field(f: &Fields<'_>, key: &str, source: &str, errors: &mut Diagnostics) -> Option<i64> {
    let v = f.get(key)?;
    match v.as_i64() {
        Some(i) => Some(i),
        None => {
            errors.push(
                Diagnostic::error(codes::INVALID_TYPE, format!("expected an integer, got {v}"))
                    .source(source)
                    .field(format!("{}{key}", f.path)),
            );
            None
        }
    }
}

fn float_field(f: &Fields<'_>, key: &str, source: &str, errors: &mut Diagnostics) -> Option<f64> {
    let v = f.get(key)?;
    match v.as_f64() {
        Some(x) => Some(x),
        None => {
            errors.push(
                Diagnostic::error(codes::INVALID_TYPE, format!("expected a number, got {v}"))
                    .source(source)
                    .field(format!("{}{key}", f.path)),
            );
            None
        }
    }
}

fn str_field(f: &Fields<'_>, key: &str) -> String {
    f.get(key)
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_owned()
}

/// The most nodes, queues and jobs a simulator config may declare.
const MAX_OBJECTS: i64 = 1_000_000;

fn timeaware(name: &str, stem: &str, v: &serde_json::Value) -> Result<KaiScenario, Diagnostics> {
    let mut warnings = Diagnostics::default();
    let mut errors = Diagnostics::default();
    let top = fields(v, String::new());
    top.unknown(&TIMEAWARE_KEYS, name, &mut warnings);
    // Defaults as `TimeAwareSimulation.SetDefaults` (kai-scheduler/KAI-Scheduler:
    // pkg/env-tests/timeaware/timeaware.go).
    let cycles = int_field(&top, "Cycles", name, &mut errors).unwrap_or(100);
    let window = int_field(&top, "WindowSize", name, &mut errors).unwrap_or(5);
    let half = int_field(&top, "HalfLifePeriod", name, &mut errors).unwrap_or(0);
    let k = float_field(&top, "KValue", name, &mut errors).unwrap_or(1.0);
    if !(0..=10_000_000).contains(&cycles) {
        errors.push(
            err("must be between 0 and 10,000,000")
                .source(name)
                .field("Cycles"),
        );
    }
    if window <= 0 || window > 10_000_000 {
        errors.push(
            err("must be a positive number of cycles (at most 10,000,000)")
                .source(name)
                .field("WindowSize"),
        );
    }
    if half > 10_000_000 {
        errors.push(
            err("at most 10,000,000 cycles")
                .source(name)
                .field("HalfLifePeriod"),
        );
    }
    let mut docs: Vec<serde_json::Value> = Vec::new();
    let mut queue_order = Vec::new();
    let empty = Vec::new();
    let queues = top
        .get("Queues")
        .and_then(|q| q.as_array())
        .unwrap_or(&empty);
    for (i, q) in queues.iter().enumerate() {
        let f = fields(q, format!("Queues[{i}]."));
        f.unknown(
            &["Name", "Parent", "Priority", "DeservedGPUs", "Weight"],
            name,
            &mut warnings,
        );
        let qname = str_field(&f, "Name");
        if qname.is_empty() {
            errors.push(
                err("required")
                    .source(name)
                    .field(format!("Queues[{i}].Name")),
            );
            continue;
        }
        let parent = str_field(&f, "Parent");
        let priority = int_field(&f, "Priority", name, &mut errors).unwrap_or(100);
        let deserved = float_field(&f, "DeservedGPUs", name, &mut errors).unwrap_or(0.0);
        let weight = float_field(&f, "Weight", name, &mut errors).unwrap_or(1.0);
        let mut spec = serde_json::json!({
            "priority": priority,
            // Upstream replaces the whole resources block with the GPU entry: CPU and memory
            // keep Go's zero values.
            "resources": {
                "gpu": {"quota": deserved, "overQuotaWeight": weight, "limit": -1},
                "cpu": {"quota": 0, "overQuotaWeight": 0, "limit": 0},
                "memory": {"quota": 0, "overQuotaWeight": 0, "limit": 0},
            },
        });
        if !parent.is_empty() {
            spec["parentQueue"] = parent.into();
        }
        docs.push(serde_json::json!({
            "apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
            "metadata": {"name": qname}, "spec": spec,
        }));
        queue_order.push(qname);
    }
    let nodes = top
        .get("Nodes")
        .and_then(|q| q.as_array())
        .unwrap_or(&empty);
    let mut node_names: BTreeMap<i64, usize> = BTreeMap::new();
    let mut node_count: i64 = 0;
    for (i, n) in nodes.iter().enumerate() {
        let f = fields(n, format!("Nodes[{i}]."));
        f.unknown(&["GPUs", "Count"], name, &mut warnings);
        let gpus = int_field(&f, "GPUs", name, &mut errors).unwrap_or(0);
        let count = int_field(&f, "Count", name, &mut errors).unwrap_or(0);
        if gpus < 0 || count < 0 {
            errors.push(
                err("must not be negative")
                    .source(name)
                    .field(format!("Nodes[{i}]")),
            );
            continue;
        }
        node_count += count;
        if node_count > MAX_OBJECTS {
            errors.push(
                err("more than 1,000,000 nodes: not simulated")
                    .source(name)
                    .field("Nodes"),
            );
            break;
        }
        for _ in 0..count {
            let seen = node_names.entry(gpus).or_insert(0);
            let nname = if *seen == 0 {
                format!("test-node-{gpus}")
            } else {
                format!("test-node-{gpus}-{seen}")
            };
            *seen += 1;
            docs.push(serde_json::json!({
                "apiVersion": "v1", "kind": "Node", "metadata": {"name": nname},
                "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "nvidia.com/gpu": gpus.to_string()},
                           "capacity": {"cpu": "8", "memory": "16Gi", "nvidia.com/gpu": gpus.to_string()}},
            }));
        }
    }
    let mut jobs = BTreeMap::new();
    let jobs_v = top.get("Jobs");
    let mut total: i64 = 0;
    if let Some(m) = jobs_v.and_then(|j| j.as_object()) {
        for (queue, spec) in m {
            let f = fields(spec, format!("Jobs.{queue}."));
            f.unknown(&["GPUs", "NumPods", "NumJobs"], name, &mut warnings);
            let gpus = int_field(&f, "GPUs", name, &mut errors).unwrap_or(0);
            let pods = int_field(&f, "NumPods", name, &mut errors).unwrap_or(0);
            let n = int_field(&f, "NumJobs", name, &mut errors).unwrap_or(0);
            if gpus < 0 || pods < 0 || n < 0 {
                errors.push(
                    err("must not be negative")
                        .source(name)
                        .field(format!("Jobs.{queue}")),
                );
                continue;
            }
            total = total.saturating_add(n.saturating_mul(pods.max(1)));
            if total > MAX_OBJECTS {
                errors.push(
                    err("more than 1,000,000 pods: not simulated")
                        .source(name)
                        .field("Jobs"),
                );
                break;
            }
            for j in 0..n {
                let pg = format!("{queue}-{j}");
                docs.push(serde_json::json!({
                    "apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
                    "metadata": {"name": pg, "namespace": "simulation",
                                 "creationTimestamp": Timestamp::EPOCH.to_string()},
                    "spec": {"queue": queue, "minMember": 1},
                }));
                for p in 0..pods {
                    docs.push(serde_json::json!({
                        "apiVersion": "v1", "kind": "Pod",
                        "metadata": {"name": format!("{pg}-{p}"), "namespace": "simulation",
                                     "creationTimestamp": Timestamp::EPOCH.to_string(),
                                     "annotations": {POD_GROUP_ANNOTATION: pg}},
                        "spec": {"schedulerName": "kai-scheduler", "containers": [{"name": "ubuntu-container",
                                 "resources": {"limits": {"nvidia.com/gpu": gpus.to_string()}}}]},
                        "status": {"phase": "Pending"},
                    }));
                }
                let key = format!("simulation/{pg}");
                jobs.insert(
                    key.clone(),
                    JobInstance {
                        key,
                        class: queue.clone(),
                        created_ms: 0,
                        runtime_ms: None,
                    },
                );
            }
        }
    } else if jobs_v.is_some() {
        errors.push(
            Diagnostic::error(
                codes::INVALID_TYPE,
                "expected a mapping from queue name to jobs",
            )
            .source(name)
            .field("Jobs"),
        );
    }
    if errors.has_errors() {
        errors.extend(warnings.0);
        errors.sort();
        return Err(errors);
    }
    let mut text = String::new();
    for d in &docs {
        text.push_str("---\n");
        text.push_str(&serde_json::to_string(d).unwrap_or_default());
        text.push('\n');
    }
    let imported = gpuquota_model::import_str(&format!("{name} (generated)"), &text)
        .map_err(|e| Diagnostics(e.0))?;
    warnings.extend(imported.warnings);
    let cycle = TIMEAWARE_CYCLE_MS;
    Ok(KaiScenario {
        name: stem.to_owned(),
        source: Source::TimeAware,
        start: Timestamp::EPOCH,
        end_ms: Some(cycles * cycle),
        session_interval_ms: cycle,
        bind_latency_ms: 0,
        resume: false,
        k_value: k_nanos(k),
        usage: Some(UsageParams {
            window: Window::Sliding {
                size_ms: window * cycle,
            },
            half_life_ms: (half > 0).then_some(half * cycle),
            fetch_interval_ms: cycle,
            resolution_ms: cycle,
        }),
        model: imported.model,
        jobs,
        queue_order,
        warnings,
        metering: None,
    })
}
