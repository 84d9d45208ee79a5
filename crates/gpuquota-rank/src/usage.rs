//! Time-based fairshare (§4): historical usage, decay and window, turned into the normalized
//! usage `U` of every queue that the over-quota division reads.
//!
//! # Input format (YAML or JSON)
//!
//! ```yaml
//! kValue: 1            # optional; upstream's default 1.0, values <= 0 count as 0
//! windowSize: 168h     # optional Go duration; default one week (sliding window)
//! halfLifePeriod: 24h  # optional; default off (every sample weighs 1)
//! capacity:            # cluster capacity samples (what usage is normalized by)
//!   - {time: "2025-04-01T00:00:00Z", gpu: 16, cpu: 64, memory: 512}
//! allocations:         # per-queue allocation samples (KAI's kai_queue_allocated_* metrics)
//!   - {time: "2025-04-01T00:00:00Z", queue: team-a, gpu: 8}
//! queues:              # or: normalized usage given directly, in [0, 1]
//!   team-b: {gpu: 0.25}
//! ```
//!
//! Units are free as long as `capacity` and `allocations` use the same ones per resource
//! (usage is a ratio). `U = Σ alloc(t)·w(t) / Σ capacity(t)·w(t)` over the samples in
//! `(now − windowSize, now]` with `w(t) = 0.5^((now − t)/halfLife)`, clamped to `[0, 1]`;
//! the queue-level values of `queues:` win over computed ones. Usage feeds only the over-quota
//! phase: `sw = max(0, nW + k·(nW − U))`.

use std::collections::BTreeMap;

use gpuquota_model::Timestamp;
use gpuquota_model::kai::parse_go_duration;
use serde::Deserialize;

use crate::fixed::SCALE;

/// One capacity or allocation sample.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sample {
    /// When.
    pub time: Timestamp,
    /// The queue (allocation samples only).
    #[serde(default)]
    pub queue: Option<String>,
    /// GPUs.
    #[serde(default)]
    pub gpu: f64,
    /// CPU.
    #[serde(default)]
    pub cpu: f64,
    /// Memory.
    #[serde(default)]
    pub memory: f64,
}

/// Normalized usage given directly.
#[derive(Debug, Clone, Copy, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirectUsage {
    /// GPU usage in `[0, 1]`.
    #[serde(default)]
    pub gpu: Option<f64>,
    /// CPU usage in `[0, 1]`.
    #[serde(default)]
    pub cpu: Option<f64>,
    /// Memory usage in `[0, 1]`.
    #[serde(default)]
    pub memory: Option<f64>,
}

/// The usage file.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UsageInput {
    /// `kValue`.
    #[serde(default)]
    pub k_value: Option<f64>,
    /// `windowSize` (Go duration).
    #[serde(default)]
    pub window_size: Option<String>,
    /// `halfLifePeriod` (Go duration).
    #[serde(default)]
    pub half_life_period: Option<String>,
    /// Cluster capacity samples.
    #[serde(default)]
    pub capacity: Vec<Sample>,
    /// Queue allocation samples.
    #[serde(default)]
    pub allocations: Vec<Sample>,
    /// Direct normalized usage per queue.
    #[serde(default)]
    pub queues: BTreeMap<String, DirectUsage>,
}

/// Why a usage file was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("usage: {field}: {message}")]
pub struct UsageError {
    /// The field.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

/// One week, upstream's default window.
pub const DEFAULT_WINDOW_NANOS: i128 = 7 * 24 * 3_600_000_000_000;

impl UsageInput {
    /// Parses the usage file (YAML or JSON).
    ///
    /// # Errors
    /// [`UsageError`] with the parser's message.
    pub fn parse(text: &str) -> Result<UsageInput, UsageError> {
        serde_saphyr::from_str(text).map_err(|e| UsageError {
            field: "<file>".into(),
            message: e.to_string(),
        })
    }

    /// `kValue` in nano-units, if given.
    pub fn k_value_nanos(&self) -> Option<i128> {
        self.k_value
            .map(|k| (k.max(0.0) * SCALE as f64).round() as i128)
    }

    /// Normalized usage per queue name and resource (nano-units, `[0, 10⁹]`) at `now`.
    ///
    /// # Errors
    /// [`UsageError`] for a malformed duration or a value outside `[0, 1]`.
    ///
    /// # Complexity
    /// O(S log Q) for S samples and Q queues.
    pub fn normalized(&self, now: Timestamp) -> Result<BTreeMap<String, [i128; 3]>, UsageError> {
        let dur = |f: &str, s: &Option<String>| -> Result<Option<i128>, UsageError> {
            match s {
                None => Ok(None),
                Some(s) => parse_go_duration(s).map(Some).ok_or_else(|| UsageError {
                    field: f.into(),
                    message: format!("{s:?} is not a Go duration"),
                }),
            }
        };
        let window = dur("windowSize", &self.window_size)?.unwrap_or(DEFAULT_WINDOW_NANOS);
        let half = dur("halfLifePeriod", &self.half_life_period)?.filter(|h| *h > 0);
        let weight = |t: Timestamp| -> Option<f64> {
            let age = now.unix_nanos() - t.unix_nanos();
            if age < 0 || age >= window {
                return None;
            }
            Some(match half {
                None => 1.0,
                Some(h) => 0.5f64.powf(age as f64 / h as f64),
            })
        };
        let mut cap = [0.0f64; 3];
        for s in &self.capacity {
            if let Some(w) = weight(s.time) {
                cap[0] += s.gpu * w;
                cap[1] += s.cpu * w;
                cap[2] += s.memory * w;
            }
        }
        let mut used: BTreeMap<String, [f64; 3]> = BTreeMap::new();
        for s in &self.allocations {
            let Some(q) = &s.queue else {
                return Err(UsageError {
                    field: "allocations[].queue".into(),
                    message: "missing".into(),
                });
            };
            if let Some(w) = weight(s.time) {
                let e = used.entry(q.clone()).or_default();
                e[0] += s.gpu * w;
                e[1] += s.cpu * w;
                e[2] += s.memory * w;
            }
        }
        let to_nano = |x: f64| -> i128 { (x.clamp(0.0, 1.0) * SCALE as f64).round() as i128 };
        let mut out: BTreeMap<String, [i128; 3]> = BTreeMap::new();
        for (q, u) in used {
            let mut v = [0i128; 3];
            for r in 0..3 {
                if cap[r] > 0.0 {
                    v[r] = to_nano(u[r] / cap[r]);
                }
            }
            out.insert(q, v);
        }
        for (q, d) in &self.queues {
            let e = out.entry(q.clone()).or_default();
            for (r, x) in [d.gpu, d.cpu, d.memory].into_iter().enumerate() {
                if let Some(x) = x {
                    if !(0.0..=1.0).contains(&x) {
                        return Err(UsageError {
                            field: format!("queues.{q}"),
                            message: format!("usage {x} outside [0, 1]"),
                        });
                    }
                    e[r] = to_nano(x);
                }
            }
        }
        Ok(out)
    }
}

impl UsageInput {
    /// Sets the normalized usage of every queue of `h` at `now`. A queue without an entry of
    /// its own gets the sum of its children's (usage is a share of the same capacity, so it
    /// adds up the tree, as KAI's per-queue allocation metrics do). Returns the queue names of
    /// the file that are not in the tree.
    ///
    /// # Errors
    /// [`UsageError`] as [`UsageInput::normalized`].
    ///
    /// # Complexity
    /// O(S log Q + Q · d).
    pub fn apply(
        &self,
        h: &mut crate::division::Hierarchy,
        now: Timestamp,
    ) -> Result<Vec<String>, UsageError> {
        let map = self.normalized(now)?;
        let n = h.queues().len();
        let mut unknown = Vec::new();
        let mut own: Vec<Option<[i128; 3]>> = vec![None; n];
        for (q, u) in map {
            match h.find(&q) {
                Some(i) => own[i] = Some(u),
                None => unknown.push(q),
            }
        }
        // Children before parents: sum up where a queue has no entry of its own.
        let mut total: Vec<[i128; 3]> = own.iter().map(|o| o.unwrap_or_default()).collect();
        let mut depth: Vec<(usize, usize)> = (0..n).map(|q| (h.path(q).len(), q)).collect();
        depth.sort_by(|a, b| b.cmp(a));
        for &(_, q) in &depth {
            if own[q].is_none() {
                let mut sum = [0i128; 3];
                for &c in h.children(q) {
                    for (r, v) in sum.iter_mut().enumerate() {
                        *v += total[c][r];
                    }
                }
                total[q] = sum;
            }
        }
        for (q, u) in total.into_iter().enumerate() {
            h.set_usage(q, u).map_err(|e| UsageError {
                field: format!("queues.{}", h.queues()[q].name),
                message: e.to_string(),
            })?;
        }
        Ok(unknown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decayed_window_usage() {
        let now = Timestamp::parse("2025-04-08T00:00:00Z").unwrap();
        let t = |s: &str| Timestamp::parse(s).unwrap();
        let input = UsageInput {
            half_life_period: Some("24h".into()),
            capacity: vec![
                Sample {
                    time: t("2025-04-07T00:00:00Z"),
                    queue: None,
                    gpu: 10.0,
                    cpu: 0.0,
                    memory: 0.0,
                },
                Sample {
                    time: t("2025-04-08T00:00:00Z"),
                    queue: None,
                    gpu: 10.0,
                    cpu: 0.0,
                    memory: 0.0,
                },
                // Outside the one-week window.
                Sample {
                    time: t("2025-03-01T00:00:00Z"),
                    queue: None,
                    gpu: 1000.0,
                    cpu: 0.0,
                    memory: 0.0,
                },
            ],
            allocations: vec![Sample {
                time: t("2025-04-07T00:00:00Z"),
                queue: Some("a".into()),
                gpu: 10.0,
                cpu: 0.0,
                memory: 0.0,
            }],
            ..UsageInput::default()
        };
        // (10 · 0.5) / (10 · 0.5 + 10) = 1/3.
        let u = input.normalized(now).unwrap();
        assert_eq!(u["a"][0], 333_333_333);
    }
}
