//! Pods and jobs as a current cluster holds them: pod-level resources, the `default`
//! LocalQueue, TrainJobs on MPI runtimes, RuntimeClass overhead, StatefulSet and RayService
//! Workloads, the Ray autoscaler sidecar under KAI, admission gates and elastic jobs, and the
//! references and settings upstream accepts (a priority class in another file, a PodGroup
//! without `spec.queue`, a KAI Queue whose limit is below its quota). Every expected value
//! is worked out by hand from the upstream file the test names.

use gpuquota_model::diag::Severity;
use gpuquota_model::kueue::Workload;
use gpuquota_model::validate::{Options, diagnostics};
use gpuquota_model::{Imported, Importer, import_str};

fn import(text: &str) -> Imported {
    import_str("t.yaml", text).expect("imports")
}

fn warnings(i: &Imported) -> Vec<String> {
    i.warnings.iter().map(ToString::to_string).collect()
}

fn pod_sets(w: &Workload) -> Vec<(&str, i32)> {
    w.spec
        .pod_sets
        .iter()
        .map(|p| (p.name.as_str(), p.count))
        .collect()
}

/// `(resource, quantity)` of one pod of PodSet `i`, as the engines count it.
fn requests(w: &Workload, i: usize) -> Vec<(String, String)> {
    w.spec.pod_sets[i]
        .template
        .spec
        .effective_requests()
        .expect("no overflow")
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

// --- pod-level resources -----------------------------------------------------------------

/// kubernetes/kubernetes staging/src/k8s.io/component-helpers/resource/helpers.go
/// (`PodRequests`): the pod level replaces cpu and memory; the container's 8 GPUs stay.
#[test]
fn pod_level_resources_keep_the_containers_gpus() {
    let i = import(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: plr, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\n\
         spec:\n  parallelism: 2\n  completions: 2\n  template:\n    spec:\n\
         \x20     resources: {requests: {cpu: \"4\"}, limits: {memory: 16Gi}}\n\
         \x20     containers:\n      - {name: main, resources: {requests: {cpu: \"1\", memory: 1Gi}, limits: {nvidia.com/gpu: 8}}}\n",
    );
    let w = &i.model.workloads["ns/job-plr-0fdb8"];
    assert_eq!(pod_sets(w), vec![("main", 2)]);
    assert_eq!(
        requests(w, 0),
        pairs(&[("cpu", "4"), ("memory", "16Gi"), ("nvidia.com/gpu", "8")])
    );
}

// --- the default LocalQueue ----------------------------------------------------------------

const DEFAULT_LQ: &str = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: default, namespace: ns}\nspec: {clusterQueue: cq}\n---\n";

/// kubernetes-sigs/kueue pkg/controller/jobframework/defaults.go (`ApplyDefaultLocalQueue`)
/// and pkg/controller/jobs/pod/pod_webhook.go: an unlabelled job or pod in a namespace with a
/// LocalQueue named `default` goes to it; in a namespace without one it stays unmanaged.
#[test]
fn unlabelled_jobs_and_pods_go_to_the_default_local_queue() {
    let objects = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: ns}\n\
                   spec: {template: {spec: {containers: [{name: c}]}}}\n---\n\
                   apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec: {containers: [{name: c}]}\n---\n\
                   apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: other}\n\
                   spec: {template: {spec: {containers: [{name: c}]}}}\n";
    let i = import(&format!("{DEFAULT_LQ}{objects}"));
    let queues: Vec<(&str, Option<&str>)> = i
        .model
        .workloads
        .iter()
        .map(|(k, w)| (k.as_str(), w.spec.queue_name.as_deref()))
        .collect();
    assert_eq!(
        queues,
        vec![
            ("ns/job-j-68c25", Some("default")),
            ("ns/pod-p-2d864", Some("default")),
        ]
    );
    let w = warnings(&i);
    assert!(
        w.iter()
            .any(|m| m.contains("Job \"other/j\"") && m.contains("managed by neither")),
        "{w:?}"
    );
    // A label still wins over the default.
    let labelled = import(&format!(
        "{DEFAULT_LQ}apiVersion: batch/v1\nkind: Job\nmetadata: {{name: j, namespace: ns, labels: {{kueue.x-k8s.io/queue-name: q}}}}\n\
         spec: {{template: {{spec: {{containers: [{{name: c}}]}}}}}}\n"
    ));
    assert_eq!(
        labelled.model.workloads["ns/job-j-68c25"]
            .spec
            .queue_name
            .as_deref(),
        Some("q")
    );
}

// --- TrainJob on an MPI runtime ------------------------------------------------------------

/// The shape of kubeflow/trainer manifests/base/runtimes/deepspeed_distributed.yaml (and
/// mlx_distributed.yaml): `node` first, the launcher is the trainer step, the launcher runs
/// as a node.
const DEEPSPEED: &str = r#"apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: deepspeed-distributed}
spec:
  mlPolicy:
    numNodes: 1
    mpi: {numProcPerNode: 1, mpiImplementation: OpenMPI, sshAuthMountPath: /home/mpiuser/.ssh, runLauncherAsNode: true}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          spec: {template: {spec: {containers: [{name: node, image: ds}]}}}
      - name: launcher
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec: {template: {spec: {containers: [{name: node, image: ds}]}}}
---
"#;

/// kubeflow/trainer pkg/runtime/core/trainingruntime.go (`newRuntimeInfo`: the trainer step
/// counts `mlPolicy.numNodes`, `resourcesPerNode` goes to it and, with runLauncherAsNode, to
/// `node`) and pkg/runtime/framework/plugins/mpi/mpi.go (`EnforceMLPolicy`: `node` counts
/// numNodes − 1 when the launcher is a node): 4 nodes of 8 GPUs are 1 launcher + 3 nodes,
/// 32 GPUs (the replaced conversion counted 4 launchers + 1 node, 40 GPUs).
#[test]
fn trainjob_on_the_deepspeed_runtime_counts_launcher_and_nodes_as_the_trainer_builds_them() {
    let i = import(&format!(
        "{DEEPSPEED}apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n\
         metadata: {{name: ds, namespace: ns, labels: {{kueue.x-k8s.io/queue-name: q}}}}\n\
         spec: {{runtimeRef: {{name: deepspeed-distributed}}, trainer: {{numNodes: 4, resourcesPerNode: {{limits: {{nvidia.com/gpu: 8}}}}}}}}\n"
    ));
    let w = i
        .model
        .workloads
        .values()
        .next()
        .expect("the TrainJob's Workload");
    assert_eq!(pod_sets(w), vec![("node", 3), ("launcher", 1)]);
    assert_eq!(requests(w, 0), pairs(&[("nvidia.com/gpu", "8")]));
    assert_eq!(requests(w, 1), pairs(&[("nvidia.com/gpu", "8")]));
    let gpus: i64 = w.spec.pod_sets.iter().map(|p| i64::from(p.count) * 8).sum();
    assert_eq!(gpus, 32);
    let w = warnings(&i);
    assert!(!w.iter().any(|m| m.contains("runLauncherAsNode")), "{w:?}");
    // One node: the launcher is the only node; `node` keeps one pod (max(1 − 1, 1)).
    let one = import(&format!(
        "{DEEPSPEED}apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n\
         metadata: {{name: ds, namespace: ns, labels: {{kueue.x-k8s.io/queue-name: q}}}}\n\
         spec: {{runtimeRef: {{name: deepspeed-distributed}}, trainer: {{numNodes: 1}}}}\n"
    ));
    let w = one.model.workloads.values().next().expect("Workload");
    assert_eq!(pod_sets(w), vec![("node", 1), ("launcher", 1)]);
}

/// kubeflow/trainer pkg/runtime/core/trainingruntime_test.go, "succeeded to build JobSet
/// with OpenMPI values from the TrainJob": the launcher without the ancestor label, `node`
/// as the trainer step, runLauncherAsNode false, numNodes 2 → launcher 1, node 2 (the
/// hostfile lists node-0-0 and node-0-1).
#[test]
fn trainjob_on_an_mpi_runtime_without_launcher_as_node() {
    let i = import(
        r#"apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: test-runtime, namespace: ns}
spec:
  mlPolicy: {numNodes: 1, mpi: {numProcPerNode: 1, mpiImplementation: OpenMPI, sshAuthMountPath: /root/.ssh, runLauncherAsNode: false}}
  template:
    spec:
      replicatedJobs:
      - name: launcher
        template: {spec: {template: {spec: {containers: [{name: node, command: [mpirun]}]}}}}
      - name: node
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec: {template: {spec: {containers: [{name: node, resources: {requests: {cpu: "1"}}}]}}}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: test-job, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}
spec: {runtimeRef: {name: test-runtime, kind: TrainingRuntime}, trainer: {numNodes: 2, numProcPerNode: 8}}
"#,
    );
    let w = i.model.workloads.values().next().expect("Workload");
    assert_eq!(pod_sets(w), vec![("launcher", 1), ("node", 2)]);
}

// --- RuntimeClass overhead ------------------------------------------------------------------

/// kubernetes-sigs/kueue pkg/workload/resources.go (`handlePodOverhead`): the class's
/// `overhead.podFixed` becomes the pod set's overhead and adds to each pod's requests; a
/// class not in the files is a reference warning and adds nothing.
#[test]
fn runtime_class_overhead_is_added_and_a_missing_class_warned_about() {
    let i = import(
        "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: kata}\nhandler: kata\n\
         overhead: {podFixed: {cpu: 250m, memory: 120Mi}}\n---\n\
         apiVersion: batch/v1\nkind: Job\nmetadata: {name: a, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\n\
         spec: {template: {spec: {runtimeClassName: kata, containers: [{name: c, resources: {requests: {cpu: \"1\", nvidia.com/gpu: 1}}}]}}}\n---\n\
         apiVersion: batch/v1\nkind: Job\nmetadata: {name: b, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\n\
         spec: {template: {spec: {runtimeClassName: gvisor, containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]}}}\n",
    );
    let a = &i.model.workloads["ns/job-a-8077b"];
    assert_eq!(
        requests(a, 0),
        pairs(&[
            ("cpu", "1250m"),
            ("memory", "120Mi"),
            ("nvidia.com/gpu", "1")
        ])
    );
    let b = &i.model.workloads["ns/job-b-5f660"];
    assert_eq!(requests(b, 0), pairs(&[("cpu", "1")]));
    let w = warnings(&i);
    assert!(
        w.iter().any(|m| m.contains("Workload \"ns/job-b-5f660\"")
            && m.contains("spec.podSets[0].template.spec.runtimeClassName")
            && m.contains("RuntimeClass \"gvisor\" is not in the files")),
        "{w:?}"
    );
    // The RuntimeClass is a reference, never "not managed".
    assert!(!w.iter().any(|m| m.contains("managed by neither")), "{w:?}");
}

/// A pod KAI schedules gets the overhead as the API server's RuntimeClass admission sets
/// it on a new pod (kubernetes/kubernetes plugin/pkg/admission/runtimeclass/admission.go),
/// so KAI and ResourceQuota count it: 1 cpu + 250m.
#[test]
fn runtime_class_overhead_reaches_kai_pods() {
    let i = import(
        "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: kata}\nhandler: kata\n\
         overhead: {podFixed: {cpu: 250m}}\n---\n\
         apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns, labels: {kai.scheduler/queue: team}}\n\
         spec: {schedulerName: kai-scheduler, runtimeClassName: kata, containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]}\n",
    );
    let pod = &i.model.pods["ns/p"];
    let r: Vec<(String, String)> = pod
        .spec
        .effective_requests()
        .expect("no overflow")
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(r, pairs(&[("cpu", "1250m")]));
}

// --- StatefulSet, RayService, the Ray autoscaler -------------------------------------------

/// kubernetes-sigs/kueue pkg/controller/jobs/statefulset/statefulset_reconciler.go
/// (`constructWorkload`): one PodSet named `main` counting the replicas.
#[test]
fn statefulset_podset_is_main() {
    let i = import(
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\n\
         spec: {replicas: 3, template: {spec: {affinity: {}, containers: [{name: c}]}}}\n",
    );
    let (key, w) = i.model.workloads.iter().next().expect("Workload");
    assert!(key.starts_with("ns/statefulset-db-"), "{key}");
    assert_eq!(pod_sets(w), vec![("main", 3)]);
    assert!(warnings(&i).is_empty(), "{:?}", warnings(&i));
}

/// kubernetes-sigs/kueue pkg/controller/jobs/rayservice/rayservice_controller.go
/// (`PodSets` builds the RayCluster's from `rayClusterConfig`): head 1 plus the autoscaler
/// sidecar (500m, 512Mi) with in-tree autoscaling, and each worker group's replicas.
#[test]
fn rayservice_becomes_a_workload_with_the_autoscaler_sidecar() {
    let i = import(
        "apiVersion: ray.io/v1\nkind: RayService\nmetadata: {name: serve, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\n\
         spec:\n  rayClusterConfig:\n    enableInTreeAutoscaling: true\n\
         \x20   headGroupSpec: {template: {spec: {containers: [{name: head, resources: {requests: {cpu: \"1\"}}}]}}}\n\
         \x20   workerGroupSpecs:\n    - {groupName: GPU, replicas: 2, minReplicas: 1, maxReplicas: 4, template: {spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: 1}}}]}}}\n",
    );
    let w = i.model.workloads.values().next().expect("Workload");
    assert_eq!(pod_sets(w), vec![("head", 1), ("gpu", 2)]);
    assert_eq!(
        requests(w, 0),
        pairs(&[("cpu", "1500m"), ("memory", "512Mi")])
    );
    let w = warnings(&i);
    assert!(
        w.iter()
            .any(|m| m.contains("RayService") && m.contains("in-tree autoscaling")),
        "{w:?}"
    );
}

/// kai-scheduler/KAI-Scheduler groups the pods KubeRay creates; the head pod carries the
/// autoscaler sidecar (ray-project/kuberay ray-operator/controllers/ray/common/pod.go).
#[test]
fn kai_ray_head_pod_has_the_autoscaler_sidecar() {
    let i = import(
        "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: rc, namespace: ns, labels: {kai.scheduler/queue: team}}\n\
         spec:\n  enableInTreeAutoscaling: true\n  autoscalerOptions: {resources: {requests: {cpu: 200m, memory: 256Mi}}}\n\
         \x20 headGroupSpec: {template: {spec: {schedulerName: kai-scheduler, containers: [{name: head, resources: {requests: {cpu: \"1\"}}}]}}}\n",
    );
    let head = i
        .model
        .pods
        .iter()
        .find(|(k, _)| k.ends_with("-head"))
        .map(|(_, p)| p)
        .expect("head pod");
    let r: Vec<(String, String)> = head
        .spec
        .effective_requests()
        .expect("no overflow")
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(r, pairs(&[("cpu", "1200m"), ("memory", "256Mi")]));
    // the autoscaler's scaling is not modelled: said on the RayCluster, not silent
    let warned = warnings(&i);
    assert!(
        warned.iter().any(|m| m.contains("RayCluster \"ns/rc\"")
            && m.contains("Ray in-tree autoscaling")
            && m.contains("not modelled")),
        "{warned:?}"
    );
}

// --- gated and elastic workloads -----------------------------------------------------------

/// kubernetes-sigs/kueue pkg/controller/jobframework/reconciler.go
/// (`PropagateAdmissionGatedByAnnotation`): the job's gate reaches its Workload; under
/// `featureGates: {AdmissionGatedBy: false}` it does not.
#[test]
fn admission_gate_reaches_the_workload_and_elastic_jobs_are_warned_about() {
    let job = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: g\n  namespace: ns\n  labels: {kueue.x-k8s.io/queue-name: q}\n\
               \x20 annotations: {kueue.x-k8s.io/admission-gated-by: example.com/quota-approver, kueue.x-k8s.io/elastic-job: \"true\"}\n\
               spec: {template: {spec: {containers: [{name: c}]}}}\n";
    let i = import(job);
    let w = &i.model.workloads["ns/job-g-03f62"];
    assert_eq!(
        w.metadata
            .annotations
            .get("kueue.x-k8s.io/admission-gated-by")
            .map(String::as_str),
        Some("example.com/quota-approver")
    );
    let warned = warnings(&i);
    assert!(
        warned.iter().any(|m| m.contains("Job \"ns/g\"")
            && m.contains("metadata.annotations[kueue.x-k8s.io/elastic-job]")
            && m.contains("workload slices")),
        "{warned:?}"
    );
    let off = import(&format!(
        "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n\
         featureGates: {{AdmissionGatedBy: false, ElasticJobsViaWorkloadSlices: false}}\n---\n{job}"
    ));
    let w = &off.model.workloads["ns/job-g-03f62"];
    assert!(w.metadata.annotations.is_empty(), "{:?}", w.metadata);
    assert!(
        !warnings(&off).iter().any(|m| m.contains("elastic-job")),
        "{:?}",
        warnings(&off)
    );
}

// --- references and settings upstream accepts ----------------------------------------------

fn problems(files: &[(&str, &str)], complete: bool) -> Vec<(Severity, String)> {
    let mut importer = Importer::new();
    for (n, t) in files {
        importer.add_str(n, t);
    }
    let imported = importer.finish().expect("imports");
    diagnostics(&imported.model, &Options::complete(complete))
        .into_iter()
        .map(|d| (d.severity, d.to_string()))
        .collect()
}

const WPC_JOB: &str = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q, kueue.x-k8s.io/priority-class: prod}}\n\
spec: {template: {spec: {containers: [{name: c}]}}}\n";

/// A WorkloadPriorityClass in another file is found; missing from every file, it is a
/// reference warning and no Workload (kubernetes-sigs/kueue
/// pkg/controller/jobframework/reconciler.go, `ExtractPriority` fails and no Workload is
/// created) — never an error.
#[test]
fn workload_priority_class_in_another_file() {
    let wpc = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: prod}\nvalue: 500\n";
    let mut importer = Importer::new();
    importer.add_str("job.yaml", WPC_JOB);
    importer.add_str("classes.yaml", wpc);
    let both = importer.finish().expect("imports");
    assert_eq!(
        both.model.workloads["ns/job-j-68c25"].spec.priority,
        Some(500)
    );
    let p = problems(&[("job.yaml", WPC_JOB), ("classes.yaml", wpc)], false);
    assert!(p.iter().all(|(s, _)| *s == Severity::Warning), "{p:?}");

    let alone = import(WPC_JOB);
    assert!(alone.model.workloads.is_empty());
    let w = warnings(&alone);
    assert!(
        w.iter().any(|m| m.contains("Job \"ns/j\"")
            && m.contains("WorkloadPriorityClass \"prod\" is not in the files")
            && m.contains("none is converted")),
        "{w:?}"
    );
    let p = problems(&[("job.yaml", WPC_JOB)], false);
    assert!(p.iter().all(|(s, _)| *s == Severity::Warning), "{p:?}");
}

/// A PodGroup without `spec.queue` is accepted (KAI's CRD does not require it), with a
/// warning; a Queue whose limit is below its quota is accepted
/// (kai-scheduler/KAI-Scheduler pkg/admission/webhook/queuehooks/queue_validator.go), with a
/// warning.
#[test]
fn podgroup_without_queue_and_queue_limit_below_quota_are_warnings() {
    let kai = "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: team}\n\
               spec: {resources: {gpu: {quota: 4, limit: 2, overQuotaWeight: 1}, cpu: {quota: -1, limit: -1}, memory: {quota: -1, limit: -1}}}\n---\n\
               apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: pg, namespace: ns, labels: {kai.scheduler/queue: team}}\n\
               spec: {minMember: 1}\n";
    let p = problems(&[("kai.yaml", kai)], true);
    assert!(p.iter().all(|(s, _)| *s == Severity::Warning), "{p:?}");
    assert_eq!(p.len(), 2, "{p:?}");
    assert!(
        p.iter().any(|(_, m)| m.contains("Queue \"team\"")
            && m.contains("spec.resources.gpu.limit")
            && m.contains("2 is below the quota (4)")),
        "{p:?}"
    );
    assert!(
        p.iter()
            .any(|(_, m)| m.contains("PodGroup \"ns/pg\"") && m.contains("spec.queue")),
        "{p:?}"
    );
}

/// kubernetes-sigs/kueue pkg/webhooks/workload_webhook.go: a podSetAssignment naming a
/// podSet the Workload does not have is rejected (`field.NotFound`), with or without
/// `--complete`: the reference is within the object.
#[test]
fn pod_set_assignment_naming_an_unknown_pod_set_stays_an_error() {
    let wl = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w, namespace: ns}\n\
              spec: {queueName: q, podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c}]}}}]}\n\
              status:\n  admission:\n    clusterQueue: cq\n    podSetAssignments: [{name: other, count: 1}]\n";
    for complete in [false, true] {
        let p = problems(&[("wl.yaml", wl)], complete);
        assert!(
            p.iter().any(|(s, m)| *s == Severity::Error
                && m.contains("status.admission.podSetAssignments[0].name")
                && m.contains("Not found: \"other\"")),
            "complete {complete}: {p:?}"
        );
    }
}
