//! Admission fair sharing over virtual time: each LocalQueue's consumed usage sampled and
//! decayed as upstream's controllers do it, in upstream's decimal arithmetic.
//!
//! Upstream (kubernetes-sigs/kueue: `pkg/controller/core/localqueue_controller.go`,
//! `pkg/controller/core/workload_controller.go`, `pkg/cache/queue/afs/usage_ledger.go`,
//! `pkg/util/admissionfairsharing/admission_fair_sharing.go`, `pkg/util/resource/resource.go`):
//!
//! * every LocalQueue has a ledger entry: `consumed` per resource, the entry penalties not
//!   yet settled (one record per workload) and `lastUpdate`. It is created when the
//!   LocalQueue is first reconciled (time 0 here), seeded from
//!   `status.fairSharing.admissionFairSharingStatus.consumedResources`, and decayed at once
//!   with an elapsed time of 0 (which keeps the values; with `usageHalfLifeTime: 0` the
//!   controller resets `consumed` to empty instead);
//! * a decay step with elapsed `Δ` seconds is
//!   `consumed ← MulByFloat(consumed, 1 − α) + MulByFloat(admitted, α)`,
//!   `α = 1 − 0.5^(Δ / halfLife)` (0 when the half-life is 0), where `admitted` is the
//!   LocalQueue's admitted usage per resource (flavors summed) and `MulByFloat` multiplies
//!   the exact decimal by the float's shortest decimal form and rounds down to 9 decimals;
//! * the LocalQueue controller samples at `lastUpdate + usageSamplingInterval`;
//! * admitting a workload pushes its entry penalty `MulByFloat(requests, α(interval))`;
//!   when the workload becomes Admitted the workload controller settles it: one decay step
//!   with the admitted usage (now including the workload) over the time since `lastUpdate`,
//!   plus the penalty; `lastUpdate` becomes now;
//! * the ordering key is `Σ_r weight[r] · float(consumed[r] + penalty[r]) / lqWeight`
//!   (`CalculateUsage`, resources in name order; `+∞` for a weight ≤ 0).
//!
//! Amounts are held as integers in nano-units of each resource's base unit (CPU in cores),
//! the scale `MulByFloat` rounds to, so every step is exact.

use std::collections::BTreeMap;

use gpuquota_model::ResourceName;

/// Nano-units (10⁻⁹ of the base unit) per resource.
pub type Nanos = BTreeMap<ResourceName, i128>;

/// `MulByFloat` on one value: `v` (nano-units, ≥ 0) times the shortest decimal form of `f`
/// (finite, in `[0, 1]`), rounded toward zero to nano-units.
///
/// # Complexity
/// O(digits of `f`).
pub fn mul_by_float(v: i128, f: f64) -> i128 {
    if v <= 0 || f.is_nan() || f <= 0.0 {
        return 0;
    }
    // Rust's Display of an f64 is its shortest round-trip decimal, never in exponent form,
    // as Go's strconv.FormatFloat(f, 'f', -1, 64)
    let text = format!("{f}");
    let (int_part, frac) = text.split_once('.').unwrap_or((&text, ""));
    let digits = format!("{int_part}{frac}");
    let digits = digits.trim_start_matches('0');
    let Ok(d) = digits.parse::<u64>() else {
        return 0;
    };
    let k = frac.len();
    // v × d as 192 bits in three u64 limbs, then divided by 10^k
    let v = v as u128;
    let (lo, hi) = (v as u64 as u128, v >> 64);
    let p0 = lo * u128::from(d);
    let p1 = hi * u128::from(d) + (p0 >> 64);
    let mut limbs = [(p1 >> 64) as u64, p1 as u64, p0 as u64];
    for _ in 0..k {
        let mut rem: u128 = 0;
        for l in &mut limbs {
            let cur = (rem << 64) | u128::from(*l);
            *l = (cur / 10) as u64;
            rem = cur % 10;
        }
    }
    let out = (u128::from(limbs[0]) << 64 | u128::from(limbs[1])) << 64 | u128::from(limbs[2]);
    i128::try_from(out).unwrap_or(i128::MAX)
}

/// `CalculateDecayedConsumed`: `MulByFloat(old, 1 − α) + MulByFloat(new, α)` over the keys
/// of both.
pub fn decayed(old: &Nanos, new: &Nanos, alpha: f64) -> Nanos {
    let mut out: Nanos = old
        .iter()
        .map(|(r, &v)| (r.clone(), mul_by_float(v, 1.0 - alpha)))
        .collect();
    for (r, &v) in new {
        let e = out.entry(r.clone()).or_insert(0);
        *e = e.saturating_add(mul_by_float(v, alpha));
    }
    out
}

/// Go's `AsApproximateFloat64` of a decimal with 9 fraction digits.
pub fn nanos_to_f64(v: i128) -> f64 {
    v as f64 * (1.0 / 1e9)
}

/// One LocalQueue's ledger entry.
#[derive(Debug, Clone, Default)]
pub struct Ledger {
    /// The decayed consumed usage.
    pub consumed: Nanos,
    /// Pending entry penalties, by workload.
    pub penalties: BTreeMap<crate::ids::WlId, Nanos>,
    /// The LocalQueue's admitted usage (flavors summed).
    pub admitted: Nanos,
    /// ms since start.
    pub last_update: i64,
}

impl Ledger {
    /// One decay step at `now_ms` with the current admitted usage.
    pub fn decay(&mut self, now_ms: i64, half_life_nanos: i128) {
        let elapsed = (now_ms - self.last_update).max(0);
        let a =
            gpuquota_fairshare::afs::alpha_rate(i128::from(elapsed) * 1_000_000, half_life_nanos);
        self.consumed = decayed(&self.consumed, &self.admitted, a);
        self.last_update = self.last_update.max(now_ms);
    }

    /// `CalculateUsage`.
    pub fn weighted(&self, weights: &BTreeMap<ResourceName, f64>, lq_weight: f64) -> f64 {
        let mut all = self.consumed.clone();
        for p in self.penalties.values() {
            for (r, &v) in p {
                let e = all.entry(r.clone()).or_insert(0);
                *e = e.saturating_add(v);
            }
        }
        let mut total = 0.0;
        for (r, &v) in &all {
            total += weights.get(r).copied().unwrap_or(1.0) * nanos_to_f64(v);
        }
        if lq_weight <= 0.0 {
            return f64::INFINITY;
        }
        total / lq_weight
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mul_by_float_rounds_down_at_nano_scale() {
        // 8 cores × 0.5 = 4 cores exactly
        assert_eq!(mul_by_float(8_000_000_000, 0.5), 4_000_000_000);
        // 1 nano-core × 0.5 rounds down to 0
        assert_eq!(mul_by_float(1, 0.5), 0);
        // α for 5 minutes over a 10-minute half-life: 1 − 0.5^0.5 = 0.2928932188134524
        let a = 1.0 - 0.5f64.powf(0.5);
        assert_eq!(format!("{a}"), "0.2928932188134524");
        // 3 cores × 0.2928932188134524 = 0.8786796564403572 cores → 878679656 nano
        assert_eq!(mul_by_float(3_000_000_000, a), 878_679_656);
        // large values do not overflow: 10^30 nano × 0.5
        assert_eq!(mul_by_float(10i128.pow(30), 0.5), 5 * 10i128.pow(29));
        assert_eq!(mul_by_float(5, 1.0), 5);
        assert_eq!(mul_by_float(5, 0.0), 0);
    }
}
