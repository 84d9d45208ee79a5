//! Times one import of a file on the fast path and on the exact path (the generic-tree path
//! every import took before the fast path existed), best of 3, as wall-clock time and as the
//! process's CPU time (user + system, from `/proc/self/stat`; the comparable figure on a
//! shared machine):
//! `cargo run --release -p gpuquota-model --example import_timing -- FILE [fast|exact]`.
// A measurement tool: reading the wall clock is its purpose.
#![allow(clippy::disallowed_methods)]

use std::time::{Duration, Instant};

use gpuquota_model::Importer;

/// CPU time (user + system) of this process so far.
fn cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
    // utime and stime, fields 14 and 15 of stat (11 and 12 after the command name), in
    // clock ticks of 10 ms.
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

fn best(text: &str, exact: bool) -> (Duration, Duration, usize) {
    let mut best = Duration::MAX;
    let mut best_cpu = Duration::MAX;
    let mut objects = 0;
    for _ in 0..3 {
        let (t, c) = (Instant::now(), cpu());
        let mut importer = if exact {
            Importer::exact()
        } else {
            Importer::new()
        };
        importer.add_str("input", text);
        objects = importer.finish().map(|i| i.model.len()).unwrap_or(0);
        best = best.min(t.elapsed());
        best_cpu = best_cpu.min(cpu().saturating_sub(c));
    }
    (best, best_cpu, objects)
}

fn main() {
    let path = std::env::args().nth(1).unwrap_or_default();
    let only = std::env::args().nth(2);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    for (name, exact) in [("fast", false), ("exact", true)] {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let (t, c, n) = best(&text, exact);
        println!(
            "{path}: {name} path {:.3} s wall, {:.3} s CPU, {n} objects",
            t.as_secs_f64(),
            c.as_secs_f64()
        );
    }
}
