//! The simulator's KAI mode: KAI's two-queue oscillation (1,024 cycles of its
//! time-based-fairshare simulator config), a day of 10,000 jobs on 500 nodes with a 1 s
//! session, and the same day with demand beyond capacity (2,000 jobs on 50 nodes).
use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use gpuquota_sim::{Simulation, simulate};

/// Criterion's test mode (CI) runs every benchmark once: shrink the inputs.
fn quick() -> bool {
    gpuquota_benches::test_mode()
}

fn oscillation() -> Simulation {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/gpuquota-sim/tests/data/kai/two-queue-oscillation.yaml");
    Simulation::from_files(&path).expect("valid config")
}

/// The day of [`gpuquota_benches::kai::day_cluster`]: `jobs` jobs on `nodes` nodes, a 1 s
/// session for 24 h.
fn day(jobs: usize, nodes: usize) -> Simulation {
    let c = gpuquota_benches::kai::day_cluster(jobs, nodes);
    let sim = gpuquota_benches::kai::day_simulation("c.yaml", 24, None);
    gpuquota_sim::fuzzing::scenario("day.yaml", &sim, "day", &|_| {
        Ok(("c.yaml".to_owned(), c.clone()))
    })
    .expect("valid scenario")
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("kai_sim");
    g.sample_size(10);
    let osc = oscillation();
    g.bench_function("two_queue_oscillation_1024", |b| {
        b.iter(|| black_box(simulate(black_box(&osc)).expect("runs")))
    });
    let (jobs, nodes) = if quick() { (200, 10) } else { (10_000, 500) };
    let d = day(jobs, nodes);
    g.bench_function("day_10k_jobs_500_nodes", |b| {
        b.iter(|| black_box(simulate(black_box(&d)).expect("runs")))
    });
    // Demand beyond capacity: 40 jobs per node, as 20,000 jobs on 500 nodes (about 1.6
    // times the GPU-hours the nodes hold), so a backlog of pending jobs grows all day.
    let (jobs, nodes) = if quick() { (200, 5) } else { (2_000, 50) };
    let over = day(jobs, nodes);
    g.bench_function("day_oversubscribed_2k_jobs_50_nodes", |b| {
        b.iter(|| black_box(simulate(black_box(&over)).expect("runs")))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
