//! Writes the Kueue snapshot the import benchmarks read to stdout:
//! `cargo run --release -p gpuquota-benches --example snapshot -- CLUSTER_QUEUES WORKLOADS [yaml|json|yaml-flow|yaml-mixed] [--reclaim any|lower-priority|never]`
//! (e.g. `1000 55000 yaml`, about 29 MB).
//!
//! Without `--reclaim` (or with `--reclaim any`) every ClusterQueue reclaims with `Any`, the
//! platform on which `kueue schedule` loops to its cycle bound; `--reclaim never` writes the
//! same objects with `reclaimWithinCohort: Never`, on which the schedule converges
//! (`benches/README.md` says which figure each one gives).

use std::io::Write as _;

use gpuquota_benches::Reclaim;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut reclaim = Reclaim::Any;
    if let Some(at) = args.iter().position(|a| a == "--reclaim") {
        reclaim = match args.get(at + 1).map(String::as_str) {
            Some("any") | Some("Any") => Reclaim::Any,
            Some("lower-priority") | Some("LowerPriority") => Reclaim::LowerPriority,
            Some("never") | Some("Never") => Reclaim::Never,
            other => {
                eprintln!("error: --reclaim takes any, lower-priority or never, not {other:?}");
                std::process::exit(2);
            }
        };
        args.drain(at..(at + 2).min(args.len()));
    }
    let number = |i: usize, default: usize| {
        args.get(i)
            .and_then(|a| a.parse::<usize>().ok())
            .unwrap_or(default)
    };
    let format = match args.get(2).map(String::as_str) {
        Some("json") => gpuquota_benches::Format::Json,
        Some("yaml-flow") => gpuquota_benches::Format::YamlFlow,
        Some("yaml-mixed") => gpuquota_benches::Format::YamlMixed,
        _ => gpuquota_benches::Format::Yaml,
    };
    let text = gpuquota_benches::kueue_snapshot_with(
        number(0, 1000),
        number(1, 55_000),
        1,
        format,
        reclaim,
    );
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}
