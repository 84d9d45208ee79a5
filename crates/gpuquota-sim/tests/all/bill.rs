//! `spec.metering`: the simulator meters its own runs (the `chargeback` section).

use std::collections::BTreeMap;

use gpuquota_metering::money::{L, format_hours};
use proptest::prelude::*;
use serde_json::Value;

const METERING: &str = r#"
  metering:
    currency: EUR
    cardTypes:
    - {name: H200, model: NVIDIA H200 NVL, pricePerHour: "4.50", capacity: 8, flavors: [h200-nvl]}
    departments:
    - {name: team-a, namespaces: [a]}
    - {name: team-b, namespaces: [b]}
"#;

fn cluster(jobs: &[(char, i64, i64, u32, bool)]) -> String {
    let mut s = String::from(
        r#"apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h200-nvl}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-a}
spec:
  namespaceSelector: {}
  cohort: all
  preemption: {reclaimWithinCohort: Any}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu, nvidia.com/mig-1g.18gb]
    flavors: [{name: h200-nvl, resources: [{name: nvidia.com/gpu, nominalQuota: 4}, {name: nvidia.com/mig-1g.18gb, nominalQuota: 7}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-b}
spec:
  namespaceSelector: {}
  cohort: all
  preemption: {reclaimWithinCohort: Any}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu, nvidia.com/mig-1g.18gb]
    flavors: [{name: h200-nvl, resources: [{name: nvidia.com/gpu, nominalQuota: 4}, {name: nvidia.com/mig-1g.18gb, nominalQuota: 7}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: a}
spec: {clusterQueue: team-a}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: b}
spec: {clusterQueue: team-b}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: q, namespace: a}
spec: {hard: {requests.nvidia.com/gpu: "8", requests.nvidia.com/mig-1g.18gb: "14"}}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: q, namespace: b}
spec: {hard: {requests.nvidia.com/gpu: "8", requests.nvidia.com/mig-1g.18gb: "14"}}
"#,
    );
    for (i, (ns, at, rt, count, mig)) in jobs.iter().enumerate() {
        let res = if *mig {
            "nvidia.com/mig-1g.18gb"
        } else {
            "nvidia.com/gpu"
        };
        let (h, m, sec) = (at / 3600, at / 60 % 60, at % 60);
        s.push_str(&format!(
            "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata:\n  name: w{i}\n  namespace: {ns}\n  creationTimestamp: \"2026-04-01T{h:02}:{m:02}:{sec:02}Z\"\n  annotations: {{gpuquota.dev/runtime: {rt}s}}\nspec:\n  queueName: lq\n  podSets: [{{name: main, count: {count}, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{{res}: \"1\"}}}}}}]}}}}}}]\n"
        ));
    }
    s
}

fn run(engine: &str, jobs: &[(char, i64, i64, u32, bool)]) -> Value {
    let c = cluster(jobs);
    let sim = format!(
        "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {{name: bill}}\nspec:\n  engine: {engine}\n  cluster: [c.yaml]\n  start: \"2026-04-01T00:00:00Z\"\n  end: \"2026-04-02T00:00:00Z\"\n{METERING}"
    );
    let sim =
        gpuquota_sim::fuzzing::scenario("s.yaml", &sim, "s", &|_| Ok(("c.yaml".into(), c.clone())))
            .expect("valid scenario");
    gpuquota_sim::fuzzing::run_kueue(&sim)
        .expect("simulates")
        .to_json()
}

/// ∫ usage over the runs per (department, card type), in metering units, from the runs.
fn oracle(j: &Value) -> BTreeMap<(String, String), i128> {
    let mut m = BTreeMap::new();
    for w in j["workloads"].as_array().into_iter().flatten() {
        let ns = w["workload"].as_str().unwrap().split('/').next().unwrap();
        let dept = format!("team-{ns}");
        for r in w["runs"].as_array().into_iter().flatten() {
            let secs = i128::from(
                r["endMs"].as_i64().unwrap() / 1000 - r["startMs"].as_i64().unwrap() / 1000,
            );
            for (_, res) in r["usage"].as_object().unwrap() {
                for (name, q) in res.as_object().unwrap() {
                    let n: i128 = q.as_str().unwrap().parse().unwrap();
                    let w = if name == "nvidia.com/gpu" { L } else { L / 7 };
                    *m.entry((dept.clone(), "H200".to_owned())).or_default() += w * n * secs;
                }
            }
        }
    }
    m
}

fn metered(j: &Value) -> BTreeMap<(String, String), String> {
    j["chargeback"]["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["allocatedHours"] != "0.000000")
        .map(|l| {
            (
                (
                    l["department"].as_str().unwrap().to_owned(),
                    l["cardType"].as_str().unwrap().to_owned(),
                ),
                l["allocatedHours"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn a_night_of_borrowing_and_reclaim_is_billed_to_the_cent() {
    // b borrows all 8 GPUs at 00:00 for 4 h; a reclaims its 4 at 01:00 (b's run is preempted)
    let j = run(
        "kueue",
        &[('b', 0, 14_400, 8, false), ('a', 3600, 3600, 4, false)],
    );
    let c = &j["chargeback"];
    assert_eq!(c["currency"], "EUR");
    let line = |d: &str| {
        c["lines"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["department"] == d)
            .cloned()
            .unwrap()
    };
    // b: 8 GPUs 00:00–01:00, then readmitted at 02:00 for 4 h: 8 + 32 = 40 GPU-hours
    assert_eq!(line("team-b")["allocatedHours"], "40.000000");
    // borrowed above its nominal of 5 cards (4 GPUs + 7 MIG 1g.18gb slices = 1 card):
    // 3 GPU-h in the first hour, 3 × 4 h after a finished
    assert_eq!(line("team-b")["borrowedHours"], "15.000000");
    assert_eq!(line("team-a")["allocatedHours"], "4.000000");
    assert_eq!(line("team-b")["cost"], "180.00");
    assert_eq!(
        c["preempted"][0],
        serde_json::json!({"department": "team-b", "cardType": "H200", "hours": "8.000000"})
    );
    // showback reconciles: lines + idle = capacity × window × price
    assert_eq!(c["totals"]["cost"], "864.00");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn metered_hours_equal_the_integral_of_usage(
        jobs in prop::collection::vec(
            (prop::sample::select(vec!['a', 'b']), 0i64..40_000, 1i64..20_000, 1u32..5, any::<bool>()),
            1..8,
        ),
        rq in any::<bool>(),
    ) {
        let j = run(if rq { "resourcequota" } else { "kueue" }, &jobs);
        let want: BTreeMap<(String, String), String> = oracle(&j)
            .into_iter()
            .filter(|(_, u)| *u != 0)
            .map(|(k, u)| (k, format_hours(u)))
            .collect();
        prop_assert_eq!(metered(&j), want);
    }
}
