//! Integration tests of gpuquota-advise (one test binary: each file of `tests/all/` a module).

mod kai;
mod search;
