//! The metering engine: inputs, the sweep over time, and the report.

use std::collections::BTreeMap;

use crate::MeteringError;
use crate::mig::{MigGeometry, mig_weight, ratio_units};
use crate::money::L;
use crate::report::Report;

mod build_report;
mod holdings;
mod sweep;
mod types;

pub use types::*;

use build_report::build_report;
use holdings::{card_key, check_card_overbooking, check_double_booking, raw_holds};
use sweep::sweep;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct GroupKey {
    department: String,
    service: Option<String>,
}

#[derive(Debug, Clone, Default)]
struct Acc {
    allocated: i128,
    own: i128,
    borrowed: i128,
    quota: i128,
    lent: i128,
    busy_micro: i128,
    covered: i128,
}

/// A held interval of one group on one card type, already clipped and weighted.
#[derive(Debug, Clone)]
struct Piece {
    group: usize,
    card: usize,
    weight: i128,
    start: i64,
    end: i64,
}

pub(super) fn ovf(what: &str) -> MeteringError {
    MeteringError::Overflow(what.to_owned())
}

pub(super) fn mul(a: i128, b: i128, what: &str) -> Result<i128, MeteringError> {
    a.checked_mul(b).ok_or_else(|| ovf(what))
}

pub(super) fn add(a: i128, b: i128, what: &str) -> Result<i128, MeteringError> {
    a.checked_add(b).ok_or_else(|| ovf(what))
}

struct Ctx<'a> {
    input: &'a Input,
    cards: BTreeMap<&'a str, usize>,
    geometry: Vec<Option<MigGeometry>>,
    ns_map: BTreeMap<&'a str, &'a str>,
    groups: BTreeMap<GroupKey, usize>,
    group_keys: Vec<GroupKey>,
    implicit_service: BTreeMap<&'a str, &'a str>,
    services: BTreeMap<&'a str, usize>,
    warnings: Vec<String>,
}

impl<'a> Ctx<'a> {
    fn card(&self, name: &str, what: &str) -> Result<usize, MeteringError> {
        self.cards
            .get(name)
            .copied()
            .ok_or_else(|| MeteringError::UnknownCardType {
                what: what.to_owned(),
                card_type: name.to_owned(),
            })
    }

    fn group(
        &mut self,
        owner: &Owner,
        service: Option<&str>,
        what: &str,
    ) -> Result<usize, MeteringError> {
        let department = match owner {
            Owner::Department(d) => d.clone(),
            Owner::Namespace(ns) => match self.ns_map.get(ns.as_str()) {
                Some(d) => (*d).to_owned(),
                None => UNASSIGNED.to_owned(),
            },
        };
        let service = match service {
            Some(s) => {
                if !self.services.contains_key(s) {
                    return Err(MeteringError::UnknownService {
                        what: what.to_owned(),
                        service: s.to_owned(),
                    });
                }
                Some(s.to_owned())
            }
            None => self
                .implicit_service
                .get(department.as_str())
                .map(|s| (*s).to_owned()),
        };
        Ok(self.group_id(GroupKey {
            department,
            service,
        }))
    }

    fn group_id(&mut self, key: GroupKey) -> usize {
        if let Some(g) = self.groups.get(&key) {
            return *g;
        }
        let id = self.group_keys.len();
        self.groups.insert(key.clone(), id);
        self.group_keys.push(key);
        id
    }

    fn weight(&self, card: usize, shape: &Shape, what: &str) -> Result<i128, MeteringError> {
        let ct = &self.input.card_types[card];
        match shape {
            Shape::Whole(n) => {
                if *n == 0 {
                    return Err(MeteringError::ZeroCount(what.to_owned()));
                }
                mul(i128::from(*n), L, what)
            }
            Shape::Mig { profile, count } => {
                if *count == 0 {
                    return Err(MeteringError::ZeroCount(what.to_owned()));
                }
                let w = mig_weight(
                    &self.input.config.mig_policy,
                    self.geometry[card].as_ref(),
                    &ct.name,
                    profile,
                )
                .map_err(|e| match e {
                    MeteringError::UnknownProfile {
                        card_type, profile, ..
                    } => MeteringError::UnknownProfile {
                        what: what.to_owned(),
                        card_type,
                        profile,
                    },
                    other => other,
                })?;
                mul(w, i128::from(*count), what)
            }
            Shape::Fraction { replicas, per_gpu } => {
                if *replicas == 0 {
                    return Err(MeteringError::ZeroCount(what.to_owned()));
                }
                ratio_units(*replicas, *per_gpu).ok_or_else(|| {
                    MeteringError::WeightNotRepresentable {
                        what: what.to_owned(),
                        numerator: *replicas,
                        denominator: *per_gpu,
                    }
                })
            }
        }
    }
}

/// The problems of each record, series and sample that need no other entry to be found:
/// unknown card type, profile or service, a zero count or unrepresentable weight (in input
/// order), then an interval ending before it starts, a grid step that does not divide the
/// window, a lookback ≤ 0 (in input order).
///
/// # Complexity
/// O(n log k) for n entries and k card types or services.
fn entry_problems(ctx: &Ctx<'_>, w: Window) -> Vec<MeteringError> {
    let input = ctx.input;
    let mut out = Vec::new();
    let mut check = |what: &str, card_type: &str, shape: &Shape, service: Option<&str>| {
        match ctx.card(card_type, &format!("{what}.cardType")) {
            Ok(card) => {
                if let Err(e) = ctx.weight(card, shape, what) {
                    out.push(e);
                }
            }
            Err(e) => out.push(e),
        }
        if let Some(s) = service
            && !ctx.services.contains_key(s)
        {
            out.push(MeteringError::UnknownService {
                what: format!("{what}.service"),
                service: s.to_owned(),
            });
        }
    };
    let mut structural = Vec::new();
    for (i, r) in input.records.iter().enumerate() {
        let what = format!("records[{i}]");
        check(&what, &r.card_type, &r.shape, r.service.as_deref());
        if let Some(e) = r.end
            && e < r.start
        {
            structural.push(MeteringError::InvalidInterval {
                what,
                start: r.start,
                end: e,
            });
        }
    }
    for (i, gs) in input.series.iter().enumerate() {
        let what = format!("series[{i}]");
        check(&what, &gs.card_type, &gs.shape, gs.service.as_deref());
        if gs.step <= 0 || w.len() % gs.step != 0 {
            structural.push(MeteringError::StepDoesNotDivideWindow {
                what,
                step: gs.step,
                window: w.len(),
            });
        }
    }
    for (i, sr) in input.samples.iter().enumerate() {
        let what = sr.label.clone().unwrap_or_else(|| format!("samples[{i}]"));
        check(&what, &sr.card_type, &sr.shape, sr.service.as_deref());
        let lookback = sr.lookback.unwrap_or(input.config.lookback);
        if lookback <= 0 {
            structural.push(MeteringError::InvalidLookback { what, lookback });
        }
    }
    for h in &input.holdings {
        check(&h.label, &h.card_type, &h.shape, None);
    }
    // references (card type, profile, service) first, then intervals, steps and lookbacks
    out.extend(structural);
    out
}

/// Meters `input` into a report that reconciles exactly.
///
/// # Errors
/// A typed [`MeteringError`] naming the record and field for any invalid input (unknown card
/// type, profile or service, double booking, a step that does not divide the window, duplicate
/// or decreasing sample times, capacity exceeded under a policy that cannot overbook, overflow).
/// Nothing partial is returned.
///
/// # Complexity
/// O(n log n + E·G) for n records/holds, E distinct change instants per card type and G
/// department groups; grid series cost O(points) (summed on a dense grid first).
///
/// # Panics
/// Never.
pub(crate) fn meter(input: &Input) -> Result<Report, MeteringError> {
    let cfg = &input.config;
    let w = check_config(cfg)?;
    let t_len = i128::from(w.len());

    let mut ctx = Ctx::new(input);
    ctx.register_cards()?;
    ctx.register_departments()?;
    ctx.register_services()?;

    // Every per-entry problem at once (the passes below stop at the first).
    let problems = entry_problems(&ctx, w);
    if problems.len() > 1 {
        return Err(MeteringError::Several(problems));
    }

    let mut c = Collected::new(&mut ctx)?;
    c.intervals(&mut ctx, w)?;
    c.samples(&mut ctx, w)?;
    c.holdings(&mut ctx, w)?;
    c.grids(&mut ctx, w)?;

    check_double_booking(&mut c.held)?;
    check_card_overbooking(&mut c.sub_card, &cfg.mig_policy, &mut ctx.warnings);

    let Ctx {
        group_keys,
        groups,
        mut warnings,
        ..
    } = ctx;
    let acc = sweep(input, &group_keys, &groups, c.pieces, &mut warnings)?;
    build_report(input, &group_keys, acc, c.busy_acc, warnings, t_len)
}

/// The window is not empty and its length fits in `i64` seconds; the lookback is positive.
fn check_config(cfg: &Config) -> Result<Window, MeteringError> {
    let w = cfg.window;
    if !w.is_empty() && w.end.checked_sub(w.start).is_none() {
        // the length does not fit in i64 seconds
        return Err(MeteringError::Overflow("window length".to_owned()));
    }
    if w.is_empty() {
        return Err(MeteringError::InvalidWindow {
            start: w.start,
            end: w.end,
        });
    }
    if cfg.lookback <= 0 {
        return Err(MeteringError::InvalidLookback {
            what: "lookback".to_owned(),
            lookback: cfg.lookback,
        });
    }
    Ok(w)
}

impl<'a> Ctx<'a> {
    fn new(input: &'a Input) -> Ctx<'a> {
        let mut ctx = Ctx {
            input,
            cards: BTreeMap::new(),
            geometry: Vec::new(),
            ns_map: BTreeMap::new(),
            groups: BTreeMap::new(),
            group_keys: Vec::new(),
            implicit_service: BTreeMap::new(),
            services: BTreeMap::new(),
            warnings: input.warnings.clone(),
        };
        let cfg = &input.config;
        if cfg.basis == Basis::Allocated && cfg.borrowed == BorrowedMode::Charged {
            ctx.warnings.push(
                "borrowed: charged applies to basis quota; under basis allocated borrowed hours \
                 are already inside the charged allocated hours"
                    .to_owned(),
            );
        }
        ctx
    }

    /// Card types: unique names, non-negative prices, their MIG geometry.
    fn register_cards(&mut self) -> Result<(), MeteringError> {
        let input = self.input;
        for (i, ct) in input.card_types.iter().enumerate() {
            if self.cards.insert(ct.name.as_str(), i).is_some() {
                return Err(MeteringError::Duplicate {
                    what: "card type".to_owned(),
                    name: ct.name.clone(),
                });
            }
            if ct.price_micro_per_hour < 0 {
                return Err(MeteringError::InvalidNumber {
                    field: format!("cardTypes[{i}].pricePerHour"),
                    value: ct.price_micro_per_hour.to_string(),
                    reason: "a price must not be negative".to_owned(),
                });
            }
            let model = ct.model.as_deref().unwrap_or(&ct.name);
            self.geometry.push(MigGeometry::builtin(model));
        }
        Ok(())
    }

    /// Departments: unique names, each namespace in one department, quota steps that are
    /// non-negative and at distinct times.
    fn register_departments(&mut self) -> Result<(), MeteringError> {
        let input = self.input;
        let mut dept_names = BTreeMap::new();
        for d in &input.departments {
            if dept_names.insert(d.name.as_str(), ()).is_some() {
                return Err(MeteringError::Duplicate {
                    what: "department".to_owned(),
                    name: d.name.clone(),
                });
            }
            for ns in &d.namespaces {
                if let Some(prev) = self.ns_map.insert(ns.as_str(), d.name.as_str()) {
                    return Err(MeteringError::Duplicate {
                        what: format!("namespace (in departments {prev} and {})", d.name),
                        name: ns.clone(),
                    });
                }
            }
            for (card, steps) in &d.quota {
                self.card(card, &format!("departments[{}].quota", d.name))?;
                let mut seen = BTreeMap::new();
                for s in steps {
                    if s.cards_units < 0 {
                        return Err(MeteringError::InvalidNumber {
                            field: format!("departments[{}].quota.{card}", d.name),
                            value: s.cards_units.to_string(),
                            reason: "a quota must not be negative".to_owned(),
                        });
                    }
                    if seen.insert(s.from, ()).is_some() {
                        return Err(MeteringError::DuplicateTimestamp {
                            what: format!("departments[{}].quota.{card}", d.name),
                            at: s.from,
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// Services: explicit tags first, then owners' holdings for untagged services; then a
    /// group for every department with a quota, so that quota hours are reported even
    /// without use.
    fn register_services(&mut self) -> Result<(), MeteringError> {
        let input = self.input;
        for (i, s) in input.services.iter().enumerate() {
            if self.services.insert(s.name.as_str(), i).is_some() {
                return Err(MeteringError::Duplicate {
                    what: "service".to_owned(),
                    name: s.name.clone(),
                });
            }
        }
        let mut tagged = BTreeMap::new();
        for s in input
            .records
            .iter()
            .filter_map(|r| r.service.as_deref())
            .chain(input.series.iter().filter_map(|r| r.service.as_deref()))
            .chain(input.samples.iter().filter_map(|r| r.service.as_deref()))
        {
            tagged.insert(s, ());
        }
        for s in &input.services {
            if !tagged.contains_key(s.name.as_str())
                && let Some(prev) = self
                    .implicit_service
                    .insert(s.department.as_str(), s.name.as_str())
            {
                self.warnings.push(format!(
                    "services {prev} and {} share owner {} and no holding names either; \
                         the owner's holdings go to {}",
                    s.name, s.department, s.name
                ));
            }
        }
        for d in &input.departments {
            if !d.quota.is_empty() {
                self.group_id(GroupKey {
                    department: d.name.clone(),
                    service: None,
                });
            }
        }
        Ok(())
    }
}

/// What the passes over the entries collect: the clipped, weighted pieces the sweep
/// integrates, and what the booking checks and the busy figures need.
struct Collected<'a> {
    pieces: Vec<Piece>,
    /// (holder, start, end, label) for the double-booking check
    held: Vec<(String, i64, i64, String)>,
    /// sub-card holdings (MIG / fraction, and single whole cards with a holder key) per
    /// physical card key, for the overbooking warning (a whole card beside a MIG instance)
    sub_card: Vec<(String, i64, i64, i128)>,
    /// busy/covered per (group, card)
    busy_acc: BTreeMap<(usize, usize), (i128, i128)>,
    /// The `busy` entries by holder.
    busy_by_holder: BTreeMap<&'a str, i128>,
}

/// Whether a holding of this shape is part of a card (for the overbooking check).
fn sub_card_shape(shape: &Shape) -> bool {
    matches!(
        shape,
        Shape::Mig { .. } | Shape::Fraction { .. } | Shape::Whole(1)
    )
}

impl<'a> Collected<'a> {
    /// Checks the `busy` entries (fractions in [0, 1], one per holder, a holder some record
    /// or sample names) and starts the collection.
    fn new(ctx: &mut Ctx<'a>) -> Result<Collected<'a>, MeteringError> {
        let input = ctx.input;
        let mut m = BTreeMap::new();
        let holders: std::collections::BTreeSet<&str> = input
            .records
            .iter()
            .filter_map(|r| r.holder.as_deref())
            .chain(input.samples.iter().filter_map(|r| r.holder.as_deref()))
            .chain(input.holdings.iter().filter_map(|r| r.holder.as_deref()))
            .collect();
        for (i, b) in input.busy.iter().enumerate() {
            if !(0..=1_000_000).contains(&b.micro) {
                return Err(MeteringError::InvalidNumber {
                    field: format!("busy[{i}].fraction"),
                    value: crate::money::format_fixed(b.micro, 6),
                    reason: "a busy fraction lies in [0, 1]".to_owned(),
                });
            }
            if !holders.contains(b.holder.as_str()) {
                ctx.warnings.push(format!(
                    "busy[{i}]: holder {} matches no record or sample; ignored",
                    b.holder
                ));
            }
            if m.insert(b.holder.as_str(), b.micro).is_some() {
                return Err(MeteringError::Duplicate {
                    what: "busy holder".to_owned(),
                    name: b.holder.clone(),
                });
            }
        }
        Ok(Collected {
            pieces: Vec::new(),
            held: Vec::new(),
            sub_card: Vec::new(),
            busy_acc: BTreeMap::new(),
            busy_by_holder: m,
        })
    }

    /// Adds `units` held at busy fraction `f` (micro) to the busy figures of (group, card).
    fn busy(
        &mut self,
        group: usize,
        card: usize,
        units: i128,
        f: i128,
        what: &str,
    ) -> Result<(), MeteringError> {
        let acc = self.busy_acc.entry((group, card)).or_default();
        acc.0 = add(acc.0, mul(units, f, what)?, what)?;
        acc.1 = add(acc.1, units, what)?;
        Ok(())
    }

    /// (a) Intervals.
    fn intervals(&mut self, ctx: &mut Ctx<'_>, w: Window) -> Result<(), MeteringError> {
        let input = ctx.input;
        let cfg = &input.config;
        for (i, r) in input.records.iter().enumerate() {
            let what = format!("records[{i}]");
            let card = ctx.card(&r.card_type, &format!("{what}.cardType"))?;
            let weight = ctx.weight(card, &r.shape, &what)?;
            let group = ctx.group(&r.owner, r.service.as_deref(), &format!("{what}.service"))?;
            let end = match r.end {
                Some(e) => {
                    if e < r.start {
                        return Err(MeteringError::InvalidInterval {
                            what,
                            start: r.start,
                            end: e,
                        });
                    }
                    e
                }
                None => cfg.as_of.map_or(w.end, |a| a.min(w.end)),
            };
            if let Some(h) = &r.holder
                && end > r.start
            {
                self.held.push((h.clone(), r.start, end, what.clone()));
            }
            let Some((s, e)) = w.clip(r.start, end) else {
                continue;
            };
            if let Some(h) = &r.holder {
                if sub_card_shape(&r.shape) {
                    self.sub_card.push((card_key(h), s, e, weight));
                }
                if let Some(f) = self.busy_by_holder.get(h.as_str()).copied() {
                    let units = mul(weight, i128::from(e - s), &what)?;
                    self.busy(group, card, units, f, &what)?;
                }
            }
            self.pieces.push(Piece {
                group,
                card,
                weight,
                start: s,
                end: e,
            });
        }
        Ok(())
    }

    /// (b2) Raw samples.
    fn samples(&mut self, ctx: &mut Ctx<'_>, w: Window) -> Result<(), MeteringError> {
        let input = ctx.input;
        for (i, sr) in input.samples.iter().enumerate() {
            let what = sr.label.clone().unwrap_or_else(|| format!("samples[{i}]"));
            let card = ctx.card(&sr.card_type, &format!("{what}.cardType"))?;
            let weight = ctx.weight(card, &sr.shape, &what)?;
            let group = ctx.group(&sr.owner, sr.service.as_deref(), &format!("{what}.service"))?;
            let lookback = sr.lookback.unwrap_or(input.config.lookback);
            if lookback <= 0 {
                return Err(MeteringError::InvalidLookback { what, lookback });
            }
            let holds = raw_holds(sr, lookback, w, &what)?;
            if let Some(b) = &sr.busy_micro
                && b.len() != sr.points.len()
            {
                return Err(MeteringError::InvalidNumber {
                    field: format!("{what}.busy"),
                    value: b.len().to_string(),
                    reason: "one busy value per point".to_owned(),
                });
            }
            let mut run: Option<(i64, i64, u64)> = None;
            for (idx, s, e, v) in holds {
                if let Some(h) = &sr.holder
                    && v > 0
                {
                    self.held.push((h.clone(), s, e, what.clone()));
                    if sub_card_shape(&sr.shape) {
                        self.sub_card
                            .push((card_key(h), s, e, mul(weight, i128::from(v), &what)?));
                    }
                }
                let units = mul(mul(weight, i128::from(v), &what)?, i128::from(e - s), &what)?;
                let busy = sr
                    .busy_micro
                    .as_ref()
                    .and_then(|b| b.get(idx).copied())
                    .or_else(|| {
                        sr.holder
                            .as_deref()
                            .and_then(|h| self.busy_by_holder.get(h).copied())
                    });
                if let Some(f) = busy
                    && units > 0
                {
                    self.busy(group, card, units, f.clamp(0, 1_000_000), &what)?;
                }
                // merge contiguous holds of equal value into one piece
                run = match run {
                    Some((rs, re, rv)) if re == s && rv == v => Some((rs, e, rv)),
                    Some((rs, re, rv)) => {
                        if rv > 0 {
                            self.pieces.push(Piece {
                                group,
                                card,
                                weight: mul(weight, i128::from(rv), &what)?,
                                start: rs,
                                end: re,
                            });
                        }
                        Some((s, e, v))
                    }
                    None => Some((s, e, v)),
                };
            }
            if let Some((rs, re, rv)) = run
                && rv > 0
            {
                self.pieces.push(Piece {
                    group,
                    card,
                    weight: mul(weight, i128::from(rv), &what)?,
                    start: rs,
                    end: re,
                });
            }
        }
        Ok(())
    }

    /// (b3) Device holdings resolved from DCGM metrics.
    fn holdings(&mut self, ctx: &mut Ctx<'_>, w: Window) -> Result<(), MeteringError> {
        let input = ctx.input;
        for h in &input.holdings {
            let what = &h.label;
            let card = ctx.card(&h.card_type, &format!("{what}.cardType"))?;
            let weight = ctx.weight(card, &h.shape, what)?;
            let group = ctx.group(&h.owner, None, &format!("{what}.service"))?;
            let sub = sub_card_shape(&h.shape);
            let holder_busy = h
                .holder
                .as_deref()
                .and_then(|k| self.busy_by_holder.get(k).copied());
            let mut covered = 0i128;
            let mut prev_end = i64::MIN;
            for &(s0, e0) in &h.intervals {
                if s0 < prev_end || e0 < s0 {
                    return Err(MeteringError::NotIncreasing {
                        what: what.clone(),
                        at: s0,
                    });
                }
                prev_end = e0;
                let Some((s, e)) = w.clip(s0, e0) else {
                    continue;
                };
                if let Some(k) = &h.holder {
                    self.held.push((k.clone(), s, e, what.clone()));
                    if sub {
                        self.sub_card.push((card_key(k), s, e, weight));
                    }
                }
                let units = mul(weight, i128::from(e - s), what)?;
                covered = add(covered, units, what)?;
                if h.busy_micro_seconds.is_none()
                    && let Some(f) = holder_busy
                {
                    self.busy(group, card, units, f.clamp(0, 1_000_000), what)?;
                }
                self.pieces.push(Piece {
                    group,
                    card,
                    weight,
                    start: s,
                    end: e,
                });
            }
            if let Some(b) = h.busy_micro_seconds
                && covered > 0
            {
                let acc = self.busy_acc.entry((group, card)).or_default();
                acc.0 = add(acc.0, mul(weight, b, what)?, what)?;
                acc.1 = add(acc.1, covered, what)?;
            }
        }
        Ok(())
    }

    /// (b1) Grids: summed on dense arrays per (group, card, start, step), then run-length
    /// encoded into pieces.
    fn grids(&mut self, ctx: &mut Ctx<'_>, w: Window) -> Result<(), MeteringError> {
        let input = ctx.input;
        let mut dense: BTreeMap<(usize, usize, i64, i64), Vec<i128>> = BTreeMap::new();
        for (i, gs) in input.series.iter().enumerate() {
            let what = format!("series[{i}]");
            let card = ctx.card(&gs.card_type, &format!("{what}.cardType"))?;
            let weight = ctx.weight(card, &gs.shape, &what)?;
            let group = ctx.group(&gs.owner, gs.service.as_deref(), &format!("{what}.service"))?;
            if gs.step <= 0 || w.len() % gs.step != 0 {
                return Err(MeteringError::StepDoesNotDivideWindow {
                    what,
                    step: gs.step,
                    window: w.len(),
                });
            }
            let lookback = gs.lookback.unwrap_or(input.config.lookback);
            if gs.step > lookback {
                ctx.warnings.push(format!(
                    "{what}: step {}s exceeds the lookback {lookback}s; holdings shorter than the \
                     step between evaluation instants are missed (meter from intervals or a subquery)",
                    gs.step
                ));
            }
            let start = gs.start.unwrap_or(w.start);
            let arr = dense.entry((group, card, start, gs.step)).or_default();
            if arr.len() < gs.values.len() {
                arr.resize(gs.values.len(), 0);
            }
            for (slot, v) in arr.iter_mut().zip(&gs.values) {
                if let Some(v) = v {
                    *slot = slot
                        .checked_add(mul(weight, i128::from(*v), &what)?)
                        .ok_or_else(|| ovf(&what))?;
                }
            }
        }
        for ((group, card, start, step), arr) in &dense {
            self.grid_pieces(*group, *card, *start, *step, arr, w)?;
        }
        Ok(())
    }

    /// One summed grid, run-length encoded into pieces.
    fn grid_pieces(
        &mut self,
        group: usize,
        card: usize,
        start: i64,
        step: i64,
        arr: &[i128],
        w: Window,
    ) -> Result<(), MeteringError> {
        let mut run: Option<(i64, i64, i128)> = None;
        for (k, v) in arr.iter().enumerate() {
            let k = i64::try_from(k).map_err(|_| ovf("series index"))?;
            let t0 = step
                .checked_mul(k)
                .and_then(|x| x.checked_add(start))
                .ok_or_else(|| ovf("series time"))?;
            let t1 = t0.checked_add(step).ok_or_else(|| ovf("series time"))?;
            let Some((s, e)) = w.clip(t0, t1) else {
                continue;
            };
            run = match run {
                Some((rs, re, rv)) if re == s && rv == *v => Some((rs, e, rv)),
                Some((rs, re, rv)) => {
                    if rv != 0 {
                        self.pieces.push(Piece {
                            group,
                            card,
                            weight: rv,
                            start: rs,
                            end: re,
                        });
                    }
                    Some((s, e, *v))
                }
                None => Some((s, e, *v)),
            };
        }
        if let Some((rs, re, rv)) = run
            && rv != 0
        {
            self.pieces.push(Piece {
                group,
                card,
                weight: rv,
                start: rs,
                end: re,
            });
        }
        Ok(())
    }
}
