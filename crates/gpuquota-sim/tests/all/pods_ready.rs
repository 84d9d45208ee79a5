//! Kueue's `waitForPodsReady` in the simulator: the PodsReady timeout, the requeuing
//! backoff, the deactivation after `backoffLimitCount`, `blockAdmission` and the requeuing
//! timestamp. Each test ports one test of kubernetes-sigs/kueue
//! test/integration/singlecluster/scheduler/podsready/scheduler_test.go (named in its doc
//! comment, as "Describe / Context / It"). Upstream sets `PodsReady` by hand or never; here
//! a workload is ready when its pods run plus its `gpuquota.dev/pods-ready-after` delay
//! (`never`: never ready). Upstream's timeouts are seconds of wall clock; here
//! `T` = 10 minutes of virtual time, and `backoffBaseSeconds: 1` as upstream: the n-th
//! timeout requeues after 2^(n−1) s (the jitter's expected value, 0.005 %, rounds to 0 ms).

use serde_json::Value;

use crate::common::files;

/// The PodsReady timeout of these tests, ms.
const T: i64 = 600_000;
/// One second, ms.
const S: i64 = 1_000;

/// Upstream's platform: ClusterQueues `prod-cq` and `dev-cq` (5 CPUs each, cohort `all`),
/// LocalQueues `prod-queue`/`dev-queue`, plus `standalone-cq` (1 CPU, no cohort) with
/// `standalone-queue`; `extra` adds objects; `wfpr` is the Configuration's
/// `waitForPodsReady` (a YAML flow mapping).
fn platform(wfpr: &str, extra: &str) -> String {
    format!(
        r#"apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
waitForPodsReady: {wfpr}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: default}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: prod-cq}}
spec:
  cohortName: all
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{{name: default, resources: [{{name: cpu, nominalQuota: 5}}]}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: dev-cq}}
spec:
  cohortName: all
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{{name: default, resources: [{{name: cpu, nominalQuota: 5}}]}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: standalone-cq}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{{name: default, resources: [{{name: cpu, nominalQuota: 1}}]}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: prod-queue, namespace: ns}}
spec: {{clusterQueue: prod-cq}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: dev-queue, namespace: ns}}
spec: {{clusterQueue: dev-cq}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: standalone-queue, namespace: ns}}
spec: {{clusterQueue: standalone-cq}}
{extra}"#
    )
}

/// A workload of `queue` asking `cpu` CPUs, created `created_s` seconds after the start
/// (negative: before it), with priority `priority` and `annotations` (a YAML flow mapping).
fn wl(
    name: &str,
    queue: &str,
    cpu: u32,
    created_s: i64,
    priority: i32,
    annotations: &str,
) -> String {
    let at = gpuquota_sim::scenario::at_ms(start(), created_s * S);
    format!(
        r#"---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: {name}
  namespace: ns
  creationTimestamp: "{at}"
  annotations: {annotations}
spec:
  queueName: {queue}
  priority: {priority}
  podSets:
  - name: main
    count: 1
    template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: "{cpu}"}}}}}}]}}}}
"#
    )
}

fn start() -> gpuquota_model::Timestamp {
    gpuquota_model::Timestamp::parse("2026-04-01T00:00:00Z").expect("timestamp")
}

/// Runs the platform until `end_ms`; the JSON report and the table.
fn run(cluster: &str, end_ms: i64) -> (Value, String) {
    let end = gpuquota_sim::scenario::at_ms(start(), end_ms);
    let sim = format!(
        "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {{name: podsready}}\nspec:\n  cluster: [c.yaml]\n  start: \"2026-04-01T00:00:00Z\"\n  end: \"{end}\"\n"
    );
    let read = files(vec![("c.yaml", cluster.to_owned())]);
    let s = gpuquota_sim::fuzzing::scenario("s.yaml", &sim, "s", &read).expect("valid scenario");
    let r = gpuquota_sim::fuzzing::run_kueue(&s).expect("simulates");
    (r.to_json(), r.to_table())
}

/// The workload `ns/name` of the report.
fn workload<'a>(j: &'a Value, name: &str) -> &'a Value {
    j["workloads"]
        .as_array()
        .expect("workloads")
        .iter()
        .find(|w| w["workload"] == format!("ns/{name}"))
        .expect("workload")
}

/// `name`'s runs as (start, end, end kind or eviction reason).
fn runs(j: &Value, name: &str) -> Vec<(i64, i64, String)> {
    workload(j, name)["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| {
            let how = r["reason"].as_str().or(r["end"].as_str()).expect("end");
            (
                r["startMs"].as_i64().expect("start"),
                r["endMs"].as_i64().expect("end"),
                how.to_owned(),
            )
        })
        .collect()
}

/// `requeueState.count`: the runs the PodsReady timeout ended.
fn requeue_count(j: &Value, name: &str) -> usize {
    runs(j, name)
        .iter()
        .filter(|r| r.2 == "PodsReadyTimeout")
        .count()
}

fn run_of(j: &Value, name: &str, k: usize) -> (i64, i64, String) {
    runs(j, name)[k].clone()
}

const NEVER: &str = "{gpuquota.dev/pods-ready-after: never}";

/// Upstream: "SchedulerWithWaitForPodsReady / Long PodsReady timeout / Should unblock
/// admission of new workloads in other ClusterQueues once the admitted workload exceeds
/// timeout" (both variants: PodsReady set with reason `PodsReady` or `Started`). prod-wl
/// is admitted at 0 and ready 10 min later; dev-wl (created at 1 s) waits until then and
/// is admitted in dev-cq at 10 min.
#[test]
fn blocked_admission_resumes_once_the_admitted_workload_is_ready() {
    let c = platform(
        "{enable: true, blockAdmission: true, timeout: 1h, requeuingStrategy: {backoffBaseSeconds: 1}}",
        &(wl(
            "prod-wl",
            "prod-queue",
            2,
            0,
            0,
            "{gpuquota.dev/pods-ready-after: 10m, gpuquota.dev/runtime: 2h}",
        ) + &wl("dev-wl", "dev-queue", 2, 1, 0, "{gpuquota.dev/runtime: 1h}")),
    );
    let (j, _) = run(&c, 3 * 3_600_000);
    assert_eq!(
        runs(&j, "prod-wl"),
        vec![(0, 2 * 3_600_000, "Finished".to_owned())]
    );
    assert_eq!(workload(&j, "dev-wl")["queue"], "dev-cq");
    assert_eq!(
        runs(&j, "dev-wl"),
        vec![(T, T + 3_600_000, "Finished".to_owned())]
    );
}

/// Upstream: "SchedulerWithWaitForPodsReady / Long PodsReady timeout / Should unblock
/// admission of new workloads once the admitted workload is deleted". prod-wl is never
/// ready and ends (deleted upstream, finished here) at 20 min; dev-wl waits until then.
#[test]
fn blocked_admission_resumes_once_the_admitted_workload_ends() {
    let c = platform(
        "{enable: true, timeout: 1h, requeuingStrategy: {backoffBaseSeconds: 1}}",
        &(wl(
            "prod-wl",
            "prod-queue",
            2,
            0,
            0,
            "{gpuquota.dev/pods-ready-after: never, gpuquota.dev/runtime: 20m}",
        ) + &wl(
            "dev-wl",
            "dev-queue",
            2,
            60,
            0,
            "{gpuquota.dev/runtime: 1h}",
        )),
    );
    let (j, _) = run(&c, 3 * 3_600_000);
    assert_eq!(runs(&j, "prod-wl"), vec![(0, 2 * T, "Finished".to_owned())]);
    assert_eq!(
        runs(&j, "dev-wl"),
        vec![(2 * T, 2 * T + 3_600_000, "Finished".to_owned())]
    );
}

/// Upstream: "SchedulerWithWaitForPodsReady / Long PodsReady timeout / Should block
/// admission of one new workload if two are considered in the same scheduling cycle".
/// test-cq (25 CPUs, lending them to cohort `all`) lets each 11-CPU workload borrow; both
/// are heads of the first cycle (created before the start, prod-wl first): prod-wl is
/// admitted in prod-cq, dev-wl goes back to its queue. Beyond upstream's check: at the
/// timeout (1 h) prod-wl is evicted and dev-wl admitted in dev-cq.
#[test]
fn one_of_two_workloads_of_one_cycle_is_blocked() {
    let extra = r#"---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: test-cq}
spec:
  cohortName: all
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: default, resources: [{name: cpu, nominalQuota: 25, borrowingLimit: 0}]}]
"#;
    let c = platform(
        "{enable: true, blockAdmission: true, timeout: 1h, requeuingStrategy: {backoffBaseSeconds: 1}}",
        &(extra.to_owned()
            + &wl("prod-wl", "prod-queue", 11, -2, 0, NEVER)
            + &wl("dev-wl", "dev-queue", 11, -1, 0, NEVER)),
    );
    let (j, _) = run(&c, 5_400_000);
    assert_eq!(workload(&j, "prod-wl")["queue"], "prod-cq");
    assert_eq!(
        runs(&j, "prod-wl"),
        vec![(0, 3_600_000, "PodsReadyTimeout".to_owned())]
    );
    assert_eq!(workload(&j, "dev-wl")["queue"], "dev-cq");
    assert_eq!(
        runs(&j, "dev-wl"),
        vec![(3_600_000, 5_400_000, "Cut".to_owned())]
    );
}

/// Upstream: "SchedulerWithWaitForPodsReadyNonblockingMode / Long PodsReady timeout /
/// Should not block admission of one new workload if two are considered in the same
/// scheduling cycle": as above with `blockAdmission: false`, both are admitted at 0.
#[test]
fn without_block_admission_both_workloads_of_one_cycle_are_admitted() {
    let extra = r#"---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: test-cq}
spec:
  cohortName: all
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: default, resources: [{name: cpu, nominalQuota: 25, borrowingLimit: 0}]}]
"#;
    let c = platform(
        "{enable: true, blockAdmission: false, timeout: 1h, requeuingStrategy: {backoffBaseSeconds: 1}}",
        &(extra.to_owned()
            + &wl("prod-wl", "prod-queue", 11, -2, 0, NEVER)
            + &wl("dev-wl", "dev-queue", 11, -1, 0, NEVER)),
    );
    let (j, _) = run(&c, 1_800_000);
    assert_eq!(runs(&j, "prod-wl"), vec![(0, 1_800_000, "Cut".to_owned())]);
    assert_eq!(runs(&j, "dev-wl"), vec![(0, 1_800_000, "Cut".to_owned())]);
}

/// Upstream: "SchedulerWithWaitForPodsReady / Short PodsReady timeout / Should requeue a
/// workload which exceeded the timeout to reach PodsReady=True". prod1 (priority 100) is
/// admitted at 0, prod2 (priority 0) waits; at T prod1 is evicted (`PodsReadyTimeout`,
/// requeue count 1, back after 1 s) and prod2 is admitted at T.
#[test]
fn a_timed_out_workload_is_requeued_and_the_next_one_admitted() {
    let c = platform(
        "{enable: true, blockAdmission: true, timeout: 10m, requeuingStrategy: {backoffLimitCount: 2, backoffBaseSeconds: 1}}",
        &(wl("prod1", "prod-queue", 2, 0, 100, NEVER) + &wl("prod2", "prod-queue", 2, 0, 0, NEVER)),
    );
    let (j, table) = run(&c, T + 5 * 60_000);
    assert_eq!(
        runs(&j, "prod1"),
        vec![(0, T, "PodsReadyTimeout".to_owned())]
    );
    assert_eq!(requeue_count(&j, "prod1"), 1);
    assert_eq!(workload(&j, "prod1")["runs"][0]["by"], "waitForPodsReady");
    assert_eq!(
        runs(&j, "prod2"),
        vec![(T, T + 5 * 60_000, "Cut".to_owned())]
    );
    assert!(workload(&j, "prod1")["pending"].is_object(), "{table}");
}

/// Upstream: "SchedulerWithWaitForPodsReady / Short PodsReady timeout / Should re-admit a
/// timed out workload and deactivate a workload exceeded the re-queue count limit. After
/// that re-activating a workload" (up to the deactivation; reactivating by the user is
/// out of reach). backoffLimitCount 2: timeouts at T (count 1, back after 1 s), at
/// 2T + 1 s (count 2, back after 2 s); the third at 3T + 3 s deactivates it: reason
/// `DeactivatedDueToRequeuingLimitExceeded`, three admissions in all as upstream's metric.
#[test]
fn the_third_timeout_deactivates_the_workload() {
    let c = platform(
        "{enable: true, blockAdmission: true, timeout: 10m, requeuingStrategy: {backoffLimitCount: 2, backoffBaseSeconds: 1}}",
        &wl("prod", "prod-queue", 2, 0, 0, NEVER),
    );
    let (j, table) = run(&c, 4 * T);
    assert_eq!(
        runs(&j, "prod"),
        vec![
            (0, T, "PodsReadyTimeout".to_owned()),
            (T + S, 2 * T + S, "PodsReadyTimeout".to_owned()),
            (
                2 * T + 3 * S,
                3 * T + 3 * S,
                "DeactivatedDueToRequeuingLimitExceeded".to_owned()
            ),
        ]
    );
    let p = &workload(&j, "prod")["pending"];
    assert_eq!(
        p["reason"], "DeactivatedDueToRequeuingLimitExceeded",
        "{table}"
    );
    assert_eq!(
        p["message"],
        "The workload is deactivated due to exceeding the maximum number of re-queuing retries"
    );
}

/// Upstream: "SchedulerWithWaitForPodsReadyNonblockingMode / Tiny PodsReady timeout /
/// Should re-admit a timed out workload": no backoff limit, so it stays active: runs
/// 0..T, T + 1 s..2T + 1 s, then requeue count 2 and back after 2 s at 2T + 3 s.
#[test]
fn without_a_limit_the_workload_is_readmitted_after_each_backoff() {
    let c = platform(
        "{enable: true, blockAdmission: false, timeout: 10m, requeuingStrategy: {backoffBaseSeconds: 1}}",
        &wl("prod", "prod-queue", 2, 0, 0, NEVER),
    );
    let (j, _) = run(&c, 2 * T + 60_000);
    assert_eq!(
        runs(&j, "prod"),
        vec![
            (0, T, "PodsReadyTimeout".to_owned()),
            (T + S, 2 * T + S, "PodsReadyTimeout".to_owned()),
            (2 * T + 3 * S, 2 * T + 60_000, "Cut".to_owned()),
        ]
    );
    assert_eq!(requeue_count(&j, "prod"), 2);
}

/// Upstream: "SchedulerWithWaitForPodsReady / Tiny PodsReady timeout / Should unblock
/// admission of new workloads in other ClusterQueues once the admitted workload exceeds
/// timeout". prod is admitted at 0, dev (created 1 s later) waits; at T prod is evicted
/// and its 2 CPUs freed, dev is admitted in dev-cq, and prod (back at T + 1 s) waits.
#[test]
fn a_timeout_unblocks_admission_in_other_cluster_queues() {
    let c = platform(
        "{enable: true, blockAdmission: true, timeout: 10m, requeuingStrategy: {backoffLimitCount: 2, backoffBaseSeconds: 1}}",
        &(wl("prod", "prod-queue", 2, 0, 0, NEVER) + &wl("dev", "dev-queue", 2, 1, 0, NEVER)),
    );
    let (j, _) = run(&c, T + 5 * 60_000);
    assert_eq!(
        runs(&j, "prod"),
        vec![(0, T, "PodsReadyTimeout".to_owned())]
    );
    assert_eq!(workload(&j, "dev")["queue"], "dev-cq");
    assert_eq!(runs(&j, "dev"), vec![(T, T + 5 * 60_000, "Cut".to_owned())]);
    assert!(workload(&j, "prod")["pending"].is_object());
}

/// Upstream: "SchedulerWithWaitForPodsReady / Should move the evicted workload at the end
/// of the queue". Three 5-CPU workloads of prod-cq created at 0, 1 s, 2 s, never ready;
/// requeuing timestamp Eviction: an evicted workload queues by its eviction time, so the
/// admissions go round: wl1 at 0, wl2 at T, wl3 at 2T, wl1 at 3T (then evicted again at
/// 4T). At 4T + 30 s the requeue counts are upstream's: 2, 1, 1.
#[test]
fn an_evicted_workload_goes_to_the_end_of_the_queue() {
    let c = platform(
        "{enable: true, blockAdmission: true, timeout: 10m, requeuingStrategy: {timestamp: Eviction, backoffLimitCount: 2, backoffBaseSeconds: 1}}",
        &(wl("prod1", "prod-queue", 5, 0, 0, NEVER)
            + &wl("prod2", "prod-queue", 5, 1, 0, NEVER)
            + &wl("prod3", "prod-queue", 5, 2, 0, NEVER)),
    );
    let (j, _) = run(&c, 4 * T + 30 * S);
    assert_eq!(
        run_of(&j, "prod1", 0),
        (0, T, "PodsReadyTimeout".to_owned())
    );
    assert_eq!(
        run_of(&j, "prod2", 0),
        (T, 2 * T, "PodsReadyTimeout".to_owned())
    );
    assert_eq!(
        run_of(&j, "prod3", 0),
        (2 * T, 3 * T, "PodsReadyTimeout".to_owned())
    );
    assert_eq!(
        run_of(&j, "prod1", 1),
        (3 * T, 4 * T, "PodsReadyTimeout".to_owned())
    );
    assert_eq!(requeue_count(&j, "prod1"), 2);
    assert_eq!(requeue_count(&j, "prod2"), 1);
    assert_eq!(requeue_count(&j, "prod3"), 1);
}

/// Upstream: "SchedulerWithWaitForPodsReady / Requeuing timestamp set to Creation / Should
/// prioritize workloads submitted earlier". standalone-cq fits one 1-CPU workload; wl-1,
/// wl-2, wl-3 created at 0, 1 s, 2 s. wl-1 at 0, evicted at T (back at T + 1 s); wl-2 at T,
/// evicted at 2T; wl-1 again at 2T (it queues by creation), evicted at 3T; wl-2 at 3T.
/// Counts at 3T + 30 s: 2, 1, and wl-3 never admitted.
#[test]
fn by_creation_timestamp_the_earlier_workload_comes_first() {
    let c = platform(
        "{enable: true, blockAdmission: true, timeout: 10m, requeuingStrategy: {timestamp: Creation, backoffBaseSeconds: 1}}",
        &(wl("wl-1", "standalone-queue", 1, 0, 0, NEVER)
            + &wl("wl-2", "standalone-queue", 1, 1, 0, NEVER)
            + &wl("wl-3", "standalone-queue", 1, 2, 0, NEVER)),
    );
    let (j, _) = run(&c, 3 * T + 30 * S);
    assert_eq!(
        runs(&j, "wl-1"),
        vec![
            (0, T, "PodsReadyTimeout".to_owned()),
            (2 * T, 3 * T, "PodsReadyTimeout".to_owned())
        ]
    );
    assert_eq!(
        runs(&j, "wl-2"),
        vec![
            (T, 2 * T, "PodsReadyTimeout".to_owned()),
            (3 * T, 3 * T + 30 * S, "Cut".to_owned())
        ]
    );
    assert_eq!(runs(&j, "wl-3"), vec![]);
}

/// Upstream: "SchedulerWithWaitForPodsReadyNonblockingMode / Requeuing timestamp set to
/// Creation / Should keep the evicted workload at the front of the queue": the same
/// admissions without blocking (the queue has room for one only), the same counts.
#[test]
fn without_blocking_the_evicted_workload_keeps_the_front_by_creation() {
    let c = platform(
        "{enable: true, blockAdmission: false, timeout: 10m, requeuingStrategy: {timestamp: Creation, backoffBaseSeconds: 1}}",
        &(wl("wl-1", "standalone-queue", 1, 0, 0, NEVER)
            + &wl("wl-2", "standalone-queue", 1, 1, 0, NEVER)
            + &wl("wl-3", "standalone-queue", 1, 2, 0, NEVER)),
    );
    let (j, _) = run(&c, 3 * T + 30 * S);
    assert_eq!(
        runs(&j, "wl-1"),
        vec![
            (0, T, "PodsReadyTimeout".to_owned()),
            (2 * T, 3 * T, "PodsReadyTimeout".to_owned())
        ]
    );
    assert_eq!(
        runs(&j, "wl-2"),
        vec![
            (T, 2 * T, "PodsReadyTimeout".to_owned()),
            (3 * T, 3 * T + 30 * S, "Cut".to_owned())
        ]
    );
    assert_eq!(runs(&j, "wl-3"), vec![]);
}

/// Without `waitForPodsReady`, a workload never ready runs on: the timeout is the
/// Configuration's, not the annotation's.
#[test]
fn without_the_configuration_nothing_times_out() {
    let c = platform(
        "{enable: false, timeout: 10m}",
        &wl("prod", "prod-queue", 2, 0, 0, NEVER),
    );
    let (j, _) = run(&c, 3 * T);
    assert_eq!(runs(&j, "prod"), vec![(0, 3 * T, "Cut".to_owned())]);
}

/// The diagnostics of a platform the simulator refuses, one a line.
fn refused(c: &str) -> String {
    let sim = "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {name: podsready}\nspec:\n  cluster: [c.yaml]\n  start: \"2026-04-01T00:00:00Z\"\n  end: \"2026-04-01T01:00:00Z\"\n";
    let read = files(vec![("c.yaml", c.to_owned())]);
    match gpuquota_sim::fuzzing::scenario("s.yaml", sim, "s", &read)
        .and_then(|s| gpuquota_sim::fuzzing::run_kueue(&s).map(|_| ()))
    {
        Err(d) => {
            d.0.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        }
        Ok(()) => panic!("refused"),
    }
}

/// A bad `gpuquota.dev/pods-ready-after` is refused with the annotation named.
#[test]
fn a_bad_ready_after_annotation_is_refused() {
    let c = platform(
        "{enable: true}",
        &wl(
            "prod",
            "prod-queue",
            2,
            0,
            0,
            "{gpuquota.dev/pods-ready-after: soon}",
        ),
    );
    assert_eq!(
        refused(&c),
        "Workload \"ns/prod\": metadata.annotations[gpuquota.dev/pods-ready-after]: invalid value \"soon\": a Go duration (e.g. 90s) or never"
    );
}

/// Bad `waitForPodsReady` values are refused by the validator, each with its field.
#[test]
fn bad_wait_for_pods_ready_values_are_refused_with_their_field() {
    let c = platform(
        "{enable: true, timeout: -1s, requeuingStrategy: {timestamp: Sometime, backoffBaseSeconds: -1}}",
        &wl("prod", "prod-queue", 2, 0, 0, NEVER),
    );
    let text = refused(&c);
    for needle in [
        "waitForPodsReady.timeout: Invalid value: \"-1s\": must be greater than or equal to 0",
        "waitForPodsReady.requeuingStrategy.timestamp: Unsupported value: \"Sometime\": supported values: \"Creation\", \"Eviction\"",
        "waitForPodsReady.requeuingStrategy.backoffBaseSeconds: Invalid value: -1: must be greater than or equal to 0",
    ] {
        assert!(text.contains(needle), "{needle} in {text}");
    }
}

/// With Nodes, a workload whose quota is reserved but whose pods wait for devices is not
/// ready. One node of 2 GPUs, a ClusterQueue of 4: w0 (2 GPUs, 3 h) runs from 0; w1 (2 GPUs,
/// 3 h, at 1 h) is admitted but Unschedulable. Timeout 30 min, backoff base 60 s with the
/// jitter's expected value (60,003 ms, 120,006 ms, 240,012 ms):
/// - admitted 1 h (3,600,000), evicted 1 h 30 (5,400,000), back at 5,460,003;
/// - evicted 7,260,003, back at 7,380,009; evicted 9,180,009, back at 9,420,021;
/// - w0 ends at 3 h (10,800,000): w1's pods run then, ready at once, and its 3 h run ends at
///   6 h (21,600,000).
#[test]
fn pods_waiting_for_devices_time_out_and_requeue_with_backoff() {
    let mut d = vec![
        "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nwaitForPodsReady: {blockAdmission: false, timeout: 30m}\n".to_owned(),
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {gpu: a}}\nstatus: {allocatable: {nvidia.com/gpu: \"2\"}}\n".to_owned(),
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: a}\nspec: {nodeLabels: {gpu: a}}\n".to_owned(),
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors: [{name: a, resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}]\n".to_owned(),
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq, namespace: ns}\nspec: {clusterQueue: cq}\n".to_owned(),
    ];
    for (i, h) in [0, 1].iter().enumerate() {
        d.push(format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: w{i}, namespace: ns, creationTimestamp: \"2026-04-01T0{h}:00:00Z\", annotations: {{gpuquota.dev/runtime: 3h}}}}\nspec:\n  queueName: lq\n  podSets: [{{name: main, count: 1, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: \"2\"}}}}}}]}}}}}}]\n"
        ));
    }
    let (j, _) = run(&d.join("---\n"), 8 * 3_600_000);
    assert_eq!(runs(&j, "w0"), vec![(0, 10_800_000, "Finished".to_owned())]);
    assert_eq!(
        runs(&j, "w1"),
        vec![
            (5_400_000, 5_400_000, "PodsReadyTimeout".to_owned()),
            (7_260_003, 7_260_003, "PodsReadyTimeout".to_owned()),
            (9_180_009, 9_180_009, "PodsReadyTimeout".to_owned()),
            (10_800_000, 21_600_000, "Finished".to_owned()),
        ]
    );
    let reserved: Vec<i64> = workload(&j, "w1")["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| r["reservedMs"].as_i64().expect("reserved"))
        .collect();
    assert_eq!(reserved, vec![3_600_000, 5_460_003, 7_380_009, 9_420_021]);
}

/// `sim --output workloads` writes what upstream's workload controller leaves: the
/// timed-out prod1 of [`a_timed_out_workload_is_requeued_and_the_next_one_admitted`] is
/// `Evicted` by `PodsReadyTimeout` with upstream's message, without a `Preempted`
/// condition, with `requeueState.count` 1 and one eviction of that reason.
#[test]
fn written_workloads_carry_the_pods_ready_eviction() {
    let c = platform(
        "{enable: true, blockAdmission: true, timeout: 10m, requeuingStrategy: {backoffLimitCount: 2, backoffBaseSeconds: 1}}",
        &(wl("prod1", "prod-queue", 2, 0, 100, NEVER) + &wl("prod2", "prod-queue", 2, 0, 0, NEVER)),
    );
    let sim = "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {name: podsready}\nspec:\n  cluster: [c.yaml]\n  start: \"2026-04-01T00:00:00Z\"\n  end: \"2026-04-01T00:15:00Z\"\n";
    let s = gpuquota_sim::fuzzing::scenario("s.yaml", sim, "s", &files(vec![("c.yaml", c)]))
        .expect("valid scenario");
    let r = gpuquota_sim::fuzzing::run_kueue(&s).expect("simulates");
    let yaml = gpuquota_sim::history::write::workloads_yaml(s.kueue().expect("kueue"), &r)
        .expect("written");
    let list: Value = serde_saphyr::from_str(&yaml).expect("yaml");
    let w = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|w| w["metadata"]["name"] == "prod1")
        .expect("prod1");
    let conds = w["status"]["conditions"].as_array().expect("conditions");
    let of = |ty: &str| conds.iter().find(|c| c["type"] == ty).cloned();
    let evicted = of("Evicted").expect("Evicted");
    assert_eq!(evicted["status"], "True");
    assert_eq!(evicted["reason"], "PodsReadyTimeout");
    assert_eq!(
        evicted["message"],
        "Exceeded the PodsReady timeout ns/prod1"
    );
    assert_eq!(evicted["lastTransitionTime"], "2026-04-01T00:10:00Z");
    assert!(of("Preempted").is_none());
    assert_eq!(w["status"]["requeueState"]["count"], 1);
    assert_eq!(
        w["status"]["schedulingStats"]["evictions"],
        serde_json::json!([{"reason": "PodsReadyTimeout", "underlyingCause": "WaitForStart", "count": 1}])
    );
}
