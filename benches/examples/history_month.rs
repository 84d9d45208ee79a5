//! Writes a recorded month of N Kueue Workloads (default 100,000: about 200 MB of YAML)
//! into DIR as `dump.yaml`, with `platform.yaml` and the replay scenario `month.yaml`, for
//! the whole-process figure of `benches/README.md` (`gpuquota sim DIR/month.yaml`).
//!
//! `cargo run --release -p gpuquota-benches --example history_month -- DIR [N]`

use std::io::Write as _;

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().unwrap_or_else(|| "history-month".into()));
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    std::fs::create_dir_all(&dir)?;
    std::fs::write(
        dir.join("platform.yaml"),
        gpuquota_benches::history::platform(n),
    )?;
    std::fs::write(dir.join("month.yaml"), gpuquota_benches::history::SCENARIO)?;
    let dump = gpuquota_benches::history::month_dump(n);
    std::fs::write(dir.join("dump.yaml"), &dump)?;
    writeln!(
        std::io::stdout(),
        "{}: {n} workloads, {} bytes",
        dir.join("dump.yaml").display(),
        dump.len()
    )
}
