//! Times one import of a file on the fast path and on the exact path (the generic-tree path
//! every import took before the fast path existed), best of 3:
//! `cargo run --release -p gpuquota-benches --example import_timing -- FILE`.
// A measurement tool: reading the wall clock is its purpose.
#![allow(clippy::disallowed_methods)]

use std::time::{Duration, Instant};

use gpuquota_model::Importer;

fn best(text: &str, exact: bool) -> (Duration, usize) {
    let mut best = Duration::MAX;
    let mut objects = 0;
    for _ in 0..3 {
        let t = Instant::now();
        let mut importer = if exact {
            Importer::exact()
        } else {
            Importer::new()
        };
        importer.add_str("input", text);
        objects = importer.finish().map(|i| i.model.len()).unwrap_or(0);
        best = best.min(t.elapsed());
    }
    (best, objects)
}

fn main() {
    let path = std::env::args().nth(1).unwrap_or_default();
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    for (name, exact) in [("fast", false), ("exact", true)] {
        let (t, n) = best(&text, exact);
        println!("{path}: {name} path {:.3} s, {n} objects", t.as_secs_f64());
    }
}
