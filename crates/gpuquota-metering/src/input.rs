//! The input file of `gpuquota meter` (YAML or JSON): parsing, unknown-field warnings and
//! conversion into an engine [`Input`]. `gpuquota schema meter-input` prints the JSON Schema of
//! [`Document`], generated from these types (feature `schema`).

use std::collections::BTreeMap;

use gpuquota_model::diag::{Diagnostic, Diagnostics, codes, did_you_mean};
use gpuquota_model::source::Stream;
use gpuquota_model::workloads::sharing::ReplicasPerGpu;
use serde::Deserialize;

use crate::MeteringError;
use crate::dcgm;
use crate::engine::{
    Basis, BorrowedMode, BusyFraction, CardType, Config, Department, GridSeries, IdleMode, Input,
    Owner, QuotaStep, RawSeries, Record, Service, Shape, TimeFormat, Tokens, Window,
};
use crate::mig::MigPolicy;
use crate::money::{Currency, L, RoundingMode, parse_decimal};
use crate::time::parse_rfc3339;

/// A time: RFC 3339 text or integer seconds.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum TimeIn {
    /// Integer seconds.
    Seconds(i64),
    /// RFC 3339.
    Text(String),
}

/// A decimal given as a string (`"4.50"`) or a YAML number.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum DecimalIn {
    /// Text, parsed exactly.
    Text(String),
    /// An integer.
    Int(u64),
    /// A float as written by a YAML/JSON number; printed in its shortest form, then parsed.
    Float(f64),
}

impl DecimalIn {
    fn text(&self) -> String {
        match self {
            DecimalIn::Text(s) => s.clone(),
            DecimalIn::Int(i) => i.to_string(),
            DecimalIn::Float(f) => {
                let s = f.to_string();
                if s.contains('e') {
                    format!("{f:.12}")
                } else {
                    s
                }
            }
        }
    }
}

/// `window:`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WindowIn {
    /// Start.
    pub start: TimeIn,
    /// End.
    pub end: TimeIn,
}

/// `cardTypes[]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CardTypeIn {
    /// Name.
    pub name: String,
    /// Product name.
    pub model: Option<String>,
    /// List price per card-hour.
    pub price_per_hour: Option<DecimalIn>,
    /// Physical cards.
    pub capacity: Option<u64>,
    /// Advertised time-slicing replicas per card.
    pub replicas_per_gpu: Option<u64>,
}

/// A quota: a constant number of cards or steps over time.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum QuotaIn {
    /// Constant.
    Constant(DecimalIn),
    /// Piecewise constant: `[{start, cards}]`.
    Steps(Vec<QuotaStepIn>),
}

/// One quota step.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct QuotaStepIn {
    /// From this time on.
    pub start: TimeIn,
    /// Cards.
    pub cards: DecimalIn,
}

/// `departments[]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DepartmentIn {
    /// Name.
    pub name: String,
    /// Namespaces.
    #[serde(default)]
    pub namespaces: Vec<String>,
    /// Quota per card type.
    #[serde(default)]
    pub quota: BTreeMap<String, QuotaIn>,
}

/// One entry of `records`, `series` or `samples` (the fields each kind reads are listed in
/// the issue; the others must be absent).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HoldingIn {
    /// Department.
    pub department: Option<String>,
    /// Namespace.
    pub namespace: Option<String>,
    /// Card type.
    pub card_type: String,
    /// Whole GPUs.
    pub gpus: Option<u64>,
    /// MIG profile.
    pub mig: Option<String>,
    /// MIG instances (or whole GPUs).
    pub count: Option<u64>,
    /// Time-slicing replicas held.
    pub replicas: Option<u64>,
    /// Replicas advertised per card.
    pub replicas_per_gpu: Option<u64>,
    /// Holder key.
    pub holder: Option<String>,
    /// Service.
    pub service: Option<String>,
    /// Start (records: required; series: first point, default the window start).
    pub start: Option<TimeIn>,
    /// End (records; omitted: open).
    pub end: Option<TimeIn>,
    /// Step in seconds (series).
    pub step: Option<i64>,
    /// Values, null for a gap (series).
    pub values: Option<Vec<Option<u64>>>,
    /// Lookback in seconds (series and samples).
    pub lookback: Option<i64>,
    /// `[t, value]` pairs (samples).
    pub points: Option<Vec<(TimeIn, u64)>>,
    /// Staleness markers (samples).
    pub stale_at: Option<Vec<TimeIn>>,
}

impl HoldingIn {
    fn reject(&self, what: &str, fields: &[(&str, bool)]) -> Result<(), MeteringError> {
        for (name, present) in fields {
            if *present {
                return Err(MeteringError::Parse(format!(
                    "{what}: field {name} does not apply here"
                )));
            }
        }
        Ok(())
    }
}

fn missing(what: &str, field: &str) -> MeteringError {
    MeteringError::Parse(format!("{what}: missing field {field}"))
}

/// Token totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TokensIn {
    /// Input tokens.
    #[serde(default)]
    pub input: u64,
    /// Output tokens.
    #[serde(default)]
    pub output: u64,
}

/// `services[]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ServiceIn {
    /// Name.
    pub name: String,
    /// Owner.
    pub department: String,
    /// α.
    pub input_weight: Option<u64>,
    /// β.
    pub output_weight: Option<u64>,
    /// Tokens per department.
    #[serde(default)]
    pub tokens: BTreeMap<String, TokensIn>,
    /// Tokens with no department.
    pub unattributed: Option<TokensIn>,
}

/// `busy[]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BusyIn {
    /// Holder key.
    pub holder: String,
    /// Mean busy fraction in `[0, 1]`.
    pub fraction: DecimalIn,
}

/// `migWeights:` a policy name or a table `{profile: "n/d"}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum MigWeightsIn {
    /// `compute-slices`, `memory-slices`, `max-instances`.
    Name(String),
    /// A table of weights.
    Table(BTreeMap<String, String>),
}

/// One `dcgm:` entry: a path, or a path with options.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(untagged))]
pub enum DcgmIn {
    /// A path (relative to the input file).
    Path(String),
    /// A path with options.
    Entry(DcgmEntryIn),
}

/// `dcgm[]` given as a mapping.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DcgmEntryIn {
    /// The path (relative to the input file).
    pub path: String,
    /// `auto` (default), `prometheus`, `openmetrics` or `query-range`.
    pub format: Option<String>,
    /// The scrape time of lines written without a timestamp (`curl :9400/metrics` output).
    pub scrape_time: Option<TimeIn>,
    /// How Prometheus stored the exporter's labels (its `honorLabels`); default: decided from
    /// the labels present.
    pub honor_labels: Option<bool>,
}

impl<'de> Deserialize<'de> for DcgmIn {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<DcgmIn, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = DcgmIn;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a path, or a mapping {path, format, scrapeTime, honorLabels}")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<DcgmIn, E> {
                Ok(DcgmIn::Path(v.to_owned()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<DcgmIn, A::Error> {
                DcgmEntryIn::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(DcgmIn::Entry)
            }
        }
        d.deserialize_any(V)
    }
}

impl DcgmIn {
    /// The path as written.
    pub fn path(&self) -> &str {
        match self {
            DcgmIn::Path(p) => p,
            DcgmIn::Entry(e) => &e.path,
        }
    }

    fn source(&self, i: usize, name: &str) -> Result<dcgm::Source, MeteringError> {
        let mut src = dcgm::Source {
            name: name.to_owned(),
            ..dcgm::Source::default()
        };
        if let DcgmIn::Entry(e) = self {
            if let Some(f) = &e.format {
                src.format = dcgm::Format::parse(f)
                    .ok_or_else(|| bad_enum(&format!("dcgm[{i}].format"), f))?;
            }
            src.scrape_time = e
                .scrape_time
                .as_ref()
                .map(|t| time(t, &format!("dcgm[{i}].scrapeTime")))
                .transpose()?;
            src.honor_labels = e.honor_labels;
        }
        Ok(src)
    }
}

/// The whole input file of `gpuquota meter`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Document {
    /// The window.
    pub window: WindowIn,
    /// Open intervals are closed here (default: the window end).
    pub as_of: Option<TimeIn>,
    /// ISO 4217 code (default USD).
    pub currency: Option<String>,
    /// Rounding mode name.
    pub rounding: Option<String>,
    /// MIG weights.
    pub mig_weights: Option<MigWeightsIn>,
    /// `allocated` or `quota`.
    pub basis: Option<String>,
    /// `informational` or `charged`.
    pub borrowed: Option<String>,
    /// `platform`, `weighted` or `even`.
    pub idle: Option<String>,
    /// Default lookback in seconds (300).
    pub lookback: Option<i64>,
    /// Card types.
    #[serde(default)]
    pub card_types: Vec<CardTypeIn>,
    /// Departments.
    #[serde(default)]
    pub departments: Vec<DepartmentIn>,
    /// Allocation intervals.
    #[serde(default)]
    pub records: Vec<HoldingIn>,
    /// Evaluated grids.
    #[serde(default)]
    pub series: Vec<HoldingIn>,
    /// Raw scrapes.
    #[serde(default)]
    pub samples: Vec<HoldingIn>,
    /// DCGM metrics files (paths relative to the input file, or entries with options).
    #[serde(default)]
    pub dcgm: Vec<DcgmIn>,
    /// Shared services.
    #[serde(default)]
    pub services: Vec<ServiceIn>,
    /// Busy fractions.
    #[serde(default)]
    pub busy: Vec<BusyIn>,
    /// Kubernetes manifests (paths relative to the input file) with the Nodes and the NVIDIA
    /// device plugin's sharing ConfigMap: replicas per GPU for time-sliced holdings.
    #[serde(default)]
    pub cluster: Vec<String>,
    /// Fields that were not recognised (filled by [`Document::from_yaml`]).
    #[serde(skip)]
    pub unknown_fields: Vec<String>,
}

/// The YAML parser's options: the default node, event and document budgets guard against
/// storms in small inputs; a real month of grid values legitimately exceeds them, so they grow
/// with the input, which the reader bounds. Alias and depth limits stay as they are.
fn yaml_options(n: usize) -> serde_saphyr::Options {
    serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_documents: n.max(1_024),
            max_nodes: n.max(250_000),
            max_events: n.saturating_mul(2).max(1_000_000),
        },
    }
}

/// The fields of each object of the meter document, by the path of the object.
fn known_fields(parent: &[&str]) -> &'static [&'static str] {
    const HOLDING: &[&str] = &[
        "department",
        "namespace",
        "cardType",
        "gpus",
        "mig",
        "count",
        "replicas",
        "replicasPerGpu",
        "holder",
        "service",
        "start",
        "end",
        "step",
        "values",
        "lookback",
        "points",
        "staleAt",
    ];
    match parent {
        [] => &[
            "window",
            "asOf",
            "currency",
            "rounding",
            "migWeights",
            "basis",
            "borrowed",
            "idle",
            "lookback",
            "cardTypes",
            "departments",
            "records",
            "series",
            "samples",
            "dcgm",
            "services",
            "busy",
            "cluster",
        ],
        ["window"] => &["start", "end"],
        ["cardTypes", _] => &[
            "name",
            "model",
            "pricePerHour",
            "capacity",
            "replicasPerGpu",
        ],
        ["departments", _] => &["name", "namespaces", "quota"],
        ["departments", _, "quota", _, _] => &["start", "cards"],
        ["records" | "series" | "samples", _] => HOLDING,
        ["dcgm", _] => &["path", "format", "scrapeTime", "honorLabels"],
        ["services", _] => &[
            "name",
            "department",
            "inputWeight",
            "outputWeight",
            "tokens",
            "unattributed",
        ],
        ["services", _, "tokens", _] | ["services", _, "unattributed"] => &["input", "output"],
        ["busy", _] => &["holder", "fraction"],
        _ => &[],
    }
}

fn unknown_field(source: &str, path: &str) -> Diagnostic {
    let parts: Vec<&str> = path.split('.').collect();
    let (leaf, parent) = parts.split_last().unwrap_or((&"", &[]));
    let mut field = String::new();
    for p in &parts {
        if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) {
            field.push('[');
            field.push_str(p);
            field.push(']');
        } else {
            if !field.is_empty() {
                field.push('.');
            }
            field.push_str(p);
        }
    }
    let mut message = format!("unknown field {leaf} ignored");
    if let Some(m) = did_you_mean(leaf, known_fields(parent)) {
        message.push_str(&format!("; did you mean {m}?"));
    }
    Diagnostic::warning(codes::UNKNOWN_FIELD, message)
        .source(source.to_owned())
        .field(field)
        .engine("meter")
}

/// The accepted forms of this file's untagged enums, for the messages of
/// [`gpuquota_model::import::serde_message_with`].
const UNTAGGED_FORMS: &[(&str, &str)] = &[
    (
        "TimeIn",
        "a time: RFC 3339 text such as \"2026-01-01T00:00:00Z\", or integer seconds",
    ),
    (
        "DecimalIn",
        "a decimal: a string such as \"4.50\", or a number",
    ),
    (
        "QuotaIn",
        "a quota: a number of cards, or a list of steps [{start, cards}]",
    ),
    (
        "MigWeightsIn",
        "MIG weights: compute-slices, memory-slices or max-instances, or a table {profile: \"n/d\"}",
    ),
];

/// A parser message in words a user can act on (untagged enums list their forms).
fn message(e: impl std::fmt::Display) -> String {
    gpuquota_model::import::serde_message_with(&e.to_string(), UNTAGGED_FORMS)
}

fn parse_err(e: impl std::fmt::Display) -> MeteringError {
    MeteringError::Parse(message(e))
}

impl Document {
    /// Parses YAML (or JSON, which is YAML) and records every unknown field by path.
    ///
    /// The document is deserialized straight into its types (no intermediate tree); the YAML
    /// parser's node and event budgets grow with the input (which the reader bounds), so a
    /// compact `series:` grid of a thousand GPU-months is accepted.
    ///
    /// # Errors
    /// [`MeteringError::Parse`] with the parser's message (it names the line and field), one
    /// line per failing entry for type errors.
    ///
    /// # Complexity
    /// Linear in the input.
    pub fn from_yaml(text: &str) -> Result<Document, MeteringError> {
        let mut unknown = Vec::new();
        let typed = if text.trim_start().starts_with('{') {
            let mut de = serde_json::Deserializer::from_str(text);
            serde_ignored::deserialize(&mut de, |path| unknown.push(path.to_string()))
                .and_then(|d: Document| de.end().map(|()| d))
                .ok()
        } else {
            None
        };
        let typed = match typed {
            Some(d) => Some(d),
            None => {
                unknown.clear();
                serde_saphyr::with_deserializer_from_str_with_options(
                    text,
                    yaml_options(text.len()),
                    |de| serde_ignored::deserialize(de, |path| unknown.push(path.to_string())),
                )
                .ok()
            }
        };
        if let Some(mut doc) = typed {
            doc.unknown_fields = unknown;
            return Ok(doc);
        }
        // The error path: parse into a tree to say which entries fail, and why.
        let value: serde_json::Value =
            serde_saphyr::from_str_with_options(text, yaml_options(text.len()))
                .map_err(parse_err)?;
        if value.is_null() {
            return Err(MeteringError::Parse(
                "empty input: expected a mapping with window, cardTypes and records".to_owned(),
            ));
        }
        let mut unknown = Vec::new();
        let mut doc: Document = serde_ignored::deserialize(&value, |path| {
            unknown.push(path.to_string());
        })
        .map_err(|e| locate(&value, &e))?;
        doc.unknown_fields = unknown;
        Ok(doc)
    }

    /// The unknown fields as diagnostics (code `unknown-field`, a warning): the field path in
    /// Kubernetes' notation (`cardTypes[0].pricePerHur`) and, where a known field of that
    /// object is close, a "did you mean".
    pub fn diagnostics(&self, source: &str) -> Diagnostics {
        self.unknown_fields
            .iter()
            .map(|path| unknown_field(source, path))
            .collect()
    }

    /// Converts the document into an engine input; `dcgm_files` holds the name and text of
    /// each file listed in `dcgm:` (in the same order; the options of the `i`-th entry apply
    /// to the `i`-th file). Files not given are not read.
    ///
    /// # Errors
    /// A typed [`MeteringError`] naming the record and field.
    pub fn into_input(&self, dcgm_files: &[(String, String)]) -> Result<Input, MeteringError> {
        let mut input = self.base_input(ReplicasPerGpu::default(), &mut |s| s.values.clone())?;
        let sources = dcgm_files
            .iter()
            .enumerate()
            .map(|(i, (name, _))| match self.dcgm.get(i) {
                Some(entry) => entry.source(i, name),
                None => Ok(dcgm::Source {
                    name: name.clone(),
                    ..dcgm::Source::default()
                }),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut open = |i: usize| -> Result<Stream, MeteringError> {
            let (name, text) = &dcgm_files[i];
            Ok(Stream::from_reader(
                name.clone(),
                std::io::Cursor::new(text.clone().into_bytes()),
                gpuquota_model::source::MAX_STREAM_BYTES,
            ))
        };
        add_dcgm(&mut input, &sources, &mut open)?;
        Ok(input)
    }

    /// Converts the document into an engine input, reading every `dcgm:` entry through
    /// `open` (given the entry's index and path; the command line opens the path relative
    /// to the input file with [`gpuquota_model::source::open_stream`], the one bounded reader).
    ///
    /// # Errors
    /// A typed [`MeteringError`] naming the record and field, or the file that cannot be read.
    pub fn into_input_with(
        &self,
        open: &mut dyn FnMut(usize, &str) -> Result<Stream, MeteringError>,
    ) -> Result<Input, MeteringError> {
        self.into_input_with_sharing(open, ReplicasPerGpu::default())
    }

    /// The replicas per GPU by node of the `cluster:` files, given as (name, text) in the
    /// order listed: the Nodes and the device plugin's sharing ConfigMap among them
    /// ([`gpuquota_model::workloads::sharing::replicas_per_gpu`]).
    ///
    /// # Errors
    /// [`MeteringError::Read`] with the first import error of the files.
    pub fn sharing_from(files: &[(String, String)]) -> Result<ReplicasPerGpu, MeteringError> {
        let mut importer = gpuquota_model::Importer::new();
        for (name, text) in files {
            importer.add_str(name, text);
        }
        let imported = importer.finish().map_err(|e| {
            MeteringError::Read(e.0.into_iter().next().unwrap_or_else(|| {
                Diagnostic::error(codes::READ_FAILED, "cluster: the files do not import")
            }))
        })?;
        Ok(gpuquota_model::workloads::sharing::replicas_per_gpu(
            &imported.model,
        ))
    }

    /// As [`Document::into_input_with`], with the replicas per GPU of the device plugin's
    /// sharing configuration ([`Document::sharing_from`]) for holdings whose record and card
    /// type name none.
    ///
    /// # Errors
    /// As [`Document::into_input_with`].
    pub fn into_input_with_sharing(
        &self,
        open: &mut dyn FnMut(usize, &str) -> Result<Stream, MeteringError>,
        sharing: ReplicasPerGpu,
    ) -> Result<Input, MeteringError> {
        let mut input = self.base_input(sharing, &mut |s| s.values.clone())?;
        self.add_dcgm_with(&mut input, open)?;
        Ok(input)
    }

    /// [`Document::into_input_with`] that consumes the document: the `series:` values move
    /// into the engine input instead of being copied, so a large grid is held once (a month
    /// of one-minute points for 1,000 GPUs is 43.2 M values, 16 bytes each).
    ///
    /// # Errors
    /// As [`Document::into_input_with`].
    ///
    /// # Complexity
    /// Linear in the number of records and series, without copying the grid values.
    pub fn into_input_owned_with(
        self,
        open: &mut dyn FnMut(usize, &str) -> Result<Stream, MeteringError>,
    ) -> Result<Input, MeteringError> {
        self.into_input_owned_with_sharing(open, ReplicasPerGpu::default())
    }

    /// [`Document::into_input_with_sharing`] that consumes the document, as
    /// [`Document::into_input_owned_with`] does.
    ///
    /// # Errors
    /// As [`Document::into_input_with`].
    pub fn into_input_owned_with_sharing(
        mut self,
        open: &mut dyn FnMut(usize, &str) -> Result<Stream, MeteringError>,
        sharing: ReplicasPerGpu,
    ) -> Result<Input, MeteringError> {
        let mut values: Vec<Option<Vec<Option<u64>>>> =
            self.series.iter_mut().map(|s| s.values.take()).collect();
        let mut next = values.iter_mut();
        let mut input = self.base_input(sharing, &mut |_| next.next().and_then(Option::take))?;
        self.add_dcgm_with(&mut input, open)?;
        Ok(input)
    }

    fn add_dcgm_with(
        &self,
        input: &mut Input,
        open: &mut dyn FnMut(usize, &str) -> Result<Stream, MeteringError>,
    ) -> Result<(), MeteringError> {
        let sources = self
            .dcgm
            .iter()
            .enumerate()
            .map(|(i, e)| e.source(i, e.path()))
            .collect::<Result<Vec<_>, _>>()?;
        let mut opener = |i: usize| open(i, self.dcgm[i].path());
        add_dcgm(input, &sources, &mut opener)
    }

    /// Everything but the DCGM files; `values` gives each `series:` entry's values, in order.
    fn base_input(
        &self,
        sharing: ReplicasPerGpu,
        values: &mut dyn FnMut(&HoldingIn) -> Option<Vec<Option<u64>>>,
    ) -> Result<Input, MeteringError> {
        let mut config = self.config()?;
        config.sharing = sharing.clone();
        let sharing = &sharing;
        let mut input = Input::new(config);
        self.card_types_into(&mut input)?;
        self.departments_into(&mut input)?;
        self.records_into(&mut input, sharing)?;
        self.series_into(&mut input, sharing, values)?;
        self.samples_into(&mut input, sharing)?;
        self.services_into(&mut input);
        self.busy_into(&mut input)?;
        Ok(input)
    }

    /// The `window`, `currency`, `asOf`, `rounding`, `migWeights`, `basis`, `borrowed`,
    /// `idle` and `lookback` settings.
    fn config(&self) -> Result<Config, MeteringError> {
        let is_text = matches!(self.window.start, TimeIn::Text(_));
        let window = Window {
            start: time(&self.window.start, "window.start")?,
            end: time(&self.window.end, "window.end")?,
        };
        let currency = Currency::from_code(
            &self
                .currency
                .as_deref()
                .unwrap_or("USD")
                .to_ascii_uppercase(),
        )?;
        let mut config = Config::new(window, currency);
        config.time_format = if is_text {
            TimeFormat::Rfc3339
        } else {
            TimeFormat::Seconds
        };
        config.as_of = self.as_of.as_ref().map(|t| time(t, "asOf")).transpose()?;
        if let Some(r) = &self.rounding {
            config.rounding = RoundingMode::parse(r).ok_or_else(|| bad_enum("rounding", r))?;
        }
        if let Some(m) = &self.mig_weights {
            config.mig_policy = match m {
                MigWeightsIn::Name(n) => match n.as_str() {
                    "compute-slices" => MigPolicy::ComputeSlices,
                    "memory-slices" => MigPolicy::MemorySlices,
                    "max-instances" => MigPolicy::MaxInstances,
                    _ => return Err(bad_enum("migWeights", n)),
                },
                MigWeightsIn::Table(t) => {
                    let mut table = BTreeMap::new();
                    for (p, v) in t {
                        table.insert(p.clone(), parse_ratio(v, &format!("migWeights.{p}"))?);
                    }
                    MigPolicy::Table(table)
                }
            };
        }
        if let Some(b) = &self.basis {
            config.basis = match b.as_str() {
                "allocated" => Basis::Allocated,
                "quota" => Basis::Quota,
                _ => return Err(bad_enum("basis", b)),
            };
        }
        if let Some(b) = &self.borrowed {
            config.borrowed = match b.as_str() {
                "informational" => BorrowedMode::Informational,
                "charged" => BorrowedMode::Charged,
                _ => return Err(bad_enum("borrowed", b)),
            };
        }
        if let Some(i) = &self.idle {
            config.idle = match i.as_str() {
                "platform" => IdleMode::Platform,
                "weighted" => IdleMode::Weighted,
                "even" => IdleMode::Even,
                _ => return Err(bad_enum("idle", i)),
            };
        }
        if let Some(l) = self.lookback {
            config.lookback = l;
        }
        Ok(config)
    }

    /// `cardTypes:`.
    fn card_types_into(&self, input: &mut Input) -> Result<(), MeteringError> {
        for (i, c) in self.card_types.iter().enumerate() {
            let price = match &c.price_per_hour {
                Some(p) => parse_decimal(&p.text(), 6, &format!("cardTypes[{i}].pricePerHour"))?,
                None => 0,
            };
            input.card_types.push(CardType {
                name: c.name.clone(),
                model: c.model.clone(),
                price_micro_per_hour: price,
                capacity: c.capacity,
                replicas_per_gpu: c.replicas_per_gpu,
            });
        }
        Ok(())
    }

    /// `departments:`, with their quota steps.
    fn departments_into(&self, input: &mut Input) -> Result<(), MeteringError> {
        for (i, d) in self.departments.iter().enumerate() {
            let mut quota = BTreeMap::new();
            for (card, q) in &d.quota {
                let field = format!("departments[{i}].quota.{card}");
                let steps = match q {
                    QuotaIn::Constant(v) => vec![QuotaStep {
                        from: i64::MIN,
                        cards_units: cards(v, &field)?,
                    }],
                    QuotaIn::Steps(s) => s
                        .iter()
                        .map(|s| {
                            Ok(QuotaStep {
                                from: time(&s.start, &field)?,
                                cards_units: cards(&s.cards, &field)?,
                            })
                        })
                        .collect::<Result<Vec<_>, MeteringError>>()?,
                };
                quota.insert(card.clone(), steps);
            }
            input.departments.push(Department {
                name: d.name.clone(),
                namespaces: d.namespaces.clone(),
                quota,
            });
        }
        Ok(())
    }

    /// `records:` (intervals).
    fn records_into(
        &self,
        input: &mut Input,
        sharing: &ReplicasPerGpu,
    ) -> Result<(), MeteringError> {
        for (i, r) in self.records.iter().enumerate() {
            let what = format!("records[{i}]");
            r.reject(
                &what,
                &[
                    ("step", r.step.is_some()),
                    ("values", r.values.is_some()),
                    ("points", r.points.is_some()),
                    ("staleAt", r.stale_at.is_some()),
                    ("lookback", r.lookback.is_some()),
                ],
            )?;
            let start = r.start.as_ref().ok_or_else(|| missing(&what, "start"))?;
            input.records.push(Record {
                owner: owner(r),
                card_type: r.card_type.clone(),
                shape: shape(r, &what, &self.card_types, sharing)?,
                start: time(start, &format!("{what}.start"))?,
                end: r
                    .end
                    .as_ref()
                    .map(|e| time(e, &format!("{what}.end")))
                    .transpose()?,
                holder: r.holder.clone(),
                service: r.service.clone(),
            });
        }
        Ok(())
    }

    /// `series:` (grids); `values` gives each entry's values, in order.
    fn series_into(
        &self,
        input: &mut Input,
        sharing: &ReplicasPerGpu,
        values: &mut dyn FnMut(&HoldingIn) -> Option<Vec<Option<u64>>>,
    ) -> Result<(), MeteringError> {
        for (i, s) in self.series.iter().enumerate() {
            let what = format!("series[{i}]");
            s.reject(
                &what,
                &[
                    ("end", s.end.is_some()),
                    ("points", s.points.is_some()),
                    ("staleAt", s.stale_at.is_some()),
                ],
            )?;
            input.series.push(GridSeries {
                owner: owner(s),
                card_type: s.card_type.clone(),
                shape: unit_shape(s, &what, &self.card_types, sharing)?,
                start: s
                    .start
                    .as_ref()
                    .map(|t| time(t, &format!("{what}.start")))
                    .transpose()?,
                step: s.step.ok_or_else(|| missing(&what, "step"))?,
                values: values(s).ok_or_else(|| missing(&what, "values"))?,
                lookback: s.lookback,
                service: s.service.clone(),
            });
        }
        Ok(())
    }

    /// `samples:` (raw points with staleness).
    fn samples_into(
        &self,
        input: &mut Input,
        sharing: &ReplicasPerGpu,
    ) -> Result<(), MeteringError> {
        for (i, s) in self.samples.iter().enumerate() {
            let what = format!("samples[{i}]");
            s.reject(
                &what,
                &[
                    ("start", s.start.is_some()),
                    ("end", s.end.is_some()),
                    ("step", s.step.is_some()),
                    ("values", s.values.is_some()),
                ],
            )?;
            let points = s
                .points
                .as_ref()
                .ok_or_else(|| missing(&what, "points"))?
                .iter()
                .map(|(t, v)| Ok((time(t, &format!("{what}.points"))?, *v)))
                .collect::<Result<Vec<_>, MeteringError>>()?;
            let stale_at = s
                .stale_at
                .iter()
                .flatten()
                .map(|t| time(t, &format!("{what}.staleAt")))
                .collect::<Result<Vec<_>, MeteringError>>()?;
            input.samples.push(RawSeries {
                owner: owner(s),
                card_type: s.card_type.clone(),
                shape: unit_shape(s, &what, &self.card_types, sharing)?,
                lookback: s.lookback,
                points,
                stale_at,
                holder: s.holder.clone(),
                service: s.service.clone(),
                busy_micro: None,
                label: None,
            });
        }
        Ok(())
    }

    /// `services:`, their tokens (the unattributed ones under their own name).
    fn services_into(&self, input: &mut Input) {
        for s in &self.services {
            let mut tokens: BTreeMap<String, Tokens> = s
                .tokens
                .iter()
                .map(|(d, t)| {
                    (
                        d.clone(),
                        Tokens {
                            input: t.input,
                            output: t.output,
                        },
                    )
                })
                .collect();
            if let Some(u) = s.unattributed {
                let e = tokens
                    .entry(crate::engine::UNATTRIBUTED.to_owned())
                    .or_default();
                e.input = e.input.saturating_add(u.input);
                e.output = e.output.saturating_add(u.output);
            }
            input.services.push(Service {
                name: s.name.clone(),
                department: s.department.clone(),
                input_weight: s.input_weight.unwrap_or(1),
                output_weight: s.output_weight.unwrap_or(1),
                tokens,
            });
        }
    }

    /// `busy:` fractions by holder.
    fn busy_into(&self, input: &mut Input) -> Result<(), MeteringError> {
        for (i, b) in self.busy.iter().enumerate() {
            let micro = parse_decimal(&b.fraction.text(), 6, &format!("busy[{i}].fraction"))?;
            input.busy.push(BusyFraction {
                holder: b.holder.clone(),
                micro,
            });
        }
        Ok(())
    }
}

fn add_dcgm(
    input: &mut Input,
    sources: &[dcgm::Source],
    open: &mut dcgm::Opener<'_>,
) -> Result<(), MeteringError> {
    if sources.is_empty() {
        return Ok(());
    }
    let settings = dcgm::Settings {
        card_types: &input.card_types,
        window: input.config.window,
        lookback: input.config.lookback,
        sharing: &input.config.sharing,
    };
    let found = dcgm::read(sources, open, settings)?;
    input.holdings.extend(found.holdings);
    input.warnings.extend(found.warnings);
    Ok(())
}

/// Finds which entries of `value` fail to deserialize, so that a type error (a negative
/// count, a number too large) names its record: one `section[i]: message` line per failing
/// entry, or the whole-document message when no single entry is to blame.
fn locate(value: &serde_json::Value, whole: &serde_json::Error) -> MeteringError {
    fn check<T: serde::de::DeserializeOwned>(
        value: &serde_json::Value,
        key: &str,
        out: &mut Vec<String>,
    ) {
        match value.get(key) {
            Some(serde_json::Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    if let Err(e) = T::deserialize(item) {
                        out.push(format!("{key}[{i}]: {}", message(e)));
                    }
                }
            }
            Some(v) if !v.is_null() => {
                if let Err(e) = Vec::<T>::deserialize(v) {
                    out.push(format!("{key}: {}", message(e)));
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    if let Some(w) = value.get("window")
        && let Err(e) = WindowIn::deserialize(w)
    {
        out.push(format!("window: {}", message(e)));
    }
    check::<CardTypeIn>(value, "cardTypes", &mut out);
    check::<DepartmentIn>(value, "departments", &mut out);
    check::<HoldingIn>(value, "records", &mut out);
    check::<HoldingIn>(value, "series", &mut out);
    check::<HoldingIn>(value, "samples", &mut out);
    check::<ServiceIn>(value, "services", &mut out);
    check::<BusyIn>(value, "busy", &mut out);
    if out.is_empty() {
        MeteringError::Parse(message(whole))
    } else {
        MeteringError::Parse(out.join("\n"))
    }
}

fn bad_enum(field: &str, value: &str) -> MeteringError {
    MeteringError::InvalidNumber {
        field: field.to_owned(),
        value: value.to_owned(),
        reason: "not one of the allowed values".to_owned(),
    }
}

fn time(t: &TimeIn, field: &str) -> Result<i64, MeteringError> {
    match t {
        TimeIn::Seconds(s) => Ok(*s),
        TimeIn::Text(s) => parse_rfc3339(s)
            .or_else(|| s.trim().parse::<i64>().ok())
            .ok_or_else(|| MeteringError::InvalidNumber {
                field: field.to_owned(),
                value: s.clone(),
                reason: "expected an RFC 3339 time (2025-04-01T00:00:00Z) or integer seconds"
                    .to_owned(),
            }),
    }
}

fn cards(v: &DecimalIn, field: &str) -> Result<i128, MeteringError> {
    // cards with up to 6 decimals, then exactly representable in 1/L
    let micro = parse_decimal(&v.text(), 6, field)?;
    let units = micro * L;
    if units % 1_000_000 != 0 {
        return Err(MeteringError::WeightNotRepresentable {
            what: field.to_owned(),
            numerator: u64::try_from(micro).unwrap_or(u64::MAX),
            denominator: 1_000_000,
        });
    }
    Ok(units / 1_000_000)
}

fn parse_ratio(v: &str, field: &str) -> Result<(u64, u64), MeteringError> {
    let bad = || MeteringError::InvalidNumber {
        field: field.to_owned(),
        value: v.to_owned(),
        reason: "expected a ratio such as 1/7".to_owned(),
    };
    match v.split_once('/') {
        Some((n, d)) => Ok((
            n.trim().parse().map_err(|_| bad())?,
            d.trim().parse().map_err(|_| bad())?,
        )),
        None => Ok((v.trim().parse().map_err(|_| bad())?, 1)),
    }
}

fn owner(h: &HoldingIn) -> Owner {
    match (&h.department, &h.namespace) {
        (Some(d), _) => Owner::Department(d.clone()),
        (None, Some(ns)) => Owner::Namespace(ns.clone()),
        (None, None) => Owner::Department(crate::engine::UNASSIGNED.to_owned()),
    }
}

/// At most one of `gpus`, `mig` and `replicas` says what a holding is.
fn one_kind(h: &HoldingIn, what: &str) -> Result<(), MeteringError> {
    let given: Vec<&str> = [
        ("gpus", h.gpus.is_some()),
        ("mig", h.mig.is_some()),
        ("replicas", h.replicas.is_some()),
    ]
    .iter()
    .filter(|(_, present)| *present)
    .map(|(name, _)| *name)
    .collect();
    if given.len() > 1 || (h.gpus.is_some() && h.count.is_some()) {
        let mut fields = given.join(", ");
        if h.gpus.is_some() && h.count.is_some() {
            fields.push_str(", count");
        }
        return Err(MeteringError::Parse(format!(
            "{what}: give only one of gpus (or count), mig and replicas, not {fields}"
        )));
    }
    Ok(())
}

/// `replicasPerGpu` of the holding, else of its card type, else of the device plugin's
/// sharing configuration for the holding's node (the `holder` key up to its first `/`).
fn per_gpu(h: &HoldingIn, card_types: &[CardTypeIn], sharing: &ReplicasPerGpu) -> Option<u64> {
    h.replicas_per_gpu
        .or_else(|| {
            card_types
                .iter()
                .find(|c| c.name == h.card_type)
                .and_then(|c| c.replicas_per_gpu)
        })
        .or_else(|| {
            let node = h.holder.as_deref()?.split('/').next()?;
            sharing.of(node)
        })
}

fn shape(
    h: &HoldingIn,
    what: &str,
    card_types: &[CardTypeIn],
    sharing: &ReplicasPerGpu,
) -> Result<Shape, MeteringError> {
    one_kind(h, what)?;
    if let Some(p) = &h.mig {
        return Ok(Shape::Mig {
            profile: p.clone(),
            count: h.count.unwrap_or(1),
        });
    }
    if let Some(r) = h.replicas {
        let per = per_gpu(h, card_types, sharing).ok_or_else(|| MeteringError::InvalidNumber {
            field: format!("{what}.replicasPerGpu"),
            value: String::new(),
            reason: "replicas need replicasPerGpu (on the record, its card type, or the device \
                     plugin's sharing configuration of the holder's node)"
                .to_owned(),
        })?;
        return Ok(Shape::Fraction {
            replicas: r,
            per_gpu: per,
        });
    }
    Ok(Shape::Whole(h.gpus.or(h.count).unwrap_or(1)))
}

/// The shape of one counted holding of a series (values count instances, or replicas when
/// `replicas` or `replicasPerGpu` is given).
fn unit_shape(
    h: &HoldingIn,
    what: &str,
    card_types: &[CardTypeIn],
    sharing: &ReplicasPerGpu,
) -> Result<Shape, MeteringError> {
    one_kind(h, what)?;
    if let Some(p) = &h.mig {
        return Ok(Shape::Mig {
            profile: p.clone(),
            count: 1,
        });
    }
    if h.replicas.is_some() || h.replicas_per_gpu.is_some() {
        let per = per_gpu(h, card_types, sharing).ok_or_else(|| MeteringError::InvalidNumber {
            field: format!("{what}.replicasPerGpu"),
            value: String::new(),
            reason: "replicas need replicasPerGpu (on the series, its card type, or the device \
                     plugin's sharing configuration of the holder's node)"
                .to_owned(),
        })?;
        return Ok(Shape::Fraction {
            replicas: h.replicas.unwrap_or(1),
            per_gpu: per,
        });
    }
    Ok(Shape::Whole(h.gpus.unwrap_or(1)))
}
