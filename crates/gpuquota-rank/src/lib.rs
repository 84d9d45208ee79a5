//! KAI Scheduler / Run:ai semantics.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(clippy::unwrap_used, clippy::expect_used)]

pub mod division;
pub mod fixed;
pub mod report;
pub mod runai;
pub mod session;
pub mod snapshot;
pub mod usage;

pub use division::{
    Division, DivisionError, DivisionOptions, Hierarchy, Mode, QueueInput, Resource, ResourceParams,
};
pub use session::{SessionOptions, SessionResult, run_session};
pub use snapshot::{BuildOptions, Cluster, SnapshotError};
