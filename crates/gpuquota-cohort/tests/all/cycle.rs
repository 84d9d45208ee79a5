//! The scheduling cycle (kubernetes-sigs/kueue: `pkg/scheduler/scheduler.go`).

use crate::common::*;

/// One head per ClusterQueue per cycle: two workloads that both fit in one BestEffortFIFO
/// queue are admitted in cycles 1 and 2, in priority then FIFO order.
#[test]
fn one_head_per_cluster_queue_per_cycle() {
    let mut y = rf("f");
    y += &cq("a", None, "", &[vec![gpu("f", "4")]]);
    y += &wl("first", "a", 0, 1, 1, &[("nvidia.com/gpu", "1")]);
    y += &wl("second", "a", 0, 2, 1, &[("nvidia.com/gpu", "1")]);
    y += &wl("urgent", "a", 10, 3, 1, &[("nvidia.com/gpu", "1")]);
    let r = run(&y);
    let order: Vec<(String, u32)> = r
        .admitted
        .iter()
        .map(|a| (a.workload.clone(), a.cycle))
        .collect();
    assert_eq!(
        order,
        [
            ("ns/urgent".into(), 1),
            ("ns/first".into(), 2),
            ("ns/second".into(), 3)
        ]
    );
    assert_eq!(r.cycles, 3);
    assert!(r.pending.is_empty());
}

/// Rule 11: entries are ordered by borrowing level before priority: the non-borrowing head
/// of `lender` wins over the higher-priority borrowing head of `borrower`.
#[test]
fn non_borrowing_entries_first() {
    let mut y = rf("f");
    y += &cq("lender", Some("co"), "", &[vec![gpu("f", "2")]]);
    y += &cq("borrower", Some("co"), "", &[vec![gpu("f", "0")]]);
    y += &wl("borrow", "borrower", 100, 1, 2, &[("nvidia.com/gpu", "1")]);
    y += &wl("own", "lender", 0, 2, 2, &[("nvidia.com/gpu", "1")]);
    let r = run_cycles(&y, 1);
    assert_eq!(admitted_names(&r), ["ns/own"]);
    let p = pending_of(&r, "ns/borrow");
    assert_eq!(p.reason, "WaitingForQuota");
    assert_eq!(
        p.message,
        "Workload no longer fits after processing another workload"
    );
}

/// Rule 13: a StrictFIFO head that does not fit blocks its queue; BestEffortFIFO moves on.
#[test]
fn strict_fifo_blocks_best_effort_moves_on() {
    for (strategy, expect_small) in [("StrictFIFO", false), ("BestEffortFIFO", true)] {
        let mut y = rf("f");
        y += &cq(
            "q",
            None,
            &format!("queueingStrategy: {strategy}"),
            &[vec![gpu("f", "4")]],
        );
        y += &admitted(
            "running",
            "q",
            "q",
            0,
            0,
            2,
            "f",
            &[("nvidia.com/gpu", "1", "2")],
        );
        y += &wl("big", "q", 0, 1, 3, &[("nvidia.com/gpu", "1")]);
        y += &wl("small", "q", 0, 2, 1, &[("nvidia.com/gpu", "1")]);
        let r = run(&y);
        assert_eq!(
            r.admitted.iter().any(|a| a.workload == "ns/small"),
            expect_small,
            "{strategy}"
        );
        let big = pending_of(&r, "ns/big");
        assert_eq!(big.reason, "WaitingForQuota");
        assert_eq!(
            big.message,
            "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor f, 1 more needed"
        );
        if !expect_small {
            let small = pending_of(&r, "ns/small");
            assert_eq!(small.reason, "Pending");
            assert!(small.message.contains("ns/big"));
        }
    }
}

/// Rule 12: a Preempt head without targets reserves capacity so that a later entry of the
/// cohort cannot take it this cycle — unless reclaimWithinCohort is Any.
#[test]
fn preempt_without_targets_reserves_capacity() {
    for (reclaim, other_admitted) in [("Never", false), ("LowerPriority", false), ("Any", true)] {
        let mut y = rf("f");
        y += &cq(
            "a",
            Some("co"),
            &format!("preemption: {{reclaimWithinCohort: {reclaim}}}"),
            &[vec![gpu("f", "4")]],
        );
        y += &cq("b", Some("co"), "", &[vec![gpu("f", "0")]]);
        y += &admitted(
            "held",
            "a",
            "a",
            0,
            0,
            2,
            "f",
            &[("nvidia.com/gpu", "1", "2")],
        );
        y += &wl("needs-four", "a", 50, 1, 4, &[("nvidia.com/gpu", "1")]);
        y += &wl("wants-two", "b", 0, 2, 2, &[("nvidia.com/gpu", "1")]);
        let r = run_cycles(&y, 1);
        assert_eq!(
            r.admitted.iter().any(|a| a.workload == "ns/wants-two"),
            other_admitted,
            "{reclaim}"
        );
        assert_eq!(pending_of(&r, "ns/needs-four").reason, "WaitingForQuota");
    }
}

/// Rule 12 at v0.20: an entry whose preemption targets overlap with targets chosen earlier in
/// the cycle is assigned again on the state those preemptions leave (DeferredFit here); both
/// preemptors are admitted in the next cycle once the victim is gone.
#[test]
fn overlapping_preemption_targets() {
    let mut y = rf("f");
    let p = "preemption: {reclaimWithinCohort: Any}";
    y += &cq("a", Some("co"), p, &[vec![gpu("f", "2")]]);
    y += &cq("b", Some("co"), p, &[vec![gpu("f", "2")]]);
    y += &cq("c", Some("co"), "", &[vec![gpu("f", "0")]]);
    y += &admitted(
        "hog",
        "c",
        "c",
        0,
        0,
        4,
        "f",
        &[("nvidia.com/gpu", "1", "4")],
    );
    y += &wl("pa", "a", 10, 1, 2, &[("nvidia.com/gpu", "1")]);
    y += &wl("pb", "b", 5, 2, 2, &[("nvidia.com/gpu", "1")]);
    let r1 = run_cycles(&y, 1);
    assert_eq!(
        preempted_names(&r1),
        [("ns/hog".to_string(), "InCohortReclamation".to_string())]
    );
    assert_eq!(r1.preempted[0].preemptor, "ns/pa");
    // RecomputeAssignmentUponPreemptionTargetsOverlap (v0.20, on): pb is assigned again with
    // hog gone; it then fits, but only once pa's preemption completes (DeferredFit)
    assert_eq!(
        pending_of(&r1, "ns/pb").message,
        "Workload has overlapping preemption targets with another workload, but will fit after these preemptions complete"
    );
    assert_eq!(
        pending_of(&r1, "ns/pb").reason,
        "WaitingForPreemptedWorkloads"
    );
    assert_eq!(
        pending_of(&r1, "ns/pa").reason,
        "WaitingForPreemptedWorkloads"
    );
    assert_eq!(
        pending_of(&r1, "ns/pa").message,
        "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor f, 2 more needed. Pending the preemption of 1 workload(s)"
    );
    let r = run(&y);
    let cycles: Vec<(String, u32)> = r
        .admitted
        .iter()
        .map(|a| (a.workload.clone(), a.cycle))
        .collect();
    assert_eq!(cycles, [("ns/pa".into(), 2), ("ns/pb".into(), 2)]);
    let hog = pending_of(&r, "ns/hog");
    assert_eq!(hog.cluster_queue, "c");
}

/// namespaceSelector: a workload from a namespace the ClusterQueue does not select is
/// inadmissible with upstream's message; an unset selector selects nothing.
#[test]
fn namespace_selector() {
    let mut y = rf("f");
    y += &cq("q", None, "", &[vec![gpu("f", "4")]]);
    y = y.replace(
        "namespaceSelector: {}",
        "namespaceSelector: {matchLabels: {team: a}}",
    );
    y += "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns, labels: {team: b}}\n---\n";
    y += &wl("w", "q", 0, 1, 1, &[("nvidia.com/gpu", "1")]);
    let r = run(&y);
    let p = pending_of(&r, "ns/w");
    assert_eq!(
        (p.reason.as_str(), p.message.as_str()),
        (
            "Misconfigured",
            "workload namespace doesn't match ClusterQueue selector"
        )
    );
    let ok = y.replace("team: b", "team: a");
    assert_eq!(admitted_names(&run(&ok)), ["ns/w"]);
}

/// Missing LocalQueue / ClusterQueue and inactive ClusterQueues keep workloads pending with
/// the workload controller's reasons.
#[test]
fn missing_and_inactive_queues() {
    let mut y = rf("f");
    y += &cq("q", None, "", &[vec![gpu("f", "4")]]);
    y += &cq("stopped", None, "stopPolicy: Hold", &[vec![gpu("f", "4")]]);
    y += &cq("noflavor", None, "", &[vec![gpu("missing", "4")]]);
    y += "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: orphan, namespace: ns}\nspec: {clusterQueue: gone}\n---\n";
    y += &wl("no-lq", "nope", 0, 1, 1, &[("nvidia.com/gpu", "1")]);
    y += &wl("no-cq", "orphan", 0, 2, 1, &[("nvidia.com/gpu", "1")]);
    y += &wl("on-stopped", "stopped", 0, 3, 1, &[("nvidia.com/gpu", "1")]);
    y += &wl(
        "on-inactive",
        "noflavor",
        0,
        4,
        1,
        &[("nvidia.com/gpu", "1")],
    );
    let w = world(&y);
    assert!(
        w.warnings
            .iter()
            .any(|x| x.name == "noflavor" && x.message.contains("FlavorNotFound"))
    );
    let r = crate::common::schedule(&w, None);
    let got: Vec<(String, String, String, String)> = r
        .pending
        .iter()
        .map(|p| {
            (
                p.workload.clone(),
                p.cluster_queue.clone(),
                p.reason.clone(),
                p.message.clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "ns/no-cq".into(),
                "gone".into(),
                "Misconfigured".into(),
                "ClusterQueue gone doesn't exist".into()
            ),
            (
                "ns/no-lq".into(),
                "".into(),
                "Misconfigured".into(),
                "LocalQueue nope doesn't exist".into()
            ),
            (
                "ns/on-inactive".into(),
                "noflavor".into(),
                "Suspended".into(),
                "ClusterQueue noflavor is inactive".into()
            ),
            (
                "ns/on-stopped".into(),
                "stopped".into(),
                "Suspended".into(),
                "ClusterQueue stopped is inactive".into()
            ),
        ]
    );
    assert_eq!(r.cycles, 0);
}

/// `--cycles N` stops after N cycles.
#[test]
fn cycles_bound() {
    let mut y = rf("f");
    y += &cq("a", None, "", &[vec![gpu("f", "4")]]);
    for i in 0..3 {
        y += &wl(&format!("w{i}"), "a", 0, i, 1, &[("nvidia.com/gpu", "1")]);
    }
    let r = run_cycles(&y, 2);
    assert_eq!(r.cycles, 2);
    assert_eq!(admitted_names(&r), ["ns/w0", "ns/w1"]);
    assert_eq!(pending_of(&r, "ns/w2").reason, "Pending");
}

/// A cohort cycle disables every ClusterQueue of the tree (inactive, nothing admitted).
#[test]
fn cohort_cycle_makes_queues_inactive() {
    let mut y = rf("f");
    y += &cohort("cx", Some("cy"), &[]);
    y += &cohort("cy", Some("cx"), &[]);
    y += &cq("q", Some("cx"), "", &[vec![gpu("f", "4")]]);
    y += &wl("w", "q", 0, 1, 1, &[("nvidia.com/gpu", "1")]);
    let w = world(&y);
    assert!(w.warnings.iter().any(|x| x.message.contains("cycle")));
    let r = crate::common::schedule(&w, None);
    let p = pending_of(&r, "ns/w");
    assert_eq!(
        (p.reason.as_str(), p.message.as_str()),
        ("Suspended", "ClusterQueue q is inactive")
    );
}

/// A deactivated workload (`spec.active: false`) is never admitted.
#[test]
fn deactivated_workload() {
    let mut y = rf("f");
    y += &cq("q", None, "", &[vec![gpu("f", "4")]]);
    y += &wl("w", "q", 0, 1, 1, &[("nvidia.com/gpu", "1")])
        .replace("  queueName: q\n", "  queueName: q\n  active: false\n");
    let r = run(&y);
    assert!(r.admitted.is_empty());
    assert_eq!(pending_of(&r, "ns/w").reason, "Deactivated");
}

/// An admitted workload that is deactivated is evicted (upstream evicts with reason
/// Deactivated): its quota is free for the next workload and it waits as Deactivated.
#[test]
fn deactivated_admitted_workload_is_evicted() {
    let mut y = rf("f");
    y += &cq("q", None, "", &[vec![gpu("f", "2")]]);
    y += &admitted(
        "deact",
        "q",
        "q",
        0,
        0,
        1,
        "f",
        &[("nvidia.com/gpu", "2", "2")],
    )
    .replace("  queueName: q\n", "  queueName: q\n  active: false\n");
    y += &wl("next", "q", 0, 1, 1, &[("nvidia.com/gpu", "2")]);
    let r = run(&y);
    assert_eq!(admitted_names(&r), ["ns/next"]);
    let d = pending_of(&r, "ns/deact");
    assert_eq!(
        (d.reason.as_str(), d.message.as_str()),
        ("Deactivated", "The workload is deactivated")
    );
}

/// Partial admission combined with preemption: the reduced count that can preempt is taken.
#[test]
fn partial_admission_prefers_full_preemption() {
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
        4,
        "f",
        &[("nvidia.com/gpu", "1", "4")],
    );
    y += &wl_full(
        "w",
        "q",
        5,
        1,
        &[("main", 4, Some(2), &[("nvidia.com/gpu", "1")])],
        "",
    );
    let r = run(&y);
    // the full count fits after preempting `low`, so no reduction happens
    assert_eq!(
        preempted_names(&r),
        [("ns/low".into(), "InClusterQueue".into())]
    );
    assert_eq!(r.admitted[0].pod_sets[0].count, 4);
}

/// FlavorFungibilityPreserveScanProgress (v0.20, on): an entry skipped because an earlier
/// entry took the quota keeps its flavor scan progress, so the next cycle resumes after the
/// flavor it had stopped on (`f2`, borrowing) instead of going back to `f1`, where
/// PreemptionOverBorrowing would have preferred reclaiming from the borrowing `d`.
#[test]
fn skipped_entry_resumes_flavor_scan_next_cycle() {
    let two = |a: &'static str, b: &'static str| {
        vec![vec![
            ("f1", vec![("nvidia.com/gpu", a, None, None)]),
            ("f2", vec![("nvidia.com/gpu", b, None, None)]),
        ]]
    };
    let mut y = rf("f1") + &rf("f2");
    y += &cq(
        "b",
        Some("co"),
        "preemption: {reclaimWithinCohort: Any}\nflavorFungibility: {whenCanBorrow: TryNextFlavor, whenCanPreempt: TryNextFlavor, preference: PreemptionOverBorrowing}",
        &two("1", "0"),
    );
    y += &cq("c", Some("co"), "", &two("1", "0"));
    y += &cq("d", Some("co"), "", &two("0", "0"));
    y += &cq("e", Some("co"), "", &two("0", "1"));
    y += &admitted(
        "x",
        "d",
        "d",
        0,
        0,
        1,
        "f1",
        &[("nvidia.com/gpu", "1", "1")],
    );
    y += &wl("wb", "b", 0, 1, 1, &[("nvidia.com/gpu", "1")]);
    y += &wl("wc", "c", 10, 2, 1, &[("nvidia.com/gpu", "1")]);
    let r1 = run_cycles(&y, 1);
    assert_eq!(admitted_names(&r1), ["ns/wc"]);
    assert_eq!(
        pending_of(&r1, "ns/wb").message,
        "Workload no longer fits after processing another workload"
    );
    let r = run(&y);
    assert!(r.preempted.is_empty());
    let wb = r
        .admitted
        .iter()
        .find(|a| a.workload == "ns/wb")
        .expect("wb");
    assert_eq!(
        (wb.cycle, wb.pod_sets[0].flavors["nvidia.com/gpu"].as_str()),
        (2, "f2")
    );
}

/// stopPolicy: Hold keeps admitted workloads running; HoldAndDrain (ClusterQueue or
/// LocalQueue) evicts them (upstream `reconcileOn*ActiveState`), so their quota is free for
/// the cohort and they wait with the queue's Suspended reason.
#[test]
fn hold_and_drain_evicts_admitted_workloads() {
    let mut y = rf("f");
    y += &cq(
        "held",
        Some("co"),
        "stopPolicy: Hold",
        &[vec![gpu("f", "2")]],
    );
    y += &cq(
        "drained",
        Some("co"),
        "stopPolicy: HoldAndDrain",
        &[vec![gpu("f", "2")]],
    );
    y += &cq("open", Some("co"), "", &[vec![gpu("f", "0")]]);
    y += &admitted(
        "h",
        "held",
        "held",
        0,
        0,
        1,
        "f",
        &[("nvidia.com/gpu", "2", "2")],
    );
    y += &admitted(
        "d",
        "drained",
        "drained",
        0,
        0,
        1,
        "f",
        &[("nvidia.com/gpu", "2", "2")],
    );
    y += &wl("o", "open", 0, 1, 1, &[("nvidia.com/gpu", "2")]);
    let r = run(&y);
    assert_eq!(admitted_names(&r), ["ns/o"]);
    assert!(r.preempted.is_empty());
    let d = pending_of(&r, "ns/d");
    assert_eq!(
        (d.reason.as_str(), d.message.as_str()),
        ("Suspended", "ClusterQueue drained is inactive")
    );
    assert!(r.pending.iter().all(|p| p.workload != "ns/h"));
}

/// SchedulingEquivalenceHashing (beta, on): in BestEffortFIFO a head that does not fit takes
/// the queued workloads of the same scheduling shape to the inadmissible set, so the next
/// different workload is the head of the next cycle; the equivalent one is never evaluated
/// (upstream sets no condition on it).
#[test]
fn equivalent_workloads_move_to_inadmissible_together() {
    let mut y = rf("f");
    y += &cq("q", None, "", &[vec![gpu("f", "2")]]);
    y += &wl("w1", "q", 0, 1, 1, &[("nvidia.com/gpu", "4")]);
    y += &wl("w2", "q", 0, 2, 1, &[("nvidia.com/gpu", "4")]);
    y += &wl("w3", "q", 0, 3, 1, &[("nvidia.com/gpu", "1")]);
    let r = run(&y);
    let got: Vec<(String, u32)> = r
        .admitted
        .iter()
        .map(|a| (a.workload.clone(), a.cycle))
        .collect();
    assert_eq!(got, [("ns/w3".to_string(), 2)]);
    assert_eq!(pending_of(&r, "ns/w1").reason, "ExceedsMaxQuota");
    assert_eq!(pending_of(&r, "ns/w2").reason, "Pending");
}

/// SchedulingEquivalenceHashing with evicted workloads: a preempted workload moved to the
/// inadmissible set with its failed twin shows the twin's reason and upstream's "Bypassed"
/// message (the workload controller's view of a workload pending evaluation).
#[test]
fn preempted_twin_bypassed_after_equivalent_failure() {
    let mut y = rf("f");
    y += &cq(
        "q",
        None,
        "preemption: {withinClusterQueue: LowerPriority}",
        &[vec![gpu("f", "2")]],
    );
    for (name, t) in [("v1", 0), ("v2", 1)] {
        y += &admitted(
            name,
            "q",
            "q",
            0,
            t,
            1,
            "f",
            &[("nvidia.com/gpu", "1", "1")],
        );
    }
    y += &wl("p", "q", 5, 2, 1, &[("nvidia.com/gpu", "2")]);
    let r = run(&y);
    assert_eq!(admitted_names(&r), ["ns/p"]);
    assert_eq!(
        preempted_names(&r),
        [
            ("ns/v1".to_string(), "InClusterQueue".to_string()),
            ("ns/v2".to_string(), "InClusterQueue".to_string())
        ]
    );
    let v1 = pending_of(&r, "ns/v1");
    assert_eq!(
        (v1.reason.as_str(), v1.message.as_str()),
        (
            "WaitingForQuota",
            "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor f, 1 more needed"
        )
    );
    let v2 = pending_of(&r, "ns/v2");
    assert_eq!(
        (v2.reason.as_str(), v2.message.as_str()),
        (
            "WaitingForQuota",
            "Bypassed scheduling evaluation because an equivalent workload recently failed"
        )
    );
}

/// Upstream `GetQueueOrderTimestamp`: a pending workload evicted by the PodsReady timeout
/// queues by its eviction time (requeuing timestamp Eviction, the default), so a younger
/// workload of the same priority goes first.
#[test]
fn pods_ready_timeout_eviction_requeues_by_eviction_time() {
    let mut y = rf("f");
    y += &cq("q", None, "", &[vec![gpu("f", "1")]]);
    y += &wl("old", "q", 0, 1, 1, &[("nvidia.com/gpu", "1")]).replace(
        "---\n",
        "status:\n  conditions:\n  - {type: Evicted, status: \"True\", reason: PodsReadyTimeout, lastTransitionTime: \"2026-01-01T02:00:00Z\"}\n---\n",
    );
    y += &wl("young", "q", 0, 2, 1, &[("nvidia.com/gpu", "1")]);
    let r = run_cycles(&y, 1);
    assert_eq!(admitted_names(&r), ["ns/young"]);
}
