//! Reading the text: the YAML parser's budget, unknown fields as diagnostics (with a "did you
//! mean"), and parser messages that name the failing entry.

use gpuquota_model::diag::{Diagnostic, codes, did_you_mean};
#[cfg(feature = "yaml")]
use serde::Deserialize;

#[cfg(feature = "yaml")]
use super::{BusyIn, CardTypeIn, DepartmentIn, HoldingIn, ServiceIn, WindowIn};
#[cfg(feature = "yaml")]
use crate::MeteringError;

/// The YAML parser's options: the default node, event and document budgets guard against
/// storms in small inputs; a real month of grid values legitimately exceeds them, so they grow
/// with the input, which the reader bounds. Alias and depth limits stay as they are.
#[cfg(feature = "yaml")]
pub(super) fn yaml_options(n: usize) -> serde_saphyr::Options {
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

pub(super) fn unknown_field(source: &str, path: &str) -> Diagnostic {
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
#[cfg(feature = "yaml")]
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
#[cfg(feature = "yaml")]
fn message(e: impl std::fmt::Display) -> String {
    gpuquota_model::import::serde_message_with(&e.to_string(), UNTAGGED_FORMS)
}

#[cfg(feature = "yaml")]
pub(super) fn parse_err(e: impl std::fmt::Display) -> MeteringError {
    MeteringError::Parse(message(e))
}

/// Finds which entries of `value` fail to deserialize, so that a type error (a negative
/// count, a number too large) names its record: one `section[i]: message` line per failing
/// entry, or the whole-document message when no single entry is to blame.
#[cfg(feature = "yaml")]
pub(super) fn locate(value: &serde_json::Value, whole: &serde_json::Error) -> MeteringError {
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
