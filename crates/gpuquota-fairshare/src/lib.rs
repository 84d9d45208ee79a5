//! Kueue fair sharing and exact fair-share allocators (work in progress).
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
pub mod preemption;
pub mod ratio;
pub mod shares;
pub mod tree;
pub mod waterfill;

pub use drs::{Drs, FlavorResource, FrQuantities, compare_drs, dominant_resource_share};
pub use error::{ConfigErrors, FairShareError};
