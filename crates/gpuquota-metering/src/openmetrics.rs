//! The `meter` report as OpenMetrics text: GPU-hours used per department and card type,
//! and each budget's GPU-hours, used and remaining, the format a Prometheus scrape or a
//! node-exporter textfile collector reads (so a budget dashboard is one Grafana panel).
//!
//! ```
//! use gpuquota_metering::{Document, Input, openmetrics, run};
//!
//! let doc = Document::from_yaml(r#"
//! window: {start: 0, end: 36000}
//! cardTypes: [{name: H200, pricePerHour: "4.50"}]
//! departments: [{name: A, namespaces: [team-a]}]
//! records: [{department: A, cardType: H200, gpus: 2, start: 0, end: 36000}]
//! "#)?;
//! let report = run(&Input::from_document(&doc, &[])?)?;
//! let text = openmetrics::render(&report, &[]);
//! assert!(text.contains("gpuquota_gpu_used_hours{department=\"A\",card_type=\"H200\"} 20.000000\n"));
//! assert!(text.contains("gpuquota_cost_currency{department=\"A\",card_type=\"H200\",currency=\"USD\"} 90.00\n"));
//! assert!(text.ends_with("# EOF\n"));
//! # Ok::<(), gpuquota_model::Error>(())
//! ```
//!
//! Families (every one a `gauge` with `# TYPE`, `# UNIT` (`hours`; `currency` for the cost) and `# HELP`, names ending in
//! the unit as OpenMetrics requires; values with six decimals; no timestamps, so the scrape
//! time is the sample time):
//!
//! | family | labels | value |
//! |---|---|---|
//! | `gpuquota_gpu_used_hours` | `department`, `card_type` | allocated GPU-hours in the window (MIG- and replica-weighted), summed over services |
//! | `gpuquota_gpu_borrowed_hours` | `department`, `card_type` | the part above the department's quota |
//! | `gpuquota_cost_currency` | `department`, `card_type`, `currency` | the bill's total (cost and idle share) in major units of the currency its label names, summed over services (`# UNIT currency`) |
//! | `gpuquota_budget_gpu_hours` | `budget`, `department`, `card_type` | the budget per period |
//! | `gpuquota_budget_used_gpu_hours` | `budget`, `department`, `card_type` | charged to the budget in the window |
//! | `gpuquota_budget_remaining_gpu_hours` | `budget`, `department`, `card_type` | budget − used (negative after an overrun) |
//!
//! A budget's `department` is its `spec.queue`, or its `spec.namespaces` joined by `,`;
//! `card_type` its `spec.cardType`, or `*` when every card type counts. Label values are
//! escaped (`\\`, `\"`, `\n`) as the exposition formats require. The text ends with
//! `# EOF`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::budget::{SnapshotBudget, hours};
use crate::money::format_hours;
use crate::report::Report;

fn esc(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Every family [`render`] can write, with its labels, in output order: what a dashboard
/// over the metrics may name (the Grafana dashboard of `gpuquota-report` is built from it).
pub const FAMILIES: [(&str, &[&str]); 6] = [
    ("gpuquota_gpu_used_hours", &["department", "card_type"]),
    ("gpuquota_gpu_borrowed_hours", &["department", "card_type"]),
    (
        "gpuquota_cost_currency",
        &["department", "card_type", "currency"],
    ),
    (
        "gpuquota_budget_gpu_hours",
        &["budget", "department", "card_type"],
    ),
    (
        "gpuquota_budget_used_gpu_hours",
        &["budget", "department", "card_type"],
    ),
    (
        "gpuquota_budget_remaining_gpu_hours",
        &["budget", "department", "card_type"],
    ),
];

/// Card-seconds units as hours, as the JSON report prints them.
fn card_hours(units: i128) -> String {
    format_hours(units)
}

/// A budget family: name, help, value.
type Family = (&'static str, &'static str, fn(&SnapshotBudget) -> String);

fn family(out: &mut String, name: &str, help: &str) {
    let _ = writeln!(out, "# TYPE {name} gauge");
    let _ = writeln!(out, "# UNIT {name} hours");
    let _ = writeln!(out, "# HELP {name} {help}");
}

/// The report and budgets as OpenMetrics text (see the module docs).
///
/// # Complexity
/// O(lines log lines + budgets).
pub fn render(report: &Report, budgets: &[SnapshotBudget]) -> String {
    let mut used: BTreeMap<(&str, &str), (i128, i128, i128)> = BTreeMap::new();
    for l in &report.lines {
        let e = used
            .entry((l.department.as_str(), l.card_type.as_str()))
            .or_default();
        e.0 += l.allocated_units;
        e.1 += l.borrowed_units;
        e.2 += l.total_minor;
    }
    let mut out = String::new();
    family(
        &mut out,
        "gpuquota_gpu_used_hours",
        "GPU-hours allocated in the metering window, MIG- and replica-weighted.",
    );
    for ((d, c), (a, _, _)) in &used {
        let _ = writeln!(
            out,
            "gpuquota_gpu_used_hours{{department=\"{}\",card_type=\"{}\"}} {}",
            esc(d),
            esc(c),
            card_hours(*a)
        );
    }
    family(
        &mut out,
        "gpuquota_gpu_borrowed_hours",
        "GPU-hours used above the department's quota, integrated moment by moment.",
    );
    for ((d, c), (_, b, _)) in &used {
        let _ = writeln!(
            out,
            "gpuquota_gpu_borrowed_hours{{department=\"{}\",card_type=\"{}\"}} {}",
            esc(d),
            esc(c),
            card_hours(*b)
        );
    }
    let _ = writeln!(out, "# TYPE gpuquota_cost_currency gauge");
    let _ = writeln!(out, "# UNIT gpuquota_cost_currency currency");
    let _ = writeln!(
        out,
        "# HELP gpuquota_cost_currency The bill's total (cost and idle share) in the metering window, in major units of the currency label."
    );
    for ((d, c), (_, _, m)) in &used {
        let _ = writeln!(
            out,
            "gpuquota_cost_currency{{department=\"{}\",card_type=\"{}\",currency=\"{}\"}} {}",
            esc(d),
            esc(c),
            esc(&report.currency.code),
            report.currency.format_minor(*m)
        );
    }
    if !budgets.is_empty() {
        let rows: Vec<(String, String, String, &SnapshotBudget)> = budgets
            .iter()
            .map(|b| {
                let dept = match &b.rule.scope {
                    gpuquota_model::budget::Scope::Queue(q) => q.clone(),
                    gpuquota_model::budget::Scope::Namespaces(ns) => ns.join(","),
                };
                let card = b.rule.card_type.clone().unwrap_or_else(|| "*".into());
                (esc(&b.rule.name), esc(&dept), esc(&card), b)
            })
            .collect();
        let series: [Family; 3] = [
            (
                "gpuquota_budget_gpu_hours",
                "GPU-hours a budget grants per period.",
                |b| hours(b.budget_units),
            ),
            (
                "gpuquota_budget_used_gpu_hours",
                "GPU-hours charged to a budget in the metering window.",
                |b| hours(b.used_units),
            ),
            (
                "gpuquota_budget_remaining_gpu_hours",
                "GPU-hours left in a budget's period (negative after an overrun).",
                |b| hours(b.budget_units - b.used_units),
            ),
        ];
        for (name, help, value) in series {
            family(&mut out, name, help);
            for (n, d, c, b) in &rows {
                let _ = writeln!(
                    out,
                    "{name}{{budget=\"{n}\",department=\"{d}\",card_type=\"{c}\"}} {}",
                    value(b)
                );
            }
        }
    }
    out.push_str("# EOF\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every family name this file writes is in [`FAMILIES`], and every name there is written.
    #[test]
    fn families_list_every_family_written() {
        let source = include_str!("openmetrics.rs");
        let code = &source[..source.find("mod tests").unwrap_or(source.len())];
        let mut written: Vec<&str> = code
            .split('"')
            .filter(|t| t.starts_with("gpuquota_") && !t.contains(['{', ' ']))
            .collect();
        // names inside format strings: `gpuquota_x{{…`
        for t in code.split('"') {
            if let Some(name) = t.strip_prefix("# TYPE ").and_then(|x| x.split(' ').next())
                && name.starts_with("gpuquota_")
            {
                written.push(name);
            }
        }
        written.sort_unstable();
        written.dedup();
        let mut listed: Vec<&str> = FAMILIES.iter().map(|f| f.0).collect();
        listed.sort_unstable();
        assert_eq!(written, listed);
    }
}
