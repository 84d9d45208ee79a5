//! In-place quota updates ([`gpuquota_cohort::Scheduler::update`]) decide as a rebuilt input
//! does: random platforms, a few cycles, then random quota numbers on every ClusterQueue,
//! followed once in place and once by building the input again.

use gpuquota_cohort::cycle::transition::Stops;
use gpuquota_cohort::cycle::update::Replaced;
use gpuquota_cohort::{Input, Options, Stepper};
use gpuquota_model::{Model, Quantity};
use proptest::prelude::*;

use gpuquota_testkit::{Shape, platform};

/// `model` with every ClusterQueue's quota numbers taken from `numbers` in turn (cycled):
/// nominal, then a borrowing limit (`None` when the number is odd) and a lending limit
/// (`None` above the nominal).
fn patched(model: &Model, numbers: &[u8]) -> Model {
    let mut m = model.clone();
    let mut k = 0usize;
    let mut next = || {
        let n = numbers[k % numbers.len()];
        k += 1;
        i64::from(n % 9)
    };
    for cq in m.cluster_queues.values_mut() {
        for g in &mut cq.spec.resource_groups {
            for f in &mut g.flavors {
                for r in &mut f.resources {
                    let nominal = next();
                    let borrowing = next();
                    let lending = next();
                    r.nominal_quota = Some(Quantity::from_integer(nominal));
                    r.borrowing_limit = (borrowing % 2 == 0
                        && cq
                            .spec
                            .cohort_name
                            .as_deref()
                            .is_some_and(|c| !c.is_empty()))
                    .then(|| Quantity::from_integer(borrowing));
                    r.lending_limit = (lending <= nominal
                        && cq
                            .spec
                            .cohort_name
                            .as_deref()
                            .is_some_and(|c| !c.is_empty()))
                    .then(|| Quantity::from_integer(lending));
                }
            }
        }
    }
    m
}

proptest! {
    #![proptest_config(gpuquota_testkit::config(48))]

    /// After `cycles` cycles, new quota numbers followed in place and by a rebuilt input
    /// (both adopting the same carried admissions) give the same admissions and
    /// preemptions in every later cycle; a change the update refuses is one the rebuild
    /// refuses too.
    #[test]
    fn an_in_place_quota_update_decides_as_a_rebuilt_input(
        s in platform(Shape::default()),
        numbers in proptest::collection::vec(any::<u8>(), 1..24),
        cycles in 0u32..4,
    ) {
        let docs = s.documents().concat();
        let model = gpuquota_model::import_str("p.yaml", &docs).expect("valid YAML").model;
        let options = Options::default();
        let Ok(input) = Input::from_model(&model, &options) else {
            return Ok(());
        };
        let Stepper::Classical(mut kept) = input.scheduler() else {
            return Ok(());
        };
        kept.run(Some(cycles));
        let carried = kept.carry();
        let after = patched(&model, &numbers);
        let replaced: Vec<Replaced<'_>> = model
            .cluster_queues
            .iter()
            .map(|(name, b)| Replaced::ClusterQueue(b, &after.cluster_queues[name]))
            .collect();
        let rebuilt = Input::from_model(&after, &options);
        let updated = kept.update(&after, &replaced);
        let Ok(rebuilt) = rebuilt else {
            prop_assert!(!updated, "the update took a platform the rebuild refuses");
            return Ok(());
        };
        prop_assert!(updated, "a change of quota numbers only was not followed in place");
        let Stepper::Classical(mut fresh) = rebuilt.scheduler() else {
            unreachable!("no fair sharing in this platform")
        };
        let stops = Stops::of(&after);
        let a = kept.adopt(&carried, &stops, &|_| true);
        let b = fresh.adopt(&carried, &stops, &|_| true);
        prop_assert_eq!(a, b);
        for w in rebuilt.world().cluster_queues.iter() {
            for fr in rebuilt.world().tree.fr_ids() {
                prop_assert_eq!(
                    kept.world().tree.quota(w.node, fr),
                    rebuilt.world().tree.quota(w.node, fr)
                );
                prop_assert_eq!(
                    kept.world().tree.subtree_quota(w.node, fr),
                    rebuilt.world().tree.subtree_quota(w.node, fr)
                );
            }
        }
        kept.run(Some(20));
        fresh.run(Some(20));
        prop_assert_eq!(&kept.admitted, &fresh.admitted);
        prop_assert_eq!(&kept.preempted, &fresh.preempted);
    }
}
