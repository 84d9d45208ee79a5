//! The engine's quota forest seen by the fair-sharing algorithms: [`ForestView`] implements
//! [`QuotaView`] (and [`QuotaViewMut`]) over [`QuotaForest`] and a cycle snapshot's [`Usage`],
//! so dominant resource shares, the tournament and fair-sharing preemption read the numbers the
//! engine admits against, with no second tree to keep in step.
//!
//! The forest has no weights and no per-subtree "declared" sets, so a `FairIndex` holds what
//! fair sharing adds to it, computed once per [`super::FairSharing`]: every node's
//! `fairSharing.weight`, the `SubtreeQuota` keys, the lendable amounts at each node's parent,
//! children split into cohorts and ClusterQueues by name, and the flavor-resource names.

use std::borrow::{Borrow, BorrowMut};
use std::collections::BTreeMap;

use gpuquota_fairshare::FlavorResource;
use gpuquota_fairshare::drs::lendable;
use gpuquota_fairshare::view::{NodeId as ViewNode, NodeKind as ViewKind, QuotaView, QuotaViewMut};
use gpuquota_model::{Amount, ResourceName};

use crate::ids::Table;
use crate::tree::{FrId, NodeId, NodeKind, QuotaForest, Usage};
use crate::world::World;

/// The fair-sharing view's name of an engine node (the same dense index).
fn view_node(n: NodeId) -> ViewNode {
    ViewNode::from_index(n.index())
}

/// The engine node a fair-sharing view's node names.
fn engine_node(n: ViewNode) -> NodeId {
    NodeId::new(n.index())
}

/// What fair sharing adds to the engine's [`QuotaForest`] (see the module docs); built once,
/// shared by every [`ForestView`].
#[derive(Debug, Clone)]
pub(crate) struct FairIndex {
    /// Name of every engine flavor-resource (by [`FrId`]).
    pub(crate) fr_names: Table<FrId, FlavorResource>,
    fr_by_name: BTreeMap<FlavorResource, usize>,
    /// Flavor-resource ids per resource, resources by ascending name.
    res_groups: Vec<Vec<usize>>,
    weights: Vec<f64>,
    child_cohorts: Vec<Vec<ViewNode>>,
    child_cqs: Vec<Vec<ViewNode>>,
    cq_by_name: BTreeMap<String, ViewNode>,
    /// `in_subtree[node * frs + fr]`: `fr` is a key of the node's `SubtreeQuota`.
    in_subtree: Vec<bool>,
    /// Lendable at the node's parent, per resource name (empty for roots).
    lendable: Vec<BTreeMap<ResourceName, Amount>>,
    /// The same by resource group (`lendable_dense[node * groups + group]`).
    lendable_dense: Vec<Amount>,
}

impl FairIndex {
    /// Builds the index of `world`'s forest with every node's `fairSharing.weight`
    /// (`weights[node]`).
    ///
    /// # Complexity
    /// O(N·F + N log N) for N nodes and F flavor-resources.
    pub(crate) fn new(world: &World, weights: Vec<f64>) -> FairIndex {
        let t = &world.tree;
        let n = t.nodes.len();
        let nf = t.frs;
        let fr_names: Table<FrId, FlavorResource> = t
            .fr_ids()
            .map(|f| FlavorResource::new(world.fr_flavor(f), world.fr_resource(f).as_str()))
            .collect();
        let fr_by_name = fr_names
            .iter()
            .enumerate()
            .map(|(i, f)| (f.clone(), i))
            .collect();
        let mut by_resource: BTreeMap<&ResourceName, Vec<usize>> = BTreeMap::new();
        for (i, f) in fr_names.iter().enumerate() {
            by_resource.entry(&f.resource).or_default().push(i);
        }
        let res_groups: Vec<Vec<usize>> = by_resource.into_values().collect();
        // children by name, cohorts and ClusterQueues apart
        let mut child_cohorts = vec![Vec::new(); n];
        let mut child_cqs = vec![Vec::new(); n];
        let mut cq_by_name = BTreeMap::new();
        for (i, node) in t.nodes.iter_enumerated() {
            let i = i.index();
            let mut kids: Vec<&NodeId> = node.children.iter().collect();
            kids.sort_by(|a, b| t.nodes[**a].name.cmp(&t.nodes[**b].name).then(a.cmp(b)));
            for &c in kids {
                let id = view_node(c);
                match t.nodes[c].kind {
                    NodeKind::Cohort => child_cohorts[i].push(id),
                    NodeKind::ClusterQueue(_) => child_cqs[i].push(id),
                }
            }
            if let NodeKind::ClusterQueue(_) = node.kind {
                cq_by_name.insert(node.name.clone(), ViewNode::from_index(i));
            }
        }
        // SubtreeQuota keys, children before parents
        let mut in_subtree = vec![false; n * nf];
        for id in post_order(t) {
            let base = id.index() * nf;
            for (f, fr) in t.fr_ids().enumerate() {
                let own = t.quota(id, fr).declared;
                let below = t.nodes[id]
                    .children
                    .iter()
                    .any(|&c| in_subtree[c.index() * nf + f]);
                in_subtree[base + f] = own || below;
            }
        }
        // lendable at the parent: over every flavor-resource of the root's SubtreeQuota
        let groups = res_groups.len();
        let mut lend = vec![BTreeMap::new(); n];
        let mut lendable_dense = vec![Amount::ZERO; n * groups];
        for (i, node) in t.nodes.iter().enumerate() {
            let Some(p) = node.parent else { continue };
            let root = node.root.index();
            let l = lendable(
                fr_names
                    .iter()
                    .enumerate()
                    .filter(|(f, _)| in_subtree[root * nf + f])
                    .map(|(f, fr)| (fr, t.potential_available(p, FrId::new(f)))),
            );
            for (g, frs) in res_groups.iter().enumerate() {
                if let Some(&f) = frs.first() {
                    lendable_dense[i * groups + g] = l
                        .get(&fr_names[FrId::new(f)].resource)
                        .copied()
                        .unwrap_or(Amount::ZERO);
                }
            }
            lend[i] = l;
        }
        FairIndex {
            fr_names,
            fr_by_name,
            res_groups,
            weights,
            child_cohorts,
            child_cqs,
            cq_by_name,
            in_subtree,
            lendable: lend,
            lendable_dense,
        }
    }
}

/// Every node, children before parents.
fn post_order(t: &QuotaForest) -> Vec<NodeId> {
    let mut order = Vec::with_capacity(t.nodes.len());
    for (r, node) in t.nodes.iter_enumerated() {
        if node.parent.is_some() {
            continue;
        }
        let mut stack = vec![(r, false)];
        while let Some((id, done)) = stack.pop() {
            if done {
                order.push(id);
                continue;
            }
            stack.push((id, true));
            for &c in t.nodes[id].children.iter().rev() {
                stack.push((c, false));
            }
        }
    }
    order
}

/// The engine's forest with a snapshot's usage, as fair sharing reads it (see the module
/// docs). `U` is `&Usage` for reading (the tournament) or `&mut Usage` for the simulated
/// additions and removals of fair-sharing preemption, which restores the snapshot exactly.
#[derive(Debug)]
pub struct ForestView<'a, U> {
    forest: &'a QuotaForest,
    index: &'a FairIndex,
    usage: U,
}

impl<'a, U: Borrow<Usage>> ForestView<'a, U> {
    /// The view of `forest` (the tree `index` was built for) with `usage`.
    pub(crate) fn new(forest: &'a QuotaForest, index: &'a FairIndex, usage: U) -> Self {
        ForestView {
            forest,
            index,
            usage,
        }
    }

    /// The usage the view reads.
    pub fn usage(&self) -> &Usage {
        self.usage.borrow()
    }
}

impl<U: Borrow<Usage>> QuotaView for ForestView<'_, U> {
    fn node_count(&self) -> usize {
        self.forest.nodes.len()
    }

    fn kind(&self, n: ViewNode) -> ViewKind {
        match self.forest.nodes[engine_node(n)].kind {
            NodeKind::Cohort => ViewKind::Cohort,
            NodeKind::ClusterQueue(_) => ViewKind::ClusterQueue,
        }
    }

    fn parent(&self, n: ViewNode) -> Option<ViewNode> {
        self.forest.nodes[engine_node(n)].parent.map(view_node)
    }

    fn root(&self, n: ViewNode) -> ViewNode {
        view_node(self.forest.nodes[engine_node(n)].root)
    }

    fn child_cohorts(&self, n: ViewNode) -> &[ViewNode] {
        &self.index.child_cohorts[n.index()]
    }

    fn child_cluster_queues(&self, n: ViewNode) -> &[ViewNode] {
        &self.index.child_cqs[n.index()]
    }

    fn cluster_queue(&self, name: &str) -> Option<ViewNode> {
        self.index.cq_by_name.get(name).copied()
    }

    fn weight(&self, n: ViewNode) -> f64 {
        self.index.weights[n.index()]
    }

    fn flavor_resources(&self) -> &[FlavorResource] {
        &self.index.fr_names
    }

    fn flavor_resource_index(&self, fr: &FlavorResource) -> Option<usize> {
        self.index.fr_by_name.get(fr).copied()
    }

    fn resource_groups(&self) -> &[Vec<usize>] {
        &self.index.res_groups
    }

    fn in_subtree(&self, n: ViewNode, f: usize) -> bool {
        self.index.in_subtree[n.index() * self.forest.frs + f]
    }

    fn subtree_quota_at(&self, n: ViewNode, f: usize) -> Amount {
        self.forest.subtree_quota(engine_node(n), FrId::new(f))
    }

    fn local_quota_at(&self, n: ViewNode, f: usize) -> Amount {
        self.forest.local_quota(engine_node(n), FrId::new(f))
    }

    fn borrowing_limit_at(&self, n: ViewNode, f: usize) -> Option<Amount> {
        self.forest
            .quota(engine_node(n), FrId::new(f))
            .borrowing_limit
    }

    fn usage_at(&self, n: ViewNode, f: usize) -> Amount {
        self.forest
            .usage(self.usage.borrow(), engine_node(n), FrId::new(f))
    }

    fn lendable(&self, n: ViewNode) -> &BTreeMap<ResourceName, Amount> {
        &self.index.lendable[n.index()]
    }

    fn lendable_at(&self, n: ViewNode, r: usize) -> Amount {
        self.index
            .lendable_dense
            .get(n.index() * self.index.res_groups.len() + r)
            .copied()
            .unwrap_or(Amount::ZERO)
    }
}

impl<U: BorrowMut<Usage>> QuotaViewMut for ForestView<'_, U> {
    fn set_usage_at(&mut self, n: ViewNode, f: usize, amount: Amount) {
        let i = n.index() * self.forest.frs + f;
        if let Some(slot) = self.usage.borrow_mut().0.get_mut(i) {
            *slot = amount;
        }
    }
}
