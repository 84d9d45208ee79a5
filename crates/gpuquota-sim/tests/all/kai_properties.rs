//! The KAI mode's properties (crate docs, section KAI mode), one proptest each, over random
//! clusters: one or two nodes, two or three project queues under one department with random
//! deserved quota, weight and limit, and up to 12 jobs with random gangs, GPUs, priorities
//! (preemptible or not), arrivals and runtimes, with or without time-based fairshare.

use std::collections::BTreeMap;

use gpuquota_rank::Resource;
use gpuquota_sim::kai::{self, KaiOutcome, KaiRunEnd};
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Q {
    deserved: i64,
    weight: i64,
    limit: Option<i64>,
}

#[derive(Debug, Clone)]
struct J {
    queue: usize,
    pods: i64,
    gpus: i64,
    non_preemptible: bool,
    created_s: i64,
    runtime_s: Option<i64>,
}

#[derive(Debug, Clone)]
struct Scn {
    nodes: Vec<i64>,
    queues: Vec<Q>,
    jobs: Vec<J>,
    usage: bool,
}

fn scn() -> impl Strategy<Value = Scn> {
    (
        prop::collection::vec(2i64..9, 1..3),
        prop::collection::vec(
            (0i64..5, 1i64..4, prop::option::of(2i64..12)).prop_map(|(deserved, weight, limit)| {
                // a limit below the quota is refused by the validator (KAI's Queue webhook)
                Q {
                    deserved,
                    weight,
                    limit: limit.map(|l| l.max(deserved)),
                }
            }),
            2..4,
        ),
        any::<bool>(),
    )
        .prop_flat_map(|(nodes, queues, usage)| {
            let nq = queues.len();
            let job = (
                0..nq,
                1i64..3,
                1i64..5,
                prop::bool::weighted(0.25),
                0i64..20,
                prop::option::weighted(0.8, 1i64..30),
            )
                .prop_map(
                    |(queue, pods, gpus, non_preemptible, created_s, runtime_s)| J {
                        queue,
                        pods,
                        gpus,
                        non_preemptible,
                        created_s,
                        runtime_s,
                    },
                );
            (
                Just(nodes),
                Just(queues),
                prop::collection::vec(job, 0..12),
                Just(usage),
            )
        })
        .prop_map(|(nodes, queues, jobs, usage)| Scn {
            nodes,
            queues,
            jobs,
            usage,
        })
}

fn docs(s: &Scn) -> Vec<String> {
    let mut d = vec![
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: inference}\nvalue: 125\n".to_owned(),
        "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: dept}\nspec: {resources: {gpu: {quota: -1, overQuotaWeight: 1, limit: -1}}}\n".to_owned(),
    ];
    for (i, g) in s.nodes.iter().enumerate() {
        d.push(format!("apiVersion: v1\nkind: Node\nmetadata: {{name: n{i}}}\nstatus: {{allocatable: {{nvidia.com/gpu: \"{g}\", cpu: \"64\", memory: 256Gi}}}}\n"));
    }
    for (i, q) in s.queues.iter().enumerate() {
        d.push(format!(
            "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {{name: q{i}}}\nspec: {{parentQueue: dept, resources: {{gpu: {{quota: {}, overQuotaWeight: {}, limit: {}}}}}}}\n",
            q.deserved, q.weight, q.limit.unwrap_or(-1)
        ));
    }
    for (i, j) in s.jobs.iter().enumerate() {
        let rt = j
            .runtime_s
            .map(|r| format!(", gpuquota.dev/runtime: {r}s"))
            .unwrap_or_default();
        let pc = if j.non_preemptible {
            ", priorityClassName: inference"
        } else {
            ""
        };
        d.push(format!(
            "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {{name: j{i}, namespace: ns, creationTimestamp: \"2026-04-01T00:00:{:02}Z\", annotations: {{gpuquota.dev/class: c{rt}}}}}\nspec: {{queue: q{}, minMember: {}{pc}}}\n",
            j.created_s, j.queue, j.pods
        ));
        for p in 0..j.pods {
            d.push(format!(
                "apiVersion: v1\nkind: Pod\nmetadata: {{name: j{i}-{p}, namespace: ns, annotations: {{pod-group-name: j{i}}}}}\nspec: {{schedulerName: kai-scheduler, containers: [{{name: c, resources: {{limits: {{nvidia.com/gpu: \"{}\"}}}}}}]}}\nstatus: {{phase: Pending}}\n",
                j.gpus
            ));
        }
    }
    d
}

fn scenario_text(s: &Scn) -> String {
    let usage = if s.usage {
        "\n    usage: {windowSize: 10s, halfLifePeriod: 5s, fetchInterval: 1s, queryResolution: 1s}"
    } else {
        ""
    };
    format!(
        "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {{name: p}}\nspec:\n  engine: kai\n  cluster: [c.yaml]\n  start: \"2026-04-01T00:00:00Z\"\n  end: \"2026-04-01T00:01:00Z\"\n  kai:\n    sessionInterval: 1s{usage}\n"
    )
}

fn run_docs(s: &Scn, docs: &[String]) -> KaiOutcome {
    let cluster = docs.join("---\n");
    let sim = gpuquota_sim::fuzzing::scenario("p.yaml", &scenario_text(s), "p", &|_| {
        Ok(("c.yaml".to_owned(), cluster.clone()))
    })
    .expect("valid scenario");
    gpuquota_sim::fuzzing::run_kai(&sim).expect("runs")
}

fn run(s: &Scn) -> KaiOutcome {
    run_docs(s, &docs(s))
}

/// Every instant where something starts or ends, with the usage in force just after it:
/// `(time, per-run usage)` for the runs covering `[t, next)`.
fn sweep(o: &KaiOutcome) -> Vec<(i64, Vec<(&str, &kai::KaiRun)>)> {
    let mut times: Vec<i64> = o
        .jobs
        .iter()
        .flat_map(|j| j.runs.iter().flat_map(|r| [r.start_ms, r.end_ms]))
        .collect();
    times.sort_unstable();
    times.dedup();
    times
        .into_iter()
        .map(|t| {
            let live = o
                .jobs
                .iter()
                .flat_map(|j| j.runs.iter().map(move |r| (j.key.as_str(), r)))
                .filter(|(_, r)| r.start_ms <= t && t < r.end_ms)
                .collect();
            (t, live)
        })
        .collect()
}

fn job_index(key: &str) -> usize {
    key.trim_start_matches("ns/j").parse().expect("job key")
}

const G: i128 = 1_000_000_000;

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// At every instant no node holds more GPUs than it has.
    #[test]
    fn kai_node_capacity(s in scn()) {
        let o = run(&s);
        for (t, live) in sweep(&o) {
            let mut per: BTreeMap<&str, i128> = BTreeMap::new();
            for (_, r) in &live {
                for (n, u) in &r.placement {
                    *per.entry(n.as_str()).or_default() += u[Resource::Gpu];
                }
            }
            for (n, used) in per {
                let i: usize = n.trim_start_matches('n').parse().expect("node");
                prop_assert!(used <= i128::from(s.nodes[i]) * G, "node {n} at {t}: {used}");
            }
        }
    }

    /// At every instant no queue is above its GPU limit, and no queue's non-preemptible
    /// work is above its deserved quota.
    #[test]
    fn kai_queue_limits(s in scn()) {
        let o = run(&s);
        for (t, live) in sweep(&o) {
            let mut used = vec![0i128; s.queues.len()];
            let mut np = vec![0i128; s.queues.len()];
            for (k, r) in &live {
                let j = &s.jobs[job_index(k)];
                used[j.queue] += r.usage[Resource::Gpu];
                if j.non_preemptible {
                    np[j.queue] += r.usage[Resource::Gpu];
                }
            }
            for (q, spec) in s.queues.iter().enumerate() {
                if let Some(l) = spec.limit {
                    prop_assert!(used[q] <= i128::from(l) * G, "q{q} at {t}: {} > limit {l}", used[q]);
                }
                prop_assert!(np[q] <= i128::from(spec.deserved) * G, "q{q} at {t}: non-preemptible {} > deserved", np[q]);
            }
        }
    }

    /// Every run holds its whole gang (every pod, as minMember is the pod count), and a
    /// job's runs are in order and never overlap.
    #[test]
    fn kai_gangs_whole(s in scn()) {
        let o = run(&s);
        for j in &o.jobs {
            let spec = &s.jobs[job_index(&j.key)];
            let mut last = i64::MIN;
            for r in &j.runs {
                prop_assert_eq!(r.usage[Resource::Gpu], i128::from(spec.pods * spec.gpus) * G);
                prop_assert!(r.start_ms >= last && r.end_ms >= r.start_ms);
                last = r.end_ms;
            }
            // Finished exactly when the last run ran its whole runtime.
            if let (Some(f), Some(rt)) = (j.finished_ms, spec.runtime_s) {
                let r = j.runs.last().expect("a finished job ran");
                prop_assert_eq!(r.end.clone(), KaiRunEnd::Finished);
                prop_assert_eq!(f - r.start_ms, rt * 1000);
            }
        }
    }

    /// The same scenario gives the same bytes, whatever the order of its documents.
    #[test]
    fn kai_determinism(s in scn()) {
        let a = run(&s).to_json_string();
        prop_assert_eq!(&a, &run(&s).to_json_string());
        let mut d = docs(&s);
        d.reverse();
        prop_assert_eq!(&a, &run_docs(&s, &d).to_json_string());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// With usage decay off (no time-based fairshare) and every queue saturated with
    /// preemptible one-GPU jobs, the allocation settles on the static fair share `kai
    /// fairshare` gives for the same cluster.
    #[test]
    fn kai_converges_to_static_fair_share(
        nodes in prop::collection::vec(2i64..9, 1..3),
        queues in prop::collection::vec((0i64..4, 1i64..4), 2..4),
    ) {
        let total: i64 = nodes.iter().sum();
        // A sane quota: the deserved amounts fit in the cluster.
        prop_assume!(queues.iter().map(|q| q.0).sum::<i64>() <= total);
        let s = Scn {
            nodes,
            queues: queues.iter().map(|&(d, w)| Q { deserved: d, weight: w, limit: None }).collect(),
            jobs: (0..queues.len())
                .flat_map(|q| (0..total + 1).map(move |i| J {
                    queue: q, pods: 1, gpus: 1, non_preemptible: false,
                    created_s: (i % 3), runtime_s: None,
                }))
                .collect(),
            usage: false,
        };
        let d = docs(&s);
        let o = run_docs(&s, &d);
        let model = gpuquota_model::import_str("c.yaml", &d.join("---\n")).expect("imports").model;
        let input = gpuquota_rank::Input::from_model(&model, &gpuquota_rank::Options::default()).expect("cluster");
        let json = serde_json::to_value(gpuquota_rank::fairshare(&input).expect("division")).unwrap();
        for (q, _) in s.queues.iter().enumerate() {
            let name = format!("q{q}");
            let fs: f64 = json["queues"][&name]["gpu"]["fairShare"].as_str().expect("fair share").parse().expect("number");
            let series = &o.queues.iter().find(|x| x.name == name).expect("queue").allocated;
            prop_assert_eq!(*series.last().expect("sessions"), fs, "{}", name);
        }
    }
}
