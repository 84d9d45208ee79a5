//! The engine's quota forest as fair sharing reads it (`fair::ForestView`, the
//! `gpuquota_fairshare::view::QuotaView` of the cohort engine), against the model crate's slow
//! reference: quota numbers and dominant resource shares of every node, on the snapshot as
//! imported and after fair-sharing cycles.

use gpuquota_cohort::fair::FairSharing;
use gpuquota_cohort::tree::{NodeKind, Usage};
use gpuquota_cohort::{Scheduler, World};
use gpuquota_fairshare::config::settings_from_configuration;
use gpuquota_fairshare::view::{self, NodeId, QuotaView};
use gpuquota_model::Model;
use gpuquota_model::quota_tree::{FlavorResource, Node, ReferenceTree};
use gpuquota_testkit::{Platform, Shape, platform};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    gpuquota_testkit::config(48)
}

/// The workspace's random platform (a cohort forest with borrowing and lending limits, two
/// GPU flavors) with fair sharing on and a weight per ClusterQueue (0 included).
fn spec() -> impl Strategy<Value = Platform> {
    platform(Shape {
        fair_sharing: true,
        implicit_cohort: true,
        ..Shape::default()
    })
}

fn weight_of(model: &Model, node: &Node) -> f64 {
    let w = match node {
        Node::ClusterQueue(n) => model
            .cluster_queues
            .get(n)
            .and_then(|c| c.spec.fair_sharing.as_ref())
            .and_then(|f| f.weight.as_ref()),
        Node::Cohort(n) => model
            .cohorts
            .get(n)
            .and_then(|c| c.spec.fair_sharing.as_ref())
            .and_then(|f| f.weight.as_ref()),
    };
    w.map_or(1.0, |q| q.to_string().parse().unwrap())
}

/// Every node of the view equals the reference with the same usage: quota numbers, the
/// `SubtreeQuota` keys, the weighted share and the dominant resource.
fn check(
    model: &Model,
    world: &World,
    policy: &FairSharing,
    usage: &Usage,
    reference: &ReferenceTree<'_>,
) -> Result<(), TestCaseError> {
    let v = policy.view(world, usage);
    prop_assert_eq!(v.node_count(), world.tree.nodes.len());
    for (i, node) in world.tree.nodes.iter().enumerate() {
        let n = match node.kind {
            NodeKind::Cohort => Node::Cohort(node.name.clone()),
            NodeKind::ClusterQueue(_) => Node::ClusterQueue(node.name.clone()),
        };
        let id = NodeId::from_index(i);
        for (f, fr) in v.flavor_resources().iter().enumerate() {
            let rf = FlavorResource::new(fr.flavor.as_str(), fr.resource.as_str());
            prop_assert_eq!(
                v.subtree_quota_at(id, f),
                reference.subtree_quota(&n, &rf),
                "subtreeQuota {}",
                n
            );
            prop_assert_eq!(
                v.local_quota_at(id, f),
                reference.local_quota(&n, &rf),
                "localQuota {}",
                n
            );
            prop_assert_eq!(v.usage_at(id, f), reference.usage(&n, &rf), "usage {}", n);
            prop_assert_eq!(
                v.in_subtree(id, f),
                reference.subtree_flavor_resources(&n).contains(&rf),
                "SubtreeQuota keys {}",
                n
            );
            prop_assert_eq!(
                view::available_raw(&v, id, f),
                reference.available(&n, &rf),
                "available {}",
                n
            );
        }
        let drs = view::drs(&v, id);
        let (share, dominant) = reference.weighted_share(&n, weight_of(model, &n));
        prop_assert_eq!(drs.weighted_share(), share, "weightedShare {}", n);
        prop_assert_eq!(drs.dominant_resource, dominant, "dominant resource {}", n);
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    /// The view of the imported snapshot, then of the snapshot after up to three
    /// fair-sharing cycles (the reference given each ClusterQueue's admitted usage), equals
    /// the reference on every node.
    #[test]
    fn forest_view_shares_match_reference(s in spec()) {
        let text = s.documents().concat();
        let model = gpuquota_model::import_str("t.yaml", &text).unwrap().model;
        let world = World::build(&model).unwrap();
        let settings = settings_from_configuration(model.configuration.as_ref(), false).unwrap();
        let policy = FairSharing::new(&world, &model, settings.clone()).unwrap();
        let mut reference = ReferenceTree::new(&model).unwrap();
        reference.add_admitted_workloads();
        check(&model, &world, &policy, &world.initial_usage, &reference)?;

        let mut sched = Scheduler::with_policy(&world, FairSharing::new(&world, &model, settings).unwrap());
        for _ in 0..3 {
            if !sched.run_cycle() {
                break;
            }
        }
        let mut after = ReferenceTree::new(&model).unwrap();
        let mut per_cq: std::collections::BTreeMap<(String, FlavorResource), gpuquota_model::Amount> = Default::default();
        for r in sched.reservations().iter().flatten() {
            let cq = world.cluster_queues[r.cq].name.clone();
            for &(fr, a) in &r.usage {
                let rf = FlavorResource::new(world.fr_flavor(fr), world.fr_resource(fr).as_str());
                let slot = per_cq.entry((cq.clone(), rf)).or_default();
                *slot = slot.saturating_add(a);
            }
        }
        for ((cq, fr), a) in per_cq {
            after.set_usage(&cq, fr, a);
        }
        check(&model, &world, &policy, sched.usage(), &after)?;
    }
}
