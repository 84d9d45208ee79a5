//! Scenarios transcribed from upstream Kueue's scheduler unit tests (the version the design record
//! describes, gates at their defaults), run through the engine as manifests. Each test names
//! the upstream test case it pins; expected values are upstream's.

use super::common::*;

const CQ_PREEMPTION: &str =
    "preemption: {reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}";

/// The tree of upstream `scheduler_recompute_preemption_test.go` (`defaultCohorts`): root-cohort
/// (3005 cpu) over parent-cohort-a (0) with cq-hero (3000) and cq-noisy (0), parent-cohort-b with
/// cq-tiny (50), parent-cohort-c with cq-rest (0).
fn recompute_tree() -> String {
    let mut y = rf("default");
    y += &cohort(
        "root-cohort",
        None,
        &[vec![cpu("default", "3005", None, None)]],
    );
    y += &cohort(
        "parent-cohort-a",
        Some("root-cohort"),
        &[vec![cpu("default", "0", None, None)]],
    );
    y += &cohort("parent-cohort-b", Some("root-cohort"), &[]);
    y += &cohort("parent-cohort-c", Some("root-cohort"), &[]);
    for (name, parent, nominal) in [
        ("cq-hero", "parent-cohort-a", "3000"),
        ("cq-noisy", "parent-cohort-a", "0"),
        ("cq-tiny", "parent-cohort-b", "50"),
        ("cq-rest", "parent-cohort-c", "0"),
    ] {
        y += &cq(
            name,
            Some(parent),
            CQ_PREEMPTION,
            &[vec![cpu("default", nominal, None, None)]],
        );
    }
    y
}

fn with_job_uid(y: String, name: &str, job_uid: &str) -> String {
    y.replace(
        &format!("  name: {name}\n  namespace: ns\n"),
        &format!(
            "  name: {name}\n  namespace: ns\n  labels: {{kueue.x-k8s.io/job-uid: {job_uid}}}\n"
        ),
    )
}

/// Upstream `TestScheduleRecomputePreemptionTargets` / "two workloads reclaim nominal quota;
/// RecomputePreemptionTargetsUponOverlap enabled": wl-tiny-pending (created first) reclaims
/// from cq-rest; wl-hero's targets overlap, it is assigned again without wl-rest-admitted and
/// fits once that preemption completes (DeferredFit).
#[test]
fn recompute_two_workloads_reclaim_nominal_quota() {
    let mut y = recompute_tree();
    y += &admitted(
        "wl-rest-admitted",
        "cq-rest",
        "cq-rest",
        0,
        0,
        1,
        "default",
        &[("cpu", "6055", "6055")],
    );
    y += &with_job_uid(
        wl("wl-hero", "cq-hero", 0, 2, 1, &[("cpu", "2950")]),
        "wl-hero",
        "job-h-uid",
    );
    y += &with_job_uid(
        wl("wl-tiny-pending", "cq-tiny", 0, 1, 1, &[("cpu", "50")]),
        "wl-tiny-pending",
        "job-t-uid",
    );
    let y = y.replace("uid: uid-wl-", "uid: wl-");
    let r = run_cycles(&y, 1);
    assert!(r.admitted.is_empty());
    assert_eq!(
        preempted_names(&r),
        [(
            "ns/wl-rest-admitted".to_string(),
            "InCohortReclamation".to_string()
        )]
    );
    assert_eq!(r.preempted[0].preemptor, "ns/wl-tiny-pending");
    let hero = pending_of(&r, "ns/wl-hero");
    assert_eq!(hero.reason, "WaitingForPreemptedWorkloads");
    assert_eq!(
        hero.message,
        "Workload has overlapping preemption targets with another workload, but will fit after these preemptions complete"
    );
    let tiny = pending_of(&r, "ns/wl-tiny-pending");
    assert_eq!(tiny.reason, "WaitingForPreemptedWorkloads");
    assert_eq!(
        tiny.message,
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 50 more needed. Pending the preemption of 1 workload(s)"
    );
    let rest = pending_of(&r, "ns/wl-rest-admitted");
    assert_eq!(rest.reason, "PendingEvaluation");
    assert_eq!(
        rest.message,
        "Preempted to accommodate a workload (UID: wl-tiny-pending, JobUID: job-t-uid) due to reclamation within the cohort; preemptor path: /root-cohort/parent-cohort-b/cq-tiny; preemptee path: /root-cohort/parent-cohort-c/cq-rest"
    );
    // the next cycle admits both once the victim is gone
    let r = run(&y);
    let mut got: Vec<(String, u32)> = r
        .admitted
        .iter()
        .map(|a| (a.workload.clone(), a.cycle))
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            ("ns/wl-hero".to_string(), 2),
            ("ns/wl-tiny-pending".to_string(), 2)
        ]
    );
}

fn tainted_flavors() -> String {
    let mut y = rf("on-demand");
    y += &rf_spec(
        "spot-tainted",
        "{nodeTaints: [{key: key, value: val, effect: NoSchedule}]}",
    );
    y += &rf_spec(
        "spot-tainted-2",
        "{nodeTaints: [{key: key, value: val2, effect: NoSchedule}]}",
    );
    y
}

/// Upstream `TestSchedule` / "flavors with mixed misconfiguration and insufficient quota":
/// a tainted flavor and a flavor short of quota; the least severe reason (WaitingForQuota)
/// wins within the resource group, and both flavors are in the sorted message. The
/// ClusterQueue has borrowing limits without a cohort, as upstream's test does.
#[test]
fn mixed_misconfiguration_and_insufficient_quota() {
    let mut y = tainted_flavors();
    y += &cq(
        "custom-cq",
        None,
        "queueingStrategy: StrictFIFO",
        &[vec![
            cpu("spot-tainted", "20", Some("20"), None),
            cpu("on-demand", "15", Some("15"), None),
        ]],
    );
    y += &admitted(
        "existing-on-demand-job",
        "custom-cq",
        "custom-cq",
        0,
        0,
        1,
        "on-demand",
        &[("cpu", "10", "10")],
    );
    y += &wl("new-job", "custom-cq", 0, 1, 1, &[("cpu", "10")]);
    let r = run_cycles(&y, 1);
    assert!(r.admitted.is_empty());
    assert!(r.preempted.is_empty());
    let p = pending_of(&r, "ns/new-job");
    assert_eq!(p.reason, "WaitingForQuota");
    assert_eq!(
        p.message,
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor on-demand, 5 more needed, untolerated taint {key val NoSchedule <nil>} in flavor spot-tainted"
    );
}

/// Upstream `TestSchedule` / "flavors with mixed taint mismatch and exceeding limits":
/// ExceedsMaxQuota (less severe than NoMatchingFlavor) is the group's reason.
#[test]
fn mixed_taint_mismatch_and_exceeding_limits() {
    let mut y = tainted_flavors();
    y += &cq(
        "custom-cq2",
        None,
        "queueingStrategy: StrictFIFO",
        &[vec![
            cpu("spot-tainted", "20", Some("20"), None),
            cpu("on-demand", "5", Some("5"), None),
        ]],
    );
    y += &wl("new-job2", "custom-cq2", 0, 1, 1, &[("cpu", "10")]);
    let r = run_cycles(&y, 1);
    let p = pending_of(&r, "ns/new-job2");
    assert_eq!(p.reason, "ExceedsMaxQuota");
    assert_eq!(
        p.message,
        "couldn't assign flavors to pod set main: insufficient quota for cpu in flavor on-demand, previously considered podsets requests (0) + current podset request (10) > maximum capacity (5), untolerated taint {key val NoSchedule <nil>} in flavor spot-tainted"
    );
}

/// Upstream `TestSchedule` / "flavors are structurally incompatible": every flavor has an
/// untolerated taint, NoMatchingFlavor.
#[test]
fn flavors_structurally_incompatible() {
    let mut y = tainted_flavors();
    y += &cq(
        "custom-cq3",
        None,
        "queueingStrategy: StrictFIFO",
        &[vec![
            cpu("spot-tainted", "20", Some("20"), None),
            cpu("spot-tainted-2", "5", Some("5"), None),
        ]],
    );
    y += &wl("new-job3", "custom-cq3", 0, 1, 1, &[("cpu", "1")]);
    let r = run_cycles(&y, 1);
    let p = pending_of(&r, "ns/new-job3");
    assert_eq!(p.reason, "NoMatchingFlavor");
    assert_eq!(
        p.message,
        "couldn't assign flavors to pod set main: untolerated taint {key val NoSchedule <nil>} in flavor spot-tainted, untolerated taint {key val2 NoSchedule <nil>} in flavor spot-tainted-2"
    );
}

/// Upstream `TestSchedule` / "prevent integer overflow when sum of requests over podsets
/// exceeds MaxInt64": the second PodSet exceeds the maximum capacity; amounts print as
/// Kubernetes quantities (`1k`, `10k`).
#[test]
fn overflow_sum_of_requests_over_pod_sets() {
    let mut y = rf("default");
    y += &cq(
        "overflow-cq",
        None,
        "",
        &[vec![cpu("default", "10000", None, None)]],
    );
    y += &wl_full(
        "vuln-wl",
        "overflow-cq",
        0,
        1,
        &[
            ("ps1", 1, None, &[("cpu", "1000000m")]),
            ("ps2", 1, None, &[("cpu", "9223372036854775000m")]),
        ],
        "",
    );
    let r = run_cycles(&y, 1);
    let p = pending_of(&r, "ns/vuln-wl");
    assert_eq!(p.reason, "ExceedsMaxQuota");
    assert_eq!(
        p.message,
        "couldn't assign flavors to pod set ps2: insufficient quota for cpu in flavor default, previously considered podsets requests (1k) + current podset request (9223372036854775) > maximum capacity (10k)"
    );
}

/// Upstream `TestSchedule` / "prevent integer overflow in ResourceValue conversion to
/// MilliValue": the request saturates at MaxInt64 milli-CPU.
#[test]
fn overflow_in_milli_value_conversion() {
    let mut y = rf("default");
    y += &cq(
        "overflow-cq",
        None,
        "",
        &[vec![cpu("default", "10", None, None)]],
    );
    y += &wl_full(
        "vuln-wl",
        "overflow-cq",
        0,
        1,
        &[("ps1", 1, None, &[("cpu", "9223372036854776")])],
        "",
    );
    let r = run_cycles(&y, 1);
    let p = pending_of(&r, "ns/vuln-wl");
    assert_eq!(p.reason, "ExceedsMaxQuota");
    assert_eq!(
        p.message,
        "couldn't assign flavors to pod set ps1: insufficient quota for cpu in flavor default, previously considered podsets requests (0) + current podset request (9223372036854775807m) > maximum capacity (10)"
    );
}

/// Upstream `TestSchedule` / "preemption while borrowing, workload waiting for preemption
/// should not block a borrowing workload in another CQ": `a` could only preempt its own
/// queue's equal-priority workload (no candidates), reserves nothing it could borrow, and `b`
/// borrows in the same cycle. Names with `_` as upstream's test spells them.
#[test]
fn preemption_while_borrowing_does_not_block_other_queue() {
    let bwc = "preemption: {reclaimWithinCohort: LowerPriority, borrowWithinCohort: {policy: LowerPriority}}";
    let mut y = rf("default");
    y += &cq(
        "cq_shared",
        Some("preemption-while-borrowing"),
        "",
        &[vec![cpu("default", "4", Some("0"), None)]],
    );
    y += &cq(
        "cq_a",
        Some("preemption-while-borrowing"),
        bwc,
        &[vec![cpu("default", "0", Some("3"), None)]],
    );
    y += &cq(
        "cq_b",
        Some("preemption-while-borrowing"),
        bwc,
        &[vec![cpu("default", "0", None, None)]],
    );
    y += &wl("a", "cq_a", 0, 1, 1, &[("cpu", "3")]);
    y += &wl("b", "cq_b", 0, 2, 1, &[("cpu", "1")]);
    y += &admitted(
        "admitted_a",
        "cq_a",
        "cq_a",
        0,
        0,
        1,
        "default",
        &[("cpu", "2", "2")],
    );
    let r = run_cycles(&y, 1);
    assert_eq!(admitted_names(&r), ["ns/b"]);
    assert_eq!(r.admitted[0].pod_sets[0].flavors["cpu"], "default");
    assert!(r.preempted.is_empty());
    let a = pending_of(&r, "ns/a");
    assert_eq!(a.reason, "WaitingForQuota");
    assert_eq!(
        a.message,
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 2 more needed"
    );
}

/// Upstream `TestSchedule` / "minimal preemptions when target queue is exhausted": the
/// preemptor borrows after preempting, so cohort candidates that only allow reclaiming
/// without borrowing are skipped; the two lowest-priority workloads of its own queue go.
#[test]
fn minimal_preemptions_when_target_queue_is_exhausted() {
    let mut y = rf("on-demand");
    y += &cq(
        "other-alpha",
        Some("other"),
        CQ_PREEMPTION,
        &[vec![cpu("on-demand", "2", None, None)]],
    );
    for name in ["other-beta", "other-gamma"] {
        y += &cq(
            name,
            Some("other"),
            "",
            &[vec![cpu("on-demand", "2", None, None)]],
        );
    }
    for (name, q, prio) in [
        ("a1", "other-alpha", -2),
        ("a2", "other-alpha", -2),
        ("a3", "other-alpha", -1),
        ("b1", "other-beta", 0),
        ("b2", "other-beta", 0),
        ("b3", "other-beta", 0),
    ] {
        y += &admitted(name, q, q, prio, 0, 1, "on-demand", &[("cpu", "1", "1")]);
    }
    y += &with_job_uid(
        wl("incoming", "other-alpha", 0, 1, 1, &[("cpu", "2")]),
        "incoming",
        "job-incoming",
    )
    .replace("uid: uid-incoming", "uid: wl-incoming");
    let r = run_cycles(&y, 1);
    assert_eq!(
        preempted_names(&r),
        [
            ("ns/a1".to_string(), "InClusterQueue".to_string()),
            ("ns/a2".to_string(), "InClusterQueue".to_string())
        ]
    );
    let p = pending_of(&r, "ns/incoming");
    assert_eq!(p.reason, "WaitingForPreemptedWorkloads");
    assert_eq!(
        p.message,
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor on-demand, 2 more needed. Pending the preemption of 2 workload(s)"
    );
    assert_eq!(
        pending_of(&r, "ns/a1").message,
        "Preempted to accommodate a workload (UID: wl-incoming, JobUID: job-incoming) due to prioritization in the ClusterQueue; preemptor path: /other/other-alpha; preemptee path: /other/other-alpha"
    );
}

/// Upstream `TestSchedule` / "workload requiring reclaimation prioritized over wl in another
/// full cq" (#3405): WL2 fits in CQ2's nominal (borrowing level 0) and is processed before
/// the older WL1, so it reclaims from the borrowing CQ3 (lower priority first); WL1 waits.
#[test]
fn reclaiming_workload_prioritized_over_workload_in_full_queue() {
    let gpu_q = |n| vec![("on-demand", vec![("gpu", n, None, None)])];
    let mut y = rf("on-demand");
    y += &cq("CQ1", Some("other"), "", &[gpu_q("10")]);
    y += &cq(
        "CQ2",
        Some("other"),
        "preemption: {reclaimWithinCohort: Any}",
        &[gpu_q("10")],
    );
    y += &cq("CQ3", Some("other"), "", &[gpu_q("0")]);
    y += &admitted(
        "Admitted-Workload-1",
        "CQ1",
        "CQ1",
        0,
        0,
        1,
        "on-demand",
        &[("gpu", "5", "5")],
    );
    y += &wl("WL1", "CQ1", 0, 1, 1, &[("gpu", "10")]);
    y += &with_job_uid(
        wl("WL2", "CQ2", 0, 2, 1, &[("gpu", "10")]),
        "WL2",
        "job-WL2",
    )
    .replace("uid: uid-WL2", "uid: wl-WL2");
    y += &admitted(
        "Admitted-Workload-2",
        "CQ3",
        "CQ3",
        0,
        0,
        1,
        "on-demand",
        &[("gpu", "5", "5")],
    );
    y += &admitted(
        "Admitted-Workload-3",
        "CQ3",
        "CQ3",
        1,
        0,
        1,
        "on-demand",
        &[("gpu", "5", "5")],
    );
    let r = run_cycles(&y, 1);
    assert!(r.admitted.is_empty());
    assert_eq!(
        preempted_names(&r),
        [(
            "ns/Admitted-Workload-2".to_string(),
            "InCohortReclamation".to_string()
        )]
    );
    assert_eq!(
        pending_of(&r, "ns/Admitted-Workload-2").message,
        "Preempted to accommodate a workload (UID: wl-WL2, JobUID: job-WL2) due to reclamation within the cohort; preemptor path: /other/CQ2; preemptee path: /other/CQ3"
    );
    let wl1 = pending_of(&r, "ns/WL1");
    assert_eq!(wl1.reason, "WaitingForQuota");
    assert_eq!(
        wl1.message,
        "couldn't assign flavors to pod set main: insufficient unused quota for gpu in flavor on-demand, 5 more needed"
    );
    let wl2 = pending_of(&r, "ns/WL2");
    assert_eq!(wl2.reason, "WaitingForPreemptedWorkloads");
    assert_eq!(
        wl2.message,
        "couldn't assign flavors to pod set main: insufficient unused quota for gpu in flavor on-demand, 5 more needed. Pending the preemption of 1 workload(s)"
    );
}

/// Upstream `TestSchedule` / "preempt when workload requests zero of a resource not defined
/// in ClusterQueue": the zero request is ignored; the path of a queue without a cohort is
/// `/<queue>`.
#[test]
fn preempt_with_zero_request_of_uncovered_resource() {
    let mut y = rf("default");
    y += &cq(
        "preempt-zero-gpu-cq",
        None,
        "preemption: {withinClusterQueue: LowerPriority}",
        &[vec![cpu("default", "4", None, None)]],
    );
    y += &with_job_uid(
        wl(
            "preemptor",
            "preempt-zero-gpu-cq",
            0,
            1,
            1,
            &[("cpu", "2"), ("example.com/gpu", "0")],
        ),
        "preemptor",
        "job-preemptor",
    )
    .replace("uid: uid-preemptor", "uid: wl-preemptor");
    y += &admitted(
        "low-priority",
        "preempt-zero-gpu-cq",
        "preempt-zero-gpu-cq",
        -1,
        0,
        1,
        "default",
        &[("cpu", "4", "4000m")],
    );
    let r = run_cycles(&y, 1);
    assert_eq!(
        preempted_names(&r),
        [("ns/low-priority".to_string(), "InClusterQueue".to_string())]
    );
    assert_eq!(
        pending_of(&r, "ns/low-priority").message,
        "Preempted to accommodate a workload (UID: wl-preemptor, JobUID: job-preemptor) due to prioritization in the ClusterQueue; preemptor path: /preempt-zero-gpu-cq; preemptee path: /preempt-zero-gpu-cq"
    );
    assert_eq!(
        pending_of(&r, "ns/preemptor").message,
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 2 more needed. Pending the preemption of 1 workload(s)"
    );
    let r = run(&y);
    assert_eq!(admitted_names(&r), ["ns/preemptor"]);
    assert_eq!(
        r.admitted[0].pod_sets[0].flavors.keys().collect::<Vec<_>>(),
        ["cpu"]
    );
}

/// Upstream `TestSchedule` / "PreemptionOverBorrowing preference: select fitting second flavor
/// over first flavor with no preemption candidates" (#13903): a flavor without candidates
/// ranks below a viable one whatever the preference.
#[test]
fn preemption_over_borrowing_skips_flavor_without_candidates() {
    let mut y = rf("on-demand") + &rf("spot");
    y += &cohort(
        "nopc-root",
        None,
        &[vec![
            cpu("on-demand", "0", None, None),
            cpu("spot", "5", None, None),
        ]],
    );
    y += &cohort("nopc-mid", Some("nopc-root"), &[]);
    y += &cq(
        "nopc-cq",
        Some("nopc-mid"),
        "preemption: {withinClusterQueue: LowerPriority}\nflavorFungibility: {whenCanBorrow: TryNextFlavor, whenCanPreempt: TryNextFlavor, preference: PreemptionOverBorrowing}",
        &[vec![
            cpu("on-demand", "5", Some("0"), None),
            cpu("spot", "0", None, None),
        ]],
    );
    y += &cq(
        "nopc-sibling",
        Some("nopc-mid"),
        "",
        &[vec![
            cpu("on-demand", "5", None, None),
            cpu("spot", "0", None, None),
        ]],
    );
    y += &admitted(
        "admitted-nopc",
        "nopc-cq",
        "nopc-cq",
        0,
        0,
        1,
        "on-demand",
        &[("cpu", "5", "5000m")],
    );
    y += &wl("pending-nopc", "nopc-cq", 0, 1, 1, &[("cpu", "5")]);
    let r = run_cycles(&y, 1);
    assert_eq!(admitted_names(&r), ["ns/pending-nopc"]);
    assert_eq!(r.admitted[0].pod_sets[0].flavors["cpu"], "spot");
    assert!(r.preempted.is_empty());
}

/// Upstream `preemption_hierarchical_test.go` / "reclaim in complex hierarchy" (GetTargets
/// there; here through flavor assignment, the queues given explicit zero quotas): only one
/// of q2's workloads goes, because after the first one cohort c23 is back within nominal.
#[test]
fn reclaim_in_complex_hierarchy() {
    let p = "preemption: {withinClusterQueue: LowerPriority, reclaimWithinCohort: Any}";
    let four = || vec![vec![cpu("default", "4", None, None)]];
    let mut y = rf("default");
    y += &cohort("r", None, &[]);
    for (c, parent) in [
        ("c11", "r"),
        ("c12", "r"),
        ("c21", "c11"),
        ("c22", "c11"),
        ("c23", "c11"),
        ("c31", "c21"),
        ("c32", "c21"),
    ] {
        y += &cohort(c, Some(parent), &four());
    }
    for (q, c) in [
        ("q1", "c12"),
        ("q2", "c23"),
        ("q3", "c22"),
        ("q4", "c32"),
        ("q5", "c31"),
    ] {
        y += &cq(q, Some(c), p, &[vec![cpu("default", "0", None, None)]]);
    }
    for (i, (q, prio, n)) in [
        ("q1", -6, "4"),
        ("q1", -5, "4"),
        ("q2", -9, "4"),
        ("q2", -10, "4"),
        ("q3", -4, "4"),
        ("q3", -3, "3"),
        ("q4", 4, "2"),
        ("q4", 2, "3"),
    ]
    .into_iter()
    .enumerate()
    {
        y += &admitted(
            &format!("admitted-borrowing-{}", i + 1),
            q,
            q,
            prio,
            0,
            1,
            "default",
            &[("cpu", n, n)],
        );
    }
    y += &with_job_uid(wl("in", "q5", -2, 1, 1, &[("cpu", "7")]), "in", "job-in")
        .replace("uid: uid-in", "uid: wl-in");
    let r = run_cycles(&y, 1);
    assert_eq!(
        preempted_names(&r),
        [
            (
                "ns/admitted-borrowing-1".to_string(),
                "InCohortReclamation".to_string()
            ),
            (
                "ns/admitted-borrowing-4".to_string(),
                "InCohortReclamation".to_string()
            )
        ]
    );
    assert_eq!(
        pending_of(&r, "ns/admitted-borrowing-4").message,
        "Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c11/c21/c31/q5; preemptee path: /r/c11/c23/q2"
    );
}

/// Upstream `preemption_hierarchical_test.go` / "respect lending limits": q (nominal 3,
/// lendingLimit 2) in cohort c (2) under r; the 4 CPUs q_borrowing holds are reclaimed for a
/// 5-CPU workload of lower priority (reclaimWithinCohort: Any).
#[test]
fn reclaim_respects_lending_limits() {
    let p = "preemption: {withinClusterQueue: LowerPriority, reclaimWithinCohort: Any}";
    let mut y = rf("default");
    y += &cohort("r", None, &[]);
    y += &cohort("c", Some("r"), &[vec![cpu("default", "2", None, None)]]);
    y += &cq(
        "q",
        Some("c"),
        p,
        &[vec![cpu("default", "3", None, Some("2"))]],
    );
    y += &cq(
        "q_borrowing",
        Some("r"),
        p,
        &[vec![cpu("default", "0", None, None)]],
    );
    y += &admitted(
        "admitted_borrowing",
        "q_borrowing",
        "q_borrowing",
        0,
        0,
        1,
        "default",
        &[("cpu", "4", "4")],
    );
    y += &with_job_uid(wl("in", "q", -2, 1, 1, &[("cpu", "5")]), "in", "job-in")
        .replace("uid: uid-in", "uid: wl-in");
    let r = run_cycles(&y, 1);
    assert_eq!(
        preempted_names(&r),
        [(
            "ns/admitted_borrowing".to_string(),
            "InCohortReclamation".to_string()
        )]
    );
    assert_eq!(
        pending_of(&r, "ns/admitted_borrowing").message,
        "Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c/q; preemptee path: /r/q_borrowing"
    );
    let r = run(&y);
    assert_eq!(admitted_names(&r), ["ns/in"]);
}

/// Upstream `flavorassigner_test.go` / "multi-podset, one fits and another fails, fitting
/// podset attempts skipped in resolveNoFitReason": the failing PodSet's reasons only, and
/// ExceedsMaxQuota (the fitting PodSet's node-selector mismatch on `two` does not count).
#[test]
fn multi_pod_set_fitting_pod_set_attempts_skipped() {
    let mut y = rf_spec("one", "{nodeLabels: {type: one}}");
    y += &rf_spec("two", "{nodeLabels: {type: two}}");
    y += &cq(
        "test-clusterqueue",
        None,
        "",
        &[vec![
            cpu("one", "2", None, None),
            cpu("two", "2", None, None),
        ]],
    );
    let mut w = wl_full(
        "w",
        "test-clusterqueue",
        0,
        1,
        &[
            ("fitting-podset", 1, None, &[("cpu", "1")]),
            ("blocking-podset", 1, None, &[("cpu", "5")]),
        ],
        "",
    );
    w = w.replacen(
        "    template:\n      spec:\n",
        "    template:\n      spec:\n        nodeSelector: {type: one}\n",
        1,
    );
    y += &w;
    let r = run_cycles(&y, 1);
    let p = pending_of(&r, "ns/w");
    assert_eq!(p.reason, "ExceedsMaxQuota");
    assert_eq!(
        p.message,
        "couldn't assign flavors to pod set blocking-podset: insufficient quota for cpu in flavor one, previously considered podsets requests (1) + current podset request (5) > maximum capacity (2), insufficient quota for cpu in flavor two, previously considered podsets requests (0) + current podset request (5) > maximum capacity (2)"
    );
}

/// Upstream `scheduler_recompute_preemption_test.go` / "flavor stickiness with
/// RecomputePreemptionTargetsUponOverlap", in a classical form: hp1's target (A) is already
/// taken by hp2, so hp1 is assigned again with A gone, but only on the flavor it was
/// nominated on (`default`); there it finds no candidates (b has a higher priority), and
/// `on-demand`, where it could preempt c, is skipped with upstream's reason.
#[test]
fn recompute_keeps_the_nominated_flavor() {
    let two = |a: &'static str, b: &'static str| {
        vec![vec![
            cpu("default", a, None, None),
            cpu("on-demand", b, None, None),
        ]]
    };
    let mut y = rf("default") + &rf("on-demand");
    y += &cohort("root", None, &[]);
    y += &cq(
        "cq-1",
        Some("root"),
        "preemption: {withinClusterQueue: LowerPriority}",
        &two("10", "10"),
    );
    y += &cq(
        "cq-2",
        Some("root"),
        "preemption: {withinClusterQueue: LowerPriority, reclaimWithinCohort: Any}",
        &two("5", "5"),
    );
    y += &admitted(
        "a",
        "cq-1",
        "cq-1",
        0,
        0,
        1,
        "default",
        &[("cpu", "10", "10")],
    );
    y += &admitted(
        "b",
        "cq-1",
        "cq-1",
        20,
        1,
        1,
        "default",
        &[("cpu", "5", "5")],
    );
    y += &admitted(
        "c",
        "cq-1",
        "cq-1",
        0,
        2,
        1,
        "on-demand",
        &[("cpu", "10", "10")],
    );
    y += &admitted(
        "d",
        "cq-1",
        "cq-1",
        20,
        2,
        1,
        "on-demand",
        &[("cpu", "5", "5")],
    );
    y += &wl("hp1", "cq-1", 11, 3, 1, &[("cpu", "10")]);
    y += &wl("hp2", "cq-2", 12, 4, 1, &[("cpu", "5")]);
    let r = run_cycles(&y, 1);
    assert_eq!(
        preempted_names(&r),
        [("ns/a".to_string(), "InCohortReclamation".to_string())]
    );
    assert_eq!(r.preempted[0].preemptor, "ns/hp2");
    let hp1 = pending_of(&r, "ns/hp1");
    assert_eq!(hp1.reason, "WaitingForQuota");
    assert_eq!(
        hp1.message,
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 5 more needed, skipping flavor on-demand as it is not found in the nomination mapping for resource cpu"
    );
    assert_eq!(
        pending_of(&r, "ns/hp2").message,
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 5 more needed, insufficient unused quota for cpu in flavor on-demand, 5 more needed. Pending the preemption of 1 workload(s)"
    );
}

/// Upstream `preemption_hierarchical_test.go` / "prefer to preempt evicted workloads": a
/// candidate already `Evicted=True` goes first, before the lower-priority borrower elsewhere.
#[test]
fn prefer_to_preempt_evicted_workloads() {
    let zero = || vec![vec![cpu("default", "0", None, None)]];
    let mut y = rf("default");
    y += &cohort("r", None, &[]);
    y += &cohort("c", Some("r"), &[vec![cpu("default", "2", None, None)]]);
    y += &cq(
        "q",
        Some("c"),
        "preemption: {withinClusterQueue: LowerPriority, reclaimWithinCohort: Any, borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: 0}}",
        &zero(),
    );
    let p = "preemption: {withinClusterQueue: LowerPriority, reclaimWithinCohort: Any}";
    y += &cq("q_borrowing", Some("r"), p, &zero());
    y += &cq("q_same_cohort", Some("c"), p, &zero());
    y += &admitted(
        "admitted_borrowing",
        "q_borrowing",
        "q_borrowing",
        -10,
        0,
        1,
        "default",
        &[("cpu", "1", "1")],
    );
    y += &admitted(
        "evicted_same_cohort",
        "q_same_cohort",
        "q_same_cohort",
        -1,
        0,
        1,
        "default",
        &[("cpu", "1", "1")],
    )
    .replace(
        "  conditions:\n",
        "  conditions:\n  - {type: Evicted, status: \"True\", lastTransitionTime: \"2026-01-01T01:00:00Z\"}\n",
    );
    y += &wl("in", "q", 0, 1, 1, &[("cpu", "1")]);
    let r = run_cycles(&y, 1);
    assert_eq!(
        r.preempted
            .iter()
            .map(|p| p.workload.as_str())
            .collect::<Vec<_>>(),
        ["ns/evicted_same_cohort"]
    );
}

/// Upstream `TestSchedule` / "multiple preemptions skip preemption when shared limited
/// resource": both preemptors borrow the bank's single CPU; the second no longer fits once
/// the first counted its usage. The queues combine `borrowWithinCohort` with
/// `reclaimWithinCohort: Never` as upstream's test does (a warning here).
#[test]
fn multiple_preemptions_skip_when_shared_limited_resource() {
    let p = "preemption: {withinClusterQueue: LowerPriority, borrowWithinCohort: {policy: LowerPriority}}";
    let mut y = rf("default");
    y += &cq(
        "other-alpha",
        Some("other"),
        p,
        &[vec![cpu("default", "2", None, None)]],
    );
    y += &cq(
        "other-beta",
        Some("other"),
        p,
        &[vec![cpu("default", "2", None, None)]],
    );
    y += &cq(
        "resource-bank",
        Some("other"),
        "",
        &[vec![cpu("default", "1", None, None)]],
    );
    y += &admitted(
        "a1",
        "other-alpha",
        "other-alpha",
        0,
        0,
        1,
        "default",
        &[("cpu", "2", "2")],
    );
    y += &admitted(
        "b1",
        "other-beta",
        "other-beta",
        0,
        0,
        1,
        "default",
        &[("cpu", "2", "2")],
    );
    y += &with_job_uid(
        wl("preemptor", "other-alpha", 100, 1, 1, &[("cpu", "3")]),
        "preemptor",
        "job-preemptor",
    )
    .replace("uid: uid-preemptor", "uid: wl-preemptor");
    y += &wl(
        "pretending-preemptor",
        "other-beta",
        99,
        1,
        1,
        &[("cpu", "3")],
    );
    let w = world(&y);
    assert!(w.warnings.iter().any(|x| {
        x.message
            .contains("reclaimWithinCohort=Never and borrowWithinCohort")
    }));
    let r = crate::common::schedule(&w, Some(1));
    assert_eq!(
        preempted_names(&r),
        [("ns/a1".to_string(), "InClusterQueue".to_string())]
    );
    assert_eq!(
        pending_of(&r, "ns/a1").message,
        "Preempted to accommodate a workload (UID: wl-preemptor, JobUID: job-preemptor) due to prioritization in the ClusterQueue; preemptor path: /other/other-alpha; preemptee path: /other/other-alpha"
    );
    assert_eq!(
        pending_of(&r, "ns/preemptor").message,
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 2 more needed. Pending the preemption of 1 workload(s)"
    );
    let p = pending_of(&r, "ns/pretending-preemptor");
    assert_eq!(
        (p.reason.as_str(), p.message.as_str()),
        (
            "WaitingForQuota",
            "Workload no longer fits after processing another workload"
        )
    );
}
