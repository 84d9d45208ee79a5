#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    gpuquota_fairshare::fuzzing::check_water_fill(data);
    gpuquota_fairshare::fuzzing::check_drs_tree(data);
    gpuquota_fairshare::fuzzing::check_order(data);
});
