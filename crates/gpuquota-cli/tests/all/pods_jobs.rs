//! The engines on pods and jobs as a current cluster holds them: pod-level resources keep the
//! containers' GPUs (Kueue and KAI), an admission-gated job stays pending with Kueue's reason,
//! a KAI Queue whose limit is below its quota is accepted and capped at the limit, and a
//! PodGroup without `spec.queue` is no longer refused.

use crate::common;
use common::{gpuquota, text};

fn write(test: &str, files: &[(&str, &str)]) -> Vec<String> {
    common::write_in("pods-jobs", test, files)
}

/// One flavor, one ClusterQueue with 8 GPUs, LocalQueue `q` in `ns`.
const KUEUE: &str = common::ONE_QUEUE;

fn json(out: &std::process::Output) -> serde_json::Value {
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// Two pods of 8 GPUs each (pod-level cpu and memory, container GPUs) need 16 GPUs: the
/// 8-GPU ClusterQueue cannot admit them (kubernetes/kubernetes
/// staging/src/k8s.io/component-helpers/resource/helpers.go, `PodRequests`).
#[test]
fn kueue_counts_container_gpus_beside_pod_level_resources() {
    let job = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: plr, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\n\
               spec:\n  parallelism: 2\n  completions: 2\n  suspend: true\n  template:\n    spec:\n\
               \x20     resources: {requests: {cpu: \"4\", memory: 16Gi}}\n\
               \x20     containers: [{name: main, resources: {limits: {nvidia.com/gpu: 8}}}]\n";
    let f = write("pod-level", &[("kueue.yaml", KUEUE), ("job.yaml", job)]);
    let v = json(&gpuquota(&[
        "kueue", "schedule", &f[0], &f[1], "-o", "json",
    ]));
    assert_eq!(v["admitted"], serde_json::json!([]));
    assert_eq!(v["pending"][0]["workload"], "ns/job-plr-0fdb8");
    assert_eq!(v["pending"][0]["reason"], "ExceedsMaxQuota");
    let msg = v["pending"][0]["message"].as_str().unwrap_or_default();
    assert!(
        msg.contains("current podset request (16) > maximum capacity (8)"),
        "{msg}"
    );
}

/// kubernetes-sigs/kueue pkg/controller/core/workload_controller.go: a Workload gated by
/// `kueue.x-k8s.io/admission-gated-by` is not queued; its reason is `AdmissionGated`,
/// message "Admission is gated by: <value>". The ungated job beside it is admitted.
#[test]
fn kueue_keeps_an_admission_gated_job_pending() {
    let jobs = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: gated\n  namespace: ns\n  labels: {kueue.x-k8s.io/queue-name: q}\n\
                \x20 annotations: {kueue.x-k8s.io/admission-gated-by: example.com/approver}\n\
                spec: {suspend: true, template: {spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]}}}\n---\n\
                apiVersion: batch/v1\nkind: Job\nmetadata: {name: free, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\n\
                spec: {suspend: true, template: {spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]}}}\n";
    let f = write("gated", &[("kueue.yaml", KUEUE), ("jobs.yaml", jobs)]);
    let v = json(&gpuquota(&[
        "kueue", "schedule", &f[0], &f[1], "-o", "json",
    ]));
    assert_eq!(v["admitted"].as_array().map(Vec::len), Some(1));
    assert_eq!(v["admitted"][0]["workload"], "ns/job-free-05dc5");
    assert_eq!(
        v["pending"],
        serde_json::json!([{
            "workload": "ns/job-gated-32237",
            "clusterQueue": "research",
            "reason": "AdmissionGated",
            "message": "Admission is gated by: example.com/approver"
        }])
    );
}

const KAI_QUEUE: &str = r#"apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team}
spec:
  resources:
    gpu: {quota: 4, overQuotaWeight: 1, limit: 1}
    cpu: {quota: -1, overQuotaWeight: 1, limit: -1}
    memory: {quota: -1, overQuotaWeight: 1, limit: -1}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8", pods: "110"}
"#;

/// The 8 container GPUs of a pod with pod-level resources count against the queue's GPU
/// limit of 1 (KAI reads the pod's requests through the same rule), so KAI leaves it
/// pending `OverLimit`; the Queue's limit below its quota (1 < 4) is accepted with a
/// warning (kai-scheduler/KAI-Scheduler
/// pkg/admission/webhook/queuehooks/queue_validator.go compares neither).
#[test]
fn kai_counts_container_gpus_beside_pod_level_resources_and_accepts_limit_below_quota() {
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: big, namespace: ns, labels: {kai.scheduler/queue: team}}\n\
               spec:\n  schedulerName: kai-scheduler\n  resources: {requests: {cpu: \"2\", memory: 8Gi}}\n\
               \x20 containers: [{name: c, resources: {limits: {nvidia.com/gpu: 8}}}]\nstatus: {phase: Pending}\n";
    let f = write(
        "kai-pod-level",
        &[("kai.yaml", KAI_QUEUE), ("pod.yaml", pod)],
    );
    let out = gpuquota(&["kai", "schedule", &f[0], &f[1], "-o", "json"]);
    let v = json(&out);
    assert_eq!(v["allocated"], serde_json::json!([]));
    assert_eq!(v["pending"][0]["podGroup"], "ns/big");
    assert_eq!(v["pending"][0]["reason"], "OverLimit");
    assert_eq!(
        v["pending"][0]["message"],
        // KAI's message names the queue's deserved quota (4), not the limit.
        "queue team would exceed its gpu limit: allocated 0 + requested 8 > limit 1 (deserved 4)"
    );
    let validate = gpuquota(&["validate", &f[0]]);
    assert_eq!(
        validate.status.code(),
        Some(0),
        "{}",
        text(&validate.stderr)
    );
    let err = text(&validate.stderr);
    assert!(
        err.contains("Queue \"team\": spec.resources.gpu.limit: 1 is below the quota (4)"),
        "{err}"
    );
}

/// A PodGroup without `spec.queue` takes its queue label (the validator warns, the engine
/// schedules it): it used to be refused as `Required value`.
#[test]
fn kai_podgroup_without_spec_queue_is_scheduled_from_its_label() {
    let objs = "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: pg, namespace: ns, labels: {kai.scheduler/queue: team}}\n\
                spec: {minMember: 1}\n---\n\
                apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns, annotations: {pod-group-name: pg}}\n\
                spec: {schedulerName: kai-scheduler, containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]}\n\
                status: {phase: Pending}\n";
    let f = write(
        "kai-no-queue",
        &[("kai.yaml", KAI_QUEUE), ("pg.yaml", objs)],
    );
    let v = json(&gpuquota(&["kai", "schedule", &f[0], &f[1], "-o", "json"]));
    assert_eq!(v["pending"], serde_json::json!([]), "{v}");
    assert_eq!(v["allocated"][0]["podGroup"], "ns/pg", "{v}");
}

/// In the simulator the gate never lifts (there is no timeline of annotation changes): the
/// gated workload stays pending for the whole run with Kueue's reason, and the ungated one
/// runs.
#[test]
fn sim_keeps_an_admission_gated_workload_pending_for_the_whole_run() {
    let scenario = "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {name: gated}\n\
                    spec:\n  engine: kueue\n  cluster: [kueue.yaml]\n  start: \"2026-04-01T00:00:00Z\"\n\
                    \x20 end: \"2026-04-02T00:00:00Z\"\n  workloads:\n  - file: jobs.yaml\n";
    let wl = |name: &str, gate: &str| {
        format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata:\n  name: {name}\n  namespace: ns\n\
             \x20 creationTimestamp: \"2026-04-01T00:00:00Z\"\n  annotations: {{gpuquota.dev/runtime: 1h{gate}}}\n\
             spec: {{queueName: q, podSets: [{{name: main, count: 1, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: \"1\"}}}}}}]}}}}}}]}}\n---\n"
        )
    };
    let jobs = format!(
        "{}{}",
        wl(
            "gated",
            ", kueue.x-k8s.io/admission-gated-by: example.com/approver"
        ),
        wl("free", "")
    );
    let f = write(
        "sim-gated",
        &[
            ("sim.yaml", scenario),
            ("kueue.yaml", KUEUE),
            ("jobs.yaml", &jobs),
        ],
    );
    let v = json(&gpuquota(&["sim", &f[0], "-o", "json"]));
    let by_name = |n: &str| {
        v["workloads"]
            .as_array()
            .and_then(|ws| ws.iter().find(|w| w["workload"] == n).cloned())
            .unwrap_or_default()
    };
    let gated = by_name("ns/gated");
    assert_eq!(gated["runs"], serde_json::json!([]));
    assert_eq!(
        gated["pending"],
        serde_json::json!({"reason": "AdmissionGated", "message": "Admission is gated by: example.com/approver"})
    );
    assert_eq!(by_name("ns/free")["runs"].as_array().map(Vec::len), Some(1));
}
