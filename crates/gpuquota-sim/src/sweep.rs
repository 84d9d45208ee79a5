//! Parameter sweeps: one scenario, the cartesian product of `--set PATH=v1,v2,…` values, each
//! run simulated deterministically and summarised as one row of a table.
//!
//! - `PATH` is a dotted path into the scenario's `spec` (`engine`, `kueue.fairSharing`,
//!   `kueue.cycleLatency`, `resume`, `end`, `kai.sessionInterval`, …); for Kueue's
//!   perf-generator config, into the document itself. Each value is read as a YAML scalar
//!   (`true`, `4`, `10s`); `A..B` (64-bit integers) stands for every integer from A to B
//!   inclusive. A path the scenario's reader does not know (a misspelt field, or a field
//!   under one it does not know) is an error naming the path ([`UNKNOWN_PATH`]), found on
//!   the shard's first run before the others start; paths into `spec.metering` are checked
//!   by the bill's reader, as warnings of each run. Each path may be given once.
//! - Limits, checked before anything is expanded or run ([`parse_axes`], [`parse_threads`],
//!   [`parse_shard`], [`parse_shard_count`]), each refusal naming the number and the limit:
//!   at most [`MAX_RUNS`] (1,000,000) runs, the product of the value counts; at most
//!   [`MAX_THREADS`] (1,024) threads; at most [`MAX_SHARDS`] (100,000) shards, Kubernetes'
//!   limit on an Indexed Job's completions. Every count is computed with checked arithmetic.
//! - KAI scenarios (`engine: kai`, KAI's simulator config) are swept as the others; their
//!   rows are read from the KAI report (below). `clusterQueues.`, `cohorts.` and
//!   `resourceQuotas.` paths are Kueue's (and ResourceQuota's) only, `queues.` paths KAI's
//!   only; a path of the other engine is an error naming it.
//! - `clusterQueues.CQ[.FLAVOR[.RESOURCE]].FIELD` edits a quota of the ClusterQueue `CQ` of the
//!   cluster files after they are read ([`set_cluster_queue`]): `FIELD` is `nominalQuota`,
//!   `borrowingLimit` or `lendingLimit`, the value a Kubernetes quantity (`4`, `500m`), or
//!   `none` to unset a limit (unlimited borrowing, all of it lendable). `FLAVOR` is one path
//!   segment; `RESOURCE` is the rest (so it may contain dots: `nvidia.com/gpu`). Without them
//!   the path names the ClusterQueue's only flavor and resource, and is an error naming the
//!   choices when there are several (`clusterQueues.batch.borrowingLimit=0,4,8`,
//!   `clusterQueues.batch.h100.nvidia.com/gpu.nominalQuota=8,16`).
//! - `nodes.NODE.count` makes the cluster files' Node `NODE` N servers alike
//!   ([`set_node_count`]): copies `NODE-2` … `NODE-N` with its labels and allocatable
//!   (hostname label renamed), or none at all for 0; at most [`NODE_COUNT_LIMIT`].
//! - `clusterQueues.CQ.fairSharing.weight` and `cohorts.COHORT.fairSharing.weight` set the
//!   fair-sharing weight (a non-negative quantity: `2`, `500m`) of the ClusterQueue or the
//!   Cohort object of the cluster files, after they are read ([`set_model`] applies every
//!   such model edit; [`set_cohort_weight`]).
//! - `resourceQuotas.NAMESPACE.NAME.hard.RESOURCE` sets a hard cap of a ResourceQuota of the
//!   cluster files (`resourceQuotas.research.gpu-cap.hard.requests.nvidia.com/gpu=4,8`;
//!   [`set_resource_quota`]), for the `resourcequota` engine and Kueue's alike.
//! - `queues.QUEUE.RESOURCE.FIELD` and `queues.QUEUE.priority` set a field of the KAI Queue
//!   `QUEUE` of the cluster files, named as KAI's Queue CRD names them
//!   (`spec.resources.RESOURCE.FIELD`, `spec.priority`): `RESOURCE` is `gpu`, `cpu` or
//!   `memory`, `FIELD` is `quota`, `limit` or `overQuotaWeight`, the value a decimal
//!   (`-1`: unlimited quota or limit) or, for `priority`, a whole number
//!   (`queues.team-a.gpu.quota=4,8`, `queues.batch.gpu.limit=-1,12`; [`set_kai_queue`]).
//! - `timeline[N].at` and `timeline[N].patch[M].mergePatch.FIELD…` set the instant of
//!   event `N` of `spec.timeline` and any value of its merge patch `M`, before the scenario
//!   is read ([`crate::timeline::set`]): `--set timeline[0].at=36h,48h`,
//!   `--set timeline[0].patch[0].mergePatch.spec.stopPolicy=Hold,HoldAndDrain`; the event
//!   is then checked as any timeline (an instant outside the run is an error of the run).
//! - `seed` sets `seed` of every generated trace (`spec.workloads[].trace.generate`, see
//!   [`crate::trace`]): `--set seed=1..20` replays twenty draws of the same trace shape. A
//!   scenario without a generated trace has nothing seeded and the sweep is refused: Kueue's
//!   perf generator (`cohorts:`, `generator:`) is deterministic, with no seed to vary, and
//!   the message says so and shows a generated trace to use instead.
//! - Runs are numbered in the product's order, the first `--set` varying slowest; they run in
//!   parallel (rayon; [`Options::threads`] or `RAYON_NUM_THREADS` sets the thread count) and
//!   the table is in run order whatever the thread count.
//! - `shard: (I, N)` keeps the I-th (0-based, so a Kubernetes Indexed Job's
//!   `JOB_COMPLETION_INDEX`) of N contiguous slices of the runs; [`merge`] joins the shards'
//!   tables into the table of the unsharded sweep, byte for byte, and refuses shards whose
//!   fingerprints say they come from different sweeps ([`merge_named`]).
//! - [`manifests`] writes what runs the shards on a cluster: the ConfigMap with the scenario
//!   and every file it reads ([`scenario_files`]), the Indexed Job mounting it, and how to
//!   collect and merge the pods' tables.
//!
//! Table (JSON, [`Table::to_json`]): `{"parameters": [PATH…], "runs": total, ["shard":
//! {"index", "count"}], "fingerprint": {"scenario", "grid", "files": {FILE: digest}},
//! "rows": [{"run", "parameters": {PATH: value}, "engine", "meanUsagePercent", "gpuHours",
//! "lostGpuHours", "preemptions", "timeToAdmissionMs": {class: mean}, ["cost"],
//! "warnings"}]}`:
//! - `fingerprint` ([`Fingerprint`]): SHA-256 digests, lower-case hex, of the scenario
//!   file's bytes, of the grid (paths and values in run order, [`grid_fingerprint`]) and of
//!   every file the runs read, by the name the scenario gives it; a merged table's `files`
//!   are those of all its shards;
//! - `meanUsagePercent`: the mean of the report's `queues[].meanUsagePercent` over the
//!   queues that have one (a queue with no nominal quota has `null` there and is left out;
//!   0 without any), rounded to 0.1; for a KAI run, the mean over leaf queues (with a positive fair
//!   share) of `meanAllocatedGpu` as a percent of the queue's mean `fairShare`;
//! - `gpuHours`: Σ over runs of `nvidia.com/gpu` usage (KAI: `gpu`) × duration, in
//!   GPU-hours (0.001);
//! - `lostGpuHours`: the same over `Preempted` (KAI: `Evicted`) runs only (the work a
//!   preemption throws away when runtimes restart);
//! - `preemptions`, `timeToAdmissionMs` (each class's `meanTimeToAdmissionMs`), `warnings`
//!   (how many) as in the report;
//! - `cost`, only when the scenario has `spec.metering` (the report's `chargeback`, see
//!   [`crate::bill`]): `{"currency", "total", "departments": {department: amount}}`, each
//!   department's amount the sum of its chargeback lines' `total` (cost plus idle share) over
//!   card types, summed exactly as decimals, `total` the sum over departments.
//!
//! CSV ([`Table::to_csv`]): `run`, the parameters, `engine,meanUsagePercent,gpuHours,
//! lostGpuHours,preemptions` (less any swept under the same name), then `timeToAdmissionMs.<class>` for every class of any row
//! (sorted; empty where a run has no such class), then — when any row has a cost —
//! `currency`, `cost.<department>` for every department of any row (sorted) and `cost`
//! (the total), then `warnings`.
//!
//! SVG ([`Table::svg`]): one column per run, labelled with its swept values: the mean
//! usage (percent of nominal quota) above, GPU-hours and lost GPU-hours below, and the cost
//! per department when the runs have one.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use gpuquota_metering::figure::Money;
use gpuquota_model::diag::{Diagnostic, Diagnostics};
use indexmap::IndexMap;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::scenario::{self, INVALID_SCENARIO};

mod args;
mod eval;
mod job;

pub use args::{
    MAX_RUNS, MAX_SHARDS, MAX_THREADS, parse_axes, parse_shard, parse_shard_count, parse_threads,
};
pub use eval::{Evaluator, NODE_COUNT_LIMIT, set_node_count};
pub use job::{
    IndexedJob, JobRequest, MAX_CONFIGMAP_BYTES, escape_kubelet, indexed_job, manifests,
    manifests_running, to_yaml,
};

/// A file reader usable from every thread: a path relative to the scenario to (display
/// name, text).
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

/// One row of the table (module docs): what one run gives.
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
    /// The mean of the report's non-null `queues[].meanUsagePercent` (0 without any),
    /// rounded to 0.1.
    pub mean_usage_percent: f64,
    /// Σ over runs of `nvidia.com/gpu` usage × duration, GPU-hours rounded to 0.001.
    pub gpu_hours: f64,
    /// The same over `Preempted` runs only, GPU-hours rounded to 0.001.
    pub lost_gpu_hours: f64,
    /// The report's `preemptions`.
    pub preemptions: u64,
    /// Each class's `meanTimeToAdmissionMs`, in class order.
    pub time_to_admission_ms: BTreeMap<String, i64>,
    /// Only when the scenario has `spec.metering`: the cost per department (module docs).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cost: Option<Cost>,
    /// How many warnings the run's report has.
    pub warnings: usize,
}

/// The `cost` of a [`Row`]: the chargeback's lines summed per department.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Cost {
    /// The chargeback's currency.
    pub currency: Option<String>,
    /// The sum over departments, in the currency's minor-unit precision.
    pub total: Money,
    /// Each department's sum of its lines' `total` (cost plus idle share).
    pub departments: BTreeMap<String, Money>,
}

impl Row {
    /// The row as JSON (module docs).
    pub fn json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
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

/// What a table was computed from, so that [`merge`] joins only shards of one sweep: SHA-256
/// digests (lower-case hex) of the scenario file's bytes, of the parameter grid
/// ([`grid_fingerprint`]) and of every file the runs read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Fingerprint {
    /// The scenario file's bytes.
    pub scenario: String,
    /// The parameter grid: paths and values in run order ([`grid_fingerprint`]).
    pub grid: String,
    /// Every file the runs read (cluster files, workload files, traces), by the name the
    /// scenario gives it, in name order.
    pub files: BTreeMap<String, String>,
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
    /// What the table was computed from; every table `gpuquota sim sweep` writes has one
    /// (absent only in tables of older versions, which [`merge`] refuses).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub fingerprint: Option<Fingerprint>,
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

/// The quota fields a `clusterQueues.…` path sets.
pub const QUOTA_FIELDS: [&str; 3] = ["nominalQuota", "borrowingLimit", "lendingLimit"];

/// Sets `clusterQueues.CQ[.FLAVOR[.RESOURCE]].FIELD` to `value` in `model` (the grammar is in
/// the module docs): a quantity, or `none` to unset `borrowingLimit` or `lendingLimit`.
///
/// ```
/// let mut model = gpuquota_model::Importer::new();
/// model.add_str("c.yaml", "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: batch}\nspec:\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors: [{name: h100, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]\n");
/// let mut model = model.finish().unwrap().model;
/// gpuquota_sim::sweep::set_cluster_queue(&mut model, "clusterQueues.batch.borrowingLimit", "4").unwrap();
/// let r = &model.cluster_queues["batch"].spec.resource_groups[0].flavors[0].resources[0];
/// assert_eq!(r.borrowing_limit.as_ref().map(ToString::to_string).as_deref(), Some("4"));
/// ```
///
/// # Errors
/// A message naming the path: not of this grammar, an unknown field, ClusterQueue, flavor or
/// resource, a short path where the ClusterQueue has several quotas (the message lists them),
/// or a value that is not a quantity.
///
/// # Complexity
/// O(flavors × resources of the ClusterQueue).
pub fn set_cluster_queue(
    model: &mut gpuquota_model::Model,
    path: &str,
    value: &str,
) -> Result<(), String> {
    let grammar = || format!("{path}: expected clusterQueues.CQ[.FLAVOR[.RESOURCE]].FIELD");
    let rest = path.strip_prefix("clusterQueues.").ok_or_else(grammar)?;
    let (cq, rest) = rest.split_once('.').ok_or_else(grammar)?;
    if rest == "fairSharing.weight" {
        let w = weight(path, value)?;
        let c = model
            .cluster_queues
            .get_mut(cq)
            .ok_or_else(|| format!("{path}: no ClusterQueue {cq:?} in the cluster files"))?;
        c.spec
            .fair_sharing
            .get_or_insert_with(Default::default)
            .weight = Some(w);
        return Ok(());
    }
    let (middle, field) = match rest.rsplit_once('.') {
        Some((m, f)) => (Some(m), f),
        None => (None, rest),
    };
    if !QUOTA_FIELDS.contains(&field) {
        return Err(format!(
            "{path}: unknown field {field:?}: expected one of {}",
            QUOTA_FIELDS.join(", ")
        ));
    }
    let (flavor, resource) = match middle {
        None => (None, None),
        Some(m) => match m.split_once('.') {
            Some((f, r)) => (Some(f), Some(r)),
            None => (Some(m), None),
        },
    };
    let quantity = if value == "none" && field != "nominalQuota" {
        None
    } else {
        let q = gpuquota_model::Quantity::parse(value)
            .map_err(|e| format!("{path}: {value:?} is not a quantity: {e}"))?;
        if q.is_negative() {
            return Err(format!("{path}: {value:?} is negative"));
        }
        Some(q)
    };
    let c = model
        .cluster_queues
        .get_mut(cq)
        .ok_or_else(|| format!("{path}: no ClusterQueue {cq:?} in the cluster files"))?;
    let mut all: Vec<String> = Vec::new();
    let mut hits: Vec<&mut gpuquota_model::kueue::ResourceQuota> = Vec::new();
    for f in c
        .spec
        .resource_groups
        .iter_mut()
        .flat_map(|g| g.flavors.iter_mut())
    {
        for r in &mut f.resources {
            all.push(format!("{}.{}", f.name, r.name.as_str()));
            if flavor.is_none_or(|x| x == f.name) && resource.is_none_or(|x| x == r.name.as_str()) {
                hits.push(r);
            }
        }
    }
    match hits.len() {
        1 => {}
        0 => {
            return Err(format!(
                "{path}: ClusterQueue {cq:?} has no such quota (it has: {})",
                if all.is_empty() {
                    "none".to_owned()
                } else {
                    all.join(", ")
                }
            ));
        }
        _ => {
            return Err(format!(
                "{path}: ClusterQueue {cq:?} has several quotas: name one as clusterQueues.{cq}.FLAVOR.RESOURCE.{field} ({})",
                all.join(", ")
            ));
        }
    }
    let Some(r) = hits.pop() else {
        return Ok(());
    };
    match field {
        "nominalQuota" => r.nominal_quota = quantity,
        "borrowingLimit" => r.borrowing_limit = quantity,
        _ => r.lending_limit = quantity,
    }
    Ok(())
}

/// Where a seeded workload source is, for the messages refusing `--set seed=…`.
const SEEDED_SOURCE: &str =
    "add one to seed, e.g. `workloads: [{trace: {format: philly, generate: {jobs: 60, seed: 1}}}]`";

/// Why Kueue's perf generator cannot be seeded, and what can.
const PERF_DETERMINISTIC: &str = "Kueue's perf generator (`cohorts:`, or `generator:` in spec.workloads) is deterministic (fixed arrival times and runtimes), so every seed would give the same run; for draws of random arrivals, seed a generated trace instead, e.g. `workloads: [{trace: {format: philly, generate: {jobs: 60, seed: 1}}}]`";

/// Sets `seed` on every generated trace of the scenario `spec`; how many there are.
fn set_seed(spec: &mut Value, value: &str) -> Result<usize, String> {
    let seed: u64 = value
        .parse()
        .map_err(|_| format!("seed: {value:?} is not a whole number ≥ 0"))?;
    let mut n = 0;
    for w in spec
        .get_mut("workloads")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        if let Some(Value::Object(g)) = w.pointer_mut("/trace/generate") {
            g.insert("seed".into(), json!(seed));
            n += 1;
        }
    }
    if n == 0 {
        let perf = spec
            .get("workloads")
            .and_then(Value::as_array)
            .is_some_and(|ws| ws.iter().any(|w| w.get("generator").is_some()));
        return Err(if perf {
            format!("the scenario has no generated trace to seed: {PERF_DETERMINISTIC}")
        } else {
            format!(
                "the scenario has no generated trace (spec.workloads[].trace.generate) to seed; {SEEDED_SOURCE}"
            )
        });
    }
    Ok(n)
}

/// The `cost` of a row from the report's `chargeback` (module docs); `None` without one.
fn cost(report: &Value) -> Option<Cost> {
    let cb = report.get("chargeback")?;
    let mut departments: BTreeMap<String, Money> = BTreeMap::new();
    for l in cb["lines"].as_array().into_iter().flatten() {
        let (Some(d), Some(t)) = (
            l["department"].as_str(),
            l["total"].as_str().and_then(|t| t.parse::<Money>().ok()),
        ) else {
            continue;
        };
        let e = departments
            .entry(d.to_owned())
            .or_insert(Money::new(0, t.minor_digits()));
        *e = e.checked_add(t)?;
    }
    let mut total = Money::new(0, 0);
    for v in departments.values() {
        total = total.checked_add(*v)?;
    }
    Some(Cost {
        currency: cb["currency"].as_str().map(str::to_owned),
        total,
        departments,
    })
}

fn round(x: f64, scale: f64) -> f64 {
    (x * scale).round() / scale
}

/// GPUs of a run's `usage`: `nvidia.com/gpu` of every flavor, or KAI's `gpu`.
fn gpu_ms(usage: &Value) -> f64 {
    let kai = usage.get("gpu").and_then(Value::as_str);
    usage
        .as_object()
        .into_iter()
        .flat_map(|f| f.values())
        .filter_map(|r| r.get("nvidia.com/gpu")?.as_str())
        .chain(kai)
        .filter_map(|q| gpuquota_model::Quantity::parse(q).ok()?.scaled_ceil(3))
        .map(|m| m as f64 / 1000.0)
        .sum()
}

/// A KAI report's leaf queues' mean allocated GPUs as percents of their mean fair share
/// (queues with a positive mean fair share only).
fn kai_usage_percents(report: &Value) -> Vec<f64> {
    let Some(queues) = report["queues"].as_object() else {
        return Vec::new();
    };
    let parents: BTreeSet<&str> = queues
        .values()
        .filter_map(|q| q["parent"].as_str())
        .collect();
    queues
        .iter()
        .filter(|(n, _)| !parents.contains(n.as_str()))
        .filter_map(|(_, q)| {
            let allocated = q["meanAllocatedGpu"].as_f64()?;
            let shares: Vec<f64> = q["fairShare"]
                .as_array()?
                .iter()
                .filter_map(Value::as_f64)
                .collect();
            let share = shares.iter().sum::<f64>() / shares.len().max(1) as f64;
            (share > 0.0).then(|| allocated / share * 100.0)
        })
        .collect()
}

/// Summarises a report's JSON as a row (see the module docs).
pub fn summarise(run: usize, params: &[(String, String)], report: &Value) -> Row {
    let mut gpu_hours = 0.0;
    let mut lost = 0.0;
    for w in report["workloads"].as_array().into_iter().flatten() {
        for r in w["runs"].as_array().into_iter().flatten() {
            let d = (r["endMs"].as_i64().unwrap_or(0) - r["startMs"].as_i64().unwrap_or(0)) as f64;
            let h = gpu_ms(&r["usage"]) * d / 3_600_000.0;
            gpu_hours += h;
            if r["end"] == "Preempted" || r["end"] == "Evicted" {
                lost += h;
            }
        }
    }
    let usages: Vec<f64> = if report["engine"] == "kai" {
        kai_usage_percents(report)
    } else {
        report["queues"]
            .as_object()
            .into_iter()
            .flat_map(|q| q.values())
            .filter_map(|q| q["meanUsagePercent"].as_f64())
            .collect()
    };
    let mean_usage = if usages.is_empty() {
        0.0
    } else {
        usages.iter().sum::<f64>() / usages.len() as f64
    };
    let tta: BTreeMap<String, i64> = report["classes"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(c, s)| (c.clone(), s["meanTimeToAdmissionMs"].as_i64().unwrap_or(0)))
        .collect();
    Row {
        run,
        parameters: params.iter().cloned().collect(),
        engine: report["engine"].as_str().unwrap_or_default().to_owned(),
        mean_usage_percent: round(mean_usage, 10.0),
        gpu_hours: round(gpu_hours, 1000.0),
        lost_gpu_hours: round(lost, 1000.0),
        preemptions: report["preemptions"].as_u64().unwrap_or(0),
        time_to_admission_ms: tta,
        cost: cost(report),
        warnings: report["warnings"].as_array().map_or(0, Vec::len),
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

/// How a sweep runs, beyond its scenario and axes.
#[derive(Default)]
pub struct Options<'a> {
    /// `(index, count)`: run only that shard.
    pub shard: Option<(usize, usize)>,
    /// Worker threads (`None`: rayon's default, all cores or `RAYON_NUM_THREADS`).
    pub threads: Option<usize>,
    /// Called once per finished run (from any worker thread), with the runs finished so far
    /// and the runs of this shard: a progress bar's hook.
    pub progress: Option<&'a (dyn Fn(usize, usize) + Sync)>,
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
    run_with(
        name,
        text,
        stem,
        axes,
        &Options {
            shard,
            ..Options::default()
        },
        read,
    )
}

/// [`run`] with [`Options`]: a thread count and a progress hook.
///
/// # Errors
/// As [`run`]; a thread pool that cannot start.
///
/// # Complexity
/// runs × one simulation, spread over the threads.
pub fn run_with(
    name: &str,
    text: &str,
    stem: &str,
    axes: &[Axis],
    opts: &Options<'_>,
    read: &SyncReadFn<'_>,
) -> Result<Table, Diagnostics> {
    let shard = opts.shard;
    let doc: Value =
        serde_saphyr::from_str(text).map_err(|e| crate::scenario::yaml_problem(name, &e))?;
    let nested = doc.get("kind").is_some();
    let total = check_sweep(axes, shard, opts.threads)?;
    let range = shard.map_or(0..total, |(i, n)| shard_range(total, i, n));
    let in_shard = range.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
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
    let plan = SharePlan::new(axes, range.clone());
    // the shard's first run is loaded before the others start: a `--set` path the scenario
    // does not know is one error naming the path, not one per run
    let first = match range.clone().next() {
        Some(i) => {
            let params = run_parameters(axes, i);
            match plan.base(&params, || {
                load_base(name, stem, &doc, nested, &params, &cached)
            }) {
                Ok(x) => Some(x),
                Err(d) if d.iter().any(|x| x.code == UNKNOWN_PATH) => return Err(d),
                Err(_) => None,
            }
        }
        None => None,
    };
    let first = Mutex::new(first);
    let one = |i: usize| -> Result<Row, Diagnostics> {
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
        let base = match first
            .lock()
            .ok()
            .and_then(|mut f| f.take_if(|_| i == range.start))
        {
            Some(x) => x,
            None => plan
                .base(&params, || {
                    load_base(name, stem, &doc, nested, &params, &cached)
                })
                .map_err(tag)?,
        };
        plan.done(&params);
        let edited;
        let loaded: &Loaded = if quota_edits(&params).next().is_some() {
            edited = with_quotas(&base, &params).map_err(tag)?;
            &edited
        } else {
            &base
        };
        let report = match loaded {
            Loaded::Kueue(sc) => {
                let report = crate::simulate_kueue(sc).map_err(tag)?;
                if report.diagnostics.has_errors() {
                    return Err(tag(report.diagnostics.clone()));
                }
                report.to_json()
            }
            Loaded::Kai(sc) => crate::kai::simulate(sc).map_err(tag)?.to_json(),
        };
        drop(base);
        let row = summarise(i, &params, &report);
        if let Some(p) = opts.progress {
            let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            p(n, in_shard);
        }
        Ok(row)
    };
    let all =
        || -> Vec<Result<Row, Diagnostics>> { range.clone().into_par_iter().map(one).collect() };
    let results = match opts.threads {
        None => all(),
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build()
            .map_err(|e| {
                Diagnostics(vec![Diagnostic::error(
                    INVALID_SCENARIO,
                    format!("cannot start {n} threads: {e}"),
                )])
            })?
            .install(all),
    };
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
    let files = cache
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(f, r)| r.ok().map(|(_, t)| (f, sha256_hex(t.as_bytes()))))
        .collect();
    Ok(Table {
        parameters: axes.iter().map(|a| a.path.clone()).collect(),
        runs: total,
        shard: shard.map(|(index, count)| Shard { index, count }),
        fingerprint: Some(Fingerprint {
            scenario: sha256_hex(text.as_bytes()),
            grid: grid_fingerprint(axes),
            files,
        }),
        rows,
    })
}

/// The files a sweep's runs read besides the scenario (cluster files, workload files,
/// traces), by the relative name the scenario gives each, with their text, in name order:
/// those run 0 reads (`--set` edits mappings only, so no run names other files). Reading
/// run 0 also checks the paths as a sweep does.
///
/// # Errors
/// A scenario that does not parse, an unknown `--set` path, or an unreadable file.
pub fn scenario_files(
    name: &str,
    text: &str,
    stem: &str,
    axes: &[Axis],
    read: &SyncReadFn<'_>,
) -> Result<Vec<(String, String)>, Diagnostics> {
    let doc: Value = serde_saphyr::from_str(text).map_err(|e| {
        Diagnostics(vec![
            Diagnostic::error(gpuquota_model::diag::codes::MALFORMED, e.to_string()).source(name),
        ])
    })?;
    check_sweep(axes, None, None)?;
    let nested = doc.get("kind").is_some();
    let seen: ReadCache = Mutex::new(BTreeMap::new());
    let recording = |f: &str| -> Result<(String, String), Diagnostic> {
        let r = read(f);
        if let Ok(mut s) = seen.lock() {
            s.insert(f.to_owned(), r.clone());
        }
        r
    };
    load_run(
        name,
        stem,
        &doc,
        nested,
        &run_parameters(axes, 0),
        &recording,
    )?;
    let mut out = Vec::new();
    for (f, r) in seen.into_inner().unwrap_or_default() {
        let (_, t) = r.map_err(|d| Diagnostics(vec![d]))?;
        out.push((f, t));
    }
    Ok(out)
}

/// Diagnostic code of a `--set` path the scenario does not know.
pub const UNKNOWN_PATH: gpuquota_model::diag::Code =
    gpuquota_model::diag::Code::new("unknown-set-path");

/// One run's scenario, read and edited.
#[derive(Clone)]
enum Loaded {
    /// A `kueue` or `resourcequota` scenario (or Kueue's perf-generator config).
    Kueue(Box<scenario::Scenario>),
    /// An `engine: kai` scenario (or KAI's simulator config).
    Kai(Box<crate::kai::KaiScenario>),
}

/// Whether a parameter edits the imported model (`clusterQueues.` quotas and weights,
/// `cohorts.COHORT.fairSharing.weight`, `nodes.NODE.count`, `resourceQuotas.` caps, KAI's
/// `queues.` fields) rather than the scenario document.
pub fn is_model_edit(k: &str) -> bool {
    k.starts_with("clusterQueues.")
        || k.starts_with("nodes.")
        || k.starts_with("resourceQuotas.")
        || k.starts_with("queues.")
        || is_cohort_weight(k)
}

/// Whether a model edit names Kueue's or ResourceQuota's objects (`clusterQueues.`,
/// `cohorts.`, `resourceQuotas.`), which a KAI scenario does not have.
fn is_kueue_edit(k: &str) -> bool {
    k.starts_with("clusterQueues.") || k.starts_with("resourceQuotas.") || is_cohort_weight(k)
}

fn is_cohort_weight(k: &str) -> bool {
    k.starts_with("cohorts.") && k.ends_with(".fairSharing.weight")
}

/// Applies one model-editing parameter ([`is_model_edit`]) to `model`: [`set_node_count`],
/// [`set_resource_quota`], [`set_kai_queue`], [`set_cohort_weight`] or [`set_cluster_queue`]
/// by its path.
///
/// # Errors
/// As the one it applies.
pub fn set_model(model: &mut gpuquota_model::Model, path: &str, value: &str) -> Result<(), String> {
    if path.starts_with("nodes.") {
        set_node_count(model, path, value)
    } else if path.starts_with("resourceQuotas.") {
        set_resource_quota(model, path, value)
    } else if path.starts_with("queues.") {
        set_kai_queue(model, path, value)
    } else if is_cohort_weight(path) {
        set_cohort_weight(model, path, value)
    } else {
        set_cluster_queue(model, path, value)
    }
}

/// A fair-sharing weight or a cap: a non-negative quantity.
fn weight(path: &str, value: &str) -> Result<gpuquota_model::Quantity, String> {
    let q = gpuquota_model::Quantity::parse(value)
        .map_err(|e| format!("{path}: {value:?} is not a quantity: {e}"))?;
    if q.is_negative() {
        return Err(format!("{path}: {value:?} is negative"));
    }
    Ok(q)
}

/// Sets `resourceQuotas.NAMESPACE.NAME.hard.RESOURCE`: the hard cap `RESOURCE` (the rest of
/// the path, as the ResourceQuota writes it: `requests.nvidia.com/gpu`, `pods`) of the
/// ResourceQuota `NAME` in namespace `NAMESPACE` of the cluster files, a non-negative
/// quantity (a cap the ResourceQuota does not have yet is added).
///
/// # Errors
/// A message naming the path: not of that form, no such ResourceQuota, a value that is
/// not a non-negative quantity.
pub fn set_resource_quota(
    model: &mut gpuquota_model::Model,
    path: &str,
    value: &str,
) -> Result<(), String> {
    let grammar = || format!("{path}: expected resourceQuotas.NAMESPACE.NAME.hard.RESOURCE");
    let rest = path.strip_prefix("resourceQuotas.").ok_or_else(grammar)?;
    let (object, resource) = rest.split_once(".hard.").ok_or_else(grammar)?;
    let (ns, name) = object.split_once('.').ok_or_else(grammar)?;
    if ns.is_empty() || name.is_empty() || resource.is_empty() {
        return Err(grammar());
    }
    let q = weight(path, value)?;
    let rq = model
        .resource_quotas
        .values_mut()
        .find(|r| r.metadata.name == name && r.metadata.namespace.as_deref() == Some(ns))
        .ok_or_else(|| {
            format!("{path}: no ResourceQuota {name:?} in namespace {ns:?} in the cluster files")
        })?;
    rq.spec.hard.insert(resource.to_owned(), q);
    Ok(())
}

/// The resources of a KAI Queue's `spec.resources` a `queues.` path names.
pub const KAI_QUEUE_RESOURCES: [&str; 3] = ["gpu", "cpu", "memory"];
/// The fields of one resource of a KAI Queue a `queues.` path sets.
pub const KAI_QUEUE_FIELDS: [&str; 3] = ["quota", "limit", "overQuotaWeight"];

/// Sets `queues.QUEUE.RESOURCE.FIELD` or `queues.QUEUE.priority` of the KAI Queue `QUEUE`
/// of the cluster files (the fields of KAI's Queue CRD `scheduling.run.ai/v2`,
/// NVIDIA/KAI-Scheduler pkg/apis/scheduling/v2/queue_types.go: `spec.resources.RESOURCE.FIELD`
/// and `spec.priority`). `RESOURCE` is one of [`KAI_QUEUE_RESOURCES`] (in the CRD's units:
/// GPU devices, CPU millicores, memory megabytes), `FIELD` one of [`KAI_QUEUE_FIELDS`]; the
/// queue name is everything before them, so it may contain dots. The value is a plain
/// decimal (`4`, `0.5`): `quota` and `limit` ≥ 0 or `-1` (unlimited), `overQuotaWeight` ≥ 0;
/// `priority` a whole number (32-bit). A resource the Queue does not list yet is added with
/// only that field.
///
/// ```
/// let mut model = gpuquota_model::Importer::new();
/// model.add_str("q.yaml", "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: team-a}\nspec: {resources: {gpu: {quota: 4, overQuotaWeight: 1, limit: -1}}}\n");
/// let mut model = model.finish().unwrap().model;
/// gpuquota_sim::sweep::set_kai_queue(&mut model, "queues.team-a.gpu.quota", "6").unwrap();
/// gpuquota_sim::sweep::set_kai_queue(&mut model, "queues.team-a.priority", "120").unwrap();
/// let q = &model.queues["team-a"];
/// let gpu = q.spec.resources.as_ref().unwrap().gpu.as_ref().unwrap();
/// assert_eq!(gpu.quota.as_ref().map(ToString::to_string).as_deref(), Some("6"));
/// assert_eq!(q.spec.priority, Some(120));
/// ```
///
/// # Errors
/// A message naming the path: not of that form (the message lists the resources and
/// fields), no such Queue, a value out of the field's range.
///
/// # Complexity
/// O(path length).
pub fn set_kai_queue(
    model: &mut gpuquota_model::Model,
    path: &str,
    value: &str,
) -> Result<(), String> {
    let grammar = || {
        format!(
            "{path}: expected queues.QUEUE.RESOURCE.FIELD (RESOURCE one of {}, FIELD one of {}) or queues.QUEUE.priority",
            KAI_QUEUE_RESOURCES.join(", "),
            KAI_QUEUE_FIELDS.join(", ")
        )
    };
    let rest = path.strip_prefix("queues.").ok_or_else(grammar)?;
    let (front, field) = rest.rsplit_once('.').ok_or_else(grammar)?;
    if field == "priority" {
        if front.is_empty() {
            return Err(grammar());
        }
        let p: i32 = value
            .parse()
            .map_err(|_| format!("{path}: {value:?} is not a whole number (32-bit)"))?;
        let q = model
            .queues
            .get_mut(front)
            .ok_or_else(|| format!("{path}: no KAI Queue {front:?} in the cluster files"))?;
        q.spec.priority = Some(p);
        return Ok(());
    }
    let (queue, resource) = front.rsplit_once('.').ok_or_else(grammar)?;
    if queue.is_empty()
        || !KAI_QUEUE_RESOURCES.contains(&resource)
        || !KAI_QUEUE_FIELDS.contains(&field)
    {
        return Err(grammar());
    }
    let decimal = {
        let digits = value.strip_prefix('-').unwrap_or(value);
        !digits.is_empty()
            && !digits.starts_with('.')
            && !digits.ends_with('.')
            && digits.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            && digits.bytes().filter(|b| *b == b'.').count() <= 1
    };
    let q = decimal
        .then(|| gpuquota_model::Quantity::parse(value).ok())
        .flatten()
        .ok_or_else(|| format!("{path}: {value:?} is not a decimal number (e.g. 4, 0.5)"))?;
    let unlimited = field != "overQuotaWeight" && value == "-1";
    if q.is_negative() && !unlimited {
        return Err(if field == "overQuotaWeight" {
            format!("{path}: {value:?} is negative")
        } else {
            format!("{path}: {value:?} is negative (only -1, unlimited, is allowed)")
        });
    }
    let kq = model
        .queues
        .get_mut(queue)
        .ok_or_else(|| format!("{path}: no KAI Queue {queue:?} in the cluster files"))?;
    let resources = kq.spec.resources.get_or_insert_with(Default::default);
    let r = match resource {
        "gpu" => &mut resources.gpu,
        "cpu" => &mut resources.cpu,
        _ => &mut resources.memory,
    }
    .get_or_insert_with(Default::default);
    match field {
        "quota" => r.quota = Some(q),
        "limit" => r.limit = Some(q),
        _ => r.over_quota_weight = Some(q),
    }
    Ok(())
}

/// Sets `cohorts.COHORT.fairSharing.weight` (the Cohort object `COHORT` of the cluster
/// files; its fair-sharing weight, a non-negative quantity such as `2` or `500m`).
///
/// # Errors
/// A message naming the path: no such Cohort object, a value that is not a non-negative
/// quantity.
pub fn set_cohort_weight(
    model: &mut gpuquota_model::Model,
    path: &str,
    value: &str,
) -> Result<(), String> {
    let name = path
        .strip_prefix("cohorts.")
        .and_then(|r| r.strip_suffix(".fairSharing.weight"))
        .filter(|n| !n.is_empty() && !n.contains('.'))
        .ok_or_else(|| format!("{path}: expected cohorts.COHORT.fairSharing.weight"))?;
    let w = weight(path, value)?;
    let c = model
        .cohorts
        .get_mut(name)
        .ok_or_else(|| format!("{path}: no Cohort {name:?} in the cluster files"))?;
    c.spec
        .fair_sharing
        .get_or_insert_with(Default::default)
        .weight = Some(w);
    Ok(())
}

/// The model-editing parameters of a run ([`is_model_edit`]): applied after the import.
fn quota_edits(params: &[(String, String)]) -> impl Iterator<Item = QuotaEdit<'_>> {
    params
        .iter()
        .filter(|(k, _)| is_model_edit(k))
        .map(|(k, v)| (k.as_str(), v.as_str()))
}

/// The parameters that change a run's scenario document (all but the model edits,
/// [`is_model_edit`]): runs with the same ones read the same document.
fn document_key(params: &[(String, String)]) -> Vec<(String, String)> {
    params
        .iter()
        .filter(|(k, _)| !is_model_edit(k))
        .cloned()
        .collect()
}

/// The most distinct scenario documents a sweep keeps read at once for its runs to share
/// (beyond it, every run reads its own, as when every run's document differs).
const MAX_SHARED_DOCUMENTS: usize = 16;

/// What a sweep's runs share: runs whose parameters differ only in `clusterQueues.` paths
/// read the same scenario document, so it is read (files, generators, import) once and
/// each run copies the result and applies its quota edits. A read scenario is dropped when
/// the last run that needs it has taken it, so a sweep holds at most
/// [`MAX_SHARED_DOCUMENTS`] of them; without two runs on one document nothing is shared.
struct SharePlan<T = Loaded> {
    /// Per document key: the runs still to take it, and the scenario once read.
    slots: BTreeMap<Vec<(String, String)>, Mutex<Slot<T>>>,
}

/// A shared scenario of [`SharePlan`].
struct Slot<T> {
    remaining: usize,
    loaded: Option<std::sync::Arc<T>>,
}

impl<T> SharePlan<T> {
    /// The plan for the runs `range` of `axes`.
    fn new(axes: &[Axis], range: std::ops::Range<usize>) -> SharePlan<T> {
        let runs = range.len();
        let mut counts: BTreeMap<Vec<(String, String)>, usize> = BTreeMap::new();
        if axes
            .iter()
            .any(|a| a.path.starts_with("clusterQueues.") || a.path.starts_with("queues."))
        {
            for i in range {
                *counts
                    .entry(document_key(&run_parameters(axes, i)))
                    .or_default() += 1;
                if counts.len() > MAX_SHARED_DOCUMENTS {
                    break;
                }
            }
        }
        if counts.len() > MAX_SHARED_DOCUMENTS || counts.len() == runs {
            counts.clear();
        }
        SharePlan {
            slots: counts
                .into_iter()
                .map(|(k, remaining)| {
                    (
                        k,
                        Mutex::new(Slot {
                            remaining,
                            loaded: None,
                        }),
                    )
                })
                .collect(),
        }
    }

    /// The scenario before quota edits of the run with `params`: the shared one, or
    /// `load`'s. A failed read is not kept (each run reports it with its own label).
    fn base(
        &self,
        params: &[(String, String)],
        load: impl FnOnce() -> Result<T, Diagnostics>,
    ) -> Result<std::sync::Arc<T>, Diagnostics> {
        let Some(slot) = self.slot(params) else {
            return load().map(std::sync::Arc::new);
        };
        if let Some(l) = slot.lock().ok().and_then(|s| s.loaded.clone()) {
            return Ok(l);
        }
        // Read without holding the lock; two runs may both read it, with the same result.
        let l = std::sync::Arc::new(load()?);
        if let Ok(mut s) = slot.lock()
            && s.remaining > 0
            && s.loaded.is_none()
        {
            s.loaded = Some(l.clone());
        }
        Ok(l)
    }

    /// The run with `params` has taken its scenario: the last one drops the shared copy.
    fn done(&self, params: &[(String, String)]) {
        if let Some(slot) = self.slot(params)
            && let Ok(mut s) = slot.lock()
        {
            s.remaining = s.remaining.saturating_sub(1);
            if s.remaining == 0 {
                s.loaded = None;
            }
        }
    }

    fn slot(&self, params: &[(String, String)]) -> Option<&Mutex<Slot<T>>> {
        if self.slots.is_empty() {
            return None;
        }
        self.slots.get(&document_key(params))
    }
}

/// A copy of `base` with the run's `clusterQueues.` parameters applied.
fn with_quotas(base: &Loaded, params: &[(String, String)]) -> Result<Loaded, Diagnostics> {
    let mut loaded = base.clone();
    let model = match &mut loaded {
        Loaded::Kueue(sc) => &mut sc.model,
        Loaded::Kai(sc) => &mut sc.model,
    };
    for (k, v) in quota_edits(params) {
        set_model(model, k, v).map_err(|m| {
            Diagnostics(vec![
                Diagnostic::error(INVALID_SCENARIO, m).field(k.to_owned()),
            ])
        })?;
    }
    Ok(loaded)
}

/// Reads the scenario of one run: `doc` edited with `params` ([`edit_run`]), read by the
/// reader of its engine, the `clusterQueues.` parameters applied. A parameter whose path
/// the reader reports as an unknown field (the path itself or the first unknown segment of
/// it) is an [`UNKNOWN_PATH`] error naming the path.
fn load_run(
    name: &str,
    stem: &str,
    doc: &Value,
    nested: bool,
    params: &[(String, String)],
    read: &scenario::ReadFn<'_>,
) -> Result<Loaded, Diagnostics> {
    let base = load_base(name, stem, doc, nested, params, read)?;
    if quota_edits(params).next().is_none() {
        return Ok(base);
    }
    with_quotas(&base, params)
}

/// [`load_run`] without applying the `clusterQueues.` parameters (the scenario several
/// runs may share).
fn load_base(
    name: &str,
    stem: &str,
    doc: &Value,
    nested: bool,
    params: &[(String, String)],
    read: &scenario::ReadFn<'_>,
) -> Result<Loaded, Diagnostics> {
    let (d, quotas) = edit_run(doc, nested, params)?;
    let t = serde_json::to_string(&d).unwrap_or_default();
    if crate::scenario::Format::of(&d).is_kai() {
        if let Some((k, _)) = quotas.iter().find(|(k, _)| is_kueue_edit(k)) {
            return Err(Diagnostics(vec![Diagnostic::error(
                INVALID_SCENARIO,
                format!(
                    "--set {k}: a KAI scenario has no ClusterQueues, Cohorts or ResourceQuotas (those paths edit Kueue's objects); vary its Queues with queues.QUEUE.RESOURCE.FIELD or queues.QUEUE.priority"
                ),
            )]));
        }
        let sc = crate::kai::scenario::from_str(name, &t, stem, read)
            .map_err(|e| unknown_paths(&e, params, nested).unwrap_or(e))?;
        if let Some(e) = unknown_paths(&sc.warnings, params, nested) {
            return Err(e);
        }
        return Ok(Loaded::Kai(Box::new(sc)));
    }
    if let Some((k, _)) = quotas.iter().find(|(k, _)| k.starts_with("queues.")) {
        return Err(Diagnostics(vec![Diagnostic::error(
            INVALID_SCENARIO,
            format!(
                "--set {k}: a Kueue or ResourceQuota scenario has no KAI Queues (queues.… paths edit KAI's); vary its ClusterQueues with clusterQueues.CQ[.FLAVOR[.RESOURCE]].FIELD"
            ),
        )]));
    }
    let sc = scenario::from_str(name, &t, stem, read)
        .map_err(|e| unknown_paths(&e, params, nested).unwrap_or(e))?;
    if let Some(e) = unknown_paths(&sc.warnings, params, nested) {
        return Err(e);
    }
    Ok(Loaded::Kueue(Box::new(sc)))
}

/// The parameters whose path `diagnostics` report as an unknown field (module docs), as
/// errors; `None` when there is none.
fn unknown_paths(
    diagnostics: &Diagnostics,
    params: &[(String, String)],
    nested: bool,
) -> Option<Diagnostics> {
    let prefix = if nested { "spec." } else { "" };
    let mut out = Vec::new();
    for (k, _) in params {
        if is_model_edit(k) || k == "seed" {
            continue;
        }
        let full = format!("{prefix}{k}");
        // the reader's paths mark an optional value with a `?` segment
        let hit = diagnostics
            .iter()
            .filter(|d| d.code == gpuquota_model::diag::codes::UNKNOWN_FIELD)
            .map(|d| {
                d.field
                    .split('.')
                    .filter(|s| *s != "?")
                    .collect::<Vec<_>>()
                    .join(".")
            })
            .find(|f| {
                *f == full
                    || full
                        .strip_prefix(f.as_str())
                        .is_some_and(|r| r.starts_with('.'))
            });
        if let Some(f) = hit {
            out.push(Diagnostic::error(
                UNKNOWN_PATH,
                format!(
                    "--set {k}: the scenario has no such field ({f} is unknown); check the path's spelling"
                ),
            ));
        }
    }
    (!out.is_empty()).then_some(Diagnostics(out))
}

/// The SHA-256 of `bytes`, lower-case hex (the digests of a [`Fingerprint`]).
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    use std::fmt::Write as _;
    let mut s = String::with_capacity(64);
    for b in sha2::Sha256::digest(bytes) {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The grid's fingerprint: the SHA-256 of `[[PATH, [VALUE…]]…]` as compact JSON, the axes in
/// `--set` order and each axis' values in their order, ranges expanded (the order the runs
/// are numbered in).
pub fn grid_fingerprint(axes: &[Axis]) -> String {
    let grid: Vec<(&str, &[String])> = axes
        .iter()
        .map(|a| (a.path.as_str(), a.values.as_slice()))
        .collect();
    sha256_hex(serde_json::to_string(&grid).unwrap_or_default().as_bytes())
}

/// The checks made before any run: the number of runs (at most [`MAX_RUNS`]), no path
/// twice, the shard (`N` at most [`MAX_SHARDS`]), the threads (at most [`MAX_THREADS`]) and
/// the form of every `clusterQueues.` axis. The number of runs on success.
fn check_sweep(
    axes: &[Axis],
    shard: Option<(usize, usize)>,
    threads: Option<usize>,
) -> Result<usize, Diagnostics> {
    let refuse = |m: String| Diagnostics(vec![Diagnostic::error(INVALID_SCENARIO, m)]);
    let total = axes
        .iter()
        .try_fold(1usize, |n, a| n.checked_mul(a.values.len()))
        .filter(|n| *n <= MAX_RUNS)
        .ok_or_else(|| {
            refuse(format!(
                "the {} --set paths make more than the {MAX_RUNS} runs a sweep may have: not swept",
                axes.len()
            ))
        })?;
    let mut seen = BTreeSet::new();
    for a in axes {
        if !seen.insert(a.path.as_str()) {
            return Err(refuse(format!(
                "--set {}: given twice; list its values once",
                a.path
            )));
        }
    }
    if let Some((i, n)) = shard
        && (n == 0 || i >= n || n > MAX_SHARDS)
    {
        return Err(refuse(format!(
            "--shard {i}/{n}: expected I/N with 0 <= I < N <= {MAX_SHARDS}"
        )));
    }
    if let Some(n) = threads
        && (n == 0 || n > MAX_THREADS)
    {
        return Err(refuse(format!(
            "--jobs {n}: expected 1 to {MAX_THREADS} threads"
        )));
    }
    for a in axes {
        if a.path.starts_with("clusterQueues.") || a.path == "clusterQueues" {
            let bad = a.path.strip_prefix("clusterQueues.").is_none_or(|r| {
                !r.contains('.')
                    || !(QUOTA_FIELDS.iter().any(|f| r.ends_with(f))
                        || r.ends_with(".fairSharing.weight"))
            });
            if bad {
                return Err(Diagnostics(vec![
                    Diagnostic::error(
                        INVALID_SCENARIO,
                        format!(
                            "{}: expected clusterQueues.CQ[.FLAVOR[.RESOURCE]].FIELD with FIELD one of {}",
                            a.path,
                            QUOTA_FIELDS.join(", ")
                        ),
                    )
                    .field(a.path.clone()),
                ]));
            }
        }
        if a.path.starts_with("queues.") || a.path == "queues" {
            let bad = a
                .path
                .strip_prefix("queues.")
                .is_none_or(|r| match r.rsplit_once('.') {
                    Some((q, "priority")) => q.is_empty(),
                    Some((front, f)) => {
                        !KAI_QUEUE_FIELDS.contains(&f)
                            || front.rsplit_once('.').is_none_or(|(q, res)| {
                                q.is_empty() || !KAI_QUEUE_RESOURCES.contains(&res)
                            })
                    }
                    None => true,
                });
            if bad {
                return Err(Diagnostics(vec![
                    Diagnostic::error(
                        INVALID_SCENARIO,
                        format!(
                            "{}: expected queues.QUEUE.RESOURCE.FIELD (RESOURCE one of {}, FIELD one of {}) or queues.QUEUE.priority",
                            a.path,
                            KAI_QUEUE_RESOURCES.join(", "),
                            KAI_QUEUE_FIELDS.join(", ")
                        ),
                    )
                    .field(a.path.clone()),
                ]));
            }
        }
        if a.path.starts_with("nodes.")
            && a.path
                .strip_prefix("nodes.")
                .and_then(|r| r.strip_suffix(".count"))
                .is_none_or(|n| n.is_empty() || n.contains('.'))
        {
            return Err(Diagnostics(vec![
                Diagnostic::error(
                    INVALID_SCENARIO,
                    format!("{}: expected nodes.NODE.count", a.path),
                )
                .field(a.path.clone()),
            ]));
        }
    }
    Ok(total)
}

/// A `clusterQueues.` parameter of a run: (path, value).
type QuotaEdit<'p> = (&'p str, &'p str);

/// One run's scenario document: `doc` with the run's parameters set (under `spec` when the
/// document is a `Simulation`), and the `clusterQueues.` parameters, which apply to the
/// model after the import.
pub(crate) fn edit_run<'p>(
    doc: &Value,
    nested: bool,
    params: &'p [(String, String)],
) -> Result<(Value, Vec<QuotaEdit<'p>>), Diagnostics> {
    let mut d = doc.clone();
    let mut quotas: Vec<QuotaEdit<'p>> = Vec::new();
    for (k, v) in params {
        if is_model_edit(k) {
            quotas.push((k, v));
            continue;
        }
        let target = if nested {
            d.as_object_mut()
                .map(|m| m.entry("spec").or_insert_with(|| Value::Object(Map::new())))
        } else {
            Some(&mut d)
        };
        let Some(t) = target else {
            return Err(Diagnostics(vec![Diagnostic::error(
                INVALID_SCENARIO,
                "the scenario is not a mapping",
            )]));
        };
        let set = if k == "seed" {
            if nested {
                set_seed(t, v).map(|_| ())
            } else {
                Err(PERF_DETERMINISTIC.to_owned())
            }
        } else if nested && k.starts_with("timeline[") {
            crate::timeline::set(t, k, v)
        } else {
            set_path(t, k, yaml_scalar(v))
        };
        set.map_err(|m| {
            Diagnostics(vec![
                Diagnostic::error(INVALID_SCENARIO, m).field(k.clone()),
            ])
        })?;
    }
    Ok((d, quotas))
}

impl Table {
    /// The table as JSON (see the module docs).
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
        let departments: BTreeSet<String> = self
            .rows
            .iter()
            .flat_map(|r| r.cost.iter().flat_map(|c| c.departments.keys().cloned()))
            .collect();
        let costed = self.rows.iter().any(|r| r.cost.is_some());
        if costed {
            head.push("currency".into());
            head.extend(departments.iter().map(|d| format!("cost.{d}")));
            head.push("cost".into());
        }
        head.push("warnings".into());
        let _ = w.write_record(&head);
        let text = |v: &Value| match v {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        };
        for r in &self.rows {
            let j = &r.json();
            let mut rec: Vec<String> = vec![r.run.to_string()];
            rec.extend(self.parameters.iter().map(|p| text(&j["parameters"][p])));
            for k in &results {
                rec.push(text(&j[*k]));
            }
            rec.extend(classes.iter().map(|c| text(&j["timeToAdmissionMs"][c])));
            if costed {
                rec.push(text(&j["cost"]["currency"]));
                rec.extend(
                    departments
                        .iter()
                        .map(|d| text(&j["cost"]["departments"][d])),
                );
                rec.push(text(&j["cost"]["total"]));
            }
            rec.push(text(&j["warnings"]));
            let _ = w.write_record(&rec);
        }
        String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
    }
}

impl Table {
    /// The run's label on the chart's x axis: its swept values in `--set` order, joined by
    /// `, ` (the axis names the paths).
    pub fn run_label(&self, row: &Row) -> String {
        self.parameters
            .iter()
            .map(|p| row.parameters.get(p).map_or("", String::as_str))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The table as an SVG chart, one column per run labelled with its swept values
    /// ([`Table::run_label`]; at most 24 labels, every k-th beyond), the x axis named by
    /// the swept paths: the mean usage (percent of nominal quota, a dot per run) above,
    /// GPU-hours (grey bars) with the lost GPU-hours of preempted runs (red, inside) in
    /// the middle, and — when any run has a cost — each department's cost stacked in the
    /// departments' colours (sorted department order, as in every picture), the legend
    /// right of the panels (named as the CSV's columns).
    ///
    /// # Errors
    /// No rows, or the plotting backend's error as text.
    ///
    /// # Complexity
    /// O(rows × departments).
    pub fn svg(&self) -> Result<String, String> {
        use crate::chart;
        use plotters::prelude::*;
        if self.rows.is_empty() {
            return Err("nothing to plot: the table has no rows".into());
        }
        let e = |x: &dyn std::fmt::Display| x.to_string();
        let n = self.rows.len();
        let labels: Vec<String> = self.rows.iter().map(|r| self.run_label(r)).collect();
        let every = n.div_ceil(24).max(1);
        let bold: Vec<f64> = (0..n).step_by(every).map(|i| i as f64).collect();
        let axis = || chart::Axis {
            lo: -0.5,
            hi: n as f64 - 0.5,
            bold: bold.clone(),
            light: bold.clone(),
        };
        let fmt = |x: &f64| {
            let i = x.round();
            if i >= 0.0 && (i as usize) < n && (x - i).abs() < 1e-9 {
                labels[i as usize].clone()
            } else {
                String::new()
            }
        };
        let x_desc = self.parameters.join(", ");
        let mut depts = chart::Departments::default();
        let mut currency: Option<String> = None;
        let costs: Vec<BTreeMap<String, f64>> = self
            .rows
            .iter()
            .map(|r| {
                r.cost.as_ref().map_or_else(BTreeMap::new, |c| {
                    if currency.is_none() {
                        currency.clone_from(&c.currency);
                    }
                    c.departments
                        .iter()
                        .map(|(d, v)| (d.clone(), v.as_f64()))
                        .collect()
                })
            })
            .collect();
        for d in costs.iter().flat_map(|c| c.keys()) {
            depts.note(d);
        }
        let order = depts.order();
        let costed = !order.is_empty();
        let num = |r: &Row, k: &str| r.json()[k].as_f64().unwrap_or(0.0);
        let usage: Vec<f64> = self
            .rows
            .iter()
            .map(|r| num(r, "meanUsagePercent"))
            .collect();
        let hours: Vec<f64> = self.rows.iter().map(|r| num(r, "gpuHours")).collect();
        let lost: Vec<f64> = self.rows.iter().map(|r| num(r, "lostGpuHours")).collect();
        let top_u = usage.iter().copied().fold(100.0f64, f64::max) * 1.1;
        let top_h = hours.iter().copied().fold(1.0f64, f64::max) * 1.1;
        let top_c = costs
            .iter()
            .map(|c| c.values().sum::<f64>())
            .fold(1.0f64, f64::max)
            * 1.1;
        let panels = if costed { 3u32 } else { 2 };
        let height = 50 + panels * 280;
        let mut out = String::new();
        {
            let root =
                SVGBackend::with_string(&mut out, (chart::WIDTH, height)).into_drawing_area();
            root.fill(&WHITE).map_err(|x| e(&x))?;
            let caption = format!("sweep of {} ({n} runs)", self.parameters.join(" × "));
            let root = root
                .titled(&caption, ("sans-serif", 24))
                .map_err(|x| e(&x))?;
            let (plots, legend) = root.split_horizontally(chart::WIDTH - chart::LEGEND);
            let areas = plots.split_evenly((panels as usize, 1));
            let build = |i: usize, title: &str, top: f64, y: &str| {
                let mut c = ChartBuilder::on(&areas[i])
                    .caption(title, ("sans-serif", 18))
                    .margin(8)
                    .margin_right(16)
                    .x_label_area_size(44)
                    .y_label_area_size(84)
                    .build_cartesian_2d(axis(), 0.0..top)
                    .map_err(|x| e(&x))?;
                c.configure_mesh()
                    .x_label_formatter(&fmt)
                    .x_label_style(("sans-serif", 15))
                    .y_label_style(("sans-serif", 15))
                    .axis_desc_style(("sans-serif", 15))
                    .x_desc(x_desc.as_str())
                    .y_desc(y)
                    .y_labels(6)
                    .light_line_style(RGBColor(0xEE, 0xEE, 0xEE))
                    .bold_line_style(RGBColor(0xDD, 0xDD, 0xDD))
                    .draw()
                    .map_err(|x| e(&x))?;
                Ok::<_, String>(c)
            };
            let mut c = build(
                0,
                "mean usage of the nominal quota per run",
                top_u,
                "mean usage, % of nominal",
            )?;
            c.draw_series(
                usage
                    .iter()
                    .enumerate()
                    .map(|(i, &v)| Circle::new((i as f64, v), 5, BLACK.filled())),
            )
            .map_err(|x| e(&x))?;
            let mut c = build(
                1,
                "GPU-hours per run, lost to preemption inside",
                top_h,
                "GPU-hours",
            )?;
            let bar = |i: usize, lo: f64, hi: f64, half: f64, colour: RGBColor| {
                Rectangle::new(
                    [(i as f64 - half, lo), (i as f64 + half, hi)],
                    colour.filled(),
                )
            };
            c.draw_series(
                hours
                    .iter()
                    .enumerate()
                    .map(|(i, &v)| bar(i, 0.0, v, 0.35, RGBColor(0x88, 0x88, 0x88))),
            )
            .map_err(|x| e(&x))?;
            c.draw_series(
                lost.iter()
                    .enumerate()
                    .filter(|p| *p.1 > 0.0)
                    .map(|(i, &v)| bar(i, 0.0, v, 0.2, chart::PREEMPTION_COLOUR)),
            )
            .map_err(|x| e(&x))?;
            if costed {
                let cur = currency.clone().unwrap_or_default();
                let mut c = build(
                    2,
                    "cost per run and department (stacked)",
                    top_c,
                    format!("cost {cur}").trim_end(),
                )?;
                for (i, row) in costs.iter().enumerate() {
                    let mut acc = 0.0;
                    for d in &order {
                        let v = row.get(d).copied().unwrap_or(0.0);
                        if v > 0.0 {
                            let colour = chart::department_colour(&order, d);
                            c.draw_series(std::iter::once(bar(i, acc, acc + v, 0.35, colour)))
                                .map_err(|x| e(&x))?;
                            acc += v;
                        }
                    }
                }
            }
            let mut fills = vec![
                (BLACK, "meanUsagePercent".to_owned()),
                (RGBColor(0x88, 0x88, 0x88), "gpuHours".to_owned()),
                (chart::PREEMPTION_COLOUR, "lostGpuHours".to_owned()),
            ];
            fills.extend(
                order
                    .iter()
                    .map(|d| (chart::department_colour(&order, d), format!("cost.{d}"))),
            );
            chart::draw_legend(&legend, "", &fills, &[], &BTreeMap::new(), &[])
                .map_err(|x| e(&x))?;
            root.present().map_err(|x| e(&x))?;
        }
        Ok(out)
    }
}

/// Joins shard tables into the unsharded table ([`merge_named`], each shard named by its
/// place in `shards`, `shard 0` first).
///
/// # Errors
/// As [`merge_named`].
pub fn merge(shards: Vec<Table>) -> Result<Table, String> {
    merge_named(
        shards
            .into_iter()
            .enumerate()
            .map(|(i, t)| (format!("shard {i}"), t))
            .collect(),
    )
}

/// Joins shard tables, each with the name its messages use (its file), into the unsharded
/// table; its fingerprint names every file any shard read.
///
/// # Errors
/// A shard without a fingerprint; shards of different sweeps, the message naming the shard
/// and what differs from the first shard: the parameters or run count, the scenario's bytes,
/// the grid (the same paths with values in another order number the runs differently), or a
/// file both read; a missing or repeated run.
///
/// # Complexity
/// O(rows log rows + files).
pub fn merge_named(shards: Vec<(String, Table)>) -> Result<Table, String> {
    let Some((first_name, first)) = shards.first() else {
        return Err("no shard to merge".into());
    };
    let first_name = first_name.clone();
    let parameters = first.parameters.clone();
    let runs = first.runs;
    let mut fingerprint: Option<Fingerprint> = None;
    let mut read_by: BTreeMap<String, String> = BTreeMap::new();
    let mut rows: Vec<Row> = Vec::new();
    for (name, s) in shards {
        let Some(f) = s.fingerprint else {
            return Err(format!(
                "{name}: the shard carries no fingerprint of its sweep (written by an older gpuquota): run it again"
            ));
        };
        let differ = |what: &str| {
            format!("{name}: the shard comes from a different sweep than {first_name}: {what}")
        };
        if s.parameters != parameters || s.runs != runs {
            return Err(differ("the --set paths or the number of runs differ"));
        }
        match fingerprint.as_mut() {
            None => {
                read_by.extend(f.files.keys().map(|k| (k.clone(), name.clone())));
                fingerprint = Some(f);
            }
            Some(all) => {
                if f.scenario != all.scenario {
                    return Err(differ("the scenario file differs"));
                }
                if f.grid != all.grid {
                    return Err(differ(
                        "the --set values differ (or are listed in another order, which numbers the runs differently)",
                    ));
                }
                for (file, digest) in f.files {
                    match all.files.get(&file) {
                        Some(d) if *d != digest => {
                            let other = read_by.get(&file).map_or("", String::as_str);
                            return Err(format!(
                                "{name}: the shard comes from a different sweep: the file {file} differs from the one {other} read"
                            ));
                        }
                        Some(_) => {}
                        None => {
                            read_by.insert(file.clone(), name.clone());
                            all.files.insert(file, digest);
                        }
                    }
                }
            }
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
        fingerprint,
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fair_sharing_weights_are_model_edits() {
        let mut imp = gpuquota_model::Importer::new();
        imp.add_str(
            "c.yaml",
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: pool}\nspec: {}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: a}\nspec: {cohortName: pool, resourceGroups: []}\n",
        );
        let mut m = imp.finish().unwrap().model;
        assert!(is_model_edit("cohorts.pool.fairSharing.weight"));
        // Kueue's perf-generator config has a `cohorts` list: its paths stay document edits
        assert!(!is_model_edit("cohorts.0.count"));
        set_model(&mut m, "cohorts.pool.fairSharing.weight", "2").unwrap();
        set_model(&mut m, "clusterQueues.a.fairSharing.weight", "500m").unwrap();
        let w = |q: &Option<gpuquota_model::kueue::FairSharing>| {
            q.as_ref().and_then(|f| f.weight).map(|w| w.to_string())
        };
        assert_eq!(
            w(&m.cohorts["pool"].spec.fair_sharing).as_deref(),
            Some("2")
        );
        assert_eq!(
            w(&m.cluster_queues["a"].spec.fair_sharing).as_deref(),
            Some("500m")
        );
        assert_eq!(
            set_model(&mut m, "cohorts.other.fairSharing.weight", "1").unwrap_err(),
            "cohorts.other.fairSharing.weight: no Cohort \"other\" in the cluster files"
        );
        assert_eq!(
            set_model(&mut m, "cohorts.pool.fairSharing.weight", "-1").unwrap_err(),
            "cohorts.pool.fairSharing.weight: \"-1\" is negative"
        );
    }

    #[test]
    fn kai_queue_fields_are_model_edits() {
        let mut imp = gpuquota_model::Importer::new();
        imp.add_str(
            "q.yaml",
            "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: team.a}\nspec: {resources: {gpu: {quota: 4, overQuotaWeight: 1, limit: -1}}}\n",
        );
        let mut m = imp.finish().unwrap().model;
        for p in ["queues.team.a.gpu.limit", "queues.team.a.priority"] {
            assert!(is_model_edit(p) && !is_kueue_edit(p));
        }
        // a dotted queue name: the resource and field are the last two segments
        set_model(&mut m, "queues.team.a.gpu.limit", "12").unwrap();
        set_model(&mut m, "queues.team.a.gpu.quota", "-1").unwrap();
        set_model(&mut m, "queues.team.a.cpu.overQuotaWeight", "0.5").unwrap();
        set_model(&mut m, "queues.team.a.priority", "-3").unwrap();
        let q = &m.queues["team.a"];
        let r = q.spec.resources.as_ref().unwrap();
        let gpu = r.gpu.as_ref().unwrap();
        let show = |x: &Option<gpuquota_model::Quantity>| x.as_ref().map(ToString::to_string);
        assert_eq!(show(&gpu.limit).as_deref(), Some("12"));
        assert_eq!(show(&gpu.quota).as_deref(), Some("-1"));
        assert_eq!(show(&gpu.over_quota_weight).as_deref(), Some("1"));
        // a resource the Queue did not list: only the field set
        let cpu = r.cpu.as_ref().unwrap();
        // 0.5, in the quantity's canonical form
        assert_eq!(show(&cpu.over_quota_weight).as_deref(), Some("500m"));
        assert_eq!((cpu.quota, cpu.limit), (None, None));
        assert_eq!(q.spec.priority, Some(-3));
        let err = |p: &str, v: &str| set_model(&mut m.clone(), p, v).unwrap_err();
        assert_eq!(
            err("queues.team.a.gpu.quota", "-2"),
            "queues.team.a.gpu.quota: \"-2\" is negative (only -1, unlimited, is allowed)"
        );
        assert_eq!(
            err("queues.team.a.gpu.overQuotaWeight", "-1"),
            "queues.team.a.gpu.overQuotaWeight: \"-1\" is negative"
        );
        assert_eq!(
            err("queues.team.a.gpu.quota", "4Gi"),
            "queues.team.a.gpu.quota: \"4Gi\" is not a decimal number (e.g. 4, 0.5)"
        );
        assert_eq!(
            err("queues.team.a.priority", "1.5"),
            "queues.team.a.priority: \"1.5\" is not a whole number (32-bit)"
        );
        assert_eq!(
            err("queues.b.gpu.quota", "1"),
            "queues.b.gpu.quota: no KAI Queue \"b\" in the cluster files"
        );
        assert_eq!(
            err("queues.team.a.gpus.quota", "1"),
            "queues.team.a.gpus.quota: expected queues.QUEUE.RESOURCE.FIELD (RESOURCE one of gpu, cpu, memory, FIELD one of quota, limit, overQuotaWeight) or queues.QUEUE.priority"
        );
        // the sweep's check refuses the form before any run
        let axis = |p: &str| Axis {
            path: p.to_owned(),
            values: vec!["1".to_owned()],
        };
        assert!(check_sweep(&[axis("queues.a.gpu.quota")], None, None).is_ok());
        assert!(check_sweep(&[axis("queues.a.priority")], None, None).is_ok());
        for bad in [
            "queues",
            "queues.a",
            "queues.gpu.quota",
            "queues.a.gpu.weight",
        ] {
            assert!(check_sweep(&[axis(bad)], None, None).is_err(), "{bad}");
        }
    }

    #[test]
    fn resource_quota_caps_are_model_edits() {
        let mut imp = gpuquota_model::Importer::new();
        imp.add_str(
            "rq.yaml",
            "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: gpu-cap, namespace: research}\nspec: {hard: {requests.nvidia.com/gpu: \"8\"}}\n",
        );
        let mut m = imp.finish().unwrap().model;
        let p = "resourceQuotas.research.gpu-cap.hard.requests.nvidia.com/gpu";
        assert!(is_model_edit(p));
        set_model(&mut m, p, "4").unwrap();
        let rq = m.resource_quotas.values().next().unwrap();
        assert_eq!(rq.spec.hard["requests.nvidia.com/gpu"].to_string(), "4");
        assert_eq!(
            set_model(&mut m, "resourceQuotas.other.gpu-cap.hard.pods", "1").unwrap_err(),
            "resourceQuotas.other.gpu-cap.hard.pods: no ResourceQuota \"gpu-cap\" in namespace \"other\" in the cluster files"
        );
        assert_eq!(
            set_model(&mut m, "resourceQuotas.research.gpu-cap", "1").unwrap_err(),
            "resourceQuotas.research.gpu-cap: expected resourceQuotas.NAMESPACE.NAME.hard.RESOURCE"
        );
    }

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
    fn decimals_sum_exactly() {
        let m = |s: &str| s.parse::<Money>();
        let sum = m("10368.00")
            .unwrap()
            .checked_add(m("0.1").unwrap())
            .unwrap();
        assert_eq!(sum.to_string(), "10368.10");
        assert_eq!(m("-3.05").unwrap().to_string(), "-3.05");
        assert!(m("1e3").is_err());
        assert!(m(".5").is_err());
    }

    #[test]
    fn cost_sums_lines_per_department() {
        let report = json!({"chargeback": {"currency": "EUR", "lines": [
            {"department": "b", "total": "1.10"},
            {"department": "a", "total": "2.00"},
            {"department": "b", "total": "0.25"},
        ]}});
        assert_eq!(
            serde_json::to_value(cost(&report).unwrap()).unwrap(),
            json!({"currency": "EUR", "total": "3.35", "departments": {"a": "2.00", "b": "1.35"}})
        );
        assert_eq!(cost(&json!({})), None);
    }

    /// Runs that differ only in `clusterQueues.` quotas share one read scenario, dropped
    /// when its last run has taken it; runs whose documents all differ share nothing.
    #[test]
    fn runs_share_a_scenario_only_across_quota_edits() {
        let cq = Axis::parse("clusterQueues.a.borrowingLimit=1..3").unwrap();
        let spec = Axis::parse("kueue.fairSharing=true,false").unwrap();
        let plan = SharePlan::<u32>::new(std::slice::from_ref(&cq), 0..3);
        assert_eq!(plan.slots.len(), 1);
        let plan = SharePlan::<u32>::new(&[spec.clone(), cq.clone()], 0..6);
        let remaining: Vec<usize> = plan
            .slots
            .values()
            .map(|s| s.lock().unwrap().remaining)
            .collect();
        assert_eq!(remaining, [3, 3]);
        // a shard of one run per document: nothing to share
        assert!(
            SharePlan::<u32>::new(&[cq.clone(), spec.clone()], 2..4)
                .slots
                .is_empty()
        );
        assert!(
            SharePlan::<u32>::new(std::slice::from_ref(&spec), 0..2)
                .slots
                .is_empty()
        );
        // the scenario is read once for the three runs and dropped after the third
        let plan = SharePlan::<u32>::new(std::slice::from_ref(&cq), 0..3);
        let reads = std::cell::Cell::new(0);
        let load = || {
            reads.set(reads.get() + 1);
            Err(Diagnostics::default())
        };
        let p0 = run_parameters(std::slice::from_ref(&cq), 0);
        assert!(plan.base(&p0, load).is_err());
        assert_eq!(reads.get(), 1);
        let ok = || {
            reads.set(reads.get() + 1);
            Ok(7)
        };
        assert_eq!(plan.base(&p0, ok).map(|x| *x), Ok(7));
        assert_eq!(reads.get(), 2);
        for i in 0..3 {
            let p = run_parameters(std::slice::from_ref(&cq), i);
            assert_eq!(plan.base(&p, ok).map(|x| *x), Ok(7));
            plan.done(&p);
        }
        assert_eq!(reads.get(), 2, "read once for the three runs");
        let slot = plan.slots.values().next().unwrap().lock().unwrap();
        assert_eq!(slot.remaining, 0);
        assert!(slot.loaded.is_none(), "dropped after the last run");
    }

    #[test]
    fn seed_needs_a_generated_trace() {
        let mut spec = json!({"workloads": [{"file": "x.yaml"}]});
        assert!(
            set_seed(&mut spec, "3")
                .unwrap_err()
                .contains("no generated trace")
        );
        let mut spec =
            json!({"workloads": [{"trace": {"format": "philly", "generate": {"jobs": 5}}}]});
        assert_eq!(set_seed(&mut spec, "3"), Ok(1));
        assert_eq!(spec["workloads"][0]["trace"]["generate"]["seed"], 3);
        assert!(set_seed(&mut spec, "-1").is_err());
    }

    #[test]
    fn axis_errors() {
        assert!(Axis::parse("novalue").is_err());
        assert!(Axis::parse("a..b=1").is_err());
        assert!(Axis::parse("a=1,").is_err());
        assert!(Axis::parse("a=5..1").is_err());
    }
}
