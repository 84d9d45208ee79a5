//! Writes the Kueue snapshot the import benchmarks read to stdout:
//! `cargo run --release -p gpuquota-benches --example snapshot -- CLUSTER_QUEUES WORKLOADS [yaml|json]`
//! (e.g. `1000 55000 yaml`, about 20 MB).

use std::io::Write as _;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |i: usize, default: usize| {
        args.get(i)
            .and_then(|a| a.parse::<usize>().ok())
            .unwrap_or(default)
    };
    let format = match args.get(2).map(String::as_str) {
        Some("json") => gpuquota_benches::Format::Json,
        _ => gpuquota_benches::Format::Yaml,
    };
    let text = gpuquota_benches::kueue_snapshot(number(0, 1000), number(1, 55_000), 1, format);
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}
