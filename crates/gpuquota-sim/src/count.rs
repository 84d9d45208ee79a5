//! Counters of the work a run must not repeat: reads and YAML parses of the scenario
//! document, and builds of each engine's input. Kept per thread, read by the tests (through
//! `fuzzing::counts`), one `Cell` update per counted step.

use std::cell::Cell;

/// How often each counted step ran on this thread since the counts were last taken.
#[cfg_attr(not(feature = "fuzzing"), allow(unreachable_pub))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Reads of a scenario document (through the bounded reader).
    pub scenario_reads: u32,
    /// YAML parses of a scenario document's text.
    pub scenario_parses: u32,
    /// Builds of Kueue's world (`gpuquota_cohort::World`), through the engine's entry point
    /// or not.
    pub world_builds: u32,
    /// Builds of KAI's snapshot (`gpuquota_rank::Input::from_model`).
    pub cluster_builds: u32,
}

thread_local! {
    static COUNTS: Cell<Counts> = const { Cell::new(Counts { scenario_reads: 0, scenario_parses: 0, world_builds: 0, cluster_builds: 0 }) };
}

/// Adds one to the counter `f` picks.
pub(crate) fn bump(f: impl FnOnce(&mut Counts) -> &mut u32) {
    COUNTS.with(|c| {
        let mut v = c.get();
        *f(&mut v) += 1;
        c.set(v);
    });
}

/// The counts since the last call, and zero them.
#[cfg_attr(not(feature = "fuzzing"), allow(dead_code))]
pub(crate) fn take() -> Counts {
    COUNTS.with(|c| c.replace(Counts::default()))
}
