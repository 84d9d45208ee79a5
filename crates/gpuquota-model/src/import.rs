//! Import of Kubernetes manifests: multi-document YAML or JSON, Kueue `v1beta1`/`v1beta2`,
//! KAI, and core objects, into a [`Model`].
//!
//! Every problem of every file is collected as a [`Diagnostic`] (errors in [`ImportErrors`],
//! warnings in [`Imported::warnings`]), none aborts the import early. The resulting model does
//! not depend on the order of documents or files (objects are keyed by name; when the same
//! object appears twice the copy with the smaller canonical JSON is kept and the duplicate is
//! recorded for validation), except for the names given from `metadata.generateName` below.
//!
//! # Input format
//!
//! - **Text**: UTF-8 (a leading byte-order mark is skipped); files are read through
//!   [`crate::source`], which names the byte offset and line of the first byte that is not
//!   UTF-8. One source holds at most [`MAX_SOURCE_BYTES`] (64 MiB); split larger exports.
//! - **Documents**: YAML with any number of `---`-separated documents; or JSON, one value, a
//!   stream of values, or an array of objects (text starting with `{` or `[` is read as JSON
//!   first, then as YAML flow syntax if it is not JSON). A `List` (`kind: List`, or any kind
//!   ending in `List` with `items`, as `kubectl get -o yaml|json` writes) is read item by item;
//!   empty documents and `null` are skipped; a scalar document is skipped with a warning.
//! - **Kinds read** (group/kind): `kueue.x-k8s.io` ResourceFlavor, ClusterQueue, Cohort,
//!   LocalQueue, Workload, WorkloadPriorityClass (`v1beta1`, `v1beta2`; Cohort also
//!   `v1alpha1`); `config.kueue.x-k8s.io` Configuration; `scheduling.k8s.io` PriorityClass;
//!   core Namespace, ResourceQuota, Pod, Node (`v1`); `scheduling.run.ai` Queue (`v2`) and
//!   PodGroup (`v2alpha2`); `gpuquota.dev` Budget (`v1alpha1`, [`crate::budget`]). Another version of a kind read is read as the latest, with a
//!   warning. Every other kind is skipped with a warning (code `unknown-kind`) that suggests
//!   the closest kind read when one is close (`ClusterQeue` → `ClusterQueue`).
//! - **Unknown fields** are ignored with a warning naming the field path in Kubernetes'
//!   notation (`spec.resourceGroups[0].flavors[0].resources[0].nominalQuta`) and, where one is
//!   close, the field meant (`did you mean "nominalQuota"?`); the candidates are the fields the
//!   type at that path reads, taken from its `Deserialize` implementation ([`crate::schema`]).
//!   Fields kept verbatim (`metadata.annotations`, `managedFields`, a Configuration's
//!   `integrations`, …) are never unknown.
//! - **Duplicate keys** in one mapping are errors, in YAML and in JSON alike (the API server's
//!   strict decoding refuses them; JSON's "last one wins" would silently drop a value).
//! - **`null`** is an absent field (`spec: null` is no spec), as the API server reads it.
//! - **Scalars** are typed as in the JSON the API server decodes: an integer field takes a
//!   number, not a quoted string (`count: "3"` is an error); a boolean field takes `true` or
//!   `false`; a string field takes a string, so an unquoted `123`, `true` or `n` (YAML 1.1's
//!   `y`/`n`/`yes`/`no`/`on`/`off` are booleans, as in Kubernetes' YAML reader) in a name is
//!   an error: quote it.
//! - **Quantities** (`"500m"`, `8`, `0.5`, `36Gi`, `1e3`) follow apimachinery's
//!   `ParseQuantity` (kubernetes/apimachinery: pkg/api/resource/quantity.go): no whitespace
//!   (`" 8"` is refused, as the Kueue CRDs' quantity pattern refuses it; the core types' JSON
//!   decoder still trims, which gpuquota deliberately does not copy), an exponent within ±1000,
//!   at most 38 significant digits, values below nano rounded up to `1n`. A number written
//!   without quotes reaches the importer as a binary float: `0.1` is read exactly (through its
//!   shortest decimal form), but a float too small for binary (`1e-400`) reads as 0, so quote
//!   extreme values.
//! - **`metadata.generateName`** without `name` is valid (the API server names the object): the
//!   object is named `generateName` + `n`, `n` counting from 1 per kind, namespace and prefix
//!   in the order the documents are added (`train-1`, `train-2`, …). Unlike every other name,
//!   this one depends on document order; give `name` when names must be stable across runs.
//! - **Limits**: YAML nesting deeper than 64 levels, more than 50,000 aliases or anchors,
//!   more than 10,000 merge keys or an alias-to-anchor ratio that looks like an alias bomb are
//!   errors (code `limit-exceeded`) that say which limit was hit; JSON nesting is limited to
//!   128 levels. The document, node and event budgets grow with the input, which the byte
//!   limit bounds.
//!
//! # How a source is read
//!
//! A source is first deserialized straight into the typed objects in one pass, with no
//! generic tree in between (the `fast` path: `apiVersion` and `kind` come first in almost
//! every manifest). When that pass meets anything unusual (an error, a document whose
//! `apiVersion`/`kind` come after other fields, a duplicate key), the whole source is read
//! again on the exact path, document by document through a `serde_json::Value` tree, which
//! reports every problem with its field path. Both paths give the same result on every input
//! ([`Importer::exact`] exists to test that; the import fuzz target checks it).
//!
//! On the fast path, YAML is read from parser events by the importer's own serde
//! deserializer: the plainest block YAML (one-line keys and values, as kubectl writes it) is
//! scanned line by line without copying a scalar; any other text is deserialized by
//! serde-saphyr (the exact path's parser) straight into the typed objects. The deserializer
//! takes only what it is sure of: anchors, aliases, tags, merge keys,
//! nesting deeper than 32 levels, more documents, nodes or events than half the exact path's
//! budgets, duplicate keys and plain scalars whose type is not certain (`yes`, `1e3`, `0x1F`,
//! `017`, …) all send the source to the exact path, so an alias bomb is never expanded on
//! the fast path and the exact path's limits and messages decide. JSON is read by
//! serde_json, after a linear scan of the text for duplicate keys.
//!
//! `null` members are absent fields on both paths: the exact path strips them from its tree,
//! the JSON fast path takes them out of the text before decoding, the line scanner skips
//! them, and a source that serde-saphyr would read on the fast path goes to the exact path
//! when a mapping may hold one (a plain `null`, `~` or empty value, a tagged value or an
//! alias, as in the flow mapping `{quota: 1, limit}`), so an unknown field without a value is
//! never warned about and no `null` is kept in a verbatim value.
//!
//! The fast path hands each document to the model as soon as it is read; when it gives up
//! half-way, what it added is taken out again before the exact path starts.
//!
//! # Complexity
//! Linear in the input on the fast path (twice that when the exact path runs), plus
//! `O(log n)` per object inserted.

use std::collections::BTreeMap;
use std::fmt;

#[cfg(feature = "yaml")]
use serde_json::Value;

use crate::diag::Diagnostic;
#[cfg(feature = "yaml")]
use crate::diag::{self, codes};
#[cfg(feature = "yaml")]
use crate::schema;

use crate::core::{Namespace, Node, Pod, PriorityClass, ResourceQuota};
use crate::kai::{PodGroup, Queue};
use crate::kueue::{
    ClusterQueue, Cohort, Configuration, LocalQueue, ResourceFlavor, Workload,
    WorkloadPriorityClass,
};
#[cfg(feature = "yaml")]
use crate::meta::ObjectMeta;

#[cfg(feature = "yaml")]
mod block;
#[cfg(feature = "yaml")]
mod fast;
#[cfg(feature = "yaml")]
mod parse;
#[cfg(feature = "yaml")]
mod yaml;

#[cfg(feature = "yaml")]
pub use parse::{serde_message, serde_message_with, yaml_error};

/// Every kind gpuquota reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// Kueue ResourceFlavor.
    ResourceFlavor,
    /// Kueue ClusterQueue.
    ClusterQueue,
    /// Kueue Cohort.
    Cohort,
    /// Kueue LocalQueue.
    LocalQueue,
    /// Kueue Workload.
    Workload,
    /// Kueue WorkloadPriorityClass.
    WorkloadPriorityClass,
    /// Kubernetes PriorityClass.
    PriorityClass,
    /// Kubernetes Namespace.
    Namespace,
    /// Kubernetes ResourceQuota.
    ResourceQuota,
    /// Kubernetes Pod.
    Pod,
    /// Kubernetes Node.
    Node,
    /// KAI Queue.
    Queue,
    /// KAI PodGroup.
    PodGroup,
    /// Kueue Configuration.
    Configuration,
    /// gpuquota GPU-hour Budget ([`crate::budget`]).
    Budget,
}

impl Kind {
    /// The Kubernetes kind name.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::ResourceFlavor => "ResourceFlavor",
            Kind::ClusterQueue => "ClusterQueue",
            Kind::Cohort => "Cohort",
            Kind::LocalQueue => "LocalQueue",
            Kind::Workload => "Workload",
            Kind::WorkloadPriorityClass => "WorkloadPriorityClass",
            Kind::PriorityClass => "PriorityClass",
            Kind::Namespace => "Namespace",
            Kind::ResourceQuota => "ResourceQuota",
            Kind::Pod => "Pod",
            Kind::Node => "Node",
            Kind::Queue => "Queue",
            Kind::PodGroup => "PodGroup",
            Kind::Configuration => "Configuration",
            Kind::Budget => "Budget",
        }
    }

    /// True for namespaced kinds (keyed `namespace/name`).
    pub fn is_namespaced(self) -> bool {
        matches!(
            self,
            Kind::LocalQueue | Kind::Workload | Kind::ResourceQuota | Kind::Pod | Kind::PodGroup
        )
    }

    /// The kind for an `apiVersion` group and `kind`, if gpuquota reads it.
    #[cfg_attr(not(feature = "yaml"), allow(dead_code))]
    fn from_group_kind(group: &str, kind: &str) -> Option<Kind> {
        Some(match (group, kind) {
            ("kueue.x-k8s.io", "ResourceFlavor") => Kind::ResourceFlavor,
            ("kueue.x-k8s.io", "ClusterQueue") => Kind::ClusterQueue,
            ("kueue.x-k8s.io", "Cohort") => Kind::Cohort,
            ("kueue.x-k8s.io", "LocalQueue") => Kind::LocalQueue,
            ("kueue.x-k8s.io", "Workload") => Kind::Workload,
            ("kueue.x-k8s.io", "WorkloadPriorityClass") => Kind::WorkloadPriorityClass,
            ("scheduling.k8s.io", "PriorityClass") => Kind::PriorityClass,
            ("", "Namespace") => Kind::Namespace,
            ("", "ResourceQuota") => Kind::ResourceQuota,
            ("", "Pod") => Kind::Pod,
            ("", "Node") => Kind::Node,
            ("scheduling.run.ai", "Queue") => Kind::Queue,
            ("scheduling.run.ai", "PodGroup") => Kind::PodGroup,
            ("config.kueue.x-k8s.io", "Configuration") => Kind::Configuration,
            ("gpuquota.dev", "Budget") => Kind::Budget,
            _ => return None,
        })
    }

    /// The API versions upstream serves for this kind.
    #[cfg_attr(not(feature = "yaml"), allow(dead_code))]
    fn known_versions(self) -> &'static [&'static str] {
        match self {
            Kind::ResourceFlavor
            | Kind::ClusterQueue
            | Kind::LocalQueue
            | Kind::Workload
            | Kind::WorkloadPriorityClass => &["v1beta1", "v1beta2"],
            Kind::Cohort => &["v1alpha1", "v1beta1", "v1beta2"],
            Kind::PriorityClass
            | Kind::Namespace
            | Kind::ResourceQuota
            | Kind::Pod
            | Kind::Node => &["v1"],
            Kind::Queue => &["v2"],
            Kind::PodGroup => &["v2alpha2"],
            Kind::Configuration => &["v1beta1", "v1beta2"],
            Kind::Budget => &["v1alpha1"],
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a document came from: file (or source) name and 1-based document index.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Origin {
    /// File name or other source label.
    pub source: String,
    /// 1-based index of the document in the source.
    pub document: usize,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (document {})", self.source, self.document)
    }
}

/// A problem that does not stop the import: a [`Diagnostic`] of severity warning whose
/// `source` is the [`Origin`] (`file (document n)`).
pub type ImportWarning = Diagnostic;

/// A document that could not be read (malformed YAML/JSON, a field of the wrong shape, a limit
/// hit): a [`Diagnostic`] of severity error.
pub type ImportError = Diagnostic;

/// Every import error, in source order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} import error(s); first: {}", .0.len(), .0.first().map(ToString::to_string).unwrap_or_default())]
pub struct ImportErrors(pub Vec<ImportError>);

/// An object that appeared more than once under the same kind and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Duplicate {
    /// Kind.
    pub kind: Kind,
    /// Name (`namespace/name` for namespaced kinds).
    pub name: String,
}

/// Every object of an import, keyed by name (`namespace/name` for namespaced kinds).
///
/// `BTreeMap`s keep the model independent of document order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Model {
    /// Kueue ResourceFlavors.
    pub resource_flavors: BTreeMap<String, ResourceFlavor>,
    /// Kueue ClusterQueues.
    pub cluster_queues: BTreeMap<String, ClusterQueue>,
    /// Kueue Cohorts (explicit objects; implicit cohorts are only names in ClusterQueues).
    pub cohorts: BTreeMap<String, Cohort>,
    /// Kueue LocalQueues.
    pub local_queues: BTreeMap<String, LocalQueue>,
    /// Kueue Workloads.
    pub workloads: BTreeMap<String, Workload>,
    /// Kueue WorkloadPriorityClasses.
    pub workload_priority_classes: BTreeMap<String, WorkloadPriorityClass>,
    /// Kubernetes PriorityClasses.
    pub priority_classes: BTreeMap<String, PriorityClass>,
    /// Kubernetes Namespaces.
    pub namespaces: BTreeMap<String, Namespace>,
    /// Kubernetes ResourceQuotas.
    pub resource_quotas: BTreeMap<String, ResourceQuota>,
    /// Kubernetes Pods.
    pub pods: BTreeMap<String, Pod>,
    /// Kubernetes Nodes.
    pub nodes: BTreeMap<String, Node>,
    /// KAI Queues.
    pub queues: BTreeMap<String, Queue>,
    /// KAI PodGroups.
    pub pod_groups: BTreeMap<String, PodGroup>,
    /// Kueue's Configuration, if one was given.
    pub configuration: Option<Configuration>,
    /// Objects seen more than once (reported by validation).
    pub duplicates: Vec<Duplicate>,
    /// Jobs, JobSets, Deployments, … keyed `Kind/namespace/name` (see [`crate::workloads`]).
    pub workload_objects: BTreeMap<String, crate::workloads::WorkloadObject>,
    /// Core ConfigMaps, keyed `namespace/name`.
    pub config_maps: BTreeMap<String, crate::workloads::ConfigMap>,
    /// gpuquota GPU-hour Budgets ([`crate::budget`]).
    pub budgets: BTreeMap<String, crate::budget::Budget>,
}

impl Model {
    /// Number of objects of every kind.
    pub fn len(&self) -> usize {
        self.resource_flavors.len()
            + self.cluster_queues.len()
            + self.cohorts.len()
            + self.local_queues.len()
            + self.workloads.len()
            + self.workload_priority_classes.len()
            + self.priority_classes.len()
            + self.namespaces.len()
            + self.resource_quotas.len()
            + self.pods.len()
            + self.nodes.len()
            + self.queues.len()
            + self.pod_groups.len()
            + usize::from(self.configuration.is_some())
            + self.workload_objects.len()
            + self.config_maps.len()
            + self.budgets.len()
    }

    /// True when no object was imported.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A finished import: the model and the warnings raised on the way.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Imported {
    /// The objects.
    pub model: Model,
    /// Skipped kinds, unknown fields, unexpected API versions, sorted by origin.
    pub warnings: Vec<ImportWarning>,
}

/// Collects documents from any number of sources into one [`Model`].
///
/// ```
/// use gpuquota_model::import::Importer;
///
/// let mut importer = Importer::new();
/// importer.add_str("flavors.yaml", "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: h200-nvl\n");
/// let imported = importer.finish().expect("valid manifests");
/// assert!(imported.model.resource_flavors.contains_key("h200-nvl"));
/// ```
#[cfg(feature = "yaml")]
#[derive(Debug, Default)]
pub struct Importer {
    model: Model,
    warnings: Vec<(Origin, ImportWarning)>,
    errors: Vec<(Origin, ImportError)>,
    /// Objects named from `metadata.generateName` so far, per (kind, namespace, prefix).
    generated: BTreeMap<(Kind, String, String), usize>,
    /// Never take the fast path.
    exact_only: bool,
}

/// The largest input accepted per source (bytes), a guard against resource exhaustion.
pub const MAX_SOURCE_BYTES: usize = 64 * 1024 * 1024;

/// Where a step of the import stands: the document and the prefix of field paths inside it
/// (`items[3].` inside a `List`).
#[cfg(feature = "yaml")]
struct At<'a> {
    origin: &'a Origin,
    prefix: &'a str,
}

#[cfg(feature = "yaml")]
impl Importer {
    /// An empty importer.
    pub fn new() -> Importer {
        Importer::default()
    }

    /// An importer that reads every source on the exact path only (document by document
    /// through a generic tree). The result is the same as [`Importer::new`]'s, only slower:
    /// this exists for differential tests of the fast path.
    pub fn exact() -> Importer {
        Importer {
            exact_only: true,
            ..Importer::default()
        }
    }

    /// Adds every document of `text` (YAML, multi-document, or JSON), labelled `source`.
    ///
    /// Problems are recorded and reported by [`Importer::finish`]; this never panics.
    ///
    /// Valid input is deserialized straight into the typed objects in one pass; when that pass
    /// meets any problem, the source is read again document by document through a generic
    /// tree so that every problem of every document is reported with its field path.
    ///
    /// # Complexity
    /// Linear in the size of `text` plus `O(log n)` per object inserted.
    pub fn add_str(&mut self, source: &str, text: &str) {
        let origin0 = Origin {
            source: source.to_owned(),
            document: 0,
        };
        if text.len() > MAX_SOURCE_BYTES {
            let d = Diagnostic::error(
                codes::INPUT_TOO_LARGE,
                format!(
                    "input is larger than the import limit of {MAX_SOURCE_BYTES} bytes (64 MiB); \
                     split it into several files"
                ),
            )
            .source(source);
            self.errors.push((origin0, d));
            return;
        }
        if !self.exact_only && self.add_fast_source(source, text) {
            return;
        }
        let documents = match parse::documents(text) {
            Ok(d) => d,
            Err((code, message)) => {
                let origin = Origin {
                    source: source.to_owned(),
                    document: 1,
                };
                let d = Diagnostic::error(code, message).source(source);
                self.errors.push((origin, d));
                return;
            }
        };
        for (i, doc) in documents.into_iter().enumerate() {
            let origin = Origin {
                source: source.to_owned(),
                document: i + 1,
            };
            self.add_document(&origin, doc, "");
        }
    }

    /// Reads `text` on the fast path; false (with nothing of it kept) when the exact path
    /// must read it.
    ///
    /// Into an importer that holds no object yet (the first source, as a rule), each object
    /// goes into the model as soon as it is read, and giving up means starting from an
    /// empty model again; otherwise the documents are collected first and added once the
    /// whole source has been read.
    fn add_fast_source(&mut self, source: &str, text: &str) -> bool {
        if self.model.is_empty() && self.model.duplicates.is_empty() {
            let mut sink = Direct {
                warnings: self.warnings.len(),
                errors: self.errors.len(),
                generated: self.generated.clone(),
                origin: Origin {
                    source: source.to_owned(),
                    document: 0,
                },
                importer: self,
            };
            if fast::parse(text, &mut sink) {
                return true;
            }
            fast::Sink::reset(&mut sink);
            return false;
        }
        let mut docs = Vec::new();
        if !fast::parse(text, &mut docs) {
            return false;
        }
        let mut origin = Origin {
            source: source.to_owned(),
            document: 0,
        };
        for doc in docs {
            origin.document += 1;
            self.add_fast(&origin, doc, "");
        }
        true
    }

    /// One document read by the fast path.
    fn add_fast(&mut self, origin: &Origin, doc: fast::Doc, prefix: &str) {
        match doc {
            fast::Doc::Null => {}
            fast::Doc::Raw(value) => self.add_document(origin, value, prefix),
            fast::Doc::List { items, in_items } => {
                for (i, item) in items.into_iter().enumerate() {
                    let p = if in_items {
                        format!("{prefix}items[{i}].")
                    } else {
                        format!("{prefix}[{i}].")
                    };
                    self.add_fast(origin, item, &p);
                }
            }
            fast::Doc::Typed(typed) => {
                let fast::Typed {
                    api_version,
                    object,
                    ignored,
                } = *typed;
                let at = At { origin, prefix };
                let kind = object.kind();
                let (_, version) = split_api_version(&api_version);
                // The name is only spelled out for a warning (most objects have none).
                if !kind.known_versions().contains(&version) {
                    self.check_version(&at, kind, version, &api_version, object.display_name());
                }
                if !ignored.is_empty() {
                    let name = object.display_name();
                    self.warn_ignored(&at, kind, name.as_deref(), ignored);
                }
                self.store(&at, object, api_version);
            }
        }
    }

    fn add_document(&mut self, origin: &Origin, doc: Value, path_prefix: &str) {
        let Value::Object(mut obj) = doc else {
            if let Value::Array(items) = doc {
                for (i, item) in items.into_iter().enumerate() {
                    self.add_document(origin, item, &format!("{path_prefix}[{i}]."));
                }
            } else if !doc.is_null() {
                self.warn(
                    origin,
                    Diagnostic::warning(codes::NOT_AN_OBJECT, "document is not an object; skipped"),
                );
            }
            return;
        };
        let api_version = obj
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let kind_name = obj
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if kind_name == "List" || kind_name.ends_with("List") && obj.contains_key("items") {
            if let Some(Value::Array(items)) = obj.remove("items") {
                for (i, item) in items.into_iter().enumerate() {
                    self.add_document(origin, item, &format!("{path_prefix}items[{i}]."));
                }
            }
            return;
        }
        let (group, version) = split_api_version(&api_version);
        let display_name = object_name(&obj);
        // Workload objects (Jobs, JobSets, …) and ConfigMaps: kept for `crate::workloads`,
        // which converts them in `finish`.
        if let Some(wkind) = crate::workloads::ObjectKind::from_group_kind(group, &kind_name) {
            self.add_workload_object(origin, wkind, &api_version, obj, path_prefix);
            return;
        }
        if group.is_empty() && kind_name == "ConfigMap" {
            self.add_config_map(origin, obj, path_prefix);
            return;
        }
        let Some(kind) = Kind::from_group_kind(group, &kind_name) else {
            let d = unknown_kind(&kind_name, &api_version);
            let d = match display_name {
                Some(name) => d.object(kind_name, name),
                None => d.object(kind_name, ""),
            };
            self.warn(origin, d);
            return;
        };
        let at = At {
            origin,
            prefix: path_prefix,
        };
        self.check_version(&at, kind, version, &api_version, display_name.clone());
        obj.remove("apiVersion");
        obj.remove("kind");
        let mut value = Value::Object(obj);
        strip_nulls(&mut value);
        if let Some(object) = self.decode(&at, kind, value, display_name) {
            self.store(&at, object, api_version);
        }
    }

    /// Keeps a workload object (Job, JobSet, …) for [`crate::workloads::convert`].
    fn add_workload_object(
        &mut self,
        origin: &Origin,
        kind: crate::workloads::ObjectKind,
        api_version: &str,
        mut obj: serde_json::Map<String, Value>,
        prefix: &str,
    ) {
        obj.remove("apiVersion");
        obj.remove("kind");
        let name = object_name(&obj);
        match crate::workloads::WorkloadObject::from_document(kind, api_version, origin, obj) {
            Ok(o) => {
                let mut fresh = false;
                self.model
                    .workload_objects
                    .entry(o.key())
                    .or_insert_with(|| {
                        fresh = true;
                        o
                    });
                if !fresh {
                    let d = Diagnostic::warning(
                        codes::DUPLICATE_OBJECT,
                        "given twice; the first copy is kept",
                    )
                    .object(kind.as_str(), name.unwrap_or_default());
                    self.warn(origin, d);
                }
            }
            Err(message) => {
                let d = Diagnostic::error(codes::INVALID_TYPE, message)
                    .object(kind.as_str(), name.unwrap_or_default())
                    .field(format!("{prefix}metadata"))
                    .source(origin.to_string());
                self.errors.push((origin.clone(), d));
            }
        }
    }

    /// Keeps a ConfigMap and imports the configurations embedded in it (Kueue's manager
    /// configuration).
    fn add_config_map(
        &mut self,
        origin: &Origin,
        mut obj: serde_json::Map<String, Value>,
        prefix: &str,
    ) {
        obj.remove("apiVersion");
        obj.remove("kind");
        let name = object_name(&obj);
        let Ok(cm) =
            serde_path_to_error::deserialize::<_, crate::workloads::ConfigMap>(Value::Object(obj))
                .map_err(|e| {
                    let d = Diagnostic::error(codes::INVALID_TYPE, e.inner().to_string())
                        .object("ConfigMap", name.clone().unwrap_or_default())
                        .field(format!("{prefix}{}", e.path()))
                        .source(origin.to_string());
                    self.errors.push((origin.clone(), d));
                })
        else {
            return;
        };
        for (path, text) in cm.embedded_documents() {
            match parse::documents(text) {
                Ok(docs) => {
                    for doc in docs {
                        self.add_document(origin, doc, &format!("{prefix}{path}."));
                    }
                }
                Err((code, message)) => {
                    let d = Diagnostic::error(code, message)
                        .object("ConfigMap", name.clone().unwrap_or_default())
                        .field(format!("{prefix}{path}"))
                        .source(origin.to_string());
                    self.errors.push((origin.clone(), d));
                }
            }
        }
        self.model.config_maps.entry(cm.key()).or_insert(cm);
    }

    fn check_version(
        &mut self,
        at: &At<'_>,
        kind: Kind,
        version: &str,
        api_version: &str,
        name: Option<String>,
    ) {
        if !kind.known_versions().contains(&version) {
            let d = Diagnostic::warning(
                codes::UNKNOWN_API_VERSION,
                format!(
                    "apiVersion {api_version:?} is not one upstream serves for {kind}; read as the latest version"
                ),
            )
            .object(kind.as_str(), name.unwrap_or_default())
            .field(format!("{}apiVersion", at.prefix));
            self.warn(at.origin, d);
        }
    }

    /// Deserializes one object of `kind` from its tree (slow path), recording unknown fields
    /// as warnings and a shape error as an error with its path.
    fn decode(
        &mut self,
        at: &At<'_>,
        kind: Kind,
        value: Value,
        name: Option<String>,
    ) -> Option<Object> {
        let mut ignored = Vec::new();
        let result = Object::decode(kind, value, &mut ignored);
        self.warn_ignored(at, kind, name.as_deref(), ignored);
        match result {
            Ok(v) => Some(v),
            Err(e) => {
                let path = e.path().to_string();
                let path = if path == "." { String::new() } else { path };
                let message = parse::serde_message(&e.into_inner().to_string());
                let d = Diagnostic::error(codes::INVALID_TYPE, message)
                    .source(at.origin.to_string())
                    .object(kind.as_str(), name.unwrap_or_default())
                    .field(format!("{}{path}", at.prefix));
                self.errors.push((at.origin.clone(), d));
                None
            }
        }
    }

    fn warn_ignored(
        &mut self,
        at: &At<'_>,
        kind: Kind,
        name: Option<&str>,
        ignored: Vec<(String, Vec<schema::Step>)>,
    ) {
        for (path, steps) in ignored {
            let field = steps.last().and_then(|s| match s {
                schema::Step::Field(f) => Some(f.as_str()),
                schema::Step::Index => None,
            });
            let candidates = steps
                .split_last()
                .and_then(|(_, parent)| Object::field_names(kind, parent));
            let hint = match (field, candidates) {
                (Some(f), Some(c)) => diag::did_you_mean(f, c),
                _ => None,
            };
            let message = match hint {
                Some(h) => format!("unknown field; ignored; did you mean {h:?}?"),
                None => "unknown field; ignored".to_owned(),
            };
            let d = Diagnostic::warning(codes::UNKNOWN_FIELD, message)
                .object(kind.as_str(), name.unwrap_or_default())
                .field(format!("{}{path}", at.prefix));
            self.warn(at.origin, d);
        }
    }

    /// Names an object from `metadata.generateName` when it has no name, then inserts it.
    fn store(&mut self, at: &At<'_>, mut object: Object, api_version: String) {
        let kind = object.kind();
        if let Some(meta) = object.metadata_mut()
            && meta.name.is_empty()
            && let Some(prefix) = meta
                .other
                .get("generateName")
                .and_then(|v| v.as_str())
                .filter(|p| !p.is_empty())
                .map(str::to_owned)
        {
            let ns = meta.namespace.clone().unwrap_or_default();
            let n = self
                .generated
                .entry((kind, ns, prefix.clone()))
                .or_insert(0);
            *n += 1;
            meta.name = format!("{prefix}{n}");
            let _ = at;
        }
        object.insert(&mut self.model, api_version);
    }

    fn warn(&mut self, origin: &Origin, d: Diagnostic) {
        let d = d.source(origin.to_string());
        self.warnings.push((origin.clone(), d));
    }

    /// Finishes the import.
    ///
    /// # Errors
    /// [`ImportErrors`] with every malformed document of every source.
    pub fn finish(mut self) -> Result<Imported, ImportErrors> {
        fn sorted(mut v: Vec<(Origin, Diagnostic)>) -> Vec<Diagnostic> {
            v.sort_by(|(oa, a), (ob, b)| {
                (oa, &a.kind, &a.name, &a.field, &a.message, a.code)
                    .cmp(&(ob, &b.kind, &b.name, &b.field, &b.message, b.code))
            });
            v.dedup_by(|(_, a), (_, b)| a == b);
            v.into_iter().map(|(_, d)| d).collect()
        }
        if !self.errors.is_empty() {
            return Err(ImportErrors(sorted(self.errors)));
        }
        // Jobs, JobSets, … become Kueue Workloads and KAI PodGroups (crate::workloads).
        for (origin, d) in crate::workloads::convert(&mut self.model).0 {
            let origin = origin.unwrap_or_else(|| Origin {
                source: "converted objects".into(),
                document: 0,
            });
            self.warn(&origin, d);
        }
        self.model.duplicates.sort();
        Ok(Imported {
            model: self.model,
            warnings: sorted(self.warnings),
        })
    }
}

/// The fast path's sink into an importer that held no object when the source began.
#[cfg(feature = "yaml")]
struct Direct<'a> {
    importer: &'a mut Importer,
    origin: Origin,
    /// The importer's warnings, errors and generated names before the source.
    warnings: usize,
    errors: usize,
    generated: BTreeMap<(Kind, String, String), usize>,
}

#[cfg(feature = "yaml")]
impl fast::Sink for Direct<'_> {
    fn doc(&mut self, doc: fast::Doc) {
        self.origin.document += 1;
        self.importer.add_fast(&self.origin, doc, "");
    }

    fn reset(&mut self) {
        let i = &mut *self.importer;
        i.model = Model::default();
        i.warnings.truncate(self.warnings);
        i.errors.truncate(self.errors);
        i.generated.clone_from(&self.generated);
        self.origin.document = 0;
    }
}

/// Imports one source.
///
/// # Errors
/// [`ImportErrors`] listing every malformed document.
#[cfg(feature = "yaml")]
pub fn import_str(source: &str, text: &str) -> Result<Imported, ImportErrors> {
    let mut importer = Importer::new();
    importer.add_str(source, text);
    importer.finish()
}

/// The warning for a kind gpuquota does not read, with a "did you mean" against the kinds it
/// reads.
#[cfg(feature = "yaml")]
fn unknown_kind(kind_name: &str, api_version: &str) -> Diagnostic {
    if kind_name.is_empty() {
        return Diagnostic::warning(codes::UNKNOWN_KIND, "document has no kind; skipped");
    }
    let mut message =
        format!("kind {kind_name} of apiVersion {api_version:?} is not read by gpuquota; skipped");
    let names: Vec<&str> = Kind::ALL.iter().map(|k| k.as_str()).collect();
    if let Some(hint) = diag::did_you_mean(kind_name, &names).filter(|h| *h != kind_name) {
        message.push_str(&format!("; did you mean {hint}?"));
    }
    Diagnostic::warning(codes::UNKNOWN_KIND, message)
}

#[cfg(feature = "yaml")]
fn split_api_version(api_version: &str) -> (&str, &str) {
    match api_version.rsplit_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    }
}

/// The object's name for messages (`namespace/name`), `None` without one.
///
/// A name that is not a string (`name: 123`, or `name: n`, a YAML 1.1 boolean) is an error
/// of its own, but the object still goes by the scalar's JSON text (`123`, `false`), which is
/// what the API server receives from Kubernetes' YAML-to-JSON conversion
/// (kubernetes-sigs/yaml: yaml.go), so a second error in the object still names it.
#[cfg(feature = "yaml")]
fn object_name(obj: &serde_json::Map<String, Value>) -> Option<String> {
    fn text(v: &Value) -> Option<String> {
        match v {
            Value::String(s) => Some(s.clone()),
            Value::Bool(b) => Some(b.to_string()),
            // Go prints a float without a trailing `.0` (`1e3` is `1000`), as Rust's `{}` does.
            Value::Number(n) => Some(match n.as_f64() {
                Some(f) if n.is_f64() => format!("{f}"),
                _ => n.to_string(),
            }),
            _ => None,
        }
    }
    let meta = obj.get("metadata")?.as_object()?;
    let name = meta.get("name").and_then(text).or_else(|| {
        meta.get("generateName")
            .and_then(Value::as_str)
            .map(str::to_owned)
    })?;
    Some(match meta.get("namespace").and_then(Value::as_str) {
        Some(ns) => format!("{ns}/{name}"),
        None => name,
    })
}

/// Removes every `null` member of every object: the API server treats an explicit `null` as
/// an absent field (`spec: null` is no spec).
#[cfg(feature = "yaml")]
fn strip_nulls(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            for v in map.values_mut() {
                strip_nulls(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_nulls),
        _ => {}
    }
}

#[cfg(feature = "yaml")]
fn canonical<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// Converts serde_ignored's path into Kubernetes' notation (`spec.groups[0].name`) and steps.
#[cfg(feature = "yaml")]
fn ignored_path(path: &serde_ignored::Path<'_>) -> (String, Vec<schema::Step>) {
    fn walk(path: &serde_ignored::Path<'_>, steps: &mut Vec<schema::Step>) {
        match path {
            serde_ignored::Path::Root => {}
            serde_ignored::Path::Seq { parent, .. } => {
                walk(parent, steps);
                steps.push(schema::Step::Index);
            }
            serde_ignored::Path::Map { parent, key } => {
                walk(parent, steps);
                steps.push(schema::Step::Field(key.clone()));
            }
            serde_ignored::Path::Some { parent }
            | serde_ignored::Path::NewtypeStruct { parent }
            | serde_ignored::Path::NewtypeVariant { parent } => walk(parent, steps),
        }
    }
    fn text(path: &serde_ignored::Path<'_>, out: &mut String) {
        match path {
            serde_ignored::Path::Root => {}
            serde_ignored::Path::Seq { parent, index } => {
                text(parent, out);
                out.push_str(&format!("[{index}]"));
            }
            serde_ignored::Path::Map { parent, key } => {
                text(parent, out);
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            serde_ignored::Path::Some { parent }
            | serde_ignored::Path::NewtypeStruct { parent }
            | serde_ignored::Path::NewtypeVariant { parent } => text(parent, out),
        }
    }
    let mut steps = Vec::new();
    walk(path, &mut steps);
    let mut s = String::new();
    text(path, &mut s);
    (s, steps)
}

#[cfg(feature = "yaml")]
macro_rules! objects {
    ($($kind:ident => $ty:ty, $field:ident;)+) => {
        /// One typed object of any kind gpuquota reads.
        #[derive(Debug)]
        pub(crate) enum Object {
            $($kind(Box<$ty>),)+
            Configuration(Box<Configuration>),
        }

        impl Object {
            pub(crate) fn kind(&self) -> Kind {
                match self {
                    $(Object::$kind(_) => Kind::$kind,)+
                    Object::Configuration(_) => Kind::Configuration,
                }
            }

            fn metadata_mut(&mut self) -> Option<&mut ObjectMeta> {
                match self {
                    $(Object::$kind(o) => Some(&mut o.metadata),)+
                    Object::Configuration(_) => None,
                }
            }

            /// `name` or `namespace/name` as reported in diagnostics.
            pub(crate) fn display_name(&self) -> Option<String> {
                let meta = match self {
                    $(Object::$kind(o) => &o.metadata,)+
                    Object::Configuration(o) => &o.metadata,
                };
                let name = if meta.name.is_empty() {
                    meta.other.get("generateName").and_then(|v| v.as_str())?
                } else {
                    meta.name.as_str()
                };
                Some(match &meta.namespace {
                    Some(ns) => format!("{ns}/{name}"),
                    None => name.to_owned(),
                })
            }

            /// Deserializes `kind` from any deserializer, collecting ignored fields.
            pub(crate) fn deserialize_kind<'de, D: serde::Deserializer<'de>>(
                kind: Kind,
                de: D,
                ignored: &mut Vec<(String, Vec<schema::Step>)>,
            ) -> Result<Object, D::Error> {
                let mut record = |p: serde_ignored::Path<'_>| ignored.push(ignored_path(&p));
                let de = serde_ignored::Deserializer::new(de, &mut record);
                #[cfg(feature = "serde")]
                use serde::Deserialize;
                let mut object = match kind {
                    $(Kind::$kind => Object::$kind(Box::new(<$ty>::deserialize(de)?)),)+
                    Kind::Configuration => {
                        Object::Configuration(Box::new(Configuration::deserialize(de)?))
                    }
                };
                object.shrink();
                Ok(object)
            }

            fn decode(
                kind: Kind,
                value: Value,
                ignored: &mut Vec<(String, Vec<schema::Step>)>,
            ) -> Result<Object, serde_path_to_error::Error<serde_json::Error>> {
                let mut track = serde_path_to_error::Track::new();
                let de = serde_path_to_error::Deserializer::new(value, &mut track);
                Object::deserialize_kind(kind, de, ignored)
                    .map_err(|e| serde_path_to_error::Error::new(track.path(), e))
            }

            fn field_names(kind: Kind, path: &[schema::Step]) -> Option<&'static [&'static str]> {
                match kind {
                    $(Kind::$kind => schema::field_names::<$ty>(path),)+
                    Kind::Configuration => schema::field_names::<Configuration>(path),
                }
            }

            fn insert(self, model: &mut Model, api_version: String) {
                match self {
                    $(Object::$kind(o) => insert_keyed(model, Kind::$kind, *o, |m| &mut m.$field, |o| &o.metadata),)+
                    Object::Configuration(mut config) => {
                        config.api_version = api_version;
                        let config = *config;
                        let kind = Kind::Configuration;
                        match &model.configuration {
                            Some(existing) if canonical(existing) <= canonical(&config) => {
                                model.duplicates.push(Duplicate { kind, name: String::new() });
                            }
                            Some(_) => {
                                model.duplicates.push(Duplicate { kind, name: String::new() });
                                model.configuration = Some(config);
                            }
                            None => model.configuration = Some(config),
                        }
                    }
                }
            }
        }

        impl Kind {
            /// Every kind gpuquota reads.
            pub const ALL: &'static [Kind] = &[$(Kind::$kind,)+ Kind::Configuration];
        }
    };
}

#[cfg(feature = "yaml")]
objects! {
    ResourceFlavor => ResourceFlavor, resource_flavors;
    ClusterQueue => ClusterQueue, cluster_queues;
    Cohort => Cohort, cohorts;
    LocalQueue => LocalQueue, local_queues;
    Workload => Workload, workloads;
    WorkloadPriorityClass => WorkloadPriorityClass, workload_priority_classes;
    PriorityClass => PriorityClass, priority_classes;
    Namespace => Namespace, namespaces;
    ResourceQuota => ResourceQuota, resource_quotas;
    Pod => Pod, pods;
    Node => Node, nodes;
    Queue => Queue, queues;
    PodGroup => PodGroup, pod_groups;
    Budget => crate::budget::Budget, budgets;
}

#[cfg(feature = "yaml")]
impl Object {
    /// Gives back the spare capacity of the vectors a deserializer grows (a `Vec` read from
    /// a sequence of one element keeps room for four): a Workload's pod sets alone are about
    /// 700 bytes each, so a snapshot of 55,000 Workloads held 150 MB of unused slots.
    ///
    /// # Complexity
    /// Linear in the object's pod sets and containers.
    fn shrink(&mut self) {
        fn pod_spec(spec: &mut crate::core::PodSpec) {
            spec.containers.shrink_to_fit();
            spec.init_containers.shrink_to_fit();
        }
        match self {
            Object::Workload(w) => {
                w.spec.pod_sets.shrink_to_fit();
                for p in &mut w.spec.pod_sets {
                    pod_spec(&mut p.template.spec);
                }
            }
            Object::Pod(p) => pod_spec(&mut p.spec),
            _ => {}
        }
    }
}

#[cfg(feature = "yaml")]
fn insert_keyed<T, F, M>(model: &mut Model, kind: Kind, object: T, map: F, meta: M)
where
    T: serde::Serialize,
    F: Fn(&mut Model) -> &mut BTreeMap<String, T>,
    M: Fn(&T) -> &ObjectMeta,
{
    let m = meta(&object);
    let key = if kind.is_namespaced() {
        format!("{}/{}", m.namespace.as_deref().unwrap_or("default"), m.name)
    } else {
        m.name.clone()
    };
    let target = map(model);
    let replace = match target.get(&key) {
        None => true,
        Some(existing) => {
            let keep_new = canonical(&object) < canonical(existing);
            model.duplicates.push(Duplicate {
                kind,
                name: key.clone(),
            });
            keep_new
        }
    };
    if replace {
        map(model).insert(key, object);
    }
}

#[cfg(all(test, feature = "yaml"))]
mod tests {
    use super::*;

    const CQ: &str = r#"
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: data-science
spec:
  cohort: platform
  resourceGroups:
  - coveredResources: ["nvidia.com/gpu"]
    flavors:
    - name: h200-nvl
      resources:
      - name: nvidia.com/gpu
        nominalQuota: 8
  preemption:
    reclaimWithinCohort: Any
  surprise: 1
---
apiVersion: v1
kind: Secret
metadata:
  name: unrelated
"#;

    #[test]
    fn imports_v1beta1_aliases_and_warns() {
        let imported = import_str("cq.yaml", CQ).unwrap();
        let cq = &imported.model.cluster_queues["data-science"];
        assert_eq!(cq.spec.cohort_name.as_deref(), Some("platform"));
        let quota = &cq.spec.resource_groups[0].flavors[0].resources[0];
        assert_eq!(quota.nominal_quota.unwrap().value(), Some(8));
        let messages: Vec<String> = imported.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(messages.len(), 2, "{messages:?}");
        assert!(
            messages
                .iter()
                .any(|m| m.contains("spec.surprise") && m.contains("unknown field"))
        );
        assert!(
            messages
                .iter()
                .any(|m| m.contains("Secret") && m.contains("skipped"))
        );
    }

    #[test]
    fn wrong_shapes_are_errors_with_paths() {
        let text = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w, namespace: ns}\nspec:\n  podSets:\n  - name: main\n    count: many\n";
        let err = import_str("w.yaml", text).unwrap_err();
        assert_eq!(err.0.len(), 1);
        assert_eq!(err.0[0].field, "spec.podSets[0].count");
        assert_eq!(err.0[0].name, "ns/w");
        assert_eq!(err.0[0].kind, "Workload");
    }

    #[test]
    fn json_and_lists() {
        let text = r#"{"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a", "labels": {"dept": "a"}}}]}"#;
        let imported = import_str("ns.json", text).unwrap();
        assert_eq!(
            imported.model.namespaces["team-a"].metadata.labels["dept"],
            "a"
        );
    }

    #[test]
    fn thousands_of_documents_import() {
        let mut text = String::new();
        for i in 0..3000 {
            text.push_str(&format!(
                "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {{name: f-{i}}}\n"
            ));
        }
        let imported = import_str("many.yaml", &text).unwrap();
        assert_eq!(imported.model.resource_flavors.len(), 3000);
    }

    #[test]
    fn malformed_yaml_is_an_error() {
        assert!(import_str("bad.yaml", "a: [1, 2\nb: }").is_err());
    }
}
