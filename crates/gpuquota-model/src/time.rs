//! Points in time as Kubernetes writes them (RFC 3339), held as exact integers.

use std::fmt;
use std::str::FromStr;

/// An instant: whole seconds since the Unix epoch plus nanoseconds, UTC.
///
/// Kubernetes metadata timestamps have second precision and condition times may carry
/// fractions; both compare exactly here. No wall clock is ever read: times come from the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Timestamp {
    secs: i64,
    nanos: u32,
}

/// Why a timestamp string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid RFC 3339 timestamp {0:?}: expected e.g. 2025-04-01T00:00:00Z")]
pub struct TimestampError(pub String);

impl Timestamp {
    /// The epoch.
    pub const EPOCH: Timestamp = Timestamp { secs: 0, nanos: 0 };

    /// A timestamp from whole seconds since the epoch.
    pub fn from_unix_seconds(secs: i64) -> Timestamp {
        Timestamp { secs, nanos: 0 }
    }

    /// A timestamp from seconds and nanoseconds (`nanos < 10⁹`), or `None`.
    pub fn from_unix(secs: i64, nanos: u32) -> Option<Timestamp> {
        (nanos < 1_000_000_000).then_some(Timestamp { secs, nanos })
    }

    /// Whole seconds since the epoch (the fraction is dropped toward negative infinity).
    pub fn unix_seconds(self) -> i64 {
        self.secs
    }

    /// The nanoseconds within the second.
    pub fn subsec_nanos(self) -> u32 {
        self.nanos
    }

    /// Nanoseconds since the epoch.
    pub fn unix_nanos(self) -> i128 {
        i128::from(self.secs) * 1_000_000_000 + i128::from(self.nanos)
    }

    /// Parses an RFC 3339 date-time (`2025-04-01T00:00:00Z`, `…T02:00:00.5+02:00`).
    ///
    /// # Errors
    /// [`TimestampError`] naming the input when it is not a valid RFC 3339 date-time.
    pub fn parse(s: &str) -> Result<Timestamp, TimestampError> {
        parse_rfc3339(s).ok_or_else(|| TimestampError(s.to_owned()))
    }
}

fn digits(s: &str, from: usize, len: usize) -> Option<i64> {
    let part = s.get(from..from + len)?;
    if !part.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    part.parse().ok()
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub(crate) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

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

fn parse_rfc3339(s: &str) -> Option<Timestamp> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let year = digits(s, 0, 4)?;
    let month = digits(s, 5, 2)?;
    let day = digits(s, 8, 2)?;
    let hour = digits(s, 11, 2)?;
    let minute = digits(s, 14, 2)?;
    let second = digits(s, 17, 2)?;
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let month_days = [
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
    if !(1..=12).contains(&month) || day < 1 || day > month_days[(month - 1) as usize] {
        return None;
    }
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut i = 19;
    let mut nanos: u32 = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            if i - start < 9 {
                nanos = nanos * 10 + u32::from(b[i] - b'0');
            }
            i += 1;
        }
        let n = i - start;
        if n == 0 {
            return None;
        }
        for _ in n..9 {
            nanos *= 10;
        }
    }
    let offset_secs = match &s[i..] {
        "Z" | "z" => 0,
        off if off.len() == 6 && (off.starts_with('+') || off.starts_with('-')) => {
            if off.as_bytes()[3] != b':' {
                return None;
            }
            let h = digits(off, 1, 2)?;
            let m = digits(off, 4, 2)?;
            if h > 23 || m > 59 {
                return None;
            }
            let v = h * 3600 + m * 60;
            if off.starts_with('-') { -v } else { v }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second.min(59) - offset_secs;
    Some(Timestamp { secs, nanos })
}

impl fmt::Display for Timestamp {
    /// RFC 3339 in UTC; fractions only when present (`2025-04-01T00:00:00Z`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let days = self.secs.div_euclid(86_400);
        let rem = self.secs.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        write!(
            f,
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
            rem / 3600,
            rem % 3600 / 60,
            rem % 60
        )?;
        if self.nanos != 0 {
            let mut frac = format!("{:09}", self.nanos);
            while frac.ends_with('0') {
                frac.pop();
            }
            write!(f, ".{frac}")?;
        }
        f.write_str("Z")
    }
}

impl FromStr for Timestamp {
    type Err = TimestampError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Timestamp::parse(s)
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Timestamp {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        Timestamp::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints() {
        let t = Timestamp::parse("2025-04-01T00:00:00Z").unwrap();
        assert_eq!(t.unix_seconds(), 1_743_465_600);
        assert_eq!(t.to_string(), "2025-04-01T00:00:00Z");
        let t = Timestamp::parse("2025-04-01T02:00:00.250+02:00").unwrap();
        assert_eq!(t.unix_seconds(), 1_743_465_600);
        assert_eq!(t.subsec_nanos(), 250_000_000);
        assert_eq!(t.to_string(), "2025-04-01T00:00:00.25Z");
        assert_eq!(
            Timestamp::parse("1969-12-31T23:59:59Z")
                .unwrap()
                .unix_seconds(),
            -1
        );
    }

    #[test]
    fn rejects_bad_dates() {
        for bad in [
            "2025-02-30T00:00:00Z",
            "2025-04-01",
            "2025-04-01T00:00:00",
            "x",
            "2025-13-01T00:00:00Z",
            "2025-04-01T00:00:00.Z",
        ] {
            assert!(Timestamp::parse(bad).is_err(), "{bad}");
        }
    }
}
