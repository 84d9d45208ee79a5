//! The advisor (`gpuquota-advise`): the ten-queue platform's 540-configuration grid, searched
//! (decomposed, 40 simulations) and simulated whole, and the seed month's advice.
use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{Criterion, criterion_group, criterion_main};
use gpuquota_advise::{Options, advise, parse, prepare, split_queues};

fn dir(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

fn run(base: &Path, advice: &str, exhaustive: bool) -> usize {
    let base = base.to_owned();
    let read = move |rel: &str| {
        std::fs::read_to_string(base.join(rel))
            .map(|t| (rel.to_owned(), t))
            .map_err(|e| {
                gpuquota_model::Diagnostic::error(
                    gpuquota_model::diag::codes::READ_FAILED,
                    e.to_string(),
                )
            })
    };
    let v: serde_json::Value = serde_saphyr::from_str(advice).expect("advice");
    let scenario = v["spec"]["scenario"].as_str().expect("scenario").to_owned();
    let (_, text) = read(&scenario).expect("scenario file");
    let prepared = prepare(&scenario, &text, "bench", &read).expect("scenario");
    let plan = parse("advice.yaml", advice, &|p| split_queues(&prepared.model, p)).expect("plan");
    let a = advise(
        &plan,
        &prepared,
        &Options {
            exhaustive,
            ..Options::default()
        },
    )
    .expect("advice");
    a.front.len()
}

fn ten_queues(c: &mut Criterion) {
    let base = dir("crates/gpuquota-advise/tests/data/ten-queues");
    let advice = std::fs::read_to_string(base.join("advice.yaml")).expect("advice");
    let mut g = c.benchmark_group("advise");
    g.sample_size(10);
    g.bench_function("ten_queues_540_searched", |b| {
        b.iter(|| black_box(run(&base, &advice, false)))
    });
    g.bench_function("ten_queues_540_exhaustive", |b| {
        b.iter(|| black_box(run(&base, &advice, true)))
    });
    g.finish();
}

criterion_group!(benches, ten_queues);
criterion_main!(benches);
