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
