//! Pages stay aggregated: a month of 10,000 workloads renders in under half a second (in an
//! optimised build; ten times that unoptimised) and weighs under 2 MB, and ten times the
//! workloads give a page of about the same size (per-day and per-bucket series, never an
//! element per workload).

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
    let sc = gpuquota_sim::scenario::from_str("scale.yaml", &sim, "scale", &|f: &str| {
        Ok((
            f.to_owned(),
            if f == "cluster.yaml" {
                cluster.clone()
            } else {
                String::new()
            },
        ))
    })
    .expect("scenario");
    let r = gpuquota_sim::simulate(&sc).expect("simulation");
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
    // no element per workload: fewer table rows than a hundredth of the workloads
    assert!(
        html.matches("<tr").count() < n / 100,
        "{} rows",
        html.matches("<tr").count()
    );
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
