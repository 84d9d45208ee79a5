//! Reading `kubectl get … -o yaml` dumps into replayable manifests and recorded histories
//! (the fields read are listed in the [module docs](super)).

use std::collections::{BTreeMap, BTreeSet};

use gpuquota_model::Timestamp;
use gpuquota_model::diag::{Code, Diagnostic, Diagnostics, codes};
use serde_json::{Map, Value, json};

use super::{End, Eviction, Recorded};

/// Objects of a history dump the replay does not read (a warning naming the count).
pub const HISTORY_OBJECT_SKIPPED: Code = Code::new("history-object-skipped");

/// The most bytes of one replay manifest document (well under the importer's 64 MiB per
/// source); a larger history is split into several.
pub const MANIFEST_CHUNK_BYTES: usize = 16 << 20;

const QUEUE_LABEL: &str = "kueue.x-k8s.io/queue-name";
const GPU: &str = "nvidia.com/gpu";
const POD_GROUP: &str = gpuquota_model::kai::POD_GROUP_ANNOTATION;

/// The annotation of a KAI PodGroup listing its runs that an eviction ended, as a JSON list
/// of `{"action", "startTime", "endTime"}` (the action `reclaim`, `preempt`,
/// `consolidation`, `stale` or `budget`; RFC 3339 times). KAI keeps no such history on its
/// objects (an evicted pod is deleted, the PodGroup's status holds its phase, pod counts
/// and scheduling conditions), so the simulator writes it ([`super::write`]); a PodGroup
/// without it has no recorded eviction.
pub const KAI_EVICTIONS_ANNOTATION: &str = "gpuquota.dev/evictions";

/// What a history dump holds.
#[derive(Debug, Clone, Default)]
pub struct History {
    /// The recorded histories, by key.
    pub records: Vec<Recorded>,
    /// The objects to replay, as `List` documents (JSON, which the YAML importer reads) of
    /// at most [`MANIFEST_CHUNK_BYTES`] each: the Workloads, Jobs and Pods without their
    /// `status`, each with its arrival as `creationTimestamp` and its recorded runtime as
    /// the `gpuquota.dev/runtime` annotation.
    pub manifests: Vec<String>,
    /// Objects counted but not read.
    pub warnings: Diagnostics,
}

/// Reads history dumps (display name, text).
///
/// # Errors
/// Every problem of every file (source, object and field named); nothing is returned then.
///
/// # Complexity
/// O(input size + objects × log objects).
pub fn load(files: &[(String, String)]) -> Result<History, Diagnostics> {
    load_for(files, false, true)
}

/// Reads history dumps for a KAI replay: the PodGroups (`scheduling.run.ai` `PodGroup`) and
/// their Pods (annotation `pod-group-name`); the Kueue objects are counted, not read.
///
/// # Errors
/// As [`load`].
///
/// # Complexity
/// As [`load`].
pub fn load_kai(files: &[(String, String)]) -> Result<History, Diagnostics> {
    load_for(files, true, true)
}

/// Reads history dumps; `fast`: through the fast reader where it reads the text (without,
/// serde-saphyr's whole trees only, for the tests that compare both).
fn load_for(files: &[(String, String)], kai: bool, fast: bool) -> Result<History, Diagnostics> {
    let mut errors = Diagnostics::default();
    let mut objects: Vec<(String, Value)> = Vec::new();
    for (name, text) in files {
        match documents(text, fast) {
            Ok(docs) => {
                let before = objects.len();
                for d in docs {
                    flatten(name, d, &mut objects);
                }
                if objects.len() == before {
                    errors.push(
                        Diagnostic::error(
                            codes::NO_OBJECTS,
                            "no object: expected the output of kubectl get … -o yaml",
                        )
                        .source(name.clone()),
                    );
                }
            }
            Err(e) => {
                let (code, message) = gpuquota_model::import::yaml_error(&e);
                errors.push(Diagnostic::error(code, message).source(name.clone()));
            }
        }
    }
    if errors.has_errors() {
        return Err(errors);
    }
    let mut r = Reader::default();
    // the Jobs and Pods that a Workload of the dump stands for: Kind/namespace/name
    for (_, o) in &objects {
        if kind_of(o) == ("kueue.x-k8s.io", "Workload") {
            let ns = str_at(o, &["metadata", "namespace"]).unwrap_or("default");
            for owner in arr_at(o, &["metadata", "ownerReferences"]) {
                if let (Some(k @ ("Job" | "Pod")), Some(n)) = (
                    owner.get("kind").and_then(Value::as_str),
                    owner.get("name").and_then(Value::as_str),
                ) {
                    r.owned.insert(format!("{k}/{ns}/{n}"));
                }
            }
        }
    }
    // the Pods of each PodGroup of the dump: namespace/group
    let mut members: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    if kai {
        for (_, o) in &objects {
            if kind_of(o) == ("", "Pod")
                && let Some(g) = str_at(o, &["metadata", "annotations", POD_GROUP])
            {
                let ns = str_at(o, &["metadata", "namespace"]).unwrap_or("default");
                members.entry(format!("{ns}/{g}")).or_default().push(o);
            }
        }
    }
    for (source, o) in &objects {
        match (kai, kind_of(o)) {
            (false, ("kueue.x-k8s.io", "Workload")) => r.workload(source, o, &mut errors),
            (false, ("batch", "Job")) => r.job(source, o, &mut errors),
            (false, ("", "Pod")) => r.pod(source, o, &mut errors),
            (true, ("scheduling.run.ai", "PodGroup")) => {
                r.pod_group(source, o, &members, &mut errors);
            }
            (true, ("", "Pod")) if str_at(o, &["metadata", "annotations", POD_GROUP]).is_some() => {
            }
            (true, (_, k)) => r.skip(source, &format!("{k} not read by a KAI replay")),
            (false, (_, k)) => r.skip(source, &format!("{k} not read")),
        }
    }
    if errors.has_errors() {
        return Err(errors);
    }
    let mut warnings = Diagnostics::default();
    for ((source, what), n) in &r.skipped {
        warnings.push(
            Diagnostic::warning(
                HISTORY_OBJECT_SKIPPED,
                format!("{n} objects skipped ({what})"),
            )
            .source(source.clone()),
        );
    }
    for ((source, what), n) in &r.notes {
        warnings.push(
            Diagnostic::warning(HISTORY_OBJECT_SKIPPED, format!("{n} workloads {what}"))
                .source(source.clone()),
        );
    }
    let mut records: Vec<Recorded> = r.records.into_values().collect();
    records.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(History {
        records,
        manifests: chunks(&r.items),
        warnings,
    })
}

/// The documents of `text`: with `fast`, plain YAML (and JSON) through the fast reader
/// straight into pruned trees ([`Pruned`]); when it gives up (or without `fast`), whole
/// through serde-saphyr, which decides and words every problem.
fn documents(text: &str, fast: bool) -> Result<Vec<Value>, serde_saphyr::Error> {
    if fast && let Some(docs) = gpuquota_model::import::plain_yaml_documents::<Pruned>(text) {
        return Ok(docs.into_iter().map(|d| d.0).collect());
    }
    serde_saphyr::from_multiple_with_options::<Value>(text, dump_options(text.len()))
}

/// The YAML reader's options for a dump of `n` bytes: the parser's default budget (250,000
/// nodes, 64 MiB of scalar text) is far below what a month's dump holds (about 2.5 nodes per
/// 100 bytes, about half of its bytes scalar text), so the node, document, event and scalar
/// text limits grow with the input as the importer's do (scalar text at most the input's
/// bytes, which only tag shorthands could exceed); alias and depth limits stay at the
/// parser's defaults.
fn dump_options(n: usize) -> serde_saphyr::Options {
    /// The parser's default limit on scalar text (64 MiB).
    const DEFAULT_SCALAR_BYTES: usize = 64 * 1024 * 1024;
    serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_documents: n.max(1_024),
            max_nodes: n.max(250_000),
            max_events: n.saturating_mul(2).max(1_000_000),
            max_total_scalar_bytes: n.max(DEFAULT_SCALAR_BYTES),
        },
    }
}

/// `items` as `List` documents of at most [`MANIFEST_CHUNK_BYTES`] (an item larger than
/// that alone in one).
fn chunks(items: &[Value]) -> Vec<String> {
    const HEAD: &str = r#"{"apiVersion":"v1","kind":"List","items":["#;
    let mut out = Vec::new();
    let mut cur = String::from(HEAD);
    let mut n = 0usize;
    for i in items {
        let text = i.to_string();
        if n > 0 && cur.len() + text.len() + 3 > MANIFEST_CHUNK_BYTES {
            cur.push_str("]}");
            out.push(std::mem::replace(&mut cur, String::from(HEAD)));
            n = 0;
        }
        if n > 0 {
            cur.push(',');
        }
        cur.push_str(&text);
        n += 1;
    }
    cur.push_str("]}");
    out.push(cur);
    out
}

/// Which members of a mapping the reader keeps: everything, the named members (each with
/// what it keeps of its value), or the same of every element of a sequence.
#[derive(Clone, Copy)]
enum Keep {
    All,
    Members(&'static [(&'static str, Keep)]),
    Each(&'static Keep),
}

/// What the history reads of a document or object (the fields listed in the [module
/// docs](super)); a List's `items` are documents again.
static DOCUMENT: Keep = Keep::Members(&[
    ("apiVersion", Keep::All),
    ("kind", Keep::All),
    ("items", Keep::Each(&DOCUMENT)),
    (
        "metadata",
        Keep::Members(&[
            ("name", Keep::All),
            ("namespace", Keep::All),
            ("uid", Keep::All),
            ("labels", Keep::All),
            ("creationTimestamp", Keep::All),
            ("annotations", Keep::All),
            (
                "ownerReferences",
                Keep::Each(&Keep::Members(&[
                    ("kind", Keep::All),
                    ("name", Keep::All),
                    ("controller", Keep::All),
                ])),
            ),
        ]),
    ),
    ("spec", Keep::All),
    (
        "status",
        Keep::Members(&[
            (
                "conditions",
                Keep::Each(&Keep::Members(&[
                    ("type", Keep::All),
                    ("status", Keep::All),
                    ("reason", Keep::All),
                    ("message", Keep::All),
                    ("lastTransitionTime", Keep::All),
                ])),
            ),
            ("schedulingStats", Keep::All),
            ("requeueState", Keep::All),
            ("startTime", Keep::All),
            ("completionTime", Keep::All),
            ("phase", Keep::All),
            (
                "containerStatuses",
                Keep::Each(&Keep::Members(&[(
                    "state",
                    Keep::Members(&[("terminated", Keep::Members(&[("finishedAt", Keep::All)]))]),
                )])),
            ),
            ("accumulatedPastExexcutionTimeSeconds", Keep::All),
            ("accumulatedPastExecutionTimeSeconds", Keep::All),
        ]),
    ),
]);

/// A document as the history reads it: the tree of only the members [`DOCUMENT`] keeps,
/// built straight from the parser's events (the rest is skipped, not built). Where a kept
/// member is not of the shape the history reads (a scalar where a mapping is read), it is
/// kept whole, so what the reader sees of it, and the messages about it, do not change.
struct Pruned(Value);

impl<'de> serde::Deserialize<'de> for Pruned {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Pruned, D::Error> {
        serde::de::DeserializeSeed::deserialize(Prune(DOCUMENT), d).map(Pruned)
    }
}

/// The seed (and visitor) that builds a pruned tree.
#[derive(Clone, Copy)]
struct Prune(Keep);

impl<'de> serde::de::DeserializeSeed<'de> for Prune {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        match self.0 {
            Keep::All => serde::Deserialize::deserialize(d),
            _ => d.deserialize_any(self),
        }
    }
}

impl<'de> serde::de::Visitor<'de> for Prune {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a YAML node")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        serde::de::DeserializeSeed::deserialize(self, d)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        match self.0 {
            Keep::Each(k) => {
                while let Some(v) = seq.next_element_seed(Prune(*k))? {
                    out.push(v);
                }
            }
            _ => {
                while let Some(v) = seq.next_element::<Value>()? {
                    out.push(v);
                }
            }
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let Keep::Members(keep) = self.0 else {
            return serde::Deserialize::deserialize(serde::de::value::MapAccessDeserializer::new(
                map,
            ));
        };
        let mut out = Map::new();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match keep.iter().find(|(k, _)| *k == key) {
                Some((_, k)) => {
                    let v = map.next_value_seed(Prune(*k))?;
                    out.insert(key.into_owned(), v);
                }
                None => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok(Value::Object(out))
    }
}

/// The objects of a document: a List's items, or the object itself.
fn flatten(source: &str, d: Value, out: &mut Vec<(String, Value)>) {
    let is_list = d
        .get("kind")
        .and_then(Value::as_str)
        .is_some_and(|k| k == "List" || k.ends_with("List"))
        && d.get("items").is_some();
    match d {
        Value::Object(mut m) if is_list => {
            if let Some(Value::Array(items)) = m.remove("items") {
                for i in items {
                    flatten(source, i, out);
                }
            }
        }
        Value::Object(_) => out.push((source.to_owned(), d)),
        _ => {}
    }
}

/// (API group, kind) of an object.
fn kind_of(o: &Value) -> (&str, &str) {
    let api = o.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let group = api.rsplit_once('/').map_or("", |(g, _)| g);
    (group, o.get("kind").and_then(Value::as_str).unwrap_or(""))
}

fn at<'v>(o: &'v Value, path: &[&str]) -> Option<&'v Value> {
    path.iter().try_fold(o, |v, k| v.get(*k))
}

fn str_at<'v>(o: &'v Value, path: &[&str]) -> Option<&'v str> {
    at(o, path).and_then(Value::as_str)
}

fn arr_at<'v>(o: &'v Value, path: &[&str]) -> &'v [Value] {
    at(o, path)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// One object's diagnostics: its source, kind and `namespace/name`.
struct Obj<'a> {
    source: &'a str,
    kind: &'static str,
    key: String,
}

impl Obj<'_> {
    fn error(&self, field: &str, message: impl Into<String>) -> Diagnostic {
        Diagnostic::error(codes::INVALID, message)
            .source(self.source.to_owned())
            .object(self.kind, self.key.clone())
            .field(field.to_owned())
    }

    /// A time at `field` (RFC 3339) as unix ms; an error when present and not a time.
    fn time(&self, v: Option<&Value>, field: &str, errors: &mut Diagnostics) -> Option<i64> {
        let v = v.filter(|v| !v.is_null())?;
        let t = v.as_str().and_then(|s| Timestamp::parse(s).ok());
        match t.and_then(|t| i64::try_from(t.unix_nanos().div_euclid(1_000_000)).ok()) {
            Some(ms) => Some(ms),
            None => {
                errors.push(self.error(
                    field,
                    format!("not an RFC 3339 time: {v} (e.g. 2026-11-01T00:00:00Z)"),
                ));
                None
            }
        }
    }
}

/// The state of a read.
#[derive(Default)]
struct Reader {
    owned: BTreeSet<String>,
    records: BTreeMap<String, Recorded>,
    items: Vec<Value>,
    skipped: BTreeMap<(String, String), u64>,
    notes: BTreeMap<(String, String), u64>,
}

/// A condition of `status.conditions[]`: (index, status is True, reason, time value).
#[derive(Clone, Copy)]
struct Cond<'v> {
    index: usize,
    on: bool,
    reason: &'v str,
    message: &'v str,
    time: Option<&'v Value>,
}

fn condition<'v>(o: &'v Value, ty: &str) -> Option<Cond<'v>> {
    arr_at(o, &["status", "conditions"])
        .iter()
        .enumerate()
        .find(|(_, c)| c.get("type").and_then(Value::as_str) == Some(ty))
        .map(|(index, c)| Cond {
            index,
            on: c.get("status").and_then(Value::as_str) == Some("True"),
            reason: c.get("reason").and_then(Value::as_str).unwrap_or(""),
            message: c.get("message").and_then(Value::as_str).unwrap_or(""),
            time: c.get("lastTransitionTime"),
        })
}

/// GPUs of pod templates: Σ count × the containers' `nvidia.com/gpu` requests (limits when
/// no request), thousandths.
fn gpu_milli<'v>(sets: impl Iterator<Item = (u64, &'v Value)>) -> u64 {
    let mut total = 0u64;
    for (count, spec) in sets {
        let mut per = 0u64;
        for c in arr_at(spec, &["containers"]) {
            let q = at(c, &["resources", "requests", GPU])
                .or_else(|| at(c, &["resources", "limits", GPU]));
            let milli = q
                .and_then(|q| match q {
                    Value::String(s) => gpuquota_model::Quantity::parse(s).ok(),
                    Value::Number(n) => n.as_i64().map(gpuquota_model::Quantity::from_integer),
                    _ => None,
                })
                .and_then(|q| q.milli_value())
                .and_then(|m| u64::try_from(m).ok())
                .unwrap_or(0);
            per = per.saturating_add(milli);
        }
        total = total.saturating_add(per.saturating_mul(count));
    }
    total
}

/// The metadata of a replayed object: name, namespace, arrival, the labels, and the
/// runtime annotation.
fn replay_meta(o: &Value, created_ms: i64, runtime_ms: Option<i64>, uid: bool) -> Value {
    let mut m = Map::new();
    for k in ["name", "namespace", "labels"] {
        if let Some(v) = at(o, &["metadata", k]) {
            m.insert(k.to_owned(), v.clone());
        }
    }
    if uid && let Some(v) = at(o, &["metadata", "uid"]) {
        m.insert("uid".to_owned(), v.clone());
    }
    m.insert(
        "creationTimestamp".to_owned(),
        Value::String(crate::scenario::at_ms(Timestamp::EPOCH, created_ms).to_string()),
    );
    if let Some(rt) = runtime_ms {
        m.insert(
            "annotations".to_owned(),
            json!({ crate::scenario::RUNTIME_ANNOTATION: format!("{rt}ms") }),
        );
    }
    Value::Object(m)
}

impl Reader {
    fn note(&mut self, source: &str, what: &str) {
        *self
            .notes
            .entry((source.to_owned(), what.to_owned()))
            .or_insert(0) += 1;
    }

    fn skip(&mut self, source: &str, what: &str) {
        *self
            .skipped
            .entry((source.to_owned(), what.to_owned()))
            .or_insert(0) += 1;
    }

    /// The object's identity; an error when it has no name.
    fn identity<'a>(
        source: &'a str,
        kind: &'static str,
        o: &Value,
        errors: &mut Diagnostics,
    ) -> Option<(Obj<'a>, String, String)> {
        let ns = str_at(o, &["metadata", "namespace"])
            .unwrap_or("default")
            .to_owned();
        let name = str_at(o, &["metadata", "name"]).unwrap_or("").to_owned();
        let obj = Obj {
            source,
            kind,
            key: format!("{ns}/{name}"),
        };
        if name.is_empty() {
            errors.push(obj.error("metadata.name", "required: the object's name"));
            return None;
        }
        Some((obj, ns, name))
    }

    /// The arrival, required.
    fn created(obj: &Obj<'_>, o: &Value, errors: &mut Diagnostics) -> Option<i64> {
        let field = "metadata.creationTimestamp";
        let v = at(o, &["metadata", "creationTimestamp"]);
        if v.is_none_or(Value::is_null) {
            errors.push(obj.error(field, "required: the arrival of the recorded workload"));
            return None;
        }
        obj.time(v, field, errors)
    }

    fn workload(&mut self, source: &str, o: &Value, errors: &mut Diagnostics) {
        let Some((obj, ns, _)) = Self::identity(source, "Workload", o, errors) else {
            return;
        };
        let n0 = errors.0.len();
        let created = Self::created(&obj, o, errors);
        let cond_time = |c: &Option<Cond<'_>>, errors: &mut Diagnostics| {
            c.as_ref().and_then(|c| {
                obj.time(
                    c.time,
                    &format!("status.conditions[{}].lastTransitionTime", c.index),
                    errors,
                )
            })
        };
        let admitted_c = condition(o, "Admitted").filter(|c| c.on);
        let reserved_c = condition(o, "QuotaReserved").filter(|c| c.on);
        let ready_c = condition(o, "PodsReady").filter(|c| c.on);
        let finished_c = condition(o, "Finished").filter(|c| c.on);
        let evicted_c = condition(o, "Evicted");
        let preempted_c = condition(o, "Preempted");
        let admitted = cond_time(&admitted_c, errors).or(cond_time(&reserved_c, errors));
        let ready = cond_time(&ready_c, errors);
        let finished = cond_time(&finished_c, errors);
        let evicted_at = cond_time(&evicted_c.filter(|c| c.on), errors);
        if errors.0.len() > n0 {
            return;
        }
        let Some(created) = created else { return };
        let preempt_cause = preempted_c.as_ref().map_or("", |c| c.reason);
        let mut evictions: Vec<Eviction> = Vec::new();
        let stats = arr_at(o, &["status", "schedulingStats", "evictions"]);
        for (i, s) in stats.iter().enumerate() {
            let reason = s.get("reason").and_then(Value::as_str).unwrap_or("unknown");
            let cause = s
                .get("underlyingCause")
                .and_then(Value::as_str)
                .unwrap_or("");
            let Some(count) = s
                .get("count")
                .and_then(Value::as_u64)
                .and_then(|c| u32::try_from(c).ok())
            else {
                errors.push(obj.error(
                    &format!("status.schedulingStats.evictions[{i}].count"),
                    "not a count",
                ));
                return;
            };
            if count > 0 {
                evictions.push(Eviction {
                    at_ms: None,
                    reason: reason.to_owned(),
                    cause: cause.to_owned(),
                    count,
                });
            }
        }
        if let Some(c) = &evicted_c {
            let cause = if c.reason == "Preempted" {
                preempt_cause
            } else {
                ""
            };
            let reason = if c.on {
                c.reason
            } else if preempted_c.is_some() {
                // cleared by a later admission: the preemption condition keeps the reason
                "Preempted"
            } else {
                reason_of_cleared(c.message)
            };
            // the timed one replaces one of the counted evictions of its reason
            match evictions.iter_mut().find(|e| e.reason == reason) {
                Some(e) if c.on => {
                    e.count -= 1;
                    evictions.push(Eviction {
                        at_ms: evicted_at,
                        reason: reason.to_owned(),
                        cause: cause.to_owned(),
                        count: 1,
                    });
                }
                Some(_) => {}
                None => evictions.push(Eviction {
                    at_ms: evicted_at,
                    reason: reason.to_owned(),
                    cause: cause.to_owned(),
                    count: 1,
                }),
            }
            evictions.retain(|e| e.count > 0);
        }
        evictions.sort_by(|a, b| {
            (a.at_ms.is_some(), a.at_ms, &a.reason, &a.cause).cmp(&(
                b.at_ms.is_some(),
                b.at_ms,
                &b.reason,
                &b.cause,
            ))
        });
        let evicted_now = evicted_c.as_ref().is_some_and(|c| c.on);
        // an admission older than a current eviction is the run that was evicted
        let admitted = admitted.filter(|_| !evicted_now || finished.is_some());
        let start = admitted.or(ready);
        let runtime = match (start, finished) {
            (Some(s), Some(f)) if f >= s => Some(f - s),
            (Some(_), Some(_)) => {
                errors.push(obj.error(
                    &format!(
                        "status.conditions[{}].lastTransitionTime",
                        finished_c.as_ref().map_or(0, |c| c.index)
                    ),
                    "finished before it was admitted",
                ));
                return;
            }
            (None, Some(_)) => {
                self.note(
                    source,
                    "finished without a recorded admission: replayed without a runtime",
                );
                None
            }
            _ => None,
        };
        let spec = o.get("spec").cloned().unwrap_or(Value::Null);
        let sets = arr_at(o, &["spec", "podSets"]).iter().map(|p| {
            (
                p.get("count").and_then(Value::as_u64).unwrap_or(1),
                at(p, &["template", "spec"]).unwrap_or(&Value::Null),
            )
        });
        let gpus = gpu_milli(sets);
        let class = at(o, &["spec", "priorityClassRef", "name"])
            .or_else(|| at(o, &["spec", "priorityClassName"]))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let first_admitted = admitted.filter(|_| evictions.is_empty());
        let record = Recorded {
            key: obj.key.clone(),
            kind: "Workload".into(),
            object: obj.key.clone(),
            namespace: ns,
            queue: str_at(o, &["spec", "queueName"]).unwrap_or("").to_owned(),
            class,
            gpu_milli: gpus,
            created_ms: created,
            first_admitted_ms: first_admitted,
            admitted_ms: admitted,
            ready_ms: ready,
            evictions,
            requeues: at(o, &["status", "requeueState", "count"])
                .and_then(Value::as_u64)
                .and_then(|c| u32::try_from(c).ok())
                .unwrap_or(0),
            end: finished.map(|at_ms| End {
                at_ms,
                reason: finished_c.as_ref().map_or("", |c| c.reason).to_owned(),
            }),
            runtime_ms: runtime,
            past_run_ms: [
                "accumulatedPastExexcutionTimeSeconds",
                "accumulatedPastExecutionTimeSeconds",
            ]
            .iter()
            .find_map(|k| at(o, &["status", k]).and_then(Value::as_i64))
            .map_or(0, |s| s.saturating_mul(1000).max(0)),
        };
        let item = json!({
            "apiVersion": o.get("apiVersion").cloned().unwrap_or(Value::Null),
            "kind": "Workload",
            "metadata": replay_meta(o, created, runtime, false),
            "spec": spec,
        });
        self.add(record, item, errors, &obj);
    }

    fn add(&mut self, record: Recorded, item: Value, errors: &mut Diagnostics, obj: &Obj<'_>) {
        if self.records.contains_key(&record.key) {
            errors.push(
                Diagnostic::error(
                    codes::DUPLICATE_OBJECT,
                    format!("a second object replays as workload {}", record.key),
                )
                .source(obj.source.to_owned())
                .object(obj.kind, obj.key.clone()),
            );
            return;
        }
        self.records.insert(record.key.clone(), record);
        self.items.push(item);
    }

    /// A `batch/v1` Job without a Workload.
    fn job(&mut self, source: &str, o: &Value, errors: &mut Diagnostics) {
        let Some((obj, ns, name)) = Self::identity(source, "Job", o, errors) else {
            return;
        };
        if self.owned.contains(&format!("Job/{}", obj.key)) {
            return;
        }
        let Some(queue) = str_at(o, &["metadata", "labels", QUEUE_LABEL]) else {
            self.skip(source, "Job without a queue-name label");
            return;
        };
        let n0 = errors.0.len();
        let created = Self::created(&obj, o, errors);
        let start = obj.time(at(o, &["status", "startTime"]), "status.startTime", errors);
        let mut end = obj
            .time(
                at(o, &["status", "completionTime"]),
                "status.completionTime",
                errors,
            )
            .map(|t| (t, "Succeeded"));
        if end.is_none() {
            for (ty, reason) in [("Failed", "Failed"), ("Complete", "Succeeded")] {
                if let Some(c) = condition(o, ty).filter(|c| c.on) {
                    let f = format!("status.conditions[{}].lastTransitionTime", c.index);
                    end = obj.time(c.time, &f, errors).map(|t| (t, reason));
                    break;
                }
            }
        }
        if errors.0.len() > n0 {
            return;
        }
        let Some(created) = created else { return };
        let parallelism = at(o, &["spec", "parallelism"])
            .and_then(Value::as_u64)
            .unwrap_or(1);
        let tmpl = at(o, &["spec", "template", "spec"]).unwrap_or(&Value::Null);
        let uid = str_at(o, &["metadata", "uid"]).unwrap_or("");
        let wl = gpuquota_model::workloads::names::workload_name("Job", "batch", &name, uid);
        let class = str_at(o, &["metadata", "labels", "kueue.x-k8s.io/priority-class"])
            .or_else(|| str_at(tmpl, &["priorityClassName"]))
            .unwrap_or("")
            .to_owned();
        let Some(record) = self.run_record(
            &obj,
            (format!("{ns}/{wl}"), ns, queue.to_owned(), class),
            gpu_milli(std::iter::once((parallelism, tmpl))),
            (created, start, end),
            errors,
        ) else {
            return;
        };
        let mut spec = o.get("spec").cloned().unwrap_or(Value::Null);
        if let Some(s) = spec.as_object_mut() {
            s.insert("suspend".into(), Value::Bool(true));
        }
        let item = json!({
            "apiVersion": o.get("apiVersion").cloned().unwrap_or(Value::Null),
            "kind": "Job",
            "metadata": replay_meta(o, created, record.runtime_ms, true),
            "spec": spec,
        });
        self.add(record, item, errors, &obj);
    }

    /// A KAI PodGroup and its Pods (`members`, by `namespace/group`): arrival its
    /// `creationTimestamp`, admission the first pod's `status.startTime`, end the last
    /// `finishedAt` of the pods' containers once every pod is `Succeeded` or `Failed`.
    fn pod_group(
        &mut self,
        source: &str,
        o: &Value,
        members: &BTreeMap<String, Vec<&Value>>,
        errors: &mut Diagnostics,
    ) {
        let Some((obj, ns, _)) = Self::identity(source, "PodGroup", o, errors) else {
            return;
        };
        let pods = members.get(&obj.key).map_or(&[][..], Vec::as_slice);
        let n0 = errors.0.len();
        let created = Self::created(&obj, o, errors);
        let mut start: Option<i64> = None;
        let mut end: Option<(i64, &str)> = None;
        let mut done = !pods.is_empty();
        let mut failed = false;
        for p in pods {
            let pname = str_at(p, &["metadata", "name"]).unwrap_or("");
            let pobj = Obj {
                source,
                kind: "Pod",
                key: format!("{ns}/{pname}"),
            };
            if let Some(t) = pobj.time(at(p, &["status", "startTime"]), "status.startTime", errors)
            {
                start = Some(start.map_or(t, |s| s.min(t)));
            }
            let phase = str_at(p, &["status", "phase"]).unwrap_or("");
            failed |= phase == "Failed";
            if !matches!(phase, "Succeeded" | "Failed") {
                done = false;
                continue;
            }
            for (i, c) in arr_at(p, &["status", "containerStatuses"])
                .iter()
                .enumerate()
            {
                let f = format!("status.containerStatuses[{i}].state.terminated.finishedAt");
                if let Some(t) =
                    pobj.time(at(c, &["state", "terminated", "finishedAt"]), &f, errors)
                    && end.is_none_or(|(e, _)| t > e)
                {
                    end = Some((t, ""));
                }
            }
        }
        if errors.0.len() > n0 {
            return;
        }
        let Some(created) = created else { return };
        let end = end
            .filter(|_| done)
            .map(|(t, _)| (t, if failed { "Failed" } else { "Succeeded" }));
        let queue = str_at(o, &["spec", "queue"]).unwrap_or("").to_owned();
        let class = str_at(o, &["spec", "priorityClassName"])
            .unwrap_or("")
            .to_owned();
        let gpus = gpu_milli(
            pods.iter()
                .map(|p| (1, at(p, &["spec"]).unwrap_or(&Value::Null))),
        );
        let past = kai_evictions(&obj, o, errors);
        if errors.0.len() > n0 {
            return;
        }
        let Some(mut record) = self.run_record(
            &obj,
            (obj.key.clone(), ns.clone(), queue, class),
            gpus,
            (created, start, end),
            errors,
        ) else {
            return;
        };
        if let Some(first) = past.first() {
            record.first_admitted_ms = Some(first.0);
            record.past_run_ms = past.iter().map(|r| r.1 - r.0).sum();
            record.evictions = past
                .into_iter()
                .map(|(_, at, action)| Eviction {
                    at_ms: Some(at),
                    reason: if action == crate::kai::report::BUDGET_ACTION {
                        gpuquota_model::budget::BUDGET_EXHAUSTED.to_owned()
                    } else {
                        "Preempted".to_owned()
                    },
                    cause: action,
                    count: 1,
                })
                .collect();
        }
        let item = json!({
            "apiVersion": o.get("apiVersion").cloned().unwrap_or(Value::Null),
            "kind": "PodGroup",
            "metadata": replay_meta(o, created, record.runtime_ms, false),
            "spec": o.get("spec").cloned().unwrap_or(Value::Null),
        });
        self.add(record, item, errors, &obj);
        for p in pods {
            let mut meta = replay_meta(p, created, None, false);
            let group = str_at(p, &["metadata", "annotations", POD_GROUP]).unwrap_or("");
            if let Some(m) = meta.as_object_mut() {
                m.insert("annotations".into(), json!({ POD_GROUP: group }));
            }
            // the replay binds the pods anew: a recorded node would make them bound
            let mut spec = p.get("spec").cloned().unwrap_or(Value::Null);
            if let Some(s) = spec.as_object_mut() {
                s.remove("nodeName");
            }
            self.items.push(json!({
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": meta,
                "spec": spec,
            }));
        }
    }

    /// A Pod with the queue-name label and no controller.
    fn pod(&mut self, source: &str, o: &Value, errors: &mut Diagnostics) {
        let Some((obj, ns, name)) = Self::identity(source, "Pod", o, errors) else {
            return;
        };
        if self.owned.contains(&format!("Pod/{}", obj.key))
            || arr_at(o, &["metadata", "ownerReferences"])
                .iter()
                .any(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
        {
            return;
        }
        let Some(queue) = str_at(o, &["metadata", "labels", QUEUE_LABEL]) else {
            self.skip(source, "Pod without a queue-name label");
            return;
        };
        if str_at(o, &["metadata", "labels", "kueue.x-k8s.io/pod-group-name"]).is_some() {
            self.skip(source, "Pod of a pod group");
            return;
        }
        let n0 = errors.0.len();
        let created = Self::created(&obj, o, errors);
        let start = obj.time(at(o, &["status", "startTime"]), "status.startTime", errors);
        let phase = str_at(o, &["status", "phase"]).unwrap_or("");
        let mut end: Option<(i64, &str)> = None;
        if matches!(phase, "Succeeded" | "Failed") {
            for (i, c) in arr_at(o, &["status", "containerStatuses"])
                .iter()
                .enumerate()
            {
                let f = format!("status.containerStatuses[{i}].state.terminated.finishedAt");
                if let Some(t) = obj.time(at(c, &["state", "terminated", "finishedAt"]), &f, errors)
                    && end.is_none_or(|(e, _)| t > e)
                {
                    end = Some((t, phase));
                }
            }
        }
        if errors.0.len() > n0 {
            return;
        }
        let Some(created) = created else { return };
        let spec = o.get("spec").cloned().unwrap_or(Value::Null);
        let wl = gpuquota_model::workloads::names::workload_name(
            "Pod",
            "",
            &name,
            str_at(o, &["metadata", "uid"]).unwrap_or(""),
        );
        let class = str_at(&spec, &["priorityClassName"])
            .unwrap_or("")
            .to_owned();
        let Some(record) = self.run_record(
            &obj,
            (format!("{ns}/{wl}"), ns, queue.to_owned(), class),
            gpu_milli(std::iter::once((1, &spec))),
            (created, start, end),
            errors,
        ) else {
            return;
        };
        let item = json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": replay_meta(o, created, record.runtime_ms, true),
            "spec": spec,
        });
        self.add(record, item, errors, &obj);
    }

    /// The record of a Job or Pod: one run from `start` to `end`.
    fn run_record(
        &self,
        obj: &Obj<'_>,
        (key, namespace, queue, class): (String, String, String, String),
        gpus: u64,
        (created, start, end): (i64, Option<i64>, Option<(i64, &str)>),
        errors: &mut Diagnostics,
    ) -> Option<Recorded> {
        let runtime = match (start, end) {
            (Some(s), Some((e, _))) if e >= s => Some(e - s),
            (Some(_), Some(_)) => {
                errors.push(obj.error("status.startTime", "started after it ended"));
                return None;
            }
            _ => None,
        };
        Some(Recorded {
            key,
            kind: obj.kind.to_owned(),
            object: obj.key.clone(),
            namespace,
            queue,
            class,
            gpu_milli: gpus,
            created_ms: created,
            first_admitted_ms: start,
            admitted_ms: start,
            ready_ms: start,
            evictions: Vec::new(),
            requeues: 0,
            end: end.map(|(at_ms, r)| End {
                at_ms,
                reason: r.to_owned(),
            }),
            runtime_ms: runtime,
            past_run_ms: 0,
        })
    }
}

/// The earlier runs of a KAI PodGroup that an eviction ended, from its
/// [`KAI_EVICTIONS_ANNOTATION`] (`[{action, startTime, endTime}]`): (start, end, action) in
/// unix ms, in start order; empty without the annotation, an error naming the annotation
/// when it is not such a list or a run ends before it starts.
fn kai_evictions(obj: &Obj<'_>, o: &Value, errors: &mut Diagnostics) -> Vec<(i64, i64, String)> {
    let Some(text) = str_at(o, &["metadata", "annotations", KAI_EVICTIONS_ANNOTATION]) else {
        return Vec::new();
    };
    let field = format!("metadata.annotations[{KAI_EVICTIONS_ANNOTATION}]");
    let Ok(Value::Array(runs)) = serde_json::from_str::<Value>(text) else {
        errors.push(obj.error(
            &field,
            "not a JSON list of {action, startTime, endTime} (the evicted runs)",
        ));
        return Vec::new();
    };
    let mut out = Vec::with_capacity(runs.len());
    for (i, r) in runs.iter().enumerate() {
        let f = |k: &str| format!("{field}[{i}].{k}");
        let action = r.get("action").and_then(Value::as_str).unwrap_or("");
        if action.is_empty() {
            errors.push(obj.error(&f("action"), "required: the action that evicted the run"));
        }
        let start = obj.time(r.get("startTime"), &f("startTime"), errors);
        let end = obj.time(r.get("endTime"), &f("endTime"), errors);
        match (start, end) {
            (Some(s), Some(e)) if e >= s && !action.is_empty() => {
                out.push((s, e, action.to_owned()));
            }
            (Some(_), Some(_)) if !action.is_empty() => {
                errors.push(obj.error(&f("endTime"), "ends before it starts"));
            }
            (None, _) if r.get("startTime").is_none_or(Value::is_null) => {
                errors.push(obj.error(&f("startTime"), "required: when the run started"));
            }
            (_, None) if r.get("endTime").is_none_or(Value::is_null) => {
                errors.push(obj.error(&f("endTime"), "required: when it was evicted"));
            }
            _ => {}
        }
    }
    out.sort();
    out
}

/// The reason of an eviction cleared by a later admission, from Kueue's `Previously: …`
/// message when it names one, else `unknown`.
fn reason_of_cleared(message: &str) -> &'static str {
    for r in [
        "PodsReadyTimeout",
        "InactiveWorkload",
        "AdmissionCheck",
        "ClusterQueueStopped",
        "LocalQueueStopped",
        "Deactivated",
        "NodeFailures",
    ] {
        if message.contains(r) {
            return r;
        }
    }
    "unknown"
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMP: &str = include_str!("../../tests/data/history/dump.yaml");
    /// 2026-11-01T00:00:00Z, unix ms.
    const T0: i64 = 1_793_491_200_000;

    fn one(text: &str) -> Result<History, Diagnostics> {
        load(&[("dump.yaml".to_owned(), text.to_owned())])
    }

    fn rec<'h>(h: &'h History, key: &str) -> &'h Recorded {
        h.records.iter().find(|r| r.key == key).expect(key)
    }

    #[test]
    fn a_dump_beyond_the_parsers_default_scalar_text_reads() {
        // the fixture and a ConfigMap of 66,560 values of 1 KiB each: 65 MiB of scalar
        // text, past the parser's default of 64 MiB (a month of 100,000 Workloads holds
        // about 110 MiB)
        let mut text = String::from(DUMP);
        text.push_str("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: big, namespace: team-a}\ndata:\n");
        let value = "x".repeat(1_024);
        for i in 0..66_560 {
            text.push_str(&format!("  k{i:05}: {value}\n"));
        }
        let defaults = serde_saphyr::options! {
            budget: serde_saphyr::budget! {
                max_nodes: text.len(),
                max_events: text.len(),
            },
        };
        let err = serde_saphyr::from_multiple_with_options::<Value>(&text, defaults).unwrap_err();
        assert!(err.to_string().contains("scalar"), "{err}");
        let h = one(&text).unwrap();
        assert_eq!(h.records.len(), 6);
        // the limit is the input's size, so hostile input stays bounded by what was read
        let budget = dump_options(text.len()).budget.unwrap();
        assert_eq!(budget.max_total_scalar_bytes, text.len());
        assert_eq!(
            dump_options(1_000).budget.unwrap().max_total_scalar_bytes,
            64 * 1024 * 1024
        );
    }

    #[test]
    fn history_dump_records_admissions_evictions_and_ends() {
        let h = one(DUMP).unwrap();
        let prep = format!(
            "team-b/{}",
            gpuquota_model::workloads::names::workload_name(
                "Job",
                "batch",
                "prep-e",
                "0b7c1c1e-0000-4000-8000-000000000005"
            )
        );
        let keys: Vec<&str> = h.records.iter().map(|r| r.key.as_str()).collect();
        let mut want = vec![
            "team-a/eval-c",
            "team-a/job-urgent-3f2a1",
            "team-a/train-a",
            prep.as_str(),
            "team-b/sweep-b",
            "team-b/wait-d",
        ];
        want.sort_unstable();
        assert_eq!(keys, want);

        let a = rec(&h, "team-a/train-a");
        assert_eq!((a.kind.as_str(), a.queue.as_str()), ("Workload", "main"));
        assert_eq!((a.namespace.as_str(), a.class.as_str()), ("team-a", "low"));
        assert_eq!(a.gpu_milli, 4000);
        assert_eq!(a.created_ms, T0);
        assert_eq!(a.first_admitted_ms, Some(T0 + 10_000));
        assert_eq!(a.ready_ms, Some(T0 + 40_000));
        assert!(a.evictions.is_empty());
        // Finished 01:00:10 − Admitted 00:00:10
        assert_eq!(a.runtime_ms, Some(3_600_000));
        assert_eq!(
            a.end,
            Some(End {
                at_ms: T0 + 3_610_000,
                reason: "Succeeded".into()
            })
        );

        // preempted once (time lost when it was readmitted at 00:40), then failed at 02:40
        let b = rec(&h, "team-b/sweep-b");
        assert_eq!(
            b.evictions,
            [Eviction {
                at_ms: None,
                reason: "Preempted".into(),
                cause: "InCohortReclamation".into(),
                count: 1
            }]
        );
        assert_eq!((b.requeues, b.first_admitted_ms), (1, None));
        assert_eq!(b.admitted_ms, Some(T0 + 2_400_000));
        assert_eq!(b.runtime_ms, Some(7_200_000));
        assert_eq!(b.end.as_ref().map(|e| e.reason.as_str()), Some("Failed"));

        // evicted at 00:30 and pending since: the eviction is timed, nothing runs
        let c = rec(&h, "team-a/eval-c");
        assert_eq!(
            c.evictions,
            [Eviction {
                at_ms: Some(T0 + 1_800_000),
                reason: "Preempted".into(),
                cause: "InClusterQueue".into(),
                count: 1
            }]
        );
        assert_eq!(
            (c.admitted_ms, c.runtime_ms, c.end.clone()),
            (None, None, None)
        );

        // the Job's Workload stands for the Job: high priority, still running
        let u = rec(&h, "team-a/job-urgent-3f2a1");
        assert_eq!(u.class, "high");
        assert_eq!(u.created_ms, T0 + 1_790_000);
        assert_eq!(u.first_admitted_ms, Some(T0 + 1_800_000));
        assert_eq!((u.runtime_ms, u.end.clone()), (None, None));

        // a Job without a Workload: startTime to completionTime, 2 pods of 1 GPU
        let e = rec(&h, &prep);
        assert_eq!(
            (e.kind.as_str(), e.object.as_str()),
            ("Job", "team-b/prep-e")
        );
        assert_eq!(e.created_ms, T0 + 900_000);
        assert_eq!(e.first_admitted_ms, Some(T0 + 905_000));
        assert_eq!(e.runtime_ms, Some(1_800_000));
        assert_eq!(e.gpu_milli, 2000);

        let d = rec(&h, "team-b/wait-d");
        assert_eq!((d.created_ms, d.admitted_ms), (T0 + 1_200_000, None));
        assert_eq!(d.gpu_milli, 16_000);

        let warnings: Vec<String> = h.warnings.0.iter().map(|d| d.message.clone()).collect();
        assert_eq!(
            warnings,
            [
                "1 objects skipped (Job without a queue-name label)",
                "1 objects skipped (PodGroup not read)"
            ]
        );
    }

    #[test]
    fn history_manifests_replay_arrival_and_runtime_without_status() {
        let h = one(DUMP).unwrap();
        assert_eq!(h.manifests.len(), 1);
        let list: Value = serde_json::from_str(&h.manifests[0]).unwrap();
        let items = list["items"].as_array().unwrap();
        // 5 Workloads and the Job without one (its own Job, its pod, the others skipped)
        assert_eq!(items.len(), 6);
        assert!(items.iter().all(|i| i.get("status").is_none()));
        let a = items
            .iter()
            .find(|i| i["metadata"]["name"] == "train-a")
            .unwrap();
        assert_eq!(a["metadata"]["creationTimestamp"], "2026-11-01T00:00:00Z");
        assert_eq!(
            a["metadata"]["annotations"]["gpuquota.dev/runtime"],
            "3600000ms"
        );
        let e = items.iter().find(|i| i["kind"] == "Job").unwrap();
        assert_eq!(e["spec"]["suspend"], true);
        assert_eq!(e["metadata"]["uid"], "0b7c1c1e-0000-4000-8000-000000000005");
        // still running: no runtime, it runs to the end of the replay
        let u = items
            .iter()
            .find(|i| i["metadata"]["name"] == "job-urgent-3f2a1")
            .unwrap();
        assert!(u["metadata"].get("annotations").is_none());
        assert!(u["metadata"].get("ownerReferences").is_none());
    }

    #[test]
    fn a_pod_with_its_workload_in_the_dump_replays_once() {
        let dump = r#"
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata:
    name: solo
    namespace: ns
    creationTimestamp: "2026-11-01T00:00:00Z"
    labels: {kueue.x-k8s.io/queue-name: q}
  spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: "1"}}}]}
  status:
    phase: Succeeded
    startTime: "2026-11-01T00:01:00Z"
    containerStatuses:
    - {name: c, state: {terminated: {exitCode: 0, finishedAt: "2026-11-01T00:31:00Z"}}}
- apiVersion: kueue.x-k8s.io/v1beta1
  kind: Workload
  metadata:
    name: pod-solo-1a2b3
    namespace: ns
    creationTimestamp: "2026-11-01T00:00:00Z"
    ownerReferences: [{apiVersion: v1, kind: Pod, name: solo, controller: true}]
  spec: {queueName: q, podSets: [{name: main, count: 1, template: {spec: {containers: []}}}]}
"#;
        let h = one(dump).unwrap();
        let keys: Vec<&str> = h.records.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, ["ns/pod-solo-1a2b3"]);
        // without its Workload, the Pod is read: startTime to the container's finishedAt
        let alone = dump.split("- apiVersion: kueue.x-k8s.io").next().unwrap();
        let h = one(alone).unwrap();
        assert_eq!(h.records.len(), 1);
        let r = &h.records[0];
        assert_eq!((r.kind.as_str(), r.object.as_str()), ("Pod", "ns/solo"));
        assert_eq!(r.runtime_ms, Some(1_800_000));
        assert_eq!(r.first_admitted_ms, Some(T0 + 60_000));
        assert_eq!(r.end.as_ref().map(|e| e.reason.as_str()), Some("Succeeded"));
        assert_eq!(r.gpu_milli, 1000);
    }

    #[test]
    fn kai_pod_groups_record_their_pods_start_and_finish() {
        let dump = include_str!("../../tests/data/history/kai-dump.yaml");
        let h = load_kai(&[("kai-dump.yaml".to_owned(), dump.to_owned())]).unwrap();
        let keys: Vec<&str> = h.records.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, ["team-a/pg-serve-2", "team-a/pg-train-1"]);
        let t = rec(&h, "team-a/pg-train-1");
        assert_eq!(
            (t.kind.as_str(), t.queue.as_str(), t.class.as_str()),
            ("PodGroup", "vca", "train")
        );
        // two pods of 4 GPUs; the first started at 00:05, the last ended at 01:05 (failed)
        assert_eq!(t.gpu_milli, 8000);
        assert_eq!((t.created_ms, t.admitted_ms), (T0, Some(T0 + 300_000)));
        assert_eq!(
            t.end,
            Some(End {
                at_ms: T0 + 3_900_000,
                reason: "Failed".into()
            })
        );
        assert_eq!(t.runtime_ms, Some(3_600_000));
        // still running: no end, no runtime
        let s = rec(&h, "team-a/pg-serve-2");
        assert_eq!((s.queue.as_str(), s.class.as_str()), ("vcb", "inference"));
        assert_eq!(
            (s.created_ms, s.admitted_ms, s.runtime_ms, s.gpu_milli),
            (T0 + 1_800_000, Some(T0 + 1_860_000), None, 2000)
        );
        // the PodGroups with the runtime, their pods without status, nothing else
        let list: Value = serde_json::from_str(&h.manifests[0]).unwrap();
        let items = list["items"].as_array().unwrap();
        let kinds: Vec<(&str, &str)> = items
            .iter()
            .map(|i| {
                (
                    i["kind"].as_str().unwrap(),
                    i["metadata"]["name"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            kinds,
            [
                ("PodGroup", "pg-train-1"),
                ("Pod", "train-1-0"),
                ("Pod", "train-1-1"),
                ("PodGroup", "pg-serve-2"),
                ("Pod", "serve-2-0")
            ]
        );
        assert_eq!(
            items[0]["metadata"]["annotations"]["gpuquota.dev/runtime"],
            "3600000ms"
        );
        assert_eq!(
            items[1]["metadata"]["annotations"],
            json!({"pod-group-name": "pg-train-1"})
        );
        assert!(items.iter().all(|i| i.get("status").is_none()));
        let warnings: Vec<String> = h.warnings.0.iter().map(|d| d.message.clone()).collect();
        assert_eq!(
            warnings,
            ["1 objects skipped (Workload not read by a KAI replay)"]
        );
    }

    #[test]
    fn kai_pod_groups_read_their_evictions_from_the_annotation() {
        let dump = include_str!("../../tests/data/history/kai-reclaim-dump.yaml");
        let h = load_kai(&[("kai-reclaim-dump.yaml".to_owned(), dump.to_owned())]).unwrap();
        let a = rec(&h, "team-a/pg-a");
        // first run 00:00:20 → reclaimed at 00:31:00 (1,840 s); the last 01:32 → 04:32
        assert_eq!(
            (
                a.first_admitted_ms,
                a.admitted_ms,
                a.past_run_ms,
                a.runtime_ms
            ),
            (
                Some(T0 + 20_000),
                Some(T0 + 5_520_000),
                1_840_000,
                Some(10_800_000)
            )
        );
        assert_eq!(
            a.evictions,
            [Eviction {
                at_ms: Some(T0 + 1_860_000),
                reason: "Preempted".into(),
                cause: "reclaim".into(),
                count: 1
            }]
        );
        assert_eq!(a.gpu_milli, 8000);
        // pending: neither admitted nor ended
        let d = rec(&h, "team-a/pg-d");
        assert_eq!(
            (d.admitted_ms, d.end.as_ref(), d.gpu_milli),
            (None, None, 16_000)
        );
        // the replayed pods are bound anew: no recorded node
        let list: Value = serde_json::from_str(&h.manifests[0]).unwrap();
        let pods: Vec<&Value> = list["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["kind"] == "Pod")
            .collect();
        assert_eq!(pods.len(), 6);
        assert!(pods.iter().all(|p| p["spec"].get("nodeName").is_none()));
        assert_eq!(pods[0]["spec"]["schedulerName"], "kai-scheduler");
        // an annotation that is not the list of runs, and a run ending before it starts
        for (text, field, message) in [
            (
                "reclaim",
                "metadata.annotations[gpuquota.dev/evictions]",
                "not a JSON list of {action, startTime, endTime} (the evicted runs)",
            ),
            (
                r#"[{"action":"preempt","startTime":"2026-11-01T01:00:00Z","endTime":"2026-11-01T00:00:00Z"}]"#,
                "metadata.annotations[gpuquota.dev/evictions][0].endTime",
                "ends before it starts",
            ),
        ] {
            let bad = json!({"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
                "metadata": {"name": "g", "namespace": "ns",
                    "creationTimestamp": "2026-11-01T00:00:00Z",
                    "annotations": {KAI_EVICTIONS_ANNOTATION: text}},
                "spec": {"queue": "q"}});
            let e = load_kai(&[("bad.yaml".to_owned(), bad.to_string())]).unwrap_err();
            let d = &e.0[0];
            assert_eq!(
                (
                    d.field.as_str(),
                    d.message.as_str(),
                    d.source.as_str(),
                    d.name.as_str()
                ),
                (field, message, "bad.yaml", "ns/g"),
                "{e:?}"
            );
        }
    }

    #[test]
    fn history_manifests_split_into_lists_under_the_chunk_size() {
        let item = json!({"kind": "Workload", "pad": "x".repeat(MANIFEST_CHUNK_BYTES / 3)});
        let docs = chunks(&[item.clone(), item.clone(), item.clone(), item]);
        // two items of a third each fit one document with the List's head, a third does not
        assert_eq!(docs.len(), 2);
        for d in &docs {
            assert!(d.len() <= MANIFEST_CHUNK_BYTES);
            let v: Value = serde_json::from_str(d).unwrap();
            assert_eq!(v["items"].as_array().unwrap().len(), 2);
        }
        assert_eq!(
            chunks(&[]),
            [r#"{"apiVersion":"v1","kind":"List","items":[]}"#]
        );
    }

    #[test]
    fn the_fast_reader_keeps_only_what_the_history_reads() {
        let docs = gpuquota_model::import::plain_yaml_documents::<Pruned>(DUMP)
            .expect("the fixture is plain block YAML");
        let whole = documents(DUMP, false).unwrap();
        assert_eq!(docs.len(), whole.len());
        let train = |d: &Value| -> Value {
            d["items"]
                .as_array()
                .unwrap()
                .iter()
                .find(|o| o["metadata"]["name"] == "train-a")
                .unwrap()
                .clone()
        };
        let (fast, exact) = (train(&docs[0].0), train(&whole[0]));
        // what is read is kept as it was: the spec whole, the conditions' five fields
        assert_eq!(fast["spec"], exact["spec"]);
        assert_eq!(
            fast["metadata"]["creationTimestamp"],
            "2026-11-01T00:00:00Z"
        );
        assert_eq!(
            fast["status"]["conditions"][0]["type"],
            exact["status"]["conditions"][0]["type"]
        );
        // what is not read is not built
        assert!(exact["status"].get("admission").is_some());
        assert!(fast["status"].get("admission").is_none());
        assert!(exact["metadata"].get("resourceVersion").is_some());
        assert!(fast["metadata"].get("resourceVersion").is_none());
    }

    #[test]
    fn the_fast_reader_and_serde_saphyr_give_the_same_history() {
        let kai = include_str!("../../tests/data/history/kai-dump.yaml");
        // the fixtures, and the dump as kubectl's `-o json` prints it (one List)
        let items: Vec<Value> = documents(DUMP, false)
            .unwrap()
            .into_iter()
            .flat_map(|d| d["items"].as_array().cloned().unwrap_or_default())
            .collect();
        let json = serde_json::to_string_pretty(
            &json!({"apiVersion": "v1", "kind": "List", "items": items}),
        )
        .unwrap();
        for (name, text, kai) in [
            ("dump.yaml", DUMP, false),
            ("dump.json", json.as_str(), false),
            ("kai-dump.yaml", kai, true),
        ] {
            assert!(
                gpuquota_model::import::plain_yaml_documents::<Pruned>(text).is_some(),
                "{name} is read by the fast reader"
            );
            let files = [(name.to_owned(), text.to_owned())];
            let fast = load_for(&files, kai, true).unwrap();
            let slow = load_for(&files, kai, false).unwrap();
            assert_eq!(fast.records, slow.records, "{name}");
            assert_eq!(fast.manifests, slow.manifests, "{name}");
            assert_eq!(fast.warnings, slow.warnings, "{name}");
            assert!(!fast.records.is_empty(), "{name}");
        }
        // the JSON dump is the YAML one
        assert_eq!(one(&json).unwrap().records, one(DUMP).unwrap().records);
        // and the same errors: a field of the wrong form, a scalar the fast reader leaves
        // to serde-saphyr (`yes`), a duplicate key, text that is not YAML, no object
        for bad in [
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\nmetadata: {name: w, namespace: ns, creationTimestamp: 5}\n",
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\nmetadata: {name: w, namespace: ns, creationTimestamp: yes}\n",
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\nmetadata: {name: w, name: v}\n",
            "items: [",
            "just a string\n",
        ] {
            let files = [("dump.yaml".to_owned(), bad.to_owned())];
            let fast = load_for(&files, false, true).unwrap_err();
            assert_eq!(fast, load_for(&files, false, false).unwrap_err(), "{bad}");
            assert!(fast.has_errors(), "{bad}");
        }
    }

    #[test]
    fn history_problems_name_the_object_and_field() {
        let bad = "kind: List\napiVersion: v1\nitems:\n- apiVersion: kueue.x-k8s.io/v1beta1\n  kind: Workload\n  metadata: {name: w, namespace: ns, creationTimestamp: \"2026-11-01T00:00:00Z\"}\n  status:\n    conditions:\n    - {type: Admitted, status: \"True\", lastTransitionTime: yesterday}\n- apiVersion: batch/v1\n  kind: Job\n  metadata: {name: j, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\n";
        let e = one(bad).unwrap_err();
        let shown: Vec<(&str, &str, &str, &str)> =
            e.0.iter()
                .map(|d| {
                    (
                        d.kind.as_str(),
                        d.name.as_str(),
                        d.field.as_str(),
                        d.source.as_str(),
                    )
                })
                .collect();
        assert_eq!(
            shown,
            [
                (
                    "Workload",
                    "ns/w",
                    "status.conditions[0].lastTransitionTime",
                    "dump.yaml"
                ),
                ("Job", "ns/j", "metadata.creationTimestamp", "dump.yaml"),
            ]
        );
        assert!(e.0[0].message.contains("not an RFC 3339 time"), "{e:?}");
        let finished = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\nmetadata: {name: w, namespace: ns, creationTimestamp: \"2026-11-01T00:00:00Z\"}\nstatus:\n  conditions:\n  - {type: Finished, status: \"True\", reason: Succeeded, lastTransitionTime: \"2026-11-01T01:00:00Z\"}\n";
        let h = one(finished).unwrap();
        assert_eq!(h.records[0].runtime_ms, None);
        assert_eq!(
            h.warnings.0[0].message,
            "1 workloads finished without a recorded admission: replayed without a runtime"
        );
        // not YAML, and YAML without an object
        assert!(one("items: [").is_err());
        let none = one("just a string\n").unwrap_err();
        assert_eq!(none.0[0].code, codes::NO_OBJECTS);
    }
}
