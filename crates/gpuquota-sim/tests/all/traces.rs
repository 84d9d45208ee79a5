//! Trace workload sources end to end: each format's synthetic fixture (written for these
//! tests; the public traces may not be redistributed) simulated under Kueue.

use crate::common;

use common::{beside, edited_quota_warnings, kueue_edited, quota_warnings, trace_data};
use gpuquota_sim::scenario;
use serde_json::Value;

fn run(name: &str) -> Value {
    let p = trace_data(name);
    let sim = gpuquota_sim::fuzzing::load(&p).expect("valid scenario");
    gpuquota_sim::fuzzing::run_kueue(&sim)
        .expect("simulates")
        .to_json()
}

/// (workload, queue, class, runs as (startMs, endMs, end)) of a KAI report
type KaiRow = (String, String, String, Vec<(i64, i64, String)>);

/// (startMs, endMs, flavor, gpus)
type RunRow = (i64, i64, String, String);
/// (workload, queue, class, createdMs, runs)
type Row = (String, String, String, i64, Vec<RunRow>);

fn rows(j: &Value) -> Vec<Row> {
    j["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            let runs = w["runs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    let (fl, u) = r["usage"].as_object().unwrap().iter().next().unwrap();
                    let (_, q) = u.as_object().unwrap().iter().next().unwrap();
                    (
                        r["startMs"].as_i64().unwrap(),
                        r["endMs"].as_i64().unwrap(),
                        fl.clone(),
                        q.as_str().unwrap().to_owned(),
                    )
                })
                .collect();
            (
                w["workload"].as_str().unwrap().to_owned(),
                w["queue"].as_str().unwrap().to_owned(),
                w["class"].as_str().unwrap().to_owned(),
                w["createdMs"].as_i64().unwrap(),
                runs,
            )
        })
        .collect()
}

fn warnings(j: &Value) -> Vec<String> {
    j["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().rsplit(": ").next().unwrap().to_owned())
        .filter(|w| w.contains("trace rows"))
        .collect()
}

fn s(x: &str) -> String {
    x.to_owned()
}

#[test]
fn helios_trace_replays_under_kueue() {
    let j = run("helios.yaml");
    assert_eq!(
        rows(&j),
        [
            (
                s("research/job-1"),
                s("vca"),
                s("COMPLETED"),
                0,
                vec![(0, 3_600_000, s("v100"), s("8"))]
            ),
            // arrives at 00:10; the trace ran it 30 min (it waited in Helios, not here)
            (
                s("research/job-2"),
                s("vca"),
                s("FAILED"),
                600_000,
                vec![(600_000, 2_400_000, s("any"), s("8"))]
            ),
            (
                s("research/job-3"),
                s("vcb"),
                s("CANCELLED"),
                1_200_000,
                vec![(1_200_000, 3_000_000, s("v100"), s("2"))]
            ),
        ]
    );
    assert_eq!(
        warnings(&j),
        [
            "1 trace rows skipped (no-cluster-queue)",
            "1 trace rows skipped (no-gpu)"
        ]
    );
}

#[test]
fn philly_trace_uses_the_last_attempt() {
    let j = run("philly.yaml");
    assert_eq!(
        rows(&j),
        [
            (
                s("vca/application-1-0001"),
                s("vca"),
                s("Pass"),
                0,
                vec![(0, 3_600_000, s("v100"), s("8"))]
            ),
            (
                s("vcb/application-1-0002"),
                s("vcb"),
                s("Killed"),
                300_000,
                vec![(300_000, 2_100_000, s("v100"), s("2"))]
            ),
        ]
    );
    assert_eq!(warnings(&j), ["1 trace rows skipped (never-ran)"]);
}

#[test]
fn pai_trace_selects_gpu_types_and_rounds_fractions_as_kueue_charges() {
    let j = run("pai.yaml");
    assert_eq!(
        rows(&j),
        [
            // 2 workers × 400 % = 8 V100s
            (
                s("vca/j1"),
                s("vca"),
                s("Terminated"),
                0,
                vec![(0, 3_600_000, s("v100"), s("8"))]
            ),
            // 50 % of a T4: no T4 flavor, the unlabelled flavor takes it, one whole GPU charged
            (
                s("vcb/j2"),
                s("vcb"),
                s("Failed"),
                60_000,
                vec![(60_000, 960_000, s("any"), s("1"))]
            ),
        ]
    );
    assert_eq!(warnings(&j), ["1 trace rows skipped (no-gpu)"]);
}

#[test]
fn alibaba_2023_trace_with_one_fixed_queue() {
    let j = run("alibaba2023.yaml");
    assert_eq!(
        rows(&j),
        [
            (
                s("vca/openb-pod-0001"),
                s("vca"),
                s("Succeeded"),
                10_000,
                vec![(10_000, 3_610_000, s("v100"), s("1"))]
            ),
            (
                s("vca/openb-pod-0002"),
                s("vca"),
                s("Succeeded"),
                20_000,
                vec![(20_000, 620_000, s("v100"), s("2"))]
            ),
        ]
    );
    assert_eq!(warnings(&j), ["1 trace rows skipped (never-ran)"]);
}

#[test]
fn milli_gpu_resource_counts_fractions_exactly() {
    let cluster = "
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: any}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: shared}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [gpuquota.dev/gpu-milli]
    flavors: [{name: any, resources: [{name: gpuquota.dev/gpu-milli, nominalQuota: 1000}]}]
";
    let trace = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
p0,1,1,1,500,,LS,Running,0,100,1
p1,1,1,1,500,,LS,Running,0,100,1
p2,1,1,1,500,,LS,Running,0,100,1
";
    let sim = r#"
apiVersion: gpuquota.dev/v1alpha1
kind: Simulation
metadata: {name: milli}
spec:
  cluster: [cluster.yaml]
  start: "2023-01-01T00:00:00Z"
  workloads:
  - trace: {format: alibaba-2023, file: pods.csv, queue: shared, milliGpuResource: gpuquota.dev/gpu-milli}
"#;
    let sim = gpuquota_sim::fuzzing::scenario("sim.yaml", sim, "sim", &|f: &str| {
        Ok((
            f.to_owned(),
            if f == "pods.csv" {
                trace.into()
            } else {
                cluster.into()
            },
        ))
    })
    .expect("valid");
    let j = gpuquota_sim::fuzzing::run_kueue(&sim).unwrap().to_json();
    // two halves fit the one GPU at once; the third waits for one of them
    let starts: Vec<i64> = rows(&j).iter().map(|r| r.4[0].0).collect();
    assert_eq!(starts, [0, 0, 99_000]);
    assert_eq!(rows(&j)[0].4[0].3, "500");
}

#[test]
fn trace_entry_errors_name_their_field() {
    let sim = r#"
apiVersion: gpuquota.dev/v1alpha1
kind: Simulation
spec:
  start: "2023-01-01T00:00:00Z"
  workloads:
  - trace: {format: slurm, file: a.csv}
  - trace: {format: alibaba-pai-2020, file: a.csv, queueBy: vc}
"#;
    let e = gpuquota_sim::fuzzing::scenario("sim.yaml", sim, "sim", &|f: &str| {
        Ok((f.to_owned(), String::new()))
    })
    .unwrap_err();
    let fields: Vec<String> = e.iter().map(|d| d.field.clone()).collect();
    assert!(
        fields.contains(&s("spec.workloads[0].trace.format")),
        "{fields:?}"
    );
    assert!(
        fields.contains(&s("spec.workloads[1].trace.queueBy")),
        "{fields:?}"
    );
    assert!(
        fields.contains(&s("spec.workloads[1].trace.taskFile")),
        "{fields:?}"
    );
}

#[test]
fn trace_replay_is_deterministic() {
    assert_eq!(run("helios.yaml"), run("helios.yaml"));
}

/// The nominal quotas of the VCs' ClusterQueues come from `cluster_gpu_number.csv`, on the
/// replay's first day (2020-04-01: vcA 8, vcB 2; the cluster files say 0): job-2 waits for
/// job-1's 8 GPUs, as vcB's 2 cannot make up its 8.
#[test]
fn helios_gpu_numbers_are_the_nominal_quotas() {
    let j = run("helios-quotas.yaml");
    assert_eq!(
        rows(&j),
        [
            (
                s("research/job-1"),
                s("vca"),
                s("COMPLETED"),
                0,
                vec![(0, 3_600_000, s("v100"), s("8"))]
            ),
            (
                s("research/job-2"),
                s("vca"),
                s("FAILED"),
                600_000,
                vec![(3_600_000, 5_400_000, s("v100"), s("8"))]
            ),
            (
                s("research/job-3"),
                s("vcb"),
                s("CANCELLED"),
                1_200_000,
                vec![(1_200_000, 3_000_000, s("v100"), s("2"))]
            ),
        ]
    );
    let all: Vec<String> = j["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_owned())
        .collect();
    assert!(
        all.iter().any(|w| w.ends_with(
            "helios_gpu_number.csv: spec.workloads[0].trace.gpuNumberFile: 1 VC quotas not applied (no-cluster-queue)"
        )),
        "{all:?}"
    );
    let p = trace_data("helios-quotas.yaml");
    let sim = gpuquota_sim::fuzzing::load(&p).unwrap();
    let sc = sim.kueue().expect("a Kueue scenario");
    let q = |cq: &str| {
        sc.model.cluster_queues[cq].spec.resource_groups[0].flavors[0].resources[0]
            .nominal_quota
            .as_ref()
            .map(ToString::to_string)
    };
    assert_eq!(
        (q("vca").as_deref(), q("vcb").as_deref()),
        (Some("8"), Some("2"))
    );
}

#[test]
fn a_generated_trace_needs_no_file_and_follows_its_seed() {
    let p = trace_data("philly-generated.yaml");
    let sim = gpuquota_sim::fuzzing::load(&p).expect("valid scenario");
    let sc = sim.kueue().expect("a Kueue scenario");
    // 60 jobs, all usable (every one asks for GPUs, has an attempt and an end)
    assert_eq!(sc.instances.len(), 60);
    let again = gpuquota_sim::fuzzing::load(&p).unwrap();
    assert_eq!(sc.model.workloads, again.model().workloads);
    let text = std::fs::read_to_string(&p)
        .unwrap()
        .replace("seed: 1", "seed: 2");
    let other = gpuquota_sim::fuzzing::scenario("x", &text, "x", &beside(&p)).unwrap();
    assert_ne!(sc.model.workloads, other.model().workloads);
}

/// `engine: kai`: each trace job is a PodGroup of the leaf Queue named by its VC, with the
/// VCs' GPU quotas from `cluster_gpu_number.csv` (vca 8, vcb 2). job-2 takes vca over its
/// quota on the idle second node and is reclaimed when vcb's job-3 asks for its own 2 GPUs.
#[test]
fn helios_trace_replays_under_kai_into_leaf_queues() {
    let p = trace_data("kai-helios.yaml");
    let sim = gpuquota_sim::fuzzing::load(&p).expect("valid KAI scenario");
    let sc = sim.kai().expect("a KAI scenario");
    let quota = |q: &str| {
        sc.model.queues[q]
            .spec
            .resources
            .as_ref()
            .unwrap()
            .gpu
            .as_ref()
            .unwrap()
            .quota
            .as_ref()
            .map(ToString::to_string)
    };
    assert_eq!(
        (quota("vca").as_deref(), quota("vcb").as_deref()),
        (Some("8"), Some("2"))
    );
    assert_eq!(sc.model.pod_groups["research/job-1"].spec.queue, "vca");
    assert_eq!(
        sc.model.pod_groups["research/job-1"].spec.min_member,
        Some(1)
    );
    let j = gpuquota_sim::fuzzing::run_kai(&sim)
        .expect("simulates")
        .to_json();
    let got: Vec<KaiRow> = j["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                w["workload"].as_str().unwrap().to_owned(),
                w["queue"].as_str().unwrap().to_owned(),
                w["class"].as_str().unwrap().to_owned(),
                w["runs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| {
                        (
                            r["startMs"].as_i64().unwrap(),
                            r["endMs"].as_i64().unwrap(),
                            r["end"].as_str().unwrap().to_owned(),
                        )
                    })
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                s("research/job-1"),
                s("vca"),
                s("COMPLETED"),
                vec![(0, 3_600_000, s("Finished"))]
            ),
            (
                s("research/job-2"),
                s("vca"),
                s("FAILED"),
                vec![
                    (600_000, 1_200_000, s("Evicted")),
                    (3_000_000, 4_800_000, s("Finished"))
                ]
            ),
            (
                s("research/job-3"),
                s("vcb"),
                s("CANCELLED"),
                vec![(1_200_000, 3_000_000, s("Finished"))]
            ),
        ]
    );
    assert_eq!(
        warnings(&j),
        [
            "1 trace rows skipped (no-gpu)",
            "1 trace rows skipped (no-leaf-queue)"
        ]
    );
}

/// A trace naming a parent Queue is refused row by row: KAI places jobs in leaves only.
#[test]
fn kai_trace_rows_of_a_parent_queue_are_counted() {
    let p = trace_data("kai-helios.yaml");
    let text = std::fs::read_to_string(&p).unwrap().replace(
        ", gpuNumberFile: helios_gpu_number.csv, namespace: research",
        ", queue: research",
    );
    let sim = gpuquota_sim::fuzzing::scenario("k.yaml", &text, "k", &beside(&p)).unwrap();
    let sc = sim.kai().expect("a KAI scenario");
    assert!(sc.model.pod_groups.is_empty());
    let w: Vec<String> = sc.warnings.iter().map(|d| d.message.clone()).collect();
    assert_eq!(
        w,
        [
            "1 trace rows skipped (no-gpu)",
            "4 trace rows skipped (not-a-leaf-queue)"
        ]
    );
}

/// Alibaba 2023 under KAI with its node list: the half-V100 pod (`gpu_spec: V100`) lands on
/// the V100 node as a `gpu-fraction`, the 2-GPU pod of queue `be` on the 2-GPU T4 node.
#[test]
fn alibaba_2023_node_list_makes_the_nodes_and_flavors() {
    let p = trace_data("kai-alibaba2023.yaml");
    let sim = gpuquota_sim::fuzzing::load(&p).expect("valid KAI scenario");
    let sc = sim.kai().expect("a KAI scenario");
    assert_eq!(
        sc.model.nodes.keys().collect::<Vec<_>>(),
        ["openb-node-0001", "openb-node-0002", "openb-node-0003"]
    );
    let n = &sc.model.nodes["openb-node-0001"];
    assert_eq!(n.metadata.labels["gpuquota.dev/gpu-type"], "V100");
    let alloc: Vec<(String, String)> = n
        .status
        .allocatable
        .iter()
        .map(|(k, v)| (k.as_str().to_owned(), v.to_string()))
        .collect();
    assert_eq!(
        alloc,
        [
            (s("cpu"), s("96")),
            (s("memory"), s("768Gi")),
            (s("nvidia.com/gpu"), s("1"))
        ]
    );
    // a flavor per GPU model, selecting its nodes
    assert_eq!(
        sc.model.resource_flavors.keys().collect::<Vec<_>>(),
        ["t4", "v100"]
    );
    assert_eq!(
        sc.model.resource_flavors["v100"].spec.node_labels["gpuquota.dev/gpu-type"],
        "V100"
    );
    let j = gpuquota_sim::fuzzing::run_kai(&sim)
        .expect("simulates")
        .to_json();
    let got: Vec<(String, String, String, String)> = j["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            let r = &w["runs"][0];
            (
                w["workload"].as_str().unwrap().to_owned(),
                w["queue"].as_str().unwrap().to_owned(),
                r["usage"]["gpu"].as_str().unwrap().to_owned(),
                r["nodes"][0].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                s("openb/openb-pod-0001"),
                s("ls"),
                s("0.5"),
                s("openb-node-0001")
            ),
            (
                s("openb/openb-pod-0002"),
                s("be"),
                s("2"),
                s("openb-node-0002")
            ),
        ]
    );
    let all: Vec<&str> = j["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert!(
        all.iter()
            .any(|w| w.ends_with("nodeFile: 1 node rows skipped (malformed-row)")),
        "{all:?}"
    );
}

/// Every call is in order (virtual time and events never go back), only the last one is
/// `finished`, and it is at the report's `endMs`.
fn assert_progress_reaches_the_end(seen: &[gpuquota_sim::progress::Progress], end_ms: i64) {
    assert!(seen.len() >= 2, "{seen:?}");
    for w in seen.windows(2) {
        assert!(
            w[0].at_ms <= w[1].at_ms && w[0].events <= w[1].events,
            "{seen:?}"
        );
    }
    assert_eq!(seen.iter().filter(|p| p.finished).count(), 1, "{seen:?}");
    let last = seen.last().unwrap();
    assert!(last.finished);
    assert_eq!(last.at_ms, end_ms);
    assert_eq!(last.percent(), Some(100));
}

/// The replay's progress under Kueue, ResourceQuota and KAI: monotone, ending at `endMs`,
/// and the report is the same bytes as without a callback.
#[test]
fn replay_progress_is_monotone_and_reaches_the_end() {
    use gpuquota_sim::progress::{Progress, RunOptions};
    use std::cell::RefCell;
    let p = trace_data("helios.yaml");
    let mut sim = gpuquota_sim::fuzzing::load(&p).expect("valid scenario");
    for engine in [scenario::Engine::Kueue, scenario::Engine::ResourceQuota] {
        sim.kueue_mut().expect("a Kueue scenario").engine = engine;
        let seen = RefCell::new(Vec::new());
        let record = |x: Progress| seen.borrow_mut().push(x);
        let with = gpuquota_sim::simulate_with_options(
            &sim,
            &RunOptions {
                progress: Some(&record),
            },
        )
        .expect("simulates");
        let without = gpuquota_sim::fuzzing::run_kueue(&sim).expect("simulates");
        assert_eq!(with.to_json_string(), without.to_json_string());
        // the streamed JSON is the same bytes as the text
        let mut streamed = Vec::new();
        let with = with.into_kueue().expect("a Kueue report");
        with.write_json(&mut streamed).expect("writes");
        assert_eq!(streamed, with.to_json_string().into_bytes());
        let seen = seen.into_inner();
        // no spec.end: the window is open, the last event (job-2's end at 01:30) closes it
        assert_eq!(seen[0].end_ms, None);
        assert_progress_reaches_the_end(&seen, with.to_json()["endMs"].as_i64().unwrap());
    }
    let p = trace_data("kai-helios.yaml");
    let sim = gpuquota_sim::fuzzing::load(&p).expect("valid KAI scenario");
    let seen = RefCell::new(Vec::new());
    let record = |x: Progress| seen.borrow_mut().push(x);
    let with = gpuquota_sim::simulate_with_options(
        &sim,
        &RunOptions {
            progress: Some(&record),
        },
    )
    .expect("simulates");
    let without = gpuquota_sim::fuzzing::run_kai(&sim).expect("simulates");
    assert_eq!(with.to_json_string(), without.to_json_string());
    let seen = seen.into_inner();
    // three hours of sessions: one call per whole percent (0 … 99), then the end
    assert_eq!(seen.len(), 101);
    assert_eq!(seen[0].end_ms, Some(10_800_000));
    assert_eq!(seen[1].percent(), Some(1));
    assert_progress_reaches_the_end(&seen, 10_800_000);
}

/// Reads a scenario of `tests/data/traces` with `edit` applied to its text.
fn edited(name: &str, edit: impl Fn(String) -> String) -> Result<String, Vec<String>> {
    let p = trace_data(name);
    let text = edit(std::fs::read_to_string(&p).unwrap());
    let read = beside(&p);
    Ok(text).and_then(|t| {
        if t.contains("engine: kai") {
            gpuquota_sim::fuzzing::scenario(name, &t, "x", &read)
                .map(|_| t)
                .map_err(|d| d.iter().map(|x| x.to_string()).collect())
        } else {
            gpuquota_sim::fuzzing::scenario(name, &t, "x", &read)
                .map(|_| t)
                .map_err(|d| d.iter().map(|x| x.to_string()).collect())
        }
    })
}

/// The GPU `nominalQuota` of ClusterQueues `vca` and `vcb`.
fn vc_quotas(sc: &scenario::Scenario) -> (String, String) {
    let q = |cq: &str| {
        sc.model.cluster_queues[cq].spec.resource_groups[0].flavors[0].resources[0]
            .nominal_quota
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default()
    };
    (q("vca"), q("vcb"))
}

/// `share: {by: demand, gpus: 10}`: vcA's jobs asked for 8 × 3,600 + 8 × 1,800 = 43,200
/// GPU-seconds, vcB's 2 × 1,800 = 3,600: 10 × 43,200 / 46,800 = 9.23 and 0.77, floors 9
/// and 0, the GPU left to the larger remainder (vcB's 0.77): 9 and 1. vcZ has no
/// ClusterQueue and is counted. The replay then admits job-3 by borrowing vcA's unused GPU.
#[test]
fn share_by_demand_splits_gpu_seconds_by_the_largest_remainder() {
    let p = trace_data("helios-share.yaml");
    let sim = gpuquota_sim::fuzzing::load(&p).expect("valid scenario");
    let sc = sim.kueue().expect("a Kueue scenario");
    assert_eq!(vc_quotas(sc), (s("9"), s("1")));
    assert_eq!(
        quota_warnings(&sc.warnings),
        ["spec.workloads[0].trace.share: 1 queue quotas not applied (no-cluster-queue)"]
    );
    let j = gpuquota_sim::fuzzing::run_kueue(&sim)
        .expect("simulates")
        .to_json();
    assert_eq!(j["queues"]["vca"]["nominal"]["v100"]["nvidia.com/gpu"], "9");
    assert_eq!(j["queues"]["vcb"]["nominal"]["v100"]["nvidia.com/gpu"], "1");
    let runs: Vec<(String, Vec<RunRow>)> = rows(&j).into_iter().map(|r| (r.0, r.4)).collect();
    assert_eq!(
        runs,
        [
            (s("research/job-1"), vec![(0, 3_600_000, s("v100"), s("8"))]),
            (
                s("research/job-2"),
                vec![(3_600_000, 5_400_000, s("v100"), s("8"))]
            ),
            (
                s("research/job-3"),
                vec![(1_200_000, 3_000_000, s("v100"), s("2"))]
            ),
        ]
    );
}

/// `share: {gpus: N}` splits equally (the default): 9 GPUs between vca and vcb are 4.5
/// each, and the GPU left goes to the first by name (vca); 8 are 4 and 4.
#[test]
fn share_equal_is_the_default_and_ties_go_to_the_first_name() {
    let nine = kueue_edited("helios-share.yaml", |t| {
        t.replace("by: demand, gpus: 10", "gpus: 9")
    });
    assert_eq!(
        vc_quotas(nine.kueue().expect("a Kueue scenario")),
        (s("5"), s("4"))
    );
    let eight = kueue_edited("helios-share.yaml", |t| {
        t.replace("by: demand, gpus: 10", "by: equal, gpus: 8")
    });
    assert_eq!(
        vc_quotas(eight.kueue().expect("a Kueue scenario")),
        (s("4"), s("4"))
    );
}

/// Demand counts the GPU time inside the window: with `spec.end` at 00:20, vcA's jobs
/// used 8 × 1,200 + 8 × 600 GPU-seconds and vcB's job-3 arrives at the end (0): all 10
/// GPUs to vcA.
#[test]
fn share_by_demand_counts_the_replay_window_only() {
    let sc = kueue_edited("helios-share.yaml", |t| {
        t.replace(
            "start: \"2020-04-01T00:00:00Z\"",
            "start: \"2020-04-01T00:00:00Z\"\n  end: \"2020-04-01T00:20:00Z\"",
        )
    });
    assert_eq!(
        vc_quotas(sc.kueue().expect("a Kueue scenario")),
        (s("10"), s("0"))
    );
}

/// Without `share.gpus` the total is the nodes' GPUs, else the queues' present quotas; none
/// of either is a warning and the quotas stay. Queues whose ClusterQueue has no quota for
/// the GPU resource are counted.
#[test]
fn share_total_defaults_and_queues_without_a_gpu_quota_are_counted() {
    let none = kueue_edited("helios-share.yaml", |t| {
        t.replace("by: demand, gpus: 10", "")
    });
    assert_eq!(
        vc_quotas(none.kueue().expect("a Kueue scenario")),
        (s("0"), s("0"))
    );
    assert_eq!(
        quota_warnings(&none.kueue().expect("a Kueue scenario").warnings),
        [
            "spec.workloads[0].trace.share: no GPUs to share: set share.gpus (the cluster has no node GPUs and the queues no GPU quota)",
            "spec.workloads[0].trace.share: 1 queue quotas not applied (no-cluster-queue)",
        ]
    );
    // helios.yaml's ClusterQueues quote the GPUs in two flavors each: which one a VC's
    // share is cannot be told, so both are counted and keep their quotas
    assert_eq!(
        edited_quota_warnings(
            "helios.yaml",
            "namespace: research}",
            "namespace: research, share: {by: demand}}"
        ),
        [
            "spec.workloads[0].trace.share: 1 queue quotas not applied (no-cluster-queue)",
            "spec.workloads[0].trace.share: 2 queue quotas not applied (several-gpu-flavors)",
        ]
    );
    assert_eq!(
        edited_quota_warnings(
            "helios-share.yaml",
            "share: {by: demand, gpus: 10}",
            "milliGpuResource: gpuquota.dev/gpu-milli, share: {gpus: 4}"
        ),
        [
            "spec.workloads[0].trace.share: 1 queue quotas not applied (no-cluster-queue)",
            "spec.workloads[0].trace.share: 2 queue quotas not applied (no-gpu-quota)",
        ]
    );
}

/// Under KAI the share goes to the leaf Queues' `resources.gpu.quota`, out of the nodes'
/// 16 GPUs: by demand 16 × 43,200 / 46,800 = 14.77 and 1.23, so 15 and 1; equally 8 and 8.
/// `research` (a parent) is not a trace queue, vcZ has no Queue (counted).
#[test]
fn share_under_kai_divides_the_nodes_gpus_among_the_leaf_queues() {
    let quota = |sc: &gpuquota_sim::kai::KaiScenario, q: &str| {
        sc.model.queues[q]
            .spec
            .resources
            .as_ref()
            .and_then(|r| r.gpu.as_ref())
            .and_then(|g| g.quota.as_ref())
            .map(ToString::to_string)
            .unwrap_or_default()
    };
    let p = trace_data("kai-helios.yaml");
    let load = |share: &str| {
        let text = std::fs::read_to_string(&p)
            .unwrap()
            .replace("gpuNumberFile: helios_gpu_number.csv", share);
        gpuquota_sim::fuzzing::scenario("k.yaml", &text, "k", &beside(&p))
            .expect("valid KAI scenario")
    };
    let demand_sim = load("share: {by: demand}");
    let demand = demand_sim.kai().expect("a KAI scenario");
    assert_eq!(
        (
            quota(demand, "vca"),
            quota(demand, "vcb"),
            quota(demand, "research")
        ),
        (s("15"), s("1"), s("16"))
    );
    let w: Vec<String> = demand.warnings.iter().map(|d| d.message.clone()).collect();
    assert_eq!(
        w,
        [
            "1 queue quotas not applied (no-leaf-queue)",
            "1 trace rows skipped (no-gpu)",
            "1 trace rows skipped (no-leaf-queue)"
        ]
    );
    let equal = load("share: {}");
    let equal = equal.kai().expect("a KAI scenario");
    assert_eq!((quota(equal, "vca"), quota(equal, "vcb")), (s("8"), s("8")));
    gpuquota_sim::fuzzing::run_kai(&demand_sim).expect("simulates");
}

/// `share` refused with `gpuNumberFile` (both set the VCs' quotas), an unknown rule, 0 GPUs.
#[test]
fn share_errors_name_their_field() {
    let both = edited("helios-quotas.yaml", |t| {
        t.replace(
            "namespace: research}",
            "namespace: research, share: {gpus: 4}}",
        )
    })
    .unwrap_err();
    assert!(
        both.iter().any(
            |e| e.contains("spec.workloads[0].trace.share: give either gpuNumberFile or share")
        ),
        "{both:?}"
    );
    let by = edited("helios-share.yaml", |t| t.replace("by: demand", "by: fair")).unwrap_err();
    assert!(
        by.iter().any(|e| e.contains(
            "spec.workloads[0].trace.share.by: unknown share \"fair\": expected equal or demand"
        )),
        "{by:?}"
    );
    let zero = edited("helios-share.yaml", |t| t.replace("gpus: 10", "gpus: 0")).unwrap_err();
    assert!(
        zero.iter()
            .any(|e| e.contains("spec.workloads[0].trace.share.gpus: at least 1 GPU")),
        "{zero:?}"
    );
    let kai = edited("kai-helios.yaml", |t| {
        t.replace("namespace: research}", "namespace: research, share: {}}")
    })
    .unwrap_err();
    assert!(
        kai.iter()
            .any(|e| e.contains("trace.share: give either gpuNumberFile or share")),
        "{kai:?}"
    );
}

/// Every format: Alibaba 2023 under KAI, the total from its node list (1 V100 + 2 T4 = 3
/// GPUs). By demand, `be` asked for 2 GPUs × 600 s = 1,200 GPU-seconds and `ls` for half a
/// GPU × 3,600 s = 1,800 (fractions count exactly): 3 × 1,200 / 3,000 = 1.2 and 1.8, so 1
/// and 1, the GPU left to ls's 0.8: be 1, ls 2. Equally, 1.5 each: the tie to `be`.
#[test]
fn share_counts_fractions_and_takes_the_node_lists_gpus() {
    let p = trace_data("kai-alibaba2023.yaml");
    let load = |share: &str| {
        let text = std::fs::read_to_string(&p).unwrap().replace(
            "namespace: openb}",
            &format!("namespace: openb, share: {share}}}"),
        );
        gpuquota_sim::fuzzing::scenario("k.yaml", &text, "k", &beside(&p))
            .expect("valid KAI scenario")
    };
    let quotas = |sc: &gpuquota_sim::kai::KaiScenario| {
        ["be", "ls", "platform"].map(|q| {
            sc.model.queues[q]
                .spec
                .resources
                .as_ref()
                .and_then(|r| r.gpu.as_ref())
                .and_then(|g| g.quota.as_ref())
                .map(ToString::to_string)
                .unwrap_or_default()
        })
    };
    assert_eq!(
        quotas(load("{by: demand}").kai().expect("KAI")),
        ["1", "2", "3"]
    );
    assert_eq!(quotas(load("{}").kai().expect("KAI")), ["2", "1", "3"]);
}

#[test]
fn acme_trace_keeps_the_recorded_waits_on_the_instances() {
    let sim = gpuquota_sim::fuzzing::load(&trace_data("acme.yaml")).expect("valid scenario");
    let sc = sim.kueue().expect("a Kueue scenario");
    let inst = |k: &str| {
        let i = &sc.instances[k];
        (
            i.class.as_str(),
            i.created_ms,
            i.runtime_ms,
            i.recorded_wait_ms,
        )
    };
    // 08:00+08:00 is the start (00:00Z); `queue` 100 s and 5 s are the recorded waits
    assert_eq!(
        inst("research/7001"),
        ("COMPLETED", 0, Some(3_600_000), Some(100_000))
    );
    assert_eq!(
        inst("research/7002"),
        ("FAILED", 300_000, Some(600_000), Some(5_000))
    );
    let j = run("acme.yaml");
    let starts: Vec<(String, i64, i64)> = rows(&j)
        .into_iter()
        .map(|(w, _, _, _, runs)| (w, runs[0].0, runs[0].1))
        .collect();
    // 4 + 2 GPUs fit the queue's 8: both start on arrival (the simulated wait is 0)
    assert_eq!(
        starts,
        [
            (s("research/7001"), 0, 3_600_000),
            (s("research/7002"), 300_000, 900_000)
        ]
    );
}

#[test]
fn helios_trace_records_start_minus_submit_as_the_wait() {
    let sim = gpuquota_sim::fuzzing::load(&trace_data("helios.yaml")).expect("valid scenario");
    let sc = sim.kueue().expect("a Kueue scenario");
    let waits: Vec<(&str, Option<i64>)> = sc
        .instances
        .values()
        .map(|i| (i.key.as_str(), i.recorded_wait_ms))
        .collect();
    // job-2 was submitted at 00:10 and started at 01:00; the others started on submission
    assert_eq!(
        waits,
        [
            ("research/job-1", Some(0)),
            ("research/job-2", Some(3_000_000)),
            ("research/job-3", Some(0))
        ]
    );
}

#[test]
fn alibaba_spot_trace_names_the_defined_priority_classes() {
    let sim =
        gpuquota_sim::fuzzing::load(&trace_data("alibaba-spot.yaml")).expect("valid scenario");
    let sc = sim.kueue().expect("a Kueue scenario");
    let w = |k: &str| {
        let w = &sc.model.workloads[k];
        (
            w.spec.priority_class_name.clone(),
            w.spec.priority,
            sc.instances[k].class.clone(),
            sc.instances[k].recorded_wait_ms,
        )
    };
    // `hp` is a WorkloadPriorityClass of the cluster files (value 1000); `spot` is not
    assert_eq!(
        w("research/900"),
        (Some(s("hp")), Some(1000), s("HP"), None)
    );
    assert_eq!(w("research/901"), (None, None, s("Spot"), None));
    assert_eq!(sc.instances["research/901"].created_ms, 30_000);
    assert_eq!(sc.instances["research/901"].runtime_ms, Some(1_200_000));
    let pods = &sc.model.workloads["research/900"].spec.pod_sets[0];
    assert_eq!(pods.count, 2);
}
