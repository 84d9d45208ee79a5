//! Parses one multi-document YAML file with each candidate parser, into `serde::de::IgnoredAny`
//! (parsing alone) and into `serde_json::Value` (parsing and building a tree), and prints the
//! best of 3 wall-clock times per parser and target:
//! `cargo run --release -- ../../target/snapshot.yaml` from `benches/parsers/`.

use std::time::{Duration, Instant};

use serde::Deserialize;
use serde::de::IgnoredAny;

fn best<F: FnMut() -> usize>(mut f: F) -> (Duration, usize) {
    let mut best = Duration::MAX;
    let mut n = 0;
    for _ in 0..3 {
        let t = Instant::now();
        n = f();
        best = best.min(t.elapsed());
    }
    (best, n)
}

fn saphyr<T: for<'de> Deserialize<'de>>(text: &str) -> usize {
    let n = text.len();
    let options = serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_documents: n.max(1_024),
            max_nodes: n.max(250_000),
            max_events: n.saturating_mul(2).max(1_000_000),
        },
    };
    serde_saphyr::from_multiple_with_options::<T>(text, options)
        .map(|v| v.len())
        .unwrap_or(0)
}

fn yaml_ng<T: for<'de> Deserialize<'de>>(text: &str) -> usize {
    serde_yaml_ng::Deserializer::from_str(text)
        .filter_map(|d| T::deserialize(d).ok())
        .count()
}

fn norway<T: for<'de> Deserialize<'de>>(text: &str) -> usize {
    serde_norway::Deserializer::from_str(text)
        .filter_map(|d| T::deserialize(d).ok())
        .count()
}

fn main() {
    let path = std::env::args().nth(1).unwrap_or_else(|| "snapshot.yaml".into());
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    println!("{path}: {} bytes", text.len());
    let runs: [(&str, fn(&str) -> usize, fn(&str) -> usize); 3] = [
        ("serde-saphyr 2.2", saphyr::<IgnoredAny>, saphyr::<serde_json::Value>),
        ("serde_yaml_ng 0.10", yaml_ng::<IgnoredAny>, yaml_ng::<serde_json::Value>),
        ("serde_norway 0.9", norway::<IgnoredAny>, norway::<serde_json::Value>),
    ];
    for (name, parse, tree) in runs {
        let (t1, n1) = best(|| parse(&text));
        let (t2, n2) = best(|| tree(&text));
        println!(
            "{name}: parse {:.3} s ({n1} documents), parse + Value tree {:.3} s ({n2} documents)",
            t1.as_secs_f64(),
            t2.as_secs_f64()
        );
    }
}
