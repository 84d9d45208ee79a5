//! `spec.timeline` on a KAI scenario: Queue changes take effect at the next session, as in
//! KAI (the scheduler reads its Queues from each session's snapshot); running jobs stay
//! when a Queue's quota or limit falls; a failed node's pods are lost at once and the next
//! session sees the node set without it; a drained node takes no new pods.

use serde_json::Value;

use crate::common::{self, H};

const M: i64 = 60_000;

/// One 8-GPU node; department `dept` (8 deserved) over `q` (2 deserved, limit 2) and `q2`
/// (4 deserved, no limit, nothing to run).
fn cluster() -> String {
    r#"apiVersion: v1
kind: Node
metadata: {name: gpu-a}
status: {allocatable: {nvidia.com/gpu: "8", cpu: "64", memory: 512Gi}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: dept}
spec: {resources: {gpu: {quota: 8, overQuotaWeight: 1, limit: -1}}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: q}
spec: {parentQueue: dept, resources: {gpu: {quota: 2, overQuotaWeight: 1, limit: 2}}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: q2}
spec: {parentQueue: dept, resources: {gpu: {quota: 4, overQuotaWeight: 1, limit: -1}}}
"#
    .to_owned()
}

/// A 10-minute session, 6 h, the cluster and the jobs, and `timeline` (lines indented 2).
fn scenario(timeline: &str) -> String {
    format!(
        r#"apiVersion: gpuquota.dev/v1alpha1
kind: Simulation
metadata: {{name: t}}
spec:
  engine: kai
  cluster: [cluster.yaml]
  start: "2026-04-01T00:00:00Z"
  end: "2026-04-01T06:00:00Z"
  kai: {{sessionInterval: 10m}}
  workloads: [{{file: jobs.yaml}}]
  timeline:
{timeline}"#
    )
}

fn load(timeline: &str) -> Result<gpuquota_sim::Simulation, gpuquota_model::diag::Diagnostics> {
    let jobs = common::kai_pod("ns", "j1", "00:00", 4, "3h")
        + &common::kai_pod("ns", "j2", "02:00", 2, "1h");
    let read = common::files(vec![("cluster.yaml", cluster()), ("jobs.yaml", jobs)]);
    gpuquota_sim::fuzzing::scenario("t.yaml", &scenario(timeline), "t", &read)
}

fn run(timeline: &str) -> Value {
    let sim = load(timeline).expect("scenario");
    gpuquota_sim::fuzzing::run_kai(&sim)
        .expect("runs")
        .to_json()
}

fn job<'v>(v: &'v Value, name: &str) -> &'v Value {
    v["workloads"]
        .as_array()
        .expect("workloads")
        .iter()
        .find(|w| w["workload"].as_str().is_some_and(|s| s.ends_with(name)))
        .unwrap_or_else(|| panic!("{name} in {v}"))
}

/// j1 (4 GPUs, 3 h) waits for `q`'s limit of 2. At 1h05m `q` is raised to quota 4, limit 8:
/// the change waits for the next session, 1h10m (sessions every 10 min), where j1 starts;
/// it ends at 4h10m. At 2h `q` falls to quota 2, limit 4: j1 (4 GPUs) keeps running, and
/// j2 (2 GPUs, created at 2h), which fits the node's 4 free GPUs and would start at 2h
/// under the raised limit, waits for j1's end: it starts at 4h10m and ends at 5h10m.
#[test]
fn queue_changes_take_effect_at_the_next_session() {
    let raise = "  - at: 1h5m\n    patch:\n    - {kind: Queue, name: q, mergePatch: {spec: {resources: {gpu: {quota: 4, limit: 8}}}}}\n";
    let lower = "  - at: 2h\n    patch:\n    - {kind: Queue, name: q, mergePatch: {spec: {resources: {gpu: {quota: 2, limit: 4}}}}}\n";
    let v = run(&format!("{raise}{lower}"));
    let j1 = job(&v, "j1");
    assert_eq!(j1["runs"].as_array().map(Vec::len), Some(1), "{j1}");
    assert_eq!(j1["runs"][0]["startMs"], H + 10 * M);
    assert_eq!(j1["finishedMs"], 4 * H + 10 * M);
    let j2 = job(&v, "j2");
    assert_eq!(j2["runs"].as_array().map(Vec::len), Some(1), "{j2}");
    assert_eq!(j2["runs"][0]["startMs"], 4 * H + 10 * M);
    assert_eq!(j2["finishedMs"], 5 * H + 10 * M);
    assert_eq!(v["evictions"], serde_json::json!({}));
    // Only the raise: j2 starts when it is created, beside j1.
    let v = run(raise);
    assert_eq!(job(&v, "j1")["runs"][0]["startMs"], H + 10 * M);
    assert_eq!(job(&v, "j2")["runs"][0]["startMs"], 2 * H);
    // Without a timeline j1 never starts (q's limit is 2).
    let v = run("    []\n");
    assert_eq!(job(&v, "j1")["runs"], serde_json::json!([]));
}

/// MIG layouts, deletions of other kinds and changes of other kinds are not simulated on a KAI
/// scenario: `not-simulated`, naming the event's field.
#[test]
fn mig_layouts_and_other_kinds_are_refused() {
    // a config the node's GPUs take (the common reader's checks pass): refused all the same
    let cluster = cluster().replace(
        "metadata: {name: gpu-a}",
        "metadata: {name: gpu-a, labels: {nvidia.com/gpu.product: NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition}}",
    ) + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: mig-parted, namespace: gpu-operator}\ndata:\n  config.yaml: |\n    version: v1\n    mig-configs:\n      split:\n      - devices: [0]\n        mig-enabled: true\n        mig-devices: {\"1g.24gb\": 4}\n";
    let read = common::files(vec![
        ("cluster.yaml", cluster),
        ("jobs.yaml", String::new()),
    ]);
    let e = gpuquota_sim::fuzzing::scenario(
        "t.yaml",
        &scenario("  - at: 1h\n    migLayout: {node: gpu-a, config: split}\n"),
        "t",
        &read,
    )
    .expect_err("refused");
    let got: Vec<(&str, &str)> = e
        .iter()
        .filter(|d| d.severity == gpuquota_model::diag::Severity::Error)
        .map(|d| (d.code.as_str(), d.field.as_str()))
        .collect();
    assert_eq!(got, [("not-simulated", "spec.timeline[0].migLayout")]);
    let e = load("  - at: 1h\n    delete: [{kind: Node, name: gpu-a}]\n").expect_err("refused");
    let got: Vec<(&str, &str)> = e
        .iter()
        .map(|d| (d.code.as_str(), d.field.as_str()))
        .collect();
    assert_eq!(got, [("not-simulated", "spec.timeline[0].delete[0]")]);
    // an unknown Queue is the common reader's error
    let e = load("  - at: 1h\n    patch: [{kind: Queue, name: nope, mergePatch: {spec: {}}}]\n")
        .expect_err("unknown");
    assert!(
        e.iter()
            .any(|d| d.field.starts_with("spec.timeline[0].patch[0]")),
        "{e:?}"
    );
}

/// Two 4-GPU nodes, one queue `q` (8 deserved, no limit).
fn two_nodes() -> String {
    let node = |n: &str| {
        format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: {n}}}\nstatus: {{allocatable: {{nvidia.com/gpu: \"4\", cpu: \"64\", memory: 512Gi}}}}\n---\n"
        )
    };
    node("gpu-a")
        + &node("gpu-b")
        + "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q}\nspec: {resources: {gpu: {quota: 8, overQuotaWeight: 1, limit: -1}}}\n"
}

/// j1 (4 GPUs, 1 h) and j2 (4 GPUs, 3 h) at 0, plus `more` jobs, on [`two_nodes`] with
/// `timeline`, 10-minute sessions until 6 h.
fn run_nodes(more: &str, timeline: &str) -> Value {
    let jobs = common::kai_pod("ns", "j1", "00:00", 4, "1h")
        + &common::kai_pod("ns", "j2", "00:00", 4, "3h")
        + more;
    let read = common::files(vec![("cluster.yaml", two_nodes()), ("jobs.yaml", jobs)]);
    let sim = gpuquota_sim::fuzzing::scenario("t.yaml", &scenario(timeline), "t", &read)
        .expect("scenario");
    gpuquota_sim::fuzzing::run_kai(&sim)
        .expect("runs")
        .to_json()
}

/// (start, end, how, reason, by) of each run of `name`.
fn runs(v: &Value, name: &str) -> Vec<(i64, i64, String, String, String)> {
    job(v, name)["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or("").to_owned();
            (
                r["startMs"].as_i64().expect("start"),
                r["endMs"].as_i64().expect("end"),
                s("end"),
                s("reason"),
                s("by"),
            )
        })
        .collect()
}

fn nodes_of(v: &Value, name: &str, run: usize) -> Value {
    job(v, name)["runs"][run]["nodes"].clone()
}

/// Session 0 places j1 on gpu-a and j2 on gpu-b. gpu-b fails at 1h05m: j2's pods are lost
/// then (run 0 → 1h05m, `NodeFailures`, `by: Node/gpu-b`) and it is pending again; j1
/// finished at 1 h, so the next session, 1h10m, which sees only gpu-a, starts j2 there
/// afresh (its whole 3 h again: no resume): 1h10m → 4h10m. The event's entry: gpu-b down,
/// j2 evicted, schedulable GPUs 8 → 4; the evictions count one `node` run.
#[test]
fn a_failed_nodes_pods_are_lost_and_the_next_session_sees_the_node_set_without_it() {
    let v = run_nodes("", "  - at: 1h5m\n    nodes: {down: [gpu-b]}\n");
    assert_eq!(nodes_of(&v, "j1", 0), serde_json::json!(["gpu-a"]));
    assert_eq!(nodes_of(&v, "j2", 0), serde_json::json!(["gpu-b"]));
    assert_eq!(
        runs(&v, "j1"),
        [(0, H, "Finished".into(), String::new(), String::new())]
    );
    assert_eq!(
        runs(&v, "j2"),
        [
            (
                0,
                H + 5 * M,
                "Evicted".into(),
                "NodeFailures".into(),
                "Node/gpu-b".into()
            ),
            (
                H + 10 * M,
                4 * H + 10 * M,
                "Finished".into(),
                String::new(),
                String::new()
            ),
        ]
    );
    assert_eq!(job(&v, "j2")["runs"][0]["action"], "node");
    assert_eq!(nodes_of(&v, "j2", 1), serde_json::json!(["gpu-a"]));
    assert_eq!(v["evictions"], serde_json::json!({"node": 1}));
    assert_eq!(
        v["timeline"],
        serde_json::json!([{
            "index": 0, "atMs": H + 5 * M, "changes": [],
            "admissionsStopped": [], "admissionsResumed": [],
            "evicted": [{"workload": "ns/j2", "reason": "NodeFailures"}],
            "terminating": [], "capacityBefore": {}, "capacityAfter": {},
            "nodesDown": ["gpu-b"],
            "devicesBefore": {"nvidia.com/gpu": 8}, "devicesAfter": {"nvidia.com/gpu": 4}
        }])
    );
}

/// gpu-a (j1's node) is drained at 30 min without a deadline: j1 runs on and finishes at
/// 1 h; j3 (4 GPUs, 1 h, created at 30 min) may not go to gpu-a, now free, and waits for
/// j2 on gpu-b: 3 h → 4 h. gpu-a back (`up`) at 2 h: j3 starts at that instant's session,
/// 2 h → 3 h. Without the drain j3 starts at 1 h on gpu-a.
#[test]
fn a_drained_node_takes_no_new_pods_and_its_running_pods_finish() {
    let j3 = common::kai_pod("ns", "j3", "00:30", 4, "1h");
    let drain = "  - at: 30m\n    nodes: {drain: [gpu-a]}\n";
    let v = run_nodes(&j3, drain);
    assert_eq!(
        runs(&v, "j1"),
        [(0, H, "Finished".into(), String::new(), String::new())]
    );
    assert_eq!(
        runs(&v, "j3"),
        [(
            3 * H,
            4 * H,
            "Finished".into(),
            String::new(),
            String::new()
        )]
    );
    assert_eq!(nodes_of(&v, "j3", 0), serde_json::json!(["gpu-b"]));
    assert_eq!(
        v["timeline"][0]["nodesDrained"],
        serde_json::json!(["gpu-a"])
    );
    assert_eq!(v["timeline"][0]["evicted"], serde_json::json!([]));
    assert_eq!(v["timeline"][0]["devicesAfter"]["nvidia.com/gpu"], 4);
    let v = run_nodes(
        &j3,
        &format!("{drain}  - at: 2h\n    nodes: {{up: [gpu-a]}}\n"),
    );
    assert_eq!(
        runs(&v, "j3"),
        [(
            2 * H,
            3 * H,
            "Finished".into(),
            String::new(),
            String::new()
        )]
    );
    assert_eq!(v["timeline"][1]["nodesUp"], serde_json::json!(["gpu-a"]));
    assert_eq!(v["timeline"][1]["devicesBefore"]["nvidia.com/gpu"], 4);
    assert_eq!(v["timeline"][1]["devicesAfter"]["nvidia.com/gpu"], 8);
    let v = run_nodes(&j3, "    []\n");
    assert_eq!(runs(&v, "j3")[0].0, H);
}

/// gpu-b (j2's node) drained at 30 min with a 20-minute deadline: j2 still runs at 50 min
/// and loses its pods then (`EvictionByEvictionAPI`, `by: Node/gpu-b`); j1 ends at 1 h, and
/// the 1 h session starts j2 again on gpu-a, 1 h → 4 h. A second event drains gpu-b again
/// at 40 min with a 1 h deadline: the first deadline is stale, and j2 is evicted at 1h40m
/// instead (restarting at the 1h40m session on gpu-a, free since 1 h: 1h40m → 4h40m); an
/// `up` at 45 min spares it.
#[test]
fn a_drain_deadline_evicts_what_still_runs_unless_stale() {
    let drain = "  - at: 30m\n    nodes: {drain: [gpu-b], drainDeadline: 20m}\n";
    let v = run_nodes("", drain);
    let lost = |t: i64| {
        (
            0,
            t,
            "Evicted".to_owned(),
            "EvictionByEvictionAPI".to_owned(),
            "Node/gpu-b".to_owned(),
        )
    };
    let done = |a: i64, b: i64| (a, b, "Finished".to_owned(), String::new(), String::new());
    assert_eq!(runs(&v, "j2"), [lost(50 * M), done(H, 4 * H)]);
    assert_eq!(nodes_of(&v, "j2", 1), serde_json::json!(["gpu-a"]));
    assert_eq!(
        v["timeline"][0]["evicted"],
        serde_json::json!([{"workload": "ns/j2", "reason": "EvictionByEvictionAPI"}])
    );
    assert_eq!(v["timeline"][0]["drainDeadlineMs"], 20 * M);
    let again = format!("{drain}  - at: 40m\n    nodes: {{drain: [gpu-b], drainDeadline: 1h}}\n");
    let v = run_nodes("", &again);
    assert_eq!(
        runs(&v, "j2"),
        [lost(H + 40 * M), done(H + 40 * M, 4 * H + 40 * M)]
    );
    assert_eq!(v["timeline"][0]["evicted"], serde_json::json!([]));
    assert_eq!(v["timeline"][1]["evicted"][0]["workload"], "ns/j2");
    let v = run_nodes(
        "",
        &format!("{drain}  - at: 45m\n    nodes: {{up: [gpu-b]}}\n"),
    );
    assert_eq!(runs(&v, "j2"), [done(0, 3 * H)]);
}

/// The KAI table and plot show the timeline as the Kueue ones do: one sentence per event
/// (gpu-b down at 01:05, j2 evicted with `NodeFailures`, 8 → 4 schedulable GPUs; the Queue
/// patch at 02:00 listed as a replaced Queue), and a teal rule `#N` per event in every
/// panel, counted once in the legend (2 events); j2's lost run is a red triangle.
#[test]
fn the_kai_table_and_plot_show_the_timeline() {
    let jobs = common::kai_pod("ns", "j1", "00:00", 4, "1h")
        + &common::kai_pod("ns", "j2", "00:00", 4, "3h");
    let read = common::files(vec![("cluster.yaml", two_nodes()), ("jobs.yaml", jobs)]);
    let timeline = "  - at: 1h5m\n    nodes: {down: [gpu-b]}\n  - at: 2h\n    patch:\n    - {kind: Queue, name: q, mergePatch: {spec: {resources: {gpu: {limit: 4}}}}}\n";
    let sim = gpuquota_sim::fuzzing::scenario("t.yaml", &scenario(timeline), "t", &read)
        .expect("scenario");
    let o = gpuquota_sim::fuzzing::run_kai(&sim).expect("runs");
    assert_eq!(
        o.timeline_sentences(),
        [
            "Timeline event 0 at 01:05: node gpu-b down. Evicted: ns/j2 (NodeFailures). Schedulable devices nvidia.com/gpu=8 -> nvidia.com/gpu=4.",
            "Timeline event 1 at 02:00: Queue q replaced.",
        ]
    );
    let table = o.to_table();
    assert!(
        table.contains("1 of q's runs were evicted by node.\n"),
        "{table}"
    );
    assert!(
        table.contains("\nTimeline event 0 at 01:05: node gpu-b down."),
        "{table}"
    );
    let svg = gpuquota_sim::kai::plot::svg(sim.kai().expect("kai"), &o).expect("plot");
    assert!(svg.contains("\n#0\n</text>"), "{svg}");
    assert!(svg.contains("\n#1\n</text>"), "{svg}");
    assert!(svg.contains("\nlost with its node (1)\n"), "{svg}");
    assert_eq!(svg.matches("timeline event").count(), 1, "one legend entry");
    assert!(svg.contains("\ntimeline event (2)\n"), "{svg}");
    // without a timeline: no section, no mark
    let v = run_nodes("", "    []\n");
    assert!(v.get("timeline").is_none(), "{v}");
}

/// A pod of `queue` (as `common::kai_pod`, whose queue is always `q`).
fn pod_in(queue: &str, name: &str, at: &str, gpus: u32, runtime: &str) -> String {
    common::kai_pod("ns", name, at, gpus, runtime).replace(
        "kai.scheduler/queue: q}",
        &format!("kai.scheduler/queue: {queue}}}"),
    )
}

/// [`cluster`] with `jobs`, `extra` files and `timeline`: 10-minute sessions until 6 h.
fn run_queues(jobs: &str, extra: Vec<(&'static str, String)>, timeline: &str) -> Value {
    let mut files = vec![("cluster.yaml", cluster()), ("jobs.yaml", jobs.to_owned())];
    files.extend(extra);
    let read = common::files(files);
    let sim = gpuquota_sim::fuzzing::scenario("t.yaml", &scenario(timeline), "t", &read)
        .expect("scenario");
    gpuquota_sim::fuzzing::run_kai(&sim)
        .expect("runs")
        .to_json()
}

/// j3 (2 GPUs, 1 h) names `q3`, which does not exist: pending with `QueueDoesNotExist`. At
/// 1h05m `q3` is created under a new parent `dept2` (one file, both Queues): they join the
/// tree at the next session, 1h10m, where j3 starts; it ends at 2h10m. `q3`'s series has
/// zeros for the 7 sessions before (0 … 1h) and 2 GPUs from the 1h10m session (index 7)
/// to the 2h session (index 12); its parent is `dept2`.
#[test]
fn a_queue_created_mid_run_joins_the_tree_at_the_next_session() {
    let jobs = pod_in("q3", "j3", "00:00", 2, "1h");
    let v = run_queues(&jobs, vec![], "    []\n");
    assert_eq!(job(&v, "j3")["runs"], serde_json::json!([]));
    assert_eq!(job(&v, "j3")["pending"]["reason"], "QueueDoesNotExist");
    let q3 = "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: dept2}\nspec: {resources: {gpu: {quota: 2, overQuotaWeight: 1, limit: -1}}}\n---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q3}\nspec: {parentQueue: dept2, resources: {gpu: {quota: 2, overQuotaWeight: 1, limit: -1}}}\n";
    let v = run_queues(
        &jobs,
        vec![("q3.yaml", q3.to_owned())],
        "  - at: 1h5m\n    apply: [q3.yaml]\n",
    );
    let j3 = job(&v, "j3");
    assert_eq!(j3["runs"].as_array().map(Vec::len), Some(1), "{j3}");
    assert_eq!(j3["runs"][0]["startMs"], H + 10 * M);
    assert_eq!(j3["finishedMs"], 2 * H + 10 * M);
    let series = &v["queues"]["q3"];
    assert_eq!(series["parent"], "dept2");
    let alloc: Vec<f64> = series["allocated"]
        .as_array()
        .expect("series")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect();
    assert_eq!(alloc.len(), 36, "one point per session of 6 h");
    assert_eq!(alloc[..7], [0.0; 7]);
    assert_eq!(alloc[7..13], [2.0; 6]);
    assert_eq!(alloc[13], 0.0);
    assert_eq!(
        v["timeline"][0]["changes"],
        serde_json::json!([
            {"kind": "Queue", "name": "dept2", "change": "created"},
            {"kind": "Queue", "name": "q3", "change": "created"}
        ])
    );
}

/// `q2` holds r (4 GPUs, 3 h, running from 0) and p (4 GPUs, 1 h, created at 1h30m). `q2`
/// is deleted at 1h05m: from the 1h10m session KAI's snapshot ignores its PodGroups, so r
/// runs on to 3 h (not evicted), p stays pending (`QueueDoesNotExist`) although 4 GPUs are
/// free, and `q2`'s series shows 4 GPUs until the 1 h session (index 6), 0 from the 1h10m
/// one. Without the deletion p runs 1h30m → 2h30m.
#[test]
fn a_deleted_queues_running_jobs_run_on_and_its_pending_jobs_wait() {
    let jobs = pod_in("q2", "r", "00:00", 4, "3h") + &pod_in("q2", "p", "01:30", 4, "1h");
    let v = run_queues(&jobs, vec![], "    []\n");
    assert_eq!(job(&v, "p")["runs"][0]["startMs"], H + 30 * M);
    let v = run_queues(
        &jobs,
        vec![],
        "  - at: 1h5m\n    delete: [{kind: Queue, name: q2}]\n",
    );
    let r = job(&v, "r");
    assert_eq!(r["runs"].as_array().map(Vec::len), Some(1), "{r}");
    assert_eq!(r["runs"][0]["startMs"], 0);
    assert_eq!(r["finishedMs"], 3 * H);
    let p = job(&v, "p");
    assert_eq!(p["runs"], serde_json::json!([]));
    assert_eq!(p["pending"]["reason"], "QueueDoesNotExist");
    let alloc = &v["queues"]["q2"]["allocated"];
    assert_eq!(alloc[6], 4.0);
    assert_eq!(alloc[7], 0.0);
    assert_eq!(v["evictions"], serde_json::json!({}));
}

/// `q2` (r: 4 GPUs, 3 h from 0) moved from `dept` to the top level at 1 h: the 1 h session
/// (the event applies before it) counts r under `q2` alone; `dept` held r's 4 GPUs until
/// the 50 min session (index 5) and holds nothing from the 1 h one (index 6); r runs on.
#[test]
fn a_queue_moved_in_the_tree_counts_under_its_new_parent_from_the_next_session() {
    let jobs = pod_in("q2", "r", "00:00", 4, "3h");
    let v = run_queues(
        &jobs,
        vec![],
        "  - at: 1h\n    patch: [{kind: Queue, name: q2, mergePatch: {spec: {parentQueue: null}}}]\n",
    );
    assert_eq!(v["queues"]["q2"]["parent"], Value::Null);
    assert_eq!(v["queues"]["dept"]["allocated"][5], 4.0);
    assert_eq!(v["queues"]["dept"]["allocated"][6], 0.0);
    assert_eq!(v["queues"]["q2"]["allocated"][6], 4.0);
    assert_eq!(job(&v, "r")["finishedMs"], 3 * H);
}
