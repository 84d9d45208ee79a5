//! Seeded MIG planning inputs: the fleets of the `mig` benchmark, also written as files by
//! `cargo run --release -p gpuquota-benches --example mig_fleet -- VARIANT [GPUS] > fleet.json`
//! for end-to-end runs of `gpuquota mig plan`.

use gpuquota_mig::{Catalogue, DemandSpec, GpuSpec, InstanceSpec, Mode, PlanRequest, WeightPolicy};

use crate::SplitMix64;

/// The benchmark's variants: (label, occupied GPUs of every 10, mode, mixed fleet).
pub const VARIANTS: [(&str, u64, Mode, bool); 6] = [
    ("empty", 0, Mode::KeepBusyGpus, false),
    ("occupied30", 3, Mode::KeepBusyGpus, false),
    ("occupied30-pin", 3, Mode::PinBusyInstances, false),
    ("mixed-empty", 0, Mode::KeepBusyGpus, true),
    ("mixed-occupied30", 3, Mode::KeepBusyGpus, true),
    ("mixed-occupied30-pin", 3, Mode::PinBusyInstances, true),
];

/// The input of a variant of [`VARIANTS`] with `n` GPUs (seed 7, as the benchmark uses).
pub fn variant(label: &str, n: u32) -> Option<PlanRequest> {
    let (_, occupied, mode, mixed_fleet) = VARIANTS.iter().find(|v| v.0 == label)?;
    Some(if *mixed_fleet {
        mixed(7, n, *occupied, *mode)
    } else {
        scenario(7, n, *occupied, *mode)
    })
}

/// Profiles shared by name on A100-80GB and H100-80GB, with their memory units.
const PROFILES: [(&str, u64); 6] = [
    ("1g.10gb", 1),
    ("1g.20gb", 2),
    ("2g.20gb", 2),
    ("3g.40gb", 4),
    ("4g.40gb", 4),
    ("7g.80gb", 8),
];

/// `n` GPUs; `occupied` of every 10 carry a random current layout with busy instances.
pub fn scenario(seed: u64, n: u32, occupied: u64, mode: Mode) -> PlanRequest {
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
pub fn mixed(seed: u64, n: u32, occupied: u64, mode: Mode) -> PlanRequest {
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
