//! Hand-checked planning scenarios.

use crate::common::solve;

#[test]
fn issue_example_shape() {
    let plan = solve(
        r#"
mode: keep-busy-gpus
weights: count
gpus:
  - node: node-a
    index: 0
    model: NVIDIA A100-SXM4-40GB
    instances:
      - {profile: 3g.20gb, start: 4, busy: true}
demand:
  - {resource: nvidia.com/mig-2g.10gb, count: 3}
"#,
    );
    // The busy GPU keeps its layout; its free units cannot be re-cut under keep-busy-gpus.
    assert_eq!((plan.value, plan.reconfigured, plan.optimal), (0, 0, true));
    assert_eq!(plan.satisfied.get("nvidia.com/mig-2g.10gb"), Some(&0));
    assert!(!plan.gpus[0].changed);
}

#[test]
fn pin_busy_instances_recuts_free_units() {
    let plan = solve(
        r#"
mode: pin-busy-instances
gpus:
  - node: node-a
    index: 0
    model: NVIDIA A100-SXM4-40GB
    instances:
      - {profile: 3g.20gb, start: 4, busy: true}
demand:
  - {resource: nvidia.com/mig-2g.10gb, count: 3}
"#,
    );
    assert_eq!(
        (plan.value, plan.reconfigured, plan.fragmentation),
        (2, 1, 0)
    );
    let got: Vec<(&str, u8, bool)> = plan.gpus[0]
        .instances
        .iter()
        .map(|i| (i.profile.as_str(), i.start, i.busy))
        .collect();
    assert_eq!(
        got,
        [
            ("2g.10gb", 0, false),
            ("2g.10gb", 2, false),
            ("3g.20gb", 4, true)
        ]
    );
    let json = serde_json::to_string(&plan).unwrap();
    assert_eq!(
        json,
        r#"{"value":2,"reconfigured":1,"fragmentation":0,"optimal":true,"satisfied":{"nvidia.com/mig-2g.10gb":2},"gpus":[{"node":"node-a","index":0,"changed":true,"instances":[{"profile":"2g.10gb","start":0,"busy":false},{"profile":"2g.10gb","start":2,"busy":false},{"profile":"3g.20gb","start":4,"busy":true}]}]}"#
    );
}

fn layout_of(plan: &gpuquota_mig::Plan, gpu: usize) -> Vec<(String, u8)> {
    plan.gpus[gpu]
        .instances
        .iter()
        .map(|i| (i.profile.clone(), i.start))
        .collect()
}

#[test]
fn two_g_then_four_g_both_fit() {
    // First fit would put 2g at 0 and lose the 4g (NVIDIA's MIG user guide: placements).
    let plan = solve(
        "gpus: [{node: a, index: 0, model: A100-40GB, instances: []}]\n\
         demand: [{profile: 2g.10gb, count: 1}, {profile: 4g.20gb, count: 1}]\n",
    );
    assert_eq!(
        (plan.value, plan.reconfigured, plan.fragmentation),
        (2, 1, 0)
    );
    assert_eq!(
        layout_of(&plan, 0),
        [("4g.20gb".to_owned(), 0), ("2g.10gb".to_owned(), 4)]
    );
}

#[test]
fn compute_weights_prefer_the_big_profile() {
    let plan = solve(
        "weights: compute-slices\n\
         gpus: [{node: a, index: 0, model: A100-40GB, instances: []}]\n\
         demand: [{profile: 7g.40gb, count: 1}, {profile: 1g.5gb, count: 1}]\n",
    );
    assert_eq!(plan.value, 7);
    assert_eq!(plan.satisfied["nvidia.com/mig-7g.40gb"], 1);
    assert_eq!(plan.satisfied["nvidia.com/mig-1g.5gb"], 0);
}

#[test]
fn fragmentation_places_three_g_high() {
    // 3g@4 keeps 4g@0 possible (F = 0); 3g@0 would strand a slice (F = 1).
    let plan = solve(
        "gpus: [{node: a, index: 0, model: A100-80GB, instances: []}]\n\
         demand: [{resource: nvidia.com/mig-3g.40gb, count: 1}]\n",
    );
    assert_eq!((plan.value, plan.fragmentation), (1, 0));
    assert!(layout_of(&plan, 0).contains(&("3g.40gb".to_owned(), 4)));
}

#[test]
fn keeps_matching_layouts_and_reconfigures_only_what_it_must() {
    let plan = solve(
        "gpus:\n\
         - {node: a, index: 0, model: H100-80GB, instances: [{profile: 7g.80gb, start: 0}]}\n\
         - {node: a, index: 1, model: H100-80GB, instances: [{profile: 7g.80gb, start: 0}]}\n\
         demand: [{profile: 7g.80gb, count: 1}, {profile: 1g.10gb, count: 7}]\n",
    );
    assert_eq!((plan.value, plan.reconfigured), (8, 1));
    assert!(!plan.gpus[0].changed && plan.gpus[1].changed);
    assert_eq!(layout_of(&plan, 1).len(), 7);
}

#[test]
fn mig_disabled_gpus_and_whole_gpu_work() {
    let plan = solve(
        "gpus:\n\
         - {node: a, index: 0, model: A30, busy: true}\n\
         - {node: a, index: 1, model: A30}\n\
         demand: [{profile: 2g.12gb, count: 4}]\n",
    );
    assert_eq!((plan.value, plan.reconfigured), (2, 1));
    assert!(!plan.gpus[0].mig_enabled && plan.gpus[0].instances.is_empty());
    assert!(plan.gpus[1].mig_enabled && plan.gpus[1].changed);
}

#[test]
fn mig_parted_export_and_placements() {
    let plan = solve(
        "gpus:\n\
         - {node: a, index: 0, model: A100-40GB, instances: []}\n\
         - {node: a, index: 1, model: A100-40GB}\n\
         - {node: b, index: 0, model: A100-40GB, instances: [{profile: 3g.20gb, start: 4, busy: true}]}\n\
         demand: [{profile: 1g.5gb, count: 7}]\n",
    );
    // Cutting GPU 0 or enabling MIG on GPU 1 tie on (W, R, F); the later GPU changes.
    assert_eq!(
        gpuquota_mig::mig_parted_config(&plan),
        "version: v1\nmig-configs:\n  \"a\":\n    - devices: [0]\n      mig-enabled: true\n      \
         mig-devices: {}\n    - devices: [1]\n      mig-enabled: true\n      mig-devices:\n        \
         \"1g.5gb\": 7\n  \"b\":\n    - devices: [0]\n      mig-enabled: true\n      \
         mig-devices:\n        \"3g.20gb\": 1\n"
    );
    let placements = gpuquota_mig::placements_yaml(&plan, gpuquota_mig::Catalogue::builtin());
    assert!(
        placements
            .contains("{profile: \"1g.5gb\", profile-id: 19, start: 6, size: 1, busy: false}")
    );
    assert!(
        placements.contains("{profile: \"3g.20gb\", profile-id: 9, start: 4, size: 4, busy: true}")
    );
}

#[test]
fn resource_names_accept_plus_and_profiles() {
    let plan = solve(
        "gpus: [{node: r, index: 0, model: NVIDIA RTX PRO 6000 Blackwell Server Edition, instances: []}]\n\
         demand: [{resource: nvidia.com/mig-1g.24gb+me.all, count: 1}, {profile: 1g.24gb-me, count: 5}]\n",
    );
    assert_eq!(plan.satisfied["nvidia.com/mig-1g.24gb.me.all"], 1);
    assert_eq!(plan.satisfied["nvidia.com/mig-1g.24gb-me"], 3);
    assert_eq!(plan.value, 4);
}

#[test]
fn input_errors_name_gpu_profile_and_line() {
    let req = crate::common::request(
        "gpus:\n\
         - {node: n, index: 3, model: A100-40GB, instances: [{profile: 4g.20gb, start: 4}, {profile: 2g.5gb, start: 0}]}\n\
         - {node: n, index: 4, model: Tesla T4}\n\
         demand: [{resource: nvidia.com/gpu, count: 1}]\n",
    );
    let errors = req.resolve(gpuquota_mig::Catalogue::builtin()).unwrap_err();
    let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        text,
        [
            "node n GPU 3: model A100-40GB has no MIG profile \"2g.5gb\"",
            "node n GPU 3: profile 4g.20gb cannot start at 4 (allowed starts: [0])",
            "node n GPU 4: unknown GPU model \"Tesla T4\"",
            "demand[0]: \"nvidia.com/gpu\" is not a MIG resource name (nvidia.com/mig-<profile>)",
        ]
    );
}

#[test]
fn unknown_fields_are_reported_not_fatal() {
    let (req, unknown, skipped) = gpuquota_mig::PlanRequest::from_yaml(
        "{\"mode\": \"pin-busy-instances\", \"colour\": 1, \"gpus\": [], \"demand\": [{\"profile\": \"1g.5gb\", \"count\": 1, \"x\": 2}]}",
    )
    .unwrap();
    assert_eq!(req.mode, gpuquota_mig::Mode::PinBusyInstances);
    assert_eq!(unknown, ["colour", "demand.0.x"]);
    assert!(skipped.is_empty());
}

#[test]
fn empty_input_is_an_error_not_an_empty_plan() {
    for text in ["", "  \n", "# only a comment\n---\n"] {
        let e = gpuquota_mig::PlanRequest::from_yaml(text).unwrap_err();
        assert_eq!(
            e.to_string(),
            "empty input: expected a mapping with `gpus` and `demand`"
        );
    }
}

#[test]
fn demand_for_a_profile_no_model_has_is_rejected() {
    let req = crate::common::request(
        "gpus: [{node: n, index: 0, model: A100-40GB, instances: []}]\n\
         demand: [{resource: nvidia.com/mig-9g.5gb, count: 1}, {profile: 1g.5gb, count: 1},\n\
         \x20        {resource: nvidia.com/mig-1g.18gb, count: 2}]\n",
    );
    let errors = req.resolve(gpuquota_mig::Catalogue::builtin()).unwrap_err();
    let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
    // 1g.18gb is an H200 profile: valid demand even though no GPU of the input offers it.
    assert_eq!(
        text,
        ["demand[0]: \"nvidia.com/mig-9g.5gb\" is not the resource of any catalogue profile"]
    );
}
