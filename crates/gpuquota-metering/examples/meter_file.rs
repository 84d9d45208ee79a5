//! Meters one meter document the way `gpuquota meter FILE -o json` does (its `dcgm:` files
//! streamed relative to FILE) and prints the report as JSON: a release build of the metering
//! crate alone, for timing the reader (`cargo build --release -p gpuquota-metering --example
//! meter_file`, then `/usr/bin/time -v target/release/examples/meter_file FILE`).

use std::path::{Path, PathBuf};

use gpuquota_metering::{Document, run};

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: meter_file FILE");
        std::process::exit(2);
    };
    let path = Path::new(&path);
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{}: {e}", path.display());
            std::process::exit(2);
        }
    };
    let dir = path.parent().map(PathBuf::from).unwrap_or_default();
    let report = Document::from_yaml(&text)
        .and_then(|doc| {
            doc.into_input_owned_with(&mut |_, name| {
                gpuquota_metering::dcgm::open_file(&dir.join(name))
            })
        })
        .map_err(gpuquota_model::Error::from)
        .and_then(|input| run(&input));
    match report {
        Ok(r) => {
            for w in &r.warnings {
                eprintln!("warning: {w}");
            }
            print!("{}", r.to_json());
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
