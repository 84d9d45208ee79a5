//! The object model of gpuquota.
//!
//! Every engine of the workspace reads the objects defined here. The crate parses Kubernetes
//! quantity strings once, at the edge, into exact values ([`Quantity`]) and Kueue's integer
//! amounts ([`Amount`]).
//!
//! ```
//! use gpuquota_model::{Amount, Quantity, ResourceName};
//!
//! let q: Quantity = "500m".parse()?;
//! assert_eq!(q.to_amount(&ResourceName::new("cpu")), Amount(500));
//! assert_eq!(q.to_string(), "500m");
//! # Ok::<(), gpuquota_model::QuantityError>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(clippy::unwrap_used, clippy::expect_used)]

pub mod core;
pub mod import;
pub mod kai;
pub mod kueue;
pub mod meta;
pub mod quantity;
pub mod quota_tree;
pub mod resource;
pub mod time;
pub mod validate;

pub use import::{Imported, Importer, Kind, Model, import_str};
pub use quantity::{Amount, Quantity, QuantityError, QuantityFormat};
pub use resource::ResourceName;
pub use time::Timestamp;
pub use validate::{ValidationError, ValidationErrors, validate};

#[cfg(feature = "fuzzing")]
pub mod fuzzing;
