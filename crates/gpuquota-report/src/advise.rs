//! The page of an advice (`gpuquota advise --report`).

use gpuquota_advise::output::{Advice, Row as AdviceRow};
use gpuquota_sim::chart;
use gpuquota_sim::diff::Simulated;

use crate::page::{Block, Cell, Page, Row, Section, Table};

/// The scenario as written and the recommendation, simulated (a run of either engine each).
pub type WhatIf<'a> = (Simulated<'a>, Simulated<'a>);

/// The page of an advice: what the advisor recommends and why (the same sentences as the
/// table output), the search (method, grid points, simulations), the Pareto front with every
/// knob and figure (the recommended row marked, figure names `recommended:METRIC` and
/// `current:METRIC`), the closest configurations when none is feasible, the one-at-a-time
/// explanation, and, with `what_if`, the `sim diff` of the scenario as written (A) against
/// the recommendation (B): its table and its picture.
///
/// # Errors
/// The plotting backend's error as text.
///
/// # Complexity
/// O(front × (knobs + figures)) plus the diff picture's.
pub fn advise(a: &Advice, what_if: Option<WhatIf<'_>>) -> Result<String, String> {
    let mut p = Page::new(
        format!("{}: advice", a.name),
        format!(
            "gpuquota advise over {} ({} configurations, {} simulated)",
            a.scenario, a.search.points, a.search.simulated
        ),
    );

    let mut s = Section::new("recommendation", "What the advisor recommends and why");
    s.push(Block::Pre(a.summary()));
    let mut facts = Table::new(
        "The scenario as written against the recommendation",
        &["figure", "as written", "recommended"],
    );
    for (m, v) in &a.current.figures {
        let rec = a
            .recommended
            .as_ref()
            .and_then(|r| r.figures.get(m))
            .map(|x| a.shown(m, x))
            .unwrap_or_else(|| "-".into());
        facts.push(Row::new([
            Cell::new(m.clone()),
            Cell::figure(a.shown(m, v), format!("current:{m}")),
            Cell::figure(rec, format!("recommended:{m}")),
        ]));
    }
    s.push(Block::Table(facts));
    p.push(s);

    let mut s = Section::new("front", "The Pareto front");
    let mut sentences = vec![format!(
        "Method: {}. {} grid points, {} simulated.",
        a.search.method, a.search.points, a.search.simulated
    )];
    if let Some(n) = &a.search.note {
        sentences.push(n.clone());
    }
    sentences.push(format!(
        "Objectives, in tie-break order: {}. Constraints: {}.",
        a.objectives.join(", "),
        if a.constraints.is_empty() {
            "none".to_owned()
        } else {
            a.constraints.join(", ")
        }
    ));
    s.push(Block::Sentences(sentences));
    s.push(Block::Table(rows_table(
        a,
        "One row per configuration no other beats on every objective",
        &a.front,
    )));
    if !a.closest.is_empty() {
        s.push(Block::Sentences(vec![format!(
            "No configuration meets every constraint; the binding ones: {}.",
            a.binding.join("; ")
        )]));
        s.push(Block::Table(rows_table(
            a,
            "The configurations closest to feasible",
            &a.closest,
        )));
    }
    p.push(s);

    if !a.explanation.is_empty() {
        let mut s = Section::new("explain", "Which knob moves which figure");
        s.push(Block::Sentences(a.explanation.clone()));
        p.push(s);
    }

    if let Some((a, b)) = what_if {
        let d = gpuquota_sim::diff::diff_runs(a, b);
        let mut s = Section::new(
            "what-if",
            "The scenario as written (A) against the recommendation (B)",
        );
        let svg = gpuquota_sim::diff::svg_runs(a, b)?;
        s.push(Block::Chart {
            svg: chart::inline(
                &svg,
                "advice-diff",
                "As written against recommended, per department",
                "The sim diff picture of the scenario as written and the recommendation; the text below gives every figure.",
            ),
            table: None,
        });
        s.push(Block::Pre(gpuquota_sim::diff::table(&d)));
        p.push(s);
    }
    Ok(p.render())
}

/// Rows of the front (or the closest configurations): the point, each knob, each figure,
/// whether it is feasible and what it violates.
fn rows_table(a: &Advice, caption: &str, rows: &[AdviceRow]) -> Table {
    let metrics: Vec<String> = a.current.figures.keys().cloned().collect();
    let mut head: Vec<String> = vec!["point".into()];
    head.extend(a.knobs.iter().map(|k| k.path.clone()));
    head.extend(metrics.iter().cloned());
    head.push("feasible".into());
    head.push("violated".into());
    let head_ref: Vec<&str> = head.iter().map(String::as_str).collect();
    let mut t = Table::new(caption, &head_ref);
    for r in rows {
        let recommended = a.is_recommended(r);
        let point = r
            .point
            .map_or_else(|| "as written".to_owned(), |n| n.to_string());
        let mut cells = vec![Cell::new(if recommended {
            format!("{point} (recommended)")
        } else {
            point
        })];
        cells.extend(
            a.knobs
                .iter()
                .map(|k| Cell::new(r.knobs.get(&k.path).cloned().unwrap_or_default())),
        );
        cells.extend(metrics.iter().map(|m| {
            Cell::new(
                r.figures
                    .get(m)
                    .map(|v| a.shown(m, v))
                    .unwrap_or_else(|| "-".into()),
            )
        }));
        cells.push(Cell::new(if r.feasible { "yes" } else { "no" }));
        cells.push(Cell::new(r.violated.join("; ")));
        let mut row = Row {
            cells,
            key: r.point.map(|n| format!("point|{n}")),
            ..Row::default()
        };
        if recommended {
            row = row.as_total();
        }
        t.push(row);
    }
    t
}
