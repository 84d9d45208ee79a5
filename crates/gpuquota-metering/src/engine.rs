//! The metering engine: inputs, the sweep over time, and the report.

use std::collections::BTreeMap;

use crate::MeteringError;
use crate::mig::{MigGeometry, MigPolicy, mig_weight, ratio_units};
use crate::money::{Currency, L, RoundingMode, UNITS_PER_CARD_HOUR, apportion, div_round};
use crate::report::{IdleLine, Line, Report, Totals};

/// The department name of holdings whose namespace maps to no department.
pub const UNASSIGNED: &str = "unassigned";
/// The department name of service tokens that carry no department.
pub const UNATTRIBUTED: &str = "unattributed";

/// How times in the report are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimeFormat {
    /// RFC 3339 in UTC (`2025-04-01T00:00:00Z`).
    #[default]
    Rfc3339,
    /// Integer seconds (scenario-relative times).
    Seconds,
}

/// The metering window `[start, end)` in integer seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Window {
    /// First second inside the window.
    pub start: i64,
    /// First second after the window.
    pub end: i64,
}

impl Window {
    /// The window's length `T` in seconds.
    pub fn len(&self) -> i64 {
        self.end.saturating_sub(self.start)
    }

    /// Whether the window is empty.
    pub fn is_empty(&self) -> bool {
        self.end <= self.start
    }

    /// `[a, b)` clipped to the window, or `None` when nothing remains.
    pub fn clip(&self, a: i64, b: i64) -> Option<(i64, i64)> {
        let s = a.max(self.start);
        let e = b.min(self.end);
        (e > s).then_some((s, e))
    }
}

/// The hours a department is charged for (§4.d).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Basis {
    /// Basis A: allocated hours.
    #[default]
    Allocated,
    /// Basis B: quota booked, borrowed hours listed beside it.
    Quota,
}

/// What happens to borrowed hours under [`Basis::Quota`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BorrowedMode {
    /// Shown, priced at zero (the default).
    #[default]
    Informational,
    /// Charged at list price, with credits to the lenders so that the total is unchanged.
    Charged,
}

/// Where the idle cost of a card type goes (§4.e).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IdleMode {
    /// Kept on the platform's idle line (showback, list price).
    #[default]
    Platform,
    /// Recovered from the departments in proportion to their cost of that card type.
    Weighted,
    /// Recovered evenly from the departments with a non-zero charge on that card type.
    Even,
}

/// Report-wide settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// The window `[start, end)`.
    pub window: Window,
    /// How times are printed in the report.
    pub time_format: TimeFormat,
    /// Open intervals are closed at `min(end of window, as_of)`.
    pub as_of: Option<i64>,
    /// The currency of prices and amounts.
    pub currency: Currency,
    /// Rounding of money, once per reported line.
    pub rounding: RoundingMode,
    /// MIG weight policy.
    pub mig_policy: MigPolicy,
    /// Charged-hours basis.
    pub basis: Basis,
    /// Borrowed hours under the quota basis.
    pub borrowed: BorrowedMode,
    /// Idle cost handling.
    pub idle: IdleMode,
    /// Default lookback of raw samples and grid series, in seconds (Prometheus: 300).
    pub lookback: i64,
}

impl Config {
    /// A configuration with the defaults of §7 for `window` and `currency`.
    pub fn new(window: Window, currency: Currency) -> Config {
        Config {
            window,
            time_format: TimeFormat::Rfc3339,
            as_of: None,
            currency,
            rounding: RoundingMode::HalfEven,
            mig_policy: MigPolicy::ComputeSlices,
            basis: Basis::Allocated,
            borrowed: BorrowedMode::Informational,
            idle: IdleMode::Platform,
            lookback: 300,
        }
    }
}

/// A card type: a price, a capacity and (when MIG-capable) a geometry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardType {
    /// The key used by records (`H200`).
    pub name: String,
    /// The product name (`NVIDIA H200 NVL`), used for the MIG geometry and DCGM `modelName`.
    pub model: Option<String>,
    /// List price per card-hour in micro-units of the currency.
    pub price_micro_per_hour: i128,
    /// Physical cards of this type on the platform; `None` means no idle line.
    pub capacity: Option<u64>,
    /// Advertised time-slicing replicas per card (for DCGM `vgpu` series).
    pub replicas_per_gpu: Option<u64>,
}

impl CardType {
    /// A card type without model, capacity or replicas.
    pub fn new(name: &str, price_micro_per_hour: i128) -> CardType {
        CardType {
            name: name.to_owned(),
            model: None,
            price_micro_per_hour,
            capacity: None,
            replicas_per_gpu: None,
        }
    }
}

/// From `from` on (until the next step) the quota is `cards_units` (in `1/L` cards).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct QuotaStep {
    /// The first second this quota applies.
    pub from: i64,
    /// The quota in `1/L` cards.
    pub cards_units: i128,
}

/// A department: its namespaces and its quota per card type.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Department {
    /// The department's name.
    pub name: String,
    /// Namespaces whose holdings belong to it.
    pub namespaces: Vec<String>,
    /// Quota per card type name, piecewise constant (a single step at `i64::MIN` is constant).
    pub quota: BTreeMap<String, Vec<QuotaStep>>,
}

/// Who holds something: a department directly or a namespace mapped to one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Owner {
    /// A department by name.
    Department(String),
    /// A namespace, mapped through [`Department::namespaces`] or to `unassigned`.
    Namespace(String),
}

/// What is held.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Shape {
    /// `n` whole cards.
    Whole(u64),
    /// `count` MIG instances of `profile`.
    Mig {
        /// The profile name (`1g.18gb`).
        profile: String,
        /// How many instances.
        count: u64,
    },
    /// Time-slicing replicas: `replicas / per_gpu` cards.
    Fraction {
        /// Replicas held.
        replicas: u64,
        /// Replicas advertised per physical card.
        per_gpu: u64,
    },
}

/// An allocation interval (§4.a).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Who holds it.
    pub owner: Owner,
    /// The card type name.
    pub card_type: String,
    /// What is held.
    pub shape: Shape,
    /// Start (inclusive), seconds.
    pub start: i64,
    /// End (exclusive); `None` means still running.
    pub end: Option<i64>,
    /// The device key (`node/GPU-uuid`, `node/GPU-uuid/gi`) for the double-booking check.
    pub holder: Option<String>,
    /// The shared service this holding serves.
    pub service: Option<String>,
}

/// An evaluated grid (§4.b1): `values[k]` holdings of `shape` at `start + k·step`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GridSeries {
    /// Who holds it.
    pub owner: Owner,
    /// The card type name.
    pub card_type: String,
    /// The shape of one counted holding (`Whole(1)`, `Mig{p, 1}`).
    pub shape: Shape,
    /// The first point; `None` means the window start.
    pub start: Option<i64>,
    /// The step `s` in seconds; must divide the window length.
    pub step: i64,
    /// Values, `None` for a gap.
    pub values: Vec<Option<u64>>,
    /// The lookback the grid was evaluated with (warn when `step` exceeds it).
    pub lookback: Option<i64>,
    /// The shared service this series serves.
    pub service: Option<String>,
}

/// Raw scrapes of one series (§4.b2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawSeries {
    /// Who holds it.
    pub owner: Owner,
    /// The card type name.
    pub card_type: String,
    /// The shape of one counted holding.
    pub shape: Shape,
    /// Lookback `δ`; `None` means the configured default.
    pub lookback: Option<i64>,
    /// `(t, value)`, strictly increasing in `t`.
    pub points: Vec<(i64, u64)>,
    /// Staleness markers.
    pub stale_at: Vec<i64>,
    /// The device key, for the double-booking check and busy matching.
    pub holder: Option<String>,
    /// The shared service this series serves.
    pub service: Option<String>,
    /// Busy fraction in millionths at each point (same length as `points` when present).
    pub busy_micro: Option<Vec<i128>>,
    /// How the series is named in errors and warnings.
    pub label: Option<String>,
}

/// Gateway token totals of one department for a shared service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tokens {
    /// Input (prompt) tokens.
    pub input: u64,
    /// Output (decode) tokens.
    pub output: u64,
}

/// A shared inference service split by tokens (§4.f).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Service {
    /// The service's name.
    pub name: String,
    /// The owning department; its holdings are the service's unless holdings name the service.
    pub department: String,
    /// Weight of input tokens (α).
    pub input_weight: u64,
    /// Weight of output tokens (β).
    pub output_weight: u64,
    /// Tokens per department (`unattributed` for tokens with no department).
    pub tokens: BTreeMap<String, Tokens>,
}

/// A mean busy fraction for one holder over its holdings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BusyFraction {
    /// The holder key.
    pub holder: String,
    /// The fraction in millionths (`0.60` → `600000`).
    pub micro: i128,
}

/// Everything the engine meters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    /// Report-wide settings.
    pub config: Config,
    /// Card types.
    pub card_types: Vec<CardType>,
    /// Departments.
    pub departments: Vec<Department>,
    /// Allocation intervals.
    pub records: Vec<Record>,
    /// Evaluated grids.
    pub series: Vec<GridSeries>,
    /// Raw scrapes.
    pub samples: Vec<RawSeries>,
    /// Shared services.
    pub services: Vec<Service>,
    /// Busy fractions per holder.
    pub busy: Vec<BusyFraction>,
    /// Warnings from building the input (e.g. the DCGM parser), copied into the report.
    pub warnings: Vec<String>,
}

impl Input {
    /// An input with `config` and nothing else.
    pub fn new(config: Config) -> Input {
        Input {
            config,
            card_types: Vec::new(),
            departments: Vec::new(),
            records: Vec::new(),
            series: Vec::new(),
            samples: Vec::new(),
            services: Vec::new(),
            busy: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

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

fn ovf(what: &str) -> MeteringError {
    MeteringError::Overflow(what.to_owned())
}

fn mul(a: i128, b: i128, what: &str) -> Result<i128, MeteringError> {
    a.checked_mul(b).ok_or_else(|| ovf(what))
}

fn add(a: i128, b: i128, what: &str) -> Result<i128, MeteringError> {
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
pub fn meter(input: &Input) -> Result<Report, MeteringError> {
    let cfg = &input.config;
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
    let t_len = i128::from(w.len());

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
    if cfg.basis == Basis::Allocated && cfg.borrowed == BorrowedMode::Charged {
        ctx.warnings.push(
            "borrowed: charged applies to basis quota; under basis allocated borrowed hours \
             are already inside the charged allocated hours"
                .to_owned(),
        );
    }
    for (i, ct) in input.card_types.iter().enumerate() {
        if ctx.cards.insert(ct.name.as_str(), i).is_some() {
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
        ctx.geometry.push(MigGeometry::builtin(model));
    }
    let mut dept_names = BTreeMap::new();
    for d in &input.departments {
        if dept_names.insert(d.name.as_str(), ()).is_some() {
            return Err(MeteringError::Duplicate {
                what: "department".to_owned(),
                name: d.name.clone(),
            });
        }
        for ns in &d.namespaces {
            if let Some(prev) = ctx.ns_map.insert(ns.as_str(), d.name.as_str()) {
                return Err(MeteringError::Duplicate {
                    what: format!("namespace (in departments {prev} and {})", d.name),
                    name: ns.clone(),
                });
            }
        }
        for (card, steps) in &d.quota {
            ctx.card(card, &format!("departments[{}].quota", d.name))?;
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
    // Services: explicit tags first, then owners' holdings for untagged services.
    for (i, s) in input.services.iter().enumerate() {
        if ctx.services.insert(s.name.as_str(), i).is_some() {
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
            && let Some(prev) = ctx
                .implicit_service
                .insert(s.department.as_str(), s.name.as_str())
        {
            ctx.warnings.push(format!(
                "services {prev} and {} share owner {} and no holding names either; \
                     the owner's holdings go to {}",
                s.name, s.department, s.name
            ));
        }
    }
    // Department groups exist for every department with a quota, so that quota hours are
    // reported even without use.
    for d in &input.departments {
        if !d.quota.is_empty() {
            ctx.group_id(GroupKey {
                department: d.name.clone(),
                service: None,
            });
        }
    }

    // Every per-entry problem at once (the passes below stop at the first).
    let problems = entry_problems(&ctx, w);
    if problems.len() > 1 {
        return Err(MeteringError::Several(problems));
    }

    let mut pieces: Vec<Piece> = Vec::new();
    // (holder, start, end, label) for the double-booking check
    let mut held: Vec<(String, i64, i64, String)> = Vec::new();
    // sub-card holdings (MIG / fraction, and single whole cards with a holder key) per physical
    // card key, for the overbooking warning (a whole card beside a MIG instance of it)
    let mut sub_card: Vec<(String, i64, i64, i128)> = Vec::new();
    // busy/covered per (group, card)
    let mut busy_acc: BTreeMap<(usize, usize), (i128, i128)> = BTreeMap::new();
    let busy_by_holder: BTreeMap<&str, i128> = {
        let mut m = BTreeMap::new();
        let holders: std::collections::BTreeSet<&str> = input
            .records
            .iter()
            .filter_map(|r| r.holder.as_deref())
            .chain(input.samples.iter().filter_map(|r| r.holder.as_deref()))
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
        m
    };

    // (a) intervals
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
            held.push((h.clone(), r.start, end, what.clone()));
        }
        let Some((s, e)) = w.clip(r.start, end) else {
            continue;
        };
        if let Some(h) = &r.holder {
            if matches!(
                r.shape,
                Shape::Mig { .. } | Shape::Fraction { .. } | Shape::Whole(1)
            ) {
                sub_card.push((card_key(h), s, e, weight));
            }
            if let Some(f) = busy_by_holder.get(h.as_str()) {
                let units = mul(weight, i128::from(e - s), &what)?;
                let acc = busy_acc.entry((group, card)).or_default();
                acc.0 = add(acc.0, mul(units, *f, &what)?, &what)?;
                acc.1 = add(acc.1, units, &what)?;
            }
        }
        pieces.push(Piece {
            group,
            card,
            weight,
            start: s,
            end: e,
        });
    }

    // (b2) raw samples
    for (i, sr) in input.samples.iter().enumerate() {
        let what = sr.label.clone().unwrap_or_else(|| format!("samples[{i}]"));
        let card = ctx.card(&sr.card_type, &format!("{what}.cardType"))?;
        let weight = ctx.weight(card, &sr.shape, &what)?;
        let group = ctx.group(&sr.owner, sr.service.as_deref(), &format!("{what}.service"))?;
        let lookback = sr.lookback.unwrap_or(cfg.lookback);
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
                held.push((h.clone(), s, e, what.clone()));
                if matches!(
                    sr.shape,
                    Shape::Mig { .. } | Shape::Fraction { .. } | Shape::Whole(1)
                ) {
                    sub_card.push((card_key(h), s, e, mul(weight, i128::from(v), &what)?));
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
                        .and_then(|h| busy_by_holder.get(h).copied())
                });
            if let Some(f) = busy
                && units > 0
            {
                let acc = busy_acc.entry((group, card)).or_default();
                acc.0 = add(acc.0, mul(units, f.clamp(0, 1_000_000), &what)?, &what)?;
                acc.1 = add(acc.1, units, &what)?;
            }
            // merge contiguous holds of equal value into one piece
            run = match run {
                Some((rs, re, rv)) if re == s && rv == v => Some((rs, e, rv)),
                Some((rs, re, rv)) => {
                    if rv > 0 {
                        pieces.push(Piece {
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
            pieces.push(Piece {
                group,
                card,
                weight: mul(weight, i128::from(rv), &what)?,
                start: rs,
                end: re,
            });
        }
    }

    // (b1) grids: summed on dense arrays per (group, card, start, step), then run-length
    // encoded into pieces.
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
        let lookback = gs.lookback.unwrap_or(cfg.lookback);
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
        let mut run: Option<(i64, i64, i128)> = None;
        for (k, v) in arr.iter().enumerate() {
            let k = i64::try_from(k).map_err(|_| ovf("series index"))?;
            let t0 = step
                .checked_mul(k)
                .and_then(|x| x.checked_add(*start))
                .ok_or_else(|| ovf("series time"))?;
            let t1 = t0.checked_add(*step).ok_or_else(|| ovf("series time"))?;
            let Some((s, e)) = w.clip(t0, t1) else {
                continue;
            };
            run = match run {
                Some((rs, re, rv)) if re == s && rv == *v => Some((rs, e, rv)),
                Some((rs, re, rv)) => {
                    if rv != 0 {
                        pieces.push(Piece {
                            group: *group,
                            card: *card,
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
            pieces.push(Piece {
                group: *group,
                card: *card,
                weight: rv,
                start: rs,
                end: re,
            });
        }
    }

    check_double_booking(&mut held)?;
    check_card_overbooking(&mut sub_card, &cfg.mig_policy, &mut ctx.warnings);

    let Ctx {
        group_keys,
        groups,
        mut warnings,
        ..
    } = ctx;
    let acc = sweep(input, &group_keys, &groups, pieces, &mut warnings)?;
    build_report(input, &group_keys, acc, busy_acc, warnings, t_len)
}

/// The physical card of a holder key: its first two `/`-separated parts (`node/GPU-uuid`).
fn card_key(holder: &str) -> String {
    let mut parts = holder.splitn(3, '/');
    match (parts.next(), parts.next()) {
        (Some(a), Some(b)) => format!("{a}/{b}"),
        _ => holder.to_owned(),
    }
}

/// The holds of a raw series: `(point index, start, end, value)` clipped to the window.
fn raw_holds(
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

fn check_double_booking(held: &mut [(String, i64, i64, String)]) -> Result<(), MeteringError> {
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

fn check_card_overbooking(
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

fn sweep(
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
        let mut steps: Vec<(usize, Vec<QuotaStep>)> = Vec::new();
        let mut times: Vec<i64> = Vec::new();
        for g in &dept_groups {
            let quota = by_name
                .get(group_keys[*g].department.as_str())
                .and_then(|d| d.quota.get(&ct.name));
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

fn build_report(
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
    let mut lines: BTreeMap<(String, String, Option<String>), (usize, Acc)> = BTreeMap::new();
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
                            .entry((d, card_name.clone(), Some(sname.clone())))
                            .or_insert((c, Acc::default()));
                        entry.1.allocated = add(entry.1.allocated, units, &what)?;
                        entry.1.busy_micro = busy_micro;
                        entry.1.covered = covered;
                    }
                }
            }
        }
    }

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

    // charged units and cost per line
    let mut out_lines = Vec::with_capacity(lines.len());
    let mut charged_per_card = vec![0i128; input.card_types.len()];
    let mut exact_num: i128 = 0;
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
        exact_num = add(exact_num, num, "total")?;
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

    // A service's cost is a fixed total: rounded once for the service, then split over its
    // token lines by largest remainder, so that the shares add up to it exactly.
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

    // idle per card type, and its recovery
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
        exact_num = add(exact_num, num, "total")?;
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
