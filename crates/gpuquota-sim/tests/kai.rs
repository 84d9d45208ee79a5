//! KAI mode: scenarios and KAI's time-based-fairshare simulator config.

use std::path::Path;

use gpuquota_sim::kai;

fn data(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/kai").join(name)
}

#[test]
fn night_debug() {
    let sc = kai::load(&data("night.yaml")).expect("scenario");
    let out = kai::simulate(&sc).expect("run");
    let j = out.to_json();
    println!("{}", serde_json::to_string_pretty(&j["workloads"]).unwrap());
    println!("{}", out.to_table());
    println!("{:?} {}", out.warnings, out.sessions);
}
