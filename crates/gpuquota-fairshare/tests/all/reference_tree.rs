//! Differential test: the incremental quota tree against the model's slow reference
//! (`gpuquota_model::quota_tree`), on random hierarchies imported from manifests.

use gpuquota_fairshare::FlavorResource;
use gpuquota_fairshare::shares::tree_from_model;
use gpuquota_model::import_str;
use gpuquota_model::quota_tree::{self, Node, ReferenceTree as Reference};
use gpuquota_testkit::{Platform, Shape};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    gpuquota_testkit::config(64)
}

/// The workspace's quota forest ([`Shape::quota_forest`]): three flavor-resources of two
/// resources, a cohort forest (possibly empty), ClusterQueues in a cohort, in the implicit
/// cohort `implicit`, or alone, limits as drawn (a lending limit may exceed the nominal
/// quota: the tree is built without the validator), usage on every flavor-resource.
fn platform() -> impl Strategy<Value = Platform> {
    gpuquota_testkit::platform(Shape::quota_forest())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn incremental_tree_matches_reference(p in platform()) {
        let yaml = p.documents().concat();
        let model = import_str("gen.yaml", &yaml).unwrap().model;
        let mut reference = Reference::new(&model).unwrap();
        reference.add_admitted_workloads();
        let mine = tree_from_model(&model).unwrap().tree;
        let nodes: Vec<(Node, gpuquota_fairshare::tree::NodeId)> = mine
            .cluster_queues()
            .map(|(n, id)| (Node::ClusterQueue(n.to_string()), id))
            .chain(mine.cohorts().map(|(n, id)| (Node::Cohort(n.to_string()), id)))
            .collect();
        for (node, id) in &nodes {
            for (f, r) in Shape::quota_forest().frs {
                let rf = quota_tree::FlavorResource::new(f, r);
                let fr = FlavorResource::new(f, r);
                prop_assert_eq!(mine.subtree_quota(*id, &fr), reference.subtree_quota(node, &rf), "subtreeQuota {}", node);
                prop_assert_eq!(mine.local_quota(*id, &fr), reference.local_quota(node, &rf), "localQuota {}", node);
                prop_assert_eq!(mine.usage(*id, &fr), reference.usage(node, &rf), "usage {}", node);
                prop_assert_eq!(mine.potential_available(*id, &fr), reference.potential_available(node, &rf), "potentialAvailable {}", node);
                prop_assert_eq!(mine.available(*id, &fr), reference.available_clamped(node, &rf), "available {}", node);
            }
        }
    }
}

/// The platform of [`platform`] with fair sharing on: every ClusterQueue has a
/// `fairSharing.weight` (0 included).
fn weighted_platform() -> impl Strategy<Value = Platform> {
    gpuquota_testkit::platform(Shape {
        fair_sharing: true,
        ..Shape::quota_forest()
    })
}

proptest! {
    #![proptest_config(config())]

    /// The standalone tree, read through the `QuotaView` trait the fair-sharing algorithms
    /// use: every node's quota numbers and its dominant resource share (weighted share and
    /// dominant resource) equal the slow reference's, computed from the definitions.
    #[test]
    fn trait_shares_match_reference(p in weighted_platform()) {
        use gpuquota_fairshare::view::QuotaView;
        let yaml = p.documents().concat();
        let model = import_str("gen.yaml", &yaml).unwrap().model;
        let mut reference = Reference::new(&model).unwrap();
        reference.add_admitted_workloads();
        let mine = tree_from_model(&model).unwrap().tree;
        prop_assert_eq!(QuotaView::node_count(&mine), mine.len());
        let nodes: Vec<(Node, gpuquota_fairshare::view::NodeId)> = mine
            .cluster_queues()
            .map(|(n, id)| (Node::ClusterQueue(n.to_string()), id))
            .chain(mine.cohorts().map(|(n, id)| (Node::Cohort(n.to_string()), id)))
            .collect();
        gpuquota_testkit::check_view(&mine, &nodes, &model, &reference)?;
    }
}
