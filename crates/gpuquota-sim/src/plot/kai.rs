//! The KAI plot: per leaf queue, the GPUs allocated after each session (filled, in the
//! colour of the queue's department) against the fair share the session divided (dashed),
//! as step functions in time, one panel per leaf queue. KAI's own `plot_simple.py`
//! (kai-scheduler/KAI-Scheduler: `cmd/time-based-fairshare-simulator/examples/plot_simple.py`)
//! draws the same two series per queue.
//!
//! - Parent queues are not drawn (their series are their children's sums).
//! - A leaf queue's department is the `spec.metering` department of the namespace most of
//!   its jobs run in (ties by name), else the queue's name; colours as in every picture of
//!   the scenario.
//! - Marks: a red triangle where a job of the queue was evicted or stopped; a purple dashed
//!   rule where a budget covering the queue (by queue, an ancestor queue, or a namespace of
//!   its jobs) was spent; a teal rule labelled with the event's index (`#0`) in every
//!   panel at each event of `spec.timeline`, as in the Kueue plot (the report's `timeline`
//!   section and table say what each did).
//! - The time axis is dates and hours from `spec.start`; for KAI's simulator config, cycle
//!   numbers.

use std::collections::{BTreeMap, BTreeSet};

use crate::chart::{self, Clock, Departments, Line, LineKind, Mark, MarkKind, Panel, Picture};
use crate::report::ScopeOut;
use crate::report::kai::{KaiOutcome, KaiRunEnd};
use crate::scenario::kai::KaiScenario;

/// Renders the plot as SVG text (module docs).
///
/// # Errors
/// No leaf queue, or the plotting backend's error as text.
///
/// # Complexity
/// O(queues × sessions + jobs × runs).
pub fn svg(sc: &KaiScenario, o: &KaiOutcome) -> Result<String, String> {
    let parents: BTreeSet<&str> = o
        .queues
        .iter()
        .filter_map(|q| q.parent.as_deref())
        .collect();
    let parent_of: BTreeMap<&str, &str> = o
        .queues
        .iter()
        .filter_map(|q| Some((q.name.as_str(), q.parent.as_deref()?)))
        .collect();
    let leaves: Vec<_> = o
        .queues
        .iter()
        .filter(|q| !parents.contains(q.name.as_str()))
        .collect();
    if leaves.is_empty() {
        return Err("nothing to plot: no leaf queue".to_owned());
    }
    let mut departments = Departments::of(sc.metering.as_ref());
    // per leaf queue: jobs per department, namespaces, marks
    let mut per_dept: BTreeMap<&str, BTreeMap<String, usize>> = BTreeMap::new();
    let mut namespaces: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut marks: BTreeMap<&str, Vec<Mark>> = BTreeMap::new();
    for j in &o.jobs {
        let ns = j.key.split('/').next().unwrap_or("");
        *per_dept
            .entry(j.queue.as_str())
            .or_default()
            .entry(departments.of_namespace(ns))
            .or_default() += 1;
        namespaces.entry(j.queue.as_str()).or_default().insert(ns);
        for r in &j.runs {
            let label = match r.end {
                KaiRunEnd::Evicted { .. } => "eviction",
                KaiRunEnd::Stopped { .. } => "stopped by a budget",
                KaiRunEnd::Lost { .. } => "lost with its node",
                _ => continue,
            };
            marks.entry(j.queue.as_str()).or_default().push(Mark {
                kind: MarkKind::Triangle,
                label: label.to_owned(),
                t_ms: r.end_ms,
            });
        }
    }
    let dept_of = |q: &str| -> String {
        per_dept
            .get(q)
            .and_then(|m| {
                m.iter()
                    .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
                    .map(|x| x.0.clone())
            })
            .unwrap_or_else(|| q.to_owned())
    };
    let covers = |scope: &ScopeOut, q: &str| -> bool {
        match scope {
            ScopeOut::Queue(name) => {
                let mut cur = Some(q);
                while let Some(c) = cur {
                    if c == name {
                        return true;
                    }
                    cur = parent_of.get(c).copied();
                }
                false
            }
            ScopeOut::Namespaces(ns) => namespaces
                .get(q)
                .is_some_and(|set| ns.iter().any(|n| set.contains(n.as_str()))),
        }
    };
    let cycles = !o.queue_order.is_empty();
    let interval = o.session_interval_ms.max(1);
    let end = if cycles {
        (o.sessions as i64).saturating_mul(interval)
    } else {
        o.end_ms
    };
    let mut panels = Vec::new();
    for q in &leaves {
        let d = dept_of(&q.name);
        departments.note(&d);
        let mut m = marks.remove(q.name.as_str()).unwrap_or_default();
        for b in o.budgets.iter().flatten() {
            if !covers(&b.scope, &q.name) {
                continue;
            }
            for p in &b.periods {
                if let Some(t) = p.spent_at_ms {
                    m.push(Mark {
                        kind: MarkKind::Rule,
                        label: format!("budget {} spent", b.budget),
                        t_ms: t,
                    });
                }
            }
        }
        m.extend(o.timeline.iter().map(|t| Mark {
            kind: MarkKind::Timeline,
            label: format!("#{}", t.index),
            t_ms: t.at_ms,
        }));
        let title = if d == q.name {
            q.name.clone()
        } else {
            format!("{} (department {d})", q.name)
        };
        panels.push(Panel {
            title,
            y_desc: "GPUs".to_owned(),
            areas: vec![(d, chart::sessions(&q.allocated, interval))],
            lines: vec![Line {
                label: "fair share".to_owned(),
                kind: LineKind::FairShare,
                steps: chart::sessions(&q.fair_share, interval),
            }],
            marks: m,
        });
    }
    chart::svg(&Picture {
        title: format!(
            "{}: GPUs allocated per leaf queue against its fair share",
            o.name
        ),
        clock: if cycles {
            Clock::Cycles {
                ms_per_cycle: interval,
            }
        } else {
            Clock::Dates {
                start_unix_ms: o.start.unix_seconds().saturating_mul(1000),
            }
        },
        end_ms: end,
        panels,
        departments: &departments,
        notes: vec!["filled: GPUs allocated".to_owned()],
        stack: None,
        compact: false,
    })
}
