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
//! | [Kueue admission](#kueue-admission) | [`kueue::Input::from_model`], [`kueue::run`] | [`kueue`] |
//! | [Fair sharing](#fair-sharing-kueues-dominant-resource-share-and-weighted-max-min) | [`fairshare::tree::FairShareTree::drs`], [`fairshare::waterfill::water_fill`] | [`fairshare`] |
//! | [KAI Scheduler / Run:ai](#kai-scheduler--runai-fair-share-division-and-the-scheduling-session) | [`kai::Input::from_model`], [`kai::run`], [`kai::fairshare`] | [`kai`] |
//! | [MIG layout planning](#mig-layout-planning) | [`mig::Input::new`], [`mig::run`] | [`mig`] |
//! | [Metering and chargeback](#metering-and-chargeback) | [`metering::Input::from_document`], [`metering::run`] | [`metering`] |
//! | Simulation over virtual time | `sim::Simulation::from_model` / `from_files`, `sim::simulate` | [`sim`] |
//!
//! Every engine has the same two steps: a checked input built once with its options
//! (problems come back as one [`Error`] carrying typed diagnostics that name object and
//! field, and nothing is built), then a run over it that needs nothing else and returns a
//! typed report. These are the only ways in: what a command changes between reading and
//! running is an option (Kueue's [`kueue::Options::validation`] and
//! [`kueue::Options::ignore_fair_sharing`], KAI's [`kai::Options::usage`] and
//! [`kai::Options::weight_follows_quota`], MIG's [`mig::Options::fast`]), and a caller that
//! steps a run itself starts from the checked input too (Kueue's [`kueue::Input::scheduler`],
//! KAI's [`kai::live::LiveCluster::new`]). The snapshots an input holds ([`kueue::World`],
//! [`kai::Cluster`]) are read through it; [`mig::Plan::verify`] checks a plan against its
//! input. The `gpuquota` command's subcommands
//! as library calls (flags in, what the command prints out) are the module `command`
//! (feature `command`).
//!
//! | engine | input | options | run | report |
//! |---|---|---|---|---|
//! | Kueue | [`kueue::Input::from_model`]`(&Model, &Options)` | [`kueue::Options`] | [`kueue::run`]`(&Input) -> Report` | [`kueue::Report`] |
//! | KAI | [`kai::Input::from_model`]`(&Model, &Options)` | [`kai::Options`] | [`kai::run`]`(&Input) -> Result<Report, Error>` | [`kai::Report`] |
//! | MIG | [`mig::Input::new`]`(&PlanRequest, &Catalogue, &Options)` | [`mig::Options`] | [`mig::run`]`(&Input) -> Report` | [`mig::Report`] |
//! | metering | [`metering::Input::from_document`]`(&Document, dcgm)` or [`metering::Input::new`]`(Options)` | [`metering::Options`] | [`metering::run`]`(&Input) -> Result<Report, Error>` | [`metering::Report`] |
//! | simulator | `sim::Simulation::from_model(&Model, &Options)`, `sim::Simulation::from_files` | `sim::Options` | `sim::simulate(&Simulation) -> Result<Report, Error>` | [`sim::Report`] |
//!
//! MIG and metering read no Kubernetes objects (a planning request, allocation records), so
//! their inputs are built from those. A run is fallible only where it can fail over a
//! checked input: KAI's session adds up capacity exactly and can overflow; a metering
//! [`metering::Input`] is plain data checked as it is metered. [`fairshare`] is a library
//! of functions rather than an engine: Kueue's fair sharing runs inside the Kueue engine
//! ([`kueue::Options::fair_sharing`]).
//!
//! Every fallible entry point returns the one [`Error`]: opaque, told apart by predicates
//! ([`Error::is_invalid_input`], [`Error::is_limit`], [`Error::is_io`],
//! [`Error::is_overflow`], [`Error::is_engine`]), with the typed diagnostics
//! ([`Error::diagnostics`]).
//!
//! Each input can be built as plain Rust values instead of YAML: the Kueue engine's
//! [`kueue::entry`] page and the KAI and MIG examples below show it.
//!
//! Every engine's own page states the properties its tests check, the input formats and the
//! JSON output. [`guide`] answers the common questions with a command and a call each;
//! [`design`] records how the crates are cut and where each upstream rule comes from. The
//! examples below are the crate's Cargo examples (`cargo run -p gpuquota --example NAME`), run
//! here as doc tests.
//!
//! # Cargo features
//!
//! One feature per engine, all on by default, each the name of its module: `kueue`
//! ([`kueue`], with `fairshare`), `fairshare` ([`fairshare`]), `kai` ([`kai`]), `mig`
//! ([`mig`]), `metering` ([`metering`], with `mig`), `sim` ([`sim`], with `kueue`) and
//! `advise` ([`advise`], with `sim`). The modules `cohort` and `rank` are the deprecated
//! former names of [`kueue`] and [`kai`], kept for one release.
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
//! [`kueue::Input::from_model`] checks the manifests once and [`kueue::run`] runs
//! Kueue's scheduling cycles over them: hierarchical cohort quotas with borrowing and lending
//! limits, flavor assignment, classical preemption (fair sharing when the `Configuration` or
//! [`kueue::Options`] turns it on, [`kueue::fair`]), and a pending reason for every
//! workload left.
//! [`kueue::quotas`] gives the `available` and `potentialAvailable` Kueue's cache computes
//! for the same input.
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
//! A [`kai::Input`] built from Queues, PodGroups, Pods and Nodes is divided as KAI's
//! proportion plugin does (deserved quota, then over-quota weight by priority tier, in whole
//! units; [`kai::fairshare`]), and [`kai::run`] runs one scheduling
//! session: allocation with gangs and limits, consolidation, reclaim, preemption and stale-gang
//! eviction, each pending job with upstream's reason. [`kai::usage`] adds time-based
//! fairshare.
//!
#![cfg_attr(
    all(feature = "kai", feature = "yaml"),
    doc = concat!("```\n", include_str!("../examples/kai_fairshare.rs"), "```")
)]
//!
//! # MIG layout planning
//!
//! [`mig::run`] over a [`mig::Input`] finds the MIG layouts that serve the most weighted demand,
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
//! [`metering::run`] over a [`metering::Input`] integrates allocations (intervals, sampled series, DCGM scrapes) into
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
pub use gpuquota_cohort as kueue;
#[cfg(feature = "fairshare")]
pub use gpuquota_fairshare as fairshare;
#[cfg(feature = "metering")]
pub use gpuquota_metering as metering;
#[cfg(feature = "mig")]
pub use gpuquota_mig as mig;
pub use gpuquota_model as model;
#[cfg(feature = "kai")]
pub use gpuquota_rank as kai;
#[cfg(feature = "report")]
pub use gpuquota_report as report;
#[cfg(feature = "sim")]
pub use gpuquota_sim as sim;

/// The one error every fallible entry point returns (see [`model::Error`]).
pub use gpuquota_model::Error;

/// The former name of [`kueue`], kept for one release.
///
/// Every item of [`kueue`] is reachable through it. Its types, functions and constants are
/// deprecated aliases, so using them warns; rustc does not report a path that only passes
/// through a deprecated module, so the engine's sub-modules (`cohort::fair::...`) and the
/// `Policy` trait and `Classical` policy resolve without a warning (importing the module
/// itself, `use gpuquota::cohort;`, warns).
///
/// ```compile_fail
/// #![deny(deprecated)]
/// let _ = gpuquota::cohort::Options::default();
/// ```
///
/// ```
/// #![deny(deprecated)]
/// let _ = gpuquota::kueue::Options::default();
/// ```
#[cfg(feature = "kueue")]
#[deprecated(note = "renamed to `gpuquota::kueue`, the name of its feature")]
#[allow(deprecated)]
pub mod cohort {
    pub use gpuquota_cohort::*;

    #[deprecated(note = "use `gpuquota::kueue::Entry`")]
    #[doc(hidden)]
    pub type Entry = gpuquota_cohort::Entry;

    #[deprecated(note = "use `gpuquota::kueue::Scheduler`")]
    #[doc(hidden)]
    pub type Scheduler<'w, P = gpuquota_cohort::Classical> = gpuquota_cohort::Scheduler<'w, P>;

    #[deprecated(note = "use `gpuquota::kueue::CycleOutcome`")]
    #[doc(hidden)]
    pub type CycleOutcome = gpuquota_cohort::CycleOutcome;

    #[deprecated(note = "use `gpuquota::kueue::Input`")]
    #[doc(hidden)]
    pub type Input = gpuquota_cohort::Input;

    #[deprecated(note = "use `gpuquota::kueue::Options`")]
    #[doc(hidden)]
    pub type Options = gpuquota_cohort::Options;

    #[deprecated(note = "use `gpuquota::kueue::BuildProblem`")]
    #[doc(hidden)]
    pub type BuildProblem = gpuquota_cohort::BuildProblem;

    #[deprecated(note = "use `gpuquota::kueue::Warning`")]
    #[doc(hidden)]
    pub type Warning = gpuquota_cohort::Warning;

    #[deprecated(note = "use `gpuquota::kueue::FlavorReason`")]
    #[doc(hidden)]
    pub type FlavorReason = gpuquota_cohort::FlavorReason;

    #[deprecated(note = "use `gpuquota::kueue::NoFitReason`")]
    #[doc(hidden)]
    pub type NoFitReason = gpuquota_cohort::NoFitReason;

    #[deprecated(note = "use `gpuquota::kueue::Pending`")]
    #[doc(hidden)]
    pub type Pending = gpuquota_cohort::Pending;

    #[deprecated(note = "use `gpuquota::kueue::PreemptReason`")]
    #[doc(hidden)]
    pub type PreemptReason = gpuquota_cohort::PreemptReason;

    #[deprecated(note = "use `gpuquota::kueue::Report`")]
    #[doc(hidden)]
    pub type Report = gpuquota_cohort::Report;

    #[deprecated(note = "use `gpuquota::kueue::QuotasReport`")]
    #[doc(hidden)]
    pub type QuotasReport = gpuquota_cohort::QuotasReport;

    #[deprecated(note = "use `gpuquota::kueue::ScheduleReport`")]
    #[doc(hidden)]
    pub type ScheduleReport = gpuquota_cohort::ScheduleReport;

    #[deprecated(note = "use `gpuquota::kueue::World`")]
    #[doc(hidden)]
    pub type World = gpuquota_cohort::World;

    #[deprecated(note = "use `gpuquota::kueue::run`")]
    #[doc(hidden)]
    pub fn run(input: &Input) -> Report {
        gpuquota_cohort::run(input)
    }

    #[deprecated(note = "use `gpuquota::kueue::quotas`")]
    #[doc(hidden)]
    pub fn quotas(input: &Input) -> QuotasReport {
        gpuquota_cohort::quotas(input)
    }

    #[deprecated(note = "use `gpuquota::kueue::KINDS`")]
    #[doc(hidden)]
    pub const KINDS: &[gpuquota_model::Kind] = gpuquota_cohort::KINDS;
}

/// The former name of [`kai`], kept for one release.
///
/// Every item of [`kai`] is reachable through it; its types and functions are deprecated
/// aliases, so using them warns (sub-modules resolve without a warning, as for
/// [`cohort`](mod@cohort)).
///
/// ```compile_fail
/// #![deny(deprecated)]
/// let _ = gpuquota::rank::Options::default();
/// ```
///
/// ```
/// #![deny(deprecated)]
/// let _ = gpuquota::kai::Options::default();
/// ```
#[cfg(feature = "kai")]
#[deprecated(note = "renamed to `gpuquota::kai`, the name of its feature")]
#[allow(deprecated)]
pub mod rank {
    pub use gpuquota_rank::*;

    #[deprecated(note = "use `gpuquota::kai::Division`")]
    #[doc(hidden)]
    pub type Division = gpuquota_rank::Division;

    #[deprecated(note = "use `gpuquota::kai::DivisionError`")]
    #[doc(hidden)]
    pub type DivisionError = gpuquota_rank::DivisionError;

    #[deprecated(note = "use `gpuquota::kai::DivisionOptions`")]
    #[doc(hidden)]
    pub type DivisionOptions = gpuquota_rank::DivisionOptions;

    #[deprecated(note = "use `gpuquota::kai::Hierarchy`")]
    #[doc(hidden)]
    pub type Hierarchy = gpuquota_rank::Hierarchy;

    #[deprecated(note = "use `gpuquota::kai::Mode`")]
    #[doc(hidden)]
    pub type Mode = gpuquota_rank::Mode;

    #[deprecated(note = "use `gpuquota::kai::QueueInput`")]
    #[doc(hidden)]
    pub type QueueInput = gpuquota_rank::QueueInput;

    #[deprecated(note = "use `gpuquota::kai::Resource`")]
    #[doc(hidden)]
    pub type Resource = gpuquota_rank::Resource;

    #[deprecated(note = "use `gpuquota::kai::ResourceParams`")]
    #[doc(hidden)]
    pub type ResourceParams = gpuquota_rank::ResourceParams;

    #[deprecated(note = "use `gpuquota::kai::Input`")]
    #[doc(hidden)]
    pub type Input = gpuquota_rank::Input;

    #[deprecated(note = "use `gpuquota::kai::Options`")]
    #[doc(hidden)]
    pub type Options = gpuquota_rank::Options;

    #[deprecated(note = "use `gpuquota::kai::Report`")]
    #[doc(hidden)]
    pub type Report = gpuquota_rank::Report;

    #[deprecated(note = "use `gpuquota::kai::SessionOptions`")]
    #[doc(hidden)]
    pub type SessionOptions = gpuquota_rank::SessionOptions;

    #[deprecated(note = "use `gpuquota::kai::SessionResult`")]
    #[doc(hidden)]
    pub type SessionResult = gpuquota_rank::SessionResult;

    #[deprecated(note = "use `gpuquota::kai::BuildOptions`")]
    #[doc(hidden)]
    pub type BuildOptions = gpuquota_rank::BuildOptions;

    #[deprecated(note = "use `gpuquota::kai::Cluster`")]
    #[doc(hidden)]
    pub type Cluster = gpuquota_rank::Cluster;

    #[deprecated(note = "use `gpuquota::kai::run`")]
    #[doc(hidden)]
    pub fn run(input: &Input) -> Result<Report, crate::Error> {
        gpuquota_rank::run(input)
    }

    #[deprecated(note = "use `gpuquota::kai::fairshare`")]
    #[doc(hidden)]
    pub fn fairshare(
        input: &Input,
    ) -> Result<gpuquota_rank::report::FairshareReport, crate::Error> {
        gpuquota_rank::fairshare(input)
    }
}

#[cfg(feature = "command")]
pub mod command;
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
