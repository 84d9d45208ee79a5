//! The fidelity section of a run whose workloads were recorded (a `history:` source, or a
//! trace that records waits): how far the run is from what the cluster did, as the JSON's
//! `fidelity` has it ([`gpuquota_sim::history::fidelity`]).
//!
//! Key figures (`data-figure` `fidelity-compared`, `fidelity-mean-error`,
//! `fidelity-p95-error`, `fidelity-tau`, `fidelity-preemptions-matched`, `-missed`,
//! `-extra`), the error of time to admission per class as a chart with the per-group table
//! behind it, the GPU-hours per department recorded and simulated as a chart with its
//! table, the workloads of the largest errors (at most [`crate::month::WAITERS`]) and the
//! differences the model explains. Aggregated: no element per workload beyond the listed
//! ones.

use std::collections::BTreeMap;

use gpuquota_sim::chart::{self, Bars};
use gpuquota_sim::history::fidelity::{Fidelity, GroupFidelity};
use gpuquota_sim::report::human_ms;

use crate::month::{WAITERS, class_name, histogram_words, wait_histogram, wait_labels};
use crate::page::{Block, Cell, Fact, Row, Section, Table};

/// An optional duration as shown (`-` when unknown).
fn opt_ms(v: Option<i64>) -> String {
    v.map_or_else(|| "-".to_owned(), human_ms)
}

/// Kendall's τ as shown: three decimals, `-` when undefined.
pub(crate) fn tau_text(t: Option<f64>) -> String {
    t.map_or_else(|| "-".to_owned(), |t| format!("{t:.3}"))
}

/// GPU-seconds as GPU-hours with two decimals (rounded down).
pub(crate) fn hours_text(s: u64) -> String {
    format!("{}.{:02}", s / 3600, (s % 3600) * 100 / 3600)
}

fn group_row(g: &GroupFidelity, all: bool) -> Row {
    let (class, queue) = if all {
        ("(all)".to_owned(), "-".to_owned())
    } else {
        (class_name(&g.class), g.queue.clone())
    };
    Row {
        cells: vec![
            Cell::new(class),
            Cell::new(queue),
            Cell::new(g.workloads.to_string()),
            Cell::new(g.compared.to_string()),
            Cell::new(opt_ms(g.mean_admission_error_ms)),
            Cell::new(opt_ms(g.p95_admission_error_ms)),
            Cell::new(tau_text(g.kendall_tau)),
            Cell::new(g.preemptions.matched.to_string()),
            Cell::new(g.preemptions.missed.to_string()),
            Cell::new(g.preemptions.extra.to_string()),
        ],
        key: Some(if all {
            "fidelity|all".to_owned()
        } else {
            format!("fidelity|{}|{}", g.class, g.queue)
        }),
        total: all,
        ..Row::default()
    }
}

/// The section (`id`, headed after the run `name`, figures prefixed `prefix`).
pub(crate) fn section(f: &Fidelity, id: &str, name: &str, prefix: &str) -> Section {
    let mut s = Section::new(id, format!("{name}: fidelity to the recorded month"));
    let what = if f.source == "trace" {
        "the waits the trace recorded (its recorded start is the admission)"
    } else {
        "the recorded history (each workload's recorded admission, evictions and end)"
    };
    s.push(Block::Paragraph(format!(
        "This run against {what}. The error of a workload is |simulated − recorded| time to admission, known for {} of {} workloads; Kendall's τ-b compares the order of their admissions (1: the recorded order exactly).",
        f.all.compared, f.all.workloads
    )));
    let fig = |k: &str| format!("{prefix}fidelity-{k}");
    s.push(Block::Facts(vec![
        Fact {
            label: "workloads compared".into(),
            value: f.all.compared.to_string(),
            key: fig("compared"),
        },
        Fact {
            label: "mean error of time to admission".into(),
            value: opt_ms(f.all.mean_admission_error_ms),
            key: fig("mean-error"),
        },
        Fact {
            label: "p95 error of time to admission".into(),
            value: opt_ms(f.all.p95_admission_error_ms),
            key: fig("p95-error"),
        },
        Fact {
            label: "Kendall's τ of the admission order".into(),
            value: tau_text(f.all.kendall_tau),
            key: fig("tau"),
        },
        Fact {
            label: "preemptions matched".into(),
            value: f.all.preemptions.matched.to_string(),
            key: fig("preemptions-matched"),
        },
        Fact {
            label: "recorded preemptions missed".into(),
            value: f.all.preemptions.missed.to_string(),
            key: fig("preemptions-missed"),
        },
        Fact {
            label: "preemptions not recorded".into(),
            value: f.all.preemptions.extra.to_string(),
            key: fig("preemptions-extra"),
        },
    ]));

    // the error distribution per recorded class, with the per-group table behind it
    let mut by_class: BTreeMap<&str, Vec<i64>> = BTreeMap::new();
    for w in &f.workloads {
        let e = by_class.entry(w.class.as_str()).or_default();
        if let Some(x) = w.admission_error_ms {
            e.push(x);
        }
    }
    let labels = wait_labels();
    let rows: Vec<(String, Vec<u64>)> = by_class
        .iter()
        .map(|(c, e)| (class_name(c), wait_histogram(e)))
        .collect();
    let desc = histogram_words(&labels, &rows, "none compared");
    let mut t = Table::new(
        "Per recorded class and LocalQueue: error of time to admission, admission order and preemptions",
        &[
            "class",
            "queue",
            "workloads",
            "compared",
            "mean error",
            "p95 error",
            "Kendall τ",
            "preemptions matched",
            "missed",
            "extra",
        ],
    );
    t.push(group_row(&f.all, true));
    for g in &f.groups {
        t.push(group_row(g, false));
    }
    let svg = chart::bars(&Bars {
        title: format!("{name}: error of time to admission per class (workloads per error)"),
        columns: labels.clone(),
        rows,
        unit: "workloads".into(),
    });
    s.push(Block::Chart {
        svg: chart::inline(
            &svg,
            &format!("{id}-error-chart"),
            "Error of time to admission per class",
            &format!(
                "Workloads per absolute error of time to admission, per recorded class. {}.",
                desc.join("; ")
            ),
        ),
        table: Some(t),
    });

    // GPU-hours per department, recorded and simulated
    let mut t = Table::new(
        "GPU-hours per department: recorded and simulated",
        &["department", "recorded GPU-hours", "simulated GPU-hours"],
    );
    let mut rows = Vec::new();
    for d in &f.departments {
        t.push(
            Row::new([
                Cell::new(d.department.clone()),
                Cell::figure(
                    hours_text(d.recorded_gpu_seconds),
                    fig("recorded-gpu-hours"),
                ),
                Cell::figure(
                    hours_text(d.simulated_gpu_seconds),
                    fig("simulated-gpu-hours"),
                ),
            ])
            .of(d.department.clone())
            .keyed(format!("fidelity-department|{}", d.department)),
        );
        rows.push((
            d.department.clone(),
            vec![
                d.recorded_gpu_seconds / 3600,
                d.simulated_gpu_seconds / 3600,
            ],
        ));
    }
    let desc: Vec<String> = f
        .departments
        .iter()
        .map(|d| {
            format!(
                "{}: {} recorded, {} simulated",
                d.department,
                hours_text(d.recorded_gpu_seconds),
                hours_text(d.simulated_gpu_seconds)
            )
        })
        .collect();
    let svg = chart::bars(&Bars {
        title: format!("{name}: GPU-hours per department, recorded and simulated"),
        columns: vec!["recorded".into(), "simulated".into()],
        rows,
        unit: "GPU-hours".into(),
    });
    s.push(Block::Chart {
        svg: chart::inline(
            &svg,
            &format!("{id}-hours-chart"),
            "GPU-hours per department, recorded and simulated",
            &format!("Whole GPU-hours. {}.", desc.join("; ")),
        ),
        table: Some(t),
    });

    // the largest errors
    let mut worst: Vec<_> = f
        .workloads
        .iter()
        .filter(|w| w.admission_error_ms.unwrap_or(0) > 0)
        .collect();
    worst.sort_by(|a, b| {
        b.admission_error_ms
            .cmp(&a.admission_error_ms)
            .then_with(|| a.key.cmp(&b.key))
    });
    if !worst.is_empty() {
        let mut t = Table::new(
            format!(
                "The {} workloads of the largest error of time to admission (of {})",
                worst.len().min(WAITERS),
                worst.len()
            ),
            &[
                "workload",
                "class",
                "queue",
                "created",
                "recorded admission",
                "simulated admission",
                "error",
                "preemptions recorded",
                "preemptions simulated",
            ],
        );
        for w in worst.into_iter().take(WAITERS) {
            let ns = w.key.split('/').next().unwrap_or("");
            t.push(
                Row::new([
                    w.key.clone(),
                    class_name(&w.class),
                    w.queue.clone(),
                    human_ms(w.created_ms),
                    opt_ms(w.recorded_admitted_ms),
                    opt_ms(w.simulated_admitted_ms),
                    opt_ms(w.admission_error_ms),
                    w.recorded_preemptions.to_string(),
                    w.simulated_preemptions.to_string(),
                ])
                .of(ns)
                .keyed(format!("fidelity-workload|{}", w.key)),
            );
        }
        s.push(Block::Table(t));
    }
    if !f.notes.is_empty() {
        let mut lines: Vec<String> = f
            .notes
            .iter()
            .take(WAITERS)
            .map(|n| {
                let at = n
                    .at_ms
                    .map_or_else(String::new, |t| format!(" at {}", human_ms(t)));
                format!("{}{at}: {}", n.workload, n.message)
            })
            .collect();
        if f.notes.len() > WAITERS {
            lines.push(format!(
                "… and {} more in the JSON's fidelity.notes.",
                f.notes.len() - WAITERS
            ));
        }
        s.push(Block::Paragraph(
            "What the model knows about the differences:".into(),
        ));
        s.push(Block::Sentences(lines));
    }
    s
}
