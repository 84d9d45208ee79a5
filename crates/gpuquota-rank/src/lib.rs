//! KAI Scheduler / Run:ai semantics.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(clippy::unwrap_used, clippy::expect_used)]

pub mod division;
pub mod fixed;

pub use division::{
    Division, DivisionError, DivisionOptions, Hierarchy, Mode, QueueInput, Resource, ResourceParams,
};
