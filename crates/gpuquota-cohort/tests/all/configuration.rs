//! The Kueue Configuration's `resources` stanza and the parts the engine does not model.

use crate::common::*;

const CONFIG: &str = "apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
resources:
  excludeResourcePrefixes: [example.com/license-]
  transformations:
  - input: nvidia.com/mig-1g.5gb
    strategy: Replace
    outputs: {example.com/accelerator-memory: 5Gi, example.com/credits: \"10\"}
  - input: nvidia.com/mig-2g.10gb
    strategy: Replace
    outputs: {example.com/accelerator-memory: 10Gi, example.com/credits: \"15\"}
  - input: cpu
    strategy: Retain
    outputs: {example.com/credits: \"1\"}
---
";

/// Two MIG slices of different sizes share one accelerator-memory quota, as in the shared
/// quota example of Kueue's resource-transformation docs: the first workload takes 10Gi of
/// the 15Gi, the second (another 10Gi) waits. Without the transformations neither could be
/// admitted (the ClusterQueue covers no MIG resource), and without the exclusion the license
/// request would make both `NoFit`.
fn shared_quota(config: &str) -> String {
    let mut y = config.to_owned();
    y += &rf("f");
    y += &cq(
        "team",
        None,
        "",
        &[vec![(
            "f",
            vec![
                ("cpu", "4", None, None),
                ("example.com/accelerator-memory", "15Gi", None, None),
                ("example.com/credits", "100", None, None),
            ],
        )]],
    );
    let reqs: &[(&str, &str)] = &[
        ("cpu", "1"),
        ("nvidia.com/mig-2g.10gb", "1"),
        ("example.com/license-seat", "1"),
    ];
    y += &wl("a", "team", 0, 0, 1, reqs);
    y += &wl("b", "team", 0, 1, 1, reqs);
    y
}

#[test]
fn transformations_and_exclusions_decide_what_a_workload_asks_for() {
    let r = run(&shared_quota(CONFIG));
    assert_eq!(admitted_names(&r), ["ns/a"]);
    let flavors = &r.admitted[0].pod_sets[0].flavors;
    assert_eq!(
        flavors.keys().map(String::as_str).collect::<Vec<_>>(),
        [
            "cpu",
            "example.com/accelerator-memory",
            "example.com/credits"
        ]
    );
    let b = pending_of(&r, "ns/b");
    assert_eq!(b.reason, "WaitingForQuota");
    assert_eq!(
        b.message,
        "couldn't assign flavors to pod set main: insufficient unused quota for example.com/accelerator-memory in flavor f, 5368709120 more needed"
    );
    // the same files without the Configuration: the MIG and license requests are not covered
    let r = run(&shared_quota(""));
    assert!(r.admitted.is_empty());
    assert_eq!(pending_of(&r, "ns/a").reason, "NoMatchingFlavor");
}

#[test]
fn invalid_transformations_are_field_errors() {
    let config = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nresources:\n  transformations:\n  - input: cpu\n    strategy: Swap\n---\n";
    let imported = gpuquota_model::import_str("t.yaml", &shared_quota(config)).unwrap();
    let err = gpuquota_cohort::testkit::build(&imported.model).unwrap_err();
    assert_eq!(
        err.problems
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        [
            "Configuration \"\": resources.transformations[0].strategy: Unsupported value: \"Swap\": supported values: Retain, Replace"
        ]
    );
}

/// What the engine does not model is a warning naming the field, never silence.
#[test]
fn unmodelled_configuration_and_topology_requests_are_warnings() {
    let config = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nwaitForPodsReady: {timeout: 5m}\nfeatureGates: {TopologyAwareScheduling: true, AdmissionGatedBy: true}\nintegrations: {frameworks: [batch/job]}\nresources:\n  deviceClassMappings: [{name: example.com/gpu, deviceClassNames: [gpu.example.com], sources: [{counter: {driver: gpu.example.com, name: memory}}]}]\n---\n";
    let mut y = config.to_owned();
    y += &rf("f");
    y += &cq("q", None, "", &[vec![gpu("f", "2")]]);
    let mut w = wl("w", "q", 0, 0, 1, &[("nvidia.com/gpu", "1")]);
    w = w.replace(
        "    template:\n",
        "    topologyRequest: {required: cloud.provider.com/rack}\n    template:\n      metadata:\n        annotations: {kueue.x-k8s.io/podset-preferred-topology: cloud.provider.com/block}\n",
    );
    y += &w;
    let world = world(&y);
    let msgs: Vec<String> = world.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        msgs,
        [
            // AdmissionGatedBy is read (a gated Workload stays pending): no warning
            "Configuration \"\": featureGates.TopologyAwareScheduling: not modelled by the admission engine; ignored (the run is as if it were unset)",
            "Configuration \"\": resources.deviceClassMappings[0].sources: counter- and capacity-backed quota (partitionable devices, consumable capacity) is not modelled; Workloads using these device classes stay pending",
            "Configuration \"\": waitForPodsReady: not modelled by the admission engine; ignored (the run is as if it were unset)",
            "Workload \"ns/w\": spec.podSets[0].template.metadata.annotations[kueue.x-k8s.io/podset-preferred-topology]: topology-aware scheduling is not modelled; the PodSet is admitted by quota alone",
            "Workload \"ns/w\": spec.podSets[0].topologyRequest: topology-aware scheduling is not modelled; the PodSet is admitted by quota alone",
        ]
    );
    // and it is still admitted by quota
    assert_eq!(
        admitted_names(&crate::common::schedule(&world, None)),
        ["ns/w"]
    );
}

/// A ClusterQueue naming a ResourceFlavor that is not in the files is inactive, as upstream
/// marks it (`FlavorNotFound`), and its workloads wait with upstream's message; the world
/// still builds.
#[test]
fn a_missing_flavor_makes_the_queue_inactive_not_the_input_invalid() {
    let mut y = String::new();
    y += &cq("q", None, "", &[vec![gpu("absent", "2")]]);
    y += &wl("w", "q", 0, 0, 1, &[("nvidia.com/gpu", "1")]);
    let world = world(&y);
    assert!(world.warnings.iter().any(|w| w.to_string()
        == "ClusterQueue \"q\": flavor(s) absent not found; the ClusterQueue is inactive (FlavorNotFound)"));
    let r = crate::common::schedule(&world, None);
    let p = pending_of(&r, "ns/w");
    assert_eq!(p.message, "ClusterQueue q is inactive");
}
