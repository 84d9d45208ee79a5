//! The engine's uniform entry point: [`Input::from_model`], then [`run`].
//!
//! Every engine of the workspace has the same two steps: build the input from a
//! [`Model`] with the options (every problem comes back as one [`Error`] carrying the
//! typed diagnostics, nothing is built), then run it and get the report. For Kueue the
//! input is the [`World`], the options and, when fair sharing is on, the fair-sharing policy
//! read from the same model (weights, admission scopes, LocalQueues), so running never needs
//! the model or the options again, and cannot fail.
//!
//! An embedder can build the model as plain Rust values, without YAML:
//!
//! ```
//! use gpuquota_cohort::{Input, Options, run};
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
//! let input = Input::from_model(&model, &Options::default())?;
//! let report = run(&input);
//! assert_eq!(report.admitted.len(), 1);
//! assert_eq!(report.pending.len(), 1);
//! assert_eq!(report.pending[0].reason, "WaitingForQuota");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use gpuquota_fairshare::config::settings_from_configuration;
use gpuquota_model::diag::Diagnostic;
use gpuquota_model::validate::Validation;
use gpuquota_model::{Error, Model};

use crate::cycle::{Classical, Scheduler};
use crate::error::codes;
use crate::fair::FairSharing;
use crate::report::{QuotasReport, ScheduleReport};
use crate::world::World;

/// What [`Input::from_model`] reads and [`run`] applies (kept in the [`Input`]).
///
/// Build it with [`Options::default`] and the `with_*` methods: fields may be added
/// in later versions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options {
    /// At most this many cycles ([`run`]); `None` runs until a cycle changes nothing.
    pub cycles: Option<u32>,
    /// Fair sharing on even without a `Configuration` that enables it (the CLI's
    /// `--fair-sharing`; [`Input::from_model`]). A `Configuration` with a
    /// `fairSharing` or `admissionFairSharing` stanza turns it on by itself.
    pub fair_sharing: bool,
    /// The `Configuration`'s fair-sharing and admission fair-sharing settings are not read
    /// by the engine, and the input has no fair-sharing policy (this overrides
    /// [`Options::fair_sharing`]). `kueue quotas` reads its input so, as the quotas need no
    /// policy: the settings reader's and the weights' errors do not stop them (the
    /// workspace's validator, under [`Validation::Full`], still checks the `Configuration`).
    pub ignore_fair_sharing: bool,
    /// The checks before the world is built: the workspace's validator and then the
    /// engine's own ([`Validation::Full`], the default), or only the engine's own
    /// ([`Validation::EngineOnly`]: what Kueue's cache tolerates, such as a cohort cycle or
    /// a `lendingLimit` above the nominal quota, is then a warning).
    pub validation: Validation,
}

impl Options {
    /// Sets [`Options::cycles`].
    pub fn with_cycles(mut self, cycles: Option<u32>) -> Options {
        self.cycles = cycles;
        self
    }

    /// Sets [`Options::fair_sharing`].
    pub fn with_fair_sharing(mut self, on: bool) -> Options {
        self.fair_sharing = on;
        self
    }

    /// Sets [`Options::ignore_fair_sharing`].
    pub fn with_ignore_fair_sharing(mut self, ignore: bool) -> Options {
        self.ignore_fair_sharing = ignore;
        self
    }

    /// Sets [`Options::validation`].
    pub fn with_validation(mut self, validation: Validation) -> Options {
        self.validation = validation;
        self
    }
}

/// A checked Kueue input: the [`World`], the options and, when fair sharing is on, its
/// policy.
#[derive(Debug, Clone)]
pub struct Input {
    world: std::sync::Arc<World>,
    fair: Option<FairSharing>,
    options: Options,
}

/// A fair-sharing settings or weight error of this engine as an invalid-input diagnostic.
fn fair_diagnostic(e: &gpuquota_fairshare::FairShareError) -> Diagnostic {
    Diagnostic::error(e.code(), e.to_string()).engine("kueue")
}

impl Input {
    /// Validates `model`, reads the fair-sharing settings of its `Configuration` (on also when
    /// `options.fair_sharing`), and builds the world and the fair-sharing policy.
    ///
    /// The world's warnings ([`Input::warnings`]) leave out
    /// [`codes::FAIR_SHARING_NOT_RUN`] when fair sharing runs.
    ///
    /// # Errors
    /// Every problem at once, in this order: the Configuration's fair-sharing settings, then
    /// the objects (the validator under [`Validation::Full`], then the engine's own checks),
    /// then the fair-sharing weights. Each diagnostic prints
    /// as the engine's own error did. The error is [`Error::is_limit`] when the only
    /// problems are cohort trees deeper than the limit, [`Error::is_invalid_input`]
    /// otherwise.
    ///
    /// # Complexity
    /// O(objects × log objects + nodes × frs) for the world, plus O(N·F + N log N) for the fair-sharing index of N nodes
    /// and F flavor-resources.
    pub fn from_model(model: &Model, options: &Options) -> Result<Input, Error> {
        let settings = if options.ignore_fair_sharing {
            None
        } else {
            Some(
                settings_from_configuration(model.configuration.as_ref(), options.fair_sharing)
                    .map_err(|errors| {
                        Error::invalid_input(
                            errors.0.iter().map(fair_diagnostic).collect::<Vec<_>>(),
                        )
                    })?,
            )
        };
        let mut world = match options.validation {
            Validation::EngineOnly => World::build_unvalidated(model)?,
            _ => World::build(model)?,
        };
        // upstream reads `admissionFairSharing` only under the AdmissionFairSharing gate
        let settings = settings.map(|mut s| {
            if !world.feature_gates.admission_fair_sharing {
                s.admission = None;
            }
            s
        });
        let fair = match settings {
            Some(settings) if settings.enabled || settings.admission.is_some() => {
                if settings.enabled {
                    world
                        .warnings
                        .retain(|w| w.code != codes::FAIR_SHARING_NOT_RUN);
                }
                Some(
                    FairSharing::new(&world, model, settings)
                        .map_err(|e| Error::invalid_input(fair_diagnostic(&e)))?,
                )
            }
            _ => None,
        };
        Ok(Input {
            world: std::sync::Arc::new(world),
            fair,
            options: options.clone(),
        })
    }

    /// An input from parts built in this crate (its test kit).
    #[cfg(feature = "testkit")]
    pub(crate) fn from_parts(world: World, fair: Option<FairSharing>, options: &Options) -> Input {
        Input {
            world: std::sync::Arc::new(world),
            fair,
            options: options.clone(),
        }
    }

    /// The world.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The options the input was built with.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The live-cluster states Kueue tolerates, reported on the side.
    pub fn warnings(&self) -> &[crate::error::Warning] {
        &self.world.warnings
    }

    /// Whether the schedule orders and preempts by fair sharing (or admission fair sharing).
    pub fn fair_sharing(&self) -> bool {
        self.fair.is_some()
    }

    /// Marks the named ClusterQueues of this input inactive as terminating
    /// ([`crate::cycle::transition::mark_terminating`]): a rebuilt input whose deleted ClusterQueues
    /// still hold admitted workloads, before its [`Input::scheduler`] adopts them.
    ///
    /// # Complexity
    /// O(names × log ClusterQueues).
    pub fn mark_terminating(&mut self, names: &[String]) {
        crate::cycle::transition::mark_terminating(
            std::sync::Arc::make_mut(&mut self.world),
            names,
        );
    }

    /// A scheduler at the start of the run over this input, with its fair-sharing policy
    /// when it has one, for a caller that steps the cycles itself (the simulator's event
    /// loop) instead of [`run`].
    ///
    /// # Complexity
    /// O(W log W) for W workloads, plus the policy's copy under fair sharing.
    pub fn scheduler(&self) -> Stepper<'_> {
        match &self.fair {
            Some(policy) => Stepper::FairSharing(Scheduler::with_policy(
                std::sync::Arc::clone(&self.world),
                policy.clone(),
            )),
            None => Stepper::Classical(Scheduler::new(std::sync::Arc::clone(&self.world))),
        }
    }
}

/// A [`Scheduler`] over an [`Input`] ([`Input::scheduler`]): classical ordering and
/// preemption, or fair sharing's.
// Taken apart at once by the caller (one per run), so the size difference of the variants
// costs nothing and a box would only add an allocation and a dereference to every cycle.
#[allow(clippy::large_enum_variant)]
pub enum Stepper<'w> {
    /// Kueue's classical ordering and preemption.
    Classical(Scheduler<'w, Classical>),
    /// Fair sharing (or admission fair sharing).
    FairSharing(Scheduler<'w, FairSharing>),
}

/// Runs Kueue's scheduling cycles on `input` (at most its [`Options::cycles`], or until a
/// cycle changes nothing), with fair sharing when the input has it, and reports.
///
/// Infallible: every input problem is refused by [`Input::from_model`].
///
/// # Complexity
/// O(cycles × (heads × (flavors × resources × depth + candidates log candidates))), plus
/// O(heads × N·F) per cycle under fair sharing.
pub fn run(input: &Input) -> ScheduleReport {
    let world = &input.world;
    let cycles = input.options.cycles;
    match input.scheduler() {
        Stepper::FairSharing(mut s) => {
            s.run(cycles);
            ScheduleReport::from_scheduler(world, &s)
        }
        Stepper::Classical(mut s) => {
            s.run(cycles);
            ScheduleReport::from_scheduler(world, &s)
        }
    }
}

impl std::fmt::Debug for Stepper<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Stepper::Classical(_) => "Stepper::Classical",
            Stepper::FairSharing(_) => "Stepper::FairSharing",
        })
    }
}

/// The quotas of every ClusterQueue and Cohort of the input (`kueue quotas`): the
/// `available` and `potentialAvailable` Kueue's cache computes, at the start of the run.
///
/// # Complexity
/// O(nodes × flavor-resources × depth).
pub fn quotas(input: &Input) -> QuotasReport {
    QuotasReport::build(&input.world)
}

impl From<crate::error::Error> for Error {
    /// The engine's build problems, each as its diagnostic (code, object, field). A limit
    /// when every problem is a cohort tree deeper than the limit, otherwise invalid input.
    fn from(e: crate::error::Error) -> Error {
        let limit =
            !e.problems.is_empty() && e.problems.iter().all(|p| p.code == codes::TREE_TOO_DEEP);
        let diagnostics: Vec<Diagnostic> = e.problems.iter().map(|p| p.diagnostic()).collect();
        if limit {
            Error::limit(diagnostics)
        } else {
            Error::invalid_input(diagnostics)
        }
    }
}

#[cfg(all(test, feature = "yaml"))]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    fn model(yaml: &str) -> Model {
        gpuquota_model::import_str("t.yaml", yaml)
            .expect("valid YAML")
            .model
    }

    const CQ: &str = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: research}\nspec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors: [{name: default, resources: [{name: cpu, nominalQuota: 6, lendingLimit: 2}]}]\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: default}\n";

    #[test]
    fn refused_input_is_one_error_with_the_validators_kind_and_field() {
        let e = Input::from_model(&model(CQ), &Options::default()).expect_err("refused");
        assert!(e.is_invalid_input());
        let d = &e.diagnostics().0[0];
        // the validator's own kind, not one looked up among the engine's kinds
        assert_eq!(d.kind, "ClusterQueue");
        assert_eq!(d.name, "research");
        assert_eq!(
            d.field,
            "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit"
        );
        assert_eq!(d.code, gpuquota_model::diag::codes::INVALID);
        assert_eq!(e.diagnostics().len(), 1);
    }

    #[test]
    fn a_tree_too_deep_is_a_limit() {
        let e = Error::from(crate::error::Error {
            problems: vec![crate::error::BuildProblem {
                kind: "Cohort".into(),
                name: "c1001".into(),
                field: "spec.parentName".into(),
                message: "too deep".into(),
                code: codes::TREE_TOO_DEEP,
            }],
        });
        assert!(e.is_limit());
        assert_eq!(e.to_string(), "Cohort \"c1001\": spec.parentName: too deep");
    }

    const BAD_FAIR_SHARING: &str = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing: {preemptionStrategies: [Bogus]}\n---\n";

    #[test]
    fn ignoring_fair_sharing_leaves_a_bad_stanza_unread() {
        let yaml = format!("{BAD_FAIR_SHARING}{}", CQ.replace(", lendingLimit: 2", ""));
        let m = model(&yaml);
        let e = Input::from_model(&m, &Options::default()).expect_err("a bad strategy");
        assert_eq!(
            e.to_string(),
            "Configuration: fairSharing.preemptionStrategies[0]: unsupported value \"Bogus\": supported values: \"LessThanOrEqualToFinalShare\", \"LessThanInitialShare\""
        );
        // the lint's reading: the engine's checks only, the stanza not read, and no policy
        // built even when asked (under the full validation the validator still refuses the
        // Configuration, with its own wording)
        let options = Options::default()
            .with_validation(Validation::EngineOnly)
            .with_ignore_fair_sharing(true)
            .with_fair_sharing(true);
        let input = Input::from_model(&m, &options).expect("not read");
        assert!(!input.fair_sharing());
        assert!(matches!(input.scheduler(), Stepper::Classical(_)));
        assert_eq!(input.world().cluster_queues.len(), 1);
    }

    #[test]
    fn engine_only_validation_tolerates_what_the_validator_refuses() {
        // a lendingLimit without a cohort: the validator refuses it, Kueue's cache ignores it
        let m = model(CQ);
        assert!(Input::from_model(&m, &Options::default()).is_err());
        let options = Options::default().with_validation(Validation::EngineOnly);
        let input = Input::from_model(&m, &options).expect("tolerated");
        assert_eq!(input.world().cluster_queues.len(), 1);
        assert!(matches!(input.scheduler(), Stepper::Classical(_)));
    }

    #[test]
    fn the_scheduler_of_a_fair_sharing_input_has_its_policy() {
        let yaml = CQ.replace(", lendingLimit: 2", "");
        let options = Options::default().with_fair_sharing(true);
        let input = Input::from_model(&model(&yaml), &options).expect("valid");
        assert!(input.fair_sharing());
        let stepper = input.scheduler();
        assert_eq!(format!("{stepper:?}"), "Stepper::FairSharing");
        let Stepper::FairSharing(mut s) = stepper else {
            unreachable!("fair sharing is on")
        };
        // no workload: a cycle has no head
        assert!(!s.run_cycle());
    }

    #[test]
    fn options_travel_in_the_input() {
        let yaml = CQ.replace(", lendingLimit: 2", "");
        let options = Options::default().with_cycles(Some(3));
        let input = Input::from_model(&model(&yaml), &options).expect("valid");
        assert_eq!(input.options().cycles, Some(3));
        assert!(!input.fair_sharing());
        let report = run(&input);
        // no workload: the first cycle has no head and is not counted
        assert_eq!(report.cycles, 0);
        assert!(report.admitted.is_empty());
    }
}
