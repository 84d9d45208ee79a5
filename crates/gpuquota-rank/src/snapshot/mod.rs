//! The session snapshot: KAI `Queue`s, `PodGroup`s, `Pod`s and `Node`s turned into dense,
//! exact inputs for the division and the actions.
//!
//! Reading rules (upstream's, with the choices this crate made where upstream is silent):
//! * A Pod's queue is its queue label (or its PodGroup's `spec.queue`, else the PodGroup's
//!   queue label), its
//!   group the `pod-group-name` annotation; a Pod without a group is a one-pod job named after
//!   the Pod. A job without a PodGroup object and without a queue label takes its `project`
//!   label, else `default-queue`, as KAI's pod grouper does. The queue label key is KAI's
//!   `queueLabelKey` (`kai.scheduler/v1` Config `spec.global.queueLabelKey`, default
//!   `kai.scheduler/queue`; `kai-scheduler/KAI-Scheduler: pkg/operator` passes it to the pod
//!   grouper and queue controller as `--queue-label-key`): given as
//!   [`BuildOptions::queue_label_key`] (the CLI's `--queue-label-key`), only that label is
//!   read; unset, `kai.scheduler/queue` is read, then Run:ai's `runai/queue`.
//! * GPUs come from `nvidia.com/gpu` requests/limits, or the `gpu-fraction` annotation (a share
//!   of one device), or the `gpu-memory` annotation (below). CPU is counted in millicores, memory in bytes. Running fractions with the
//!   same `runai-gpu-group` label on one node share one device (KAI's GPU group); unlabelled
//!   ones are packed onto the most used device that fits.
//! * GPU sharing by memory (kai-scheduler/KAI-Scheduler `pkg/scheduler/api/pod_info/pod_info.go`,
//!   `pkg/scheduler/api/node_info/node_info.go`, `gpu_sharing_node_info.go`,
//!   `pkg/scheduler/cache/cluster_info/cluster_info.go`,
//!   `pkg/scheduler/plugins/proportion/proportion.go`): a pod's `gpu-memory` annotation (MiB,
//!   a whole number above 0; anything else is an error) is its GPU request unless a
//!   `gpu-fraction` is given, which wins as in KAI. A node's GPU memory is its
//!   `nvidia.com/gpu.memory` label (MiB; 2²⁰ or more is bytes), floored to a multiple of 100;
//!   a node without it takes no `gpu-memory` pod. The pod is a fraction of one device:
//!   running, the share of its node's GPU, `ceil(mib / memory × 100) / 100` in KAI's
//!   doubles, which is what it is charged; pending, it is placed and charged as the share of
//!   the smallest GPU of the cluster — exact when all GPU nodes have the same memory, else
//!   one warning ([`codes::GPU_MEMORY_MIXED`]) says KAI would charge the share of the GPU it
//!   lands on. A pending pod's demand (its queue's request) is `mib / smallest GPU memory
//!   above 100 MiB`, unrounded, as KAI's proportion plugin adds it (0 when no node is above
//!   100 MiB). When no node has a GPU memory, every `gpu-memory` pod is warned about by name
//!   ([`codes::GPU_MEMORY_UNCONVERTED`]) and counts 0 GPUs, as in KAI (it is never placed).
//!   Devices are shared in nano-GPUs, not MiB: a device takes `gpu-memory` pods while their
//!   rounded-up shares add to at most 1, where KAI adds their MiB up to the GPU's memory
//!   (stricter by less than a hundredth of a GPU per pod: three 27300 MiB pods fill an
//!   81900 MiB GPU in KAI, here they are 1.02).
//! * A Pod with `spec.nodeName` and phase `Running` is allocated; `Pending` without a node is
//!   demand; `Succeeded` marks a finishing gang; other phases are ignored. As in KAI
//!   (`getTaskStatus`): a `Pending` Pod that already has a node is `Bound` (allocated); a
//!   running Pod with `metadata.deletionTimestamp` is [`TaskStatus::Releasing`] (its resources
//!   are being freed; neither allocated nor demand), or [`TaskStatus::StuckInReleasing`] once
//!   deleted more than 2 minutes before the session time.
//! * Queue resources: a missing `quota` or `overQuotaWeight` is 0 (Go's zero value); a missing
//!   `limit` is unlimited (not Go's 0, which would block every request); a missing `gpu` block
//!   is quota 0, weight 0, no limit; a missing `cpu`/`memory` block is `{quota: -1,
//!   overQuotaWeight: 1, limit: -1}` (KAI's test-harness defaults); memory quotas are in MB
//!   (10⁶ bytes).
//! * A queue whose parent chain reaches a missing queue is dropped with its children and
//!   listed in [`Cluster::orphan_queues`] (KAI's `cleanQueueOrphans` warns and deletes them);
//!   a parent cycle is an error.
//! * Pods of another scheduler (`spec.schedulerName` set and not `kai-scheduler`, with no KAI
//!   queue label or pod group) hold their node's resources and are taken off the divided total.
//! * The session time defaults to the latest timestamp in the input (creation, start and
//!   KAI annotation times), never the wall clock.
//! * Bad input: every malformed field of every object is reported at once
//!   (a [`Diagnostics`] list of errors with engine `kai` and a stable code from [`codes`], in
//!   reading order: queues, nodes, PodGroups, pods, then the queue tree), each naming the
//!   object kind, name and field; no cluster is built. Tolerated states (orphan queues) are
//!   warnings in [`Cluster::warnings`].
//! * The queue tree may be at most [`MAX_TREE_DEPTH`] levels deep (the root is level 1);
//!   KAI sets no limit, gpuquota refuses deeper trees with [`codes::TREE_TOO_DEEP`] naming
//!   the queue one level beyond the limit, so every walk up the tree is bounded.

use std::collections::BTreeMap;

use gpuquota_model::core::Pod;
use gpuquota_model::diag::{Diagnostic, Diagnostics};
use gpuquota_model::kai::{
    GPU_FRACTION_ANNOTATION, POD_GROUP_ANNOTATION, QUEUE_LABEL, QueueResource,
    builtin_priority_class, parse_go_duration,
};
use gpuquota_model::limits::MAX_TREE_DEPTH;
use gpuquota_model::meta::{Taint, Toleration};
use gpuquota_model::validate::Validation;
use gpuquota_model::{Model, Quantity, Timestamp};

use crate::division::{DivisionError, Hierarchy, QueueInput, Resource, ResourceParams};
use crate::fixed::{SCALE, from_quantity};
use crate::ids::PerResource;

mod dra;
mod nodes;
mod pods;
mod queues;

/// The queue KAI's pod grouper gives a pod with no queue label and no `project` label.
pub const DEFAULT_QUEUE_NAME: &str = "default-queue";
/// Run:ai's queue label (`runai/queue`), read after `kai.scheduler/queue` when no queue
/// label key is configured.
pub const RUNAI_QUEUE_LABEL: &str = "runai/queue";
/// The pod label KAI's pod grouper reads as the queue when `kai.scheduler/queue` is absent.
pub const PROJECT_LABEL: &str = "project";

/// KAI's label naming the shared GPU (device group) a fractional pod was placed on.
pub const GPU_GROUP_LABEL: &str = "runai-gpu-group";

/// The annotation on a PodGroup holding when it became stale.
pub const STALE_TIMESTAMP_ANNOTATION: &str = "kai.scheduler/stale-podgroup-timestamp";
/// The annotation on a PodGroup holding when it last started.
pub const LAST_START_ANNOTATION: &str = "kai.scheduler/last-start-timestamp";
/// The annotation form of a PodGroup's preemption delay.
pub const PREEMPTION_DELAY_ANNOTATION: &str = "kai.scheduler/preemption-delay";
/// KAI's scheduler name; pods of other schedulers are not KAI's jobs.
pub const KAI_SCHEDULER_NAME: &str = "kai-scheduler";
/// The GPU resource name.
pub const GPU_RESOURCE: &str = "nvidia.com/gpu";
/// KAI's pod annotation asking for GPU memory in MiB on one shared device (GPU sharing by
/// memory; `pkg/scheduler/api/pod_info/pod_info.go`, `GpuMemoryAnnotationName`).
pub const GPU_MEMORY_ANNOTATION: &str = "gpu-memory";
/// GPU feature discovery's per-GPU memory label (MiB), which KAI reads as the memory of
/// every GPU of the node (`pkg/scheduler/api/node_info/node_info.go`, `GpuMemoryLabel`).
pub const GPU_MEMORY_LABEL: &str = "nvidia.com/gpu.memory";
/// KAI's `DefaultGpuMemory` (100 MiB): a node's GPU memory must exceed it to count in the
/// cluster's smallest per-GPU memory.
pub const DEFAULT_GPU_MEMORY_MIB: i64 = 100;
/// KAI's default stale-gang grace period (60 s) in nanoseconds.
pub const DEFAULT_STALENESS_GRACE_NANOS: i128 = 60_000_000_000;
/// The default PodGroup priority (`train`).
pub const DEFAULT_JOB_PRIORITY: i32 = 50;

/// The diagnostic codes of the KAI engine (`engine: "kai"`), stable across releases: tools
/// filter by them, never by message text.
pub mod codes {
    use gpuquota_model::diag::Code;

    /// A field holds a value KAI cannot use (negative, not a duration or time, a
    /// `gpu-fraction` outside (0, 1], a partial GPU without `gpu-fraction`, …).
    pub const INVALID_VALUE: Code = Code::new("kai-invalid-value");
    /// A value or a sum of values beyond what exact arithmetic holds.
    pub const TOO_LARGE: Code = Code::new("kai-too-large");
    /// A reference to a node or queue that is not in the input.
    pub const NOT_FOUND: Code = gpuquota_model::diag::codes::NOT_FOUND;
    /// The queues' parent links form a cycle.
    pub const QUEUE_CYCLE: Code = Code::new("kai-queue-cycle");
    /// The queue tree is deeper than [`gpuquota_model::limits::MAX_TREE_DEPTH`].
    pub const TREE_TOO_DEEP: Code = gpuquota_model::limits::TREE_TOO_DEEP;
    /// Warning: a queue whose parent chain reaches a missing queue is dropped with its
    /// children, as KAI's `cleanQueueOrphans` does.
    pub const ORPHAN_QUEUE: Code = Code::new("kai-orphan-queue");
    /// Warning: a pod asks for `gpu-memory` but no node carries a readable
    /// `nvidia.com/gpu.memory` label, so KAI neither converts the request into GPUs nor
    /// places it.
    pub const GPU_MEMORY_UNCONVERTED: Code = Code::new("kai-gpu-memory-unconverted");
    /// Warning: nodes differ in per-GPU memory, and pending `gpu-memory` pods are charged and
    /// placed as the share of the smallest GPU (KAI charges the share of the GPU each lands
    /// on).
    pub const GPU_MEMORY_MIXED: Code = Code::new("kai-gpu-memory-mixed");
    /// Warning: a usage file names a queue that does not exist.
    pub const UNKNOWN_USAGE_QUEUE: Code = Code::new("kai-unknown-usage-queue");
}

/// The engine name every KAI diagnostic carries.
pub const ENGINE: &str = "kai";

/// Keeps the value of `r`, or records its error and returns `None`.
fn keep<T>(problems: &mut Diagnostics, r: Result<T, Diagnostic>) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            problems.push(e);
            None
        }
    }
}

fn problem(
    code: gpuquota_model::diag::Code,
    kind: &'static str,
    name: &str,
    field: &str,
    message: impl Into<String>,
) -> Diagnostic {
    Diagnostic::error(code, message)
        .object(kind, name)
        .field(field)
        .engine(ENGINE)
}

fn invalid(kind: &'static str, name: &str, field: &str, message: impl Into<String>) -> Diagnostic {
    problem(codes::INVALID_VALUE, kind, name, field, message)
}

fn too_large(
    kind: &'static str,
    name: &str,
    field: &str,
    message: impl Into<String>,
) -> Diagnostic {
    problem(codes::TOO_LARGE, kind, name, field, message)
}

fn not_found(
    kind: &'static str,
    name: &str,
    field: &str,
    message: impl Into<String>,
) -> Diagnostic {
    problem(codes::NOT_FOUND, kind, name, field, message)
}

/// A [`DivisionError`] from building the queue tree as a diagnostic naming the queue.
pub fn division_diagnostic(e: &DivisionError) -> Diagnostic {
    match e {
        DivisionError::Cycle { queue } => problem(
            codes::QUEUE_CYCLE,
            "Queue",
            queue,
            "spec.parentQueue",
            "the parent chain loops back to this queue",
        ),
        DivisionError::TooDeep { queue, depth } => problem(
            codes::TREE_TOO_DEEP,
            "Queue",
            queue,
            "spec.parentQueue",
            format!(
                "the queue tree is {depth} levels deep at this queue; at most {MAX_TREE_DEPTH} \
                 levels are accepted (KAI sets no limit; shorten the parent chain)"
            ),
        ),
        DivisionError::UnknownParent { queue, .. } => problem(
            codes::NOT_FOUND,
            "Queue",
            queue,
            "spec.parentQueue",
            "the parent is not a queue",
        ),
        DivisionError::Negative {
            queue,
            resource,
            field,
        } => problem(
            codes::INVALID_VALUE,
            "Queue",
            queue,
            &format!("spec.resources.{resource}.{field}"),
            "negative value",
        ),
        DivisionError::Overflow { queue, resource } => problem(
            codes::TOO_LARGE,
            "Queue",
            queue,
            &format!("spec.resources.{resource}"),
            "arithmetic overflow",
        ),
    }
}

/// A task's state in the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskStatus {
    /// Waiting to be placed (demand).
    Pending,
    /// Running on its node (allocated).
    Running,
    /// Finished successfully.
    Succeeded,
    /// Being deleted (`metadata.deletionTimestamp` on a running pod, at most
    /// [`STUCK_IN_RELEASING_NANOS`] ago): its node resources are being freed, so a job may be
    /// pipelined onto them; it is neither allocated to its queue nor demand (KAI's
    /// `Releasing`).
    Releasing,
    /// Being deleted for longer than [`STUCK_IN_RELEASING_NANOS`]: its resources stay used,
    /// nothing is pipelined onto them, and the pod itself is never a victim; its job's running
    /// pods still can be (KAI's `StuckInReleasing`).
    StuckInReleasing,
    /// Any other phase: ignored.
    Other,
}

/// KAI's `DefaultStuckInReleasingThreshold`: 2 minutes, in nanoseconds.
pub const STUCK_IN_RELEASING_NANOS: i128 = 120_000_000_000;

/// One pod of a job.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// `ns/name`.
    pub key: String,
    /// State.
    pub status: TaskStatus,
    /// GPU, CPU, memory requested (nano-units: devices, millicores, bytes).
    pub req: crate::ids::PerResource<i128>,
    /// True when the GPU request is a `gpu-fraction` share of one device.
    pub fractional: bool,
    /// MIG instances requested: `(index into Cluster::mig_profiles, count)`.
    pub mig: Vec<(usize, i64)>,
    /// The GPU-equivalents of `mig` included in `req[0]` (nano): `g × count` per
    /// `nvidia.com/mig-<g>g.<mem>gb`, as KAI counts them.
    pub mig_gpu: i128,
    /// The `gpu-memory` request (KAI's GPU sharing by memory), when it is the pod's GPU
    /// request; `req[0]` then holds the share of one device it is charged.
    pub gpu_memory: Option<GpuMemoryRequest>,
    /// Node of a running task (an index into [`Cluster::nodes`]).
    pub node: Option<crate::ids::NodeId>,
    /// The shared GPU a running fractional task sits on: KAI's `runai-gpu-group` label.
    /// Running fractions of one node with the same group share one device; without the label
    /// a running fraction is packed onto the most used device that fits.
    pub gpu_group: Option<String>,
    /// Node selector.
    pub node_selector: BTreeMap<String, String>,
    /// Tolerations.
    pub tolerations: Vec<Toleration>,
}

/// A `gpu-memory` request and the GPU-equivalents KAI derives from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuMemoryRequest {
    /// The annotation's MiB.
    pub mib: i64,
    /// What a pending task adds to its queue's demand (nano-GPUs): `mib / smallest per-GPU
    /// memory above 100 MiB of the cluster`, rounded up to the nano-GPU; 0 when no node's GPU
    /// memory is above 100 MiB (KAI's `MinNodeGPUMemoryMiB` is then unset and the conversion
    /// skipped).
    pub demand: i128,
}

/// A PodGroup: the gang / job unit.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// `ns/name`.
    pub key: String,
    /// Queue name as written.
    pub queue_name: String,
    /// The queue (an index into [`Cluster::hierarchy`]), `None` when it does not exist.
    pub queue: Option<crate::ids::QueueId>,
    /// Gang minimum.
    pub min_member: usize,
    /// Job priority.
    pub priority: i32,
    /// Preemptible (explicit or derived: priority < 100).
    pub preemptible: bool,
    /// Creation time.
    pub creation: Option<Timestamp>,
    /// UID (or the key).
    pub uid: String,
    /// Per-job stale grace period (nanoseconds; negative = never).
    pub staleness_grace: Option<i128>,
    /// Preemption delay (nanoseconds).
    pub preemption_delay: Option<i128>,
    /// When the job became stale, if recorded.
    pub stale_since: Option<Timestamp>,
    /// When the job last started (min-runtime), if known.
    pub last_start: Option<Timestamp>,
    /// Tasks in name order.
    pub tasks: Vec<Task>,
    /// Pods of another scheduler (`spec.schedulerName` set and not `kai-scheduler`): they hold
    /// node resources and are taken off the divided total, but are never scheduled, evicted or
    /// reported.
    pub foreign: bool,
}

impl Job {
    /// Running tasks.
    pub fn running(&self) -> usize {
        self.tasks
            .iter()
            .filter(|t| t.status == TaskStatus::Running)
            .count()
    }
}

/// A node.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeInfo {
    /// Name.
    pub name: String,
    /// Allocatable GPU (whole devices, nano), CPU (millicores, nano), memory (bytes, nano).
    pub allocatable: PerResource<i128>,
    /// Number of whole GPU devices.
    pub gpus: usize,
    /// Allocatable MIG instances per profile (index into [`Cluster::mig_profiles`]).
    pub mig: Vec<i64>,
    /// Labels.
    pub labels: BTreeMap<String, String>,
    /// Taints.
    pub taints: Vec<Taint>,
    /// Cordoned.
    pub unschedulable: bool,
    /// The memory of each GPU (MiB) as KAI reads it from the `nvidia.com/gpu.memory` label
    /// (a value of 2²⁰ or more is bytes; floored to a multiple of 100); `None` without a
    /// readable label, or below 100 MiB once floored.
    pub gpu_memory_mib: Option<i64>,
}

impl NodeInfo {
    /// True when `task` may run here (selector, taints, cordon; a `gpu-memory` task needs
    /// the node's GPU memory, as KAI's predicate refuses a node whose GPU memory is not
    /// synced).
    pub fn admits(&self, task: &Task) -> bool {
        !self.unschedulable
            && (task.gpu_memory.is_none() || self.gpu_memory_mib.is_some())
            && task
                .node_selector
                .iter()
                .all(|(k, v)| self.labels.get(k) == Some(v))
            && self.taints.iter().all(|t| {
                t.effect == "PreferNoSchedule"
                    || task.tolerations.iter().any(|tol| tol.tolerates(t))
            })
    }
}

/// Per-queue settings beyond the division inputs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct QueueInfo {
    /// Name.
    pub name: String,
    /// `spec.preemptMinRuntime` (nanoseconds), inherited down the tree.
    pub preempt_min_runtime: Option<i128>,
    /// `spec.reclaimMinRuntime` (nanoseconds), inherited down the tree.
    pub reclaim_min_runtime: Option<i128>,
}

/// Everything one session reads.
#[derive(Debug, Clone)]
pub struct Cluster {
    /// The queue tree and division inputs (requests filled from the jobs).
    pub hierarchy: Hierarchy,
    /// Per-queue settings, parallel to the hierarchy.
    pub queues: Vec<QueueInfo>,
    /// Jobs in key order.
    pub jobs: Vec<Job>,
    /// Nodes in name order (empty: a quota-level session on `totals`).
    pub nodes: Vec<NodeInfo>,
    /// MIG resource names seen on nodes and pods (`nvidia.com/mig-1g.24gb`, …), sorted.
    pub mig_profiles: Vec<String>,
    /// The amount divided at the top level (nano-units).
    pub totals: PerResource<i128>,
    /// Session time.
    pub now: Timestamp,
    /// Queues dropped because their parent chain reaches a missing queue (KAI's
    /// `cleanQueueOrphans`), in name order; their jobs are pending with `QueueDoesNotExist`.
    pub orphan_queues: Vec<String>,
    /// Warnings about tolerated input (one per orphan queue, code [`codes::ORPHAN_QUEUE`]).
    pub warnings: Diagnostics,
}

/// How to build a [`Cluster`] from a [`Model`].
///
/// Build them with [`BuildOptions::default`] and the `with_*` methods: fields may be added in
/// later versions.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct BuildOptions {
    /// `--total`: replaces the node sum for the given resources (nano-units).
    pub total: [Option<i128>; 3],
    /// `--now`; default the latest timestamp in the input.
    pub now: Option<Timestamp>,
    /// The queue label key (KAI's `queueLabelKey`: the `kai.scheduler/v1` Config's
    /// `spec.global.queueLabelKey`, passed to the pod grouper as `--queue-label-key`). When
    /// set, only this label names a pod's or PodGroup's queue; when `None`,
    /// `kai.scheduler/queue` (KAI's default) is read, then `runai/queue` (Run:ai's).
    pub queue_label_key: Option<String>,
    /// The checks before the snapshot is built: the workspace's validator and then the
    /// engine's own ([`Validation::Full`], the default), or only the engine's own
    /// ([`Validation::EngineOnly`]: duplicates are read last-one-wins and names are not
    /// checked, as for objects that reach the scheduler without the API server).
    pub validation: Validation,
}

impl BuildOptions {
    /// Sets [`BuildOptions::validation`].
    pub fn with_validation(mut self, validation: Validation) -> BuildOptions {
        self.validation = validation;
        self
    }

    /// Sets [`BuildOptions::total`] (nano-units per resource: GPU, CPU, memory).
    pub fn with_total(mut self, total: [Option<i128>; 3]) -> BuildOptions {
        self.total = total;
        self
    }

    /// Sets [`BuildOptions::now`].
    pub fn with_now(mut self, now: Option<Timestamp>) -> BuildOptions {
        self.now = now;
        self
    }

    /// Sets [`BuildOptions::queue_label_key`].
    pub fn with_queue_label_key(mut self, key: Option<String>) -> BuildOptions {
        self.queue_label_key = key;
        self
    }

    /// The queue named by `labels` under the configured key, or by KAI's then Run:ai's
    /// default key when none is configured.
    pub fn queue_label<'a>(&self, labels: &'a BTreeMap<String, String>) -> Option<&'a String> {
        match &self.queue_label_key {
            Some(k) => labels.get(k),
            None => labels
                .get(QUEUE_LABEL)
                .or_else(|| labels.get(RUNAI_QUEUE_LABEL)),
        }
        .filter(|q| !q.is_empty())
    }
}

/// Parses `--total gpu=N[,cpu=Q,memory=Q]` (Kubernetes quantities: `cpu=64` cores,
/// `memory=512Gi`) into nano-units per resource.
///
/// # Errors
/// A message naming the bad entry.
pub fn parse_total(s: &str) -> Result<[Option<i128>; 3], String> {
    let mut out = [None; 3];
    if s.trim().is_empty() {
        return Err("--total: empty: expected gpu=N[,cpu=Q,memory=Q]".into());
    }
    for part in s.split(',').filter(|p| !p.trim().is_empty()) {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| format!("--total: {part:?}: expected resource=quantity"))?;
        let q = Quantity::parse(v.trim()).map_err(|e| format!("--total: {k}: {e}"))?;
        if q.is_negative() {
            return Err(format!("--total: {k}: negative quantity"));
        }
        let (idx, extra) = match k.trim() {
            "gpu" | GPU_RESOURCE => (0, 0),
            "cpu" => (1, 3),
            "memory" => (2, 0),
            other => {
                return Err(format!(
                    "--total: unknown resource {other:?} (gpu, cpu, memory)"
                ));
            }
        };
        if out[idx].is_some() {
            return Err(format!("--total: {} given twice", k.trim()));
        }
        out[idx] =
            Some(from_quantity(&q, extra).ok_or_else(|| format!("--total: {k}: too large"))?);
    }
    Ok(out)
}

/// The `g` of `nvidia.com/mig-<g>g.<mem>gb` (KAI's GPU portion of one instance).
pub fn mig_gpu_portion(name: &str) -> Option<i64> {
    let rest = name.strip_prefix("nvidia.com/mig-")?;
    let (g, mem) = rest.split_once("g.")?;
    let mem = mem.strip_suffix("gb")?;
    if g.is_empty() || mem.is_empty() || !mem.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    g.parse().ok()
}

fn priority_of(model: &Model, class: Option<&str>) -> i32 {
    match class {
        None => DEFAULT_JOB_PRIORITY,
        Some(c) => builtin_priority_class(c)
            .or_else(|| model.priority_classes.get(c).map(|p| p.value))
            .unwrap_or(DEFAULT_JOB_PRIORITY),
    }
}

fn latest_timestamp(model: &Model) -> Timestamp {
    let mut t = Timestamp::EPOCH;
    let mut see = |x: Option<Timestamp>| {
        if let Some(x) = x
            && x > t
        {
            t = x;
        }
    };
    for q in model.queues.values() {
        see(q.metadata.creation_timestamp);
    }
    for pg in model.pod_groups.values() {
        see(pg.metadata.creation_timestamp);
        for a in [STALE_TIMESTAMP_ANNOTATION, LAST_START_ANNOTATION] {
            see(pg
                .metadata
                .annotations
                .get(a)
                .and_then(|s| Timestamp::parse(s).ok()));
        }
    }
    for p in model.pods.values() {
        see(p.metadata.creation_timestamp);
        see(p.status.as_ref().and_then(|s| s.start_time));
    }
    for n in model.nodes.values() {
        see(n.metadata.creation_timestamp);
    }
    t
}

impl Cluster {
    /// Builds the session input from imported objects, after the workspace's one validator.
    ///
    /// The objects of the kinds this engine reads
    /// ([`gpuquota_model::validate::KAI_KINDS`]: Queue, PodGroup, Pod, Node, PriorityClass)
    /// are validated first with [`gpuquota_model::validate::check_kinds`], the check
    /// `gpuquota validate` runs: its errors are returned as they are (same code, field path
    /// and wording), so this engine refuses exactly what `validate` refuses among its objects
    /// (invalid names, duplicates, queue cycles, ...). The engine's own checks
    /// ([`Cluster::from_model_unvalidated`]) then run on valid input.
    ///
    /// # Errors
    /// [`Diagnostics`]: every bad object and field in the input (each an error
    /// naming kind, name and field), not only the first; nothing is built on error.
    ///
    /// # Complexity
    /// O(Q + P log P + N) for queues, pods and nodes, plus the validation's
    /// O(n log n) in the number of objects.
    pub(crate) fn from_model(
        model: &Model,
        options: &BuildOptions,
    ) -> Result<Cluster, Diagnostics> {
        gpuquota_model::validate::check_kinds(model, gpuquota_model::validate::KAI_KINDS)?;
        Cluster::from_model_unvalidated(model, options)
    }

    /// Builds the session input with only this engine's own checks, for objects that reach
    /// the scheduler without the API server in between (as upstream's unit tests create
    /// them): duplicates are then read last-one-wins and names are not checked.
    ///
    /// # Errors
    /// [`Diagnostics`]: every bad object and field the engine cannot run; nothing is built
    /// on error.
    ///
    /// # Complexity
    /// O(Q + P log P + N) for queues, pods and nodes.
    pub(crate) fn from_model_unvalidated(
        model: &Model,
        options: &BuildOptions,
    ) -> Result<Cluster, Diagnostics> {
        // Every problem is recorded and the bad value read as its default, so that the rest
        // of the input is still checked; the list is returned at the end if not empty. The
        // phases run in the order the problems are reported in.
        let mut problems = Diagnostics::default();
        // KAI drops an orphan queue (its parent chain reaches a missing queue) with all its
        // children, with a warning (`cleanQueueOrphans`); their jobs then find no queue.
        let orphans = queues::orphan_queues(model);
        let queues::Queues {
            index,
            mut inputs,
            infos,
        } = queues::read_queues(model, &orphans, &mut problems);
        let mig = nodes::mig_profiles(model);
        let mut read = nodes::read_nodes(model, &mig, &mut problems);
        dra::add_node_gpus(model, &mut read, &mut problems);
        let mut node_sum = read.sum;
        let mut jobs = pods::read_pod_groups(model, options, &mut problems);
        let now = options.now.unwrap_or_else(|| latest_timestamp(model));
        let projects = pods::read_pods(model, options, now, &read, &mig, &mut jobs, &mut problems);
        let nodes = read.nodes;
        let mut jobs = pods::assign_queues(
            model,
            jobs,
            &projects,
            &index,
            &mut inputs,
            &mut node_sum,
            &mut problems,
        );
        let totals = quota_totals(options, nodes.is_empty(), node_sum, &mut jobs, &mut inputs);
        // The tree is checked too (cycles), even when other problems were found: the defaults
        // read in place of bad values are valid, so they add no problem of their own.
        let hierarchy = keep(
            &mut problems,
            Hierarchy::new(inputs).map_err(|e| division_diagnostic(&e)),
        );
        let Some(hierarchy) = hierarchy.filter(|_| problems.is_empty()) else {
            return Err(problems);
        };
        let mut warnings = orphan_warnings(&orphans);
        warnings.0.extend(gpu_memory_warnings(&jobs, &nodes));
        Ok(Cluster {
            hierarchy,
            queues: infos,
            jobs,
            nodes,
            mig_profiles: mig.profiles,
            totals,
            now,
            orphan_queues: orphans,
            warnings,
        })
    }
}

/// The amounts divided at the top level: the node sum, replaced per resource by
/// `--total`. At quota level (no nodes but a `--total`) a resource without a total is not
/// modelled: every request of it is zeroed.
///
/// # Complexity
/// O(T + Q) for T pods and Q queues.
fn quota_totals(
    options: &BuildOptions,
    no_nodes: bool,
    node_sum: PerResource<i128>,
    jobs: &mut [Job],
    inputs: &mut [QueueInput],
) -> PerResource<i128> {
    let mut totals = node_sum;
    // Quota level: no nodes but a `--total`. With neither, the cluster is empty, as in
    // KAI's allocate test "No nodes": every job stays pending.
    let quota_level = no_nodes && options.total.iter().any(Option::is_some);
    for r in Resource::ALL {
        if let Some(t) = options.total[r.index()] {
            totals[r] = t;
        } else if quota_level {
            // Quota level without nodes: a resource with no total is not modelled.
            for j in jobs.iter_mut() {
                for t in &mut j.tasks {
                    t.req[r] = 0;
                }
            }
            for q in inputs.iter_mut() {
                q.resources[r.index()].request = 0;
            }
        }
    }
    totals
}

/// The warnings about `gpu-memory` requests: one per such pod when no node's GPU memory is
/// known ([`codes::GPU_MEMORY_UNCONVERTED`]); one naming the first pending such pod when
/// nodes differ in GPU memory ([`codes::GPU_MEMORY_MIXED`]).
///
/// # Complexity
/// O(T + N) for T tasks and N nodes.
fn gpu_memory_warnings(jobs: &[Job], nodes: &[NodeInfo]) -> Vec<Diagnostic> {
    let field = format!("metadata.annotations.{GPU_MEMORY_ANNOTATION}");
    let memories = || nodes.iter().filter_map(|n| n.gpu_memory_mib);
    let (min, max) = (memories().min(), memories().max());
    let tasks = || {
        jobs.iter()
            .filter(|j| !j.foreign)
            .flat_map(|j| &j.tasks)
            .filter(|t| t.gpu_memory.is_some())
    };
    let mut out = Vec::new();
    match (min, max) {
        (None, _) | (_, None) => {
            for t in tasks() {
                out.push(
                    Diagnostic::warning(
                        codes::GPU_MEMORY_UNCONVERTED,
                        format!(
                            "no node carries a readable {GPU_MEMORY_LABEL} label of at least \
                             100 MiB: KAI neither turns this request into GPUs nor places it \
                             (counted as 0 GPUs)"
                        ),
                    )
                    .object("Pod", &t.key)
                    .field(&field)
                    .engine(ENGINE),
                );
            }
        }
        (Some(lo), Some(hi)) if lo != hi => {
            let mut pending = tasks().filter(|t| t.status == TaskStatus::Pending);
            if let Some(first) = pending.next() {
                let more = pending.count();
                out.push(
                    Diagnostic::warning(
                        codes::GPU_MEMORY_MIXED,
                        format!(
                            "nodes' GPUs hold {lo} to {hi} MiB: this and {more} other pending \
                             gpu-memory pods are charged and placed as the share of a \
                             {lo} MiB GPU; KAI charges the share of the GPU each one lands on"
                        ),
                    )
                    .object("Pod", &first.key)
                    .field(&field)
                    .engine(ENGINE),
                );
            }
        }
        _ => {}
    }
    out
}

/// One warning per orphan queue (code [`codes::ORPHAN_QUEUE`]).
fn orphan_warnings(orphans: &[String]) -> Diagnostics {
    orphans
        .iter()
        .map(|q| {
            Diagnostic::warning(
                codes::ORPHAN_QUEUE,
                "its parent chain reaches a missing queue; dropped with its children, as KAI does",
            )
            .object("Queue", q)
            .field("spec.parentQueue")
            .engine(ENGINE)
        })
        .collect()
}
