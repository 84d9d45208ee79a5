//! The sweep over time: per card type, the change instants of every group's holdings, with
//! quota, own, borrowed and lent units integrated segment by segment.

use std::collections::BTreeMap;

use super::{Acc, GroupKey, Piece, add, mul};
use crate::MeteringError;
use crate::engine::types::*;
use crate::money::*;

pub(super) fn sweep(
    input: &Input,
    group_keys: &[GroupKey],
    groups: &BTreeMap<GroupKey, usize>,
    pieces: Vec<Piece>,
    warnings: &mut Vec<String>,
) -> Result<Vec<Vec<Acc>>, MeteringError> {
    let cfg = &input.config;
    let w = cfg.window;
    let n_cards = input.card_types.len();
    let n_groups = group_keys.len();
    let mut acc: Vec<Vec<Acc>> = vec![vec![Acc::default(); n_cards]; n_groups];
    let mut by_card: Vec<Vec<(i64, usize, i128)>> = vec![Vec::new(); n_cards];
    for p in pieces {
        by_card[p.card].push((p.start, p.group, p.weight));
        by_card[p.card].push((p.end, p.group, -p.weight));
    }
    let by_name: BTreeMap<&str, &Department> = input
        .departments
        .iter()
        .map(|d| (d.name.as_str(), d))
        .collect();
    // department groups (not service groups) in name order
    let dept_groups: Vec<usize> = groups
        .iter()
        .filter(|(k, _)| k.service.is_none())
        .map(|(_, g)| *g)
        .collect();
    let lend = cfg.basis == Basis::Quota && cfg.borrowed == BorrowedMode::Charged;
    for (c, events) in by_card.iter_mut().enumerate() {
        let ct = &input.card_types[c];
        events.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
        let (steps, times) = quota_steps(group_keys, &by_name, &dept_groups, &ct.name, w);
        let quota_at = |s: &[QuotaStep], t: i64| -> i128 {
            s.iter()
                .take_while(|q| q.from <= t)
                .last()
                .map_or(0, |q| q.cards_units)
        };
        let cap_units = ct.capacity.map(|n| i128::from(n) * L);
        let mut a = vec![0i128; n_groups];
        let mut q = vec![0i128; n_groups];
        for (g, s) in &steps {
            q[*g] = quota_at(s, w.start);
        }
        let mut ei = 0usize;
        let mut qi = 0usize;
        while ei < events.len() && events[ei].0 <= w.start {
            a[events[ei].1] = add(a[events[ei].1], events[ei].2, &ct.name)?;
            ei += 1;
        }
        let mut warned = false;
        let mut cur = w.start;
        let what = format!("card type {}", ct.name);
        let mut spare_w: Vec<i128> = Vec::with_capacity(dept_groups.len());
        while cur < w.end {
            let next_e = events.get(ei).map_or(w.end, |e| e.0);
            let next_q = times.get(qi).copied().unwrap_or(w.end);
            let next = next_e.min(next_q).min(w.end);
            let dur = i128::from(next - cur);
            if dur > 0 {
                let mut total_a = 0i128;
                for g in 0..n_groups {
                    if a[g] != 0 {
                        total_a = add(total_a, a[g], &what)?;
                        let x = &mut acc[g][c];
                        x.allocated = add(x.allocated, mul(a[g], dur, &what)?, &what)?;
                    }
                }
                let mut b_total = 0i128;
                let mut q_total = 0i128;
                for g in &dept_groups {
                    let (ag, qg) = (a[*g], q[*g]);
                    if ag == 0 && qg == 0 {
                        continue;
                    }
                    let x = &mut acc[*g][c];
                    x.own = add(x.own, mul(ag.min(qg), dur, &what)?, &what)?;
                    let b = (ag - qg).max(0);
                    x.borrowed = add(x.borrowed, mul(b, dur, &what)?, &what)?;
                    x.quota = add(x.quota, mul(qg, dur, &what)?, &what)?;
                    b_total = add(b_total, b, &what)?;
                    q_total = add(q_total, qg, &what)?;
                }
                if let Some(cap) = cap_units
                    && total_a > cap
                    && !warned
                {
                    {
                        let why = if cfg.mig_policy.can_overbook() {
                            format!("overbooking under the {} weights", cfg.mig_policy.as_str())
                        } else {
                            "more cards than exist: check the input".to_owned()
                        };
                        warnings.push(format!(
                            "{what}: {} cards held at {cur}, more than the capacity {} ({why}); \
                             idle (capacity × T − charged) shrinks by the excess",
                            crate::money::format_fixed(
                                div_round(total_a * 10_000, L, RoundingMode::HalfEven).unwrap_or(0),
                                4
                            ),
                            cap / L,
                        ));
                        warned = true;
                    }
                }
                if lend && b_total > 0 {
                    let unassigned =
                        cap_units.map_or(i128::MAX, |cap| cap.saturating_sub(q_total).max(0));
                    let from_lenders = b_total.saturating_sub(unassigned).max(0);
                    if from_lenders > 0 {
                        spare_w.clear();
                        spare_w.extend(dept_groups.iter().map(|g| (q[*g] - a[*g]).max(0)));
                        let total = mul(from_lenders, dur, &what)?;
                        if let Some(shares) = apportion(total, &spare_w) {
                            for (g, s) in dept_groups.iter().zip(shares) {
                                acc[*g][c].lent = add(acc[*g][c].lent, s, &what)?;
                            }
                        }
                    }
                }
            }
            while ei < events.len() && events[ei].0 == next {
                let (_, g, d) = events[ei];
                a[g] = add(a[g], d, &what)?;
                ei += 1;
            }
            if next_q == next && qi < times.len() {
                while qi < times.len() && times[qi] == next {
                    qi += 1;
                }
                for (g, s) in &steps {
                    q[*g] = quota_at(s, next);
                }
            }
            cur = next;
        }
    }
    Ok(acc)
}

/// The quota steps of every department group on card type `card`, and the instants inside
/// the window where some quota changes, in order.
fn quota_steps(
    group_keys: &[GroupKey],
    by_name: &BTreeMap<&str, &Department>,
    dept_groups: &[usize],
    card: &str,
    w: Window,
) -> (Vec<(usize, Vec<QuotaStep>)>, Vec<i64>) {
    let mut steps: Vec<(usize, Vec<QuotaStep>)> = Vec::new();
    let mut times: Vec<i64> = Vec::new();
    for g in dept_groups {
        let quota = by_name
            .get(group_keys[*g].department.as_str())
            .and_then(|d| d.quota.get(card));
        if let Some(s) = quota {
            let mut s = s.clone();
            s.sort();
            times.extend(
                s.iter()
                    .map(|q| q.from)
                    .filter(|t| *t > w.start && *t < w.end),
            );
            steps.push((*g, s));
        }
    }
    times.sort_unstable();
    times.dedup();
    (steps, times)
}
