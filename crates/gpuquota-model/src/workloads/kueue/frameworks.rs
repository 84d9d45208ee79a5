//! One converter per job framework: Job, JobSet, the Kubeflow jobs, Ray, LeaderWorkerSet,
//! StatefulSet, Deployment, AppWrapper and TrainJob (kubernetes-sigs/kueue:
//! `pkg/controller/jobs/`).

use super::*;

/// The name of the MPI node job and of the trainer container
/// (kubeflow/trainer pkg/constants/constants.go, `Node`).
const MPI_NODE: &str = "node";

impl Ctx<'_> {
    pub(super) fn job(&mut self, obj: &WorkloadObject, queue: &str) -> Result<(), NotConverted> {
        let spec: JobSpec = obj.spec_as().map_err(NotConverted::invalid)?;
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
        let finished = is_finished(obj.status.as_deref());
        self.emit(obj, name, queue, vec![ps], None, finished, &[]);
        Ok(())
    }

    pub(super) fn jobset(&mut self, obj: &WorkloadObject, queue: &str) -> Result<(), NotConverted> {
        let spec: JobSetSpec = obj.spec_as().map_err(NotConverted::invalid)?;
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
        let finished = is_finished(obj.status.as_deref());
        self.emit(obj, name, queue, pod_sets, None, finished, &[]);
        Ok(())
    }

    pub(super) fn kubeflow(
        &mut self,
        obj: &WorkloadObject,
        queue: &str,
    ) -> Result<(), NotConverted> {
        let spec: KubeflowSpec = obj.spec_as().map_err(NotConverted::invalid)?;
        let (field, order) = kubeflow_replicas(obj.kind);
        let specs: BTreeMap<String, ReplicaSpec> = match spec.other.get(field) {
            None | Some(Value::Null) => BTreeMap::new(),
            Some(v) => serde_path_to_error::deserialize(v).map_err(|e| {
                NotConverted::invalid(format!("spec.{field}.{}: {}", e.path(), e.inner()))
            })?,
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
        let finished = is_finished(obj.status.as_deref());
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

    pub(super) fn ray_pod_sets(
        &mut self,
        obj: &WorkloadObject,
        spec: &RayClusterSpec,
    ) -> Vec<PodSet> {
        let head = PodSet {
            name: "head".into(),
            template: spec.head_pod_template(),
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
            self.warn(
                obj,
                codes::NOT_MODELLED,
                "Ray in-tree autoscaling: the head counts the autoscaler sidecar and each \
                 worker group its current replicas; the autoscaler's scaling between \
                 minReplicas and maxReplicas is not modelled"
                    .into(),
            );
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

    /// A RayService: the PodSets of its `rayClusterConfig`, as a RayCluster's
    /// (kubernetes-sigs/kueue pkg/controller/jobs/rayservice/rayservice_controller.go,
    /// `PodSets`).
    pub(super) fn rayservice(
        &mut self,
        obj: &WorkloadObject,
        queue: &str,
    ) -> Result<(), NotConverted> {
        let spec: super::super::kinds::RayServiceSpec =
            obj.spec_as().map_err(NotConverted::invalid)?;
        let cluster = spec.ray_cluster_config.unwrap_or_default();
        let pod_sets = self.ray_pod_sets(obj, &cluster);
        let name = self.name_for(obj);
        self.emit(obj, name, queue, pod_sets, None, false, &[]);
        Ok(())
    }

    pub(super) fn raycluster(
        &mut self,
        obj: &WorkloadObject,
        queue: &str,
    ) -> Result<(), NotConverted> {
        let spec: RayClusterSpec = obj.spec_as().map_err(NotConverted::invalid)?;
        let pod_sets = self.ray_pod_sets(obj, &spec);
        let name = self.name_for(obj);
        self.emit(obj, name, queue, pod_sets, None, false, &[]);
        Ok(())
    }

    pub(super) fn rayjob(&mut self, obj: &WorkloadObject, queue: &str) -> Result<(), NotConverted> {
        let spec: RayJobSpec = obj.spec_as().map_err(NotConverted::invalid)?;
        if spec
            .cluster_selector
            .as_ref()
            .is_some_and(|s| !s.is_empty())
        {
            return Err(NotConverted::not_modelled(
                "runs on an existing RayCluster (spec.clusterSelector) and has no \
                        Workload of its own; not converted",
            ));
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
                        .insert("restartPolicy".into(), Value::String("Never".into()).into());
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

    pub(super) fn lws(&mut self, obj: &WorkloadObject, queue: &str) -> Result<(), NotConverted> {
        let spec: LeaderWorkerSetSpec = obj.spec_as().map_err(NotConverted::invalid)?;
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
        for i in
            0..capped(spec.replicas.unwrap_or(1), "spec.replicas").map_err(NotConverted::invalid)?
        {
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

    pub(super) fn statefulset(
        &mut self,
        obj: &WorkloadObject,
        queue: &str,
    ) -> Result<(), NotConverted> {
        let spec: ReplicatedPodsSpec = obj.spec_as().map_err(NotConverted::invalid)?;
        let replicas = spec.replicas.unwrap_or(1);
        if replicas <= 0 {
            return Ok(());
        }
        let template = PodTemplateSpec {
            metadata: None,
            spec: spec.template.spec.clone(),
        };
        // Current Kueue builds the StatefulSet's Workload itself, with one PodSet named
        // `main` (pkg/controller/jobs/statefulset/statefulset_reconciler.go,
        // `constructWorkload`).
        let ps = PodSet {
            name: "main".into(),
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

    pub(super) fn deployment(
        &mut self,
        obj: &WorkloadObject,
        queue: &str,
    ) -> Result<(), NotConverted> {
        let spec: ReplicatedPodsSpec = obj.spec_as().map_err(NotConverted::invalid)?;
        for i in
            0..capped(spec.replicas.unwrap_or(1), "spec.replicas").map_err(NotConverted::invalid)?
        {
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
    pub(super) fn appwrapper(
        &mut self,
        obj: &WorkloadObject,
        queue: &str,
    ) -> Result<(), NotConverted> {
        let (sets, warnings) =
            super::super::appwrapper::pod_sets(&obj.spec).map_err(NotConverted::invalid)?;
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
    /// One replicated job of an MPI runtime's JobSet (deepspeed, mlx): its PodSet count as
    /// the trainer builds it, and whether `resourcesPerNode` is merged into its `node`
    /// container. The trainer step (`trainjob-ancestor-step: trainer`, the launcher in the
    /// shipped runtimes) runs one replica of `mlPolicy.numNodes` (default 1) pods; the job
    /// named `node` runs the TrainJob's `numNodes` pods, one fewer (at least 1) when the
    /// launcher runs as a node, else its parallelism; any other job its replicas times its
    /// pods. `resourcesPerNode` goes to the trainer step and, with `runLauncherAsNode`,
    /// to the `node` job (kubeflow/trainer pkg/runtime/core/trainingruntime.go,
    /// `newRuntimeInfo`; pkg/runtime/framework/plugins/mpi/mpi.go, `EnforceMLPolicy`;
    /// pkg/runtime/framework/plugins/jobset/builder.go, `Trainer`).
    fn mpi_step(
        &self,
        rj: &super::super::kinds::ReplicatedJob,
        ancestor: Option<&str>,
        ml: &super::super::kinds::MlPolicy,
        launcher_as_node: bool,
        trainer: &super::super::kinds::TrainerSpec,
    ) -> (i32, bool) {
        let is_trainer = ancestor == Some("trainer");
        let is_node = rj.name == MPI_NODE;
        let mut pods = if is_trainer {
            ml.num_nodes.unwrap_or(1)
        } else {
            rj.template.spec.pods_count()
        };
        if is_node && let Some(n) = trainer.num_nodes {
            pods = if launcher_as_node { (n - 1).max(1) } else { n };
        }
        let count = if is_trainer || ancestor.is_some() {
            pods
        } else {
            rj.replicas.unwrap_or(1).saturating_mul(pods)
        };
        (count, is_trainer || (launcher_as_node && is_node))
    }

    /// A TrainJob as the JobSet the trainer builds from its runtime (kubeflow/trainer
    /// `pkg/runtime/core/trainingruntime.go`, the plugins under
    /// `pkg/runtime/framework/plugins/`), whose PodSets Kueue reads
    /// (`pkg/controller/jobs/trainjob/trainjob_controller.go`).
    pub(super) fn trainjob(
        &mut self,
        obj: &WorkloadObject,
        queue: &str,
    ) -> Result<(), NotConverted> {
        let spec: TrainJobSpec = obj.spec_as().map_err(NotConverted::invalid)?;
        let Some(rref) = spec.runtime_ref.as_ref().filter(|r| !r.name.is_empty()) else {
            return Err(NotConverted::invalid(
                "spec.runtimeRef names no TrainingRuntime or ClusterTrainingRuntime, so the \
                 PodSets are unknown; not converted",
            ));
        };
        let kind = rref.kind();
        let key = match kind {
            "TrainingRuntime" => format!("TrainingRuntime/{}/{}", obj.namespace(), rref.name),
            "ClusterTrainingRuntime" => format!("ClusterTrainingRuntime/default/{}", rref.name),
            other => {
                return Err(NotConverted::invalid(format!(
                    "spec.runtimeRef.kind {other:?} is neither TrainingRuntime nor \
                     ClusterTrainingRuntime; not converted"
                )));
            }
        };
        let Some(runtime) = self.model.workload_objects.get(&key) else {
            return Err(NotConverted::missing(format!(
                "its {kind} {:?} (spec.runtimeRef) is not in the files; Kueue builds the PodSets \
                 from it, so the TrainJob is not converted",
                rref.name
            )));
        };
        let rt: TrainingRuntimeSpec = runtime.spec_as().map_err(|e| {
            NotConverted::not_modelled(format!("{kind} {:?}: {e}; not converted", rref.name))
        })?;
        let ml = rt.ml_policy.clone().unwrap_or_default();
        // An MPI runtime (deepspeed, mlx): kubeflow/trainer
        // pkg/runtime/framework/plugins/mpi/mpi.go, `EnforceMLPolicy`.
        let mpi = ml.other.get("mpi").filter(|m| !m.is_null());
        let launcher_as_node = mpi
            .and_then(|m| m.get("runLauncherAsNode"))
            .and_then(Value::as_bool)
            == Some(true);
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
            let (count, merge) = match mpi {
                Some(_) => self.mpi_step(rj, ancestor, &ml, launcher_as_node, &trainer),
                None => {
                    let count = match ancestor {
                        Some("trainer") => trainer
                            .num_nodes
                            .or(ml.num_nodes)
                            .unwrap_or_else(|| rj.template.spec.pods_count()),
                        Some("dataset-initializer" | "model-initializer") => {
                            rj.template.spec.pods_count()
                        }
                        _ => rj
                            .replicas
                            .unwrap_or(1)
                            .saturating_mul(rj.template.spec.pods_count()),
                    };
                    (count, false)
                }
            };
            if let Some(r) = trainer
                .resources_per_node
                .as_ref()
                .filter(|r| !r.requests.is_empty() || !r.limits.is_empty())
            {
                if mpi.is_none() {
                    // `resourcesPerNode` replaces the resources of every container named
                    // `node`.
                    for c in &mut template.spec.containers {
                        if c.name == MPI_NODE {
                            c.resources = r.clone();
                        }
                    }
                } else if merge
                    && let Some(c) = template
                        .spec
                        .containers
                        .iter_mut()
                        .find(|c| c.name == MPI_NODE)
                {
                    // Merged key by key into the first `node` container (kubeflow/trainer
                    // pkg/util/trainingruntime/trainingruntime.go,
                    // `MergeResourceRequirements`).
                    for (k, v) in &r.requests {
                        c.resources.requests.insert(k.clone(), *v);
                    }
                    for (k, v) in &r.limits {
                        c.resources.limits.insert(k.clone(), *v);
                    }
                }
            }
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
        let finished = is_finished(obj.status.as_deref());
        self.emit(obj, name, queue, pod_sets, None, finished, &[]);
        Ok(())
    }
}
