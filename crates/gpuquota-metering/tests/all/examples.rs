//! Worked examples of the bill, exact to the cent.

use gpuquota_metering::Document;
use gpuquota_model::Error;

pub(crate) fn run(yaml: &str) -> Result<gpuquota_metering::report::ReportOut, Error> {
    let doc = Document::from_yaml(yaml)?;
    assert!(doc.unknown_fields.is_empty(), "{:?}", doc.unknown_fields);
    Ok(gpuquota_metering::run(&doc.into_input(&[])?)?.to_output())
}

const H: i64 = 3600;

fn example8(extra: &str) -> String {
    format!(
        r#"
window: {{start: "2025-04-01T00:00:00Z", end: "2025-05-01T00:00:00Z"}}
currency: USD
{extra}
cardTypes: [{{name: H200, model: NVIDIA H200 NVL, pricePerHour: "4.50", capacity: 16}}]
departments:
  - {{name: A, namespaces: [team-a], quota: {{H200: 8}}}}
  - {{name: B, quota: {{H200: 6}}}}
  - {{name: C, quota: {{H200: 2}}}}
records:
  - {{department: A, cardType: H200, gpus: 8, start: "2025-04-01T00:00:00Z", end: "2025-04-16T00:00:00Z"}}
  - {{department: A, cardType: H200, gpus: 12, start: "2025-04-16T00:00:00Z", end: "2025-04-26T00:00:00Z"}}
  - {{department: A, cardType: H200, gpus: 4, start: "2025-04-26T00:00:00Z"}}
  - {{department: B, cardType: H200, gpus: 2, start: "2025-04-01T00:00:00Z"}}
  - {{department: C, cardType: H200, gpus: 2, start: "2025-04-01T00:00:00Z", end: "2025-04-26T00:00:00Z"}}
"#
    )
}

#[test]
fn example8_basis_allocated() {
    let r = run(&example8("")).unwrap();
    let a = &r.lines[0];
    assert_eq!(
        (
            a.department.as_str(),
            a.allocated_hours.to_string().as_str(),
            a.own_hours.to_string().as_str()
        ),
        ("A", "6240.000000", "5280.000000")
    );
    assert_eq!(a.borrowed_hours, "960.000000");
    assert_eq!(a.quota_hours, "5760.000000");
    assert_eq!(a.charged_hours, "6240.000000");
    assert_eq!(a.cost, "28080.00");
    assert_eq!(a.idle_share, "0.00");
    assert_eq!(a.total, "28080.00");
    assert_eq!(a.utilization, None);
    assert_eq!(r.lines[1].cost, "6480.00");
    assert_eq!(r.lines[1].borrowed_hours, "0.000000");
    assert_eq!(r.lines[2].cost, "5400.00");
    assert_eq!(r.lines[2].allocated_hours, "1200.000000");
    assert_eq!(r.idle[0].hours, "2640.000000");
    assert_eq!(r.idle[0].cost, "11880.00");
    assert_eq!(r.totals.cost, "51840.00");
    assert_eq!(r.totals.exact_cost, "51840.000000");
    assert_eq!(r.totals.drift, "0.00");
}

#[test]
fn example8_idle_weighted_largest_remainder() {
    let r = run(&example8("idle: weighted")).unwrap();
    let shares: Vec<_> = r.lines.iter().map(|l| l.idle_share).collect();
    assert_eq!(shares, ["8348.11", "1926.49", "1605.40"]);
    let totals: Vec<_> = r.lines.iter().map(|l| l.total).collect();
    assert_eq!(totals, ["36428.11", "8406.49", "7005.40"]);
    assert_eq!(r.totals.cost, "51840.00");
    assert_eq!(r.totals.drift, "0.00");
}

#[test]
fn example8_idle_even() {
    let r = run(&example8("idle: even")).unwrap();
    let shares: Vec<_> = r.lines.iter().map(|l| l.idle_share).collect();
    assert_eq!(shares, ["3960.00", "3960.00", "3960.00"]);
    assert_eq!(r.totals.cost, "51840.00");
}

#[test]
fn example8_basis_quota_informational_and_charged() {
    let r = run(&example8("basis: quota")).unwrap();
    let charged: Vec<_> = r.lines.iter().map(|l| l.charged_hours).collect();
    assert_eq!(charged, ["5760.000000", "4320.000000", "1440.000000"]);
    assert_eq!(r.lines[0].borrowed_hours, "960.000000");
    assert_eq!(r.idle[0].hours, "0.000000");
    assert_eq!(r.totals.cost, "51840.00");
    let r = run(&example8("basis: quota\nborrowed: charged")).unwrap();
    let charged: Vec<_> = r.lines.iter().map(|l| l.charged_hours).collect();
    assert_eq!(charged, ["6720.000000", "3360.000000", "1440.000000"]);
    assert_eq!(r.totals.cost, "51840.00");
}

#[test]
fn example1_whole_plus_mig_slice_all_policies() {
    let doc = |policy: &str| {
        format!(
            r#"
window: {{start: 0, end: {end}}}
migWeights: {policy}
cardTypes: [{{name: H200, model: NVIDIA H200, pricePerHour: "4.50"}}]
records:
  - {{department: A, cardType: H200, gpus: 2, start: 0, end: {ten}}}
  - {{department: A, cardType: H200, mig: 1g.18gb, start: 0, end: {seven}}}
"#,
            end = 10 * H,
            ten = 10 * H,
            seven = 7 * H
        )
    };
    let r = run(&doc("compute-slices")).unwrap();
    assert_eq!(r.lines[0].allocated_hours, "21.000000");
    assert_eq!(r.lines[0].cost, "94.50");
    assert_eq!(
        r.window.start,
        gpuquota_metering::report::TimeOut::Seconds(0)
    );
    let r = run(&doc("memory-slices")).unwrap();
    assert_eq!(r.lines[0].allocated_hours, "20.875000");
    let r = run(&doc("max-instances")).unwrap();
    assert_eq!(r.lines[0].allocated_hours, "21.000000");
}

#[test]
fn example1_units_exact() {
    use gpuquota_metering::mig::{MigGeometry, MigPolicy, mig_weight};
    use gpuquota_metering::money::{L, UNITS_PER_CARD_HOUR};
    let g = MigGeometry::builtin("NVIDIA H200 NVL").unwrap();
    let w = mig_weight(&MigPolicy::ComputeSlices, Some(&g), "H200", "1g.18gb").unwrap();
    assert_eq!(w, 102_960);
    assert_eq!(w * 25_200, UNITS_PER_CARD_HOUR);
    assert_eq!(21 * UNITS_PER_CARD_HOUR, 54_486_432_000);
    assert_eq!(L, 720_720);
}

#[test]
fn example3_half_open_and_double_booking() {
    let base = r#"
window: {start: "2025-04-01T00:00:00Z", end: "2025-04-02T00:00:00Z"}
cardTypes: [{name: H200, pricePerHour: "4.50"}]
records:
  - {department: A, cardType: H200, start: "2025-04-01T00:00:00Z", end: "2025-04-01T01:00:00Z", holder: gpu-node-07/GPU-3f1c}
  - {department: A, cardType: H200, start: "2025-04-01T01:00:00Z", end: "2025-04-01T02:00:00Z", holder: gpu-node-07/GPU-3f1c}
"#;
    let r = run(base).unwrap();
    assert_eq!(r.lines[0].allocated_hours, "2.000000");
    let bad = format!(
        "{base}  - {{department: C, cardType: H200, start: \"2025-04-01T00:30:00Z\", end: \"2025-04-01T01:30:00Z\", holder: gpu-node-07/GPU-3f1c}}\n"
    );
    let t0 = 1_743_465_600;
    assert_eq!(
        run(&bad).unwrap_err().to_string(),
        format!(
            "records[2]: holder gpu-node-07/GPU-3f1c is already held by records[0]; \
             double booking over [{}, {})",
            t0 + 1800,
            t0 + 5400
        )
    );
}
