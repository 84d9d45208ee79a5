//! The crate docs' properties, one proptest each, over random scenarios: one cohort (or
//! none) of up to three ClusterQueues with random nominal quota, borrowing and lending
//! limits and preemption policies, and up to 14 workloads with random sizes, priorities,
//! arrivals and runtimes.

use std::collections::BTreeMap;

use gpuquota_sim::{RunEnd, scenario};
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Cq {
    nominal: i64,
    borrowing: Option<i64>,
    lending: Option<i64>,
    within: &'static str,
    reclaim: &'static str,
    strict: bool,
}

#[derive(Debug, Clone)]
struct Wl {
    cq: usize,
    cpu: i64,
    count: i64,
    priority: i32,
    created_ms: i64,
    runtime_ms: Option<i64>,
}

#[derive(Debug, Clone)]
struct Scn {
    cohort: bool,
    cqs: Vec<Cq>,
    wls: Vec<Wl>,
}

fn cq() -> impl Strategy<Value = Cq> {
    (
        0i64..8,
        prop::option::of(0i64..6),
        prop::option::of(0i64..6),
        prop::sample::select(vec!["Never", "LowerPriority", "LowerOrNewerEqualPriority"]),
        prop::sample::select(vec!["Never", "LowerPriority", "Any"]),
        any::<bool>(),
    )
        .prop_map(
            |(nominal, borrowing, lending, within, reclaim, strict)| Cq {
                nominal,
                borrowing,
                lending: lending.map(|l| l.min(nominal)),
                within,
                reclaim,
                strict,
            },
        )
}

fn scn(with_runtime: bool) -> impl Strategy<Value = Scn> {
    (any::<bool>(), prop::collection::vec(cq(), 1..4)).prop_flat_map(move |(cohort, cqs)| {
        let n = cqs.len();
        let wl = (0..n, 1i64..4, 1i64..3, 0i32..3, 0i64..4, 1i64..5).prop_map(
            move |(cq, cpu, count, priority, arrive, run)| Wl {
                cq,
                cpu,
                count,
                priority: priority * 100,
                created_ms: if with_runtime { arrive * 500 } else { 0 },
                runtime_ms: with_runtime.then_some(run * 700),
            },
        );
        prop::collection::vec(wl, 1..14).prop_map(move |wls| Scn {
            cohort,
            cqs: cqs.clone(),
            wls,
        })
    })
}

const START: &str = "2026-04-01T00:00:00Z";

/// The cluster as documents (each a string, so a test can shuffle them).
fn documents(s: &Scn) -> Vec<String> {
    let mut docs = vec![
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: rf}\n"
            .to_owned(),
    ];
    for (i, c) in s.cqs.iter().enumerate() {
        let mut res = format!("{{name: cpu, nominalQuota: {}", c.nominal);
        if let Some(b) = c.borrowing.filter(|_| s.cohort) {
            res.push_str(&format!(", borrowingLimit: {b}"));
        }
        if let Some(l) = c.lending.filter(|_| s.cohort) {
            res.push_str(&format!(", lendingLimit: {l}"));
        }
        res.push('}');
        let cohort = if s.cohort { "  cohort: co\n" } else { "" };
        docs.push(format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: cq{i}}}\nspec:\n{cohort}  namespaceSelector: {{}}\n  queueingStrategy: {}\n  preemption: {{withinClusterQueue: {}, reclaimWithinCohort: {}}}\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors: [{{name: rf, resources: [{res}]}}]\n",
            if c.strict { "StrictFIFO" } else { "BestEffortFIFO" },
            c.within,
            c.reclaim
        ));
        docs.push(format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: lq{i}, namespace: ns}}\nspec: {{clusterQueue: cq{i}}}\n"
        ));
    }
    if s.cohort {
        docs.push(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: co}\nspec: {}\n"
                .to_owned(),
        );
    }
    for (i, w) in s.wls.iter().enumerate() {
        let mut ann = String::new();
        if let Some(r) = w.runtime_ms {
            ann = format!("  annotations: {{gpuquota.dev/runtime: {r}ms}}\n");
        }
        let created = if w.created_ms > 0 {
            let t = scenario::at_ms(
                gpuquota_model::Timestamp::parse(START).unwrap(),
                w.created_ms,
            );
            format!("  creationTimestamp: \"{t}\"\n")
        } else {
            String::new()
        };
        docs.push(format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata:\n  name: w{i:02}\n  namespace: ns\n{created}{ann}spec:\n  queueName: lq{}\n  priority: {}\n  podSets: [{{name: main, count: {}, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: \"{}\"}}}}}}]}}}}}}]\n",
            w.cq, w.priority, w.count, w.cpu
        ));
    }
    docs
}

fn cluster_text(docs: &[String]) -> String {
    docs.iter().map(|d| format!("---\n{d}")).collect()
}

fn sim_text(end: Option<&str>) -> String {
    let end = end.map(|e| format!("  end: \"{e}\"\n")).unwrap_or_default();
    format!(
        "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {{name: p}}\nspec:\n  cluster: [cluster.yaml]\n  start: \"{START}\"\n{end}"
    )
}

fn run(cluster: &str, end: Option<&str>) -> gpuquota_sim::Report {
    let c = cluster.to_owned();
    let sim = gpuquota_sim::fuzzing::scenario("p.yaml", &sim_text(end), "p", &move |_| {
        Ok(("cluster.yaml".to_owned(), c.clone()))
    })
    .expect("valid scenario");
    gpuquota_sim::fuzzing::run_kueue(&sim).expect("simulates")
}

/// The independent capacity check: sweep the runs' start/end events in time order (ends
/// before starts at one instant) and check, after each instant, every ClusterQueue against
/// nominal + borrowingLimit and the cohort against what its members lend.
fn check_capacity(s: &Scn, r: &gpuquota_sim::Report) -> Result<(), String> {
    let mut events: BTreeMap<i64, Vec<(usize, i64)>> = BTreeMap::new();
    for w in &r.outcome.workloads {
        let Some(ci) = w
            .queue
            .strip_prefix("cq")
            .and_then(|x| x.parse::<usize>().ok())
        else {
            continue;
        };
        for run in &w.runs {
            if run.end_ms == run.start_ms {
                continue;
            }
            let milli: i64 = run.usage.iter().map(|u| u.1).sum();
            events.entry(run.start_ms).or_default().push((ci, milli));
            events.entry(run.end_ms).or_default().push((ci, -milli));
        }
    }
    let mut used = vec![0i64; s.cqs.len()];
    for (t, evs) in &events {
        let mut evs = evs.clone();
        evs.sort_by_key(|e| e.1);
        for (ci, d) in evs {
            used[ci] += d;
        }
        let mut lent = 0;
        let mut lendable = 0;
        for (i, c) in s.cqs.iter().enumerate() {
            let (u, nom) = (used[i], c.nominal * 1000);
            if !s.cohort {
                if u > nom {
                    return Err(format!("cq{i} uses {u}m > nominal {nom}m at {t}"));
                }
                continue;
            }
            if let Some(b) = c.borrowing
                && u > nom + b * 1000
            {
                return Err(format!("cq{i} uses {u}m > nominal + borrowingLimit at {t}"));
            }
            let guaranteed = c.lending.map_or(0, |l| nom - l * 1000);
            lent += (u - guaranteed).max(0);
            lendable += nom - guaranteed;
        }
        if s.cohort && lent > lendable {
            return Err(format!(
                "cohort above what its members lend ({lent}m > {lendable}m) at {t}"
            ));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Every workload appears once and ends finished, cut or pending with a reason; its runs
    /// are in time order and never overlap.
    #[test]
    fn conservation(s in scn(true)) {
        let r = run(&cluster_text(&documents(&s)), Some("2026-04-01T00:00:20Z"));
        prop_assert_eq!(r.outcome.workloads.len(), s.wls.len());
        let mut keys: Vec<&str> = r.outcome.workloads.iter().map(|w| w.key.as_str()).collect();
        keys.dedup();
        prop_assert_eq!(keys.len(), s.wls.len());
        for w in &r.outcome.workloads {
            for pair in w.runs.windows(2) {
                prop_assert!(pair[0].end_ms <= pair[1].start_ms, "{} runs overlap", w.key);
                prop_assert!(matches!(pair[0].end, RunEnd::Preempted { .. }), "{} ran again after {:?}", w.key, pair[0].end);
            }
            for run in &w.runs {
                prop_assert!(run.start_ms <= run.end_ms);
                prop_assert!(run.start_ms >= w.created_ms);
            }
            let last = w.runs.last().map(|r| &r.end);
            match (w.finished_ms, last, &w.pending) {
                (Some(f), Some(RunEnd::Finished), None) => prop_assert_eq!(Some(f), w.runs.last().map(|r| r.end_ms)),
                (None, Some(RunEnd::Cut), None) => {}
                (None, None | Some(RunEnd::Preempted { .. }), Some((reason, _))) => prop_assert!(!reason.is_empty()),
                other => prop_assert!(false, "{}: inconsistent end {:?}", w.key, other),
            }
        }
    }

    /// No ClusterQueue above nominal + borrowingLimit, no cohort above its subtree quota,
    /// every lendingLimit held, at every instant.
    #[test]
    fn capacity(s in scn(true)) {
        let r = run(&cluster_text(&documents(&s)), Some("2026-04-01T00:00:20Z"));
        if let Err(e) = check_capacity(&s, &r) {
            prop_assert!(false, "{}", e);
        }
    }

    /// The same scenario gives the same bytes, whatever the document order.
    #[test]
    fn determinism(s in scn(true), seed in any::<u64>()) {
        let docs = documents(&s);
        let a = run(&cluster_text(&docs), Some("2026-04-01T00:00:20Z")).to_json_string();
        let b = run(&cluster_text(&docs), Some("2026-04-01T00:00:20Z")).to_json_string();
        prop_assert_eq!(&a, &b);
        let mut shuffled = docs.clone();
        let mut x = seed | 1;
        for i in (1..shuffled.len()).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            shuffled.swap(i, (x % (i as u64 + 1)) as usize);
        }
        let c = run(&cluster_text(&shuffled), Some("2026-04-01T00:00:20Z")).to_json_string();
        prop_assert_eq!(a, c);
    }

    /// A one-instant simulation (every workload arrives at 0, no runtimes) admits and
    /// preempts exactly what `kueue schedule` decides on the same snapshot.
    #[test]
    fn agreement(s in scn(false)) {
        let text = cluster_text(&documents(&s));
        let r = run(&text, Some("2026-04-01T01:00:00Z"));
        let model = gpuquota_model::import_str("cluster.yaml", &text).unwrap().model;
        let input =
            gpuquota_cohort::Input::from_model(&model, &gpuquota_cohort::Options::default()).unwrap();
        let report = gpuquota_cohort::run(&input);
        let mut admitted: Vec<(String, String)> = report
            .admitted
            .iter()
            .map(|a| (a.workload.clone(), a.cluster_queue.clone()))
            .collect();
        admitted.sort();
        let mut sim_admitted: Vec<(String, String)> = r
            .outcome
            .workloads
            .iter()
            .filter(|w| w.runs.last().is_some_and(|x| x.end == RunEnd::Cut))
            .map(|w| (w.key.clone(), w.queue.clone()))
            .collect();
        sim_admitted.sort();
        prop_assert_eq!(admitted, sim_admitted);
        let mut preempted: Vec<(String, String, String)> = report
            .preempted
            .iter()
            .map(|p| (p.workload.clone(), p.reason.clone(), p.preemptor.clone()))
            .collect();
        preempted.sort();
        let mut sim_preempted: Vec<(String, String, String)> = r
            .outcome
            .workloads
            .iter()
            .flat_map(|w| w.runs.iter().filter_map(move |x| match &x.end {
                RunEnd::Preempted { reason, by } => Some((w.key.clone(), reason.clone(), by.clone())),
                _ => None,
            }))
            .collect();
        sim_preempted.sort();
        prop_assert_eq!(preempted, sim_preempted);
        for p in &report.pending {
            let w = r.outcome.workloads.iter().find(|w| w.key == p.workload).unwrap();
            prop_assert_eq!(w.pending.as_ref().map(|x| x.0.as_str()), Some(p.reason.as_str()));
        }
    }

    /// With zero cycle latency and every workload finished, the makespan is at least
    /// work / capacity and at least every arrival + runtime.
    #[test]
    fn makespan_bound(s in scn(true)) {
        let r = run(&cluster_text(&documents(&s)), None);
        let all_finished = r.outcome.workloads.iter().all(|w| w.finished_ms.is_some());
        prop_assume!(all_finished);
        let work: i64 = s.wls.iter().map(|w| w.cpu * 1000 * w.count * w.runtime_ms.unwrap_or(0)).sum();
        let capacity: i64 = s.cqs.iter().map(|c| c.nominal * 1000).sum();
        prop_assume!(capacity > 0);
        prop_assert!(r.makespan_ms * capacity >= work, "makespan {} below the bound {} / {}", r.makespan_ms, work, capacity);
        for w in &s.wls {
            prop_assert!(r.makespan_ms >= w.created_ms + w.runtime_ms.unwrap_or(0));
        }
    }
}
