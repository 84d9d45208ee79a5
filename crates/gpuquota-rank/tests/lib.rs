//! Scenario tests of gpuquota-rank.
mod division;
