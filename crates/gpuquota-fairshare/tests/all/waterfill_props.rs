//! Water-filling properties (the water-filling properties of the crate docs).

use gpuquota_fairshare::ratio::Ratio;
use gpuquota_fairshare::waterfill::{TierLevel, WfQueue, water_fill};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    gpuquota_testkit::config(256)
}

fn queues() -> impl Strategy<Value = Vec<WfQueue>> {
    prop::collection::vec(
        (
            1u32..8,
            0i64..40,
            0i64..15,
            prop::option::of(0i64..50),
            0u32..3,
        ),
        1..7,
    )
    .prop_map(|v| {
        v.into_iter()
            .enumerate()
            .map(|(i, (w, d, g, c, t))| WfQueue {
                name: format!("q{i}"),
                weight: w,
                floor: g,
                cap: c,
                demand: d,
                tier: t,
            })
            .collect()
    })
}

fn floors(qs: &[WfQueue]) -> i64 {
    qs.iter().map(WfQueue::effective_floor).sum()
}

/// All checks of one solved instance.
fn check(cap: i64, qs: &[WfQueue]) -> Result<(), TestCaseError> {
    let wf = match water_fill(cap, qs) {
        Ok(wf) => wf,
        Err(_) => {
            prop_assert!(floors(qs) > cap);
            return Ok(());
        }
    };
    let a = &wf.allocations;
    // Floors and caps (item 9 / 2).
    for (q, ai) in qs.iter().zip(a) {
        prop_assert!(q.effective_floor() <= *ai && *ai <= q.effective_cap());
    }
    // Work conservation (item 8).
    let total_cap: i64 = qs.iter().map(WfQueue::effective_cap).sum();
    prop_assert_eq!(a.iter().sum::<i64>(), cap.min(total_cap));
    // Fluid level condition (item 7): in the shared tier, Σ clamp(w·L, g, c) = what the tier
    // received; higher tiers are satisfied, lower ones only have floors (item 16).
    for (tier, lvl) in &wf.tiers {
        let members: Vec<usize> = (0..qs.len()).filter(|i| qs[*i].tier == *tier).collect();
        let got: i64 = members.iter().map(|i| a[*i]).sum();
        match lvl {
            TierLevel::Satisfied => {
                prop_assert_eq!(
                    got,
                    members.iter().map(|i| qs[*i].effective_cap()).sum::<i64>()
                )
            }
            TierLevel::Starved => prop_assert_eq!(
                got,
                members
                    .iter()
                    .map(|i| qs[*i].effective_floor())
                    .sum::<i64>()
            ),
            TierLevel::Level(l) => {
                let mut sum = Ratio::ZERO;
                for &i in &members {
                    let q = &qs[i];
                    let v = l
                        .checked_mul(Ratio::int(q.weight.into()))
                        .unwrap()
                        .max(Ratio::int(q.effective_floor().into()))
                        .min(Ratio::int(q.effective_cap().into()));
                    prop_assert_eq!(v, wf.fluid(qs, i).unwrap());
                    // Integer shares never exceed the rounded-up fluid share.
                    prop_assert!(i128::from(a[i]) <= v.ceil());
                    sum = sum.checked_add(v).unwrap();
                }
                prop_assert_eq!(sum, Ratio::int(got.into()));
                for (k, q) in qs.iter().enumerate() {
                    if q.tier > *tier {
                        prop_assert_eq!(a[k], q.effective_cap());
                    }
                    if q.tier < *tier {
                        prop_assert_eq!(a[k], q.effective_floor());
                    }
                }
            }
        }
        // Envy-free up to one unit inside the tier (item 8).
        for &i in &members {
            for &j in &members {
                let (qi, qj) = (&qs[i], &qs[j]);
                if a[i] < qi.effective_cap() && a[j] > qj.effective_floor() {
                    prop_assert!(
                        i128::from(a[i]) * i128::from(qj.weight)
                            >= i128::from(a[j] - 1) * i128::from(qi.weight),
                        "{} envies {}: {:?}",
                        qi.name,
                        qj.name,
                        a
                    );
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn solved_instances_satisfy_every_property(qs in queues(), cap in 0i64..150) {
        check(cap, &qs)?;
    }

    #[test]
    fn order_independent_and_deterministic(qs in queues(), cap in 0i64..150, rot in 0usize..7) {
        let Ok(base) = water_fill(cap, &qs) else { return Ok(()) };
        let again = water_fill(cap, &qs).unwrap();
        prop_assert_eq!(&base, &again);
        let mut perm = qs.clone();
        perm.reverse();
        let k = rot % perm.len();
        perm.rotate_left(k);
        let other = water_fill(cap, &perm).unwrap();
        for (q, a) in perm.iter().zip(&other.allocations) {
            let i = qs.iter().position(|x| x.name == q.name).unwrap();
            prop_assert_eq!(base.allocations[i], *a);
        }
    }

    #[test]
    fn capacity_monotone_single_resource(qs in queues(), cap in 0i64..150) {
        let (Ok(a), Ok(b)) = (water_fill(cap, &qs), water_fill(cap + 1, &qs)) else {
            return Ok(());
        };
        for (x, y) in a.allocations.iter().zip(&b.allocations) {
            prop_assert!(x <= y);
        }
    }

    #[test]
    fn scale_invariance_of_weights(qs in queues(), cap in 0i64..150, k in 2u32..4) {
        let scaled: Vec<WfQueue> = qs.iter().cloned().map(|mut q| { q.weight *= k; q }).collect();
        let (Ok(a), Ok(b)) = (water_fill(cap, &qs), water_fill(cap, &scaled)) else {
            return Ok(());
        };
        prop_assert_eq!(a.allocations, b.allocations);
    }
}

/// Brute force: every feasible allocation satisfying floors, caps, work conservation, tier
/// precedence and EF1 — ours must be one, on small instances.
#[test]
fn brute_force_oracle_small_instances() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = |m: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % m
    };
    for _ in 0..300 {
        let n = 1 + next(3) as usize;
        let qs: Vec<WfQueue> = (0..n)
            .map(|i| WfQueue {
                name: format!("q{i}"),
                weight: 1 + next(4) as u32,
                floor: next(3) as i64,
                cap: if next(2) == 0 {
                    None
                } else {
                    Some(next(8) as i64)
                },
                demand: next(8) as i64,
                tier: next(2) as u32,
            })
            .collect();
        let cap = next(14) as i64;
        let Ok(wf) = water_fill(cap, &qs) else {
            continue;
        };
        let total_cap: i64 = qs.iter().map(WfQueue::effective_cap).sum();
        let mut found = false;
        let mut any = false;
        let mut cur = vec![0i64; n];
        let ranges: Vec<(i64, i64)> = qs
            .iter()
            .map(|q| (q.effective_floor(), q.effective_cap()))
            .collect();
        fn rec(k: usize, cur: &mut Vec<i64>, ranges: &[(i64, i64)], f: &mut dyn FnMut(&[i64])) {
            if k == cur.len() {
                f(cur);
                return;
            }
            for v in ranges[k].0..=ranges[k].1 {
                cur[k] = v;
                rec(k + 1, cur, ranges, f);
            }
        }
        rec(0, &mut cur, &ranges, &mut |a: &[i64]| {
            if a.iter().sum::<i64>() != cap.min(total_cap) {
                return;
            }
            // Tier precedence: a lower tier above its floors ⇒ every higher tier capped.
            for i in 0..n {
                for j in 0..n {
                    if qs[j].tier > qs[i].tier && a[i] > ranges[i].0 && a[j] < ranges[j].1 {
                        return;
                    }
                    if qs[i].tier == qs[j].tier
                        && a[i] < ranges[i].1
                        && a[j] > ranges[j].0
                        && i64::from(qs[j].weight) * a[i] < i64::from(qs[i].weight) * (a[j] - 1)
                    {
                        return;
                    }
                }
            }
            any = true;
            if a == wf.allocations.as_slice() {
                found = true;
            }
        });
        assert!(any, "no EF1 allocation exists for {qs:?} / {cap}");
        assert!(
            found,
            "{:?} not among EF1 allocations for {qs:?} / {cap}",
            wf.allocations
        );
    }
}

#[test]
fn weighted_ef1_where_largest_remainder_would_fail() {
    // Ten weight-1 queues and one weight-100 queue share 319 units: the fluid level is 2.9.
    // Largest-remainder rounding would leave one small queue at 2 while the big one holds 290
    // ((290 − 1)/100 = 2.89 > 2); the smallest-key rule gives every small queue 3.
    let mut qs: Vec<WfQueue> = (0..10)
        .map(|i| WfQueue::new(format!("s{i}"), 1, 1000))
        .collect();
    qs.push(WfQueue::new("big", 100, 1000));
    let wf = water_fill(319, &qs).unwrap();
    assert_eq!(wf.allocations[..10], [3; 10]);
    assert_eq!(wf.allocations[10], 289);
    assert_eq!(wf.tiers[&0], TierLevel::Level(Ratio::new(29, 10).unwrap()));
}

fn hier_tree() -> impl Strategy<Value = Vec<gpuquota_fairshare::waterfill::HierNode>> {
    use gpuquota_fairshare::waterfill::HierNode;
    prop::collection::vec(
        (
            1u32..5,
            0i64..10,
            prop::option::of(0i64..60),
            prop::collection::vec((1u32..5, 0i64..30, 0i64..8), 0..4),
        ),
        1..4,
    )
    .prop_map(|v| {
        v.into_iter()
            .enumerate()
            .map(|(i, (w, floor, cap, kids))| {
                let children: Vec<HierNode> = kids
                    .into_iter()
                    .enumerate()
                    .map(|(j, (kw, d, f))| {
                        let mut l = HierNode::leaf(format!("n{i}-{j}"), kw, d);
                        l.floor = f;
                        l
                    })
                    .collect();
                let mut n = if children.is_empty() {
                    HierNode::leaf(format!("n{i}"), w, 20)
                } else {
                    HierNode::inner(format!("n{i}"), w, children)
                };
                n.floor = floor;
                n.cap = cap;
                n
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(config())]

    /// Hierarchy: children share exactly their parent's allocation when
    /// their demand suffices, never exceed their caps, and the top level is water-filled.
    #[test]
    fn hierarchical_shares_are_consistent(roots in hier_tree(), cap in 0i64..120) {
        use gpuquota_fairshare::waterfill::hierarchical_water_fill;
        let Ok(a) = hierarchical_water_fill(cap, &roots) else { return Ok(()) };
        let mut top = 0;
        for n in &roots {
            top += a[&n.name];
            if let Some(c) = n.cap {
                prop_assert!(a[&n.name] <= c);
            }
            if !n.children.is_empty() {
                let kids: i64 = n.children.iter().map(|c| a[&c.name]).sum();
                let demand: i64 = n.children.iter().map(|c| c.demand).sum();
                prop_assert_eq!(kids, a[&n.name].min(demand));
                prop_assert!(a[&n.name] <= demand);
                for c in &n.children {
                    prop_assert!(a[&c.name] <= c.demand);
                    prop_assert!(a[&c.name] >= c.floor.min(c.demand));
                }
            }
        }
        prop_assert!(top <= cap);
    }
}
