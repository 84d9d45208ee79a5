//! Tournament ordering scenarios (upstream `fair_sharing_iterator.go` and
//! `TestFairSharingIterator`-style cases).

use gpuquota_fairshare::order::{FairSharingOrder, Head, OrderOptions, fair_sharing_order};
use gpuquota_fairshare::tree::{FairShareTree, FairShareTreeBuilder, NodeQuota};
use gpuquota_fairshare::{FlavorResource, FrQuantities};
use gpuquota_model::{Amount, Timestamp};

fn fr(f: &str) -> FlavorResource {
    FlavorResource::new(f, "nvidia.com/gpu")
}

fn head(cq: &str, wl: &str, prio: i64, ts: i64, usage: &[(&str, i64)]) -> Head {
    Head {
        cluster_queue: cq.into(),
        workload: wl.into(),
        priority: prio,
        queue_order: Timestamp::from_unix_seconds(ts),
        usage: usage
            .iter()
            .map(|(f, a)| (fr(f), Amount(*a)))
            .collect::<FrQuantities>(),
    }
}

/// Flat cohort "c" with CQs each nominal `n` on flavor f, given usages and weights.
fn flat(cqs: &[(&str, i64, i64, f64)]) -> FairShareTree {
    let mut b = FairShareTreeBuilder::new();
    for (name, nominal, usage, w) in cqs {
        b.cluster_queue(name, Some("c"), *w)
            .unwrap()
            .quota(fr("f"), NodeQuota::nominal(*nominal));
        b.usage(name, fr("f"), *usage);
    }
    b.build().unwrap()
}

fn order(
    tree: &mut FairShareTree,
    heads: Vec<Head>,
    opts: OrderOptions,
    admit_all: bool,
) -> Vec<String> {
    let names: Vec<String> = heads.iter().map(|h| h.workload.clone()).collect();
    fair_sharing_order(tree, heads, opts, |_, _| admit_all)
        .unwrap()
        .into_iter()
        .map(|i| names[i].clone())
        .collect()
}

#[test]
fn lower_drs_after_admission_wins() {
    // a would borrow 3 (DRS 300), b would borrow 1 (DRS 100): b first.
    let mut t = flat(&[("a", 5, 5, 1.0), ("b", 5, 5, 1.0)]);
    let heads = vec![
        head("a", "wa", 0, 1, &[("f", 3)]),
        head("b", "wb", 0, 2, &[("f", 1)]),
    ];
    assert_eq!(
        order(&mut t, heads, OrderOptions::default(), false),
        ["wb", "wa"]
    );
}

#[test]
fn priority_then_timestamp_break_drs_ties() {
    let mut t = flat(&[("a", 5, 0, 1.0), ("b", 5, 0, 1.0), ("c2", 5, 0, 1.0)]);
    let heads = vec![
        head("a", "wa", 0, 1, &[("f", 1)]),
        head("b", "wb", 10, 5, &[("f", 1)]),
        head("c2", "wc", 0, 0, &[("f", 1)]),
    ];
    // All DRS 0 and not borrowing: priority 10 first, then the earlier timestamp.
    assert_eq!(
        order(&mut t, heads.clone(), OrderOptions::default(), false),
        ["wb", "wc", "wa"]
    );
    // PrioritySortingWithinCohort off: timestamps only.
    let opts = OrderOptions {
        priority_sorting_within_cohort: false,
        ..OrderOptions::default()
    };
    assert_eq!(order(&mut t, heads, opts, false), ["wc", "wa", "wb"]);
}

#[test]
fn admitted_usage_changes_later_pops() {
    // root ─ left{l1 (nominal 1), l2 (nominal 1)} ─ right{r1 (nominal 2)}; no usage.
    // l2's small head wins first (nobody borrows). Once it is admitted, left's usage grows, so
    // l1's head makes left borrow (DRS 250 at the root) and ties with r1's head (250): the
    // earlier r1 goes before l1. Without admissions, left would still not borrow and l1 wins.
    let mut b = FairShareTreeBuilder::new();
    b.cohort("root", None, 1.0).unwrap();
    b.cohort("left", Some("root"), 1.0).unwrap();
    b.cohort("right", Some("root"), 1.0).unwrap();
    b.cluster_queue("l1", Some("left"), 1.0)
        .unwrap()
        .quota(fr("f"), NodeQuota::nominal(1));
    b.cluster_queue("l2", Some("left"), 1.0)
        .unwrap()
        .quota(fr("f"), NodeQuota::nominal(1));
    b.cluster_queue("r1", Some("right"), 1.0)
        .unwrap()
        .quota(fr("f"), NodeQuota::nominal(2));
    let mut t = b.build().unwrap();
    let heads = vec![
        head("l1", "wl1", 0, 5, &[("f", 2)]),
        head("l2", "wl2", 0, 6, &[("f", 1)]),
        head("r1", "wr1", 0, 1, &[("f", 3)]),
    ];
    assert_eq!(
        order(&mut t, heads.clone(), OrderOptions::default(), true),
        ["wl2", "wr1", "wl1"]
    );
    assert_eq!(
        order(&mut t, heads, OrderOptions::default(), false),
        ["wl2", "wl1", "wr1"]
    );
}

#[test]
fn prioritize_non_borrowing_on_requested_flavors() {
    // a borrows heavily on flavor "spot" but its head requests "ondemand", where a is within
    // nominal; b's head would borrow a little on "ondemand". Gate on: a wins (not borrowing on
    // what it requests) despite its higher DRS; gate off: b wins by lower DRS.
    let mut b = FairShareTreeBuilder::new();
    b.cluster_queue("a", Some("c"), 1.0)
        .unwrap()
        .quota(fr("ondemand"), NodeQuota::nominal(5))
        .quota(fr("spot"), NodeQuota::nominal(0));
    b.cluster_queue("b", Some("c"), 1.0)
        .unwrap()
        .quota(fr("ondemand"), NodeQuota::nominal(5))
        .quota(fr("spot"), NodeQuota::nominal(20));
    b.usage("a", fr("spot"), 10).usage("b", fr("ondemand"), 5);
    let mut t = b.build().unwrap();
    let heads = vec![
        head("a", "wa", 0, 2, &[("ondemand", 1)]),
        head("b", "wb", 0, 1, &[("ondemand", 1)]),
    ];
    assert_eq!(
        order(&mut t, heads.clone(), OrderOptions::default(), false),
        ["wa", "wb"]
    );
    let off = OrderOptions {
        prioritize_non_borrowing: false,
        ..OrderOptions::default()
    };
    assert_eq!(order(&mut t, heads, off, false), ["wb", "wa"]);
}

#[test]
fn weight_zero_queue_goes_last_while_borrowing() {
    let mut t = flat(&[("a", 5, 5, 0.0), ("b", 5, 5, 1.0)]);
    let heads = vec![
        head("a", "wa", 100, 0, &[("f", 1)]),
        head("b", "wb", 0, 9, &[("f", 4)]),
    ];
    assert_eq!(
        order(&mut t, heads, OrderOptions::default(), false),
        ["wb", "wa"]
    );
}

#[test]
fn hierarchical_tournament_compares_cohorts_by_their_share() {
    // root ─ left{l1, l2} ─ right{r1}. left already borrows 4 from root; r1's head borrows 2.
    // At the root, left's value is left's DRS with its winner's usage (≥ 400 + …), right's is
    // 200: r1 wins although l2's head alone is tiny.
    let mut b = FairShareTreeBuilder::new();
    b.cohort("root", None, 1.0).unwrap();
    b.cohort("left", Some("root"), 1.0).unwrap();
    b.cohort("right", Some("root"), 1.0).unwrap();
    b.cluster_queue("l1", Some("left"), 1.0)
        .unwrap()
        .quota(fr("f"), NodeQuota::nominal(3));
    b.cluster_queue("l2", Some("left"), 1.0)
        .unwrap()
        .quota(fr("f"), NodeQuota::nominal(3));
    b.cluster_queue("r1", Some("right"), 1.0)
        .unwrap()
        .quota(fr("f"), NodeQuota::nominal(4));
    b.usage("l1", fr("f"), 10);
    let mut t = b.build().unwrap();
    let heads = vec![
        head("l2", "wl2", 0, 0, &[("f", 1)]),
        head("r1", "wr1", 0, 5, &[("f", 6)]),
    ];
    assert_eq!(
        order(&mut t, heads, OrderOptions::default(), false),
        ["wr1", "wl2"]
    );
}

#[test]
fn queues_without_cohort_and_several_trees() {
    let mut b = FairShareTreeBuilder::new();
    b.cluster_queue("solo", None, 1.0)
        .unwrap()
        .quota(fr("f"), NodeQuota::nominal(1));
    b.cluster_queue("x", Some("t1"), 1.0)
        .unwrap()
        .quota(fr("f"), NodeQuota::nominal(1));
    b.cluster_queue("y", Some("t1"), 1.0)
        .unwrap()
        .quota(fr("f"), NodeQuota::nominal(1));
    let mut t = b.build().unwrap();
    let heads = vec![
        head("x", "wx", 0, 0, &[("f", 3)]),
        head("solo", "ws", 0, 0, &[("f", 1)]),
        head("y", "wy", 0, 0, &[("f", 1)]),
    ];
    // The next tree is chosen by smallest remaining ClusterQueue name: solo, then t1 (y < x by
    // DRS), then x.
    assert_eq!(
        order(&mut t, heads, OrderOptions::default(), false),
        ["ws", "wy", "wx"]
    );
}

#[test]
fn errors_and_invalidate() {
    let t = flat(&[("a", 5, 0, 1.0)]);
    assert!(
        FairSharingOrder::new(
            &t,
            vec![head("zz", "w", 0, 0, &[])],
            OrderOptions::default()
        )
        .is_err()
    );
    assert!(
        FairSharingOrder::new(
            &t,
            vec![head("a", "w1", 0, 0, &[]), head("a", "w2", 0, 0, &[])],
            OrderOptions::default()
        )
        .is_err()
    );
    // Invalidation after an out-of-band usage change makes the next pop see it.
    let mut t = flat(&[("a", 5, 5, 1.0), ("b", 5, 5, 1.0), ("c3", 5, 0, 1.0)]);
    let heads = vec![
        head("c3", "w0", 0, 0, &[("f", 1)]),
        head("a", "wa", 0, 1, &[("f", 1)]),
        head("b", "wb", 0, 2, &[("f", 1)]),
    ];
    let mut it = FairSharingOrder::new(&t, heads, OrderOptions::default()).unwrap();
    assert_eq!(it.next_head(&t), Some(0));
    let extra: FrQuantities = [(fr("f"), Amount(3))].into_iter().collect();
    t.add_usage(t.cluster_queue("a").unwrap(), &extra);
    it.invalidate(&t, "a");
    assert_eq!(it.next_head(&t), Some(2));
    assert_eq!(it.next_head(&t), Some(1));
    assert_eq!(it.next_head(&t), None);
}
