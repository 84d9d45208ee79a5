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

use std::collections::VecDeque;

use gpuquota_model::Timestamp;
use gpuquota_rank::ids::PerResource;

use super::scenario::{UsageParams, Window};
use crate::scenario::at_ms;

/// One sample: stamp, allocation per queue and resource, capacity per resource.
#[derive(Debug, Clone)]
struct Sample {
    at_ms: i64,
    alloc: Vec<[f64; 3]>,
    cap: [f64; 3],
}

/// The usage database.
#[derive(Debug, Clone)]
pub struct UsageDb {
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
    pub fn advance(&mut self, now_ms: i64, alloc: &[PerResource<i128>]) {
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
    pub fn usage(&mut self, now_ms: i64) -> &[PerResource<i128>] {
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
