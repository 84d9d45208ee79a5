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

mod chunks;
#[cfg(feature = "serde")]
mod json;
mod series;
mod text;

use chunks::*;
#[cfg(feature = "serde")]
use json::*;
use series::*;
use text::*;

pub use text::parse_exposition;

/// The longest line of a metrics text file (bytes): an exposition line is a few hundred
/// bytes, so a longer one means the file is not metrics text (a file of zero bytes without a
/// newline is refused after one mebibyte, not read until memory runs out; a device such as
/// `/dev/zero` is not opened at all). A `query_range` JSON answer (the first
/// character is `{`) has no line limit: it is streamed, not read line by line.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Opens a metrics file for [`read`] (standard input for `-`): the bounded line reader of
/// [`gpuquota_model::source`] over the file, with the stream limit
/// [`gpuquota_model::source::MAX_STREAM_BYTES`] and a limit per line ([`MAX_LINE_BYTES`]).
///
/// Only a regular file is opened ([`gpuquota_model::source::open_file`]): a FIFO, socket,
/// device or directory is refused at once.
///
/// # Errors
/// [`MeteringError::Read`] (code `read-failed`) naming the file when it cannot be opened or
/// is not a regular file.
pub fn open_file(path: &std::path::Path) -> Result<Stream, MeteringError> {
    use gpuquota_model::source::{MAX_STREAM_BYTES, display_name};
    let name = display_name(path);
    let reader: Box<dyn std::io::Read> = if path.as_os_str() == "-" {
        Box::new(std::io::stdin())
    } else {
        match gpuquota_model::source::open_file(path) {
            Ok(f) => Box::new(f),
            Err(d) => return Err(MeteringError::Read(d)),
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
                usize::MAX
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

/// A `query_range` JSON answer, streamed with serde_json (feature `serde`).
#[cfg(feature = "serde")]
fn query_range(
    stream: &mut Stream,
    file: &mut FileState<'_>,
    acc: &mut Acc<'_>,
) -> Result<(), Stop> {
    read_json(stream, file, acc)
}

/// Without the `serde` feature there is no JSON reader: a `query_range` answer is refused,
/// naming the file.
#[cfg(not(feature = "serde"))]
fn query_range(
    _stream: &mut Stream,
    file: &mut FileState<'_>,
    _acc: &mut Acc<'_>,
) -> Result<(), Stop> {
    Err(MeteringError::Parse(format!(
        "{}: a Prometheus query_range answer (JSON) is read with the `serde` feature only",
        file.name()
    ))
    .into())
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
        acc.hold = acc.settings.lookback;
        if file.plan.format == Format::Auto
            && stream.peek_non_space().map_err(MeteringError::Read)? == Some(b'{')
        {
            file.plan.format = Format::QueryRange;
        }
        let r = if file.plan.format == Format::QueryRange {
            query_range(&mut stream, &mut file, acc)
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

    /// A text of more than one batch (the batches cut at line ends, parsed in pieces in
    /// parallel) books the same as the same lines read one by one by the general reader
    /// (two spaces before each timestamp send every line there), and a bad line past the
    /// first batch is named by its line number in the file.
    #[test]
    fn batches_and_the_general_reader_agree() {
        let mut text = String::new();
        let mut lines = 0usize;
        for k in 0..6_000i64 {
            text.push_str("# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n");
            lines += 1;
            for g in 0..8i64 {
                let pod = if (k / 90 + g) % 3 == 0 {
                    String::new()
                } else {
                    format!(",namespace=\"ns-{}\",pod=\"job-{g}-{}\"", g % 3, k / 90)
                };
                text.push_str(&format!(
                    "DCGM_FI_DEV_GPU_UTIL{{gpu=\"{g}\",UUID=\"GPU-{g:08x}-7c1e-4f2a-9b3d-5e6f7a8b9c0d\",\
                     modelName=\"NVIDIA H200\",Hostname=\"gpu-node-000\",\
                     DCGM_FI_DRIVER_VERSION=\"570.133.20\"{pod}}} {} {}\n",
                    (k * 7 + g) % 101,
                    k * 60_000
                ));
                lines += 1;
            }
        }
        // more than one batch of 8 MiB
        assert!(text.len() > 8 << 20, "{}", text.len());
        let cards = h200();
        let s = Settings {
            window: Window {
                start: 0,
                end: 6_000 * 60,
            },
            ..settings(&cards)
        };
        let fast = read_text("f", &text, s).unwrap();
        let general =
            read_text("f", &text.replace(" 0\n", "  0\n").replace("} ", "}  "), s).unwrap();
        assert_eq!(fast, general);
        // 8 GPUs: 6,000 minutes, a third of each GPU's 90-minute stretches idle
        let held: i64 = fast
            .holdings
            .iter()
            .flat_map(|h| h.intervals.iter().map(|(a, b)| b - a))
            .sum();
        // 67 stretches of 90 minutes per GPU (the last one 60), those with (stretch + GPU)
        // % 3 != 0 held by a pod of their own: 357 holdings; the last stretch is held on
        // GPUs 1, 2, 4, 5 and 7 ((66 + g) % 3 != 0): 352 × 5,400 s + 5 × 3,600 s
        assert_eq!(fast.holdings.len(), 357);
        assert_eq!(held, 352 * 5_400 + 5 * 3_600);
        let bad = format!("{text}DCGM_FI_DEV_GPU_UTIL{{UUID=\"G\"}} x 1\n");
        assert_eq!(
            read_text("f", &bad, s).unwrap_err().to_string(),
            format!("f:{}: invalid value \"x\"", lines + 1)
        );
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
