//! Cron expressions as KAI's usage database reads them for its `cron` usage window
//! (`kai-scheduler/KAI-Scheduler: pkg/scheduler/cache/usagedb/prometheus/prometheus.go`, which
//! parses `cronString` with `github.com/aptible/supercronic/cronexpr`), evaluated in UTC.
//!
//! ```
//! use gpuquota_rank::cron::CronSchedule;
//! use gpuquota_model::Timestamp;
//!
//! // Every Monday at midnight.
//! let c = CronSchedule::parse("0 0 * * MON")?;
//! let now = Timestamp::parse("2025-04-09T12:00:00Z")?; // a Wednesday
//! assert_eq!(c.latest_before(now), Some(Timestamp::parse("2025-04-07T00:00:00Z")?));
//! // An occurrence exactly at `now` does not count: the window started a week earlier.
//! let monday = Timestamp::parse("2025-04-07T00:00:00Z")?;
//! assert_eq!(c.latest_before(monday), Some(Timestamp::parse("2025-03-31T00:00:00Z")?));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Accepted, as `cronexpr` accepts them: 5 fields (`minute hour day-of-month month
//! day-of-week`, second 0), 6 fields (the same plus `year`) or 7 fields (`second` first,
//! `year` last); the macros `@yearly`/`@annually`, `@monthly`, `@weekly`, `@daily`/
//! `@midnight`, `@hourly`; in each field `*`, `?` (day fields), numbers, `a-b` ranges,
//! `/step` on `*`, a number or a range, comma lists, and the names `JAN`–`DEC`, `SUN`–`SAT`
//! (any case; day-of-week 7 is Sunday too). When both day-of-month and day-of-week are
//! restricted a day matches either, as in Vixie cron. Not accepted (an error, never a silent
//! guess): `L`, `W` and `#`.

use gpuquota_model::Timestamp;

/// A parsed cron expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CronSchedule {
    seconds: u64,
    minutes: u64,
    hours: u32,
    days_of_month: u32,
    months: u16,
    days_of_week: u8,
    /// Years 1970..=2099, indexed from 1970.
    years: Vec<bool>,
    dom_restricted: bool,
    dow_restricted: bool,
}

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const DAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
const FIRST_YEAR: i64 = 1970;
const LAST_YEAR: i64 = 2099;

/// Parses one field into a set over `lo..=hi` (index `v - lo` for value `v`); returns the set
/// and whether the field was restricted (not `*` or `?`).
fn field(
    text: &str,
    what: &str,
    lo: i64,
    hi: i64,
    names: &[&str],
    name_base: i64,
) -> Result<(Vec<bool>, bool), String> {
    let value = |s: &str| -> Result<i64, String> {
        if let Some(i) = names.iter().position(|n| n.eq_ignore_ascii_case(s)) {
            return Ok(i as i64 + name_base);
        }
        s.parse::<i64>().map_err(|_| {
            let special = s.contains('#')
                || s.eq_ignore_ascii_case("l")
                || s.eq_ignore_ascii_case("lw")
                || (s.len() > 1 && s.ends_with(['L', 'l', 'W', 'w']));
            if special {
                format!("{what}: {s:?}: L, W and # are not supported")
            } else {
                format!("{what}: {s:?} is not a number or name")
            }
        })
    };
    let mut set = vec![false; (hi - lo + 1) as usize];
    let mut restricted = false;
    for part in text.split(',') {
        if part.is_empty() {
            return Err(format!("{what}: empty list entry"));
        }
        let (range, step) = match part.split_once('/') {
            Some((r, s)) => {
                let s: i64 = s
                    .parse()
                    .map_err(|_| format!("{what}: step {s:?} is not a number"))?;
                if s <= 0 {
                    return Err(format!("{what}: step must be positive"));
                }
                (r, Some(s))
            }
            None => (part, None),
        };
        let (a, b) = if range == "*" || range == "?" {
            if step.is_some() {
                restricted = true;
            }
            (lo, hi)
        } else {
            restricted = true;
            match range.split_once('-') {
                Some((a, b)) => (value(a)?, value(b)?),
                None => {
                    let a = value(range)?;
                    // `a/step` runs from a to the end of the range.
                    (a, if step.is_some() { hi } else { a })
                }
            }
        };
        let (a, b) = (norm(a, what, hi), norm(b, what, hi));
        if a < lo || b > hi || a > b {
            return Err(format!("{what}: {part:?} outside {lo}-{hi}"));
        }
        let mut v = a;
        while v <= b {
            set[(v - lo) as usize] = true;
            v += step.unwrap_or(1);
        }
    }
    Ok((set, restricted))
}

/// Day-of-week 7 is Sunday (0).
fn norm(v: i64, what: &str, hi: i64) -> i64 {
    if what == "day-of-week" && v == 7 && hi == 6 {
        0
    } else {
        v
    }
}

impl CronSchedule {
    /// Parses a cron expression.
    ///
    /// # Errors
    /// A message naming the bad field.
    pub fn parse(expr: &str) -> Result<CronSchedule, String> {
        let expanded = match expr.trim() {
            "@yearly" | "@annually" => "0 0 0 1 1 * *",
            "@monthly" => "0 0 0 1 * * *",
            "@weekly" => "0 0 0 * * 0 *",
            "@daily" | "@midnight" => "0 0 0 * * * *",
            "@hourly" => "0 0 * * * * *",
            other => other,
        };
        let f: Vec<&str> = expanded.split_whitespace().collect();
        let (sec, rest, year) = match f.len() {
            5 => ("0", &f[..], "*"),
            6 => ("0", &f[..5], f[5]),
            7 => (f[0], &f[1..6], f[6]),
            n => {
                return Err(format!(
                    "{expr:?}: {n} fields; expected 5, 6 or 7 (or a macro such as @daily)"
                ));
            }
        };
        let (seconds, _) = field(sec, "second", 0, 59, &[], 0)?;
        let (minutes, _) = field(rest[0], "minute", 0, 59, &[], 0)?;
        let (hours, _) = field(rest[1], "hour", 0, 23, &[], 0)?;
        let (dom, dom_restricted) = field(rest[2], "day-of-month", 1, 31, &[], 0)?;
        let (months, _) = field(rest[3], "month", 1, 12, &MONTHS, 1)?;
        let (dow, dow_restricted) = field(rest[4], "day-of-week", 0, 6, &DAYS, 0)?;
        let (years, _) = field(year, "year", FIRST_YEAR, LAST_YEAR, &[], 0)?;
        // Bit `v - lo` of a mask for value `v`.
        let mask = |v: &[bool]| -> u64 {
            v.iter()
                .enumerate()
                .filter(|(_, b)| **b)
                .fold(0u64, |m, (i, _)| m | (1 << i))
        };
        Ok(CronSchedule {
            seconds: mask(&seconds),
            minutes: mask(&minutes),
            hours: mask(&hours) as u32,
            days_of_month: mask(&dom) as u32,
            months: mask(&months) as u16,
            days_of_week: mask(&dow) as u8,
            years,
            dom_restricted,
            dow_restricted,
        })
    }

    fn day_matches(&self, y: i64, m: u32, d: u32, wd: u32) -> bool {
        if !(FIRST_YEAR..=LAST_YEAR).contains(&y) || !self.years[(y - FIRST_YEAR) as usize] {
            return false;
        }
        if self.months & (1 << (m - 1)) == 0 {
            return false;
        }
        let dom = self.days_of_month & (1 << (d - 1)) != 0;
        let dow = self.days_of_week & (1 << wd) != 0;
        match (self.dom_restricted, self.dow_restricted) {
            (true, true) => dom || dow,
            (true, false) => dom,
            (false, true) => dow,
            (false, false) => true,
        }
    }

    /// The latest second of day `<= limit` (seconds since midnight) this schedule fires at.
    fn latest_in_day(&self, limit: i64) -> Option<i64> {
        for h in (0..24i64).rev() {
            if self.hours & (1 << h) == 0 || h * 3600 > limit {
                continue;
            }
            for mi in (0..60i64).rev() {
                if self.minutes & (1 << mi) == 0 || h * 3600 + mi * 60 > limit {
                    continue;
                }
                for s in (0..60i64).rev() {
                    let t = h * 3600 + mi * 60 + s;
                    if self.seconds & (1 << s) != 0 && t <= limit {
                        return Some(t);
                    }
                }
            }
        }
        None
    }

    /// The latest time the schedule fires strictly before `now` (UTC), as the reset time of
    /// KAI's cron window (`getLatestUsageResetTime_CronWindow`); `None` when it never fired
    /// since 1970.
    ///
    /// # Complexity
    /// O(D) day checks for D days back to the previous occurrence (at most one per day since
    /// 1970), plus O(24 · 60 · 60) on the day found.
    pub fn latest_before(&self, now: Timestamp) -> Option<Timestamp> {
        // The latest whole second strictly before `now`.
        let s = if now.subsec_nanos() > 0 {
            now.unix_seconds()
        } else {
            now.unix_seconds().checked_sub(1)?
        };
        let mut day = s.div_euclid(86_400);
        let mut limit = s.rem_euclid(86_400);
        while day >= 0 {
            let (y, m, d) = civil_from_days(day);
            if y > LAST_YEAR {
                // Jump to the last day the year field can name.
                day = days_from_civil(LAST_YEAR, 12, 31);
                limit = 86_399;
                continue;
            }
            let wd = (day + 4).rem_euclid(7) as u32; // 1970-01-01 was a Thursday.
            if self.day_matches(y, m, d, wd)
                && let Some(t) = self.latest_in_day(limit)
            {
                return Some(Timestamp::from_unix_seconds(day * 86_400 + t));
            }
            day -= 1;
            limit = 86_399;
        }
        None
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The proleptic Gregorian date of a day count since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Timestamp {
        Timestamp::parse(s).unwrap()
    }

    fn prev(expr: &str, now: &str) -> Option<Timestamp> {
        CronSchedule::parse(expr).unwrap().latest_before(t(now))
    }

    #[test]
    fn civil_dates_round_trip() {
        for day in [-1, 0, 59, 365, 10_957, 20_089, 47_481] {
            let (y, m, d) = civil_from_days(day);
            assert_eq!(days_from_civil(y, m, d), day);
        }
        assert_eq!(civil_from_days(20_179), (2025, 4, 1));
    }

    #[test]
    fn common_schedules() {
        assert_eq!(
            prev("*/15 * * * *", "2025-04-09T12:07:30Z"),
            Some(t("2025-04-09T12:00:00Z"))
        );
        assert_eq!(
            prev("@daily", "2025-04-09T00:00:00Z"),
            Some(t("2025-04-08T00:00:00Z"))
        );
        assert_eq!(
            prev("@daily", "2025-04-09T00:00:00.5Z"),
            Some(t("2025-04-09T00:00:00Z"))
        );
        assert_eq!(
            prev("@hourly", "2025-04-09T12:59:59Z"),
            Some(t("2025-04-09T12:00:00Z"))
        );
        assert_eq!(
            prev("0 9-17 * * mon-fri", "2025-04-12T10:00:00Z"), // a Saturday
            Some(t("2025-04-11T17:00:00Z"))
        );
        assert_eq!(
            // June and July only: the last match is Wednesday 2024-07-31.
            prev("0 0 1 jun-jul mon-wed", "2025-04-12T10:00:00Z"),
            Some(t("2024-07-31T00:00:00Z"))
        );
        assert_eq!(
            prev("@monthly", "2025-03-15T00:00:00Z"),
            Some(t("2025-03-01T00:00:00Z"))
        );
        assert_eq!(
            prev("@yearly", "2025-03-15T00:00:00Z"),
            Some(t("2025-01-01T00:00:00Z"))
        );
        assert_eq!(
            prev("0 0 * * 7", "2025-04-09T00:00:00Z"),
            Some(t("2025-04-06T00:00:00Z"))
        );
        // Seven fields: second first, year last.
        assert_eq!(
            prev("30 0 0 1 1 * 2024", "2025-04-09T00:00:00Z"),
            Some(t("2024-01-01T00:00:30Z"))
        );
        // Leap day.
        assert_eq!(
            prev("0 0 29 2 *", "2025-04-09T00:00:00Z"),
            Some(t("2024-02-29T00:00:00Z"))
        );
        // Day of month or day of week when both are restricted: the 1st or a Monday.
        assert_eq!(
            prev("0 0 1 * mon", "2025-04-04T00:00:00Z"),
            Some(t("2025-04-01T00:00:00Z"))
        );
        assert_eq!(
            prev("0 0 1 * mon", "2025-04-09T00:00:00Z"),
            Some(t("2025-04-07T00:00:00Z"))
        );
        // Never fired yet.
        assert_eq!(prev("0 0 1 1 * 2099", "2025-04-09T00:00:00Z"), None);
    }

    #[test]
    fn refused_expressions() {
        for bad in [
            "",
            "* * * *",
            "0 0 L * *",
            "0 0 * * 1#2",
            "0 0 15W * *",
            "60 * * * *",
            "* 24 * * *",
            "* * 0 * *",
            "* * * 13 *",
            "*/0 * * * *",
            "5-1 * * * *",
            "x * * * *",
            "1,,2 * * * *",
        ] {
            assert!(CronSchedule::parse(bad).is_err(), "{bad:?} accepted");
        }
    }
}
