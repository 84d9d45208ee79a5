//! Metering a month of 1-minute samples for 1,000 GPUs (43.2 million points), and a month of
//! allocation intervals, through the whole engine (sweep, borrowing, idle, money).
//!
//! DCGM scrapes are metered from generated exposition text, in memory and from a file on disk
//! (the streaming reader the command line uses).
//!
//! Under `cargo bench -- --test` (CI's single run on a debug build) the fleet shrinks to 10
//! GPUs so that the check stays quick; the figures in `benches/README.md` use 1,000.
//!
//! The same binary writes the end-to-end inputs when `GPUQUOTA_GENERATE=DIR` is set (see
//! `benches/README.md`): `GPUQUOTA_GPUS` GPU-months of one-minute DCGM scrapes as Prometheus
//! text (`dcgm.prom`, with `meter.yaml`), as OpenMetrics (`dcgm.om`, with `meter-om.yaml`,
//! the file `promtool tsdb create-blocks-from openmetrics` reads) and as a compact grid
//! (`grid.json`: one `series:` entry of 43,200 one-minute values per GPU).
//! `GPUQUOTA_DAYS` shortens the period of the scrapes (default 30 days) and
//! `GPUQUOTA_FORMATS` picks what is written (a comma list of `prom`, `om`, `grid`, `range`;
//! default `prom,om,grid`): `range` is the same scrapes as a backfilled Prometheus answers
//! `query_range` at a one-minute step and its default 5-minute lookback (`dcgm-range.json`
//! with `meter-range.yaml`: each series goes on for 4 minutes past its last scrape, over the
//! start of the device's next series, as blocks without staleness markers answer).
use std::hint::black_box;
use std::io::Write;

use criterion::{Criterion, criterion_group};
use gpuquota_benches::SplitMix64;
use gpuquota_metering::money::L;
use gpuquota_metering::{
    CardType, Config, Currency, Department, GridSeries, IdleMode, Input, Owner, QuotaStep, Record,
    Shape, Window, run,
};

const MONTH: i64 = 30 * 86_400;
const STEP: i64 = 60;

fn gpus() -> usize {
    if gpuquota_benches::test_mode() {
        10
    } else {
        1_000
    }
}

fn platform(n_gpus: usize) -> Input {
    let Ok(usd) = Currency::from_code("USD") else {
        unreachable!("USD is an ISO 4217 code")
    };
    let mut cfg = Config::new(
        Window {
            start: 0,
            end: MONTH,
        },
        usd,
    );
    cfg.idle = IdleMode::Weighted;
    let mut input = Input::new(cfg);
    let mut h200 = CardType::new("H200", 4_500_000);
    h200.model = Some("NVIDIA H200".to_owned());
    h200.capacity = Some(n_gpus as u64);
    input.card_types.push(h200);
    for d in 0..10 {
        let mut dept = Department {
            name: format!("dept-{d:02}"),
            namespaces: vec![format!("ns-{d:02}")],
            ..Department::default()
        };
        dept.quota.insert(
            "H200".to_owned(),
            vec![QuotaStep {
                from: 0,
                cards_units: (n_gpus as i128 / 10) * L,
            }],
        );
        input.departments.push(dept);
    }
    input
}

/// One grid series per GPU: runs of busy (1) and free (0) minutes, a few gaps, owned by a
/// random namespace; 43,200 points each.
fn grid_input(n_gpus: usize) -> Input {
    let mut input = platform(n_gpus);
    let mut rng = SplitMix64::new(7);
    let n = (MONTH / STEP) as usize;
    for g in 0..n_gpus {
        let mut values = Vec::with_capacity(n);
        while values.len() < n {
            let run = 1 + rng.below(600) as usize;
            let v = match rng.below(10) {
                0 => None,
                1..=4 => Some(0),
                _ => Some(1),
            };
            values.extend(std::iter::repeat_n(v, run.min(n - values.len())));
        }
        input.series.push(GridSeries {
            owner: Owner::Namespace(format!("ns-{:02}", (g * 7 + rng.below(3) as usize) % 10)),
            card_type: "H200".to_owned(),
            shape: Shape::Whole(1),
            start: None,
            step: STEP,
            values,
            lookback: None,
            service: None,
        });
    }
    input
}

/// Back-to-back jobs on every GPU: about 100 intervals per GPU per month.
fn interval_input(n_gpus: usize) -> Input {
    let mut input = platform(n_gpus);
    let mut rng = SplitMix64::new(11);
    for g in 0..n_gpus {
        let mut t = 0i64;
        while t < MONTH {
            let len = 600 + rng.below(12 * 3600) as i64;
            let gap = rng.below(6 * 3600) as i64;
            input.records.push(Record {
                owner: Owner::Namespace(format!("ns-{:02}", rng.below(10))),
                card_type: "H200".to_owned(),
                shape: Shape::Whole(1),
                start: t,
                end: Some(t + len),
                holder: Some(format!("node-{}/GPU-{}", g / 8, g % 8)),
                service: None,
            });
            t += len + gap;
        }
    }
    input
}

fn metering(c: &mut Criterion) {
    let n = gpus();
    let mut group = c.benchmark_group("metering");
    group.sample_size(10);
    let grid = grid_input(n);
    group.bench_function(format!("grid_1min_month_{n}_gpus"), |b| {
        b.iter(|| black_box(run(black_box(&grid)).map(|r| r.totals.cost_minor)))
    });
    drop(grid);
    let intervals = interval_input(n);
    group.bench_function(format!("intervals_month_{n}_gpus"), |b| {
        b.iter(|| black_box(run(black_box(&intervals)).map(|r| r.totals.cost_minor)))
    });
    group.finish();
}

const GPUS_PER_NODE: usize = 8;
const NAMESPACES: usize = 10;

/// Writes one month of one-minute `DCGM_FI_DEV_GPU_UTIL` scrapes of `n_gpus` GPUs, scrape by
/// scrape: jobs of 30 minutes to 12 hours (a new pod each) with idle gaps of up to 3 hours
/// (lines without pod labels). `openmetrics` writes seconds and `# EOF` instead of
/// milliseconds. Returns the lines written.
fn write_scrapes(out: &mut impl Write, n_gpus: usize, openmetrics: bool) -> std::io::Result<u64> {
    write_scrapes_for(out, n_gpus, openmetrics, MONTH)
}

/// [`write_scrapes`] over `period` seconds.
fn write_scrapes_for(
    out: &mut impl Write,
    n_gpus: usize,
    openmetrics: bool,
    period: i64,
) -> std::io::Result<u64> {
    let mut rng = SplitMix64::new(2026);
    // per GPU: (busy until, idle until, namespace, pod serial)
    let mut state: Vec<(i64, i64, usize, u64)> = vec![(0, 0, 0, 0); n_gpus];
    let mut lines = 0u64;
    if openmetrics {
        writeln!(out, "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).")?;
        writeln!(out, "# TYPE DCGM_FI_DEV_GPU_UTIL gauge")?;
    }
    for k in 0..(period / STEP) {
        let t = k * STEP;
        if !openmetrics {
            writeln!(out, "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).")?;
            writeln!(out, "# TYPE DCGM_FI_DEV_GPU_UTIL gauge")?;
        }
        for (g, st) in state.iter_mut().enumerate() {
            if t >= st.0 && t >= st.1 {
                // the previous job ended and its idle gap is over: a new job
                let len = 1800 + rng.below(12 * 3600 - 1800) as i64;
                st.0 = t + len;
                st.1 = st.0 + rng.below(3 * 3600) as i64;
                st.2 = rng.below(NAMESPACES as u64) as usize;
                st.3 += 1;
            }
            let node = g / GPUS_PER_NODE;
            let dev = g % GPUS_PER_NODE;
            let ts = if openmetrics {
                t.to_string()
            } else {
                (t * 1000).to_string()
            };
            write!(
                out,
                "DCGM_FI_DEV_GPU_UTIL{{gpu=\"{dev}\",UUID=\"GPU-{g:08x}-7c1e-4f2a-9b3d-5e6f7a8b9c0d\",\
                 pci_bus_id=\"00000000:{:02X}:00.0\",device=\"nvidia{dev}\",modelName=\"NVIDIA H200\",\
                 Hostname=\"gpu-node-{node:03}\",DCGM_FI_DRIVER_VERSION=\"570.133.20\"",
                0x18 + dev * 0x11
            )?;
            if t < st.0 {
                write!(
                    out,
                    ",container=\"main\",namespace=\"ns-{:02}\",pod=\"job-{g}-{}-worker-0\"}} {} {ts}",
                    st.2,
                    st.3,
                    40 + rng.below(60)
                )?;
            } else {
                write!(out, "}} 0 {ts}")?;
            }
            writeln!(out)?;
            lines += 1;
        }
    }
    if openmetrics {
        writeln!(out, "# EOF")?;
    }
    Ok(lines)
}

/// The scrapes of [`write_scrapes_for`] as a backfilled Prometheus answers a `query_range`
/// of `DCGM_FI_DEV_GPU_UTIL` at a one-minute step and a 5-minute lookback: per GPU one series
/// per pod and one of the GPU without pod labels, each going on for 4 steps past its last
/// scrape (the lookback, with no staleness marker). Returns the points written.
fn write_query_range(out: &mut impl Write, n_gpus: usize, period: i64) -> std::io::Result<u64> {
    let steps = (period / STEP) as usize;
    let mut rng = SplitMix64::new(2026);
    let mut state: Vec<(i64, i64, usize, u64)> = vec![(0, 0, 0, 0); n_gpus];
    // per GPU: the value at each step, and the jobs (first step, end step, namespace, serial)
    let mut vals: Vec<Vec<u8>> = vec![Vec::with_capacity(steps); n_gpus];
    let mut jobs: Vec<Vec<(usize, usize, usize, u64)>> = vec![Vec::new(); n_gpus];
    for k in 0..steps {
        let t = k as i64 * STEP;
        for (g, st) in state.iter_mut().enumerate() {
            if t >= st.0 && t >= st.1 {
                let len = 1800 + rng.below(12 * 3600 - 1800) as i64;
                st.0 = t + len;
                st.1 = st.0 + rng.below(3 * 3600) as i64;
                st.2 = rng.below(NAMESPACES as u64) as usize;
                st.3 += 1;
                let end = ((st.0 + STEP - 1) / STEP) as usize;
                jobs[g].push((k, end.min(steps), st.2, st.3));
            }
            vals[g].push(if t < st.0 {
                40 + rng.below(60) as u8
            } else {
                0
            });
        }
    }
    const TAIL: usize = 4;
    let mut points = 0u64;
    write!(
        out,
        "{{\"status\":\"success\",\"data\":{{\"resultType\":\"matrix\",\"result\":["
    )?;
    let mut first = true;
    for g in 0..n_gpus {
        let node = g / GPUS_PER_NODE;
        let dev = g % GPUS_PER_NODE;
        let labels = format!(
            "\"DCGM_FI_DRIVER_VERSION\":\"570.133.20\",\"Hostname\":\"gpu-node-{node:03}\",\
             \"UUID\":\"GPU-{g:08x}-7c1e-4f2a-9b3d-5e6f7a8b9c0d\",\"device\":\"nvidia{dev}\",\
             \"gpu\":\"{dev}\",\"modelName\":\"NVIDIA H200\",\"pci_bus_id\":\"00000000:{:02X}:00.0\"",
            0x18 + dev * 0x11
        );
        let mut series = |out: &mut dyn Write,
                          extra: String,
                          ks: &mut dyn Iterator<Item = (usize, u8)>|
         -> std::io::Result<()> {
            let sep = if first { "\n" } else { ",\n" };
            first = false;
            write!(
                out,
                "{sep}{{\"metric\":{{\"__name__\":\"DCGM_FI_DEV_GPU_UTIL\",{labels}{extra}}},\"values\":["
            )?;
            for (n, (k, v)) in ks.enumerate() {
                let sep = if n > 0 { "," } else { "" };
                write!(out, "{sep}[{},\"{v}\"]", k as i64 * STEP)?;
                points += 1;
            }
            write!(out, "]}}")
        };
        let v = &vals[g];
        for &(s, e, ns, serial) in &jobs[g] {
            let last = v[e - 1];
            let mut ks = (s..e)
                .map(|k| (k, v[k]))
                .chain((e..(e + TAIL).min(steps)).map(|k| (k, last)));
            series(
                out,
                format!(
                    ",\"container\":\"main\",\"namespace\":\"ns-{ns:02}\",\"pod\":\"job-{g}-{serial}-worker-0\""
                ),
                &mut ks,
            )?;
        }
        // the GPU without pod labels: every step outside a job, each idle stretch going on
        // for 4 steps into the next job
        let mut in_job = vec![false; steps];
        for &(s, e, _, _) in &jobs[g] {
            in_job[s..e].iter_mut().for_each(|b| *b = true);
        }
        let mut ks = (0..steps).filter_map(|k| {
            let tail = (1..=TAIL).any(|d| k >= d && !in_job[k - d]);
            (!in_job[k] || tail).then_some((k, 0u8))
        });
        series(out, String::new(), &mut ks)?;
    }
    writeln!(out, "\n]}}}}")?;
    Ok(points)
}

/// The meter document for the generated scrapes.
fn meter_yaml(n_gpus: usize, dcgm: &str) -> String {
    let mut s = format!(
        "window: {{start: 0, end: {MONTH}}}\ncurrency: USD\n\
         cardTypes: [{{name: H200, model: NVIDIA H200, pricePerHour: \"4.50\", capacity: {n_gpus}}}]\n\
         departments:\n"
    );
    for d in 0..NAMESPACES {
        s.push_str(&format!(
            "  - {{name: dept-{d:02}, namespaces: [ns-{d:02}]}}\n"
        ));
    }
    s.push_str(&format!("dcgm: [{dcgm}]\n"));
    s
}

/// The grid form: one series per GPU, 43,200 one-minute values, JSON.
fn write_grid(out: &mut impl Write, n_gpus: usize) -> std::io::Result<()> {
    let input = grid_input(n_gpus);
    write!(
        out,
        "{{\"window\": {{\"start\": 0, \"end\": {MONTH}}}, \"currency\": \"USD\",\n\
         \"cardTypes\": [{{\"name\": \"H200\", \"model\": \"NVIDIA H200\", \"pricePerHour\": \"4.50\", \"capacity\": {n_gpus}}}],\n\
         \"departments\": ["
    )?;
    for d in 0..NAMESPACES {
        let sep = if d > 0 { ", " } else { "" };
        write!(
            out,
            "{sep}{{\"name\": \"dept-{d:02}\", \"namespaces\": [\"ns-{d:02}\"]}}"
        )?;
    }
    writeln!(out, "],\n\"series\": [")?;
    for (i, gs) in input.series.iter().enumerate() {
        let Owner::Namespace(ns) = &gs.owner else {
            continue;
        };
        let sep = if i > 0 { ",\n" } else { "" };
        write!(
            out,
            "{sep}{{\"namespace\": \"{ns}\", \"cardType\": \"H200\", \"step\": {STEP}, \"values\": ["
        )?;
        for (k, v) in gs.values.iter().enumerate() {
            let sep = if k > 0 { "," } else { "" };
            match v {
                Some(v) => write!(out, "{sep}{v}")?,
                None => write!(out, "{sep}null")?,
            }
        }
        write!(out, "]}}")?;
    }
    writeln!(out, "\n]}}")?;
    Ok(())
}

fn generate(dir: &std::path::Path, n_gpus: usize) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let file = |name: &str| -> std::io::Result<std::io::BufWriter<std::fs::File>> {
        Ok(std::io::BufWriter::with_capacity(
            1 << 20,
            std::fs::File::create(dir.join(name))?,
        ))
    };
    // `GPUQUOTA_GRID_ONLY=1` writes the grid alone (1,000 GPU-months of scrapes are 12 GB).
    if std::env::var_os("GPUQUOTA_GRID_ONLY").is_some() {
        write_grid(&mut file("grid.json")?, n_gpus)?;
        println!("{}: {n_gpus} GPU-months as a grid", dir.display());
        return Ok(());
    }
    let days: i64 = std::env::var("GPUQUOTA_DAYS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let period = days * 86_400;
    let formats = std::env::var("GPUQUOTA_FORMATS").unwrap_or_else(|_| "prom,om,grid".to_owned());
    let wants = |f: &str| formats.split(',').any(|x| x == f);
    if wants("prom") {
        let lines = write_scrapes_for(&mut file("dcgm.prom")?, n_gpus, false, period)?;
        std::fs::write(dir.join("meter.yaml"), meter_yaml(n_gpus, "dcgm.prom"))?;
        println!(
            "{}: {n_gpus} GPUs x {days} days, {lines} sample lines",
            dir.display()
        );
    }
    if wants("om") {
        write_scrapes_for(&mut file("dcgm.om")?, n_gpus, true, period)?;
        std::fs::write(
            dir.join("meter-om.yaml"),
            meter_yaml(n_gpus, "{path: dcgm.om, format: openmetrics}"),
        )?;
    }
    if wants("range") {
        let points = write_query_range(&mut file("dcgm-range.json")?, n_gpus, period)?;
        std::fs::write(
            dir.join("meter-range.yaml"),
            meter_yaml(n_gpus, "dcgm-range.json"),
        )?;
        println!("{}: query_range answer, {points} points", dir.display());
    }
    if wants("grid") {
        write_grid(&mut file("grid.json")?, n_gpus)?;
    }
    Ok(())
}

fn dcgm(c: &mut Criterion) {
    let n = if gpus() == 10 { 1 } else { 8 };
    let mut text = Vec::new();
    let Ok(lines) = write_scrapes(&mut text, n, false) else {
        return;
    };
    let Ok(text) = String::from_utf8(text) else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("gpuquota-bench-dcgm-{}", std::process::id()));
    if std::fs::create_dir_all(&dir).is_err()
        || std::fs::write(dir.join("dcgm.prom"), &text).is_err()
    {
        return;
    }
    let Ok(doc) = gpuquota_metering::Document::from_yaml(&meter_yaml(n, "dcgm.prom")) else {
        return;
    };
    let mut group = c.benchmark_group("metering");
    group.sample_size(10);
    group.throughput(criterion::Throughput::Elements(lines));
    group.bench_function(format!("dcgm_text_month_{n}_gpus"), |b| {
        b.iter(|| {
            let files = [("dcgm.prom".to_owned(), text.clone())];
            black_box(
                doc.into_input(&files)
                    .map_err(gpuquota_model::Error::from)
                    .and_then(|i| run(&i))
                    .map(|r| r.totals.cost_minor),
            )
        })
    });
    group.bench_function(format!("dcgm_file_month_{n}_gpus"), |b| {
        b.iter(|| {
            let input =
                doc.into_input_with(&mut |_, p| gpuquota_metering::dcgm::open_file(&dir.join(p)));
            black_box(
                input
                    .map_err(gpuquota_model::Error::from)
                    .and_then(|i| run(&i))
                    .map(|r| r.totals.cost_minor),
            )
        })
    });
    // the same scrapes as a backfilled Prometheus answers query_range (one-minute step)
    let mut range = Vec::new();
    let Ok(points) = write_query_range(&mut range, n, MONTH) else {
        return;
    };
    let Ok(range) = String::from_utf8(range) else {
        return;
    };
    let Ok(range_doc) = gpuquota_metering::Document::from_yaml(&meter_yaml(n, "range.json")) else {
        return;
    };
    group.throughput(criterion::Throughput::Elements(points));
    group.bench_function(format!("dcgm_query_range_month_{n}_gpus"), |b| {
        b.iter(|| {
            let files = [("range.json".to_owned(), range.clone())];
            black_box(
                range_doc
                    .into_input(&files)
                    .map_err(gpuquota_model::Error::from)
                    .and_then(|i| run(&i))
                    .map(|r| r.totals.cost_minor),
            )
        })
    });
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, metering, dcgm);

fn main() {
    if let Some(dir) = std::env::var_os("GPUQUOTA_GENERATE") {
        let n = std::env::var("GPUQUOTA_GPUS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(64);
        if let Err(e) = generate(std::path::Path::new(&dir), n) {
            eprintln!("generate: {e}");
            std::process::exit(1);
        }
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
