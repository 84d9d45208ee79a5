//! Timeline events for a Kueue scenario: the 1,000-event figure on Kueue's baseline.

use gpuquota_sim::Simulation;
use gpuquota_sim::timeline::Timeline;
use serde_json::{Value, json};

/// Gives `sim` (Kueue's baseline perf config: ClusterQueues of flavor `rf`, 20 CPUs
/// nominal) `n` timeline events, one every 50 ms of virtual time from 0: event `k` patches
/// ClusterQueue number `k mod queues`, its `borrowingLimit` 99 CPUs for an even `k / queues`
/// and 100 for an odd one, so every event really changes a quota (the driver updates its
/// world in place and carries the admitted workloads across), while a limit of 99 instead of 100
/// over a cohort of 120 CPUs rarely changes a decision. `n = 0` leaves `sim` alone.
///
/// # Panics
/// When `sim` is not a Kueue scenario or the events do not read (a bench input).
pub fn with_quota_events(sim: &mut Simulation, n: usize) {
    if n == 0 {
        return;
    }
    let sc = sim.kueue_mut().expect("a Kueue scenario");
    let queues: Vec<String> = sc.model.cluster_queues.keys().cloned().collect();
    let events: Vec<Value> = (0..n)
        .map(|k| {
            json!({
                "at": format!("{}ms", 50 * k),
                "patch": [{
                    "kind": "ClusterQueue",
                    "name": queues[k % queues.len()],
                    "mergePatch": {"spec": {"resourceGroups": [{
                        "coveredResources": ["cpu"],
                        "flavors": [{"name": "rf", "resources": [{
                            "name": "cpu",
                            "nominalQuota": "20",
                            "borrowingLimit": if (k / queues.len()).is_multiple_of(2) { "99" } else { "100" }
                        }]}]
                    }]}}
                }]
            })
        })
        .collect();
    sc.timeline = Timeline::parse(
        "bench.yaml",
        &Value::Array(events),
        sc.start,
        sc.end_ms,
        &sc.model,
        &|f| {
            Err(gpuquota_model::Diagnostic::error(
                gpuquota_model::diag::codes::NOT_FOUND,
                format!("{f}: no files"),
            ))
        },
    )
    .expect("valid timeline");
}
