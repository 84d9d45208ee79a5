//! MIG for gpuquota: a catalogue of GPU models with their MIG profiles and placements, layout
//! validation, an exact layout planner and mig-parted export.
//!
//! ```
//! use gpuquota_mig::{Catalogue, Instance, Layout};
//!
//! let rtx = Catalogue::builtin().resolve("NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition")?;
//! let one_g = rtx.profile("nvidia.com/mig-1g.24gb")?;
//! assert_eq!((one_g.compute_slices(), one_g.max_instances()), (1, 4));
//! // Placements are in the driver's 12-unit grid.
//! let starts: Vec<u8> = one_g.placements().iter().map(|p| p.start).collect();
//! assert_eq!(starts, [0, 3, 6, 9]);
//! let all_1g = (0..4).map(|k| Instance { start: 3 * k, profile: one_g.index() }).collect();
//! assert!(Layout::new(rtx, all_1g).is_ok());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(clippy::unwrap_used, clippy::expect_used)]

pub mod catalogue;
pub mod export;
pub mod input;
pub mod layout;
mod lp;
pub mod plan;

#[cfg(feature = "fuzzing")]
pub mod fuzzing;

pub use catalogue::{
    CardFraction, Catalogue, CatalogueError, Engines, GpuModel, MediaVariant, ModelIndex,
    Placement, Profile, ProfileIndex, resource_name,
};
pub use export::{mig_parted_config, placements_yaml};
pub use input::{
    DemandSpec, GpuSpec, InputError, InstanceSpec, Mode, PlanRequest, Problem, ResolvedDemand,
    ResolvedGpu, WeightPolicy,
};
pub use layout::{
    Instance, Layout, LayoutProblem, MigStrategy, NodeGpu, StrategyError, advertised_resources,
    check,
};
pub use plan::{
    DEFAULT_BUDGET, GpuPlan, Plan, PlanError, PlanOptions, PlannedInstance, Prepared,
    gpu_fragmentation, greedy, plan, verify,
};
