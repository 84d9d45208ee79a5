//! Kueue's `waitForPodsReady` in time: the PodsReady timeout, the requeuing backoff, the
//! deactivation after `backoffLimitCount` timeouts and `blockAdmission`, as upstream's
//! workload controller and scheduler apply them (kubernetes-sigs/kueue
//! pkg/controller/core/workload_controller.go, `reconcileNotReadyTimeout` and
//! `triggerDeactivationOrBackoffRequeue`; pkg/workload/workload.go, `UpdateRequeueState`;
//! pkg/scheduler/scheduler.go, the wait for all admitted workloads to be ready).
//!
//! - **Ready:** a workload's `PodsReady` turns true when all its pods run (placed on nodes,
//!   or at admission without Nodes), plus the delay of its annotation
//!   [`PODS_READY_AFTER`] (`90s`, or `never`).
//! - **Timeout:** an admitted workload not ready `timeout` after its admission is evicted,
//!   reason `PodsReadyTimeout` (its run ends `Preempted` with that reason, `by`
//!   `waitForPodsReady`).
//!   Its `requeueState.count` grows by one and it queues again after the backoff
//!   `min(backoffBaseSeconds × 2^(count−1), backoffMaxSeconds)` seconds.
//! - **Jitter:** upstream adds a random jitter of up to 0.01 % (`wait.Backoff` with jitter
//!   0.0001) to each backoff. The simulator adds its expected value instead, 0.005 %, in
//!   whole milliseconds rounded half up (60 s → 60,003 ms; 1 s → 1,000 ms), applied before
//!   the cap as upstream applies the jitter. Expected value rather than a seeded draw: a run
//!   stays one deterministic function of its input with no seed to carry, and the error
//!   against any single upstream draw is at most 0.005 % of the backoff.
//! - **Deactivation:** a timeout that would make the count exceed `backoffLimitCount`
//!   deactivates the workload instead: its run ends `Preempted` with reason
//!   `DeactivatedDueToRequeuingLimitExceeded`, it never queues again, and the report shows
//!   it pending with that reason.
//! - **Requeuing timestamp:** under `Eviction` (the default) a timed-out workload queues
//!   by its eviction time in its ClusterQueue, under `Creation` by its creation time.
//! - **blockAdmission:** while any admitted workload is not ready, no cycle runs; when a
//!   cycle admits several workloads at one instant, the ones after the first not-ready one
//!   go back to their queue (upstream's scheduler stops before admitting them).
//! - **recoveryTimeout:** read and checked; the simulator never takes readiness away from a
//!   running workload (a lost node ends its run instead), so it never applies.

use std::collections::BTreeSet;

use gpuquota_cohort::World;
use gpuquota_model::Model;

use crate::kernel::{Event, Kind, Queue};

use crate::scenario::PODS_READY_AFTER_ANNOTATION as PODS_READY_AFTER;

/// Upstream's eviction reason for a workload whose pods were not ready in time.
pub(crate) const PODS_READY_TIMEOUT: &str = "PodsReadyTimeout";

/// The `by` of a run the PodsReady timeout ended (no preemptor: the workload controller).
pub(crate) const BY: &str = "waitForPodsReady";

/// Upstream's eviction reason of a workload deactivated after `backoffLimitCount` timeouts.
pub(crate) const DEACTIVATED: &str = "DeactivatedDueToRequeuingLimitExceeded";

/// The message upstream gives a workload deactivated after `backoffLimitCount` timeouts.
pub(crate) const DEACTIVATED_MESSAGE: &str =
    "The workload is deactivated due to exceeding the maximum number of re-queuing retries";

/// What [`PODS_READY_AFTER`] says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadyAfter {
    /// Ready this many ms after all pods run.
    Ms(i64),
    /// Never ready.
    Never,
}

/// Reads [`PODS_READY_AFTER`]'s value; `None` when it is neither a duration nor `never`.
pub(crate) fn parse_ready_after(s: &str) -> Option<ReadyAfter> {
    if s.trim() == "never" {
        return Some(ReadyAfter::Never);
    }
    crate::scenario::duration_ms(s).map(ReadyAfter::Ms)
}

/// `waitForPodsReady` with upstream's defaults applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Settings {
    /// `timeout`, ms (default 5m).
    pub(crate) timeout_ms: i64,
    /// `blockAdmission` (default: true when enabled).
    pub(crate) block: bool,
    /// `requeuingStrategy.timestamp` is `Eviction` (the default).
    pub(crate) by_eviction: bool,
    /// `requeuingStrategy.backoffLimitCount` (`None`: requeued without end).
    pub(crate) limit: Option<u32>,
    /// `backoffBaseSeconds`, ms (default 60 s).
    pub(crate) base_ms: i64,
    /// `backoffMaxSeconds`, ms (default 3600 s).
    pub(crate) max_ms: i64,
}

impl Settings {
    /// The model's Configuration's `waitForPodsReady` when it is enabled (values the
    /// validator refused fall back to the defaults; the run never starts with them).
    pub(crate) fn from_model(model: &Model) -> Option<Settings> {
        let c = model.configuration.as_ref()?;
        if !c.wait_for_pods_ready_enabled() {
            return None;
        }
        let w = c.wait_for_pods_ready.as_ref()?;
        let r = w.requeuing_strategy.clone().unwrap_or_default();
        let secs = |v: Option<i64>, d: i64| v.filter(|n| *n >= 0).unwrap_or(d).saturating_mul(1000);
        Some(Settings {
            timeout_ms: w
                .timeout
                .as_deref()
                .and_then(crate::scenario::duration_ms)
                .unwrap_or(300_000),
            block: w.block_admission.unwrap_or(true),
            by_eviction: r.timestamp.as_deref() != Some("Creation"),
            limit: r.backoff_limit_count.and_then(|n| u32::try_from(n).ok()),
            base_ms: secs(r.backoff_base_seconds, 60),
            max_ms: secs(r.backoff_max_seconds, 3600),
        })
    }
}

/// The backoff after the `count`-th timeout (count ≥ 1): `base × 2^(count−1)` plus the
/// jitter's expected value (0.005 %, ms rounded half up), capped at `max`.
///
/// # Complexity
/// O(1).
pub(crate) fn backoff_ms(base_ms: i64, max_ms: i64, count: u32) -> i64 {
    let shift = count.saturating_sub(1).min(62);
    let d = i128::from(base_ms) << shift;
    let jittered = d + (d + 10_000) / 20_000;
    i64::try_from(jittered.min(i128::from(max_ms))).unwrap_or(max_ms)
}

/// What a [`Kind::PodsReady`] event does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Nothing (a stale event, or a workload already ready).
    Nothing,
    /// The workload's pods became ready.
    Ready,
    /// Evict for the timeout and queue again after `backoff_ms`.
    Requeue {
        /// ms from the eviction to the requeue.
        backoff_ms: i64,
    },
    /// Evict and deactivate (the backoff limit is reached).
    Deactivate,
}

/// Every workload's PodsReady state.
pub(crate) struct PodsReady {
    pub(crate) set: Settings,
    after: Vec<ReadyAfter>,
    /// The admission each workload is in (events of older ones are stale).
    generation: Vec<u32>,
    admitted_at: Vec<i64>,
    running_at: Vec<Option<i64>>,
    ready: Vec<bool>,
    /// `requeueState.count`.
    count: Vec<u32>,
    deactivated: Vec<bool>,
    /// Admitted workloads that may not be ready (cleaned when asked).
    unready: BTreeSet<u32>,
}

impl PodsReady {
    /// The state of `world`'s workloads when the model's Configuration enables
    /// `waitForPodsReady`, else `None`.
    ///
    /// # Complexity
    /// O(workloads × log workloads).
    pub(crate) fn new(model: &Model, world: &World) -> Option<PodsReady> {
        let set = Settings::from_model(model)?;
        let after = world
            .workloads
            .iter()
            .map(|w| {
                model
                    .workloads
                    .get(&w.key)
                    .and_then(|m| {
                        m.metadata
                            .annotations
                            .get(PODS_READY_AFTER)
                            .or_else(|| m.metadata.labels.get(PODS_READY_AFTER))
                    })
                    .and_then(|s| parse_ready_after(s))
                    .unwrap_or(ReadyAfter::Ms(0))
            })
            .collect::<Vec<_>>();
        let n = after.len();
        Some(PodsReady {
            set,
            after,
            generation: vec![0; n],
            admitted_at: vec![0; n],
            running_at: vec![None; n],
            ready: vec![false; n],
            count: vec![0; n],
            deactivated: vec![false; n],
            unready: BTreeSet::new(),
        })
    }

    /// `w` is admitted at `t`: not ready, its timeout counts from `t`.
    pub(crate) fn admitted(&mut self, w: usize, t: i64, q: &mut Queue) {
        self.generation[w] = self.generation[w].wrapping_add(1);
        self.admitted_at[w] = t;
        self.running_at[w] = None;
        self.ready[w] = false;
        self.unready.insert(w as u32);
        q.push(self.event(w, t.saturating_add(self.set.timeout_ms)));
    }

    /// All `w`'s pods run from `t`: ready now, or after its annotation's delay.
    pub(crate) fn running(&mut self, w: usize, t: i64, now: i64, q: &mut Queue) {
        self.running_at[w] = Some(t);
        match self.after[w] {
            ReadyAfter::Ms(d) if t.saturating_add(d) <= now => self.mark_ready(w),
            ReadyAfter::Ms(d) => q.push(self.event(w, t.saturating_add(d))),
            ReadyAfter::Never => {}
        }
    }

    fn event(&self, w: usize, t: i64) -> Event {
        Event::new(
            t,
            Kind::PodsReady {
                index: w as u32,
                generation: self.generation[w],
            },
        )
    }

    fn mark_ready(&mut self, w: usize) {
        self.ready[w] = true;
        self.unready.remove(&(w as u32));
    }

    /// The event of admission `generation` of `w` at `t`; `admitted` says whether `w` still
    /// holds its reservation. Readiness wins over a timeout at the same instant.
    pub(crate) fn on_event(&mut self, w: usize, generation: u32, t: i64, admitted: bool) -> Step {
        if !admitted || self.generation[w] != generation || self.ready[w] {
            return Step::Nothing;
        }
        if let (Some(r), ReadyAfter::Ms(d)) = (self.running_at[w], self.after[w])
            && r.saturating_add(d) <= t
        {
            self.mark_ready(w);
            return Step::Ready;
        }
        if t < self.admitted_at[w].saturating_add(self.set.timeout_ms) {
            return Step::Nothing;
        }
        self.unready.remove(&(w as u32));
        if self
            .set
            .limit
            .is_some_and(|l| self.count[w].saturating_add(1) > l)
        {
            self.deactivated[w] = true;
            self.count[w] = 0;
            return Step::Deactivate;
        }
        self.count[w] += 1;
        Step::Requeue {
            backoff_ms: backoff_ms(self.set.base_ms, self.set.max_ms, self.count[w]),
        }
    }

    /// Whether `blockAdmission` holds admissions now: an admitted workload (`admitted`
    /// says which still are) is not ready.
    ///
    /// # Complexity
    /// O(not-ready admitted workloads).
    pub(crate) fn blocks(&mut self, admitted: impl Fn(usize) -> bool) -> bool {
        if !self.set.block {
            return false;
        }
        self.unready.retain(|w| admitted(*w as usize));
        !self.unready.is_empty()
    }

    /// The pending reason and message of a deactivated `w`.
    pub(crate) fn deactivated_reason(&self, w: usize) -> Option<(String, String)> {
        self.deactivated[w].then(|| (DEACTIVATED.to_owned(), DEACTIVATED_MESSAGE.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_the_jitters_expected_value_and_is_capped() {
        // 60 s × 1.00005 = 60.003 s; 120 s → 120.006 s; 240 s → 240.012 s
        assert_eq!(backoff_ms(60_000, 3_600_000, 1), 60_003);
        assert_eq!(backoff_ms(60_000, 3_600_000, 2), 120_006);
        assert_eq!(backoff_ms(60_000, 3_600_000, 3), 240_012);
        // 60 s × 2^6 = 3840 s > 3600 s: the cap
        assert_eq!(backoff_ms(60_000, 3_600_000, 7), 3_600_000);
        // 1 s: 0.05 ms of jitter rounds to 0
        assert_eq!(backoff_ms(1_000, 3_600_000, 1), 1_000);
        assert_eq!(backoff_ms(1_000, 3_600_000, 2), 2_000);
        // no overflow for a huge count
        assert_eq!(backoff_ms(60_000, 3_600_000, u32::MAX), 3_600_000);
    }

    #[test]
    fn ready_after_reads_durations_and_never() {
        assert_eq!(parse_ready_after("90s"), Some(ReadyAfter::Ms(90_000)));
        assert_eq!(parse_ready_after("never"), Some(ReadyAfter::Never));
        assert_eq!(parse_ready_after("soon"), None);
        assert_eq!(parse_ready_after("-1s"), None);
    }
}
