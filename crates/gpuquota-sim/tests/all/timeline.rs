//! `spec.timeline` under Kueue and ResourceQuota: the platform changes while the run goes
//! on. The first four tests port upstream integration tests (kubernetes-sigs/kueue
//! test/integration/singlecluster/scheduler/scheduler_test.go) as scenario files under
//! `tests/data/timeline/`, with upstream's expectations and hand-computed times.

use std::path::Path;

use serde_json::Value;

use crate::common::H;

fn run(name: &str) -> (Value, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/timeline")
        .join(name);
    let sim = gpuquota_sim::fuzzing::load(&path).expect("valid scenario");
    let r = gpuquota_sim::fuzzing::run_kueue(&sim).expect("simulates");
    (r.to_json(), r.to_table())
}

/// Upstream: "Using cohorts for sharing with LendingLimit" / "Should admit workloads using
/// borrowed ClusterQueue". `wl` asks 9 CPUs of `prod-cq` (5 nominal): pending until
/// `dev-cq` (5 nominal, lending 4) joins cohort `all` at 1 h; then admitted at once in
/// `prod-cq` with 9 CPUs of `on-demand` (5 own + 4 borrowed); its 2 h run ends at 3 h.
#[test]
fn a_new_cluster_queue_lends_at_once() {
    let (j, table) = run("add-cluster-queue.yaml");
    let w = &j["workloads"][0];
    assert_eq!(w["workload"], "ns/wl");
    assert_eq!(w["runs"].as_array().map(Vec::len), Some(1));
    assert_eq!(w["runs"][0]["startMs"], H);
    assert_eq!(w["runs"][0]["endMs"], 3 * H);
    assert_eq!(w["runs"][0]["usage"]["on-demand"]["cpu"], "9");
    assert_eq!(w["finishedMs"], 3 * H);
    let e = &j["timeline"][0];
    assert_eq!(e["index"], 0);
    assert_eq!(e["atMs"], H);
    assert_eq!(
        e["changes"][0],
        serde_json::json!({"kind": "ClusterQueue", "name": "dev-cq", "change": "created"})
    );
    assert_eq!(e["capacityBefore"]["on-demand"]["cpu"], "5");
    assert_eq!(e["capacityAfter"]["on-demand"]["cpu"], "10");
    assert_eq!(e["evicted"], serde_json::json!([]));
    assert!(
        table.contains("Timeline event 0 at 01:00: ClusterQueue dev-cq created. Quota on-demand/cpu=5 -> on-demand/cpu=10."),
        "{table}"
    );
}
