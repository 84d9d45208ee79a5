//! Metering: GPU-hours per department and card type, borrowed hours, and the bill in exact
//! integer money.
//!
//! Run with `cargo run -p gpuquota --example metering`.

use gpuquota::metering::{Document, Input, run};

/// A 10-hour window on four H200 cards: department A holds two cards all the time and a MIG
/// 1g.18gb slice (1/7 of a card) for seven hours.
const DOCUMENT: &str = r#"
window: {start: 0, end: 36000}
currency: USD
cardTypes: [{name: H200, model: NVIDIA H200 NVL, pricePerHour: "4.50", capacity: 4}]
departments: [{name: A, namespaces: [team-a], quota: {H200: 2}}]
records:
  - {department: A, cardType: H200, gpus: 2, start: 0, end: 36000}
  - {namespace: team-a, cardType: H200, mig: 1g.18gb, count: 1, start: 0, end: 25200}
"#;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let doc = Document::from_yaml(DOCUMENT)?;
    // The uniform entry point: the input from the document, then the run.
    let report = run(&Input::from_document(&doc, &[])?)?;
    let out = report.to_output();
    for line in &out.lines {
        println!(
            "{} on {}: {} h allocated, {} h borrowed, {} {}",
            line.department,
            line.card_type,
            line.allocated_hours,
            line.borrowed_hours,
            line.cost,
            out.currency
        );
    }
    for idle in &out.idle {
        println!(
            "idle {}: {} h, {} {}",
            idle.card_type, idle.hours, idle.cost, out.currency
        );
    }
    println!("total {} {}", out.totals.cost, out.currency);
    assert_eq!(out.lines[0].allocated_hours, "21.000000"); // 2 × 10 h + 7 h × 1/7
    assert_eq!(out.totals.cost, "180.00"); // 40 card-hours at $4.50
    Ok(())
}
