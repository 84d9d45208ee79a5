//! RFC 3339 times as integer seconds (UTC), without a clock.

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub(crate) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day count since 1970-01-01.
pub(crate) fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn num(s: &str, from: usize, len: usize) -> Option<i64> {
    let part = s.get(from..from + len)?;
    if !part.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    part.parse().ok()
}

/// Parses an RFC 3339 date-time into whole seconds since the epoch.
///
/// Accepts `Z` or `±hh:mm` offsets and a fractional second only when it is zero (times are
/// whole seconds). Returns `None` for anything else.
pub fn parse_rfc3339(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (y, mo, d) = (num(s, 0, 4)?, num(s, 5, 2)?, num(s, 8, 2)?);
    let (h, mi, se) = (num(s, 11, 2)?, num(s, 14, 2)?, num(s, 17, 2)?);
    if !(1..=12).contains(&mo) || d < 1 || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let dim = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if d > dim[usize::try_from(mo - 1).ok()?] {
        return None;
    }
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 || !frac[..n].bytes().all(|c| c == b'0') {
            return None;
        }
        rest = &frac[n..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let rb = rest.as_bytes();
            if rb.len() != 6 || rb[3] != b':' || !matches!(rb[0], b'+' | b'-') {
                return None;
            }
            let (oh, om) = (num(rest, 1, 2)?, num(rest, 4, 2)?);
            if oh > 23 || om > 59 {
                return None;
            }
            let o = oh * 3600 + om * 60;
            if rb[0] == b'-' { -o } else { o }
        }
    };
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + se.min(59);
    Some(secs - offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_round_trips() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_rfc3339("2025-04-01T00:00:00Z"), Some(1_743_465_600));
        assert_eq!(
            parse_rfc3339("2025-05-01T00:00:00Z"),
            Some(1_743_465_600 + 30 * 86_400)
        );
        assert_eq!(
            parse_rfc3339("2025-04-01T02:00:00+02:00"),
            Some(1_743_465_600)
        );
        assert_eq!(
            parse_rfc3339("2025-04-01T00:00:00.000Z"),
            Some(1_743_465_600)
        );
        assert_eq!(parse_rfc3339("2025-04-01T00:00:00.5Z"), None);
        assert_eq!(parse_rfc3339("2025-02-30T00:00:00Z"), None);
        assert_eq!(parse_rfc3339("garbage"), None);
        assert_eq!(
            crate::report::format_rfc3339(1_743_465_600),
            "2025-04-01T00:00:00Z"
        );
    }
}
