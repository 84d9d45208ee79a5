//! GPU-hour budgets in the KAI mode: one test per `whenSpent` and `stopRunning`, with
//! hand-checked times, and the bill of a KAI run.
//!
//! One node of 8 H200 NVL; queue `q` (deserved 8) holds the jobs of namespaces `team` and
//! `lab`; budget `team-daily`: 8 GPU-hours a day for namespace `team` (or queue `q`).

use crate::common;

use common::{H, kai_pod as job};
use serde_json::Value;

fn cluster(budget: &str) -> String {
    common::kai_platform(
        "h200",
        "{nvidia.com/gpu.product: NVIDIA-H200-NVL}",
        r#"{nvidia.com/gpu: "8", cpu: "64", memory: 512Gi}"#,
        8,
    ) + &common::budget("team-daily", budget)
}

fn run(budget: &str, jobs: &str, end: &str) -> Value {
    let sim = common::simulation(
        "kai",
        end,
        r#"    currency: EUR
    cardTypes: [{name: H200, model: NVIDIA H200 NVL, pricePerHour: "4.00", capacity: 8}]
    departments: [{name: team, namespaces: [team]}, {name: lab, namespaces: [lab]}]
"#,
    );
    let read = common::files(vec![
        ("cluster.yaml", cluster(budget)),
        ("jobs.yaml", jobs.to_owned()),
    ]);
    let sim = gpuquota_sim::fuzzing::scenario("t.yaml", &sim, "t", &read).expect("scenario");
    gpuquota_sim::fuzzing::run_kai(&sim)
        .expect("runs")
        .to_json()
}

fn wl<'a>(j: &'a Value, key: &str) -> &'a Value {
    j["workloads"]
        .as_array()
        .expect("workloads")
        .iter()
        .find(|w| w["workload"] == key)
        .expect("workload")
}

fn runs(j: &Value, key: &str) -> Vec<(i64, i64)> {
    wl(j, key)["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| (r["startMs"].as_i64().unwrap(), r["endMs"].as_i64().unwrap()))
        .collect()
}

fn daily(when: &str) -> String {
    format!("{{namespaces: [team], gpuHours: \"8\", period: 24h, whenSpent: {when}}}")
}

#[test]
fn kai_wait_holds_the_queue_until_the_next_day() {
    // a: 4 GPUs from 00:00 for 3 h, spends the 8 GPU-hours at 02:00 and is charged in full
    // (12); b arrives at 02:30 and waits for the renewal at 24:00.
    let jobs = job("team", "a", "00:00", 4, "3h") + &job("team", "b", "02:30", 4, "1h");
    let j = run(&daily("Wait"), &jobs, "2026-04-02T12:00:00Z");
    assert_eq!(runs(&j, "team/a"), [(0, 3 * H)]);
    assert_eq!(runs(&j, "team/b"), [(24 * H, 25 * H)]);
    let b = &j["budgets"][0];
    assert_eq!(b["whenSpent"], "Wait");
    assert_eq!(b["heldBack"], 1);
    let p = &b["periods"][0];
    assert_eq!(p["usedGpuHours"], "12.000000");
    assert_eq!(p["remainingGpuHours"], "-4.000000");
    assert_eq!(p["spentAtMs"], 2 * H);
    assert_eq!(b["periods"][1]["usedGpuHours"], "4.000000");
    // The bill: 16 GPU-hours of H200 for team, at 4.00 EUR.
    let line = &j["chargeback"]["lines"][0];
    assert_eq!(line["department"], "team");
    assert_eq!(line["cardType"], "H200");
    assert_eq!(line["allocatedHours"], "16.000000");
}

#[test]
fn kai_wait_still_held_at_the_end_says_budget_exhausted() {
    let jobs = job("team", "a", "00:00", 4, "3h") + &job("team", "b", "02:30", 4, "1h");
    let j = run(&daily("Wait"), &jobs, "2026-04-01T12:00:00Z");
    let b = wl(&j, "team/b");
    assert_eq!(b["runs"].as_array().unwrap().len(), 0);
    assert_eq!(b["pending"]["reason"], "BudgetExhausted");
    assert_eq!(
        b["pending"]["message"],
        "Budget \"team-daily\" is spent: 12.000000 of 8.000000 GPU-hours used this period; it renews at 2026-04-02T00:00:00Z"
    );
}

#[test]
fn kai_notify_only_reports() {
    let jobs = job("team", "a", "00:00", 4, "3h") + &job("team", "b", "02:30", 4, "1h");
    let j = run(&daily("Notify"), &jobs, "2026-04-01T12:00:00Z");
    assert_eq!(runs(&j, "team/b"), [(150 * 60_000, 210 * 60_000)]);
    let b = &j["budgets"][0];
    assert_eq!(b["heldBack"], 0);
    assert_eq!(b["periods"][0]["usedGpuHours"], "16.000000");
    assert_eq!(b["periods"][0]["spentAtMs"], 2 * H);
}

#[test]
fn kai_deprioritize_lets_every_other_job_go_first() {
    // a: 8 GPUs 00:00-01:30 spends team's 8 GPU-hours at 01:00. b (team, 01:00) and c
    // (lab, 01:10) both wait for the node; at 01:30 the demoted b comes after c although it
    // arrived first. Under Notify, b goes first.
    let jobs = job("team", "a", "00:00", 8, "90m")
        + &job("team", "b", "01:00", 8, "1h")
        + &job("lab", "c", "01:10", 8, "1h");
    let j = run(&daily("Deprioritize"), &jobs, "2026-04-01T12:00:00Z");
    assert_eq!(runs(&j, "lab/c"), [(90 * 60_000, 150 * 60_000)]);
    assert_eq!(runs(&j, "team/b"), [(150 * 60_000, 210 * 60_000)]);
    assert_eq!(j["budgets"][0]["whenSpent"], "Deprioritize");
    assert_eq!(j["budgets"][0]["periods"][0]["usedGpuHours"], "20.000000");
    let n = run(&daily("Notify"), &jobs, "2026-04-01T12:00:00Z");
    assert_eq!(runs(&n, "team/b"), [(90 * 60_000, 150 * 60_000)]);
    assert_eq!(runs(&n, "lab/c"), [(150 * 60_000, 210 * 60_000)]);
}

#[test]
fn kai_stop_running_evicts_with_the_budget_as_reason() {
    // a: 4 GPUs for 4 h; the budget is spent at 02:00 and a is evicted in that session.
    let budget = "{queue: q, gpuHours: \"8\", period: 24h, whenSpent: Wait, stopRunning: true}";
    let j = run(
        budget,
        &job("team", "a", "00:00", 4, "4h"),
        "2026-04-01T12:00:00Z",
    );
    let a = wl(&j, "team/a");
    let r = &a["runs"][0];
    assert_eq!(
        (r["startMs"].as_i64(), r["endMs"].as_i64()),
        (Some(0), Some(2 * H))
    );
    assert_eq!(r["end"], "Evicted");
    assert_eq!(r["action"], "budget");
    assert_eq!(r["reason"], "BudgetExhausted");
    assert_eq!(r["by"], "Budget/team-daily");
    assert_eq!(a["runs"].as_array().unwrap().len(), 1);
    assert_eq!(a["pending"]["reason"], "BudgetExhausted");
    assert_eq!(j["budgets"][0]["stopped"], 1);
    assert_eq!(j["budgets"][0]["periods"][0]["usedGpuHours"], "8.000000");
    assert_eq!(j["evictions"]["budget"], 1);
    // the lost work is on the bill
    assert_eq!(j["chargeback"]["preempted"][0]["hours"], "8.000000");
}

/// ∫ usage over the KAI runs per namespace, in metering units (`L` per GPU-second).
fn integral(j: &Value) -> std::collections::BTreeMap<String, i128> {
    let mut m = std::collections::BTreeMap::new();
    for w in j["workloads"].as_array().into_iter().flatten() {
        let ns = w["workload"].as_str().unwrap().split('/').next().unwrap();
        for r in w["runs"].as_array().into_iter().flatten() {
            let secs = i128::from(
                r["endMs"].as_i64().unwrap() / 1000 - r["startMs"].as_i64().unwrap() / 1000,
            );
            let g: i128 = r["usage"]["gpu"].as_str().unwrap().parse().unwrap();
            *m.entry(ns.to_owned()).or_default() += gpuquota_metering::money::L * g * secs;
        }
    }
    m
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(16))]
    /// The metering property in the KAI mode: the bill's allocated hours per department and
    /// the budget's used hours equal ∫ usage over the runs, exactly.
    #[test]
    fn kai_metered_hours_equal_the_integral_of_usage(
        jobs in proptest::collection::vec(
            (proptest::sample::select(vec!["team", "lab"]), 0i64..20_000, 1i64..20_000, 1u32..5),
            1..8,
        ),
    ) {
        let mut text = String::new();
        for (i, (ns, at, runtime, gpus)) in jobs.iter().enumerate() {
            let (h, m, s) = (at / 3600, at / 60 % 60, at % 60);
            text.push_str(&job(ns, &format!("j{i}"), &format!("{h:02}:{m:02}:{s:02}"), *gpus, &format!("{runtime}s"))
                .replace(":00Z\"", "Z\""));
        }
        let j = run(&daily("Notify"), &text, "2026-04-01T12:00:00Z");
        let want = integral(&j);
        let hours = gpuquota_metering::money::format_hours;
        for l in j["chargeback"]["lines"].as_array().unwrap() {
            let d = l["department"].as_str().unwrap();
            proptest::prop_assert_eq!(
                l["allocatedHours"].as_str().unwrap(),
                hours(want.get(d).copied().unwrap_or(0))
            );
        }
        let team = want.get("team").copied().unwrap_or(0);
        let used: i128 = j["budgets"][0]["periods"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| gpuquota_metering::money::parse_decimal(p["usedGpuHours"].as_str().unwrap(), 6, "h").unwrap())
            .sum();
        // the ledger prints its exact 1/L card-ms units floored to millionths of an hour
        let l = gpuquota_metering::money::L;
        proptest::prop_assert_eq!(used, team * 1_000_000 / (l * 3600));
    }
}

#[test]
fn a_kai_run_reads_and_parses_its_scenario_once_and_builds_the_snapshot_once() {
    use gpuquota_sim::fuzzing::counts;
    let sim = common::simulation(
        "kai",
        "2026-04-02T00:00:00Z",
        "    currency: EUR\n    cardTypes: [{name: H200, model: NVIDIA H200 NVL, pricePerHour: \"4.00\", capacity: 8}]\n",
    );
    let jobs = job("team", "a", "00:00", 8, "2h");
    let dir = std::env::temp_dir().join(format!("gpuquota-kai-counts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    std::fs::write(dir.join("t.yaml"), &sim).expect("written");
    std::fs::write(dir.join("jobs.yaml"), &jobs).expect("written");
    for budget in [None, Some(daily("Wait"))] {
        let c = match &budget {
            Some(b) => cluster(b),
            None => common::kai_platform(
                "h200",
                "{nvidia.com/gpu.product: NVIDIA-H200-NVL}",
                r#"{nvidia.com/gpu: "8", cpu: "64", memory: 512Gi}"#,
                8,
            ),
        };
        std::fs::write(dir.join("cluster.yaml"), &c).expect("written");
        let _ = counts();
        let sim = gpuquota_sim::Simulation::from_files(&dir.join("t.yaml")).expect("valid");
        assert_eq!(sim.mode(), gpuquota_sim::Mode::Kai);
        gpuquota_sim::simulate(&sim).expect("runs");
        let n = counts();
        assert_eq!(
            (
                n.scenario_reads,
                n.scenario_parses,
                n.world_builds,
                n.cluster_builds
            ),
            (1, 1, 0, 1),
            "{budget:?}: {n:?}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}
