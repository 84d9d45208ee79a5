//! Run:ai concepts mapped onto KAI (NVIDIA's Run:ai documentation, Projects and Departments):
//! departments and projects, rank, over-quota weight that follows quota, department quota against
//! its projects, node pools.

use gpuquota_model::Model;

use crate::division::{Hierarchy, Resource};
use crate::fixed::SCALE;

/// The label selecting a KAI scheduling shard (node pool).
pub const NODE_POOL_LABEL: &str = "kai.scheduler/node-pool";
/// Run:ai's node-pool label.
pub const RUNAI_NODE_POOL_LABEL: &str = "runai/node-pool";

/// Run:ai's over-quota weight levels when the tenant setting "Over quota weight" is enabled
/// ("Lowest" = 0, the default "Medium" = 2). Other level values are configuration.
pub const MEDIUM_WEIGHT: i128 = 2 * SCALE;

/// Run:ai rank names (newer "rank", and the older over-quota priority names) → KAI queue
/// priority. KAI only compares priorities, so only the order matters: the API default
/// `MediumLow` maps to KAI's default priority 100 and each step is 10. The legacy names map
/// to `none` 0, `low` 1, `medium` 2, `high` 3 as the older docs number them.
///
/// Returns `None` for an unknown name.
pub fn rank_priority(name: &str) -> Option<i32> {
    let n: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    Some(match n.as_str() {
        "verylow" => 80,
        "low" => 90,
        "mediumlow" => 100,
        "medium" => 110,
        "mediumhigh" => 120,
        "high" => 130,
        "veryhigh" => 140,
        "legacynone" => 0,
        "legacylow" => 1,
        "legacymedium" => 2,
        "legacyhigh" => 3,
        _ => return None,
    })
}

/// Applies Run:ai's weight rule: a department's (top-level queue's) over-quota weight is always
/// its deserved quota; with `over_quota_weight_enabled = false` (Run:ai's default) every
/// project's weight is its deserved quota too. Unlimited deserved keeps the written weight.
///
/// # Complexity
/// O(Q).
pub fn weight_follows_quota(h: &mut Hierarchy, over_quota_weight_enabled: bool) {
    for q in h.ids() {
        let top = h.queue(q).parent.is_none();
        if !top && over_quota_weight_enabled {
            continue;
        }
        for r in Resource::ALL {
            if let Some(d) = h.queue(q).resources[r.index()].deserved {
                // Cannot fail: deserved is validated non-negative.
                let _ = h.set_weight(q, r, d);
            }
        }
    }
}

/// A department whose projects' deserved quotas add up to more than its own (Run:ai's
/// "Limit projects from exceeding department quota" would refuse it; KAI only warns, and
/// non-preemptible work is still held to the department's quota at every level).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overcommit {
    /// The department (parent queue).
    pub department: String,
    /// The resource.
    pub resource: Resource,
    /// The department's deserved quota, nano-units.
    pub department_quota: i128,
    /// The sum of its children's deserved quotas, nano-units (`None`: some child unlimited).
    pub projects_quota: Option<i128>,
}

/// Every department whose children's deserved quotas exceed its own.
///
/// # Complexity
/// O(Q).
pub fn department_overcommit(h: &Hierarchy) -> Vec<Overcommit> {
    let mut out = Vec::new();
    for q in h.ids() {
        if h.is_leaf(q) {
            continue;
        }
        for r in Resource::ALL {
            let Some(dq) = h.queue(q).resources[r.index()].deserved else {
                continue;
            };
            let mut sum = Some(0i128);
            for &c in h.children(q) {
                sum = match (sum, h.queue(c).resources[r.index()].deserved) {
                    (Some(s), Some(d)) => s.checked_add(d),
                    _ => None,
                };
            }
            if sum.is_none_or(|s| s > dq) {
                out.push(Overcommit {
                    department: h.queue(q).name.clone(),
                    resource: r,
                    department_quota: dq,
                    projects_quota: sum,
                });
            }
        }
    }
    out
}

/// The node pool a pod belongs to: its `kai.scheduler/node-pool` (or `runai/node-pool`)
/// label, else the same key in its node selector.
fn pod_pool(pod: &gpuquota_model::core::Pod) -> Option<&str> {
    for k in [NODE_POOL_LABEL, RUNAI_NODE_POOL_LABEL] {
        if let Some(v) = pod.metadata.labels.get(k) {
            return Some(v);
        }
        if let Some(v) = pod.spec.node_selector.get(k) {
            return Some(v);
        }
    }
    None
}

/// The view one scheduling shard (node pool) sees: the pool's nodes, the pods and PodGroups
/// of that pool, and every queue (KAI applies the same Queue objects in every shard, so each
/// pool runs its own division over them).
///
/// A pod belongs to the pool named by its label or node selector, or, without one, to the
/// pool of the node it runs on; PodGroups follow their pods.
///
/// # Complexity
/// O(N + P + G).
pub fn node_pool_view(model: &Model, pool: &str) -> Model {
    let node_pool = |n: &gpuquota_model::core::Node| {
        [NODE_POOL_LABEL, RUNAI_NODE_POOL_LABEL]
            .iter()
            .find_map(|k| n.metadata.labels.get(*k).map(String::as_str))
            .map(str::to_string)
    };
    let mut out = model.clone();
    out.nodes
        .retain(|_, n| node_pool(n).as_deref() == Some(pool));
    out.pods.retain(|_, p| match pod_pool(p) {
        Some(pp) => pp == pool,
        None => p
            .spec
            .node_name
            .as_deref()
            .and_then(|n| model.nodes.get(n))
            .is_some_and(|n| node_pool(n).as_deref() == Some(pool)),
    });
    let groups: std::collections::BTreeSet<String> = out
        .pods
        .values()
        .filter_map(|p| {
            let ns = p.metadata.namespace.as_deref().unwrap_or("default");
            p.metadata
                .annotations
                .get(gpuquota_model::kai::POD_GROUP_ANNOTATION)
                .map(|g| format!("{ns}/{g}"))
        })
        .collect();
    out.pod_groups.retain(|k, _| groups.contains(k));
    out
}

/// The node pools named by the nodes' labels, sorted.
pub fn node_pools(model: &Model) -> Vec<String> {
    let mut v: Vec<String> = model
        .nodes
        .values()
        .filter_map(|n| {
            [NODE_POOL_LABEL, RUNAI_NODE_POOL_LABEL]
                .iter()
                .find_map(|k| n.metadata.labels.get(*k).cloned())
        })
        .collect();
    v.sort();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_are_ordered() {
        let names = [
            "very-low",
            "low",
            "MediumLow",
            "medium",
            "medium-high",
            "high",
            "very_high",
        ];
        let p: Vec<i32> = names.iter().map(|n| rank_priority(n).unwrap()).collect();
        assert!(p.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(rank_priority("MediumLow"), Some(100));
        assert_eq!(rank_priority("nope"), None);
    }
}
