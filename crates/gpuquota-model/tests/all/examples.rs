//! Valid upstream-style manifests import without warnings and validate cleanly.

use gpuquota_model::{Amount, Imported, import_str, validate};
use gpuquota_testkit::quota_tree::{FlavorResource, Node, ReferenceTree};

pub(crate) const EXAMPLES: &[(&str, &str)] = &[
    (
        "kueue-single-clusterqueue.yaml",
        include_str!("../data/kueue-single-clusterqueue.yaml"),
    ),
    (
        "kueue-cohorts.yaml",
        include_str!("../data/kueue-cohorts.yaml"),
    ),
    (
        "kueue-v1beta1.yaml",
        include_str!("../data/kueue-v1beta1.yaml"),
    ),
    ("kai.yaml", include_str!("../data/kai.yaml")),
    ("core.yaml", include_str!("../data/core.yaml")),
];

fn imported(name: &str) -> Imported {
    let (_, text) = EXAMPLES.iter().find(|(n, _)| *n == name).unwrap();
    import_str(name, text).unwrap()
}

#[test]
fn every_example_imports_without_warnings_and_validates() {
    for (name, text) in EXAMPLES {
        let imported = import_str(name, text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(imported.warnings, vec![], "{name}");
        let problems: Vec<String> = validate::problems(&imported.model)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(problems, Vec::<String>::new(), "{name}");
        assert_eq!(validate(&imported.model), Ok(()), "{name}");
    }
}

#[test]
fn object_counts() {
    let counts: Vec<usize> = EXAMPLES
        .iter()
        .map(|(n, _)| imported(n).model.len())
        .collect();
    assert_eq!(counts, [4, 11, 8, 6, 4]);
}

#[test]
fn v1beta1_spellings_read_as_v1beta2() {
    let m = imported("kueue-v1beta1.yaml").model;
    assert_eq!(
        m.cluster_queues["cq"].spec.cohort_name.as_deref(),
        Some("child")
    );
    assert_eq!(
        m.cohorts["child"].spec.parent_name.as_deref(),
        Some("parent")
    );
    let (borrow, preempt, _) = m.cluster_queues["cq"].spec.flavor_fungibility();
    assert_eq!(borrow.as_str(), "MayStopSearch");
    assert_eq!(preempt.as_str(), "MayStopSearch");
    assert_eq!(
        m.workloads["ns1/job-a"].spec.priority_class(),
        Some((true, "high"))
    );
    assert_eq!(
        m.workloads["ns1/job-b"].spec.priority_class(),
        Some((false, "low"))
    );
}

#[test]
fn admitted_usage_is_scaled_by_reclaimable_pods() {
    let m = imported("kueue-v1beta1.yaml").model;
    let mut tree = ReferenceTree::new(&m).unwrap();
    tree.add_admitted_workloads();
    let fr = FlavorResource::new("default-flavor", "cpu");
    // driver 500m + workers 4 cpu scaled to 3 of 4 pods = 3500m.
    assert_eq!(
        tree.usage(&Node::ClusterQueue("cq".into()), &fr),
        Amount(3500)
    );
    // cq: nominal 8, borrowingLimit 2 under an implicit-parent cohort: at most 8 + 0 borrowable.
    assert_eq!(
        tree.potential_available(&Node::ClusterQueue("cq".into()), &fr),
        Amount(8000)
    );
}

#[test]
fn cohort_lending_limit_may_exceed_its_nominal() {
    let m = imported("kueue-cohorts.yaml").model;
    let tree = ReferenceTree::new(&m).unwrap();
    let gpu = FlavorResource::new("a100", "nvidia.com/gpu");
    let research = Node::Cohort("research".into());
    // own 3 + team-a lends 0 (lendingLimit 0) + team-b lends 2 = 5; lendingLimit 5 keeps 0.
    assert_eq!(tree.subtree_quota(&research, &gpu), Amount(5));
    assert_eq!(tree.local_quota(&research, &gpu), Amount(0));
    // team-a: 4 reserved, cannot borrow (borrowingLimit 0).
    let team_a = Node::ClusterQueue("team-a".into());
    assert_eq!(tree.guaranteed(&team_a, &gpu), Amount(4));
    assert_eq!(tree.potential_available(&team_a, &gpu), Amount(4));
    // team-b: no limits; the research cohort may not borrow from root (borrowingLimit 0).
    let team_b = Node::ClusterQueue("team-b".into());
    assert_eq!(tree.potential_available(&team_b, &gpu), Amount(5));
    // The ClusterQueue named like the cohort is a separate tree under implicit `shared`.
    assert_eq!(
        tree.roots(),
        vec![Node::Cohort("root".into()), Node::Cohort("shared".into())]
    );
}
