//! Scenario files end to end: a night with borrowing, reclaim and a daily repeat under Kueue
//! and under ResourceQuota only, and Kueue's perf-generator configs unchanged.

use std::path::Path;

use gpuquota_sim::scenario;

fn data(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(name)
}

#[test]
fn night_under_kueue_borrows_and_is_reclaimed() {
    let sim = gpuquota_sim::fuzzing::load(&data("tests/data/kueue.yaml")).expect("valid scenario");
    let sc = sim.kueue().expect("a Kueue scenario");
    assert!(sc.warnings.is_empty(), "{:?}", sc.warnings);
    let r = gpuquota_sim::fuzzing::run_kueue(&sim).expect("simulates");
    let j = r.to_json();
    assert_eq!(j["engine"], "kueue");
    assert_eq!(j["start"], "2026-04-01T00:00:00Z");
    assert_eq!(j["endMs"], 172_800_000);
    assert_eq!(j["makespanMs"], 108_000_000);
    assert_eq!(j["preemptions"], 1);
    let w = &j["workloads"];
    // etl fits the namespace's ResourceQuota first; nightly waits for it (Forbidden)
    assert_eq!(w[0]["workload"], "batch/etl");
    assert_eq!(w[0]["runs"][0]["endMs"], 3_600_000);
    assert_eq!(w[1]["workload"], "batch/nightly");
    let runs = w[1]["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["startMs"], 3_600_000);
    assert_eq!(runs[0]["endMs"], 7_200_000);
    assert_eq!(runs[0]["end"], "Preempted");
    assert_eq!(runs[0]["reason"], "InCohortReclamation");
    assert_eq!(runs[0]["by"], "data-science/fine-tune");
    assert_eq!(runs[0]["usage"]["h200-nvl"]["nvidia.com/gpu"], "4");
    // readmitted when the fine-tuning finishes; its runtime starts over
    assert_eq!(runs[1]["startMs"], 21_600_000);
    assert_eq!(runs[1]["endMs"], 43_200_000);
    assert_eq!(w[1]["finishedMs"], 43_200_000);
    // the daily repeat
    assert_eq!(w[3]["workload"], "data-science/fine-tune-1");
    assert_eq!(w[3]["createdMs"], 93_600_000);
    assert_eq!(w[3]["runs"][0]["startMs"], 93_600_000);
    assert_eq!(j["classes"]["batch"]["count"], 2);
    assert_eq!(j["classes"]["batch"]["evictions"], 1);
    assert_eq!(j["classes"]["batch"]["meanTimeToAdmissionMs"], 1_800_000);
    assert_eq!(j["classes"]["batch"]["p95TimeToAdmissionMs"], 3_600_000);
    // nightly: preempted at 02:00, readmitted at 06:00
    assert_eq!(j["classes"]["batch"]["readmissions"], 1);
    assert_eq!(j["classes"]["batch"]["meanRequeueWaitMs"], 14_400_000);
    assert_eq!(j["classes"]["training"]["meanTimeToFinishMs"], 14_400_000);
    // batch borrowed 4 GPUs for 1 h + 6 h, and 4 more... 4 × (1 + 1 + 6) h = 32 GPU-hours
    assert_eq!(
        j["queues"]["batch"]["borrowedMs"]["h200-nvl"]["nvidia.com/gpu"],
        32 * 3_600_000i64
    );
    // data-science: 8 GPUs × 8 h over 48 h of 8 GPUs
    assert_eq!(j["queues"]["data-science"]["meanUsagePercent"], 16.7);
    let table = r.to_table();
    assert!(
        table.contains("batch borrowed 32.0 GPU-hours of h200-nvl."),
        "{table}"
    );
    assert!(
        table.contains(
            "1 of batch's workloads were preempted at 02:00 when data-science reclaimed."
        ),
        "{table}"
    );
    let csv = r.to_csv();
    assert_eq!(csv.lines().count(), 6);
    assert!(csv.contains(
        "batch/nightly,batch,batch,3600000,7200000,Preempted,h200-nvl,nvidia.com/gpu,4\n"
    ));
}

#[test]
fn resume_keeps_the_work_done() {
    let text = std::fs::read_to_string(data("tests/data/kueue.yaml")).expect("file");
    let text = text.replace("  engine: kueue\n", "  engine: kueue\n  resume: true\n");
    let dir = data("tests/data");
    let sim = gpuquota_sim::fuzzing::scenario("kueue.yaml", &text, "kueue", &|f| {
        let p = dir.join(f);
        gpuquota_model::source::read_text(&p).map(|t| (f.to_owned(), t))
    })
    .expect("valid");
    let r = gpuquota_sim::fuzzing::run_kueue(&sim).expect("simulates");
    let nightly = &r.outcome.workloads[1];
    // 1 h done before the preemption: 5 h left from 06:00
    assert_eq!(nightly.finished_ms, Some(39_600_000));
}

#[test]
fn resource_quota_only_rejects_and_retries() {
    let sim = gpuquota_sim::fuzzing::load(&data("tests/data/resourcequota.yaml"))
        .expect("valid scenario");
    let r = gpuquota_sim::fuzzing::run_kueue(&sim).expect("simulates");
    let j = r.to_json();
    assert_eq!(j["engine"], "resourcequota");
    assert_eq!(j["preemptions"], 0);
    let w = &j["workloads"];
    assert_eq!(w[1]["workload"], "batch/nightly");
    // rejected at 0 (403), retried after 1 s, 2 s, 4 s, … up to 60 s: the first retry after
    // etl's completion at 1 h is at 3,603 s
    assert_eq!(w[1]["runs"][0]["startMs"], 3_603_000);
    assert_eq!(w[1]["runs"][0]["usage"][""]["nvidia.com/gpu"], "4");
    // no queueing, no borrowing: the fine-tuning runs at once in its own namespace
    assert_eq!(w[2]["runs"][0]["startMs"], 7_200_000);
    assert_eq!(j["queues"]["batch"]["nominal"][""]["nvidia.com/gpu"], "4");
}

#[test]
fn a_fixed_retry_interval() {
    let text = std::fs::read_to_string(data("tests/data/resourcequota.yaml")).expect("file");
    let text = format!("{text}  resourceQuota: {{retryInterval: 25m}}\n");
    let dir = data("tests/data");
    let sim = gpuquota_sim::fuzzing::scenario("rq.yaml", &text, "rq", &|f| {
        let p = dir.join(f);
        gpuquota_model::source::read_text(&p).map(|t| (f.to_owned(), t))
    })
    .expect("valid");
    let r = gpuquota_sim::fuzzing::run_kueue(&sim).expect("simulates");
    assert_eq!(r.outcome.workloads[1].runs[0].start_ms, 75 * 60_000);
}

#[test]
fn kueue_baseline_generator_config_unchanged() {
    let sim = gpuquota_sim::fuzzing::load(&data("data/kueue-baseline.yaml")).expect("valid config");
    let sc = sim.kueue().expect("a Kueue scenario");
    assert!(sc.warnings.is_empty(), "{:?}", sc.warnings);
    assert_eq!(sc.instances.len(), 15_000);
    assert_eq!(sc.model.cluster_queues.len(), 30);
    assert!(sc.model.cluster_queues.contains_key("cq-0-5-cohort-4"));
    let first = &sc.instances["cq-0-0-cohort-0/small-0-0-0"];
    assert_eq!((first.created_ms, first.runtime_ms), (0, Some(200)));
    let large = &sc.instances["cq-0-0-cohort-0/large-2-49-0"];
    assert_eq!((large.created_ms, large.class.as_str()), (59_900, "large"));
    let r = gpuquota_sim::fuzzing::run_kueue(&sim).expect("simulates");
    assert!(r.outcome.warnings.is_empty(), "{:?}", r.outcome.warnings);
    let j = r.to_json();
    for (class, n) in [("small", 10_500), ("medium", 3_000), ("large", 1_500)] {
        assert_eq!(j["classes"][class]["count"], n);
        assert_eq!(j["classes"][class]["finished"], n);
    }
    // the capacity bound: 39,600 cpu·s of work on 600 cpu
    assert!(r.makespan_ms >= 66_000, "{}", r.makespan_ms);
    let summary = r.to_kueue_summary(
        &sc.model
            .cluster_queues
            .keys()
            .map(|k| (k.clone(), "cq".to_owned()))
            .collect(),
    );
    assert!(
        summary.starts_with("clusterQueueClasses:\n  cq:\n    cpuAverageUsage: "),
        "{summary}"
    );
    assert!(summary.contains("    nominalQuota: 600000\n"), "{summary}");
    assert!(
        summary.contains("workloadClasses:\n  large:\n    averageTimeToAdmissionMs: "),
        "{summary}"
    );
    assert!(summary.contains("    count: 10500\n"), "{summary}");
}

#[test]
fn perf_config_refuses_topology() {
    let text =
        "topology: {levels: [rack]}\ncohorts:\n- className: c\n  count: 1\n  queuesSets: []\n";
    let e = gpuquota_sim::fuzzing::scenario("tas.yaml", text, "tas", &|_| unreachable!())
        .expect_err("refused");
    assert!(
        e.iter().any(|d| d.to_string().contains("not simulated")),
        "{e:?}"
    );
}

#[test]
fn bad_fields_are_named() {
    let text = "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nspec:\n  start: yesterday\n  engine: slurm\n  kueue: {cycleLatency: fast}\n  colour: red\n";
    let e = gpuquota_sim::fuzzing::scenario("bad.yaml", text, "bad", &|_| unreachable!())
        .expect_err("invalid");
    let all: Vec<String> = e.iter().map(ToString::to_string).collect();
    assert!(all.iter().any(|d| d.contains("spec.start")), "{all:?}");
    assert!(all.iter().any(|d| d.contains("spec.engine")), "{all:?}");
    assert!(
        all.iter().any(|d| d.contains("spec.kueue.cycleLatency")),
        "{all:?}"
    );
    assert!(
        all.iter()
            .any(|d| d.contains("spec.colour") && d.contains("unknown field")),
        "{all:?}"
    );
}

#[test]
fn cycle_latency_delays_admissions() {
    let text = std::fs::read_to_string(data("tests/data/kueue.yaml")).expect("file");
    let text = format!("{text}  kueue: {{cycleLatency: 2s}}\n");
    let dir = data("tests/data");
    let sim = gpuquota_sim::fuzzing::scenario("k.yaml", &text, "k", &|f| {
        let p = dir.join(f);
        gpuquota_model::source::read_text(&p).map(|t| (f.to_owned(), t))
    })
    .expect("valid");
    let r = gpuquota_sim::fuzzing::run_kueue(&sim).expect("simulates");
    assert_eq!(r.outcome.workloads[0].runs[0].start_ms, 2_000);
}

#[test]
fn plot_is_svg() {
    let sim = gpuquota_sim::fuzzing::load(&data("tests/data/kueue.yaml")).expect("valid scenario");
    let sc = sim.kueue().expect("a Kueue scenario");
    let r = gpuquota_sim::fuzzing::run_kueue(&sim).expect("simulates");
    let svg = gpuquota_sim::plot::svg(sc, &r).expect("plots");
    assert!(svg.starts_with("<svg"));
    assert!(svg.contains("nominal (sum)"));
    assert!(svg.contains("data-science"));
}

#[test]
fn huge_counts_are_refused_not_allocated() {
    let text = "cohorts:\n- className: c\n  count: 1\n  queuesSets:\n  - className: q\n    count: 1\n    nominalQuota: 1\n    workloadsSets:\n    - {count: 4000000000, creationIntervalMs: 1, workloads: [{className: s, runtimeMs: 1, priority: 0, request: 1}]}\n";
    let e = gpuquota_sim::fuzzing::scenario("huge.yaml", text, "huge", &|_| unreachable!())
        .expect_err("refused");
    assert!(
        e.iter()
            .any(|d| d.to_string().contains("exhausting memory")),
        "{e:?}"
    );
    let text = "cohorts:\n- className: c\n  count: 4000000000\n  queuesSets: []\n";
    let e = gpuquota_sim::fuzzing::scenario("huge.yaml", text, "huge", &|_| unreachable!())
        .expect_err("refused");
    assert!(
        e.iter()
            .any(|d| d.to_string().contains("exhausting memory")),
        "{e:?}"
    );
}

#[test]
fn fair_sharing_runs_through_the_same_engine() {
    let text = std::fs::read_to_string(data("tests/data/kueue.yaml")).expect("file");
    let text = format!("{text}  kueue: {{fairSharing: true}}\n");
    let dir = data("tests/data");
    let sim = gpuquota_sim::fuzzing::scenario("fs.yaml", &text, "fs", &|f| {
        let p = dir.join(f);
        gpuquota_model::source::read_text(&p).map(|t| (f.to_owned(), t))
    })
    .expect("valid");
    let r = gpuquota_sim::fuzzing::run_kueue(&sim).expect("simulates");
    let nightly = &r.outcome.workloads[1];
    // data-science reclaims its nominal quota from the borrower: upstream's reason while the
    // preemptor stays within nominal
    assert_eq!(
        nightly.runs[0].end,
        gpuquota_sim::RunEnd::Preempted {
            reason: "InCohortReclamation".to_owned(),
            by: "data-science/fine-tune".to_owned()
        }
    );
    assert_eq!(nightly.finished_ms, Some(43_200_000));
}

/// The same night with batch/v1 Jobs instead of hand-written Workloads: the importer converts
/// each Job as Kueue's job framework does, and every run is the same; only the names differ
/// (Kueue names a Job's Workload `job-<name>-<hash>`).
#[test]
fn jobs_and_their_workloads_simulate_alike() {
    fn runs_without_names(j: &serde_json::Value) -> Vec<serde_json::Value> {
        let workloads = j["workloads"].as_array().expect("workloads");
        workloads
            .iter()
            .map(|w| {
                let mut w = w.clone();
                let o = w.as_object_mut().expect("object");
                o.remove("workload");
                for run in o["runs"].as_array_mut().expect("runs") {
                    run.as_object_mut().expect("run").remove("by");
                }
                w
            })
            .collect()
    }
    let workloads = gpuquota_sim::fuzzing::run_kueue(
        &gpuquota_sim::fuzzing::load(&data("tests/data/kueue.yaml")).expect("valid"),
    )
    .expect("simulates")
    .to_json();
    let sim =
        gpuquota_sim::fuzzing::load(&data("tests/data/kueue-jobs.yaml")).expect("valid scenario");
    let jobs = gpuquota_sim::fuzzing::run_kueue(&sim)
        .expect("simulates")
        .to_json();
    let names: Vec<&str> = jobs["workloads"]
        .as_array()
        .expect("workloads")
        .iter()
        .map(|w| w["workload"].as_str().expect("name"))
        .collect();
    assert_eq!(names.len(), 4, "{names:?}");
    assert!(names[0].starts_with("batch/job-etl-"), "{names:?}");
    assert!(names[1].starts_with("batch/job-nightly-"), "{names:?}");
    assert!(
        names[2].starts_with("data-science/job-fine-tune-"),
        "{names:?}"
    );
    assert_eq!(names[3], format!("{}-1", names[2]));
    assert_eq!(runs_without_names(&jobs), runs_without_names(&workloads));
    assert_eq!(jobs["preemptions"], 1);
    assert_eq!(jobs["makespanMs"], workloads["makespanMs"]);
    assert_eq!(jobs["queues"], workloads["queues"]);
    assert_eq!(jobs["classes"], workloads["classes"]);
}

/// The fuzz target's check on generated bytes, on a real scenario (every file it names gets
/// the manifests after the NUL byte) and on a generator config far above the fuzz budget.
#[cfg(feature = "fuzzing")]
#[test]
fn fuzz_check_smoke() {
    use gpuquota_sim::fuzzing::check_scenario;
    arbtest::arbtest(|u| {
        let bytes: Vec<u8> = u.arbitrary()?;
        check_scenario(&bytes);
        Ok(())
    })
    .budget_ms(300);
    let read = |p: &str| std::fs::read_to_string(data(p)).expect("test data");
    let mut input = read("tests/data/kueue.yaml").into_bytes();
    input.push(0);
    input.extend(read("tests/data/platform.yaml").bytes());
    input.extend(b"\n---\n");
    input.extend(read("tests/data/jobs.yaml").bytes());
    check_scenario(&input);
    // 10,000 workloads: refused by the lowered guard before anything is generated
    let big = "cohorts:\n- className: c\n  count: 1\n  queuesSets:\n  - className: q\n    count: 1\n    nominalQuota: 1\n    workloadsSets:\n    - {count: 10000, creationIntervalMs: 1, workloads: [{className: s, runtimeMs: 1, priority: 1, request: 1}]}\n";
    let refused = scenario::with_instance_limit(gpuquota_sim::fuzzing::FUZZ_INSTANCES, || {
        gpuquota_sim::fuzzing::scenario("big.yaml", big, "big", &|_| unreachable!())
    });
    let msg = refused.expect_err("above the guard").to_string();
    // the number it would make (10,000 rounds of one template) and the limit
    assert!(
        msg.contains(
            "10000 workloads: more than the limit of 400 (a guard against exhausting memory)"
        ),
        "{msg}"
    );
    check_scenario(big.as_bytes());
}

/// One ClusterQueue of 4 GPUs whose workloads preempt lower priorities, and the priority
/// classes the class rows are named after.
const CLASSES: &str = r#"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: f}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: q}
spec:
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: f, resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: team}
spec: {clusterQueue: q}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: inference}
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: training}
value: 100
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 10
"#;

/// A 4-GPU workload in `team` created at `at` (HH:MM) running `runtime`; `spec` and
/// `pod` are extra YAML for its spec and its pods' spec.
fn four_gpus(
    name: &str,
    at: &str,
    runtime: &str,
    annotations: &str,
    spec: &str,
    pod: &str,
) -> String {
    format!(
        "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata:\n  name: {name}\n  namespace: team\n  creationTimestamp: \"2026-04-01T{at}:00Z\"\n  annotations: {{gpuquota.dev/runtime: {runtime}{annotations}}}\nspec:\n  queueName: lq\n{spec}  podSets: [{{name: main, count: 4, template: {{spec: {{{pod}containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: \"1\"}}}}}}]}}}}}}]\n"
    )
}

#[test]
fn classes_are_priority_classes_and_the_wait_after_a_preemption_is_apart() {
    // 00:00 long (WorkloadPriorityClass training) takes the 4 GPUs for 3 h;
    // 01:00 waiter (no priority class, gpuquota.dev/class batch) waits until 03:00: 2 h;
    // 05:00 victim (its pods' PriorityClass low, priority 10) is admitted at once;
    // 05:30 urgent (WorkloadPriorityClass inference) preempts it and runs until 08:30,
    //       when the victim is readmitted: a requeue wait of 3 h, its first admission 0
    let files = [
        CLASSES.to_owned(),
        four_gpus(
            "long",
            "00:00",
            "3h",
            "",
            "  priorityClassRef: {group: kueue.x-k8s.io, kind: WorkloadPriorityClass, name: training}\n  priority: 100\n",
            "",
        ),
        four_gpus("waiter", "01:00", "1h", ", gpuquota.dev/class: batch", "  priority: 100\n", ""),
        four_gpus("victim", "05:00", "1h", "", "  priority: 10\n", "priorityClassName: low, "),
        four_gpus(
            "urgent",
            "05:30",
            "3h",
            ", gpuquota.dev/class: ignored",
            "  priorityClassRef: {group: kueue.x-k8s.io, kind: WorkloadPriorityClass, name: inference}\n  priority: 1000\n",
            "",
        ),
    ]
    .concat();
    let sim = "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {name: classes}\nspec:\n  cluster: [c.yaml]\n  start: \"2026-04-01T00:00:00Z\"\n  end: \"2026-04-01T12:00:00Z\"\n";
    let sim = gpuquota_sim::fuzzing::scenario("s.yaml", sim, "s", &|_| {
        Ok(("c.yaml".into(), files.clone()))
    })
    .expect("valid scenario");
    let sc = sim.kueue().expect("a Kueue scenario");
    assert!(sc.warnings.is_empty(), "{:?}", sc.warnings);
    let r = gpuquota_sim::fuzzing::run_kueue(&sim).expect("simulates");
    let j = r.to_json();
    const H: i64 = 3_600_000;
    let c = &j["classes"];
    assert_eq!(
        c.as_object().map(|m| m.keys().cloned().collect::<Vec<_>>()),
        Some(vec![
            "batch".to_owned(),
            "inference".to_owned(),
            "low".to_owned(),
            "training".to_owned()
        ])
    );
    assert_eq!(c["batch"]["meanTimeToAdmissionMs"], 2 * H);
    assert_eq!(c["batch"]["readmissions"], 0);
    assert_eq!(c["training"]["meanTimeToAdmissionMs"], 0);
    assert_eq!(c["inference"]["meanTimeToAdmissionMs"], 0);
    assert_eq!(c["low"]["meanTimeToAdmissionMs"], 0);
    assert_eq!(c["low"]["evictions"], 1);
    assert_eq!(c["low"]["readmissions"], 1);
    assert_eq!(c["low"]["meanRequeueWaitMs"], 3 * H);
    assert_eq!(c["low"]["p95RequeueWaitMs"], 3 * H);
    // the victim: preempted at 05:30, readmitted at 08:30, run again from the start
    let victim = j["workloads"]
        .as_array()
        .and_then(|w| w.iter().find(|w| w["workload"] == "team/victim"))
        .expect("victim");
    assert_eq!(victim["runs"][0]["endMs"], 5 * H + H / 2);
    assert_eq!(victim["runs"][1]["startMs"], 8 * H + H / 2);
    assert_eq!(victim["finishedMs"], 9 * H + H / 2);
    // the table's class rows
    let table = r.table(gpuquota_model::text::Width::Full);
    assert!(table.contains("MEAN-REQUEUE"), "{table}");
    let low = table
        .lines()
        .find(|l| l.starts_with("low "))
        .expect("a row for class low");
    assert!(low.ends_with("3h"), "{low}");
}
