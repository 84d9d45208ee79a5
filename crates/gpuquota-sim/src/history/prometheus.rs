//! A recorded history read from Prometheus series: kube-state-metrics and the DCGM exporter.
//!
//! ```yaml
//! workloads:
//! - history:
//!     prometheus:
//!       files: [ksm.json, dcgm.json]   # saved /api/v1/query_range answers, or
//!       url: http://127.0.0.1:9090     # a live server (feature `http`), asked for
//!       start: "2026-11-01T00:00:00Z"  #   [start, end] in windows (see
//!       end: "2026-12-01T00:00:00Z"    #   gpuquota_metering::prometheus)
//!       step: 60                       #   seconds between points (default 60)
//! ```
//!
//! **Series read** (any other series of the answers is counted in a warning):
//!
//! | series | labels | gives |
//! | --- | --- | --- |
//! | `kube_pod_created` | `namespace`, `pod`, `uid` | the pod's creation (value, unix s) |
//! | `kube_pod_start_time` | `namespace`, `pod` | its start |
//! | `kube_pod_completion_time` | `namespace`, `pod` | its end (it completed) |
//! | `kube_pod_container_resource_requests{resource="nvidia_com_gpu"}` | `namespace`, `pod`, `container` | its GPUs (sum over containers) |
//! | `kube_pod_labels` | `label_kueue_x_k8s_io_queue_name`, `label_kueue_x_k8s_io_priority_class` | its LocalQueue and priority class |
//! | `kube_pod_owner` | `owner_kind`, `owner_name`, `owner_is_controller` | the Job it runs for |
//! | `kube_job_created` (optional) | `namespace`, `job_name` | a Job's arrival |
//! | `DCGM_*` (any DCGM exporter metric) | `namespace`/`pod` (or `exported_namespace`/`exported_pod`, `pod_namespace`/`pod_name`), `UUID` or `gpu` | the first and last scrape the pod held a GPU, and how many it held |
//!
//! Where Prometheus renamed kube-state-metrics' `namespace` and `pod` (a scrape without
//! `honor_labels`), `exported_namespace` and `exported_pod` are read instead.
//! kube-state-metrics exports a pod label only when its `--metric-labels-allowlist` names
//! it (`pods=[kueue.x-k8s.io/queue-name,kueue.x-k8s.io/priority-class]`).
//!
//! **What becomes a workload.** The pods of one Job (`kube_pod_owner{owner_kind="Job"}`
//! with `owner_is_controller="true"`) are that Job: its arrival the Job's
//! `kube_job_created`, else its first pod's creation; its start the first pod's start; its
//! end the last pod's end once none of its pods runs on (a pod runs on when its series
//! last until the end of the data without a completion time; one whose series stop before
//! without one was deleted, preempted or removed, and is counted in a warning); its
//! parallelism the most of its
//! pods that existed at once (from creation to end, or to their last point), each with the
//! most GPUs one of them requested. Any other pod is a Pod of its own
//! (a pod owned by another kind of controller is counted in a warning and replayed alone).
//! A workload needs the queue-name label to be replayed (without it, it was not queued by
//! Kueue and is counted in a warning, as in a dump). What follows is read as a
//! [dump](super::dump) of those Jobs and Pods would be: the same replay, the same
//! [`Recorded`](super::Recorded) history for [`fidelity`](super::fidelity).
//!
//! **What is inferred when a series is missing** (each case counted in one warning):
//! - no creation time: the arrival is the start (else the first DCGM scrape), so the
//!   waiting time is **unknown**: the recorded first admission is left out
//!   (`firstAdmittedMs: null`) and fidelity does not compare the workload's time to admission;
//! - no start time: the first DCGM scrape that carries the pod;
//! - no GPU request: the number of distinct GPUs (`UUID`, else `gpu`) DCGM saw it hold;
//! - no completion time: when the answers hold no `kube_pod_completion_time` at all, the
//!   last DCGM scrape that carries the pod is its end if it is before the last DCGM scrape
//!   of all (it stopped before the data did); otherwise a pod without a completion time
//!   did not complete: still running, or deleted, and a workload without an end runs in
//!   the replay until the replay ends;
//! - a pod with no time at all (no creation, no start, no DCGM scrape) cannot be placed and
//!   is counted in a warning.
//!
//! Pod series keep no conditions, so evictions and requeues are not recorded: a Job whose
//! pods were deleted and made again (preempted, then readmitted) runs, in the record, from
//! its first pod's start to its last pod's end.
//!
//! Series are folded as the answers stream by (per pod a handful of numbers), so memory is
//! O(pods + one series), not O(points).

use std::collections::{BTreeMap, BTreeSet};

use gpuquota_metering::prometheus::Series;
use gpuquota_model::Timestamp;
use gpuquota_model::diag::{Diagnostic, Diagnostics, codes};
use serde_json::{Value, json};

use super::History;
use super::dump::HISTORY_OBJECT_SKIPPED;

const GPU_REQUEST: &str = "kube_pod_container_resource_requests";

/// The `prometheus:` entry of a `history:` source.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct PrometheusSource {
    /// Saved `/api/v1/query_range` answers (JSON), relative to the scenario.
    #[serde(default)]
    pub files: Vec<String>,
    /// A live Prometheus (`http://HOST:PORT`), asked for `[start, end]`.
    pub url: Option<String>,
    /// The first instant asked for (RFC 3339), with `url`.
    pub start: Option<String>,
    /// The last instant asked for (RFC 3339), with `url`.
    pub end: Option<String>,
    /// Seconds between points, with `url` (default 60).
    pub step: Option<i64>,
}

/// The queries a live Prometheus is asked, one per series the reader uses.
pub const QUERIES: [&str; 8] = [
    "kube_pod_created",
    "kube_pod_start_time",
    "kube_pod_completion_time",
    "kube_pod_container_resource_requests{resource=\"nvidia_com_gpu\"}",
    "kube_pod_labels",
    "kube_pod_owner",
    "kube_job_created",
    "DCGM_FI_DEV_GPU_UTIL",
];

/// What the series say of one pod (unix ms; GPUs in thousandths).
#[derive(Debug, Default)]
struct Pod {
    uid: String,
    created: Option<i64>,
    start: Option<i64>,
    completed: Option<i64>,
    gpu_by_container: BTreeMap<String, u64>,
    queue: Option<String>,
    class: Option<String>,
    owner: Option<(String, String)>,
    first_scrape: Option<i64>,
    last_scrape: Option<i64>,
    devices: BTreeSet<String>,
    /// The last point of its kube-state-metrics series.
    last_seen: Option<i64>,
}

/// Pod and Job series folded as answers arrive ([`Fold::add`]), then turned into a
/// history ([`Fold::finish`]).
#[derive(Debug, Default)]
pub struct Fold {
    pods: BTreeMap<(String, String), Pod>,
    jobs_created: BTreeMap<(String, String), i64>,
    saw_completion: bool,
    last_dcgm: Option<i64>,
    last_ksm: Option<i64>,
    other: BTreeMap<String, u64>,
}

/// The last point's value as unix ms (the series of these metrics hold a time as value).
fn time_value(s: &Series) -> Option<i64> {
    s.points
        .last()
        .map(|(_, v)| *v)
        .filter(|v| v.is_finite() && *v > 0.0)
        .map(|v| (v * 1000.0).round() as i64)
}

fn first_label<'s>(s: &'s Series, names: &[&str]) -> &'s str {
    names
        .iter()
        .map(|n| s.label(n))
        .find(|v| !v.is_empty())
        .unwrap_or("")
}

impl Fold {
    /// Folds one answer's series in.
    ///
    /// # Complexity
    /// O(points × log pods).
    pub fn add(&mut self, series: Vec<Series>) {
        for s in series {
            self.add_one(s);
        }
    }

    /// Folds one series in.
    ///
    /// # Complexity
    /// O(points + log pods).
    pub fn add_one(&mut self, s: Series) {
        {
            let name = s.label("__name__").to_owned();
            if name.starts_with("DCGM_") {
                self.dcgm(&s);
                return;
            }
            if name == "kube_job_created" {
                let key = (
                    first_label(&s, &["exported_namespace", "namespace"]).to_owned(),
                    s.label("job_name").to_owned(),
                );
                if let (false, Some(t)) = (key.1.is_empty(), time_value(&s)) {
                    self.jobs_created.insert(key, t);
                }
                return;
            }
            let known = matches!(
                name.as_str(),
                "kube_pod_created"
                    | "kube_pod_start_time"
                    | "kube_pod_completion_time"
                    | GPU_REQUEST
                    | "kube_pod_labels"
                    | "kube_pod_owner"
            );
            // scraped without honor_labels, kube-state-metrics' own labels are exported_*
            let ns = first_label(&s, &["exported_namespace", "namespace"]);
            let pod = first_label(&s, &["exported_pod", "pod"]);
            if !known || pod.is_empty() {
                *self.other.entry(name).or_insert(0) += 1;
                return;
            }
            if name == "kube_pod_completion_time" {
                self.saw_completion = true;
            }
            let p = self
                .pods
                .entry((ns.to_owned(), pod.to_owned()))
                .or_default();
            if p.uid.is_empty() {
                p.uid = s.label("uid").to_owned();
            }
            if let Some(last) = s.points.iter().map(|p| p.0).max() {
                p.last_seen = Some(p.last_seen.map_or(last, |l| l.max(last)));
                self.last_ksm = Some(self.last_ksm.map_or(last, |l| l.max(last)));
            }
            match name.as_str() {
                "kube_pod_created" => p.created = time_value(&s).or(p.created),
                "kube_pod_start_time" => p.start = time_value(&s).or(p.start),
                "kube_pod_completion_time" => p.completed = time_value(&s).or(p.completed),
                GPU_REQUEST => {
                    let r = s.label("resource");
                    if r == "nvidia_com_gpu" || r == "nvidia.com/gpu" {
                        let most = s.points.iter().map(|(_, v)| *v).fold(0.0f64, f64::max);
                        let milli = (most * 1000.0).round();
                        if milli.is_finite() && milli > 0.0 {
                            p.gpu_by_container
                                .insert(s.label("container").to_owned(), milli as u64);
                        }
                    }
                }
                "kube_pod_labels" => {
                    let q = s.label("label_kueue_x_k8s_io_queue_name");
                    if !q.is_empty() {
                        p.queue = Some(q.to_owned());
                    }
                    let c = s.label("label_kueue_x_k8s_io_priority_class");
                    if !c.is_empty() {
                        p.class = Some(c.to_owned());
                    }
                }
                _ => {
                    let kind = s.label("owner_kind");
                    if s.label("owner_is_controller") == "true" && !matches!(kind, "" | "<none>") {
                        p.owner = Some((kind.to_owned(), s.label("owner_name").to_owned()));
                    }
                }
            }
        }
    }

    fn dcgm(&mut self, s: &Series) {
        let ns = first_label(s, &["exported_namespace", "namespace", "pod_namespace"]);
        let pod = first_label(s, &["exported_pod", "pod", "pod_name"]);
        let (Some(first), Some(last)) = (
            s.points.iter().map(|p| p.0).min(),
            s.points.iter().map(|p| p.0).max(),
        ) else {
            return;
        };
        self.last_dcgm = Some(self.last_dcgm.map_or(last, |l| l.max(last)));
        if pod.is_empty() {
            return;
        }
        // with labels from a scrape that did not honour the exporter's, namespace/pod are
        // the exporter's own pod: only the exported_ pair counts then
        if s.labels.contains_key("exported_pod") != s.labels.contains_key("exported_namespace") {
            return;
        }
        let p = self
            .pods
            .entry((ns.to_owned(), pod.to_owned()))
            .or_default();
        p.first_scrape = Some(p.first_scrape.map_or(first, |f| f.min(first)));
        p.last_scrape = Some(p.last_scrape.map_or(last, |l| l.max(last)));
        let device = first_label(s, &["UUID", "uuid", "gpu"]);
        if !device.is_empty() {
            p.devices.insert(format!(
                "{}/{device}/{}",
                first_label(s, &["Hostname", "hostname"]),
                s.label("GPU_I_ID")
            ));
        }
    }

    /// The history of the folded series (`name` names the source in diagnostics): the
    /// Jobs and Pods replayed as a dump of them would be, the records of workloads whose
    /// arrival was inferred without their first admission, and a warning per inference.
    ///
    /// # Errors
    /// As [`super::load`] for the objects made (a start after an end …).
    ///
    /// # Complexity
    /// O(pods × log pods).
    pub fn finish(self, name: &str) -> Result<History, Diagnostics> {
        let mut notes: BTreeMap<&'static str, u64> = BTreeMap::new();
        let mut note = |what: &'static str| *notes.entry(what).or_insert(0) += 1;
        // per pod: (arrival, start, end, GPUs, arrival inferred)
        struct Times {
            created: i64,
            start: Option<i64>,
            end: Option<i64>,
            gpu_milli: u64,
            inferred: bool,
            running: bool,
            /// Until when it existed: its end, else its last point.
            until: i64,
        }
        // per Job: its pods' times, queue and class
        type JobPods = Vec<(Times, Option<String>, Option<String>)>;
        let mut jobs: BTreeMap<(String, String), JobPods> = BTreeMap::new();
        let mut items: Vec<Value> = Vec::new();
        let mut unknown_wait: BTreeSet<(String, String)> = BTreeSet::new();
        for ((ns, pod), p) in self.pods {
            let start = match p.start {
                Some(s) => Some(s),
                None if p.first_scrape.is_some() => {
                    note("without kube_pod_start_time: started at their first DCGM scrape");
                    p.first_scrape
                }
                None => None,
            };
            let (created, inferred) = match (p.created, start) {
                (Some(c), _) => (c, false),
                (None, Some(s)) => {
                    note(
                        "without kube_pod_created: arrival = start, so their waiting time is \
                         unknown (not compared)",
                    );
                    (s, true)
                }
                (None, None) => {
                    note("with no time recorded (no creation, start or DCGM scrape): skipped");
                    continue;
                }
            };
            let end = match p.completed {
                Some(e) => Some(e),
                None if !self.saw_completion
                    && p.last_scrape.is_some_and(|l| Some(l) < self.last_dcgm) =>
                {
                    note("without kube_pod_completion_time: ended at their last DCGM scrape");
                    p.last_scrape
                }
                None => None,
            };
            // seen at the end of the data without an end: still running; gone before: deleted
            let running = end.is_none() && p.last_seen.is_some() && p.last_seen >= self.last_ksm;
            if end.is_none() && start.is_some() && !running {
                note("gone before they completed (deleted: preempted or removed): no end recorded");
            }
            let gpu_milli = if p.gpu_by_container.is_empty() {
                if !p.devices.is_empty() {
                    note("without a GPU request: as many GPUs as DCGM saw them hold");
                }
                p.devices.len() as u64 * 1000
            } else {
                p.gpu_by_container.values().sum()
            };
            let t = Times {
                created,
                start,
                end,
                gpu_milli,
                inferred,
                running,
                until: end.or(p.last_seen).or(p.last_scrape).unwrap_or(created),
            };
            match &p.owner {
                Some((kind, owner)) if kind == "Job" && !owner.is_empty() => {
                    jobs.entry((ns.clone(), owner.clone())).or_default().push((
                        t,
                        p.queue.clone(),
                        p.class.clone(),
                    ));
                }
                owner => {
                    if owner.is_some() {
                        note("owned by a controller other than a Job: replayed as single pods");
                    }
                    if t.inferred {
                        unknown_wait.insert(("Pod".to_owned(), format!("{ns}/{pod}")));
                    }
                    items.push(pod_item(
                        &ns,
                        &pod,
                        &p,
                        &t_json(t.created, t.start, t.end),
                        t.gpu_milli,
                    ));
                }
            }
        }
        for ((ns, job), pods) in jobs {
            let first_created = pods.iter().map(|p| p.0.created).min().unwrap_or(0);
            let (created, inferred) = match self.jobs_created.get(&(ns.clone(), job.clone())) {
                Some(c) => (*c, false),
                None => (first_created, pods.iter().any(|p| p.0.inferred)),
            };
            let start = pods.iter().filter_map(|p| p.0.start).min();
            // the last pod's end, once none runs on
            let end = if pods.iter().any(|p| p.0.running) {
                None
            } else {
                pods.iter().filter_map(|p| p.0.end).max()
            };
            let per_pod = pods.iter().map(|p| p.0.gpu_milli).max().unwrap_or(0);
            let queue = pods.iter().find_map(|p| p.1.clone());
            let class = pods.iter().find_map(|p| p.2.clone());
            if inferred {
                unknown_wait.insert(("Job".to_owned(), format!("{ns}/{job}")));
            }
            let mut labels = serde_json::Map::new();
            if let Some(q) = queue {
                labels.insert("kueue.x-k8s.io/queue-name".into(), Value::String(q));
            }
            if let Some(c) = class {
                labels.insert("kueue.x-k8s.io/priority-class".into(), Value::String(c));
            }
            let times = t_json(created, start, end);
            let n = most_at_once(pods.iter().map(|p| (p.0.created, p.0.until)));
            items.push(json!({
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {
                    "name": job,
                    "namespace": ns,
                    "creationTimestamp": times["created"],
                    "labels": labels,
                },
                "spec": {
                    "parallelism": n,
                    "completions": n,
                    "template": {"spec": {"containers": [gpu_container(per_pod)]}},
                },
                "status": {"startTime": times["start"], "completionTime": times["end"]},
            }));
        }
        let mut history = if items.is_empty() {
            History::default()
        } else {
            let text = json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string();
            super::load(&[(name.to_owned(), text)])?
        };
        for r in &mut history.records {
            if unknown_wait.contains(&(r.kind.clone(), r.object.clone())) {
                r.first_admitted_ms = None;
            }
        }
        for (what, n) in notes {
            history.warnings.push(
                Diagnostic::warning(HISTORY_OBJECT_SKIPPED, format!("{n} pods {what}"))
                    .source(name.to_owned()),
            );
        }
        for (metric, n) in &self.other {
            history.warnings.push(
                Diagnostic::warning(
                    HISTORY_OBJECT_SKIPPED,
                    format!("{n} series of {metric} not read"),
                )
                .source(name.to_owned()),
            );
        }
        Ok(history)
    }
}

/// The most intervals `[from, until]` that overlap at one instant (pods of one Job that
/// existed at once; the runs of a Job made again do not add up).
fn most_at_once(spans: impl Iterator<Item = (i64, i64)>) -> usize {
    let mut edges: Vec<(i64, i8)> = Vec::new();
    for (a, b) in spans {
        edges.push((a, -1));
        edges.push((b.max(a), 1));
    }
    // at one instant, a start counts before an end (closed intervals)
    edges.sort_unstable();
    let (mut now, mut most) = (0usize, 0usize);
    for (_, e) in edges {
        if e < 0 {
            now += 1;
            most = most.max(now);
        } else {
            now = now.saturating_sub(1);
        }
    }
    most
}

/// RFC 3339 texts of (created, start, end), `null` when absent.
fn t_json(created: i64, start: Option<i64>, end: Option<i64>) -> Value {
    let t = |ms: i64| Value::String(crate::scenario::at_ms(Timestamp::EPOCH, ms).to_string());
    json!({
        "created": t(created),
        "start": start.map_or(Value::Null, t),
        "end": end.map_or(Value::Null, t),
    })
}

fn gpu_container(milli: u64) -> Value {
    let q = if milli.is_multiple_of(1000) {
        (milli / 1000).to_string()
    } else {
        format!("{milli}m")
    };
    json!({"name": "c", "resources": {"requests": {"nvidia.com/gpu": q}}})
}

fn pod_item(ns: &str, pod: &str, p: &Pod, times: &Value, gpu_milli: u64) -> Value {
    let mut labels = serde_json::Map::new();
    if let Some(q) = &p.queue {
        labels.insert("kueue.x-k8s.io/queue-name".into(), Value::String(q.clone()));
    }
    let mut spec = json!({"containers": [gpu_container(gpu_milli)]});
    if let Some(c) = &p.class {
        spec["priorityClassName"] = Value::String(c.clone());
    }
    let mut status = json!({"startTime": times["start"]});
    if !times["end"].is_null() {
        status["phase"] = json!("Succeeded");
        status["containerStatuses"] =
            json!([{"name": "c", "state": {"terminated": {"finishedAt": times["end"]}}}]);
    }
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": pod,
            "namespace": ns,
            "uid": p.uid,
            "creationTimestamp": times["created"],
            "labels": labels,
        },
        "spec": spec,
        "status": status,
    })
}

/// Reads saved `query_range` answers (display name, text) into a history.
///
/// # Errors
/// Every answer that is not a `query_range` matrix, or an error or partial one (naming its
/// file); then the errors of the objects made ([`Fold::finish`]).
///
/// # Complexity
/// O(input size + pods × log pods).
pub fn load(files: &[(String, String)]) -> Result<History, Diagnostics> {
    let mut fold = Fold::default();
    let mut errors = Diagnostics::default();
    for (name, text) in files {
        let each = &mut |s| fold.add_one(s);
        if let Err(d) = gpuquota_metering::prometheus::read_answer(name, text.as_bytes(), each) {
            errors.push(d);
        }
    }
    if errors.has_errors() {
        return Err(errors);
    }
    let shown: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    fold.finish(&shown.join(", "))
}

/// Asks a live Prometheus for the series the reader uses ([`QUERIES`]) over
/// `[start, end]` (unix seconds), in windows under the server's limit, each answer folded
/// into `fold` before the next is asked for (feature `http`).
///
/// # Errors
/// The first query that fails (the server unreachable, an HTTP error, no answer within
/// `timeout_seconds`, an error or partial answer), as one diagnostic of code
/// `read-failed` naming the query.
///
/// # Complexity
/// O(points) time, O(pods + one series) memory.
#[cfg(feature = "http")]
pub fn fetch_into(
    fold: &mut Fold,
    url: &str,
    (start, end, step): (i64, i64, i64),
    timeout_seconds: u64,
) -> Result<(), Diagnostic> {
    use gpuquota_metering::prometheus::{Client, read_answer, windows};
    let client = Client::new(url, timeout_seconds)?;
    let ws = windows(start, end, step).map_err(|d| d.source(url.to_owned()))?;
    for q in QUERIES {
        for (a, b) in &ws {
            let body = client.query_range(q, *a, *b, step)?;
            // each series folded as it streams by: memory O(pods + one series)
            read_answer(&client.describe(q, *a, *b, step), body, &mut |s| {
                fold.add_one(s)
            })
            .map_err(|mut d| {
                d.code = codes::READ_FAILED;
                d
            })?;
        }
    }
    Ok(())
}

/// Reads `spec.workloads[i].history.prometheus` (scenario `name`) as [`super::gather`]
/// reads dumps: the replay's objects join `files`, problems are `errors` naming the field,
/// inferences are `warnings`.
pub(crate) fn gather(
    name: &str,
    i: usize,
    p: &PrometheusSource,
    read: &crate::scenario::ReadFn<'_>,
    files: &mut Vec<(String, String)>,
    errors: &mut Diagnostics,
    warnings: &mut Diagnostics,
) {
    let field = format!("spec.workloads[{i}].history.prometheus");
    let err = |f: String, m: &str| {
        Diagnostic::error(codes::INVALID, m.to_owned())
            .source(name.to_owned())
            .field(f)
    };
    if p.files.is_empty() && p.url.is_none() {
        errors.push(err(
            field,
            "required: files (saved query_range answers) or url",
        ));
        return;
    }
    let n0 = errors.0.len();
    let mut fold = Fold::default();
    let mut shown: Vec<String> = Vec::new();
    for (j, f) in p.files.iter().enumerate() {
        match read(f) {
            Ok((n, text)) => {
                let each = &mut |s| fold.add_one(s);
                if let Err(d) =
                    gpuquota_metering::prometheus::read_answer(&n, text.as_bytes(), each)
                {
                    errors.push(d);
                }
            }
            Err(d) => errors.push(d.field(format!("{field}.files[{j}]"))),
        }
        shown.push(f.clone());
    }
    if let Some(url) = &p.url {
        let time = |v: &Option<String>, k: &str, errors: &mut Diagnostics| -> Option<i64> {
            let Some(v) = v else {
                errors.push(err(
                    format!("{field}.{k}"),
                    "required with url: the window to ask for (RFC 3339)",
                ));
                return None;
            };
            match Timestamp::parse(v) {
                Ok(t) => i64::try_from(t.unix_nanos().div_euclid(1_000_000_000)).ok(),
                Err(_) => {
                    errors.push(err(
                        format!("{field}.{k}"),
                        &format!("not an RFC 3339 time: {v:?} (e.g. 2026-11-01T00:00:00Z)"),
                    ));
                    None
                }
            }
        };
        let start = time(&p.start, "start", errors);
        let end = time(&p.end, "end", errors);
        let step = p
            .step
            .unwrap_or(gpuquota_metering::prometheus::DEFAULT_STEP_SECONDS);
        if let (Some(start), Some(end)) = (start, end)
            && errors.0.len() == n0
        {
            live(&mut fold, url, (start, end, step), errors, &field);
        }
        shown.push(url.clone());
    }
    if errors.0.len() > n0 {
        return;
    }
    let shown = shown.join(", ");
    match fold.finish(&shown) {
        Ok(history) => {
            let parts = history.manifests.len();
            for (k, m) in history.manifests.into_iter().enumerate() {
                let label = if parts == 1 {
                    format!("{shown} (recorded history)")
                } else {
                    format!("{shown} (recorded history, part {} of {parts})", k + 1)
                };
                files.push((label, m));
            }
            warnings.extend(history.warnings.0);
        }
        Err(ds) => errors.extend(ds.0),
    }
}

#[cfg(feature = "http")]
fn live(
    fold: &mut Fold,
    url: &str,
    window: (i64, i64, i64),
    errors: &mut Diagnostics,
    _field: &str,
) {
    if let Err(d) = fetch_into(
        fold,
        url,
        window,
        gpuquota_metering::prometheus::DEFAULT_TIMEOUT_SECONDS,
    ) {
        errors.push(d);
    }
}

#[cfg(not(feature = "http"))]
fn live(_: &mut Fold, _: &str, _: (i64, i64, i64), errors: &mut Diagnostics, field: &str) {
    errors.push(
        Diagnostic::error(
            codes::INVALID,
            "this build reads no live Prometheus (the http feature is off): save the \
             query_range answers and name them under files",
        )
        .field(format!("{field}.url")),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(name: &str, labels: &[(&str, &str)], points: &[(i64, f64)]) -> Series {
        let mut l: BTreeMap<String, String> = labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        l.insert("__name__".into(), name.into());
        Series {
            labels: l,
            points: points.to_vec(),
        }
    }

    #[test]
    fn a_pod_without_creation_time_arrives_at_its_start_with_an_unknown_wait() {
        let pod = [("namespace", "team-a"), ("pod", "p"), ("uid", "u1")];
        let mut f = Fold::default();
        f.add(vec![
            series("kube_pod_start_time", &pod, &[(1_000_000, 1_000.0)]),
            series(
                "kube_pod_labels",
                &[
                    ("namespace", "team-a"),
                    ("pod", "p"),
                    ("label_kueue_x_k8s_io_queue_name", "main"),
                ],
                &[(1_000_000, 1.0)],
            ),
            // no request series: 2 GPUs seen by DCGM; stops at 1,600 s while another runs on
            series(
                "DCGM_FI_DEV_GPU_UTIL",
                &[
                    ("namespace", "team-a"),
                    ("pod", "p"),
                    ("UUID", "GPU-0"),
                    ("Hostname", "n"),
                ],
                &[(1_060_000, 50.0), (1_600_000, 50.0)],
            ),
            series(
                "DCGM_FI_DEV_GPU_UTIL",
                &[
                    ("namespace", "team-a"),
                    ("pod", "p"),
                    ("UUID", "GPU-1"),
                    ("Hostname", "n"),
                ],
                &[(1_060_000, 50.0)],
            ),
            series(
                "DCGM_FI_DEV_GPU_UTIL",
                &[("UUID", "GPU-2"), ("Hostname", "n")],
                &[(1_000_000, 0.0), (2_000_000, 0.0)],
            ),
            series("up", &[], &[(0, 1.0)]),
        ]);
        let h = f.finish("s").unwrap();
        assert_eq!(h.records.len(), 1);
        let r = &h.records[0];
        assert_eq!(r.kind, "Pod");
        assert_eq!(r.created_ms, 1_000_000);
        assert_eq!(r.admitted_ms, Some(1_000_000));
        assert_eq!(r.first_admitted_ms, None);
        assert_eq!(r.gpu_milli, 2_000);
        // no completion series at all: the last scrape (1,600 s) is the end
        assert_eq!(r.runtime_ms, Some(600_000));
        let w: Vec<&str> = h.warnings.0.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            w,
            [
                "1 pods without a GPU request: as many GPUs as DCGM saw them hold",
                "1 pods without kube_pod_completion_time: ended at their last DCGM scrape",
                "1 pods without kube_pod_created: arrival = start, so their waiting time is \
                 unknown (not compared)",
                "1 series of up not read",
            ]
        );
    }
}
