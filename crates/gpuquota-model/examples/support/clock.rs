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
/// Each answer is dropped only after the clocks were read, so that freeing what `f` built
/// is not part of its time.
pub(crate) fn best<T, F: FnMut() -> T>(runs: usize, mut f: F) -> (Duration, Duration, Option<T>) {
    let mut best = Duration::MAX;
    let mut best_cpu = Duration::MAX;
    let mut last = None;
    for _ in 0..runs {
        drop(last.take());
        let (t, c) = (Instant::now(), cpu());
        let answer = f();
        best = best.min(t.elapsed());
        best_cpu = best_cpu.min(cpu().saturating_sub(c));
        last = Some(answer);
    }
    (best, best_cpu, last)
}

/// The wall-clock and CPU time of dropping `value`.
// The parser comparison builds nothing it would time the dropping of.
#[allow(dead_code)]
pub(crate) fn drop_time<T>(value: T) -> (Duration, Duration) {
    let (t, c) = (Instant::now(), cpu());
    drop(value);
    // Freed memory is consolidated at the next large allocation: make it here.
    drop(vec![0u8; 1 << 20]);
    (t.elapsed(), cpu().saturating_sub(c))
}
