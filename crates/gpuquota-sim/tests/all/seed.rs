//! The seed platform's month (the default run's numbers) against its golden file, and
//! `sim diff` on two real scenario pairs.

use gpuquota_sim::{diff, seed};

#[test]
fn seed_month_summary_matches_its_golden_file() {
    let month = seed::run().expect("simulates");
    let got = seed::summary(&month);
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/seed-month.txt");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(path, &got).expect("write golden");
    }
    let want = std::fs::read_to_string(path).expect("golden file (UPDATE_GOLDEN=1 writes it)");
    assert_eq!(got, want);
    // no warnings from the shipped files under any control: the ResourceQuota run's H200
    // budget is charged (its flavorless usage resolves to the batch queue's flavor
    // h200-nvl), and its pods wait for the Nodes' cards instead of putting 16 H200 cards at
    // once on a type of 8 (both were warnings before)
    for (_, _, r) in &month.runs {
        assert_eq!(r.outcome.warnings, Vec::<String>::new());
    }
}

#[test]
fn the_resourcequota_month_spends_the_batch_h200_budget() {
    // analytics' eight 1-GPU nightly jobs (20:00, 8 h) run on the batch ClusterQueue's
    // flavor h200-nvl, card type H200: 64 H200-hours a night. After 28 nights (the last
    // ending 29 Apr 04:00) 1792 of 1800 are used; the 29th night (29 Apr 20:00) reaches 1800
    // after 1 h, on 29 Apr at 21:00 (28 d 21 h = 2,494,800,000 ms), and runs on to 1856;
    // the 30th night's eight jobs are held back
    let month = seed::run().expect("simulates");
    let (label, _, r) = &month.runs[0];
    assert_eq!(*label, "ResourceQuota only");
    let b = &r.budgets.as_ref().expect("the seed month has a budget")[0];
    assert_eq!(b.budget, "batch-monthly");
    assert_eq!(b.card_type.as_deref(), Some("H200"));
    let p = &b.periods[0];
    assert_eq!(p.used_gpu_hours, "1856.000000");
    assert_eq!(p.spent_at_ms, Some((28 * 24 + 21) * 3_600_000));
    assert_eq!(b.held_back, 8);
}

#[test]
fn diff_resourcequota_against_kueue_on_the_seed_month() {
    let month = seed::run().expect("simulates");
    let (_, sa, ra) = &month.runs[0];
    let (_, sb, rb) = &month.runs[1];
    let doc = diff::diff(sa, ra, sb, rb);
    let d = doc.to_json();
    let batch = &d["departments"]["batch"];
    assert_eq!(batch["preemptions"]["a"], 0);
    // Kueue: each night data science's 02:00 fine-tuning reclaims the eight H200 from
    // batch (8 preemptions, 8 × 6 h lost); the RTX cards batch may borrow (4) are data
    // science's, busy with its 01:00-10:00 evaluation, so batch waits for the H200 and
    // reruns 06:00-14:00 (8 × 8 h): 112 H200-hours a night; after 16 nights 1792 < 1800,
    // the 17th is admitted (1904), the rest held back: 17 × 8 = 136 preemptions
    assert_eq!(batch["preemptions"]["b"], 136);
    assert_eq!(batch["preemptions"]["delta"], 136);
    // 29 nights × 64 H200-hours: the 1800-hour budget holds the 30th night back
    assert_eq!(batch["borrowedHours"]["a"], "1856.000000");
    assert_eq!(batch["borrowedHours"]["b"], "1904.000000"); // 17 × 112 H200-hours
    assert_eq!(batch["borrowedHours"]["delta"], "48.000000");
    assert_eq!(batch["cost"]["a"], "8352.00"); // 1856 h × 4.50
    assert!(diff::table(&doc).contains("preemptions"));
    let svg = diff::svg(sa, ra, sb, rb).expect("plots");
    assert!(svg.starts_with("<svg") && svg.contains("seed-kueue"));
}

const LEND: &str = r#"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h200}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: owner}
spec:
  namespaceSelector: {}
  cohortName: all
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: h200, resources: [{name: nvidia.com/gpu, nominalQuota: 8LENDING}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: borrower}
spec:
  namespaceSelector: {}
  cohortName: all
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: h200, resources: [{name: nvidia.com/gpu, nominalQuota: 0}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: borrower}
spec: {clusterQueue: borrower}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: night, namespace: borrower, annotations: {gpuquota.dev/runtime: 8h}}
spec:
  queueName: lq
  podSets: [{name: main, count: 4, template: {spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: "1"}}}]}}}]
"#;

fn lend(limit: &str) -> (gpuquota_sim::Scenario, gpuquota_sim::Report) {
    let c = LEND.replace("LENDING", limit);
    let sim = "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {name: NAME}\nspec:\n  cluster: [c.yaml]\n  start: \"2026-04-01T00:00:00Z\"\n  end: \"2026-04-02T00:00:00Z\"\n"
        .replace("NAME", if limit.is_empty() { "unset" } else { "zero" });
    let sim =
        gpuquota_sim::fuzzing::scenario("s.yaml", &sim, "s", &|_| Ok(("c.yaml".into(), c.clone())))
            .expect("valid");
    let r = gpuquota_sim::fuzzing::run_kueue(&sim).expect("simulates");
    (sim.kueue().expect("a Kueue scenario").clone(), r)
}

#[test]
fn diff_lending_limit_zero_against_unset() {
    let (sa, ra) = lend(", lendingLimit: 0");
    let (sb, rb) = lend("");
    let d = diff::diff(&sa, &ra, &sb, &rb).to_json();
    let b = &d["departments"]["borrower"];
    assert_eq!(b["gpuHours"]["a"], "0.000000");
    assert_eq!(b["gpuHours"]["b"], "32.000000");
    assert_eq!(b["gpuHours"]["delta"], "32.000000");
    assert_eq!(b["borrowedHours"]["b"], "32.000000");
    assert_eq!(b["meanTimeToAdmissionMs"]["a"], serde_json::Value::Null);
    assert_eq!(b["meanTimeToAdmissionMs"]["b"], 0);
}

/// The three controls are compared on the same rules: the same Nodes (names, labels,
/// allocatable), the same namespace ResourceQuota caps, and the same departments (name and
/// namespaces) and card types (name, model, price, capacity) in their bills; differences
/// come from the control, not from the scenario files.
#[test]
fn the_three_controls_share_nodes_caps_and_departments() {
    let rq = seed::scenario_of("resourcequota.yaml", seed::RESOURCEQUOTA).expect("valid");
    let kueue = seed::scenario_of("kueue.yaml", seed::KUEUE).expect("valid");
    let kai = seed::kai_scenario().expect("valid");
    let (rq, kueue, kai) = (
        rq.kueue().expect("a Kueue scenario"),
        kueue.kueue().expect("a Kueue scenario"),
        kai.kai().expect("a KAI scenario"),
    );
    let names: Vec<&str> = kueue.model.nodes.keys().map(String::as_str).collect();
    assert_eq!(names, ["h200", "rtx-a", "rtx-b"]);
    assert_eq!(rq.model.nodes, kueue.model.nodes);
    assert_eq!(kai.model.nodes, kueue.model.nodes);
    let caps: Vec<&str> = kueue
        .model
        .resource_quotas
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        caps,
        [
            "analytics/gpu-cap",
            "customer-service/gpu-cap",
            "data-science/gpu-cap",
            "engineering/gpu-cap",
            "platform-team/gpu-cap"
        ]
    );
    let hard = |m: &gpuquota_model::Model| -> Vec<(String, Vec<(String, String)>)> {
        m.resource_quotas
            .iter()
            .map(|(k, q)| {
                (
                    k.clone(),
                    q.spec
                        .hard
                        .iter()
                        .map(|(r, v)| (r.clone(), v.to_string()))
                        .collect(),
                )
            })
            .collect()
    };
    assert_eq!(hard(&rq.model), hard(&kueue.model));
    assert_eq!(hard(&kai.model), hard(&kueue.model));
    let depts = |m: Option<&serde_json::Value>| -> Vec<(String, serde_json::Value)> {
        m.and_then(|m| m["departments"].as_array())
            .into_iter()
            .flatten()
            .map(|d| {
                (
                    d["name"].as_str().unwrap_or("").to_owned(),
                    d["namespaces"].clone(),
                )
            })
            .collect()
    };
    let cards = |m: Option<&serde_json::Value>| -> Vec<[serde_json::Value; 4]> {
        m.and_then(|m| m["cardTypes"].as_array())
            .into_iter()
            .flatten()
            .map(|c| {
                [
                    c["name"].clone(),
                    c["model"].clone(),
                    c["pricePerHour"].clone(),
                    c["capacity"].clone(),
                ]
            })
            .collect()
    };
    assert_eq!(depts(kueue.metering.as_ref()).len(), 5);
    assert_eq!(depts(rq.metering.as_ref()), depts(kueue.metering.as_ref()));
    assert_eq!(depts(kai.metering.as_ref()), depts(kueue.metering.as_ref()));
    assert_eq!(cards(rq.metering.as_ref()), cards(kueue.metering.as_ref()));
    assert_eq!(cards(kai.metering.as_ref()), cards(kueue.metering.as_ref()));
}

/// The seed's ResourceQuota-only month runs no more devices than the servers hold: the
/// second day's 02:00 fine-tuning (8 H200, within data science's cap of 12) finds the
/// first night's batch (20:00-04:00) on all eight H200 cards, stays Pending `Unschedulable`
/// until the batch ends at 04:00, and runs 04:00-08:00 (26 h, 28 h, 32 h from the start);
/// the first day's, before any batch, starts at once.
#[test]
fn seed_resourcequota_month_waits_for_the_h200_cards() {
    let sc = seed::scenario_of("resourcequota.yaml", seed::RESOURCEQUOTA).expect("valid");
    let r = gpuquota_sim::fuzzing::run_kueue(&sc).expect("simulates");
    let j = r.to_json();
    assert_eq!(j["capacityChecked"], true);
    let ft = j["workloads"]
        .as_array()
        .and_then(|w| {
            w.iter()
                .find(|w| w["workload"] == "data-science/finetune-1")
        })
        .expect("the second fine-tuning");
    let run = &ft["runs"][0];
    assert_eq!(run["reservedMs"], 26 * 3_600_000);
    assert_eq!(run["startMs"], 28 * 3_600_000);
    assert_eq!(run["endMs"], 32 * 3_600_000);
    let first = &j["workloads"]
        .as_array()
        .and_then(|w| w.iter().find(|w| w["workload"] == "data-science/finetune"))
        .expect("the first fine-tuning")["runs"][0];
    assert_eq!(first["startMs"], 2 * 3_600_000);
    assert!(first.get("reservedMs").is_none());
}

/// The drills: every shipped drill scenario reads and simulates, and the account names the
/// node events with what they did (printed for review; the values are pinned by the default
/// run's golden file).
#[test]
fn the_drills_simulate() {
    let text = gpuquota_sim::seed::drills().expect("the drills simulate");
    println!("{text}");
    assert!(text.contains("Drill: a server fails"), "{text}");
    assert!(
        text.contains("rtx-a down: 2 workloads lost their pods on 5 cards"),
        "{text}"
    );
    assert!(
        text.contains("window on rtx-b opened (config notebooks-12)"),
        "{text}"
    );
}
