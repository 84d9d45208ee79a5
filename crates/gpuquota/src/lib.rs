//! gpuquota: pure, deterministic quota-scheduling algorithms for shared GPU platforms.
//!
//! This facade re-exports the workspace's crates so that embedders add one dependency:
//!
//! | module | crate | what it does |
//! |---|---|---|
//! | [`model`] | `gpuquota-model` | quantities, Kueue/KAI/Kubernetes objects, manifest import, validation |
//! | [`cohort`] | `gpuquota-cohort` | Kueue's admission engine: hierarchical cohort quotas, flavor assignment, the scheduling cycle, classical preemption, explanations |
//! | [`metering`] | `gpuquota-metering` | GPU-hours per department and card type, borrowed hours, showback and chargeback in integer money |
//! | [`fairshare`] | `gpuquota-fairshare` | Kueue fair sharing (DRS, tournament order, fair-sharing preemption, admission fair sharing) and exact water-filling / DRF allocators |
//! | [`rank`] | `gpuquota-rank` | Run:ai / KAI: fair-share division, time-based fairshare, scheduling sessions (reclaim, preempt, consolidation, stale gangs), explanations |
//! | [`mig`] | `gpuquota-mig` | MIG catalogue with placements, layout validation, exact layout planner, mig-parted export |
//!
//! ```
//! use gpuquota::model::{Amount, Quantity, ResourceName};
//!
//! let gpus: Quantity = "8".parse()?;
//! assert_eq!(gpus.to_amount(&ResourceName::new("nvidia.com/gpu")), Amount(8));
//! # Ok::<(), gpuquota::model::QuantityError>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub use gpuquota_cohort as cohort;
pub use gpuquota_fairshare as fairshare;
pub use gpuquota_metering as metering;
pub use gpuquota_mig as mig;
pub use gpuquota_model as model;
pub use gpuquota_rank as rank;
pub use gpuquota_sim as sim;

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
