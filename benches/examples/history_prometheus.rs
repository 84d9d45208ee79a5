//! Writes the recorded month of N pods (default 10,000) as a Prometheus would hold it into
//! DIR: `month.om` (OpenMetrics for `promtool tsdb create-blocks-from openmetrics`),
//! `platform.yaml`, the live replay scenario `live.yaml` that asks URL (default
//! `http://127.0.0.1:9090`) and the metering document `meter.yaml`, for the live-Prometheus
//! memory figure of `benches/README.md`.
//!
//! `cargo run --release -p gpuquota-benches --example history_prometheus -- DIR [N] [URL]`

use std::io::Write as _;

use gpuquota_benches::history;

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().unwrap_or_else(|| "history-prometheus".into()));
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let url = args
        .next()
        .unwrap_or_else(|| "http://127.0.0.1:9090".into());
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("platform.yaml"), history::platform(n))?;
    std::fs::write(dir.join("live.yaml"), history::live_scenario(&url))?;
    std::fs::write(dir.join("meter.yaml"), history::meter_document(n))?;
    let mut om = std::io::BufWriter::new(std::fs::File::create(dir.join("month.om"))?);
    history::month_openmetrics(n, &mut om)?;
    om.flush()?;
    writeln!(
        std::io::stdout(),
        "{}: {n} pods",
        dir.join("month.om").display()
    )
}
