//! `spec.timeline` under Kueue and ResourceQuota: the platform changes while the run goes
//! on. The first four tests port upstream integration tests (kubernetes-sigs/kueue
//! test/integration/singlecluster/scheduler/scheduler_test.go) as scenario files under
//! `tests/data/timeline/`, with upstream's expectations and hand-computed times.

use std::path::Path;

use serde_json::Value;

use crate::common::H;

fn run(name: &str) -> (Value, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/timeline")
        .join(name);
    let sim = gpuquota_sim::fuzzing::load(&path).expect("valid scenario");
    let r = gpuquota_sim::fuzzing::run_kueue(&sim).expect("simulates");
    (r.to_json(), r.to_table())
}

/// Upstream: "Using cohorts for sharing with LendingLimit" / "Should admit workloads using
/// borrowed ClusterQueue". `wl` asks 9 CPUs of `prod-cq` (5 nominal): pending until
/// `dev-cq` (5 nominal, lending 4) joins cohort `all` at 1 h; then admitted at once in
/// `prod-cq` with 9 CPUs of `on-demand` (5 own + 4 borrowed); its 2 h run ends at 3 h.
#[test]
fn a_new_cluster_queue_lends_at_once() {
    let (j, table) = run("add-cluster-queue.yaml");
    let w = &j["workloads"][0];
    assert_eq!(w["workload"], "ns/wl");
    assert_eq!(w["runs"].as_array().map(Vec::len), Some(1));
    assert_eq!(w["runs"][0]["startMs"], H);
    assert_eq!(w["runs"][0]["endMs"], 3 * H);
    assert_eq!(w["runs"][0]["usage"]["on-demand"]["cpu"], "9");
    assert_eq!(w["finishedMs"], 3 * H);
    let e = &j["timeline"][0];
    assert_eq!(e["index"], 0);
    assert_eq!(e["atMs"], H);
    assert_eq!(
        e["changes"][0],
        serde_json::json!({"kind": "ClusterQueue", "name": "dev-cq", "change": "created"})
    );
    assert_eq!(e["capacityBefore"]["on-demand"]["cpu"], "5");
    assert_eq!(e["capacityAfter"]["on-demand"]["cpu"], "10");
    assert_eq!(e["evicted"], serde_json::json!([]));
    assert!(
        table.contains("Timeline event 0 at 01:00: ClusterQueue dev-cq created. Quota on-demand/cpu=5 -> on-demand/cpu=10."),
        "{table}"
    );
}

/// The runs of workload `i` as (startMs, endMs, end).
fn runs(j: &Value, i: usize) -> Vec<(i64, i64, String)> {
    j["workloads"][i]["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| {
            (
                r["startMs"].as_i64().expect("start"),
                r["endMs"].as_i64().expect("end"),
                r["end"].as_str().expect("end").to_owned(),
            )
        })
        .collect()
}

/// Upstream: "Using cohorts for sharing with LendingLimit" / "Should admit workloads after
/// updating lending limit". Both ClusterQueues have 5 CPUs and lend nothing: wl-1 (5 CPUs)
/// is admitted at 0, wl-2 (5 CPUs) waits. The merge patch at 1 h sets dev-cq's
/// lendingLimit to 5: wl-2 is admitted in prod-cq at 1 h, borrowing dev-cq's 5 CPUs; both
/// run 4 h (wl-1 until 4 h, wl-2 until 5 h); the nominal quota (10 CPUs) is unchanged.
#[test]
fn a_raised_lending_limit_admits_the_pending_workload() {
    let (j, table) = run("lending-limit.yaml");
    assert_eq!(j["workloads"][0]["workload"], "ns/wl-1");
    assert_eq!(runs(&j, 0), vec![(0, 4 * H, "Finished".to_owned())]);
    assert_eq!(j["workloads"][1]["workload"], "ns/wl-2");
    assert_eq!(runs(&j, 1), vec![(H, 5 * H, "Finished".to_owned())]);
    assert_eq!(j["workloads"][1]["queue"], "prod-cq");
    // prod-cq borrowed 5 CPUs from 1 h to 4 h (wl-2 beyond its own 5 while wl-1 runs)
    assert_eq!(
        j["queues"]["prod-cq"]["borrowedMs"]["on-demand"]["cpu"],
        5 * 3 * H
    );
    let e = &j["timeline"][0];
    assert_eq!(e["changes"][0]["change"], "replaced");
    assert_eq!(e["capacityBefore"], e["capacityAfter"]);
    assert_eq!(e["capacityAfter"]["on-demand"]["cpu"], "10");
    assert!(
        table.contains("Timeline event 0 at 01:00: ClusterQueue dev-cq replaced.\n"),
        "{table}"
    );
}

/// Upstream: "Hold ClusterQueue at startup" / "Should admit workloads according to their
/// priorities". prod-cq (5 CPUs) starts with stopPolicy Hold: the five 2-CPU workloads
/// wait. At 1 h the patch sets stopPolicy None: the two priority-100 workloads are admitted
/// (4 CPUs; a third would need 6); they finish at 3 h, and the two priority-10 ones are
/// admitted then (upstream's last check: the priority-0 one still pending); they finish at
/// 5 h, and the priority-0 one runs from 5 h to the end (6 h).
#[test]
fn a_held_cluster_queue_admits_by_priority_once_released() {
    let (j, table) = run("hold.yaml");
    let by_name = |name: &str| {
        let ws = j["workloads"].as_array().expect("workloads");
        ws.iter()
            .position(|w| w["workload"] == format!("ns/{name}"))
            .expect("workload")
    };
    for n in ["wl-high-priority-1", "wl-high-priority-2"] {
        assert_eq!(
            runs(&j, by_name(n)),
            vec![(H, 3 * H, "Finished".to_owned())],
            "{n}"
        );
    }
    for n in ["wl-mid-priority-1", "wl-mid-priority-2"] {
        assert_eq!(
            runs(&j, by_name(n)),
            vec![(3 * H, 5 * H, "Finished".to_owned())],
            "{n}"
        );
    }
    assert_eq!(
        runs(&j, by_name("wl-low-priority")),
        vec![(5 * H, 6 * H, "Cut".to_owned())]
    );
    let e = &j["timeline"][0];
    assert_eq!(e["admissionsResumed"], serde_json::json!(["prod-cq"]));
    assert_eq!(e["admissionsStopped"], serde_json::json!([]));
    assert!(
        table.contains(
            "Timeline event 0 at 01:00: ClusterQueue prod-cq replaced. Admissions resumed: prod-cq.\n"
        ),
        "{table}"
    );
}

/// Upstream: "Using clusterQueue stop policy" / "Should evict workloads when stop policy
/// is drain". `one` (1 CPU) runs from 0; at 1 h stopPolicy HoldAndDrain evicts it with
/// reason ClusterQueueStopped; `two`, created at 2 h, waits as well; at 3 h the stopPolicy
/// is removed (merge patch `null`) and both are admitted at 3 h, still running at the end
/// (5 h).
#[test]
fn hold_and_drain_evicts_then_both_are_admitted_when_released() {
    let (j, table) = run("hold-and-drain.yaml");
    assert_eq!(j["workloads"][0]["workload"], "ns/one");
    assert_eq!(
        runs(&j, 0),
        vec![
            (0, H, "Preempted".to_owned()),
            (3 * H, 5 * H, "Cut".to_owned())
        ]
    );
    let first = &j["workloads"][0]["runs"][0];
    assert_eq!(first["reason"], "ClusterQueueStopped");
    assert_eq!(first["by"], "ClusterQueue/cluster-queue");
    assert_eq!(j["workloads"][1]["workload"], "ns/two");
    assert_eq!(runs(&j, 1), vec![(3 * H, 5 * H, "Cut".to_owned())]);
    let t = &j["timeline"];
    assert_eq!(t[0]["atMs"], H);
    assert_eq!(
        t[0]["admissionsStopped"],
        serde_json::json!(["cluster-queue"])
    );
    assert_eq!(
        t[0]["evicted"],
        serde_json::json!([{"workload": "ns/one", "reason": "ClusterQueueStopped"}])
    );
    assert_eq!(t[1]["atMs"], 3 * H);
    assert_eq!(
        t[1]["admissionsResumed"],
        serde_json::json!(["cluster-queue"])
    );
    assert_eq!(t[1]["evicted"], serde_json::json!([]));
    // an eviction by a stopped queue is no preemption loop and no reclaim sentence
    assert!(j.get("preemptionLoops").is_none());
    assert!(!table.contains("reclaimed"), "{table}");
    assert!(
        table.contains("Admissions stopped: cluster-queue. Evicted: ns/one (ClusterQueueStopped)."),
        "{table}"
    );
}

/// Upstream: "Deleting clusterQueues" / "Should not admit new created workloads". The
/// ClusterQueue deleted at 1 h keeps running workload1 (its finalizer) and admits nothing:
/// workload2, created at 2 h, stays pending. workload1's 3 h run ends at 3 h and the queue
/// leaves then; workload2 is still pending at the end (5 h).
#[test]
fn a_deleted_cluster_queue_terminates_after_its_last_workload() {
    let (j, table) = run("delete-cluster-queue.yaml");
    assert_eq!(runs(&j, 0), vec![(0, 3 * H, "Finished".to_owned())]);
    assert_eq!(j["workloads"][1]["runs"], serde_json::json!([]));
    assert!(j["workloads"][1]["pending"].is_object());
    let e = &j["timeline"][0];
    assert_eq!(
        e["terminating"],
        serde_json::json!([{"clusterQueue": "cluster-queue", "leftMs": 3 * H}])
    );
    assert_eq!(e["admissionsStopped"], serde_json::json!(["cluster-queue"]));
    assert!(
        table.contains("cluster-queue terminated until 03:00."),
        "{table}"
    );
}

/// A `Simulation` of `c.yaml` under `engine` from 2026-04-01T00:00Z to 06:00 with the
/// timeline `timeline` (YAML lines under `timeline:`, indented 2).
fn inline(engine: &str, cluster: &str, timeline: &str) -> (Value, String) {
    let text = format!(
        "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {{name: t}}\nspec:\n  engine: {engine}\n  cluster: [c.yaml]\n  start: \"2026-04-01T00:00:00Z\"\n  end: \"2026-04-01T06:00:00Z\"\n  resourceQuota: {{retryInterval: 5m}}\n  timeline:\n{timeline}"
    );
    let sim = gpuquota_sim::fuzzing::scenario(
        "t.yaml",
        &text,
        "t",
        &crate::common::files(vec![("c.yaml", cluster.to_owned())]),
    )
    .expect("valid scenario");
    let r = gpuquota_sim::fuzzing::run_kueue(&sim).expect("simulates");
    (r.to_json(), r.to_table())
}

/// A 1-GPU workload `name` of namespace `ns` (LocalQueue `lq`) created at `at` (HH:MM),
/// running `runtime`.
fn gpu_workload(name: &str, at: &str, runtime: &str) -> String {
    format!(
        "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: {name}, namespace: ns, creationTimestamp: \"2026-04-01T{at}:00Z\", annotations: {{gpuquota.dev/runtime: {runtime}}}}}\nspec:\n  queueName: lq\n  podSets: [{{name: main, count: 1, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: \"1\"}}}}}}]}}}}}}]\n"
    )
}

/// Under ResourceQuota only, a quota change caps the next creation and never evicts. The
/// namespace's quota allows 1 GPU: w0 runs from 0, w1 is refused (403) and retried every
/// 5 min. At 1 h the quota becomes 2: the retry due at 1 h applies before the timeline
/// event of that instant (timeline events come last), so w1 is created at its next retry,
/// 1 h 05; at 2 h the quota drops to 0, and both keep running (w0 until 3 h, w1 until
/// 4 h 05).
#[test]
fn resourcequota_changes_cap_the_next_creation_and_never_evict() {
    let mut c = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: cap, namespace: ns}\nspec: {hard: {requests.nvidia.com/gpu: \"1\"}}\n".to_owned();
    c.push_str(&gpu_workload("w0", "00:00", "3h"));
    c.push_str(&gpu_workload("w1", "00:00", "3h"));
    let (j, table) = inline(
        "resourcequota",
        &c,
        "  - at: 1h\n    patch: [{kind: ResourceQuota, name: cap, namespace: ns, mergePatch: {spec: {hard: {requests.nvidia.com/gpu: \"2\"}}}}]\n  - at: 2h\n    patch: [{kind: ResourceQuota, name: cap, namespace: ns, mergePatch: {spec: {hard: {requests.nvidia.com/gpu: \"0\"}}}}]\n",
    );
    assert_eq!(runs(&j, 0), vec![(0, 3 * H, "Finished".to_owned())]);
    let five = 300_000;
    assert_eq!(
        runs(&j, 1),
        vec![(H + five, 4 * H + five, "Finished".to_owned())]
    );
    let t = &j["timeline"];
    assert_eq!(t[0]["capacityBefore"][""]["nvidia.com/gpu"], "1");
    assert_eq!(t[0]["capacityAfter"][""]["nvidia.com/gpu"], "2");
    assert_eq!(t[1]["capacityAfter"][""]["nvidia.com/gpu"], "0");
    assert_eq!(
        t[1]["changes"][0],
        serde_json::json!({"kind": "ResourceQuota", "name": "ns/cap", "change": "replaced"})
    );
    assert!(
        table.contains("Timeline event 1 at 02:00: ResourceQuota ns/cap replaced. Quota nvidia.com/gpu=2 -> nvidia.com/gpu=0."),
        "{table}"
    );
}

/// Kueue: `stopPolicy: Hold` set while a workload runs keeps it running (no eviction) and
/// stops admission: a (1 GPU, 2 h) runs 0–2 h; Hold at 1 h; b, created at 1 h 30, waits
/// although quota is free, until the Hold is lifted at 3 h, and runs 3 h–5 h.
#[test]
fn hold_mid_run_keeps_admitted_workloads_and_stops_admission() {
    let mut c = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: gpu}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors: [{name: gpu, resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}]\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq, namespace: ns}\nspec: {clusterQueue: cq}\n".to_owned();
    c.push_str(&gpu_workload("a", "00:00", "2h"));
    c.push_str(&gpu_workload("b", "01:30", "2h"));
    let (j, _) = inline(
        "kueue",
        &c,
        "  - at: 1h\n    patch: [{kind: ClusterQueue, name: cq, mergePatch: {spec: {stopPolicy: Hold}}}]\n  - at: 3h\n    patch: [{kind: ClusterQueue, name: cq, mergePatch: {spec: {stopPolicy: None}}}]\n",
    );
    assert_eq!(runs(&j, 0), vec![(0, 2 * H, "Finished".to_owned())]);
    assert_eq!(runs(&j, 1), vec![(3 * H, 5 * H, "Finished".to_owned())]);
    assert_eq!(
        j["timeline"][0]["admissionsStopped"],
        serde_json::json!(["cq"])
    );
    assert_eq!(j["timeline"][0]["evicted"], serde_json::json!([]));
    assert_eq!(j["preemptions"], 0);
}

/// `sim sweep --set timeline[0].at=…` and a merge patch's value: a (1 GPU, 2 h) runs from
/// 0 in `cq`; event 0 stops `cq`. HoldAndDrain at 30 min evicts it then (0.5 GPU-hours, all
/// lost), at 1 h (1 GPU-hour, lost); Hold at 1 h lets it finish (2 GPU-hours, none lost).
#[test]
fn sweeps_set_the_instant_and_patch_values_of_timeline_events() {
    let mut c = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: gpu}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors: [{name: gpu, resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}]\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq, namespace: ns}\nspec: {clusterQueue: cq}\n".to_owned();
    c.push_str(&gpu_workload("a", "00:00", "2h"));
    let text = "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {name: t}\nspec:\n  cluster: [c.yaml]\n  start: \"2026-04-01T00:00:00Z\"\n  end: \"2026-04-01T04:00:00Z\"\n  timeline:\n  - at: 2h\n    patch: [{kind: ClusterQueue, name: cq, mergePatch: {spec: {stopPolicy: Hold}}}]\n";
    let axes = gpuquota_sim::sweep::parse_axes(&[
        "timeline[0].patch[0].mergePatch.spec.stopPolicy=HoldAndDrain,Hold",
        "timeline[0].at=30m,1h",
    ])
    .expect("axes");
    let read = crate::common::files(vec![("c.yaml", c)]);
    let table = gpuquota_sim::sweep::run("t.yaml", text, "t", &axes, None, &read).expect("sweeps");
    let got: Vec<(String, String, f64, f64)> = table
        .rows
        .iter()
        .map(|r| {
            (
                r.parameters[0].clone(),
                r.parameters[1].clone(),
                r.gpu_hours,
                r.lost_gpu_hours,
            )
        })
        .collect();
    let row = |p: &str, at: &str, h: f64, lost: f64| (p.to_owned(), at.to_owned(), h, lost);
    assert_eq!(
        got,
        vec![
            row("HoldAndDrain", "30m", 0.5, 0.5),
            row("HoldAndDrain", "1h", 1.0, 1.0),
            row("Hold", "30m", 2.0, 0.0),
            row("Hold", "1h", 2.0, 0.0),
        ]
    );
    // an instant outside the run is refused naming the event's field
    let axes = gpuquota_sim::sweep::parse_axes(&["timeline[0].at=5h"]).expect("axes");
    let e = gpuquota_sim::sweep::run("t.yaml", text, "t", &axes, None, &read)
        .expect_err("outside the run");
    assert!(e.iter().any(|d| d.field == "spec.timeline[0].at"), "{e:?}");
}

/// The plot marks each timeline event with a rule labelled by its index, counted in the
/// legend; a scenario without a timeline has no such mark.
#[test]
fn plots_mark_timeline_events() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/timeline/hold-and-drain.yaml");
    let sim = gpuquota_sim::fuzzing::load(&path).expect("valid scenario");
    let r = gpuquota_sim::fuzzing::run_kueue(&sim).expect("simulates");
    let svg = gpuquota_sim::plot::svg(sim.kueue().expect("kueue"), &r).expect("plots");
    assert!(svg.contains("\n#0\n</text>"), "{svg}");
    assert!(svg.contains("\n#1\n</text>"), "{svg}");
    assert!(svg.contains("\ntimeline event (2)\n</text>"), "{svg}");
    // the teal rule
    assert_eq!(
        svg.matches("stroke=\"#178F8F\"").count(),
        3,
        "two rules and the legend's"
    );
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/kueue.yaml");
    let sim = gpuquota_sim::fuzzing::load(&path).expect("valid scenario");
    let r = gpuquota_sim::fuzzing::run_kueue(&sim).expect("simulates");
    let svg = gpuquota_sim::plot::svg(sim.kueue().expect("kueue"), &r).expect("plots");
    assert!(!svg.contains("timeline event"));
}

/// Kueue: a LocalQueue's `stopPolicy: HoldAndDrain` evicts its admitted workloads with
/// upstream's `LocalQueueStopped`: a (1 GPU, 2 h) runs from 0, is evicted at 1 h, and waits
/// in the stopped LocalQueue until the end (4 h).
#[test]
fn a_drained_local_queue_evicts_with_local_queue_stopped() {
    let mut c = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: gpu}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors: [{name: gpu, resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}]\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq, namespace: ns}\nspec: {clusterQueue: cq}\n".to_owned();
    c.push_str(&gpu_workload("a", "00:00", "2h"));
    let (j, _) = inline(
        "kueue",
        &c,
        "  - at: 1h\n    patch: [{kind: LocalQueue, name: lq, namespace: ns, mergePatch: {spec: {stopPolicy: HoldAndDrain}}}]\n",
    );
    assert_eq!(runs(&j, 0), vec![(0, H, "Preempted".to_owned())]);
    let run = &j["workloads"][0]["runs"][0];
    assert_eq!(run["reason"], "LocalQueueStopped");
    assert_eq!(run["by"], "LocalQueue/ns/lq");
    let e = &j["timeline"][0];
    assert_eq!(e["admissionsStopped"], serde_json::json!(["ns/lq"]));
    assert_eq!(
        e["evicted"],
        serde_json::json!([{"workload": "ns/a", "reason": "LocalQueueStopped"}])
    );
    assert!(j["workloads"][0]["pending"].is_object());
}

/// A timeline event that changes only quota numbers is followed in place (no new engine
/// input); the same event with a label added to the patched ClusterQueue changes more
/// than numbers and builds the input again. Both runs report the same runs, queues and
/// timeline effects (wl-2 admitted at 1 h, borrowing 5 CPUs for 3 h).
#[test]
fn a_quota_change_followed_in_place_reports_as_a_rebuild() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/timeline");
    let text = std::fs::read_to_string(dir.join("lending-limit.yaml")).expect("readable");
    let platform =
        std::fs::read_to_string(dir.join("lending-limit-platform.yaml")).expect("readable");
    let labelled = text.replace(
        "      mergePatch:\n        spec:",
        "      mergePatch:\n        metadata: {labels: {team: dev}}\n        spec:",
    );
    assert_ne!(labelled, text);
    let report = |text: &str| {
        gpuquota_sim::fuzzing::counts();
        let files = crate::common::files(vec![("lending-limit-platform.yaml", platform.clone())]);
        let sim =
            gpuquota_sim::fuzzing::scenario("l.yaml", text, "l", &files).expect("valid scenario");
        let j = gpuquota_sim::fuzzing::run_kueue(&sim)
            .expect("simulates")
            .to_json();
        (j, gpuquota_sim::fuzzing::counts().world_builds)
    };
    let ((in_place, one), (rebuilt, two)) = (report(&text), report(&labelled));
    // the run's input, then (labelled only) the rebuild at 1 h
    assert_eq!((one, two), (1, 2));
    assert_eq!(in_place["workloads"], rebuilt["workloads"]);
    assert_eq!(in_place["queues"], rebuilt["queues"]);
    assert_eq!(in_place["timeline"], rebuilt["timeline"]);
    assert_eq!(runs(&in_place, 1), vec![(H, 5 * H, "Finished".to_owned())]);
    assert_eq!(
        in_place["queues"]["prod-cq"]["borrowedMs"]["on-demand"]["cpu"],
        5 * 3 * H
    );
}
