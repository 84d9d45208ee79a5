//! A model of the kube-scheduler's default profile placing one pod at a time, and the
//! node index that keeps each placement from scanning every node.
//!
//! # Filter (per node, the first failing plugin decides, in the profile's order)
//! 1. NodeUnschedulable: a cordoned node (`spec.unschedulable`, a drain, a MIG maintenance
//!    window) takes no pod: `node(s) were unschedulable`. A failed node counts as carrying
//!    the node lifecycle controller's `node.kubernetes.io/unreachable` taint.
//! 2. TaintToleration: a `NoSchedule` or `NoExecute` taint the pod does not tolerate (the
//!    pod template's tolerations plus, under Kueue, the assigned flavors' `tolerations`, as
//!    Kueue injects them): `node(s) had untolerated taint {key: value}` naming the first.
//! 3. NodeAffinity: the `nodeSelector` (under Kueue with the flavors' `nodeLabels` merged
//!    in, as Kueue injects them; two values for one key select no node) and the required
//!    node-affinity terms (ORed; a term's expressions ANDed; `In`, `NotIn`, `Exists`,
//!    `DoesNotExist`, `Gt`, `Lt`; a term without expressions matches nothing):
//!    `node(s) didn't match Pod's node affinity/selector`.
//! 4. NodeResourcesFit: for every requested resource, the pod's request plus what the pods
//!    already placed on the node request must not exceed the node's allocatable
//!    (`Insufficient <resource>`), and the node's pod count stays within its `pods`
//!    allocatable (`Too many pods`). A native resource (`cpu`, `memory`, `pods`,
//!    `ephemeral-storage`) that a node's allocatable does not list is not checked on that
//!    node (cluster files often list only the devices); an extended resource it does not
//!    list is 0 there, as upstream.
//!
//! A pod no node takes gets upstream's `FitError` message: `0/N nodes are available: ` and
//! the per-node reasons counted, each `"<count> <reason>"`, sorted, joined by `, `.
//!
//! # Score (the default profile's plugins whose scores differ between these nodes)
//! `score = 1 × LeastAllocated + 1 × BalancedAllocation + 3 × TaintToleration`, the
//! weights of kubernetes/kubernetes `pkg/scheduler/apis/config/v1/default_plugins.go`:
//! - NodeResourcesFit, strategy `LeastAllocated`, resources `cpu` and `memory` weight 1
//!   (`pkg/scheduler/framework/plugins/noderesources/least_allocated.go`): per resource with
//!   a non-zero allocatable `a` and requested `r` (what the node's pods request plus the
//!   pod, each with the non-zero defaults of `pkg/scheduler/util/non_zero.go`: a pod that
//!   requests no cpu counts 100m, no memory 200 MiB), `(a − r) × 100 / a` (0 when
//!   `r > a`), integer division; the weighted mean over those resources, integer division
//!   (0 when none).
//! - NodeResourcesBalancedAllocation (`balanced_allocation.go`), resources `cpu` and
//!   `memory`: fractions `min(1, (requested + pod) / allocatable)` of the resources with a
//!   non-zero allocatable (actual requests, no defaults), `⌊(1 − σ) × 100⌋` with σ their
//!   standard deviation (`|f₁ − f₂| / 2` for two); skipped (0 on every node) for a pod
//!   requesting neither cpu nor memory.
//! - TaintToleration: the count of `PreferNoSchedule` taints the pod does not tolerate,
//!   normalised over the feasible nodes and reversed: `100 − 100 × count / max`, 100 on
//!   every node when `max` is 0.
//!
//! NodeAffinity's score (preferred terms, not read), InterPodAffinity (no pod affinity),
//! PodTopologySpread (its system default constraints apply only to pods of a Service,
//! ReplicaSet or StatefulSet, not a Job's) and ImageLocality (no images) give every node
//! the same score and are left out.
//!
//! Tie-break: upstream picks uniformly at random among the top-scored nodes
//! (`pkg/scheduler/schedule_one.go` `selectHost`). Here, among equal scores, the node with
//! the most room by LeastAllocated's own formula before its integer rounding wins (the mean
//! of `(a − r) / a` over cpu and memory, compared exactly), then the first node by name.
//! Why: the rounding makes nodes of one size tie for many pods (a pod requesting only a GPU
//! counts 100m of 128 cores: 99 points on an empty node and on one with twelve such pods);
//! the random pick then spreads equal nodes evenly on average, while the first name would
//! stack every pod on one node. The unrounded value spreads them evenly and deterministically
//! (no seed), and picks only among nodes upstream could pick.
//!
//! Deliberate limits: a pod set's requests are one container's (a pod with several
//! containers gets one non-zero default, not one per container); a request of 0 counts as
//! unset for the non-zero defaults.
//!
//! # The index
//! Every selection of nodes (a pod's filter: selector, tolerations, affinity) is a [`Set`]
//! computed once: per node its static verdict and `PreferNoSchedule` count, and the open
//! nodes it admits bucketed by their *state* (allocatable, requested, non-zero requested,
//! that count). Nodes of one state are interchangeable but for their names, so a pod is
//! scored once per bucket, the bucket's first node standing for it.
//!
//! # Complexity
//! - Placing or removing a pod: O(sets the node is in × log buckets).
//! - Choosing a node: O(buckets × resources), buckets ≤ open nodes of the set (on a cluster
//!   of identical nodes, the distinct fill levels).
//! - A pod that fits nowhere: O(nodes × resources) to build the message.
//! - A new set: O(nodes × (labels + taints)).

use std::collections::{BTreeMap, BTreeSet};

use gpuquota_cohort::world::NodeRequirement;
use gpuquota_model::ResourceName;
use gpuquota_model::meta::{Taint, Toleration};

/// Upstream's `MaxNodeScore`.
const MAX_NODE_SCORE: i64 = 100;
/// Upstream's `DefaultMilliCPURequest` (millicores).
pub(crate) const DEFAULT_MILLI_CPU: i64 = 100;
/// Upstream's `DefaultMemoryRequest` (bytes).
pub(crate) const DEFAULT_MEMORY: i64 = 200 * 1024 * 1024;
/// The default profile's score weights.
const WEIGHT_FIT: i64 = 1;
const WEIGHT_BALANCED: i64 = 1;
const WEIGHT_TAINT: i64 = 3;

/// What a tracked resource is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SlotKind {
    /// `cpu` (millicores).
    Cpu,
    /// `memory` (bytes).
    Memory,
    /// `pods`: every pod requests 1.
    Pods,
    /// Another native resource (`ephemeral-storage`).
    Native,
    /// A resource with a domain (`nvidia.com/gpu`, MIG instances).
    Extended,
}

impl SlotKind {
    /// The kind of a resource name, `None` when not tracked.
    pub(crate) fn of(r: &ResourceName) -> Option<SlotKind> {
        let s = r.as_str();
        match s {
            "cpu" => Some(SlotKind::Cpu),
            "memory" => Some(SlotKind::Memory),
            "pods" => Some(SlotKind::Pods),
            "ephemeral-storage" => Some(SlotKind::Native),
            _ if s.contains('/')
                && !s.starts_with("kubernetes.io/")
                && !s.starts_with("requests.") =>
            {
                Some(SlotKind::Extended)
            }
            _ => None,
        }
    }
}

/// One pod's requests per slot (the `pods` slot 1) and its non-zero cpu and memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pod {
    /// Requests per slot.
    pub(crate) req: Vec<i64>,
    /// The cpu request, [`DEFAULT_MILLI_CPU`] when 0.
    pub(crate) nz_cpu: i64,
    /// The memory request, [`DEFAULT_MEMORY`] when 0.
    pub(crate) nz_mem: i64,
    /// Requests neither cpu nor memory (BalancedAllocation skips it).
    pub(crate) best_effort: bool,
}

/// What selects a pod's nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Filter {
    /// `nodeSelector` (with the flavors' `nodeLabels`), `None` when two values disagree.
    pub(crate) selector: Option<Vec<(String, String)>>,
    /// Tolerations.
    pub(crate) tolerations: Vec<Toleration>,
    /// Required node-affinity terms.
    pub(crate) affinity: Vec<Vec<NodeRequirement>>,
}

/// A node as the model reads it.
#[derive(Debug, Clone)]
pub(crate) struct NodeInit {
    /// Name.
    pub(crate) name: String,
    /// Labels.
    pub(crate) labels: BTreeMap<String, String>,
    /// Taints.
    pub(crate) taints: Vec<Taint>,
    /// `spec.unschedulable`.
    pub(crate) cordoned: bool,
    /// Allocatable per slot, `None` when not listed.
    pub(crate) alloc: Vec<Option<i64>>,
}

/// Why a filter statically rejects a node.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Reject {
    /// TaintToleration's reason.
    Taint(String),
    /// NodeAffinity's reason.
    Affinity,
}

/// A node's state as far as fitting and scoring go.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    prefer: u32,
    profile: u32,
    used: Vec<i64>,
    nz_cpu: i64,
    nz_mem: i64,
}

/// A filter's nodes.
#[derive(Debug, Clone)]
struct Set {
    /// Per node, the static verdict.
    reject: Vec<Option<Reject>>,
    /// Per node, untolerated `PreferNoSchedule` taints.
    prefer: Vec<u32>,
    /// Open, admitted nodes by state; each bucket's nodes in name order.
    buckets: BTreeMap<Key, BTreeSet<u32>>,
}

/// An allocatable vector (interned).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Profile {
    alloc: Vec<i64>,
    listed: Vec<bool>,
}

/// The nodes, what their pods request, and the index.
#[derive(Debug, Clone)]
pub(crate) struct Nodes {
    names: Vec<String>,
    labels: Vec<BTreeMap<String, String>>,
    taints: Vec<Vec<Taint>>,
    cordoned: Vec<bool>,
    down: Vec<bool>,
    window: Vec<bool>,
    /// Tracked resources by slot, sorted.
    resources: Vec<ResourceName>,
    kinds: Vec<SlotKind>,
    cpu: Option<usize>,
    mem: Option<usize>,
    profile: Vec<u32>,
    profiles: Vec<Profile>,
    profile_ids: BTreeMap<Profile, u32>,
    /// `[node][slot]`: what its pods request (the `pods` slot: their count).
    used: Vec<Vec<i64>>,
    /// Per node, non-zero cpu and memory of its pods.
    nz: Vec<(i64, i64)>,
    sets: Vec<Set>,
    set_ids: BTreeMap<String, u32>,
    /// Per node, the sets admitting it.
    node_sets: Vec<Vec<u32>>,
    /// Per slot, free amount over the open nodes (extended slots only; 0 otherwise).
    free: Vec<i64>,
}

/// LeastAllocated's score of one resource.
fn least_requested(requested: i64, allocatable: i64) -> i64 {
    if allocatable == 0 || requested > allocatable {
        return 0;
    }
    (allocatable - requested).saturating_mul(MAX_NODE_SCORE) / allocatable
}

impl Nodes {
    /// Nodes in name order, tracking
    /// `resources` (each with its kind, sorted by name).
    ///
    /// # Complexity
    /// O(nodes × resources × log nodes).
    pub(crate) fn new(resources: Vec<(ResourceName, SlotKind)>, nodes: Vec<NodeInit>) -> Nodes {
        let kinds: Vec<SlotKind> = resources.iter().map(|r| r.1).collect();
        let n = nodes.len();
        let mut out = Nodes {
            names: Vec::with_capacity(n),
            labels: Vec::with_capacity(n),
            taints: Vec::with_capacity(n),
            cordoned: Vec::with_capacity(n),
            down: vec![false; n],
            window: vec![false; n],
            cpu: kinds.iter().position(|k| *k == SlotKind::Cpu),
            mem: kinds.iter().position(|k| *k == SlotKind::Memory),
            resources: resources.into_iter().map(|r| r.0).collect(),
            profile: Vec::with_capacity(n),
            profiles: Vec::new(),
            profile_ids: BTreeMap::new(),
            used: vec![vec![0; kinds.len()]; n],
            nz: vec![(0, 0); n],
            sets: Vec::new(),
            set_ids: BTreeMap::new(),
            node_sets: vec![Vec::new(); n],
            free: vec![0; kinds.len()],
            kinds,
        };
        for n in nodes {
            out.names.push(n.name);
            out.labels.push(n.labels);
            out.taints.push(n.taints);
            out.cordoned.push(n.cordoned);
            let p = out.intern(&n.alloc);
            out.profile.push(p);
        }
        for i in 0..n {
            out.attach(i);
        }
        out
    }

    fn intern(&mut self, alloc: &[Option<i64>]) -> u32 {
        let p = Profile {
            alloc: alloc.iter().map(|a| a.unwrap_or(0).max(0)).collect(),
            listed: alloc.iter().map(Option::is_some).collect(),
        };
        if let Some(&id) = self.profile_ids.get(&p) {
            return id;
        }
        let id = u32::try_from(self.profiles.len()).unwrap_or(u32::MAX);
        self.profiles.push(p.clone());
        self.profile_ids.insert(p, id);
        id
    }

    /// The number of nodes.
    pub(crate) fn len(&self) -> usize {
        self.names.len()
    }

    /// Tracked resources by slot.
    pub(crate) fn resources(&self) -> &[ResourceName] {
        &self.resources
    }

    /// The kind of slot `s`.
    pub(crate) fn kind(&self, s: usize) -> SlotKind {
        self.kinds[s]
    }

    /// The cpu and memory slots.
    pub(crate) fn cpu_mem(&self) -> (Option<usize>, Option<usize>) {
        (self.cpu, self.mem)
    }

    /// The name of node `i`.
    pub(crate) fn name(&self, i: usize) -> &str {
        &self.names[i]
    }

    /// The index of node `name`. O(log nodes).
    pub(crate) fn index_of(&self, name: &str) -> Option<usize> {
        self.names.binary_search_by(|n| n.as_str().cmp(name)).ok()
    }

    /// Whether node `i` takes new pods.
    pub(crate) fn open(&self, i: usize) -> bool {
        !self.cordoned[i] && !self.down[i] && !self.window[i]
    }

    /// Whether node `i` is cordoned.
    pub(crate) fn cordoned(&self, i: usize) -> bool {
        self.cordoned[i]
    }

    /// Whether node `i` is in a MIG window.
    pub(crate) fn in_window(&self, i: usize) -> bool {
        self.window[i]
    }

    /// Whether no pod on node `i` holds an extended resource (a device).
    pub(crate) fn idle(&self, i: usize) -> bool {
        self.used[i]
            .iter()
            .zip(&self.kinds)
            .all(|(u, k)| *k != SlotKind::Extended || *u == 0)
    }

    /// Node `i`'s allocatable per slot and whether it lists it.
    #[cfg(test)]
    pub(crate) fn allocatable(&self, i: usize) -> (&[i64], &[bool]) {
        let p = &self.profiles[self.profile[i] as usize];
        (&p.alloc, &p.listed)
    }

    /// Per slot, the free amount of the open nodes (extended slots; 0 for others).
    pub(crate) fn free(&self) -> &[i64] {
        &self.free
    }

    /// Per extended slot, the allocatable of the open nodes. O(nodes × resources).
    pub(crate) fn open_totals(&self) -> Vec<(ResourceName, i64)> {
        (0..self.resources.len())
            .filter(|&s| self.kinds[s] == SlotKind::Extended)
            .map(|s| {
                let total = (0..self.len())
                    .filter(|&i| self.open(i))
                    .map(|i| self.profiles[self.profile[i] as usize].alloc[s])
                    .fold(0i64, i64::saturating_add);
                (self.resources[s].clone(), total)
            })
            .collect()
    }

    /// The state key of node `i` in set `s`.
    fn key(&self, s: usize, i: usize) -> Key {
        Key {
            prefer: self.sets[s].prefer[i],
            profile: self.profile[i],
            used: self.used[i].clone(),
            nz_cpu: self.nz[i].0,
            nz_mem: self.nz[i].1,
        }
    }

    /// Takes open node `i` out of the index (before its state changes).
    fn detach(&mut self, i: usize) {
        if !self.open(i) {
            return;
        }
        let node = u32::try_from(i).unwrap_or(u32::MAX);
        for k in 0..self.node_sets[i].len() {
            let s = self.node_sets[i][k] as usize;
            let key = self.key(s, i);
            if let Some(b) = self.sets[s].buckets.get_mut(&key) {
                b.remove(&node);
                if b.is_empty() {
                    self.sets[s].buckets.remove(&key);
                }
            }
        }
        let alloc = &self.profiles[self.profile[i] as usize].alloc;
        for (s, f) in self.free.iter_mut().enumerate() {
            if self.kinds[s] == SlotKind::Extended {
                *f = f.saturating_sub(alloc[s] - self.used[i][s]);
            }
        }
    }

    /// Puts node `i` back into the index (after its state changed), when open.
    fn attach(&mut self, i: usize) {
        if !self.open(i) {
            return;
        }
        let node = u32::try_from(i).unwrap_or(u32::MAX);
        for k in 0..self.node_sets[i].len() {
            let s = self.node_sets[i][k] as usize;
            let key = self.key(s, i);
            self.sets[s].buckets.entry(key).or_default().insert(node);
        }
        let alloc = &self.profiles[self.profile[i] as usize].alloc;
        for (s, f) in self.free.iter_mut().enumerate() {
            if self.kinds[s] == SlotKind::Extended {
                *f = f.saturating_add(alloc[s] - self.used[i][s]);
            }
        }
    }

    /// Changes node `i` through `f`, keeping the index.
    fn change(&mut self, i: usize, f: impl FnOnce(&mut Nodes)) {
        self.detach(i);
        f(self);
        self.attach(i);
    }

    /// Node `i` fails (`true`) or comes back, neither failed nor cordoned (`false`).
    pub(crate) fn set_down(&mut self, i: usize, down: bool) {
        self.change(i, |n| {
            n.down[i] = down;
            if !down {
                n.cordoned[i] = false;
            }
        });
    }

    /// Node `i` is cordoned.
    pub(crate) fn cordon(&mut self, i: usize) {
        self.change(i, |n| n.cordoned[i] = true);
    }

    /// A MIG window opens on node `i`.
    pub(crate) fn open_window(&mut self, i: usize) {
        self.change(i, |n| n.window[i] = true);
    }

    /// The window on node `i` closes with its new allocatable of every extended slot
    /// (`resource → amount`, 0 when not named); native slots keep theirs.
    pub(crate) fn close_window(&mut self, i: usize, after: &BTreeMap<String, i64>) {
        self.detach(i);
        self.window[i] = false;
        let old = self.profiles[self.profile[i] as usize].clone();
        let alloc: Vec<Option<i64>> = (0..self.resources.len())
            .map(|s| {
                if self.kinds[s] == SlotKind::Extended {
                    Some(
                        after
                            .get(self.resources[s].as_str())
                            .copied()
                            .unwrap_or(0)
                            .max(0),
                    )
                } else {
                    old.listed[s].then_some(old.alloc[s])
                }
            })
            .collect();
        self.profile[i] = self.intern(&alloc);
        self.attach(i);
    }

    /// Pod `pod` runs on node `i` (or, `sign` −1, leaves it).
    pub(crate) fn bind(&mut self, i: usize, pod: &Pod, sign: i64) {
        self.change(i, |n| {
            for (u, r) in n.used[i].iter_mut().zip(&pod.req) {
                *u = u.saturating_add(sign.saturating_mul(*r));
            }
            n.nz[i].0 = n.nz[i].0.saturating_add(sign.saturating_mul(pod.nz_cpu));
            n.nz[i].1 = n.nz[i].1.saturating_add(sign.saturating_mul(pod.nz_mem));
        });
    }

    /// The set of filter `f`, computed on first use.
    ///
    /// # Complexity
    /// O(log sets) when known; else O(nodes × (labels + taints × tolerations)).
    pub(crate) fn set_for(&mut self, f: &Filter) -> u32 {
        let key = format!("{f:?}");
        if let Some(&id) = self.set_ids.get(&key) {
            return id;
        }
        let id = u32::try_from(self.sets.len()).unwrap_or(u32::MAX);
        let mut set = Set {
            reject: Vec::with_capacity(self.len()),
            prefer: Vec::with_capacity(self.len()),
            buckets: BTreeMap::new(),
        };
        for i in 0..self.len() {
            let tolerated = |t: &Taint| f.tolerations.iter().any(|x| x.tolerates(t));
            let untolerated = self.taints[i]
                .iter()
                .find(|t| (t.effect == "NoSchedule" || t.effect == "NoExecute") && !tolerated(t));
            let labels = &self.labels[i];
            let selected = f
                .selector
                .as_ref()
                .is_some_and(|s| s.iter().all(|(k, v)| labels.get(k) == Some(v)))
                && (f.affinity.is_empty()
                    || f.affinity
                        .iter()
                        .any(|term| !term.is_empty() && term.iter().all(|r| r.matches(labels))));
            let reject = if let Some(t) = untolerated {
                Some(Reject::Taint(format!(
                    "node(s) had untolerated taint {{{}: {}}}",
                    t.key,
                    t.value.as_deref().unwrap_or("")
                )))
            } else if !selected {
                Some(Reject::Affinity)
            } else {
                None
            };
            let prefer = self.taints[i]
                .iter()
                .filter(|t| t.effect == "PreferNoSchedule" && !tolerated(t))
                .count();
            set.prefer.push(u32::try_from(prefer).unwrap_or(u32::MAX));
            if reject.is_none() {
                self.node_sets[i].push(id);
            }
            set.reject.push(reject);
        }
        self.sets.push(set);
        self.set_ids.insert(key, id);
        for i in 0..self.len() {
            if self.sets[id as usize].reject[i].is_none() && self.open(i) {
                let k = self.key(id as usize, i);
                self.sets[id as usize]
                    .buckets
                    .entry(k)
                    .or_default()
                    .insert(u32::try_from(i).unwrap_or(u32::MAX));
            }
        }
        id
    }

    /// Whether `pod` fits a node of profile `p` with `used`.
    fn fits(&self, p: &Profile, used: &[i64], pod: &Pod) -> bool {
        (0..self.kinds.len()).all(|s| {
            pod.req[s] == 0
                || (!p.listed[s] && self.kinds[s] != SlotKind::Extended)
                || used[s].saturating_add(pod.req[s]) <= p.alloc[s]
        })
    }

    /// LeastAllocated + BalancedAllocation of `pod` on a node of profile `p` in state `k`.
    fn resource_score(&self, p: &Profile, k: &Key, pod: &Pod) -> i64 {
        let mut least = 0i64;
        let mut weights = 0i64;
        let mut fractions: Vec<f64> = Vec::with_capacity(2);
        for (slot, nz_used, nz_pod) in [
            (self.cpu, k.nz_cpu, pod.nz_cpu),
            (self.mem, k.nz_mem, pod.nz_mem),
        ] {
            let Some(s) = slot else { continue };
            let a = p.alloc[s];
            if a == 0 {
                continue;
            }
            least = least.saturating_add(least_requested(nz_used.saturating_add(nz_pod), a));
            weights += 1;
            let requested = k.used[s].saturating_add(pod.req[s]);
            fractions.push((requested as f64 / a as f64).min(1.0));
        }
        let least = if weights == 0 { 0 } else { least / weights };
        let balanced = if pod.best_effort {
            0
        } else {
            let std = match fractions.as_slice() {
                [a, b] => ((a - b) / 2.0).abs(),
                _ => 0.0,
            };
            ((1.0 - std) * MAX_NODE_SCORE as f64) as i64
        };
        WEIGHT_FIT * least + WEIGHT_BALANCED * balanced
    }

    /// LeastAllocated's mean free fraction of cpu and memory before rounding, as
    /// `(numerator, denominator)`: the tie-break among equal scores.
    fn room(&self, p: &Profile, k: &Key, pod: &Pod) -> (i128, i128) {
        let mut num = 0i128;
        let mut den = 1i128;
        for (slot, nz_used, nz_pod) in [
            (self.cpu, k.nz_cpu, pod.nz_cpu),
            (self.mem, k.nz_mem, pod.nz_mem),
        ] {
            let Some(s) = slot else { continue };
            let a = i128::from(p.alloc[s]);
            if a == 0 {
                continue;
            }
            let free = (a - i128::from(nz_used) - i128::from(nz_pod)).max(0);
            // num/den + free/a
            num = num
                .saturating_mul(a)
                .saturating_add(free.saturating_mul(den));
            den = den.saturating_mul(a);
        }
        (num, den)
    }

    /// The node set `set` chooses for `pod`: the highest score; among equal scores the most
    /// room by LeastAllocated's formula before its rounding, then the first name. `None`
    /// when no node fits.
    ///
    /// # Complexity
    /// O(buckets × resources).
    pub(crate) fn best(&self, set: u32, pod: &Pod) -> Option<usize> {
        let s = &self.sets[set as usize];
        let mut feasible: Vec<(u32, i64, (i128, i128), u32)> = Vec::new();
        let mut max_prefer = 0u32;
        for (k, nodes) in &s.buckets {
            let p = &self.profiles[k.profile as usize];
            if !self.fits(p, &k.used, pod) {
                continue;
            }
            let Some(&first) = nodes.first() else {
                continue;
            };
            max_prefer = max_prefer.max(k.prefer);
            feasible.push((
                k.prefer,
                self.resource_score(p, k, pod),
                self.room(p, k, pod),
                first,
            ));
        }
        let mut best: Option<(i64, (i128, i128), u32)> = None;
        for (prefer, score, room, node) in feasible {
            let taint = if max_prefer == 0 {
                MAX_NODE_SCORE
            } else {
                MAX_NODE_SCORE - MAX_NODE_SCORE * i64::from(prefer) / i64::from(max_prefer)
            };
            let total = score + WEIGHT_TAINT * taint;
            let better = match &best {
                None => true,
                Some((t, r, n)) => {
                    total
                        .cmp(t)
                        .then_with(|| {
                            // room.0 / room.1 against r.0 / r.1 (denominators positive)
                            room.0.saturating_mul(r.1).cmp(&r.0.saturating_mul(room.1))
                        })
                        .then_with(|| n.cmp(&node))
                        == std::cmp::Ordering::Greater
                }
            };
            if better {
                best = Some((total, room, node));
            }
        }
        best.map(|(_, _, n)| n as usize)
    }

    /// Upstream's `FitError` message for `pod` on set `set`, which no node takes.
    ///
    /// # Complexity
    /// O(nodes × resources).
    pub(crate) fn message(&self, set: u32, pod: &Pod) -> String {
        let s = &self.sets[set as usize];
        let mut counts: BTreeMap<String, u32> = BTreeMap::new();
        let mut add = |r: String| *counts.entry(r).or_default() += 1;
        for i in 0..self.len() {
            if self.down[i] {
                add(format!(
                    "node(s) had untolerated taint {{{}: }}",
                    crate::timeline::UNREACHABLE_TAINT
                ));
            } else if self.cordoned[i] || self.window[i] {
                add("node(s) were unschedulable".to_owned());
            } else if let Some(r) = &s.reject[i] {
                match r {
                    Reject::Taint(m) => add(m.clone()),
                    Reject::Affinity => {
                        add("node(s) didn't match Pod's node affinity/selector".to_owned());
                    }
                }
            } else {
                let p = &self.profiles[self.profile[i] as usize];
                for sl in 0..self.kinds.len() {
                    let checked = p.listed[sl] || self.kinds[sl] == SlotKind::Extended;
                    if pod.req[sl] > 0
                        && checked
                        && self.used[i][sl].saturating_add(pod.req[sl]) > p.alloc[sl]
                    {
                        add(if self.kinds[sl] == SlotKind::Pods {
                            "Too many pods".to_owned()
                        } else {
                            format!("Insufficient {}", self.resources[sl])
                        });
                    }
                }
            }
        }
        let mut parts: Vec<String> = counts
            .into_iter()
            .map(|(r, c)| format!("{c} {r}"))
            .collect();
        parts.sort();
        format!(
            "0/{} nodes are available: {}.",
            self.len(),
            parts.join(", ")
        )
    }
}
