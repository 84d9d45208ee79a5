//! NVIDIA Run:ai / KAI Scheduler semantics: deserved quota, over-quota weight, rank (queue
//! priority), limit, fair-share division, and the scheduling session (allocate,
//! consolidation, reclaim, preempt, stale-gang eviction), decided exactly as KAI does.
//!
//! ```
//! use gpuquota_rank::{BuildOptions, Input, Options, fairshare};
//!
//! // Two projects on a 10-GPU cluster: deserved 2 and 1, weights 1 and 3.
//! let yaml = r#"
//! apiVersion: scheduling.run.ai/v2
//! kind: Queue
//! metadata: {name: a}
//! spec: {resources: {gpu: {quota: 2, overQuotaWeight: 1, limit: -1}}}
//! ---
//! apiVersion: scheduling.run.ai/v2
//! kind: Queue
//! metadata: {name: b}
//! spec: {resources: {gpu: {quota: 1, overQuotaWeight: 3, limit: -1}}}
//! ---
//! apiVersion: v1
//! kind: Pod
//! metadata: {name: a-0, namespace: ns, labels: {kai.scheduler/queue: a}}
//! spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: "10"}}}]}
//! status: {phase: Pending}
//! ---
//! apiVersion: v1
//! kind: Pod
//! metadata: {name: b-0, namespace: ns, labels: {kai.scheduler/queue: b}}
//! spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: "10"}}}]}
//! status: {phase: Pending}
//! "#;
//! let model = gpuquota_model::import_str("example.yaml", yaml)?.model;
//! let total = gpuquota_rank::snapshot::parse_total("gpu=10")?;
//! let options = Options::default().with_build(BuildOptions::default().with_total(total));
//! let input = Input::from_model(&model, &options)?;
//! let json = serde_json::to_value(fairshare(&input)?)?;
//! // Deserved 2 + 1, then the 7 left split 1:3 in whole units (1.75 → 1, 5.25 → 5), and the
//! // leftover unit to the larger remainder (a: .75).
//! assert_eq!(json["queues"]["a"]["gpu"]["fairShare"], "4");
//! assert_eq!(json["queues"]["b"]["gpu"]["fairShare"], "6");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The way in
//!
//! [`Input::from_model`] checks a [`gpuquota_model::Model`] with the [`Options`] once
//! (every problem at once, as one [`gpuquota_model::Error`]); [`run`] runs one scheduling
//! session over it and returns the [`Report`], and [`fairshare`] the fair-share division.
//! `run` is fallible at run time only by overflow of the session's exact sums (see its
//! docs). There is no other way in: the options carry what changes the input between
//! reading and running (the total, the session time, a node pool's view is a model of its
//! own, measured [`Options::usage`], [`Options::weight_follows_quota`], the engine's own
//! checks alone with [`BuildOptions::validation`]), and a simulator that keeps a cluster
//! across sessions starts it from a checked input ([`live::LiveCluster::new`]). The
//! [`Cluster`] snapshot is read through [`Input::cluster`]; [`Hierarchy`] and [`division`]
//! (the division alone), [`usage`], [`runai`] and the report types stay public for their
//! types.
//!
//! # Properties
//!
//! Each one is checked by the tests (`tests/all/props.rs`, `tests/all/division.rs`,
//! `tests/all/scenarios.rs`):
//!
//! 1. **Exact.** Amounts are integers of nano-units (GPU devices, CPU millicores, memory
//!    bytes); shares are exact rationals, floors are exact, and the result of
//!    [`Mode::Kai`] equals a slow rational-arithmetic transcription of upstream's division.
//!    Overflow is reported ([`DivisionError::Overflow`]), never wrapped.
//! 2. **Bounded.** Within every sibling set the fair shares add up to at most the divided
//!    amount, unless phase 1 (deserved capped by demand) already oversubscribes it — then each
//!    queue keeps exactly its phase-1 amount, as upstream does.
//! 3. **Capped in corrected mode.** With [`Mode::Corrected`] no queue's fair share exceeds
//!    its request or its limit. [`Mode::Kai`] keeps upstream's leftover overshoot (its phase 3).
//! 4. **Strict tiers.** While a higher-priority queue with weight is still short of its
//!    request, no lower-priority sibling gets anything beyond its deserved amount.
//! 5. **Deterministic.** The same input in any order gives the same result; ties break by
//!    creation time, then UID, then name. Upstream iterates Go maps here; exact arithmetic
//!    makes its result order-independent, and we pin the tie order.
//! 6. **Session rules** (one test per rule): gangs are all or nothing; allocation is
//!    work-conserving up to the limits; limits and the non-preemptible deserved check hold at
//!    every ancestor; reclaim only takes from other queues, never non-preemptible jobs, never
//!    from unlimited-deserved queues, never for a queue that would exceed its fair share;
//!    preemption stays in the queue and needs strictly lower priority; consolidation only
//!    moves jobs; stale gangs respect their grace period; min-runtime protects victims; a job
//!    placed by reclaim, preempt or consolidation is pipelined, as KAI's solver allocates it.
//! 7. **Bounded input.** The queue tree is at most
//!    [`gpuquota_model::limits::MAX_TREE_DEPTH`] levels deep; every input problem is a
//!    [`gpuquota_model::Diagnostic`] with engine `kai` and a stable code
//!    ([`snapshot::codes`]); sums that leave `i128` are errors
//!    ([`session::SessionError::Overflow`], [`DivisionError::Overflow`]), never wrapped.
//!
//! Reports are typed ([`report::FairshareReport`], [`report::ScheduleReport`]) and render
//! their own tables; time-based fairshare reads sliding, tumbling and cron usage windows
//! ([`usage`], [`cron`]). Simulators keep one cluster across sessions with [`live`].
//!
//! # Input checks: one validator
//!
//! [`Input::from_model`] first runs the workspace's one validator
//! ([`gpuquota_model::validate::check_kinds`] on
//! [`gpuquota_model::validate::KAI_KINDS`]) and refuses the input on any error, with the
//! validator's code, field path and wording (invalid names, duplicate objects, queue cycles,
//! negative quotas, ...), so `gpuquota validate` fails exactly when this engine refuses and
//! prints the same line. The engine's own checks (a pod on a node that does not exist,
//! amounts the session cannot hold, the tree depth) follow.
//! [`Validation::EngineOnly`](gpuquota_model::validate::Validation::EngineOnly)
//! ([`BuildOptions::validation`]) skips the validator, for objects as upstream's unit tests
//! create them.
//!
//! # Deviations from upstream, on purpose
//!
//! * Exact arithmetic instead of float64: results equal upstream's up to float rounding
//!   (`32.55`, not `32.54999999999996`).
//! * Phase-3 remainders are compared as fixed-point fractions of 10⁻¹⁸ of a unit.
//! * Victim search probes prefixes of one deterministic victim order (exponential then binary
//!   search) instead of KAI's solver portfolio; victim queues are ordered once per reclaimer
//!   (lower priority first, then the more over-served). The prefix found is then pruned:
//!   a victim the job does not need keeps running, as in KAI, where the solver puts every
//!   victim of a scenario back after placing the preemptor (preempt test "no need to
//!   preempt both"). Reclaim is consolidating, as KAI's default
//!   `allow-consolidating-reclaim` (KAI's job solver applies it to preempt too, and so do
//!   we, keeping the limit check on the killed victims): a victim that fits elsewhere after
//!   the reclaimer is placed
//!   is moved (evicted and reported pipelined at its new node) and only killed victims are
//!   validated; when every victim is moved the validator approves, as upstream does (PR
//!   #1565's bypass), unless [`Mode::Corrected`], which applies that PR's fix (the reclaimer
//!   must stay within deserved). The loop-avoidance bug of KAI test B-39 is not reproduced.
//! * Without nodes, a `--total` runs the session at quota level on one pool of that total;
//!   with neither nodes nor a total the cluster is empty (KAI's allocate test "No nodes").
//! * See [`snapshot`] for the reading rules where upstream's CRDs leave fields unset.
//! * Not modelled: PodGroup `subGroups`/`minSubGroup` (one gang per PodGroup), the
//!   `gpu-memory` annotation, pod and node affinity, topology constraints and DRA.
//!
//! # Cargo features
//!
//! - `serde` (default): `Serialize`/`Deserialize` on the reports and inputs, the reports
//!   serialise to the JSON the CLI prints (`serde_json::to_value(&report)`), and the model's
//!   `serde`. Without it a pod's `metadata.deletionTimestamp` (a field the model keeps
//!   verbatim) is not read, so no task is Releasing.
//! - `yaml` (default, implies `serde`): [`usage::UsageInput::parse`] and the model's manifest
//!   reader.
//! - `schema`: JSON Schemas of the reports; `fuzzing` (implies `yaml`): the fuzz checks.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(clippy::unwrap_used, clippy::expect_used)]

pub mod cron;
pub mod division;
pub mod entry;
pub mod fixed;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod ids;
pub mod live;
pub mod report;
pub mod runai;
pub mod session;
pub mod snapshot;
pub mod usage;

/// The lower layer behind [`Input::from_model`] and [`run`], for this crate's scenario tests
/// (they build clusters as upstream's tests create their objects and edit them between
/// sessions). Feature `testkit`; not part of the public API.
#[cfg(feature = "testkit")]
#[doc(hidden)]
pub mod testkit {
    use crate::session::{SessionError, SessionOptions, SessionResult};
    use crate::snapshot::{BuildOptions, Cluster};
    use gpuquota_model::Model;
    use gpuquota_model::diag::Diagnostics;

    /// The snapshot after the validator and the engine's checks.
    ///
    /// # Errors
    /// Every problem.
    pub fn cluster(model: &Model, options: &BuildOptions) -> Result<Cluster, Diagnostics> {
        Cluster::from_model(model, options)
    }

    /// The snapshot after the engine's own checks only.
    ///
    /// # Errors
    /// Every problem the engine cannot run.
    pub fn cluster_unvalidated(
        model: &Model,
        options: &BuildOptions,
    ) -> Result<Cluster, Diagnostics> {
        Cluster::from_model_unvalidated(model, options)
    }

    /// One session over `cluster`.
    ///
    /// # Errors
    /// As [`crate::run`].
    pub fn run_session(
        cluster: &Cluster,
        options: &SessionOptions,
    ) -> Result<SessionResult, SessionError> {
        crate::session::run_session(cluster, options)
    }

    /// The fair-share division of `cluster` (as [`crate::fairshare`]).
    ///
    /// # Errors
    /// A division that fails.
    pub fn fairshare_report(
        cluster: &Cluster,
        options: &crate::DivisionOptions,
    ) -> Result<crate::report::FairshareReport, crate::DivisionError> {
        crate::report::fairshare_report(cluster, options)
    }
}

pub use division::{
    Division, DivisionError, DivisionOptions, Hierarchy, Mode, QueueInput, Resource, ResourceParams,
};
pub use entry::{Input, Options, Report, fairshare, run};
pub use session::{SessionOptions, SessionResult};
pub use snapshot::{BuildOptions, Cluster};
