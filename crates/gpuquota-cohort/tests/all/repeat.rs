//! Skipping the proven periods of a run that repeats (a preemption loop) gives exactly the
//! records, cycle count and final state of running every cycle.

use gpuquota_cohort::{ScheduleReport, World};
use gpuquota_testkit::{Shape, platform};
use proptest::prelude::*;

use crate::common::*;

fn report(w: &World, cycles: Option<u32>, skip: bool) -> (ScheduleReport, u32) {
    let mut s = gpuquota_cohort::testkit::scheduler(w);
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

/// `cohorts` flat cohorts of ClusterQueues like the 1,000-queue benchmark snapshot's (two
/// flavors, `reclaimWithinCohort: Any`, `withinClusterQueue: LowerPriority`, borrowing and
/// lending limits; queue `i` in cohort `i mod cohorts`), with `pending` workloads of three
/// priorities: such platforms run into preempt/readmit loops, one per cohort, each with its
/// own period.
fn looping_platform(
    cohorts: usize,
    queues: &[(u8, u8, u8, u8)],
    pending: &[(u8, u8, u8, u8)],
) -> String {
    let mut y = rf("on-demand");
    y += &rf("spot");
    for c in 0..cohorts {
        y += &cohort(&format!("c{c}"), None, &[]);
    }
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
            Some(&format!("c{}", i % cohorts)),
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

/// `trees` copies of the reliability tests' hierarchical loop (in tree `t`: cohorts `r{t}` >
/// `s{t}`, queues `a{t}` (root), `b{t}`, `c{t}` (sub); `v{t}` borrows at level 1 in `c{t}`,
/// its preemptor `p{t}` in `b{t}` needs level 2) plus `extra` workloads `(tree, queue,
/// priority, gpus)` that change each tree's loop or end it.
fn loop_trees(trees: usize, extra: &[(u8, u8, u8, u8)]) -> String {
    let mut y = rf("f");
    for t in 0..trees {
        let name = |prefix: &str| format!("{prefix}{t}");
        y += &hierarchical_loop(&LoopNames {
            root: &name("r"),
            sub: &name("s"),
            lender: &name("a"),
            preemptor_queue: &name("b"),
            victim_queue: &name("c"),
            victim: &name("v"),
            preemptor: &name("p"),
        });
    }
    for (i, &(t, q, prio, gpus)) in extra.iter().enumerate() {
        let t = usize::from(t) % trees.max(1);
        let q = ["a", "b", "c"][usize::from(q) % 3];
        let g = gpus.to_string();
        y += &wl(
            &format!("x{i}"),
            &format!("{q}{t}"),
            i32::from(prio % 4),
            2 + i as u32,
            1,
            &[("nvidia.com/gpu", &g)],
        );
    }
    y
}

/// The hierarchical loop of the reliability tests (victim at borrowing level 1, preemptor
/// at level 2): period 2 from cycle 2, to the bound of `4 × 2 + 64` cycles.
#[test]
fn a_period_two_loop_is_skipped_with_identical_output() {
    let y = classical_loop_yaml();
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
    let y = looping_platform(
        1,
        &[(4, 2, 2, 1), (4, 2, 2, 1)],
        &[(0, 1, 1, 2), (1, 2, 1, 2)],
    );
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

    /// Loop-prone flat cohorts (one to three trees, each replayed on its own once it
    /// repeats): the run with replayed trees prints the same JSON as the plain loop, to the
    /// bound and at any `--cycles` cut-off.
    #[test]
    fn skipping_repeats_equals_the_plain_loop_on_looping_platforms(
        cohorts in 1usize..4,
        queues in prop::collection::vec(queue(), 2..9),
        pending in prop::collection::vec(workload(), 2..60),
        cut in 1u32..120,
    ) {
        let w = world(&looping_platform(cohorts, &queues, &pending));
        let (fast, plain, _) = both(&w, None);
        prop_assert_eq!(fast, plain);
        let (fast, plain, _) = both(&w, Some(cut));
        prop_assert_eq!(fast, plain);
    }

    /// Independent copies of a preempt/readmit loop, disturbed by random workloads: trees
    /// freeze at different cycles with different periods and their records interleave.
    #[test]
    fn skipping_repeats_equals_the_plain_loop_on_loop_trees(
        trees in 1usize..5,
        extra in prop::collection::vec((any::<u8>(), any::<u8>(), any::<u8>(), 0u8..4), 0..12),
        cut in 1u32..120,
    ) {
        let w = world(&loop_trees(trees, &extra));
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

/// The generators above do replay (so the properties test the replay, not only the plain
/// loop): over a fixed set of seeds, most disturbed loop trees still loop and are replayed.
#[test]
fn loop_trees_are_replayed() {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % m) as u8
    };
    let mut replayed = 0;
    for round in 0..20 {
        let extra: Vec<_> = (0..round % 6)
            .map(|_| (next(4), next(3), next(4), next(4)))
            .collect();
        let w = world(&loop_trees(1 + round % 4, &extra));
        let (fast, plain, skipped) = both(&w, None);
        assert_eq!(fast, plain, "round {round}");
        if skipped > 0 {
            replayed += 1;
        }
    }
    assert!(replayed >= 10, "only {replayed} of 20 runs were replayed");
}
