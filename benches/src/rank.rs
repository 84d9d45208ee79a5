//! The rank (KAI) division input shared by the `rank` bench (B6) and the `division_ir`
//! example, so that the instruction counts and the criterion figures measure the same tree.

use gpuquota_model::Timestamp;
use gpuquota_rank::fixed::SCALE;
use gpuquota_rank::ids::{PerResource, QueueId};
use gpuquota_rank::{Hierarchy, QueueInput, ResourceParams};

use crate::SplitMix64;

/// B6 (a): 10 departments × 10 projects × 100 queues, 3 resources, 3 ranks, weights 1–4
/// (10,110 queues, 10,000 leaves); no historical usage. The same seed gives the same tree.
///
/// # Panics
/// Never for the generated input (the tree is valid by construction).
pub fn division_tree(seed: u64) -> Hierarchy {
    let mut rng = SplitMix64::new(seed);
    let mut qs = Vec::with_capacity(10_110);
    let params = |rng: &mut SplitMix64, leaf: bool| {
        let mut res = [ResourceParams::default(); 3];
        for (r, p) in res.iter_mut().enumerate() {
            let unit = [SCALE, 1000 * SCALE, (1 << 30) * SCALE][r];
            *p = ResourceParams {
                deserved: Some(i128::from(rng.below(8) as u8) * unit),
                weight: i128::from(1 + rng.below(4) as u8) * SCALE,
                limit: if rng.below(4) == 0 {
                    Some(i128::from(4 + rng.below(16) as u8) * unit)
                } else {
                    None
                },
                request: if leaf {
                    i128::from(rng.below(24) as u8) * unit
                } else {
                    0
                },
                usage: 0,
            };
        }
        res
    };
    for d in 0..10 {
        let di = qs.len();
        qs.push(QueueInput {
            name: format!("dep-{d}"),
            parent: None,
            priority: 100,
            creation: None,
            uid: String::new(),
            resources: params(&mut rng, false),
        });
        for p in 0..10 {
            let pi = qs.len();
            qs.push(QueueInput {
                name: format!("proj-{d}-{p}"),
                parent: Some(QueueId::new(di)),
                priority: 90 + 10 * rng.below(3) as i32,
                creation: None,
                uid: String::new(),
                resources: params(&mut rng, false),
            });
            for l in 0..100 {
                qs.push(QueueInput {
                    name: format!("q-{d}-{p}-{l}"),
                    parent: Some(QueueId::new(pi)),
                    priority: 90 + 10 * rng.below(3) as i32,
                    creation: Some(Timestamp::from_unix_seconds(rng.below(1000) as i64)),
                    uid: String::new(),
                    resources: params(&mut rng, true),
                });
            }
        }
    }
    Hierarchy::new(qs).unwrap_or_else(|e| panic!("{e}"))
}

/// B6's cluster totals: 80,000 GPUs, 80,000 cores, 80,000 GiB (nano-units).
pub fn division_totals() -> PerResource<i128> {
    PerResource::new(
        80_000 * SCALE,
        80_000_000 * SCALE,
        (80_000_i128 << 30) * SCALE,
    )
}
