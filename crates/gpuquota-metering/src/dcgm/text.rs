//! The text formats, line by line: the Prometheus exposition and OpenMetrics (labels,
//! escapes, timestamps, `# EOF`).

use super::*;

/// One line of a text file through the general reader: `Ok(None)` for a line that books
/// nothing (blank, a comment, another metric without a timestamp), else the booking's
/// outcome (the caller decides about a failure in a file read as milliseconds).
pub(super) fn line_one(
    buf: &str,
    line_no: usize,
    file: &mut FileState<'_>,
    acc: &mut Acc<'_>,
) -> Result<Option<Result<(), Stop>>, Stop> {
    let line = buf.trim();
    if line.is_empty() {
        return Ok(None);
    }
    if file.eof {
        return Err(err(file.name(), line_no, "text after # EOF").into());
    }
    if line.starts_with('#') {
        if line == "# EOF" {
            file.eof = true;
            if file.plan.format == Format::Auto && file.read_ms {
                // an OpenMetrics file: its timestamps were seconds
                return Err(Stop::Redo(FilePlan {
                    format: Format::OpenMetrics,
                    ..file.plan
                }));
            }
        }
        return Ok(None);
    }
    let parsed = split_line(file.name(), line_no, line, file.plan.format)?;
    let t = match parsed.timestamp {
        Some(ts) => match seconds(ts, file.plan.format) {
            Some(Ok(t)) => {
                if file.plan.format == Format::Auto {
                    file.read_ms = true;
                }
                t
            }
            Some(Err(())) => {
                return Err(err(file.name(), line_no, format!("invalid timestamp {ts:?}")).into());
            }
            None => {
                // a fraction: only OpenMetrics writes those
                return Err(Stop::Redo(FilePlan {
                    format: Format::OpenMetrics,
                    ..file.plan
                }));
            }
        },
        None => match file.src.scrape_time {
            Some(t) => t,
            None => {
                if !parsed.key.starts_with("DCGM_FI_") {
                    file.ignored += 1;
                    return Ok(None);
                }
                return Err(err(file.name(), line_no, "sample without a timestamp").into());
            }
        },
    };
    Ok(Some(acc.sample(file, line_no, parsed.key, parsed.value, t)))
}

/// `ts` in whole seconds: `Some(Err)` when it is not a number, `None` when it has a fraction
/// and the format is not known to be OpenMetrics yet.
pub(super) fn seconds(ts: &str, format: Format) -> Option<Result<i64, ()>> {
    if format == Format::OpenMetrics {
        if let Ok(i) = ts.parse::<i64>() {
            return Some(Ok(i));
        }
        return Some(match ts.parse::<f64>() {
            Ok(f) if f.is_finite() && f.abs() < 9.0e18 => {
                // a time in seconds; the fraction is dropped (floored), as milliseconds are
                #[allow(clippy::cast_possible_truncation)]
                Ok(f.floor() as i64)
            }
            _ => Err(()),
        });
    }
    match ts.parse::<i64>() {
        Ok(ms) => Some(Ok(ms.div_euclid(1000))),
        Err(_) if format == Format::Auto && ts.parse::<f64>().is_ok_and(f64::is_finite) => None,
        Err(_) => Some(Err(())),
    }
}

pub(super) struct Split<'l> {
    /// `metric{labels}` as written.
    pub(super) key: &'l str,
    pub(super) value: f64,
    pub(super) timestamp: Option<&'l str>,
}

/// Splits a sample line into its series key (metric and label block as written), value and
/// timestamp, checking only the label block's quoting; the labels are parsed when a key is
/// first seen.
pub(super) fn split_line<'l>(
    file: &str,
    line_no: usize,
    line: &'l str,
    format: Format,
) -> Result<Split<'l>, MeteringError> {
    let bytes = line.as_bytes();
    let name_end = bytes
        .iter()
        .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_' || *c == b':'))
        .unwrap_or(bytes.len());
    if name_end == 0 || bytes[0].is_ascii_digit() {
        return Err(err(file, line_no, "expected a metric name"));
    }
    let mut key_end = name_end;
    if bytes.get(name_end) == Some(&b'{') {
        let mut i = name_end + 1;
        let mut in_quote = false;
        loop {
            let Some(&c) = bytes.get(i) else {
                // let the full parser say what is wrong
                return Err(parse_labels(file, line_no, &line[name_end + 1..])
                    .err()
                    .unwrap_or_else(|| err(file, line_no, "unterminated label set")));
            };
            if in_quote {
                if c == b'\\' {
                    i += 1;
                } else if c == b'"' {
                    in_quote = false;
                }
            } else if c == b'"' {
                in_quote = true;
            } else if c == b'}' {
                break;
            }
            i += 1;
        }
        key_end = i + 1;
    }
    let mut rest = &line[key_end..];
    if format != Format::Prometheus
        && let Some(cut) = rest.find(" # ")
    {
        // an OpenMetrics exemplar
        rest = &rest[..cut];
    }
    let mut parts = rest.split_ascii_whitespace();
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
    let timestamp = parts.next();
    if parts.next().is_some() {
        return Err(err(file, line_no, "trailing text after the timestamp"));
    }
    Ok(Split {
        key: &line[..key_end],
        value,
        timestamp,
    })
}

/// Parses a label block (after `{`, up to and including `}`).
pub(super) fn parse_labels(
    file: &str,
    line_no: usize,
    r: &str,
) -> Result<(Vec<(String, String)>, usize), MeteringError> {
    let mut labels = Vec::new();
    let mut chars = r.char_indices().peekable();
    loop {
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
            return Ok((labels, start + 1));
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
}

/// Parses the Prometheus text exposition format (`# HELP`/`# TYPE` comments, then
/// `name{label="value",…} value [timestamp]` lines) into memory, for tests and tools; the
/// metering path streams with [`read`] instead.
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
        let s = split_line(file, line_no, line, Format::Prometheus)?;
        let (metric, labels) = match s.key.find('{') {
            Some(b) => (&s.key[..b], parse_labels(file, line_no, &s.key[b + 1..])?.0),
            None => (s.key, Vec::new()),
        };
        let timestamp_ms = match s.timestamp {
            Some(t) => Some(
                t.parse::<i64>()
                    .map_err(|_| err(file, line_no, format!("invalid timestamp {t:?}")))?,
            ),
            None => None,
        };
        out.push(ExpositionSample {
            metric: metric.to_owned(),
            labels,
            value: s.value,
            timestamp_ms,
            line: line_no,
        });
    }
    Ok(out)
}
