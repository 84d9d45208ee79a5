//! Kueue's admission engine: hierarchical cohort quotas, flavor assignment, the scheduling
//! cycle and classical preemption, decided exactly as upstream Kueue decides (feature gates at
//! their defaults unless a Configuration's `featureGates` sets one the engine models; the
//! upstream files are listed in `gpuquota::design`) and explained as data.
//!
//! ```
//! use gpuquota_cohort::{Input, Options, Report, run};
//! use gpuquota_model::import_str;
//!
//! let yaml = r#"
//! apiVersion: kueue.x-k8s.io/v1beta2
//! kind: ResourceFlavor
//! metadata: {name: default}
//! ---
//! apiVersion: kueue.x-k8s.io/v1beta2
//! kind: ClusterQueue
//! metadata: {name: cq}
//! spec:
//!   namespaceSelector: {}
//!   resourceGroups:
//!   - coveredResources: [cpu]
//!     flavors: [{name: default, resources: [{name: cpu, nominalQuota: 6}]}]
//! ---
//! apiVersion: kueue.x-k8s.io/v1beta2
//! kind: LocalQueue
//! metadata: {name: lq, namespace: ns}
//! spec: {clusterQueue: cq}
//! ---
//! apiVersion: kueue.x-k8s.io/v1beta2
//! kind: Workload
//! metadata: {name: small, namespace: ns}
//! spec:
//!   queueName: lq
//!   podSets:
//!   - name: main
//!     count: 3
//!     template: {spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
//! ---
//! apiVersion: kueue.x-k8s.io/v1beta2
//! kind: Workload
//! metadata: {name: big, namespace: ns}
//! spec:
//!   queueName: lq
//!   podSets:
//!   - name: main
//!     count: 4
//!     template: {spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
//! "#;
//! let model = import_str("example.yaml", yaml).expect("valid YAML").model;
//! let input = Input::from_model(&model, &Options::default())?;
//! let report: Report = run(&input);
//! assert_eq!(report.admitted.len(), 1);
//! assert_eq!(report.admitted[0].workload, "ns/big");
//! assert_eq!(report.pending[0].reason, "WaitingForQuota");
//! assert_eq!(
//!     report.pending[0].message,
//!     "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 1 more needed"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The way in
//!
//! [`Input::from_model`] checks a [`gpuquota_model::Model`] with the [`Options`] once
//! (every problem at once, as one [`gpuquota_model::Error`]), and [`run`] runs the cycles
//! over it, infallibly, and returns the [`Report`]; [`quotas`] reads the quota picture of
//! the same input. There is no other way in: a caller that steps the cycles itself
//! (withholds and adds arrivals, as the simulator does) takes a [`Scheduler`] from the
//! checked input ([`Input::scheduler`]); the [`World`] is read through [`Input::world`].
//! [`Options::validation`] chooses the engine's own checks alone (objects as upstream's
//! scheduler tests create them), [`Options::ignore_fair_sharing`] leaves the
//! `Configuration`'s fair-sharing settings unread (the quotas need no policy). The engine's
//! modules ([`tree`], [`fair`], [`assign`], ...) stay public for their types.
//!
//! # Properties
//!
//! 1. **Quota arithmetic is Kueue's** (kubernetes-sigs/kueue:
//!    `pkg/cache/scheduler/resource_node.go`): subtree quota, guaranteed (local) quota, usage that
//!    first fills a node's guaranteed part and only then flows to its parent, `available` /
//!    `potentialAvailable` with `borrowingLimit` and `lendingLimit` at every level, and the
//!    borrowing level. Amounts are integers in Kueue's units (CPU in milli, everything else in base
//!    units) with Kueue's saturating "unlimited" sentinel.
//! 2. **Limits hold after every cycle**: no ClusterQueue's usage exceeds nominal +
//!    borrowingLimit, no cohort exceeds its subtree quota, every lendingLimit holds — unless
//!    the input was already over-admitted (admitted workloads keep running; a warning says so).
//! 3. **Determinism and document-order independence**: the same objects in any order give the
//!    same output, bit for bit. Every ordering has an explicit final tie-break (UID, then key).
//! 4. **Flavor assignment is Kueue's** (`pkg/scheduler/flavorassigner`): flavors in order, taints
//!    and node labels, the fungibility policies, uncovered resources, partial admission by
//!    `minCount`.
//! 5. **The scheduling cycle is Kueue's** (`pkg/scheduler/scheduler.go`): one head per
//!    ClusterQueue, entries ordered by borrowing level, priority and queue time, admissions that
//!    change the cycle's snapshot, overlapping preemption targets (the assignment computed again,
//!    v0.20), capacity reserved by heads that would preempt but have no targets (unless
//!    `reclaimWithinCohort: Any`), StrictFIFO vs BestEffortFIFO requeueing.
//! 6. **Classical preemption is Kueue's** (`pkg/scheduler/preemption`), across hierarchical
//!    cohorts, with upstream's reasons. Victims are evicted when the cycle ends; the preemptor is
//!    admitted in a later cycle.
//! 7. **Explanations are data** ([`Pending`], [`FlavorReason`]) rendering to upstream's
//!    messages and to a plain sentence.
//! 8. **A namespace ResourceQuota is an extra hard cap** (requests and pod count).
//!
//! # Performance design
//!
//! Dense integer ids for nodes, flavors, resources and flavor-resources; quotas in flat
//! vectors; usage updated incrementally in O(depth). A cycle copies only the usage counters
//! (nodes × flavor-resources integers), never the workloads.
//!
//! A run costs what changes: under classical ordering [`Scheduler::run`] leaves a cohort
//! tree out of the cycle once no ClusterQueue in it has a head (it never changes again),
//! and replays a tree once its whole state is proven to repeat with some period (a
//! preemption loop, which otherwise runs to the `4 × workloads + 64` cycle bound), then
//! brings each replayed tree to its exact final state. Records, cycle count and final state
//! are those of running every cycle ([`Scheduler::run_with`] with the replay off runs every
//! cycle; the tests compare both).
//!
//! # Fair sharing
//!
//! Entry ordering and preemption target search go through the [`Policy`] trait.
//! [`Classical`] implements Kueue's classical iterator and classical preemption;
//! [`fair::FairSharing`] implements Kueue's fair sharing (the tournament of
//! `pkg/scheduler/fair_sharing_iterator.go`, fair-sharing preemption with reason
//! [`PreemptReason::InCohortFairSharing`], the dominant resource share of
//! `pkg/cache/scheduler/fair_sharing.go`) and admission fair sharing (a ClusterQueue's head by
//! LocalQueue usage) on top of the `gpuquota-fairshare` crate, run with
//! [`Input`] and [`run`] (or [`Input::scheduler`]) (fair sharing on through the `Configuration` or
//! [`Options::fair_sharing`]). Dependency edge: `gpuquota-cohort` → `gpuquota-fairshare` (the
//! fair-sharing crate never depends on this engine; it reads the engine's own quota forest and
//! snapshot through its `QuotaView` trait, which [`fair::ForestView`] implements).
//!
//! 9. **Fair sharing is Kueue's** with its gates at their defaults: heads are popped by the
//!    DRS tournament (non-borrowing subtree first, lower share, higher priority, earlier
//!    queue time) re-evaluated after each processed entry; preemption takes own-queue
//!    victims as `InClusterQueue`, reclaims as `InCohortReclamation` while the preemptor stays
//!    within nominal, otherwise applies `LessThanOrEqualToFinalShare` then
//!    `LessThanInitialShare` (or the configured list) with reason `InCohortFairSharing`.
//!
//! 10. **The Configuration's `resources` stanza is Kueue's** ([`config`]):
//!     `excludeResourcePrefixes` drops requests, `transformations` (`Retain`/`Replace`,
//!     `multiplyBy`, outputs per unit) rewrite every PodSet's per-pod requests before they are
//!     multiplied by the pod count, as upstream's `totalRequestsFromPodSets` does
//!     (kubernetes-sigs/kueue: pkg/workload/workload.go; types in
//!     kubernetes-sigs/kueue: apis/config/v1beta2/configuration_types.go). Invalid entries are
//!     field errors of the Configuration; `quotaCheckStrategy: IgnoreUndeclared` and every
//!     Configuration field that changes admission but is not simulated (`waitForPodsReady`,
//!     the feature gates that change decisions but are not modelled, `multiKueue`, ...) are
//!     warnings naming the field.
//!     `featureGates` are honoured where they change decisions and the engine models the
//!     feature: see [`config::gates`] for every upstream gate, in three groups (modelled,
//!     accepted silently, warned about), and what each modelled gate's other value does.
//!     `deviceClassMappings` (Dynamic Resource Allocation) add the devices of a PodSet's
//!     claims from templates to the mapped quota resource in its per-pod requests, after the
//!     transformations (kubernetes-sigs/kueue: pkg/dra/claims.go); what Kueue refuses (a claim
//!     by name, `allocationMode: All`, `firstAvailable`, an unmapped device class) stays
//!     pending with reason `Misconfigured` and Kueue's message
//!     (pkg/controller/core/workload_controller.go). A mapping's `sources` (partitionable
//!     devices' counters, consumable capacity) are warned about and not modelled.
//!     Rules and messages: `gpuquota_model::workloads::dra`.
//! 11. **Reclaimable pods need no quota**: a workload's `status.reclaimablePods` lowers its
//!     PodSet counts, pending or admitted (upstream `podSetsCountsAfterReclaim`, the
//!     ReclaimablePods gate on by default): 5 pods of which 2 are reclaimable ask for 3 pods'
//!     quota.
//! 12. **No silent loop**: when the same preemptor preempts the same victim twice in one run
//!     (the victim was readmitted ahead of it), the report carries a `preemption-loop` warning
//!     naming both ([`report::preemption_loops`]). The loop itself is upstream's: at its
//!     default feature gates Kueue's classical iterator orders entries by borrowing level
//!     before priority (kubernetes-sigs/kueue: pkg/scheduler/scheduler.go,
//!     `makeClassicalIterator`) and its fair-sharing tournament by share, so a victim that
//!     borrows less, or ties on share, is readmitted first; upstream breaks such loops only
//!     with the alpha gate `PrioritizePreemptorWorkloads` (off by default; kueue PR #13797),
//!     which a Configuration's `featureGates` turns on here too. A run without `--cycles` then
//!     ends at the cycle cap. A caller that holds evictions ([`Scheduler::hold_evictions`]:
//!     victims keep their quota until released, as the simulator's evictions that take time
//!     do) gets the same ordering under the same gate.
//! 13. **Bounded trees**: a cohort tree deeper than
//!     [`gpuquota_model::limits::MAX_TREE_DEPTH`] (1,000) levels is refused with a
//!     `tree-too-deep` error naming the first cohort below the limit (upstream Kueue sets no
//!     limit; real platforms use 2 to 5 levels). Cycle and depth checks are one linear pass
//!     ([`gpuquota_fairshare::tree::chain_depths`]).
//! 14. **Bad input is an error, never a panic**: a resource group without
//!     `coveredResources` (the key misspelt) is the field error upstream's CRD gives
//!     (`MinItems=1`).
//!
//! # Input checks: one validator, and cohort cycles
//!
//! [`Input::from_model`] first runs the workspace's one validator
//! ([`gpuquota_model::validate::diagnostics_of`] on [`KINDS`]) and refuses the input on any
//! error it finds, with the validator's code, field path and wording; so `gpuquota validate`
//! fails exactly when this engine refuses, and both print the same line. That includes what
//! Kueue's API server refuses although its scheduler would run it (invalid names, duplicate
//! objects, a `borrowingLimit` without a cohort, a `lendingLimit` above the nominal quota).
//! [`Validation::EngineOnly`](gpuquota_model::validate::Validation::EngineOnly)
//! ([`Options::validation`]) skips the validator, for objects as upstream's scheduler unit
//! tests create them (no API server in between); it tolerates those with warnings, as Kueue's
//! cache does.
//!
//! **Cohort cycles are an input error** (code `invalid`, field `spec.parentName`, message
//! `cohort cycle: a -> b -> a`) in `validate` and in every command, a deliberate deviation:
//! Kueue's API server accepts a cycle (the Cohort webhook checks one object,
//! `kubernetes-sigs/kueue: pkg/webhooks/cohort_webhook.go`), and its cache then leaves every
//! cohort whose parent chain loops out of the scheduling snapshot and marks their
//! ClusterQueues inactive, reason `HasCycle` (`kubernetes-sigs/kueue:
//! pkg/cache/scheduler/snapshot.go`, `pkg/cache/hierarchy/cycle.go`), so the whole tree admits
//! nothing. For a tool that plans and simulates, a tree that silently admits nothing is a
//! wrong answer, and a cycle is always a mistake, so gpuquota refuses it. The unvalidated
//! build keeps upstream's behaviour: the ClusterQueues of such a tree are inactive (reason
//! `CohortCycle`) and a warning says so.
//!
//! # Contract notes (`gpuquota kueue schedule`)
//!
//! - The JSON has a `warnings` array (severity, code, kind, name, message, engine) only when
//!   the run has a decision warning (a `preemption-loop`); every run without one prints
//!   exactly the JSON it printed before the field existed. The same warnings go to stderr and
//!   end the table; under `--strict` they fail the command (exit 1, nothing on stdout).
//! - A ClusterQueue naming a ResourceFlavor that is not in the files is inactive, as upstream
//!   marks it (`FlavorNotFound`); its workloads wait (`Suspended`, "ClusterQueue q is
//!   inactive"). That is a warning, not an input error, so one file per object works.
//!
//! - `admitted` lists the workloads admitted during the run that are still admitted at the
//!   end (a workload admitted and later preempted is not listed; one admitted twice is listed
//!   with its last admission).
//! - `pending[].clusterQueue` is the queue the workload waits for; `""` when its LocalQueue
//!   does not exist, the name the LocalQueue points at when that ClusterQueue is missing.
//! - `pending[].reason` is upstream's `QuotaReserved=False` reason with
//!   `UnadmittedWorkloadsObservability` on (`NoMatchingFlavor`, `ExceedsMaxQuota`,
//!   `WaitingForQuota`, `WaitingForPreemptedWorkloads`, `Misconfigured`, `Suspended`,
//!   `Deactivated`, and `PendingEvaluation` with the preemption message for a workload
//!   evicted and not reconsidered yet), plus `Forbidden` (ResourceQuota) and `Pending` (never
//!   evaluated: upstream sets no condition then).
//! - A run without `--cycles` stops at the first cycle that admits nothing, preempts nothing
//!   and leaves every queue as it was, or when no queue has a head (that empty cycle is not
//!   counted), or after `4 × workloads + 64` cycles.
//! - `kueue quotas`: a cohort's `usage` is the whole subtree's (the sum over every
//!   ClusterQueue below it, as upstream's `cohort_subtree_resource_reservations` reports it);
//!   the cache's internal cohort usage, which leaves out what children use inside their
//!   guaranteed (`nominal − lendingLimit`) quota, differs from it only under lending limits.
//! - A ClusterQueue or LocalQueue with `stopPolicy: HoldAndDrain` starts the run with its
//!   admitted workloads evicted (quota released, pending with the queue's `Suspended`
//!   reason); `Hold` keeps them running. A deactivated admitted workload is evicted likewise
//!   (pending as `Deactivated`).
//! - Limits Kueue's webhooks reject but its cache tolerates (a `borrowingLimit` or
//!   `lendingLimit` without a cohort or parent, a ClusterQueue `lendingLimit` above nominal)
//!   are warnings, handled as the cache handles them; upstream's own scheduler tests use them.
//!   So are `borrowWithinCohort` with `reclaimWithinCohort: Never` and a fungibility
//!   `preference` without both policies at `TryNextFlavor`: the scheduler applies them as
//!   given.
//! - [`Scheduler::withhold`] and [`Scheduler::arrive`] model arrivals between runs (the seed
//!   platform's 02:00 job).
//!
//! # Deliberate deviations
//!
//! - Topology-aware scheduling, admission checks, `PodsReady`, elastic workload slices,
//!   `ConcurrentAdmission` and DRA's counter- and capacity-backed quota are not modelled
//!   (admission checks are treated as ready). Each use of them in the input is a warning
//!   naming the field or annotation: `podSets[].topologyRequest`, the pod-template
//!   annotations `kueue.x-k8s.io/podset-required-topology`, `podset-preferred-topology` and
//!   `podset-unconstrained-topology`, `waitForPodsReady`,
//!   `resources.deviceClassMappings[].sources`.
//!   Feature gates the engine does not model stay at their defaults (each one set in
//!   `featureGates` is a warning naming it; [`config::gates`]). With
//!   `AdmissionGatedBy` (on by default), a Workload annotated `kueue.x-k8s.io/admission-gated-by` stays
//!   pending with reason `AdmissionGated` ("Admission is gated by: " and the value,
//!   kubernetes-sigs/kueue pkg/controller/core/workload_controller.go) unless the
//!   Configuration's `featureGates` sets `AdmissionGatedBy: false`; with no timeline of
//!   annotation changes, the gate holds for the whole run.
//! - Cohort trees are limited to 1,000 levels (upstream has no limit).
//! - A namespace ResourceQuota is checked at admission (requests, `pods` and the claim keys
//!   `<class>.deviceclass.resource.k8s.io/devices` and `count/resourceclaims.resource.k8s.io`,
//!   charged for the claims each pod makes from templates, plus the namespace's claims by
//!   name; `limits.*` caps are reported as not enforced). Upstream Kueue leaves it to the API server. A quota's
//!   usage is that of the workloads holding a reservation in its namespace and scope
//!   (`scopeSelector` PriorityClass), those admitted earlier in the same cycle included.
//! - `SchedulingEquivalenceHashing` compares the scheduling shape (priority and, per PodSet,
//!   name, count, minCount, per-pod requests, node selector, affinity, tolerations) rather
//!   than upstream's hash of the whole pod spec. Bulk-moved workloads keep the reason they
//!   had, except evicted ones waiting for evaluation, which show the failed workload's reason
//!   and "Bypassed scheduling evaluation…" as upstream's workload controller would. Scan
//!   progress across cycles follows
//!   `FlavorFungibilityPreserveScanProgress` (kept for one cycle, then until a workload leaves
//!   the ClusterQueue); the shape never changes here.
//! - Pending workloads the run never considered (StrictFIFO non-heads, `--cycles` cut-offs)
//!   get reason `Pending` with our own message.
//!
//! # Cargo features
//!
//! - `serde` (default): `Serialize` on the reports, the model's and fair sharing's `serde`,
//!   and the reading of the free-form model fields through serde_json: pod `affinity`
//!   (required node affinity), Kueue's `Configuration.resources` (excluded prefixes and
//!   transformations) and a LocalQueue's `status.fairSharing` consumed resources. Without it
//!   those fields are empty placeholders in the model, so none of the three applies.
//! - `yaml` (default, implies `serde`): the model's manifest reader.
//! - `schema`: JSON Schemas of the reports; `fuzzing` (implies `yaml`): the fuzz checks.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(clippy::unwrap_used, clippy::expect_used)]

pub mod afs_clock;
pub mod assign;
pub mod check;
pub mod config;
pub mod cycle;
pub mod entry;
pub mod error;
pub mod explain;
pub mod fair;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod ids;
pub mod preempt;
mod queues;
pub mod report;
mod table;
pub mod tree;
pub mod world;

/// The lower layer behind [`Input::from_model`] and [`Input::scheduler`], for this crate's
/// scenario tests (they build worlds as upstream's tests create their objects, and drive
/// schedulers with hand-made policies). Feature `testkit`; not part of the public API.
#[cfg(feature = "testkit")]
#[doc(hidden)]
pub mod testkit {
    use crate::error::Error;
    use crate::{Input, Options, Policy, Scheduler, World, fair::FairSharing};
    use gpuquota_model::Model;

    /// [`Input::from_model`]'s world (the validator, then the engine's checks).
    ///
    /// # Errors
    /// Every problem.
    pub fn build(model: &Model) -> Result<World, Error> {
        World::build(model)
    }

    /// The world with the engine's own checks only.
    ///
    /// # Errors
    /// Every problem the engine cannot run.
    pub fn build_unvalidated(model: &Model) -> Result<World, Error> {
        World::build_unvalidated(model)
    }

    /// An input over a world the test built, with a fair-sharing policy or none.
    pub fn input(world: World, fair: Option<FairSharing>, options: &Options) -> Input {
        Input::from_parts(world, fair, options)
    }

    /// A classical scheduler over `world`.
    pub fn scheduler(world: &World) -> Scheduler<'_> {
        Scheduler::new(std::sync::Arc::new(world.clone()))
    }

    /// A scheduler over `world` with `policy`.
    pub fn with_policy<P: Policy>(world: &World, policy: P) -> Scheduler<'_, P> {
        Scheduler::with_policy(std::sync::Arc::new(world.clone()), policy)
    }
}

pub use cycle::incremental::{self, CycleOutcome};
pub use cycle::{Classical, Entry, Policy, Scheduler};
pub use entry::{Input, Options, Stepper, quotas, run};
pub use error::{BuildProblem, Warning};
pub use explain::{FlavorReason, NoFitReason, Pending};
pub use preempt::PreemptReason;
/// What [`run`] returns: admissions, preemptions and a pending reason per workload.
pub use report::ScheduleReport as Report;
pub use report::{QuotasReport, ScheduleReport};
pub use world::World;

/// The kinds this engine reads, and so the kinds whose validation errors
/// ([`gpuquota_model::validate::diagnostics_of`]) make [`Input::from_model`] refuse the input
/// (under [`gpuquota_model::validate::Validation::Full`], the default).
pub const KINDS: &[gpuquota_model::Kind] = gpuquota_model::validate::KUEUE_KINDS;
