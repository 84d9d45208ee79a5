//! The report and its renderings: the JSON contract of `gpuquota meter`, CSV and a table.
//!
//! The JSON is [`ReportOut`] (fields in declaration order, numbers as exact decimal strings;
//! in Rust they are the exact integers of [`crate::figure`]: [`GpuHours`], [`Money`],
//! [`BasisPoints`], whose `Display` is the JSON's string);
//! `gpuquota schema meter` prints its JSON Schema, generated from these types (feature
//! `schema`). [`Report::table`] renders the table on the workspace's one table layout.

use gpuquota_model::text::{Table, Width};

use crate::engine::{TimeFormat, Window};
use crate::figure::{BasisPoints, GpuHours, Money};
use crate::money::{Currency, RoundingMode, format_fixed, micro_hours};

/// One reported line: a department's use of one card type (or its share of a service).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// The department (`unassigned`, `unattributed` included).
    pub department: String,
    /// The card type name.
    pub card_type: String,
    /// The shared service this line is a token share of.
    pub service: Option<String>,
    /// Index of the card type in the input.
    pub card_index: usize,
    /// Allocated `1/L` card-seconds.
    pub allocated_units: i128,
    /// In-quota units `∫ min(a, Q)`.
    pub own_units: i128,
    /// Borrowed units `∫ max(0, a − Q)`.
    pub borrowed_units: i128,
    /// Quota units `∫ Q`.
    pub quota_units: i128,
    /// Lender credit units (basis quota, borrowed charged).
    pub lent_units: i128,
    /// The units the basis bills.
    pub charged_units: i128,
    /// `chargedHours` at list price, rounded once, in minor units.
    pub cost_minor: i128,
    /// Recovered idle cost in minor units.
    pub idle_share_minor: i128,
    /// `cost + idleShare`.
    pub total_minor: i128,
    /// The exact cost as a numerator over `L · 3600` in micro-units.
    pub exact_cost_num: i128,
    /// Utilisation in units of 10⁻⁴ (basis points of one), or `None`.
    pub utilization_bp: Option<i128>,
}

/// Idle (or, under the quota basis, unbooked) capacity of one card type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdleLine {
    /// The card type name.
    pub card_type: String,
    /// `capacity · T − Σ charged` in `1/L` card-seconds.
    pub units: i128,
    /// Its cost at list price, rounded once, in minor units.
    pub cost_minor: i128,
    /// Whether the cost was recovered from the departments' lines.
    pub recovered: bool,
}

/// The report's totals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Totals {
    /// Σ line totals + unrecovered idle costs, in minor units.
    pub cost_minor: i128,
    /// The exact total in micro-units (rounded half-even to six decimals).
    pub exact_cost_micro: i128,
    /// `cost − exact`, in minor units (half-even).
    pub drift_minor: i128,
    /// The exact total as a numerator over `L · 3600` micro-units.
    pub exact_cost_num: i128,
}

/// A metering report. Every amount is exact; `Σ lines + idle = totals.cost`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Report {
    /// The metered window.
    pub window: Window,
    /// How times are printed.
    pub time_format: TimeFormat,
    /// The currency.
    pub currency: Currency,
    /// The rounding mode of money.
    pub rounding: RoundingMode,
    /// Lines sorted by department, card type, then service (none first).
    pub lines: Vec<Line>,
    /// Idle per card type with a capacity, sorted by card type name.
    pub idle: Vec<IdleLine>,
    /// Totals.
    pub totals: Totals,
    /// Warnings (overbooking, step above lookback, coverage, …).
    pub warnings: Vec<String>,
}

/// A time as the report prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(untagged))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum TimeOut {
    /// RFC 3339.
    Text(String),
    /// Integer seconds.
    Seconds(i64),
}

/// The window as printed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WindowOut {
    /// Start.
    pub start: TimeOut,
    /// End.
    pub end: TimeOut,
}

/// A line as printed (the JSON contract of `gpuquota meter`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LineOut {
    /// Department.
    pub department: String,
    /// Card type.
    pub card_type: String,
    /// Service (only on token-split lines).
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub service: Option<String>,
    /// Allocated hours, six decimals.
    pub allocated_hours: GpuHours,
    /// In-quota hours.
    pub own_hours: GpuHours,
    /// Borrowed hours.
    pub borrowed_hours: GpuHours,
    /// Quota hours.
    pub quota_hours: GpuHours,
    /// The hours the basis bills.
    pub charged_hours: GpuHours,
    /// `chargedHours` at list price.
    pub cost: Money,
    /// Recovered idle cost.
    pub idle_share: Money,
    /// `cost + idleShare`.
    pub total: Money,
    /// Mean busy fraction, four decimals, or null.
    pub utilization: Option<BasisPoints>,
}

/// An idle entry as printed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct IdleOut {
    /// Card type.
    pub card_type: String,
    /// Idle hours.
    pub hours: GpuHours,
    /// Their cost at list price.
    pub cost: Money,
}

/// Totals as printed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TotalsOut {
    /// Σ of the rounded lines.
    pub cost: Money,
    /// The exact total, six decimals.
    pub exact_cost: Money,
    /// `cost − exactCost` in the currency's digits.
    pub drift: Money,
}

/// The whole report as printed by `gpuquota meter --output json`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ReportOut {
    /// The window.
    pub window: WindowOut,
    /// ISO 4217 code.
    pub currency: String,
    /// Lines.
    pub lines: Vec<LineOut>,
    /// Idle per card type.
    pub idle: Vec<IdleOut>,
    /// Totals.
    pub totals: TotalsOut,
    /// Warnings.
    pub warnings: Vec<String>,
}

pub use crate::time::format_rfc3339;

impl Report {
    fn time(&self, t: i64) -> TimeOut {
        match self.time_format {
            TimeFormat::Rfc3339 => TimeOut::Text(format_rfc3339(t)),
            TimeFormat::Seconds => TimeOut::Seconds(t),
        }
    }

    /// The printable form (decimal strings), as the JSON contract defines it.
    pub fn to_output(&self) -> ReportOut {
        let money = |m: i128| Money::new(m, self.currency.minor_digits);
        ReportOut {
            window: WindowOut {
                start: self.time(self.window.start),
                end: self.time(self.window.end),
            },
            currency: self.currency.code.clone(),
            lines: self
                .lines
                .iter()
                .map(|l| LineOut {
                    department: l.department.clone(),
                    card_type: l.card_type.clone(),
                    service: l.service.clone(),
                    allocated_hours: GpuHours::from_card_second_units(l.allocated_units),
                    own_hours: GpuHours::from_card_second_units(l.own_units),
                    borrowed_hours: GpuHours::from_card_second_units(l.borrowed_units),
                    quota_hours: GpuHours::from_card_second_units(l.quota_units),
                    charged_hours: GpuHours::from_card_second_units(l.charged_units),
                    cost: money(l.cost_minor),
                    idle_share: money(l.idle_share_minor),
                    total: money(l.total_minor),
                    utilization: l.utilization_bp.map(BasisPoints::new),
                })
                .collect(),
            idle: self
                .idle
                .iter()
                .map(|i| IdleOut {
                    card_type: i.card_type.clone(),
                    hours: GpuHours::from_card_second_units(i.units),
                    cost: money(i.cost_minor),
                })
                .collect(),
            totals: TotalsOut {
                cost: money(self.totals.cost_minor),
                exact_cost: Money::new(self.totals.exact_cost_micro, 6),
                drift: money(self.totals.drift_minor),
            },
            warnings: self.warnings.clone(),
        }
    }

    /// Pretty JSON with a trailing newline (the `--output json` contract).
    #[cfg(feature = "serde")]
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(&self.to_output()).unwrap_or_default();
        s.push('\n');
        s
    }

    /// CSV: one row per line, then one `__idle__` row per card type, and nothing else.
    ///
    /// Every row is a share of the bill, so each column sums to the report's figure: the
    /// `total` column sums to `totals.cost` exactly (lines plus unrecovered idle), the
    /// `allocatedHours` column (which holds the idle rows' hours) to capacity × window. There
    /// is no totals row: a spreadsheet or `pandas` summing a column would count it twice.
    /// The exact total and the rounding drift are in the JSON (`totals`) and the table.
    pub fn to_csv(&self) -> String {
        let out = self.to_output();
        let mut s = String::from(
            "department,cardType,service,allocatedHours,ownHours,borrowedHours,quotaHours,\
             chargedHours,cost,idleShare,total,utilization\n",
        );
        for l in &out.lines {
            s.push_str(&format!(
                "{},{},{},{},{},{},{},{},{},{},{},{}\n",
                csv_field(&l.department),
                csv_field(&l.card_type),
                csv_field(l.service.as_deref().unwrap_or("")),
                l.allocated_hours,
                l.own_hours,
                l.borrowed_hours,
                l.quota_hours,
                l.charged_hours,
                l.cost,
                l.idle_share,
                l.total,
                l.utilization.map(|u| u.to_string()).unwrap_or_default()
            ));
        }
        for (i, raw) in out.idle.iter().zip(&self.idle) {
            let total = if raw.recovered {
                Money::new(0, self.currency.minor_digits)
            } else {
                i.cost
            };
            s.push_str(&format!(
                "__idle__,{},,{},,,,,{},,{},\n",
                csv_field(&i.card_type),
                i.hours,
                i.cost,
                total
            ));
        }
        s
    }

    /// [`Report::table`] at full width.
    pub fn to_table(&self) -> String {
        self.table(Width::Full)
    }

    /// The table (hours with one decimal, money in full), on the workspace's one table layout
    /// ([`gpuquota_model::text`]: nothing is cut, [`Width::Fit`] wraps).
    ///
    /// Rendered from the exact report, never from formatted text: an hours cell is the
    /// JSON's six-decimal hours rounded half-even to one decimal (so the table and the JSON
    /// agree digit for digit), a utilisation cell its basis points rounded half-even to a
    /// tenth of a percent (6719 bp → `67.2%`).
    ///
    /// # Complexity
    /// O(lines + idle entries).
    pub fn table(&self, width: Width) -> String {
        let money = |m: i128| self.currency.format_minor(m);
        let short = |units: i128| -> String {
            format_fixed(
                crate::money::div_round(micro_hours(units), 100_000, RoundingMode::HalfEven)
                    .unwrap_or(0),
                1,
            )
        };
        let mut t = Table::new([
            "department",
            "card type",
            "alloc h",
            "borrow h",
            "charged h",
            "total",
            "util",
        ])
        .right(2..7);
        for l in &self.lines {
            let name = match &l.service {
                Some(svc) => format!("{} ({svc})", l.department),
                None => l.department.clone(),
            };
            t.row([
                name,
                l.card_type.clone(),
                short(l.allocated_units),
                short(l.borrowed_units),
                short(l.charged_units),
                money(l.total_minor),
                l.utilization_bp
                    .map(|bp| {
                        let tenths =
                            crate::money::div_round(bp, 10, RoundingMode::HalfEven).unwrap_or(0);
                        format!("{}%", format_fixed(tenths, 1))
                    })
                    .unwrap_or_else(|| "-".to_owned()),
            ]);
        }
        for i in &self.idle {
            let total = if i.recovered {
                "(recovered)".to_owned()
            } else {
                money(i.cost_minor)
            };
            t.row([
                "__idle__".to_owned(),
                i.card_type.clone(),
                short(i.units),
                String::new(),
                String::new(),
                total,
                String::new(),
            ]);
        }
        t.row([
            "total".to_owned(),
            self.currency.code.clone(),
            String::new(),
            String::new(),
            String::new(),
            money(self.totals.cost_minor),
        ]);
        let mut s = t.render(width);
        s.push_str(&format!(
            "exact {} {}, drift {}, rounding {}\n",
            format_fixed(self.totals.exact_cost_micro, 6),
            self.currency.code,
            money(self.totals.drift_minor),
            self.rounding
        ));
        for w in &self.warnings {
            s.push_str(&format!("warning: {w}\n"));
        }
        s
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}
