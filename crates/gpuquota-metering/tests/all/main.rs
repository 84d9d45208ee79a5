//! Scenario, property and golden tests of gpuquota-metering (one test binary).

mod examples;
mod formats;
#[cfg(feature = "fuzzing")]
mod fuzz_smoke;
mod golden_tests;
mod properties;
mod scenarios;
