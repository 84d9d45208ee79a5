//! Differential test: the incremental quota tree against the model's slow reference
//! (`gpuquota_model::quota_tree`), on random hierarchies imported from manifests.

use gpuquota_fairshare::FlavorResource;
use gpuquota_fairshare::shares::tree_from_model;
use gpuquota_model::import_str;
use gpuquota_model::quota_tree::{self, Node, ReferenceTree as Reference};
use gpuquota_testkit::{Platform, Shape, Tree};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    gpuquota_testkit::config(64)
}

const FRS: [(&str, &str); 3] = [
    ("a100", "nvidia.com/gpu"),
    ("h100", "nvidia.com/gpu"),
    ("a100", "example.com/nic"),
];

/// The workspace's random platform over three flavor-resources of two resources: a cohort
/// forest (possibly empty), ClusterQueues in a cohort, in the implicit cohort `implicit`, or
/// alone, limits as drawn (a lending limit may exceed the nominal quota: the tree is built
/// without the validator), usage on every flavor-resource.
fn platform() -> impl Strategy<Value = Platform> {
    gpuquota_testkit::platform(Shape {
        frs: FRS.to_vec(),
        cohorts: 0..4,
        tree: Tree::Forest,
        cohort_frs: 3,
        queues: 1..6,
        queue_frs: 3..4,
        nominal: 0..12,
        borrowing_limit: 0..6,
        lending_limit: 0..8,
        clamp_lending_limit: false,
        implicit_cohort: true,
        admitted: 0..12,
        pending: 0..1,
        pods: 1..2,
        per_pod: 0..14,
        ..Shape::default()
    })
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
            for (f, r) in FRS {
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
        frs: FRS.to_vec(),
        cohorts: 0..4,
        tree: Tree::Forest,
        cohort_frs: 3,
        queues: 1..6,
        queue_frs: 3..4,
        nominal: 0..12,
        borrowing_limit: 0..6,
        lending_limit: 0..8,
        clamp_lending_limit: false,
        implicit_cohort: true,
        fair_sharing: true,
        admitted: 0..12,
        pending: 0..1,
        pods: 1..2,
        per_pod: 0..14,
        ..Shape::default()
    })
}

/// `fairSharing.weight` of a node as the manifests state it (1 when unset).
fn weight_of(model: &gpuquota_model::Model, node: &Node) -> f64 {
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

proptest! {
    #![proptest_config(config())]

    /// The standalone tree, read through the `QuotaView` trait the fair-sharing algorithms
    /// use: every node's quota numbers and its dominant resource share (weighted share and
    /// dominant resource) equal the slow reference's, computed from the definitions.
    #[test]
    fn trait_shares_match_reference(p in weighted_platform()) {
        use gpuquota_fairshare::view::{self, QuotaView};
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
        for (node, id) in &nodes {
            for (f, fr) in mine.flavor_resources().iter().enumerate() {
                let rf = quota_tree::FlavorResource::new(fr.flavor.as_str(), fr.resource.as_str());
                prop_assert_eq!(mine.subtree_quota_at(*id, f), reference.subtree_quota(node, &rf), "subtreeQuota {}", node);
                prop_assert_eq!(mine.local_quota_at(*id, f), reference.local_quota(node, &rf), "localQuota {}", node);
                prop_assert_eq!(mine.usage_at(*id, f), reference.usage(node, &rf), "usage {}", node);
                prop_assert_eq!(mine.in_subtree(*id, f), reference.subtree_flavor_resources(node).contains(&rf), "SubtreeQuota keys {}", node);
            }
            let drs = view::drs(&mine, *id);
            let (share, dominant) = reference.weighted_share(node, weight_of(&model, node));
            prop_assert_eq!(drs.weighted_share(), share, "weightedShare {}", node);
            prop_assert_eq!(drs.dominant_resource, dominant, "dominant resource {}", node);
        }
    }
}
