//! Admission fair sharing (KEP-4136; upstream
//! `pkg/util/admissionfairsharing` and the LocalQueue controller).
//!
//! Each LocalQueue keeps a decayed usage per resource, updated every `usageSamplingInterval`
//! as an exponentially weighted moving average of its admitted usage:
//! `consumed ← consumed·(1 − α(Δt)) + current·α(Δt)` with `α(Δt) = 1 − 0.5^(Δt / halfLife)`
//! (α = 0 when the half-life is 0, so `consumed` never changes). Admitting a workload adds an
//! entry penalty `α(samplingInterval) · requests` until the next sample settles it. Inside a
//! ClusterQueue with `admissionScope.admissionMode: UsageBasedAdmissionFairSharing`, pending
//! workloads are ordered by their LocalQueue's weighted usage
//! `Σ_r resourceWeight[r] · (consumed[r] + penalty[r]) / LocalQueue weight` (`+∞` for a weight
//! ≤ 0), then priority, then queue-order timestamp, then UID.
//!
//! Amounts are `f64` in each resource's base unit (CPU in cores, memory in bytes), as upstream
//! multiplies quantities by float factors.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use gpuquota_model::{Quantity, ResourceName, Timestamp};
use ordered_float::OrderedFloat;

use crate::config::AdmissionFairSharingSettings;

/// Usage amounts per resource, in base units.
pub type ResourceAmounts = BTreeMap<ResourceName, f64>;

/// A quantity in base units as `f64` (correctly rounded from the exact decimal).
pub fn quantity_to_f64(q: &Quantity) -> f64 {
    let (m, e) = q.as_decimal();
    format!("{m}e{e}").parse().unwrap_or(f64::NAN)
}

/// `α = 1 − 0.5^(interval / halfLife)`; 0 when the half-life is 0 (upstream
/// `CalculateAlphaRate`). Durations in nanoseconds.
pub fn alpha_rate(interval_nanos: i128, half_life_nanos: i128) -> f64 {
    if half_life_nanos == 0 {
        return 0.0;
    }
    // Upstream passes seconds as f64.
    let s = interval_nanos as f64 / 1e9;
    let h = half_life_nanos as f64 / 1e9;
    1.0 - 0.5f64.powf(s / h)
}

/// The entry penalty of admitting a workload with `requests`: `α(samplingInterval) · requests`.
pub fn entry_penalty(
    requests: &ResourceAmounts,
    settings: &AdmissionFairSharingSettings,
) -> ResourceAmounts {
    let a = alpha_rate(
        settings.usage_sampling_interval_nanos,
        settings.usage_half_life_nanos,
    );
    requests.iter().map(|(r, v)| (r.clone(), v * a)).collect()
}

/// A LocalQueue's admission-fair-sharing state.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LocalQueueUsage {
    /// The decayed usage (`status.fairSharing.admissionFairSharingStatus.consumedResources`).
    pub consumed: ResourceAmounts,
    /// Entry penalties of admissions since the last sample.
    pub penalty: ResourceAmounts,
}

impl LocalQueueUsage {
    /// One sample: `consumed ← consumed·(1 − α(elapsed)) + current·α(elapsed)` over every
    /// resource in either map; pending penalties are settled (cleared).
    pub fn sample(
        &mut self,
        current: &ResourceAmounts,
        elapsed_nanos: i128,
        half_life_nanos: i128,
    ) {
        let a = alpha_rate(elapsed_nanos, half_life_nanos);
        let mut keys: Vec<ResourceName> = self.consumed.keys().cloned().collect();
        keys.extend(current.keys().cloned());
        keys.sort();
        keys.dedup();
        for r in keys {
            let old = self.consumed.get(&r).copied().unwrap_or(0.0);
            let cur = current.get(&r).copied().unwrap_or(0.0);
            self.consumed.insert(r, old * (1.0 - a) + cur * a);
        }
        self.penalty.clear();
    }

    /// Adds an entry penalty (see [`entry_penalty`]).
    pub fn add_penalty(&mut self, penalty: &ResourceAmounts) {
        for (r, v) in penalty {
            *self.penalty.entry(r.clone()).or_insert(0.0) += v;
        }
    }

    /// `Σ_r weight[r] · (consumed[r] + penalty[r]) / lqWeight`; `+∞` when `lq_weight ≤ 0`.
    /// A resource without a configured weight weighs 1.
    pub fn weighted_usage(&self, resource_weights: &ResourceAmounts, lq_weight: f64) -> f64 {
        if lq_weight <= 0.0 {
            return f64::INFINITY;
        }
        let mut keys: Vec<&ResourceName> =
            self.consumed.keys().chain(self.penalty.keys()).collect();
        keys.sort();
        keys.dedup();
        let total: f64 = keys
            .into_iter()
            .map(|r| {
                let w = resource_weights.get(r).copied().unwrap_or(1.0);
                let v = self.consumed.get(r).copied().unwrap_or(0.0)
                    + self.penalty.get(r).copied().unwrap_or(0.0);
                w * v
            })
            .sum();
        total / lq_weight
    }
}

/// A pending workload inside an AFS ClusterQueue.
#[derive(Debug, Clone, PartialEq)]
pub struct AfsEntry {
    /// Its LocalQueue's weighted usage ([`LocalQueueUsage::weighted_usage`]).
    pub local_queue_usage: f64,
    /// Effective priority.
    pub priority: i64,
    /// Queue-order timestamp.
    pub queue_order: Timestamp,
    /// UID (or key), the final tie-break.
    pub uid: String,
}

/// The heap order of an AFS ClusterQueue: lower LocalQueue usage, higher priority, earlier
/// timestamp, smaller UID, then input position. Returns indices.
///
/// Usages compare as [`OrderedFloat`]s, as upstream's `<` compares them: `-0.0` equals `0.0`
/// (an empty [`LocalQueueUsage`] weighs `-0.0`, the empty sum), and a NaN is above every number.
///
/// # Complexity
/// O(n log n).
pub fn order_within_cluster_queue(entries: &[AfsEntry]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..entries.len()).collect();
    idx.sort_by(|&a, &b| {
        let (x, y) = (&entries[a], &entries[b]);
        OrderedFloat(x.local_queue_usage)
            .cmp(&OrderedFloat(y.local_queue_usage))
            .then_with(|| y.priority.cmp(&x.priority))
            .then_with(|| x.queue_order.cmp(&y.queue_order))
            .then_with(|| x.uid.cmp(&y.uid))
            .then(a.cmp(&b))
    });
    idx
}

/// Compares two candidates of one ClusterQueue from different LocalQueues for preemption
/// (upstream `pkg/scheduler/preemption/common/ordering.go`): the higher LocalQueue usage is
/// preempted first. Usages compare as in [`order_within_cluster_queue`].
pub fn compare_victims_by_usage(a_usage: f64, b_usage: f64) -> Ordering {
    OrderedFloat(b_usage).cmp(&OrderedFloat(a_usage))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: i128 = 60 * 1_000_000_000;

    #[test]
    fn alpha_halves_per_half_life() {
        assert!((alpha_rate(10 * MIN, 10 * MIN) - 0.5).abs() < 1e-15);
        assert_eq!(alpha_rate(5 * MIN, 0), 0.0);
        assert!((alpha_rate(20 * MIN, 10 * MIN) - 0.75).abs() < 1e-15);
    }

    #[test]
    fn ewma_closes_half_the_gap_per_half_life() {
        let mut u = LocalQueueUsage::default();
        let cur: ResourceAmounts = [(ResourceName::new("cpu"), 8.0)].into_iter().collect();
        u.sample(&cur, 10 * MIN, 10 * MIN);
        assert_eq!(u.consumed[&ResourceName::new("cpu")], 4.0);
        u.sample(&cur, 10 * MIN, 10 * MIN);
        assert_eq!(u.consumed[&ResourceName::new("cpu")], 6.0);
        // Half-life 0: never changes.
        let mut z = LocalQueueUsage::default();
        z.sample(&cur, 10 * MIN, 0);
        assert_eq!(z.consumed[&ResourceName::new("cpu")], 0.0);
    }

    #[test]
    fn weighted_usage_and_order() {
        let mut u = LocalQueueUsage::default();
        u.consumed.insert(ResourceName::new("cpu"), 4.0);
        u.consumed.insert(ResourceName::new("memory"), 2.0);
        let w: ResourceAmounts = [(ResourceName::new("cpu"), 2.0)].into_iter().collect();
        assert_eq!(u.weighted_usage(&w, 2.0), 5.0);
        assert_eq!(u.weighted_usage(&w, 0.0), f64::INFINITY);
        let t = Timestamp::from_unix_seconds;
        let e = |usage, priority, ts, uid: &str| AfsEntry {
            local_queue_usage: usage,
            priority,
            queue_order: t(ts),
            uid: uid.into(),
        };
        let order = order_within_cluster_queue(&[
            e(5.0, 100, 1, "a"),
            e(1.0, 0, 5, "b"),
            e(1.0, 10, 9, "c"),
            e(1.0, 10, 9, "a"),
        ]);
        assert_eq!(order, vec![3, 2, 1, 0]);
    }
}
