//! The SVG plot of a Kueue or ResourceQuota run: GPUs in use per department over time,
//! stacked, one panel per card type, against its capacity and the queues' summed nominal
//! quota, with preemptions and budget exhaustion marked.
//!
//! - Panels: one per `spec.metering` card type (its `flavors` map a run's flavors to it;
//!   under ResourceQuota, where runs have no flavor, the first flavor of the workload's
//!   ClusterQueue covering the resource, as the chargeback does), in card type name order,
//!   then one per flavor of no card type. Without card types: one panel per flavor and
//!   resource of the GPU resources (else `cpu`, else the first resource).
//! - Values are cards: MIG slices are weighed as metering weighs them (the panel's caption
//!   states the scale, e.g. `MIG 1g.24gb = 1/4 card`).
//! - Areas: each department's usage (`spec.metering` departments by namespace, else the
//!   namespace), stacked with the department longest in use at the bottom; its colour is
//!   its place among the sorted `spec.metering` departments (then other names, sorted), the
//!   same in every picture of the scenario; beyond ten departments the least used are
//!   summed as `others` (grey).
//! - Step functions: a value holds until the next change; a panel of more than 2,500
//!   changes is averaged over round buckets (1 min … 1 week, at most 1,200), and its axis
//!   says so (`cards (mean per 1h)`).
//! - Time axis: `MM-DD HH:MM` (UTC) from `spec.start`, at round steps aligned to the clock.
//! - The legend is right of the panels, outside every plotting area.
//! - Lines: the card type's `capacity` (solid) and the queues' nominal quota of the card
//!   type, summed (dashed; ResourceQuota's `hard` caps name no card type, so under that
//!   engine only with a single card type).
//! - Marks: a red triangle at the top where a run was preempted (in the panels of its
//!   usage), a purple dashed rule where a budget was spent (in its card type's panel, every
//!   panel for a budget of all card types), a teal rule labelled with the event's index
//!   (`#0`) in every panel at each event of `spec.timeline` (the legend counts them; the
//!   report's `timeline` section and table say what each did).

use std::collections::{BTreeMap, BTreeSet};

use gpuquota_metering::budget::CardMap;
use gpuquota_metering::money::L;

use crate::chart::{self, Clock, Departments, Line, LineKind, Mark, MarkKind, Panel, Picture};
use crate::engine::RunEnd;
use crate::report::Report;
use crate::scenario::{Engine, Scenario};

pub mod kai;

/// A panel's identity: card types first (rank 0, name order), then the others.
type PanelKey = (u8, String);

/// What one panel collects before it is drawn.
#[derive(Default)]
struct Collect {
    /// Per department, usage changes in units of `unit`.
    deltas: BTreeMap<String, Vec<(i64, i128)>>,
    /// Σ nominal, in units of `unit`, when any queue has quota here.
    nominal: Option<i128>,
    /// MIG and replica resources seen, with their weight.
    scales: BTreeMap<String, i128>,
    marks: Vec<Mark>,
}

/// The usage picture of a run of either engine, as `gpuquota sim --plot` draws it: [`svg`]
/// of a Kueue or ResourceQuota run, [`kai::svg`] of a KAI run.
///
/// # Errors
/// The plotting backend's error as text.
pub fn svg_of(run: crate::diff::Simulated<'_>) -> Result<String, String> {
    match run {
        crate::diff::Simulated::Kueue(sc, r) => svg(sc, r),
        crate::diff::Simulated::Kai(sc, o) => kai::svg(sc, o),
    }
}

/// Renders the plot as SVG text (module docs).
///
/// # Errors
/// Nothing to plot (no resource has quota or usage), or the plotting backend's error as
/// text.
///
/// # Complexity
/// O(runs × flavor-resources + change points × departments).
pub fn svg(sc: &Scenario, report: &Report) -> Result<String, String> {
    with_picture(sc, report, chart::svg)
}

/// The run cut into windows of one day (a run of up to [`MAX_WINDOWS`] days), else of one
/// week, else of four weeks, each drawn as [`svg`] draws the whole run but on the window's
/// own time axis: the same panels, colours, lines and stacking order, the values at the
/// window's start carried in, its preemptions and spent budgets marked; with the figures
/// behind it (per panel and department, the card-hours of the window and the peak).
///
/// # Errors
/// As [`svg`].
///
/// # Complexity
/// O(runs × flavor-resources + windows × change points): the picture is built once.
pub fn windows(sc: &Scenario, report: &Report) -> Result<Windows, String> {
    let end = report.outcome.end_ms.max(0);
    let width = [DAY_MS, 7 * DAY_MS, 28 * DAY_MS]
        .into_iter()
        .find(|w| (end + *w - 1) / *w <= MAX_WINDOWS)
        .unwrap_or(28 * DAY_MS);
    let count = ((end + width - 1) / width).min(MAX_WINDOWS);
    with_picture(sc, report, |pic| {
        let mut out = Vec::new();
        for k in 0..count {
            let from = k * width;
            let date = gpuquota_metering::time::format_rfc3339(
                report
                    .start
                    .unix_seconds()
                    .saturating_add(from.div_euclid(1000)),
            );
            let day = date.get(..10).unwrap_or(&date).to_owned();
            let title = if width == DAY_MS {
                format!("{} on {day}", pic.title)
            } else {
                format!("{}, {} days from {day}", pic.title, width / DAY_MS)
            };
            let w = pic.window(from, from.saturating_add(width), title);
            out.push(Window {
                from_ms: from,
                svg: chart::svg(&w)?,
                figures: w.figures(),
            });
        }
        Ok(Windows {
            width_ms: width,
            windows: out,
        })
    })
}

/// At most this many windows are drawn ([`windows`]): a month of days, a half year of
/// weeks, then four-week windows of the first 35 × 28 days.
pub const MAX_WINDOWS: i64 = 35;

/// A run cut into windows ([`windows`]).
#[derive(Debug, Clone)]
pub struct Windows {
    /// Each window's length, ms: a day, a week or four weeks.
    pub width_ms: i64,
    /// The windows, in time order.
    pub windows: Vec<Window>,
}

/// One window of a run ([`windows`]).
#[derive(Debug, Clone)]
pub struct Window {
    /// Its start, ms from `spec.start`.
    pub from_ms: i64,
    /// Its picture, as SVG text.
    pub svg: String,
    /// The figures behind the picture.
    pub figures: Vec<chart::AreaFigures>,
}

/// A day, ms.
const DAY_MS: i64 = 86_400_000;

/// Builds the picture of the run and hands it to `draw`.
fn with_picture<R>(
    sc: &Scenario,
    report: &Report,
    draw: impl FnOnce(&Picture<'_>) -> Result<R, String>,
) -> Result<R, String> {
    let o = &report.outcome;
    let cards = crate::bill::card_map(sc.metering.as_ref());
    let mut departments = Departments::of(sc.metering.as_ref());
    let by_card = !cards.cards.is_empty();
    let fallback = (!by_card).then(|| fallback_resource(report)).flatten();
    if !by_card && fallback.is_none() {
        return Err("nothing to plot: no resource has quota or usage".to_owned());
    }
    // where a flavor-resource's units go: its panel and weight
    let place = |flavor: &str, fr: u32| -> Option<(PanelKey, i128)> {
        let (f, res) = &o.frs[fr as usize];
        let f = if f.is_empty() { flavor } else { f.as_str() };
        if by_card {
            let (card, w) = card_of(&cards, f, res.as_str())?;
            let rank = u8::from(!cards.cards.iter().any(|c| c.name == card));
            Some(((rank, card), w))
        } else if fallback.as_ref().is_some_and(|r| r == res) {
            Some(((0, panel_name(f, res.as_str())), 1))
        } else {
            None
        }
    };
    let mut panels: BTreeMap<PanelKey, Collect> = BTreeMap::new();
    for c in &cards.cards {
        panels.entry((0, c.name.clone())).or_default();
    }
    for w in &o.workloads {
        let ns = w.key.split('/').next().unwrap_or("");
        let dept = departments.of_namespace(ns);
        for r in &w.runs {
            let mut hit: BTreeSet<PanelKey> = BTreeSet::new();
            for &(fr, a) in &r.usage {
                let res = o.frs[fr as usize].1.as_str();
                let guessed = if o.frs[fr as usize].0.is_empty() {
                    crate::bill::unflavored_flavor(sc, &w.key, res).unwrap_or_default()
                } else {
                    String::new()
                };
                let Some((key, wt)) = place(&guessed, fr) else {
                    continue;
                };
                if a == 0 || r.end_ms <= r.start_ms {
                    continue;
                }
                let p = panels.entry(key.clone()).or_default();
                if wt != L && by_card {
                    p.scales.insert(res.to_owned(), wt);
                }
                let d = p.deltas.entry(dept.clone()).or_default();
                d.push((r.start_ms, wt * i128::from(a)));
                d.push((r.end_ms, -wt * i128::from(a)));
                hit.insert(key);
            }
            if matches!(r.end, RunEnd::Preempted { .. }) {
                for k in hit {
                    if let Some(p) = panels.get_mut(&k) {
                        p.marks.push(Mark {
                            kind: MarkKind::Triangle,
                            label: "preemption".to_owned(),
                            t_ms: r.end_ms,
                        });
                    }
                }
            }
        }
    }
    let single = (cards.cards.len() == 1).then(|| cards.cards[0].name.clone());
    for q in &o.queues {
        for &(fr, a) in &q.nominal {
            let (f, res) = &o.frs[fr as usize];
            let key = if f.is_empty() && by_card {
                // ResourceQuota: a cap names no card type
                match (&single, card_of(&cards, "", res.as_str())) {
                    (Some(c), Some((_, w))) => Some(((0, c.clone()), w)),
                    _ => None,
                }
            } else {
                place("", fr)
            };
            if let Some((key, w)) = key
                && let Some(p) = panels.get_mut(&key)
            {
                *p.nominal.get_or_insert(0) += w * i128::from(a);
            }
        }
    }
    for b in report.budgets.iter().flatten() {
        for period in &b.periods {
            let Some(t) = period.spent_at_ms else {
                continue;
            };
            for ((_, name), p) in panels.iter_mut() {
                if b.card_type.as_ref().is_none_or(|c| c == name) {
                    p.marks.push(Mark {
                        kind: MarkKind::Rule,
                        label: format!("budget {} spent", b.budget),
                        t_ms: t,
                    });
                }
            }
        }
    }
    for t in &o.timeline {
        for p in panels.values_mut() {
            p.marks.push(Mark {
                kind: MarkKind::Timeline,
                label: format!("#{}", t.index),
                t_ms: t.at_ms,
            });
        }
    }
    // departments drawn by name: the most used when there are too many
    let mut totals: BTreeMap<String, i128> = BTreeMap::new();
    for p in panels.values() {
        for (d, ds) in &p.deltas {
            let mut sorted = ds.clone();
            sorted.sort_unstable();
            let (mut cur, mut last, mut area) = (0i128, 0i64, 0i128);
            for (t, x) in sorted {
                area += cur * i128::from(t - last);
                cur += x;
                last = t;
            }
            *totals.entry(d.clone()).or_default() += area;
        }
    }
    let named = kept(&totals, chart::MAX_LAYERS);
    for d in &named {
        departments.note(d);
    }
    let order = departments.order();
    let u = if by_card {
        L as f64
    } else {
        match fallback.as_ref().map(|r| r.as_str()) {
            Some("cpu") => 1000.0,
            Some("memory" | "ephemeral-storage") => (1u64 << 30) as f64,
            _ => 1.0,
        }
    };
    let engine_rq = o.engine == Engine::ResourceQuota;
    let mut out: Vec<Panel> = Vec::new();
    for (key, p) in panels {
        let mut layers: BTreeMap<String, Vec<(i64, i128)>> = BTreeMap::new();
        for (d, ds) in p.deltas {
            let name = if named.contains(&d) {
                d
            } else {
                chart::OTHERS.to_owned()
            };
            layers.entry(name).or_default().extend(ds);
        }
        let mut areas: Vec<(String, chart::Steps)> = layers
            .into_iter()
            .map(|(d, ds)| (d, chart::integrate(ds, u)))
            .collect();
        areas.sort_by_key(|(d, _)| {
            (
                d == chart::OTHERS,
                order.iter().position(|o| o == d).unwrap_or(usize::MAX),
                d.clone(),
            )
        });
        let mut lines = Vec::new();
        if by_card && let Some(c) = capacity(sc, &key.1) {
            lines.push(Line {
                label: "capacity (cardTypes)".to_owned(),
                kind: LineKind::Capacity,
                steps: vec![(0, c)],
            });
        }
        if let Some(n) = p.nominal {
            lines.push(Line {
                label: if engine_rq {
                    "ResourceQuota hard (sum)".to_owned()
                } else {
                    "nominal (sum)".to_owned()
                },
                kind: LineKind::Nominal,
                steps: vec![(0, n as f64 / u)],
            });
        }
        let scale: Vec<String> = p
            .scales
            .iter()
            .map(|(r, w)| format!("{} = {} card", short(r), fraction(*w)))
            .collect();
        let (title, y_desc) = if by_card {
            let s = if scale.is_empty() {
                String::new()
            } else {
                format!(" ({})", scale.join(", "))
            };
            (format!("{}: cards in use{s}", key.1), "cards".to_owned())
        } else {
            (
                format!("{}: in use", key.1),
                fallback_unit(fallback.as_ref().map_or("", |r| r.as_str())),
            )
        };
        out.push(Panel {
            title,
            y_desc,
            areas,
            lines,
            marks: p.marks,
        });
    }
    draw(&Picture {
        title: format!(
            "{}: {} in use per department{}",
            report.name,
            if by_card { "GPUs" } else { "quota" },
            if by_card { ", by card type" } else { "" }
        ),
        clock: Clock::Dates {
            start_unix_ms: report.start.unix_seconds().saturating_mul(1000),
        },
        end_ms: o.end_ms,
        panels: out,
        departments: &departments,
        notes: Vec::new(),
        stack: None,
        compact: false,
    })
}

/// The card type and weight of a flavor-resource (metering's weighing; a flavor of no card
/// type is its own, a flavor-less resource is the only card type's).
fn card_of(cards: &CardMap, flavor: &str, resource: &str) -> Option<(String, i128)> {
    let (mut card, w) = crate::bill::weigh(cards, flavor, resource)?;
    if card.is_empty() && cards.cards.len() == 1 {
        card = cards.cards[0].name.clone();
    }
    (!card.is_empty()).then_some((card, w))
}

/// A card type's `capacity` (cards), when the scenario states it.
fn capacity(sc: &Scenario, card: &str) -> Option<f64> {
    let cs = sc.metering.as_ref()?["cardTypes"].as_array()?;
    let c = cs.iter().find(|c| c["name"].as_str() == Some(card))?;
    match &c["capacity"] {
        serde_json::Value::Number(n) => n.as_f64(),
        serde_json::Value::String(s) => s.parse().ok(),
        _ => None,
    }
    .filter(|x: &f64| x.is_finite() && *x >= 0.0)
}

/// The resource drawn without card types: the first GPU resource, else `cpu`, else the
/// first.
fn fallback_resource(report: &Report) -> Option<gpuquota_model::ResourceName> {
    let frs = &report.outcome.frs;
    frs.iter()
        .find(|(_, r)| r.is_gpu() || r.as_str().starts_with("nvidia.com/"))
        .or_else(|| frs.iter().find(|(_, r)| r.is_cpu()))
        .or_else(|| frs.first())
        .map(|(_, r)| r.clone())
}

fn panel_name(flavor: &str, resource: &str) -> String {
    if flavor.is_empty() {
        resource.to_owned()
    } else {
        format!("{flavor} / {resource}")
    }
}

fn fallback_unit(resource: &str) -> String {
    match resource {
        "cpu" => "cpu (cores)".to_owned(),
        "memory" | "ephemeral-storage" => format!("{resource} (GiB)"),
        r => r.to_owned(),
    }
}

/// `nvidia.com/mig-1g.24gb` → `MIG 1g.24gb`.
fn short(resource: &str) -> String {
    match resource.strip_prefix("nvidia.com/mig-") {
        Some(p) => format!("MIG {p}"),
        None if resource == "nvidia.com/gpu.shared" => "replica".to_owned(),
        None => resource.to_owned(),
    }
}

/// A weight in 1/L cards as `1/4` when it divides a card, else three decimals.
fn fraction(w: i128) -> String {
    if w > 0 && L % w == 0 {
        format!("1/{}", L / w)
    } else {
        format!("{:.3}", w as f64 / L as f64)
    }
}

/// The departments drawn by name: all when at most `max`, else the `max − 1` most used
/// (ties by name).
fn kept(totals: &BTreeMap<String, i128>, max: usize) -> BTreeSet<String> {
    if totals.len() <= max {
        return totals.keys().cloned().collect();
    }
    let mut v: Vec<(&String, i128)> = totals.iter().map(|(k, &x)| (k, x)).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    v.into_iter()
        .take(max.saturating_sub(1))
        .map(|x| x.0.clone())
        .collect()
}
