//! Kueue admission engine (`gpuquota-cohort`): one admission decision at scale
//! (B3), the classical preemption target search (B5a), and the whole `kueue schedule` run
//! on the generated 1,000-ClusterQueue snapshot.
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use gpuquota_benches::SplitMix64;
use gpuquota_cohort::{Input, Options, Stepper};
use gpuquota_model::core::{Container, ResourceRequirements};
use gpuquota_model::kueue::{
    Admission, ClusterQueue, ClusterQueuePreemption, Cohort, FlavorQuotas, LocalQueue, PodSet,
    PodSetAssignment, ReclaimWithinCohort, ResourceFlavor, ResourceGroup, ResourceQuota,
    WithinClusterQueue, Workload, WorkloadStatus,
};
use gpuquota_model::meta::{LabelSelector, ObjectMeta};
use gpuquota_model::{Model, Quantity, ResourceName, Timestamp};

/// Criterion's test mode (CI) runs every benchmark once: shrink the inputs.
fn quick() -> bool {
    gpuquota_benches::test_mode()
}

fn meta(name: &str, ns: Option<&str>, t: i64) -> ObjectMeta {
    ObjectMeta {
        name: name.to_owned(),
        namespace: ns.map(str::to_owned),
        uid: Some(format!("uid-{name}")),
        creation_timestamp: Some(Timestamp::from_unix_seconds(t)),
        ..ObjectMeta::default()
    }
}

fn q(s: &str) -> Quantity {
    Quantity::parse(s).unwrap_or(Quantity::ZERO)
}

fn cluster_queue(
    name: &str,
    cohort: &str,
    flavors: &[&str],
    resources: &[(&str, &str)],
    preemption: Option<ClusterQueuePreemption>,
) -> ClusterQueue {
    let mut cq = ClusterQueue {
        metadata: meta(name, None, 0),
        ..ClusterQueue::default()
    };
    cq.spec.cohort_name = Some(cohort.to_owned());
    cq.spec.namespace_selector = Some(LabelSelector::default());
    cq.spec.preemption = preemption;
    cq.spec.resource_groups = vec![ResourceGroup {
        covered_resources: resources.iter().map(|r| ResourceName::new(r.0)).collect(),
        flavors: flavors
            .iter()
            .map(|f| FlavorQuotas {
                name: (*f).to_owned(),
                resources: resources
                    .iter()
                    .map(|(r, n)| ResourceQuota {
                        name: ResourceName::new(*r),
                        nominal_quota: Some(q(n)),
                        ..ResourceQuota::default()
                    })
                    .collect(),
            })
            .collect(),
    }];
    cq
}

fn workload(name: &str, queue: &str, priority: i32, t: i64, requests: &[(&str, &str)]) -> Workload {
    let mut w = Workload {
        metadata: meta(name, Some("ns"), t),
        ..Workload::default()
    };
    w.spec.queue_name = Some(queue.to_owned());
    w.spec.priority = Some(priority);
    let mut ps = PodSet::default();
    ps.template.spec.containers = vec![Container {
        name: "c".into(),
        resources: ResourceRequirements {
            requests: requests
                .iter()
                .map(|(r, v)| (ResourceName::new(*r), q(v)))
                .collect(),
            ..ResourceRequirements::default()
        },
        ..Container::default()
    }];
    w.spec.pod_sets = vec![ps];
    w
}

fn admit(mut w: Workload, cq: &str, flavor: &str, requests: &[(&str, &str)]) -> Workload {
    w.status = Some(Box::new(WorkloadStatus {
        admission: Some(Admission {
            cluster_queue: cq.to_owned(),
            pod_set_assignments: vec![PodSetAssignment {
                name: "main".into(),
                flavors: requests
                    .iter()
                    .map(|(r, _)| (ResourceName::new(*r), flavor.to_owned()))
                    .collect(),
                resource_usage: requests
                    .iter()
                    .map(|(r, v)| (ResourceName::new(*r), q(v)))
                    .collect(),
                count: Some(1),
                ..PodSetAssignment::default()
            }],
        }),
        ..WorkloadStatus::default()
    }));
    w
}

fn add_lq(m: &mut Model, name: &str) {
    let mut lq = LocalQueue {
        metadata: meta(name, Some("ns"), 0),
        ..LocalQueue::default()
    };
    lq.spec.cluster_queue = name.to_owned();
    m.local_queues.insert(format!("ns/{name}"), lq);
}

/// B3: 1,000 ClusterQueues in 10 cohorts under a root, 2 flavors × 4 resources, 70 % used,
/// 100 pending workloads per queue.
fn admission_world() -> Input {
    let (cohorts, per, pending) = if quick() { (2, 5, 3) } else { (10, 100, 100) };
    let flavors = ["a-h200", "b-rtx"];
    let quota = [
        ("cpu", "1000"),
        ("memory", "4000Gi"),
        ("nvidia.com/gpu", "100"),
        ("nvidia.com/mig-1g.24gb", "100"),
    ];
    let used = [
        ("cpu", "700"),
        ("memory", "2800Gi"),
        ("nvidia.com/gpu", "70"),
        ("nvidia.com/mig-1g.24gb", "70"),
    ];
    let req = [
        ("cpu", "4"),
        ("memory", "16Gi"),
        ("nvidia.com/gpu", "1"),
        ("nvidia.com/mig-1g.24gb", "1"),
    ];
    let mut m = Model::default();
    for f in flavors {
        m.resource_flavors.insert(
            f.into(),
            ResourceFlavor {
                metadata: meta(f, None, 0),
                ..ResourceFlavor::default()
            },
        );
    }
    m.cohorts.insert(
        "root".into(),
        Cohort {
            metadata: meta("root", None, 0),
            ..Cohort::default()
        },
    );
    let mut rng = SplitMix64::new(3);
    for c in 0..cohorts {
        let co = format!("co-{c:02}");
        let mut cohort = Cohort {
            metadata: meta(&co, None, 0),
            ..Cohort::default()
        };
        cohort.spec.parent_name = Some("root".into());
        m.cohorts.insert(co.clone(), cohort);
        for i in 0..per {
            let name = format!("cq-{c:02}-{i:03}");
            m.cluster_queues.insert(
                name.clone(),
                cluster_queue(&name, &co, &flavors, &quota, None),
            );
            add_lq(&mut m, &name);
            let w = admit(
                workload(&format!("{name}-running"), &name, 0, 0, &used),
                &name,
                flavors[0],
                &used,
            );
            m.workloads.insert(format!("ns/{name}-running"), w);
            for j in 0..pending {
                let wn = format!("{name}-w{j:03}");
                let prio = rng.below(3) as i32;
                m.workloads.insert(
                    format!("ns/{wn}"),
                    workload(&wn, &name, prio, 1 + j as i64, &req),
                );
            }
        }
    }
    Input::from_model(&m, &Options::default()).unwrap_or_else(|e| panic!("{e}"))
}

// The wall clock is banned in the engines; this bench times only the decisions itself.
#[allow(clippy::disallowed_methods)]
fn admission_decision(c: &mut Criterion) {
    let input = admission_world();
    let world = input.world();
    let Stepper::Classical(mut s) = input.scheduler() else {
        return;
    };
    let ncq = world.cluster_queues.len() as u32;
    let mut next = 0u32;
    // Only the decisions are timed: admitted workloads are released (untimed) after every
    // chunk of at most `ncq` decisions, so the quota stays at ~70 % used.
    c.bench_function("cohort/admission_decision_1000cq_100k_pending", |b| {
        b.iter_custom(|iters| {
            let mut total = std::time::Duration::ZERO;
            let mut left = iters;
            let mut admitted = Vec::with_capacity(ncq as usize);
            while left > 0 {
                let chunk = left.min(u64::from(ncq));
                let start = std::time::Instant::now();
                for _ in 0..chunk {
                    let cq = gpuquota_cohort::ids::CqId::new((next % ncq) as usize);
                    next = next.wrapping_add(1);
                    if let Some((wl, mode)) = s.admit_head(black_box(cq)) {
                        black_box(mode);
                        admitted.push(wl);
                    }
                }
                total += start.elapsed();
                for wl in admitted.drain(..) {
                    s.release(wl);
                }
                left -= chunk;
            }
            total
        })
    });
}

/// B5a: one cohort of 100 ClusterQueues with 100 admitted workloads each (3 priorities,
/// sizes 1–3); queue 0 (`reclaimWithinCohort: Any`, `withinClusterQueue: LowerPriority`)
/// has preemptors needing k ∈ {1, 10, 100} more units than are free.
fn preemption_world() -> (Input, Vec<(usize, gpuquota_cohort::ids::WlId)>) {
    let (queues, per) = if quick() { (5, 5) } else { (100, 100) };
    let mut m = Model::default();
    m.resource_flavors.insert(
        "f".into(),
        ResourceFlavor {
            metadata: meta("f", None, 0),
            ..ResourceFlavor::default()
        },
    );
    let mut rng = SplitMix64::new(7);
    let mut total_other = 0u64;
    let mut sizes = Vec::new();
    for qi in 0..queues {
        let mut s = Vec::new();
        for _ in 0..per {
            s.push(1 + rng.below(3));
        }
        if qi > 0 {
            total_other += s.iter().sum::<u64>();
        }
        sizes.push(s);
    }
    let own: u64 = sizes[0].iter().sum();
    // 50 at full size; scaled with the workloads per queue so that the others still borrow
    let others_nominal = per as u64 / 2;
    // queue 0 lends what the others borrow, plus its own usage, plus 5 free units
    let borrowed = total_other.saturating_sub(others_nominal * (queues as u64 - 1));
    let q0_nominal = borrowed + own + 5;
    for (qi, s) in sizes.iter().enumerate() {
        let name = format!("q{qi:03}");
        let nominal = if qi == 0 { q0_nominal } else { others_nominal };
        let preemption = (qi == 0).then_some(ClusterQueuePreemption {
            within_cluster_queue: Some(WithinClusterQueue::LowerPriority),
            reclaim_within_cohort: Some(ReclaimWithinCohort::Any),
            borrow_within_cohort: None,
        });
        let n = nominal.to_string();
        m.cluster_queues.insert(
            name.clone(),
            cluster_queue(
                &name,
                "co",
                &["f"],
                &[("nvidia.com/gpu", n.as_str())],
                preemption,
            ),
        );
        add_lq(&mut m, &name);
        for (j, &size) in s.iter().enumerate() {
            let wn = format!("{name}-a{j:03}");
            let sz = size.to_string();
            let r = [("nvidia.com/gpu", sz.as_str())];
            let w = admit(
                workload(&wn, &name, rng.below(3) as i32, j as i64, &r),
                &name,
                "f",
                &r,
            );
            m.workloads.insert(format!("ns/{wn}"), w);
        }
    }
    let mut preemptors = Vec::new();
    for k in [1u64, 10, 100] {
        let wn = format!("preemptor-k{k:03}");
        let r = (5 + k).to_string();
        m.workloads.insert(
            format!("ns/{wn}"),
            workload(&wn, "q000", 10, 1_000, &[("nvidia.com/gpu", r.as_str())]),
        );
        preemptors.push((k as usize, 0));
    }
    let input = Input::from_model(&m, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    let world = input.world();
    let ids = preemptors
        .iter()
        .map(|(k, _)| {
            (
                *k,
                world
                    .workload_id(&format!("ns/preemptor-k{k:03}"))
                    .unwrap_or_default(),
            )
        })
        .collect();
    (input, ids)
}

fn preemption_search(c: &mut Criterion) {
    let (input, preemptors) = preemption_world();
    let world = input.world();
    let Stepper::Classical(mut s) = input.scheduler() else {
        return;
    };
    let fr = world
        .resource_id("nvidia.com/gpu")
        .and_then(|r| world.flavor_id("f").and_then(|f| world.fr(f, r)))
        .unwrap_or_default();
    let cq = world.cq_id("q000").unwrap_or_default();
    for &(k, wl) in &preemptors {
        // the target search alone (upstream GetTargets), including fill-back
        let mut usage = s.usage().clone();
        let request = [(fr, gpuquota_model::Amount(5 + k as i64))];
        c.bench_function(
            &format!("cohort/preemption_target_search_10k_admitted_k{k}"),
            |b| {
                b.iter(|| {
                    let view = s.admitted_view();
                    black_box(view.targets(&mut usage, cq, wl, black_box(&request), &[fr]))
                })
            },
        );
    }
    for (k, wl) in preemptors {
        // the whole nomination: flavor assignment with the preemption oracle, then GetTargets
        c.bench_function(
            &format!("cohort/preemption_nomination_10k_admitted_k{k}"),
            |b| b.iter(|| black_box(s.preemption_targets(black_box(wl)))),
        );
    }
}

/// `kueue schedule` after the import: every cycle of the generated snapshot (1,000
/// ClusterQueues in 10 cohorts, 4,000 pending Workloads; `examples/snapshot -- 1000 4000`),
/// which converges after 38 cycles with 144 preemptions.
fn schedule_snapshot(c: &mut Criterion) {
    let workloads = if quick() { 400 } else { 4000 };
    let text = gpuquota_benches::kueue_snapshot(1000, workloads, 1, gpuquota_benches::Format::Json);
    let mut importer = gpuquota_model::Importer::new();
    importer.add_str("snapshot.json", &text);
    let Ok(imported) = importer.finish() else {
        return;
    };
    let Ok(input) = Input::from_model(&imported.model, &Options::default()) else {
        return;
    };
    let mut group = c.benchmark_group("cohort");
    group.sample_size(10);
    group.bench_function(format!("schedule_1000cq_{workloads}_workloads"), |b| {
        b.iter(|| black_box(gpuquota_cohort::run(black_box(&input))))
    });
    group.finish();
}

criterion_group!(
    benches,
    admission_decision,
    preemption_search,
    schedule_snapshot
);
criterion_main!(benches);
