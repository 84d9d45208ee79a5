//! Pods on nodes: what the kube-scheduler still needs after a quota admitted a workload.
//!
//! When the cluster files have Nodes, a workload whose quota is reserved (Kueue's admission,
//! or the API server creating its pods under `resourcequota`) has its pods placed one by
//! one by a model of the kube-scheduler's default profile ([`super::placement`]: filters
//! NodeUnschedulable, TaintToleration, NodeAffinity, NodeResourcesFit; score LeastAllocated,
//! BalancedAllocation and TaintToleration; among equal scores the node with the most room
//! before the score's rounding, then the first by name). The pods of a
//! workload are placed in pod-set order, pod index order; workloads in the order they reached
//! the scheduler (the order in which the driver hands them over: admissions of one instant
//! in admission order, then the waiting workloads in the order they began to wait).
//!
//! A pod that fits no node stays `Pending` with reason `Unschedulable` and upstream's
//! message (`0/N nodes are available: ...`, the first unplaced pod's); the pods already
//! placed keep running and hold their node's resources (as the kube-scheduler binds each
//! pod on its own). The workload runs — is ready, its runtime starting — once all its pods
//! are placed ([`Capacity::placed`]); until then it holds its quota. Its pods still pending
//! are tried again, in the order the workloads began to wait, whenever a node's resources
//! were released or a node came back.
//!
//! Which nodes a pod may use:
//! - under Kueue, its pod set's `nodeSelector` with the `nodeLabels` of the flavors assigned
//!   to the pod set's resources merged in, its tolerations with the flavors' `tolerations`
//!   added (what Kueue injects into the pod template), its required node affinity;
//! - under `resourcequota`, its pod set's `nodeSelector` and, when its LocalQueue leads to a
//!   ClusterQueue with a flavor covering a requested extended resource, the first such
//!   flavor's `nodeLabels` (the card type the bill charges the usage to), its tolerations and
//!   required node affinity.
//!
//! Under Kueue the pod sets' flavors and counts (after partial admission) are read from the
//! reservation's usage: per pod set, per requested resource, the first flavor-resource of
//! the usage with room for the whole pod set, else the first with any room (its count
//! lowered to what the room holds).
//!
//! Without Nodes nothing is placed: capacity is the quota, and the reports say so.
//!
//! # Nodes that change during the run (the timeline's node events)
//!
//! - [`Capacity::down`]: a failed node. Every running workload with a pod on it loses its
//!   pods at that instant; the driver ends their runs (reason [`NODE_FAILURES`]) and releases
//!   what they held on every node. A waiting workload's pods on it go back to pending. The
//!   node takes nothing until [`Capacity::up`]; a pending pod's message counts it as a node
//!   with an untolerated taint `{node.kubernetes.io/unreachable: }` (the node lifecycle
//!   controller's `NoSchedule` taint).
//! - [`Capacity::drain`]: cordoned. Its running pods stay; it takes no new pods;
//!   [`Capacity::holders`] at the drain deadline names the workloads to evict.
//! - [`Capacity::up`]: neither failed nor cordoned any more.
//! - [`Capacity::open_window`] / [`Capacity::close_window`]: a MIG maintenance window. While
//!   it is open the node takes no new pods (as a cordon, counted as unschedulable in the
//!   messages; a waiting workload's pods on it go back to pending); [`Capacity::idle`] says
//!   when no pod on it holds a device; closing it sets the node's new allocatable of every
//!   extended resource and opens it to placements again.
//! - [`Capacity::schedulable_totals`]: per extended resource, the allocatable of the nodes
//!   that take new pods (neither failed, cordoned nor in a window): the capacity a report
//!   shows before and after a node event.
//!
//! # Complexity
//! Placing a workload: O(pods × (buckets × resources + sets per node × log buckets)) (see
//! [`super::placement`]); a pod that fits nowhere adds O(nodes × resources) once for its
//! message. Retrying the waiting workloads: nothing unless resources were freed since the
//! last try; then per waiting workload O(pending pod groups × resources) to see whether the
//! free devices could hold it, and a placement when they could.

use std::collections::BTreeMap;

use gpuquota_cohort::World;
use gpuquota_cohort::world::{FlavorId, PodSetInfo, QueueRef, WlId};
use gpuquota_model::{Model, ResourceName};

use super::placement::{DEFAULT_MEMORY, DEFAULT_MILLI_CPU, Filter, NodeInit, Nodes, Pod, SlotKind};

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

/// `count` identical pods of a workload: shape `pod` on node set `set`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Need {
    set: u32,
    pod: u32,
    count: u32,
}

/// A workload whose quota is reserved and some of whose pods wait for a node: those pods
/// and the kube-scheduler's message.
#[derive(Debug, Clone)]
struct Waiter {
    needs: Vec<Need>,
    message: String,
}

/// A pod placed: `(node, set, pod shape)`.
type Bound = (u32, u32, u32);

/// The nodes, the pods on them and the workloads waiting for a node.
#[derive(Debug, Clone)]
pub(crate) struct Capacity {
    nodes: Nodes,
    /// World resource index → slot.
    slot: Vec<Option<u32>>,
    /// Pod shapes (interned).
    pods: Vec<Pod>,
    pod_ids: BTreeMap<Vec<i64>, u32>,
    /// Per workload, its placed pods.
    held: Vec<Vec<Bound>>,
    /// Per workload, the pods the last [`Capacity::place`] left pending.
    rest: Vec<Option<Vec<Need>>>,
    /// The waiting workloads, in the order they began to wait.
    queue: Vec<u32>,
    /// Per workload, what it waits with.
    waiters: Vec<Option<Waiter>>,
    /// Resources were freed (or a node came back) since the waiting ones were last tried.
    dirty: bool,
}

impl Capacity {
    /// The cluster's nodes, `None` when the model has none (capacity is not checked).
    ///
    /// # Complexity
    /// O(nodes × resources × log nodes).
    pub(crate) fn new(model: &Model, world: &World) -> Option<Capacity> {
        if model.nodes.is_empty() {
            return None;
        }
        let mut resources: Vec<ResourceName> = [
            ResourceName::new("cpu"),
            ResourceName::new("memory"),
            ResourceName::new("pods"),
        ]
        .into_iter()
        .chain(
            world
                .resources
                .iter()
                .filter(|r| SlotKind::of(r).is_some())
                .cloned(),
        )
        .collect();
        for n in model.nodes.values() {
            for r in n.status.allocatable.keys() {
                if SlotKind::of(r).is_some() {
                    resources.push(r.clone());
                }
            }
        }
        resources.sort();
        resources.dedup();
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
        let nodes = model
            .nodes
            .iter()
            .map(|(name, n)| {
                let alloc = resources
                    .iter()
                    .map(|r| n.status.allocatable.get(r).map(|q| q.to_amount(r).0.max(0)))
                    .collect();
                NodeInit {
                    name: name.clone(),
                    labels: n.metadata.labels.clone(),
                    taints: n.spec.taints.clone(),
                    cordoned: n.spec.unschedulable == Some(true),
                    alloc,
                }
            })
            .collect();
        let kinded = resources
            .into_iter()
            .filter_map(|r| SlotKind::of(&r).map(|k| (r, k)))
            .collect();
        Some(Capacity {
            nodes: Nodes::new(kinded, nodes),
            slot,
            pods: Vec::new(),
            pod_ids: BTreeMap::new(),
            held: vec![Vec::new(); world.workloads.len()],
            rest: vec![None; world.workloads.len()],
            queue: Vec::new(),
            waiters: vec![None; world.workloads.len()],
            dirty: true,
        })
    }

    /// The number of Nodes.
    pub(crate) fn node_count(&self) -> u32 {
        u32::try_from(self.nodes.len()).unwrap_or(u32::MAX)
    }

    /// The index of node `name` (the node of a [`crate::kernel::Kind::Deadline`]).
    pub(crate) fn node_index(&self, name: &str) -> Option<u32> {
        self.nodes
            .index_of(name)
            .and_then(|i| u32::try_from(i).ok())
    }

    /// The name of node `index`.
    pub(crate) fn node_name(&self, index: u32) -> Option<&str> {
        ((index as usize) < self.nodes.len()).then(|| self.nodes.name(index as usize))
    }

    /// Whether node `name` is cordoned (drained).
    pub(crate) fn is_cordoned(&self, name: &str) -> bool {
        self.nodes
            .index_of(name)
            .is_some_and(|i| self.nodes.cordoned(i))
    }

    /// The waiting workloads' pods on node `i` go back to pending.
    ///
    /// # Complexity
    /// O(waiting workloads' placed pods).
    fn unbind_waiting(&mut self, i: usize) {
        let node = u32::try_from(i).unwrap_or(u32::MAX);
        for q in 0..self.queue.len() {
            let wl = self.queue[q] as usize;
            let held = std::mem::take(&mut self.held[wl]);
            let (off, kept): (Vec<Bound>, Vec<Bound>) = held.into_iter().partition(|b| b.0 == node);
            self.held[wl] = kept;
            for (n, set, pod) in off {
                self.nodes.bind(n as usize, &self.pods[pod as usize], -1);
                if let Some(w) = self.waiters[wl].as_mut() {
                    match w.needs.iter_mut().find(|x| x.set == set && x.pod == pod) {
                        Some(x) => x.count += 1,
                        None => w.needs.push(Need { set, pod, count: 1 }),
                    }
                }
            }
        }
    }

    /// Node `name` fails: it takes nothing until [`Capacity::up`]. Returns the running
    /// workloads with a pod on it (their pods are lost), in index order; the caller releases
    /// them ([`Capacity::release`]). Waiting workloads' pods on it go back to pending. Empty
    /// for an unknown node.
    ///
    /// # Complexity
    /// O(placed pods) plus the node's re-indexing.
    pub(crate) fn down(&mut self, name: &str) -> Vec<u32> {
        let Some(i) = self.nodes.index_of(name) else {
            return Vec::new();
        };
        self.nodes.set_down(i, true);
        self.unbind_waiting(i);
        self.holders(name)
    }

    /// Node `name` is cordoned: its pods keep running, it takes no new ones. False for an
    /// unknown node.
    pub(crate) fn drain(&mut self, name: &str) -> bool {
        let Some(i) = self.nodes.index_of(name) else {
            return false;
        };
        self.nodes.cordon(i);
        true
    }

    /// Node `name` is back: neither failed nor cordoned. False for an unknown node.
    pub(crate) fn up(&mut self, name: &str) -> bool {
        let Some(i) = self.nodes.index_of(name) else {
            return false;
        };
        self.nodes.set_down(i, false);
        self.dirty = true;
        true
    }

    /// The running workloads (all pods placed) with a pod on node `name`, in index order.
    ///
    /// # Complexity
    /// O(placed pods).
    pub(crate) fn holders(&self, name: &str) -> Vec<u32> {
        let Some(i) = self.nodes.index_of(name) else {
            return Vec::new();
        };
        let node = u32::try_from(i).unwrap_or(u32::MAX);
        self.held
            .iter()
            .enumerate()
            .filter(|(w, h)| {
                self.waiters.get(*w).is_none_or(Option::is_none) && h.iter().any(|b| b.0 == node)
            })
            .map(|(w, _)| u32::try_from(w).unwrap_or(u32::MAX))
            .collect()
    }

    /// Whether no pod on node `name` holds a device (false for an unknown node).
    pub(crate) fn idle(&self, name: &str) -> bool {
        self.nodes
            .index_of(name)
            .is_some_and(|i| self.nodes.idle(i))
    }

    /// A MIG maintenance window opens on node `name`: it takes no new pods. False for an
    /// unknown node.
    pub(crate) fn open_window(&mut self, name: &str) -> bool {
        let Some(i) = self.nodes.index_of(name) else {
            return false;
        };
        self.nodes.open_window(i);
        self.unbind_waiting(i);
        true
    }

    /// The window on node `name` closes with its new allocatable (`resource → amount`; an
    /// extended resource it does not name is 0, others keep theirs): it takes pods again.
    /// False for an unknown node.
    pub(crate) fn close_window(&mut self, name: &str, allocatable: &BTreeMap<String, i64>) -> bool {
        let Some(i) = self.nodes.index_of(name) else {
            return false;
        };
        self.nodes.close_window(i, allocatable);
        self.dirty = true;
        true
    }

    /// Whether node `name` is in a MIG maintenance window.
    pub(crate) fn in_window(&self, name: &str) -> bool {
        self.nodes
            .index_of(name)
            .is_some_and(|i| self.nodes.in_window(i))
    }

    /// Per extended resource (sorted by name), the allocatable of the nodes that take new
    /// pods (neither failed, cordoned nor in a MIG window).
    ///
    /// # Complexity
    /// O(nodes × resources).
    pub(crate) fn schedulable_totals(&self) -> Vec<(ResourceName, i64)> {
        self.nodes.open_totals()
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

    /// The interned shape of one pod of `ps`.
    fn pod_of(&mut self, ps: &PodSetInfo) -> u32 {
        let n = self.nodes.resources().len();
        let mut req = vec![0i64; n];
        for &(r, a) in &ps.per_pod {
            if let Some(s) = self.slot.get(r.index()).copied().flatten() {
                req[s as usize] = a.max(0);
            }
        }
        for (s, v) in req.iter_mut().enumerate() {
            if self.nodes.kind(s) == SlotKind::Pods {
                *v = 1;
            }
        }
        if let Some(&id) = self.pod_ids.get(&req) {
            return id;
        }
        let (cpu, mem) = self.nodes.cpu_mem();
        let c = cpu.map_or(0, |s| req[s]);
        let m = mem.map_or(0, |s| req[s]);
        let pod = Pod {
            nz_cpu: if c == 0 { DEFAULT_MILLI_CPU } else { c },
            nz_mem: if m == 0 { DEFAULT_MEMORY } else { m },
            best_effort: c == 0 && m == 0,
            req: req.clone(),
        };
        let id = u32::try_from(self.pods.len()).unwrap_or(u32::MAX);
        self.pods.push(pod);
        self.pod_ids.insert(req, id);
        id
    }

    /// Under Kueue: workload `wl`'s pods, with the flavors and counts its reservation's
    /// usage `(flavor-resource, amount)` gives each pod set (see the module docs).
    ///
    /// # Complexity
    /// O(pod sets × requests × usage).
    pub(crate) fn kueue_needs(
        &mut self,
        world: &World,
        wl: u32,
        usage: &[(u32, i64)],
    ) -> Vec<Need> {
        let mut left: Vec<(FlavorId, usize, i64)> = usage
            .iter()
            .filter_map(|&(fr, a)| {
                world
                    .frs
                    .get(gpuquota_cohort::tree::FrId::new(fr as usize))
                    .map(|&(f, r)| (f, r.index(), a))
            })
            .collect();
        let Some(w) = world.workloads.get(WlId::new(wl as usize)) else {
            return Vec::new();
        };
        let mut needs = Vec::new();
        for ps in &w.pod_sets {
            let mut count = i64::from(ps.count.max(0));
            let mut chosen: Vec<(usize, i64)> = Vec::new();
            for &(r, per) in &ps.per_pod {
                if per <= 0 {
                    continue;
                }
                let full = per.saturating_mul(count);
                let pick = left
                    .iter()
                    .position(|&(_, x, a)| x == r.index() && a >= full)
                    .or_else(|| left.iter().position(|&(_, x, a)| x == r.index() && a > 0));
                if let Some(i) = pick {
                    count = count.min(left[i].2 / per);
                    chosen.push((i, per));
                }
            }
            for &(i, per) in &chosen {
                left[i].2 -= per.saturating_mul(count);
            }
            let mut flavors: Vec<FlavorId> = chosen.iter().map(|&(i, _)| left[i].0).collect();
            flavors.sort_unstable();
            flavors.dedup();
            let selector = Self::merge(
                flavors
                    .iter()
                    .map(|&f| &world.flavors[f].node_labels)
                    .chain([&ps.node_selector]),
            );
            let mut tolerations = ps.tolerations.clone();
            for &f in &flavors {
                tolerations.extend(world.flavors[f].tolerations.iter().cloned());
            }
            let filter = Filter {
                selector,
                tolerations,
                affinity: ps.affinity.clone(),
            };
            self.push_need(&mut needs, ps, &filter, count);
        }
        needs
    }

    fn push_need(&mut self, needs: &mut Vec<Need>, ps: &PodSetInfo, f: &Filter, count: i64) {
        let count = u32::try_from(count.max(0)).unwrap_or(u32::MAX);
        if count == 0 {
            return;
        }
        let set = self.nodes.set_for(f);
        let pod = self.pod_of(ps);
        needs.push(Need { set, pod, count });
    }

    /// Under `resourcequota`: each pod set's pods on the nodes its `nodeSelector` and the
    /// flavor its usage is charged to select: the first flavor of its ClusterQueue covering
    /// a requested extended resource whose `nodeLabels` agree with the `nodeSelector`, else
    /// the first (as `bill::unflavored_flavor` picks it for the bill and the budgets).
    pub(crate) fn pod_needs(&mut self, world: &World, wl: usize) -> Vec<Need> {
        let w = &world.workloads[WlId::new(wl)];
        let cq = match &w.queue {
            QueueRef::Cq(c) => Some(&world.cluster_queues[*c]),
            _ => None,
        };
        let mut needs = Vec::new();
        for ps in &w.pod_sets {
            let mut labels: Option<&BTreeMap<String, String>> = None;
            for &(r, a) in &ps.per_pod {
                if a <= 0 || SlotKind::of(&world.resources[r]) != Some(SlotKind::Extended) {
                    continue;
                }
                let flavors = cq
                    .and_then(|c| c.group_of(r).map(|g| &c.groups[g]))
                    .map(|g| g.flavors.as_slice())
                    .unwrap_or_default();
                let agrees = |f: &&FlavorId| {
                    world.flavors[**f]
                        .node_labels
                        .iter()
                        .all(|(k, v)| ps.node_selector.get(k).is_none_or(|x| x == v))
                };
                if let Some(&f) = flavors.iter().find(agrees).or(flavors.first()) {
                    labels = Some(&world.flavors[f].node_labels);
                    break;
                }
            }
            let filter = Filter {
                selector: Self::merge(labels.into_iter().chain([&ps.node_selector])),
                tolerations: ps.tolerations.clone(),
                affinity: ps.affinity.clone(),
            };
            self.push_need(&mut needs, ps, &filter, i64::from(ps.count));
        }
        needs
    }

    /// Places what it can of `needs` for workload `wl`, pod by pod; returns the pods left
    /// pending and the first of them.
    fn try_place(&mut self, wl: u32, needs: &[Need]) -> (Vec<Need>, Option<Need>) {
        self.grow(wl);
        let mut rest = Vec::new();
        for n in needs {
            let pod = &self.pods[n.pod as usize];
            let mut left = n.count;
            while left > 0 {
                let Some(node) = self.nodes.best(n.set, pod) else {
                    break;
                };
                self.nodes.bind(node, pod, 1);
                self.held[wl as usize].push((
                    u32::try_from(node).unwrap_or(u32::MAX),
                    n.set,
                    n.pod,
                ));
                left -= 1;
            }
            if left > 0 {
                rest.push(Need { count: left, ..*n });
            }
        }
        let first = rest.first().copied();
        (rest, first)
    }

    /// Places workload `wl`'s pods; when some fit no node, the placed ones stay, the rest
    /// is kept for [`Capacity::wait`] and the kube-scheduler's message for the first of
    /// them is returned.
    pub(crate) fn place(&mut self, wl: u32, needs: &[Need]) -> Result<(), String> {
        let (rest, first) = self.try_place(wl, needs);
        match first {
            None => Ok(()),
            Some(n) => {
                let m = self.nodes.message(n.set, &self.pods[n.pod as usize]);
                self.rest[wl as usize] = Some(rest);
                Err(m)
            }
        }
    }

    /// Whether every pod of workload `wl` is placed (it was placed and does not wait): the
    /// workload is ready (`PodsReady`). The run's start is the instant this became true.
    #[cfg_attr(not(test), allow(dead_code))] // for the PodsReady lifecycle
    pub(crate) fn placed(&self, wl: u32) -> bool {
        self.waiters.get(wl as usize).is_none_or(Option::is_none)
            && self.rest.get(wl as usize).is_none_or(Option::is_none)
            && self.held.get(wl as usize).is_some_and(|h| !h.is_empty())
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
        if self.rest.len() < n {
            self.rest.resize(n, None);
        }
    }

    /// Frees what workload `wl`'s pods hold.
    pub(crate) fn release(&mut self, wl: u32) {
        let held = self.held.get_mut(wl as usize).map(std::mem::take);
        for (node, _, pod) in held.unwrap_or_default() {
            self.nodes.bind(node as usize, &self.pods[pod as usize], -1);
            self.dirty = true;
        }
    }

    /// Workload `wl` waits with the pods the last [`Capacity::place`] left pending (else
    /// with `needs`); `message` says why.
    pub(crate) fn wait(&mut self, wl: u32, needs: Vec<Need>, message: String) {
        self.grow(wl);
        let needs = self.rest[wl as usize].take().unwrap_or(needs);
        self.waiters[wl as usize] = Some(Waiter { needs, message });
        self.queue.push(wl);
    }

    /// Takes workload `wl` out of the waiting ones; whether it was waiting.
    ///
    /// # Complexity
    /// O(waiting) when it waited, O(1) otherwise.
    pub(crate) fn unwait(&mut self, wl: u32) -> bool {
        if let Some(r) = self.rest.get_mut(wl as usize) {
            *r = None;
        }
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

    /// Whether the free devices of the open nodes could hold `needs` at all.
    fn may_fit(&self, needs: &[Need]) -> bool {
        let free = self.nodes.free();
        (0..free.len()).all(|s| {
            self.nodes.kind(s) != SlotKind::Extended || {
                let want = needs.iter().fold(0i64, |acc, n| {
                    acc.saturating_add(
                        self.pods[n.pod as usize].req[s].saturating_mul(i64::from(n.count)),
                    )
                });
                want <= free[s]
            }
        })
    }

    /// Places the pending pods of the waiting workloads, in the order they began to wait,
    /// and returns those whose pods are now all placed, in that order.
    ///
    /// # Complexity
    /// Nothing unless resources were freed (or a node came back) since the last call; then
    /// O(waiting × pending groups × resources) plus the placements tried.
    pub(crate) fn start_waiting(&mut self) -> Vec<u32> {
        let mut started = Vec::new();
        if self.queue.is_empty() || !self.dirty {
            return started;
        }
        self.dirty = false;
        let queue = std::mem::take(&mut self.queue);
        let mut kept = Vec::with_capacity(queue.len());
        for wl in queue {
            let Some(mut w) = self.waiters[wl as usize].take() else {
                continue;
            };
            if !self.may_fit(&w.needs) {
                self.waiters[wl as usize] = Some(w);
                kept.push(wl);
                continue;
            }
            let before: u32 = w.needs.iter().map(|n| n.count).sum();
            let (rest, first) = self.try_place(wl, &w.needs);
            match first {
                None => started.push(wl),
                Some(n) => {
                    let after: u32 = rest.iter().map(|n| n.count).sum();
                    if after < before {
                        w.message = self.nodes.message(n.set, &self.pods[n.pod as usize]);
                    }
                    w.needs = rest;
                    self.waiters[wl as usize] = Some(w);
                    kept.push(wl);
                }
            }
        }
        self.queue = kept;
        started
    }
}

#[cfg(test)]
mod tests;
