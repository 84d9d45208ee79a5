//! Kubernetes quantities, parsed once at the edge into exact values.
//!
//! A [`Quantity`] is the exact decimal value of a Kubernetes quantity string (`500m`, `4Gi`,
//! `1.5`, `2e3`, `1k`, `100M`) together with the notation it was written in, so that it prints
//! back in the same family of suffixes. Engines never compute with a `Quantity`: they convert it
//! once into an integer [`Amount`] using Kueue's convention (see [`Quantity::to_amount`]) or, for
//! fractional GPUs, keep the exact decimal.
//!
//! Exactness: every value that can be written with a decimal or binary suffix is an exact decimal
//! (binary suffixes are powers of two, which are integers), so a quantity is stored as
//! `mantissa × 10^exponent` with an `i128` mantissa. Like Kubernetes, values finer than one nano
//! (10⁻⁹) are rounded up to the next nano.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use crate::resource::ResourceName;

/// The notation a quantity was written in; it decides how the value prints back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum QuantityFormat {
    /// Decimal SI suffixes: `n`, `u`, `m`, none, `k`, `M`, `G`, `T`, `P`, `E`.
    DecimalSi,
    /// Binary SI suffixes: `Ki`, `Mi`, `Gi`, `Ti`, `Pi`, `Ei`.
    BinarySi,
    /// A decimal exponent: `1e3`, `2E-3`.
    DecimalExponent,
}

/// Why a quantity string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum QuantityError {
    /// The string is empty.
    #[error("quantity is empty")]
    Empty,
    /// The string does not follow the Kubernetes quantity grammar.
    #[error(
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {0:?}"
    )]
    Syntax(String),
    /// The value is too large to be held exactly.
    #[error("quantity {0:?} is too large")]
    TooLarge(String),
    /// The exponent is beyond ±1000 (or beyond a 32-bit integer), which no resource needs.
    #[error(
        "quantity {0:?} has an exponent beyond ±1000; write it with a suffix or a smaller exponent (e.g. 1n, 5E)"
    )]
    ExponentOutOfRange(String),
    /// More significant digits than can be held exactly (38).
    #[error("quantity {0:?} has more significant digits than can be held exactly (38)")]
    TooPrecise(String),
}

/// An exact Kubernetes quantity.
///
/// Equality and ordering compare the numeric value only (`1000m == 1 == 1e0`); the notation is
/// kept for printing.
#[derive(Debug, Clone, Copy)]
pub struct Quantity {
    mantissa: i128,
    exponent: i32,
    format: QuantityFormat,
}

/// Nano is the finest precision Kubernetes keeps.
const MIN_EXPONENT: i32 = -9;
/// Mantissas are kept below this bound so that scaling by 10³ and comparisons never overflow.
const MANTISSA_LIMIT: i128 = 10_i128.pow(36);

impl Quantity {
    /// The quantity zero (decimal notation).
    pub const ZERO: Quantity = Quantity {
        mantissa: 0,
        exponent: 0,
        format: QuantityFormat::DecimalSi,
    };

    /// A whole number in decimal notation.
    pub fn from_integer(value: i64) -> Quantity {
        Quantity::new(i128::from(value), 0, QuantityFormat::DecimalSi)
    }

    /// `milli / 1000` in decimal notation (how Kubernetes builds a milli-quantity).
    pub fn from_milli(milli: i64) -> Quantity {
        Quantity::new(i128::from(milli), -3, QuantityFormat::DecimalSi)
    }

    /// A whole number of bytes in binary notation (how Kueue prints memory).
    pub fn from_bytes(bytes: i64) -> Quantity {
        Quantity::new(i128::from(bytes), 0, QuantityFormat::BinarySi)
    }

    /// `mantissa × 10^exponent` exactly, or `None` if it cannot be held.
    pub fn from_decimal(mantissa: i128, exponent: i32) -> Option<Quantity> {
        if mantissa.unsigned_abs() >= MANTISSA_LIMIT as u128 {
            return None;
        }
        Some(Quantity::new(mantissa, exponent, QuantityFormat::DecimalSi))
    }

    fn new(mantissa: i128, exponent: i32, format: QuantityFormat) -> Quantity {
        let mut q = Quantity {
            mantissa,
            exponent,
            format,
        };
        q.normalize();
        q
    }

    /// Strips trailing zeros of the mantissa into the exponent; rounds below-nano values up.
    fn normalize(&mut self) {
        if self.mantissa == 0 {
            self.exponent = 0;
            return;
        }
        if self.exponent < MIN_EXPONENT {
            // Round away from zero to the next representable nano, as Kubernetes does.
            let sign = self.mantissa.signum();
            let mut inexact = false;
            while self.exponent < MIN_EXPONENT {
                inexact |= self.mantissa % 10 != 0;
                self.mantissa /= 10;
                self.exponent += 1;
            }
            if inexact {
                self.mantissa += sign;
            }
            if self.mantissa == 0 {
                self.exponent = 0;
                return;
            }
        }
        while self.mantissa % 10 == 0 {
            self.mantissa /= 10;
            self.exponent += 1;
        }
    }

    /// The notation the quantity was written in.
    pub fn format(&self) -> QuantityFormat {
        self.format
    }

    /// The same value printed in another notation.
    pub fn with_format(self, format: QuantityFormat) -> Quantity {
        Quantity { format, ..self }
    }

    /// True when the value is below zero.
    pub fn is_negative(&self) -> bool {
        self.mantissa < 0
    }

    /// True when the value is zero.
    pub fn is_zero(&self) -> bool {
        self.mantissa == 0
    }

    /// The exact value as `(mantissa, exponent)` with no trailing zeros in the mantissa.
    pub fn as_decimal(&self) -> (i128, i32) {
        (self.mantissa, self.exponent)
    }

    /// The value scaled by `10^scale` and rounded up away from zero, if it fits in `i64`.
    ///
    /// `scaled_ceil(0)` is Kubernetes' `Value()`, `scaled_ceil(3)` its `MilliValue()`.
    pub fn scaled_ceil(&self, scale: i32) -> Option<i64> {
        let exp = self.exponent.checked_add(scale)?;
        let value = if exp >= 0 {
            let factor = 10_i128.checked_pow(u32::try_from(exp).ok()?)?;
            self.mantissa.checked_mul(factor)?
        } else {
            let divisor = match u32::try_from(-i64::from(exp))
                .ok()
                .and_then(|e| 10_i128.checked_pow(e))
            {
                Some(d) => d,
                // The value is smaller than one unit at this scale: rounds up to ±1 (or 0).
                None => return Some(self.mantissa.signum() as i64),
            };
            let q = self.mantissa / divisor;
            if self.mantissa % divisor != 0 {
                q + self.mantissa.signum()
            } else {
                q
            }
        };
        i64::try_from(value).ok()
    }

    /// Kubernetes' `Value()`: the value rounded up away from zero, if it fits in `i64`.
    pub fn value(&self) -> Option<i64> {
        self.scaled_ceil(0)
    }

    /// Kubernetes' `MilliValue()`: the value in thousandths rounded up, if it fits in `i64`.
    pub fn milli_value(&self) -> Option<i64> {
        self.scaled_ceil(3)
    }

    /// The integer amount Kueue keeps for this quantity of `resource`.
    ///
    /// CPU is counted in milli-units, every other resource in base units rounded up (memory in
    /// bytes, GPUs in devices). A value too large for `i64` becomes [`Amount::UNLIMITED`], as
    /// Kueue's saturating conversion does.
    pub fn to_amount(&self, resource: &ResourceName) -> Amount {
        let v = if resource.is_cpu() {
            self.milli_value()
        } else {
            self.value()
        };
        match v {
            Some(v) => Amount(v),
            None if self.is_negative() => Amount(i64::MIN),
            None => Amount::UNLIMITED,
        }
    }

    /// Parses a Kubernetes quantity string.
    ///
    /// # Errors
    /// [`QuantityError`] when the string is empty, malformed, or too large to hold exactly.
    pub fn parse(s: &str) -> Result<Quantity, QuantityError> {
        parse_quantity(s)
    }
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Quantity {}

impl std::hash::Hash for Quantity {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // Normalized form is unique per value.
        self.mantissa.hash(state);
        self.exponent.hash(state);
    }
}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Quantity {
    fn cmp(&self, other: &Self) -> Ordering {
        let sign = self.mantissa.signum().cmp(&other.mantissa.signum());
        if sign != Ordering::Equal || self.mantissa == 0 {
            return sign;
        }
        // Same sign, both non-zero: bring both to the smaller exponent. Mantissas are bounded
        // by 10^36 and exponents by the grammar, so compare digit counts first to avoid overflow.
        let digits = |m: i128| m.unsigned_abs().checked_ilog10().unwrap_or(0) as i64;
        let mag_a = digits(self.mantissa) + i64::from(self.exponent);
        let mag_b = digits(other.mantissa) + i64::from(other.exponent);
        let by_magnitude = if mag_a != mag_b {
            mag_a.cmp(&mag_b)
        } else {
            let e = self.exponent.min(other.exponent);
            // Same magnitude: the exponent difference is at most 37 digits apart, fits after
            // normalization because both have the same number of leading digits.
            let a = widen(self.mantissa.unsigned_abs(), self.exponent - e);
            let b = widen(other.mantissa.unsigned_abs(), other.exponent - e);
            a.cmp(&b)
        };
        if self.mantissa > 0 {
            by_magnitude
        } else {
            by_magnitude.reverse()
        }
    }
}

/// `m × 10^shift`, saturating; only used where both sides have equal magnitude.
fn widen(m: u128, shift: i32) -> u128 {
    let factor = u32::try_from(shift)
        .ok()
        .and_then(|s| 10_u128.checked_pow(s))
        .unwrap_or(u128::MAX);
    m.saturating_mul(factor)
}

impl FromStr for Quantity {
    type Err = QuantityError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_quantity(s)
    }
}

/// Parses like apimachinery's `ParseQuantity` (kubernetes/apimachinery:
/// pkg/api/resource/quantity.go): no whitespace anywhere, so `" 8"` and `"8 "` are refused as the
/// CRD schema's quantity pattern refuses them for Kueue's objects. (The core types' JSON decoder
/// still trims spaces, marked there as a TODO to remove; gpuquota refuses them everywhere, so one
/// quantity has one answer in every kind.)
fn parse_quantity(input: &str) -> Result<Quantity, QuantityError> {
    let s = input;
    if s.is_empty() {
        return Err(QuantityError::Empty);
    }
    let syntax = || QuantityError::Syntax(input.to_owned());
    let too_large = || QuantityError::TooLarge(input.to_owned());
    let too_precise = || QuantityError::TooPrecise(input.to_owned());
    let out_of_range = || QuantityError::ExponentOutOfRange(input.to_owned());
    let bytes = s.as_bytes();
    let mut i = 0;
    let mut negative = false;
    if bytes[0] == b'+' || bytes[0] == b'-' {
        negative = bytes[0] == b'-';
        i = 1;
    }
    let mut mantissa: i128 = 0;
    let mut exponent: i32 = 0;
    let mut digits = 0usize;
    let mut seen_dot = false;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_digit() {
            digits += 1;
            if mantissa < MANTISSA_LIMIT {
                mantissa = mantissa * 10 + i128::from(c - b'0');
                if seen_dot {
                    exponent -= 1;
                }
            } else if !seen_dot {
                // Drop further integer digits into the exponent, keeping the value exact only
                // if they are zeros.
                if c != b'0' {
                    return Err(too_large());
                }
                exponent += 1;
            } else if c != b'0' {
                // Fractional digits beyond the precision we hold would be lost: refuse.
                return Err(too_precise());
            }
        } else if c == b'.' {
            if seen_dot {
                return Err(syntax());
            }
            seen_dot = true;
        } else {
            break;
        }
        i += 1;
    }
    if digits == 0 {
        return Err(syntax());
    }
    let suffix = &s[i..];
    let (format, pow10, pow2): (QuantityFormat, i32, u32) = match suffix {
        "" => (QuantityFormat::DecimalSi, 0, 0),
        "n" => (QuantityFormat::DecimalSi, -9, 0),
        "u" => (QuantityFormat::DecimalSi, -6, 0),
        "m" => (QuantityFormat::DecimalSi, -3, 0),
        "k" => (QuantityFormat::DecimalSi, 3, 0),
        "M" => (QuantityFormat::DecimalSi, 6, 0),
        "G" => (QuantityFormat::DecimalSi, 9, 0),
        "T" => (QuantityFormat::DecimalSi, 12, 0),
        "P" => (QuantityFormat::DecimalSi, 15, 0),
        "E" => (QuantityFormat::DecimalSi, 18, 0),
        "Ki" => (QuantityFormat::BinarySi, 0, 10),
        "Mi" => (QuantityFormat::BinarySi, 0, 20),
        "Gi" => (QuantityFormat::BinarySi, 0, 30),
        "Ti" => (QuantityFormat::BinarySi, 0, 40),
        "Pi" => (QuantityFormat::BinarySi, 0, 50),
        "Ei" => (QuantityFormat::BinarySi, 0, 60),
        other => {
            let rest = other
                .strip_prefix('e')
                .or_else(|| other.strip_prefix('E'))
                .ok_or_else(syntax)?;
            let (neg, digits) = match rest.as_bytes().first() {
                Some(b'-') => (true, &rest[1..]),
                Some(b'+') => (false, &rest[1..]),
                _ => (false, rest),
            };
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(syntax());
            }
            let e: i32 = digits.parse().map_err(|_| out_of_range())?;
            if e > 1000 {
                return Err(out_of_range());
            }
            (QuantityFormat::DecimalExponent, if neg { -e } else { e }, 0)
        }
    };
    if pow2 > 0 {
        mantissa = mantissa.checked_mul(1_i128 << pow2).ok_or_else(too_large)?;
    }
    exponent = exponent.checked_add(pow10).ok_or_else(too_large)?;
    if negative {
        mantissa = -mantissa;
    }
    let mut q = Quantity {
        mantissa,
        exponent,
        format,
    };
    q.normalize();
    if q.mantissa.unsigned_abs() >= MANTISSA_LIMIT as u128 || q.exponent > 60 {
        return Err(too_large());
    }
    Ok(q)
}

impl fmt::Display for Quantity {
    /// Prints the canonical Kubernetes form in the quantity's notation: the largest suffix that
    /// keeps the number whole (`1500m`, `2k`, `1536Mi`, `1e3`). A binary quantity that is not a
    /// whole number of bytes prints in decimal notation, as Kubernetes does.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.mantissa == 0 {
            return f.write_str("0");
        }
        match self.format {
            QuantityFormat::BinarySi if self.exponent >= 0 => {
                if let Some(v) = self.mantissa.checked_mul(
                    10_i128
                        .checked_pow(self.exponent as u32)
                        .unwrap_or(i128::MAX),
                ) && self.exponent <= 30
                {
                    let mut v = v;
                    let mut idx = 0;
                    while idx < 6 && v % 1024 == 0 {
                        v /= 1024;
                        idx += 1;
                    }
                    const SUFFIXES: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
                    return write!(f, "{v}{}", SUFFIXES[idx]);
                }
                write_decimal_si(f, self.mantissa, self.exponent)
            }
            QuantityFormat::DecimalExponent => {
                let (m, e) = align3(self.mantissa, self.exponent);
                if e == 0 {
                    write!(f, "{m}")
                } else {
                    write!(f, "{m}e{e}")
                }
            }
            _ => write_decimal_si(f, self.mantissa, self.exponent),
        }
    }
}

/// Brings `m × 10^e` to an exponent that is a multiple of three without losing digits.
fn align3(mut m: i128, mut e: i32) -> (i128, i32) {
    while e.rem_euclid(3) != 0 {
        m *= 10;
        e -= 1;
    }
    (m, e)
}

fn write_decimal_si(f: &mut fmt::Formatter<'_>, m: i128, e: i32) -> fmt::Result {
    let (m, mut e) = align3(m, e);
    // Above exa there is no suffix: the extra powers of a thousand become trailing zeros of
    // the number (written out as digits, since the mantissa times 10^(e−18) may not fit i128).
    let mut zeros = String::new();
    while e > 18 {
        zeros.push_str("000");
        e -= 3;
    }
    let suffix = match e {
        -9 => "n",
        -6 => "u",
        -3 => "m",
        0 => "",
        3 => "k",
        6 => "M",
        9 => "G",
        12 => "T",
        15 => "P",
        18 => "E",
        _ => "",
    };
    write!(f, "{m}{zeros}{suffix}")
}

/// An integer amount in Kueue's units: CPU in milli-units, everything else in base units.
///
/// Arithmetic mirrors Kueue's `pkg/resources` exactly: it saturates instead of wrapping and
/// treats `i64::MAX` as the *unlimited* sentinel (`unlimited + x = unlimited`,
/// `unlimited − bounded = unlimited`, `bounded − unlimited = i64::MIN`,
/// `unlimited − unlimited = 0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Amount(pub i64);

impl Amount {
    /// Zero.
    pub const ZERO: Amount = Amount(0);
    /// Kueue's "unlimited" sentinel (`MaxInt64`).
    pub const UNLIMITED: Amount = Amount(i64::MAX);

    /// True for the unlimited sentinel.
    pub fn is_unlimited(self) -> bool {
        self.0 == i64::MAX
    }

    /// Kueue's saturating addition with the unlimited sentinel.
    pub fn saturating_add(self, other: Amount) -> Amount {
        if self.is_unlimited() || other.is_unlimited() {
            return Amount::UNLIMITED;
        }
        Amount(self.0.saturating_add(other.0))
    }

    /// Kueue's saturating subtraction with the unlimited sentinel.
    pub fn saturating_sub(self, other: Amount) -> Amount {
        match (self.is_unlimited(), other.is_unlimited()) {
            (true, true) => Amount::ZERO,
            (true, false) => Amount::UNLIMITED,
            (false, true) => Amount(i64::MIN),
            (false, false) => Amount(self.0.saturating_sub(other.0)),
        }
    }

    /// Checked addition (no sentinel semantics): `None` on overflow.
    pub fn checked_add(self, other: Amount) -> Option<Amount> {
        self.0.checked_add(other.0).map(Amount)
    }

    /// Checked subtraction (no sentinel semantics): `None` on overflow.
    pub fn checked_sub(self, other: Amount) -> Option<Amount> {
        self.0.checked_sub(other.0).map(Amount)
    }

    /// Checked multiplication by a count: `None` on overflow.
    pub fn checked_mul(self, n: i64) -> Option<Amount> {
        self.0.checked_mul(n).map(Amount)
    }

    /// The larger of two amounts.
    pub fn max(self, other: Amount) -> Amount {
        Amount(self.0.max(other.0))
    }

    /// The smaller of two amounts.
    pub fn min(self, other: Amount) -> Amount {
        Amount(self.0.min(other.0))
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Quantity {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Quantity {
    /// Accepts a quantity string (`"500m"`) or a YAML/JSON number (`8`, `0.5`); a float is read
    /// through its shortest round-trip decimal form, so `0.1` is exactly one tenth.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(QuantityVisitor)
    }
}

#[cfg(feature = "serde")]
struct QuantityVisitor;

#[cfg(feature = "serde")]
impl serde::de::Visitor<'_> for QuantityVisitor {
    type Value = Quantity;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Kubernetes quantity (string or number)")
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Quantity, E> {
        Quantity::parse(v).map_err(E::custom)
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Quantity, E> {
        Ok(Quantity::from_integer(v))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Quantity, E> {
        Ok(Quantity::new(i128::from(v), 0, QuantityFormat::DecimalSi))
    }

    fn visit_i128<E: serde::de::Error>(self, v: i128) -> Result<Quantity, E> {
        Quantity::from_decimal(v, 0).ok_or_else(|| E::custom("quantity is too large"))
    }

    fn visit_u128<E: serde::de::Error>(self, v: u128) -> Result<Quantity, E> {
        i128::try_from(v)
            .ok()
            .and_then(|v| Quantity::from_decimal(v, 0))
            .ok_or_else(|| E::custom("quantity is too large"))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Quantity, E> {
        if !v.is_finite() {
            return Err(E::custom("quantity must be a finite number"));
        }
        // `{}` prints the shortest decimal that reads back as the same f64, without exponent.
        Quantity::parse(&format!("{v}")).map_err(E::custom)
    }
}

/// How Kueue prints amounts of a resource (beside [`Quantity`], which the resource's name
/// decides the unit of).
impl ResourceName {
    /// The quantity Kueue reports for `amount` of this resource: CPU as a milli-quantity,
    /// memory and ephemeral storage in binary notation, everything else in decimal notation.
    pub fn quantity_of(&self, amount: Amount) -> Quantity {
        if self.is_cpu() {
            Quantity::from_milli(amount.0)
        } else if self.is_byte_sized() {
            Quantity::from_bytes(amount.0)
        } else {
            Quantity::from_integer(amount.0)
        }
    }

    /// `amount` of this resource as a canonical Kubernetes quantity string (`6`, `500m`, `36Gi`).
    pub fn format_amount(&self, amount: Amount) -> String {
        self.quantity_of(amount).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap()
    }

    #[test]
    fn parses_the_issue_examples() {
        let cpu = ResourceName::new("cpu");
        let mem = ResourceName::new("memory");
        assert_eq!(q("500m").to_amount(&cpu), Amount(500));
        assert_eq!(q("4Gi").to_amount(&mem), Amount(4 * 1024 * 1024 * 1024));
        assert_eq!(q("1.5").to_amount(&cpu), Amount(1500));
        assert_eq!(q("2e3").to_amount(&mem), Amount(2000));
        assert_eq!(q("1k").to_amount(&mem), Amount(1000));
        assert_eq!(q("100M").to_amount(&mem), Amount(100_000_000));
    }

    #[test]
    fn non_cpu_fractions_round_up() {
        let gpu = ResourceName::new("nvidia.com/gpu");
        assert_eq!(q("1.5").to_amount(&gpu), Amount(2));
        assert_eq!(q("100m").to_amount(&gpu), Amount(1));
        assert_eq!(q("-1.5").value(), Some(-2));
    }

    #[test]
    fn huge_values_become_unlimited() {
        let cpu = ResourceName::new("cpu");
        assert_eq!(q("1E").to_amount(&cpu), Amount::UNLIMITED);
        assert_eq!(
            q("1E").to_amount(&ResourceName::new("memory")),
            Amount(10_i64.pow(18))
        );
    }

    #[test]
    fn canonical_display() {
        assert_eq!(q("1000m").to_string(), "1");
        assert_eq!(q("1500m").to_string(), "1500m");
        assert_eq!(q("2000").to_string(), "2k");
        assert_eq!(q("1.5Ki").to_string(), "1536");
        assert_eq!(q("1536Mi").to_string(), "1536Mi");
        assert_eq!(q("2048Mi").to_string(), "2Gi");
        assert_eq!(q("1e3").to_string(), "1e3");
        assert_eq!(q("0.5").to_string(), "500m");
        assert_eq!(q("0").to_string(), "0");
        assert_eq!(q("0.1Ki").to_string(), "102400m");
    }

    #[test]
    fn values_beyond_exa_print_without_overflow() {
        // Found by `cargo fuzz run -s none quantity`: the mantissa times 1000 overflowed i128.
        let big = format!("23000040{}", "0".repeat(40));
        let huge = q(&big);
        assert_eq!(Quantity::parse(&huge.to_string()).unwrap(), huge);
        assert_eq!(
            q("1e21").with_format(QuantityFormat::DecimalSi).to_string(),
            "1000E"
        );
    }

    #[test]
    fn below_nano_rounds_up() {
        assert_eq!(q("0.1n"), q("1n"));
        assert_eq!(q("1.1n"), q("2n"));
    }

    #[test]
    fn equality_ignores_notation() {
        assert_eq!(q("1000m"), q("1"));
        assert_eq!(q("1Ki"), q("1024"));
        assert!(q("999m") < q("1"));
        assert!(q("-2") < q("-1"));
        assert!(q("1Ei") > q("1E"));
    }

    #[test]
    fn rejects_malformed() {
        for bad in [
            "", "abc", "1.2.3", "1Qi", "--1", ".", "1e", "1e+", "m", "1 k", " 1", "1 ", "\t8",
        ] {
            assert!(Quantity::parse(bad).is_err(), "{bad} should be rejected");
        }
    }

    #[test]
    fn tiny_and_huge_exponents_say_what_is_wrong() {
        let tiny = Quantity::parse("1e-9999999999").unwrap_err();
        assert!(
            matches!(tiny, QuantityError::ExponentOutOfRange(_)),
            "{tiny}"
        );
        assert!(!tiny.to_string().contains("too large"), "{tiny}");
        let precise = Quantity::parse(&format!("1.{}1", "0".repeat(45))).unwrap_err();
        assert!(matches!(precise, QuantityError::TooPrecise(_)), "{precise}");
        assert!(matches!(
            Quantity::parse("1e99999").unwrap_err(),
            QuantityError::ExponentOutOfRange(_)
        ));
    }

    #[test]
    fn amount_sentinel_arithmetic() {
        let u = Amount::UNLIMITED;
        assert_eq!(u.saturating_add(Amount(5)), u);
        assert_eq!(u.saturating_sub(Amount(5)), u);
        assert_eq!(Amount(5).saturating_sub(u), Amount(i64::MIN));
        assert_eq!(u.saturating_sub(u), Amount::ZERO);
        assert_eq!(Amount(i64::MAX - 1).saturating_add(Amount(5)), u);
    }
}
