//! Checked arithmetic on the session's amounts (nano-units, and MIG instance counts).
//!
//! Every sum, difference and product of amounts in the session goes through these helpers:
//! an overflow is recorded in the session's flag (the value then saturates, so the session
//! goes on without wrapping or panicking) and the session returns
//! [`SessionError::Overflow`] instead of a result. No arithmetic on amounts in the session
//! uses `+`, `-` or `*` directly.

use super::*;

/// `a + b`, recording an overflow in `of` (the result then saturates).
#[inline]
pub(super) fn plus(a: i128, b: i128, of: &Cell<bool>) -> i128 {
    a.checked_add(b).unwrap_or_else(|| {
        of.set(true);
        a.saturating_add(b)
    })
}

/// `a - b`, recording an overflow in `of` (the result then saturates).
#[inline]
pub(super) fn minus(a: i128, b: i128, of: &Cell<bool>) -> i128 {
    a.checked_sub(b).unwrap_or_else(|| {
        of.set(true);
        a.saturating_sub(b)
    })
}

/// `a · b`, recording an overflow in `of` (the result then saturates).
#[inline]
pub(super) fn times(a: i128, b: i128, of: &Cell<bool>) -> i128 {
    a.checked_mul(b).unwrap_or_else(|| {
        of.set(true);
        a.saturating_mul(b)
    })
}

/// `a + b` on instance counts, recording an overflow in `of`.
#[inline]
pub(super) fn plus64(a: i64, b: i64, of: &Cell<bool>) -> i64 {
    a.checked_add(b).unwrap_or_else(|| {
        of.set(true);
        a.saturating_add(b)
    })
}

/// `a - b` on instance counts, recording an overflow in `of`.
#[inline]
pub(super) fn minus64(a: i64, b: i64, of: &Cell<bool>) -> i64 {
    a.checked_sub(b).unwrap_or_else(|| {
        of.set(true);
        a.saturating_sub(b)
    })
}

/// `a - b` in every resource, [`SessionError::Overflow`] when it leaves `i128`.
pub(super) fn sub_checked(a: Amt, b: Amt) -> Result<Amt, SessionError> {
    a.checked_sub(&b).ok_or(SessionError::Overflow)
}

/// `*a += b`, recording an overflow in `of` (the amount then saturates).
pub(super) fn inc(a: &mut i128, b: i128, of: &Cell<bool>) {
    match a.checked_add(b) {
        Some(v) => *a = v,
        None => {
            of.set(true);
            *a = a.saturating_add(b);
        }
    }
}

/// `*a -= b`, recording an overflow in `of` (the amount then saturates).
pub(super) fn dec(a: &mut i128, b: i128, of: &Cell<bool>) {
    match a.checked_sub(b) {
        Some(v) => *a = v,
        None => {
            of.set(true);
            *a = a.saturating_sub(b);
        }
    }
}

/// `*a += b` on an instance count, recording an overflow in `of`.
pub(super) fn inc64(a: &mut i64, b: i64, of: &Cell<bool>) {
    match a.checked_add(b) {
        Some(v) => *a = v,
        None => {
            of.set(true);
            *a = a.saturating_add(b);
        }
    }
}

/// `*a -= b` on an instance count, recording an overflow in `of`.
pub(super) fn dec64(a: &mut i64, b: i64, of: &Cell<bool>) {
    match a.checked_sub(b) {
        Some(v) => *a = v,
        None => {
            of.set(true);
            *a = a.saturating_sub(b);
        }
    }
}

/// `*a += b` in every resource, recording an overflow in `of`.
pub(super) fn inc_all(a: &mut Amt, b: &Amt, of: &Cell<bool>) {
    for r in Resource::ALL {
        inc(&mut a[r], b[r], of);
    }
}

/// `*a -= b` in every resource, recording an overflow in `of`.
pub(super) fn dec_all(a: &mut Amt, b: &Amt, of: &Cell<bool>) {
    for r in Resource::ALL {
        dec(&mut a[r], b[r], of);
    }
}
