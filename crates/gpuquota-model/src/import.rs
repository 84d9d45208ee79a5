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
//!   PodGroup (`v2alpha2`); `gpuquota.dev` Budget (`v1alpha1`, [`crate::budget`]); the
//!   workload objects of [`crate::workloads`] (Jobs, JobSets, …, LimitRanges, ConfigMaps and
//!   `resource.k8s.io` DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice,
//!   kept verbatim for the conversions). Another version of a kind read is read as the latest, with a
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
//! - **Several problems in one object**: an object is decoded until its first problem, in
//!   document order when serde_json's `preserve_order` feature is on (the `gpuquota` CLI turns
//!   it on), in key order otherwise; that order decides only which problem is reported, never a
//!   value read.
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
//! ([`Importer::exact`] exists to test that).
//!
//! The readers, each a module of its own: `fast` (which reader takes a source, JSON cut into
//! values), `yaml` (parser events into the typed objects, or serde-saphyr straight into
//! them), `block` (the line scanner of plain block YAML), `stream` (JSON files read in
//! pieces) and `parse` (the exact path's documents and its messages); `unknown` records the
//! fields each typed decoding skips, for the warnings, on every path. What proves that they
//! agree:
//!
//! - the crate's `differential` tests read every YAML and JSON file of the repository's test
//!   corpus (the crates' `tests/` and `data/` trees, the CLI's samples and golden inputs, the
//!   benchmarks' data) and documents generated in block YAML, flow YAML and JSON (unknown
//!   fields, duplicate keys, `apiVersion`/`kind` after other members, `null`s, scalars whose
//!   type YAML decides such as `yes`, `017`, `1e3`, `~`) on both paths, and require the same
//!   [`Model`] and the same diagnostics (codes, messages, objects, field paths, order), or
//!   the same errors;
//! - the import fuzz target checks the same on arbitrary bytes.
//!
//! # After reading
//!
//! Reading only keeps the workload objects (Jobs, JobSets, …) and ConfigMaps in the
//! [`Model`]; [`Importer::finish`] (and [`import_str`]) then runs the conversion step,
//! [`crate::workloads::convert`], which adds the Workloads, PodGroups and Pods they stand for.
//! Validation ([`crate::validate()`]) reads the finished [`Model`].
//!
//! On the fast path, YAML is read from parser events by the importer's own serde
//! deserializer: the plainest block YAML (one-line keys and values, as kubectl writes it) is
//! scanned line by line without copying a scalar; any other text is deserialized by
//! serde-saphyr (the exact path's parser) straight into the typed objects. The deserializer
//! takes only what it is sure of: anchors, aliases, tags, merge keys,
//! nesting deeper than 32 levels, more documents, nodes or events than half the exact path's
//! budgets, duplicate keys and plain scalars whose type is not certain (`yes`, `1e3`, `0x1F`,
//! `017`, …) all send the source to the exact path, so an alias bomb is never expanded on
//! the fast path and the exact path's limits and messages decide. JSON is cut into its
//! top-level values (only whitespace may stand between them), and each value is scanned for
//! duplicate keys and decoded by serde_json on its own. [`Importer::add_file`] reads a JSON
//! file the same way as a stream, 64 KiB at a time, so that the file's text is never held
//! whole while the model grows (only the value being read is); anything unusual there (text
//! that is not UTF-8, a value the fast path gives up on, a file over the byte limit) sends the
//! whole file to [`Importer::add_str`], which decides as for any text.
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

use crate::diag::Diagnostic;

#[cfg(feature = "yaml")]
mod block;
#[cfg(feature = "yaml")]
mod fast;
#[cfg(feature = "yaml")]
mod importer;
#[cfg(feature = "yaml")]
mod object;
#[cfg(feature = "yaml")]
mod parse;
#[cfg(feature = "yaml")]
mod stream;
#[cfg(feature = "yaml")]
mod unknown;
#[cfg(feature = "yaml")]
mod yaml;

pub use crate::model::{Duplicate, Imported, Kind, Model, Origin};
#[cfg(feature = "yaml")]
pub use importer::{Importer, SourceRead, SourceReader};
#[cfg(feature = "yaml")]
pub use parse::{serde_message, serde_message_with, yaml_error};

#[cfg(feature = "yaml")]
use object::Object;

/// Every document of plain YAML (block style as `kubectl get -o yaml` writes it, flow
/// collections, JSON) deserialized as `T` straight from the parser's events, with no generic
/// tree in between; `null` members are kept (as `null`s), empty and null documents skipped.
///
/// `None` when the fast reader gives up (anchors, aliases, tags, merge keys, plain scalars
/// whose type YAML decides such as `yes` or `017`, a duplicate key, a scalar document, more
/// documents, nodes or events than half of budgets that grow with the input, any syntax
/// error) or when `T` refuses a document: read the text with serde-saphyr then, which
/// decides and words every problem. Whatever is read here, serde-saphyr reads the same way.
///
/// # Complexity
/// Linear in the text (twice when the block scanner gives up and saphyr-parser reads it).
#[cfg(feature = "yaml")]
pub fn plain_yaml_documents<'a, T: serde::Deserialize<'a>>(text: &'a str) -> Option<Vec<T>> {
    yaml::plain_documents(text)
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

/// The largest input accepted per source (bytes), a guard against resource exhaustion.
pub const MAX_SOURCE_BYTES: usize = 64 * 1024 * 1024;

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

#[cfg(feature = "yaml")]
impl Importer {
    /// Finishes the import: the sources as read, then the conversion step
    /// ([`crate::workloads::convert`]: Jobs, JobSets, … into Kueue Workloads and KAI
    /// PodGroups and Pods, added to the model). The warnings of both steps are sorted by the
    /// document they are about (the conversion's own, about no one document, under
    /// `converted objects`).
    ///
    /// # Errors
    /// [`ImportErrors`] with every malformed document of every source; nothing is converted
    /// then.
    pub fn finish(self) -> Result<Imported, ImportErrors> {
        let mut read = self.finish_reading()?;
        for (origin, d) in crate::workloads::convert(&mut read.model).0 {
            let origin = origin.unwrap_or_else(|| Origin {
                source: "converted objects".into(),
                document: 0,
            });
            read.warn(origin, d);
        }
        Ok(read.finish())
    }
}

#[cfg(feature = "yaml")]
fn split_api_version(api_version: &str) -> (&str, &str) {
    match api_version.rsplit_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
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
