//! Scenario and property tests of gpuquota-fairshare (one binary).

mod afs_scenarios;
mod deep_trees;
mod drf_props;
mod drs_scenarios;
mod fuzz_smoke;
mod order_scenarios;
mod preemption_scenarios;
mod reference_tree;
mod shares_model;
mod waterfill_props;
