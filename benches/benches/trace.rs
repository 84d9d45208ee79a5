//! Trace replay and sweeps (`gpuquota-sim`): synthetic Philly and Helios traces read, a
//! Philly trace turned into a scenario (loader, Workloads, import) and simulated under Kueue
//! (the event loop alone too, without and with a progress callback), and a sweep of Kueue's
//! baseline scenario at 1 and 2 threads.
use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use gpuquota_sim::trace::synthetic;
use gpuquota_sim::{Simulation, simulate, sweep};

/// Criterion's test mode (CI) runs every benchmark once: shrink the inputs.
fn quick() -> bool {
    gpuquota_benches::test_mode()
}

fn philly_scenario(jobs: u32) -> Simulation {
    let trace = synthetic::philly(jobs, 14, 1);
    // capacity scaled with the job count as Philly's 2,490 GPUs are to its 117,000 jobs
    let gpus = (2490u64 * u64::from(jobs) / 117_000).max(14);
    let cluster = synthetic::cluster_queues(14, gpus);
    let sim = format!(
        "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nspec:\n  cluster: [cluster.yaml]\n  start: \"{}\"\n  workloads:\n  - trace: {{format: philly, file: cluster_job_log}}\n",
        synthetic::PHILLY_START
    );
    gpuquota_sim::fuzzing::scenario("philly.yaml", &sim, "philly", &|f: &str| {
        Ok((
            f.to_owned(),
            if f == "cluster.yaml" {
                cluster.clone()
            } else {
                trace.clone()
            },
        ))
    })
    .expect("valid scenario")
}

fn traces(c: &mut Criterion) {
    let mut g = c.benchmark_group("trace");
    g.sample_size(10);
    let sizes: &[u32] = if quick() { &[200] } else { &[5_000, 20_000] };
    for &n in sizes {
        let text = synthetic::philly(n, 14, 1);
        g.bench_with_input(BenchmarkId::new("philly_load", n), &text, |b, t| {
            b.iter(|| black_box(gpuquota_sim::trace::philly::load(t).expect("loads")))
        });
        g.bench_with_input(BenchmarkId::new("philly_scenario", n), &n, |b, &n| {
            b.iter(|| black_box(philly_scenario(n)))
        });
        let helios = synthetic::helios(n, 27, 1);
        g.bench_with_input(BenchmarkId::new("helios_load", n), &helios, |b, t| {
            b.iter(|| black_box(gpuquota_sim::trace::helios::load(t).expect("loads")))
        });
        g.bench_with_input(
            BenchmarkId::new("philly_scenario_and_simulate", n),
            &n,
            |b, &n| b.iter(|| black_box(simulate(&philly_scenario(n)).expect("simulates"))),
        );
        // the event loop alone, without and with a progress callback (its cost)
        let sc = philly_scenario(n);
        g.bench_with_input(BenchmarkId::new("philly_simulate", n), &sc, |b, sc| {
            b.iter(|| black_box(simulate(sc).expect("simulates")))
        });
        let calls = std::cell::Cell::new(0u64);
        let count = |_: gpuquota_sim::progress::Progress| calls.set(calls.get() + 1);
        let options = gpuquota_sim::progress::RunOptions {
            progress: Some(&count),
        };
        g.bench_with_input(
            BenchmarkId::new("philly_simulate_with_progress", n),
            &sc,
            |b, sc| {
                b.iter(|| {
                    black_box(gpuquota_sim::simulate_with_options(sc, &options).expect("simulates"))
                })
            },
        );
    }
    g.finish();
}

fn sweeps(c: &mut Criterion) {
    let mut g = c.benchmark_group("sweep");
    g.sample_size(10);
    let cfg = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../crates/gpuquota-sim/data/kueue-baseline.yaml"),
    )
    .expect("baseline config");
    let runs = if quick() { 2 } else { 8 };
    // `runs` identical runs: the generated flavor's name is the only thing that differs (an
    // unknown path such as `unused=1..N` is an error since sweeps check their paths)
    let names: Vec<String> = (1..=runs).map(|i| format!("f{i}")).collect();
    let axes =
        [sweep::Axis::parse(&format!("resourceFlavor.name={}", names.join(","))).expect("axis")];
    for threads in [1usize, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        g.bench_function(
            BenchmarkId::new(format!("baseline_{runs}_runs"), threads),
            |b| {
                b.iter(|| {
                    pool.install(|| {
                        black_box(
                            sweep::run(
                                "kueue-baseline.yaml",
                                &cfg,
                                "kueue-baseline",
                                &axes,
                                None,
                                &|_| {
                                    Err(gpuquota_model::Diagnostic::error(
                                        gpuquota_model::diag::codes::NOT_FOUND,
                                        "no files",
                                    ))
                                },
                            )
                            .expect("sweeps"),
                        )
                    })
                })
            },
        );
    }
    g.finish();
}

criterion_group!(benches, traces, sweeps);
criterion_main!(benches);
