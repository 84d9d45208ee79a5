//! Classical preemption (kubernetes-sigs/kueue: `pkg/scheduler/preemption`).

use crate::common::*;

/// withinClusterQueue: LowerPriority preempts the lower-priority workload (InClusterQueue);
/// the preemptor is admitted in the next cycle, once its victim is gone.
#[test]
fn within_cluster_queue_lower_priority() {
    let mut y = rf("f");
    y += &cq(
        "q",
        None,
        "preemption: {withinClusterQueue: LowerPriority}",
        &[vec![gpu("f", "4")]],
    );
    y += &admitted(
        "low",
        "q",
        "q",
        0,
        0,
        3,
        "f",
        &[("nvidia.com/gpu", "1", "3")],
    );
    y += &admitted(
        "same",
        "q",
        "q",
        5,
        1,
        1,
        "f",
        &[("nvidia.com/gpu", "1", "1")],
    );
    y += &wl("high", "q", 5, 2, 2, &[("nvidia.com/gpu", "1")]);
    let r = run(&y);
    assert_eq!(
        preempted_names(&r),
        [("ns/low".into(), "InClusterQueue".into())]
    );
    assert_eq!(r.preempted[0].cycle, 1);
    let a: Vec<(String, u32)> = r
        .admitted
        .iter()
        .map(|a| (a.workload.clone(), a.cycle))
        .collect();
    assert_eq!(a, [("ns/high".into(), 2)]);
    let low = pending_of(&r, "ns/low");
    assert_eq!(low.reason, "WaitingForQuota");
}

/// The victim's pending message right after the cycle is upstream's preemption message.
#[test]
fn preemption_message() {
    let mut y = rf("f");
    y += &cq(
        "q",
        Some("co"),
        "preemption: {withinClusterQueue: LowerPriority}",
        &[vec![gpu("f", "4")]],
    );
    y += &admitted(
        "low",
        "q",
        "q",
        0,
        0,
        4,
        "f",
        &[("nvidia.com/gpu", "1", "4")],
    );
    y += &wl("high", "q", 5, 2, 2, &[("nvidia.com/gpu", "1")]);
    let r = run_cycles(&y, 1);
    let low = pending_of(&r, "ns/low");
    assert_eq!(low.reason, "PendingEvaluation");
    assert_eq!(
        low.message,
        "Preempted to accommodate a workload (UID: uid-high, JobUID: UNKNOWN) due to prioritization in the ClusterQueue; preemptor path: /co/q; preemptee path: /co/q"
    );
}

/// LowerOrNewerEqualPriority also preempts equal-priority workloads created later.
#[test]
fn lower_or_newer_equal_priority() {
    let mut y = rf("f");
    y += &cq(
        "q",
        None,
        "preemption: {withinClusterQueue: LowerOrNewerEqualPriority}",
        &[vec![gpu("f", "2")]],
    );
    y += &admitted(
        "older",
        "q",
        "q",
        5,
        0,
        1,
        "f",
        &[("nvidia.com/gpu", "1", "1")],
    );
    y += &admitted(
        "newer",
        "q",
        "q",
        5,
        9,
        1,
        "f",
        &[("nvidia.com/gpu", "1", "1")],
    );
    y += &wl("me", "q", 5, 5, 1, &[("nvidia.com/gpu", "1")]);
    let r = run(&y);
    assert_eq!(
        preempted_names(&r),
        [("ns/newer".into(), "InClusterQueue".into())]
    );
}

/// Never (the default) never preempts inside the queue.
#[test]
fn within_cluster_queue_never() {
    let mut y = rf("f");
    y += &cq("q", None, "", &[vec![gpu("f", "2")]]);
    y += &admitted(
        "low",
        "q",
        "q",
        0,
        0,
        2,
        "f",
        &[("nvidia.com/gpu", "1", "2")],
    );
    y += &wl("high", "q", 100, 1, 1, &[("nvidia.com/gpu", "1")]);
    let r = run(&y);
    assert!(r.preempted.is_empty());
    assert_eq!(pending_of(&r, "ns/high").reason, "WaitingForQuota");
}

/// reclaimWithinCohort: a queue reclaims its lent nominal quota from a borrower
/// (InCohortReclamation); with LowerPriority only from lower-priority borrowers.
#[test]
fn reclaim_within_cohort() {
    for (policy, borrower_prio, reclaimed) in [
        ("Any", 10, true),
        ("LowerPriority", 10, false),
        ("LowerPriority", 0, true),
        ("Never", 0, false),
    ] {
        let mut y = rf("f");
        y += &cq(
            "owner",
            Some("co"),
            &format!("preemption: {{reclaimWithinCohort: {policy}}}"),
            &[vec![gpu("f", "4")]],
        );
        y += &cq("borrower", Some("co"), "", &[vec![gpu("f", "0")]]);
        y += &admitted(
            "b",
            "borrower",
            "borrower",
            borrower_prio,
            0,
            3,
            "f",
            &[("nvidia.com/gpu", "1", "3")],
        );
        y += &wl("mine", "owner", 5, 1, 2, &[("nvidia.com/gpu", "1")]);
        let r = run(&y);
        if reclaimed {
            assert_eq!(
                preempted_names(&r),
                [("ns/b".into(), "InCohortReclamation".into())],
                "{policy}"
            );
            assert_eq!(admitted_names(&r), ["ns/mine"]);
        } else {
            assert!(r.preempted.is_empty(), "{policy}");
            assert_eq!(
                pending_of(&r, "ns/mine").reason,
                "WaitingForQuota",
                "{policy}"
            );
        }
    }
}

/// Only workloads of queues above nominal are reclaimed: a queue within its nominal quota is
/// never a reclaim victim.
#[test]
fn reclaim_only_from_borrowers() {
    let mut y = rf("f");
    y += &cq(
        "a",
        Some("co"),
        "preemption: {reclaimWithinCohort: Any}",
        &[vec![gpu("f", "2")]],
    );
    y += &cq("b", Some("co"), "", &[vec![gpu("f", "2")]]);
    y += &admitted(
        "b1",
        "b",
        "b",
        0,
        0,
        2,
        "f",
        &[("nvidia.com/gpu", "1", "2")],
    );
    y += &admitted(
        "a1",
        "a",
        "a",
        0,
        1,
        1,
        "f",
        &[("nvidia.com/gpu", "1", "1")],
    );
    y += &wl("a2", "a", 5, 2, 2, &[("nvidia.com/gpu", "1")]);
    let r = run(&y);
    assert!(r.preempted.is_empty());
    assert_eq!(pending_of(&r, "ns/a2").reason, "WaitingForQuota");
}

/// borrowWithinCohort LowerPriority: a preemptor that keeps borrowing may preempt
/// lower-priority workloads of borrowing queues (InCohortReclaimWhileBorrowing), within the
/// maxPriorityThreshold.
#[test]
fn borrow_within_cohort() {
    for (threshold, expect) in [
        ("", true),
        ("maxPriorityThreshold: 5", true),
        ("maxPriorityThreshold: 0", false),
    ] {
        let mut y = rf("f");
        y += &cq(
            "a",
            Some("co"),
            &format!(
                "preemption: {{reclaimWithinCohort: Any, borrowWithinCohort: {{policy: LowerPriority, {threshold}}}}}"
            ),
            &[vec![gpu("f", "0")]],
        );
        y += &cq("b", Some("co"), "", &[vec![gpu("f", "0")]]);
        y += &cq("lender", Some("co"), "", &[vec![gpu("f", "4")]]);
        y += &admitted(
            "bw",
            "b",
            "b",
            3,
            0,
            4,
            "f",
            &[("nvidia.com/gpu", "1", "4")],
        );
        y += &wl("aw", "a", 10, 1, 2, &[("nvidia.com/gpu", "1")]);
        let r = run(&y);
        if expect {
            assert_eq!(
                preempted_names(&r),
                [("ns/bw".into(), "InCohortReclaimWhileBorrowing".into())],
                "{threshold}"
            );
            assert_eq!(admitted_names(&r), ["ns/aw"]);
        } else {
            assert!(r.preempted.is_empty(), "{threshold}");
        }
    }
}

/// Minimal set with fill-back: greedy removal in candidate order (lower priority first, then
/// most recently admitted), then earlier victims that are not needed are given back.
#[test]
fn minimal_set_with_fill_back() {
    let mut y = rf("f");
    y += &cq(
        "q",
        None,
        "preemption: {withinClusterQueue: LowerPriority}",
        &[vec![gpu("f", "6")]],
    );
    // candidate order: p0-small (prio 0), then p1-new (prio 1, admitted later), p1-old
    y += &admitted(
        "p0-small",
        "q",
        "q",
        0,
        0,
        1,
        "f",
        &[("nvidia.com/gpu", "1", "1")],
    );
    y += &admitted(
        "p1-old",
        "q",
        "q",
        1,
        1,
        2,
        "f",
        &[("nvidia.com/gpu", "1", "2")],
    );
    y += &admitted(
        "p1-new",
        "q",
        "q",
        1,
        2,
        3,
        "f",
        &[("nvidia.com/gpu", "1", "3")],
    );
    y += &wl("big", "q", 10, 3, 3, &[("nvidia.com/gpu", "1")]);
    // greedy: p0-small (1 free) then p1-new (4 free, fits); fill-back returns p0-small
    let r = run_cycles(&y, 1);
    assert_eq!(
        preempted_names(&r),
        [("ns/p1-new".into(), "InClusterQueue".into())]
    );
}

/// Hierarchical cohorts (#4806 "borrowing level"): a queue whose request fits within its own
/// subtree (hierarchical advantage) reclaims from a borrower in another subtree even though it
/// borrows inside its subtree; in a flat cohort the same request is NoFit (it would borrow and
/// borrowWithinCohort is Never).
#[test]
fn hierarchical_reclaim() {
    let mut y = rf("f");
    y += &cohort("root", None, &[]);
    y += &cohort("left", Some("root"), &[]);
    y += &cohort("right", Some("root"), &[]);
    y += &cq(
        "l1",
        Some("left"),
        "preemption: {reclaimWithinCohort: Any}",
        &[vec![gpu("f", "2")]],
    );
    y += &cq("l2", Some("left"), "", &[vec![gpu("f", "2")]]);
    y += &cq("r1", Some("right"), "", &[vec![gpu("f", "0")]]);
    y += &admitted(
        "borrower",
        "r1",
        "r1",
        100,
        0,
        4,
        "f",
        &[("nvidia.com/gpu", "1", "4")],
    );
    y += &wl("owner", "l1", 0, 1, 3, &[("nvidia.com/gpu", "1")]);
    let r = run(&y);
    assert_eq!(
        preempted_names(&r),
        [("ns/borrower".into(), "InCohortReclamation".into())]
    );
    assert_eq!(admitted_names(&r), ["ns/owner"]);
    // flat: no advantage
    let mut flat = rf("f");
    flat += &cq(
        "l1",
        Some("root"),
        "preemption: {reclaimWithinCohort: Any}",
        &[vec![gpu("f", "2")]],
    );
    flat += &cq("l2", Some("root"), "", &[vec![gpu("f", "2")]]);
    flat += &cq("r1", Some("root"), "", &[vec![gpu("f", "0")]]);
    flat += &admitted(
        "borrower",
        "r1",
        "r1",
        100,
        0,
        4,
        "f",
        &[("nvidia.com/gpu", "1", "4")],
    );
    flat += &wl("owner", "l1", 0, 1, 3, &[("nvidia.com/gpu", "1")]);
    let r = run(&flat);
    assert!(r.preempted.is_empty());
    assert_eq!(pending_of(&r, "ns/owner").reason, "WaitingForQuota");
}

/// Rule 15 (upstream `CandidatesOrdering`, `quotaReservationTime`): among equal priorities the
/// most recently admitted goes first; a workload admitted during the run was admitted "now",
/// after every input admission.
#[test]
fn admitted_during_the_run_is_the_most_recent() {
    let mut y = rf("f");
    y += &cq(
        "q",
        None,
        "preemption: {withinClusterQueue: LowerPriority}",
        &[vec![gpu("f", "3")]],
    );
    y += &admitted(
        "old",
        "q",
        "q",
        0,
        0,
        1,
        "f",
        &[("nvidia.com/gpu", "1", "1")],
    );
    y += &wl("new", "q", 0, 1, 1, &[("nvidia.com/gpu", "1")]);
    y += &wl("high", "q", 5, 2, 2, &[("nvidia.com/gpu", "1")]);
    let w = world(&y);
    let high = w.workload_id("ns/high").expect("high");
    let mut s = gpuquota_cohort::testkit::scheduler(&w);
    s.withhold(high);
    s.run(Some(1));
    s.arrive(high);
    s.run(None);
    let r = gpuquota_cohort::ScheduleReport::from_scheduler(&w, &s);
    assert_eq!(
        preempted_names(&r),
        [("ns/new".to_string(), "InClusterQueue".to_string())]
    );
    assert!(admitted_names(&r).contains(&"ns/high".to_string()));
}

/// Upstream `quotaReservationTime`: an admitted workload without `QuotaReserved=True` counts
/// as reserved "now", so it is preempted before one with an older transition time.
#[test]
fn missing_quota_reserved_condition_counts_as_now() {
    let mut y = rf("f");
    y += &cq(
        "q",
        None,
        "preemption: {withinClusterQueue: LowerPriority}",
        &[vec![gpu("f", "2")]],
    );
    y += &admitted("a", "q", "q", 0, 5, 1, "f", &[("nvidia.com/gpu", "1", "1")]);
    let b = admitted("b", "q", "q", 0, 1, 1, "f", &[("nvidia.com/gpu", "1", "1")]);
    y += &b.replace(
        "  conditions:\n  - type: QuotaReserved\n    status: \"True\"\n    lastTransitionTime: \"2026-01-01T01:00:01Z\"\n",
        "",
    );
    y += &wl("high", "q", 5, 9, 1, &[("nvidia.com/gpu", "1")]);
    let r = run_cycles(&y, 1);
    assert_eq!(
        preempted_names(&r),
        [("ns/b".to_string(), "InClusterQueue".to_string())]
    );
}

/// Evictions held (`Scheduler::hold_evictions`): `low` (2 of 2 GPUs) is preempted by `high`
/// but keeps its quota until `release_evicted`; meanwhile `high` is not admitted and further
/// cycles issue no second preemption of `low`. Once released, `high` is admitted in the next
/// cycle and `low` waits (2 + 2 > 2).
#[test]
fn held_evictions_keep_the_victims_quota_until_released() {
    let mut y = rf("f");
    y += &cq(
        "q",
        None,
        "preemption: {withinClusterQueue: LowerPriority}",
        &[vec![gpu("f", "2")]],
    );
    y += &admitted(
        "low",
        "q",
        "q",
        0,
        0,
        2,
        "f",
        &[("nvidia.com/gpu", "1", "2")],
    );
    y += &wl("high", "q", 9, 1, 2, &[("nvidia.com/gpu", "1")]);
    let w = world(&y);
    let (low, high) = (
        w.workload_id("ns/low").expect("low"),
        w.workload_id("ns/high").expect("high"),
    );
    let mut s = gpuquota_cohort::testkit::scheduler(&w);
    s.hold_evictions(true);
    s.settle(50);
    s.settle(50);
    assert_eq!(s.preempted.len(), 1);
    assert_eq!(s.preempted[0].wl, low);
    assert!(s.is_evicting(low));
    assert!(s.reservations()[high].is_none());
    assert!(s.admitted.is_empty());
    assert!(s.release_evicted(low));
    assert!(!s.release_evicted(low), "released once");
    s.settle(50);
    assert!(s.reservations()[high].is_some());
    assert!(s.reservations()[low].is_none());
    assert_eq!(s.preempted.len(), 1);
    assert_eq!(s.admitted.len(), 1);
}
