//! Writes the `kai_sim` bench's day as files for end-to-end runs:
//! `cargo run --release -p gpuquota-benches --example kai_day -- JOBS NODES DIR [HOURS] [USAGE]`
//! writes `DIR/c.yaml` (the cluster and its jobs) and `DIR/day.yaml` (the `Simulation`,
//! 24 h unless `HOURS`; `USAGE` is a `spec.kai.usage` flow mapping such as
//! `'{fetchInterval: 1s, queryResolution: 1s}'`), then `gpuquota sim DIR/day.yaml`.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [jobs, nodes, dir, rest @ ..] = args.as_slice() else {
        return Err("usage: kai_day JOBS NODES DIR [HOURS] [USAGE]".into());
    };
    let hours: u32 = rest.first().map_or(Ok(24), |h| h.parse())?;
    let usage = rest.get(1).map(String::as_str);
    let dir = PathBuf::from(dir);
    std::fs::create_dir_all(&dir)?;
    std::fs::write(
        dir.join("c.yaml"),
        gpuquota_benches::kai::day_cluster(jobs.parse()?, nodes.parse()?),
    )?;
    std::fs::write(
        dir.join("day.yaml"),
        gpuquota_benches::kai::day_simulation("c.yaml", hours, usage),
    )?;
    Ok(())
}
