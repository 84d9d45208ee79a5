//! The pictures, read back from their SVG text: step functions on a date axis, one panel
//! per card type with its capacity and nominal lines, preemptions and spent budgets marked
//! at their instant, one colour per department in every picture, the legend beside the
//! panels, KAI's leaf queues only, and sweep columns labelled with the swept values.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{budget, files};
use gpuquota_sim::{kai, scenario, sweep};

/// The night of `tests/data` (etl 4 GPUs 0–1 h, nightly 4 GPUs 1–2 h preempted by the
/// 8-GPU fine-tuning 2–6 h, nightly again 6–12 h) with one card type `H200` of capacity 8
/// over flavor `h200-nvl`, departments `science` (namespace data-science) and `analytics`
/// (namespace batch), and an 8 GPU-hour `Notify` budget on queue batch: spent at 2 h.
fn night_text(name: &str, fair_sharing: bool) -> String {
    format!(
        r#"apiVersion: gpuquota.dev/v1alpha1
kind: Simulation
metadata: {{name: {name}}}
spec:
  engine: kueue
  cluster: [platform.yaml, budget.yaml]
  start: "2026-04-01T00:00:00Z"
  end: "2026-04-01T12:00:00Z"
  kueue: {{fairSharing: {fair_sharing}}}
  workloads:
  - file: jobs.yaml
  metering:
    currency: EUR
    cardTypes:
    - {{name: H200, model: NVIDIA H200 NVL, pricePerHour: "4.50", capacity: 8, flavors: [h200-nvl]}}
    departments:
    - {{name: science, namespaces: [data-science]}}
    - {{name: analytics, namespaces: [batch]}}
"#
    )
}

fn night(name: &str, fair_sharing: bool) -> (scenario::Scenario, gpuquota_sim::Report) {
    let data = |f: &str| {
        std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/data")
                .join(f),
        )
        .expect("test data")
    };
    let read = files(vec![
        ("platform.yaml", data("platform.yaml")),
        ("jobs.yaml", data("jobs.yaml")),
        (
            "budget.yaml",
            budget(
                "analytics-night",
                r#"{queue: batch, gpuHours: "8", period: monthly, whenSpent: Notify}"#,
            ),
        ),
    ]);
    let text = night_text(name, fair_sharing);
    let sim =
        gpuquota_sim::fuzzing::scenario("night.yaml", &text, name, &read).expect("valid scenario");
    let sc = sim.kueue().expect("a Kueue scenario");
    let r = gpuquota_sim::fuzzing::run_kueue(&sim).expect("simulates");
    (sc.clone(), r)
}

/// Every `<tag …>` element: its attributes and, for `text`, its content.
fn elements(svg: &str, tag: &str) -> Vec<(BTreeMap<String, String>, String)> {
    let open = format!("<{tag} ");
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find(&open) {
        rest = &rest[i + open.len()..];
        let end = rest.find('>').expect("closed tag");
        let mut attrs = BTreeMap::new();
        let mut a = &rest[..end];
        while let Some(eq) = a.find("=\"") {
            let key = a[..eq].trim().to_owned();
            let v = &a[eq + 2..];
            let close = v.find('"').expect("quoted");
            attrs.insert(key, v[..close].to_owned());
            a = &v[close + 1..];
        }
        let content = if tag == "text" {
            let c = &rest[end + 1..];
            c[..c.find("</text>").expect("text end")].trim().to_owned()
        } else {
            String::new()
        };
        out.push((attrs, content));
    }
    out
}

fn points(s: &str) -> Vec<(i32, i32)> {
    s.split_whitespace()
        .map(|p| {
            let (x, y) = p.split_once(',').expect("x,y");
            (x.parse().expect("x"), y.parse().expect("y"))
        })
        .collect()
}

/// The filled polygons of colour `fill`.
fn polygons(svg: &str, fill: &str) -> Vec<Vec<(i32, i32)>> {
    elements(svg, "polygon")
        .into_iter()
        .filter(|(a, _)| a["fill"] == fill)
        .map(|(a, _)| points(&a["points"]))
        .collect()
}

/// The x of the (first) text reading `label`.
fn text_x(svg: &str, label: &str) -> i32 {
    elements(svg, "text")
        .into_iter()
        .find(|(_, c)| c == label)
        .unwrap_or_else(|| panic!("no text {label:?}"))
        .0["x"]
        .parse()
        .expect("x")
}

/// Legend entries: each filled square's colour and the text beside it.
fn legend(svg: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut rest = svg;
    while let Some(i) = rest.find("<rect ") {
        rest = &rest[i..];
        let (a, _) = elements(rest, "rect").swap_remove(0);
        let (_, label) = elements(rest, "text").swap_remove(0);
        if a.get("width").map(String::as_str) == Some("18") {
            out.insert(label, a["fill"].clone());
        }
        rest = &rest[6..];
    }
    out
}

const ANALYTICS: &str = "#4E79A7"; // first of the sorted departments
const SCIENCE: &str = "#F28E2B"; // second
const PREEMPTION: &str = "#D62728";

#[test]
fn kueue_plot_is_steps_on_dates_with_capacity_marks_and_legend_outside() {
    let (sc, r) = night("night", false);
    let svg = gpuquota_sim::plot::svg(&sc, &r).expect("plots");
    assert_eq!(
        svg,
        gpuquota_sim::plot::svg(&sc, &r).expect("plots"),
        "same bytes twice"
    );
    assert!(svg.contains("H200: cards in use"));
    // 12 h: ticks every 2 h, labelled month-day hour
    let x = |h: u32| text_x(&svg, &format!("04-01 {h:02}:00"));
    let (x0, x2, x6, x12) = (x(0), x(2), x(6), x(12));
    assert!(x0 < x2 && x2 < x6 && x6 < x12);
    assert!(((x6 - x0) - 3 * (x2 - x0)).abs() <= 1, "a linear time axis");
    // the capacity line: 8 cards across the panel
    let cap: Vec<Vec<(i32, i32)>> = elements(&svg, "polyline")
        .into_iter()
        .filter(|(a, _)| a["stroke"] == "#888888" && a["stroke-width"] == "3")
        .map(|(a, _)| points(&a["points"]))
        .collect();
    let y8 = cap[0][0].1;
    assert_eq!(cap[0], vec![(x0, y8), (x12, y8)]);
    // analytics: 4 from 0 to 2 h (etl, then nightly until preempted), 0 until 6 h, 4 to
    // the end; the area's outline goes right then up or down, never diagonally
    let a = polygons(&svg, ANALYTICS);
    assert_eq!(a.len(), 1);
    let a = &a[0];
    let y0 = a.iter().map(|p| p.1).max().expect("points");
    let y4 = a[0].1;
    assert!(
        (2 * y4 - (y0 + y8)).abs() <= 1,
        "4 is half of 8: {y0} {y4} {y8}"
    );
    assert_eq!(
        *a,
        vec![
            (x0, y4),
            (x2, y4),
            (x2, y0),
            (x6, y0),
            (x6, y4),
            (x12, y4),
            (x12, y0),
            (x0, y0)
        ]
    );
    for w in a.windows(2) {
        assert!(w[0].0 == w[1].0 || w[0].1 == w[1].1, "{w:?} is not a step");
    }
    // science stacked on it: 8 in all from 2 h to 6 h, up to the capacity line
    let s = &polygons(&svg, SCIENCE)[0];
    assert_eq!(
        s[..6],
        [(x0, y4), (x2, y4), (x2, y8), (x6, y8), (x6, y4), (x12, y4)]
    );
    // the preemption at 2 h: a triangle pointing at the 2 h tick
    let marks = polygons(&svg, PREEMPTION);
    assert!(
        marks
            .iter()
            .any(|m| m.len() == 3 && m[2].0 == x2 && m[0].0 < x2 && m[1].0 > x2)
    );
    // the budget spent at 2 h: a rule at the 2 h tick
    assert!(
        elements(&svg, "polyline")
            .iter()
            .any(|(a, _)| a["stroke"] == "#6A3D9A" && points(&a["points"])[0].0 == x2)
    );
    // the legend is right of the plotting area, naming every department, line and mark
    let l = legend(&svg);
    assert_eq!(l["analytics"], ANALYTICS);
    assert_eq!(l["science"], SCIENCE);
    for t in [
        "capacity (cardTypes)",
        "nominal (sum)",
        "preemption (1)",
        "budget analytics-night spent",
    ] {
        assert!(text_x(&svg, t) > x12, "{t} is over the data");
    }
    assert!(text_x(&svg, "analytics") > x12);
}

#[test]
fn a_department_has_one_colour_in_every_picture() {
    let (sa, ra) = night("a", false);
    let (sb, rb) = night("b", true);
    let plot = gpuquota_sim::plot::svg(&sa, &ra).expect("plots");
    let diff = gpuquota_sim::diff::svg(&sa, &ra, &sb, &rb).expect("plots");
    assert_eq!(
        diff,
        gpuquota_sim::diff::svg(&sa, &ra, &sb, &rb).expect("plots")
    );
    for svg in [&plot, &diff] {
        let l = legend(svg);
        assert_eq!(l["analytics"], ANALYTICS);
        assert_eq!(l["science"], SCIENCE);
        assert!(!polygons(svg, ANALYTICS).is_empty());
        assert!(!polygons(svg, SCIENCE).is_empty());
    }
    // the diff's two panels: A's and B's analytics areas
    assert_eq!(polygons(&diff, ANALYTICS).len(), 2);
    // a sweep's cost per department: the same colours
    let table = sweep_table();
    let svg = table.svg().expect("plots");
    let l = legend(&svg);
    assert_eq!(l["cost.analytics"], ANALYTICS);
    assert_eq!(l["cost.science"], SCIENCE);
    assert!(polygons(&svg, ANALYTICS).is_empty(), "bars are rectangles");
    assert!(svg.matches(&format!("fill=\"{SCIENCE}\"")).count() >= 4);
}

fn sweep_table() -> sweep::Table {
    let row = |run: usize, v: &str, hours: f64| {
        serde_json::json!({
            "run": run,
            "parameters": {"clusterQueues.batch.borrowingLimit": v},
            "engine": "kueue",
            "meanUsagePercent": 50.0,
            "gpuHours": hours,
            "lostGpuHours": 1.0,
            "preemptions": 1,
            "timeToAdmissionMs": {},
            "cost": {"currency": "EUR", "total": "30.00",
                     "departments": {"analytics": "10.00", "science": "20.00"}},
            "warnings": 0
        })
    };
    sweep::Table::from_json(&serde_json::json!({
        "parameters": ["clusterQueues.batch.borrowingLimit"],
        "runs": 3,
        "rows": [row(0, "0", 10.0), row(1, "2", 20.0), row(2, "4", 30.0)]
    }))
    .expect("table")
}

#[test]
fn sweep_plot_labels_the_swept_values() {
    let t = sweep_table();
    let svg = t.svg().expect("plots");
    assert_eq!(svg, t.svg().expect("plots"));
    // three panels, each with the three values under its columns, left to right
    let xs: Vec<Vec<i32>> = ["0", "2", "4"]
        .iter()
        .map(|v| {
            elements(&svg, "text")
                .into_iter()
                .filter(|(_, c)| c == v)
                .map(|(a, _)| a["x"].parse().expect("x"))
                .collect()
        })
        .collect();
    assert_eq!(xs.iter().map(Vec::len).collect::<Vec<_>>(), [3, 3, 3]);
    assert!(xs[0][0] < xs[1][0] && xs[1][0] < xs[2][0]);
    assert_eq!(
        svg.matches(">\nclusterQueues.batch.borrowingLimit\n</text>")
            .count(),
        3,
        "each panel's x axis names the swept path"
    );
    assert!(!svg.contains(">\nrun\n</text>"));
}

#[test]
fn kai_plot_draws_leaf_queues_against_fair_share_not_parents() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/kai");
    let sim = gpuquota_sim::fuzzing::load(&dir.join("night.yaml")).expect("scenario");
    let sc = sim.kai().expect("a KAI scenario");
    let out = gpuquota_sim::fuzzing::run_kai(&sim).expect("run");
    let svg = kai::plot::svg(sc, &out).expect("plots");
    assert_eq!(svg, kai::plot::svg(sc, &out).expect("plots"));
    let texts: Vec<String> = elements(&svg, "text").into_iter().map(|x| x.1).collect();
    // leaves: batch and data-science (namespace ds); research is their parent
    assert!(texts.iter().any(|t| t == "batch"));
    assert!(texts.iter().any(|t| t == "data-science (department ds)"));
    assert!(!svg.contains("research"), "a parent queue is drawn");
    assert!(texts.iter().any(|t| t == "fair share"));
    // dates from spec.start, 36 h: ticks every 6 h
    assert!(texts.iter().any(|t| t == "04-01 06:00"));
    assert!(texts.iter().any(|t| t == "04-02 12:00"));
    // without metering a department is the namespace: batch then ds, in sorted order
    let l = legend(&svg);
    assert_eq!(l["batch"], ANALYTICS);
    assert_eq!(l["ds"], SCIENCE);
}

#[test]
fn seed_plot_weighs_mig_slices_and_says_so() {
    let sim = gpuquota_sim::fuzzing::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("data/seed/kueue.yaml"),
    )
    .expect("seed");
    let sc = sim.kueue().expect("a Kueue scenario");
    let r = gpuquota_sim::fuzzing::run_kueue(&sim).expect("simulates");
    let svg = gpuquota_sim::plot::svg(sc, &r).expect("plots");
    // an RTX PRO 6000 (96 GB) holds four 1g.24gb slices
    assert!(svg.contains("RTX PRO 6000: cards in use (MIG 1g.24gb = 1/4 card)"));
    assert!(svg.contains("H200: cards in use"));
}

#[test]
fn kai_simulator_config_counts_cycles() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/kai");
    let sim =
        gpuquota_sim::fuzzing::load(&dir.join("two-queue-oscillation.yaml")).expect("scenario");
    let sc = sim.kai().expect("a KAI scenario");
    let out = gpuquota_sim::fuzzing::run_kai(&sim).expect("run");
    let svg = kai::plot::svg(sc, &out).expect("plots");
    assert!(svg.contains(">\nsession (cycle)\n</text>"));
    assert!(!svg.contains("UTC"));
}
