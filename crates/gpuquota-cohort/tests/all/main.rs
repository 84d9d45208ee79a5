//! Scenario tests, one module per area; each test names the upstream behaviour it pins.

mod common;
mod configuration;
mod cycle;
mod dra;
mod fair_sharing;
mod feature_gates;
mod flavors;
mod preemption;
mod properties;
mod quota;
mod quota_view;
mod reliability;
mod repeat;
mod resource_quota;
mod smoke;
mod update;
mod upstream;
