//! Fair sharing for shared GPU platforms: Kueue's fair sharing (dominant resource share,
//! tournament ordering, fair-sharing preemption, admission fair sharing) and exact general
//! allocators (weighted max-min water-filling, hierarchical, DRF).
//!
//! ```
//! use gpuquota_fairshare::tree::{FairShareTreeBuilder, NodeQuota};
//! use gpuquota_fairshare::waterfill::{water_fill, WfQueue};
//! use gpuquota_fairshare::FlavorResource;
//!
//! // Kueue: two ClusterQueues of 4 GPUs in one cohort; "a" runs 6 → it borrows 2 of the 8
//! // GPUs its cohort can lend: weightedShare = ceil(2 × 1000 / 8) = 250.
//! let gpu = FlavorResource::new("a100", "nvidia.com/gpu");
//! let mut b = FairShareTreeBuilder::new();
//! b.cluster_queue("a", Some("org"), 1.0)?.quota(gpu.clone(), NodeQuota::nominal(4));
//! b.cluster_queue("b", Some("org"), 1.0)?.quota(gpu.clone(), NodeQuota::nominal(4));
//! b.usage("a", gpu, 6);
//! let tree = b.build()?;
//! let drs = tree.drs(tree.cluster_queue("a").unwrap());
//! assert_eq!(drs.weighted_share(), 250);
//! assert_eq!(drs.dominant_resource.unwrap().as_str(), "nvidia.com/gpu");
//!
//! // General allocator: 100 GPUs, weights 1:2:1, demands 10/80/60 → (10, 60, 30).
//! let qs = [WfQueue::new("x", 1, 10), WfQueue::new("y", 2, 80), WfQueue::new("z", 1, 60)];
//! assert_eq!(water_fill(100, &qs)?.allocations, vec![10, 60, 30]);
//! # Ok::<(), gpuquota_fairshare::FairShareError>(())
//! ```
//!
//! # A library of functions, not an engine with an input
//!
//! Unlike the engines (Kueue, KAI, MIG, metering), this crate has no `Input` and no `run`:
//! it answers several independent questions, each with its own small input, and the one
//! end-to-end run it belongs to, Kueue's scheduling with fair sharing, is the Kueue
//! engine's (`gpuquota-cohort`'s `Options::fair_sharing`, or a `Configuration` that turns
//! fair sharing on). Its functions are building blocks: a ClusterQueue's or Cohort's share
//! ([`tree::FairShareTree::drs`], [`shares::kueue_shares`] over a whole platform), the
//! fair-sharing order and preemption rules the Kueue engine calls, and the general
//! allocators ([`waterfill::water_fill`], [`drf`]) over plain numbers. One uniform
//! `Input`/`run` pair would have to be a union of these unrelated inputs. The functions
//! return the typed [`FairShareError`], and `?` converts it into the workspace's one
//! `gpuquota_model::Error` at the caller's edge.
//!
//! # Kueue pieces
//!
//! | module | upstream | what |
//! |---|---|---|
//! | [`quota`] | `pkg/cache/scheduler/resource_node.go` | [`quota::QuotaTree`], the workspace's one implementation of Kueue's quota arithmetic: subtree quota, local (guaranteed) quota, potential available, usage propagation, available with borrowing limits, borrowing level |
//! | [`view`] | `pkg/cache/scheduler/resource_node.go`, `fair_sharing.go` | the [`view::QuotaView`] trait every algorithm reads (a [`quota::QuotaTree`] with usage, names, weights and lendable amounts), with the DRS written once over it |
//! | [`tree`] | `pkg/cache/scheduler/resource_node.go` | the standalone cohort tree (a [`view::QuotaView`] over a [`quota::QuotaTree`]), built from plain inputs or a model |
//! | [`picture`] | – | the static quota picture of every cohort tree (from a [`quota::QuotaTree`]) and KAI queue tree: `gpuquota quotas` |
//! | [`drs`] | `pkg/cache/scheduler/fair_sharing.go` | dominant resource share from plain inputs, `CompareDRS`, weights |
//! | [`shares`] | ClusterQueue / Cohort `status.fairSharing` | `weightedShare` + dominant resource of every object of a [`gpuquota_model::Model`] |
//! | [`order`] | `pkg/scheduler/fair_sharing_iterator.go` | the tournament ordering of a cycle's heads |
//! | [`preemption`] | `pkg/scheduler/preemption` (`fairPreemptions`, `fairsharing/*`) | S2-a / S2-b strategies, target ordering, within-nominal rule |
//! | [`afs`] | `pkg/util/admissionfairsharing` | admission fair sharing (KEP-4136) |
//! | [`config`] | `apis/config` | `fairSharing` / `admissionFairSharing` of the Configuration, validated |
//!
//! ## The seam for the admission engine (gpuquota-cohort)
//!
//! This crate does not depend on the engine; the engine calls into it when fair sharing is on
//! ([`config::settings_from_configuration`] with the CLI's `--fair-sharing`). The engine's
//! quota forest holds a [`quota::QuotaTree`], the same arithmetic as this crate's; its
//! plug-in `gpuquota_cohort::fair::FairSharing` implements [`view::QuotaView`] (and
//! [`view::QuotaViewMut`]) over that tree and its cycle snapshot
//! (`gpuquota_cohort::fair::ForestView`), so there is one implementation of the quota
//! arithmetic and no copy to keep in step, and uses the pieces below.
//!
//! * **Shares.** Implement [`view::QuotaView`] over your own tree and call [`view::drs`]; or
//!   build this crate's [`tree::FairShareTree`] (with [`tree::FairShareTreeBuilder`], and
//!   forward usage changes with
//!   [`tree::FairShareTree::add_usage`] / `remove_usage`); or compute the DRS of plain numbers
//!   with [`drs::dominant_resource_share`] (per flavor-resource subtree quota, usage and
//!   simulated request) and [`drs::lendable`] (the parent's potential availability), and
//!   compare with [`drs::compare_drs`].
//! * **Cycle order.** Build [`order::FairSharingOrder`] from the heads (ClusterQueue, workload
//!   key, effective priority, queue-order timestamp, assignment usage) and call
//!   [`order::FairSharingOrder::next_head`] in place of the classical sort. After processing a
//!   head, add its usage to the tree (the popped queue's path is recomputed
//!   automatically; call `invalidate` for any other queue whose usage changed).
//! * **Preemption.** When `GetTargets` runs under fair sharing, collect candidates as upstream
//!   `findCandidates` does (own queue by `withinClusterQueue`; every borrowing queue of the tree
//!   by `reclaimWithinCohort`), sort them by `CandidatesOrdering`, and call
//!   [`preemption::fair_preemptions`] with a `fits` oracle over the removed candidates; it
//!   returns targets with reasons `InClusterQueue` / `InCohortReclamation` /
//!   `InCohortFairSharing`.
//! * **Admission fair sharing.** Order a ClusterQueue's heap with
//!   [`afs::order_within_cluster_queue`] over LocalQueue usages from [`afs::LocalQueueUsage`].
//! * **`gpuquota kueue shares`.** [`shares::kueue_shares`] gives the JSON contract directly
//!   (`serde_json::to_string_pretty(&report)`):
//!   `{"clusterQueues": {"cq": {"share": 250, "dominantResource": "nvidia.com/gpu"}}, "cohorts":
//!   {…}}`.
//!
//! ## Properties (each checked by the tests)
//!
//! * The quota tree reproduces the worked example of `gpuquota::design` (subtree quota, local
//!   quota, usage, available, potential available of every node) and adding then removing usage
//!   restores every node exactly; a cohort's usage is always the sum of its children's usage
//!   above their local quota. On random forests the tree and the quota picture equal the test
//!   kit's slow recursive reference (`gpuquota_testkit::quota_tree`) number by number.
//! * DRS equals upstream's values on upstream's own test cases: borrowed × 1000 / lendable at
//!   the parent (an `f64`, as upstream since v0.13), maximum over resources with ties to the
//!   alphabetically smaller name, resources aggregated across flavors, divided by the weight,
//!   reported as the ceiling; weight 0 while borrowing reports `i64::MAX` and compares above
//!   every finite share; weight 0 within nominal reports 0; nodes without a parent report 0.
//! * The tournament prefers a child not borrowing on what its head requests, then the lower
//!   DRS, then higher priority, then the earlier timestamp; later pops see the usage of heads
//!   admitted before them; it pops every head exactly once and deterministically.
//! * Fair-sharing preemption takes own-queue candidates as `InClusterQueue`, reclaims
//!   unconditionally when the preemptor stays within nominal, applies S2-a then S2-b as
//!   configured, visits the highest-share queue first (weight-0 borrowers first of all),
//!   fills back in reverse order, and leaves the tree unchanged.
//! * Water-filling ([`waterfill`]) is exact: the fluid level satisfies
//!   `Σ clamp(wᵢL, gᵢ', cᵢ) = capacity` in the shared tier, floors and caps hold, the
//!   capacity is used up to total demand, higher tiers are satisfied before lower ones get
//!   anything above their floors, integer shares are envy-free up to one unit, the result is
//!   independent of input order, deterministic, monotone in capacity and invariant under
//!   scaling all weights; an exhaustive search confirms it on small instances.
//! * DRF ([`drf`]) satisfies sharing incentive, envy-freeness, Pareto efficiency and
//!   strategy-proofness (brute force over misreports), population monotonicity when every
//!   task needs every resource (a counterexample with zero entries is pinned), equals
//!   water-filling on one resource, and is **not** resource-monotone (the DRF paper's
//!   counterexample is an expected-behaviour test).
//!
//! ## Deviations from upstream (on purpose)
//!
//! * Upstream picks the next cohort tree of the tournament by Go map iteration (arbitrary); we
//!   take the tree of the remaining head whose ClusterQueue name is smallest, and break full
//!   ties by workload key (upstream keeps the first child it iterated).
//! * Children are iterated by name (upstream: map order), which matters only for exact ties in
//!   the preemption target ordering: among cohorts the later name wins ties (upstream's `>=`),
//!   among ClusterQueues the one whose first candidate comes first in `CandidatesOrdering`.
//! * `fairSharing.weight` becomes an `f64` by correctly rounding the exact decimal (upstream
//!   converts the Kubernetes quantity to float; identical for every weight written with ≤ 15
//!   significant digits).
//!
//! # Cargo features
//!
//! - `serde` (default): `Serialize`/`Deserialize` on the reports and share types, and the
//!   model's `serde`. The algorithms do not need it.
//! - `yaml` (default, implies `serde`): the model's manifest reader (fair sharing reads no
//!   file of its own).
//! - `schema`: JSON Schemas of the reports; `fuzzing`: the fuzz checks.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(clippy::unwrap_used, clippy::expect_used)]

pub mod afs;
pub mod config;
pub mod drf;
pub mod drs;
pub mod error;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod order;
pub mod picture;
pub mod preemption;
pub mod quota;
pub mod ratio;
pub mod shares;
mod table;
pub mod tree;
pub mod view;
pub mod waterfill;

/// The quota tree of a whole manifest, for the differential test against the slow reference
/// (`gpuquota-testkit` links its own copy of this crate, so that test cannot sit beside the
/// code). Feature `testkit`; not part of the public API.
#[cfg(feature = "testkit")]
#[doc(hidden)]
pub mod testkit {
    use crate::FairShareError;
    use crate::shares::ModelTree;

    /// The quota tree of `model` (cyclic trees left out); errors as the shares report's.
    ///
    /// # Errors
    /// A negative quota, an invalid weight, a tree deeper than the limit.
    pub fn tree_from_model(model: &gpuquota_model::Model) -> Result<ModelTree, FairShareError> {
        crate::shares::tree_from_model(model)
    }
}

pub use drs::{Drs, FlavorResource, FrQuantities, compare_drs, dominant_resource_share};
pub use error::{ConfigErrors, FairShareError};
