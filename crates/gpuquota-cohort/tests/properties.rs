//! Property tests: limits after every cycle, document-order independence, the fast quota
//! arithmetic against the model's slow reference, and reclaim with `Any`.

use gpuquota_cohort::check::check_invariants;
use gpuquota_cohort::{Scheduler, World};
use gpuquota_model::quota_tree::{FlavorResource, Node, ReferenceTree as RefTree};
use proptest::prelude::*;

use crate::common::*;

fn config() -> ProptestConfig {
    let ci = std::env::var("CI").is_ok();
    ProptestConfig {
        cases: 48,
        max_shrink_iters: if ci { 0 } else { 256 },
        ..ProptestConfig::default()
    }
}

/// A random platform: cohorts `c0..` (a two-level tree), ClusterQueues `q0..` with one or two
/// flavors of `nvidia.com/gpu`, admitted and pending workloads.
#[derive(Debug, Clone)]
struct Spec {
    cohort_parents: Vec<Option<usize>>,
    cohort_quota: Vec<(u8, Option<u8>, Option<u8>)>,
    queues: Vec<QueueSpec>,
    admitted: Vec<(usize, usize, u8, i32)>,
    pending: Vec<(usize, u8, u8, i32)>,
}

#[derive(Debug, Clone)]
struct QueueSpec {
    cohort: Option<usize>,
    quotas: Vec<(u8, Option<u8>, Option<u8>)>,
    within: u8,
    reclaim: u8,
    bwc: bool,
    strict: bool,
}

fn quota() -> impl Strategy<Value = (u8, Option<u8>, Option<u8>)> {
    (
        0u8..6,
        proptest::option::of(0u8..5),
        proptest::option::of(0u8..5),
    )
}

fn spec() -> impl Strategy<Value = Spec> {
    (1usize..4, 1usize..6).prop_flat_map(|(nc, nq)| {
        (
            proptest::collection::vec(proptest::option::of(0usize..8), nc),
            proptest::collection::vec(quota(), nc),
            proptest::collection::vec(
                (
                    proptest::option::of(0usize..nc),
                    proptest::collection::vec(quota(), 1..3),
                    0u8..3,
                    0u8..3,
                    any::<bool>(),
                    any::<bool>(),
                ),
                nq,
            ),
            proptest::collection::vec((0usize..nq, 0usize..2, 1u8..4, 0i32..3), 0..6),
            proptest::collection::vec((0usize..nq, 1u8..4, 1u8..4, 0i32..3), 1..8),
        )
            .prop_map(move |(parents, cq_quota, queues, admitted, pending)| Spec {
                // only lower-numbered parents: no cycles
                cohort_parents: parents
                    .iter()
                    .enumerate()
                    .map(|(i, p)| p.filter(|&p| p < i))
                    .collect(),
                cohort_quota: cq_quota,
                queues: queues
                    .into_iter()
                    .map(|(cohort, quotas, within, reclaim, bwc, strict)| QueueSpec {
                        cohort,
                        quotas,
                        within,
                        reclaim,
                        bwc,
                        strict,
                    })
                    .collect(),
                admitted,
                pending,
            })
    })
}

fn opt(v: Option<u8>) -> Option<String> {
    v.map(|x| x.to_string())
}

/// Renders the spec as documents (separately, so that their order can be shuffled).
fn documents(s: &Spec) -> Vec<String> {
    let mut docs = vec![rf("f0"), rf("f1")];
    for (i, parent) in s.cohort_parents.iter().enumerate() {
        let (n, bl, ll) = s.cohort_quota[i];
        let (n, bl, ll) = (n.to_string(), opt(bl), opt(ll));
        let has_parent = parent.is_some();
        let q = vec![(
            "f0",
            vec![(
                "nvidia.com/gpu",
                n.as_str(),
                if has_parent { bl.as_deref() } else { None },
                if has_parent { ll.as_deref() } else { None },
            )],
        )];
        let p = parent.map(|p| format!("c{p}"));
        docs.push(cohort(&format!("c{i}"), p.as_deref(), &[q]));
    }
    for (i, q) in s.queues.iter().enumerate() {
        let within = ["Never", "LowerPriority", "LowerOrNewerEqualPriority"][q.within as usize];
        let reclaim = ["Never", "LowerPriority", "Any"][q.reclaim as usize];
        let bwc = if q.bwc && reclaim != "Never" {
            "LowerPriority"
        } else {
            "Never"
        };
        let strategy = if q.strict {
            "StrictFIFO"
        } else {
            "BestEffortFIFO"
        };
        let extra = format!(
            "queueingStrategy: {strategy}\npreemption: {{withinClusterQueue: {within}, reclaimWithinCohort: {reclaim}, borrowWithinCohort: {{policy: {bwc}}}}}"
        );
        let strs: Vec<(String, Option<String>, Option<String>)> = q
            .quotas
            .iter()
            .map(|&(n, bl, ll)| {
                let ll = ll.map(|l| l.min(n));
                (n.to_string(), opt(bl), opt(ll))
            })
            .collect();
        let flavors = ["f0", "f1"];
        let group: Vec<Q<'_>> = strs
            .iter()
            .enumerate()
            .map(|(fi, (n, bl, ll))| {
                let (bl, ll) = if q.cohort.is_some() {
                    (bl.as_deref(), ll.as_deref())
                } else {
                    (None, None)
                };
                (flavors[fi], vec![("nvidia.com/gpu", n.as_str(), bl, ll)])
            })
            .collect();
        let c = q.cohort.map(|c| format!("c{c}"));
        docs.push(cq(&format!("q{i}"), c.as_deref(), &extra, &[group]));
    }
    for (i, &(q, f, n, prio)) in s.admitted.iter().enumerate() {
        let flavor = if f < s.queues[q].quotas.len() {
            ["f0", "f1"][f]
        } else {
            "f0"
        };
        let total = n.to_string();
        docs.push(admitted(
            &format!("a{i}"),
            &format!("q{q}"),
            &format!("q{q}"),
            prio,
            i as u32,
            i32::from(n),
            flavor,
            &[("nvidia.com/gpu", "1", &total)],
        ));
    }
    for (i, &(q, count, per, prio)) in s.pending.iter().enumerate() {
        let per = per.to_string();
        docs.push(wl(
            &format!("p{i}"),
            &format!("q{q}"),
            prio,
            100 + i as u32,
            i32::from(count),
            &[("nvidia.com/gpu", per.as_str())],
        ));
    }
    docs
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
        let mut sched = Scheduler::new(&w);
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
        let a = serde_json::to_string(&gpuquota_cohort::schedule(&build(&docs), None)).unwrap();
        let b = serde_json::to_string(&gpuquota_cohort::schedule(&build(&shuffled), None)).unwrap();
        prop_assert_eq!(a, b);
    }

    /// The fast quota arithmetic agrees with the model crate's slow reference on random trees.
    #[test]
    fn fast_quota_arithmetic_matches_reference(s in spec()) {
        let text = documents(&s).concat();
        let model = gpuquota_model::import_str("t.yaml", &text).unwrap().model;
        let w = World::build(&model).unwrap();
        let mut reference = RefTree::new(&model).unwrap();
        reference.add_admitted_workloads();
        let t = &w.tree;
        for (fr, &(f, r)) in w.frs.iter().enumerate() {
            let rfr = FlavorResource::new(w.flavors[f as usize].name.as_str(), w.resources[r as usize].as_str());
            for (id, node) in t.nodes.iter().enumerate() {
                let n = match node.kind {
                    gpuquota_cohort::tree::NodeKind::Cohort => Node::Cohort(node.name.clone()),
                    gpuquota_cohort::tree::NodeKind::ClusterQueue(_) => Node::ClusterQueue(node.name.clone()),
                };
                let (id, fr) = (id as u32, fr as u32);
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
        s.queues[0].cohort = Some(0);
        s.queues[0].quotas[0].0 = s.queues[0].quotas[0].0.max(need);
        s.pending.clear();
        let own: u8 = s.admitted.iter().filter(|a| a.0 == 0).map(|a| a.2).sum();
        prop_assume!(own + need <= s.queues[0].quotas[0].0);
        // the head pins flavor f0 by being the only flavor
        s.queues[0].quotas.truncate(1);
        s.admitted.retain(|a| a.0 != 0 || a.1 == 0);
        s.pending.push((0, need, 1, 0));
        let w = build(&documents(&s));
        let mut sched = Scheduler::new(&w);
        prop_assume!(check_invariants(&w, sched.reservations()).is_ok());
        sched.run(None);
        let r = gpuquota_cohort::ScheduleReport::from_scheduler(&w, &sched);
        prop_assert!(r.admitted.iter().any(|a| a.workload == "ns/p0"), "{:?}", r.pending);
    }
}
