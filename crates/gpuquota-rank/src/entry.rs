//! The engine's uniform entry point: [`Input::from_model`], then [`run`].
//!
//! As every engine of the workspace: the input is built once from a [`Model`] and the
//! [`Options`] (every problem comes back as one [`Error`] carrying the typed diagnostics,
//! nothing is built), then [`run`] runs one KAI scheduling session over it and returns the
//! [`Report`]; [`fairshare`] reads the fair-share division of the same input.
//!
//! ```
//! use gpuquota_rank::{Input, Options, run};
//! use gpuquota_model::import_str;
//!
//! let yaml = r#"
//! apiVersion: scheduling.run.ai/v2
//! kind: Queue
//! metadata: {name: a}
//! spec: {resources: {gpu: {quota: 2, overQuotaWeight: 1, limit: -1}}}
//! ---
//! apiVersion: v1
//! kind: Pod
//! metadata: {name: a-0, namespace: ns, labels: {kai.scheduler/queue: a}}
//! spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]}
//! status: {phase: Pending}
//! "#;
//! let model = import_str("example.yaml", yaml)?.model;
//! let total = gpuquota_rank::snapshot::parse_total("gpu=4")?;
//! let options = Options::default().with_build(
//!     gpuquota_rank::BuildOptions::default().with_total(total),
//! );
//! let input = Input::from_model(&model, &options)?;
//! let report = run(&input)?;
//! assert_eq!(report.allocated.len(), 1);
//! assert!(report.pending.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use gpuquota_model::diag::Diagnostic;
use gpuquota_model::{Error, Model};

use crate::division::DivisionError;
use crate::report::FairshareReport;
use crate::session::{SessionError, SessionOptions, SessionResult};
use crate::snapshot::{BuildOptions, Cluster, ENGINE, codes, division_diagnostic};
use crate::usage::UsageInput;
use gpuquota_model::validate::Validation;

/// What [`Input::from_model`] reads ([`Options::build`]) and [`run`] applies
/// ([`Options::session`]); kept in the [`Input`].
///
/// Build it with [`Options::default`] and the `with_*` methods: fields may be added in
/// later versions.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Options {
    /// How the objects are read: the cluster total, the session time, the queue label key,
    /// the checks ([`BuildOptions::validation`]).
    pub build: BuildOptions,
    /// The session's settings: division mode and kValue, placement, consolidation and
    /// staleness (upstream's defaults).
    pub session: SessionOptions,
    /// Measured usage (`kai … --usage`), applied to the queue tree at the snapshot's time
    /// by [`Input::from_model`]: each queue's historical usage for the time-aware division
    /// ([`UsageInput::apply`]); a queue it names that does not exist is a warning
    /// ([`codes::UNKNOWN_USAGE_QUEUE`]). Its `kValue` is not read here: set
    /// [`SessionOptions::division`] from [`UsageInput::k_value_nanos`].
    pub usage: Option<UsageInput>,
    /// Run:ai's rule that a project's over-quota weight is its deserved quota
    /// (`--weight-follows-quota`, [`crate::runai::weight_follows_quota`] with over-quota
    /// weights off), applied after [`Options::usage`].
    pub weight_follows_quota: bool,
}

impl Options {
    /// Sets [`Options::build`].
    pub fn with_build(mut self, build: BuildOptions) -> Options {
        self.build = build;
        self
    }

    /// Sets [`Options::session`].
    pub fn with_session(mut self, session: SessionOptions) -> Options {
        self.session = session;
        self
    }

    /// Sets [`Options::usage`].
    pub fn with_usage(mut self, usage: Option<UsageInput>) -> Options {
        self.usage = usage;
        self
    }

    /// Sets [`Options::weight_follows_quota`].
    pub fn with_weight_follows_quota(mut self, on: bool) -> Options {
        self.weight_follows_quota = on;
        self
    }
}

/// A checked KAI input: the [`Cluster`] snapshot and the session's settings.
#[derive(Debug, Clone)]
pub struct Input {
    cluster: Cluster,
    session: SessionOptions,
}

impl Input {
    /// Validates `model` and builds the cluster snapshot (the workspace's validator on KAI's
    /// kinds unless [`BuildOptions::validation`] says otherwise, then the engine's own
    /// checks), then applies [`Options::usage`] and [`Options::weight_follows_quota`] to its
    /// queue tree.
    ///
    /// # Errors
    /// [`Error::is_invalid_input`]: every bad object and field at once, each diagnostic
    /// naming kind, name and field; nothing is built. A usage file that does not fit the
    /// queues is one error, after the snapshot's warnings (the error carries both).
    ///
    /// # Complexity
    /// O(Q + P log P + N) for queues, pods and nodes, plus the validation's O(n log n) and
    /// the usage's O(U log Q).
    pub fn from_model(model: &Model, options: &Options) -> Result<Input, Error> {
        let mut cluster = match options.build.validation {
            Validation::EngineOnly => Cluster::from_model_unvalidated(model, &options.build)?,
            _ => Cluster::from_model(model, &options.build)?,
        };
        if let Some(usage) = &options.usage {
            match usage.apply(&mut cluster.hierarchy, cluster.now) {
                Ok(unknown) => {
                    for q in unknown {
                        cluster.warnings.push(
                            Diagnostic::warning(
                                codes::UNKNOWN_USAGE_QUEUE,
                                format!("usage: queue {q:?} does not exist"),
                            )
                            .engine(ENGINE),
                        );
                    }
                }
                Err(e) => {
                    let mut d = cluster.warnings;
                    d.push(Diagnostic::error(codes::INVALID_VALUE, e.to_string()).engine(ENGINE));
                    return Err(Error::invalid_input(d));
                }
            }
        }
        if options.weight_follows_quota {
            crate::runai::weight_follows_quota(&mut cluster.hierarchy, false);
        }
        Ok(Input {
            cluster,
            session: options.session,
        })
    }

    /// The snapshot's warnings (what KAI tolerates and reports, and the usage's unknown
    /// queues), in order.
    pub fn warnings(&self) -> &gpuquota_model::diag::Diagnostics {
        &self.cluster.warnings
    }

    /// The cluster, for a stepping scheduler ([`crate::live::LiveCluster::new`]).
    pub(crate) fn into_cluster(self) -> Cluster {
        self.cluster
    }

    /// The cluster snapshot.
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// The session's settings.
    pub fn session_options(&self) -> &SessionOptions {
        &self.session
    }
}

/// What [`run`] returns: allocations, evictions and pending jobs in decision order, and the
/// fair shares the session used.
pub type Report = SessionResult;

/// Runs one KAI scheduling session on `input` (allocate, consolidation, reclaim, preempt,
/// stale-gang eviction) and reports its decisions.
///
/// # Errors
/// Fallible at run time, not only on input: the session adds up free capacity and
/// allocations as it places and evicts, and a sum beyond exact arithmetic is
/// [`Error::is_overflow`]; a division refused over the tree the session derives is
/// [`Error::is_engine`] (or overflow). Input problems are all refused by
/// [`Input::from_model`].
///
/// # Complexity
/// Division as in [`crate::Hierarchy::divide`]; opening the session is O(J + T + N · G)
/// for J jobs of T pods and N nodes of G GPUs; each pending job costs one queue pick (O(Q))
/// plus its placement (O(N · G) per pod); each reclaim or preempt attempt O(V log V) for V
/// victims.
pub fn run(input: &Input) -> Result<Report, Error> {
    crate::session::run_session(&input.cluster, &input.session).map_err(Error::from)
}

/// The fair-share division of `input` (`kai fairshare`): per queue and resource the
/// deserved quota, fair share and allocation at session open, with the session's division
/// options.
///
/// # Errors
/// As [`run`]'s division: overflow beyond exact arithmetic.
///
/// # Complexity
/// That of [`crate::Hierarchy::divide`].
pub fn fairshare(input: &Input) -> Result<FairshareReport, Error> {
    crate::report::fairshare_report(&input.cluster, &input.session.division).map_err(Error::from)
}

fn division_error(e: &DivisionError) -> Error {
    let d = division_diagnostic(e);
    match e {
        DivisionError::Overflow { .. } => Error::overflow(d),
        _ => Error::engine(d),
    }
}

impl From<DivisionError> for Error {
    /// A division refused at run time: overflow, or an engine error; the diagnostic names
    /// the queue ([`division_diagnostic`]).
    fn from(e: DivisionError) -> Error {
        division_error(&e)
    }
}

impl From<SessionError> for Error {
    /// A session that could not complete: overflow, or the division's error.
    fn from(e: SessionError) -> Error {
        match e {
            SessionError::Division(d) => division_error(&d),
            SessionError::Overflow => {
                Error::overflow(Diagnostic::error(codes::TOO_LARGE, e.to_string()).engine(ENGINE))
            }
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

    #[test]
    fn refused_input_is_invalid_input_naming_the_queue() {
        let yaml = "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: a}\nspec: {parentQueue: a, resources: {gpu: {quota: 1, overQuotaWeight: 1, limit: -1}}}\n";
        let e = Input::from_model(&model(yaml), &Options::default()).expect_err("a cycle");
        assert!(e.is_invalid_input());
        let d = &e.diagnostics().0[0];
        assert_eq!((d.kind.as_str(), d.name.as_str()), ("Queue", "a"));
        assert_eq!(d.field, "spec.parentQueue");
    }

    #[test]
    fn session_errors_convert_by_variant() {
        let e = Error::from(SessionError::Overflow);
        assert!(e.is_overflow());
        assert_eq!(e.diagnostics().0[0].code, codes::TOO_LARGE);
        assert_eq!(
            e.to_string(),
            "session: an allocated or free amount overflows (requests too large)"
        );
        let e = Error::from(SessionError::Division(DivisionError::Overflow {
            queue: "a".into(),
            resource: crate::division::Resource::Gpu,
        }));
        assert!(e.is_overflow());
        assert_eq!(
            e.to_string(),
            "Queue \"a\": spec.resources.gpu: arithmetic overflow"
        );
        let e = Error::from(DivisionError::Cycle { queue: "b".into() });
        assert!(e.is_engine());
        assert_eq!(e.diagnostics().0[0].code, codes::QUEUE_CYCLE);
    }

    const QUEUE_A: &str = "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: a}\nspec: {resources: {gpu: {quota: 2, overQuotaWeight: 1, limit: -1}}}\n";

    #[test]
    fn usage_and_weight_follows_quota_are_applied_by_from_model() {
        let m = model(QUEUE_A);
        let usage =
            UsageInput::parse("queues: {a: {gpu: 0.25}, zz: {gpu: 0.5}}\n").expect("parses");
        let options = Options::default()
            .with_usage(Some(usage))
            .with_weight_follows_quota(true);
        let input = Input::from_model(&m, &options).expect("valid");
        let w: Vec<String> = input.warnings().iter().map(ToString::to_string).collect();
        assert_eq!(w, ["usage: queue \"zz\" does not exist"]);
        assert_eq!(input.warnings().0[0].code, codes::UNKNOWN_USAGE_QUEUE);
        let h = &input.cluster().hierarchy;
        let a = h.find("a").expect("queue a");
        let gpu = &h.queue(a).resources[crate::Resource::Gpu.index()];
        // usage 0.25 in nano-units; the weight is the deserved quota (2 GPUs), not 1
        assert_eq!(gpu.usage, 250_000_000);
        assert_eq!(
            (gpu.deserved, gpu.weight),
            (Some(2_000_000_000), 2_000_000_000)
        );
        // without the options: the written weight, no usage
        let plain = Input::from_model(&m, &Options::default()).expect("valid");
        let gpu = &plain.cluster().hierarchy.queue(a).resources[crate::Resource::Gpu.index()];
        assert_eq!((gpu.usage, gpu.weight), (0, 1_000_000_000));
    }

    #[test]
    fn engine_only_validation_accepts_a_duplicate_the_validator_refuses() {
        let yaml = format!("{QUEUE_A}---\n{}", QUEUE_A.replace("quota: 2", "quota: 3"));
        let m = model(&yaml);
        let e = Input::from_model(&m, &Options::default()).expect_err("a duplicate");
        assert!(e.is_invalid_input());
        let options = Options::default()
            .with_build(BuildOptions::default().with_validation(Validation::EngineOnly));
        let input = Input::from_model(&m, &options).expect("tolerated");
        let h = &input.cluster().hierarchy;
        let a = h.find("a").expect("queue a");
        // one Queue "a" in the model: the first one read (quota 2)
        assert_eq!(
            h.queue(a).resources[crate::Resource::Gpu.index()].deserved,
            Some(2_000_000_000)
        );
    }

    #[test]
    fn a_live_cluster_starts_from_a_checked_input() {
        let pod = "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns, labels: {kai.scheduler/queue: a}}\nspec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: \"1\"}}}]}\nstatus: {phase: Pending}\n";
        let m = model(&format!("{QUEUE_A}{pod}"));
        let input = Input::from_model(&m, &Options::default()).expect("valid");
        let live = crate::live::LiveCluster::new(input);
        // every job parked until submitted
        assert!(live.cluster().jobs.is_empty());
    }

    #[test]
    fn run_and_fairshare_read_the_same_input() {
        // quota 2 on a 4-GPU total; one pending pod asking for 1 GPU
        let yaml = "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: a}\nspec: {resources: {gpu: {quota: 2, overQuotaWeight: 1, limit: -1}}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns, labels: {kai.scheduler/queue: a}}\nspec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: \"1\"}}}]}\nstatus: {phase: Pending}\n";
        let total = crate::snapshot::parse_total("gpu=4").expect("total");
        let options = Options::default().with_build(BuildOptions::default().with_total(total));
        let input = Input::from_model(&model(yaml), &options).expect("valid");
        let report = run(&input).expect("runs");
        assert_eq!(report.allocated.len(), 1);
        assert_eq!(report.allocated[0].pod_group, "ns/p");
        let shares = fairshare(&input).expect("divides");
        // deserved 2, but a queue's share never exceeds what it requests (1 GPU)
        assert_eq!(shares.queues["a"].gpu.fair_share.to_string(), "1");
        assert_eq!(shares.queues["a"].gpu.deserved_text(), "2");
    }
}
