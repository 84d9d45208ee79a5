//! The engine's quota forest as fair sharing reads it (`fair::ForestView`, the
//! `gpuquota_fairshare::view::QuotaView` of the cohort engine), against the model crate's slow
//! reference: quota numbers and dominant resource shares of every node, on the snapshot as
//! imported and after fair-sharing cycles.

use gpuquota_cohort::World;
use gpuquota_cohort::fair::FairSharing;
use gpuquota_cohort::tree::{NodeKind, Usage};
use gpuquota_fairshare::config::settings_from_configuration;
use gpuquota_fairshare::view::{self, NodeId, QuotaView};
use gpuquota_model::Model;
use gpuquota_testkit::quota_tree::{FlavorResource, Node, ReferenceTree};
use gpuquota_testkit::{Platform, Shape, platform};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    gpuquota_testkit::config(48)
}

/// The workspace's quota forest ([`Shape::quota_forest`]) as the engine's validated world
/// takes it (two GPU flavors, lending limits within the nominal quota) with pending
/// workloads to admit, fair sharing on and a weight per ClusterQueue (0 included).
fn spec() -> impl Strategy<Value = Platform> {
    let base = Shape::default();
    platform(Shape {
        frs: base.frs,
        clamp_lending_limit: true,
        pending: base.pending,
        fair_sharing: true,
        ..Shape::quota_forest()
    })
}

/// Every node of the view equals the reference with the same usage: the shared check
/// ([`gpuquota_testkit::check_view`]: quota numbers, `SubtreeQuota` keys, weighted share,
/// dominant resource) and Kueue's `available`.
fn check(
    model: &Model,
    world: &World,
    policy: &FairSharing,
    usage: &Usage,
    reference: &ReferenceTree<'_>,
) -> Result<(), TestCaseError> {
    let v = policy.view(world, usage);
    prop_assert_eq!(v.node_count(), world.tree.nodes.len());
    let nodes: Vec<(Node, NodeId)> = world
        .tree
        .nodes
        .iter()
        .enumerate()
        .map(|(i, node)| {
            let n = match node.kind {
                NodeKind::Cohort => Node::Cohort(node.name.clone()),
                NodeKind::ClusterQueue(_) => Node::ClusterQueue(node.name.clone()),
            };
            (n, NodeId::from_index(i))
        })
        .collect();
    gpuquota_testkit::check_view(&v, &nodes, model, reference)?;
    for (n, id) in &nodes {
        for (f, fr) in v.flavor_resources().iter().enumerate() {
            let rf = FlavorResource::new(fr.flavor.as_str(), fr.resource.as_str());
            prop_assert_eq!(
                view::available_raw(&v, *id, f),
                reference.available(n, &rf),
                "available {}",
                n
            );
        }
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
        let world = gpuquota_cohort::testkit::build(&model).unwrap();
        let settings = settings_from_configuration(model.configuration.as_ref(), false).unwrap();
        let policy = FairSharing::new(&world, &model, settings.clone()).unwrap();
        let mut reference = ReferenceTree::new(&model).unwrap();
        reference.add_admitted_workloads();
        check(&model, &world, &policy, &world.initial_usage, &reference)?;

        let mut sched = gpuquota_cohort::testkit::with_policy(&world, FairSharing::new(&world, &model, settings).unwrap());
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
