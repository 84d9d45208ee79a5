//! Metering a document file as `gpuquota meter` does: the file read through the model's
//! bounded reader, its unknown fields reported, the `dcgm:` files (streamed) and `cluster:`
//! files it names read relative to its directory, then metered as [`crate::run`] does.
//!
//! Every problem is a line for stderr with its severity (`error: FILE: …`,
//! `warning: FILE: …`), in the order they arise; the unknown fields and the report's warnings
//! are errors under `strict`, and then nothing is metered.

use std::path::{Path, PathBuf};

use gpuquota_model::diag::{Diagnostic, codes};

use crate::engine::meter;
use crate::{Document, MeteringError, Report};

/// A metered file: the report, and the warning lines to print whatever the output format.
#[derive(Debug)]
#[non_exhaustive]
pub struct Metered {
    /// The report.
    pub report: Report,
    /// The file's unknown fields and the report's warnings (cards held beyond a type's
    /// capacity, overbooked MIG instances, coverage gaps, …), one `warning: FILE: …` line each.
    pub warnings: Vec<String>,
}

/// Why a file was not metered: the exit status a command gives it and the lines to print.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Refused {
    /// 2 when a file (the document or one it names) cannot be opened, else 1.
    pub code: u8,
    /// The warnings printed before the problem, then every problem, one per line with its
    /// severity.
    pub lines: Vec<String>,
}

impl Refused {
    /// Exit status 2 with `error: MESSAGE`: a flag value that cannot be used.
    pub fn usage(message: impl std::fmt::Display) -> Refused {
        Refused {
            code: 2,
            lines: vec![format!("error: {message}")],
        }
    }

    /// Refused after `lines`, with `problems` (each prefixed `error: `).
    fn new(mut lines: Vec<String>, problems: Vec<String>) -> Refused {
        lines.extend(problems.into_iter().map(|p| format!("error: {p}")));
        Refused { code: 1, lines }
    }

    /// A file that could not be read: exit status 2 when it cannot be opened, 1 when it is
    /// not UTF-8 text or too large.
    fn unreadable(d: &Diagnostic) -> Refused {
        let code = if d.code == codes::READ_FAILED { 2 } else { 1 };
        Refused {
            code,
            lines: vec![format!("error: {d}")],
        }
    }
}

/// Reads, validates and meters the document at `path` (the [module docs](self)).
///
/// # Errors
/// [`Refused`] with every problem of the file, or the unknown fields and warnings under
/// `strict`.
///
/// # Complexity
/// That of [`crate::run`] after reading the files.
pub fn meter_file(path: &Path, strict: bool) -> Result<Metered, Refused> {
    meter_with(path, strict, None)
}

/// [`meter_file`] with the DCGM series of a live Prometheus added to the document's
/// `dcgm:` files (feature `http`): `live.query` over `[live.start, live.end]` (default the
/// document's window) at `live.step`, asked in windows under the server's limit
/// ([`crate::prometheus::windows_of`]), each answer streamed through the reader as a file
/// of its own, in time order after the document's files.
///
/// # Errors
/// As [`meter_file`]; a server that cannot be reached, an HTTP error, no answer within the
/// timeout, an error answer or one with warnings (partial data) refuses the whole run
/// with exit status 2 (a source that cannot be read), naming the server and the query.
///
/// # Complexity
/// That of [`meter_file`]; memory bounded by one window's answer for the live series.
#[cfg(feature = "http")]
pub fn meter_file_live(
    path: &Path,
    strict: bool,
    live: &crate::prometheus::Live,
) -> Result<Metered, Refused> {
    meter_with(path, strict, Some(live))
}

#[cfg(not(feature = "http"))]
type LiveArg<'a> = Option<&'a std::convert::Infallible>;
#[cfg(feature = "http")]
type LiveArg<'a> = Option<&'a crate::prometheus::Live>;

fn meter_with(path: &Path, strict: bool, live: LiveArg<'_>) -> Result<Metered, Refused> {
    let text = gpuquota_model::source::read_text(path).map_err(|d| Refused::unreadable(&d))?;
    let file = path.display().to_string();
    let mut stderr = Vec::new();
    #[allow(unused_mut)]
    let mut doc = match Document::from_yaml(&text) {
        Ok(d) => d,
        Err(e) => return Err(Refused::new(stderr, every_problem(&file, &e))),
    };
    // unknown fields: a warning with the path and a "did you mean", an error under strict
    let mut refused = false;
    for d in &doc.diagnostics(&file) {
        let error = d.is_error(strict);
        refused |= error;
        stderr.push(format!("{}: {d}", if error { "error" } else { "warning" }));
    }
    if refused {
        return Err(Refused::new(stderr, Vec::new()));
    }
    let dir = path.parent().map(PathBuf::from).unwrap_or_default();
    // a live server's answers follow the files, one window each
    let files = doc.dcgm.len();
    #[cfg(feature = "http")]
    let asked = match live {
        // a URL, window or step that cannot be asked for is a bad flag value: status 2
        Some(l) => Some(live_sources(&mut doc, l).map_err(Refused::usage)?),
        None => None,
    };
    #[cfg(not(feature = "http"))]
    let _ = live;
    // every dcgm: file is streamed through the one bounded reader
    let mut open = |i: usize, name: &str| {
        #[cfg(feature = "http")]
        if let Some((client, q, step, ws)) = &asked
            && let Some(&(a, b)) = i.checked_sub(files).and_then(|k| ws.get(k))
        {
            return client
                .query_range(q, a, b, *step)
                .map(|r| {
                    gpuquota_model::source::Stream::from_reader(
                        name,
                        std::io::BufReader::with_capacity(1 << 16, r),
                        gpuquota_model::source::MAX_STREAM_BYTES,
                    )
                })
                .map_err(MeteringError::Read);
        }
        let _ = (i, files);
        crate::dcgm::open_file(&dir.join(name))
    };
    // cluster: files (Nodes, the device plugin's sharing ConfigMap) give replicas per GPU
    let mut cluster = Vec::with_capacity(doc.cluster.len());
    for name in &doc.cluster {
        let text = gpuquota_model::source::read_text(&dir.join(name))
            .map_err(|d| Refused::unreadable(&d))?;
        cluster.push((name.clone(), text));
    }
    let report = match Document::sharing_from(&cluster)
        .and_then(|sharing| doc.into_input_owned_with_sharing(&mut open, sharing))
        .and_then(|input| meter(&input))
    {
        Ok(r) => r,
        Err(e) => {
            // a dcgm: file that cannot be read exits 2, as every file that cannot be read
            let unreadable = matches!(&e, MeteringError::Read(d) if d.code == codes::READ_FAILED);
            let mut refusal = Refused::new(stderr, every_problem(&file, &e));
            if unreadable {
                refusal.code = 2;
            }
            return Err(refusal);
        }
    };
    // the report's warnings reach stderr whatever the format; under strict each is an error
    for w in &report.warnings {
        refused |= strict;
        stderr.push(format!(
            "{}: {file}: {w}",
            if strict { "error" } else { "warning" }
        ));
    }
    if refused {
        return Err(Refused::new(stderr, Vec::new()));
    }
    Ok(Metered {
        report,
        warnings: stderr,
    })
}

/// What the opener asks a live server for: the client, the query, the step and the windows.
#[cfg(feature = "http")]
type Asked = (crate::prometheus::Client, String, i64, Vec<(i64, i64)>);

/// The live server's windows as `dcgm:` entries of `doc` (format `query-range`, named by
/// the query), and what [`meter_with`]'s opener asks for them.
#[cfg(feature = "http")]
fn live_sources(doc: &mut Document, live: &crate::prometheus::Live) -> Result<Asked, Diagnostic> {
    use crate::input::{DcgmEntryIn, DcgmIn};
    let client = crate::prometheus::Client::new(&live.url, live.timeout_seconds)?;
    let window = |t: Option<i64>, of: &crate::input::TimeIn, field: &str| match t {
        Some(t) => Ok(t),
        None => crate::input::convert::time(of, field)
            .map_err(|e| Diagnostic::error(codes::INVALID, e.to_string()).field(field.to_owned())),
    };
    let start = window(live.start, &doc.window.start, "window.start")?;
    let end = window(live.end, &doc.window.end, "window.end")?;
    let ws = crate::prometheus::windows_of(start, end, live.step, live.points_per_window)
        .map_err(|d| d.source(live.url.clone()))?;
    for (a, b) in &ws {
        doc.dcgm.push(DcgmIn::Entry(DcgmEntryIn {
            path: client.describe(&live.query, *a, *b, live.step),
            format: Some("query-range".to_owned()),
            scrape_time: None,
            honor_labels: None,
        }));
    }
    Ok((client, live.query.clone(), live.step, ws))
}

/// One line per problem, each prefixed with the file (an error may list several).
fn every_problem(file: &str, e: &MeteringError) -> Vec<String> {
    e.to_string()
        .lines()
        .map(|l| format!("{file}: {l}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch directory holding `files`.
    fn scratch(name: &str, files: &[(&str, &str)]) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("gpuquota-meter-file-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (f, text) in files {
            std::fs::write(dir.join(f), text).unwrap();
        }
        dir
    }

    const DOC: &str = "window: {start: 0, end: 3600}\n\
        cardTypes: [{name: H200, pricePerHour: \"4.50\", capacity: 1}]\n\
        records: [{department: A, cardType: H200, gpus: 2, start: 0, end: 3600}]\n";

    #[test]
    fn warnings_are_lines_and_errors_under_strict() {
        let dir = scratch("warn", &[("m.yaml", &format!("{DOC}colour: blue\n"))]);
        let path = dir.join("m.yaml");
        let file = path.display().to_string();
        let metered = meter_file(&path, false).unwrap();
        // 2 cards held for an hour at $4.50
        assert_eq!(metered.report.to_output().totals.cost, "9.00");
        // the unknown field, then the report's two warnings: 2 cards held of a type with 1
        assert_eq!(
            metered.warnings,
            [
                format!("warning: {file}: colour: unknown field colour ignored"),
                format!(
                    "warning: {file}: card type H200: 2.0000 cards held at 0, more than the capacity 1 (more cards than exist: check the input); idle (capacity × T − charged) shrinks by the excess"
                ),
                format!(
                    "warning: {file}: card type H200: 2.000000 hours charged exceed the capacity of 1.000000 hours; idle shown as 0"
                ),
            ]
        );
        let refused = meter_file(&path, true).unwrap_err();
        assert_eq!(refused.code, 1);
        assert!(refused.lines.iter().all(|l| l.starts_with("error: ")));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_that_cannot_be_opened_is_exit_status_2() {
        let dir = scratch(
            "missing",
            &[("m.yaml", &format!("{DOC}dcgm: [gone.prom]\n"))],
        );
        let refused = meter_file(&dir.join("nothing.yaml"), false).unwrap_err();
        assert_eq!(refused.code, 2);
        let refused = meter_file(&dir.join("m.yaml"), false).unwrap_err();
        assert_eq!(refused.code, 2);
        assert!(
            refused.lines[0].contains("gone.prom"),
            "{:?}",
            refused.lines
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
