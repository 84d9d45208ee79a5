//! Kueue's job framework: workload objects → Kueue Workloads (rules in the
//! [module docs](super)).

mod frameworks;
mod pods;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::kinds::{
    JobSetSpec, JobSpec, KubeflowSpec, LeaderWorkerSetSpec, RayClusterSpec, RayJobSpec,
    ReplicaSpec, ReplicatedPodsSpec, TrainJobSpec, TrainingRuntimeSpec,
};
use super::names::{role_hash, workload_name};
use super::{ObjectKind, Warnings, WorkloadObject, capped, codes, controller_owner};
use crate::core::{Container, Pod, ResourceRequirements};
use crate::kueue::{
    PodSet, PodTemplateSpec, PriorityClassRef, Workload, WorkloadSpec, WorkloadStatus,
};
use crate::meta::{Condition, LabelSelector, LabelSelectorRequirement, ObjectMeta};
use crate::model::{Model, Origin};
use crate::quantity::Quantity;
use crate::resource::ResourceName;

/// The queue-name label (and, in older Kueue, annotation).
pub const QUEUE_LABEL: &str = "kueue.x-k8s.io/queue-name";
/// The LocalQueue an unlabelled object goes to when its namespace has one of this name
/// (kubernetes-sigs/kueue: pkg/controller/constants/constants.go, `DefaultLocalQueueName`).
pub const DEFAULT_LOCAL_QUEUE: &str = "default";
/// The annotation that keeps a Workload from admission while set; Kueue copies it from the
/// job object to its Workload (kubernetes-sigs/kueue: pkg/constants/constants.go,
/// `AdmissionGatedByAnnotation`; pkg/controller/jobframework/reconciler.go,
/// `PropagateAdmissionGatedByAnnotation`).
pub const ADMISSION_GATED_BY_ANNOTATION: &str = "kueue.x-k8s.io/admission-gated-by";
/// The annotation that makes a job elastic: Kueue admits it as a series of workload slices
/// when it scales (kubernetes-sigs/kueue: pkg/constants/constants.go,
/// `ElasticJobAnnotation`; pkg/workloadslicing/workloadslicing.go).
pub const ELASTIC_JOB_ANNOTATION: &str = "kueue.x-k8s.io/elastic-job";
/// The WorkloadPriorityClass label.
pub const PRIORITY_CLASS_LABEL: &str = "kueue.x-k8s.io/priority-class";
/// A Job's minimum parallelism for partial admission.
pub const JOB_MIN_PARALLELISM_ANNOTATION: &str = "kueue.x-k8s.io/job-min-parallelism";
/// The maximum execution time label.
pub const MAX_EXEC_TIME_LABEL: &str = "kueue.x-k8s.io/max-exec-time-seconds";
/// The label Kueue puts on a Workload naming its job's uid.
pub const JOB_UID_LABEL: &str = "kueue.x-k8s.io/job-uid";
/// The pod-group name label.
pub const POD_GROUP_NAME_LABEL: &str = "kueue.x-k8s.io/pod-group-name";
/// The pod-group size annotation.
pub const POD_GROUP_TOTAL_COUNT_ANNOTATION: &str = "kueue.x-k8s.io/pod-group-total-count";
/// A pod's precomputed role hash.
pub const ROLE_HASH_ANNOTATION: &str = "kueue.x-k8s.io/role-hash";
/// The annotation Kueue puts on a pod group's Workload.
pub const IS_GROUP_WORKLOAD_ANNOTATION: &str = "kueue.x-k8s.io/is-group-workload";

/// The label of a training runtime's replicated job naming its step (`trainer`,
/// `dataset-initializer`, `model-initializer`).
pub const TRAINJOB_ANCESTOR_LABEL: &str = "trainer.kubeflow.org/trainjob-ancestor-step";

/// Annotations of gpuquota's own (`gpuquota.dev/…`) that a converted Workload keeps.
pub const GPUQUOTA_ANNOTATION_PREFIX: &str = "gpuquota.dev/";

/// Pod template annotations of topology-aware scheduling, which are not modelled.
pub const TOPOLOGY_ANNOTATIONS: &[&str] = &[
    "kueue.x-k8s.io/podset-required-topology",
    "kueue.x-k8s.io/podset-preferred-topology",
    "kueue.x-k8s.io/podset-unconstrained-topology",
    "kueue.x-k8s.io/podset-slice-required-topology",
    "kueue.x-k8s.io/podset-slice-size",
    "kueue.x-k8s.io/podset-group-name",
];

/// The frameworks of Kueue's shipped manager configuration
/// (kubernetes-sigs/kueue: config/components/manager/controller_manager_config.yaml).
pub const INSTALLED_FRAMEWORKS: &[&str] = &[
    "batch/job",
    "kubeflow.org/mpijob",
    "ray.io/rayjob",
    "ray.io/raycluster",
    "ray.io/rayservice",
    "jobset.x-k8s.io/jobset",
    "workload.codeflare.dev/appwrapper",
    "trainer.kubeflow.org/trainjob",
    "pod",
    "deployment",
    "statefulset",
    "leaderworkerset.x-k8s.io/leaderworkerset",
];

/// The API default of `integrations.frameworks` (apis/config/v1beta2/defaults.go).
pub const DEFAULT_FRAMEWORKS: &[&str] = &["batch/job"];

/// What the Kueue Configuration says about which objects Kueue manages.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSettings {
    /// Enabled integrations (`integrations.frameworks`).
    pub frameworks: BTreeSet<String>,
    /// `manageJobsWithoutQueueName`.
    pub manage_jobs_without_queue_name: bool,
    /// `managedJobsNamespaceSelector`.
    pub managed_jobs_namespace_selector: LabelSelector,
    /// The `AdmissionGatedBy` feature gate (beta, on by default since Kueue 0.19:
    /// pkg/features/kube_features.go), off when the Configuration's `featureGates` says
    /// `AdmissionGatedBy: false`.
    pub admission_gated_by: bool,
    /// The `ElasticJobsViaWorkloadSlices` feature gate (beta, on by default since Kueue
    /// 0.18), off when the Configuration's `featureGates` turns it off.
    pub elastic_jobs: bool,
}

impl JobSettings {
    /// The settings of `model`'s Configuration, with Kueue's defaults.
    pub fn from_model(model: &Model) -> JobSettings {
        let Some(cfg) = &model.configuration else {
            return JobSettings::with_frameworks(INSTALLED_FRAMEWORKS, "kueue-system");
        };
        let namespace = cfg
            .other
            .get("namespace")
            .and_then(|v| v.as_str())
            .unwrap_or("kueue-system");
        let mut s = JobSettings::with_frameworks(DEFAULT_FRAMEWORKS, namespace);
        if let Some(list) = cfg
            .other
            .get("integrations")
            .and_then(|i| i.get("frameworks"))
            .and_then(Value::as_array)
            .filter(|l| !l.is_empty())
        {
            s.frameworks = list
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect();
        }
        s.manage_jobs_without_queue_name = cfg
            .other
            .get("manageJobsWithoutQueueName")
            .and_then(|v| v.as_bool())
            .unwrap_or(false);
        let gate_off = |name: &str| {
            cfg.other
                .get("featureGates")
                .and_then(|g| g.get(name))
                .and_then(|v| v.as_bool())
                == Some(false)
        };
        s.admission_gated_by = !gate_off("AdmissionGatedBy");
        s.elastic_jobs = !gate_off("ElasticJobsViaWorkloadSlices");
        if let Some(sel) = cfg
            .other
            .get("managedJobsNamespaceSelector")
            .and_then(|v| serde_json::from_value::<LabelSelector>(v.as_value().clone()).ok())
        {
            s.managed_jobs_namespace_selector = sel;
        }
        s
    }

    fn with_frameworks(list: &[&str], kueue_namespace: &str) -> JobSettings {
        JobSettings {
            frameworks: list.iter().map(|s| (*s).to_owned()).collect(),
            manage_jobs_without_queue_name: false,
            admission_gated_by: true,
            elastic_jobs: true,
            managed_jobs_namespace_selector: LabelSelector {
                match_labels: BTreeMap::new(),
                match_expressions: vec![LabelSelectorRequirement {
                    key: "kubernetes.io/metadata.name".into(),
                    operator: "NotIn".into(),
                    values: vec!["kube-system".into(), kueue_namespace.into()],
                }],
            },
        }
    }

    /// True when Kueue's integration for `kind` is enabled.
    pub fn enabled(&self, kind: ObjectKind) -> bool {
        kind.kueue_framework()
            .is_some_and(|f| self.frameworks.contains(f))
    }

    fn pods_enabled(&self) -> bool {
        self.frameworks.contains("pod")
    }
}

/// The conversion's result.
#[derive(Debug, Default)]
pub(crate) struct Output {
    /// Converted Workloads by `namespace/name`.
    pub workloads: BTreeMap<String, (Option<Origin>, Workload)>,
    /// Workload objects that were converted (or counted by their owner).
    pub used: BTreeSet<String>,
    /// Workload objects skipped with a warning of their own.
    pub explained: BTreeSet<String>,
}

struct Ctx<'a> {
    model: &'a Model,
    settings: JobSettings,
    warnings: &'a mut Warnings,
    out: Output,
}

/// Converts every workload object and Pod of `model` that Kueue manages.
pub(crate) fn convert(model: &Model, warnings: &mut Warnings) -> Output {
    let mut ctx = Ctx {
        model,
        settings: JobSettings::from_model(model),
        warnings,
        out: Output::default(),
    };
    for (key, obj) in &model.workload_objects {
        ctx.object(key, obj);
    }
    ctx.pods();
    ctx.out
}

/// The labels of namespace `ns` as the API server has them.
fn namespace_labels(model: &Model, ns: &str) -> BTreeMap<String, String> {
    let mut labels = model
        .namespaces
        .get(ns)
        .map(|n| n.metadata.labels.clone())
        .unwrap_or_default();
    labels.insert("kubernetes.io/metadata.name".into(), ns.to_owned());
    labels
}

fn is_finished(status: Option<&Value>) -> bool {
    status
        .and_then(|s| s.get("conditions"))
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter().any(|c| {
                let t = c.get("type").and_then(Value::as_str).unwrap_or("");
                matches!(t, "Complete" | "Completed" | "Succeeded" | "Failed")
                    && c.get("status").and_then(Value::as_str) == Some("True")
            })
        })
}

impl Ctx<'_> {
    fn warn(&mut self, obj: &WorkloadObject, code: crate::diag::Code, msg: String) {
        self.warnings.push(
            obj.origin.as_ref(),
            code,
            obj.kind.as_str(),
            &obj.ns_name(),
            msg,
        );
    }

    /// The queue name of an object Kueue manages, or `None` when Kueue leaves it alone.
    fn managed_queue(&mut self, obj: &WorkloadObject) -> Option<String> {
        let ns = obj.namespace();
        let labels = namespace_labels(self.model, ns);
        if !self
            .settings
            .managed_jobs_namespace_selector
            .matches(&labels)
        {
            return None;
        }
        let mut queue = obj.metadata.labels.get(QUEUE_LABEL).cloned();
        if queue.is_none()
            && let Some(q) = obj.metadata.annotations.get(QUEUE_LABEL).cloned()
        {
            self.warnings.field(
                obj.origin.as_ref(),
                codes::LEGACY,
                obj.kind.as_str(),
                &obj.ns_name(),
                &format!("metadata.annotations[{QUEUE_LABEL}]"),
                "the queue name as an annotation is Kueue's legacy form (current Kueue reads \
                 only the label); read as the label"
                    .into(),
            );
            queue = Some(q);
        }
        match queue.filter(|q| !q.is_empty()) {
            Some(q) => Some(q),
            None => self.unlabelled_queue(ns),
        }
    }

    /// The queue of an object without a queue name in managed namespace `ns`: the
    /// namespace's LocalQueue named `default` if it has one (Kueue's local queue
    /// defaulting, GA and no longer switchable:
    /// `pkg/controller/jobframework/defaults.go`, `ApplyDefaultLocalQueue`), else the
    /// empty queue under `manageJobsWithoutQueueName`, else none.
    fn unlabelled_queue(&self, ns: &str) -> Option<String> {
        if self
            .model
            .local_queues
            .contains_key(&format!("{ns}/{DEFAULT_LOCAL_QUEUE}"))
        {
            Some(DEFAULT_LOCAL_QUEUE.to_owned())
        } else if self.settings.manage_jobs_without_queue_name {
            Some(String::new())
        } else {
            None
        }
    }

    fn object(&mut self, key: &str, obj: &WorkloadObject) {
        if !self.settings.enabled(obj.kind) {
            if obj.kind.kueue_framework().is_some() && obj.metadata.labels.contains_key(QUEUE_LABEL)
            {
                let fw = obj.kind.kueue_framework().unwrap_or_default();
                self.warn(
                    obj,
                    codes::NOT_MANAGED,
                    format!(
                        "has a queue name, but Kueue's integration {fw:?} is not in \
                         integrations.frameworks; Kueue does not manage it"
                    ),
                );
                self.out.explained.insert(key.to_owned());
            }
            return;
        }
        // A child of a managed object is counted by its owner's Workload.
        if let Some((group, kind, name)) = controller_owner(&obj.metadata)
            && let Some(owner_kind) = ObjectKind::from_group_kind(&group, &kind)
            && self.settings.enabled(owner_kind)
        {
            let owner_key = format!("{kind}/{}/{name}", obj.namespace());
            if self.model.workload_objects.contains_key(&owner_key) {
                self.out.used.insert(key.to_owned());
            } else {
                self.warn(
                    obj,
                    codes::MISSING_REFERENCE,
                    format!(
                        "its owner {kind} {name:?} is not in the files; Kueue counts this \
                         object in its owner's Workload, so it is not converted"
                    ),
                );
                self.out.explained.insert(key.to_owned());
            }
            return;
        }
        let Some(queue) = self.managed_queue(obj) else {
            return;
        };
        if self.settings.elastic_jobs
            && obj
                .metadata
                .annotations
                .get(ELASTIC_JOB_ANNOTATION)
                .is_some_and(|v| v == "true")
        {
            self.warnings.field(
                obj.origin.as_ref(),
                codes::NOT_MODELLED,
                obj.kind.as_str(),
                &obj.ns_name(),
                &format!("metadata.annotations[{ELASTIC_JOB_ANNOTATION}]"),
                "an elastic job: converted at its current size; the workload slices Kueue \
                 admits when it scales up or down are not modelled"
                    .into(),
            );
        }
        let result = match obj.kind {
            ObjectKind::Job => self.job(obj, &queue),
            ObjectKind::JobSet => self.jobset(obj, &queue),
            ObjectKind::PyTorchJob
            | ObjectKind::TFJob
            | ObjectKind::XGBoostJob
            | ObjectKind::PaddleJob
            | ObjectKind::JAXJob
            | ObjectKind::MPIJob => self.kubeflow(obj, &queue),
            ObjectKind::RayCluster => self.raycluster(obj, &queue),
            ObjectKind::RayJob => self.rayjob(obj, &queue),
            ObjectKind::LeaderWorkerSet => self.lws(obj, &queue),
            ObjectKind::StatefulSet => self.statefulset(obj, &queue),
            ObjectKind::Deployment => self.deployment(obj, &queue),
            ObjectKind::AppWrapper => self.appwrapper(obj, &queue),
            ObjectKind::TrainJob => self.trainjob(obj, &queue),
            ObjectKind::RayService => self.rayservice(obj, &queue),
            ObjectKind::SparkApplication => Err(NotConverted::not_modelled(
                "Kueue manages this kind, but its Workload is not modelled (not read yet); not \
                 converted",
            )),
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
                return;
            }
        };
        match result {
            Ok(()) => {
                self.out.used.insert(key.to_owned());
            }
            Err(NotConverted { code, message }) => {
                self.warn(obj, code, message);
                self.out.explained.insert(key.to_owned());
            }
        }
    }

    /// Priority as `ExtractPriority` resolves it.
    fn priority(
        &mut self,
        obj_labels: &BTreeMap<String, String>,
        custom: Option<&str>,
        pod_sets: &[PodSet],
        origin: Option<&Origin>,
        kind: &str,
        name: &str,
    ) -> (Option<PriorityClassRef>, Option<i32>) {
        if let Some(wpc) = obj_labels
            .get(PRIORITY_CLASS_LABEL)
            .filter(|s| !s.is_empty())
        {
            let r = PriorityClassRef {
                group: "kueue.x-k8s.io".into(),
                kind: "WorkloadPriorityClass".into(),
                name: wpc.clone(),
            };
            return match self.model.workload_priority_classes.get(wpc) {
                Some(c) => (Some(r), Some(c.value)),
                None => {
                    self.warnings.push(
                        origin,
                        codes::MISSING_REFERENCE,
                        kind,
                        name,
                        format!(
                            "WorkloadPriorityClass {wpc:?} is not in the files; Kueue creates \
                             no Workload until it exists, so none is converted"
                        ),
                    );
                    (Some(r), None)
                }
            };
        }
        let class = match custom {
            Some(c) => c.to_owned(),
            None => pod_sets
                .iter()
                .find_map(|p| {
                    p.template
                        .spec
                        .priority_class_name
                        .clone()
                        .filter(|s| !s.is_empty())
                })
                .unwrap_or_default(),
        };
        if class.is_empty() {
            let default = self
                .model
                .priority_classes
                .values()
                .filter(|c| c.global_default)
                .min_by(|a, b| (a.value, &a.metadata.name).cmp(&(b.value, &b.metadata.name)));
            return match default {
                Some(c) => (Some(pod_priority_ref(&c.metadata.name)), Some(c.value)),
                None => (None, Some(0)),
            };
        }
        match self.model.priority_classes.get(&class) {
            Some(c) => (Some(pod_priority_ref(&class)), Some(c.value)),
            None => {
                self.warnings.push(
                    origin,
                    codes::MISSING_REFERENCE,
                    kind,
                    name,
                    format!(
                        "PriorityClass {class:?} is not in the files; Kueue creates no \
                         Workload until it exists, so none is converted"
                    ),
                );
                (Some(pod_priority_ref(&class)), None)
            }
        }
    }

    /// Builds and records the Workload of `obj`.
    #[allow(clippy::too_many_arguments)]
    fn emit(
        &mut self,
        obj: &WorkloadObject,
        wl_name: String,
        queue: &str,
        pod_sets: Vec<PodSet>,
        custom_priority: Option<&str>,
        finished: bool,
        extra_annotations: &[(&str, &str)],
    ) {
        self.emit_meta(
            &obj.metadata,
            obj.namespace(),
            obj.origin.as_ref(),
            obj.kind.as_str(),
            wl_name,
            queue,
            pod_sets,
            custom_priority,
            finished,
            extra_annotations,
        );
    }

    #[allow(clippy::too_many_arguments)]
    fn emit_meta(
        &mut self,
        meta: &ObjectMeta,
        ns: &str,
        origin: Option<&Origin>,
        kind: &str,
        wl_name: String,
        queue: &str,
        pod_sets: Vec<PodSet>,
        custom_priority: Option<&str>,
        finished: bool,
        extra_annotations: &[(&str, &str)],
    ) {
        let obj_name = format!("{ns}/{}", meta.name);
        for (i, ps) in pod_sets.iter().enumerate() {
            if let Some(m) = &ps.template.metadata {
                for a in TOPOLOGY_ANNOTATIONS {
                    if m.annotations.contains_key(*a) {
                        self.warnings.field(
                            origin,
                            codes::NOT_MODELLED,
                            kind,
                            &obj_name,
                            &format!("podSets[{i}].template.metadata.annotations[{a}]"),
                            "topology-aware scheduling is not modelled; the PodSet is \
                             admitted without its topology request"
                                .into(),
                        );
                    }
                }
            }
        }
        let (priority_class_ref, priority) = self.priority(
            &meta.labels,
            custom_priority,
            &pod_sets,
            origin,
            kind,
            &obj_name,
        );
        // A priority class that does not exist fails `ExtractPriority`, and the job
        // reconciler creates no Workload (pkg/controller/jobframework/reconciler.go).
        if priority.is_none() {
            return;
        }
        let mut labels = BTreeMap::new();
        if let Some(uid) = meta.uid.as_deref().filter(|u| is_label_value(u)) {
            labels.insert(JOB_UID_LABEL.to_owned(), uid.to_owned());
        }
        // Kueue copies none of the job's annotations (but provisioning-request ones); ours
        // (`gpuquota.dev/runtime`, `gpuquota.dev/repeat`, read by the simulator) are kept.
        let mut annotations: BTreeMap<String, String> = meta
            .annotations
            .iter()
            .filter(|(k, _)| k.starts_with(GPUQUOTA_ANNOTATION_PREFIX))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if let Some(gate) = meta
            .annotations
            .get(ADMISSION_GATED_BY_ANNOTATION)
            .filter(|g| !g.is_empty() && self.settings.admission_gated_by)
        {
            annotations.insert(ADMISSION_GATED_BY_ANNOTATION.to_owned(), gate.clone());
        }
        annotations.extend(
            extra_annotations
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        let max_exec = meta
            .labels
            .get(MAX_EXEC_TIME_LABEL)
            .and_then(|v| v.parse::<i32>().ok())
            .filter(|v| *v > 0);
        let status = finished.then(|| WorkloadStatus {
            conditions: vec![Condition {
                type_: "Finished".into(),
                status: "True".into(),
                reason: Some("Succeeded".into()),
                ..Condition::default()
            }],
            ..WorkloadStatus::default()
        });
        let wl = Workload {
            metadata: ObjectMeta {
                name: wl_name,
                namespace: Some(ns.to_owned()),
                labels,
                annotations,
                creation_timestamp: meta.creation_timestamp,
                ..ObjectMeta::default()
            },
            spec: WorkloadSpec {
                pod_sets,
                queue_name: Some(queue.to_owned()).filter(|q| !q.is_empty()),
                priority_class_ref,
                priority,
                maximum_execution_time_seconds: max_exec,
                ..WorkloadSpec::default()
            },
            status: status.map(Box::new),
        };
        self.out.workloads.insert(wl.key(), (origin.cloned(), wl));
    }

    fn name_for(&self, obj: &WorkloadObject) -> String {
        let (group, kind) = obj.kind.group_kind();
        workload_name(
            kind,
            group,
            &obj.metadata.name,
            obj.metadata.uid.as_deref().unwrap_or(""),
        )
    }

    fn warn_running(&mut self, obj: &WorkloadObject, suspended: bool) {
        let active = obj
            .status
            .as_ref()
            .and_then(|s| s.get("active").or_else(|| s.get("startTime")))
            .is_some_and(|v| !v.is_null() && v.as_i64() != Some(0));
        if !suspended && active {
            self.warn(
                obj,
                codes::NOT_MODELLED,
                "is running (not suspended), so Kueue has admitted it, but the admission \
                 (ClusterQueue, flavors) is not in the object; converted as pending"
                    .into(),
            );
        }
    }
}

fn pod_priority_ref(name: &str) -> PriorityClassRef {
    PriorityClassRef {
        group: "scheduling.k8s.io".into(),
        kind: "PriorityClass".into(),
        name: name.to_owned(),
    }
}

/// The replica-spec field and the replica types Kueue reads, in its order.
fn kubeflow_replicas(kind: ObjectKind) -> (&'static str, &'static [&'static str]) {
    match kind {
        ObjectKind::PyTorchJob => ("pytorchReplicaSpecs", &["Master", "Worker"]),
        ObjectKind::TFJob => (
            "tfReplicaSpecs",
            &["Chief", "Master", "PS", "Worker", "Evaluator"],
        ),
        ObjectKind::XGBoostJob => ("xgbReplicaSpecs", &["Master", "Worker"]),
        ObjectKind::PaddleJob => ("paddleReplicaSpecs", &["Master", "Worker"]),
        ObjectKind::JAXJob => ("jaxReplicaSpecs", &["Worker"]),
        _ => ("mpiReplicaSpecs", &["Launcher", "Worker"]),
    }
}

/// Removes the labels the Job controller manages, except `batch.kubernetes.io/job-name`
/// (kubernetes-sigs/kueue: pkg/controller/jobs/job/job_controller.go, `cleanLabels`).
fn clean_job_labels(t: &mut PodTemplateSpec) {
    if let Some(m) = &mut t.metadata {
        for l in [
            "job-name",
            "controller-uid",
            "batch.kubernetes.io/controller-uid",
        ] {
            m.labels.remove(l);
        }
    }
}

/// True when `s` is a valid label value (63 characters of `[A-Za-z0-9._-]`, alphanumeric at
/// both ends).
fn is_label_value(s: &str) -> bool {
    s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && s.bytes().next().is_none_or(|b| b.is_ascii_alphanumeric())
        && s.bytes().last().is_none_or(|b| b.is_ascii_alphanumeric())
}

fn requirements(requests: &[(&str, &str)], limits: &[(&str, &str)]) -> ResourceRequirements {
    let list = |pairs: &[(&str, &str)]| {
        pairs
            .iter()
            .filter_map(|(k, v)| Some((ResourceName::new(*k), v.parse::<Quantity>().ok()?)))
            .collect()
    };
    ResourceRequirements {
        requests: list(requests),
        limits: list(limits),
        claims: None,
    }
}

/// Why an object is not converted into a Workload, with the code of its warning: chosen
/// where the reason is found (a spec that does not parse or that Kueue refuses is an
/// invalid object, a reference to an object not in the files a missing reference, anything
/// else a shape that is not modelled), never read back from the message.
pub(super) struct NotConverted {
    code: crate::diag::Code,
    message: String,
}

impl NotConverted {
    /// The object's spec is malformed or refused ([`codes::INVALID_OBJECT`]).
    pub(super) fn invalid(message: impl Into<String>) -> NotConverted {
        NotConverted {
            code: codes::INVALID_OBJECT,
            message: message.into(),
        }
    }

    /// The object names another that is not in the files ([`codes::MISSING_REFERENCE`]).
    pub(super) fn missing(message: impl Into<String>) -> NotConverted {
        NotConverted {
            code: codes::MISSING_REFERENCE,
            message: message.into(),
        }
    }

    /// A shape the conversion does not model ([`codes::NOT_MODELLED`]).
    pub(super) fn not_modelled(message: impl Into<String>) -> NotConverted {
        NotConverted {
            code: codes::NOT_MODELLED,
            message: message.into(),
        }
    }
}
