//! Kueue's dominant resource share (DRS), computed from plain inputs.
//!
//! Upstream: `pkg/cache/scheduler/fair_sharing.go` (kubernetes-sigs/kueue:
//! `pkg/cache/scheduler/fair_sharing.go`). For a node with a parent:
//!
//! * `borrowed[r]` = Σ over the node's `SubtreeQuota` flavor-resources of resource `r` of
//!   `max(0, request + usage − subtreeQuota)` (Kueue's saturating amount arithmetic);
//! * `lendable[r]` = Σ over every flavor-resource of the whole tree with resource `r` of
//!   `potentialAvailable(parent, fr)`;
//! * `ratio[r] = borrowed[r] · 1000 / lendable[r]` as an `f64` (skipped when `lendable ≤ 0`);
//! * the dominant resource is the largest ratio, ties going to the alphabetically smaller name;
//! * the weighted share is `ratio / weight` (`f64`), `+∞` when the weight is 0 and the node
//!   borrows; `status.fairSharing.weightedShare` is its ceiling as `i64`, or `i64::MAX` for `+∞`.
//!
//! Upstream switched from integer division to this float form in v0.13 (#6925); we follow the
//! float form bit for bit (same operations, same order), so the rounded share matches.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use gpuquota_model::{Amount, Quantity, ResourceName};
use ordered_float::OrderedFloat;

use crate::error::FairShareError;

/// A (flavor, resource) pair: Kueue's unit of quota accounting (the model's type).
pub use gpuquota_model::FlavorResource;

/// Amounts per flavor-resource, in Kueue's units (cpu milli, others base units).
pub type FrQuantities = BTreeMap<FlavorResource, Amount>;

/// The default `fairSharing.weight`.
pub const DEFAULT_WEIGHT: f64 = 1.0;

/// A node's dominant resource share, with the data Kueue compares precisely.
#[derive(Debug, Clone, PartialEq)]
pub struct Drs {
    /// The node's `fairSharing.weight` as `f64`.
    pub weight: f64,
    /// `max_r borrowed[r] · 1000 / lendable[r]` (0 when not borrowing).
    pub unweighted_ratio: f64,
    /// The resource attaining the maximum (alphabetically first on ties); `None` when no ratio
    /// is positive.
    pub dominant_resource: Option<ResourceName>,
    /// True when usage (plus request) exceeds the subtree quota on some flavor-resource.
    pub borrowing: bool,
    /// The flavor-resources borrowed on, ascending.
    pub borrowed: Vec<FlavorResource>,
}

impl Drs {
    /// The share of a node that does not borrow (or has no parent).
    pub fn zero(weight: f64) -> Drs {
        Drs {
            weight,
            unweighted_ratio: 0.0,
            dominant_resource: None,
            borrowing: false,
            borrowed: Vec::new(),
        }
    }

    /// True when the unweighted ratio is 0 (a node borrowing only resources nobody lends also
    /// has ratio 0; see [`Drs::borrowing`]).
    pub fn is_zero(&self) -> bool {
        self.unweighted_ratio == 0.0
    }

    /// True when the node borrows on some flavor-resource with a positive `request` entry.
    pub fn is_borrowing_on(&self, request: &FrQuantities) -> bool {
        self.borrowed
            .iter()
            .any(|fr| request.get(fr).is_some_and(|a| a.0 > 0))
    }

    /// Weight 0 and borrowing: the share is `+∞`.
    pub fn zero_weight_borrows(&self) -> bool {
        self.weight == 0.0 && self.borrowing
    }

    /// The precise weighted share: `+∞`, `0`, or `ratio / weight`.
    pub fn precise_weighted_share(&self) -> f64 {
        if self.zero_weight_borrows() {
            f64::INFINITY
        } else if self.is_zero() {
            0.0
        } else {
            self.unweighted_ratio / self.weight
        }
    }

    /// `status.fairSharing.weightedShare`: the ceiling of the precise share, `i64::MAX` when the
    /// weight is 0 and the node borrows. (A ceiling beyond `i64` saturates to `i64::MAX`.)
    pub fn weighted_share(&self) -> i64 {
        if self.zero_weight_borrows() {
            i64::MAX
        } else {
            // `as` saturates; the value is finite and non-negative here.
            self.precise_weighted_share().ceil() as i64
        }
    }
}

/// Kueue's `CompareDRS`: lower means preferred for admission, higher preferred as a victim.
///
/// Two zero-weight borrowers compare by unweighted ratio; a zero-weight borrower is above
/// everything else; otherwise the precise weighted shares compare as [`OrderedFloat`]s.
/// Neither share is ever `-0.0` or NaN for a [`Drs`] that [`dominant_resource_share`] built
/// from a valid weight, so this is the order of `f64::total_cmp` too.
pub fn compare_drs(a: &Drs, b: &Drs) -> Ordering {
    DrsLite::of(a).compare(&DrsLite::of(b))
}

/// The part of a [`Drs`] that comparisons read (no allocation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct DrsLite {
    pub(crate) weight: f64,
    pub(crate) ratio: f64,
    pub(crate) borrowing: bool,
}

impl DrsLite {
    pub(crate) fn of(d: &Drs) -> DrsLite {
        DrsLite {
            weight: d.weight,
            ratio: d.unweighted_ratio,
            borrowing: d.borrowing,
        }
    }

    fn zero_weight_borrows(&self) -> bool {
        self.weight == 0.0 && self.borrowing
    }

    fn precise(&self) -> f64 {
        if self.zero_weight_borrows() {
            f64::INFINITY
        } else if self.ratio == 0.0 {
            0.0
        } else {
            self.ratio / self.weight
        }
    }

    /// Kueue's `CompareDRS`.
    pub(crate) fn compare(&self, o: &DrsLite) -> Ordering {
        match (self.zero_weight_borrows(), o.zero_weight_borrows()) {
            (true, true) => OrderedFloat(self.ratio).cmp(&OrderedFloat(o.ratio)),
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => OrderedFloat(self.precise()).cmp(&OrderedFloat(o.precise())),
        }
    }
}

/// One flavor-resource of a node's `SubtreeQuota`, as input to [`dominant_resource_share`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DrsInput<'a> {
    /// The flavor-resource.
    pub fr: &'a FlavorResource,
    /// `SubtreeQuota(node)[fr]`.
    pub subtree_quota: Amount,
    /// `Usage(node)[fr]`.
    pub usage: Amount,
    /// The simulated extra usage at this node (0 when none).
    pub request: Amount,
}

/// Kueue's DRS of a node from plain inputs.
///
/// `entries` are the node's `SubtreeQuota` flavor-resources (only those count), `lendable` is
/// [`lendable`] of the node's parent, `has_parent` false gives the zero share.
///
/// # Complexity
/// O(F log R) for F entries over R resources.
pub fn dominant_resource_share<'a>(
    has_parent: bool,
    weight: f64,
    entries: impl IntoIterator<Item = DrsInput<'a>>,
    lendable: &BTreeMap<ResourceName, Amount>,
) -> Drs {
    let mut drs = Drs::zero(weight);
    if !has_parent {
        return drs;
    }
    let mut borrowed: BTreeMap<&ResourceName, Amount> = BTreeMap::new();
    for e in entries {
        let b = e
            .request
            .saturating_add(e.usage)
            .saturating_sub(e.subtree_quota);
        if b.0 > 0 {
            let slot = borrowed.entry(&e.fr.resource).or_insert(Amount::ZERO);
            *slot = slot.saturating_add(b);
            drs.borrowed.push(e.fr.clone());
        }
    }
    if borrowed.is_empty() {
        return drs;
    }
    drs.borrowing = true;
    drs.borrowed.sort();
    drs.borrowed.dedup();
    // Ascending names: a strictly larger ratio replaces, so ties keep the smaller name.
    for (r, b) in borrowed {
        let l = lendable.get(r).copied().unwrap_or(Amount::ZERO);
        if l.0 > 0 {
            let ratio = b.0 as f64 * 1000.0 / l.0 as f64;
            if ratio > drs.unweighted_ratio {
                drs.unweighted_ratio = ratio;
                drs.dominant_resource = Some(r.clone());
            }
        }
    }
    drs
}

/// Kueue's `calculateLendable`: per resource, the sum (saturating) of the parent's
/// `potentialAvailable` over every flavor-resource of the tree.
///
/// # Complexity
/// O(F log R).
pub fn lendable<'a>(
    potential_available_at_parent: impl IntoIterator<Item = (&'a FlavorResource, Amount)>,
) -> BTreeMap<ResourceName, Amount> {
    let mut out: BTreeMap<ResourceName, Amount> = BTreeMap::new();
    for (fr, a) in potential_available_at_parent {
        let slot = out.entry(fr.resource.clone()).or_insert(Amount::ZERO);
        *slot = slot.saturating_add(a);
    }
    out
}

/// Parses `spec.fairSharing.weight` (absent ⇒ 1) into the `f64` Kueue divides by, applying
/// Kueue's validation: negative weights and weights in `(0, 1e-9]` are rejected.
///
/// # Errors
/// [`FairShareError::InvalidWeight`] naming `object`.
pub fn parse_weight(object: &str, weight: Option<&Quantity>) -> Result<f64, FairShareError> {
    let Some(q) = weight else {
        return Ok(DEFAULT_WEIGHT);
    };
    let bad = |message: &str| FairShareError::InvalidWeight {
        object: object.to_string(),
        value: q.to_string(),
        message: message.to_string(),
    };
    if q.is_negative() {
        return Err(bad("must not be negative"));
    }
    let (mantissa, exponent) = q.as_decimal();
    let w: f64 = format!("{mantissa}e{exponent}")
        .parse()
        .map_err(|_| bad("not a number"))?;
    if w > 0.0 && w <= 1e-9 {
        return Err(bad("must be 0 or greater than 1e-9"));
    }
    if !w.is_finite() {
        return Err(bad("too large"));
    }
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lend(pairs: &[(&str, i64)]) -> BTreeMap<ResourceName, Amount> {
        pairs
            .iter()
            .map(|(r, a)| (ResourceName::new(*r), Amount(*a)))
            .collect()
    }

    #[test]
    fn root_has_zero_share() {
        let fr = FlavorResource::new("f", "cpu");
        let d = dominant_resource_share(
            false,
            1.0,
            [DrsInput {
                fr: &fr,
                subtree_quota: Amount(0),
                usage: Amount(100),
                request: Amount(0),
            }],
            &lend(&[("cpu", 10)]),
        );
        assert_eq!(d.weighted_share(), 0);
        assert!(!d.borrowing);
    }

    #[test]
    fn ceil_of_float_ratio() {
        // 1 × 1000 / 3 = 333.33… → 334 (upstream rounds up since v0.13).
        let fr = FlavorResource::new("f", "nvidia.com/gpu");
        let d = dominant_resource_share(
            true,
            1.0,
            [DrsInput {
                fr: &fr,
                subtree_quota: Amount(2),
                usage: Amount(3),
                request: Amount(0),
            }],
            &lend(&[("nvidia.com/gpu", 3)]),
        );
        assert_eq!(d.weighted_share(), 334);
        assert_eq!(
            d.dominant_resource,
            Some(ResourceName::new("nvidia.com/gpu"))
        );
    }

    #[test]
    fn alphabetical_tie_break() {
        let a = FlavorResource::new("f", "b-res");
        let b = FlavorResource::new("f", "a-res");
        let d = dominant_resource_share(
            true,
            1.0,
            [
                DrsInput {
                    fr: &a,
                    subtree_quota: Amount(0),
                    usage: Amount(1),
                    request: Amount(0),
                },
                DrsInput {
                    fr: &b,
                    subtree_quota: Amount(0),
                    usage: Amount(1),
                    request: Amount(0),
                },
            ],
            &lend(&[("a-res", 10), ("b-res", 10)]),
        );
        assert_eq!(d.dominant_resource, Some(ResourceName::new("a-res")));
        assert_eq!(d.weighted_share(), 100);
    }

    #[test]
    fn zero_weight() {
        let fr = FlavorResource::new("f", "cpu");
        let mk = |usage| {
            dominant_resource_share(
                true,
                0.0,
                [DrsInput {
                    fr: &fr,
                    subtree_quota: Amount(5),
                    usage: Amount(usage),
                    request: Amount(0),
                }],
                &lend(&[("cpu", 10)]),
            )
        };
        assert_eq!(mk(6).weighted_share(), i64::MAX);
        assert_eq!(mk(5).weighted_share(), 0);
        assert_eq!(compare_drs(&mk(6), &Drs::zero(1.0)), Ordering::Greater);
        assert_eq!(compare_drs(&mk(7), &mk(6)), Ordering::Greater);
    }

    #[test]
    fn weights_parse_and_validate() {
        let q = |s: &str| s.parse::<Quantity>().ok();
        assert_eq!(parse_weight("x", None), Ok(1.0));
        assert_eq!(parse_weight("x", q("0.5").as_ref()), Ok(0.5));
        assert_eq!(parse_weight("x", q("0").as_ref()), Ok(0.0));
        assert_eq!(parse_weight("x", q("300").as_ref()), Ok(300.0));
        assert!(parse_weight("x", q("1n").as_ref()).is_err());
        assert!(parse_weight("x", q("-1").as_ref()).is_err());
    }
}
