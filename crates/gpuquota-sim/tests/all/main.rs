//! Integration tests of gpuquota-sim (one test binary: each file of `tests/all/` a module).

mod bill;
mod bill_story;
mod budgets;
mod common;
mod diff_engines;
mod dra;
mod engine_objects;
mod fuzz_arguments;
mod history;
mod kai;
mod kai_budgets;
mod kai_caps;
mod kai_properties;
mod kai_timeline;
mod limits;
mod node_capacity;
mod node_events;
mod plots;
mod pods_ready;
mod preemption_loop;
mod properties;
mod replicas;
mod scenarios;
mod seed;
mod timeline;
mod traces;
