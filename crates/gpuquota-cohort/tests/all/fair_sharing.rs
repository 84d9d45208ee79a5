//! Fair sharing (the tournament, fair-sharing preemption, DRS, rule
//! 17) through the engine's cycle: hand-computed admissions, victims and reasons. Each test
//! names the upstream behaviour it pins; most also show that the classical engine decides
//! differently on the same input.

use gpuquota_cohort::ScheduleReport;
use gpuquota_fairshare::config::settings_from_configuration;

use crate::common::*;

const ANY: &str = "preemption: {reclaimWithinCohort: Any}";
const FS_DEFAULT: &str = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing:\n  preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]\n---\n";
const FS_S2A: &str = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing:\n  preemptionStrategies: [LessThanOrEqualToFinalShare]\n---\n";

/// Runs with fair sharing (strategies from the Configuration in `yaml`, if any).
fn run_fair(yaml: &str) -> ScheduleReport {
    let model = gpuquota_model::import_str("test.yaml", yaml)
        .expect("valid YAML")
        .model;
    let world =
        gpuquota_cohort::testkit::build_unvalidated(&model).unwrap_or_else(|e| panic!("{e}"));
    let settings = settings_from_configuration(model.configuration.as_ref(), true).unwrap();
    crate::common::fair_schedule(&world, &model, settings, None).unwrap()
}

fn admitted_in_order(r: &ScheduleReport) -> Vec<(String, u32)> {
    r.admitted
        .iter()
        .map(|a| (a.workload.clone(), a.cycle))
        .collect()
}

fn victims(r: &ScheduleReport) -> Vec<(String, String, String)> {
    r.preempted
        .iter()
        .map(|p| (p.workload.clone(), p.preemptor.clone(), p.reason.clone()))
        .collect()
}

fn s(a: &str, b: &str, c: &str) -> (String, String, String) {
    (a.into(), b.into(), c.into())
}

/// Three ClusterQueues of 4 GPUs in cohort `org` (12 in all, lendable 12 at `org`).
fn three_queues(extra: &str) -> String {
    let mut y = rf("g");
    for q in ["a", "b", "c"] {
        y += &cq(q, Some("org"), extra, &[vec![gpu("g", "4")]]);
    }
    y
}

/// Tournament, DRS step (`CompareDRS`): with both heads borrowing, the one whose queue ends with
/// the lower DRS is processed first. a runs 6 and its head asks 2 (DRS ⌈4·1000/12⌉ = 334), b runs
/// 4 and its head asks 2 (DRS 2·1000/12 ≈ 167); 2 GPUs are free. The classical order
/// (same borrowing level and priority, a's head is older) would admit a's head instead.
#[test]
fn tournament_lower_share_first() {
    let mut y = three_queues("");
    y += &admitted(
        "a1",
        "a",
        "a",
        0,
        1,
        1,
        "g",
        &[("nvidia.com/gpu", "6", "6")],
    );
    y += &admitted(
        "b1",
        "b",
        "b",
        0,
        2,
        1,
        "g",
        &[("nvidia.com/gpu", "4", "4")],
    );
    y += &wl("a-head", "a", 0, 10, 1, &[("nvidia.com/gpu", "2")]);
    y += &wl("b-head", "b", 0, 20, 1, &[("nvidia.com/gpu", "2")]);
    let r = run_fair(&y);
    assert_eq!(admitted_in_order(&r), vec![("ns/b-head".into(), 1)]);
    assert!(r.preempted.is_empty());
    assert_eq!(pending_of(&r, "ns/a-head").reason, "WaitingForQuota");
    // classical: borrowing level, priority, then the older head
    let c = run(&y);
    assert_eq!(admitted_names(&c), vec!["ns/a-head"]);
}

/// `fair_sharing_iterator.go` `pop`: every pop re-runs the tournament over the
/// snapshot as the earlier entries left it. Cohorts `left` (l1, l2: 2 GPUs each) and `right`
/// (r1: 4) under `root` (2 GPUs of its own, the only free ones); each head asks 1. Pop 1:
/// l1's head (ties broken by time at both levels); left's share then rises to 200 with l2's
/// head against right's 100, so pop 2 is r1's head, and l2's head no longer fits. The
/// classical order (all at borrowing level 2, same priority) takes the two older left heads.
#[test]
fn tournament_sees_earlier_admissions() {
    let mut y = rf("g");
    y += &cohort("root", None, &[vec![gpu("g", "2")]]);
    y += &cohort("left", Some("root"), &[]);
    y += &cohort("right", Some("root"), &[]);
    y += &cq("l1", Some("left"), "", &[vec![gpu("g", "2")]]);
    y += &cq("l2", Some("left"), "", &[vec![gpu("g", "2")]]);
    y += &cq("r1", Some("right"), "", &[vec![gpu("g", "4")]]);
    y += &admitted(
        "l1-run",
        "l1",
        "l1",
        0,
        1,
        1,
        "g",
        &[("nvidia.com/gpu", "2", "2")],
    );
    y += &admitted(
        "l2-run",
        "l2",
        "l2",
        0,
        2,
        1,
        "g",
        &[("nvidia.com/gpu", "2", "2")],
    );
    y += &admitted(
        "r1-run",
        "r1",
        "r1",
        0,
        3,
        1,
        "g",
        &[("nvidia.com/gpu", "4", "4")],
    );
    y += &wl("l1-head", "l1", 0, 10, 1, &[("nvidia.com/gpu", "1")]);
    y += &wl("l2-head", "l2", 0, 11, 1, &[("nvidia.com/gpu", "1")]);
    y += &wl("r1-head", "r1", 0, 12, 1, &[("nvidia.com/gpu", "1")]);
    let r = run_fair(&y);
    assert_eq!(
        admitted_in_order(&r),
        vec![("ns/l1-head".into(), 1), ("ns/r1-head".into(), 1)]
    );
    assert_eq!(pending_of(&r, "ns/l2-head").reason, "WaitingForQuota");
    let c = run(&y);
    assert_eq!(admitted_names(&c), vec!["ns/l1-head", "ns/l2-head"]);
}

/// Tournament, non-borrowing step, gate `FairSharingPrioritizeNonBorrowing` (on): a head whose
/// queue does not borrow on the flavor-resources it requests beats one that does, whatever the DRS.
/// qx borrows 8 of 20 CPUs (DRS 400) but its head asks 3 GPUs within qx's nominal; qy's head
/// would borrow 2 GPUs (DRS 250). Only 4 GPUs are free: qx's head goes first and qy's head
/// no longer fits (by DRS alone qy's head would win).
#[test]
fn tournament_prefers_not_borrowing_on_requested() {
    let mut y = rf("f");
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
    assert_eq!(admitted_in_order(&r)[0], ("ns/x-head".into(), 1));
    assert!(!r.admitted.iter().any(|a| a.workload == "ns/y-head"));
}

/// Fair-sharing preemption: `runFirstFsStrategy`, gate `FairSharingPreemptWithinNominal` (on): a
/// preemptor that stays within nominal with its workload reclaims without consulting the
/// strategies, from the borrowing queue with the highest DRS first (a: 2 borrowed, 167; c: 1
/// borrowed, 84), reason `InCohortReclamation`, most recently admitted first. Classical preemption
/// orders the cohort candidates by priority across queues and would take c's priority-0 workload.
#[test]
fn within_nominal_reclaims_from_highest_share() {
    let mut y = three_queues(ANY);
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
        vec![s("ns/a2", "ns/b-head", "InCohortReclamation")]
    );
    assert_eq!(r.preempted[0].cycle, 1);
    assert_eq!(admitted_in_order(&r), vec![("ns/b-head".into(), 2)]);
    let c = run(&y);
    assert_eq!(
        preempted_names(&c),
        vec![("ns/c1".into(), "InCohortReclamation".into())]
    );
}

/// The a/b/c setup of the strategy tests: a runs 4 + 4 + 1 (borrows 5, DRS ⌈5000/12⌉ = 417),
/// b runs 3, nothing is free; b's head asks 4 and would borrow 3 (DRS 250).
fn strategy_setup(config: &str) -> String {
    let mut y = String::from(config);
    y += &three_queues(ANY);
    y += &admitted(
        "a1",
        "a",
        "a",
        0,
        1,
        1,
        "g",
        &[("nvidia.com/gpu", "4", "4")],
    );
    y += &admitted(
        "a2",
        "a",
        "a",
        0,
        2,
        1,
        "g",
        &[("nvidia.com/gpu", "4", "4")],
    );
    y += &admitted(
        "a3",
        "a",
        "a",
        0,
        3,
        1,
        "g",
        &[("nvidia.com/gpu", "1", "1")],
    );
    y += &admitted(
        "b1",
        "b",
        "b",
        0,
        4,
        1,
        "g",
        &[("nvidia.com/gpu", "3", "3")],
    );
    y += &wl("b-head", "b", 0, 10, 1, &[("nvidia.com/gpu", "4")]);
    y
}

/// Fair-sharing preemption: S2-a then S2-b with fill-back (`fairPreemptions`, `fillBackWorkloads`).
/// S2-a (`LessThanOrEqualToFinalShare`): a3 (the most recent) passes (250 ≤ a's 334 after its
/// removal) but 1 GPU is not enough; a2 and a1 fail (250 > a's 0 after removal) and are kept
/// for S2-b (`LessThanInitialShare`): 250 < a's current 334, so a2 goes and b's head fits.
/// Fill-back returns a3 (b fits without evicting it). Only a2 is preempted, reason
/// `InCohortFairSharing`; b's head is admitted in cycle 2 (it beats a2, back in a's queue,
/// by DRS: 250 < 417) and a2 then waits. Classical preemption cannot help a preemptor
/// that would keep borrowing (no `borrowWithinCohort`).
#[test]
fn s2a_then_s2b_with_fill_back() {
    let y = strategy_setup(FS_DEFAULT);
    let r = run_fair(&y);
    assert_eq!(
        victims(&r),
        vec![s("ns/a2", "ns/b-head", "InCohortFairSharing")]
    );
    assert_eq!(admitted_in_order(&r), vec![("ns/b-head".into(), 2)]);
    assert_eq!(pending_of(&r, "ns/a2").cluster_queue, "a");
    // the default list (no Configuration) is the same
    assert_eq!(victims(&run_fair(&strategy_setup(""))), victims(&r));
    let c = run(&y);
    assert!(c.preempted.is_empty());
    assert!(c.admitted.is_empty());
}

/// Fair-sharing preemption: with `preemptionStrategies: [LessThanOrEqualToFinalShare]` only: the
/// first pass ends without a fit (only a3 passes S2-a) and no second strategy is configured, so
/// there are no targets: nothing is preempted and b's head waits.
#[test]
fn s2a_only_finds_no_targets() {
    let r = run_fair(&strategy_setup(FS_S2A));
    assert!(r.preempted.is_empty());
    assert!(r.admitted.is_empty());
    assert_eq!(pending_of(&r, "ns/b-head").reason, "WaitingForQuota");
}

/// Fair-sharing preemption: S2-a alone suffices: a runs 4 × 2 (borrows 4, DRS 334), b runs 4, b's
/// head asks 2 (DRS 167 after admission); removing one of a's 2-GPU workloads leaves a at 167, and
/// 167 ≤ 167 passes `LessThanOrEqualToFinalShare`. The most recently admitted (a4) goes.
#[test]
fn s2a_equal_final_share_passes() {
    let mut y = String::from(FS_S2A);
    y += &three_queues(ANY);
    for (i, t) in [(1, 1), (2, 2), (3, 3), (4, 4)] {
        y += &admitted(
            &format!("a{i}"),
            "a",
            "a",
            0,
            t,
            1,
            "g",
            &[("nvidia.com/gpu", "2", "2")],
        );
    }
    y += &admitted(
        "b1",
        "b",
        "b",
        0,
        5,
        1,
        "g",
        &[("nvidia.com/gpu", "4", "4")],
    );
    y += &wl("b-head", "b", 0, 10, 1, &[("nvidia.com/gpu", "2")]);
    let r = run_fair(&y);
    assert_eq!(
        victims(&r),
        vec![s("ns/a4", "ns/b-head", "InCohortFairSharing")]
    );
    assert_eq!(admitted_in_order(&r), vec![("ns/b-head".into(), 2)]);
}

/// Fair-sharing preemption: `InClusterQueuePreemption`: the preemptor's own queue is a target queue
/// (never pruned) and its victims carry reason `InClusterQueue`, as upstream.
#[test]
fn own_queue_victims_are_in_cluster_queue() {
    let mut y =
        three_queues("preemption: {withinClusterQueue: LowerPriority, reclaimWithinCohort: Any}");
    y += &admitted(
        "a1",
        "a",
        "a",
        0,
        1,
        1,
        "g",
        &[("nvidia.com/gpu", "4", "4")],
    );
    y += &admitted(
        "b1",
        "b",
        "b",
        0,
        2,
        1,
        "g",
        &[("nvidia.com/gpu", "4", "4")],
    );
    y += &admitted(
        "c1",
        "c",
        "c",
        0,
        3,
        1,
        "g",
        &[("nvidia.com/gpu", "4", "4")],
    );
    y += &wl("b-high", "b", 10, 10, 1, &[("nvidia.com/gpu", "4")]);
    let r = run_fair(&y);
    assert_eq!(victims(&r), vec![s("ns/b1", "ns/b-high", "InClusterQueue")]);
    assert_eq!(admitted_in_order(&r), vec![("ns/b-high".into(), 2)]);
}

/// DRS and fair-sharing preemption: a weight-0 queue that borrows has an infinite share: it is the
/// first victim queue even though another queue borrows more GPUs. d (weight 0) borrows 1, a
/// (weight 1) borrows 3; b, within nominal, reclaims from d first.
#[test]
fn zero_weight_borrower_is_first_victim_queue() {
    let mut y = rf("g");
    y += &cq("a", Some("org"), ANY, &[vec![gpu("g", "4")]]);
    y += &cq("b", Some("org"), ANY, &[vec![gpu("g", "4")]]);
    y += &cq(
        "d",
        Some("org"),
        "preemption: {reclaimWithinCohort: Any}\nfairSharing: {weight: \"0\"}",
        &[vec![gpu("g", "4")]],
    );
    y += &admitted(
        "a1",
        "a",
        "a",
        0,
        1,
        1,
        "g",
        &[("nvidia.com/gpu", "7", "7")],
    );
    y += &admitted(
        "d1",
        "d",
        "d",
        0,
        2,
        1,
        "g",
        &[("nvidia.com/gpu", "5", "5")],
    );
    y += &wl("b-head", "b", 0, 10, 1, &[("nvidia.com/gpu", "1")]);
    let r = run_fair(&y);
    assert_eq!(
        victims(&r),
        vec![s("ns/d1", "ns/b-head", "InCohortReclamation")]
    );
}

/// Runs the fair-sharing policy with the Configuration's settings as they are (no forced
/// fair sharing): admission fair sharing alone when only `admissionFairSharing` is set.
fn run_configured(yaml: &str) -> ScheduleReport {
    let model = gpuquota_model::import_str("test.yaml", yaml)
        .expect("valid YAML")
        .model;
    let world =
        gpuquota_cohort::testkit::build_unvalidated(&model).unwrap_or_else(|e| panic!("{e}"));
    let settings = settings_from_configuration(model.configuration.as_ref(), false).unwrap();
    crate::common::fair_schedule(&world, &model, settings, None).unwrap()
}

const AFS: &str = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nadmissionFairSharing:\n  usageHalfLifeTime: 10m\n  usageSamplingInterval: 5m\n---\n";

/// One ClusterQueue `team` (2 CPUs) with LocalQueues `team` and `other`; `status` is the
/// `other` LocalQueue's status YAML (or empty).
fn afs_queue(scope: bool, other_status: &str) -> String {
    let mut y = rf("f");
    let extra = if scope {
        "admissionScope: {admissionMode: UsageBasedAdmissionFairSharing}"
    } else {
        ""
    };
    y += &cq("team", None, extra, &[vec![cpu("f", "2", None, None)]]);
    y += "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: other, namespace: ns}\nspec: {clusterQueue: team}\n";
    y += other_status;
    y += "---\n";
    y
}

/// Admission fair sharing (KEP-4136, `CalculateEntryPenalty`): inside a ClusterQueue with
/// `admissionMode: UsageBasedAdmissionFairSharing`, the head is the workload of the
/// LocalQueue with the lowest usage. All start at 0 (ties keep priority and time order), so
/// cycle 1 admits t1 (LocalQueue `team`), whose LocalQueue is then charged
/// α(5m) = 1 − 0.5^(5/10) ≈ 0.29 CPU; cycle 2 takes `other`'s o1 before the older t2. The
/// 2 CPUs are gone. Classically (or without the admission scope) t1 and t2 are admitted.
#[test]
fn admission_fair_sharing_entry_penalty_rotates_local_queues() {
    let mut y = String::from(AFS);
    y += &afs_queue(true, "");
    y += &wl("t1", "team", 0, 1, 1, &[("cpu", "1")]);
    y += &wl("t2", "team", 0, 2, 1, &[("cpu", "1")]);
    y += &wl("o1", "other", 0, 3, 1, &[("cpu", "1")]);
    y += &wl("o2", "other", 0, 4, 1, &[("cpu", "1")]);
    let r = run_configured(&y);
    assert_eq!(
        admitted_in_order(&r),
        vec![("ns/t1".into(), 1), ("ns/o1".into(), 2)]
    );
    assert!(r.preempted.is_empty());
    let c = run(&y);
    assert_eq!(admitted_names(&c), vec!["ns/t1", "ns/t2"]);
    let mut no_scope = String::from(AFS);
    no_scope += &afs_queue(false, "");
    no_scope += &y[y
        .find("apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload")
        .unwrap()..];
    assert_eq!(
        admitted_names(&run_configured(&no_scope)),
        vec!["ns/t1", "ns/t2"]
    );
}

/// Admission fair sharing: the decayed usage in the LocalQueue's
/// `status.fairSharing.admissionFairSharingStatus.consumedResources` orders the queue: `other`
/// consumed 3 CPUs, so `team`'s workloads go first even though `other`'s are older and of
/// higher priority.
#[test]
fn admission_fair_sharing_consumed_usage_orders_the_queue() {
    let mut y = String::from(AFS);
    y += &afs_queue(
        true,
        "status:\n  fairSharing:\n    weightedShare: 0\n    admissionFairSharingStatus:\n      consumedResources: {cpu: \"3\"}\n      lastUpdate: \"2026-01-01T00:00:00Z\"\n",
    );
    y += &wl("o1", "other", 5, 1, 1, &[("cpu", "1")]);
    y += &wl("o2", "other", 5, 2, 1, &[("cpu", "1")]);
    y += &wl("t1", "team", 0, 3, 1, &[("cpu", "1")]);
    y += &wl("t2", "team", 0, 4, 1, &[("cpu", "1")]);
    let r = run_configured(&y);
    assert_eq!(
        admitted_in_order(&r),
        vec![("ns/t1".into(), 1), ("ns/t2".into(), 2)]
    );
    assert_eq!(admitted_names(&run(&y)), vec!["ns/o1", "ns/o2"]);
}

mod properties {
    //! Invariants of the engine under fair sharing on random cohort trees.

    use gpuquota_cohort::World;
    use gpuquota_cohort::check::check_invariants;
    use gpuquota_cohort::fair::FairSharing;
    use gpuquota_fairshare::config::settings_from_configuration;
    use gpuquota_testkit::{Platform, Shape, Tree, platform};
    use proptest::prelude::*;

    fn config() -> ProptestConfig {
        gpuquota_testkit::config(32)
    }

    /// The workspace's random platform under fair sharing: `c0` the root with the other
    /// cohorts below it, every ClusterQueue in a cohort with a weight (0 included).
    fn spec() -> impl Strategy<Value = Platform> {
        platform(Shape {
            frs: vec![("g", "nvidia.com/gpu")],
            cohorts: 1..4,
            tree: Tree::Star,
            cohort_frs: 1,
            queues: 1..5,
            queue_frs: 1..2,
            nominal: 0..6,
            borrowing_limit: 0..1,
            lending_limit: 0..1,
            always_in_cohort: true,
            fair_sharing: true,
            borrow_within_cohort: false,
            strict_fifo: false,
            admitted: 0..7,
            pending: 1..6,
            pods: 1..2,
            per_pod: 1..5,
            ..Shape::default()
        })
        .prop_map(|mut p| {
            // quotas without limits
            for q in p.cohorts.iter_mut().flat_map(|c| c.quotas.iter_mut()) {
                q.borrowing_limit = None;
                q.lending_limit = None;
            }
            for q in p.queues.iter_mut().flat_map(|c| c.quotas.iter_mut()) {
                q.borrowing_limit = None;
                q.lending_limit = None;
            }
            p
        })
    }

    fn documents(s: &Platform) -> Vec<String> {
        s.documents()
    }

    fn load(docs: &[String]) -> (gpuquota_model::Model, World) {
        let model = gpuquota_model::import_str("p.yaml", &docs.concat())
            .expect("valid YAML")
            .model;
        let world =
            gpuquota_cohort::testkit::build_unvalidated(&model).unwrap_or_else(|e| panic!("{e}"));
        (model, world)
    }

    fn policy(model: &gpuquota_model::Model, world: &World) -> FairSharing {
        let settings = settings_from_configuration(model.configuration.as_ref(), false).unwrap();
        FairSharing::new(world, model, settings).unwrap()
    }

    proptest! {
        #![proptest_config(config())]

        /// Under fair sharing, no ClusterQueue exceeds nominal + borrowingLimit and no cohort
        /// its subtree quota after any cycle; victims of the preemptor's own queue have
        /// reason InClusterQueue and the others InCohortReclamation or InCohortFairSharing.
        #[test]
        fn limits_and_reasons_hold(s in spec()) {
            let (model, w) = load(&documents(&s));
            let mut sched = gpuquota_cohort::testkit::with_policy(&w, policy(&model, &w));
            prop_assume!(check_invariants(&w, sched.reservations()).is_ok());
            for _ in 0..30 {
                if !sched.run_cycle() {
                    break;
                }
                prop_assert_eq!(check_invariants(&w, sched.reservations()), Ok(()));
            }
            let r = gpuquota_cohort::ScheduleReport::from_scheduler(&w, &sched);
            for p in &r.preempted {
                let preemptor = w.workload_id(&p.preemptor).expect("preemptor exists");
                let preemptor_cq = match &w.workloads[preemptor].queue {
                    gpuquota_cohort::world::QueueRef::Cq(c) => w.cluster_queues[*c].name.clone(),
                    _ => String::new(),
                };
                if p.cluster_queue == preemptor_cq {
                    prop_assert_eq!(p.reason.as_str(), "InClusterQueue");
                } else {
                    prop_assert!(
                        ["InCohortReclamation", "InCohortFairSharing"].contains(&p.reason.as_str()),
                        "{:?}", p
                    );
                }
            }
        }

        /// The same documents in any order, run twice, give the same output.
        #[test]
        fn deterministic_and_order_independent(s in spec(), seed in any::<u64>()) {
            let docs = documents(&s);
            let mut shuffled = docs.clone();
            let mut x = seed | 1;
            for i in (1..shuffled.len()).rev() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                shuffled.swap(i, (x % (i as u64 + 1)) as usize);
            }
            let run = |d: &[String]| {
                let (model, w) = load(d);
                let settings =
                    settings_from_configuration(model.configuration.as_ref(), false).unwrap();
                let r = crate::common::fair_schedule(&w, &model, settings, None).unwrap();
                serde_json::to_string(&r).unwrap()
            };
            let a = run(&docs);
            prop_assert_eq!(&a, &run(&docs));
            prop_assert_eq!(&a, &run(&shuffled));
        }
    }
}

mod upstream_fair_preemptions {
    //! Upstream `TestFairPreemptions` (`pkg/scheduler/preemption/preemption_fair_test.go`)
    //! cases over its base ClusterQueues a, b, c (3 CPUs each, `withinClusterQueue:
    //! LowerPriority`, `reclaimWithinCohort: Any`, `borrowWithinCohort: LowerPriority` with
    //! threshold −3) and `preemptible` (0 CPUs) in cohort `all`, run through the engine's
    //! preemption target search with the fair-sharing policy. Admission times are equal and
    //! UIDs follow the names, as upstream sets them.

    use gpuquota_cohort::fair::FairSharing;
    use gpuquota_fairshare::config::settings_from_configuration;

    use crate::common::*;

    const BASE: &str = "preemption: {withinClusterQueue: LowerPriority, reclaimWithinCohort: Any, borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: -3}}";

    /// `(name, queue, cpu, priority)` admitted; the incoming `(name, queue, cpu)`;
    /// strategies; expected `(victim, reason)`.
    fn case(
        admitted_wls: &[(&str, &str, &str, i32)],
        incoming: (&str, &str, &str),
        strategies: &str,
    ) -> Vec<(String, String)> {
        let mut y = rf("default");
        if !strategies.is_empty() {
            y += &format!(
                "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing:\n  preemptionStrategies: [{strategies}]\n---\n"
            );
        }
        for q in ["a", "b", "c"] {
            y += &cq(
                q,
                Some("all"),
                BASE,
                &[vec![cpu("default", "3", None, None)]],
            );
        }
        y += &cq(
            "preemptible",
            Some("all"),
            "",
            &[vec![cpu("default", "0", None, None)]],
        );
        for &(name, q, c, p) in admitted_wls {
            y += &admitted(name, q, q, p, 0, 1, "default", &[("cpu", c, c)]);
        }
        y += &wl(incoming.0, incoming.1, 0, 100, 1, &[("cpu", incoming.2)]);
        let model = gpuquota_model::import_str("t.yaml", &y)
            .expect("valid YAML")
            .model;
        let world =
            gpuquota_cohort::testkit::build_unvalidated(&model).unwrap_or_else(|e| panic!("{e}"));
        let settings = settings_from_configuration(model.configuration.as_ref(), true).unwrap();
        let policy = FairSharing::new(&world, &model, settings).unwrap();
        let mut s = gpuquota_cohort::testkit::with_policy(&world, policy);
        let id = world
            .workload_id(&format!("ns/{}", incoming.0))
            .expect("incoming workload");
        let mut got: Vec<(String, String)> = s
            .preemption_targets(id)
            .into_iter()
            .map(|t| {
                let key = &world.workloads[t.wl].key;
                (
                    key.trim_start_matches("ns/").to_owned(),
                    t.reason.as_str().to_owned(),
                )
            })
            .collect();
        got.sort();
        got
    }

    fn want(v: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut w: Vec<(String, String)> = v
            .iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect();
        w.sort();
        w
    }

    type Adm = (&'static str, &'static str, &'static str, i32);

    fn units(q: &'static str, names: &[&'static str]) -> Vec<Adm> {
        names.iter().map(|n| (*n, q, "1", 0)).collect()
    }

    fn flat(v: &[Vec<Adm>]) -> Vec<Adm> {
        v.iter().flatten().copied().collect()
    }

    const RECL: &str = "InCohortReclamation";
    const FS: &str = "InCohortFairSharing";
    const ICQ: &str = "InClusterQueue";

    #[test]
    fn reclaim_nominal_from_user_using_the_most() {
        let a = units("a", &["a1", "a2", "a3"]);
        let b = units("b", &["b1", "b2", "b3", "b4", "b5"]);
        let c = units("c", &["c1"]);
        let adm = flat(&[a, b, c]);
        assert_eq!(
            case(&adm, ("c_incoming", "c", "1"), ""),
            want(&[("b1", RECL)])
        );
    }

    #[test]
    fn reclaim_from_queue_using_less_if_the_latest_of_the_most_is_not_enough() {
        let adm = [
            ("a1", "a", "3", 0),
            ("a2", "a", "1", 0),
            ("b1", "b", "2", 0),
            ("b2", "b", "3", 0),
        ];
        assert_eq!(
            case(&adm, ("c_incoming", "c", "3"), ""),
            want(&[("a1", RECL)])
        );
    }

    #[test]
    fn reclaim_borrowable_quota_from_user_using_the_most() {
        let a = units("a", &["a1", "a2", "a3"]);
        let b = units("b", &["b1", "b2", "b3", "b4", "b5"]);
        let c = units("c", &["c1"]);
        let adm = flat(&[a, b, c]);
        assert_eq!(
            case(&adm, ("a_incoming", "a", "1"), ""),
            want(&[("b1", FS)])
        );
    }

    #[test]
    fn preempt_one_from_each_queue_borrowing() {
        let adm = [
            ("a1", "a", "0.5", 0),
            ("a2", "a", "0.5", 0),
            ("a3", "a", "3", 0),
            ("b1", "b", "0.5", 0),
            ("b2", "b", "0.5", 0),
            ("b3", "b", "3", 0),
        ];
        assert_eq!(
            case(&adm, ("c_incoming", "c", "2"), ""),
            want(&[("a1", RECL), ("b1", RECL)])
        );
    }

    #[test]
    fn no_preemption_when_everyone_is_under_nominal() {
        let a = units("a", &["a1", "a2", "a3"]);
        let b = units("b", &["b1", "b2", "b3"]);
        let c = units("c", &["c1", "c2", "c3"]);
        let adm = flat(&[a, b, c]);
        assert_eq!(case(&adm, ("c_incoming", "c", "1"), ""), want(&[]));
    }

    #[test]
    fn no_preemption_that_would_switch_the_imbalance() {
        let a = units("a", &["a1", "a2", "a3"]);
        let b = units("b", &["b1", "b2", "b3", "b4", "b5"]);
        let adm = flat(&[a, b]);
        assert_eq!(case(&adm, ("a_incoming", "a", "2"), ""), want(&[]));
    }

    #[test]
    fn lower_priority_workloads_of_the_same_queue() {
        let mut adm = vec![("a1_low", "a", "1", -1), ("a2_low", "a", "1", -1)];
        adm.extend([("a3", "a", "1", 0), ("a4", "a", "1", 0)]);
        for n in ["b1", "b2", "b3", "b4", "b5"] {
            adm.push((n, "b", "1", 0));
        }
        assert_eq!(
            case(&adm, ("a_incoming", "a", "2"), ""),
            want(&[("a1_low", ICQ), ("a2_low", ICQ)])
        );
    }

    #[test]
    fn same_queue_and_highest_user_combined() {
        let mut adm = vec![
            ("a_low", "a", "1", -1),
            ("a2", "a", "1", 0),
            ("a3", "a", "1", 0),
        ];
        for n in ["b1", "b2", "b3", "b4", "b5", "b6"] {
            adm.push((n, "b", "1", 0));
        }
        assert_eq!(
            case(&adm, ("a_incoming", "a", "2"), ""),
            want(&[("a_low", ICQ), ("b1", FS)])
        );
    }

    #[test]
    fn huge_workload_when_there_is_no_other_option() {
        let adm = [("b1", "b", "9", 0)];
        assert_eq!(
            case(&adm, ("a_incoming", "a", "2"), ""),
            want(&[("b1", RECL)])
        );
    }

    #[test]
    fn no_huge_victim_for_a_huge_incoming() {
        let adm = [("a1", "a", "2", 0), ("b1", "b", "7", 0)];
        assert_eq!(case(&adm, ("a_incoming", "a", "5"), ""), want(&[]));
    }

    #[test]
    fn no_two_smaller_victims_for_a_huge_incoming() {
        let adm = [
            ("b1", "b", "2", 0),
            ("b2", "b", "2", 0),
            ("b3", "b", "3", 0),
        ];
        assert_eq!(case(&adm, ("a_incoming", "a", "6"), ""), want(&[]));
    }

    #[test]
    fn own_queue_and_others_even_over_nominal() {
        let adm = [
            ("a1_low", "a", "2", -1),
            ("a2_low", "a", "1", -1),
            ("b1", "b", "3", 0),
            ("b2", "b", "3", 0),
        ];
        assert_eq!(
            case(&adm, ("a_incoming", "a", "4"), ""),
            want(&[("a1_low", ICQ), ("b1", FS)])
        );
    }

    #[test]
    fn prefer_victims_that_do_not_make_the_target_the_biggest() {
        let adm = [
            ("b1", "b", "2", 0),
            ("b2", "b", "1", 0),
            ("b3", "b", "2", 0),
            ("c1", "c", "1", 0),
        ];
        assert_eq!(
            case(&adm, ("a_incoming", "a", "3.5"), ""),
            want(&[("b2", FS)])
        );
    }

    #[test]
    fn victims_from_different_queues_for_a_smaller_max_share() {
        let adm = [
            ("b1", "b", "2", 0),
            ("b2", "b", "2.5", 0),
            ("c1", "c", "2", 0),
            ("c2", "c", "2.5", 0),
        ];
        assert_eq!(
            case(&adm, ("a_incoming", "a", "3.5"), ""),
            want(&[("b1", FS), ("c1", FS)])
        );
    }

    #[test]
    fn the_scenario_above_does_not_flap() {
        let adm = [
            ("a1", "a", "3.5", 0),
            ("b2", "b", "2.5", 0),
            ("c2", "c", "2.5", 0),
        ];
        assert_eq!(case(&adm, ("b_incoming", "b", "2"), ""), want(&[]));
    }

    #[test]
    fn no_victim_queue_pushed_under_nominal() {
        let adm = [
            ("b1", "b", "3", 0),
            ("b2", "b", "3", 0),
            ("c1", "c", "3", 0),
        ];
        assert_eq!(case(&adm, ("a_incoming", "a", "4"), ""), want(&[]));
    }

    #[test]
    fn priority_threshold_does_not_make_victims() {
        let mut adm = Vec::new();
        for n in ["a1", "a2", "a3"] {
            adm.push((n, "a", "1", 0));
        }
        for n in ["b1", "b2", "b3"] {
            adm.push((n, "b", "1", 0));
        }
        for n in ["preemptible1", "preemptible2", "preemptible3"] {
            adm.push((n, "preemptible", "1", -3));
        }
        assert_eq!(case(&adm, ("a_incoming", "a", "2"), ""), want(&[]));
    }

    #[test]
    fn less_than_initial_share_takes_lower_priority_first_even_if_big() {
        let adm = [
            ("a1", "a", "3", 0),
            ("b_low", "b", "5", 0),
            ("b_high", "b", "1", 1),
        ];
        assert_eq!(
            case(&adm, ("a_incoming", "a", "1"), "LessThanInitialShare"),
            want(&[("b_low", FS)])
        );
    }

    #[test]
    fn less_than_or_equal_to_final_share_avoids_transferring_the_imbalance() {
        let adm = [
            ("a1", "a", "3", 0),
            ("b_low", "b", "5", 0),
            ("b_high", "b", "1", 1),
        ];
        assert_eq!(
            case(
                &adm,
                ("a_incoming", "a", "1"),
                "LessThanOrEqualToFinalShare"
            ),
            want(&[("b_high", FS)])
        );
    }

    /// A ClusterQueue: `quotas` is `[(flavor, cpu)]` in one group (none: no resource groups).
    fn q(
        name: &str,
        cohort: Option<&str>,
        weight: &str,
        quotas: &[(&str, &str)],
        extra: &str,
    ) -> String {
        let mut y = format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {name}}}\nspec:\n  namespaceSelector: {{}}\n"
        );
        if let Some(c) = cohort {
            y += &format!("  cohortName: {c}\n");
        }
        if !weight.is_empty() {
            y += &format!("  fairSharing: {{weight: \"{weight}\"}}\n");
        }
        for line in extra.lines() {
            y += &format!("  {line}\n");
        }
        if !quotas.is_empty() {
            y += "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n";
            for (f, n) in quotas {
                y += &format!(
                    "    - {{name: {f}, resources: [{{name: cpu, nominalQuota: \"{n}\"}}]}}\n"
                );
            }
        }
        y += &format!(
            "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: {name}, namespace: ns}}\nspec: {{clusterQueue: {name}}}\n---\n"
        );
        y
    }

    /// A Cohort with an optional parent, weight and `default` cpu quota.
    fn co(name: &str, parent: Option<&str>, weight: &str, cpu: &str) -> String {
        let mut y = format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {{name: {name}}}\nspec:\n  fairSharing: {{weight: \"{}\"}}\n",
            if weight.is_empty() { "1" } else { weight }
        );
        if let Some(p) = parent {
            y += &format!("  parentName: {p}\n");
        }
        if !cpu.is_empty() {
            y += &format!(
                "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors: [{{name: default, resources: [{{name: cpu, nominalQuota: \"{cpu}\"}}]}}]\n"
            );
        }
        y + "---\n"
    }

    /// `(name, queue, cpu, priority, flavor)` admitted; incoming `(name, queue, cpu, priority)`.
    fn case_in(
        topology: &str,
        admitted_wls: &[(&str, &str, &str, i32, &str)],
        incoming: (&str, &str, &str, i32),
    ) -> Vec<(String, String)> {
        let mut y = topology.to_owned();
        for &(name, cq, c, p, f) in admitted_wls {
            y += &admitted(name, cq, cq, p, 0, 1, f, &[("cpu", c, c)]);
        }
        y += &wl(
            incoming.0,
            incoming.1,
            incoming.3,
            100,
            1,
            &[("cpu", incoming.2)],
        );
        let model = gpuquota_model::import_str("t.yaml", &y)
            .expect("valid YAML")
            .model;
        let world =
            gpuquota_cohort::testkit::build_unvalidated(&model).unwrap_or_else(|e| panic!("{e}"));
        let settings = settings_from_configuration(model.configuration.as_ref(), true).unwrap();
        let policy = FairSharing::new(&world, &model, settings).unwrap();
        let mut s = gpuquota_cohort::testkit::with_policy(&world, policy);
        let id = world
            .workload_id(&format!("ns/{}", incoming.0))
            .expect("incoming");
        let mut got: Vec<(String, String)> = s
            .preemption_targets(id)
            .into_iter()
            .map(|t| {
                let key = &world.workloads[t.wl].key;
                (
                    key.trim_start_matches("ns/").to_owned(),
                    t.reason.as_str().to_owned(),
                )
            })
            .collect();
        got.sort();
        got
    }

    const WITHIN_ANY: &str =
        "preemption: {withinClusterQueue: LowerPriority, reclaimWithinCohort: Any}";
    const ANY: &str = "preemption: {reclaimWithinCohort: Any}";

    fn ones(
        q: &'static str,
        names: &[&'static str],
        p: i32,
    ) -> Vec<(&'static str, &'static str, &'static str, i32, &'static str)> {
        names.iter().map(|n| (*n, q, "1", p, "default")).collect()
    }

    #[test]
    fn queue_with_higher_weight_can_preempt_more() {
        let mut t = rf("default");
        t += &q("a", Some("all"), "2", &[("default", "3")], WITHIN_ANY);
        t += &q("b", Some("all"), "", &[("default", "3")], WITHIN_ANY);
        t += &q("c", Some("all"), "", &[("default", "3")], WITHIN_ANY);
        let mut adm = ones("a", &["a1", "a2", "a3"], 0);
        adm.extend(ones("b", &["b1", "b2", "b3", "b4", "b5", "b6"], 0));
        assert_eq!(
            case_in(&t, &adm, ("a_incoming", "a", "2", 0)),
            want(&[("b1", FS), ("b2", FS)])
        );
    }

    #[test]
    fn anything_borrowed_by_a_zero_weight_queue() {
        let mut t = rf("default");
        t += &q("a", Some("all"), "", &[("default", "3")], WITHIN_ANY);
        t += &q("b", Some("all"), "0", &[("default", "3")], WITHIN_ANY);
        t += &q("c", Some("all"), "", &[("default", "3")], WITHIN_ANY);
        let mut adm = ones("a", &["a1", "a2", "a3"], 0);
        adm.extend(ones("b", &["b1", "b2", "b3", "b4", "b5", "b6"], 0));
        assert_eq!(
            case_in(&t, &adm, ("a_incoming", "a", "3", 0)),
            want(&[("b1", FS), ("b2", FS), ("b3", FS)])
        );
    }

    #[test]
    fn nominal_of_a_zero_weight_queue_is_protected() {
        let mut t = rf("default");
        t += &q("a", Some("all"), "", &[("default", "3")], WITHIN_ANY);
        t += &q("b", Some("all"), "0", &[("default", "3")], WITHIN_ANY);
        let mut adm = ones("a", &["a1", "a2", "a3"], 0);
        adm.extend(ones("b", &["b1", "b2", "b3"], 0));
        assert_eq!(case_in(&t, &adm, ("a_incoming", "a", "1", 0)), want(&[]));
    }

    #[test]
    fn nominal_of_a_zero_weight_cohort_is_protected() {
        let mut t = rf("default");
        t += &co("root", None, "", "");
        t += &co("right-cohort", Some("root"), "0", "1");
        t += &q("left-cq", Some("root"), "", &[("default", "0")], ANY);
        t += &q(
            "right-cq",
            Some("right-cohort"),
            "0",
            &[("default", "0")],
            ANY,
        );
        let adm = ones("right-cq", &["right-1"], 0);
        assert_eq!(case_in(&t, &adm, ("left-1", "left-cq", "1", 0)), want(&[]));
    }

    #[test]
    fn within_the_queue_without_a_cohort() {
        let mut t = rf("default");
        t += &q(
            "a",
            None,
            "",
            &[("default", "1")],
            "preemption: {withinClusterQueue: LowerPriority}",
        );
        let adm = ones("a", &["a1"], 0);
        assert_eq!(
            case_in(&t, &adm, ("a_incoming", "a", "1", 1000)),
            want(&[("a1", ICQ)])
        );
    }

    #[test]
    fn hierarchical_preemption() {
        let mut t = rf("default");
        t += &co("ROOT", None, "", "5");
        t += &co("LEFT", Some("ROOT"), "2", "5");
        t += &co("RIGHT", Some("ROOT"), "", "5");
        t += &q("a", Some("LEFT"), "2", &[("default", "1")], ANY);
        t += &q("b", Some("LEFT"), "", &[("default", "1")], "");
        t += &q("c", Some("ROOT"), "", &[("default", "1")], "");
        t += &q("d", Some("RIGHT"), "", &[("default", "1")], "");
        t += &q("e", Some("RIGHT"), "0.99", &[("default", "1")], "");
        let mut adm = Vec::new();
        for qn in ["b", "c", "d", "e"] {
            for i in 1..=5 {
                let name: &'static str = Box::leak(format!("{qn}{i}").into_boxed_str());
                let qs: &'static str = Box::leak(qn.to_owned().into_boxed_str());
                adm.push((name, qs, "1", i, "default"));
            }
        }
        assert_eq!(
            case_in(&t, &adm, ("unit", "a", "5", 0)),
            want(&[("b1", FS), ("b2", FS), ("c1", FS), ("c2", FS), ("e1", FS)])
        );
    }

    #[test]
    fn borrowing_queue_in_a_non_borrowing_cohort_is_protected() {
        let mut t = rf("default");
        t += &co("ROOT", None, "", "");
        t += &co("RIGHT", Some("ROOT"), "0.1", "1");
        t += &q("a", Some("ROOT"), "10", &[("default", "5")], WITHIN_ANY);
        t += &q("b", Some("RIGHT"), "0.1", &[], "");
        let mut adm = ones("a", &["a1", "a2", "a3"], -1);
        adm.extend(ones("b", &["b1"], -1));
        assert_eq!(
            case_in(&t, &adm, ("unit", "a", "5", 0)),
            want(&[("a1", ICQ), ("a2", ICQ), ("a3", ICQ)])
        );
    }

    #[test]
    fn forced_within_the_queue_when_the_borrower_is_too_important() {
        let mut t = rf("default");
        t += &co("ROOT", None, "", "");
        t += &co("RIGHT", Some("ROOT"), "0.1", "3");
        t += &q(
            "a",
            Some("ROOT"),
            "10",
            &[("default", "5")],
            "preemption: {withinClusterQueue: LowerPriority, reclaimWithinCohort: LowerPriority}",
        );
        t += &q("b", Some("RIGHT"), "0.1", &[], "");
        let mut adm = ones("a", &["a1", "a2", "a3"], -1);
        adm.push(("b1", "b", "4", 100, "default"));
        assert_eq!(
            case_in(&t, &adm, ("unit", "a", "4", 0)),
            want(&[("a1", ICQ), ("a2", ICQ), ("a3", ICQ)])
        );
    }

    #[test]
    fn deep_preemption() {
        let mut t = rf("default");
        t += &co("ROOT", None, "", "");
        t += &co("A", Some("ROOT"), "1.01", "");
        t += &co("AA", Some("A"), "", "");
        t += &co("AAA", Some("AA"), "", "");
        t += &co("B", Some("ROOT"), "0.99", "");
        t += &co("BB", Some("B"), "", "");
        t += &co("BBB", Some("BB"), "", "");
        t += &co("C", Some("ROOT"), "", "");
        t += &co("CC", Some("C"), "", "");
        t += &co("CCC", Some("CC"), "", "");
        t += &co("CCCC", Some("CCC"), "", "1");
        t += &q("a", Some("AAA"), "", &[("default", "0")], ANY);
        t += &q("b", Some("BBB"), "", &[("default", "0")], "");
        let adm = ones("b", &["b1"], 0);
        assert_eq!(case_in(&t, &adm, ("a1", "a", "1", 0)), want(&[("b1", FS)]));
    }

    #[test]
    fn zero_weight_queue_reclaims_its_nominal() {
        let mut t = rf("default");
        t += &q("a", Some("ROOT"), "0.0", &[("default", "1")], ANY);
        t += &q("b", Some("ROOT"), "1.0", &[("default", "0")], "");
        let adm = ones("b", &["b1"], 0);
        assert_eq!(
            case_in(&t, &adm, ("a1", "a", "1", 0)),
            want(&[("b1", RECL)])
        );
    }

    #[test]
    fn zero_weight_cohort_reclaims_its_nominal() {
        let mut t = rf("default");
        t += &co("A", Some("ROOT"), "0.0", "1");
        t += &q("a", Some("A"), "0.0", &[("default", "0")], ANY);
        t += &q("b", Some("ROOT"), "1.0", &[("default", "0")], "");
        let adm = ones("b", &["b1"], 0);
        assert_eq!(case_in(&t, &adm, ("a1", "a", "1", 0)), want(&[("b1", FS)]));
    }

    #[test]
    fn nominal_first_despite_a_high_aggregate_share() {
        let mut t = rf("premium") + &rf("cheap");
        t += &q(
            "a",
            Some("all"),
            "",
            &[("premium", "3"), ("cheap", "0")],
            "preemption: {reclaimWithinCohort: Any}\nflavorFungibility: {whenCanBorrow: MayStopSearch, whenCanPreempt: MayStopSearch}",
        );
        t += &q(
            "b",
            Some("all"),
            "",
            &[("premium", "0"), ("cheap", "6")],
            "",
        );
        let mut adm: Vec<(&str, &str, &str, i32, &str)> = vec![
            ("a_prem1", "a", "1", 0, "premium"),
            ("a_prem2", "a", "1", 0, "premium"),
        ];
        for n in ["a_cheap1", "a_cheap2", "a_cheap3", "a_cheap4", "a_cheap5"] {
            adm.push((n, "a", "1", 0, "cheap"));
        }
        adm.push(("b_prem1", "b", "1", 0, "premium"));
        assert_eq!(
            case_in(&t, &adm, ("a_incoming", "a", "1", 0)),
            want(&[("b_prem1", RECL)])
        );
    }

    #[test]
    fn zero_weight_borrowing_preemptor_cannot_take_from_a_weighted_borrower() {
        let mut t = rf("default");
        t += &q("a", Some("all"), "0", &[("default", "1")], ANY);
        t += &q("b", Some("all"), "1", &[("default", "1")], "");
        let mut adm = ones("a", &["a1"], 0);
        adm.extend(ones("b", &["b1", "b2"], 0));
        assert_eq!(case_in(&t, &adm, ("a_incoming", "a", "1", 0)), want(&[]));
    }

    #[test]
    fn zero_weight_borrowers_compare_unweighted() {
        let mut t = rf("default");
        t += &co("all", None, "", "3");
        t += &q("a", Some("all"), "0", &[("default", "1")], ANY);
        t += &q("b", Some("all"), "0", &[("default", "0")], "");
        let adm = ones("b", &["b1", "b2", "b3"], 0);
        assert_eq!(
            case_in(&t, &adm, ("a_incoming", "a", "2", 0)),
            want(&[("b1", FS)])
        );
    }

    #[test]
    fn weighted_borrowers_same_shape() {
        let mut t = rf("default");
        t += &co("all", None, "", "3");
        t += &q("a", Some("all"), "1", &[("default", "1")], ANY);
        t += &q("b", Some("all"), "1", &[("default", "0")], "");
        let adm = ones("b", &["b1", "b2", "b3"], 0);
        assert_eq!(
            case_in(&t, &adm, ("a_incoming", "a", "2", 0)),
            want(&[("b1", FS)])
        );
    }

    /// (Upstream's queue `y` is `yy` here: a bare `y` is a YAML 1.1 boolean.)
    #[test]
    fn candidates_skipped_by_the_first_strategy_reach_the_second() {
        let mut t = rf("default");
        t += &co("A", Some("ROOT"), "0", "1");
        t += &q("p", Some("A"), "1", &[("default", "2")], ANY);
        t += &q("yy", Some("A"), "1", &[("default", "2")], "");
        t += &q("x", Some("ROOT"), "1", &[("default", "1")], "");
        let adm = vec![
            ("p1", "p", "2", 0, "default"),
            ("y1", "yy", "2", 0, "default"),
            ("y2", "yy", "2", 0, "default"),
            ("x1", "x", "1", 0, "default"),
            ("x2", "x", "1", 0, "default"),
        ];
        assert_eq!(
            case_in(&t, &adm, ("p_incoming", "p", "1", 0)),
            want(&[("x1", FS), ("y1", FS)])
        );
    }
}

/// Upstream `TestScheduleForFairSharing` "with fair sharing: schedule workload with lowest
/// share first" (one cycle). Cohort `eng`: eng-alpha (on-demand 50 + borrowingLimit 50, spot
/// 100 + 0), eng-beta (on-demand 50 + 10, spot 0 + 100; model-a GPUs 20), eng-shared
/// (on-demand 10 + 0). alpha runs 50, beta 55: 5 CPUs are free. alpha's `new` (5 CPUs, DRS
/// 5·1000/210) beats beta's older `older_new` (1 CPU, DRS 6·1000/210) and takes them; the
/// older one no longer fits. (Namespace selectors are left open: every namespace matches.)
#[test]
fn upstream_schedule_lowest_share_first() {
    let q = |name: &str, groups: &str, extra: &str| {
        format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {name}}}\nspec:\n  cohortName: eng\n  namespaceSelector: {{}}\n  queueingStrategy: StrictFIFO\n{extra}  resourceGroups:\n{groups}---\n"
        )
    };
    let fq = |f: &str, r: &str, n: &str, bl: &str| {
        format!(
            "    - {{name: {f}, resources: [{{name: {r}, nominalQuota: \"{n}\", borrowingLimit: \"{bl}\"}}]}}\n"
        )
    };
    let mut y = String::new();
    for f in ["default", "on-demand", "spot", "model-a"] {
        y += &rf(f);
    }
    y += &q(
        "eng-alpha",
        &format!(
            "  - coveredResources: [cpu]\n    flavors:\n{}{}",
            fq("on-demand", "cpu", "50", "50"),
            fq("spot", "cpu", "100", "0")
        ),
        "",
    );
    y += &q(
        "eng-beta",
        &format!(
            "  - coveredResources: [cpu]\n    flavors:\n{}{}  - coveredResources: [example.com/gpu]\n    flavors:\n{}",
            fq("on-demand", "cpu", "50", "10"),
            fq("spot", "cpu", "0", "100"),
            fq("model-a", "example.com/gpu", "20", "0")
        ),
        "  preemption: {reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}\n",
    );
    y += &q(
        "eng-shared",
        &format!(
            "  - coveredResources: [cpu]\n    flavors:\n{}",
            fq("on-demand", "cpu", "10", "0")
        ),
        "",
    );
    for (ns, cq) in [("eng-alpha", "eng-alpha"), ("eng-beta", "eng-beta")] {
        y += &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: main, namespace: {ns}}}\nspec: {{clusterQueue: {cq}}}\n---\n"
        );
    }
    let w = |name: &str, ns: &str, count: u32, created: &str, admitted_cq: Option<&str>| {
        let mut s = format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: {name}, namespace: {ns}, uid: {name}, creationTimestamp: \"{created}\"}}\nspec:\n  queueName: main\n  podSets: [{{name: one, count: {count}, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: \"1\"}}}}}}]}}}}}}]\n"
        );
        if let Some(cq) = admitted_cq {
            s += &format!(
                "status:\n  conditions: [{{type: QuotaReserved, status: \"True\", reason: QuotaReserved, message: m, lastTransitionTime: \"2026-01-01T00:00:00Z\"}}]\n  admission:\n    clusterQueue: {cq}\n    podSetAssignments: [{{name: one, count: {count}, flavors: {{cpu: on-demand}}, resourceUsage: {{cpu: \"{count}\"}}}}]\n"
            );
        }
        s + "---\n"
    };
    y += &w(
        "all_nominal",
        "eng-alpha",
        50,
        "2026-01-01T00:00:00Z",
        Some("eng-alpha"),
    );
    y += &w(
        "borrowing",
        "eng-beta",
        55,
        "2026-01-01T00:00:00Z",
        Some("eng-beta"),
    );
    y += &w("older_new", "eng-beta", 1, "2025-12-31T23:59:00Z", None);
    y += &w("new", "eng-alpha", 5, "2026-01-01T00:00:00Z", None);
    let model = gpuquota_model::import_str("t.yaml", &y)
        .expect("valid YAML")
        .model;
    let world =
        gpuquota_cohort::testkit::build_unvalidated(&model).unwrap_or_else(|e| panic!("{e}"));
    let settings = settings_from_configuration(None, true).unwrap();
    let r = crate::common::fair_schedule(&world, &model, settings, Some(1)).unwrap();
    assert_eq!(admitted_in_order(&r), vec![("eng-alpha/new".into(), 1)]);
    assert_eq!(r.admitted[0].pod_sets[0].count, 5);
    assert_eq!(r.admitted[0].pod_sets[0].flavors["cpu"], "on-demand");
    let left = pending_of(&r, "eng-beta/older_new");
    assert_eq!(left.reason, "WaitingForQuota");
    assert_eq!(
        left.message,
        "Workload no longer fits after processing another workload"
    );
    // classical: the older workload goes first
    let c = crate::common::schedule(&world, Some(1));
    assert_eq!(admitted_names(&c), vec!["eng-beta/older_new"]);
}

/// Upstream `TestScheduleForFairSharing` "hierarchical fair sharing schedule workload which
/// wins tournament" (one cycle). Cohort A (200 CPUs) has children B {d, e} and C {f, g}, all
/// queues without quota; d runs 10, e 20, g 100 (70 free). At B, d1 (70: share 400) beats e1
/// (61: 405); at C, f1 (1: 5) beats g1 (1: 505); at A, B with d1 (500) beats C with f1
/// (505). d1 is admitted; e1, f1 and g1 no longer fit.
#[test]
fn upstream_schedule_hierarchical_tournament_winner() {
    let mut y = rf("on-demand");
    y += "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: A}\nspec:\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors: [{name: on-demand, resources: [{name: cpu, nominalQuota: \"200\"}]}]\n---\n";
    for c in ["B", "C"] {
        y += &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {{name: {c}}}\nspec: {{parentName: A}}\n---\n"
        );
    }
    for (q, c) in [("d", "B"), ("e", "B"), ("f", "C"), ("g", "C")] {
        y += &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {q}}}\nspec:\n  cohortName: {c}\n  namespaceSelector: {{}}\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors: [{{name: on-demand, resources: [{{name: cpu, nominalQuota: \"0\"}}]}}]\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: lq-{q}, namespace: eng-alpha}}\nspec: {{clusterQueue: {q}}}\n---\n"
        );
    }
    let w = |name: &str, q: &str, cpu: u32, admitted: bool| {
        let mut s = format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: {name}, namespace: eng-alpha, uid: {name}, creationTimestamp: \"2026-01-01T00:00:00Z\"}}\nspec:\n  queueName: lq-{q}\n  podSets: [{{name: one, count: 1, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: \"{cpu}\"}}}}}}]}}}}}}]\n"
        );
        if admitted {
            s += &format!(
                "status:\n  admission:\n    clusterQueue: {q}\n    podSetAssignments: [{{name: one, count: 1, flavors: {{cpu: on-demand}}, resourceUsage: {{cpu: \"{cpu}\"}}}}]\n"
            );
        }
        s + "---\n"
    };
    y += &w("d0", "d", 10, true);
    y += &w("e0", "e", 20, true);
    y += &w("g0", "g", 100, true);
    y += &w("d1", "d", 70, false);
    y += &w("e1", "e", 61, false);
    y += &w("f1", "f", 1, false);
    y += &w("g1", "g", 1, false);
    let model = gpuquota_model::import_str("t.yaml", &y)
        .expect("valid YAML")
        .model;
    let world =
        gpuquota_cohort::testkit::build_unvalidated(&model).unwrap_or_else(|e| panic!("{e}"));
    let settings = settings_from_configuration(None, true).unwrap();
    let r = crate::common::fair_schedule(&world, &model, settings, Some(1)).unwrap();
    assert_eq!(admitted_in_order(&r), vec![("eng-alpha/d1".into(), 1)]);
    for left in ["eng-alpha/e1", "eng-alpha/f1", "eng-alpha/g1"] {
        assert_eq!(
            pending_of(&r, left).message,
            "Workload no longer fits after processing another workload"
        );
    }
}

/// Upstream `TestScheduleForFairSharing` "with fair sharing: preempt workload from CQ with
/// the highest share" (one cycle). eng-alpha (on-demand 50 + 50, spot 100) runs 100 spot and
/// 4 × 20 on-demand (borrows 30: share 30·1000/250 = 120); eng-gamma (on-demand 50) runs
/// 10 + 3 × 20 (borrows 20: 80); eng-beta's preemptor asks 30 and stays within nominal, so it
/// reclaims from the highest share first: alpha1, then (alpha now at 40) gamma1, both
/// `InCohortReclamation`; the preemptor waits for them.
#[test]
fn upstream_schedule_preempt_from_highest_share() {
    let q = |name: &str, groups: &str, extra: &str| {
        format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {name}}}\nspec:\n  cohortName: eng\n  namespaceSelector: {{}}\n  queueingStrategy: StrictFIFO\n{extra}  resourceGroups:\n{groups}---\n"
        )
    };
    let fq = |f: &str, r: &str, n: &str, bl: &str| {
        let bl = if bl.is_empty() {
            String::new()
        } else {
            format!(", borrowingLimit: \"{bl}\"")
        };
        format!("    - {{name: {f}, resources: [{{name: {r}, nominalQuota: \"{n}\"{bl}}}]}}\n")
    };
    let mut y = String::new();
    for f in ["default", "on-demand", "spot", "model-a"] {
        y += &rf(f);
    }
    y += &q(
        "eng-alpha",
        &format!(
            "  - coveredResources: [cpu]\n    flavors:\n{}{}",
            fq("on-demand", "cpu", "50", "50"),
            fq("spot", "cpu", "100", "0")
        ),
        "",
    );
    y += &q(
        "eng-beta",
        &format!(
            "  - coveredResources: [cpu]\n    flavors:\n{}{}  - coveredResources: [example.com/gpu]\n    flavors:\n{}",
            fq("on-demand", "cpu", "50", "10"),
            fq("spot", "cpu", "0", "100"),
            fq("model-a", "example.com/gpu", "20", "0")
        ),
        "  preemption: {reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}\n",
    );
    y += &q(
        "eng-gamma",
        &format!(
            "  - coveredResources: [cpu]\n    flavors:\n{}",
            fq("on-demand", "cpu", "50", "0")
        ),
        "",
    );
    y += "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: main, namespace: eng-beta}\nspec: {clusterQueue: eng-beta}\n---\n";
    let w = |name: &str, ns: &str, cpu: u32, flavor: Option<&str>| {
        let mut s = format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: {name}, namespace: {ns}, uid: {name}, creationTimestamp: \"2026-01-01T00:00:00Z\"}}\nspec:\n  queueName: main\n  podSets: [{{name: main, count: 1, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: \"{cpu}\"}}}}}}]}}}}}}]\n"
        );
        if let Some(f) = flavor {
            s += &format!(
                "status:\n  conditions: [{{type: QuotaReserved, status: \"True\", reason: QuotaReserved, message: m, lastTransitionTime: \"2026-01-01T00:00:00Z\"}}]\n  admission:\n    clusterQueue: {ns}\n    podSetAssignments: [{{name: main, count: 1, flavors: {{cpu: {f}}}, resourceUsage: {{cpu: \"{cpu}\"}}}}]\n"
            );
        }
        s + "---\n"
    };
    y += &w("all_spot", "eng-alpha", 100, Some("spot"));
    for a in ["alpha1", "alpha2", "alpha3", "alpha4"] {
        y += &w(a, "eng-alpha", 20, Some("on-demand"));
    }
    y += &w("gamma1", "eng-gamma", 10, Some("on-demand"));
    for g in ["gamma2", "gamma3", "gamma4"] {
        y += &w(g, "eng-gamma", 20, Some("on-demand"));
    }
    y += &w("preemptor", "eng-beta", 30, None);
    let model = gpuquota_model::import_str("t.yaml", &y)
        .expect("valid YAML")
        .model;
    let world =
        gpuquota_cohort::testkit::build_unvalidated(&model).unwrap_or_else(|e| panic!("{e}"));
    let settings = settings_from_configuration(None, true).unwrap();
    let r = crate::common::fair_schedule(&world, &model, settings, Some(1)).unwrap();
    let mut v = victims(&r);
    v.sort();
    assert_eq!(
        v,
        vec![
            s(
                "eng-alpha/alpha1",
                "eng-beta/preemptor",
                "InCohortReclamation"
            ),
            s(
                "eng-gamma/gamma1",
                "eng-beta/preemptor",
                "InCohortReclamation"
            ),
        ]
    );
    assert!(r.admitted.is_empty());
    assert_eq!(
        pending_of(&r, "eng-beta/preemptor").reason,
        "WaitingForPreemptedWorkloads"
    );
    // the next cycle admits it on on-demand
    let r2 = crate::common::fair_schedule(
        &world,
        &model,
        settings_from_configuration(None, true).unwrap(),
        None,
    )
    .unwrap();
    assert_eq!(r2.admitted[0].workload, "eng-beta/preemptor");
    assert_eq!(r2.admitted[0].pod_sets[0].flavors["cpu"], "on-demand");
}

/// Upstream `TestScheduleForFairSharing` "fair sharing two queues with weight 0 schedules
/// workload which borrows less" and "... with high weight ..." (one cycle). Cohort A has 8
/// CPUs; b and c have none; b runs 4. b1 (priority 9001) and c1 each ask 4: b would borrow 8,
/// c 4. With weight 0 both shares are +∞ and the unweighted ratios decide (1000 > 500); with
/// weight 123456789 the tiny weighted shares decide the same way: c1 is admitted, b1 no
/// longer fits.
#[test]
fn upstream_schedule_queue_borrowing_less_wins() {
    for weight in ["0", "123456789"] {
        let mut y = rf("on-demand");
        y += "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: A}\nspec:\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors: [{name: on-demand, resources: [{name: cpu, nominalQuota: \"8\"}]}]\n---\n";
        for q in ["b", "c"] {
            y += &format!(
                "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {q}}}\nspec:\n  cohortName: A\n  namespaceSelector: {{}}\n  fairSharing: {{weight: \"{weight}\"}}\n  preemption: {{reclaimWithinCohort: Any, withinClusterQueue: Never}}\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors: [{{name: on-demand, resources: [{{name: cpu, nominalQuota: \"0\"}}]}}]\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: lq-{q}, namespace: eng-alpha}}\nspec: {{clusterQueue: {q}}}\n---\n"
            );
        }
        let w = |name: &str, q: &str, prio: i32, admitted: bool| {
            let mut s = format!(
                "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: {name}, namespace: eng-alpha, uid: {name}, creationTimestamp: \"2026-01-01T00:00:00Z\"}}\nspec:\n  queueName: lq-{q}\n  priority: {prio}\n  podSets: [{{name: one, count: 1, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: \"4\"}}}}}}]}}}}}}]\n"
            );
            if admitted {
                s += &format!(
                    "status:\n  admission:\n    clusterQueue: {q}\n    podSetAssignments: [{{name: one, count: 1, flavors: {{cpu: on-demand}}, resourceUsage: {{cpu: \"4\"}}}}]\n"
                );
            }
            s + "---\n"
        };
        y += &w("b0", "b", 0, true);
        y += &w("b1", "b", 9001, false);
        y += &w("c1", "c", 0, false);
        let model = gpuquota_model::import_str("t.yaml", &y)
            .expect("valid YAML")
            .model;
        let world =
            gpuquota_cohort::testkit::build_unvalidated(&model).unwrap_or_else(|e| panic!("{e}"));
        let settings = settings_from_configuration(None, true).unwrap();
        let r = crate::common::fair_schedule(&world, &model, settings, Some(1)).unwrap();
        assert_eq!(
            admitted_in_order(&r),
            vec![("eng-alpha/c1".into(), 1)],
            "weight {weight}"
        );
        assert_eq!(
            pending_of(&r, "eng-alpha/b1").message,
            "Workload no longer fits after processing another workload"
        );
    }
}

/// Upstream `TestScheduleForFairSharing` "multiple preemptions within cq when fair sharing"
/// (one cycle). Cohort `other`: other-alpha, -beta, -gamma (2 CPUs each,
/// `withinClusterQueue: LowerPriority`) and resource-bank (3); each of the three runs a
/// priority-0 workload of 3. A priority-100 preemptor of 3 in each queue preempts its own
/// queue's workload (`InClusterQueue`); the three target sets do not overlap, so all three
/// preempt in the same cycle and wait. Upstream's unit test leaves `reclaimWithinCohort`
/// empty, which its flavor assigner treats as "not Never" (a 3-CPU request over a 2-CPU
/// nominal is then simulated under fair sharing); a real cluster defaults it to `Never`, which
/// would make the preemptors NoFit. Here it is `LowerPriority`: cohort candidates join, yet
/// the preemptor's own queue has the highest share (444 against 111) and is visited first.
#[test]
fn upstream_schedule_multiple_preemptions_within_queues() {
    const PRE: &str =
        "  preemption: {withinClusterQueue: LowerPriority, reclaimWithinCohort: LowerPriority}\n";
    let mut y = rf("default");
    for (q, n, extra) in [
        ("other-alpha", "2", PRE),
        ("other-beta", "2", PRE),
        ("other-gamma", "2", PRE),
        ("resource-bank", "3", ""),
    ] {
        y += &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {q}}}\nspec:\n  cohortName: other\n  namespaceSelector: {{}}\n{extra}  resourceGroups:\n  - coveredResources: [cpu]\n    flavors: [{{name: default, resources: [{{name: cpu, nominalQuota: \"{n}\"}}]}}]\n---\n"
        );
    }
    for (ns, q) in [
        ("eng-alpha", "other-alpha"),
        ("eng-beta", "other-beta"),
        ("eng-gamma", "other-gamma"),
    ] {
        y += &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: other, namespace: {ns}}}\nspec: {{clusterQueue: {q}}}\n---\n"
        );
    }
    let w = |name: &str, ns: &str, prio: i32, cq: Option<&str>| {
        let mut s = format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: {name}, namespace: {ns}, uid: wl-{name}, creationTimestamp: \"2026-01-01T00:00:00Z\"}}\nspec:\n  queueName: other\n  priority: {prio}\n  podSets: [{{name: main, count: 1, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: \"3\"}}}}}}]}}}}}}]\n"
        );
        if let Some(cq) = cq {
            s += &format!(
                "status:\n  admission:\n    clusterQueue: {cq}\n    podSetAssignments: [{{name: main, count: 1, flavors: {{cpu: default}}, resourceUsage: {{cpu: \"3\"}}}}]\n"
            );
        }
        s + "---\n"
    };
    y += &w("a1", "eng-alpha", 0, Some("other-alpha"));
    y += &w("b1", "eng-beta", 0, Some("other-beta"));
    y += &w("c1", "eng-gamma", 0, Some("other-gamma"));
    for ns in ["eng-alpha", "eng-beta", "eng-gamma"] {
        y += &w("preemptor", ns, 100, None);
    }
    let model = gpuquota_model::import_str("t.yaml", &y)
        .expect("valid YAML")
        .model;
    let world =
        gpuquota_cohort::testkit::build_unvalidated(&model).unwrap_or_else(|e| panic!("{e}"));
    let settings = settings_from_configuration(None, true).unwrap();
    let r = crate::common::fair_schedule(&world, &model, settings, Some(1)).unwrap();
    let mut v = victims(&r);
    v.sort();
    assert_eq!(
        v,
        vec![
            s("eng-alpha/a1", "eng-alpha/preemptor", "InClusterQueue"),
            s("eng-beta/b1", "eng-beta/preemptor", "InClusterQueue"),
            s("eng-gamma/c1", "eng-gamma/preemptor", "InClusterQueue"),
        ]
    );
    for ns in ["eng-alpha", "eng-beta", "eng-gamma"] {
        let p = pending_of(&r, &format!("{ns}/preemptor"));
        assert_eq!(p.reason, "WaitingForPreemptedWorkloads");
        assert_eq!(
            p.message,
            "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 3 more needed. Pending the preemption of 1 workload(s)"
        );
    }
}

/// A one-cycle fair-sharing run over Cohorts `(name, parent, cpu)` and ClusterQueues
/// `(name, cohort, cpu)` on flavor `on-demand`, one LocalQueue `lq-<cq>` each in namespace
/// `eng-alpha`, and workloads `(name, cq, cpu, priority, second, admitted)`.
fn one_cycle(
    cohorts: &[(&str, Option<&str>, &str)],
    queues: &[(&str, Option<&str>, &str)],
    wls: &[(&str, &str, u32, i32, u32, bool)],
) -> ScheduleReport {
    let mut y = rf("on-demand");
    for (c, parent, cpu) in cohorts {
        y += &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {{name: {c}}}\nspec:\n"
        );
        if let Some(p) = parent {
            y += &format!("  parentName: {p}\n");
        }
        if cpu.is_empty() {
            y += "  fairSharing: {weight: \"1\"}\n";
        } else {
            y += &format!(
                "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors: [{{name: on-demand, resources: [{{name: cpu, nominalQuota: \"{cpu}\"}}]}}]\n"
            );
        }
        y += "---\n";
    }
    for (q, c, cpu) in queues {
        let cohort = c
            .map(|c| format!("  cohortName: {c}\n"))
            .unwrap_or_default();
        y += &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {q}}}\nspec:\n{cohort}  namespaceSelector: {{}}\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors: [{{name: on-demand, resources: [{{name: cpu, nominalQuota: \"{cpu}\"}}]}}]\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: lq-{q}, namespace: eng-alpha}}\nspec: {{clusterQueue: {q}}}\n---\n"
        );
    }
    for (name, q, cpu, prio, second, admitted) in wls {
        y += &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: {name}, namespace: eng-alpha, uid: {name}, creationTimestamp: \"2026-01-01T00:00:{second:02}Z\"}}\nspec:\n  queueName: lq-{q}\n  priority: {prio}\n  podSets: [{{name: one, count: 1, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: \"{cpu}\"}}}}}}]}}}}}}]\n"
        );
        if *admitted {
            y += &format!(
                "status:\n  admission:\n    clusterQueue: {q}\n    podSetAssignments: [{{name: one, count: 1, flavors: {{cpu: on-demand}}, resourceUsage: {{cpu: \"{cpu}\"}}}}]\n"
            );
        }
        y += "---\n";
    }
    let model = gpuquota_model::import_str("t.yaml", &y)
        .expect("valid YAML")
        .model;
    let world =
        gpuquota_cohort::testkit::build_unvalidated(&model).unwrap_or_else(|e| panic!("{e}"));
    let settings = settings_from_configuration(None, true).unwrap();
    crate::common::fair_schedule(&world, &model, settings, Some(1)).unwrap()
}

/// Upstream `TestScheduleForFairSharing` "fair sharing schedule workload with lowest drf
/// after admission": A has 100; b runs 10. b1 (50) would leave b at 600, c1 (75) c at 750,
/// so b1 goes first although b's share is the higher one before admission; c1 no longer fits.
#[test]
fn upstream_schedule_lowest_share_after_admission() {
    let r = one_cycle(
        &[("A", None, "100")],
        &[("b", Some("A"), "0"), ("c", Some("A"), "0")],
        &[
            ("b0", "b", 10, 0, 0, true),
            ("b1", "b", 50, 0, 0, false),
            ("c1", "c", 75, 0, 0, false),
        ],
    );
    assert_eq!(admitted_in_order(&r), vec![("eng-alpha/b1".into(), 1)]);
    assert_eq!(
        pending_of(&r, "eng-alpha/c1").message,
        "Workload no longer fits after processing another workload"
    );
}

/// Upstream "fair sharing schedule singleton cqs and cq without cohort": a queue alone in a
/// cohort with the quota, a queue alone in an empty cohort, a queue without a cohort — each
/// head is admitted.
#[test]
fn upstream_schedule_singletons_and_no_cohort() {
    let r = one_cycle(
        &[("A", None, "10"), ("B", None, "")],
        &[
            ("a", Some("A"), "0"),
            ("b", Some("B"), "10"),
            ("c", None, "10"),
        ],
        &[
            ("a1", "a", 10, 0, 0, false),
            ("b1", "b", 10, 0, 0, false),
            ("c1", "c", 10, 0, 0, false),
        ],
    );
    assert_eq!(
        admitted_names(&r),
        vec!["eng-alpha/a1", "eng-alpha/b1", "eng-alpha/c1"]
    );
}

/// Upstream "fair sharing schedule highest priority first" and "... earliest timestamp
/// first": equal shares (10 of 10 borrowed each) fall to priority (c1 101 over b1 99), then
/// to the queue-order timestamp (c1 created a second earlier).
#[test]
fn upstream_schedule_priority_then_timestamp() {
    let cohorts = [("A", None, "10"), ("B", None, "")];
    let queues = [("b", Some("A"), "0"), ("c", Some("A"), "0")];
    let r = one_cycle(
        &cohorts,
        &queues,
        &[
            ("b1", "b", 10, 99, 0, false),
            ("c1", "c", 10, 101, 0, false),
        ],
    );
    assert_eq!(admitted_in_order(&r), vec![("eng-alpha/c1".into(), 1)]);
    let r = one_cycle(
        &cohorts,
        &queues,
        &[
            ("b1", "b", 10, 101, 1, false),
            ("c1", "c", 10, 101, 0, false),
        ],
    );
    assert_eq!(admitted_in_order(&r), vec![("eng-alpha/c1".into(), 1)]);
    assert_eq!(pending_of(&r, "eng-alpha/b1").cluster_queue, "b");
}

/// Upstream "with fair sharing: hierarchical nominal-first prefers non-borrowing subtree"
/// and "... with deeper nesting": Cohort-A (10 CPUs, optionally through SUB-A) holds cq-a
/// (0); Cohort-B (no quota) holds cq-b (5) and cq-c (0, running 10 borrowed). wl-a (5) keeps
/// its subtree within quota, wl-b (5) would push Cohort-B further into borrowing: at the root
/// wl-a wins (gate `FairSharingPrioritizeNonBorrowing`), wl-b no longer fits — although
/// classically wl-b (within cq-b's nominal, borrowing level 0) would go first.
#[test]
fn upstream_schedule_hierarchical_nominal_first() {
    for deep in [false, true] {
        let mut cohorts = vec![("root", None, ""), ("Cohort-B", Some("root"), "")];
        let a_home = if deep {
            cohorts.push(("Cohort-A", Some("root"), ""));
            cohorts.push(("SUB-A", Some("Cohort-A"), "10"));
            "SUB-A"
        } else {
            cohorts.push(("Cohort-A", Some("root"), "10"));
            "Cohort-A"
        };
        let r = one_cycle(
            &cohorts,
            &[
                ("cq-a", Some(a_home), "0"),
                ("cq-b", Some("Cohort-B"), "5"),
                ("cq-c", Some("Cohort-B"), "0"),
            ],
            &[
                ("c0", "cq-c", 10, 0, 0, true),
                ("wl-a", "cq-a", 5, 0, 0, false),
                ("wl-b", "cq-b", 5, 0, 0, false),
            ],
        );
        assert_eq!(
            admitted_in_order(&r),
            vec![("eng-alpha/wl-a".into(), 1)],
            "deep: {deep}"
        );
        assert_eq!(pending_of(&r, "eng-alpha/wl-b").cluster_queue, "cq-b");
    }
}

/// Upstream "with fair sharing: hierarchical nominal-first with mixed CQ and cohort quotas":
/// Cohort-A (10; cq-a1 5, cq-a2 3 running 6) and Cohort-B (10; cq-b 5, cq-c 3 running 20)
/// under root, 10 free. wl-a1 (7) leaves Cohort-A at 13 of 18, wl-b (4) takes Cohort-B to 24
/// of 18: wl-a1 wins at the root, wl-b no longer fits.
#[test]
fn upstream_schedule_hierarchical_nominal_first_mixed_quotas() {
    let r = one_cycle(
        &[
            ("root", None, ""),
            ("Cohort-A", Some("root"), "10"),
            ("Cohort-B", Some("root"), "10"),
        ],
        &[
            ("cq-a1", Some("Cohort-A"), "5"),
            ("cq-a2", Some("Cohort-A"), "3"),
            ("cq-b", Some("Cohort-B"), "5"),
            ("cq-c", Some("Cohort-B"), "3"),
        ],
        &[
            ("a2-admitted", "cq-a2", 6, 0, 0, true),
            ("c-admitted", "cq-c", 20, 0, 0, true),
            ("wl-a1", "cq-a1", 7, 0, 0, false),
            ("wl-b", "cq-b", 4, 0, 0, false),
        ],
    );
    assert_eq!(admitted_in_order(&r), vec![("eng-alpha/wl-a1".into(), 1)]);
    assert_eq!(pending_of(&r, "eng-alpha/wl-b").cluster_queue, "cq-b");
}

/// Upstream "with fair sharing: hierarchical nominal-first per-flavor ignores cross-flavor
/// borrowing": Cohort-A (on-demand 10) borrows 5 spot through cq-a, Cohort-B (spot 10) has
/// cq-b (on-demand 5) running 8 on-demand. wl-a (4, on-demand) keeps Cohort-A within its
/// on-demand quota — its spot borrowing does not count against it — while wl-b (4) pushes
/// Cohort-B further into on-demand borrowing: wl-a is admitted on on-demand, wl-b waits.
#[test]
fn upstream_schedule_nominal_first_is_per_flavor() {
    let mut y = rf("on-demand") + &rf("spot");
    y +=
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: root}\nspec: {}\n---\n";
    for (c, f) in [("Cohort-A", "on-demand"), ("Cohort-B", "spot")] {
        y += &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {{name: {c}}}\nspec:\n  parentName: root\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors: [{{name: {f}, resources: [{{name: cpu, nominalQuota: \"10\"}}]}}]\n---\n"
        );
    }
    for (q, c, od) in [("cq-a", "Cohort-A", "0"), ("cq-b", "Cohort-B", "5")] {
        y += &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {q}}}\nspec:\n  cohortName: {c}\n  namespaceSelector: {{}}\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - {{name: on-demand, resources: [{{name: cpu, nominalQuota: \"{od}\"}}]}}\n    - {{name: spot, resources: [{{name: cpu, nominalQuota: \"0\"}}]}}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: lq-{q}, namespace: eng-alpha}}\nspec: {{clusterQueue: {q}}}\n---\n"
        );
    }
    let w = |name: &str, q: &str, cpu: u32, flavor: Option<&str>| {
        let mut s = format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: {name}, namespace: eng-alpha, uid: {name}, creationTimestamp: \"2026-01-01T00:00:00Z\"}}\nspec:\n  queueName: lq-{q}\n  podSets: [{{name: one, count: 1, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: \"{cpu}\"}}}}}}]}}}}}}]\n"
        );
        if let Some(f) = flavor {
            s += &format!(
                "status:\n  admission:\n    clusterQueue: {q}\n    podSetAssignments: [{{name: one, count: 1, flavors: {{cpu: {f}}}, resourceUsage: {{cpu: \"{cpu}\"}}}}]\n"
            );
        }
        s + "---\n"
    };
    y += &w("spot-admitted", "cq-a", 5, Some("spot"));
    y += &w("od-admitted", "cq-b", 8, Some("on-demand"));
    y += &w("wl-a", "cq-a", 4, None);
    y += &w("wl-b", "cq-b", 4, None);
    let model = gpuquota_model::import_str("t.yaml", &y)
        .expect("valid YAML")
        .model;
    let world =
        gpuquota_cohort::testkit::build_unvalidated(&model).unwrap_or_else(|e| panic!("{e}"));
    let settings = settings_from_configuration(None, true).unwrap();
    let r = crate::common::fair_schedule(&world, &model, settings, Some(1)).unwrap();
    assert_eq!(admitted_in_order(&r), vec![("eng-alpha/wl-a".into(), 1)]);
    assert_eq!(r.admitted[0].pod_sets[0].flavors["cpu"], "on-demand");
    assert_eq!(pending_of(&r, "eng-alpha/wl-b").cluster_queue, "cq-b");
}

/// Upstream "with fair sharing: prefer reclamation over cq priority based preemption; with
/// preemption while borrowing" (one cycle). other-alpha (on-demand 7, spot 7; LowerPriority
/// within and reclaim) runs a1 (5 on-demand), other-beta (3 + 3) runs b1 (5 spot, borrowing
/// 2). alpha's preemptor (8 GPUs, priority 100) would borrow either way, which fair sharing
/// allows to simulate: on on-demand it needs its own a1 (`InClusterQueue`), on spot it
/// reclaims b1 (S2-a fails, S2-b passes: 50 < 100). Reclaiming ranks above in-queue
/// preemption, so spot wins and b1 is preempted with `InCohortFairSharing`.
#[test]
fn upstream_schedule_prefer_reclamation_over_priority_preemption() {
    let mut y = rf("on-demand") + &rf("spot");
    for (q, n, extra) in [
        (
            "other-alpha",
            "7",
            "  preemption: {withinClusterQueue: LowerPriority, reclaimWithinCohort: LowerPriority}\n",
        ),
        ("other-beta", "3", ""),
    ] {
        y += &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {q}}}\nspec:\n  cohortName: other\n  namespaceSelector: {{}}\n{extra}  resourceGroups:\n  - coveredResources: [gpu]\n    flavors:\n    - {{name: on-demand, resources: [{{name: gpu, nominalQuota: \"{n}\"}}]}}\n    - {{name: spot, resources: [{{name: gpu, nominalQuota: \"{n}\"}}]}}\n---\n"
        );
    }
    for (ns, q) in [("eng-alpha", "other-alpha"), ("eng-beta", "other-beta")] {
        y += &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: other, namespace: {ns}}}\nspec: {{clusterQueue: {q}}}\n---\n"
        );
    }
    let w = |name: &str, ns: &str, prio: i32, gpu: u32, adm: Option<(&str, &str)>| {
        let mut s = format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: {name}, namespace: {ns}, uid: wl-{name}, creationTimestamp: \"2026-01-01T00:00:00Z\"}}\nspec:\n  queueName: other\n  priority: {prio}\n  podSets: [{{name: main, count: 1, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{gpu: \"{gpu}\"}}}}}}]}}}}}}]\n"
        );
        if let Some((cq, f)) = adm {
            s += &format!(
                "status:\n  admission:\n    clusterQueue: {cq}\n    podSetAssignments: [{{name: main, count: 1, flavors: {{gpu: {f}}}, resourceUsage: {{gpu: \"{gpu}\"}}}}]\n"
            );
        }
        s + "---\n"
    };
    y += &w("a1", "eng-alpha", 50, 5, Some(("other-alpha", "on-demand")));
    y += &w("b1", "eng-beta", 50, 5, Some(("other-beta", "spot")));
    y += &w("preemptor", "eng-alpha", 100, 8, None);
    let model = gpuquota_model::import_str("t.yaml", &y)
        .expect("valid YAML")
        .model;
    let world =
        gpuquota_cohort::testkit::build_unvalidated(&model).unwrap_or_else(|e| panic!("{e}"));
    let settings = settings_from_configuration(None, true).unwrap();
    let r = crate::common::fair_schedule(&world, &model, settings, Some(1)).unwrap();
    assert_eq!(
        victims(&r),
        vec![s(
            "eng-beta/b1",
            "eng-alpha/preemptor",
            "InCohortFairSharing"
        )]
    );
    assert_eq!(
        pending_of(&r, "eng-alpha/preemptor").reason,
        "WaitingForPreemptedWorkloads"
    );
}

/// Upstream "fair sharing: in-CQ preemption for CQ without cohort" and "PreemptionOverBorrowing
/// with fair sharing: preempt in first flavor instead of borrowing in second" (one cycle):
/// a ClusterQueue without a cohort preempts its own lower-priority workload
/// (`InClusterQueue`); with `preference: PreemptionOverBorrowing` a queue preempts its own
/// workload on on-demand rather than borrowing spot from the lender.
#[test]
fn upstream_schedule_in_queue_preemption_under_fair_sharing() {
    let run1 = |y: &str| {
        let model = gpuquota_model::import_str("t.yaml", y)
            .expect("valid YAML")
            .model;
        let world =
            gpuquota_cohort::testkit::build_unvalidated(&model).unwrap_or_else(|e| panic!("{e}"));
        let settings = settings_from_configuration(None, true).unwrap();
        crate::common::fair_schedule(&world, &model, settings, Some(1)).unwrap()
    };
    let w = |name: &str, q: &str, prio: i32, flavor: Option<&str>| {
        let mut s = format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: {name}, namespace: default, uid: wl-{name}, creationTimestamp: \"2026-01-01T00:00:00Z\"}}\nspec:\n  queueName: {q}\n  priority: {prio}\n  podSets: [{{name: main, count: 1, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: \"4\"}}}}}}]}}}}}}]\n"
        );
        if let Some(f) = flavor {
            s += &format!(
                "status:\n  admission:\n    clusterQueue: {q}\n    podSetAssignments: [{{name: main, count: 1, flavors: {{cpu: {f}}}, resourceUsage: {{cpu: \"4\"}}}}]\n"
            );
        }
        s + "---\n"
    };
    // no cohort
    let mut y = rf("default");
    y += "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: no-cohort-cq}\nspec:\n  namespaceSelector: {}\n  preemption: {withinClusterQueue: LowerPriority}\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors: [{name: default, resources: [{name: cpu, nominalQuota: \"4\"}]}]\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: no-cohort-cq, namespace: default}\nspec: {clusterQueue: no-cohort-cq}\n---\n";
    y += &w("nc-low", "no-cohort-cq", -1, Some("default"));
    y += &w("nc-high", "no-cohort-cq", 100, None);
    let r = run1(&y);
    assert_eq!(
        victims(&r),
        vec![s("default/nc-low", "default/nc-high", "InClusterQueue")]
    );
    // PreemptionOverBorrowing (requests of 4 instead of upstream's 5: same shape)
    let mut y = rf("on-demand") + &rf("spot");
    y += "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: fs-pob-cq}\nspec:\n  cohortName: fs-pob-cohort\n  namespaceSelector: {}\n  fairSharing: {weight: \"1\"}\n  preemption: {withinClusterQueue: LowerPriority}\n  flavorFungibility: {whenCanBorrow: TryNextFlavor, whenCanPreempt: TryNextFlavor, preference: PreemptionOverBorrowing}\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - {name: on-demand, resources: [{name: cpu, nominalQuota: \"4\", borrowingLimit: \"0\"}]}\n    - {name: spot, resources: [{name: cpu, nominalQuota: \"0\", borrowingLimit: \"4\"}]}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: fs-pob-cq, namespace: default}\nspec: {clusterQueue: fs-pob-cq}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: fs-pob-lender}\nspec:\n  cohortName: fs-pob-cohort\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - {name: on-demand, resources: [{name: cpu, nominalQuota: \"0\"}]}\n    - {name: spot, resources: [{name: cpu, nominalQuota: \"4\"}]}\n---\n";
    y += &w("fs-low-pob", "fs-pob-cq", -1, Some("on-demand"));
    y += &w("fs-high-pob", "fs-pob-cq", 0, None);
    let r = run1(&y);
    assert_eq!(
        victims(&r),
        vec![s(
            "default/fs-low-pob",
            "default/fs-high-pob",
            "InClusterQueue"
        )]
    );
    assert!(r.admitted.is_empty());
}

/// Upstream `TestScheduleForAFS` (`scheduler_afs_test.go`): ClusterQueue cq1 (8 CPUs, 8Gi,
/// `UsageBasedAdmissionFairSharing`), LocalQueues lq-a, lq-b, lq-zero (weight 0), half-life
/// 10s, sampling 1s; the initial usage is the LocalQueue's `consumedResources`.
fn afs_upstream(usage: &[(&str, &str)], wls: &[(&str, &str, &str, u32)]) -> ScheduleReport {
    let mut y = String::from(
        "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nadmissionFairSharing:\n  usageHalfLifeTime: 10s\n  usageSamplingInterval: 1s\n---\n",
    );
    y += &rf("default");
    y += "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq1}\nspec:\n  namespaceSelector: {}\n  admissionScope: {admissionMode: UsageBasedAdmissionFairSharing}\n  resourceGroups:\n  - coveredResources: [cpu, memory]\n    flavors: [{name: default, resources: [{name: cpu, nominalQuota: \"8\"}, {name: memory, nominalQuota: 8Gi}]}]\n---\n";
    for (lq, weight) in [
        ("lq-a", "1"),
        ("lq-b", "1"),
        ("lq-c", "1"),
        ("lq-zero", "0"),
    ] {
        y += &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: {lq}, namespace: default}}\nspec: {{clusterQueue: cq1, fairSharing: {{weight: \"{weight}\"}}}}\n"
        );
        if let Some((_, cpu)) = usage.iter().find(|(l, _)| *l == lq) {
            y += &format!(
                "status:\n  fairSharing:\n    weightedShare: 0\n    admissionFairSharingStatus:\n      consumedResources: {{cpu: \"{cpu}\"}}\n      lastUpdate: \"2026-01-01T00:00:00Z\"\n"
            );
        }
        y += "---\n";
    }
    for (name, lq, cpu, second) in wls {
        y += &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: {name}, namespace: default, uid: {name}, creationTimestamp: \"2026-01-01T00:00:{second:02}Z\"}}\nspec:\n  queueName: {lq}\n  podSets: [{{name: one, count: 1, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: \"{cpu}\"}}}}}}]}}}}}}]\n---\n"
        );
    }
    run_configured(&y)
}

/// Upstream "admits workload from less active localqueue": lq-a consumed 8, lq-b 2; wl-b1
/// (newer) is admitted, wl-a1 waits for quota.
#[test]
fn upstream_afs_less_active_local_queue_first() {
    let r = afs_upstream(
        &[("lq-a", "8"), ("lq-b", "2")],
        &[("wl-a1", "lq-a", "8", 0), ("wl-b1", "lq-b", "8", 1)],
    );
    assert_eq!(admitted_names(&r), vec!["default/wl-b1"]);
    let a = pending_of(&r, "default/wl-a1");
    assert_eq!(a.reason, "WaitingForQuota");
    assert_eq!(
        a.message,
        "couldn't assign flavors to pod set one: insufficient unused quota for cpu in flavor default, 8 more needed"
    );
}

/// Upstream "does not prioritize a zero-weight localqueue": a LocalQueue of weight 0 has
/// usage +∞ even when idle, so the older wl-z1 loses to wl-a1.
#[test]
fn upstream_afs_zero_weight_local_queue_last() {
    let r = afs_upstream(
        &[("lq-a", "0"), ("lq-zero", "0")],
        &[("wl-z1", "lq-zero", "8", 0), ("wl-a1", "lq-a", "8", 1)],
    );
    assert_eq!(admitted_names(&r), vec!["default/wl-a1"]);
}

/// Upstream "admits one workload from each localqueue when quota is limited": equal usage
/// (4 each); wl-a1 goes first by time, its entry penalty then puts lq-a behind lq-b, so
/// wl-b1 is next and the 8 CPUs are gone.
#[test]
fn upstream_afs_one_workload_per_local_queue() {
    let r = afs_upstream(
        &[("lq-a", "4"), ("lq-b", "4")],
        &[
            ("wl-a1", "lq-a", "4", 0),
            ("wl-a2", "lq-a", "4", 1),
            ("wl-b1", "lq-b", "4", 2),
            ("wl-b2", "lq-b", "4", 3),
        ],
    );
    assert_eq!(admitted_names(&r), vec!["default/wl-a1", "default/wl-b1"]);
}

/// Admission fair sharing over virtual time (`gpuquota_cohort::afs_clock`), values computed
/// by hand: half-life = sampling interval = 1 minute, so α = 0.5 per sample and the entry
/// penalty of a 4-CPU admission is 2 CPUs. LocalQueue `a` runs 4 CPUs from 0 to 150 s; its
/// consumed usage is 2 (the settled penalty), 3 at 60 s (2·½ + 4·½), 3.5 at 120 s, then
/// decays with nothing admitted: 1.75 at 180 s, 0.875 at 240 s. LocalQueue `b` stays at 0,
/// so at 240 s its workload goes first although `a`'s is older.
#[test]
fn admission_fair_sharing_usage_decays_over_virtual_time() {
    use gpuquota_cohort::fair::{ClockEvent, FairSharing};
    let mut y = String::from(
        "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nadmissionFairSharing:\n  usageHalfLifeTime: 1m\n  usageSamplingInterval: 1m\n---\n",
    );
    y += &rf("f");
    y += "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n  namespaceSelector: {}\n  admissionScope: {admissionMode: UsageBasedAdmissionFairSharing}\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors: [{name: f, resources: [{name: cpu, nominalQuota: \"8\"}]}]\n---\n";
    for lq in ["a", "b"] {
        y += &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: {lq}, namespace: ns}}\nspec: {{clusterQueue: cq}}\n---\n"
        );
    }
    for (name, lq, cpu, created) in [
        ("a1", "a", 4, "00:00:00"),
        ("a2", "a", 8, "00:00:01"),
        ("b2", "b", 8, "00:00:02"),
    ] {
        y += &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: {name}, namespace: ns, creationTimestamp: \"2026-04-01T{created}Z\"}}\nspec:\n  queueName: {lq}\n  podSets: [{{name: main, count: 1, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: \"{cpu}\"}}}}}}]}}}}}}]\n---\n"
        );
    }
    let model = gpuquota_model::import_str("afs.yaml", &y)
        .expect("valid")
        .model;
    let world = gpuquota_cohort::testkit::build(&model).unwrap_or_else(|e| panic!("{e}"));
    let id = |k: &str| {
        world
            .workloads
            .iter()
            .position(|w| w.key == k)
            .map(gpuquota_cohort::ids::WlId::new)
            .expect("workload")
    };
    let (a1, a2, b2) = (id("ns/a1"), id("ns/a2"), id("ns/b2"));
    let settings = settings_from_configuration(model.configuration.as_ref(), false).unwrap();
    let policy = FairSharing::new(&world, &model, settings).unwrap();
    let mut s = gpuquota_cohort::testkit::with_policy(&world, policy);
    for w in world.workloads.ids() {
        s.withhold(w);
    }
    let usage = |s: &gpuquota_cohort::Scheduler<'_, FairSharing>, lq: &str| {
        s.policy().local_queue_usage(lq).expect("a LocalQueue")
    };
    s.clock(&ClockEvent::Start(0));
    s.arrive(a1);
    s.settle(10);
    assert_eq!(s.admitted.len(), 1);
    // the penalty, pushed at admission
    assert_eq!(usage(&s, "ns/a"), 2.0);
    let res = s.reservations()[a1].clone().expect("admitted");
    s.clock(&ClockEvent::RunStarted {
        wl: a1,
        usage: &res.usage,
        at: 0,
    });
    // settled into consumed
    assert_eq!(usage(&s, "ns/a"), 2.0);
    s.clock(&ClockEvent::Advance(59_999));
    assert_eq!(usage(&s, "ns/a"), 2.0);
    s.clock(&ClockEvent::Advance(60_000));
    assert_eq!(usage(&s, "ns/a"), 3.0);
    s.clock(&ClockEvent::Advance(120_000));
    assert_eq!(usage(&s, "ns/a"), 3.5);
    s.clock(&ClockEvent::Advance(150_000));
    assert!(s.finish(a1));
    s.clock(&ClockEvent::RunEnded {
        wl: a1,
        usage: &res.usage,
        at: 150_000,
    });
    s.clock(&ClockEvent::Advance(180_000));
    assert_eq!(usage(&s, "ns/a"), 1.75);
    s.clock(&ClockEvent::Advance(240_000));
    assert_eq!(usage(&s, "ns/a"), 0.875);
    assert_eq!(usage(&s, "ns/b"), 0.0);
    s.arrive(a2);
    s.arrive(b2);
    s.settle(10);
    assert_eq!(s.admitted.len(), 2);
    assert_eq!(
        s.admitted[1].wl, b2,
        "the LocalQueue with less usage goes first"
    );
}
