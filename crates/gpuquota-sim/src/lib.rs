//! tmp docs
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod engine;
pub mod plot;
pub mod report;
pub mod scenario;

use gpuquota_cohort::{Scheduler, World};
use gpuquota_model::diag::{Code, Diagnostic, Diagnostics};

pub use engine::{Outcome, Run, RunEnd, WorkloadOutcome};
pub use report::Report;
pub use scenario::{Engine, Scenario};

/// A problem of an object the engine could not build (from `gpuquota-cohort`).
pub const ENGINE_PROBLEM: Code = Code::new("invalid");
/// A live-cluster state the engine tolerates.
pub const ENGINE_WARNING: Code = Code::new("tolerated-state");

/// Simulates a scenario.
///
/// # Errors
/// Every malformed object (the engine's problems) or an invalid fair-sharing configuration.
///
/// # Complexity
/// World build O(objects log objects) plus the event loop (see [`engine`]).
pub fn simulate(sc: &Scenario) -> Result<Report, Diagnostics> {
    let world = World::build(&sc.model).map_err(|e| {
        Diagnostics(
            e.problems
                .iter()
                .map(|p| {
                    Diagnostic::error(ENGINE_PROBLEM, p.message.clone())
                        .object(p.kind, p.name.clone())
                        .field(p.field.clone())
                })
                .collect(),
        )
    })?;
    let mut warnings = sc.warnings.clone();
    let insts: Vec<Option<&scenario::Instance>> = world
        .workloads
        .iter()
        .map(|w| sc.instances.get(&w.key))
        .collect();
    let mut outcome = match sc.engine {
        Engine::ResourceQuota => engine::run_resource_quota(sc, &world, &insts, &mut warnings),
        Engine::Kueue => {
            let mut settings = gpuquota_fairshare::config::settings_from_configuration(
                sc.model.configuration.as_ref(),
                sc.fair_sharing == Some(true),
            )
            .map_err(|e| {
                Diagnostics(
                    e.0.iter()
                        .map(|x| {
                            Diagnostic::error(ENGINE_PROBLEM, x.to_string())
                                .object("Configuration", "")
                        })
                        .collect(),
                )
            })?;
            if sc.fair_sharing == Some(false) {
                settings.enabled = false;
            }
            let fair = settings.enabled;
            for w in &world.warnings {
                if fair && w.kind == "Configuration" && w.message.contains("fair sharing") {
                    continue;
                }
                warnings.push(
                    Diagnostic::warning(ENGINE_WARNING, w.message.clone())
                        .object(w.kind, w.name.clone()),
                );
            }
            if settings.enabled || settings.admission.is_some() {
                let policy = gpuquota_cohort::fair::FairSharing::new(&world, &sc.model, settings)
                    .map_err(|e| {
                    Diagnostics(vec![Diagnostic::error(ENGINE_PROBLEM, e.to_string())])
                })?;
                let s = Scheduler::with_policy(&world, policy);
                engine::run_kueue(sc, &world, s, &insts, &mut warnings)
            } else {
                let s = Scheduler::new(&world);
                engine::run_kueue(sc, &world, s, &insts, &mut warnings)
            }
        }
    };
    warnings.sort();
    outcome.warnings = warnings.iter().map(ToString::to_string).collect();
    let mut report = Report::new(sc.name.clone(), sc.start, outcome);
    report.diagnostics = warnings;
    Ok(report)
}
