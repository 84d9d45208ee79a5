//! An independent checker of the quota invariants (the KEP-79 form, kubernetes-sigs/kueue:
//! `keps/79-hierarchical-cohorts`), written from scratch over plain sums so that it shares no
//! arithmetic with [`crate::tree`].

use crate::preempt::Reservation;
use crate::tree::{FrId, NodeId, NodeKind};
use crate::world::World;

/// Checks, for every node and flavor-resource, with usage recomputed from `reservations`:
/// a ClusterQueue stays within nominal + borrowingLimit (nominal without a cohort), and
/// `T(x) ≥ −borrowingLimit(x)` (root: `T ≥ 0`) where `T(cq) = nominal − usage` and
/// `T(cohort) = nominal + Σ_children min(lendingLimit(c), T(c))`.
///
/// # Errors
/// A description of the first violated invariant.
///
/// # Complexity
/// O(nodes × frs + reservations × frs).
pub fn check_invariants(world: &World, reservations: &[Option<Reservation>]) -> Result<(), String> {
    let t = &world.tree;
    let n = t.nodes.len();
    let nfr = t.frs;
    // usage per node (ClusterQueues only), i128 to stay exact
    let mut usage = vec![0i128; n * nfr];
    for r in reservations.iter().flatten() {
        let node = world.cluster_queues[r.cq].node.index();
        for &(fr, a) in &r.usage {
            usage[node * nfr + fr.index()] += i128::from(a.0);
        }
    }
    let big = |a: gpuquota_model::Amount| -> i128 {
        if a.is_unlimited() {
            i128::from(i64::MAX) * 4
        } else {
            i128::from(a.0)
        }
    };
    // T per node, computed children-first by recursion from the roots
    fn t_of(
        world: &World,
        usage: &[i128],
        node: NodeId,
        fr: FrId,
        big: &dyn Fn(gpuquota_model::Amount) -> i128,
        errs: &mut Vec<String>,
    ) -> i128 {
        let t = &world.tree;
        let q = t.quota(node, fr);
        let mut v = big(q.nominal);
        match t.nodes[node].kind {
            NodeKind::ClusterQueue(_) => v -= usage[node.index() * t.frs + fr.index()],
            NodeKind::Cohort => {
                for &c in &t.nodes[node].children {
                    let tc = t_of(world, usage, c, fr, big, errs);
                    let cq = t.quota(c, fr);
                    v += match cq.lending_limit {
                        Some(ll) => tc.min(big(ll)),
                        None => tc,
                    };
                }
            }
        }
        let name = &t.nodes[node].name;
        match (t.nodes[node].parent, q.borrowing_limit) {
            (None, _) if v < 0 => errs.push(format!(
                "{name}: over its capacity on flavor-resource {fr} by {}",
                -v
            )),
            (Some(_), Some(bl)) if v < -big(bl) => errs.push(format!(
                "{name}: borrows {} beyond borrowingLimit {} on flavor-resource {fr}",
                -v, bl.0
            )),
            _ => {}
        }
        v
    }
    let mut errs = Vec::new();
    for fr in t.fr_ids() {
        for node in t.nodes.ids() {
            if t.nodes[node].parent.is_none() {
                t_of(world, &usage, node, fr, &big, &mut errs);
            }
        }
        for cq in &world.cluster_queues {
            let node = cq.node;
            let q = t.quota(cq.node, fr);
            let u = usage[node.index() * nfr + fr.index()];
            let cap = match (t.nodes[node].parent, q.borrowing_limit) {
                (None, _) => Some(big(q.nominal)),
                (Some(_), Some(bl)) => Some(big(q.nominal) + big(bl)),
                (Some(_), None) => None,
            };
            if let Some(cap) = cap
                && u > cap
            {
                errs.push(format!(
                    "ClusterQueue {}: usage {u} exceeds nominal + borrowingLimit {cap}",
                    cq.name
                ));
            }
        }
    }
    match errs.into_iter().next() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
