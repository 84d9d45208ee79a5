//! Scenario, property and golden tests of gpuquota-metering (one test binary).

mod examples;
mod properties;
mod scenarios;
