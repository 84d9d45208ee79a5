//! The SVG plot: quota usage per queue over time, stacked, against the summed nominal quota,
//! with preemptions marked.

use std::collections::BTreeMap;

use ordered_float::OrderedFloat;
use plotters::prelude::*;

use crate::engine::{Outcome, RunEnd};
use crate::report::Report;

/// Buckets on the time axis (each point is the bucket's time-average usage).
const BUCKETS: usize = 400;
/// Queues drawn by name; the others are summed as `others`.
const MAX_QUEUES: usize = 12;

/// Renders the plot as SVG text.
///
/// The resource drawn is the first GPU resource the queues have quota for (else `cpu`,
/// else the first one), summed over flavors. Each queue's usage is averaged over 400 time
/// buckets and stacked (the 12 queues with the most usage by name, the rest as `others`);
/// the dashed line is the queues' summed nominal quota; red marks on the time axis are
/// preemptions.
///
/// # Errors
/// The plotting backend's error as text.
///
/// # Complexity
/// O(runs × buckets spanned + queues × buckets).
pub fn svg(report: &Report) -> Result<String, String> {
    let o = &report.outcome;
    let pick = o
        .frs
        .iter()
        .position(|(_, r)| r.is_gpu())
        .or_else(|| o.frs.iter().position(|(_, r)| r.is_cpu()))
        .unwrap_or(0);
    let Some(resource) = o.frs.get(pick).map(|(_, r)| r.clone()) else {
        return Err("nothing to plot: no resource has quota or usage".to_owned());
    };
    let frs: Vec<u32> = o
        .frs
        .iter()
        .enumerate()
        .filter(|(_, (_, r))| *r == resource)
        .map(|(i, _)| i as u32)
        .collect();
    let scale = if resource.is_cpu() { 1000.0 } else { 1.0 };
    let end = o.end_ms.max(1);
    let width = (end as f64 / BUCKETS as f64).max(1.0);
    let (series, marks) = bucketed(o, &frs, scale, end, width);
    let nominal: f64 = o
        .queues
        .iter()
        .flat_map(|q| q.nominal.iter())
        .filter(|(fr, _)| frs.contains(fr))
        .map(|x| x.1 as f64 / scale)
        .sum();
    let (stacks, acc) = stacked(series);
    let peak = acc.iter().copied().fold(nominal, f64::max).max(1.0) * 1.1;
    draw(&Picture {
        title: format!(
            "{}: {} in use per queue (stacked) vs nominal",
            report.name, resource
        ),
        resource: resource.as_str(),
        stacks,
        nominal,
        marks,
        width,
        x_end: end as f64 / 1000.0,
        peak,
    })
}

/// Each queue's usage of the flavor-resources `frs`, averaged over the time buckets of
/// `width` ms up to `end`, in units of `scale`; and the preemption times in seconds.
fn bucketed(
    o: &Outcome,
    frs: &[u32],
    scale: f64,
    end: i64,
    width: f64,
) -> (BTreeMap<String, Vec<f64>>, Vec<f64>) {
    let mut series: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut marks: Vec<f64> = Vec::new();
    for w in &o.workloads {
        for r in &w.runs {
            if matches!(r.end, RunEnd::Preempted { .. }) {
                marks.push(r.end_ms as f64 / 1000.0);
            }
            let a: i64 = r
                .usage
                .iter()
                .filter(|(fr, _)| frs.contains(fr))
                .map(|x| x.1)
                .sum();
            if a == 0 || r.end_ms <= r.start_ms {
                continue;
            }
            let s = series
                .entry(w.queue.clone())
                .or_insert_with(|| vec![0.0; BUCKETS]);
            let (t0, t1) = (r.start_ms.max(0) as f64, r.end_ms.min(end) as f64);
            let mut b = (t0 / width) as usize;
            while b < BUCKETS {
                let lo = b as f64 * width;
                let hi = lo + width;
                if lo >= t1 {
                    break;
                }
                let overlap = t1.min(hi) - t0.max(lo);
                if overlap > 0.0 {
                    s[b] += a as f64 / scale * overlap / width;
                }
                b += 1;
            }
        }
    }
    (series, marks)
}

/// The queues ranked by usage (the tail beyond [`MAX_QUEUES`] summed as `others`), as
/// cumulative stacks; and the top of the stack.
fn stacked(series: BTreeMap<String, Vec<f64>>) -> (Vec<(String, Vec<f64>)>, Vec<f64>) {
    let mut ranked: Vec<(String, Vec<f64>)> = series.into_iter().collect();
    ranked.sort_by(|a, b| {
        let (sa, sb): (f64, f64) = (a.1.iter().sum(), b.1.iter().sum());
        OrderedFloat(sb)
            .cmp(&OrderedFloat(sa))
            .then_with(|| a.0.cmp(&b.0))
    });
    if ranked.len() > MAX_QUEUES {
        let rest = ranked.split_off(MAX_QUEUES - 1);
        let mut others = vec![0.0; BUCKETS];
        for (_, s) in rest {
            for (o, v) in others.iter_mut().zip(s) {
                *o += v;
            }
        }
        ranked.push(("others".to_owned(), others));
    }
    let mut stacks: Vec<(String, Vec<f64>)> = Vec::new();
    let mut acc = vec![0.0; BUCKETS];
    for (name, s) in &ranked {
        for (a, v) in acc.iter_mut().zip(s) {
            *a += v;
        }
        stacks.push((name.clone(), acc.clone()));
    }
    (stacks, acc)
}

/// What the chart shows, computed.
struct Picture<'a> {
    title: String,
    resource: &'a str,
    stacks: Vec<(String, Vec<f64>)>,
    nominal: f64,
    marks: Vec<f64>,
    /// Bucket width, ms.
    width: f64,
    /// The time axis' end, s.
    x_end: f64,
    /// The value axis' end.
    peak: f64,
}

/// Draws the picture: the stacks as areas, the nominal line dashed, the preemptions as
/// red marks on the time axis, and the legend.
fn draw(p: &Picture<'_>) -> Result<String, String> {
    let (width, x_end, nominal) = (p.width, p.x_end, p.nominal);
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, (1000, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut chart = ChartBuilder::on(&root)
            .caption(p.title.as_str(), ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(56)
            .build_cartesian_2d(0.0..x_end, 0.0..p.peak)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc("time since start (s)")
            .y_desc(p.resource)
            .draw()
            .map_err(|e| e.to_string())?;
        let xs: Vec<f64> = (0..BUCKETS)
            .map(|b| (b as f64 + 0.5) * width / 1000.0)
            .collect();
        for (i, (name, s)) in p.stacks.iter().enumerate().rev() {
            let color = Palette99::pick(i).to_rgba();
            chart
                .draw_series(AreaSeries::new(
                    xs.iter().copied().zip(s.iter().copied()),
                    0.0,
                    color.mix(0.7),
                ))
                .map_err(|e| e.to_string())?
                .label(name.clone())
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled())
                });
        }
        chart
            .draw_series(DashedLineSeries::new(
                vec![(0.0, nominal), (x_end, nominal)],
                6,
                4,
                BLACK.stroke_width(2),
            ))
            .map_err(|e| e.to_string())?
            .label("nominal (sum)")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 10, y)], BLACK));
        let mut marks = p.marks.clone();
        marks.sort_by_key(|&t| OrderedFloat(t));
        marks.dedup();
        chart
            .draw_series(
                marks
                    .iter()
                    .map(|&t| TriangleMarker::new((t, 0.0), 5, RED.filled())),
            )
            .map_err(|e| e.to_string())?
            .label("preemption")
            .legend(|(x, y)| TriangleMarker::new((x + 5, y), 5, RED.filled()));
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(text)
}
