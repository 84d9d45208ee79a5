//! The text formats read in batches: the stream is read in batches of [`BATCH`] bytes cut at a
//! line end, each batch split at line ends into [`PIECES`] pieces that are parsed in
//! parallel (rayon), and the parsed lines booked in file order on the calling thread while the
//! next batch is parsed. The booking order, and so the result, does not depend on the number
//! of threads.
//!
//! A piece's parser recognises the common line, `name{labels} value timestamp` with single
//! spaces and an integer timestamp, and records where its key is and its value and
//! timestamp; the booking looks the key up among the series seen before (one comparison when
//! the key follows the same key as last time). Every other line (comments that may matter,
//! lines without a timestamp, fractions, exemplars, odd spacing, a key seen for the first
//! time, malformed lines, a piece that is not UTF-8) goes through the general line reader
//! (`line_one`), which gives each its exact message and line number.

use rayon::prelude::*;

use super::*;

/// Bytes read per batch (the batch is then cut at its last line end).
const BATCH: usize = 8 << 20;
/// The buffer's first size (it doubles up to a batch as the input proves longer).
const START: usize = 64 << 10;
/// Pieces per batch, parsed in parallel.
const PIECES: usize = 8;

/// One line of a piece, by byte offsets into the batch.
#[derive(Debug, Clone, Copy)]
enum Rec {
    /// The common sample line: key span, value and the timestamp as written (an integer).
    Fast {
        line: u32,
        key: (u32, u32),
        value: f64,
        ts: i64,
    },
    /// Any other line that is not blank or an ignorable comment.
    Slow { line: u32, span: (u32, u32) },
}

/// A parsed piece.
#[derive(Debug, Default)]
struct Piece {
    /// Byte range in the batch.
    range: (usize, usize),
    recs: Vec<Rec>,
    /// Lines in the piece (blank ones included).
    lines: u32,
    /// The first line (index in the piece) that is not blank, comments included: after
    /// `# EOF` in an earlier piece it is an error.
    first_nonempty: Option<u32>,
    /// The piece is not UTF-8: its lines are read one by one by the general reader.
    not_utf8: bool,
}

/// A batch read and parsed.
struct Batch {
    /// The buffer; its first `used` bytes are the batch.
    buf: Vec<u8>,
    used: usize,
    /// Lines before this batch.
    line_base: u64,
    pieces: Vec<Piece>,
}

/// Why booking a batch stopped.
enum Halt {
    Stop(Stop),
    /// A failed line in a file read as milliseconds: the rest of the input decides whether it
    /// was OpenMetrics (its last line `# EOF`); the line number of the failure.
    CheckEof(MeteringError, u64),
}

impl From<Stop> for Halt {
    fn from(s: Stop) -> Halt {
        Halt::Stop(s)
    }
}

/// Reads a text file (Prometheus exposition or OpenMetrics) into the accumulator.
///
/// # Complexity
/// O(bytes) to parse, split over the threads; booking O(lines) (a line whose key follows the
/// same key as at the previous scrape costs one key comparison, another known key O(log s)
/// for s series). Memory: two batches (O([`BATCH`])) beside the accumulator.
pub(super) fn read_lines(
    stream: &mut Stream,
    file: &mut FileState<'_>,
    acc: &mut Acc<'_>,
) -> Result<(), Stop> {
    let mut carry = Vec::new();
    let mut line_base = 0u64;
    let mut cur: Option<Batch> = None;
    let mut spare = Vec::new();
    loop {
        let (buf, used) = read_batch(stream, &mut carry, std::mem::take(&mut spare))?;
        let done = used == 0;
        let (booked, pieces) = rayon::join(
            || match &cur {
                Some(b) => book(b, file, acc),
                None => Ok(()),
            },
            || parse(&buf[..used]),
        );
        if let Err(h) = booked {
            return Err(halt(h, file.plan, cur.as_ref(), &buf[..used], stream));
        }
        let lines: u64 = pieces.iter().map(|p| u64::from(p.lines)).sum();
        if let Some(old) = cur.replace(Batch {
            buf,
            used,
            line_base,
            pieces,
        }) {
            spare = old.buf;
        }
        line_base += lines;
        if done {
            return Ok(());
        }
    }
}

/// Turns a halt into the pass's outcome, reading the rest of the input for `CheckEof`.
fn halt(h: Halt, plan: FilePlan, cur: Option<&Batch>, next: &[u8], stream: &mut Stream) -> Stop {
    match h {
        Halt::Stop(s) => s,
        Halt::CheckEof(e, line_no) => {
            let mut last_eof = None;
            if let Some(b) = cur {
                // the lines after the failed one
                let bytes = &b.buf[..b.used];
                let skip = usize::try_from(line_no - b.line_base).unwrap_or(usize::MAX);
                let start = bytes
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| **c == b'\n')
                    .nth(skip.saturating_sub(1))
                    .map_or(bytes.len(), |(i, _)| i + 1);
                scan_eof(&bytes[start..], &mut last_eof);
            }
            scan_eof(next, &mut last_eof);
            let mut carry = Vec::new();
            loop {
                match read_batch(stream, &mut carry, Vec::new()) {
                    Ok((_, 0)) => break,
                    Ok((buf, used)) => scan_eof(&buf[..used], &mut last_eof),
                    Err(s) => return s,
                }
            }
            if last_eof == Some(true) {
                Stop::Redo(FilePlan {
                    format: Format::OpenMetrics,
                    ..plan
                })
            } else {
                Stop::Fail(e)
            }
        }
    }
}

/// Notes whether each non-blank line of `bytes` is `# EOF` (the last one wins).
fn scan_eof(bytes: &[u8], last_eof: &mut Option<bool>) {
    for l in bytes.split(|c| *c == b'\n') {
        let l = String::from_utf8_lossy(l);
        let l = l.trim();
        if !l.is_empty() {
            *last_eof = Some(l == "# EOF");
        }
    }
}

/// Reads the next batch into `buf` (a buffer of an earlier batch, reused so that its pages
/// are not mapped and zeroed again; the first starts at 64 KiB and doubles as needed): `carry` (the partial line left last time) and about
/// [`BATCH`] more bytes, cut after the last line end (the rest carried). Returns the buffer
/// and the bytes used (0 at the end of the input); the buffer's length is what is
/// initialised, not what is used.
fn read_batch(
    stream: &mut Stream,
    carry: &mut Vec<u8>,
    mut buf: Vec<u8>,
) -> Result<(Vec<u8>, usize), Stop> {
    let want = (BATCH + BATCH / 4).max(carry.len() + BATCH / 4);
    // start small and double up to `want` as the bytes come: a short input (a small file, a
    // fuzzer's input) never zeroes the pages of a whole batch
    let first = (carry.len() + START).min(want);
    if buf.len() < first {
        buf.resize(first, 0);
    }
    buf[..carry.len()].copy_from_slice(carry);
    let mut used = carry.len();
    carry.clear();
    let mut at_end = false;
    loop {
        if used == buf.len() {
            // up to the batch's size, then (a line longer than the batch) beyond it
            let grown = if buf.len() < want {
                (buf.len() * 2).min(want)
            } else {
                buf.len() * 2
            };
            buf.resize(grown, 0);
        }
        let n = stream.read_bytes(&mut buf[used..]).map_err(read_err)?;
        used += n;
        if n == 0 {
            at_end = true;
            break;
        }
        if used >= BATCH && memchr::memrchr(b'\n', &buf[used - n..used]).is_some() {
            break;
        }
    }
    if !at_end && let Some(p) = memchr::memrchr(b'\n', &buf[..used]) {
        carry.extend_from_slice(&buf[p + 1..used]);
        used = p + 1;
    }
    Ok((buf, used))
}

/// Splits a batch at line ends into pieces and parses them in parallel.
fn parse(buf: &[u8]) -> Vec<Piece> {
    let mut bounds = Vec::with_capacity(PIECES + 1);
    bounds.push(0);
    for k in 1..PIECES {
        let at = (buf.len() * k / PIECES).max(*bounds.last().unwrap_or(&0));
        let end = memchr::memchr(b'\n', &buf[at..]).map_or(buf.len(), |p| at + p + 1);
        bounds.push(end);
    }
    bounds.push(buf.len());
    bounds.dedup();
    let ranges: Vec<(usize, usize)> = bounds.windows(2).map(|w| (w[0], w[1])).collect();
    ranges
        .into_par_iter()
        .map(|r| parse_piece(buf, r))
        .collect()
}

fn is_name(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b':'
}

/// Parses one piece.
///
/// # Complexity
/// O(bytes of the piece).
fn parse_piece(buf: &[u8], (start, end): (usize, usize)) -> Piece {
    let mut p = Piece {
        range: (start, end),
        ..Piece::default()
    };
    let bytes = &buf[start..end];
    if std::str::from_utf8(bytes).is_err() {
        p.not_utf8 = true;
        p.lines = u32::try_from(memchr::memchr_iter(b'\n', bytes).count()).unwrap_or(u32::MAX)
            + u32::from(!bytes.is_empty() && bytes[bytes.len() - 1] != b'\n');
        // the general reader checks each line (after `# EOF` too)
        return p;
    }
    p.recs.reserve(bytes.len() / 200);
    let mut after_eof = false;
    let mut pos = 0usize;
    let mut idx = 0u32;
    while pos < bytes.len() {
        let nl = memchr::memchr(b'\n', &bytes[pos..]).map_or(bytes.len(), |q| pos + q);
        let mut line = &bytes[pos..nl];
        let line_start = pos;
        pos = nl + 1;
        let i = idx;
        idx += 1;
        if line.last() == Some(&b'\r') {
            line = &line[..line.len() - 1];
        }
        if line.is_empty() {
            continue;
        }
        let off = |l: &[u8]| -> (u32, u32) {
            (
                u32::try_from(start + line_start).unwrap_or(u32::MAX),
                u32::try_from(l.len()).unwrap_or(u32::MAX),
            )
        };
        if !after_eof && let Some(r) = fast(line) {
            p.first_nonempty.get_or_insert(i);
            let (s, _) = off(line);
            p.recs.push(Rec::Fast {
                line: i,
                key: (s, r.0),
                value: r.1,
                ts: r.2,
            });
            continue;
        }
        // a valid piece: every line is UTF-8
        let text = std::str::from_utf8(line).unwrap_or("");
        let t = text.trim();
        if t.is_empty() {
            continue;
        }
        p.first_nonempty.get_or_insert(i);
        if t.starts_with('#') && t != "# EOF" && !after_eof {
            continue;
        }
        if t == "# EOF" {
            after_eof = true;
        }
        p.recs.push(Rec::Slow {
            line: i,
            span: off(line),
        });
    }
    p.lines = idx;
    p
}

/// The common line: `(key length, value, timestamp)`, or `None` for the general reader.
fn fast(line: &[u8]) -> Option<(u32, f64, i64)> {
    let first = *line.first()?;
    if first.is_ascii_digit() || !is_name(first) {
        return None;
    }
    let name_end = line.iter().position(|c| !is_name(*c))?;
    if line[name_end] != b'{' {
        return None;
    }
    // the value and timestamp hold no `}`: the last one closes the label block (whose
    // quoting the general reader checked when the key was first seen)
    let close = memchr::memrchr(b'}', line)?;
    let rest = &line[close + 1..];
    let rest = rest.strip_prefix(b" ")?;
    let sp = memchr::memchr(b' ', rest)?;
    let (v, ts) = (&rest[..sp], &rest[sp + 1..]);
    if v.is_empty() || ts.is_empty() {
        return None;
    }
    let value = value(v)?;
    let ts = integer(ts)?;
    Some((u32::try_from(close + 1).ok()?, value, ts))
}

/// A sample value as the general reader reads it.
fn value(v: &[u8]) -> Option<f64> {
    if v.len() <= 15 && v.iter().all(u8::is_ascii_digit) {
        // exact: integers below 2^53
        let mut n = 0u64;
        for c in v {
            n = n * 10 + u64::from(c - b'0');
        }
        #[allow(clippy::cast_precision_loss)]
        return Some(n as f64);
    }
    let s = std::str::from_utf8(v).ok()?;
    match s {
        "NaN" => Some(f64::NAN),
        "+Inf" | "Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        s => s.parse::<f64>().ok(),
    }
}

/// An integer timestamp as written (digits, optionally signed), or `None`.
fn integer(ts: &[u8]) -> Option<i64> {
    let (neg, digits) = match ts.first()? {
        b'-' => (true, &ts[1..]),
        b'+' => (false, &ts[1..]),
        _ => (false, ts),
    };
    if digits.is_empty() || digits.len() > 18 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut n = 0i64;
    for c in digits {
        n = n * 10 + i64::from(c - b'0');
    }
    Some(if neg { -n } else { n })
}

/// Books a batch's lines in file order.
fn book(b: &Batch, file: &mut FileState<'_>, acc: &mut Acc<'_>) -> Result<(), Halt> {
    let mut base = b.line_base;
    let buf = &b.buf[..b.used];
    for piece in &b.pieces {
        if file.eof
            && let Some(i) = piece.first_nonempty
        {
            return Err(Halt::Stop(
                err(
                    file.name(),
                    usize::try_from(line_at(base, i)).unwrap_or(usize::MAX),
                    "text after # EOF",
                )
                .into(),
            ));
        }
        if piece.not_utf8 {
            general_piece(&buf[piece.range.0..piece.range.1], base, file, acc)?;
        } else {
            for rec in &piece.recs {
                match *rec {
                    Rec::Fast {
                        line,
                        key,
                        value,
                        ts,
                    } => {
                        let k = &buf[key.0 as usize..(key.0 + key.1) as usize];
                        let line_no = line_at(base, line);
                        let known = if k.starts_with(b"DCGM_FI_") {
                            acc.lookup(k)
                        } else {
                            None
                        };
                        match known {
                            Some(id) => fast_sample(file, acc, line_no, id, value, ts)?,
                            None => {
                                // a new key (or another metric): the general reader, from
                                // the line's start to its end
                                let s = key.0 as usize;
                                let e =
                                    memchr::memchr(b'\n', &buf[s..]).map_or(buf.len(), |p| s + p);
                                general(&buf[s..e], line_no, file, acc)?;
                            }
                        }
                    }
                    Rec::Slow { line, span } => {
                        let l = &buf[span.0 as usize..(span.0 + span.1) as usize];
                        general(l, line_at(base, line), file, acc)?;
                    }
                }
            }
        }
        base += u64::from(piece.lines);
    }
    Ok(())
}

fn line_at(base: u64, i: u32) -> u64 {
    base + u64::from(i) + 1
}

/// A known series' sample from the common line.
fn fast_sample(
    file: &mut FileState<'_>,
    acc: &mut Acc<'_>,
    line_no: u64,
    id: u32,
    value: f64,
    ts: i64,
) -> Result<(), Halt> {
    let line = usize::try_from(line_no).unwrap_or(usize::MAX);
    let t = if file.plan.format == Format::OpenMetrics {
        ts
    } else {
        if file.plan.format == Format::Auto {
            file.read_ms = true;
        }
        ts.div_euclid(1000)
    };
    let r = acc.sample_id(file, line, id, value, t);
    booked(file, line_no, r)
}

/// A booking's outcome; in a file read as milliseconds a failure first asks whether the file
/// ends with `# EOF` (then it is read again as OpenMetrics).
fn booked(file: &FileState<'_>, line_no: u64, r: Result<(), Stop>) -> Result<(), Halt> {
    match r {
        Err(Stop::Fail(e)) if file.plan.format == Format::Auto && file.read_ms => {
            Err(Halt::CheckEof(e, line_no))
        }
        other => other.map_err(Halt::Stop),
    }
}

/// The lines of a piece that is not UTF-8, one by one (the first bad line is refused).
fn general_piece(
    bytes: &[u8],
    base: u64,
    file: &mut FileState<'_>,
    acc: &mut Acc<'_>,
) -> Result<(), Halt> {
    let mut n = base;
    let mut rest = bytes;
    while !rest.is_empty() {
        let nl = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
        let mut l = &rest[..nl];
        rest = rest.get(nl + 1..).unwrap_or(&[]);
        n += 1;
        if l.last() == Some(&b'\r') {
            l = &l[..l.len() - 1];
        }
        general(l, n, file, acc)?;
    }
    Ok(())
}

/// One line through the general reader.
fn general(
    bytes: &[u8],
    line_no: u64,
    file: &mut FileState<'_>,
    acc: &mut Acc<'_>,
) -> Result<(), Halt> {
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            return Err(Halt::Stop(read_err(
                gpuquota_model::Diagnostic::error(
                    gpuquota_model::diag::codes::NOT_UTF8,
                    format!(
                        "line {line_no} is not UTF-8 text (invalid byte at column {})",
                        e.valid_up_to() + 1
                    ),
                )
                .source(file.name().to_owned()),
            )));
        }
    };
    let text = if line_no == 1 {
        text.strip_prefix(gpuquota_model::source::BOM)
            .unwrap_or(text)
    } else {
        text
    };
    let line = usize::try_from(line_no).unwrap_or(usize::MAX);
    match line_one(text, line, file, acc)? {
        Some(r) => booked(file, line_no, r),
        None => Ok(()),
    }
}
