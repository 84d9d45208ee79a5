//! Kueue's baseline performance scenario with N timeline events (`timeline_events N`): each
//! event changes one ClusterQueue's borrowingLimit (99 ↔ 100 CPUs;
//! `gpuquota_benches::timeline::with_quota_events`), every 50 ms of virtual time; N = 0
//! is the run without events. Prints the run's figures; time the whole
//! process from outside (`/usr/bin/time -v`). See benches/README.md.
use std::path::PathBuf;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1000);
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/gpuquota-sim/data/kueue-baseline.yaml");
    let mut sim = gpuquota_sim::Simulation::from_files(&path).expect("valid config");
    gpuquota_benches::timeline::with_quota_events(&mut sim, n);
    let r = gpuquota_sim::simulate(&sim)
        .expect("simulates")
        .into_kueue()
        .expect("a Kueue report");
    println!(
        "{n} timeline events: makespan {} ms, {} preemptions, {} events, {} cycles, {} timeline entries",
        r.makespan_ms,
        r.preemptions,
        r.outcome.counters.events,
        r.outcome.counters.cycles,
        r.outcome.timeline.len()
    );
}
