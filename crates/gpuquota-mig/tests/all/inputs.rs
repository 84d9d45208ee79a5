//! Input formats: quoted scalars, multi-document files, unknown fields, mig-parted configs
//! (bare and in the GPU operator's ConfigMap), node labels, and fleet-size order independence.

use gpuquota_mig::testkit::plan;
use gpuquota_mig::testkit::verify;
use gpuquota_mig::{
    Catalogue, PlanOptions, PlanRequest, read_documents, unknown_field_message, validate_config,
};

/// What reading (and resolving) a planning input gives.
enum Expect {
    /// `PlanRequest::from_yaml` fails with this message.
    ParseError(&'static str),
    /// It parses with these unknown-field and skipped-document warnings.
    Warnings(&'static [&'static str]),
    /// It parses, without warnings, with this first demand count.
    FirstCount(u32),
    /// It parses, and `resolve` fails with this first error.
    ResolveError(&'static str),
}

/// One row per input-format case: (what it shows, input text, expected outcome).
const CASES: &[(&str, &str, Expect)] = &[
    (
        "a quoted hexadecimal count is a string, not sixteen",
        "gpus: [{node: a, index: 0, model: A100-80GB, instances: []}]\n\
         demand: [{profile: 1g.10gb, count: \"0x10\"}]\n",
        Expect::ParseError("demand[0].count: invalid type: string \"0x10\", expected u32"),
    ),
    (
        "unquoted, YAML's core schema reads a hexadecimal integer",
        "gpus: [{node: a, index: 0, model: A100-80GB, instances: []}]\n\
         demand: [{profile: 1g.10gb, count: 0x10}]\n",
        Expect::FirstCount(16),
    ),
    (
        "an unknown field is reported with its path",
        "gpus: [{node: a, index: 0, model: A100-80GB, instnces: []}]\ndemand: []\n",
        Expect::Warnings(&["gpus.0.instnces"]),
    ),
    (
        "two planning inputs in one file are a clear error",
        "gpus: []\ndemand: [{profile: 1g.10gb, count: 1}]\n---\n\
         gpus: []\ndemand: [{profile: 1g.10gb, count: 1}]\n",
        Expect::ParseError(
            "document 2: a second planning input: give one mapping with `gpus` and `demand` per file",
        ),
    ),
    (
        "other kinds are skipped with a warning",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n---\ngpus: []\ndemand: []\n",
        Expect::Warnings(&["document 1: kind Pod is not read by mig commands; skipped"]),
    ),
    (
        "a node label naming a missing config is an error",
        MISSING_CONFIG,
        Expect::ResolveError(
            "node gpu-node-1: nvidia.com/mig.config \"all-1g.10gb\": no mig-parted config of the input defines it",
        ),
    ),
];

#[test]
fn planning_inputs_read_as_the_table_says() {
    for (what, text, expect) in CASES {
        // the table lists unknown fields, then skipped documents, as one list of warnings
        let read = PlanRequest::from_yaml(text)
            .map(|(req, mut unread, skipped)| {
                unread.extend(skipped);
                (req, unread)
            })
            .map_err(|e| e.to_string());
        match (expect, read) {
            (Expect::ParseError(m), Err(e)) => assert_eq!(e, *m, "{what}"),
            (Expect::Warnings(w), Ok((_, unknown))) => assert_eq!(unknown, *w, "{what}"),
            (Expect::FirstCount(n), Ok((req, unknown))) => {
                assert!(unknown.is_empty(), "{what}: {unknown:?}");
                assert_eq!(req.demand[0].count, *n, "{what}");
            }
            (Expect::ResolveError(m), Ok((req, _))) => {
                let errors = req.resolve(Catalogue::builtin()).expect_err(what);
                assert_eq!(errors[0].to_string(), *m, "{what}");
            }
            (_, read) => panic!("{what}: unexpected {read:?}"),
        }
    }
}

#[test]
fn unknown_field_messages_suggest_the_nearest_field() {
    assert_eq!(
        unknown_field_message("gpus.0.instnces"),
        "unknown field `gpus.0.instnces` ignored (did you mean `instances`?)"
    );
    assert_eq!(
        unknown_field_message("colour"),
        "unknown field `colour` ignored"
    );
}

/// A config written for this test that names every profile NVIDIA's default mig-parted
/// config uses (the GPU operator's `default-mig-parted-config`), with the counts it uses.
const EVERY_DEFAULT_PROFILE: &str = r#"
version: v1
mig-configs:
  off:
    - devices: all
      mig-enabled: false
  on:
    - devices: all
      mig-enabled: true
      mig-devices: {}
  ampere-40:
    - device-filter: ["0x20B010DE"]
      devices: all
      mig-enabled: true
      mig-devices: {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1}
    - device-filter: "0x20B010DE"
      devices: [1]
      mig-enabled: true
      mig-devices: {"1g.5gb+me": 1, "1g.10gb": 3}
    - device-filter: ["0x20B010DE"]
      devices: [2]
      mig-enabled: true
      mig-devices: {"4g.20gb": 1, "3g.20gb": 1}
    - device-filter: ["0x20B010DE"]
      devices: [3]
      mig-enabled: true
      mig-devices: {"7g.40gb": 1}
  ampere-hopper-80:
    - device-filter: ["0x20B210DE", "0x233010DE"]
      devices: all
      mig-enabled: true
      mig-devices: {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}
    - device-filter: ["0x20B210DE", "0x233010DE"]
      devices: [1]
      mig-enabled: true
      mig-devices: {"1g.10gb+me": 1, "1g.20gb": 3}
    - device-filter: ["0x20B210DE", "0x233010DE"]
      devices: [2]
      mig-enabled: true
      mig-devices: {"4g.40gb": 1, "3g.40gb": 1}
    - device-filter: ["0x20B210DE", "0x233010DE"]
      devices: [3]
      mig-enabled: true
      mig-devices: {"7g.80gb": 1}
  nvl:
    - device-filter: ["0x232110DE"]
      devices: all
      mig-enabled: true
      mig-devices: {"1g.12gb+me": 1, "1g.12gb": 1, "1g.24gb": 1, "2g.24gb": 1}
    - device-filter: ["0x232110DE"]
      devices: [1]
      mig-enabled: true
      mig-devices: {"3g.47gb": 2}
    - device-filter: ["0x232110DE"]
      devices: [2]
      mig-enabled: true
      mig-devices: {"4g.47gb": 1}
    - device-filter: ["0x232110DE"]
      devices: [3]
      mig-enabled: true
      mig-devices: {"7g.94gb": 1}
  h100-96:
    - device-filter: ["0x234210DE"]
      devices: all
      mig-enabled: true
      mig-devices: {"1g.12gb": 2, "2g.24gb": 1, "3g.48gb": 1}
    - device-filter: ["0x234210DE"]
      devices: [1]
      mig-enabled: true
      mig-devices: {"4g.48gb": 1}
    - device-filter: ["0x234210DE"]
      devices: [2]
      mig-enabled: true
      mig-devices: {"7g.96gb": 1}
  h200:
    - device-filter: ["0x233510DE"]
      devices: all
      mig-enabled: true
      mig-devices: {"1g.18gb": 2, "2g.35gb": 1, "3g.71gb": 1}
    - device-filter: ["0x233510DE"]
      devices: [1]
      mig-enabled: true
      mig-devices: {"1g.18gb+me": 1, "1g.35gb": 3}
    - device-filter: ["0x233510DE"]
      devices: [2]
      mig-enabled: true
      mig-devices: {"4g.71gb": 1}
    - device-filter: ["0x233510DE"]
      devices: [3]
      mig-enabled: true
      mig-devices: {"7g.141gb": 1}
  gh200-144:
    - device-filter: ["0x234810DE"]
      devices: all
      mig-enabled: true
      mig-devices: {"1g.18gb": 2, "2g.36gb": 1, "3g.72gb": 1}
    - device-filter: ["0x234810DE"]
      devices: [1]
      mig-enabled: true
      mig-devices: {"1g.36gb": 4}
    - device-filter: ["0x234810DE"]
      devices: [2]
      mig-enabled: true
      mig-devices: {"4g.72gb": 1}
    - device-filter: ["0x234810DE"]
      devices: [3]
      mig-enabled: true
      mig-devices: {"7g.144gb": 1}
  b200:
    - device-filter: ["0x290110DE"]
      devices: all
      mig-enabled: true
      mig-devices: {"1g.23gb": 2, "2g.45gb": 1, "3g.90gb": 1}
    - device-filter: ["0x290110DE"]
      devices: [1]
      mig-enabled: true
      mig-devices: {"1g.23gb+me": 1, "1g.45gb": 3}
    - device-filter: ["0x290110DE"]
      devices: [2]
      mig-enabled: true
      mig-devices: {"4g.90gb": 1}
    - device-filter: ["0x290110DE"]
      devices: [3]
      mig-enabled: true
      mig-devices: {"7g.180gb": 1}
  gb200:
    - device-filter: ["0x294110DE"]
      devices: all
      mig-enabled: true
      mig-devices: {"1g.23gb": 2, "2g.47gb": 1, "3g.93gb": 1}
    - device-filter: ["0x294110DE"]
      devices: [1]
      mig-enabled: true
      mig-devices: {"1g.47gb": 4}
    - device-filter: ["0x294110DE"]
      devices: [2]
      mig-enabled: true
      mig-devices: {"4g.93gb": 1}
    - device-filter: ["0x294110DE"]
      devices: [3]
      mig-enabled: true
      mig-devices: {"7g.186gb": 1}
  gb200-early-names:
    - devices: [0]
      mig-enabled: true
      mig-devices: {"3g.95gb": 2}
    - devices: [1]
      mig-enabled: true
      mig-devices: {"4g.95gb": 1}
    - devices: [2]
      mig-enabled: true
      mig-devices: {"7g.189gb": 1}
  a30:
    - device-filter: "0x20B710DE"
      devices: all
      mig-enabled: true
      mig-devices: {"1g.6gb": 2, "2g.12gb": 1}
    - device-filter: "0x20B710DE"
      devices: [1]
      mig-enabled: true
      mig-devices: {"1g.6gb+me": 1, "1g.6gb": 1, "2g.12gb": 1}
    - device-filter: "0x20B710DE"
      devices: [2]
      mig-enabled: true
      mig-devices: {"2g.12gb+me": 1, "2g.12gb": 1}
    - device-filter: "0x20B710DE"
      devices: [3]
      mig-enabled: true
      mig-devices: {"4g.24gb": 1}
  rtx-pro-6000:
    - device-filter: ["0x2BB510DE"]
      devices: all
      mig-enabled: true
      mig-devices: {"1g.24gb": 2, "2g.48gb": 1}
    - device-filter: ["0x2BB510DE"]
      devices: [1]
      mig-enabled: true
      mig-devices: {"1g.24gb+gfx": 2, "2g.48gb+gfx": 1}
    - device-filter: ["0x2BB510DE"]
      devices: [2]
      mig-enabled: true
      mig-devices: {"1g.24gb+me.all": 1, "1g.24gb-me": 1, "2g.48gb-me": 1}
    - device-filter: ["0x2BB510DE"]
      devices: [3]
      mig-enabled: true
      mig-devices: {"2g.48gb+me.all": 1, "1g.24gb-me": 2}
    - device-filter: ["0x2BB510DE"]
      devices: [4]
      mig-enabled: true
      mig-devices: {"1g.24gb+me": 1, "1g.24gb": 3}
    - device-filter: ["0x2BB510DE"]
      devices: [5]
      mig-enabled: true
      mig-devices: {"4g.96gb": 1}
    - device-filter: ["0x2BB510DE"]
      devices: [6]
      mig-enabled: true
      mig-devices: {"4g.96gb+gfx": 1}
"#;

#[test]
fn every_profile_of_the_default_mig_parted_config_validates() {
    let docs = read_documents(EVERY_DEFAULT_PROFILE).expect("reads");
    assert_eq!(docs.configs.len(), 1);
    let problems = validate_config(Catalogue::builtin(), &docs.configs[0]);
    assert_eq!(problems, []);
    assert!(docs.unknown_fields.is_empty(), "{:?}", docs.unknown_fields);
}

#[test]
fn validate_rejects_what_no_gpu_can_hold() {
    let text = r#"
version: v1
mig-configs:
  too-many:
    - devices: all
      mig-enabled: true
      mig-devices: {"1g.10gb": 99}
  filtered:
    - device-filter: ["0x20B010DE", "0xFFFF10DE"]
      devices: all
      mig-enabled: true
      mig-devices: {"1g.10gb": 5}
  disabled-with-devices:
    - devices: everything
      mig-enabled: false
      mig-devices: {"1g.10gb": 1}
"#;
    let docs = read_documents(text).expect("reads");
    let problems: Vec<String> = validate_config(Catalogue::builtin(), &docs.configs[0])
        .iter()
        .map(|p| format!("{}{p}", if p.warning { "warning: " } else { "" }))
        .collect();
    assert_eq!(
        problems,
        [
            "mig-configs.too-many[0]: 99 x 1g.10gb does not fit on A100-40GB",
            "warning: mig-configs.filtered[0]: device-filter 0xFFFF10DE: no catalogue model has this id",
            "mig-configs.filtered[0]: 5 x 1g.10gb does not fit on A100-40GB",
            "mig-configs.disabled-with-devices[0]: devices \"everything\": expected `all` or a list of indices",
            "mig-configs.disabled-with-devices[0]: mig-devices given with mig-enabled: false",
        ]
    );
}

/// The GPU operator's ConfigMap shape: the config YAML under a data key, plus Node objects
/// whose `nvidia.com/mig.config` label names the config applied, plus the planning input.
const CONFIGMAP_AND_NODES: &str = r#"
apiVersion: v1
kind: ConfigMap
metadata: {name: custom-mig-config, namespace: gpu-operator}
data:
  config.yaml: |
    version: v1
    mig-configs:
      balanced:
        - device-filter: ["0x20B210DE"]
          devices: all
          mig-enabled: true
          mig-devices: {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}
        - device-filter: ["0x20B210DE"]
          devices: [1]
          mig-enabled: false
---
apiVersion: v1
kind: Node
metadata:
  name: gpu-node-1
  labels:
    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB
    nvidia.com/gpu.count: "2"
    nvidia.com/mig.config: balanced
---
mode: keep-busy-gpus
demand:
  - {profile: 3g.40gb, count: 1}
  - {profile: 1g.10gb, count: 2}
"#;

/// [`CONFIGMAP_AND_NODES`] with a node label naming a config the input does not define.
const MISSING_CONFIG: &str = r#"
apiVersion: v1
kind: ConfigMap
metadata: {name: custom-mig-config, namespace: gpu-operator}
data:
  config.yaml: |
    version: v1
    mig-configs:
      balanced:
        - devices: all
          mig-enabled: true
          mig-devices: {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}
---
apiVersion: v1
kind: Node
metadata:
  name: gpu-node-1
  labels:
    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB
    nvidia.com/gpu.count: "1"
    nvidia.com/mig.config: all-1g.10gb
---
demand:
  - {profile: 1g.10gb, count: 2}
"#;

#[test]
fn configmap_and_node_labels_give_current_layouts() {
    let (req, unknown, skipped) = PlanRequest::from_yaml(CONFIGMAP_AND_NODES).expect("parses");
    assert!(unknown.is_empty(), "{unknown:?}");
    assert!(skipped.is_empty(), "{skipped:?}");
    let problem = req.resolve(Catalogue::builtin()).expect("valid");
    assert_eq!(problem.gpus.len(), 2);
    let l0 = problem.gpus[0].current.as_ref().expect("MIG on");
    assert_eq!(l0.instances().len(), 4);
    // Entries are walked in order: GPU 1 is switched off by the second entry.
    assert!(problem.gpus[1].current.is_none());
    let p = plan(&problem, &PlanOptions::default()).expect("plans");
    assert_eq!(verify(&problem, &p), Ok(()));
    // GPU 0 already serves the demand: nothing changes.
    assert_eq!((p.value, p.reconfigured, p.optimal), (3, 0, true));
}

/// Keys are read in the order the file writes them, whatever features serde_json has in the
/// build: the later of two ConfigMap keys defining the same config name gives the layout, and
/// a config's `mig-devices` are listed as written.
#[test]
fn document_order_decides_without_serde_json_preserve_order() {
    let text = r#"
apiVersion: v1
kind: ConfigMap
metadata: {name: custom-mig-config}
data:
  z-first.yaml: |
    version: v1
    mig-configs:
      balanced:
        - devices: all
          mig-enabled: true
          mig-devices: {"1g.10gb": 7}
  a-second.yaml: |
    version: v1
    mig-configs:
      balanced:
        - devices: all
          mig-enabled: true
          mig-devices: {"7g.80gb": 1}
      too-big:
        - device-filter: "0x20B210DE"
          devices: all
          mig-enabled: true
          mig-devices: {"3g.40gb": 3, "1g.10gb": 1}
---
apiVersion: v1
kind: Node
metadata:
  name: gpu-node-1
  labels:
    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB
    nvidia.com/gpu.count: "1"
    nvidia.com/mig.config: balanced
---
demand:
  - {profile: 1g.10gb, count: 1}
"#;
    let docs = read_documents(text).expect("reads");
    let order: Vec<Vec<&str>> = docs
        .configs
        .iter()
        .map(|c| c.mig_configs.keys().map(String::as_str).collect())
        .collect();
    assert_eq!(order, [vec!["balanced"], vec!["balanced", "too-big"]]);
    let problems: Vec<String> = validate_config(Catalogue::builtin(), &docs.configs[1])
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        problems,
        ["mig-configs.too-big[0]: 3 x 3g.40gb + 1 x 1g.10gb does not fit on A100-80GB"]
    );
    let (req, _, _) = PlanRequest::from_yaml(text).expect("parses");
    let problem = req.resolve(Catalogue::builtin()).expect("valid");
    let current = problem.gpus[0].current.as_ref().expect("MIG on");
    let profiles: Vec<&str> = current
        .instances()
        .iter()
        .map(|i| problem.gpus[0].model.profiles()[usize::from(i.profile.0)].name())
        .collect();
    assert_eq!(profiles, ["7g.80gb"]);
}
