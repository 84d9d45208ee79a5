//! Reading the jobs: PodGroups, then pods grouped into them (or into one-pod jobs), then
//! each job's leaf queue and the leaves' demand.

use super::nodes::{Mig, Nodes};
use super::queues::duration;
use super::*;

/// Reads every PodGroup into a job without pods: priority, preemptibility, minMember, delays
/// and KAI's annotations; every bad field is recorded in `problems`.
///
/// # Complexity
/// O(G log G) for G PodGroups.
pub(super) fn read_pod_groups(
    model: &Model,
    options: &BuildOptions,
    problems: &mut Diagnostics,
) -> BTreeMap<String, Job> {
    // Jobs: PodGroups, then pods grouped by annotation.
    let mut jobs: BTreeMap<String, Job> = BTreeMap::new();
    for (key, pg) in &model.pod_groups {
        let priority = priority_of(model, pg.spec.priority_class_name.as_deref());
        let preemptible = match pg.spec.preemptibility.as_deref() {
            Some("preemptible") => true,
            Some("non-preemptible") => false,
            None | Some("") => priority < 100,
            Some(other) => {
                problems.push(invalid(
                    "PodGroup",
                    key,
                    "spec.preemptibility",
                    format!("{other:?}: expected preemptible or non-preemptible"),
                ));
                priority < 100
            }
        };
        // KAI: unset means 1; 0 is valid (no gang: every pod is elastic); negative is
        // rejected by the CRD (minimum 0).
        let min_member = match pg.spec.min_member {
            None => 1,
            Some(m) if m >= 0 => m as usize,
            Some(m) => {
                problems.push(invalid(
                    "PodGroup",
                    key,
                    "spec.minMember",
                    format!("{m} < 0"),
                ));
                1
            }
        };
        let delay_s = pg.spec.preemption_delay.clone().or_else(|| {
            pg.metadata
                .annotations
                .get(PREEMPTION_DELAY_ANNOTATION)
                .cloned()
        });
        let ts = |a: &str| -> Result<Option<Timestamp>, Diagnostic> {
            match pg.metadata.annotations.get(a) {
                None => Ok(None),
                Some(s) => Timestamp::parse(s).map(Some).map_err(|e| {
                    invalid(
                        "PodGroup",
                        key,
                        &format!("metadata.annotations.{a}"),
                        e.to_string(),
                    )
                }),
            }
        };
        let staleness_grace = keep(
            problems,
            duration(
                "PodGroup",
                key,
                "spec.stalenessGracePeriod",
                &pg.spec.staleness_grace_period,
            ),
        )
        .flatten();
        let preemption_delay = keep(
            problems,
            duration("PodGroup", key, "spec.preemptionDelay", &delay_s),
        )
        .flatten();
        let stale_since = keep(problems, ts(STALE_TIMESTAMP_ANNOTATION)).flatten();
        let last_start = keep(problems, ts(LAST_START_ANNOTATION)).flatten();
        jobs.insert(
            key.clone(),
            Job {
                key: key.clone(),
                // `spec.queue`, else the PodGroup's queue label.
                queue_name: if pg.spec.queue.is_empty() {
                    options
                        .queue_label(&pg.metadata.labels)
                        .cloned()
                        .unwrap_or_default()
                } else {
                    pg.spec.queue.clone()
                },
                queue: None,
                min_member,
                priority,
                preemptible,
                creation: pg.metadata.creation_timestamp,
                uid: pg.metadata.uid.clone().unwrap_or_else(|| key.clone()),
                staleness_grace,
                preemption_delay,
                stale_since,
                last_start,
                tasks: Vec::new(),
                foreign: false,
            },
        );
    }
    jobs
}

/// Adds every pod to its job (its PodGroup's, or a one-pod job named after the pod) and
/// returns each job's `project` label (of its first pod that has one), the queue fallback.
///
/// # Complexity
/// O(P log P) for P pods.
pub(super) fn read_pods(
    model: &Model,
    options: &BuildOptions,
    now: Timestamp,
    nodes: &Nodes<'_>,
    m: &Mig,
    jobs: &mut BTreeMap<String, Job>,
    problems: &mut Diagnostics,
) -> BTreeMap<String, String> {
    // Pod group → the `project` label of its first pod (queue fallback).
    let mut projects: BTreeMap<String, String> = BTreeMap::new();
    // The smallest GPU a `gpu-memory` pod may land on, and KAI's `MinNodeGPUMemoryMiB`
    // (`snapshotNodes`: only nodes above `DefaultGpuMemory` count), the demand's divisor.
    let memories = || nodes.nodes.iter().filter_map(|n| n.gpu_memory_mib);
    let min_gpu_memory = memories().min();
    let demand_memory = memories().filter(|&m| m > DEFAULT_GPU_MEMORY_MIB).min();
    for (key, pod) in &model.pods {
        let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
        let group = match pod.metadata.annotations.get(POD_GROUP_ANNOTATION) {
            Some(g) => format!("{ns}/{g}"),
            None => key.clone(),
        };
        let mut task = pod_task(
            key,
            pod,
            now,
            (nodes, min_gpu_memory, demand_memory),
            m,
            problems,
        );
        super::dra::add_pod_gpus(model, key, pod, &mut task.req, problems);
        let status = task.status;
        let label_queue = options.queue_label(&pod.metadata.labels).cloned();
        let foreign = pod
            .spec
            .scheduler_name
            .as_deref()
            .is_some_and(|s| !s.is_empty() && s != KAI_SCHEDULER_NAME)
            && !pod.metadata.annotations.contains_key(POD_GROUP_ANNOTATION)
            && label_queue.is_none();
        let job = jobs.entry(group.clone()).or_insert_with(|| Job {
            key: group.clone(),
            queue_name: label_queue.clone().unwrap_or_default(),
            queue: None,
            min_member: 1,
            priority: pod
                .spec
                .priority_class_name
                .as_deref()
                .map(|c| priority_of(model, Some(c)))
                .unwrap_or(DEFAULT_JOB_PRIORITY),
            preemptible: true,
            creation: pod.metadata.creation_timestamp,
            uid: group.clone(),
            staleness_grace: None,
            preemption_delay: None,
            stale_since: None,
            last_start: None,
            tasks: Vec::new(),
            foreign,
        });
        if job.tasks.is_empty() && !model.pod_groups.contains_key(&group) {
            job.preemptible = job.priority < 100;
        }
        if job.queue_name.is_empty()
            && let Some(q) = label_queue
        {
            job.queue_name = q;
        }
        if let Some(p) = pod.metadata.labels.get(PROJECT_LABEL) {
            projects.entry(group.clone()).or_insert_with(|| p.clone());
        }
        if status == TaskStatus::Running
            && let Some(st) = pod.status.as_ref().and_then(|s| s.start_time)
            && model
                .pod_groups
                .get(&group)
                .is_none_or(|pg| !pg.metadata.annotations.contains_key(LAST_START_ANNOTATION))
            && job.last_start.is_none_or(|l| st > l)
        {
            job.last_start = Some(st);
        }
        job.tasks.push(task);
    }
    projects
}

/// A pod's task: KAI's task state, node, requests (MIG instances as GPU-equivalents
/// included), GPU group, selector and tolerations; every bad field is recorded in
/// `problems`.
///
/// # Complexity
/// O(R log N) for R requested resources and N nodes.
fn pod_task(
    key: &str,
    pod: &Pod,
    now: Timestamp,
    (nodes, min_gpu_memory, demand_memory): (&Nodes<'_>, Option<i64>, Option<i64>),
    m: &Mig,
    problems: &mut Diagnostics,
) -> Task {
    let (mig_profiles, portion) = (&m.profiles, &m.portion);
    let (node_index, nodes) = (&nodes.index, &nodes.nodes);
    let phase = pod
        .status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or("Pending");
    let node = pod.spec.node_name.as_deref().filter(|n| !n.is_empty());
    // `metadata.deletionTimestamp` is one of the fields the model keeps verbatim (`Opaque`),
    // readable only with the `serde` feature.
    #[cfg(not(feature = "serde"))]
    let deletion: Option<Timestamp> = None;
    #[cfg(feature = "serde")]
    let deletion = match pod
        .metadata
        .other
        .get("deletionTimestamp")
        .map(|v| v.as_value())
    {
        None | Some(serde_json::Value::Null) => None,
        Some(v) => {
            let t = v.as_str().and_then(|t| Timestamp::parse(t).ok());
            if t.is_none() {
                problems.push(invalid(
                    "Pod",
                    key,
                    "metadata.deletionTimestamp",
                    "not an RFC 3339 time",
                ));
            }
            t
        }
    };
    // KAI's task states: a running pod being deleted is Releasing (StuckInReleasing
    // after 2 minutes); a pending pod with a node is Bound, i.e. allocated.
    let status = match (phase, node, deletion) {
        ("Running", Some(_), Some(d)) => {
            let since = now.unix_nanos().saturating_sub(d.unix_nanos());
            if since > STUCK_IN_RELEASING_NANOS {
                TaskStatus::StuckInReleasing
            } else {
                TaskStatus::Releasing
            }
        }
        (_, _, Some(_)) => TaskStatus::Other,
        ("Running" | "Pending", Some(_), None) => TaskStatus::Running,
        ("Pending", None, None) => TaskStatus::Pending,
        ("Succeeded", _, None) => TaskStatus::Succeeded,
        _ => TaskStatus::Other,
    };
    let node_idx = match (status, node) {
        (TaskStatus::Running | TaskStatus::Releasing | TaskStatus::StuckInReleasing, Some(n)) => {
            match node_index.get(n) {
                Some(&i) => Some(i),
                None if nodes.is_empty() => None,
                None => {
                    problems.push(not_found(
                        "Pod",
                        key,
                        "spec.nodeName",
                        format!("node {n:?} does not exist"),
                    ));
                    None
                }
            }
        }
        _ => None,
    };
    let (mut req, mut fractional, mig_named, gpu_memory_mib) = pod_requests(key, pod, problems);
    // KAI's GPU sharing by memory: the share of one device the request is charged.
    let gpu_memory = gpu_memory_mib.map(|mib| {
        let node_memory = node_idx.map(|i| nodes[i].gpu_memory_mib);
        let share = match node_memory {
            // Allocated on a node: the share of that node's GPU (`AcceptedResource`).
            Some(Some(mem)) => gpu_memory_share(mib, mem),
            Some(None) => {
                problems.push(invalid(
                    "Pod",
                    key,
                    &format!("metadata.annotations.{GPU_MEMORY_ANNOTATION}"),
                    format!(
                        "its node {:?} has no readable {GPU_MEMORY_LABEL} label of at least \
                         100 MiB: the request is no share of its GPU",
                        node.unwrap_or_default()
                    ),
                ));
                0
            }
            // Pending: the share of the smallest GPU of the cluster, the largest share it
            // can be charged anywhere (KAI charges the share of the node it lands on).
            None => min_gpu_memory.map_or(0, |mem| gpu_memory_share(mib, mem)),
        };
        req[Resource::Gpu] = share;
        fractional = true;
        GpuMemoryRequest {
            mib,
            demand: demand_memory.map_or(0, |mem| gpu_memory_demand(mib, mem)),
        }
    });
    let mut mig = Vec::with_capacity(mig_named.len());
    let mut mig_gpu: Option<i128> = Some(0);
    for (name, count) in mig_named {
        if let Ok(i) = mig_profiles.binary_search(&name) {
            mig.push((i, count));
            mig_gpu =
                mig_gpu.and_then(|s| s.checked_add(i128::from(count).checked_mul(portion[i])?));
        }
    }
    let summed = mig_gpu.and_then(|m| req[Resource::Gpu].checked_add(m));
    let mig_gpu = mig_gpu.unwrap_or(0);
    match summed {
        Some(v) => req[Resource::Gpu] = v,
        None => problems.push(too_large(
            "Pod",
            key,
            "resources.requests",
            "GPU sum overflows",
        )),
    }
    Task {
        key: key.to_owned(),
        status,
        req,
        fractional,
        mig,
        mig_gpu,
        gpu_memory,
        node: node_idx.map(crate::ids::NodeId::new),
        gpu_group: pod.metadata.labels.get(GPU_GROUP_LABEL).cloned(),
        node_selector: pod.spec.node_selector.clone(),
        tolerations: pod.spec.tolerations.clone(),
    }
}

/// Gives every job its leaf queue (a job naming a parent queue is queueless), takes the
/// foreign pods' resources off `node_sum`, and sums each leaf's demand (running + pending
/// requests) into `inputs`; an overflowing sum is recorded once per queue.
///
/// # Complexity
/// O(J log Q + T) for J jobs of T pods and Q queues.
pub(super) fn assign_queues(
    model: &Model,
    jobs: BTreeMap<String, Job>,
    projects: &BTreeMap<String, String>,
    index: &BTreeMap<&str, usize>,
    inputs: &mut [QueueInput],
    node_sum: &mut PerResource<i128>,
    problems: &mut Diagnostics,
) -> Vec<Job> {
    let mut has_child = vec![false; inputs.len()];
    for q in inputs.iter() {
        if let Some(p) = q.parent {
            has_child[p.index()] = true;
        }
    }
    let mut jobs: Vec<Job> = jobs.into_values().collect();
    for j in jobs.iter().filter(|j| j.foreign) {
        for t in j.tasks.iter().filter(|t| t.status == TaskStatus::Running) {
            for r in Resource::ALL {
                node_sum[r] = node_sum[r].saturating_sub(t.req[r]).max(0);
            }
        }
    }
    let mut request_overflow = vec![false; inputs.len()];
    for j in &mut jobs {
        if j.foreign {
            continue;
        }
        // KAI's pod grouper gives a pod without a PodGroup and without a queue label the
        // queue of its `project` label, else `default-queue`.
        if j.queue_name.is_empty() && !model.pod_groups.contains_key(&j.key) {
            j.queue_name = projects
                .get(&j.key)
                .cloned()
                .unwrap_or_else(|| DEFAULT_QUEUE_NAME.to_string());
        }
        // Only leaf queues hold jobs; a job naming a parent queue is treated as queueless.
        j.queue = index
            .get(j.queue_name.as_str())
            .copied()
            .filter(|&q| !has_child[q])
            .map(crate::ids::QueueId::new);
        // Demand of the leaf: allocated + pending.
        if let Some(q) = j.queue.map(crate::ids::QueueId::index) {
            for t in &j.tasks {
                if matches!(t.status, TaskStatus::Running | TaskStatus::Pending) {
                    for r in Resource::ALL {
                        if request_overflow[q] {
                            continue;
                        }
                        // A pending `gpu-memory` request adds its demand (the share of the
                        // smallest GPU, unrounded) as KAI's proportion plugin does.
                        let asked = match (t.status, t.gpu_memory, r) {
                            (TaskStatus::Pending, Some(g), Resource::Gpu) => g.demand,
                            _ => t.req[r],
                        };
                        let sum = inputs[q].resources[r.index()].request.checked_add(asked);
                        match sum {
                            Some(v) => inputs[q].resources[r.index()].request = v,
                            None => {
                                // Reported once per queue.
                                request_overflow[q] = true;
                                problems.push(too_large(
                                    "Queue",
                                    &inputs[q].name,
                                    "status.requested",
                                    "sum overflows",
                                ));
                            }
                        }
                    }
                }
            }
        }
    }
    jobs
}

type PodRequests = (
    crate::ids::PerResource<i128>,
    bool,
    Vec<(String, i64)>,
    Option<i64>,
);

/// The share of one GPU of `mem` MiB that `mib` MiB are charged, in nano-GPUs: KAI's
/// `getGpuMemoryFractionalOnNode` (`pkg/scheduler/api/node_info/gpu_sharing_node_info.go`),
/// `ceil(mib / mem × 100) / 100`, computed in the same IEEE double operations so the
/// hundredth it rounds up to is KAI's (`7 / 100 × 100` is just above 7: 0.08 of a GPU).
fn gpu_memory_share(mib: i64, mem: i64) -> i128 {
    #[allow(clippy::cast_precision_loss)] // KAI converts the same way (float64)
    let hundredths = ((mib as f64 / mem as f64) * 100.0).ceil();
    // A request above 2⁶³ hundredths saturates; it fits no device either way.
    #[allow(clippy::cast_possible_truncation)]
    let h = hundredths as i128;
    h.saturating_mul(SCALE / 100)
}

/// The GPU-equivalents (nano) a pending `gpu-memory` request adds to its queue's demand:
/// `mib / mem` for the cluster's smallest per-GPU memory `mem` (KAI's proportion plugin and
/// `GpuMemoryAsGpuFraction`), rounded up to the nano-GPU.
fn gpu_memory_demand(mib: i64, mem: i64) -> i128 {
    let n = i128::from(mib) * SCALE;
    let d = i128::from(mem);
    n / d + i128::from(n % d != 0)
}

/// A pod's requests; every bad field is recorded in `problems` and read as 0.
fn pod_requests(key: &str, pod: &Pod, problems: &mut Diagnostics) -> PodRequests {
    let mut out = crate::ids::PerResource::ZERO;
    let mut fractional = false;
    let mut mig = Vec::new();
    let Some(reqs) = pod.spec.effective_requests() else {
        problems.push(too_large(
            "Pod",
            key,
            "spec.containers[].resources",
            "sum overflows",
        ));
        return (out, fractional, mig, None);
    };
    for (name, q) in &reqs {
        let field = format!("resources.requests.{name}");
        if q.is_negative() {
            problems.push(invalid("Pod", key, &field, "negative"));
            continue;
        }
        if mig_gpu_portion(name.as_str()).is_some() {
            match q.value() {
                Some(count) => mig.push((name.as_str().to_string(), count)),
                None => problems.push(too_large("Pod", key, &field, "too large")),
            }
            continue;
        }
        let (idx, extra) = match name.as_str() {
            GPU_RESOURCE => (0, 0),
            "cpu" => (1, 3),
            "memory" => (2, 0),
            _ => continue,
        };
        match from_quantity(q, extra) {
            Some(v) => out.0[idx] = v,
            None => problems.push(too_large("Pod", key, &field, "too large")),
        }
    }
    if let Some(f) = pod.metadata.annotations.get(GPU_FRACTION_ANNOTATION) {
        let field = format!("metadata.annotations.{GPU_FRACTION_ANNOTATION}");
        let v = match Quantity::parse(f.trim()) {
            Err(e) => Err(invalid("Pod", key, &field, e.to_string())),
            Ok(q) => match from_quantity(&q, 0) {
                None => Err(too_large("Pod", key, &field, "too large")),
                Some(v) if v <= 0 || v > SCALE => {
                    Err(invalid("Pod", key, &field, "must be in (0, 1]"))
                }
                Some(v) => Ok(v),
            },
        };
        if let Some(v) = keep(problems, v) {
            out[Resource::Gpu] = v;
            fractional = v < SCALE;
        }
    } else if let Some(m) = pod.metadata.annotations.get(GPU_MEMORY_ANNOTATION) {
        // KAI reads it with `strconv.ParseInt` and uses it when above 0; it then replaces
        // the pod's GPU request (`updatePodAdditionalFields`).
        match m.parse::<i64>() {
            Ok(mib) if mib > 0 => {
                out[Resource::Gpu] = 0;
                return (out, true, mig, Some(mib));
            }
            _ => problems.push(invalid(
                "Pod",
                key,
                &format!("metadata.annotations.{GPU_MEMORY_ANNOTATION}"),
                format!("{m:?}: expected a whole number of MiB above 0"),
            )),
        }
    } else if out[Resource::Gpu] % SCALE != 0 {
        problems.push(invalid(
            "Pod",
            key,
            "resources.requests.nvidia.com/gpu",
            "whole devices only (use the gpu-fraction annotation)",
        ));
    }
    (out, fractional, mig, None)
}

#[cfg(test)]
mod tests {
    use super::{gpu_memory_demand, gpu_memory_share};

    #[test]
    fn gpu_memory_share_rounds_up_to_kais_hundredth() {
        // 50 of 100 MiB: half a GPU; 20000 of 81900: ceil(24.42) = 0.25.
        assert_eq!(gpu_memory_share(50, 100), 500_000_000);
        assert_eq!(gpu_memory_share(20_000, 81_900), 250_000_000);
        // KAI's doubles: 7 / 100 × 100 = 7.000000000000001, so 0.08 of a GPU, not 0.07;
        // 29 / 100 × 100 = 28.999999999999996, so 0.29.
        assert_eq!(gpu_memory_share(7, 100), 80_000_000);
        assert_eq!(gpu_memory_share(29, 100), 290_000_000);
        // More than one GPU's memory: more than one GPU (no device takes it).
        assert_eq!(gpu_memory_share(150, 100), 1_500_000_000);
    }

    #[test]
    fn gpu_memory_demand_is_the_unrounded_share_of_the_smallest_gpu() {
        assert_eq!(gpu_memory_demand(10_000, 40_000), 250_000_000);
        // 20000 / 81900 = 0.2442002442…, rounded up to the nano-GPU.
        assert_eq!(gpu_memory_demand(20_000, 81_900), 244_200_245);
    }
}
