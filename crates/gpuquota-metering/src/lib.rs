//! GPU-hours per department and card type, MIG-weighted, with borrowed hours shown
//! separately, for showback and chargeback in exact integer money.
//!
//! ```
//! use gpuquota_metering::{Document, Input, run};
//!
//! let doc = Document::from_yaml(r#"
//! window: {start: 0, end: 36000}
//! currency: USD
//! cardTypes: [{name: H200, model: NVIDIA H200 NVL, pricePerHour: "4.50", capacity: 4}]
//! departments: [{name: A, namespaces: [team-a]}]
//! records:
//!   - {department: A, cardType: H200, gpus: 2, start: 0, end: 36000}
//!   - {namespace: team-a, cardType: H200, mig: 1g.18gb, count: 1, start: 0, end: 25200}
//! "#)?;
//! let report = run(&Input::from_document(&doc, &[])?)?;
//! let out = report.to_output();
//! assert_eq!(out.lines[0].allocated_hours, "21.000000"); // 2·10 h + 7 h · 1/7
//! assert_eq!(out.lines[0].cost, "94.50");
//! assert_eq!(out.idle[0].hours, "19.000000");            // 4 cards · 10 h − 21 h
//! assert_eq!(out.totals.cost, "180.00");                 // 40 card-hours at $4.50
//! # Ok::<(), gpuquota_model::Error>(())
//! ```
//!
//! # The way in
//!
//! Metering reads records, not Kubernetes objects: [`Input::from_document`] (a
//! [`Document`] read with [`Document::from_yaml`], and its DCGM files) or [`Input::new`]
//! with the [`Options`] and the fields filled as Rust values build the [`Input`], and
//! [`run`] meters it into the [`Report`], returning every problem as one
//! [`gpuquota_model::Error`]. `run` is fallible because the input is plain data checked as
//! it is metered (see [`run`]). Lower-level pieces stay public
//! and are not entry points: the
//! [`Document::into_input_with`] family (streams opened by the caller, device sharing),
//! [`dcgm`], [`prometheus`] (query_range windows, and a live server with the feature
//! `http`), [`openmetrics`] and [`budget`].
//!
//! # Properties
//!
//! The tests check each of these one by one (`tests/all/`, `properties` module):
//!
//! * **Exact units.** Quantities are integer counts of `1/L` card-seconds with
//!   [`L`](money::L)` = 720720 = lcm(1..16)`; a weight whose denominator does not divide `L` is
//!   an error. Hours are printed with six decimals, rounded half-even, at the edge only.
//! * **Half-open intervals** `[start, end)`, clipped to the window; an open interval is closed
//!   at the window end (or `asOf`). `A[a,b) + A[b,c) = A[a,c)` exactly.
//! * **No double booking.** Two holdings with the same holder key that overlap are refused
//!   with [`MeteringError::DoubleBooked`] naming both records and the overlap; nothing partial
//!   is returned.
//! * **Capacity.** Under compute- or memory-slice weights a valid MIG partition never books
//!   more than one card per card. When the cards held of a type exceed its capacity at some
//!   instant (max-instances overbooking, or input that holds more cards than exist, e.g.
//!   lookback overlap in scrapes) the report warns, naming the card type and instant, and the
//!   idle line (`capacity × T − charged`, never below 0) shrinks by the excess. Otherwise
//!   `allocated + idle = capacity × T` in units.
//! * **Borrowing is integrated moment by moment**: `borrowed = ∫ max(0, a(t) − Q(t)) dt`,
//!   never `max(0, allocated − quota)` over totals. `borrowed ≤ allocated`, `own ≤ quota`.
//! * **Lender credits** (basis quota, borrowed charged): at each instant the borrowed amount is
//!   drawn from unassigned capacity `cap − ΣQ` first, then from the departments under their
//!   quota in proportion to `Q − a` (largest remainder per segment, ties by department name).
//!   The sum of all charges plus the unbooked line is unchanged by any borrowing.
//! * **Money** is integer minor units of the ISO 4217 currency, prices are integer
//!   micro-units per card-hour, and each reported line is rounded exactly once (half-even by
//!   default; half-up, half-away-from-zero and down on request). A fixed total (idle recovery,
//!   a token split) is divided by largest remainder, ties by name, so the shares add up to it
//!   exactly. The report total is the sum of its rounded lines and the drift from the exact
//!   total is reported.
//! * **Order independence and determinism**: permuting the input gives the same report, bit
//!   for bit; no hash maps, no clock, no randomness.
//!
//! # Sampled series
//!
//! An evaluated grid uses the left-point rule: each point stands for `[t_k, t_k + step)`, so a
//! holding present for the whole window gives exactly `T`. OpenCost uses `(n − 1)·step`
//! instead; we differ by up to one step per run on purpose. Raw scrapes hold each value
//! for at most the lookback (300 s by default) and a staleness marker ends it at once.
//!
//! # MIG weights and the MIG catalogue
//!
//! MIG weights come from the MIG catalogue of `gpuquota-mig` (`Catalogue::builtin()`: compute
//! slices, memory slices and max instances per profile, models resolved by catalogue name,
//! `modelName` or `nvidia.com/gpu.product`). This is a deliberate engine → engine dependency:
//! the catalogue is the single source of MIG geometry in the workspace. A `+me`, `-me` or
//! `+gfx` variant takes its base profile's weights. A profile's legacy name weighs as its
//! current one: GB200's `1g.24gb`, `3g.95gb`, `4g.95gb` and `7g.189gb` (the names of the
//! GPU operator's default mig-parted configuration, NVIDIA/gpu-operator
//! `assets/state-mig-manager/0400_configmap.yaml`) are `1g.23gb`, `3g.93gb`, `4g.93gb` and
//! `7g.186gb`.
//!
//! # Deviations and choices
//!
//! * Under the quota basis the `idle` entry of a card type is the capacity not charged to
//!   anyone (`capacity × T − Σ charged`), so the report still adds up to `capacity × T ×
//!   price`.
//! * Holdings of a shared service (tagged with its name, or every holding of its owner when
//!   nothing names it) are split by tokens into lines with `service` set; those lines carry
//!   allocated hours only (no quota, own or borrowed hours) and are charged by allocation
//!   under both bases. The service's hours are split by largest remainder in units and its
//!   cost, rounded once, by largest remainder in minor units, so the token lines add up to the
//!   service exactly.
//! * With idle recovered (`weighted` or `even`) the `idle` entries stay in the report for
//!   transparency; their cost is then inside the lines' `idleShare` and counted once in the
//!   total. `weighted` splits by each line's charged hours of the card type (the same ratio as
//!   its cost at list price); `even` splits equally among the lines charged for that type.
//! * Times in the report echo the input: RFC 3339 strings when the window was given as
//!   strings, integer seconds when it was given as integers. DCGM timestamps (milliseconds)
//!   are floored to whole seconds.
//! * A time-sliced DCGM series (`vgpu` label) is one replica of its card: `1/replicasPerGpu`
//!   of the card type, else of the device plugin's sharing configuration for its node (the
//!   series' `Hostname`, below), or, when neither applies, `1/n` for the `n` sharers seen on
//!   the device (with a warning).
//! * Utilisation is `busy / covered` over the holdings that have busy data; a line whose
//!   data covers less than its allocation gets a coverage warning, and `None` when nothing is
//!   covered. A busy value that is NaN or infinite in DCGM text is no measurement (unknown),
//!   not 0 % busy; a `busy` entry whose holder matches no record or sample is warned about.
//! * `replicas` without `replicasPerGpu` on a record or series takes the card type's
//!   `replicasPerGpu`, else the device plugin's sharing configuration of the holding's node
//!   (its `holder` up to the first `/`, as in `node/GPU-uuid`); with none it is an error. A
//!   holding gives one of `gpus` (or `count`), `mig` and `replicas`.
//! * **Replicas from the device plugin** (`cluster:` files: the Nodes and the NVIDIA device
//!   plugin's sharing ConfigMap, `sharing.timeSlicing` or `sharing.mps`,
//!   `resources[].replicas` of `nvidia.com/gpu`): a node's replicas per GPU are its
//!   `nvidia.com/gpu.replicas` label (the plugin's own), else those of the ConfigMap key its
//!   `nvidia.com/device-plugin.config` label names, else of the default key (`default`, else
//!   the only key). A node the files do not list takes the default key's; a listed node whose
//!   configuration shares nothing has none. An explicit `replicasPerGpu` (holding, then card
//!   type) always wins. (NVIDIA/k8s-device-plugin: `api/config/v1/sharing.go`,
//!   `api/config/v1/replicas.go`; the GPU operator's `devicePlugin.config.default`.)
//! * A single whole card held under a holder key (`node/GPU-uuid`) counts towards the same
//!   per-card overbooking check as the MIG instances keyed `node/GPU-uuid/gi` of that card.
//! * Bad input: every entry whose own fields are wrong (unknown card type, profile or
//!   service, zero count, unrepresentable weight, end before start, step not dividing the
//!   window, lookback ≤ 0) is reported at once ([`MeteringError::Several`]); conflicts
//!   between entries (double booking) and arithmetic overflow stop at the first. Type errors
//!   while reading the document (a negative count, a number beyond `u64`) name every failing
//!   `section[i]`. `borrowed: charged` under `basis: allocated` changes nothing and warns.
//!
//! # The input document
//!
//! `gpuquota meter FILE` reads one YAML (or JSON) mapping ([`Document`]). Unknown fields are
//! warned about with their path and a "did you mean" (code `unknown-field`; an error under
//! `--strict`). Times are RFC 3339 strings or integer seconds; decimals are strings
//! (`"4.50"`) or numbers.
//!
//! | field | meaning |
//! |---|---|
//! | `window: {start, end}` | the metered window `[start, end)` (required) |
//! | `asOf` | open intervals are closed here (default: `window.end`) |
//! | `currency` | ISO 4217 code (default `USD`) |
//! | `rounding` | `half-even` (default), `half-up`, `half-away-from-zero`, `down` |
//! | `migWeights` | `compute-slices` (default), `memory-slices`, `max-instances`, or a table `{profile: "n/d"}` |
//! | `basis` | `allocated` (default) or `quota` |
//! | `borrowed` | `informational` (default) or `charged` |
//! | `idle` | `platform` (default), `weighted` or `even` |
//! | `lookback` | seconds a raw sample is held at most (default 300) |
//! | `cardTypes[]` | `name`, `model` (product name, matched against DCGM's `modelName`), `pricePerHour`, `capacity` (cards), `replicasPerGpu` |
//! | `departments[]` | `name`, `namespaces[]`, `quota: {cardType: cards}` or `{cardType: [{start, cards}]}` |
//! | `records[]` | intervals: `department` or `namespace`, `cardType`, one of `gpus` (or `count`), `mig` (+ `count`), `replicas` (+ `replicasPerGpu`); `start`, `end` (omitted: open), `holder`, `service` |
//! | `series[]` | grids: owner and shape as records, `start` (default: window start), `step` (seconds, divides the window), `values[]` (counts, `null` for a gap), `lookback`, `service` |
//! | `samples[]` | raw scrapes: owner and shape as records, `points: [[t, value]]`, `staleAt[]`, `lookback`, `holder`, `service` |
//! | `dcgm[]` | DCGM metrics files: a path (relative to FILE), or `{path, format, scrapeTime, honorLabels}` (below) |
//! | `services[]` | `name`, `department` (owner), `inputWeight`, `outputWeight`, `tokens: {department: {input, output}}`, `unattributed: {input, output}` |
//! | `busy[]` | `holder`, `fraction` in `[0, 1]` |
//! | `cluster[]` | Kubernetes manifests (paths relative to FILE) with the Nodes and the device plugin's sharing ConfigMap: replicas per GPU by node (below) |
//!
//! ## DCGM metrics files (`dcgm:`)
//!
//! All entries are read as one stream of scrapes, in the order given (a device's series
//! continues from one file into the next), through the bounded line reader of
//! `gpuquota_model::source` ([`dcgm::open_file`]: at most 64 GiB per file and
//! [`dcgm::MAX_LINE_BYTES`] per line, so a file of one endless line is refused after one
//! mebibyte; a `query_range` JSON answer is streamed, with no limit per line); only regular files are opened (a FIFO, socket or device such as `/dev/zero` is
//! refused at once, naming it), and `-` reads standard input.
//!
//! | entry field | meaning |
//! |---|---|
//! | `path` | the file, relative to FILE (`-` is standard input) |
//! | `format` | `auto` (default), `prometheus` (text exposition, timestamps in milliseconds), `openmetrics` (timestamps in seconds, may be fractional; `# EOF` last), `query-range` (the JSON answer of Prometheus' `/api/v1/query_range`, `resultType: matrix`). `auto` reads JSON when the file starts with `{`, OpenMetrics when it ends with `# EOF` or a timestamp has a fraction, else the text exposition |
//! | `scrapeTime` | the time of every line written without a timestamp: the DCGM exporter writes none, so `curl :9400/metrics > s1.prom` becomes `{path: s1.prom, scrapeTime: "2025-04-01T10:00:00Z"}`. Without it such a line is refused (`sample without a timestamp`) |
//! | `honorLabels` | how the Prometheus that stored the lines (they carry `instance` or `job`) was configured: `false` (Prometheus' default) renamed the exporter's `namespace`/`pod` to `exported_namespace`/`exported_pod`; `true` kept them. Default: decided from the labels present: a file in which some stored line carries an `exported_` workload label is `false`, any other `true` |
//!
//! The reader streams: each distinct label set is interned once, and per series only its
//! last timestamp (the duplicate check) and per holding its pending point and merged
//! intervals are kept, so memory is O(series), not O(lines), when each device's lines come
//! in time order (concatenated scrapes, a time-ordered backfill file). A file in which some
//! device goes back in time (one metric family after another) is read again keeping every
//! point: the same result, memory O(lines). A series written twice at one second is refused.
//! Text files are read in batches of 8 MiB cut at line ends; each batch is split at line ends
//! into pieces parsed in parallel (rayon's pool: every core), and the lines are booked in
//! file order on one thread while the next batch is parsed, so the result does not depend on
//! the number of threads.
//!
//! Only `DCGM_FI_*` metrics are read (other lines are counted in a warning). Each line needs
//! `UUID` (or `uuid`) and `modelName` labels; `Hostname`/`hostname`, `GPU_I_ID`,
//! `GPU_I_PROFILE` and `vgpu` refine the device. The workload is `namespace`/`pod` (or
//! `pod_namespace`/`pod_name`); a file in which no line carries one is warned about (the
//! exporter's pod mapping, `dcgm-exporter -k`, is probably off). Busy is
//! `DCGM_FI_PROF_GR_ENGINE_ACTIVE`, else `DCGM_FI_DEV_GPU_UTIL / 100`. A query-range series
//! needs its `__name__`.
//!
//! A `query_range` answer is read as a live scrape would have been stored: where a pod's
//! series goes on past the first point of the device's next series (the next pod's, or the
//! GPU's line without pod labels; a backfilled Prometheus has no staleness markers, so at
//! its default 5-minute lookback an ended pod answers for up to 5 minutes more), the pod's
//! series ends where the next one begins, with a warning naming the device, both pods and
//! the overlap when the next series is a pod's, and one counting the others (Prometheus' staleness
//! handling, `prometheus/prometheus: scrape/scrape.go`, marks a live series stale at the
//! first scrape without it). A step longer than the lookback makes each sample stand for one
//! step (as `count_over_time(...) * step` counts it; the step is the greatest common divisor
//! of the answer's time differences), with a warning naming the step. Upstream: the label names are those of `NVIDIA/dcgm-exporter:
//! internal/pkg/transformation/const.go`; the renaming is Prometheus' `honor_labels`
//! (`prometheus/prometheus: scrape/scrape.go`).
//!
//! With `honorLabels: true` Prometheus still adds its target's own `namespace` and `pod` (the
//! exporter's pod) to lines that carry no workload; such lines cannot be told from a
//! workload's, so they are booked to the exporter's namespace (usually no department's:
//! `unassigned`). Give `honorLabels: false` scrapes where that matters.
//!
//! # Budgets and metrics
//!
//! [`budget`] is the GPU-hour budget ledger (the `Budget` kind of `gpuquota-model`) in
//! metering's units, shared by the simulator and the snapshot commands; [`openmetrics`]
//! writes a report (and budgets) as OpenMetrics text.
//!
//! # Crate features
//!
//! * `serde` (default): `Deserialize` on [`Document`] and its `…In` types, `Serialize` on the
//!   report's output types, [`Report::to_json`], [`budget::from_meter_report`] (a report read
//!   back as JSON) and Prometheus `query_range` JSON answers among the DCGM files
//!   (serde_json). Forwards to the model's and MIG's `serde`.
//! * `yaml` (default, implies `serde`): the input file's reader [`Document::from_yaml`] (YAML
//!   and JSON, unknown fields as warnings) and [`Document::sharing_from`] (the model's manifest
//!   importer). Forwards to the model's and MIG's `yaml`.
//! * `schema`: JSON Schemas of the input and the report (`schemars`), for `gpuquota schema`.
//! * `fuzzing`: `Arbitrary` inputs and the check functions of the `fuzzing` module used by the
//!   fuzz target and the smoke test (implies `yaml`).
//!
//! With `default-features = false`, [`run`] runs over an [`Input`] built as plain Rust
//! values (or a [`Document`] built so and converted with [`Document::into_input`]), DCGM
//! exposition and OpenMetrics text is read, and the report renders as a table, CSV and
//! OpenMetrics, without serde, serde_json or a YAML parser in the build; a `query_range` JSON
//! file among the DCGM files is then refused with a [`MeteringError::Parse`] naming it.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(clippy::unwrap_used, clippy::expect_used)]

pub mod budget;
pub mod dcgm;
pub mod engine;
pub mod entry;
pub mod figure;
#[cfg(feature = "yaml")]
pub mod file;
pub mod input;
pub mod mig;
pub mod money;
pub mod openmetrics;
pub mod prometheus;
pub mod report;
pub mod time;

#[cfg(feature = "fuzzing")]
pub mod fuzzing;

pub use engine::{
    Basis, BorrowedMode, BusyFraction, CardType, Config, Department, GridSeries, Holding, IdleMode,
    Input, Owner, QuotaStep, RawSeries, Record, Service, Shape, TimeFormat, Tokens, UNASSIGNED,
    UNATTRIBUTED, Window,
};
pub use entry::{Options, run};
pub use input::Document;
pub use mig::MigPolicy;
pub use money::{Currency, RoundingMode};
pub use report::Report;

/// Why metering refused its input. Every variant names the record or object and field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MeteringError {
    /// The window is empty or reversed.
    #[error("window: end {end} is not after start {start}")]
    InvalidWindow {
        /// Start.
        start: i64,
        /// End.
        end: i64,
    },
    /// An interval ends before it starts.
    #[error("{what}: end {end} is before start {start}")]
    InvalidInterval {
        /// The record.
        what: String,
        /// Start.
        start: i64,
        /// End.
        end: i64,
    },
    /// A card type that is not declared.
    #[error("{what}: unknown card type {card_type:?}")]
    UnknownCardType {
        /// The record and field.
        what: String,
        /// The name.
        card_type: String,
    },
    /// A MIG profile the card type does not have.
    #[error("{what}: unknown MIG profile {profile:?} for card type {card_type}")]
    UnknownProfile {
        /// The record (or weight table entry) naming the profile.
        what: String,
        /// The card type.
        card_type: String,
        /// The profile.
        profile: String,
    },
    /// A service that is not declared.
    #[error("{what}: unknown service {service:?}")]
    UnknownService {
        /// The record and field.
        what: String,
        /// The name.
        service: String,
    },
    /// A weight whose denominator does not divide `L = 720720`.
    #[error("{what}: weight {numerator}/{denominator} is not a multiple of 1/720720")]
    WeightNotRepresentable {
        /// The record or profile.
        what: String,
        /// Numerator.
        numerator: u64,
        /// Denominator.
        denominator: u64,
    },
    /// A count of zero.
    #[error("{0}: the count must be at least 1")]
    ZeroCount(String),
    /// Two holdings of one holder key overlap.
    #[error(
        "{second}: holder {key} is already held by {first}; double booking over [{overlap_start}, {overlap_end})"
    )]
    DoubleBooked {
        /// The holder key.
        key: String,
        /// The record holding it first.
        first: String,
        /// The record that overlaps it.
        second: String,
        /// Start of the overlap.
        overlap_start: i64,
        /// End of the overlap.
        overlap_end: i64,
    },
    /// More cards held than the card type's capacity (reserved for callers that treat the
    /// capacity warning as an error; [`run`] itself warns).
    #[error(
        "card type {card_type}: {held_units}/720720 cards held at {at}, more than its capacity {capacity}"
    )]
    CapacityExceeded {
        /// The card type.
        card_type: String,
        /// When.
        at: i64,
        /// Held, in `1/L` cards.
        held_units: i128,
        /// Capacity in cards.
        capacity: i128,
    },
    /// A grid step that is not positive or does not divide the window.
    #[error("{what}: step {step}s does not divide the window of {window}s")]
    StepDoesNotDivideWindow {
        /// The series.
        what: String,
        /// Step.
        step: i64,
        /// Window length.
        window: i64,
    },
    /// A lookback that is not positive.
    #[error("{what}: lookback {lookback}s must be positive")]
    InvalidLookback {
        /// The series.
        what: String,
        /// The value.
        lookback: i64,
    },
    /// Two points (or a point and a staleness marker) at the same time.
    #[error("{what}: duplicate timestamp {at}")]
    DuplicateTimestamp {
        /// The series.
        what: String,
        /// The time.
        at: i64,
    },
    /// Points out of order.
    #[error("{what}: timestamp {at} is before the previous point")]
    NotIncreasing {
        /// The series.
        what: String,
        /// The time.
        at: i64,
    },
    /// A name declared twice.
    #[error("duplicate {what} {name:?}")]
    Duplicate {
        /// What kind of object.
        what: String,
        /// The name.
        name: String,
    },
    /// A number or decimal string that is not acceptable.
    #[error("{field}: invalid value {value:?}: {reason}")]
    InvalidNumber {
        /// The field.
        field: String,
        /// The value.
        value: String,
        /// Why.
        reason: String,
    },
    /// A currency code that is not in ISO 4217.
    #[error("currency: unknown ISO 4217 code {0:?}")]
    UnknownCurrency(String),
    /// Arithmetic overflow (never wraps).
    #[error("{0}: arithmetic overflow")]
    Overflow(String),
    /// The input document is malformed.
    #[error("{0}")]
    Parse(String),
    /// Several records are invalid: every problem, one per line, in input order (records,
    /// then series, then samples).
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Several(Vec<MeteringError>),
    /// An input file that cannot be read (I/O error, larger than the reader's limit, not UTF-8).
    #[error("{0}")]
    Read(gpuquota_model::Diagnostic),
    /// A DCGM exposition line that cannot be used.
    #[error("{file}:{line}: {reason}")]
    Exposition {
        /// The file name.
        file: String,
        /// 1-based line number.
        line: usize,
        /// Why.
        reason: String,
    },
}
