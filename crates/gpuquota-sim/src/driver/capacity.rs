//! Node capacity of the extended resources (GPUs, MIG instances): what the kube-scheduler
//! still needs after a quota admitted a workload.
//!
//! When the cluster files have Nodes, a workload whose quota is reserved (Kueue's admission,
//! or the API server creating its pods under `resourcequota`) runs only when its devices are
//! free: each extended resource it requests (a name with a domain, such as `nvidia.com/gpu`)
//! is taken from the allocatable of the nodes its pods may use, node by node in name order.
//! A workload that does not fit waits, holding its quota, its pods `Pending` with reason
//! `Unschedulable`, and starts (its runtime with it) when devices free up, the waiting
//! workloads tried in the order they began to wait.
//!
//! Which nodes a workload may use, per resource:
//! - under Kueue, the nodes whose labels include the assigned flavor's `nodeLabels` (the
//!   flavor's capacity is the sum of their allocatable of that resource);
//! - under `resourcequota`, the nodes its pod set's `nodeSelector` selects and, when its
//!   LocalQueue leads to a ClusterQueue with a flavor covering the resource, the first such
//!   flavor's `nodeLabels`: the card type the bill charges the usage to (the same platform,
//!   its jobs pinned to the card type Kueue tries first).
//!
//! Cordoned nodes (`spec.unschedulable`) hold nothing. Deliberate limits (pod-by-pod
//! placement is not modelled): a workload's demand per resource is the sum over its pods and
//! may be split across nodes at any boundary; taints, CPU, memory and pod counts are not
//! checked; the nodes are taken greedily, so two overlapping node sets may leave a workload
//! waiting that a different split would have placed, never the reverse (no node ever holds
//! more than its allocatable).

use std::collections::BTreeMap;

use gpuquota_cohort::World;
use gpuquota_cohort::world::{QueueRef, WlId};
use gpuquota_model::{Model, ResourceName};

/// One demand of a workload: `amount` of tracked resource `slot` on node set `set`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Need {
    set: u32,
    slot: u32,
    amount: i64,
}

/// The schedulable nodes a selector matches, and why the others are left out.
#[derive(Debug, Clone)]
struct NodeSet {
    /// Matching, schedulable nodes, in name order.
    nodes: Vec<u32>,
    /// Cordoned nodes.
    cordoned: u32,
    /// Schedulable nodes whose labels do not match.
    mismatched: u32,
}

/// A workload whose quota is reserved and whose pods wait for devices: its needs and the
/// kube-scheduler's message.
#[derive(Debug, Clone)]
struct Waiter {
    needs: Vec<Need>,
    message: String,
}

/// The devices of every node and who holds them.
#[derive(Debug, Clone)]
pub(crate) struct Capacity {
    /// Node count (cordoned included).
    node_count: u32,
    labels: Vec<BTreeMap<String, String>>,
    cordoned: Vec<bool>,
    /// Tracked resources by slot.
    resources: Vec<ResourceName>,
    /// World resource index → slot.
    slot: Vec<Option<u32>>,
    /// `[node][slot]`.
    allocatable: Vec<Vec<i64>>,
    /// `[node][slot]`.
    used: Vec<Vec<i64>>,
    /// Free devices per slot over every schedulable node.
    free_total: Vec<i64>,
    sets: Vec<NodeSet>,
    set_ids: BTreeMap<Option<Vec<(String, String)>>, u32>,
    /// Per workload, what it holds: (node, slot, amount).
    held: Vec<Vec<(u32, u32, i64)>>,
    /// The waiting workloads, in the order they began to wait.
    queue: Vec<u32>,
    /// Per workload, what it waits with.
    waiters: Vec<Option<Waiter>>,
}

/// An extended resource: a name with a domain (`nvidia.com/gpu`), not a native one.
fn extended(r: &ResourceName) -> bool {
    let s = r.as_str();
    s.contains('/') && !s.starts_with("kubernetes.io/") && !s.starts_with("requests.")
}

impl Capacity {
    /// The cluster's nodes, `None` when the model has none (capacity is not checked).
    ///
    /// # Complexity
    /// O(nodes × resources).
    pub(crate) fn new(model: &Model, world: &World) -> Option<Capacity> {
        if model.nodes.is_empty() {
            return None;
        }
        let mut resources: Vec<ResourceName> = world
            .resources
            .iter()
            .filter(|r| extended(r))
            .cloned()
            .collect();
        for n in model.nodes.values() {
            for r in n.status.allocatable.keys() {
                if extended(r) && !resources.contains(r) {
                    resources.push(r.clone());
                }
            }
        }
        resources.sort();
        let slot = world
            .resources
            .iter()
            .map(|r| {
                resources
                    .binary_search(r)
                    .ok()
                    .and_then(|i| u32::try_from(i).ok())
            })
            .collect();
        let mut labels = Vec::with_capacity(model.nodes.len());
        let mut cordoned = Vec::with_capacity(model.nodes.len());
        let mut allocatable = Vec::with_capacity(model.nodes.len());
        for n in model.nodes.values() {
            labels.push(n.metadata.labels.clone());
            cordoned.push(n.spec.unschedulable == Some(true));
            allocatable.push(
                resources
                    .iter()
                    .map(|r| {
                        n.status
                            .allocatable
                            .get(r)
                            .map_or(0, |q| q.to_amount(r).0.max(0))
                    })
                    .collect::<Vec<i64>>(),
            );
        }
        let mut free_total = vec![0i64; resources.len()];
        for (a, c) in allocatable.iter().zip(&cordoned) {
            if !c {
                for (f, v) in free_total.iter_mut().zip(a) {
                    *f = f.saturating_add(*v);
                }
            }
        }
        let used = vec![vec![0i64; resources.len()]; allocatable.len()];
        Some(Capacity {
            node_count: u32::try_from(model.nodes.len()).unwrap_or(u32::MAX),
            labels,
            cordoned,
            resources,
            slot,
            allocatable,
            used,
            free_total,
            sets: Vec::new(),
            set_ids: BTreeMap::new(),
            held: vec![Vec::new(); world.workloads.len()],
            queue: Vec::new(),
            waiters: vec![None; world.workloads.len()],
        })
    }

    /// The number of Nodes.
    pub(crate) fn node_count(&self) -> u32 {
        self.node_count
    }

    /// The node set of a selector (`None`: two selectors disagree on a label, no node).
    fn set_for(&mut self, selector: Option<Vec<(String, String)>>) -> u32 {
        if let Some(&id) = self.set_ids.get(&selector) {
            return id;
        }
        let mut set = NodeSet {
            nodes: Vec::new(),
            cordoned: 0,
            mismatched: 0,
        };
        for (i, (l, c)) in self.labels.iter().zip(&self.cordoned).enumerate() {
            let matches = selector
                .as_ref()
                .is_some_and(|s| s.iter().all(|(k, v)| l.get(k) == Some(v)));
            if *c {
                set.cordoned += 1;
            } else if matches {
                set.nodes.push(u32::try_from(i).unwrap_or(u32::MAX));
            } else {
                set.mismatched += 1;
            }
        }
        let id = u32::try_from(self.sets.len()).unwrap_or(u32::MAX);
        self.sets.push(set);
        self.set_ids.insert(selector, id);
        id
    }

    /// Merges label requirements; `None` when two of them disagree.
    fn merge<'l>(
        parts: impl IntoIterator<Item = &'l BTreeMap<String, String>>,
    ) -> Option<Vec<(String, String)>> {
        let mut m: BTreeMap<&str, &str> = BTreeMap::new();
        for p in parts {
            for (k, v) in p {
                match m.get(k.as_str()) {
                    Some(old) if *old != v.as_str() => return None,
                    _ => {
                        m.insert(k, v);
                    }
                }
            }
        }
        Some(
            m.into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
        )
    }

    /// Sorts and merges needs of the same set and resource.
    fn normalise(mut needs: Vec<Need>) -> Vec<Need> {
        needs.sort_unstable();
        let mut out: Vec<Need> = Vec::with_capacity(needs.len());
        for n in needs {
            match out.last_mut() {
                Some(l) if l.set == n.set && l.slot == n.slot => {
                    l.amount = l.amount.saturating_add(n.amount);
                }
                _ => out.push(n),
            }
        }
        out
    }

    /// Under Kueue: a reservation's usage `(flavor-resource, amount)` on the nodes of each
    /// flavor.
    pub(crate) fn kueue_needs(&mut self, world: &World, usage: &[(u32, i64)]) -> Vec<Need> {
        let mut needs = Vec::new();
        for &(fr, amount) in usage {
            let Some(&(f, r)) = world.frs.get(gpuquota_cohort::tree::FrId::new(fr as usize)) else {
                continue;
            };
            let Some(slot) = self.slot.get(r.index()).copied().flatten() else {
                continue;
            };
            if amount <= 0 {
                continue;
            }
            let sel = Self::merge([&world.flavors[f].node_labels]);
            let set = self.set_for(sel);
            needs.push(Need { set, slot, amount });
        }
        Self::normalise(needs)
    }

    /// Under `resourcequota`: each pod set's requests on the nodes its `nodeSelector` and
    /// the flavor its usage is charged to select: the first flavor of its ClusterQueue
    /// covering the resource whose `nodeLabels` agree with the `nodeSelector`, else the
    /// first (as `bill::unflavored_flavor` picks it for the bill and the budgets).
    pub(crate) fn pod_needs(&mut self, world: &World, wl: usize) -> Vec<Need> {
        let w = &world.workloads[WlId::new(wl)];
        let cq = match &w.queue {
            QueueRef::Cq(c) => Some(&world.cluster_queues[*c]),
            _ => None,
        };
        let mut needs = Vec::new();
        for ps in &w.pod_sets {
            for &(r, a) in &ps.per_pod {
                let Some(slot) = self.slot.get(r.index()).copied().flatten() else {
                    continue;
                };
                let amount = a.saturating_mul(i64::from(ps.count));
                if amount <= 0 {
                    continue;
                }
                // the flavor the bill and the budgets charge (`bill::unflavored_flavor`): the
                // first of the queue's flavors whose labels agree with the nodeSelector, else
                // its first
                let flavors = cq
                    .and_then(|c| c.group_of(r).map(|g| &c.groups[g]))
                    .map(|g| g.flavors.as_slice())
                    .unwrap_or_default();
                let agrees = |f: &&_| {
                    let labels: &std::collections::BTreeMap<String, String> =
                        &world.flavors[**f].node_labels;
                    labels
                        .iter()
                        .all(|(k, v)| ps.node_selector.get(k).is_none_or(|x| x == v))
                };
                let flavor = flavors
                    .iter()
                    .find(agrees)
                    .or(flavors.first())
                    .map(|&f| &world.flavors[f].node_labels);
                let sel = Self::merge(flavor.into_iter().chain([&ps.node_selector]));
                let set = self.set_for(sel);
                needs.push(Need { set, slot, amount });
            }
        }
        Self::normalise(needs)
    }

    /// Places workload `wl`'s needs, or leaves everything as it was and returns the
    /// kube-scheduler's message for the first need that does not fit.
    pub(crate) fn place(&mut self, wl: u32, needs: &[Need]) -> Result<(), String> {
        let mut taken: Vec<(u32, u32, i64)> = Vec::new();
        for n in needs {
            let mut left = n.amount;
            let s = n.slot as usize;
            for &node in &self.sets[n.set as usize].nodes {
                if left == 0 {
                    break;
                }
                let i = node as usize;
                let free = self.allocatable[i][s] - self.used[i][s];
                let take = free.min(left);
                if take > 0 {
                    self.used[i][s] += take;
                    self.free_total[s] -= take;
                    taken.push((node, n.slot, take));
                    left -= take;
                }
            }
            if left > 0 {
                for (node, slot, a) in taken {
                    self.used[node as usize][slot as usize] -= a;
                    self.free_total[slot as usize] += a;
                }
                return Err(self.message(n));
            }
        }
        self.grow(wl);
        self.held[wl as usize].extend(taken);
        Ok(())
    }

    /// Room for workload `wl` in the per-workload tables.
    fn grow(&mut self, wl: u32) {
        let n = wl as usize + 1;
        if self.held.len() < n {
            self.held.resize(n, Vec::new());
        }
        if self.waiters.len() < n {
            self.waiters.resize(n, None);
        }
    }

    /// Frees what workload `wl` holds.
    pub(crate) fn release(&mut self, wl: u32) {
        let held = self.held.get_mut(wl as usize).map(std::mem::take);
        for (node, slot, a) in held.unwrap_or_default() {
            self.used[node as usize][slot as usize] -= a;
            self.free_total[slot as usize] += a;
        }
    }

    /// Upstream's `FitError` message for a need no node set can hold: per node the first
    /// filter that rejects it (NodeUnschedulable, NodeAffinity, NodeResourcesFit), counted,
    /// sorted as upstream sorts them.
    fn message(&self, n: &Need) -> String {
        let set = &self.sets[n.set as usize];
        let mut parts: Vec<String> = Vec::new();
        if !set.nodes.is_empty() {
            parts.push(format!(
                "{} Insufficient {}",
                set.nodes.len(),
                self.resources[n.slot as usize]
            ));
        }
        if set.mismatched > 0 {
            parts.push(format!(
                "{} node(s) didn't match Pod's node affinity/selector",
                set.mismatched
            ));
        }
        if set.cordoned > 0 {
            parts.push(format!("{} node(s) were unschedulable", set.cordoned));
        }
        parts.sort();
        format!(
            "0/{} nodes are available: {}.",
            self.node_count,
            parts.join(", ")
        )
    }

    /// Workload `wl` waits with its needs; `message` says why.
    pub(crate) fn wait(&mut self, wl: u32, needs: Vec<Need>, message: String) {
        self.grow(wl);
        self.waiters[wl as usize] = Some(Waiter { needs, message });
        self.queue.push(wl);
    }

    /// Takes workload `wl` out of the waiting ones; whether it was waiting.
    ///
    /// # Complexity
    /// O(waiting) when it waited, O(1) otherwise.
    pub(crate) fn unwait(&mut self, wl: u32) -> bool {
        if self
            .waiters
            .get_mut(wl as usize)
            .and_then(Option::take)
            .is_none()
        {
            return false;
        }
        self.queue.retain(|&w| w != wl);
        true
    }

    /// The message of a waiting workload.
    pub(crate) fn waiting(&self, wl: u32) -> Option<&str> {
        self.waiters
            .get(wl as usize)
            .and_then(Option::as_ref)
            .map(|w| w.message.as_str())
    }

    /// Places the waiting workloads that fit now, in the order they began to wait, and
    /// returns them in that order.
    ///
    /// # Complexity
    /// O(waiting × needs) plus the nodes scanned by each placement; nothing when no device
    /// is free.
    pub(crate) fn start_waiting(&mut self) -> Vec<u32> {
        let mut started = Vec::new();
        if self.queue.is_empty() || self.free_total.iter().all(|&f| f <= 0) {
            return started;
        }
        let queue = std::mem::take(&mut self.queue);
        let mut kept = Vec::with_capacity(queue.len());
        for wl in queue {
            let Some(w) = self.waiters[wl as usize].take() else {
                continue;
            };
            let fits_total = self.free_total.iter().any(|&f| f > 0)
                && w.needs
                    .iter()
                    .all(|n| n.amount <= self.free_total[n.slot as usize]);
            if fits_total && self.place(wl, &w.needs).is_ok() {
                started.push(wl);
            } else {
                self.waiters[wl as usize] = Some(w);
                kept.push(wl);
            }
        }
        self.queue = kept;
        started
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn world_of(text: &str) -> (Model, World) {
        let model = gpuquota_model::import::import_str("c.yaml", text)
            .expect("valid")
            .model;
        let input =
            gpuquota_cohort::Input::from_model(&model, &gpuquota_cohort::Options::default())
                .expect("builds");
        (model, input.world().clone())
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

    /// Three devices on the two schedulable nodes of flavor `x` (the cordoned one holds
    /// nothing): 2 + 1 fit, a fourth waits with upstream's message, and fits once a holder
    /// releases.
    #[test]
    fn places_across_a_flavors_nodes() {
        let (model, world) = world_of(CLUSTER);
        let mut cap = Capacity::new(&model, &world).expect("nodes");
        assert_eq!(cap.node_count(), 3);
        let fr = u32::from(world.frs.ids().next().expect("one flavor-resource"));
        let two = cap.kueue_needs(&world, &[(fr, 2)]);
        let one = cap.kueue_needs(&world, &[(fr, 1)]);
        assert_eq!(cap.place(0, &two), Ok(()));
        assert_eq!(cap.place(1, &one), Ok(()));
        assert_eq!(
            cap.place(2, &one),
            Err("0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient nvidia.com/gpu.".to_owned())
        );
        cap.wait(2, one.clone(), "m".into());
        assert!(cap.unwait(2));
        assert!(!cap.unwait(2));
        cap.wait(2, one.clone(), "m".into());
        assert_eq!(cap.waiting(2), Some("m"));
        assert_eq!(cap.start_waiting(), Vec::<u32>::new());
        cap.release(1);
        assert_eq!(cap.start_waiting(), vec![2]);
        assert_eq!(cap.waiting(2), None);
        // a three-device need splits over a (2) and b (1) once both are free
        cap.release(0);
        cap.release(2);
        let three = cap.kueue_needs(&world, &[(fr, 3)]);
        assert_eq!(cap.place(3, &three), Ok(()));
        assert_eq!(cap.held[3], vec![(0, 0, 2), (1, 0, 1)]);
    }

    /// Without Nodes nothing is checked.
    #[test]
    fn no_nodes_no_capacity() {
        let (model, world) = world_of(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: x}\n",
        );
        assert!(Capacity::new(&model, &world).is_none());
    }
}
