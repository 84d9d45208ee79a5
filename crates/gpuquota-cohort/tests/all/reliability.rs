//! Regressions of the reliability issue: crashes, loops and deep trees.

use crate::common::*;

/// A resource group whose `coveredResources` is missing (the key misspelt) used to index an
/// empty flavor-resource table and panic; it is a field error naming the group.
#[test]
fn group_without_covered_resources_is_an_error_not_a_panic() {
    let mut y = rf("f");
    y += "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResource: [cpu]\n    flavors:\n    - name: f\n      resources:\n      - name: cpu\n        nominalQuota: 1\n---\n";
    let imported = gpuquota_model::import_str("t.yaml", &y).unwrap();
    // The validated build reports the validator's problems, as `gpuquota validate` does.
    let err = gpuquota_cohort::testkit::build(&imported.model).unwrap_err();
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
                "Required value: must have at least 1 item"
            ),
            (
                "spec.resourceGroups[0]",
                "Invalid value: \"object\": flavors must have the same number of resources as the coveredResources"
            ),
        ]
    );
    // The engine's own guard, without the validator in front of it, refuses it too.
    let err = gpuquota_cohort::testkit::build_unvalidated(&imported.model).unwrap_err();
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

/// The loop of [`classical_loop_yaml`]: the engine does what upstream does at its default
/// gates (the loop upstream's alpha gate `PrioritizePreemptorWorkloads`, off by default,
/// exists to break) and says so in a warning that names both workloads.
#[test]
fn classical_preempt_readmit_loop_is_reported() {
    let r = run(&classical_loop_yaml());
    // the loop: every second cycle the same preemption
    assert!(r.preempted.len() > 10);
    assert!(
        r.preempted
            .iter()
            .all(|p| p.workload == "ns/w0" && p.preemptor == "ns/w1")
    );
    assert_eq!(r.warnings.len(), 1);
    let w = &r.warnings[0];
    assert_eq!(w.code.as_str(), "preemption-loop");
    assert_eq!(w.severity, gpuquota_model::Severity::Warning);
    assert_eq!((w.kind.as_str(), w.name.as_str()), ("Workload", "ns/w1"));
    assert!(
        w.message.starts_with(&format!(
            "preemption loop: ns/w1 preempted ns/w0 {} times (cycles 2, 4, 6, 8, ...)",
            r.preempted.len()
        )),
        "{}",
        w.message
    );
    // the JSON carries the warning
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["warnings"][0]["code"], "preemption-loop");
    assert_eq!(v["warnings"][0]["name"], "ns/w1");
}

/// Fair sharing: `w0` (q1) and `w2` (q0) end with equal shares (200 each), so the DRS
/// tournament takes the older `w0` first while `LessThanOrEqualToFinalShare` lets `w2`
/// preempt it (kubernetes-sigs/kueue: pkg/scheduler/fair_sharing_iterator.go and
/// pkg/scheduler/preemption/fairsharing/strategy.go): upstream loops at its default gates,
/// and so does the engine, with the warning.
#[test]
fn fair_sharing_preempt_readmit_loop_is_reported() {
    let mut y = rf("f");
    let pol = "preemption: {reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}";
    y += &cq("q0", Some("co"), pol, &[vec![gpu("f", "3")]]);
    y += &cq("q1", Some("co"), pol, &[vec![gpu("f", "2")]]);
    y += &wl("w0", "q1", 2, 0, 1, &[("nvidia.com/gpu", "3")]);
    y += &admitted(
        "w1",
        "q0",
        "q0",
        0,
        1,
        1,
        "f",
        &[("nvidia.com/gpu", "1", "1")],
    );
    y += &wl("w2", "q0", 2, 2, 1, &[("nvidia.com/gpu", "3")]);
    let imported = gpuquota_model::import_str("t.yaml", &y).unwrap();
    let world = gpuquota_cohort::testkit::build(&imported.model).unwrap();
    let settings = gpuquota_fairshare::config::settings_from_configuration(None, true).unwrap();
    let r = crate::common::fair_schedule(&world, &imported.model, settings, None).unwrap();
    assert!(r.preempted.len() > 10);
    assert_eq!(r.warnings.len(), 1);
    assert!(
        r.warnings[0]
            .message
            .starts_with("preemption loop: ns/w2 preempted ns/w0 "),
        "{}",
        r.warnings[0].message
    );
    // without a loop there is no warning and no `warnings` key in the JSON
    let calm = run(&{
        let mut y = rf("f");
        y += &cq("q", None, "", &[vec![gpu("f", "1")]]);
        y += &wl("a", "q", 0, 0, 1, &[("nvidia.com/gpu", "1")]);
        y
    });
    assert!(calm.warnings.is_empty());
    assert!(
        serde_json::to_value(&calm)
            .unwrap()
            .get("warnings")
            .is_none()
    );
}

/// A chain of `depth` cohorts (`c00000` the root) with one ClusterQueue under the deepest.
pub(crate) fn chain(depth: usize) -> String {
    let mut y = rf("f");
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
    y += &cq(
        "leaf",
        Some(&format!("c{:05}", depth - 1)),
        "",
        &[vec![cpu("f", "1", None, None)]],
    );
    y += &wl("w", "leaf", 0, 0, 1, &[("cpu", "2")]);
    y
}

/// `MAX_TREE_DEPTH` (1,000) levels are accepted; one more is an error naming the first
/// cohort below the limit, with code `tree-too-deep`.
#[test]
fn cohort_trees_deeper_than_the_limit_are_refused() {
    let ok = world(&chain(1000));
    assert_eq!(ok.tree.nodes.len(), 1001);
    let r = crate::common::schedule(&ok, None);
    // the leaf borrows 1 CPU from the chain above it
    assert_eq!(admitted_names(&r), ["ns/w"]);

    let imported = gpuquota_model::import_str("t.yaml", &chain(1001)).unwrap();
    let err = gpuquota_cohort::testkit::build(&imported.model).unwrap_err();
    assert_eq!(err.problems.len(), 1);
    let p = &err.problems[0];
    assert_eq!((p.kind.as_str(), p.name.as_str()), ("Cohort", "c01000"));
    assert_eq!(p.field, "spec.parentName");
    assert_eq!(p.code.as_str(), "tree-too-deep");
    let d = p.diagnostic();
    assert_eq!(d.code, gpuquota_model::limits::TREE_TOO_DEEP);
    assert_eq!(
        d.to_string(),
        "Cohort \"c01000\": spec.parentName: the cohort tree is deeper than 1000 levels (the limit every gpuquota engine applies; real platforms use 2 to 5)"
    );
}

/// A pending workload's `status.reclaimablePods` reduces what it asks for (upstream's
/// ReclaimablePods gate, on by default; kubernetes-sigs/kueue: pkg/workload/workload.go,
/// `podSetsCountsAfterReclaim`): 5 pods of which 2 are reclaimable need 3 pods' quota.
#[test]
fn reclaimable_pods_reduce_a_pending_request() {
    let mut y = rf("f");
    y += &cq("q", None, "", &[vec![cpu("f", "3", None, None)]]);
    let mut w = wl("w", "q", 0, 0, 5, &[("cpu", "1")]);
    w.truncate(w.len() - 4);
    w += "status:\n  reclaimablePods:\n  - name: main\n    count: 2\n---\n";
    y += &w;
    let r = run(&y);
    assert_eq!(admitted_names(&r), ["ns/w"]);
    assert_eq!(r.admitted[0].pod_sets[0].count, 3);
    // without the status the 5 pods exceed the ClusterQueue's 3 CPUs
    let mut y = rf("f");
    y += &cq("q", None, "", &[vec![cpu("f", "3", None, None)]]);
    y += &wl("w", "q", 0, 0, 5, &[("cpu", "1")]);
    let r = run(&y);
    assert_eq!(pending_of(&r, "ns/w").reason, "ExceedsMaxQuota");
}
