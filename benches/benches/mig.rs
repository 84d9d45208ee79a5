//! B7: MIG layout planning on 1,000 GPUs: A100-80GB and H100-80GB with demand reaching ~95 %
//! of memory slices, and mixed A100/H100/H200/RTX PRO 6000 fleets at ~90 % of compute slices;
//! empty GPUs and 30 % pre-occupied, both modes. `plan_1000` is the exact planner (proven
//! `(W, R)`), `plan_fast_1000` the `--fast` heuristic.
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use gpuquota_benches::SplitMix64;
use gpuquota_mig::{
    Catalogue, DemandSpec, GpuSpec, InstanceSpec, Mode, PlanOptions, PlanRequest, Prepared,
    WeightPolicy,
};

/// Profiles shared by name on A100-80GB and H100-80GB, with their memory units.
const PROFILES: [(&str, u64); 6] = [
    ("1g.10gb", 1),
    ("1g.20gb", 2),
    ("2g.20gb", 2),
    ("3g.40gb", 4),
    ("4g.40gb", 4),
    ("7g.80gb", 8),
];

/// Fleet size: 1,000 GPUs, or 100 under `-- --test` (CI's single debug-build run).
fn fleet() -> u32 {
    if std::env::args().any(|a| a == "--test") {
        100
    } else {
        1000
    }
}

/// `n` GPUs; `occupied` of every 10 carry a random current layout with busy instances.
fn scenario(seed: u64, n: u32, occupied: u64, mode: Mode) -> PlanRequest {
    let c = Catalogue::builtin();
    let mut rng = SplitMix64::new(seed);
    let models = ["A100-80GB", "H100-80GB"];
    let mut gpus = Vec::with_capacity(n as usize);
    for i in 0..n {
        let name = models[(rng.below(2)) as usize];
        let m = c.resolve(name).ok();
        let instances = if rng.below(10) < occupied {
            m.map(|m| {
                let layouts = m.layouts();
                let l = &layouts[rng.below(layouts.len() as u64) as usize];
                l.instances()
                    .iter()
                    .map(|x| InstanceSpec {
                        profile: m.profiles()[usize::from(x.profile.0)].name().to_owned(),
                        start: x.start,
                        busy: rng.below(2) == 0,
                    })
                    .collect()
            })
        } else {
            Some(Vec::new())
        };
        gpus.push(GpuSpec {
            node: format!("node-{:03}", i / 8),
            index: i % 8,
            model: name.to_owned(),
            instances,
            busy: false,
        });
    }
    // Demand until ~95 % of the 8 x n memory units.
    let mut counts = [0u32; 6];
    let mut units = 0u64;
    while units < u64::from(n) * 76 / 10 {
        let k = rng.below(6) as usize;
        counts[k] += 1;
        units += PROFILES[k].1;
    }
    let demand = PROFILES
        .iter()
        .zip(counts)
        .map(|((p, _), count)| DemandSpec {
            resource: None,
            profile: Some((*p).to_owned()),
            count,
            weight: None,
        })
        .collect();
    PlanRequest {
        mode,
        weights: WeightPolicy::MemorySlices,
        gpus,
        demand,
        ..Default::default()
    }
}

/// `n` GPUs of A100-80GB, H100-80GB, H200-141GB and RTX PRO 6000 in equal shares, `occupied`
/// of every 10 with a random current layout (half its instances busy); demand for every base
/// profile of the four models (no media variants), ~90 % of the compute slices.
fn mixed(seed: u64, n: u32, occupied: u64, mode: Mode) -> PlanRequest {
    let c = Catalogue::builtin();
    let mut rng = SplitMix64::new(seed);
    let models = [
        "A100-80GB",
        "H100-80GB",
        "H200-141GB",
        "RTX PRO 6000 Blackwell",
    ];
    let mut gpus = Vec::with_capacity(n as usize);
    let mut profiles: Vec<(String, u64)> = Vec::new();
    let mut slices = 0u64;
    for i in 0..n {
        let name = models[rng.below(4) as usize];
        let Ok(m) = c.resolve(name) else { continue };
        slices += u64::from(m.compute_slices());
        for p in m.profiles() {
            let base = !p.name().contains('+') && !p.name().contains("-me");
            if base && !profiles.iter().any(|(x, _)| x == p.name()) {
                profiles.push((p.name().to_owned(), u64::from(p.compute_slices())));
            }
        }
        let instances = if rng.below(10) < occupied {
            let l = &m.layouts()[rng.below(m.layouts().len() as u64) as usize];
            l.instances()
                .iter()
                .map(|x| InstanceSpec {
                    profile: m.profiles()[usize::from(x.profile.0)].name().to_owned(),
                    start: x.start,
                    busy: rng.below(2) == 0,
                })
                .collect()
        } else {
            Vec::new()
        };
        gpus.push(GpuSpec {
            node: format!("node-{:03}", i / 8),
            index: i % 8,
            model: m.name().to_owned(),
            instances: Some(instances),
            busy: false,
        });
    }
    let mut counts = vec![0u32; profiles.len()];
    let mut used = 0u64;
    while used < slices * 9 / 10 {
        let k = rng.below(profiles.len() as u64) as usize;
        counts[k] += 1;
        used += profiles[k].1;
    }
    let demand = profiles
        .iter()
        .zip(counts)
        .map(|((p, _), count)| DemandSpec {
            resource: None,
            profile: Some(p.clone()),
            count,
            weight: None,
        })
        .collect();
    PlanRequest {
        mode,
        weights: WeightPolicy::ComputeSlices,
        gpus,
        demand,
        ..Default::default()
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
    for (label, occupied, mode, mixed_fleet) in [
        ("empty", 0, Mode::KeepBusyGpus, false),
        ("occupied30", 3, Mode::KeepBusyGpus, false),
        ("occupied30-pin", 3, Mode::PinBusyInstances, false),
        ("mixed-empty", 0, Mode::KeepBusyGpus, true),
        ("mixed-occupied30", 3, Mode::KeepBusyGpus, true),
        ("mixed-occupied30-pin", 3, Mode::PinBusyInstances, true),
    ] {
        let req = if mixed_fleet {
            mixed(7, fleet(), occupied, mode)
        } else {
            scenario(7, fleet(), occupied, mode)
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
                    black_box(gpuquota_mig::plan(&problem, &PlanOptions::default()).ok());
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
                black_box(gpuquota_mig::plan(
                    black_box(&problem),
                    &PlanOptions::default().with_fast(true),
                ))
            })
        });
        group.bench_function(format!("plan_1000/{label}"), |b| {
            b.iter(|| {
                black_box(gpuquota_mig::plan(
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
