//! The sweep's command-line arguments (`--set`, `--shard I/N`, `-j N`, `--emit-job N`),
//! parsed with checked arithmetic and refused up front when they exceed a limit: every
//! message names the value and, for a limit, the number it would make and the limit.
//!
//! The limits are fixed numbers, the same on every machine:
//! - [`MAX_RUNS`]: the product of the `--set` value counts (the grid's size), and so the
//!   length of one range `A..B`;
//! - [`MAX_THREADS`]: worker threads (`-j`);
//! - [`MAX_SHARDS`]: the `N` of `--shard I/N` and of `--emit-job N`.

use super::Axis;

/// Most runs a sweep may have: the product of its `--set` value counts. A run is one
/// simulation and one row of the table, so a million rows is already a table no one reads
/// whole; the limit keeps the parameter lists in memory small.
pub const MAX_RUNS: usize = 1_000_000;

/// Most worker threads a sweep may start (`-j`): far above any machine's cores, low enough
/// that every thread's stack fits in memory.
pub const MAX_THREADS: usize = 1024;

/// Most shards (`--shard I/N`, `--emit-job N`): Kubernetes' limit on the completions of an
/// Indexed Job (kubernetes/kubernetes pkg/apis/batch/validation/validation.go).
pub const MAX_SHARDS: usize = 100_000;

/// One comma-separated item of a `--set` value list.
enum Piece<'a> {
    /// A value as written.
    Value(&'a str),
    /// `A..B`, both bounds included (`A ≤ B`).
    Range(i64, i64),
}

/// True for `-?[0-9]+`.
fn integer_like(s: &str) -> bool {
    let d = s.strip_prefix('-').unwrap_or(s);
    !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())
}

/// The path, the pieces and how many values they stand for (saturating at `u128::MAX`).
fn pieces(s: &str) -> Result<(&str, Vec<Piece<'_>>, u128), String> {
    let (path, vals) = s
        .split_once('=')
        .ok_or_else(|| format!("--set {s:?}: expected PATH=v1,v2,…"))?;
    if path.is_empty() || path.split('.').any(str::is_empty) {
        return Err(format!("--set {s:?}: an empty path segment"));
    }
    let mut out = Vec::new();
    let mut count: u128 = 0;
    for v in vals.split(',') {
        if v.is_empty() {
            return Err(format!("--set {s:?}: an empty value"));
        }
        let piece = match v.split_once("..") {
            Some((a, b)) if integer_like(a) && integer_like(b) => {
                let bound = |x: &str| {
                    x.parse::<i64>().map_err(|_| {
                        format!(
                            "--set {path}: range {v}: {x} is out of range (a bound lies in {}..{})",
                            i64::MIN,
                            i64::MAX
                        )
                    })
                };
                let (a, b) = (bound(a)?, bound(b)?);
                if b < a {
                    return Err(format!(
                        "--set {path}: range {v} is empty (its end is below its start)"
                    ));
                }
                // at most 2^64 values: no overflow in i128 or u128
                let n = (i128::from(b) - i128::from(a) + 1).unsigned_abs();
                if n > MAX_RUNS as u128 {
                    return Err(format!(
                        "--set {path}: range {v} has {n} values, more than the {MAX_RUNS} runs a sweep may have"
                    ));
                }
                count = count.saturating_add(n);
                Piece::Range(a, b)
            }
            _ => {
                count = count.saturating_add(1);
                Piece::Value(v)
            }
        };
        out.push(piece);
    }
    Ok((path, out, count))
}

/// The values of `pieces`, ranges expanded (their count was checked).
fn expand(pieces: &[Piece<'_>]) -> Vec<String> {
    let mut values = Vec::new();
    for p in pieces {
        match *p {
            Piece::Value(v) => values.push(v.to_owned()),
            Piece::Range(a, b) => values.extend((a..=b).map(|i| i.to_string())),
        }
    }
    values
}

impl Axis {
    /// Parses `PATH=v1,v2,…` (`A..B`, integers, expands to every integer from A to B).
    ///
    /// ```
    /// let a = gpuquota_sim::sweep::Axis::parse("seed=1..3").unwrap();
    /// assert_eq!(a.values, ["1", "2", "3"]);
    /// ```
    ///
    /// # Errors
    /// No `=`, an empty path segment or value, a range whose end is below its start or whose
    /// bound is not a 64-bit integer, or more than [`MAX_RUNS`] values.
    pub fn parse(s: &str) -> Result<Axis, String> {
        let (path, pieces, count) = pieces(s)?;
        if count > MAX_RUNS as u128 {
            return Err(format!(
                "--set {path}: {count} values, more than the {MAX_RUNS} runs a sweep may have"
            ));
        }
        Ok(Axis {
            path: path.to_owned(),
            values: expand(&pieces),
        })
    }
}

/// Parses every `--set` of a sweep: each as [`Axis::parse`], no path twice, and the grid
/// (the product of the value counts) at most [`MAX_RUNS`] runs, checked before any range
/// is expanded.
///
/// ```
/// use gpuquota_sim::sweep::parse_axes;
/// assert_eq!(parse_axes(&["a=1,2", "b=1..3"]).unwrap().len(), 2);
/// assert!(parse_axes(&["a=1", "a=2"]).unwrap_err().contains("--set a: given twice"));
/// ```
///
/// # Errors
/// The first bad `--set`, a path given twice (naming it), or a grid above the limit (naming
/// its size and the limit).
///
/// # Complexity
/// O(total length of the arguments + values).
pub fn parse_axes<S: AsRef<str>>(sets: &[S]) -> Result<Vec<Axis>, String> {
    let mut parsed = Vec::with_capacity(sets.len());
    let mut seen = std::collections::BTreeSet::new();
    let mut runs: u128 = 1;
    for s in sets {
        let (path, pieces, count) = pieces(s.as_ref())?;
        if !seen.insert(path) {
            return Err(format!(
                "--set {path}: given twice; list its values once (--set {path}=v1,v2,…)"
            ));
        }
        runs = runs.saturating_mul(count);
        parsed.push((path, pieces));
    }
    if runs > MAX_RUNS as u128 {
        let shown = if runs == u128::MAX {
            "more than 2^128".to_owned()
        } else {
            runs.to_string()
        };
        return Err(format!(
            "the {} --set paths make {shown} runs, more than the {MAX_RUNS} runs a sweep may have",
            sets.len()
        ));
    }
    Ok(parsed
        .into_iter()
        .map(|(path, pieces)| Axis {
            path: path.to_owned(),
            values: expand(&pieces),
        })
        .collect())
}

/// A count of `what` from 1 to `max`.
fn count(flag: &str, s: &str, max: usize) -> Result<usize, String> {
    let t = s.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        // all digits: too large for usize is above the limit too
        return match t.parse::<usize>() {
            Ok(0) => Err(format!("{flag} {s}: expected at least 1")),
            Ok(n) if n <= max => Ok(n),
            _ => Err(format!("{flag} {s}: more than the limit of {max}")),
        };
    }
    Err(format!(
        "{flag} {s:?}: expected a whole number from 1 to {max}"
    ))
}

/// Parses `-j N`: worker threads, 1 to [`MAX_THREADS`].
///
/// # Errors
/// Not a whole number, 0, or above the limit (the message names both).
pub fn parse_threads(s: &str) -> Result<usize, String> {
    count("--jobs", s, MAX_THREADS)
}

/// Parses the `N` of `--emit-job N`: shards, 1 to [`MAX_SHARDS`].
///
/// # Errors
/// Not a whole number, 0, or above the limit.
pub fn parse_shard_count(s: &str) -> Result<usize, String> {
    count("--emit-job", s, MAX_SHARDS)
}

/// Parses `--shard I/N`: shard `I` (0-based) of `N`, `0 ≤ I < N ≤` [`MAX_SHARDS`].
///
/// ```
/// assert_eq!(gpuquota_sim::sweep::parse_shard("1/4"), Ok((1, 4)));
/// assert!(gpuquota_sim::sweep::parse_shard("4/4").is_err());
/// ```
///
/// # Errors
/// Not of the form `I/N` with whole numbers, `I ≥ N`, or `N` above the limit.
pub fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("--shard {s:?}: expected I/N with 0 <= I < N");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let digits = |x: &str| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit());
    if !digits(i) || !digits(n) {
        return Err(bad());
    }
    let n = match n.parse::<usize>() {
        Ok(n) if (1..=MAX_SHARDS).contains(&n) => n,
        Ok(0) => return Err(bad()),
        _ => {
            return Err(format!(
                "--shard {s}: {n} shards, more than the limit of {MAX_SHARDS}"
            ));
        }
    };
    match i.parse::<usize>() {
        Ok(i) if i < n => Ok((i, n)),
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_overflowing_range_is_an_error_not_a_panic() {
        // i64::MAX - (-1) overflowed i64 and panicked before
        let e = Axis::parse("seed=-1..9223372036854775807").unwrap_err();
        assert_eq!(
            e,
            "--set seed: range -1..9223372036854775807 has 9223372036854775809 values, more than the 1000000 runs a sweep may have"
        );
        let e = Axis::parse("seed=-9223372036854775808..9223372036854775807").unwrap_err();
        assert!(e.contains("has 18446744073709551616 values"), "{e}");
        let e = Axis::parse("seed=1..9223372036854775808").unwrap_err();
        assert!(e.contains("9223372036854775808 is out of range"), "{e}");
        assert_eq!(
            Axis::parse("seed=9223372036854775806..9223372036854775807")
                .unwrap()
                .values,
            ["9223372036854775806", "9223372036854775807"]
        );
        assert_eq!(Axis::parse("x=-2..0").unwrap().values, ["-2", "-1", "0"]);
        // not integers: a literal value
        assert_eq!(Axis::parse("x=a..b").unwrap().values, ["a..b"]);
    }

    #[test]
    fn the_grid_is_checked_before_ranges_expand() {
        // 1,000 ranges of 1,000 values: 10^3000 runs, refused without expanding any
        let sets: Vec<String> = (0..1000).map(|i| format!("p{i}=1..1000")).collect();
        let e = parse_axes(&sets).unwrap_err();
        assert_eq!(
            e,
            "the 1000 --set paths make more than 2^128 runs, more than the 1000000 runs a sweep may have"
        );
        let e = parse_axes(&["a=1..1000", "b=1..1001"]).unwrap_err();
        assert_eq!(
            e,
            "the 2 --set paths make 1001000 runs, more than the 1000000 runs a sweep may have"
        );
        assert_eq!(parse_axes(&["a=1..1000", "b=1..1000"]).unwrap().len(), 2);
        assert!(Axis::parse("a=1..1000001").is_err());
        assert!(Axis::parse("a=1..1000000").is_ok());
    }

    #[test]
    fn a_repeated_path_is_named() {
        assert_eq!(
            parse_axes(&[
                "engine=kueue",
                "kueue.fairSharing=true",
                "engine=resourcequota"
            ])
            .unwrap_err(),
            "--set engine: given twice; list its values once (--set engine=v1,v2,…)"
        );
    }

    #[test]
    fn counts_are_bounded() {
        assert_eq!(parse_threads("2"), Ok(2));
        assert_eq!(parse_threads("1024"), Ok(1024));
        assert_eq!(
            parse_threads("100000"),
            Err("--jobs 100000: more than the limit of 1024".to_owned())
        );
        assert_eq!(
            parse_threads("99999999999999999999999"),
            Err("--jobs 99999999999999999999999: more than the limit of 1024".to_owned())
        );
        assert_eq!(
            parse_threads("0"),
            Err("--jobs 0: expected at least 1".to_owned())
        );
        assert!(parse_threads("-1").is_err());
        assert_eq!(parse_shard_count("100000"), Ok(100_000));
        assert!(parse_shard_count("100001").is_err());
    }

    #[test]
    fn shards_are_checked() {
        assert_eq!(parse_shard("0/1"), Ok((0, 1)));
        assert_eq!(parse_shard("99999/100000"), Ok((99_999, 100_000)));
        assert_eq!(
            parse_shard("0/100001"),
            Err("--shard 0/100001: 100001 shards, more than the limit of 100000".to_owned())
        );
        assert!(
            parse_shard("0/99999999999999999999999")
                .unwrap_err()
                .contains("more than the limit")
        );
        for bad in [
            "1/1",
            "0/0",
            "x/2",
            "1",
            "-1/2",
            "1/-2",
            "/2",
            "99999999999999999999/2",
        ] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
    }
}
