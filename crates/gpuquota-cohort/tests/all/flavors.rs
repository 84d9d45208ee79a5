//! Flavor assignment (kubernetes-sigs/kueue: `pkg/scheduler/flavorassigner`).

use crate::common::*;

fn two_flavors(extra: &str, first: &str, second: &str) -> String {
    let mut y = rf("one") + &rf("two");
    y += &cq(
        "q",
        Some("co"),
        extra,
        &[vec![gpu("one", first), gpu("two", second)]],
    );
    y += &cq(
        "lender",
        Some("co"),
        "",
        &[vec![gpu("one", "4"), gpu("two", "0")]],
    );
    y
}

/// Flavors are tried in order; the first that fits is taken.
#[test]
fn first_fitting_flavor() {
    let mut y = two_flavors("", "0", "2");
    y += &wl("w", "q", 0, 1, 2, &[("nvidia.com/gpu", "1")]);
    // "one" can be borrowed from the lender (whenCanBorrow: MayStopSearch stops there)
    let r = run(&y);
    assert_eq!(r.admitted[0].pod_sets[0].flavors["nvidia.com/gpu"], "one");
}

/// whenCanBorrow: TryNextFlavor prefers a later flavor that fits without borrowing.
#[test]
fn when_can_borrow_try_next_flavor() {
    let mut y = two_flavors(
        "flavorFungibility: {whenCanBorrow: TryNextFlavor}",
        "0",
        "2",
    );
    y += &wl("w", "q", 0, 1, 2, &[("nvidia.com/gpu", "1")]);
    let r = run(&y);
    assert_eq!(r.admitted[0].pod_sets[0].flavors["nvidia.com/gpu"], "two");
}

/// Untolerated NoSchedule taints and node selectors that rule a flavor out; the reasons
/// render as upstream's, sorted, and the NoFit reason is NoMatchingFlavor.
#[test]
fn taints_and_node_labels() {
    let mut y = rf_spec(
        "one",
        "{nodeTaints: [{key: instance, value: spot, effect: NoSchedule}]}",
    ) + &rf_spec("two", "{nodeLabels: {gpu: h200}}");
    y += &cq("q", None, "", &[vec![gpu("one", "4"), gpu("two", "4")]]);
    y += &wl_full(
        "w",
        "q",
        0,
        1,
        &[("main", 1, None, &[("nvidia.com/gpu", "1")])],
        "nodeSelector: {gpu: a100}",
    );
    let r = run(&y);
    let p = pending_of(&r, "ns/w");
    assert_eq!(p.reason, "NoMatchingFlavor");
    assert_eq!(
        p.message,
        "couldn't assign flavors to pod set main: flavor two doesn't match node affinity, untolerated taint {instance spot NoSchedule <nil>} in flavor one"
    );
    // tolerating the taint makes flavor one usable
    let mut ok = rf_spec(
        "one",
        "{nodeTaints: [{key: instance, value: spot, effect: NoSchedule}]}",
    ) + &rf("two");
    ok += &cq("q", None, "", &[vec![gpu("one", "4"), gpu("two", "4")]]);
    ok += &wl_full(
        "w",
        "q",
        0,
        1,
        &[("main", 1, None, &[("nvidia.com/gpu", "1")])],
        "tolerations: [{key: instance, operator: Exists, effect: NoSchedule}]",
    );
    assert_eq!(
        run(&ok).admitted[0].pod_sets[0].flavors["nvidia.com/gpu"],
        "one"
    );
}

/// A non-zero request for a resource the ClusterQueue does not cover makes the workload
/// NoFit; a zero request is ignored.
#[test]
fn uncovered_resources() {
    let mut y = rf("f");
    y += &cq("q", None, "", &[vec![gpu("f", "4")]]);
    y += &wl(
        "mem",
        "q",
        0,
        1,
        1,
        &[("nvidia.com/gpu", "1"), ("memory", "1Gi")],
    );
    y += &wl(
        "zero",
        "q",
        0,
        2,
        1,
        &[("nvidia.com/gpu", "1"), ("memory", "0")],
    );
    let r = run(&y);
    assert_eq!(admitted_names(&r), ["ns/zero"]);
    let p = pending_of(&r, "ns/mem");
    assert_eq!(
        (p.reason.as_str(), p.message.as_str()),
        (
            "NoMatchingFlavor",
            "couldn't assign flavors to pod set main: resource memory unavailable in ClusterQueue"
        )
    );
}

/// A request above the maximum capacity is ExceedsMaxQuota with upstream's message, counting
/// the earlier PodSets' requests on the flavor.
#[test]
fn exceeds_max_quota_with_earlier_pod_sets() {
    let mut y = rf("f");
    y += &cq("q", None, "", &[vec![cpu("f", "4", None, None)]]);
    y += &wl_full(
        "w",
        "q",
        0,
        1,
        &[
            ("driver", 1, None, &[("cpu", "1500m")]),
            ("workers", 3, None, &[("cpu", "1")]),
        ],
        "",
    );
    let r = run(&y);
    let p = pending_of(&r, "ns/w");
    assert_eq!(p.reason, "ExceedsMaxQuota");
    assert_eq!(
        p.message,
        "couldn't assign flavors to pod set workers: insufficient quota for cpu in flavor f, previously considered podsets requests (1500m) + current podset request (3) > maximum capacity (4)"
    );
}

/// Partial admission: the smallest proportional reduction toward minCount that fits.
#[test]
fn partial_admission() {
    let mut y = rf("f");
    y += &cq("q", None, "", &[vec![gpu("f", "6")]]);
    y += &wl_full(
        "w",
        "q",
        0,
        1,
        &[("main", 10, Some(4), &[("nvidia.com/gpu", "1")])],
        "",
    );
    let r = run(&y);
    assert_eq!(r.admitted[0].pod_sets[0].count, 6);
    // below minCount nothing fits
    let mut n = rf("f");
    n += &cq("q", None, "", &[vec![gpu("f", "3")]]);
    n += &wl_full(
        "w",
        "q",
        0,
        1,
        &[("main", 10, Some(4), &[("nvidia.com/gpu", "1")])],
        "",
    );
    assert!(run(&n).admitted.is_empty());
}

/// A ClusterQueue covering `pods` charges one per pod.
#[test]
fn pods_resource() {
    let mut y = rf("f");
    y += &cq(
        "q",
        None,
        "",
        &[vec![(
            "f",
            vec![
                ("nvidia.com/gpu", "8", None, None),
                ("pods", "2", None, None),
            ],
        )]],
    );
    y += &wl("w", "q", 0, 1, 3, &[("nvidia.com/gpu", "1")]);
    let r = run(&y);
    let p = pending_of(&r, "ns/w");
    assert_eq!(
        p.message,
        "couldn't assign flavors to pod set main: insufficient quota for pods in flavor f, previously considered podsets requests (0) + current podset request (3) > maximum capacity (2)"
    );
}

/// whenCanPreempt: TryNextFlavor (default) prefers a later flavor that fits over one needing
/// preemption; MayStopSearch stops at the preempting flavor.
#[test]
fn when_can_preempt() {
    for (policy, flavor, preempts) in [
        ("TryNextFlavor", "two", false),
        ("MayStopSearch", "one", true),
    ] {
        let mut y = rf("one") + &rf("two");
        y += &cq(
            "q",
            None,
            &format!(
                "preemption: {{withinClusterQueue: LowerPriority}}\nflavorFungibility: {{whenCanPreempt: {policy}}}"
            ),
            &[vec![gpu("one", "2"), gpu("two", "2")]],
        );
        y += &admitted(
            "low",
            "q",
            "q",
            0,
            0,
            2,
            "one",
            &[("nvidia.com/gpu", "1", "2")],
        );
        y += &wl("high", "q", 10, 1, 2, &[("nvidia.com/gpu", "1")]);
        let r = run(&y);
        assert_eq!(r.preempted.len() == 1, preempts, "{policy}");
        let a = r
            .admitted
            .iter()
            .find(|a| a.workload == "ns/high")
            .expect("admitted");
        assert_eq!(a.pod_sets[0].flavors["nvidia.com/gpu"], flavor, "{policy}");
    }
}
