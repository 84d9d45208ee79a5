//! Upstream validation of a [`Model`], and cross-object lint.
//!
//! [`validate`] checks every object the way the API server (CRD schema and CEL rules) and the
//! upstream admission webhooks would, and then checks the objects against each other. Every
//! problem is collected; nothing stops early. Each [`ValidationError`] names the kind, the
//! object (`namespace/name` for namespaced kinds), the field path in Kubernetes' notation
//! (`spec.resourceGroups[0].flavors[1].resources[0].lendingLimit`, `spec.hard[nvidia.com/gpu]`)
//! and a message in Kubernetes' field-error style: `Invalid value`, `Required value`,
//! `Unsupported value`, `Duplicate value`, `Forbidden`, `Too many`, `Too long`, `Not found`.
//!
//! What is checked:
//! - **names**: `metadata.name` of every object is a DNS-1123 subdomain (a Namespace's name and
//!   every `metadata.namespace` a DNS-1123 label); label keys are qualified names and label
//!   values valid label values;
//! - **ClusterQueue**: rules 1–25 of Kueue's ClusterQueue validation (resource groups, flavor
//!   and resource lists, quota signs, limits only with a cohort, `lendingLimit ≤ nominalQuota`,
//!   enums, preemption and fungibility combinations, fair-sharing weight, cohort name,
//!   namespace selector, admission-check flavors);
//! - **Cohort**: name, parent name, resource groups, limits only with a parent (a Cohort's
//!   `lendingLimit` may exceed its own nominal quota), fair-sharing weight;
//! - **ResourceFlavor**: node labels, node taints (unique by key and effect), tolerations,
//!   topology name;
//! - **LocalQueue**: ClusterQueue reference, stop policy, fair-sharing weight;
//! - **Workload**: pod sets (1–18, unique DNS-label names, counts, one `minCount` at most),
//!   reserved `pods` key, non-negative requests, priority class reference, maximum execution
//!   time, `status.admission` against the spec, reclaimable pods, priority boost annotation;
//! - **WorkloadPriorityClass**, **PriorityClass**, Kueue's **Configuration**;
//! - **KAI Queue**: `resources` required, quota and limit `-1` or non-negative, weight
//!   non-negative, durations; **PodGroup**: queue (when set), `minMember`, preemptibility,
//!   priority class, durations;
//! - **ResourceQuota**: hard entries are valid quota resource names, extended resources only
//!   as `requests.<name>`, values non-negative (and whole for countable resources), scopes;
//! - **Pod** and **Node**: resource quantities non-negative, requests within limits,
//!   `gpu-fraction` in (0, 1];
//! - gpuquota's **Budget**: its rule ([`crate::budget`]), and its references: `spec.queue`
//!   a ClusterQueue or KAI Queue of the input, each of `spec.namespaces` a Namespace or the
//!   namespace of an object of the input (a budget covering nothing is never charged);
//! - **cross-object lint**: duplicate objects of one kind, cohort cycles, KAI queue cycles and
//!   missing parents, references to undefined ResourceFlavors, ClusterQueues, LocalQueues,
//!   (Workload)PriorityClasses and KAI queues.
//!
//! [`diagnostics`] gives the same problems as [`Diagnostic`]s with the same text, judging
//! references to objects that are not in the input (`Not found`) as warnings unless
//! [`Options::complete`], and adds warnings for input the API server accepts but the engines
//! ignore: a ResourceQuota's `limits.<extended resource>` (quota enforcement only counts
//! `requests.` for extended resources, so `kueue schedule` warns too and it is not an error).
//! A `podSetAssignments[].name` naming a podSet the Workload does not have is a reference
//! within the object and an error even without `complete` (Kueue's webhook rejects it:
//! kubernetes-sigs/kueue pkg/webhooks/workload_webhook.go). Warnings too for what upstream
//! accepts: a KAI Queue whose `limit` is below its `quota` ([`LIMIT_BELOW_QUOTA`]; KAI's
//! webhook, kai-scheduler/KAI-Scheduler pkg/admission/webhook/queuehooks/queue_validator.go,
//! never compares them, and the queue gets at most its limit), and a PodGroup without
//! `spec.queue` (KAI's CRD does not require it; the engine reads the PodGroup's or its pods'
//! queue label, else the job stays pending `QueueDoesNotExist`, as KAI's scheduler finds no
//! Queue `""`: pkg/scheduler/cache/cluster_info/cluster_info.go, `validatePodgroupQueue`).
//!
//! **One validator.** The engines' input builders run this validator first on the kinds
//! they read ([`diagnostics_of`], [`check_kinds`], [`KUEUE_KINDS`], [`KAI_KINDS`]) and refuse
//! the input on any error, reporting the same diagnostic (code, field path, wording); so
//! `gpuquota validate` fails exactly when an engine refuses. A cohort cycle is an error
//! everywhere although Kueue's API server accepts it (its cache makes the whole tree
//! inactive: `kubernetes-sigs/kueue: pkg/cache/scheduler/snapshot.go`); the reasons are in
//! `gpuquota-cohort`'s crate docs.
//!
//! Beyond upstream: a Node's allocatable and capacity, a Pod's requests and limits and a KAI
//! Queue's quota, limit and weight must be at most 1E (10^18 units, [`MAX_RESOURCE_UNITS`]),
//! the largest amount the engines hold exactly (the KAI engine computes in nano-units);
//! upstream has no bound. A Pod's extended resources (`nvidia.com/gpu`) must be whole, as the
//! API server requires.
//!
//! Deliberate choices: a ClusterQueue and a Cohort may share a name, and a cohort name without
//! a Cohort object is an implicit cohort (as in Kueue), so neither is reported. Rules that
//! compare an object with its previous version (immutability) cannot apply to a manifest and
//! are not checked; nor are the alpha `concurrentAdmissionPolicy` rules.
//!
//! ```
//! # #[cfg(feature = "yaml")] {
//! use gpuquota_model::{import_str, validate};
//!
//! let text = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: batch\nspec:\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: h200-nvl\n      resources:\n      - name: nvidia.com/gpu\n        nominalQuota: -1\n";
//! let model = import_str("cq.yaml", text)?.model;
//! let errors = validate::validate(&model).unwrap_err();
//! let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
//! assert_eq!(messages, [
//!     "ClusterQueue \"batch\": spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: Invalid value: \"-1\": must be greater than or equal to 0",
//!     "ClusterQueue \"batch\": spec.resourceGroups[0].flavors[0].name: Not found: \"h200-nvl\": no ResourceFlavor of this name",
//! ]);
//! # }
//! # Ok::<(), gpuquota_model::import::ImportErrors>(())
//! ```
//!
//! # Complexity
//! `O(n log n)` in the number of objects and fields: every object is checked once, and every
//! reference is one `BTreeMap` lookup; cycle detection walks each parent chain once per start.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::core::{Container, ResourceList, ResourceQuota as CoreResourceQuota};
use crate::diag::{Diagnostic, Diagnostics, Severity, codes};
use crate::kai::{self, Queue, QueueResource};
use crate::kueue::{
    BorrowWithinCohortPolicy, ClusterQueue, Cohort, FairSharing, FungibilityPolicy, LocalQueue,
    ResourceFlavor, ResourceGroup, StopPolicy, Workload,
};
use crate::meta::{LabelSelector, ObjectMeta, Taint, Toleration};
use crate::model::{Kind, Model};
use crate::quantity::Quantity;

mod kai_queues;
mod kube;
mod kueue;
mod lint;
mod names;
mod workload;

use kai_queues::*;
use kube::*;
use kueue::*;
use lint::*;
use names::*;
use workload::*;

pub use kube::MAX_RESOURCE_UNITS;
pub use names::{
    dns1123_label_problems, dns1123_subdomain_problems, label_value_problems,
    qualified_name_problems,
};

/// The type of a field error (defined beside [`Diagnostic`], re-exported here).
pub use crate::diag::ErrorType;

/// One problem: which object, which field, what is wrong.
///
/// Displays as `Kind "name": field: Type[: value][: detail]`, for example
/// `ClusterQueue "batch": spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit:
/// Invalid value: "4": must be nil when cohort is empty`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ValidationError {
    /// The object's kind.
    pub kind: Kind,
    /// The object's name (`namespace/name` for namespaced kinds; empty for a Configuration).
    pub name: String,
    /// The field path (`metadata.name`, `spec.hard[requests.nvidia.com/gpu]`, …).
    pub field: String,
    /// The error type.
    pub error_type: ErrorType,
    /// The offending value as printed (strings quoted), where the error type shows one.
    pub value: Option<String>,
    /// What is wrong, or the supported values.
    pub detail: String,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {:?}: {}: {}",
            self.kind, self.name, self.field, self.error_type
        )?;
        if let Some(v) = &self.value {
            write!(f, ": {v}")?;
        }
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

/// Every problem of a model, in a deterministic order (by kind, then object, then field
/// order within the object, then the cross-object lint).
#[derive(Debug, Clone, PartialEq, Eq, Default, thiserror::Error)]
pub struct ValidationErrors(pub Vec<ValidationError>);

impl ValidationErrors {
    /// The problems.
    pub fn iter(&self) -> std::slice::Iter<'_, ValidationError> {
        self.0.iter()
    }

    /// Number of problems.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there is no problem.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} validation error(s)", self.0.len())?;
        for e in &self.0 {
            write!(f, "\n{e}")?;
        }
        Ok(())
    }
}

impl<'a> IntoIterator for &'a ValidationErrors {
    type Item = &'a ValidationError;
    type IntoIter = std::slice::Iter<'a, ValidationError>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// Validates every object of `model` and the references between them.
///
/// # Errors
/// [`ValidationErrors`] with every problem found (never only the first).
///
/// # Complexity
/// `O(n log n)` in the size of the model.
pub fn validate(model: &Model) -> Result<(), ValidationErrors> {
    let problems = problems(model);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(ValidationErrors(problems))
    }
}

/// How [`diagnostics`] judges references to objects that are not in the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Options {
    /// The input is the whole picture (`validate --complete`): a reference to an object that is
    /// not in it (a ResourceFlavor, a LocalQueue, a KAI Queue, a priority class) is an error.
    /// Without it such a reference is a warning, since a platform often keeps one file per
    /// object and validates them one at a time.
    pub complete: bool,
}

impl Options {
    /// Options with `complete` set as given.
    pub fn complete(complete: bool) -> Options {
        Options { complete }
    }
}

/// Validation as [`Diagnostics`]: every [`problems`] entry (same text: `Kind "name": field:
/// Type: value: detail`), with `Not found` references as warnings unless
/// [`Options::complete`], followed by the warnings about accepted input that the engines
/// ignore (a ResourceQuota's `limits.<extended resource>`).
///
/// # Complexity
/// As [`problems`].
pub fn diagnostics(model: &Model, options: &Options) -> Diagnostics {
    diagnostics_of(model, options, ALL_KINDS)
}

/// Every kind [`problems`] checks.
pub const ALL_KINDS: &[Kind] = &[
    Kind::ResourceFlavor,
    Kind::ClusterQueue,
    Kind::Cohort,
    Kind::LocalQueue,
    Kind::Workload,
    Kind::WorkloadPriorityClass,
    Kind::PriorityClass,
    Kind::Namespace,
    Kind::ResourceQuota,
    Kind::Pod,
    Kind::Node,
    Kind::Queue,
    Kind::PodGroup,
    Kind::Configuration,
    Kind::Budget,
];

/// The kinds the Kueue engines read (`gpuquota-cohort`'s `Input::from_model`,
/// `gpuquota-fairshare`'s `kueue_shares`): their validation errors make those engines refuse
/// the input.
pub const KUEUE_KINDS: &[Kind] = &[
    Kind::ResourceFlavor,
    Kind::ClusterQueue,
    Kind::Cohort,
    Kind::LocalQueue,
    Kind::Workload,
    Kind::WorkloadPriorityClass,
    Kind::PriorityClass,
    Kind::Namespace,
    Kind::ResourceQuota,
    Kind::Configuration,
];

/// The kinds the KAI engine reads (`gpuquota-rank`'s `Input::from_model`).
pub const KAI_KINDS: &[Kind] = &[
    Kind::Queue,
    Kind::PodGroup,
    Kind::Pod,
    Kind::Node,
    Kind::PriorityClass,
];

/// The kinds that give the Kueue commands something to do (the others only refine them).
pub const KUEUE_USABLE: &[Kind] = &[
    Kind::ResourceFlavor,
    Kind::ClusterQueue,
    Kind::Cohort,
    Kind::LocalQueue,
    Kind::Workload,
    Kind::WorkloadPriorityClass,
];

/// The kinds that give the KAI commands something to do.
pub const KAI_USABLE: &[Kind] = &[Kind::Queue, Kind::PodGroup, Kind::Pod, Kind::Node];

/// An error (code `no-objects`) when `model` holds no object of `usable` and no job to
/// convert: a command given only objects it does not read has nothing to do, and saying so
/// beats an empty result (`command` names it in the message).
///
/// # Errors
/// The `no-objects` diagnostic.
///
/// # Complexity
/// O(1).
pub fn require_objects(model: &Model, usable: &[Kind], command: &str) -> Result<(), Diagnostic> {
    let count = |kind: &Kind| match kind {
        Kind::ResourceFlavor => model.resource_flavors.len(),
        Kind::ClusterQueue => model.cluster_queues.len(),
        Kind::Cohort => model.cohorts.len(),
        Kind::LocalQueue => model.local_queues.len(),
        Kind::Workload => model.workloads.len(),
        Kind::WorkloadPriorityClass => model.workload_priority_classes.len(),
        Kind::PriorityClass => model.priority_classes.len(),
        Kind::Namespace => model.namespaces.len(),
        Kind::ResourceQuota => model.resource_quotas.len(),
        Kind::Pod => model.pods.len(),
        Kind::Node => model.nodes.len(),
        Kind::Queue => model.queues.len(),
        Kind::PodGroup => model.pod_groups.len(),
        Kind::Configuration => usize::from(model.configuration.is_some()),
        Kind::Budget => model.budgets.len(),
    };
    if model.workload_objects.is_empty() && usable.iter().all(|k| count(k) == 0) {
        let names: Vec<&str> = usable.iter().map(|k| k.as_str()).collect();
        Err(Diagnostic::error(
            codes::NO_OBJECTS,
            format!(
                "no object `{command}` reads in the input ({} or a job); nothing to do",
                names.join(", ")
            ),
        ))
    } else {
        Ok(())
    }
}

/// The errors of [`diagnostics_of`] (default [`Options`]) on `kinds`, or `Ok` when there is
/// none: the first step of every engine's input builder.
///
/// # Errors
/// The error diagnostics, in the validator's order.
///
/// # Complexity
/// As [`problems`].
pub fn check_kinds(model: &Model, kinds: &[Kind]) -> Result<(), Diagnostics> {
    let errors: Diagnostics = diagnostics_of(model, &Options::default(), kinds)
        .into_iter()
        .filter(|d| d.severity == Severity::Error)
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// [`diagnostics`] restricted to the objects of `kinds`: the check every engine's input builder
/// runs first on the kinds it reads (Kueue's `Input::from_model` on the Kueue kinds, KAI's
/// on the KAI and core kinds), so that a mistake has one code, one wording and one field path
/// whichever command reports it, and `validate` fails exactly when an engine refuses.
///
/// # Complexity
/// As [`problems`].
pub fn diagnostics_of(model: &Model, options: &Options, kinds: &[Kind]) -> Diagnostics {
    let mut out = Diagnostics::default();
    for p in problems(model)
        .into_iter()
        .filter(|p| kinds.contains(&p.kind))
    {
        let (severity, code) = match p.error_type {
            ErrorType::NotFound if !options.complete && p.detail != workload::NO_SUCH_POD_SET => {
                (Severity::Warning, codes::NOT_FOUND)
            }
            ErrorType::NotFound => (Severity::Error, codes::NOT_FOUND),
            // an object's own name given twice (`lint::duplicates`); a duplicate inside
            // an object is on another field
            ErrorType::Duplicate if p.field == "metadata.name" => {
                (Severity::Error, codes::DUPLICATE_OBJECT)
            }
            _ => (Severity::Error, codes::INVALID),
        };
        let mut message = p.error_type.as_str().to_owned();
        if let Some(v) = &p.value {
            message.push_str(": ");
            message.push_str(v);
        }
        if !p.detail.is_empty() {
            message.push_str(": ");
            message.push_str(&p.detail);
        }
        out.push(
            Diagnostic::new(severity, code, message)
                .object(p.kind.as_str(), p.name)
                .field(p.field),
        );
    }
    let quotas = model
        .resource_quotas
        .iter()
        .filter(|_| kinds.contains(&Kind::ResourceQuota));
    for (key, rq) in quotas {
        for name in rq.spec.hard.keys() {
            if let Some(rest) = name.strip_prefix("limits.")
                && is_extended(rest)
            {
                out.push(
                    Diagnostic::warning(
                        codes::IGNORED_BY_ENGINES,
                        format!(
                            "accepted by the API server, but quota enforcement ignores limits of \
                             extended resources; use requests.{rest} to cap them"
                        ),
                    )
                    .object("ResourceQuota", key.clone())
                    .field(format!("spec.hard[{name}]")),
                );
            }
            if let Some(rest) = name.strip_prefix("requests.")
                && rest.ends_with(".deviceclass.resource.k8s.io/devices")
            {
                // kubernetes/kubernetes: pkg/quota/v1/evaluator/core/resource_claims.go
                // charges a claim's devices under the key without the prefix
                out.push(
                    Diagnostic::warning(
                        codes::IGNORED_BY_ENGINES,
                        format!(
                            "accepted by the API server, but it caps nothing: ResourceClaims \
                             charge their devices under {rest}"
                        ),
                    )
                    .object("ResourceQuota", key.clone())
                    .field(format!("spec.hard[{name}]")),
                );
            }
        }
    }
    for d in crate::workloads::limitrange::diagnostics(model) {
        out.push(d);
    }
    if kinds.contains(&Kind::Queue) {
        for (key, q) in &model.queues {
            for (field, message) in kai_queues::limits_below_quota(q) {
                out.push(
                    Diagnostic::warning(LIMIT_BELOW_QUOTA, message)
                        .object("Queue", key.clone())
                        .field(field),
                );
            }
        }
    }
    if kinds.contains(&Kind::PodGroup) {
        let queueless = model
            .pod_groups
            .iter()
            .filter(|(_, pg)| pg.spec.queue.is_empty());
        for (key, _) in queueless {
            out.push(
                Diagnostic::warning(
                    codes::NOT_FOUND,
                    "not set (KAI's PodGroup CRD does not require it): the queue is the \
                     PodGroup's queue label, else its pods'; with neither, KAI's scheduler \
                     finds no Queue \"\" and the job stays pending (QueueDoesNotExist)",
                )
                .object("PodGroup", key.clone())
                .field("spec.queue"),
            );
        }
    }
    out
}

/// A KAI Queue whose `limit` is below its `quota` for a resource (a warning: KAI accepts it).
pub const LIMIT_BELOW_QUOTA: crate::diag::Code = crate::diag::Code::new("limit-below-quota");

/// Every problem of `model`, empty when it is valid. Never panics.
///
/// # Complexity
/// `O(n log n)` in the size of the model.
pub fn problems(model: &Model) -> Vec<ValidationError> {
    let mut out = Vec::new();
    for (key, rf) in &model.resource_flavors {
        resource_flavor(&mut Ctx::new(&mut out, Kind::ResourceFlavor, key), rf);
    }
    for (key, cq) in &model.cluster_queues {
        cluster_queue(&mut Ctx::new(&mut out, Kind::ClusterQueue, key), cq, model);
    }
    let cohort_cycles = parent_cycles(model.cohorts.keys().map(String::as_str), |n| {
        model
            .cohorts
            .get(n)
            .and_then(|c| c.spec.parent_name.as_deref())
            .filter(|p| !p.is_empty())
    });
    for (key, co) in &model.cohorts {
        cohort(
            &mut Ctx::new(&mut out, Kind::Cohort, key),
            co,
            model,
            &cohort_cycles,
        );
    }
    for (key, lq) in &model.local_queues {
        local_queue(&mut Ctx::new(&mut out, Kind::LocalQueue, key), lq, model);
    }
    for (key, wl) in &model.workloads {
        workload(&mut Ctx::new(&mut out, Kind::Workload, key), wl, model);
    }
    for (key, wpc) in &model.workload_priority_classes {
        workload_priority_class(
            &mut Ctx::new(&mut out, Kind::WorkloadPriorityClass, key),
            wpc,
        );
    }
    priority_classes(&mut out, model);
    for (key, ns) in &model.namespaces {
        namespace(&mut Ctx::new(&mut out, Kind::Namespace, key), ns);
    }
    for (key, rq) in &model.resource_quotas {
        resource_quota(&mut Ctx::new(&mut out, Kind::ResourceQuota, key), rq);
    }
    for (key, p) in &model.pods {
        pod(&mut Ctx::new(&mut out, Kind::Pod, key), p, model);
    }
    for (key, n) in &model.nodes {
        node(&mut Ctx::new(&mut out, Kind::Node, key), n);
    }
    let queue_cycles = parent_cycles(model.queues.keys().map(String::as_str), |n| {
        model
            .queues
            .get(n)
            .and_then(|q| q.spec.parent_queue.as_deref())
            .filter(|p| !p.is_empty())
    });
    for (key, q) in &model.queues {
        kai_queue(
            &mut Ctx::new(&mut out, Kind::Queue, key),
            q,
            model,
            &queue_cycles,
        );
    }
    for (key, pg) in &model.pod_groups {
        pod_group(&mut Ctx::new(&mut out, Kind::PodGroup, key), pg, model);
    }
    if let Some(config) = &model.configuration {
        configuration(
            &mut Ctx::new(&mut out, Kind::Configuration, &config.metadata.name),
            config,
        );
    }
    if !model.budgets.is_empty() {
        let namespaces = namespaces_in_use(model);
        for (key, b) in &model.budgets {
            budget(
                &mut Ctx::new(&mut out, Kind::Budget, key),
                b,
                model,
                &namespaces,
            );
        }
    }
    duplicates(&mut out, model);
    out
}

/// A gpuquota Budget: metadata, the rule it states, and its references: `spec.queue` names
/// a ClusterQueue or a KAI Queue of the input, each of `spec.namespaces` a Namespace or the
/// namespace of an object of the input (`Not found` otherwise: a budget that covers nothing
/// is never charged).
fn budget(cx: &mut Ctx<'_>, b: &crate::budget::Budget, model: &Model, namespaces: &BTreeSet<&str>) {
    object_meta(cx, &b.metadata, false);
    if let Err(problems) = b.rule() {
        for p in problems {
            cx.push(p.field, p.error_type, p.value, p.detail);
        }
    }
    if let Some(q) = b.spec.queue.as_deref().filter(|q| !q.is_empty())
        && !model.cluster_queues.contains_key(q)
        && !model.queues.contains_key(q)
    {
        cx.not_found("spec.queue", q, "no ClusterQueue or KAI Queue of this name");
    }
    for (i, ns) in b.spec.namespaces.iter().flatten().enumerate() {
        if !ns.is_empty() && !namespaces.contains(ns.as_str()) {
            cx.not_found(
                format!("spec.namespaces[{i}]"),
                ns,
                "no Namespace of this name and no object in it",
            );
        }
    }
}

/// Every namespace the input knows: its Namespaces, and the namespace of every namespaced
/// object (keys `namespace/name`; a job object's `Kind/namespace/name`).
fn namespaces_in_use(model: &Model) -> BTreeSet<&str> {
    fn ns(key: &str) -> Option<&str> {
        key.split_once('/').map(|(n, _)| n)
    }
    let mut out: BTreeSet<&str> = model.namespaces.keys().map(String::as_str).collect();
    let keys = model
        .local_queues
        .keys()
        .chain(model.workloads.keys())
        .chain(model.resource_quotas.keys())
        .chain(model.pods.keys())
        .chain(model.pod_groups.keys())
        .chain(model.config_maps.keys());
    out.extend(keys.filter_map(|k| ns(k)));
    out.extend(
        model
            .workload_objects
            .keys()
            .filter_map(|k| k.split_once('/').and_then(|(_, rest)| ns(rest))),
    );
    out
}

struct Ctx<'a> {
    out: &'a mut Vec<ValidationError>,
    kind: Kind,
    name: String,
}

impl<'a> Ctx<'a> {
    fn new(out: &'a mut Vec<ValidationError>, kind: Kind, name: &str) -> Ctx<'a> {
        Ctx {
            out,
            kind,
            name: name.to_owned(),
        }
    }

    fn push(
        &mut self,
        field: impl Into<String>,
        error_type: ErrorType,
        value: Option<String>,
        detail: impl Into<String>,
    ) {
        self.out.push(ValidationError {
            kind: self.kind,
            name: self.name.clone(),
            field: field.into(),
            error_type,
            value,
            detail: detail.into(),
        });
    }

    fn invalid(&mut self, field: impl Into<String>, value: String, detail: impl Into<String>) {
        self.push(field, ErrorType::Invalid, Some(value), detail);
    }

    fn required(&mut self, field: impl Into<String>, detail: impl Into<String>) {
        self.push(field, ErrorType::Required, None, detail);
    }

    fn forbidden(&mut self, field: impl Into<String>, detail: impl Into<String>) {
        self.push(field, ErrorType::Forbidden, None, detail);
    }

    fn not_found(&mut self, field: impl Into<String>, value: &str, detail: impl Into<String>) {
        self.push(field, ErrorType::NotFound, Some(quote(value)), detail);
    }

    fn duplicate(&mut self, field: impl Into<String>, value: &str) {
        self.push(field, ErrorType::Duplicate, Some(quote(value)), "");
    }

    fn too_many(&mut self, field: impl Into<String>, actual: usize, max: usize) {
        self.push(
            field,
            ErrorType::TooMany,
            Some(actual.to_string()),
            format!("must have at most {max} items"),
        );
    }

    fn not_supported(&mut self, field: impl Into<String>, value: &str, allowed: &[&str]) {
        let list: Vec<String> = allowed.iter().map(|a| quote(a)).collect();
        self.push(
            field,
            ErrorType::NotSupported,
            Some(quote(value)),
            format!("supported values: {}", list.join(", ")),
        );
    }

    /// Reports `value` unless it is a known spelling (or, with `allow_empty`, empty).
    fn enum_value(
        &mut self,
        field: impl Into<String>,
        known: bool,
        value: &str,
        allowed: &[&str],
        allow_empty: bool,
    ) {
        if !(known || allow_empty && value.is_empty()) {
            self.not_supported(field, value, allowed);
        }
    }
}

fn quote(s: &str) -> String {
    format!("{s:?}")
}

fn quote_q(q: &Quantity) -> String {
    quote(&q.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(dns1123_subdomain_problems("h200-nvl").is_empty());
        assert!(dns1123_subdomain_problems("a.b-c.d").is_empty());
        assert_eq!(dns1123_subdomain_problems("@x86").len(), 1);
        assert_eq!(dns1123_subdomain_problems("Upper").len(), 1);
        assert_eq!(dns1123_subdomain_problems("a..b").len(), 1);
        assert_eq!(dns1123_subdomain_problems("").len(), 1);
        assert_eq!(dns1123_subdomain_problems(&"a".repeat(254)).len(), 1);
        assert!(dns1123_label_problems("data-science").is_empty());
        assert_eq!(dns1123_label_problems("a.b").len(), 1);
        assert_eq!(dns1123_label_problems(&"a".repeat(64)).len(), 1);
        assert!(qualified_name_problems("cpu").is_empty());
        assert!(qualified_name_problems("nvidia.com/mig-1g.24gb").is_empty());
        assert!(qualified_name_problems("example.com/GPU_x").is_empty());
        assert_eq!(qualified_name_problems("@cpu").len(), 1);
        assert_eq!(qualified_name_problems("a/b/c").len(), 1);
        assert_eq!(qualified_name_problems("/gpu").len(), 1);
        assert_eq!(qualified_name_problems("Example.com/gpu").len(), 1);
        assert!(label_value_problems("").is_empty());
        assert!(label_value_problems("NVIDIA-H200-NVL").is_empty());
        assert_eq!(label_value_problems("-x").len(), 1);
    }

    #[test]
    fn cycles_are_found_once_each() {
        let parents: BTreeMap<&str, &str> = [
            ("a", "b"),
            ("b", "c"),
            ("c", "a"),
            ("d", "a"),
            ("e", "e"),
            ("f", "g"),
        ]
        .into_iter()
        .collect();
        let cycles = parent_cycles(["a", "b", "c", "d", "e", "f"].into_iter(), |n| {
            parents.get(n).copied()
        });
        assert_eq!(cycles.len(), 4);
        assert_eq!(show_cycle(&cycles["b"]), "b -> c -> a -> b");
        assert_eq!(show_cycle(&cycles["e"]), "e -> e");
        assert!(!cycles.contains_key("d"));
        let long: Vec<String> = (0..20).map(|i| format!("n{i}")).collect();
        let cycles = parent_cycles(long.iter().map(String::as_str), |n| {
            let i: usize = n[1..].parse().ok()?;
            Some(long[(i + 1) % 20].as_str())
        });
        assert_eq!(
            show_cycle(&cycles["n0"]),
            "n0 -> n1 -> n2 -> n3 -> n4 -> n5 -> n6 -> n7 -> n8 -> n9 -> ..."
        );
    }

    #[test]
    fn extended_resources() {
        assert!(is_extended("nvidia.com/gpu"));
        assert!(!is_extended("kubernetes.io/foo"));
        assert!(!is_extended("storage.kubernetes.io/foo"));
        assert!(!is_extended("cpu"));
    }

    #[test]
    fn display_styles() {
        let e = ValidationError {
            kind: Kind::ClusterQueue,
            name: "batch".into(),
            field: "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota".into(),
            error_type: ErrorType::Required,
            value: None,
            detail: String::new(),
        };
        assert_eq!(
            e.to_string(),
            "ClusterQueue \"batch\": spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: Required value"
        );
        let e = ValidationError {
            error_type: ErrorType::NotSupported,
            field: "spec.queueingStrategy".into(),
            value: Some(quote("FIFO")),
            detail: "supported values: \"StrictFIFO\", \"BestEffortFIFO\"".into(),
            ..e
        };
        assert_eq!(
            e.to_string(),
            "ClusterQueue \"batch\": spec.queueingStrategy: Unsupported value: \"FIFO\": supported values: \"StrictFIFO\", \"BestEffortFIFO\""
        );
    }
}

/// How much checking an engine's `Input::from_model` runs before building its input.
///
/// # Examples
/// ```
/// use gpuquota_model::validate::Validation;
/// assert_eq!(Validation::default(), Validation::Full);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Validation {
    /// This validator on the engine's kinds first (what `gpuquota validate` refuses among
    /// them, as the API server's checks do), then the engine's own checks.
    #[default]
    Full,
    /// Only the engine's own checks: the objects as the scheduler takes them when no API
    /// server stands in between (as upstream's scheduler unit tests create them); what the
    /// engine tolerates is a warning, what it cannot run an error.
    EngineOnly,
}
