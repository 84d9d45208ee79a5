//! Metering a month of 1-minute samples for 1,000 GPUs (43.2 million points), and a month of
//! allocation intervals, through the whole engine (sweep, borrowing, idle, money).
//!
//! Under `cargo bench -- --test` (CI's single run on a debug build) the fleet shrinks to 10
//! GPUs so that the check stays quick; the figures in `benches/README.md` use 1,000.
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use gpuquota_benches::SplitMix64;
use gpuquota_metering::money::L;
use gpuquota_metering::{
    CardType, Config, Currency, Department, GridSeries, IdleMode, Input, Owner, QuotaStep, Record,
    Shape, Window, meter,
};

const MONTH: i64 = 30 * 86_400;
const STEP: i64 = 60;

fn gpus() -> usize {
    if std::env::args().any(|a| a == "--test") {
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
        b.iter(|| black_box(meter(black_box(&grid)).map(|r| r.totals.cost_minor)))
    });
    drop(grid);
    let intervals = interval_input(n);
    group.bench_function(format!("intervals_month_{n}_gpus"), |b| {
        b.iter(|| black_box(meter(black_box(&intervals)).map(|r| r.totals.cost_minor)))
    });
    group.finish();
}

criterion_group!(benches, metering);
criterion_main!(benches);
