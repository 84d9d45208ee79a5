//! The engine's quota forest seen by the fair-sharing algorithms: [`ForestView`] implements
//! [`QuotaView`] (and [`QuotaViewMut`]) over [`QuotaForest`] and a cycle snapshot's [`Usage`],
//! so dominant resource shares, the tournament and fair-sharing preemption read the numbers the
//! engine admits against, with no second tree to keep in step.
//!
//! The quota numbers (and the `SubtreeQuota` keys) are the forest's own
//! [`gpuquota_fairshare::quota::QuotaTree`]; the forest has no weights, so a `FairIndex` holds
//! what fair sharing adds to it, computed once per [`super::FairSharing`]: every node's
//! `fairSharing.weight`, the lendable amounts at each node's parent, children split into
//! cohorts and ClusterQueues by name, and the flavor-resource names.

use std::borrow::{Borrow, BorrowMut};
use std::collections::BTreeMap;

use gpuquota_fairshare::FlavorResource;
use gpuquota_fairshare::quota::QuotaTree;
use gpuquota_fairshare::view::{
    NodeId as ViewNode, NodeKind as ViewKind, QuotaView, QuotaViewMut, lendables,
};
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
        let (lendable, by_group) = lendables(t.quota_tree(), &fr_names, &res_groups);
        // flat, zeros for roots: the tournament reads it for every head
        let groups = res_groups.len();
        let lendable_dense = by_group
            .iter()
            .flat_map(|d| (0..groups).map(|g| d.get(g).copied().unwrap_or(Amount::ZERO)))
            .collect();
        FairIndex {
            fr_names,
            fr_by_name,
            res_groups,
            weights,
            child_cohorts,
            child_cqs,
            cq_by_name,
            lendable,
            lendable_dense,
        }
    }
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
    fn quota_tree(&self) -> &QuotaTree {
        self.forest.quota_tree()
    }

    fn current_usage(&self) -> &Usage {
        self.usage.borrow()
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
    fn usage_mut(&mut self) -> (&QuotaTree, &mut Usage) {
        (self.forest.quota_tree(), self.usage.borrow_mut())
    }
}
