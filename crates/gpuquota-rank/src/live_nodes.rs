//! Nodes of a [`LiveCluster`] leaving and rejoining the schedulable set between sessions:
//! a cordoned (drained) or failed node, as the next session's snapshot sees it.
//!
//! KAI builds each session's snapshot from the nodes the cache holds
//! (NVIDIA/KAI-Scheduler: pkg/scheduler/cache/cluster_info/cluster_info.go): a node marked
//! unschedulable takes no new pods, and its allocatable leaves the amount divided at the
//! top level, as [`crate::Input::from_model`] reads a node with `spec.unschedulable`. The
//! pods already on it are not touched here: a driver that models a failed node takes its
//! jobs out ([`LiveCluster::finish`]) and resubmits them, as their controllers recreate the
//! pods.

use super::LiveCluster;
use crate::ids::PerResource;
use crate::session::SessionError;
use crate::snapshot::{NodeInfo, TaskStatus, mig_gpu_portion};

/// What a node adds to the divided total while schedulable: its allocatable, its MIG
/// instances as GPU-equivalents.
fn contribution(node: &NodeInfo, profiles: &[String]) -> Option<PerResource<i128>> {
    let mut out = node.allocatable;
    for (p, &c) in profiles.iter().zip(&node.mig) {
        let g = i128::from(mig_gpu_portion(p).unwrap_or(0)).checked_mul(crate::fixed::SCALE)?;
        let add = i128::from(c).checked_mul(g)?;
        out = out.checked_add(&PerResource::new(add, 0, 0))?;
    }
    Some(out)
}

impl LiveCluster {
    /// Cordons (`schedulable` false) or uncordons a node by name before the next session:
    /// a cordoned node takes no new pods and its allocatable (MIG instances as
    /// GPU-equivalents) leaves [`crate::snapshot::Cluster::totals`]; uncordoned, it comes
    /// back. Returns whether the node exists; a node already in that state is left as it is.
    ///
    /// # Errors
    /// [`SessionError::Overflow`] when the total with the node back leaves `i128`; nothing
    /// is changed then.
    ///
    /// # Complexity
    /// O(MIG profiles), plus the next session builds its open state afresh.
    pub fn set_schedulable(&mut self, name: &str, schedulable: bool) -> Result<bool, SessionError> {
        let Some(&i) = self.node_index.get(name) else {
            return Ok(false);
        };
        let node = &self.cluster.nodes[i];
        if node.unschedulable != schedulable {
            return Ok(true);
        }
        let c = contribution(node, &self.cluster.mig_profiles).ok_or(SessionError::Overflow)?;
        let totals = if schedulable {
            self.cluster.totals.checked_add(&c)
        } else {
            self.cluster.totals.checked_sub(&c)
        }
        .ok_or(SessionError::Overflow)?;
        self.cluster.totals = totals;
        self.cluster.nodes[i].unschedulable = !schedulable;
        self.kept = None;
        Ok(true)
    }

    /// The submitted jobs with a running pod on node `name`, in key order (empty for an
    /// unknown node).
    ///
    /// # Complexity
    /// O(T) for T pods of submitted jobs.
    pub fn jobs_on(&self, name: &str) -> Vec<String> {
        let Some(&i) = self.node_index.get(name) else {
            return Vec::new();
        };
        self.cluster
            .jobs
            .iter()
            .filter(|j| {
                j.tasks.iter().any(|t| {
                    t.status == TaskStatus::Running && t.node.is_some_and(|n| n.index() == i)
                })
            })
            .map(|j| j.key.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Input, Options, Resource, SessionOptions};

    const YAML: &str = r#"
apiVersion: v1
kind: Node
metadata: {name: a}
status: {allocatable: {nvidia.com/gpu: "4", cpu: "8", memory: 64Gi}}
---
apiVersion: v1
kind: Node
metadata: {name: b}
status: {allocatable: {nvidia.com/gpu: "2", cpu: "8", memory: 64Gi}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: q}
spec: {resources: {gpu: {quota: 6, overQuotaWeight: 1, limit: -1}}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns, labels: {kai.scheduler/queue: q}}
spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: "4"}}}]}
status: {phase: Pending}
"#;

    fn live() -> LiveCluster {
        let model = gpuquota_model::import_str("c.yaml", YAML)
            .expect("valid")
            .model;
        LiveCluster::new(Input::from_model(&model, &Options::default()).expect("builds"))
    }

    /// Node a (4 GPUs) cordoned: the total falls from 6 to 2 GPUs, the 4-GPU pod finds no
    /// node; uncordoned, the total is 6 again and the pod runs on a.
    #[test]
    fn a_cordoned_node_takes_no_pods_and_leaves_the_total() {
        let mut live = live();
        let gpu = |l: &LiveCluster| l.cluster().totals[Resource::Gpu] / crate::fixed::SCALE;
        assert_eq!(gpu(&live), 6);
        assert_eq!(live.set_schedulable("a", false), Ok(true));
        assert_eq!(live.set_schedulable("a", false), Ok(true), "idempotent");
        assert_eq!(gpu(&live), 2);
        assert_eq!(live.set_schedulable("nope", false), Ok(false));
        assert!(live.submit("ns/p"));
        let r = live.session(&SessionOptions::default()).expect("session");
        assert!(r.allocated.is_empty());
        assert_eq!(live.set_schedulable("a", true), Ok(true));
        assert_eq!(gpu(&live), 6);
        let r = live.session(&SessionOptions::default()).expect("session");
        assert_eq!(r.allocated[0].pods[0].1.as_deref(), Some("a"));
        assert_eq!(live.jobs_on("a"), vec!["ns/p".to_owned()]);
        assert!(live.jobs_on("b").is_empty());
    }
}
