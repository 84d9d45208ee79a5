//! Reading the nodes and the MIG profiles named by nodes and pods.

use super::*;

/// The MIG profiles named by nodes and pods (`nvidia.com/mig-<g>g.<mem>gb`), sorted, with
/// each one's GPU-equivalents (nano).
pub(super) struct Mig {
    /// Profile names, sorted.
    pub(super) profiles: Vec<String>,
    /// `g × 10⁹` per profile.
    pub(super) portion: Vec<i128>,
}

/// The MIG profiles named by nodes and pods.
///
/// # Complexity
/// O(R log R) for R resource names on nodes and pods.
pub(super) fn mig_profiles(model: &Model) -> Mig {
    // MIG profiles named by nodes and pods.
    let mut mig_profiles: Vec<String> = model
        .nodes
        .values()
        .flat_map(|n| n.status.allocatable.keys())
        .map(|k| k.as_str().to_string())
        .chain(model.pods.values().flat_map(|p| {
            p.spec
                .effective_requests()
                .unwrap_or_default()
                .into_keys()
                .map(|k| k.as_str().to_string())
        }))
        .filter(|k| mig_gpu_portion(k).is_some())
        .collect();
    mig_profiles.sort();
    mig_profiles.dedup();
    let portion: Vec<i128> = mig_profiles
        .iter()
        .map(|m| i128::from(mig_gpu_portion(m).unwrap_or(0)) * SCALE)
        .collect();

    Mig {
        profiles: mig_profiles,
        portion,
    }
}

/// The nodes read from the model, in name order.
pub(super) struct Nodes<'m> {
    /// Nodes in name order.
    pub(super) nodes: Vec<NodeInfo>,
    /// Node name → index.
    pub(super) index: BTreeMap<&'m str, usize>,
    /// Allocatable summed over schedulable nodes (MIG instances as GPU-equivalents), nano.
    pub(super) sum: PerResource<i128>,
}

/// Reads every node's allocatable GPUs, CPU, memory and MIG instances, labels, taints and
/// cordon; every bad field is recorded in `problems`.
///
/// # Complexity
/// O(N · (R + log N)) for N nodes of R allocatable resources each.
pub(super) fn read_nodes<'m>(model: &'m Model, m: &Mig, problems: &mut Diagnostics) -> Nodes<'m> {
    let (mig_profiles, portion) = (&m.profiles, &m.portion);
    // Nodes.
    let mut nodes = Vec::with_capacity(model.nodes.len());
    let mut node_index: BTreeMap<&str, usize> = BTreeMap::new();
    let mut node_sum = PerResource::ZERO;
    for (name, n) in &model.nodes {
        let mut alloc = PerResource::ZERO;
        let mut mig = vec![0i64; mig_profiles.len()];
        for (rn, q) in &n.status.allocatable {
            if let Ok(i) = mig_profiles.binary_search_by(|m| m.as_str().cmp(rn.as_str())) {
                mig[i] = q.value().unwrap_or(0).max(0);
                continue;
            }
            let (idx, extra) = match rn.as_str() {
                GPU_RESOURCE => (Resource::Gpu, 0),
                "cpu" => (Resource::Cpu, 3),
                "memory" => (Resource::Memory, 0),
                _ => continue,
            };
            let field = format!("status.allocatable.{rn}");
            if q.is_negative() {
                problems.push(invalid("Node", name, &field, "negative"));
                continue;
            }
            match from_quantity(q, extra) {
                Some(v) => alloc[idx] = v,
                None => problems.push(too_large("Node", name, &field, "too large")),
            }
        }
        let gpus = usize::try_from(alloc[Resource::Gpu] / SCALE).unwrap_or(0);
        alloc[Resource::Gpu] = (gpus as i128) * SCALE;
        let unschedulable = n.spec.unschedulable.unwrap_or(false);
        if !unschedulable {
            // MIG instances count `g` GPU-equivalents each, as KAI counts capacity.
            let mig_gpus: Option<i128> = mig.iter().zip(portion).try_fold(0i128, |s, (&c, &g)| {
                s.checked_add(i128::from(c).checked_mul(g)?)
            });
            let mut overflow = mig_gpus.is_none();
            for r in Resource::ALL {
                let extra = if r == Resource::Gpu {
                    mig_gpus.unwrap_or(0)
                } else {
                    0
                };
                match node_sum[r]
                    .checked_add(alloc[r])
                    .and_then(|v| v.checked_add(extra))
                {
                    Some(v) => node_sum[r] = v,
                    None => overflow = true,
                }
            }
            if overflow {
                problems.push(too_large(
                    "Node",
                    name,
                    "status.allocatable",
                    "sum overflows",
                ));
            }
        }
        node_index.insert(name.as_str(), nodes.len());
        nodes.push(NodeInfo {
            gpu_memory_mib: gpu_memory_mib(n.metadata.labels.get(GPU_MEMORY_LABEL)),
            name: name.clone(),
            allocatable: alloc,
            gpus,
            mig,
            labels: n.metadata.labels.clone(),
            taints: n.spec.taints.clone(),
            unschedulable,
        });
    }

    Nodes {
        nodes,
        index: node_index,
        sum: node_sum,
    }
}

/// The memory of each GPU of a node (MiB) from its `nvidia.com/gpu.memory` label, as KAI's
/// `getNodeGpuMemory` reads it (`pkg/scheduler/api/node_info/node_info.go`): a whole number;
/// a value of 2²⁰ (a TiB in MiB) or more is taken as bytes and divided by 2²⁰; then floored to
/// a multiple of 100. `None` when the label is absent or not a whole number (KAI: not synced,
/// no `gpu-memory` pod goes there) or when the floored value is under 100 MiB (KAI counts no
/// such node in its smallest per-GPU memory, and a share of it is not defined).
pub(super) fn gpu_memory_mib(label: Option<&String>) -> Option<i64> {
    const TIB_IN_MIB: i64 = 1 << 20;
    let v: i64 = label?.parse().ok()?;
    let mib = if v < TIB_IN_MIB { v } else { v / TIB_IN_MIB };
    let floored = mib - mib % 100;
    (floored >= DEFAULT_GPU_MEMORY_MIB).then_some(floored)
}

#[cfg(test)]
mod tests {
    use super::gpu_memory_mib;

    #[test]
    fn gpu_memory_label_is_read_as_kai_reads_it() {
        let read = |v: &str| gpu_memory_mib(Some(&v.to_owned()));
        // MiB, floored to a multiple of 100.
        assert_eq!(read("81920"), Some(81_900));
        assert_eq!(read("40960"), Some(40_900));
        // 2^20 or more is bytes: 80 GiB in bytes is 81920 MiB.
        assert_eq!(read("85899345920"), Some(81_900));
        // Not a whole number, or under 100 MiB once floored: unknown.
        assert_eq!(read("80Gi"), None);
        assert_eq!(read("99"), None);
        assert_eq!(read("100"), Some(100));
        assert_eq!(gpu_memory_mib(None), None);
    }
}
