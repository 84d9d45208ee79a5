//! `gpuquota validate` and `gpuquota quotas` as a user runs them: exit codes, streams, output.

use std::path::PathBuf;
use std::process::{Command, Output};

fn gpuquota(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpuquota"))
        .args(args)
        .output()
        .expect("the gpuquota binary runs")
}

fn path(rel: &str) -> String {
    let p: PathBuf = [env!("CARGO_MANIFEST_DIR"), rel].iter().collect();
    p.display().to_string()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn validate_reports_every_mistake_and_exits_1() {
    let out = gpuquota(&[
        "validate",
        &path("../gpuquota-model/tests/data/mistakes.yaml"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "");
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    // 20 errors, 6 references to objects not in the file and the ResourceQuota's GPU limit
    // as warnings, then the count.
    assert_eq!(lines.len(), 28, "{stderr}");
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("warning: ")).count(),
        7,
        "{stderr}"
    );
    assert_eq!(
        lines.last().copied(),
        Some("error: 20 problem(s) in 8 object(s)")
    );
    for expected in [
        "error: ClusterQueue \"batch\": spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: Invalid value: \"-2\": must be greater than or equal to 0",
        "error: ClusterQueue \"batch\": spec.resourceGroups[1].flavors[0].resources[0].lendingLimit: Invalid value: \"3\": must be less than or equal to the nominalQuota",
        "error: Cohort \"a\": spec.parentName: Invalid value: \"b\": cohort cycle: a -> b -> a",
        "error: ResourceQuota \"analytics/cap\": spec.hard[nvidia.com/gpu]: Invalid value: \"nvidia.com/gpu\": extended resources accept only quota items with the prefix requests. (use requests.nvidia.com/gpu)",
        "warning: Workload \"analytics/w\": spec.queueName: Not found: \"nowhere\": no LocalQueue of this name in namespace \"analytics\"",
    ] {
        assert!(
            lines.contains(&expected),
            "missing {expected:?} in {stderr}"
        );
    }
    // With --complete the references are errors, with their text unchanged.
    let out = gpuquota(&[
        "validate",
        "--complete",
        &path("../gpuquota-model/tests/data/mistakes.yaml"),
    ]);
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        lines.last().copied(),
        Some("error: 26 problem(s) in 8 object(s)")
    );
    assert!(lines.contains(&"error: Workload \"analytics/w\": spec.queueName: Not found: \"nowhere\": no LocalQueue of this name in namespace \"analytics\""), "{stderr}");
}

#[test]
fn validate_accepts_the_seed_platform() {
    let out = gpuquota(&[
        "validate",
        &path("../gpuquota-sim/data/seed/platform.yaml"),
        &path("../gpuquota-sim/data/seed/kueue-day.yaml"),
        &path("../gpuquota-sim/data/seed/kai-platform.yaml"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        // platform.yaml 32 (3 Nodes, 3 flavors, 1 cohort, 5 ClusterQueues, 5 namespaces, 5
        // LocalQueues, 5 ResourceQuotas, 4 priority classes, the Budget), kueue-day.yaml 26
        // Workloads, kai-platform.yaml 10 Queues
        "ok: 68 object(s) in 3 file(s) are valid (0 warning(s))\n"
    );
    assert_eq!(text(&out.stderr), "");
}

#[test]
fn validate_prints_import_warnings_to_stderr() {
    let dir = std::env::temp_dir().join(format!("gpuquota-validate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("warn.yaml");
    std::fs::write(
        &file,
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\nspec: {colour: blue}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: c}\n",
    )
    .unwrap();
    let out = gpuquota(&["validate", &file.display().to_string()]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stdout),
        "ok: 1 object(s) in 1 file(s) are valid (2 warning(s))\n"
    );
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 2, "{stderr}");
    assert!(stderr.lines().all(|l| l.starts_with("warning: ")));
    assert!(stderr.contains("spec.colour: unknown field; ignored"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn validate_missing_file_exits_2() {
    let out = gpuquota(&["validate", "/nonexistent/gpuquota.yaml"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn quotas_json_of_the_seed_platform() {
    let out = gpuquota(&[
        "quotas",
        &path("../gpuquota-sim/data/seed/platform.yaml"),
        &path("../gpuquota-sim/data/seed/kai-platform.yaml"),
        "--output",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let tree = &v["cohortTrees"][0];
    assert_eq!(tree["root"], "platform");
    assert_eq!(tree["rootKind"], "Cohort");
    let batch = tree["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == "batch")
        .unwrap();
    assert_eq!(batch["parent"], "platform");
    assert_eq!(batch["depth"], 1);
    assert_eq!(
        batch["quotas"][0],
        serde_json::json!({
            "flavor": "h200-nvl",
            "resource": "nvidia.com/gpu",
            "nominalQuota": "0",
            "borrowingLimit": "8",
            "lendingLimit": null,
            "subtreeQuota": "0",
            "guaranteed": "0",
            "lendsAtMost": "0",
            "mostItCanUse": "8"
        })
    );
    let kai = v["kaiQueueTrees"].as_array().unwrap();
    assert_eq!(kai.len(), 5);
    let analytics = kai.iter().find(|t| t["root"] == "analytics").unwrap();
    assert_eq!(
        analytics["queues"][1],
        serde_json::json!({
            "name": "batch",
            "parent": "analytics",
            "depth": 1,
            "priority": 50,
            "resources": {
                "cpu": {"quota": -1.0, "limit": -1.0, "overQuotaWeight": 1.0},
                "gpu": {"quota": 0.0, "limit": 12.0, "overQuotaWeight": 1.0},
                "memory": {"quota": -1.0, "limit": -1.0, "overQuotaWeight": 1.0}
            }
        })
    );
}

#[test]
fn quotas_table_fits_80_columns_and_the_seed_run_opens_with_it() {
    let out = gpuquota(&[]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    let first_section = stdout.lines().find(|l| l.starts_with("== ")).unwrap();
    assert_eq!(
        first_section,
        "== Quota picture: the cohort tree and the KAI queues =="
    );
    let out = gpuquota(&[
        "quotas",
        &path("../gpuquota-sim/data/seed/platform.yaml"),
        "-o",
        "table",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let table = text(&out.stdout);
    assert!(table.lines().all(|l| l.chars().count() <= 80), "{table}");
    assert!(
        table.contains("  assistant              8   -   0           8      0   12\n"),
        "{table}"
    );
}

#[test]
fn quotas_reports_a_cohort_cycle_with_exit_1() {
    let dir = std::env::temp_dir().join(format!("gpuquota-quotas-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("cycle.yaml");
    std::fs::write(
        &file,
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: a}\nspec: {parentName: b}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: b}\nspec: {parentName: a}\n",
    )
    .unwrap();
    let out = gpuquota(&["quotas", &file.display().to_string()]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stderr), "error: cohort cycle: a -> b -> a\n");
    std::fs::remove_dir_all(&dir).ok();
}

fn temp_file(name: &str, bytes: &[u8]) -> String {
    let dir = std::env::temp_dir().join(format!("gpuquota-vq-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(name);
    std::fs::write(&file, bytes).unwrap();
    file.display().to_string()
}

#[test]
fn non_utf8_input_names_offset_and_line_and_exits_1() {
    let file = temp_file(
        "latin1.yaml",
        b"apiVersion: v1\nkind: Namespace\nmetadata: {name: caf\xe9}\n",
    );
    for command in [
        &["validate"][..],
        &["quotas"],
        &["kueue", "schedule"],
        &["kueue", "quotas"],
        &["kueue", "shares"],
        &["kai", "schedule"],
        &["kai", "fairshare"],
        &["mig", "plan"],
        &["mig", "validate"],
        &["meter"],
    ] {
        let mut args = command.to_vec();
        args.push(&file);
        let out = gpuquota(&args);
        assert_eq!(out.status.code(), Some(1), "{command:?}");
        assert_eq!(
            text(&out.stderr),
            format!("error: {file}: input is not UTF-8 text: invalid byte at offset 51 (line 3)\n"),
            "{command:?}"
        );
    }
    // A file that cannot be opened is not an input error: exit 2.
    let out = gpuquota(&["kueue", "schedule", "/nonexistent/gpuquota.yaml"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn an_empty_file_is_an_error() {
    let file = temp_file("empty.yaml", b"");
    let out = gpuquota(&["validate", &file]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("no object gpuquota reads"));
    let out = gpuquota(&["quotas", &file]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("nothing to show"));
}

#[test]
fn strict_fails_on_warnings_in_validate_and_quotas() {
    let file = temp_file(
        "misspelt.yaml",
        b"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: f\n      resources:\n      - {name: nvidia.com/gpu, nominalQuota: 8}\n  stopPolicyy: None\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\n",
    );
    let hint = "spec.stopPolicyy: unknown field; ignored; did you mean \"stopPolicy\"?";
    for command in ["validate", "quotas"] {
        let out = gpuquota(&[command, &file]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{command}: {}",
            text(&out.stderr)
        );
        assert!(text(&out.stderr).starts_with("warning: "), "{command}");
        assert!(text(&out.stderr).contains(hint), "{command}");
        let out = gpuquota(&["--strict", command, &file]);
        assert_eq!(out.status.code(), Some(1), "{command}");
        assert!(text(&out.stderr).starts_with("error: "), "{command}");
        assert_eq!(text(&out.stdout), "", "{command}");
    }
}

/// `--verbose` says on stderr which reader took each file and why, one line per file in
/// argument order, and changes nothing else.
#[test]
fn verbose_names_the_reader_of_each_file() {
    let dir =
        std::env::temp_dir().join(format!("gpuquota-validate-verbose-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let files: Vec<String> = [
        (
            "block.yaml",
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n",
        ),
        (
            "flow.yaml",
            "---\n{apiVersion: v1, kind: Namespace, metadata: {name: b, labels: {team: x}}}\n",
        ),
        (
            "anchor.yaml",
            "apiVersion: v1\nkind: Namespace\nmetadata: &m\n  name: c\n",
        ),
        (
            "null.yaml",
            "apiVersion: v1\nkind: Namespace\nmetadata: &m {name: d, labels: ~}\n",
        ),
        (
            "e.json",
            "{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": \"e\"}}\n",
        ),
    ]
    .iter()
    .map(|(name, body)| {
        let p = dir.join(name);
        std::fs::write(&p, body).expect("write fixture");
        p.display().to_string()
    })
    .collect();
    let mut args = vec!["validate", "--verbose"];
    args.extend(files.iter().map(String::as_str));
    let out = gpuquota(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let scanner = "read by the YAML scanner (block style and one-line flow collections, no anchors, tags, block scalars, escapes or trailing comments)";
    let expected = format!(
        "import: {}: {scanner}\n\
         import: {}: {scanner}\n\
         import: {}: read by the serde-saphyr typed reader (the YAML scanner gave up near line 3: anchors, tags, block scalars, escapes, a comment after content, a flow collection over several lines, a duplicate key or a scalar of uncertain type)\n\
         import: {}: read by the exact reader (document by document, every problem with its field path: the fast readers gave up on a problem, a `null` member or YAML they do not read)\n\
         import: {}: read by the JSON stream reader (a JSON file, decoded value by value)\n",
        files[0], files[1], files[2], files[3], files[4]
    );
    assert_eq!(text(&out.stderr), expected);
    // Without the flag: the same output, nothing on stderr.
    args.remove(1);
    let quiet = gpuquota(&args);
    assert_eq!(quiet.stdout, out.stdout);
    assert_eq!(text(&quiet.stderr), "");
}
