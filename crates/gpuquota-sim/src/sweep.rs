//! Parameter sweeps: one scenario, the cartesian product of `--set PATH=v1,v2,…` values, each
//! run simulated deterministically and summarised as one row of a table.
//!
//! - `PATH` is a dotted path into the scenario's `spec` (`engine`, `kueue.fairSharing`,
//!   `kueue.cycleLatency`, `resume`, `end`, …); for Kueue's perf-generator config, into the
//!   document itself. Each value is read as a YAML scalar (`true`, `4`, `10s`); `A..B`
//!   (integers) stands for every integer from A to B inclusive.
//! - Runs are numbered in the product's order, the first `--set` varying slowest; they run in
//!   parallel (rayon) and the table is in run order whatever the thread count.
//! - `shard: (I, N)` keeps the I-th (0-based, so a Kubernetes Indexed Job's
//!   `JOB_COMPLETION_INDEX`) of N contiguous slices of the runs; [`merge`] joins the shards'
//!   tables into the table of the unsharded sweep, byte for byte.
//!
//! Table (JSON, [`Table::to_json`]): `{"parameters": [PATH…], "runs": total, ["shard":
//! {"index", "count"}], "rows": [{"run", "parameters": {PATH: value}, "engine",
//! "meanUsagePercent", "gpuHours", "lostGpuHours", "preemptions", "timeToAdmissionMs":
//! {class: mean}, "warnings"}]}`:
//! - `meanUsagePercent`: the mean of the report's `queues[].meanUsagePercent` (0 without
//!   queues), rounded to 0.1;
//! - `gpuHours`: Σ over runs of `nvidia.com/gpu` usage × duration, in GPU-hours (0.001);
//! - `lostGpuHours`: the same over `Preempted` runs only (the work a preemption throws away
//!   when runtimes restart);
//! - `preemptions`, `timeToAdmissionMs` (each class's `meanTimeToAdmissionMs`), `warnings`
//!   (how many) as in the report.
//!
//! CSV ([`Table::to_csv`]): `run`, the parameters, `engine,meanUsagePercent,gpuHours,
//! lostGpuHours,preemptions` (less any swept under the same name), then `timeToAdmissionMs.<class>` for every class of any row
//! (sorted; empty where a run has no such class), then `warnings`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use gpuquota_model::diag::{Diagnostic, Diagnostics};
use indexmap::IndexMap;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::scenario::{self, INVALID_SCENARIO};

/// A file reader usable from every thread (see [`scenario::ReadFn`]).
pub type SyncReadFn<'a> = dyn Fn(&str) -> Result<(String, String), Diagnostic> + Sync + 'a;

/// A cache of file reads: display name and text, or the read's diagnostic.
type ReadCache = Mutex<BTreeMap<String, Result<(String, String), Diagnostic>>>;

/// One `--set PATH=v1,v2`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Axis {
    /// The dotted path.
    pub path: String,
    /// The values, as written.
    pub values: Vec<String>,
}

impl Axis {
    /// Parses `PATH=v1,v2,…` (`A..B` expands to integers).
    ///
    /// ```
    /// let a = gpuquota_sim::sweep::Axis::parse("seed=1..3").unwrap();
    /// assert_eq!(a.values, ["1", "2", "3"]);
    /// ```
    ///
    /// # Errors
    /// No `=`, an empty path or value list, or a range of more than 100,000 values.
    pub fn parse(s: &str) -> Result<Axis, String> {
        let (path, vals) = s
            .split_once('=')
            .ok_or_else(|| format!("--set {s:?}: expected PATH=v1,v2,…"))?;
        if path.is_empty() || path.split('.').any(str::is_empty) {
            return Err(format!("--set {s:?}: an empty path segment"));
        }
        let mut values = Vec::new();
        for v in vals.split(',') {
            if let Some((Ok(a), Ok(b))) = v
                .split_once("..")
                .map(|(a, b)| (a.parse::<i64>(), b.parse::<i64>()))
            {
                if b < a || b - a >= 100_000 {
                    return Err(format!("--set {s:?}: range {v} is empty or too long"));
                }
                values.extend((a..=b).map(|i| i.to_string()));
                continue;
            }
            values.push(v.to_owned());
        }
        if values.iter().any(String::is_empty) {
            return Err(format!("--set {s:?}: an empty value"));
        }
        Ok(Axis {
            path: path.to_owned(),
            values,
        })
    }
}

/// The parameters of run `i` (0-based) of the product of `axes`.
pub fn run_parameters(axes: &[Axis], mut i: usize) -> Vec<(String, String)> {
    let mut out = vec![(String::new(), String::new()); axes.len()];
    for (k, a) in axes.iter().enumerate().rev() {
        let n = a.values.len().max(1);
        out[k] = (a.path.clone(), a.values[i % n].clone());
        i /= n;
    }
    out
}

/// One row of the table: one run's summary (module docs). A column is one field here
/// (and one name in [`Table::to_csv`]'s column list).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Row {
    /// The run's number (0-based, the product's order).
    pub run: usize,
    /// The run's value of each swept path, in `--set` order, as written.
    pub parameters: IndexMap<String, String>,
    /// The report's `engine`.
    pub engine: String,
    /// The mean of the report's `queues[].meanUsagePercent` (0 without queues), rounded to
    /// 0.1.
    pub mean_usage_percent: f64,
    /// Σ over runs of `nvidia.com/gpu` usage × duration, GPU-hours rounded to 0.001.
    pub gpu_hours: f64,
    /// The same over `Preempted` runs only, GPU-hours rounded to 0.001.
    pub lost_gpu_hours: f64,
    /// The report's `preemptions`.
    pub preemptions: u64,
    /// Each class's `meanTimeToAdmissionMs`, in class order.
    pub time_to_admission_ms: BTreeMap<String, i64>,
    /// How many warnings the run's report has.
    pub warnings: usize,
}

/// The `shard` of a sharded table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Shard {
    /// The shard's index, 0-based.
    pub index: usize,
    /// The number of shards.
    pub count: usize,
}

/// A sweep's table (or one shard of it): what `gpuquota sim sweep` and `gpuquota sim merge`
/// print as JSON (`gpuquota schema sim-sweep` prints its JSON Schema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Table {
    /// The swept paths, in `--set` order.
    pub parameters: Vec<String>,
    /// Runs in the whole sweep.
    pub runs: usize,
    /// Which shard this table is; absent for the whole sweep.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub shard: Option<Shard>,
    /// Rows in run order.
    pub rows: Vec<Row>,
}

fn yaml_scalar(v: &str) -> Value {
    match serde_saphyr::from_str::<Value>(v) {
        Ok(x @ (Value::Bool(_) | Value::Number(_) | Value::String(_))) => x,
        _ => Value::String(v.to_owned()),
    }
}

fn set_path(doc: &mut Value, path: &str, value: Value) -> Result<(), String> {
    let mut cur = doc;
    let segs: Vec<&str> = path.split('.').collect();
    for (k, seg) in segs.iter().enumerate() {
        let Value::Object(m) = cur else {
            return Err(format!("{path}: {} is not a mapping", segs[..k].join(".")));
        };
        if k + 1 == segs.len() {
            m.insert((*seg).to_owned(), value);
            return Ok(());
        }
        cur = m
            .entry((*seg).to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    Ok(())
}

fn round(x: f64, scale: f64) -> f64 {
    (x * scale).round() / scale
}

fn gpu_ms(usage: &crate::report::UsageOut) -> f64 {
    usage
        .values()
        .filter_map(|r| r.get("nvidia.com/gpu"))
        .filter_map(|q| gpuquota_model::Quantity::parse(q).ok()?.scaled_ceil(3))
        .map(|m| m as f64 / 1000.0)
        .sum()
}

/// Summarises a report as a row (see the module docs).
///
/// # Complexity
/// O(runs × flavors + queues + classes).
pub fn summarise(run: usize, params: &[(String, String)], report: &crate::SimReport) -> Row {
    let mut gpu_hours = 0.0;
    let mut lost = 0.0;
    for w in &report.workloads {
        for r in &w.runs {
            let d = (r.end_ms - r.start_ms) as f64;
            let h = gpu_ms(&r.usage) * d / 3_600_000.0;
            gpu_hours += h;
            if r.end == crate::report::RunEndOut::Preempted {
                lost += h;
            }
        }
    }
    let usages: Vec<f64> = report
        .queues
        .values()
        .map(|q| q.mean_usage_percent)
        .filter(|x| x.is_finite())
        .collect();
    let mean_usage = if usages.is_empty() {
        0.0
    } else {
        usages.iter().sum::<f64>() / usages.len() as f64
    };
    Row {
        run,
        parameters: params.iter().cloned().collect(),
        engine: report.engine.as_str().to_owned(),
        mean_usage_percent: round(mean_usage, 10.0),
        gpu_hours: round(gpu_hours, 1000.0),
        lost_gpu_hours: round(lost, 1000.0),
        preemptions: report.preemptions,
        time_to_admission_ms: report
            .classes
            .iter()
            .map(|(c, s)| (c.clone(), s.mean_time_to_admission_ms))
            .collect(),
        warnings: report.warnings.len(),
    }
}

/// The runs of shard `(index, count)` of `total`: contiguous, the first `total % count`
/// shards one longer.
pub fn shard_range(total: usize, index: usize, count: usize) -> std::ops::Range<usize> {
    let count = count.max(1);
    let base = total / count;
    let extra = total % count;
    let start = index * base + index.min(extra);
    let len = base + usize::from(index < extra);
    start.min(total)..(start + len).min(total)
}

/// Runs a sweep of the scenario text `text` (display name `name`, file stem `stem`; `read`
/// loads the files it names, each once).
///
/// # Errors
/// A scenario that does not parse, a path that does not apply, or a run whose scenario or
/// simulation fails (the diagnostics name the run and its parameters).
///
/// # Complexity
/// runs × one simulation, spread over rayon's threads.
pub fn run(
    name: &str,
    text: &str,
    stem: &str,
    axes: &[Axis],
    shard: Option<(usize, usize)>,
    read: &SyncReadFn<'_>,
) -> Result<Table, Diagnostics> {
    let doc: Value = serde_saphyr::from_str(text).map_err(|e| {
        Diagnostics(vec![
            Diagnostic::error(gpuquota_model::diag::codes::MALFORMED, e.to_string()).source(name),
        ])
    })?;
    let nested = doc.get("kind").is_some();
    let total = axes
        .iter()
        .try_fold(1usize, |n, a| n.checked_mul(a.values.len()))
        .filter(|n| *n <= 10_000_000)
        .ok_or_else(|| {
            Diagnostics(vec![Diagnostic::error(
                INVALID_SCENARIO,
                "more than 10,000,000 runs: not swept",
            )])
        })?;
    if let Some((i, n)) = shard
        && (n == 0 || i >= n)
    {
        {
            return Err(Diagnostics(vec![Diagnostic::error(
                INVALID_SCENARIO,
                format!("--shard {i}/{n}: expected I/N with 0 ≤ I < N"),
            )]));
        }
    }
    let range = shard.map_or(0..total, |(i, n)| shard_range(total, i, n));
    let cache: ReadCache = Mutex::new(BTreeMap::new());
    let cached = |f: &str| -> Result<(String, String), Diagnostic> {
        if let Some(r) = cache.lock().ok().and_then(|c| c.get(f).cloned()) {
            return r;
        }
        let r = read(f);
        if let Ok(mut c) = cache.lock() {
            c.insert(f.to_owned(), r.clone());
        }
        r
    };
    let results: Vec<Result<Row, Diagnostics>> = range
        .into_par_iter()
        .map(|i| {
            let params = run_parameters(axes, i);
            let label = params
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" ");
            let tag = |mut d: Diagnostics| {
                for x in &mut d.0 {
                    x.message = format!("run {i} ({label}): {}", x.message);
                }
                d
            };
            let mut d = doc.clone();
            for (k, v) in &params {
                let target = if nested {
                    d.as_object_mut()
                        .map(|m| m.entry("spec").or_insert_with(|| Value::Object(Map::new())))
                } else {
                    Some(&mut d)
                };
                let Some(t) = target else {
                    return Err(tag(Diagnostics(vec![Diagnostic::error(
                        INVALID_SCENARIO,
                        "the scenario is not a mapping",
                    )])));
                };
                set_path(t, k, yaml_scalar(v)).map_err(|m| {
                    tag(Diagnostics(vec![
                        Diagnostic::error(INVALID_SCENARIO, m).field(k.clone()),
                    ]))
                })?;
            }
            let t = serde_json::to_string(&d).unwrap_or_default();
            let sc = scenario::from_str(name, &t, stem, &cached).map_err(tag)?;
            let report = crate::simulate(&sc).map_err(tag)?;
            if report.diagnostics.has_errors() {
                return Err(tag(report.diagnostics.clone()));
            }
            Ok(summarise(i, &params, &report.to_output()))
        })
        .collect();
    let mut rows = Vec::new();
    let mut errors = Diagnostics::default();
    for r in results {
        match r {
            Ok(row) => rows.push(row),
            Err(d) => errors.extend(d.0),
        }
    }
    if errors.has_errors() {
        return Err(errors);
    }
    Ok(Table {
        parameters: axes.iter().map(|a| a.path.clone()).collect(),
        runs: total,
        shard: shard.map(|(index, count)| Shard { index, count }),
        rows,
    })
}

impl Table {
    /// The table as a [`serde_json::Value`] (for reading fields).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Pretty JSON with a final newline.
    pub fn to_json_string(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Reads a table back from its JSON.
    ///
    /// # Errors
    /// A message naming what is missing or mistyped.
    pub fn from_json(v: &Value) -> Result<Table, String> {
        Table::deserialize(v).map_err(|e| e.to_string())
    }

    /// The table as CSV (see the module docs).
    pub fn to_csv(&self) -> String {
        let classes: BTreeSet<String> = self
            .rows
            .iter()
            .flat_map(|r| r.time_to_admission_ms.keys().cloned())
            .collect();
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut head: Vec<String> = vec!["run".into()];
        head.extend(self.parameters.iter().cloned());
        // a result column named like a swept parameter (`engine`) is the parameter's column
        let results: Vec<&str> = [
            "engine",
            "meanUsagePercent",
            "gpuHours",
            "lostGpuHours",
            "preemptions",
        ]
        .into_iter()
        .filter(|k| !self.parameters.iter().any(|p| p == k))
        .collect();
        head.extend(results.iter().map(|k| (*k).to_owned()));
        head.extend(classes.iter().map(|c| format!("timeToAdmissionMs.{c}")));
        head.push("warnings".into());
        let _ = w.write_record(&head);
        let text = |v: &Value| match v {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        };
        for r in &self.rows {
            let j = serde_json::to_value(r).unwrap_or(Value::Null);
            let j = &j;
            let mut rec: Vec<String> = vec![r.run.to_string()];
            rec.extend(self.parameters.iter().map(|p| text(&j["parameters"][p])));
            for k in &results {
                rec.push(text(&j[*k]));
            }
            rec.extend(classes.iter().map(|c| text(&j["timeToAdmissionMs"][c])));
            rec.push(text(&j["warnings"]));
            let _ = w.write_record(&rec);
        }
        String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
    }
}

/// Joins shard tables into the unsharded table.
///
/// # Errors
/// Shards of different sweeps (parameters or run counts differ), a missing or repeated run.
///
/// # Complexity
/// O(rows log rows).
pub fn merge(shards: Vec<Table>) -> Result<Table, String> {
    let Some(first) = shards.first() else {
        return Err("no shard to merge".into());
    };
    let parameters = first.parameters.clone();
    let runs = first.runs;
    let mut rows: Vec<Row> = Vec::new();
    for s in shards {
        if s.parameters != parameters || s.runs != runs {
            return Err(
                "the shards come from different sweeps (parameters or run counts differ)".into(),
            );
        }
        rows.extend(s.rows);
    }
    rows.sort_by_key(|r| r.run);
    for (i, r) in rows.iter().enumerate() {
        if r.run != i {
            return Err(if r.run < i {
                format!("run {} appears twice", r.run)
            } else {
                format!("run {i} is missing")
            });
        }
    }
    if rows.len() != runs {
        return Err(format!("run {} is missing", rows.len()));
    }
    Ok(Table {
        parameters,
        runs,
        shard: None,
        rows,
    })
}

/// A Kubernetes Indexed Job running the sweep's N shards as N pods, admitted by Kueue
/// through the LocalQueue `queue` (label `kueue.x-k8s.io/queue-name`). Each pod runs
/// `gpuquota sim sweep /scenario/FILE --set … --shard $(JOB_COMPLETION_INDEX)/N` (the kubelet
/// expands `$(JOB_COMPLETION_INDEX)`, which Indexed Jobs set per pod) and prints its shard's
/// JSON table; the scenario directory is the ConfigMap `<name>-scenario` mounted at
/// `/scenario` (`kubectl create configmap <name>-scenario --from-file=DIR`). Collect the
/// pods' logs and join them with `gpuquota sim merge`.
#[allow(clippy::too_many_arguments)]
pub fn indexed_job(
    name: &str,
    namespace: &str,
    queue: &str,
    image: &str,
    file: &str,
    axes: &[Axis],
    shards: usize,
) -> IndexedJob {
    let mut args: Vec<String> = vec!["sim".into(), "sweep".into(), format!("/scenario/{file}")];
    for a in axes {
        args.push("--set".into());
        args.push(format!("{}={}", a.path, a.values.join(",")));
    }
    args.push("--shard".into());
    args.push(format!("$(JOB_COMPLETION_INDEX)/{shards}"));
    let mut labels = BTreeMap::new();
    labels.insert("kueue.x-k8s.io/queue-name".to_owned(), queue.to_owned());
    IndexedJob {
        api_version: "batch/v1",
        kind: "Job",
        metadata: JobMeta {
            name: name.to_owned(),
            namespace: namespace.to_owned(),
            labels,
        },
        spec: JobSpec {
            completion_mode: "Indexed",
            completions: shards,
            parallelism: shards,
            suspend: true,
            template: PodTemplate {
                spec: PodSpec {
                    restart_policy: "Never",
                    containers: vec![Container {
                        name: "sweep",
                        image: image.to_owned(),
                        command: vec!["gpuquota"],
                        args,
                        resources: Resources {
                            requests: Requests {
                                cpu: "1",
                                memory: "1Gi",
                            },
                        },
                        volume_mounts: vec![VolumeMount {
                            name: "scenario",
                            mount_path: "/scenario",
                            read_only: true,
                        }],
                    }],
                    volumes: vec![Volume {
                        name: "scenario",
                        config_map: ConfigMapRef {
                            name: format!("{name}-scenario"),
                        },
                    }],
                },
            },
        },
    }
}

/// The Indexed Job of [`indexed_job`], serialised with Kubernetes' field names in the order
/// `kubectl` prints them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexedJob {
    api_version: &'static str,
    kind: &'static str,
    metadata: JobMeta,
    spec: JobSpec,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct JobMeta {
    name: String,
    namespace: String,
    labels: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
struct JobSpec {
    completion_mode: &'static str,
    completions: usize,
    parallelism: usize,
    suspend: bool,
    template: PodTemplate,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct PodTemplate {
    spec: PodSpec,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
struct PodSpec {
    restart_policy: &'static str,
    containers: Vec<Container>,
    volumes: Vec<Volume>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
struct Container {
    name: &'static str,
    image: String,
    command: Vec<&'static str>,
    args: Vec<String>,
    resources: Resources,
    volume_mounts: Vec<VolumeMount>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct Resources {
    requests: Requests,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct Requests {
    cpu: &'static str,
    memory: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
struct VolumeMount {
    name: &'static str,
    mount_path: &'static str,
    read_only: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
struct Volume {
    name: &'static str,
    config_map: ConfigMapRef,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct ConfigMapRef {
    name: String,
}

/// A manifest as YAML (`---` first), for [`indexed_job`].
///
/// # Errors
/// The serializer's message.
pub fn to_yaml<T: Serialize>(v: &T) -> Result<String, String> {
    serde_saphyr::to_string(v)
        .map(|s| format!("---\n{s}"))
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_parameters_enumerate_the_product_first_axis_slowest() {
        let axes = [
            Axis::parse("a=1,2").unwrap(),
            Axis::parse("b=x,y,z").unwrap(),
        ];
        let all: Vec<String> = (0..6)
            .map(|i| {
                run_parameters(&axes, i)
                    .iter()
                    .map(|(_, v)| v.as_str())
                    .collect::<Vec<_>>()
                    .join("")
            })
            .collect();
        assert_eq!(all, ["1x", "1y", "1z", "2x", "2y", "2z"]);
    }

    #[test]
    fn shard_ranges_cover_every_run_once() {
        for total in 0..20 {
            for n in 1..7 {
                let mut next = 0;
                for i in 0..n {
                    let r = shard_range(total, i, n);
                    assert_eq!(r.start, next);
                    next = r.end;
                }
                assert_eq!(next, total);
            }
        }
    }

    #[test]
    fn axis_errors() {
        assert!(Axis::parse("novalue").is_err());
        assert!(Axis::parse("a..b=1").is_err());
        assert!(Axis::parse("a=1,").is_err());
        assert!(Axis::parse("a=5..1").is_err());
    }
}
