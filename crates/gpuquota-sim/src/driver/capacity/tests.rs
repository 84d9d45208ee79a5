//! Hand-checked placements of the kube-scheduler model (scores worked out in each test's
//! docs), node events over it, and its stated properties.

use super::*;
use crate::driver::placement::SlotKind;
use proptest::prelude::*;

fn world_of(text: &str) -> (Model, World) {
    let model = gpuquota_model::import::import_str("c.yaml", text)
        .expect("valid")
        .model;
    let input = gpuquota_cohort::Input::from_model(&model, &gpuquota_cohort::Options::default())
        .expect("builds");
    (model, input.world().clone())
}

/// A Workload `name` with `count` pods of `template` (a pod spec in flow YAML).
fn workload(name: &str, count: u32, template: &str) -> String {
    format!(
        "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: {name}, namespace: ns}}\nspec:\n  queueName: lq\n  podSets:\n  - name: main\n    count: {count}\n    template: {{spec: {template}}}\n"
    )
}

fn node(name: &str, rest: &str) -> String {
    format!("---\napiVersion: v1\nkind: Node\nmetadata: {{name: {name}{rest}\n")
}

/// The nodes of workload `wl`'s placed pods, in placement order.
fn on(cap: &Capacity, wl: u32) -> Vec<&str> {
    cap.held[wl as usize]
        .iter()
        .map(|b| cap.nodes.name(b.0 as usize))
        .collect()
}

fn cap_of(text: &str) -> (Capacity, World) {
    let (model, world) = world_of(text);
    (Capacity::new(&model, &world).expect("nodes"), world)
}

/// LeastAllocated spreads 2-CPU pods over a (4 CPUs) and b (8 CPUs), memory unlisted (not
/// scored, not checked; BalancedAllocation 100 on both: one fraction):
/// pod 1: a (4000−2000)·100/4000 = 50, b 75 → b; pod 2: a 50, b (8000−4000)·100/8000 =
/// 50, equal room 1/2 → a (name); pod 3: a 0, b 50 → b; pod 4: a 0, b 25 → b; pod 5: both
/// 0, room 0 → a; pod 6: a full, b → b; pod 7 fits nowhere.
#[test]
fn spreads_by_least_allocated() {
    let text = [
        node("a", "}\nstatus: {allocatable: {cpu: \"4\"}}"),
        node("b", "}\nstatus: {allocatable: {cpu: \"8\"}}"),
        workload(
            "w",
            7,
            "{containers: [{name: c, resources: {requests: {cpu: \"2\"}}}]}",
        ),
    ]
    .concat();
    let (mut cap, world) = cap_of(&text);
    let needs = cap.pod_needs(&world, 0);
    assert_eq!(
        cap.place(0, &needs),
        Err("0/2 nodes are available: 2 Insufficient cpu.".to_owned())
    );
    assert_eq!(on(&cap, 0), ["b", "a", "b", "b", "a", "b"]);
    assert!(!cap.placed(0));
}

/// Ties: a GPU-only pod counts the non-zero defaults (100m, 200 MiB) on two equal nodes
/// (128 CPUs, 1 TiB): 99 + 100 + 300 points on both for the first pods, so the unrounded
/// room decides: a (name), b (a has one pod more), a, b.
#[test]
fn equal_nodes_take_pods_in_turn() {
    let big = "}\nstatus: {allocatable: {nvidia.com/gpu: \"8\", cpu: \"128\", memory: 1Ti, pods: \"110\"}}";
    let text = [
        node("a", big),
        node("b", big),
        workload(
            "w",
            4,
            "{containers: [{name: c, resources: {requests: {nvidia.com/gpu: \"1\"}}}]}",
        ),
    ]
    .concat();
    let (mut cap, world) = cap_of(&text);
    let needs = cap.pod_needs(&world, 0);
    assert_eq!(cap.place(0, &needs), Ok(()));
    assert_eq!(on(&cap, 0), ["a", "b", "a", "b"]);
    assert!(cap.placed(0));
}

/// A `NoSchedule` taint keeps an untolerating pod off a: the first pod goes to b, the
/// second waits naming the taint; with the toleration both nodes take one.
#[test]
fn taint_without_toleration() {
    let gpu1 = "}\nstatus: {allocatable: {nvidia.com/gpu: \"1\"}}";
    let text = [
        node("a", &format!("}}\nspec: {{taints: [{{key: gpu, value: \"yes\", effect: NoSchedule}}]}}{}", &gpu1[1..])),
        node("b", gpu1),
        workload("plain", 2, "{containers: [{name: c, resources: {requests: {nvidia.com/gpu: \"1\"}}}]}"),
        workload("tolerant", 2, "{tolerations: [{key: gpu, operator: Exists}], containers: [{name: c, resources: {requests: {nvidia.com/gpu: \"1\"}}}]}"),
    ]
    .concat();
    let (mut cap, world) = cap_of(&text);
    let plain = world.workload_id("ns/plain").expect("plain").index() as u32;
    let tolerant = world.workload_id("ns/tolerant").expect("tolerant").index() as u32;
    let needs = cap.pod_needs(&world, plain as usize);
    assert_eq!(
        cap.place(plain, &needs),
        Err("0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated taint {gpu: yes}.".to_owned())
    );
    assert_eq!(on(&cap, plain), ["b"]);
    cap.release(plain);
    let needs = cap.pod_needs(&world, tolerant as usize);
    assert_eq!(cap.place(tolerant, &needs), Ok(()));
    assert_eq!(on(&cap, tolerant), ["a", "b"]);
}

/// Under Kueue the assigned flavor's `nodeLabels` join the pod's `nodeSelector` and its
/// `tolerations` join the pod's: flavor x (product px, tolerating `gpu`) puts the pods on
/// the tainted px node a and never on py node c.
#[test]
fn kueue_injects_the_flavors_labels_and_tolerations() {
    let text = [
        node("a", ", labels: {product: px}}\nspec: {taints: [{key: gpu, effect: NoSchedule}]}\nstatus: {allocatable: {nvidia.com/gpu: \"2\"}}"),
        node("c", ", labels: {product: py}}\nstatus: {allocatable: {nvidia.com/gpu: \"8\"}}"),
        "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: x}\nspec: {nodeLabels: {product: px}, tolerations: [{key: gpu, operator: Exists}]}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: q}\nspec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors: [{name: x, resources: [{name: nvidia.com/gpu, nominalQuota: 9}]}]\n".to_owned(),
        workload("w", 3, "{containers: [{name: c, resources: {requests: {nvidia.com/gpu: \"1\"}}}]}"),
    ]
    .concat();
    let (mut cap, world) = cap_of(&text);
    let fr = u32::from(world.frs.ids().next().expect("one flavor-resource"));
    let needs = cap.kueue_needs(&world, 0, &[(fr, 3)]);
    assert_eq!(
        cap.place(0, &needs),
        Err("0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) didn't match Pod's node affinity/selector.".to_owned())
    );
    assert_eq!(on(&cap, 0), ["a", "a"]);
    // partial admission: a usage of 2 devices places 2 pods, all of them
    cap.release(0);
    cap.unwait(0);
    let needs = cap.kueue_needs(&world, 0, &[(fr, 2)]);
    assert_eq!(cap.place(0, &needs), Ok(()));
}

/// `nodeSelector` (zone x) and required node affinity (`tier Gt 2`, or `gpu Exists`): of
/// a (x, tier 1), b (x, tier 5), c (y, tier 9) only b matches; with the second term ORed,
/// a too (it has a `gpu` label).
#[test]
fn node_selector_and_affinity() {
    let one = "status: {allocatable: {nvidia.com/gpu: \"1\"}}";
    let text = [
        node("a", &format!(", labels: {{zone: x, tier: \"1\", gpu: \"on\"}}}}\n{one}")),
        node("b", &format!(", labels: {{zone: x, tier: \"5\"}}}}\n{one}")),
        node("c", &format!(", labels: {{zone: \"y\", tier: \"9\"}}}}\n{one}")),
        workload("gt", 2, "{nodeSelector: {zone: x}, affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: tier, operator: Gt, values: [\"2\"]}]}]}}}, containers: [{name: c, resources: {requests: {nvidia.com/gpu: \"1\"}}}]}"),
        workload("or", 1, "{nodeSelector: {zone: x}, affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: tier, operator: Gt, values: [\"2\"]}]}, {matchExpressions: [{key: gpu, operator: Exists}]}]}}}, containers: [{name: c, resources: {requests: {nvidia.com/gpu: \"1\"}}}]}"),
    ]
    .concat();
    let (mut cap, world) = cap_of(&text);
    let gt = world.workload_id("ns/gt").expect("gt").index() as u32;
    let or = world.workload_id("ns/or").expect("or").index() as u32;
    let needs = cap.pod_needs(&world, gt as usize);
    assert_eq!(
        cap.place(gt, &needs),
        Err("0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) didn't match Pod's node affinity/selector.".to_owned())
    );
    assert_eq!(on(&cap, gt), ["b"]);
    let needs = cap.pod_needs(&world, or as usize);
    assert_eq!(cap.place(or, &needs), Ok(()));
    assert_eq!(on(&cap, or), ["a"]);
}

/// cpu, memory and the pod count: a (2 CPUs, 1 GiB, 1 pod), b (4 CPUs, 512 MiB); pods of
/// 1 CPU and 600 MiB: the first fits only a; the second finds a full of pods and short of
/// memory (1200 MiB), b short of memory.
#[test]
fn cpu_memory_and_pod_limits() {
    let text = [
        node(
            "a",
            "}\nstatus: {allocatable: {cpu: \"2\", memory: 1Gi, pods: \"1\"}}",
        ),
        node(
            "b",
            "}\nstatus: {allocatable: {cpu: \"4\", memory: 512Mi, pods: \"10\"}}",
        ),
        workload(
            "w",
            2,
            "{containers: [{name: c, resources: {requests: {cpu: \"1\", memory: 600Mi}}}]}",
        ),
    ]
    .concat();
    let (mut cap, world) = cap_of(&text);
    let needs = cap.pod_needs(&world, 0);
    assert_eq!(
        cap.place(0, &needs),
        Err("0/2 nodes are available: 1 Too many pods, 2 Insufficient memory.".to_owned())
    );
    assert_eq!(on(&cap, 0), ["a"]);
}

const CLUSTER: &str = r#"
apiVersion: v1
kind: Node
metadata: {name: a, labels: {product: px}}
status: {allocatable: {nvidia.com/gpu: "2", cpu: "8"}}
---
apiVersion: v1
kind: Node
metadata: {name: b, labels: {product: px}}
status: {allocatable: {nvidia.com/gpu: "1"}}
---
apiVersion: v1
kind: Node
metadata: {name: c, labels: {product: py}}
spec: {unschedulable: true}
status: {allocatable: {nvidia.com/gpu: "8"}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: x}
spec: {nodeLabels: {product: px}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: q}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: x, resources: [{name: nvidia.com/gpu, nominalQuota: 9}]}]
"#;

/// One-GPU pods on flavor x's schedulable nodes a (2 devices, 8 CPUs: LeastAllocated 98,
/// then 97) and b (1 device, no cpu listed: 0) — a is preferred while it has room; the
/// cordoned c holds nothing. Workload 0 (two pods) takes a's two, workload 1 b's one;
/// workload 2 waits with upstream's message, holding nothing, and starts once 1 releases.
#[test]
fn waits_and_starts_when_pods_fit() {
    let text = [
        CLUSTER.to_owned(),
        workload(
            "w0",
            2,
            "{containers: [{name: c, resources: {requests: {nvidia.com/gpu: \"1\"}}}]}",
        ),
        workload(
            "w1",
            1,
            "{containers: [{name: c, resources: {requests: {nvidia.com/gpu: \"1\"}}}]}",
        ),
        workload(
            "w2",
            1,
            "{containers: [{name: c, resources: {requests: {nvidia.com/gpu: \"1\"}}}]}",
        ),
    ]
    .concat();
    let (mut cap, world) = cap_of(&text);
    assert_eq!(cap.node_count(), 3);
    let fr = u32::from(world.frs.ids().next().expect("one flavor-resource"));
    let id = |k: &str| world.workload_id(k).expect("workload").index() as u32;
    let (w0, w1, w2) = (id("ns/w0"), id("ns/w1"), id("ns/w2"));
    let n0 = cap.kueue_needs(&world, w0, &[(fr, 2)]);
    let n1 = cap.kueue_needs(&world, w1, &[(fr, 1)]);
    let n2 = cap.kueue_needs(&world, w2, &[(fr, 1)]);
    assert_eq!(cap.place(w0, &n0), Ok(()));
    assert_eq!(on(&cap, w0), ["a", "a"]);
    assert_eq!(cap.place(w1, &n1), Ok(()));
    assert_eq!(on(&cap, w1), ["b"]);
    let m = "0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient nvidia.com/gpu.";
    assert_eq!(cap.place(w2, &n2), Err(m.to_owned()));
    cap.wait(w2, n2.clone(), m.to_owned());
    assert_eq!(cap.waiting(w2), Some(m));
    assert!(cap.unwait(w2));
    assert!(!cap.unwait(w2));
    cap.wait(w2, n2.clone(), m.to_owned());
    assert_eq!(cap.start_waiting(), Vec::<u32>::new());
    cap.release(w1);
    assert_eq!(cap.start_waiting(), vec![w2]);
    assert_eq!(cap.waiting(w2), None);
    assert_eq!(on(&cap, w2), ["b"]);
    assert!(cap.placed(w2));
}

/// A workload of three pods on two one-device nodes places two and waits for the third,
/// holding what it placed (the kube-scheduler binds pods one by one); another workload's
/// release lets the third start.
#[test]
fn a_partly_placed_workload_holds_its_pods() {
    let one = "}\nstatus: {allocatable: {nvidia.com/gpu: \"1\"}}";
    let text = [
        node("a", one),
        node("b", one),
        node("c", one),
        workload(
            "first",
            1,
            "{containers: [{name: c, resources: {requests: {nvidia.com/gpu: \"1\"}}}]}",
        ),
        workload(
            "gang",
            3,
            "{containers: [{name: c, resources: {requests: {nvidia.com/gpu: \"1\"}}}]}",
        ),
    ]
    .concat();
    let (mut cap, world) = cap_of(&text);
    let first = world.workload_id("ns/first").expect("first").index() as u32;
    let gang = world.workload_id("ns/gang").expect("gang").index() as u32;
    let n = cap.pod_needs(&world, first as usize);
    assert_eq!(cap.place(first, &n), Ok(()));
    assert_eq!(on(&cap, first), ["a"]);
    let n = cap.pod_needs(&world, gang as usize);
    let m = cap.place(gang, &n).expect_err("one pod left");
    assert_eq!(m, "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.");
    cap.wait(gang, n, m);
    assert_eq!(on(&cap, gang), ["b", "c"]);
    assert!(!cap.placed(gang));
    cap.release(first);
    assert_eq!(cap.start_waiting(), vec![gang]);
    assert_eq!(on(&cap, gang), ["b", "c", "a"]);
    assert!(cap.placed(gang));
}

/// Node events on CLUSTER: a fails holding workload 0's two pods (lost: the caller releases
/// them), a newcomer waits with upstream's message naming the failed node's taint; draining
/// b keeps workload 1 running but leaves no schedulable device; a back takes the newcomer;
/// a MIG window on a waits for its holder, then the node comes back with one device.
#[test]
fn nodes_fail_drain_and_come_back() {
    let one = "{containers: [{name: c, resources: {requests: {nvidia.com/gpu: \"1\"}}}]}";
    let text = [
        CLUSTER.to_owned(),
        workload("w0", 2, one),
        workload("w1", 1, one),
        workload("w2", 1, one),
        workload("w3", 2, one),
    ]
    .concat();
    let (mut cap, world) = cap_of(&text);
    let gpu = |c: &Capacity| c.schedulable_totals()[0].1;
    let fr = u32::from(world.frs.ids().next().expect("one flavor-resource"));
    let id = |k: &str| world.workload_id(k).expect("workload").index() as u32;
    let (w0, w1, w2, w3) = (id("ns/w0"), id("ns/w1"), id("ns/w2"), id("ns/w3"));
    let n0 = cap.kueue_needs(&world, w0, &[(fr, 2)]);
    let n1 = cap.kueue_needs(&world, w1, &[(fr, 1)]);
    let n2 = cap.kueue_needs(&world, w2, &[(fr, 1)]);
    let n3 = cap.kueue_needs(&world, w3, &[(fr, 2)]);
    assert_eq!(cap.place(w0, &n0), Ok(()));
    assert_eq!(cap.place(w1, &n1), Ok(()));
    assert_eq!(gpu(&cap), 3);
    assert_eq!(cap.down("a"), vec![w0]);
    assert_eq!(cap.down("zz"), Vec::<u32>::new());
    cap.release(w0);
    assert_eq!(gpu(&cap), 1);
    let m = "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, 1 node(s) were unschedulable.";
    assert_eq!(cap.place(w2, &n2), Err(m.to_owned()));
    cap.wait(w2, n2.clone(), m.to_owned());
    assert!(cap.drain("b"));
    assert!(cap.is_cordoned("b"));
    assert_eq!(gpu(&cap), 0);
    assert_eq!(cap.holders("b"), vec![w1]);
    assert!(!cap.idle("b"));
    cap.release(w1);
    assert!(cap.idle("b"));
    assert_eq!(cap.start_waiting(), Vec::<u32>::new());
    assert!(cap.up("a"));
    assert_eq!(gpu(&cap), 2);
    assert_eq!(cap.start_waiting(), vec![w2]);
    assert_eq!(cap.holders("a"), vec![w2]);
    assert!(cap.up("b"));
    assert!(cap.open_window("a"));
    assert!(cap.in_window("a"));
    assert_eq!(gpu(&cap), 1);
    let m = "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) were unschedulable.";
    assert_eq!(cap.place(w3, &n3), Err(m.to_owned()));
    cap.wait(w3, n3.clone(), m.to_owned());
    assert_eq!(on(&cap, w3), ["b"]);
    assert!(!cap.idle("a"));
    cap.release(w2);
    assert!(cap.idle("a"));
    let after: BTreeMap<String, i64> = [("nvidia.com/gpu".to_owned(), 1)].into();
    assert!(cap.close_window("a", &after));
    assert!(!cap.in_window("a"));
    assert_eq!(gpu(&cap), 2);
    assert_eq!(cap.start_waiting(), vec![w3]);
    assert_eq!(on(&cap, w3), ["b", "a"]);
}

/// Without Nodes nothing is checked.
#[test]
fn no_nodes_no_capacity() {
    let (model, world) =
        world_of("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: x}\n");
    assert!(Capacity::new(&model, &world).is_none());
}

/// Random clusters (1–6 nodes, GPUs, CPUs, pod limits, a taint) and workloads placed and
/// released in a random order.
fn random_run(
    nodes: &[(u8, u8, u8, bool)],
    wls: &[(u8, u8, u8, bool)],
    ops: &[(u8, bool)],
) -> (Capacity, Vec<Vec<Bound>>) {
    let mut text = String::new();
    for (i, &(gpu, cpu, pods, tainted)) in nodes.iter().enumerate() {
        let taint = if tainted {
            "\nspec: {taints: [{key: t, effect: NoSchedule}]}"
        } else {
            ""
        };
        text.push_str(&node(
            &format!("n{i}"),
            &format!("}}{taint}\nstatus: {{allocatable: {{nvidia.com/gpu: \"{gpu}\", cpu: \"{cpu}\", pods: \"{pods}\"}}}}"),
        ));
    }
    for (i, &(count, gpu, cpu, tolerant)) in wls.iter().enumerate() {
        let tol = if tolerant {
            "tolerations: [{key: t, operator: Exists}], "
        } else {
            ""
        };
        text.push_str(&workload(
            &format!("w{i}"),
            u32::from(count),
            &format!("{{{tol}containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: \"{gpu}\", cpu: \"{cpu}\"}}}}}}]}}"),
        ));
    }
    let (mut cap, world) = cap_of(&text);
    let n = world.workloads.len();
    for &(w, release) in ops {
        let wl = u32::from(w) % n as u32;
        if release {
            cap.release(wl);
            cap.unwait(wl);
            cap.start_waiting();
        } else if cap.held[wl as usize].is_empty() && cap.waiting(wl).is_none() {
            let needs = cap.pod_needs(&world, wl as usize);
            if let Err(m) = cap.place(wl, &needs) {
                cap.wait(wl, needs, m);
            }
        }
        check(&cap);
    }
    let held = cap.held.clone();
    (cap, held)
}

/// No node holds more than its allocatable of a resource it lists, or of a device.
fn check(cap: &Capacity) {
    for i in 0..cap.nodes.len() {
        let mut used = vec![0i64; cap.nodes.resources().len()];
        for h in &cap.held {
            for b in h.iter().filter(|b| b.0 as usize == i) {
                for (u, r) in used.iter_mut().zip(&cap.pods[b.2 as usize].req) {
                    *u += r;
                }
            }
        }
        let (alloc, listed) = cap.nodes.allocatable(i);
        for s in 0..used.len() {
            if listed[s] || cap.nodes.kind(s) == SlotKind::Extended {
                assert!(
                    used[s] <= alloc[s],
                    "node {i} slot {s}: {} > {}",
                    used[s],
                    alloc[s]
                );
            }
        }
    }
}

proptest! {
    /// No node ever holds more than its allocatable; the same run places the same pods on
    /// the same nodes.
    #[test]
    fn never_over_allocatable_and_deterministic(
        nodes in prop::collection::vec((0u8..4, 1u8..6, 1u8..5, any::<bool>()), 1..6),
        wls in prop::collection::vec((1u8..4, 0u8..3, 0u8..3, any::<bool>()), 1..6),
        ops in prop::collection::vec((any::<u8>(), any::<bool>()), 1..30),
    ) {
        let (_, a) = random_run(&nodes, &wls, &ops);
        let (_, b) = random_run(&nodes, &wls, &ops);
        prop_assert_eq!(a, b);
    }
}
