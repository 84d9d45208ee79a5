//! The fuzz target's checks, run by `cargo test` for a short budget (arbtest).
#![cfg(feature = "fuzzing")]

use gpuquota_mig::fuzzing::{check_plan_input, check_structured};

fn budget_ms() -> u64 {
    gpuquota_testkit::budget_ms(1000)
}

#[test]
fn structured_inputs_plan_to_verified_plans() {
    arbtest::arbtest(|u| {
        let bytes: &[u8] = u.arbitrary()?;
        check_structured(bytes);
        Ok(())
    })
    .budget_ms(budget_ms());
}

#[test]
fn raw_bytes_never_panic() {
    arbtest::arbtest(|u| {
        let bytes: &[u8] = u.arbitrary()?;
        check_plan_input(bytes);
        Ok(())
    })
    .budget_ms(budget_ms());
}

#[test]
fn yaml_shaped_inputs_never_panic() {
    const PIECES: &[&str] = &[
        "mode: pin-busy-instances\n",
        "weights: compute-slices\n",
        "gpus:\n",
        "  - {node: a, index: 0, model: A30, instances: []}\n",
        "  - {node: a, index: 1, model: A100-40GB, instances: [{profile: 3g.20gb, start: 4, busy: true}]}\n",
        "  - {node: b, index: 0, model: NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition}\n",
        "  - {node: a, index: 0, model: H100-80GB, instances: [{profile: 7g.80gb, start: 1}]}\n",
        "demand:\n",
        "  - {resource: nvidia.com/mig-1g.6gb, count: 3}\n",
        "  - {profile: 2g.10gb, count: 4, weight: 2}\n",
        "  - {profile: 1g.24gb, count: 9}\n",
        "  - {count: -1}\n",
        "{}\n",
    ];
    arbtest::arbtest(|u| {
        let n: usize = u.int_in_range(0..=10)?;
        let mut text = String::new();
        for _ in 0..n {
            text.push_str(u.choose(PIECES)?);
        }
        check_plan_input(text.as_bytes());
        Ok(())
    })
    .budget_ms(budget_ms());
}
