//! The Prometheus text exposition the DCGM exporter serves, with timestamps, turned into
//! holdings (raw series) and busy fractions.
//!
//! Accepted spellings (§1.3): `Hostname` and `hostname`; `UUID` and `uuid`; the workload labels
//! `namespace`/`pod` (or `pod_namespace`/`pod_name`), and after a Prometheus scrape with
//! `honorLabels: false` (a line carrying `instance` or `job`) only `exported_namespace`/
//! `exported_pod`. A MIG instance is keyed by (host, UUID, `GPU_I_ID`) and weighted by its
//! `GPU_I_PROFILE`; a `vgpu` series is one time-slicing replica of its card.
//!
//! A device series that carries workload labels at a scrape is a holding by that namespace
//! from that scrape on (for at most the lookback); when a scrape of the same device no longer
//! carries it, the series is stale from that scrape on, as Prometheus marks it. Busy comes from
//! `DCGM_FI_PROF_GR_ENGINE_ACTIVE` (relative to the instance), else
//! `DCGM_FI_DEV_GPU_UTIL / 100`. Timestamps are milliseconds and are floored to seconds.

use std::collections::BTreeMap;

use crate::MeteringError;
use crate::engine::{CardType, Owner, RawSeries, Shape};

/// One parsed exposition line.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpositionSample {
    /// Metric name.
    pub metric: String,
    /// Labels in the order written.
    pub labels: Vec<(String, String)>,
    /// The value.
    pub value: f64,
    /// Timestamp in milliseconds, if written.
    pub timestamp_ms: Option<i64>,
    /// 1-based line number.
    pub line: usize,
}

impl ExpositionSample {
    /// The value of a label.
    pub fn label(&self, name: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

fn err(file: &str, line: usize, reason: impl Into<String>) -> MeteringError {
    MeteringError::Exposition {
        file: file.to_owned(),
        line,
        reason: reason.into(),
    }
}

/// Parses the Prometheus text exposition format (`# HELP`/`# TYPE` comments, then
/// `name{label="value",…} value [timestamp]` lines).
///
/// # Errors
/// [`MeteringError::Exposition`] naming the file and line of the first malformed line.
///
/// # Complexity
/// O(bytes).
pub fn parse_exposition(file: &str, text: &str) -> Result<Vec<ExpositionSample>, MeteringError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let name_end = line
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(line.len());
        let metric = &line[..name_end];
        if metric.is_empty() || metric.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(err(file, line_no, "expected a metric name"));
        }
        let mut rest = &line[name_end..];
        let mut labels = Vec::new();
        if let Some(r) = rest.strip_prefix('{') {
            let mut chars = r.char_indices().peekable();
            let consumed;
            loop {
                // skip blanks and commas
                while let Some((_, c)) = chars.peek() {
                    if *c == ',' || c.is_whitespace() {
                        chars.next();
                    } else {
                        break;
                    }
                }
                let Some((start, c)) = chars.next() else {
                    return Err(err(file, line_no, "unterminated label set"));
                };
                if c == '}' {
                    consumed = start + 1;
                    break;
                }
                if !(c.is_ascii_alphabetic() || c == '_') {
                    return Err(err(file, line_no, "expected a label name"));
                }
                let mut end = start + c.len_utf8();
                while let Some((j, c)) = chars.peek() {
                    if c.is_ascii_alphanumeric() || *c == '_' {
                        end = j + c.len_utf8();
                        chars.next();
                    } else {
                        break;
                    }
                }
                let key = r[start..end].to_owned();
                while let Some((_, c)) = chars.peek() {
                    if c.is_whitespace() {
                        chars.next();
                    } else {
                        break;
                    }
                }
                if chars.next().map(|x| x.1) != Some('=') {
                    return Err(err(file, line_no, format!("label {key}: expected '='")));
                }
                if chars.next().map(|x| x.1) != Some('"') {
                    return Err(err(file, line_no, format!("label {key}: expected '\"'")));
                }
                let mut value = String::new();
                let mut closed = false;
                while let Some((_, c)) = chars.next() {
                    match c {
                        '"' => {
                            closed = true;
                            break;
                        }
                        '\\' => match chars.next().map(|x| x.1) {
                            Some('n') => value.push('\n'),
                            Some('\\') => value.push('\\'),
                            Some('"') => value.push('"'),
                            _ => return Err(err(file, line_no, "invalid escape in label value")),
                        },
                        c => value.push(c),
                    }
                }
                if !closed {
                    return Err(err(
                        file,
                        line_no,
                        format!("label {key}: unterminated value"),
                    ));
                }
                labels.push((key, value));
            }
            let used = consumed;
            rest = &r[used..];
        }
        let mut parts = rest.split_whitespace();
        let value_text = parts
            .next()
            .ok_or_else(|| err(file, line_no, "missing value"))?;
        let value = match value_text {
            "NaN" => f64::NAN,
            "+Inf" | "Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            v => v
                .parse::<f64>()
                .map_err(|_| err(file, line_no, format!("invalid value {v:?}")))?,
        };
        let timestamp_ms = match parts.next() {
            Some(t) => Some(
                t.parse::<i64>()
                    .map_err(|_| err(file, line_no, format!("invalid timestamp {t:?}")))?,
            ),
            None => None,
        };
        if parts.next().is_some() {
            return Err(err(file, line_no, "trailing text after the timestamp"));
        }
        out.push(ExpositionSample {
            metric: metric.to_owned(),
            labels,
            value,
            timestamp_ms,
            line: line_no,
        });
    }
    Ok(out)
}

/// What [`to_series`] found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DcgmSeries {
    /// One raw series per (device, namespace, pod, replica).
    pub samples: Vec<RawSeries>,
    /// Warnings (lines of other metrics ignored, replica count guessed, …).
    pub warnings: Vec<String>,
}

fn norm(s: &str) -> String {
    s.trim().replace(' ', "-").to_ascii_lowercase()
}

type DeviceKey = (String, String, Option<String>);
/// (metric, sorted labels, second)
type SeriesAt = (String, Vec<(String, String)>, i64);
type AttrKey = (DeviceKey, String, String, Option<String>);

#[derive(Default)]
struct Attr {
    card: usize,
    profile: Option<String>,
    /// t → (busy from GR_ENGINE_ACTIVE, busy from GPU_UTIL), in millionths
    points: BTreeMap<i64, (Option<i128>, Option<i128>)>,
}

/// Turns an exposition file into holdings: one [`RawSeries`] per device and workload.
///
/// # Errors
/// [`MeteringError::Exposition`] for malformed lines, missing timestamps or UUIDs;
/// [`MeteringError::UnknownCardType`] for a `modelName` no card type names;
/// [`MeteringError::DuplicateTimestamp`] for one series written twice at one instant.
///
/// # Complexity
/// O(n log n) for n lines.
pub fn to_series(
    file: &str,
    text: &str,
    card_types: &[CardType],
) -> Result<DcgmSeries, MeteringError> {
    let lines = parse_exposition(file, text)?;
    let mut warnings = Vec::new();
    let mut ignored = 0usize;
    let mut device_times: BTreeMap<DeviceKey, BTreeMap<i64, ()>> = BTreeMap::new();
    let mut attrs: BTreeMap<AttrKey, Attr> = BTreeMap::new();
    let mut seen: BTreeMap<SeriesAt, usize> = BTreeMap::new();
    let mut vgpus: BTreeMap<DeviceKey, BTreeMap<String, ()>> = BTreeMap::new();
    for s in &lines {
        if !s.metric.starts_with("DCGM_FI_") {
            ignored += 1;
            continue;
        }
        let ms = s
            .timestamp_ms
            .ok_or_else(|| err(file, s.line, "sample without a timestamp"))?;
        let t = ms.div_euclid(1000);
        let mut sorted = s.labels.clone();
        sorted.sort();
        if let Some(prev) = seen.insert((s.metric.clone(), sorted, t), s.line) {
            return Err(MeteringError::DuplicateTimestamp {
                what: format!("{file}:{} (same series as line {prev})", s.line),
                at: t,
            });
        }
        let host = s
            .label("hostname")
            .or_else(|| s.label("Hostname"))
            .unwrap_or("")
            .to_owned();
        let uuid = s
            .label("UUID")
            .or_else(|| s.label("uuid"))
            .ok_or_else(|| err(file, s.line, "no UUID label"))?
            .to_owned();
        let gi = s.label("GPU_I_ID").map(str::to_owned);
        let model = s
            .label("modelName")
            .ok_or_else(|| err(file, s.line, "no modelName label"))?;
        let card = card_types
            .iter()
            .position(|c| {
                norm(c.model.as_deref().unwrap_or(&c.name)) == norm(model)
                    || norm(&c.name) == norm(model)
            })
            .ok_or_else(|| MeteringError::UnknownCardType {
                what: format!("{file}:{} modelName", s.line),
                card_type: model.to_owned(),
            })?;
        let device: DeviceKey = (host, uuid, gi);
        device_times
            .entry(device.clone())
            .or_default()
            .insert(t, ());
        let scraped = s.label("instance").is_some() || s.label("job").is_some();
        let pick = |names: &[&str]| -> Option<String> {
            names
                .iter()
                .filter_map(|n| s.label(n))
                .find(|v| !v.is_empty())
                .map(str::to_owned)
        };
        let ns = if scraped {
            pick(&["exported_namespace"])
        } else {
            pick(&["namespace", "pod_namespace", "exported_namespace"])
        };
        let Some(ns) = ns else { continue };
        let pod = if scraped {
            pick(&["exported_pod"])
        } else {
            pick(&["pod", "pod_name", "exported_pod"])
        }
        .unwrap_or_default();
        let vgpu = s.label("vgpu").map(str::to_owned);
        if let Some(v) = &vgpu {
            vgpus
                .entry(device.clone())
                .or_default()
                .insert(v.clone(), ());
        }
        let a = attrs.entry((device, ns, pod, vgpu)).or_default();
        a.card = card;
        a.profile = s.label("GPU_I_PROFILE").map(str::to_owned);
        let p = a.points.entry(t).or_default();
        // NaN or ±Inf is no measurement: the point's busy value stays unknown (not 0)
        let micro = |v: f64| -> Option<i128> {
            v.is_finite().then(|| {
                // a ratio, never money: rounding to millionths is the exposition's own precision
                #[allow(clippy::cast_possible_truncation)]
                let m = (v * 1_000_000.0).round() as i128;
                m.clamp(0, 1_000_000)
            })
        };
        match s.metric.as_str() {
            "DCGM_FI_PROF_GR_ENGINE_ACTIVE" => p.0 = micro(s.value),
            "DCGM_FI_DEV_GPU_UTIL" => p.1 = micro(s.value / 100.0),
            _ => {}
        }
    }
    if ignored > 0 {
        warnings.push(format!(
            "{file}: ignored {ignored} lines of metrics other than DCGM_FI_*"
        ));
    }
    let mut samples = Vec::new();
    for ((device, ns, pod, vgpu), a) in attrs {
        let (host, uuid, gi) = &device;
        let ct = &card_types[a.card];
        let shape = if let Some(p) = &a.profile {
            Shape::Mig {
                profile: p.clone(),
                count: 1,
            }
        } else if vgpu.is_some() {
            let per = match ct.replicas_per_gpu {
                Some(n) => n,
                None => {
                    let n = vgpus.get(&device).map_or(1, |m| m.len() as u64);
                    let msg = format!(
                        "{file}: {host}/{uuid} is time-sliced but card type {} sets no \
                         replicasPerGpu; each replica counts 1/{n} card ({n} sharers seen)",
                        ct.name
                    );
                    if !warnings.contains(&msg) {
                        warnings.push(msg);
                    }
                    n
                }
            };
            Shape::Fraction {
                replicas: 1,
                per_gpu: per,
            }
        } else {
            Shape::Whole(1)
        };
        let mut holder = format!("{host}/{uuid}");
        if let Some(g) = gi {
            holder.push('/');
            holder.push_str(g);
        }
        if let Some(v) = &vgpu {
            holder.push_str("/vgpu");
            holder.push_str(v);
        }
        let times = device_times.get(&device);
        let mut stale_at = Vec::new();
        for t in a.points.keys() {
            if let Some(next) = times.and_then(|m| m.range(t + 1..).next().map(|(k, _)| *k))
                && !a.points.contains_key(&next)
            {
                stale_at.push(next);
            }
        }
        stale_at.dedup();
        let all_busy: Option<Vec<i128>> = a.points.values().map(|(g, u)| g.or(*u)).collect();
        let points: Vec<(i64, u64)> = a.points.keys().map(|t| (*t, 1)).collect();
        samples.push(RawSeries {
            owner: Owner::Namespace(ns.clone()),
            card_type: ct.name.clone(),
            shape,
            lookback: None,
            points,
            stale_at,
            holder: Some(holder.clone()),
            service: None,
            busy_micro: all_busy,
            label: Some(format!("{file}: {ns}/{pod} on {holder}")),
        });
    }
    Ok(DcgmSeries { samples, warnings })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h200() -> Vec<CardType> {
        let mut c = CardType::new("H200", 4_500_000);
        c.model = Some("NVIDIA H200".to_owned());
        vec![c]
    }

    #[test]
    fn parses_labels_escapes_and_timestamps() {
        let s = parse_exposition(
            "f",
            "# HELP x y\nm{a=\"1\",b=\"q\\\"uote\\\\n\"} 0.25 1000\nplain 3\n",
        )
        .unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].label("b"), Some("q\"uote\\n"));
        assert_eq!(s[0].value, 0.25);
        assert_eq!(s[0].timestamp_ms, Some(1000));
        assert_eq!(s[1].labels, vec![]);
        assert_eq!(s[1].timestamp_ms, None);
        assert!(parse_exposition("f", "m{a=1} 2").is_err());
        assert!(parse_exposition("f", "m 2 3 4").is_err());
    }

    #[test]
    fn both_host_label_spellings_and_mig_keys() {
        let text = "\
DCGM_FI_DEV_FB_USED{UUID=\"G1\",modelName=\"NVIDIA H200\",Hostname=\"n1\",namespace=\"a\",pod=\"p\"} 1 0
DCGM_FI_DEV_FB_USED{UUID=\"G2\",modelName=\"NVIDIA H200\",hostname=\"n2\",GPU_I_PROFILE=\"3g.71gb\",GPU_I_ID=\"2\",namespace=\"b\",pod=\"q\"} 1 0
DCGM_FI_DEV_FB_USED{UUID=\"G2\",modelName=\"NVIDIA H200\",hostname=\"n2\",GPU_I_PROFILE=\"3g.71gb\",GPU_I_ID=\"2\"} 1 30000
";
        let found = to_series("f", text, &h200()).unwrap();
        let holders: Vec<_> = found
            .samples
            .iter()
            .map(|s| {
                (
                    s.holder.clone().unwrap(),
                    s.shape.clone(),
                    s.stale_at.clone(),
                )
            })
            .collect();
        assert_eq!(
            holders,
            vec![
                ("n1/G1".to_owned(), Shape::Whole(1), vec![]),
                (
                    "n2/G2/2".to_owned(),
                    Shape::Mig {
                        profile: "3g.71gb".to_owned(),
                        count: 1
                    },
                    vec![30]
                ),
            ]
        );
    }

    #[test]
    fn virtual_gpu_copies_are_replicas() {
        let text = "\
DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID=\"G\",modelName=\"NVIDIA H200\",hostname=\"n\",namespace=\"a\",pod=\"x\",vgpu=\"0\"} 0.7 0
DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID=\"G\",modelName=\"NVIDIA H200\",hostname=\"n\",namespace=\"b\",pod=\"y\",vgpu=\"2\"} 0.7 0
";
        let mut cards = h200();
        cards[0].replicas_per_gpu = Some(4);
        let found = to_series("f", text, &cards).unwrap();
        assert!(found.samples.iter().all(|s| s.shape
            == Shape::Fraction {
                replicas: 1,
                per_gpu: 4
            }));
        // without replicasPerGpu: the sharers seen, with a warning
        let found = to_series("f", text, &h200()).unwrap();
        assert_eq!(
            found.samples[0].shape,
            Shape::Fraction {
                replicas: 1,
                per_gpu: 2
            }
        );
        assert!(found.warnings[0].contains("replicasPerGpu"));
    }
}
