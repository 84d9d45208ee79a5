//! The workload objects users submit — Jobs, JobSets, Kubeflow and Ray jobs, LeaderWorkerSets,
//! Deployments, StatefulSets, plain Pods — converted into the objects the schedulers decide
//! on, as the schedulers' own controllers convert them: Kueue Workloads (Kueue's job
//! framework) and KAI PodGroups with their Pods (KAI's pod grouper).
//!
//! The importer keeps every such document (and every ConfigMap) in
//! [`Model::workload_objects`](crate::Model::workload_objects) and
//! [`Model::config_maps`](crate::Model::config_maps), and converts them when it finishes, so
//! every command sees the converted objects. A Workload or PodGroup given explicitly in the
//! input wins over one converted under the same name (the conversion then warns). The fields
//! of these objects that no conversion reads are kept verbatim without unknown-field
//! warnings (their schemas are large and owned by other projects); a field the conversion
//! reads with the wrong shape skips the object with a warning naming the field.
//!
//! ```
//! # #[cfg(feature = "yaml")] {
//! use gpuquota_model::import_str;
//!
//! let job = "
//! apiVersion: batch/v1
//! kind: Job
//! metadata:
//!   name: sample-job
//!   namespace: team-a
//!   uid: 0c2a4f9e-0000-4000-8000-000000000001
//!   labels: {kueue.x-k8s.io/queue-name: user-queue}
//!   annotations: {kueue.x-k8s.io/job-min-parallelism: \"2\"}
//! spec:
//!   parallelism: 3
//!   completions: 3
//!   suspend: true
//!   template:
//!     spec:
//!       containers:
//!       - name: main
//!         resources: {requests: {cpu: \"1\"}, limits: {nvidia.com/gpu: 1}}
//! ";
//! let model = import_str("job.yaml", job)?.model;
//! let wl = &model.workloads["team-a/job-sample-job-4213f"];
//! assert_eq!(wl.spec.queue_name.as_deref(), Some("user-queue"));
//! assert_eq!(wl.spec.pod_sets[0].name, "main");
//! assert_eq!((wl.spec.pod_sets[0].count, wl.spec.pod_sets[0].min_count), (3, Some(2)));
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Kueue (kubernetes-sigs/kueue: `pkg/controller/jobframework`, `pkg/controller/jobs/*`)
//!
//! Which objects become Workloads, as the job reconciler decides
//! (`pkg/controller/jobframework/reconciler.go`, `ReconcileGenericJob`):
//!
//! - Only kinds whose framework is in the Configuration's `integrations.frameworks`. Without
//!   a Configuration in the input, the list of Kueue's shipped manager configuration
//!   (`config/components/manager/controller_manager_config.yaml`: `batch/job`,
//!   `kubeflow.org/mpijob`, `ray.io/rayjob`, `ray.io/raycluster`, `ray.io/rayservice`,
//!   `jobset.x-k8s.io/jobset`,
//!   `workload.codeflare.dev/appwrapper`, `trainer.kubeflow.org/trainjob`, `pod`,
//!   `deployment`, `statefulset`, `leaderworkerset.x-k8s.io/leaderworkerset`) applies, since
//!   that is what an installation runs; a Configuration without `integrations` gets the API
//!   default, `batch/job` only (`apis/config/v1beta2/defaults.go`). The Configuration is read
//!   bare or inside its ConfigMap (`kueue-manager-config`, key
//!   `controller_manager_config.yaml`).
//! - The namespace must match `managedJobsNamespaceSelector` (default: not `kube-system`,
//!   not `kueue-system`). Namespace labels come from the Namespace object plus
//!   `kubernetes.io/metadata.name`, which the API server sets. *Deviation:* Kueue skips an
//!   object whose Namespace does not exist; here a Namespace missing from the files is
//!   treated as existing with only that label, because platforms keep one file per object.
//! - The queue name is the `kueue.x-k8s.io/queue-name` label; the annotation of the same
//!   name, which older Kueue read, is read too, with a warning. Without a queue name, an
//!   object (or Pod) in a namespace that has a LocalQueue named `default` goes to it, as
//!   Kueue's webhooks label it (local queue defaulting, GA since Kueue 0.17 and no longer a
//!   feature gate: `pkg/controller/jobframework/defaults.go`, `ApplyDefaultLocalQueue`;
//!   `pkg/controller/jobs/pod/pod_webhook.go`); otherwise it is managed only under
//!   `manageJobsWithoutQueueName: true`.
//! - **Admission gate**: the object's `kueue.x-k8s.io/admission-gated-by` annotation is
//!   copied to its Workload (`pkg/controller/jobframework/reconciler.go`,
//!   `PropagateAdmissionGatedByAnnotation`); the engine keeps such a Workload pending with
//!   reason `AdmissionGated` for the whole run (the `AdmissionGatedBy` feature gate, beta and
//!   on by default since Kueue 0.19, `pkg/features/kube_features.go`; a Configuration's
//!   `featureGates: {AdmissionGatedBy: false}` turns it off).
//! - **Elastic jobs** (`kueue.x-k8s.io/elastic-job: "true"`, the
//!   `ElasticJobsViaWorkloadSlices` gate, beta and on by default since 0.18): converted at
//!   their current size with a `not-modelled` warning naming the annotation; the workload
//!   slices Kueue admits when such a job scales (`pkg/workloadslicing/workloadslicing.go`)
//!   are not modelled.
//! - An object whose controlling owner (`metadata.ownerReferences[].controller`) is of a kind
//!   Kueue manages is not a Workload of its own: its owner's Workload counts it (a Job of a
//!   JobSet, the RayCluster of a RayJob, the Pods of a Job). If the owner is not in the
//!   files, the object is skipped with a warning (Kueue cannot find the owner either).
//!
//! The Workload (`pkg/controller/jobframework/utils.go`, `NewWorkload`; `reconciler.go`,
//! `ConstructWorkload`, `ExtractPriority`):
//!
//! - **Name**: `<kind lower-cased>-<name>-<hash>`, the prefix cut to 247 bytes, the hash the
//!   first 5 hex digits of SHA-1 over `kind\ngroup\nname\nuid`
//!   (`pkg/controller/jobframework/workload_names.go`, `GetWorkloadNameForOwnerWithGVK`).
//!   The uid is `metadata.uid`; manifests written by hand have none (the API server assigns
//!   one), and the empty uid is hashed then, so names are stable but differ from a live
//!   cluster's unless the object carries its uid (as `kubectl get -o yaml` output does).
//! - **Labels**: `kueue.x-k8s.io/job-uid` when the object has a uid. **Annotations**: none of
//!   the object's, as upstream, except gpuquota's own `gpuquota.dev/…` ones (the simulator's
//!   `gpuquota.dev/runtime` and `gpuquota.dev/repeat`), which are kept. `creationTimestamp` is
//!   the object's (*deviation*: Kueue stamps the Workload when it creates it, a moment later;
//!   queue order is the same).
//! - **Priority**: the `kueue.x-k8s.io/priority-class` label names a WorkloadPriorityClass;
//!   else the kind's own priority class (Kubeflow and MPI `runPolicy.schedulingPolicy
//!   .priorityClass`); else the first PodSet template's `priorityClassName`; else the
//!   cluster's global default PriorityClass (lowest value if several), else priority 0.
//!   A named class missing from all the files read together gives a `missing-reference`
//!   warning and no Workload: Kueue's `ExtractPriority` fails and the job reconciler creates
//!   none until the class exists.
//! - `maximumExecutionTimeSeconds` from the `kueue.x-k8s.io/max-exec-time-seconds` label.
//! - PodSet templates are copied verbatim; Kueue's limits→requests rule, init-container and
//!   sidecar rule and pod overhead (`pkg/workload/resources.go`, `AdjustResources`) apply
//!   when the engines compute the requests ([`PodSpec::effective_requests`]), exactly as
//!   Kueue applies them to the stored Workload at admission. The namespace's LimitRange
//!   defaults are applied first, to every Workload (see [`limitrange`]).
//! - A finished object (Job condition `Complete`/`Failed`, Pod phase `Succeeded`/`Failed`)
//!   becomes a Workload with condition `Finished=True`, which the engines skip. A running,
//!   unsuspended Job (`status.active` or `status.startTime` set) is converted as pending with
//!   a warning: its admission (flavors) is not in the object.
//! - An object asking for more than [`MAX_CONVERTED_PER_OBJECT`] Workloads or pods is
//!   skipped with a warning.
//! - Topology annotations on pod templates (`kueue.x-k8s.io/podset-required-topology`,
//!   `podset-preferred-topology`, `podset-unconstrained-topology`,
//!   `podset-slice-required-topology`, `podset-slice-size`, `podset-group-name`) are not
//!   modelled: a warning names the annotation.
//!
//! PodSets per kind:
//!
//! | Kind | Framework | PodSets (name: count) | Upstream file |
//! |---|---|---|---|
//! | `batch/v1` Job | `batch/job` | `main`: min(parallelism (1), completions); `minCount` from `kueue.x-k8s.io/job-min-parallelism` | `pkg/controller/jobs/job/job_controller.go` |
//! | JobSet | `jobset.x-k8s.io/jobset` | per replicated job, its name: replicas (1) × the Job's count | `pkg/controller/jobs/jobset/jobset_controller.go` |
//! | PyTorchJob, TFJob, XGBoostJob, PaddleJob, JAXJob | `kubeflow.org/<kind>` | per replica type present, in the operator's order (PyTorch, XGBoost, Paddle: Master, Worker; TF: Chief, Master, PS, Worker, Evaluator; JAX: Worker), lower-cased: replicas (1) | `pkg/controller/jobs/kubeflow/kubeflowjob/kubeflowjob_controller.go` |
//! | MPIJob (`kubeflow.org/v2beta1`) | `kubeflow.org/mpijob` | `launcher`, `worker`: replicas (1) | `pkg/controller/jobs/mpijob/mpijob_controller.go` |
//! | RayCluster | `ray.io/raycluster` | `head`: 1 (plus the autoscaler sidecar, 500m cpu and 512Mi, when in-tree autoscaling is on); per worker group, its name lower-cased: replicas (1) × numOfHosts | `pkg/controller/jobs/raycluster/common.go` |
//! | RayJob | `ray.io/rayjob` | the RayCluster's, plus `submitter`: 1 in `K8sJobMode` (the default; default submitter 500m cpu, 200Mi), or the submitter container added to `head` in `SidecarMode` | `pkg/controller/jobs/rayjob/rayjob_controller.go` |
//! | LeaderWorkerSet | `leaderworkerset.x-k8s.io/leaderworkerset` | one Workload per group `i` < replicas (1), named from `<name>-<i>`: with a leader template `leader`: 1 and `worker`: size − 1, else `main`: size | `pkg/controller/jobs/leaderworkerset/leaderworkerset_reconciler.go` |
//! | Pod with the queue label | `pod` | `main`: 1 | `pkg/controller/jobs/pod/pod_controller.go` |
//! | Pods with `kueue.x-k8s.io/pod-group-name` | `pod` | one Workload named after the group; one PodSet per pod role (Kueue's role hash), counting the role's pods; a single role counts `kueue.x-k8s.io/pod-group-total-count` | `pkg/controller/jobs/pod/pod_controller.go`, `pkg/util/pod/pod.go` |
//! | StatefulSet | `statefulset` | a group Workload named `statefulset-<name>-<hash>`, `main`: replicas (1) | `pkg/controller/jobs/statefulset/statefulset_reconciler.go` (`constructWorkload`) |
//! | RayService | `ray.io/rayservice` | the RayCluster's PodSets of its `rayClusterConfig` | `pkg/controller/jobs/rayservice/rayservice_controller.go` |
//! | Deployment | `deployment` | one single-pod Workload per replica (1) | `pkg/controller/jobs/deployment/deployment_webhook.go` |
//! | AppWrapper (`workload.codeflare.dev/v1beta2`) | `workload.codeflare.dev/appwrapper` | `<name>-<i>` per pod set of its components, in order ([`appwrapper`]: declared `podSets[]`, else inferred for the kinds the AppWrapper controller knows) | `pkg/controller/jobs/appwrapper/appwrapper_controller.go` |
//! | TrainJob (`trainer.kubeflow.org/v1alpha1`) | `trainer.kubeflow.org/trainjob` | the PodSets of the JobSet its TrainingRuntime or ClusterTrainingRuntime (`spec.runtimeRef`, default kind ClusterTrainingRuntime) makes: per replicated job, its name: replicas (1) × the Job's count; the job labelled `trainer.kubeflow.org/trainjob-ancestor-step: trainer` counts `spec.trainer.numNodes`, else the runtime's `mlPolicy.numNodes`, else its Job's count, initializer steps one replica; `spec.trainer.resourcesPerNode` replaces the resources of every container named `node`. An MPI runtime (`mlPolicy.mpi`: deepspeed, mlx) as the trainer builds its JobSet: the trainer step (the launcher in the shipped runtimes) one pod per `mlPolicy.numNodes` (1); the job named `node` `spec.trainer.numNodes`, minus one (at least 1) under `runLauncherAsNode`, else its parallelism; `resourcesPerNode` merged key by key into the first `node` container of the trainer step and, under `runLauncherAsNode`, of `node` | `pkg/controller/jobs/trainjob/trainjob_controller.go`; kubeflow/trainer: `pkg/runtime/core/trainingruntime.go`, `pkg/runtime/framework/plugins/mpi/mpi.go`, `pkg/runtime/framework/plugins/jobset/builder.go` |
//!
//! *Deviation (`generateName`):* an object with `metadata.generateName` and no name (as
//! `kubectl create` takes it) is named `generateName` + the first 5 hex digits of the SHA-1 of
//! its document, where the API server would append 5 random characters: stable across runs
//! and document order.
//!
//! *Deviation (Deployments):* the pods of a Deployment get random names from the API server,
//! and Kueue names each pod's Workload after its pod; the conversion names the pods
//! `<deployment>-<i>` and derives the Workload names from those.
//!
//! A TrainJob whose runtime is not in the files is skipped with a warning naming the
//! runtime (Kueue cannot build its PodSets either); its `runtimePatches` /
//! `podTemplateOverrides` (node selectors, tolerations) are not applied, with a warning. An
//! AppWrapper
//! component path that leads to no pod template is skipped with a warning, as upstream
//! skips it.
//!
//! # KAI (kai-scheduler/KAI-Scheduler: `pkg/podgrouper/podgrouper/plugins/*`)
//!
//! Objects whose pods are scheduled by `kai-scheduler` (`spec.template.spec.schedulerName`,
//! or a Pod's `spec.schedulerName`) become a PodGroup and its pods, as the pod grouper makes
//! them; see [`kai`] for the per-kind rules.
//!
//! # Every kind read, and every kind skipped with a warning
//!
//! | Kind | Read by | Becomes |
//! |---|---|---|
//! | `batch/v1` Job | Kueue, KAI | Workload; PodGroup (a CronJob's Job: default grouper, minMember 1) |
//! | `batch/v1` CronJob | KAI | a PodGroup per Job it created (the Jobs in the files, else `status.active`); Kueue: only its Jobs are Workloads |
//! | JobSet | Kueue, KAI | Workload; PodGroup |
//! | PyTorchJob, TFJob, XGBoostJob, PaddleJob, JAXJob, MPIJob | Kueue, KAI | Workload; PodGroup |
//! | TrainJob | Kueue | Workload from its runtime |
//! | TrainingRuntime, ClusterTrainingRuntime | Kueue | read by the TrainJob conversion |
//! | RayCluster, RayJob | Kueue, KAI | Workload; PodGroup (the head pod with the autoscaler sidecar under in-tree autoscaling, and a `not-modelled` warning for the autoscaler's scaling) |
//! | RayService | Kueue | Workload |
//! | LeaderWorkerSet | Kueue, KAI | a Workload and a PodGroup per group |
//! | AppWrapper | Kueue, KAI | Workload; PodGroup (default grouper) |
//! | Deployment, StatefulSet | Kueue, KAI | Workloads (pod integration); PodGroups |
//! | ReplicaSet | KAI | PodGroup (default grouper) |
//! | `v1` Pod | Kueue, KAI | Workload per pod or pod group; Spark pods grouped by `spark-app-selector` |
//! | SparkApplication | KAI | PodGroup of its driver and executor pods in the files |
//! | Knative Service, Revision | KAI | a PodGroup per revision |
//! | KAI `Config` | KAI | queue label key and scheduler name |
//! | `v1` LimitRange | Kueue, KAI | container defaults and bounds ([`limitrange`]) |
//! | `resource.k8s.io` DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice | Kueue, KAI, ResourceQuota | devices pods claim, per engine ([`dra`]) |
//! | `node.k8s.io/v1` RuntimeClass | Kueue, KAI, ResourceQuota | `overhead.podFixed` added to the pods that name it ([`runtimeclass`]) |
//! | `v1` ConfigMap | — | Kueue's Configuration; the device plugin's sharing configuration ([`sharing`]) |
//!
//! Skipped with a warning: RayService for KAI, a RayJob with `clusterSelector` (it
//! runs on an existing cluster and has no Workload), a TrainJob for KAI (KAI groups the
//! JobSet the trainer creates), a TrainJob whose runtime is missing, a SparkApplication whose
//! pods are not in the files (the Spark operator builds them from spark-submit settings), a
//! CronJob with no Job in the files or in `status.active` (it has no pods at the snapshot's
//! instant), and for Kueue a SparkApplication (its integration is not modelled). Every other
//! kind is an unknown kind, warned about by the importer.
//!
//! # ConfigMaps
//!
//! Core `v1` ConfigMaps are read ([`ConfigMap`]); their `data` is unwrapped where it holds
//! a known configuration: Kueue's manager configuration (key
//! `controller_manager_config.yaml`) is imported as the Kueue Configuration. Other
//! ConfigMaps are kept and produce no warning. The NVIDIA device plugin's sharing
//! configuration (time-slicing, MPS) sets the GPUs each node advertises; see [`sharing`].
//!
//! [`PodSpec::effective_requests`]: crate::core::PodSpec::effective_requests

#[cfg(feature = "serde")]
pub mod appwrapper;
#[cfg(feature = "serde")]
pub mod dra;
#[cfg(feature = "serde")]
pub mod kai;
#[cfg(feature = "serde")]
pub mod kinds;
#[cfg(feature = "serde")]
pub mod kueue;
pub mod limitrange;
#[cfg(feature = "serde")]
pub mod names;
pub mod runtimeclass;
pub mod sharing;

#[cfg(feature = "serde")]
use std::collections::BTreeMap;

#[cfg(feature = "serde")]
use serde_json::Value;

/// Core `v1` ConfigMaps (defined beside the [`Model`] that keeps them).
pub use crate::model::configmap;
pub use crate::model::{ConfigMap, ObjectKind, WorkloadObject};

use crate::diag::{Code, Diagnostic};
#[cfg(feature = "serde")]
use crate::meta::ObjectMeta;
#[cfg(feature = "serde")]
use crate::model::Model;
use crate::model::Origin;

/// The most Workloads or pods one object is converted into: an object asking for more (a
/// Job with `parallelism: 2000000000`) is skipped with a warning instead of exhausting
/// memory. Real objects stay far below it.
pub const MAX_CONVERTED_PER_OBJECT: i32 = 10_000;

/// `n` if it is at most [`MAX_CONVERTED_PER_OBJECT`], else the warning's message.
#[cfg_attr(not(feature = "serde"), allow(dead_code))]
pub(crate) fn capped(n: i32, what: &str) -> Result<i32, String> {
    if n > MAX_CONVERTED_PER_OBJECT {
        Err(format!(
            "{what} is {n}, more than the {MAX_CONVERTED_PER_OBJECT} objects one object is \
             converted into; not converted"
        ))
    } else {
        Ok(n.max(0))
    }
}

/// Codes the conversions emit.
pub mod codes {
    use crate::diag::Code;

    /// An object a converter cannot read (wrong shape); it is skipped.
    pub const INVALID_OBJECT: Code = Code::new("invalid-workload-object");
    /// A kind or option the conversion does not model; skipped or approximated.
    pub const NOT_MODELLED: Code = Code::new("not-modelled");
    /// An object no scheduler manages (no queue name, or its framework is disabled).
    pub const NOT_MANAGED: Code = Code::new("not-managed");
    /// A reference (owner, priority class) to an object not in the files.
    pub const MISSING_REFERENCE: Code = Code::new("missing-reference");
    /// A converted object with the same name as one given explicitly (the given one wins).
    pub const SHADOWED: Code = Code::new("shadowed");
    /// A legacy spelling read for compatibility.
    pub const LEGACY: Code = Code::new("legacy");
    /// Workloads of different departments share GPU replicas without isolation.
    pub const NO_ISOLATION: Code = Code::new("no-isolation");
}

impl WorkloadObject {
    /// The spec decoded as `T`.
    #[cfg(feature = "serde")]
    fn spec_as<T: serde::de::DeserializeOwned + Default>(&self) -> Result<T, String> {
        if self.spec.is_null() {
            return Ok(T::default());
        }
        serde_path_to_error::deserialize(self.spec.as_value())
            .map_err(|e| format!("spec.{}: {}", e.path(), e.inner()))
    }

    /// Without the `serde` feature a spec is an empty placeholder: `T`'s default.
    #[cfg(not(feature = "serde"))]
    fn spec_as<T: Default>(&self) -> Result<T, String> {
        Ok(T::default())
    }
}

/// The controlling owner of an object (`ownerReferences[]` with `controller: true`), as
/// (API group, kind, name).
#[cfg(feature = "serde")]
pub fn controller_owner(meta: &ObjectMeta) -> Option<(String, String, String)> {
    let refs = meta.other.get("ownerReferences")?.as_array()?;
    refs.iter().find_map(|r| {
        if r.get("controller").and_then(Value::as_bool) != Some(true) {
            return None;
        }
        let api = r.get("apiVersion")?.as_str()?;
        let group = api.rsplit_once('/').map(|(g, _)| g).unwrap_or("");
        Some((
            group.to_owned(),
            r.get("kind")?.as_str()?.to_owned(),
            r.get("name")?.as_str()?.to_owned(),
        ))
    })
}

/// Collects the conversions' warnings with the origin of the object they are about.
#[derive(Debug, Default)]
pub struct Warnings(pub Vec<(Option<Origin>, Diagnostic)>);

impl Warnings {
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    fn push(&mut self, origin: Option<&Origin>, code: Code, kind: &str, name: &str, msg: String) {
        let mut d = Diagnostic::warning(code, msg).object(kind, name);
        if let Some(o) = origin {
            d = d.source(o.to_string());
        }
        self.0.push((origin.cloned(), d));
    }

    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    fn field(
        &mut self,
        origin: Option<&Origin>,
        code: Code,
        kind: &str,
        name: &str,
        field: &str,
        msg: String,
    ) {
        let mut d = Diagnostic::warning(code, msg)
            .object(kind, name)
            .field(field);
        if let Some(o) = origin {
            d = d.source(o.to_string());
        }
        self.0.push((origin.cloned(), d));
    }
}

/// Converts every workload object of `model` (and the Pods Kueue or KAI would group) into
/// Kueue Workloads and KAI PodGroups and Pods, adding them to the model. Objects given
/// explicitly keep precedence over converted ones of the same name.
///
/// Returns the warnings, each with the origin of the object it is about.
///
/// # Complexity
/// `O(n log n)` in the number of objects and pods.
#[cfg(feature = "serde")]
pub fn convert(model: &mut Model) -> Warnings {
    let mut warnings = Warnings::default();
    sharing::apply(model, &mut warnings);
    let kueue_out = kueue::convert(model, &mut warnings);
    let kai_out = kai::convert(model, &mut warnings);
    let mut used: BTreeMap<String, bool> = BTreeMap::new();
    for (key, _) in model.workload_objects.iter() {
        used.insert(key.clone(), false);
    }
    for k in kueue_out.used.iter().chain(kai_out.used.iter()) {
        used.insert(k.clone(), true);
    }
    for (wl_key, (origin, wl)) in kueue_out.workloads {
        match model.workloads.entry(wl_key) {
            std::collections::btree_map::Entry::Occupied(e) => warnings.push(
                origin.as_ref(),
                codes::SHADOWED,
                "Workload",
                e.key(),
                "a Workload of this name is given explicitly; the converted one is dropped".into(),
            ),
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert(wl);
            }
        }
    }
    for (key, (origin, pg)) in kai_out.pod_groups {
        match model.pod_groups.entry(key) {
            std::collections::btree_map::Entry::Occupied(e) => warnings.push(
                origin.as_ref(),
                codes::SHADOWED,
                "PodGroup",
                e.key(),
                "a PodGroup of this name is given explicitly; the converted one is dropped".into(),
            ),
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert(pg);
            }
        }
    }
    for (key, pod) in kai_out.pods {
        model.pods.insert(key, pod);
    }
    runtimeclass::apply(model, &mut warnings);
    limitrange::apply(model, &mut warnings);
    dra::warn(model, &mut warnings);
    for (key, was_used) in used {
        if was_used || kueue_out.explained.contains(&key) || kai_out.explained.contains(&key) {
            continue;
        }
        if let Some(obj) = model.workload_objects.get(&key)
            && !obj.kind.is_reference()
        {
            warnings.push(
                obj.origin.as_ref(),
                codes::NOT_MANAGED,
                obj.kind.as_str(),
                &obj.ns_name(),
                "managed by neither Kueue (no kueue.x-k8s.io/queue-name label, or its \
                 integration is not enabled) nor KAI (its pods' schedulerName is not \
                 kai-scheduler); not converted"
                    .into(),
            );
        }
    }
    warnings
}
