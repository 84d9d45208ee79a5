//! `gpuquota meter FILE --prometheus URL [--start T] [--end T]`: metering from the DCGM
//! series of a live Prometheus, as from the saved files a document names.
//!
//! The document (FILE) still gives the window, prices, departments and card types; its
//! `dcgm:` files, if any, are read first, then the server is asked for `--query` (default
//! `DCGM_FI_DEV_GPU_UTIL`) over `[--start, --end]` (default the document's window) at
//! `--step` seconds (default 60), in windows under Prometheus' 11,000 points per series
//! ([`crate::metering::prometheus`]), each answer streamed through the same reader as a
//! `query_range` file. Exit status 2 for a server that cannot be reached, an HTTP error
//! (Prometheus' own message quoted), no answer within `--timeout` seconds, an answer with
//! warnings (partial data), a bad URL, time or step; nothing is printed on stdout then.

use std::path::Path;

use crate::metering::file::{Metered, Refused};
use crate::metering::prometheus::{DEFAULT_STEP_SECONDS, DEFAULT_TIMEOUT_SECONDS, Live};

/// The `--prometheus` flags of `gpuquota meter`, as written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PrometheusArgs {
    /// `--prometheus URL`.
    pub url: String,
    /// `--start`: RFC 3339 or unix seconds; `None`: the document's window start.
    pub start: Option<String>,
    /// `--end`: RFC 3339 or unix seconds; `None`: the document's window end.
    pub end: Option<String>,
    /// `--step` seconds; `None`: 60.
    pub step: Option<i64>,
    /// `--query`; `None`: `DCGM_FI_DEV_GPU_UTIL`.
    pub query: Option<String>,
    /// `--timeout` seconds per query; `None`: 120.
    pub timeout: Option<u64>,
}

impl PrometheusArgs {
    /// The flags with only the URL given.
    pub fn new(url: impl Into<String>) -> PrometheusArgs {
        PrometheusArgs {
            url: url.into(),
            ..PrometheusArgs::default()
        }
    }
}

/// Unix seconds of `--start`/`--end`: an integer, or an RFC 3339 time.
fn instant(flag: &str, v: &str) -> Result<i64, Refused> {
    if let Ok(s) = v.parse::<i64>() {
        return Ok(s);
    }
    crate::model::Timestamp::parse(v)
        .ok()
        .and_then(|t| i64::try_from(t.unix_nanos().div_euclid(1_000_000_000)).ok())
        .ok_or_else(|| {
            Refused::usage(format!(
                "{flag} {v:?}: not an RFC 3339 time (2026-11-01T00:00:00Z) or unix seconds"
            ))
        })
}

/// Meters the document at `path` with the DCGM series of the server `args.url` (the
/// [module docs](self)).
///
/// # Errors
/// [`Refused`]: status 2 for a time that cannot be read or any failure of the server, else
/// as [`crate::metering::file::meter_file`].
pub fn meter(path: &Path, strict: bool, args: &PrometheusArgs) -> Result<Metered, Refused> {
    let mut live = Live::new(args.url.clone());
    live.start = args
        .start
        .as_deref()
        .map(|v| instant("--start", v))
        .transpose()?;
    live.end = args
        .end
        .as_deref()
        .map(|v| instant("--end", v))
        .transpose()?;
    live.step = args.step.unwrap_or(DEFAULT_STEP_SECONDS);
    live.timeout_seconds = args.timeout.unwrap_or(DEFAULT_TIMEOUT_SECONDS);
    if let Some(q) = &args.query {
        live.query = q.clone();
    }
    crate::metering::file::meter_file_live(path, strict, &live)
}
