//! Times the import of one file, best of 3, as wall-clock time and as the process's CPU time
//! (user + system, from `/proc/self/stat`; the comparable figure on a shared machine):
//! `cargo run --release -p gpuquota-model --example import_timing -- FILE [fast|exact|file]`.
//!
//! - `fast`: the text is read into memory first (not timed) and imported with
//!   [`Importer::add_str`], the fast path;
//! - `exact`: the same on the exact path (the generic-tree path every import took before the
//!   fast path existed);
//! - `file`: [`Importer::add_file`], reading included, which streams a JSON file and never
//!   holds its whole text: run it alone under `/usr/bin/time -v` for the import's peak
//!   memory, since the other modes hold the text for the whole run.
//!
//! Without a mode, all three run in turn. The time of an import ends when the model is
//! built; freeing it is timed on its own (a process that exits need not free it).
// A measurement tool: reading the wall clock is its purpose.
#![allow(clippy::disallowed_methods)]

#[path = "support/clock.rs"]
mod clock;

use gpuquota_model::Importer;

/// The CLI's allocator (`crates/gpuquota-cli/src/main.rs`), so that the figures are those of
/// the import as `gpuquota` runs it. The figures in benches/README.md from before
/// 2026-12-02 were taken with the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let path = std::env::args().nth(1).unwrap_or_default();
    let only = std::env::args().nth(2);
    let wanted = |mode: &str| only.as_deref().is_none_or(|o| o == mode);
    let text = if wanted("fast") || wanted("exact") {
        std::fs::read_to_string(&path).unwrap_or_default()
    } else {
        String::new()
    };
    for mode in ["fast", "exact", "file"] {
        if !wanted(mode) {
            continue;
        }
        let (t, c, n) = clock::best(3, || {
            let mut importer = if mode == "exact" {
                Importer::exact()
            } else {
                Importer::new()
            };
            if mode == "file" {
                importer.add_file(std::path::Path::new(&path));
            } else {
                importer.add_str("input", &text);
            }
            importer.finish()
        });
        let objects = n
            .as_ref()
            .and_then(|r| r.as_ref().ok())
            .map_or(0, |i| i.model.len());
        let (dt, dc) = clock::drop_time(n);
        println!(
            "{path}: {mode} {:.3} s wall, {:.3} s CPU, {objects} objects; dropping the model {:.3} s wall, {:.3} s CPU",
            t.as_secs_f64(),
            c.as_secs_f64(),
            dt.as_secs_f64(),
            dc.as_secs_f64()
        );
    }
}
