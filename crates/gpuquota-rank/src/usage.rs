//! Time-based fairshare (kai-scheduler/KAI-Scheduler: `pkg/scheduler/cache/usagedb`): historical
//! usage, decay and window, turned into the normalized usage `U` of every queue that the over-quota
//! division reads.
//!
//! # Input format (YAML or JSON)
//!
//! ```yaml
//! kValue: 1            # optional; upstream's default 1.0, values <= 0 count as 0
//! windowType: sliding  # optional: sliding (default), tumbling or cron
//! windowSize: 168h     # optional Go duration; default one week (sliding and tumbling)
//! tumblingWindowStartTime: "2025-04-01T00:00:00Z"  # required for tumbling
//! cronString: "0 0 * * MON"                        # required for cron
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
//! (usage is a ratio). `U = Σ alloc(t)·w(t) / Σ capacity(t)·w(t)` over the samples in the
//! window with `w(t) = 0.5^((now − t)/halfLife)`, clamped to `[0, 1]`; the queue-level values
//! of `queues:` win over computed ones. Usage feeds only the over-quota phase:
//! `sw = max(0, nW + k·(nW − U))`.
//!
//! # Windows
//!
//! The field names, defaults and window rules are those of KAI's usage database
//! (`kai-scheduler/KAI-Scheduler: pkg/scheduler/cache/usagedb/api/defaults.go` and
//! `pkg/scheduler/cache/usagedb/prometheus/prometheus.go`), with the samples of this file in
//! place of Prometheus:
//!
//! * `sliding` (default): the samples in `(now − windowSize, now]`.
//! * `tumbling`: windows of `windowSize` laid end to end from `tumblingWindowStartTime`; the
//!   samples from the latest window start strictly before `now` up to `now` (both ends
//!   included, as a Prometheus range query is). A start time after `now` gives an empty
//!   window (KAI: "the tumbling window in this case will have size 0"), so no usage.
//! * `cron`: like tumbling, but the windows start whenever `cronString` fires (in UTC; the
//!   expression forms are those of [`crate::cron`]); `windowSize` is not used. A schedule
//!   that never fired before `now` gives an empty window (upstream then starts the window
//!   two schedule intervals back; gpuquota reads no usage rather than guess).
//!
//! The half-life decay is measured from `now` in every window type, as KAI's decay query is.
//! A tumbling window without `tumblingWindowStartTime`, a cron window without a valid
//! `cronString`, a non-positive `windowSize` or an unknown `windowType` is an error (KAI's
//! usage client refuses them too).

use std::collections::BTreeMap;

use gpuquota_model::Timestamp;
use gpuquota_model::kai::parse_go_duration;

use crate::division::Resource;
use crate::fixed::SCALE;
use crate::ids::{PerQueue, PerResource, QueueId};

/// One capacity or allocation sample.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Sample {
    /// When.
    pub time: Timestamp,
    /// The queue (allocation samples only).
    #[cfg_attr(feature = "serde", serde(default))]
    pub queue: Option<String>,
    /// GPUs.
    #[cfg_attr(feature = "serde", serde(default))]
    pub gpu: f64,
    /// CPU.
    #[cfg_attr(feature = "serde", serde(default))]
    pub cpu: f64,
    /// Memory.
    #[cfg_attr(feature = "serde", serde(default))]
    pub memory: f64,
}

/// Normalized usage given directly.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct DirectUsage {
    /// GPU usage in `[0, 1]`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub gpu: Option<f64>,
    /// CPU usage in `[0, 1]`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub cpu: Option<f64>,
    /// Memory usage in `[0, 1]`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub memory: Option<f64>,
}

/// The usage file.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(rename_all = "camelCase", deny_unknown_fields)
)]
pub struct UsageInput {
    /// `kValue`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub k_value: Option<f64>,
    /// `windowSize` (Go duration).
    #[cfg_attr(feature = "serde", serde(default))]
    pub window_size: Option<String>,
    /// `halfLifePeriod` (Go duration).
    #[cfg_attr(feature = "serde", serde(default))]
    pub half_life_period: Option<String>,
    /// `windowType`: `sliding` (default), `tumbling` or `cron`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub window_type: Option<String>,
    /// `tumblingWindowStartTime`: where the first tumbling window starts.
    #[cfg_attr(feature = "serde", serde(default))]
    pub tumbling_window_start_time: Option<Timestamp>,
    /// `cronString`: when cron windows start.
    #[cfg_attr(feature = "serde", serde(default))]
    pub cron_string: Option<String>,
    /// Cluster capacity samples.
    #[cfg_attr(feature = "serde", serde(default))]
    pub capacity: Vec<Sample>,
    /// Queue allocation samples.
    #[cfg_attr(feature = "serde", serde(default))]
    pub allocations: Vec<Sample>,
    /// Direct normalized usage per queue.
    #[cfg_attr(feature = "serde", serde(default))]
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

/// Which samples count at a given time: KAI's usage window types.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UsageWindow {
    /// `(now − size, now]`.
    Sliding {
        /// Window size (nanoseconds).
        size: i128,
    },
    /// Windows of `size` end to end from `start`.
    Tumbling {
        /// The first window's start.
        start: Timestamp,
        /// Window size (nanoseconds, positive).
        size: i128,
    },
    /// Windows starting whenever the schedule fires.
    Cron(Box<crate::cron::CronSchedule>),
}

impl UsageWindow {
    /// The time the window holding `now` starts (KAI's latest usage reset), `None` for a
    /// sliding window. A tumbling window starting after `now`, or a cron schedule that never
    /// fired before `now`, starts at `now` (an empty window).
    ///
    /// # Complexity
    /// O(1) for sliding and tumbling windows; see
    /// [`crate::cron::CronSchedule::latest_before`] for cron.
    pub fn reset_time(&self, now: Timestamp) -> Option<Timestamp> {
        match self {
            UsageWindow::Sliding { .. } => None,
            UsageWindow::Tumbling { start, size } => {
                let elapsed = now.unix_nanos() - start.unix_nanos();
                if elapsed <= 0 {
                    return Some(now);
                }
                // The latest `start + k·size` strictly before `now` (k ≥ 0).
                let k = (elapsed - 1) / size;
                let nanos = start.unix_nanos() + k * size;
                Some(from_nanos(nanos).unwrap_or(now))
            }
            UsageWindow::Cron(c) => Some(c.latest_before(now).unwrap_or(now)),
        }
    }

    /// True when a sample taken at `t` counts at `now`.
    pub fn contains(&self, t: Timestamp, now: Timestamp, reset: Option<Timestamp>) -> bool {
        let age = now.unix_nanos() - t.unix_nanos();
        match (self, reset) {
            (UsageWindow::Sliding { size }, _) => (0..*size).contains(&age),
            (_, Some(r)) => age >= 0 && t >= r,
            (_, None) => false,
        }
    }
}

fn from_nanos(n: i128) -> Option<Timestamp> {
    let secs = i64::try_from(n.div_euclid(1_000_000_000)).ok()?;
    let nanos = u32::try_from(n.rem_euclid(1_000_000_000)).ok()?;
    Timestamp::from_unix(secs, nanos)
}

/// One week, upstream's default window.
pub const DEFAULT_WINDOW_NANOS: i128 = 7 * 24 * 3_600_000_000_000;

impl UsageInput {
    /// Parses the usage file (YAML or JSON).
    ///
    /// # Errors
    /// [`UsageError`] with the parser's message.
    #[cfg(feature = "yaml")]
    pub fn parse(text: &str) -> Result<UsageInput, UsageError> {
        serde_saphyr::from_str(text).map_err(|e| UsageError {
            field: "<file>".into(),
            message: gpuquota_model::import::yaml_error(&e).1,
        })
    }

    /// `kValue` in nano-units, if given.
    pub fn k_value_nanos(&self) -> Option<i128> {
        self.k_value
            .map(|k| (k.max(0.0) * SCALE as f64).round() as i128)
    }

    /// The usage window: `windowType` with its `windowSize`, `tumblingWindowStartTime` or
    /// `cronString`.
    ///
    /// # Errors
    /// [`UsageError`] naming the field: an unknown window type, a malformed or non-positive
    /// `windowSize`, a tumbling window without start time, a cron window without a valid
    /// `cronString`.
    pub fn window(&self) -> Result<UsageWindow, UsageError> {
        let err = |field: &str, message: String| UsageError {
            field: field.into(),
            message,
        };
        let size = match &self.window_size {
            None => DEFAULT_WINDOW_NANOS,
            Some(s) => parse_go_duration(s)
                .ok_or_else(|| err("windowSize", format!("{s:?} is not a Go duration")))?,
        };
        let kind = self.window_type.as_deref().unwrap_or("sliding");
        if kind != "cron" && size <= 0 {
            return Err(err("windowSize", "must be positive".into()));
        }
        match kind {
            "sliding" => Ok(UsageWindow::Sliding { size }),
            "tumbling" => {
                let start = self.tumbling_window_start_time.ok_or_else(|| {
                    err(
                        "tumblingWindowStartTime",
                        "required when windowType is tumbling".into(),
                    )
                })?;
                Ok(UsageWindow::Tumbling { start, size })
            }
            "cron" => {
                let c = self
                    .cron_string
                    .as_deref()
                    .ok_or_else(|| err("cronString", "required when windowType is cron".into()))?;
                crate::cron::CronSchedule::parse(c)
                    .map(|c| UsageWindow::Cron(Box::new(c)))
                    .map_err(|m| err("cronString", m))
            }
            other => Err(err(
                "windowType",
                format!("{other:?}: expected sliding, tumbling or cron"),
            )),
        }
    }

    /// Normalized usage per queue name and resource (nano-units, `[0, 10⁹]`) at `now`.
    ///
    /// # Errors
    /// [`UsageError`] for a malformed duration or a value outside `[0, 1]`.
    ///
    /// # Complexity
    /// O(S log Q) for S samples and Q queues.
    pub fn normalized(
        &self,
        now: Timestamp,
    ) -> Result<BTreeMap<String, PerResource<i128>>, UsageError> {
        let dur = |f: &str, s: &Option<String>| -> Result<Option<i128>, UsageError> {
            match s {
                None => Ok(None),
                Some(s) => parse_go_duration(s).map(Some).ok_or_else(|| UsageError {
                    field: f.into(),
                    message: format!("{s:?} is not a Go duration"),
                }),
            }
        };
        let window = self.window()?;
        let reset = window.reset_time(now);
        let half = dur("halfLifePeriod", &self.half_life_period)?.filter(|h| *h > 0);
        let weight = |t: Timestamp| -> Option<f64> {
            let age = now.unix_nanos() - t.unix_nanos();
            if !window.contains(t, now, reset) {
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
        let mut out: BTreeMap<String, PerResource<i128>> = BTreeMap::new();
        for (q, u) in used {
            let mut v = PerResource::ZERO;
            for r in Resource::ALL {
                let i = r.index();
                if cap[i] > 0.0 {
                    v[r] = to_nano(u[i] / cap[i]);
                }
            }
            out.insert(q, v);
        }
        for (q, d) in &self.queues {
            let e = out.entry(q.clone()).or_default();
            for (r, x) in Resource::ALL.into_iter().zip([d.gpu, d.cpu, d.memory]) {
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
        let mut own: PerQueue<Option<PerResource<i128>>> = PerQueue::from_vec(vec![None; n]);
        for (q, u) in map {
            match h.find(&q) {
                Some(i) => own[i] = Some(u),
                None => unknown.push(q),
            }
        }
        // Children before parents: sum up where a queue has no entry of its own.
        let mut total: PerQueue<PerResource<i128>> =
            own.iter().map(|o| o.unwrap_or_default()).collect();
        let mut depth: Vec<(usize, QueueId)> = h.ids().map(|q| (h.path(q).len(), q)).collect();
        depth.sort_by(|a, b| b.cmp(a));
        for &(_, q) in &depth {
            if own[q].is_none() {
                let mut sum = PerResource::ZERO;
                for &c in h.children(q) {
                    // Each child's usage is at most 10⁹ per resource and the tree is
                    // bounded, so the sum saturating is never reached in practice.
                    sum = sum.saturating_add(&total[c]);
                }
                total[q] = sum;
            }
        }
        for (q, &u) in total.iter_enumerated() {
            h.set_usage(q, u).map_err(|e| UsageError {
                field: format!("queues.{}", h.queue(q).name),
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
        assert_eq!(u["a"][Resource::Gpu], 333_333_333);
    }

    fn gpu_sample(time: &str, queue: Option<&str>, gpu: f64) -> Sample {
        Sample {
            time: Timestamp::parse(time).unwrap(),
            queue: queue.map(Into::into),
            gpu,
            cpu: 0.0,
            memory: 0.0,
        }
    }

    /// Capacity 10 every 6 h from 2025-04-01; queue a uses 10 at 04-02T18:00 and 5 at
    /// 04-03T06:00, so a window from 04-03T00:00 sees 5 / (10 · 3) (three capacity samples:
    /// 00:00, 06:00, 12:00).
    fn six_hourly(window: &str) -> UsageInput {
        let mut capacity = Vec::new();
        for d in 1..=3 {
            for h in [0, 6, 12, 18] {
                capacity.push(gpu_sample(
                    &format!("2025-04-0{d}T{h:02}:00:00Z"),
                    None,
                    10.0,
                ));
            }
        }
        let mut u: UsageInput = serde_saphyr::from_str(window).unwrap();
        u.capacity = capacity;
        u.allocations = vec![
            gpu_sample("2025-04-02T18:00:00Z", Some("a"), 10.0),
            gpu_sample("2025-04-03T06:00:00Z", Some("a"), 5.0),
        ];
        u
    }

    fn usage_a(u: &UsageInput, now: &str) -> i128 {
        u.normalized(Timestamp::parse(now).unwrap())
            .unwrap()
            .get("a")
            .map_or(0, |v| v[Resource::Gpu])
    }

    #[test]
    fn tumbling_window_starts_at_the_latest_reset() {
        let u = six_hourly(
            "windowType: tumbling\nwindowSize: 24h\ntumblingWindowStartTime: \"2025-04-01T00:00:00Z\"\n",
        );
        let w = u.window().unwrap();
        let t = |s: &str| Timestamp::parse(s).unwrap();
        assert_eq!(
            w.reset_time(t("2025-04-03T12:00:00Z")),
            Some(t("2025-04-03T00:00:00Z"))
        );
        // Exactly on a boundary the window that just ended is still the current one.
        assert_eq!(
            w.reset_time(t("2025-04-03T00:00:00Z")),
            Some(t("2025-04-02T00:00:00Z"))
        );
        assert_eq!(
            w.reset_time(t("2025-04-01T00:00:00Z")),
            Some(t("2025-04-01T00:00:00Z"))
        );
        // 04-03T00:00 ..= 12:00: capacity 3 × 10, a used 5.
        assert_eq!(usage_a(&u, "2025-04-03T12:00:00Z"), 166_666_667);
        // On the boundary 04-03T00:00: window 04-02T00:00 ..= 04-03T00:00, five capacity
        // samples (50), a used 10.
        assert_eq!(usage_a(&u, "2025-04-03T00:00:00Z"), 200_000_000);
        // A sliding day at 12:00 reaches back to 04-02T12:00 (exclusive): capacity 18:00,
        // 00:00, 06:00, 12:00 = 40, a used 15.
        let sliding = six_hourly("windowSize: 24h\n");
        assert_eq!(usage_a(&sliding, "2025-04-03T12:00:00Z"), 375_000_000);
    }

    #[test]
    fn tumbling_window_starting_in_the_future_is_empty() {
        let u = six_hourly(
            "windowType: tumbling\nwindowSize: 24h\ntumblingWindowStartTime: \"2026-01-01T00:00:00Z\"\n",
        );
        assert_eq!(usage_a(&u, "2025-04-03T12:00:00Z"), 0);
    }

    #[test]
    fn cron_window_starts_when_the_schedule_last_fired() {
        // Daily at 03:00: at 04-03T12:00 the window starts at 04-03T03:00 (capacity 06:00,
        // 12:00 = 20; a used 5).
        let u = six_hourly("windowType: cron\ncronString: \"0 3 * * *\"\nwindowSize: 1h\n");
        assert_eq!(usage_a(&u, "2025-04-03T12:00:00Z"), 250_000_000);
        // With a half-life the decay still runs from now: 5·0.5 / (10·0.5 + 10).
        let mut d = u.clone();
        d.half_life_period = Some("6h".into());
        assert_eq!(usage_a(&d, "2025-04-03T12:00:00Z"), 166_666_667);
    }

    #[test]
    fn bad_windows_are_refused_naming_the_field() {
        for (yaml, field) in [
            ("windowType: hopping\n", "windowType"),
            ("windowType: tumbling\n", "tumblingWindowStartTime"),
            ("windowType: cron\n", "cronString"),
            (
                "windowType: cron\ncronString: \"0 0 L * *\"\n",
                "cronString",
            ),
            ("windowSize: 0s\n", "windowSize"),
            ("windowSize: soon\n", "windowSize"),
        ] {
            let u: UsageInput = serde_saphyr::from_str(yaml).unwrap();
            let e = u.normalized(Timestamp::EPOCH).unwrap_err();
            assert_eq!(e.field, field, "{yaml}");
        }
    }
}
