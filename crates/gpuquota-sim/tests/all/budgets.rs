//! GPU-hour budgets in the simulator: one test per `whenSpent`, `stopRunning`, and both
//! engines.

use serde_json::Value;

const H: i64 = 3_600_000;

fn cluster(budget: &str, within: &str) -> String {
    format!(
        r#"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: h200}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: batch}}
spec:
  namespaceSelector: {{}}
  preemption: {{withinClusterQueue: {within}}}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{{name: h200, resources: [{{name: nvidia.com/gpu, nominalQuota: 4}}]}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq, namespace: team}}
spec: {{clusterQueue: batch}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq, namespace: research}}
spec: {{clusterQueue: batch}}
---
apiVersion: v1
kind: ResourceQuota
metadata: {{name: gpus, namespace: team}}
spec: {{hard: {{requests.nvidia.com/gpu: "8"}}}}
---
apiVersion: gpuquota.dev/v1alpha1
kind: Budget
metadata: {{name: team-daily}}
spec: {budget}
"#
    )
}

fn job(ns: &str, name: &str, at_h: i64, runtime: &str) -> String {
    format!(
        r#"---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: {name}
  namespace: {ns}
  creationTimestamp: "2026-04-01T{at_h:02}:00:00Z"
  annotations: {{gpuquota.dev/runtime: {runtime}}}
spec:
  queueName: lq
  podSets: [{{name: main, count: 4, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: "1"}}}}}}]}}}}}}]
"#
    )
}

fn run(engine: &str, cluster: String, jobs: &[String]) -> Value {
    let all = format!("{cluster}{}", jobs.concat());
    let sim = format!(
        "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {{name: b}}\nspec:\n  engine: {engine}\n  cluster: [c.yaml]\n  start: \"2026-04-01T00:00:00Z\"\n  end: \"2026-04-02T06:00:00Z\"\n  resourceQuota: {{retryInterval: 10m}}\n"
    );
    let sim = gpuquota_sim::fuzzing::scenario("b.yaml", &sim, "b", &|_| {
        Ok(("c.yaml".into(), all.clone()))
    })
    .expect("valid scenario");
    gpuquota_sim::fuzzing::run_kueue(&sim)
        .expect("simulates")
        .to_json()
}

fn wl<'a>(j: &'a Value, key: &str) -> &'a Value {
    j["workloads"]
        .as_array()
        .and_then(|a| a.iter().find(|w| w["workload"] == key))
        .unwrap_or_else(|| panic!("{key} in the report"))
}

const WAIT: &str = "{namespaces: [team], gpuHours: 8, period: 24h, whenSpent: Wait}";

#[test]
fn wait_holds_new_admissions_until_the_next_period_and_charges_an_overrun_in_full() {
    for engine in ["kueue", "resourcequota"] {
        // a: 4 GPUs 0–2 h spends the 8 GPU-hours at 02:00; c arrives at 03:00 and waits
        let j = run(
            engine,
            cluster(WAIT, "Never"),
            &[
                job("team", "a", 0, "2h"),
                job("team", "c", 3, "1h"),
                job("team", "d", 23, "2h"),
            ],
        );
        assert_eq!(wl(&j, "team/a")["runs"][0]["endMs"], 2 * H, "{engine}");
        assert_eq!(wl(&j, "team/c")["runs"][0]["startMs"], 24 * H, "{engine}");
        // d arrives at 23:00, waits too; it is admitted at the renewal with c (8 GPUs under
        // resourcequota, 4 + 4 > 4 nominal under Kueue: after c)
        let d = &wl(&j, "team/d")["runs"][0]["startMs"];
        assert_eq!(
            d,
            &Value::from(if engine == "kueue" { 25 * H } else { 24 * H })
        );
        let b = &j["budgets"][0];
        assert_eq!(b["budget"], "team-daily");
        assert_eq!(b["heldBack"], 2);
        assert_eq!(b["periods"][0]["usedGpuHours"], "8.000000");
        assert_eq!(b["periods"][0]["spentAtMs"], 2 * H);
        assert_eq!(b["periods"][1]["startMs"], 24 * H);
        // the second day: c 4 GPU-h, d 8 GPU-h (both within 24–30 h): 12 of 8, charged in full
        assert_eq!(b["periods"][1]["usedGpuHours"], "12.000000", "{engine}");
        assert_eq!(b["periods"][1]["remainingGpuHours"], "-4.000000");
    }
}

#[test]
fn a_workload_still_held_at_the_end_says_budget_exhausted() {
    let j = run(
        "kueue",
        cluster(
            "{namespaces: [team], gpuHours: 8, period: 48h, whenSpent: Wait}",
            "Never",
        ),
        &[job("team", "a", 0, "2h"), job("team", "c", 3, "1h")],
    );
    let c = wl(&j, "team/c");
    assert_eq!(c["runs"], Value::Array(vec![]));
    assert_eq!(c["pending"]["reason"], "BudgetExhausted");
    assert_eq!(
        c["pending"]["message"],
        "Budget \"team-daily\" is spent: 8.000000 of 8.000000 GPU-hours used this period; it renews at 2026-04-03T00:00:00Z"
    );
}

#[test]
fn notify_only_reports() {
    let j = run(
        "kueue",
        cluster(
            "{namespaces: [team], gpuHours: 8, period: 24h, whenSpent: Notify}",
            "Never",
        ),
        &[job("team", "a", 0, "2h"), job("team", "c", 3, "1h")],
    );
    assert_eq!(wl(&j, "team/c")["runs"][0]["startMs"], 3 * H);
    let p = &j["budgets"][0]["periods"][0];
    assert_eq!(p["spentAtMs"], 2 * H);
    assert_eq!(p["usedGpuHours"], "12.000000");
    assert_eq!(j["budgets"][0]["heldBack"], 0);
}

#[test]
fn deprioritize_admits_as_the_lowest_priority_and_others_preempt_it() {
    let j = run(
        "kueue",
        cluster(
            "{namespaces: [team], gpuHours: 8, period: 24h, whenSpent: Deprioritize}",
            "LowerPriority",
        ),
        &[
            job("team", "a", 0, "2h"),
            job("team", "b", 3, "5h"),
            job("research", "r", 4, "1h"),
        ],
    );
    let b = wl(&j, "team/b");
    assert_eq!(b["runs"][0]["startMs"], 3 * H);
    assert_eq!(b["runs"][0]["end"], "Preempted");
    assert_eq!(b["runs"][0]["by"], "research/r");
    assert_eq!(b["runs"][0]["endMs"], 4 * H);
    assert_eq!(b["runs"][1]["startMs"], 5 * H);
    assert_eq!(wl(&j, "research/r")["runs"][0]["startMs"], 4 * H);
    // the twins never show in the report
    assert_eq!(j["workloads"].as_array().map(Vec::len), Some(3));
    // same priority without a budget: r waits for b
    let j = run(
        "kueue",
        cluster(
            "{namespaces: [team], gpuHours: 80, period: 24h, whenSpent: Deprioritize}",
            "LowerPriority",
        ),
        &[
            job("team", "a", 0, "2h"),
            job("team", "b", 3, "5h"),
            job("research", "r", 4, "1h"),
        ],
    );
    assert_eq!(wl(&j, "research/r")["runs"][0]["startMs"], 8 * H);
}

#[test]
fn stop_running_ends_the_run_when_the_budget_is_spent() {
    for engine in ["kueue", "resourcequota"] {
        let j = run(
            engine,
            cluster(
                "{namespaces: [team], gpuHours: 8, period: 24h, whenSpent: Wait, stopRunning: true}",
                "Never",
            ),
            &[job("team", "a", 0, "5h")],
        );
        let a = wl(&j, "team/a");
        assert_eq!(a["runs"][0]["endMs"], 2 * H, "{engine}");
        assert_eq!(a["runs"][0]["reason"], "BudgetExhausted");
        assert_eq!(a["runs"][0]["by"], "Budget/team-daily");
        assert_eq!(a["runs"][1]["startMs"], 24 * H, "{engine}");
        // the next day's 8 GPU-hours are spent again after 2 h: stopped again, held
        assert_eq!(a["runs"][1]["endMs"], 26 * H, "{engine}");
        assert_eq!(a["runs"][1]["reason"], "BudgetExhausted");
        assert_eq!(a["runs"].as_array().map(Vec::len), Some(2));
        assert_eq!(a["pending"]["reason"], "BudgetExhausted");
        assert_eq!(j["budgets"][0]["stopped"], 2);
        assert_eq!(j["budgets"][0]["periods"][0]["usedGpuHours"], "8.000000");
    }
}

#[test]
fn a_queue_budget_counts_only_its_card_type() {
    let j = run(
        "kueue",
        cluster(
            "{queue: batch, gpuHours: 8, cardType: RTX, period: 24h}",
            "Never",
        ),
        &[job("team", "a", 0, "2h"), job("team", "c", 3, "1h")],
    );
    assert_eq!(wl(&j, "team/c")["runs"][0]["startMs"], 3 * H);
    assert_eq!(j["budgets"][0]["periods"][0]["usedGpuHours"], "0.000000");
}

#[test]
fn a_card_type_budget_is_charged_resourcequota_usage_through_its_queues_flavor() {
    // resourcequota usage has no flavor; the workloads' ClusterQueue `batch` takes
    // nvidia.com/gpu from flavor h200 (its own card type without spec.metering): a's 4 GPUs
    // × 2 h spend the 8 H200-hours at 02:00, so c (03:00) waits for the renewal at 24:00
    let j = run(
        "resourcequota",
        cluster(
            "{queue: batch, gpuHours: 8, cardType: h200, period: 24h}",
            "Never",
        ),
        &[job("team", "a", 0, "2h"), job("team", "c", 3, "1h")],
    );
    assert_eq!(j["budgets"][0]["periods"][0]["usedGpuHours"], "8.000000");
    assert_eq!(j["budgets"][0]["periods"][0]["spentAtMs"], 2 * H);
    assert_eq!(j["budgets"][0]["heldBack"], 1);
    assert_eq!(wl(&j, "team/c")["runs"][0]["startMs"], 24 * H);
    // another card type's budget is not charged
    let j = run(
        "resourcequota",
        cluster(
            "{queue: batch, gpuHours: 8, cardType: RTX, period: 24h}",
            "Never",
        ),
        &[job("team", "a", 0, "2h"), job("team", "c", 3, "1h")],
    );
    assert_eq!(wl(&j, "team/c")["runs"][0]["startMs"], 3 * H);
    assert_eq!(j["budgets"][0]["periods"][0]["usedGpuHours"], "0.000000");
}

#[test]
fn a_card_type_budget_is_charged_resourcequota_usage_through_the_node_selector() {
    // no Kueue queue: each workload's nodeSelector picks the flavor whose nodeLabels it
    // names, and spec.metering maps the flavors to card types. rtx (4 RTX × 2 h) is not
    // the H200 budget's; h (4 H200 × 2 h, 00:00–02:00) spends its 8 hours; c (H200, 03:00)
    // waits for the renewal; the bill charges the same card types: H200 4 × 2 h + 4 × 1 h =
    // 12 h, RTX 8 h
    let flavor = |name: &str, label: &str| {
        format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {{name: {name}}}\nspec: {{nodeLabels: {{nvidia.com/gpu.product: {label}}}}}\n---\n"
        )
    };
    let workload = |name: &str, at_h: i64, runtime: &str, label: &str| {
        format!(
            "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata:\n  name: {name}\n  namespace: team\n  creationTimestamp: \"2026-04-01T{at_h:02}:00:00Z\"\n  annotations: {{gpuquota.dev/runtime: {runtime}}}\nspec:\n  podSets: [{{name: main, count: 4, template: {{spec: {{nodeSelector: {{nvidia.com/gpu.product: {label}}}, containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: \"1\"}}}}}}]}}}}}}]\n"
        )
    };
    let c = format!(
        "{}{}apiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: gpus, namespace: team}}\nspec: {{hard: {{requests.nvidia.com/gpu: \"16\"}}}}\n---\napiVersion: gpuquota.dev/v1alpha1\nkind: Budget\nmetadata: {{name: h200-daily}}\nspec: {{namespaces: [team], gpuHours: 8, cardType: H200, period: 24h}}\n{}{}{}",
        flavor("h200-nvl", "NVIDIA-H200-NVL"),
        flavor("rtx-pro-6000", "NVIDIA-RTX-PRO-6000"),
        workload("rtx", 0, "2h", "NVIDIA-RTX-PRO-6000"),
        workload("h", 0, "2h", "NVIDIA-H200-NVL"),
        workload("c", 3, "1h", "NVIDIA-H200-NVL"),
    );
    let sim = "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {name: b}\nspec:\n  engine: resourcequota\n  cluster: [c.yaml]\n  start: \"2026-04-01T00:00:00Z\"\n  end: \"2026-04-02T06:00:00Z\"\n  resourceQuota: {retryInterval: 10m}\n  metering:\n    currency: EUR\n    cardTypes:\n    - {name: H200, pricePerHour: \"4.50\", capacity: 8, flavors: [h200-nvl]}\n    - {name: RTX, pricePerHour: \"1.80\", capacity: 8, flavors: [rtx-pro-6000]}\n    departments:\n    - {name: team, namespaces: [team]}\n";
    let sim =
        gpuquota_sim::fuzzing::scenario("b.yaml", sim, "b", &|_| Ok(("c.yaml".into(), c.clone())))
            .expect("valid scenario");
    let j = gpuquota_sim::fuzzing::run_kueue(&sim)
        .expect("simulates")
        .to_json();
    let p = &j["budgets"][0]["periods"][0];
    assert_eq!(p["usedGpuHours"], "8.000000");
    assert_eq!(p["spentAtMs"], 2 * H);
    assert_eq!(wl(&j, "team/c")["runs"][0]["startMs"], 24 * H);
    let lines = j["chargeback"]["lines"].as_array().expect("lines");
    let hours = |card: &str| {
        lines
            .iter()
            .find(|l| l["cardType"] == card)
            .map(|l| l["allocatedHours"].clone())
    };
    assert_eq!(hours("H200"), Some(Value::from("12.000000")));
    assert_eq!(hours("RTX"), Some(Value::from("8.000000")));
}

/// Writes `files` into a fresh directory under the system's temporary directory.
fn write_dir(tag: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("gpuquota-sim-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    for (name, text) in files {
        std::fs::write(dir.join(name), text).expect("written");
    }
    dir
}

#[test]
fn a_kueue_run_reads_and_parses_its_scenario_once_and_builds_the_engine_input_once() {
    use gpuquota_sim::fuzzing::{Counts, counts};
    let jobs = [job("team", "a", 0, "2h"), job("team", "b", 3, "5h")].concat();
    let sim = "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nspec:\n  engine: kueue\n  cluster: [c.yaml]\n  start: \"2026-04-01T00:00:00Z\"\n  end: \"2026-04-02T00:00:00Z\"\n";
    for (tag, budget, builds) in [
        (
            "wait",
            "{namespaces: [team], gpuHours: 8, period: 24h, whenSpent: Wait}",
            1,
        ),
        // the twins of a Deprioritize budget are chosen from a world of the original model
        (
            "deprioritize",
            "{namespaces: [team], gpuHours: 8, period: 24h, whenSpent: Deprioritize}",
            2,
        ),
    ] {
        let c = cluster(budget, "LowerPriority") + &jobs;
        let dir = write_dir(tag, &[("s.yaml", sim), ("c.yaml", &c)]);
        let _ = counts();
        // the command line's sequence: read and resolve the scenario, simulate
        let sim = gpuquota_sim::Simulation::from_files(&dir.join("s.yaml")).expect("valid");
        assert_eq!(sim.mode(), gpuquota_sim::Mode::Kueue);
        gpuquota_sim::simulate(&sim).expect("simulates");
        assert_eq!(
            counts(),
            Counts {
                scenario_reads: 1,
                scenario_parses: 1,
                world_builds: builds,
                cluster_builds: 0
            },
            "{tag}"
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
