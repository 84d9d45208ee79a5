//! The KAI mode: KAI's scheduling sessions over virtual time, with time-based fairshare fed
//! from the simulated usage. See the crate docs, section "KAI mode".

pub mod engine;
pub mod plot;
pub mod report;
pub mod scenario;
pub mod usage;

pub use engine::SessionHook;
pub use report::{KaiJob, KaiOutcome, KaiRun, KaiRunEnd, QueueSeries};
pub use scenario::{KaiScenario, is_kai, load};

use gpuquota_model::diag::Diagnostics;

/// Simulates a KAI scenario.
///
/// # Errors
/// The objects the KAI snapshot refuses, or a session error.
///
/// # Complexity
/// See [`engine::run`].
pub fn simulate(sc: &KaiScenario) -> Result<KaiOutcome, Diagnostics> {
    let mut out = engine::run(sc, None)?;
    let mut w = sc.warnings.clone();
    w.extend(out.warnings);
    w.sort();
    out.warnings = w.0;
    Ok(out)
}

/// Simulates a KAI scenario, asking `hook` before every session which queues may start
/// new work.
///
/// # Errors
/// As [`simulate`].
pub fn simulate_with(
    sc: &KaiScenario,
    hook: &mut dyn SessionHook,
) -> Result<KaiOutcome, Diagnostics> {
    let mut out = engine::run(sc, Some(hook))?;
    let mut w = sc.warnings.clone();
    w.extend(out.warnings);
    w.sort();
    out.warnings = w.0;
    Ok(out)
}
