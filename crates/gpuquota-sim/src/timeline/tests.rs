use super::*;
use gpuquota_model::kueue::StopPolicy;
use serde_json::json;

const PLATFORM: &str = r#"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: rtx}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: research}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: batch}
spec:
  cohortName: research
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: rtx
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 4, lendingLimit: 2}
---
apiVersion: v1
kind: Node
metadata: {name: rtx-a}
status: {allocatable: {nvidia.com/gpu: "5"}}
---
apiVersion: v1
kind: Node
metadata: {name: rtx-b, labels: {nvidia.com/gpu.product: NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition}}
status: {allocatable: {nvidia.com/gpu: "4"}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: custom-mig-parted-config, namespace: gpu-operator}
data:
  config.yaml: |
    version: v1
    mig-configs:
      all-disabled:
      - devices: all
        mig-enabled: false
      all-1g.24gb:
      - devices: all
        mig-enabled: true
        mig-devices: {"1g.24gb": 4}
"#;

const QUOTAS_V2: &str = r#"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: notebooks}
spec:
  cohortName: research
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: rtx
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 2}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: batch}
spec:
  cohortName: research
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: rtx
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 3}
"#;

fn model() -> Model {
    gpuquota_model::import_str("platform.yaml", PLATFORM)
        .expect("valid platform")
        .model
}

fn start() -> Timestamp {
    Timestamp::parse("2026-04-01T00:00:00Z").expect("valid time")
}

/// A month: 30 days in ms.
const END: i64 = 30 * 24 * 3_600_000;

fn read(rel: &str) -> Result<(String, String), Diagnostic> {
    match rel {
        "quotas-v2.yaml" => Ok((rel.to_owned(), QUOTAS_V2.to_owned())),
        "broken.yaml" => Ok((
            rel.to_owned(),
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: x}\nspec: {resourceGroups: 3}\n".to_owned(),
        )),
        "jobs.yaml" => Ok((
            rel.to_owned(),
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w, namespace: ns}\nspec:\n  queueName: lq\n  podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c}]}}}]\n".to_owned(),
        )),
        _ => Err(Diagnostic::error(codes::READ_FAILED, format!("{rel}: no such file")).source(rel)),
    }
}

fn summary(c: &Changes) -> Vec<(Kind, &str, Change)> {
    c.objects
        .iter()
        .map(|o| (o.kind, o.key.as_str(), o.change))
        .collect()
}

fn parse(v: Value) -> Result<Timeline, Diagnostics> {
    Timeline::parse("scenario.yaml", &v, start(), Some(END), &model(), &read)
}

/// `(field, message)` of every error.
fn errors(v: Value) -> Vec<(String, String)> {
    parse(v)
        .expect_err("the timeline is refused")
        .errors()
        .map(|d| (d.field.clone(), d.message.clone()))
        .collect()
}

#[test]
fn events_sort_by_time_and_keep_document_order_at_the_same_instant() {
    let t = parse(json!([
        {"at": "2h", "nodes": {"drain": ["rtx-b"]}},
        {"at": "2026-04-01T01:00:00Z", "nodes": {"down": ["rtx-a"]}},
        {"at": "120m", "nodes": {"up": ["rtx-a"]}},
        {"at": "216h", "patch": [{"kind": "ClusterQueue", "name": "batch", "mergePatch": {"spec": {"stopPolicy": "Hold"}}}]},
    ]))
    .expect("valid timeline");
    let order: Vec<(usize, i64)> = t.events.iter().map(|e| (e.index, e.at_ms)).collect();
    // 01:00 = 3,600,000 ms; 2h and 120m both 7,200,000 ms, document order 0 then 2;
    // 216h = 777,600,000 ms.
    assert_eq!(
        order,
        [
            (1, 3_600_000),
            (0, 7_200_000),
            (2, 7_200_000),
            (3, 777_600_000)
        ]
    );
    assert!(t.warnings.is_empty());
}

#[test]
fn a_merge_patch_is_read_back_as_the_api_server_stores_it_and_applied() {
    let t = parse(json!([
        {"at": "1h", "patch": [{"kind": "ClusterQueue", "name": "batch",
          "mergePatch": {"spec": {"stopPolicy": "HoldAndDrain"}}}]},
    ]))
    .expect("valid timeline");
    let (m, changes) = apply(model(), &t.events[0]);
    let cq = &m.cluster_queues["batch"];
    assert_eq!(cq.spec.stop_policy, Some(StopPolicy::HoldAndDrain));
    // Everything else is kept: the cohort and the quota of 4 with its lending limit of 2.
    assert_eq!(cq.spec.cohort_name.as_deref(), Some("research"));
    let q = &cq.spec.resource_groups[0].flavors[0].resources[0];
    assert_eq!(q.nominal_quota.as_ref().and_then(|q| q.value()), Some(4));
    assert_eq!(q.lending_limit.as_ref().and_then(|q| q.value()), Some(2));
    assert_eq!(
        summary(&changes),
        [(Kind::ClusterQueue, "batch", Change::Replaced)]
    );
    // The object before the change comes with it: no stop policy then.
    match &changes.objects[0].before {
        Some(Object::ClusterQueue(old)) => assert_eq!(old.spec.stop_policy, None),
        other => panic!("{other:?}"),
    }
}

#[test]
fn later_patches_see_what_earlier_events_left() {
    let t = parse(json!([
        {"at": "2h", "patch": [{"kind": "ClusterQueue", "name": "batch",
          "mergePatch": {"spec": {"stopPolicy": "Hold"}}}]},
        {"at": "1h", "patch": [{"kind": "ClusterQueue", "name": "batch",
          "mergePatch": {"spec": {"resourceGroups": [{"coveredResources": ["nvidia.com/gpu"],
            "flavors": [{"name": "rtx", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 6}]}]}]}}}]},
    ]))
    .expect("valid timeline");
    let mut m = model();
    for e in &t.events {
        apply_in_place(&mut m, e);
    }
    let cq = &m.cluster_queues["batch"];
    assert_eq!(cq.spec.stop_policy, Some(StopPolicy::Hold));
    // The list was replaced whole (RFC 7386): quota 6, the lending limit gone.
    let q = &cq.spec.resource_groups[0].flavors[0].resources[0];
    assert_eq!(q.nominal_quota.as_ref().and_then(|q| q.value()), Some(6));
    assert_eq!(q.lending_limit, None);
}

#[test]
fn a_patch_that_makes_the_object_invalid_is_refused_with_the_validators_message() {
    // Leaving the cohort while a lending limit is set: Kueue's rule "must be nil when cohort
    // is empty".
    let e = errors(json!([
        {"at": "1h"},
        {"at": "3h", "patch": [{"kind": "ClusterQueue", "name": "batch",
          "mergePatch": {"spec": {"cohortName": null}}}]},
    ]));
    assert_eq!(
        e,
        [(
            "spec.timeline[1].patch[0].mergePatch".to_owned(),
            "ClusterQueue \"batch\": spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: \
             Invalid value: \"2\": must be nil when cohort is empty"
                .to_owned()
        )]
    );
}

#[test]
fn a_patch_of_the_wrong_shape_is_refused_by_the_reader() {
    let e = errors(json!([
        {"at": "1h", "patch": [{"kind": "ClusterQueue", "name": "batch",
          "mergePatch": {"spec": {"resourceGroups": "many"}}}]},
    ]));
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].0, "spec.timeline[0].patch[0].mergePatch");
    assert!(e[0].1.contains("spec.resourceGroups"), "{e:?}");
}

#[test]
fn unknown_objects_kinds_and_renames_are_refused() {
    let e = errors(json!([
        {"at": "1h",
         "patch": [
            {"kind": "ClusterQueue", "name": "nope", "mergePatch": {}},
            {"kind": "Workload", "name": "w", "mergePatch": {}},
            {"kind": "ClusterQueue", "name": "batch", "mergePatch": {"metadata": {"name": "other"}}},
         ],
         "delete": [{"kind": "Cohort", "name": "ghost"}]},
    ]));
    let kinds = "ResourceFlavor, ClusterQueue, Cohort, LocalQueue, WorkloadPriorityClass, \
                 PriorityClass, Namespace, ResourceQuota, Node, Queue, Budget";
    assert_eq!(
        e,
        [
            (
                "spec.timeline[0].patch[0].name".to_owned(),
                "ClusterQueue \"nope\" does not exist at this instant".to_owned()
            ),
            (
                "spec.timeline[0].patch[1].kind".to_owned(),
                format!("\"Workload\" is not a kind a timeline changes ({kinds})")
            ),
            (
                "spec.timeline[0].patch[2].mergePatch".to_owned(),
                "a merge patch may not rename an object or change its kind or apiVersion"
                    .to_owned()
            ),
            (
                "spec.timeline[0].delete[0]".to_owned(),
                "Cohort \"ghost\" does not exist at this instant".to_owned()
            ),
        ]
    );
}

#[test]
fn events_outside_the_run_are_refused() {
    let e = errors(json!([
        {"at": "2026-03-31T23:00:00Z"},
        {"at": "720h"},
        {"at": "soon"},
        {"nodes": {"down": ["rtx-a"]}},
    ]));
    assert_eq!(
        e,
        [
            (
                "spec.timeline[0].at".to_owned(),
                "\"2026-03-31T23:00:00Z\" is before spec.start: outside the run".to_owned()
            ),
            (
                "spec.timeline[1].at".to_owned(),
                "\"720h\" is 2592000000 ms after spec.start, not before spec.end (2592000000 ms): \
                 outside the run"
                    .to_owned()
            ),
            (
                "spec.timeline[2].at".to_owned(),
                "\"soon\" is neither an RFC 3339 time nor a Go duration from spec.start".to_owned()
            ),
            (
                "spec.timeline[3].at".to_owned(),
                "required: the event's instant (RFC 3339, or a Go duration from spec.start)"
                    .to_owned()
            ),
        ]
    );
}

#[test]
fn unknown_nodes_and_mig_configs_are_refused() {
    let e = errors(json!([
        {"at": "1h", "nodes": {"down": ["rtx-a"], "up": ["rtx-a", "ghost"], "drainDeadline": "2h"},
         "migLayout": {"node": "rtx-c", "config": "all-2g.48gb"}},
    ]));
    assert_eq!(
        e,
        [
            (
                "spec.timeline[0].nodes.up[0]".to_owned(),
                "node \"rtx-a\" is named twice in this event's nodes".to_owned()
            ),
            (
                "spec.timeline[0].nodes.up[1]".to_owned(),
                "\"ghost\" is not a Node of the cluster at this instant".to_owned()
            ),
            (
                "spec.timeline[0].nodes.drainDeadline".to_owned(),
                "needs nodes to drain (nodes.drain)".to_owned()
            ),
            (
                "spec.timeline[0].migLayout.node".to_owned(),
                "\"rtx-c\" is not a Node of the cluster at this instant".to_owned()
            ),
            (
                "spec.timeline[0].migLayout.config".to_owned(),
                "no mig-parted config of the cluster files' ConfigMaps defines \"all-2g.48gb\" \
                 (defined: all-1g.24gb, all-disabled)"
                    .to_owned()
            ),
        ]
    );
}

/// A MIG layout the node's GPUs cannot take is refused where it is named: rtx-a has no
/// `nvidia.com/gpu.product` label, so no catalogue model.
#[test]
fn a_mig_layout_needs_a_node_the_catalogue_knows() {
    let e = errors(json!([
        {"at": "1h", "migLayout": {"node": "rtx-a", "config": "all-1g.24gb"}},
    ]));
    assert_eq!(
        e,
        [(
            "spec.timeline[0].migLayout.config".to_owned(),
            "Node \"rtx-a\" has no nvidia.com/gpu.product label".to_owned()
        )]
    );
}

#[test]
fn node_events_and_a_mig_window_change_the_nodes() {
    let t = parse(json!([
        {"at": "24h", "nodes": {"down": ["rtx-a"], "drain": ["rtx-b"], "drainDeadline": "2h"},
         "migLayout": {"node": "rtx-b", "config": "all-1g.24gb"}},
        {"at": "48h", "nodes": {"up": ["rtx-a", "rtx-b"]}},
    ]))
    .expect("valid timeline");
    let (m, c) = apply(model(), &t.events[0]);
    assert_eq!(c.nodes_down, ["rtx-a"]);
    assert_eq!(c.nodes_drained, ["rtx-b"]);
    assert_eq!(c.drain_deadline_ms, Some(7_200_000));
    let req = MigLayoutRequest {
        node: "rtx-b".into(),
        config: "all-1g.24gb".into(),
    };
    assert_eq!(c.mig_layout.as_ref(), Some(&req));
    let a = &m.nodes["rtx-a"].spec;
    assert_eq!(
        (a.taints[0].key.as_str(), a.taints[0].effect.as_str()),
        (UNREACHABLE_TAINT, "NoExecute")
    );
    assert_eq!(m.nodes["rtx-b"].spec.unschedulable, Some(true));
    let (mut m, c) = apply(m, &t.events[1]);
    assert_eq!(c.nodes_up, ["rtx-a", "rtx-b"]);
    assert!(m.nodes["rtx-a"].spec.taints.is_empty());
    assert_eq!(m.nodes["rtx-b"].spec.unschedulable, None);
    assert!(finish_mig_layout(&mut m, &req));
    assert_eq!(
        m.nodes["rtx-b"].metadata.labels[MIG_CONFIG_LABEL],
        "all-1g.24gb"
    );
}

#[test]
fn applied_files_create_and_replace_and_deletes_remove() {
    let t = parse(json!([
        {"at": "12h", "apply": ["quotas-v2.yaml"], "delete": [{"kind": "ClusterQueue", "name": "batch"}]},
    ]))
    .expect("valid timeline");
    let e = &t.events[0];
    let fields: Vec<&str> = e.objects.iter().map(|o| o.field.as_str()).collect();
    assert_eq!(
        fields,
        [
            "spec.timeline[0].apply[0]",
            "spec.timeline[0].apply[0]",
            "spec.timeline[0].delete[0]"
        ]
    );
    let (m, c) = apply(model(), e);
    // The file's objects by key: batch (replaced), then notebooks (created); then the delete.
    assert_eq!(
        summary(&c),
        [
            (Kind::ClusterQueue, "batch", Change::Replaced),
            (Kind::ClusterQueue, "notebooks", Change::Created),
            (Kind::ClusterQueue, "batch", Change::Deleted)
        ]
    );
    // Before: the cluster files' batch (quota 4), nothing, the file's batch (quota 3).
    let quota = |o: &Option<Object>| match o {
        Some(Object::ClusterQueue(cq)) => cq.spec.resource_groups[0].flavors[0].resources[0]
            .nominal_quota
            .as_ref()
            .and_then(|q| q.value()),
        _ => None,
    };
    let before: Vec<Option<i64>> = c.objects.iter().map(|o| quota(&o.before)).collect();
    assert_eq!(before, [Some(4), None, Some(3)]);
    assert_eq!(m.cluster_queues.keys().collect::<Vec<_>>(), ["notebooks"]);
}

#[test]
fn applied_files_hold_platform_objects_only_and_must_read() {
    let e = errors(json!([
        {"at": "1h", "apply": ["jobs.yaml", "missing.yaml"]},
    ]));
    assert_eq!(e.len(), 2, "{e:?}");
    assert_eq!(e[0].0, "spec.timeline[0].apply[0]");
    assert!(
        e[0].1.starts_with(
            "jobs.yaml holds a Workload: a timeline changes the platform's objects only"
        ),
        "{e:?}"
    );
    assert_eq!(
        e[1],
        (
            "spec.timeline[0].apply[1]".to_owned(),
            "missing.yaml: no such file".to_owned()
        )
    );
}

#[test]
fn unknown_fields_are_warnings_with_their_path() {
    let t = parse(json!([
        {"at": "1h", "nodes": {"dwn": ["rtx-a"]}, "patch": [{"kind": "Cohort", "name": "research", "mergePatch": {}, "merge": 1}]},
    ]))
    .expect("warnings only");
    let w: Vec<String> = t.warnings.iter().map(|d| d.field.clone()).collect();
    assert_eq!(
        w,
        [
            "spec.timeline[0].nodes.dwn",
            "spec.timeline[0].patch[0].merge"
        ]
    );
    assert_eq!(t.events[0].objects.len(), 1);
}

#[test]
fn no_timeline_is_an_empty_one() {
    assert_eq!(parse(Value::Null).expect("valid"), Timeline::default());
    assert_eq!(
        errors(json!({"at": "1h"})),
        [(
            "spec.timeline".to_owned(),
            "must be a list of events".to_owned()
        )]
    );
}

#[test]
fn unknown_fields_inside_a_merge_patch_are_the_readers_warnings() {
    let t = parse(json!([
        {"at": "1h", "patch": [{"kind": "ClusterQueue", "name": "batch",
          "mergePatch": {"spec": {"stopPolicyy": "Hold"}}}]},
    ]))
    .expect("warnings only");
    let w: Vec<(String, String)> = t
        .warnings
        .iter()
        .map(|d| (d.field.clone(), d.message.clone()))
        .collect();
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].0, "spec.timeline[0].patch[0].mergePatch");
    assert!(
        w[0].1
            .starts_with("ClusterQueue \"batch\": spec.stopPolicyy: unknown field"),
        "{w:?}"
    );
    // The object is stored without the unknown member: no stop policy.
    let (m, _) = apply(model(), &t.events[0]);
    assert_eq!(m.cluster_queues["batch"].spec.stop_policy, None);
}

#[test]
fn an_applied_file_that_does_not_read_is_refused_naming_the_event() {
    let e = errors(json!([{"at": "1h", "apply": ["broken.yaml"]}]));
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].0, "spec.timeline[0].apply[0]");
    // The reader's own line: file and document, then the field.
    assert!(e[0].1.starts_with("broken.yaml (document 1): "), "{e:?}");
    assert!(e[0].1.contains("spec.resourceGroups"), "{e:?}");
}
