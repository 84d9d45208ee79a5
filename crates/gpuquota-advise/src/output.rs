//! The advice's output: JSON (`gpuquota schema advice`), table, CSV, the patch and the
//! explanation.
//!
//! JSON: `{"name", "scenario", "currency", "knobs": [{"path", "values", "costPerMonth"}],
//! "objectives": ["minimize cost", …], "constraints": [text…], "search": {"method",
//! "components", "points", "simulated", "note"}, "current", "front": [row…],
//! "recommended": row|null, "closest": [row…], "binding": [constraint…], "explanation":
//! [sentence…]}`; a row is `{"point", "knobs": {path: value}, "figures": {metric: number},
//! "feasible", "violated": [constraint…], "alike"}` with the figures in the units of
//! [`crate::metric`] (`cost` in integer minor units), objectives first, then the constraints'
//! metrics. `current` is the scenario as written (`point` null, `knobs` empty).

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Number;

use crate::metric::{Metric, Totals};
use crate::search::Evaluated;
use crate::spec::Plan;

/// One configuration and its figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Row {
    /// Its number in the grid (the first knob varies slowest); `null` for the scenario as
    /// written.
    pub point: Option<usize>,
    /// Each knob's value, in `vary` order.
    pub knobs: IndexMap<String, String>,
    /// Each objective's and constraint's metric ([`crate::metric`] units).
    pub figures: IndexMap<String, Number>,
    /// Whether it meets every constraint.
    pub feasible: bool,
    /// The constraints it does not meet.
    pub violated: Vec<String>,
    /// Other configurations with the same objective figures (on the front only).
    pub alike: usize,
}

/// How the search went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SearchSummary {
    /// `decomposed` (components simulated apart) or `exhaustive` (one component: every
    /// configuration simulated).
    pub method: String,
    /// The knobs of each component.
    pub components: Vec<Vec<String>>,
    /// Configurations in the grid.
    pub points: usize,
    /// Simulations run (the scenario as written included).
    pub simulated: usize,
    /// Why a decomposition was given up, if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A knob of the output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct KnobOut {
    /// The path.
    pub path: String,
    /// Its values, as shown in the rows.
    pub values: Vec<String>,
    /// Its value in the scenario as written, when one of `values` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current: Option<String>,
    /// The price per unit, minor units.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_per_month: Option<i64>,
}

/// What `gpuquota advise` prints as JSON (`gpuquota schema advice`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Advice {
    /// The advice's name.
    pub name: String,
    /// The scenario file.
    pub scenario: String,
    /// The bill's currency (`cost` is in its minor units).
    pub currency: Option<String>,
    /// The knobs.
    pub knobs: Vec<KnobOut>,
    /// The objectives, in tie-break order (`minimize cost`).
    pub objectives: Vec<String>,
    /// The constraints, as written.
    pub constraints: Vec<String>,
    /// How the search went.
    pub search: SearchSummary,
    /// The scenario as written.
    pub current: Row,
    /// The Pareto front of the feasible configurations (of all of them when none is
    /// feasible), in grid order.
    pub front: Vec<Row>,
    /// The feasible configuration first by the objectives; `null` when none is feasible.
    pub recommended: Option<Row>,
    /// When none is feasible: the three configurations closest to feasible (least summed
    /// relative violation, then closest to the scenario as written).
    pub closest: Vec<Row>,
    /// When none is feasible: the constraints the closest configuration violates.
    pub binding: Vec<String>,
    /// One-at-a-time changes around the recommendation (or the closest configuration),
    /// in plain language.
    pub explanation: Vec<String>,
}

/// The metrics of the rows: objectives, then constraints' metrics not already listed.
fn columns(plan: &Plan) -> Vec<Metric> {
    let mut out: Vec<Metric> = plan.objectives.iter().map(|o| o.metric.clone()).collect();
    for c in &plan.constraints {
        if !out.contains(&c.metric) {
            out.push(c.metric.clone());
        }
    }
    out
}

fn number(m: &Metric, v: f64) -> Number {
    match m {
        Metric::Cost | Metric::Preemptions | Metric::P95Wait(_) | Metric::MeanWait(_) => {
            Number::from(v as i64)
        }
        _ => Number::from_f64(v).unwrap_or_else(|| Number::from(0)),
    }
}

/// One evaluated configuration.
struct Point {
    coords: Option<Vec<usize>>,
    values: Vec<f64>,
    violations: Vec<f64>,
}

impl Point {
    fn feasible(&self) -> bool {
        self.violations.iter().all(|v| *v == 0.0)
    }
}

fn figures(plan: &Plan, t: &Totals) -> Result<Vec<f64>, String> {
    columns(plan)
        .iter()
        .map(|m| {
            t.value(m).ok_or_else(|| {
                format!(
                    "{m}: the scenario has no such figure (no such class, budget or card type, or no spec.metering for cost)"
                )
            })
        })
        .collect()
}

fn extra_cost(plan: &Plan, coords: &[usize]) -> i64 {
    plan.knobs
        .iter()
        .zip(coords)
        .filter_map(|(k, &v)| {
            let price = k.cost_per_month?;
            let current = i64::from(k.path.starts_with("nodes."));
            Some(price.saturating_mul(k.units[v]? - current))
        })
        .fold(0i64, i64::saturating_add)
}

fn make_point(plan: &Plan, coords: Option<Vec<usize>>, t: &Totals) -> Result<Point, String> {
    let values = figures(plan, t)?;
    let cols = columns(plan);
    let violations = plan
        .constraints
        .iter()
        .map(|c| {
            let i = cols.iter().position(|m| *m == c.metric).unwrap_or(0);
            c.violation(values[i])
        })
        .collect();
    Ok(Point {
        coords,
        values,
        violations,
    })
}

/// `a` dominates `b` on the objectives.
fn dominates(plan: &Plan, a: &Point, b: &Point) -> bool {
    let mut better = false;
    for (i, o) in plan.objectives.iter().enumerate() {
        let (x, y) = if o.maximize {
            (b.values[i], a.values[i])
        } else {
            (a.values[i], b.values[i])
        };
        if x > y {
            return false;
        }
        if x < y {
            better = true;
        }
    }
    better
}

fn lexicographic(plan: &Plan, a: &Point, b: &Point) -> std::cmp::Ordering {
    for (i, o) in plan.objectives.iter().enumerate() {
        let ord = a.values[i].total_cmp(&b.values[i]);
        let ord = if o.maximize { ord.reverse() } else { ord };
        if ord.is_ne() {
            return ord;
        }
    }
    std::cmp::Ordering::Equal
}

fn row(plan: &Plan, p: &Point, alike: usize) -> Row {
    let cols = columns(plan);
    Row {
        point: p.coords.as_ref().map(|c| plan.index(c)),
        knobs: p
            .coords
            .as_ref()
            .map(|c| {
                plan.knobs
                    .iter()
                    .zip(c)
                    .map(|(k, &v)| (k.path.clone(), k.labels[v].clone()))
                    .collect()
            })
            .unwrap_or_default(),
        figures: cols
            .iter()
            .zip(&p.values)
            .map(|(m, v)| (m.to_string(), number(m, *v)))
            .collect(),
        feasible: p.feasible(),
        violated: plan
            .constraints
            .iter()
            .zip(&p.violations)
            .filter(|(_, v)| **v > 0.0)
            .map(|(c, _)| c.text.clone())
            .collect(),
        alike,
    }
}

/// The Pareto front of `idx` (indices into `points`), ties of identical objective figures
/// collapsed onto the least by `key` (closest to the scenario as written): (index, alike),
/// in grid order.
fn front(
    plan: &Plan,
    points: &[Point],
    idx: &[usize],
    key: &dyn Fn(usize) -> (usize, u128, usize),
) -> Vec<(usize, usize)> {
    let n = plan.objectives.len();
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut order = idx.to_vec();
    order.sort_by_key(|&i| key(i));
    for &i in &order {
        if idx.iter().any(|&j| dominates(plan, &points[j], &points[i])) {
            continue;
        }
        match out
            .iter_mut()
            .find(|(k, _)| points[*k].values[..n] == points[i].values[..n])
        {
            Some(e) => e.1 += 1,
            None => out.push((i, 0)),
        }
    }
    out.sort_by_key(|x| x.0);
    out
}

fn fmt_figure(m: &Metric, v: f64, currency: Option<&str>) -> String {
    match m {
        Metric::Cost => {
            let c = v as i64;
            let s = format!("{}.{:02}", c / 100, (c % 100).abs());
            match currency {
                Some(cur) => format!("{s} {cur}"),
                None => s,
            }
        }
        Metric::P95Wait(_) | Metric::MeanWait(_) => human_ms(v as i64),
        Metric::Utilisation(_) => format!("{v:.1}%"),
        Metric::LostGpuHours | Metric::GpuHours => format!("{v:.3}"),
        Metric::Budget(_) => format!("{v:.3} GPU-h left"),
        Metric::Preemptions => format!("{v}"),
    }
}

fn human_ms(ms: i64) -> String {
    if ms == 0 {
        return "0s".into();
    }
    let s = ms / 1000;
    if ms % 1000 != 0 && s < 60 {
        return format!("{ms}ms");
    }
    let (h, m, sec) = (s / 3600, s / 60 % 60, s % 60);
    let mut out = String::new();
    if h > 0 {
        out.push_str(&format!("{h}h"));
    }
    if m > 0 {
        out.push_str(&format!("{m}m"));
    }
    if sec > 0 || out.is_empty() {
        out.push_str(&format!("{sec}s"));
    }
    out
}

/// One-at-a-time deltas around `at`: for each knob, its neighbouring values with the
/// others held, the figures that move and the constraints that break or come to hold.
fn explain(plan: &Plan, points: &[Point], at: &Point, currency: Option<&str>) -> Vec<String> {
    let Some(c) = &at.coords else {
        return Vec::new();
    };
    let cols = columns(plan);
    let mut out = Vec::new();
    for (k, knob) in plan.knobs.iter().enumerate() {
        let mut moves = Vec::new();
        for d in [-1i64, 1] {
            let Some(v) = c[k].checked_add_signed(d as isize) else {
                continue;
            };
            if v >= knob.labels.len() {
                continue;
            }
            let mut n = c.clone();
            n[k] = v;
            let p = &points[plan.index(&n)];
            let mut changes = Vec::new();
            for (i, m) in cols.iter().enumerate() {
                let (a, b) = (at.values[i], p.values[i]);
                if a != b {
                    changes.push(format!(
                        "{m} {} → {}",
                        fmt_figure(m, a, currency),
                        fmt_figure(m, b, currency)
                    ));
                }
            }
            for (ci, con) in plan.constraints.iter().enumerate() {
                let (was, now) = (at.violations[ci] == 0.0, p.violations[ci] == 0.0);
                if was && !now {
                    changes.push(format!("breaks `{}`", con.text));
                } else if !was && now {
                    changes.push(format!("meets `{}`", con.text));
                }
            }
            moves.push(format!(
                "to {}: {}",
                knob.labels[v],
                if changes.is_empty() {
                    "nothing changes".to_owned()
                } else {
                    changes.join(", ")
                }
            ));
        }
        if moves.is_empty() {
            continue;
        }
        out.push(format!(
            "{} at {}; moving it {}.",
            knob.path,
            knob.labels[c[k]],
            moves.join("; moving it ")
        ));
    }
    out
}

/// Every configuration's figures, the front, the recommendation and the explanation.
pub(crate) fn assemble(
    plan: &Plan,
    ev: &Evaluated,
    current_values: &[Option<usize>],
) -> Result<Advice, gpuquota_model::Diagnostics> {
    let n = plan.points();
    let distance = |i: usize| -> (usize, u128, usize) {
        let c = plan.coordinates(i);
        let mut changed = 0;
        let mut amount: u128 = 0;
        for (k, knob) in plan.knobs.iter().enumerate() {
            let Some(cur) = current_values[k] else {
                continue;
            };
            if c[k] != cur {
                changed += 1;
                for ((_, a), (_, b)) in knob.settings[c[k]].iter().zip(&knob.settings[cur]) {
                    if let (Ok(a), Ok(b)) = (a.parse::<i64>(), b.parse::<i64>()) {
                        amount += u128::from(a.abs_diff(b));
                    }
                }
            }
        }
        (changed, amount, i)
    };
    let mut points = Vec::with_capacity(n);
    for i in 0..n {
        let c = plan.coordinates(i);
        let t = ev.totals(plan, &c, extra_cost(plan, &c));
        points.push(make_point(plan, Some(c), &t).map_err(crate::refuse)?);
    }
    let current = {
        let mut t = Totals {
            window_ms: ev.baseline.window_ms,
            bill: ev.baseline.bill,
            cards: ev.baseline.cards.clone(),
            budgets: ev
                .baseline
                .budgets
                .iter()
                .map(|(b, x)| (b.clone(), x.1))
                .collect(),
            ..Totals::default()
        };
        for w in ev.baseline.workloads.values() {
            t.add(w, &ev.baseline);
        }
        make_point(plan, None, &t).map_err(crate::refuse)?
    };
    let currency = ev.baseline.currency.clone();
    let feasible: Vec<usize> = (0..n).filter(|&i| points[i].feasible()).collect();
    let (front_idx, recommended, closest, binding, anchor) = if feasible.is_empty() {
        let all: Vec<usize> = (0..n).collect();
        let mut by: Vec<usize> = all.clone();
        let total = |i: usize| points[i].violations.iter().sum::<f64>();
        by.sort_by(|&a, &b| {
            total(a)
                .total_cmp(&total(b))
                .then(distance(a).cmp(&distance(b)))
        });
        by.truncate(3);
        let binding = by
            .first()
            .map(|&i| {
                plan.constraints
                    .iter()
                    .zip(&points[i].violations)
                    .filter(|(_, v)| **v > 0.0)
                    .map(|(c, _)| c.text.clone())
                    .collect()
            })
            .unwrap_or_default();
        let anchor = by.first().copied();
        (
            front(plan, &points, &all, &distance),
            None,
            by,
            binding,
            anchor,
        )
    } else {
        let best = feasible.iter().copied().min_by(|&a, &b| {
            lexicographic(plan, &points[a], &points[b]).then(distance(a).cmp(&distance(b)))
        });
        (
            front(plan, &points, &feasible, &distance),
            best,
            Vec::new(),
            Vec::new(),
            best,
        )
    };
    let explanation = anchor
        .map(|i| explain(plan, &points, &points[i], currency.as_deref()))
        .unwrap_or_default();
    let single_whole = ev.components.len() == 1;
    Ok(Advice {
        name: plan.name.clone(),
        scenario: plan.scenario.clone(),
        currency: currency.clone(),
        knobs: plan
            .knobs
            .iter()
            .zip(current_values)
            .map(|(k, c)| KnobOut {
                path: k.path.clone(),
                values: k.labels.clone(),
                current: c.map(|i| k.labels[i].clone()),
                cost_per_month: k.cost_per_month,
            })
            .collect(),
        objectives: plan.objectives.iter().map(ToString::to_string).collect(),
        constraints: plan.constraints.iter().map(|c| c.text.clone()).collect(),
        search: SearchSummary {
            method: if single_whole {
                "exhaustive"
            } else {
                "decomposed"
            }
            .to_owned(),
            components: ev
                .components
                .iter()
                .map(|c| {
                    c.knobs
                        .iter()
                        .map(|&k| plan.knobs[k].path.clone())
                        .collect()
                })
                .collect(),
            points: n,
            simulated: ev.simulated,
            note: ev.note.clone(),
        },
        current: row(plan, &current, 0),
        front: front_idx
            .iter()
            .map(|&(i, alike)| row(plan, &points[i], alike))
            .collect(),
        recommended: recommended.map(|i| row(plan, &points[i], 0)),
        closest: closest.iter().map(|&i| row(plan, &points[i], 0)).collect(),
        binding,
        explanation,
    })
}

impl Advice {
    /// Pretty JSON with a final newline.
    pub fn to_json_string(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Whether `r` is the recommended configuration.
    pub fn is_recommended(&self, r: &Row) -> bool {
        self.recommended
            .as_ref()
            .is_some_and(|x| x.point == r.point)
    }

    /// The rows the outputs show, in order, each with its role: `current`, then each front
    /// row as `recommended` or `front`, then each `closest` row.
    pub fn rows_by_role(&self) -> Vec<(&'static str, &Row)> {
        let mut rows = vec![("current", &self.current)];
        rows.extend(self.front.iter().map(|r| {
            let role = if self.is_recommended(r) {
                "recommended"
            } else {
                "front"
            };
            (role, r)
        }));
        rows.extend(self.closest.iter().map(|r| ("closest", r)));
        rows
    }

    /// A figure as the table prints it: the metric's unit (durations, GPU-hours, money in
    /// the scenario's currency, percentages).
    pub fn shown(&self, metric: &str, n: &Number) -> String {
        let m = Metric::parse(metric).ok();
        let v = n.as_f64().unwrap_or(0.0);
        m.map_or_else(
            || n.to_string(),
            |m| fmt_figure(&m, v, self.currency.as_deref()),
        )
    }

    /// The front as a table, the recommendation (or the closest configurations and the
    /// binding constraint) and, with `explain`, the explanation.
    pub fn to_table(&self, explain: bool, width: gpuquota_model::text::Width) -> String {
        let mut out = format!(
            "advice {} over {}: {} configurations, {} simulated ({}{})\n",
            self.name,
            self.scenario,
            self.search.points,
            self.search.simulated,
            self.search.method,
            self.search
                .note
                .as_ref()
                .map(|n| format!(": {n}"))
                .unwrap_or_default()
        );
        out.push_str(&format!("objectives: {}\n", self.objectives.join(", ")));
        if !self.constraints.is_empty() {
            out.push_str(&format!("constraints: {}\n", self.constraints.join("; ")));
        }
        let figure_names: Vec<&String> = self.current.figures.keys().collect();
        let mut head: Vec<String> = vec!["".into()];
        head.extend(self.knobs.iter().map(|k| k.path.clone()));
        head.extend(figure_names.iter().map(|s| (*s).clone()));
        head.push("alike".into());
        let mut t = gpuquota_model::text::Table::new(head);
        let mut add = |label: &str, r: &Row| {
            let mut cells = vec![label.to_owned()];
            cells.extend(self.knobs.iter().map(|k| {
                r.knobs
                    .get(&k.path)
                    .cloned()
                    .unwrap_or_else(|| "as written".into())
            }));
            cells.extend(r.figures.iter().map(|(m, v)| self.shown(m, v)));
            cells.push(if r.point.is_some() {
                r.alike.to_string()
            } else {
                String::new()
            });
            t.row(cells);
        };
        for (role, r) in self.rows_by_role() {
            add(role, r);
        }
        out.push_str(&t.render(width));
        match &self.recommended {
            Some(r) => {
                let changes: Vec<String> =
                    r.knobs.iter().map(|(k, v)| format!("{k} = {v}")).collect();
                out.push_str(&format!("recommended: {}\n", changes.join(", ")));
            }
            None => {
                out.push_str(&format!(
                    "no configuration meets every constraint; binding: {}\n",
                    self.binding.join("; ")
                ));
            }
        }
        if explain {
            for l in &self.explanation {
                out.push_str(&format!("  {l}\n"));
            }
        }
        out
    }

    /// In a few lines: what the recommendation changes (each knob from the scenario's value
    /// to the recommended one) and why (each figure that moves, current → recommended), or,
    /// when nothing is feasible, the binding constraint.
    pub fn summary(&self) -> String {
        let Some(r) = &self.recommended else {
            return format!(
                "No configuration of the {} meets every constraint; the closest still break: {}.\n",
                self.search.points,
                self.binding.join("; ")
            );
        };
        let mut out = format!(
            "Of {} configurations ({} simulated), the advisor recommends:\n",
            self.search.points, self.search.simulated
        );
        let mut changed = false;
        for k in &self.knobs {
            let to = r.knobs.get(&k.path).cloned().unwrap_or_default();
            let from = k.current.clone().unwrap_or_else(|| "as written".into());
            if from != to {
                changed = true;
                out.push_str(&format!("  {}: {from} → {to}\n", k.path));
            }
        }
        if !changed {
            out.push_str("  no change: the scenario as written is already the best\n");
        }
        out.push_str("because (current → recommended):\n");
        for (m, v) in &r.figures {
            let Some(c) = self.current.figures.get(m) else {
                continue;
            };
            if c != v {
                out.push_str(&format!(
                    "  {m}: {} → {}\n",
                    self.shown(m, c),
                    self.shown(m, v)
                ));
            }
        }
        let broken: Vec<&String> = self.current.violated.iter().collect();
        if !broken.is_empty() {
            out.push_str(&format!(
                "the scenario as written breaks {}; the recommendation meets every constraint\n",
                broken
                    .iter()
                    .map(|s| format!("`{s}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        out
    }

    /// The rows as CSV: `role` (`current`, `front`, `recommended`, `closest`), `point`, the
    /// knobs, the figures (JSON units), `feasible`, `violated` (`; `-joined), `alike`.
    pub fn to_csv(&self) -> String {
        let mut lines = Vec::new();
        let mut head = vec!["role".to_owned(), "point".to_owned()];
        head.extend(self.knobs.iter().map(|k| k.path.clone()));
        head.extend(self.current.figures.keys().cloned());
        head.extend(["feasible", "violated", "alike"].map(str::to_owned));
        lines.push(head);
        let mut add = |role: &str, r: &Row| {
            let mut rec = vec![
                role.to_owned(),
                r.point.map(|p| p.to_string()).unwrap_or_default(),
            ];
            rec.extend(
                self.knobs
                    .iter()
                    .map(|k| r.knobs.get(&k.path).cloned().unwrap_or_default()),
            );
            rec.extend(r.figures.values().map(ToString::to_string));
            rec.push(r.feasible.to_string());
            rec.push(r.violated.join("; "));
            rec.push(r.alike.to_string());
            lines.push(rec);
        };
        for (role, r) in self.rows_by_role() {
            add(role, r);
        }
        let quote = |s: &str| {
            if s.contains([',', '"', '\n']) {
                format!("\"{}\"", s.replace('"', "\"\""))
            } else {
                s.to_owned()
            }
        };
        lines
            .iter()
            .map(|l| l.iter().map(|c| quote(c)).collect::<Vec<_>>().join(",") + "\n")
            .collect()
    }

    /// The sweep parameters of the recommendation (or the closest configuration).
    pub fn chosen_settings(&self, plan: &Plan) -> Option<Vec<(String, String)>> {
        let r = self.recommended.as_ref().or(self.closest.first())?;
        Some(plan.settings(&plan.coordinates(r.point?)))
    }
}

/// The recommendation as a patch: every ClusterQueue and Node of `chosen` that differs from
/// `current` (new Nodes included, removed ones as a comment), as YAML documents, and the
/// scenario's `spec` fields the knobs set as a partial `Simulation`.
///
/// # Errors
/// An object that cannot be written as YAML.
pub fn patch_yaml(
    current: &gpuquota_sim::Scenario,
    chosen: &gpuquota_sim::Scenario,
    settings: &[(String, String)],
) -> Result<String, String> {
    patch_yaml_of(&current.model, &chosen.model, &chosen.name, settings)
}

/// [`patch_yaml`] of the objects of a scenario of either engine: the ClusterQueues, KAI
/// Queues (`scheduling.run.ai/v2`, their `spec`) and Nodes of `chosen` that differ from
/// `current`'s, and the `spec` fields the knobs set as a partial `Simulation` named `name`.
///
/// # Errors
/// An object that cannot be written as YAML.
pub fn patch_yaml_of(
    current: &gpuquota_model::Model,
    chosen: &gpuquota_model::Model,
    name: &str,
    settings: &[(String, String)],
) -> Result<String, String> {
    use serde_json::json;
    let mut out = String::from(
        "# The advisor's recommendation: the objects it changes, to apply over the cluster files.\n",
    );
    let mut emit = |v: serde_json::Value| -> Result<(), String> {
        let s = serde_saphyr::to_string(&v).map_err(|e| e.to_string())?;
        out.push_str("---\n");
        out.push_str(&s);
        Ok(())
    };
    for (name, cq) in &chosen.cluster_queues {
        if current.cluster_queues.get(name) != Some(cq) {
            emit(json!({
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "ClusterQueue",
                "metadata": {"name": name},
                "spec": serde_json::to_value(&cq.spec).map_err(|e| e.to_string())?,
            }))?;
        }
    }
    for (name, q) in &chosen.queues {
        if current.queues.get(name) != Some(q) {
            let mut spec = serde_json::to_value(&q.spec).map_err(|e| e.to_string())?;
            queue_numbers(&mut spec);
            emit(json!({
                "apiVersion": "scheduling.run.ai/v2",
                "kind": "Queue",
                "metadata": {"name": name},
                "spec": spec,
            }))?;
        }
    }
    for (name, n) in &chosen.nodes {
        if current.nodes.get(name) != Some(n) {
            emit(json!({
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": serde_json::to_value(&n.metadata).map_err(|e| e.to_string())?,
                "status": serde_json::to_value(&n.status).map_err(|e| e.to_string())?,
            }))?;
        }
    }
    let mut removed = Vec::new();
    for name in current.nodes.keys() {
        if !chosen.nodes.contains_key(name) {
            removed.push(name.clone());
        }
    }
    let spec: Vec<&(String, String)> = settings
        .iter()
        .filter(|(k, _)| {
            !k.starts_with("clusterQueues.")
                && !k.starts_with("queues.")
                && !k.starts_with("nodes.")
        })
        .collect();
    if !spec.is_empty() {
        let mut s = serde_json::Map::new();
        for (k, v) in spec {
            s.insert(k.clone(), json!(v));
        }
        emit(json!({
            "apiVersion": "gpuquota.dev/v1alpha1",
            "kind": "Simulation",
            "metadata": {"name": name},
            "spec": s,
        }))?;
    }
    for r in removed {
        out.push_str(&format!("# remove Node {r}\n"));
    }
    Ok(out)
}

/// A KAI Queue's `spec.resources.*.{quota,limit,overQuotaWeight}` as numbers, as KAI's Queue
/// CRD types them (`float64`): the model keeps them as quantities (`"4"`), which the API
/// server would refuse there.
fn queue_numbers(spec: &mut serde_json::Value) {
    let Some(resources) = spec
        .get_mut("resources")
        .and_then(serde_json::Value::as_object_mut)
    else {
        return;
    };
    for r in resources
        .values_mut()
        .filter_map(serde_json::Value::as_object_mut)
    {
        for v in r.values_mut() {
            let Some(t) = v.as_str() else {
                continue;
            };
            if let Ok(i) = t.parse::<i64>() {
                *v = serde_json::Value::from(i);
            } else if let Some(n) = t.parse::<f64>().ok().and_then(serde_json::Number::from_f64) {
                *v = serde_json::Value::Number(n);
            }
        }
    }
}
