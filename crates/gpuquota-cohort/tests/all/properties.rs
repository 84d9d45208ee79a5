//! Property tests: limits after every cycle, document-order independence, the fast quota
//! arithmetic against the model's slow reference, and reclaim with `Any`.

use gpuquota_cohort::World;
use gpuquota_cohort::check::check_invariants;
use gpuquota_testkit::quota_tree::{FlavorResource, Node, ReferenceTree as RefTree};
use proptest::prelude::*;

use gpuquota_testkit::{Parent, PendingSpec, Platform, Shape, platform};

use crate::common::*;

fn config() -> ProptestConfig {
    gpuquota_testkit::config(48)
}

/// The workspace's random platform: cohorts `c0..` (a forest), ClusterQueues `q0..` with one
/// or two flavors of `nvidia.com/gpu` and every preemption setting, admitted and pending
/// workloads.
fn spec() -> impl Strategy<Value = Platform> {
    platform(Shape::default())
}

fn documents(s: &Platform) -> Vec<String> {
    s.documents()
}

fn build(docs: &[String]) -> World {
    world(&docs.concat())
}

proptest! {
    #![proptest_config(config())]

    /// No ClusterQueue exceeds nominal + borrowingLimit, no cohort its subtree quota, every
    /// lendingLimit holds — at every node after every cycle (when the input satisfied them).
    #[test]
    fn limits_hold_after_every_cycle(s in spec()) {
        let w = build(&documents(&s));
        let mut sched = gpuquota_cohort::testkit::scheduler(&w);
        prop_assume!(check_invariants(&w, sched.reservations()).is_ok());
        for _ in 0..30 {
            if !sched.run_cycle() {
                break;
            }
            prop_assert_eq!(check_invariants(&w, sched.reservations()), Ok(()));
        }
    }

    /// The same documents in any order give the same output.
    #[test]
    fn document_order_does_not_matter(s in spec(), seed in any::<u64>()) {
        let docs = documents(&s);
        let mut shuffled = docs.clone();
        let mut x = seed | 1;
        for i in (1..shuffled.len()).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            shuffled.swap(i, (x % (i as u64 + 1)) as usize);
        }
        let a = serde_json::to_string(&crate::common::schedule(&build(&docs), None)).unwrap();
        let b = serde_json::to_string(&crate::common::schedule(&build(&shuffled), None)).unwrap();
        prop_assert_eq!(a, b);
    }

    /// The fast quota arithmetic agrees with the model crate's slow reference on random trees.
    #[test]
    fn fast_quota_arithmetic_matches_reference(s in spec()) {
        let text = documents(&s).concat();
        let model = gpuquota_model::import_str("t.yaml", &text).unwrap().model;
        let w = gpuquota_cohort::testkit::build(&model).unwrap();
        let mut reference = RefTree::new(&model).unwrap();
        reference.add_admitted_workloads();
        let t = &w.tree;
        for (fr, &(f, r)) in w.frs.iter_enumerated() {
            let rfr = FlavorResource::new(w.flavors[f].name.as_str(), w.resources[r].as_str());
            for (id, node) in t.nodes.iter_enumerated() {
                let n = match node.kind {
                    gpuquota_cohort::tree::NodeKind::Cohort => Node::Cohort(node.name.clone()),
                    gpuquota_cohort::tree::NodeKind::ClusterQueue(_) => Node::ClusterQueue(node.name.clone()),
                };
                prop_assert_eq!(t.subtree_quota(id, fr), reference.subtree_quota(&n, &rfr), "subtree {:?}", n);
                prop_assert_eq!(t.usage(&w.initial_usage, id, fr), reference.usage(&n, &rfr), "usage {:?}", n);
                prop_assert_eq!(t.available_raw(&w.initial_usage, id, fr), reference.available(&n, &rfr), "available {:?}", n);
                prop_assert_eq!(t.potential_available(id, fr), reference.potential_available(&n, &rfr), "potential {:?}", n);
            }
        }
    }

    /// A ClusterQueue with `reclaimWithinCohort: Any` whose head fits in its unused nominal
    /// quota is admitted after its preemptions.
    #[test]
    fn reclaim_any_admits_a_head_within_nominal(s in spec(), need in 1u8..4) {
        let mut s = s;
        // queue 0 reclaims Any, in a cohort, nominal on f0 large enough; no other pending
        s.queues[0].reclaim = 2;
        s.queues[0].cohort = Parent::Cohort(0);
        s.queues[0].quotas[0].nominal = s.queues[0].quotas[0].nominal.max(need);
        s.pending.clear();
        // the head pins flavor f0 by being the only flavor
        s.queues[0].quotas.truncate(1);
        s.admitted.retain(|a| a.queue != 0 || a.fr == 0);
        let own: u32 = s
            .admitted
            .iter()
            .filter(|a| a.queue == 0)
            .map(|a| u32::from(a.pods) * u32::from(a.per_pod))
            .sum();
        prop_assume!(own + u32::from(need) <= u32::from(s.queues[0].quotas[0].nominal));
        s.pending.push(PendingSpec { queue: 0, pods: need, per_pod: 1, priority: 0 });
        let w = build(&documents(&s));
        let mut sched = gpuquota_cohort::testkit::scheduler(&w);
        prop_assume!(check_invariants(&w, sched.reservations()).is_ok());
        sched.run(None);
        let r = gpuquota_cohort::ScheduleReport::from_scheduler(&w, &sched);
        prop_assert!(r.admitted.iter().any(|a| a.workload == "ns/p0"), "{:?}", r.pending);
    }
}
