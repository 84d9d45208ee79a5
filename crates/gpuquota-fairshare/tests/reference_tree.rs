//! Differential test: the incremental quota tree against the model's slow reference
//! (`gpuquota_model::quota_tree`), on random hierarchies imported from manifests.

use gpuquota_fairshare::FlavorResource;
use gpuquota_fairshare::shares::tree_from_model;
use gpuquota_model::import_str;
use gpuquota_model::quota_tree::{self, Node, ReferenceTree as Reference};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    let mut c = ProptestConfig::with_cases(64);
    if std::env::var_os("CI").is_some() {
        c.max_shrink_iters = 0;
    }
    c
}

const FRS: [(&str, &str); 3] = [
    ("a100", "nvidia.com/gpu"),
    ("h100", "nvidia.com/gpu"),
    ("a100", "example.com/nic"),
];

fn quota_yaml(q: &[(u8, Option<u8>, Option<u8>)], with_limits: bool) -> String {
    let mut out = String::from(
        "  resourceGroups:\n  - coveredResources: [nvidia.com/gpu, example.com/nic]\n    flavors:\n",
    );
    for flavor in ["a100", "h100"] {
        out.push_str(&format!("    - name: {flavor}\n      resources:\n"));
        for (k, (f, r)) in FRS.iter().enumerate() {
            if *f != flavor {
                continue;
            }
            let (n, bl, ll) = q[k];
            out.push_str(&format!("      - name: {r}\n        nominalQuota: {n}\n"));
            if with_limits {
                if let Some(bl) = bl {
                    out.push_str(&format!("        borrowingLimit: {bl}\n"));
                }
                if let Some(ll) = ll {
                    out.push_str(&format!("        lendingLimit: {ll}\n"));
                }
            }
        }
    }
    out
}

type Q = Vec<(u8, Option<u8>, Option<u8>)>;

fn quotas() -> impl Strategy<Value = Q> {
    prop::collection::vec(
        (0u8..12, prop::option::of(0u8..6), prop::option::of(0u8..8)),
        3,
    )
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn incremental_tree_matches_reference(
        cohorts in prop::collection::vec((0usize..4, quotas()), 0..4),
        cqs in prop::collection::vec((0usize..6, quotas(), prop::collection::vec(0u8..14, 3)), 1..6),
    ) {
        let mut yaml = String::new();
        for (i, (p, q)) in cohorts.iter().enumerate() {
            let parent = if i > 0 && *p < i { Some(format!("c{p}")) } else { None };
            yaml.push_str(&format!("---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {{name: c{i}}}\nspec:\n"));
            if let Some(p) = &parent {
                yaml.push_str(&format!("  parentName: {p}\n"));
            }
            yaml.push_str(&quota_yaml(q, parent.is_some()));
        }
        for (i, (c, q, usage)) in cqs.iter().enumerate() {
            let cohort = if *c < cohorts.len() { Some(format!("c{c}")) } else if *c == 5 { Some("implicit".to_string()) } else { None };
            yaml.push_str(&format!("---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: q{i}}}\nspec:\n"));
            if let Some(c) = &cohort {
                yaml.push_str(&format!("  cohortName: {c}\n"));
            }
            yaml.push_str(&quota_yaml(q, cohort.is_some()));
            for (k, (f, r)) in FRS.iter().enumerate() {
                yaml.push_str(&format!(
                    "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: w{i}-{k}, namespace: ns}}\nspec:\n  queueName: lq\n  podSets: [{{name: main, count: 1, template: {{spec: {{containers: []}}}}}}]\nstatus:\n  admission:\n    clusterQueue: q{i}\n    podSetAssignments:\n    - name: main\n      flavors: {{{r}: {f}}}\n      resourceUsage: {{{r}: \"{}\"}}\n",
                    usage[k]
                ));
            }
        }
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
