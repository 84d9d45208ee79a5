//! What every picture shares: the department palette, step functions in time, the time
//! axis in dates and hours, and the layout (panels stacked on the left, one legend on the
//! right, outside every plotting area).
//!
//! - Colours: `department_colour` is the one palette ([`department_hex`] as CSS text). A department's colour is its
//!   position in the sorted list of the scenario's `spec.metering` departments (names that
//!   are no declared department, such as a namespace of none, follow in sorted order), so
//!   the same department has the same colour in the legend, the fill and every picture of
//!   the same scenario files.
//! - Areas are stacked with the department longest in use at the bottom (steady work
//!   below, peaks on top), the same order in every panel of a picture.
//! - Values are step functions: a value holds from its change point until the next one;
//!   no line is drawn between samples. Above `MAX_STEPS` (2,500) change points in a panel every
//!   series is averaged over buckets of a round width (the panel's axis says which).
//! - The time axis is labelled `MM-DD HH:MM` (UTC) from the scenario's start, at round
//!   steps (1 min … 4 weeks) aligned to the clock; KAI's simulator config counts cycles.

use std::collections::{BTreeMap, BTreeSet};

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::prelude::*;
use serde_json::Value;

/// Department colours, in sorted department order (Tableau 10 without its red, kept for
/// preemptions, and its grey, kept for `others`).
pub(crate) const PALETTE: [RGBColor; 8] = [
    RGBColor(0x4E, 0x79, 0xA7),
    RGBColor(0xF2, 0x8E, 0x2B),
    RGBColor(0x59, 0xA1, 0x4F),
    RGBColor(0xB0, 0x7A, 0xA1),
    RGBColor(0x76, 0xB7, 0xB2),
    RGBColor(0xED, 0xC9, 0x48),
    RGBColor(0x9C, 0x75, 0x5F),
    RGBColor(0xFF, 0x9D, 0xA7),
];
/// The colour of `others` (the departments beyond [`MAX_LAYERS`] summed).
pub(crate) const OTHERS_COLOUR: RGBColor = RGBColor(0xBA, 0xB0, 0xAC);
/// Preemption and eviction markers.
pub(crate) const PREEMPTION_COLOUR: RGBColor = RGBColor(0xD6, 0x27, 0x28);
/// Capacity lines (grey, so a nominal line on them stays visible).
pub(crate) const CAPACITY_COLOUR: RGBColor = RGBColor(0x88, 0x88, 0x88);
/// Budget exhaustion lines.
pub(crate) const BUDGET_COLOUR: RGBColor = RGBColor(0x6A, 0x3D, 0x9A);
/// The colour of a timeline event's rule.
pub(crate) const TIMELINE_COLOUR: RGBColor = RGBColor(0x17, 0x8F, 0x8F);
/// The name of the summed tail of departments.
pub(crate) const OTHERS: &str = "others";
/// Departments drawn by name in one picture; the rest are summed as [`OTHERS`].
pub(crate) const MAX_LAYERS: usize = 10;
/// Change points in one panel above which its series are averaged over buckets.
pub(crate) const MAX_STEPS: usize = 2500;

/// The colour of department `name` given every department of the picture in order
/// (`order`: the declared departments sorted, then the others sorted): its position in
/// `order`, cycling through [`PALETTE`]; [`OTHERS`] and names not in `order` are grey.
pub(crate) fn department_colour(order: &[String], name: &str) -> RGBColor {
    if name == OTHERS {
        return OTHERS_COLOUR;
    }
    order
        .iter()
        .position(|n| n == name)
        .map_or(OTHERS_COLOUR, |i| PALETTE[i % PALETTE.len()])
}

/// The departments of a picture: `spec.metering`'s, by namespace, and their colour order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Departments {
    /// Namespace → department (the first department naming it).
    of_ns: BTreeMap<String, String>,
    /// The declared departments, sorted.
    declared: BTreeSet<String>,
    /// Names shown that are no declared department, sorted.
    extra: BTreeSet<String>,
}

impl Departments {
    /// The departments of `spec.metering` (none without it).
    pub(crate) fn of(metering: Option<&Value>) -> Departments {
        let mut d = Departments::default();
        for dep in metering
            .and_then(|m| m["departments"].as_array())
            .into_iter()
            .flatten()
        {
            let Some(name) = dep["name"].as_str() else {
                continue;
            };
            d.declared.insert(name.to_owned());
            for n in dep["namespaces"].as_array().into_iter().flatten() {
                if let Some(n) = n.as_str() {
                    d.of_ns
                        .entry(n.to_owned())
                        .or_insert_with(|| name.to_owned());
                }
            }
        }
        d
    }

    /// The department of namespace `ns`: its declared department, else the namespace.
    pub(crate) fn of_namespace(&self, ns: &str) -> String {
        self.of_ns.get(ns).cloned().unwrap_or_else(|| ns.to_owned())
    }

    /// Notes a name shown in the picture (a declared department changes nothing).
    pub(crate) fn note(&mut self, name: &str) {
        if name != OTHERS && !self.declared.contains(name) {
            self.extra.insert(name.to_owned());
        }
    }

    /// Every department in colour order.
    pub(crate) fn order(&self) -> Vec<String> {
        self.declared
            .iter()
            .chain(self.extra.iter())
            .cloned()
            .collect()
    }
}

/// A step function: `(t ms, value)` change points in time order; a value holds from its
/// point until the next (the last until the picture's end); 0 before the first.
pub(crate) type Steps = Vec<(i64, f64)>;

/// The step function of `deltas` (`(t, change)` in any order), in integer units divided by
/// `unit`; instants whose changes cancel out are left out.
pub(crate) fn integrate(mut deltas: Vec<(i64, i128)>, unit: f64) -> Steps {
    deltas.sort_unstable();
    let mut out: Steps = Vec::new();
    let mut cur = 0i128;
    let mut last = 0i128;
    let mut i = 0;
    while i < deltas.len() {
        let t = deltas[i].0;
        while i < deltas.len() && deltas[i].0 == t {
            cur += deltas[i].1;
            i += 1;
        }
        if cur != last {
            out.push((t, cur as f64 / unit));
            last = cur;
        }
    }
    out
}

/// The step function of one value per session: `values[i]` from `i × interval_ms`.
pub(crate) fn sessions(values: &[f64], interval_ms: i64) -> Steps {
    let mut out: Steps = Vec::new();
    let mut last = 0.0f64;
    for (i, &v) in values.iter().enumerate() {
        if v != last || (i == 0 && v != 0.0) {
            out.push((i as i64 * interval_ms, v));
            last = v;
        }
    }
    out
}

/// The value of `s` at `t`.
fn value_at(s: &[(i64, f64)], t: i64) -> f64 {
    match s.partition_point(|p| p.0 <= t) {
        0 => 0.0,
        k => s[k - 1].1,
    }
}

/// Keeps only the points where the value changes.
fn compress(s: Steps) -> Steps {
    let mut out: Steps = Vec::with_capacity(s.len());
    let mut last = 0.0f64;
    for (t, v) in s {
        if out.last().is_some_and(|p| p.0 == t) {
            out.pop();
            last = out.last().map_or(0.0, |p| p.1);
        }
        if v != last {
            out.push((t, v));
            last = v;
        }
    }
    out
}

/// The time-average of `s` over buckets of `width` ms from 0 to `end`, as steps.
pub(crate) fn resample(s: &[(i64, f64)], end: i64, width: i64) -> Steps {
    let width = width.max(1);
    let mut out: Steps = Vec::new();
    let mut k = 0i64;
    let mut i = s.partition_point(|p| p.0 <= 0);
    while k * width < end {
        let (lo, hi) = (k * width, ((k + 1) * width).min(end));
        let mut cur = value_at(s, lo);
        let mut t = lo;
        let mut acc = 0.0f64;
        while i < s.len() && s[i].0 < hi {
            acc += cur * (s[i].0 - t) as f64;
            t = s[i].0;
            cur = s[i].1;
            i += 1;
        }
        acc += cur * (hi - t) as f64;
        out.push((lo, acc / (hi - lo) as f64));
        k += 1;
    }
    compress(out)
}

/// Round bucket widths, ms.
const BUCKETS_MS: [i64; 9] = [
    60_000,
    300_000,
    900_000,
    1_800_000,
    3_600_000,
    10_800_000,
    21_600_000,
    86_400_000,
    604_800_000,
];

/// A light picture's panel of more change points than this is averaged over buckets.
pub(crate) const COMPACT_STEPS: usize = 400;
/// At most this many buckets fill a light picture's time axis.
pub(crate) const COMPACT_BUCKETS: i64 = 150;

/// The bucket width (ms) for a panel of `points` change points over `end` ms, or `None`
/// when its steps are drawn as they are.
pub(crate) fn bucket_width(points: usize, end: i64) -> Option<i64> {
    (points > MAX_STEPS).then(|| {
        BUCKETS_MS
            .iter()
            .copied()
            .find(|w| end / w <= 1200)
            .unwrap_or(604_800_000)
    })
}

/// A bucket width as text (`1h`, `15min`, `1d`).
pub(crate) fn duration_text(ms: i64) -> String {
    match ms {
        m if m % 86_400_000 == 0 => format!("{}d", m / 86_400_000),
        m if m % 3_600_000 == 0 => format!("{}h", m / 3_600_000),
        m if m % 60_000 == 0 => format!("{}min", m / 60_000),
        m => format!("{m}ms"),
    }
}

/// Stacks `layers` bottom-up: each layer's lower and upper boundary.
pub(crate) fn stack(layers: &[Steps]) -> Vec<(Steps, Steps)> {
    let times: BTreeSet<i64> = layers.iter().flatten().map(|p| p.0).collect();
    let mut below: Steps = Vec::new();
    let mut out = Vec::with_capacity(layers.len());
    for l in layers {
        let top: Steps = times
            .iter()
            .map(|&t| (t, value_at(&below, t) + value_at(l, t)))
            .collect();
        let top = compress(top);
        out.push((below.clone(), top.clone()));
        below = top;
    }
    out
}

/// The vertices of a step function's graph from 0 to `end`, horizontal then vertical
/// segments: `(0, v₀), (t₁, v₀), (t₁, v₁), …, (end, vₙ)`.
pub(crate) fn step_vertices(s: &[(i64, f64)], end: i64) -> Vec<(f64, f64)> {
    let mut v = value_at(s, 0);
    let mut out = vec![(0.0, v)];
    for &(t, x) in s.iter().filter(|p| p.0 > 0 && p.0 < end) {
        out.push((t as f64, v));
        out.push((t as f64, x));
        v = x;
    }
    out.push((end as f64, v));
    out
}

/// How the time axis is labelled.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Clock {
    /// Dates and hours (UTC) from `start_unix_ms`.
    Dates {
        /// The scenario's start, ms since the epoch.
        start_unix_ms: i64,
    },
    /// Cycle numbers, one every `ms_per_cycle`.
    Cycles {
        /// ms per cycle (≥ 1).
        ms_per_cycle: i64,
    },
}

/// Above this span (300 days) date labels carry the year and leave out the hour.
pub(crate) const LONG_MS: i64 = 300 * 86_400_000;

/// Round tick steps of the date axis, ms.
const TICKS_MS: [i64; 16] = [
    60_000,
    300_000,
    600_000,
    900_000,
    1_800_000,
    3_600_000,
    7_200_000,
    10_800_000,
    21_600_000,
    43_200_000,
    86_400_000,
    172_800_000,
    259_200_000,
    604_800_000,
    1_209_600_000,
    2_419_200_000,
];

impl Clock {
    /// The label of time `t` (ms since start): `MM-DD HH:MM` (`YYYY-MM-DD` on an axis of
    /// more than [`LONG_MS`]), or the cycle number.
    pub(crate) fn label(&self, t: i64, end: i64) -> String {
        match *self {
            Clock::Dates { start_unix_ms } => {
                let s =
                    gpuquota_metering::time::format_rfc3339((start_unix_ms + t).div_euclid(1000));
                if end > LONG_MS {
                    return s.get(..10).unwrap_or(&s).to_owned();
                }
                match (s.get(5..10), s.get(11..16)) {
                    (Some(d), Some(h)) => format!("{d} {h}"),
                    _ => s,
                }
            }
            Clock::Cycles { ms_per_cycle } => (t / ms_per_cycle.max(1)).to_string(),
        }
    }

    /// The axis' description.
    fn description(&self) -> String {
        match *self {
            Clock::Dates { start_unix_ms } => {
                let s = gpuquota_metering::time::format_rfc3339(start_unix_ms.div_euclid(1000));
                format!(
                    "time (UTC), from {} {}",
                    s.get(..10).unwrap_or(&s),
                    s.get(11..16).unwrap_or("")
                )
            }
            Clock::Cycles { .. } => "session (cycle)".to_owned(),
        }
    }

    /// Labelled ticks (≤ `max` of them) and the finer grid's lines over `0..=end` ms.
    pub(crate) fn ticks(&self, end: i64, max: i64) -> (Vec<i64>, Vec<i64>) {
        let end = end.max(1);
        match *self {
            Clock::Dates { start_unix_ms } => {
                let k = TICKS_MS
                    .iter()
                    .position(|s| end / s < max)
                    .unwrap_or(TICKS_MS.len() - 1);
                // beyond four weeks a tick: multiples of four weeks
                let four_weeks = TICKS_MS[TICKS_MS.len() - 1];
                let step = if end / TICKS_MS[k] < max {
                    TICKS_MS[k]
                } else {
                    four_weeks * (end / four_weeks / (max - 1).max(1) + 1)
                };
                let minor = TICKS_MS[..k]
                    .iter()
                    .rev()
                    .copied()
                    .find(|m| step % m == 0 && end / m <= 8 * max)
                    .unwrap_or(step);
                // steps up to a day start on the clock's multiples; longer ones at midnight
                let align = step.min(86_400_000);
                let first = |s: i64| {
                    let a = s.min(align);
                    (a - start_unix_ms.rem_euclid(a)).rem_euclid(a)
                };
                let at = |s: i64| -> Vec<i64> {
                    let mut v = Vec::new();
                    let mut t = first(s);
                    while t <= end {
                        v.push(t);
                        t += s;
                    }
                    v
                };
                (at(step), at(minor))
            }
            Clock::Cycles { ms_per_cycle } => {
                let cycles = end / ms_per_cycle.max(1);
                let mut step = 1i64;
                while cycles / step >= max {
                    step = match step.to_string().as_bytes().first() {
                        Some(b'1') => step * 2,
                        Some(b'2') => step / 2 * 5,
                        _ => step * 2,
                    };
                }
                let v: Vec<i64> = (0..=cycles / step)
                    .map(|i| i * step * ms_per_cycle.max(1))
                    .collect();
                (v.clone(), v)
            }
        }
    }
}

/// How a line of a panel is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineKind {
    /// Solid grey: what the cards can hold.
    Capacity,
    /// Dashed dark grey: the quota the queues are given.
    Nominal,
    /// Dashed black: KAI's fair share.
    FairShare,
}

/// A line of a panel: a step function with its legend label.
#[derive(Debug, Clone)]
pub(crate) struct Line {
    /// Legend label (lines of one label in several panels share one entry).
    pub(crate) label: String,
    /// How it is drawn.
    pub(crate) kind: LineKind,
    /// The values.
    pub(crate) steps: Steps,
}

/// How a mark is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum MarkKind {
    /// A red triangle at the top of the panel pointing at the instant.
    Triangle,
    /// A dashed purple vertical line across the panel.
    Rule,
    /// A solid teal vertical line across the panel, its label (the timeline event's index)
    /// written at the top: an event of `spec.timeline`. The legend counts them under one
    /// entry, `timeline event`.
    Timeline,
}

/// The legend entry of every [`MarkKind::Timeline`] mark.
pub(crate) const TIMELINE_LEGEND: &str = "timeline event";

/// An instant marked in a panel.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Mark {
    /// How it is drawn.
    pub(crate) kind: MarkKind,
    /// Legend label.
    pub(crate) label: String,
    /// ms since start.
    pub(crate) t_ms: i64,
}

/// One plotting area.
#[derive(Debug, Clone, Default)]
pub(crate) struct Panel {
    /// Its caption.
    pub(crate) title: String,
    /// The value axis' description.
    pub(crate) y_desc: String,
    /// Filled areas stacked bottom-up: department name and values.
    pub(crate) areas: Vec<(String, Steps)>,
    /// Lines over the areas.
    pub(crate) lines: Vec<Line>,
    /// Marked instants.
    pub(crate) marks: Vec<Mark>,
}

/// A whole picture.
pub(crate) struct Picture<'a> {
    /// Its title.
    pub(crate) title: String,
    /// How the time axis is labelled.
    pub(crate) clock: Clock,
    /// The time axis' end, ms since start.
    pub(crate) end_ms: i64,
    /// The panels, top to bottom.
    pub(crate) panels: Vec<Panel>,
    /// The departments (colours).
    pub(crate) departments: &'a Departments,
    /// A line under the legend (e.g. how MIG slices are weighed), if any.
    pub(crate) notes: Vec<String>,
    /// The areas' stacking order, bottom first, when it is not the picture's own (a window
    /// keeps the whole picture's).
    pub(crate) stack: Option<Vec<String>>,
    /// A light picture (one of many on a page): no minor grid lines.
    pub(crate) compact: bool,
}

/// The value of step function `s` at `t` (0 before its first point).
fn step_at(s: &[(i64, f64)], t: i64) -> f64 {
    match s.partition_point(|p| p.0 <= t) {
        0 => 0.0,
        k => s[k - 1].1,
    }
}

/// Step function `s` seen through the window `from..to`, shifted so that `from` is 0: its
/// value at `from`, then its changes inside the window.
fn window_steps(s: &[(i64, f64)], from: i64, to: i64) -> Steps {
    let mut out: Steps = vec![(0, step_at(s, from))];
    out.extend(
        s.iter()
            .filter(|p| p.0 > from && p.0 < to)
            .map(|&(t, v)| (t - from, v)),
    );
    out
}

/// One area's figures over a picture's time axis (the table behind a chart of
/// [`crate::plot::windows`]).
#[derive(Debug, Clone, PartialEq)]
pub struct AreaFigures {
    /// The panel's caption.
    pub panel: String,
    /// The department (or `others`).
    pub department: String,
    /// Σ value × time, in the panel's unit × hours (card-hours for card panels).
    pub unit_hours: f64,
    /// The highest value held.
    pub peak: f64,
}

impl Picture<'_> {
    /// Per panel and area, the unit-hours and the peak over `0..end_ms`: the figures behind
    /// the picture, for its table.
    ///
    /// # Complexity
    /// O(change points).
    pub(crate) fn figures(&self) -> Vec<AreaFigures> {
        let end = self.end_ms.max(0);
        let mut out = Vec::new();
        for p in &self.panels {
            for (d, s) in &p.areas {
                let (mut area, mut peak) = (0.0f64, 0.0f64);
                for (k, &(t, v)) in s.iter().enumerate() {
                    let next = s.get(k + 1).map_or(end, |x| x.0).min(end);
                    let t = t.max(0);
                    if next > t {
                        area += v * (next - t) as f64;
                        peak = peak.max(v);
                    }
                }
                out.push(AreaFigures {
                    panel: p.title.clone(),
                    department: d.clone(),
                    unit_hours: area / 3_600_000.0,
                    peak,
                });
            }
        }
        out
    }

    /// The picture of the window `from..to` ms (a day of the month, say) drawn on its own
    /// time axis: the same panels, departments, colours and lines, the values at `from`
    /// carried in, the marks inside the window; the areas stack in the order of the whole
    /// picture so that a day reads like the month.
    ///
    /// # Complexity
    /// O(change points of the picture).
    pub(crate) fn window(&self, from: i64, to: i64, title: String) -> Picture<'_> {
        let order = self.departments.order();
        let stack = stacking_order(&self.panels, &order, self.end_ms.max(1));
        let clock = match self.clock {
            Clock::Dates { start_unix_ms } => Clock::Dates {
                start_unix_ms: start_unix_ms.saturating_add(from),
            },
            c @ Clock::Cycles { .. } => c,
        };
        let panels = self
            .panels
            .iter()
            .map(|p| Panel {
                title: p.title.clone(),
                y_desc: p.y_desc.clone(),
                areas: p
                    .areas
                    .iter()
                    .map(|(d, s)| (d.clone(), window_steps(s, from, to)))
                    .collect(),
                lines: p
                    .lines
                    .iter()
                    .map(|l| Line {
                        label: l.label.clone(),
                        kind: l.kind,
                        steps: window_steps(&l.steps, from, to),
                    })
                    .collect(),
                marks: p
                    .marks
                    .iter()
                    .filter(|m| m.t_ms >= from && m.t_ms < to)
                    .map(|m| Mark {
                        kind: m.kind,
                        label: m.label.clone(),
                        t_ms: m.t_ms - from,
                    })
                    .collect(),
            })
            .collect();
        Picture {
            title,
            clock,
            end_ms: to - from,
            panels,
            departments: self.departments,
            notes: self.notes.clone(),
            stack: Some(stack),
            compact: true,
        }
    }
}

/// An axis from `lo` to `hi` with given ticks (bold: labelled, light: grid only).
pub(crate) struct Axis {
    /// Its start.
    pub(crate) lo: f64,
    /// Its end.
    pub(crate) hi: f64,
    /// Labelled ticks.
    pub(crate) bold: Vec<f64>,
    /// Grid lines.
    pub(crate) light: Vec<f64>,
}

impl Ranged for Axis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let span = f64::from(limit.1 - limit.0);
        let width = self.hi - self.lo;
        let width = if width > 0.0 { width } else { 1.0 };
        limit.0 + (span * (v - self.lo) / width).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.light.clone()
        } else {
            self.bold.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// The picture's width, px.
pub(crate) const WIDTH: u32 = 1280;
/// The legend's width, px (right of the panels).
pub(crate) const LEGEND: u32 = 250;
const TITLE_H: u32 = 44;

/// Per panel, the layers as drawn: averaged over buckets when there are too many change
/// points, and the averaging width.
/// A light picture ([`Picture::compact`]) is averaged above [`COMPACT_STEPS`] change points,
/// over buckets of which at most [`COMPACT_BUCKETS`] fill its axis.
fn prepared(p: &Panel, end: i64, compact: bool) -> (Panel, Option<i64>) {
    let points = p.areas.iter().map(|a| a.1.len()).sum::<usize>()
        + p.lines.iter().map(|l| l.steps.len()).sum::<usize>();
    let width = if compact {
        (points > COMPACT_STEPS).then(|| {
            BUCKETS_MS
                .iter()
                .copied()
                .find(|w| end / w <= COMPACT_BUCKETS)
                .unwrap_or(604_800_000)
        })
    } else {
        bucket_width(points, end)
    };
    let Some(w) = width else {
        return (p.clone(), None);
    };
    let mut q = p.clone();
    for a in &mut q.areas {
        a.1 = resample(&a.1, end, w);
    }
    for l in &mut q.lines {
        l.steps = resample(&l.steps, end, w);
    }
    (q, Some(w))
}

/// The stacking order of the picture's areas, bottom first: the longest in use over all
/// panels first (steady work at the bottom, peaks on top), ties in colour order.
fn stacking_order(panels: &[Panel], order: &[String], end: i64) -> Vec<String> {
    let mut busy: BTreeMap<&str, i64> = BTreeMap::new();
    for p in panels {
        for (name, s) in &p.areas {
            let mut ms = 0i64;
            for (k, &(t, v)) in s.iter().enumerate() {
                let next = s.get(k + 1).map_or(end, |x| x.0).min(end);
                if v > 0.0 && next > t.max(0) {
                    ms += next - t.max(0);
                }
            }
            *busy.entry(name.as_str()).or_default() += ms;
        }
    }
    let mut v: Vec<(&str, i64)> = busy.into_iter().collect();
    v.sort_by_key(|&(n, ms)| {
        (
            n == OTHERS,
            std::cmp::Reverse(ms),
            order.iter().position(|o| o == n).unwrap_or(usize::MAX),
            n,
        )
    });
    v.into_iter().map(|x| x.0.to_owned()).collect()
}

/// Renders the picture as SVG text.
///
/// # Errors
/// The plotting backend's error as text.
///
/// # Complexity
/// O(panels × change points × layers).
pub(crate) fn svg(pic: &Picture<'_>) -> Result<String, String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    let end = pic.end_ms.max(1);
    let n = pic.panels.len().max(1) as u32;
    let panel_h: u32 = match n {
        1 | 2 => 340,
        3 | 4 => 270,
        _ => 210,
    };
    let height = TITLE_H + n * panel_h + 10;
    let (ticks, minor) = pic.clock.ticks(end, 12);
    let clock = pic.clock;
    let order = pic.departments.order();
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|x| e(&x))?;
        let root = root
            .titled(&pic.title, ("sans-serif", 24))
            .map_err(|x| e(&x))?;
        let (plots, legend) = root.split_horizontally(WIDTH - LEGEND);
        let areas = plots.split_evenly((n as usize, 1));
        let mut shown: Vec<String> = Vec::new();
        let mut lines_shown: Vec<(LineKind, String)> = Vec::new();
        let mut marks_shown: BTreeMap<(MarkKind, String), usize> = BTreeMap::new();
        let rank = pic
            .stack
            .clone()
            .unwrap_or_else(|| stacking_order(&pic.panels, &order, end));
        for (panel, area) in pic.panels.iter().zip(areas.iter()) {
            let (mut p, bucket) = prepared(panel, end, pic.compact);
            p.areas
                .sort_by_key(|a| rank.iter().position(|n| *n == a.0).unwrap_or(usize::MAX));
            let layers: Vec<Steps> = p.areas.iter().map(|a| a.1.clone()).collect();
            let stacked = stack(&layers);
            let top = stacked
                .last()
                .map(|(_, u)| u.iter().map(|x| x.1).fold(0.0, f64::max))
                .unwrap_or(0.0);
            let peak = p
                .lines
                .iter()
                .flat_map(|l| l.steps.iter().map(|x| x.1))
                .fold(top, f64::max)
                .max(1.0)
                * 1.12;
            let y_desc = match bucket {
                Some(w) => format!("{} (mean per {})", p.y_desc, duration_text(w)),
                None => p.y_desc.clone(),
            };
            let x_range = Axis {
                lo: 0.0,
                hi: end as f64,
                bold: ticks.iter().map(|&t| t as f64).collect(),
                light: if pic.compact {
                    Vec::new()
                } else {
                    minor.iter().map(|&t| t as f64).collect()
                },
            };
            let mut chart = ChartBuilder::on(area)
                .caption(&p.title, ("sans-serif", 18))
                .margin(8)
                .margin_right(16)
                .x_label_area_size(44)
                .y_label_area_size(80)
                .build_cartesian_2d(x_range, 0.0..peak)
                .map_err(|x| e(&x))?;
            let fmt = |x: &f64| clock.label(*x as i64, end);
            chart
                .configure_mesh()
                .x_label_formatter(&fmt)
                .x_label_style(("sans-serif", 15))
                .y_label_style(("sans-serif", 15))
                .axis_desc_style(("sans-serif", 15))
                .x_desc(clock.description())
                .y_desc(y_desc)
                .y_labels(6)
                .y_max_light_lines(if pic.compact { 0 } else { 10 })
                .light_line_style(RGBColor(0xEE, 0xEE, 0xEE))
                .bold_line_style(RGBColor(0xCC, 0xCC, 0xCC))
                .draw()
                .map_err(|x| e(&x))?;
            for ((name, _), (lower, upper)) in p.areas.iter().zip(&stacked) {
                if lower == upper {
                    continue;
                }
                if !shown.contains(name) {
                    shown.push(name.clone());
                }
                let colour = department_colour(&order, name);
                let mut pts = step_vertices(upper, end);
                let mut low = step_vertices(lower, end);
                low.reverse();
                pts.extend(low);
                chart
                    .draw_series(std::iter::once(Polygon::new(pts, colour.filled())))
                    .map_err(|x| e(&x))?;
            }
            for l in &p.lines {
                let pts = step_vertices(&l.steps, end);
                match l.kind {
                    LineKind::Capacity => {
                        chart
                            .draw_series(LineSeries::new(pts, CAPACITY_COLOUR.stroke_width(3)))
                            .map_err(|x| e(&x))?;
                    }
                    LineKind::Nominal => {
                        chart
                            .draw_series(DashedLineSeries::new(
                                pts,
                                if pic.compact { 18 } else { 9 },
                                if pic.compact { 10 } else { 5 },
                                RGBColor(0x44, 0x44, 0x44).stroke_width(2),
                            ))
                            .map_err(|x| e(&x))?;
                    }
                    LineKind::FairShare => {
                        chart
                            .draw_series(DashedLineSeries::new(pts, 5, 4, BLACK.stroke_width(2)))
                            .map_err(|x| e(&x))?;
                    }
                }
                if !lines_shown.iter().any(|x| x.0 == l.kind && x.1 == l.label) {
                    lines_shown.push((l.kind, l.label.clone()));
                }
            }
            let mut marks = p.marks.clone();
            marks.sort();
            marks.dedup();
            for m in &marks {
                let legend = if m.kind == MarkKind::Timeline {
                    TIMELINE_LEGEND.to_owned()
                } else {
                    m.label.clone()
                };
                *marks_shown.entry((m.kind, legend)).or_default() += 1;
                let x = m.t_ms.clamp(0, end) as f64;
                match m.kind {
                    MarkKind::Triangle => {
                        chart
                            .draw_series(std::iter::once(
                                EmptyElement::at((x, peak))
                                    + Polygon::new(
                                        vec![(-5, 1), (5, 1), (0, 10)],
                                        PREEMPTION_COLOUR.filled(),
                                    ),
                            ))
                            .map_err(|x| e(&x))?;
                    }
                    MarkKind::Rule => {
                        chart
                            .draw_series(DashedLineSeries::new(
                                vec![(x, 0.0), (x, peak)],
                                4,
                                3,
                                BUDGET_COLOUR.stroke_width(2),
                            ))
                            .map_err(|x| e(&x))?;
                    }
                    MarkKind::Timeline => {
                        chart
                            .draw_series(LineSeries::new(
                                vec![(x, 0.0), (x, peak)],
                                TIMELINE_COLOUR.stroke_width(2),
                            ))
                            .map_err(|x| e(&x))?;
                        chart
                            .draw_series(std::iter::once(
                                EmptyElement::at((x, peak))
                                    + Text::new(
                                        m.label.clone(),
                                        (4, 2),
                                        ("sans-serif", 13).into_font().color(&TIMELINE_COLOUR),
                                    ),
                            ))
                            .map_err(|x| e(&x))?;
                    }
                }
            }
        }
        let mut depts: Vec<&String> = shown.iter().collect();
        depts.sort_by_key(|n| {
            (
                n.as_str() == OTHERS,
                order.iter().position(|o| o == *n).unwrap_or(usize::MAX),
                n.as_str(),
            )
        });
        let fills: Vec<(RGBColor, String)> = depts
            .into_iter()
            .map(|n| (department_colour(&order, n), n.clone()))
            .collect();
        draw_legend(
            &legend,
            "departments",
            &fills,
            &lines_shown,
            &marks_shown,
            &pic.notes,
        )
        .map_err(|x| e(&x))?;
        root.present().map_err(|x| e(&x))?;
    }
    Ok(text)
}

/// The legend, right of the panels: a header over the filled areas' colours, then the
/// lines, the marks (triangles with their count) and the notes.
pub(crate) fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    header: &str,
    fills: &[(RGBColor, String)],
    lines: &[(LineKind, String)],
    marks: &BTreeMap<(MarkKind, String), usize>,
    notes: &[String],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let font = ("sans-serif", 16).into_font();
    let (x, mut y) = (8i32, 30i32);
    if !fills.is_empty() && !header.is_empty() {
        area.draw(&Text::new(
            header,
            (x, y),
            ("sans-serif", 16).into_font().style(FontStyle::Bold),
        ))?;
        y += 22;
    }
    for (c, n) in fills {
        area.draw(&Rectangle::new([(x, y), (x + 18, y + 12)], c.filled()))?;
        area.draw(&Text::new(n.as_str(), (x + 26, y), font.clone()))?;
        y += 20;
    }
    y += 8;
    for (kind, label) in lines {
        let pts = vec![(x, y + 6), (x + 18, y + 6)];
        match kind {
            LineKind::Capacity => {
                area.draw(&PathElement::new(pts, CAPACITY_COLOUR.stroke_width(3)))?;
            }
            LineKind::Nominal => {
                area.draw(&PathElement::new(
                    vec![(x, y + 6), (x + 7, y + 6)],
                    RGBColor(0x44, 0x44, 0x44).stroke_width(2),
                ))?;
                area.draw(&PathElement::new(
                    vec![(x + 11, y + 6), (x + 18, y + 6)],
                    RGBColor(0x44, 0x44, 0x44).stroke_width(2),
                ))?;
            }
            LineKind::FairShare => {
                for k in 0..3 {
                    area.draw(&PathElement::new(
                        vec![(x + 7 * k, y + 6), (x + 7 * k + 4, y + 6)],
                        BLACK.stroke_width(2),
                    ))?;
                }
            }
        }
        area.draw(&Text::new(label.as_str(), (x + 26, y), font.clone()))?;
        y += 20;
    }
    for ((kind, label), count) in marks {
        match kind {
            MarkKind::Triangle => area.draw(&Polygon::new(
                vec![(x + 4, y + 1), (x + 14, y + 1), (x + 9, y + 10)],
                PREEMPTION_COLOUR.filled(),
            ))?,
            MarkKind::Rule => {
                area.draw(&PathElement::new(
                    vec![(x + 9, y - 2), (x + 9, y + 5)],
                    BUDGET_COLOUR.stroke_width(2),
                ))?;
                area.draw(&PathElement::new(
                    vec![(x + 9, y + 8), (x + 9, y + 14)],
                    BUDGET_COLOUR.stroke_width(2),
                ))?;
            }
            MarkKind::Timeline => {
                area.draw(&PathElement::new(
                    vec![(x + 9, y - 2), (x + 9, y + 14)],
                    TIMELINE_COLOUR.stroke_width(2),
                ))?;
            }
        }
        let text = if matches!(kind, MarkKind::Triangle | MarkKind::Timeline) {
            format!("{label} ({count})")
        } else {
            label.clone()
        };
        area.draw(&Text::new(text, (x + 26, y), font.clone()))?;
        y += 20;
    }
    y += 8;
    for n in notes {
        area.draw(&Text::new(
            n.as_str(),
            (x, y),
            ("sans-serif", 14).into_font(),
        ))?;
        y += 16;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integrate_sums_instants_and_drops_no_change() {
        let s = integrate(
            vec![(10, 4), (0, 2), (10, -4), (20, -2), (5, 1), (5, -1)],
            2.0,
        );
        assert_eq!(s, vec![(0, 1.0), (20, 0.0)]);
    }

    #[test]
    fn step_vertices_are_horizontal_then_vertical() {
        let s = vec![(0, 1.0), (10, 3.0), (20, 0.0)];
        assert_eq!(
            step_vertices(&s, 30),
            vec![
                (0.0, 1.0),
                (10.0, 1.0),
                (10.0, 3.0),
                (20.0, 3.0),
                (20.0, 0.0),
                (30.0, 0.0)
            ]
        );
    }

    #[test]
    fn stack_adds_layers() {
        let a = vec![(0, 1.0), (10, 0.0)];
        let b = vec![(5, 2.0)];
        let s = stack(&[a.clone(), b]);
        assert_eq!(s[0], (vec![], a));
        assert_eq!(s[1].1, vec![(0, 1.0), (5, 3.0), (10, 2.0)]);
    }

    #[test]
    fn resample_averages_over_buckets() {
        // 4 from 0 to 30, 0 after: buckets of 20 → 4, then 2 (half of 20..40), then 0
        let s = vec![(0, 4.0), (30, 0.0)];
        assert_eq!(resample(&s, 60, 20), vec![(0, 4.0), (20, 2.0), (40, 0.0)]);
        // up to 2,500 change points as they are; above, the roundest width giving ≤ 1,200
        // buckets: a month in hours (720; half-hours would be 1,440)
        assert_eq!(bucket_width(2500, 30 * 86_400_000), None);
        assert_eq!(bucket_width(2501, 30 * 86_400_000), Some(3_600_000));
        assert_eq!(duration_text(3_600_000), "1h");
    }

    #[test]
    fn a_window_carries_the_value_in_and_days_add_up_to_the_month() {
        let d = Departments::of(None);
        const H: i64 = 3_600_000;
        // 2 cards from 6 h to 30 h, 3 from 30 h to 40 h, then none; a mark at 26 h
        let pic = Picture {
            title: "m".into(),
            clock: Clock::Dates { start_unix_ms: 0 },
            end_ms: 48 * H,
            panels: vec![Panel {
                title: "H200: cards in use".into(),
                y_desc: "cards".into(),
                areas: vec![("a".into(), vec![(6 * H, 2.0), (30 * H, 3.0), (40 * H, 0.0)])],
                lines: vec![Line {
                    label: "nominal".into(),
                    kind: LineKind::Nominal,
                    steps: vec![(0, 4.0)],
                }],
                marks: vec![Mark {
                    kind: MarkKind::Triangle,
                    label: "preemption".into(),
                    t_ms: 26 * H,
                }],
            }],
            departments: &d,
            notes: Vec::new(),
            stack: None,
            compact: false,
        };
        let day2 = pic.window(24 * H, 48 * H, "day 2".into());
        assert_eq!(day2.end_ms, 24 * H);
        assert_eq!(
            day2.panels[0].areas[0].1,
            vec![(0, 2.0), (6 * H, 3.0), (16 * H, 0.0)]
        );
        assert_eq!(day2.panels[0].lines[0].steps, vec![(0, 4.0)]);
        assert_eq!(day2.panels[0].marks[0].t_ms, 2 * H);
        assert!(matches!(day2.clock, Clock::Dates { start_unix_ms } if start_unix_ms == 24 * H));
        assert!(day2.compact);
        // day 1: 2 cards for 18 h = 36; day 2: 2 × 6 + 3 × 10 = 42; the month 78
        let day1 = pic.window(0, 24 * H, "day 1".into());
        let f1 = day1.figures();
        let f2 = day2.figures();
        assert_eq!((f1[0].unit_hours, f1[0].peak), (36.0, 2.0));
        assert_eq!((f2[0].unit_hours, f2[0].peak), (42.0, 3.0));
        assert!(day1.panels[0].marks.is_empty());
        assert_eq!(pic.figures()[0].unit_hours, 78.0);
    }

    #[test]
    fn colours_follow_sorted_departments_and_others_are_grey() {
        let m = serde_json::json!({"departments": [
            {"name": "zeta", "namespaces": ["z"]},
            {"name": "alpha", "namespaces": ["a"]},
        ]});
        let mut d = Departments::of(Some(&m));
        d.note("loose-ns");
        assert_eq!(d.order(), ["alpha", "zeta", "loose-ns"]);
        assert_eq!(department_colour(&d.order(), "alpha"), PALETTE[0]);
        assert_eq!(department_colour(&d.order(), "zeta"), PALETTE[1]);
        assert_eq!(department_colour(&d.order(), "loose-ns"), PALETTE[2]);
        assert_eq!(department_colour(&d.order(), OTHERS), OTHERS_COLOUR);
        assert_eq!(d.of_namespace("z"), "zeta");
        assert_eq!(d.of_namespace("q"), "q");
    }

    #[test]
    fn date_ticks_of_a_month_are_midnights_three_days_apart() {
        // 2026-04-01T00:00Z, 30 days
        let c = Clock::Dates {
            start_unix_ms: 1_775_001_600_000,
        };
        let (t, minor) = c.ticks(30 * 86_400_000, 12);
        assert_eq!(t.len(), 11);
        assert_eq!(t[1], 3 * 86_400_000);
        assert_eq!(c.label(t[1], 30 * 86_400_000), "04-04 00:00");
        assert_eq!(minor[1], 86_400_000);
        assert_eq!(
            c.label(36 * 3_600_000 + 60_000, 2 * 86_400_000),
            "04-02 12:01"
        );
        // 475 days: ticks every 8 weeks from the first midnight, labelled with the year
        let (t, _) = c.ticks(475 * 86_400_000, 12);
        assert_eq!(t[1], 56 * 86_400_000);
        assert_eq!(c.label(t[1], 475 * 86_400_000), "2026-05-27");
    }
}

/// A colour as CSS text (`#4E79A7`).
pub fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

/// The colour of department `name` among `order` (the same rule as every picture:
/// `department_colour`) as CSS text, for pages that show a picture's legend as text.
pub fn department_hex(order: &[String], name: &str) -> String {
    hex(department_colour(order, name))
}

/// The department colour order of a scenario's `spec.metering` (its declared departments,
/// sorted), then `extra` names shown (sorted, declared ones left out): the order every
/// picture of the scenario colours departments by.
pub fn department_order<'a>(
    metering: Option<&Value>,
    extra: impl IntoIterator<Item = &'a str>,
) -> Vec<String> {
    let mut d = Departments::of(metering);
    for n in extra {
        d.note(n);
    }
    d.order()
}

/// Escapes `s` for XML and HTML text and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A picture of this module (SVG text, as its `svg` and the `svg` functions of the plot
/// modules write it) made fit for an HTML page: the XML prolog dropped, the root's fixed
/// `width` and `height` left to the page (its `viewBox` scales it), and a `<title>` and a
/// `<desc>` as its text alternative (`role="img"`, labelled by both). `id` must be unique in
/// the page.
///
/// # Complexity
/// O(length of `svg`).
pub fn inline(svg: &str, id: &str, title: &str, desc: &str) -> String {
    let body = match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    };
    let Some(close) = body.find('>') else {
        return String::new();
    };
    let (root, rest) = body.split_at(close);
    let mut attrs = String::new();
    for a in attrs_of(root.trim_start_matches("<svg")) {
        if a.starts_with("width=") || a.starts_with("height=") {
            continue;
        }
        attrs.push(' ');
        attrs.push_str(a);
    }
    format!(
        "<svg{attrs} class=\"chart\" role=\"img\" aria-labelledby=\"{id}-t {id}-d\"><title id=\"{id}-t\">{}</title><desc id=\"{id}-d\">{}</desc>{}",
        escape(title),
        escape(desc),
        &rest[1..]
    )
}

/// The attributes of an element's opening tag (`name="value"` each), quotes respected.
fn attrs_of(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        let start = i;
        let mut quoted = false;
        while i < bytes.len() && (quoted || !bytes[i].is_ascii_whitespace()) {
            if bytes[i] == b'"' {
                quoted = !quoted;
            }
            i += 1;
        }
        if i > start {
            out.push(&s[start..i]);
        }
    }
    out
}

/// Rows of bars over the same columns (small multiples: one row per class, one bar per
/// column), as [`bars`] draws them.
#[derive(Debug, Clone, Default)]
pub struct Bars {
    /// The picture's title.
    pub title: String,
    /// The columns' labels, left to right (e.g. wait buckets, days).
    pub columns: Vec<String>,
    /// Per row, its label and one count per column.
    pub rows: Vec<(String, Vec<u64>)>,
    /// What a bar counts (`workloads`, `preemptions`), for the hover text.
    pub unit: String,
}

/// Draws [`Bars`] as SVG: each row a strip labelled on the left, its bars scaled to the
/// largest count of the picture, every bar labelled with its count above it and with a
/// `<title>` (`row, column: n unit`) shown on hover; the rows take the palette's colours in
/// order, redundant with their labels. No bar is drawn for a count of 0.
///
/// # Complexity
/// O(rows × columns).
pub fn bars(b: &Bars) -> String {
    use std::fmt::Write as _;
    let label_w = 150u32;
    let cols = b.columns.len().max(1) as u32;
    let col_w = ((WIDTH - label_w - 20) / cols).max(8);
    let strip_h = 90u32;
    let top = 36u32;
    let axis_h = 40u32;
    let rows = b.rows.len().max(1) as u32;
    let height = top + rows * strip_h + axis_h;
    let width = label_w + cols * col_w + 20;
    let max = b
        .rows
        .iter()
        .flat_map(|r| r.1.iter().copied())
        .max()
        .unwrap_or(0)
        .max(1);
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" xmlns=\"http://www.w3.org/2000/svg\" font-family=\"sans-serif\">"
    );
    let _ = write!(
        s,
        "<rect x=\"0\" y=\"0\" width=\"{width}\" height=\"{height}\" fill=\"#FFFFFF\"/><text x=\"{}\" y=\"24\" text-anchor=\"middle\" font-size=\"19\" fill=\"#000000\">{}</text>",
        width / 2,
        escape(&b.title)
    );
    for (ri, (label, counts)) in b.rows.iter().enumerate() {
        let y0 = top + ri as u32 * strip_h;
        let base = y0 + strip_h - 6;
        let colour = hex(PALETTE[ri % PALETTE.len()]);
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"15\" fill=\"#000000\">{}</text><line x1=\"{label_w}\" y1=\"{base}\" x2=\"{}\" y2=\"{base}\" stroke=\"#888888\"/>",
            label_w - 8,
            base - 30,
            escape(label),
            label_w + cols * col_w
        );
        for (ci, &n) in counts.iter().enumerate() {
            if n == 0 {
                continue;
            }
            let h = ((strip_h - 28) as u64 * n / max).max(1) as u32;
            let x = label_w + ci as u32 * col_w + 2;
            let col = b.columns.get(ci).map_or("", String::as_str);
            let _ = write!(
                s,
                "<g><title>{}, {}: {n} {}</title><rect x=\"{x}\" y=\"{}\" width=\"{}\" height=\"{h}\" fill=\"{colour}\" stroke=\"#333333\" stroke-width=\"0.5\"/><text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\" fill=\"#000000\">{n}</text></g>",
                escape(label),
                escape(col),
                escape(&b.unit),
                base - h,
                col_w.saturating_sub(4).max(1),
                x + col_w.saturating_sub(4) / 2,
                base - h - 4
            );
        }
    }
    let step = (cols as usize)
        .div_ceil(((WIDTH - label_w) / 70).max(1) as usize)
        .max(1);
    for (ci, c) in b.columns.iter().enumerate() {
        if ci % step != 0 {
            continue;
        }
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"13\" fill=\"#000000\">{}</text>",
            label_w + ci as u32 * col_w + col_w / 2,
            top + rows * strip_h + 18,
            escape(c)
        );
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod page_tests {
    use super::*;

    #[test]
    fn inline_drops_the_fixed_size_and_adds_the_text_alternative() {
        let svg = "<svg width=\"1280\" height=\"734\" viewBox=\"0 0 1280 734\" xmlns=\"http://www.w3.org/2000/svg\">\n<rect/></svg>";
        assert_eq!(
            inline(svg, "u", "Usage <all>", "A & B"),
            "<svg viewBox=\"0 0 1280 734\" xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" role=\"img\" aria-labelledby=\"u-t u-d\"><title id=\"u-t\">Usage &lt;all&gt;</title><desc id=\"u-d\">A &amp; B</desc>\n<rect/></svg>"
        );
    }

    #[test]
    fn bars_label_every_bar_and_skip_zero_counts() {
        let b = Bars {
            title: "t".into(),
            columns: vec!["a".into(), "b".into()],
            rows: vec![("gold".into(), vec![3, 0])],
            unit: "workloads".into(),
        };
        let svg = bars(&b);
        assert_eq!(svg.matches("<rect").count(), 2); // background + one bar
        assert!(svg.contains("<title>gold, a: 3 workloads</title>"));
        assert!(svg.contains("fill=\"#4E79A7\""));
    }
}
