//! `gpuquota kueue schedule` on the objects users submit: for every kind Kueue's job
//! framework converts, a small manifest and the Workload Kueue creates from it (written out
//! by hand, as Kueue writes it) give byte-identical output.

use crate::common;
use common::{gpuquota, text};

/// Writes `files` into a fresh directory named after the test.
fn write(test: &str, files: &[(&str, &str)]) -> Vec<String> {
    common::write_in("jobs", test, files)
}

/// One flavor, one ClusterQueue with 8 GPUs, 64 cpu, 512Gi; LocalQueue `q` in `ns`.
const PLATFORM: &str = r#"apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h200}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: research}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: h200
      resources:
      - {name: cpu, nominalQuota: 64}
      - {name: memory, nominalQuota: 512Gi}
      - {name: nvidia.com/gpu, nominalQuota: 8}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: ns}
spec: {clusterQueue: research}
---
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
integrations:
  frameworks: [batch/job, jobset.x-k8s.io/jobset, kubeflow.org/pytorchjob, kubeflow.org/mpijob,
    ray.io/raycluster, ray.io/rayjob, leaderworkerset.x-k8s.io/leaderworkerset, pod,
    statefulset, deployment, workload.codeflare.dev/appwrapper, trainer.kubeflow.org/trainjob]
"#;

/// `kueue schedule` on the platform plus `objects`, and on the platform plus `workloads`,
/// print the same bytes; the object run warns about nothing. Returns the JSON.
fn same_schedule(test: &str, objects: &str, workloads: &str) -> serde_json::Value {
    let files = write(
        test,
        &[
            ("platform.yaml", PLATFORM),
            ("objects.yaml", objects),
            ("workloads.yaml", workloads),
        ],
    );
    let from_objects = gpuquota(&["kueue", "schedule", &files[0], &files[1]]);
    let from_workloads = gpuquota(&["kueue", "schedule", &files[0], &files[2]]);
    assert_eq!(
        from_objects.status.code(),
        Some(0),
        "{}",
        text(&from_objects.stderr)
    );
    assert_eq!(
        from_workloads.status.code(),
        Some(0),
        "{}",
        text(&from_workloads.stderr)
    );
    assert_eq!(text(&from_objects.stderr), "", "{test}: warnings");
    assert_eq!(
        text(&from_objects.stdout),
        text(&from_workloads.stdout),
        "{test}"
    );
    serde_json::from_slice(&from_objects.stdout).expect("JSON")
}

fn admitted(v: &serde_json::Value) -> Vec<(String, Vec<(String, i64)>)> {
    v["admitted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["workload"].as_str().unwrap().to_owned(),
                a["podSets"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| {
                        (
                            p["name"].as_str().unwrap().to_owned(),
                            p["count"].as_i64().unwrap(),
                        )
                    })
                    .collect(),
            )
        })
        .collect()
}

fn pending(v: &serde_json::Value) -> Vec<String> {
    v["pending"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["workload"].as_str().unwrap().to_owned())
        .collect()
}

const GPU2: &str = "{containers: [{name: c, resources: {limits: {nvidia.com/gpu: 2}}}]}";

#[test]
fn batch_jobs_schedule_as_their_workloads() {
    // Two Jobs of 3 × 2 GPUs: the older is admitted, the newer waits (8 GPUs).
    let jobs = format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: older, namespace: ns, creationTimestamp: \"2026-04-01T01:00:00Z\", labels: {{kueue.x-k8s.io/queue-name: q}}}}\n\
         spec: {{parallelism: 3, suspend: true, template: {{spec: {GPU2}}}}}\n---\n\
         apiVersion: batch/v1\nkind: Job\nmetadata: {{name: newer, namespace: ns, creationTimestamp: \"2026-04-01T02:00:00Z\", labels: {{kueue.x-k8s.io/queue-name: q}}, annotations: {{kueue.x-k8s.io/job-min-parallelism: \"1\"}}}}\n\
         spec: {{parallelism: 3, completions: 6, template: {{spec: {GPU2}}}}}\n"
    );
    // Names: "job-" + name + "-" + sha1("Job\nbatch\n<name>\n")[:5].
    let wls = format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: job-older-{}, namespace: ns, creationTimestamp: \"2026-04-01T01:00:00Z\"}}\n\
         spec: {{queueName: q, priority: 0, podSets: [{{name: main, count: 3, template: {{spec: {GPU2}}}}}]}}\n---\n\
         apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: job-newer-{}, namespace: ns, creationTimestamp: \"2026-04-01T02:00:00Z\"}}\n\
         spec: {{queueName: q, priority: 0, podSets: [{{name: main, count: 3, minCount: 1, template: {{spec: {GPU2}}}}}]}}\n",
        "fb226", "68b09"
    );
    let v = same_schedule("job", &jobs, &wls);
    assert_eq!(admitted(&v)[0].0, "ns/job-older-fb226");
    // Partial admission: the newer Job's minCount lets 1 of its 3 pods in.
    assert_eq!(admitted(&v).len(), 2, "{v}");
    assert_eq!(
        admitted(&v)[1],
        (
            "ns/job-newer-68b09".to_owned(),
            vec![("main".to_owned(), 1)]
        )
    );
}

#[test]
fn jobset_schedules_as_its_workload() {
    let js = format!(
        "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {{name: js, namespace: ns, labels: {{kueue.x-k8s.io/queue-name: q}}}}\n\
         spec: {{replicatedJobs: [{{name: workers, replicas: 2, template: {{spec: {{parallelism: 2, template: {{spec: {GPU2}}}}}}}}}]}}\n"
    );
    let wl = format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: jobset-js-{}, namespace: ns}}\n\
         spec: {{queueName: q, priority: 0, podSets: [{{name: workers, count: 4, template: {{spec: {GPU2}}}}}]}}\n",
        "84e3c"
    );
    let v = same_schedule("jobset", &js, &wl);
    assert_eq!(
        admitted(&v),
        vec![(
            "ns/jobset-js-84e3c".to_owned(),
            vec![("workers".to_owned(), 4)]
        )]
    );
}

#[test]
fn kubeflow_and_mpi_jobs_schedule_as_their_workloads() {
    let jobs = format!(
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {{name: pt, namespace: ns, labels: {{kueue.x-k8s.io/queue-name: q}}}}\n\
         spec: {{pytorchReplicaSpecs: {{Worker: {{replicas: 2, template: {{spec: {GPU2}}}}}, Master: {{template: {{spec: {GPU2}}}}}}}}}\n---\n\
         apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {{name: mpi, namespace: ns, labels: {{kueue.x-k8s.io/queue-name: q}}}}\n\
         spec: {{mpiReplicaSpecs: {{Launcher: {{template: {{spec: {{containers: [{{name: l, resources: {{requests: {{cpu: \"1\"}}}}}}]}}}}}}, Worker: {{replicas: 2, template: {{spec: {GPU2}}}}}}}}}\n"
    );
    let wls = format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: pytorchjob-pt-{}, namespace: ns}}\n\
         spec: {{queueName: q, priority: 0, podSets: [{{name: master, count: 1, template: {{spec: {GPU2}}}}}, {{name: worker, count: 2, template: {{spec: {GPU2}}}}}]}}\n---\n\
         apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: mpijob-mpi-{}, namespace: ns}}\n\
         spec: {{queueName: q, priority: 0, podSets: [{{name: launcher, count: 1, template: {{spec: {{containers: [{{name: l, resources: {{requests: {{cpu: \"1\"}}}}}}]}}}}}}, {{name: worker, count: 2, template: {{spec: {GPU2}}}}}]}}\n",
        "aa0cf", "e7b1d"
    );
    let v = same_schedule("kubeflow", &jobs, &wls);
    let names: Vec<String> = admitted(&v)
        .into_iter()
        .map(|a| a.0)
        .chain(pending(&v))
        .collect();
    assert_eq!(names.len(), 2);
    assert!(names.contains(&"ns/pytorchjob-pt-aa0cf".to_owned()), "{v}");
    assert!(names.contains(&"ns/mpijob-mpi-e7b1d".to_owned()), "{v}");
}

#[test]
fn ray_jobs_schedule_as_their_workloads() {
    let objs = format!(
        "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {{name: rj, namespace: ns, labels: {{kueue.x-k8s.io/queue-name: q}}}}\n\
         spec:\n  rayClusterSpec:\n    headGroupSpec: {{template: {{spec: {{containers: [{{name: head, resources: {{requests: {{cpu: \"2\"}}}}}}]}}}}}}\n\
         \x20   workerGroupSpecs: [{{groupName: gpu, replicas: 3, template: {{spec: {GPU2}}}}}]\n"
    );
    let wl = format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: rayjob-rj-{}, namespace: ns}}\n\
         spec:\n  queueName: q\n  priority: 0\n  podSets:\n  - {{name: head, count: 1, template: {{spec: {{containers: [{{name: head, resources: {{requests: {{cpu: \"2\"}}}}}}]}}}}}}\n\
         \x20 - {{name: gpu, count: 3, template: {{spec: {GPU2}}}}}\n\
         \x20 - {{name: submitter, count: 1, template: {{spec: {{restartPolicy: Never, containers: [{{name: ray-job-submitter, resources: {{requests: {{cpu: 500m, memory: 200Mi}}, limits: {{cpu: \"1\", memory: 1Gi}}}}}}]}}}}}}\n",
        "070a9"
    );
    let v = same_schedule("rayjob", &objs, &wl);
    assert_eq!(admitted(&v)[0].0, "ns/rayjob-rj-070a9");
    assert_eq!(admitted(&v)[0].1.len(), 3);
}

#[test]
fn leaderworkerset_pods_and_statefulset_schedule_as_their_workloads() {
    let objs = format!(
        "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {{name: lws, namespace: ns, labels: {{kueue.x-k8s.io/queue-name: q}}}}\n\
         spec: {{replicas: 1, leaderWorkerTemplate: {{size: 2, workerTemplate: {{spec: {GPU2}}}}}}}\n---\n\
         apiVersion: v1\nkind: Pod\nmetadata: {{name: solo, namespace: ns, labels: {{kueue.x-k8s.io/queue-name: q}}}}\nspec: {GPU2}\n---\n\
         apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {{name: sts, namespace: ns, labels: {{kueue.x-k8s.io/queue-name: q}}}}\n\
         spec: {{replicas: 1, template: {{spec: {{containers: [{{name: s, resources: {{requests: {{cpu: \"1\"}}}}}}]}}}}}}\n"
    );
    // Role hash of the StatefulSet's pod: sha256 of Kueue's pod shape, first 8 hex digits.
    let wls = format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: leaderworkerset-lws-0-{}, namespace: ns}}\n\
         spec: {{queueName: q, priority: 0, podSets: [{{name: main, count: 2, template: {{spec: {GPU2}}}}}]}}\n---\n\
         apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: pod-solo-{}, namespace: ns}}\n\
         spec: {{queueName: q, priority: 0, podSets: [{{name: main, count: 1, template: {{spec: {GPU2}}}}}]}}\n---\n\
         apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: statefulset-sts-{}, namespace: ns, annotations: {{kueue.x-k8s.io/is-group-workload: \"true\"}}}}\n\
         spec: {{queueName: q, priority: 0, podSets: [{{name: main, count: 1, template: {{spec: {{containers: [{{name: s, resources: {{requests: {{cpu: \"1\"}}}}}}]}}}}}}]}}\n",
        "97565", "8456e", "18b6e"
    );
    let v = same_schedule("lws", &objs, &wls);
    assert_eq!(admitted(&v).len(), 3, "{v}");
}

#[test]
fn converted_workloads_validate() {
    let objs = format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: a, namespace: ns, labels: {{kueue.x-k8s.io/queue-name: q}}}}\nspec: {{template: {{spec: {GPU2}}}}}\n---\n\
         apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {{name: lws, namespace: ns, labels: {{kueue.x-k8s.io/queue-name: q}}}}\n\
         spec: {{replicas: 2, leaderWorkerTemplate: {{size: 2, workerTemplate: {{spec: {GPU2}}}}}}}\n"
    );
    let files = write(
        "validate",
        &[("platform.yaml", PLATFORM), ("objects.yaml", &objs)],
    );
    let out = gpuquota(&["validate", &files[0], &files[1]]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert_eq!(text(&out.stderr), "");
}

#[test]
fn appwrapper_schedules_as_its_workload() {
    // A wrapped Job (parallelism 2) and a wrapped PyTorchJob (Master 1, Worker 2): PodSets
    // aw-0, aw-1, aw-2 in component order.
    let objs = format!(
        "apiVersion: workload.codeflare.dev/v1beta2\nkind: AppWrapper\nmetadata: {{name: wrapped, namespace: ns, labels: {{kueue.x-k8s.io/queue-name: q}}}}\n\
         spec:\n  suspend: true\n  components:\n\
         \x20 - template: {{apiVersion: batch/v1, kind: Job, metadata: {{name: prep}}, spec: {{parallelism: 2, template: {{spec: {GPU2}}}}}}}\n\
         \x20 - template: {{apiVersion: kubeflow.org/v1, kind: PyTorchJob, metadata: {{name: pt}}, spec: {{pytorchReplicaSpecs: {{Master: {{template: {{spec: {GPU2}}}}}, Worker: {{replicas: 2, template: {{spec: {GPU2}}}}}}}}}}}\n"
    );
    let wl = format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: appwrapper-wrapped-{}, namespace: ns}}\n\
         spec: {{queueName: q, priority: 0, podSets: [{{name: wrapped-0, count: 2, template: {{spec: {GPU2}}}}}, {{name: wrapped-1, count: 1, template: {{spec: {GPU2}}}}}, {{name: wrapped-2, count: 2, template: {{spec: {GPU2}}}}}]}}\n",
        "94cf6"
    );
    let v = same_schedule("appwrapper", &objs, &wl);
    // 5 pods × 2 GPUs = 10 > 8: the whole AppWrapper waits.
    assert_eq!(pending(&v), vec!["ns/appwrapper-wrapped-94cf6".to_owned()]);
}

const GPU2_LIMITS: &str = "{limits: {nvidia.com/gpu: 2}}";

#[test]
fn trainjob_schedules_as_its_workload() {
    let objs = format!(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata: {{name: torch}}\n\
         spec:\n  mlPolicy: {{numNodes: 1}}\n  template:\n    spec:\n      replicatedJobs:\n\
         \x20     - {{name: node, template: {{metadata: {{labels: {{trainer.kubeflow.org/trainjob-ancestor-step: trainer}}}}, spec: {{template: {{spec: {{containers: [{{name: node}}]}}}}}}}}}}\n\
         ---\napiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {{name: tj, namespace: ns, labels: {{kueue.x-k8s.io/queue-name: q}}}}\n\
         spec: {{suspend: true, runtimeRef: {{name: torch}}, trainer: {{numNodes: 3, resourcesPerNode: {GPU2_LIMITS}}}}}\n"
    );
    let wl = format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: trainjob-tj-{}, namespace: ns}}\n\
         spec: {{queueName: q, priority: 0, podSets: [{{name: node, count: 3, template: {{spec: {{containers: [{{name: node, resources: {{limits: {{nvidia.com/gpu: 2}}}}}}]}}}}}}]}}\n",
        "6090f"
    );
    let v = same_schedule("trainjob", &objs, &wl);
    assert_eq!(
        admitted(&v),
        vec![(
            "ns/trainjob-tj-6090f".to_owned(),
            vec![("node".to_owned(), 3)]
        )]
    );
}

#[test]
fn limit_range_defaults_count_for_jobs_and_workloads_alike() {
    // Containers naming no cpu get the namespace's defaultRequest of 40 cpu: of two
    // one-pod Jobs only one fits the 64 cpu.
    let lr = "apiVersion: v1\nkind: LimitRange\nmetadata: {name: defaults, namespace: ns}\nspec: {limits: [{type: Container, defaultRequest: {cpu: \"40\"}}]}\n---\n";
    let jobs = format!(
        "{lr}apiVersion: batch/v1\nkind: Job\nmetadata: {{name: older, namespace: ns, creationTimestamp: \"2026-04-01T01:00:00Z\", labels: {{kueue.x-k8s.io/queue-name: q}}}}\n\
         spec: {{suspend: true, template: {{spec: {GPU2}}}}}\n---\n\
         apiVersion: batch/v1\nkind: Job\nmetadata: {{name: newer, namespace: ns, creationTimestamp: \"2026-04-01T02:00:00Z\", labels: {{kueue.x-k8s.io/queue-name: q}}}}\n\
         spec: {{suspend: true, template: {{spec: {GPU2}}}}}\n"
    );
    let wls = format!(
        "{lr}apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: job-older-fb226, namespace: ns, creationTimestamp: \"2026-04-01T01:00:00Z\"}}\n\
         spec: {{queueName: q, priority: 0, podSets: [{{name: main, count: 1, template: {{spec: {GPU2}}}}}]}}\n---\n\
         apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: job-newer-68b09, namespace: ns, creationTimestamp: \"2026-04-01T02:00:00Z\"}}\n\
         spec: {{queueName: q, priority: 0, podSets: [{{name: main, count: 1, template: {{spec: {GPU2}}}}}]}}\n"
    );
    let v = same_schedule("limitrange", &jobs, &wls);
    assert_eq!(admitted(&v).len(), 1, "{v}");
    assert_eq!(admitted(&v)[0].0, "ns/job-older-fb226");
    assert_eq!(pending(&v), vec!["ns/job-newer-68b09".to_owned()]);
}

#[test]
fn jobs_claiming_gpus_through_dra_are_charged_under_the_mapped_resource() {
    // kubernetes-sigs/kueue: pkg/dra/claims.go — with `deviceClassMappings` a claim template
    // of 2 GPUs costs 2 nvidia.com/gpu per pod: 3 pods take 6 of the 8 GPUs and a second
    // Job of 2 pods (4 more) waits, although no container asks for nvidia.com/gpu.
    let platform = PLATFORM.replace(
        "integrations:",
        "resources:\n  deviceClassMappings: [{name: nvidia.com/gpu, deviceClassNames: [gpu.nvidia.com]}]\nintegrations:",
    );
    let job = |name: &str, hour: u32, pods: u32| {
        format!(
            "---\napiVersion: batch/v1\nkind: Job\nmetadata: {{name: {name}, namespace: ns, creationTimestamp: \"2026-04-01T{hour:02}:00:00Z\", labels: {{kueue.x-k8s.io/queue-name: q}}}}\n\
             spec: {{parallelism: {pods}, completions: {pods}, suspend: true, template: {{spec: {{resourceClaims: [{{name: gpus, resourceClaimTemplateName: two-gpus}}], containers: [{{name: c, resources: {{requests: {{cpu: \"1\"}}, claims: [{{name: gpus}}]}}}}]}}}}}}\n"
        )
    };
    let objects = format!(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {{name: two-gpus, namespace: ns}}\n\
         spec: {{spec: {{devices: {{requests: [{{name: gpus, exactly: {{deviceClassName: gpu.nvidia.com, count: 2}}}}]}}}}}}\n{}{}",
        job("first", 1, 3),
        job("second", 2, 2)
    );
    let files = write(
        "dra",
        &[
            ("platform.yaml", platform.as_str()),
            ("objects.yaml", objects.as_str()),
        ],
    );
    let out = gpuquota(&["kueue", "schedule", &files[0], &files[1]]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "", "warnings");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let names: Vec<String> = admitted(&v).into_iter().map(|a| a.0).collect();
    assert_eq!(names.len(), 1, "{v}");
    assert!(names[0].starts_with("ns/job-first-"), "{v}");
    let p = pending(&v);
    assert_eq!(p.len(), 1, "{v}");
    assert!(p[0].starts_with("ns/job-second-"), "{v}");
}
