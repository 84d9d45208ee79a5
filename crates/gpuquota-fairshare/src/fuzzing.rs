//! Check functions for the fuzz targets and the arbtest smoke test (feature `fuzzing`).
//!
//! Each function builds an input from raw bytes, runs the engine and panics on a violated
//! invariant; errors for invalid inputs are fine.

use arbitrary::{Arbitrary, Unstructured};
use gpuquota_model::{Amount, Timestamp};

use crate::drs::{FlavorResource, FrQuantities};
use crate::order::{Head, OrderOptions, fair_sharing_order};
use crate::tree::{FairShareTree, FairShareTreeBuilder, NodeQuota};
use crate::waterfill::{WfQueue, water_fill};

/// Water-filling: floors, caps and work conservation hold whenever a result is returned.
pub fn check_water_fill(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let cap = i64::from(u16::arbitrary(&mut u).unwrap_or(0));
    let n = usize::from(u8::arbitrary(&mut u).unwrap_or(0) % 12);
    let mut qs = Vec::new();
    for i in 0..n {
        let w = u32::from(u8::arbitrary(&mut u).unwrap_or(1)).max(1);
        let d = i64::from(u16::arbitrary(&mut u).unwrap_or(0));
        let g = i64::from(u8::arbitrary(&mut u).unwrap_or(0));
        let c = Option::<u16>::arbitrary(&mut u)
            .unwrap_or(None)
            .map(i64::from);
        let t = u32::from(u8::arbitrary(&mut u).unwrap_or(0) % 3);
        qs.push(WfQueue {
            name: format!("q{i}"),
            weight: w,
            floor: g,
            cap: c,
            demand: d,
            tier: t,
        });
    }
    if let Ok(wf) = water_fill(cap, &qs) {
        let total: i64 = qs.iter().map(WfQueue::effective_cap).sum();
        assert_eq!(wf.allocations.iter().sum::<i64>(), cap.min(total));
        for (q, a) in qs.iter().zip(&wf.allocations) {
            assert!(q.effective_floor() <= *a && *a <= q.effective_cap());
        }
    }
}

fn random_tree(u: &mut Unstructured<'_>) -> Option<(FairShareTree, Vec<(String, FrQuantities)>)> {
    let frs = [
        FlavorResource::new("f1", "cpu"),
        FlavorResource::new("f2", "nvidia.com/gpu"),
    ];
    let mut b = FairShareTreeBuilder::new();
    let ncoh = usize::from(u8::arbitrary(u).ok()? % 4);
    for i in 0..ncoh {
        let parent = if i == 0 {
            None
        } else {
            Some(format!("c{}", usize::from(u8::arbitrary(u).ok()?) % i))
        };
        let w = f64::from(u8::arbitrary(u).ok()? % 3);
        let mut n = b.cohort(&format!("c{i}"), parent.as_deref(), w).ok()?;
        for fr in &frs {
            if bool::arbitrary(u).ok()? {
                let mut q = NodeQuota::nominal(i64::from(u8::arbitrary(u).ok()? % 16));
                if bool::arbitrary(u).ok()? && i > 0 {
                    q.borrowing_limit = Some(Amount(i64::from(u8::arbitrary(u).ok()? % 8)));
                }
                if bool::arbitrary(u).ok()? && i > 0 {
                    q.lending_limit = Some(Amount(i64::from(u8::arbitrary(u).ok()? % 8)));
                }
                n.quota(fr.clone(), q);
            }
        }
    }
    let ncq = 1 + usize::from(u8::arbitrary(u).ok()? % 6);
    let mut heads = Vec::new();
    for i in 0..ncq {
        let parent = if ncoh == 0 {
            None
        } else {
            Some(format!("c{}", usize::from(u8::arbitrary(u).ok()?) % ncoh))
        };
        let w = f64::from(u8::arbitrary(u).ok()? % 3);
        let name = format!("q{i}");
        let mut n = b.cluster_queue(&name, parent.as_deref(), w).ok()?;
        for fr in &frs {
            let mut q = NodeQuota::nominal(i64::from(u8::arbitrary(u).ok()? % 16));
            if bool::arbitrary(u).ok()? && parent.is_some() {
                q.lending_limit = Some(Amount(i64::from(u8::arbitrary(u).ok()? % 8)));
            }
            if bool::arbitrary(u).ok()? && parent.is_some() {
                q.borrowing_limit = Some(Amount(i64::from(u8::arbitrary(u).ok()? % 8)));
            }
            n.quota(fr.clone(), q);
        }
        for fr in &frs {
            b.usage(&name, fr.clone(), i64::from(u8::arbitrary(u).ok()? % 20));
        }
        let req: FrQuantities = frs
            .iter()
            .map(|fr| Some((fr.clone(), Amount(i64::from(u8::arbitrary(u).ok()? % 6)))))
            .collect::<Option<_>>()?;
        heads.push((name, req));
    }
    Some((b.build().ok()?, heads))
}

/// Quota tree: adding then removing usage restores every node; shares are never negative;
/// cohort usage equals Σ children's usage above their local quota.
pub fn check_drs_tree(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Some((mut t, heads)) = random_tree(&mut u) else {
        return;
    };
    let before = format!("{t:?}");
    for (cq, req) in &heads {
        let Some(id) = t.cluster_queue(cq) else {
            continue;
        };
        for (_, d) in t.drs_path_with(id, req) {
            assert!(d.weighted_share() >= 0);
        }
        t.add_usage(id, req);
        t.remove_usage(id, req);
    }
    assert_eq!(format!("{t:?}"), before);
    let frs: Vec<FlavorResource> = t.flavor_resources().to_vec();
    let cohorts: Vec<_> = t.cohorts().map(|(_, id)| id).collect();
    for c in cohorts {
        for fr in &frs {
            let mut sum = Amount::ZERO;
            for &ch in t.child_cohorts(c).iter().chain(t.child_cluster_queues(c)) {
                sum = sum.saturating_add(
                    t.usage(ch, fr)
                        .saturating_sub(t.local_quota(ch, fr))
                        .max(Amount::ZERO),
                );
            }
            assert_eq!(t.usage(c, fr), sum);
        }
    }
}

/// Tournament: every head is popped exactly once and the order is deterministic.
pub fn check_order(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Some((mut t, heads)) = random_tree(&mut u) else {
        return;
    };
    let hs: Vec<Head> = heads
        .into_iter()
        .enumerate()
        .map(|(i, (cq, usage))| Head {
            cluster_queue: cq,
            workload: format!("ns/w{i}"),
            priority: (i % 3) as i64,
            queue_order: Timestamp::from_unix_seconds(i as i64 % 2),
            usage,
        })
        .collect();
    let n = hs.len();
    let Ok(a) = fair_sharing_order(&mut t, hs.clone(), OrderOptions::default(), |t, h| {
        t.cluster_queue(&h.cluster_queue)
            .is_some_and(|id| t.fits(id, &h.usage))
    }) else {
        return;
    };
    let b = fair_sharing_order(&mut t, hs, OrderOptions::default(), |t, h| {
        t.cluster_queue(&h.cluster_queue)
            .is_some_and(|id| t.fits(id, &h.usage))
    })
    .ok();
    assert_eq!(Some(a.clone()), b);
    let mut sorted = a;
    sorted.sort_unstable();
    assert_eq!(sorted, (0..n).collect::<Vec<_>>());
}
