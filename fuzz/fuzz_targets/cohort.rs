#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| gpuquota_cohort::fuzzing::check_schedule(data));
