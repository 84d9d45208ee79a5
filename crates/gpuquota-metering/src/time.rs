//! RFC 3339 times as integer seconds (UTC), without a clock.
//!
//! The calendar arithmetic is the model crate's [`gpuquota_model::Timestamp`]; metering only adds
//! its own rule that times are whole seconds.

use gpuquota_model::Timestamp;

/// Parses an RFC 3339 date-time into whole seconds since the epoch.
///
/// Accepts `Z` or `±hh:mm` offsets and a fractional second only when it is zero (times are
/// whole seconds). Returns `None` for anything else.
pub fn parse_rfc3339(s: &str) -> Option<i64> {
    let t = Timestamp::parse(s).ok()?;
    (t.subsec_nanos() == 0).then(|| t.unix_seconds())
}

/// Formats seconds as RFC 3339 in UTC (`2025-04-01T00:00:00Z`).
pub fn format_rfc3339(secs: i64) -> String {
    Timestamp::from_unix_seconds(secs).to_string()
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
        assert_eq!(format_rfc3339(1_743_465_600), "2025-04-01T00:00:00Z");
    }
}
