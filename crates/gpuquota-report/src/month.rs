//! The sections of a simulated month (Kueue or ResourceQuota run): summary, bill, budgets,
//! usage over time, time to admission, preemptions and events, the longest waiters, inputs.

use std::collections::BTreeMap;

use gpuquota_metering::report::ReportOut;
use gpuquota_sim::chart::{self, Bars};
use gpuquota_sim::report::{BudgetOut, Chargeback, ClassStats, Report, ScopeOut, human_ms};
use gpuquota_sim::scenario::{Scenario, at_ms};

use crate::page::{Block, Cell, Fact, Row, Section, Table};

/// One day, ms.
pub(crate) const DAY_MS: i64 = 86_400_000;
/// The longest waiters listed.
pub(crate) const WAITERS: usize = 10;

/// The upper edges (ms, inclusive) of the wait buckets of the time-to-admission chart, with
/// their labels; a last bucket takes every longer wait.
pub const WAIT_BUCKETS: [(i64, &str); 7] = [
    (0, "0"),
    (60_000, "≤ 1 min"),
    (600_000, "≤ 10 min"),
    (3_600_000, "≤ 1 h"),
    (6 * 3_600_000, "≤ 6 h"),
    (DAY_MS, "≤ 1 d"),
    (7 * DAY_MS, "≤ 7 d"),
];

/// The label of the last bucket (longer than the last edge).
pub(crate) const WAIT_LONGER: &str = "> 7 d";

/// The count of waits in each bucket of [`WAIT_BUCKETS`], then the longer ones.
pub fn wait_histogram(waits: &[i64]) -> Vec<u64> {
    let mut out = vec![0u64; WAIT_BUCKETS.len() + 1];
    for &w in waits {
        let i = WAIT_BUCKETS
            .iter()
            .position(|(edge, _)| w <= *edge)
            .unwrap_or(WAIT_BUCKETS.len());
        out[i] += 1;
    }
    out
}

/// Each row of a bucket histogram in words, for a chart's text alternative: `class: 3 under
/// 1m, 1 1h–1d` (the empty buckets left out; `empty` when every bucket is).
///
/// # Complexity
/// O(rows × buckets).
pub(crate) fn histogram_words(
    labels: &[String],
    rows: &[(String, Vec<u64>)],
    empty: &str,
) -> Vec<String> {
    rows.iter()
        .map(|(c, counts)| {
            let parts: Vec<String> = labels
                .iter()
                .zip(counts)
                .filter(|(_, n)| **n > 0)
                .map(|(l, n)| format!("{n} {l}"))
                .collect();
            if parts.is_empty() {
                format!("{c}: {empty}")
            } else {
                format!("{c}: {}", parts.join(", "))
            }
        })
        .collect()
}

/// The labels of the wait buckets, in order.
pub(crate) fn wait_labels() -> Vec<String> {
    WAIT_BUCKETS
        .iter()
        .map(|(_, l)| (*l).to_owned())
        .chain(std::iter::once(WAIT_LONGER.to_owned()))
        .collect()
}

/// `YYYY-MM-DD HH:MM` of `ms` after `start`, UTC.
pub(crate) fn when(start: gpuquota_model::Timestamp, ms: i64) -> String {
    let t = at_ms(start, ms).to_string();
    let date = t.get(..10).unwrap_or("");
    let hm = t.get(11..16).unwrap_or("");
    format!("{date} {hm}")
}

/// A metering window's end as printed (RFC 3339, or seconds).
pub(crate) fn time_text(t: &gpuquota_metering::report::TimeOut) -> String {
    match t {
        gpuquota_metering::report::TimeOut::Text(s) => s.clone(),
        gpuquota_metering::report::TimeOut::Seconds(s) => format!("{s} s"),
    }
}

/// `MM-DD` of day `d` after `start`.
pub(crate) fn day_label(start: gpuquota_model::Timestamp, d: i64) -> String {
    let t = at_ms(start, d.saturating_mul(DAY_MS)).to_string();
    t.get(5..10).unwrap_or("").to_owned()
}

/// The bill of a metering report: lines per department and card type (one row each,
/// `data-row` `department|card type[|service]`, hidden with its department), the idle
/// rows, and the total (`data-figure` `{prefix}bill-total`).
pub fn bill_table(m: &ReportOut, prefix: &str) -> Table {
    let cur = &m.currency;
    let mut t = Table::new(
        format!("The bill per department and card type ({cur}); the rows add up to the total"),
        &[
            "department",
            "card type",
            "service",
            "allocated GPU-h",
            "borrowed GPU-h",
            "charged GPU-h",
            "cost",
            "idle share",
            "total",
            "utilisation",
        ],
    );
    for l in &m.lines {
        let svc = l.service.clone().unwrap_or_default();
        let key = if svc.is_empty() {
            format!("{}|{}", l.department, l.card_type)
        } else {
            format!("{}|{}|{svc}", l.department, l.card_type)
        };
        t.push(
            Row::new([
                Cell::new(l.department.clone()),
                Cell::new(l.card_type.clone()),
                Cell::new(svc),
                Cell::new(l.allocated_hours.to_string()),
                Cell::new(l.borrowed_hours.to_string()),
                Cell::new(l.charged_hours.to_string()),
                Cell::new(l.cost.to_string()),
                Cell::new(l.idle_share.to_string()),
                Cell::figure(l.total.to_string(), format!("{prefix}line-total")),
                Cell::new(l.utilization.map(|u| u.to_string()).unwrap_or_default()),
            ])
            .of(l.department.clone())
            .keyed(key),
        );
    }
    for i in &m.idle {
        t.push(
            Row::new([
                Cell::new("idle"),
                Cell::new(i.card_type.clone()),
                Cell::new(""),
                Cell::new(i.hours.to_string()),
                Cell::new(""),
                Cell::new(""),
                Cell::new(i.cost.to_string()),
                Cell::new(""),
                Cell::new(""),
                Cell::new(""),
            ])
            .keyed(format!("idle|{}", i.card_type)),
        );
    }
    t.push(
        Row::new([
            Cell::new("total"),
            Cell::new(""),
            Cell::new(""),
            Cell::new(""),
            Cell::new(""),
            Cell::new(""),
            Cell::new(""),
            Cell::new(""),
            Cell::figure(m.totals.cost.to_string(), format!("{prefix}bill-total")),
            Cell::new(""),
        ])
        .as_total(),
    );
    t
}

/// The lost work (GPU-hours of preempted runs) per department and card type.
fn lost_table(c: &Chargeback) -> Table {
    let mut t = Table::new(
        if c.charge_lost_work {
            "Lost work: GPU-hours of preempted runs (charged to the departments)"
        } else {
            "Lost work: GPU-hours of preempted runs (on the lost-work lines, not the departments')"
        },
        &["department", "card type", "GPU-hours lost"],
    );
    for l in &c.preempted {
        t.push(
            Row::new([
                l.department.clone(),
                l.card_type.clone(),
                l.hours.to_string(),
            ])
            .of(l.department.clone()),
        );
    }
    t
}

/// The budgets: per budget and period, used and remaining GPU-hours and when spent.
pub(crate) fn budget_table(b: &[BudgetOut], start: gpuquota_model::Timestamp) -> Table {
    let mut t = Table::new(
        "Budgets: GPU-hours per period, used and remaining",
        &[
            "budget",
            "covers",
            "card type",
            "period start",
            "GPU-hours",
            "used",
            "remaining",
            "spent at",
            "when spent",
        ],
    );
    for x in b {
        let scope = match &x.scope {
            ScopeOut::Queue(q) => format!("queue {q}"),
            ScopeOut::Namespaces(n) => format!("namespaces {}", n.join(", ")),
        };
        for p in &x.periods {
            t.push(
                Row::new([
                    x.budget.clone(),
                    scope.clone(),
                    x.card_type.clone().unwrap_or_else(|| "all".to_owned()),
                    when(start, p.start_ms),
                    p.gpu_hours.to_string(),
                    p.used_gpu_hours.to_string(),
                    p.remaining_gpu_hours.to_string(),
                    p.spent_at_ms.map(|s| when(start, s)).unwrap_or_default(),
                    x.when_spent.clone(),
                ])
                .keyed(format!("budget|{}", x.budget)),
            );
        }
    }
    t
}

/// Sentences on the budgets: per budget, the periods spent and when.
pub(crate) fn budget_sentences(b: &[BudgetOut], start: gpuquota_model::Timestamp) -> Vec<String> {
    let mut out = Vec::new();
    for x in b {
        let spent: Vec<String> = x
            .periods
            .iter()
            .filter_map(|p| p.spent_at_ms.map(|s| when(start, s)))
            .collect();
        let used: Vec<String> = x
            .periods
            .iter()
            .map(|p| format!("{} of {}", p.used_gpu_hours, p.gpu_hours))
            .collect();
        let mut s = format!(
            "Budget {} used {} GPU-hours",
            x.budget,
            used.join(", then ")
        );
        if spent.is_empty() {
            s.push_str(" and was never spent.");
        } else {
            s.push_str(&format!(
                "; spent at {} ({}: {} held back, {} stopped).",
                spent.join(", "),
                x.when_spent,
                x.held_back,
                x.stopped
            ));
        }
        out.push(s);
    }
    out
}

/// The sentence of the bill total.
pub(crate) fn bill_sentence(m: &ReportOut) -> String {
    // exact sums of the lines' totals (all in the currency's minor units)
    let mut by_dept: BTreeMap<&str, i128> = BTreeMap::new();
    for l in &m.lines {
        let t = by_dept.entry(l.department.as_str()).or_default();
        *t = t.saturating_add(l.total.minor_units());
    }
    let top = by_dept
        .into_iter()
        .min_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)))
        .map(|(d, _)| d);
    let mut s = format!("The bill totals {} {}", m.totals.cost, m.currency);
    if let Some(d) = top {
        s.push_str(&format!("; {d} pays the most"));
    }
    s.push('.');
    s
}

/// Key figures of a Kueue or ResourceQuota run.
fn facts(sc: &Scenario, r: &Report, workloads: usize, prefix: &str) -> Vec<Fact> {
    let mut f = vec![
        Fact {
            label: "engine".into(),
            value: sc.engine.as_str().into(),
            key: format!("{prefix}engine"),
        },
        Fact {
            label: "from".into(),
            value: when(r.start, 0),
            key: format!("{prefix}start"),
        },
        Fact {
            label: "to".into(),
            value: when(r.start, r.outcome.end_ms),
            key: format!("{prefix}end"),
        },
        Fact {
            label: "workloads".into(),
            value: workloads.to_string(),
            key: format!("{prefix}workloads"),
        },
        Fact {
            label: "preemptions".into(),
            value: r.preemptions.to_string(),
            key: format!("{prefix}preemptions"),
        },
    ];
    if let Some(c) = &r.chargeback {
        f.push(Fact {
            label: format!("bill ({})", c.meter.currency),
            value: c.meter.totals.cost.to_string(),
            key: format!("{prefix}bill"),
        });
    }
    f
}

/// The time-to-admission chart and its table, per class.
pub(crate) fn admission_blocks(
    classes: &BTreeMap<String, ClassStats>,
    id: &str,
    name: &str,
) -> Vec<Block> {
    let labels = wait_labels();
    let rows: Vec<(String, Vec<u64>)> = classes
        .iter()
        .map(|(c, s)| (class_name(c), wait_histogram(&s.admission_ms)))
        .collect();
    let mut head: Vec<&str> = vec![
        "class",
        "workloads",
        "admitted",
        "mean",
        "median",
        "p90",
        "p99",
        "max",
    ];
    head.extend(labels.iter().map(String::as_str));
    let mut t = Table::new(
        "Time to admission per class (creation to first admission of the admitted workloads)",
        &head,
    );
    for ((c, s), (_, counts)) in classes.iter().zip(&rows) {
        let mut cells = vec![
            Cell::new(class_name(c)),
            Cell::new(s.count.to_string()),
            Cell::new(s.admission_ms.len().to_string()),
            Cell::new(human_ms(s.mean_admission())),
            Cell::new(human_ms(s.percentile_admission(50))),
            Cell::new(human_ms(s.percentile_admission(90))),
            Cell::new(human_ms(s.percentile_admission(99))),
            Cell::new(human_ms(s.admission_ms.last().copied().unwrap_or(0))),
        ];
        cells.extend(counts.iter().map(|n| Cell::new(n.to_string())));
        t.push(Row {
            cells,
            key: Some(format!("class|{c}")),
            ..Row::default()
        });
    }
    let desc = histogram_words(&labels, &rows, "none admitted").join("; ");
    let svg = chart::bars(&Bars {
        title: format!("{name}: time to admission per class (workloads per wait)"),
        columns: labels.clone(),
        rows,
        unit: "workloads".into(),
    });
    vec![Block::Chart {
        svg: chart::inline(
            &svg,
            id,
            "Time to admission per class",
            &format!("Workloads admitted after each wait, per class. {desc}."),
        ),
        table: Some(t),
    }]
}

/// `""` (workloads without a class) shown as `(none)`.
pub(crate) fn class_name(c: &str) -> String {
    if c.is_empty() {
        "(none)".to_owned()
    } else {
        c.to_owned()
    }
}

/// Preemptions per day (and the days budgets were spent): the chart over the time axis and
/// its table, plus the preemption loops.
fn events_blocks(r: &Report, id: &str, name: &str, prefix: &str) -> Vec<Block> {
    let end = r.outcome.end_ms.max(1);
    let days = (end + DAY_MS - 1) / DAY_MS;
    let days_n = usize::try_from(days.clamp(1, 3660)).unwrap_or(1);
    let mut pre = vec![0u64; days_n];
    let mut by_reason: BTreeMap<String, u64> = BTreeMap::new();
    for w in &r.outcome.workloads {
        for run in &w.runs {
            if let gpuquota_sim::engine::RunEnd::Preempted { reason, .. } = &run.end {
                let d = usize::try_from(run.end_ms.max(0) / DAY_MS)
                    .unwrap_or(0)
                    .min(days_n - 1);
                pre[d] += 1;
                *by_reason.entry(reason.clone()).or_default() += 1;
            }
        }
    }
    let mut spent = vec![0u64; days_n];
    let mut events: Vec<(i64, String)> = Vec::new();
    for b in r.budgets.iter().flatten() {
        for p in &b.periods {
            if let Some(s) = p.spent_at_ms {
                let d = usize::try_from(s.max(0) / DAY_MS)
                    .unwrap_or(0)
                    .min(days_n - 1);
                spent[d] += 1;
                events.push((s, format!("budget {} spent", b.budget)));
            }
        }
    }
    let columns: Vec<String> = (0..days).map(|d| day_label(r.start, d)).collect();
    let mut rows = vec![("preemptions".to_owned(), pre.clone())];
    if spent.iter().any(|&n| n > 0) {
        rows.push(("budgets spent".to_owned(), spent.clone()));
    }
    let svg = chart::bars(&Bars {
        title: format!("{name}: preemptions per day"),
        columns: columns.clone(),
        rows,
        unit: "events".into(),
    });
    let busy: Vec<String> = columns
        .iter()
        .zip(&pre)
        .filter(|(_, n)| **n > 0)
        .map(|(d, n)| format!("{d}: {n}"))
        .collect();
    let mut t = Table::new(
        "Preemptions per day (days with any), and budgets spent",
        &["day", "preemptions", "budgets spent"],
    );
    for (i, d) in columns.iter().enumerate() {
        if pre[i] > 0 || spent[i] > 0 {
            t.push(
                Row::new([d.clone(), pre[i].to_string(), spent[i].to_string()])
                    .keyed(format!("day|{d}")),
            );
        }
    }
    t.push(
        Row::new([
            Cell::new("total"),
            Cell::figure(
                r.preemptions.to_string(),
                format!("{prefix}preemption-count"),
            ),
            Cell::new(spent.iter().sum::<u64>().to_string()),
        ])
        .as_total(),
    );
    let mut blocks = vec![Block::Chart {
        svg: chart::inline(
            &svg,
            id,
            "Preemptions per day",
            &format!(
                "{} preemptions in all{}.",
                r.preemptions,
                if busy.is_empty() {
                    String::new()
                } else {
                    format!("; per day: {}", busy.join(", "))
                }
            ),
        ),
        table: Some(t),
    }];
    if !by_reason.is_empty() {
        let mut t = Table::new("Preemptions by reason", &["reason", "runs"]);
        for (k, n) in &by_reason {
            t.push(Row::new([k.clone(), n.to_string()]));
        }
        blocks.push(Block::Table(t));
    }
    if !r.preemption_loops.is_empty() {
        let mut t = Table::new(
            "Preemption loops (the same preemptor evicting the same victim again and again)",
            &[
                "preemptor",
                "victim",
                "preemptions",
                "first",
                "last",
                "held back",
            ],
        );
        for l in &r.preemption_loops {
            t.push(Row::new([
                l.preemptor.clone(),
                l.victim.clone(),
                l.preemptions.to_string(),
                when(r.start, l.first_ms),
                when(r.start, l.last_ms),
                l.held_back.to_string(),
            ]));
        }
        blocks.push(Block::Table(t));
    }
    if !events.is_empty() {
        events.sort();
        let mut t = Table::new("Timeline events", &["when", "event"]);
        for (s, e) in events {
            t.push(Row::new([when(r.start, s), e]));
        }
        blocks.push(Block::Table(t));
    }
    blocks
}

/// The workloads that waited longest: creation to first start (or to the end, for one
/// that never ran), with the reason of one still pending.
fn waiters_table(r: &Report, dept: &dyn Fn(&str) -> String) -> Table {
    let end = r.outcome.end_ms;
    let mut v: Vec<(i64, &gpuquota_sim::engine::WorkloadOutcome)> = r
        .outcome
        .workloads
        .iter()
        .map(|w| {
            let first = w.runs.first().map_or(end, |x| x.start_ms);
            (first.saturating_sub(w.created_ms), w)
        })
        .collect();
    v.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.key.cmp(&b.1.key)));
    let mut t = Table::new(
        format!(
            "The {} workloads that waited longest (creation to first start, or to the end for one that never ran)",
            WAITERS.min(v.len())
        ),
        &[
            "workload",
            "queue",
            "class",
            "created",
            "waited",
            "ran",
            "pending reason",
            "message",
        ],
    );
    for (wait, w) in v.into_iter().take(WAITERS) {
        let ns = w.key.split('/').next().unwrap_or("");
        let (reason, message) = w.pending.clone().unwrap_or_default();
        let message: String = message.chars().take(240).collect();
        t.push(
            Row::new([
                w.key.clone(),
                w.queue.clone(),
                class_name(&w.class),
                when(r.start, w.created_ms),
                human_ms(wait),
                if w.runs.is_empty() {
                    "no".into()
                } else {
                    "yes".into()
                },
                reason,
                message,
            ])
            .of(dept(ns))
            .keyed(format!("waiter|{}", w.key)),
        );
    }
    t
}

/// The usage chart (the `--plot` picture) with the per-queue table behind it.
fn usage_blocks(sc: &Scenario, r: &Report, id: &str, zoom: bool) -> Result<Vec<Block>, String> {
    let queues = r.queues_output();
    let mut t = Table::new(
        "Per ClusterQueue: nominal quota, mean usage of it, and borrowed hours",
        &[
            "queue",
            "nominal quota",
            "mean usage %",
            "borrowed (resource-hours)",
        ],
    );
    for (q, s) in &queues {
        let nominal: Vec<String> = s
            .nominal
            .iter()
            .flat_map(|(f, m)| m.iter().map(move |(res, v)| format!("{f} {res} {v}")))
            .collect();
        let borrowed: Vec<String> = s
            .borrowed_ms
            .iter()
            .flat_map(|(f, m)| {
                m.iter()
                    .filter(|(_, v)| **v > 0)
                    .map(move |(res, v)| format!("{f} {res} {:.1}", *v as f64 / 3_600_000.0))
            })
            .collect();
        t.push(
            Row::new([
                q.clone(),
                nominal.join(", "),
                s.mean_usage_percent
                    .map(|p| format!("{p:.1}"))
                    .unwrap_or_default(),
                borrowed.join(", "),
            ])
            .keyed(format!("queue|{q}")),
        );
    }
    let timeline = timeline_table(r);
    let mut desc = "Cards in use per department, stacked, one panel per card type, against the card type's capacity (solid grey) and the queues' summed nominal quota (dashed); red triangles mark preemptions, purple dashed rules spent budgets. The table below gives the per-queue figures.".to_owned();
    if timeline.is_some() {
        desc.push_str(" Teal rules labelled #N mark the events of the scenario's timeline; the timeline table says what each did.");
    }
    let svg = match gpuquota_sim::plot::svg(sc, r) {
        Ok(svg) => chart::inline(
            &svg,
            id,
            &format!("{}: GPUs in use per department over time", r.name),
            &desc,
        ),
        Err(e) => {
            return Ok(vec![
                Block::Paragraph(format!("No usage chart: {e}.")),
                Block::Table(t),
            ]);
        }
    };
    let mut blocks = vec![Block::Chart {
        svg,
        table: Some(t),
    }];
    if let Some(tl) = timeline {
        blocks.push(Block::Table(tl));
    }
    if zoom && let Some(days) = day_blocks(sc, r, id)? {
        blocks.push(days);
    }
    Ok(blocks)
}

/// The run's timeline events, one row each (the report's `timeline` section): when, what
/// changed, and its effect; `None` without a timeline.
fn timeline_table(r: &Report) -> Option<Table> {
    timeline_rows(&r.timeline_output(), r.start, false)
}

/// The timeline table of either engine's `timeline` section (`None` when empty); with
/// `nodes`, two more columns: the node changes and the schedulable devices before → after.
pub(crate) fn timeline_rows(
    events: &[gpuquota_sim::report::TimelineOut],
    start: gpuquota_model::Timestamp,
    nodes: bool,
) -> Option<Table> {
    if events.is_empty() {
        return None;
    }
    let mut header = vec![
        "event",
        "at",
        "changes",
        "admissions stopped",
        "admissions resumed",
        "evicted",
        "quota before",
        "quota after",
    ];
    if nodes {
        header.extend(["nodes", "schedulable devices"]);
    }
    let mut t = Table::new("Timeline: what each event of the scenario changed", &header);
    let quota = |u: &gpuquota_sim::report::UsageOut| {
        u.iter()
            .flat_map(|(f, m)| m.iter().map(move |(res, v)| format!("{f} {res} {v}")))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let devices = |d: &BTreeMap<String, i64>| {
        d.iter()
            .map(|(r, n)| format!("{r} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (k, e) in events.iter().enumerate() {
        let at = at_ms(start, e.at_ms).to_string();
        let mut cells = vec![
            format!("#{}", e.index),
            at,
            e.changes
                .iter()
                .map(|c| format!("{} {} {}", c.kind, c.name, c.change))
                .collect::<Vec<_>>()
                .join(", "),
            e.admissions_stopped.join(", "),
            e.admissions_resumed.join(", "),
            e.evicted
                .iter()
                .map(|x| format!("{} ({})", x.workload, x.reason))
                .collect::<Vec<_>>()
                .join(", "),
            quota(&e.capacity_before),
            quota(&e.capacity_after),
        ];
        if nodes {
            let mut changed: Vec<String> =
                e.nodes_down.iter().map(|n| format!("{n} down")).collect();
            changed.extend(e.nodes_drained.iter().map(|n| match e.drain_deadline_ms {
                Some(d) => format!(
                    "{n} drained (deadline {})",
                    at_ms(start, e.at_ms.saturating_add(d))
                ),
                None => format!("{n} drained"),
            }));
            changed.extend(e.nodes_up.iter().map(|n| format!("{n} up")));
            cells.push(changed.join(", "));
            cells.push(if e.devices_before.is_empty() {
                String::new()
            } else {
                format!(
                    "{} -> {}",
                    devices(&e.devices_before),
                    devices(&e.devices_after)
                )
            });
        }
        t.push(Row::new(cells).keyed(format!("timeline|{k}")));
    }
    Some(t)
}

/// Zoom on a day: one chart per day of the run (per week, or four weeks, for a longer run:
/// [`gpuquota_sim::plot::windows`]) on its own time axis, with its figures (card-hours and
/// peak per card type and department), chosen by a row of dates. `None` for a run of one
/// day or less (the run's chart is the day's).
fn day_blocks(sc: &Scenario, r: &Report, id: &str) -> Result<Option<Block>, String> {
    let w = gpuquota_sim::plot::windows(sc, r)?;
    if w.windows.len() <= 1 {
        return Ok(None);
    }
    let days = w.width_ms / DAY_MS;
    let what = match days {
        1 => "a day",
        7 => "a week",
        _ => "four weeks",
    };
    let mut parts = Vec::new();
    for (k, win) in w.windows.iter().enumerate() {
        let label = day_label(r.start, win.from_ms / DAY_MS);
        let anchor = format!("{id}-day-{}", k + 1);
        let mut t = Table::new(
            if days == 1 {
                format!("{label}: in use per card type and department")
            } else {
                format!("{label}, {days} days: in use per card type and department")
            },
            &["card type", "department", "card-hours", "peak"],
        );
        for f in win.figures.iter().filter(|f| f.unit_hours > 0.0) {
            let card = f.panel.split(':').next().unwrap_or(&f.panel).to_owned();
            t.push(Row::new([
                card,
                f.department.clone(),
                format!("{:.1}", f.unit_hours),
                format!("{}", (f.peak * 100.0).round() / 100.0),
            ]));
        }
        parts.push((
            anchor.clone(),
            label.clone(),
            vec![Block::Chart {
                svg: chart::inline(
                    &win.svg,
                    &anchor,
                    &format!("{}: GPUs in use per department, {what} from {label}", r.name),
                    "Cards in use per department in this window, stacked as in the run's chart, one panel per card type, against capacity and the summed nominal quota; the table below gives each department's card-hours and peak.",
                ),
                table: Some(t),
            }],
        ));
    }
    Ok(Some(Block::Choice {
        label: format!("Zoom on {what} (UTC, from):"),
        parts,
    }))
}

/// The scenario's own inputs, collapsed.
pub(crate) fn inputs_block(sc: &Scenario) -> Block {
    let mut t = Table::new("Settings", &["setting", "value"]);
    t.push(Row::new(["engine", sc.engine.as_str()]));
    t.push(Row::new(["start".to_owned(), sc.start.to_string()]));
    t.push(Row::new([
        "end".to_owned(),
        sc.end_ms.map_or_else(
            || "when every workload has finished".to_owned(),
            |e| when(sc.start, e),
        ),
    ]));
    t.push(Row::new([
        "fair sharing".to_owned(),
        sc.fair_sharing.map_or_else(
            || "from the cluster's Configuration".to_owned(),
            |f| f.to_string(),
        ),
    ]));
    t.push(Row::new([
        "cycle latency".to_owned(),
        human_ms(sc.cycle_latency_ms),
    ]));
    t.push(Row::new(["resume".to_owned(), sc.resume.to_string()]));
    let m = &sc.model;
    let mut k = Table::new("Objects read", &["kind", "count"]);
    for (kind, n) in [
        ("ResourceFlavor", m.resource_flavors.len()),
        ("ClusterQueue", m.cluster_queues.len()),
        ("Cohort", m.cohorts.len()),
        ("LocalQueue", m.local_queues.len()),
        ("Workload", m.workloads.len()),
        ("Node", m.nodes.len()),
        ("ResourceQuota", m.resource_quotas.len()),
        ("Budget", m.budgets.len()),
    ] {
        k.push(Row::new([kind.to_owned(), n.to_string()]));
    }
    let mut blocks = vec![Block::Table(t), Block::Table(k)];
    if let Some(metering) = &sc.metering {
        blocks.push(Block::Paragraph("spec.metering:".into()));
        blocks.push(Block::Pre(
            serde_json::to_string_pretty(metering).unwrap_or_default(),
        ));
    }
    Block::Details {
        summary: format!("The scenario's inputs ({})", sc.name),
        blocks,
    }
}

/// The department of a namespace under the scenario's `spec.metering`, else the namespace.
pub(crate) fn department_of(sc: &Scenario) -> impl Fn(&str) -> String + '_ {
    let mut map: BTreeMap<String, String> = BTreeMap::new();
    for d in sc
        .metering
        .as_ref()
        .and_then(|m| m["departments"].as_array())
        .into_iter()
        .flatten()
    {
        let Some(name) = d["name"].as_str() else {
            continue;
        };
        for n in d["namespaces"].as_array().into_iter().flatten() {
            if let Some(n) = n.as_str() {
                map.entry(n.to_owned()).or_insert_with(|| name.to_owned());
            }
        }
    }
    move |ns: &str| map.get(ns).cloned().unwrap_or_else(|| ns.to_owned())
}

/// Every section of one simulated month; `prefix` sets the sections' ids and figures'
/// names apart when a page holds several runs. The usage section can zoom on each day
/// (left out for a run shown in a collapsed part, as the seed page's other controls).
///
/// # Errors
/// The plotting backend's error as text.
pub fn sections(sc: &Scenario, r: &Report, prefix: &str) -> Result<Vec<Section>, String> {
    sections_with(sc, r, prefix, true)
}

/// [`sections`], with the usage section's zoom on a day (one light chart per day, about
/// 25 KB each) or without it.
///
/// # Errors
/// The plotting backend's error as text.
pub(crate) fn sections_with(
    sc: &Scenario,
    r: &Report,
    prefix: &str,
    zoom: bool,
) -> Result<Vec<Section>, String> {
    let id = |s: &str| format!("{prefix}{s}");
    let name = &r.name;
    let dept = department_of(sc);
    let mut out = Vec::new();

    let mut s = Section::new(id("summary"), format!("{name}: what happened"));
    s.push(Block::Facts(facts(
        sc,
        r,
        r.outcome.workloads.len(),
        prefix,
    )));
    let mut sentences = r.summary_sentences();
    if let Some(b) = &r.budgets {
        sentences.extend(budget_sentences(b, r.start));
    }
    if let Some(c) = &r.chargeback {
        sentences.push(bill_sentence(&c.meter));
    }
    s.push(Block::Sentences(sentences));
    out.push(s);

    if let Some(c) = &r.chargeback {
        let mut s = Section::new(id("bill"), format!("{name}: the bill"));
        s.push(Block::Paragraph(format!(
            "Window {} to {}; currency {}. Idle capacity is shared out as each line's idle share; lost work is the GPU-hours of preempted runs.",
            time_text(&c.meter.window.start), time_text(&c.meter.window.end), c.meter.currency
        )));
        s.push(Block::Table(bill_table(&c.meter, prefix)));
        if !c.preempted.is_empty() {
            s.push(Block::Table(lost_table(c)));
        }
        if !c.meter.warnings.is_empty() {
            s.push(Block::Sentences(c.meter.warnings.clone()));
        }
        out.push(s);
    }
    if let Some(b) = &r.budgets {
        let mut s = Section::new(id("budgets"), format!("{name}: budgets"));
        s.push(Block::Table(budget_table(b, r.start)));
        out.push(s);
    }

    let mut s = Section::new(id("usage"), format!("{name}: usage over time"));
    for b in usage_blocks(sc, r, &id("usage-chart"), zoom)? {
        s.push(b);
    }
    out.push(s);

    let mut s = Section::new(id("admission"), format!("{name}: time to admission"));
    for b in admission_blocks(&r.classes, &id("admission-chart"), name) {
        s.push(b);
    }
    out.push(s);

    let mut s = Section::new(id("events"), format!("{name}: preemptions and events"));
    for b in events_blocks(r, &id("events-chart"), name, prefix) {
        s.push(b);
    }
    out.push(s);

    let mut s = Section::new(id("waiters"), format!("{name}: who waited longest"));
    s.push(Block::Table(waiters_table(r, &dept)));
    out.push(s);

    if let Some(f) = &r.fidelity {
        out.push(crate::fidelity::section(f, &id("fidelity"), name, prefix));
    }

    let mut s = Section::new(id("inputs"), format!("{name}: inputs"));
    s.push(inputs_block(sc));
    out.push(s);
    Ok(out)
}

/// The departments of a run in colour order, with their colours.
pub(crate) fn departments(sc: &Scenario, r: &Report) -> (Vec<String>, Vec<String>) {
    let dept = department_of(sc);
    let mut names: Vec<String> = r
        .outcome
        .workloads
        .iter()
        .map(|w| dept(w.key.split('/').next().unwrap_or("")))
        .collect();
    if let Some(c) = &r.chargeback {
        names.extend(c.meter.lines.iter().map(|l| l.department.clone()));
    }
    names.sort();
    names.dedup();
    let order = chart::department_order(sc.metering.as_ref(), names.iter().map(String::as_str));
    let colours = order
        .iter()
        .map(|d| chart::department_hex(&order, d))
        .collect();
    (order, colours)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_fall_in_the_bucket_of_their_upper_edge() {
        // 0 → "0", 60 s → "≤ 1 min", 61 s → "≤ 10 min", 8 days → "> 7 d"
        assert_eq!(
            wait_histogram(&[0, 60_000, 61_000, 8 * DAY_MS]),
            vec![1, 1, 1, 0, 0, 0, 0, 1]
        );
    }
}
