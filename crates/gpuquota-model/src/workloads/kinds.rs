//! Typed views of the workload objects users submit: the fields the conversions read, every
//! other field kept verbatim (`other`), so no field is lost and unknown fields never fail.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::core::ResourceRequirements;
use crate::kueue::PodTemplateSpec;
use crate::meta::ObjectMeta;

/// Every other field of an object: kept, not interpreted.
pub type Other = BTreeMap<String, Value>;

/// `spec` of a `batch/v1` Job (also the `jobTemplate.spec` of a CronJob and the
/// `template.spec` of a JobSet's replicated job).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct JobSpec {
    /// Pods running at once; the API server defaults it to 1.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub parallelism: Option<i32>,
    /// Pods that must succeed; unset means any one success finishes the Job.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub completions: Option<i32>,
    /// Suspended (Kueue's webhook suspends every Job it manages at creation).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub suspend: Option<bool>,
    /// The pod template.
    #[cfg_attr(feature = "serde", serde(default))]
    pub template: PodTemplateSpec,
    /// `backoffLimit`, `completionMode`, …: kept.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: Other,
}

impl JobSpec {
    /// Pods Kueue counts: `parallelism` (default 1), capped by `completions` when smaller
    /// (kubernetes-sigs/kueue: pkg/controller/jobs/job/job_controller.go, `podsCount`).
    pub fn pods_count(&self) -> i32 {
        let p = self.parallelism.unwrap_or(1);
        match self.completions {
            Some(c) if c < p => c,
            _ => p,
        }
    }
}

/// A Job template (`metadata` + `spec`), as in CronJobs and JobSets.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct JobTemplateSpec {
    /// Template metadata.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub metadata: Option<ObjectMeta>,
    /// The Job spec.
    #[cfg_attr(feature = "serde", serde(default))]
    pub spec: JobSpec,
}

/// `spec` of a `batch/v1` CronJob.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct CronJobSpec {
    /// The Job each run creates.
    #[cfg_attr(feature = "serde", serde(default))]
    pub job_template: JobTemplateSpec,
    /// Suspended.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub suspend: Option<bool>,
    /// `schedule`, `concurrencyPolicy`, …: kept.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: Other,
}

/// One `replicatedJobs[]` entry of a JobSet.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ReplicatedJob {
    /// Name (the PodSet name).
    #[cfg_attr(feature = "serde", serde(default))]
    pub name: String,
    /// Copies of the Job (default 1).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub replicas: Option<i32>,
    /// The Job template.
    #[cfg_attr(feature = "serde", serde(default))]
    pub template: JobTemplateSpec,
    /// Other fields: kept.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: Other,
}

/// `spec` of a JobSet (`jobset.x-k8s.io/v1alpha2`).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct JobSetSpec {
    /// The replicated jobs, in order.
    #[cfg_attr(feature = "serde", serde(default))]
    pub replicated_jobs: Vec<ReplicatedJob>,
    /// Suspended.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub suspend: Option<bool>,
    /// `startupPolicy`, `successPolicy`, …: kept.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: Other,
}

/// A Kubeflow replica spec (`replicas` + `template`).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ReplicaSpec {
    /// Replicas (default 1).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub replicas: Option<i32>,
    /// Pod template.
    #[cfg_attr(feature = "serde", serde(default))]
    pub template: PodTemplateSpec,
    /// `restartPolicy`, …: kept.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: Other,
}

/// `runPolicy.schedulingPolicy` of a Kubeflow job.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct SchedulingPolicy {
    /// Gang minimum (KAI's pod grouper reads it).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub min_available: Option<i64>,
    /// Priority class (Kueue prefers it over the pod templates').
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub priority_class: Option<String>,
    /// `queue`, `minResources`, …: kept.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: Other,
}

/// `runPolicy` of a Kubeflow job.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct RunPolicy {
    /// Suspended.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub suspend: Option<bool>,
    /// Scheduling policy.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub scheduling_policy: Option<SchedulingPolicy>,
    /// Other fields: kept.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: Other,
}

/// `spec` of a Kubeflow training job (PyTorchJob, TFJob, XGBoostJob, PaddleJob, JAXJob) or an
/// MPIJob: the replica specs under the kind's own key, and the run policy.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct KubeflowSpec {
    /// `runPolicy` (Kubeflow training operator and MPIJob v2beta1).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub run_policy: Option<RunPolicy>,
    /// Every other field, including the replica specs (`pytorchReplicaSpecs`, …).
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: Other,
}

/// `autoscalerOptions` of a RayCluster.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct AutoscalerOptions {
    /// Resources of the autoscaler sidecar.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub resources: Option<ResourceRequirements>,
    /// Other fields: kept.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: Other,
}

/// `headGroupSpec` of a RayCluster.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct HeadGroupSpec {
    /// Pod template of the head.
    #[cfg_attr(feature = "serde", serde(default))]
    pub template: PodTemplateSpec,
    /// Other fields: kept.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: Other,
}

/// One `workerGroupSpecs[]` entry of a RayCluster.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct WorkerGroupSpec {
    /// Group name (the PodSet name, lower-cased).
    #[cfg_attr(feature = "serde", serde(default))]
    pub group_name: String,
    /// Desired replicas (default 1).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub replicas: Option<i32>,
    /// Autoscaling minimum.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub min_replicas: Option<i32>,
    /// Autoscaling maximum.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub max_replicas: Option<i32>,
    /// Hosts per replica (multi-host TPU groups); values above 1 multiply the count.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub num_of_hosts: Option<i32>,
    /// Pod template.
    #[cfg_attr(feature = "serde", serde(default))]
    pub template: PodTemplateSpec,
    /// Other fields: kept.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: Other,
}

/// `spec` of a RayCluster (also `rayClusterSpec` of a RayJob).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct RayClusterSpec {
    /// The head.
    #[cfg_attr(feature = "serde", serde(default))]
    pub head_group_spec: HeadGroupSpec,
    /// Worker groups.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Vec::is_empty")
    )]
    pub worker_group_specs: Vec<WorkerGroupSpec>,
    /// In-tree autoscaling adds an autoscaler sidecar to the head pod.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub enable_in_tree_autoscaling: Option<bool>,
    /// Autoscaler options.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub autoscaler_options: Option<AutoscalerOptions>,
    /// Suspended.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub suspend: Option<bool>,
    /// Other fields: kept.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: Other,
}

impl RayClusterSpec {
    /// The head pod's template as KubeRay builds the pod: with in-tree autoscaling
    /// (`enableInTreeAutoscaling: true`) the `autoscaler` sidecar is appended, with
    /// `autoscalerOptions.resources` or KubeRay's default of 500m cpu and 512Mi memory as
    /// requests and limits (ray-project/kuberay
    /// `ray-operator/controllers/ray/common/pod.go`, `BuildAutoscalerContainer`; Kueue
    /// counts it the same way: kubernetes-sigs/kueue
    /// `pkg/controller/jobs/raycluster/common.go`).
    pub fn head_pod_template(&self) -> PodTemplateSpec {
        let mut t = self.head_group_spec.template.clone();
        if self.enable_in_tree_autoscaling == Some(true) {
            let resources = self
                .autoscaler_options
                .as_ref()
                .and_then(|o| o.resources.clone())
                .unwrap_or_else(|| {
                    let list: crate::core::ResourceList = [("cpu", "500m"), ("memory", "512Mi")]
                        .into_iter()
                        .filter_map(|(k, v)| {
                            Some((crate::resource::ResourceName::new(k), v.parse().ok()?))
                        })
                        .collect();
                    ResourceRequirements {
                        requests: list.clone(),
                        limits: list,
                        claims: None,
                    }
                });
            t.spec.containers.push(crate::core::Container {
                name: "autoscaler".into(),
                resources,
                ..crate::core::Container::default()
            });
        }
        t
    }
}

/// `spec` of a RayService.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct RayServiceSpec {
    /// The RayCluster the service runs.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub ray_cluster_config: Option<RayClusterSpec>,
    /// `serveConfigV2`, `upgradeStrategy`, …: kept.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: Other,
}

/// `spec` of a RayJob.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct RayJobSpec {
    /// The cluster the job creates.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub ray_cluster_spec: Option<RayClusterSpec>,
    /// `K8sJobMode` (the default), `HTTPMode`, `SidecarMode`, `InteractiveMode`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub submission_mode: Option<String>,
    /// The submitter pod's template (K8sJobMode).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub submitter_pod_template: Option<PodTemplateSpec>,
    /// Runs on an existing cluster (not a workload of its own).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub cluster_selector: Option<BTreeMap<String, String>>,
    /// Suspended.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub suspend: Option<bool>,
    /// Other fields: kept.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: Other,
}

/// `leaderWorkerTemplate` of a LeaderWorkerSet.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct LeaderWorkerTemplate {
    /// Pods per group, leader included (default 1).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub size: Option<i32>,
    /// The leader's template; without one the leader uses the worker template.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub leader_template: Option<PodTemplateSpec>,
    /// The workers' template.
    #[cfg_attr(feature = "serde", serde(default))]
    pub worker_template: PodTemplateSpec,
    /// Other fields: kept.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: Other,
}

/// `spec` of a LeaderWorkerSet.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct LeaderWorkerSetSpec {
    /// Groups (default 1).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub replicas: Option<i32>,
    /// The group template.
    #[cfg_attr(feature = "serde", serde(default))]
    pub leader_worker_template: LeaderWorkerTemplate,
    /// `LeaderCreated` (default) or `LeaderReady`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub startup_policy: Option<String>,
    /// Other fields: kept.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: Other,
}

/// `spec` of a Deployment, StatefulSet or ReplicaSet (`apps/v1`).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ReplicatedPodsSpec {
    /// Replicas (default 1).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub replicas: Option<i32>,
    /// Pod template.
    #[cfg_attr(feature = "serde", serde(default))]
    pub template: PodTemplateSpec,
    /// `selector`, `strategy`, …: kept.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: Other,
}

/// `spec.runtimeRef` of a TrainJob.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct RuntimeRef {
    /// The runtime's name.
    #[cfg_attr(feature = "serde", serde(default))]
    pub name: String,
    /// `trainer.kubeflow.org` (the default).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub api_group: Option<String>,
    /// `ClusterTrainingRuntime` (the default) or `TrainingRuntime`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub kind: Option<String>,
}

impl RuntimeRef {
    /// The kind referred to: `TrainingRuntime` or `ClusterTrainingRuntime` (the default).
    pub fn kind(&self) -> &str {
        self.kind
            .as_deref()
            .filter(|k| !k.is_empty())
            .unwrap_or("ClusterTrainingRuntime")
    }
}

/// `spec.trainer` of a TrainJob: the overrides of the trainer node.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct TrainerSpec {
    /// Training nodes (pods of the trainer job).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub num_nodes: Option<i32>,
    /// Resources of each `node` container.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub resources_per_node: Option<ResourceRequirements>,
    /// `image`, `command`, `args`, `env`, …: kept.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: Other,
}

/// `spec` of a TrainJob (`trainer.kubeflow.org/v1alpha1`).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct TrainJobSpec {
    /// The runtime whose template the job instantiates.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub runtime_ref: Option<RuntimeRef>,
    /// Trainer overrides.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub trainer: Option<TrainerSpec>,
    /// Suspended.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub suspend: Option<bool>,
    /// `initializer`, `runtimePatches`, `podTemplateOverrides`, …: kept.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: Other,
}

/// `spec.mlPolicy` of a training runtime.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct MlPolicy {
    /// Default training nodes.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub num_nodes: Option<i32>,
    /// `torch`, `mpi`: kept.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: Other,
}

/// `spec.template` of a training runtime: a JobSet template.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct JobSetTemplateSpec {
    /// Template metadata.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub metadata: Option<ObjectMeta>,
    /// The JobSet spec.
    #[cfg_attr(feature = "serde", serde(default))]
    pub spec: JobSetSpec,
}

/// `spec` of a TrainingRuntime or ClusterTrainingRuntime.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct TrainingRuntimeSpec {
    /// The ML policy (default node count).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub ml_policy: Option<MlPolicy>,
    /// The JobSet template.
    #[cfg_attr(feature = "serde", serde(default))]
    pub template: JobSetTemplateSpec,
    /// `podGroupPolicy`: kept.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: Other,
}
