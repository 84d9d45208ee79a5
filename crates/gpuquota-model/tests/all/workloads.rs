//! The workload objects users submit become the Workloads Kueue's job framework creates: for
//! every kind, a small manifest written for the test converts to the Workload written out by
//! hand as Kueue creates it (name, podSets, counts, minCount, priority). Expected names were
//! computed independently (Python `hashlib.sha1` over `kind\ngroup\nname\nuid`, Kueue's
//! `GetWorkloadNameForOwnerWithGVK`); role hashes with `hashlib.sha256` over the sorted-key
//! JSON of Kueue's pod shape.

use gpuquota_model::kueue::Workload;
use gpuquota_model::{Imported, import_str};

fn import(text: &str) -> Imported {
    import_str("t.yaml", text).expect("imports")
}

/// The converted Workload `key` of `input` equals the Workload `expected` (as Kueue writes
/// it; finalizers and owner references left out): name, namespace, labels, spec.
fn assert_workload(input: &str, key: &str, expected: &str) {
    let got = import(input);
    let want = import(expected);
    let w: &Workload = got.model.workloads.get(key).unwrap_or_else(|| {
        panic!(
            "{key} not converted; have {:?}, warnings {:?}",
            got.model.workloads.keys().collect::<Vec<_>>(),
            got.warnings
        )
    });
    let e = want.model.workloads.get(key).expect("expected Workload");
    assert_eq!(w.metadata.name, e.metadata.name);
    assert_eq!(w.metadata.namespace, e.metadata.namespace);
    assert_eq!(w.metadata.labels, e.metadata.labels);
    assert_eq!(
        serde_json::to_value(&w.spec).unwrap(),
        serde_json::to_value(&e.spec).unwrap(),
        "spec of {key}"
    );
}

const UID: &str = "00000000-0000-4000-8000-0000000000";

fn warnings(i: &Imported) -> Vec<String> {
    i.warnings.iter().map(ToString::to_string).collect()
}

#[test]
fn batch_job_becomes_main_podset_with_min_count_and_workload_priority() {
    let job = format!(
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: high}}\nvalue: 1000\n---\n\
         apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {{name: prod}}\nvalue: 500\n---\n\
         apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train-llm\n  namespace: team-a\n  uid: {UID}01\n\
         \x20 labels: {{kueue.x-k8s.io/queue-name: user-queue, kueue.x-k8s.io/priority-class: prod}}\n\
         \x20 annotations: {{kueue.x-k8s.io/job-min-parallelism: \"2\"}}\n\
         spec:\n  parallelism: 4\n  completions: 8\n  suspend: true\n  template:\n    spec:\n      priorityClassName: high\n\
         \x20     containers:\n      - name: main\n        resources: {{limits: {{nvidia.com/gpu: 1}}}}\n"
    );
    let wl = format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata:\n  name: job-train-llm-ec1b3\n  namespace: team-a\n\
         \x20 labels: {{kueue.x-k8s.io/job-uid: {UID}01}}\nspec:\n  queueName: user-queue\n\
         \x20 priorityClassRef: {{group: kueue.x-k8s.io, kind: WorkloadPriorityClass, name: prod}}\n  priority: 500\n\
         \x20 podSets:\n  - name: main\n    count: 4\n    minCount: 2\n    template:\n      spec:\n        priorityClassName: high\n\
         \x20       containers:\n        - name: main\n          resources: {{limits: {{nvidia.com/gpu: 1}}}}\n"
    );
    assert_workload(&job, "team-a/job-train-llm-ec1b3", &wl);
}

#[test]
fn job_count_is_capped_by_completions_and_priority_falls_back_to_the_pod_class() {
    let job = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n---\n\
               apiVersion: batch/v1\nkind: Job\nmetadata: {name: nightly, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\n\
               spec: {parallelism: 5, completions: 3, template: {spec: {priorityClassName: high, containers: [{name: c}]}}}\n";
    let wl = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: job-nightly-a8b37, namespace: ns}\n\
              spec:\n  queueName: q\n  priorityClassRef: {group: scheduling.k8s.io, kind: PriorityClass, name: high}\n  priority: 1000\n\
              \x20 podSets: [{name: main, count: 3, template: {spec: {priorityClassName: high, containers: [{name: c}]}}}]\n";
    assert_workload(job, "ns/job-nightly-a8b37", wl);
}

#[test]
fn job_without_queue_name_is_left_alone_unless_configured() {
    let job = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: nightly, namespace: ns}\nspec: {template: {spec: {containers: [{name: c}]}}}\n";
    let plain = import(job);
    assert!(plain.model.workloads.is_empty());
    assert!(
        warnings(&plain)
            .iter()
            .any(|w| w.contains("managed by neither Kueue")),
        "{:?}",
        warnings(&plain)
    );
    let config = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nmanageJobsWithoutQueueName: true\n---\n";
    let managed = import(&format!("{config}{job}"));
    let w = &managed.model.workloads["ns/job-nightly-a8b37"];
    assert_eq!(w.spec.queue_name, None);
    assert_eq!(w.spec.priority, Some(0));
    // The default managedJobsNamespaceSelector leaves kube-system alone.
    let system = import(&format!(
        "{config}{}",
        job.replace("namespace: ns", "namespace: kube-system")
    ));
    assert!(system.model.workloads.is_empty());
}

#[test]
fn legacy_queue_annotation_is_read_with_a_warning() {
    let job = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: nightly, namespace: ns, annotations: {kueue.x-k8s.io/queue-name: q}}\nspec: {template: {spec: {containers: [{name: c}]}}}\n";
    let i = import(job);
    assert_eq!(
        i.model.workloads["ns/job-nightly-a8b37"]
            .spec
            .queue_name
            .as_deref(),
        Some("q")
    );
    assert!(warnings(&i).iter().any(|w| w.contains("legacy")));
}

#[test]
fn integrations_frameworks_decide_which_kinds_are_converted() {
    let job = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: nightly, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\nspec: {template: {spec: {containers: [{name: c}]}}}\n";
    let config = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nintegrations: {frameworks: [pod]}\n---\n";
    let i = import(&format!("{config}{job}"));
    assert!(i.model.workloads.is_empty());
    assert!(
        warnings(&i)
            .iter()
            .any(|w| w.contains("\"batch/job\" is not in integrations.frameworks"))
    );
    // PyTorchJob is not in the shipped list: not converted without a Configuration enabling it.
    let pt = "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: pt, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\nspec: {pytorchReplicaSpecs: {Worker: {template: {spec: {containers: [{name: c}]}}}}}\n";
    assert!(import(pt).model.workloads.is_empty());
}

#[test]
fn configuration_inside_its_configmap_is_read() {
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kueue-manager-config, namespace: kueue-system}\ndata:\n  controller_manager_config.yaml: |\n    apiVersion: config.kueue.x-k8s.io/v1beta2\n    kind: Configuration\n    manageJobsWithoutQueueName: true\n    integrations:\n      frameworks: [batch/job, kubeflow.org/pytorchjob]\n    fairSharing: {}\n---\n";
    let job = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: nightly, namespace: ns}\nspec: {template: {spec: {containers: [{name: c}]}}}\n";
    let i = import(&format!("{cm}{job}"));
    let cfg = i
        .model
        .configuration
        .as_ref()
        .expect("configuration unwrapped");
    assert!(cfg.fair_sharing_enabled());
    assert!(
        i.model
            .config_maps
            .contains_key("kueue-system/kueue-manager-config")
    );
    assert!(i.model.workloads.contains_key("ns/job-nightly-a8b37"));
}

#[test]
fn jobset_podsets_are_replicated_jobs_times_replicas() {
    let js = format!(
        "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {{name: multislice, namespace: ns, uid: {UID}02, labels: {{kueue.x-k8s.io/queue-name: q}}}}\n\
         spec:\n  replicatedJobs:\n  - name: driver\n    template: {{spec: {{template: {{spec: {{containers: [{{name: d}}]}}}}}}}}\n\
         \x20 - name: workers\n    replicas: 2\n    template: {{spec: {{parallelism: 4, completions: 4, template: {{spec: {{containers: [{{name: w}}]}}}}}}}}\n"
    );
    let wl = format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: jobset-multislice-39c20, namespace: ns, labels: {{kueue.x-k8s.io/job-uid: {UID}02}}}}\n\
         spec:\n  queueName: q\n  priority: 0\n  podSets:\n  - {{name: driver, count: 1, template: {{spec: {{containers: [{{name: d}}]}}}}}}\n\
         \x20 - {{name: workers, count: 8, template: {{spec: {{containers: [{{name: w}}]}}}}}}\n"
    );
    assert_workload(&js, "ns/jobset-multislice-39c20", &wl);
}

#[test]
fn child_jobs_of_a_managed_jobset_are_not_double_counted() {
    let js = "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: multislice, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\nspec: {replicatedJobs: [{name: w, template: {spec: {template: {spec: {containers: [{name: w}]}}}}}]}\n---\n\
              apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: multislice-w-0\n  namespace: ns\n  labels: {kueue.x-k8s.io/queue-name: q}\n  ownerReferences: [{apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, name: multislice, uid: x, controller: true}]\nspec: {template: {spec: {containers: [{name: w}]}}}\n";
    let i = import(js);
    assert_eq!(
        i.model.workloads.len(),
        1,
        "{:?}",
        i.model.workloads.keys().collect::<Vec<_>>()
    );
    assert!(i.warnings.is_empty(), "{:?}", warnings(&i));
    // Without the owner in the files the child is skipped with a warning.
    let orphan = import(js.split("---\n").nth(1).unwrap());
    assert!(orphan.model.workloads.is_empty());
    assert!(
        warnings(&orphan)
            .iter()
            .any(|w| w.contains("owner JobSet \"multislice\" is not in the files"))
    );
}

fn kubeflow_case(kind: &str, api: &str, field: &str, name: &str, wl: &str, types: &[(&str, i32)]) {
    let mut specs = String::new();
    for (t, r) in types {
        specs += &format!(
            "    {t}: {{replicas: {r}, template: {{spec: {{containers: [{{name: {}}}]}}}}}}\n",
            t.to_lowercase()
        );
    }
    let n = match kind {
        "PyTorchJob" => 3,
        "TFJob" => 4,
        "XGBoostJob" => 5,
        "PaddleJob" => 6,
        "JAXJob" => 7,
        _ => 8,
    };
    let fw = format!("kubeflow.org/{}", kind.to_lowercase());
    let job = format!(
        "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nintegrations: {{frameworks: [\"{fw}\"]}}\n---\n\
         apiVersion: {api}\nkind: {kind}\nmetadata: {{name: {name}, namespace: ns, uid: {UID}0{n}, labels: {{kueue.x-k8s.io/queue-name: q}}}}\n\
         spec:\n  runPolicy: {{suspend: true}}\n  {field}:\n{specs}"
    );
    let got = import(&job);
    let key = format!("ns/{wl}");
    let w = got
        .model
        .workloads
        .get(&key)
        .unwrap_or_else(|| panic!("{key}: {:?}", warnings(&got)));
    let names: Vec<(String, i32)> = w
        .spec
        .pod_sets
        .iter()
        .map(|p| (p.name.clone(), p.count))
        .collect();
    let mut expected: Vec<(String, i32)> = Vec::new();
    let order: &[&str] = match kind {
        "TFJob" => &["Chief", "Master", "PS", "Worker", "Evaluator"],
        "JAXJob" => &["Worker"],
        "MPIJob" => &["Launcher", "Worker"],
        _ => &["Master", "Worker"],
    };
    for o in order {
        if let Some((_, r)) = types.iter().find(|(t, _)| t == o) {
            expected.push((o.to_lowercase(), *r));
        }
    }
    assert_eq!(names, expected, "{kind}");
    assert_eq!(
        w.metadata.labels["kueue.x-k8s.io/job-uid"],
        format!("{UID}0{n}")
    );
}

#[test]
fn kubeflow_jobs_have_one_podset_per_replica_type_in_the_operators_order() {
    kubeflow_case(
        "PyTorchJob",
        "kubeflow.org/v1",
        "pytorchReplicaSpecs",
        "pt",
        "pytorchjob-pt-fb60a",
        &[("Worker", 3), ("Master", 1)],
    );
    kubeflow_case(
        "TFJob",
        "kubeflow.org/v1",
        "tfReplicaSpecs",
        "tf",
        "tfjob-tf-cfdbc",
        &[("Worker", 2), ("PS", 2), ("Chief", 1)],
    );
    kubeflow_case(
        "XGBoostJob",
        "kubeflow.org/v1",
        "xgbReplicaSpecs",
        "xgb",
        "xgboostjob-xgb-8f425",
        &[("Worker", 2), ("Master", 1)],
    );
    kubeflow_case(
        "PaddleJob",
        "kubeflow.org/v1",
        "paddleReplicaSpecs",
        "paddle",
        "paddlejob-paddle-069c6",
        &[("Worker", 2)],
    );
    kubeflow_case(
        "JAXJob",
        "kubeflow.org/v1",
        "jaxReplicaSpecs",
        "jax",
        "jaxjob-jax-efb7d",
        &[("Worker", 4)],
    );
    kubeflow_case(
        "MPIJob",
        "kubeflow.org/v2beta1",
        "mpiReplicaSpecs",
        "mpi",
        "mpijob-mpi-3d661",
        &[("Worker", 2), ("Launcher", 1)],
    );
}

#[test]
fn kubeflow_priority_comes_from_the_scheduling_policy() {
    let job = format!(
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: high}}\nvalue: 1000\n---\n\
         apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: low}}\nvalue: 10\n---\n\
         apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {{name: mpi, namespace: ns, uid: {UID}08, labels: {{kueue.x-k8s.io/queue-name: q}}}}\n\
         spec:\n  runPolicy: {{schedulingPolicy: {{priorityClass: high}}}}\n  mpiReplicaSpecs:\n    Launcher: {{template: {{spec: {{priorityClassName: low, containers: [{{name: l}}]}}}}}}\n"
    );
    let w = &import(&job).model.workloads["ns/mpijob-mpi-3d661"];
    assert_eq!(w.spec.priority, Some(1000));
    assert_eq!(w.spec.priority_class_ref.as_ref().unwrap().name, "high");
    assert_eq!(w.spec.pod_sets[0].name, "launcher");
}

#[test]
fn raycluster_and_rayjob_podsets() {
    let rc = format!(
        "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {{name: rc, namespace: ns, uid: {UID}09, labels: {{kueue.x-k8s.io/queue-name: q}}}}\n\
         spec:\n  enableInTreeAutoscaling: true\n  headGroupSpec: {{template: {{spec: {{containers: [{{name: head}}]}}}}}}\n\
         \x20 workerGroupSpecs:\n  - {{groupName: GPU-Group, replicas: 2, numOfHosts: 2, template: {{spec: {{containers: [{{name: w}}]}}}}}}\n"
    );
    let wl = format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: raycluster-rc-5a251, namespace: ns, labels: {{kueue.x-k8s.io/job-uid: {UID}09}}}}\n\
         spec:\n  queueName: q\n  priority: 0\n  podSets:\n\
         \x20 - {{name: head, count: 1, template: {{spec: {{containers: [{{name: head}}, {{name: autoscaler, resources: {{requests: {{cpu: 500m, memory: 512Mi}}, limits: {{cpu: 500m, memory: 512Mi}}}}}}]}}}}}}\n\
         \x20 - {{name: gpu-group, count: 4, template: {{spec: {{containers: [{{name: w}}]}}}}}}\n"
    );
    assert_workload(&rc, "ns/raycluster-rc-5a251", &wl);

    let rj = format!(
        "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {{name: rj, namespace: ns, uid: {UID}10, labels: {{kueue.x-k8s.io/queue-name: q}}}}\n\
         spec:\n  rayClusterSpec:\n    headGroupSpec: {{template: {{spec: {{containers: [{{name: head, image: ray:2}}]}}}}}}\n"
    );
    let i = import(&rj);
    let w = &i.model.workloads["ns/rayjob-rj-d05ac"];
    let sets: Vec<(&str, i32)> = w
        .spec
        .pod_sets
        .iter()
        .map(|p| (p.name.as_str(), p.count))
        .collect();
    assert_eq!(sets, vec![("head", 1), ("submitter", 1)]);
    let sub = &w.spec.pod_sets[1].template.spec.containers[0];
    assert_eq!(sub.name, "ray-job-submitter");
    assert_eq!(
        sub.resources.requests[&gpuquota_model::ResourceName::new("cpu")].to_string(),
        "500m"
    );
    assert_eq!(
        sub.resources.requests[&gpuquota_model::ResourceName::new("memory")].to_string(),
        "200Mi"
    );
    assert_eq!(*sub.other["image"], "ray:2");
}

#[test]
fn leaderworkerset_gets_one_workload_per_group() {
    let lws = format!(
        "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {{name: lws, namespace: ns, uid: {UID}11, labels: {{kueue.x-k8s.io/queue-name: q}}}}\n\
         spec:\n  replicas: 2\n  leaderWorkerTemplate:\n    size: 4\n    leaderTemplate: {{spec: {{containers: [{{name: l}}]}}}}\n    workerTemplate: {{spec: {{containers: [{{name: w}}]}}}}\n"
    );
    let i = import(&lws);
    for key in [
        "ns/leaderworkerset-lws-0-2376d",
        "ns/leaderworkerset-lws-1-2c4df",
    ] {
        let w = &i.model.workloads[key];
        let sets: Vec<(&str, i32)> = w
            .spec
            .pod_sets
            .iter()
            .map(|p| (p.name.as_str(), p.count))
            .collect();
        assert_eq!(sets, vec![("leader", 1), ("worker", 3)], "{key}");
    }
    assert_eq!(i.model.workloads.len(), 2);
}

#[test]
fn plain_pod_and_pod_group() {
    let pods = format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: solo, namespace: ns, uid: {UID}12, labels: {{kueue.x-k8s.io/queue-name: q}}}}\nspec: {{containers: [{{name: c, resources: {{requests: {{cpu: \"1\"}}}}}}]}}\n---\n\
         apiVersion: v1\nkind: Pod\nmetadata: {{name: g-0, namespace: ns, labels: {{kueue.x-k8s.io/queue-name: q, kueue.x-k8s.io/pod-group-name: grp}}, annotations: {{kueue.x-k8s.io/pod-group-total-count: \"3\"}}}}\nspec: {{containers: [{{name: c, resources: {{requests: {{cpu: \"1\"}}}}}}]}}\n---\n\
         apiVersion: v1\nkind: Pod\nmetadata: {{name: g-1, namespace: ns, labels: {{kueue.x-k8s.io/queue-name: q, kueue.x-k8s.io/pod-group-name: grp}}, annotations: {{kueue.x-k8s.io/pod-group-total-count: \"3\"}}}}\nspec: {{containers: [{{name: c, resources: {{requests: {{cpu: \"1\"}}}}}}]}}\n"
    );
    let i = import(&pods);
    let solo = &i.model.workloads["ns/pod-solo-da9c4"];
    assert_eq!(
        (
            solo.spec.pod_sets[0].name.as_str(),
            solo.spec.pod_sets[0].count
        ),
        ("main", 1)
    );
    let grp = &i.model.workloads["ns/grp"];
    assert_eq!(grp.spec.pod_sets.len(), 1);
    assert_eq!(grp.spec.pod_sets[0].name, "4576969b");
    assert_eq!(grp.spec.pod_sets[0].count, 3);
    assert_eq!(
        grp.metadata.annotations["kueue.x-k8s.io/is-group-workload"],
        "true"
    );
}

#[test]
fn statefulset_and_deployment_use_the_pod_integration() {
    let objs = format!(
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {{name: sts, namespace: ns, uid: {UID}13, labels: {{kueue.x-k8s.io/queue-name: q}}}}\n\
         spec: {{replicas: 3, template: {{spec: {{containers: [{{name: s, resources: {{requests: {{cpu: \"2\", nvidia.com/gpu: 1}}}}}}]}}}}}}\n---\n\
         apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: ns, labels: {{kueue.x-k8s.io/queue-name: q}}}}\n\
         spec: {{replicas: 2, template: {{spec: {{containers: [{{name: w}}]}}}}}}\n"
    );
    let i = import(&objs);
    let sts = &i.model.workloads["ns/statefulset-sts-c3e1e"];
    assert_eq!(
        (
            sts.spec.pod_sets[0].name.as_str(),
            sts.spec.pod_sets[0].count
        ),
        // Current Kueue builds the StatefulSet's Workload with one PodSet `main`
        // (pkg/controller/jobs/statefulset/statefulset_reconciler.go, `constructWorkload`).
        ("main", 3)
    );
    assert!(i.model.workloads.contains_key("ns/pod-web-0-f32db"));
    assert!(i.model.workloads.contains_key("ns/pod-web-1-fa073"));
}

#[test]
fn unmodelled_kinds_and_topology_requests_are_warned_about() {
    let objs = "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: t, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\nspec: {}\n---\n\
                apiVersion: batch/v1\nkind: Job\nmetadata: {name: topo, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\n\
                spec: {template: {metadata: {annotations: {kueue.x-k8s.io/podset-required-topology: rack}}, spec: {containers: [{name: c}]}}}\n";
    let i = import(objs);
    let w = warnings(&i);
    assert!(
        w.iter()
            .any(|m| m.contains("TrainJob") && m.contains("ClusterTrainingRuntime")),
        "{w:?}"
    );
    assert!(
        w.iter()
            .any(|m| m.contains("podset-required-topology") && m.contains("not modelled")),
        "{w:?}"
    );
    assert_eq!(i.model.workloads.len(), 1);
}

#[test]
fn finished_jobs_become_finished_workloads() {
    let job = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: nightly, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\nspec: {template: {spec: {containers: [{name: c}]}}}\nstatus: {conditions: [{type: Complete, status: \"True\"}]}\n";
    assert!(import(job).model.workloads["ns/job-nightly-a8b37"].is_finished());
}

#[test]
fn an_explicit_workload_wins_over_a_converted_one() {
    let job = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: nightly, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\nspec: {template: {spec: {containers: [{name: c}]}}}\n---\n\
               apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: job-nightly-a8b37, namespace: ns}\nspec: {queueName: other, podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c}]}}}]}\n";
    let i = import(job);
    assert_eq!(
        i.model.workloads["ns/job-nightly-a8b37"]
            .spec
            .queue_name
            .as_deref(),
        Some("other")
    );
    assert!(warnings(&i).iter().any(|w| w.contains("given explicitly")));
}

#[test]
fn conversion_is_independent_of_document_order() {
    let a = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: a, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\nspec: {template: {spec: {containers: [{name: c}]}}}\n";
    let b = "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: b, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\nspec: {replicatedJobs: [{name: w, template: {spec: {template: {spec: {containers: [{name: w}]}}}}}]}\n";
    let one = import(&format!("{a}---\n{b}"));
    let two = import(&format!("{b}---\n{a}"));
    assert_eq!(one.model.workloads, two.model.workloads);
}

// ---- KAI's pod grouper ----

fn pod_group<'a>(i: &'a Imported, key: &str) -> &'a gpuquota_model::kai::PodGroup {
    i.model.pod_groups.get(key).unwrap_or_else(|| {
        panic!(
            "{key}: have {:?}; {:?}",
            i.model.pod_groups.keys().collect::<Vec<_>>(),
            warnings(i)
        )
    })
}

fn grouped_pods(i: &Imported, pg: &str) -> Vec<String> {
    i.model
        .pods
        .iter()
        .filter(|(_, p)| {
            p.metadata
                .annotations
                .get("pod-group-name")
                .map(String::as_str)
                == Some(pg)
        })
        .map(|(k, _)| k.clone())
        .collect()
}

const KAI_TEMPLATE: &str = "{spec: {schedulerName: kai-scheduler, containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]}}";

#[test]
fn kai_job_becomes_a_podgroup_with_runai_queue_and_train_priority() {
    let job = format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: train, namespace: team-a, uid: u1, labels: {{runai/queue: team-a}}, annotations: {{kai.scheduler/batch-min-member: \"2\"}}}}\n\
         spec: {{parallelism: 3, template: {KAI_TEMPLATE}}}\n"
    );
    let i = import(&job);
    let pg = pod_group(&i, "team-a/pg-train-u1");
    assert_eq!(pg.spec.queue, "team-a");
    assert_eq!(pg.spec.min_member, Some(2));
    assert_eq!(pg.spec.priority_class_name.as_deref(), Some("train"));
    assert_eq!(
        grouped_pods(&i, "pg-train-u1"),
        vec!["team-a/train-0", "team-a/train-1", "team-a/train-2"]
    );
    // No Kueue queue name: no Workload, and no "not managed" warning (KAI manages it).
    assert!(i.model.workloads.is_empty());
    assert!(i.warnings.is_empty(), "{:?}", warnings(&i));
}

#[test]
fn kai_queue_label_precedence_and_project_fallback() {
    let job = format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: a, namespace: ns, labels: {{kai.scheduler/queue: kai-q, runai/queue: runai-q}}}}\nspec: {{template: {KAI_TEMPLATE}}}\n---\n\
         apiVersion: batch/v1\nkind: Job\nmetadata: {{name: b, namespace: ns, labels: {{project: p1}}}}\nspec: {{template: {KAI_TEMPLATE}}}\n---\n\
         apiVersion: batch/v1\nkind: Job\nmetadata: {{name: c, namespace: ns}}\nspec: {{template: {KAI_TEMPLATE}}}\n"
    );
    let i = import(&job);
    assert_eq!(pod_group(&i, "ns/pg-a").spec.queue, "kai-q");
    assert_eq!(pod_group(&i, "ns/pg-b").spec.queue, "p1");
    assert_eq!(pod_group(&i, "ns/pg-c").spec.queue, "default-queue");
}

#[test]
fn kai_deployment_groups_each_pod_with_inference_priority() {
    let d = format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: ns}}\nspec: {{replicas: 2, template: {KAI_TEMPLATE}}}\n"
    );
    let i = import(&d);
    for n in ["ns/pg-web-0", "ns/pg-web-1"] {
        let pg = pod_group(&i, n);
        assert_eq!(pg.spec.min_member, Some(1));
        assert_eq!(pg.spec.priority_class_name.as_deref(), Some("inference"));
    }
}

#[test]
fn kai_kubeflow_min_member_is_the_sum_of_replicas_or_min_available() {
    let pt = format!(
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {{name: pt, namespace: ns, uid: u}}\n\
         spec: {{pytorchReplicaSpecs: {{Master: {{replicas: 1, template: {KAI_TEMPLATE}}}, Worker: {{replicas: 3, template: {KAI_TEMPLATE}}}}}}}\n---\n\
         apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {{name: tf, namespace: ns, uid: u}}\n\
         spec: {{runPolicy: {{schedulingPolicy: {{minAvailable: 2}}}}, tfReplicaSpecs: {{Worker: {{replicas: 4, template: {KAI_TEMPLATE}}}}}}}\n"
    );
    let i = import(&pt);
    assert_eq!(pod_group(&i, "ns/pg-pt-u").spec.min_member, Some(4));
    assert_eq!(grouped_pods(&i, "pg-pt-u").len(), 4);
    assert_eq!(pod_group(&i, "ns/pg-tf-u").spec.min_member, Some(2));
}

#[test]
fn kai_ray_min_member_counts_head_and_worker_minimums() {
    let rc = format!(
        "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {{name: rc, namespace: ns, uid: u, labels: {{ray.io/priority-class-name: build}}}}\n\
         spec:\n  headGroupSpec: {{template: {KAI_TEMPLATE}}}\n  workerGroupSpecs:\n\
         \x20 - {{groupName: a, replicas: 4, minReplicas: 2, template: {KAI_TEMPLATE}}}\n\
         \x20 - {{groupName: b, replicas: 1, numOfHosts: 2, template: {KAI_TEMPLATE}}}\n\
         \x20 - {{groupName: idle, replicas: 0, minReplicas: 0, template: {KAI_TEMPLATE}}}\n"
    );
    let i = import(&rc);
    let pg = pod_group(&i, "ns/pg-rc-u");
    assert_eq!(pg.spec.min_member, Some(1 + 2 + 2));
    assert_eq!(pg.spec.priority_class_name.as_deref(), Some("build"));
    assert_eq!(grouped_pods(&i, "pg-rc-u").len(), 1 + 4 + 2);
}

#[test]
fn kai_leaderworkerset_has_one_podgroup_per_group_of_size() {
    let lws = format!(
        "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {{name: lws, namespace: ns, uid: u}}\n\
         spec: {{replicas: 2, leaderWorkerTemplate: {{size: 3, workerTemplate: {KAI_TEMPLATE}}}}}\n"
    );
    let i = import(&lws);
    for g in ["ns/pg-lws-u-group-0", "ns/pg-lws-u-group-1"] {
        assert_eq!(pod_group(&i, g).spec.min_member, Some(3));
    }
    assert_eq!(
        grouped_pods(&i, "pg-lws-u-group-1"),
        vec!["ns/lws-1", "ns/lws-1-1", "ns/lws-1-2"]
    );
}

#[test]
fn kai_jobset_gang_and_cronjob_warning() {
    let objs = format!(
        "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {{name: js, namespace: ns, uid: u}}\n\
         spec: {{replicatedJobs: [{{name: w, replicas: 2, template: {{spec: {{parallelism: 2, template: {KAI_TEMPLATE}}}}}}}]}}\n---\n\
         apiVersion: batch/v1\nkind: CronJob\nmetadata: {{name: cj, namespace: ns}}\nspec: {{schedule: \"0 2 * * *\", jobTemplate: {{spec: {{template: {KAI_TEMPLATE}}}}}}}\n"
    );
    let i = import(&objs);
    assert_eq!(pod_group(&i, "ns/pg-js-u").spec.min_member, Some(4));
    let w = warnings(&i);
    assert!(
        w.iter()
            .any(|m| m.contains("CronJob") && m.contains("no pods")),
        "{w:?}"
    );
    assert!(
        w.iter().any(|m| m.contains("sub-groups are not modelled")),
        "{w:?}"
    );
}

#[test]
fn kai_existing_pods_of_a_job_are_annotated_not_duplicated() {
    let objs = format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: train, namespace: ns, uid: u}}\nspec: {{parallelism: 2, template: {KAI_TEMPLATE}}}\n---\n\
         apiVersion: v1\nkind: Pod\nmetadata: {{name: train-abcde, namespace: ns, ownerReferences: [{{apiVersion: batch/v1, kind: Job, name: train, uid: u, controller: true}}]}}\n\
         spec: {{schedulerName: kai-scheduler, containers: [{{name: c}}]}}\nstatus: {{phase: Running}}\n"
    );
    let i = import(&objs);
    assert_eq!(grouped_pods(&i, "pg-train-u"), vec!["ns/train-abcde"]);
    assert_eq!(i.model.pods.len(), 1);
}

// ---- NVIDIA device plugin sharing ----

const SHARING: &str = r#"apiVersion: v1
kind: ConfigMap
metadata: {name: time-slicing-config, namespace: gpu-operator}
data:
  any: |-
    version: v1
    sharing:
      timeSlicing:
        renameByDefault: false
        resources:
        - name: nvidia.com/gpu
          replicas: 4
  shared: |-
    version: v1
    sharing:
      timeSlicing:
        renameByDefault: true
        failRequestsGreaterThanOne: true
        resources:
        - name: nvidia.com/gpu
          replicas: 2
---
"#;

#[test]
fn time_slicing_sets_the_advertised_gpu_count_per_node() {
    let nodes = "apiVersion: v1\nkind: Node\nmetadata: {name: a, labels: {nvidia.com/device-plugin.config: any, nvidia.com/gpu.count: \"8\"}}\nstatus: {allocatable: {nvidia.com/gpu: \"8\"}}\n---\n\
                 apiVersion: v1\nkind: Node\nmetadata: {name: b, labels: {nvidia.com/device-plugin.config: shared}}\nstatus: {allocatable: {nvidia.com/gpu: \"4\"}}\n---\n\
                 apiVersion: v1\nkind: Node\nmetadata: {name: c, labels: {nvidia.com/device-plugin.config: any, nvidia.com/gpu.replicas: \"4\"}}\nstatus: {allocatable: {nvidia.com/gpu: \"32\"}}\n";
    let i = import(&format!("{SHARING}{nodes}"));
    let gpu = |n: &str, r: &str| {
        i.model.nodes[n]
            .status
            .allocatable
            .get(&gpuquota_model::ResourceName::new(r))
            .map(ToString::to_string)
    };
    assert_eq!(gpu("a", "nvidia.com/gpu").as_deref(), Some("32"));
    assert_eq!(gpu("b", "nvidia.com/gpu.shared").as_deref(), Some("8"));
    assert_eq!(gpu("b", "nvidia.com/gpu"), None);
    // Already advertised by the plugin: unchanged.
    assert_eq!(gpu("c", "nvidia.com/gpu").as_deref(), Some("32"));
    assert_eq!(
        i.model.nodes["a"].metadata.labels["nvidia.com/gpu.sharing-strategy"],
        "time-slicing"
    );
}

#[test]
fn a_live_node_without_discovery_labels_keeps_its_advertised_replicas() {
    // A live node of 8 GPUs whose plugin already shares them 4 ways reports 32 in its
    // allocatable; without GPU feature discovery (no `nvidia.com/gpu.count`, no
    // `nvidia.com/gpu.replicas`) that count is the advertised one and must not become 128.
    let nodes = "apiVersion: v1\nkind: Node\nmetadata: {name: live, labels: {nvidia.com/device-plugin.config: any}}\nstatus: {capacity: {nvidia.com/gpu: \"32\"}, allocatable: {nvidia.com/gpu: \"32\"}}\n---\n\
                 apiVersion: v1\nkind: Node\nmetadata: {name: renamed, labels: {nvidia.com/device-plugin.config: shared}}\nstatus: {allocatable: {nvidia.com/gpu.shared: \"8\"}}\n";
    let i = import(&format!("{SHARING}{nodes}"));
    let gpu = |n: &str, r: &str| {
        i.model.nodes[n]
            .status
            .allocatable
            .get(&gpuquota_model::ResourceName::new(r))
            .map(ToString::to_string)
    };
    assert_eq!(gpu("live", "nvidia.com/gpu").as_deref(), Some("32"));
    let cap = i.model.nodes["live"]
        .status
        .capacity
        .get(&gpuquota_model::ResourceName::new("nvidia.com/gpu"))
        .map(ToString::to_string);
    assert_eq!(cap.as_deref(), Some("32"));
    // Metering still reads the replicas from the configuration the node names.
    assert_eq!(
        i.model.nodes["live"].metadata.labels["nvidia.com/gpu.replicas"],
        "4"
    );
    assert_eq!(
        i.model.nodes["live"].metadata.labels["nvidia.com/gpu.sharing-strategy"],
        "time-slicing"
    );
    // Already advertised under the renamed resource (4 GPUs x 2): unchanged.
    assert_eq!(
        gpu("renamed", "nvidia.com/gpu.shared").as_deref(),
        Some("8")
    );
    assert_eq!(gpu("renamed", "nvidia.com/gpu"), None);
}

#[test]
fn hami_vgpu_requests_are_warned_about_by_name() {
    let objs = "apiVersion: v1\nkind: Pod\nmetadata: {name: vgpu, namespace: ns}\n\
                spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: \"1\", nvidia.com/gpumem: \"8000\", nvidia.com/gpucores: \"30\"}}}]}\n---\n\
                apiVersion: v1\nkind: Pod\nmetadata: {name: whole, namespace: ns}\n\
                spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: \"1\"}}}]}\n---\n\
                apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: ns}\n\
                spec: {template: {spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: \"2\", nvidia.com/gpumem-percentage: \"50\"}}}]}}}\n";
    let i = import(objs);
    let w: Vec<String> = warnings(&i)
        .into_iter()
        .filter(|m| m.contains("HAMi"))
        .collect();
    assert_eq!(
        w,
        [
            "converted objects (document 0): Pod \"ns/vgpu\": HAMi vGPU resources nvidia.com/gpucores, nvidia.com/gpumem are not modelled: each nvidia.com/gpu it asks for counts as a whole GPU, not as the share of a card HAMi gives it",
            "t.yaml (document 3): Job \"ns/j\": HAMi vGPU resources nvidia.com/gpumem-percentage are not modelled: each nvidia.com/gpu it asks for counts as a whole GPU, not as the share of a card HAMi gives it",
        ],
        "{:?}",
        warnings(&i)
    );
    assert!(
        i.warnings
            .iter()
            .filter(|d| d.to_string().contains("HAMi"))
            .all(|d| d.code == gpuquota_model::workloads::sharing::HAMI_NOT_MODELLED)
    );
}

#[test]
fn departments_sharing_a_time_sliced_gpu_are_warned_about() {
    let objs = "apiVersion: v1\nkind: Node\nmetadata: {name: a, labels: {nvidia.com/device-plugin.config: any}}\nstatus: {allocatable: {nvidia.com/gpu: \"1\"}}\n---\n\
                apiVersion: v1\nkind: Namespace\nmetadata: {name: ns-a, labels: {department: research}}\n---\n\
                apiVersion: v1\nkind: Namespace\nmetadata: {name: ns-b, labels: {department: finance}}\n---\n\
                apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns-a}\nspec: {nodeName: a, containers: [{name: c}]}\nstatus: {phase: Running}\n---\n\
                apiVersion: v1\nkind: Pod\nmetadata: {name: q, namespace: ns-b}\nspec: {nodeName: a, containers: [{name: c}]}\nstatus: {phase: Running}\n";
    let i = import(&format!("{SHARING}{objs}"));
    let w = warnings(&i);
    assert!(
        w.iter().any(|m| m.contains("Node \"a\"")
            && m.contains("finance, research")
            && m.contains("no memory or fault isolation")),
        "{w:?}"
    );
}

#[test]
fn huge_counts_are_refused_with_a_warning_not_expanded() {
    let objs = format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: huge, namespace: ns}}\nspec: {{parallelism: 2000000000, template: {KAI_TEMPLATE}}}\n---\n\
         apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: many, namespace: ns, labels: {{kueue.x-k8s.io/queue-name: q}}}}\nspec: {{replicas: 2000000000, template: {{spec: {{containers: [{{name: c}}]}}}}}}\n---\n\
         apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {{name: js, namespace: ns}}\n\
         spec: {{replicatedJobs: [{{name: w, replicas: 9000, template: {{spec: {{parallelism: 9000, template: {KAI_TEMPLATE}}}}}}}]}}\n"
    );
    let i = import(&objs);
    assert!(i.model.pod_groups.is_empty());
    assert!(i.model.pods.is_empty());
    assert!(i.model.workloads.is_empty());
    assert_eq!(
        warnings(&i)
            .iter()
            .filter(|w| w.contains("not converted"))
            .count(),
        3,
        "{:?}",
        warnings(&i)
    );
}

proptest::proptest! {
    /// Any set of Jobs, in any document order, converts to the same Workloads, one per Job,
    /// each counting min(parallelism, completions) pods.
    #[test]
    fn job_conversion_is_order_independent_and_counts_pods(
        jobs in proptest::collection::vec((1i32..50, proptest::option::of(1i32..50)), 1..8),
        rotate in 0usize..8,
    ) {
        let docs: Vec<String> = jobs
            .iter()
            .enumerate()
            .map(|(n, (p, c))| {
                let completions = c.map(|c| format!(", completions: {c}")).unwrap_or_default();
                format!("apiVersion: batch/v1\nkind: Job\nmetadata: {{name: j{n}, namespace: ns, labels: {{kueue.x-k8s.io/queue-name: q}}}}\nspec: {{parallelism: {p}{completions}, template: {{spec: {{containers: [{{name: c}}]}}}}}}\n")
            })
            .collect();
        let mut rotated = docs.clone();
        rotated.rotate_left(rotate % docs.len());
        let a = import(&docs.join("---\n"));
        let b = import(&rotated.join("---\n"));
        proptest::prop_assert_eq!(&a.model.workloads, &b.model.workloads);
        proptest::prop_assert_eq!(a.model.workloads.len(), jobs.len());
        for (n, (p, c)) in jobs.iter().enumerate() {
            let w = a
                .model
                .workloads
                .values()
                .find(|w| w.metadata.name.starts_with(&format!("job-j{n}-")))
                .expect("converted");
            proptest::prop_assert_eq!(w.spec.pod_sets[0].count, c.map_or(*p, |c| c.min(*p)));
        }
    }
}

#[test]
fn generate_name_gets_a_stable_suffix() {
    let job = "apiVersion: batch/v1\nkind: Job\nmetadata: {generateName: sample-job-, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\nspec: {template: {spec: {containers: [{name: c}]}}}\n";
    let a = import(job);
    let b = import(job);
    assert_eq!(a.model.workloads, b.model.workloads);
    let key = a.model.workload_objects.keys().next().unwrap().clone();
    let name = key.rsplit('/').next().unwrap();
    assert!(
        name.starts_with("sample-job-") && name.len() == "sample-job-".len() + 5,
        "{name}"
    );
    let wl = a.model.workloads.values().next().unwrap();
    assert!(wl.metadata.name.starts_with(&format!("job-{name}-")));
}

#[test]
fn kai_config_sets_the_queue_label_key_and_scheduler_name() {
    let objs = "apiVersion: kai.scheduler/v1\nkind: Config\nmetadata: {name: kai-config}\nspec: {global: {queueLabelKey: acme/queue, schedulerName: acme-scheduler}}\n---\n\
                apiVersion: batch/v1\nkind: Job\nmetadata: {name: a, namespace: ns, labels: {acme/queue: q1, kai.scheduler/queue: ignored}}\n\
                spec: {template: {spec: {schedulerName: acme-scheduler, containers: [{name: c}]}}}\n";
    let i = import(objs);
    assert_eq!(pod_group(&i, "ns/pg-a").spec.queue, "q1");
    assert!(i.warnings.is_empty(), "{:?}", warnings(&i));
}

#[test]
fn gpuquota_annotations_reach_the_workload_and_owner_annotations_the_podgroup() {
    let objs = format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: nightly, namespace: ns, labels: {{kueue.x-k8s.io/queue-name: q}}, annotations: {{gpuquota.dev/runtime: 4h, other.io/x: z}}}}\nspec: {{template: {{spec: {{containers: [{{name: c}}]}}}}}}\n---\n\
         apiVersion: batch/v1\nkind: Job\nmetadata: {{name: k, namespace: ns, annotations: {{gpuquota.dev/repeat: 24h}}}}\nspec: {{template: {KAI_TEMPLATE}}}\n"
    );
    let i = import(&objs);
    let w = &i.model.workloads["ns/job-nightly-a8b37"];
    assert_eq!(
        w.metadata
            .annotations
            .get("gpuquota.dev/runtime")
            .map(String::as_str),
        Some("4h")
    );
    assert!(!w.metadata.annotations.contains_key("other.io/x"));
    assert_eq!(
        pod_group(&i, "ns/pg-k").metadata.annotations["gpuquota.dev/repeat"],
        "24h"
    );
}

/// kubernetes-sigs/kueue: pkg/controller/jobs/appwrapper/appwrapper_controller_test.go,
/// `TestPodSets` "no annotations": an AppWrapper `aw` wrapping a PyTorchJob (Master 1,
/// Worker 4) and a Job of parallelism 2 has the PodSets `aw-0`: 1, `aw-1`: 4, `aw-2`: 2.
#[test]
fn appwrapper_podsets_are_its_components_pod_sets_in_order() {
    let spec = "{containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]}";
    let aw = format!(
        "apiVersion: workload.codeflare.dev/v1beta2\nkind: AppWrapper\nmetadata: {{name: aw, namespace: ns, labels: {{kueue.x-k8s.io/queue-name: q}}}}\n\
         spec:\n  components:\n\
         \x20 - template:\n      apiVersion: kubeflow.org/v1\n      kind: PyTorchJob\n      metadata: {{name: pytorchjob}}\n\
         \x20     spec: {{pytorchReplicaSpecs: {{Master: {{replicas: 1, template: {{spec: {spec}}}}}, Worker: {{replicas: 4, template: {{spec: {spec}}}}}}}}}\n\
         \x20 - template:\n      apiVersion: batch/v1\n      kind: Job\n      metadata: {{name: job}}\n\
         \x20     spec: {{parallelism: 2, template: {{spec: {spec}}}}}\n"
    );
    let wl = format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: appwrapper-aw-6bab2, namespace: ns}}\n\
         spec:\n  queueName: q\n  priority: 0\n  podSets:\n\
         \x20 - {{name: aw-0, count: 1, template: {{spec: {spec}}}}}\n\
         \x20 - {{name: aw-1, count: 4, template: {{spec: {spec}}}}}\n\
         \x20 - {{name: aw-2, count: 2, template: {{spec: {spec}}}}}\n"
    );
    assert_workload(&aw, "ns/appwrapper-aw-6bab2", &wl);
    // Declared pod sets win over inference; an unknown kind without them has none.
    let declared = format!(
        "apiVersion: workload.codeflare.dev/v1beta2\nkind: AppWrapper\nmetadata: {{name: aw, namespace: ns, labels: {{kueue.x-k8s.io/queue-name: q}}}}\n\
         spec:\n  components:\n\
         \x20 - podSets: [{{replicas: 3, path: template.spec.template}}]\n    template: {{apiVersion: example.com/v1, kind: Trainer, spec: {{template: {{spec: {spec}}}}}}}\n\
         \x20 - template: {{apiVersion: v1, kind: ConfigMap, data: {{a: b}}}}\n\
         \x20 - podSets: [{{path: template.spec.missing}}]\n    template: {{apiVersion: example.com/v1, kind: Other, spec: {{}}}}\n"
    );
    let i = import(&declared);
    let wl = &i.model.workloads["ns/appwrapper-aw-6bab2"];
    let sets: Vec<(&str, i32)> = wl
        .spec
        .pod_sets
        .iter()
        .map(|p| (p.name.as_str(), p.count))
        .collect();
    assert_eq!(sets, vec![("aw-0", 3)]);
    assert!(
        warnings(&i)
            .iter()
            .any(|m| m.contains("template.spec.missing") && m.contains("no pod template")),
        "{:?}",
        warnings(&i)
    );
}

/// The ClusterTrainingRuntime of kubernetes-sigs/kueue:
/// pkg/controller/jobs/trainjob/trainjob_controller_test.go, `TestReconciler`: replicated
/// jobs `node` (the trainer step) and `foo`, each 1 replica of parallelism 1.
const TRAINING_RUNTIME: &str = r#"apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: test}
spec:
  template:
    spec:
      replicatedJobs:
      - name: node
        replicas: 1
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec: {parallelism: 1, completions: 1, template: {spec: {containers: [{name: node, resources: {requests: {cpu: "1"}}}]}}}
      - name: foo
        replicas: 1
        template:
          spec: {parallelism: 1, completions: 1, template: {spec: {containers: [{name: foo, resources: {requests: {cpu: "1"}}}]}}}
"#;

/// kubernetes-sigs/kueue: pkg/controller/jobs/trainjob/trainjob_controller_test.go,
/// `TestReconciler`: "workload is created with the corresponding podsets" (`node`: 1,
/// `foo`: 1) and "podset count for the trainer job is set to .Spec.Trainer.NumNodes"
/// (`node`: 2, `foo`: 1).
#[test]
fn trainjob_podsets_come_from_its_training_runtime() {
    let tj = |trainer: &str| {
        format!(
            "{TRAINING_RUNTIME}---\napiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n\
             metadata: {{name: trainjob, namespace: ns, labels: {{kueue.x-k8s.io/queue-name: q}}}}\n\
             spec: {{runtimeRef: {{apiGroup: trainer.kubeflow.org, kind: ClusterTrainingRuntime, name: test}}{trainer}}}\n"
        )
    };
    let wl = |node: i32, node_resources: &str| {
        format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: trainjob-trainjob-9647e, namespace: ns}}\n\
             spec:\n  queueName: q\n  priority: 0\n  podSets:\n\
             \x20 - {{name: node, count: {node}, template: {{spec: {{containers: [{{name: node, resources: {node_resources}}}]}}}}}}\n\
             \x20 - {{name: foo, count: 1, template: {{spec: {{containers: [{{name: foo, resources: {{requests: {{cpu: \"1\"}}}}}}]}}}}}}\n"
        )
    };
    let cpu1 = "{requests: {cpu: \"1\"}}";
    assert_workload(&tj(""), "ns/trainjob-trainjob-9647e", &wl(1, cpu1));
    assert_workload(
        &tj(", trainer: {numNodes: 2}"),
        "ns/trainjob-trainjob-9647e",
        &wl(2, cpu1),
    );
    // resourcesPerNode replaces the resources of the `node` containers.
    assert_workload(
        &tj(", trainer: {numNodes: 3, resourcesPerNode: {limits: {nvidia.com/gpu: 2}}}"),
        "ns/trainjob-trainjob-9647e",
        &wl(3, "{limits: {nvidia.com/gpu: 2}}"),
    );
}

#[test]
fn trainjob_runtime_defaults_and_missing_runtime() {
    // A namespaced TrainingRuntime with mlPolicy.numNodes and an initializer step.
    let objs = r#"apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: rt, namespace: ns}
spec:
  mlPolicy: {numNodes: 4, torch: {numProcPerNode: auto}}
  template:
    spec:
      replicatedJobs:
      - name: dataset-initializer
        replicas: 3
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer}}
          spec: {template: {spec: {containers: [{name: dataset-initializer}]}}}
      - name: node
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec: {template: {spec: {containers: [{name: node, resources: {limits: {nvidia.com/gpu: 1}}}]}}}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tj, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}
spec: {runtimeRef: {name: rt, kind: TrainingRuntime}}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: lost, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}
spec: {runtimeRef: {name: torch-distributed}}
"#;
    let i = import(objs);
    let wl = &i.model.workloads["ns/trainjob-tj-6090f"];
    let sets: Vec<(&str, i32)> = wl
        .spec
        .pod_sets
        .iter()
        .map(|p| (p.name.as_str(), p.count))
        .collect();
    assert_eq!(sets, vec![("dataset-initializer", 1), ("node", 4)]);
    assert_eq!(i.model.workloads.len(), 1);
    let w = warnings(&i);
    assert!(
        w.iter().any(|m| m.contains("TrainJob")
            && m.contains("ClusterTrainingRuntime \"torch-distributed\"")
            && m.contains("not in the files")),
        "{w:?}"
    );
    // The runtimes themselves are references, never "not managed".
    assert!(!w.iter().any(|m| m.contains("managed by neither")), "{w:?}");
}

const LIMIT_RANGE: &str = "apiVersion: v1\nkind: LimitRange\nmetadata: {name: defaults, namespace: ns}\n\
spec: {limits: [{type: Container, default: {cpu: \"2\"}, defaultRequest: {cpu: 500m}, max: {memory: 64Gi}}]}\n";

#[test]
fn limit_range_defaults_apply_to_converted_and_given_workloads_before_limits() {
    let objs = format!(
        "{LIMIT_RANGE}---\napiVersion: batch/v1\nkind: Job\nmetadata: {{name: j, namespace: ns, labels: {{kueue.x-k8s.io/queue-name: q}}}}\n\
         spec: {{template: {{spec: {{containers: [{{name: c, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}]}}}}}}\n---\n\
         apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: given, namespace: ns}}\n\
         spec: {{queueName: q, podSets: [{{name: main, count: 1, template: {{spec: {{containers: [{{name: c, resources: {{limits: {{cpu: \"1\"}}}}}}]}}}}}}]}}\n"
    );
    let i = import(&objs);
    let q = |s: &str| s.parse::<gpuquota_model::Quantity>().unwrap();
    let job = &i.model.workloads["ns/job-j-68c25"].spec.pod_sets[0]
        .template
        .spec;
    let r = &job.containers[0].resources;
    // default fills the missing cpu limit, max the missing memory default (and so its
    // defaultRequest); defaultRequest (500m) is applied before the limits stand in for
    // requests.
    assert_eq!(r.requests.get("memory"), Some(&q("64Gi")));
    assert_eq!(r.limits.get("cpu"), Some(&q("2")));
    assert_eq!(r.requests.get("cpu"), Some(&q("500m")));
    assert_eq!(r.requests.get("nvidia.com/gpu"), Some(&q("1")));
    let given = &i.model.workloads["ns/given"].spec.pod_sets[0].template.spec;
    assert_eq!(
        given.containers[0].resources.requests.get("cpu"),
        Some(&q("500m"))
    );
    assert!(!warnings(&i).iter().any(|m| m.contains("LimitRange")));
}

#[test]
fn a_workload_outside_the_limit_range_max_is_flagged_by_validate() {
    let gpus = "apiVersion: v1\nkind: LimitRange\nmetadata: {name: gpus, namespace: ns}\nspec: {limits: [{type: Container, max: {nvidia.com/gpu: \"4\"}}]}\n";
    let objs = format!(
        "{gpus}---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: big, namespace: ns}}\n\
         spec: {{queueName: q, podSets: [{{name: main, count: 1, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: 500m}}, limits: {{nvidia.com/gpu: 8}}}}}}]}}}}}}]}}\n---\n\
         apiVersion: v1\nkind: LimitRange\nmetadata: {{name: pods, namespace: ns}}\nspec: {{limits: [{{type: Pod, min: {{cpu: \"1\"}}}}]}}\n"
    );
    let i = import(&objs);
    let d = gpuquota_model::validate::diagnostics(
        &i.model,
        &gpuquota_model::validate::Options::default(),
    );
    let texts: Vec<String> = d.iter().map(ToString::to_string).collect();
    let hit = texts
        .iter()
        .find(|m| m.contains("limit-range-violation") || m.contains("LimitRange max"))
        .unwrap_or_else(|| panic!("{texts:?}"));
    assert!(
        hit.contains("nvidia.com/gpu above the LimitRange max"),
        "{hit}"
    );
    assert!(hit.contains("cpu below the LimitRange min"), "{hit}");
    assert!(hit.contains("ns/big"), "{hit}");
    // A warning: the Workload is valid, Kueue just never admits it.
    assert!(
        gpuquota_model::validate::problems(&i.model)
            .iter()
            .all(|p| !p.to_string().contains("LimitRange")),
    );
}

/// kai-scheduler/KAI-Scheduler: pkg/podgrouper/podgrouper/plugins/cronjobs/cronjob_grouper_test.go:
/// a pod of the CronJob `cron`'s Job `cron-27958584` (uid `123456789`) is grouped as
/// `pg-cron-27958584-123456789`, owned by the Job.
#[test]
fn kai_cronjob_groups_its_active_jobs_with_the_default_grouper() {
    let objs = format!(
        "apiVersion: batch/v1\nkind: CronJob\nmetadata: {{name: cron, namespace: ns, uid: \"1\", labels: {{kai.scheduler/queue: not-this}}}}\n\
         spec:\n  schedule: \"0 * * * *\"\n  jobTemplate:\n    metadata: {{labels: {{kai.scheduler/queue: team-a}}}}\n\
         \x20   spec: {{parallelism: 2, template: {KAI_TEMPLATE}}}\n\
         status: {{active: [{{apiVersion: batch/v1, kind: Job, name: cron-27958584, namespace: ns, uid: \"123456789\"}}]}}\n---\n\
         apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: cron-27958000\n  namespace: ns\n  uid: j2\n\
         \x20 annotations: {{kai.scheduler/batch-min-member: \"2\"}}\n\
         \x20 ownerReferences: [{{apiVersion: batch/v1, kind: CronJob, name: other, controller: true}}]\n\
         spec: {{parallelism: 2, template: {KAI_TEMPLATE}}}\n"
    );
    let i = import(&objs);
    let pg = pod_group(&i, "ns/pg-cron-27958584-123456789");
    assert_eq!(pg.spec.min_member, Some(1));
    // The Job's labels (the jobTemplate's), not the CronJob's.
    assert_eq!(pg.spec.queue, "team-a");
    assert_eq!(pg.spec.priority_class_name.as_deref(), Some("train"));
    assert_eq!(pg.metadata.uid.as_deref(), Some("123456789"));
    assert_eq!(
        grouped_pods(&i, "pg-cron-27958584-123456789"),
        vec!["ns/cron-27958584-0", "ns/cron-27958584-1"]
    );
    // A CronJob's Job in the files: the default grouper's minMember 1, not the Job
    // grouper's batch-min-member.
    assert_eq!(
        pod_group(&i, "ns/pg-cron-27958000-j2").spec.min_member,
        Some(1)
    );
    assert!(i.warnings.is_empty(), "{:?}", warnings(&i));
}

/// kai-scheduler/KAI-Scheduler: pkg/podgrouper/podgrouper/plugins/knative/knative_test.go,
/// `TestGetPodGroupMetadata` and `TestGetPodGroupMetadata_MinScale`: the revision `revision`
/// (uid `2`) is one PodGroup `pg-revision-2`, priority class `inference`, queue from the
/// labels, minMember the `min-scale` annotation (3 → 3, 0 → 0, absent → 1).
#[test]
fn kai_knative_revisions_are_gangs_of_min_scale() {
    let revision = |scale: &str| {
        format!(
            "apiVersion: serving.knative.dev/v1\nkind: Revision\nmetadata:\n  name: revision\n  namespace: test-namespace\n  uid: \"2\"\n\
             \x20 labels: {{kai.scheduler/queue: test_queue, serving.knative.dev/service: test-service}}\n{scale}\
             spec: {{schedulerName: kai-scheduler, containerConcurrency: 0, containers: [{{name: container}}]}}\n"
        )
    };
    for (scale, min) in [
        (
            "  annotations: {autoscaling.knative.dev/min-scale: \"3\"}\n",
            3,
        ),
        (
            "  annotations: {autoscaling.knative.dev/min-scale: \"0\"}\n",
            0,
        ),
        ("", 1),
    ] {
        let i = import(&revision(scale));
        let pg = pod_group(&i, "test-namespace/pg-revision-2");
        assert_eq!(pg.spec.min_member, Some(min), "{scale}");
        assert_eq!(pg.spec.priority_class_name.as_deref(), Some("inference"));
        assert_eq!(pg.spec.queue, "test_queue");
        assert_eq!(
            grouped_pods(&i, "pg-revision-2").len(),
            usize::try_from(min.max(1)).unwrap()
        );
    }
    // A Service whose revision is in the files is grouped through the revision only; a
    // Service alone groups its first revision, `<service>-00001`.
    let service = "apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {name: test-service, namespace: test-namespace, uid: \"1\"}\n\
spec: {template: {metadata: {labels: {kai.scheduler/queue: test_queue}, annotations: {autoscaling.knative.dev/min-scale: \"2\"}}, spec: {schedulerName: kai-scheduler, containers: [{name: container}]}}}\n";
    let i = import(&format!("{service}---\n{}", revision("")));
    assert_eq!(i.model.pod_groups.len(), 1);
    assert!(
        i.model
            .pod_groups
            .contains_key("test-namespace/pg-revision-2")
    );
    let i = import(service);
    let pg = pod_group(&i, "test-namespace/pg-test-service-00001");
    assert_eq!(pg.spec.min_member, Some(2));
    assert_eq!(pg.spec.queue, "test_queue");
    assert_eq!(
        grouped_pods(&i, "pg-test-service-00001"),
        vec![
            "test-namespace/test-service-00001-deployment-0",
            "test-namespace/test-service-00001-deployment-1"
        ]
    );
    assert!(i.warnings.is_empty(), "{:?}", warnings(&i));
}

/// kai-scheduler/KAI-Scheduler: pkg/podgrouper/podgrouper/plugins/spark/spark_test.go: a pod
/// labelled `spark-app-name` and `spark-app-selector: spark-selector` is grouped as
/// `spark-selector`; its executors (owned by the driver pod) join the same group.
#[test]
fn kai_spark_pods_are_grouped_by_their_app_selector() {
    let pod = |name: &str, owner: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: ns\n  uid: u-{name}\n\
             \x20 labels: {{spark-app-name: spark-app, spark-app-selector: spark-selector, kai.scheduler/queue: team-a}}\n{owner}\
             spec: {{schedulerName: kai-scheduler, containers: [{{name: c, resources: {{requests: {{cpu: \"1\"}}}}}}]}}\nstatus: {{phase: Pending}}\n---\n"
        )
    };
    let objs = pod("spark-pi-driver", "")
        + &pod(
            "spark-pi-exec-1",
            "  ownerReferences: [{apiVersion: v1, kind: Pod, name: spark-pi-driver, controller: true}]\n",
        )
        + &pod(
            "spark-pi-exec-2",
            "  ownerReferences: [{apiVersion: v1, kind: Pod, name: spark-pi-driver, controller: true}]\n",
        );
    let i = import(&objs);
    let pg = pod_group(&i, "ns/spark-selector");
    assert_eq!(pg.spec.min_member, Some(1));
    assert_eq!(pg.spec.queue, "team-a");
    assert_eq!(
        grouped_pods(&i, "spark-selector"),
        vec![
            "ns/spark-pi-driver",
            "ns/spark-pi-exec-1",
            "ns/spark-pi-exec-2"
        ]
    );
    // Pods of a SparkApplication are grouped by the default grouper under the application.
    let app = "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: spark-pi, namespace: ns, uid: a1}\nspec: {batchScheduler: kai-scheduler}\n---\n";
    let owned = app.to_owned()
        + &pod(
            "spark-pi-driver",
            "  ownerReferences: [{apiVersion: sparkoperator.k8s.io/v1beta2, kind: SparkApplication, name: spark-pi, controller: true}]\n",
        )
        + &pod(
            "spark-pi-exec-1",
            "  ownerReferences: [{apiVersion: v1, kind: Pod, name: spark-pi-driver, controller: true}]\n",
        );
    let i = import(&owned);
    assert_eq!(
        i.model.pod_groups.len(),
        1,
        "{:?}",
        i.model.pod_groups.keys()
    );
    assert_eq!(
        grouped_pods(&i, "pg-spark-pi-a1"),
        vec!["ns/spark-pi-driver", "ns/spark-pi-exec-1"]
    );
    // Without its pods a SparkApplication is not modelled, with a warning.
    let i = import(app);
    assert!(
        warnings(&i)
            .iter()
            .any(|m| m.contains("SparkApplication") && m.contains("spark-submit")),
        "{:?}",
        warnings(&i)
    );
}

#[test]
fn kai_appwrapper_is_one_default_group_of_its_pod_sets() {
    let objs = format!(
        "apiVersion: workload.codeflare.dev/v1beta2\nkind: AppWrapper\nmetadata: {{name: aw, namespace: ns, uid: w1, labels: {{kai.scheduler/queue: team-a}}}}\n\
         spec:\n  components:\n\
         \x20 - template: {{apiVersion: batch/v1, kind: Job, metadata: {{name: j}}, spec: {{parallelism: 2, template: {KAI_TEMPLATE}}}}}\n\
         \x20 - template: {{apiVersion: v1, kind: Pod, metadata: {{name: p}}, spec: {{schedulerName: kai-scheduler, containers: [{{name: c}}]}}}}\n"
    );
    let i = import(&objs);
    let pg = pod_group(&i, "ns/pg-aw-w1");
    assert_eq!(pg.spec.min_member, Some(1));
    assert_eq!(pg.spec.queue, "team-a");
    assert_eq!(pg.spec.priority_class_name.as_deref(), Some("train"));
    assert_eq!(
        grouped_pods(&i, "pg-aw-w1"),
        vec!["ns/aw-0-0", "ns/aw-0-1", "ns/aw-1-0"]
    );
}

#[test]
fn replicas_per_gpu_follow_the_node_label_then_the_config_key_then_the_default() {
    use gpuquota_model::workloads::sharing::replicas_per_gpu;
    let objs = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plugin, namespace: gpu-operator}\n\
data:\n  default: \"version: v1\\nsharing:\\n  timeSlicing:\\n    resources:\\n    - {name: nvidia.com/gpu, replicas: 2}\\n\"\n\
\x20 ts8: \"version: v1\\nsharing:\\n  timeSlicing:\\n    resources:\\n    - {name: nvidia.com/gpu, replicas: 8}\\n\"\n\
\x20 whole: \"version: v1\\nflags: {migStrategy: none}\\n\"\n---\n\
apiVersion: v1\nkind: Node\nmetadata: {name: labelled, labels: {nvidia.com/gpu.replicas: \"3\", nvidia.com/device-plugin.config: ts8}}\n---\n\
apiVersion: v1\nkind: Node\nmetadata: {name: ts8, labels: {nvidia.com/device-plugin.config: ts8}}\n---\n\
apiVersion: v1\nkind: Node\nmetadata: {name: whole, labels: {nvidia.com/device-plugin.config: whole}}\n---\n\
apiVersion: v1\nkind: Node\nmetadata: {name: plain}\n";
    let r = replicas_per_gpu(&import(objs).model);
    // The plugin's own label wins; then the key the node names; then `default`.
    assert_eq!(r.of("labelled"), Some(3));
    assert_eq!(r.of("ts8"), Some(8));
    assert_eq!(r.of("whole"), None);
    assert_eq!(r.of("plain"), Some(2));
    assert_eq!(r.of("not-in-the-files"), Some(2));
}
