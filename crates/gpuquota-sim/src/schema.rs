//! The root types of the JSON Schemas of `gpuquota sim`'s report and scenario, each of which
//! is one of several documents (feature `schema`).
//!
//! Neither is ever built: they exist for [`schemars::schema_for!`] and its generators, which
//! name the schema after the type (`SimJson`, `ScenarioJson`). Their variants carry no doc
//! comment, because the derive would put it into the schema.

/// `sim` prints the report of the scenario's mode: one command, one schema with both
/// (the `engine` field tells them apart: `kueue`/`resourcequota` or `kai`).
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
#[allow(missing_docs)] // a doc comment would enter the schema; the enum's doc says it
pub enum SimJson {
    Kueue(Box<crate::SimReport>),
    Kai(Box<crate::kai::report::KaiReport>),
}

/// The four documents `sim` reads as a scenario.
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
#[allow(missing_docs)] // a doc comment would enter the schema; the enum's doc says it
pub enum ScenarioJson {
    Simulation(crate::scenario::SimulationDoc),
    KaiSimulation(crate::kai::scenario::SimulationDoc),
    KueuePerfGenerator(crate::scenario::PerfConfig),
    KaiTimeAware(crate::kai::scenario::TimeAwareConfig),
}
