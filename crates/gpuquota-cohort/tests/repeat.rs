//! Skipping the proven periods of a run that repeats (a preemption loop) gives exactly the
//! records, cycle count and final state of running every cycle.

use gpuquota_cohort::{ScheduleReport, Scheduler, World};
use gpuquota_testkit::{Shape, platform};
use proptest::prelude::*;

use crate::common::*;

fn report(w: &World, cycles: Option<u32>, skip: bool) -> (ScheduleReport, u32) {
    let mut s = Scheduler::new(w);
    s.run_with(cycles, skip);
    (ScheduleReport::from_scheduler(w, &s), s.skipped_cycles())
}

/// Both runs as JSON text (the contract's bytes), and the cycles the fast one skipped.
fn both(w: &World, cycles: Option<u32>) -> (String, String, u32) {
    let (fast, skipped) = report(w, cycles, true);
    let (plain, none) = report(w, cycles, false);
    assert_eq!(none, 0, "the plain loop skips nothing");
    (
        serde_json::to_string(&fast).expect("JSON"),
        serde_json::to_string(&plain).expect("JSON"),
        skipped,
    )
}

/// A flat cohort of ClusterQueues like the 1,000-queue benchmark snapshot's (two flavors,
/// `reclaimWithinCohort: Any`, `withinClusterQueue: LowerPriority`, borrowing and lending
/// limits), with `pending` workloads of three priorities: such platforms run into
/// preempt/readmit loops.
fn looping_platform(queues: &[(u8, u8, u8, u8)], pending: &[(u8, u8, u8, u8)]) -> String {
    let mut y = rf("on-demand");
    y += &rf("spot");
    y += &cohort("c", None, &[]);
    let extra = "preemption: {reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}";
    let n: Vec<[String; 4]> = queues
        .iter()
        .map(|&(a, b, bl, ll)| {
            [
                a.to_string(),
                b.to_string(),
                bl.to_string(),
                ll.min(a).to_string(),
            ]
        })
        .collect();
    for (i, q) in n.iter().enumerate() {
        y += &cq(
            &format!("q{i}"),
            Some("c"),
            extra,
            &[vec![
                (
                    "on-demand",
                    vec![("nvidia.com/gpu", &q[0], Some(&q[2]), Some(&q[3]))],
                ),
                ("spot", vec![("nvidia.com/gpu", &q[1], None, None)]),
            ]],
        );
    }
    for (i, &(q, prio, count, gpus)) in pending.iter().enumerate() {
        let q = usize::from(q) % queues.len().max(1);
        let g = gpus.to_string();
        y += &wl(
            &format!("w{i}"),
            &format!("q{q}"),
            [100, 500, 1000][usize::from(prio) % 3],
            i as u32,
            i32::from(count),
            &[("nvidia.com/gpu", &g)],
        );
    }
    y
}

/// The hierarchical loop of the reliability tests (victim at borrowing level 1, preemptor
/// at level 2): period 2 from cycle 2, to the bound of `4 × 2 + 64` cycles.
#[test]
fn a_period_two_loop_is_skipped_with_identical_output() {
    let mut y = rf("f");
    y += &cohort("root", None, &[]);
    y += &cohort("sub", Some("root"), &[]);
    let bwc = "preemption: {reclaimWithinCohort: Any, withinClusterQueue: LowerPriority, borrowWithinCohort: {policy: LowerPriority}}";
    y += &cq("q0", Some("root"), bwc, &[vec![gpu("f", "1")]]);
    y += &cq(
        "q1",
        Some("sub"),
        "preemption: {reclaimWithinCohort: LowerPriority, borrowWithinCohort: {policy: LowerPriority}}",
        &[vec![gpu("f", "2")]],
    );
    y += &cq("q2", Some("sub"), bwc, &[vec![gpu("f", "0")]]);
    y += &wl("w0", "q2", 0, 0, 1, &[("nvidia.com/gpu", "2")]);
    y += &wl("w1", "q1", 2, 1, 1, &[("nvidia.com/gpu", "3")]);
    let w = world(&y);
    let (fast, plain, skipped) = both(&w, None);
    assert_eq!(fast, plain);
    let v: serde_json::Value = serde_json::from_str(&fast).expect("JSON");
    assert_eq!(v["cycles"], 72);
    assert_eq!(v["preempted"].as_array().map(Vec::len), Some(36));
    // the detector needs 2 periods of matching signatures and 1 period of proof; the rest
    // (all whole periods left before the bound) is skipped
    assert!(skipped >= 60, "skipped {skipped}");
    assert_eq!(skipped % 2, 0);
    // every cut-off, odd and even, lands on the same state as running each cycle
    for cycles in 1..=80 {
        let (fast, plain, _) = both(&w, Some(cycles));
        assert_eq!(fast, plain, "--cycles {cycles}");
    }
}

/// A converging run skips nothing.
#[test]
fn a_converging_run_skips_nothing() {
    let y = looping_platform(&[(4, 2, 2, 1), (4, 2, 2, 1)], &[(0, 1, 1, 2), (1, 2, 1, 2)]);
    let w = world(&y);
    let (fast, plain, skipped) = both(&w, None);
    assert_eq!(fast, plain);
    assert_eq!(skipped, 0);
}

fn queue() -> impl Strategy<Value = (u8, u8, u8, u8)> {
    (0u8..9, 0u8..9, 0u8..6, 0u8..9)
}

fn workload() -> impl Strategy<Value = (u8, u8, u8, u8)> {
    (any::<u8>(), 0u8..3, 1u8..4, 0u8..4)
}

proptest! {
    #![proptest_config(gpuquota_testkit::config(64))]

    /// Loop-prone flat cohorts: the run with proven periods skipped prints the same JSON as
    /// the plain loop, to the bound and at any `--cycles` cut-off.
    #[test]
    fn skipping_repeats_equals_the_plain_loop_on_looping_platforms(
        queues in prop::collection::vec(queue(), 2..7),
        pending in prop::collection::vec(workload(), 2..40),
        cut in 1u32..120,
    ) {
        let w = world(&looping_platform(&queues, &pending));
        let (fast, plain, _) = both(&w, None);
        prop_assert_eq!(fast, plain);
        let (fast, plain, _) = both(&w, Some(cut));
        prop_assert_eq!(fast, plain);
    }

    /// The workspace's random platforms (hierarchies, every preemption setting, admitted
    /// workloads, StrictFIFO): the same equality.
    #[test]
    fn skipping_repeats_equals_the_plain_loop_on_random_platforms(
        s in platform(Shape::default()),
        cut in 1u32..60,
    ) {
        let w = world(&s.documents().concat());
        let (fast, plain, _) = both(&w, None);
        prop_assert_eq!(fast, plain);
        let (fast, plain, _) = both(&w, Some(cut));
        prop_assert_eq!(fast, plain);
    }
}

/// The loop-prone generator does produce skipped periods (so the properties above test the
/// skipping, not only the plain loop): over a fixed set of seeds, some runs loop.
#[test]
fn looping_platforms_do_loop() {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % m) as u8
    };
    let mut skipping = 0;
    for _ in 0..40 {
        let queues: Vec<_> = (0..4)
            .map(|_| (next(9), next(9), next(6), next(9)))
            .collect();
        let pending: Vec<_> = (0..30)
            .map(|_| (next(256), next(3), 1 + next(3), next(4)))
            .collect();
        let w = world(&looping_platform(&queues, &pending));
        let (fast, plain, skipped) = both(&w, None);
        assert_eq!(fast, plain);
        if skipped > 0 {
            skipping += 1;
        }
    }
    assert!(skipping >= 2, "only {skipping} of 40 runs skipped a period");
}
