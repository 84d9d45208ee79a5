//! The pages: one function per kind of run.

use std::collections::BTreeMap;

use gpuquota_metering::report::ReportOut;
use gpuquota_sim::chart;
use gpuquota_sim::diff::Simulated;
use gpuquota_sim::kai::{KaiOutcome, KaiScenario};
use gpuquota_sim::report::{Report, human_ms};
use gpuquota_sim::scenario::Scenario;

use crate::month::{self, bill_sentence, bill_table, budget_sentences, budget_table, when};
use crate::page::{Block, Cell, Fact, Page, Row, Section, Table};

/// The page of a Kueue or ResourceQuota run (`gpuquota sim --report`): summary sentences
/// and key figures, the bill (with `spec.metering`), the budgets, usage over time per card
/// type, time to admission per class, preemptions and events per day, the longest waiters,
/// and the scenario's inputs (collapsed).
///
/// # Errors
/// The plotting backend's error as text.
///
/// # Complexity
/// O(runs log runs + the usage picture's).
pub fn sim(sc: &Scenario, r: &Report) -> Result<String, String> {
    let mut p = Page::new(
        format!("{}: simulated run", r.name),
        format!(
            "gpuquota sim, engine {}, from {} to {} (UTC)",
            sc.engine.as_str(),
            when(r.start, 0),
            when(r.start, r.outcome.end_ms)
        ),
    );
    (p.departments, p.colours) = month::departments(sc, r);
    for s in month::sections(sc, r, "")? {
        p.push(s);
    }
    Ok(p.render())
}

/// The page of a KAI run (`gpuquota sim --report` on a KAI scenario): key figures, the
/// allocation against fair share per queue over time (the `--plot` picture) with the
/// per-queue table, time to admission per class, evictions per action, budgets, the
/// bill and, for a replayed recorded history, the fidelity section (as a Kueue run's).
///
/// # Errors
/// The plotting backend's error as text.
///
/// # Complexity
/// O(jobs + sessions × queues).
pub fn kai(sc: &KaiScenario, o: &KaiOutcome) -> Result<String, String> {
    let mut p = Page::new(
        format!("{}: simulated KAI run", o.name),
        format!(
            "gpuquota sim, engine kai, from {} to {} (UTC), a session every {}",
            when(o.start, 0),
            when(o.start, o.end_ms),
            human_ms(o.session_interval_ms)
        ),
    );
    for s in kai_sections(sc, o, "")? {
        p.push(s);
    }
    Ok(p.render())
}

/// The sections of a KAI run.
fn kai_sections(sc: &KaiScenario, o: &KaiOutcome, prefix: &str) -> Result<Vec<Section>, String> {
    let id = |s: &str| format!("{prefix}{s}");
    let out = o.to_output();
    let name = &o.name;
    let mut sections = Vec::new();
    let mut s = Section::new(id("summary"), format!("{name}: what happened"));
    let mut facts = vec![
        Fact {
            label: "engine".into(),
            value: "kai".into(),
            key: id("engine"),
        },
        Fact {
            label: "jobs".into(),
            value: out.workloads.len().to_string(),
            key: id("workloads"),
        },
        Fact {
            label: "sessions".into(),
            value: out.sessions.to_string(),
            key: id("sessions"),
        },
        Fact {
            label: "evictions".into(),
            value: out.preemptions.to_string(),
            key: id("preemptions"),
        },
    ];
    if let Some(c) = &out.chargeback {
        facts.push(Fact {
            label: format!("bill ({})", c.meter.currency),
            value: c.meter.totals.cost.to_string(),
            key: id("bill"),
        });
    }
    s.push(Block::Facts(facts));
    let mut sentences = Vec::new();
    let ev: Vec<String> = out
        .evictions
        .iter()
        .map(|(a, n)| format!("{n} by {a}"))
        .collect();
    sentences.push(if ev.is_empty() {
        "No run was evicted.".to_owned()
    } else {
        format!("{} runs were evicted ({}).", out.preemptions, ev.join(", "))
    });
    let never = out.workloads.iter().filter(|w| w.runs.is_empty()).count();
    if never > 0 {
        sentences.push(format!("{never} jobs never ran."));
    }
    if let Some(b) = &out.budgets {
        sentences.extend(budget_sentences(b, o.start));
    }
    if let Some(c) = &out.chargeback {
        sentences.push(bill_sentence(&c.meter));
    }
    s.push(Block::Sentences(sentences));
    sections.push(s);
    if let Some(t) = crate::month::timeline_rows(&out.timeline, o.start, true) {
        let mut s = Section::new(id("timeline"), format!("{name}: the timeline"));
        s.push(Block::Sentences(o.timeline_sentences()));
        s.push(Block::Table(t));
        sections.push(s);
    }

    if let Some(c) = &out.chargeback {
        let mut s = Section::new(id("bill"), format!("{name}: the bill"));
        s.push(Block::Table(bill_table(&c.meter, prefix)));
        sections.push(s);
    }
    if let Some(b) = &out.budgets {
        let mut s = Section::new(id("budgets"), format!("{name}: budgets"));
        s.push(Block::Table(budget_table(b, o.start)));
        sections.push(s);
    }

    let mut t = Table::new(
        "Per queue: mean GPUs allocated, and the last session's fair share and allocation",
        &[
            "queue",
            "parent",
            "mean allocated GPUs",
            "last fair share",
            "last allocated",
        ],
    );
    let last = |v: &[Option<f64>]| {
        v.last()
            .copied()
            .flatten()
            .map(|x| format!("{x:.2}"))
            .unwrap_or_default()
    };
    for (q, x) in &out.queues {
        t.push(
            Row::new([
                q.clone(),
                x.parent.clone().unwrap_or_default(),
                x.mean_allocated_gpu
                    .map(|m| format!("{m:.2}"))
                    .unwrap_or_default(),
                last(&x.fair_share),
                last(&x.allocated),
            ])
            .keyed(format!("queue|{q}")),
        );
    }
    let mut s = Section::new(
        id("usage"),
        format!("{name}: allocation against fair share"),
    );
    match gpuquota_sim::kai::plot::svg(sc, o) {
        Ok(svg) => s.push(Block::Chart {
            svg: chart::inline(
                &svg,
                &id("usage-chart"),
                &format!("{name}: GPUs allocated per queue against fair share"),
                &if out.timeline.is_empty() {
                    "Per leaf queue, GPUs allocated after each session (filled) against the fair share the session divided (dashed); the table below gives each queue's mean and last values.".to_owned()
                } else {
                    "Per leaf queue, GPUs allocated after each session (filled) against the fair share the session divided (dashed); the table below gives each queue's mean and last values. Teal rules labelled #N mark the events of the scenario's timeline; the timeline table says what each did.".to_owned()
                },
            ),
            table: Some(t),
        }),
        Err(e) => s.push(Block::Paragraph(format!("No chart: {e}."))).push(Block::Table(t)),
    };
    sections.push(s);

    // time to admission (first binding) per class, from the jobs
    let mut classes: BTreeMap<String, gpuquota_sim::report::ClassStats> = BTreeMap::new();
    for j in &o.jobs {
        let c =
            classes
                .entry(j.class.clone())
                .or_insert_with(|| gpuquota_sim::report::ClassStats {
                    count: 0,
                    finished: 0,
                    evictions: 0,
                    admission_ms: Vec::new(),
                    recorder_admission_total: 0,
                    recorder_finish_total: 0,
                    finish_ms: Vec::new(),
                    requeue_ms: Vec::new(),
                });
        c.count += 1;
        if let Some(f) = j.first_start_ms {
            c.admission_ms.push(f.saturating_sub(j.created_ms));
        }
    }
    for c in classes.values_mut() {
        c.admission_ms.sort_unstable();
    }
    let mut s = Section::new(id("admission"), format!("{name}: time to admission"));
    for b in month::admission_blocks(&classes, &id("admission-chart"), name) {
        s.push(b);
    }
    sections.push(s);

    let mut t = Table::new("Evictions per action", &["action", "runs"]);
    for (a, n) in &out.evictions {
        t.push(Row::new([a.clone(), n.to_string()]));
    }
    t.push(
        Row::new([
            Cell::new("total"),
            Cell::figure(out.preemptions.to_string(), id("preemption-count")),
        ])
        .as_total(),
    );
    let mut s = Section::new(id("events"), format!("{name}: evictions"));
    s.push(Block::Table(t));
    sections.push(s);

    if let Some(f) = &out.fidelity {
        sections.push(crate::fidelity::section(f, &id("fidelity"), name, prefix));
    }
    Ok(sections)
}

/// The page of `sim diff` (`--report`): the per-department comparison (A, B and B − A of
/// every metric), both runs' summaries and bills side by side, both usages in one picture,
/// and each run's own sections.
///
/// # Errors
/// The plotting backend's error as text.
///
/// # Complexity
/// Both runs' pages'.
pub fn diff(sa: &Scenario, a: &Report, sb: &Scenario, b: &Report) -> Result<String, String> {
    diff_runs(Simulated::Kueue(sa, a), Simulated::Kueue(sb, b))
}

/// The departments of a run in colour order.
fn run_departments(run: Simulated<'_>) -> Vec<String> {
    match run {
        Simulated::Kueue(sc, r) => month::departments(sc, r).0,
        Simulated::Kai(sc, o) => {
            let ds = gpuquota_sim::diff::departments_of(sc.metering.as_ref());
            let mut names: Vec<String> = o
                .jobs
                .iter()
                .map(|j| {
                    let ns = j.key.split('/').next().unwrap_or("");
                    ds.get(ns).cloned().unwrap_or_else(|| ns.to_owned())
                })
                .collect();
            if let Some(c) = &o.chargeback {
                names.extend(c.meter.lines.iter().map(|l| l.department.clone()));
            }
            names.sort();
            names.dedup();
            chart::department_order(sc.metering.as_ref(), names.iter().map(String::as_str))
        }
    }
}

/// [`diff`] of two runs of either engine (Kueue, ResourceQuota, KAI): the same sections,
/// each run's details as its own page shows them.
///
/// # Errors
/// The plotting backend's error as text.
///
/// # Complexity
/// Both runs' pages'.
pub fn diff_runs(a: Simulated<'_>, b: Simulated<'_>) -> Result<String, String> {
    let doc = gpuquota_sim::diff::diff_runs(a, b);
    let mut p = Page::new(
        format!("{} against {}", doc.b, doc.a),
        format!("gpuquota sim diff: A = {}, B = {}", doc.a, doc.b),
    );
    let mut da = run_departments(a);
    let db = run_departments(b);
    for d in db {
        if !da.contains(&d) {
            da.push(d);
        }
    }
    let order = chart::department_order(a.metering(), da.iter().map(String::as_str));
    p.colours = order
        .iter()
        .map(|d| chart::department_hex(&order, d))
        .collect();
    p.departments = order;

    let mut s = Section::new("changed", "What changed");
    let mut sentences = Vec::new();
    if let Some(w) = doc.workloads.warning() {
        sentences.push(w);
    }
    for (d, x) in &doc.departments {
        for (metric, [va, vb, delta]) in x.rows() {
            if va != vb
                && delta != "-"
                && delta != "0"
                && !delta
                    .trim_start_matches(['+', '-'])
                    .chars()
                    .all(|c| c == '0' || c == '.')
            {
                sentences.push(format!("{d}: {metric} {va} → {vb} ({delta})."));
            }
        }
    }
    if sentences.is_empty() {
        sentences.push("No department's figures differ.".to_owned());
    }
    s.push(Block::Sentences(sentences));
    let mut t = Table::new(
        "Per department: A, B and B − A of every metric (- : not applicable)",
        &["department", "metric", "A", "B", "B − A"],
    );
    for (d, x) in &doc.departments {
        for (metric, [va, vb, delta]) in x.rows() {
            t.push(
                Row::new([
                    Cell::new(d.clone()),
                    Cell::new(metric),
                    Cell::figure(va, format!("a:department-{metric}")),
                    Cell::figure(vb, format!("b:department-{metric}")),
                    Cell::new(delta),
                ])
                .of(d.clone())
                .keyed(format!("{d}|{metric}")),
            );
        }
    }
    s.push(Block::Table(t));
    p.push(s);

    let mut s = Section::new("side-by-side", "Both runs side by side");
    let col = |run: Simulated<'_>, prefix: &str| -> Vec<Block> {
        let (workloads, preemptions, sentences, bill) = match run {
            Simulated::Kueue(_, r) => (
                r.outcome.workloads.len(),
                r.preemptions,
                Some(r.summary_sentences()),
                r.chargeback.as_ref(),
            ),
            Simulated::Kai(_, o) => (o.jobs.len(), o.evictions, None, o.chargeback.as_ref()),
        };
        let mut v = vec![Block::Facts(vec![
            Fact {
                label: "workloads".into(),
                value: workloads.to_string(),
                key: format!("{prefix}workloads"),
            },
            Fact {
                label: "preemptions".into(),
                value: preemptions.to_string(),
                key: format!("{prefix}preemptions"),
            },
        ])];
        if let Some(s) = sentences {
            v.push(Block::Sentences(s));
        }
        if let Some(c) = bill {
            v.push(Block::Table(bill_table(&c.meter, prefix)));
        }
        v
    };
    s.push(Block::Columns(vec![
        (format!("A: {}", doc.a), col(a, "a:")),
        (format!("B: {}", doc.b), col(b, "b:")),
    ]));
    match gpuquota_sim::diff::svg_runs(a, b) {
        Ok(svg) => {
            s.push(Block::Chart {
                svg: chart::inline(
                    &svg,
                    "diff-chart",
                    &format!("GPUs in use per department: {} and {}", doc.a, doc.b),
                    "Both runs' usage per department over time, side by side, against capacity and nominal quota; the per-department table above gives the figures.",
                ),
                table: None,
            });
        }
        Err(e) => {
            s.push(Block::Paragraph(format!("No usage chart: {e}.")));
        }
    }
    p.push(s);
    for (label, run, prefix) in [("A", a, "a-"), ("B", b, "b-")] {
        let mut inner = Vec::new();
        let sections = match run {
            Simulated::Kueue(sc, r) => month::sections_with(sc, r, prefix, false)?,
            Simulated::Kai(sc, o) => kai_sections(sc, o, prefix)?,
        };
        for sec in sections {
            inner.push(Block::Paragraph(sec.heading.clone()));
            inner.extend(sec.blocks);
        }
        let mut s = Section::new(
            format!("{prefix}details"),
            format!("{label}: {} in detail", run.name()),
        );
        s.push(Block::Details {
            summary: format!("Every section of run {label} ({})", run.name()),
            blocks: inner,
        });
        p.push(s);
    }
    Ok(p.render())
}

/// The page of a sweep (`gpuquota sim sweep --report`): one row per run (parameters,
/// engine, mean usage, GPU-hours, lost GPU-hours, preemptions, time to admission per class,
/// cost) and the sweep's picture.
///
/// # Errors
/// The plotting backend's error as text.
///
/// # Complexity
/// O(runs × classes).
pub fn sweep(t: &gpuquota_sim::sweep::Table) -> Result<String, String> {
    let mut p = Page::new(
        "Policy sweep",
        format!(
            "gpuquota sim sweep: {} runs over {}",
            t.runs,
            if t.parameters.is_empty() {
                "no parameter".to_owned()
            } else {
                t.parameters.join(", ")
            }
        ),
    );
    let classes: Vec<String> = {
        let mut c: Vec<String> = t
            .rows
            .iter()
            .flat_map(|r| r.time_to_admission_ms.keys().cloned())
            .collect();
        c.sort();
        c.dedup();
        c
    };
    let mut head: Vec<String> = vec!["run".into()];
    head.extend(t.parameters.iter().cloned());
    head.extend(
        [
            "engine",
            "mean usage %",
            "GPU-hours",
            "lost GPU-hours",
            "preemptions",
            "cost",
        ]
        .map(String::from),
    );
    head.extend(
        classes
            .iter()
            .map(|c| format!("wait {}", month::class_name(c))),
    );
    let head_ref: Vec<&str> = head.iter().map(String::as_str).collect();
    let mut table = Table::new(
        "One row per run (time to admission: the class's mean)",
        &head_ref,
    );
    let mut best: Option<(f64, usize)> = None;
    for r in &t.rows {
        let mut cells = vec![Cell::new(r.run.to_string())];
        cells.extend(
            t.parameters
                .iter()
                .map(|k| Cell::new(r.parameters.get(k).cloned().unwrap_or_default())),
        );
        let cost = r
            .cost
            .as_ref()
            .map(|c| {
                format!(
                    "{}{}",
                    c.total,
                    c.currency
                        .as_ref()
                        .map(|x| format!(" {x}"))
                        .unwrap_or_default()
                )
            })
            .unwrap_or_default();
        cells.extend([
            Cell::new(r.engine.clone()),
            Cell::new(format!("{:.1}", r.mean_usage_percent)),
            Cell::new(format!("{:.1}", r.gpu_hours)),
            Cell::new(format!("{:.1}", r.lost_gpu_hours)),
            Cell::figure(
                r.preemptions.to_string(),
                format!("run{}:preemptions", r.run),
            ),
            Cell::figure(cost, format!("run{}:cost", r.run)),
        ]);
        cells.extend(classes.iter().map(|c| {
            Cell::new(
                r.time_to_admission_ms
                    .get(c)
                    .map(|m| human_ms(*m))
                    .unwrap_or_default(),
            )
        }));
        table.push(Row {
            cells,
            key: Some(format!("run|{}", r.run)),
            ..Row::default()
        });
        if best.is_none_or(|(u, _)| r.mean_usage_percent > u) {
            best = Some((r.mean_usage_percent, r.run));
        }
    }
    let mut s = Section::new("runs", "The runs");
    let mut sentences = vec![format!("{} runs.", t.rows.len())];
    if let Some((u, run)) = best {
        sentences.push(format!("Run {run} has the highest mean usage, {u:.1}%."));
    }
    let least = t
        .rows
        .iter()
        .min_by(|a, b| a.preemptions.cmp(&b.preemptions).then(a.run.cmp(&b.run)));
    if let Some(r) = least {
        sentences.push(format!(
            "Run {} has the fewest preemptions, {}.",
            r.run, r.preemptions
        ));
    }
    s.push(Block::Sentences(sentences));
    match t.svg() {
        Ok(svg) => s.push(Block::Chart {
            svg: chart::inline(&svg, "sweep-chart", "The sweep's runs compared", "Per run, the sweep's figures as drawn by the --plot picture; the table below gives every figure."),
            table: Some(table),
        }),
        Err(_) => s.push(Block::Table(table)),
    };
    p.push(s);
    if let Some(f) = &t.fingerprint {
        let mut d = Table::new("SHA-256 of what the sweep read", &["input", "digest"]);
        d.push(Row::new(["scenario", f.scenario.as_str()]));
        d.push(Row::new(["parameter grid", f.grid.as_str()]));
        for (k, v) in &f.files {
            d.push(Row::new([k.as_str(), v.as_str()]));
        }
        let mut s = Section::new("inputs", "Inputs");
        s.push(Block::Details {
            summary: "The sweep's inputs".into(),
            blocks: vec![Block::Table(d)],
        });
        p.push(s);
    }
    Ok(p.render())
}

/// The page of a metering bill (`gpuquota meter --report`): the total, per department the
/// sum of its lines, the bill per department and card type with the idle rows, and the
/// warnings.
///
/// # Complexity
/// O(lines).
pub fn meter(m: &ReportOut) -> String {
    let mut p = Page::new(
        "GPU bill",
        format!(
            "gpuquota meter: {} to {} ({})",
            crate::month::time_text(&m.window.start),
            crate::month::time_text(&m.window.end),
            m.currency
        ),
    );
    let mut names: Vec<String> = m.lines.iter().map(|l| l.department.clone()).collect();
    names.sort();
    names.dedup();
    p.colours = names
        .iter()
        .map(|d| chart::department_hex(&names, d))
        .collect();
    p.departments = names;
    let mut s = Section::new("summary", "Summary");
    s.push(Block::Facts(vec![
        Fact {
            label: format!("total ({})", m.currency),
            value: m.totals.cost.to_string(),
            key: "bill".into(),
        },
        Fact {
            label: "lines".into(),
            value: m.lines.len().to_string(),
            key: "lines".into(),
        },
    ]));
    let mut sentences = vec![bill_sentence(m)];
    if m.totals.drift.minor_units() != 0 {
        sentences.push(format!(
            "Rounding moved {} against the exact cost {}.",
            m.totals.drift, m.totals.exact_cost
        ));
    }
    s.push(Block::Sentences(sentences));
    p.push(s);
    let mut s = Section::new("bill", "The bill");
    s.push(Block::Table(bill_table(m, "")));
    if !m.warnings.is_empty() {
        s.push(Block::Paragraph("Warnings:".into()));
        s.push(Block::Sentences(m.warnings.clone()));
    }
    p.push(s);
    p.render()
}

/// The page of the seed platform's default run (`gpuquota --out DIR` writes it as
/// `report.html`): the month's account in sentences, the Kueue month in full, the
/// ResourceQuota-only month against it, the KAI month, and the scenario files (collapsed).
///
/// # Errors
/// The plotting backend's error as text.
///
/// # Complexity
/// The runs' pages'.
pub fn seed(m: &gpuquota_sim::seed::SeedMonth) -> Result<String, String> {
    let mut p = Page::new(
        "The seed platform's month",
        "gpuquota: three servers, 24 cards, five departments; April 2026 simulated under each control",
    );
    let mut s = Section::new("account", "The month in sentences");
    let text = gpuquota_sim::seed::summary(m);
    for para in text.split("\n\n") {
        let para = para.trim_end();
        if !para.is_empty() {
            s.push(Block::Pre(para.to_owned()));
        }
    }
    p.push(s);
    let kueue = m
        .runs
        .iter()
        .find(|(_, sc, _)| sc.engine == gpuquota_sim::Engine::Kueue);
    if let Some((_, sc, r)) = kueue {
        (p.departments, p.colours) = month::departments(sc, r);
        for s in month::sections(sc, r, "kueue-")? {
            p.push(rename_figures(s, "kueue-", "kueue:"));
        }
    }
    for (label, sc, r) in &m.runs {
        if sc.engine == gpuquota_sim::Engine::Kueue {
            continue;
        }
        let prefix = format!("{}-", sc.engine.as_str());
        let mut inner = Vec::new();
        for sec in month::sections_with(sc, r, &prefix, false)? {
            inner.push(Block::Paragraph(sec.heading.clone()));
            inner.extend(rename_figures(sec, &prefix, &format!("{}:", sc.engine.as_str())).blocks);
        }
        let mut s = Section::new(format!("{prefix}month"), format!("{label}: the same month"));
        s.push(Block::Details {
            summary: format!("Every section of the {label} run"),
            blocks: inner,
        });
        p.push(s);
    }
    let (ksc, ko) = &m.kai;
    let mut inner = Vec::new();
    for sec in kai_sections(ksc, ko, "kai-")? {
        inner.push(Block::Paragraph(sec.heading.clone()));
        inner.extend(rename_figures(sec, "kai-", "kai:").blocks);
    }
    let mut s = Section::new("kai-month", "KAI / Run:ai: the same month");
    s.push(Block::Details {
        summary: "Every section of the KAI run".into(),
        blocks: inner,
    });
    p.push(s);
    let mut s = Section::new("files", "The scenario files");
    let mut files = Vec::new();
    for (name, text) in [
        ("platform.yaml", gpuquota_sim::seed::PLATFORM),
        ("month.yaml", gpuquota_sim::seed::MONTH),
        ("kueue.yaml", gpuquota_sim::seed::KUEUE),
        ("resourcequota.yaml", gpuquota_sim::seed::RESOURCEQUOTA),
        ("kai-platform.yaml", gpuquota_sim::seed::KAI_PLATFORM),
        ("kai-month.yaml", gpuquota_sim::seed::KAI_MONTH),
        ("kai.yaml", gpuquota_sim::seed::KAI),
    ] {
        files.push(Block::Details {
            summary: name.to_owned(),
            blocks: vec![Block::Pre(text.to_owned())],
        });
    }
    s.push(Block::Details {
        summary: "The files the runs read".into(),
        blocks: files,
    });
    p.push(s);
    Ok(p.render())
}

/// The section with its figures' names' `from` prefix (the ids') turned into `to`.
fn rename_figures(mut s: Section, from: &str, to: &str) -> Section {
    fn blocks(v: &mut [Block], from: &str, to: &str) {
        for b in v {
            match b {
                Block::Facts(f) => {
                    for x in f {
                        if let Some(rest) = x.key.strip_prefix(from) {
                            x.key = format!("{to}{rest}");
                        }
                    }
                }
                Block::Table(t) | Block::Chart { table: Some(t), .. } => {
                    for r in &mut t.rows {
                        for c in &mut r.cells {
                            if let Some(rest) =
                                c.figure.as_deref().and_then(|f| f.strip_prefix(from))
                            {
                                c.figure = Some(format!("{to}{rest}"));
                            }
                        }
                    }
                }
                Block::Details { blocks: b, .. } => blocks(b, from, to),
                Block::Columns(c) => {
                    for (_, b) in c {
                        blocks(b, from, to);
                    }
                }
                _ => {}
            }
        }
    }
    blocks(&mut s.blocks, from, to);
    s
}
