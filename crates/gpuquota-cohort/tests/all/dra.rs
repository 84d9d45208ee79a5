//! Dynamic Resource Allocation: claims from templates count against the quota resource the
//! Configuration's `deviceClassMappings` names, per pod (kubernetes-sigs/kueue: pkg/dra/claims.go,
//! pkg/workload/workload.go `totalRequestsFromPodSets`); what Kueue refuses stays pending with
//! its message (pkg/controller/core/workload_controller.go); ResourceQuota claim keys cap the
//! claims the pods create (kubernetes/kubernetes: pkg/quota/v1/evaluator/core/resource_claims.go).

use crate::common::*;

const MAPPING: &str = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nresources:\n  deviceClassMappings:\n  - name: nvidia.com/gpu\n    deviceClassNames: [gpu.nvidia.com]\n---\n";

fn template(name: &str, request: &str) -> String {
    format!(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {{name: {name}, namespace: ns}}\nspec:\n  spec:\n    devices:\n      requests:\n      - name: gpus\n        {request}\n---\n"
    )
}

fn two_gpus() -> String {
    template(
        "two-gpus",
        "exactly: {deviceClassName: gpu.nvidia.com, count: 2}",
    )
}

fn claiming(name: &str, created: u32, count: i32, claim: &str) -> String {
    wl_full(
        name,
        "q",
        0,
        created,
        &[("main", count, None, &[])],
        &format!("resourceClaims:\n- {{name: gpus, {claim}}}"),
    )
}

fn eight_gpus() -> String {
    let mut y = rf("f");
    y += &cq("q", None, "", &[vec![gpu("f", "8")]]);
    y
}

#[test]
fn template_devices_count_per_pod_against_the_mapped_resource() {
    // 3 pods × 2 GPUs = 6 of 8 GPUs; the second asks 2 × 2 = 4 more, which do not fit
    let mut y = eight_gpus() + MAPPING + &two_gpus();
    y += &claiming("first", 1, 3, "resourceClaimTemplateName: two-gpus");
    y += &claiming("second", 2, 2, "resourceClaimTemplateName: two-gpus");
    let r = run(&y);
    assert_eq!(admitted_names(&r), ["ns/first"]);
    let p = pending_of(&r, "ns/second");
    assert!(p.message.contains("nvidia.com/gpu"), "{}", p.message);
    assert!(p.message.contains("2 more needed"), "{}", p.message);
    // without the mapping's device class the first would be charged nothing: both would fit
}

#[test]
fn unmapped_device_class_stays_pending_with_upstreams_message() {
    let mut y = eight_gpus() + &two_gpus();
    y += &claiming("first", 1, 1, "resourceClaimTemplateName: two-gpus");
    let r = run(&y);
    assert!(admitted_names(&r).is_empty());
    let p = pending_of(&r, "ns/first");
    assert_eq!(p.reason, "Misconfigured");
    assert_eq!(
        p.message,
        "spec.podSets[0].template.spec.resourceClaims[0].resourceClaimTemplateName: Not found: \
         \"DeviceClass gpu.nvidia.com is not mapped in DRA configuration for podset main\""
    );
}

#[test]
fn refused_claims_stay_pending_misconfigured() {
    let shared = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: shared, namespace: ns}\nspec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]}}\n---\n";
    let mut y = eight_gpus() + MAPPING + shared;
    y += &template(
        "all-gpus",
        "exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All}",
    );
    y += &template(
        "either",
        "firstAvailable: [{name: big, deviceClassName: gpu.nvidia.com, count: 2}]",
    );
    y += &claiming("by-name", 1, 1, "resourceClaimName: shared");
    y += &claiming("all", 2, 1, "resourceClaimTemplateName: all-gpus");
    y += &claiming("first-available", 3, 1, "resourceClaimTemplateName: either");
    let r = run(&y);
    assert!(admitted_names(&r).is_empty());
    let by_name = pending_of(&r, "ns/by-name");
    assert_eq!(
        (by_name.reason.as_str(), by_name.message.as_str()),
        (
            "Misconfigured",
            "KueueDRAIntegration feature does not support use of resource claims"
        )
    );
    assert_eq!(
        pending_of(&r, "ns/all").message,
        "spec.podSets[0].template.spec.resourceClaims[0].devices.requests[0].exactly.allocationMode: \
         Invalid value: \"All\": ResourceClaimTemplate all-gpus: AllocationMode 'All' is not supported"
    );
    assert_eq!(
        pending_of(&r, "ns/first-available").message,
        "spec.podSets[0].template.spec.resourceClaims[0].devices.requests[0]: Invalid value: \
         \"null\": ResourceClaimTemplate either: FirstAvailable device selection is not supported"
    );
}

#[test]
fn resource_quota_claim_key_caps_the_claims_pods_create() {
    // 3 pods each create a claim of 2 GPUs: 6 devices against a cap of 4, refused with 0
    // used; the next, 2 × 2 = 4 devices, fits exactly; a third pod's 2 then find 4 used
    let rq = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: dra, namespace: ns}\nspec:\n  hard:\n    gpu.nvidia.com.deviceclass.resource.k8s.io/devices: \"4\"\n---\n";
    let mut y = eight_gpus() + MAPPING + &two_gpus() + rq;
    y += &claiming("six", 1, 3, "resourceClaimTemplateName: two-gpus");
    y += &claiming("four", 2, 2, "resourceClaimTemplateName: two-gpus");
    y += &claiming("two", 3, 1, "resourceClaimTemplateName: two-gpus");
    let r = run(&y);
    assert_eq!(admitted_names(&r), ["ns/four"]);
    let p = pending_of(&r, "ns/six");
    assert_eq!(p.reason, "Forbidden");
    assert_eq!(
        p.message,
        "exceeded quota: dra, requested: gpu.nvidia.com.deviceclass.resource.k8s.io/devices=6, \
         used: gpu.nvidia.com.deviceclass.resource.k8s.io/devices=0, limited: \
         gpu.nvidia.com.deviceclass.resource.k8s.io/devices=4"
    );
    assert_eq!(
        pending_of(&r, "ns/two").message,
        "exceeded quota: dra, requested: gpu.nvidia.com.deviceclass.resource.k8s.io/devices=2, \
         used: gpu.nvidia.com.deviceclass.resource.k8s.io/devices=4, limited: \
         gpu.nvidia.com.deviceclass.resource.k8s.io/devices=4"
    );
}

#[test]
fn claims_by_name_already_in_the_namespace_count_as_used() {
    // a shared claim of 3 GPUs (no pod owns it) uses 3 of the cap of 4: a 2-device pod waits;
    // a claim a pod owns was made from a template and is not counted again
    let rq = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: dra, namespace: ns}\nspec:\n  hard:\n    gpu.nvidia.com.deviceclass.resource.k8s.io/devices: \"4\"\n---\n";
    let shared = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: shared, namespace: ns}\nspec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com, count: 3}}]}}\n---\n";
    let owned = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: p-gpus-x1, namespace: ns, ownerReferences: [{apiVersion: v1, kind: Pod, name: p, uid: u, controller: true}]}\nspec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com, count: 8}}]}}\n---\n";
    let mut y = eight_gpus() + MAPPING + &two_gpus() + rq + shared + owned;
    y += &claiming("two", 1, 1, "resourceClaimTemplateName: two-gpus");
    let r = run(&y);
    assert!(admitted_names(&r).is_empty());
    assert_eq!(
        pending_of(&r, "ns/two").message,
        "exceeded quota: dra, requested: gpu.nvidia.com.deviceclass.resource.k8s.io/devices=2, \
         used: gpu.nvidia.com.deviceclass.resource.k8s.io/devices=3, limited: \
         gpu.nvidia.com.deviceclass.resource.k8s.io/devices=4"
    );
}
