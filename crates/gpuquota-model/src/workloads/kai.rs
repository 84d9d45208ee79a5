//! KAI's pod grouper: workload objects whose pods KAI schedules → PodGroups and their Pods
//! (kai-scheduler/KAI-Scheduler: `pkg/podgrouper/podgrouper/plugins/*`, dispatched by kind
//! in `pkg/podgrouper/podgrouper/hub/hub.go`).
//!
//! An object is KAI's when its pod template's `schedulerName` is `kai-scheduler`. Its pods
//! (the pods its controller would create, named `<object>-<index>`, `<object>-<role>-<i>`
//! and so on, status `Pending`) get the annotation `pod-group-name`; if pods owned by the
//! object are already in the files, those are used instead and only annotated.
//!
//! Every PodGroup (`defaultgrouper/default_grouper.go`):
//!
//! - **Name** `pg-<top owner>-<uid>` (the object's `metadata.uid`). *Deviation:* a manifest
//!   that was never applied has no uid; its PodGroup is named `pg-<top owner>`, and a
//!   Deployment's pod `i`, which has no uid either, `pg-<deployment>-<i>`.
//! - **Queue**: the queue label of the object, else of the pod template, else the `project`
//!   label (with `-<node pool>` when the pod has the node-pool label), else `default-queue`.
//!   The queue label is `kai.scheduler/queue` (KAI's default `queueLabelKey`); Run:ai's
//!   `runai/queue` is read as well, after it. A KAI `Config` (`kai.scheduler/v1`) in the
//!   files sets the key (`spec.global.queueLabelKey`, then the only one read) and the
//!   scheduler name (`spec.global.schedulerName`), as in
//!   kai-scheduler/KAI-Scheduler: pkg/apis/kai/v1/global.go.
//! - **Priority class**: the `priorityClassName` label of the object or pod template, else the
//!   template's `spec.priorityClassName`, else the grouper's default: `inference` for
//!   Deployments, `train` otherwise. A class is taken when it is one of KAI's
//!   (`train`, `build-preemptible`, `build`, `inference`) or in the files; a class in neither
//!   is kept with a warning (KAI would fall back to the default if it does not exist).
//! - **Preemptibility** from the `kai.scheduler/preemptibility` label; `preemptionDelay` and
//!   `stalenessGracePeriod` from the `kai.scheduler/preemption-delay` and
//!   `kai.scheduler/staleness-grace-period` annotations.
//!
//! minMember per kind:
//!
//! | Kind | PodGroups | minMember | Upstream plugin |
//! |---|---|---|---|
//! | `batch/v1` Job | one | `kai.scheduler/batch-min-member` annotation, else 1 | `job/job_grouper.go` |
//! | Deployment | one per pod, `pg-<pod>-<pod uid>` (pods named `<deployment>-<i>`) | 1 | `deployment/deployment_grouper.go` |
//! | StatefulSet, ReplicaSet, PaddleJob | one | 1 | `defaultgrouper` |
//! | PyTorchJob, TFJob, XGBoostJob, JAXJob, MPIJob | one | `runPolicy.schedulingPolicy.minAvailable`, else the sum of all replicas; PyTorch: `elasticPolicy.minReplicas` (and `minAvailable`) override; MPI with `launcherCreationPolicy: WaitForWorkersReady`: the launcher is not counted | `kubeflow/distributed_common.go`, `kubeflow/pytorch`, `kubeflow/mpi` |
//! | RayCluster, RayJob | one | 1 (head) + per worker group (minReplicas if > 0, else replicas) × numOfHosts; the head pod carries KubeRay's autoscaler sidecar under `enableInTreeAutoscaling` (ray-project/kuberay `ray-operator/controllers/ray/common/pod.go`) | `ray/ray_grouper.go` |
//! | LeaderWorkerSet | one per group `i`, `pg-<name>-<uid>-group-<i>` | size (`LeaderCreated`) | `leaderworkerset/lws_grouper.go` |
//! | JobSet | one | every replicated job's pods (its sub-groups all required), or the first replicated job's with `startupPolicyOrder: InOrder` | `jobset/jobset_grouper.go` |
//! | CronJob | one per Job it created, `pg-<job>-<job uid>`, queue and priority from the Job's labels (the `jobTemplate`'s); the Jobs in the files, else those of `status.active` (pods `<job>-<i>`) | 1 (default grouper) | `cronjobs/crobjob-grouper.go` |
//! | Knative Service, Revision | one per revision, `pg-<revision>-<revision uid>` (a Service: its `spec.template.metadata.name`, else `status.latestCreatedRevisionName`, else `<service>-00001`, unless its revisions are in the files); pods `<revision>-deployment-<i>`, as many as the larger of `autoscaling.knative.dev/min-scale` and `initial-scale` (1); default priority class `inference` | `autoscaling.knative.dev/min-scale` (1 when absent or not a number) | `knative/knative.go` (gang scheduling on, KAI's default) |
//! | Spark pods (labels `spark-app-name` and `spark-app-selector`) whose top owner is a pod (spark-submit's driver and its executors) | one, named the `spark-app-selector` value, queue and priority from the driver | 1 | `podjob/podjob.go`, `spark/spark.go` |
//! | SparkApplication | one, `pg-<app>-<uid>`, of its driver and executor pods in the files | 1 (default grouper) | `defaultgrouper` |
//! | AppWrapper | one, of the pods of its components' pod sets (pods `<name>-<i>-<j>`) | 1 (default grouper: KAI has no AppWrapper plugin) | `defaultgrouper` |
//!
//! *Deviation (JobSet):* KAI builds one sub-group per replicated job with `minSubGroup`; the
//! schedulers here do not model sub-groups, so the gang is the pods of the required
//! sub-groups, with a warning.
//!
//! *Deviation (Knative):* the pods of a revision get names from its Deployment's ReplicaSet;
//! the conversion names them `<revision>-deployment-<i>`. A Service's revision without the
//! Revision object has no uid: its PodGroup is `pg-<revision>`. The revision's labels are its
//! template's (Knative does not copy the Service's labels to it).
//!
//! Skipped with a warning: a CronJob without Jobs in the files or in `status.active` (it has
//! no pods at the snapshot's instant), a SparkApplication without its pods in the files,
//! TrainJob (KAI groups the JobSet the trainer creates), RayService. Plain Pods without a
//! PodGroup are left to the engine, which groups them as KAI's default grouper does (one job
//! per pod). New pods get the namespace's LimitRange defaults as the API server gives them
//! ([`super::limitrange`]).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::kinds::{
    JobSetSpec, JobSpec, KubeflowSpec, LeaderWorkerSetSpec, RayClusterSpec, RayJobSpec,
    ReplicaSpec, ReplicatedPodsSpec,
};
use super::{
    MAX_CONVERTED_PER_OBJECT, ObjectKind, Warnings, WorkloadObject, capped, codes, controller_owner,
};
use crate::core::{Pod, PodStatus};
use crate::kai::{POD_GROUP_ANNOTATION, PodGroup, PodGroupSpec, builtin_priority_class};
use crate::kueue::PodTemplateSpec;
use crate::meta::ObjectMeta;
use crate::model::{Model, Origin};

/// KAI's scheduler name.
pub const SCHEDULER_NAME: &str = "kai-scheduler";
/// The queue label keys read, in order: KAI's default `queueLabelKey`, then Run:ai's.
pub const QUEUE_LABELS: &[&str] = &["kai.scheduler/queue", "runai/queue"];
/// The project label (queue fallback).
pub const PROJECT_LABEL: &str = "project";
/// The node-pool label appended to the project queue.
pub const NODE_POOL_LABEL: &str = "runai/node-pool";
/// The priority-class label.
pub const PRIORITY_LABEL: &str = "priorityClassName";
/// The preemptibility label.
pub const PREEMPTIBILITY_LABEL: &str = "kai.scheduler/preemptibility";
/// The minMember override of Jobs and JobSets.
pub const MIN_MEMBER_ANNOTATION: &str = "kai.scheduler/batch-min-member";

/// The conversion's result.
#[derive(Debug, Default)]
pub(crate) struct Output {
    /// PodGroups by `namespace/name`.
    pub pod_groups: BTreeMap<String, (Option<Origin>, PodGroup)>,
    /// New pods by `namespace/name`, and existing ones annotated with their PodGroup.
    pub pods: BTreeMap<String, Pod>,
    /// Workload objects converted.
    pub used: BTreeSet<String>,
    /// Workload objects skipped with a warning of their own.
    pub explained: BTreeSet<String>,
}

/// One pod the object's controller creates: name suffix and template.
struct PodPlan {
    name: String,
    template: PodTemplateSpec,
}

/// A PodGroup to build: its name, minMember, pods, default priority class; the metadata
/// of the object KAI treats as its owner when that is not the converted object itself (a
/// CronJob's Job, a Knative revision, a Spark driver pod); the pods in the files to annotate
/// instead of new ones.
#[derive(Default)]
struct GroupPlan {
    name: String,
    min_member: i32,
    pods: Vec<PodPlan>,
    default_class: &'static str,
    owner: Option<ObjectMeta>,
    existing: Vec<String>,
}

/// The pod grouper's settings: from KAI's `Config` (`kai.scheduler/v1`,
/// `spec.global.queueLabelKey` and `spec.global.schedulerName`) when one is given.
#[derive(Debug, Clone, PartialEq)]
pub struct GrouperSettings {
    /// The scheduler name pods must carry.
    pub scheduler_name: String,
    /// The queue label keys, in the order they are read.
    pub queue_labels: Vec<String>,
}

impl GrouperSettings {
    /// The settings of `model`: KAI's defaults, or the first `Config`'s.
    pub fn from_model(model: &Model) -> GrouperSettings {
        let mut s = GrouperSettings {
            scheduler_name: SCHEDULER_NAME.to_owned(),
            queue_labels: QUEUE_LABELS.iter().map(|k| (*k).to_owned()).collect(),
        };
        if let Some(cfg) = model
            .workload_objects
            .values()
            .find(|o| o.kind == ObjectKind::KaiConfig)
        {
            let global = cfg.spec.get("global");
            if let Some(k) = global
                .and_then(|g| g.get("queueLabelKey"))
                .and_then(Value::as_str)
                .filter(|k| !k.is_empty())
            {
                s.queue_labels = vec![k.to_owned()];
            }
            if let Some(n) = global
                .and_then(|g| g.get("schedulerName"))
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
            {
                s.scheduler_name = n.to_owned();
            }
        }
        s
    }
}

fn is_kai(t: &PodTemplateSpec, st: &GrouperSettings) -> bool {
    t.spec.scheduler_name.as_deref() == Some(st.scheduler_name.as_str())
}

/// Converts every workload object of `model` whose pods KAI schedules.
pub(crate) fn convert(model: &Model, warnings: &mut Warnings) -> Output {
    let mut out = Output::default();
    let st = GrouperSettings::from_model(model);
    let owners = pod_owners(model);
    let (limit_ranges, _) = super::limitrange::summaries(model);
    for (key, obj) in &model.workload_objects {
        // Only top owners: a child of another workload object is grouped with its owner.
        if let Some((group, kind, name)) = controller_owner(&obj.metadata)
            && let Some(owner_kind) = ObjectKind::from_group_kind(&group, &kind)
            && owner_kind != ObjectKind::CronJob
            && model
                .workload_objects
                .contains_key(&format!("{kind}/{}/{name}", obj.namespace()))
        {
            continue;
        }
        let planned = plan(model, obj, &st).and_then(|p| {
            let pods: usize = p
                .as_ref()
                .map_or(0, |(plans, _)| plans.iter().map(|g| g.pods.len()).sum());
            if pods > MAX_CONVERTED_PER_OBJECT as usize {
                return Err(format!(
                    "its pods number more than {MAX_CONVERTED_PER_OBJECT}; not converted"
                ));
            }
            Ok(p)
        });
        match planned {
            Ok(None) => {}
            Ok(Some((plans, warning))) => {
                if let Some(w) = warning {
                    warnings.push(
                        obj.origin.as_ref(),
                        codes::NOT_MODELLED,
                        obj.kind.as_str(),
                        &obj.ns_name(),
                        w,
                    );
                }
                for p in plans {
                    emit(
                        model,
                        &owners,
                        obj,
                        p,
                        &st,
                        &limit_ranges,
                        warnings,
                        &mut out,
                    );
                }
                out.used.insert(key.clone());
            }
            Err(msg) => {
                warnings.push(
                    obj.origin.as_ref(),
                    codes::NOT_MODELLED,
                    obj.kind.as_str(),
                    &obj.ns_name(),
                    msg,
                );
                out.explained.insert(key.clone());
            }
        }
    }
    for ((ns, selector), keys) in spark_pods(model, &st) {
        let driver = keys
            .iter()
            .filter_map(|k| model.pods.get(k))
            .find(|p| controller_owner(&p.metadata).is_none())
            .or_else(|| keys.first().and_then(|k| model.pods.get(k)));
        let Some(driver) = driver else { continue };
        let app = WorkloadObject {
            kind: ObjectKind::SparkApplication,
            api_version: "v1".into(),
            origin: None,
            metadata: ObjectMeta {
                name: selector.clone(),
                namespace: Some(ns.clone()),
                ..ObjectMeta::default()
            },
            spec: Value::Null.into(),
            status: None,
        };
        let plan = GroupPlan {
            name: selector,
            min_member: 1,
            pods: Vec::new(),
            default_class: "train",
            owner: Some(driver.metadata.clone()),
            existing: keys,
        };
        emit(
            model,
            &owners,
            &app,
            plan,
            &st,
            &limit_ranges,
            warnings,
            &mut out,
        );
    }
    out
}

fn pods_of(base: &str, template: &PodTemplateSpec, n: i32) -> Result<Vec<PodPlan>, String> {
    let mut v = Vec::new();
    push_pods(&mut v, base, template, n)?;
    Ok(v)
}

/// Adds `n` pods named `<base>-<i>`, refusing to grow past [`MAX_CONVERTED_PER_OBJECT`].
fn push_pods(
    pods: &mut Vec<PodPlan>,
    base: &str,
    template: &PodTemplateSpec,
    n: i32,
) -> Result<(), String> {
    let n = usize::try_from(n.max(0)).unwrap_or(0);
    if pods.len().saturating_add(n) > MAX_CONVERTED_PER_OBJECT as usize {
        return Err(format!(
            "its pods number more than {MAX_CONVERTED_PER_OBJECT}; not converted"
        ));
    }
    pods.extend((0..n).map(|i| PodPlan {
        name: format!("{base}-{i}"),
        template: template.clone(),
    }));
    Ok(())
}

type Plans = Option<(Vec<GroupPlan>, Option<String>)>;

/// The PodGroups of `obj`, or `None` when its pods are not KAI's: one grouper per kind, as
/// KAI's pod grouper has one plugin per owner kind
/// (kai-scheduler/KAI-Scheduler: `pkg/podgrouper/podgrouper/plugins/`).
fn plan(model: &Model, obj: &WorkloadObject, st: &GrouperSettings) -> Result<Plans, String> {
    let g = Grouper::new(model, obj, st);
    match obj.kind {
        // Read by GrouperSettings; not a workload.
        ObjectKind::KaiConfig
        | ObjectKind::TrainingRuntime
        | ObjectKind::ClusterTrainingRuntime
        | ObjectKind::LimitRange
        | ObjectKind::DeviceClass
        | ObjectKind::ResourceClaim
        | ObjectKind::ResourceClaimTemplate
        | ObjectKind::ResourceSlice
        | ObjectKind::RuntimeClass => Ok(None),
        ObjectKind::Job => g.job(),
        ObjectKind::CronJob => {
            let spec: super::kinds::CronJobSpec = obj.spec_as()?;
            if !is_kai(&spec.job_template.spec.template, st) {
                return Ok(None);
            }
            cronjob(model, obj, &spec).map(Some)
        }
        ObjectKind::AppWrapper => g.appwrapper(),
        ObjectKind::KnativeService => g.knative_service(),
        ObjectKind::KnativeRevision => g.knative_revision(),
        ObjectKind::Deployment | ObjectKind::StatefulSet | ObjectKind::ReplicaSet => g.replicated(),
        ObjectKind::PyTorchJob
        | ObjectKind::TFJob
        | ObjectKind::XGBoostJob
        | ObjectKind::JAXJob
        | ObjectKind::MPIJob
        | ObjectKind::PaddleJob => g.kubeflow(),
        ObjectKind::RayCluster | ObjectKind::RayJob => g.ray(),
        ObjectKind::LeaderWorkerSet => g.lws(),
        ObjectKind::JobSet => g.jobset(),
        ObjectKind::SparkApplication => spark_application(model, obj, st),
        ObjectKind::TrainJob | ObjectKind::RayService => g.not_modelled(),
    }
}

/// What the groupers of one object share.
struct Grouper<'a> {
    model: &'a Model,
    obj: &'a WorkloadObject,
    st: &'a GrouperSettings,
    /// `pg-<name>-<uid>`, or `pg-<name>` without a uid.
    pg: String,
    /// The min-member annotation, if it parses.
    annotation_min: Option<i32>,
}

impl<'a> Grouper<'a> {
    fn new(model: &'a Model, obj: &'a WorkloadObject, st: &'a GrouperSettings) -> Grouper<'a> {
        let name = &obj.metadata.name;
        let uid = obj.metadata.uid.as_deref().unwrap_or("");
        // Without a uid (a manifest never applied) the `-<uid>` suffix is left out: a trailing
        // `-` would not be a valid object name.
        let pg = if uid.is_empty() {
            format!("pg-{name}")
        } else {
            format!("pg-{name}-{uid}")
        };
        let annotation_min = obj
            .metadata
            .annotations
            .get(MIN_MEMBER_ANNOTATION)
            .and_then(|v| v.parse::<i32>().ok());
        Grouper {
            model,
            obj,
            st,
            pg,
            annotation_min,
        }
    }

    /// The object's one PodGroup.
    fn one(&self, min_member: i32, pods: Vec<PodPlan>, default_class: &'static str) -> GroupPlan {
        GroupPlan {
            name: self.pg.clone(),
            min_member,
            pods,
            default_class,
            ..GroupPlan::default()
        }
    }

    /// A Job: one gang (minMember from the annotation, 1 for a CronJob's Job).
    fn job(&self) -> Result<Plans, String> {
        let obj = self.obj;
        let st = self.st;
        let name = &obj.metadata.name;
        let spec: JobSpec = obj.spec_as()?;
        if !is_kai(&spec.template, st) {
            return Ok(None);
        }
        let pods = pods_of(name, &spec.template, spec.pods_count())?;
        // A CronJob's Job is grouped by the default grouper (minMember 1), not the Job
        // grouper (cronjobs/crobjob-grouper.go).
        let min = if controller_owner(&obj.metadata).is_some_and(|(_, k, _)| k == "CronJob") {
            1
        } else {
            self.annotation_min.unwrap_or(1)
        };
        Ok(Some((vec![self.one(min, pods, "train")], None)))
    }

    /// An AppWrapper: one gang of 1 over its pod sets.
    fn appwrapper(&self) -> Result<Plans, String> {
        let obj = self.obj;
        let st = self.st;
        let name = &obj.metadata.name;
        let (sets, warnings) = super::appwrapper::pod_sets(&obj.spec)?;
        if !sets.iter().any(|s| is_kai(&s.template, st)) {
            return Ok(None);
        }
        let mut pods = Vec::new();
        for (i, set) in sets.iter().enumerate() {
            push_pods(&mut pods, &format!("{name}-{i}"), &set.template, set.count)?;
        }
        let warning = (!warnings.is_empty()).then(|| warnings.join("; "));
        Ok(Some((vec![self.one(1, pods, "train")], warning)))
    }

    /// A Knative Service: its latest revision, unless the files hold the revision itself.
    fn knative_service(&self) -> Result<Plans, String> {
        let model = self.model;
        let obj = self.obj;
        let st = self.st;
        let name = &obj.metadata.name;
        let template: PodTemplateSpec = match obj.spec.get("template") {
            Some(t) => serde_path_to_error::deserialize(t)
                .map_err(|e| format!("spec.template.{}: {}", e.path(), e.inner()))?,
            None => PodTemplateSpec::default(),
        };
        if !is_kai(&template, st) {
            return Ok(None);
        }
        let revision = template
            .metadata
            .as_ref()
            .map(|m| m.name.clone())
            .filter(|n| !n.is_empty())
            .or_else(|| {
                obj.status
                    .as_ref()
                    .and_then(|s| s.get("latestCreatedRevisionName"))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .unwrap_or_else(|| format!("{name}-00001"));
        // Revisions of the Service in the files (by name, or by the
        // `serving.knative.dev/service` label Knative puts on them) are grouped on their own.
        let ns = obj.namespace();
        if model.workload_objects.values().any(|o| {
            o.kind == ObjectKind::KnativeRevision
                && o.namespace() == ns
                && (o.metadata.name == revision
                    || o.metadata.labels.get(KNATIVE_SERVICE_LABEL) == Some(name))
        }) {
            return Ok(Some((Vec::new(), None)));
        }
        let mut meta = template.metadata.as_deref().cloned().unwrap_or_default();
        meta.name = revision;
        meta.uid = None;
        meta.namespace = Some(obj.namespace().to_owned());
        meta.creation_timestamp = obj.metadata.creation_timestamp;
        Ok(Some((vec![knative_group(meta, &template)?], None)))
    }

    /// A Knative Revision: one inference group.
    fn knative_revision(&self) -> Result<Plans, String> {
        let obj = self.obj;
        let st = self.st;
        let spec: crate::core::PodSpec = obj.spec_as()?;
        let template = PodTemplateSpec {
            metadata: Some(Box::new(ObjectMeta {
                labels: obj.metadata.labels.clone(),
                annotations: obj.metadata.annotations.clone(),
                ..ObjectMeta::default()
            })),
            spec,
        };
        if !is_kai(&template, st) {
            return Ok(None);
        }
        Ok(Some((
            vec![knative_group(obj.metadata.clone(), &template)?],
            None,
        )))
    }

    /// A Deployment (one group per replica) or a StatefulSet / ReplicaSet (one gang of 1).
    fn replicated(&self) -> Result<Plans, String> {
        let obj = self.obj;
        let st = self.st;
        let name = &obj.metadata.name;
        let spec: ReplicatedPodsSpec = obj.spec_as()?;
        if !is_kai(&spec.template, st) {
            return Ok(None);
        }
        let n = spec.replicas.unwrap_or(1);
        Ok(if obj.kind == ObjectKind::Deployment {
            let plans = (0..capped(n, "spec.replicas")?)
                .map(|i| GroupPlan {
                    name: format!("pg-{name}-{i}"),
                    min_member: 1,
                    pods: vec![PodPlan {
                        name: format!("{name}-{i}"),
                        template: spec.template.clone(),
                    }],
                    default_class: "inference",
                    ..GroupPlan::default()
                })
                .collect();
            Some((plans, None))
        } else {
            Some((
                vec![self.one(1, pods_of(name, &spec.template, n)?, "train")],
                None,
            ))
        })
    }

    /// A Kubeflow job: one gang of every replica, minMember as the training operator sets it.
    fn kubeflow(&self) -> Result<Plans, String> {
        let obj = self.obj;
        let st = self.st;
        let name = &obj.metadata.name;
        let spec: KubeflowSpec = obj.spec_as()?;
        let field = match obj.kind {
            ObjectKind::PyTorchJob => "pytorchReplicaSpecs",
            ObjectKind::TFJob => "tfReplicaSpecs",
            ObjectKind::XGBoostJob => "xgbReplicaSpecs",
            ObjectKind::JAXJob => "jaxReplicaSpecs",
            ObjectKind::PaddleJob => "paddleReplicaSpecs",
            _ => "mpiReplicaSpecs",
        };
        let specs: BTreeMap<String, ReplicaSpec> = match spec.other.get(field) {
            None | Some(Value::Null) => BTreeMap::new(),
            Some(v) => serde_path_to_error::deserialize(v)
                .map_err(|e| format!("spec.{field}.{}: {}", e.path(), e.inner()))?,
        };
        if !specs.values().any(|r| is_kai(&r.template, st)) {
            return Ok(None);
        }
        let mut pods = Vec::new();
        let mut total = 0i32;
        for (t, r) in specs.iter() {
            let n = r.replicas.unwrap_or(1);
            total = total.saturating_add(n);
            push_pods(
                &mut pods,
                &format!("{name}-{}", t.to_lowercase()),
                &r.template,
                n,
            )?;
        }
        if obj.kind == ObjectKind::PaddleJob {
            return Ok(Some((vec![self.one(1, pods, "train")], None)));
        }
        let sched_min = spec
            .run_policy
            .as_ref()
            .and_then(|p| p.scheduling_policy.as_ref())
            .and_then(|s| s.min_available)
            .and_then(|m| i32::try_from(m).ok());
        let mut min = sched_min.unwrap_or(total);
        if obj.kind == ObjectKind::PyTorchJob
            && let Some(m) = spec
                .other
                .get("elasticPolicy")
                .and_then(|e| e.get("minReplicas"))
                .and_then(Value::as_i64)
                .and_then(|m| i32::try_from(m).ok())
        {
            min = m;
            if let Some(s) = sched_min {
                min = s;
            }
        }
        if obj.kind == ObjectKind::MPIJob
            && sched_min.is_none()
            && spec
                .other
                .get("launcherCreationPolicy")
                .and_then(Value::as_str)
                == Some("WaitForWorkersReady")
        {
            min = min.saturating_sub(specs.get("Launcher").and_then(|l| l.replicas).unwrap_or(1));
        }
        Ok(Some((vec![self.one(min, pods, "train")], None)))
    }

    /// A RayCluster or RayJob: the head and every worker group, minMember from the minimum
    /// replicas.
    fn ray(&self) -> Result<Plans, String> {
        let obj = self.obj;
        let st = self.st;
        let name = &obj.metadata.name;
        let cluster: RayClusterSpec = if obj.kind == ObjectKind::RayJob {
            let s: RayJobSpec = obj.spec_as()?;
            s.ray_cluster_spec.unwrap_or_default()
        } else {
            obj.spec_as()?
        };
        if !is_kai(&cluster.head_group_spec.template, st)
            && !cluster
                .worker_group_specs
                .iter()
                .any(|w| is_kai(&w.template, st))
        {
            return Ok(None);
        }
        let mut pods = vec![PodPlan {
            name: format!("{name}-head"),
            template: cluster.head_pod_template(),
        }];
        let mut min = 1i32;
        for wg in &cluster.worker_group_specs {
            let desired = wg.replicas.unwrap_or(1);
            let lo = wg.min_replicas.unwrap_or(0);
            if lo == 0 && desired == 0 {
                continue;
            }
            let hosts = wg.num_of_hosts.unwrap_or(1).max(1);
            let group_min = if lo > 0 { lo } else { desired }.saturating_mul(hosts);
            min = min.saturating_add(group_min);
            push_pods(
                &mut pods,
                &format!("{name}-{}-worker", wg.group_name.to_lowercase()),
                &wg.template,
                desired.saturating_mul(hosts),
            )?;
        }
        let warning = (cluster.enable_in_tree_autoscaling == Some(true)).then(|| {
            "Ray in-tree autoscaling: the head carries the autoscaler sidecar and each worker \
             group runs its current replicas (minMember from minReplicas); the autoscaler's \
             scaling between minReplicas and maxReplicas is not modelled"
                .to_owned()
        });
        Ok(Some((vec![self.one(min, pods, "train")], warning)))
    }

    /// A LeaderWorkerSet: one gang per replica group.
    fn lws(&self) -> Result<Plans, String> {
        let obj = self.obj;
        let st = self.st;
        let name = &obj.metadata.name;
        let pg = &self.pg;
        let spec: LeaderWorkerSetSpec = obj.spec_as()?;
        let t = &spec.leader_worker_template;
        if !is_kai(&t.worker_template, st)
            && !t.leader_template.as_ref().is_some_and(|l| is_kai(l, st))
        {
            return Ok(None);
        }
        let size = t.size.unwrap_or(1);
        let policy = spec.startup_policy.as_deref().unwrap_or("LeaderCreated");
        let warning = (policy == "LeaderReady").then(|| {
            "startupPolicy LeaderReady: KAI gangs the leader first and then the group; \
             modelled as one gang of the whole group"
                .to_owned()
        });
        let size = capped(size, "spec.leaderWorkerTemplate.size")?;
        let groups = capped(spec.replicas.unwrap_or(1), "spec.replicas")?;
        capped(groups.saturating_mul(size), "replicas × size")?;
        let plans = (0..groups)
            .map(|g| {
                let mut pods = vec![PodPlan {
                    name: format!("{name}-{g}"),
                    template: t
                        .leader_template
                        .clone()
                        .unwrap_or_else(|| t.worker_template.clone()),
                }];
                for w in 1..size {
                    pods.push(PodPlan {
                        name: format!("{name}-{g}-{w}"),
                        template: t.worker_template.clone(),
                    });
                }
                GroupPlan {
                    name: format!("{pg}-group-{g}"),
                    min_member: size,
                    pods,
                    default_class: "train",
                    ..GroupPlan::default()
                }
            })
            .collect();
        Ok(Some((plans, warning)))
    }

    /// A JobSet: one gang of the pods of its required replicated jobs.
    fn jobset(&self) -> Result<Plans, String> {
        let obj = self.obj;
        let st = self.st;
        let name = &obj.metadata.name;
        let spec: JobSetSpec = obj.spec_as()?;
        if !spec
            .replicated_jobs
            .iter()
            .any(|r| is_kai(&r.template.spec.template, st))
        {
            return Ok(None);
        }
        let in_order = spec
            .other
            .get("startupPolicy")
            .and_then(|p| p.get("startupPolicyOrder"))
            .and_then(Value::as_str)
            == Some("InOrder");
        let mut pods = Vec::new();
        let mut min = 0i32;
        for (i, rj) in spec.replicated_jobs.iter().enumerate() {
            let per = rj.template.spec.pods_count();
            for j in 0..capped(rj.replicas.unwrap_or(1), "replicatedJobs[].replicas")? {
                push_pods(
                    &mut pods,
                    &format!("{name}-{}-{j}", rj.name),
                    &rj.template.spec.template,
                    per,
                )?;
                if !in_order || i == 0 {
                    min = min.saturating_add(per);
                }
            }
        }
        let warning = Some(
            "KAI gives a JobSet one sub-group per replicated job; sub-groups are not \
             modelled, so the gang is the pods of the required sub-groups"
                .to_owned(),
        );
        Ok(Some((vec![self.one(min, pods, "train")], warning)))
    }

    /// A TrainJob or RayService KAI would group: its grouper is not modelled.
    fn not_modelled(&self) -> Result<Plans, String> {
        let (obj, st) = (self.obj, self.st);
        let kai = obj
            .spec
            .pointer("/template/spec/schedulerName")
            .and_then(Value::as_str)
            == Some(st.scheduler_name.as_str())
            || serde_json::to_string(&obj.spec)
                .is_ok_and(|s| s.contains(&format!("\"schedulerName\":\"{}\"", st.scheduler_name)));
        if !kai {
            return Ok(None);
        }
        Err(format!(
            "KAI's pod grouper for {} is not modelled; not converted",
            obj.kind.as_str()
        ))
    }
}

/// The Jobs of a CronJob (kai-scheduler/KAI-Scheduler:
/// pkg/podgrouper/podgrouper/plugins/cronjobs/crobjob-grouper.go): KAI groups each Job the
/// CronJob created with the default grouper, so one PodGroup `pg-<job>-<job uid>` of
/// minMember 1 per Job, its queue and priority from the Job's labels (the `jobTemplate`'s).
/// Jobs in the files are grouped as Jobs; without them, the Jobs of `status.active` are
/// built from the `jobTemplate`; with neither the CronJob has no pods.
fn cronjob(
    model: &Model,
    obj: &WorkloadObject,
    spec: &super::kinds::CronJobSpec,
) -> Result<(Vec<GroupPlan>, Option<String>), String> {
    let ns = obj.namespace();
    let owns_jobs = model.workload_objects.values().any(|o| {
        o.kind == ObjectKind::Job
            && o.namespace() == ns
            && controller_owner(&o.metadata)
                .is_some_and(|(_, k, n)| k == "CronJob" && n == obj.metadata.name)
    });
    if owns_jobs {
        return Ok((Vec::new(), None));
    }
    let active: Vec<(String, String)> = obj
        .status
        .as_ref()
        .and_then(|s| s.get("active"))
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|r| {
                    let name = r.get("name")?.as_str()?.to_owned();
                    let uid = r
                        .get("uid")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned();
                    Some((name, uid))
                })
                .collect()
        })
        .unwrap_or_default();
    if active.is_empty() {
        return Err(
            "KAI groups the Jobs a CronJob creates; no Job of it is in the files or in \
             status.active, so it has no pods at this instant; not converted"
                .into(),
        );
    }
    let job = &spec.job_template;
    let mut plans = Vec::new();
    for (job_name, uid) in active {
        let mut meta = job.metadata.clone().unwrap_or_default();
        meta.name.clone_from(&job_name);
        meta.namespace = Some(ns.to_owned());
        meta.uid = Some(uid.clone()).filter(|u| !u.is_empty());
        meta.creation_timestamp = obj.metadata.creation_timestamp;
        plans.push(GroupPlan {
            name: if uid.is_empty() {
                format!("pg-{job_name}")
            } else {
                format!("pg-{job_name}-{uid}")
            },
            min_member: 1,
            pods: pods_of(&job_name, &job.spec.template, job.spec.pods_count())?,
            default_class: "train",
            owner: Some(meta),
            existing: Vec::new(),
        });
    }
    Ok((plans, None))
}

/// The label Knative puts on a revision naming its Service.
pub const KNATIVE_SERVICE_LABEL: &str = "serving.knative.dev/service";
/// The minimum scale annotation of a Knative revision.
pub const KNATIVE_MIN_SCALE: &str = "autoscaling.knative.dev/min-scale";
/// The initial scale annotation of a Knative revision.
pub const KNATIVE_INITIAL_SCALE: &str = "autoscaling.knative.dev/initial-scale";

/// One Knative revision's gang (kai-scheduler/KAI-Scheduler:
/// pkg/podgrouper/podgrouper/plugins/knative/knative.go, gang scheduling on, KAI's
/// default): `pg-<revision>-<revision uid>`, minMember the revision's `min-scale` (1 when
/// absent or not a number), priority class `inference` by default; pods
/// `<revision>-deployment-<i>`, as many as the larger of `min-scale` and `initial-scale`
/// (default 1).
fn knative_group(revision: ObjectMeta, template: &PodTemplateSpec) -> Result<GroupPlan, String> {
    let ann = &revision.annotations;
    let min = ann
        .get(KNATIVE_MIN_SCALE)
        .map_or(1, |v| v.parse::<i32>().unwrap_or(1));
    let initial = ann
        .get(KNATIVE_INITIAL_SCALE)
        .and_then(|v| v.parse::<i32>().ok())
        .unwrap_or(1);
    let name = revision.name.clone();
    let pg = match revision.uid.as_deref().filter(|u| !u.is_empty()) {
        Some(uid) => format!("pg-{name}-{uid}"),
        None => format!("pg-{name}"),
    };
    let n = capped(min.max(initial), "the revision's scale")?;
    Ok(GroupPlan {
        name: pg,
        min_member: min.max(0),
        pods: pods_of(&format!("{name}-deployment"), template, n)?,
        default_class: "inference",
        owner: Some(revision),
        existing: Vec::new(),
    })
}

/// The labels that make a pod a Spark pod for KAI (plugins/spark/spark.go, `IsSparkPod`).
pub const SPARK_APP_NAME_LABEL: &str = "spark-app-name";
/// The label naming a Spark application's PodGroup.
pub const SPARK_APP_SELECTOR_LABEL: &str = "spark-app-selector";

/// A SparkApplication: its pods come from the Spark operator, so only the driver and
/// executor pods in the files are grouped, with the default grouper (the application is
/// their top owner): one PodGroup `pg-<app>-<uid>`, minMember 1.
fn spark_application(
    model: &Model,
    obj: &WorkloadObject,
    st: &GrouperSettings,
) -> Result<Plans, String> {
    let ns = obj.namespace();
    let mut pods: Vec<String> = Vec::new();
    let mut frontier = vec![obj.metadata.name.clone()];
    // The driver is owned by the application, the executors by the driver.
    while let Some(owner) = frontier.pop() {
        for (key, p) in &model.pods {
            if p.metadata.namespace.as_deref().unwrap_or("default") == ns
                && controller_owner(&p.metadata).is_some_and(|(_, _, n)| n == owner)
                && !pods.contains(key)
            {
                pods.push(key.clone());
                frontier.push(p.metadata.name.clone());
            }
        }
    }
    pods.sort();
    let kai_pods = pods.iter().any(|k| {
        model.pods.get(k).is_some_and(|p| {
            p.spec.scheduler_name.as_deref() == Some(st.scheduler_name.as_str())
                && !p.metadata.annotations.contains_key(POD_GROUP_ANNOTATION)
        })
    });
    if kai_pods {
        let uid = obj.metadata.uid.as_deref().unwrap_or("");
        let name = &obj.metadata.name;
        return Ok(Some((
            vec![GroupPlan {
                name: if uid.is_empty() {
                    format!("pg-{name}")
                } else {
                    format!("pg-{name}-{uid}")
                },
                min_member: 1,
                pods: Vec::new(),
                default_class: "train",
                owner: None,
                existing: pods,
            }],
            None,
        )));
    }
    let mentions_kai = serde_json::to_string(&obj.spec)
        .is_ok_and(|s| s.contains(&format!("\"{}\"", st.scheduler_name)));
    if mentions_kai {
        return Err(
            "the Spark operator creates the driver and executor pods from spark-submit \
             settings, which are not modelled, and none of them is in the files; not converted"
                .into(),
        );
    }
    Ok(None)
}

/// Spark pods without an owner object in the files (spark-submit's driver, and the executors
/// it owns): KAI's pod-job grouper groups them by their `spark-app-selector` label
/// (plugins/podjob/podjob.go, plugins/spark/spark.go): one PodGroup named after the label's
/// value, minMember 1, queue and priority from the driver (the top owner), then the pod.
fn spark_pods(model: &Model, st: &GrouperSettings) -> BTreeMap<(String, String), Vec<String>> {
    let mut groups: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for (key, p) in &model.pods {
        let l = &p.metadata.labels;
        if p.metadata.annotations.contains_key(POD_GROUP_ANNOTATION)
            || p.spec.scheduler_name.as_deref() != Some(st.scheduler_name.as_str())
            || !l.contains_key(SPARK_APP_NAME_LABEL)
        {
            continue;
        }
        let Some(selector) = l.get(SPARK_APP_SELECTOR_LABEL) else {
            continue;
        };
        let ns = p.metadata.namespace.as_deref().unwrap_or("default");
        // Only pods whose top owner is a pod: walk up through the pods in the files (an
        // executor's owner is its driver); an owner of another kind groups them instead.
        let mut cur = p;
        let mut steps = 0;
        let top_is_pod = loop {
            match controller_owner(&cur.metadata) {
                None => break true,
                Some((_, kind, owner)) if kind == "Pod" => {
                    match model.pods.get(&format!("{ns}/{owner}")) {
                        Some(next) if steps < 16 => {
                            cur = next;
                            steps += 1;
                        }
                        _ => break true,
                    }
                }
                Some(_) => break false,
            }
        };
        if !top_is_pod {
            continue;
        }
        groups
            .entry((ns.to_owned(), selector.clone()))
            .or_default()
            .push(key.clone());
    }
    groups
}

/// Pods without a PodGroup by (namespace, controlling owner); a ReplicaSet's pods are also
/// listed under its Deployment (the ReplicaSet's name without its `-<pod-template-hash>`).
type Owners<'a> = BTreeMap<(String, String), Vec<&'a String>>;

fn pod_owners(model: &Model) -> Owners<'_> {
    let mut out: Owners<'_> = BTreeMap::new();
    for (key, p) in &model.pods {
        if p.metadata.annotations.contains_key(POD_GROUP_ANNOTATION) {
            continue;
        }
        let Some((_, kind, owner)) = controller_owner(&p.metadata) else {
            continue;
        };
        let ns = p
            .metadata
            .namespace
            .as_deref()
            .unwrap_or("default")
            .to_owned();
        if kind == "ReplicaSet"
            && let Some((deployment, _)) = owner.rsplit_once('-')
        {
            out.entry((ns.clone(), deployment.to_owned()))
                .or_default()
                .push(key);
        }
        out.entry((ns, owner)).or_default().push(key);
    }
    out
}

fn first_label<'a>(labels: &'a BTreeMap<String, String>, keys: &[String]) -> Option<&'a String> {
    keys.iter().find_map(|k| labels.get(k))
}

/// The PodGroup's priority class: the owner's or the pod template's label, Ray's own label,
/// the template's `priorityClassName`, else the grouper's default; a class that is neither
/// KAI's nor in the files is kept, with a warning.
fn pod_group_class(
    model: &Model,
    obj: &WorkloadObject,
    plan: &GroupPlan,
    owner: &BTreeMap<String, String>,
    tlabels: &BTreeMap<String, String>,
    first: &PodTemplateSpec,
    warnings: &mut Warnings,
) -> String {
    let class = owner
        .get(PRIORITY_LABEL)
        .or_else(|| tlabels.get(PRIORITY_LABEL))
        .cloned()
        .or_else(|| first.spec.priority_class_name.clone())
        .filter(|c| !c.is_empty());
    let class = match (obj.kind, class) {
        (ObjectKind::RayCluster | ObjectKind::RayJob, c) => {
            owner.get("ray.io/priority-class-name").cloned().or(c)
        }
        (_, c) => c,
    };
    match class {
        Some(c)
            if builtin_priority_class(&c).is_some() || model.priority_classes.contains_key(&c) =>
        {
            c
        }
        Some(c) => {
            warnings.push(
                obj.origin.as_ref(),
                codes::MISSING_REFERENCE,
                obj.kind.as_str(),
                &obj.ns_name(),
                format!(
                    "PriorityClass {c:?} is neither one of KAI's nor in the files; kept (KAI \
                     uses {:?} when it does not exist)",
                    plan.default_class
                ),
            );
            c
        }
        None => plan.default_class.to_owned(),
    }
}

#[allow(clippy::too_many_arguments)]
fn emit(
    model: &Model,
    owners: &Owners<'_>,
    obj: &WorkloadObject,
    plan: GroupPlan,
    st: &GrouperSettings,
    limit_ranges: &BTreeMap<String, super::limitrange::Summary>,
    warnings: &mut Warnings,
    out: &mut Output,
) {
    let ns = obj.namespace();
    let existing_first = plan
        .existing
        .first()
        .and_then(|k| model.pods.get(k))
        .map(|p| PodTemplateSpec {
            metadata: Some(Box::new(p.metadata.clone())),
            spec: p.spec.clone(),
        });
    let Some(first) = plan
        .pods
        .first()
        .map(|p| p.template.clone())
        .or(existing_first)
    else {
        return;
    };
    let empty = BTreeMap::new();
    let tlabels = first.metadata.as_ref().map(|m| &m.labels).unwrap_or(&empty);
    let owner_meta = plan.owner.as_ref().unwrap_or(&obj.metadata);
    let owner = &owner_meta.labels;
    let queue = first_label(owner, &st.queue_labels)
        .or_else(|| first_label(tlabels, &st.queue_labels))
        .cloned()
        .or_else(|| {
            let project = owner
                .get(PROJECT_LABEL)
                .or_else(|| tlabels.get(PROJECT_LABEL))?;
            Some(match tlabels.get(NODE_POOL_LABEL) {
                Some(pool) => format!("{project}-{pool}"),
                None => project.clone(),
            })
        })
        .unwrap_or_else(|| "default-queue".to_owned());
    let class = pod_group_class(model, obj, &plan, owner, tlabels, &first, warnings);
    let preemptibility = owner
        .get(PREEMPTIBILITY_LABEL)
        .or_else(|| tlabels.get(PREEMPTIBILITY_LABEL))
        .cloned();
    let ann = |k: &str| {
        owner_meta
            .annotations
            .get(k)
            .or_else(|| first.metadata.as_ref().and_then(|m| m.annotations.get(k)))
            .cloned()
    };
    let pg = PodGroup {
        metadata: ObjectMeta {
            name: plan.name.clone(),
            namespace: Some(ns.to_owned()),
            labels: owner_meta.labels.clone(),
            // KAI copies the top owner's annotations (CalcPodGroupAnnotations).
            annotations: owner_meta.annotations.clone(),
            creation_timestamp: owner_meta.creation_timestamp,
            uid: owner_meta.uid.clone(),
            ..ObjectMeta::default()
        },
        spec: PodGroupSpec {
            min_member: Some(plan.min_member),
            queue,
            priority_class_name: Some(class),
            preemptibility,
            preemption_delay: ann("kai.scheduler/preemption-delay"),
            staleness_grace_period: ann("kai.scheduler/staleness-grace-period"),
            ..PodGroupSpec::default()
        },
        status: None,
    };
    // Pods already in the files that this object owns are used instead of new ones.
    let owned: Vec<&String> = if plan.existing.is_empty() {
        owners
            .get(&(ns.to_owned(), owner_meta.name.clone()))
            .cloned()
            .unwrap_or_default()
    } else {
        plan.existing.iter().collect()
    };
    if owned.is_empty() {
        for p in &plan.pods {
            let mut meta = p.template.metadata.clone().unwrap_or_default();
            meta.name = p.name.clone();
            meta.namespace = Some(ns.to_owned());
            meta.creation_timestamp = obj.metadata.creation_timestamp;
            meta.annotations
                .insert(POD_GROUP_ANNOTATION.to_owned(), plan.name.clone());
            let mut spec = p.template.spec.clone();
            // The API server's LimitRanger gives a new pod the namespace's defaults.
            if let Some(item) = limit_ranges
                .get(ns)
                .and_then(super::limitrange::Summary::container)
            {
                super::limitrange::apply_to_new_pod(&mut spec, item);
            }
            let pod = Pod {
                metadata: *meta,
                spec,
                status: Some(PodStatus {
                    phase: Some("Pending".into()),
                    ..PodStatus::default()
                }),
            };
            out.pods.insert(format!("{ns}/{}", p.name), pod);
        }
    } else {
        for key in owned {
            let Some(pod) = model.pods.get(key) else {
                continue;
            };
            let mut pod = pod.clone();
            pod.metadata
                .annotations
                .insert(POD_GROUP_ANNOTATION.to_owned(), plan.name.clone());
            out.pods.insert(key.clone(), pod);
        }
    }
    out.pod_groups
        .insert(format!("{ns}/{}", plan.name), (obj.origin.clone(), pg));
}
