//! The Configuration's `featureGates` (kubernetes-sigs/kueue pkg/features/kube_features.go):
//! each modelled gate at its non-default value, on cases of upstream's own tests where they
//! exist (kubernetes-sigs/kueue pkg/scheduler/scheduler_test.go `TestEntryOrdering`, the
//! integration suites' gate contexts) and otherwise on this crate's scenario for the gate's
//! default with the expected outcome worked out by hand from upstream's gated branch.

use gpuquota_cohort::ScheduleReport;
use gpuquota_fairshare::config::settings_from_configuration;

use crate::common::*;

/// A Configuration with `featureGates: {gates}` (and `extra` top-level YAML).
fn config(gates: &str, extra: &str) -> String {
    format!(
        "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfeatureGates: {{{gates}}}\n{extra}---\n"
    )
}

fn order(r: &ScheduleReport) -> Vec<(String, u32)> {
    r.admitted
        .iter()
        .map(|a| (a.workload.clone(), a.cycle))
        .collect()
}

fn victims(r: &ScheduleReport) -> Vec<(String, String, String, u32)> {
    r.preempted
        .iter()
        .map(|p| {
            (
                p.workload.clone(),
                p.preemptor.clone(),
                p.reason.clone(),
                p.cycle,
            )
        })
        .collect()
}

fn v(w: &str, by: &str, reason: &str, cycle: u32) -> (String, String, String, u32) {
    (w.into(), by.into(), reason.into(), cycle)
}

fn run_fair(yaml: &str) -> ScheduleReport {
    let model = gpuquota_model::import_str("test.yaml", yaml)
        .expect("valid YAML")
        .model;
    let world =
        gpuquota_cohort::testkit::build_unvalidated(&model).unwrap_or_else(|e| panic!("{e}"));
    let settings = settings_from_configuration(model.configuration.as_ref(), true).unwrap();
    crate::common::fair_schedule(&world, &model, settings, None).unwrap()
}

// --- reading the gates -----------------------------------------------------------------------

/// Modelled gates are honoured silently, gates without a decision effect are accepted
/// silently, decision gates the engine does not model and unknown names are warnings naming
/// `featureGates.<name>`, and a value that is not a boolean is an error naming the field.
#[test]
fn gates_are_read_classified_and_checked() {
    let mut y = config(
        "PrioritySortingWithinCohort: false, PrioritizePreemptorWorkloads: true, \
         MetricsForCohorts: false, MultiKueue: false, TASCacheTopologyTree: false, \
         FlavorFungibility: false, PriorityBoost: true, NoSuchGate: true",
        "",
    );
    y += &rf("f");
    y += &cq("q", None, "", &[vec![gpu("f", "2")]]);
    let w = world(&y);
    let gates = w.feature_gates;
    assert!(!gates.priority_sorting_within_cohort);
    assert!(gates.prioritize_preemptor_workloads);
    assert!(gates.fair_sharing_preempt_within_nominal);
    let msgs: Vec<String> = w.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        msgs,
        [
            "Configuration \"\": featureGates.FlavorFungibility: not modelled by the admission engine; ignored (the run is as if it were unset)",
            "Configuration \"\": featureGates.NoSuchGate: unknown feature gate; ignored (Kueue refuses to start with it)",
            "Configuration \"\": featureGates.PriorityBoost: not modelled by the admission engine; ignored (the run is as if it were unset)",
        ]
    );
    // defaults without a Configuration
    let mut y = rf("f");
    y += &cq("q", None, "", &[vec![gpu("f", "2")]]);
    assert_eq!(
        world(&y).feature_gates,
        gpuquota_cohort::config::FeatureGates::default()
    );
    // a value that is not a boolean
    let mut y = config("PartialAdmission: maybe, ReclaimablePods: 1", "");
    y += &rf("f");
    let imported = gpuquota_model::import_str("test.yaml", &y).expect("valid YAML");
    let e = gpuquota_cohort::testkit::build_unvalidated(&imported.model).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("featureGates.PartialAdmission: Invalid value: \"maybe\": must be a boolean")
            && text.contains("featureGates.ReclaimablePods: Invalid value: 1: must be a boolean"),
        "{text}"
    );
}

// --- PrioritySortingWithinCohort ---------------------------------------------------------------

/// Five heads, one per ClusterQueue without a cohort (nothing borrows), every one fitting:
/// the cycle admits them in the iterator's order. kubernetes-sigs/kueue
/// pkg/scheduler/scheduler_test.go `TestEntryOrdering`, input
/// `inputForOrderingPreemptedWorkloads` (UIDs in input order: upstream's sort keeps the input
/// order of full ties).
fn preempted_workloads_input() -> String {
    /// Name, priority, creation second, `Preempted` condition (reason, second).
    type Item<'a> = (&'a str, i32, u32, Option<(&'a str, u32)>);
    let mut y = rf("f");
    let items: [Item<'_>; 5] = [
        (
            "old-mid-recently-preempted-in-queue",
            1,
            0,
            Some(("InClusterQueue", 5)),
        ),
        (
            "old-mid-recently-reclaimed-while-borrowing",
            1,
            0,
            Some(("InCohortReclaimWhileBorrowing", 6)),
        ),
        (
            "old-mid-more-recently-reclaimed-while-borrowing",
            1,
            0,
            Some(("InCohortReclaimWhileBorrowing", 7)),
        ),
        ("old-mid-not-preempted-yet", 1, 1, None),
        ("preemptor", 2, 7, None),
    ];
    for (i, (name, prio, created, preempted)) in items.iter().enumerate() {
        let q = format!("q{i}");
        y += &cq(&q, None, "", &[vec![gpu("f", "1")]]);
        let mut w = wl(name, &q, *prio, *created, 1, &[("nvidia.com/gpu", "1")]);
        w = w.replace(&format!("uid: uid-{name}"), &format!("uid: uid-{i}"));
        if let Some((reason, at)) = preempted {
            w.truncate(w.len() - 4);
            w += &format!(
                "status:\n  conditions:\n  - type: Preempted\n    status: \"True\"\n    reason: {reason}\n    lastTransitionTime: \"2026-01-01T00:00:{at:02}Z\"\n---\n"
            );
        }
        y += &w;
    }
    y
}

/// `TestEntryOrdering`, "Some workloads are preempted; Priority sorting is disabled": no
/// priority, and the workloads preempted with `InCohortReclaimWhileBorrowing` queue 1 ms after
/// their preemption (pkg/workload/workload.go `GetQueueOrderTimestamp`); "... is enabled":
/// priority first, creation time next.
#[test]
fn priority_sorting_within_cohort_off_orders_by_queue_time() {
    let want = |names: [&str; 5]| -> Vec<(String, u32)> {
        names.iter().map(|n| (format!("ns/{n}"), 1)).collect()
    };
    let off =
        run(&(config("PrioritySortingWithinCohort: false", "") + &preempted_workloads_input()));
    assert_eq!(
        order(&off),
        want([
            "old-mid-recently-preempted-in-queue",
            "old-mid-not-preempted-yet",
            "old-mid-recently-reclaimed-while-borrowing",
            "preemptor",
            "old-mid-more-recently-reclaimed-while-borrowing",
        ])
    );
    let on = run(&(config("PrioritySortingWithinCohort: true", "") + &preempted_workloads_input()));
    assert_eq!(
        order(&on),
        want([
            "preemptor",
            "old-mid-recently-preempted-in-queue",
            "old-mid-recently-reclaimed-while-borrowing",
            "old-mid-more-recently-reclaimed-while-borrowing",
            "old-mid-not-preempted-yet",
        ])
    );
    // the default is on
    assert_eq!(order(&run(&preempted_workloads_input())), order(&on));
}

/// `TestEntryOrdering`, "Priority sorting is disabled ...", its non-borrowing heads `old`
/// (created at 1 s), `new` (3 s) and `new_high_pri` (4 s, priority 1) and borrowing heads
/// `old_borrowing` (0 s), `high_pri_borrowing` (3 s, priority 1), `new_borrowing` (3 s):
/// borrowing level first, then queue time only; with the gate on, priority before time.
#[test]
fn priority_sorting_within_cohort_off_keeps_borrowing_first() {
    let mut y = rf("f");
    // six ClusterQueues of one cohort: three own a GPU, three own none and borrow from `lender`
    let items: [(&str, i32, u32, &str); 6] = [
        ("old_borrowing", 0, 0, "0"),
        ("old", 0, 1, "1"),
        ("new", 0, 3, "1"),
        ("high_pri_borrowing", 1, 3, "0"),
        ("new_high_pri", 1, 4, "1"),
        ("new_borrowing", 0, 3, "0"),
    ];
    for (i, (name, prio, created, nominal)) in items.iter().enumerate() {
        let q = format!("q{i}");
        y += &cq(&q, Some("co"), "", &[vec![gpu("f", nominal)]]);
        let w = wl(name, &q, *prio, *created, 1, &[("nvidia.com/gpu", "1")]);
        y += &w.replace(&format!("uid: uid-{name}"), &format!("uid: uid-{i}"));
    }
    y += &cq("lender", Some("co"), "", &[vec![gpu("f", "3")]]);
    let want = |names: [&str; 6]| -> Vec<(String, u32)> {
        names.iter().map(|n| (format!("ns/{n}"), 1)).collect()
    };
    let off = run(&(config("PrioritySortingWithinCohort: false", "") + &y));
    assert_eq!(
        order(&off),
        want([
            "old",
            "new",
            "new_high_pri",
            "old_borrowing",
            "high_pri_borrowing",
            "new_borrowing",
        ])
    );
    let on = run(&y);
    assert_eq!(
        order(&on),
        want([
            "new_high_pri",
            "old",
            "new",
            "high_pri_borrowing",
            "old_borrowing",
            "new_borrowing",
        ])
    );
}

/// kubernetes-sigs/kueue test/integration/singlecluster/scheduler/preemption_test.go, context
/// "When borrowWithinCohort is used and PrioritySortingWithinCohort disabled", "should allow
/// preempting workloads while borrowing" (priorities mid 0, high 1, very high 2): `b2-high`
/// borrows and preempts `a-low` (reason `InCohortReclaimWhileBorrowing`); `a-low` then queues
/// 1 ms after its preemption, after `b2-high`, so `b2-high` is admitted and `a-low` stays
/// pending, with no loop. With the creation time instead (`a-low` is older and, without
/// priority sorting, would be readmitted first) the two would take turns.
#[test]
fn priority_sorting_within_cohort_off_requeues_reclaimed_workloads_last() {
    let mut y = config("PrioritySortingWithinCohort: false", "");
    y += &rf("default");
    let ff = "flavorFungibility: {whenCanBorrow: MayStopSearch, whenCanPreempt: MayStopSearch}";
    y += &cq(
        "a-cq",
        Some("all"),
        &format!(
            "{ff}\npreemption: {{reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}}"
        ),
        &[vec![cpu("default", "0", Some("10"), None)]],
    );
    y += &cq(
        "b-cq",
        Some("all"),
        &format!(
            "{ff}\npreemption: {{reclaimWithinCohort: Any, withinClusterQueue: LowerPriority, borrowWithinCohort: {{policy: LowerPriority, maxPriorityThreshold: 2}}}}"
        ),
        &[vec![cpu("default", "5", Some("5"), None)]],
    );
    y += &cq(
        "c-cq",
        Some("all"),
        &format!(
            "{ff}\npreemption: {{reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}}"
        ),
        &[vec![cpu("default", "5", None, None)]],
    );
    y += &admitted(
        "a-low",
        "a-cq",
        "a-cq",
        0,
        0,
        1,
        "default",
        &[("cpu", "4", "4")],
    );
    y += &admitted(
        "b1-high",
        "b-cq",
        "b-cq",
        1,
        1,
        1,
        "default",
        &[("cpu", "4", "4")],
    );
    y += &wl("b2-high", "b-cq", 1, 2, 1, &[("cpu", "4")]);
    let r = run(&y);
    assert_eq!(
        victims(&r),
        [v(
            "ns/a-low",
            "ns/b2-high",
            "InCohortReclaimWhileBorrowing",
            1
        )]
    );
    assert_eq!(order(&r), [("ns/b2-high".to_string(), 2)]);
    assert_eq!(pending_of(&r, "ns/a-low").cluster_queue, "a-cq");
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

// --- PrioritizePreemptorWorkloads ------------------------------------------------------------

/// The loop that upstream's alpha gate exists to break (kueue PR #13797; the ordering of
/// `TestEntryOrdering` "Some workloads are preemptors; PrioritizePreemptorWorkloads is
/// enabled": a preemptor that borrows before a non-preemptor that does not). In
/// [`classical_loop_yaml`] the victim `w0` (borrowing level 1) is readmitted ahead of its
/// preemptor `w1` (level 2) after every eviction at the default gates; with the gate on, `w1`
/// waits for its preemption as a preemptor, is ordered first in cycle 3 and admitted there,
/// and `w0` stays pending: one preemption, no loop warning.
#[test]
fn prioritize_preemptor_workloads_breaks_the_classical_loop() {
    let y = config("PrioritizePreemptorWorkloads: true", "") + &classical_loop_yaml();
    let r = run(&y);
    // the report lists the admissions that stand at the end: w0's of cycle 1 was preempted
    assert_eq!(order(&r), [("ns/w1".to_string(), 3)]);
    assert_eq!(
        victims(&r),
        [v("ns/w0", "ns/w1", "InCohortReclaimWhileBorrowing", 2)]
    );
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(pending_of(&r, "ns/w0").cluster_queue, "q2");
    // the gate off (its default) loops
    let off = run(&(config("PrioritizePreemptorWorkloads: false", "") + &classical_loop_yaml()));
    assert!(off.preempted.len() > 10);
}

/// Under fair sharing (pkg/scheduler/fair_sharing_iterator.go: the comparer ranks a head
/// waiting for its preemptions first): the reliability tests' fair-sharing loop. `w0` (q1)
/// and `w2` (q0) tie on share, so at the default gates the older `w0` is readmitted after
/// each preemption by `w2`. With the gate on, `w2` (a preemptor since cycle 2) wins cycle 3's
/// tournament and is admitted; `w0` then finds no candidate the strategies allow (removing
/// `w2` or `w1` leaves q0 at share 0, below q1's, and the shares tie for
/// `LessThanInitialShare`) and stays pending.
#[test]
fn prioritize_preemptor_workloads_breaks_the_fair_sharing_loop() {
    let mut y = config("PrioritizePreemptorWorkloads: true", FS);
    y += &rf("f");
    let pol = "preemption: {reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}";
    y += &cq("q0", Some("co"), pol, &[vec![gpu("f", "3")]]);
    y += &cq("q1", Some("co"), pol, &[vec![gpu("f", "2")]]);
    y += &wl("w0", "q1", 2, 0, 1, &[("nvidia.com/gpu", "3")]);
    y += &admitted(
        "w1",
        "q0",
        "q0",
        0,
        1,
        1,
        "f",
        &[("nvidia.com/gpu", "1", "1")],
    );
    y += &wl("w2", "q0", 2, 2, 1, &[("nvidia.com/gpu", "3")]);
    let r = run_fair(&y);
    assert_eq!(order(&r), [("ns/w2".to_string(), 3)]);
    // cycle 2: w1 (own queue) brings q0 within nominal so that the strategy takes w0; w1 is
    // then not needed for the fit and is filled back
    assert_eq!(victims(&r), [v("ns/w0", "ns/w2", "InCohortFairSharing", 2)]);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(pending_of(&r, "ns/w0").cluster_queue, "q1");
    let off = run_fair(&y.replace("PrioritizePreemptorWorkloads: true", ""));
    assert!(off.preempted.len() > 10);
}

// --- RecomputeAssignmentUponPreemptionTargetsOverlap ------------------------------------------

/// The scenario of the cycle tests' `overlapping_preemption_targets` with the gate off
/// (kubernetes-sigs/kueue pkg/scheduler/scheduler.go `updateAssignmentIfNeeded`: no
/// recomputation; scheduler_recompute_preemption_test.go's gate-off case): `pb`, whose target
/// `hog` is already `pa`'s, is skipped with upstream's overlap message instead of being
/// assigned again (DeferredFit); both fit once `hog` is gone, in cycle 2.
#[test]
fn recompute_upon_overlap_off_skips_the_entry() {
    let mut y = config("RecomputeAssignmentUponPreemptionTargetsOverlap: false", "");
    y += &rf("f");
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
        victims(&r1),
        [v("ns/hog", "ns/pa", "InCohortReclamation", 1)]
    );
    let pb = pending_of(&r1, "ns/pb");
    assert_eq!(
        (pb.reason.as_str(), pb.message.as_str()),
        (
            "WaitingForQuota",
            "Workload has overlapping preemption targets with another workload"
        )
    );
    let r = run(&y);
    assert_eq!(
        order(&r),
        [("ns/pa".to_string(), 2), ("ns/pb".to_string(), 2)]
    );
}

// --- FlavorFungibilityPreserveScanProgress ----------------------------------------------------

/// The cycle tests' `skipped_entry_resumes_flavor_scan_next_cycle` with the gate off
/// (pkg/scheduler/scheduler.go `markSkipped` clears the assignment): `wb`, skipped in cycle 1
/// on `f1`, scans from `f1` again in cycle 2, where PreemptionOverBorrowing prefers reclaiming
/// `x`'s borrowed GPU over borrowing on `f2`; `wb` is admitted on `f1` in cycle 3.
#[test]
fn preserve_scan_progress_off_rescans_from_the_first_flavor() {
    let two = |a: &'static str, b: &'static str| {
        vec![vec![
            ("f1", vec![("nvidia.com/gpu", a, None, None)]),
            ("f2", vec![("nvidia.com/gpu", b, None, None)]),
        ]]
    };
    let mut y = config("FlavorFungibilityPreserveScanProgress: false", "");
    y += &(rf("f1") + &rf("f2"));
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
    let r = run(&y);
    assert_eq!(victims(&r), [v("ns/x", "ns/wb", "InCohortReclamation", 2)]);
    let wb = r
        .admitted
        .iter()
        .find(|a| a.workload == "ns/wb")
        .expect("wb");
    assert_eq!(
        (wb.cycle, wb.pod_sets[0].flavors["nvidia.com/gpu"].as_str()),
        (3, "f1")
    );
}

// --- PartialAdmission, ReclaimablePods -------------------------------------------------------

/// PartialAdmission off (pkg/scheduler/scheduler.go: fewer pods are tried only under the
/// gate): 4 pods with `minCount: 2` on 2 GPUs are admitted with 2 pods by default and stay
/// pending with the gate off.
#[test]
fn partial_admission_off_admits_whole_workloads_only() {
    let mut y = rf("f");
    y += &cq("q", None, "", &[vec![gpu("f", "2")]]);
    y += &wl_full(
        "w",
        "q",
        0,
        0,
        &[("main", 4, Some(2), &[("nvidia.com/gpu", "1")])],
        "",
    );
    let on = run(&y);
    assert_eq!(on.admitted[0].pod_sets[0].count, 2);
    let off = run(&(config("PartialAdmission: false", "") + &y));
    assert!(off.admitted.is_empty());
    assert_eq!(pending_of(&off, "ns/w").reason, "ExceedsMaxQuota");
}

/// ReclaimablePods off (pkg/workload/workload.go: the reclaimable counts are subtracted only
/// under the gate): the reliability test's 5 pods of which 2 are reclaimable need 5 CPUs, more
/// than the ClusterQueue's 3.
#[test]
fn reclaimable_pods_off_counts_every_pod() {
    let mut y = rf("f");
    y += &cq("q", None, "", &[vec![cpu("f", "3", None, None)]]);
    let mut w = wl("w", "q", 0, 0, 5, &[("cpu", "1")]);
    w.truncate(w.len() - 4);
    w += "status:\n  reclaimablePods:\n  - name: main\n    count: 2\n---\n";
    y += &w;
    assert_eq!(run(&y).admitted[0].pod_sets[0].count, 3);
    let off = run(&(config("ReclaimablePods: false", "") + &y));
    assert_eq!(pending_of(&off, "ns/w").reason, "ExceedsMaxQuota");
}

// --- fair-sharing gates ----------------------------------------------------------------------

const FS: &str =
    "fairSharing:\n  preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]\n";

/// FairSharingPrioritizeNonBorrowing off (pkg/scheduler/fair_sharing_iterator.go, the
/// comparer's non-borrowing step is gated): the fair-sharing tests'
/// `tournament_prefers_not_borrowing_on_requested` decided by DRS alone: qy's head (DRS 250)
/// beats qx's (qx borrows 8 CPUs, DRS 400), takes 2 of the 4 free GPUs, and qx's head (3 GPUs)
/// no longer fits.
#[test]
fn prioritize_non_borrowing_off_orders_by_share_alone() {
    let mut y = config("FairSharingPrioritizeNonBorrowing: false", FS);
    y += &rf("f");
    let res = |c: &'static str, g: &'static str| {
        (
            "f",
            vec![("cpu", c, None, None), ("nvidia.com/gpu", g, None, None)],
        )
    };
    y += &cq("qx", Some("org"), "", &[vec![res("10", "4")]]);
    y += &cq("qy", Some("org"), "", &[vec![res("10", "4")]]);
    y += &admitted("x-run", "qx", "qx", 0, 1, 1, "f", &[("cpu", "18", "18")]);
    y += &admitted(
        "y-run",
        "qy",
        "qy",
        0,
        2,
        1,
        "f",
        &[("nvidia.com/gpu", "4", "4")],
    );
    y += &wl("y-head", "qy", 0, 10, 1, &[("nvidia.com/gpu", "2")]);
    y += &wl("x-head", "qx", 0, 20, 1, &[("nvidia.com/gpu", "3")]);
    let r = run_fair(&y);
    assert_eq!(order(&r)[0], ("ns/y-head".into(), 1));
    assert!(!r.admitted.iter().any(|a| a.workload == "ns/x-head"));
    // the gate on (default): qx's head first
    let on = run_fair(&y.replace("FairSharingPrioritizeNonBorrowing: false", ""));
    assert_eq!(order(&on)[0], ("ns/x-head".into(), 1));
}

/// FairSharingPreemptWithinNominal off (pkg/scheduler/preemption/preemption.go
/// `fairPreemptions`: without the gate a preemptor within nominal goes through the
/// strategies): the fair-sharing tests' `within_nominal_reclaims_from_highest_share`. b's head
/// (2 GPUs, within b's nominal: share 0) visits a first (share 167); removing a2 leaves a at
/// share 0, and `LessThanOrEqualToFinalShare` holds (0 ≤ 0): a2 is preempted with reason
/// `InCohortFairSharing` instead of `InCohortReclamation`.
#[test]
fn preempt_within_nominal_off_goes_through_the_strategies() {
    let mut y = config("FairSharingPreemptWithinNominal: false", FS);
    y += &rf("g");
    for q in ["a", "b", "c"] {
        y += &cq(
            q,
            Some("org"),
            "preemption: {reclaimWithinCohort: Any}",
            &[vec![gpu("g", "4")]],
        );
    }
    y += &admitted(
        "a1",
        "a",
        "a",
        5,
        1,
        1,
        "g",
        &[("nvidia.com/gpu", "3", "3")],
    );
    y += &admitted(
        "a2",
        "a",
        "a",
        5,
        2,
        1,
        "g",
        &[("nvidia.com/gpu", "3", "3")],
    );
    y += &admitted(
        "c1",
        "c",
        "c",
        0,
        3,
        1,
        "g",
        &[("nvidia.com/gpu", "5", "5")],
    );
    y += &wl("b-head", "b", 5, 10, 1, &[("nvidia.com/gpu", "2")]);
    let r = run_fair(&y);
    assert_eq!(
        victims(&r),
        [v("ns/a2", "ns/b-head", "InCohortFairSharing", 1)]
    );
    assert_eq!(order(&r), [("ns/b-head".to_string(), 2)]);
    let on = run_fair(&y.replace("FairSharingPreemptWithinNominal: false", ""));
    assert_eq!(
        victims(&on),
        [v("ns/a2", "ns/b-head", "InCohortReclamation", 1)]
    );
}

// --- AdmissionFairSharing, QuotaCheckStrategy ---------------------------------------------------

/// Runs the engine as the command line does: [`gpuquota_cohort::Input::from_model`] reads the
/// Configuration's fair-sharing settings and gates.
fn run_from_model(yaml: &str) -> ScheduleReport {
    let model = gpuquota_model::import_str("test.yaml", yaml)
        .expect("valid YAML")
        .model;
    let options = gpuquota_cohort::Options::default()
        .with_validation(gpuquota_model::validate::Validation::EngineOnly);
    let input =
        gpuquota_cohort::Input::from_model(&model, &options).unwrap_or_else(|e| panic!("{e}"));
    gpuquota_cohort::run(&input)
}

/// AdmissionFairSharing off (upstream reads `admissionFairSharing` only under the gate): the
/// fair-sharing tests' `admission_fair_sharing_entry_penalty_rotates_local_queues` input, with
/// the gate on, admits t1 and then `other`'s o1 (the entry penalty charged to `team`); with
/// it off the ClusterQueue's heap order admits t1 and t2.
#[test]
fn admission_fair_sharing_off_ignores_the_admission_scope() {
    let mut y = rf("f");
    y += &cq(
        "team",
        None,
        "admissionScope: {admissionMode: UsageBasedAdmissionFairSharing}",
        &[vec![cpu("f", "2", None, None)]],
    );
    y += "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: other, namespace: ns}\nspec: {clusterQueue: team}\n---\n";
    y += &wl("t1", "team", 0, 1, 1, &[("cpu", "1")]);
    y += &wl("t2", "team", 0, 2, 1, &[("cpu", "1")]);
    y += &wl("o1", "other", 0, 3, 1, &[("cpu", "1")]);
    y += &wl("o2", "other", 0, 4, 1, &[("cpu", "1")]);
    let afs = "admissionFairSharing:\n  usageHalfLifeTime: 10m\n  usageSamplingInterval: 5m\n";
    let on = run_from_model(&(config("", afs) + &y));
    assert_eq!(
        order(&on),
        [("ns/t1".to_string(), 1), ("ns/o1".to_string(), 2)]
    );
    let off = run_from_model(&(config("AdmissionFairSharing: false", afs) + &y));
    assert_eq!(
        order(&off),
        [("ns/t1".to_string(), 1), ("ns/t2".to_string(), 2)]
    );
}

/// QuotaCheckStrategy off: Kueue does not read `resources.quotaCheckStrategy`, so
/// `IgnoreUndeclared` (not modelled, a warning with the gate on) changes nothing and is not
/// warned about.
#[test]
fn quota_check_strategy_off_silences_ignore_undeclared() {
    let mut body = rf("f");
    body += &cq("q", None, "", &[vec![gpu("f", "2")]]);
    let res = "resources: {quotaCheckStrategy: IgnoreUndeclared}\n";
    let on = world(&(config("", res) + &body));
    assert_eq!(
        on.warnings
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        [
            "Configuration \"\": resources.quotaCheckStrategy: IgnoreUndeclared is not modelled; resources a ClusterQueue does not cover are checked as with BlockUndeclared"
        ]
    );
    let off = world(&(config("QuotaCheckStrategy: false", res) + &body));
    assert!(off.warnings.is_empty(), "{:?}", off.warnings);
}
