//! A namespace ResourceQuota is an extra hard cap.

use crate::common::*;

#[test]
fn resource_quota_caps_admission() {
    let mut y = rf("f");
    y += &cq("q", None, "", &[vec![gpu("f", "8")]]);
    y += "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: gpus, namespace: ns}\nspec:\n  hard:\n    requests.nvidia.com/gpu: \"4\"\n---\n";
    y += &admitted(
        "running",
        "q",
        "q",
        0,
        0,
        3,
        "f",
        &[("nvidia.com/gpu", "1", "3")],
    );
    y += &wl("two", "q", 0, 1, 2, &[("nvidia.com/gpu", "1")]);
    y += &wl("one", "q", 0, 2, 1, &[("nvidia.com/gpu", "1")]);
    let r = run(&y);
    assert_eq!(admitted_names(&r), ["ns/one"]);
    let p = pending_of(&r, "ns/two");
    assert_eq!(p.reason, "Forbidden");
    assert_eq!(
        p.message,
        "exceeded quota: gpus, requested: requests.nvidia.com/gpu=2, used: requests.nvidia.com/gpu=3, limited: requests.nvidia.com/gpu=4"
    );
}

#[test]
fn resource_quota_counts_pods() {
    let mut y = rf("f");
    y += &cq("q", None, "", &[vec![gpu("f", "8")]]);
    y += "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: pods, namespace: ns}\nspec:\n  hard:\n    pods: \"2\"\n---\n";
    y += &wl("three", "q", 0, 1, 3, &[("nvidia.com/gpu", "1")]);
    let r = run(&y);
    assert_eq!(
        pending_of(&r, "ns/three").message,
        "exceeded quota: pods, requested: pods=3, used: pods=0, limited: pods=2"
    );
}
