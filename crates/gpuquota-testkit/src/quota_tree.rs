//! A slow, obviously correct reference of Kueue's quota arithmetic over the cohort forest.
//!
//! Every quantity is computed from its definition by plain recursion over names, with nothing
//! cached and no incremental state, so each function can be read against the formulas of
//! Kueue's cache (`pkg/cache/scheduler/resource_node.go` and the ClusterQueue/Cohort snapshots).
//! It is the test oracle only (this crate is a dev-dependency, never shipped): production
//! computes these numbers once, in `gpuquota_fairshare::quota`, and the differential tests of
//! the fair-sharing and cohort crates compare it against this one.
//!
//! The tree: Cohorts are inner nodes, ClusterQueues leaves. A ClusterQueue hangs under
//! `spec.cohortName`, a Cohort under `spec.parentName`. A name without a Cohort object is an
//! *implicit* cohort: no quota, no limits, no parent. All values are per [`FlavorResource`], in
//! Kueue's integer [`Amount`]s with its saturating arithmetic:
//!
//! ```text
//! localQuota(n)   = max(0, subtreeQuota(n) − lendingLimit(n))   if lendingLimit is set, else 0
//! subtreeQuota(q) = nominal(q)                                   for a ClusterQueue
//! subtreeQuota(c) = nominal(c) + Σ_child (subtreeQuota(child) − localQuota(child))
//! usage(c)        = Σ_child max(0, usage(child) − localQuota(child))
//! available(root) = subtreeQuota(root) − usage(root)
//! available(n)    = max(0, localQuota(n) − usage(n))
//!                   + min(available(parent),
//!                         subtreeQuota(n) − localQuota(n) − max(0, usage(n) − localQuota(n))
//!                           + borrowingLimit(n))              (the min only with a limit)
//! potentialAvailable(root) = subtreeQuota(root)
//! potentialAvailable(n)    = min(subtreeQuota(n) + borrowingLimit(n),
//!                                localQuota(n) + potentialAvailable(parent))
//! ```
//!
//! ```
//! use gpuquota_model::import_str;
//! use gpuquota_testkit::quota_tree::{FlavorResource, Node, ReferenceTree};
//!
//! let text = "
//! apiVersion: kueue.x-k8s.io/v1beta2
//! kind: ClusterQueue
//! metadata: {name: data-science}
//! spec:
//!   cohortName: platform
//!   resourceGroups:
//!   - coveredResources: [nvidia.com/gpu]
//!     flavors: [{name: h200-nvl, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]
//! ---
//! apiVersion: kueue.x-k8s.io/v1beta2
//! kind: ClusterQueue
//! metadata: {name: batch}
//! spec:
//!   cohortName: platform
//!   resourceGroups:
//!   - coveredResources: [nvidia.com/gpu]
//!     flavors: [{name: h200-nvl, resources: [{name: nvidia.com/gpu, nominalQuota: 0, borrowingLimit: 6}]}]
//! ";
//! let model = import_str("seed.yaml", text)?.model;
//! let tree = ReferenceTree::new(&model)?;
//! let fr = FlavorResource::new("h200-nvl", "nvidia.com/gpu");
//! let batch = Node::ClusterQueue("batch".into());
//! assert_eq!(tree.potential_available(&batch, &fr).0, 6); // capped by its borrowingLimit
//! assert_eq!(tree.guaranteed(&batch, &fr).0, 0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Complexity
//! Deliberately naive: `subtree_quota` and `usage` visit the whole subtree on every call
//! (`O(s · log n)` for a subtree of `s` nodes), and `available`/`potential_available` call them
//! once per ancestor, so a query costs `O(d · s · log n)` for depth `d`. Building the tree is
//! `O(n log n)`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use gpuquota_model::kueue::ResourceGroup;
use gpuquota_model::{Amount, Model, ResourceName};

pub use gpuquota_model::FlavorResource;

/// The deepest cohort chain accepted (guards the recursion against hostile input).
pub const MAX_DEPTH: usize = 1000;

/// A node of the cohort forest.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Node {
    /// An inner node (explicit Cohort object or implicit cohort name).
    Cohort(String),
    /// A leaf.
    ClusterQueue(String),
}

impl Node {
    /// The node's name.
    pub fn name(&self) -> &str {
        match self {
            Node::Cohort(n) | Node::ClusterQueue(n) => n,
        }
    }

    /// `Cohort` or `ClusterQueue`.
    pub fn kind(&self) -> &'static str {
        match self {
            Node::Cohort(_) => "Cohort",
            Node::ClusterQueue(_) => "ClusterQueue",
        }
    }
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {:?}", self.kind(), self.name())
    }
}

/// A node's own quota for one flavor-resource (missing entry: nominal 0, no limits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Quota {
    /// `nominalQuota`.
    pub nominal: Amount,
    /// `borrowingLimit`; `None` = unlimited.
    pub borrowing_limit: Option<Amount>,
    /// `lendingLimit`; `None` = lend everything.
    pub lending_limit: Option<Amount>,
}

/// Why a quota tree cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuotaTreeError {
    /// Cohorts whose `parentName`s form a cycle (Kueue deactivates the whole tree).
    #[error("cohort cycle: {}", .0.join(" -> "))]
    CohortCycle(Vec<String>),
    /// A cohort chain deeper than [`MAX_DEPTH`].
    #[error("cohort {0:?} is nested more than {MAX_DEPTH} levels deep")]
    TooDeep(String),
}

/// The cohort forest of a [`Model`] with ClusterQueue usages.
#[derive(Debug, Clone)]
pub struct ReferenceTree<'m> {
    model: &'m Model,
    /// Cohort name → its ClusterQueues.
    child_queues: BTreeMap<String, Vec<String>>,
    /// Cohort name → its child cohorts (explicit objects naming it as parent).
    child_cohorts: BTreeMap<String, Vec<String>>,
    /// Every cohort name: objects, ClusterQueue `cohortName`s, Cohort `parentName`s.
    cohorts: BTreeSet<String>,
    usage: BTreeMap<(String, FlavorResource), Amount>,
}

fn non_empty(s: Option<&String>) -> Option<&str> {
    s.map(String::as_str).filter(|s| !s.is_empty())
}

impl<'m> ReferenceTree<'m> {
    /// The forest of `model`, with zero usage everywhere.
    ///
    /// # Errors
    /// [`QuotaTreeError::CohortCycle`] when `parentName`s form a cycle,
    /// [`QuotaTreeError::TooDeep`] for chains deeper than [`MAX_DEPTH`].
    ///
    /// # Complexity
    /// `O(n log n + c · d)` for `n` objects, `c` cohorts and depth `d`.
    pub fn new(model: &'m Model) -> Result<ReferenceTree<'m>, QuotaTreeError> {
        let mut tree = ReferenceTree {
            model,
            child_queues: BTreeMap::new(),
            child_cohorts: BTreeMap::new(),
            cohorts: BTreeSet::new(),
            usage: BTreeMap::new(),
        };
        for (name, cq) in &model.cluster_queues {
            if let Some(c) = non_empty(cq.spec.cohort_name.as_ref()) {
                tree.cohorts.insert(c.to_owned());
                tree.child_queues
                    .entry(c.to_owned())
                    .or_default()
                    .push(name.clone());
            }
        }
        for (name, co) in &model.cohorts {
            tree.cohorts.insert(name.clone());
            if let Some(p) = non_empty(co.spec.parent_name.as_ref()) {
                tree.cohorts.insert(p.to_owned());
                tree.child_cohorts
                    .entry(p.to_owned())
                    .or_default()
                    .push(name.clone());
            }
        }
        // Walk every chain once: a name already known to reach a root ends the walk.
        let mut reaches_root: BTreeSet<&str> = BTreeSet::new();
        let mut depth_of: BTreeMap<&str, usize> = BTreeMap::new();
        for name in model.cohorts.keys() {
            let mut path: Vec<&str> = vec![name.as_str()];
            let mut on_path: BTreeMap<&str, usize> = BTreeMap::from([(name.as_str(), 0)]);
            let mut current = name.as_str();
            let mut base = 0usize;
            while let Some(p) = model
                .cohorts
                .get(current)
                .and_then(|c| non_empty(c.spec.parent_name.as_ref()))
            {
                if let Some(&start) = on_path.get(p) {
                    let mut cycle: Vec<String> =
                        path[start..].iter().map(|n| (*n).to_owned()).collect();
                    cycle.push(p.to_owned());
                    return Err(QuotaTreeError::CohortCycle(cycle));
                }
                if reaches_root.contains(p) {
                    base = depth_of.get(p).copied().unwrap_or(0) + 1;
                    break;
                }
                on_path.insert(p, path.len());
                path.push(p);
                current = p;
            }
            // path[i] sits len-1-i levels above the end of the walk.
            let len = path.len();
            for (i, n) in path.iter().enumerate() {
                let depth = base + (len - 1 - i);
                if depth > MAX_DEPTH {
                    return Err(QuotaTreeError::TooDeep((*n).to_owned()));
                }
                reaches_root.insert(n);
                depth_of.insert(n, depth);
            }
        }
        Ok(tree)
    }

    /// Sets the usage of ClusterQueue `cq` for `fr` (replacing any previous value).
    pub fn set_usage(&mut self, cq: &str, fr: FlavorResource, amount: Amount) {
        self.usage.insert((cq.to_owned(), fr), amount);
    }

    /// Adds the usage of every Workload of the model that holds a quota reservation
    /// (`status.admission` set, not `Finished`): each pod set's `resourceUsage` under its
    /// assigned flavor, scaled down by the pod set's `reclaimablePods`.
    ///
    /// # Complexity
    /// `O(w · r · log n)` for `w` workloads of `r` resources.
    pub fn add_admitted_workloads(&mut self) {
        let model = self.model;
        for wl in model.workloads.values() {
            if wl.is_finished() {
                continue;
            }
            let Some(status) = &wl.status else { continue };
            let Some(adm) = &status.admission else {
                continue;
            };
            for psa in &adm.pod_set_assignments {
                let count = psa.count.or_else(|| {
                    wl.spec
                        .pod_sets
                        .iter()
                        .find(|p| p.name == psa.name)
                        .map(|p| p.count)
                });
                let reclaimable = status
                    .reclaimable_pods
                    .iter()
                    .find(|r| r.name == psa.name)
                    .map_or(0, |r| r.count);
                for (resource, q) in &psa.resource_usage {
                    let Some(flavor) = psa.flavors.get(resource) else {
                        continue;
                    };
                    let mut amount = q.to_amount(resource);
                    if let Some(c) = count.filter(|c| *c > 0)
                        && reclaimable > 0
                        && !amount.is_unlimited()
                    {
                        let remaining = i64::from(c.saturating_sub(reclaimable).max(0));
                        amount = Amount(amount.0 / i64::from(c))
                            .checked_mul(remaining)
                            .unwrap_or(Amount::UNLIMITED);
                    }
                    let key = (
                        adm.cluster_queue.clone(),
                        FlavorResource {
                            flavor: flavor.clone(),
                            resource: resource.clone(),
                        },
                    );
                    let entry = self.usage.entry(key).or_insert(Amount::ZERO);
                    *entry = entry.saturating_add(amount);
                }
            }
        }
    }

    /// The parent of a node: a ClusterQueue's cohort, an explicit Cohort's parent. Implicit
    /// cohorts have none.
    pub fn parent(&self, node: &Node) -> Option<Node> {
        match node {
            Node::ClusterQueue(n) => self
                .model
                .cluster_queues
                .get(n)
                .and_then(|cq| non_empty(cq.spec.cohort_name.as_ref()))
                .map(|c| Node::Cohort(c.to_owned())),
            Node::Cohort(n) => self
                .model
                .cohorts
                .get(n)
                .and_then(|co| non_empty(co.spec.parent_name.as_ref()))
                .map(|p| Node::Cohort(p.to_owned())),
        }
    }

    /// The children of a node, child cohorts first, each group by name.
    pub fn children(&self, node: &Node) -> Vec<Node> {
        let Node::Cohort(n) = node else {
            return Vec::new();
        };
        let mut out: Vec<Node> = Vec::new();
        if let Some(cs) = self.child_cohorts.get(n) {
            out.extend(cs.iter().map(|c| Node::Cohort(c.clone())));
        }
        if let Some(qs) = self.child_queues.get(n) {
            out.extend(qs.iter().map(|q| Node::ClusterQueue(q.clone())));
        }
        out
    }

    /// The roots of the forest: cohorts without a parent, then ClusterQueues without a cohort,
    /// each by name.
    pub fn roots(&self) -> Vec<Node> {
        let mut out: Vec<Node> = self
            .cohorts
            .iter()
            .map(|c| Node::Cohort(c.clone()))
            .filter(|n| self.parent(n).is_none())
            .collect();
        out.extend(
            self.model
                .cluster_queues
                .iter()
                .filter(|(_, cq)| non_empty(cq.spec.cohort_name.as_ref()).is_none())
                .map(|(n, _)| Node::ClusterQueue(n.clone())),
        );
        out
    }

    fn groups(&self, node: &Node) -> &'m [ResourceGroup] {
        let model: &'m Model = self.model;
        match node {
            Node::ClusterQueue(n) => model
                .cluster_queues
                .get(n)
                .map_or(&[][..], |cq| &cq.spec.resource_groups[..]),
            Node::Cohort(n) => model
                .cohorts
                .get(n)
                .map_or(&[][..], |co| &co.spec.resource_groups[..]),
        }
    }

    /// The flavor-resources the node's own spec declares, in spec order.
    pub fn own_flavor_resources(&self, node: &Node) -> Vec<FlavorResource> {
        let mut out = Vec::new();
        for g in self.groups(node) {
            for f in &g.flavors {
                for r in &f.resources {
                    let fr = FlavorResource {
                        flavor: f.name.clone(),
                        resource: r.name.clone(),
                    };
                    if !out.contains(&fr) {
                        out.push(fr);
                    }
                }
            }
        }
        out
    }

    /// Every flavor-resource declared anywhere in the node's subtree, sorted.
    pub fn subtree_flavor_resources(&self, node: &Node) -> BTreeSet<FlavorResource> {
        let mut out: BTreeSet<FlavorResource> =
            self.own_flavor_resources(node).into_iter().collect();
        for c in self.children(node) {
            out.extend(self.subtree_flavor_resources(&c));
        }
        out
    }

    /// The node's own quota for `fr` (first matching entry of its spec).
    pub fn quota(&self, node: &Node, fr: &FlavorResource) -> Quota {
        for g in self.groups(node) {
            for f in g.flavors.iter().filter(|f| f.name == fr.flavor) {
                if let Some(r) = f.resources.iter().find(|r| r.name == fr.resource) {
                    let amount = |q: &gpuquota_model::Quantity| q.to_amount(&fr.resource);
                    return Quota {
                        nominal: r.nominal_quota.as_ref().map_or(Amount::ZERO, amount),
                        borrowing_limit: r.borrowing_limit.as_ref().map(amount),
                        lending_limit: r.lending_limit.as_ref().map(amount),
                    };
                }
            }
        }
        Quota::default()
    }

    /// Capacity of the subtree visible at the node (`SubtreeQuota`).
    pub fn subtree_quota(&self, node: &Node, fr: &FlavorResource) -> Amount {
        let mut total = self.quota(node, fr).nominal;
        for c in self.children(node) {
            let contribution = self
                .subtree_quota(&c, fr)
                .saturating_sub(self.local_quota(&c, fr));
            total = total.saturating_add(contribution);
        }
        total
    }

    /// The part of the subtree's capacity never visible to the parent (`localQuota`):
    /// `max(0, subtreeQuota − lendingLimit)` with a lending limit, else 0.
    pub fn local_quota(&self, node: &Node, fr: &FlavorResource) -> Amount {
        match self.quota(node, fr).lending_limit {
            Some(ll) => self
                .subtree_quota(node, fr)
                .saturating_sub(ll)
                .max(Amount::ZERO),
            None => Amount::ZERO,
        }
    }

    /// What the node contributes to its parent's `SubtreeQuota`: `subtreeQuota − localQuota`
    /// (the most it lends up).
    pub fn contribution(&self, node: &Node, fr: &FlavorResource) -> Amount {
        self.subtree_quota(node, fr)
            .saturating_sub(self.local_quota(node, fr))
    }

    /// The part of the subtree's capacity reserved for it: `localQuota` (for a ClusterQueue,
    /// `nominal − lendingLimit`, clamped at 0) when the node has a parent; the whole
    /// `subtreeQuota` for a root, which shares with nobody.
    pub fn guaranteed(&self, node: &Node, fr: &FlavorResource) -> Amount {
        if self.parent(node).is_some() {
            self.local_quota(node, fr)
        } else {
            self.subtree_quota(node, fr)
        }
    }

    /// The most the node lends to the rest of its tree: its [`contribution`](Self::contribution)
    /// when it has a parent, 0 for a root.
    pub fn lendable(&self, node: &Node, fr: &FlavorResource) -> Amount {
        if self.parent(node).is_some() {
            self.contribution(node, fr)
        } else {
            Amount::ZERO
        }
    }

    /// Usage counted at the node: a ClusterQueue's own usage; for a cohort, the sum over
    /// children of what exceeds their `localQuota`.
    pub fn usage(&self, node: &Node, fr: &FlavorResource) -> Amount {
        match node {
            Node::ClusterQueue(n) => self
                .usage
                .get(&(n.clone(), fr.clone()))
                .copied()
                .unwrap_or(Amount::ZERO),
            Node::Cohort(_) => {
                let mut total = Amount::ZERO;
                for c in self.children(node) {
                    let excess = self
                        .usage(&c, fr)
                        .saturating_sub(self.local_quota(&c, fr))
                        .max(Amount::ZERO);
                    total = total.saturating_add(excess);
                }
                total
            }
        }
    }

    /// Unused reserved capacity: `max(0, localQuota − usage)`.
    pub fn local_available(&self, node: &Node, fr: &FlavorResource) -> Amount {
        self.local_quota(node, fr)
            .saturating_sub(self.usage(node, fr))
            .max(Amount::ZERO)
    }

    /// What the node could still take without preemption, through the root (may be negative
    /// after over-admission; Kueue clamps it at 0 for a ClusterQueue, see
    /// [`available_clamped`](Self::available_clamped)).
    pub fn available(&self, node: &Node, fr: &FlavorResource) -> Amount {
        let Some(parent) = self.parent(node) else {
            return self
                .subtree_quota(node, fr)
                .saturating_sub(self.usage(node, fr));
        };
        let mut from_parent = self.available(&parent, fr);
        if let Some(bl) = self.quota(node, fr).borrowing_limit {
            let lq = self.local_quota(node, fr);
            let stored_in_parent = self.subtree_quota(node, fr).saturating_sub(lq);
            let used_in_parent = self.usage(node, fr).saturating_sub(lq).max(Amount::ZERO);
            let cap = stored_in_parent
                .saturating_sub(used_in_parent)
                .saturating_add(bl);
            from_parent = from_parent.min(cap);
        }
        self.local_available(node, fr).saturating_add(from_parent)
    }

    /// `max(0, available)`: Kueue's `Available` of a ClusterQueue.
    pub fn available_clamped(&self, node: &Node, fr: &FlavorResource) -> Amount {
        self.available(node, fr).max(Amount::ZERO)
    }

    /// The most the node can ever use with zero usage elsewhere (`potentialAvailable`):
    /// bounded by `subtreeQuota + borrowingLimit` and by what the tree above can provide.
    pub fn potential_available(&self, node: &Node, fr: &FlavorResource) -> Amount {
        let Some(parent) = self.parent(node) else {
            return self.subtree_quota(node, fr);
        };
        let mut a = self
            .local_quota(node, fr)
            .saturating_add(self.potential_available(&parent, fr));
        if let Some(bl) = self.quota(node, fr).borrowing_limit {
            a = a.min(self.subtree_quota(node, fr).saturating_add(bl));
        }
        a
    }

    /// Kueue's `status.fairSharing` of a node with `fairSharing.weight` `weight`, from the
    /// definition (kubernetes-sigs/kueue: `pkg/cache/scheduler/fair_sharing.go`): the
    /// `weightedShare` and the dominant resource. For a node with a parent, per resource `r`,
    /// `borrowed[r]` sums `max(0, usage − subtreeQuota)` over the node's
    /// [`subtree_flavor_resources`](Self::subtree_flavor_resources) of resource `r`;
    /// `lendable[r]` sums the parent's `potentialAvailable` over the root's; the ratio is
    /// `borrowed · 1000 / lendable` (as `f64`, where `lendable > 0`), the dominant resource the
    /// largest (the smaller name on ties), the share its ceiling after dividing by the weight,
    /// `i64::MAX` for weight 0 while borrowing; 0 for a root or a node that does not borrow.
    pub fn weighted_share(&self, node: &Node, weight: f64) -> (i64, Option<ResourceName>) {
        let Some(parent) = self.parent(node) else {
            return (0, None);
        };
        let mut root = parent.clone();
        while let Some(p) = self.parent(&root) {
            root = p;
        }
        let mut borrowed: BTreeMap<ResourceName, i64> = BTreeMap::new();
        for fr in self.subtree_flavor_resources(node) {
            let excess = self
                .usage(node, &fr)
                .saturating_sub(self.subtree_quota(node, &fr));
            if excess > Amount::ZERO {
                let b = borrowed.entry(fr.resource.clone()).or_insert(0);
                *b = b.saturating_add(excess.0);
            }
        }
        if borrowed.is_empty() {
            return (0, None);
        }
        let mut best: Option<(f64, ResourceName)> = None;
        for (r, b) in borrowed {
            let lendable = self
                .subtree_flavor_resources(&root)
                .iter()
                .filter(|fr| fr.resource == r)
                .fold(0i64, |acc, fr| {
                    acc.saturating_add(self.potential_available(&parent, fr).0)
                });
            if lendable <= 0 {
                continue;
            }
            let ratio = b as f64 * 1000.0 / lendable as f64;
            if best.as_ref().is_none_or(|(x, _)| ratio > *x) {
                best = Some((ratio, r));
            }
        }
        match best {
            _ if weight == 0.0 => (i64::MAX, best.map(|(_, r)| r)),
            Some((ratio, r)) => ((ratio / weight).ceil() as i64, Some(r)),
            None => (0, None),
        }
    }

    /// Depth of a node below its root (a root has depth 0).
    pub fn depth(&self, node: &Node) -> usize {
        let mut d = 0;
        let mut current = self.parent(node);
        while let Some(p) = current {
            d += 1;
            current = self.parent(&p);
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuquota_model::import_str;

    /// The worked example of hierarchical-cohort quota in `gpuquota::design`.
    const EXAMPLE: &str = "
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: root}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: f, resources: [{name: cpu, nominalQuota: 0}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: team-a}
spec:
  parentName: root
  resourceGroups:
  - coveredResources: [example.com/gpu]
    flavors: [{name: f, resources: [{name: example.com/gpu, nominalQuota: 4, borrowingLimit: 6, lendingLimit: 2}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: a1}
spec:
  cohortName: team-a
  resourceGroups:
  - coveredResources: [example.com/gpu]
    flavors: [{name: f, resources: [{name: example.com/gpu, nominalQuota: 10, lendingLimit: 4}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: a2}
spec:
  cohortName: team-a
  resourceGroups:
  - coveredResources: [example.com/gpu]
    flavors: [{name: f, resources: [{name: example.com/gpu, nominalQuota: 6, borrowingLimit: 3}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: b1}
spec:
  cohortName: root
  resourceGroups:
  - coveredResources: [example.com/gpu]
    flavors: [{name: f, resources: [{name: example.com/gpu, nominalQuota: 8}]}]
";

    fn cq(n: &str) -> Node {
        Node::ClusterQueue(n.into())
    }
    fn co(n: &str) -> Node {
        Node::Cohort(n.into())
    }

    #[test]
    fn worked_example() {
        let model = import_str("example.yaml", EXAMPLE).unwrap().model;
        let mut tree = ReferenceTree::new(&model).unwrap();
        let fr = FlavorResource::new("f", "example.com/gpu");
        tree.set_usage("a1", fr.clone(), Amount(9));
        tree.set_usage("a2", fr.clone(), Amount(7));
        tree.set_usage("b1", fr.clone(), Amount(5));
        // node: subtreeQuota, localQuota, contribution, usage, available, potentialAvailable
        let expected = [
            (cq("a1"), 10, 6, 4, 9, 7, 26),
            (cq("a2"), 6, 0, 6, 7, 2, 9),
            (co("team-a"), 14, 12, 2, 10, 7, 20),
            (cq("b1"), 8, 0, 8, 5, 5, 10),
            (co("root"), 10, 0, 10, 5, 5, 10),
        ];
        for (node, sq, lq, up, usage, avail, potential) in expected {
            assert_eq!(tree.subtree_quota(&node, &fr), Amount(sq), "{node} subtree");
            assert_eq!(tree.local_quota(&node, &fr), Amount(lq), "{node} local");
            assert_eq!(tree.contribution(&node, &fr), Amount(up), "{node} up");
            assert_eq!(tree.usage(&node, &fr), Amount(usage), "{node} usage");
            assert_eq!(
                tree.available_clamped(&node, &fr),
                Amount(avail),
                "{node} available"
            );
            assert_eq!(
                tree.potential_available(&node, &fr),
                Amount(potential),
                "{node} potential"
            );
        }
        assert_eq!(tree.roots(), vec![co("root")]);
        assert_eq!(tree.children(&co("root")), vec![co("team-a"), cq("b1")]);
        assert_eq!(tree.depth(&cq("a2")), 2);
        assert_eq!(tree.guaranteed(&cq("a1"), &fr), Amount(6));
        assert_eq!(tree.lendable(&cq("a1"), &fr), Amount(4));
        assert_eq!(tree.guaranteed(&co("root"), &fr), Amount(10));
        assert_eq!(tree.lendable(&co("root"), &fr), Amount::ZERO);
        // The cpu entry of root is another flavor-resource of the same tree.
        assert_eq!(tree.subtree_flavor_resources(&co("root")).len(), 2);
    }

    #[test]
    fn queue_without_cohort_and_implicit_cohorts() {
        let text = "
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: solo}
spec:
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: f, resources: [{name: nvidia.com/gpu, nominalQuota: 3}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: member}
spec:
  cohortName: implicit
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: f, resources: [{name: nvidia.com/gpu, nominalQuota: 2}]}]
";
        let model = import_str("t.yaml", text).unwrap().model;
        let mut tree = ReferenceTree::new(&model).unwrap();
        let fr = FlavorResource::new("f", "nvidia.com/gpu");
        tree.set_usage("solo", fr.clone(), Amount(1));
        assert_eq!(tree.available(&cq("solo"), &fr), Amount(2));
        assert_eq!(tree.potential_available(&cq("solo"), &fr), Amount(3));
        assert_eq!(tree.roots(), vec![co("implicit"), cq("solo")]);
        assert_eq!(tree.potential_available(&cq("member"), &fr), Amount(2));
        assert_eq!(tree.subtree_quota(&co("implicit"), &fr), Amount(2));
    }

    fn chain(n: usize) -> String {
        let mut text = String::new();
        for i in 0..n {
            text.push_str(&format!(
                "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {{name: c{i}}}\nspec:\n  parentName: c{}\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors: [{{name: f, resources: [{{name: cpu, nominalQuota: 1}}]}}]\n",
                i + 1
            ));
        }
        text
    }

    #[test]
    fn deep_chains_are_bounded() {
        let model = import_str("chain.yaml", &chain(MAX_DEPTH + 5))
            .unwrap()
            .model;
        assert!(matches!(
            ReferenceTree::new(&model),
            Err(QuotaTreeError::TooDeep(_))
        ));
        let model = import_str("chain.yaml", &chain(300)).unwrap().model;
        let tree = ReferenceTree::new(&model).unwrap();
        let fr = FlavorResource::new("f", "cpu");
        // c300 is the implicit root; every cohort lends its whole subtree up.
        assert_eq!(tree.roots(), vec![co("c300")]);
        assert_eq!(tree.depth(&co("c0")), 300);
        assert_eq!(tree.subtree_quota(&co("c300"), &fr), Amount(300_000));
        assert_eq!(tree.potential_available(&co("c0"), &fr), Amount(300_000));
    }

    #[test]
    fn cycles_are_errors() {
        let text = "
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: a}
spec: {parentName: b}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: b}
spec: {parentName: a}
";
        let model = import_str("t.yaml", text).unwrap().model;
        let err = ReferenceTree::new(&model).unwrap_err();
        assert_eq!(err.to_string(), "cohort cycle: a -> b -> a");
    }
}
