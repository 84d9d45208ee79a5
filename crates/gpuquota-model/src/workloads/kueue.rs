//! Kueue's job framework: workload objects → Kueue Workloads (rules in the
//! [module docs](super)).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::kinds::{
    JobSetSpec, JobSpec, KubeflowSpec, LeaderWorkerSetSpec, RayClusterSpec, RayJobSpec,
    ReplicaSpec, ReplicatedPodsSpec, TrainJobSpec, TrainingRuntimeSpec,
};
use super::names::{role_hash, workload_name};
use super::{ObjectKind, Warnings, WorkloadObject, capped, codes, controller_owner};
use crate::core::{Container, Pod, ResourceRequirements};
use crate::import::{Model, Origin};
use crate::kueue::{
    PodSet, PodTemplateSpec, PriorityClassRef, Workload, WorkloadSpec, WorkloadStatus,
};
use crate::meta::{Condition, LabelSelector, LabelSelectorRequirement, ObjectMeta};
use crate::quantity::Quantity;
use crate::resource::ResourceName;

/// The queue-name label (and, in older Kueue, annotation).
pub const QUEUE_LABEL: &str = "kueue.x-k8s.io/queue-name";
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
            .and_then(Value::as_str)
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
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if let Some(sel) = cfg
            .other
            .get("managedJobsNamespaceSelector")
            .and_then(|v| serde_json::from_value::<LabelSelector>(v.clone()).ok())
        {
            s.managed_jobs_namespace_selector = sel;
        }
        s
    }

    fn with_frameworks(list: &[&str], kueue_namespace: &str) -> JobSettings {
        JobSettings {
            frameworks: list.iter().map(|s| (*s).to_owned()).collect(),
            manage_jobs_without_queue_name: false,
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
            None if self.settings.manage_jobs_without_queue_name => Some(String::new()),
            None => None,
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
            ObjectKind::RayService | ObjectKind::SparkApplication => Err(
                "Kueue manages this kind, but its Workload is not modelled (not read yet); not \
                 converted"
                    .to_owned(),
            ),
            ObjectKind::CronJob
            | ObjectKind::ReplicaSet
            | ObjectKind::KnativeService
            | ObjectKind::KaiConfig
            | ObjectKind::TrainingRuntime
            | ObjectKind::ClusterTrainingRuntime
            | ObjectKind::KnativeRevision
            | ObjectKind::LimitRange => {
                return;
            }
        };
        match result {
            Ok(()) => {
                self.out.used.insert(key.to_owned());
            }
            Err(msg) => {
                let code = if msg.starts_with("spec") {
                    codes::INVALID_OBJECT
                } else if msg.contains("is not in the files") {
                    codes::MISSING_REFERENCE
                } else {
                    codes::NOT_MODELLED
                };
                self.warn(obj, code, msg);
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
                            "WorkloadPriorityClass {wpc:?} is not in the files; the Workload \
                             has no priority value"
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
                        "PriorityClass {class:?} is not in the files; the Workload has no \
                         priority value"
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
            status,
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

    fn job(&mut self, obj: &WorkloadObject, queue: &str) -> Result<(), String> {
        let spec: JobSpec = obj.spec_as()?;
        let min_count = obj
            .metadata
            .annotations
            .get(JOB_MIN_PARALLELISM_ANNOTATION)
            .and_then(|v| v.parse::<i32>().ok());
        let mut template = spec.template.clone();
        clean_job_labels(&mut template);
        let ps = PodSet {
            name: "main".into(),
            template,
            count: spec.pods_count(),
            min_count,
            topology_request: None,
        };
        self.warn_running(obj, spec.suspend == Some(true));
        let name = self.name_for(obj);
        let finished = is_finished(obj.status.as_ref());
        self.emit(obj, name, queue, vec![ps], None, finished, &[]);
        Ok(())
    }

    fn jobset(&mut self, obj: &WorkloadObject, queue: &str) -> Result<(), String> {
        let spec: JobSetSpec = obj.spec_as()?;
        let pod_sets = spec
            .replicated_jobs
            .iter()
            .map(|rj| PodSet {
                name: rj.name.to_lowercase(),
                template: rj.template.spec.template.clone(),
                count: rj
                    .replicas
                    .unwrap_or(1)
                    .saturating_mul(rj.template.spec.pods_count()),
                min_count: None,
                topology_request: None,
            })
            .collect();
        let name = self.name_for(obj);
        let finished = is_finished(obj.status.as_ref());
        self.emit(obj, name, queue, pod_sets, None, finished, &[]);
        Ok(())
    }

    fn kubeflow(&mut self, obj: &WorkloadObject, queue: &str) -> Result<(), String> {
        let spec: KubeflowSpec = obj.spec_as()?;
        let (field, order) = kubeflow_replicas(obj.kind);
        let specs: BTreeMap<String, ReplicaSpec> = match spec.other.get(field) {
            None | Some(Value::Null) => BTreeMap::new(),
            Some(v) => serde_path_to_error::deserialize(v)
                .map_err(|e| format!("spec.{field}.{}: {}", e.path(), e.inner()))?,
        };
        for t in specs.keys() {
            if !order.contains(&t.as_str()) {
                self.warn(
                    obj,
                    codes::NOT_MODELLED,
                    format!(
                        "replica type {t:?} in spec.{field} is not one Kueue reads for {} ({}); \
                         ignored",
                        obj.kind.as_str(),
                        order.join(", ")
                    ),
                );
            }
        }
        let mut pod_sets = Vec::new();
        for t in order {
            if let Some(rs) = specs.get(*t) {
                pod_sets.push(PodSet {
                    name: t.to_lowercase(),
                    template: rs.template.clone(),
                    count: rs.replicas.unwrap_or(1),
                    min_count: None,
                    topology_request: None,
                });
            }
        }
        let run_policy = spec.run_policy.unwrap_or_default();
        let custom = run_policy
            .scheduling_policy
            .as_ref()
            .and_then(|p| p.priority_class.clone())
            .filter(|s| !s.is_empty());
        // Kubeflow jobs and MPIJobs name their own priority class first; otherwise the first
        // replica template's, in the kind's order (MPIJob: launcher, then worker).
        let custom = custom.or_else(|| {
            pod_sets.iter().find_map(|p| {
                p.template
                    .spec
                    .priority_class_name
                    .clone()
                    .filter(|s| !s.is_empty())
            })
        });
        let name = self.name_for(obj);
        let finished = is_finished(obj.status.as_ref());
        self.emit(
            obj,
            name,
            queue,
            pod_sets,
            Some(custom.as_deref().unwrap_or("")),
            finished,
            &[],
        );
        Ok(())
    }

    fn ray_pod_sets(&mut self, obj: &WorkloadObject, spec: &RayClusterSpec) -> Vec<PodSet> {
        let mut head = PodSet {
            name: "head".into(),
            template: spec.head_group_spec.template.clone(),
            count: 1,
            min_count: None,
            topology_request: None,
        };
        if obj
            .metadata
            .annotations
            .get("ray.io/ft-enabled")
            .is_some_and(|v| v == "true")
            || spec.other.contains_key("gcsFaultToleranceOptions")
        {
            self.warn(
                obj,
                codes::NOT_MODELLED,
                "GCS fault tolerance: the Redis clean-up resources Kueue adds to the head \
                 PodSet are not modelled"
                    .into(),
            );
        }
        if spec.enable_in_tree_autoscaling == Some(true) {
            let resources = spec
                .autoscaler_options
                .as_ref()
                .and_then(|o| o.resources.clone())
                .unwrap_or_else(|| {
                    requirements(
                        &[("cpu", "500m"), ("memory", "512Mi")],
                        &[("cpu", "500m"), ("memory", "512Mi")],
                    )
                });
            head.template.spec.containers.push(Container {
                name: "autoscaler".into(),
                resources,
                ..Container::default()
            });
        }
        let mut out = vec![head];
        for wg in &spec.worker_group_specs {
            let hosts = wg.num_of_hosts.unwrap_or(1);
            let mut count = wg.replicas.unwrap_or(1);
            if hosts > 1 {
                count = count.saturating_mul(hosts);
            }
            out.push(PodSet {
                name: wg.group_name.to_lowercase(),
                template: wg.template.clone(),
                count,
                min_count: None,
                topology_request: None,
            });
        }
        out
    }

    fn raycluster(&mut self, obj: &WorkloadObject, queue: &str) -> Result<(), String> {
        let spec: RayClusterSpec = obj.spec_as()?;
        let pod_sets = self.ray_pod_sets(obj, &spec);
        let name = self.name_for(obj);
        self.emit(obj, name, queue, pod_sets, None, false, &[]);
        Ok(())
    }

    fn rayjob(&mut self, obj: &WorkloadObject, queue: &str) -> Result<(), String> {
        let spec: RayJobSpec = obj.spec_as()?;
        if spec
            .cluster_selector
            .as_ref()
            .is_some_and(|s| !s.is_empty())
        {
            return Err(
                "runs on an existing RayCluster (spec.clusterSelector) and has no \
                        Workload of its own; not converted"
                    .into(),
            );
        }
        let cluster = spec.ray_cluster_spec.clone().unwrap_or_default();
        let mut pod_sets = self.ray_pod_sets(obj, &cluster);
        let submitter_resources = || {
            requirements(
                &[("cpu", "500m"), ("memory", "200Mi")],
                &[("cpu", "1"), ("memory", "1Gi")],
            )
        };
        match spec.submission_mode.as_deref().unwrap_or("K8sJobMode") {
            "K8sJobMode" => {
                let template = spec.submitter_pod_template.clone().unwrap_or_else(|| {
                    let mut other = BTreeMap::new();
                    if let Some(img) = cluster
                        .head_group_spec
                        .template
                        .spec
                        .containers
                        .first()
                        .and_then(|c| c.other.get("image"))
                    {
                        other.insert("image".to_owned(), img.clone());
                    }
                    let mut t = PodTemplateSpec::default();
                    t.spec.containers.push(Container {
                        name: "ray-job-submitter".into(),
                        resources: submitter_resources(),
                        other,
                        ..Container::default()
                    });
                    t.spec
                        .other
                        .insert("restartPolicy".into(), Value::String("Never".into()));
                    t
                });
                pod_sets.push(PodSet {
                    name: "submitter".into(),
                    template,
                    count: 1,
                    min_count: None,
                    topology_request: None,
                });
            }
            "SidecarMode" => {
                if let Some(head) = pod_sets.first_mut() {
                    head.template.spec.containers.push(Container {
                        name: "ray-job-submitter".into(),
                        resources: submitter_resources(),
                        ..Container::default()
                    });
                }
            }
            _ => {}
        }
        let name = self.name_for(obj);
        let finished = obj
            .status
            .as_ref()
            .and_then(|s| s.get("jobDeploymentStatus"))
            .and_then(Value::as_str)
            .is_some_and(|s| matches!(s, "Complete" | "Failed"));
        self.emit(obj, name, queue, pod_sets, None, finished, &[]);
        Ok(())
    }

    fn lws(&mut self, obj: &WorkloadObject, queue: &str) -> Result<(), String> {
        let spec: LeaderWorkerSetSpec = obj.spec_as()?;
        let t = &spec.leader_worker_template;
        let size = t.size.unwrap_or(1);
        let mut pod_sets = Vec::new();
        let (worker_name, worker_count) = match &t.leader_template {
            Some(leader) => {
                pod_sets.push(PodSet {
                    name: "leader".into(),
                    template: leader.clone(),
                    count: 1,
                    min_count: None,
                    topology_request: None,
                });
                ("worker", size.saturating_sub(1))
            }
            None => ("main", size),
        };
        pod_sets.push(PodSet {
            name: worker_name.into(),
            template: t.worker_template.clone(),
            count: worker_count,
            min_count: None,
            topology_request: None,
        });
        let uid = obj.metadata.uid.as_deref().unwrap_or("");
        for i in 0..capped(spec.replicas.unwrap_or(1), "spec.replicas")? {
            let name = workload_name(
                "LeaderWorkerSet",
                "leaderworkerset.x-k8s.io",
                &format!("{}-{i}", obj.metadata.name),
                uid,
            );
            self.emit(obj, name, queue, pod_sets.clone(), None, false, &[]);
        }
        Ok(())
    }

    fn statefulset(&mut self, obj: &WorkloadObject, queue: &str) -> Result<(), String> {
        let spec: ReplicatedPodsSpec = obj.spec_as()?;
        let replicas = spec.replicas.unwrap_or(1);
        if replicas <= 0 {
            return Ok(());
        }
        let priority = self.pod_priority(&spec.template.spec);
        let role = match role_hash(&spec.template.spec, priority) {
            Some(r) => r,
            None => {
                self.warn(
                    obj,
                    codes::NOT_MODELLED,
                    "the pod template sets a field whose role hash is not reproduced \
                     (affinity, topology spread, resource claims or pod-level resources); \
                     the PodSet is named \"main\""
                        .into(),
                );
                "main".into()
            }
        };
        let template = PodTemplateSpec {
            metadata: None,
            spec: spec.template.spec.clone(),
        };
        let ps = PodSet {
            name: role,
            template,
            count: replicas,
            min_count: None,
            topology_request: None,
        };
        let name = self.name_for(obj);
        self.emit(
            obj,
            name,
            queue,
            vec![ps],
            None,
            false,
            &[(IS_GROUP_WORKLOAD_ANNOTATION, "true")],
        );
        Ok(())
    }

    fn deployment(&mut self, obj: &WorkloadObject, queue: &str) -> Result<(), String> {
        let spec: ReplicatedPodsSpec = obj.spec_as()?;
        for i in 0..capped(spec.replicas.unwrap_or(1), "spec.replicas")? {
            let pod_name = format!("{}-{i}", obj.metadata.name);
            let ps = PodSet {
                name: "main".into(),
                template: PodTemplateSpec {
                    metadata: None,
                    spec: spec.template.spec.clone(),
                },
                count: 1,
                min_count: None,
                topology_request: None,
            };
            let name = workload_name("Pod", "", &pod_name, "");
            self.emit(obj, name, queue, vec![ps], None, false, &[]);
        }
        Ok(())
    }

    /// An AppWrapper: one PodSet `<name>-<i>` per pod set of its components, in order
    /// (kubernetes-sigs/kueue: pkg/controller/jobs/appwrapper/appwrapper_controller.go,
    /// `PodSets`).
    fn appwrapper(&mut self, obj: &WorkloadObject, queue: &str) -> Result<(), String> {
        let (sets, warnings) = super::appwrapper::pod_sets(&obj.spec)?;
        for w in warnings {
            self.warn(obj, codes::NOT_MODELLED, w);
        }
        let pod_sets = sets
            .into_iter()
            .enumerate()
            .map(|(i, s)| PodSet {
                name: format!("{}-{i}", obj.metadata.name),
                template: s.template,
                count: s.count,
                min_count: None,
                topology_request: None,
            })
            .collect();
        let phase = obj
            .status
            .as_ref()
            .and_then(|s| s.get("phase"))
            .and_then(Value::as_str);
        let deployed = obj
            .status
            .as_ref()
            .and_then(|s| s.get("conditions"))
            .and_then(Value::as_array)
            .is_some_and(|cs| {
                cs.iter().any(|c| {
                    c.get("type").and_then(Value::as_str) == Some("ResourcesDeployed")
                        && c.get("status").and_then(Value::as_str) == Some("True")
                })
            });
        let finished = phase == Some("Succeeded") || (phase == Some("Failed") && !deployed);
        let name = self.name_for(obj);
        self.emit(obj, name, queue, pod_sets, None, finished, &[]);
        Ok(())
    }

    /// A TrainJob: the PodSets of the JobSet its runtime's template makes, with the trainer
    /// job's pod count set to the node count (kubernetes-sigs/kueue:
    /// pkg/controller/jobs/trainjob/trainjob_controller.go, `PodSets`; kubeflow/trainer:
    /// pkg/runtime/framework/plugins/jobset/builder.go, `Initializer`, `Trainer`).
    fn trainjob(&mut self, obj: &WorkloadObject, queue: &str) -> Result<(), String> {
        let spec: TrainJobSpec = obj.spec_as()?;
        let Some(rref) = spec.runtime_ref.as_ref().filter(|r| !r.name.is_empty()) else {
            return Err(
                "spec.runtimeRef names no TrainingRuntime or ClusterTrainingRuntime, so the \
                 PodSets are unknown; not converted"
                    .to_owned(),
            );
        };
        let kind = rref.kind();
        let key = match kind {
            "TrainingRuntime" => format!("TrainingRuntime/{}/{}", obj.namespace(), rref.name),
            "ClusterTrainingRuntime" => format!("ClusterTrainingRuntime/default/{}", rref.name),
            other => {
                return Err(format!(
                    "spec.runtimeRef.kind {other:?} is neither TrainingRuntime nor \
                     ClusterTrainingRuntime; not converted"
                ));
            }
        };
        let Some(runtime) = self.model.workload_objects.get(&key) else {
            return Err(format!(
                "its {kind} {:?} (spec.runtimeRef) is not in the files; Kueue builds the PodSets \
                 from it, so the TrainJob is not converted",
                rref.name
            ));
        };
        let rt: TrainingRuntimeSpec = runtime
            .spec_as()
            .map_err(|e| format!("{kind} {:?}: {e}; not converted", rref.name))?;
        let ml = rt.ml_policy.clone().unwrap_or_default();
        if ml
            .other
            .get("mpi")
            .and_then(|m| m.get("runLauncherAsNode"))
            .and_then(Value::as_bool)
            == Some(true)
        {
            self.warn(
                obj,
                codes::NOT_MODELLED,
                "the runtime's mlPolicy.mpi.runLauncherAsNode counts the launcher as a node; \
                 not modelled, the trainer job keeps all the nodes"
                    .into(),
            );
        }
        for k in ["runtimePatches", "podTemplateOverrides", "podSpecOverrides"] {
            if spec.other.get(k).is_some_and(|v| !v.is_null()) {
                self.warn(
                    obj,
                    codes::NOT_MODELLED,
                    format!(
                        "spec.{k} (node selectors, tolerations, …) is not applied to the \
                         PodSets; their requests are the runtime's"
                    ),
                );
            }
        }
        let trainer = spec.trainer.clone().unwrap_or_default();
        let mut pod_sets = Vec::new();
        for rj in &rt.template.spec.replicated_jobs {
            let ancestor = rj
                .template
                .metadata
                .as_ref()
                .and_then(|m| m.labels.get(TRAINJOB_ANCESTOR_LABEL))
                .map(String::as_str);
            let mut template = rj.template.spec.template.clone();
            // `resourcesPerNode` replaces the resources of every container named `node`.
            if let Some(r) = trainer
                .resources_per_node
                .as_ref()
                .filter(|r| !r.requests.is_empty() || !r.limits.is_empty())
            {
                for c in &mut template.spec.containers {
                    if c.name == "node" {
                        c.resources = r.clone();
                    }
                }
            }
            let count = match ancestor {
                Some("trainer") => trainer
                    .num_nodes
                    .or(ml.num_nodes)
                    .unwrap_or_else(|| rj.template.spec.pods_count()),
                Some("dataset-initializer" | "model-initializer") => rj.template.spec.pods_count(),
                _ => rj
                    .replicas
                    .unwrap_or(1)
                    .saturating_mul(rj.template.spec.pods_count()),
            };
            pod_sets.push(PodSet {
                name: rj.name.to_lowercase(),
                template,
                count,
                min_count: None,
                topology_request: None,
            });
        }
        self.warn_running(obj, spec.suspend == Some(true));
        let name = self.name_for(obj);
        let finished = is_finished(obj.status.as_ref());
        self.emit(obj, name, queue, pod_sets, None, finished, &[]);
        Ok(())
    }

    /// The priority the API server's admission gives a pod of this spec.
    fn pod_priority(&self, spec: &crate::core::PodSpec) -> Option<i32> {
        if let Some(p) = spec.priority {
            return Some(p);
        }
        match spec
            .priority_class_name
            .as_deref()
            .filter(|s| !s.is_empty())
        {
            Some(c) => self.model.priority_classes.get(c).map(|c| c.value),
            None => Some(
                self.model
                    .priority_classes
                    .values()
                    .filter(|c| c.global_default)
                    .map(|c| c.value)
                    .min()
                    .unwrap_or(0),
            ),
        }
    }

    /// Plain Pods and pod groups (the `pod` integration).
    fn pods(&mut self) {
        if !self.settings.pods_enabled() {
            return;
        }
        let model = self.model;
        let mut groups: BTreeMap<(String, String), Vec<(&String, &Pod)>> = BTreeMap::new();
        for (key, pod) in &model.pods {
            let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
            if let Some((group, kind, _)) = controller_owner(&pod.metadata)
                && ObjectKind::from_group_kind(&group, &kind).is_some_and(|k| {
                    self.settings.enabled(k)
                        && !matches!(k, ObjectKind::Deployment | ObjectKind::StatefulSet)
                })
            {
                continue;
            }
            // Pods of a Deployment (through its ReplicaSet) or StatefulSet given in the files
            // are counted by the Deployment or StatefulSet conversion.
            if let Some((_, kind, owner)) = controller_owner(&pod.metadata)
                && ((kind == "StatefulSet"
                    && model
                        .workload_objects
                        .contains_key(&format!("StatefulSet/{ns}/{owner}")))
                    || (kind == "ReplicaSet"
                        && owner.rsplit_once('-').is_some_and(|(d, _)| {
                            model
                                .workload_objects
                                .contains_key(&format!("Deployment/{ns}/{d}"))
                        })))
            {
                continue;
            }
            let labels = namespace_labels(model, ns);
            if !self
                .settings
                .managed_jobs_namespace_selector
                .matches(&labels)
            {
                continue;
            }
            let queue = match pod
                .metadata
                .labels
                .get(QUEUE_LABEL)
                .filter(|q| !q.is_empty())
            {
                Some(q) => q.clone(),
                None if self.settings.manage_jobs_without_queue_name => String::new(),
                None => continue,
            };
            if let Some(g) = pod.metadata.labels.get(POD_GROUP_NAME_LABEL) {
                groups
                    .entry((ns.to_owned(), g.clone()))
                    .or_default()
                    .push((key, pod));
                continue;
            }
            let finished = pod
                .status
                .as_ref()
                .and_then(|s| s.phase.as_deref())
                .is_some_and(|p| matches!(p, "Succeeded" | "Failed"));
            let ps = PodSet {
                name: "main".into(),
                template: PodTemplateSpec {
                    metadata: None,
                    spec: pod.spec.clone(),
                },
                count: 1,
                min_count: None,
                topology_request: None,
            };
            let name = workload_name(
                "Pod",
                "",
                &pod.metadata.name,
                pod.metadata.uid.as_deref().unwrap_or(""),
            );
            self.emit_meta(
                &pod.metadata,
                ns,
                None,
                "Pod",
                name,
                &queue,
                vec![ps],
                None,
                finished,
                &[],
            );
        }
        for ((ns, group), pods) in groups {
            self.pod_group(&ns, &group, &pods);
        }
    }

    fn pod_group(&mut self, ns: &str, group: &str, pods: &[(&String, &Pod)]) {
        let Some(&(_, first)) = pods.first() else {
            return;
        };
        let name = format!("{ns}/{group}");
        let total: Option<i32> = first
            .metadata
            .annotations
            .get(POD_GROUP_TOTAL_COUNT_ANNOTATION)
            .and_then(|v| v.parse().ok());
        let mut pod_sets: Vec<PodSet> = Vec::new();
        let mut all_finished = true;
        for &(_, pod) in pods {
            let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
            if phase == Some("Failed") {
                continue;
            }
            all_finished &= phase == Some("Succeeded");
            let role = match pod.metadata.annotations.get(ROLE_HASH_ANNOTATION) {
                Some(r) => r.clone(),
                None => match role_hash(&pod.spec, self.pod_priority(&pod.spec)) {
                    Some(r) => r,
                    None => {
                        self.warnings.push(
                            None,
                            codes::NOT_MODELLED,
                            "Pod",
                            &format!("{ns}/{}", pod.metadata.name),
                            "sets a field whose role hash is not reproduced (affinity, \
                             topology spread, resource claims or pod-level resources) and has \
                             no kueue.x-k8s.io/role-hash annotation; its PodSet is named \
                             \"main\""
                                .into(),
                        );
                        "main".into()
                    }
                },
            };
            match pod_sets.iter_mut().find(|p| p.name == role) {
                Some(p) => p.count += 1,
                None => pod_sets.push(PodSet {
                    name: role,
                    template: PodTemplateSpec {
                        metadata: None,
                        spec: pod.spec.clone(),
                    },
                    count: 1,
                    min_count: None,
                    topology_request: None,
                }),
            }
        }
        let present: i32 = pod_sets.iter().map(|p| p.count).sum();
        if let Some(t) = total {
            if pod_sets.len() == 1 {
                pod_sets[0].count = t;
            } else if present < t {
                self.warnings.push(
                    None,
                    codes::NOT_MODELLED,
                    "Pod",
                    &name,
                    format!(
                        "pod group {group:?} has {present} of its {t} pods in the files, in \
                         several roles; each role counts only the pods given"
                    ),
                );
            }
        }
        let queue = first
            .metadata
            .labels
            .get(QUEUE_LABEL)
            .cloned()
            .unwrap_or_default();
        let mut meta = first.metadata.clone();
        meta.name = group.to_owned();
        meta.uid = None;
        self.emit_meta(
            &meta,
            ns,
            None,
            "Pod",
            group.to_owned(),
            &queue,
            pod_sets,
            None,
            all_finished && present > 0,
            &[(IS_GROUP_WORKLOAD_ANNOTATION, "true")],
        );
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
