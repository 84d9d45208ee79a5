//! Import reports what it does not read, refuses what Kubernetes refuses, and says so in words:
//! unknown fields and kinds with "did you mean", duplicate keys in JSON and YAML, quantities
//! with spaces, `null` as absent, messages that name the limit, the fast path agreeing with the
//! exact one.

use gpuquota_model::diag::codes;
use gpuquota_model::{Importer, Severity, import_str};

fn warnings(text: &str) -> Vec<String> {
    import_str("t.yaml", text)
        .unwrap()
        .warnings
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn errors(text: &str) -> Vec<String> {
    import_str("t.yaml", text)
        .unwrap_err()
        .0
        .iter()
        .map(ToString::to_string)
        .collect()
}

const MISSPELT: &str = "apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: batch}
spec:
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: h200
      resources:
      - name: nvidia.com/gpu
        nominalQuta: 8
  preemption:
    withinClusterQueue: LowerPriority
    reclaimWithinCohrt: Any
";

#[test]
fn unknown_fields_are_warned_with_path_and_hint() {
    for exact in [false, true] {
        let mut importer = if exact {
            Importer::exact()
        } else {
            Importer::new()
        };
        importer.add_str("t.yaml", MISSPELT);
        let imported = importer.finish().unwrap();
        let w: Vec<String> = imported.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(
            w,
            [
                "t.yaml (document 1): ClusterQueue \"batch\": spec.preemption.reclaimWithinCohrt: \
                 unknown field; ignored; did you mean \"reclaimWithinCohort\"?",
                "t.yaml (document 1): ClusterQueue \"batch\": \
                 spec.resourceGroups[0].flavors[0].resources[0].nominalQuta: \
                 unknown field; ignored; did you mean \"nominalQuota\"?",
            ],
            "exact: {exact}"
        );
        assert!(
            imported
                .warnings
                .iter()
                .all(|d| d.code == codes::UNKNOWN_FIELD && d.severity == Severity::Warning)
        );
    }
    // No hint when nothing is close.
    let w = warnings(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\nspec: {zzzzzz: 1}\n",
    );
    assert_eq!(
        w,
        ["t.yaml (document 1): ResourceFlavor \"f\": spec.zzzzzz: unknown field; ignored"]
    );
}

/// Unknown fields deep in lists of lists, after siblings that had their own, under a key
/// with an escape sequence (a key the JSON reader cannot lend from the text) and in a `List`,
/// keep their whole path on every path: YAML and JSON, fast and exact, text and file.
const NESTED_JSON: &str = r#"{"apiVersion": "v1", "kind": "List", "items": [
{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "batch"},
 "spec": {"resourceGroups": [
   {"coveredResources": ["cpu"], "flavors": [{"name": "a", "resources": [{"name": "cpu", "nominalQuota": 1, "x1": 1}]}]},
   {"coveredResources": ["nvidia.com/gpu"], "flavors": [
     {"name": "b", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 1}], "x2": {"deep": [1]}},
     {"name": "c", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 1}, {"name": "nvidia.com/gpu", "nominalQuta": 2, "borrowingLimt": 1}]}
   ]}],
  "preemption": {"withinClusterQueue": "LowerPriority", "xé3": []},
  "x4": {"a": {"b": 1}}}}
]}"#;

const NESTED_YAML: &str = "apiVersion: v1
kind: List
items:
- apiVersion: kueue.x-k8s.io/v1beta2
  kind: ClusterQueue
  metadata: {name: batch}
  spec:
    resourceGroups:
    - coveredResources: [cpu]
      flavors:
      - name: a
        resources:
        - {name: cpu, nominalQuota: 1, x1: 1}
    - coveredResources: [nvidia.com/gpu]
      flavors:
      - name: b
        resources:
        - {name: nvidia.com/gpu, nominalQuota: 1}
        x2: {deep: [1]}
      - name: c
        resources:
        - {name: nvidia.com/gpu, nominalQuota: 1}
        - {name: nvidia.com/gpu, nominalQuta: 2, borrowingLimt: 1}
    preemption: {withinClusterQueue: LowerPriority, \"x\\u00e93\": []}
    x4: {a: {b: 1}}
";

#[test]
fn unknown_fields_in_nested_lists_keep_their_whole_path() {
    let expected = [
        "t (document 1): ClusterQueue \"batch\": items[0].spec.preemption.x\u{e9}3: \
         unknown field; ignored",
        "t (document 1): ClusterQueue \"batch\": \
         items[0].spec.resourceGroups[0].flavors[0].resources[0].x1: unknown field; ignored",
        "t (document 1): ClusterQueue \"batch\": \
         items[0].spec.resourceGroups[1].flavors[0].x2: unknown field; ignored",
        "t (document 1): ClusterQueue \"batch\": \
         items[0].spec.resourceGroups[1].flavors[1].resources[1].borrowingLimt: \
         unknown field; ignored; did you mean \"borrowingLimit\"?",
        "t (document 1): ClusterQueue \"batch\": \
         items[0].spec.resourceGroups[1].flavors[1].resources[1].nominalQuta: \
         unknown field; ignored; did you mean \"nominalQuota\"?",
        "t (document 1): ClusterQueue \"batch\": items[0].spec.x4: unknown field; ignored",
    ];
    for text in [NESTED_JSON, NESTED_YAML] {
        for exact in [false, true] {
            let mut importer = if exact {
                Importer::exact()
            } else {
                Importer::new()
            };
            importer.add_str("t", text);
            let imported = importer.finish().unwrap();
            let w: Vec<String> = imported.warnings.iter().map(ToString::to_string).collect();
            assert_eq!(w, expected, "exact: {exact}, {text}");
            assert!(
                imported
                    .warnings
                    .iter()
                    .all(|d| d.code == codes::UNKNOWN_FIELD && d.kind == "ClusterQueue")
            );
        }
    }
}

#[test]
fn unknown_kinds_get_a_hint_against_the_kinds_read() {
    let w = warnings(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQeue\nmetadata: {name: batch}\n",
    );
    assert_eq!(
        w,
        [
            "t.yaml (document 1): ClusterQeue \"batch\": kind ClusterQeue of apiVersion \
             \"kueue.x-k8s.io/v1beta2\" is not read by gpuquota; skipped; did you mean ClusterQueue?"
        ]
    );
    let imported = import_str(
        "t.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata: {name: x}\n",
    )
    .unwrap();
    assert_eq!(imported.warnings[0].code, codes::UNKNOWN_KIND);
    assert!(!imported.warnings[0].message.contains("did you mean"));
}

#[test]
fn json_duplicate_keys_are_errors_like_yaml_ones() {
    let json = r#"{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
        "metadata": {"name": "a", "name": "b"}}"#;
    let e = import_str("t.json", json).unwrap_err();
    assert_eq!(e.0[0].code, codes::DUPLICATE_KEY);
    assert!(
        e.0[0].message.contains("duplicate key \"name\""),
        "{}",
        e.0[0]
    );
    let yaml = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: a}\nmetadata: {name: b}\n";
    let e = import_str("t.yaml", yaml).unwrap_err();
    assert_eq!(e.0[0].code, codes::DUPLICATE_KEY);
    assert!(!e.0[0].message.contains("DuplicateKeyPolicy"), "{}", e.0[0]);
}

#[test]
fn quantities_with_spaces_are_refused() {
    let text = "apiVersion: v1\nkind: Node\nmetadata: {name: node-a}\nstatus:\n  allocatable: {nvidia.com/gpu: \" 8\"}\n";
    let e = errors(text);
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].contains("Node \"node-a\": status.allocatable.nvidia.com/gpu: quantities must match"),
        "{e:?}"
    );
}

#[test]
fn a_null_spec_is_an_absent_spec() {
    let text = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: platform}\nspec: null\n";
    let imported = import_str("t.yaml", text).unwrap();
    assert!(imported.model.cohorts.contains_key("platform"));
    assert_eq!(imported.warnings, vec![]);
    let json = r#"{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort", "metadata": {"name": "p", "labels": null}, "spec": null}"#;
    assert!(
        import_str("t.json", json)
            .unwrap()
            .model
            .cohorts
            .contains_key("p")
    );
}

#[test]
fn limit_messages_say_which_limit_and_what_to_do() {
    let deep = format!("{}1{}", "[".repeat(80), "]".repeat(80));
    let text =
        format!("apiVersion: v1\nkind: Node\nmetadata: {{name: node-a}}\nspec: {{x: {deep}}}\n");
    let e = import_str("t.yaml", &text).unwrap_err();
    let msg = e.0[0].to_string();
    assert_eq!(e.0[0].code, codes::LIMIT_EXCEEDED, "{msg}");
    assert!(msg.contains("deeper than 64 levels"), "{msg}");
    for api_advice in [
        "from_str_multiple",
        "DuplicateKeyPolicy",
        "Depth {",
        "budget",
    ] {
        assert!(!msg.contains(api_advice), "{msg}");
    }
    // A tiny exponent is not "too large".
    let text = "apiVersion: v1\nkind: Node\nmetadata: {name: node-a}\nstatus:\n  allocatable: {cpu: \"1e-9999999999\"}\n";
    let e = errors(text);
    assert!(e[0].contains("exponent beyond"), "{e:?}");
    assert!(!e[0].contains("too large"), "{e:?}");
}

#[test]
fn type_errors_keep_kind_and_name() {
    for text in [
        "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q}\nspec: {resources: {gpu: {quota: lots}}}\n",
        "{\"apiVersion\": \"scheduling.run.ai/v2\", \"kind\": \"Queue\", \"metadata\": {\"name\": \"q\"}, \"spec\": {\"resources\": {\"gpu\": {\"quota\": \"lots\"}}}}",
    ] {
        let e = import_str("t", text).unwrap_err();
        assert_eq!(e.0[0].kind, "Queue");
        assert_eq!(e.0[0].name, "q");
        assert_eq!(e.0[0].field, "spec.resources.gpu.quota");
        assert_eq!(e.0[0].code, codes::INVALID_TYPE);
    }
}

#[test]
fn generate_name_gives_a_stable_name_in_document_order() {
    let text = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {generateName: train-, namespace: ml}\nspec: {queueName: q, podSets: [{name: main, count: 1, template: {spec: {containers: []}}}]}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {generateName: train-, namespace: ml}\nspec: {queueName: q, podSets: [{name: main, count: 2, template: {spec: {containers: []}}}]}\n";
    let model = import_str("t.yaml", text).unwrap().model;
    let names: Vec<&String> = model.workloads.keys().collect();
    assert_eq!(names, ["ml/train-1", "ml/train-2"]);
    assert_eq!(model.workloads["ml/train-2"].spec.pod_sets[0].count, 2);
    let problems: Vec<String> = gpuquota_model::validate::problems(&model)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        problems.iter().all(|p| !p.contains("metadata.name")),
        "{problems:?}"
    );
}

/// Inputs on which the fast path and the exact path must agree (same model and warnings, or
/// both errors with the same diagnostics).
const DIFFERENTIAL: &[&str] = &[
    MISSPELT,
    NESTED_JSON,
    NESTED_YAML,
    "apiVersion: v1\nkind: Node\nmetadata: {name: node-a}\nstatus: {allocatable: {cpu: \"8\"}}\n",
    "metadata: {name: n}\napiVersion: v1\nkind: Node\n",
    "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Namespace, metadata: {name: a}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n",
    "{\"items\": [{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": \"a\"}}], \"apiVersion\": \"v1\", \"kind\": \"List\"}",
    "[{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": \"a\"}}]",
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w, namespace: ns}\nspec: {podSets: [{name: main, count: \"3\"}]}\n",
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: 123, namespace: ns}\n",
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w, labels: {a: 1}}\n",
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: c}\nspec: {stopPolicy: yes}\n",
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: c}\nspec: {cohort: p, namespaceSelector: {}}\n",
    "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q}\nspec: {priority: \"5\", resources: {gpu: {quota: 2.5}}}\n",
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: 1}}}]}\n---\n---\n42\n",
    "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\nfairSharing: {enable: true}\nfoo: 1\n",
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: p}\nspec: ~\n",
    "apiVersion: v1\nkind: Namespace\nkind: Node\nmetadata: {name: a}\n",
    "apiVersion: v1\nkind: Node\nmetadata: &m {name: a}\n---\napiVersion: v1\nkind: Node\nmetadata: *m\n",
    // A flow-mapping entry with no value is a `null` member: no unknown field on either path.
    "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q}\nspec: {resources: {gpu: {quota: 1, limi1e38}}}\n",
    "apiVersion: v1\nkind: Node\nmetadata: &m {name: a, resourceVersion: ~}\nspec: {surprise: null}\n",
    // Flow style, read by the block scanner: whole documents as one flow mapping, flow
    // values under block keys, flow items of a block sequence; unknown fields, a wrong type
    // and a duplicate key in flow style.
    "---\n{apiVersion: kueue.x-k8s.io/v1beta2, kind: Workload, metadata: {name: w, namespace: ns}, spec: {queueName: lq, priorityClassRef: {group: kueue.x-k8s.io, kind: WorkloadPriorityClass, name: high}, podSets: [{name: main, count: 2, template: {spec: {containers: [{name: main, resources: {requests: {cpu: \"3\", memory: 4Gi, nvidia.com/gpu: 1}}}]}}}]}}\n---\n{apiVersion: v1, kind: Namespace, metadata: {name: ns, labels: {team: a}}}\n",
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: c}\nspec:\n  cohort: p\n  resourceGroups:\n  - {coveredResources: [cpu, nvidia.com/gpu], flavors: [{name: h100, resources: [{name: cpu, nominalQuota: 8}, {name: nvidia.com/gpu, nominalQuota: \"4\", borrowingLimit: 2}]}]}\n",
    "{apiVersion: v1, kind: Node, metadata: {name: n, surprise: 1}, status: {allocatable: {cpu: '8', nvidia.com/gpu: 2}}}\n",
    "{apiVersion: kueue.x-k8s.io/v1beta2, kind: Workload, metadata: {name: w, namespace: ns}, spec: {podSets: [{name: main, count: [1]}]}}\n",
    "{apiVersion: v1, kind: Node, metadata: {name: a, name: b}}\n",
    "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"a\", \"resourceVersion\": null}, \"spec\": {\"surprise\": null, \"unschedulable\": null, \"x\": [null, {\"y\": null}]}}",
    "[{\"metadata\": null, \"apiVersion\": \"v1\", \"kind\": \"Namespace\"}, {\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": \"null\", \"labels\": {\"a\": null}}}]",
];

#[test]
fn fast_and_exact_paths_agree() {
    let mut inputs: Vec<String> = DIFFERENTIAL.iter().map(|s| (*s).to_owned()).collect();
    for (_, text) in crate::examples::EXAMPLES {
        inputs.push((*text).to_owned());
    }
    inputs.push(include_str!("../data/mistakes.yaml").to_owned());
    for text in &inputs {
        let mut fast = Importer::new();
        fast.add_str("t", text);
        let mut exact = Importer::exact();
        exact.add_str("t", text);
        assert_eq!(fast.finish(), exact.finish(), "{text}");
    }
}

/// A JSON file value whose `null` member, escaped key or duplicate key sits far into the
/// stream, past the reader's first pieces.
fn long_json_stream(tail: &str) -> String {
    let mut text = String::from("\u{feff}\n");
    for i in 0..600 {
        text.push_str(&format!(
            "{{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"Workload\", \"metadata\": {{\"name\": \"w-{i}\", \"namespace\": \"ns\"}}, \"spec\": {{\"queueName\": \"q\", \"podSets\": [{{\"name\": \"main\", \"count\": 1, \"template\": {{\"spec\": {{\"containers\": [{{\"name\": \"c\", \"resources\": {{\"requests\": {{\"cpu\": \"1\", \"nvidia.com/gpu\": 1}}}}}}]}}}}}}]}}}}\n"
        ));
    }
    text.push_str(tail);
    text
}

/// `Importer::add_file` gives what `add_str` gives on the file's text, whether the JSON
/// stream reader reads the file to the end or hands it back half-way (duplicate keys,
/// `null` members, bytes that are not UTF-8, text between values, a value cut off, YAML),
/// into an empty importer and into one that already holds objects.
#[test]
fn file_import_equals_text_import() {
    let dir = std::env::temp_dir().join(format!("gpuquota-file-import-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut inputs: Vec<Vec<u8>> = DIFFERENTIAL.iter().map(|s| s.as_bytes().to_vec()).collect();
    for (_, text) in crate::examples::EXAMPLES {
        inputs.push(text.as_bytes().to_vec());
    }
    for tail in [
        "",
        "{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": \"a\", \"uid\": null}}\n",
        "{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": \"a\", \"name\": \"b\"}}",
        "{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"n\\u0061me\": \"a\"}}",
        "{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": \"a\"}} 3",
        "{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": \"a\"",
        "[{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": \"b\"}}, null]",
        "{\"apiVersion\": \"v1\", \"kind\": \"Secret\", \"metadata\": {\"name\": \"s\"}, \"data\": {}}",
    ] {
        inputs.push(long_json_stream(tail).into_bytes());
    }
    let mut bad = long_json_stream("").into_bytes();
    bad.extend_from_slice(
        b"{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": \"\xff\"}}",
    );
    inputs.push(bad);
    inputs.push(b"  \n\t".to_vec());
    inputs.push(b"\xef\xbb\xbf\xef\xbb\xbf [{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": \"a\"}}]".to_vec());
    let first = "apiVersion: v1\nkind: Namespace\nmetadata: {name: z}\n";
    for (i, bytes) in inputs.iter().enumerate() {
        let path = dir.join(format!("{i}.json"));
        std::fs::write(&path, bytes).unwrap();
        let name = gpuquota_model::source::display_name(&path);
        for before in [None, Some(first)] {
            let mut by_file = Importer::new();
            let mut by_text = Importer::new();
            if let Some(t) = before {
                by_file.add_str("first", t);
                by_text.add_str("first", t);
            }
            by_file.add_file(&path);
            if let Ok(text) = gpuquota_model::source::read_text(&path) {
                by_text.add_str(&name, &text);
            }
            let (by_file, by_text) = (by_file.finish(), by_text.finish());
            if gpuquota_model::source::read_text(&path).is_ok() {
                assert_eq!(by_file, by_text, "input {i}");
            } else {
                let errors = by_file.unwrap_err().0;
                assert_eq!(errors.len(), 1, "input {i}");
                assert_eq!(errors[0].code, codes::NOT_UTF8, "input {i}");
            }
        }
    }
    let mut missing = Importer::new();
    missing.add_file(&dir.join("missing.json"));
    let errors = missing.finish().unwrap_err().0;
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].code, codes::READ_FAILED);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The whole messages of the limits, a tiny quantity, a JSON duplicate key and a quantity
/// with a space, pinned (the issue's complaints: YAML-library advice, Rust Debug syntax,
/// "too large" for a tiny number), each naming kind and object where there is one.
#[test]
fn limit_and_tiny_quantity_messages_are_pinned() {
    let deep = format!("{}1{}", "[".repeat(80), "]".repeat(80));
    let text =
        format!("apiVersion: v1\nkind: Node\nmetadata: {{name: node-a}}\nspec: {{x: {deep}}}\n");
    assert_eq!(
        errors(&text),
        [
            "t.yaml: YAML: YAML nesting is deeper than 64 levels at line 4 column 73; manifests nest far less: check the indentation"
        ]
    );
    let text = "apiVersion: v1\nkind: Node\nmetadata: {name: node-a}\nstatus:\n  allocatable: {cpu: \"1e-9999999999\"}\n";
    assert_eq!(
        errors(text),
        [
            "t.yaml (document 1): Node \"node-a\": status.allocatable.cpu: quantity \"1e-9999999999\" has an exponent beyond ±1000; write it with a suffix or a smaller exponent (e.g. 1n, 5E)"
        ]
    );
    let text = "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n\"}}";
    assert_eq!(
        errors(text),
        [
            "t.yaml: JSON: duplicate key \"kind\": a key may appear only once in an object; remove or merge one of them at line 1 column 43"
        ]
    );
    let text = "apiVersion: v1\nkind: Node\nmetadata: {name: node-a}\nstatus:\n  allocatable: {cpu: \" 4\"}\n";
    assert_eq!(
        errors(text),
        [
            "t.yaml (document 1): Node \"node-a\": status.allocatable.cpu: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': \" 4\""
        ]
    );
}

/// A name that reads as a number or a YAML 1.1 boolean is an error of its own, and an error
/// met before it in the same object still names the object, by the scalar's JSON text (what
/// the API server receives), whole messages pinned. The problem reported is the first in
/// document order, whichever map serde_json was built with.
#[test]
fn a_non_string_name_still_names_the_object_in_other_errors() {
    for (name, shown) in [("123", "123"), ("n", "false"), ("1.5", "1.5")] {
        let text = format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: {name}}}\nstatus: {{allocatable: {{cpu: [1]}}}}\n"
        );
        assert_eq!(
            errors(&text),
            [format!(
                "t.yaml (document 1): Node \"{shown}\": metadata.name: invalid type: {}, expected a string",
                match name {
                    "123" => "integer `123`".to_owned(),
                    "n" => "boolean `false`".to_owned(),
                    _ => "floating point `1.5`".to_owned(),
                }
            )],
            "{name}"
        );
        let text =
            format!("apiVersion: v1\nkind: Node\nmetadata: {{labels: {{a: [1]}}, name: {name}}}\n");
        assert_eq!(
            errors(&text),
            [format!(
                "t.yaml (document 1): Node \"{shown}\": metadata.labels.a: invalid type: sequence, expected a string"
            )],
            "{name}"
        );
    }
}
