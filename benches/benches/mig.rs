//! B7: MIG layout planning on 1,000 GPUs: A100-80GB and H100-80GB with demand reaching ~95 %
//! of memory slices, and mixed A100/H100/H200/RTX PRO 6000 fleets at ~90 % of compute slices;
//! empty GPUs and 30 % pre-occupied, both modes. `plan_1000` is the exact planner (proven
//! `(W, R)`), `plan_fast_1000` the `--fast` heuristic.
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use gpuquota_benches::mig::{VARIANTS, variant};
use gpuquota_mig::testkit::Prepared;
use gpuquota_mig::{Catalogue, PlanOptions};

/// Fleet size: 1,000 GPUs, or 100 under `-- --test` (CI's single debug-build run).
fn fleet() -> u32 {
    if gpuquota_benches::test_mode() {
        100
    } else {
        1000
    }
}

/// CPU time of this thread so far (Linux `/proc/thread-self/schedstat`, nanoseconds on a
/// CPU): on a machine shared with other builds it shows what a plan costs without the time
/// spent waiting for a core.
fn cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

fn b7(c: &mut Criterion) {
    let cat = Catalogue::builtin();
    let mut group = c.benchmark_group("mig");
    group.sample_size(20);
    for (label, ..) in VARIANTS {
        let Some(req) = variant(label, fleet()) else {
            continue;
        };
        let Ok(problem) = req.resolve(cat) else {
            eprintln!("mig bench: scenario {label} did not validate");
            continue;
        };
        let Ok(prepared) = Prepared::new(&problem) else {
            continue;
        };
        // Figures for the README: value, bound and gap of the plan the benchmark times.
        if let Ok(plan) = prepared.solve(&PlanOptions::default()) {
            let bound = plan.bound.unwrap_or(plan.value);
            eprintln!(
                "mig/{label}: value {} bound {bound} gap {:.3}% reconfigured {} fragmentation {} optimal {}",
                plan.value,
                100.0 * (bound - plan.value) as f64 / bound.max(1) as f64,
                plan.reconfigured,
                plan.fragmentation,
                plan.optimal
            );
            if let Some(start) = cpu_ns() {
                let runs = 10u64;
                for _ in 0..runs {
                    black_box(gpuquota_mig::testkit::plan(&problem, &PlanOptions::default()).ok());
                }
                if let Some(end) = cpu_ns() {
                    eprintln!(
                        "mig/{label}: plan CPU time {:.2} ms (mean of {runs})",
                        (end - start) as f64 / runs as f64 / 1e6
                    );
                }
            }
        }
        group.bench_function(format!("greedy_pack_1000/{label}"), |b| {
            b.iter(|| black_box(prepared.greedy_value()))
        });
        group.bench_function(format!("greedy_1000/{label}"), |b| {
            b.iter(|| black_box(prepared.greedy()))
        });
        group.bench_function(format!("prepare_1000/{label}"), |b| {
            b.iter(|| black_box(Prepared::new(black_box(&problem)).map(|p| p.greedy().value)))
        });
        group.bench_function(format!("plan_fast_1000/{label}"), |b| {
            b.iter(|| {
                black_box(gpuquota_mig::testkit::plan(
                    black_box(&problem),
                    &PlanOptions::default().with_fast(true),
                ))
            })
        });
        group.bench_function(format!("plan_1000/{label}"), |b| {
            b.iter(|| {
                black_box(gpuquota_mig::testkit::plan(
                    black_box(&problem),
                    &PlanOptions::default(),
                ))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, b7);
criterion_main!(benches);
