//! Kueue's classical preemption loop over virtual time: bounded at one instant as upstream's
//! eviction timing bounds it, reported, and virtual time advances.

use std::path::Path;

use serde_json::json;

const H: i64 = 3_600_000;

fn load(latency: Option<&str>) -> gpuquota_sim::Simulation {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/preemption-loop/loop.yaml");
    let mut text = std::fs::read_to_string(&path).expect("scenario");
    if let Some(l) = latency {
        text.push_str(&format!("  kueue: {{cycleLatency: {l}}}\n"));
    }
    let cluster = path.with_file_name("cluster.yaml");
    gpuquota_sim::fuzzing::scenario("loop.yaml", &text, "loop", &|_| {
        Ok((
            "cluster.yaml".to_owned(),
            std::fs::read_to_string(&cluster).expect("cluster"),
        ))
    })
    .expect("valid scenario")
}

/// The timeline, by hand: at 0 ms cycle 1 admits w0 (borrowing level 1 goes first), cycle 2
/// w1 preempts it (`InCohortReclaimWhileBorrowing`), cycle 3 readmits w0 ahead of w1, cycle 4
/// w1 preempts it again: its second eviction at 0 ms, so w0 is held back to 1 ms and cycle 5
/// admits w1. At 1 ms w0 finds no room and may not preempt w1 (priority 2 > 0); it is
/// readmitted when w1 finishes at 1 h and finishes at 2 h. Before the bound w0 had 36 runs
/// at 0 ms, the instant was cut at 72 cycles and nothing ran for the 4 hours.
#[test]
fn classical_loop_is_held_back_reported_and_time_advances() {
    let r = gpuquota_sim::fuzzing::run_kueue(&load(None)).expect("simulates");
    let j = r.to_json();
    let runs = |i: usize| -> Vec<(i64, i64, String, String)> {
        j["workloads"][i]["runs"]
            .as_array()
            .expect("runs")
            .iter()
            .map(|x| {
                (
                    x["startMs"].as_i64().expect("start"),
                    x["endMs"].as_i64().expect("end"),
                    x["end"].as_str().expect("end").to_owned(),
                    x["by"].as_str().unwrap_or("").to_owned(),
                )
            })
            .collect()
    };
    assert_eq!(j["workloads"][0]["workload"], "ns/w0");
    let p = |s: &str| s.to_owned();
    assert_eq!(
        runs(0),
        [
            (0, 0, p("Preempted"), p("ns/w1")),
            (0, 0, p("Preempted"), p("ns/w1")),
            (H, 2 * H, p("Finished"), p("")),
        ]
    );
    assert_eq!(
        j["workloads"][0]["runs"][0]["reason"],
        "InCohortReclaimWhileBorrowing"
    );
    assert_eq!(runs(1), [(0, H, p("Finished"), p(""))]);
    assert_eq!(j["workloads"][0]["finishedMs"], 2 * H);
    assert_eq!(j["makespanMs"], 2 * H);
    assert_eq!(j["preemptions"], 2);
    assert_eq!(
        j["preemptionLoops"],
        json!([{"preemptor": "ns/w1", "victim": "ns/w0", "preemptions": 2, "firstMs": 0, "lastMs": 0, "heldBack": 1}])
    );
    assert_eq!(
        j["warnings"],
        json!([
            "Workload \"ns/w1\": preemption loop: ns/w1 preempted ns/w0 2 times between 0 ms and 0 ms; held back to the next millisecond 1 time(s) after a second eviction at one instant; the victim was readmitted ahead of its preemptor (Kueue loops the same way at its default feature gates)"
        ])
    );
    assert_eq!(r.diagnostics.len(), 1);
    assert_eq!(r.diagnostics.0[0].code.as_str(), "preemption-loop");
    let table = r.to_table();
    assert!(
        table
            .contains("ns/w1 preempted ns/w0 2 times between 00:00 and 00:00 (a preemption loop)."),
        "{table}"
    );
    assert_eq!(r.outcome.held_back.len(), 1);
    assert_eq!(r.outcome.held_back[0].at_ms, 0);
}

/// With a cycle latency every cycle is an instant of its own (a cycle at `t` evicts at `t`
/// and its admissions start at `t + 1 s`), so nothing is held back and the loop is
/// upstream's, spread over virtual time: 0 s w0 admitted (from 1 s), 1 s w1 preempts it,
/// 2 s w0 readmitted ahead of w1 (from 3 s), 3 s w1 preempts it again, and so on every
/// 2 s: 7,200 preemptions at 1 s, 3 s, …, 14,399 s, and w1 never runs in the 4 hours.
#[test]
fn with_a_cycle_latency_the_loop_spreads_over_time() {
    let r = gpuquota_sim::fuzzing::run_kueue(&load(Some("1s"))).expect("simulates");
    let j = r.to_json();
    assert_eq!(j["preemptions"], 7200);
    assert_eq!(
        j["preemptionLoops"],
        json!([{"preemptor": "ns/w1", "victim": "ns/w0", "preemptions": 7200, "firstMs": 1000, "lastMs": 14_399_000, "heldBack": 0}])
    );
    let runs = j["workloads"][0]["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 7200);
    for (k, x) in runs.iter().enumerate() {
        let t = 1000 + 2000 * k as i64;
        assert_eq!(
            (x["startMs"].as_i64(), x["endMs"].as_i64()),
            (Some(t), Some(t))
        );
        assert_eq!(x["end"], "Preempted");
    }
    assert_eq!(j["workloads"][1]["runs"], json!([]));
    assert_eq!(j["endMs"], 4 * H);
}

/// Without a loop the JSON has no `preemptionLoops` key (the contract is unchanged).
#[test]
fn a_run_without_a_loop_has_no_preemption_loops_key() {
    let mut sim = load(None);
    let sc = sim.kueue_mut().expect("a Kueue scenario");
    // w1 alone: nothing to preempt
    sc.model.workloads.remove("ns/w0");
    sc.instances.remove("ns/w0");
    let j = gpuquota_sim::fuzzing::run_kueue(&sim)
        .expect("simulates")
        .to_json();
    assert!(j.get("preemptionLoops").is_none());
    assert_eq!(j["preemptions"], 0);
}
