//! Writes one fleet of the `mig` benchmark as a `gpuquota mig plan` input (JSON) to stdout:
//! `cargo run --release -p gpuquota-benches --example mig_fleet -- VARIANT [GPUS]`, VARIANT one
//! of `empty`, `occupied30`, `occupied30-pin`, `mixed-empty`, `mixed-occupied30`,
//! `mixed-occupied30-pin`; GPUS defaults to 1,000.

use std::io::Write as _;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let gpus = args
        .get(1)
        .and_then(|a| a.parse::<u32>().ok())
        .unwrap_or(1000);
    let Some(req) = args
        .first()
        .and_then(|v| gpuquota_benches::mig::variant(v, gpus))
    else {
        eprintln!("usage: mig_fleet VARIANT [GPUS]");
        return ExitCode::FAILURE;
    };
    match serde_json::to_string(&req) {
        Ok(text) if std::io::stdout().lock().write_all(text.as_bytes()).is_ok() => {
            ExitCode::SUCCESS
        }
        _ => ExitCode::FAILURE,
    }
}
