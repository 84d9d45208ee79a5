//! Kueue's baseline performance scenario on N Nodes (`placement_nodes N`, default 1,000;
//! `gpuquota_benches::placement::with_nodes`): every admitted pod is placed by the
//! kube-scheduler model. Reads the scenario, adds the nodes, simulates and prints the run's
//! figures; time the whole process from outside (`/usr/bin/time -v`). See benches/README.md.
use std::path::PathBuf;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1000);
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/gpuquota-sim/data/kueue-baseline.yaml");
    let mut sim = gpuquota_sim::Simulation::from_files(&path).expect("valid config");
    gpuquota_benches::placement::with_nodes(&mut sim, n);
    let r = gpuquota_sim::simulate(&sim)
        .expect("simulates")
        .into_kueue()
        .expect("a Kueue report");
    println!(
        "{n} nodes: makespan {} ms, {} preemptions, {} events, {} cycles, {} nodes checked",
        r.makespan_ms,
        r.preemptions,
        r.outcome.counters.events,
        r.outcome.counters.cycles,
        r.outcome.nodes
    );
}
