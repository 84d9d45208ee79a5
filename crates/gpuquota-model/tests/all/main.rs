//! Scenario and property tests of gpuquota-model: upstream-style examples import and validate
//! cleanly, a manifest with many mistakes gets every one reported with its field path, and the
//! properties the crate docs promise (quantity round trip, import order independence, total
//! validation) hold on generated input.

mod differential;
mod dra;
mod examples;
mod field_paths;
#[cfg(feature = "fuzzing")]
mod fuzz_smoke;
mod mistakes;
mod pods_jobs;
mod properties;
mod reliability;
mod wait_for_pods_ready;
mod workloads;
