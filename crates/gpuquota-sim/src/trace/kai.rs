//! KAI mode: a prepared trace becomes PodGroups with their Pods in leaf Queues.

use std::collections::BTreeMap;

use gpuquota_model::Timestamp;

use super::apply::{apply_nodes, insert_namespace, mapped_queue, warn_skipped};
use super::{GPU_TYPE_LABEL, Job, Prepared, TRACE_ROW_SKIPPED, quota, sanitize};

/// KAI mode: turns a prepared trace into PodGroups (one per job: `spec.queue` the mapped
/// name, a leaf Queue of the cluster files; `minMember` all its pods, as a trace job ran
/// whole) with their Pods; the skipped rows become one warning per reason.
///
/// Each pod asks for `nvidia.com/gpu` in whole GPUs; a pod of less than one GPU gets KAI's
/// `gpu-fraction` annotation instead (`0.46`), and a fraction above one GPU (PAI's
/// `plan_gpu: 150`), which KAI cannot express, is rounded up to whole GPUs and counted as
/// kept (`gpu-fraction-rounded-up`). Skip reasons beyond the loaders': `no-leaf-queue` (no
/// Queue of that name) and `not-a-leaf-queue` (the Queue is another's parent: KAI places
/// jobs in leaves only). `milliGpuResource` is Kueue's and is not used here (a warning).
///
/// Phases: the node list ([`apply_nodes`]), then per job its leaf Queue
/// ([`kai_leaf_queue`]), its Pods ([`kai_pods`]) and its PodGroup ([`kai_pod_group`]),
/// then the `share` quotas, then the skipped rows' warnings (`gpuNumberFile`'s quotas come
/// first, before the jobs).
///
/// A job whose trace recorded its wait (Helios, AcmeTrace) joins `recorded` as a history
/// of kind `trace`: admitted at arrival + wait, ended a runtime later, its class the
/// trace's status; the report's `fidelity` compares the run with it.
///
/// # Complexity
/// O(jobs × log(objects) + queues).
pub(crate) fn apply_kai(
    mut p: Prepared,
    field: &str,
    (start, end_ms): (Timestamp, Option<i64>),
    model: &mut gpuquota_model::Model,
    (recorded, warnings): (
        &mut Vec<crate::history::Recorded>,
        &mut gpuquota_model::diag::Diagnostics,
    ),
) {
    let start_ms = i64::try_from(start.unix_nanos().div_euclid(1_000_000)).unwrap_or(0);
    if p.milli_gpu_resource.is_some() {
        warnings.push(
            gpuquota_model::diag::Diagnostic::warning(
                TRACE_ROW_SKIPPED,
                "milliGpuResource is not used under engine kai: fractions are gpu-fraction annotations",
            )
            .source(p.file.clone())
            .field(format!("{field}.milliGpuResource")),
        );
    }
    if let Some((file, text)) = &p.node_list {
        apply_nodes(model, file, text, field, warnings);
    }
    let target = quota::Target::new(model, "nvidia.com/gpu", false, true);
    if let Some((file, text)) = &p.gpu_number {
        quota::apply_gpu_numbers(model, &target, (file, text), start_ms, field, warnings);
    }
    let mut demands = quota::Demands::new();
    let jobs = std::mem::take(&mut p.loaded.jobs);
    for job in jobs {
        let queue = match kai_leaf_queue(&p, &job, model, &target) {
            Ok(q) => q,
            Err((reason, queue)) => {
                if let (Some(q), Some(_)) = (queue, p.share) {
                    quota::add_demand(&mut demands, &q, Some(0));
                }
                p.loaded.skip(reason);
                continue;
            }
        };
        if p.share.is_some() {
            quota::add_demand(&mut demands, &queue, Some(0));
        }
        let name = sanitize(&job.id);
        if name.is_empty() {
            p.loaded.skip("malformed-row");
            continue;
        }
        let ns = p.namespace.clone().unwrap_or_else(|| queue.clone());
        let key = format!("{ns}/{name}");
        if model.pod_groups.contains_key(&key) {
            p.loaded.skip("duplicate-job");
            continue;
        }
        let created_ms = if p.format.relative_times() {
            job.submit_ms
        } else {
            job.submit_ms.saturating_sub(start_ms)
        };
        let created = crate::scenario::at_ms(start, created_ms);
        let (pods, rounded) = kai_pods(&job, &name, &ns, created);
        let Ok(min_member) = i32::try_from(pods.len()) else {
            p.loaded.skip("malformed-row");
            continue;
        };
        if rounded {
            p.loaded.skip("gpu-fraction-rounded-up");
        }
        if p.share.is_some() {
            quota::add_demand(
                &mut demands,
                &queue,
                quota::demand(&job, created_ms, end_ms),
            );
        }
        if let Some(wait) = job.wait_ms {
            let created_at = start_ms.saturating_add(created_ms);
            let admitted = created_at.saturating_add(wait);
            let gpu_milli = job.pod_sets.iter().fold(0u64, |a, s| {
                a.saturating_add(s.gpu_milli.saturating_mul(u64::from(s.count)))
            });
            recorded.push(crate::history::Recorded {
                key: key.clone(),
                kind: "trace".to_owned(),
                object: name.clone(),
                namespace: ns.clone(),
                queue: queue.clone(),
                class: job.status.clone(),
                gpu_milli,
                created_ms: created_at,
                first_admitted_ms: Some(admitted),
                admitted_ms: Some(admitted),
                ready_ms: Some(admitted),
                evictions: Vec::new(),
                requeues: 0,
                end: Some(crate::history::End {
                    at_ms: admitted.saturating_add(job.runtime_ms),
                    reason: "Succeeded".to_owned(),
                }),
                runtime_ms: Some(job.runtime_ms),
                past_run_ms: 0,
            });
        }
        let group = kai_pod_group(&job, name, &ns, queue, created, min_member);
        if !model.namespaces.contains_key(&ns) {
            insert_namespace(model, &ns);
        }
        for pod in pods {
            let k = format!("{ns}/{}", pod.metadata.name);
            model.pods.insert(k, pod);
        }
        model.pod_groups.insert(key, group);
    }
    if let Some(share) = p.share {
        quota::apply_share(model, &target, share, &demands, &p.file, field, warnings);
    }
    warn_skipped(&p.loaded.skipped, &p.file, field, warnings);
}
/// The leaf Queue a KAI trace job maps to, or the skip reason (`no-queue`,
/// `no-leaf-queue`, `not-a-leaf-queue`) with the queue name when there is one.
///
/// # Complexity
/// O(log queues).
fn kai_leaf_queue(
    p: &Prepared,
    job: &Job,
    model: &gpuquota_model::Model,
    target: &quota::Target<'_>,
) -> Result<String, (&'static str, Option<String>)> {
    let queue = sanitize(mapped_queue(p, job));
    if queue.is_empty() {
        return Err(("no-queue", None));
    }
    match target.check(model, &queue) {
        Err(reason) => Err((reason, Some(queue))),
        Ok(_) => Ok(queue),
    }
}

/// The Pods of a KAI trace job (`<name>-<podset>-<i>`, each in the job's pod group, GPUs
/// whole or as a `gpu-fraction`), and whether a fraction above one GPU was rounded up.
///
/// # Complexity
/// O(pods).
fn kai_pods(
    job: &Job,
    name: &str,
    ns: &str,
    created: Timestamp,
) -> (Vec<gpuquota_model::core::Pod>, bool) {
    use gpuquota_model::core::{Container, Pod, PodSpec, PodStatus, ResourceRequirements};
    use gpuquota_model::kai::{GPU_FRACTION_ANNOTATION, POD_GROUP_ANNOTATION};
    use gpuquota_model::meta::ObjectMeta;
    use gpuquota_model::{Quantity, ResourceName};
    let mut pods: Vec<Pod> = Vec::new();
    let mut rounded = false;
    for s in &job.pod_sets {
        let mut annotations = BTreeMap::from([(POD_GROUP_ANNOTATION.to_owned(), name.to_owned())]);
        let mut requests = gpuquota_model::core::ResourceList::new();
        if s.gpu_milli < 1000 {
            let f = format!("{}", s.gpu_milli as f64 / 1000.0);
            annotations.insert(GPU_FRACTION_ANNOTATION.to_owned(), f);
        } else {
            rounded |= s.gpu_milli % 1000 != 0;
            let whole = i64::try_from(s.gpu_milli.div_ceil(1000)).unwrap_or(i64::MAX);
            requests.insert(
                ResourceName::new("nvidia.com/gpu"),
                Quantity::from_integer(whole),
            );
        }
        let node_selector: BTreeMap<String, String> = s
            .gpu_type
            .iter()
            .map(|t| (GPU_TYPE_LABEL.to_owned(), t.clone()))
            .collect();
        for i in 0..s.count {
            pods.push(Pod {
                metadata: ObjectMeta {
                    name: format!("{name}-{}-{i}", s.name),
                    namespace: Some(ns.to_owned()),
                    annotations: annotations.clone(),
                    creation_timestamp: Some(created),
                    ..ObjectMeta::default()
                },
                spec: PodSpec {
                    containers: vec![Container {
                        name: "c".into(),
                        resources: ResourceRequirements {
                            requests: requests.clone(),
                            limits: requests.clone(),
                            ..ResourceRequirements::default()
                        },
                        ..Container::default()
                    }],
                    node_selector: node_selector.clone(),
                    scheduler_name: Some("kai-scheduler".into()),
                    ..PodSpec::default()
                },
                status: Some(PodStatus {
                    phase: Some("Pending".into()),
                    ..PodStatus::default()
                }),
            });
        }
    }
    (pods, rounded)
}

/// The PodGroup of a KAI trace job: its class and runtime as annotations, `minMember` all
/// its pods.
///
/// # Complexity
/// O(1).
fn kai_pod_group(
    job: &Job,
    name: String,
    ns: &str,
    queue: String,
    created: Timestamp,
    min_member: i32,
) -> gpuquota_model::kai::PodGroup {
    use gpuquota_model::kai::{PodGroup, PodGroupSpec};
    use gpuquota_model::meta::ObjectMeta;
    PodGroup {
        metadata: ObjectMeta {
            name,
            namespace: Some(ns.to_owned()),
            annotations: BTreeMap::from([
                (crate::scenario::CLASS_KEY.to_owned(), job.status.clone()),
                (
                    crate::scenario::RUNTIME_ANNOTATION.to_owned(),
                    format!("{}ms", job.runtime_ms),
                ),
            ]),
            creation_timestamp: Some(created),
            ..ObjectMeta::default()
        },
        spec: PodGroupSpec {
            min_member: Some(min_member),
            queue,
            ..PodGroupSpec::default()
        },
        status: None,
    }
}
