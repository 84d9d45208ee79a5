//! gpuquota-fairshare: the Kueue fair-sharing tournament order of 1,000 heads in a 3-level
//! cohort tree (root → 10 → 10 → 10 ClusterQueues), and exact water-filling of 10,000 queues.
use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use gpuquota_benches::SplitMix64;
use gpuquota_fairshare::order::{Head, OrderOptions, fair_sharing_order};
use gpuquota_fairshare::tree::{FairShareTree, FairShareTreeBuilder, NodeQuota};
use gpuquota_fairshare::waterfill::{WfQueue, water_fill};
use gpuquota_fairshare::{FlavorResource, FrQuantities};
use gpuquota_model::{Amount, Timestamp};

fn tree_and_heads(seed: u64) -> (FairShareTree, Vec<Head>) {
    let mut rng = SplitMix64::new(seed);
    let frs = [
        FlavorResource::new("a100", "nvidia.com/gpu"),
        FlavorResource::new("h100", "nvidia.com/gpu"),
        FlavorResource::new("default", "cpu"),
    ];
    let mut b = FairShareTreeBuilder::new();
    b.cohort("root", None, 1.0).expect("root");
    let mut heads = Vec::with_capacity(1000);
    for d in 0..10 {
        let dept = format!("dept-{d}");
        b.cohort(&dept, Some("root"), 1.0 + rng.below(3) as f64)
            .expect("dept");
        for t in 0..10 {
            let team = format!("team-{d}-{t}");
            let mut n = b.cohort(&team, Some(&dept), 1.0).expect("team");
            n.quota(frs[0].clone(), NodeQuota::nominal(rng.below(4) as i64));
            for q in 0..10 {
                let cq = format!("cq-{d}-{t}-{q}");
                let mut n = b
                    .cluster_queue(&cq, Some(&team), 1.0 + rng.below(2) as f64)
                    .expect("cq");
                n.quota(frs[0].clone(), NodeQuota::nominal(rng.below(8) as i64));
                n.quota(
                    frs[1].clone(),
                    NodeQuota::nominal(rng.below(4) as i64).with_lending_limit(2),
                );
                n.quota(frs[2].clone(), NodeQuota::nominal(32_000));
                for fr in &frs[..2] {
                    b.usage(&cq, fr.clone(), rng.below(8) as i64);
                }
                let usage: FrQuantities = [
                    (
                        frs[rng.below(2) as usize].clone(),
                        Amount(1 + rng.below(4) as i64),
                    ),
                    (frs[2].clone(), Amount(1000 * (1 + rng.below(8) as i64))),
                ]
                .into_iter()
                .collect();
                heads.push(Head {
                    cluster_queue: cq,
                    workload: format!("ns-{d}/wl-{t}-{q}"),
                    priority: rng.below(3) as i64,
                    queue_order: Timestamp::from_unix_seconds(rng.below(1000) as i64),
                    usage,
                });
            }
        }
    }
    (b.build().expect("tree"), heads)
}

fn waterfill_queues(seed: u64) -> (i64, Vec<WfQueue>) {
    let mut rng = SplitMix64::new(seed);
    let mut total = 0;
    let qs: Vec<WfQueue> = (0..10_000)
        .map(|i| {
            let demand = rng.below(1000) as i64;
            total += demand;
            WfQueue {
                name: format!("q{i:05}"),
                weight: 1 + rng.below(16) as u32,
                floor: rng.below(20) as i64,
                cap: if rng.below(4) == 0 {
                    Some(rng.below(800) as i64)
                } else {
                    None
                },
                demand,
                tier: rng.below(3) as u32,
            }
        })
        .collect();
    (total / 2, qs)
}

fn benches(c: &mut Criterion) {
    let (mut tree, heads) = tree_and_heads(7);
    c.bench_function("fairshare/order_1000_heads_3_level_tree", |b| {
        b.iter_batched(
            || heads.clone(),
            |h| {
                let order = fair_sharing_order(&mut tree, h, OrderOptions::default(), |t, h| {
                    t.cluster_queue(&h.cluster_queue)
                        .is_some_and(|id| t.fits(id, &h.usage))
                })
                .expect("order");
                black_box(order)
            },
            BatchSize::SmallInput,
        )
    });
    let (cap, qs) = waterfill_queues(11);
    c.bench_function("fairshare/water_fill_10000_queues", |b| {
        b.iter(|| black_box(water_fill(black_box(cap), black_box(&qs)).expect("fill")))
    });
}

criterion_group!(fairshare, benches);
criterion_main!(fairshare);
