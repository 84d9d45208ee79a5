//! Evictions that take time (`gpuquota.dev/eviction-time`, the pod template's
//! `terminationGracePeriodSeconds`): victims keep their quota until their pods are gone,
//! with upstream's rules for the preemptor meanwhile; hand-checked times.

use crate::common;

use common::H;
use serde_json::Value;

const START: &str = "2026-04-01T00:00:00Z";

/// The Configuration both ported upstream tests run under: they set
/// `PrioritizePreemptorWorkloads` (`features.SetFeatureGateDuringTest`).
const PRIORITIZE_PREEMPTORS: &str = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfeatureGates: {PrioritizePreemptorWorkloads: true}\n";

fn sim(cluster: &str) -> Value {
    let text = format!(
        "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {{name: t}}\nspec:\n  engine: kueue\n  cluster: [c.yaml]\n  start: \"{START}\"\n  end: \"2026-04-01T12:00:00Z\"\n"
    );
    let sim = gpuquota_sim::fuzzing::scenario(
        "t.yaml",
        &text,
        "t",
        &common::files(vec![("c.yaml", cluster.to_owned())]),
    )
    .expect("valid scenario");
    gpuquota_sim::fuzzing::run_kueue(&sim)
        .expect("simulates")
        .to_json()
}

/// A Workload `name` in LocalQueue `lq` created at `at` (HH:MM), `gpus` GPUs for 10 h at
/// `priority`, with extra annotations `ann` (a YAML flow mapping's inside) and extra pod spec
/// fields `pod` (likewise).
fn workload(
    name: &str,
    lq: &str,
    at: &str,
    priority: i32,
    gpus: u32,
    ann: &str,
    pod: &str,
) -> String {
    let sep = if ann.is_empty() { "" } else { ", " };
    let psep = if pod.is_empty() { "" } else { ", " };
    format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: {name}, namespace: ns, creationTimestamp: \"2026-04-01T{at}:00Z\", annotations: {{gpuquota.dev/runtime: 10h{sep}{ann}}}}}\nspec:\n  queueName: {lq}\n  priority: {priority}\n  podSets: [{{name: main, count: 1, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: \"{gpus}\"}}}}}}]{psep}{pod}}}}}}}]\n"
    )
}

fn cluster_queue(name: &str, nominal: u32, reclaim: &str) -> String {
    format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {name}}}\nspec:\n  cohortName: all\n  namespaceSelector: {{}}\n  preemption: {{withinClusterQueue: LowerPriority, reclaimWithinCohort: {reclaim}, borrowWithinCohort: {{policy: LowerPriority}}}}\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors: [{{name: one, resources: [{{name: nvidia.com/gpu, nominalQuota: {nominal}}}]}}]\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: {name}-lq, namespace: ns}}\nspec: {{clusterQueue: {name}}}\n"
    )
}

/// (reserved, start, end, how, reason, by) of each run of the workload named `name`.
fn runs(j: &Value, name: &str) -> Vec<(i64, i64, i64, String, String, String)> {
    let w = workload_json(j, name);
    w["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| {
            let start = r["startMs"].as_i64().expect("start");
            (
                r["reservedMs"].as_i64().unwrap_or(start),
                start,
                r["endMs"].as_i64().expect("end"),
                r["end"].as_str().unwrap_or_default().to_owned(),
                r["reason"].as_str().unwrap_or_default().to_owned(),
                r["by"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn workload_json<'j>(j: &'j Value, name: &str) -> &'j Value {
    j["workloads"]
        .as_array()
        .expect("workloads")
        .iter()
        .find(|w| w["workload"] == format!("ns/{name}"))
        .unwrap_or_else(|| panic!("workload {name} in {}", j["workloads"]))
}

fn run(
    reserved: i64,
    start: i64,
    end: i64,
    how: &str,
    reason: &str,
    by: &str,
) -> (i64, i64, i64, String, String, String) {
    (
        reserved,
        start,
        end,
        how.to_owned(),
        reason.to_owned(),
        by.to_owned(),
    )
}

/// Upstream's "Should prevent other workloads from stealing quota when a preemptor is waiting
/// for multiple evictions" (kubernetes-sigs/kueue
/// `test/integration/singlecluster/scheduler/preemption_test.go`), with GPUs for CPUs and
/// eviction times for the test's manual `FinishEvictionForWorkloads`.
///
/// Cohort `all`: alpha 2 GPUs (reclaims `Any`), beta 1 and gamma 1 (reclaim `LowerPriority`),
/// 4 in all (upstream's CPUs become GPUs). At 0, wl-a (alpha, 1 GPU, priority 100) and wl-b (beta, 3 GPUs: it borrows 2,
/// priority 100) take everything; wl-c (gamma, 1 GPU, priority 10) arrives at 00:30 and
/// waits. At 1 h the preemptor (alpha, 4 GPUs, priority 1000) evicts both: wl-a within its
/// ClusterQueue (`InClusterQueue`), wl-b by reclaiming alpha's lent quota while borrowing
/// itself (`InCohortReclaimWhileBorrowing`: the preemptor needs 2 GPUs over alpha's 2). wl-b's pods take 1 h to go, wl-a's
/// 2 h.
///
/// - At 2 h wl-b's 3 GPUs are free and wl-c would fit gamma's nominal GPU, but it is not
///   admitted (upstream: `Consistently ... HasQuotaReservation(wlC) == false`): the preemptor,
///   still waiting for wl-a, is processed first and its 4 GPUs fill the cycle's snapshot.
///   It issues no second preemption of wl-a.
/// - At 3 h wl-a's pods are gone and the preemptor is admitted (upstream
///   `ExpectWorkloadsToBeAdmitted(preemptor)`); wl-c stays pending
///   (`ExpectWorkloadsToBePending(wlC)`), as do wl-a and wl-b, until the end at 12 h.
#[test]
fn a_preemptor_waiting_for_two_evictions_keeps_the_freed_quota() {
    let mut d = vec![
        PRIORITIZE_PREEMPTORS.to_owned(),
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: one}\n"
            .to_owned(),
        cluster_queue("alpha", 2, "Any"),
        cluster_queue("beta", 1, "LowerPriority"),
        cluster_queue("gamma", 1, "LowerPriority"),
    ];
    d.push(workload(
        "wl-a",
        "alpha-lq",
        "00:00",
        100,
        1,
        "gpuquota.dev/eviction-time: 2h",
        "",
    ));
    d.push(workload(
        "wl-b",
        "beta-lq",
        "00:00",
        100,
        3,
        "gpuquota.dev/eviction-time: 1h",
        "",
    ));
    d.push(workload("wl-c", "gamma-lq", "00:30", 10, 1, "", ""));
    d.push(workload("preemptor", "alpha-lq", "01:00", 1000, 4, "", ""));
    let j = sim(&d.join("---\n"));
    assert_eq!(
        runs(&j, "wl-a"),
        vec![run(
            0,
            0,
            3 * H,
            "Preempted",
            "InClusterQueue",
            "ns/preemptor"
        )]
    );
    assert_eq!(
        runs(&j, "wl-b"),
        vec![run(
            0,
            0,
            2 * H,
            "Preempted",
            "InCohortReclaimWhileBorrowing",
            "ns/preemptor"
        )]
    );
    assert_eq!(
        runs(&j, "preemptor"),
        vec![run(3 * H, 3 * H, 12 * H, "Cut", "", "")]
    );
    assert_eq!(runs(&j, "wl-c"), vec![]);
    assert!(workload_json(&j, "wl-c")["pending"].is_object(), "{j}");
    // exactly two preemptions: none issued again while the victims terminated
    assert_eq!(j["preemptions"], 2);
}

/// The same platform without eviction times, at the engine's default gates (upstream's
/// `PrioritizePreemptorWorkloads` off): both victims release at 1 h, and in the next cycle
/// of that instant the heads that do not borrow come first: wl-a (alpha, within nominal)
/// and wl-c (gamma's nominal GPU) are admitted at 1 h, ahead of the borrowing preemptor.
/// wl-c takes the freed quota, and the preemptor waits until wl-a and wl-c finish at
/// 1 h + 10 h = 11 h. This is what the eviction times above prevent.
#[test]
fn without_an_eviction_time_the_freed_quota_is_taken_first() {
    let mut d = vec![
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: one}\n"
            .to_owned(),
        cluster_queue("alpha", 2, "Any"),
        cluster_queue("beta", 1, "LowerPriority"),
        cluster_queue("gamma", 1, "LowerPriority"),
    ];
    d.push(workload("wl-a", "alpha-lq", "00:00", 100, 1, "", ""));
    d.push(workload("wl-b", "beta-lq", "00:00", 100, 3, "", ""));
    d.push(workload("wl-c", "gamma-lq", "00:30", 10, 1, "", ""));
    d.push(workload("preemptor", "alpha-lq", "01:00", 1000, 4, "", ""));
    let j = sim(&d.join("---\n"));
    assert_eq!(
        runs(&j, "wl-a"),
        vec![
            run(0, 0, H, "Preempted", "InClusterQueue", "ns/preemptor"),
            run(H, H, 11 * H, "Finished", "", ""),
        ]
    );
    assert_eq!(
        runs(&j, "wl-c"),
        vec![run(H, H, 11 * H, "Finished", "", "")]
    );
    assert_eq!(
        runs(&j, "preemptor"),
        vec![run(11 * H, 11 * H, 12 * H, "Cut", "", "")]
    );
}

/// One ClusterQueue of 2 GPUs. `low` (2 GPUs, priority 0) runs from 0 with a pod
/// `terminationGracePeriodSeconds: 90`; `high` (2 GPUs, priority 10) arrives at 1 h and
/// preempts it. low's pods go at 1 h + 90 s, when high is admitted; low's run ends then.
/// `mid` (1 GPU, priority 5, at 1 h 01 m) arrives while low terminates: the freed quota goes
/// to high, and mid waits until high's 10 h end at 11 h 01 m 30 s (low, 2 GPUs, then does
/// not fit beside mid and waits to the end at 12 h).
#[test]
fn the_pod_grace_period_delays_the_release() {
    let d = [
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: one}\n"
            .to_owned(),
        cluster_queue("cq", 2, "LowerPriority"),
        workload(
            "low",
            "cq-lq",
            "00:00",
            0,
            2,
            "",
            "terminationGracePeriodSeconds: 90",
        ),
        workload("high", "cq-lq", "01:00", 10, 2, "", ""),
        workload("mid", "cq-lq", "01:01", 5, 1, "", ""),
    ];
    let j = sim(&d.join("---\n"));
    let freed = H + 90_000;
    assert_eq!(
        runs(&j, "low"),
        vec![run(0, 0, freed, "Preempted", "InClusterQueue", "ns/high")]
    );
    assert_eq!(
        runs(&j, "high"),
        vec![run(freed, freed, freed + 10 * H, "Finished", "", "")]
    );
    assert_eq!(
        runs(&j, "mid"),
        vec![run(freed + 10 * H, freed + 10 * H, 12 * H, "Cut", "", "")]
    );
    assert_eq!(runs(&j, "low").len(), 1);
    assert_eq!(j["preemptions"], 1);
}

/// The annotation wins over the grace period; a bad value of either is refused with the
/// field named.
#[test]
fn eviction_times_are_validated() {
    let read = |w: String| {
        let text = format!(
            "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {{name: t}}\nspec:\n  engine: kueue\n  cluster: [c.yaml]\n  start: \"{START}\"\n"
        );
        let c = [
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: one}\n"
                .to_owned(),
            cluster_queue("cq", 2, "LowerPriority"),
            w,
        ]
        .join("---\n");
        gpuquota_sim::fuzzing::scenario("t.yaml", &text, "t", &common::files(vec![("c.yaml", c)]))
    };
    let bad = read(workload(
        "w",
        "cq-lq",
        "00:00",
        0,
        1,
        "gpuquota.dev/eviction-time: soon",
        "",
    ))
    .expect_err("refused");
    let text = format!("{bad:?}");
    assert!(
        text.contains("metadata.annotations[gpuquota.dev/eviction-time]"),
        "{text}"
    );
    assert!(text.contains("\\\"soon\\\""), "{text}");
    let bad = read(workload(
        "w",
        "cq-lq",
        "00:00",
        0,
        1,
        "",
        "terminationGracePeriodSeconds: -5",
    ))
    .expect_err("refused");
    let text = format!("{bad:?}");
    assert!(
        text.contains("spec.podSets[0].template.spec.terminationGracePeriodSeconds"),
        "{text}"
    );
    read(workload(
        "w",
        "cq-lq",
        "00:00",
        0,
        1,
        "gpuquota.dev/eviction-time: 45s",
        "terminationGracePeriodSeconds: 30",
    ))
    .expect("valid");
}

/// The fair-sharing suite's version (kubernetes-sigs/kueue
/// `test/integration/singlecluster/scheduler/fairsharing/fair_sharing_test.go`, "Should
/// prevent other workloads from stealing quota when preemptor is waiting for multiple
/// evictions"): cq-1 has 10 CPUs and no memory, cq-2 no CPUs and 10 Gi of memory, both
/// reclaim `Any`, fair sharing on. wl-a and wl-b (cq-2, 1 CPU each, priority 100) borrow
/// cq-1's CPUs from 0; at 1 h the preemptor (cq-1, 10 CPUs and 10 Gi, priority 0) reclaims
/// both. wl-a's pods go at 2 h, wl-b's at 3 h: wl-a is not readmitted meanwhile (upstream
/// `Consistently HasQuotaReservation(wlA) == false`), the preemptor is admitted at 3 h and
/// both stay pending to the end.
#[test]
fn fair_sharing_a_preemptor_waiting_for_two_evictions_keeps_the_freed_quota() {
    let cq = |name: &str, cpu: &str, mem: &str| {
        format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {name}}}\nspec:\n  cohortName: all\n  namespaceSelector: {{}}\n  preemption: {{reclaimWithinCohort: Any}}\n  resourceGroups:\n  - coveredResources: [cpu, memory]\n    flavors: [{{name: one, resources: [{{name: cpu, nominalQuota: \"{cpu}\"}}, {{name: memory, nominalQuota: \"{mem}\"}}]}}]\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: {name}, namespace: ns}}\nspec: {{clusterQueue: {name}}}\n"
        )
    };
    let wl = |name: &str, lq: &str, at: &str, priority: i32, cpu: &str, mem: &str, ann: &str| {
        format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: {name}, namespace: ns, creationTimestamp: \"2026-04-01T{at}:00Z\", annotations: {{gpuquota.dev/runtime: 10h{ann}}}}}\nspec:\n  queueName: {lq}\n  priority: {priority}\n  podSets: [{{name: main, count: 1, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: \"{cpu}\", memory: \"{mem}\"}}}}}}]}}}}}}]\n"
        )
    };
    let d = [
        PRIORITIZE_PREEMPTORS.to_owned(),
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: one}\n"
            .to_owned(),
        cq("cq-1", "10", "0"),
        cq("cq-2", "0", "10Gi"),
        wl(
            "wl-a",
            "cq-2",
            "00:00",
            100,
            "1",
            "0",
            ", gpuquota.dev/eviction-time: 1h",
        ),
        wl(
            "wl-b",
            "cq-2",
            "00:00",
            100,
            "1",
            "0",
            ", gpuquota.dev/eviction-time: 2h",
        ),
        wl("preemptor", "cq-1", "01:00", 0, "10", "10Gi", ""),
    ];
    let text = format!(
        "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {{name: t}}\nspec:\n  engine: kueue\n  cluster: [c.yaml]\n  start: \"{START}\"\n  end: \"2026-04-01T12:00:00Z\"\n  kueue: {{fairSharing: true}}\n"
    );
    let sim = gpuquota_sim::fuzzing::scenario(
        "t.yaml",
        &text,
        "t",
        &common::files(vec![("c.yaml", d.join("---\n"))]),
    )
    .expect("valid scenario");
    let j = gpuquota_sim::fuzzing::run_kueue(&sim)
        .expect("simulates")
        .to_json();
    let ended = |name: &str| {
        runs(&j, name)
            .iter()
            .map(|r| (r.0, r.2, r.3.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(ended("wl-a"), vec![(0, 2 * H, "Preempted".to_owned())]);
    assert_eq!(ended("wl-b"), vec![(0, 3 * H, "Preempted".to_owned())]);
    assert_eq!(
        runs(&j, "preemptor"),
        vec![run(3 * H, 3 * H, 12 * H, "Cut", "", "")]
    );
    assert_eq!(j["preemptions"], 2);
}
