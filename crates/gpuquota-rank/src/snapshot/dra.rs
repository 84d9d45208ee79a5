//! GPUs through Dynamic Resource Allocation, as KAI counts them: a pod's claims whose
//! device class names a GPU add whole GPUs to its request (queue quota and placement alike),
//! and a node offers the GPUs of the ResourceSlices published for it
//! (NVIDIA/KAI-Scheduler: pkg/common/resources/dra.go, `ExtractDRAGPUResources`;
//! pkg/common/resources/dra_node_resources.go, `CountNodeGPUsFromResourceSlices`). The
//! counting rules are in `gpuquota_model::workloads::dra`.

use super::nodes::Nodes;
use super::*;

/// Adds the GPUs the pod claims to `req`; an overflow is recorded in `problems`.
#[cfg(feature = "serde")]
pub(super) fn add_pod_gpus(
    model: &Model,
    key: &str,
    pod: &Pod,
    req: &mut PerResource<i128>,
    problems: &mut Diagnostics,
) {
    use gpuquota_model::workloads::dra;
    if !pod.spec.other.contains_key("resourceClaims") {
        return;
    }
    let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
    let n = dra::kai_pod_gpus(model, ns, &pod.spec, &dra::status_claim_names(pod));
    match i128::from(n)
        .checked_mul(SCALE)
        .and_then(|g| req[Resource::Gpu].checked_add(g))
    {
        Some(v) => req[Resource::Gpu] = v,
        None => problems.push(too_large(
            "Pod",
            key,
            "spec.resourceClaims",
            "GPU sum overflows",
        )),
    }
}

/// Without the `serde` feature pods keep no claims.
#[cfg(not(feature = "serde"))]
pub(super) fn add_pod_gpus(
    _: &Model,
    _: &str,
    _: &Pod,
    _: &mut PerResource<i128>,
    _: &mut Diagnostics,
) {
}

/// Adds to every node the GPUs its ResourceSlices offer (and to the cluster sum when it is
/// schedulable); an overflow is recorded in `problems`.
#[cfg(feature = "serde")]
pub(super) fn add_node_gpus(model: &Model, nodes: &mut Nodes<'_>, problems: &mut Diagnostics) {
    let (per_node, all) = gpuquota_model::workloads::dra::kai_node_gpus(model);
    if per_node.is_empty() && all == 0 {
        return;
    }
    for n in &mut nodes.nodes {
        let extra = per_node
            .get(&n.name)
            .copied()
            .unwrap_or(0)
            .saturating_add(all);
        if extra == 0 {
            continue;
        }
        let add = i128::from(extra).checked_mul(SCALE);
        let alloc = add.and_then(|a| n.allocatable[Resource::Gpu].checked_add(a));
        let sum = add.and_then(|a| nodes.sum[Resource::Gpu].checked_add(a));
        match (alloc, sum, usize::try_from(extra)) {
            (Some(a), Some(s), Ok(e)) => {
                n.allocatable[Resource::Gpu] = a;
                n.gpus = n.gpus.saturating_add(e);
                if !n.unschedulable {
                    nodes.sum[Resource::Gpu] = s;
                }
            }
            _ => problems.push(too_large(
                "Node",
                &n.name,
                "ResourceSlice devices",
                "GPU sum overflows",
            )),
        }
    }
}

/// Without the `serde` feature no ResourceSlice is kept.
#[cfg(not(feature = "serde"))]
pub(super) fn add_node_gpus(_: &Model, _: &mut Nodes<'_>, _: &mut Diagnostics) {}
