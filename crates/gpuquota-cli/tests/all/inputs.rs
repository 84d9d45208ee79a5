//! Input paths of every command: a FIFO, a device or a directory is refused at once, naming
//! the path, with exit code 2 (a file that cannot be read), whether it is named on the command
//! line or by another file (`cluster:`, `workloads[].file`, a trace, `dcgm:`); a file that
//! cannot be read exits 2 in every command family.
#![cfg(unix)]
// the wall clock only bounds how long a run may wait on its input
#![allow(clippy::disallowed_methods)]

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::text;

/// A fresh directory for one test.
fn dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gpuquota-inputs-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// Makes a FIFO at `path` (`mkfifo`).
fn mkfifo(path: &Path) {
    let ok = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs")
        .success();
    assert!(ok, "mkfifo {}", path.display());
}

/// Runs `gpuquota args` in `cwd`; fails the test (and kills the process) when it has not
/// ended within 20 s: reading a FIFO without a writer would wait forever.
fn run(cwd: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpuquota"))
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the gpuquota binary runs");
    let started = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?} still runs after 20 s: it waits on its input");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

const FIFO_MESSAGE: &str = "cannot read: the path is a FIFO (named pipe), not a regular \
                            file; give a file, or `-` to read standard input";

/// Asserts exit 2, nothing on stdout, and an error line naming `path` as a FIFO.
fn refused(out: &Output, path: &str, args: &[&str]) {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(text(&out.stdout), "", "{args:?}");
    assert!(
        stderr.contains(&format!("{path}: {FIFO_MESSAGE}")),
        "{args:?}: {stderr}"
    );
    assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
}

const PLATFORM: &str =
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: h200}\n";

#[test]
fn a_fifo_on_the_command_line_is_refused_by_every_command() {
    let d = dir("argument");
    mkfifo(&d.join("pipe.yaml"));
    let fifo = d.join("pipe.yaml").display().to_string();
    for command in [
        &["validate"][..],
        &["quotas"],
        &["kueue", "schedule"],
        &["kueue", "shares"],
        &["kueue", "quotas"],
        &["kai", "fairshare"],
        &["kai", "schedule"],
        &["mig", "plan"],
        &["mig", "validate"],
        &["mig", "export"],
        &["meter"],
        &["sim"],
        &["sim", "sweep"],
        &["sim", "merge"],
    ] {
        let mut args = command.to_vec();
        args.push(&fifo);
        let out = run(&d, &args);
        refused(&out, &fifo, &args);
    }
    // `sim diff` with the FIFO as either side
    std::fs::write(d.join("ok.yaml"), "x").unwrap();
    let ok = d.join("ok.yaml").display().to_string();
    let args = ["sim", "diff", &fifo, &ok];
    refused(&run(&d, &args), &fifo, &args);
    // option arguments that name files
    std::fs::write(d.join("platform.yaml"), PLATFORM).unwrap();
    let platform = d.join("platform.yaml").display().to_string();
    let args = [
        "kueue",
        "schedule",
        &platform,
        "--budgets",
        &fifo,
        "--usage",
        &fifo,
    ];
    refused(&run(&d, &args), &fifo, &args);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_fifo_named_by_a_scenario_is_refused_naming_it() {
    let d = dir("scenario");
    mkfifo(&d.join("pipe.yaml"));
    mkfifo(&d.join("pipe.csv"));
    std::fs::write(d.join("platform.yaml"), PLATFORM).unwrap();
    let head = "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec:\n  start: \"2026-04-01T00:00:00Z\"\n";
    for (file, spec, fifo, field) in [
        (
            "cluster.yaml",
            "  cluster: [pipe.yaml]\n",
            "pipe.yaml",
            "spec.cluster[0]",
        ),
        (
            "file.yaml",
            "  cluster: [platform.yaml]\n  workloads:\n  - file: pipe.yaml\n",
            "pipe.yaml",
            "spec.workloads[0].file",
        ),
        (
            "trace.yaml",
            "  cluster: [platform.yaml]\n  workloads:\n  - trace: {format: alibaba-2023, file: pipe.csv, queue: q}\n",
            "pipe.csv",
            "spec.workloads[0].trace.file",
        ),
    ] {
        std::fs::write(d.join(file), format!("{head}{spec}")).unwrap();
        let path = d.join(file).display().to_string();
        let fifo = d.join(fifo).display().to_string();
        for engine in ["kueue", "kai"] {
            if engine == "kai" {
                std::fs::write(
                    d.join(file),
                    format!("{head}  engine: kai\n{spec}").replace("queue: q", "namespace: q"),
                )
                .unwrap();
            }
            let args = ["sim", path.as_str()];
            let out = run(&d, &args);
            let stderr = text(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{engine} {file}: {stderr}");
            assert_eq!(text(&out.stdout), "");
            assert!(
                stderr.contains(&format!("error: {fifo}: {field}: {FIFO_MESSAGE}")),
                "{engine} {file}: {stderr}"
            );
        }
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_fifo_named_by_a_meter_file_is_refused_naming_it() {
    let d = dir("meter");
    mkfifo(&d.join("pipe.prom"));
    mkfifo(&d.join("pipe.yaml"));
    let head = "window: {start: 0, end: 3600}\ncardTypes: [{name: H200, model: NVIDIA H200}]\n";
    for (body, fifo) in [
        ("dcgm: [pipe.prom]\n", "pipe.prom"),
        ("cluster: [pipe.yaml]\ndcgm: []\n", "pipe.yaml"),
    ] {
        std::fs::write(d.join("m.yaml"), format!("{head}{body}")).unwrap();
        let m = d.join("m.yaml").display().to_string();
        let fifo = d.join(fifo).display().to_string();
        let args = ["meter", m.as_str()];
        refused(&run(&d, &args), &fifo, &args);
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_directory_or_device_is_refused_like_a_fifo() {
    let d = dir("device");
    let here = d.display().to_string();
    for (path, what) in [(here.as_str(), "a directory"), ("/dev/null", "a device")] {
        for command in [&["validate"][..], &["sim"], &["meter"], &["mig", "plan"]] {
            let mut args = command.to_vec();
            args.push(path);
            let out = run(&d, &args);
            let stderr = text(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
            assert!(
                stderr.contains(&format!(
                    "{path}: cannot read: the path is {what}, not a regular file"
                )),
                "{args:?}: {stderr}"
            );
        }
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn standard_input_stays_readable() {
    let d = dir("stdin");
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpuquota"))
        .args(["validate", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(PLATFORM.as_bytes()).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    std::fs::remove_dir_all(&d).unwrap();
}

/// `bytes` with a UTF-8 byte-order mark in front.
fn bom(bytes: &[u8]) -> Vec<u8> {
    let mut out = b"\xef\xbb\xbf".to_vec();
    out.extend_from_slice(bytes);
    out
}

/// Runs `args` in `plain` and in `marked` (the same files, each with a byte-order mark):
/// both succeed with the same output.
fn same_with_bom(plain: &Path, marked: &Path, args: &[&str]) {
    let a = run(plain, args);
    let b = run(marked, args);
    assert_eq!(a.status.code(), Some(0), "{args:?}: {}", text(&a.stderr));
    assert_eq!(
        b.status.code(),
        Some(0),
        "{args:?} with BOM: {}",
        text(&b.stderr)
    );
    assert!(!a.stdout.is_empty(), "{args:?}");
    assert_eq!(text(&a.stdout), text(&b.stdout), "{args:?}");
    assert_eq!(text(&a.stderr), text(&b.stderr), "{args:?}");
}

/// Writes `files` into `plain` as they are and into `marked` each after a byte-order mark.
fn write_both(plain: &Path, marked: &Path, files: &[(&str, Vec<u8>)]) {
    for (name, body) in files {
        std::fs::write(plain.join(name), body).unwrap();
        std::fs::write(marked.join(name), bom(body)).unwrap();
    }
}

#[test]
fn a_byte_order_mark_is_skipped_in_every_format() {
    let plain = dir("bom-plain");
    let marked = dir("bom-marked");
    let example = |name: &str| run(&plain, &["example", name]).stdout;
    let sim_data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../gpuquota-sim/tests/data/traces");
    let meter_data =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../gpuquota-metering/tests/golden");
    let read = |p: PathBuf| std::fs::read(p).unwrap();
    let range = br#"{"status":"success","data":{"resultType":"matrix","result":[
      {"metric":{"__name__":"DCGM_FI_DEV_GPU_UTIL","UUID":"GPU-0","gpu":"0","modelName":"NVIDIA H200","Hostname":"n1","exported_namespace":"team-a","exported_pod":"p0"},
       "values":[[0,"40"],[60,"60"],[120,"50"]]}]}}"#;
    write_both(
        &plain,
        &marked,
        &[
            // YAML manifests and a scenario (with a generator)
            ("kueue.yaml", example("kueue")),
            ("sim.yaml", example("sim")),
            // JSON manifests
            (
                "flavor.json",
                br#"{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "bom-flavor"}}"#
                    .to_vec(),
            ),
            // a trace scenario: YAML, the cluster, the CSV trace
            ("trace.yaml", read(sim_data.join("alibaba2023.yaml"))),
            ("cluster.yaml", read(sim_data.join("cluster.yaml"))),
            (
                "openb_pod_list_default.csv",
                read(sim_data.join("openb_pod_list_default.csv")),
            ),
            // a meter document with DCGM text, and one with a Prometheus range answer
            ("mixed.yaml", read(meter_data.join("mixed.yaml"))),
            ("mixed.prom", read(meter_data.join("mixed.prom"))),
            (
                "range.yaml",
                b"window: {start: 0, end: 3600}\ncardTypes: [{name: H200, model: NVIDIA H200}]\ndcgm: [range.json]\n"
                    .to_vec(),
            ),
            ("range.json", range.to_vec()),
            ("mig-plan.yaml", example("mig-plan")),
        ],
    );
    same_with_bom(&plain, &marked, &["validate", "kueue.yaml", "flavor.json"]);
    same_with_bom(
        &plain,
        &marked,
        &["kueue", "schedule", "kueue.yaml", "-o", "json"],
    );
    same_with_bom(&plain, &marked, &["sim", "sim.yaml", "-o", "json"]);
    same_with_bom(&plain, &marked, &["sim", "trace.yaml", "-o", "json"]);
    same_with_bom(&plain, &marked, &["meter", "mixed.yaml", "-o", "json"]);
    same_with_bom(&plain, &marked, &["meter", "range.yaml", "-o", "json"]);
    same_with_bom(
        &plain,
        &marked,
        &["mig", "plan", "mig-plan.yaml", "-o", "json"],
    );
    // a sweep shard (JSON) for `sim merge`
    let shard = run(
        &plain,
        &["sim", "sweep", "sim.yaml", "--set", "engine=kueue"],
    );
    assert_eq!(shard.status.code(), Some(0), "{}", text(&shard.stderr));
    write_both(&plain, &marked, &[("shard.json", shard.stdout)]);
    same_with_bom(&plain, &marked, &["sim", "merge", "shard.json"]);
    std::fs::remove_dir_all(&plain).unwrap();
    std::fs::remove_dir_all(&marked).unwrap();
}

#[test]
fn a_trace_that_is_not_of_its_format_is_named_with_the_line() {
    let d = dir("trace-header");
    std::fs::write(d.join("platform.yaml"), PLATFORM).unwrap();
    std::fs::write(d.join("t.csv"), "id,gpus\n1,2\n").unwrap();
    std::fs::write(
        d.join("s.yaml"),
        "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec:\n  start: \"2026-04-01T00:00:00Z\"\n  cluster: [platform.yaml]\n  workloads:\n  - trace: {format: helios, file: t.csv}\n",
    )
    .unwrap();
    let out = run(&d, &["sim", "s.yaml"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        "error: t.csv: spec.workloads[0].trace.file: line 1: the header has no column \"job_id\"\n"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn yaml_errors_name_no_parser_internals() {
    let d = dir("yaml-errors");
    let kai = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../gpuquota-sim/tests/data/kai/cluster.yaml")
        .display()
        .to_string();
    std::fs::write(
        d.join("two.yaml"),
        "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\n---\nkind: X\n",
    )
    .unwrap();
    std::fs::write(d.join("kai.yaml"), "spec: {engine: kai}\n---\nx: 1\n").unwrap();
    std::fs::write(d.join("m.yaml"), "window: {start: 0, end: 1}\n---\na: 1\n").unwrap();
    std::fs::write(d.join("u.yaml"), "a: 1\n").unwrap();
    let several = |f: &str, line: u32| {
        format!(
            "error: {f}: YAML: several documents (`---`) at line {line} column 1 where this \
             input takes one; put each document in its own file\n"
        )
    };
    for (args, expected) in [
        (vec!["sim", "two.yaml"], several("two.yaml", 4)),
        (vec!["sim", "kai.yaml"], several("kai.yaml", 3)),
        (
            vec!["sim", "sweep", "two.yaml", "--set", "engine=kueue"],
            several("two.yaml", 4),
        ),
        (vec!["meter", "m.yaml"], several("m.yaml", 3)),
        (
            vec!["kai", "fairshare", kai.as_str(), "--usage", "u.yaml"],
            "error: u.yaml: usage: <file>: malformed YAML: unknown field `a`, expected one of \
             kValue, windowSize, halfLifePeriod, windowType, tumblingWindowStartTime, \
             cronString, capacity, allocations, queues at line 1, column 1\n"
                .to_owned(),
        ),
    ] {
        let out = run(&d, &args);
        assert_eq!(text(&out.stderr), expected, "{args:?}");
        assert_ne!(out.status.code(), Some(0), "{args:?}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}
