//! B6, B8, B9: KAI proportion division of 10,000 leaf queues; a reclaim
//! storm of 4,000 running against 4,000 pending 1-GPU jobs; one 500 × 8-GPU gang reclaiming
//! from 8,000 1-GPU jobs (quota level: no nodes, one pool of the cluster total).
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use gpuquota_benches::rank::{division_totals, division_tree};
use gpuquota_model::Timestamp;
use gpuquota_rank::fixed::SCALE;
use gpuquota_rank::ids::QueueId;
use gpuquota_rank::session::SessionOptions;
use gpuquota_rank::snapshot::{Cluster, Job, QueueInfo, Task, TaskStatus};
use gpuquota_rank::testkit::run_session;
use gpuquota_rank::{DivisionOptions, Hierarchy, QueueInput, ResourceParams};

fn queue(name: &str, parent: Option<usize>, deserved: i128) -> QueueInput {
    let mut resources = [ResourceParams::default(); 3];
    resources[0] = ResourceParams {
        deserved: Some(deserved * SCALE),
        weight: SCALE,
        limit: None,
        request: 0,
        usage: 0,
    };
    QueueInput {
        name: name.into(),
        parent: parent.map(QueueId::new),
        priority: 100,
        creation: None,
        uid: String::new(),
        resources,
    }
}

fn one_gpu_job(
    key: String,
    queue: usize,
    queue_name: &str,
    pods: usize,
    gpus: i128,
    running: bool,
    t: i64,
) -> Job {
    Job {
        key: key.clone(),
        queue_name: queue_name.into(),
        queue: Some(gpuquota_rank::ids::QueueId::new(queue)),
        min_member: pods,
        priority: 50,
        preemptible: true,
        creation: Some(Timestamp::from_unix_seconds(t)),
        uid: key.clone(),
        staleness_grace: None,
        preemption_delay: None,
        stale_since: None,
        last_start: None,
        foreign: false,
        tasks: (0..pods)
            .map(|i| Task {
                key: format!("{key}-{i}"),
                status: if running {
                    TaskStatus::Running
                } else {
                    TaskStatus::Pending
                },
                req: gpuquota_rank::ids::PerResource::new(gpus * SCALE, 0, 0),
                fractional: false,
                mig: Vec::new(),
                mig_gpu: 0,
                node: None,
                gpu_group: None,
                node_selector: Default::default(),
                tolerations: Vec::new(),
                gpu_memory: None,
            })
            .collect(),
    }
}

/// Two leaf queues under one department; `a_running` 1-GPU jobs in `a`, `b` pending jobs.
fn quota_cluster(total: i128, qa: i128, qb: i128, a_running: usize, b_jobs: Vec<Job>) -> Cluster {
    let mut inputs = vec![
        queue("dept", None, total),
        queue("a", Some(0), qa),
        queue("b", Some(0), qb),
    ];
    let mut jobs: Vec<Job> = (0..a_running)
        .map(|i| one_gpu_job(format!("a/j{i:05}"), 1, "a", 1, 1, true, i as i64))
        .collect();
    jobs.extend(b_jobs);
    for j in &jobs {
        let q = j.queue.map_or(0, gpuquota_rank::ids::QueueId::index);
        for t in &j.tasks {
            inputs[q].resources[0].request += t.req[gpuquota_rank::Resource::Gpu];
        }
    }
    Cluster {
        hierarchy: Hierarchy::new(inputs).unwrap_or_else(|e| panic!("{e}")),
        queues: vec![QueueInfo::default(); 3],
        jobs,
        nodes: Vec::new(),
        mig_profiles: Vec::new(),
        totals: gpuquota_rank::ids::PerResource::new(total * SCALE, 0, 0),
        now: Timestamp::from_unix_seconds(100_000),
        orphan_queues: Vec::new(),
        warnings: Default::default(),
    }
}

fn benches(c: &mut Criterion) {
    let tree = division_tree(7);
    let totals = division_totals();
    let mut g = c.benchmark_group("rank");
    g.sample_size(20);
    for k in [0, 1] {
        let o = DivisionOptions::default().with_k_value(k * SCALE);
        g.bench_function(format!("b6_division_10k_leaves_3_resources_k{k}"), |b| {
            b.iter(|| black_box(tree.divide(black_box(totals), &o)))
        });
    }

    // B8: 4,000 GPUs; a over quota with 4,000 running, b starved with 4,000 pending.
    let b_jobs: Vec<Job> = (0..4000)
        .map(|i| one_gpu_job(format!("b/j{i:05}"), 2, "b", 1, 1, false, 10_000 + i as i64))
        .collect();
    let storm = quota_cluster(4000, 2000, 2000, 4000, b_jobs);
    let o = SessionOptions::default();
    let r = run_session(&storm, &o).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.evicted.len(), 2000);
    g.bench_function("b8_reclaim_storm_4000_vs_4000", |b| {
        b.iter(|| black_box(run_session(black_box(&storm), &o)))
    });

    // B9: 8,000 running 1-GPU jobs in a (deserved 0); one 500 × 8-GPU gang in b (deserved 8,000).
    let gang = vec![one_gpu_job("b/gang".into(), 2, "b", 500, 8, false, 50_000)];
    let large = quota_cluster(8000, 0, 8000, 8000, gang);
    let r = run_session(&large, &o).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.evicted.len(), 4000);
    g.bench_function("b9_gang_500x8_reclaims_from_8000", |b| {
        b.iter(|| black_box(run_session(black_box(&large), &o)))
    });
    g.finish();
}

criterion_group!(rank, benches);
criterion_main!(rank);
