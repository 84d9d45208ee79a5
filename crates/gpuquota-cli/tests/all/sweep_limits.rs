//! `gpuquota sim sweep`, `sim merge` and `--emit-job` on hostile and careless arguments: the
//! limits, the unknown paths, shards of different sweeps, the emitted manifests, KAI
//! scenarios; and `gpuquota sim diff` of scenarios with different workloads.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn gpuquota(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpuquota"))
        .args(args)
        .output()
        .expect("runs")
}

fn data(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../gpuquota-sim/tests/data")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// A fresh directory of its own for one test.
fn scratch_dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("sweep-limits")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `tests/data/kueue.yaml` and the two files it reads, copied into `dir`.
fn copy_kueue_scenario(dir: &Path) -> String {
    for f in ["kueue.yaml", "platform.yaml", "jobs.yaml"] {
        std::fs::copy(data(f), dir.join(f)).unwrap();
    }
    dir.join("kueue.yaml").to_string_lossy().into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn an_overflowing_range_is_refused_naming_it() {
    // this panicked (attempt to subtract with overflow) before
    let out = gpuquota(&[
        "sim",
        "sweep",
        &data("kueue.yaml"),
        "--set",
        "seed=-1..9223372036854775807",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "error: --set seed: range -1..9223372036854775807 has 9223372036854775809 values, more than the 1000000 runs a sweep may have\n"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn threads_grids_and_shards_above_the_limits_are_refused_up_front() {
    let file = data("kueue.yaml");
    let out = gpuquota(&["sim", "sweep", &file, "-j", "100000"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--jobs 100000: more than the limit of 1024"),
        "{}",
        stderr(&out)
    );
    let out = Command::new(env!("CARGO_BIN_EXE_gpuquota"))
        .args(["sim", "sweep", &file])
        .env("RAYON_NUM_THREADS", "100000")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: RAYON_NUM_THREADS=100000: more than the limit of 1024 threads\n"
    );
    // 1,000 ranges of 10 values: 10^1000 runs, refused before a single range is expanded
    let sets: Vec<String> = (0..1000).map(|i| format!("p{i}=1..10")).collect();
    let mut args = vec!["sim", "sweep", file.as_str()];
    for s in &sets {
        args.extend(["--set", s.as_str()]);
    }
    let out = gpuquota(&args);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: the 1000 --set paths make more than 2^128 runs, more than the 1000000 runs a sweep may have\n"
    );
    let out = gpuquota(&[
        "sim",
        "sweep",
        &file,
        "--set",
        "a=1..1000",
        "--set",
        "b=1..1001",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("make 1001000 runs, more than the 1000000"));
    let out = gpuquota(&["sim", "sweep", &file, "--shard", "0/100001"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("100001 shards, more than the limit of 100000"));
    let out = gpuquota(&["sim", "sweep", &file, "--emit-job", "100001"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--emit-job 100001: more than the limit of 100000"));
}

#[test]
fn an_unknown_or_repeated_set_path_is_an_error_naming_it() {
    let file = data("kueue.yaml");
    // misspelt: two identical rows and a generic warning before
    let out = gpuquota(&[
        "sim",
        "sweep",
        &file,
        "--set",
        "kueue.fairSharnig=true,false",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "error: --set kueue.fairSharnig: the scenario has no such field (spec.kueue.fairSharnig is unknown); check the path's spelling\n"
    );
    assert!(out.stdout.is_empty());
    // a whole unknown subtree: the first unknown segment is named
    let out = gpuquota(&["sim", "sweep", &file, "--set", "kueu.fairSharing=true"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(
            "--set kueu.fairSharing: the scenario has no such field (spec.kueu is unknown)"
        )
    );
    // repeated: one row of the last value before
    let out = gpuquota(&[
        "sim",
        "sweep",
        &file,
        "--set",
        "engine=kueue",
        "--set",
        "engine=resourcequota",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: --set engine: given twice; list its values once (--set engine=v1,v2,…)\n"
    );
}

/// Shard `i` of 2 of a sweep of `scenario` over `values` of `engine`, written to `dir`.
fn shard(dir: &Path, scenario: &str, values: &str, i: usize) -> String {
    let set = format!("engine={values}");
    let which = format!("{i}/2");
    let out = gpuquota(&["sim", "sweep", scenario, "--set", &set, "--shard", &which]);
    assert!(out.status.success(), "{}", stderr(&out));
    let f = dir.join(format!("shard-{i}.json"));
    std::fs::write(&f, &out.stdout).unwrap();
    f.to_string_lossy().into_owned()
}

#[test]
fn merge_refuses_shards_with_reordered_values() {
    let dir = scratch_dir("reordered");
    let file = data("kueue.yaml");
    let s0 = shard(&dir, &file, "kueue,resourcequota", 0);
    let s1 = shard(&dir, &file, "resourcequota,kueue", 1);
    // before: run 0 (kueue) and run 1 (kueue again) merged, resourcequota dropped
    let out = gpuquota(&["sim", "merge", &s0, &s1]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = stderr(&out);
    assert!(
        err.contains("shard-1.json: the shard comes from a different sweep than")
            && err.contains("shard-0.json: the --set values differ (or are listed in another order, which numbers the runs differently)"),
        "{err}"
    );
    // the same values in the same order merge
    let s1 = shard(&dir, &file, "kueue,resourcequota", 1);
    let out = gpuquota(&["sim", "merge", &s0, &s1]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let engines: Vec<&str> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["engine"].as_str().unwrap())
        .collect();
    assert_eq!(engines, ["kueue", "resourcequota"]);
    // the fingerprint names the files the runs read
    let files: Vec<&String> = v["fingerprint"]["files"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(files, ["jobs.yaml", "platform.yaml"]);
    assert_eq!(v["fingerprint"]["scenario"].as_str().unwrap().len(), 64);
}

#[test]
fn merge_refuses_a_shard_of_an_edited_scenario_or_file() {
    let dir = scratch_dir("edited");
    let file = copy_kueue_scenario(&dir);
    let s0 = shard(&dir, &file, "kueue,resourcequota", 0);
    let original = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        original.replace("2026-04-03T00:00:00Z", "2026-04-02T00:00:00Z"),
    )
    .unwrap();
    let s1 = shard(&dir, &file, "kueue,resourcequota", 1);
    let out = gpuquota(&["sim", "merge", &s0, &s1]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("the scenario file differs"),
        "{}",
        stderr(&out)
    );
    // the scenario as it was, but a file it reads edited
    std::fs::write(&file, &original).unwrap();
    let jobs = dir.join("jobs.yaml");
    let text = std::fs::read_to_string(&jobs).unwrap();
    std::fs::write(&jobs, text.replace("runtime: 1h", "runtime: 2h")).unwrap();
    let s1 = shard(&dir, &file, "kueue,resourcequota", 1);
    let out = gpuquota(&["sim", "merge", &s0, &s1]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("the file jobs.yaml differs from the one")
            && stderr(&out).contains("shard-0.json read"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn emitted_manifests_hold_every_file_escape_arguments_and_validate_strictly() {
    let dir = scratch_dir("emit");
    let file = copy_kueue_scenario(&dir);
    let out = gpuquota(&[
        "sim",
        "sweep",
        &file,
        "--set",
        "metering.currency=$(HOME),EUR",
        "--emit-job",
        "2",
        "--namespace",
        "research",
        "--queue",
        "sweeps",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let yaml = String::from_utf8(out.stdout).unwrap();
    // how to collect the shards and merge them
    assert!(
        yaml.starts_with("# The sweep as 2 pods of an Indexed Job"),
        "{yaml}"
    );
    assert!(yaml.contains("#   for i in $(seq 0 1); do kubectl logs -n research"));
    assert!(yaml.contains("#   gpuquota sim merge sweep-kueue-*.json"));
    let docs: Vec<serde_json::Value> = yaml
        .split("\n---\n")
        .skip(1)
        .map(|d| serde_saphyr::from_str(d).unwrap())
        .collect();
    assert_eq!(docs.len(), 2);
    let cm = &docs[0];
    assert_eq!(cm["kind"], "ConfigMap");
    assert_eq!(cm["metadata"]["name"], "sweep-kueue-scenario");
    let keys: Vec<&String> = cm["data"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["jobs.yaml", "kueue.yaml", "platform.yaml"]);
    assert_eq!(
        cm["data"]["platform.yaml"].as_str().unwrap(),
        std::fs::read_to_string(data("platform.yaml")).unwrap()
    );
    let job = &docs[1];
    let args = &job["spec"]["template"]["spec"]["containers"][0]["args"];
    assert_eq!(
        args,
        &serde_json::json!([
            "sim",
            "sweep",
            "/scenario/kueue.yaml",
            "--set",
            "metering.currency=$$(HOME),EUR",
            "--shard",
            "$(JOB_COMPLETION_INDEX)/2",
            "--quiet"
        ])
    );
    assert_eq!(
        job["spec"]["template"]["spec"]["volumes"][0]["configMap"]["items"][0],
        serde_json::json!({"key": "kueue.yaml", "path": "kueue.yaml"})
    );
    let jf = dir.join("job.yaml");
    std::fs::write(&jf, &yaml).unwrap();
    let qf = dir.join("queue.yaml");
    std::fs::write(
        &qf,
        "apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: sweeps}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors: [{name: default, resources: [{name: cpu, nominalQuota: 8}, {name: memory, nominalQuota: 16Gi}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: sweeps, namespace: research}
spec: {clusterQueue: sweeps}
",
    )
    .unwrap();
    let v = gpuquota(&[
        "--strict",
        "validate",
        jf.to_str().unwrap(),
        qf.to_str().unwrap(),
    ]);
    assert!(
        v.status.success(),
        "{}{}",
        String::from_utf8_lossy(&v.stdout),
        stderr(&v)
    );
}

#[test]
fn emitted_names_are_validated() {
    let file = data("kueue.yaml");
    let out = gpuquota(&[
        "sim",
        "sweep",
        &file,
        "--emit-job",
        "2",
        "--namespace",
        "Research_Team",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(
        stderr(&out).starts_with(
            "error: --namespace \"Research_Team\": must be a lowercase RFC 1123 label"
        ),
        "{}",
        stderr(&out)
    );
    let out = gpuquota(&["sim", "sweep", &file, "--emit-job", "2", "--queue", "a b"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("error: --queue \"a b\": "),
        "{}",
        stderr(&out)
    );
    // a misspelt path is found before anything is emitted
    let out = gpuquota(&[
        "sim",
        "sweep",
        &file,
        "--set",
        "kueue.fairSharnig=true",
        "--emit-job",
        "2",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
}

#[test]
fn kai_scenarios_are_swept() {
    let file = data("kai/night.yaml");
    let out = gpuquota(&["sim", "sweep", &file, "--set", "kai.sessionInterval=1s,10s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    // the report of `gpuquota sim night.yaml`: Σ gpu × run time is 206 GPU-hours, 16 of them
    // in the one evicted run (4 GPUs × 4 h); leaf queues batch 2.888889 of a mean fair share
    // 3.222222 (89.66 %) and data-science 2.833333 of 2.833333 (100 %): mean 94.8
    for r in rows {
        assert_eq!(r["engine"], "kai");
        assert_eq!(r["gpuHours"], 206.0);
        assert_eq!(r["lostGpuHours"], 16.0);
        assert_eq!(r["preemptions"], 1);
        assert_eq!(r["meanUsagePercent"], 94.8);
    }
    let out = gpuquota(&[
        "sim",
        "sweep",
        &file,
        "--set",
        "clusterQueues.batch.nominalQuota=1",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(
            "--set clusterQueues.batch.nominalQuota: a KAI scenario has no ClusterQueues"
        ),
        "{}",
        stderr(&out)
    );
}

#[test]
fn diff_says_when_the_workloads_differ_and_strict_fails() {
    let a = data("kueue.yaml");
    let b = data("resourcequota.yaml");
    let same = gpuquota(&["sim", "diff", &a, &b, "-o", "json"]);
    assert!(same.status.success(), "{}", stderr(&same));
    let v: serde_json::Value = serde_json::from_slice(&same.stdout).unwrap();
    assert_eq!(
        v["workloads"],
        serde_json::json!({"same": true, "onlyInA": 0, "onlyInB": 0, "changed": 0, "first": null})
    );
    assert_eq!(stderr(&same), "");
    // B without the 1-hour etl job and with a 5-hour nightly
    let dir = scratch_dir("diff");
    let other = copy_kueue_scenario(&dir);
    let jobs = std::fs::read_to_string(data("jobs.yaml")).unwrap();
    let docs: Vec<&str> = jobs.split("\n---\n").collect();
    assert!(docs[1].contains("name: etl"));
    let edited = format!("{}\n---\n{}", docs[0], docs[2]).replace("runtime: 6h", "runtime: 5h");
    std::fs::write(dir.join("jobs.yaml"), edited).unwrap();
    let out = gpuquota(&["sim", "diff", &a, &other, "-o", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["workloads"],
        serde_json::json!({"same": false, "onlyInA": 1, "onlyInB": 0, "changed": 1, "first": "batch/etl"})
    );
    let note = "the scenarios submit different workloads (1 only in A, 0 only in B, 1 changed; first: batch/etl): the differences below are not the policy's alone";
    assert_eq!(stderr(&out), format!("warning: {note}\n"));
    let table = gpuquota(&["sim", "diff", &a, &other, "-o", "table"]);
    let text = String::from_utf8(table.stdout).unwrap();
    assert_eq!(text.lines().next(), Some(format!("Note: {note}.").as_str()));
    let strict = gpuquota(&["--strict", "sim", "diff", &a, &other]);
    assert_eq!(strict.status.code(), Some(1));
    assert!(strict.stdout.is_empty());
    assert_eq!(stderr(&strict), format!("error: {note}\n"));
}

#[test]
fn diff_compares_the_seed_month_under_kueue_and_under_kai() {
    let seed = concat!(env!("CARGO_MANIFEST_DIR"), "/../gpuquota-sim/data/seed/");
    let (a, b) = (format!("{seed}kueue.yaml"), format!("{seed}kai.yaml"));
    let dir = scratch_dir("diff-kai");
    let (svg, html) = (dir.join("d.svg"), dir.join("d.html"));
    let (svg, html) = (svg.to_str().unwrap(), html.to_str().unwrap());
    let out = gpuquota(&[
        "sim", "diff", &a, &b, "-o", "json", "--plot", svg, "--report", html,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["a"].as_str(), v["b"].as_str()),
        (Some("seed-kueue"), Some("seed-kai"))
    );
    // the same PodGroups as Workloads: same names, arrivals and runtimes
    assert_eq!(v["workloads"]["same"], true);
    let d = &v["departments"];
    // the assistant's base load (3 + 3 cards) and its morning peaks: 4500 GPU-hours under
    // both, of its 8 cards' quota over 720 h: 78.125 % → 78.1
    assert_eq!(d["assistant"]["gpuHours"]["b"], "4500.000000");
    assert_eq!(d["assistant"]["gpuHours"]["delta"], "0.000000");
    assert_eq!(d["assistant"]["utilizationPercent"]["b"], 78.1);
    // the notebooks' MIG 1g.24gb instances: 2160 instance-hours, a quarter card each: 540
    // card-hours; KAI counts an instance as one GPU of its queue's deserved 8, Kueue as a
    // quarter card of a nominal 8 instances (2 cards): 2160 / (8 × 720) = 540 / (2 × 720)
    // = 37.5 % under both
    assert_eq!(d["notebooks"]["gpuHours"]["b"], "540.000000");
    assert_eq!(d["notebooks"]["utilizationPercent"]["a"], 37.5);
    assert_eq!(d["notebooks"]["utilizationPercent"]["b"], 37.5);
    // translation holds its two cards all month: 1440 h, 100 %
    assert_eq!(d["translation"]["gpuHours"]["b"], "1440.000000");
    assert_eq!(d["translation"]["utilizationPercent"]["delta"], 0.0);
    // both are metered (EUR): the assistant's 4500 RTX-hours at 1.80
    assert_eq!(d["assistant"]["cost"]["b"], "8100.00");
    assert!(std::fs::read_to_string(svg).unwrap().starts_with("<svg"));
    let page = std::fs::read_to_string(html).unwrap();
    assert!(
        page.contains("seed-kai against seed-kueue"),
        "{}",
        &page[..400]
    );
}

#[test]
fn seeding_the_deterministic_perf_generator_says_so_and_points_at_a_seeded_source() {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../gpuquota-sim/data/kueue-baseline.yaml")
        .to_string_lossy()
        .into_owned();
    let out = gpuquota(&["sim", "sweep", &file, "--set", "seed=1,2"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("error: seed: run 0 (seed=1): Kueue's perf generator (`cohorts:`, or `generator:` in spec.workloads) is deterministic (fixed arrival times and runtimes), so every seed would give the same run; for draws of random arrivals, seed a generated trace instead, e.g. `workloads: [{trace: {format: philly, generate: {jobs: 60, seed: 1}}}]`"),
        "{err}"
    );
}
