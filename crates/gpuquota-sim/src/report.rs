//! The report of a simulation and its renderings: JSON (the contract), table, CSV and the
//! summary document of Kueue's perf runner.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use gpuquota_model::text::{Table, Width};
use gpuquota_model::{Amount, ResourceName, Timestamp};
use serde_json::{Map, Value, json};

use crate::engine::{Outcome, RunEnd};
use crate::scenario::at_ms;

/// A simulation's result with the per-class and per-queue statistics derived from its runs.
#[derive(Debug, Clone)]
pub struct Report {
    /// The scenario's name.
    pub name: String,
    /// `spec.start`.
    pub start: Timestamp,
    /// What happened.
    pub outcome: Outcome,
    /// Per class (`""` for workloads without one), in name order.
    pub classes: BTreeMap<String, ClassStats>,
    /// Per queue, in name order.
    pub queues: BTreeMap<String, QueueStats>,
    /// Number of `Preempted` runs.
    pub preemptions: u64,
    /// The last completion, ms.
    pub makespan_ms: i64,
    /// The warnings of the run (also rendered in the JSON's `warnings`).
    pub diagnostics: gpuquota_model::Diagnostics,
    /// Further sections of the JSON, in order, before `warnings` (`budgets`, `chargeback`).
    pub sections: Vec<(String, Value)>,
}

/// Statistics of one workload class.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClassStats {
    /// Workloads.
    pub count: u64,
    /// Workloads that finished.
    pub finished: u64,
    /// `Preempted` runs.
    pub evictions: u64,
    /// Time to first admission of every admitted workload, sorted.
    pub admission_ms: Vec<i64>,
    /// Σ time to first admission over every workload (0 for one never admitted), as
    /// Kueue's recorder sums it.
    pub recorder_admission_total: i64,
    /// Σ time to finish over every workload (0 for one that did not finish), as Kueue's
    /// recorder sums it.
    pub recorder_finish_total: i64,
    /// Time from creation to completion of every finished workload.
    pub finish_ms: Vec<i64>,
}

impl ClassStats {
    /// Mean time to admission over admitted workloads (floor), 0 without any.
    pub fn mean_admission(&self) -> i64 {
        mean(&self.admission_ms)
    }

    /// Nearest-rank percentile `p` (0–100) of the time to admission, 0 without any.
    pub fn percentile_admission(&self, p: u32) -> i64 {
        let n = self.admission_ms.len();
        if n == 0 {
            return 0;
        }
        let rank = (u64::from(p) * n as u64).div_ceil(100).max(1) as usize;
        self.admission_ms[rank.min(n) - 1]
    }

    /// Mean time to finish over finished workloads (floor), 0 without any.
    pub fn mean_finish(&self) -> i64 {
        mean(&self.finish_ms)
    }
}

fn mean(v: &[i64]) -> i64 {
    if v.is_empty() {
        return 0;
    }
    let s: i128 = v.iter().map(|&x| i128::from(x)).sum();
    i64::try_from(s.div_euclid(v.len() as i128)).unwrap_or(i64::MAX)
}

/// Statistics of one queue (ClusterQueue, or namespace under `resourcequota`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueueStats {
    /// Per flavor-resource index: nominal.
    pub nominal: Vec<(u32, i64)>,
    /// Per flavor-resource index: ∫ usage dt (amount × ms).
    pub used: BTreeMap<u32, i128>,
    /// Per flavor-resource index: ∫ max(0, usage − nominal) dt (amount × ms).
    pub borrowed: BTreeMap<u32, i128>,
    /// Per flavor-resource index: the largest usage.
    pub max_usage: BTreeMap<u32, i64>,
    /// The last time its usage changed, ms.
    pub last_change_ms: i64,
}

impl QueueStats {
    /// ∫usage dt × 100 / (nominal × elapsed), averaged over the flavor-resources with a
    /// nominal quota, rounded to 0.1.
    pub fn mean_usage_percent(&self, elapsed_ms: i64) -> f64 {
        let mut sum = 0.0;
        let mut k = 0u32;
        for &(fr, nom) in &self.nominal {
            if nom <= 0 || elapsed_ms <= 0 {
                continue;
            }
            let u = self.used.get(&fr).copied().unwrap_or(0);
            sum += (u as f64) * 100.0 / (nom as f64 * elapsed_ms as f64);
            k += 1;
        }
        if k == 0 {
            return 0.0;
        }
        ((sum / f64::from(k)) * 10.0).round() / 10.0
    }
}

/// Amount × ms in the resource's display unit × ms (CPU in cores, bytes for memory).
fn display_integral(r: &ResourceName, v: i128) -> i128 {
    if r.is_cpu() { v.div_euclid(1000) } else { v }
}

impl Report {
    /// Derives the statistics from an outcome.
    ///
    /// # Complexity
    /// O(R log R) for R runs.
    pub fn new(name: String, start: Timestamp, outcome: Outcome) -> Report {
        let mut classes: BTreeMap<String, ClassStats> = BTreeMap::new();
        let mut preemptions = 0u64;
        let mut makespan = 0i64;
        let mut deltas: BTreeMap<String, Vec<(i64, u32, i64)>> = BTreeMap::new();
        for w in &outcome.workloads {
            let c = classes.entry(w.class.clone()).or_default();
            c.count += 1;
            if let Some(r) = w.runs.first() {
                let d = r.start_ms - w.created_ms;
                c.admission_ms.push(d);
                c.recorder_admission_total += d;
            }
            if let Some(f) = w.finished_ms {
                c.finished += 1;
                c.finish_ms.push(f - w.created_ms);
                c.recorder_finish_total += f - w.created_ms;
                makespan = makespan.max(f);
            }
            for r in &w.runs {
                if matches!(r.end, RunEnd::Preempted { .. }) {
                    c.evictions += 1;
                    preemptions += 1;
                }
                let e = deltas.entry(w.queue.clone()).or_default();
                for &(fr, a) in &r.usage {
                    e.push((r.start_ms, fr, a));
                    e.push((r.end_ms, fr, -a));
                }
            }
        }
        for c in classes.values_mut() {
            c.admission_ms.sort_unstable();
            c.finish_ms.sort_unstable();
        }
        let mut queues = BTreeMap::new();
        for q in &outcome.queues {
            let mut st = QueueStats {
                nominal: q.nominal.clone(),
                ..QueueStats::default()
            };
            let nominal: BTreeMap<u32, i64> = q.nominal.iter().copied().collect();
            if let Some(ds) = deltas.get_mut(&q.name) {
                // releases before acquisitions at one instant
                ds.sort_by_key(|&(t, fr, a)| (t, a > 0, fr, a));
                let mut cur: BTreeMap<u32, i64> = BTreeMap::new();
                let mut last: BTreeMap<u32, i64> = BTreeMap::new();
                for &(t, fr, a) in ds.iter() {
                    let u = cur.entry(fr).or_insert(0);
                    let lt = last.entry(fr).or_insert(t);
                    let dt = i128::from(t - *lt);
                    let nom = nominal.get(&fr).copied().unwrap_or(0);
                    *st.used.entry(fr).or_insert(0) += i128::from(*u) * dt;
                    *st.borrowed.entry(fr).or_insert(0) += i128::from((*u - nom).max(0)) * dt;
                    *lt = t;
                    *u += a;
                    let m = st.max_usage.entry(fr).or_insert(0);
                    *m = (*m).max(*u);
                    if a != 0 {
                        st.last_change_ms = st.last_change_ms.max(t);
                    }
                }
            }
            queues.insert(q.name.clone(), st);
        }
        Report {
            name,
            start,
            outcome,
            classes,
            queues,
            preemptions,
            makespan_ms: makespan,
            diagnostics: gpuquota_model::Diagnostics::default(),
            sections: Vec::new(),
        }
    }

    fn fr_name(&self, fr: u32) -> (&str, &ResourceName) {
        let (f, r) = &self.outcome.frs[fr as usize];
        (f.as_str(), r)
    }

    fn usage_map(&self, usage: &[(u32, i64)]) -> Value {
        let mut m: Map<String, Value> = Map::new();
        for &(fr, a) in usage {
            let (f, r) = self.fr_name(fr);
            let e = m
                .entry(f.to_owned())
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(inner) = e {
                inner.insert(r.as_str().to_owned(), r.format_amount(Amount(a)).into());
            }
        }
        Value::Object(m)
    }

    /// The JSON document (field order as the contract lists it).
    ///
    /// # Complexity
    /// O(runs × flavor-resources).
    pub fn to_json(&self) -> Value {
        let o = &self.outcome;
        let workloads: Vec<Value> = o
            .workloads
            .iter()
            .map(|w| {
                let runs: Vec<Value> = w
                    .runs
                    .iter()
                    .map(|r| {
                        let mut m = Map::new();
                        m.insert("startMs".into(), r.start_ms.into());
                        m.insert("endMs".into(), r.end_ms.into());
                        m.insert("end".into(), r.end.as_str().into());
                        if let RunEnd::Preempted { reason, by } = &r.end {
                            m.insert("reason".into(), reason.clone().into());
                            m.insert("by".into(), by.clone().into());
                        }
                        m.insert("usage".into(), self.usage_map(&r.usage));
                        Value::Object(m)
                    })
                    .collect();
                let mut m = Map::new();
                m.insert("workload".into(), w.key.clone().into());
                m.insert("queue".into(), w.queue.clone().into());
                m.insert("class".into(), w.class.clone().into());
                m.insert("createdMs".into(), w.created_ms.into());
                m.insert("runs".into(), Value::Array(runs));
                m.insert(
                    "finishedMs".into(),
                    w.finished_ms.map_or(Value::Null, Value::from),
                );
                if let Some((reason, message)) = &w.pending {
                    m.insert(
                        "pending".into(),
                        json!({"reason": reason, "message": message}),
                    );
                }
                Value::Object(m)
            })
            .collect();
        let mut classes = Map::new();
        for (name, c) in &self.classes {
            classes.insert(
                name.clone(),
                json!({
                    "count": c.count,
                    "finished": c.finished,
                    "evictions": c.evictions,
                    "meanTimeToAdmissionMs": c.mean_admission(),
                    "p50TimeToAdmissionMs": c.percentile_admission(50),
                    "p95TimeToAdmissionMs": c.percentile_admission(95),
                    "meanTimeToFinishMs": c.mean_finish(),
                }),
            );
        }
        let mut queues = Map::new();
        for (name, q) in &self.queues {
            let nominal = self.usage_map(&q.nominal);
            let mut borrowed: Map<String, Value> = Map::new();
            for &(fr, _) in &q.nominal {
                let (f, r) = self.fr_name(fr);
                let v = display_integral(r, q.borrowed.get(&fr).copied().unwrap_or(0));
                let e = borrowed
                    .entry(f.to_owned())
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(inner) = e {
                    inner.insert(r.as_str().to_owned(), json!(v));
                }
            }
            queues.insert(
                name.clone(),
                json!({
                    "nominal": nominal,
                    "meanUsagePercent": q.mean_usage_percent(o.end_ms),
                    "borrowedMs": Value::Object(borrowed),
                }),
            );
        }
        let mut m = Map::new();
        m.insert("engine".into(), o.engine.as_str().into());
        m.insert("start".into(), self.start.to_string().into());
        m.insert("endMs".into(), o.end_ms.into());
        m.insert("makespanMs".into(), self.makespan_ms.into());
        m.insert("workloads".into(), Value::Array(workloads));
        m.insert("classes".into(), Value::Object(classes));
        m.insert("queues".into(), Value::Object(queues));
        m.insert("preemptions".into(), self.preemptions.into());
        for (k, v) in &self.sections {
            m.insert(k.clone(), v.clone());
        }
        m.insert(
            "warnings".into(),
            Value::Array(o.warnings.iter().map(|w| Value::from(w.clone())).collect()),
        );
        Value::Object(m)
    }

    /// The JSON document as pretty-printed text with a trailing newline.
    pub fn to_json_string(&self) -> String {
        let mut s = serde_json::to_string_pretty(&self.to_json()).unwrap_or_default();
        s.push('\n');
        s
    }

    /// One CSV row per run and flavor-resource: `workload,queue,class,startMs,endMs,end,
    /// flavor,resource,amount` (a run without usage has one row with empty flavor, resource
    /// and amount). Fields are quoted when they hold a comma, quote or newline.
    pub fn to_csv(&self) -> String {
        let mut out =
            String::from("workload,queue,class,startMs,endMs,end,flavor,resource,amount\n");
        for w in &self.outcome.workloads {
            for r in &w.runs {
                let head = format!(
                    "{},{},{},{},{},{}",
                    csv_field(&w.key),
                    csv_field(&w.queue),
                    csv_field(&w.class),
                    r.start_ms,
                    r.end_ms,
                    r.end.as_str()
                );
                if r.usage.is_empty() {
                    let _ = writeln!(out, "{head},,,");
                }
                for &(fr, a) in &r.usage {
                    let (f, res) = self.fr_name(fr);
                    let _ = writeln!(
                        out,
                        "{head},{},{},{}",
                        csv_field(f),
                        csv_field(res.as_str()),
                        res.format_amount(Amount(a))
                    );
                }
            }
        }
        out
    }

    /// The summary document Kueue's perf runner writes (`runner/recorder`: `WriteSummary`),
    /// as YAML with its keys sorted as `sigs.k8s.io/yaml` writes them.
    ///
    /// `clusterQueueClasses` groups the ClusterQueues by their
    /// `kueue.x-k8s.io/performance-scheduler-class` label (`""` without one): `cpuUsed` is
    /// Σ ∫ cpu usage dt in mCPU × ms over the class's queues, `nominalQuota` Σ their cpu
    /// nominal in mCPU (the first flavor of the first resource group, as the recorder reads
    /// it), `cpuAverageUsage` = `cpuUsed` / monitored ms, `firstEventTime` the start and
    /// `lastEventTime` the last usage change. `workloadClasses` has `count`,
    /// `totalEvictions`, `averageTimeToAdmissionMs` and `averageTimeToFinishMs` as the
    /// recorder computes them (sums over every workload divided by `count`).
    pub fn to_kueue_summary(&self, cq_class: &BTreeMap<String, String>) -> String {
        #[derive(Default)]
        struct G {
            used: i128,
            nominal: i64,
            last: i64,
        }
        let mut groups: BTreeMap<String, G> = BTreeMap::new();
        for (name, q) in &self.queues {
            let class = cq_class.get(name).cloned().unwrap_or_default();
            let g = groups.entry(class).or_default();
            let cpu = q
                .nominal
                .iter()
                .find(|(fr, _)| self.fr_name(*fr).1.is_cpu())
                .copied();
            if let Some((fr, nom)) = cpu {
                g.nominal += nom;
                g.used += q.used.get(&fr).copied().unwrap_or(0);
            }
            g.last = g.last.max(q.last_change_ms);
        }
        let mut out = String::from("clusterQueueClasses:\n");
        for (class, g) in &groups {
            let avg = if g.last > 0 {
                g.used / i128::from(g.last)
            } else {
                0
            };
            let _ = writeln!(out, "  {}:", yaml_key(class));
            let _ = writeln!(out, "    cpuAverageUsage: {avg}");
            let _ = writeln!(out, "    cpuUsed: {}", g.used);
            let _ = writeln!(out, "    firstEventTime: \"{}\"", self.start);
            let _ = writeln!(out, "    lastEventTime: \"{}\"", at_ms(self.start, g.last));
            let _ = writeln!(out, "    nominalQuota: {}", g.nominal);
        }
        out.push_str("workloadClasses:\n");
        for (class, c) in &self.classes {
            let n = c.count.max(1) as i64;
            let _ = writeln!(out, "  {}:", yaml_key(class));
            let _ = writeln!(
                out,
                "    averageTimeToAdmissionMs: {}",
                c.recorder_admission_total / n
            );
            let _ = writeln!(
                out,
                "    averageTimeToFinishMs: {}",
                c.recorder_finish_total / n
            );
            let _ = writeln!(out, "    count: {}", c.count);
            let _ = writeln!(out, "    totalEvictions: {}", c.evictions);
        }
        out
    }

    /// [`Report::table`] at full width.
    pub fn to_table(&self) -> String {
        self.table(Width::Full)
    }

    /// The table: per queue and per class, then a plain-language summary, on the
    /// workspace's one table layout ([`gpuquota_model::text`]: nothing is cut,
    /// [`Width::Fit`] wraps).
    ///
    /// # Complexity
    /// O(queues × flavor-resources + classes + runs).
    pub fn table(&self, width: Width) -> String {
        let o = &self.outcome;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "Simulation {} ({}): {} workloads, end {}, makespan {}, {} preemptions, {} cycles",
            self.name,
            o.engine.as_str(),
            o.workloads.len(),
            human_ms(o.end_ms),
            human_ms(self.makespan_ms),
            self.preemptions,
            o.counters.cycles
        );
        let _ = writeln!(out);
        let mut queues = Table::new(["QUEUE", "USAGE%", "NOMINAL", "BORROWED"]).right([1]);
        for (name, q) in &self.queues {
            let nominal: Vec<String> = q
                .nominal
                .iter()
                .map(|&(fr, a)| {
                    let (f, r) = self.fr_name(fr);
                    format!("{}{}={}", flavor_prefix(f), r, r.format_amount(Amount(a)))
                })
                .collect();
            let borrowed: Vec<String> = q
                .nominal
                .iter()
                .filter_map(|&(fr, _)| {
                    let v = q.borrowed.get(&fr).copied().unwrap_or(0);
                    (v > 0).then(|| {
                        let (f, r) = self.fr_name(fr);
                        format!("{}{}: {}", flavor_prefix(f), r, amount_hours(r, v))
                    })
                })
                .collect();
            queues.row([
                name.clone(),
                format!("{:.1}", q.mean_usage_percent(o.end_ms)),
                nominal.join(", "),
                if borrowed.is_empty() {
                    "-".to_owned()
                } else {
                    borrowed.join(", ")
                },
            ]);
        }
        out.push_str(&queues.render(width));
        let _ = writeln!(out);
        let mut classes = Table::new([
            "CLASS",
            "COUNT",
            "FINISHED",
            "EVICTIONS",
            "MEAN-ADMIT",
            "P50-ADMIT",
            "P95-ADMIT",
            "MEAN-FINISH",
        ])
        .right(1..8);
        for (name, c) in &self.classes {
            classes.row([
                if name.is_empty() { "(none)" } else { name }.to_owned(),
                c.count.to_string(),
                c.finished.to_string(),
                c.evictions.to_string(),
                human_ms(c.mean_admission()),
                human_ms(c.percentile_admission(50)),
                human_ms(c.percentile_admission(95)),
                human_ms(c.mean_finish()),
            ]);
        }
        out.push_str(&classes.render(width));
        let _ = writeln!(out);
        for line in self.summary_sentences() {
            let _ = writeln!(out, "{line}");
        }
        out
    }

    /// The plain-language summary, one sentence per line: who borrowed what, who was
    /// preempted by whom and when, who never ran.
    pub fn summary_sentences(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for (name, q) in &self.queues {
            for &(fr, _) in &q.nominal {
                let v = q.borrowed.get(&fr).copied().unwrap_or(0);
                if v > 0 {
                    let (f, r) = self.fr_name(fr);
                    let on = if f.is_empty() {
                        String::new()
                    } else {
                        format!(" of {f}")
                    };
                    lines.push(format!("{name} borrowed {}{on}.", amount_hours(r, v)));
                }
            }
        }
        // preemptions grouped by (victim queue, preemptor queue, hour)
        let queue_of: BTreeMap<&str, &str> = self
            .outcome
            .workloads
            .iter()
            .map(|w| (w.key.as_str(), w.queue.as_str()))
            .collect();
        let mut groups: BTreeMap<(String, String, i64), (u64, i64)> = BTreeMap::new();
        for w in &self.outcome.workloads {
            for r in &w.runs {
                if let RunEnd::Preempted { by, .. } = &r.end {
                    let pq = queue_of.get(by.as_str()).copied().unwrap_or("");
                    let e = groups
                        .entry((w.queue.clone(), pq.to_owned(), r.end_ms / 3_600_000))
                        .or_insert((0, r.end_ms));
                    e.0 += 1;
                    e.1 = e.1.min(r.end_ms);
                }
            }
        }
        for ((victim, by, _), (count, first)) in groups.iter().take(20) {
            let at = clock(self.start, *first);
            let what = if victim == by {
                "by higher-priority work of its own queue".to_owned()
            } else {
                format!("when {by} reclaimed")
            };
            lines.push(format!(
                "{count} of {victim}'s workloads were preempted at {at} {what}."
            ));
        }
        if groups.len() > 20 {
            lines.push(format!(
                "… and {} more preemption groups.",
                groups.len() - 20
            ));
        }
        let never: Vec<&crate::engine::WorkloadOutcome> = self
            .outcome
            .workloads
            .iter()
            .filter(|w| w.runs.is_empty())
            .collect();
        if !never.is_empty() {
            let mut reasons: BTreeMap<&str, u64> = BTreeMap::new();
            for w in &never {
                let r = w.pending.as_ref().map_or("Pending", |p| p.0.as_str());
                *reasons.entry(r).or_default() += 1;
            }
            let parts: Vec<String> = reasons.iter().map(|(r, n)| format!("{n} {r}")).collect();
            lines.push(format!(
                "{} workloads never ran ({}).",
                never.len(),
                parts.join(", ")
            ));
        }
        if lines.is_empty() {
            lines.push("Nobody borrowed, nothing was preempted, every workload ran.".to_owned());
        }
        lines
    }
}

fn flavor_prefix(f: &str) -> String {
    if f.is_empty() {
        String::new()
    } else {
        format!("{f}/")
    }
}

fn yaml_key(s: &str) -> String {
    if s.is_empty() || s.contains([':', '#', '"', '\'']) || s.starts_with(' ') {
        format!("{s:?}")
    } else {
        s.to_owned()
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

/// `amount × ms` as hours of the resource (`64 GPU-hours`, `12.5 CPU-hours`).
fn amount_hours(r: &ResourceName, v: i128) -> String {
    let unit = if r.is_gpu() {
        "GPU"
    } else if r.is_cpu() {
        "CPU"
    } else {
        r.as_str()
    };
    let base = display_integral(r, v) as f64 / 3_600_000.0;
    if r.is_byte_sized() {
        return format!("{:.1} GiB-hours", base / 1_073_741_824.0);
    }
    format!("{base:.1} {unit}-hours")
}

/// `86400000` → `24h`, `66400` → `1m6.4s`.
pub fn human_ms(ms: i64) -> String {
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let h = ms / 3_600_000;
    let m = ms % 3_600_000 / 60_000;
    let s = ms % 60_000;
    let mut out = String::new();
    if h > 0 {
        let _ = write!(out, "{h}h");
    }
    if m > 0 {
        let _ = write!(out, "{m}m");
    }
    if s > 0 {
        if s % 1000 == 0 {
            let _ = write!(out, "{}s", s / 1000);
        } else {
            let _ = write!(
                out,
                "{}.{}s",
                s / 1000,
                format!("{:03}", s % 1000).trim_end_matches('0')
            );
        }
    }
    out
}

/// The wall-clock time of `ms` after `start` as `HH:MM` (with the date when not the start's).
fn clock(start: Timestamp, ms: i64) -> String {
    let t = at_ms(start, ms).to_string();
    let s = start.to_string();
    let (date, time) = t.split_at(10);
    let hm = time.get(1..6).unwrap_or("");
    if s.get(..10) == Some(date) {
        hm.to_owned()
    } else {
        format!("{date} {hm}")
    }
}
