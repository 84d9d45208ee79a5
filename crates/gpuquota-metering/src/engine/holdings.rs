//! Holdings checks: raw samples turned into holds, double booking per holder key and the
//! per-card overbooking warning.

use crate::MeteringError;
use crate::engine::{RawSeries, Window};
use crate::mig::MigPolicy;
use crate::money::{L, RoundingMode, div_round};

/// The physical card of a holder key: its first two `/`-separated parts (`node/GPU-uuid`).
pub(super) fn card_key(holder: &str) -> String {
    let mut parts = holder.splitn(3, '/');
    match (parts.next(), parts.next()) {
        (Some(a), Some(b)) => format!("{a}/{b}"),
        _ => holder.to_owned(),
    }
}

/// The holds of a raw series: `(point index, start, end, value)` clipped to the window.
pub(super) fn raw_holds(
    sr: &RawSeries,
    lookback: i64,
    w: Window,
    what: &str,
) -> Result<Vec<(usize, i64, i64, u64)>, MeteringError> {
    for pair in sr.points.windows(2) {
        if pair[1].0 == pair[0].0 {
            return Err(MeteringError::DuplicateTimestamp {
                what: what.to_owned(),
                at: pair[1].0,
            });
        }
        if pair[1].0 < pair[0].0 {
            return Err(MeteringError::NotIncreasing {
                what: what.to_owned(),
                at: pair[1].0,
            });
        }
    }
    let mut stale = sr.stale_at.clone();
    stale.sort_unstable();
    stale.dedup();
    let mut si = 0usize;
    let mut pi = 0usize;
    for s in &stale {
        while pi < sr.points.len() && sr.points[pi].0 < *s {
            pi += 1;
        }
        if pi < sr.points.len() && sr.points[pi].0 == *s {
            return Err(MeteringError::DuplicateTimestamp {
                what: format!("{what}.staleAt"),
                at: *s,
            });
        }
    }
    let mut out = Vec::with_capacity(sr.points.len());
    for (i, (t, v)) in sr.points.iter().enumerate() {
        while si < stale.len() && stale[si] <= *t {
            si += 1;
        }
        let mut end = t.saturating_add(lookback);
        if let Some(n) = sr.points.get(i + 1) {
            end = end.min(n.0);
        }
        if let Some(s) = stale.get(si) {
            end = end.min(*s);
        }
        if let Some((s, e)) = w.clip(*t, end) {
            out.push((i, s, e, *v));
        }
    }
    Ok(out)
}

pub(super) fn check_double_booking(
    held: &mut [(String, i64, i64, String)],
) -> Result<(), MeteringError> {
    held.sort();
    let mut i = 0;
    while i < held.len() {
        let mut j = i;
        while j < held.len() && held[j].0 == held[i].0 {
            j += 1;
        }
        let same = &held[i..j];
        let mut max_end = i64::MIN;
        let mut max_idx = 0usize;
        for (k, h) in same.iter().enumerate() {
            if k > 0 && h.1 < max_end {
                // overlap: this hold against every other hold of the key it meets
                let mut lo = i64::MAX;
                let mut hi = i64::MIN;
                for (m, o) in same.iter().enumerate() {
                    if m != k && o.1 < h.2 && h.1 < o.2 {
                        lo = lo.min(o.1.max(h.1));
                        hi = hi.max(o.2.min(h.2));
                    }
                }
                return Err(MeteringError::DoubleBooked {
                    key: h.0.clone(),
                    first: same[max_idx].3.clone(),
                    second: h.3.clone(),
                    overlap_start: lo,
                    overlap_end: hi,
                });
            }
            if h.2 > max_end {
                max_end = h.2;
                max_idx = k;
            }
        }
        i = j;
    }
    Ok(())
}

pub(super) fn check_card_overbooking(
    sub: &mut [(String, i64, i64, i128)],
    policy: &MigPolicy,
    warnings: &mut Vec<String>,
) {
    sub.sort();
    let mut i = 0;
    while i < sub.len() {
        let mut j = i;
        while j < sub.len() && sub[j].0 == sub[i].0 {
            j += 1;
        }
        let mut ev: Vec<(i64, i128)> = sub[i..j]
            .iter()
            .flat_map(|h| [(h.1, h.3), (h.2, -h.3)])
            .collect();
        ev.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut level = 0i128;
        let mut worst: Option<(i64, i128)> = None;
        for (t, d) in ev {
            level += d;
            if level > L && worst.is_none_or(|(_, wv)| level > wv) {
                worst = Some((t, level));
            }
        }
        if let Some((t, lv)) = worst {
            let cards = div_round(lv * 10_000, L, RoundingMode::HalfEven).unwrap_or(0);
            warnings.push(format!(
                "card {}: instances add up to {} cards at {t} under the {} weights (overbooking)",
                sub[i].0,
                crate::money::format_fixed(cards, 4),
                policy.as_str()
            ));
        }
        i = j;
    }
}
