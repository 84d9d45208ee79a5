//! An exact non-negative-denominator rational on `i128`, with checked arithmetic.

use std::cmp::Ordering;
use std::fmt;

#[cfg(feature = "serde")]
use serde::{Serialize, Serializer};

use crate::error::FairShareError;

/// An exact rational `num / den` in lowest terms, `den > 0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ratio {
    num: i128,
    den: i128,
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    a = a.abs();
    b = b.abs();
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a
}

fn ovf() -> FairShareError {
    FairShareError::overflow("exact rational arithmetic")
}

impl Ratio {
    /// Zero.
    pub const ZERO: Ratio = Ratio { num: 0, den: 1 };

    /// `num / den`, reduced.
    ///
    /// # Errors
    /// `den == 0` or overflow while normalising.
    pub fn new(num: i128, den: i128) -> Result<Ratio, FairShareError> {
        if den == 0 {
            return Err(FairShareError::invalid(
                "rational",
                "denominator",
                "must not be 0",
            ));
        }
        let g = gcd(num, den).max(1);
        let (mut n, mut d) = (num / g, den / g);
        if d < 0 {
            n = n.checked_neg().ok_or_else(ovf)?;
            d = d.checked_neg().ok_or_else(ovf)?;
        }
        Ok(Ratio { num: n, den: d })
    }

    /// An integer.
    pub fn int(n: i128) -> Ratio {
        Ratio { num: n, den: 1 }
    }

    /// Numerator (lowest terms).
    pub fn numer(self) -> i128 {
        self.num
    }

    /// Denominator (lowest terms, positive).
    pub fn denom(self) -> i128 {
        self.den
    }

    /// Checked sum.
    ///
    /// # Errors
    /// Overflow.
    pub fn checked_add(self, o: Ratio) -> Result<Ratio, FairShareError> {
        let g = gcd(self.den, o.den).max(1);
        let l = (self.den / g).checked_mul(o.den).ok_or_else(ovf)?;
        let a = self.num.checked_mul(l / self.den).ok_or_else(ovf)?;
        let b = o.num.checked_mul(l / o.den).ok_or_else(ovf)?;
        Ratio::new(a.checked_add(b).ok_or_else(ovf)?, l)
    }

    /// Checked difference.
    ///
    /// # Errors
    /// Overflow.
    pub fn checked_sub(self, o: Ratio) -> Result<Ratio, FairShareError> {
        self.checked_add(Ratio {
            num: o.num.checked_neg().ok_or_else(ovf)?,
            den: o.den,
        })
    }

    /// Checked product.
    ///
    /// # Errors
    /// Overflow.
    pub fn checked_mul(self, o: Ratio) -> Result<Ratio, FairShareError> {
        let g1 = gcd(self.num, o.den).max(1);
        let g2 = gcd(o.num, self.den).max(1);
        let n = (self.num / g1).checked_mul(o.num / g2).ok_or_else(ovf)?;
        let d = (self.den / g2).checked_mul(o.den / g1).ok_or_else(ovf)?;
        Ratio::new(n, d)
    }

    /// Checked quotient.
    ///
    /// # Errors
    /// Division by zero or overflow.
    pub fn checked_div(self, o: Ratio) -> Result<Ratio, FairShareError> {
        if o.num == 0 {
            return Err(FairShareError::invalid(
                "rational",
                "divisor",
                "must not be 0",
            ));
        }
        self.checked_mul(Ratio::new(o.den, o.num)?)
    }

    /// Largest integer ≤ self.
    pub fn floor(self) -> i128 {
        self.num.div_euclid(self.den)
    }

    /// Smallest integer ≥ self.
    pub fn ceil(self) -> i128 {
        let f = self.floor();
        if f * self.den == self.num { f } else { f + 1 }
    }

    /// Nearest `f64` (for display only).
    pub fn to_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }

    /// Exact comparison (never overflows: compares by continued fractions when the cross
    /// products would overflow).
    pub fn cmp_exact(self, o: Ratio) -> Ordering {
        match (self.num.checked_mul(o.den), o.num.checked_mul(self.den)) {
            (Some(a), Some(b)) => a.cmp(&b),
            _ => {
                let (fa, fb) = (self.floor(), o.floor());
                if fa != fb {
                    return fa.cmp(&fb);
                }
                // Compare fractional parts: a/b vs c/d with 0 ≤ a < b, 0 ≤ c < d.
                let ra = self.num - fa * self.den;
                let rb = o.num - fb * o.den;
                match (ra == 0, rb == 0) {
                    (true, true) => Ordering::Equal,
                    (true, false) => Ordering::Less,
                    (false, true) => Ordering::Greater,
                    // a/b < c/d ⇔ d/c < b/a.
                    (false, false) => Ratio {
                        num: o.den,
                        den: rb,
                    }
                    .cmp_exact(Ratio {
                        num: self.den,
                        den: ra,
                    }),
                }
            }
        }
    }
}

impl PartialOrd for Ratio {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ratio {
    fn cmp(&self, other: &Self) -> Ordering {
        self.cmp_exact(*other)
    }
}

impl fmt::Display for Ratio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.den == 1 {
            write!(f, "{}", self.num)
        } else {
            write!(f, "{}/{}", self.num, self.den)
        }
    }
}

#[cfg(feature = "serde")]
impl Serialize for Ratio {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic() {
        let a = Ratio::new(1, 3).unwrap();
        let b = Ratio::new(1, 6).unwrap();
        assert_eq!(a.checked_add(b).unwrap(), Ratio::new(1, 2).unwrap());
        assert_eq!(a.checked_sub(b).unwrap(), b);
        assert_eq!(a.checked_mul(b).unwrap(), Ratio::new(1, 18).unwrap());
        assert_eq!(a.checked_div(b).unwrap(), Ratio::int(2));
        assert_eq!(Ratio::new(-7, 2).unwrap().floor(), -4);
        assert_eq!(Ratio::new(7, 2).unwrap().ceil(), 4);
        assert_eq!(Ratio::int(3).ceil(), 3);
        assert!(a > b);
        let big = Ratio::new(i128::MAX - 1, i128::MAX).unwrap();
        let big2 = Ratio::new(i128::MAX - 2, i128::MAX - 1).unwrap();
        assert_eq!(big.cmp(&big2), Ordering::Greater);
        assert_eq!(a.to_string(), "1/3");
    }
}
