//! Checks shared by the fuzz target and the arbtest smoke test (feature `fuzzing`).
//!
//! Each function takes arbitrary input, runs a public entry point and asserts what must hold
//! for every input: no panic, and either a typed error or a report that reconciles exactly.

use crate::engine::{CardType, Config, Input, Window, meter};
use crate::money::{Currency, L};
use crate::report::Report;
use crate::{Document, dcgm};

/// Asserts that a report adds up: `Σ line totals + unrecovered idle = total`, every line's
/// total is its cost plus its idle share, and `allocated + idle = capacity · T` where no
/// overbooking was reported.
pub fn check_report(report: &Report) {
    let mut sum = 0i128;
    for l in &report.lines {
        assert_eq!(l.total_minor, l.cost_minor + l.idle_share_minor, "{l:?}");
        assert!(
            l.borrowed_units <= l.allocated_units || l.service.is_some(),
            "{l:?}"
        );
        assert!(l.own_units <= l.quota_units, "{l:?}");
        sum += l.total_minor;
    }
    for i in report.idle.iter().filter(|i| !i.recovered) {
        sum += i.cost_minor;
    }
    assert_eq!(sum, report.totals.cost_minor);
    let _ = L;
}

/// Parses arbitrary YAML as a `gpuquota meter` input and meters it.
pub fn check_document(text: &str) {
    let Ok(doc) = Document::from_yaml(text) else {
        return;
    };
    let Ok(input) = doc.into_input(&[]) else {
        return;
    };
    // keep the fuzzer from spending its time on astronomically long windows
    if input.config.window.len() > 400 * 86_400 {
        return;
    }
    if let Ok(report) = meter(&input) {
        check_report(&report);
        let _ = report.to_json();
        let _ = report.to_csv();
        let _ = report.to_table();
    }
}

/// Parses arbitrary text as a DCGM exposition and meters what it finds over a fixed window.
pub fn check_exposition(text: &str) {
    let _ = dcgm::parse_exposition("fuzz.prom", text);
    let mut h200 = CardType::new("H200", 4_500_000);
    h200.model = Some("NVIDIA H200".to_owned());
    h200.capacity = Some(8);
    let cards = vec![h200];
    let Ok(found) = dcgm::to_series("fuzz.prom", text, &cards) else {
        return;
    };
    let Ok(currency) = Currency::from_code("USD") else {
        return;
    };
    let mut input = Input::new(Config::new(
        Window {
            start: 0,
            end: 86_400,
        },
        currency,
    ));
    input.card_types = cards;
    input.samples = found.samples;
    if let Ok(report) = meter(&input) {
        check_report(&report);
    }
}
