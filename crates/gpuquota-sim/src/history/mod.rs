//! A cluster's recorded history as a workload source: `workloads: [{history: {...}}]`.
//!
//! ```yaml
//! workloads:
//! - history:
//!     files: [dump.yaml]   # kubectl get workloads,jobs,pods,podgroups -A -o yaml
//! ```
//!
//! Each file is what `kubectl get … -o yaml` prints: a `List` (`items: [...]`), or YAML
//! documents of single objects or Lists; paths are relative to the scenario. Every object
//! the dump recorded becomes one workload of the replay (arriving when it was created,
//! running as long as it ran) **and** one [`Recorded`] history (its recorded admission,
//! evictions and end) that a replay's outcome is compared with ([`fidelity`]).
//!
//! **Kueue Workloads** (`kueue.x-k8s.io` `Workload`). Read:
//! - `metadata.name`, `namespace`, `creationTimestamp` (the arrival; required),
//!   `ownerReferences` (a Workload owned by a Job of the dump stands for that Job);
//! - `spec` as a whole: the pod sets, `queueName`, the priority class
//!   (`priorityClassName`/`priorityClassRef`, `priority`) are replayed as written;
//! - `status.conditions[]` by `type`, each with its `status`, `reason` and
//!   `lastTransitionTime`: `QuotaReserved` and `Admitted` (the admission: `Admitted`'s time
//!   when it is `True`, else `QuotaReserved`'s), `PodsReady` (when the pods ran),
//!   `Evicted` (`True`: evicted at that time for that reason, and pending again; `False`:
//!   evicted once before the current admission, at a time the conditions no longer hold),
//!   `Preempted` (the preemption's reason, `InClusterQueue`, `InCohortReclamation` …,
//!   refines an `Evicted` of reason `Preempted`), `Finished` (`True`: the end, its reason
//!   `Succeeded` or `Failed`);
//! - `status.schedulingStats.evictions[]` (`reason`, `underlyingCause`, `count`): when
//!   present, the number of evictions per reason (the conditions keep only the last);
//! - `status.requeueState.count`: the times the workload was requeued;
//! - `status.accumulatedPastExexcutionTimeSeconds` (v1beta2:
//!   `accumulatedPastExecutionTimeSeconds`): the seconds it was admitted in the runs before
//!   the last, which the recorded GPU-hours of [`fidelity`] add to the last run's.
//!
//! Kubernetes keeps one condition per type, with the time of its last transition, so a
//! dump holds the **last** run of a workload: its admission and its end exactly, the
//! earlier runs only as counts. Inferred: the replay's **runtime** is the last run's,
//! `Finished − admission` (from `PodsReady` when no admission time is recorded), the
//! time the workload held its quota in the run that finished; a workload still running
//! when the dump was taken, or pending, runs until the end of the replay (as does one that
//! finished with no admission recorded, counted in a warning); the recorded
//! **first admission** is the admission when the workload was never evicted, unknown
//! otherwise.
//!
//! **Jobs without a Workload** (`batch/v1` `Job` with the `kueue.x-k8s.io/queue-name`
//! label that no Workload of the dump is owned by): arrival `metadata.creationTimestamp`,
//! admission `status.startTime`, end `status.completionTime`, else the `lastTransitionTime`
//! of its `Failed` (or `Complete`) condition when `True`; replayed as the Job it is (the
//! simulator makes its Workload as Kueue does: `metadata.uid` names it), with its
//! runtime. **Pods without a Workload** (a `Pod` with the queue-name label and no
//! controller): arrival `creationTimestamp`, admission `status.startTime`, end the last
//! `finishedAt` of its containers' `state.terminated` when its `status.phase` is
//! `Succeeded` or `Failed`. Jobs and Pods without the label were not queued by Kueue and
//! are counted (a warning); Pods owned by another object run as part of it and are not
//! read; `PodGroup`s and other kinds are counted (a warning) and not read.
//!
//! **KAI PodGroups** (`scheduling.run.ai` `PodGroup`, e.g. `v2alpha2`), read when the
//! scenario has `engine: kai` ([`dump::load_kai`]; the Kueue objects are then counted and
//! not read): arrival `metadata.creationTimestamp`, the LocalQueue of the record
//! `spec.queue` (the KAI queue), the class `spec.priorityClassName`; its Pods are those
//! of the dump with the annotation `pod-group-name` naming it: admission the earliest
//! `status.startTime`, end the last `finishedAt` of their containers once every pod is
//! `Succeeded` or `Failed` (`Failed` when one failed), runtime end − admission, GPUs the
//! sum of the pods' requests. KAI keeps no history of evictions on its objects (an evicted
//! pod is deleted, a PodGroup's status holds its phase, pod counts and scheduling
//! conditions), so the pods' start is the last run's; the annotation
//! `gpuquota.dev/evictions` ([`dump::KAI_EVICTIONS_ANNOTATION`], which the simulator
//! writes) lists the runs an eviction ended, `[{"action", "startTime", "endTime"}]`: each
//! is a recorded eviction at its end (reason `Preempted`, the action as the cause; a spent
//! budget's `budget` is `BudgetExhausted`), the first admission is the first run's start
//! and their lengths are the time held before the last run. Replayed as the PodGroup (with
//! its runtime) and its Pods without their `status` and `spec.nodeName` (the replay binds
//! them anew).
//!
//! The Kueue objects are read by the `kueue` and `resourcequota` engines, the PodGroups by
//! `kai`. The replay's objects are imported as the cluster files are, so the LocalQueues,
//! ClusterQueues, KAI Queues and priority classes they name must be in `spec.cluster`.
//! The report's `fidelity` section compares a Kueue, ResourceQuota or KAI replay with the
//! record ([`fidelity`]); a run is written back by [`mod@write`] (`gpuquota sim --output
//! workloads`): as Workloads, or a KAI run as its PodGroups and Pods.
//!
//! Problems are diagnostics naming the file (`source`), the object (`Workload ns/name`)
//! and the field (`status.conditions[1].lastTransitionTime`): a time that is not RFC 3339
//! and a missing `creationTimestamp` or name are errors, as is a file that is not YAML or
//! holds no object.
//!
//! **Prometheus** (`prometheus: {files: [...]}` or `{url, start, end}`): kube-state-metrics'
//! pod series and the DCGM exporter's, read into the same replay and the same records; the
//! series, labels and inferences are listed in [`prometheus`].

pub mod dump;
pub mod fidelity;
pub mod prometheus;
pub mod write;

pub use dump::{History, load};

/// The `history:` entry of `spec.workloads[]`.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct HistorySource {
    /// `kubectl get workloads,jobs,pods,podgroups -A -o yaml` output files, relative to the
    /// scenario.
    #[serde(default)]
    pub files: Vec<String>,
    /// Series from Prometheus: saved query_range answers or a live server ([`prometheus`]).
    pub prometheus: Option<prometheus::PrometheusSource>,
}

/// Reads `spec.workloads[i].history` (scenario `name`; a KAI scenario's when `kai`: its
/// PodGroups, [`dump::load_kai`]): the dumps' objects to replay join
/// `files` as one manifest document named after the dumps; problems are `errors` (a file
/// that cannot be read under `spec.workloads[i].history.files[j]`, the dumps' own under
/// their file, object and field), objects not read are `warnings`; the recorded histories
/// join `recorded`.
///
/// # Complexity
/// O(input size + objects × log objects).
pub(crate) fn gather(
    name: &str,
    (i, kai): (usize, bool),
    h: &HistorySource,
    read: &crate::scenario::ReadFn<'_>,
    (files, recorded): (&mut Vec<(String, String)>, &mut Vec<Recorded>),
    errors: &mut gpuquota_model::diag::Diagnostics,
    warnings: &mut gpuquota_model::diag::Diagnostics,
) {
    use gpuquota_model::diag::{Diagnostic, codes};
    if let Some(p) = &h.prometheus {
        prometheus::gather(name, i, p, read, files, errors, warnings);
        if h.files.is_empty() {
            return;
        }
    }
    let field = format!("spec.workloads[{i}].history.files");
    if h.files.is_empty() {
        errors.push(
            Diagnostic::error(codes::INVALID, "required: at least one dump file")
                .source(name.to_owned())
                .field(field),
        );
        return;
    }
    let mut texts = Vec::with_capacity(h.files.len());
    for (j, f) in h.files.iter().enumerate() {
        match read(f) {
            Ok(t) => texts.push(t),
            Err(d) => errors.push(d.field(format!("{field}[{j}]"))),
        }
    }
    if texts.len() < h.files.len() {
        return;
    }
    let loaded = if kai {
        dump::load_kai(&texts)
    } else {
        load(&texts)
    };
    match loaded {
        Ok(history) => {
            let shown: Vec<&str> = texts.iter().map(|(n, _)| n.as_str()).collect();
            let shown = shown.join(", ");
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
            recorded.extend(history.records);
        }
        Err(ds) => errors.extend(ds.0),
    }
}

/// One eviction (or several of one reason) a workload's history records.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Eviction {
    /// When, unix ms; `None` when the dump keeps only the count.
    pub at_ms: Option<i64>,
    /// The reason (`Preempted`, `PodsReadyTimeout`, `InactiveWorkload`, … or `unknown`).
    pub reason: String,
    /// The preemption's reason or the underlying cause (`InCohortReclamation` …), `""`.
    pub cause: String,
    /// How many evictions of this reason (1 for a timed one).
    pub count: u32,
}

/// How a recorded workload ended.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct End {
    /// When, unix ms.
    pub at_ms: i64,
    /// `Succeeded`, `Failed` (or the condition's reason).
    pub reason: String,
}

/// One workload's recorded history.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Recorded {
    /// The replayed workload's key, `namespace/name` (a Job's or Pod's Workload name as
    /// Kueue makes it).
    pub key: String,
    /// The object the history was read from: `Workload`, `Job` or `Pod`.
    pub kind: String,
    /// The object's `namespace/name`.
    pub object: String,
    /// The namespace (the department).
    pub namespace: String,
    /// The LocalQueue.
    pub queue: String,
    /// The priority class (`""` without one): the report's class.
    pub class: String,
    /// GPUs (`nvidia.com/gpu`) of all its pods, thousandths.
    pub gpu_milli: u64,
    /// Arrival (`creationTimestamp`), unix ms.
    pub created_ms: i64,
    /// The first admission, unix ms, when known (never evicted).
    pub first_admitted_ms: Option<i64>,
    /// The last admission, unix ms.
    pub admitted_ms: Option<i64>,
    /// When its pods were ready in the last run, unix ms.
    pub ready_ms: Option<i64>,
    /// Its evictions.
    pub evictions: Vec<Eviction>,
    /// `status.requeueState.count`.
    pub requeues: u32,
    /// The end, when it finished.
    pub end: Option<End>,
    /// The last run's length, ms (the replay's runtime); `None` when it did not finish.
    pub runtime_ms: Option<i64>,
    /// The time it held its quota in the runs before the last, ms (Kueue's
    /// `status.accumulatedPastExexcutionTimeSeconds`, whole seconds; 0 without it).
    pub past_run_ms: i64,
}

impl Recorded {
    /// The evictions in all (the sum of the counts).
    pub fn eviction_count(&self) -> u32 {
        self.evictions.iter().map(|e| e.count).sum()
    }
}
