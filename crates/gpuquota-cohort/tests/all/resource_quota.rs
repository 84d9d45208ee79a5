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

/// ClusterQueues `p` and `q` of 8 GPUs each, open to every namespace, with a LocalQueue `p`
/// in `a` and `q` in `b`: their heads are nominated in the same cycle.
fn two_namespaces() -> String {
    let mut y = rf("f");
    y += &cq("p", None, "", &[vec![gpu("f", "8")]]);
    y += &cq("q", None, "", &[vec![gpu("f", "8")]]);
    y += "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: p, namespace: a}\nspec: {clusterQueue: p}\n---\n";
    y += "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: q, namespace: b}\nspec: {clusterQueue: q}\n---\n";
    y
}

fn gpu_quota(namespace: &str, hard: &str, scope: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: gpus, namespace: {namespace}}}\nspec:\n  hard:\n    requests.nvidia.com/gpu: \"{hard}\"\n{scope}---\n"
    )
}

fn in_namespace(workload: String, namespace: &str) -> String {
    workload.replace("namespace: ns", &format!("namespace: {namespace}"))
}

#[test]
fn resource_quota_usage_admitted_in_the_same_cycle_stays_in_its_namespace() {
    // a and b each capped at 4 GPUs, one 3-GPU workload in each, both heads of the same
    // cycle: a's 3 GPUs are none of b's business (3 + 0 <= 4 in both namespaces)
    let mut y = two_namespaces();
    y += &gpu_quota("a", "4", "");
    y += &gpu_quota("b", "4", "");
    y += &in_namespace(wl("first", "p", 0, 1, 3, &[("nvidia.com/gpu", "1")]), "a");
    y += &in_namespace(wl("second", "q", 0, 2, 3, &[("nvidia.com/gpu", "1")]), "b");
    let r = run(&y);
    assert_eq!(admitted_names(&r), ["a/first", "b/second"]);
    assert!(r.pending.is_empty());
}

#[test]
fn resource_quota_counts_a_workload_admitted_in_the_same_cycle_once() {
    // two ClusterQueues, so both workloads are heads of the first cycle; ns capped at 4:
    // 2 + 2 = 4 fits; the third (1 GPU) then sees used 4 and is refused
    let mut y = rf("f");
    y += &cq("p", None, "", &[vec![gpu("f", "8")]]);
    y += &cq("q", None, "", &[vec![gpu("f", "8")]]);
    y += &gpu_quota("ns", "4", "");
    y += &wl("one", "p", 0, 1, 2, &[("nvidia.com/gpu", "1")]);
    y += &wl("two", "q", 0, 2, 2, &[("nvidia.com/gpu", "1")]);
    y += &wl("three", "q", 0, 3, 1, &[("nvidia.com/gpu", "1")]);
    let r = run(&y);
    assert_eq!(admitted_names(&r), ["ns/one", "ns/two"]);
    assert_eq!(
        pending_of(&r, "ns/three").message,
        "exceeded quota: gpus, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=4, limited: requests.nvidia.com/gpu=4"
    );
}

#[test]
fn resource_quota_scoped_to_a_priority_class_counts_only_that_class() {
    // ns's quota covers PriorityClass high only (4 GPUs). hi (high, 3 GPUs) and lo (low,
    // 3 GPUs) go first, from two ClusterQueues in one cycle; hi2 (high, 2 GPUs) then sees
    // used 3 (hi's, not lo's) and 3 + 2 > 4 refuses it; lo2 (low, 1 GPU) is not capped
    let mut y = rf("f");
    y += &cq("p", None, "", &[vec![gpu("f", "16")]]);
    y += &cq("q", None, "", &[vec![gpu("f", "16")]]);
    y += "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 0\n---\n";
    y += "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low}\nvalue: 0\n---\n";
    y += &gpu_quota(
        "ns",
        "4",
        "  scopeSelector:\n    matchExpressions:\n    - {scopeName: PriorityClass, operator: In, values: [high]}\n",
    );
    let gpu1: &[(&str, &str)] = &[("nvidia.com/gpu", "1")];
    let high = "priorityClassName: high";
    let low = "priorityClassName: low";
    y += &wl_full("lo", "p", 0, 1, &[("main", 3, None, gpu1)], low);
    y += &wl_full("hi", "q", 0, 2, &[("main", 3, None, gpu1)], high);
    y += &wl_full("hi2", "q", 0, 3, &[("main", 2, None, gpu1)], high);
    y += &wl_full("lo2", "p", 0, 4, &[("main", 1, None, gpu1)], low);
    let r = run(&y);
    assert_eq!(admitted_names(&r), ["ns/hi", "ns/lo", "ns/lo2"]);
    assert_eq!(
        pending_of(&r, "ns/hi2").message,
        "exceeded quota: gpus, requested: requests.nvidia.com/gpu=2, used: requests.nvidia.com/gpu=3, limited: requests.nvidia.com/gpu=4"
    );
}

/// A pending seed Workload of WorkloadPriorityClass `class` with `count` pods of `gpus` GPUs.
fn seed_workload(
    name: &str,
    namespace: &str,
    queue: &str,
    class: &str,
    count: u32,
    gpus: u32,
) -> String {
    format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: {name}, namespace: {namespace}, creationTimestamp: \"2026-03-03T02:00:00Z\"}}\nspec:\n  queueName: {queue}\n  priorityClassRef: {{group: kueue.x-k8s.io, kind: WorkloadPriorityClass, name: {class}}}\n  podSets:\n  - name: main\n    count: {count}\n    template:\n      spec:\n        containers:\n        - name: main\n          resources:\n            requests: {{nvidia.com/gpu: \"{gpus}\"}}\n---\n"
    )
}

#[test]
fn seed_fine_tuning_is_not_charged_the_other_namespaces_gpus() {
    // the seed platform with the assistant's 4 RTX cards (platform-team, capped at 8), the
    // translation's 2 (customer-service, capped at 2), both inference, and the 8-H200
    // fine-tuning (training; data-science, capped at 12) all pending in one cycle, the
    // inference ones processed first: data-science uses nothing, so
    // 0 + 8 <= 12 admits the fine-tuning in the first cycle (the other namespaces' 4 + 2 = 6
    // GPUs once made it "used 6" and 6 + 8 > 12)
    let mut y = include_str!("../../../gpuquota-sim/data/seed/platform.yaml").to_owned();
    y += "\n---\n";
    y += &seed_workload(
        "assistant-rtx-a",
        "platform-team",
        "assistant",
        "inference",
        4,
        1,
    );
    y += &seed_workload(
        "translation",
        "customer-service",
        "translation",
        "inference",
        2,
        1,
    );
    y += &seed_workload(
        "fine-tuning",
        "data-science",
        "data-science",
        "training",
        1,
        8,
    );
    let r = run_cycles(&y, 1);
    assert_eq!(
        admitted_names(&r),
        [
            "customer-service/translation",
            "data-science/fine-tuning",
            "platform-team/assistant-rtx-a"
        ]
    );
    assert!(r.pending.is_empty());
}
