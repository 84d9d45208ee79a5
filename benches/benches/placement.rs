//! Pods on nodes (`gpuquota-sim`): Kueue's baseline scenario (15,000 workloads) with every
//! admitted pod placed by the kube-scheduler model on 1,000 Nodes
//! (`gpuquota_benches::placement::with_nodes`), against the same run without Nodes.
use std::hint::black_box;
use std::path::PathBuf;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use gpuquota_sim::{Simulation, simulate};

fn placement(c: &mut Criterion) {
    let mut g = c.benchmark_group("sim_placement");
    g.sample_size(10);
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/gpuquota-sim/data/kueue-baseline.yaml");
    // criterion's test mode (CI) runs once: ten nodes instead of a thousand
    let counts: &[usize] = if gpuquota_benches::test_mode() {
        &[0, 10]
    } else {
        &[0, 1000]
    };
    for &n in counts {
        let mut sim = Simulation::from_files(&path).expect("valid config");
        gpuquota_benches::placement::with_nodes(&mut sim, n);
        g.bench_with_input(BenchmarkId::new("baseline_15k_nodes", n), &sim, |b, sim| {
            b.iter(|| {
                black_box(
                    simulate(black_box(sim))
                        .expect("simulates")
                        .kueue()
                        .map(|r| r.makespan_ms),
                )
            });
        });
    }
    g.finish();
}

criterion_group!(benches, placement);
criterion_main!(benches);
