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

/// What [`Input::from_model`] reads ([`Options::build`]) and [`run`] applies
/// ([`Options::session`]); kept in the [`Input`].
///
/// Build it with [`Options::default`] and the `with_*` methods: fields may be added in
/// later versions.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Options {
    /// How the objects are read: the cluster total, the session time, the queue label key.
    pub build: BuildOptions,
    /// The session's settings: division mode and kValue, placement, consolidation and
    /// staleness (upstream's defaults).
    pub session: SessionOptions,
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
}

/// A checked KAI input: the [`Cluster`] snapshot and the session's settings.
#[derive(Debug, Clone)]
pub struct Input {
    cluster: Cluster,
    session: SessionOptions,
}

impl Input {
    /// Validates `model` and builds the cluster snapshot ([`Cluster::from_model`]: the
    /// workspace's validator on KAI's kinds, then the engine's own checks).
    ///
    /// # Errors
    /// [`Error::is_invalid_input`]: every bad object and field at once, each diagnostic
    /// naming kind, name and field; nothing is built.
    ///
    /// # Complexity
    /// O(Q + P log P + N) for queues, pods and nodes, plus the validation's O(n log n).
    pub fn from_model(model: &Model, options: &Options) -> Result<Input, Error> {
        let cluster = Cluster::from_model(model, &options.build)?;
        Ok(Input {
            cluster,
            session: options.session,
        })
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
/// That of [`crate::session::run_session`].
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
