//! In-place quota updates: a [`Scheduler`] follows ClusterQueues and Cohorts whose quotas
//! (`nominalQuota`, `borrowingLimit`, `lendingLimit`) or fair-sharing weight changed,
//! without a new [`crate::Input`].
//!
//! A simulator's timeline changes quotas far more often than it changes the platform's
//! shape. Building the input again validates and resolves every object, workloads
//! included, for a change of a few numbers; [`Scheduler::update`] instead validates the
//! platform's queue objects (the same validator, on the same kinds, without the workloads),
//! writes the changed nodes' quotas into the scheduler's world and recomputes the quota
//! forest's totals and the starting usage (which flows upward by the quotas), then restarts the scheduler as a rebuilt input's
//! [`crate::Input::scheduler`] would start. The caller then carries its admitted workloads
//! across as after a rebuild ([`Scheduler::carry`] before, [`Scheduler::adopt`] after),
//! so every later decision is the one a rebuilt input gives.
//!
//! What it does not follow (the caller builds the input again, as before): a change of
//! anything but those numbers (resource groups, flavors, cohort, policies, `stopPolicy`,
//! metadata), a policy that cannot be rebuilt for the new quotas, and input the validator
//! refuses (the rebuild then reports the validator's diagnostics as always).

use gpuquota_model::Model;
use gpuquota_model::kueue::{ClusterQueue, Cohort, ResourceGroup};

use super::{Policy, Scheduler};
use crate::tree::{FrQuota, NodeId, NodeKind, QuotaForest};
use crate::world::World;

/// One object a change replaced, before and after (the `after` is the one in the model
/// passed to [`Scheduler::update`]).
#[derive(Debug, Clone, Copy)]
pub enum Replaced<'m> {
    /// A ClusterQueue.
    ClusterQueue(&'m ClusterQueue, &'m ClusterQueue),
    /// A Cohort.
    Cohort(&'m Cohort, &'m Cohort),
}

/// `groups` with every quota number unset: what must stay equal for an in-place update.
fn shape_of(groups: &[ResourceGroup]) -> Vec<ResourceGroup> {
    let mut g = groups.to_vec();
    for group in &mut g {
        for f in &mut group.flavors {
            for r in &mut f.resources {
                r.nominal_quota = None;
                r.borrowing_limit = None;
                r.lending_limit = None;
            }
        }
    }
    g
}

/// Whether `before` and `after` differ at most in their quota numbers and fair-sharing
/// weight.
fn numbers_only(r: &Replaced<'_>) -> bool {
    match *r {
        Replaced::ClusterQueue(b, a) => {
            let strip = |q: &ClusterQueue| {
                let mut q = q.clone();
                q.spec.resource_groups = shape_of(&q.spec.resource_groups);
                q.spec.fair_sharing = None;
                q
            };
            strip(b) == strip(a)
        }
        Replaced::Cohort(b, a) => {
            let strip = |c: &Cohort| {
                let mut c = c.clone();
                c.spec.resource_groups = shape_of(&c.spec.resource_groups);
                c.spec.fair_sharing = None;
                c
            };
            strip(b) == strip(a)
        }
    }
}

/// The quota forest of `world` with the replaced objects' quotas as `model` has them, or
/// `None` when a replaced object is not in the world (or not in `model`).
///
/// # Complexity
/// O(N·F) for N nodes and F flavor-resources, plus the replaced objects' entries.
fn updated_forest(world: &World, model: &Model, replaced: &[Replaced<'_>]) -> Option<QuotaForest> {
    let tree = &world.tree;
    let nfr = tree.frs;
    let mut quotas: Vec<FrQuota> = Vec::with_capacity(tree.nodes.len() * nfr);
    for n in tree.nodes.ids() {
        for fr in tree.fr_ids() {
            quotas.push(tree.quota(n, fr));
        }
    }
    // cohorts come first in the forest, sorted by name
    let cohorts = tree
        .nodes
        .iter()
        .take_while(|n| n.kind == NodeKind::Cohort)
        .count();
    for r in replaced {
        let (node, groups) = match *r {
            Replaced::ClusterQueue(_, a) => {
                let name = a.metadata.name.as_str();
                let cq = world.cq_id(name)?;
                (
                    world.cluster_queues[cq].node,
                    &model.cluster_queues.get(name)?.spec.resource_groups,
                )
            }
            Replaced::Cohort(_, a) => {
                let name = a.metadata.name.as_str();
                let i = (0..cohorts).find(|&i| tree.nodes[NodeId::new(i)].name == name)?;
                (
                    NodeId::new(i),
                    &model.cohorts.get(name)?.spec.resource_groups,
                )
            }
        };
        let row = &mut quotas[node.index() * nfr..(node.index() + 1) * nfr];
        row.fill(FrQuota::default());
        for g in groups {
            for f in &g.flavors {
                let flavor = world.flavor_id(&f.name)?;
                for rq in &f.resources {
                    let resource = world.resource_id(rq.name.as_str())?;
                    let fr = world.fr(flavor, resource)?;
                    let amount = |q: &gpuquota_model::Quantity| q.to_amount(&rq.name);
                    row[fr.index()] = FrQuota {
                        declared: true,
                        nominal: rq
                            .nominal_quota
                            .as_ref()
                            .map(amount)
                            .unwrap_or(gpuquota_model::Amount::ZERO),
                        borrowing_limit: rq.borrowing_limit.as_ref().map(amount),
                        lending_limit: rq.lending_limit.as_ref().map(amount),
                    };
                }
            }
        }
    }
    Some(QuotaForest::new(tree.nodes.clone(), nfr, quotas))
}

/// The usage of the workloads admitted at the start over `forest` (a node's usage beyond
/// its guaranteed quota flows to its parent, so it depends on the quotas), as the world's
/// build sums it.
///
/// # Complexity
/// O(W + admitted × flavor-resources × depth).
fn initial_usage(world: &World, forest: &QuotaForest) -> crate::tree::Usage {
    let mut usage = forest.empty_usage();
    for w in world.workloads.iter() {
        if let Some(a) = &w.admitted {
            let node = world.cluster_queues[a.cq].node;
            for &(fr, amount) in &a.usage {
                forest.add_usage(&mut usage, node, fr, amount);
            }
        }
    }
    usage
}

/// Whether the workspace's validator finds an error among the queue objects of `model`
/// (its ResourceFlavors, Cohorts, ClusterQueues, LocalQueues and Configuration: every kind
/// a quota can be checked against, without the workloads).
///
/// # Complexity
/// O(queue objects × log queue objects).
fn queue_objects_refused(model: &Model) -> bool {
    let queues = Model {
        resource_flavors: model.resource_flavors.clone(),
        cluster_queues: model.cluster_queues.clone(),
        cohorts: model.cohorts.clone(),
        local_queues: model.local_queues.clone(),
        configuration: model.configuration.clone(),
        ..Model::default()
    };
    let options = gpuquota_model::validate::Options::default();
    gpuquota_model::validate::diagnostics_of(&queues, &options, crate::KINDS)
        .errors()
        .next()
        .is_some()
}

impl<P: Policy> Scheduler<'_, P> {
    /// The world this scheduler decides over (its quotas as the last
    /// [`Scheduler::update`] left them).
    pub fn world(&self) -> &World {
        &self.world
    }

    /// Follows `replaced`, the ClusterQueues and Cohorts of `model` (the whole platform
    /// after the change) whose quota numbers or fair-sharing weight changed, in place: the
    /// quotas written into this scheduler's world, the forest's totals recomputed, the
    /// policy rebuilt for them ([`Policy::updated`]), and the scheduler restarted as the
    /// scheduler of an input built from `model` starts ([`crate::Input::scheduler`]). The
    /// caller carries its admitted workloads across with [`Scheduler::carry`] (before) and
    /// [`Scheduler::adopt`] (after), as it does after a rebuild; the decisions are then
    /// those a rebuilt input gives.
    ///
    /// Returns false, with nothing changed, when the change is not one of quota numbers
    /// (the caller builds the input again with [`crate::Input::from_model`]): another field
    /// of an object changed, an object is not in this world, a policy cannot follow, or
    /// the validator refuses the queue objects (the rebuild then reports its diagnostics).
    ///
    /// One method on the scheduler rather than on [`crate::Input`]: the scheduler is what a
    /// simulator keeps between events, and the world it owns is updated without a copy
    /// (the first update copies the world once when the input still shares it).
    ///
    /// # Complexity
    /// O(queue objects × log queue objects) for the validation, plus O(N·F) for the quota
    /// forest of N nodes and F flavor-resources, plus the restart's O(W log W) for W
    /// workloads (the scheduling shapes and UID ranks, which depend on the workloads only,
    /// are kept).
    pub fn update(&mut self, model: &Model, replaced: &[Replaced<'_>]) -> bool
    where
        P: Sized,
    {
        if !replaced.iter().all(numbers_only) || queue_objects_refused(model) {
            return false;
        }
        let Some(forest) = updated_forest(&self.world, model, replaced) else {
            return false;
        };
        let usage = initial_usage(&self.world, &forest);
        let world = std::sync::Arc::make_mut(&mut self.world);
        let old_tree = std::mem::replace(&mut world.tree, forest);
        let old_usage = std::mem::replace(&mut world.initial_usage, usage);
        let Some(policy) = self.policy.updated(&self.world, model) else {
            let world = std::sync::Arc::make_mut(&mut self.world);
            world.tree = old_tree;
            world.initial_usage = old_usage;
            return false;
        };
        self.restart(policy);
        true
    }
}
