//! The `Advice` input: its document, its knobs' domains, its constraints and objectives.

use gpuquota_model::diag::{Diagnostic, Diagnostics, codes};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::INVALID_ADVICE;
use crate::metric::{Constraint, Metric, Objective};

/// The API version of an `Advice`.
pub const API_VERSION: &str = "gpuquota.dev/v1alpha1";

/// The largest grid an advice may have (the product of its knobs' domains).
pub const MAX_POINTS: usize = 100_000;

/// An `Advice` document as written (`gpuquota example advice`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AdviceDoc {
    /// `gpuquota.dev/v1alpha1`.
    pub api_version: String,
    /// `Advice`.
    pub kind: String,
    /// `name` names the advice.
    #[serde(default)]
    pub metadata: Metadata,
    /// What to vary, what must hold, what to optimise.
    pub spec: AdviceSpec,
}

/// `metadata` of an `Advice`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Metadata {
    /// The advice's name.
    #[serde(default)]
    pub name: String,
}

/// `spec` of an `Advice`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AdviceSpec {
    /// The `Simulation` file, relative to the advice's directory.
    pub scenario: String,
    /// The knobs, each a sweep path with a domain.
    pub vary: Vec<KnobDoc>,
    /// Conditions every recommended configuration meets (`METRIC <= VALUE`, `METRIC >=
    /// VALUE`, `budget{name=B} not exceeded`).
    #[serde(default)]
    pub constraints: Vec<String>,
    /// The objectives, in tie-break order (`{minimize: METRIC}` or `{maximize: METRIC}`).
    pub objectives: Vec<ObjectiveDoc>,
}

/// One knob of `spec.vary`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct KnobDoc {
    /// A `gpuquota sim sweep --set` path (`clusterQueues.CQ[.FLAVOR[.RESOURCE]].FIELD`,
    /// `clusterQueues.CQ.fairSharing.weight`, `cohorts.COHORT.fairSharing.weight`,
    /// `resourceQuotas.NAMESPACE.NAME.hard.RESOURCE`, `nodes.NODE.count`, KAI's
    /// `queues.QUEUE.RESOURCE.quota|limit|overQuotaWeight` and `queues.QUEUE.priority`, or a
    /// `spec` field of the scenario); with `split`, the queue segment is `*`.
    pub path: String,
    /// The values: a list of scalars, or `A..B` (every integer from A to B).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Values>,
    /// Shares a pool of this many units among the queues `*` matches: every way of writing
    /// it as a sum of non-negative multiples of `step`, one per queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<u32>,
    /// The ClusterQueues a `split` shares among (default: every one `*` matches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub among: Option<Vec<String>>,
    /// The unit of a `split` (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u32>,
    /// The price of one unit of this knob per month (a decimal in the bill's currency):
    /// a configuration costs it times (its value − the scenario's value) on top of the
    /// bill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_per_month: Option<String>,
}

/// A knob's `values`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(untagged)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum Values {
    /// Scalars, as written.
    List(Vec<Value>),
    /// `A..B`.
    Range(String),
}

/// One objective: exactly one of `minimize` and `maximize`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ObjectiveDoc {
    /// A metric to make as small as possible.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimize: Option<String>,
    /// A metric to make as large as possible.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximize: Option<String>,
}

/// A knob with its domain expanded.
#[derive(Debug, Clone, PartialEq)]
pub struct Knob {
    /// The path as written.
    pub path: String,
    /// Per value: the sweep parameters it sets (one, or one per queue of a split).
    pub settings: Vec<Vec<(String, String)>>,
    /// Per value: how it is shown (`8`, or `assistant:8 translation:2` for a split).
    pub labels: Vec<String>,
    /// Per value: its number of units for `costPerMonth` (`None`: not a whole number).
    pub units: Vec<Option<i64>>,
    /// `costPerMonth` in minor units (cents).
    pub cost_per_month: Option<i64>,
}

/// A parsed advice: the knobs, constraints and objectives, validated.
#[derive(Debug, Clone)]
pub struct Plan {
    /// `metadata.name`.
    pub name: String,
    /// `spec.scenario`.
    pub scenario: String,
    /// The knobs, in `vary` order (the first varies slowest in the grid's numbering).
    pub knobs: Vec<Knob>,
    /// The constraints, in order.
    pub constraints: Vec<Constraint>,
    /// The objectives, in tie-break order.
    pub objectives: Vec<Objective>,
    /// Unknown fields (warnings; errors under `--strict`).
    pub warnings: Diagnostics,
}

impl Plan {
    /// The number of configurations: the product of the knobs' domains.
    pub fn points(&self) -> usize {
        self.knobs.iter().map(|k| k.labels.len()).product()
    }

    /// The value index of every knob at grid point `i` (the first knob varies slowest).
    pub fn coordinates(&self, mut i: usize) -> Vec<usize> {
        let mut out = vec![0; self.knobs.len()];
        for (k, knob) in self.knobs.iter().enumerate().rev() {
            let n = knob.labels.len().max(1);
            out[k] = i % n;
            i /= n;
        }
        out
    }

    /// The grid point of value indices `c` ([`Plan::coordinates`]' inverse).
    pub fn index(&self, c: &[usize]) -> usize {
        self.knobs
            .iter()
            .zip(c)
            .fold(0, |acc, (k, &v)| acc * k.labels.len() + v)
    }

    /// The sweep parameters of value indices `c`.
    pub fn settings(&self, c: &[usize]) -> Vec<(String, String)> {
        self.knobs
            .iter()
            .zip(c)
            .flat_map(|(k, &v)| k.settings[v].iter().cloned())
            .collect()
    }
}

fn invalid(field: &str, message: String) -> Diagnostics {
    Diagnostics(vec![
        Diagnostic::error(INVALID_ADVICE, message).field(field.to_owned()),
    ])
}

/// Money as minor units (two decimals): `"24000"`, `"1.5"`, `"0.25"`.
pub(crate) fn cents(s: &str) -> Option<i64> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if int.is_empty()
        || frac.len() > 2
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let f: i64 = format!("{frac:0<2}").parse().ok()?;
    int.parse::<i64>().ok()?.checked_mul(100)?.checked_add(f)
}

fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Every way to write `total` as `parts` non-negative multiples of `step`, the first part
/// largest first (lexicographically descending).
pub(crate) fn compositions(total: u32, step: u32, parts: usize) -> Vec<Vec<u32>> {
    fn go(left: u32, step: u32, parts: usize, cur: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
        if parts == 1 {
            cur.push(left);
            out.push(cur.clone());
            cur.pop();
            return;
        }
        let mut x = left;
        loop {
            cur.push(x);
            go(left - x, step, parts - 1, cur, out);
            cur.pop();
            if x < step {
                break;
            }
            x -= step;
        }
    }
    let mut out = Vec::new();
    if parts > 0 {
        go(total, step, parts, &mut Vec::new(), &mut out);
    }
    out
}

/// The number of compositions [`compositions`] makes, or `None` beyond `limit`.
fn composition_count(units: u64, parts: u64, limit: usize) -> Option<usize> {
    // C(units + parts − 1, parts − 1), stopping once it exceeds the limit
    let mut c: u128 = 1;
    for i in 1..parts {
        c = c.checked_mul(u128::from(units + i))? / u128::from(i);
        if c > limit as u128 {
            return None;
        }
    }
    usize::try_from(c).ok()
}

/// Reads an `Advice` from YAML text; `queues` lists the scenario's ClusterQueues whose
/// quota a `*` path names (each with the concrete path), for `split` knobs.
///
/// # Errors
/// Diagnostics naming the field: not YAML, not an `Advice`, a knob without exactly one of
/// `values` and `split`, an empty or too large domain, a metric or constraint that does not
/// parse, no objective, more than [`MAX_POINTS`] configurations.
pub fn parse(
    name: &str,
    text: &str,
    queues: &dyn Fn(&str) -> Vec<(String, String)>,
) -> Result<Plan, Diagnostics> {
    let value: Value = serde_saphyr::from_str(text).map_err(|e| {
        Diagnostics(vec![
            Diagnostic::error(codes::MALFORMED, e.to_string()).source(name),
        ])
    })?;
    let mut warnings = Diagnostics::default();
    let mut unknown = Vec::new();
    let doc: AdviceDoc = serde_ignored::deserialize(value, |p| unknown.push(p.to_string()))
        .map_err(|e| {
            Diagnostics(vec![
                Diagnostic::error(codes::INVALID_TYPE, e.to_string()).source(name),
            ])
        })?;
    for u in unknown {
        warnings.push(
            Diagnostic::warning(codes::UNKNOWN_FIELD, format!("unknown field {u}"))
                .source(name)
                .field(u),
        );
    }
    if doc.kind != "Advice" || doc.api_version != API_VERSION {
        return Err(invalid(
            "kind",
            format!(
                "{name}: expected apiVersion {API_VERSION}, kind Advice (got {} {})",
                doc.api_version, doc.kind
            ),
        ));
    }
    let mut knobs = Vec::new();
    for (i, k) in doc.spec.vary.iter().enumerate() {
        let field = format!("spec.vary[{i}]");
        let cost_per_month = match &k.cost_per_month {
            None => None,
            Some(c) => Some(cents(c).ok_or_else(|| {
                invalid(
                    &format!("{field}.costPerMonth"),
                    format!(
                        "{}: costPerMonth {c:?} is not an amount with at most two decimals",
                        k.path
                    ),
                )
            })?),
        };
        let (settings, labels): (Vec<Vec<(String, String)>>, Vec<String>) = match (
            &k.values, k.split,
        ) {
            (Some(v), None) => {
                let vals: Vec<String> = match v {
                    Values::Range(r) => {
                        gpuquota_sim::sweep::Axis::parse(&format!("x={r}"))
                            .map_err(|e| {
                                invalid(&format!("{field}.values"), format!("{}: {e}", k.path))
                            })?
                            .values
                    }
                    Values::List(l) => l
                        .iter()
                        .map(scalar_text)
                        .collect::<Option<Vec<_>>>()
                        .ok_or_else(|| {
                            invalid(
                                &format!("{field}.values"),
                                format!("{}: values must be scalars", k.path),
                            )
                        })?,
                };
                if k.path.split('.').any(|s| s == "*") {
                    return Err(invalid(
                        &field,
                        format!(
                            "{}: a `*` path shares a pool: give `split: N`, not values",
                            k.path
                        ),
                    ));
                }
                (
                    vals.iter()
                        .map(|v| vec![(k.path.clone(), v.clone())])
                        .collect(),
                    vals,
                )
            }
            (None, Some(total)) => {
                let step = k.step.unwrap_or(1);
                if step == 0 || total % step != 0 {
                    return Err(invalid(
                        &format!("{field}.step"),
                        format!("{}: split {total} is not a multiple of step {step}", k.path),
                    ));
                }
                let mut qs = queues(&k.path);
                if let Some(among) = &k.among {
                    if let Some(q) = among.iter().find(|q| !qs.iter().any(|(x, _)| x == *q)) {
                        return Err(invalid(
                            &format!("{field}.among"),
                            format!("{}: ClusterQueue {q:?} has no such quota", k.path),
                        ));
                    }
                    qs.retain(|(q, _)| among.contains(q));
                }
                if qs.is_empty() {
                    return Err(invalid(
                        &format!("{field}.path"),
                        format!("{}: `*` matches no ClusterQueue with such a quota", k.path),
                    ));
                }
                if composition_count(u64::from(total / step), qs.len() as u64, MAX_POINTS).is_none()
                {
                    return Err(invalid(
                        &field,
                        format!(
                            "{}: splitting {total} among {} queues makes more than {MAX_POINTS} configurations",
                            k.path,
                            qs.len()
                        ),
                    ));
                }
                let comps = compositions(total, step, qs.len());
                let settings = comps
                    .iter()
                    .map(|c| {
                        qs.iter()
                            .zip(c)
                            .map(|((_, p), v)| (p.clone(), v.to_string()))
                            .collect()
                    })
                    .collect();
                let labels = comps
                    .iter()
                    .map(|c| {
                        qs.iter()
                            .zip(c)
                            .map(|((q, _), v)| format!("{q}:{v}"))
                            .collect::<Vec<_>>()
                            .join(" ")
                    })
                    .collect();
                (settings, labels)
            }
            _ => {
                return Err(invalid(
                    &field,
                    format!("{}: give exactly one of `values` and `split`", k.path),
                ));
            }
        };
        if labels.is_empty() {
            return Err(invalid(&field, format!("{}: no values", k.path)));
        }
        if cost_per_month.is_some() && k.split.is_some() {
            return Err(invalid(
                &format!("{field}.costPerMonth"),
                format!(
                    "{}: a split moves units between queues; it buys none",
                    k.path
                ),
            ));
        }
        let units = labels.iter().map(|l| l.parse::<i64>().ok()).collect();
        if cost_per_month.is_some() && labels.iter().any(|l| l.parse::<i64>().is_err()) {
            return Err(invalid(
                &format!("{field}.values"),
                format!("{}: costPerMonth needs whole-number values", k.path),
            ));
        }
        if knobs.iter().any(|x: &Knob| x.path == k.path) {
            return Err(invalid(&field, format!("{}: given twice", k.path)));
        }
        knobs.push(Knob {
            path: k.path.clone(),
            settings,
            labels,
            units,
            cost_per_month,
        });
    }
    if knobs.is_empty() {
        return Err(invalid(
            "spec.vary",
            "nothing to vary: give at least one knob".into(),
        ));
    }
    let total = knobs
        .iter()
        .try_fold(1usize, |n, k| n.checked_mul(k.labels.len()))
        .filter(|n| *n <= MAX_POINTS)
        .ok_or_else(|| {
            invalid(
                "spec.vary",
                format!(
                    "the knobs make more than the {MAX_POINTS} configurations an advice may have"
                ),
            )
        })?;
    let _ = total;
    let constraints = doc
        .spec
        .constraints
        .iter()
        .enumerate()
        .map(|(i, c)| {
            Constraint::parse(c).map_err(|m| invalid(&format!("spec.constraints[{i}]"), m))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let objectives = doc
        .spec
        .objectives
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let field = format!("spec.objectives[{i}]");
            match (&o.minimize, &o.maximize) {
                (Some(m), None) => Ok(Objective {
                    metric: Metric::parse(m).map_err(|e| invalid(&field, e))?,
                    maximize: false,
                }),
                (None, Some(m)) => Ok(Objective {
                    metric: Metric::parse(m).map_err(|e| invalid(&field, e))?,
                    maximize: true,
                }),
                _ => Err(invalid(
                    &field,
                    "give exactly one of `minimize` and `maximize`".into(),
                )),
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    if objectives.is_empty() {
        return Err(invalid(
            "spec.objectives",
            "no objective: give at least one".into(),
        ));
    }
    Ok(Plan {
        name: doc.metadata.name,
        scenario: doc.spec.scenario,
        knobs,
        constraints,
        objectives,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compositions_sum_to_the_pool() {
        let c = compositions(4, 2, 3);
        assert_eq!(
            c,
            [
                vec![4, 0, 0],
                vec![2, 2, 0],
                vec![2, 0, 2],
                vec![0, 4, 0],
                vec![0, 2, 2],
                vec![0, 0, 4]
            ]
        );
        // C(14 + 2, 2) = 120 ways to share 14 cards among three queues
        assert_eq!(compositions(14, 1, 3).len(), 120);
        assert_eq!(composition_count(14, 3, 1000), Some(120));
        assert_eq!(composition_count(100, 10, 1000), None);
    }

    #[test]
    fn money_is_minor_units() {
        assert_eq!(cents("24000"), Some(2_400_000));
        assert_eq!(cents("1.5"), Some(150));
        assert_eq!(cents("0.25"), Some(25));
        assert_eq!(cents("1.005"), None);
        assert_eq!(cents("-1"), None);
    }
}
