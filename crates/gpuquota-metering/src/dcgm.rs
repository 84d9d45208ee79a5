//! DCGM exporter metrics turned into device holdings and busy fractions, read as a stream.
//!
//! Three formats are read (see the crate docs for every field of the `dcgm:` entries):
//!
//! * the **Prometheus text exposition** the DCGM exporter serves (`curl :9400/metrics`),
//!   with millisecond timestamps, or without timestamps when the entry gives the scrape's
//!   `scrapeTime`;
//! * **OpenMetrics** text (a file that ends with `# EOF`; timestamps are seconds, possibly
//!   fractional; exemplars after ` # ` are ignored);
//! * the JSON answer of Prometheus' **`query_range`** API (`resultType: matrix`).
//!
//! Label spellings: `Hostname` and `hostname`; `UUID` and `uuid`; the workload labels
//! `namespace`/`pod` (or `pod_namespace`/`pod_name`, the exporter's older names). A line that
//! carries `instance` or `job` was stored by Prometheus: with `honorLabels: false` (its
//! default) the exporter's workload labels were renamed `exported_namespace`/`exported_pod`
//! and `namespace`/`pod` are the exporter's own pod, so only the `exported_` labels count;
//! with `honorLabels: true` the exporter's `namespace`/`pod` were kept. Unless the entry says
//! which, the reader decides from the labels present: a file in which some stored line
//! carries `exported_namespace` or `exported_pod` was scraped with `honorLabels: false`, any
//! other with `honorLabels: true`. A MIG instance is keyed by (host, UUID, `GPU_I_ID`) and
//! weighted by its `GPU_I_PROFILE`; a `vgpu` series is one time-slicing replica of its card.
//!
//! A device series that carries workload labels at a scrape is a holding by that namespace
//! from that scrape on, until the device's next scrape (if that scrape no longer carries it,
//! the series is stale from then on, as Prometheus marks it) and for at most the lookback.
//! Busy comes from `DCGM_FI_PROF_GR_ENGINE_ACTIVE` (relative to the instance), else
//! `DCGM_FI_DEV_GPU_UTIL / 100`. Timestamps are floored to whole seconds.
//!
//! # Memory
//!
//! Each distinct label set is interned to a series id once; per series the reader keeps only
//! its last timestamp (for the duplicate check) and per holding its pending point and the
//! held intervals found so far, so memory is O(series + intervals), not O(lines), as long as
//! each device's lines come in time order (concatenated scrapes, a time-ordered backfill
//! file). When some device's time goes backwards (an OpenMetrics file that lists each metric
//! family for the whole period), the reader starts again keeping every point: the same
//! result with memory O(lines).

use std::collections::{BTreeMap, BTreeSet};

use gpuquota_model::source::Stream;

use crate::MeteringError;
use crate::engine::{CardType, Holding, Owner, Shape, Window};

/// The largest `query_range` JSON answer read (bytes); JSON is parsed whole.
pub const MAX_JSON_BYTES: usize = 256 << 20;

/// The longest line of a metrics text file (bytes): an exposition line is a few hundred
/// bytes, so a longer one means the file is not metrics text (`/dev/zero` is refused after
/// one mebibyte, not read until memory runs out). A `query_range` JSON answer (the first
/// character is `{`) may be one line of up to [`MAX_JSON_BYTES`].
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Opens a metrics file for [`read`] (standard input for `-`): the bounded line reader of
/// [`gpuquota_model::source`] over the file, with the stream limit
/// [`gpuquota_model::source::MAX_STREAM_BYTES`] and a limit per line ([`MAX_LINE_BYTES`]).
///
/// # Errors
/// [`MeteringError::Read`] (code `read-failed`) naming the file when it cannot be opened.
pub fn open_file(path: &std::path::Path) -> Result<Stream, MeteringError> {
    use gpuquota_model::source::{MAX_STREAM_BYTES, display_name};
    let name = display_name(path);
    let reader: Box<dyn std::io::Read> = if path.as_os_str() == "-" {
        Box::new(std::io::stdin())
    } else {
        match std::fs::File::open(path) {
            Ok(f) => Box::new(f),
            Err(e) => {
                return Err(MeteringError::Read(
                    gpuquota_model::Diagnostic::error(
                        gpuquota_model::diag::codes::READ_FAILED,
                        format!("cannot read: {e}"),
                    )
                    .source(name),
                ));
            }
        }
    };
    let capped = LineCap {
        inner: reader,
        since_newline: 0,
        cap: None,
    };
    Ok(Stream::from_reader(
        name,
        std::io::BufReader::with_capacity(1 << 16, capped),
        MAX_STREAM_BYTES,
    ))
}

/// A reader that fails once a line grows past its limit.
struct LineCap<R> {
    inner: R,
    since_newline: usize,
    /// Decided by the first byte that is not white space.
    cap: Option<usize>,
}

impl<R: std::io::Read> std::io::Read for LineCap<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let got = &buf[..n];
        if self.cap.is_none()
            && let Some(b) = got.iter().find(|b| !b.is_ascii_whitespace())
        {
            self.cap = Some(if *b == b'{' {
                MAX_JSON_BYTES
            } else {
                MAX_LINE_BYTES
            });
        }
        match got.iter().rposition(|b| *b == b'\n') {
            Some(p) => self.since_newline = n - p - 1,
            None => self.since_newline += n,
        }
        let cap = self.cap.unwrap_or(MAX_LINE_BYTES);
        if self.since_newline > cap {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "a line longer than the limit of {cap} bytes for one line of metrics text; \
                     this is not a metrics file"
                ),
            ));
        }
        Ok(n)
    }
}

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

/// The format of a metrics file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Decide from the content: JSON when it starts with `{`, OpenMetrics when it ends with
    /// `# EOF` or a timestamp has a fraction, else the Prometheus text format.
    #[default]
    Auto,
    /// Prometheus text exposition (timestamps in milliseconds).
    Prometheus,
    /// OpenMetrics text (timestamps in seconds).
    OpenMetrics,
    /// Prometheus `query_range` JSON (`resultType: matrix`).
    QueryRange,
}

impl Format {
    /// The name used in the meter document.
    pub fn parse(name: &str) -> Option<Format> {
        match name {
            "auto" => Some(Format::Auto),
            "prometheus" => Some(Format::Prometheus),
            "openmetrics" => Some(Format::OpenMetrics),
            "query-range" => Some(Format::QueryRange),
            _ => None,
        }
    }
}

/// One metrics file to read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Source {
    /// The name errors and labels use (the path as written in the document).
    pub name: String,
    /// The format.
    pub format: Format,
    /// The scrape time (seconds) of lines written without a timestamp.
    pub scrape_time: Option<i64>,
    /// How Prometheus stored the exporter's labels; `None` decides from the labels present.
    pub honor_labels: Option<bool>,
}

/// What [`read`] found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DcgmSeries {
    /// One holding per (device, namespace, pod, replica), sorted by that key.
    pub holdings: Vec<Holding>,
    /// Warnings (lines of other metrics ignored, replica count guessed, no pod labels, …).
    pub warnings: Vec<String>,
}

/// The card types, window and lookback the reader resolves holdings with.
#[derive(Debug, Clone, Copy)]
pub struct Settings<'a> {
    /// Card types (a line's `modelName` names one by model or name).
    pub card_types: &'a [CardType],
    /// The metering window: holds are clipped to it.
    pub window: Window,
    /// The lookback δ in seconds: a point is held for at most δ.
    pub lookback: i64,
    /// Replicas per GPU by node (`Hostname`), from the device plugin's sharing
    /// configuration, for time-sliced series whose card type sets no `replicasPerGpu`.
    pub sharing: &'a gpuquota_model::workloads::sharing::ReplicasPerGpu,
}

/// Opens the `i`-th source for reading (once per pass; the reader may make a second pass).
pub type Opener<'a> = dyn FnMut(usize) -> Result<Stream, MeteringError> + 'a;

/// Reads every source into holdings. The sources are one stream of scrapes: a device series
/// continues from one file into the next.
///
/// # Errors
/// [`MeteringError::Exposition`] for malformed lines, missing timestamps or UUIDs;
/// [`MeteringError::UnknownCardType`] for a `modelName` no card type names;
/// [`MeteringError::DuplicateTimestamp`] for one series written twice at one instant;
/// [`MeteringError::Read`] when a file cannot be read or is larger than the reader's limit.
///
/// # Complexity
/// O(n log s) for n lines and s distinct label sets; memory O(s + intervals) for inputs
/// whose devices are in time order, O(n) otherwise.
pub fn read(
    sources: &[Source],
    open: &mut Opener<'_>,
    settings: Settings<'_>,
) -> Result<DcgmSeries, MeteringError> {
    read_mode(sources, open, settings, true)
}

/// [`read`] keeping every point in memory from the start (the simple reader the streaming
/// one is checked against by the fuzz target).
///
/// # Errors
/// As [`read`].
#[cfg(feature = "fuzzing")]
pub fn read_keeping_every_point(
    sources: &[Source],
    open: &mut Opener<'_>,
    settings: Settings<'_>,
) -> Result<DcgmSeries, MeteringError> {
    read_mode(sources, open, settings, false)
}

fn read_mode(
    sources: &[Source],
    open: &mut Opener<'_>,
    settings: Settings<'_>,
    mut ordered: bool,
) -> Result<DcgmSeries, MeteringError> {
    let mut plan: Vec<FilePlan> = sources
        .iter()
        .map(|s| FilePlan {
            format: s.format,
            honor: s.honor_labels,
        })
        .collect();
    // Each restart fixes one decision for good (format, honorLabels, ordered), so this ends.
    loop {
        let mut acc = Acc::new(settings, ordered);
        match run_pass(sources, &plan, open, &mut acc)? {
            Pass::Done => return acc.finish(sources),
            Pass::Unordered => ordered = false,
            Pass::Redo { file, plan: p } => plan[file] = p,
        }
    }
}

/// Reads one exposition text (for tests and embedders); see [`read`].
///
/// # Errors
/// As [`read`].
pub fn read_text(
    name: &str,
    text: &str,
    settings: Settings<'_>,
) -> Result<DcgmSeries, MeteringError> {
    let sources = [Source {
        name: name.to_owned(),
        ..Source::default()
    }];
    let owned = text.to_owned();
    read(
        &sources,
        &mut |_| {
            Ok(Stream::from_reader(
                name,
                std::io::Cursor::new(owned.clone().into_bytes()),
                gpuquota_model::source::MAX_STREAM_BYTES,
            ))
        },
        settings,
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FilePlan {
    format: Format,
    honor: Option<bool>,
}

enum Pass {
    Done,
    Unordered,
    Redo { file: usize, plan: FilePlan },
}

fn run_pass(
    sources: &[Source],
    plan: &[FilePlan],
    open: &mut Opener<'_>,
    acc: &mut Acc<'_>,
) -> Result<Pass, MeteringError> {
    for (fi, src) in sources.iter().enumerate() {
        let mut stream = open(fi)?;
        let mut file = FileState::new(fi, src, plan[fi]);
        let r = if plan[fi].format == Format::QueryRange {
            read_json(&mut stream, &mut file, acc)
        } else {
            read_lines(&mut stream, &mut file, acc)
        };
        match r {
            Ok(()) => {}
            Err(Stop::Fail(e)) => return Err(e),
            Err(Stop::Unordered) => return Ok(Pass::Unordered),
            Err(Stop::Redo(p)) => return Ok(Pass::Redo { file: fi, plan: p }),
        }
        acc.end_file(&file);
    }
    Ok(Pass::Done)
}

enum Stop {
    Fail(MeteringError),
    Unordered,
    Redo(FilePlan),
}

impl From<MeteringError> for Stop {
    fn from(e: MeteringError) -> Stop {
        Stop::Fail(e)
    }
}

struct FileState<'s> {
    index: usize,
    src: &'s Source,
    plan: FilePlan,
    /// A stored line without `exported_` labels was read with `honorLabels: true`.
    used_plain: bool,
    /// Integer timestamps were read as milliseconds (auto format).
    read_ms: bool,
    ignored: usize,
    dcgm_lines: usize,
    workload_lines: usize,
    eof: bool,
}

impl<'s> FileState<'s> {
    fn new(index: usize, src: &'s Source, plan: FilePlan) -> FileState<'s> {
        FileState {
            index,
            src,
            plan,
            used_plain: false,
            read_ms: false,
            ignored: 0,
            dcgm_lines: 0,
            workload_lines: 0,
            eof: false,
        }
    }

    fn name(&self) -> &str {
        &self.src.name
    }
}

fn read_err(d: gpuquota_model::Diagnostic) -> Stop {
    Stop::Fail(MeteringError::Read(d))
}

fn read_lines(
    stream: &mut Stream,
    file: &mut FileState<'_>,
    acc: &mut Acc<'_>,
) -> Result<(), Stop> {
    let mut buf = String::new();
    let mut first = true;
    while stream.next_line(&mut buf).map_err(read_err)? {
        let line_no = usize::try_from(stream.line_number()).unwrap_or(usize::MAX);
        let line = buf.trim();
        if first && !line.is_empty() {
            first = false;
            if line.starts_with('{') && file.plan.format == Format::Auto {
                return Err(Stop::Redo(FilePlan {
                    format: Format::QueryRange,
                    ..file.plan
                }));
            }
        }
        if line.is_empty() {
            continue;
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
            continue;
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
                    return Err(
                        err(file.name(), line_no, format!("invalid timestamp {ts:?}")).into(),
                    );
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
                        continue;
                    }
                    return Err(err(file.name(), line_no, "sample without a timestamp").into());
                }
            },
        };
        match acc.sample(file, line_no, parsed.key, parsed.value, t) {
            Err(Stop::Fail(e)) if file.plan.format == Format::Auto && file.read_ms => {
                // Integer times read as milliseconds may have been OpenMetrics seconds: a
                // file that ends with `# EOF` is read again as such before failing.
                return Err(if ends_with_eof(stream, &mut buf)? {
                    Stop::Redo(FilePlan {
                        format: Format::OpenMetrics,
                        ..file.plan
                    })
                } else {
                    Stop::Fail(e)
                });
            }
            other => other?,
        }
    }
    Ok(())
}

/// Reads the rest of the stream: is its last line that is not empty `# EOF`?
fn ends_with_eof(stream: &mut Stream, buf: &mut String) -> Result<bool, Stop> {
    let mut last_eof = false;
    while stream.next_line(buf).map_err(read_err)? {
        let l = buf.trim();
        if !l.is_empty() {
            last_eof = l == "# EOF";
        }
    }
    Ok(last_eof)
}

/// `ts` in whole seconds: `Some(Err)` when it is not a number, `None` when it has a fraction
/// and the format is not known to be OpenMetrics yet.
fn seconds(ts: &str, format: Format) -> Option<Result<i64, ()>> {
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

struct Split<'l> {
    /// `metric{labels}` as written.
    key: &'l str,
    value: f64,
    timestamp: Option<&'l str>,
}

/// Splits a sample line into its series key (metric and label block as written), value and
/// timestamp, checking only the label block's quoting; the labels are parsed when a key is
/// first seen.
fn split_line<'l>(
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
fn parse_labels(
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

// ---------------------------------------------------------------------------------------
// query_range JSON

#[derive(serde::Deserialize)]
struct QueryResponse {
    status: String,
    #[serde(default)]
    error: Option<String>,
    data: Option<QueryData>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct QueryData {
    result_type: String,
    result: Vec<QuerySeries>,
}

#[derive(serde::Deserialize)]
struct QuerySeries {
    metric: BTreeMap<String, String>,
    #[serde(default)]
    values: Vec<(f64, String)>,
}

fn read_json(stream: &mut Stream, file: &mut FileState<'_>, acc: &mut Acc<'_>) -> Result<(), Stop> {
    let mut text = String::new();
    let mut buf = String::new();
    while stream.next_line(&mut buf).map_err(read_err)? {
        if text.len() + buf.len() > MAX_JSON_BYTES {
            return Err(MeteringError::Parse(format!(
                "{}: a query_range answer larger than the limit of {MAX_JSON_BYTES} bytes; \
                 query a shorter range per file",
                file.name()
            ))
            .into());
        }
        text.push_str(&buf);
        text.push('\n');
    }
    let bad = |m: String| Stop::Fail(MeteringError::Parse(format!("{}: {m}", file.src.name)));
    let resp: QueryResponse = serde_json::from_str(&text)
        .map_err(|e| bad(format!("not a Prometheus query_range answer: {e}")))?;
    if resp.status != "success" {
        return Err(bad(format!(
            "the query failed (status {:?}{})",
            resp.status,
            resp.error.map(|e| format!(": {e}")).unwrap_or_default()
        )));
    }
    let data = resp.data.ok_or_else(|| bad("no data".to_owned()))?;
    if data.result_type != "matrix" {
        return Err(bad(format!(
            "resultType {:?}: only a range query's matrix is read",
            data.result_type
        )));
    }
    // one exposition-like key per result, then every point in time order
    let mut keys = Vec::with_capacity(data.result.len());
    let mut points = Vec::new();
    for (i, s) in data.result.iter().enumerate() {
        let name = s.metric.get("__name__").ok_or_else(|| {
            bad(format!(
                "data.result[{i}] has no __name__ label: query the DCGM metric itself \
                 (e.g. DCGM_FI_DEV_GPU_UTIL), not an expression"
            ))
        })?;
        let mut key = name.clone();
        key.push('{');
        for (k, v) in s.metric.iter().filter(|(k, _)| *k != "__name__") {
            key.push_str(k);
            key.push_str("=\"");
            for c in v.chars() {
                match c {
                    '\\' => key.push_str("\\\\"),
                    '"' => key.push_str("\\\""),
                    '\n' => key.push_str("\\n"),
                    c => key.push(c),
                }
            }
            key.push_str("\",");
        }
        key.push('}');
        keys.push(key);
        for (j, (t, v)) in s.values.iter().enumerate() {
            if !t.is_finite() || t.abs() >= 9.0e18 {
                return Err(bad(format!(
                    "data.result[{i}].values[{j}]: invalid time {t}"
                )));
            }
            let value = match v.as_str() {
                "NaN" => f64::NAN,
                "+Inf" | "Inf" => f64::INFINITY,
                "-Inf" => f64::NEG_INFINITY,
                x => x.parse::<f64>().map_err(|_| {
                    bad(format!("data.result[{i}].values[{j}]: invalid value {x:?}"))
                })?,
            };
            // seconds; a fraction is floored as for every other format
            #[allow(clippy::cast_possible_truncation)]
            let secs = t.floor() as i64;
            points.push((secs, i, value));
        }
    }
    points.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    for (t, i, value) in points {
        acc.sample(file, i + 1, &keys[i], value, t)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// The accumulator

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Busy {
    Engine,
    Util,
    Other,
}

/// What an interned label set stands for.
#[derive(Debug, Clone, Copy)]
struct SeriesInfo {
    canon: u32,
    /// `None` for metrics other than `DCGM_FI_*`.
    device: Option<u32>,
    attr: Option<u32>,
    card: usize,
    profile: Option<u32>,
    busy: Busy,
}

#[derive(Debug, Default)]
struct Canon {
    last_t: Option<i64>,
    last_at: (usize, usize),
}

#[derive(Debug, Default)]
struct Device {
    cur: Option<i64>,
    attrs: Vec<u32>,
    /// Every scrape time (unordered mode only).
    times: BTreeSet<i64>,
}

#[derive(Debug, Default)]
struct Attr {
    card: usize,
    profile: Option<u32>,
    first_file: usize,
    /// The point at the device's current scrape: (t, engine busy, util busy) in millionths.
    pending: Option<(i64, Option<i128>, Option<i128>)>,
    /// Every point (unordered mode only).
    points: BTreeMap<i64, (Option<i128>, Option<i128>)>,
    intervals: Vec<(i64, i64)>,
    busy_sum: i128,
    busy_all: bool,
}

type DeviceKey = (String, String, Option<String>);
type AttrKey = (u32, String, String, Option<String>);

struct Acc<'a> {
    settings: Settings<'a>,
    ordered: bool,
    /// `metric{labels}` as written → series.
    written: BTreeMap<Box<str>, u32>,
    /// The key of each series, and the series that followed it last time.
    keys: Vec<Box<str>>,
    next_hint: Vec<u32>,
    prev: Option<u32>,
    series: Vec<SeriesInfo>,
    /// (metric, sorted labels) → canonical series.
    canon_ids: BTreeMap<(String, Vec<(String, String)>), u32>,
    canon: Vec<Canon>,
    /// (canonical series, t) → where (unordered mode only).
    seen: BTreeMap<(u32, i64), (usize, usize)>,
    device_ids: BTreeMap<DeviceKey, u32>,
    device_keys: Vec<DeviceKey>,
    devices: Vec<Device>,
    attr_ids: BTreeMap<AttrKey, u32>,
    attrs: Vec<Attr>,
    profiles: Vec<String>,
    vgpus: BTreeMap<u32, BTreeSet<String>>,
    warnings: Vec<String>,
}

fn norm(s: &str) -> String {
    s.trim().replace(' ', "-").to_ascii_lowercase()
}

fn micro(v: f64) -> Option<i128> {
    // NaN or ±Inf is no measurement: the point's busy value stays unknown (not 0)
    v.is_finite().then(|| {
        // a ratio, never money: rounding to millionths is the exposition's own precision
        #[allow(clippy::cast_possible_truncation)]
        let m = (v * 1_000_000.0).round() as i128;
        m.clamp(0, 1_000_000)
    })
}

impl<'a> Acc<'a> {
    fn new(settings: Settings<'a>, ordered: bool) -> Acc<'a> {
        Acc {
            settings,
            ordered,
            written: BTreeMap::new(),
            keys: Vec::new(),
            next_hint: Vec::new(),
            prev: None,
            series: Vec::new(),
            canon_ids: BTreeMap::new(),
            canon: Vec::new(),
            seen: BTreeMap::new(),
            device_ids: BTreeMap::new(),
            device_keys: Vec::new(),
            devices: Vec::new(),
            attr_ids: BTreeMap::new(),
            attrs: Vec::new(),
            profiles: Vec::new(),
            vgpus: BTreeMap::new(),
            warnings: Vec::new(),
        }
    }

    /// One sample: the series key as written, its value and time in seconds.
    ///
    /// # Complexity
    /// O(log s) for s distinct keys (O(labels log labels) the first time a key is seen).
    fn sample(
        &mut self,
        file: &mut FileState<'_>,
        line: usize,
        key: &str,
        value: f64,
        t: i64,
    ) -> Result<(), Stop> {
        if !key.starts_with("DCGM_FI_") {
            file.ignored += 1;
            return Ok(());
        }
        // Scrapes repeat their lines in the same order: the series that followed the previous
        // line's series last time is tried first (one comparison), the map only on a miss.
        let hinted = self.prev.and_then(|p| {
            let h = self.next_hint[p as usize];
            (h != u32::MAX && *self.keys[h as usize] == *key).then_some(h)
        });
        let id = match hinted {
            Some(id) => id,
            None => match self.written.get(key) {
                Some(id) => *id,
                None => self.intern(file, line, key)?,
            },
        };
        if let Some(p) = self.prev {
            self.next_hint[p as usize] = id;
        }
        self.prev = Some(id);
        let info = self.series[id as usize];
        file.dcgm_lines += 1;
        // the duplicate check, per canonical series
        let c = &mut self.canon[info.canon as usize];
        if self.ordered {
            if let Some(last) = c.last_t {
                if t == last {
                    return Err(duplicate(file, line, c.last_at, t));
                }
                if t < last {
                    return Err(Stop::Unordered);
                }
            }
            c.last_t = Some(t);
            c.last_at = (file.index, line);
        } else if let Some(prev) = self.seen.insert((info.canon, t), (file.index, line)) {
            return Err(duplicate(file, line, prev, t));
        }
        let Some(dev) = info.device else {
            return Ok(());
        };
        let lookback = self.settings.lookback;
        let window = self.settings.window;
        let d = &mut self.devices[dev as usize];
        if self.ordered {
            match d.cur {
                Some(cur) if t < cur => return Err(Stop::Unordered),
                Some(cur) if t > cur => {
                    for a in &d.attrs {
                        let attr = &mut self.attrs[*a as usize];
                        if let Some(p) = attr.pending.take() {
                            fold(attr, p, Some(t), lookback, window);
                        }
                    }
                    d.cur = Some(t);
                }
                Some(_) => {}
                None => d.cur = Some(t),
            }
        } else {
            d.times.insert(t);
        }
        let Some(a) = info.attr else {
            return Ok(());
        };
        file.workload_lines += 1;
        let attr = &mut self.attrs[a as usize];
        attr.card = info.card;
        attr.profile = info.profile;
        let slot = if self.ordered {
            let p = attr.pending.get_or_insert((t, None, None));
            (&mut p.1, &mut p.2)
        } else {
            let p = attr.points.entry(t).or_default();
            (&mut p.0, &mut p.1)
        };
        match info.busy {
            Busy::Engine => *slot.0 = micro(value),
            Busy::Util => *slot.1 = micro(value / 100.0),
            Busy::Other => {}
        }
        Ok(())
    }

    /// Parses a key seen for the first time and records what it stands for.
    fn intern(&mut self, file: &mut FileState<'_>, line: usize, key: &str) -> Result<u32, Stop> {
        let name = file.src.name.as_str();
        let (metric, mut labels) = match key.find('{') {
            Some(b) => (&key[..b], parse_labels(name, line, &key[b + 1..])?.0),
            None => (key, Vec::new()),
        };
        let label = |n: &str| -> Option<&str> {
            labels.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str())
        };
        let host = label("hostname")
            .or_else(|| label("Hostname"))
            .unwrap_or("")
            .to_owned();
        let uuid = label("UUID")
            .or_else(|| label("uuid"))
            .ok_or_else(|| err(name, line, "no UUID label"))?
            .to_owned();
        let gi = label("GPU_I_ID").map(str::to_owned);
        let model = label("modelName").ok_or_else(|| err(name, line, "no modelName label"))?;
        let card = self
            .settings
            .card_types
            .iter()
            .position(|c| {
                norm(c.model.as_deref().unwrap_or(&c.name)) == norm(model)
                    || norm(&c.name) == norm(model)
            })
            .ok_or_else(|| MeteringError::UnknownCardType {
                what: format!("{name}:{line} modelName"),
                card_type: model.to_owned(),
            })?;
        let device_key: DeviceKey = (host, uuid, gi);
        let device = match self.device_ids.get(&device_key) {
            Some(d) => *d,
            None => {
                let d = u32::try_from(self.devices.len()).unwrap_or(u32::MAX);
                self.device_ids.insert(device_key.clone(), d);
                self.device_keys.push(device_key);
                self.devices.push(Device::default());
                d
            }
        };
        let stored = label("instance").is_some() || label("job").is_some();
        let pick = |names: &[&str]| -> Option<String> {
            names
                .iter()
                .filter_map(|n| label(n))
                .find(|v| !v.is_empty())
                .map(str::to_owned)
        };
        let (ns, pod) = if stored {
            let exported = pick(&["exported_namespace", "exported_pod"]).is_some();
            let honor = match file.plan.honor {
                Some(h) => h,
                None if exported => {
                    if file.used_plain {
                        // an earlier stored line was read with honorLabels: true
                        return Err(Stop::Redo(FilePlan {
                            honor: Some(false),
                            ..file.plan
                        }));
                    }
                    file.plan.honor = Some(false);
                    false
                }
                None => {
                    file.used_plain = true;
                    true
                }
            };
            if honor {
                (
                    pick(&["namespace", "pod_namespace"]),
                    pick(&["pod", "pod_name"]),
                )
            } else {
                (pick(&["exported_namespace"]), pick(&["exported_pod"]))
            }
        } else {
            (
                pick(&["namespace", "pod_namespace", "exported_namespace"]),
                pick(&["pod", "pod_name", "exported_pod"]),
            )
        };
        let profile = match label("GPU_I_PROFILE") {
            Some(p) => Some(match self.profiles.iter().position(|x| x == p) {
                Some(i) => u32::try_from(i).unwrap_or(u32::MAX),
                None => {
                    self.profiles.push(p.to_owned());
                    u32::try_from(self.profiles.len() - 1).unwrap_or(u32::MAX)
                }
            }),
            None => None,
        };
        let attr = match ns {
            Some(ns) => {
                let vgpu = label("vgpu").map(str::to_owned);
                if let Some(v) = &vgpu {
                    self.vgpus.entry(device).or_default().insert(v.clone());
                }
                let k: AttrKey = (device, ns, pod.unwrap_or_default(), vgpu);
                Some(match self.attr_ids.get(&k) {
                    Some(a) => *a,
                    None => {
                        let a = u32::try_from(self.attrs.len()).unwrap_or(u32::MAX);
                        self.attr_ids.insert(k, a);
                        self.attrs.push(Attr {
                            first_file: file.index,
                            busy_all: true,
                            ..Attr::default()
                        });
                        self.devices[device as usize].attrs.push(a);
                        a
                    }
                })
            }
            None => None,
        };
        let busy = match metric {
            "DCGM_FI_PROF_GR_ENGINE_ACTIVE" => Busy::Engine,
            "DCGM_FI_DEV_GPU_UTIL" => Busy::Util,
            _ => Busy::Other,
        };
        labels.sort();
        let ck = (metric.to_owned(), labels);
        let canon = match self.canon_ids.get(&ck) {
            Some(c) => *c,
            None => {
                let c = u32::try_from(self.canon.len()).unwrap_or(u32::MAX);
                self.canon_ids.insert(ck, c);
                self.canon.push(Canon::default());
                c
            }
        };
        let id = u32::try_from(self.series.len()).unwrap_or(u32::MAX);
        self.series.push(SeriesInfo {
            canon,
            device: Some(device),
            attr,
            card,
            profile,
            busy,
        });
        self.written.insert(key.into(), id);
        self.keys.push(key.into());
        self.next_hint.push(u32::MAX);
        Ok(id)
    }

    fn end_file(&mut self, file: &FileState<'_>) {
        if file.ignored > 0 {
            self.warnings.push(format!(
                "{}: ignored {} lines of metrics other than DCGM_FI_*",
                file.name(),
                file.ignored
            ));
        }
        if file.dcgm_lines > 0 && file.workload_lines == 0 {
            self.warnings.push(format!(
                "{}: no line carries pod labels (namespace and pod), so every GPU in it is \
                 idle; turn on the exporter's pod mapping (dcgm-exporter -k) if pods held them",
                file.name()
            ));
        }
    }

    fn finish(mut self, sources: &[Source]) -> Result<DcgmSeries, MeteringError> {
        let lookback = self.settings.lookback;
        let window = self.settings.window;
        for d in &self.devices {
            for a in &d.attrs {
                let attr = &mut self.attrs[*a as usize];
                if let Some(p) = attr.pending.take() {
                    fold(attr, p, None, lookback, window);
                }
                let points = std::mem::take(&mut attr.points);
                for (t, (g, u)) in points {
                    let next = d.times.range(t + 1..).next().copied();
                    fold(attr, (t, g, u), next, lookback, window);
                }
            }
        }
        let mut warnings = self.warnings;
        let mut holdings = Vec::with_capacity(self.attrs.len());
        for ((device, ns, pod, vgpu), a) in self.attr_ids {
            let (host, uuid, gi) = &self.device_keys[device as usize];
            let attr = &self.attrs[a as usize];
            let ct = &self.settings.card_types[attr.card];
            let file = sources.get(attr.first_file).map_or("", |s| s.name.as_str());
            let shape = if let Some(p) = attr.profile {
                Shape::Mig {
                    profile: self.profiles[p as usize].clone(),
                    count: 1,
                }
            } else if vgpu.is_some() {
                let per = match ct
                    .replicas_per_gpu
                    .or_else(|| self.settings.sharing.of(host))
                {
                    Some(n) => n,
                    None => {
                        let n = self.vgpus.get(&device).map_or(1, |m| m.len() as u64);
                        let msg = format!(
                            "{file}: {host}/{uuid} is time-sliced but card type {} sets no \
                             replicasPerGpu and no device plugin sharing configuration covers \
                             the node; each replica counts 1/{n} card ({n} sharers seen)",
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
            holdings.push(Holding {
                owner: Owner::Namespace(ns.clone()),
                card_type: ct.name.clone(),
                shape,
                holder: Some(holder.clone()),
                intervals: attr.intervals.clone(),
                busy_micro_seconds: attr.busy_all.then_some(attr.busy_sum),
                label: format!("{file}: {ns}/{pod} on {holder}"),
            });
        }
        Ok(DcgmSeries { holdings, warnings })
    }
}

fn duplicate(file: &FileState<'_>, line: usize, prev: (usize, usize), t: i64) -> Stop {
    let what = if prev.0 == file.index {
        format!("{}:{line} (same series as line {})", file.name(), prev.1)
    } else {
        format!(
            "{}:{line} (same series as line {} of an earlier file)",
            file.name(),
            prev.1
        )
    };
    Stop::Fail(MeteringError::DuplicateTimestamp { what, at: t })
}

/// Books one point: held from `t` until the device's next scrape `next` and for at most the
/// lookback, clipped to the window; adjacent holds merge into one interval.
fn fold(
    attr: &mut Attr,
    (t, engine, util): (i64, Option<i128>, Option<i128>),
    next: Option<i64>,
    lookback: i64,
    window: Window,
) {
    let mut end = t.saturating_add(lookback);
    if let Some(n) = next {
        end = end.min(n);
    }
    let busy = engine.or(util);
    if busy.is_none() {
        attr.busy_all = false;
    }
    let Some((s, e)) = window.clip(t, end) else {
        return;
    };
    if let Some(f) = busy {
        attr.busy_sum = attr
            .busy_sum
            .saturating_add(i128::from(e - s).saturating_mul(f));
    }
    match attr.intervals.last_mut() {
        Some(last) if last.1 == s => last.1 = e,
        _ => attr.intervals.push((s, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h200() -> Vec<CardType> {
        let mut c = CardType::new("H200", 4_500_000);
        c.model = Some("NVIDIA H200".to_owned());
        vec![c]
    }

    static NO_SHARING: std::sync::LazyLock<gpuquota_model::workloads::sharing::ReplicasPerGpu> =
        std::sync::LazyLock::new(Default::default);

    fn settings(cards: &[CardType]) -> Settings<'_> {
        Settings {
            card_types: cards,
            window: Window {
                start: 0,
                end: 86_400,
            },
            lookback: 300,
            sharing: &NO_SHARING,
        }
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
        let cards = h200();
        let found = read_text("f", text, settings(&cards)).unwrap();
        let holders: Vec<_> = found
            .holdings
            .iter()
            .map(|s| {
                (
                    s.holder.clone().unwrap(),
                    s.shape.clone(),
                    s.intervals.clone(),
                )
            })
            .collect();
        assert_eq!(
            holders,
            vec![
                ("n1/G1".to_owned(), Shape::Whole(1), vec![(0, 300)]),
                (
                    "n2/G2/2".to_owned(),
                    Shape::Mig {
                        profile: "3g.71gb".to_owned(),
                        count: 1
                    },
                    // stale at the device's next scrape
                    vec![(0, 30)]
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
        let found = read_text("f", text, settings(&cards)).unwrap();
        assert!(found.holdings.iter().all(|s| s.shape
            == Shape::Fraction {
                replicas: 1,
                per_gpu: 4
            }));
        // without replicasPerGpu: the sharers seen, with a warning
        let cards = h200();
        let found = read_text("f", text, settings(&cards)).unwrap();
        assert_eq!(
            found.holdings[0].shape,
            Shape::Fraction {
                replicas: 1,
                per_gpu: 2
            }
        );
        assert!(found.warnings[0].contains("replicasPerGpu"));
        // without replicasPerGpu but with the device plugin's configuration for node `n`
        let mut sharing = gpuquota_model::workloads::sharing::ReplicasPerGpu::default();
        sharing.by_node.insert("n".to_owned(), Some(4));
        let s = Settings {
            sharing: &sharing,
            ..settings(&cards)
        };
        let found = read_text("f", text, s).unwrap();
        assert!(found.holdings.iter().all(|h| h.shape
            == Shape::Fraction {
                replicas: 1,
                per_gpu: 4
            }));
        assert!(found.warnings.is_empty(), "{:?}", found.warnings);
    }

    /// The streaming reader and the keep-every-point reader agree, whatever the line order.
    #[test]
    fn time_order_does_not_change_the_result() {
        let line = |metric: &str, gpu: u32, ns: Option<&str>, v: f64, t: i64| {
            let pod = ns
                .map(|ns| format!(",namespace=\"{ns}\",pod=\"p\""))
                .unwrap_or_default();
            format!(
                "{metric}{{UUID=\"G{gpu}\",modelName=\"NVIDIA H200\",hostname=\"n\"{pod}}} {v} {}\n",
                t * 1000
            )
        };
        let mut ordered = String::new();
        for t in (0..3600).step_by(60) {
            ordered.push_str(&line("DCGM_FI_DEV_GPU_UTIL", 0, Some("a"), 50.0, t));
            ordered.push_str(&line(
                "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
                0,
                Some("a"),
                0.25,
                t,
            ));
            let ns = (t % 600 != 0).then_some("b");
            ordered.push_str(&line("DCGM_FI_DEV_GPU_UTIL", 1, ns, 20.0, t));
        }
        // one metric family after the other: each device goes back in time once
        let mut by_family = String::new();
        for family in ["DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_GR_ENGINE_ACTIVE"] {
            for l in ordered.lines().filter(|l| l.starts_with(family)) {
                by_family.push_str(l);
                by_family.push('\n');
            }
        }
        let cards = h200();
        let a = read_text("f", &ordered, settings(&cards)).unwrap();
        let b = read_text("f", &by_family, settings(&cards)).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.holdings[0].intervals, vec![(0, 3840)]);
        // the engine's busy fraction wins over GPU_UTIL: 0.25 over 3,840 s
        assert_eq!(a.holdings[0].busy_micro_seconds, Some(3840 * 250_000));
        // G1 is idle at every tenth minute: held [60, 600), [660, 1200), ...
        assert_eq!(a.holdings[1].intervals[0], (60, 600));
        assert_eq!(a.holdings[1].intervals.len(), 6);
    }
}
