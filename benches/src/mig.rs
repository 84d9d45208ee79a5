//! Seeded MIG planning inputs: the fleets of the `mig` benchmark, also written as files by
//! `cargo run --release -p gpuquota-benches --example mig_fleet -- VARIANT [GPUS] > fleet.json`
//! for end-to-end runs of `gpuquota mig plan`. The generators live once, in
//! `gpuquota_mig::testkit` (feature `testkit`), which the crate's own tests use too.

pub use gpuquota_mig::testkit::{VARIANTS, mixed, random_mixed, random_set, scenario, variant};
