//! KAI Scheduler / Run:ai: the fair-share division of a queue tree and one scheduling session.
//!
//! Run with `cargo run -p gpuquota --example kai_fairshare`.

use gpuquota::kai::{Input, Options, fairshare, run};
use gpuquota::model::core::{
    Container, Node, NodeStatus, Pod, PodSpec, PodStatus, ResourceRequirements,
};
use gpuquota::model::kai::{QUEUE_LABEL, Queue, QueueResource, QueueResources, QueueSpec};
use gpuquota::model::meta::ObjectMeta;
use gpuquota::model::{Model, Quantity, ResourceName};

/// Two projects on one 10-GPU node: quotas 2 and 1, over-quota weights 1 and 3, each asking
/// for more than the whole node.
const MANIFESTS: &str = r#"
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: a}
spec: {resources: {gpu: {quota: 2, overQuotaWeight: 1, limit: -1}}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: b}
spec: {resources: {gpu: {quota: 1, overQuotaWeight: 3, limit: -1}}}
---
apiVersion: v1
kind: Node
metadata: {name: node-1}
status: {allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: a-0, namespace: ns, labels: {kai.scheduler/queue: a}}
spec: {schedulerName: kai-scheduler, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "4"}}}]}
status: {phase: Pending}
---
apiVersion: v1
kind: Pod
metadata: {name: b-0, namespace: ns, labels: {kai.scheduler/queue: b}}
spec: {schedulerName: kai-scheduler, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "6"}}}]}
status: {phase: Pending}
---
apiVersion: v1
kind: Pod
metadata: {name: b-1, namespace: ns, labels: {kai.scheduler/queue: b}}
spec: {schedulerName: kai-scheduler, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "6"}}}]}
status: {phase: Pending}
"#;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = gpuquota::model::import_str("kai.yaml", MANIFESTS)?.model;
    // The uniform entry point: the checked input from the model, then the run.
    let input = Input::from_model(&model, &Options::default())?;

    // Division: deserved 2 + 1, then the 7 GPUs left split 1:3 in whole units.
    let shares = fairshare(&input)?;
    let fair_share = |q: &str| shares.queues[q].gpu.fair_share.to_string();
    for q in ["a", "b"] {
        println!("queue {q}: fair share {} GPUs", fair_share(q));
    }
    assert_eq!((fair_share("a"), fair_share("b")), ("4".into(), "6".into()));

    // One session: what is allocated, what waits and why.
    let session = run(&input)?;
    for a in &session.allocated {
        println!(
            "allocate {} (queue {}): {} pod(s)",
            a.pod_group,
            a.queue,
            a.pods.len()
        );
    }
    for p in &session.pending {
        println!(
            "pending  {} (queue {}): {}",
            p.pod_group, p.queue, p.message
        );
    }
    // b's second pod would take b beyond its fair share of 6.
    assert_eq!(session.allocated.len(), 2);
    assert_eq!(session.pending[0].pod_group, "ns/b-1");

    // The same objects built as plain Rust values, without YAML, divide the same.
    let by_hand = Input::from_model(&plain_model()?, &Options::default())?;
    assert_eq!(fairshare(&by_hand)?, shares);
    Ok(())
}

/// `MANIFESTS` as Rust values.
fn plain_model() -> Result<Model, Box<dyn std::error::Error>> {
    let gpu = ResourceName::new("nvidia.com/gpu");
    let meta = |name: &str, namespace: Option<&str>| ObjectMeta {
        name: name.into(),
        namespace: namespace.map(Into::into),
        ..ObjectMeta::default()
    };
    let mut model = Model::default();
    for (name, quota, weight) in [("a", "2", "1"), ("b", "1", "3")] {
        let resource = QueueResource {
            quota: Some(Quantity::parse(quota)?),
            over_quota_weight: Some(Quantity::parse(weight)?),
            limit: Some(Quantity::parse("-1")?),
        };
        let spec = QueueSpec {
            resources: Some(QueueResources {
                gpu: Some(resource),
                ..QueueResources::default()
            }),
            ..QueueSpec::default()
        };
        model.queues.insert(
            name.into(),
            Queue {
                metadata: meta(name, None),
                spec,
                ..Queue::default()
            },
        );
    }
    let mut allocatable = gpuquota::model::core::ResourceList::new();
    allocatable.insert(ResourceName::new("cpu"), Quantity::parse("64")?);
    allocatable.insert(ResourceName::new("memory"), Quantity::parse("512Gi")?);
    allocatable.insert(gpu.clone(), Quantity::parse("10")?);
    model.nodes.insert(
        "node-1".into(),
        Node {
            metadata: meta("node-1", None),
            status: NodeStatus {
                allocatable,
                ..NodeStatus::default()
            },
            ..Node::default()
        },
    );
    for (name, queue, gpus) in [("a-0", "a", "4"), ("b-0", "b", "6"), ("b-1", "b", "6")] {
        let mut metadata = meta(name, Some("ns"));
        metadata.labels.insert(QUEUE_LABEL.into(), queue.into());
        let container = Container {
            name: "c".into(),
            resources: ResourceRequirements {
                limits: [(gpu.clone(), Quantity::parse(gpus)?)]
                    .into_iter()
                    .collect(),
                ..ResourceRequirements::default()
            },
            ..Container::default()
        };
        let pod = Pod {
            metadata,
            spec: PodSpec {
                scheduler_name: Some("kai-scheduler".into()),
                containers: vec![container],
                ..PodSpec::default()
            },
            status: Some(PodStatus {
                phase: Some("Pending".into()),
                ..PodStatus::default()
            }),
        };
        model.pods.insert(format!("ns/{name}"), pod);
    }
    Ok(model)
}
