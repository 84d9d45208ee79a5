//! The command-line tests (one test binary: each file of `tests/all/` a module, run against
//! the built `gpuquota` binary).

mod advise;
mod budgets;
mod common;
mod conventions;
mod examples;
mod files;
mod golden;
mod history;
mod inputs;
mod jobs;
mod kai_jobs;
mod kai_problems;
mod kueue_fair;
mod kueue_reliability;
mod meter_inputs;
mod mig_inputs;
mod output;
mod packaging;
mod pods_jobs;
mod schema;
mod sim;
mod sim_kai;
mod sweep;
mod sweep_limits;
mod validate_engines;
mod validate_quotas;
