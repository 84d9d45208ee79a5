//! Dynamic Resource Allocation objects: read on every path, converted Workloads keep their
//! claims, Kueue's refusals carry upstream's messages.

use gpuquota_model::import::Importer;
use gpuquota_model::workloads::ObjectKind;
use gpuquota_model::workloads::dra::{self, ClassMapping};

const DRA: &str = include_str!("../data/dra.yaml");

fn warnings(text: &str) -> Vec<String> {
    let i = gpuquota_model::import_str("dra.yaml", text).unwrap();
    i.warnings.iter().map(ToString::to_string).collect()
}

#[test]
fn fixture_reads_every_dra_kind() {
    let m = gpuquota_model::import_str("dra.yaml", DRA).unwrap().model;
    let kinds: Vec<ObjectKind> = m.workload_objects.values().map(|o| o.kind).collect();
    for k in [
        ObjectKind::DeviceClass,
        ObjectKind::ResourceSlice,
        ObjectKind::ResourceClaimTemplate,
        ObjectKind::ResourceClaim,
    ] {
        assert!(kinds.contains(&k), "{k:?} missing");
    }
    let (per_node, all) = dra::kai_node_gpus(&m);
    assert_eq!(per_node["dgx-01"], 4);
    assert_eq!(all, 0);
    // the Job's Workload keeps the pod template's claim
    let wl = m.workloads.values().next().unwrap();
    let claims = dra::pod_claims(&wl.spec.pod_sets[0].template.spec);
    assert_eq!(claims.len(), 1);
    assert_eq!(claims[0].template.as_deref(), Some("two-gpus"));
}

#[test]
fn fixture_agrees_on_fast_and_exact_paths() {
    let mut fast = Importer::new();
    fast.add_str("t", DRA);
    let mut exact = Importer::exact();
    exact.add_str("t", DRA);
    assert_eq!(fast.finish(), exact.finish());
}

#[test]
fn kueue_counts_template_devices_per_pod() {
    let m = gpuquota_model::import_str("dra.yaml", DRA).unwrap().model;
    let wl = m.workloads.values().next().unwrap();
    let map = |dc: &str| {
        (dc == "gpu.nvidia.com").then(|| ClassMapping::Resource("nvidia.com/gpu".into()))
    };
    let per_pod = dra::kueue_requests(&m, "team-a", &wl.spec.pod_sets, &map).unwrap();
    assert_eq!(per_pod.len(), 1);
    assert_eq!(per_pod[0]["nvidia.com/gpu"], 2);
    // upstream's message for an unmapped class
    // (kubernetes-sigs/kueue: pkg/controller/core/workload_controller_dra_test.go)
    let none = |_: &str| None;
    assert_eq!(
        dra::kueue_requests(&m, "team-a", &wl.spec.pod_sets, &none).unwrap_err(),
        "spec.podSets[0].template.spec.resourceClaims[0].resourceClaimTemplateName: Not found: \
         \"DeviceClass gpu.nvidia.com is not mapped in DRA configuration for podset main\""
    );
}

#[test]
fn kueue_refusals_name_upstream_reasons() {
    let base = DRA.replace(
        "resourceClaimTemplateName: two-gpus",
        "resourceClaimName: shared-gpu",
    );
    let m = gpuquota_model::import_str("dra.yaml", &base).unwrap().model;
    let wl = m.workloads.values().next().unwrap();
    let map = |_: &str| Some(ClassMapping::Resource("nvidia.com/gpu".into()));
    assert_eq!(
        dra::kueue_requests(&m, "team-a", &wl.spec.pod_sets, &map).unwrap_err(),
        "KueueDRAIntegration feature does not support use of resource claims"
    );
    let all = DRA.replace(
        "allocationMode: ExactCount\n          count: 2",
        "allocationMode: All",
    );
    let m = gpuquota_model::import_str("dra.yaml", &all).unwrap().model;
    let wl = m.workloads.values().next().unwrap();
    assert_eq!(
        dra::kueue_requests(&m, "team-a", &wl.spec.pod_sets, &map).unwrap_err(),
        "spec.podSets[0].template.spec.resourceClaims[0].devices.requests[0].exactly.allocationMode: \
         Invalid value: \"All\": ResourceClaimTemplate two-gpus: AllocationMode 'All' is not supported"
    );
    let fa = DRA.replace(
        "        exactly:\n          deviceClassName: gpu.nvidia.com\n          allocationMode: ExactCount\n          count: 2",
        "        firstAvailable:\n        - {name: big, deviceClassName: gpu.nvidia.com, count: 2}",
    );
    let m = gpuquota_model::import_str("dra.yaml", &fa).unwrap().model;
    let wl = m.workloads.values().next().unwrap();
    assert_eq!(
        dra::kueue_requests(&m, "team-a", &wl.spec.pod_sets, &map).unwrap_err(),
        "spec.podSets[0].template.spec.resourceClaims[0].devices.requests[0]: Invalid value: \
         \"null\": ResourceClaimTemplate two-gpus: FirstAvailable device selection is not supported"
    );
}

#[test]
fn unmodelled_fields_and_missing_templates_are_warned() {
    let w = warnings(DRA);
    assert!(!w.iter().any(|m| m.contains("unknown-kind")), "{w:?}");
    let missing = DRA.replace(
        "resourceClaimTemplateName: two-gpus",
        "resourceClaimTemplateName: nope",
    );
    let w = warnings(&missing);
    assert!(
        w.iter().any(
            |m| m.contains("ResourceClaimTemplate \"nope\" is not in the files")
                && m.contains("resourceClaims[0]")
        ),
        "{w:?}"
    );
    let sel = DRA.replace(
        "          count: 2\n",
        "          count: 2\n          selectors: [{cel: {expression: \"device.attributes['gpu.nvidia.com'].productName == 'H100'\"}}]\n",
    );
    let w = warnings(&sel);
    assert!(
        w.iter()
            .any(|m| m.contains("spec.spec.devices.requests[0]")
                && m.contains("CEL device selector")),
        "{w:?}"
    );
    let alpha = DRA.replace(
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass",
        "apiVersion: resource.k8s.io/v1alpha3\nkind: DeviceClass",
    );
    let w = warnings(&alpha);
    assert!(
        w.iter()
            .any(|m| m.contains("resource.k8s.io/v1alpha3 is not a version")),
        "{w:?}"
    );
}

#[test]
fn resource_quota_claim_keys_are_valid() {
    let rq = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: dra, namespace: team-a}\nspec:\n  hard:\n    gpu.nvidia.com.deviceclass.resource.k8s.io/devices: \"4\"\n    count/resourceclaims.resource.k8s.io: \"10\"\n    requests.gpu.nvidia.com.deviceclass.resource.k8s.io/devices: \"4\"\n";
    let m = gpuquota_model::import_str("rq.yaml", rq).unwrap().model;
    assert_eq!(gpuquota_model::validate::problems(&m), Vec::new());
    let d = gpuquota_model::validate::diagnostics(&m, &Default::default());
    let texts: Vec<String> = d.iter().map(ToString::to_string).collect();
    assert!(
        texts.iter().any(|t| t
            .contains("spec.hard[requests.gpu.nvidia.com.deviceclass.resource.k8s.io/devices]")
            && t.contains("caps nothing")),
        "{texts:?}"
    );
    // a fraction is refused as for every integer key
    let half = rq.replace("devices: \"4\"\n    count", "devices: \"1500m\"\n    count");
    let m = gpuquota_model::import_str("rq.yaml", &half).unwrap().model;
    let p = gpuquota_model::validate::problems(&m);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].to_string().contains("must be an integer"), "{}", p[0]);
}

const PARTITIONABLE: &str = include_str!("../data/dra-partitionable.yaml");

#[test]
fn partitionable_devices_are_read_and_warned_about() {
    let mut fast = Importer::new();
    fast.add_str("t", PARTITIONABLE);
    let mut exact = Importer::exact();
    exact.add_str("t", PARTITIONABLE);
    assert_eq!(fast.finish(), exact.finish());
    let w = warnings(PARTITIONABLE);
    for field in [
        "spec.sharedCounters",
        "spec.devices[0].consumesCounters",
        "spec.devices[1].consumesCounters",
        "spec.extendedResourceName",
    ] {
        assert!(
            w.iter()
                .any(|m| m.contains(field) && m.contains("not modelled")),
            "{field}: {w:?}"
        );
    }
    assert_eq!(w.len(), 4, "{w:?}");
    let m = gpuquota_model::import_str("p.yaml", PARTITIONABLE)
        .unwrap()
        .model;
    // KAI counts the slice's two devices as two GPUs of the node (its count ignores counters)
    assert_eq!(dra::kai_node_gpus(&m).0["dgx-02"], 2);
    let spec = dra::template_spec(&m, "team-b", "one-mig").unwrap();
    assert_eq!(
        dra::claim_quota_usage(spec).unwrap()["mig.nvidia.com.deviceclass.resource.k8s.io/devices"],
        1
    );
}
