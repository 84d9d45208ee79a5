//! Public GPU-cluster traces as a workload source: `workloads: [{trace: {...}}]`.
//!
//! ```yaml
//! workloads:
//! - trace:
//!     format: helios          # helios | philly | alibaba-pai-2020 | alibaba-2023
//!     file: cluster_log.csv   # relative to the scenario file
//!     taskFile: pai_task_table.csv   # alibaba-pai-2020 only: the task table (required)
//!     queueBy: vc             # vc | user | qos (which the format has; default below)
//!     queue: batch            # instead of queueBy: every job goes to this one queue
//!     namespace: research     # default: the mapped queue name
//!     milliGpuResource: gpuquota.dev/gpu-milli   # optional: GPUs in thousandths (below)
//! ```
//!
//! Each trace job becomes one Workload, the same in every format:
//! - **queue**: the job's `queueBy` field (Helios and Philly: `vc` by default, or `user`;
//!   PAI 2020: `user`; Alibaba 2023: `qos`), lower-cased, every character outside
//!   `[a-z0-9-]` replaced by `-` (Kubernetes names are DNS labels). In Kueue mode it names a
//!   ClusterQueue of the cluster files; the workload goes to the first LocalQueue (by
//!   `namespace/name`) of its namespace pointing at that ClusterQueue, and a LocalQueue named
//!   after the ClusterQueue is implied when there is none (a Namespace too, when the cluster
//!   files have none of that name). A job whose ClusterQueue does not exist is skipped with
//!   reason `no-cluster-queue`. In `resourcequota` mode the namespace is what counts.
//! - **namespace**: `namespace`, else the mapped queue name. **name**: the job id, sanitised
//!   as the queue name; a second job of the same name is skipped (`duplicate-job`).
//! - **class**: the trace's final job status, verbatim (`COMPLETED`, `Pass`, `Terminated`,
//!   `Succeeded` …).
//! - **arrival**: the submission time; **runtime**: end − start of the job's run, whatever
//!   the final state (a failed or cancelled job held its GPUs too; Philly: the last attempt).
//! - **requests**: `nvidia.com/gpu` per pod; fractions (PAI's `plan_gpu` percent, 2023's
//!   `gpu_milli`) become milli quantities (`500m`), which Kueue charges rounded up to a
//!   whole GPU per pod as it charges every resource but CPU (kubernetes-sigs/kueue:
//!   `pkg/resources/requests.go`, `ResourceValue`). To count fractions exactly, set
//!   `milliGpuResource: NAME` (for instance `gpuquota.dev/gpu-milli`): every pod then asks
//!   for NAME in thousandths of a GPU (an integer) instead, and the ClusterQueues quote NAME
//!   in thousandths. CPU and memory are not requested: the
//!   policies compared are GPU policies, and a ClusterQueue that does not cover `cpu` would
//!   refuse every job.
//! - **GPU type**: PAI's `gpu_type` and 2023's `gpu_spec` become the pod's node selector
//!   [`GPU_TYPE_LABEL`]` = <type>`, so ResourceFlavors with that node label take them. A
//!   2023 `gpu_spec` listing alternatives (`V100M16|V100M32`) gets no selector (counted as
//!   `gpu-spec-alternatives`, the row is kept).
//!
//! Rows the mapping cannot use are never dropped silently: each is counted by reason and
//! the scenario's warnings say `N trace rows skipped (reason)` with the trace file as source. Reasons:
//! `malformed-row` (wrong column count, an unparsable number or time), `no-gpu` (a job
//! asking for no GPU), `never-ran` (no start time, or no attempt), `no-end` (still running
//! when the trace ends), `end-before-start`, `no-queue` (the queue field is empty),
//! `no-cluster-queue`, `local-queue-name-taken` (the namespace's LocalQueue named after the
//! ClusterQueue feeds another one), `duplicate-job`, `no-task` and `task-without-job` (PAI's
//! tables do not join). `gpu-spec-alternatives` counts rows kept without a node selector
//! (`N trace rows kept without a node selector (gpu-spec-alternatives)`).
//!
//! Times: Helios and Philly write local wall-clock times (`2020-04-01 00:00:05`, Philly
//! also `None`), read here as UTC and placed against `spec.start`; PAI 2020 and Alibaba 2023
//! write seconds since the trace's origin, and the origin is `spec.start`. The formats'
//! columns and the mapping of each are in [`helios`], [`philly`], [`pai`], [`alibaba2023`].
//! Nominal quotas are not derived from the traces (Helios' `cluster_gpu_number.csv` is not
//! read): the cluster files define them.

pub mod alibaba2023;
pub mod helios;
pub mod pai;
pub mod philly;
pub mod synthetic;

use std::collections::BTreeMap;

use gpuquota_model::Timestamp;
use gpuquota_model::diag::Code;

/// The node label a trace job's GPU type is selected with.
pub const GPU_TYPE_LABEL: &str = "gpuquota.dev/gpu-type";

/// A trace row the mapping cannot use (a warning naming the count and the reason).
pub const TRACE_ROW_SKIPPED: Code = Code::new("trace-row-skipped");

/// A trace format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Format {
    /// SenseTime Helios `cluster_log.csv`.
    Helios,
    /// Microsoft Philly `cluster_job_log` (JSON).
    Philly,
    /// Alibaba PAI 2020 `pai_job_table.csv` with `pai_task_table.csv`.
    AlibabaPai2020,
    /// Alibaba 2023 `openb_pod_list_*.csv`.
    Alibaba2023,
}

impl Format {
    /// Parses the scenario's `format`.
    pub fn parse(s: &str) -> Option<Format> {
        Some(match s {
            "helios" => Format::Helios,
            "philly" => Format::Philly,
            "alibaba-pai-2020" => Format::AlibabaPai2020,
            "alibaba-2023" => Format::Alibaba2023,
            _ => return None,
        })
    }

    /// The `queueBy` fields the format has; the first is the default.
    pub fn queue_fields(self) -> &'static [&'static str] {
        match self {
            Format::Helios | Format::Philly => &["vc", "user"],
            Format::AlibabaPai2020 => &["user"],
            Format::Alibaba2023 => &["qos"],
        }
    }

    /// Whether times are seconds since the trace's origin (`spec.start`).
    pub fn relative_times(self) -> bool {
        matches!(self, Format::AlibabaPai2020 | Format::Alibaba2023)
    }
}

/// One pod set of a trace job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodSet {
    /// Pod set name.
    pub name: String,
    /// Pods.
    pub count: u32,
    /// GPUs per pod in thousandths.
    pub gpu_milli: u64,
    /// The GPU type (node selector), if any.
    pub gpu_type: Option<String>,
}

/// One trace job, in the loaders' common shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// The job id.
    pub id: String,
    /// The queue fields by name (`vc`, `user`, `qos`).
    pub fields: BTreeMap<&'static str, String>,
    /// The final status.
    pub status: String,
    /// Submission, ms (unix epoch, or since the origin for relative formats).
    pub submit_ms: i64,
    /// Runtime, ms.
    pub runtime_ms: i64,
    /// Pod sets (at least one GPU in all).
    pub pod_sets: Vec<PodSet>,
}

/// What a loader read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Loaded {
    /// The usable jobs, in file order.
    pub jobs: Vec<Job>,
    /// Rows skipped (or adjusted) by reason.
    pub skipped: BTreeMap<&'static str, u64>,
}

impl Loaded {
    /// Counts one row under `reason`.
    pub fn skip(&mut self, reason: &'static str) {
        *self.skipped.entry(reason).or_insert(0) += 1;
    }
}

/// A Kubernetes-safe name: lower case, `[a-z0-9-]`, no leading or trailing `-`.
///
/// ```
/// assert_eq!(gpuquota_sim::trace::sanitize("vc6YE"), "vc6ye");
/// assert_eq!(gpuquota_sim::trace::sanitize("application_15_2"), "application-15-2");
/// ```
pub fn sanitize(s: &str) -> String {
    let out: String = s
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    out.trim_matches('-').to_owned()
}

/// `YYYY-MM-DD HH:MM:SS` (or RFC 3339) read as UTC, in unix ms.
///
/// ```
/// assert_eq!(gpuquota_sim::trace::wall_clock_ms("1970-01-01 00:01:00"), Some(60_000));
/// assert_eq!(gpuquota_sim::trace::wall_clock_ms("None"), None);
/// ```
pub fn wall_clock_ms(s: &str) -> Option<i64> {
    let s = s.trim();
    if s.len() < 19 {
        return None;
    }
    let text = if s.as_bytes().get(10) == Some(&b' ') {
        format!("{}T{}Z", &s[..10], &s[11..])
    } else {
        s.to_owned()
    };
    let t = Timestamp::parse(&text).ok()?;
    i64::try_from(t.unix_nanos().div_euclid(1_000_000)).ok()
}

/// Seconds (an integer or a decimal) as ms, rounded to the nearest ms.
///
/// ```
/// assert_eq!(gpuquota_sim::trace::seconds_ms("12.5"), Some(12_500));
/// assert_eq!(gpuquota_sim::trace::seconds_ms(""), None);
/// ```
pub fn seconds_ms(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Ok(i) = s.parse::<i64>() {
        return i.checked_mul(1000);
    }
    let f: f64 = s.parse().ok()?;
    let ms = (f * 1000.0).round();
    if ms.is_finite() && ms.abs() < 9.0e15 {
        Some(ms as i64)
    } else {
        None
    }
}

/// Reads a trace of `format` from its text (`tasks`: PAI's task table).
///
/// # Errors
/// A message when the file as a whole cannot be read (no header, a missing column, not JSON).
///
/// # Complexity
/// O(rows) (PAI: O(rows log rows) for joining the tables).
pub fn load(format: Format, text: &str, tasks: Option<&str>) -> Result<Loaded, String> {
    match format {
        Format::Helios => helios::load(text),
        Format::Philly => philly::load(text),
        Format::AlibabaPai2020 => pai::load(text, tasks.unwrap_or("")),
        Format::Alibaba2023 => alibaba2023::load(text),
    }
}

/// Column positions by header name.
pub(crate) fn columns<const N: usize>(
    header: &csv::StringRecord,
    names: [&str; N],
) -> Result<[usize; N], String> {
    let mut out = [0usize; N];
    for (i, n) in names.iter().enumerate() {
        out[i] = header
            .iter()
            .position(|h| h.trim() == *n)
            .ok_or_else(|| format!("the header has no column {n:?}"))?;
    }
    Ok(out)
}

/// A CSV reader over text (`headers`: whether the first row names the columns).
pub(crate) fn csv_reader(text: &str, headers: bool) -> csv::Reader<&[u8]> {
    csv::ReaderBuilder::new()
        .has_headers(headers)
        .flexible(true)
        .from_reader(text.as_bytes())
}

/// A count as u32 (pods), `None` when negative or not a whole number.
pub(crate) fn count(s: &str) -> Option<u32> {
    let s = s.trim();
    s.parse::<u32>().ok().or_else(|| {
        s.parse::<f64>()
            .ok()
            .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 4.0e9)
            .map(|f| f as u32)
    })
}

/// Runtime from start and end: the reasons when it cannot be had.
pub(crate) fn runtime(start: Option<i64>, end: Option<i64>) -> Result<i64, &'static str> {
    match (start, end) {
        (None, _) => Err("never-ran"),
        (Some(_), None) => Err("no-end"),
        (Some(s), Some(e)) if e < s => Err("end-before-start"),
        (Some(s), Some(e)) => e.checked_sub(s).ok_or("malformed-row"),
    }
}

/// The `trace:` entry of `spec.workloads[]`.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct TraceSource {
    /// `helios`, `philly`, `alibaba-pai-2020` or `alibaba-2023`.
    #[serde(default)]
    pub format: String,
    /// The trace file, relative to the scenario.
    #[serde(default)]
    pub file: String,
    /// PAI 2020's task table.
    #[serde(default)]
    pub task_file: Option<String>,
    /// The job field naming the queue.
    #[serde(default)]
    pub queue_by: Option<String>,
    /// One queue for every job (instead of `queueBy`).
    #[serde(default)]
    pub queue: Option<String>,
    /// The workloads' namespace (default: the queue name).
    #[serde(default)]
    pub namespace: Option<String>,
    /// Request GPUs as this resource in thousandths instead of `nvidia.com/gpu`.
    #[serde(default)]
    pub milli_gpu_resource: Option<String>,
}

/// A trace read and checked, ready to become workloads.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    pub(crate) file: String,
    pub(crate) format: Format,
    pub(crate) queue_by: Option<&'static str>,
    pub(crate) queue: Option<String>,
    pub(crate) namespace: Option<String>,
    pub(crate) milli_gpu_resource: Option<String>,
    pub(crate) loaded: Loaded,
}

/// Checks a `trace:` entry and reads its files; errors are messages for `field`.
pub(crate) fn prepare(
    t: &TraceSource,
    read: &crate::scenario::ReadFn<'_>,
) -> Result<Prepared, Vec<(String, String)>> {
    let mut errs: Vec<(String, String)> = Vec::new();
    let format = Format::parse(&t.format);
    if format.is_none() {
        errs.push((
            "format".into(),
            format!(
                "unknown trace format {:?}: expected helios, philly, alibaba-pai-2020 or alibaba-2023",
                t.format
            ),
        ));
    }
    if t.file.is_empty() {
        errs.push(("file".into(), "required: the trace file".into()));
    }
    let mut queue_by = None;
    if let Some(f) = format {
        let fields = f.queue_fields();
        match (&t.queue_by, &t.queue) {
            (Some(_), Some(_)) => errs.push((
                "queue".into(),
                "give either queueBy or queue, not both".into(),
            )),
            (Some(q), None) => match fields.iter().find(|x| **x == q.as_str()) {
                Some(x) => queue_by = Some(*x),
                None => errs.push((
                    "queueBy".into(),
                    format!(
                        "{:?} is not a field of the {} format: expected one of {}",
                        q,
                        t.format,
                        fields.join(", ")
                    ),
                )),
            },
            (None, Some(q)) if sanitize(q).is_empty() => {
                errs.push(("queue".into(), "an empty queue name".into()))
            }
            (None, Some(_)) => {}
            (None, None) => queue_by = fields.first().copied(),
        }
        if f == Format::AlibabaPai2020 && t.task_file.is_none() {
            errs.push((
                "taskFile".into(),
                "required for alibaba-pai-2020: pai_task_table.csv".into(),
            ));
        }
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    let Some(format) = format else {
        return Err(errs);
    };
    let (shown, text) = read(&t.file).map_err(|d| vec![("file".to_owned(), d.message)])?;
    let tasks = match &t.task_file {
        Some(tf) if format == Format::AlibabaPai2020 => Some(
            read(tf)
                .map_err(|d| vec![("taskFile".to_owned(), d.message)])?
                .1,
        ),
        _ => None,
    };
    let loaded = load(format, &text, tasks.as_deref())
        .map_err(|m| vec![("file".to_owned(), format!("{shown}: {m}"))])?;
    Ok(Prepared {
        file: shown,
        format,
        queue_by,
        queue: t.queue.clone(),
        namespace: t.namespace.clone(),
        milli_gpu_resource: t.milli_gpu_resource.clone().filter(|r| !r.is_empty()),
        loaded,
    })
}

/// Turns a prepared trace into Workloads (and implied LocalQueues and Namespaces) of
/// `model`, with their instances; the skipped rows become one warning per reason.
///
/// # Complexity
/// O(jobs × log(workloads)).
#[allow(clippy::too_many_arguments)]
pub(crate) fn apply(
    mut p: Prepared,
    field: &str,
    kueue: bool,
    start: Timestamp,
    model: &mut gpuquota_model::Model,
    instances: &mut BTreeMap<String, crate::scenario::Instance>,
    warnings: &mut gpuquota_model::diag::Diagnostics,
) {
    use gpuquota_model::diag::Diagnostic;
    let start_ms = i64::try_from(start.unix_nanos().div_euclid(1_000_000)).unwrap_or(0);
    // LocalQueue per (namespace, ClusterQueue), found or implied
    let mut lq_for: BTreeMap<(String, String), Result<String, &'static str>> = BTreeMap::new();
    let jobs = std::mem::take(&mut p.loaded.jobs);
    for job in jobs {
        let raw = match (&p.queue, p.queue_by) {
            (Some(q), _) => q.clone(),
            (None, Some(f)) => job.fields.get(f).cloned().unwrap_or_default(),
            (None, None) => String::new(),
        };
        let queue = sanitize(&raw);
        if queue.is_empty() {
            p.loaded.skip("no-queue");
            continue;
        }
        let name = sanitize(&job.id);
        if name.is_empty() {
            p.loaded.skip("malformed-row");
            continue;
        }
        let ns = p.namespace.clone().unwrap_or_else(|| queue.clone());
        let key = format!("{ns}/{name}");
        if model.workloads.contains_key(&key) {
            p.loaded.skip("duplicate-job");
            continue;
        }
        let mut queue_name = String::new();
        if kueue {
            let lq = lq_for
                .entry((ns.clone(), queue.clone()))
                .or_insert_with(|| implied_local_queue(model, &ns, &queue));
            match lq {
                Ok(l) => queue_name = l.clone(),
                Err(reason) => {
                    p.loaded.skip(reason);
                    continue;
                }
            }
        } else if !model.namespaces.contains_key(&ns) {
            insert_namespace(model, &ns);
        }
        let created_ms = if p.format.relative_times() {
            job.submit_ms
        } else {
            job.submit_ms.saturating_sub(start_ms)
        };
        let pod_sets: Vec<serde_json::Value> = job
            .pod_sets
            .iter()
            .map(|s| {
                let (res, q) = match &p.milli_gpu_resource {
                    Some(r) => (r.as_str(), s.gpu_milli.to_string()),
                    None if s.gpu_milli % 1000 == 0 => {
                        ("nvidia.com/gpu", (s.gpu_milli / 1000).to_string())
                    }
                    None => ("nvidia.com/gpu", format!("{}m", s.gpu_milli)),
                };
                let mut spec = serde_json::json!({"containers": [
                    {"name": "c", "resources": {"requests": {res: q}}}]});
                if let Some(t) = &s.gpu_type {
                    spec["nodeSelector"] = serde_json::json!({GPU_TYPE_LABEL: t});
                }
                serde_json::json!({"name": s.name, "count": s.count, "template": {"spec": spec}})
            })
            .collect();
        let v = serde_json::json!({
            "metadata": {
                "name": name, "namespace": ns,
                "annotations": {
                    crate::scenario::CLASS_KEY: job.status,
                    crate::scenario::RUNTIME_ANNOTATION: format!("{}ms", job.runtime_ms),
                },
                "creationTimestamp": crate::scenario::at_ms(start, created_ms).to_string(),
            },
            "spec": {"queueName": queue_name, "podSets": pod_sets},
        });
        let Ok(w) = serde_json::from_value::<gpuquota_model::kueue::Workload>(v) else {
            p.loaded.skip("malformed-row");
            continue;
        };
        model.workloads.insert(key.clone(), w);
        instances.insert(
            key.clone(),
            crate::scenario::Instance {
                key,
                class: job.status,
                created_ms,
                runtime_ms: Some(job.runtime_ms),
            },
        );
    }
    for (reason, n) in &p.loaded.skipped {
        warnings.push(
            Diagnostic::warning(
                TRACE_ROW_SKIPPED,
                if *reason == "gpu-spec-alternatives" {
                    format!("{n} trace rows kept without a node selector ({reason})")
                } else {
                    format!("{n} trace rows skipped ({reason})")
                },
            )
            .source(p.file.clone())
            .field(field.to_owned()),
        );
    }
}

fn insert_namespace(model: &mut gpuquota_model::Model, ns: &str) {
    if let Ok(n) = serde_json::from_value::<gpuquota_model::core::Namespace>(
        serde_json::json!({"metadata": {"name": ns}}),
    ) {
        model.namespaces.insert(ns.to_owned(), n);
    }
}

/// The LocalQueue of `ns` for ClusterQueue `cq`: the first existing one, else an implied one
/// named `cq` (with its Namespace); the skip reason when `cq` does not exist or a LocalQueue
/// of that name feeds another ClusterQueue.
fn implied_local_queue(
    model: &mut gpuquota_model::Model,
    ns: &str,
    cq: &str,
) -> Result<String, &'static str> {
    if !model.cluster_queues.contains_key(cq) {
        return Err("no-cluster-queue");
    }
    if let Some(l) = model
        .local_queues
        .values()
        .find(|l| l.metadata.namespace.as_deref() == Some(ns) && l.spec.cluster_queue == cq)
    {
        return Ok(l.metadata.name.clone());
    }
    let key = format!("{ns}/{cq}");
    if model.local_queues.contains_key(&key) {
        return Err("local-queue-name-taken");
    }
    let lq = serde_json::from_value::<gpuquota_model::kueue::LocalQueue>(serde_json::json!({
        "metadata": {"name": cq, "namespace": ns}, "spec": {"clusterQueue": cq},
    }))
    .map_err(|_| "malformed-row")?;
    model.local_queues.insert(key, lq);
    if !model.namespaces.contains_key(ns) {
        insert_namespace(model, ns);
    }
    Ok(cq.to_owned())
}
