//! `gpuquota kueue` on inputs that used to crash, loop silently or take minutes.

use std::path::PathBuf;
use std::process::{Command, Output};

fn gpuquota(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpuquota"))
        .args(args)
        .output()
        .expect("the gpuquota binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn write(test: &str, body: &str) -> String {
    let dir: PathBuf = std::env::temp_dir().join(format!(
        "gpuquota-kueue-reliability-{test}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join("in.yaml");
    std::fs::write(&p, body).expect("write fixture");
    p.display().to_string()
}

const RF: &str =
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\n---\n";

fn cq(name: &str, cohort: &str, preemption: &str, nominal: u32) -> String {
    format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {name}}}\nspec:\n  cohortName: {cohort}\n  namespaceSelector: {{}}\n  preemption: {preemption}\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors: [{{name: f, resources: [{{name: nvidia.com/gpu, nominalQuota: {nominal}}}]}}]\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: {name}, namespace: ns}}\nspec: {{clusterQueue: {name}}}\n---\n"
    )
}

fn wl(name: &str, queue: &str, priority: i32, second: u32, gpus: u32) -> String {
    format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: {name}, namespace: ns, uid: uid-{name}, creationTimestamp: \"2026-01-01T00:00:{second:02}Z\"}}\nspec:\n  queueName: {queue}\n  priority: {priority}\n  podSets:\n  - name: main\n    count: 1\n    template: {{spec: {{containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: \"{gpus}\"}}}}}}]}}}}\n---\n"
    )
}

fn loop_yaml() -> String {
    let bwc = "{reclaimWithinCohort: Any, withinClusterQueue: LowerPriority, borrowWithinCohort: {policy: LowerPriority}}";
    let mut y = RF.to_owned();
    y += "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: root}\nspec: {}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: sub}\nspec: {parentName: root}\n---\n";
    y += &cq("q0", "root", bwc, 1);
    y += &cq(
        "q1",
        "sub",
        "{reclaimWithinCohort: LowerPriority, borrowWithinCohort: {policy: LowerPriority}}",
        2,
    );
    y += &cq("q2", "sub", bwc, 0);
    y += &wl("w0", "q2", 0, 0, 2);
    y += &wl("w1", "q1", 2, 1, 3);
    y
}

/// A misspelt `coveredResources` used to panic (exit 101); now a field error, exit 1.
#[test]
fn missing_covered_resources_exits_1_with_the_field() {
    let body = format!(
        "{RF}apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: cq}}\nspec:\n  namespaceSelector: {{}}\n  resourceGroups:\n  - coveredResource: [cpu]\n    flavors: [{{name: f, resources: [{{name: cpu, nominalQuota: 1}}]}}]\n---\n"
    );
    let f = write("covered", &body);
    for cmd in ["schedule", "quotas"] {
        let out = gpuquota(&["kueue", cmd, &f]);
        assert_eq!(out.status.code(), Some(1), "{cmd}: {}", text(&out.stderr));
        assert!(out.stdout.is_empty());
        assert!(
            text(&out.stderr).contains(
                "error: ClusterQueue \"cq\": spec.resourceGroups[0].coveredResources: Required value: must have at least 1 item"
            ),
            "{}",
            text(&out.stderr)
        );
    }
}

/// The preempt/readmit loop is a warning in every output format: stderr, the JSON
/// `warnings` array and the table; `--strict` makes it an error.
#[test]
fn preemption_loop_is_reported_in_every_format() {
    let f = write("loop", &loop_yaml());
    let out = gpuquota(&["kueue", "schedule", &f]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("warning: Workload \"ns/w1\": preemption loop: ns/w1 preempted ns/w0 "),
        "{stderr}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let w = &v["warnings"][0];
    assert_eq!(w["severity"], "warning");
    assert_eq!(w["code"], "preemption-loop");
    assert_eq!(w["kind"], "Workload");
    assert_eq!(w["name"], "ns/w1");
    assert_eq!(w["engine"], "kueue");
    assert!(w["message"].as_str().unwrap().contains("ns/w0"));

    let out = gpuquota(&["kueue", "schedule", "--output", "table", &f]);
    assert_eq!(out.status.code(), Some(0));
    let table = text(&out.stdout);
    assert!(
        table.contains(
            "\nwarnings (1):\n  preemption-loop\n    preemption loop: ns/w1 preempted ns/w0"
        ),
        "{table}"
    );
    for line in table.lines() {
        assert!(line.chars().count() <= 80, "too wide: {line}");
    }

    let out = gpuquota(&["--strict", "kueue", "schedule", &f]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(text(&out.stderr).contains("error: Workload \"ns/w1\": preemption loop"));
}

/// A run without a loop has no `warnings` key (the JSON contract is unchanged).
#[test]
fn no_warnings_key_without_a_loop() {
    let mut y = RF.to_owned();
    y += &cq("q", "co", "{}", 2);
    y += &wl("a", "q", 0, 0, 1);
    let f = write("calm", &y);
    let out = gpuquota(&["kueue", "schedule", &f]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!text(&out.stdout).contains("warnings"));
    let out = gpuquota(&["kueue", "schedule", "--output", "table", &f]);
    assert!(!text(&out.stdout).contains("warnings"));
}

fn chain(depth: usize) -> String {
    let mut y = RF.to_owned();
    for i in 0..depth {
        let parent = if i == 0 {
            "{}".to_owned()
        } else {
            format!("{{parentName: c{:05}}}", i - 1)
        };
        y += &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {{name: c{i:05}}}\nspec: {parent}\n---\n"
        );
    }
    y += &cq("leaf", &format!("c{:05}", depth - 1), "{}", 1);
    y
}

/// 1,000 levels are accepted by every Kueue command; 1,001 are refused naming the cohort.
#[test]
fn deep_trees_are_refused_by_every_kueue_command() {
    let ok = write("deep-ok", &chain(1000));
    let deep = write("deep", &chain(1001));
    for cmd in ["schedule", "quotas", "shares"] {
        let out = gpuquota(&["kueue", cmd, &ok]);
        assert_eq!(out.status.code(), Some(0), "{cmd}: {}", text(&out.stderr));
        let out = gpuquota(&["kueue", cmd, &deep]);
        assert_eq!(out.status.code(), Some(1), "{cmd}");
        assert!(out.stdout.is_empty());
        assert!(
            text(&out.stderr).contains(
                "error: Cohort \"c01000\": spec.parentName: the cohort tree is deeper than 1000 levels"
            ),
            "{cmd}: {}",
            text(&out.stderr)
        );
    }
}

/// A misspelt field is a warning in every `kueue` command (exit 0) and an error under the
/// global `--strict` (exit 1, nothing on stdout), as in `validate` and the KAI commands.
#[test]
fn strict_turns_import_warnings_into_errors_in_every_kueue_command() {
    let f = write(
        "strict",
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\nspec: {nodeLabelz: {}}\n",
    );
    let line = format!(
        "{f} (document 1): ResourceFlavor \"f\": spec.nodeLabelz: unknown field; ignored; did you mean \"nodeLabels\"?"
    );
    for cmd in ["schedule", "quotas", "shares"] {
        let out = gpuquota(&["kueue", cmd, &f]);
        assert_eq!(out.status.code(), Some(0), "{cmd}: {}", text(&out.stderr));
        assert_eq!(text(&out.stderr), format!("warning: {line}\n"), "{cmd}");
        let out = gpuquota(&["--strict", "kueue", cmd, &f]);
        assert_eq!(out.status.code(), Some(1), "{cmd}: {}", text(&out.stderr));
        assert!(out.stdout.is_empty(), "{cmd}");
        assert_eq!(text(&out.stderr), format!("error: {line}\n"), "{cmd}");
    }
    // the engine's own warnings (an implicit cohort) count too
    let f = write(
        "strict-engine",
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\nspec: {cohortName: implied, resourceGroups: [{coveredResources: [cpu], flavors: [{name: f, resources: [{name: cpu, nominalQuota: 1}]}]}]}\n",
    );
    let out = gpuquota(&["--strict", "kueue", "schedule", &f]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
    assert_eq!(
        text(&out.stderr),
        "error: Cohort \"implied\": no Cohort object (named by ClusterQueue \"cq\"); an implicit cohort without quota is used\n"
    );
}

/// The Configuration's `featureGates` reach the engine from the command line:
/// `PrioritizePreemptorWorkloads: true` (upstream's alpha gate, off by default) breaks the
/// loop above in `gpuquota kueue schedule` (w1 admitted in cycle 3 after one preemption, no
/// warning) and in `gpuquota sim` on the same objects (one preemption instead of a loop).
#[test]
fn feature_gates_apply_in_kueue_schedule_and_sim() {
    let gates = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfeatureGates: {PrioritizePreemptorWorkloads: true}\n---\n";
    let f = write("gates", &format!("{gates}{}", loop_yaml()));
    let out = gpuquota(&["kueue", "schedule", &f]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        !text(&out.stderr).contains("preemption loop"),
        "{}",
        text(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["admitted"][0]["workload"], "ns/w1");
    assert_eq!(v["admitted"][0]["cycle"], 3);
    assert_eq!(v["preempted"].as_array().map(Vec::len), Some(1));
    assert!(v.get("warnings").is_none());

    // the simulator: the same objects, both workloads arriving at the start and running 1h
    let dir = std::path::Path::new(&f)
        .parent()
        .expect("dir")
        .to_path_buf();
    let objects = loop_yaml();
    let (cluster, jobs): (Vec<&str>, Vec<&str>) = objects
        .split_inclusive("---\n")
        .partition(|d| !d.contains("kind: Workload"));
    let jobs = jobs
        .concat()
        .replace(
            "uid: uid-",
            "annotations: {gpuquota.dev/runtime: 1h}, uid: uid-",
        )
        .replace("2026-01-01T00:00:0", "2026-04-01T00:00:0");
    let sim = |gated: bool| -> serde_json::Value {
        let cfg = if gated { gates } else { "" };
        std::fs::write(
            dir.join("cluster.yaml"),
            format!("{cfg}{}", cluster.concat()),
        )
        .expect("write");
        std::fs::write(dir.join("jobs.yaml"), &jobs).expect("write");
        let spec = dir.join("sim.yaml");
        std::fs::write(
            &spec,
            "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {name: gates}\nspec:\n  engine: kueue\n  cluster: [cluster.yaml]\n  start: \"2026-04-01T00:00:00Z\"\n  end: \"2026-04-01T06:00:00Z\"\n  workloads:\n  - file: jobs.yaml\n",
        )
        .expect("write");
        let out = gpuquota(&["sim", "--output", "json", &spec.display().to_string()]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        serde_json::from_slice(&out.stdout).expect("JSON")
    };
    let on = sim(true);
    assert_eq!(on["preemptions"], 1, "{on}");
    let off = sim(false);
    assert!(off["preemptions"].as_u64().unwrap_or(0) > 1, "{off}");
}
