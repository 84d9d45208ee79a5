//! Exact fixed-point amounts and the wide multiply-divide the division needs.
//!
//! Every amount is an `i128` count of nano-units ([`SCALE`] = 10⁹ per unit), where the unit is
//! one GPU device, one CPU millicore or one memory byte — the unit KAI's division rounds to.
//! Kubernetes quantities never carry more than nano precision, so every input is held exactly.

use gpuquota_model::Quantity;

/// Nano-units per unit.
pub const SCALE: i128 = 1_000_000_000;

/// Fixed-point scale of the fractional remainders recorded for phase 3 (10¹⁸ per unit).
pub const FRAC_SCALE: u128 = 1_000_000_000_000_000_000;

/// `floor(a·b / c)` and the remainder, exactly, with a 256-bit intermediate when `a·b`
/// overflows 128 bits. `None` when `c == 0` or the quotient does not fit in `u128`.
///
/// # Complexity
/// O(1) when `a·b` fits 128 bits; otherwise O(256) bit steps.
pub(crate) fn mul_div_rem(a: u128, b: u128, c: u128) -> Option<(u128, u128)> {
    if c == 0 {
        return None;
    }
    if let Some(p) = a.checked_mul(b) {
        if let (Ok(p), Ok(c)) = (u64::try_from(p), u64::try_from(c)) {
            return Some((u128::from(p / c), u128::from(p % c)));
        }
        return Some((p / c, p % c));
    }
    let (hi, lo) = wide_mul(a, b);
    if hi >= c {
        return None; // quotient would not fit
    }
    // Long division of (hi, lo) by c, one bit at a time; hi < c is the running remainder.
    let mut rem = hi;
    let mut quot: u128 = 0;
    for i in (0..128).rev() {
        let bit = (lo >> i) & 1;
        let overflow = rem >> 127 == 1;
        rem = (rem << 1) | bit;
        quot <<= 1;
        if overflow || rem >= c {
            rem = rem.wrapping_sub(c);
            quot |= 1;
        }
    }
    Some((quot, rem))
}

/// Compares `a·b` with `c·d` exactly (256-bit products).
pub(crate) fn cmp_products(a: u128, b: u128, c: u128, d: u128) -> std::cmp::Ordering {
    wide_mul(a, b).cmp(&wide_mul(c, d))
}

/// The full 256-bit product `a·b` as `(high, low)` halves.
pub(crate) fn wide_mul(a: u128, b: u128) -> (u128, u128) {
    const MASK: u128 = u64::MAX as u128;
    let (a_hi, a_lo) = (a >> 64, a & MASK);
    let (b_hi, b_lo) = (b >> 64, b & MASK);
    let ll = a_lo * b_lo;
    let lh = a_lo * b_hi;
    let hl = a_hi * b_lo;
    let hh = a_hi * b_hi;
    let mid = (ll >> 64) + (lh & MASK) + (hl & MASK);
    let lo = (ll & MASK) | (mid << 64);
    let hi = hh + (lh >> 64) + (hl >> 64) + (mid >> 64);
    (hi, lo)
}

/// `v mod g` for a 64-bit `g`, with 64-bit operations only.
pub(crate) fn mod_small(v: u128, g: u64) -> u64 {
    let (hi, lo) = ((v >> 64) as u64, v as u64);
    if hi == 0 {
        return lo % g;
    }
    let g128 = u128::from(g);
    // 2^64 mod g, then (hi·2^64 + lo) mod g.
    let two64 = ((u128::from(u64::MAX) % g128) + 1) % g128;
    ((u128::from(hi % g) * two64 + u128::from(lo % g)) % g128) as u64
}

/// Greatest common divisor.
pub fn gcd(mut a: u128, mut b: u128) -> u128 {
    if let (Ok(x), Ok(y)) = (u64::try_from(a), u64::try_from(b)) {
        let (mut x, mut y) = (x, y);
        while y != 0 {
            let t = x % y;
            x = y;
            y = t;
        }
        return u128::from(x);
    }
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a
}

/// A quantity as nano-units scaled by `10^extra` (e.g. `extra = 3` turns cores into
/// milli-cores), rounded up away from zero below nano precision. `None` on overflow.
pub fn from_quantity(q: &Quantity, extra: i32) -> Option<i128> {
    let (m, e) = q.as_decimal();
    let exp = e.checked_add(9)?.checked_add(extra)?;
    if exp >= 0 {
        m.checked_mul(10_i128.checked_pow(u32::try_from(exp).ok()?)?)
    } else {
        let d = 10_i128.checked_pow(u32::try_from(-exp).ok()?)?;
        let q = m / d;
        Some(if m % d != 0 { q + m.signum() } else { q })
    }
}

/// Prints nano-units as a plain decimal number of units (`32550000000` → `"32.55"`).
pub fn format_decimal(v: i128) -> String {
    let neg = v < 0;
    let a = v.unsigned_abs();
    let int = a / SCALE as u128;
    let frac = a % SCALE as u128;
    let mut s = String::new();
    if neg {
        s.push('-');
    }
    s.push_str(&int.to_string());
    if frac != 0 {
        let f = format!("{frac:09}");
        s.push('.');
        s.push_str(f.trim_end_matches('0'));
    }
    s
}

/// Nano-units as an exact [`Quantity`] of units, if representable.
pub fn to_quantity(v: i128) -> Option<Quantity> {
    Quantity::from_decimal(v, -9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_path_matches_narrow() {
        let a = u128::MAX / 3;
        let b = 7u128;
        assert_eq!(mul_div_rem(a, b, 7), Some((a, 0)));
        let (q, r) = mul_div_rem(1 << 100, 1 << 100, 1 << 90).unwrap();
        assert_eq!((q, r), (1 << 110, 0));
        let (q, r) = mul_div_rem(u128::MAX, 10, 100).unwrap();
        assert_eq!(q, u128::MAX / 10);
        assert_eq!(r, (u128::MAX % 10) * 10);
        assert_eq!(mul_div_rem(u128::MAX, u128::MAX, 2), None);
        assert_eq!(mul_div_rem(1, 1, 0), None);
        for v in [0u128, 7, u128::MAX, (1 << 100) + 12345, 10u128.pow(30)] {
            for g in [1u64, 3, 1_000_000_000, u64::MAX] {
                assert_eq!(
                    u128::from(mod_small(v, g)),
                    v % u128::from(g),
                    "{v} mod {g}"
                );
            }
        }
        assert_eq!(gcd(12, 18), 6);
        assert_eq!(gcd(1 << 100, 1 << 90), 1 << 90);
    }

    #[test]
    fn decimals() {
        assert_eq!(format_decimal(32_550_000_000), "32.55");
        assert_eq!(format_decimal(2 * SCALE), "2");
        assert_eq!(format_decimal(-SCALE), "-1");
        assert_eq!(format_decimal(500_000_000), "0.5");
        let q: Quantity = "1.5".parse().unwrap();
        assert_eq!(from_quantity(&q, 0), Some(1_500_000_000));
        assert_eq!(from_quantity(&q, 3), Some(1_500 * SCALE));
    }
}
