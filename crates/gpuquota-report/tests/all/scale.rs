//! Pages stay aggregated: a month of 10,000 workloads renders in under half a second (in an
//! optimised build; ten times that unoptimised) and weighs under 2 MB, zoom on each week
//! included, and ten times the workloads give a page of about the same size (per-day and
//! per-bucket series, never an element per workload).

// the wall clock times the rendering, which is what this test measures
#![allow(clippy::disallowed_methods)]

use std::time::Instant;

/// A Philly-shaped synthetic trace of `jobs` jobs over 14 queues of 2,490 GPUs, with a bill.
fn month(jobs: u32) -> (gpuquota_sim::Scenario, gpuquota_sim::Report) {
    let cluster = gpuquota_sim::trace::synthetic::cluster_queues(14, 2490);
    let sim = format!(
        "apiVersion: gpuquota.dev/v1alpha1
kind: Simulation
metadata: {{name: scale-{jobs}}}
spec:
  engine: kueue
  cluster: [cluster.yaml]
  start: \"2017-10-03T00:00:00Z\"
  metering:
    currency: EUR
    cardTypes: [{{name: V100, pricePerHour: \"2.00\", flavors: [gpu]}}]
  workloads:
  - trace: {{format: philly, generate: {{jobs: {jobs}, vcs: 14, seed: 1}}, queueBy: vc}}
"
    );
    let dir = std::env::temp_dir().join(format!(
        "gpuquota-report-scale-{jobs}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("a directory");
    std::fs::write(dir.join("cluster.yaml"), &cluster).expect("written");
    std::fs::write(dir.join("scale.yaml"), &sim).expect("written");
    let simulation =
        gpuquota_sim::Simulation::from_files(&dir.join("scale.yaml")).expect("scenario");
    std::fs::remove_dir_all(&dir).ok();
    let r = gpuquota_sim::simulate(&simulation)
        .expect("simulation")
        .into_kueue()
        .expect("a Kueue report");
    let sc = simulation.kueue().expect("a Kueue scenario").clone();
    (sc, r)
}

#[test]
fn a_month_of_10000_workloads_renders_small_and_fast() {
    // 10,000 jobs over Philly's 75 days (longer than a month: more days to aggregate)
    let (sc, r) = month(10_000);
    let n = r.outcome.workloads.len();
    assert_eq!(n, 10_000);
    let t = Instant::now();
    let html = gpuquota_report::sim(&sc, &r).expect("page");
    let took = t.elapsed();
    let limit = if cfg!(debug_assertions) { 5.0 } else { 0.5 };
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!(
            "{n} workloads: {} bytes in {:.3} s\n",
            html.len(),
            took.as_secs_f64()
        )
        .as_bytes(),
    );
    assert!(html.len() < 2_000_000, "{} bytes", html.len());
    assert!(took.as_secs_f64() < limit, "{took:?}");
    // no element per workload: outside the zoom, fewer table rows than a hundredth of the
    // workloads; the zoom's tables hold a row per window, card type and department (at most
    // 35 windows × 1 card type × 15 departments, `others` included)
    let zoom = html
        .find("<div class=\"choice\">")
        .expect("a zoom on the run's windows");
    let zoom_end = zoom
        + html[zoom..]
            .find("</section>")
            .expect("the zoom's section ends");
    let (outside, inside) = (
        html[..zoom].matches("<tr").count() + html[zoom_end..].matches("<tr").count(),
        html[zoom..zoom_end].matches("<tr").count(),
    );
    assert!(outside < n / 100, "{outside} rows");
    assert!(inside <= 35 * 15 + 35, "{inside} rows in the zoom");
    // Philly's 75 days and more: the zoom is on weeks
    assert!(html[zoom..].contains("Zoom on a week (UTC, from):"));
}

#[test]
fn a_run_of_100000_workloads_gives_a_page_of_the_same_size() {
    let (sc, r) = month(100_000);
    assert_eq!(r.outcome.workloads.len(), 100_000);
    let t = Instant::now();
    let html = gpuquota_report::sim(&sc, &r).expect("page");
    let took = t.elapsed();
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!(
            "100000 workloads: {} bytes in {:.3} s\n",
            html.len(),
            took.as_secs_f64()
        )
        .as_bytes(),
    );
    assert!(html.len() < 2_000_000, "{} bytes", html.len());
    assert!(
        html.matches("<tr").count() < 1_000,
        "{} rows",
        html.matches("<tr").count()
    );
}
