//! Typed figures of the reports: GPU-hours, money and fractions as exact integers.
//!
//! A report's JSON writes every figure as a decimal string (`"6240.000000"`, `"28080.00"`,
//! `"0.6719"`); a Rust caller reads the same figure as an integer newtype instead of parsing
//! that text. Each type's [`Display`](fmt::Display) is the JSON's string, [`FromStr`] reads it
//! back to the same value, and with the `serde` feature it serializes as that string (its
//! JSON Schema, with `schema`, is a string's).
//!
//! | type | integer | written as |
//! |---|---|---|
//! | [`GpuHours`] | millionths of a card-hour | six decimals, `"6240.000000"`, `"-4.000000"` |
//! | [`Money`] | minor units, with the digits it is written with | `"11880.00"` (USD), `"42"` (JPY) |
//! | [`BasisPoints`] | 10⁻⁴ of one | four decimals, `"0.6719"` |

use std::fmt;
use std::str::FromStr;

use crate::money::format_fixed;

/// Why a figure's text could not be read back (see [`FromStr`] of the figure types).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseFigureError {
    text: String,
    expected: &'static str,
}

impl fmt::Display for ParseFigureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` is not {}", self.text, self.expected)
    }
}

impl std::error::Error for ParseFigureError {}

/// Reads an optionally negative decimal (`"-4.5"`, `"12"`, `"0.6719"`) as an integer scaled by
/// `10^digits`, with its own number of fractional digits. `digits: None` takes the text's own
/// digits (at most 18); `Some(d)` accepts at most `d` and pads to them.
fn parse_signed(
    s: &str,
    digits: Option<u32>,
    expected: &'static str,
) -> Result<(i128, u32), ParseFigureError> {
    let bad = || ParseFigureError {
        text: s.to_owned(),
        expected,
    };
    let (neg, body) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    if int.is_empty()
        || body.ends_with('.')
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(bad());
    }
    let own = u32::try_from(frac.len()).map_err(|_| bad())?;
    let digits = match digits {
        Some(d) if own > d => return Err(bad()),
        Some(d) => d,
        None if own > 18 => return Err(bad()),
        None => own,
    };
    let mut v: i128 = 0;
    for b in int.bytes().chain(frac.bytes()) {
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add(i128::from(b - b'0')))
            .ok_or_else(bad)?;
    }
    v = v.checked_mul(10i128.pow(digits - own)).ok_or_else(bad)?;
    Ok((if neg { -v } else { v }, digits))
}

/// Implements `PartialEq<str>`/`PartialEq<&str>` (comparing the written form), serde as the
/// written string and a string's JSON Schema.
macro_rules! written_as_string {
    ($t:ty) => {
        impl PartialEq<str> for $t {
            /// Whether `other` is exactly this figure's written form.
            fn eq(&self, other: &str) -> bool {
                format!("{self}") == other
            }
        }

        impl PartialEq<&str> for $t {
            /// Whether `other` is exactly this figure's written form.
            fn eq(&self, other: &&str) -> bool {
                format!("{self}") == *other
            }
        }

        #[cfg(feature = "serde")]
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        #[cfg(feature = "serde")]
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }

        #[cfg(feature = "schema")]
        impl schemars::JsonSchema for $t {
            fn inline_schema() -> bool {
                <String as schemars::JsonSchema>::inline_schema()
            }
            fn schema_name() -> std::borrow::Cow<'static, str> {
                <String as schemars::JsonSchema>::schema_name()
            }
            fn schema_id() -> std::borrow::Cow<'static, str> {
                <String as schemars::JsonSchema>::schema_id()
            }
            fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
                <String as schemars::JsonSchema>::json_schema(g)
            }
        }
    };
}

/// GPU-hours (card-hours) in exact millionths: the reports' six-decimal hours.
///
/// Negative values occur (a budget's remaining hours after an overrun).
///
/// ```
/// use gpuquota_metering::figure::GpuHours;
/// let h = GpuHours::from_micro(6_240_000_000);
/// assert_eq!(h.to_string(), "6240.000000");
/// assert_eq!("-4.5".parse::<GpuHours>().unwrap(), GpuHours::from_micro(-4_500_000));
/// assert_eq!(h.as_f64(), 6240.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct GpuHours(i128);

impl GpuHours {
    /// Zero hours.
    pub const ZERO: GpuHours = GpuHours(0);

    /// From millionths of a GPU-hour.
    pub const fn from_micro(micro: i128) -> GpuHours {
        GpuHours(micro)
    }

    /// From the metering engine's `1/L` card-seconds, rounded half-even to a millionth (as
    /// the meter report prints them).
    pub fn from_card_second_units(units: i128) -> GpuHours {
        GpuHours(crate::money::micro_hours(units))
    }

    /// Millionths of a GPU-hour.
    pub const fn micro(self) -> i128 {
        self.0
    }

    /// The hours as a float (for plotting and ratios; the integer is the exact value).
    pub fn as_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }

    /// The sum, `None` on overflow.
    pub fn checked_add(self, other: GpuHours) -> Option<GpuHours> {
        self.0.checked_add(other.0).map(GpuHours)
    }

    /// `self − other`, `None` on overflow.
    pub fn checked_sub(self, other: GpuHours) -> Option<GpuHours> {
        self.0.checked_sub(other.0).map(GpuHours)
    }
}

impl fmt::Display for GpuHours {
    /// Six decimals: `"6240.000000"`, `"-0.500000"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_fixed(self.0, 6))
    }
}

impl FromStr for GpuHours {
    type Err = ParseFigureError;

    /// A decimal with at most six fractional digits, optionally negative.
    fn from_str(s: &str) -> Result<GpuHours, ParseFigureError> {
        parse_signed(s, Some(6), "GPU-hours with at most six decimals").map(|(v, _)| GpuHours(v))
    }
}

written_as_string!(GpuHours);

/// An amount of money in integer minor units, with the number of minor digits it is written
/// with: the currency's ISO 4217 exponent for a reported amount (`cost`, `total`, `drift`;
/// the currency is the report's), six for an exact amount in micro-units (`exactCost`).
///
/// Two amounts are equal when both the units and the digits are (`"1.0"` ≠ `"1.00"`).
///
/// ```
/// use gpuquota_metering::figure::Money;
/// let m = Money::new(1_188_000, 2);
/// assert_eq!(m.to_string(), "11880.00");
/// assert_eq!("11880.00".parse::<Money>().unwrap(), m);
/// assert_eq!(Money::new(42, 0).to_string(), "42");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Money {
    minor: i128,
    digits: u32,
}

impl Money {
    /// `minor` units of `10^−digits`.
    pub const fn new(minor: i128, digits: u32) -> Money {
        Money { minor, digits }
    }

    /// The amount in minor units.
    pub const fn minor_units(self) -> i128 {
        self.minor
    }

    /// The number of minor digits (the currency's exponent, or 6 for micro-units).
    pub const fn minor_digits(self) -> u32 {
        self.digits
    }

    /// The amount as a float (for plotting and ranking; the integer is the exact value).
    pub fn as_f64(self) -> f64 {
        self.minor as f64 / 10f64.powi(self.digits as i32)
    }

    /// The sum in the more precise of the two's digits, `None` on overflow.
    pub fn checked_add(self, other: Money) -> Option<Money> {
        let (a, b, digits) = Money::aligned(self, other)?;
        a.checked_add(b).map(|minor| Money { minor, digits })
    }

    /// `self − other` in the more precise of the two's digits, `None` on overflow.
    pub fn checked_sub(self, other: Money) -> Option<Money> {
        let (a, b, digits) = Money::aligned(self, other)?;
        a.checked_sub(b).map(|minor| Money { minor, digits })
    }

    fn aligned(a: Money, b: Money) -> Option<(i128, i128, u32)> {
        let digits = a.digits.max(b.digits);
        let scale = |m: Money| {
            10i128
                .checked_pow(digits - m.digits)
                .and_then(|s| m.minor.checked_mul(s))
        };
        Some((scale(a)?, scale(b)?, digits))
    }
}

impl fmt::Display for Money {
    /// The minor units with exactly the amount's digits: `"11880.00"`, `"-0.01"`, `"42"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_fixed(self.minor, self.digits))
    }
}

impl FromStr for Money {
    type Err = ParseFigureError;

    /// A decimal, optionally negative; its fractional digits (at most 18) are the amount's.
    fn from_str(s: &str) -> Result<Money, ParseFigureError> {
        parse_signed(s, None, "an amount of money").map(|(minor, digits)| Money { minor, digits })
    }
}

written_as_string!(Money);

/// A fraction of one in units of 10⁻⁴ (basis points): the meter report's `utilization`.
///
/// ```
/// use gpuquota_metering::figure::BasisPoints;
/// let u = BasisPoints::new(6719);
/// assert_eq!(u.to_string(), "0.6719");
/// assert_eq!(u.as_f64(), 0.6719);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct BasisPoints(i128);

impl BasisPoints {
    /// `bp` ten-thousandths.
    pub const fn new(bp: i128) -> BasisPoints {
        BasisPoints(bp)
    }

    /// The ten-thousandths.
    pub const fn get(self) -> i128 {
        self.0
    }

    /// The fraction as a float (`6719` → `0.6719`).
    pub fn as_f64(self) -> f64 {
        self.0 as f64 / 1e4
    }
}

impl fmt::Display for BasisPoints {
    /// Four decimals: `"0.6719"`, `"1.0000"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_fixed(self.0, 4))
    }
}

impl FromStr for BasisPoints {
    type Err = ParseFigureError;

    /// A decimal with at most four fractional digits, optionally negative.
    fn from_str(s: &str) -> Result<BasisPoints, ParseFigureError> {
        parse_signed(s, Some(4), "a fraction with at most four decimals")
            .map(|(v, _)| BasisPoints(v))
    }
}

written_as_string!(BasisPoints);

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn hours_are_written_as_the_reports_write_them() {
        assert_eq!(
            GpuHours::from_micro(6_240_000_000).to_string(),
            "6240.000000"
        );
        assert_eq!(GpuHours::from_micro(333_333).to_string(), "0.333333");
        assert_eq!(GpuHours::from_micro(-4_000_000).to_string(), "-4.000000");
        assert_eq!(GpuHours::from_micro(-1).to_string(), "-0.000001");
        assert_eq!(GpuHours::ZERO.to_string(), "0.000000");
        // 1/7 card-hour in 1/L card-seconds rounds half-even to 142857 millionths
        let seventh = crate::money::UNITS_PER_CARD_HOUR / 7;
        assert_eq!(
            GpuHours::from_card_second_units(seventh).to_string(),
            "0.142857"
        );
        assert_eq!(
            "1.5".parse::<GpuHours>(),
            Ok(GpuHours::from_micro(1_500_000))
        );
        assert_eq!(
            "12".parse::<GpuHours>(),
            Ok(GpuHours::from_micro(12_000_000))
        );
        assert!("1.0000001".parse::<GpuHours>().is_err());
        assert!("".parse::<GpuHours>().is_err());
        assert!("1.".parse::<GpuHours>().is_err());
        assert!(".5".parse::<GpuHours>().is_err());
        assert!("1e3".parse::<GpuHours>().is_err());
        assert!("--1".parse::<GpuHours>().is_err());
        assert_eq!(GpuHours::from_micro(960_000_000), "960.000000");
    }

    #[test]
    fn money_keeps_its_digits() {
        assert_eq!(Money::new(1_188_000, 2).to_string(), "11880.00");
        assert_eq!(Money::new(-1, 2).to_string(), "-0.01");
        assert_eq!(Money::new(42, 0).to_string(), "42");
        assert_eq!(Money::new(51_840_000_000, 6).to_string(), "51840.000000");
        assert_eq!("0.00".parse::<Money>(), Ok(Money::new(0, 2)));
        assert_eq!("7".parse::<Money>(), Ok(Money::new(7, 0)));
        assert_eq!("-1.234".parse::<Money>(), Ok(Money::new(-1234, 3)));
        assert_ne!("1.0".parse::<Money>(), "1.00".parse::<Money>());
        // sums and differences keep the more precise digits
        let a = Money::new(1050, 2); // 10.50
        let b = Money::new(105, 1); // 10.5
        assert_eq!(
            b.checked_sub(a).map(|m| m.to_string()).as_deref(),
            Some("0.00")
        );
        assert_eq!(a.checked_add(b), Some(Money::new(2100, 2)));
        assert_eq!(Money::new(1_188_000, 2).as_f64(), 11880.0);
    }

    #[test]
    fn basis_points_are_four_decimals() {
        assert_eq!(BasisPoints::new(6719).to_string(), "0.6719");
        assert_eq!(BasisPoints::new(10_000).to_string(), "1.0000");
        assert_eq!(BasisPoints::new(5).to_string(), "0.0005");
        assert_eq!("0.5".parse::<BasisPoints>(), Ok(BasisPoints::new(5000)));
        assert!("0.12345".parse::<BasisPoints>().is_err());
    }

    #[cfg(feature = "serde")]
    #[test]
    fn serde_writes_and_reads_the_string() {
        let h = GpuHours::from_micro(-4_000_000);
        assert_eq!(serde_json::to_string(&h).unwrap(), "\"-4.000000\"");
        assert_eq!(
            serde_json::from_str::<GpuHours>("\"-4.000000\"").unwrap(),
            h
        );
        let m = Money::new(1_188_000, 2);
        assert_eq!(serde_json::to_string(&m).unwrap(), "\"11880.00\"");
        assert_eq!(serde_json::from_str::<Money>("\"11880.00\"").unwrap(), m);
        assert_eq!(
            serde_json::to_string(&Some(BasisPoints::new(6719))).unwrap(),
            "\"0.6719\""
        );
        assert!(serde_json::from_str::<GpuHours>("\"x\"").is_err());
    }

    proptest! {
        #[test]
        fn hours_round_trip(micro in any::<i64>()) {
            let h = GpuHours::from_micro(i128::from(micro));
            prop_assert_eq!(h.to_string().parse::<GpuHours>(), Ok(h));
        }

        #[test]
        fn money_round_trips(minor in any::<i64>(), digits in 0u32..=6) {
            let m = Money::new(i128::from(minor), digits);
            prop_assert_eq!(m.to_string().parse::<Money>(), Ok(m));
        }

        #[test]
        fn basis_points_round_trip(bp in any::<i64>()) {
            let b = BasisPoints::new(i128::from(bp));
            prop_assert_eq!(b.to_string().parse::<BasisPoints>(), Ok(b));
        }
    }
}
