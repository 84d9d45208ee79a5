//! The KAI plot: GPU allocation (top) and fair share (bottom) per queue over time, the two
//! panels of KAI's own `plot_simple.py` (kai-scheduler/KAI-Scheduler:
//! `cmd/time-based-fairshare-simulator/examples/plot_simple.py`).

use plotters::prelude::*;

use super::report::KaiOutcome;

/// The most points drawn per line (longer series are thinned to every k-th session).
const MAX_POINTS: usize = 4000;

/// Renders the two panels as SVG text. The x axis is the session index for KAI's simulator
/// config (its `Time` column) and seconds since start otherwise.
///
/// # Errors
/// The plotting backend's error as text.
///
/// # Complexity
/// O(queues × min(sessions, 4000)).
pub fn svg(o: &KaiOutcome) -> Result<String, String> {
    let n = o.sessions as usize;
    let cycles = !o.queue_order.is_empty();
    let x_of = |i: usize| {
        if cycles {
            i as f64
        } else {
            i as f64 * o.session_interval_ms as f64 / 1000.0
        }
    };
    let step = n.div_ceil(MAX_POINTS).max(1);
    let x_end = x_of(n.max(1));
    let peak = o
        .queues
        .iter()
        .flat_map(|q| q.allocated.iter().chain(q.fair_share.iter()))
        .copied()
        .fold(1.0f64, f64::max)
        * 1.1;
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, (1000, 800)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let panels = root.split_evenly((2, 1));
        for (p, area) in panels.iter().enumerate() {
            let (title, y) = if p == 0 {
                ("GPU Allocation Over Time", "GPU Allocation")
            } else {
                ("Fair Share Over Time", "Fair Share")
            };
            let mut chart = ChartBuilder::on(area)
                .caption(format!("{}: {title}", o.name), ("sans-serif", 18))
                .margin(10)
                .x_label_area_size(32)
                .y_label_area_size(52)
                .build_cartesian_2d(0.0..x_end, 0.0..peak)
                .map_err(|e| e.to_string())?;
            chart
                .configure_mesh()
                .x_desc(if cycles {
                    "Time (cycle)"
                } else {
                    "time since start (s)"
                })
                .y_desc(y)
                .draw()
                .map_err(|e| e.to_string())?;
            for (i, q) in o.queues.iter().enumerate() {
                let color = Palette99::pick(i).to_rgba();
                let v = if p == 0 { &q.allocated } else { &q.fair_share };
                let pts: Vec<(f64, f64)> = (0..v.len())
                    .step_by(step)
                    .map(|k| (x_of(k), v[k]))
                    .collect();
                chart
                    .draw_series(LineSeries::new(pts, color.stroke_width(2)))
                    .map_err(|e| e.to_string())?
                    .label(q.name.clone())
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 12, y)], color.stroke_width(2))
                    });
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .position(SeriesLabelPosition::UpperRight)
                .draw()
                .map_err(|e| e.to_string())?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(text)
}
