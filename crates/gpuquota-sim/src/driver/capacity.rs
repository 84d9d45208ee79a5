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
//! Cordoned nodes (`spec.unschedulable`) hold nothing new.
//!
//! # Nodes that change during the run (the timeline's node events)
//!
//! - [`Capacity::down`]: a failed node. Every workload holding a device on it loses its pods
//!   at that instant; the driver ends their runs (reason [`NODE_FAILURES`]) and releases what
//!   they held on every node. The node takes nothing until [`Capacity::up`]; a workload that
//!   waits counts it, in upstream's message, as a node with an untolerated taint
//!   `{node.kubernetes.io/unreachable: }` (the node lifecycle controller's `NoSchedule`
//!   taint).
//! - [`Capacity::drain`]: cordoned. Its running pods keep their devices; it takes no new
//!   pods; [`Capacity::holders`] at the drain deadline names the workloads to evict.
//! - [`Capacity::up`]: neither failed nor cordoned any more.
//! - [`Capacity::open_window`] / [`Capacity::close_window`]: a MIG maintenance window. While
//!   it is open the node takes no new pods (as a cordon, counted as unschedulable in the
//!   messages); [`Capacity::idle`] says when its devices are all free; closing it sets the
//!   node's new allocatable of every tracked resource and opens it to placements again.
//! - [`Capacity::schedulable_totals`]: per tracked resource, the allocatable of the nodes
//!   that take new pods (neither failed, cordoned nor in a window): the capacity a report
//!   shows before and after a node event.
//!
//! Deliberate limits (pod-by-pod
//! placement is not modelled): a workload's demand per resource is the sum over its pods and
//! may be split across nodes at any boundary; taints, CPU, memory and pod counts are not
//! checked; the nodes are taken greedily, so two overlapping node sets may leave a workload
//! waiting that a different split would have placed, never the reverse (no node ever holds
//! more than its allocatable).

use std::collections::BTreeMap;

use gpuquota_cohort::World;
use gpuquota_cohort::world::{QueueRef, WlId};
use gpuquota_model::{Model, ResourceName};

/// The eviction reason of a workload whose pods ran on a node that failed: Kueue's
/// `WorkloadEvictedDueToNodeFailures` (kubernetes-sigs/kueue `apis/kueue/v1beta2/
/// workload_types.go`, set by `pkg/controller/tas/node_failure_controller.go`), under which
/// Kueue also marks the workload requeued at once (`Requeued` with that reason).
pub(crate) const NODE_FAILURES: &str = "NodeFailures";

/// The eviction reason of a workload whose pods still ran on a drained node at its
/// deadline: the reason the API server's Eviction subresource puts in the pod's
/// `DisruptionTarget` condition (kubernetes/kubernetes `pkg/registry/core/pod/storage/
/// eviction.go`), as `kubectl drain` evicts through it; Kueue has no reason of its own for
/// it (the pods' Job recreates them, and they wait for a node).
pub(crate) const EVICTION_BY_EVICTION_API: &str = "EvictionByEvictionAPI";

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
    /// Cordoned nodes (and nodes in a MIG maintenance window).
    cordoned: u32,
    /// Failed nodes (tainted `node.kubernetes.io/unreachable`).
    down: u32,
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
    /// Node names, sorted (the model's order).
    names: Vec<String>,
    labels: Vec<BTreeMap<String, String>>,
    cordoned: Vec<bool>,
    /// Failed nodes.
    down: Vec<bool>,
    /// Nodes in a MIG maintenance window.
    window: Vec<bool>,
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
    /// Each set's selector (by set id).
    selectors: Vec<Option<Vec<(String, String)>>>,
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
        let n = model.nodes.len();
        Some(Capacity {
            node_count: u32::try_from(n).unwrap_or(u32::MAX),
            names: model.nodes.keys().cloned().collect(),
            labels,
            cordoned,
            down: vec![false; n],
            window: vec![false; n],
            resources,
            slot,
            allocatable,
            used,
            free_total,
            sets: Vec::new(),
            selectors: Vec::new(),
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
        let set = self.node_set(selector.as_ref());
        let id = u32::try_from(self.sets.len()).unwrap_or(u32::MAX);
        self.sets.push(set);
        self.selectors.push(selector.clone());
        self.set_ids.insert(selector, id);
        id
    }

    /// Whether node `i` takes new pods: not failed, not cordoned, not in a MIG window.
    fn open(&self, i: usize) -> bool {
        !self.cordoned[i] && !self.down[i] && !self.window[i]
    }

    /// The nodes a selector matches among those that take new pods, and why the others are
    /// left out.
    fn node_set(&self, selector: Option<&Vec<(String, String)>>) -> NodeSet {
        let mut set = NodeSet {
            nodes: Vec::new(),
            cordoned: 0,
            down: 0,
            mismatched: 0,
        };
        for (i, l) in self.labels.iter().enumerate() {
            let matches = selector.is_some_and(|s| s.iter().all(|(k, v)| l.get(k) == Some(v)));
            if self.down[i] {
                set.down += 1;
            } else if self.cordoned[i] || self.window[i] {
                set.cordoned += 1;
            } else if matches {
                set.nodes.push(u32::try_from(i).unwrap_or(u32::MAX));
            } else {
                set.mismatched += 1;
            }
        }
        set
    }

    /// After a node changed: every set again, and the free devices of the open nodes.
    ///
    /// # Complexity
    /// O(sets × nodes × labels + nodes × resources).
    fn refresh(&mut self) {
        self.sets = self
            .selectors
            .iter()
            .map(|s| self.node_set(s.as_ref()))
            .collect();
        let mut free = vec![0i64; self.resources.len()];
        for i in 0..self.allocatable.len() {
            if self.open(i) {
                for (s, f) in free.iter_mut().enumerate() {
                    *f = f.saturating_add(self.allocatable[i][s] - self.used[i][s]);
                }
            }
        }
        self.free_total = free;
    }

    /// The index of node `name`. O(log nodes).
    fn index_of(&self, name: &str) -> Option<usize> {
        self.names.binary_search_by(|n| n.as_str().cmp(name)).ok()
    }

    /// The index of node `name` (the node of a [`crate::kernel::Kind::Deadline`]).
    pub(crate) fn node_index(&self, name: &str) -> Option<u32> {
        self.index_of(name).and_then(|i| u32::try_from(i).ok())
    }

    /// The name of node `index`.
    pub(crate) fn node_name(&self, index: u32) -> Option<&str> {
        self.names.get(index as usize).map(String::as_str)
    }

    /// Whether node `name` is cordoned (drained).
    pub(crate) fn is_cordoned(&self, name: &str) -> bool {
        self.index_of(name).is_some_and(|i| self.cordoned[i])
    }

    /// Node `name` fails: it takes nothing until [`Capacity::up`]. Returns the workloads
    /// holding a device on it (their pods are lost), in index order; the caller releases
    /// them ([`Capacity::release`]). Empty for an unknown node.
    ///
    /// # Complexity
    /// O(workloads' holdings) plus [`Capacity::refresh`].
    pub(crate) fn down(&mut self, name: &str) -> Vec<u32> {
        let Some(i) = self.index_of(name) else {
            return Vec::new();
        };
        self.down[i] = true;
        let lost = self.holders(name);
        self.refresh();
        lost
    }

    /// Node `name` is cordoned: its pods keep running, it takes no new ones. False for an
    /// unknown node.
    ///
    /// # Complexity
    /// [`Capacity::refresh`].
    pub(crate) fn drain(&mut self, name: &str) -> bool {
        let Some(i) = self.index_of(name) else {
            return false;
        };
        self.cordoned[i] = true;
        self.refresh();
        true
    }

    /// Node `name` is back: neither failed nor cordoned. False for an unknown node.
    ///
    /// # Complexity
    /// [`Capacity::refresh`].
    pub(crate) fn up(&mut self, name: &str) -> bool {
        let Some(i) = self.index_of(name) else {
            return false;
        };
        self.cordoned[i] = false;
        self.down[i] = false;
        self.refresh();
        true
    }

    /// The workloads holding a device on node `name`, in index order.
    ///
    /// # Complexity
    /// O(workloads' holdings).
    pub(crate) fn holders(&self, name: &str) -> Vec<u32> {
        let Some(i) = self.index_of(name) else {
            return Vec::new();
        };
        let node = u32::try_from(i).unwrap_or(u32::MAX);
        self.held
            .iter()
            .enumerate()
            .filter(|(_, h)| h.iter().any(|&(n, _, a)| n == node && a > 0))
            .map(|(w, _)| u32::try_from(w).unwrap_or(u32::MAX))
            .collect()
    }

    /// Whether no device of node `name` is held (false for an unknown node).
    pub(crate) fn idle(&self, name: &str) -> bool {
        self.index_of(name)
            .is_some_and(|i| self.used[i].iter().all(|&u| u == 0))
    }

    /// A MIG maintenance window opens on node `name`: it takes no new pods. False for an
    /// unknown node.
    ///
    /// # Complexity
    /// [`Capacity::refresh`].
    pub(crate) fn open_window(&mut self, name: &str) -> bool {
        let Some(i) = self.index_of(name) else {
            return false;
        };
        self.window[i] = true;
        self.refresh();
        true
    }

    /// The window on node `name` closes with its new allocatable (`resource → amount`; a
    /// tracked resource it does not name is 0, an untracked one is ignored): it takes pods
    /// again. False for an unknown node.
    ///
    /// # Complexity
    /// O(resources × log resources) plus [`Capacity::refresh`].
    pub(crate) fn close_window(&mut self, name: &str, allocatable: &BTreeMap<String, i64>) -> bool {
        let Some(i) = self.index_of(name) else {
            return false;
        };
        self.window[i] = false;
        for (s, r) in self.resources.iter().enumerate() {
            self.allocatable[i][s] = allocatable.get(r.as_str()).copied().unwrap_or(0).max(0);
        }
        self.refresh();
        true
    }

    /// Whether node `name` is in a MIG maintenance window.
    pub(crate) fn in_window(&self, name: &str) -> bool {
        self.index_of(name).is_some_and(|i| self.window[i])
    }

    /// Per tracked resource (sorted by name), the allocatable of the nodes that take new
    /// pods (neither failed, cordoned nor in a MIG window).
    ///
    /// # Complexity
    /// O(nodes × resources).
    pub(crate) fn schedulable_totals(&self) -> Vec<(ResourceName, i64)> {
        self.resources
            .iter()
            .enumerate()
            .map(|(s, r)| {
                let total = (0..self.allocatable.len())
                    .filter(|&i| self.open(i))
                    .map(|i| self.allocatable[i][s])
                    .fold(0i64, i64::saturating_add);
                (r.clone(), total)
            })
            .collect()
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
            if self.open(node as usize) {
                self.free_total[slot as usize] += a;
            }
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
        if set.down > 0 {
            parts.push(format!(
                "{} node(s) had untolerated taint {{{}: }}",
                set.down,
                crate::timeline::UNREACHABLE_TAINT
            ));
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

    /// Node events on flavor `x`'s nodes a (2 devices) and b (1), c cordoned from the start:
    /// a fails holding workload 0's two devices (lost: the caller releases them), a
    /// newcomer waits with upstream's message naming the failed node's taint; draining b
    /// keeps workload 1 running but leaves no schedulable device; a back takes the
    /// newcomer; a MIG window on a waits for its holder, then the node comes back with one
    /// device.
    #[test]
    fn nodes_fail_drain_and_come_back() {
        let (model, world) = world_of(CLUSTER);
        let mut cap = Capacity::new(&model, &world).expect("nodes");
        let gpu = |c: &Capacity| c.schedulable_totals()[0].1;
        let fr = u32::from(world.frs.ids().next().expect("one flavor-resource"));
        let two = cap.kueue_needs(&world, &[(fr, 2)]);
        let one = cap.kueue_needs(&world, &[(fr, 1)]);
        assert_eq!(cap.place(0, &two), Ok(()));
        assert_eq!(cap.place(1, &one), Ok(()));
        assert_eq!(gpu(&cap), 3);
        assert_eq!(cap.down("a"), vec![0]);
        assert_eq!(cap.down("zz"), Vec::<u32>::new());
        cap.release(0);
        assert_eq!(gpu(&cap), 1);
        assert_eq!(
            cap.place(2, &one),
            Err("0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, 1 node(s) were unschedulable.".to_owned())
        );
        cap.wait(2, one.clone(), "m".into());
        assert!(cap.drain("b"));
        assert_eq!(gpu(&cap), 0);
        assert_eq!(cap.holders("b"), vec![1]);
        assert!(!cap.idle("b"));
        cap.release(1);
        assert!(cap.idle("b"));
        assert_eq!(cap.start_waiting(), Vec::<u32>::new());
        assert!(cap.up("a"));
        assert_eq!(gpu(&cap), 2);
        assert_eq!(cap.start_waiting(), vec![2]);
        assert_eq!(cap.holders("a"), vec![2]);
        assert!(cap.up("b"));
        assert!(cap.open_window("a"));
        assert!(cap.in_window("a"));
        assert_eq!(gpu(&cap), 1);
        assert_eq!(
            cap.place(3, &two),
            Err("0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) were unschedulable.".to_owned())
        );
        assert!(!cap.idle("a"));
        cap.release(2);
        assert!(cap.idle("a"));
        let after: BTreeMap<String, i64> = [("nvidia.com/gpu".to_owned(), 1)].into();
        assert!(cap.close_window("a", &after));
        assert!(!cap.in_window("a"));
        assert_eq!(gpu(&cap), 2);
        assert_eq!(cap.place(3, &two), Ok(()));
        assert_eq!(cap.held[3], vec![(0, 0, 1), (1, 0, 1)]);
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
