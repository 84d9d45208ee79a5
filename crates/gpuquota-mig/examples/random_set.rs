//! Runs `mig plan` (the exact path) on the random mixed instance set
//! (`gpuquota_mig::testkit::random_set`: 48 instances of 8–1,000 GPUs of A100-80GB, H100-80GB,
//! H200-141GB and RTX PRO 6000, 0/30/60 % occupied, both modes, demand at 50/90/110 % of the
//! compute slices) and prints per instance `W`, `R`, `F`, whether it is proven and the CPU
//! time of one plan (this thread's, from `/proc/thread-self/schedstat`), then how many are
//! proven (`prepare_ms`: the part of it spent building the option tables); the six 1,000-GPU
//! fleets of the `mig` benchmark come first, labelled `bench-VARIANT`:
//! `cargo run --release -p gpuquota-mig --example random_set -- [--write DIR] [--repeat N]
//! [--plans DIR] [FILTER]`. `--write DIR` also writes each input as `DIR/LABEL.json` (for a
//! check with another solver), `--plans DIR` each plan as `DIR/LABEL.plan.json` (the JSON of
//! `gpuquota mig plan --output json`, to compare two builds byte for byte); `--repeat N` plans each instance N times and prints the mean CPU time
//! (the kernel's CPU clock may advance in scheduler ticks, so one run of a few milliseconds
//! reads as 0 or 4 ms); FILTER keeps the labels that contain it. The last line gives the
//! median and the maximum of the per-instance CPU times.

use std::process::ExitCode;

use gpuquota_mig::testkit::Prepared;
use gpuquota_mig::{Catalogue, PlanOptions};

fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut write: Option<String> = None;
    let mut plans: Option<String> = None;
    let mut filter = String::new();
    let mut repeat = 1u64;
    while let Some(a) = args.next() {
        if a == "--write" {
            write = args.next();
        } else if a == "--plans" {
            plans = args.next();
        } else if a == "--repeat" {
            repeat = args.next().and_then(|n| n.parse().ok()).unwrap_or(1).max(1);
        } else {
            filter = a;
        }
    }
    let cat = Catalogue::builtin();
    let (mut total, mut proven) = (0u32, 0u32);
    let mut cpus: Vec<u64> = Vec::new();
    println!("label\tgpus\tW\tR\tF\toptimal\tcpu_ms\tprepare_ms");
    let bench = gpuquota_mig::testkit::VARIANTS
        .iter()
        .filter_map(|(v, ..)| {
            Some((
                format!("bench-{v}"),
                gpuquota_mig::testkit::variant(v, 1000)?,
            ))
        });
    for (label, req) in bench.chain(gpuquota_mig::testkit::random_set()) {
        if !label.contains(&filter) {
            continue;
        }
        if let Some(dir) = &write {
            let path = format!("{dir}/{label}.json");
            let ok = serde_json::to_string(&req)
                .ok()
                .is_some_and(|t| std::fs::write(&path, t).is_ok());
            if !ok {
                eprintln!("random_set: cannot write {path}");
                return ExitCode::FAILURE;
            }
        }
        let Ok(problem) = req.resolve(cat) else {
            eprintln!("random_set: {label} did not validate");
            return ExitCode::FAILURE;
        };
        let (mut prep, mut cpu) = (0u64, 0u64);
        let mut plan = None;
        for _ in 0..repeat {
            let start = cpu_ns();
            let Ok(prepared) = Prepared::new(&problem) else {
                eprintln!("random_set: {label} did not prepare");
                return ExitCode::FAILURE;
            };
            prep += cpu_ns() - start;
            let Ok(p) = prepared.solve(&PlanOptions::default()) else {
                eprintln!("random_set: {label} did not plan");
                return ExitCode::FAILURE;
            };
            cpu += cpu_ns() - start;
            plan = Some(p);
        }
        let Some(p) = plan else {
            return ExitCode::FAILURE;
        };
        let (prep, cpu) = (prep / repeat, cpu / repeat);
        if let Some(dir) = &plans {
            let path = format!("{dir}/{label}.plan.json");
            let ok = serde_json::to_string(&p)
                .ok()
                .is_some_and(|t| std::fs::write(&path, t).is_ok());
            if !ok {
                eprintln!("random_set: cannot write {path}");
                return ExitCode::FAILURE;
            }
        }
        cpus.push(cpu);
        total += 1;
        proven += u32::from(p.optimal);
        println!(
            "{label}\t{}\t{}\t{}\t{}\t{}\t{:.1}\t{:.1}",
            req.gpus.len(),
            p.value,
            p.reconfigured,
            p.fragmentation,
            p.optimal,
            cpu as f64 / 1e6,
            prep as f64 / 1e6
        );
    }
    cpus.sort_unstable();
    let median = cpus.get(cpus.len() / 2).copied().unwrap_or(0);
    let max = cpus.last().copied().unwrap_or(0);
    println!(
        "proven {proven} of {total}; CPU median {:.1} ms, max {:.1} ms",
        median as f64 / 1e6,
        max as f64 / 1e6
    );
    ExitCode::SUCCESS
}
