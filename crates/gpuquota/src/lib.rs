//! gpuquota: pure, deterministic quota-scheduling algorithms for shared GPU platforms.
//!
//! One dependency gives every algorithm of the workspace. Each reads the real Kubernetes
//! objects (or a small documented input), decides exactly as the upstream system it models,
//! and returns its decisions and their reasons as data: the same input gives the same output,
//! bit for bit.
//!
//! | algorithm | entry point | engine |
//! |---|---|---|
//! | [Manifest import and validation](#manifest-import-and-validation) | [`model::import_str`], [`model::validate()`](model::validate()) | [`model`] |
//! | [Kueue admission](#kueue-admission) | [`cohort::ScheduleInput::from_model`], [`cohort::run`], [`cohort::quotas`] | [`cohort`] |
//! | [Fair sharing](#fair-sharing-kueues-dominant-resource-share-and-weighted-max-min) | [`fairshare::tree::FairShareTree::drs`], [`fairshare::waterfill::water_fill`] | [`fairshare`] |
//! | [KAI Scheduler / Run:ai](#kai-scheduler--runai-fair-share-division-and-the-scheduling-session) | [`rank::report::fairshare_json`], [`rank::run_session`] | [`rank`] |
//! | [MIG layout planning](#mig-layout-planning) | [`mig::plan()`](mig::plan()), [`mig::mig_parted_config`] | [`mig`] |
//! | [Metering and chargeback](#metering-and-chargeback) | [`metering::meter`] | [`metering`] |
//!
//! Every engine has the same two steps: a checked input built once (problems come back as
//! typed diagnostics naming object and field, and nothing is built), then a run over it that
//! needs nothing else and returns a typed report.
//!
//! | engine | input | run | report |
//! |---|---|---|---|
//! | Kueue | [`cohort::ScheduleInput::from_model`] | [`cohort::run`] | [`cohort::ScheduleReport`] |
//! | KAI | [`rank::Cluster::from_model`] | [`rank::run_session`] | [`rank::SessionResult`] |
//! | MIG | [`mig::PlanRequest::resolve`] | [`mig::plan()`](mig::plan()) | [`mig::Plan`] |
//! | metering | [`metering::Input`] (or [`metering::input::Document::into_input`]) | [`metering::meter`] | [`metering::Report`] |
//!
//! Each input can be built as plain Rust values instead of YAML: the Kueue engine's
//! [`cohort::entry`] page and the KAI and MIG examples below show it.
//!
//! Every engine's own page states the properties its tests check, the input formats and the
//! JSON output. [`guide`] answers the common questions with a command and a call each;
//! [`design`] records how the crates are cut and where each upstream rule comes from. The
//! examples below are the crate's Cargo examples (`cargo run -p gpuquota --example NAME`), run
//! here as doc tests.
//!
//! # Cargo features
//!
//! One feature per engine, all on by default: `kueue` ([`cohort`], with `fairshare`),
//! `fairshare` ([`fairshare`]), `kai` ([`rank`]), `mig` ([`mig`]), `metering` ([`metering`],
//! with `mig`), `sim` ([`sim`], with `kueue`) and `advise` ([`advise`], with `sim`).
//! [`model`] is always there. The non-default `report` feature (with `sim` and `metering`)
//! adds [`report`](crate::report): one self-contained HTML page per run and the Grafana
//! dashboard of the metering metrics. An embedder who
//! needs one algorithm writes
//! `gpuquota = { version = "0.1", default-features = false, features = ["kai"] }` and compiles
//! nothing else. The non-default `schema` feature adds the JSON Schemas (`schemars`) of the
//! inputs and reports of the engines that are on; the `gpuquota` command uses it.
//!
//! Two more default features concern serialisation, and forward to every crate that is on:
//!
//! - `serde`: `Serialize`/`Deserialize` on the model and on the engines' reports and
//!   options, and the model's free-form fields ([`model::Opaque`]: statuses, pod affinity,
//!   unknown fields) kept as JSON values.
//! - `yaml` (implies `serde`): the readers of YAML and JSON files: manifests
//!   ([`model::import_str`]), KAI's usage windows, metering inputs and mig-parted files.
//!
//! With `default-features = false, features = ["kueue", "fairshare", "kai", "mig", "metering"]`
//! neither serde, serde_json nor a YAML parser is compiled; inputs are then built as plain
//! Rust values (the free-form fields stay empty, so pod affinity and Kueue's
//! `Configuration.resources` are not read; the MIG catalogue is a Rust table generated at
//! build time). `sim` brings `yaml`: the simulator reads scenario files.
//!
//! # Manifest import and validation
//!
//! [`model::import_str`] (or [`model::Importer`] for several files) reads multi-document YAML
//! or JSON into a [`model::Model`], with unknown kinds and fields as warnings;
//! [`model::validate()`](model::validate()) then reports every problem at once as the API
//! server and webhooks would, naming kind, object and field. Quantities are exact.
//!
//! ```
//! use gpuquota::model::{Amount, Quantity, ResourceName};
//!
//! let gpus: Quantity = "8".parse()?;
//! assert_eq!(gpus.to_amount(&ResourceName::new("nvidia.com/gpu")), Amount(8));
//!
//! # #[cfg(feature = "yaml")] {
//! use gpuquota::model::{import_str, validate};
//! let manifest = "
//! apiVersion: kueue.x-k8s.io/v1beta2
//! kind: ClusterQueue
//! metadata: {name: research}
//! spec:
//!   resourceGroups:
//!   - coveredResources: [nvidia.com/gpu]
//!     flavors: [{name: h200, resources: [{name: nvidia.com/gpu, nominalQuota: 8, lendingLimit: 2}]}]
//! ";
//! let model = import_str("platform.yaml", manifest)?.model;
//! let errors = validate(&model).unwrap_err();
//! assert!(errors.0[0].to_string().contains("lendingLimit: Invalid value: \"2\": must be nil when cohort is empty"));
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Kueue admission
//!
//! [`cohort::ScheduleInput::from_model`] checks the manifests once and [`cohort::run`] runs
//! Kueue's scheduling cycles over them: hierarchical cohort quotas with borrowing and lending
//! limits, flavor assignment, classical preemption (fair sharing when the `Configuration` or
//! [`cohort::ScheduleOptions`] turns it on, [`cohort::fair`]), and a pending reason for every
//! workload left.
//! [`cohort::quotas`] gives the `available` and `potentialAvailable` Kueue's cache computes.
//!
#![cfg_attr(
    all(feature = "kueue", feature = "yaml"),
    doc = concat!("```\n", include_str!("../examples/kueue_admission.rs"), "```")
)]
//!
//! # Fair sharing: Kueue's dominant resource share and weighted max-min
//!
//! [`fairshare::tree::FairShareTree::drs`] gives a ClusterQueue's or Cohort's dominant resource
//! share (`status.fairSharing.weightedShare`), the key of Kueue's fair-sharing order and
//! preemption ([`fairshare::order`], [`fairshare::preemption`]). Independently of Kueue,
//! [`fairshare::waterfill::water_fill`] is exact weighted max-min (floors, caps, tiers and
//! hierarchies in [`fairshare::waterfill`]) and [`fairshare::drf`] dominant resource fairness.
//!
#![cfg_attr(
    feature = "fairshare",
    doc = concat!("```\n", include_str!("../examples/fair_sharing.rs"), "```")
)]
//!
//! # KAI Scheduler / Run:ai: fair-share division and the scheduling session
//!
//! A [`rank::Cluster`] built from Queues, PodGroups, Pods and Nodes is divided as KAI's
//! proportion plugin does (deserved quota, then over-quota weight by priority tier, in whole
//! units; [`rank::report::fairshare_json`]), and [`rank::run_session`] runs one scheduling
//! session: allocation with gangs and limits, consolidation, reclaim, preemption and stale-gang
//! eviction, each pending job with upstream's reason. [`rank::usage`] adds time-based
//! fairshare.
//!
#![cfg_attr(
    all(feature = "kai", feature = "yaml"),
    doc = concat!("```\n", include_str!("../examples/kai_fairshare.rs"), "```")
)]
//!
//! # MIG layout planning
//!
//! [`mig::plan()`](mig::plan()) finds the MIG layouts that serve the most weighted demand,
//! then reconfigure the fewest GPUs, then leave the least fragmentation — exactly within its
//! work budget, with a certified bound beyond it — over the placement rules of
//! [`mig::Catalogue`]. [`mig::mig_parted_config`] writes the plan for mig-parted.
//!
#![cfg_attr(
    all(feature = "mig", feature = "yaml"),
    doc = concat!("```\n", include_str!("../examples/mig_plan.rs"), "```")
)]
//!
//! # Metering and chargeback
//!
//! [`metering::meter`] integrates allocations (intervals, sampled series, DCGM scrapes) into
//! GPU-hours per department and card type, MIG slices weighted by their share of the card,
//! borrowed hours moment by moment, and a bill in integer minor units that adds up exactly.
//!
#![cfg_attr(
    all(feature = "metering", feature = "yaml"),
    doc = concat!("```\n", include_str!("../examples/metering.rs"), "```")
)]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

#[cfg(feature = "advise")]
pub use gpuquota_advise as advise;
#[cfg(feature = "kueue")]
pub use gpuquota_cohort as cohort;
#[cfg(feature = "fairshare")]
pub use gpuquota_fairshare as fairshare;
#[cfg(feature = "metering")]
pub use gpuquota_metering as metering;
#[cfg(feature = "mig")]
pub use gpuquota_mig as mig;
pub use gpuquota_model as model;
#[cfg(feature = "kai")]
pub use gpuquota_rank as rank;
#[cfg(feature = "report")]
pub use gpuquota_report as report;
#[cfg(feature = "sim")]
pub use gpuquota_sim as sim;

pub mod design;
pub mod guide;
pub mod lint;
#[cfg(feature = "report")]
pub mod samples;
#[cfg(feature = "report")]
pub mod seed;

// `gpuquota::…` paths inside the crate (as the CLI spells them, so code moves between the two
// unchanged).
extern crate self as gpuquota;

/// The README's examples, compiled and run as doc tests.
#[cfg(all(
    doctest,
    feature = "yaml",
    feature = "kueue",
    feature = "kai",
    feature = "mig",
    feature = "metering"
))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
