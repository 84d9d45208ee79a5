//! Golden tests: full reports (JSON, CSV and table) pinned byte for byte. Set
//! `UPDATE_GOLDEN=1` to rewrite the expected files after a reviewed behaviour change.

use std::path::PathBuf;

use gpuquota_metering::Document;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn check(name: &str) {
    let d = dir();
    let text = std::fs::read_to_string(d.join(format!("{name}.yaml"))).unwrap();
    let doc = Document::from_yaml(&text).unwrap();
    assert!(doc.unknown_fields.is_empty(), "{:?}", doc.unknown_fields);
    // DCGM files are streamed from disk through the one bounded reader, as the CLI does
    let input = doc
        .into_input_with(&mut |_, path| gpuquota_metering::dcgm::open_file(&d.join(path)))
        .unwrap();
    let report = gpuquota_metering::run(&input).unwrap();
    for (ext, got) in [
        ("json", report.to_json()),
        ("csv", report.to_csv()),
        ("txt", report.to_table()),
    ] {
        let path = d.join(format!("{name}.{ext}"));
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            std::fs::write(&path, &got).unwrap();
        }
        let want = std::fs::read_to_string(&path).unwrap_or_default();
        assert_eq!(got, want, "{} differs", path.display());
    }
}

#[test]
fn example8_weighted() {
    check("example8-weighted");
}

#[test]
fn example8_quota_charged() {
    check("example8-quota-charged");
}

#[test]
fn mixed_inputs() {
    check("mixed");
}

/// One department holds one H200 for the hour, 67.19 % busy, at 4.50 an hour, on a card type
/// of capacity 2: its line costs 4.50 (no quota, so the hour is borrowed), the idle hour
/// 4.50, the bill 9.00.
const TWO_LINES: &str = "window: {start: 0, end: 3600}
currency: EUR
cardTypes:
  - {name: H200, model: NVIDIA H200, pricePerHour: \"4.50\", capacity: 2}
departments:
  - {name: a, namespaces: [a]}
records:
  - {namespace: a, cardType: H200, gpus: 1, start: 0, end: 3600, holder: n/GPU-0}
busy:
  - {holder: n/GPU-0, fraction: \"0.6719\"}
";

#[test]
fn utilisation_cell_is_rounded_not_truncated() {
    let input = Document::from_yaml(TWO_LINES)
        .unwrap()
        .into_input(&[])
        .unwrap();
    let report = gpuquota_metering::run(&input).unwrap();
    let table = report.to_table();
    // 6719 basis points: 67.19 % rounds to 67.2 %, where truncation printed 67.1 %
    assert!(table.contains("67.2%"), "{table}");
    assert!(!table.contains("67.1%"), "{table}");
}

#[test]
fn csv_has_no_totals_row_and_its_total_column_sums_to_the_bill() {
    let input = Document::from_yaml(TWO_LINES)
        .unwrap()
        .into_input(&[])
        .unwrap();
    let report = gpuquota_metering::run(&input).unwrap();
    let csv = report.to_csv();
    assert_eq!(
        csv,
        "department,cardType,service,allocatedHours,ownHours,borrowedHours,quotaHours,\
         chargedHours,cost,idleShare,total,utilization\n\
         a,H200,,1.000000,0.000000,1.000000,0.000000,1.000000,4.50,0.00,4.50,0.6719\n\
         __idle__,H200,,1.000000,,,,,4.50,,4.50,\n"
    );
    // the total column (11th) sums to the bill: 4.50 + 4.50 = 9.00
    let cents: i64 = csv
        .lines()
        .skip(1)
        .map(|l| {
            l.split(',')
                .nth(10)
                .unwrap()
                .replace('.', "")
                .parse::<i64>()
                .unwrap()
        })
        .sum();
    assert_eq!(cents, 900);
    assert_eq!(report.to_output().totals.cost, "9.00");
}
