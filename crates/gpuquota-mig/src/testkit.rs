//! Seeded fleet generators shared by this crate's tests and the `mig` benchmarks (feature
//! `testkit`, not part of the public API): the benchmark's fleets, the fleet-size property
//! fleets and the random mixed instance set the class solver is measured on.
//!
//! Every generator is a pure function of its arguments (a SplitMix64 stream from the seed),
//! so the same call gives the same [`PlanRequest`] on every run and machine.

use crate::{
    Catalogue, DemandSpec, GpuModel, GpuSpec, InstanceSpec, Mode, PlanRequest, WeightPolicy,
};

/// SplitMix64: a tiny, portable, seeded generator.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `0..bound` (`0` when `bound` is 0).
    pub fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound.max(1)
    }
}

/// The four models of the mixed fleets.
pub const MIXED_MODELS: [&str; 4] = [
    "A100-80GB",
    "H100-80GB",
    "H200-141GB",
    "RTX PRO 6000 Blackwell",
];

/// Profiles shared by name on A100-80GB and H100-80GB, with their memory units.
const PROFILES: [(&str, u64); 6] = [
    ("1g.10gb", 1),
    ("1g.20gb", 2),
    ("2g.20gb", 2),
    ("3g.40gb", 4),
    ("4g.40gb", 4),
    ("7g.80gb", 8),
];

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

/// A random current layout of `m` with each instance busy at even odds.
fn random_layout(rng: &mut Rng, m: &GpuModel) -> Vec<InstanceSpec> {
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
}

/// Adds the base profiles of `m` (no `+me` or `-me` variants) to `profiles` with their
/// compute slices, in first-seen order.
fn add_base_profiles(profiles: &mut Vec<(String, u64)>, m: &GpuModel) {
    for p in m.profiles() {
        let base = !p.name().contains('+') && !p.name().contains("-me");
        if base && !profiles.iter().any(|(x, _)| x == p.name()) {
            profiles.push((p.name().to_owned(), u64::from(p.compute_slices())));
        }
    }
}

fn gpu_spec(i: u32, node_digits: usize, m: &GpuModel, instances: Vec<InstanceSpec>) -> GpuSpec {
    GpuSpec {
        node: format!("node-{:0node_digits$}", i / 8),
        index: i % 8,
        model: m.name().to_owned(),
        instances: Some(instances),
        busy: false,
    }
}

/// How a fleet's demand is drawn, after its GPUs.
enum DemandRule {
    /// Profiles of a fixed list (name, size) drawn at random until their sizes reach
    /// `tenths` / 10 per GPU; every profile listed, weight from the policy.
    Listed {
        profiles: &'static [(&'static str, u64)],
        tenths: u64,
    },
    /// The fleet's base profiles drawn at random until their compute slices reach `pct` % of
    /// the fleet's; with `weighted`, only drawn profiles are listed, each with a random
    /// weight in `1..=8`.
    Slices { pct: u64, weighted: bool },
    /// Per base profile a random count in `1..=n/4`.
    Random,
}

/// The one fleet builder behind every generator here: `n` GPUs of `models` drawn at random,
/// `occupied` of every `per` with a random current layout (each instance busy at even odds),
/// then the demand by `rule`. One seeded stream, consumed GPU by GPU, then demand.
struct FleetSpec {
    seed: u64,
    n: u32,
    models: &'static [&'static str],
    occupied: (u64, u64),
    node_digits: usize,
    mode: Mode,
    weights: WeightPolicy,
    rule: DemandRule,
}

/// Counts per profile, drawn at random until the drawn sizes reach `target`.
fn draw_counts(rng: &mut Rng, sizes: &[u64], target: u64) -> Vec<u32> {
    let mut counts = vec![0u32; sizes.len()];
    let mut used = 0u64;
    while used < target {
        let k = rng.below(sizes.len() as u64) as usize;
        counts[k] += 1;
        used += sizes[k];
    }
    counts
}

impl FleetSpec {
    fn build(self) -> PlanRequest {
        let c = Catalogue::builtin();
        let mut rng = Rng::new(self.seed);
        let mut gpus = Vec::with_capacity(self.n as usize);
        let mut profiles: Vec<(String, u64)> = Vec::new();
        let mut slices = 0u64;
        for i in 0..self.n {
            let name = self.models[rng.below(self.models.len() as u64) as usize];
            let Ok(m) = c.resolve(name) else { continue };
            slices += u64::from(m.compute_slices());
            add_base_profiles(&mut profiles, m);
            let instances = if rng.below(self.occupied.1) < self.occupied.0 {
                random_layout(&mut rng, m)
            } else {
                Vec::new()
            };
            gpus.push(gpu_spec(i, self.node_digits, m, instances));
        }
        let spec = |p: &str, count: u32, weight: Option<u64>| DemandSpec {
            resource: None,
            profile: Some(p.to_owned()),
            count,
            weight,
        };
        let demand = match self.rule {
            DemandRule::Listed { profiles, tenths } => {
                let sizes: Vec<u64> = profiles.iter().map(|p| p.1).collect();
                let counts = draw_counts(&mut rng, &sizes, u64::from(self.n) * tenths / 10);
                profiles
                    .iter()
                    .zip(counts)
                    .map(|((p, _), count)| spec(p, count, None))
                    .collect()
            }
            DemandRule::Slices { pct, weighted } => {
                let sizes: Vec<u64> = profiles.iter().map(|p| p.1).collect();
                let counts = draw_counts(&mut rng, &sizes, slices * pct / 100);
                profiles
                    .iter()
                    .zip(counts)
                    .filter(|(_, count)| !weighted || *count > 0)
                    .map(|((p, _), count)| {
                        let weight = weighted.then(|| 1 + rng.below(8));
                        spec(p, count, weight)
                    })
                    .collect()
            }
            DemandRule::Random => profiles
                .iter()
                .map(|(p, _)| spec(p, 1 + rng.below(u64::from(self.n) / 4) as u32, None))
                .collect(),
        };
        PlanRequest {
            mode: self.mode,
            weights: self.weights,
            gpus,
            demand,
            ..Default::default()
        }
    }
}

/// B7: `n` A100-80GB and H100-80GB at random; `occupied` of every 10 carry a random current
/// layout with busy instances; demand over the six profile names the two share (`1g.10gb`,
/// `1g.20gb`, `2g.20gb`, `3g.40gb`, `4g.40gb`, `7g.80gb`) until ~95 % of the memory slices.
pub fn scenario(seed: u64, n: u32, occupied: u64, mode: Mode) -> PlanRequest {
    FleetSpec {
        seed,
        n,
        models: &["A100-80GB", "H100-80GB"],
        occupied: (occupied, 10),
        node_digits: 3,
        mode,
        weights: WeightPolicy::MemorySlices,
        rule: DemandRule::Listed {
            profiles: &PROFILES,
            tenths: 76,
        },
    }
    .build()
}

/// `n` GPUs of [`MIXED_MODELS`] in equal shares, `occupied` of every 10 with a random current
/// layout (half its instances busy); demand for every base profile of the four models until
/// ~90 % of the compute slices.
pub fn mixed(seed: u64, n: u32, occupied: u64, mode: Mode) -> PlanRequest {
    FleetSpec {
        seed,
        n,
        models: &MIXED_MODELS,
        occupied: (occupied, 10),
        node_digits: 3,
        mode,
        weights: WeightPolicy::ComputeSlices,
        rule: DemandRule::Slices {
            pct: 90,
            weighted: false,
        },
    }
    .build()
}

/// `n` GPUs of [`MIXED_MODELS`], 30 % with a random current layout (half its instances
/// busy); per base profile a random count in `1..=n/4`.
pub fn fleet(seed: u64, n: u32, mode: Mode) -> PlanRequest {
    FleetSpec {
        seed,
        n,
        models: &MIXED_MODELS,
        occupied: (3, 10),
        node_digits: 4,
        mode,
        weights: WeightPolicy::ComputeSlices,
        rule: DemandRule::Random,
    }
    .build()
}

/// One instance of the random mixed set: `n` GPUs of [`MIXED_MODELS`] drawn at random,
/// `occupied_pct` % of them with a random current layout (half its instances busy); demand
/// for the base profiles drawn until `demand_pct` % of the fleet's compute slices, each
/// profile with an explicit weight in `1..=8` (so that weights are not proportional to
/// size).
pub fn random_mixed(
    seed: u64,
    n: u32,
    occupied_pct: u64,
    mode: Mode,
    demand_pct: u64,
) -> PlanRequest {
    FleetSpec {
        seed,
        n,
        models: &MIXED_MODELS,
        occupied: (occupied_pct, 100),
        node_digits: 3,
        mode,
        weights: WeightPolicy::ComputeSlices,
        rule: DemandRule::Slices {
            pct: demand_pct,
            weighted: true,
        },
    }
    .build()
}

/// The random mixed set: per fleet size of [`RANDOM_SIZES`], the six combinations of
/// occupancy (0, 30, 60 %) and mode, demand at 50, 90 or 110 % of the compute slices in turn;
/// 48 instances, each labelled `n-occupied-mode-demand`, seeded by its position.
pub fn random_set() -> Vec<(String, PlanRequest)> {
    let mut out = Vec::new();
    for (i, &n) in RANDOM_SIZES.iter().enumerate() {
        for j in 0..6usize {
            let occupied = [0u64, 30, 60][j % 3];
            let mode = if j < 3 {
                Mode::KeepBusyGpus
            } else {
                Mode::PinBusyInstances
            };
            let demand = [50u64, 90, 110][(i + j) % 3];
            let seed = 1000 + (i * 6 + j) as u64;
            let tag = match mode {
                Mode::KeepBusyGpus => "keep",
                _ => "pin",
            };
            out.push((
                format!("{n}-occ{occupied}-{tag}-d{demand}"),
                random_mixed(seed, n, occupied, mode, demand),
            ));
        }
    }
    out
}

/// Fleet sizes of [`random_set`].
pub const RANDOM_SIZES: [u32; 8] = [8, 16, 32, 64, 128, 256, 512, 1000];

/// The planner behind [`crate::run`] on a resolved problem.
///
/// # Errors
/// [`crate::PlanError::Overflow`].
pub fn plan(
    problem: &crate::PlanInstance<'_>,
    options: &crate::PlanOptions,
) -> Result<crate::Plan, crate::PlanError> {
    crate::plan::plan(problem, options)
}

/// The greedy fallback alone, without a bound.
///
/// # Errors
/// [`crate::PlanError::Overflow`].
pub fn greedy(problem: &crate::PlanInstance<'_>) -> Result<crate::Plan, crate::PlanError> {
    crate::plan::greedy(problem)
}

/// The independent checker ([`crate::Plan::verify`]) on a resolved problem: the tests' oracle.
///
/// # Errors
/// Every violation.
pub fn verify(
    problem: &crate::PlanInstance<'_>,
    plan: &crate::Plan,
) -> Result<(), Vec<crate::Violation>> {
    crate::verify::verify(problem, plan)
}

/// The planner's tables over one problem, for the properties and benchmarks that time or
/// compare its stages (greedy, bound) apart.
#[derive(Debug)]
pub struct Prepared<'p, 'c>(crate::plan::Prepared<'p, 'c>);

impl<'p, 'c> Prepared<'p, 'c> {
    /// Builds the tables.
    ///
    /// # Errors
    /// [`crate::PlanError::Overflow`].
    pub fn new(problem: &'p crate::PlanInstance<'c>) -> Result<Self, crate::PlanError> {
        crate::plan::Prepared::new(problem).map(Prepared)
    }

    /// Solves as [`crate::run`].
    ///
    /// # Errors
    /// [`crate::PlanError::Overflow`].
    pub fn solve(&self, options: &crate::PlanOptions) -> Result<crate::Plan, crate::PlanError> {
        self.0.solve(options)
    }

    /// The greedy plan.
    pub fn greedy(&self) -> crate::Plan {
        self.0.greedy()
    }

    /// The greedy plan's value alone.
    pub fn greedy_value(&self) -> u64 {
        self.0.greedy_value()
    }

    /// The certified upper bound.
    pub fn upper_bound(&self) -> u64 {
        self.0.upper_bound()
    }
}
