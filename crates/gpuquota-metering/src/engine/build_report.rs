//! From the integrated units to the report: lines, idle, services, money and totals.

use std::collections::BTreeMap;

use super::{Acc, GroupKey, add, mul, ovf};
use crate::MeteringError;
use crate::engine::types::*;
use crate::money::*;
use crate::report::{IdleLine, Line, Report, Totals};

type Lines = BTreeMap<(String, String, Option<String>), (usize, Acc)>;

pub(super) fn build_report(
    input: &Input,
    group_keys: &[GroupKey],
    acc: Vec<Vec<Acc>>,
    busy_acc: BTreeMap<(usize, usize), (i128, i128)>,
    mut warnings: Vec<String>,
    t_len: i128,
) -> Result<Report, MeteringError> {
    let cfg = &input.config;
    let cur = &cfg.currency;
    let money_den = mul(UNITS_PER_CARD_HOUR, cur.micro_per_minor(), "money")?;
    let lines = group_lines(input, group_keys, acc, &busy_acc, &mut warnings)?;
    unused_services(input, &lines, &mut warnings);
    let mut exact_num: i128 = 0;
    let (mut out_lines, charged_per_card) =
        priced_lines(input, lines, money_den, &mut exact_num, &mut warnings)?;
    split_service_costs(input, &mut out_lines, money_den)?;
    let mut idle_lines = idle(
        input,
        &mut out_lines,
        &charged_per_card,
        t_len,
        money_den,
        &mut exact_num,
        &mut warnings,
    )?;

    idle_lines.sort_by(|a, b| a.card_type.cmp(&b.card_type));
    // canonical order, so that a permuted input gives the same report
    warnings.sort();
    warnings.dedup();
    let mut cost_total: i128 = 0;
    for l in &out_lines {
        cost_total = add(cost_total, l.total_minor, "total")?;
    }
    for i in idle_lines.iter().filter(|i| !i.recovered) {
        cost_total = add(cost_total, i.cost_minor, "total")?;
    }
    let exact_micro = div_round(exact_num, UNITS_PER_CARD_HOUR, RoundingMode::HalfEven)
        .ok_or_else(|| ovf("total"))?;
    let drift_num = mul(cost_total, money_den, "drift")? - exact_num;
    let drift =
        div_round(drift_num, money_den, RoundingMode::HalfEven).ok_or_else(|| ovf("drift"))?;
    Ok(Report {
        window: cfg.window,
        time_format: cfg.time_format,
        currency: cur.clone(),
        rounding: cfg.rounding,
        lines: out_lines,
        idle: idle_lines,
        totals: Totals {
            cost_minor: cost_total,
            exact_cost_micro: exact_micro,
            drift_minor: drift,
            exact_cost_num: exact_num,
        },
        warnings,
    })
}

/// One line per (department, card type, service): a group's units, its busy figures, and a
/// service's hours shared over the departments by their tokens.
fn group_lines(
    input: &Input,
    group_keys: &[GroupKey],
    acc: Vec<Vec<Acc>>,
    busy_acc: &BTreeMap<(usize, usize), (i128, i128)>,
    warnings: &mut Vec<String>,
) -> Result<Lines, MeteringError> {
    let mut lines: Lines = BTreeMap::new();
    let services: BTreeMap<&str, &Service> = input
        .services
        .iter()
        .map(|s| (s.name.as_str(), s))
        .collect();
    for (g, key) in group_keys.iter().enumerate() {
        for (c, mut x) in acc[g].iter().cloned().enumerate() {
            if let Some((b, cov)) = busy_acc.get(&(g, c)) {
                x.busy_micro = *b;
                x.covered = *cov;
            }
            let card_name = input.card_types[c].name.clone();
            match &key.service {
                None => {
                    if x.allocated != 0 || x.quota != 0 {
                        lines.insert((key.department.clone(), card_name, None), (c, x));
                    }
                }
                Some(sname) => {
                    if x.allocated == 0 {
                        continue;
                    }
                    let Some(svc) = services.get(sname.as_str()) else {
                        continue;
                    };
                    service_shares(&mut lines, svc, sname, c, &card_name, &x, warnings)?;
                }
            }
        }
    }
    Ok(lines)
}

/// A service's hours on card type `c`, shared over the departments by their weighted tokens
/// (all to its owner when there are none).
fn service_shares(
    lines: &mut Lines,
    svc: &Service,
    sname: &str,
    c: usize,
    card_name: &str,
    x: &Acc,
    warnings: &mut Vec<String>,
) -> Result<(), MeteringError> {
    let what = format!("services[{sname}]");
    let mut names = Vec::new();
    let mut eff = Vec::new();
    for (d, t) in &svc.tokens {
        let e = add(
            mul(i128::from(svc.input_weight), i128::from(t.input), &what)?,
            mul(i128::from(svc.output_weight), i128::from(t.output), &what)?,
            &what,
        )?;
        names.push(d.clone());
        eff.push(e);
    }
    let total_eff: i128 = eff.iter().sum();
    let shares: Vec<(String, i128)> = if total_eff == 0 {
        warnings.push(format!(
            "service {sname}: no tokens in the window; its {} hours stay with its \
                 owner {}",
            card_name, svc.department
        ));
        vec![(svc.department.clone(), x.allocated)]
    } else {
        let sh = apportion(x.allocated, &eff).ok_or_else(|| ovf(&what))?;
        names.into_iter().zip(sh).collect()
    };
    for (d, units) in shares {
        if units == 0 {
            continue;
        }
        let (busy_micro, covered) = if x.covered > 0 {
            // the service's utilisation applies to every share
            (x.busy_micro, x.covered)
        } else {
            (0, 0)
        };
        let entry = lines
            .entry((d, card_name.to_owned(), Some(sname.to_owned())))
            .or_insert((c, Acc::default()));
        entry.1.allocated = add(entry.1.allocated, units, &what)?;
        entry.1.busy_micro = busy_micro;
        entry.1.covered = covered;
    }
    Ok(())
}

/// Warns about every service that got no hours.
fn unused_services(input: &Input, lines: &Lines, warnings: &mut Vec<String>) {
    for svc in &input.services {
        if !lines
            .keys()
            .any(|k| k.2.as_deref() == Some(svc.name.as_str()))
        {
            warnings.push(format!(
                "service {}: no hours in the window (no holding names it and its owner {} \
                 holds nothing); its tokens are not charged",
                svc.name, svc.department
            ));
        }
    }
}

/// Charged units and cost per line (by the basis and the borrowed mode), and its
/// utilization; the charged units per card type.
fn priced_lines(
    input: &Input,
    lines: Lines,
    money_den: i128,
    exact_num: &mut i128,
    warnings: &mut Vec<String>,
) -> Result<(Vec<Line>, Vec<i128>), MeteringError> {
    let cfg = &input.config;
    // charged units and cost per line
    let mut out_lines = Vec::with_capacity(lines.len());
    let mut charged_per_card = vec![0i128; input.card_types.len()];
    for ((department, card_type, service), (c, x)) in lines {
        let price = input.card_types[c].price_micro_per_hour;
        let charged = match (cfg.basis, &service) {
            (Basis::Allocated, _) | (Basis::Quota, Some(_)) => x.allocated,
            (Basis::Quota, None) => match cfg.borrowed {
                BorrowedMode::Informational => x.quota,
                BorrowedMode::Charged => add(x.quota, x.borrowed, "charged")?
                    .checked_sub(x.lent)
                    .ok_or_else(|| ovf("charged"))?,
            },
        };
        charged_per_card[c] = add(charged_per_card[c], charged, "charged")?;
        let num = mul(charged, price, &department)?;
        *exact_num = add(*exact_num, num, "total")?;
        let cost = div_round(num, money_den, cfg.rounding).ok_or_else(|| ovf("cost"))?;
        let utilization = if x.covered > 0 && x.allocated > 0 {
            if x.covered < x.allocated {
                let pct =
                    div_round(x.covered * 10_000, x.allocated, RoundingMode::HalfEven).unwrap_or(0);
                warnings.push(format!(
                    "{department}/{card_type}{}: busy data covers {}% of the allocated hours; \
                     utilization is over the covered part",
                    service
                        .as_deref()
                        .map(|s| format!(" (service {s})"))
                        .unwrap_or_default(),
                    crate::money::format_fixed(pct, 2)
                ));
            }
            div_round(x.busy_micro, x.covered * 100, RoundingMode::HalfEven)
        } else {
            None
        };
        out_lines.push(Line {
            department,
            card_type,
            service,
            card_index: c,
            allocated_units: x.allocated,
            own_units: x.own,
            borrowed_units: x.borrowed,
            quota_units: x.quota,
            lent_units: x.lent,
            charged_units: charged,
            cost_minor: cost,
            idle_share_minor: 0,
            total_minor: cost,
            exact_cost_num: num,
            utilization_bp: utilization,
        });
    }

    Ok((out_lines, charged_per_card))
}

/// A service's cost is a fixed total: rounded once for the service, then split over its
/// token lines by largest remainder, so that the shares add up to it exactly.
fn split_service_costs(
    input: &Input,
    out_lines: &mut [Line],
    money_den: i128,
) -> Result<(), MeteringError> {
    let cfg = &input.config;
    let mut by_service: BTreeMap<(String, usize), Vec<usize>> = BTreeMap::new();
    for (i, l) in out_lines.iter().enumerate() {
        if let Some(s) = &l.service {
            by_service
                .entry((s.clone(), l.card_index))
                .or_default()
                .push(i);
        }
    }
    for ((sname, c), idx) in by_service {
        let what = format!("services[{sname}]");
        let price = input.card_types[c].price_micro_per_hour;
        let units: Vec<i128> = idx.iter().map(|i| out_lines[*i].charged_units).collect();
        let total = units.iter().try_fold(0i128, |a, u| a.checked_add(*u));
        let total = total.ok_or_else(|| ovf(&what))?;
        let cost = div_round(mul(total, price, &what)?, money_den, cfg.rounding)
            .ok_or_else(|| ovf(&what))?;
        let shares = apportion(cost, &units).ok_or_else(|| ovf(&what))?;
        for (i, share) in idx.into_iter().zip(shares) {
            out_lines[i].cost_minor = share;
            out_lines[i].total_minor = share;
        }
    }

    Ok(())
}

/// The idle hours and cost of every card type with a capacity, and their recovery by the
/// charged lines.
fn idle(
    input: &Input,
    out_lines: &mut [Line],
    charged_per_card: &[i128],
    t_len: i128,
    money_den: i128,
    exact_num: &mut i128,
    warnings: &mut Vec<String>,
) -> Result<Vec<IdleLine>, MeteringError> {
    let cfg = &input.config;
    let mut idle_lines = Vec::new();
    for (c, ct) in input.card_types.iter().enumerate() {
        let Some(cap) = ct.capacity else { continue };
        let cap_units = mul(mul(i128::from(cap), L, &ct.name)?, t_len, &ct.name)?;
        let mut idle = cap_units - charged_per_card[c];
        if idle < 0 {
            warnings.push(format!(
                "card type {}: {} hours charged exceed the capacity of {} hours; idle shown as 0",
                ct.name,
                crate::money::format_hours(charged_per_card[c]),
                crate::money::format_hours(cap_units)
            ));
            idle = 0;
        }
        let num = mul(idle, ct.price_micro_per_hour, &ct.name)?;
        *exact_num = add(*exact_num, num, "total")?;
        let cost = div_round(num, money_den, cfg.rounding).ok_or_else(|| ovf("idle cost"))?;
        let mut recovered = false;
        if cfg.idle != IdleMode::Platform && cost > 0 {
            let idx: Vec<usize> = out_lines
                .iter()
                .enumerate()
                .filter(|(_, l)| l.card_index == c && l.charged_units > 0)
                .map(|(i, _)| i)
                .collect();
            if idx.is_empty() {
                warnings.push(format!(
                    "card type {}: no department was charged, so its idle cost stays on the \
                     platform line",
                    ct.name
                ));
            } else {
                let weights: Vec<i128> = idx
                    .iter()
                    .map(|i| match cfg.idle {
                        IdleMode::Even => 1,
                        _ => out_lines[*i].charged_units,
                    })
                    .collect();
                let shares = apportion(cost, &weights).ok_or_else(|| ovf("idle share"))?;
                for (i, s) in idx.into_iter().zip(shares) {
                    out_lines[i].idle_share_minor = s;
                    out_lines[i].total_minor = out_lines[i].cost_minor + s;
                }
                recovered = true;
            }
        }
        idle_lines.push(IdleLine {
            card_type: ct.name.clone(),
            units: idle,
            cost_minor: cost,
            recovered,
        });
    }

    Ok(idle_lines)
}
