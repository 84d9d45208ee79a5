//! The bill of a simulated run: `spec.metering` makes the simulator meter its own runs
//! through `gpuquota-metering` and add the `meter` report to its JSON as `chargeback`.
//!
//! `spec.metering` is the `meter` document (see `gpuquota_metering`) without `window` and
//! `records`: `currency`, `rounding`, `migWeights`, `basis`, `borrowed`, `idle`,
//! `cardTypes` (with `pricePerHour`, `model`, `capacity`, `replicasPerGpu`), `departments`
//! (with `namespaces`, `quota`). Each card type may add `flavors: [...]`: the Kueue
//! ResourceFlavors whose GPUs are that card type (a flavor named like a card type is that
//! card type without being listed). The simulator supplies the rest:
//!
//! - `window`: `spec.start` to the run's end (whole seconds);
//! - `records`: one per run and GPU flavor-resource, owner the workload's namespace, from
//!   the run's start to its end, floored to whole seconds (metering's resolution): `gpus`
//!   for `nvidia.com/gpu`, `mig` + `count` for `nvidia.com/mig-<profile>`, `replicas` for
//!   `nvidia.com/gpu.shared`, and `replicas` for `nvidia.com/gpu` too when its card type has
//!   `replicasPerGpu` (a time-sliced or MPS card type: the NVIDIA device plugin advertises
//!   `replicas × GPUs` of plain `nvidia.com/gpu` unless it renames them, so the quota a
//!   ClusterQueue admits against counts replicas; budgets weigh them the same way). Usage under the `resourcequota` engine has no flavor: it is
//!   the only card type's when there is one (MIG: the first card type whose model has the
//!   profile); GPU usage of no card type is left out with a warning;
//! - `departments[].quota`, when a department gives none and a ClusterQueue of the cluster
//!   has the department's name: its nominal GPUs per card type (MIG and replica resources weighted as metering weighs them) (under both
//!   engines: the platform's quota picture), so `borrowedHours` is the usage above nominal.
//!
//! Usage under the `resourcequota` engine has no flavor; it is charged to the card type of
//! the flavor [`unflavored_flavor`] picks (the workload's ClusterQueue's flavors in Kueue's
//! order, the node labels its `nodeSelector` asks for), and GPU-hour budgets filtered by
//! card type are charged the same way ([`unflavored_rate`]).
//!
//! The `chargeback` section is the `meter` JSON report (`window`, `currency`, `lines`,
//! `idle`, `totals`, `warnings`) plus `preempted`: per department and card type the GPU-hours
//! of runs that ended `Preempted` (lost work: a readmitted workload starts over, unless
//! `spec.resume`), `[{"department", "cardType", "hours"}]`, and `chargeLostWork`, the rule
//! the bill applied to them:
//!
//! - `spec.metering.chargeLostWork: true` (the default): the department that held the cards
//!   pays for them, preempted or not. The bill meters allocation, and the cards were held
//!   (nobody else could use them) until the preemption; `preempted` shows how much of its
//!   line was work that had to start over.
//! - `chargeLostWork: false`: the platform absorbs lost work. The preempted runs' hours are
//!   booked to a line of their own, department [`LOST_WORK`], per card type, so
//!   department lines + `lost-work` + idle still add up to the total; the departments' lines
//!   hold only the runs that finished or were still running at the end.
//!
//! Under `spec.resume` nothing is lost (a readmitted run continues), so both rules bill the
//! same.
//!
//! The meter report's warnings (`chargeback.warnings`, e.g. more cards held of a type than
//! its capacity) are also the run's warnings (code `metering`, field `spec.metering`): in the
//! top-level `warnings`, on stderr whatever the output format, errors under `--strict`.
//!
//! The KAI mode meters its runs the same way per node ([`kai_chargeback`]).
//!
//! Property (tested by proptest in `tests/all/bill.rs`, and for the KAI mode in
//! `tests/all/kai_budgets.rs`): the metered `allocatedHours` per
//! department and card type equal ∫ usage over the runs (Σ weight × (end − start)) exactly.

use std::collections::BTreeMap;

use gpuquota_metering::budget::{CardInfo, CardMap};
use gpuquota_metering::mig::MigGeometry;
use gpuquota_metering::money::L;
use gpuquota_model::diag::{Code, Diagnostic, Diagnostics};
use serde_json::{Map, Value, json};

use crate::report::Chargeback;
use crate::{Outcome, RunEnd, Scenario};

/// A problem of `spec.metering` or of metering the runs.
pub const METERING: Code = Code::new("metering");

/// The department of the bill's lost-work lines under `chargeLostWork: false` (module docs).
pub const LOST_WORK: &str = "lost-work";

/// `spec.metering.chargeLostWork` (default `true`); anything but a boolean is an error.
fn charge_lost_work(spec: &Map<String, Value>) -> Result<bool, Diagnostics> {
    match spec.get("chargeLostWork") {
        None => Ok(true),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(Diagnostics(vec![
            Diagnostic::error(
                METERING,
                format!("must be true or false (whether the bill charges the hours of preempted runs), got {other}"),
            )
            .field("spec.metering.chargeLostWork"),
        ])),
    }
}

/// The card types of `spec.metering` with their flavors, for budgets and records.
pub fn card_map(metering: Option<&Value>) -> CardMap {
    let Some(cards) = metering.and_then(|m| m["cardTypes"].as_array()) else {
        return CardMap::default();
    };
    CardMap::new(
        cards
            .iter()
            .filter_map(|c| {
                let name = c["name"].as_str()?.to_owned();
                Some(CardInfo {
                    name,
                    flavors: c["flavors"]
                        .as_array()
                        .map(|f| {
                            f.iter()
                                .filter_map(|x| x.as_str().map(str::to_owned))
                                .collect()
                        })
                        .unwrap_or_default(),
                    geometry: c["model"].as_str().and_then(MigGeometry::builtin),
                    replicas_per_gpu: c["replicasPerGpu"].as_u64(),
                })
            })
            .collect(),
    )
}

/// [`CardMap::weigh`], with `nvidia.com/gpu` of a card type that has `replicasPerGpu`
/// weighed as a replica (the device plugin advertises time-sliced or MPS replicas under the
/// plain name unless it renames them).
pub fn weigh(cards: &CardMap, flavor: &str, resource: &str) -> Option<(String, i128)> {
    let replicated = !flavor.is_empty()
        && cards
            .card_of(flavor)
            .is_some_and(|c| c.replicas_per_gpu.is_some());
    if resource == "nvidia.com/gpu" && replicated {
        cards.weigh(flavor, "nvidia.com/gpu.shared")
    } else {
        cards.weigh(flavor, resource)
    }
}

fn card_for(cards: &CardMap, flavor: &str, resource: &str) -> Option<(String, Value)> {
    let (mut card, _) = cards.weigh(flavor, resource)?;
    if flavor.is_empty() && card.is_empty() && cards.cards.len() == 1 {
        card = cards.cards[0].name.clone();
    }
    if !cards.cards.iter().any(|c| c.name == card) {
        return None;
    }
    let replicated = cards
        .cards
        .iter()
        .find(|c| c.name == card)
        .is_some_and(|c| c.replicas_per_gpu.is_some());
    let shape = if resource == "nvidia.com/gpu" && replicated {
        // a time-sliced or MPS card type: the plugin advertises replicas as nvidia.com/gpu
        json!({"replicas": 1})
    } else if resource == "nvidia.com/gpu" {
        json!({"gpus": 1})
    } else if resource == "nvidia.com/gpu.shared" {
        json!({"replicas": 1})
    } else {
        json!({"mig": resource.trim_start_matches("nvidia.com/mig-"), "count": 1})
    };
    Some((card, shape))
}

/// Meters the outcome's runs: the `chargeback` section (module docs).
///
/// # Errors
/// Every problem of `spec.metering` (unknown card type, bad price, …) as metering reports it.
///
/// # Complexity
/// O(runs × flavor-resources) to build the records plus metering's own cost.
pub fn chargeback(
    sc: &Scenario,
    outcome: &Outcome,
) -> Result<(crate::report::Chargeback, Diagnostics), Diagnostics> {
    let err = |m: String| Diagnostics(vec![Diagnostic::error(METERING, m).field("spec.metering")]);
    let Some(Value::Object(spec)) = &sc.metering else {
        return Err(err("spec.metering must be a mapping".into()));
    };
    let cards = card_map(sc.metering.as_ref());
    let charge_lost = charge_lost_work(spec)?;
    let mut warnings = Diagnostics::default();
    let start_s = sc.start.unix_seconds();
    let end_s = start_s + outcome.end_ms.div_euclid(1000);
    let mut doc = prepare(spec, start_s, end_s, &mut warnings);
    let ts = |s: i64| Value::from(gpuquota_metering::time::format_rfc3339(s));
    // queues' nominal GPUs per card type, for departments named like a queue
    let mut nominal: BTreeMap<&str, BTreeMap<String, i128>> = BTreeMap::new();
    for (name, cq) in &sc.model.cluster_queues {
        for g in &cq.spec.resource_groups {
            for f in &g.flavors {
                for r in &f.resources {
                    let n = r
                        .nominal_quota
                        .as_ref()
                        .and_then(|q| q.value())
                        .unwrap_or(0);
                    if let Some((card, _)) = card_for(&cards, &f.name, r.name.as_str())
                        && let Some((_, w)) = weigh(&cards, &f.name, r.name.as_str())
                    {
                        *nominal
                            .entry(name.as_str())
                            .or_default()
                            .entry(card)
                            .or_default() += w * i128::from(n);
                    }
                }
            }
        }
    }
    if let Some(Value::Array(ds)) = doc.get_mut("departments") {
        for d in ds.iter_mut() {
            if let Value::Object(m) = d
                && !m.contains_key("quota")
                && let Some(q) = m
                    .get("name")
                    .and_then(Value::as_str)
                    .and_then(|n| nominal.get(n))
            {
                let cards: Map<String, Value> = q
                    .iter()
                    .map(|(c, u)| {
                        let micro = u * 1_000_000 / gpuquota_metering::money::L;
                        (
                            c.clone(),
                            gpuquota_metering::money::format_fixed(micro, 6).into(),
                        )
                    })
                    .collect();
                m.insert("quota".into(), Value::Object(cards));
            }
        }
    }
    let mut records = Vec::new();
    let mut dept_of_ns: BTreeMap<String, String> = BTreeMap::new();
    if let Some(ds) = spec.get("departments").and_then(Value::as_array) {
        for d in ds {
            for n in d["namespaces"].as_array().into_iter().flatten() {
                if let (Some(n), Some(name)) = (n.as_str(), d["name"].as_str()) {
                    dept_of_ns.entry(n.to_owned()).or_insert(name.to_owned());
                }
            }
        }
    }
    let mut lost: BTreeMap<(String, String), i128> = BTreeMap::new();
    let mut unmapped: BTreeMap<String, ()> = BTreeMap::new();
    for w in &outcome.workloads {
        let ns = w.key.split('/').next().unwrap_or("");
        for r in &w.runs {
            let (a, b) = (
                start_s + r.start_ms.div_euclid(1000),
                start_s + r.end_ms.div_euclid(1000),
            );
            if b <= a {
                continue;
            }
            for &(fr, amount) in &r.usage {
                let (f, res) = &outcome.frs[fr as usize];
                let res = res.as_str();
                if !res.starts_with("nvidia.com/") || amount <= 0 {
                    continue;
                }
                let guessed;
                let f = if f.is_empty() {
                    guessed = unflavored_flavor(sc, &w.key, res).unwrap_or_default();
                    &guessed
                } else {
                    f
                };
                let Some((card, mut shape)) = card_for(&cards, f, res) else {
                    if cards.weigh(f, res).is_some() {
                        unmapped.insert(format!("{f:?}/{res}"), ());
                    }
                    continue;
                };
                for k in ["gpus", "replicas", "count"] {
                    if shape.get(k).is_some() {
                        shape[k] = amount.into();
                    }
                }
                let lost_run = matches!(r.end, RunEnd::Preempted { .. }) && !sc.resume;
                let mut rec = if lost_run && !charge_lost {
                    json!({"department": LOST_WORK, "cardType": card, "start": ts(a), "end": ts(b)})
                } else {
                    json!({"namespace": ns, "cardType": card, "start": ts(a), "end": ts(b)})
                };
                if let (Value::Object(m), Value::Object(sh)) = (&mut rec, shape) {
                    m.extend(sh);
                }
                records.push(rec);
                if lost_run {
                    let dept = dept_of_ns
                        .get(ns)
                        .cloned()
                        .unwrap_or_else(|| gpuquota_metering::UNASSIGNED.to_owned());
                    let w = weigh(&cards, f, res).map_or(0, |x| x.1);
                    *lost.entry((dept, card)).or_default() +=
                        w * i128::from(amount) * i128::from(b - a);
                }
            }
        }
    }
    meter_doc(doc, records, lost, unmapped, warnings, charge_lost)
}

/// Meters a KAI run's runs: the `chargeback` section of the KAI report (module docs).
/// Each run holds, per node, the node's card type (the `cardTypes` entry whose `model`,
/// spaces written as `-`, is the node's `nvidia.com/gpu.product` label): `gpus` for whole
/// devices, `mig` + `count` per MIG resource. GPU fractions (KAI's `gpu-fraction`) have no
/// metering record and are left out with a warning; a node of no card type likewise.
/// Departments take the `quota` `spec.metering` gives them (KAI quotas have no card type).
///
/// # Errors
/// As [`chargeback`].
///
/// # Complexity
/// O(runs × nodes per run) plus metering's own cost.
pub fn kai_chargeback(
    sc: &crate::kai::KaiScenario,
    outcome: &crate::kai::KaiOutcome,
) -> Result<(crate::report::Chargeback, Diagnostics), Diagnostics> {
    use crate::kai::KaiRunEnd;
    let err = |m: String| Diagnostics(vec![Diagnostic::error(METERING, m).field("spec.metering")]);
    let Some(Value::Object(spec)) = &sc.metering else {
        return Err(err("spec.metering must be a mapping".into()));
    };
    let charge_lost = charge_lost_work(spec)?;
    let products = crate::kai::budget::card_products(sc.metering.as_ref());
    let known: Vec<&str> = products.iter().map(|(_, c)| c.as_str()).collect();
    let mut warnings = Diagnostics::default();
    let start_s = sc.start.unix_seconds();
    let end_s = start_s + outcome.end_ms.div_euclid(1000);
    let doc = prepare(spec, start_s, end_s, &mut warnings);
    let cards = card_map(sc.metering.as_ref());
    let ts = |s: i64| Value::from(gpuquota_metering::time::format_rfc3339(s));
    let dept_of_ns = departments(spec);
    let mut records = Vec::new();
    let mut lost: BTreeMap<(String, String), i128> = BTreeMap::new();
    let mut unmapped: BTreeMap<String, ()> = BTreeMap::new();
    let mut fractions = 0u64;
    for j in &outcome.jobs {
        let ns = j.key.split('/').next().unwrap_or("");
        for r in &j.runs {
            let (a, b) = (
                start_s + r.start_ms.div_euclid(1000),
                start_s + r.end_ms.div_euclid(1000),
            );
            if b <= a {
                continue;
            }
            let preempted = !sc.resume && !matches!(r.end, KaiRunEnd::Finished | KaiRunEnd::Cut);
            for (node, gpu, mig) in &r.devices {
                let labels = sc.model.nodes.get(node).map(|n| &n.metadata.labels);
                let card = labels.map_or_else(String::new, |l| {
                    crate::kai::budget::card_of_node(&products, l)
                });
                if !known.contains(&card.as_str()) {
                    unmapped.insert(format!("{node:?}/nvidia.com/gpu"), ());
                    continue;
                }
                let whole = gpu / 1_000_000_000;
                if gpu % 1_000_000_000 != 0 {
                    fractions += 1;
                }
                let mut shapes: Vec<(Value, i128)> = Vec::new();
                let replicas = labels.and_then(|l| {
                    l.get(gpuquota_model::workloads::sharing::REPLICAS_LABEL)?
                        .parse::<u64>()
                        .ok()
                        .filter(|r| *r > 1)
                });
                match replicas {
                    // a time-sliced or MPS node: each advertised GPU is one replica
                    Some(r) if whole > 0 => shapes.push((
                        json!({"replicas": whole as u64, "replicasPerGpu": r}),
                        L / i128::from(r) * whole,
                    )),
                    _ if whole > 0 => shapes.push((json!({"gpus": whole as u64}), L * whole)),
                    _ => {}
                }
                for (res, count) in mig {
                    let w = weigh(&cards, &card, res).map_or(0, |x| x.1);
                    shapes.push((
                        json!({"mig": res.trim_start_matches("nvidia.com/mig-"), "count": count}),
                        w * i128::from(*count),
                    ));
                }
                for (shape, weight) in shapes {
                    let mut rec = if preempted && !charge_lost {
                        json!({"department": LOST_WORK, "cardType": card, "start": ts(a), "end": ts(b)})
                    } else {
                        json!({"namespace": ns, "cardType": card, "start": ts(a), "end": ts(b)})
                    };
                    if let (Value::Object(m), Value::Object(sh)) = (&mut rec, shape) {
                        m.extend(sh);
                    }
                    records.push(rec);
                    if preempted {
                        let dept = dept_of_ns
                            .get(ns)
                            .cloned()
                            .unwrap_or_else(|| gpuquota_metering::UNASSIGNED.to_owned());
                        *lost.entry((dept, card.clone())).or_default() +=
                            weight * i128::from(b - a);
                    }
                }
            }
        }
    }
    if fractions > 0 {
        warnings.push(
            Diagnostic::warning(
                METERING,
                format!("{fractions} runs hold GPU fractions, which metering has no record for; their fractions are left out of the chargeback"),
            )
            .field("spec.metering"),
        );
    }
    meter_doc(doc, records, lost, unmapped, warnings, charge_lost)
}

/// Namespace → department of `spec.metering.departments` (the first that lists it).
fn departments(spec: &Map<String, Value>) -> BTreeMap<String, String> {
    let mut dept_of_ns: BTreeMap<String, String> = BTreeMap::new();
    if let Some(ds) = spec.get("departments").and_then(Value::as_array) {
        for d in ds {
            for n in d["namespaces"].as_array().into_iter().flatten() {
                if let (Some(n), Some(name)) = (n.as_str(), d["name"].as_str()) {
                    dept_of_ns.entry(n.to_owned()).or_insert(name.to_owned());
                }
            }
        }
    }
    dept_of_ns
}

/// `spec.metering` as a `meter` document without records: `window` and `records` the
/// simulator supplies (given ones are warned about and dropped), card types without
/// `flavors`, the window from `start_s` to `end_s`.
fn prepare(
    spec: &Map<String, Value>,
    start_s: i64,
    end_s: i64,
    warnings: &mut Diagnostics,
) -> Map<String, Value> {
    let mut doc: Map<String, Value> = spec.clone();
    // the simulator's own rule, not a meter field
    doc.remove("chargeLostWork");
    for k in ["window", "records"] {
        if doc.remove(k).is_some() {
            warnings.push(
                Diagnostic::warning(
                    METERING,
                    format!("spec.metering.{k} is ignored: the simulator supplies it"),
                )
                .field(format!("spec.metering.{k}")),
            );
        }
    }
    if let Some(Value::Array(cts)) = doc.get_mut("cardTypes") {
        for c in cts.iter_mut() {
            if let Value::Object(m) = c {
                m.remove("flavors");
            }
        }
    }
    let ts = |s: i64| Value::from(gpuquota_metering::time::format_rfc3339(s));
    doc.insert(
        "window".into(),
        json!({"start": ts(start_s), "end": ts(end_s)}),
    );
    doc
}

/// Meters `records` against the prepared `doc` (window and quotas set), adds `preempted`.
fn meter_doc(
    mut doc: Map<String, Value>,
    records: Vec<Value>,
    lost: BTreeMap<(String, String), i128>,
    unmapped: BTreeMap<String, ()>,
    mut warnings: Diagnostics,
    charge_lost_work: bool,
) -> Result<(crate::report::Chargeback, Diagnostics), Diagnostics> {
    let err = |m: String| Diagnostics(vec![Diagnostic::error(METERING, m).field("spec.metering")]);
    for k in unmapped.keys() {
        warnings.push(
            Diagnostic::warning(
                METERING,
                format!("GPU usage of flavor/resource {k} has no card type in spec.metering.cardTypes; left out of the chargeback"),
            )
            .field("spec.metering.cardTypes"),
        );
    }
    doc.insert("records".into(), Value::Array(records));
    let text = serde_json::to_string(&Value::Object(doc)).map_err(|e| err(e.to_string()))?;
    let d = gpuquota_metering::Document::from_yaml(&text).map_err(|e| err(e.to_string()))?;
    for w in d.diagnostics("spec.metering").0 {
        warnings.push(w);
    }
    let input = d.into_input(&[]).map_err(|e| err(e.to_string()))?;
    let report = gpuquota_metering::run(&input).map_err(|e| err(e.to_string()))?;
    // the bill's own warnings (cards held beyond a type's capacity, …) are the run's too:
    // on stderr whatever the output format, errors under --strict
    for w in &report.warnings {
        warnings.push(Diagnostic::warning(METERING, w.clone()).field("spec.metering"));
    }
    let preempted = lost
        .into_iter()
        .map(|((d, c), u)| crate::report::LostHoursOut {
            department: d,
            card_type: c,
            hours: gpuquota_metering::figure::GpuHours::from_card_second_units(u),
        })
        .collect();
    let out = crate::report::Chargeback {
        meter: report.to_output(),
        preempted,
        charge_lost_work,
    };
    Ok((out, warnings))
}

/// The flavor whose card type usage without a flavor (the `resourcequota` engine's) is
/// charged on, the same for the bill and for the budgets:
///
/// 1. the first flavor of the workload's ClusterQueue (through its LocalQueue) that covers
///    `resource` and whose `nodeLabels` agree with the `nodeSelector` of every PodSet
///    (Kueue's flavor order and node-label check);
/// 2. else the first ResourceFlavor (by name) whose `nodeLabels` the PodSets' `nodeSelector`
///    picks: at least one label in common and none in conflict;
/// 3. else the first flavor of its ClusterQueue that covers `resource`.
///
/// `None` leaves the card type to the card types themselves (the only one, or for MIG the
/// first whose model has the profile). A twin ([`crate::budget::TWIN_SUFFIX`]) is its
/// original.
///
/// # Complexity
/// O(PodSets × flavors × labels).
pub fn unflavored_flavor(sc: &Scenario, key: &str, resource: &str) -> Option<String> {
    let key = key.strip_suffix(crate::budget::TWIN_SUFFIX).unwrap_or(key);
    let w = sc.model.workloads.get(key)?;
    let selectors: Vec<&BTreeMap<String, String>> = w
        .spec
        .pod_sets
        .iter()
        .map(|p| &p.template.spec.node_selector)
        .collect();
    let agrees = |labels: &BTreeMap<String, String>| {
        selectors.iter().all(|sel| {
            labels
                .iter()
                .all(|(k, v)| sel.get(k).is_none_or(|x| x == v))
        })
    };
    let ns = key.split('/').next()?;
    let cq_flavors: Vec<&str> = w
        .spec
        .queue_name
        .as_deref()
        .and_then(|q| sc.model.local_queues.get(&format!("{ns}/{q}")))
        .and_then(|lq| sc.model.cluster_queues.get(&lq.spec.cluster_queue))
        .and_then(|cq| {
            cq.spec
                .resource_groups
                .iter()
                .find(|g| g.covered_resources.iter().any(|r| r.as_str() == resource))
        })
        .map(|g| g.flavors.iter().map(|f| f.name.as_str()).collect())
        .unwrap_or_default();
    let labels_of = |f: &str| {
        sc.model
            .resource_flavors
            .get(f)
            .map(|rf| &rf.spec.node_labels)
    };
    if let Some(f) = cq_flavors.iter().find(|f| labels_of(f).is_none_or(&agrees)) {
        return Some((*f).to_owned());
    }
    let picked = sc.model.resource_flavors.iter().find(|(_, rf)| {
        let l = &rf.spec.node_labels;
        agrees(l)
            && selectors
                .iter()
                .any(|sel| l.keys().any(|k| sel.contains_key(k)))
    });
    if let Some((name, _)) = picked {
        return Some(name.clone());
    }
    cq_flavors.first().map(|f| (*f).to_owned())
}

/// The card type and budget rate (`L` per whole GPU, as [`weigh`]) of `amount` of
/// `resource` used without a flavor by workload `key`: the card type of the flavor
/// [`unflavored_flavor`] picks (a flavor of no listed card type being its own, as budgets
/// weigh flavors), else the only card type (MIG: the first whose model has the profile).
/// `None` for a resource that is no GPU.
pub fn unflavored_rate(
    sc: &Scenario,
    cards: &CardMap,
    key: &str,
    resource: &str,
    amount: i64,
) -> Option<(String, i128)> {
    let flavor = unflavored_flavor(sc, key, resource).unwrap_or_default();
    let (mut card, w) = weigh(cards, &flavor, resource)?;
    if card.is_empty()
        && let [only] = cards.cards.as_slice()
    {
        card = only.name.clone();
    }
    Some((card, i128::from(amount).saturating_mul(w)))
}

/// Six-decimal hours rounded half-up to whole hours.
fn whole_hours(m: i128) -> String {
    format!("{}", (m + 500_000).div_euclid(1_000_000))
}

/// The bill of a `chargeback` section as table lines: a header, one row per
/// department and card type (allocated GPU-hours in whole hours, MIG instances weighted as
/// the meter weighs them, and the line's `total`), one `idle` row per card type (hours and
/// their cost), and a `total` row, which is the sum of the rows above it (metering's
/// `lines + idle = totals.cost`).
pub fn bill_rows(c: &Chargeback) -> Vec<String> {
    let m = &c.meter;
    let mut t = gpuquota_model::text::Table::new(["department", "card type", "GPU-h", &m.currency])
        .right([2, 3]);
    for l in &m.lines {
        let name = match &l.service {
            Some(svc) => format!("{} ({svc})", l.department),
            None => l.department.clone(),
        };
        t.row([
            name,
            l.card_type.clone(),
            whole_hours(l.allocated_hours.micro()),
            l.total.to_string(),
        ]);
    }
    for i in &m.idle {
        t.row([
            "idle".to_owned(),
            i.card_type.clone(),
            whole_hours(i.hours.micro()),
            i.cost.to_string(),
        ]);
    }
    t.row([
        "total".to_owned(),
        String::new(),
        String::new(),
        m.totals.cost.to_string(),
    ]);
    t.render(gpuquota_model::text::Width::Full)
        .lines()
        .map(|l| l.trim_end().to_owned())
        .collect()
}

/// The lost work of a `chargeback` section in one sentence: the GPU-hours of
/// preempted runs per department and card type, and whether the bill charges them
/// (`chargeLostWork`).
pub fn lost_work_sentence(c: &Chargeback) -> String {
    let lost: Vec<String> = c
        .preempted
        .iter()
        .filter(|l| l.hours.micro() > 0)
        .map(|l| {
            format!(
                "{} {} h of {}",
                l.department,
                whole_hours(l.hours.micro()),
                l.card_type
            )
        })
        .collect();
    if lost.is_empty() {
        return "none (no run was preempted and restarted)".to_owned();
    }
    let rule = if c.charge_lost_work {
        "in the bill of the department that held the cards, as chargeLostWork: true says"
    } else {
        "not in the departments' bills: on the lost-work line, as chargeLostWork: false says"
    };
    format!(
        "{}: preempted runs that restarted from zero; {rule}",
        lost.join("; ")
    )
}
