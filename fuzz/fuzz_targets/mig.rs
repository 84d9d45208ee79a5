#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    gpuquota_mig::fuzzing::check_plan_input(data);
    gpuquota_mig::fuzzing::check_structured(data);
});
