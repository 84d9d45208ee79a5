//! Scenario tests of gpuquota-rank (one integration test binary).
mod division;
mod dra;
mod problems;
mod props;
mod scenarios;
mod smoke;
mod upstream;
