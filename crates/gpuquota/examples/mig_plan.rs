//! MIG layout planning: the layouts that serve a demand, changing as few GPUs as possible,
//! exported as a mig-parted config.
//!
//! Run with `cargo run -p gpuquota --example mig_plan`.

use gpuquota::mig::{
    Catalogue, DemandSpec, GpuSpec, Input, InstanceSpec, Options, PlanRequest, mig_parted_config,
    run,
};

/// GPU 0 runs a busy 3g.20gb instance; GPU 1 has MIG on and nothing cut. Demand: 3 × 2g.10gb.
const REQUEST: &str = r#"
mode: keep-busy-gpus
weights: count
gpus:
  - {node: node-a, index: 0, model: NVIDIA A100-SXM4-40GB,
     instances: [{profile: 3g.20gb, start: 4, busy: true}]}
  - {node: node-a, index: 1, model: NVIDIA A100-SXM4-40GB, instances: []}
demand:
  - {resource: nvidia.com/mig-2g.10gb, count: 3}
"#;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (request, unknown_fields, skipped_documents) = PlanRequest::from_yaml(REQUEST)?;
    assert!(unknown_fields.is_empty() && skipped_documents.is_empty());
    // The uniform entry point: the checked input from the request, then the run.
    let p = run(&Input::new(
        &request,
        Catalogue::builtin(),
        &Options::default(),
    )?);
    println!(
        "served {} of the demand, {} GPU(s) reconfigured, optimal: {}",
        p.value, p.reconfigured, p.optimal
    );
    for gpu in &p.gpus {
        let layout: Vec<String> = gpu
            .instances
            .iter()
            .map(|i| format!("{}@{}", i.profile, i.start))
            .collect();
        println!("{}/{}: {}", gpu.node, gpu.index, layout.join(" "));
    }
    assert_eq!((p.value, p.reconfigured, p.optimal), (3, 1, true));

    // The same request built as plain Rust values, without YAML, plans the same.
    let gpu = |index: u32, instances: Vec<InstanceSpec>| GpuSpec {
        node: "node-a".into(),
        index,
        model: "NVIDIA A100-SXM4-40GB".into(),
        instances: Some(instances),
        busy: false,
    };
    let by_hand = PlanRequest {
        gpus: vec![
            gpu(
                0,
                vec![InstanceSpec {
                    profile: "3g.20gb".into(),
                    start: 4,
                    busy: true,
                }],
            ),
            gpu(1, Vec::new()),
        ],
        demand: vec![DemandSpec {
            resource: Some("nvidia.com/mig-2g.10gb".into()),
            profile: None,
            count: 3,
            weight: None,
        }],
        ..PlanRequest::default()
    };
    assert_eq!(by_hand, request);
    let input = Input::new(&by_hand, Catalogue::builtin(), &Options::default())?;
    assert_eq!(run(&input), p);
    print!("{}", mig_parted_config(&p));
    Ok(())
}
