//! A workload object as the importer keeps it ([`WorkloadObject`]) for the conversions of
//! [`crate::workloads`], and the kinds of such objects ([`ObjectKind`]).

#[cfg(feature = "serde")]
use serde_json::Value;

use super::Origin;
use crate::meta::ObjectMeta;
use crate::opaque::Opaque;

/// The kinds of workload objects the conversions read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum ObjectKind {
    /// `batch/v1` Job.
    Job,
    /// `batch/v1` CronJob.
    CronJob,
    /// `jobset.x-k8s.io` JobSet.
    JobSet,
    /// `kubeflow.org` PyTorchJob.
    PyTorchJob,
    /// `kubeflow.org` TFJob.
    TFJob,
    /// `kubeflow.org` XGBoostJob.
    XGBoostJob,
    /// `kubeflow.org` PaddleJob.
    PaddleJob,
    /// `kubeflow.org` JAXJob.
    JAXJob,
    /// `kubeflow.org` MPIJob.
    MPIJob,
    /// `trainer.kubeflow.org` TrainJob.
    TrainJob,
    /// `ray.io` RayJob.
    RayJob,
    /// `ray.io` RayCluster.
    RayCluster,
    /// `ray.io` RayService.
    RayService,
    /// `leaderworkerset.x-k8s.io` LeaderWorkerSet.
    LeaderWorkerSet,
    /// `workload.codeflare.dev` AppWrapper.
    AppWrapper,
    /// `apps/v1` Deployment.
    Deployment,
    /// `apps/v1` StatefulSet.
    StatefulSet,
    /// `apps/v1` ReplicaSet.
    ReplicaSet,
    /// `sparkoperator.k8s.io` SparkApplication.
    SparkApplication,
    /// `serving.knative.dev` Service.
    KnativeService,
    /// `kai.scheduler/v1` Config: KAI's system configuration (`spec.global.queueLabelKey`,
    /// `spec.global.schedulerName`), read by the pod grouper conversion.
    KaiConfig,
    /// `trainer.kubeflow.org` TrainingRuntime: a namespaced TrainJob template (read by the
    /// TrainJob conversion).
    TrainingRuntime,
    /// `trainer.kubeflow.org` ClusterTrainingRuntime: a cluster-wide TrainJob template.
    ClusterTrainingRuntime,
    /// `serving.knative.dev` Revision: one version of a Knative Service.
    KnativeRevision,
    /// Core `v1` LimitRange: per-namespace container defaults and bounds.
    LimitRange,
    /// `resource.k8s.io` DeviceClass (cluster-scoped; [`crate::workloads::dra`]).
    DeviceClass,
    /// `resource.k8s.io` ResourceClaim ([`crate::workloads::dra`]).
    ResourceClaim,
    /// `resource.k8s.io` ResourceClaimTemplate ([`crate::workloads::dra`]).
    ResourceClaimTemplate,
    /// `resource.k8s.io` ResourceSlice (cluster-scoped; [`crate::workloads::dra`]).
    ResourceSlice,
    /// `node.k8s.io/v1` RuntimeClass: its `overhead.podFixed` is added to the requests of
    /// the pods that name it ([`crate::workloads::runtimeclass`]).
    RuntimeClass,
}

impl ObjectKind {
    /// Every kind, in declaration order.
    pub const ALL: &'static [ObjectKind] = &[
        ObjectKind::Job,
        ObjectKind::CronJob,
        ObjectKind::JobSet,
        ObjectKind::PyTorchJob,
        ObjectKind::TFJob,
        ObjectKind::XGBoostJob,
        ObjectKind::PaddleJob,
        ObjectKind::JAXJob,
        ObjectKind::MPIJob,
        ObjectKind::TrainJob,
        ObjectKind::RayJob,
        ObjectKind::RayCluster,
        ObjectKind::RayService,
        ObjectKind::LeaderWorkerSet,
        ObjectKind::AppWrapper,
        ObjectKind::Deployment,
        ObjectKind::StatefulSet,
        ObjectKind::ReplicaSet,
        ObjectKind::SparkApplication,
        ObjectKind::KnativeService,
        ObjectKind::KaiConfig,
        ObjectKind::TrainingRuntime,
        ObjectKind::ClusterTrainingRuntime,
        ObjectKind::KnativeRevision,
        ObjectKind::LimitRange,
        ObjectKind::DeviceClass,
        ObjectKind::ResourceClaim,
        ObjectKind::ResourceClaimTemplate,
        ObjectKind::ResourceSlice,
        ObjectKind::RuntimeClass,
    ];

    /// The API group and kind name.
    pub fn group_kind(self) -> (&'static str, &'static str) {
        match self {
            ObjectKind::Job => ("batch", "Job"),
            ObjectKind::CronJob => ("batch", "CronJob"),
            ObjectKind::JobSet => ("jobset.x-k8s.io", "JobSet"),
            ObjectKind::PyTorchJob => ("kubeflow.org", "PyTorchJob"),
            ObjectKind::TFJob => ("kubeflow.org", "TFJob"),
            ObjectKind::XGBoostJob => ("kubeflow.org", "XGBoostJob"),
            ObjectKind::PaddleJob => ("kubeflow.org", "PaddleJob"),
            ObjectKind::JAXJob => ("kubeflow.org", "JAXJob"),
            ObjectKind::MPIJob => ("kubeflow.org", "MPIJob"),
            ObjectKind::TrainJob => ("trainer.kubeflow.org", "TrainJob"),
            ObjectKind::RayJob => ("ray.io", "RayJob"),
            ObjectKind::RayCluster => ("ray.io", "RayCluster"),
            ObjectKind::RayService => ("ray.io", "RayService"),
            ObjectKind::LeaderWorkerSet => ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"),
            ObjectKind::AppWrapper => ("workload.codeflare.dev", "AppWrapper"),
            ObjectKind::Deployment => ("apps", "Deployment"),
            ObjectKind::StatefulSet => ("apps", "StatefulSet"),
            ObjectKind::ReplicaSet => ("apps", "ReplicaSet"),
            ObjectKind::SparkApplication => ("sparkoperator.k8s.io", "SparkApplication"),
            ObjectKind::KnativeService => ("serving.knative.dev", "Service"),
            ObjectKind::KaiConfig => ("kai.scheduler", "Config"),
            ObjectKind::TrainingRuntime => ("trainer.kubeflow.org", "TrainingRuntime"),
            ObjectKind::ClusterTrainingRuntime => {
                ("trainer.kubeflow.org", "ClusterTrainingRuntime")
            }
            ObjectKind::KnativeRevision => ("serving.knative.dev", "Revision"),
            ObjectKind::LimitRange => ("", "LimitRange"),
            ObjectKind::DeviceClass => ("resource.k8s.io", "DeviceClass"),
            ObjectKind::ResourceClaim => ("resource.k8s.io", "ResourceClaim"),
            ObjectKind::ResourceClaimTemplate => ("resource.k8s.io", "ResourceClaimTemplate"),
            ObjectKind::ResourceSlice => ("resource.k8s.io", "ResourceSlice"),
            ObjectKind::RuntimeClass => ("node.k8s.io", "RuntimeClass"),
        }
    }

    /// The kind name.
    pub fn as_str(self) -> &'static str {
        self.group_kind().1
    }

    /// The kind for an API group and kind name, if it is a workload object.
    pub fn from_group_kind(group: &str, kind: &str) -> Option<ObjectKind> {
        ObjectKind::ALL
            .iter()
            .copied()
            .find(|k| k.group_kind() == (group, kind))
    }

    /// The name of Kueue's integration for the kind (`integrations.frameworks`), if any.
    pub fn kueue_framework(self) -> Option<&'static str> {
        Some(match self {
            ObjectKind::Job => "batch/job",
            ObjectKind::JobSet => "jobset.x-k8s.io/jobset",
            ObjectKind::PyTorchJob => "kubeflow.org/pytorchjob",
            ObjectKind::TFJob => "kubeflow.org/tfjob",
            ObjectKind::XGBoostJob => "kubeflow.org/xgboostjob",
            ObjectKind::PaddleJob => "kubeflow.org/paddlejob",
            ObjectKind::JAXJob => "kubeflow.org/jaxjob",
            ObjectKind::MPIJob => "kubeflow.org/mpijob",
            ObjectKind::TrainJob => "trainer.kubeflow.org/trainjob",
            ObjectKind::RayJob => "ray.io/rayjob",
            ObjectKind::RayCluster => "ray.io/raycluster",
            ObjectKind::RayService => "ray.io/rayservice",
            ObjectKind::LeaderWorkerSet => "leaderworkerset.x-k8s.io/leaderworkerset",
            ObjectKind::AppWrapper => "workload.codeflare.dev/appwrapper",
            ObjectKind::Deployment => "deployment",
            ObjectKind::StatefulSet => "statefulset",
            ObjectKind::SparkApplication => "sparkoperator.k8s.io/sparkapplication",
            ObjectKind::CronJob
            | ObjectKind::ReplicaSet
            | ObjectKind::KnativeService
            | ObjectKind::KaiConfig
            | ObjectKind::TrainingRuntime
            | ObjectKind::ClusterTrainingRuntime
            | ObjectKind::KnativeRevision
            | ObjectKind::LimitRange
            | ObjectKind::DeviceClass
            | ObjectKind::ResourceClaim
            | ObjectKind::ResourceClaimTemplate
            | ObjectKind::ResourceSlice
            | ObjectKind::RuntimeClass => {
                return None;
            }
        })
    }

    /// True for kinds that are configuration other objects refer to (runtimes, LimitRanges,
    /// KAI's Config), not workloads of their own: they never get a "not managed" warning.
    pub fn is_reference(self) -> bool {
        matches!(
            self,
            ObjectKind::KaiConfig
                | ObjectKind::TrainingRuntime
                | ObjectKind::ClusterTrainingRuntime
                | ObjectKind::LimitRange
                | ObjectKind::DeviceClass
                | ObjectKind::ResourceClaim
                | ObjectKind::ResourceClaimTemplate
                | ObjectKind::ResourceSlice
                | ObjectKind::RuntimeClass
        )
    }
}

/// A workload object as imported: kind, API version, where it came from, metadata, and the
/// rest of the document (`spec`, `status`) for the converters to read.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct WorkloadObject {
    /// The kind.
    pub kind: ObjectKind,
    /// `apiVersion` as written.
    pub api_version: String,
    /// The file and document it came from.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub origin: Option<Origin>,
    /// Metadata.
    #[cfg_attr(feature = "serde", serde(default))]
    pub metadata: ObjectMeta,
    /// `spec` (read per kind by the converters).
    #[cfg_attr(feature = "serde", serde(default))]
    pub spec: Opaque,
    /// `status`, if given.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub status: Option<Opaque>,
}

impl WorkloadObject {
    #[cfg(feature = "serde")]
    /// Builds the stored object from a document (its `apiVersion` and `kind` removed).
    pub fn from_document(
        kind: ObjectKind,
        api_version: &str,
        origin: &Origin,
        mut doc: serde_json::Map<String, Value>,
    ) -> Result<WorkloadObject, String> {
        let mut metadata: ObjectMeta = match doc.get("metadata") {
            Some(m) => serde_json::from_value(m.clone()).map_err(|e| format!("metadata: {e}"))?,
            None => ObjectMeta::default(),
        };
        if metadata.name.is_empty()
            && let Some(prefix) = metadata.other.get("generateName").and_then(|v| v.as_str())
        {
            // The API server appends 5 random characters; a hash of the document stands in
            // for them, so the name is stable and independent of document order.
            metadata.name = format!("{prefix}{}", document_suffix(&Value::Object(doc.clone())));
        }
        doc.remove("metadata");
        // A RuntimeClass has no `spec`: its fields (`handler`, `overhead`, `scheduling`)
        // stand at the top level and are kept as its spec.
        let spec = if kind == ObjectKind::RuntimeClass {
            Value::Object(std::mem::take(&mut doc))
        } else {
            doc.remove("spec").unwrap_or(Value::Null)
        };
        Ok(WorkloadObject {
            kind,
            api_version: api_version.to_owned(),
            origin: Some(origin.clone()),
            metadata,
            spec: spec.into(),
            status: doc.remove("status").map(Into::into),
        })
    }

    /// The namespace (`default` when unset).
    pub fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or("default")
    }

    /// The key in [`Model::workload_objects`](crate::Model::workload_objects):
    /// `Kind/namespace/name`.
    pub fn key(&self) -> String {
        format!(
            "{}/{}/{}",
            self.kind.as_str(),
            self.namespace(),
            self.metadata.name
        )
    }

    /// `namespace/name`.
    pub fn ns_name(&self) -> String {
        format!("{}/{}", self.namespace(), self.metadata.name)
    }
}

/// A stable 5-character suffix for an object named by `generateName`: the first 5 hex digits
/// of the SHA-1 of the document's JSON.
#[cfg(feature = "serde")]
pub(crate) fn document_suffix(doc: &Value) -> String {
    use sha1::{Digest, Sha1};
    let text = serde_json::to_string(doc).unwrap_or_default();
    let digest = Sha1::digest(text.as_bytes());
    let mut hex = String::with_capacity(6);
    for b in digest.iter().take(3) {
        hex.push_str(&format!("{b:02x}"));
    }
    hex.truncate(5);
    hex
}
