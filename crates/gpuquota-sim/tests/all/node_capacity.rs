//! Node capacity: a quota admits, the Nodes still need a free device. Hand-checked
//! scenarios under ResourceQuota only and Kueue, and the property over random scenarios
//! that no engine (ResourceQuota, Kueue, KAI) ever runs more devices of a card type than
//! the Nodes provide.

use crate::common;

use std::collections::BTreeMap;

use common::H;
use proptest::prelude::*;
use serde_json::Value;

const START: &str = "2026-04-01T00:00:00Z";

fn sim(engine: &str, end: &str, cluster: String) -> Value {
    let text = format!(
        "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {{name: t}}\nspec:\n  engine: {engine}\n  cluster: [c.yaml]\n  start: \"{START}\"\n  end: \"{end}\"\n  resourceQuota: {{retryInterval: 5m}}\n"
    );
    let sim = gpuquota_sim::fuzzing::scenario(
        "t.yaml",
        &text,
        "t",
        &common::files(vec![("c.yaml", cluster)]),
    )
    .expect("valid scenario");
    gpuquota_sim::fuzzing::run_kueue(&sim)
        .expect("simulates")
        .to_json()
}

/// One node with 2 GPUs (optional), a flavor on it, a ClusterQueue of 4 GPUs, a
/// ResourceQuota of 4 GPUs, and three 1-GPU workloads of 3 h arriving at 0, 1 h and 2 h.
fn tiny(with_node: bool) -> String {
    let mut d = Vec::new();
    if with_node {
        d.push("apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {gpu: a}}\nstatus: {allocatable: {nvidia.com/gpu: \"2\"}}\n".to_owned());
    }
    d.push("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: a}\nspec: {nodeLabels: {gpu: a}}\n".to_owned());
    d.push("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors: [{name: a, resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}]\n".to_owned());
    d.push("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq, namespace: ns}\nspec: {clusterQueue: cq}\n".to_owned());
    d.push("apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: cap, namespace: ns}\nspec: {hard: {requests.nvidia.com/gpu: \"4\"}}\n".to_owned());
    for (i, h) in [0, 1, 2].iter().enumerate() {
        d.push(format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: w{i}, namespace: ns, creationTimestamp: \"2026-04-01T0{h}:00:00Z\", annotations: {{gpuquota.dev/runtime: 3h}}}}\nspec:\n  queueName: lq\n  podSets: [{{name: main, count: 1, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: \"1\"}}}}}}]}}}}}}]\n"
        ));
    }
    d.join("---\n")
}

/// Under ResourceQuota only: the third pod fits the quota (2 of 4 used) but both devices
/// are busy, so it stays Pending `Unschedulable` from 2 h until the first run ends at 3 h,
/// and its 3 h run ends at 6 h.
#[test]
fn resourcequota_third_pod_waits_for_a_device() {
    let j = sim("resourcequota", "2026-04-01T08:00:00Z", tiny(true));
    assert_eq!(j["capacityChecked"], true);
    let w = &j["workloads"];
    assert_eq!(w[0]["runs"][0]["startMs"], 0);
    assert_eq!(w[0]["runs"][0]["endMs"], 3 * H);
    assert_eq!(w[1]["runs"][0]["startMs"], H);
    assert_eq!(w[1]["runs"][0]["endMs"], 4 * H);
    let r = &w[2]["runs"][0];
    assert_eq!(r["reservedMs"], 2 * H);
    assert_eq!(r["startMs"], 3 * H);
    assert_eq!(r["endMs"], 6 * H);
    assert_eq!(w[2]["finishedMs"], 6 * H);
    assert!(w[0]["runs"][0].get("reservedMs").is_none());
    // time to admission is the pods' creation, not the device wait
    assert_eq!(j["classes"][""]["p95TimeToAdmissionMs"], 0);
    // cut at 2h30: the third is pending Unschedulable with the kube-scheduler's message
    let j = sim("resourcequota", "2026-04-01T02:30:00Z", tiny(true));
    let p = &j["workloads"][2]["pending"];
    assert_eq!(p["reason"], "Unschedulable");
    assert_eq!(
        p["message"],
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."
    );
    assert!(
        j["workloads"][2]["runs"]
            .as_array()
            .expect("runs")
            .is_empty()
    );
}

/// Under Kueue: the third workload is admitted at 2 h (quota 4, 2 in use) and keeps its
/// reservation, but its pod waits for a device until 3 h; its runtime starts then and ends
/// at 6 h.
#[test]
fn kueue_admitted_workload_waits_for_its_pods() {
    let j = sim("kueue", "2026-04-01T08:00:00Z", tiny(true));
    assert_eq!(j["capacityChecked"], true);
    let w = &j["workloads"];
    assert_eq!(w[1]["runs"][0]["startMs"], H);
    let r = &w[2]["runs"][0];
    assert_eq!(r["reservedMs"], 2 * H);
    assert_eq!(r["startMs"], 3 * H);
    assert_eq!(r["endMs"], 6 * H);
    assert_eq!(r["usage"]["a"]["nvidia.com/gpu"], "1");
    assert_eq!(w[2]["finishedMs"], 6 * H);
    assert_eq!(j["makespanMs"], 6 * H);
    let j = sim("kueue", "2026-04-01T02:30:00Z", tiny(true));
    assert_eq!(j["workloads"][2]["pending"]["reason"], "Unschedulable");
}

/// Without Nodes nothing but the quota caps: the third starts at 2 h, and the report says
/// that capacity was not checked.
#[test]
fn without_nodes_capacity_is_not_checked() {
    for engine in ["resourcequota", "kueue"] {
        let j = sim(engine, "2026-04-01T08:00:00Z", tiny(false));
        assert_eq!(j["capacityChecked"], false, "{engine}");
        assert_eq!(j["workloads"][2]["runs"][0]["startMs"], 2 * H, "{engine}");
        assert!(j["workloads"][2]["runs"][0].get("reservedMs").is_none());
    }
    let text = format!(
        "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {{name: t}}\nspec:\n  cluster: [c.yaml]\n  start: \"{START}\"\n  end: \"2026-04-01T08:00:00Z\"\n"
    );
    let sim = gpuquota_sim::fuzzing::scenario(
        "t.yaml",
        &text,
        "t",
        &common::files(vec![("c.yaml", tiny(false))]),
    )
    .expect("valid");
    let table = gpuquota_sim::fuzzing::run_kueue(&sim)
        .expect("simulates")
        .to_table();
    assert!(
        table.contains("Node capacity was not checked: the cluster files have no Nodes, so quotas are the only cap."),
        "{table}"
    );
    let sim = gpuquota_sim::fuzzing::scenario(
        "t.yaml",
        &text,
        "t",
        &common::files(vec![("c.yaml", tiny(true))]),
    )
    .expect("valid");
    let table = gpuquota_sim::fuzzing::run_kueue(&sim)
        .expect("simulates")
        .to_table();
    assert!(
        table.contains("Node capacity was checked against 1 Nodes: 1 runs waited for free devices (Unschedulable), 1h in all."),
        "{table}"
    );
}

/// A random platform: card types (a product label each) on nodes, one flavor per card
/// type, ClusterQueues with quotas that may exceed the cards, and workloads.
#[derive(Debug, Clone)]
struct Scn {
    /// Per node: (card type, GPUs).
    nodes: Vec<(usize, i64)>,
    /// Per ClusterQueue: (its flavors in order, nominal per flavor).
    cqs: Vec<(Vec<usize>, i64)>,
    /// (ClusterQueue, pods, GPUs per pod, created s, runtime s).
    wls: Vec<(usize, i64, i64, i64, i64)>,
}

const CARDS: usize = 3;

fn scn() -> impl Strategy<Value = Scn> {
    (
        prop::collection::vec((0..CARDS, 1i64..5), 1..5),
        prop::collection::vec(
            (
                prop::sample::subsequence((0..CARDS).collect::<Vec<_>>(), 1..=CARDS),
                1i64..10,
            ),
            1..4,
        ),
    )
        .prop_flat_map(|(nodes, cqs)| {
            let n = cqs.len();
            (
                Just(nodes),
                Just(cqs),
                prop::collection::vec((0..n, 1i64..3, 1i64..3, 0i64..30, 1i64..20), 0..14),
            )
        })
        .prop_map(|(nodes, cqs, wls)| Scn { nodes, cqs, wls })
}

fn cluster(s: &Scn) -> String {
    let mut d = Vec::new();
    for (i, (card, g)) in s.nodes.iter().enumerate() {
        d.push(format!("apiVersion: v1\nkind: Node\nmetadata: {{name: n{i}, labels: {{product: p{card}}}}}\nstatus: {{allocatable: {{nvidia.com/gpu: \"{g}\"}}}}\n"));
    }
    for c in 0..CARDS {
        d.push(format!("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {{name: f{c}}}\nspec: {{nodeLabels: {{product: p{c}}}}}\n"));
    }
    d.push(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: co}\nspec: {}\n"
            .to_owned(),
    );
    for (i, (flavors, nominal)) in s.cqs.iter().enumerate() {
        let fl: Vec<String> = flavors
            .iter()
            .map(|f| {
                format!(
                    "{{name: f{f}, resources: [{{name: nvidia.com/gpu, nominalQuota: {nominal}}}]}}"
                )
            })
            .collect();
        d.push(format!("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: cq{i}}}\nspec:\n  cohortName: co\n  namespaceSelector: {{}}\n  preemption: {{reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}}\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors: [{}]\n", fl.join(", ")));
        d.push(format!("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: lq, namespace: ns{i}}}\nspec: {{clusterQueue: cq{i}}}\n"));
        d.push(format!("apiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: cap, namespace: ns{i}}}\nspec: {{hard: {{requests.nvidia.com/gpu: \"{}\"}}}}\n", nominal * 2));
    }
    for (i, &(cq, pods, gpus, created, runtime)) in s.wls.iter().enumerate() {
        d.push(format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: w{i}, namespace: ns{cq}, creationTimestamp: \"2026-04-01T00:00:{created:02}Z\", annotations: {{gpuquota.dev/runtime: {runtime}s}}}}\nspec:\n  queueName: lq\n  priority: {}\n  podSets: [{{name: main, count: {pods}, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: \"{gpus}\"}}}}}}]}}}}}}]\n",
            i % 3
        ));
    }
    d.join("---\n")
}

/// The same platform for KAI: the nodes, one queue per ClusterQueue, and each workload as a
/// PodGroup whose pods select its ClusterQueue's first card type.
fn kai_cluster(s: &Scn) -> String {
    let mut d = vec![
        "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: dept}\nspec: {resources: {gpu: {quota: -1, overQuotaWeight: 1, limit: -1}}}\n".to_owned(),
    ];
    for (i, (card, g)) in s.nodes.iter().enumerate() {
        d.push(format!("apiVersion: v1\nkind: Node\nmetadata: {{name: n{i}, labels: {{product: p{card}}}}}\nstatus: {{allocatable: {{nvidia.com/gpu: \"{g}\", cpu: \"64\", memory: 256Gi}}}}\n"));
    }
    for (i, (_, nominal)) in s.cqs.iter().enumerate() {
        d.push(format!("apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {{name: q{i}}}\nspec: {{parentQueue: dept, resources: {{gpu: {{quota: {nominal}, overQuotaWeight: 1, limit: -1}}}}}}\n"));
    }
    for (i, &(cq, pods, gpus, created, runtime)) in s.wls.iter().enumerate() {
        let card = s.cqs[cq].0[0];
        d.push(format!("apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {{name: j{i}, namespace: ns{cq}, creationTimestamp: \"2026-04-01T00:00:{created:02}Z\", annotations: {{gpuquota.dev/runtime: {runtime}s}}}}\nspec: {{queue: q{cq}, minMember: {pods}}}\n"));
        for p in 0..pods {
            d.push(format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: j{i}-{p}, namespace: ns{cq}, annotations: {{pod-group-name: j{i}}}}}\nspec: {{schedulerName: kai-scheduler, nodeSelector: {{product: p{card}}}, containers: [{{name: c, resources: {{limits: {{nvidia.com/gpu: \"{gpus}\"}}}}}}]}}\nstatus: {{phase: Pending}}\n"));
        }
    }
    d.join("---\n")
}

/// GPUs per card type.
fn capacity(s: &Scn) -> Vec<i64> {
    let mut c = vec![0; CARDS];
    for &(card, g) in &s.nodes {
        c[card] += g;
    }
    c
}

/// The most devices of each card type in use at once, by a sweep over `(start, end,
/// card, amount)` intervals (ends before starts at one instant); `Err` at the first
/// instant above `cap`.
fn check(intervals: &[(i64, i64, usize, i64)], cap: &[i64]) -> Result<(), String> {
    let mut ev: Vec<(i64, bool, usize, i64)> = Vec::new();
    for &(a, b, c, n) in intervals {
        if b > a {
            ev.push((a, true, c, n));
            ev.push((b, false, c, -n));
        }
    }
    ev.sort_unstable();
    let mut used = vec![0i64; cap.len()];
    for (t, _, c, n) in ev {
        used[c] += n;
        if used[c] > cap[c] {
            return Err(format!("card p{c} at {t} ms: {} > {}", used[c], cap[c]));
        }
    }
    Ok(())
}

fn kueue_like(s: &Scn, engine: &str) -> Result<(), String> {
    let j = sim(engine, "2026-04-01T00:02:00Z", cluster(s));
    if j["capacityChecked"] != true {
        return Err("capacity not checked".into());
    }
    let mut iv = Vec::new();
    for w in j["workloads"].as_array().into_iter().flatten() {
        let i: usize = w["workload"]
            .as_str()
            .and_then(|k| k.split("/w").nth(1))
            .and_then(|n| n.parse().ok())
            .ok_or("key")?;
        let cq = s.wls[i].0;
        for r in w["runs"].as_array().into_iter().flatten() {
            let (a, b) = (
                r["startMs"].as_i64().unwrap_or(0),
                r["endMs"].as_i64().unwrap_or(0),
            );
            for (flavor, res) in r["usage"].as_object().into_iter().flatten() {
                let n: i64 = res["nvidia.com/gpu"]
                    .as_str()
                    .and_then(|x| x.parse().ok())
                    .unwrap_or(0);
                // Kueue: the flavor's card; ResourceQuota: its ClusterQueue's first flavor's
                let card = if flavor.is_empty() {
                    s.cqs[cq].0[0]
                } else {
                    flavor
                        .trim_start_matches('f')
                        .parse()
                        .map_err(|_| "flavor")?
                };
                iv.push((a, b, card, n));
            }
        }
    }
    check(&iv, &capacity(s))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// At every instant, under each engine, the devices in use of each card type are at
    /// most what that card type's Nodes hold.
    #[test]
    fn no_engine_runs_more_devices_than_the_nodes_hold(s in scn()) {
        for engine in ["resourcequota", "kueue"] {
            let r = kueue_like(&s, engine);
            prop_assert!(r.is_ok(), "{engine}: {r:?}");
        }
        let text = format!(
            "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {{name: k}}\nspec:\n  engine: kai\n  cluster: [c.yaml]\n  start: \"{START}\"\n  end: \"2026-04-01T00:02:00Z\"\n  kai: {{sessionInterval: 1s}}\n"
        );
        let sim = gpuquota_sim::fuzzing::scenario("k.yaml", &text, "k", &common::files(vec![("c.yaml", kai_cluster(&s))]))
            .expect("valid KAI scenario");
        let o = gpuquota_sim::fuzzing::run_kai(&sim).expect("runs");
        let mut iv = Vec::new();
        for j in &o.jobs {
            for r in &j.runs {
                for (node, gpu, _) in &r.devices {
                    let i: usize = node.trim_start_matches('n').parse().expect("node");
                    iv.push((r.start_ms, r.end_ms, s.nodes[i].0, i64::try_from(gpu / 1_000_000_000).unwrap_or(0)));
                }
            }
        }
        let r = check(&iv, &capacity(&s));
        prop_assert!(r.is_ok(), "kai: {r:?}");
        // and per node
        let mut per_node: BTreeMap<usize, Vec<(i64, i64, usize, i64)>> = BTreeMap::new();
        for j in &o.jobs {
            for r in &j.runs {
                for (node, gpu, _) in &r.devices {
                    let i: usize = node.trim_start_matches('n').parse().expect("node");
                    per_node.entry(i).or_default().push((r.start_ms, r.end_ms, 0, i64::try_from(gpu / 1_000_000_000).unwrap_or(0)));
                }
            }
        }
        for (i, iv) in per_node {
            let r = check(&iv, &[s.nodes[i].1]);
            prop_assert!(r.is_ok(), "kai node n{i}: {r:?}");
        }
    }
}
