//! A standalone cohort tree for fair sharing, built from plain inputs (names, parents, weights,
//! quotas, usage): the input every Kueue fair-sharing computation reads when there is no
//! admission engine (`gpuquota kueue shares`, the scenario tests, embedders).
//!
//! Cohorts are inner nodes, ClusterQueues leaves. The quota numbers (`SubtreeQuota`,
//! `localQuota`, `potentialAvailable`, usage propagation, `available`) are those of one
//! [`QuotaTree`], the crate's single implementation of Kueue's quota arithmetic
//! ([`crate::quota`]); this type adds names, children by name, `fairSharing.weight`s and the
//! per-resource `lendable` amount at each node's parent (fixed for the tree's lifetime). Usage
//! changes go through [`FairShareTree::add_usage`] / [`FairShareTree::remove_usage`], Kueue's
//! incremental rules, so cohort usage stays exact.
//!
//! The tree is one implementor of [`QuotaView`], the trait the fair-sharing algorithms read;
//! the gpuquota-cohort engine implements the same trait over its own quota forest, which holds
//! a [`QuotaTree`] too.

use std::collections::BTreeMap;

use gpuquota_model::{Amount, ResourceName};

use crate::drs::{Drs, FlavorResource, FrQuantities};
use crate::error::FairShareError;
use crate::quota::{FrQuota, QuotaTree, Usage};
use crate::view::{self, QuotaView, QuotaViewMut};

pub use crate::view::{NodeId, NodeKind};

/// A node's own quota for one flavor-resource, in Kueue's units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NodeQuota {
    /// `nominalQuota`.
    pub nominal: Amount,
    /// `borrowingLimit`, if set.
    pub borrowing_limit: Option<Amount>,
    /// `lendingLimit`, if set.
    pub lending_limit: Option<Amount>,
}

impl NodeQuota {
    /// A quota with only a nominal amount.
    pub fn nominal(n: i64) -> NodeQuota {
        NodeQuota {
            nominal: Amount(n),
            ..NodeQuota::default()
        }
    }

    /// Sets the borrowing limit.
    pub fn with_borrowing_limit(mut self, bl: i64) -> NodeQuota {
        self.borrowing_limit = Some(Amount(bl));
        self
    }

    /// Sets the lending limit.
    pub fn with_lending_limit(mut self, ll: i64) -> NodeQuota {
        self.lending_limit = Some(Amount(ll));
        self
    }
}

#[derive(Debug, Clone)]
struct NodeSpec {
    parent: Option<String>,
    weight: f64,
    quotas: BTreeMap<FlavorResource, NodeQuota>,
}

/// Builds a [`FairShareTree`] from plain inputs.
///
/// ```
/// use gpuquota_fairshare::tree::{FairShareTreeBuilder, NodeQuota};
/// use gpuquota_fairshare::FlavorResource;
///
/// let gpu = FlavorResource::new("a100", "nvidia.com/gpu");
/// let mut b = FairShareTreeBuilder::new();
/// b.cluster_queue("a", Some("org"), 1.0)?.quota(gpu.clone(), NodeQuota::nominal(4));
/// b.cluster_queue("b", Some("org"), 1.0)?.quota(gpu.clone(), NodeQuota::nominal(4));
/// b.usage("a", gpu.clone(), 6);
/// let tree = b.build()?;
/// let a = tree.cluster_queue("a").unwrap();
/// assert_eq!(tree.drs(a).weighted_share(), 250); // 2 borrowed × 1000 / 8 lendable
/// # Ok::<(), gpuquota_fairshare::FairShareError>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct FairShareTreeBuilder {
    cohorts: BTreeMap<String, NodeSpec>,
    cqs: BTreeMap<String, NodeSpec>,
    usage: BTreeMap<String, FrQuantities>,
}

/// Adds quotas to a node being built.
#[derive(Debug)]
pub struct NodeBuilder<'a> {
    spec: &'a mut NodeSpec,
}

impl NodeBuilder<'_> {
    /// Sets the node's quota for one flavor-resource.
    pub fn quota(&mut self, fr: FlavorResource, q: NodeQuota) -> &mut Self {
        self.spec.quotas.insert(fr, q);
        self
    }
}

impl FairShareTreeBuilder {
    /// An empty builder.
    pub fn new() -> FairShareTreeBuilder {
        FairShareTreeBuilder::default()
    }

    fn node<'a>(
        map: &'a mut BTreeMap<String, NodeSpec>,
        kind: &str,
        name: &str,
        parent: Option<&str>,
        weight: f64,
    ) -> Result<NodeBuilder<'a>, FairShareError> {
        if !(weight >= 0.0 && weight.is_finite()) {
            return Err(FairShareError::InvalidWeight {
                object: format!("{kind} \"{name}\""),
                value: weight.to_string(),
                message: "must be a finite number ≥ 0".into(),
            });
        }
        if map.contains_key(name) {
            return Err(FairShareError::Duplicate {
                kind: kind.into(),
                name: name.into(),
            });
        }
        let spec = map.entry(name.to_string()).or_insert(NodeSpec {
            parent: parent.map(str::to_string),
            weight,
            quotas: BTreeMap::new(),
        });
        Ok(NodeBuilder { spec })
    }

    /// Declares a Cohort with its parent (`None` for a root) and `fairSharing.weight`.
    ///
    /// # Errors
    /// Duplicate name or invalid weight.
    pub fn cohort(
        &mut self,
        name: &str,
        parent: Option<&str>,
        weight: f64,
    ) -> Result<NodeBuilder<'_>, FairShareError> {
        Self::node(&mut self.cohorts, "Cohort", name, parent, weight)
    }

    /// Declares a ClusterQueue with its cohort (`None` for none) and `fairSharing.weight`.
    ///
    /// # Errors
    /// Duplicate name or invalid weight.
    pub fn cluster_queue(
        &mut self,
        name: &str,
        cohort: Option<&str>,
        weight: f64,
    ) -> Result<NodeBuilder<'_>, FairShareError> {
        Self::node(&mut self.cqs, "ClusterQueue", name, cohort, weight)
    }

    /// Adds usage (admitted workloads) to a ClusterQueue.
    pub fn usage(&mut self, cluster_queue: &str, fr: FlavorResource, amount: i64) -> &mut Self {
        let slot = self
            .usage
            .entry(cluster_queue.to_string())
            .or_default()
            .entry(fr)
            .or_insert(Amount::ZERO);
        *slot = slot.saturating_add(Amount(amount));
        self
    }

    /// No quota, limit or usage is negative; usage names only known ClusterQueues.
    fn check_amounts(&self) -> Result<(), FairShareError> {
        for (kind, map) in [("Cohort", &self.cohorts), ("ClusterQueue", &self.cqs)] {
            for (name, spec) in map {
                for (fr, q) in &spec.quotas {
                    for (field, v) in [
                        ("nominalQuota", Some(q.nominal)),
                        ("borrowingLimit", q.borrowing_limit),
                        ("lendingLimit", q.lending_limit),
                    ] {
                        if let Some(v) = v
                            && v.0 < 0
                        {
                            return Err(FairShareError::Negative {
                                object: format!("{kind} \"{name}\""),
                                field: format!(
                                    "resourceGroups[flavor={}][{}].{field}",
                                    fr.flavor, fr.resource
                                ),
                                value: v.0.to_string(),
                            });
                        }
                    }
                }
            }
        }
        for (cq, usage) in &self.usage {
            if !self.cqs.contains_key(cq) {
                return Err(FairShareError::UnknownReference {
                    object: "usage".into(),
                    field: "clusterQueue".into(),
                    kind: "ClusterQueue".into(),
                    name: cq.clone(),
                });
            }
            for (fr, a) in usage {
                if a.0 < 0 {
                    return Err(FairShareError::Negative {
                        object: format!("ClusterQueue \"{cq}\""),
                        field: format!("usage[flavor={}][{}]", fr.flavor, fr.resource),
                        value: a.0.to_string(),
                    });
                }
            }
        }
        Ok(())
    }

    /// Builds the tree: implicit cohorts for parents without an object, subtree quotas,
    /// usages, potential availability and lendable amounts.
    ///
    /// # Errors
    /// Negative quota or usage, usage for an unknown ClusterQueue, or a cohort cycle.
    ///
    /// # Complexity
    /// O(N·F) for N nodes and F flavor-resources.
    pub fn build(&self) -> Result<FairShareTree, FairShareError> {
        self.check_amounts()?;
        // Cohort set including implicit ones.
        let mut cohort_specs: BTreeMap<String, NodeSpec> = self.cohorts.clone();
        let mut implicit = Vec::new();
        for spec in self.cohorts.values().chain(self.cqs.values()) {
            if let Some(p) = &spec.parent
                && !cohort_specs.contains_key(p)
            {
                implicit.push(p.clone());
                cohort_specs.insert(
                    p.clone(),
                    NodeSpec {
                        parent: None,
                        weight: crate::drs::DEFAULT_WEIGHT,
                        quotas: BTreeMap::new(),
                    },
                );
            }
        }
        // Cycle detection and the depth limit, in one linear pass: the first cohort (by name)
        // whose chain enters a cycle, else the first at depth MAX_TREE_DEPTH + 1.
        let names: Vec<&String> = cohort_specs.keys().collect();
        let index = |n: &str| names.binary_search_by(|x| x.as_str().cmp(n)).ok();
        let parents: Vec<Option<usize>> = cohort_specs
            .values()
            .map(|s| s.parent.as_deref().and_then(index))
            .collect();
        let depths = chain_depths(&parents);
        if let Some(i) = depths.iter().position(Option::is_none) {
            return Err(FairShareError::CohortCycle {
                cohort: names[i].clone(),
            });
        }
        if let Some(i) = depths
            .iter()
            .position(|d| *d == Some(gpuquota_model::limits::MAX_TREE_DEPTH + 1))
        {
            return Err(FairShareError::TreeTooDeep {
                cohort: names[i].clone(),
            });
        }
        // Flavor-resources.
        let mut fr_set: BTreeMap<FlavorResource, ()> = BTreeMap::new();
        for spec in cohort_specs.values().chain(self.cqs.values()) {
            for fr in spec.quotas.keys() {
                fr_set.insert(fr.clone(), ());
            }
        }
        for u in self.usage.values() {
            for fr in u.keys() {
                fr_set.insert(fr.clone(), ());
            }
        }
        let frs: Vec<FlavorResource> = fr_set.into_keys().collect();
        let mut resources: Vec<ResourceName> = frs.iter().map(|f| f.resource.clone()).collect();
        resources.sort();
        resources.dedup();
        let fr_resource: Vec<usize> = frs
            .iter()
            .map(|f| resources.binary_search(&f.resource).unwrap_or(0))
            .collect();
        let nf = frs.len();

        // Nodes: cohorts first (by name), then ClusterQueues (by name).
        let mut nodes: Vec<Node> = Vec::new();
        let mut cohort_ids = BTreeMap::new();
        let mut cq_ids = BTreeMap::new();
        for (name, spec) in &cohort_specs {
            cohort_ids.insert(name.clone(), NodeId(nodes.len()));
            nodes.push(Node::new(name, NodeKind::Cohort, spec));
            if implicit.contains(name)
                && let Some(n) = nodes.last_mut()
            {
                n.implicit = true;
            }
        }
        for (name, spec) in &self.cqs {
            cq_ids.insert(name.clone(), NodeId(nodes.len()));
            nodes.push(Node::new(name, NodeKind::ClusterQueue, spec));
        }
        let specs: Vec<&NodeSpec> = cohort_specs.values().chain(self.cqs.values()).collect();
        let mut quotas = Vec::with_capacity(specs.len() * nf);
        for spec in &specs {
            quotas.extend(frs.iter().map(|fr| match spec.quotas.get(fr) {
                Some(q) => FrQuota {
                    nominal: q.nominal,
                    borrowing_limit: q.borrowing_limit,
                    lending_limit: q.lending_limit,
                    declared: true,
                },
                None => FrQuota::default(),
            }));
        }
        for (i, spec) in specs.iter().enumerate() {
            if let Some(p) = &spec.parent {
                let pid = cohort_ids[p];
                nodes[i].parent = Some(pid);
                match nodes[i].kind {
                    NodeKind::Cohort => nodes[pid.0].child_cohorts.push(NodeId(i)),
                    NodeKind::ClusterQueue => nodes[pid.0].child_cqs.push(NodeId(i)),
                }
            }
        }
        let mut res_frs = vec![Vec::new(); resources.len()];
        for (f, r) in fr_resource.iter().enumerate() {
            res_frs[*r].push(f);
        }
        // Children in summing order: child cohorts, then ClusterQueues, each by name.
        let parents: Vec<Option<usize>> = nodes.iter().map(|n| n.parent.map(|p| p.0)).collect();
        let children: Vec<Vec<usize>> = nodes
            .iter()
            .map(|n| {
                n.child_cohorts
                    .iter()
                    .chain(&n.child_cqs)
                    .map(|c| c.0)
                    .collect()
            })
            .collect();
        let cohort: Vec<bool> = nodes.iter().map(|n| n.kind == NodeKind::Cohort).collect();
        let quota_tree = QuotaTree::new(&parents, &children, &cohort, nf, quotas);
        let (lendable, lendable_dense) = view::lendables(&quota_tree, &frs, &res_frs);
        for ((node, l), d) in nodes.iter_mut().zip(lendable).zip(lendable_dense) {
            node.lendable = l;
            node.lendable_dense = d;
        }
        let usage = quota_tree.empty_usage();
        let mut tree = FairShareTree {
            nodes,
            frs,
            cohort_ids,
            cq_ids,
            res_frs,
            quota_tree,
            usage,
        };
        for (cq, usage) in &self.usage {
            let id = tree.cq_ids[cq];
            let dense = view::dense(&tree, usage);
            view::add_usage_dense(&mut tree, id, &dense);
        }
        Ok(tree)
    }
}

#[derive(Debug, Clone)]
struct Node {
    name: String,
    kind: NodeKind,
    implicit: bool,
    parent: Option<NodeId>,
    child_cohorts: Vec<NodeId>,
    child_cqs: Vec<NodeId>,
    weight: f64,
    /// Lendable at the parent, per resource (empty for roots).
    lendable: BTreeMap<ResourceName, Amount>,
    /// The same, dense by resource index.
    lendable_dense: Vec<Amount>,
}

impl Node {
    fn new(name: &str, kind: NodeKind, spec: &NodeSpec) -> Node {
        Node {
            name: name.to_string(),
            kind,
            implicit: false,
            parent: None,
            child_cohorts: Vec::new(),
            child_cqs: Vec::new(),
            weight: spec.weight,
            lendable: BTreeMap::new(),
            lendable_dense: Vec::new(),
        }
    }
}

/// A cohort forest with Kueue's quota arithmetic (a [`QuotaTree`] and its usage) and what
/// fair sharing reads besides.
#[derive(Debug, Clone)]
pub struct FairShareTree {
    nodes: Vec<Node>,
    frs: Vec<FlavorResource>,
    cohort_ids: BTreeMap<String, NodeId>,
    cq_ids: BTreeMap<String, NodeId>,
    /// Flavor-resource indices grouped by resource index.
    res_frs: Vec<Vec<usize>>,
    quota_tree: QuotaTree,
    usage: Usage,
}

impl FairShareTree {
    /// The ClusterQueue called `name`.
    pub fn cluster_queue(&self, name: &str) -> Option<NodeId> {
        self.cq_ids.get(name).copied()
    }

    /// The Cohort called `name` (explicit or implicit).
    pub fn cohort(&self, name: &str) -> Option<NodeId> {
        self.cohort_ids.get(name).copied()
    }

    /// Every ClusterQueue, by name.
    pub fn cluster_queues(&self) -> impl Iterator<Item = (&str, NodeId)> {
        self.cq_ids.iter().map(|(k, v)| (k.as_str(), *v))
    }

    /// Every Cohort, by name.
    pub fn cohorts(&self) -> impl Iterator<Item = (&str, NodeId)> {
        self.cohort_ids.iter().map(|(k, v)| (k.as_str(), *v))
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// True when the tree has no node.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The node's name.
    pub fn name(&self, n: NodeId) -> &str {
        &self.nodes[n.0].name
    }

    /// ClusterQueue or Cohort.
    pub fn kind(&self, n: NodeId) -> NodeKind {
        self.nodes[n.0].kind
    }

    /// True for a cohort that is only referenced (no Cohort object).
    pub fn is_implicit(&self, n: NodeId) -> bool {
        self.nodes[n.0].implicit
    }

    /// The parent cohort.
    pub fn parent(&self, n: NodeId) -> Option<NodeId> {
        self.nodes[n.0].parent
    }

    /// The root of the node's tree (itself for a root).
    pub fn root(&self, n: NodeId) -> NodeId {
        NodeId(self.quota_tree.root(n.0))
    }

    /// The tree's quota numbers (node ids and flavor-resource indices are this tree's).
    pub fn quota_tree(&self) -> &QuotaTree {
        &self.quota_tree
    }

    /// Child cohorts, by name.
    pub fn child_cohorts(&self, n: NodeId) -> &[NodeId] {
        &self.nodes[n.0].child_cohorts
    }

    /// Child ClusterQueues, by name.
    pub fn child_cluster_queues(&self, n: NodeId) -> &[NodeId] {
        &self.nodes[n.0].child_cqs
    }

    /// The node's `fairSharing.weight`.
    pub fn weight(&self, n: NodeId) -> f64 {
        self.nodes[n.0].weight
    }

    /// Every flavor-resource of the forest, ascending.
    pub fn flavor_resources(&self) -> &[FlavorResource] {
        &self.frs
    }

    fn fr_index(&self, fr: &FlavorResource) -> Option<usize> {
        self.frs.binary_search(fr).ok()
    }

    /// The dense index of a flavor-resource in [`FairShareTree::flavor_resources`].
    pub fn flavor_resource_index(&self, fr: &FlavorResource) -> Option<usize> {
        self.fr_index(fr)
    }

    /// `SubtreeQuota(n)[fr]`.
    pub fn subtree_quota(&self, n: NodeId, fr: &FlavorResource) -> Amount {
        self.fr_index(fr)
            .map_or(Amount::ZERO, |i| self.quota_tree.subtree_quota(n.0, i))
    }

    /// `Usage(n)[fr]`.
    pub fn usage(&self, n: NodeId, fr: &FlavorResource) -> Amount {
        self.fr_index(fr)
            .map_or(Amount::ZERO, |i| self.quota_tree.usage(&self.usage, n.0, i))
    }

    /// `localQuota(n)[fr]`: the guaranteed part never visible to the parent.
    pub fn local_quota(&self, n: NodeId, fr: &FlavorResource) -> Amount {
        self.fr_index(fr)
            .map_or(Amount::ZERO, |i| self.quota_tree.local_quota(n.0, i))
    }

    /// `potentialAvailable(n)[fr]` (`resource_node.go`).
    pub fn potential_available(&self, n: NodeId, fr: &FlavorResource) -> Amount {
        self.fr_index(fr).map_or(Amount::ZERO, |i| {
            self.quota_tree.potential_available(n.0, i)
        })
    }

    /// `Available(cq)[fr]` = `max(0, available(cq))` (`resource_node.go`).
    ///
    /// # Complexity
    /// O(depth).
    pub fn available(&self, n: NodeId, fr: &FlavorResource) -> Amount {
        match self.fr_index(fr) {
            Some(i) => self.quota_tree.available(&self.usage, n.0, i),
            None => Amount::ZERO,
        }
    }

    /// True when `request` fits the ClusterQueue now: `request[fr] ≤ Available(cq, fr)` for
    /// every flavor-resource (Kueue's `workloadFits` with borrowing allowed, without TAS).
    pub fn fits(&self, cq: NodeId, request: &FrQuantities) -> bool {
        view::fits(self, cq, request)
    }

    /// Kueue's `Borrowing(cq, fr)` / cohort `BorrowingWith(c, fr, 0)`: usage above subtree quota.
    pub fn is_borrowing(&self, n: NodeId, fr: &FlavorResource) -> bool {
        view::is_borrowing(self, n, fr)
    }

    /// Kueue's `addUsage`: adds `usage` to a ClusterQueue; the part above each node's local
    /// availability flows up to its parent.
    ///
    /// # Complexity
    /// O(|usage| · (log F + depth)).
    pub fn add_usage(&mut self, cq: NodeId, usage: &FrQuantities) {
        let d = view::dense(self, usage);
        view::add_usage_dense(self, cq, &d);
    }

    /// Kueue's `removeUsage`, the exact inverse of [`FairShareTree::add_usage`].
    ///
    /// # Complexity
    /// O(|usage| · (log F + depth)).
    pub fn remove_usage(&mut self, cq: NodeId, usage: &FrQuantities) {
        let d = view::dense(self, usage);
        view::remove_usage_dense(self, cq, &d);
    }

    /// The node's DRS with its current usage (what `status.fairSharing` reports).
    ///
    /// # Complexity
    /// O(F log R).
    pub fn drs(&self, n: NodeId) -> Drs {
        view::drs(self, n)
    }

    /// The DRS of ClusterQueue `cq` and of each ancestor below the root, with `request` added
    /// to `cq` (Kueue's `SimulateUsageAddition`), without changing the tree. Element 0 is the
    /// ClusterQueue; the last element is the child of the root.
    ///
    /// # Complexity
    /// O(depth · F log R).
    pub fn drs_path_with(&self, cq: NodeId, request: &FrQuantities) -> Vec<(NodeId, Drs)> {
        let mut out = Vec::new();
        let mut req = view::dense(self, request);
        let mut cur = cq;
        while let Some(p) = self.nodes[cur.0].parent {
            out.push((cur, view::drs_dense(self, cur, &req)));
            req = view::pass_up(self, cur, &req);
            cur = p;
        }
        out
    }
}

/// The standalone tree seen by the fair-sharing algorithms; every accessor is O(1) but
/// [`QuotaView::flavor_resource_index`] and [`QuotaView::cluster_queue`] (O(log n)).
impl QuotaView for FairShareTree {
    fn quota_tree(&self) -> &QuotaTree {
        &self.quota_tree
    }

    fn current_usage(&self) -> &Usage {
        &self.usage
    }

    fn kind(&self, n: NodeId) -> NodeKind {
        self.nodes[n.0].kind
    }

    fn child_cohorts(&self, n: NodeId) -> &[NodeId] {
        &self.nodes[n.0].child_cohorts
    }

    fn child_cluster_queues(&self, n: NodeId) -> &[NodeId] {
        &self.nodes[n.0].child_cqs
    }

    fn cluster_queue(&self, name: &str) -> Option<NodeId> {
        self.cq_ids.get(name).copied()
    }

    fn weight(&self, n: NodeId) -> f64 {
        self.nodes[n.0].weight
    }

    fn flavor_resources(&self) -> &[FlavorResource] {
        &self.frs
    }

    fn flavor_resource_index(&self, fr: &FlavorResource) -> Option<usize> {
        self.fr_index(fr)
    }

    fn resource_groups(&self) -> &[Vec<usize>] {
        &self.res_frs
    }

    fn lendable(&self, n: NodeId) -> &BTreeMap<ResourceName, Amount> {
        &self.nodes[n.0].lendable
    }

    fn lendable_at(&self, n: NodeId, r: usize) -> Amount {
        self.nodes[n.0]
            .lendable_dense
            .get(r)
            .copied()
            .unwrap_or(Amount::ZERO)
    }
}

impl QuotaViewMut for FairShareTree {
    fn usage_mut(&mut self) -> (&QuotaTree, &mut Usage) {
        (&self.quota_tree, &mut self.usage)
    }
}

/// The depth of every node of a forest given by parent indices: 1 for a root, one more per
/// level below; `None` for a node whose parent chain enters a cycle.
///
/// Used for the cohort-cycle check and the depth limit
/// ([`gpuquota_model::limits::MAX_TREE_DEPTH`]) by this crate and the Kueue engine.
///
/// # Complexity
/// O(N): every node is walked once (the walk stops at the first node already known).
pub fn chain_depths(parent: &[Option<usize>]) -> Vec<Option<usize>> {
    const UNSEEN: u8 = 0;
    const ON_PATH: u8 = 1;
    const DONE: u8 = 2;
    let n = parent.len();
    let mut state = vec![UNSEEN; n];
    let mut depth: Vec<Option<usize>> = vec![None; n];
    let mut path = Vec::new();
    for start in 0..n {
        if state[start] != UNSEEN {
            continue;
        }
        let mut cur = start;
        let base = loop {
            match state[cur] {
                DONE => break depth[cur],
                ON_PATH => break None,
                _ => {}
            }
            state[cur] = ON_PATH;
            path.push(cur);
            match parent[cur].filter(|&p| p < n) {
                None => break Some(0),
                Some(p) => cur = p,
            }
        };
        let mut d = base;
        while let Some(v) = path.pop() {
            d = d.map(|x| x + 1);
            depth[v] = d;
            state[v] = DONE;
        }
    }
    depth
}

#[cfg(test)]
mod tests {
    #[test]
    fn chain_depths_marks_cycles_and_counts_levels() {
        // 0 <- 1 <- 2 (a chain), 3 <-> 4 (a cycle), 5 -> 4 (enters the cycle), 6 alone
        let parent = [None, Some(0), Some(1), Some(4), Some(3), Some(4), None];
        assert_eq!(
            chain_depths(&parent),
            [Some(1), Some(2), Some(3), None, None, None, Some(1)]
        );
        // a self-parent is a cycle
        assert_eq!(chain_depths(&[Some(0)]), [None]);
        // a long chain is linear (100,000 levels)
        let long: Vec<Option<usize>> = (0..100_000usize).map(|i| i.checked_sub(1)).collect();
        assert_eq!(chain_depths(&long)[99_999], Some(100_000));
    }

    use super::*;

    /// The worked example of `gpuquota::design`.
    pub(crate) fn example() -> FairShareTree {
        let fr = FlavorResource::new("f", "cpu");
        let mut b = FairShareTreeBuilder::new();
        b.cohort("root", None, 1.0).unwrap();
        b.cohort("teamA", Some("root"), 1.0).unwrap().quota(
            fr.clone(),
            NodeQuota::nominal(4)
                .with_borrowing_limit(6)
                .with_lending_limit(2),
        );
        b.cluster_queue("a1", Some("teamA"), 1.0)
            .unwrap()
            .quota(fr.clone(), NodeQuota::nominal(10).with_lending_limit(4));
        b.cluster_queue("a2", Some("teamA"), 1.0)
            .unwrap()
            .quota(fr.clone(), NodeQuota::nominal(6).with_borrowing_limit(3));
        b.cluster_queue("b1", Some("root"), 1.0)
            .unwrap()
            .quota(fr.clone(), NodeQuota::nominal(8));
        b.usage("a1", fr.clone(), 9);
        b.usage("a2", fr.clone(), 7);
        b.usage("b1", fr, 5);
        b.build().unwrap()
    }

    #[test]
    fn worked_example_section_3_4() {
        let t = example();
        let fr = FlavorResource::new("f", "cpu");
        let id = |n: &str| t.cluster_queue(n).or(t.cohort(n)).unwrap();
        let row = |n: &str| {
            (
                t.subtree_quota(id(n), &fr).0,
                t.local_quota(id(n), &fr).0,
                t.usage(id(n), &fr).0,
                t.available(id(n), &fr).0,
                t.potential_available(id(n), &fr).0,
            )
        };
        assert_eq!(row("a1"), (10, 6, 9, 7, 26));
        assert_eq!(row("a2"), (6, 0, 7, 2, 9));
        assert_eq!(row("teamA"), (14, 12, 10, 7, 20));
        assert_eq!(row("b1"), (8, 0, 5, 5, 10));
        assert_eq!(row("root"), (10, 0, 5, 5, 10));
        // DRS of a2 = 1 × 1000 / potentialAvailable(teamA) = 50.
        assert_eq!(t.drs(id("a2")).weighted_share(), 50);
    }

    #[test]
    fn add_remove_roundtrip() {
        let mut t = example();
        let fr = FlavorResource::new("f", "cpu");
        let a1 = t.cluster_queue("a1").unwrap();
        let before = t.usage.clone();
        let q: FrQuantities = [(fr, Amount(5))].into_iter().collect();
        t.add_usage(a1, &q);
        let f = FlavorResource::new("f", "cpu");
        assert_eq!(t.usage(t.cohort("teamA").unwrap(), &f).0, 15);
        // teamA had 2 local available: 3 of the 5 reach the root.
        assert_eq!(t.usage(t.cohort("root").unwrap(), &f).0, 8);
        t.remove_usage(a1, &q);
        let after = t.usage.clone();
        assert_eq!(before, after);
    }

    #[test]
    fn cycle_is_an_error() {
        let mut b = FairShareTreeBuilder::new();
        b.cohort("x", Some("y"), 1.0).unwrap();
        b.cohort("y", Some("x"), 1.0).unwrap();
        assert!(matches!(b.build(), Err(FairShareError::CohortCycle { .. })));
    }
}
