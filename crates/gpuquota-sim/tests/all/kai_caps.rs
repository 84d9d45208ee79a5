//! Namespace ResourceQuotas under the KAI mode: the API server refuses a job's pods while
//! its namespace's cap has no room, whatever KAI's queues would allow.

use crate::common;

use gpuquota_sim::kai;

fn run(end: &str) -> kai::KaiOutcome {
    let cluster = [
        "apiVersion: v1\nkind: Node\nmetadata: {name: n0}\nstatus: {allocatable: {nvidia.com/gpu: \"4\", cpu: \"64\", memory: 256Gi}}\n",
        "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: dept}\nspec: {resources: {gpu: {quota: -1, overQuotaWeight: 1, limit: -1}}}\n",
        "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q}\nspec: {parentQueue: dept, resources: {gpu: {quota: 4, overQuotaWeight: 1, limit: -1}}}\n",
        "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: cap, namespace: ns}\nspec: {hard: {requests.nvidia.com/gpu: \"2\"}}\n",
        "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: j0, namespace: ns, creationTimestamp: \"2026-04-01T00:00:00Z\", annotations: {gpuquota.dev/runtime: 10s}}\nspec: {queue: q, minMember: 1}\n",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: j0-0, namespace: ns, annotations: {pod-group-name: j0}}\nspec: {schedulerName: kai-scheduler, containers: [{name: c, resources: {limits: {nvidia.com/gpu: \"2\"}}}]}\nstatus: {phase: Pending}\n",
        "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: j1, namespace: ns, creationTimestamp: \"2026-04-01T00:00:01Z\", annotations: {gpuquota.dev/runtime: 10s}}\nspec: {queue: q, minMember: 1}\n",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: j1-0, namespace: ns, annotations: {pod-group-name: j1}}\nspec: {schedulerName: kai-scheduler, containers: [{name: c, resources: {limits: {nvidia.com/gpu: \"1\"}}}]}\nstatus: {phase: Pending}\n",
    ]
    .join("---\n");
    let text = format!(
        "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {{name: k}}\nspec:\n  engine: kai\n  cluster: [c.yaml]\n  start: \"2026-04-01T00:00:00Z\"\n  end: \"{end}\"\n  kai: {{sessionInterval: 1s}}\n"
    );
    let sim = gpuquota_sim::fuzzing::scenario(
        "k.yaml",
        &text,
        "k",
        &common::files(vec![("c.yaml", cluster)]),
    )
    .expect("valid KAI scenario");
    gpuquota_sim::fuzzing::run_kai(&sim).expect("runs")
}

/// j0 takes 2 GPUs of the namespace's cap of 2 at 0 s; j1 (1 GPU, at 1 s) fits the node
/// (4) and its queue (quota 4) but not the cap: Forbidden until j0 finishes at 10 s, then it
/// runs 10 s to 20 s.
#[test]
fn kai_jobs_wait_for_their_namespace_cap() {
    let o = run("2026-04-01T00:01:00Z");
    assert_eq!(o.jobs[0].key, "ns/j0");
    assert_eq!(o.jobs[0].runs[0].start_ms, 0);
    assert_eq!(o.jobs[0].runs[0].end_ms, 10_000);
    assert_eq!(o.jobs[1].key, "ns/j1");
    assert_eq!(o.jobs[1].first_start_ms, Some(10_000));
    assert_eq!(o.jobs[1].runs[0].end_ms, 20_000);
    let o = run("2026-04-01T00:00:05Z");
    assert_eq!(
        o.jobs[1].pending,
        Some((
            "Forbidden".to_owned(),
            "exceeded quota: cap, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=2, limited: requests.nvidia.com/gpu=2".to_owned()
        ))
    );
    assert!(o.jobs[1].runs.is_empty());
}
