//! Quota arithmetic (kubernetes-sigs/kueue: `pkg/cache/scheduler/resource_node.go`) through `kueue
//! quotas`.

use crate::common::*;

/// The worked example of `gpuquota::design`: SubtreeQuota, localQuota, usage flowing upward,
/// available and potentialAvailable with borrowingLimit and lendingLimit at two levels.
fn worked_example() -> String {
    let mut y = rf("f");
    y += &cohort("root", None, &[]);
    y += &cohort(
        "team-a",
        Some("root"),
        &[vec![(
            "f",
            vec![("nvidia.com/gpu", "4", Some("6"), Some("2"))],
        )]],
    );
    y += &cq(
        "a1",
        Some("team-a"),
        "",
        &[vec![("f", vec![("nvidia.com/gpu", "10", None, Some("4"))])]],
    );
    y += &cq(
        "a2",
        Some("team-a"),
        "",
        &[vec![("f", vec![("nvidia.com/gpu", "6", Some("3"), None)])]],
    );
    y += &cq("b1", Some("root"), "", &[vec![gpu("f", "8")]]);
    y += &admitted(
        "u1",
        "a1",
        "a1",
        0,
        1,
        9,
        "f",
        &[("nvidia.com/gpu", "1", "9")],
    );
    y += &admitted(
        "u2",
        "a2",
        "a2",
        0,
        2,
        7,
        "f",
        &[("nvidia.com/gpu", "1", "7")],
    );
    y += &admitted(
        "u3",
        "b1",
        "b1",
        0,
        3,
        5,
        "f",
        &[("nvidia.com/gpu", "1", "5")],
    );
    y
}

#[test]
fn worked_example_cluster_queues() {
    let q = quotas(&worked_example());
    let v = serde_json::to_value(&q).unwrap();
    let a1 = &v["clusterQueues"]["a1"]["f"]["nvidia.com/gpu"];
    assert_eq!(a1["nominal"], "10");
    assert_eq!(a1["borrowingLimit"], serde_json::Value::Null);
    assert_eq!(a1["lendingLimit"], "4");
    assert_eq!(a1["usage"], "9");
    assert_eq!(a1["available"], "7");
    assert_eq!(a1["potentialAvailable"], "26");
    let a2 = &v["clusterQueues"]["a2"]["f"]["nvidia.com/gpu"];
    assert_eq!(
        (a2["available"].as_str(), a2["potentialAvailable"].as_str()),
        (Some("2"), Some("9"))
    );
    assert_eq!(a2["borrowingLimit"], "3");
    let b1 = &v["clusterQueues"]["b1"]["f"]["nvidia.com/gpu"];
    assert_eq!(
        (b1["available"].as_str(), b1["potentialAvailable"].as_str()),
        (Some("5"), Some("10"))
    );
}

#[test]
fn worked_example_cohorts() {
    let v = serde_json::to_value(quotas(&worked_example())).unwrap();
    let t = &v["cohorts"]["team-a"]["f"]["nvidia.com/gpu"];
    assert_eq!(t["nominal"], "4");
    assert_eq!(t["subtreeQuota"], "14");
    // the whole subtree's usage (a1 9 + a2 7), not Kueue's internal 10 (a1's guaranteed 6 left
    // out)
    assert_eq!(t["usage"], "16");
    assert_eq!(t["borrowingLimit"], "6");
    assert_eq!(t["lendingLimit"], "2");
    let r = &v["cohorts"]["root"]["f"]["nvidia.com/gpu"];
    assert_eq!(r["nominal"], "0");
    assert_eq!(r["subtreeQuota"], "10");
    assert_eq!(r["usage"], "21");
    assert_eq!(r["borrowingLimit"], serde_json::Value::Null);
}

/// Rule 5: a ClusterQueue without a cohort has available = nominal − usage and
/// potentialAvailable = nominal; CPU is reported as a milli-quantity.
#[test]
fn cluster_queue_without_cohort() {
    let mut y = rf("f");
    y += &cq("solo", None, "", &[vec![cpu("f", "6", None, None)]]);
    y += &admitted(
        "a",
        "solo",
        "solo",
        0,
        1,
        1,
        "f",
        &[("cpu", "1500m", "1500m")],
    );
    let v = serde_json::to_value(quotas(&y)).unwrap();
    let c = &v["clusterQueues"]["solo"]["f"]["cpu"];
    assert_eq!(c["usage"], "1500m");
    assert_eq!(c["available"], "4500m");
    assert_eq!(c["potentialAvailable"], "6");
    assert_eq!(v["cohorts"], serde_json::json!({}));
}

/// A cohort name without a Cohort object is an implicit cohort with no quota (warning only).
#[test]
fn implicit_cohort() {
    let mut y = rf("f");
    y += &cq("a", Some("ghost"), "", &[vec![gpu("f", "2")]]);
    y += &cq("b", Some("ghost"), "", &[vec![gpu("f", "3")]]);
    let w = world(&y);
    assert!(w.warnings.iter().any(|x| x.name == "ghost"));
    let v = serde_json::to_value(crate::common::quotas_of(&w)).unwrap();
    assert_eq!(
        v["cohorts"]["ghost"]["f"]["nvidia.com/gpu"]["subtreeQuota"],
        "5"
    );
    assert_eq!(
        v["clusterQueues"]["a"]["f"]["nvidia.com/gpu"]["potentialAvailable"],
        "5"
    );
}

/// lendingLimit: only the lendable part is visible to siblings; a guaranteed part stays local.
#[test]
fn lending_limit_caps_what_siblings_see() {
    let mut y = rf("f");
    y += &cq(
        "lender",
        Some("co"),
        "",
        &[vec![("f", vec![("nvidia.com/gpu", "8", None, Some("3"))])]],
    );
    y += &cq("borrower", Some("co"), "", &[vec![gpu("f", "0")]]);
    let v = serde_json::to_value(quotas(&y)).unwrap();
    assert_eq!(
        v["clusterQueues"]["borrower"]["f"]["nvidia.com/gpu"]["available"],
        "3"
    );
    assert_eq!(
        v["clusterQueues"]["lender"]["f"]["nvidia.com/gpu"]["available"],
        "8"
    );
    assert_eq!(
        v["cohorts"]["co"]["f"]["nvidia.com/gpu"]["subtreeQuota"],
        "3"
    );
}

/// Workloads admitted before a quota was lowered keep running (a warning), and the queue has
/// nothing available.
#[test]
fn over_admission_is_tolerated() {
    let mut y = rf("f");
    y += &cq("small", None, "", &[vec![gpu("f", "2")]]);
    y += &admitted(
        "big",
        "small",
        "small",
        0,
        1,
        4,
        "f",
        &[("nvidia.com/gpu", "1", "4")],
    );
    let w = world(&y);
    assert!(
        w.warnings
            .iter()
            .any(|x| x.message.contains("exceed the quota"))
    );
    let v = serde_json::to_value(crate::common::quotas_of(&w)).unwrap();
    assert_eq!(
        v["clusterQueues"]["small"]["f"]["nvidia.com/gpu"]["available"],
        "0"
    );
    assert_eq!(
        v["clusterQueues"]["small"]["f"]["nvidia.com/gpu"]["usage"],
        "4"
    );
}
