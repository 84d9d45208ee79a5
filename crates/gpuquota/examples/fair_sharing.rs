//! Fair sharing: Kueue's dominant resource share, and exact weighted max-min water-filling.
//!
//! Run with `cargo run -p gpuquota --example fair_sharing`.

use gpuquota::fairshare::FlavorResource;
use gpuquota::fairshare::tree::{FairShareTreeBuilder, NodeQuota};
use gpuquota::fairshare::waterfill::{WfQueue, water_fill};

fn main() -> Result<(), gpuquota::Error> {
    // Kueue: two ClusterQueues with 4 GPUs each in one cohort. "a" runs 6, so it borrows 2 of
    // the 8 its cohort can lend: weightedShare = ceil(2 × 1000 / 8) = 250.
    let gpu = FlavorResource::new("a100", "nvidia.com/gpu");
    let mut b = FairShareTreeBuilder::new();
    b.cluster_queue("a", Some("org"), 1.0)?
        .quota(gpu.clone(), NodeQuota::nominal(4));
    b.cluster_queue("b", Some("org"), 1.0)?
        .quota(gpu.clone(), NodeQuota::nominal(4));
    b.usage("a", gpu, 6);
    let tree = b.build()?;
    for name in ["a", "b"] {
        let queue = tree.cluster_queue(name).expect("declared above");
        let drs = tree.drs(queue);
        println!(
            "ClusterQueue {name}: weightedShare {}",
            drs.weighted_share()
        );
    }
    assert_eq!(
        tree.drs(tree.cluster_queue("a").unwrap()).weighted_share(),
        250
    );

    // Weighted max-min: 100 GPUs, weights 1:2:1, demands 10/80/60. x is capped by its demand
    // and the 90 left are split 2:1 between y and z.
    let queues = [
        WfQueue::new("x", 1, 10),
        WfQueue::new("y", 2, 80),
        WfQueue::new("z", 1, 60),
    ];
    let allocation = water_fill(100, &queues)?;
    for (q, a) in queues.iter().zip(&allocation.allocations) {
        println!("queue {}: {a} GPUs", q.name);
    }
    assert_eq!(allocation.allocations, vec![10, 60, 30]);
    Ok(())
}
