//! Golden tests: full reports (JSON, CSV and table) pinned byte for byte. Set
//! `UPDATE_GOLDEN=1` to rewrite the expected files after a reviewed behaviour change.

use std::path::PathBuf;

use gpuquota_metering::{Document, meter};

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
    let report = meter(&input).unwrap();
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
