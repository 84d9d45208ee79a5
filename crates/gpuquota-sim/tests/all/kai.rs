//! KAI mode: KAI's time-based-fairshare simulator config (the two-queue oscillation), a
//! `Simulation` with `engine: kai` (nightly batch reclaimed by the 02:00 fine-tuning), the
//! input rules and the report's units.

use std::path::Path;

use gpuquota_sim::kai::{self, KaiRunEnd};

fn data(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/kai")
        .join(name)
}

fn read(name: &str) -> String {
    std::fs::read_to_string(data(name)).expect("test data")
}

fn from_text(text: &str) -> Result<gpuquota_sim::Simulation, gpuquota_model::diag::Diagnostics> {
    gpuquota_sim::fuzzing::scenario("t.yaml", text, "t", &|_| {
        Err(gpuquota_model::Diagnostic::error(
            gpuquota_sim::scenario::INVALID_SCENARIO,
            "no files",
        ))
    })
}

/// The cycles at which team-a's allocation changes, with its new value.
fn flips(out: &kai::KaiOutcome, queue: &str) -> Vec<(usize, f64)> {
    let a = &out
        .queues
        .iter()
        .find(|q| q.name == queue)
        .expect("queue")
        .allocated;
    (1..a.len())
        .filter(|&i| a[i] != a[i - 1])
        .map(|i| (i, a[i]))
        .collect()
}

#[test]
fn two_queue_oscillation_flips_every_240_cycles() {
    let sim = gpuquota_sim::fuzzing::load(&data("two-queue-oscillation.yaml")).expect("scenario");
    let sc = sim.kai().expect("a KAI scenario");
    assert_eq!(sc.end_ms, Some(1024 * 10));
    let out = gpuquota_sim::fuzzing::run_kai(&sim).expect("run");
    assert_eq!(out.sessions, 1024);
    // Cycle 0: equal fair shares, team-a (first in job order) takes the whole node. Cycle 1:
    // its one sample is 100 % usage, so its fair share drops to 0 and team-b reclaims. From
    // then on each queue holds the node until the other's decayed usage falls below 1/32 of
    // the window (its fair share then rounds to all 16 GPUs): 240 cycles.
    assert_eq!(
        flips(&out, "team-a"),
        [
            (1, 0.0),
            (30, 16.0),
            (270, 0.0),
            (510, 16.0),
            (750, 0.0),
            (990, 16.0)
        ]
    );
    // The period from the window, the half-life and the cluster's 16 units: the smallest τ
    // with 2^(−τ/128) < 2^(−256/128) + (1 − 2^(−256/128)) / 32.
    let r = 0.5f64.powf(1.0 / 128.0);
    let bound = r.powi(256) + (1.0 - r.powi(256)) / 32.0;
    let tau = (0..256).find(|&t| r.powi(t) < bound).expect("period");
    assert_eq!(tau, 240);
    // The whole node is always held by exactly one queue; the department holds it all.
    for i in 0..1024 {
        let a = out
            .queues
            .iter()
            .find(|q| q.name == "team-a")
            .unwrap()
            .allocated[i];
        let b = out
            .queues
            .iter()
            .find(|q| q.name == "team-b")
            .unwrap()
            .allocated[i];
        assert_eq!(a + b, 16.0, "cycle {i}");
    }
    let csv = out.to_csv();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 1024 * 3);
    assert_eq!(
        &lines[..7],
        [
            "Time,QueueID,Allocation,FairShare",
            "0,training-department,16.000000,16.000000",
            "0,team-a,16.000000,8.000000",
            "0,team-b,0.000000,8.000000",
            "1,training-department,16.000000,16.000000",
            "1,team-a,0.000000,0.000000",
            "1,team-b,16.000000,16.000000",
        ]
    );
    // The fair share leads the allocation: it moves cycle by cycle with the usage and the
    // allocation follows once it covers a whole 16-GPU job.
    assert!(lines.contains(&"29,team-a,0.000000,15.000000"));
    assert!(lines.contains(&"30,team-a,16.000000,16.000000"));
    // Every eviction is a reclaim by the other queue.
    let evicted: Vec<&KaiRunEnd> = out
        .jobs
        .iter()
        .flat_map(|j| j.runs.iter().map(|r| &r.end))
        .filter(|e| matches!(e, KaiRunEnd::Evicted { .. }))
        .collect();
    assert_eq!(evicted.len(), 6);
    assert!(evicted.iter().all(|e| matches!(
        e,
        KaiRunEnd::Evicted {
            action: gpuquota_rank::session::Action::Reclaim,
            by: Some(_)
        }
    )));
}

#[test]
fn without_decay_the_window_alone_sets_the_period() {
    let text =
        read("two-queue-oscillation.yaml").replace("HalfLifePeriod: 128", "HalfLifePeriod: 0");
    let out = gpuquota_sim::fuzzing::run_kai(&from_text(&text).expect("scenario")).expect("run");
    let f = flips(&out, "team-a");
    // Undecayed, the waiting queue's fair share reaches the whole node when the holder has
    // at most 8 of the 256 samples: at exactly 8 the two remainders tie (15.5 each) and the
    // leftover unit goes by the tie order (team-a first), so team-a waits 248 cycles and
    // team-b 249.
    assert_eq!(
        f,
        [(1, 0.0), (32, 16.0), (281, 0.0), (529, 16.0), (778, 0.0)]
    );
    assert_eq!(f[2].0 - f[1].0, 249);
    assert_eq!(f[3].0 - f[2].0, 248);
}

#[test]
fn simulator_config_defaults_and_letter_case() {
    // Upstream decodes through encoding/json: field names match in any letter case; unset
    // fields take SetDefaults' values (100 cycles, window 5, no decay, kValue 1).
    let text = "queues: [{name: d}, {name: q1, parent: d}, {name: q2, parent: d}]\n\
                nodes: [{gpus: 4, count: 1}]\n\
                jobs: {q1: {gpus: 4, numPods: 1, numJobs: 3}, q2: {gpus: 4, numpods: 1, numjobs: 3}}\n\
                colour: blue\n";
    let sim = from_text(text).expect("scenario");
    let sc = sim.kai().expect("a KAI scenario");
    assert_eq!(sc.end_ms, Some(100 * 10));
    assert_eq!(sc.k_value, 1_000_000_000);
    let u = sc.usage.clone().expect("time-based fairshare is on");
    assert_eq!(u.window, kai::scenario::Window::Sliding { size_ms: 50 });
    assert_eq!(u.half_life_ms, None);
    assert!(sc.warnings.iter().any(|w| w.field == "colour"));
    let out = gpuquota_sim::fuzzing::run_kai(&sim).expect("run");
    assert_eq!(out.sessions, 100);
    assert_eq!(out.to_csv().lines().count(), 1 + 300);
    // A window of 5 cycles: the queues swap the node every few cycles.
    assert!(flips(&out, "q1").len() > 10);
}

#[test]
fn simulator_config_errors_name_the_field() {
    let e = from_text("Cycles: many\nWindowSize: 0\nQueues: [{Parent: x}]\n").expect_err("bad");
    let fields: Vec<&str> = e.iter().map(|d| d.field.as_str()).collect();
    assert!(fields.contains(&"Cycles"), "{fields:?}");
    assert!(fields.contains(&"WindowSize"), "{fields:?}");
    assert!(fields.contains(&"Queues[0].Name"), "{fields:?}");
}

#[test]
fn nightly_batch_is_reclaimed_when_the_finetuning_starts() {
    let sim = gpuquota_sim::fuzzing::load(&data("night.yaml")).expect("scenario");
    let out = gpuquota_sim::fuzzing::run_kai(&sim).expect("run");
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    let v = out.to_json();
    let w = v["workloads"].as_array().expect("workloads");
    let names: Vec<&str> = w.iter().map(|x| x["workload"].as_str().unwrap()).collect();
    // The batch Job became a PodGroup through KAI's pod grouper; the repeat made a copy.
    assert_eq!(
        names,
        [
            "batch/pg-nightly",
            "batch/sweep",
            "ds/finetune",
            "ds/finetune-1",
            "ds/serve"
        ]
    );
    let sweep = &w[1];
    assert_eq!(sweep["queue"], "batch");
    assert_eq!(sweep["runs"][0]["end"], "Evicted");
    assert_eq!(sweep["runs"][0]["action"], "reclaim");
    assert_eq!(sweep["runs"][0]["by"], "ds/finetune");
    assert_eq!(sweep["runs"][0]["endMs"], 2 * 3_600_000);
    assert_eq!(sweep["runs"][0]["usage"], serde_json::json!({"gpu": "8"}));
    assert_eq!(
        sweep["runs"][0]["nodes"],
        serde_json::json!(["node-a", "node-b"])
    );
    // Restarted when the fine-tuning ended (runtime from zero), finished 8 h later.
    assert_eq!(sweep["runs"][1]["startMs"], 5 * 3_600_000);
    assert_eq!(sweep["finishedMs"], 13 * 3_600_000);
    assert_eq!(w[2]["runs"][0]["startMs"], 2 * 3_600_000);
    assert_eq!(w[3]["createdMs"], 26 * 3_600_000);
    // The inference server (priority 125, non-preemptible) runs within deserved quota and is
    // cut at the end.
    assert_eq!(w[4]["runs"][0]["end"], "Cut");
    assert_eq!(w[4]["runs"][0]["endMs"], 36 * 3_600_000);
    assert_eq!(v["endMs"], 36 * 3_600_000);
    assert_eq!(v["sessions"], 36 * 3600);
    assert_eq!(v["evictions"], serde_json::json!({"reclaim": 1}));
    let q = &v["queues"]["batch"];
    assert_eq!(q["parent"], "research");
    assert_eq!(q["allocated"].as_array().map(Vec::len), Some(36 * 3600));
    // At 01:00 batch holds 12 GPUs (its limit) and its fair share is 12.
    assert_eq!(q["allocated"][3600], 12.0);
    assert_eq!(q["fairShare"][3600], 12.0);
    // At 03:00 the fine-tuning holds data-science's 8 deserved GPUs.
    assert_eq!(v["queues"]["data-science"]["allocated"][3 * 3600], 8.0);
}

#[test]
fn bind_latency_delays_the_start_and_holds_the_resources() {
    let text = read("night.yaml").replace(
        "sessionInterval: 1s",
        "sessionInterval: 1s\n    bindLatency: 30s",
    );
    let sim = gpuquota_sim::fuzzing::scenario("night.yaml", &text, "night", &|rel| {
        Ok((rel.to_owned(), read(rel)))
    })
    .expect("scenario");
    let out = gpuquota_sim::fuzzing::run_kai(&sim).expect("run");
    let v = out.to_json();
    assert_eq!(v["workloads"][0]["runs"][0]["startMs"], 30_000);
    assert_eq!(v["workloads"][0]["finishedMs"], 30_000 + 6 * 3_600_000);
}

#[test]
fn scenario_errors_name_object_and_field() {
    let text = "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nspec:\n  engine: kai\n  start: \"2026-04-01T00:00:00Z\"\n  kai: {sessionInterval: 0s, usage: {windowType: tumbling}}\n";
    let e = from_text(text).expect_err("bad");
    let fields: Vec<&str> = e.iter().map(|d| d.field.as_str()).collect();
    assert!(fields.contains(&"spec.kai.sessionInterval"), "{fields:?}");
    assert!(
        fields.contains(&"spec.kai.usage.tumblingWindowStartTime"),
        "{fields:?}"
    );
}

#[test]
fn detection() {
    use gpuquota_sim::Mode;
    let mode = |p: &str| gpuquota_sim::fuzzing::load(&data(p)).map(|s| s.mode());
    assert_eq!(mode("two-queue-oscillation.yaml"), Ok(Mode::Kai));
    assert_eq!(mode("night.yaml"), Ok(Mode::Kai));
    let mode = |t: &str| from_text(t).map(|s| s.mode());
    assert_eq!(
        mode(
            "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nspec: {engine: kueue, start: \"2026-04-01T00:00:00Z\"}\n"
        ),
        Ok(Mode::Kueue)
    );
    // a perf-generator config goes to Kueue's reader, which wants a cohort
    let e = from_text("cohorts: []\n").expect_err("no cohort");
    assert_eq!(
        e.iter()
            .map(|d| (d.field.as_str(), d.message.as_str()))
            .collect::<Vec<_>>(),
        [("cohorts", "config must contain at least one cohort")]
    );
    // the document's structure decides, not its text: a Kueue Simulation that mentions KAI's
    // simulator fields in a comment and a name stays Kueue's, a KAI simulator config in
    // lower case is KAI's
    assert_eq!(
        mode(
            "# Cycles: 5, Queues, spec.engine: kai\napiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {name: Cycles}\nspec: {start: \"2026-04-01T00:00:00Z\"}\n"
        ),
        Ok(Mode::Kueue)
    );
    assert_eq!(
        mode("cycles: 4\nnodes: [{gpus: 8, count: 1}]\nqueues: [{name: a, parent: \"\"}]\n"),
        Ok(Mode::Kai)
    );
}
