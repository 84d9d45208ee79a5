//! `gpuquota meter` as a user runs it: unknown fields warned (errors under `--strict`),
//! DCGM side files read through the bounded reader.

use std::path::PathBuf;
use std::process::{Command, Output};

fn gpuquota(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpuquota"))
        .args(args)
        .output()
        .expect("the gpuquota binary runs")
}

fn scratch(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("gpuquota-meter-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (f, text) in files {
        std::fs::write(dir.join(f), text).unwrap();
    }
    dir
}

const DOC: &str = "window: {start: 0, end: 3600}\n\
cardTypes: [{name: H200, model: NVIDIA H200, pricePerHur: \"4.50\", capacity: 1}]\n\
records: [{department: A, cardType: H200, gpus: 1, start: 0, end: 3600}]\n";

#[test]
fn a_misspelt_field_is_a_warning_and_an_error_under_strict() {
    let dir = scratch("typo", &[("m.yaml", DOC)]);
    let file = dir.join("m.yaml").display().to_string();
    let out = gpuquota(&["meter", &file]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "warning: {file}: cardTypes[0].pricePerHur: unknown field pricePerHur ignored; did you mean pricePerHour?\n"
        )
    );
    assert!(!out.stdout.is_empty());
    let out = gpuquota(&["--strict", "meter", &file]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "error: {file}: cardTypes[0].pricePerHur: unknown field pricePerHur ignored; did you mean pricePerHour?\n"
        )
    );
}

#[test]
fn dev_zero_as_a_dcgm_file_is_refused_naming_the_limit() {
    let dir = scratch(
        "zero",
        &[(
            "m.yaml",
            "window: {start: 0, end: 3600}\ncardTypes: [{name: H200, model: NVIDIA H200}]\ndcgm: [/dev/zero]\n",
        )],
    );
    let file = dir.join("m.yaml").display().to_string();
    let out = gpuquota(&["meter", &file]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "error: {file}: /dev/zero: cannot read: a line longer than the limit of 1048576 bytes for \
             one line of metrics text; this is not a metrics file\n"
        )
    );
}
