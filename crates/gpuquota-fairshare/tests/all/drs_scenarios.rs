//! DRS values pinned to upstream `TestDominantResourceShare` cases
//! (`pkg/cache/scheduler/fair_sharing_test.go`) and the worked example of `gpuquota::design`.

use gpuquota_fairshare::tree::{FairShareTree, FairShareTreeBuilder, NodeQuota};
use gpuquota_fairshare::{FlavorResource, FrQuantities};
use gpuquota_model::Amount;

fn fr(f: &str, r: &str) -> FlavorResource {
    FlavorResource::new(f, r)
}

/// `cq` and `lending-cq` in `test-cohort`, with quotas per (flavor, resource) in Kueue units.
fn pair(
    cq: &[(&str, &str, i64)],
    cq_weight: f64,
    lending: &[(&str, &str, i64, Option<i64>)],
    usage: &[(&str, &str, i64)],
) -> FairShareTree {
    let mut b = FairShareTreeBuilder::new();
    {
        let mut n = b
            .cluster_queue("cq", Some("test-cohort"), cq_weight)
            .unwrap();
        for (f, r, q) in cq {
            n.quota(fr(f, r), NodeQuota::nominal(*q));
        }
    }
    {
        let mut n = b
            .cluster_queue("lending-cq", Some("test-cohort"), 1.0)
            .unwrap();
        for (f, r, q, ll) in lending {
            let mut rq = NodeQuota::nominal(*q);
            rq.lending_limit = ll.map(Amount);
            n.quota(fr(f, r), rq);
        }
    }
    for (f, r, a) in usage {
        b.usage("cq", fr(f, r), *a);
    }
    b.build().unwrap()
}

fn share(t: &FairShareTree, name: &str) -> (i64, Option<String>) {
    let d = t.drs(t.cluster_queue(name).or(t.cohort(name)).unwrap());
    (
        d.weighted_share(),
        d.dominant_resource.map(|r| r.as_str().to_string()),
    )
}

const GPU: &str = "example.com/gpu";

#[test]
fn upstream_usage_below_nominal_is_zero() {
    let t = pair(
        &[("default", "cpu", 2000), ("default", GPU, 5)],
        1.0,
        &[("default", "cpu", 8000, None), ("default", GPU, 5, None)],
        &[("default", "cpu", 1000), ("default", GPU, 2)],
    );
    assert_eq!(share(&t, "cq"), (0, None));
    assert_eq!(share(&t, "lending-cq"), (0, None));
    assert_eq!(share(&t, "test-cohort"), (0, None));
}

#[test]
fn upstream_usage_above_nominal_gpu_dominates() {
    // (7 − 5) × 1000 / 10 = 200 on the GPU; cpu (3 − 2) × 1000 / 10 = 100.
    let t = pair(
        &[("default", "cpu", 2000), ("default", GPU, 5)],
        1.0,
        &[("default", "cpu", 8000, None), ("default", GPU, 5, None)],
        &[("default", "cpu", 3000), ("default", GPU, 7)],
    );
    assert_eq!(share(&t, "cq"), (200, Some(GPU.into())));
}

#[test]
fn upstream_one_resource_above_nominal() {
    let t = pair(
        &[("default", "cpu", 2000), ("default", GPU, 5)],
        1.0,
        &[("default", "cpu", 8000, None), ("default", GPU, 5, None)],
        &[("default", "cpu", 3000), ("default", GPU, 3)],
    );
    assert_eq!(share(&t, "cq"), (100, Some("cpu".into())));
}

#[test]
fn upstream_usage_with_workload_above_nominal() {
    // Simulated workload request cpu 4, gpu 4 on top of usage cpu 1, gpu 2:
    // cpu (1 + 4 − 2) × 1000 / 10 = 300 > gpu (2 + 4 − 5) × 1000 / 10 = 100.
    let t = pair(
        &[("default", "cpu", 2000), ("default", GPU, 5)],
        1.0,
        &[("default", "cpu", 8000, None), ("default", GPU, 5, None)],
        &[("default", "cpu", 1000), ("default", GPU, 2)],
    );
    let req: FrQuantities = [
        (fr("default", "cpu"), Amount(4000)),
        (fr("default", GPU), Amount(4)),
    ]
    .into_iter()
    .collect();
    let path = t.drs_path_with(t.cluster_queue("cq").unwrap(), &req);
    assert_eq!(path[0].1.weighted_share(), 300);
    assert_eq!(
        path[0].1.dominant_resource.as_ref().unwrap().as_str(),
        "cpu"
    );
}

#[test]
fn upstream_resource_with_zero_lendable() {
    // GPUs have lendingLimit 0 everywhere: lendable GPU = 0, so only cpu counts.
    let mut b = FairShareTreeBuilder::new();
    b.cluster_queue("cq", Some("test-cohort"), 1.0)
        .unwrap()
        .quota(fr("default", "cpu"), NodeQuota::nominal(2000))
        .quota(
            fr("default", GPU),
            NodeQuota::nominal(2).with_lending_limit(0),
        );
    b.cluster_queue("lending-cq", Some("test-cohort"), 1.0)
        .unwrap()
        .quota(fr("default", "cpu"), NodeQuota::nominal(8000))
        .quota(
            fr("default", GPU),
            NodeQuota::nominal(64).with_lending_limit(0),
        );
    b.usage("cq", fr("default", "cpu"), 1000)
        .usage("cq", fr("default", GPU), 1);
    let t = b.build().unwrap();
    let req: FrQuantities = [
        (fr("default", "cpu"), Amount(4000)),
        (fr("default", GPU), Amount(4)),
    ]
    .into_iter()
    .collect();
    let path = t.drs_path_with(t.cluster_queue("cq").unwrap(), &req);
    assert_eq!(path[0].1.weighted_share(), 300);
}

#[test]
fn upstream_multiple_flavors_aggregate_per_resource() {
    // on-demand 20 + spot 80 in cq, default 100 in lending-cq: lendable cpu = 200.
    // Usage on-demand 15 + request 10 → 5 borrowed; spot 5 under nominal → 25.
    let t = pair(
        &[("on-demand", "cpu", 20_000), ("spot", "cpu", 80_000)],
        1.0,
        &[("default", "cpu", 100_000, None)],
        &[("on-demand", "cpu", 15_000), ("spot", "cpu", 5_000)],
    );
    let req: FrQuantities = [(fr("on-demand", "cpu"), Amount(10_000))]
        .into_iter()
        .collect();
    let path = t.drs_path_with(t.cluster_queue("cq").unwrap(), &req);
    assert_eq!(path[0].1.weighted_share(), 25);
}

#[test]
fn upstream_integer_and_decimal_weights() {
    let mk = |w| {
        pair(
            &[("default", GPU, 5)],
            w,
            &[("default", GPU, 5, None)],
            &[("default", GPU, 7)],
        )
    };
    assert_eq!(share(&mk(2.0), "cq"), (100, Some(GPU.into())));
    assert_eq!(share(&mk(0.5), "cq"), (400, Some(GPU.into())));
    assert_eq!(share(&mk(1.0), "cq"), (200, Some(GPU.into())));
}

#[test]
fn upstream_slightly_above_nominal_rounds_up_to_one() {
    // 1 × 1000 / 1500 = 0.67 → ceil → 1 (the v0.13 rounding fix, #6925).
    let t = pair(
        &[("default", GPU, 500)],
        1.0,
        &[("default", GPU, 1000, None)],
        &[("default", GPU, 501)],
    );
    assert_eq!(share(&t, "cq"), (1, Some(GPU.into())));
    // 300 × 1000 / 1500 / 300 = 0.67 → 1.
    let t = pair(
        &[("default", GPU, 500)],
        300.0,
        &[("default", GPU, 1000, None)],
        &[("default", GPU, 800)],
    );
    assert_eq!(share(&t, "cq"), (1, Some(GPU.into())));
}

#[test]
fn weight_zero_borrowing_is_max_int64_and_within_nominal_is_zero() {
    let t = pair(
        &[("default", GPU, 5)],
        0.0,
        &[("default", GPU, 5, None)],
        &[("default", GPU, 7)],
    );
    assert_eq!(share(&t, "cq").0, i64::MAX);
    let t = pair(
        &[("default", GPU, 5)],
        0.0,
        &[("default", GPU, 5, None)],
        &[("default", GPU, 5)],
    );
    assert_eq!(share(&t, "cq"), (0, None));
}

#[test]
fn worked_example_a2_is_50() {
    // The worked example of `gpuquota::design`.
    let f = fr("f", "cpu");
    let mut b = FairShareTreeBuilder::new();
    b.cohort("root", None, 1.0).unwrap();
    b.cohort("teamA", Some("root"), 1.0).unwrap().quota(
        f.clone(),
        NodeQuota::nominal(4)
            .with_borrowing_limit(6)
            .with_lending_limit(2),
    );
    b.cluster_queue("a1", Some("teamA"), 1.0)
        .unwrap()
        .quota(f.clone(), NodeQuota::nominal(10).with_lending_limit(4));
    b.cluster_queue("a2", Some("teamA"), 1.0)
        .unwrap()
        .quota(f.clone(), NodeQuota::nominal(6).with_borrowing_limit(3));
    b.cluster_queue("b1", Some("root"), 1.0)
        .unwrap()
        .quota(f.clone(), NodeQuota::nominal(8));
    b.usage("a1", f.clone(), 9)
        .usage("a2", f.clone(), 7)
        .usage("b1", f, 5);
    let t = b.build().unwrap();
    assert_eq!(share(&t, "a2"), (50, Some("cpu".into())));
    // a1 is within nominal (9 ≤ 10); teamA is within its subtree quota (10 ≤ 14); root has none.
    assert_eq!(share(&t, "a1"), (0, None));
    assert_eq!(share(&t, "teamA"), (0, None));
    assert_eq!(share(&t, "root"), (0, None));
}

#[test]
fn hierarchical_cohort_weights() {
    // root ─ left (weight 2) ─ l1 (nominal 0) ; root ─ r1 (nominal 10).
    // l1 uses 4: left borrows 4 of root's lendable 10 → 400 / 2 = 200 for the cohort.
    let g = fr("a100", GPU);
    let mut b = FairShareTreeBuilder::new();
    b.cohort("root", None, 1.0).unwrap();
    b.cohort("left", Some("root"), 2.0).unwrap();
    b.cluster_queue("l1", Some("left"), 1.0)
        .unwrap()
        .quota(g.clone(), NodeQuota::nominal(0));
    b.cluster_queue("r1", Some("root"), 1.0)
        .unwrap()
        .quota(g.clone(), NodeQuota::nominal(10));
    b.usage("l1", g, 4);
    let t = b.build().unwrap();
    assert_eq!(share(&t, "left"), (200, Some(GPU.into())));
    // l1 borrows 4 of what its parent can offer (potentialAvailable(left) = 10) → 400.
    assert_eq!(share(&t, "l1"), (400, Some(GPU.into())));
}
