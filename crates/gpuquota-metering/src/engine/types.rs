//! The engine's input types: window, settings, card types, departments and the holdings
//! (intervals, grids, raw samples, resolved device holdings).

use std::collections::BTreeMap;

use crate::mig::MigPolicy;
use crate::money::{Currency, RoundingMode};

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
    pub(crate) fn clip(&self, a: i64, b: i64) -> Option<(i64, i64)> {
        let s = a.max(self.start);
        let e = b.min(self.end);
        (e > s).then_some((s, e))
    }
}

/// The hours a department is charged for.
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

/// Where the idle cost of a card type goes.
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
///
/// Build them with [`Config::new`] (the window and currency have no default; every other
/// field starts at its default) and the `with_*` methods, or set the public fields: fields
/// may be added in later versions.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
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
    /// Time-slicing and MPS replicas per GPU by node, from the device plugin's sharing
    /// configuration (`cluster:` files); used where a holding and its card type name no
    /// `replicasPerGpu`.
    pub sharing: gpuquota_model::workloads::sharing::ReplicasPerGpu,
}

impl Config {
    /// A configuration with the defaults for `window` and `currency`.
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
            sharing: gpuquota_model::workloads::sharing::ReplicasPerGpu::default(),
        }
    }

    /// Sets [`Config::time_format`].
    pub fn with_time_format(mut self, time_format: TimeFormat) -> Config {
        self.time_format = time_format;
        self
    }

    /// Sets [`Config::as_of`].
    pub fn with_as_of(mut self, as_of: Option<i64>) -> Config {
        self.as_of = as_of;
        self
    }

    /// Sets [`Config::rounding`].
    pub fn with_rounding(mut self, rounding: RoundingMode) -> Config {
        self.rounding = rounding;
        self
    }

    /// Sets [`Config::mig_policy`].
    pub fn with_mig_policy(mut self, mig_policy: MigPolicy) -> Config {
        self.mig_policy = mig_policy;
        self
    }

    /// Sets [`Config::basis`].
    pub fn with_basis(mut self, basis: Basis) -> Config {
        self.basis = basis;
        self
    }

    /// Sets [`Config::borrowed`].
    pub fn with_borrowed(mut self, borrowed: BorrowedMode) -> Config {
        self.borrowed = borrowed;
        self
    }

    /// Sets [`Config::idle`].
    pub fn with_idle(mut self, idle: IdleMode) -> Config {
        self.idle = idle;
        self
    }

    /// Sets [`Config::lookback`] (seconds).
    pub fn with_lookback(mut self, lookback: i64) -> Config {
        self.lookback = lookback;
        self
    }

    /// Sets [`Config::sharing`].
    pub fn with_sharing(
        mut self,
        sharing: gpuquota_model::workloads::sharing::ReplicasPerGpu,
    ) -> Config {
        self.sharing = sharing;
        self
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

/// An allocation interval.
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

/// An evaluated grid: `values[k]` holdings of `shape` at `start + k·step`.
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

/// Raw scrapes of one series.
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

/// A device holding already resolved into held intervals: what the DCGM reader makes of
/// scrapes (each point held until the device's next scrape and for at most the lookback,
/// clipped to the window; adjacent holds merged).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holding {
    /// Who holds it.
    pub owner: Owner,
    /// The card type name.
    pub card_type: String,
    /// What is held.
    pub shape: Shape,
    /// The device key, for the double-booking check and busy matching.
    pub holder: Option<String>,
    /// Held intervals `[start, end)` in seconds, increasing and disjoint.
    pub intervals: Vec<(i64, i64)>,
    /// `Σ (end − start) · busy` over the holds, in second·millionths, when every point had a
    /// busy value; `None` otherwise (the holder's `busy` entry applies then, if any).
    pub busy_micro_seconds: Option<i128>,
    /// How the holding is named in errors and warnings.
    pub label: String,
}

/// Gateway token totals of one department for a shared service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tokens {
    /// Input (prompt) tokens.
    pub input: u64,
    /// Output (decode) tokens.
    pub output: u64,
}

/// A shared inference service split by tokens.
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
    /// Device holdings resolved from DCGM metrics.
    pub holdings: Vec<Holding>,
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
            holdings: Vec::new(),
            services: Vec::new(),
            busy: Vec::new(),
            warnings: Vec::new(),
        }
    }
}
