//! Timing for the measurement examples (`import_timing` here, and the YAML parser comparison
//! in `benches/parsers`, which includes this file): best-of-N wall-clock and CPU times.

use std::time::{Duration, Instant};

/// CPU time (user + system) of this process so far, from `/proc/self/stat` (zero where
/// that file does not exist).
pub(crate) fn cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
    // utime and stime, fields 14 and 15 of stat (11 and 12 after the command name), in
    // clock ticks of 10 ms.
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

/// Runs `f` `runs` times; the best wall-clock time, the best CPU time and `f`'s last answer.
pub(crate) fn best<F: FnMut() -> usize>(runs: usize, mut f: F) -> (Duration, Duration, usize) {
    let mut best = Duration::MAX;
    let mut best_cpu = Duration::MAX;
    let mut n = 0;
    for _ in 0..runs {
        let (t, c) = (Instant::now(), cpu());
        n = f();
        best = best.min(t.elapsed());
        best_cpu = best_cpu.min(cpu().saturating_sub(c));
    }
    (best, best_cpu, n)
}
