//! The month's bill adds up, lost work is shown with its rule, and the seed's story: each
//! expected value is worked out by hand in the comments.

use gpuquota_metering::figure::Money;
use gpuquota_sim::diff::{self, Delta};
use gpuquota_sim::seed;
use serde_json::Value;

fn run_text(cluster: &str, spec_tail: &str, end: &str) -> Result<Value, String> {
    let sim = format!(
        "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {{name: t}}\nspec:\n  engine: kueue\n  cluster: [c.yaml]\n  start: \"2026-04-01T00:00:00Z\"\n  end: \"{end}\"\n{spec_tail}"
    );
    let c = cluster.to_owned();
    let sim =
        gpuquota_sim::fuzzing::scenario("s.yaml", &sim, "s", &|_| Ok(("c.yaml".into(), c.clone())))
            .map_err(|d| d.to_string())?;
    gpuquota_sim::fuzzing::run_kueue(&sim)
        .map(|r| r.to_json())
        .map_err(|d| d.to_string())
}

fn cents(s: &str) -> i64 {
    s.replace('.', "").parse().unwrap()
}

fn micro(s: &str) -> i64 {
    gpuquota_metering::money::parse_decimal(s, 6, "h").unwrap() as i64
}

const TWO_CARDS: &str = r#"apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h200-nvl}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: rtx-1g24}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: a}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: h200-nvl, resources: [{name: nvidia.com/gpu, nominalQuota: 2}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: b}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/mig-1g.24gb]
    flavors: [{name: rtx-1g24, resources: [{name: nvidia.com/mig-1g.24gb, nominalQuota: 8}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: a}
spec: {clusterQueue: a}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: b}
spec: {clusterQueue: b}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: train, namespace: a, creationTimestamp: "2026-04-01T00:00:00Z", annotations: {gpuquota.dev/runtime: 2h}}
spec:
  queueName: lq
  podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: "1"}}}]}}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: notebooks, namespace: b, creationTimestamp: "2026-04-01T00:00:00Z"}
spec:
  queueName: lq
  podSets: [{name: main, count: 2, template: {spec: {containers: [{name: c, resources: {requests: {nvidia.com/mig-1g.24gb: "1"}}}]}}}]
"#;

const TWO_CARDS_METERING: &str = r#"  metering:
    currency: EUR
    cardTypes:
    - {name: H200, model: NVIDIA H200 NVL, pricePerHour: "4.50", capacity: 2, flavors: [h200-nvl]}
    - {name: RTX PRO 6000, model: NVIDIA RTX PRO 6000 Blackwell Server Edition, pricePerHour: "1.80", capacity: 2, flavors: [rtx-1g24]}
    departments:
    - {name: a, namespaces: [a]}
    - {name: b, namespaces: [b]}
"#;

#[test]
fn department_lines_plus_idle_equal_the_total_per_card_type() {
    // 4 h window. a: one H200 for 2 h = 2 H200-h, 9.00 EUR. b: two MIG 1g.24gb instances
    // (a quarter of an RTX PRO 6000 each, as the meter weighs them) for 4 h = 2 RTX-h, 3.60.
    // Idle: H200 2 × 4 − 2 = 6 h (27.00), RTX 2 × 4 − 2 = 6 h (10.80).
    // Total: 9.00 + 3.60 + 27.00 + 10.80 = 50.40 = 2 × 4 × 4.50 + 2 × 4 × 1.80.
    let j = run_text(TWO_CARDS, TWO_CARDS_METERING, "2026-04-01T04:00:00Z").unwrap();
    let c = &j["chargeback"];
    let rows: Vec<(String, String, String, String)> = c["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["department"].as_str().unwrap().to_owned(),
                l["cardType"].as_str().unwrap().to_owned(),
                l["allocatedHours"].as_str().unwrap().to_owned(),
                l["total"].as_str().unwrap().to_owned(),
            )
        })
        .filter(|r| r.2 != "0.000000")
        .collect();
    let row = |d: &str, c: &str, h: &str, t: &str| (d.into(), c.into(), h.into(), t.into());
    assert_eq!(
        rows,
        vec![
            row("a", "H200", "2.000000", "9.00"),
            row("b", "RTX PRO 6000", "2.000000", "3.60"),
        ]
    );
    let idle: Vec<(&str, &str, &str)> = c["idle"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["cardType"].as_str().unwrap(),
                i["hours"].as_str().unwrap(),
                i["cost"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        idle,
        vec![
            ("H200", "6.000000", "27.00"),
            ("RTX PRO 6000", "6.000000", "10.80")
        ]
    );
    assert_eq!(c["totals"]["cost"], "50.40");
    // the identity per card type: lines + idle = capacity × window
    for (card, capacity) in [("H200", 2), ("RTX PRO 6000", 2)] {
        let used: i64 = c["lines"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l["cardType"] == card)
            .map(|l| micro(l["allocatedHours"].as_str().unwrap()))
            .sum();
        let idle: i64 = c["idle"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["cardType"] == card)
            .map(|i| micro(i["hours"].as_str().unwrap()))
            .sum();
        assert_eq!(used + idle, capacity * 4 * 1_000_000, "{card}");
    }
    // and in money: department rows + idle rows = total
    let lines: i64 = c["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| cents(l["total"].as_str().unwrap()))
        .sum();
    let idle: i64 = c["idle"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| cents(i["cost"].as_str().unwrap()))
        .sum();
    assert_eq!(lines + idle, 5040);
}

const RECLAIM: &str = r#"apiVersion: kueue.x-k8s.io/v1beta2
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
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: h200-nvl, resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-b}
spec:
  namespaceSelector: {}
  cohort: all
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: h200-nvl, resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}]
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
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: night, namespace: b, creationTimestamp: "2026-04-01T00:00:00Z", annotations: {gpuquota.dev/runtime: 4h}}
spec:
  queueName: lq
  podSets: [{name: main, count: 8, template: {spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: "1"}}}]}}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: tune, namespace: a, creationTimestamp: "2026-04-01T01:00:00Z", annotations: {gpuquota.dev/runtime: 1h}}
spec:
  queueName: lq
  podSets: [{name: main, count: 4, template: {spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: "1"}}}]}}}]
"#;

fn reclaim_metering(rule: &str) -> String {
    format!(
        r#"  metering:
    currency: EUR
{rule}    cardTypes:
    - {{name: H200, model: NVIDIA H200 NVL, pricePerHour: "4.50", capacity: 8, flavors: [h200-nvl]}}
    departments:
    - {{name: team-a, namespaces: [a]}}
    - {{name: team-b, namespaces: [b]}}
"#
    )
}

fn line<'a>(c: &'a Value, d: &str) -> &'a Value {
    c["lines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["department"] == d)
        .unwrap()
}

#[test]
fn lost_work_is_shown_and_charged_by_default() {
    // b takes all 8 GPUs at 00:00 (4 borrowed); a reclaims its 4 at 01:00, so b's run ends
    // after 1 h: 8 GPU-h lost. b is readmitted at 02:00 when a finishes and runs 4 h: 32.
    let j = run_text(RECLAIM, &reclaim_metering(""), "2026-04-02T00:00:00Z").unwrap();
    let c = &j["chargeback"];
    assert_eq!(c["chargeLostWork"], true);
    assert_eq!(
        c["preempted"],
        serde_json::json!([{"department": "team-b", "cardType": "H200", "hours": "8.000000"}])
    );
    // charged: b pays 8 + 32 = 40 h = 180.00; a 4 h = 18.00
    assert_eq!(line(c, "team-b")["allocatedHours"], "40.000000");
    assert_eq!(line(c, "team-b")["total"], "180.00");
    assert_eq!(line(c, "team-a")["total"], "18.00");
    // 8 × 24 × 4.50
    assert_eq!(c["totals"]["cost"], "864.00");
}

#[test]
fn lost_work_can_be_left_to_the_platform() {
    let j = run_text(
        RECLAIM,
        &reclaim_metering("    chargeLostWork: false\n"),
        "2026-04-02T00:00:00Z",
    )
    .unwrap();
    let c = &j["chargeback"];
    assert_eq!(c["chargeLostWork"], false);
    // the same 8 lost hours, now on their own line: b pays 32 h = 144.00, lost-work 8 h = 36.00
    assert_eq!(c["preempted"][0]["hours"], "8.000000");
    assert_eq!(line(c, "team-b")["allocatedHours"], "32.000000");
    assert_eq!(line(c, "team-b")["total"], "144.00");
    assert_eq!(line(c, "lost-work")["allocatedHours"], "8.000000");
    assert_eq!(line(c, "lost-work")["total"], "36.00");
    assert_eq!(line(c, "team-a")["total"], "18.00");
    // the bill still adds up: 18 + 144 + 36 + idle (192 − 44 = 148 h = 666.00) = 864.00
    assert_eq!(c["idle"][0]["hours"], "148.000000");
    assert_eq!(c["totals"]["cost"], "864.00");
}

#[test]
fn charge_lost_work_must_be_a_boolean() {
    let e = run_text(
        RECLAIM,
        &reclaim_metering("    chargeLostWork: sometimes\n"),
        "2026-04-02T00:00:00Z",
    )
    .unwrap_err();
    assert!(e.contains("spec.metering.chargeLostWork"), "{e}");
    assert!(e.contains("must be true or false"), "{e}");
}

#[test]
fn a_queue_without_nominal_quota_has_no_usage_percent() {
    // b's ClusterQueue is nominal 4, a's 4; a queue of nominal 0 only borrows
    let cluster = RECLAIM.replace(
        "metadata: {name: team-b}\nspec:\n  namespaceSelector: {}\n  cohort: all\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors: [{name: h200-nvl, resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}]",
        "metadata: {name: team-b}\nspec:\n  namespaceSelector: {}\n  cohort: all\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors: [{name: h200-nvl, resources: [{name: nvidia.com/gpu, nominalQuota: 0}]}]",
    );
    assert_ne!(cluster, RECLAIM);
    let sim = "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {name: t}\nspec:\n  engine: kueue\n  cluster: [c.yaml]\n  start: \"2026-04-01T00:00:00Z\"\n  end: \"2026-04-02T00:00:00Z\"\n";
    let sim = gpuquota_sim::fuzzing::scenario("s.yaml", sim, "s", &|_| {
        Ok(("c.yaml".into(), cluster.clone()))
    })
    .unwrap();
    let r = gpuquota_sim::fuzzing::run_kueue(&sim).unwrap();
    let j = r.to_json();
    assert_eq!(j["queues"]["team-b"]["meanUsagePercent"], Value::Null);
    // team-a: 4 GPUs for 1 h of 24 h on a nominal of 4: 100 / 24 = 4.17 → 4.2
    assert_eq!(j["queues"]["team-a"]["meanUsagePercent"], 4.2);
    let table = r.to_table();
    let row = table.lines().find(|l| l.starts_with("team-b")).unwrap();
    assert_eq!(row.split_whitespace().nth(1), Some("-"), "{table}");
}

#[test]
fn unchanged_figures_show_a_delta_of_zero() {
    // 10.5 and 10.50 are the same amount
    let m = |s: &str| s.parse::<Money>().unwrap();
    assert_eq!(
        <Money as Delta>::delta(&m("10.5"), &m("10.50"))
            .map(|d| d.show())
            .as_deref(),
        Some("0.00")
    );
    // a float difference below the rounding is 0, never -0.0
    let z = <f64 as Delta>::delta(&0.300_000_000_000_000_04, &0.3).unwrap();
    assert_eq!(z.show(), "0.0");
}

#[test]
fn the_seed_month_story_and_bill() {
    let month = seed::run().unwrap();
    let text = seed::summary(&month);
    // the assistant's base load (3 + 3) and its peak (2, 08:00-11:00) fit its quota of 8
    // under every control: nothing is Forbidden, and it runs (6 × 24 + 2 × 3) × 30 = 4500 h
    assert!(!text.contains("Forbidden"), "{text}");
    for (label, _, r) in &month.runs {
        let c = r.chargeback.as_ref().unwrap();
        let a = c
            .meter
            .lines
            .iter()
            .find(|l| l.department == "assistant")
            .unwrap();
        assert_eq!(a.allocated_hours, "4500.000000", "{label}");
        let never: Vec<&str> = r
            .outcome
            .workloads
            .iter()
            .filter(|w| w.runs.is_empty() && w.key.starts_with("platform-team/"))
            .map(|w| w.key.as_str())
            .collect();
        assert_eq!(never, Vec::<&str>::new(), "{label}");
    }
    let kai = month.kai.1.chargeback.as_ref().unwrap();
    let a = kai
        .meter
        .lines
        .iter()
        .find(|l| l.department == "assistant")
        .unwrap();
    assert_eq!(a.allocated_hours, "4500.000000");
    // RTX PRO 6000 under ResourceQuota only: the assistant 4500 + notebooks 540 +
    // translation 1440 + data science's evaluation 4 × 9 × 30 = 1080 → 7560 / (16 × 720)
    // = 65.625 %, rounded to 65.6; H200: batch 1856 h (its budget charged) + data science
    // 960 h = 2816 / (8 × 720) = 48.89 %, rounded to 48.9
    assert!(
        text.contains("ResourceQuota only   H200 48.9 %, RTX PRO 6000 65.6 %"),
        "{text}"
    );
    // The Kueue budget: each night the 02:00 fine-tuning reclaims batch's eight H200 (8 × 6 h
    // lost) and, the RTX batch may borrow being data science's (busy evaluating 01:00-10:00),
    // batch reruns on the H200 06:00-14:00 (8 × 8 h): 112 h a night. After 16 nights
    // 1792 < 1800, so the 17th night is admitted: 1904 of 1800, 104 over, and why.
    assert!(
        text.contains("batch-monthly used 1904 of 1800 GPU-hours"),
        "{text}"
    );
    assert!(
        text.contains("104 h over: when it was spent, runs admitted before kept running"),
        "{text}"
    );
    // lost work under Kueue: 17 × 8 = 136 preempted runs, 17 × 48 = 816 H200-h, on batch
    assert!(text.contains("lost work: batch 816 h of H200"), "{text}");
    // the bill: Kueue's rows (batch on the H200 only) and its idle rows add up to 46656.00
    let kueue = &text[text.find("\nKueue:").unwrap()..text.find("\nKAI / Run:ai:").unwrap()];
    assert!(
        kueue.contains("    batch         H200           1904   8568.00"),
        "{kueue}"
    );
    assert!(!kueue.contains("    batch         RTX PRO 6000"), "{kueue}");
    // idle RTX: 11520 − (4500 + 1080 + 540 + 1440) = 3960 h × 1.80
    assert!(
        kueue.contains("    idle          RTX PRO 6000   3960   7128.00"),
        "{kueue}"
    );
    assert!(kueue.contains("    total                              46656.00"));
    assert!(
        text.contains("A MIG 1g.24gb instance counts as 1/4 of an RTX PRO 6000"),
        "{text}"
    );
}

#[test]
fn the_lending_limit_what_if_on_the_seed_month() {
    let month = seed::run().unwrap();
    let (sa, ra) = month
        .runs
        .iter()
        .find(|(l, _, _)| *l == "Kueue")
        .map(|(_, s, r)| (s, r))
        .unwrap();
    let (sb, rb) = (&month.no_lending_limit.0, &month.no_lending_limit.1);
    // the variant differs in that one field
    let ll = |sc: &gpuquota_sim::Scenario| {
        sc.model.cluster_queues["assistant"].spec.resource_groups[0].flavors[0].resources[0]
            .lending_limit
            .as_ref()
            .map(ToString::to_string)
    };
    assert_eq!(ll(sa).as_deref(), Some("0"));
    assert_eq!(ll(sb), None);
    let doc = diff::diff(sa, ra, sb, rb).to_json();
    // With the limit: at 02:00 the fine-tuning reclaims batch's eight H200; data science's
    // four RTX run its 01:00-10:00 evaluation, the assistant and translation lend none, so
    // batch waits for the H200 (rerun 06:00-14:00): 112 H200-h a night, 17 nights before
    // the 1800 H200-hour budget is spent (16 × 112 = 1792 < 1800): 1904 h, 136 preemptions,
    // and the assistant's 08:00 peak finds its two idle cards free: no wait at all.
    // Without it: at 02:00 two of the eight preempted jobs borrow the assistant's two idle
    // RTX (02:00-10:00), the other six rerun on the H200 06:00-14:00: 48 + 48 = 96 H200-h
    // and 16 RTX-h a night. The budget (H200 only) now lasts 19 nights (18 × 96 = 1728 <
    // 1800): 19 × 96 = 1824 H200-h (−80), 19 × 16 = 304 RTX-h (+304), 2128 in all (+224);
    // 19 × 8 = 152 preemptions, 19 × 48 = 912 h lost. The peaks of days 2 to 20 wait for
    // the borrowed cards to finish at 10:00: 19 × 2 h over the assistant's 32 workloads
    // (2 base-load ones, 30 peaks) = 38 h / 32 = 1 h 11 min 15 s = 4,275,000 ms; p95 2 h.
    let batch = &doc["departments"]["batch"];
    assert_eq!(batch["borrowedHours"]["a"], "1904.000000");
    assert_eq!(batch["borrowedHours"]["b"], "2128.000000");
    assert_eq!(batch["borrowedHours"]["delta"], "224.000000");
    assert_eq!(batch["preemptions"]["a"], 136);
    assert_eq!(batch["preemptions"]["b"], 152);
    assert_eq!(batch["lostHours"]["b"], "912.000000");
    let assistant = &doc["departments"]["assistant"];
    assert_eq!(assistant["meanTimeToAdmissionMs"]["a"], 0);
    assert_eq!(assistant["p95TimeToAdmissionMs"]["a"], 0);
    assert_eq!(assistant["meanTimeToAdmissionMs"]["b"], 4_275_000);
    assert_eq!(assistant["p95TimeToAdmissionMs"]["b"], 7_200_000);
    // the peaks ran all the same, later: 4500 / (8 × 720) = 78.125 % → 78.1 in both runs
    assert_eq!(assistant["gpuHours"]["delta"], "0.000000");
    assert_eq!(assistant["utilizationPercent"]["a"], 78.1);
    assert_eq!(assistant["utilizationPercent"]["delta"], 0.0);
    let text = seed::summary(&month);
    assert!(
        text.contains(
            "  without the assistant's lendingLimit 0 (kueue-no-lending-limit.yaml):\n    \
             borrowed:  batch +304 h of RTX PRO 6000 (the assistant's idle cards), -80 h of H200\n    \
             waited:    assistant 1h11m15s on average, p95 2h (with the limit: none)\n"
        ),
        "{text}"
    );
}

#[test]
fn diff_utilisation_is_the_same_quota_picture_under_both_engines() {
    let month = seed::run().unwrap();
    let (sa, ra) = (&month.runs[0].1, &month.runs[0].2);
    let (sb, rb) = (&month.runs[1].1, &month.runs[1].2);
    let doc = diff::diff(sa, ra, sb, rb).to_json();
    // data science uses 960 H200-h (fine-tuning) + 1080 RTX-h (evaluation) in both runs,
    // of 8 H200 + 4 RTX nominal: 2040 / (12 × 720) = 23.6 %, delta 0
    let ds = &doc["departments"]["data-science"]["utilizationPercent"];
    assert_eq!(ds["a"], 23.6);
    assert_eq!(ds["b"], 23.6);
    assert_eq!(ds["delta"], 0.0);
    // batch only borrows: no percentage of a quota of 0
    assert_eq!(
        doc["departments"]["batch"]["utilizationPercent"]["a"],
        Value::Null
    );
}

#[test]
fn spec_set_errors_name_the_path() {
    let sim = "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {name: t}\nspec:\n  engine: kueue\n  cluster: [c.yaml]\n  start: \"2026-04-01T00:00:00Z\"\n  set:\n    clusterQueues.nope.lendingLimit: none\n";
    let e = gpuquota_sim::fuzzing::scenario("s.yaml", sim, "s", &|_| {
        Ok(("c.yaml".into(), RECLAIM.into()))
    })
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("spec.set.clusterQueues.nope.lendingLimit"),
        "{e}"
    );
    assert!(e.contains("no ClusterQueue \"nope\""), "{e}");
}

#[test]
fn the_sim_table_prints_the_bill_with_its_idle_row() {
    let sim = format!(
        "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {{name: t}}\nspec:\n  engine: kueue\n  cluster: [c.yaml]\n  start: \"2026-04-01T00:00:00Z\"\n  end: \"2026-04-02T00:00:00Z\"\n{}",
        reclaim_metering("")
    );
    let sim = gpuquota_sim::fuzzing::scenario("s.yaml", &sim, "s", &|_| {
        Ok(("c.yaml".into(), RECLAIM.into()))
    })
    .unwrap();
    let table = gpuquota_sim::fuzzing::run_kueue(&sim).unwrap().to_table();
    // a 4 h = 18.00, b 40 h = 180.00, idle 8 × 24 − 44 = 148 h = 666.00: 864.00
    let bill = table.split("The bill:").nth(1).unwrap();
    let rows: Vec<Vec<&str>> = bill
        .lines()
        .skip(2)
        .take(4)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows,
        vec![
            vec!["team-a", "H200", "4", "18.00"],
            vec!["team-b", "H200", "40", "180.00"],
            vec!["idle", "H200", "148", "666.00"],
            vec!["total", "864.00"],
        ],
        "{table}"
    );
    assert!(
        table.contains("Lost work: team-b 8 h of H200: preempted runs that restarted from zero"),
        "{table}"
    );
}
