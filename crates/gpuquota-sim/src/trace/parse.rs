//! The field readers the trace loaders share: names made Kubernetes-safe, wall-clock and
//! relative times, counts, runtimes, and CSV columns by header.

use gpuquota_model::Timestamp;

/// A Kubernetes-safe name: lower case, `[a-z0-9-]`, no leading or trailing `-`.
///
/// ```
/// assert_eq!(gpuquota_sim::trace::sanitize("vc6YE"), "vc6ye");
/// assert_eq!(gpuquota_sim::trace::sanitize("application_15_2"), "application-15-2");
/// ```
///
/// # Complexity
/// O(length), one allocation when nothing is trimmed (a trace's names are made per row).
pub fn sanitize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        let c = c.to_ascii_lowercase();
        out.push(
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' {
                c
            } else {
                '-'
            },
        );
    }
    let trimmed = out.trim_matches('-');
    if trimmed.len() == out.len() {
        out
    } else {
        trimmed.to_owned()
    }
}

/// `YYYY-MM-DD HH:MM:SS` (or RFC 3339) read as UTC, in unix ms.
///
/// ```
/// assert_eq!(gpuquota_sim::trace::wall_clock_ms("1970-01-01 00:01:00"), Some(60_000));
/// assert_eq!(gpuquota_sim::trace::wall_clock_ms("None"), None);
/// ```
///
/// # Complexity
/// O(1): the plain `YYYY-MM-DD HH:MM:SS` form is read by arithmetic (the traces' millions of
/// times), every other form through the RFC 3339 parser.
pub fn wall_clock_ms(s: &str) -> Option<i64> {
    let s = s.trim();
    if s.len() < 19 {
        return None;
    }
    if let Some(ms) = plain_wall_clock_ms(s.as_bytes()) {
        return Some(ms);
    }
    let text = if s.as_bytes().get(10) == Some(&b' ') {
        format!("{}T{}Z", &s[..10], &s[11..])
    } else {
        s.to_owned()
    };
    let t = Timestamp::parse(&text).ok()?;
    i64::try_from(t.unix_nanos().div_euclid(1_000_000)).ok()
}

/// `YYYY-MM-DD HH:MM:SS` exactly (a valid date, seconds < 60), in unix ms.
fn plain_wall_clock_ms(b: &[u8]) -> Option<i64> {
    if b.len() != 19
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b' '
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        b[r].iter().try_fold(0i64, |n, c| {
            c.is_ascii_digit().then(|| n * 10 + i64::from(c - b'0'))
        })
    };
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days_in = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    if d < 1 || d > days_in || hh > 23 || mm > 59 || ss > 59 {
        return None;
    }
    // days from the civil date (proleptic Gregorian), 1970-01-01 = 0
    let (yy, mp) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 86_400) + hh * 3600 + mm * 60 + ss) * 1000)
}

/// Seconds (an integer or a decimal) as ms, rounded to the nearest ms.
///
/// ```
/// assert_eq!(gpuquota_sim::trace::seconds_ms("12.5"), Some(12_500));
/// assert_eq!(gpuquota_sim::trace::seconds_ms(""), None);
/// ```
pub fn seconds_ms(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Ok(i) = s.parse::<i64>() {
        return i.checked_mul(1000);
    }
    let f: f64 = s.parse().ok()?;
    let ms = (f * 1000.0).round();
    if ms.is_finite() && ms.abs() < 9.0e15 {
        Some(ms as i64)
    } else {
        None
    }
}
/// Column positions by header name.
pub(crate) fn columns<const N: usize>(
    header: &csv::StringRecord,
    names: [&str; N],
) -> Result<[usize; N], String> {
    let mut out = [0usize; N];
    for (i, n) in names.iter().enumerate() {
        out[i] = header
            .iter()
            .position(|h| h.trim() == *n)
            .ok_or_else(|| format!("line 1: the header has no column {n:?}"))?;
    }
    Ok(out)
}

/// A CSV reader over text (`headers`: whether the first row names the columns).
pub(crate) fn csv_reader(text: &str, headers: bool) -> csv::Reader<&[u8]> {
    csv::ReaderBuilder::new()
        .has_headers(headers)
        .flexible(true)
        .from_reader(text.as_bytes())
}

/// Reads the next row of `rdr` with exactly `width` fields into `r`, counting every row the
/// CSV reader refuses or that has another width as `malformed-row` in `out`; `false` at the
/// end of the text. The row loop of every CSV trace loader.
pub(crate) fn next_row(
    rdr: &mut csv::Reader<&[u8]>,
    r: &mut csv::StringRecord,
    width: usize,
    out: &mut super::Loaded,
) -> bool {
    loop {
        match rdr.read_record(r) {
            Ok(true) if r.len() == width => return true,
            Ok(true) | Err(_) => out.skip("malformed-row"),
            Ok(false) => return false,
        }
    }
}

/// A count as u32 (pods), `None` when negative or not a whole number.
pub(crate) fn count(s: &str) -> Option<u32> {
    let s = s.trim();
    s.parse::<u32>().ok().or_else(|| {
        s.parse::<f64>()
            .ok()
            .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 4.0e9)
            .map(|f| f as u32)
    })
}

/// Runtime from start and end: the reasons when it cannot be had.
pub(crate) fn runtime(start: Option<i64>, end: Option<i64>) -> Result<i64, &'static str> {
    match (start, end) {
        (None, _) => Err("never-ran"),
        (Some(_), None) => Err("no-end"),
        (Some(s), Some(e)) if e < s => Err("end-before-start"),
        (Some(s), Some(e)) => e.checked_sub(s).ok_or("malformed-row"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The RFC 3339 parser, the independent oracle of the arithmetic fast path.
    fn oracle(s: &str) -> Option<i64> {
        let t = Timestamp::parse(&format!("{}T{}Z", &s[..10], &s[11..])).ok()?;
        i64::try_from(t.unix_nanos().div_euclid(1_000_000)).ok()
    }

    proptest! {
        #[test]
        fn plain_wall_clock_agrees_with_the_rfc3339_parser(
            y in 1900i64..2200, m in 0i64..14, d in 0i64..33, hh in 0i64..25, mm in 0i64..61, ss in 0i64..61,
        ) {
            let s = format!("{y:04}-{m:02}-{d:02} {hh:02}:{mm:02}:{ss:02}");
            let fast = plain_wall_clock_ms(s.as_bytes());
            if let Some(ms) = fast {
                prop_assert_eq!(Some(ms), oracle(&s));
            }
            // every time the fast path declines still gets the parser's answer
            prop_assert_eq!(wall_clock_ms(&s), oracle(&s));
        }
    }

    #[test]
    fn sanitize_trims_and_replaces_in_one_pass() {
        assert_eq!(sanitize("vc6YE"), "vc6ye");
        assert_eq!(sanitize("--A_b.c--"), "a-b-c");
        assert_eq!(sanitize("__"), "");
        assert_eq!(sanitize("é1"), "-1".trim_matches('-'));
        assert_eq!(sanitize(""), "");
    }

    #[test]
    fn plain_wall_clock_reads_leap_days_and_refuses_impossible_dates() {
        assert_eq!(
            plain_wall_clock_ms(b"2020-02-29 00:00:00"),
            Some(1_582_934_400_000)
        );
        assert_eq!(plain_wall_clock_ms(b"2019-02-29 00:00:00"), None);
        assert_eq!(
            plain_wall_clock_ms(b"2017-10-03 00:00:00"),
            Some(1_506_988_800_000)
        );
        assert_eq!(plain_wall_clock_ms(b"2017-10-03T00:00:00"), None);
    }
}
