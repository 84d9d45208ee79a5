//! Scenario, reference-solver, property and fuzz-smoke tests of gpuquota-mig.

mod catalogue;
mod common;
mod fleet;
mod inputs;
mod props;
mod reference;
mod scenarios;
mod smoke;
