//! Property tests: plans are valid, exact plans equal the exhaustive optimum, never lose to
//! the greedy, the certified bound holds, and planning is deterministic.

use gpuquota_mig::testkit::verify;
use gpuquota_mig::testkit::{Prepared, plan};
use gpuquota_mig::{
    Catalogue, DemandSpec, GpuSpec, InstanceSpec, Mode, PlanOptions, PlanRequest, WeightPolicy,
};
use proptest::prelude::*;

use crate::common::proptest_config;
use crate::reference;

/// Models small enough for the exhaustive reference.
const MODELS: [&str; 5] = [
    "A100-40GB",
    "A100-80GB",
    "A30",
    "RTX PRO 6000 Blackwell",
    "H100-80GB",
];

prop_compose! {
    fn gpu(index: u32)(
        model in 0..MODELS.len(),
        disabled in prop::bool::weighted(0.15),
        layout in any::<prop::sample::Index>(),
        busy_bits in any::<u8>(),
        whole_busy in prop::bool::weighted(0.3),
    ) -> GpuSpec {
        let m = Catalogue::builtin().resolve(MODELS[model]).expect("model");
        let instances = (!disabled).then(|| {
            let l = layout.get(m.layouts());
            l.instances()
                .iter()
                .enumerate()
                .map(|(k, i)| InstanceSpec {
                    profile: m.profiles()[usize::from(i.profile.0)].name().to_owned(),
                    start: i.start,
                    busy: busy_bits & (1 << k) != 0 && busy_bits & 0x80 != 0,
                })
                .collect()
        });
        GpuSpec {
            node: format!("node-{}", index % 2),
            index,
            model: m.name().to_owned(),
            busy: disabled && whole_busy,
            instances,
        }
    }
}

fn request(max_gpus: usize) -> impl Strategy<Value = PlanRequest> {
    (
        prop::collection::vec(0..MODELS.len(), 0..=max_gpus),
        any::<bool>(),
        0..3usize,
        prop::collection::vec(
            (
                any::<prop::sample::Index>(),
                0..=4u32,
                prop::option::of(1..=3u64),
            ),
            1..=3,
        ),
    )
        .prop_flat_map(|(slots, pin, policy, demand)| {
            let gpus: Vec<_> = (0..slots.len() as u32).map(gpu).collect();
            (gpus, Just(pin), Just(policy), Just(demand))
        })
        .prop_map(|(gpus, pin, policy, demand)| {
            // Demand over the resources the chosen models offer (plus what they do not).
            let c = Catalogue::builtin();
            let mut names: Vec<String> = Vec::new();
            for g in &gpus {
                for p in c.resolve(&g.model).expect("model").profiles() {
                    if !names.contains(&p.resource_name().to_owned()) {
                        names.push(p.resource_name().to_owned());
                    }
                }
            }
            names.push("nvidia.com/mig-7g.40gb".to_owned());
            let mut lines: Vec<DemandSpec> = Vec::new();
            for (idx, count, weight) in demand {
                let resource = idx.get(&names).clone();
                if lines
                    .iter()
                    .any(|d| d.resource.as_deref() == Some(resource.as_str()))
                {
                    continue;
                }
                lines.push(DemandSpec {
                    resource: Some(resource),
                    profile: None,
                    count,
                    weight,
                });
            }
            PlanRequest {
                mode: if pin {
                    Mode::PinBusyInstances
                } else {
                    Mode::KeepBusyGpus
                },
                weights: [
                    WeightPolicy::Count,
                    WeightPolicy::ComputeSlices,
                    WeightPolicy::MemorySlices,
                ][policy],
                gpus,
                demand: lines,
                ..PlanRequest::default()
            }
        })
}

fn key(p: &gpuquota_mig::Plan) -> (u64, u32, u32) {
    (p.value, p.reconfigured, p.fragmentation)
}

proptest! {
    #![proptest_config(proptest_config(48))]

    #[test]
    fn exact_plan_equals_exhaustive_optimum(req in request(2)) {
        let problem = req.resolve(Catalogue::builtin()).expect("valid by construction");
        let p = plan(&problem, &PlanOptions::default()).expect("plans");
        prop_assert!(p.optimal);
        prop_assert_eq!(verify(&problem, &p), Ok(()));
        prop_assert_eq!(key(&p), reference::optimum(&problem));
    }

    #[test]
    fn never_worse_than_greedy_and_bound_holds(req in request(4)) {
        let problem = req.resolve(Catalogue::builtin()).expect("valid");
        let exact = plan(&problem, &PlanOptions::default()).expect("plans");
        let prepared = Prepared::new(&problem).expect("prepares");
        let greedy = prepared.greedy();
        prop_assert_eq!(verify(&problem, &greedy), Ok(()));
        prop_assert!(
            (exact.value, std::cmp::Reverse(exact.reconfigured))
                >= (greedy.value, std::cmp::Reverse(greedy.reconfigured)),
            "exact {:?} worse than greedy {:?}", key(&exact), key(&greedy)
        );
        prop_assert!(prepared.upper_bound() >= exact.value);
        // A zero budget skips the per-GPU programme: the class branch and bound runs, exact
        // in (W, R) whenever it says optimal.
        let classes = plan(&problem, &PlanOptions::default().with_budget(0)).expect("plans");
        prop_assert_eq!(verify(&problem, &classes), Ok(()));
        if classes.optimal {
            prop_assert_eq!(
                (classes.value, classes.reconfigured),
                (exact.value, exact.reconfigured)
            );
        }
        // The fast path: the heuristic with its certified bound.
        let fallback = plan(&problem, &PlanOptions::default().with_fast(true)).expect("plans");
        prop_assert_eq!(verify(&problem, &fallback), Ok(()));
        if let Some(b) = fallback.bound {
            prop_assert!(b >= exact.value && fallback.value <= exact.value);
        } else {
            prop_assert!(fallback.optimal);
            prop_assert_eq!(key(&fallback), key(&exact));
        }
    }

    #[test]
    fn deterministic_and_gpu_order_independent(req in request(4)) {
        let problem = req.resolve(Catalogue::builtin()).expect("valid");
        let a = plan(&problem, &PlanOptions::default()).expect("plans");
        let b = plan(&problem, &PlanOptions::default()).expect("plans");
        prop_assert_eq!(&a, &b);
        let mut reversed = req.clone();
        reversed.gpus.reverse();
        let problem_r = reversed.resolve(Catalogue::builtin()).expect("valid");
        let c = plan(&problem_r, &PlanOptions::default()).expect("plans");
        prop_assert_eq!(key(&a), key(&c));
    }
}

proptest! {
    #![proptest_config(proptest_config(16))]

    /// Property 6: the class branch and bound is exact in `(W, R)` on instances of up to 64
    /// GPUs, against an independent dynamic programme over GPUs (`reference::optimum_wr`).
    #[test]
    fn class_exact_equals_reference_w_and_r(req in request(64), scale in 1..=3u32) {
        let mut req = req;
        for d in &mut req.demand {
            d.count *= scale;
        }
        let problem = req.resolve(Catalogue::builtin()).expect("valid");
        let p = plan(&problem, &PlanOptions::default().with_budget(0)).expect("plans");
        prop_assert_eq!(verify(&problem, &p), Ok(()));
        prop_assert!(p.optimal, "not proven: {:?}", key(&p));
        prop_assert_eq!((p.value, p.reconfigured), reference::optimum_wr(&problem));
    }
}
