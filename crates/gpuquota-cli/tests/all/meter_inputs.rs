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
    // a regular file of one endless line: an input problem naming the limit (exit 1)
    let dir = scratch(
        "zero",
        &[(
            "m.yaml",
            "window: {start: 0, end: 3600}\ncardTypes: [{name: H200, model: NVIDIA H200}]\ndcgm: [zeros.prom]\n",
        )],
    );
    std::fs::write(dir.join("zeros.prom"), vec![0u8; (1 << 20) + 1]).unwrap();
    let file = dir.join("m.yaml").display().to_string();
    let zeros = dir.join("zeros.prom").display().to_string();
    let out = gpuquota(&["meter", &file]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "error: {file}: {zeros}: cannot read: a line longer than the limit of 1048576 bytes for \
             one line of metrics text; this is not a metrics file\n"
        )
    );
    // the device itself is refused before it is opened: a file that cannot be read (exit 2)
    std::fs::write(
        dir.join("m.yaml"),
        "window: {start: 0, end: 3600}\ncardTypes: [{name: H200, model: NVIDIA H200}]\ndcgm: [/dev/zero]\n",
    )
    .unwrap();
    let out = gpuquota(&["meter", &file]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "error: {file}: /dev/zero: cannot read: the path is a device, not a regular file; \
             give a file, or `-` to read standard input\n"
        )
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn cluster_files_give_time_sliced_replicas_their_share() {
    // A pod on node-a's GPU, time-sliced into 4 replicas by the device plugin's
    // configuration, is charged 1/4 GPU-hour per hour.
    let cluster = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: time-slicing-config, namespace: gpu-operator}\n\
data:\n  any: |\n    version: v1\n    sharing:\n      timeSlicing:\n        resources:\n        - {name: nvidia.com/gpu, replicas: 4}\n---\n\
apiVersion: v1\nkind: Node\nmetadata: {name: node-a, labels: {nvidia.com/device-plugin.config: any}}\n";
    let doc = "window: {start: 0, end: 7200}\ncluster: [cluster.yaml]\n\
cardTypes: [{name: H200, model: NVIDIA H200, pricePerHour: \"4.00\", capacity: 1}]\n\
departments: [{name: A, namespaces: [team-a]}]\n\
records: [{namespace: team-a, cardType: H200, replicas: 1, holder: node-a/GPU-0, start: 0, end: 7200}]\n";
    let dir = scratch("cluster", &[("m.yaml", doc), ("cluster.yaml", cluster)]);
    let out = gpuquota(&["meter", &dir.join("m.yaml").display().to_string()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["lines"][0]["allocatedHours"], "0.500000", "{v}");
    assert_eq!(v["lines"][0]["cost"], "2.00", "{v}");
}

/// Two H200 cards held for the hour of a window where the type has one: the report's two
/// capacity warnings reach stderr in every output format (exit 0, the report on stdout),
/// and under `--strict` they are errors: exit 1, nothing on stdout.
#[test]
fn cards_beyond_capacity_warn_on_stderr_in_every_format_and_fail_strict() {
    let dir = scratch(
        "capacity",
        &[(
            "m.yaml",
            "window: {start: 0, end: 3600}\n\
             cardTypes: [{name: H200, model: NVIDIA H200, pricePerHour: \"4.50\", capacity: 1}]\n\
             records: [{department: A, cardType: H200, gpus: 2, start: 0, end: 3600}]\n",
        )],
    );
    let file = dir.join("m.yaml").display().to_string();
    let lines = |severity: &str| {
        format!(
            "{severity}: {file}: card type H200: 2.0000 cards held at 0, more than the capacity 1 (more cards than exist: check the input); idle (capacity × T − charged) shrinks by the excess\n\
             {severity}: {file}: card type H200: 2.000000 hours charged exceed the capacity of 1.000000 hours; idle shown as 0\n"
        )
    };
    for format in ["json", "csv", "table", "openmetrics"] {
        let out = gpuquota(&["meter", &file, "--output", format]);
        assert_eq!(out.status.code(), Some(0), "{format}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            lines("warning"),
            "{format}"
        );
        assert!(!out.stdout.is_empty(), "{format}");
        let out = gpuquota(&["--strict", "meter", &file, "--output", format]);
        assert_eq!(out.status.code(), Some(1), "{format}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            lines("error"),
            "{format}"
        );
        assert!(out.stdout.is_empty(), "{format}");
    }
}

#[test]
fn an_unreachable_prometheus_is_exit_status_2_with_nothing_on_stdout() {
    let dir = scratch(
        "prometheus",
        &[(
            "m.yaml",
            "window: {start: 0, end: 3600}\n\
             cardTypes: [{name: H200, model: NVIDIA H200, pricePerHour: \"4.50\", capacity: 1}]\n\
             departments: [{name: A}]\n",
        )],
    );
    let file = dir.join("m.yaml").display().to_string();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let out = gpuquota(&[
        "meter",
        &file,
        "-o",
        "csv",
        "--prometheus",
        &url,
        "--step",
        "600",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    // the query named with its window (the document's, 0 → 3,600 s) and step
    assert!(
        err.contains(&format!(
            "{url}/api/v1/query_range DCGM_FI_DEV_GPU_UTIL [1970-01-01T00:00:00Z, \
             1970-01-01T01:00:00Z] step 600s: cannot reach Prometheus at {url}"
        )),
        "{err}"
    );
    // --start needs --prometheus; a time that is not one is a usage error
    let out = gpuquota(&["meter", &file, "--start", "0"]);
    assert_eq!(out.status.code(), Some(2));
    let out = gpuquota(&["meter", &file, "--prometheus", &url, "--end", "noon"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        "error: --end \"noon\": not an RFC 3339 time (2026-11-01T00:00:00Z) or unix seconds"
    );
    let _ = std::fs::remove_dir_all(dir);
}
