//! Helpers shared by the test modules.

use gpuquota_mig::{Catalogue, Plan, PlanInstance, PlanOptions, PlanRequest};

pub(crate) fn request(yaml: &str) -> PlanRequest {
    let (req, unknown, skipped) = PlanRequest::from_yaml(yaml).expect("parses");
    assert!(unknown.is_empty(), "unknown fields {unknown:?}");
    assert!(skipped.is_empty(), "skipped documents {skipped:?}");
    req
}

pub(crate) fn problem(req: &PlanRequest) -> PlanInstance<'static> {
    req.resolve(Catalogue::builtin()).expect("valid")
}

pub(crate) fn solve(yaml: &str) -> Plan {
    let req = request(yaml);
    let p = problem(&req);
    let plan = gpuquota_mig::testkit::plan(&p, &PlanOptions::default()).expect("plans");
    gpuquota_mig::testkit::verify(&p, &plan).expect("verified");
    plan
}

#[allow(dead_code)] // used by the property tests
pub(crate) fn proptest_config(cases: u32) -> proptest::test_runner::Config {
    let mut c = proptest::test_runner::Config::with_cases(cases);
    if std::env::var_os("CI").is_some() {
        c.max_shrink_iters = 0;
    }
    c.failure_persistence = None;
    c
}
