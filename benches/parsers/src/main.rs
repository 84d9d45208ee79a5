//! Compares YAML parsers on one multi-document file (the import benchmark's snapshot):
//! `cargo run --release -- FILE [CANDIDATE]` from `benches/parsers/`.
//!
//! Without a candidate every one runs in turn (best of 3 wall-clock times and the process's
//! CPU time per run); with one, only that one runs once, so that `/usr/bin/time -v` gives its
//! peak memory alone. `bombs` instead feeds each candidate an alias bomb and a deeply nested
//! document and prints what it did (error, or how many events or values it produced).
//!
//! Candidates: the event APIs of granit-parser (what serde-saphyr is built on),
//! saphyr-parser and yaml-rust2 (events counted, nothing built), and the serde front ends
//! serde-saphyr, serde_yaml_ng and serde_norway into `IgnoredAny` (parsing alone) and into
//! `serde_json::Value` (parsing and building a tree).
// A measurement tool: reading the clock is its purpose.
#![allow(clippy::disallowed_methods)]

#[path = "../../../crates/gpuquota-model/examples/support/clock.rs"]
mod clock;

use std::time::Instant;

use clock::best;
use serde::Deserialize;
use serde::de::IgnoredAny;

fn saphyr<T: for<'de> Deserialize<'de>>(text: &str) -> usize {
    let n = text.len();
    let options = serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_documents: n.max(1_024),
            max_nodes: n.max(250_000),
            max_events: n.saturating_mul(2).max(1_000_000),
        },
    };
    match serde_saphyr::from_multiple_with_options::<T>(text, options) {
        Ok(v) => v.len(),
        Err(e) => {
            eprintln!("serde-saphyr: {}", e.to_string().lines().next().unwrap_or(""));
            0
        }
    }
}

fn yaml_ng<T: for<'de> Deserialize<'de>>(text: &str) -> usize {
    let mut n = 0;
    for d in serde_yaml_ng::Deserializer::from_str(text) {
        match T::deserialize(d) {
            Ok(_) => n += 1,
            Err(e) => {
                eprintln!("serde_yaml_ng: {e}");
                break;
            }
        }
    }
    n
}

fn norway<T: for<'de> Deserialize<'de>>(text: &str) -> usize {
    let mut n = 0;
    for d in serde_norway::Deserializer::from_str(text) {
        match T::deserialize(d) {
            Ok(_) => n += 1,
            Err(e) => {
                eprintln!("serde_norway: {e}");
                break;
            }
        }
    }
    n
}

fn granit_events(text: &str) -> usize {
    let mut n = 0;
    for ev in granit_parser::Parser::new_from_str(text) {
        match ev {
            Ok(_) => n += 1,
            Err(e) => {
                eprintln!("granit-parser: {e}");
                break;
            }
        }
    }
    n
}

fn saphyr_events(text: &str) -> usize {
    let mut n = 0;
    for ev in saphyr_parser::Parser::new_from_str(text) {
        match ev {
            Ok(_) => n += 1,
            Err(e) => {
                eprintln!("saphyr-parser: {e}");
                break;
            }
        }
    }
    n
}

struct Count(usize);

impl yaml_rust2::parser::MarkedEventReceiver for Count {
    fn on_event(&mut self, _: yaml_rust2::parser::Event, _: yaml_rust2::scanner::Marker) {
        self.0 += 1;
    }
}

fn yaml_rust2_events(text: &str) -> usize {
    let mut count = Count(0);
    if let Err(e) = yaml_rust2::parser::Parser::new_from_str(text).load(&mut count, true) {
        eprintln!("yaml-rust2: {e}");
    }
    count.0
}

type Run = (&'static str, fn(&str) -> usize);

const RUNS: [Run; 9] = [
    ("granit-parser 2.2 events", granit_events),
    ("saphyr-parser 0.0.12 events", saphyr_events),
    ("yaml-rust2 0.10 events", yaml_rust2_events),
    ("serde-saphyr 2.2 IgnoredAny", saphyr::<IgnoredAny>),
    ("serde-saphyr 2.2 Value", saphyr::<serde_json::Value>),
    ("serde_yaml_ng 0.10 IgnoredAny", yaml_ng::<IgnoredAny>),
    ("serde_yaml_ng 0.10 Value", yaml_ng::<serde_json::Value>),
    ("serde_norway 0.9 IgnoredAny", norway::<IgnoredAny>),
    ("serde_norway 0.9 Value", norway::<serde_json::Value>),
];

/// A billion-laughs document with `levels` levels of ten aliases each.
fn alias_bomb(levels: usize) -> String {
    let mut s = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..=levels {
        let p = i - 1;
        s.push_str(&format!(
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    s
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args.first().cloned().unwrap_or_else(|| "snapshot.yaml".into());
    if path == "bombs" {
        let deep = format!("a: {}1{}\n", "[".repeat(10_000), "]".repeat(10_000));
        for (what, text) in [("alias bomb 10^9", alias_bomb(8)), ("depth 10,000", deep)] {
            for (name, run) in RUNS {
                if args.get(1).is_some_and(|c| !name.starts_with(c.as_str())) {
                    continue;
                }
                let t = Instant::now();
                let n = run(&text);
                println!("{what}: {name}: {n} in {:.3} s", t.elapsed().as_secs_f64());
            }
        }
        return;
    }
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    println!("{path}: {} bytes", text.len());
    let only = args.get(1);
    for (name, run) in RUNS {
        if only.is_some_and(|c| !name.starts_with(c.as_str())) {
            continue;
        }
        let (t, c, n) = best(if only.is_some() { 1 } else { 3 }, || run(&text));
        let n = n.unwrap_or(0);
        println!(
            "{name}: {:.3} s wall, {:.3} s CPU ({n})",
            t.as_secs_f64(),
            c.as_secs_f64()
        );
    }
}
