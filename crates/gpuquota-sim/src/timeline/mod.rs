//! The timeline: a platform that changes while the simulation runs (`spec.timeline`).
//!
//! ```yaml
//! spec:
//!   timeline:
//!   - at: "2026-04-10T12:00:00Z"        # RFC 3339, or a Go duration from spec.start ("216h")
//!     apply: [quotas-v2.yaml]            # created or replaced (same kind/name/namespace)
//!     patch:                             # JSON merge patches (RFC 7386)
//!     - {kind: ClusterQueue, name: batch, mergePatch: {spec: {stopPolicy: HoldAndDrain}}}
//!     delete:
//!     - {kind: Cohort, name: research}
//!     nodes: {down: [rtx-a], drain: [rtx-b], drainDeadline: 2h, up: []}
//!     migLayout: {node: rtx-b, config: all-1g.24gb}
//! ```
//!
//! # Reading ([`Timeline::parse`])
//!
//! Every event is checked when the scenario is read, and every problem is an error naming the
//! event's index in the document and the field (`spec.timeline[2].patch[0].mergePatch`):
//!
//! - `at` is required: RFC 3339, or a Go duration counted from `spec.start`; the instant must
//!   lie in the run, `spec.start ≤ at < spec.end` (an event at the end would change nothing);
//! - `kind` must be one of the kinds a timeline changes ([`KINDS`]: the platform's objects,
//!   not workloads, pods or Kueue's Configuration);
//! - a patched or deleted object must exist at that instant (after the earlier events);
//! - an applied file must read without errors and hold platform objects only;
//! - the objects an event leaves behind must pass the workspace's one validator
//!   ([`gpuquota_model::validate::diagnostics`]): a merge patch or a file that makes an object
//!   invalid is refused with the validator's message (`ClusterQueue "batch":
//!   spec.stopPolicy: Unsupported value: ...`); only problems the event brings are reported;
//! - a merge patch may not rename an object (`metadata.name`, `metadata.namespace`);
//! - `nodes.down`, `drain` and `up` name Nodes of the cluster at that instant, each at most
//!   once per event; `drainDeadline` is a Go duration and needs `drain`;
//! - `migLayout.node` is a Node and `migLayout.config` a config name of a mig-parted config
//!   (`version: v1`, `mig-configs`) held in a ConfigMap of the cluster files, which the node's
//!   GPUs can take ([`mig_allocatable`]: the node's `nvidia.com/gpu.product` is a catalogue
//!   model and each selected GPU's profile counts form a valid layout).
//!
//! Unknown fields are warnings (code `unknown-field`) with their path in Kubernetes'
//! notation, as everywhere else in the scenario; the warnings of applied files and re-read
//! objects are kept too ([`Timeline::warnings`]).
//!
//! Events are sorted by time; events at the same instant keep document order. Inside one
//! event, the changes are made in this order: the applied files (their objects sorted by kind,
//! then key), the patches, the deletions (each in document order); then the node events, then
//! the MIG layout request.
//!
//! # What an object change is
//!
//! A patch is applied to the object's JSON form ([`merge_patch`], RFC 7386), and the result
//! is read again through the model's reader ([`gpuquota_model::import_str`]), so the object
//! stored is exactly the one the API server would store from that JSON (defaults, aliases
//! and refusals included). Patches and files are resolved once, when the timeline is read,
//! against the platform as the earlier events leave it; an [`Event`] then holds the finished
//! objects, and applying it ([`apply`]) only puts and removes them.
//!
//! # What a driver does at an event's instant
//!
//! [`apply`] changes the [`Model`] and returns the typed [`Changes`]. For each entry the
//! driver of an engine must, at that instant:
//!
//! - **ClusterQueue / Cohort / ResourceFlavor / LocalQueue created or replaced (Kueue)**:
//!   hand the change to the admission engine's incremental API
//!   (`gpuquota_cohort::cycle::transition`): admitted workloads stay admitted (a quota decrease
//!   evicts nothing; with reclaim, preemption follows at the next cycle by upstream's rules),
//!   a `stopPolicy: Hold` stops admission, `HoldAndDrain` also evicts the queue's admitted
//!   workloads with reason `ClusterQueueStopped` (LocalQueue: `LocalQueueStopped`), a new
//!   Cohort or ClusterQueue joins the tree, then requeue the inadmissible workloads of the
//!   trees touched and run a cycle.
//! - **ClusterQueue deleted (Kueue)**: with admitted workloads it stays (terminating, the
//!   `kueue.x-k8s.io/resource-in-use` finalizer) and admits nothing, until its last admitted
//!   workload finishes; without, it leaves at once; its pending workloads stay pending.
//! - **Queue replaced or patched (KAI)**: staged with
//!   `gpuquota_rank::queue_changes::QueueChanges`; quota, limit, weight and priority take
//!   effect at the next session, as KAI reads its queues from the snapshot each session
//!   takes. A Queue created, deleted or moved in the tree also takes effect at the next
//!   session, whose tree is built from the platform as it is then; a deleted Queue's
//!   PodGroups leave the snapshot (pending ones wait with `QueueDoesNotExist`, running ones
//!   run on uncounted), as KAI's snapshot ignores a PodGroup whose Queue does not exist
//!   (NVIDIA/KAI-Scheduler `pkg/scheduler/cache/cluster_info/cluster_info.go`); not with a
//!   usage database (`not-simulated` when reached). Node events apply under KAI as below
//!   (a run ends with `action: node` and the reason), the next session seeing the new node
//!   set. MIG layouts and kinds other than Queue are refused on a KAI scenario
//!   (`not-simulated`, naming the event's field).
//! - **ResourceQuota / Namespace changed (resourcequota engine)**: the next admission
//!   request is checked against the new hard caps; running pods are never evicted by a quota
//!   change (the API server checks quotas at creation only).
//! - **Node down** ([`Changes::nodes_down`]): the node's pods are lost now and its devices
//!   leave the capacity of every engine until it is up again. [`apply`] taints it
//!   `node.kubernetes.io/unreachable:NoExecute`, as the node lifecycle controller does. Under
//!   Kueue and `resourcequota` each workload holding a device on it ends its run `Preempted`
//!   with reason `NodeFailures` and `by` `Node/<name>` (the run so far is lost work on the
//!   bill, as a preemption's is) and is queued again at once. The reason is Kueue's
//!   `WorkloadEvictedDueToNodeFailures` (kubernetes-sigs/kueue `apis/kueue/v1beta2/
//!   workload_types.go`), which its node-failure controller
//!   (`pkg/controller/tas/node_failure_controller.go`) sets and after which Kueue requeues
//!   without backoff; `PodsReadyTimeout` is not used: that is a timeout of pods never ready,
//!   not a loss. A waiting pod's message counts the node as one with the untolerated taint
//!   `{node.kubernetes.io/unreachable: }`.
//! - **Node drained** ([`Changes::nodes_drained`]): no new pods on it (`spec.unschedulable`);
//!   running pods finish, or are evicted at `at + drainDeadline`
//!   ([`Changes::drain_deadline_ms`]), reason `EvictionByEvictionAPI` (the pods'
//!   `DisruptionTarget` reason when `kubectl drain` evicts them through the Eviction API,
//!   kubernetes/kubernetes `pkg/registry/core/pod/storage/eviction.go`; Kueue has no reason of
//!   its own for it) and `by` `Node/<name>`, and queued again at once. A node up before its
//!   deadline is spared; drained again, the later deadline counts.
//! - **Node up** ([`Changes::nodes_up`]): the taint and the cordon are removed; its capacity
//!   is back, and the workloads waiting for devices are tried at once.
//! - **MIG layout** ([`Changes::mig_layout`]): the window opens now; the node takes no new
//!   placements; when none of its devices is held (at once when none is), the node's
//!   allocatable becomes what [`mig_allocatable`] gives and it takes pods again. The report's
//!   timeline entry names the window's opening, its closing and the workloads it waited
//!   for (those holding a device on the node when it opened).
//!
//! The report's entry of an event with node changes (`timeline[]` of the JSON) adds
//! `nodesDown`, `nodesDrained`, `drainDeadlineMs`, `nodesUp`, the devices that take new pods
//! per extended resource before and after (`devicesBefore`, `devicesAfter`: the allocatable
//! of the nodes neither failed, cordoned nor in a MIG window), the evictions (`evicted`, the
//! drain deadline's included) and `migWindow` (`node`, `config`, `openedMs`, `closedMs`,
//! `waited`). KAI runs follow `down`, `drain` and `up` the same way (their entries keep
//! `capacityBefore`/`capacityAfter` empty; devices count `nvidia.com/gpu` and the nodes' MIG
//! profiles), not MIG layouts.
//!
//! # Sweeps
//!
//! [`set`] sets `timeline[N].at` and any value under `timeline[N].patch[M].mergePatch` in the
//! document before it is read, with the `--set PATH=VALUE` grammar of `sim sweep`.
//!
//! # Complexity
//!
//! Reading: O(events × (platform objects + objects changed × their size)), since the
//! platform is validated after each event (workloads, pods and workload objects are left out
//! of that check). Applying one event: O(objects changed × (log objects + object size) +
//! node events × log nodes).

use std::collections::{BTreeMap, BTreeSet};

use gpuquota_model::diag::{Diagnostic, Diagnostics, codes};
use gpuquota_model::{Kind, Model, Timestamp};
use serde_json::Value;

use crate::scenario::{INVALID_SCENARIO, duration_ms, ms_between};

mod doc;
mod merge_patch;
mod mig;
mod object;
mod set;

pub use doc::{EventDoc, MigLayoutDoc, NodesDoc, ObjectRefDoc, PatchDoc};
pub use merge_patch::merge_patch;
pub use mig::{GPU_COUNT_LABEL, GPU_PRODUCT_LABEL, MIG_STRATEGY_LABEL, mig_allocatable};
pub use object::{KINDS, Object};
pub use set::set;

/// The taint a failed node carries while it is down (the node lifecycle controller's).
pub const UNREACHABLE_TAINT: &str = "node.kubernetes.io/unreachable";
/// The node label the MIG manager reads and sets (NVIDIA/mig-parted, the GPU operator).
pub const MIG_CONFIG_LABEL: &str = "nvidia.com/mig.config";

/// The timeline of a scenario, validated and resolved, events sorted by time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timeline {
    /// The events, by time, then document order.
    pub events: Vec<Event>,
    /// Unknown fields and the warnings of applied files.
    pub warnings: Diagnostics,
}

/// One resolved event.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Its index in `spec.timeline`.
    pub index: usize,
    /// Its instant, ms since `spec.start`.
    pub at_ms: i64,
    /// Object changes, in the order they are made.
    pub objects: Vec<ObjectOp>,
    /// Node events.
    pub nodes: NodeEvents,
    /// A MIG layout request.
    pub mig_layout: Option<MigLayoutRequest>,
}

/// One object change of an event.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectOp {
    /// The field it came from (`spec.timeline[2].patch[0]`, `spec.timeline[0].apply[1]`).
    pub field: String,
    /// What it does.
    pub op: Op,
}

/// Put (create or replace) or delete.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// The object after the change, under its model key.
    Put {
        /// Model key (`namespace/name` for namespaced kinds).
        key: String,
        /// The object.
        object: Object,
    },
    /// The object removed.
    Delete {
        /// Kind.
        kind: Kind,
        /// Model key.
        key: String,
    },
}

/// Node events of one event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeEvents {
    /// Failed nodes.
    pub down: Vec<String>,
    /// Cordoned nodes.
    pub drain: Vec<String>,
    /// How long drained nodes' pods may still run, ms.
    pub drain_deadline_ms: Option<i64>,
    /// Nodes back.
    pub up: Vec<String>,
}

/// A MIG maintenance window: `node` is to be re-laid with mig-parted config `config`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigLayoutRequest {
    /// The node.
    pub node: String,
    /// The mig-parted config name.
    pub config: String,
}

/// What an applied event changed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Changes {
    /// Objects created, replaced or deleted, in the order they changed.
    pub objects: Vec<ObjectChange>,
    /// Nodes that failed.
    pub nodes_down: Vec<String>,
    /// Nodes cordoned.
    pub nodes_drained: Vec<String>,
    /// The drain deadline, ms after the event.
    pub drain_deadline_ms: Option<i64>,
    /// Nodes back.
    pub nodes_up: Vec<String>,
    /// A MIG layout change requested (its window opens now).
    pub mig_layout: Option<MigLayoutRequest>,
}

/// One object changed.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectChange {
    /// Kind.
    pub kind: Kind,
    /// Model key (`namespace/name` for namespaced kinds).
    pub key: String,
    /// How.
    pub change: Change,
    /// The object before the change (replaced or deleted; `None` when created), moved out
    /// of the model, never copied: what a driver compares (capacity before and after) or
    /// hands on (a KAI Queue's `QueueChanges::stage(before, after)`).
    pub before: Option<Object>,
}

/// How an object changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// It did not exist.
    Created,
    /// It existed and was replaced.
    Replaced,
    /// It was removed.
    Deleted,
}

/// Applies one event to `model` (taken and given back, never copied) and says what changed.
///
/// The event must come from a [`Timeline`] read against the same platform, applied in order:
/// the objects it puts were resolved against the platform the earlier events leave.
///
/// # Complexity
/// O(objects changed × (log objects of the kind + object size) + node events × log nodes).
pub fn apply(mut model: Model, event: &Event) -> (Model, Changes) {
    let changes = apply_in_place(&mut model, event);
    (model, changes)
}

/// [`apply`] on a borrowed model.
///
/// # Complexity
/// As [`apply`].
pub fn apply_in_place(model: &mut Model, event: &Event) -> Changes {
    let mut changes = Changes::default();
    for op in &event.objects {
        match &op.op {
            Op::Put { key, object } => {
                let before = object.put(model, key);
                changes.objects.push(ObjectChange {
                    kind: object.kind(),
                    key: key.clone(),
                    change: if before.is_some() {
                        Change::Replaced
                    } else {
                        Change::Created
                    },
                    before,
                });
            }
            Op::Delete { kind, key } => {
                if let Some(before) = object::remove(model, *kind, key) {
                    changes.objects.push(ObjectChange {
                        kind: *kind,
                        key: key.clone(),
                        change: Change::Deleted,
                        before: Some(before),
                    });
                }
            }
        }
    }
    let n = &event.nodes;
    for name in &n.down {
        if let Some(node) = model.nodes.get_mut(name) {
            let t = &mut node.spec.taints;
            if !t
                .iter()
                .any(|t| t.key == UNREACHABLE_TAINT && t.effect == "NoExecute")
            {
                t.push(gpuquota_model::meta::Taint {
                    key: UNREACHABLE_TAINT.to_owned(),
                    value: None,
                    effect: "NoExecute".to_owned(),
                    ..Default::default()
                });
            }
            changes.nodes_down.push(name.clone());
        }
    }
    for name in &n.drain {
        if let Some(node) = model.nodes.get_mut(name) {
            node.spec.unschedulable = Some(true);
            changes.nodes_drained.push(name.clone());
        }
    }
    if !changes.nodes_drained.is_empty() {
        changes.drain_deadline_ms = n.drain_deadline_ms;
    }
    for name in &n.up {
        if let Some(node) = model.nodes.get_mut(name) {
            node.spec.taints.retain(|t| t.key != UNREACHABLE_TAINT);
            node.spec.unschedulable = None;
            changes.nodes_up.push(name.clone());
        }
    }
    changes.mig_layout.clone_from(&event.mig_layout);
    changes
}

/// Closes a MIG maintenance window in the model: the node's `nvidia.com/mig.config` label
/// names the new config, as the MIG manager leaves it. The node's MIG resources are the
/// driver's to change (they follow from the config and the GPUs). Returns false when the node
/// does not exist.
///
/// # Complexity
/// O(log nodes + labels).
pub fn finish_mig_layout(model: &mut Model, request: &MigLayoutRequest) -> bool {
    let Some(node) = model.nodes.get_mut(&request.node) else {
        return false;
    };
    node.metadata
        .labels
        .insert(MIG_CONFIG_LABEL.to_owned(), request.config.clone());
    true
}

/// Reads files the timeline names: a path relative to the scenario to (display name, text).
pub type ReadFile<'a> = dyn Fn(&str) -> Result<(String, String), Diagnostic> + 'a;

impl Timeline {
    /// Reads and checks `spec.timeline` (`value`, the list as written; `null` is no timeline)
    /// of the scenario `source`, against the platform of `model`, for a run from `start`
    /// until `end_ms` (ms since start; `None`: open-ended); `read` loads applied files. See
    /// the module docs for every check.
    ///
    /// # Errors
    /// Every problem found, each naming `spec.timeline[i]` and the field.
    ///
    /// # Complexity
    /// See the module docs.
    pub fn parse(
        source: &str,
        value: &Value,
        start: Timestamp,
        end_ms: Option<i64>,
        model: &Model,
        read: &ReadFile<'_>,
    ) -> Result<Timeline, Diagnostics> {
        let mut p = Parser {
            source,
            errors: Diagnostics::default(),
            warnings: Diagnostics::default(),
        };
        let docs = p.documents(value);
        let mut timed: Vec<(i64, usize, EventDoc)> = Vec::new();
        for (i, d) in docs {
            if let Some(at) = p.at(i, d.at.as_deref(), start, end_ms) {
                timed.push((at, i, d));
            }
        }
        timed.sort_by_key(|&(at, i, _)| (at, i));
        let mut platform = object::platform_of(model);
        let mut baseline = error_lines(&platform);
        let mut events = Vec::with_capacity(timed.len());
        for (at_ms, i, d) in timed {
            let before = p.errors.len();
            let e = p.event(i, at_ms, &d, &mut platform, read);
            if p.errors.len() > before {
                continue;
            }
            if !e.objects.is_empty() {
                let now = error_lines(&platform);
                for (line, d) in &now {
                    if !baseline.contains_key(line) {
                        let field = e
                            .objects
                            .iter()
                            .find(|o| op_is(&o.op, &d.kind, &d.name))
                            .map(|o| match &o.op {
                                Op::Put { .. } if o.field.contains(".patch[") => {
                                    format!("{}.mergePatch", o.field)
                                }
                                _ => o.field.clone(),
                            })
                            .unwrap_or_else(|| format!("spec.timeline[{i}]"));
                        p.errors.push(
                            Diagnostic::error(d.code, line.clone())
                                .source(source)
                                .object(d.kind.clone(), d.name.clone())
                                .field(field),
                        );
                    }
                }
                baseline = now;
            }
            events.push(e);
        }
        if p.errors.has_errors() {
            let mut all = p.errors;
            all.extend(p.warnings.0);
            return Err(all);
        }
        Ok(Timeline {
            events,
            warnings: p.warnings,
        })
    }
}

fn op_is(op: &Op, kind: &str, name: &str) -> bool {
    match op {
        Op::Put { key, object } => object.kind().as_str() == kind && key == name,
        Op::Delete { kind: k, key } => k.as_str() == kind && key == name,
    }
}

/// The validator's errors about the platform, by their printed line.
fn error_lines(platform: &Model) -> BTreeMap<String, Diagnostic> {
    let options = gpuquota_model::validate::Options::default();
    gpuquota_model::validate::diagnostics(platform, &options)
        .0
        .into_iter()
        .filter(|d| d.is_error(false))
        .map(|d| (d.to_string(), d))
        .collect()
}

/// A serde_ignored path in Kubernetes' notation (`patch[0].nme`).
fn k8s_path(p: &serde_ignored::Path<'_>) -> String {
    use serde_ignored::Path;
    match p {
        Path::Root => String::new(),
        Path::Seq { parent, index } => format!("{}[{index}]", k8s_path(parent)),
        Path::Map { parent, key } => {
            let head = k8s_path(parent);
            if head.is_empty() {
                key.clone()
            } else {
                format!("{head}.{key}")
            }
        }
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => k8s_path(parent),
    }
}

struct Parser<'a> {
    source: &'a str,
    errors: Diagnostics,
    warnings: Diagnostics,
}

impl Parser<'_> {
    fn error(&mut self, field: String, message: impl Into<String>) {
        self.errors.push(
            Diagnostic::error(INVALID_SCENARIO, message)
                .source(self.source)
                .field(field),
        );
    }

    fn documents(&mut self, value: &Value) -> Vec<(usize, EventDoc)> {
        let items = match value {
            Value::Null => return Vec::new(),
            Value::Array(items) => items,
            _ => {
                self.error("spec.timeline".into(), "must be a list of events");
                return Vec::new();
            }
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let mut unknown = Vec::new();
            let r: Result<EventDoc, serde_json::Error> =
                serde_ignored::deserialize(item, |p| unknown.push(k8s_path(&p)));
            match r {
                Ok(d) => {
                    for u in unknown {
                        self.warnings.push(
                            Diagnostic::warning(codes::UNKNOWN_FIELD, "unknown field")
                                .source(self.source)
                                .field(format!("spec.timeline[{i}].{u}")),
                        );
                    }
                    out.push((i, d));
                }
                Err(e) => self.errors.push(
                    Diagnostic::error(codes::INVALID_TYPE, e.to_string())
                        .source(self.source)
                        .field(format!("spec.timeline[{i}]")),
                ),
            }
        }
        out
    }

    fn at(
        &mut self,
        i: usize,
        at: Option<&str>,
        start: Timestamp,
        end: Option<i64>,
    ) -> Option<i64> {
        let field = format!("spec.timeline[{i}].at");
        let Some(at) = at else {
            self.error(
                field,
                "required: the event's instant (RFC 3339, or a Go duration from spec.start)",
            );
            return None;
        };
        let ms = match Timestamp::parse(at) {
            Ok(t) => ms_between(start, t),
            Err(_) => {
                match duration_ms(at) {
                    Some(ms) => ms,
                    None => {
                        self.error(
                        field,
                        format!("{at:?} is neither an RFC 3339 time nor a Go duration from spec.start"),
                    );
                        return None;
                    }
                }
            }
        };
        if ms < 0 {
            self.error(
                field,
                format!("{at:?} is before spec.start: outside the run"),
            );
            return None;
        }
        if let Some(end) = end.filter(|&e| ms >= e) {
            self.error(
                field,
                format!("{at:?} is {ms} ms after spec.start, not before spec.end ({end} ms): outside the run"),
            );
            return None;
        }
        Some(ms)
    }

    fn kind(&mut self, field: String, name: &str) -> Option<Kind> {
        let k = object::kind_named(name);
        if k.is_none() {
            let known: Vec<&str> = KINDS.iter().map(|k| k.as_str()).collect();
            self.error(
                field,
                format!(
                    "{name:?} is not a kind a timeline changes ({})",
                    known.join(", ")
                ),
            );
        }
        k
    }

    fn event(
        &mut self,
        i: usize,
        at_ms: i64,
        d: &EventDoc,
        platform: &mut Model,
        read: &ReadFile<'_>,
    ) -> Event {
        let mut objects = Vec::new();
        for (k, file) in d.apply.iter().enumerate() {
            let field = format!("spec.timeline[{i}].apply[{k}]");
            for (key, object) in self.applied(&field, file, read) {
                let _ = object.put(platform, &key);
                objects.push(ObjectOp {
                    field: field.clone(),
                    op: Op::Put { key, object },
                });
            }
        }
        for (k, patch) in d.patch.iter().enumerate() {
            let field = format!("spec.timeline[{i}].patch[{k}]");
            if let Some((key, object)) = self.patched(&field, patch, platform) {
                let _ = object.put(platform, &key);
                objects.push(ObjectOp {
                    field,
                    op: Op::Put { key, object },
                });
            }
        }
        for (k, r) in d.delete.iter().enumerate() {
            let field = format!("spec.timeline[{i}].delete[{k}]");
            let Some(kind) = self.kind(format!("{field}.kind"), &r.kind) else {
                continue;
            };
            let key = object::key_of(kind, &r.name, r.namespace.as_deref());
            if object::remove(platform, kind, &key).is_some() {
                objects.push(ObjectOp {
                    field,
                    op: Op::Delete { kind, key },
                });
            } else {
                self.error(
                    field,
                    format!("{kind} {key:?} does not exist at this instant"),
                );
            }
        }
        let nodes = self.nodes(i, d.nodes.as_ref(), platform);
        let mig_layout = d
            .mig_layout
            .as_ref()
            .and_then(|m| self.mig_layout(i, m, platform));
        Event {
            index: i,
            at_ms,
            objects,
            nodes,
            mig_layout,
        }
    }

    /// The platform objects of an applied file, by key.
    fn applied(&mut self, field: &str, file: &str, read: &ReadFile<'_>) -> Vec<(String, Object)> {
        let (shown, text) = match read(file) {
            Ok(t) => t,
            Err(d) => {
                self.errors.push(Diagnostic {
                    field: field.to_owned(),
                    ..d
                });
                return Vec::new();
            }
        };
        let mut imported = match gpuquota_model::import_str(&shown, &text) {
            Ok(i) => i,
            Err(e) => {
                for d in e.0 {
                    self.errors.push(
                        Diagnostic::error(d.code, d.to_string())
                            .source(self.source)
                            .object(d.kind.clone(), d.name.clone())
                            .field(field),
                    );
                }
                return Vec::new();
            }
        };
        self.warnings.extend(imported.warnings);
        if let Some(kind) = object::non_platform(&imported.model) {
            self.error(
                field.to_owned(),
                format!(
                    "{shown} holds a {kind}: a timeline changes the platform's objects only ({})",
                    KINDS
                        .iter()
                        .map(|k| k.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
            return Vec::new();
        }
        if imported.model.is_empty() {
            self.error(field.to_owned(), format!("{shown} holds no object"));
        }
        object::drain(&mut imported.model)
            .into_iter()
            .map(|(_, key, o)| (key, o))
            .collect()
    }

    /// The object after a merge patch, read again through the model's reader.
    fn patched(
        &mut self,
        field: &str,
        patch: &PatchDoc,
        platform: &Model,
    ) -> Option<(String, Object)> {
        let kind = self.kind(format!("{field}.kind"), &patch.kind)?;
        let key = object::key_of(kind, &patch.name, patch.namespace.as_deref());
        let Some(mut value) = object::value_of(platform, kind, &key) else {
            self.error(
                format!("{field}.name"),
                format!("{kind} {key:?} does not exist at this instant"),
            );
            return None;
        };
        let api = object::api_version(kind)?;
        if let Value::Object(m) = &mut value {
            m.insert("apiVersion".into(), Value::String(api.to_owned()));
            m.insert("kind".into(), Value::String(kind.as_str().to_owned()));
        }
        let (name0, ns0) = (
            value["metadata"]["name"].clone(),
            value["metadata"]["namespace"].clone(),
        );
        merge_patch(&mut value, &patch.merge_patch);
        let mp = format!("{field}.mergePatch");
        if !value.is_object()
            || value["metadata"]["name"] != name0
            || value["metadata"]["namespace"] != ns0
            || value["kind"] != Value::String(kind.as_str().to_owned())
            || value["apiVersion"] != Value::String(api.to_owned())
        {
            self.error(
                mp,
                "a merge patch may not rename an object or change its kind or apiVersion",
            );
            return None;
        }
        let text = value.to_string();
        let mut imported = match gpuquota_model::import_str(&mp, &text) {
            Ok(i) => i,
            Err(e) => {
                for d in e.0 {
                    let line = Diagnostic {
                        source: String::new(),
                        ..d.clone()
                    }
                    .to_string();
                    self.errors.push(
                        Diagnostic::error(d.code, line)
                            .source(self.source)
                            .object(kind.as_str(), key.clone())
                            .field(mp.clone()),
                    );
                }
                return None;
            }
        };
        for w in imported.warnings {
            let line = Diagnostic {
                source: String::new(),
                ..w.clone()
            }
            .to_string();
            self.warnings.push(
                Diagnostic::warning(w.code, line)
                    .source(self.source)
                    .object(kind.as_str(), key.clone())
                    .field(mp.clone()),
            );
        }
        let mut all = object::drain(&mut imported.model);
        match all.pop() {
            Some((_, k, o)) if all.is_empty() && k == key => Some((key, o)),
            _ => {
                self.error(mp, "the patched object does not read back as one object");
                None
            }
        }
    }

    fn nodes(&mut self, i: usize, d: Option<&NodesDoc>, platform: &mut Model) -> NodeEvents {
        let Some(d) = d else {
            return NodeEvents::default();
        };
        let mut seen = BTreeSet::new();
        let mut check = |p: &mut Self, list: &[String], what: &str| -> Vec<String> {
            let mut out = Vec::new();
            for (k, n) in list.iter().enumerate() {
                let field = format!("spec.timeline[{i}].nodes.{what}[{k}]");
                if !platform.nodes.contains_key(n) {
                    p.error(
                        field,
                        format!("{n:?} is not a Node of the cluster at this instant"),
                    );
                } else if !seen.insert(n.clone()) {
                    p.error(
                        field,
                        format!("node {n:?} is named twice in this event's nodes"),
                    );
                } else {
                    out.push(n.clone());
                }
            }
            out
        };
        let down = check(self, &d.down, "down");
        let drain = check(self, &d.drain, "drain");
        let up = check(self, &d.up, "up");
        let field = format!("spec.timeline[{i}].nodes.drainDeadline");
        let drain_deadline_ms = d.drain_deadline.as_deref().and_then(|s| {
            if d.drain.is_empty() {
                self.error(field.clone(), "needs nodes to drain (nodes.drain)");
            }
            let ms = duration_ms(s);
            if ms.is_none() {
                self.error(field.clone(), format!("{s:?} is not a Go duration"));
            }
            ms
        });
        let events = NodeEvents {
            down,
            drain,
            drain_deadline_ms,
            up,
        };
        let ev = Event {
            index: i,
            at_ms: 0,
            objects: Vec::new(),
            nodes: events.clone(),
            mig_layout: None,
        };
        apply_in_place(platform, &ev);
        events
    }

    fn mig_layout(
        &mut self,
        i: usize,
        m: &MigLayoutDoc,
        platform: &Model,
    ) -> Option<MigLayoutRequest> {
        let mut ok = true;
        if !platform.nodes.contains_key(&m.node) {
            self.error(
                format!("spec.timeline[{i}].migLayout.node"),
                format!("{:?} is not a Node of the cluster at this instant", m.node),
            );
            ok = false;
        }
        let names = mig_config_names(platform);
        if !names.contains(&m.config) {
            let known: Vec<&str> = names.iter().map(String::as_str).collect();
            self.error(
                format!("spec.timeline[{i}].migLayout.config"),
                format!(
                    "no mig-parted config of the cluster files' ConfigMaps defines {:?} (defined: {})",
                    m.config,
                    if known.is_empty() { "none".to_owned() } else { known.join(", ") }
                ),
            );
            ok = false;
        }
        if !ok {
            return None;
        }
        let request = MigLayoutRequest {
            node: m.node.clone(),
            config: m.config.clone(),
        };
        if let Err(e) = mig_allocatable(platform, &request) {
            self.error(format!("spec.timeline[{i}].migLayout.config"), e);
            return None;
        }
        Some(request)
    }
}

/// The config names of every mig-parted config (`version: v1`, `mig-configs`) held in a
/// ConfigMap's data, sorted.
///
/// # Complexity
/// O(size of the ConfigMaps' values that mention `mig-configs`).
pub fn mig_config_names(model: &Model) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for cm in model.config_maps.values() {
        for text in cm.data.values().filter(|t| t.contains("mig-configs")) {
            let Ok(v) = serde_saphyr::from_str::<Value>(text) else {
                continue;
            };
            if let Some(Value::Object(configs)) = v.get("mig-configs") {
                out.extend(configs.keys().cloned());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
