//! Public GPU-cluster traces as a workload source: `workloads: [{trace: {...}}]`.
//!
//! ```yaml
//! workloads:
//! - trace:
//!     format: helios          # helios | philly | alibaba-pai-2020 | alibaba-2023 | acme | alibaba-spot-2026
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
//!   PAI 2020: `user`; Alibaba 2023: `qos`; AcmeTrace: `type` by default, or `user`;
//!   Alibaba spot 2026: `organization`), lower-cased, every character outside
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
//!   `Succeeded` …); Alibaba spot 2026: the job type (`HP`, `Spot`), which also names the
//!   workload's WorkloadPriorityClass when the cluster files define it (Kueue mode,
//!   [`alibaba_spot`]).
//! - **recorded wait**: for the traces that record when a job started (Helios: `start_time
//!   − submit_time`; AcmeTrace: its `queue` column), the wait the cluster really imposed is
//!   kept on the workload's instance ([`crate::scenario::Instance::recorded_wait_ms`]) for
//!   comparison with the simulated wait (Kueue and ResourceQuota modes; KAI's job
//!   instances do not carry it yet); it changes nothing in the run or its outputs.
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
//! also `None`), read here as UTC and placed against `spec.start`; AcmeTrace writes times
//! with their UTC offset (`+08:00`), read as the instants they name; PAI 2020, Alibaba 2023
//! and Alibaba spot 2026 write seconds since the trace's origin, and the origin is
//! `spec.start`. The formats' columns and the mapping of each are in [`helios`],
//! [`philly`], [`pai`], [`alibaba2023`], [`acme`], [`alibaba_spot`].
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

pub mod acme;
pub mod alibaba2023;
pub mod alibaba_spot;
pub mod helios;
pub mod pai;
pub mod philly;
pub mod quota;
pub mod synthetic;

mod apply;
mod kai;
mod parse;
mod prepare;

pub(crate) use apply::apply;
pub(crate) use kai::apply_kai;
pub(crate) use parse::{columns, count, csv_reader, next_row, runtime};
pub use parse::{sanitize, seconds_ms, wall_clock_ms};
pub(crate) use prepare::{Failure, Prepared, prepare};

use std::collections::BTreeMap;

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
    /// InternLM AcmeTrace `trace_seren.csv` / `trace_kalos.csv`.
    Acme,
    /// Alibaba spot-GPU 2026 `job_info_df.csv`.
    AlibabaSpot2026,
}

impl Format {
    /// Parses the scenario's `format`.
    pub fn parse(s: &str) -> Option<Format> {
        Some(match s {
            "helios" => Format::Helios,
            "philly" => Format::Philly,
            "alibaba-pai-2020" => Format::AlibabaPai2020,
            "alibaba-2023" => Format::Alibaba2023,
            "acme" => Format::Acme,
            "alibaba-spot-2026" => Format::AlibabaSpot2026,
            _ => return None,
        })
    }

    /// The `queueBy` fields the format has; the first is the default.
    pub fn queue_fields(self) -> &'static [&'static str] {
        match self {
            Format::Helios | Format::Philly => &["vc", "user"],
            Format::AlibabaPai2020 => &["user"],
            Format::Alibaba2023 => &["qos"],
            Format::Acme => &["type", "user"],
            Format::AlibabaSpot2026 => &["organization"],
        }
    }

    /// Whether times are seconds since the trace's origin (`spec.start`).
    pub fn relative_times(self) -> bool {
        matches!(
            self,
            Format::AlibabaPai2020 | Format::Alibaba2023 | Format::AlibabaSpot2026
        )
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
    /// The wait the trace recorded between submission and start, ms (`None` when the
    /// format records no start).
    pub wait_ms: Option<i64>,
    /// The WorkloadPriorityClass the job names when the cluster files define it (Alibaba
    /// spot 2026: `hp`, `spot`).
    pub priority_class: Option<String>,
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
        Format::Acme => acme::load(text),
        Format::AlibabaSpot2026 => alibaba_spot::load(text),
    }
}
/// The `trace:` entry of `spec.workloads[]`.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct TraceSource {
    /// `helios`, `philly`, `alibaba-pai-2020`, `alibaba-2023`, `acme` or
    /// `alibaba-spot-2026`.
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
