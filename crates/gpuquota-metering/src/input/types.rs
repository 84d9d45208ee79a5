//! The typed form of the document's objects, one `…In` type per object, as `serde` reads them.

use std::collections::BTreeMap;

use super::convert::{bad_enum, time};
use crate::MeteringError;
use crate::dcgm;

/// A time: RFC 3339 text or integer seconds.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(untagged))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum TimeIn {
    /// Integer seconds.
    Seconds(i64),
    /// RFC 3339.
    Text(String),
}

/// A decimal given as a string (`"4.50"`) or a YAML number.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(untagged))]
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
    pub(super) fn text(&self) -> String {
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
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WindowIn {
    /// Start.
    pub start: TimeIn,
    /// End.
    pub end: TimeIn,
}

/// `cardTypes[]`.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
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
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(untagged))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum QuotaIn {
    /// Constant.
    Constant(DecimalIn),
    /// Piecewise constant: `[{start, cards}]`.
    Steps(Vec<QuotaStepIn>),
}

/// One quota step.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct QuotaStepIn {
    /// From this time on.
    pub start: TimeIn,
    /// Cards.
    pub cards: DecimalIn,
}

/// `departments[]`.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DepartmentIn {
    /// Name.
    pub name: String,
    /// Namespaces.
    #[cfg_attr(feature = "serde", serde(default))]
    pub namespaces: Vec<String>,
    /// Quota per card type.
    #[cfg_attr(feature = "serde", serde(default))]
    pub quota: BTreeMap<String, QuotaIn>,
}

/// One entry of `records`, `series` or `samples` (the fields each kind reads are listed in
/// the issue; the others must be absent).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
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

/// The sections whose entries are [`HoldingIn`]s; each reads some of the time fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Section {
    /// `records:` (intervals): `start`, `end`.
    Records,
    /// `series:` (grids): `start`, `step`, `values`, `lookback`.
    Series,
    /// `samples:` (raw points): `points`, `staleAt`, `lookback`.
    Samples,
}

impl Section {
    /// The section's key in the document.
    fn key(self) -> &'static str {
        match self {
            Section::Records => "records",
            Section::Series => "series",
            Section::Samples => "samples",
        }
    }

    /// The time fields the section reads.
    fn reads(self) -> &'static [&'static str] {
        match self {
            Section::Records => &["start", "end"],
            Section::Series => &["start", "step", "values", "lookback"],
            Section::Samples => &["points", "staleAt", "lookback"],
        }
    }
}

impl HoldingIn {
    /// The time fields in the order they are checked, each with whether it is set.
    fn time_fields(&self) -> [(&'static str, bool); 7] {
        [
            ("start", self.start.is_some()),
            ("end", self.end.is_some()),
            ("step", self.step.is_some()),
            ("values", self.values.is_some()),
            ("points", self.points.is_some()),
            ("staleAt", self.stale_at.is_some()),
            ("lookback", self.lookback.is_some()),
        ]
    }

    /// Refuses the first time field set that `section` does not read (`what` names the
    /// entry).
    fn reject(&self, what: &str, section: Section) -> Result<(), MeteringError> {
        let reads = section.reads();
        for (name, present) in self.time_fields() {
            if present && !reads.contains(&name) {
                return Err(MeteringError::Parse(format!(
                    "{what}: field {name} does not apply here"
                )));
            }
        }
        Ok(())
    }
}

/// The entries of `section` with their names (`records[0]`, …), each refused as it comes
/// when it sets a time field the section does not read.
pub(super) fn entries(
    list: &[HoldingIn],
    section: Section,
) -> impl Iterator<Item = Result<(String, &HoldingIn), MeteringError>> {
    list.iter().enumerate().map(move |(i, h)| {
        let what = format!("{}[{i}]", section.key());
        h.reject(&what, section)?;
        Ok((what, h))
    })
}

pub(super) fn missing(what: &str, field: &str) -> MeteringError {
    MeteringError::Parse(format!("{what}: missing field {field}"))
}

/// Token totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TokensIn {
    /// Input tokens.
    #[cfg_attr(feature = "serde", serde(default))]
    pub input: u64,
    /// Output tokens.
    #[cfg_attr(feature = "serde", serde(default))]
    pub output: u64,
}

/// `services[]`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
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
    #[cfg_attr(feature = "serde", serde(default))]
    pub tokens: BTreeMap<String, TokensIn>,
    /// Tokens with no department.
    pub unattributed: Option<TokensIn>,
}

/// `busy[]`.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BusyIn {
    /// Holder key.
    pub holder: String,
    /// Mean busy fraction in `[0, 1]`.
    pub fraction: DecimalIn,
}

/// `migWeights:` a policy name or a table `{profile: "n/d"}`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(untagged))]
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
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
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

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for DcgmIn {
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
                <DcgmEntryIn as serde::Deserialize>::deserialize(
                    serde::de::value::MapAccessDeserializer::new(map),
                )
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

    pub(super) fn source(&self, i: usize, name: &str) -> Result<dcgm::Source, MeteringError> {
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
