//! The simulated usage database: the queues' allocation sampled over virtual time and read
//! back as the normalized usage KAI's proportion plugin divides with.
//!
//! Upstream (kai-scheduler/KAI-Scheduler: `pkg/scheduler/cache/usagedb/prometheus/prometheus.go`)
//! asks Prometheus for `sum_over_time` of each queue's allocation metric
//! (`kai_queue_allocated_gpus`, `…_cpu_cores`, `…_memory_bytes`) times the decay
//! `0.5^((now − t)/halfLife)`, evaluated every `queryResolution` over the window, and
//! divides it by the same sum over the cluster capacity; the usage lister
//! (`pkg/scheduler/cache/usagedb/usagedb.go`) refreshes that every `fetchInterval` and the
//! sessions in between use the last result. Here:
//!
//! * a **sample** is taken at every multiple of the resolution (from the scenario start): the
//!   allocation held during the step that ends there, per queue (a parent holds its subtree,
//!   as the queue controller and the metrics report it) and resource, with the capacity;
//! * a **read** at `now` sums the samples in the window: `(now − windowSize, now]` (sliding),
//!   from the latest reset strictly before `now` (tumbling from `tumblingWindowStartTime`
//!   every `windowSize`, or cron; a reset after `now` is an empty window), each weighted
//!   `0.5^((now − t)/halfLife)` (1 without a half-life), and divides each queue's sum by the
//!   capacity's sum, clamped to `[0, 1]`.
//!
//! For KAI's time-based-fairshare simulator config the resolution, fetch interval and
//! session are one cycle and the window is `WindowSize` cycles: exactly the last
//! `WindowSize` samples its fake usage client (`pkg/scheduler/cache/usagedb/fake/fake_with_history.go`)
//! sums, with its decay slice (weights relative to the newest sample; the constant factor
//! cancels in the ratio).
//!
//! The window is kept incrementally, so a read costs O(Q) instead of O(S · Q) for S samples
//! in the window (a month of one-second sessions would otherwise sum ever longer windows):
//!
//! * equal consecutive samples are kept as one **run** (the allocation only changes when a
//!   session places or evicts, not every resolution step);
//! * per queue and resource the window keeps the **exact integer sum** of its samples in
//!   whole units (GPUs, millicores, bytes: a nano-unit amount divided by 10⁹) and a count
//!   of the samples that are not a whole number of units (or are too large, see below).
//!
//! A read must give the bytes the per-sample floating-point sum gave (the sum over the
//! samples, oldest first, of each amount as `f64` ÷ 10⁹). That sum is exact, and so equal to
//! the integer sum, when every sample is a whole number `k` of units with |k| ≤ 2³² (then
//! `k · 10⁹` and `k` are exact `f64`s) and the sum of |k| over the window is at most 2⁵³
//! (every partial sum is an integer an `f64` holds exactly). Such a column is read from the
//! integer sum; any other column (fractional amounts, sums beyond 2⁵³ units, or a half-life
//! whose weights are not integers) is summed again over its samples, in the same order, as
//! before. The capacity does not change during a run, so its sum over `n` samples is the
//! `n`-fold sum of one value, exact as above or looked up in a table of those folds.
//! `tests::incremental_equals_recomputed` checks every read against the recomputation.

use std::collections::VecDeque;

use gpuquota_model::Timestamp;
use gpuquota_rank::ids::PerResource;

use crate::scenario::at_ms;
use crate::scenario::kai::{UsageParams, Window};

/// Nano-units per unit.
const NANO: i128 = 1_000_000_000;
/// The largest |k| of a sample read exactly: `k · 10⁹ = k · 5⁹ · 2⁹` with
/// `k · 5⁹ < 2⁵³` is an exact `f64`, and so is its quotient by 10⁹.
const MAX_TERM: i128 = 1 << 32;
/// The largest sum of |k| over a window read exactly: every partial sum of integers up to
/// 2⁵³ is an exact `f64`.
const MAX_SUM: i128 = 1 << 53;

/// A nano-unit amount as the per-sample sum adds it.
fn to_f(v: i128) -> f64 {
    v as f64 / 1e9
}

/// A nano-unit amount in whole units when the per-sample sum adds it exactly.
fn whole(v: i128) -> Option<i128> {
    (v % NANO == 0 && (v / NANO).abs() <= MAX_TERM).then_some(v / NANO)
}

/// Equal consecutive samples: stamped `at_ms`, `at_ms + step`, … (`count` of them), each
/// holding `alloc` (per queue and resource, nano-units).
#[derive(Debug, Clone)]
struct Run {
    at_ms: i64,
    count: i64,
    alloc: Vec<PerResource<i128>>,
}

/// Per queue and resource, what the samples kept add up to.
#[derive(Debug, Clone, Copy, Default)]
struct Col {
    /// Sum of the whole-unit samples, units.
    sum: i128,
    /// Sum of their magnitudes, units.
    abs: i128,
    /// Samples that are not a whole number of units (or larger than [`MAX_TERM`]).
    inexact: i64,
}

impl Col {
    /// Adds (`sign` 1) or removes (`sign` −1) `n` samples of `v` nano-units.
    fn add(&mut self, v: i128, n: i64, sign: i128) {
        match whole(v) {
            Some(k) => {
                self.sum += sign * k * i128::from(n);
                self.abs += sign * k.abs() * i128::from(n);
            }
            None => self.inexact += sign as i64 * n,
        }
    }
}

/// The usage database.
#[derive(Debug, Clone)]
pub struct UsageDb {
    params: UsageParams,
    start: Timestamp,
    queues: usize,
    /// The samples kept, oldest first, as runs of equal samples.
    runs: VecDeque<Run>,
    /// The number of samples in `runs`.
    count: i64,
    /// Per queue, what `runs` adds up to.
    cols: Vec<[Col; 3]>,
    /// The next sample stamp, ms.
    next_sample_ms: i64,
    /// The allocation held since the last change, per queue (nano-units).
    held: Vec<PerResource<i128>>,
    held_cap: PerResource<i128>,
    /// Per resource, `folds[r][n]` is the sum of `n` samples of the capacity as the
    /// per-sample sum adds them (filled on demand, only for a capacity not read exactly).
    folds: [Vec<f64>; 3],
    /// The next read, ms.
    next_fetch_ms: i64,
    /// The last read's normalized usage per queue (nano-units).
    last: Vec<PerResource<i128>>,
}

impl UsageDb {
    /// An empty database for `queues` queues.
    pub fn new(
        params: UsageParams,
        start: Timestamp,
        queues: usize,
        capacity: PerResource<i128>,
    ) -> Self {
        let step = params.resolution_ms.max(1);
        UsageDb {
            params,
            start,
            queues,
            runs: VecDeque::new(),
            count: 0,
            cols: vec![[Col::default(); 3]; queues],
            next_sample_ms: step,
            held: vec![PerResource::ZERO; queues],
            held_cap: capacity,
            folds: [vec![0.0], vec![0.0], vec![0.0]],
            next_fetch_ms: 0,
            last: vec![PerResource::ZERO; queues],
        }
    }

    /// Records the samples due up to `now_ms` (the allocation held until now), then holds
    /// `alloc` from `now_ms` on.
    ///
    /// # Complexity
    /// O(Q) per call that takes samples (however many), O(1) otherwise.
    pub fn advance(&mut self, now_ms: i64, alloc: &[PerResource<i128>]) {
        self.take_samples(now_ms);
        if alloc.len() == self.queues {
            self.held.copy_from_slice(alloc);
        }
    }

    /// Adds (`sign` 1) or removes (−1) `n` samples of `alloc` to the column sums.
    fn account(cols: &mut [[Col; 3]], alloc: &[PerResource<i128>], n: i64, sign: i128) {
        for (c, a) in cols.iter_mut().zip(alloc) {
            for (col, &v) in c.iter_mut().zip(&a.0) {
                col.add(v, n, sign);
            }
        }
    }

    /// Drops the `n` oldest samples.
    fn pop_front(&mut self, mut n: i64) {
        let step = self.params.resolution_ms.max(1);
        while n > 0 {
            let Some(run) = self.runs.front_mut() else {
                return;
            };
            let m = n.min(run.count);
            Self::account(&mut self.cols, &run.alloc, m, -1);
            run.count -= m;
            run.at_ms += m * step;
            self.count -= m;
            n -= m;
            if run.count == 0 {
                self.runs.pop_front();
            }
        }
    }

    fn take_samples(&mut self, now_ms: i64) {
        let step = self.params.resolution_ms.max(1);
        if self.next_sample_ms > now_ms {
            return;
        }
        // The allocation held over several steps: one sample per step. Bounded: only the
        // samples a window can hold are kept, so a long idle gap is cut to the window.
        let keep = self.window_steps();
        let due = (now_ms - self.next_sample_ms) / step + 1;
        let skip = match keep {
            Some(k) if due > k => due - k,
            _ => 0,
        };
        if skip > 0 {
            self.runs.clear();
            self.count = 0;
            self.cols = vec![[Col::default(); 3]; self.queues];
            self.next_sample_ms += skip * step;
        }
        let n = (now_ms - self.next_sample_ms) / step + 1;
        Self::account(&mut self.cols, &self.held, n, 1);
        match self.runs.back_mut() {
            Some(r) if r.at_ms + r.count * step == self.next_sample_ms && r.alloc == self.held => {
                r.count += n;
            }
            _ => self.runs.push_back(Run {
                at_ms: self.next_sample_ms,
                count: n,
                alloc: self.held.clone(),
            }),
        }
        self.count += n;
        self.next_sample_ms += n * step;
        if let Some(k) = keep
            && self.count > k
        {
            self.pop_front(self.count - k);
        }
    }

    /// The most samples a sliding window holds (`None` for tumbling and cron windows).
    fn window_steps(&self) -> Option<i64> {
        match self.params.window {
            Window::Sliding { size_ms } => {
                Some((size_ms / self.params.resolution_ms.max(1)).max(1) + 1)
            }
            _ => None,
        }
    }

    /// The window's first admitted stamp at `now_ms` (samples at or after it count).
    fn window_from(&self, now_ms: i64) -> i64 {
        match &self.params.window {
            Window::Sliding { size_ms } => now_ms - size_ms + 1,
            Window::Tumbling { start_ms, size_ms } => {
                let elapsed = now_ms - start_ms;
                if elapsed <= 0 {
                    return now_ms + 1;
                }
                start_ms + (elapsed - 1) / size_ms.max(&1) * size_ms
            }
            Window::Cron(c) => {
                let now = at_ms(self.start, now_ms);
                match c.latest_before(now) {
                    Some(t) => crate::scenario::ms_between(self.start, t),
                    None => now_ms + 1,
                }
            }
        }
    }

    /// The normalized usage per queue the sessions at `now_ms` divide with: read again when
    /// a fetch is due (every `fetchInterval`), else the last read.
    ///
    /// # Complexity
    /// O(Q) per read without a half-life, plus O(S) for each queue and resource whose
    /// samples are not read exactly from the integer sums (see the module documentation);
    /// O(S · Q) with a half-life, for the S samples in the window.
    pub fn usage(&mut self, now_ms: i64) -> &[PerResource<i128>] {
        if now_ms >= self.next_fetch_ms {
            self.take_samples(now_ms);
            self.last = self.read(now_ms);
            let f = self.params.fetch_interval_ms.max(1);
            self.next_fetch_ms = (now_ms / f + 1) * f;
        }
        &self.last
    }

    /// How many of run `r`'s samples are stamped in `[from, to]`, and the index of the
    /// first of them.
    fn inside(&self, r: &Run, from: i64, to: i64) -> (i64, i64) {
        let step = self.params.resolution_ms.max(1);
        let last = r.at_ms + (r.count - 1) * step;
        if r.count <= 0 || last < from || r.at_ms > to {
            return (0, 0);
        }
        let first = if r.at_ms >= from {
            0
        } else {
            (from - r.at_ms + step - 1) / step
        };
        let end = if last <= to {
            r.count
        } else {
            (to - r.at_ms) / step + 1
        };
        ((end - first).max(0), first)
    }

    /// The samples stamped in `[from, to]`, oldest first: `(run, first, count)` with
    /// `first` the index of the first such sample in the run.
    fn in_window(&self, from: i64, to: i64) -> impl Iterator<Item = (&Run, i64, i64)> {
        self.runs.iter().filter_map(move |r| {
            let (m, first) = self.inside(r, from, to);
            (m > 0).then_some((r, first, m))
        })
    }

    /// The column sums over the samples stamped in `[from, to]` and their number: those of
    /// every kept sample less those of the runs' samples outside it (runs are in stamp
    /// order, so only runs at either end lie partly or wholly outside).
    ///
    /// # Complexity
    /// O(Q) per run that lies partly or wholly outside the window.
    fn window_cols(&self, from: i64, to: i64) -> (Vec<[Col; 3]>, i64) {
        let mut cols = self.cols.clone();
        let mut n = self.count;
        let mut front = 0;
        for r in &self.runs {
            let (m, _) = self.inside(r, from, to);
            if m == r.count {
                break;
            }
            Self::account(&mut cols, &r.alloc, r.count - m, -1);
            n -= r.count - m;
            front += 1;
        }
        for r in self.runs.iter().skip(front).rev() {
            let (m, _) = self.inside(r, from, to);
            if m == r.count {
                break;
            }
            Self::account(&mut cols, &r.alloc, r.count - m, -1);
            n -= r.count - m;
        }
        (cols, n)
    }

    fn read(&mut self, now_ms: i64) -> Vec<PerResource<i128>> {
        let from = self.window_from(now_ms);
        // Tumbling and cron windows only move forward: older samples are gone for good.
        if !matches!(self.params.window, Window::Sliding { .. }) {
            let step = self.params.resolution_ms.max(1);
            let mut gone = 0;
            for r in &self.runs {
                let before = if r.at_ms >= from {
                    0
                } else {
                    ((from - r.at_ms + step - 1) / step).min(r.count)
                };
                gone += before;
                if before < r.count {
                    break;
                }
            }
            self.pop_front(gone);
        }
        let (sum, cap) = match self.params.half_life_ms {
            Some(h) => self.sum_decayed(from, now_ms, h),
            None => self.sum_flat(from, now_ms),
        };
        sum.iter()
            .map(|u| {
                PerResource::from_fn(|r| {
                    let i = r.index();
                    if cap[i] > 0.0 {
                        ((u[i] / cap[i]).clamp(0.0, 1.0) * 1e9).round() as i128
                    } else {
                        0
                    }
                })
            })
            .collect()
    }

    /// The window's sums without a half-life (every weight 1): exact columns from the
    /// integer sums, the others summed over their samples, oldest first.
    fn sum_flat(&mut self, from: i64, to: i64) -> (Vec<[f64; 3]>, [f64; 3]) {
        let (cols, n) = self.window_cols(from, to);
        let mut sum = vec![[0.0f64; 3]; self.queues];
        for (q, c) in cols.iter().enumerate() {
            for r in 0..3 {
                sum[q][r] = if c[r].inexact == 0 && c[r].abs <= MAX_SUM {
                    c[r].sum as f64
                } else {
                    let mut s = 0.0f64;
                    for (run, _, m) in self.in_window(from, to) {
                        let v = to_f(run.alloc[q].0[r]);
                        for _ in 0..m {
                            s += v;
                        }
                    }
                    s
                };
            }
        }
        let mut cap = [0.0f64; 3];
        for (r, c) in cap.iter_mut().enumerate() {
            let v = self.held_cap.0[r];
            *c = match whole(v) {
                Some(k) if k.abs() * i128::from(n) <= MAX_SUM => (k * i128::from(n)) as f64,
                _ => {
                    let fold = &mut self.folds[r];
                    let n = usize::try_from(n).unwrap_or(0);
                    while fold.len() <= n {
                        let next = fold.last().copied().unwrap_or(0.0) + to_f(v);
                        fold.push(next);
                    }
                    fold[n]
                }
            };
        }
        (sum, cap)
    }

    /// The window's sums with a half-life: every sample weighted `0.5^((now − t)/h)`,
    /// oldest first.
    fn sum_decayed(&self, from: i64, now_ms: i64, half: i64) -> (Vec<[f64; 3]>, [f64; 3]) {
        let step = self.params.resolution_ms.max(1);
        let mut sum = vec![[0.0f64; 3]; self.queues];
        let mut cap = [0.0f64; 3];
        let capf = self.held_cap.0.map(to_f);
        for (run, first, m) in self.in_window(from, now_ms) {
            let alloc: Vec<[f64; 3]> = run.alloc.iter().map(|a| a.0.map(to_f)).collect();
            for i in first..first + m {
                let at = run.at_ms + i * step;
                let w = 0.5f64.powf((now_ms - at) as f64 / half as f64);
                for (c, v) in cap.iter_mut().zip(capf) {
                    *c += v * w;
                }
                for (q, a) in alloc.iter().enumerate() {
                    for r in 0..3 {
                        sum[q][r] += a[r] * w;
                    }
                }
            }
        }
        (sum, cap)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use proptest::prelude::*;

    use super::*;

    /// One sample: stamp, allocation per queue and resource, capacity per resource.
    #[derive(Debug, Clone)]
    struct Sample {
        at_ms: i64,
        alloc: Vec<[f64; 3]>,
        cap: [f64; 3],
    }

    /// The usage database as it was: every sample kept, every read summing the window.
    #[derive(Debug, Clone)]
    struct Reference {
        params: UsageParams,
        start: Timestamp,
        queues: usize,
        samples: VecDeque<Sample>,
        /// The next sample stamp, ms.
        next_sample_ms: i64,
        /// The allocation held since the last change, per queue (nano-units).
        held: Vec<PerResource<i128>>,
        held_cap: PerResource<i128>,
        /// The next read, ms.
        next_fetch_ms: i64,
        /// The last read's normalized usage per queue (nano-units).
        last: Vec<PerResource<i128>>,
    }

    impl Reference {
        /// An empty database for `queues` queues.
        fn new(
            params: UsageParams,
            start: Timestamp,
            queues: usize,
            capacity: PerResource<i128>,
        ) -> Self {
            let step = params.resolution_ms.max(1);
            Reference {
                params,
                start,
                queues,
                samples: VecDeque::new(),
                next_sample_ms: step,
                held: vec![PerResource::ZERO; queues],
                held_cap: capacity,
                next_fetch_ms: 0,
                last: vec![PerResource::ZERO; queues],
            }
        }

        /// Records the samples due up to `now_ms` (the allocation held until now), then holds
        /// `alloc` from `now_ms` on.
        ///
        /// # Complexity
        /// O(Q) per sample taken; amortized O(Q) per resolution step.
        fn advance(&mut self, now_ms: i64, alloc: &[PerResource<i128>]) {
            self.take_samples(now_ms);
            if alloc.len() == self.queues {
                self.held.copy_from_slice(alloc);
            }
        }

        fn take_samples(&mut self, now_ms: i64) {
            let step = self.params.resolution_ms.max(1);
            if self.next_sample_ms > now_ms {
                return;
            }
            let to_f = |v: i128| v as f64 / 1e9;
            let alloc: Vec<[f64; 3]> = self.held.iter().map(|a| a.0.map(to_f)).collect();
            let cap = self.held_cap.0.map(to_f);
            // The allocation held over several steps: one sample per step. Bounded: only the
            // samples a window can hold are kept, so a long idle gap is cut to the window.
            let keep = self.window_steps();
            let due = (now_ms - self.next_sample_ms) / step + 1;
            let skip = match keep {
                Some(k) if due > k => due - k,
                _ => 0,
            };
            if skip > 0 {
                self.samples.clear();
                self.next_sample_ms += skip * step;
            }
            while self.next_sample_ms <= now_ms {
                self.samples.push_back(Sample {
                    at_ms: self.next_sample_ms,
                    alloc: alloc.clone(),
                    cap,
                });
                self.next_sample_ms += step;
            }
            if let Some(k) = keep {
                while self.samples.len() as i64 > k {
                    self.samples.pop_front();
                }
            }
        }

        /// The most samples a sliding window holds (`None` for tumbling and cron windows).
        fn window_steps(&self) -> Option<i64> {
            match self.params.window {
                Window::Sliding { size_ms } => {
                    Some((size_ms / self.params.resolution_ms.max(1)).max(1) + 1)
                }
                _ => None,
            }
        }

        /// The window's first admitted stamp at `now_ms` (samples at or after it count).
        fn window_from(&self, now_ms: i64) -> i64 {
            match &self.params.window {
                Window::Sliding { size_ms } => now_ms - size_ms + 1,
                Window::Tumbling { start_ms, size_ms } => {
                    let elapsed = now_ms - start_ms;
                    if elapsed <= 0 {
                        return now_ms + 1;
                    }
                    start_ms + (elapsed - 1) / size_ms.max(&1) * size_ms
                }
                Window::Cron(c) => {
                    let now = at_ms(self.start, now_ms);
                    match c.latest_before(now) {
                        Some(t) => crate::scenario::ms_between(self.start, t),
                        None => now_ms + 1,
                    }
                }
            }
        }

        /// The normalized usage per queue the sessions at `now_ms` divide with: read again when
        /// a fetch is due (every `fetchInterval`), else the last read.
        ///
        /// # Complexity
        /// O(S · Q) per read for the S samples in the window.
        fn usage(&mut self, now_ms: i64) -> &[PerResource<i128>] {
            if now_ms >= self.next_fetch_ms {
                self.take_samples(now_ms);
                self.last = self.read(now_ms);
                let f = self.params.fetch_interval_ms.max(1);
                self.next_fetch_ms = (now_ms / f + 1) * f;
            }
            &self.last
        }

        fn read(&mut self, now_ms: i64) -> Vec<PerResource<i128>> {
            let from = self.window_from(now_ms);
            // Tumbling and cron windows only move forward: older samples are gone for good.
            if !matches!(self.params.window, Window::Sliding { .. }) {
                while self.samples.front().is_some_and(|s| s.at_ms < from) {
                    self.samples.pop_front();
                }
            }
            let mut sum = vec![[0.0f64; 3]; self.queues];
            let mut cap = [0.0f64; 3];
            let half = self.params.half_life_ms;
            for s in self
                .samples
                .iter()
                .filter(|s| s.at_ms >= from && s.at_ms <= now_ms)
            {
                let w = match half {
                    None => 1.0,
                    Some(h) => 0.5f64.powf((now_ms - s.at_ms) as f64 / h as f64),
                };
                for (c, v) in cap.iter_mut().zip(s.cap) {
                    *c += v * w;
                }
                for (q, a) in s.alloc.iter().enumerate() {
                    for r in 0..3 {
                        sum[q][r] += a[r] * w;
                    }
                }
            }
            sum.iter()
                .map(|u| {
                    PerResource::from_fn(|r| {
                        let i = r.index();
                        if cap[i] > 0.0 {
                            ((u[i] / cap[i]).clamp(0.0, 1.0) * 1e9).round() as i128
                        } else {
                            0
                        }
                    })
                })
                .collect()
        }
    }

    /// An amount from a mix that takes every path: zero, whole units, fractions, amounts
    /// beyond [`MAX_TERM`] units, negative ones.
    fn amount() -> impl Strategy<Value = i128> {
        prop_oneof![
            Just(0i128),
            (1i128..64).prop_map(|k| k * NANO),
            (1i128..4_000_000_000).prop_map(|k| k * NANO),
            (1i128..10_000_000_000_000).prop_map(|v| v * 7),
            (1i128..1 << 20).prop_map(|k| (k << 40) * NANO),
            (-8i128..0).prop_map(|k| k * NANO),
        ]
    }

    fn params() -> impl Strategy<Value = UsageParams> {
        (1i64..5, 1i64..40, 0i64..4, 1i64..30, 0i64..3, -20i64..20).prop_map(
            |(res, size, half, fetch, kind, start)| {
                let size_ms = size * res + size % 3;
                UsageParams {
                    window: if kind == 2 {
                        Window::Tumbling {
                            start_ms: start,
                            size_ms,
                        }
                    } else {
                        Window::Sliding { size_ms }
                    },
                    half_life_ms: (half > 0).then_some(half * 7),
                    fetch_interval_ms: fetch,
                    resolution_ms: res,
                }
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// Every read of the incremental window equals the per-sample recomputation to the
        /// last bit (nano-units after rounding), for sliding and tumbling windows, with and
        /// without a half-life, over allocations that are whole, fractional, huge or
        /// negative, with steps, gaps longer than the window and repeated reads.
        #[test]
        fn incremental_equals_recomputed(
            p in params(),
            queues in 1usize..4,
            cap in prop::array::uniform3(amount()),
            steps in prop::collection::vec(
                (0i64..25, prop::collection::vec(prop::array::uniform3(amount()), 3), any::<bool>()),
                1..60,
            ),
        ) {
            let start = Timestamp::from_unix_seconds(1_775_001_600);
            let cap = PerResource(cap);
            let mut new = UsageDb::new(p.clone(), start, queues, cap);
            let mut old = Reference::new(p, start, queues, cap);
            let mut now = 0i64;
            for (dt, alloc, read) in steps {
                now += dt;
                let alloc: Vec<PerResource<i128>> =
                    alloc.into_iter().take(queues).map(PerResource).collect();
                new.advance(now, &alloc);
                old.advance(now, &alloc);
                if read {
                    prop_assert_eq!(new.usage(now).to_vec(), old.usage(now).to_vec());
                }
            }
        }
    }

    /// A hand-checked read: 2 of 8 GPUs for 3 one-second samples then 6 of 8 for one, in a
    /// 10 s sliding window: (2 + 2 + 2 + 6) / (4 · 8) = 0.375.
    #[test]
    fn flat_window_reads_whole_units() {
        let p = UsageParams {
            window: Window::Sliding { size_ms: 10_000 },
            half_life_ms: None,
            fetch_interval_ms: 1000,
            resolution_ms: 1000,
        };
        let start = Timestamp::from_unix_seconds(1_775_001_600);
        let mut db = UsageDb::new(p, start, 1, PerResource::new(8 * NANO, 0, 0));
        db.advance(0, &[PerResource::new(2 * NANO, 0, 0)]);
        db.advance(3000, &[PerResource::new(6 * NANO, 0, 0)]);
        assert_eq!(
            db.usage(4000).to_vec(),
            vec![PerResource::new(375_000_000, 0, 0)]
        );
        // One run for the three equal samples, one for the fourth.
        assert_eq!(db.runs.len(), 2);
    }
}
