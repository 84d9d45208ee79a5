//! Where a run is: a callback the event loops call at a bounded rate, for a progress bar.
//!
//! ```
//! use std::cell::RefCell;
//! use gpuquota_sim::progress::{Progress, RunOptions};
//! use gpuquota_sim::{Mode, Options, Simulation, simulate_with_options};
//!
//! let cluster = r#"
//! apiVersion: kueue.x-k8s.io/v1beta2
//! kind: ResourceFlavor
//! metadata: {name: h200}
//! ---
//! apiVersion: kueue.x-k8s.io/v1beta2
//! kind: ClusterQueue
//! metadata: {name: batch}
//! spec:
//!   namespaceSelector: {}
//!   resourceGroups:
//!   - coveredResources: [nvidia.com/gpu]
//!     flavors: [{name: h200, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]
//! ---
//! apiVersion: kueue.x-k8s.io/v1beta2
//! kind: LocalQueue
//! metadata: {name: lq, namespace: batch}
//! spec: {clusterQueue: batch}
//! ---
//! apiVersion: kueue.x-k8s.io/v1beta2
//! kind: Workload
//! metadata:
//!   name: train
//!   namespace: batch
//!   annotations: {gpuquota.dev/runtime: 2h, gpuquota.dev/repeat: 6h}
//! spec:
//!   queueName: lq
//!   podSets: [{name: main, count: 8, template: {spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: "1"}}}]}}}]
//! "#;
//! let model = gpuquota_model::import_str("cluster.yaml", cluster).expect("valid").model;
//! let start = gpuquota_model::Timestamp::parse("2026-04-01T00:00:00Z").expect("a timestamp");
//! let options = Options::new(Mode::Kueue, start).with_end_ms(Some(86_400_000));
//! let sc = Simulation::from_model(&model, &options).expect("valid scenario");
//! let seen = RefCell::new(Vec::new());
//! let record = |p: Progress| seen.borrow_mut().push(p);
//! let report = simulate_with_options(&sc, &RunOptions { progress: Some(&record) })
//!     .expect("simulates");
//! let seen = seen.into_inner();
//! let last = seen.last().expect("at least the final call");
//! assert!(last.finished);
//! assert_eq!((last.at_ms, last.end_ms), (86_400_000, Some(86_400_000)));
//! assert_eq!(last.percent(), Some(100));
//! // the same report as without a callback
//! assert_eq!(report.to_json_string(), gpuquota_sim::simulate(&sc).expect("simulates").to_json_string());
//! ```
//!
//! Properties (tested in this module and in `tests/all/traces.rs`):
//! 1. **monotone**: `at_ms` and `events` never decrease from one call to the next;
//! 2. **reaches the end**: the last call, and only it, has `finished`, with `at_ms` the
//!    report's `endMs`;
//! 3. **bounded rate**: besides the last call, a call happens only when the whole percent
//!    of `at_ms / end_ms` grows or [`EVENTS_PER_CALL`] more events were processed, so a run
//!    makes at most 100 + events / [`EVENTS_PER_CALL`] + 1 calls, and a run without a
//!    callback pays one branch per instant;
//! 4. **no effect**: the report is the same bytes with or without a callback.

/// Events between two calls when the percent does not move (a run without `spec.end`).
pub const EVENTS_PER_CALL: u64 = 1 << 16;

/// Where a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Virtual time reached, ms since `spec.start`.
    pub at_ms: i64,
    /// The window's end, ms since `spec.start` (`spec.end`); `None` when the scenario has
    /// none (the run goes on until every workload has finished).
    pub end_ms: Option<i64>,
    /// Events processed so far: arrivals, completions and budget events under Kueue and
    /// ResourceQuota, scheduling sessions under KAI.
    pub events: u64,
    /// The run's last call: `at_ms` is the report's `endMs`.
    pub finished: bool,
}

impl Progress {
    /// The whole percent of the window reached (`None` without `spec.end`; 100 once
    /// finished).
    pub fn percent(&self) -> Option<u8> {
        if self.finished {
            return Some(100);
        }
        let e = self.end_ms?;
        Some(percent(self.at_ms, e))
    }
}

fn percent(at: i64, end: i64) -> u8 {
    if end <= 0 {
        return 100;
    }
    let p = i128::from(at.clamp(0, end)) * 100 / i128::from(end);
    u8::try_from(p).unwrap_or(100)
}

/// Options of a simulator run ([`crate::simulate_with_options`]).
#[derive(Clone, Copy, Default)]
pub struct RunOptions<'a> {
    /// Called at a bounded rate as the run advances (see the module docs), last with
    /// `finished`.
    pub progress: Option<&'a dyn Fn(Progress)>,
}

impl std::fmt::Debug for RunOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("progress", &self.progress.map(|_| "Fn(Progress)"))
            .finish()
    }
}

/// The rate limiter between an event loop and the callback.
pub(crate) struct Reporter<'a> {
    f: Option<&'a dyn Fn(Progress)>,
    end: Option<i64>,
    /// The next call is due at this virtual time …
    next_at: i64,
    /// … or at this many events.
    next_events: u64,
    last_at: i64,
    last_events: u64,
}

impl<'a> Reporter<'a> {
    /// A reporter for a run whose window ends at `end` (ms since start).
    pub(crate) fn new(options: &RunOptions<'a>, end: Option<i64>) -> Self {
        Reporter {
            f: options.progress,
            end,
            next_at: 0,
            next_events: 0,
            last_at: 0,
            last_events: 0,
        }
    }

    /// The loop reached `at_ms` having processed `events`: calls back when the percent
    /// grew or [`EVENTS_PER_CALL`] events passed since the last call.
    ///
    /// # Complexity
    /// O(1): two comparisons unless a call is due.
    #[inline]
    pub(crate) fn tick(&mut self, at_ms: i64, events: u64) {
        if self.f.is_some() && (at_ms >= self.next_at || events >= self.next_events) {
            self.emit(at_ms, events, false);
        }
    }

    /// The run ended at `end_ms` (the report's `endMs`): the last call.
    pub(crate) fn finish(&mut self, end_ms: i64, events: u64) {
        if self.f.is_some() {
            self.emit(end_ms, events, true);
        }
    }

    fn emit(&mut self, at_ms: i64, events: u64, finished: bool) {
        let at_ms = at_ms.max(self.last_at);
        let events = events.max(self.last_events);
        self.last_at = at_ms;
        self.last_events = events;
        self.next_events = events.saturating_add(EVENTS_PER_CALL);
        self.next_at = match self.end {
            // the first instant of the next whole percent: ⌈(p + 1) · end / 100⌉
            Some(e) if e > 0 && at_ms < e => {
                let p = i128::from(percent(at_ms, e)) + 1;
                let t = (p * i128::from(e) + 99) / 100;
                i64::try_from(t).unwrap_or(i64::MAX)
            }
            _ => i64::MAX,
        };
        if let Some(f) = self.f {
            f(Progress {
                at_ms,
                end_ms: self.end,
                events,
                finished,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    fn drive(end: Option<i64>, steps: &[(i64, u64)], end_ms: i64) -> Vec<Progress> {
        let seen = RefCell::new(Vec::new());
        let f = |p: Progress| seen.borrow_mut().push(p);
        let mut r = Reporter::new(&RunOptions { progress: Some(&f) }, end);
        for &(t, e) in steps {
            r.tick(t, e);
        }
        r.finish(end_ms, steps.last().map_or(0, |s| s.1));
        seen.into_inner()
    }

    #[test]
    fn calls_once_per_percent_and_last_at_the_end() {
        // 1,000 instants over a 1,000 ms window: one call per whole percent, then the end
        let steps: Vec<(i64, u64)> = (0..1000).map(|t| (t, t as u64)).collect();
        let seen = drive(Some(1000), &steps, 1000);
        assert_eq!(seen.len(), 101);
        let ats: Vec<i64> = seen.iter().take(5).map(|p| p.at_ms).collect();
        assert_eq!(ats, [0, 10, 20, 30, 40]);
        let pcts: Vec<Option<u8>> = seen.iter().take(3).map(Progress::percent).collect();
        assert_eq!(pcts, [Some(0), Some(1), Some(2)]);
        let last = seen[100];
        assert!(last.finished);
        assert_eq!(
            (last.at_ms, last.events, last.percent()),
            (1000, 999, Some(100))
        );
        assert_eq!(seen.iter().filter(|p| p.finished).count(), 1);
    }

    #[test]
    fn without_an_end_calls_every_so_many_events() {
        let steps: Vec<(i64, u64)> = (0..10)
            .map(|i| (i * 7, i as u64 * (EVENTS_PER_CALL / 2)))
            .collect();
        let seen = drive(None, &steps, 70);
        let events: Vec<u64> = seen.iter().map(|p| p.events).collect();
        let h = EVENTS_PER_CALL / 2;
        assert_eq!(events, [0, 2 * h, 4 * h, 6 * h, 8 * h, 9 * h]);
        assert_eq!(seen[0].percent(), None);
        assert_eq!(seen.last().map(|p| (p.at_ms, p.finished)), Some((70, true)));
    }

    #[test]
    fn without_a_callback_nothing_is_computed() {
        let mut r = Reporter::new(&RunOptions::default(), Some(10));
        r.tick(5, 1);
        r.finish(10, 1);
        assert_eq!((r.last_at, r.next_at), (0, 0));
    }

    proptest::proptest! {
        #[test]
        fn calls_are_monotone_bounded_and_reach_the_end(
            end in proptest::option::of(1i64..10_000_000),
            gaps in proptest::collection::vec((0i64..50_000, 0u64..40_000), 0..300),
        ) {
            let mut t = 0i64;
            let mut e = 0u64;
            let steps: Vec<(i64, u64)> = gaps
                .iter()
                .map(|&(dt, de)| {
                    t += dt;
                    e += de;
                    (t, e)
                })
                .collect();
            let end_ms = end.unwrap_or(t).max(t);
            let seen = drive(end, &steps, end_ms);
            for w in seen.windows(2) {
                proptest::prop_assert!(w[0].at_ms <= w[1].at_ms && w[0].events <= w[1].events);
            }
            let last = seen.last().copied().expect("the final call");
            proptest::prop_assert!(last.finished && last.at_ms == end_ms);
            proptest::prop_assert_eq!(seen.iter().filter(|p| p.finished).count(), 1);
            proptest::prop_assert!(seen.len() as u64 <= 100 + e / EVENTS_PER_CALL + 2);
        }
    }
}
