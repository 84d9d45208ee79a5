//! Fair-sharing preemption scenarios (upstream `fairPreemptions`,
//! `TestFairPreemptions`-style cases). Flat cohort "c", one flavor, unit-sized quotas.

use gpuquota_fairshare::preemption::{
    Candidate, FairSharingStrategy, PreemptionReason, PreemptionRequest, Target, fair_preemptions,
    fair_preemptions_in_tree,
};
use gpuquota_fairshare::tree::{FairShareTree, FairShareTreeBuilder, NodeQuota};
use gpuquota_fairshare::{FlavorResource, FrQuantities};
use gpuquota_model::Amount;

fn fr() -> FlavorResource {
    FlavorResource::new("default", "cpu")
}

fn q(a: i64) -> FrQuantities {
    [(fr(), Amount(a))].into_iter().collect()
}

/// CQs (name, nominal, weight) in cohort "c"; workloads (cq, size) admitted.
fn setup(cqs: &[(&str, i64, f64)], wls: &[(&str, i64)]) -> (FairShareTree, Vec<Candidate>) {
    let mut b = FairShareTreeBuilder::new();
    for (n, nominal, w) in cqs {
        b.cluster_queue(n, Some("c"), *w)
            .unwrap()
            .quota(fr(), NodeQuota::nominal(*nominal));
    }
    let mut cands = Vec::new();
    for (cq, size) in wls {
        b.usage(cq, fr(), *size);
        cands.push(Candidate {
            cluster_queue: cq.to_string(),
            usage: q(*size),
        });
    }
    (b.build().unwrap(), cands)
}

fn run(
    tree: &mut FairShareTree,
    cq: &str,
    size: i64,
    cands: &[Candidate],
    strategies: &[FairSharingStrategy],
    within_nominal: bool,
) -> Vec<Target> {
    let usage = q(size);
    let frs = [fr()];
    let req = PreemptionRequest {
        cluster_queue: cq,
        usage: &usage,
        frs_need_preemption: &frs,
        candidates: cands,
        strategies,
        preempt_within_nominal: within_nominal,
    };
    let before = format!("{tree:?}");
    let out = fair_preemptions_in_tree(tree, &req).unwrap();
    assert_eq!(
        format!("{tree:?}"),
        before,
        "the tree must be left unchanged"
    );
    out
}

use FairSharingStrategy::{LessThanInitialShare as S2B, LessThanOrEqualToFinalShare as S2A};

#[test]
fn s2a_preempts_when_preemptor_stays_at_or_below_target_final_share() {
    // a: nominal 3, using 3; b: nominal 3, using 6 (six 1-unit workloads); c0: nominal 3 idle.
    // a + 1 → 111; b old 333, b after removing one → 222: 111 ≤ 222 → InCohortFairSharing.
    let (mut t, cands) = setup(
        &[("a", 3, 1.0), ("b", 3, 1.0), ("c0", 3, 1.0)],
        &[
            ("a", 3),
            ("b", 1),
            ("b", 1),
            ("b", 1),
            ("b", 1),
            ("b", 1),
            ("b", 1),
        ],
    );
    let others: Vec<Candidate> = cands[1..].to_vec();
    let got = run(&mut t, "a", 1, &others, &[S2A, S2B], true);
    assert_eq!(
        got,
        vec![Target {
            candidate: 0,
            reason: PreemptionReason::InCohortFairSharing
        }]
    );
}

#[test]
fn s2a_refuses_when_preemptor_would_end_above_target() {
    // a + 2 → 222; b 333 → 222 after one removal: allowed (≤); but then a still needs 1 more
    // and b's next removal would leave b at 111 < 222: refused. S2-b: 222 < 222 is false.
    let (mut t, cands) = setup(
        &[("a", 3, 1.0), ("b", 3, 1.0), ("c0", 3, 1.0)],
        &[
            ("a", 3),
            ("b", 1),
            ("b", 1),
            ("b", 1),
            ("b", 1),
            ("b", 1),
            ("b", 1),
        ],
    );
    let others: Vec<Candidate> = cands[1..7].to_vec();
    assert_eq!(run(&mut t, "a", 2, &others, &[S2A, S2B], true), vec![]);
}

#[test]
fn s2b_rescues_what_s2a_refuses() {
    // a + 2 → 222; b uses 6 as three 2-unit workloads (333). Removing one leaves b at 111:
    // S2-a (222 ≤ 111) refuses; S2-b (222 < 333) takes b's first candidate.
    let (mut t, cands) = setup(
        &[("a", 3, 1.0), ("b", 3, 1.0), ("c0", 3, 1.0)],
        &[("a", 3), ("b", 2), ("b", 2), ("b", 2)],
    );
    let others: Vec<Candidate> = cands[1..4].to_vec();
    let both = run(&mut t, "a", 2, &others, &[S2A, S2B], true);
    assert_eq!(
        both,
        vec![Target {
            candidate: 0,
            reason: PreemptionReason::InCohortFairSharing
        }]
    );
    // Only LessThanOrEqualToFinalShare configured: nothing.
    assert_eq!(run(&mut t, "a", 2, &others, &[S2A], true), vec![]);
    // Only LessThanInitialShare configured: used as the first (and only) strategy.
    assert_eq!(run(&mut t, "a", 2, &others, &[S2B], true), both);
}

#[test]
fn preemptor_within_nominal_reclaims_unconditionally() {
    // a: nominal 3, using 1, wants 2 → stays within nominal. b borrows 3 as one 3-unit
    // workload; c0 is full. Gate on: InCohortReclamation. Gate off: S2-a still allows it
    // (a's share 0 ≤ b's final 0) but the reason is InCohortFairSharing.
    let (mut t, cands) = setup(
        &[("a", 3, 1.0), ("b", 3, 1.0), ("c0", 3, 1.0)],
        &[("a", 1), ("b", 3), ("b", 3), ("c0", 2)],
    );
    let others: Vec<Candidate> = cands[1..3].to_vec();
    let on = run(&mut t, "a", 2, &others, &[S2A, S2B], true);
    assert_eq!(
        on,
        vec![Target {
            candidate: 0,
            reason: PreemptionReason::InCohortReclamation
        }]
    );
    let off = run(&mut t, "a", 2, &others, &[S2A, S2B], false);
    assert_eq!(off.len(), 1);
    assert_eq!(off[0].reason, PreemptionReason::InCohortFairSharing);
}

#[test]
fn own_queue_candidates_are_in_cluster_queue() {
    // A ClusterQueue without a cohort preempts its own workloads.
    let mut b = FairShareTreeBuilder::new();
    b.cluster_queue("solo", None, 1.0)
        .unwrap()
        .quota(fr(), NodeQuota::nominal(4));
    b.usage("solo", fr(), 4);
    let mut t = b.build().unwrap();
    let cands = vec![
        Candidate {
            cluster_queue: "solo".into(),
            usage: q(1),
        },
        Candidate {
            cluster_queue: "solo".into(),
            usage: q(3),
        },
    ];
    let got = run(&mut t, "solo", 2, &cands, &[], true);
    // Greedy: 1 (no fit), 3 (fits); fill-back re-adds 1 and still fits → only the 3.
    assert_eq!(
        got,
        vec![Target {
            candidate: 1,
            reason: PreemptionReason::InClusterQueue
        }]
    );
}

#[test]
fn highest_share_queue_is_targeted_first_and_zero_weight_first_of_all() {
    // b borrows 2 (222), d borrows 1 with weight 0 (+∞): d is the first target.
    let (mut t, cands) = setup(
        &[("a", 3, 1.0), ("b", 3, 1.0), ("d", 3, 0.0)],
        &[("b", 5), ("d", 4)],
    );
    let got = run(&mut t, "a", 1, &cands, &[S2A, S2B], true);
    assert_eq!(
        got,
        vec![Target {
            candidate: 1,
            reason: PreemptionReason::InCohortReclamation
        }]
    );
    // Preemptor borrowing: a (3 used, nominal 3) + 1 → 111; d borrows with weight 0 (+∞) and
    // stays +∞ after losing one 1-unit workload: S2-a (111 ≤ +∞) allows.
    let (mut t, cands) = setup(
        &[("a", 3, 1.0), ("b", 3, 1.0), ("d", 3, 0.0)],
        &[
            ("a", 3),
            ("d", 1),
            ("d", 1),
            ("d", 1),
            ("d", 1),
            ("d", 1),
            ("b", 1),
        ],
    );
    let got = run(&mut t, "a", 1, &cands[1..6], &[S2A, S2B], true);
    assert_eq!(
        got,
        vec![Target {
            candidate: 0,
            reason: PreemptionReason::InCohortFairSharing
        }]
    );
}

#[test]
fn custom_fit_oracle_and_fill_back() {
    // The engine's oracle sees which candidates are removed; here: fits once 3 units are free.
    let (mut t, cands) = setup(
        &[("a", 3, 1.0), ("b", 3, 1.0)],
        &[("b", 1), ("b", 2), ("b", 3)],
    );
    let usage = q(3);
    let frs = [fr()];
    let req = PreemptionRequest {
        cluster_queue: "a",
        usage: &usage,
        frs_need_preemption: &frs,
        candidates: &cands,
        strategies: &[],
        preempt_within_nominal: true,
    };
    let got = fair_preemptions(&mut t, &req, |_, removed| {
        removed
            .iter()
            .map(|i| cands[*i].usage[&fr()].0)
            .sum::<i64>()
            >= 3
    })
    .unwrap();
    // Greedy takes 1 then 2 (fits); fill-back: re-adding 1 leaves only 2 → does not fit.
    let ids: Vec<usize> = got.iter().map(|t| t.candidate).collect();
    assert_eq!(ids, vec![0, 1]);
}

#[test]
fn unknown_queue_is_an_error() {
    let (mut t, _) = setup(&[("a", 3, 1.0)], &[]);
    let usage = q(1);
    let req = PreemptionRequest {
        cluster_queue: "nope",
        usage: &usage,
        frs_need_preemption: &[],
        candidates: &[],
        strategies: &[],
        preempt_within_nominal: true,
    };
    assert!(fair_preemptions_in_tree(&mut t, &req).is_err());
}
