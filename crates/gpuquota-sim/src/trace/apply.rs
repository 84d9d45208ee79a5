//! Kueue and ResourceQuota mode: a prepared trace becomes Workloads (with the LocalQueues
//! and Namespaces they imply), the node list Nodes and ResourceFlavors, and the trace's GPU
//! quotas are applied.

use std::collections::BTreeMap;

use gpuquota_model::Timestamp;

use super::{
    GPU_TYPE_LABEL, Job, PodSet, Prepared, TRACE_ROW_SKIPPED, alibaba2023, quota, sanitize,
};

/// Turns a prepared trace into Workloads (and implied LocalQueues and Namespaces) of
/// `model`, with their instances; the skipped rows become one warning per reason.
///
/// # Complexity
/// O(jobs × log(workloads)).
#[allow(clippy::too_many_arguments)]
pub(crate) fn apply(
    mut p: Prepared,
    field: &str,
    kueue: bool,
    (start, end_ms): (Timestamp, Option<i64>),
    model: &mut gpuquota_model::Model,
    instances: &mut BTreeMap<String, crate::scenario::Instance>,
    warnings: &mut gpuquota_model::diag::Diagnostics,
) {
    let start_ms = i64::try_from(start.unix_nanos().div_euclid(1_000_000)).unwrap_or(0);
    // LocalQueue per (namespace, ClusterQueue), found or implied
    let mut lq_for: BTreeMap<String, BTreeMap<String, Result<String, &'static str>>> =
        BTreeMap::new();
    let mut demands = quota::Demands::new();
    let jobs = std::mem::take(&mut p.loaded.jobs);
    for mut job in jobs {
        let queue = sanitize(mapped_queue(&p, &job));
        if queue.is_empty() {
            p.loaded.skip("no-queue");
            continue;
        }
        if p.share.is_some() {
            quota::add_demand(&mut demands, &queue, Some(0));
        }
        let name = sanitize(&job.id);
        if name.is_empty() {
            p.loaded.skip("malformed-row");
            continue;
        }
        let ns = p.namespace.clone().unwrap_or_else(|| queue.clone());
        let mut key = String::with_capacity(ns.len() + 1 + name.len());
        key.push_str(&ns);
        key.push('/');
        key.push_str(&name);
        if model.workloads.contains_key(&key) {
            p.loaded.skip("duplicate-job");
            continue;
        }
        let mut queue_name = String::new();
        if kueue {
            // looked up by reference: owned keys are made once per pair, not per job
            let lq = match lq_for.get(&ns).and_then(|m| m.get(&queue)) {
                Some(lq) => lq.clone(),
                None => {
                    let lq = implied_local_queue(model, &ns, &queue);
                    lq_for
                        .entry(ns.clone())
                        .or_default()
                        .insert(queue.clone(), lq.clone());
                    lq
                }
            };
            match lq {
                Ok(l) => queue_name = l,
                Err(reason) => {
                    p.loaded.skip(reason);
                    continue;
                }
            }
        } else if !model.namespaces.contains_key(&ns) {
            insert_namespace(model, &ns);
        }
        let created_ms = if p.format.relative_times() {
            job.submit_ms
        } else {
            job.submit_ms.saturating_sub(start_ms)
        };
        // before the pod sets move into the Workload
        let job_demand = p
            .share
            .is_some()
            .then(|| quota::demand(&job, created_ms, end_ms));
        let Some(mut w) = workload(
            std::mem::take(&mut job.pod_sets),
            name,
            ns,
            queue_name,
            p.milli_gpu_resource.as_deref(),
            start,
            created_ms,
        ) else {
            p.loaded.skip("malformed-row");
            continue;
        };
        if let Some(c) = job.priority_class.take() {
            set_priority_class(model, &mut w, c);
        }
        if let Some(d) = job_demand {
            quota::add_demand(&mut demands, &queue, d);
        }
        model.workloads.insert(key.clone(), w);
        instances.insert(
            key.clone(),
            crate::scenario::Instance {
                key,
                class: job.status,
                created_ms,
                runtime_ms: Some(job.runtime_ms),
                recorded_wait_ms: job.wait_ms,
            },
        );
    }
    if let Some((file, text)) = &p.node_list {
        apply_nodes(model, file, text, field, warnings);
    }
    let milli = p.milli_gpu_resource.as_deref();
    let target = quota::Target::new(
        model,
        milli.unwrap_or("nvidia.com/gpu"),
        milli.is_some(),
        false,
    );
    apply_quotas(&p, &target, start_ms, &demands, model, field, warnings);
    warn_skipped(&p.loaded.skipped, &p.file, field, warnings);
}

/// The trace's GPU quotas: `gpuNumberFile` or `share` ([`quota`]).
fn apply_quotas(
    p: &Prepared,
    target: &quota::Target<'_>,
    start_ms: i64,
    demands: &quota::Demands,
    model: &mut gpuquota_model::Model,
    field: &str,
    warnings: &mut gpuquota_model::diag::Diagnostics,
) {
    if let Some((file, text)) = &p.gpu_number {
        quota::apply_gpu_numbers(model, target, (file, text), start_ms, field, warnings);
    }
    if let Some(share) = p.share {
        quota::apply_share(model, target, share, demands, &p.file, field, warnings);
    }
}

/// The rows a trace mapping skipped or adjusted, one warning per reason (source the trace
/// file, field the `trace:` entry).
pub(super) fn warn_skipped(
    skipped: &BTreeMap<&'static str, u64>,
    file: &str,
    field: &str,
    warnings: &mut gpuquota_model::diag::Diagnostics,
) {
    for (reason, n) in skipped {
        warnings.push(
            gpuquota_model::diag::Diagnostic::warning(
                TRACE_ROW_SKIPPED,
                match *reason {
                    "gpu-spec-alternatives" => {
                        format!("{n} trace rows kept without a node selector ({reason})")
                    }
                    "gpu-fraction-rounded-up" => {
                        format!("{n} trace rows kept with their GPUs rounded up ({reason})")
                    }
                    _ => format!("{n} trace rows skipped ({reason})"),
                },
            )
            .source(file.to_owned())
            .field(field.to_owned()),
        );
    }
}

/// The Workload of a trace job's pod sets, built directly (no text round trip, the
/// strings moved in); `None` when a pod count does not fit Kueue's `int32`.
///
/// # Complexity
/// O(pod sets).
fn workload(
    job_pod_sets: Vec<PodSet>,
    name: String,
    ns: String,
    queue_name: String,
    milli_gpu_resource: Option<&str>,
    start: Timestamp,
    created_ms: i64,
) -> Option<gpuquota_model::kueue::Workload> {
    use gpuquota_model::core::{Container, PodSpec, ResourceRequirements};
    use gpuquota_model::kueue::{PodSet as KPodSet, PodTemplateSpec, Workload, WorkloadSpec};
    use gpuquota_model::meta::ObjectMeta;
    use gpuquota_model::{Quantity, ResourceName};
    let mut pod_sets = Vec::with_capacity(job_pod_sets.len());
    for s in job_pod_sets {
        // the quantities `Quantity::parse` makes of `N` and `Nm` (test
        // `trace_quantities_are_the_parsed_ones`), without formatting them first
        let milli = i64::try_from(s.gpu_milli).ok()?;
        let (res, q) = match milli_gpu_resource {
            Some(r) => (r, Quantity::from_integer(milli)),
            None if milli % 1000 == 0 => ("nvidia.com/gpu", Quantity::from_integer(milli / 1000)),
            None => ("nvidia.com/gpu", Quantity::from_milli(milli)),
        };
        let requests = [(ResourceName::new(res), q)].into_iter().collect();
        let node_selector = s
            .gpu_type
            .into_iter()
            .map(|t| (GPU_TYPE_LABEL.to_owned(), t))
            .collect();
        pod_sets.push(KPodSet {
            name: s.name,
            template: PodTemplateSpec {
                metadata: None,
                spec: PodSpec {
                    containers: vec![Container {
                        name: "c".into(),
                        resources: ResourceRequirements {
                            requests,
                            ..ResourceRequirements::default()
                        },
                        ..Container::default()
                    }],
                    node_selector,
                    ..PodSpec::default()
                },
            },
            count: i32::try_from(s.count).ok()?,
            min_count: None,
            topology_request: None,
        });
    }
    // No class or runtime annotations: the job's instance carries both (the annotations
    // are read only for workloads from files, which have no instance), and each row's
    // two owned keys, two values and a map node were a fifth of the Workload's allocations.
    Some(Workload {
        metadata: ObjectMeta {
            name,
            namespace: Some(ns),
            creation_timestamp: Some(crate::scenario::at_ms(start, created_ms)),
            ..ObjectMeta::default()
        },
        spec: WorkloadSpec {
            pod_sets,
            queue_name: Some(queue_name),
            ..WorkloadSpec::default()
        },
        status: None,
    })
}
/// Names the WorkloadPriorityClass `class` (with its value as the resolved priority) when
/// the model defines one of that name; otherwise leaves the workload without a class.
fn set_priority_class(
    model: &gpuquota_model::Model,
    w: &mut gpuquota_model::kueue::Workload,
    class: String,
) {
    if let Some(c) = model.workload_priority_classes.get(&class) {
        w.spec.priority = Some(c.value);
        w.spec.priority_class_source = Some("kueue.x-k8s.io/workloadpriorityclass".to_owned());
        w.spec.priority_class_name = Some(class);
    }
}

/// The queue name a trace job maps to, as written: `queue`, else its `queueBy` field.
pub(super) fn mapped_queue<'j>(p: &'j Prepared, job: &'j Job) -> &'j str {
    match (&p.queue, p.queue_by) {
        (Some(q), _) => q.as_str(),
        (None, Some(f)) => job.fields.get(f).map_or("", String::as_str),
        (None, None) => "",
    }
}
/// Adds the Nodes and ResourceFlavors of an Alibaba 2023 node list
/// ([`alibaba2023::nodes`]); rows it cannot use are one warning per reason.
///
/// # Complexity
/// O(rows × log(nodes)).
pub(super) fn apply_nodes(
    model: &mut gpuquota_model::Model,
    file: &str,
    text: &str,
    field: &str,
    warnings: &mut gpuquota_model::diag::Diagnostics,
) {
    use gpuquota_model::diag::Diagnostic;
    use gpuquota_model::{Quantity, ResourceName};
    let warn = |warnings: &mut gpuquota_model::diag::Diagnostics, msg: String| {
        warnings.push(
            Diagnostic::warning(TRACE_ROW_SKIPPED, msg)
                .source(file.to_owned())
                .field(format!("{field}.nodeFile")),
        );
    };
    let (rows, mut skipped) = match alibaba2023::nodes(text) {
        Ok(x) => x,
        Err(m) => {
            warn(warnings, format!("no node read: {m}"));
            return;
        }
    };
    for r in rows {
        if model.nodes.contains_key(&r.name) {
            *skipped.entry("duplicate-node").or_insert(0) += 1;
            continue;
        }
        let mut node = gpuquota_model::core::Node::default();
        node.metadata.name = r.name.clone();
        let alloc = &mut node.status.allocatable;
        for (res, q) in [
            ("cpu", format!("{}m", r.cpu_milli)),
            ("memory", format!("{}Mi", r.memory_mib)),
            ("nvidia.com/gpu", r.gpus.to_string()),
        ] {
            if let Ok(q) = Quantity::parse(&q) {
                alloc.insert(ResourceName::new(res), q);
            }
        }
        node.status.capacity = node.status.allocatable.clone();
        if !r.model.is_empty() {
            node.metadata
                .labels
                .insert(GPU_TYPE_LABEL.to_owned(), r.model.clone());
            let flavor = sanitize(&r.model);
            if !flavor.is_empty() && !model.resource_flavors.contains_key(&flavor) {
                let mut f = gpuquota_model::kueue::ResourceFlavor::default();
                f.metadata.name = flavor.clone();
                f.spec
                    .node_labels
                    .insert(GPU_TYPE_LABEL.to_owned(), r.model.clone());
                model.resource_flavors.insert(flavor, f);
            }
        }
        model.nodes.insert(r.name, node);
    }
    for (reason, n) in skipped {
        warn(warnings, format!("{n} node rows skipped ({reason})"));
    }
}

pub(super) fn insert_namespace(model: &mut gpuquota_model::Model, ns: &str) {
    if let Ok(n) = serde_json::from_value::<gpuquota_model::core::Namespace>(
        serde_json::json!({"metadata": {"name": ns}}),
    ) {
        model.namespaces.insert(ns.to_owned(), n);
    }
}

/// The LocalQueue of `ns` for ClusterQueue `cq`: the first existing one, else an implied one
/// named `cq` (with its Namespace); the skip reason when `cq` does not exist or a LocalQueue
/// of that name feeds another ClusterQueue.
fn implied_local_queue(
    model: &mut gpuquota_model::Model,
    ns: &str,
    cq: &str,
) -> Result<String, &'static str> {
    if !model.cluster_queues.contains_key(cq) {
        return Err("no-cluster-queue");
    }
    if let Some(l) = model
        .local_queues
        .values()
        .find(|l| l.metadata.namespace.as_deref() == Some(ns) && l.spec.cluster_queue == cq)
    {
        return Ok(l.metadata.name.clone());
    }
    let key = format!("{ns}/{cq}");
    if model.local_queues.contains_key(&key) {
        return Err("local-queue-name-taken");
    }
    let lq = serde_json::from_value::<gpuquota_model::kueue::LocalQueue>(serde_json::json!({
        "metadata": {"name": cq, "namespace": ns}, "spec": {"clusterQueue": cq},
    }))
    .map_err(|_| "malformed-row")?;
    model.local_queues.insert(key, lq);
    if !model.namespaces.contains_key(ns) {
        insert_namespace(model, ns);
    }
    Ok(cq.to_owned())
}

#[cfg(test)]
mod tests {
    /// The workload builder makes quantities without text; they print and compare as the
    /// parsed text did.
    #[test]
    fn trace_quantities_are_the_parsed_ones() {
        use gpuquota_model::Quantity;
        for n in [0i64, 1, 4, 8, 1000, 123_456] {
            let parsed = Quantity::parse(&n.to_string()).unwrap();
            let made = Quantity::from_integer(n);
            assert_eq!(made, parsed);
            assert_eq!(made.to_string(), parsed.to_string());
            assert_eq!(made.format(), parsed.format());
        }
        for m in [1i64, 250, 460, 500, 999, 1500] {
            let parsed = Quantity::parse(&format!("{m}m")).unwrap();
            let made = Quantity::from_milli(m);
            assert_eq!(made, parsed);
            assert_eq!(made.to_string(), parsed.to_string());
            assert_eq!(made.format(), parsed.format());
        }
    }
}
