//! The [`Importer`]: sources in, one [`Model`] out, every problem collected on the way.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{
    ImportError, ImportErrors, ImportWarning, MAX_SOURCE_BYTES, Object, fast, parse,
    split_api_version, stream,
};
use crate::diag::{self, Diagnostic, codes};
use crate::model::{ConfigMap, Imported, Kind, Model, ObjectKind, Origin, WorkloadObject};
use crate::schema;
use crate::source;

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
    warnings: Vec<(Origin, ImportWarning)>,
    errors: Vec<(Origin, ImportError)>,
    /// Objects named from `metadata.generateName` so far, per (kind, namespace, prefix).
    generated: BTreeMap<(Kind, String, String), usize>,
    /// Never take the fast path.
    exact_only: bool,
    /// Which reader took each source, in the order they were added.
    reads: Vec<SourceRead>,
}

/// Which of the importer's readers took a source ([`Importer::reads`]); its `Display` is
/// the reason in words, as `--verbose` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceReader {
    /// A JSON file read as a stream, each top-level value decoded straight into its object.
    JsonStream,
    /// JSON text, each top-level value decoded straight into its object.
    Json,
    /// The importer's own YAML scanner: block style and flow collections on one line,
    /// without anchors, tags, block scalars, escapes or comments after content.
    YamlScanner,
    /// YAML the scanner does not read, decoded by serde-saphyr straight into the objects;
    /// `line`: where the scanner gave up (1-based; 0 when not known).
    YamlTyped {
        /// The line the scanner gave up at.
        line: usize,
    },
    /// The exact path: document by document through a generic tree, which reports every
    /// problem with its field path. `requested`: the importer was built with
    /// [`Importer::exact`]; otherwise the fast readers gave up on the source.
    Exact {
        /// [`Importer::exact`] was used.
        requested: bool,
    },
}

impl std::fmt::Display for SourceReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SourceReader::JsonStream => {
                f.write_str("JSON stream reader (a JSON file, decoded value by value)")
            }
            SourceReader::Json => f.write_str("JSON reader (JSON text)"),
            SourceReader::YamlScanner => f.write_str(
                "YAML scanner (block style and one-line flow collections, no anchors, tags, block scalars, escapes or trailing comments)",
            ),
            SourceReader::YamlTyped { line } => write!(
                f,
                "serde-saphyr typed reader (the YAML scanner gave up near line {line}: anchors, tags, block scalars, escapes, a comment after content, a flow collection over several lines, a duplicate key or a scalar of uncertain type)"
            ),
            SourceReader::Exact { requested: true } => {
                f.write_str("exact reader (document by document; requested)")
            }
            SourceReader::Exact { requested: false } => f.write_str(
                "exact reader (document by document, every problem with its field path: the fast readers gave up on a problem, a `null` member or YAML they do not read)",
            ),
        }
    }
}

/// One source and the reader that took it ([`Importer::reads`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceRead {
    /// The source's label.
    pub source: String,
    /// The reader.
    pub reader: SourceReader,
}

impl std::fmt::Display for SourceRead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: read by the {}", self.source, self.reader)
    }
}

/// Where a step of the import stands: the document and the prefix of field paths inside it
/// (`items[3].` inside a `List`).
struct At<'a> {
    origin: &'a Origin,
    prefix: &'a str,
}

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
        if !self.exact_only
            && let Some(reader) = self.add_fast_source(source, text)
        {
            self.read_by(source, reader);
            return;
        }
        self.read_by(
            source,
            SourceReader::Exact {
                requested: self.exact_only,
            },
        );
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

    /// Adds every document of the file at `path` (standard input for `-`), labelled with
    /// [`crate::source::display_name`]: the same as reading it with
    /// [`crate::source::read_text`] and giving the text to [`Importer::add_str`], with a
    /// file that cannot be read recorded as an import error.
    ///
    /// A JSON file (a stream of objects, one per line as a rule) is read as a stream and is
    /// never held whole in memory: each top-level value is checked and decoded as soon as it
    /// has been read, while the model grows. When that reading meets anything that needs the
    /// exact path, the file is read again whole, as [`Importer::add_str`] reads its text.
    ///
    /// ```
    /// use gpuquota_model::import::Importer;
    ///
    /// let path = std::env::temp_dir().join(format!("gpuquota-doc-{}.json", std::process::id()));
    /// std::fs::write(&path, r#"{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "h200-nvl"}}"#)?;
    /// let mut importer = Importer::new();
    /// importer.add_file(&path);
    /// let imported = importer.finish().expect("valid manifests");
    /// assert!(imported.model.resource_flavors.contains_key("h200-nvl"));
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    ///
    /// # Complexity
    /// Linear in the size of the file plus `O(log n)` per object inserted; memory beyond the
    /// model is the largest top-level value of a JSON file (the whole text otherwise).
    pub fn add_file(&mut self, path: &std::path::Path) {
        let name = source::display_name(path);
        if !self.exact_only
            && path.as_os_str() != "-"
            && let Some(json) = stream::JsonFile::open(path)
            && self
                .add_fast_with(&name, |sink| {
                    json.read(sink).then_some(SourceReader::JsonStream)
                })
                .is_some()
        {
            self.read_by(&name, SourceReader::JsonStream);
            return;
        }
        match source::read_text(path) {
            Ok(text) => self.add_str(&name, &text),
            Err(d) => {
                let origin = Origin {
                    source: name,
                    document: 0,
                };
                self.errors.push((origin, d));
            }
        }
    }

    /// Reads `text` on the fast path; false (with nothing of it kept) when the exact path
    /// must read it.
    ///
    /// Into an importer that holds no object yet (the first source, as a rule), each object
    /// goes into the model as soon as it is read, and giving up means starting from an
    /// empty model again; otherwise the documents are collected first and added once the
    /// whole source has been read.
    fn add_fast_source(&mut self, source: &str, text: &str) -> Option<SourceReader> {
        self.add_fast_with(source, |sink| fast::parse(text, sink))
    }

    /// Which reader took each source added so far, in the order they were added (a file
    /// that could not be read, or a source over the size limit, has none).
    pub fn reads(&self) -> &[SourceRead] {
        &self.reads
    }

    fn read_by(&mut self, source: &str, reader: SourceReader) {
        self.reads.push(SourceRead {
            source: source.to_owned(),
            reader,
        });
    }

    /// [`Importer::add_fast_source`] with the reader given: `read` delivers the documents
    /// of one source to the sink and says which reader read all of them (`None`: not all).
    fn add_fast_with(
        &mut self,
        source: &str,
        read: impl FnOnce(&mut dyn fast::Sink) -> Option<SourceReader>,
    ) -> Option<SourceReader> {
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
            let reader = read(&mut sink);
            if reader.is_none() {
                fast::Sink::reset(&mut sink);
            }
            return reader;
        }
        let mut docs = Vec::new();
        let reader = read(&mut docs)?;
        let mut origin = Origin {
            source: source.to_owned(),
            document: 0,
        };
        for doc in docs {
            origin.document += 1;
            self.add_fast(&origin, doc, "");
        }
        Some(reader)
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
            if let Some(Value::Array(items)) = take_member(&mut obj, "items") {
                for (i, item) in items.into_iter().enumerate() {
                    self.add_document(origin, item, &format!("{path_prefix}items[{i}]."));
                }
            }
            return;
        }
        let (group, version) = split_api_version(&api_version);
        let display_name = object_name(&obj);
        // `null` members are absent, in the objects kept verbatim too (the fast readers never
        // hand one over).
        obj.retain(|_, v| !v.is_null());
        obj.values_mut().for_each(strip_nulls);
        // Workload objects (Jobs, JobSets, …) and ConfigMaps: kept in the model for the
        // conversion step that runs after reading (`Importer::finish`).
        if let Some(wkind) = ObjectKind::from_group_kind(group, &kind_name) {
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
        drop_type_members(&mut obj);
        let value = Value::Object(obj);
        if let Some(object) = self.decode(&at, kind, value, display_name) {
            self.store(&at, object, api_version);
        }
    }

    /// Keeps a workload object (Job, JobSet, …) for the conversion step.
    fn add_workload_object(
        &mut self,
        origin: &Origin,
        kind: ObjectKind,
        api_version: &str,
        mut obj: serde_json::Map<String, Value>,
        prefix: &str,
    ) {
        drop_type_members(&mut obj);
        let name = object_name(&obj);
        match WorkloadObject::from_document(kind, api_version, origin, obj) {
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
        drop_type_members(&mut obj);
        let name = object_name(&obj);
        let Ok(cm) =
            serde_path_to_error::deserialize::<_, ConfigMap>(Value::Object(obj)).map_err(|e| {
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

    /// Finishes reading: the model as read (workload objects not yet converted) with the
    /// warnings and their origins, or every error. [`Importer::finish`] runs the conversion
    /// on it.
    ///
    /// # Errors
    /// [`ImportErrors`] with every malformed document of every source.
    pub(super) fn finish_reading(mut self) -> Result<Read, ImportErrors> {
        if !self.errors.is_empty() {
            return Err(ImportErrors(sorted(self.errors)));
        }
        self.model.duplicates.sort();
        Ok(Read {
            model: self.model,
            warnings: self.warnings,
        })
    }
}

/// What the readers made of every source: the model (workload objects kept, not converted)
/// and the warnings with the document each is about.
pub(super) struct Read {
    /// The objects read.
    pub(super) model: Model,
    /// The warnings, in the order they were raised.
    pub(super) warnings: Vec<(Origin, ImportWarning)>,
}

impl Read {
    /// Records a warning about `origin`'s document, naming it as the diagnostic's source.
    pub(super) fn warn(&mut self, origin: Origin, d: Diagnostic) {
        let d = d.source(origin.to_string());
        self.warnings.push((origin, d));
    }

    /// The finished import: the warnings sorted by document, then object, field, message and
    /// code, without repeats.
    pub(super) fn finish(self) -> Imported {
        Imported {
            model: self.model,
            warnings: sorted(self.warnings),
        }
    }
}

/// Diagnostics sorted by document, then object, field, message and code, without repeats.
fn sorted(mut v: Vec<(Origin, Diagnostic)>) -> Vec<Diagnostic> {
    v.sort_by(|(oa, a), (ob, b)| {
        (oa, &a.kind, &a.name, &a.field, &a.message, a.code)
            .cmp(&(ob, &b.kind, &b.name, &b.field, &b.message, b.code))
    });
    v.dedup_by(|(_, a), (_, b)| a == b);
    v.into_iter().map(|(_, d)| d).collect()
}

/// The fast path's sink into an importer that held no object when the source began.
struct Direct<'a> {
    importer: &'a mut Importer,
    origin: Origin,
    /// The importer's warnings, errors and generated names before the source.
    warnings: usize,
    errors: usize,
    generated: BTreeMap<(Kind, String, String), usize>,
}

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

/// The warning for a kind gpuquota does not read, with a "did you mean" against the kinds it
/// reads.
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

/// The object's name for messages (`namespace/name`), `None` without one.
///
/// A name that is not a string (`name: 123`, or `name: n`, a YAML 1.1 boolean) is an error
/// of its own, but the object still goes by the scalar's JSON text (`123`, `false`), which is
/// what the API server receives from Kubernetes' YAML-to-JSON conversion
/// (kubernetes-sigs/yaml: yaml.go), so a second error in the object still names it.
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

/// Takes `key`'s value out of `obj` and keeps the other members in their order.
///
/// serde_json's own `remove` moves the last member into the gap when its `preserve_order`
/// feature is on, which would change which of an object's problems is met first; `retain`
/// keeps the order of either map.
///
/// # Complexity
/// Linear in the members of `obj`.
fn take_member(obj: &mut serde_json::Map<String, Value>, key: &str) -> Option<Value> {
    let value = obj.get_mut(key).map(Value::take)?;
    obj.retain(|k, _| k != key);
    Some(value)
}

/// Removes `apiVersion` and `kind` from `obj`, keeping the other members in their order (see
/// [`take_member`]).
fn drop_type_members(obj: &mut serde_json::Map<String, Value>) {
    obj.retain(|k, _| k != "apiVersion" && k != "kind");
}

/// Removes every `null` member of every object: the API server treats an explicit `null` as
/// an absent field (`spec: null` is no spec).
pub(super) fn strip_nulls(value: &mut Value) {
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
