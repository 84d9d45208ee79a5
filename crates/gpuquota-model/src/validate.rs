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
//! - **KAI Queue**: `resources` required, quota and limit `-1` or non-negative, limit not
//!   below quota, weight non-negative, durations; **PodGroup**: queue, `minMember`,
//!   preemptibility, priority class, durations;
//! - **ResourceQuota**: hard entries are valid quota resource names, extended resources only
//!   as `requests.<name>`, values non-negative (and whole for countable resources), scopes;
//! - **Pod** and **Node**: resource quantities non-negative, requests within limits,
//!   `gpu-fraction` in (0, 1];
//! - **cross-object lint**: duplicate objects of one kind, cohort cycles, KAI queue cycles and
//!   missing parents, references to undefined ResourceFlavors, ClusterQueues, LocalQueues,
//!   (Workload)PriorityClasses and KAI queues.
//!
//! [`diagnostics`] gives the same problems as [`Diagnostic`]s with the same text, judging
//! references to objects that are not in the input (`Not found`) as warnings unless
//! [`Options::complete`], and adds warnings for input the API server accepts but the engines
//! ignore: a ResourceQuota's `limits.<extended resource>` (quota enforcement only counts
//! `requests.` for extended resources, so `kueue schedule` warns too and it is not an error).
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
use crate::import::{Kind, Model};
use crate::kai::{self, Queue, QueueResource};
use crate::kueue::{
    BorrowWithinCohortPolicy, ClusterQueue, Cohort, FairSharing, FungibilityPolicy, LocalQueue,
    ResourceFlavor, ResourceGroup, StopPolicy, Workload,
};
use crate::meta::{LabelSelector, ObjectMeta, Taint, Toleration};
use crate::quantity::Quantity;

/// The type of a field error, as Kubernetes names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorType {
    /// `Invalid value`: the value is malformed or out of range.
    Invalid,
    /// `Required value`: the field must be set.
    Required,
    /// `Unsupported value`: the value is not one of an enumeration.
    NotSupported,
    /// `Duplicate value`: the value must be unique.
    Duplicate,
    /// `Forbidden`: the field may not be set (here, or in this combination).
    Forbidden,
    /// `Too many`: a list is longer than allowed.
    TooMany,
    /// `Too long`: a string is longer than allowed.
    TooLong,
    /// `Not found`: a reference names an object that does not exist.
    NotFound,
}

impl ErrorType {
    /// Kubernetes' phrase for the type.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorType::Invalid => "Invalid value",
            ErrorType::Required => "Required value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::TooMany => "Too many",
            ErrorType::TooLong => "Too long",
            ErrorType::NotFound => "Not found",
        }
    }
}

impl fmt::Display for ErrorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

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
];

/// The kinds the Kueue engines read (`gpuquota-cohort`'s `World::build`,
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

/// The kinds the KAI engine reads (`gpuquota-rank`'s `Cluster::from_model`).
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
/// runs first on the kinds it reads (`World::build` on the Kueue kinds, `Cluster::from_model`
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
            ErrorType::NotFound if !options.complete => (Severity::Warning, codes::NOT_FOUND),
            ErrorType::NotFound => (Severity::Error, codes::NOT_FOUND),
            ErrorType::Duplicate if p.detail.starts_with("more than one ") => {
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
        }
    }
    for d in crate::workloads::limitrange::diagnostics(model) {
        out.push(d);
    }
    out
}

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
        let mut cx = Ctx::new(&mut out, Kind::WorkloadPriorityClass, key);
        object_meta(&mut cx, &wpc.metadata, false);
        if let Some(d) = &wpc.description
            && d.chars().count() > 2048
        {
            cx.push(
                "description",
                ErrorType::TooLong,
                None,
                "may not be more than 2048 characters",
            );
        }
    }
    priority_classes(&mut out, model);
    for (key, ns) in &model.namespaces {
        let mut cx = Ctx::new(&mut out, Kind::Namespace, key);
        name_field(&mut cx, "metadata.name", &ns.metadata.name, NameRule::Label);
        labels(&mut cx, "metadata.labels", &ns.metadata.labels);
    }
    for (key, rq) in &model.resource_quotas {
        resource_quota(&mut Ctx::new(&mut out, Kind::ResourceQuota, key), rq);
    }
    for (key, pod) in &model.pods {
        let mut cx = Ctx::new(&mut out, Kind::Pod, key);
        object_meta(&mut cx, &pod.metadata, true);
        containers(&mut cx, "spec.containers", &pod.spec.containers, false);
        containers(
            &mut cx,
            "spec.initContainers",
            &pod.spec.init_containers,
            false,
        );
        pod_extended_integers(&mut cx, "spec.containers", &pod.spec.containers);
        pod_extended_integers(&mut cx, "spec.initContainers", &pod.spec.init_containers);
        if let Some(frac) = pod.metadata.annotations.get(kai::GPU_FRACTION_ANNOTATION) {
            let ok = Quantity::parse(frac)
                .is_ok_and(|q| !q.is_negative() && !q.is_zero() && q <= Quantity::from_integer(1));
            if !ok {
                cx.invalid(
                    format!("metadata.annotations[{}]", kai::GPU_FRACTION_ANNOTATION),
                    quote(frac),
                    "must be a number greater than 0 and at most 1",
                );
            }
        }
        if let Some(q) = pod.metadata.labels.get(kai::QUEUE_LABEL)
            && !model.queues.contains_key(q)
        {
            cx.not_found(
                format!("metadata.labels[{}]", kai::QUEUE_LABEL),
                q,
                "no KAI Queue of this name",
            );
        }
    }
    for (key, node) in &model.nodes {
        let mut cx = Ctx::new(&mut out, Kind::Node, key);
        object_meta(&mut cx, &node.metadata, false);
        non_negative_list(&mut cx, "status.allocatable", &node.status.allocatable);
        non_negative_list(&mut cx, "status.capacity", &node.status.capacity);
        at_most_max_list(&mut cx, "status.allocatable", &node.status.allocatable);
        at_most_max_list(&mut cx, "status.capacity", &node.status.capacity);
        for (i, t) in node.spec.taints.iter().enumerate() {
            taint(&mut cx, &format!("spec.taints[{i}]"), t);
        }
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
    for (key, b) in &model.budgets {
        let mut cx = Ctx::new(&mut out, Kind::Budget, key);
        object_meta(&mut cx, &b.metadata, false);
        if let Err(problems) = b.rule() {
            for p in problems {
                cx.push(p.field, p.error_type, p.value, p.detail);
            }
        }
    }
    for d in &model.duplicates {
        let mut cx = Ctx::new(&mut out, d.kind, &d.name);
        let shown = d.name.rsplit('/').next().unwrap_or(&d.name);
        let detail = format!(
            "more than one {} has this name; one of them is ignored",
            d.kind
        );
        cx.push(
            "metadata.name",
            ErrorType::Duplicate,
            Some(quote(shown)),
            detail,
        );
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The collector

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

// ---------------------------------------------------------------------------------------------
// Names

#[derive(Clone, Copy)]
enum NameRule {
    Subdomain,
    Label,
}

const SUBDOMAIN_MSG: &str = "must be a lowercase RFC 1123 subdomain: lower case alphanumeric characters, '-' or '.', starting and ending with an alphanumeric character (regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG: &str = "must be a lowercase RFC 1123 label: lower case alphanumeric characters or '-', starting and ending with an alphanumeric character (regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const QUALIFIED_PART_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

/// Problems of `s` as a DNS-1123 subdomain (at most 253 characters).
pub fn dns1123_subdomain_problems(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 253 {
        out.push("must be no more than 253 characters".to_owned());
    }
    if s.is_empty() || !s.split('.').all(is_dns_label_part) {
        out.push(SUBDOMAIN_MSG.to_owned());
    }
    out
}

fn is_dns_label_part(s: &str) -> bool {
    // Subdomain parts have no length limit of their own.
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// Problems of `s` as a DNS-1123 label (at most 63 characters).
pub fn dns1123_label_problems(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 63 {
        out.push("must be no more than 63 characters".to_owned());
    }
    if s.is_empty() || !is_dns_label_part(s) {
        out.push(LABEL_MSG.to_owned());
    }
    out
}

fn is_qualified_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

/// Problems of `s` as a qualified name (`[prefix/]name`): label keys and resource names.
pub fn qualified_name_problems(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let parts: Vec<&str> = s.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                out.push("prefix part must be non-empty".to_owned());
            } else {
                for p in dns1123_subdomain_problems(prefix) {
                    out.push(format!("prefix part {p}"));
                }
            }
            *name
        }
        _ => {
            out.push(format!(
                "a qualified name {QUALIFIED_PART_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            ));
            return out;
        }
    };
    if name.is_empty() {
        out.push("name part must be non-empty".to_owned());
    } else {
        if name.len() > 63 {
            out.push("name part must be no more than 63 characters".to_owned());
        }
        if !is_qualified_part(name) {
            out.push(format!("name part {QUALIFIED_PART_MSG}"));
        }
    }
    out
}

/// Problems of `s` as a label value (empty, or a qualified name part of at most 63 characters).
pub fn label_value_problems(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 63 {
        out.push("must be no more than 63 characters".to_owned());
    }
    if !s.is_empty() && !is_qualified_part(s) {
        out.push(format!(
            "a valid label must be an empty string or {QUALIFIED_PART_MSG}"
        ));
    }
    out
}

fn name_field(cx: &mut Ctx<'_>, field: &str, value: &str, rule: NameRule) {
    if value.is_empty() {
        cx.required(field, "name or generateName is required");
        return;
    }
    let problems = match rule {
        NameRule::Subdomain => dns1123_subdomain_problems(value),
        NameRule::Label => dns1123_label_problems(value),
    };
    for p in problems {
        cx.invalid(field, quote(value), p);
    }
}

/// A reference to another object by name: reported only when set and malformed.
fn reference_name(cx: &mut Ctx<'_>, field: &str, value: &str) {
    for p in dns1123_subdomain_problems(value) {
        cx.invalid(field, quote(value), p);
    }
}

fn qualified(cx: &mut Ctx<'_>, field: &str, value: &str) {
    for p in qualified_name_problems(value) {
        cx.invalid(field, quote(value), p);
    }
}

fn labels(cx: &mut Ctx<'_>, field: &str, labels: &BTreeMap<String, String>) {
    for (k, v) in labels {
        qualified(cx, &format!("{field}[{k}]"), k);
        for p in label_value_problems(v) {
            cx.invalid(format!("{field}[{k}]"), quote(v), p);
        }
    }
}

fn object_meta(cx: &mut Ctx<'_>, meta: &ObjectMeta, namespaced: bool) {
    name_field(cx, "metadata.name", &meta.name, NameRule::Subdomain);
    if namespaced && let Some(ns) = &meta.namespace {
        for p in dns1123_label_problems(ns) {
            cx.invalid("metadata.namespace", quote(ns), p);
        }
    }
    labels(cx, "metadata.labels", &meta.labels);
}

// ---------------------------------------------------------------------------------------------
// Kueue

const GE0: &str = "must be greater than or equal to 0";

fn non_negative(cx: &mut Ctx<'_>, field: &str, q: &Quantity) {
    if q.is_negative() {
        cx.invalid(field, quote_q(q), GE0);
    }
}

fn fair_sharing(cx: &mut Ctx<'_>, field: &str, fs: Option<&FairSharing>) {
    let Some(w) = fs.and_then(|f| f.weight.as_ref()) else {
        return;
    };
    let field = format!("{field}.weight");
    if w.is_negative() {
        cx.invalid(field, quote_q(w), GE0);
    } else if !w.is_zero() && Quantity::from_decimal(1, -9).is_some_and(|nano| *w <= nano) {
        cx.invalid(
            field,
            quote_q(w),
            "must be 0 or greater than 1n (0.000000001)",
        );
    }
}

/// Resource groups of a ClusterQueue (`is_cohort == false`) or a Cohort. `linked` tells whether
/// the object has a cohort (ClusterQueue) or a parent (Cohort), which limits require.
fn resource_groups(cx: &mut Ctx<'_>, groups: &[ResourceGroup], is_cohort: bool, linked: bool) {
    if groups.len() > 16 {
        cx.too_many("spec.resourceGroups", groups.len(), 16);
    }
    let mut seen_resources: BTreeSet<&str> = BTreeSet::new();
    let mut seen_flavors: BTreeSet<&str> = BTreeSet::new();
    let (mut total_flavors, mut total_resources) = (0usize, 0usize);
    let unlinked = if is_cohort {
        "must be nil when parent is empty"
    } else {
        "must be nil when cohort is empty"
    };
    for (i, g) in groups.iter().enumerate() {
        let gp = format!("spec.resourceGroups[{i}]");
        total_flavors += g.flavors.len();
        total_resources += g.covered_resources.len();
        if g.covered_resources.is_empty() {
            cx.required(
                format!("{gp}.coveredResources"),
                "must have at least 1 item",
            );
        } else if g.covered_resources.len() > 64 {
            cx.too_many(
                format!("{gp}.coveredResources"),
                g.covered_resources.len(),
                64,
            );
        }
        for (j, r) in g.covered_resources.iter().enumerate() {
            let field = format!("{gp}.coveredResources[{j}]");
            qualified(cx, &field, r.as_str());
            if !seen_resources.insert(r.as_str()) {
                cx.duplicate(field, r.as_str());
            }
        }
        if g.flavors.is_empty() {
            cx.required(format!("{gp}.flavors"), "must have at least 1 item");
        } else if g.flavors.len() > 64 {
            cx.too_many(format!("{gp}.flavors"), g.flavors.len(), 64);
        }
        if g.flavors.len().saturating_mul(g.covered_resources.len()) > 512 {
            cx.too_many(
                format!("{gp}.flavors"),
                g.flavors.len().saturating_mul(g.covered_resources.len()),
                512,
            );
        }
        let mut mismatch_reported = false;
        for (j, f) in g.flavors.iter().enumerate() {
            let fp = format!("{gp}.flavors[{j}]");
            if f.name.is_empty() {
                cx.required(format!("{fp}.name"), "");
            } else {
                reference_name(cx, &format!("{fp}.name"), &f.name);
            }
            if !seen_flavors.insert(f.name.as_str()) {
                cx.duplicate(format!("{fp}.name"), &f.name);
            }
            if f.resources.is_empty() {
                cx.required(format!("{fp}.resources"), "must have at least 1 item");
            } else if f.resources.len() > 64 {
                cx.too_many(format!("{fp}.resources"), f.resources.len(), 64);
            }
            if f.resources.len() != g.covered_resources.len() && !mismatch_reported {
                mismatch_reported = true;
                cx.invalid(
                    gp.clone(),
                    quote("object"),
                    "flavors must have the same number of resources as the coveredResources",
                );
            }
            let mut names: BTreeSet<&str> = BTreeSet::new();
            for (k, rq) in f.resources.iter().enumerate() {
                let rp = format!("{fp}.resources[{k}]");
                if !names.insert(rq.name.as_str()) {
                    cx.duplicate(format!("{rp}.name"), rq.name.as_str());
                }
                if let Some(covered) = g.covered_resources.get(k)
                    && covered != &rq.name
                {
                    cx.invalid(
                        format!("{rp}.name"),
                        quote(rq.name.as_str()),
                        "must match the name in coveredResources",
                    );
                }
                match &rq.nominal_quota {
                    None => cx.required(format!("{rp}.nominalQuota"), ""),
                    Some(q) => non_negative(cx, &format!("{rp}.nominalQuota"), q),
                }
                if let Some(bl) = &rq.borrowing_limit {
                    let field = format!("{rp}.borrowingLimit");
                    non_negative(cx, &field, bl);
                    if !linked {
                        cx.invalid(field, quote_q(bl), unlinked);
                    }
                }
                if let Some(ll) = &rq.lending_limit {
                    let field = format!("{rp}.lendingLimit");
                    non_negative(cx, &field, ll);
                    if !linked {
                        cx.invalid(field.clone(), quote_q(ll), unlinked);
                    }
                    if !is_cohort
                        && let Some(nominal) = &rq.nominal_quota
                        && ll > nominal
                    {
                        cx.invalid(
                            field,
                            quote_q(ll),
                            "must be less than or equal to the nominalQuota",
                        );
                    }
                }
            }
        }
    }
    if total_flavors > 256 {
        cx.too_many("spec.resourceGroups[*].flavors", total_flavors, 256);
    }
    if total_resources > 256 {
        cx.too_many(
            "spec.resourceGroups[*].coveredResources",
            total_resources,
            256,
        );
    }
}

fn label_selector(cx: &mut Ctx<'_>, field: &str, sel: &LabelSelector) {
    labels(cx, &format!("{field}.matchLabels"), &sel.match_labels);
    for (i, r) in sel.match_expressions.iter().enumerate() {
        let rp = format!("{field}.matchExpressions[{i}]");
        qualified(cx, &format!("{rp}.key"), &r.key);
        match r.operator.as_str() {
            "In" | "NotIn" => {
                if r.values.is_empty() {
                    cx.required(
                        format!("{rp}.values"),
                        "must be specified when `operator` is 'In' or 'NotIn'",
                    );
                }
            }
            "Exists" | "DoesNotExist" => {
                if !r.values.is_empty() {
                    cx.forbidden(
                        format!("{rp}.values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    );
                }
            }
            other => cx.not_supported(
                format!("{rp}.operator"),
                other,
                &["In", "NotIn", "Exists", "DoesNotExist"],
            ),
        }
        for (j, v) in r.values.iter().enumerate() {
            for p in label_value_problems(v) {
                cx.invalid(format!("{rp}.values[{j}]"), quote(v), p);
            }
        }
    }
}

fn cluster_queue(cx: &mut Ctx<'_>, cq: &ClusterQueue, model: &Model) {
    object_meta(cx, &cq.metadata, false);
    let spec = &cq.spec;
    let cohort = spec.cohort_name.as_deref().unwrap_or("");
    if !cohort.is_empty() {
        reference_name(cx, "spec.cohortName", cohort);
    }
    if let Some(s) = &spec.queueing_strategy {
        cx.enum_value(
            "spec.queueingStrategy",
            s.is_known(),
            s.as_str(),
            crate::kueue::QueueingStrategy::ALLOWED,
            true,
        );
    }
    resource_groups(cx, &spec.resource_groups, false, !cohort.is_empty());
    if let Some(p) = &spec.preemption {
        if let Some(v) = &p.within_cluster_queue {
            cx.enum_value(
                "spec.preemption.withinClusterQueue",
                v.is_known(),
                v.as_str(),
                crate::kueue::WithinClusterQueue::ALLOWED,
                false,
            );
        }
        if let Some(v) = &p.reclaim_within_cohort {
            cx.enum_value(
                "spec.preemption.reclaimWithinCohort",
                v.is_known(),
                v.as_str(),
                crate::kueue::ReclaimWithinCohort::ALLOWED,
                false,
            );
        }
        if let Some(b) = &p.borrow_within_cohort
            && let Some(v) = &b.policy
        {
            cx.enum_value(
                "spec.preemption.borrowWithinCohort.policy",
                v.is_known(),
                v.as_str(),
                BorrowWithinCohortPolicy::ALLOWED,
                false,
            );
        }
        let (policy, _) = spec.borrow_within_cohort();
        if spec.reclaim_within_cohort() == crate::kueue::ReclaimWithinCohort::Never
            && policy != BorrowWithinCohortPolicy::Never
        {
            cx.invalid(
                "spec.preemption",
                quote("object"),
                "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never",
            );
        }
    }
    if let Some(ff) = &spec.flavor_fungibility {
        for (field, v) in [
            ("whenCanBorrow", &ff.when_can_borrow),
            ("whenCanPreempt", &ff.when_can_preempt),
        ] {
            if let Some(v) = v {
                cx.enum_value(
                    format!("spec.flavorFungibility.{field}"),
                    v.is_known(),
                    v.as_str(),
                    FungibilityPolicy::ALLOWED,
                    false,
                );
            }
        }
        if let Some(pref) = &ff.preference {
            cx.enum_value(
                "spec.flavorFungibility.preference",
                pref.is_known(),
                pref.as_str(),
                crate::kueue::FlavorFungibilityPreference::ALLOWED,
                false,
            );
            let (borrow, preempt, _) = spec.flavor_fungibility();
            if borrow != FungibilityPolicy::TryNextFlavor
                || preempt != FungibilityPolicy::TryNextFlavor
            {
                cx.invalid(
                    "spec.flavorFungibility.preference",
                    quote(pref.as_str()),
                    "may only be set when whenCanBorrow and whenCanPreempt are both TryNextFlavor",
                );
            }
        }
    }
    if let Some(s) = &spec.stop_policy {
        cx.enum_value(
            "spec.stopPolicy",
            s.is_known(),
            s.as_str(),
            StopPolicy::ALLOWED,
            false,
        );
    }
    fair_sharing(cx, "spec.fairSharing", spec.fair_sharing.as_ref());
    if let Some(sel) = &spec.namespace_selector {
        label_selector(cx, "spec.namespaceSelector", sel);
    }
    if let Some(mode) = spec
        .admission_scope
        .as_ref()
        .and_then(|s| s.admission_mode.as_ref())
    {
        cx.enum_value(
            "spec.admissionScope.admissionMode",
            mode.is_known(),
            mode.as_str(),
            crate::kueue::AdmissionMode::ALLOWED,
            false,
        );
    }
    if let Some(strategy) = &spec.admission_checks_strategy {
        if !spec.admission_checks.is_empty() {
            cx.invalid(
                "spec",
                quote("object"),
                "either admissionChecks or admissionChecksStrategy can be set, but not both",
            );
        }
        let rules = &strategy.admission_checks;
        let field = "spec.admissionChecksStrategy.admissionChecks";
        if rules.is_empty() {
            cx.required(field, "must have at least 1 item");
        } else if rules.len() > 64 {
            cx.too_many(field, rules.len(), 64);
        }
        let flavors: BTreeSet<&str> = spec.flavor_names().collect();
        let allowed: Vec<&str> = flavors.iter().copied().collect();
        for (i, rule) in rules.iter().enumerate() {
            if rule.name.is_empty() {
                cx.required(format!("{field}[{i}].name"), "");
            }
            if rule.on_flavors.len() > 64 {
                cx.too_many(format!("{field}[{i}].onFlavors"), rule.on_flavors.len(), 64);
            }
            for (j, f) in rule.on_flavors.iter().enumerate() {
                if !flavors.contains(f.as_str()) {
                    cx.not_supported(format!("{field}[{i}].onFlavors[{j}]"), f, &allowed);
                }
            }
        }
    }
    // Cross-object: every flavor must exist.
    flavor_references(cx, &spec.resource_groups, model);
}

fn flavor_references(cx: &mut Ctx<'_>, groups: &[ResourceGroup], model: &Model) {
    for (i, g) in groups.iter().enumerate() {
        for (j, f) in g.flavors.iter().enumerate() {
            if !f.name.is_empty() && !model.resource_flavors.contains_key(&f.name) {
                cx.not_found(
                    format!("spec.resourceGroups[{i}].flavors[{j}].name"),
                    &f.name,
                    "no ResourceFlavor of this name",
                );
            }
        }
    }
}

fn cohort(cx: &mut Ctx<'_>, co: &Cohort, model: &Model, cycles: &BTreeMap<&str, Vec<&str>>) {
    object_meta(cx, &co.metadata, false);
    let parent = co.spec.parent_name.as_deref().unwrap_or("");
    if !parent.is_empty() {
        reference_name(cx, "spec.parentName", parent);
    }
    resource_groups(cx, &co.spec.resource_groups, true, !parent.is_empty());
    fair_sharing(cx, "spec.fairSharing", co.spec.fair_sharing.as_ref());
    flavor_references(cx, &co.spec.resource_groups, model);
    // Cross-object: a cycle through parentName disables the whole tree in Kueue.
    if let Some(cycle) = cycles.get(co.metadata.name.as_str()) {
        cx.invalid(
            "spec.parentName",
            quote(parent),
            format!("cohort cycle: {}", show_cycle(cycle)),
        );
    }
}

/// The most names a cycle message shows.
const CYCLE_SHOWN: usize = 10;

/// Every name on a cycle of `parent` links, mapped to the cycle as walked from it.
///
/// # Complexity
/// `O(n log n)` to find the cycles, plus `O(CYCLE_SHOWN)` per name on a cycle.
fn parent_cycles<'a>(
    names: impl Iterator<Item = &'a str>,
    parent: impl Fn(&'a str) -> Option<&'a str>,
) -> BTreeMap<&'a str, Vec<&'a str>> {
    let mut done: BTreeSet<&str> = BTreeSet::new();
    let mut out = BTreeMap::new();
    for start in names {
        let mut stack: Vec<&str> = Vec::new();
        let mut on_stack: BTreeMap<&str, usize> = BTreeMap::new();
        let mut current = Some(start);
        while let Some(n) = current {
            if let Some(&at) = on_stack.get(n) {
                let cycle = &stack[at..];
                for (k, m) in cycle.iter().enumerate() {
                    let walk: Vec<&str> = cycle[k..]
                        .iter()
                        .chain(&cycle[..k])
                        .take(CYCLE_SHOWN)
                        .copied()
                        .collect();
                    out.insert(*m, walk);
                }
                break;
            }
            if done.contains(n) {
                break;
            }
            on_stack.insert(n, stack.len());
            stack.push(n);
            current = parent(n);
        }
        done.extend(stack);
    }
    out
}

fn show_cycle(walk: &[&str]) -> String {
    match walk.first() {
        Some(first) if walk.len() < CYCLE_SHOWN => format!("{} -> {first}", walk.join(" -> ")),
        _ => format!("{} -> ...", walk.join(" -> ")),
    }
}

fn taint(cx: &mut Ctx<'_>, field: &str, t: &Taint) {
    if t.key.is_empty() {
        cx.required(format!("{field}.key"), "");
    } else {
        qualified(cx, &format!("{field}.key"), &t.key);
    }
    if let Some(v) = &t.value {
        for p in label_value_problems(v) {
            cx.invalid(format!("{field}.value"), quote(v), p);
        }
    }
    const EFFECTS: &[&str] = &["NoSchedule", "PreferNoSchedule", "NoExecute"];
    if t.effect.is_empty() {
        cx.required(format!("{field}.effect"), "");
    } else if !EFFECTS.contains(&t.effect.as_str()) {
        cx.not_supported(format!("{field}.effect"), &t.effect, EFFECTS);
    }
}

fn toleration(cx: &mut Ctx<'_>, field: &str, t: &Toleration) {
    let key = t.key.as_deref().unwrap_or("");
    let operator = t.operator.as_deref().unwrap_or("");
    if !key.is_empty() {
        qualified(cx, &format!("{field}.key"), key);
    } else if operator != "Exists" {
        cx.invalid(
            format!("{field}.operator"),
            quote(operator),
            "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
        );
    }
    match operator {
        "" | "Equal" => {
            if let Some(v) = &t.value {
                for p in label_value_problems(v) {
                    cx.invalid(format!("{field}.value"), quote(v), p);
                }
            }
        }
        "Exists" => {
            if t.value.as_deref().is_some_and(|v| !v.is_empty()) {
                cx.invalid(
                    format!("{field}.value"),
                    quote(t.value.as_deref().unwrap_or("")),
                    "value must be empty when `operator` is 'Exists'",
                );
            }
        }
        other => cx.not_supported(format!("{field}.operator"), other, &["Equal", "Exists"]),
    }
    let effect = t.effect.as_deref().unwrap_or("");
    const EFFECTS: &[&str] = &["NoSchedule", "PreferNoSchedule", "NoExecute"];
    if !effect.is_empty() && !EFFECTS.contains(&effect) {
        cx.not_supported(format!("{field}.effect"), effect, EFFECTS);
    }
    if t.toleration_seconds.is_some() && effect != "NoExecute" {
        cx.invalid(
            format!("{field}.effect"),
            quote(effect),
            "effect must be 'NoExecute' when `tolerationSeconds` is set",
        );
    }
}

fn resource_flavor(cx: &mut Ctx<'_>, rf: &ResourceFlavor) {
    object_meta(cx, &rf.metadata, false);
    let spec = &rf.spec;
    if spec.node_labels.len() > 8 {
        cx.too_many("spec.nodeLabels", spec.node_labels.len(), 8);
    }
    labels(cx, "spec.nodeLabels", &spec.node_labels);
    if spec.node_taints.len() > 8 {
        cx.too_many("spec.nodeTaints", spec.node_taints.len(), 8);
    }
    let mut seen: BTreeSet<(&str, &str)> = BTreeSet::new();
    for (i, t) in spec.node_taints.iter().enumerate() {
        let field = format!("spec.nodeTaints[{i}]");
        taint(cx, &field, t);
        if !seen.insert((t.key.as_str(), t.effect.as_str())) {
            cx.duplicate(field, &format!("{}:{}", t.key, t.effect));
        }
    }
    if spec.tolerations.len() > 8 {
        cx.too_many("spec.tolerations", spec.tolerations.len(), 8);
    }
    for (i, t) in spec.tolerations.iter().enumerate() {
        toleration(cx, &format!("spec.tolerations[{i}]"), t);
    }
    if spec.topology_name.is_some() && spec.node_labels.is_empty() {
        cx.required(
            "spec.nodeLabels",
            "at least one nodeLabel is required when topology is set",
        );
    }
}

fn local_queue(cx: &mut Ctx<'_>, lq: &LocalQueue, model: &Model) {
    object_meta(cx, &lq.metadata, true);
    let cq = &lq.spec.cluster_queue;
    if cq.is_empty() {
        cx.required("spec.clusterQueue", "");
    } else {
        reference_name(cx, "spec.clusterQueue", cq);
        if !model.cluster_queues.contains_key(cq) {
            cx.not_found("spec.clusterQueue", cq, "no ClusterQueue of this name");
        }
    }
    if let Some(s) = &lq.spec.stop_policy {
        cx.enum_value(
            "spec.stopPolicy",
            s.is_known(),
            s.as_str(),
            StopPolicy::ALLOWED,
            false,
        );
    }
    fair_sharing(cx, "spec.fairSharing", lq.spec.fair_sharing.as_ref());
}

fn non_negative_list(cx: &mut Ctx<'_>, field: &str, list: &ResourceList) {
    for (name, q) in list {
        qualified(cx, &format!("{field}[{name}]"), name.as_str());
        non_negative(cx, &format!("{field}[{name}]"), q);
    }
}

/// The largest quantity gpuquota's engines hold for a node, pod or KAI queue: 10^18 units
/// (cores, bytes, devices). The KAI engine computes in nano-units of 128-bit integers and sums
/// over every node; Kubernetes itself has no such bound, but no real resource comes near it.
pub const MAX_RESOURCE_UNITS: i64 = 1_000_000_000_000_000_000;

fn at_most_max(cx: &mut Ctx<'_>, field: &str, q: &Quantity) {
    if *q > Quantity::from_integer(MAX_RESOURCE_UNITS) {
        cx.invalid(
            field.to_owned(),
            quote_q(q),
            "must be at most 1E (10^18 units), the largest amount gpuquota's engines hold exactly",
        );
    }
}

fn at_most_max_list(cx: &mut Ctx<'_>, field: &str, list: &ResourceList) {
    for (name, q) in list {
        at_most_max(cx, &format!("{field}[{name}]"), q);
    }
}

/// Kubernetes' rule for a pod's extended resources (`nvidia.com/gpu`): whole numbers only
/// (kubernetes/kubernetes: pkg/apis/core/validation/validation.go, `ValidateResourceRequirements`).
fn pod_extended_integers(cx: &mut Ctx<'_>, field: &str, list: &[Container]) {
    for (i, c) in list.iter().enumerate() {
        for (part, rl) in [
            ("requests", &c.resources.requests),
            ("limits", &c.resources.limits),
        ] {
            let f = format!("{field}[{i}].resources.{part}");
            at_most_max_list(cx, &f, rl);
            for (name, q) in rl {
                let name = name.as_str();
                if is_extended(name)
                    && !name.starts_with("hugepages-")
                    && !q.is_negative()
                    && q.milli_value().is_none_or(|m| m % 1000 != 0)
                {
                    cx.invalid(format!("{f}[{name}]"), quote_q(q), "must be an integer");
                }
            }
        }
    }
}

/// Requests and limits of containers; `kueue` adds Kueue's reserved `pods` key rule.
fn containers(cx: &mut Ctx<'_>, field: &str, list: &[Container], kueue: bool) {
    for (i, c) in list.iter().enumerate() {
        let cp = format!("{field}[{i}].resources");
        for (part, rl) in [
            ("requests", &c.resources.requests),
            ("limits", &c.resources.limits),
        ] {
            non_negative_list(cx, &format!("{cp}.{part}"), rl);
            if kueue && rl.contains_key("pods") {
                cx.forbidden(
                    format!("{cp}.{part}[pods]"),
                    "the key is reserved for internal kueue use",
                );
            }
        }
        for (name, req) in &c.resources.requests {
            if let Some(limit) = c.resources.limits.get(name)
                && req > limit
                && !req.is_negative()
            {
                cx.invalid(
                    format!("{cp}.requests[{name}]"),
                    quote_q(req),
                    format!("must be less than or equal to {name} limit of {limit}"),
                );
            }
        }
    }
}

const WPC_GROUP: &str = "kueue.x-k8s.io";
const PC_GROUP: &str = "scheduling.k8s.io";

fn workload(cx: &mut Ctx<'_>, wl: &Workload, model: &Model) {
    object_meta(cx, &wl.metadata, true);
    let spec = &wl.spec;
    let namespace = wl.metadata.namespace.as_deref().unwrap_or("default");
    if spec.pod_sets.is_empty() {
        cx.required("spec.podSets", "must have at least 1 item");
    } else if spec.pod_sets.len() > 18 {
        cx.too_many("spec.podSets", spec.pod_sets.len(), 18);
    }
    let mut names: BTreeSet<&str> = BTreeSet::new();
    let mut with_min_count = 0usize;
    for (i, ps) in spec.pod_sets.iter().enumerate() {
        let pp = format!("spec.podSets[{i}]");
        for p in dns1123_label_problems(&ps.name) {
            cx.invalid(format!("{pp}.name"), quote(&ps.name), p);
        }
        if !names.insert(ps.name.as_str()) {
            cx.duplicate(format!("{pp}.name"), &ps.name);
        }
        if ps.count < 0 {
            cx.invalid(format!("{pp}.count"), ps.count.to_string(), GE0);
        }
        if let Some(min) = ps.min_count {
            with_min_count += 1;
            if min < 1 || min > ps.count {
                cx.invalid(
                    format!("{pp}.minCount"),
                    min.to_string(),
                    "minCount should be positive and less or equal to count",
                );
            }
        }
        let tp = format!("{pp}.template.spec");
        containers(
            cx,
            &format!("{tp}.containers"),
            &ps.template.spec.containers,
            true,
        );
        containers(
            cx,
            &format!("{tp}.initContainers"),
            &ps.template.spec.init_containers,
            true,
        );
    }
    if with_min_count > 1 {
        cx.invalid(
            "spec.podSets",
            with_min_count.to_string(),
            "at most one podSet can use minCount",
        );
    }
    if let Some(q) = spec.queue_name.as_deref().filter(|q| !q.is_empty()) {
        reference_name(cx, "spec.queueName", q);
        if !model.local_queues.contains_key(&format!("{namespace}/{q}")) {
            cx.not_found(
                "spec.queueName",
                q,
                format!("no LocalQueue of this name in namespace {namespace:?}"),
            );
        }
    }
    // Priority class: v1beta2 reference or v1beta1 name + source.
    if let Some(r) = &spec.priority_class_ref {
        let field = "spec.priorityClassRef";
        match r.group.as_str() {
            WPC_GROUP if r.kind != "WorkloadPriorityClass" => cx.invalid(
                format!("{field}.kind"),
                quote(&r.kind),
                "must be WorkloadPriorityClass when group is kueue.x-k8s.io",
            ),
            PC_GROUP if r.kind != "PriorityClass" => cx.invalid(
                format!("{field}.kind"),
                quote(&r.kind),
                "must be PriorityClass when group is scheduling.k8s.io",
            ),
            WPC_GROUP | PC_GROUP => {}
            other => cx.not_supported(format!("{field}.group"), other, &[WPC_GROUP, PC_GROUP]),
        }
        if r.name.is_empty() {
            cx.required(format!("{field}.name"), "");
        }
        if spec.priority.is_none() {
            cx.required(
                "spec.priority",
                "priority should not be nil when priorityClassRef is set",
            );
        }
    }
    if let Some(source) = &spec.priority_class_source {
        const SOURCES: &[&str] = &[
            "",
            "kueue.x-k8s.io/workloadpriorityclass",
            "scheduling.k8s.io/priorityclass",
        ];
        if !SOURCES.contains(&source.as_str()) {
            cx.not_supported("spec.priorityClassSource", source, SOURCES);
        }
    }
    if spec.priority_class_ref.is_none()
        && spec
            .priority_class_name
            .as_deref()
            .is_some_and(|n| !n.is_empty())
        && spec.priority.is_none()
    {
        cx.required(
            "spec.priority",
            "priority should not be nil when priorityClassName is set",
        );
    }
    if let Some((is_wpc, name)) = spec.priority_class().filter(|(_, n)| !n.is_empty()) {
        let (found, what, field) = if is_wpc {
            (
                model.workload_priority_classes.contains_key(name),
                "WorkloadPriorityClass",
                "name",
            )
        } else {
            (
                model.priority_classes.contains_key(name),
                "PriorityClass",
                "name",
            )
        };
        if !found {
            let path = if spec.priority_class_ref.is_some() {
                format!("spec.priorityClassRef.{field}")
            } else {
                "spec.priorityClassName".to_owned()
            };
            cx.not_found(path, name, format!("no {what} of this name"));
        }
    }
    if let Some(t) = spec.maximum_execution_time_seconds
        && t < 1
    {
        cx.invalid(
            "spec.maximumExecutionTimeSeconds",
            t.to_string(),
            "must be greater than or equal to 1",
        );
    }
    if let Some(boost) = wl.metadata.annotations.get("kueue.x-k8s.io/priority-boost")
        && boost.trim().parse::<i32>().is_err()
    {
        cx.invalid(
            "metadata.annotations[kueue.x-k8s.io/priority-boost]",
            quote(boost),
            "must be a signed 32-bit integer",
        );
    }
    let Some(status) = &wl.status else {
        return;
    };
    if let Some(adm) = &status.admission {
        let ap = "status.admission";
        if adm.cluster_queue.is_empty() {
            cx.required(format!("{ap}.clusterQueue"), "");
        } else if !model.cluster_queues.contains_key(&adm.cluster_queue) {
            cx.not_found(
                format!("{ap}.clusterQueue"),
                &adm.cluster_queue,
                "no ClusterQueue of this name",
            );
        }
        let reserved = wl
            .condition("QuotaReserved")
            .is_some_and(crate::meta::Condition::is_true);
        if reserved && adm.pod_set_assignments.len() != spec.pod_sets.len() {
            cx.invalid(
                format!("{ap}.podSetAssignments"),
                adm.pod_set_assignments.len().to_string(),
                format!(
                    "must have the same number of podSets as the spec ({})",
                    spec.pod_sets.len()
                ),
            );
        }
        for (i, psa) in adm.pod_set_assignments.iter().enumerate() {
            let pp = format!("{ap}.podSetAssignments[{i}]");
            let pod_set = spec.pod_sets.iter().find(|p| p.name == psa.name);
            if pod_set.is_none() {
                cx.not_found(format!("{pp}.name"), &psa.name, "no podSet of this name");
            }
            let count = psa.count.or(pod_set.map(|p| p.count));
            if let Some(c) = psa.count
                && c < 0
            {
                cx.invalid(format!("{pp}.count"), c.to_string(), GE0);
            }
            for (r, q) in &psa.resource_usage {
                let field = format!("{pp}.resourceUsage[{r}]");
                non_negative(cx, &field, q);
                if let Some(c) = count.filter(|c| *c > 0) {
                    let amount = q.to_amount(r);
                    if !amount.is_unlimited() && amount.0 % i64::from(c) != 0 {
                        cx.invalid(field, quote_q(q), format!("must be divisible by count {c}"));
                    }
                }
            }
            for (r, f) in &psa.flavors {
                if !model.resource_flavors.contains_key(f) {
                    cx.not_found(
                        format!("{pp}.flavors[{r}]"),
                        f,
                        "no ResourceFlavor of this name",
                    );
                }
            }
        }
    }
    for (i, rp) in status.reclaimable_pods.iter().enumerate() {
        let field = format!("status.reclaimablePods[{i}]");
        match spec.pod_sets.iter().find(|p| p.name == rp.name) {
            None => cx.not_found(format!("{field}.name"), &rp.name, "no podSet of this name"),
            Some(ps) => {
                if rp.count < 0 {
                    cx.invalid(format!("{field}.count"), rp.count.to_string(), GE0);
                } else if rp.count > ps.count {
                    cx.invalid(
                        format!("{field}.count"),
                        rp.count.to_string(),
                        format!("should be less or equal to {}", ps.count),
                    );
                }
            }
        }
    }
}

fn priority_classes(out: &mut Vec<ValidationError>, model: &Model) {
    let defaults: Vec<&str> = model
        .priority_classes
        .values()
        .filter(|p| p.global_default)
        .map(|p| p.metadata.name.as_str())
        .collect();
    for (key, pc) in &model.priority_classes {
        let mut cx = Ctx::new(out, Kind::PriorityClass, key);
        object_meta(&mut cx, &pc.metadata, false);
        if pc.value > 1_000_000_000 && !pc.metadata.name.starts_with("system-") {
            cx.forbidden(
                "value",
                "maximum allowed value of a user defined priority is 1000000000",
            );
        }
        if let Some(p) = &pc.preemption_policy {
            const POLICIES: &[&str] = &["PreemptLowerPriority", "Never"];
            if !POLICIES.contains(&p.as_str()) {
                cx.not_supported("preemptionPolicy", p, POLICIES);
            }
        }
        if pc.global_default && defaults.len() > 1 {
            let others: Vec<&str> = defaults
                .iter()
                .copied()
                .filter(|n| *n != pc.metadata.name)
                .collect();
            cx.invalid(
                "globalDefault",
                "true".to_owned(),
                format!(
                    "only one PriorityClass can be marked globalDefault; also marked: {}",
                    others.join(", ")
                ),
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Kubernetes ResourceQuota

const STANDARD_QUOTA_NAMES: &[&str] = &[
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
    "cpu",
    "memory",
    "ephemeral-storage",
    "storage",
    "requests.cpu",
    "requests.memory",
    "requests.storage",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
];

/// Standard names counted in whole objects.
const INTEGER_QUOTA_NAMES: &[&str] = &[
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
];

/// True for a resource name outside the `kubernetes.io` namespace (an extended resource).
fn is_extended(name: &str) -> bool {
    match name.split_once('/') {
        Some((domain, _)) => !(domain == "kubernetes.io" || domain.ends_with(".kubernetes.io")),
        None => false,
    }
}

fn resource_quota(cx: &mut Ctx<'_>, rq: &CoreResourceQuota) {
    object_meta(cx, &rq.metadata, true);
    for (key, value) in &rq.spec.hard {
        let field = format!("spec.hard[{key}]");
        let problems = qualified_name_problems(key);
        let malformed = !problems.is_empty();
        for p in problems {
            cx.invalid(field.clone(), quote(key), p);
        }
        let mut integer = INTEGER_QUOTA_NAMES.contains(&key.as_str());
        if key.starts_with("count/") || key.contains(".storageclass.storage.k8s.io/") {
            integer = key.starts_with("count/") || key.ends_with("persistentvolumeclaims");
        } else if let Some(rest) = key.strip_prefix("requests.") {
            if is_extended(rest) {
                integer = true;
            } else if !rest.contains('/')
                && !STANDARD_QUOTA_NAMES.contains(&key.as_str())
                && !rest.starts_with("hugepages-")
            {
                cx.invalid(
                    field.clone(),
                    quote(key),
                    "must be a standard resource for quota",
                );
            }
        } else if let Some(rest) = key.strip_prefix("limits.")
            && is_extended(rest)
        {
            // Accepted by the API server; quota enforcement ignores it (see `warnings`).
            integer = true;
        } else if is_extended(key) {
            cx.invalid(
                field.clone(),
                quote(key),
                format!(
                    "extended resources accept only quota items with the prefix requests. (use requests.{key})"
                ),
            );
        } else if !malformed
            && !key.contains('/')
            && !STANDARD_QUOTA_NAMES.contains(&key.as_str())
            && !key.starts_with("hugepages-")
            && !key.starts_with("limits.hugepages-")
        {
            cx.invalid(
                field.clone(),
                quote(key),
                "must be a standard resource for quota",
            );
        }
        if value.is_negative() {
            cx.invalid(field, quote_q(value), GE0);
        } else if integer && value.milli_value().is_none_or(|m| m % 1000 != 0) {
            cx.invalid(field, quote_q(value), "must be an integer");
        }
    }
    const SCOPES: &[&str] = &[
        "Terminating",
        "NotTerminating",
        "BestEffort",
        "NotBestEffort",
        "PriorityClass",
        "CrossNamespacePodAffinity",
        "VolumeAttributesClass",
    ];
    for (i, s) in rq.spec.scopes.iter().enumerate() {
        if !SCOPES.contains(&s.as_str()) {
            cx.not_supported(format!("spec.scopes[{i}]"), s, SCOPES);
        }
    }
    if let Some(sel) = &rq.spec.scope_selector {
        for (i, r) in sel.match_expressions.iter().enumerate() {
            let rp = format!("spec.scopeSelector.matchExpressions[{i}]");
            if !SCOPES.contains(&r.scope_name.as_str()) {
                cx.not_supported(format!("{rp}.scopeName"), &r.scope_name, SCOPES);
            }
            match r.operator.as_str() {
                "In" | "NotIn" => {
                    if r.values.is_empty() {
                        cx.required(
                            format!("{rp}.values"),
                            "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
                        );
                    }
                }
                "Exists" | "DoesNotExist" => {
                    if !r.values.is_empty() {
                        cx.invalid(
                            format!("{rp}.values"),
                            format!("{:?}", r.values),
                            "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
                        );
                    }
                }
                other => cx.not_supported(
                    format!("{rp}.operator"),
                    other,
                    &["In", "NotIn", "Exists", "DoesNotExist"],
                ),
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// KAI

fn minus_one() -> Quantity {
    Quantity::from_integer(-1)
}

fn kai_resource(cx: &mut Ctx<'_>, field: &str, r: &QueueResource) {
    let m1 = minus_one();
    for (name, v) in [("quota", &r.quota), ("limit", &r.limit)] {
        if let Some(v) = v
            && v.is_negative()
            && *v != m1
        {
            cx.invalid(
                format!("{field}.{name}"),
                v.to_string(),
                "must be -1 (unlimited) or greater than or equal to 0",
            );
        }
    }
    if let Some(w) = &r.over_quota_weight
        && w.is_negative()
    {
        cx.invalid(format!("{field}.overQuotaWeight"), w.to_string(), GE0);
    }
    for (name, v) in [
        ("quota", &r.quota),
        ("limit", &r.limit),
        ("overQuotaWeight", &r.over_quota_weight),
    ] {
        if let Some(v) = v {
            at_most_max(cx, &format!("{field}.{name}"), v);
        }
    }
    if let (Some(q), Some(l)) = (&r.quota, &r.limit)
        && !q.is_negative()
        && !l.is_negative()
        && l < q
    {
        cx.invalid(
            format!("{field}.limit"),
            l.to_string(),
            format!("must be -1 (unlimited) or at least the quota ({q})"),
        );
    }
}

fn go_duration(cx: &mut Ctx<'_>, field: &str, value: Option<&String>) {
    if let Some(v) = value
        && kai::parse_go_duration(v).is_none()
    {
        cx.invalid(
            field,
            quote(v),
            "must be a duration such as \"90s\" or \"1h30m\"",
        );
    }
}

fn kai_queue(cx: &mut Ctx<'_>, q: &Queue, model: &Model, cycles: &BTreeMap<&str, Vec<&str>>) {
    object_meta(cx, &q.metadata, false);
    match &q.spec.resources {
        None => cx.required("spec.resources", "resources must be specified"),
        Some(r) => {
            for (name, res) in [("gpu", &r.gpu), ("cpu", &r.cpu), ("memory", &r.memory)] {
                if let Some(res) = res {
                    kai_resource(cx, &format!("spec.resources.{name}"), res);
                }
            }
        }
    }
    go_duration(
        cx,
        "spec.preemptMinRuntime",
        q.spec.preempt_min_runtime.as_ref(),
    );
    go_duration(
        cx,
        "spec.reclaimMinRuntime",
        q.spec.reclaim_min_runtime.as_ref(),
    );
    let Some(parent) = q.spec.parent_queue.as_deref().filter(|p| !p.is_empty()) else {
        return;
    };
    if !model.queues.contains_key(parent) {
        cx.not_found("spec.parentQueue", parent, "no Queue of this name");
        return;
    }
    if let Some(cycle) = cycles.get(q.metadata.name.as_str()) {
        cx.invalid(
            "spec.parentQueue",
            quote(parent),
            format!("queue cycle: {}", show_cycle(cycle)),
        );
    }
}

fn pod_group(cx: &mut Ctx<'_>, pg: &crate::kai::PodGroup, model: &Model) {
    object_meta(cx, &pg.metadata, true);
    let spec = &pg.spec;
    if let Some(m) = spec.min_member
        && m < 1
    {
        cx.invalid(
            "spec.minMember",
            m.to_string(),
            "must be greater than or equal to 1",
        );
    }
    if spec.queue.is_empty() {
        cx.required("spec.queue", "");
    } else if !model.queues.contains_key(&spec.queue) {
        cx.not_found("spec.queue", &spec.queue, "no Queue of this name");
    } else if model.queues.values().any(|q| {
        q.spec.parent_queue.as_deref() == Some(spec.queue.as_str()) && q.metadata.name != spec.queue
    }) {
        cx.invalid(
            "spec.queue",
            quote(&spec.queue),
            "is a parent queue; only leaf queues hold jobs",
        );
    }
    if let Some(p) = &spec.preemptibility {
        const ALLOWED: &[&str] = &["", "preemptible", "non-preemptible"];
        if !ALLOWED.contains(&p.as_str()) {
            cx.not_supported("spec.preemptibility", p, ALLOWED);
        }
    }
    if let Some(pc) = spec
        .priority_class_name
        .as_deref()
        .filter(|p| !p.is_empty())
        && kai::builtin_priority_class(pc).is_none()
        && !model.priority_classes.contains_key(pc)
    {
        cx.not_found(
            "spec.priorityClassName",
            pc,
            "neither a built-in KAI priority class nor a PriorityClass",
        );
    }
    go_duration(
        cx,
        "spec.stalenessGracePeriod",
        spec.staleness_grace_period.as_ref(),
    );
    go_duration(cx, "spec.preemptionDelay", spec.preemption_delay.as_ref());
}

// ---------------------------------------------------------------------------------------------
// Kueue Configuration

fn configuration(cx: &mut Ctx<'_>, config: &crate::kueue::Configuration) {
    if config.fair_sharing_enabled()
        && let Some(fs) = &config.fair_sharing
    {
        let s: Vec<&str> = fs
            .preemption_strategies
            .iter()
            .map(String::as_str)
            .collect();
        let field = "fairSharing.preemptionStrategies";
        const S1: &str = "LessThanOrEqualToFinalShare";
        const S2: &str = "LessThanInitialShare";
        let ok = matches!(s.as_slice(), [S1] | [S2] | [S1, S2]);
        if s.is_empty() {
            // Upstream defaults an empty list to both strategies in order; accept it.
        } else if !ok {
            cx.invalid(
                field,
                format!("{s:?}"),
                format!("must be one of [{S1}], [{S2}] or [{S1}, {S2}]"),
            );
        }
    }
    if let Some(afs) = &config.admission_fair_sharing {
        if let Some(v) = &afs.usage_half_life_time {
            match kai::parse_go_duration(v) {
                Some(d) if d >= 0 => {}
                _ => cx.invalid(
                    "admissionFairSharing.usageHalfLifeTime",
                    quote(v),
                    "must be a duration greater than or equal to 0",
                ),
            }
        }
        if let Some(v) = &afs.usage_sampling_interval {
            match kai::parse_go_duration(v) {
                Some(d) if d > 0 => {}
                _ => cx.invalid(
                    "admissionFairSharing.usageSamplingInterval",
                    quote(v),
                    "must be a duration greater than 0",
                ),
            }
        }
        for (r, w) in &afs.resource_weights {
            non_negative(cx, &format!("admissionFairSharing.resourceWeights[{r}]"), w);
        }
    }
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
