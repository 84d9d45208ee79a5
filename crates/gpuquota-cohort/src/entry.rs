//! The engine's uniform entry point: [`ScheduleInput::from_model`], then [`run`].
//!
//! Every engine of the workspace has the same two steps: build the input from a
//! [`Model`] with the options (every problem comes back as [`Diagnostics`], nothing is
//! built), then run it with the same options and get the report. For Kueue the input is the
//! [`World`] and, when fair sharing is on, the fair-sharing policy read from the same model
//! (weights, admission scopes, LocalQueues), so running never needs the model again.
//!
//! An embedder can build the model as plain Rust values, without YAML:
//!
//! ```
//! use gpuquota_cohort::{ScheduleInput, ScheduleOptions, run};
//! use gpuquota_model::core::{Container, ResourceRequirements};
//! use gpuquota_model::kueue::{
//!     ClusterQueue, FlavorQuotas, LocalQueue, PodSet, ResourceFlavor, ResourceGroup,
//!     ResourceQuota, Workload,
//! };
//! use gpuquota_model::meta::{LabelSelector, ObjectMeta};
//! use gpuquota_model::{Model, Quantity, ResourceName};
//!
//! let gpu = ResourceName::new("nvidia.com/gpu");
//! let meta = |name: &str, namespace: Option<&str>| ObjectMeta {
//!     name: name.into(),
//!     namespace: namespace.map(Into::into),
//!     ..ObjectMeta::default()
//! };
//! let mut model = Model::default();
//! model.resource_flavors.insert(
//!     "h200".into(),
//!     ResourceFlavor { metadata: meta("h200", None), ..ResourceFlavor::default() },
//! );
//! let mut cq = ClusterQueue { metadata: meta("research", None), ..ClusterQueue::default() };
//! cq.spec.namespace_selector = Some(LabelSelector::default());
//! cq.spec.resource_groups = vec![ResourceGroup {
//!     covered_resources: vec![gpu.clone()],
//!     flavors: vec![FlavorQuotas {
//!         name: "h200".into(),
//!         resources: vec![ResourceQuota {
//!             name: gpu.clone(),
//!             nominal_quota: Some(Quantity::parse("8")?),
//!             ..ResourceQuota::default()
//!         }],
//!     }],
//! }];
//! model.cluster_queues.insert("research".into(), cq);
//! let mut lq = LocalQueue { metadata: meta("team", Some("ns")), ..LocalQueue::default() };
//! lq.spec.cluster_queue = "research".into();
//! model.local_queues.insert("ns/team".into(), lq);
//! for (name, gpus) in [("train", "6"), ("tune", "4")] {
//!     let mut w = Workload { metadata: meta(name, Some("ns")), ..Workload::default() };
//!     w.spec.queue_name = Some("team".into());
//!     let mut pod_set = PodSet { name: "main".into(), count: 1, ..PodSet::default() };
//!     pod_set.template.spec.containers = vec![Container {
//!         name: "c".into(),
//!         resources: ResourceRequirements {
//!             requests: [(gpu.clone(), Quantity::parse(gpus)?)].into_iter().collect(),
//!             ..ResourceRequirements::default()
//!         },
//!         ..Container::default()
//!     }];
//!     w.spec.pod_sets = vec![pod_set];
//!     model.workloads.insert(format!("ns/{name}"), w);
//! }
//!
//! let options = ScheduleOptions::default();
//! let input = ScheduleInput::from_model(&model, &options).expect("well-formed objects");
//! let report = run(&input, &options);
//! assert_eq!(report.admitted.len(), 1);
//! assert_eq!(report.pending.len(), 1);
//! assert_eq!(report.pending[0].reason, "WaitingForQuota");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use gpuquota_fairshare::config::settings_from_configuration;
use gpuquota_model::Model;
use gpuquota_model::diag::{Diagnostic, Diagnostics};

use crate::cycle::Scheduler;
use crate::error::codes;
use crate::fair::FairSharing;
use crate::report::ScheduleReport;
use crate::world::World;

/// What [`ScheduleInput::from_model`] and [`run`] read.
///
/// Build it with [`ScheduleOptions::default`] and the `with_*` methods: fields may be added
/// in later versions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ScheduleOptions {
    /// At most this many cycles ([`run`]); `None` runs until a cycle changes nothing.
    pub cycles: Option<u32>,
    /// Fair sharing on even without a `Configuration` that enables it (the CLI's
    /// `--fair-sharing`; [`ScheduleInput::from_model`]). A `Configuration` with a
    /// `fairSharing` or `admissionFairSharing` stanza turns it on by itself.
    pub fair_sharing: bool,
}

impl ScheduleOptions {
    /// Sets [`ScheduleOptions::cycles`].
    pub fn with_cycles(mut self, cycles: Option<u32>) -> ScheduleOptions {
        self.cycles = cycles;
        self
    }

    /// Sets [`ScheduleOptions::fair_sharing`].
    pub fn with_fair_sharing(mut self, on: bool) -> ScheduleOptions {
        self.fair_sharing = on;
        self
    }
}

/// A checked Kueue input: the [`World`] and, when fair sharing is on, its policy.
#[derive(Debug, Clone)]
pub struct ScheduleInput {
    world: World,
    fair: Option<FairSharing>,
}

impl ScheduleInput {
    /// Validates `model`, reads the fair-sharing settings of its `Configuration` (on also when
    /// `options.fair_sharing`), and builds the world and the fair-sharing policy.
    ///
    /// The world's warnings ([`ScheduleInput::warnings`]) leave out
    /// [`codes::FAIR_SHARING_NOT_RUN`] when fair sharing runs.
    ///
    /// # Errors
    /// Every problem at once, in this order: the Configuration's fair-sharing settings, then
    /// the objects ([`World::build`]), then the fair-sharing weights. Each diagnostic prints
    /// as the engine's own error did.
    ///
    /// # Complexity
    /// That of [`World::build`], plus O(N·F + N log N) for the fair-sharing index of N nodes
    /// and F flavor-resources.
    pub fn from_model(
        model: &Model,
        options: &ScheduleOptions,
    ) -> Result<ScheduleInput, Diagnostics> {
        let fair_error = |e: &gpuquota_fairshare::FairShareError| {
            Diagnostic::error(e.code(), e.to_string()).engine("kueue")
        };
        let settings =
            settings_from_configuration(model.configuration.as_ref(), options.fair_sharing)
                .map_err(|errors| Diagnostics(errors.0.iter().map(fair_error).collect()))?;
        let mut world = World::build(model)
            .map_err(|e| Diagnostics(e.problems.iter().map(|p| p.diagnostic()).collect()))?;
        let fair = if settings.enabled || settings.admission.is_some() {
            if settings.enabled {
                world
                    .warnings
                    .retain(|w| w.code != codes::FAIR_SHARING_NOT_RUN);
            }
            Some(
                FairSharing::new(&world, model, settings)
                    .map_err(|e| Diagnostics(vec![fair_error(&e)]))?,
            )
        } else {
            None
        };
        Ok(ScheduleInput { world, fair })
    }

    /// An input from a world built by the caller ([`World::build`],
    /// [`World::build_unvalidated`]) and, for fair sharing, a policy built from the same
    /// model ([`FairSharing::new`]).
    pub fn new(world: World, fair: Option<FairSharing>) -> ScheduleInput {
        ScheduleInput { world, fair }
    }

    /// The world.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The live-cluster states Kueue tolerates, reported on the side.
    pub fn warnings(&self) -> &[crate::error::Warning] {
        &self.world.warnings
    }

    /// Whether the schedule orders and preempts by fair sharing (or admission fair sharing).
    pub fn fair_sharing(&self) -> bool {
        self.fair.is_some()
    }

    /// The world and the fair-sharing policy, for a caller that drives a [`Scheduler`]
    /// itself (the simulator's incremental event loop) instead of [`run`].
    pub fn into_parts(self) -> (World, Option<FairSharing>) {
        (self.world, self.fair)
    }
}

/// Runs Kueue's scheduling cycles on `input` (at most `options.cycles`, or until a cycle
/// changes nothing), with fair sharing when the input has it, and reports.
///
/// # Complexity
/// O(cycles × (heads × (flavors × resources × depth + candidates log candidates))), plus
/// O(heads × N·F) per cycle under fair sharing.
pub fn run(input: &ScheduleInput, options: &ScheduleOptions) -> ScheduleReport {
    let world = &input.world;
    match &input.fair {
        Some(policy) => {
            let mut s = Scheduler::with_policy(world, policy.clone());
            s.run(options.cycles);
            ScheduleReport::from_scheduler(world, &s)
        }
        None => {
            let mut s = Scheduler::new(world);
            s.run(options.cycles);
            ScheduleReport::from_scheduler(world, &s)
        }
    }
}
