//! Integration tests of the facade (one test binary: each file of `tests/all/` a module).

mod prometheus;
mod public_api;
