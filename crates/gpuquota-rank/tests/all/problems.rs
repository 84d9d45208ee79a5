//! Bad input: `Input::from_model` reports every problem in the manifests at once (kind,
//! name and field of each), not only the first, and builds nothing.

use gpuquota_model::diag::Diagnostics;
use gpuquota_model::import_str;
use gpuquota_rank::snapshot::{BuildOptions, codes};

/// Nine independent mistakes across every kind the snapshot reads.
pub(crate) const NINE_MISTAKES: &str = r#"apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: a}
spec:
  resources:
    gpu: {quota: -3, overQuotaWeight: -2, limit: -1}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: b}
spec:
  resources:
    gpu: {quota: 2, overQuotaWeight: 1, limit: -1}
  preemptMinRuntime: soonish
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {nvidia.com/gpu: "-1", cpu: "8", memory: 64Gi}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata:
  name: pg
  namespace: ns
  annotations: {kai.scheduler/stale-podgroup-timestamp: yesterday}
spec: {queue: b, minMember: -1, preemptibility: sometimes}
---
apiVersion: v1
kind: Pod
metadata:
  name: p-0
  namespace: ns
  labels: {kai.scheduler/queue: b}
  annotations: {pod-group-name: pg, gpu-fraction: "1.5"}
spec: {containers: [{name: c}]}
status: {phase: Pending}
---
apiVersion: v1
kind: Pod
metadata:
  name: p-1
  namespace: ns
  labels: {kai.scheduler/queue: b}
  deletionTimestamp: soon
spec: {nodeName: n1, containers: [{name: c, resources: {requests: {nvidia.com/gpu: "1"}}}]}
status: {phase: Running}
"#;

fn errors(yaml: &str) -> Diagnostics {
    let imported = import_str("bad.yaml", yaml).unwrap();
    gpuquota_rank::testkit::cluster_unvalidated(&imported.model, &BuildOptions::default())
        .unwrap_err()
}

/// `(kind, name, field)` of every problem, in reading order; each is a KAI error.
fn fields(errs: &Diagnostics) -> Vec<(String, String, String)> {
    errs.iter()
        .map(|e| {
            assert!(e.is_error(false), "{e}");
            assert_eq!(e.engine, "kai", "{e}");
            (e.kind.clone(), e.name.clone(), e.field.clone())
        })
        .collect()
}

fn f(kind: &str, name: &str, field: &str) -> (String, String, String) {
    (kind.to_string(), name.to_string(), field.to_string())
}

#[test]
fn every_independent_mistake_is_reported_in_reading_order() {
    let errs = errors(NINE_MISTAKES);
    assert_eq!(
        fields(&errs),
        [
            f("Queue", "a", "spec.resources.gpu.quota"),
            f("Queue", "a", "spec.resources.gpu.overQuotaWeight"),
            f("Queue", "b", "spec.preemptMinRuntime"),
            f("Node", "n1", "status.allocatable.nvidia.com/gpu"),
            f("PodGroup", "ns/pg", "spec.preemptibility"),
            f("PodGroup", "ns/pg", "spec.minMember"),
            f(
                "PodGroup",
                "ns/pg",
                "metadata.annotations.kai.scheduler/stale-podgroup-timestamp"
            ),
            f("Pod", "ns/p-0", "metadata.annotations.gpu-fraction"),
            f("Pod", "ns/p-1", "metadata.deletionTimestamp"),
        ]
    );
    // Display: one problem per line, each naming kind, name and field.
    let text: String = errs.iter().map(|e| format!("{e}\n")).collect();
    assert_eq!(text.lines().count(), 9);
    assert_eq!(
        text.lines().next(),
        Some(r#"Queue "a": spec.resources.gpu.quota: negative value other than -1"#)
    );
    assert_eq!(
        text.lines().nth(7),
        Some(r#"Pod "ns/p-0": metadata.annotations.gpu-fraction: must be in (0, 1]"#)
    );
}

#[test]
fn one_mistake_is_a_one_element_list() {
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns, labels: {kai.scheduler/queue: a}, annotations: {gpu-fraction: \"0\"}}\nspec: {containers: [{name: c}]}\nstatus: {phase: Pending}\n";
    let errs = errors(yaml);
    assert_eq!(
        fields(&errs),
        [f("Pod", "ns/p", "metadata.annotations.gpu-fraction")]
    );
}

#[test]
fn a_queue_cycle_is_reported_with_the_field_problems() {
    let yaml = "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: a}\nspec: {parentQueue: b, resources: {gpu: {quota: 1, limit: -5}}}\n---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: b}\nspec: {parentQueue: a}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns, labels: {kai.scheduler/queue: a}}\nspec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: \"-2\"}}}]}\nstatus: {phase: Pending}\n";
    let errs = errors(yaml);
    let text: Vec<String> = errs.iter().map(ToString::to_string).collect();
    assert_eq!(text.len(), 3, "{text:?}");
    assert_eq!(
        text[0],
        r#"Queue "a": spec.resources.gpu.limit: negative value other than -1"#
    );
    assert_eq!(
        text[1],
        r#"Pod "ns/p": resources.requests.nvidia.com/gpu: negative"#
    );
    assert_eq!(errs.0[2].code, codes::QUEUE_CYCLE, "{}", text[2]);
    assert_eq!(
        text[2],
        r#"Queue "a": spec.parentQueue: the parent chain loops back to this queue"#
    );
}

/// A chain of `levels` queues `q0000` (root) → `q0001` → …, with one pending pod in the leaf.
fn chain(levels: usize) -> String {
    let mut y = String::new();
    for i in 0..levels {
        let parent = if i == 0 {
            String::new()
        } else {
            format!("parentQueue: q{:04}, ", i - 1)
        };
        y.push_str(&format!(
            "---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {{name: q{i:04}}}\nspec: {{{parent}resources: {{gpu: {{quota: 1, overQuotaWeight: 1, limit: -1}}}}}}\n"
        ));
    }
    y.push_str(&format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: ns, labels: {{kai.scheduler/queue: q{:04}}}}}\nspec: {{containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: \"1\"}}}}}}]}}\nstatus: {{phase: Pending}}\n",
        levels - 1
    ));
    y
}

/// One depth limit for every engine (`gpuquota_model::limits::MAX_TREE_DEPTH`, 1,000 levels,
/// the root being level 1): a 1,000-level queue chain is read and scheduled, a 1,001-level one
/// is an error naming the queue one level too deep.
#[test]
fn queue_tree_deeper_than_the_limit_is_an_error_naming_the_queue() {
    let limit = gpuquota_model::limits::MAX_TREE_DEPTH;
    let ok = import_str("deep.yaml", &chain(limit)).unwrap();
    let cluster = gpuquota_rank::testkit::cluster(&ok.model, &BuildOptions::default()).unwrap();
    assert_eq!(cluster.hierarchy.queues().len(), limit);
    let r = gpuquota_rank::testkit::run_session(&cluster, &Default::default()).unwrap();
    assert_eq!(r.pending.len(), 1);
    let deep = import_str("deep.yaml", &chain(limit + 1)).unwrap();
    let errs = gpuquota_rank::testkit::cluster(&deep.model, &BuildOptions::default()).unwrap_err();
    assert_eq!(errs.len(), 1, "{errs}");
    let e = &errs.0[0];
    assert_eq!(e.code, codes::TREE_TOO_DEEP);
    assert_eq!(e.code.as_str(), "tree-too-deep");
    assert_eq!((e.kind.as_str(), e.name.as_str()), ("Queue", "q1000"));
    assert_eq!(e.field, "spec.parentQueue");
    assert!(
        e.message.contains("1001 levels") && e.message.contains("1000"),
        "{e}"
    );
}

/// Stable codes per kind of problem: a bad value, a value too large, a missing node.
#[test]
fn problems_carry_stable_codes() {
    let errs = errors(NINE_MISTAKES);
    assert!(
        errs.iter().all(|e| e.code == codes::INVALID_VALUE),
        "{errs}"
    );
    let yaml = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: \"1e30\"}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec: {nodeName: n2, containers: [{name: c}]}\nstatus: {phase: Running}\n";
    let errs = errors(yaml);
    let got: Vec<(&str, &str)> = errs
        .iter()
        .map(|e| (e.code.as_str(), e.field.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("kai-too-large", "status.allocatable.cpu"),
            ("not-found", "spec.nodeName"),
        ]
    );
}

/// An orphan queue is a warning (code `kai-orphan-queue`) on the built cluster, not an error.
#[test]
fn orphan_queue_is_a_warning() {
    let yaml = "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: proj}\nspec: {parentQueue: gone}\n";
    let imported = import_str("o.yaml", yaml).unwrap();
    let cluster =
        gpuquota_rank::testkit::cluster_unvalidated(&imported.model, &BuildOptions::default())
            .unwrap();
    let w: Vec<String> = cluster.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        w,
        [
            r#"Queue "proj": spec.parentQueue: its parent chain reaches a missing queue; dropped with its children, as KAI does"#
        ]
    );
    assert_eq!(cluster.warnings.0[0].code, codes::ORPHAN_QUEUE);
    assert!(!cluster.warnings.has_errors());
    assert!(cluster.warnings.has_errors_strict(true));
}

/// Eighteen queues each running one pod of 10²⁵ CPU cores on a 1-core node: every queue's
/// own request fits, the node's overcommitted free capacity and the tree's sums do not. The
/// session reports the overflow as an error instead of wrapping or panicking.
#[test]
fn session_overflow_is_an_error_not_a_panic() {
    let mut y = String::from(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: \"1\"}}\n",
    );
    for i in 0..18 {
        y.push_str(&format!(
            "---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {{name: q{i:02}}}\nspec: {{resources: {{gpu: {{quota: 1}}, cpu: {{quota: -1, limit: -1}}}}}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i:02}, namespace: ns, labels: {{kai.scheduler/queue: q{i:02}}}}}\nspec: {{nodeName: n1, containers: [{{name: c, resources: {{requests: {{cpu: \"1e25\"}}}}}}]}}\nstatus: {{phase: Running}}\n"
        ));
    }
    let imported = import_str("big.yaml", &y).unwrap();
    let cluster =
        gpuquota_rank::testkit::cluster_unvalidated(&imported.model, &BuildOptions::default())
            .unwrap();
    let err = gpuquota_rank::testkit::run_session(&cluster, &Default::default()).unwrap_err();
    assert!(err.to_string().contains("overflow"), "{err}");
}

const GPU_MEMORY_QUEUE: &str = "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q}\nspec: {resources: {gpu: {quota: 2, overQuotaWeight: 1, limit: -1}}}\n";

fn gpu_memory_pod(name: &str, mib: &str, node: Option<&str>) -> String {
    let (node, phase) = match node {
        Some(n) => (format!(", nodeName: {n}"), "Running"),
        None => (String::new(), "Pending"),
    };
    format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: ns, labels: {{kai.scheduler/queue: q}}, annotations: {{gpu-memory: \"{mib}\"}}}}\nspec: {{containers: [{{name: c}}]{node}}}\nstatus: {{phase: {phase}}}\n"
    )
}

fn gpu_node(name: &str, memory: Option<&str>) -> String {
    let labels = memory.map_or(String::new(), |m| {
        format!(", labels: {{nvidia.com/gpu.memory: \"{m}\"}}")
    });
    format!(
        "---\napiVersion: v1\nkind: Node\nmetadata: {{name: {name}{labels}}}\nstatus: {{allocatable: {{nvidia.com/gpu: \"1\", cpu: \"8\", memory: 64Gi}}}}\n"
    )
}

/// A `gpu-memory` annotation that is not a whole number of MiB above 0 is an error naming the
/// pod and the annotation (KAI would silently drop the request).
#[test]
fn gpu_memory_must_be_whole_mib_above_zero() {
    let yaml = format!(
        "{GPU_MEMORY_QUEUE}{}{}{}{}",
        gpu_node("gpu-node", Some("81920")),
        gpu_memory_pod("a", "20Gi", None),
        gpu_memory_pod("b", "0", None),
        gpu_memory_pod("c", "512", None),
    );
    let model = import_str("m.yaml", &yaml).unwrap().model;
    let e =
        gpuquota_rank::testkit::cluster_unvalidated(&model, &BuildOptions::default()).unwrap_err();
    let got: Vec<String> = e.iter().map(ToString::to_string).collect();
    assert_eq!(
        got,
        [
            r#"Pod "ns/a": metadata.annotations.gpu-memory: "20Gi": expected a whole number of MiB above 0"#,
            r#"Pod "ns/b": metadata.annotations.gpu-memory: "0": expected a whole number of MiB above 0"#,
        ]
    );
}

/// Without any node's `nvidia.com/gpu.memory`, KAI can neither convert nor place a
/// `gpu-memory` request: each such pod is warned about by name and stays pending.
#[test]
fn gpu_memory_without_node_memory_is_warned_about() {
    let yaml = format!(
        "{GPU_MEMORY_QUEUE}{}{}",
        gpu_node("gpu-node", None),
        gpu_memory_pod("a", "2000", None),
    );
    let model = import_str("m.yaml", &yaml).unwrap().model;
    let c = gpuquota_rank::testkit::cluster_unvalidated(&model, &BuildOptions::default()).unwrap();
    assert_eq!(c.warnings.0.len(), 1);
    assert_eq!(c.warnings.0[0].code, codes::GPU_MEMORY_UNCONVERTED);
    assert_eq!(
        c.warnings.0[0].to_string(),
        r#"Pod "ns/a": metadata.annotations.gpu-memory: no node carries a readable nvidia.com/gpu.memory label of at least 100 MiB: KAI neither turns this request into GPUs nor places it (counted as 0 GPUs)"#
    );
    let r = gpuquota_rank::testkit::run_session(&c, &Default::default()).unwrap();
    assert!(r.allocated.is_empty());
    assert_eq!(r.pending.len(), 1);
}

/// Nodes of different GPU memory: a running pod is charged the share of its own node's GPU
/// (10000 MiB of 40000 → 0.25; of 81920 → 81900 → 0.13), a pending one the share of the
/// smallest GPU, with one warning naming the first pending pod.
#[test]
fn gpu_memory_on_mixed_nodes_charges_each_node_share() {
    let yaml = format!(
        "{GPU_MEMORY_QUEUE}{}{}{}{}{}",
        gpu_node("small", Some("40000")),
        gpu_node("big", Some("81920")),
        gpu_memory_pod("a", "10000", Some("small")),
        gpu_memory_pod("b", "10000", Some("big")),
        gpu_memory_pod("c", "10000", None),
    );
    let model = import_str("m.yaml", &yaml).unwrap().model;
    let c = gpuquota_rank::testkit::cluster_unvalidated(&model, &BuildOptions::default()).unwrap();
    let share = |pod: &str| {
        c.jobs
            .iter()
            .flat_map(|j| &j.tasks)
            .find(|t| t.key == pod)
            .map(|t| t.req[gpuquota_rank::division::Resource::Gpu])
    };
    assert_eq!(share("ns/a"), Some(250_000_000));
    assert_eq!(share("ns/b"), Some(130_000_000));
    assert_eq!(share("ns/c"), Some(250_000_000));
    let w: Vec<_> = c.warnings.iter().map(|d| (d.code, d.to_string())).collect();
    assert_eq!(
        w,
        [(
            codes::GPU_MEMORY_MIXED,
            r#"Pod "ns/c": metadata.annotations.gpu-memory: nodes' GPUs hold 40000 to 81900 MiB: this and 0 other pending gpu-memory pods are charged and placed as the share of a 40000 MiB GPU; KAI charges the share of the GPU each one lands on"#.to_string()
        )]
    );
    // Demand: 0.25 + 0.13 allocated, plus 10000 / 40000 pending.
    let fs = serde_json::to_value(
        gpuquota_rank::testkit::fairshare_report(&c, &Default::default()).unwrap(),
    )
    .unwrap();
    assert_eq!(fs["queues"]["q"]["gpu"]["allocated"], "0.38");
    assert_eq!(fs["queues"]["q"]["gpu"]["requested"], "0.63");
}
