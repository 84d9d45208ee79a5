//! The object model of gpuquota: Kubernetes quantities, the Kueue, KAI and core objects,
//! manifest import, upstream validation, and a reference of Kueue's quota arithmetic.
//!
//! ```
//! use gpuquota_model::{Amount, Quantity, ResourceName};
//!
//! let q: Quantity = "500m".parse()?;
//! assert_eq!(q.to_amount(&ResourceName::new("cpu")), Amount(500));
//! assert_eq!(q.to_string(), "500m");
//!
//! # #[cfg(feature = "yaml")] {
//! use gpuquota_model::{import_str, validate};
//! let manifest = "
//! apiVersion: kueue.x-k8s.io/v1beta2
//! kind: ResourceFlavor
//! metadata: {name: h200-nvl}
//! ---
//! apiVersion: kueue.x-k8s.io/v1beta2
//! kind: ClusterQueue
//! metadata: {name: data-science}
//! spec:
//!   resourceGroups:
//!   - coveredResources: [nvidia.com/gpu]
//!     flavors:
//!     - name: h200-nvl
//!       resources:
//!       - {name: nvidia.com/gpu, nominalQuota: 8, lendingLimit: 2}
//! ";
//! let model = import_str("platform.yaml", manifest)?.model;
//! let errors = validate(&model).unwrap_err();
//! assert_eq!(
//!     errors.0[0].to_string(),
//!     "ClusterQueue \"data-science\": spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: \
//!      Invalid value: \"2\": must be nil when cohort is empty"
//! );
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Every engine of the workspace reads the objects defined here. Properties, each checked by
//! the crate's tests:
//!
//! - **Exact quantities.** Quantity strings are parsed once, at the edge, into exact decimals
//!   ([`Quantity`]) and Kueue's integer amounts ([`Amount`]: cpu in milli-units, everything
//!   else in base units rounded up, overflow to Kueue's unlimited sentinel); the canonical
//!   printed form parses back to the same value.
//! - **Order-independent import.** [`import`] reads multi-document YAML and JSON (Kueue
//!   `v1beta1` and `v1beta2`, KAI, core kinds); importing the same documents in any order, split
//!   over any files, yields the same [`Model`] (objects named from `generateName` aside).
//!   Unknown kinds and fields are warnings with their path and a "did you mean"; wrongly shaped
//!   fields, duplicate keys (YAML and JSON) and quantities Kubernetes refuses are errors with
//!   their path; nothing is dropped silently. The input format is documented in [`import`].
//! - **Total, complete validation.** [`mod@validate`] never panics and reports every problem at
//!   once, each with kind, object, field path and a Kubernetes-style field error.
//! - **The objects users submit.** Jobs, CronJobs, JobSets, Kubeflow, MPI and Ray jobs,
//!   TrainJobs, AppWrappers, LeaderWorkerSets, Deployments, StatefulSets, Knative services,
//!   Spark pods and Pods are converted as Kueue's job framework and KAI's pod grouper
//!   convert them, into Workloads and PodGroups with their upstream names, counts, minimums,
//!   priorities and queues, with the namespaces' LimitRange defaults ([`workloads`], which
//!   lists every kind read and every kind skipped with a warning).
//! - **Dynamic Resource Allocation.** DeviceClasses, ResourceClaims, ResourceClaimTemplates,
//!   ResourceSlices and pods' `spec.resourceClaims` are read (`resource.k8s.io/v1`, also
//!   `v1beta1`/`v1beta2`) and counted as Kueue, kube's ResourceQuota evaluator and KAI count
//!   them (`workloads::dra`, which lists every field read, modelled, warned about or refused,
//!   with the upstream file behind each rule).
//! - **No panics on any input.** With the `fuzzing` feature, the `fuzzing` module holds the checks the
//!   fuzz targets and the smoke tests run.
//!
//! # Module layout
//!
//! The modules depend on each other one way, from the bottom up (no module imports one above
//! it):
//!
//! - values: [`quantity`], [`resource`], [`time`], [`opaque`], [`ids`], [`diag`] (the one
//!   diagnostic type and the field error types), [`source`], [`limits`];
//! - the object types: [`meta`], [`mod@core`], [`kueue`], [`kai`], [`budget`], and
//!   [`mod@model`] ([`Model`], [`Kind`], the workload objects kept for conversion);
//! - reading: [`import`], manifests into a [`Model`];
//! - conversion: [`workloads`], Jobs, JobSets, … into Workloads and PodGroups, run after
//!   reading by [`import_str`] and `Importer::finish`;
//! - checking and using a model: [`mod@validate`], [`mod@text`], [`mod@write`] (the one safe file
//!   writer). Kueue's quota arithmetic and the `quotas` picture live in `gpuquota-fairshare`
//!   (`quota`, `picture`); the slow reference tree is the test kit's oracle.
//!
//! # Cargo features
//!
//! - `serde` (default): `Serialize`/`Deserialize` on every model type, and [`Opaque`] fields
//!   (a workload's `status`, a pod's `affinity`, the catch-alls of unknown fields) kept as
//!   JSON values. Without it the types, [`Quantity`], [`Amount`] and [`mod@validate`] still
//!   build and work on a [`Model`] built as plain Rust values; the [`Opaque`] fields are then
//!   empty placeholders.
//! - `yaml` (default, implies `serde`): the manifest reader ([`import_str`],
//!   `import::Importer`), the workload converters' YAML inputs (device plugin ConfigMaps) and
//!   the field-name hints of unknown fields.
//! - `text` (default): plain-text tables ([`mod@text`]).
//! - `schema` (implies `serde`): JSON Schemas (`schemars::JsonSchema`) of the types.
//! - `fuzzing` (implies `yaml`): the checks the fuzz targets run.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(clippy::unwrap_used, clippy::expect_used)]

pub mod budget;
pub mod core;
pub mod diag;
pub mod error;
pub mod ids;
pub mod import;
pub mod kai;
pub mod kueue;
pub mod limits;
pub mod meta;
pub mod model;
pub mod opaque;
pub mod quantity;
pub mod resource;
pub mod resource_list;
#[cfg(feature = "serde")]
pub mod schema;
pub mod source;
#[cfg(feature = "serde")]
mod strict;
#[cfg(feature = "text")]
pub mod text;
pub mod time;
pub mod validate;
pub mod workloads;
pub mod write;

pub use diag::{Code, Diagnostic, Diagnostics, Severity};
pub use error::Error;
#[cfg(feature = "yaml")]
pub use import::{Importer, import_str};
pub use model::{Imported, Kind, Model};
pub use opaque::Opaque;
pub use quantity::{Amount, Quantity, QuantityError, QuantityFormat};
pub use resource::{FlavorResource, ResourceName};
pub use time::Timestamp;
pub use validate::{ValidationError, ValidationErrors, validate};

#[cfg(feature = "fuzzing")]
pub mod fuzzing;
