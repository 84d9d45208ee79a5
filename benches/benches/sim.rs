//! The simulator (`gpuquota-sim`): Kueue's perf-test scenarios replayed in virtual time
//! (Kueue's baseline and large-scale performance configs), and how the cost grows with workloads
//! and queues.
use std::hint::black_box;
use std::path::PathBuf;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use gpuquota_sim::{Simulation, simulate};

/// Criterion's test mode (CI) runs every benchmark once: shrink the inputs.
fn quick() -> bool {
    gpuquota_benches::test_mode()
}

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/gpuquota-sim/data")
        .join(name)
}

/// Kueue's generator config with `cohorts` cohorts of `queues` ClusterQueues and the
/// baseline's workload sets scaled by `scale` (counts multiplied, intervals divided, so the
/// offered load per queue stays the baseline's).
fn config(cohorts: u32, queues: u32, scale: u32) -> String {
    format!(
        "cohorts:\n- className: cohort\n  count: {cohorts}\n  queuesSets:\n  - className: cq\n    count: {queues}\n    nominalQuota: 20\n    borrowingLimit: 100\n    reclaimWithinCohort: Any\n    withinClusterQueue: LowerPriority\n    workloadsSets:\n    - {{count: {}, creationIntervalMs: 100, workloads: [{{className: small, runtimeMs: 200, priority: 50, request: 1}}]}}\n    - {{count: {}, creationIntervalMs: 500, workloads: [{{className: medium, runtimeMs: 500, priority: 100, request: 5}}]}}\n    - {{count: {}, creationIntervalMs: 1200, workloads: [{{className: large, runtimeMs: 1000, priority: 200, request: 20}}]}}\n",
        35 * scale,
        10 * scale,
        5 * scale
    )
}

fn from_text(text: &str) -> Simulation {
    gpuquota_sim::fuzzing::scenario("bench.yaml", text, "bench", &|_| {
        Err(gpuquota_model::Diagnostic::error(
            gpuquota_model::diag::codes::NOT_FOUND,
            "no files",
        ))
    })
    .expect("valid config")
}

fn upstream(c: &mut Criterion) {
    let mut g = c.benchmark_group("sim");
    g.sample_size(10);
    let files: &[(&str, &str)] = if quick() {
        &[("baseline_15k_whole", "kueue-baseline.yaml")]
    } else {
        &[
            ("baseline_15k_whole", "kueue-baseline.yaml"),
            ("large_scale_50k_whole", "kueue-large-scale.yaml"),
        ]
    };
    for (name, file) in files {
        let path = data(file);
        // load (generate the objects) + build the world + run + statistics
        g.bench_function(*name, |b| {
            b.iter(|| {
                let sc = Simulation::from_files(black_box(&path)).expect("valid config");
                black_box(
                    simulate(&sc)
                        .expect("simulates")
                        .kueue()
                        .map(|r| r.makespan_ms),
                )
            });
        });
        let sc = Simulation::from_files(&path).expect("valid config");
        let r = simulate(&sc)
            .expect("simulates")
            .into_kueue()
            .expect("a Kueue report");
        eprintln!(
            "{name}: makespan {} ms, {} preemptions, {} events, {} cycles",
            r.makespan_ms, r.preemptions, r.outcome.counters.events, r.outcome.counters.cycles
        );
    }
    g.finish();
}

fn growth(c: &mut Criterion) {
    let mut g = c.benchmark_group("sim_growth");
    g.sample_size(10);
    let scales: &[u32] = if quick() { &[1] } else { &[1, 2, 4] };
    for &s in scales {
        // workloads ×s on the baseline's 30 queues (5 × 6)
        let sc = from_text(&config(5, 6, s));
        let n = sc.kueue().map_or(0, |k| k.instances.len());
        g.bench_with_input(BenchmarkId::new("workloads", n), &sc, |b, sc| {
            b.iter(|| {
                black_box(
                    simulate(sc)
                        .expect("simulates")
                        .kueue()
                        .map(|r| r.makespan_ms),
                )
            });
        });
    }
    for &s in scales {
        // queues ×s (6·s per cohort), each with 50 workloads
        let sc = from_text(&config(5, 6 * s, 1));
        let q = sc.model().cluster_queues.len();
        g.bench_with_input(BenchmarkId::new("queues", q), &sc, |b, sc| {
            b.iter(|| {
                black_box(
                    simulate(sc)
                        .expect("simulates")
                        .kueue()
                        .map(|r| r.makespan_ms),
                )
            });
        });
    }
    g.finish();
}

/// Kueue's baseline with timeline events (each changes a ClusterQueue's borrowingLimit: the
/// driver updates its world in place and carries the admitted workloads across), against
/// the same run without them: `baseline_15k_timeline/N`.
fn timeline(c: &mut Criterion) {
    let mut g = c.benchmark_group("sim_timeline");
    g.sample_size(10);
    let counts: &[usize] = if quick() {
        &[0, 10]
    } else {
        &[0, 10, 100, 1000]
    };
    for &n in counts {
        let mut sim = Simulation::from_files(&data("kueue-baseline.yaml")).expect("valid config");
        gpuquota_benches::timeline::with_quota_events(&mut sim, n);
        g.bench_with_input(
            BenchmarkId::new("baseline_15k_timeline", n),
            &sim,
            |b, sim| {
                b.iter(|| {
                    black_box(
                        simulate(sim)
                            .expect("simulates")
                            .kueue()
                            .map(|r| r.makespan_ms),
                    )
                });
            },
        );
    }
    g.finish();
}

criterion_group!(benches, upstream, growth, timeline);
criterion_main!(benches);
