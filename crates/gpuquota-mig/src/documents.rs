//! The documents of a `mig` input file: one planning input, mig-parted configs (bare or inside
//! a ConfigMap), and `Node` objects, in YAML (one or more documents) or JSON.
//!
//! Scalars follow Kubernetes' YAML reading: a quoted scalar is a string (`count: "0x10"` is a
//! type error, not 16); an unquoted `0x10` is the integer 16 as YAML's core schema reads it.
//! Booleans are YAML 1.2's `true`/`false` only: `node: n` is the string `n` (Kubernetes'
//! YAML 1.1 reader would make it `false`, which no string field accepts; a deliberate
//! deviation, so short node names stay names).

#[cfg(feature = "yaml")]
use indexmap::IndexMap;
#[cfg(feature = "yaml")]
use serde::de::DeserializeOwned;

use crate::input::PlanRequest;
#[cfg(feature = "yaml")]
use crate::input::{InputError, NodeSpec};
use crate::parted::MigPartedConfig;
#[cfg(feature = "yaml")]
use crate::tree::Tree;

/// What the documents of one input hold.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct MigDocuments {
    /// The planning input (also when only `Node` objects were given).
    pub request: Option<PlanRequest>,
    /// mig-parted configs, in document order.
    pub configs: Vec<MigPartedConfig>,
    /// Paths of unknown fields (`document 2: gpus.0.instnces`).
    pub unknown_fields: Vec<String>,
    /// Documents that were not read, with why (`document 3: kind Pod is not read`).
    pub skipped: Vec<String>,
}

/// Every field name of the planning input, the mig-parted config and the Node subset read,
/// for "did you mean" hints.
const FIELDS: &[&str] = &[
    "mode",
    "weights",
    "gpus",
    "demand",
    "nodes",
    "node",
    "index",
    "model",
    "instances",
    "busy",
    "profile",
    "start",
    "resource",
    "count",
    "weight",
    "name",
    "labels",
    "version",
    "mig-configs",
    "devices",
    "device-filter",
    "mig-enabled",
    "mig-devices",
];

/// The warning text for an unknown field path, with a "did you mean" where a known field is
/// close to its last segment.
pub fn unknown_field_message(path: &str) -> String {
    let last = path.rsplit(['.', ' ']).next().unwrap_or(path);
    match gpuquota_model::diag::did_you_mean(last, FIELDS) {
        Some(s) if s != last => format!("unknown field `{path}` ignored (did you mean `{s}`?)"),
        _ => format!("unknown field `{path}` ignored"),
    }
}

/// Splits `text` into documents and reads each.
///
/// # Errors
/// [`InputError::Parse`] for malformed YAML/JSON, a type error (with its field path), two
/// planning inputs in one file, or an input with nothing a `mig` command reads.
///
/// # Complexity
/// Linear in the input; the parser's node and document budgets grow with its size.
#[cfg(feature = "yaml")]
pub fn read_documents(text: &str) -> Result<MigDocuments, InputError> {
    let blank = text
        .lines()
        .map(str::trim)
        .all(|l| l.is_empty() || l.starts_with('#') || l == "---" || l == "...");
    if blank {
        return Err(InputError::Parse(
            "empty input: expected a mapping with `gpus` and `demand`".into(),
        ));
    }
    let values = parse_values(text)?;
    let many = values.len() > 1;
    let mut out = MigDocuments::default();
    for (i, v) in values.into_iter().enumerate() {
        let label = if many {
            format!("document {}: ", i + 1)
        } else {
            String::new()
        };
        read_one(v, &label, &mut out)?;
    }
    if out.request.is_none() && out.configs.is_empty() {
        return Err(InputError::Parse(
            "no planning input and no mig-parted config in the input".into(),
        ));
    }
    Ok(out)
}

#[cfg(feature = "yaml")]
fn read_one(v: Tree, label: &str, out: &mut MigDocuments) -> Result<(), InputError> {
    let Tree::Map(obj) = &v else {
        if v == Tree::Null {
            return Ok(());
        }
        return Err(InputError::Parse(format!("{label}expected a mapping")));
    };
    let kind = obj.get("kind").and_then(Tree::as_str).map(str::to_owned);
    match kind.as_deref() {
        Some("List") => {
            if let Some(Tree::Seq(items)) = obj.get("items") {
                for (k, item) in items.iter().enumerate() {
                    read_one(item.clone(), &format!("{label}items[{k}]: "), out)?;
                }
            }
            Ok(())
        }
        Some("ConfigMap") => {
            let name = obj
                .get("metadata")
                .and_then(|m| m.get("name"))
                .and_then(Tree::as_str)
                .unwrap_or("");
            let mut found = false;
            if let Some(Tree::Map(data)) = obj.get("data") {
                for (key, text) in data {
                    let Some(text) = text.as_str() else { continue };
                    let inner = parse_values(text).map_err(|e| {
                        InputError::Parse(format!("{label}ConfigMap {name:?} data.{key}: {e}"))
                    })?;
                    for doc in inner {
                        if doc.get("mig-configs").is_some() {
                            let cfg = typed::<MigPartedConfig>(
                                doc,
                                &format!("{label}ConfigMap {name:?} data.{key}: "),
                                &mut out.unknown_fields,
                            )?;
                            out.configs.push(cfg);
                            found = true;
                        }
                    }
                }
            }
            if !found {
                out.skipped.push(format!(
                    "{label}ConfigMap {name:?} holds no mig-parted config; skipped"
                ));
            }
            Ok(())
        }
        Some("Node") => {
            let meta = obj.get("metadata");
            let name = meta
                .and_then(|m| m.get("name"))
                .and_then(Tree::as_str)
                .unwrap_or("")
                .to_owned();
            let labels: IndexMap<String, String> = meta
                .and_then(|m| m.get("labels"))
                .and_then(Tree::as_map)
                .map(|l| {
                    l.iter()
                        .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_owned())))
                        .collect()
                })
                .unwrap_or_default();
            out.request
                .get_or_insert_with(PlanRequest::default)
                .nodes
                .push(NodeSpec { name, labels });
            Ok(())
        }
        Some(other) => {
            out.skipped.push(format!(
                "{label}kind {other} is not read by mig commands; skipped"
            ));
            Ok(())
        }
        None if obj.contains_key("mig-configs") => {
            let cfg = typed::<MigPartedConfig>(v, label, &mut out.unknown_fields)?;
            out.configs.push(cfg);
            Ok(())
        }
        None => {
            let req = typed::<PlanRequest>(v, label, &mut out.unknown_fields)?;
            match &mut out.request {
                Some(prev) if !prev.gpus.is_empty() || !prev.demand.is_empty() => {
                    Err(InputError::Parse(format!(
                        "{label}a second planning input: give one mapping with `gpus` and `demand` per file"
                    )))
                }
                Some(prev) => {
                    // Node objects came first: keep them beside the planning input.
                    let nodes = std::mem::take(&mut prev.nodes);
                    let mut req = req;
                    req.nodes.splice(0..0, nodes);
                    *prev = req;
                    Ok(())
                }
                None => {
                    out.request = Some(req);
                    Ok(())
                }
            }
        }
    }
}

/// Deserialises one document, collecting unknown field paths and naming the path of a type
/// error.
#[cfg(feature = "yaml")]
fn typed<T: DeserializeOwned>(
    v: Tree,
    label: &str,
    unknown: &mut Vec<String>,
) -> Result<T, InputError> {
    let mut cb = |p: serde_ignored::Path<'_>| unknown.push(format!("{label}{p}"));
    let de = serde_ignored::Deserializer::new(v, &mut cb);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." || path.is_empty() {
            InputError::Parse(format!("{label}{inner}"))
        } else {
            InputError::Parse(format!("{label}{path}: {inner}"))
        }
    })
}

/// JSON (one value or a stream) or YAML (one or more documents) as trees, keys in document
/// order.
#[cfg(feature = "yaml")]
fn parse_values(text: &str) -> Result<Vec<Tree>, InputError> {
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        let stream = serde_json::Deserializer::from_str(trimmed).into_iter::<Tree>();
        let parsed: Result<Vec<Tree>, _> = stream.collect();
        if let Ok(v) = parsed {
            return Ok(v);
        }
    }
    let n = text.len();
    let options = serde_saphyr::options! {
        strict_booleans: true,
        budget: serde_saphyr::budget! {
            max_documents: n.max(1_024),
            max_nodes: n.max(250_000),
            max_events: n.saturating_mul(2).max(1_000_000),
        },
    };
    serde_saphyr::from_multiple_with_options::<Tree>(text, options).map_err(|e| {
        let msg = e.to_string();
        let short: Vec<&str> = msg.lines().take(3).collect();
        InputError::Parse(format!("malformed YAML: {}", short.join(" ")))
    })
}
