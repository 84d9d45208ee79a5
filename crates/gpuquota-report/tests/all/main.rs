//! Integration tests of gpuquota-report (one test binary: each file of `tests/all/` a module).

mod browser;
mod common;
mod pages;
mod scale;
