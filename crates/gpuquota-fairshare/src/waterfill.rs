//! Exact weighted max-min water-filling with floors, caps and priority tiers, in integer units;
//! and its hierarchical form.
//!
//! # The rule
//! For queue i with weight `wᵢ > 0`, demand `dᵢ`, cap `mᵢ` and floor `gᵢ`: the effective cap is
//! `cᵢ = min(dᵢ, mᵢ)` and the effective floor `gᵢ' = min(gᵢ, cᵢ)`.
//!
//! 1. Every queue first receives its floor (an error if the floors exceed the capacity).
//! 2. Tiers are served from the highest `tier` value down; a tier whose remaining demand fits
//!    is fully satisfied, the first one that does not fit shares what is left, lower tiers get
//!    only their floors (KAI's "over-quota by priority group").
//! 3. Inside the shared tier, the *fluid* solution is the level `L` (an exact rational) with
//!    `Σ clamp(wᵢ·L, gᵢ', cᵢ) = floors + remaining` — the weighted max-min fair point.
//! 4. **Integer units (the leftover rule).** Think of queue i's k-th unit above its floor as
//!    costing the key `k/wᵢ` (k = gᵢ', gᵢ'+1, …, cᵢ−1). The R units of the tier go to the R
//!    smallest keys, ties broken by queue name, then input position. This is the
//!    smallest-divisor (Adams) apportionment on top of the floors; it is computed exactly from
//!    the fluid level (round every queue up to `⌈wᵢL⌉`, then take back the largest keys) and it
//!    is precisely *envy-free up to one unit*: `aᵢ/wᵢ ≥ (aⱼ − 1)/wⱼ` whenever `aᵢ < cᵢ` and
//!    `aⱼ > gⱼ'` (same tier). Every `aᵢ ≤ ⌈fluidᵢ⌉`; with very unequal weights a queue can
//!    fall more than one unit below its fluid share (divisor methods do not keep quota).
//!
//! The result depends only on the multiset of queues (when names are unique), not their order.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::error::FairShareError;
use crate::ratio::Ratio;

/// One queue of a water-filling problem.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct WfQueue {
    /// Name (tie-break).
    pub name: String,
    /// Weight (> 0).
    pub weight: u32,
    /// Guarantee (≥ 0).
    pub floor: i64,
    /// Limit (≥ 0), `None` for unlimited.
    pub cap: Option<i64>,
    /// Demand (≥ 0).
    pub demand: i64,
    /// Priority tier: higher tiers are served first.
    pub tier: u32,
}

impl WfQueue {
    /// A queue with weight, demand, no floor, no cap, tier 0.
    pub fn new(name: impl Into<String>, weight: u32, demand: i64) -> WfQueue {
        WfQueue {
            name: name.into(),
            weight,
            floor: 0,
            cap: None,
            demand,
            tier: 0,
        }
    }

    /// Sets the floor.
    pub fn with_floor(mut self, floor: i64) -> WfQueue {
        self.floor = floor;
        self
    }

    /// Sets the cap.
    pub fn with_cap(mut self, cap: i64) -> WfQueue {
        self.cap = Some(cap);
        self
    }

    /// Sets the tier.
    pub fn with_tier(mut self, tier: u32) -> WfQueue {
        self.tier = tier;
        self
    }

    /// `cᵢ = min(demand, cap)`.
    pub fn effective_cap(&self) -> i64 {
        self.cap.map_or(self.demand, |c| c.min(self.demand))
    }

    /// `gᵢ' = min(floor, cᵢ)`.
    pub fn effective_floor(&self) -> i64 {
        self.floor.min(self.effective_cap())
    }
}

/// How a tier fared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum TierLevel {
    /// Every queue of the tier reached its effective cap.
    Satisfied,
    /// The tier shared the remaining capacity at this fluid level `L`.
    Level(Ratio),
    /// Nothing was left for the tier beyond the floors.
    Starved,
}

/// The result of [`water_fill`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct WaterFill {
    /// Integer allocation per queue, in input order.
    pub allocations: Vec<i64>,
    /// Per tier (by tier value).
    pub tiers: BTreeMap<u32, TierLevel>,
}

impl WaterFill {
    /// The exact fluid (weighted max-min) share of queue `i` of `queues`.
    ///
    /// # Errors
    /// Overflow (not for inputs [`water_fill`] accepted).
    pub fn fluid(&self, queues: &[WfQueue], i: usize) -> Result<Ratio, FairShareError> {
        let q = &queues[i];
        let (g, c) = (q.effective_floor(), q.effective_cap());
        Ok(match self.tiers.get(&q.tier) {
            Some(TierLevel::Satisfied) => Ratio::int(i128::from(c)),
            Some(TierLevel::Level(l)) => {
                let v = l.checked_mul(Ratio::int(i128::from(q.weight)))?;
                v.max(Ratio::int(i128::from(g)))
                    .min(Ratio::int(i128::from(c)))
            }
            _ => Ratio::int(i128::from(g)),
        })
    }
}

fn validate(capacity: i64, queues: &[WfQueue]) -> Result<(), FairShareError> {
    if capacity < 0 {
        return Err(FairShareError::Negative {
            object: "water-filling".into(),
            field: "capacity".into(),
            value: capacity.to_string(),
        });
    }
    for q in queues {
        let object = || format!("queue \"{}\"", q.name);
        if q.weight == 0 {
            return Err(FairShareError::invalid(
                object(),
                "weight",
                "must be greater than 0",
            ));
        }
        for (field, v) in [
            ("floor", Some(q.floor)),
            ("demand", Some(q.demand)),
            ("cap", q.cap),
        ] {
            if let Some(v) = v
                && v < 0
            {
                return Err(FairShareError::Negative {
                    object: object(),
                    field: field.into(),
                    value: v.to_string(),
                });
            }
        }
    }
    Ok(())
}

/// Removal candidate: queue `idx` whose last unit has key `key_num / w`.
struct Top<'a> {
    key_num: i64,
    w: i64,
    name: &'a str,
    idx: usize,
}

/// `a/b` vs `c/d` for `b, d > 0`, exact (widening multiplication).
fn cmp_frac(a: i64, b: i64, c: i64, d: i64) -> Ordering {
    (i128::from(a) * i128::from(d)).cmp(&(i128::from(c) * i128::from(b)))
}

impl Top<'_> {
    fn cmp_key(&self, o: &Self) -> Ordering {
        cmp_frac(self.key_num, self.w, o.key_num, o.w)
            .then_with(|| self.name.cmp(o.name))
            .then(self.idx.cmp(&o.idx))
    }
}

/// `⌈n / d⌉` for `n ≥ 0`, `d > 0`, with a 64-bit fast path.
fn ceil_div(n: i128, d: i128) -> i128 {
    if let (Ok(n64), Ok(d64)) = (u64::try_from(n), u64::try_from(d)) {
        return i128::from(n64.div_ceil(d64));
    }
    let q = n.div_euclid(d);
    if q * d == n { q } else { q + 1 }
}

/// The fluid level `L` with `Σ (clamp(w·L, g, c) − g) = r` over `(g, c, w)` members with
/// `0 < r < Σ (c − g)`: a linear-time search (median of the remaining breakpoints, members
/// whose breakpoints are all outside the current bracket folded into running sums).
fn fluid_level(gcw: &[(i64, i64, i64)], r: i128) -> Result<Ratio, FairShareError> {
    let ovf = || FairShareError::overflow("water-filling level");
    // Bracket (lo, hi) as fractions; None = unbounded.
    let mut lo: Option<(i64, i64)> = None;
    let mut hi: Option<(i64, i64)> = None;
    // Members settled for the whole bracket: constant part and linear part A·L − G.
    let (mut konst, mut a, mut g_lin) = (0i128, 0i128, 0i128);
    let mut undecided: Vec<usize> = (0..gcw.len()).filter(|&k| gcw[k].1 > gcw[k].0).collect();
    let mut pts: Vec<(i64, i64)> = Vec::with_capacity(undecided.len() * 2);
    let inside = |v: (i64, i64), lo: Option<(i64, i64)>, hi: Option<(i64, i64)>| {
        lo.is_none_or(|l| cmp_frac(v.0, v.1, l.0, l.1) == Ordering::Greater)
            && hi.is_none_or(|h| cmp_frac(v.0, v.1, h.0, h.1) == Ordering::Less)
    };
    loop {
        pts.clear();
        for &k in &undecided {
            let (g, c, w) = gcw[k];
            for v in [(g, w), (c, w)] {
                if inside(v, lo, hi) {
                    pts.push(v);
                }
            }
        }
        if pts.is_empty() {
            break;
        }
        let mid = pts.len() / 2;
        pts.select_nth_unstable_by(mid, |x, y| cmp_frac(x.0, x.1, y.0, y.1));
        let (mn, md) = pts[mid];
        let (mn, md) = (i128::from(mn), i128::from(md));
        // f(m)·md compared with r·md.
        let mut f = konst
            .checked_mul(md)
            .and_then(|x| x.checked_add(a.checked_mul(mn)?))
            .and_then(|x| x.checked_sub(g_lin.checked_mul(md)?))
            .ok_or_else(ovf)?;
        for &k in &undecided {
            let (g, c, w) = gcw[k];
            let (g, c, w) = (i128::from(g), i128::from(c), i128::from(w));
            let v = (w * mn).clamp(g * md, c * md) - g * md;
            f = f.checked_add(v).ok_or_else(ovf)?;
        }
        let m = (pts[mid].0, pts[mid].1);
        if f >= r.checked_mul(md).ok_or_else(ovf)? {
            hi = Some(m);
        } else {
            lo = Some(m);
        }
        // Settle members with no breakpoint strictly inside the new bracket.
        let mut keep = Vec::with_capacity(undecided.len());
        for &k in &undecided {
            let (g, c, w) = gcw[k];
            if inside((g, w), lo, hi) || inside((c, w), lo, hi) {
                keep.push(k);
                continue;
            }
            let at_or_below_lo = |v: (i64, i64)| {
                lo.is_some_and(|l| cmp_frac(v.0, v.1, l.0, l.1) != Ordering::Greater)
            };
            if at_or_below_lo((c, w)) {
                konst += i128::from(c - g);
            } else if at_or_below_lo((g, w)) {
                a += i128::from(w);
                g_lin += i128::from(g);
            }
            // Otherwise g/w ≥ hi: contributes 0 in the bracket.
        }
        undecided = keep;
    }
    // No breakpoint inside (lo, hi): f(L) = konst + A·L − G there.
    for &k in &undecided {
        let (g, c, w) = gcw[k];
        let at_or_below_lo =
            |n: i64| lo.is_some_and(|l| cmp_frac(n, w, l.0, l.1) != Ordering::Greater);
        if at_or_below_lo(c) {
            konst += i128::from(c - g);
        } else if at_or_below_lo(g) {
            a += i128::from(w);
            g_lin += i128::from(g);
        }
    }
    if a == 0 {
        return Err(ovf());
    }
    Ratio::new(r - konst + g_lin, a)
}

/// Shares `r` units (0 < r < Σ(c − g)) among `members`; `alloc` holds the floors on entry.
fn fill_tier(
    queues: &[WfQueue],
    members: &[usize],
    r: i128,
    alloc: &mut [i64],
) -> Result<Ratio, FairShareError> {
    // (floor, cap, weight) per member.
    let gcw: Vec<(i64, i64, i64)> = members
        .iter()
        .map(|&i| {
            let q = &queues[i];
            (q.effective_floor(), q.effective_cap(), i64::from(q.weight))
        })
        .collect();
    let lvl = fluid_level(&gcw, r)?;
    // Integer allocation: ⌈w·L⌉ clamped, then take back the largest keys.
    let (p, qd) = (lvl.numer(), lvl.denom());
    let mut given: i128 = 0;
    let mut heap: Vec<Top<'_>> = Vec::with_capacity(members.len());
    for (k, &i) in members.iter().enumerate() {
        let (g, c, w) = gcw[k];
        let wl = i128::from(w)
            .checked_mul(p)
            .ok_or_else(|| FairShareError::overflow("water-filling allocation"))?;
        let up = ceil_div(wl, qd);
        let ai = up.clamp(i128::from(g), i128::from(c));
        given += ai - i128::from(g);
        let ai = i64::try_from(ai).map_err(|_| FairShareError::overflow("allocation"))?;
        alloc[i] = ai;
        if ai > g {
            heap.push(Top {
                key_num: ai - 1,
                w,
                name: &queues[i].name,
                idx: i,
            });
        }
    }
    let excess = usize::try_from(given - r).unwrap_or(0);
    if excess > 0 {
        // The `excess` largest selected keys all lie at or above the excess-th largest top key
        // (there are that many tops above it): collect the keys from that threshold up, then
        // select the largest ones. Linear time instead of a heap.
        let desc = |x: &Top<'_>, y: &Top<'_>| y.cmp_key(x);
        let mut tops = heap;
        let k = excess.min(tops.len()) - 1;
        tops.select_nth_unstable_by(k, desc);
        let t = &tops[k];
        let threshold = Top {
            key_num: t.key_num,
            w: t.w,
            name: t.name,
            idx: t.idx,
        };
        let mut cands: Vec<Top<'_>> = Vec::with_capacity(tops.len());
        for top in &tops {
            let g = queues[top.idx].effective_floor();
            let mut key = top.key_num;
            while key >= g {
                let c = Top {
                    key_num: key,
                    w: top.w,
                    name: top.name,
                    idx: top.idx,
                };
                if c.cmp_key(&threshold) == Ordering::Less {
                    break;
                }
                cands.push(c);
                key -= 1;
            }
        }
        let k = excess.min(cands.len()) - 1;
        cands.select_nth_unstable_by(k, desc);
        for c in &cands[..=k] {
            alloc[c.idx] -= 1;
        }
    }
    Ok(lvl)
}

/// Queue indices per tier, highest tier first (few distinct tiers: linear scans).
fn group_by_tier(queues: &[WfQueue]) -> Vec<(u32, Vec<usize>)> {
    let mut distinct: Vec<u32> = Vec::new();
    for q in queues {
        if !distinct.contains(&q.tier) {
            distinct.push(q.tier);
            if distinct.len() > 16 {
                let mut by_tier: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
                for (i, q) in queues.iter().enumerate() {
                    by_tier.entry(q.tier).or_default().push(i);
                }
                return by_tier.into_iter().rev().collect();
            }
        }
    }
    distinct.sort_unstable_by(|a, b| b.cmp(a));
    let mut groups: Vec<(u32, Vec<usize>)> = distinct.iter().map(|t| (*t, Vec::new())).collect();
    for (i, q) in queues.iter().enumerate() {
        if let Some(g) = groups.iter_mut().find(|(t, _)| *t == q.tier) {
            g.1.push(i);
        }
    }
    groups
}

/// Exact weighted max-min water-filling of `capacity` integer units (see the module docs for
/// the rule).
///
/// ```
/// use gpuquota_fairshare::waterfill::{water_fill, WfQueue};
/// // Weighted max-min: C = 100, A(w1,d10), B(w2,d80), C(w1,d60) → (10, 60, 30).
/// let qs = [WfQueue::new("a", 1, 10), WfQueue::new("b", 2, 80), WfQueue::new("c", 1, 60)];
/// assert_eq!(water_fill(100, &qs)?.allocations, vec![10, 60, 30]);
/// # Ok::<(), gpuquota_fairshare::FairShareError>(())
/// ```
///
/// # Errors
/// Negative inputs, zero weights, floors above capacity, overflow.
///
/// # Complexity
/// O(n log n) (sorting the 2n breakpoints; the leftover step is O(n + E log n), E < n).
pub fn water_fill(capacity: i64, queues: &[WfQueue]) -> Result<WaterFill, FairShareError> {
    validate(capacity, queues)?;
    let mut alloc: Vec<i64> = queues.iter().map(WfQueue::effective_floor).collect();
    let floors: i128 = alloc.iter().map(|&x| i128::from(x)).sum();
    if floors > i128::from(capacity) {
        return Err(FairShareError::FloorsExceedCapacity {
            context: "water-filling".into(),
            floors,
            capacity: i128::from(capacity),
        });
    }
    let mut remaining = i128::from(capacity) - floors;
    let mut tiers = BTreeMap::new();
    for (tier, members) in group_by_tier(queues) {
        let room: i128 = members
            .iter()
            .map(|&i| i128::from(queues[i].effective_cap() - queues[i].effective_floor()))
            .sum();
        if room <= remaining {
            for &i in &members {
                alloc[i] = queues[i].effective_cap();
            }
            remaining -= room;
            tiers.insert(tier, TierLevel::Satisfied);
        } else if remaining == 0 {
            tiers.insert(tier, TierLevel::Starved);
        } else {
            let l = fill_tier(queues, &members, remaining, &mut alloc)?;
            remaining = 0;
            tiers.insert(tier, TierLevel::Level(l));
        }
    }
    Ok(WaterFill {
        allocations: alloc,
        tiers,
    })
}

/// A node of a hierarchical water-filling problem.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct HierNode {
    /// Name (unique in the tree).
    pub name: String,
    /// Weight among its siblings (> 0).
    pub weight: u32,
    /// Guarantee (≥ 0).
    pub floor: i64,
    /// Limit, `None` for unlimited.
    pub cap: Option<i64>,
    /// Priority tier among its siblings.
    pub tier: u32,
    /// Own demand (leaves; ignored for inner nodes).
    pub demand: i64,
    /// Children.
    pub children: Vec<HierNode>,
}

impl HierNode {
    /// A leaf.
    pub fn leaf(name: impl Into<String>, weight: u32, demand: i64) -> HierNode {
        HierNode {
            name: name.into(),
            weight,
            floor: 0,
            cap: None,
            tier: 0,
            demand,
            children: Vec::new(),
        }
    }

    /// An inner node.
    pub fn inner(name: impl Into<String>, weight: u32, children: Vec<HierNode>) -> HierNode {
        HierNode {
            name: name.into(),
            weight,
            floor: 0,
            cap: None,
            tier: 0,
            demand: 0,
            children,
        }
    }

    /// Effective demand: own demand for a leaf, Σ children's effective caps otherwise.
    fn eff(&self) -> Result<(i64, i64), FairShareError> {
        let demand = if self.children.is_empty() {
            self.demand
        } else {
            let mut d: i64 = 0;
            for c in &self.children {
                d = d
                    .checked_add(c.eff()?.0)
                    .ok_or_else(|| FairShareError::overflow(format!("node \"{}\"", self.name)))?;
            }
            d
        };
        let cap = self.cap.map_or(demand, |c| c.min(demand));
        // An inner node's floor covers its children's floors.
        let mut floor = self.floor;
        if !self.children.is_empty() {
            let mut s: i64 = 0;
            for c in &self.children {
                s = s.saturating_add(c.eff()?.1);
            }
            floor = floor.max(s);
        }
        Ok((cap, floor.min(cap)))
    }
}

/// Hierarchical water-filling: `capacity` is shared among `roots` by [`water_fill`], then each
/// node's allocation among its children, recursively. An inner node's effective demand is the
/// sum of its children's effective caps and its effective floor is at least the sum of its
/// children's effective floors. Returns every node's allocation by name.
///
/// # Errors
/// As [`water_fill`], per level; duplicate names.
///
/// # Complexity
/// O(N log N) over N nodes (plus O(N·depth) for effective demands).
pub fn hierarchical_water_fill(
    capacity: i64,
    roots: &[HierNode],
) -> Result<BTreeMap<String, i64>, FairShareError> {
    let mut out = BTreeMap::new();
    fill_level(capacity, roots, &mut out)?;
    Ok(out)
}

fn fill_level(
    capacity: i64,
    nodes: &[HierNode],
    out: &mut BTreeMap<String, i64>,
) -> Result<(), FairShareError> {
    let mut qs = Vec::with_capacity(nodes.len());
    for n in nodes {
        let (cap, floor) = n.eff()?;
        qs.push(WfQueue {
            name: n.name.clone(),
            weight: n.weight,
            floor,
            cap: Some(cap),
            demand: cap,
            tier: n.tier,
        });
    }
    let wf = water_fill(capacity, &qs)?;
    for (n, a) in nodes.iter().zip(wf.allocations) {
        if out.insert(n.name.clone(), a).is_some() {
            return Err(FairShareError::Duplicate {
                kind: "node".into(),
                name: n.name.clone(),
            });
        }
        if !n.children.is_empty() {
            fill_level(a, &n.children, out)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_from_theory() {
        let qs = [
            WfQueue::new("a", 1, 10),
            WfQueue::new("b", 2, 80),
            WfQueue::new("c", 1, 60).with_floor(40),
        ];
        let wf = water_fill(100, &qs).unwrap();
        assert_eq!(wf.allocations, vec![10, 50, 40]);
        assert_eq!(wf.tiers[&0], TierLevel::Level(Ratio::int(25)));
    }

    #[test]
    fn volcano_vector_integer() {
        // q1(w1,req2), q2(w1,req10), q3(w2,req10), C = 10 → fluid (2, 8/3, 16/3).
        let qs = [
            WfQueue::new("q1", 1, 2),
            WfQueue::new("q2", 1, 10),
            WfQueue::new("q3", 2, 10),
        ];
        let wf = water_fill(10, &qs).unwrap();
        assert_eq!(wf.fluid(&qs, 1).unwrap(), Ratio::new(8, 3).unwrap());
        // Keys: q2 units at 0,1,2 ; q3 at 0, .5, 1, 1.5, 2, 2.5 → 8 units: q2 gets 3, q3 gets 5.
        assert_eq!(wf.allocations, vec![2, 3, 5]);
    }

    #[test]
    fn tiers_served_high_first() {
        let qs = [
            WfQueue::new("low", 1, 50).with_floor(10),
            WfQueue::new("high", 1, 80).with_tier(1),
        ];
        assert_eq!(water_fill(100, &qs).unwrap().allocations, vec![20, 80]);
    }

    #[test]
    fn floors_above_capacity() {
        let qs = [WfQueue::new("a", 1, 100).with_floor(60)];
        assert!(matches!(
            water_fill(50, &qs),
            Err(FairShareError::FloorsExceedCapacity { .. })
        ));
    }

    #[test]
    fn hierarchy() {
        let roots = vec![
            HierNode::inner(
                "x",
                1,
                vec![HierNode::leaf("x1", 1, 100), HierNode::leaf("x2", 3, 100)],
            ),
            HierNode::leaf("y", 1, 10),
        ];
        let a = hierarchical_water_fill(100, &roots).unwrap();
        assert_eq!(a["y"], 10);
        assert_eq!(a["x"], 90);
        assert_eq!((a["x1"], a["x2"]), (23, 67));
    }
}
