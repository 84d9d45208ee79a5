#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| gpuquota_sim::fuzzing::check_arguments(data));
