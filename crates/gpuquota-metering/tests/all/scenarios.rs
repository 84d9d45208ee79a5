//! Scenario tests: sampled series, raw scrapes, DCGM text, MIG policies, token split,
//! utilisation, rounding, currencies and every typed error.

use gpuquota_metering::figure::{BasisPoints, GpuHours, Money};
use gpuquota_metering::report::ReportOut;
use gpuquota_metering::{Document, MeteringError};
use gpuquota_model::Error;

fn run(yaml: &str) -> Result<ReportOut, Error> {
    run_with(yaml, &[])
}

/// The first line with allocated hours (lines with only quota are skipped).
fn used(r: &ReportOut) -> &gpuquota_metering::report::LineOut {
    r.lines
        .iter()
        .find(|l| l.allocated_hours != "0.000000")
        .expect("a line with use")
}

fn run_with(yaml: &str, dcgm: &[(String, String)]) -> Result<ReportOut, Error> {
    let doc = Document::from_yaml(yaml)?;
    assert!(doc.unknown_fields.is_empty(), "{:?}", doc.unknown_fields);
    Ok(gpuquota_metering::run(&doc.into_input(dcgm)?)?.to_output())
}

const HEAD: &str = r#"
window: {start: 0, end: 3600}
currency: USD
cardTypes:
  - {name: H200, model: NVIDIA H200, pricePerHour: "4.50", capacity: 8}
  - {name: L40S, pricePerHour: "1.2345", capacity: 4}
  - {name: A100-80GB, model: NVIDIA A100-SXM4-80GB, pricePerHour: "2.10", capacity: 2}
departments:
  - {name: A, namespaces: [team-a], quota: {H200: 2}}
  - {name: B, namespaces: [team-b]}
  - {name: platform, namespaces: [platform-team]}
"#;

#[test]
fn grid_left_point_rule_and_gaps() {
    let r = run(&format!(
        "{HEAD}series:\n  - {{namespace: team-a, cardType: H200, step: 300, lookback: 300, values: [4, 4, null, 2, 1, 1, 1, 1, 1, 1, 1, 1]}}\n"
    ))
    .unwrap();
    // (4 + 4 + 0 + 2 + 8·1) · 300 s = 5400 card-seconds = 1.5 h
    assert_eq!(used(&r).allocated_hours, "1.500000");
    // quota 2: borrowed 2·300 + 2·300 = 1200 s
    assert_eq!(used(&r).borrowed_hours, "0.333333");
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    // a holding present at every point of the grid counts exactly T
    let r = run(&format!(
        "{HEAD}series:\n  - {{namespace: team-b, cardType: L40S, step: 1800, values: [1, 1]}}\n"
    ))
    .unwrap();
    assert_eq!(used(&r).allocated_hours, "1.000000");
    assert!(r.warnings[0].contains("step 1800s exceeds the lookback 300s"));
}

#[test]
fn grid_mig_and_step_errors() {
    let r = run(&format!(
        "{HEAD}series:\n  - {{namespace: team-a, cardType: H200, mig: 1g.18gb, step: 1200, lookback: 1200, values: [7, 7, 7]}}\n"
    ))
    .unwrap();
    assert_eq!(used(&r).allocated_hours, "1.000000");
    let e = run(&format!(
        "{HEAD}series:\n  - {{namespace: team-a, cardType: H200, step: 700, values: [1]}}\n"
    ))
    .unwrap_err();
    assert_eq!(
        e,
        Error::from(MeteringError::StepDoesNotDivideWindow {
            what: "series[0]".into(),
            step: 700,
            window: 3600
        })
    );
}

#[test]
fn raw_samples_lookback_and_staleness() {
    let s = |extra: &str| {
        run(&format!(
            "{HEAD}samples:\n  - {{namespace: team-b, cardType: H200, lookback: 300, points: [[0, 2], [30, 2]]{extra}}}\n"
        ))
    };
    // [0,30) and [30, 330): 2 cards · 330 s
    assert_eq!(used(&s("").unwrap()).allocated_hours, "0.183333");
    // a staleness marker ends the value at once: 2 cards · 100 s
    assert_eq!(
        used(&s(", staleAt: [100]").unwrap()).allocated_hours,
        "0.055556"
    );
    // a marker after the lookback changes nothing
    assert_eq!(
        used(&s(", staleAt: [630]").unwrap()).allocated_hours,
        "0.183333"
    );
    assert_eq!(
        s(", staleAt: [30]").unwrap_err(),
        Error::from(MeteringError::DuplicateTimestamp {
            what: "samples[0].staleAt".into(),
            at: 30
        })
    );
    let dup = run(&format!(
        "{HEAD}samples:\n  - {{namespace: team-b, cardType: H200, points: [[0, 1], [0, 1]]}}\n"
    ))
    .unwrap_err();
    assert_eq!(
        dup,
        Error::from(MeteringError::DuplicateTimestamp {
            what: "samples[0]".into(),
            at: 0
        })
    );
    let back = run(&format!(
        "{HEAD}samples:\n  - {{namespace: team-b, cardType: H200, points: [[60, 1], [0, 1]]}}\n"
    ))
    .unwrap_err();
    assert_eq!(
        back.to_string(),
        "samples[0]: timestamp 0 is before the previous point"
    );
    // a sample just before the window start still counts inside it
    let r = run(&format!(
        "{HEAD}samples:\n  - {{namespace: team-b, cardType: H200, points: [[-100, 1]]}}\n"
    ))
    .unwrap();
    assert_eq!(used(&r).allocated_hours, "0.055556");
}

#[test]
fn mig_policies_and_overbooking_warning() {
    let recs = |policy: &str| {
        format!(
            "{HEAD}migWeights: {policy}\nrecords:\n  - {{department: B, cardType: H200, mig: 4g.71gb, start: 0, end: 3600, holder: n/GPU-1/1}}\n  - {{department: B, cardType: H200, mig: 2g.35gb, start: 0, end: 3600, holder: n/GPU-1/2}}\n  - {{department: B, cardType: H200, mig: 1g.18gb+me, start: 0, end: 3600, holder: n/GPU-1/3}}\n"
        )
    };
    let r = run(&recs("compute-slices")).unwrap();
    assert_eq!(used(&r).allocated_hours, "1.000000"); // 4/7 + 2/7 + 1/7
    assert!(r.warnings.is_empty());
    let r = run(&recs("memory-slices")).unwrap();
    assert_eq!(used(&r).allocated_hours, "0.875000"); // 1/2 + 1/4 + 1/8
    let r = run(&recs("max-instances")).unwrap();
    assert_eq!(used(&r).allocated_hours, "1.476190"); // 1 + 1/3 + 1/7 = 31/21
    assert!(
        r.warnings[0].contains("n/GPU-1") && r.warnings[0].contains("1.4762"),
        "{:?}",
        r.warnings
    );
    let r = run(&recs(
        "{4g.71gb: \"1/2\", 2g.35gb: \"1/4\", 1g.18gb: \"1/8\"}",
    ))
    .unwrap();
    assert_eq!(used(&r).allocated_hours, "0.875000");
    let e = run(&format!(
        "{HEAD}records:\n  - {{department: B, cardType: H200, mig: 5g.99gb, start: 0, end: 60}}\n"
    ))
    .unwrap_err();
    assert_eq!(
        e,
        Error::from(MeteringError::UnknownProfile {
            what: "records[0]".into(),
            card_type: "H200".into(),
            profile: "5g.99gb".into()
        })
    );
    // a card type without MIG geometry has no profiles
    let e = run(&format!(
        "{HEAD}records:\n  - {{department: B, cardType: L40S, mig: 1g.12gb, start: 0, end: 60}}\n"
    ))
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "records[0]: unknown MIG profile \"1g.12gb\" for card type L40S"
    );
    assert_eq!(
        e.to_string(),
        "records[0]: unknown MIG profile \"1g.12gb\" for card type L40S"
    );
}

#[test]
fn type_errors_name_every_failing_record() {
    // negative counts and numbers beyond u64 are parse errors; each names its entry
    let e = run(&format!(
        "{HEAD}records:\n  - {{department: B, cardType: L40S, gpus: 1, start: 0, end: 60}}\n  - {{department: B, cardType: L40S, gpus: -2, start: 0, end: 60}}\nseries:\n  - {{department: B, cardType: L40S, step: 60, values: [1, -1]}}\n  - {{department: B, cardType: L40S, step: 60, values: [99999999999999999999]}}\n"
    ))
    .unwrap_err();
    let text = e.to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[0].starts_with("records[1]: ") && lines[0].contains("-2"),
        "{text}"
    );
    assert!(
        lines[1].starts_with("series[0]: ") && lines[1].contains("-1"),
        "{text}"
    );
    assert!(lines[2].starts_with("series[1]: "), "{text}");
}

#[test]
fn empty_input_is_an_error() {
    for text in ["", "   \n", "# nothing\n"] {
        let e = gpuquota_metering::Document::from_yaml(text).unwrap_err();
        assert_eq!(
            e.to_string(),
            "empty input: expected a mapping with window, cardTypes and records"
        );
    }
}

#[test]
fn time_slicing_replicas_and_open_intervals() {
    let r = run(&format!(
        "{HEAD}asOf: 1800\nrecords:\n  - {{department: B, cardType: A100-80GB, replicas: 2, replicasPerGpu: 4, start: 0, end: 3600}}\n  - {{department: B, cardType: L40S, gpus: 1, start: 900}}\n"
    ))
    .unwrap();
    let a100 = r.lines.iter().find(|l| l.card_type == "A100-80GB").unwrap();
    assert_eq!(a100.allocated_hours, "0.500000");
    assert_eq!(a100.cost, "1.05");
    // open interval closed at asOf = 1800: 900 s
    let l40s = r.lines.iter().find(|l| l.card_type == "L40S").unwrap();
    assert_eq!(l40s.allocated_hours, "0.250000");
    // L40S at $1.2345/h for a quarter hour = 0.308625 → 0.31
    assert_eq!(l40s.cost, "0.31");
    let e = run(&format!(
        "{HEAD}records:\n  - {{department: B, cardType: A100-80GB, replicas: 1, replicasPerGpu: 17, start: 0, end: 60}}\n"
    ))
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "records[0]: weight 1/17 is not a multiple of 1/720720"
    );
}

#[test]
fn capacity_exceeded_is_a_warning_and_idle_stays_non_negative() {
    let r = run(&format!(
        "{HEAD}records:\n  - {{department: B, cardType: A100-80GB, gpus: 3, start: 0, end: 60}}\n"
    ))
    .unwrap();
    assert!(
        r.warnings[0]
            .contains("card type A100-80GB: 3.0000 cards held at 0, more than the capacity 2"),
        "{:?}",
        r.warnings
    );
    let idle = r.idle.iter().find(|i| i.card_type == "A100-80GB").unwrap();
    assert_eq!(idle.hours, "1.950000"); // 2 cards · 1 h − 3 cards · 1 min
}

#[test]
fn unknown_names_are_typed_errors() {
    let e = run(&format!(
        "{HEAD}records:\n  - {{department: B, cardType: B300, gpus: 1, start: 0, end: 60}}\n"
    ))
    .unwrap_err();
    assert_eq!(
        e,
        Error::from(MeteringError::UnknownCardType {
            what: "records[0].cardType".into(),
            card_type: "B300".into()
        })
    );
    let e = run(&format!(
        "{HEAD}records:\n  - {{department: B, cardType: H200, gpus: 1, start: 60, end: 0}}\n"
    ))
    .unwrap_err();
    assert_eq!(e.to_string(), "records[0]: end 0 is before start 60");
    let e = run(&format!(
        "{HEAD}records:\n  - {{department: B, cardType: H200, gpus: 0, start: 0, end: 60}}\n"
    ))
    .unwrap_err();
    assert_eq!(
        e,
        Error::from(MeteringError::ZeroCount("records[0]".into()))
    );
    let e = run(&HEAD.replace("currency: USD", "currency: XXY")).unwrap_err();
    assert_eq!(e, Error::from(MeteringError::UnknownCurrency("XXY".into())));
    let e = run(&HEAD.replace("\"4.50\"", "\"4.5000001\"")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "cardTypes[0].pricePerHour: invalid value \"4.5000001\": expected a non-negative decimal with at most 6 fractional digits"
    );
}

#[test]
fn unmapped_namespace_goes_to_unassigned() {
    let r = run(&format!(
        "{HEAD}records:\n  - {{namespace: nobody, cardType: H200, gpus: 1, start: 0, end: 3600}}\n"
    ))
    .unwrap();
    assert_eq!(used(&r).department, "unassigned");
    assert_eq!(used(&r).cost, "4.50");
}

#[test]
fn token_split_is_exact_and_keeps_unattributed() {
    let svc = |tokens: &str| {
        format!(
            "{HEAD}records:\n  - {{namespace: platform-team, cardType: H200, gpus: 1, start: 0, end: 3600}}\nservices:\n  - {{name: rag, department: platform, inputWeight: 1, outputWeight: 4, tokens: {tokens}}}\n"
        )
    };
    let r = run(&svc(
        "{A: {input: 6000000, output: 0}, B: {input: 3000000, output: 0}}",
    ))
    .unwrap();
    let lines: Vec<_> = r
        .lines
        .iter()
        .filter(|l| l.service.is_some())
        .map(|l| {
            (
                l.department.as_str(),
                l.service.as_deref(),
                l.allocated_hours,
                l.charged_hours,
                l.cost,
            )
        })
        .collect();
    assert_eq!(
        lines,
        [
            ("A", Some("rag"), h("0.666667"), h("0.666667"), m("3.00")),
            ("B", Some("rag"), h("0.333333"), h("0.333333"), m("1.50")),
        ]
    );
    // output tokens weigh 4; unattributed tokens get their own line
    let r = run(&svc(
        "{A: {input: 1000, output: 1000}, unattributed: {input: 0, output: 1250}}",
    ))
    .unwrap();
    let lines: Vec<_> = r
        .lines
        .iter()
        .filter(|l| l.service.is_some())
        .map(|l| (l.department.as_str(), l.allocated_hours))
        .collect();
    assert_eq!(
        lines,
        [("A", h("0.500000")), ("unattributed", h("0.500000"))]
    );
    // no tokens: the owner keeps the hours, with a warning
    let r = run(&svc("{}")).unwrap();
    assert_eq!(used(&r).department, "platform");
    assert_eq!(used(&r).service.as_deref(), Some("rag"));
    assert_eq!(used(&r).allocated_hours, "1.000000");
    assert!(r.warnings[0].contains("no tokens"));
    // the split is exact: three equal shares of one card-hour at $4.50 → 1.50 each; at
    // $1.00 the 1.00 is split 0.34 + 0.33 + 0.33 (largest remainder, ties by name)
    let r = run(&svc(
        "{A: {input: 1, output: 0}, B: {input: 1, output: 0}, platform: {input: 1, output: 0}}",
    )
    .replace("\"4.50\"", "\"1.00\""))
    .unwrap();
    let costs: Vec<_> = r
        .lines
        .iter()
        .filter(|l| l.service.is_some())
        .map(|l| (l.department.as_str(), l.cost))
        .collect();
    assert_eq!(
        costs,
        [("A", m("0.34")), ("B", m("0.33")), ("platform", m("0.33"))]
    );
    assert_eq!(r.totals.drift, "0.00");
    let r = run(&svc(
        "{A: {input: 1, output: 0}, B: {input: 1, output: 0}, platform: {input: 1, output: 0}}",
    ))
    .unwrap();
    let sum: f64 = r
        .lines
        .iter()
        .filter(|l| l.service.is_some())
        .map(|l| l.allocated_hours.as_f64())
        .sum();
    assert!((sum - 1.0).abs() < 1e-5);
}

#[test]
fn utilisation_weights_before_averaging() {
    let r = run(&format!(
        "{HEAD}records:\n  - {{department: B, cardType: H200, gpus: 1, start: 0, end: 3600, holder: n/GPU-0}}\n  - {{department: B, cardType: H200, mig: 1g.18gb, start: 0, end: 3600, holder: n/GPU-1/9}}\nbusy:\n  - {{holder: n/GPU-0, fraction: \"0.60\"}}\n  - {{holder: n/GPU-1/9, fraction: 0.9}}\n"
    ))
    .unwrap();
    // (0.6 + 0.9/7) / (8/7) = 0.6375, not (0.6 + 0.9)/2
    assert_eq!(used(&r).utilization, Some(bp("0.6375")));
    // partial coverage: utilisation over the covered part, and a coverage warning
    let r = run(&format!(
        "{HEAD}records:\n  - {{department: B, cardType: H200, gpus: 1, start: 0, end: 3600, holder: n/GPU-0}}\n  - {{department: B, cardType: H200, gpus: 1, start: 0, end: 3600, holder: n/GPU-2}}\nbusy:\n  - {{holder: n/GPU-0, fraction: \"0.25\"}}\n"
    ))
    .unwrap();
    assert_eq!(used(&r).utilization, Some(bp("0.2500")));
    assert!(r.warnings[0].contains("covers 50.00%"), "{:?}", r.warnings);
}

#[test]
fn rounding_modes_and_currencies() {
    // 1 h at 0.025 → 2.5 minor units
    let doc = |rounding: &str, currency: &str, price: &str| {
        format!(
            "window: {{start: 0, end: 3600}}\ncurrency: {currency}\nrounding: {rounding}\ncardTypes: [{{name: L4, pricePerHour: \"{price}\"}}]\nrecords: [{{department: A, cardType: L4, start: 0, end: 3600}}]\n"
        )
    };
    let cost = |r: &str, c: &str, p: &str| run(&doc(r, c, p)).unwrap().lines[0].cost;
    assert_eq!(cost("half-even", "USD", "0.025"), "0.02");
    assert_eq!(cost("half-even", "USD", "0.035"), "0.04");
    assert_eq!(cost("half-up", "USD", "0.025"), "0.03");
    assert_eq!(cost("half-away-from-zero", "USD", "0.025"), "0.03");
    assert_eq!(cost("down", "USD", "0.029"), "0.02");
    assert_eq!(cost("half-even", "JPY", "650.5"), "650");
    assert_eq!(cost("half-even", "KWD", "1.2345"), "1.234");
    let e = run(&doc("nearest", "USD", "1")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "rounding: invalid value \"nearest\": not one of the allowed values"
    );
}

#[test]
fn drift_is_reported_when_lines_round_apart() {
    // three departments, one third of an hour each at $0.10/h: each line 0.0333 → 0.03;
    // exact total 0.10, invoice 0.09, drift −0.01
    let r = run(
        "window: {start: 0, end: 3600}\ncardTypes: [{name: L4, pricePerHour: \"0.10\"}]\nrecords:\n  - {department: A, cardType: L4, start: 0, end: 1200}\n  - {department: B, cardType: L4, start: 1200, end: 2400}\n  - {department: C, cardType: L4, start: 2400, end: 3600}\n",
    )
    .unwrap();
    assert_eq!(r.totals.cost, "0.09");
    assert_eq!(r.totals.exact_cost, "0.100000");
    assert_eq!(r.totals.drift, "-0.01");
}

#[test]
fn piecewise_quota() {
    let r = run(
        "window: {start: 0, end: 7200}\ncardTypes: [{name: H200, pricePerHour: \"1\", capacity: 4}]\ndepartments:\n  - {name: A, quota: {H200: [{start: 0, cards: 1}, {start: 3600, cards: 3}]}}\nrecords:\n  - {department: A, cardType: H200, gpus: 2, start: 0, end: 7200}\n",
    )
    .unwrap();
    let l = &r.lines[0];
    assert_eq!(l.quota_hours, "4.000000");
    assert_eq!(l.own_hours, "3.000000");
    assert_eq!(l.borrowed_hours, "1.000000");
}

const NODE07: &str = r#"# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-3f1c",pci_bus_id="00000000:18:00.0",device="nvidia0",modelName="NVIDIA H200",Hostname="gpu-node-07",DCGM_FI_DRIVER_VERSION="570.133.20",container="trainer",namespace="team-a",pod="resnet-train-0"} 93 0
DCGM_FI_DEV_GPU_UTIL{gpu="2",UUID="GPU-5b9d",pci_bus_id="00000000:3A:00.0",device="nvidia2",modelName="NVIDIA H200",Hostname="gpu-node-07",DCGM_FI_DRIVER_VERSION="570.133.20"} 0 0
DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",UUID="GPU-3f1c",pci_bus_id="00000000:18:00.0",device="nvidia0",modelName="NVIDIA H200",Hostname="gpu-node-07",DCGM_FI_DRIVER_VERSION="570.133.20",container="trainer",namespace="team-a",pod="resnet-train-0"} 0.600000 0
DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",UUID="GPU-3f1c",pci_bus_id="00000000:18:00.0",device="nvidia0",modelName="NVIDIA H200",Hostname="gpu-node-07",DCGM_FI_DRIVER_VERSION="570.133.20",container="trainer",namespace="team-a",pod="resnet-train-0"} 0.400000 60000
DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",UUID="GPU-3f1c",pci_bus_id="00000000:18:00.0",device="nvidia0",modelName="NVIDIA H200",Hostname="gpu-node-07",DCGM_FI_DRIVER_VERSION="570.133.20"} 0.000000 120000
DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="3",UUID="GPU-c2d8",pci_bus_id="00000000:5D:00.0",device="nvidia3",modelName="NVIDIA H200",GPU_I_PROFILE="1g.18gb",GPU_I_ID="9",hostname="gpu-node-12",DCGM_FI_DRIVER_VERSION="570.133.20",container="notebook",namespace="team-b",pod="jupyter-alice"} 0.900000 0
DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="3",UUID="GPU-c2d8",pci_bus_id="00000000:5D:00.0",device="nvidia3",modelName="NVIDIA H200",GPU_I_PROFILE="1g.18gb",GPU_I_ID="13",hostname="gpu-node-12",DCGM_FI_DRIVER_VERSION="570.133.20"} 0.000000 0
DCGM_FI_DEV_GPU_UTIL{DCGM_FI_DRIVER_VERSION="570.133.20",Hostname="gpu-node-08",UUID="GPU-77aa",container="exporter",device="nvidia0",endpoint="metrics",exported_container="trainer",exported_namespace="team-b",exported_pod="x-0",gpu="0",instance="10.42.3.17:9400",job="dcgm-exporter",modelName="NVIDIA H200",namespace="gpu-operator",pci_bus_id="00000000:18:00.0",pod="dcgm-exporter-8xk2q",service="dcgm-exporter"} 50 0
DCGM_FI_DEV_GPU_UTIL{DCGM_FI_DRIVER_VERSION="570.133.20",Hostname="gpu-node-08",UUID="GPU-88bb",container="exporter",device="nvidia1",endpoint="metrics",gpu="1",instance="10.42.3.17:9400",job="dcgm-exporter",modelName="NVIDIA H200",namespace="gpu-operator",pci_bus_id="00000000:2A:00.0",pod="dcgm-exporter-8xk2q",service="dcgm-exporter"} 0 0
kube_pod_container_resource_requests{namespace="team-a",pod="resnet-train-0",uid="6f0c",container="trainer",node="gpu-node-07",resource="nvidia_com_gpu",unit="integer"} 2 0
"#;

#[test]
fn dcgm_exposition_to_holdings() {
    let r = run_with(
        &format!("{HEAD}dcgm: [node07.prom]\n"),
        &[("node07.prom".into(), NODE07.into())],
    )
    .unwrap();
    let lines: Vec<_> = r
        .lines
        .iter()
        .filter(|l| l.allocated_hours != "0.000000")
        .map(|l| (l.department.as_str(), l.allocated_hours, l.utilization))
        .collect();
    // team-a: GPU 0 held at 0 and 60, gone at 120 (stale): [0,60) + [60,120) = 120 s, busy
    // 0.6 then 0.4. team-b: the 1g.18gb instance for the 300 s lookback (1/7 card) and the
    // scraped GPU-77aa via exported_namespace (300 s); gpu-operator gets nothing.
    assert_eq!(
        lines,
        [
            ("A", h("0.033333"), Some(bp("0.5000"))),
            ("B", h("0.095238"), Some(bp("0.5500"))),
        ]
    );
    assert!(
        r.warnings[0].contains("ignored 1 lines"),
        "{:?}",
        r.warnings
    );
}

#[test]
fn dcgm_errors_name_the_line() {
    let e = run_with(
        &format!("{HEAD}dcgm: [x.prom]\n"),
        &[(
            "x.prom".into(),
            "DCGM_FI_DEV_GPU_UTIL{UUID=\"G\",modelName=\"NVIDIA H200\",namespace=\"a\"} 1\n".into(),
        )],
    )
    .unwrap_err();
    assert_eq!(
        e,
        Error::from(MeteringError::Exposition {
            file: "x.prom".into(),
            line: 1,
            reason: "sample without a timestamp".into()
        })
    );
    let e = run_with(
        &format!("{HEAD}dcgm: [x.prom]\n"),
        &[(
            "x.prom".into(),
            "DCGM_FI_DEV_GPU_UTIL{UUID=\"G\",modelName=\"NVIDIA B200\",namespace=\"a\"} 1 0\n"
                .into(),
        )],
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "x.prom:1 modelName: unknown card type \"NVIDIA B200\""
    );
    let twice = "DCGM_FI_DEV_GPU_UTIL{UUID=\"G\",modelName=\"NVIDIA H200\",namespace=\"a\"} 1 0\n";
    let e = run_with(
        &format!("{HEAD}dcgm: [x.prom]\n"),
        &[("x.prom".into(), format!("{twice}{twice}"))],
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "x.prom:2 (same series as line 1): duplicate timestamp 0"
    );
    let e = run_with(
        &format!("{HEAD}dcgm: [x.prom]\n"),
        &[("x.prom".into(), "metric{a=\"unterminated} 1 0\n".into())],
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "x.prom:1: label a: unterminated value");
}

#[test]
fn unknown_fields_are_collected() {
    let doc = Document::from_yaml(&format!("{HEAD}colour: blue\nrecords: [{{department: A, cardType: H200, start: 0, end: 1, flavour: x}}]\n")).unwrap();
    assert_eq!(doc.unknown_fields, ["colour", "records.0.flavour"]);
}

#[test]
fn busy_problems_name_the_entry_and_stray_holders_warn() {
    let recs =
        "records:\n  - {department: A, cardType: H200, gpus: 1, start: 0, holder: n/GPU-0}\n";
    let e = run(&format!(
        "{HEAD}{recs}busy:\n  - {{holder: n/GPU-0, fraction: \"1.5\"}}\n"
    ))
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "busy[0].fraction: invalid value \"1.500000\": a busy fraction lies in [0, 1]"
    );
    let r = run(&format!(
        "{HEAD}{recs}busy:\n  - {{holder: n/GPU-0, fraction: \"0.25\"}}\n  - {{holder: n/GPU-9, fraction: \"0.5\"}}\n"
    ))
    .unwrap();
    assert_eq!(used(&r).utilization, Some(bp("0.2500")));
    assert_eq!(
        r.warnings,
        ["busy[1]: holder n/GPU-9 matches no record or sample; ignored"]
    );
}

#[test]
fn borrowed_charged_under_basis_allocated_warns_and_changes_nothing() {
    let recs = "records:\n  - {department: A, cardType: H200, gpus: 3, start: 0}\n";
    let plain = run(&format!("{HEAD}{recs}")).unwrap();
    let r = run(&format!("{HEAD}borrowed: charged\n{recs}")).unwrap();
    assert_eq!(r.lines, plain.lines);
    assert_eq!(used(&r).charged_hours, "3.000000");
    assert_eq!(used(&r).borrowed_hours, "1.000000");
    assert_eq!(r.warnings.len(), 1);
    assert!(r.warnings[0].starts_with("borrowed: charged applies to basis quota"));
}

#[test]
fn replicas_default_to_the_card_types_replicas_per_gpu() {
    let head = HEAD.replace(
        "{name: A100-80GB, model: NVIDIA A100-SXM4-80GB, pricePerHour: \"2.10\", capacity: 2}",
        "{name: A100-80GB, model: NVIDIA A100-SXM4-80GB, pricePerHour: \"2.10\", capacity: 2, replicasPerGpu: 4}",
    );
    let r = run(&format!(
        "{head}records:\n  - {{department: B, cardType: A100-80GB, replicas: 2, start: 0, end: 3600}}\nseries:\n  - {{department: A, cardType: A100-80GB, replicas: 1, step: 300, values: [4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4]}}\n"
    ))
    .unwrap();
    let hours = |d: &str| {
        r.lines
            .iter()
            .find(|l| l.department == d && l.card_type == "A100-80GB")
            .map(|l| l.allocated_hours)
    };
    assert_eq!(hours("B"), Some(h("0.500000"))); // 2/4 of a card for 1 h
    assert_eq!(hours("A"), Some(h("1.000000"))); // 4 replicas of 1/4 for 1 h
    // without any replicasPerGpu a series of replicas is an error, not whole GPUs
    let e = run(&format!(
        "{HEAD}series:\n  - {{department: A, cardType: A100-80GB, replicas: 1, step: 300, values: [4]}}\n"
    ))
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "series[0].replicasPerGpu: invalid value \"\": replicas need replicasPerGpu (on the series, its card type, or the device plugin's sharing configuration of the holder's node)"
    );
}

#[test]
fn a_holding_gives_one_kind_of_shape() {
    let e = run(&format!(
        "{HEAD}records:\n  - {{department: B, cardType: H200, gpus: 1, mig: 1g.18gb, start: 0, end: 60}}\n"
    ))
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "records[0]: give only one of gpus (or count), mig and replicas, not gpus, mig"
    );
    let e = run(&format!(
        "{HEAD}records:\n  - {{department: B, cardType: H200, gpus: 1, count: 2, start: 0, end: 60}}\n"
    ))
    .unwrap_err();
    assert!(e.to_string().ends_with("not gpus, count"), "{e}");
}

#[test]
fn a_service_without_hours_warns() {
    let r = run(&format!(
        "{HEAD}records:\n  - {{department: platform, cardType: L40S, gpus: 2, start: 0, end: 3600}}\nservices:\n  - {{name: rag, department: B, tokens: {{A: {{input: 10}}}}}}\n"
    ))
    .unwrap();
    // A's line carries only its quota; platform keeps its hours, nothing is split
    assert!(r.lines.iter().all(|l| l.service.is_none()));
    assert_eq!(used(&r).department, "platform");
    assert_eq!(used(&r).allocated_hours, "2.000000");
    assert_eq!(
        r.warnings,
        [
            "service rag: no hours in the window (no holding names it and its owner B holds nothing); its tokens are not charged"
        ]
    );
}

#[test]
fn several_bad_entries_are_all_reported() {
    let e = run(&format!(
        "{HEAD}records:\n  - {{department: A, cardType: X, gpus: 1, start: 0, end: 60}}\n  - {{department: A, cardType: H200, gpus: 1, start: 90, end: 60}}\nsamples:\n  - {{department: A, cardType: H200, mig: 9g.1gb, points: [[0, 1]]}}\n"
    ))
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "records[0].cardType: unknown card type \"X\"\n\
         samples[0]: unknown MIG profile \"9g.1gb\" for card type H200\n\
         records[1]: end 60 is before start 90"
    );
    assert!(e.is_invalid_input());
    assert_eq!(e.diagnostics().len(), 3);
}

#[test]
fn dcgm_nan_busy_is_unknown_not_idle() {
    let series = "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-1\",Hostname=\"n1\",modelName=\"NVIDIA H200\",namespace=\"team-a\",pod=\"p\"}";
    let prom = |v: &str| format!("{series} {v} 0\n");
    let meter_with = |text: String| {
        run_with(
            &format!("{HEAD}dcgm: [x.prom]\n"),
            &[("x.prom".into(), text)],
        )
        .unwrap()
    };
    // a held device: 300 s lookback on H200 = 1/12 h either way
    let r = meter_with(prom("NaN"));
    assert_eq!(used(&r).allocated_hours, "0.083333");
    assert_eq!(used(&r).utilization, None);
    let r = meter_with(prom("+Inf"));
    assert_eq!(used(&r).utilization, None);
    let r = meter_with(prom("25"));
    assert_eq!(used(&r).utilization, Some(bp("0.2500")));
}

#[test]
fn extreme_numbers_are_typed_errors_or_exact() {
    // a window longer than i64 seconds is an overflow, not "end before start"
    let e = run(
        "window: {start: -9223372036854775808, end: 9223372036854775807}\ncardTypes: [{name: L4}]\n",
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "window length: arithmetic overflow");
    // u64::MAX cards for a whole window at a trillion per hour overflows i128 and says so
    let e = run(
        "window: {start: 0, end: 9223372036854775807}\ncardTypes: [{name: L4, pricePerHour: \"999999999999.999999\", capacity: 18446744073709551615}]\nrecords:\n  - {department: A, cardType: L4, gpus: 18446744073709551615, start: 0}\n",
    )
    .unwrap_err();
    assert!(e.is_overflow(), "{e}");
    // u64::MAX cards for one hour is still exact
    let r = run(
        "window: {start: 0, end: 3600}\ncardTypes: [{name: L4, pricePerHour: \"1\"}]\nrecords:\n  - {department: A, cardType: L4, gpus: 18446744073709551615, start: 0}\n",
    )
    .unwrap();
    assert_eq!(r.lines[0].allocated_hours, "18446744073709551615.000000");
    assert_eq!(r.totals.cost, "18446744073709551615.00");
}

#[test]
fn a_whole_card_beside_its_own_mig_instance_is_overbooking() {
    let r = run(&format!(
        "{HEAD}records:\n  - {{department: A, cardType: H200, gpus: 1, start: 0, end: 3600, holder: n/GPU-1}}\n  - {{department: B, cardType: H200, mig: 1g.18gb, start: 1800, end: 3600, holder: n/GPU-1/3}}\n  - {{department: B, cardType: H200, gpus: 1, start: 0, end: 3600, holder: n/GPU-2}}\n"
    ))
    .unwrap();
    assert_eq!(
        r.warnings,
        [
            "card n/GPU-1: instances add up to 1.1429 cards at 1800 under the compute-slices weights (overbooking)"
        ]
    );
}

/// A value that fits none of an untagged enum's forms is reported with the forms accepted
/// (the shared `serde_message_with` rewrite), naming the entry, never serde's "data did not
/// match any variant of untagged enum".
#[test]
fn untagged_enum_failures_list_the_accepted_forms() {
    let cases = [
        (
            "window: {start: [1], end: 3600}\ncardTypes: [{name: H200, pricePerHour: \"1\"}]\n",
            "window: expected a time: RFC 3339 text such as \"2026-01-01T00:00:00Z\", or integer seconds; the value has none of these forms",
        ),
        (
            "window: {start: 0, end: 3600}\ncardTypes: [{name: H200, pricePerHour: [4]}]\n",
            "cardTypes[0]: expected a decimal: a string such as \"4.50\", or a number; the value has none of these forms",
        ),
        (
            "window: {start: 0, end: 3600}\ncardTypes: [{name: H200, pricePerHour: \"1\"}]\ndepartments: [{name: A, quota: {H200: {cards: 1}}}]\n",
            "departments[0]: expected a quota: a number of cards, or a list of steps [{start, cards}]; the value has none of these forms",
        ),
        (
            "window: {start: 0, end: 3600}\ncardTypes: [{name: H200, pricePerHour: \"1\"}]\nmigWeights: [1]\n",
            "expected MIG weights: compute-slices, memory-slices or max-instances, or a table {profile: \"n/d\"}; the value has none of these forms",
        ),
    ];
    for (text, expected) in cases {
        let e = Document::from_yaml(text).unwrap_err().to_string();
        assert_eq!(e, expected, "{text}");
    }
}

/// The exact hours the report writes as `s`.
fn h(s: &str) -> GpuHours {
    s.parse().expect("six-decimal hours")
}

/// The exact amount the report writes as `s` (its digits included).
fn m(s: &str) -> Money {
    s.parse().expect("an amount")
}

/// The exact fraction the report writes as `s`.
fn bp(s: &str) -> BasisPoints {
    s.parse().expect("a four-decimal fraction")
}
