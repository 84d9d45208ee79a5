//! A small dense simplex for the configuration LP that guides the large-instance heuristic.
//!
//! Floats are used only here, to *guide* the choice of layouts; every reported figure (value,
//! bound) is recomputed in integers. Deterministic: Dantzig's rule with lowest-index ties.

/// Solves `max c·x  s.t.  A x ≤ b, x ≥ 0` with `b ≥ 0` (the origin is feasible).
/// Returns the primal `x` and the row duals `y` (`y ≥ 0`), or `None` when the iteration limit
/// is hit or the LP is unbounded.
///
/// # Complexity
/// O(iterations · m · (n + m)); iterations are bounded by `20 · (m + n)`.
pub(crate) fn maximize(a: &[Vec<f64>], b: &[f64], c: &[f64]) -> Option<(Vec<f64>, Vec<f64>)> {
    const EPS: f64 = 1e-9;
    let m = a.len();
    let n = c.len();
    let width = n + m + 1;
    let mut t = vec![0.0f64; (m + 1) * width];
    for (i, row) in a.iter().enumerate() {
        let r = &mut t[(i + 1) * width..(i + 2) * width];
        r[..n].copy_from_slice(&row[..n]);
        r[n + i] = 1.0;
        r[width - 1] = b[i];
    }
    for j in 0..n {
        t[j] = -c[j];
    }
    let mut basis: Vec<usize> = (n..n + m).collect();
    let limit = 20 * (m + n) + 100;
    let mut done = false;
    for _ in 0..limit {
        // Entering: most negative reduced cost, lowest index on ties.
        let mut enter = None;
        let mut best = -EPS;
        for (j, &v) in t[..n + m].iter().enumerate() {
            if v < best {
                best = v;
                enter = Some(j);
            }
        }
        let Some(j) = enter else {
            done = true;
            break;
        };
        // Leaving: minimum ratio, lowest basis index on ties.
        let mut leave: Option<(usize, f64)> = None;
        for i in 0..m {
            let aij = t[(i + 1) * width + j];
            if aij > EPS {
                let ratio = t[(i + 1) * width + width - 1] / aij;
                leave = match leave {
                    Some((li, lr))
                        if ratio > lr + EPS || (ratio > lr - EPS && basis[i] > basis[li]) =>
                    {
                        Some((li, lr))
                    }
                    _ => Some((i, ratio)),
                };
            }
        }
        let (r, _) = leave?;
        let pr = (r + 1) * width;
        let pivot = t[pr + j];
        for k in 0..width {
            t[pr + k] /= pivot;
        }
        for i in 0..=m {
            if i == r + 1 {
                continue;
            }
            let f = t[i * width + j];
            if f.abs() > 0.0 {
                for k in 0..width {
                    t[i * width + k] -= f * t[pr + k];
                }
            }
        }
        basis[r] = j;
    }
    if !done {
        return None;
    }
    let mut x = vec![0.0; n];
    for (i, &v) in basis.iter().enumerate() {
        if v < n {
            x[v] = t[(i + 1) * width + width - 1];
        }
    }
    let y = (0..m).map(|i| t[n + i].max(0.0)).collect();
    Some((x, y))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_lp() {
        // max 3x + 2y, x + y ≤ 4, x + 3y ≤ 6, x ≤ 3 → x = 3, y = 1, value 11.
        let a = vec![vec![1.0, 1.0], vec![1.0, 3.0], vec![1.0, 0.0]];
        let (x, y) = maximize(&a, &[4.0, 6.0, 3.0], &[3.0, 2.0]).unwrap();
        assert!((x[0] - 3.0).abs() < 1e-9 && (x[1] - 1.0).abs() < 1e-9);
        // Duals: 2, 0, 1 (4·2 + 3·1 = 11).
        assert!((y[0] - 2.0).abs() < 1e-9 && y[1].abs() < 1e-9 && (y[2] - 1.0).abs() < 1e-9);
    }
}
