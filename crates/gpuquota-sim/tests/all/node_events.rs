//! The timeline's node events and MIG maintenance windows (`spec.timeline[].nodes`,
//! `spec.timeline[].migLayout`), hand-checked on two 2-GPU nodes under ResourceQuota only
//! and Kueue.

use crate::common;

use common::H;
use serde_json::Value;

const START: &str = "2026-04-01T00:00:00Z";

fn sim(engine: &str, timeline: &str, extra: &str) -> Value {
    let text = format!(
        "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {{name: t}}\nspec:\n  engine: {engine}\n  cluster: [c.yaml]\n  start: \"{START}\"\n  end: \"2026-04-02T00:00:00Z\"\n  resourceQuota: {{retryInterval: 5m}}\n  timeline:\n{timeline}"
    );
    let sim = gpuquota_sim::fuzzing::scenario(
        "t.yaml",
        &text,
        "t",
        &common::files(vec![("c.yaml", cluster(extra))]),
    )
    .expect("valid scenario");
    gpuquota_sim::fuzzing::run_kueue(&sim)
        .expect("simulates")
        .to_json()
}

fn workload(name: &str, at: &str, resource: &str) -> String {
    format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: {name}, namespace: ns, creationTimestamp: \"2026-04-01T{at}:00Z\", annotations: {{gpuquota.dev/runtime: 3h}}}}\nspec:\n  queueName: lq\n  podSets: [{{name: main, count: 1, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{{resource}: \"1\"}}}}}}]}}}}}}]\n"
    )
}

/// Nodes n1 and n2 of two RTX PRO 6000 each (n1 first in name order), a mig-parted config
/// `split` (GPU 0 as four 1g.24gb), one flavor on both nodes, a ClusterQueue and a
/// ResourceQuota of 8 GPUs and 8 instances, and four 1-GPU workloads of 3 h at 0 (w0 and
/// w1 land on n1, w2 and w3 on n2), plus `extra` workloads.
fn cluster(extra: &str) -> String {
    let mut d = Vec::new();
    for n in ["n1", "n2"] {
        d.push(format!("apiVersion: v1\nkind: Node\nmetadata: {{name: {n}, labels: {{gpu: a, nvidia.com/gpu.product: NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition}}}}\nstatus: {{allocatable: {{nvidia.com/gpu: \"2\"}}}}\n"));
    }
    d.push("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: mig-parted, namespace: gpu-operator}\ndata:\n  config.yaml: |\n    version: v1\n    mig-configs:\n      split:\n      - devices: [0]\n        mig-enabled: true\n        mig-devices: {\"1g.24gb\": 4}\n".to_owned());
    d.push("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: a}\nspec: {nodeLabels: {gpu: a}}\n".to_owned());
    d.push("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu, nvidia.com/mig-1g.24gb]\n    flavors: [{name: a, resources: [{name: nvidia.com/gpu, nominalQuota: 8}, {name: nvidia.com/mig-1g.24gb, nominalQuota: 8}]}]\n".to_owned());
    d.push("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq, namespace: ns}\nspec: {clusterQueue: cq}\n".to_owned());
    d.push("apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: cap, namespace: ns}\nspec: {hard: {requests.nvidia.com/gpu: \"8\"}}\n".to_owned());
    for i in 0..4 {
        d.push(workload(&format!("w{i}"), "00:00", "nvidia.com/gpu"));
    }
    if !extra.is_empty() {
        d.push(extra.to_owned());
    }
    d.join("---\n")
}

fn runs(j: &Value, w: usize) -> Vec<(i64, i64, i64, String, String)> {
    j["workloads"][w]["runs"]
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
            )
        })
        .collect()
}

fn run(
    reserved: i64,
    start: i64,
    end: i64,
    how: &str,
    reason: &str,
) -> (i64, i64, i64, String, String) {
    (reserved, start, end, how.to_owned(), reason.to_owned())
}

/// n1 fails at 1 h: w0 and w1 lose their pods (1 h of lost work each, reason
/// `NodeFailures`, by `Node/n1`), are created again at once and wait, n2 being full, until
/// w2 and w3 end at 3 h; their full 3 h runs then end at 6 h. With n1 back at 2 h they
/// start at 2 h instead and end at 5 h.
#[test]
fn resourcequota_a_failed_nodes_pods_are_lost_and_recreated() {
    let down = "  - {at: 1h, nodes: {down: [n1]}}\n";
    let j = sim("resourcequota", down, "");
    for w in [0, 1] {
        assert_eq!(
            runs(&j, w),
            vec![
                run(0, 0, H, "Preempted", "NodeFailures"),
                run(H, 3 * H, 6 * H, "Finished", ""),
            ],
            "w{w}"
        );
        assert_eq!(j["workloads"][w]["runs"][0]["by"], "Node/n1");
    }
    for w in [2, 3] {
        assert_eq!(runs(&j, w), vec![run(0, 0, 3 * H, "Finished", "")]);
    }
    let up = "  - {at: 1h, nodes: {down: [n1]}}\n  - {at: 2h, nodes: {up: [n1]}}\n";
    let j = sim("resourcequota", up, "");
    assert_eq!(
        runs(&j, 0),
        vec![
            run(0, 0, H, "Preempted", "NodeFailures"),
            run(H, 2 * H, 5 * H, "Finished", ""),
        ]
    );
}

/// While n1 is down, a pod that does not fit waits with the kube-scheduler's message
/// naming the failed node's taint.
#[test]
fn resourcequota_the_waiting_message_names_the_failed_node() {
    let text = "  - {at: 1h, nodes: {down: [n1]}}\n";
    let j = {
        let doc = format!(
            "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {{name: t}}\nspec:\n  engine: resourcequota\n  cluster: [c.yaml]\n  start: \"{START}\"\n  end: \"2026-04-01T02:00:00Z\"\n  timeline:\n{text}"
        );
        let sim = gpuquota_sim::fuzzing::scenario(
            "t.yaml",
            &doc,
            "t",
            &common::files(vec![("c.yaml", cluster(""))]),
        )
        .expect("valid scenario");
        gpuquota_sim::fuzzing::run_kueue(&sim)
            .expect("simulates")
            .to_json()
    };
    let p = &j["workloads"][0]["pending"];
    assert_eq!(p["reason"], "Unschedulable");
    assert_eq!(
        p["message"],
        "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }."
    );
}

/// n1 drained at 1 h with a 1 h deadline: w0 and w1 still run at 2 h and are evicted then
/// (`EvictionByEvictionAPI`), wait for n2 until 3 h and run 3 h to 6 h. Without a deadline
/// they finish at 3 h, and w4 (arriving at 1 h 30) waits for n2 until 3 h although n1 has
/// no free device either: nothing new lands on a cordoned node, even once it is idle.
#[test]
fn resourcequota_a_drain_deadline_evicts_what_still_runs() {
    let j = sim(
        "resourcequota",
        "  - {at: 1h, nodes: {drain: [n1], drainDeadline: 1h}}\n",
        "",
    );
    for w in [0, 1] {
        assert_eq!(
            runs(&j, w),
            vec![
                run(0, 0, 2 * H, "Preempted", "EvictionByEvictionAPI"),
                run(2 * H, 3 * H, 6 * H, "Finished", ""),
            ],
            "w{w}"
        );
    }
    let j = sim(
        "resourcequota",
        "  - {at: 1h, nodes: {drain: [n1]}}\n",
        &workload("w4", "01:30", "nvidia.com/gpu"),
    );
    assert_eq!(runs(&j, 0), vec![run(0, 0, 3 * H, "Finished", "")]);
    assert_eq!(
        runs(&j, 4),
        vec![run(3 * H / 2, 3 * H, 6 * H, "Finished", "")]
    );
    // the node back before the deadline: nothing is evicted
    let j = sim(
        "resourcequota",
        "  - {at: 1h, nodes: {drain: [n1], drainDeadline: 1h}}\n  - {at: 90m, nodes: {up: [n1]}}\n",
        "",
    );
    assert_eq!(runs(&j, 0), vec![run(0, 0, 3 * H, "Finished", "")]);
}

/// A MIG window on n1 at 1 h: n1 takes no new pods, and waits for w0 and w1 (until 3 h);
/// then GPU 0 becomes four 1g.24gb instances (n1: 1 GPU + 4 instances). The notebook nb
/// (one instance, from 30 min) and w4 (one GPU, from 1 h 30) start at 3 h and end at 6 h.
#[test]
fn resourcequota_a_mig_window_waits_for_the_node_to_be_idle() {
    let extra = format!(
        "{}---\n{}",
        workload("nb", "00:30", "nvidia.com/mig-1g.24gb"),
        workload("w4", "01:30", "nvidia.com/gpu")
    );
    let j = sim(
        "resourcequota",
        "  - {at: 1h, migLayout: {node: n1, config: split}}\n",
        &extra,
    );
    assert_eq!(runs(&j, 1), vec![run(0, 0, 3 * H, "Finished", "")]);
    // workloads in key order: ns/nb, ns/w0..w4
    let keys: Vec<&str> = j["workloads"]
        .as_array()
        .expect("workloads")
        .iter()
        .map(|w| w["workload"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        keys,
        vec!["ns/nb", "ns/w0", "ns/w1", "ns/w2", "ns/w3", "ns/w4"]
    );
    assert_eq!(runs(&j, 0), vec![run(H / 2, 3 * H, 6 * H, "Finished", "")]);
    assert_eq!(
        runs(&j, 5),
        vec![run(3 * H / 2, 3 * H, 6 * H, "Finished", "")]
    );
}

/// Under Kueue: n1 fails at 1 h; w0 and w1 are evicted (`NodeFailures`), queue again and
/// are admitted at once (8 GPUs of quota, 2 in use), their pods wait for n2's devices until
/// w2 and w3 end at 3 h, and run to 6 h. The report's timeline entry names the node, the
/// evictions and the schedulable devices before and after.
#[test]
fn kueue_a_failed_nodes_workloads_are_requeued_and_wait_for_devices() {
    let j = sim("kueue", "  - {at: 1h, nodes: {down: [n1]}}\n", "");
    for w in [0, 1] {
        assert_eq!(
            runs(&j, w),
            vec![
                run(0, 0, H, "Preempted", "NodeFailures"),
                run(H, 3 * H, 6 * H, "Finished", ""),
            ],
            "w{w}"
        );
        assert_eq!(j["workloads"][w]["runs"][0]["by"], "Node/n1");
    }
    let e = &j["timeline"][0];
    assert_eq!(e["atMs"], H);
    assert_eq!(e["nodesDown"], serde_json::json!(["n1"]));
    assert_eq!(
        e["evicted"],
        serde_json::json!([
            {"workload": "ns/w0", "reason": "NodeFailures"},
            {"workload": "ns/w1", "reason": "NodeFailures"}
        ])
    );
    assert_eq!(
        e["devicesBefore"],
        serde_json::json!({"nvidia.com/gpu": 4, "nvidia.com/mig-1g.24gb": 0})
    );
    assert_eq!(
        e["devicesAfter"],
        serde_json::json!({"nvidia.com/gpu": 2, "nvidia.com/mig-1g.24gb": 0})
    );
    assert!(e.get("migWindow").is_none());
}

/// Under Kueue, a drain deadline: as under ResourceQuota, w0 and w1 are evicted at 2 h
/// (`EvictionByEvictionAPI`), readmitted at once, and their pods wait until 3 h; the
/// evictions are listed under the drain's event.
#[test]
fn kueue_a_drain_deadline_evicts_what_still_runs() {
    let j = sim(
        "kueue",
        "  - {at: 1h, nodes: {drain: [n1], drainDeadline: 1h}}\n",
        "",
    );
    assert_eq!(
        runs(&j, 0),
        vec![
            run(0, 0, 2 * H, "Preempted", "EvictionByEvictionAPI"),
            run(2 * H, 3 * H, 6 * H, "Finished", ""),
        ]
    );
    let e = &j["timeline"][0];
    assert_eq!(e["nodesDrained"], serde_json::json!(["n1"]));
    assert_eq!(e["drainDeadlineMs"], H);
    assert_eq!(e["evicted"][1]["workload"], "ns/w1");
    assert_eq!(e["evicted"][1]["reason"], "EvictionByEvictionAPI");
}

/// The MIG window's report entry: opened at 1 h, closed at 3 h when w0 and w1 (which it
/// waited for) ended; n1's devices leave the schedulable ones at the event (4 -> 2 GPUs).
/// Under Kueue the notebook and w4 also start at 3 h.
#[test]
fn a_mig_windows_report_entry_says_when_it_opened_and_closed() {
    let extra = format!(
        "{}---\n{}",
        workload("nb", "00:30", "nvidia.com/mig-1g.24gb"),
        workload("w4", "01:30", "nvidia.com/gpu")
    );
    for engine in ["resourcequota", "kueue"] {
        let j = sim(
            engine,
            "  - {at: 1h, migLayout: {node: n1, config: split}}\n",
            &extra,
        );
        let e = &j["timeline"][0];
        assert_eq!(
            e["migWindow"],
            serde_json::json!({
                "node": "n1", "config": "split", "openedMs": H, "closedMs": 3 * H,
                "waited": ["ns/w0", "ns/w1"]
            }),
            "{engine}"
        );
        assert_eq!(e["devicesAfter"]["nvidia.com/gpu"], 2, "{engine}");
        assert_eq!(runs(&j, 0)[0].1, 3 * H, "{engine}");
        assert_eq!(runs(&j, 5)[0].1, 3 * H, "{engine}");
    }
}

/// The table's timeline sentence of a node event, and the timeline's refusals: a MIG
/// config the node's GPUs cannot take, a node the cluster does not have.
#[test]
fn node_events_in_the_table_and_refused_at_reading() {
    let doc = |timeline: &str| {
        format!(
            "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {{name: t}}\nspec:\n  engine: kueue\n  cluster: [c.yaml]\n  start: \"{START}\"\n  end: \"2026-04-02T00:00:00Z\"\n  timeline:\n{timeline}"
        )
    };
    let read = common::files(vec![("c.yaml", cluster(""))]);
    let sim = gpuquota_sim::fuzzing::scenario(
        "t.yaml",
        &doc("  - {at: 1h, nodes: {down: [n1]}}\n  - {at: 2h, nodes: {up: [n1], drain: [n2], drainDeadline: 30m}}\n"),
        "t",
        &read,
    )
    .expect("valid");
    let table = gpuquota_sim::fuzzing::run_kueue(&sim)
        .expect("simulates")
        .to_table();
    assert!(
        table.contains("Timeline event 0 at 01:00: node n1 down. Evicted: ns/w0 (NodeFailures), ns/w1 (NodeFailures). Schedulable devices nvidia.com/gpu=4, nvidia.com/mig-1g.24gb=0 -> nvidia.com/gpu=2, nvidia.com/mig-1g.24gb=0."),
        "{table}"
    );
    assert!(
        table.contains("Timeline event 1 at 02:00: node n2 drained (deadline 02:30), node n1 up."),
        "{table}"
    );
    let bad = [
        "  - {at: 1h, migLayout: {node: n1, config: nope}}\n",
        "  - {at: 1h, nodes: {down: [n9]}}\n",
    ];
    let fields = [
        "spec.timeline[0].migLayout.config",
        "spec.timeline[0].nodes.down[0]",
    ];
    for (b, f) in bad.iter().zip(fields) {
        let e =
            gpuquota_sim::fuzzing::scenario("t.yaml", &doc(b), "t", &read).expect_err("refused");
        assert!(e.0.iter().any(|d| d.field == f), "{e:?}");
    }
}
