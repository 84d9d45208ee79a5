//! Quantity parsing, the edge every manifest goes through.
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use gpuquota_model::{Quantity, ResourceName};

fn parse_quantities(c: &mut Criterion) {
    let inputs = ["500m", "4Gi", "1.5", "2e3", "1k", "100M", "8", "36Gi"];
    let cpu = ResourceName::new("cpu");
    c.bench_function("quantity/parse_and_convert_8", |b| {
        b.iter(|| {
            for s in inputs {
                if let Ok(q) = Quantity::parse(black_box(s)) {
                    black_box(q.to_amount(&cpu));
                }
            }
        })
    });
}

criterion_group!(benches, parse_quantities);
criterion_main!(benches);
