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
//!     gpuNumberFile: cluster_gpu_number.csv      # helios only: the VCs' nominal quotas (below)
//!     share: {by: demand, gpus: 64}              # instead: GPUs shared among the queues (below)
//!     nodeFile: openb_node_list_gpu_node.csv     # alibaba-2023 only: Nodes and flavors
//!     generate: {jobs: 1000, vcs: 14, seed: 1}   # instead of file: a synthetic trace (below)
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
//!   reason `no-cluster-queue`. In `resourcequota` mode the namespace is what counts. Under
//!   `engine: kai` the name is a **leaf Queue** of the cluster files and each job a PodGroup
//!   (`spec.queue`; `minMember` all its pods, as a trace job ran whole) with its Pods. Each
//!   pod asks for `nvidia.com/gpu` in whole GPUs; a pod of less than one GPU gets KAI's
//!   `gpu-fraction` annotation instead (`0.46`), and a fraction above one GPU (PAI's
//!   `plan_gpu: 150`), which KAI cannot express, is rounded up to whole GPUs and counted as
//!   kept (`gpu-fraction-rounded-up`). Reasons of KAI mode: `no-leaf-queue` (no Queue of
//!   that name) and `not-a-leaf-queue` (the Queue is another's parent: KAI places jobs in
//!   leaves only). `milliGpuResource` is Kueue's and is not used (a warning).
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
//!
//! **Nominal quotas** come from the cluster files, except with Helios' `gpuNumberFile`
//! (`cluster_gpu_number.csv`: `date,<vc>…,total`, GPUs per VC per day; it needs `queueBy:
//! vc`): each VC's ClusterQueue (the sanitised column name) gets as `nominalQuota` of its GPU
//! resource (`nvidia.com/gpu`, or `milliGpuResource` in thousandths) the VC's GPUs **on the
//! replay's first day** — the last row dated on or before `spec.start`'s day, or the first
//! row when the file starts later. The first day rather than the maximum because a replay
//! asks what the quotas of that day would have done; a sweep over
//! `clusterQueues.CQ….nominalQuota` ([`crate::sweep`]) explores others. A VC the mapping
//! cannot apply is counted by reason (`N VC quotas not applied (reason)`, source the
//! GPU-number file): `no-cluster-queue`, `no-gpu-quota` (the ClusterQueue has no quota for
//! the GPU resource), `several-gpu-flavors` (it has several: which one the VC's GPUs are is
//! not in the trace), `malformed-row`. ClusterQueues without a column keep their quota.
//!
//! **Without quotas in the trace**, a queue's quota is what the cluster files give it:
//! the mapping implies LocalQueues and Namespaces but never a ClusterQueue or a KAI Queue
//! (their flavors, cohort and parent are the policy under study), so a job whose queue
//! does not exist is skipped (`no-cluster-queue`, `no-leaf-queue`), and a queue quoted 0
//! GPUs admits only by borrowing (Kueue) or over quota (KAI). **`share: {by, gpus}`**
//! (every format, both modes; refused together with `gpuNumberFile`, which already sets
//! the same quotas) instead divides `gpus` GPUs among the trace's queues as their quotas —
//! the `nominalQuota` of a ClusterQueue's one GPU resource (in thousandths with
//! `milliGpuResource`), or a leaf Queue's `resources.gpu.quota`:
//! - `gpus` defaults to the cluster's nodes' `nvidia.com/gpu` allocatable (the Alibaba
//!   2023 node list's too), else to the sum of those queues' present GPU quotas (the cluster
//!   files' total, re-divided);
//! - `by: equal` (the default) gives each queue the same share; `by: demand` shares in
//!   proportion to each queue's GPU demand in the replay window: over its jobs, GPUs × the
//!   part of `[arrival, arrival + runtime]` before `spec.end` (arrivals before `start`
//!   count from 0, as they arrive then; all of the runtime without `spec.end`). A queue
//!   without demand in the window gets 0; all without demand share equally (a warning);
//! - whole GPUs by the largest remainder: each queue gets ⌊gpus · w / W⌋ and the GPUs left
//!   go one each to the largest remainders, equal remainders to the first queue by name, so
//!   the quotas add up to `gpus` and are deterministic (10 GPUs by demand 43,200 : 3,600
//!   GPU-seconds are 9.23 : 0.77, so 9 and 1; 9 GPUs equally between `vca` and `vcb` are
//!   5 and 4).
//!
//! Equal is the default because it is the baseline a fair-share simulator's users compare
//! against: Gavel's isolated policy gives each of the m users 1/m of every GPU type
//! (stanford-futuredata/gavel: `scheduler/policies/isolated.py`), and its max-min fairness
//! normalises each job's throughput by the one it gets from an equal split
//! (`scheduler/policies/max_min_fairness.py`); an equal share needs nothing from the
//! trace but the queue names, whereas a demand-proportional quota uses the trace's own
//! future, so it is an explicit choice. The queues the rule cannot give a quota are counted by reason (`N queue quotas
//! not applied (reason)`, source the trace file, field `….share`): `no-cluster-queue`,
//! `no-gpu-quota`, `several-gpu-flavors` (Kueue), `no-leaf-queue`, `not-a-leaf-queue`
//! (KAI); the cluster files' other queues keep their quotas. In `resourcequota` mode the
//! ClusterQueues, hence the share, are not used.
//!
//! **Generated traces**: `generate: {jobs, vcs, seed}` (defaults 1,000, 14, 1; Helios and
//! Philly) replaces `file` with a synthetic trace of the format's shape ([`synthetic`]),
//! read by the same loader; a sweep's `seed=1..20` redraws it.

pub mod alibaba2023;
pub mod helios;
pub mod pai;
pub mod philly;
pub mod quota;
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
///
/// # Complexity
/// O(length), one allocation when nothing is trimmed (a trace's names are made per row).
pub fn sanitize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        let c = c.to_ascii_lowercase();
        out.push(
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' {
                c
            } else {
                '-'
            },
        );
    }
    let trimmed = out.trim_matches('-');
    if trimmed.len() == out.len() {
        out
    } else {
        trimmed.to_owned()
    }
}

/// `YYYY-MM-DD HH:MM:SS` (or RFC 3339) read as UTC, in unix ms.
///
/// ```
/// assert_eq!(gpuquota_sim::trace::wall_clock_ms("1970-01-01 00:01:00"), Some(60_000));
/// assert_eq!(gpuquota_sim::trace::wall_clock_ms("None"), None);
/// ```
///
/// # Complexity
/// O(1): the plain `YYYY-MM-DD HH:MM:SS` form is read by arithmetic (the traces' millions of
/// times), every other form through the RFC 3339 parser.
pub fn wall_clock_ms(s: &str) -> Option<i64> {
    let s = s.trim();
    if s.len() < 19 {
        return None;
    }
    if let Some(ms) = plain_wall_clock_ms(s.as_bytes()) {
        return Some(ms);
    }
    let text = if s.as_bytes().get(10) == Some(&b' ') {
        format!("{}T{}Z", &s[..10], &s[11..])
    } else {
        s.to_owned()
    };
    let t = Timestamp::parse(&text).ok()?;
    i64::try_from(t.unix_nanos().div_euclid(1_000_000)).ok()
}

/// `YYYY-MM-DD HH:MM:SS` exactly (a valid date, seconds < 60), in unix ms.
fn plain_wall_clock_ms(b: &[u8]) -> Option<i64> {
    if b.len() != 19
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b' '
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        b[r].iter().try_fold(0i64, |n, c| {
            c.is_ascii_digit().then(|| n * 10 + i64::from(c - b'0'))
        })
    };
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days_in = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    if d < 1 || d > days_in || hh > 23 || mm > 59 || ss > 59 {
        return None;
    }
    // days from the civil date (proleptic Gregorian), 1970-01-01 = 0
    let (yy, mp) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 86_400) + hh * 3600 + mm * 60 + ss) * 1000)
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
    /// Helios only: `cluster_gpu_number.csv`, the nominal quotas of the VCs' ClusterQueues.
    #[serde(default)]
    pub gpu_number_file: Option<String>,
    /// The GPUs divided among the trace's queues as their quotas (instead of
    /// `gpuNumberFile`).
    #[serde(default)]
    pub share: Option<quota::ShareSpec>,
    /// Alibaba 2023 only: the node list (`openb_node_list_*.csv`), Nodes and flavors
    /// ([`alibaba2023::nodes`]).
    #[serde(default)]
    pub node_file: Option<String>,
    /// Instead of `file`: a synthetic trace of the format's shape ([`synthetic`]).
    #[serde(default)]
    pub generate: Option<GenerateSpec>,
}

/// `generate:` of a `trace:` entry: a synthetic trace instead of a file.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GenerateSpec {
    /// Jobs (default 1,000).
    #[serde(default)]
    pub jobs: Option<u32>,
    /// Virtual clusters `vc0…` (default 14).
    #[serde(default)]
    pub vcs: Option<u32>,
    /// The seed (default 1); `--set seed=1..20` sweeps it.
    #[serde(default)]
    pub seed: Option<u64>,
}

/// The most jobs `generate:` writes (a guard against exhausting memory).
pub const MAX_GENERATED_JOBS: u32 = 2_000_000;

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
    /// `cluster_gpu_number.csv`: display name and text.
    pub(crate) gpu_number: Option<(String, String)>,
    /// The `share:` rule.
    pub(crate) share: Option<quota::Share>,
    /// The node list: display name and text.
    pub(crate) node_list: Option<(String, String)>,
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
    match (&t.generate, t.file.is_empty()) {
        (None, true) => errs.push((
            "file".into(),
            "required: the trace file (or generate)".into(),
        )),
        (Some(_), false) => errs.push((
            "generate".into(),
            "give either file or generate, not both".into(),
        )),
        (Some(g), true) => {
            if !matches!(format, Some(Format::Helios | Format::Philly) | None) {
                errs.push((
                    "generate".into(),
                    format!(
                        "no generator for the {} format: helios and philly have one",
                        t.format
                    ),
                ));
            }
            if g.jobs.is_some_and(|j| j > MAX_GENERATED_JOBS) {
                errs.push((
                    "generate.jobs".into(),
                    format!("at most {MAX_GENERATED_JOBS} jobs"),
                ));
            }
            if g.vcs == Some(0) {
                errs.push(("generate.vcs".into(), "at least 1 virtual cluster".into()));
            }
        }
        (None, false) => {}
    }
    if t.node_file.is_some() && format.is_some_and(|f| f != Format::Alibaba2023) {
        errs.push((
            "nodeFile".into(),
            "only the alibaba-2023 format has a node list".into(),
        ));
    }
    if t.gpu_number_file.is_some() {
        if format.is_some_and(|f| f != Format::Helios) {
            errs.push((
                "gpuNumberFile".into(),
                "only the helios format has cluster_gpu_number.csv".into(),
            ));
        } else if t.queue.is_some() || t.queue_by.as_deref().is_some_and(|q| q != "vc") {
            errs.push((
                "gpuNumberFile".into(),
                "the GPUs per VC are quotas of the VCs' ClusterQueues: it needs queueBy: vc".into(),
            ));
        }
    }
    let share = t.share.as_ref().and_then(|sh| {
        let by = match sh.by.as_deref() {
            None => Some(quota::ShareBy::Equal),
            Some(b) => quota::ShareBy::parse(b),
        };
        if by.is_none() {
            errs.push((
                "share.by".into(),
                format!(
                    "unknown share {:?}: expected equal or demand",
                    sh.by.as_deref().unwrap_or_default()
                ),
            ));
        }
        if sh.gpus == Some(0) {
            errs.push(("share.gpus".into(), "at least 1 GPU to share".into()));
        }
        if t.gpu_number_file.is_some() {
            errs.push((
                "share".into(),
                "give either gpuNumberFile or share: both set the VCs' GPU quotas".into(),
            ));
        }
        by.map(|by| quota::Share { by, gpus: sh.gpus })
    });
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
    let (shown, text) = match &t.generate {
        Some(g) => {
            let (jobs, vcs, seed) = (
                g.jobs.unwrap_or(1000),
                g.vcs.unwrap_or(14),
                g.seed.unwrap_or(1),
            );
            let text = if format == Format::Helios {
                synthetic::helios(jobs, vcs, seed)
            } else {
                synthetic::philly(jobs, vcs, seed)
            };
            (format!("generated {} trace (seed {seed})", t.format), text)
        }
        None => read(&t.file).map_err(|d| vec![("file".to_owned(), d.message)])?,
    };
    let node_list = match &t.node_file {
        Some(f) => Some(read(f).map_err(|d| vec![("nodeFile".to_owned(), d.message)])?),
        None => None,
    };
    let gpu_number = match &t.gpu_number_file {
        Some(f) => Some(read(f).map_err(|d| vec![("gpuNumberFile".to_owned(), d.message)])?),
        None => None,
    };
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
        gpu_number,
        share,
        node_list,
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
    (start, end_ms): (Timestamp, Option<i64>),
    model: &mut gpuquota_model::Model,
    instances: &mut BTreeMap<String, crate::scenario::Instance>,
    warnings: &mut gpuquota_model::diag::Diagnostics,
) {
    let start_ms = i64::try_from(start.unix_nanos().div_euclid(1_000_000)).unwrap_or(0);
    // LocalQueue per (namespace, ClusterQueue), found or implied
    let mut lq_for: BTreeMap<String, BTreeMap<String, Result<String, &'static str>>> =
        BTreeMap::new();
    let mut demands = quota::Demands::new();
    let jobs = std::mem::take(&mut p.loaded.jobs);
    for mut job in jobs {
        let queue = sanitize(mapped_queue(&p, &job));
        if queue.is_empty() {
            p.loaded.skip("no-queue");
            continue;
        }
        if p.share.is_some() {
            quota::add_demand(&mut demands, &queue, Some(0));
        }
        let name = sanitize(&job.id);
        if name.is_empty() {
            p.loaded.skip("malformed-row");
            continue;
        }
        let ns = p.namespace.clone().unwrap_or_else(|| queue.clone());
        let mut key = String::with_capacity(ns.len() + 1 + name.len());
        key.push_str(&ns);
        key.push('/');
        key.push_str(&name);
        if model.workloads.contains_key(&key) {
            p.loaded.skip("duplicate-job");
            continue;
        }
        let mut queue_name = String::new();
        if kueue {
            // looked up by reference: owned keys are made once per pair, not per job
            let lq = match lq_for.get(&ns).and_then(|m| m.get(&queue)) {
                Some(lq) => lq.clone(),
                None => {
                    let lq = implied_local_queue(model, &ns, &queue);
                    lq_for
                        .entry(ns.clone())
                        .or_default()
                        .insert(queue.clone(), lq.clone());
                    lq
                }
            };
            match lq {
                Ok(l) => queue_name = l,
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
        // before the pod sets move into the Workload
        let job_demand = p
            .share
            .is_some()
            .then(|| quota::demand(&job, created_ms, end_ms));
        let Some(w) = workload(
            std::mem::take(&mut job.pod_sets),
            name,
            ns,
            queue_name,
            p.milli_gpu_resource.as_deref(),
            start,
            created_ms,
        ) else {
            p.loaded.skip("malformed-row");
            continue;
        };
        if let Some(d) = job_demand {
            quota::add_demand(&mut demands, &queue, d);
        }
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
    if let Some((file, text)) = &p.node_list {
        apply_nodes(model, file, text, field, warnings);
    }
    let milli = p.milli_gpu_resource.as_deref();
    let target = quota::Target::new(
        model,
        milli.unwrap_or("nvidia.com/gpu"),
        milli.is_some(),
        false,
    );
    apply_quotas(&p, &target, start_ms, &demands, model, field, warnings);
    warn_skipped(&p.loaded.skipped, &p.file, field, warnings);
}

/// The trace's GPU quotas: `gpuNumberFile` or `share` ([`quota`]).
fn apply_quotas(
    p: &Prepared,
    target: &quota::Target<'_>,
    start_ms: i64,
    demands: &quota::Demands,
    model: &mut gpuquota_model::Model,
    field: &str,
    warnings: &mut gpuquota_model::diag::Diagnostics,
) {
    if let Some((file, text)) = &p.gpu_number {
        quota::apply_gpu_numbers(model, target, (file, text), start_ms, field, warnings);
    }
    if let Some(share) = p.share {
        quota::apply_share(model, target, share, demands, &p.file, field, warnings);
    }
}

/// The rows a trace mapping skipped or adjusted, one warning per reason (source the trace
/// file, field the `trace:` entry).
fn warn_skipped(
    skipped: &BTreeMap<&'static str, u64>,
    file: &str,
    field: &str,
    warnings: &mut gpuquota_model::diag::Diagnostics,
) {
    for (reason, n) in skipped {
        warnings.push(
            gpuquota_model::diag::Diagnostic::warning(
                TRACE_ROW_SKIPPED,
                match *reason {
                    "gpu-spec-alternatives" => {
                        format!("{n} trace rows kept without a node selector ({reason})")
                    }
                    "gpu-fraction-rounded-up" => {
                        format!("{n} trace rows kept with their GPUs rounded up ({reason})")
                    }
                    _ => format!("{n} trace rows skipped ({reason})"),
                },
            )
            .source(file.to_owned())
            .field(field.to_owned()),
        );
    }
}

/// The Workload of a trace job's pod sets, built directly (no text round trip, the
/// strings moved in); `None` when a pod count does not fit Kueue's `int32`.
///
/// # Complexity
/// O(pod sets).
fn workload(
    job_pod_sets: Vec<PodSet>,
    name: String,
    ns: String,
    queue_name: String,
    milli_gpu_resource: Option<&str>,
    start: Timestamp,
    created_ms: i64,
) -> Option<gpuquota_model::kueue::Workload> {
    use gpuquota_model::core::{Container, PodSpec, ResourceRequirements};
    use gpuquota_model::kueue::{PodSet as KPodSet, PodTemplateSpec, Workload, WorkloadSpec};
    use gpuquota_model::meta::ObjectMeta;
    use gpuquota_model::{Quantity, ResourceName};
    let mut pod_sets = Vec::with_capacity(job_pod_sets.len());
    for s in job_pod_sets {
        // the quantities `Quantity::parse` makes of `N` and `Nm` (test
        // `trace_quantities_are_the_parsed_ones`), without formatting them first
        let milli = i64::try_from(s.gpu_milli).ok()?;
        let (res, q) = match milli_gpu_resource {
            Some(r) => (r, Quantity::from_integer(milli)),
            None if milli % 1000 == 0 => ("nvidia.com/gpu", Quantity::from_integer(milli / 1000)),
            None => ("nvidia.com/gpu", Quantity::from_milli(milli)),
        };
        let requests = [(ResourceName::new(res), q)].into_iter().collect();
        let node_selector = s
            .gpu_type
            .into_iter()
            .map(|t| (GPU_TYPE_LABEL.to_owned(), t))
            .collect();
        pod_sets.push(KPodSet {
            name: s.name,
            template: PodTemplateSpec {
                metadata: None,
                spec: PodSpec {
                    containers: vec![Container {
                        name: "c".into(),
                        resources: ResourceRequirements {
                            requests,
                            ..ResourceRequirements::default()
                        },
                        ..Container::default()
                    }],
                    node_selector,
                    ..PodSpec::default()
                },
            },
            count: i32::try_from(s.count).ok()?,
            min_count: None,
            topology_request: None,
        });
    }
    // No class or runtime annotations: the job's instance carries both (the annotations
    // are read only for workloads from files, which have no instance), and each row's
    // two owned keys, two values and a map node were a fifth of the Workload's allocations.
    Some(Workload {
        metadata: ObjectMeta {
            name,
            namespace: Some(ns),
            creation_timestamp: Some(crate::scenario::at_ms(start, created_ms)),
            ..ObjectMeta::default()
        },
        spec: WorkloadSpec {
            pod_sets,
            queue_name: Some(queue_name),
            ..WorkloadSpec::default()
        },
        status: None,
    })
}

/// KAI mode: turns a prepared trace into PodGroups (one per job: `spec.queue` the mapped
/// name, a leaf Queue of the cluster files; `minMember` all its pods, as a trace job ran
/// whole) with their Pods; the skipped rows become one warning per reason.
///
/// Each pod asks for `nvidia.com/gpu` in whole GPUs; a pod of less than one GPU gets KAI's
/// `gpu-fraction` annotation instead (`0.46`), and a fraction above one GPU (PAI's
/// `plan_gpu: 150`), which KAI cannot express, is rounded up to whole GPUs and counted as
/// kept (`gpu-fraction-rounded-up`). Skip reasons beyond the loaders': `no-leaf-queue` (no
/// Queue of that name) and `not-a-leaf-queue` (the Queue is another's parent: KAI places
/// jobs in leaves only). `milliGpuResource` is Kueue's and is not used here (a warning).
///
/// Phases: the node list ([`apply_nodes`]), then per job its leaf Queue
/// ([`kai_leaf_queue`]), its Pods ([`kai_pods`]) and its PodGroup ([`kai_pod_group`]),
/// then the `share` quotas, then the skipped rows' warnings (`gpuNumberFile`'s quotas come
/// first, before the jobs).
///
/// # Complexity
/// O(jobs × log(objects) + queues).
pub(crate) fn apply_kai(
    mut p: Prepared,
    field: &str,
    (start, end_ms): (Timestamp, Option<i64>),
    model: &mut gpuquota_model::Model,
    warnings: &mut gpuquota_model::diag::Diagnostics,
) {
    let start_ms = i64::try_from(start.unix_nanos().div_euclid(1_000_000)).unwrap_or(0);
    if p.milli_gpu_resource.is_some() {
        warnings.push(
            gpuquota_model::diag::Diagnostic::warning(
                TRACE_ROW_SKIPPED,
                "milliGpuResource is not used under engine kai: fractions are gpu-fraction annotations",
            )
            .source(p.file.clone())
            .field(format!("{field}.milliGpuResource")),
        );
    }
    if let Some((file, text)) = &p.node_list {
        apply_nodes(model, file, text, field, warnings);
    }
    let target = quota::Target::new(model, "nvidia.com/gpu", false, true);
    if let Some((file, text)) = &p.gpu_number {
        quota::apply_gpu_numbers(model, &target, (file, text), start_ms, field, warnings);
    }
    let mut demands = quota::Demands::new();
    let jobs = std::mem::take(&mut p.loaded.jobs);
    for job in jobs {
        let queue = match kai_leaf_queue(&p, &job, model, &target) {
            Ok(q) => q,
            Err((reason, queue)) => {
                if let (Some(q), Some(_)) = (queue, p.share) {
                    quota::add_demand(&mut demands, &q, Some(0));
                }
                p.loaded.skip(reason);
                continue;
            }
        };
        if p.share.is_some() {
            quota::add_demand(&mut demands, &queue, Some(0));
        }
        let name = sanitize(&job.id);
        if name.is_empty() {
            p.loaded.skip("malformed-row");
            continue;
        }
        let ns = p.namespace.clone().unwrap_or_else(|| queue.clone());
        let key = format!("{ns}/{name}");
        if model.pod_groups.contains_key(&key) {
            p.loaded.skip("duplicate-job");
            continue;
        }
        let created_ms = if p.format.relative_times() {
            job.submit_ms
        } else {
            job.submit_ms.saturating_sub(start_ms)
        };
        let created = crate::scenario::at_ms(start, created_ms);
        let (pods, rounded) = kai_pods(&job, &name, &ns, created);
        let Ok(min_member) = i32::try_from(pods.len()) else {
            p.loaded.skip("malformed-row");
            continue;
        };
        if rounded {
            p.loaded.skip("gpu-fraction-rounded-up");
        }
        if p.share.is_some() {
            quota::add_demand(
                &mut demands,
                &queue,
                quota::demand(&job, created_ms, end_ms),
            );
        }
        let group = kai_pod_group(&job, name, &ns, queue, created, min_member);
        if !model.namespaces.contains_key(&ns) {
            insert_namespace(model, &ns);
        }
        for pod in pods {
            let k = format!("{ns}/{}", pod.metadata.name);
            model.pods.insert(k, pod);
        }
        model.pod_groups.insert(key, group);
    }
    if let Some(share) = p.share {
        quota::apply_share(model, &target, share, &demands, &p.file, field, warnings);
    }
    warn_skipped(&p.loaded.skipped, &p.file, field, warnings);
}

/// The queue name a trace job maps to, as written: `queue`, else its `queueBy` field.
fn mapped_queue<'j>(p: &'j Prepared, job: &'j Job) -> &'j str {
    match (&p.queue, p.queue_by) {
        (Some(q), _) => q.as_str(),
        (None, Some(f)) => job.fields.get(f).map_or("", String::as_str),
        (None, None) => "",
    }
}

/// The leaf Queue a KAI trace job maps to, or the skip reason (`no-queue`,
/// `no-leaf-queue`, `not-a-leaf-queue`) with the queue name when there is one.
///
/// # Complexity
/// O(log queues).
fn kai_leaf_queue(
    p: &Prepared,
    job: &Job,
    model: &gpuquota_model::Model,
    target: &quota::Target<'_>,
) -> Result<String, (&'static str, Option<String>)> {
    let queue = sanitize(mapped_queue(p, job));
    if queue.is_empty() {
        return Err(("no-queue", None));
    }
    match target.check(model, &queue) {
        Err(reason) => Err((reason, Some(queue))),
        Ok(_) => Ok(queue),
    }
}

/// The Pods of a KAI trace job (`<name>-<podset>-<i>`, each in the job's pod group, GPUs
/// whole or as a `gpu-fraction`), and whether a fraction above one GPU was rounded up.
///
/// # Complexity
/// O(pods).
fn kai_pods(
    job: &Job,
    name: &str,
    ns: &str,
    created: Timestamp,
) -> (Vec<gpuquota_model::core::Pod>, bool) {
    use gpuquota_model::core::{Container, Pod, PodSpec, PodStatus, ResourceRequirements};
    use gpuquota_model::kai::{GPU_FRACTION_ANNOTATION, POD_GROUP_ANNOTATION};
    use gpuquota_model::meta::ObjectMeta;
    use gpuquota_model::{Quantity, ResourceName};
    let mut pods: Vec<Pod> = Vec::new();
    let mut rounded = false;
    for s in &job.pod_sets {
        let mut annotations = BTreeMap::from([(POD_GROUP_ANNOTATION.to_owned(), name.to_owned())]);
        let mut requests = gpuquota_model::core::ResourceList::new();
        if s.gpu_milli < 1000 {
            let f = format!("{}", s.gpu_milli as f64 / 1000.0);
            annotations.insert(GPU_FRACTION_ANNOTATION.to_owned(), f);
        } else {
            rounded |= s.gpu_milli % 1000 != 0;
            let whole = i64::try_from(s.gpu_milli.div_ceil(1000)).unwrap_or(i64::MAX);
            requests.insert(
                ResourceName::new("nvidia.com/gpu"),
                Quantity::from_integer(whole),
            );
        }
        let node_selector: BTreeMap<String, String> = s
            .gpu_type
            .iter()
            .map(|t| (GPU_TYPE_LABEL.to_owned(), t.clone()))
            .collect();
        for i in 0..s.count {
            pods.push(Pod {
                metadata: ObjectMeta {
                    name: format!("{name}-{}-{i}", s.name),
                    namespace: Some(ns.to_owned()),
                    annotations: annotations.clone(),
                    creation_timestamp: Some(created),
                    ..ObjectMeta::default()
                },
                spec: PodSpec {
                    containers: vec![Container {
                        name: "c".into(),
                        resources: ResourceRequirements {
                            requests: requests.clone(),
                            limits: requests.clone(),
                            ..ResourceRequirements::default()
                        },
                        ..Container::default()
                    }],
                    node_selector: node_selector.clone(),
                    scheduler_name: Some("kai-scheduler".into()),
                    ..PodSpec::default()
                },
                status: Some(PodStatus {
                    phase: Some("Pending".into()),
                    ..PodStatus::default()
                }),
            });
        }
    }
    (pods, rounded)
}

/// The PodGroup of a KAI trace job: its class and runtime as annotations, `minMember` all
/// its pods.
///
/// # Complexity
/// O(1).
fn kai_pod_group(
    job: &Job,
    name: String,
    ns: &str,
    queue: String,
    created: Timestamp,
    min_member: i32,
) -> gpuquota_model::kai::PodGroup {
    use gpuquota_model::kai::{PodGroup, PodGroupSpec};
    use gpuquota_model::meta::ObjectMeta;
    PodGroup {
        metadata: ObjectMeta {
            name,
            namespace: Some(ns.to_owned()),
            annotations: BTreeMap::from([
                (crate::scenario::CLASS_KEY.to_owned(), job.status.clone()),
                (
                    crate::scenario::RUNTIME_ANNOTATION.to_owned(),
                    format!("{}ms", job.runtime_ms),
                ),
            ]),
            creation_timestamp: Some(created),
            ..ObjectMeta::default()
        },
        spec: PodGroupSpec {
            min_member: Some(min_member),
            queue,
            ..PodGroupSpec::default()
        },
        status: None,
    }
}

/// Adds the Nodes and ResourceFlavors of an Alibaba 2023 node list
/// ([`alibaba2023::nodes`]); rows it cannot use are one warning per reason.
///
/// # Complexity
/// O(rows × log(nodes)).
fn apply_nodes(
    model: &mut gpuquota_model::Model,
    file: &str,
    text: &str,
    field: &str,
    warnings: &mut gpuquota_model::diag::Diagnostics,
) {
    use gpuquota_model::diag::Diagnostic;
    use gpuquota_model::{Quantity, ResourceName};
    let warn = |warnings: &mut gpuquota_model::diag::Diagnostics, msg: String| {
        warnings.push(
            Diagnostic::warning(TRACE_ROW_SKIPPED, msg)
                .source(file.to_owned())
                .field(format!("{field}.nodeFile")),
        );
    };
    let (rows, mut skipped) = match alibaba2023::nodes(text) {
        Ok(x) => x,
        Err(m) => {
            warn(warnings, format!("no node read: {m}"));
            return;
        }
    };
    for r in rows {
        if model.nodes.contains_key(&r.name) {
            *skipped.entry("duplicate-node").or_insert(0) += 1;
            continue;
        }
        let mut node = gpuquota_model::core::Node::default();
        node.metadata.name = r.name.clone();
        let alloc = &mut node.status.allocatable;
        for (res, q) in [
            ("cpu", format!("{}m", r.cpu_milli)),
            ("memory", format!("{}Mi", r.memory_mib)),
            ("nvidia.com/gpu", r.gpus.to_string()),
        ] {
            if let Ok(q) = Quantity::parse(&q) {
                alloc.insert(ResourceName::new(res), q);
            }
        }
        node.status.capacity = node.status.allocatable.clone();
        if !r.model.is_empty() {
            node.metadata
                .labels
                .insert(GPU_TYPE_LABEL.to_owned(), r.model.clone());
            let flavor = sanitize(&r.model);
            if !flavor.is_empty() && !model.resource_flavors.contains_key(&flavor) {
                let mut f = gpuquota_model::kueue::ResourceFlavor::default();
                f.metadata.name = flavor.clone();
                f.spec
                    .node_labels
                    .insert(GPU_TYPE_LABEL.to_owned(), r.model.clone());
                model.resource_flavors.insert(flavor, f);
            }
        }
        model.nodes.insert(r.name, node);
    }
    for (reason, n) in skipped {
        warn(warnings, format!("{n} node rows skipped ({reason})"));
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The RFC 3339 parser, the independent oracle of the arithmetic fast path.
    fn oracle(s: &str) -> Option<i64> {
        let t = Timestamp::parse(&format!("{}T{}Z", &s[..10], &s[11..])).ok()?;
        i64::try_from(t.unix_nanos().div_euclid(1_000_000)).ok()
    }

    proptest! {
        #[test]
        fn plain_wall_clock_agrees_with_the_rfc3339_parser(
            y in 1900i64..2200, m in 0i64..14, d in 0i64..33, hh in 0i64..25, mm in 0i64..61, ss in 0i64..61,
        ) {
            let s = format!("{y:04}-{m:02}-{d:02} {hh:02}:{mm:02}:{ss:02}");
            let fast = plain_wall_clock_ms(s.as_bytes());
            if let Some(ms) = fast {
                prop_assert_eq!(Some(ms), oracle(&s));
            }
            // every time the fast path declines still gets the parser's answer
            prop_assert_eq!(wall_clock_ms(&s), oracle(&s));
        }
    }

    /// The workload builder makes quantities without text; they print and compare as the
    /// parsed text did.
    #[test]
    fn trace_quantities_are_the_parsed_ones() {
        use gpuquota_model::Quantity;
        for n in [0i64, 1, 4, 8, 1000, 123_456] {
            let parsed = Quantity::parse(&n.to_string()).unwrap();
            let made = Quantity::from_integer(n);
            assert_eq!(made, parsed);
            assert_eq!(made.to_string(), parsed.to_string());
            assert_eq!(made.format(), parsed.format());
        }
        for m in [1i64, 250, 460, 500, 999, 1500] {
            let parsed = Quantity::parse(&format!("{m}m")).unwrap();
            let made = Quantity::from_milli(m);
            assert_eq!(made, parsed);
            assert_eq!(made.to_string(), parsed.to_string());
            assert_eq!(made.format(), parsed.format());
        }
    }

    #[test]
    fn sanitize_trims_and_replaces_in_one_pass() {
        assert_eq!(sanitize("vc6YE"), "vc6ye");
        assert_eq!(sanitize("--A_b.c--"), "a-b-c");
        assert_eq!(sanitize("__"), "");
        assert_eq!(sanitize("é1"), "-1".trim_matches('-'));
        assert_eq!(sanitize(""), "");
    }

    #[test]
    fn plain_wall_clock_reads_leap_days_and_refuses_impossible_dates() {
        assert_eq!(
            plain_wall_clock_ms(b"2020-02-29 00:00:00"),
            Some(1_582_934_400_000)
        );
        assert_eq!(plain_wall_clock_ms(b"2019-02-29 00:00:00"), None);
        assert_eq!(
            plain_wall_clock_ms(b"2017-10-03 00:00:00"),
            Some(1_506_988_800_000)
        );
        assert_eq!(plain_wall_clock_ms(b"2017-10-03T00:00:00"), None);
    }
}
