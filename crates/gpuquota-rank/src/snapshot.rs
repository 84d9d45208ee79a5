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
//!   of one device). CPU is counted in millicores, memory in bytes. Running fractions with the
//!   same `runai-gpu-group` label on one node share one device (KAI's GPU group); unlabelled
//!   ones are packed onto the most used device that fits.
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
use gpuquota_model::{Model, Quantity, Timestamp};

use crate::division::{DivisionError, Hierarchy, QueueInput, Resource, ResourceParams};
use crate::fixed::{SCALE, from_quantity};

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
    pub allocatable: [i128; 3],
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
}

impl NodeInfo {
    /// True when `task` may run here (selector, taints, cordon).
    pub fn admits(&self, task: &Task) -> bool {
        !self.unschedulable
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
    pub totals: [i128; 3],
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
}

impl BuildOptions {
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

fn queue_resource(
    name: &str,
    r: Resource,
    res: Option<&QueueResource>,
    problems: &mut Diagnostics,
) -> ResourceParams {
    // KAI units: GPU devices, CPU millicores, memory MB (10⁶ bytes).
    let extra = if r == Resource::Memory { 6 } else { 0 };
    let field = |f: &str| format!("spec.resources.{r}.{f}");
    let conv = |q: &Quantity, f: &str| -> Result<Option<i128>, Diagnostic> {
        if q.is_negative() {
            let (m, e) = q.as_decimal();
            if m == -1 && e == 0 {
                return Ok(None);
            }
            return Err(invalid(
                "Queue",
                name,
                &field(f),
                "negative value other than -1",
            ));
        }
        from_quantity(q, extra)
            .map(Some)
            .ok_or_else(|| too_large("Queue", name, &field(f), "value too large"))
    };
    let Some(res) = res else {
        return match r {
            // A missing gpu block reads like its missing fields: quota 0, weight 0, no limit.
            Resource::Gpu => ResourceParams {
                deserved: Some(0),
                ..ResourceParams::default()
            },
            _ => ResourceParams {
                deserved: None,
                weight: SCALE,
                limit: None,
                request: 0,
                usage: 0,
            },
        };
    };
    // A bad value is recorded and read as its default (quota 0, no limit, weight 0), so the
    // other fields and objects are still checked.
    let deserved = match &res.quota {
        Some(q) => keep(problems, conv(q, "quota")).unwrap_or(Some(0)),
        None => Some(0),
    };
    let limit = match &res.limit {
        Some(q) => keep(problems, conv(q, "limit")).flatten(),
        None => None,
    };
    let weight = match &res.over_quota_weight {
        // A queue with unlimited deserved takes min(total, request) in phase 1 and so never
        // takes part in over-quota division: its weight is never read. KAI's own test harness
        // gives such departments weight = quota = -1, so upstream tolerates it; so do we.
        Some(w) if w.is_negative() && deserved.is_none() => 0,
        Some(w) if w.is_negative() => {
            problems.push(invalid(
                "Queue",
                name,
                &field("overQuotaWeight"),
                "negative weight",
            ));
            0
        }
        Some(w) => from_quantity(w, 0).unwrap_or_else(|| {
            problems.push(invalid(
                "Queue",
                name,
                &field("overQuotaWeight"),
                "value too large",
            ));
            0
        }),
        None => 0,
    };
    ResourceParams {
        deserved,
        weight,
        limit,
        request: 0,
        usage: 0,
    }
}

fn duration(
    kind: &'static str,
    name: &str,
    field: &str,
    s: &Option<String>,
) -> Result<Option<i128>, Diagnostic> {
    match s {
        None => Ok(None),
        Some(s) => parse_go_duration(s)
            .map(Some)
            .ok_or_else(|| invalid(kind, name, field, format!("{s:?} is not a Go duration"))),
    }
}

type PodRequests = (crate::ids::PerResource<i128>, bool, Vec<(String, i64)>);

/// A pod's requests; every bad field is recorded in `problems` and read as 0.
fn pod_requests(key: &str, pod: &Pod, problems: &mut Diagnostics) -> PodRequests {
    let mut out = crate::ids::PerResource::ZERO;
    let mut fractional = false;
    let mut mig = Vec::new();
    let Some(reqs) = pod.spec.effective_requests() else {
        problems.push(too_large(
            "Pod",
            key,
            "spec.containers[].resources",
            "sum overflows",
        ));
        return (out, fractional, mig);
    };
    for (name, q) in &reqs {
        let field = format!("resources.requests.{name}");
        if q.is_negative() {
            problems.push(invalid("Pod", key, &field, "negative"));
            continue;
        }
        if mig_gpu_portion(name.as_str()).is_some() {
            match q.value() {
                Some(count) => mig.push((name.as_str().to_string(), count)),
                None => problems.push(too_large("Pod", key, &field, "too large")),
            }
            continue;
        }
        let (idx, extra) = match name.as_str() {
            GPU_RESOURCE => (0, 0),
            "cpu" => (1, 3),
            "memory" => (2, 0),
            _ => continue,
        };
        match from_quantity(q, extra) {
            Some(v) => out.0[idx] = v,
            None => problems.push(too_large("Pod", key, &field, "too large")),
        }
    }
    if let Some(f) = pod.metadata.annotations.get(GPU_FRACTION_ANNOTATION) {
        let field = format!("metadata.annotations.{GPU_FRACTION_ANNOTATION}");
        let v = match Quantity::parse(f.trim()) {
            Err(e) => Err(invalid("Pod", key, &field, e.to_string())),
            Ok(q) => match from_quantity(&q, 0) {
                None => Err(too_large("Pod", key, &field, "too large")),
                Some(v) if v <= 0 || v > SCALE => {
                    Err(invalid("Pod", key, &field, "must be in (0, 1]"))
                }
                Some(v) => Ok(v),
            },
        };
        if let Some(v) = keep(problems, v) {
            out[Resource::Gpu] = v;
            fractional = v < SCALE;
        }
    } else if out[Resource::Gpu] % SCALE != 0 {
        problems.push(invalid(
            "Pod",
            key,
            "resources.requests.nvidia.com/gpu",
            "whole devices only (use the gpu-fraction annotation)",
        ));
    }
    (out, fractional, mig)
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

/// Queues whose parent chain reaches a missing queue (KAI's `cleanQueueOrphans`), in name
/// order.
///
/// # Complexity
/// O(Q log Q): each queue is walked once; a parent cycle ends the walk (the hierarchy reports
/// it).
fn orphan_queues(model: &Model) -> Vec<String> {
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum St {
        Unknown,
        Visiting,
        Ok,
        Orphan,
    }
    let names: Vec<&String> = model.queues.keys().collect();
    let idx: BTreeMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    // Parent: None = root, Some(None) = missing, Some(Some(i)) = queue i.
    let parent: Vec<Option<Option<usize>>> = model
        .queues
        .values()
        .map(|q| {
            q.spec
                .parent_queue
                .as_deref()
                .filter(|p| !p.is_empty())
                .map(|p| idx.get(p).copied())
        })
        .collect();
    let mut st = vec![St::Unknown; names.len()];
    let mut stack = Vec::new();
    for start in 0..names.len() {
        let mut cur = start;
        let end = loop {
            match st[cur] {
                St::Ok | St::Visiting => break St::Ok,
                St::Orphan => break St::Orphan,
                St::Unknown => {}
            }
            st[cur] = St::Visiting;
            stack.push(cur);
            match parent[cur] {
                None => break St::Ok,
                Some(None) => break St::Orphan,
                Some(Some(p)) => cur = p,
            }
        };
        for q in stack.drain(..) {
            st[q] = end;
        }
    }
    names
        .iter()
        .zip(&st)
        .filter(|(_, s)| **s == St::Orphan)
        .map(|(n, _)| (*n).clone())
        .collect()
}

/// Queue indices in top-down order (every queue after its parent), from the roots; queues
/// on a parent cycle are left out.
///
/// # Complexity
/// O(Q).
fn top_down(parents: &[Option<usize>]) -> Vec<usize> {
    let n = parents.len();
    let mut children = vec![Vec::new(); n];
    let mut order = Vec::with_capacity(n);
    for (i, p) in parents.iter().enumerate() {
        match p {
            Some(p) if *p < n => children[*p].push(i),
            Some(_) => {}
            None => order.push(i),
        }
    }
    let mut head = 0;
    while head < order.len() {
        let q = order[head];
        head += 1;
        order.extend_from_slice(&children[q]);
    }
    order
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
    pub fn from_model(model: &Model, options: &BuildOptions) -> Result<Cluster, Diagnostics> {
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
    pub fn from_model_unvalidated(
        model: &Model,
        options: &BuildOptions,
    ) -> Result<Cluster, Diagnostics> {
        // Every problem is recorded and the bad value read as its default, so that the rest
        // of the input is still checked; the list is returned at the end if not empty.
        let mut problems = Diagnostics::default();
        // KAI drops an orphan queue (its parent chain reaches a missing queue) with all its
        // children, with a warning (`cleanQueueOrphans`); their jobs then find no queue.
        let orphans = orphan_queues(model);
        // Queues (BTreeMap order = name order; parents resolved by name).
        let names: Vec<&String> = model
            .queues
            .keys()
            .filter(|n| orphans.binary_search(n).is_err())
            .collect();
        let index: BTreeMap<&str, usize> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i))
            .collect();
        let mut inputs = Vec::with_capacity(names.len());
        let mut infos = Vec::with_capacity(names.len());
        for (name, q) in &model.queues {
            if orphans.binary_search(name).is_ok() {
                continue;
            }
            let parent = match q.spec.parent_queue.as_deref().filter(|p| !p.is_empty()) {
                None => None,
                Some(p) => {
                    let found = index.get(p).copied().ok_or_else(|| {
                        not_found(
                            "Queue",
                            name,
                            "spec.parentQueue",
                            format!("queue {p:?} does not exist"),
                        )
                    });
                    keep(&mut problems, found)
                }
            };
            let res = q.spec.resources.as_ref();
            let resources = [
                queue_resource(
                    name,
                    Resource::Gpu,
                    res.and_then(|r| r.gpu.as_ref()),
                    &mut problems,
                ),
                queue_resource(
                    name,
                    Resource::Cpu,
                    res.and_then(|r| r.cpu.as_ref()),
                    &mut problems,
                ),
                queue_resource(
                    name,
                    Resource::Memory,
                    res.and_then(|r| r.memory.as_ref()),
                    &mut problems,
                ),
            ];
            inputs.push(QueueInput {
                name: name.clone(),
                parent,
                priority: q.priority(),
                creation: q.metadata.creation_timestamp,
                uid: q.metadata.uid.clone().unwrap_or_default(),
                resources,
            });
            infos.push(QueueInfo {
                name: name.clone(),
                preempt_min_runtime: keep(
                    &mut problems,
                    duration(
                        "Queue",
                        name,
                        "spec.preemptMinRuntime",
                        &q.spec.preempt_min_runtime,
                    ),
                )
                .flatten(),
                reclaim_min_runtime: keep(
                    &mut problems,
                    duration(
                        "Queue",
                        name,
                        "spec.reclaimMinRuntime",
                        &q.spec.reclaim_min_runtime,
                    ),
                )
                .flatten(),
            });
        }
        // Inherit min-runtimes down the tree, parents first (queues on a parent cycle are not
        // reached; the hierarchy reports the cycle).
        let parents: Vec<Option<usize>> = inputs.iter().map(|q| q.parent).collect();
        for i in top_down(&parents) {
            if let Some(p) = parents[i] {
                if infos[i].preempt_min_runtime.is_none() {
                    infos[i].preempt_min_runtime = infos[p].preempt_min_runtime;
                }
                if infos[i].reclaim_min_runtime.is_none() {
                    infos[i].reclaim_min_runtime = infos[p].reclaim_min_runtime;
                }
            }
        }

        // MIG profiles named by nodes and pods.
        let mut mig_profiles: Vec<String> = model
            .nodes
            .values()
            .flat_map(|n| n.status.allocatable.keys())
            .map(|k| k.as_str().to_string())
            .chain(model.pods.values().flat_map(|p| {
                p.spec
                    .effective_requests()
                    .unwrap_or_default()
                    .into_keys()
                    .map(|k| k.as_str().to_string())
            }))
            .filter(|k| mig_gpu_portion(k).is_some())
            .collect();
        mig_profiles.sort();
        mig_profiles.dedup();
        let portion: Vec<i128> = mig_profiles
            .iter()
            .map(|m| i128::from(mig_gpu_portion(m).unwrap_or(0)) * SCALE)
            .collect();

        // Nodes.
        let mut nodes = Vec::with_capacity(model.nodes.len());
        let mut node_index: BTreeMap<&str, usize> = BTreeMap::new();
        let mut node_sum = [0i128; 3];
        for (name, n) in &model.nodes {
            let mut alloc = [0i128; 3];
            let mut mig = vec![0i64; mig_profiles.len()];
            for (rn, q) in &n.status.allocatable {
                if let Ok(i) = mig_profiles.binary_search_by(|m| m.as_str().cmp(rn.as_str())) {
                    mig[i] = q.value().unwrap_or(0).max(0);
                    continue;
                }
                let (idx, extra) = match rn.as_str() {
                    GPU_RESOURCE => (0, 0),
                    "cpu" => (1, 3),
                    "memory" => (2, 0),
                    _ => continue,
                };
                let field = format!("status.allocatable.{rn}");
                if q.is_negative() {
                    problems.push(invalid("Node", name, &field, "negative"));
                    continue;
                }
                match from_quantity(q, extra) {
                    Some(v) => alloc[idx] = v,
                    None => problems.push(too_large("Node", name, &field, "too large")),
                }
            }
            let gpus = usize::try_from(alloc[0] / SCALE).unwrap_or(0);
            alloc[0] = (gpus as i128) * SCALE;
            let unschedulable = n.spec.unschedulable.unwrap_or(false);
            if !unschedulable {
                // MIG instances count `g` GPU-equivalents each, as KAI counts capacity.
                let mig_gpus: Option<i128> =
                    mig.iter().zip(&portion).try_fold(0i128, |s, (&c, &g)| {
                        s.checked_add(i128::from(c).checked_mul(g)?)
                    });
                let mut overflow = mig_gpus.is_none();
                for (r, (sum, a)) in node_sum.iter_mut().zip(alloc).enumerate() {
                    let extra = if r == 0 { mig_gpus.unwrap_or(0) } else { 0 };
                    match sum.checked_add(a).and_then(|v| v.checked_add(extra)) {
                        Some(v) => *sum = v,
                        None => overflow = true,
                    }
                }
                if overflow {
                    problems.push(too_large(
                        "Node",
                        name,
                        "status.allocatable",
                        "sum overflows",
                    ));
                }
            }
            node_index.insert(name.as_str(), nodes.len());
            nodes.push(NodeInfo {
                name: name.clone(),
                allocatable: alloc,
                gpus,
                mig,
                labels: n.metadata.labels.clone(),
                taints: n.spec.taints.clone(),
                unschedulable,
            });
        }

        // Jobs: PodGroups, then pods grouped by annotation.
        let mut jobs: BTreeMap<String, Job> = BTreeMap::new();
        for (key, pg) in &model.pod_groups {
            let priority = priority_of(model, pg.spec.priority_class_name.as_deref());
            let preemptible = match pg.spec.preemptibility.as_deref() {
                Some("preemptible") => true,
                Some("non-preemptible") => false,
                None | Some("") => priority < 100,
                Some(other) => {
                    problems.push(invalid(
                        "PodGroup",
                        key,
                        "spec.preemptibility",
                        format!("{other:?}: expected preemptible or non-preemptible"),
                    ));
                    priority < 100
                }
            };
            // KAI: unset means 1; 0 is valid (no gang: every pod is elastic); negative is
            // rejected by the CRD (minimum 0).
            let min_member = match pg.spec.min_member {
                None => 1,
                Some(m) if m >= 0 => m as usize,
                Some(m) => {
                    problems.push(invalid(
                        "PodGroup",
                        key,
                        "spec.minMember",
                        format!("{m} < 0"),
                    ));
                    1
                }
            };
            let delay_s = pg.spec.preemption_delay.clone().or_else(|| {
                pg.metadata
                    .annotations
                    .get(PREEMPTION_DELAY_ANNOTATION)
                    .cloned()
            });
            let ts = |a: &str| -> Result<Option<Timestamp>, Diagnostic> {
                match pg.metadata.annotations.get(a) {
                    None => Ok(None),
                    Some(s) => Timestamp::parse(s).map(Some).map_err(|e| {
                        invalid(
                            "PodGroup",
                            key,
                            &format!("metadata.annotations.{a}"),
                            e.to_string(),
                        )
                    }),
                }
            };
            let staleness_grace = keep(
                &mut problems,
                duration(
                    "PodGroup",
                    key,
                    "spec.stalenessGracePeriod",
                    &pg.spec.staleness_grace_period,
                ),
            )
            .flatten();
            let preemption_delay = keep(
                &mut problems,
                duration("PodGroup", key, "spec.preemptionDelay", &delay_s),
            )
            .flatten();
            let stale_since = keep(&mut problems, ts(STALE_TIMESTAMP_ANNOTATION)).flatten();
            let last_start = keep(&mut problems, ts(LAST_START_ANNOTATION)).flatten();
            jobs.insert(
                key.clone(),
                Job {
                    key: key.clone(),
                    // `spec.queue`, else the PodGroup's queue label.
                    queue_name: if pg.spec.queue.is_empty() {
                        options
                            .queue_label(&pg.metadata.labels)
                            .cloned()
                            .unwrap_or_default()
                    } else {
                        pg.spec.queue.clone()
                    },
                    queue: None,
                    min_member,
                    priority,
                    preemptible,
                    creation: pg.metadata.creation_timestamp,
                    uid: pg.metadata.uid.clone().unwrap_or_else(|| key.clone()),
                    staleness_grace,
                    preemption_delay,
                    stale_since,
                    last_start,
                    tasks: Vec::new(),
                    foreign: false,
                },
            );
        }
        let now = options.now.unwrap_or_else(|| latest_timestamp(model));
        // Pod group → the `project` label of its first pod (queue fallback).
        let mut projects: BTreeMap<String, String> = BTreeMap::new();
        for (key, pod) in &model.pods {
            let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
            let group = match pod.metadata.annotations.get(POD_GROUP_ANNOTATION) {
                Some(g) => format!("{ns}/{g}"),
                None => key.clone(),
            };
            let phase = pod
                .status
                .as_ref()
                .and_then(|s| s.phase.as_deref())
                .unwrap_or("Pending");
            let node = pod.spec.node_name.as_deref().filter(|n| !n.is_empty());
            let deletion = match pod.metadata.other.get("deletionTimestamp") {
                None | Some(serde_json::Value::Null) => None,
                Some(v) => {
                    let t = v.as_str().and_then(|t| Timestamp::parse(t).ok());
                    if t.is_none() {
                        problems.push(invalid(
                            "Pod",
                            key,
                            "metadata.deletionTimestamp",
                            "not an RFC 3339 time",
                        ));
                    }
                    t
                }
            };
            // KAI's task states: a running pod being deleted is Releasing (StuckInReleasing
            // after 2 minutes); a pending pod with a node is Bound, i.e. allocated.
            let status = match (phase, node, deletion) {
                ("Running", Some(_), Some(d)) => {
                    let since = now.unix_nanos().saturating_sub(d.unix_nanos());
                    if since > STUCK_IN_RELEASING_NANOS {
                        TaskStatus::StuckInReleasing
                    } else {
                        TaskStatus::Releasing
                    }
                }
                (_, _, Some(_)) => TaskStatus::Other,
                ("Running" | "Pending", Some(_), None) => TaskStatus::Running,
                ("Pending", None, None) => TaskStatus::Pending,
                ("Succeeded", _, None) => TaskStatus::Succeeded,
                _ => TaskStatus::Other,
            };
            let node_idx = match (status, node) {
                (
                    TaskStatus::Running | TaskStatus::Releasing | TaskStatus::StuckInReleasing,
                    Some(n),
                ) => match node_index.get(n) {
                    Some(&i) => Some(i),
                    None if nodes.is_empty() => None,
                    None => {
                        problems.push(not_found(
                            "Pod",
                            key,
                            "spec.nodeName",
                            format!("node {n:?} does not exist"),
                        ));
                        None
                    }
                },
                _ => None,
            };
            let (mut req, fractional, mig_named) = pod_requests(key, pod, &mut problems);
            let mut mig = Vec::with_capacity(mig_named.len());
            let mut mig_gpu: Option<i128> = Some(0);
            for (name, count) in mig_named {
                if let Ok(i) = mig_profiles.binary_search(&name) {
                    mig.push((i, count));
                    mig_gpu = mig_gpu
                        .and_then(|s| s.checked_add(i128::from(count).checked_mul(portion[i])?));
                }
            }
            let summed = mig_gpu.and_then(|m| req[Resource::Gpu].checked_add(m));
            let mig_gpu = mig_gpu.unwrap_or(0);
            match summed {
                Some(v) => req[Resource::Gpu] = v,
                None => problems.push(too_large(
                    "Pod",
                    key,
                    "resources.requests",
                    "GPU sum overflows",
                )),
            }
            let label_queue = options.queue_label(&pod.metadata.labels).cloned();
            let foreign = pod
                .spec
                .scheduler_name
                .as_deref()
                .is_some_and(|s| !s.is_empty() && s != KAI_SCHEDULER_NAME)
                && !pod.metadata.annotations.contains_key(POD_GROUP_ANNOTATION)
                && label_queue.is_none();
            let job = jobs.entry(group.clone()).or_insert_with(|| Job {
                key: group.clone(),
                queue_name: label_queue.clone().unwrap_or_default(),
                queue: None,
                min_member: 1,
                priority: pod
                    .spec
                    .priority_class_name
                    .as_deref()
                    .map(|c| priority_of(model, Some(c)))
                    .unwrap_or(DEFAULT_JOB_PRIORITY),
                preemptible: true,
                creation: pod.metadata.creation_timestamp,
                uid: group.clone(),
                staleness_grace: None,
                preemption_delay: None,
                stale_since: None,
                last_start: None,
                tasks: Vec::new(),
                foreign,
            });
            if job.tasks.is_empty() && !model.pod_groups.contains_key(&group) {
                job.preemptible = job.priority < 100;
            }
            if job.queue_name.is_empty()
                && let Some(q) = label_queue
            {
                job.queue_name = q;
            }
            if let Some(p) = pod.metadata.labels.get(PROJECT_LABEL) {
                projects.entry(group.clone()).or_insert_with(|| p.clone());
            }
            if status == TaskStatus::Running
                && let Some(st) = pod.status.as_ref().and_then(|s| s.start_time)
                && model
                    .pod_groups
                    .get(&group)
                    .is_none_or(|pg| !pg.metadata.annotations.contains_key(LAST_START_ANNOTATION))
                && job.last_start.is_none_or(|l| st > l)
            {
                job.last_start = Some(st);
            }
            job.tasks.push(Task {
                key: key.clone(),
                status,
                req,
                fractional,
                mig,
                mig_gpu,
                node: node_idx.map(crate::ids::NodeId::new),
                gpu_group: pod.metadata.labels.get(GPU_GROUP_LABEL).cloned(),
                node_selector: pod.spec.node_selector.clone(),
                tolerations: pod.spec.tolerations.clone(),
            });
        }
        let mut has_child = vec![false; inputs.len()];
        for q in &inputs {
            if let Some(p) = q.parent {
                has_child[p] = true;
            }
        }
        let mut jobs: Vec<Job> = jobs.into_values().collect();
        for j in jobs.iter().filter(|j| j.foreign) {
            for t in j.tasks.iter().filter(|t| t.status == TaskStatus::Running) {
                for (sum, req) in node_sum.iter_mut().zip(t.req.0) {
                    *sum = sum.saturating_sub(req).max(0);
                }
            }
        }
        let mut request_overflow = vec![false; inputs.len()];
        for j in &mut jobs {
            if j.foreign {
                continue;
            }
            // KAI's pod grouper gives a pod without a PodGroup and without a queue label the
            // queue of its `project` label, else `default-queue`.
            if j.queue_name.is_empty() && !model.pod_groups.contains_key(&j.key) {
                j.queue_name = projects
                    .get(&j.key)
                    .cloned()
                    .unwrap_or_else(|| DEFAULT_QUEUE_NAME.to_string());
            }
            // Only leaf queues hold jobs; a job naming a parent queue is treated as queueless.
            j.queue = index
                .get(j.queue_name.as_str())
                .copied()
                .filter(|&q| !has_child[q])
                .map(crate::ids::QueueId::new);
            // Demand of the leaf: allocated + pending.
            if let Some(q) = j.queue.map(crate::ids::QueueId::index) {
                for t in &j.tasks {
                    if matches!(t.status, TaskStatus::Running | TaskStatus::Pending) {
                        for r in Resource::ALL {
                            if request_overflow[q] {
                                continue;
                            }
                            let sum = inputs[q].resources[r.index()].request.checked_add(t.req[r]);
                            match sum {
                                Some(v) => inputs[q].resources[r.index()].request = v,
                                None => {
                                    // Reported once per queue.
                                    request_overflow[q] = true;
                                    problems.push(too_large(
                                        "Queue",
                                        &inputs[q].name,
                                        "status.requested",
                                        "sum overflows",
                                    ));
                                }
                            }
                        }
                    }
                }
            }
        }
        let mut totals = node_sum;
        // Quota level: no nodes but a `--total`. With neither, the cluster is empty, as in
        // KAI's allocate test "No nodes": every job stays pending.
        let quota_level = nodes.is_empty() && options.total.iter().any(Option::is_some);
        for r in Resource::ALL {
            if let Some(t) = options.total[r.index()] {
                totals[r.index()] = t;
            } else if quota_level {
                // Quota level without nodes: a resource with no total is not modelled.
                for j in &mut jobs {
                    for t in &mut j.tasks {
                        t.req[r] = 0;
                    }
                }
                for q in &mut inputs {
                    q.resources[r.index()].request = 0;
                }
            }
        }
        // The tree is checked too (cycles), even when other problems were found: the defaults
        // read in place of bad values are valid, so they add no problem of their own.
        let hierarchy = keep(
            &mut problems,
            Hierarchy::new(inputs).map_err(|e| division_diagnostic(&e)),
        );
        let Some(hierarchy) = hierarchy.filter(|_| problems.is_empty()) else {
            return Err(problems);
        };
        let warnings = orphans
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
            .collect();
        Ok(Cluster {
            hierarchy,
            queues: infos,
            jobs,
            nodes,
            mig_profiles,
            totals,
            now,
            orphan_queues: orphans,
            warnings,
        })
    }
}
