//! The fast readers and the exact reader give the same result: the same [`Model`] and the
//! same warnings, or the same errors (codes, messages, objects, field paths, in the same
//! order), on every manifest of the repository's test corpus and on generated documents
//! rendered in block YAML, flow YAML and JSON, with unknown fields, duplicate keys,
//! misplaced `apiVersion`/`kind` and scalars whose type YAML decides (`yes`, `1e3`, `0x1F`,
//! `017`, `~`, …).
//!
//! [`Model`]: gpuquota_model::Model

use std::path::{Path, PathBuf};

use gpuquota_model::import::{ImportErrors, SourceReader};
use gpuquota_model::{Imported, Importer};
use proptest::prelude::*;

/// Reads `text` on the fast path (with the reader that took it) and on the exact path.
fn both(
    source: &str,
    text: &str,
) -> (
    Result<Imported, ImportErrors>,
    SourceReader,
    Result<Imported, ImportErrors>,
) {
    let mut fast = Importer::new();
    fast.add_str(source, text);
    let reader = fast
        .reads()
        .first()
        .map(|r| r.reader.clone())
        .unwrap_or(SourceReader::Exact { requested: false });
    let mut exact = Importer::exact();
    exact.add_str(source, text);
    (fast.finish(), reader, exact.finish())
}

/// The fast result equals the exact one, compared as values and as their `Debug` text (which
/// shows every field of the model and every part of every diagnostic, in order).
fn assert_agree(source: &str, text: &str) -> SourceReader {
    let (fast, reader, exact) = both(source, text);
    let (f, e) = (format!("{fast:#?}"), format!("{exact:#?}"));
    if f != e {
        let at = f
            .lines()
            .zip(e.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        let context = |s: &str| {
            s.lines()
                .skip(at.saturating_sub(8))
                .take(14)
                .collect::<Vec<_>>()
                .join("\n")
        };
        panic!(
            "{source} (fast path: {reader}) differs from the exact path, line {at}:\n\
             fast:\n{}\nexact:\n{}\ninput:\n{text}",
            context(&f),
            context(&e)
        );
    }
    assert_eq!(fast, exact, "{source}");
    reader
}

/// Every YAML and JSON file of the repository's test corpus: the crates' `tests/` trees,
/// their `data/` folders (the simulator's seed platform and scenarios), the CLI's samples and
/// golden inputs, and the benchmarks' data files under 1 MiB.
fn corpus() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("yaml" | "yml" | "json")
            ) && std::fs::metadata(&path).is_ok_and(|m| m.len() < 1 << 20)
            {
                out.push(path);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    let Ok(crates) = std::fs::read_dir(root.join("crates")) else {
        return files;
    };
    for krate in crates.flatten() {
        for sub in ["tests", "data", "samples"] {
            walk(&krate.path().join(sub), &mut files);
        }
    }
    walk(&root.join("benches/data"), &mut files);
    files.sort();
    files
}

/// Every file of the corpus reads the same on both paths. A file counts as a manifest when
/// the reader keeps at least one object of it or refuses it (errors); the others (scenario
/// files, golden outputs, profile tables: every document of a kind gpuquota does not read)
/// are compared all the same. The counts guard against a corpus that went missing and a
/// fast path that no longer takes the manifests.
#[test]
fn corpus_reads_the_same_on_both_paths() {
    let files = corpus();
    let (mut manifests, mut fast_taken) = (0, 0);
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let name = path.display().to_string();
        let reader = assert_agree(&name, &text);
        let (result, _, _) = both(&name, &text);
        let manifest = match &result {
            Ok(imported) => !imported.model.is_empty(),
            Err(_) => true,
        };
        if manifest {
            manifests += 1;
            if !matches!(reader, SourceReader::Exact { .. }) {
                fast_taken += 1;
            }
        }
    }
    assert!(files.len() >= 60, "corpus of {} files", files.len());
    assert!(
        manifests >= 30,
        "{manifests} manifests in {} files",
        files.len()
    );
    assert!(
        fast_taken * 4 >= manifests * 3,
        "fast path took {fast_taken} of {manifests}"
    );
}

/// A scalar of the generated documents, as JSON types it.
#[derive(Debug, Clone)]
enum Scalar {
    /// A string; `plain` writes it unquoted in YAML when YAML allows (then YAML, not the
    /// string, decides its type: `yes` is a boolean, `017` an integer, `1e3` a float or a
    /// string depending on the YAML version).
    Str {
        text: &'static str,
        plain: bool,
    },
    Int(i64),
    Float(f64),
    Bool(bool),
    Null,
}

#[derive(Debug, Clone)]
enum Node {
    Scalar(Scalar),
    Seq(Vec<Node>),
    Map(Vec<(&'static str, Node)>),
}

/// Strings that are plain YAML scalars in block and flow context; many have a type of their
/// own in YAML (booleans of YAML 1.1, octal, hexadecimal, floats, null, timestamps).
const PLAIN: &[&str] = &[
    "a",
    "main",
    "ns",
    "team-a",
    "h200",
    "nvidia.com/gpu",
    "cpu",
    "memory",
    "lq",
    "yes",
    "no",
    "on",
    "off",
    "y",
    "n",
    "Y",
    "True",
    "FALSE",
    "null",
    "Null",
    "~",
    "1e3",
    "1E3",
    "0x1F",
    "017",
    "0o17",
    "08",
    ".5",
    "-.5",
    "+1",
    "1.0",
    "-0",
    ".inf",
    "-.Inf",
    ".nan",
    "500m",
    "36Gi",
    "8",
    "2.5",
    "1_000",
    "2026-01-01",
    "2026-01-01T00:00:00Z",
    "Any",
    "Never",
    "LowerPriority",
    "Hold",
    "kueue.x-k8s.io/v1beta2",
    "v1",
];

/// Strings that must be quoted in YAML (or are written quoted anyway).
const QUOTED: &[&str] = &[
    "",
    " 8",
    "8 ",
    "a: b",
    "#x",
    "-",
    "[1]",
    "{a}",
    "*m",
    "&a",
    "!t",
    "|",
    ">",
    "%",
    "@",
    "'",
    "\"",
    "\\",
    "a\tb",
    "line\nbreak",
    "é",
    "日本",
    "\u{1F600}",
    ",",
    "null",
    "yes",
    "8",
    "1e3",
    "500m",
];

/// Field names: ones the kinds read (at various depths) and ones nobody reads.
const KEYS: &[&str] = &[
    "name",
    "namespace",
    "labels",
    "annotations",
    "cohort",
    "resourceGroups",
    "coveredResources",
    "flavors",
    "resources",
    "nominalQuota",
    "borrowingLimit",
    "lendingLimit",
    "preemption",
    "reclaimWithinCohort",
    "withinClusterQueue",
    "stopPolicy",
    "queueingStrategy",
    "namespaceSelector",
    "queueName",
    "podSets",
    "count",
    "minCount",
    "template",
    "spec",
    "containers",
    "requests",
    "limits",
    "priority",
    "priorityClassName",
    "nodeLabels",
    "allocatable",
    "capacity",
    "quota",
    "limit",
    "overQuotaWeight",
    "gpu",
    "parentQueue",
    "value",
    "data",
    "parallelism",
    "completions",
    "suspend",
    "surprise",
    "nominalQuta",
    "x",
    "apiVersion",
    "kind",
    "metadata",
    "status",
    "items",
];

/// Kinds: Kueue, KAI and core kinds read, a workload object, a ConfigMap, a List, a kind
/// not read and an unknown version.
const TYPES: &[(&str, &str)] = &[
    ("kueue.x-k8s.io/v1beta2", "ClusterQueue"),
    ("kueue.x-k8s.io/v1beta1", "ClusterQueue"),
    ("kueue.x-k8s.io/v1beta2", "ResourceFlavor"),
    ("kueue.x-k8s.io/v1beta2", "LocalQueue"),
    ("kueue.x-k8s.io/v1beta2", "Workload"),
    ("kueue.x-k8s.io/v1beta2", "Cohort"),
    ("kueue.x-k8s.io/v1beta2", "WorkloadPriorityClass"),
    ("config.kueue.x-k8s.io/v1beta2", "Configuration"),
    ("scheduling.run.ai/v2", "Queue"),
    ("scheduling.run.ai/v2alpha2", "PodGroup"),
    ("v1", "Node"),
    ("v1", "Pod"),
    ("v1", "Namespace"),
    ("v1", "ResourceQuota"),
    ("v1", "ConfigMap"),
    ("batch/v1", "Job"),
    ("v1", "List"),
    ("v1", "Secret"),
    ("kueue.x-k8s.io/v9", "ClusterQueue"),
    ("gpuquota.dev/v1alpha1", "Budget"),
];

fn scalar() -> impl Strategy<Value = Scalar> {
    prop_oneof![
        3 => proptest::sample::select(PLAIN).prop_map(|text| Scalar::Str { text, plain: true }),
        2 => proptest::sample::select(QUOTED).prop_map(|text| Scalar::Str { text, plain: false }),
        2 => prop_oneof![Just(0i64), Just(1), Just(-1), Just(8), Just(i64::MAX), any::<i64>()]
            .prop_map(Scalar::Int),
        1 => prop_oneof![Just(0.5f64), Just(2.5), Just(1e3), Just(1e-9), Just(-0.0), Just(1e300)]
            .prop_map(Scalar::Float),
        1 => any::<bool>().prop_map(Scalar::Bool),
        1 => Just(Scalar::Null),
    ]
}

fn node() -> impl Strategy<Value = Node> {
    scalar()
        .prop_map(Node::Scalar)
        .prop_recursive(4, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Node::Seq),
                proptest::collection::vec((proptest::sample::select(KEYS), inner), 0..4)
                    .prop_map(Node::Map),
            ]
        })
}

/// One document: `apiVersion` and `kind` (first, or after the other members), `metadata`
/// with a name, a namespace and maybe an unknown field, and a generated `spec` and extra
/// members.
fn document() -> impl Strategy<Value = Node> {
    (
        proptest::sample::select(TYPES),
        any::<bool>(),
        proptest::sample::select(PLAIN),
        proptest::option::of(proptest::sample::select(PLAIN)),
        proptest::option::of(node()),
        proptest::option::of(node()),
        proptest::collection::vec((proptest::sample::select(KEYS), node()), 0..2),
    )
        .prop_map(
            |((api, kind), type_last, name, namespace, meta_extra, spec, extra)| {
                let str_ = |text| Node::Scalar(Scalar::Str { text, plain: true });
                let mut meta = vec![(
                    "name",
                    Node::Scalar(Scalar::Str {
                        text: name,
                        plain: false,
                    }),
                )];
                if let Some(ns) = namespace {
                    meta.push((
                        "namespace",
                        Node::Scalar(Scalar::Str {
                            text: ns,
                            plain: false,
                        }),
                    ));
                }
                if let Some(m) = meta_extra {
                    meta.push(("surprise", m));
                }
                let mut members = vec![("metadata", Node::Map(meta))];
                if let Some(s) = spec {
                    members.push(("spec", s));
                }
                members.extend(extra);
                let types = vec![("apiVersion", str_(api)), ("kind", str_(kind))];
                if type_last {
                    members.extend(types);
                    Node::Map(members)
                } else {
                    Node::Map(types.into_iter().chain(members).collect())
                }
            },
        )
}

fn yaml_scalar(s: &Scalar) -> String {
    match s {
        Scalar::Str { text, plain: true } => (*text).to_owned(),
        // JSON's quoting is YAML's double-quoted style.
        Scalar::Str { text, plain: false } => serde_json::to_string(text).unwrap(),
        Scalar::Int(i) => i.to_string(),
        Scalar::Float(f) => json_float(*f),
        Scalar::Bool(b) => b.to_string(),
        Scalar::Null => "null".to_owned(),
    }
}

fn json_float(f: f64) -> String {
    serde_json::to_string(&f).unwrap()
}

fn json(n: &Node, out: &mut String) {
    match n {
        Node::Scalar(Scalar::Str { text, .. }) => {
            out.push_str(&serde_json::to_string(text).unwrap())
        }
        Node::Scalar(s) => out.push_str(&yaml_scalar(s)),
        Node::Seq(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                json(item, out);
            }
            out.push(']');
        }
        Node::Map(members) => {
            out.push('{');
            for (i, (k, v)) in members.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&serde_json::to_string(k).unwrap());
                out.push_str(": ");
                json(v, out);
            }
            out.push('}');
        }
    }
}

/// Flow YAML: JSON's brackets, plain keys, plain or quoted scalars.
fn flow(n: &Node, out: &mut String) {
    match n {
        Node::Scalar(s) => out.push_str(&yaml_scalar(s)),
        Node::Seq(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                flow(item, out);
            }
            out.push(']');
        }
        Node::Map(members) => {
            out.push('{');
            for (i, (k, v)) in members.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(k);
                out.push_str(": ");
                flow(v, out);
            }
            out.push('}');
        }
    }
}

/// Block YAML as kubectl writes it: a map's members one per line, sequence items after
/// `- `, empty collections in flow style.
fn block(n: &Node, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match n {
        Node::Map(members) if !members.is_empty() => {
            for (i, (k, v)) in members.iter().enumerate() {
                // The first member of a map in a sequence item follows the `- ` already written.
                if i > 0 || !out.ends_with("- ") {
                    out.push_str(&pad);
                }
                out.push_str(k);
                out.push(':');
                block_value(v, indent, out);
            }
        }
        Node::Seq(items) if !items.is_empty() => {
            for item in items {
                out.push_str(&pad);
                out.push_str("- ");
                match item {
                    Node::Map(m) if !m.is_empty() => block(item, indent + 2, out),
                    Node::Seq(s) if !s.is_empty() => {
                        let mut inner = String::new();
                        flow(item, &mut inner);
                        out.push_str(&inner);
                        out.push('\n');
                    }
                    _ => {
                        flow(item, out);
                        out.push('\n');
                    }
                }
            }
        }
        _ => {
            out.push_str(&pad);
            flow(n, out);
            out.push('\n');
        }
    }
}

/// The value after `key:` in block style.
fn block_value(v: &Node, indent: usize, out: &mut String) {
    match v {
        Node::Map(m) if !m.is_empty() => {
            out.push('\n');
            block(v, indent + 2, out);
        }
        // kubectl writes a sequence under a key at the key's own indentation.
        Node::Seq(s) if !s.is_empty() => {
            out.push('\n');
            block(v, indent, out);
        }
        _ => {
            out.push(' ');
            flow(v, out);
            out.push('\n');
        }
    }
}

fn render(docs: &[Node], style: u8) -> String {
    let mut out = String::new();
    for doc in docs {
        match style {
            0 => {
                out.push_str("---\n");
                block(doc, 0, &mut out);
            }
            1 => {
                out.push_str("---\n");
                flow(doc, &mut out);
                out.push('\n');
            }
            _ => {
                json(doc, &mut out);
                out.push('\n');
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("DIFF_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(512),
        max_shrink_iters: if std::env::var_os("CI").is_some() { 0 } else { 2048 },
        ..ProptestConfig::default()
    })]

    /// Generated documents in block YAML, flow YAML and JSON read the same on both paths.
    #[test]
    fn generated_documents_read_the_same_on_both_paths(
        docs in proptest::collection::vec(document(), 1..4),
    ) {
        for style in 0..3 {
            let text = render(&docs, style);
            assert_agree("generated", &text);
        }
    }
}

/// The block renderer writes what kubectl writes, so the block scanner (the fastest reader)
/// takes the plainest generated documents: the property above tests it, not only the
/// fallbacks.
#[test]
fn the_block_scanner_reads_rendered_block_yaml() {
    let doc = Node::Map(vec![
        (
            "apiVersion",
            Node::Scalar(Scalar::Str {
                text: "kueue.x-k8s.io/v1beta2",
                plain: true,
            }),
        ),
        (
            "kind",
            Node::Scalar(Scalar::Str {
                text: "ClusterQueue",
                plain: true,
            }),
        ),
        (
            "metadata",
            Node::Map(vec![(
                "name",
                Node::Scalar(Scalar::Str {
                    text: "a",
                    plain: false,
                }),
            )]),
        ),
        (
            "spec",
            Node::Map(vec![(
                "resourceGroups",
                Node::Seq(vec![Node::Map(vec![
                    (
                        "coveredResources",
                        Node::Seq(vec![Node::Scalar(Scalar::Str {
                            text: "cpu",
                            plain: true,
                        })]),
                    ),
                    (
                        "flavors",
                        Node::Seq(vec![Node::Map(vec![
                            (
                                "name",
                                Node::Scalar(Scalar::Str {
                                    text: "h200",
                                    plain: true,
                                }),
                            ),
                            (
                                "resources",
                                Node::Seq(vec![Node::Map(vec![
                                    (
                                        "name",
                                        Node::Scalar(Scalar::Str {
                                            text: "cpu",
                                            plain: true,
                                        }),
                                    ),
                                    ("nominalQuota", Node::Scalar(Scalar::Int(8))),
                                ])]),
                            ),
                        ])]),
                    ),
                ])]),
            )]),
        ),
    ]);
    let text = render(&[doc], 0);
    assert_eq!(
        text,
        "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: \"a\"\nspec:\n  resourceGroups:\n  - coveredResources:\n    - cpu\n    flavors:\n    - name: h200\n      resources:\n      - name: cpu\n        nominalQuota: 8\n"
    );
    assert_eq!(assert_agree("cq.yaml", &text), SourceReader::YamlScanner);
    let imported = import(&text);
    let quota = &imported.model.cluster_queues["a"].spec.resource_groups[0].flavors[0].resources[0];
    assert_eq!(quota.nominal_quota.unwrap().value(), Some(8));
}

fn import(text: &str) -> Imported {
    gpuquota_model::import_str("t.yaml", text).unwrap()
}

/// Found by the generated documents: a `null` inside a ConfigMap or a workload object read on
/// the exact path stayed in its verbatim fields, while the JSON fast path dropped it. Both
/// paths now drop it (`null` is an absent field).
#[test]
fn null_members_of_kept_objects_are_absent_on_both_paths() {
    let text = "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"a\", \"x\": {\"name\": null}}}\n{\"apiVersion\": \"batch/v1\", \"kind\": \"Job\", \"metadata\": {\"name\": \"j\"}, \"spec\": {\"suspend\": null, \"parallelism\": 2}}\n";
    for mut importer in [Importer::new(), Importer::exact()] {
        importer.add_str("t.json", text);
        let model = importer.finish().unwrap().model;
        let cm = &model.config_maps["default/a"];
        assert_eq!(
            serde_json::to_string(&cm.metadata.other["x"]).unwrap(),
            "{}"
        );
        let job = &model.workload_objects["Job/default/j"];
        assert_eq!(
            serde_json::to_string(&job.spec).unwrap(),
            "{\"parallelism\":2}"
        );
    }
}
