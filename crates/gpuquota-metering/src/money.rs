//! Exact numbers: the common denominator `L`, rounding modes, decimal strings, ISO 4217 minor
//! digits and largest-remainder apportionment.
//!
//! Nothing here uses floating point. Quantities are `i128` counts of `1/L` card-seconds, prices
//! are integer micro-units per card-hour, money is integer minor units of the currency.

use std::fmt;

use crate::MeteringError;

/// The common denominator of weights: `720720 = lcm(1..=16)`. A weight `w` cards is stored as
/// the integer `w · L`; one card held for one second is `L` units.
pub const L: i128 = 720_720;

/// Units in one card-hour: `L · 3600 = 2 594 592 000`.
pub const UNITS_PER_CARD_HOUR: i128 = L * 3600;

/// How a reported amount is rounded to its last digit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum RoundingMode {
    /// Round half to even ("banker's rounding"), the default.
    #[default]
    HalfEven,
    /// Round half toward positive infinity.
    HalfUp,
    /// Round half away from zero (DIN 1333, "kaufmännisch").
    HalfAwayFromZero,
    /// Truncate toward zero.
    Down,
}

impl RoundingMode {
    /// The name used in input files (`half-even`, `half-up`, `half-away-from-zero`, `down`).
    pub fn as_str(self) -> &'static str {
        match self {
            RoundingMode::HalfEven => "half-even",
            RoundingMode::HalfUp => "half-up",
            RoundingMode::HalfAwayFromZero => "half-away-from-zero",
            RoundingMode::Down => "down",
        }
    }

    /// Parses a mode name as written by [`RoundingMode::as_str`].
    pub fn parse(s: &str) -> Option<RoundingMode> {
        [
            RoundingMode::HalfEven,
            RoundingMode::HalfUp,
            RoundingMode::HalfAwayFromZero,
            RoundingMode::Down,
        ]
        .into_iter()
        .find(|m| m.as_str() == s)
    }
}

impl fmt::Display for RoundingMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `num / den` rounded to an integer with `mode`. `den` must be positive.
///
/// Returns `None` when `den <= 0`.
pub(crate) fn div_round(num: i128, den: i128, mode: RoundingMode) -> Option<i128> {
    if den <= 0 {
        return None;
    }
    let q = num.div_euclid(den); // floor
    let r = num.rem_euclid(den); // 0 <= r < den
    if r == 0 {
        return Some(q);
    }
    // Compare 2r with den without overflow: r >= den - r.
    let twice_cmp = r.cmp(&(den - r));
    let up = match mode {
        RoundingMode::Down => num < 0, // toward zero: floor for positive, ceil for negative
        RoundingMode::HalfEven => match twice_cmp {
            std::cmp::Ordering::Less => false,
            std::cmp::Ordering::Greater => true,
            std::cmp::Ordering::Equal => q.rem_euclid(2) == 1,
        },
        RoundingMode::HalfUp => twice_cmp != std::cmp::Ordering::Less,
        RoundingMode::HalfAwayFromZero => match twice_cmp {
            std::cmp::Ordering::Less => false,
            std::cmp::Ordering::Greater => true,
            std::cmp::Ordering::Equal => num > 0,
        },
    };
    Some(if up { q + 1 } else { q })
}

/// Formats `value / 10^digits` as a decimal string with exactly `digits` fractional digits.
pub fn format_fixed(value: i128, digits: u32) -> String {
    let neg = value < 0;
    let abs = value.unsigned_abs();
    let scale = 10u128.pow(digits);
    let int = abs / scale;
    let frac = abs % scale;
    let sign = if neg { "-" } else { "" };
    if digits == 0 {
        format!("{sign}{int}")
    } else {
        format!("{sign}{int}.{frac:0width$}", width = digits as usize)
    }
}

/// Parses a non-negative decimal string (`"4.50"`, `"1.2345"`, `"3"`) into an integer scaled by
/// `10^digits`. More than `digits` fractional digits is an error unless they are zeros.
pub fn parse_decimal(s: &str, digits: u32, what: &str) -> Result<i128, MeteringError> {
    let bad = || MeteringError::InvalidNumber {
        field: what.to_owned(),
        value: s.to_owned(),
        reason: format!("expected a non-negative decimal with at most {digits} fractional digits"),
    };
    let t = s.trim();
    let (int, frac) = match t.split_once('.') {
        Some((i, f)) => (i, f),
        None => (t, ""),
    };
    if int.is_empty() && frac.is_empty() {
        return Err(bad());
    }
    if !int.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    if int.len() > 24 {
        return Err(bad());
    }
    let trimmed = frac.trim_end_matches('0');
    if trimmed.len() > digits as usize {
        return Err(bad());
    }
    let mut v: i128 = 0;
    for b in int.bytes() {
        v = v * 10 + i128::from(b - b'0');
    }
    let mut f: i128 = 0;
    for b in trimmed.bytes() {
        f = f * 10 + i128::from(b - b'0');
    }
    let fscale = 10i128.pow(digits - trimmed.len() as u32);
    v.checked_mul(10i128.pow(digits))
        .and_then(|x| x.checked_add(f * fscale))
        .ok_or_else(bad)
}

/// Card-seconds units as hours with six fractional digits, rounded half-even (`"6240.000000"`).
pub fn format_hours(units: i128) -> String {
    format_fixed(micro_hours(units), 6)
}

/// `units` in millionths of a card-hour, rounded half-even (what [`format_hours`] prints).
pub(crate) fn micro_hours(units: i128) -> i128 {
    units
        .checked_mul(1_000_000)
        .and_then(|u| div_round(u, UNITS_PER_CARD_HOUR, RoundingMode::HalfEven))
        .unwrap_or(0)
}

/// A currency: its ISO 4217 code and the number of minor digits (the exponent `e`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Currency {
    /// The three-letter code, upper case.
    pub code: String,
    /// Minor digits: USD/EUR 2, JPY 0, KWD 3.
    pub minor_digits: u32,
}

impl Currency {
    /// Looks up an ISO 4217 code (case-sensitive, upper case).
    ///
    /// # Errors
    /// [`MeteringError::UnknownCurrency`] for a code that is not an active ISO 4217 code.
    pub fn from_code(code: &str) -> Result<Currency, MeteringError> {
        let digits = iso4217_minor_digits(code)
            .ok_or_else(|| MeteringError::UnknownCurrency(code.to_owned()))?;
        Ok(Currency {
            code: code.to_owned(),
            minor_digits: digits,
        })
    }

    /// Minor units per micro-unit divisor: `10^(6 − e)`.
    pub(crate) fn micro_per_minor(&self) -> i128 {
        10i128.pow(6u32.saturating_sub(self.minor_digits))
    }

    /// Formats minor units with the currency's digits (`1188000` → `"11880.00"` for USD).
    pub(crate) fn format_minor(&self, minor: i128) -> String {
        format_fixed(minor, self.minor_digits)
    }
}

const ZERO_DIGITS: &[&str] = &[
    "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI", "VND",
    "VUV", "XAF", "XOF", "XPF",
];
const THREE_DIGITS: &[&str] = &["BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"];
const FOUR_DIGITS: &[&str] = &["CLF", "UYW"];
const TWO_DIGITS: &[&str] = &[
    "AED", "AFN", "ALL", "AMD", "AOA", "ARS", "AUD", "AWG", "AZN", "BAM", "BBD", "BDT", "BGN",
    "BMD", "BND", "BOB", "BOV", "BRL", "BSD", "BTN", "BWP", "BYN", "BZD", "CAD", "CDF", "CHE",
    "CHF", "CHW", "CNY", "COP", "COU", "CRC", "CUP", "CVE", "CZK", "DKK", "DOP", "DZD", "EGP",
    "ERN", "ETB", "EUR", "FJD", "FKP", "GBP", "GEL", "GHS", "GIP", "GMD", "GTQ", "GYD", "HKD",
    "HNL", "HTG", "HUF", "IDR", "ILS", "INR", "IRR", "JMD", "KES", "KGS", "KHR", "KPW", "KYD",
    "KZT", "LAK", "LBP", "LKR", "LRD", "LSL", "MAD", "MDL", "MGA", "MKD", "MMK", "MNT", "MOP",
    "MRU", "MUR", "MVR", "MWK", "MXN", "MXV", "MYR", "MZN", "NAD", "NGN", "NIO", "NOK", "NPR",
    "NZD", "PAB", "PEN", "PGK", "PHP", "PKR", "PLN", "QAR", "RON", "RSD", "RUB", "SAR", "SBD",
    "SCR", "SDG", "SEK", "SGD", "SHP", "SLE", "SOS", "SRD", "SSP", "STN", "SVC", "SYP", "SZL",
    "THB", "TJS", "TMT", "TOP", "TRY", "TTD", "TWD", "TZS", "UAH", "USD", "USN", "UYU", "UZS",
    "VED", "VES", "WST", "XCD", "XCG", "YER", "ZAR", "ZMW", "ZWG",
];

/// The ISO 4217 exponent of an active currency code, or `None`.
pub fn iso4217_minor_digits(code: &str) -> Option<u32> {
    if ZERO_DIGITS.contains(&code) {
        Some(0)
    } else if THREE_DIGITS.contains(&code) {
        Some(3)
    } else if FOUR_DIGITS.contains(&code) {
        Some(4)
    } else if TWO_DIGITS.contains(&code) {
        Some(2)
    } else {
        None
    }
}

/// Largest-remainder (Hamilton) apportionment of `total` over `weights`.
///
/// Each share starts at `floor(total · w_i / Σw)`; the units left over go one each to the
/// largest remainders, ties broken by position (callers pass weights sorted by name, then input
/// order). The shares always sum to `total` exactly. With all weights zero, everything is
/// returned as zeros except that `total` must then be zero too (else `None`).
///
/// # Complexity
/// O(n log n) for n weights.
pub fn apportion(total: i128, weights: &[i128]) -> Option<Vec<i128>> {
    if total < 0 || weights.iter().any(|w| *w < 0) {
        return None;
    }
    let sum: i128 = weights.iter().try_fold(0i128, |a, w| a.checked_add(*w))?;
    if sum == 0 {
        return (total == 0).then(|| vec![0; weights.len()]);
    }
    let mut shares = Vec::with_capacity(weights.len());
    let mut rems = Vec::with_capacity(weights.len());
    let mut given: i128 = 0;
    for (i, w) in weights.iter().enumerate() {
        let prod = total.checked_mul(*w)?;
        shares.push(prod / sum);
        rems.push((prod % sum, i));
        given += prod / sum;
    }
    let left = total - given;
    // Largest remainder first; equal remainders: earlier position first.
    rems.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for (_, i) in rems.iter().take(usize::try_from(left).ok()?) {
        shares[*i] += 1;
    }
    Some(shares)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_modes_at_half() {
        use RoundingMode::*;
        // 2.5, 3.5, -2.5
        assert_eq!(div_round(5, 2, HalfEven), Some(2));
        assert_eq!(div_round(7, 2, HalfEven), Some(4));
        assert_eq!(div_round(-5, 2, HalfEven), Some(-2));
        assert_eq!(div_round(5, 2, HalfUp), Some(3));
        assert_eq!(div_round(-5, 2, HalfUp), Some(-2));
        assert_eq!(div_round(5, 2, HalfAwayFromZero), Some(3));
        assert_eq!(div_round(-5, 2, HalfAwayFromZero), Some(-3));
        assert_eq!(div_round(5, 2, Down), Some(2));
        assert_eq!(div_round(-5, 2, Down), Some(-2));
        assert_eq!(div_round(29, 10, Down), Some(2));
        assert_eq!(div_round(26, 10, HalfEven), Some(3));
        assert_eq!(div_round(1, 0, HalfEven), None);
    }

    #[test]
    fn decimals_parse_and_format() {
        assert_eq!(parse_decimal("4.50", 6, "p").unwrap(), 4_500_000);
        assert_eq!(parse_decimal("1.2345", 6, "p").unwrap(), 1_234_500);
        assert_eq!(parse_decimal("3", 6, "p").unwrap(), 3_000_000);
        assert_eq!(parse_decimal(".5", 2, "p").unwrap(), 50);
        assert!(parse_decimal("1.0000001", 6, "p").is_err());
        assert!(parse_decimal("-1", 6, "p").is_err());
        assert!(parse_decimal("", 6, "p").is_err());
        assert!(parse_decimal("1e3", 6, "p").is_err());
        assert_eq!(format_fixed(1_188_000, 2), "11880.00");
        assert_eq!(format_fixed(-1, 2), "-0.01");
        assert_eq!(format_fixed(42, 0), "42");
        assert_eq!(format_hours(UNITS_PER_CARD_HOUR * 6240), "6240.000000");
    }

    #[test]
    fn currencies() {
        assert_eq!(Currency::from_code("USD").unwrap().minor_digits, 2);
        assert_eq!(Currency::from_code("JPY").unwrap().minor_digits, 0);
        assert_eq!(Currency::from_code("KWD").unwrap().minor_digits, 3);
        assert!(Currency::from_code("XYZ").is_err());
    }

    #[test]
    fn hamilton_example_8() {
        // 11 880.00 USD idle over allocated 6240 : 1440 : 1200.
        let shares = apportion(1_188_000, &[6240, 1440, 1200]).unwrap();
        assert_eq!(shares, vec![834_811, 192_649, 160_540]);
        assert_eq!(apportion(1_188_000, &[1, 1, 1]).unwrap(), vec![396_000; 3]);
        assert_eq!(apportion(2, &[1, 1, 1]).unwrap(), vec![1, 1, 0]);
        assert_eq!(apportion(0, &[0, 0]).unwrap(), vec![0, 0]);
        assert_eq!(apportion(1, &[0, 0]), None);
    }
}
