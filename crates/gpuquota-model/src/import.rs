//! Import of Kubernetes manifests: multi-document YAML or JSON, Kueue `v1beta1`/`v1beta2`,
//! KAI, and core objects, into a [`Model`].
//!
//! Unknown kinds are skipped with a warning; unknown fields produce a warning naming the field
//! path (nothing is dropped silently); a document whose fields have the wrong shape is an error
//! naming kind, name and field path. Every problem of every file is collected, none aborts the
//! import early. The resulting model does not depend on the order of documents or files:
//! objects are keyed by name, and when the same object appears twice the copy with the smaller
//! canonical JSON is kept and the duplicate is recorded for validation.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::core::{Namespace, Node, Pod, PriorityClass, ResourceQuota};
use crate::kai::{PodGroup, Queue};
use crate::kueue::{
    ClusterQueue, Cohort, Configuration, LocalQueue, ResourceFlavor, Workload,
    WorkloadPriorityClass,
};
use crate::meta::ObjectMeta;

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
            _ => return None,
        })
    }

    /// The API versions upstream serves for this kind.
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

/// A problem that does not stop the import.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ImportWarning {
    /// Where.
    pub origin: Origin,
    /// The object's kind, if known.
    pub kind: Option<String>,
    /// The object's name (`namespace/name` for namespaced kinds), if known.
    pub name: Option<String>,
    /// The field path, if the warning is about a field.
    pub path: Option<String>,
    /// What happened.
    pub message: String,
}

impl fmt::Display for ImportWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.origin)?;
        if let Some(kind) = &self.kind {
            write!(f, "{kind}")?;
            if let Some(name) = &self.name {
                write!(f, " {name:?}")?;
            }
            f.write_str(": ")?;
        }
        if let Some(path) = &self.path {
            write!(f, "{path}: ")?;
        }
        f.write_str(&self.message)
    }
}

/// A document that could not be read: malformed YAML/JSON or a field of the wrong shape.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, thiserror::Error)]
#[error("{}", ImportWarning { origin: origin.clone(), kind: kind.clone(), name: name.clone(), path: path.clone(), message: message.clone() })]
pub struct ImportError {
    /// Where.
    pub origin: Origin,
    /// The object's kind, if known.
    pub kind: Option<String>,
    /// The object's name, if known.
    pub name: Option<String>,
    /// The field path, if the error is about a field.
    pub path: Option<String>,
    /// What is wrong.
    pub message: String,
}

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
#[derive(Debug, Default)]
pub struct Importer {
    model: Model,
    warnings: Vec<ImportWarning>,
    errors: Vec<ImportError>,
}

/// The largest input accepted per source (bytes), a guard against resource exhaustion.
pub const MAX_SOURCE_BYTES: usize = 64 * 1024 * 1024;

impl Importer {
    /// An empty importer.
    pub fn new() -> Importer {
        Importer::default()
    }

    /// Adds every document of `text` (YAML, multi-document, or JSON), labelled `source`.
    ///
    /// Problems are recorded and reported by [`Importer::finish`]; this never panics.
    ///
    /// # Complexity
    /// Linear in the size of `text` plus `O(log n)` per object inserted.
    pub fn add_str(&mut self, source: &str, text: &str) {
        let origin0 = Origin {
            source: source.to_owned(),
            document: 0,
        };
        if text.len() > MAX_SOURCE_BYTES {
            self.errors.push(ImportError {
                origin: origin0,
                kind: None,
                name: None,
                path: None,
                message: format!("input is larger than {MAX_SOURCE_BYTES} bytes"),
            });
            return;
        }
        let documents = match parse_documents(text) {
            Ok(d) => d,
            Err(message) => {
                self.errors.push(ImportError {
                    origin: Origin {
                        source: source.to_owned(),
                        document: 1,
                    },
                    kind: None,
                    name: None,
                    path: None,
                    message,
                });
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

    fn add_document(&mut self, origin: &Origin, doc: Value, path_prefix: &str) {
        let Value::Object(mut obj) = doc else {
            if let Value::Array(items) = doc {
                for (i, item) in items.into_iter().enumerate() {
                    self.add_document(origin, item, &format!("{path_prefix}[{i}]."));
                }
            } else if !doc.is_null() {
                self.warn(
                    origin,
                    None,
                    None,
                    None,
                    "document is not an object; skipped".into(),
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
        let (group, version) = match api_version.rsplit_once('/') {
            Some((g, v)) => (g.to_owned(), v.to_owned()),
            None => (String::new(), api_version.clone()),
        };
        let display_name = object_name(&obj);
        // Workload objects (Jobs, JobSets, …) and ConfigMaps: kept for `crate::workloads`,
        // which converts them in `finish`.
        if let Some(wkind) = crate::workloads::ObjectKind::from_group_kind(&group, &kind_name) {
            self.add_workload_object(origin, wkind, &api_version, obj, path_prefix);
            return;
        }
        if group.is_empty() && kind_name == "ConfigMap" {
            self.add_config_map(origin, obj, path_prefix);
            return;
        }
        let Some(kind) = Kind::from_group_kind(&group, &kind_name) else {
            let what = if kind_name.is_empty() {
                "document has no kind; skipped".to_owned()
            } else {
                format!(
                    "kind {kind_name} of apiVersion {api_version:?} is not read by gpuquota; skipped"
                )
            };
            self.warn(origin, Some(kind_name), display_name, None, what);
            return;
        };
        if !kind.known_versions().contains(&version.as_str()) {
            self.warn(
                origin,
                Some(kind.to_string()),
                display_name.clone(),
                Some(format!("{path_prefix}apiVersion")),
                format!("apiVersion {api_version:?} is not one upstream serves for {kind}; read as the latest version"),
            );
        }
        obj.remove("apiVersion");
        obj.remove("kind");
        let value = Value::Object(obj);
        match kind {
            Kind::ResourceFlavor => self.insert(
                origin,
                kind,
                value,
                path_prefix,
                |m| &mut m.resource_flavors,
                |o: &ResourceFlavor| &o.metadata,
            ),
            Kind::ClusterQueue => self.insert(
                origin,
                kind,
                value,
                path_prefix,
                |m| &mut m.cluster_queues,
                |o: &ClusterQueue| &o.metadata,
            ),
            Kind::Cohort => self.insert(
                origin,
                kind,
                value,
                path_prefix,
                |m| &mut m.cohorts,
                |o: &Cohort| &o.metadata,
            ),
            Kind::LocalQueue => self.insert(
                origin,
                kind,
                value,
                path_prefix,
                |m| &mut m.local_queues,
                |o: &LocalQueue| &o.metadata,
            ),
            Kind::Workload => self.insert(
                origin,
                kind,
                value,
                path_prefix,
                |m| &mut m.workloads,
                |o: &Workload| &o.metadata,
            ),
            Kind::WorkloadPriorityClass => self.insert(
                origin,
                kind,
                value,
                path_prefix,
                |m| &mut m.workload_priority_classes,
                |o: &WorkloadPriorityClass| &o.metadata,
            ),
            Kind::PriorityClass => self.insert(
                origin,
                kind,
                value,
                path_prefix,
                |m| &mut m.priority_classes,
                |o: &PriorityClass| &o.metadata,
            ),
            Kind::Namespace => self.insert(
                origin,
                kind,
                value,
                path_prefix,
                |m| &mut m.namespaces,
                |o: &Namespace| &o.metadata,
            ),
            Kind::ResourceQuota => self.insert(
                origin,
                kind,
                value,
                path_prefix,
                |m| &mut m.resource_quotas,
                |o: &ResourceQuota| &o.metadata,
            ),
            Kind::Pod => self.insert(
                origin,
                kind,
                value,
                path_prefix,
                |m| &mut m.pods,
                |o: &Pod| &o.metadata,
            ),
            Kind::Node => self.insert(
                origin,
                kind,
                value,
                path_prefix,
                |m| &mut m.nodes,
                |o: &Node| &o.metadata,
            ),
            Kind::Queue => self.insert(
                origin,
                kind,
                value,
                path_prefix,
                |m| &mut m.queues,
                |o: &Queue| &o.metadata,
            ),
            Kind::PodGroup => self.insert(
                origin,
                kind,
                value,
                path_prefix,
                |m| &mut m.pod_groups,
                |o: &PodGroup| &o.metadata,
            ),
            Kind::Configuration => {
                if let Some(mut config) =
                    self.decode::<Configuration>(origin, kind, value, path_prefix)
                {
                    config.api_version = api_version;
                    match &self.model.configuration {
                        Some(existing) if canonical(existing) <= canonical(&config) => {
                            self.model.duplicates.push(Duplicate {
                                kind,
                                name: String::new(),
                            });
                        }
                        Some(_) => {
                            self.model.duplicates.push(Duplicate {
                                kind,
                                name: String::new(),
                            });
                            self.model.configuration = Some(config);
                        }
                        None => self.model.configuration = Some(config),
                    }
                }
            }
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
                    self.warn(
                        origin,
                        Some(kind.as_str().into()),
                        name,
                        None,
                        "given twice; the first copy is kept".into(),
                    );
                }
            }
            Err(message) => self.errors.push(ImportError {
                origin: origin.clone(),
                kind: Some(kind.as_str().into()),
                name,
                path: Some(format!("{prefix}metadata")),
                message,
            }),
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
                    self.errors.push(ImportError {
                        origin: origin.clone(),
                        kind: Some("ConfigMap".into()),
                        name: name.clone(),
                        path: Some(format!("{prefix}{}", e.path())),
                        message: e.into_inner().to_string(),
                    })
                })
        else {
            return;
        };
        for (path, text) in cm.embedded_documents() {
            match parse_documents(text) {
                Ok(docs) => {
                    for doc in docs {
                        self.add_document(origin, doc, &format!("{prefix}{path}."));
                    }
                }
                Err(message) => self.errors.push(ImportError {
                    origin: origin.clone(),
                    kind: Some("ConfigMap".into()),
                    name: name.clone(),
                    path: Some(format!("{prefix}{path}")),
                    message,
                }),
            }
        }
        self.model.config_maps.entry(cm.key()).or_insert(cm);
    }

    fn insert<T, F, M>(
        &mut self,
        origin: &Origin,
        kind: Kind,
        value: Value,
        prefix: &str,
        map: F,
        meta: M,
    ) where
        T: DeserializeOwned + serde::Serialize,
        F: Fn(&mut Model) -> &mut BTreeMap<String, T>,
        M: Fn(&T) -> &ObjectMeta,
    {
        let Some(object) = self.decode::<T>(origin, kind, value, prefix) else {
            return;
        };
        let m = meta(&object);
        let key = if kind.is_namespaced() {
            format!("{}/{}", m.namespace.as_deref().unwrap_or("default"), m.name)
        } else {
            m.name.clone()
        };
        let target = map(&mut self.model);
        let replace = match target.get(&key) {
            None => true,
            Some(existing) => {
                let keep_new = canonical(&object) < canonical(existing);
                self.model.duplicates.push(Duplicate {
                    kind,
                    name: key.clone(),
                });
                keep_new
            }
        };
        if replace {
            map(&mut self.model).insert(key, object);
        }
    }

    fn decode<T: DeserializeOwned>(
        &mut self,
        origin: &Origin,
        kind: Kind,
        value: Value,
        prefix: &str,
    ) -> Option<T> {
        let name = match &value {
            Value::Object(obj) => object_name(obj),
            _ => None,
        };
        let mut ignored = Vec::new();
        let result: Result<T, _> = serde_path_to_error::deserialize(
            serde_ignored::Deserializer::new(value, &mut |path: serde_ignored::Path<'_>| {
                ignored.push(path.to_string())
            }),
        );
        for path in ignored {
            self.warn(
                origin,
                Some(kind.to_string()),
                name.clone(),
                Some(format!("{prefix}{path}")),
                "unknown field; ignored".to_owned(),
            );
        }
        match result {
            Ok(v) => Some(v),
            Err(e) => {
                let path = e.path().to_string();
                self.errors.push(ImportError {
                    origin: origin.clone(),
                    kind: Some(kind.to_string()),
                    name,
                    path: Some(format!("{prefix}{path}")),
                    message: e.into_inner().to_string(),
                });
                None
            }
        }
    }

    fn warn(
        &mut self,
        origin: &Origin,
        kind: Option<String>,
        name: Option<String>,
        path: Option<String>,
        message: String,
    ) {
        self.warnings.push(ImportWarning {
            origin: origin.clone(),
            kind: kind.filter(|k| !k.is_empty()),
            name,
            path,
            message,
        });
    }

    /// Finishes the import.
    ///
    /// # Errors
    /// [`ImportErrors`] with every malformed document of every source.
    pub fn finish(mut self) -> Result<Imported, ImportErrors> {
        if !self.errors.is_empty() {
            self.errors.sort();
            return Err(ImportErrors(self.errors));
        }
        // Jobs, JobSets, … become Kueue Workloads and KAI PodGroups (crate::workloads).
        for (origin, d) in crate::workloads::convert(&mut self.model).0 {
            let origin = origin.unwrap_or_else(|| Origin {
                source: "converted objects".into(),
                document: 0,
            });
            let opt = |s: String| Some(s).filter(|s| !s.is_empty());
            self.warnings.push(ImportWarning {
                origin,
                kind: opt(d.kind),
                name: opt(d.name),
                path: opt(d.field),
                message: d.message,
            });
        }
        self.warnings.sort();
        self.model.duplicates.sort();
        Ok(Imported {
            model: self.model,
            warnings: self.warnings,
        })
    }
}

/// Imports one source.
///
/// # Errors
/// [`ImportErrors`] listing every malformed document.
pub fn import_str(source: &str, text: &str) -> Result<Imported, ImportErrors> {
    let mut importer = Importer::new();
    importer.add_str(source, text);
    importer.finish()
}

fn object_name(obj: &serde_json::Map<String, Value>) -> Option<String> {
    let meta = obj.get("metadata")?.as_object()?;
    let name = meta.get("name")?.as_str()?;
    Some(match meta.get("namespace").and_then(Value::as_str) {
        Some(ns) => format!("{ns}/{name}"),
        None => name.to_owned(),
    })
}

fn canonical<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

fn parse_documents(text: &str) -> Result<Vec<Value>, String> {
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        // JSON: one value, or a stream of values.
        let mut out = Vec::new();
        let stream = serde_json::Deserializer::from_str(trimmed).into_iter::<Value>();
        let mut json_ok = true;
        for item in stream {
            match item {
                Ok(v) => out.push(v),
                Err(_) => {
                    json_ok = false;
                    break;
                }
            }
        }
        if json_ok {
            return Ok(out);
        }
    }
    // The parser's default budget (1,024 documents, 250,000 nodes) guards against document
    // and node storms; a real cluster export can legitimately exceed it, so the limits grow
    // with the input, which `MAX_SOURCE_BYTES` bounds. Alias and depth limits stay as they are.
    let n = text.len();
    let options = serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_documents: n.max(1_024),
            max_nodes: n.max(250_000),
            max_events: n.saturating_mul(2).max(1_000_000),
        },
    };
    serde_saphyr::from_multiple_with_options::<Value>(text, options).map_err(|e| {
        // Keep the message to its first lines: the parser may add a long source snippet.
        let msg = e.to_string();
        let short: Vec<&str> = msg.lines().take(3).collect();
        format!("malformed YAML: {}", short.join(" "))
    })
}

#[cfg(test)]
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
        assert_eq!(err.0[0].path.as_deref(), Some("spec.podSets[0].count"));
        assert_eq!(err.0[0].name.as_deref(), Some("ns/w"));
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
