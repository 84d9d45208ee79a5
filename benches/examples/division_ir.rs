//! Runs the B6 division (`gpuquota_benches::rank::division_tree`) a fixed number of times,
//! for instruction counts that do not depend on the machine's load:
//!
//! `valgrind --tool=callgrind --callgrind-out-file=/tmp/div.out
//! target/release/examples/division_ir 1 20` (arguments: kValue in whole units, repetitions),
//! then `callgrind_annotate /tmp/div.out | head -30`.
use std::hint::black_box;

use gpuquota_benches::rank::{division_totals, division_tree};
use gpuquota_rank::DivisionOptions;
use gpuquota_rank::fixed::SCALE;

fn main() {
    let mut args = std::env::args().skip(1);
    let k: i128 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(20);
    let tree = division_tree(7);
    let totals = division_totals();
    let o = DivisionOptions::default().with_k_value(k * SCALE);
    let mut sum = 0i128;
    for _ in 0..n {
        match black_box(tree.divide(black_box(totals), &o)) {
            Ok(d) => sum = sum.wrapping_add(d.fair_share.iter().map(|f| f.0[0]).sum::<i128>()),
            Err(e) => {
                eprintln!("division_ir: {e}");
                std::process::exit(1);
            }
        }
    }
    println!("{n} divisions, k={k}, checksum {sum}");
}
