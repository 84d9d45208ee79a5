//! Differential test: the incremental quota tree against the model's slow reference
//! (`gpuquota_testkit::quota_tree`), on random hierarchies imported from manifests.

use gpuquota_fairshare::FlavorResource;
use gpuquota_fairshare::testkit::tree_from_model;
use gpuquota_model::import_str;
use gpuquota_testkit::quota_tree::{self, Node, ReferenceTree as Reference};
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

proptest! {
    #![proptest_config(config())]

    /// The quota picture (`gpuquota quotas`), drawn from the production quota tree, equals the
    /// reference node by node: the same nodes in the same order, parents, depths, listed
    /// flavor-resources, own quotas and every derived number.
    #[test]
    fn picture_matches_reference(p in platform()) {
        let yaml = p.documents().concat();
        let model = import_str("gen.yaml", &yaml).unwrap().model;
        let reference = Reference::new(&model).unwrap();
        let pic = gpuquota_fairshare::picture::picture(&model).unwrap();
        // the reference's nodes depth-first from each root, child cohorts then ClusterQueues
        let mut expected = Vec::new();
        for root in reference.roots() {
            let mut stack = vec![root];
            while let Some(n) = stack.pop() {
                stack.extend(reference.children(&n).into_iter().rev());
                expected.push(n);
            }
        }
        let got: Vec<_> = pic.cohort_trees.iter().flat_map(|t| &t.nodes).collect();
        prop_assert_eq!(got.len(), expected.len());
        for (g, node) in got.iter().zip(&expected) {
            prop_assert_eq!(g.kind, node.kind());
            prop_assert_eq!(g.name.as_str(), node.name());
            prop_assert_eq!(g.depth, reference.depth(node));
            let parent = reference.parent(node);
            prop_assert_eq!(g.parent.as_deref(), parent.as_ref().map(Node::name));
            let implicit = matches!(node, Node::Cohort(n) if !model.cohorts.contains_key(n));
            prop_assert_eq!(g.implicit, implicit);
            let frs: Vec<quota_tree::FlavorResource> = match node {
                Node::ClusterQueue(_) => reference.own_flavor_resources(node),
                Node::Cohort(_) => reference.subtree_flavor_resources(node).into_iter().collect(),
            };
            prop_assert_eq!(g.quotas.len(), frs.len(), "flavor-resources of {}", node);
            for (q, fr) in g.quotas.iter().zip(&frs) {
                let s = |a: gpuquota_model::Amount| fr.resource.format_amount(a);
                let own = reference.quota(node, fr);
                prop_assert_eq!(q.flavor.as_str(), fr.flavor.as_str());
                prop_assert_eq!(q.resource.as_str(), fr.resource.as_str());
                prop_assert_eq!(&q.nominal_quota, &s(own.nominal), "nominal {} {}", node, fr);
                prop_assert_eq!(&q.borrowing_limit, &own.borrowing_limit.map(s), "BL {} {}", node, fr);
                prop_assert_eq!(&q.lending_limit, &own.lending_limit.map(s), "LL {} {}", node, fr);
                prop_assert_eq!(&q.subtree_quota, &s(reference.subtree_quota(node, fr)), "subtreeQuota {} {}", node, fr);
                prop_assert_eq!(&q.guaranteed, &s(reference.guaranteed(node, fr)), "guaranteed {} {}", node, fr);
                prop_assert_eq!(&q.lends_at_most, &s(reference.lendable(node, fr)), "lendsAtMost {} {}", node, fr);
                prop_assert_eq!(&q.most_it_can_use, &s(reference.potential_available(node, fr)), "mostItCanUse {} {}", node, fr);
            }
        }
    }
}
