//! The simulator's KAI mode: KAI's two-queue oscillation (1,024 cycles of its
//! time-based-fairshare simulator config) and a day of 10,000 jobs on 500 nodes with a 1 s
//! session.
use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use gpuquota_sim::kai;

/// `--test` (CI) runs every benchmark once: shrink the inputs.
fn quick() -> bool {
    std::env::args().any(|a| a == "--test")
}

fn oscillation() -> kai::KaiScenario {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/gpuquota-sim/tests/data/kai/two-queue-oscillation.yaml");
    kai::load(&path).expect("valid config")
}

/// 500 nodes of 8 GPUs; 4 departments of 3 projects (deserved 300 GPUs each, weight 1);
/// `jobs` one-pod jobs of 1, 2, 4 or 8 GPUs arriving evenly over the day, running 10 min to
/// 4 h, one in five at priority 125 (non-preemptible); a 1 s session for 24 h.
fn day(jobs: usize, nodes: usize) -> kai::KaiScenario {
    let mut c = String::new();
    c.push_str("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: inference}\nvalue: 125\n");
    for n in 0..nodes {
        c.push_str(&format!("---\napiVersion: v1\nkind: Node\nmetadata: {{name: node-{n:03}}}\nstatus: {{allocatable: {{nvidia.com/gpu: \"8\", cpu: \"128\", memory: 1Ti}}}}\n"));
    }
    for d in 0..4 {
        c.push_str(&format!("---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {{name: dept-{d}}}\nspec: {{resources: {{gpu: {{quota: 900, overQuotaWeight: 1, limit: -1}}}}}}\n"));
        for p in 0..3 {
            c.push_str(&format!("---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {{name: proj-{d}-{p}}}\nspec: {{parentQueue: dept-{d}, resources: {{gpu: {{quota: 300, overQuotaWeight: 1, limit: -1}}}}}}\n"));
        }
    }
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for j in 0..jobs {
        let at = j as u64 * 86_400 / jobs as u64;
        let (h, m, s) = (at / 3600, at / 60 % 60, at % 60);
        let gpus = [1, 2, 4, 8][(next() % 4) as usize];
        let runtime = 600 + next() % (4 * 3600 - 600);
        let q = format!("proj-{}-{}", next() % 4, next() % 3);
        let pc = if next() % 5 == 0 {
            ", priorityClassName: inference"
        } else {
            ""
        };
        c.push_str(&format!("---\napiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {{name: j{j:05}, namespace: ns, creationTimestamp: \"2026-04-01T{h:02}:{m:02}:{s:02}Z\", annotations: {{gpuquota.dev/runtime: {runtime}s}}}}\nspec: {{queue: {q}, minMember: 1{pc}}}\n"));
        c.push_str(&format!("---\napiVersion: v1\nkind: Pod\nmetadata: {{name: j{j:05}-0, namespace: ns, annotations: {{pod-group-name: j{j:05}}}}}\nspec: {{schedulerName: kai-scheduler, containers: [{{name: c, resources: {{limits: {{nvidia.com/gpu: \"{gpus}\"}}}}}}]}}\nstatus: {{phase: Pending}}\n"));
    }
    let sim = "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {name: day}\nspec:\n  engine: kai\n  cluster: [c.yaml]\n  start: \"2026-04-01T00:00:00Z\"\n  end: \"2026-04-02T00:00:00Z\"\n  kai: {sessionInterval: 1s}\n";
    kai::scenario::from_str("day.yaml", sim, "day", &|_| {
        Ok(("c.yaml".to_owned(), c.clone()))
    })
    .expect("valid scenario")
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("kai_sim");
    g.sample_size(10);
    let osc = oscillation();
    g.bench_function("two_queue_oscillation_1024", |b| {
        b.iter(|| black_box(kai::simulate(black_box(&osc)).expect("runs")))
    });
    let (jobs, nodes) = if quick() { (200, 10) } else { (10_000, 500) };
    let d = day(jobs, nodes);
    g.bench_function("day_10k_jobs_500_nodes", |b| {
        b.iter(|| black_box(kai::simulate(black_box(&d)).expect("runs")))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
