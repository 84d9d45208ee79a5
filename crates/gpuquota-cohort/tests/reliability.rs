//! Regressions of the reliability issue: crashes, loops and deep trees.

use crate::common::*;

/// A resource group whose `coveredResources` is missing (the key misspelt) used to index an
/// empty flavor-resource table and panic; it is a field error naming the group.
#[test]
fn group_without_covered_resources_is_an_error_not_a_panic() {
    let mut y = rf("f");
    y += "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResource: [cpu]\n    flavors:\n    - name: f\n      resources:\n      - name: cpu\n        nominalQuota: 1\n---\n";
    let imported = gpuquota_model::import_str("t.yaml", &y).unwrap();
    let err = gpuquota_cohort::World::build(&imported.model).unwrap_err();
    let fields: Vec<(&str, &str)> = err
        .problems
        .iter()
        .map(|p| (p.field.as_str(), p.message.as_str()))
        .collect();
    assert_eq!(
        fields,
        [
            (
                "spec.resourceGroups[0].coveredResources",
                "must have at least 1 item"
            ),
            (
                "spec.resourceGroups[0].flavors[0].resources",
                "flavors must have the same number of resources as the coveredResources"
            ),
            (
                "spec.resourceGroups[0].flavors[0].resources[0].name",
                "must match the name in coveredResources"
            ),
        ]
    );
}
