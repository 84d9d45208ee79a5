//! The fuzz target's check, run by `cargo test` for a short budget (arbtest).

use gpuquota_metering::fuzzing::{check_bytes, check_document, check_exposition};

#[test]
fn smoke() {
    arbtest::arbtest(|u| {
        let n = u.arbitrary_len::<u8>()?;
        let bytes = u.bytes(n)?;
        check_bytes(bytes);
        Ok(())
    })
    .budget_ms(
        std::env::var("FUZZ_BUDGET_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1_500),
    );
}

#[test]
fn known_inputs_do_not_panic() {
    for text in [
        "",
        "window: {start: 0, end: 0}",
        "window: {start: -9223372036854775808, end: 9223372036854775807}\ncardTypes: [{name: X, capacity: 1}]\nrecords: [{department: A, cardType: X, start: 0}]",
        "window: {start: 0, end: 60}\ncardTypes: [{name: X, pricePerHour: \"99999999999999999999999.999999\", capacity: 18446744073709551615}]\nrecords: [{department: A, cardType: X, gpus: 18446744073709551615, start: 0, end: 60}]",
        "window: {start: 0, end: 60}\ncardTypes: [{name: X}]\nseries: [{department: A, cardType: X, step: 1, values: [18446744073709551615, 18446744073709551615]}]",
    ] {
        check_document(text);
    }
    for text in [
        "x{",
        "x{a=\"\\q\"} 1",
        "DCGM_FI_X{UUID=\"u\",modelName=\"NVIDIA H200\",namespace=\"a\"} NaN 9223372036854775807",
    ] {
        check_exposition(text);
    }
}
