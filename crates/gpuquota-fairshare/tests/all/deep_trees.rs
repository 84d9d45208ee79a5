//! The depth limit and linear time on deep cohort chains (`kueue shares`).

fn chain(depth: usize) -> String {
    let mut y = String::new();
    for i in 0..depth {
        let parent = if i == 0 {
            String::new()
        } else {
            format!("  parentName: c{:05}\n", i - 1)
        };
        y += &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {{name: c{i:05}}}\nspec:\n{parent}  resourceGroups:\n  - coveredResources: [cpu]\n    flavors: [{{name: f, resources: [{{name: cpu, nominalQuota: 1}}]}}]\n---\n"
        );
    }
    y += &format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: leaf}}\nspec:\n  cohortName: c{:05}\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors: [{{name: f, resources: [{{name: cpu, nominalQuota: 1}}]}}]\n---\n",
        depth - 1
    );
    y
}

#[test]
fn shares_accept_the_limit_and_refuse_one_more_level() {
    let model = gpuquota_model::import_str("t.yaml", &chain(1000))
        .unwrap()
        .model;
    let r = gpuquota_fairshare::shares::kueue_shares(&model).unwrap();
    assert_eq!(r.cohorts.len(), 1000);
    assert_eq!(r.cluster_queues.len(), 1);

    let model = gpuquota_model::import_str("t.yaml", &chain(1001))
        .unwrap()
        .model;
    let e = gpuquota_fairshare::shares::kueue_shares(&model).unwrap_err();
    assert_eq!(
        e,
        gpuquota_fairshare::FairShareError::TreeTooDeep {
            cohort: "c01000".into()
        }
    );
    assert_eq!(e.code(), gpuquota_model::limits::TREE_TOO_DEEP);
    assert_eq!(
        e.to_string(),
        "Cohort \"c01000\": spec.parentName: the cohort tree is deeper than 1000 levels (the limit every gpuquota engine applies; real platforms use 2 to 5)"
    );
}
