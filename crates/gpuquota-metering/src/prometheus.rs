//! Prometheus' HTTP API as a source of series: `/api/v1/query_range`, split into windows.
//!
//! Prometheus refuses a range query that would return more than 11,000 points per series
//! ([`MAX_POINTS_PER_SERIES`]; prometheus/prometheus web/api/v1/api.go). A period is
//! therefore asked for in windows of at most [`POINTS_PER_WINDOW`] points of the step
//! ([`windows`]): the points of window `k` are the grid `start + i · step` for
//! `i = k · P … min((k + 1) · P − 1, n)`, so consecutive windows neither overlap nor leave
//! a gap, and each answer can be read, folded and dropped before the next is asked for
//! (memory bounded by one window's answer, not by the period).
//!
//! [`read_answer`] streams one answer (`resultType: matrix`) series by series
//! ([`parse_answer`] collects them); the metering reader
//! ([`crate::dcgm`]) streams the same answers. An answer whose `status` is `error`, whose
//! `resultType` is not `matrix`, or that carries `warnings` (Prometheus' sign of partial
//! data) is refused: a bill or a replay is not made from part of the data.
//!
//! With the feature `http`, [`Client`] asks a live server (plain `http://` only: a server
//! behind TLS is reached through a local proxy or port-forward). Every failure is one
//! [`Diagnostic`] of code `read-failed` (exit status 2, as for a file that cannot be read)
//! naming the server and the query: the server unreachable, no answer within the timeout,
//! an HTTP status other than 200 (with Prometheus' `errorType` and `error` when the body is
//! its error JSON), an answer that is not JSON.

use gpuquota_model::diag::{Diagnostic, codes};

/// The most points per series Prometheus returns for one range query.
pub const MAX_POINTS_PER_SERIES: i64 = 11_000;

/// The most points per series asked for in one window (below [`MAX_POINTS_PER_SERIES`]).
pub const POINTS_PER_WINDOW: i64 = 10_000;

/// The step (seconds) used when none is given: one point a minute.
pub const DEFAULT_STEP_SECONDS: i64 = 60;

/// The time (seconds) one query may take, connection included, when none is given.
pub const DEFAULT_TIMEOUT_SECONDS: u64 = 120;

/// The windows `(start, end)` (unix seconds, both included) that ask for `[start, end]`
/// at `step` seconds with at most [`POINTS_PER_WINDOW`] points each (the
/// [module docs](self)).
///
/// # Errors
/// A `step` that is not positive, or an `end` before `start` (code `invalid`).
///
/// # Complexity
/// O(number of windows).
pub fn windows(start: i64, end: i64, step: i64) -> Result<Vec<(i64, i64)>, Diagnostic> {
    windows_of(start, end, step, POINTS_PER_WINDOW)
}

/// [`windows`] of at most `points` points each (at least 1).
///
/// # Errors
/// As [`windows`].
///
/// # Complexity
/// O(number of windows).
pub fn windows_of(
    start: i64,
    end: i64,
    step: i64,
    points: i64,
) -> Result<Vec<(i64, i64)>, Diagnostic> {
    let points = points.clamp(1, POINTS_PER_WINDOW);
    if step <= 0 {
        return Err(Diagnostic::error(
            codes::INVALID,
            format!("the step must be a positive number of seconds, not {step}"),
        ));
    }
    if end < start {
        return Err(Diagnostic::error(
            codes::INVALID,
            format!("the end ({end}) is before the start ({start})"),
        ));
    }
    let last = (end - start) / step;
    let mut out = Vec::new();
    let mut i = 0i64;
    while i <= last {
        let j = (i + points - 1).min(last);
        out.push((start + i * step, start + j * step));
        i = j + 1;
    }
    Ok(out)
}

/// One series of an answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Its labels (`__name__` among them when the query kept it).
    pub labels: std::collections::BTreeMap<String, String>,
    /// Its points: (unix milliseconds, value).
    pub points: Vec<(i64, f64)>,
}

impl Series {
    /// The value of a label, `""` when absent.
    pub fn label(&self, name: &str) -> &str {
        self.labels.get(name).map_or("", String::as_str)
    }
}

#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
struct AnswerSeries {
    #[serde(default)]
    metric: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    values: Vec<(f64, String)>,
}

/// What the top level of an answer said, besides its series.
#[cfg(feature = "serde")]
#[derive(Default)]
struct Said {
    status: Option<String>,
    error_type: Option<String>,
    error: Option<String>,
    warnings: Vec<String>,
    result_type: Option<String>,
    saw_data: bool,
    /// The first series that could not be read (index, message).
    bad: Option<String>,
    index: usize,
}

#[cfg(feature = "serde")]
struct Top<'s, 'f>(&'s mut Said, &'f mut dyn FnMut(Series));

#[cfg(feature = "serde")]
impl<'de> serde::de::DeserializeSeed<'de> for Top<'_, '_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::de::Visitor<'de> for Top<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a query_range answer (an object)")
    }
    fn visit_map<M: serde::de::MapAccess<'de>>(self, mut m: M) -> Result<(), M::Error> {
        while let Some(k) = m.next_key::<String>()? {
            match k.as_str() {
                "status" => self.0.status = m.next_value()?,
                "errorType" => self.0.error_type = m.next_value()?,
                "error" => self.0.error = m.next_value()?,
                "warnings" => {
                    self.0.warnings = m.next_value::<Option<Vec<String>>>()?.unwrap_or_default();
                }
                "data" => {
                    self.0.saw_data = true;
                    m.next_value_seed(Data(&mut *self.0, &mut *self.1))?;
                }
                _ => {
                    m.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(feature = "serde")]
struct Data<'s, 'f>(&'s mut Said, &'f mut dyn FnMut(Series));

#[cfg(feature = "serde")]
impl<'de> serde::de::DeserializeSeed<'de> for Data<'_, '_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::de::Visitor<'de> for Data<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("data: {resultType, result}")
    }
    fn visit_map<M: serde::de::MapAccess<'de>>(self, mut m: M) -> Result<(), M::Error> {
        while let Some(k) = m.next_key::<String>()? {
            match k.as_str() {
                "resultType" => self.0.result_type = m.next_value()?,
                "result" => m.next_value_seed(Result_(&mut *self.0, &mut *self.1))?,
                _ => {
                    m.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(feature = "serde")]
struct Result_<'s, 'f>(&'s mut Said, &'f mut dyn FnMut(Series));

#[cfg(feature = "serde")]
impl<'de> serde::de::DeserializeSeed<'de> for Result_<'_, '_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::de::Visitor<'de> for Result_<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("data.result: a list of series")
    }
    fn visit_seq<S: serde::de::SeqAccess<'de>>(self, mut seq: S) -> Result<(), S::Error> {
        // one series at a time: read, converted, handed on, dropped
        while let Some(s) = seq.next_element::<AnswerSeries>()? {
            let i = self.0.index;
            self.0.index += 1;
            if self.0.bad.is_some() {
                continue;
            }
            let mut points = Vec::with_capacity(s.values.len());
            for (j, (t, v)) in s.values.into_iter().enumerate() {
                match v.parse::<f64>() {
                    Ok(value) if t.is_finite() => points.push(((t * 1000.0).round() as i64, value)),
                    _ => {
                        self.0.bad = Some(format!(
                            "data.result[{i}].values[{j}]: [{t}, {v:?}] is not a time and a number"
                        ));
                        break;
                    }
                }
            }
            if self.0.bad.is_none() {
                (self.1)(Series {
                    labels: s.metric,
                    points,
                });
            }
        }
        Ok(())
    }
}

/// Reads one `query_range` answer as a stream, handing each series to `each` as soon as it
/// is read (memory: one series), then checks what the answer said of itself (the
/// [module docs](self) say which answers are refused). A caller that gets an error drops
/// what `each` was given.
///
/// # Errors
/// One diagnostic naming `source`: code `malformed` for text that is not a query_range
/// answer (`read-failed` when the stream fails), `invalid` for an error answer, another
/// result type, a value that is not a number or an answer with warnings.
///
/// # Complexity
/// O(answer size) time, O(largest series) memory.
#[cfg(feature = "serde")]
pub fn read_answer(
    source: &str,
    reader: impl std::io::Read,
    each: &mut dyn FnMut(Series),
) -> Result<(), Diagnostic> {
    use serde::de::DeserializeSeed;
    let mut said = Said::default();
    let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::new(reader));
    Top(&mut said, each)
        .deserialize(&mut de)
        .and_then(|()| de.end())
        .map_err(|e| {
            let code = if e.is_io() {
                codes::READ_FAILED
            } else {
                codes::MALFORMED
            };
            Diagnostic::error(code, format!("not a Prometheus query_range answer: {e}"))
                .source(source.to_owned())
        })?;
    let bad = |m: String| Diagnostic::error(codes::INVALID, m).source(source.to_owned());
    if said.status.as_deref() == Some("error") {
        return Err(bad(format!(
            "Prometheus answered with an error ({}): {}",
            said.error_type.as_deref().unwrap_or("unknown"),
            said.error.as_deref().unwrap_or("")
        )));
    }
    if !said.warnings.is_empty() {
        return Err(bad(format!(
            "Prometheus answered with warnings, so the data may be partial: {}",
            said.warnings.join("; ")
        )));
    }
    if !said.saw_data {
        return Err(bad("no data: not a Prometheus query_range answer".into()));
    }
    match said.result_type.as_deref() {
        Some("matrix") => {}
        t => {
            return Err(bad(format!(
                "resultType {}: a query_range answer (matrix) is expected",
                t.unwrap_or("missing")
            )));
        }
    }
    match said.bad {
        Some(m) => Err(bad(m)),
        None => Ok(()),
    }
}

/// [`read_answer`] collecting the series.
///
/// # Errors
/// As [`read_answer`].
///
/// # Complexity
/// O(answer size).
#[cfg(feature = "serde")]
pub fn parse_answer(source: &str, reader: impl std::io::Read) -> Result<Vec<Series>, Diagnostic> {
    let mut out = Vec::new();
    read_answer(source, reader, &mut |s| out.push(s))?;
    Ok(out)
}

/// What `gpuquota meter --prometheus` asks a live server for (feature `http`): the DCGM
/// series of `query` over `[start, end]` at `step`, in windows of at most
/// `points_per_window` points.
#[cfg(feature = "http")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Live {
    /// The server, `http://HOST:PORT`.
    pub url: String,
    /// The PromQL query (default `DCGM_FI_DEV_GPU_UTIL`).
    pub query: String,
    /// The first instant (unix seconds); `None`: the metering window's start.
    pub start: Option<i64>,
    /// The last instant (unix seconds); `None`: the metering window's end.
    pub end: Option<i64>,
    /// Seconds between points.
    pub step: i64,
    /// The most points per series in one query (at most [`POINTS_PER_WINDOW`]).
    pub points_per_window: i64,
    /// Seconds one query may take.
    pub timeout_seconds: u64,
}

#[cfg(feature = "http")]
impl Live {
    /// Asks `url` with the defaults: `DCGM_FI_DEV_GPU_UTIL` over the metering window at
    /// [`DEFAULT_STEP_SECONDS`], windows of [`POINTS_PER_WINDOW`], [`DEFAULT_TIMEOUT_SECONDS`].
    pub fn new(url: impl Into<String>) -> Live {
        Live {
            url: url.into(),
            query: "DCGM_FI_DEV_GPU_UTIL".to_owned(),
            start: None,
            end: None,
            step: DEFAULT_STEP_SECONDS,
            points_per_window: POINTS_PER_WINDOW,
            timeout_seconds: DEFAULT_TIMEOUT_SECONDS,
        }
    }
}

/// A live Prometheus server (feature `http`).
#[cfg(feature = "http")]
#[derive(Debug, Clone)]
pub struct Client {
    base: String,
    timeout: std::time::Duration,
    agent: ureq::Agent,
}

#[cfg(feature = "http")]
impl Client {
    /// A client of the server at `url` (`http://host:port`, a path prefix allowed), each
    /// query given at most `timeout_seconds`.
    ///
    /// # Errors
    /// A URL that is not `http://…` (code `invalid`).
    pub fn new(url: &str, timeout_seconds: u64) -> Result<Client, Diagnostic> {
        let base = url.trim_end_matches('/').to_owned();
        if !base.starts_with("http://") || base.len() <= "http://".len() {
            return Err(Diagnostic::error(
                codes::INVALID,
                format!(
                    "the Prometheus URL {url:?} is not http://HOST:PORT (https is not \
                     supported: use a local port-forward)"
                ),
            ));
        }
        let timeout = std::time::Duration::from_secs(timeout_seconds.max(1));
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .build()
            .into();
        Ok(Client {
            base,
            timeout,
            agent,
        })
    }

    /// The server's URL, as diagnostics name it.
    pub fn url(&self) -> &str {
        &self.base
    }

    /// The name of one query in diagnostics: `URL query_range QUERY [start, end] step s`.
    pub fn describe(&self, query: &str, start: i64, end: i64, step: i64) -> String {
        format!(
            "{}/api/v1/query_range {query} [{}, {}] step {step}s",
            self.base,
            gpuquota_model::Timestamp::from_unix(start, 0)
                .map_or_else(|| start.to_string(), |t| t.to_string()),
            gpuquota_model::Timestamp::from_unix(end, 0)
                .map_or_else(|| end.to_string(), |t| t.to_string()),
        )
    }

    /// Asks `/api/v1/query_range` for `query` over `[start, end]` (unix seconds) at `step`
    /// seconds and returns the answer's body as a stream (HTTP status 200 only).
    ///
    /// # Errors
    /// One diagnostic of code `read-failed` naming the query ([`Client::describe`]): the
    /// server unreachable, no answer within the timeout, a status other than 200 (with
    /// Prometheus' `errorType` and `error` when its body says them).
    pub fn query_range(
        &self,
        query: &str,
        start: i64,
        end: i64,
        step: i64,
    ) -> Result<Box<dyn std::io::Read + Send>, Diagnostic> {
        let name = self.describe(query, start, end, step);
        let fail = |m: String| Diagnostic::error(codes::READ_FAILED, m).source(name.clone());
        let answer = self
            .agent
            .get(format!("{}/api/v1/query_range", self.base))
            .query("query", query)
            .query("start", start.to_string())
            .query("end", end.to_string())
            .query("step", step.to_string())
            .call();
        let response = match answer {
            Ok(r) => r,
            Err(ureq::Error::Timeout(_)) => {
                return Err(fail(format!(
                    "no answer from Prometheus within {} s",
                    self.timeout.as_secs()
                )));
            }
            Err(e @ (ureq::Error::Io(_) | ureq::Error::ConnectionFailed)) => {
                return Err(fail(format!(
                    "cannot reach Prometheus at {}: {e}",
                    self.base
                )));
            }
            Err(ureq::Error::HostNotFound) => {
                return Err(fail(format!(
                    "cannot reach Prometheus at {}: host not found",
                    self.base
                )));
            }
            Err(e) => return Err(fail(format!("the query to Prometheus failed: {e}"))),
        };
        let status = response.status().as_u16();
        let body = response
            .into_body()
            .into_with_config()
            .limit(u64::MAX)
            .reader();
        if status == 200 {
            return Ok(Box::new(body));
        }
        // Prometheus' error JSON: {"status":"error","errorType":"bad_data","error":"…"}
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut std::io::Read::take(body, 64 << 10), &mut text);
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct ErrorAnswer {
            error_type: Option<String>,
            error: Option<String>,
        }
        let said = serde_json::from_str::<ErrorAnswer>(&text)
            .ok()
            .and_then(|e| {
                e.error
                    .map(|m| format!("{} ({})", m, e.error_type.as_deref().unwrap_or("unknown")))
            })
            .unwrap_or_else(|| {
                let t = text.trim();
                let cut: String = t.chars().take(200).collect();
                if cut.is_empty() {
                    "no explanation in the body".to_owned()
                } else {
                    cut
                }
            });
        Err(fail(format!("Prometheus answered HTTP {status}: {said}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_cover_the_grid_once_with_at_most_ten_thousand_points() {
        // 30 days at 60 s: 43,201 points -> 5 windows of 10,000 and one of 3,201
        let w = windows(0, 30 * 86_400, 60).unwrap();
        assert_eq!(w.len(), 5);
        assert_eq!(w[0], (0, 599_940));
        assert_eq!(w[1], (600_000, 1_199_940));
        assert_eq!(w[4], (2_400_000, 2_592_000));
        // one point
        assert_eq!(windows(100, 100, 60).unwrap(), vec![(100, 100)]);
        // an end off the grid: the last point is the grid's last before it
        assert_eq!(windows(0, 119, 60).unwrap(), vec![(0, 60)]);
        assert!(windows(0, 10, 0).is_err());
        assert!(windows(10, 0, 60).is_err());
    }

    #[cfg(feature = "serde")]
    #[test]
    fn an_answer_is_read_and_errors_or_warnings_are_refused() {
        let ok = r#"{"status":"success","data":{"resultType":"matrix","result":[
            {"metric":{"__name__":"kube_pod_created","pod":"p"},"values":[[1793491200,"1793491190"],[1793491260.5,"1793491190"]]}]}}"#;
        let s = parse_answer("a.json", ok.as_bytes()).unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].label("pod"), "p");
        assert_eq!(s[0].label("namespace"), "");
        assert_eq!(
            s[0].points,
            vec![
                (1_793_491_200_000, 1_793_491_190.0),
                (1_793_491_260_500, 1_793_491_190.0)
            ]
        );
        let err = r#"{"status":"error","errorType":"bad_data","error":"exceeded maximum resolution of 11,000 points per timeseries"}"#;
        let e = parse_answer("b.json", err.as_bytes()).unwrap_err();
        assert_eq!(
            e.message,
            "Prometheus answered with an error (bad_data): exceeded maximum resolution of \
             11,000 points per timeseries"
        );
        let warned = r#"{"status":"success","data":{"resultType":"matrix","result":[]},"warnings":["some store unavailable"]}"#;
        let e = parse_answer("c.json", warned.as_bytes()).unwrap_err();
        assert_eq!(
            e.message,
            "Prometheus answered with warnings, so the data may be partial: some store unavailable"
        );
        let vector = r#"{"status":"success","data":{"resultType":"vector","result":[]}}"#;
        assert!(parse_answer("d.json", vector.as_bytes()).is_err());
        let e = parse_answer("e.json", "[1,2]".as_bytes()).unwrap_err();
        assert_eq!(e.code, codes::MALFORMED);
        assert_eq!(e.source, "e.json");
    }
}
