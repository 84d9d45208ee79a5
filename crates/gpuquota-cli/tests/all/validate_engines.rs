//! `validate` and the engines agree on what is an input error: the same inputs go to
//! `validate`, `kueue schedule` and `kai schedule`, and `validate` fails exactly when an engine
//! refuses the input (it runs every engine's input builder as the final check), naming the
//! problem. Every engine command that reads an object the validator refuses (`kueue
//! schedule`, `kueue quotas`, `kueue shares`, `kai schedule`, `kai fairshare`) refuses it with the
//! validator's line; `mig` and `meter` read their own input formats, not manifests.

use std::process::{Command, Output};

fn gpuquota(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpuquota"))
        .args(args)
        .output()
        .expect("the gpuquota binary runs")
}

fn write(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("gpuquota-ve-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(name);
    std::fs::write(&file, text).unwrap();
    file.display().to_string()
}

/// The ResourceFlavor `f` most fixtures need.
macro_rules! rf_f {
    () => {
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\n"
    };
}

/// A KAI Queue with a GPU quota (no limit, weight 1), optionally under a parent.
macro_rules! kai_queue {
    ($name:literal, $quota:literal) => {
        concat!(
            "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: ",
            $name,
            "}\nspec: {resources: {gpu: {quota: ",
            $quota,
            ", limit: -1, overQuotaWeight: 1}}}\n"
        )
    };
    ($name:literal, $quota:literal, $parent:literal) => {
        concat!(
            "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: ",
            $name,
            "}\nspec: {parentQueue: ",
            $parent,
            ", resources: {gpu: {quota: ",
            $quota,
            ", limit: -1, overQuotaWeight: 1}}}\n"
        )
    };
}

/// (name, input, a line part `validate` prints about it).
const SAME_ANSWER: &[(&str, &str, &str)] = &[
    // Only the KAI engine refuses it: validate prints the engine's error, tagged.
    (
        "kai_ghost_node.yaml",
        concat!(
            kai_queue!("team", "1"),
            "---\n",
            r#"apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml, labels: {kai.scheduler/queue: team}}
spec: {schedulerName: kai-scheduler, nodeName: ghost, containers: [{name: c, resources: {requests: {nvidia.com/gpu: 1}}}]}
status: {phase: Running}
"#,
            "---\n",
            r#"apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {allocatable: {nvidia.com/gpu: 8}}
"#,
        ),
        "kai engine: Pod \"ml/p\": spec.nodeName: node \"ghost\" does not exist",
    ),
    (
        "kai_node.yaml",
        r#"apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {allocatable: {nvidia.com/gpu: "1e30"}}
"#,
        "status.allocatable[nvidia.com/gpu]: Invalid value: \"1e30\": must be at most 1E",
    ),
    (
        "kai_pod.yaml",
        concat!(
            kai_queue!("team", "1"),
            "---\n",
            r#"apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml, labels: {kai.scheduler/queue: team}}
spec: {schedulerName: kai-scheduler, containers: [{name: c, resources: {requests: {nvidia.com/gpu: "1e-40"}}}]}
"#,
        ),
        "resources.requests[nvidia.com/gpu]: Invalid value: \"1e-9\": must be an integer",
    ),
    (
        "kai_quota.yaml",
        concat!(
            kai_queue!("dept", "1e30"),
            "---\n",
            kai_queue!("team", "1", "dept"),
        ),
        "spec.resources.gpu.quota: Invalid value: \"1000000000000E\": must be at most 1E",
    ),
    (
        "kueue_config.yaml",
        concat!(
            r#"apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
fairSharing: {enable: true, preemptionStrategies: [Sometimes]}
"#,
            "---\n",
            rf_f!(),
        ),
        "fairSharing.preemptionStrategies",
    ),
    (
        "kueue_neg.yaml",
        concat!(
            rf_f!(),
            "---\n",
            r#"apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: f
      resources:
      - {name: nvidia.com/gpu, nominalQuota: -2}
"#,
        ),
        "nominalQuota: Invalid value: \"-2\": must be greater than or equal to 0",
    ),
    (
        "kueue_lq_missing.yaml",
        r#"apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: ml}
spec: {clusterQueue: batch}
"#,
        "warning: LocalQueue \"ml/lq\": spec.clusterQueue: Not found",
    ),
    (
        "rq_gpu_limit.yaml",
        concat!(
            r#"apiVersion: v1
kind: ResourceQuota
metadata: {name: cap, namespace: ml}
spec: {hard: {limits.nvidia.com/gpu: 4, requests.nvidia.com/gpu: 4}}
"#,
            "---\n",
            rf_f!(),
        ),
        "warning: ResourceQuota \"ml/cap\": spec.hard[limits.nvidia.com/gpu]: accepted by the API server",
    ),
    // Duplicates, invalid names, cohort cycles and what the API server refuses although
    // Kueue's scheduler would run it: every engine runs the same validator first.
    (
        "kai_badname.yaml",
        kai_queue!("Team_A", "1"),
        "Queue \"Team_A\": metadata.name: Invalid value: \"Team_A\": must be a lowercase RFC 1123 subdomain",
    ),
    (
        "kai_dup.yaml",
        concat!(kai_queue!("team", "1"), "---\n", kai_queue!("team", "2"),),
        "Queue \"team\": metadata.name: Duplicate value: \"team\": more than one Queue has this name; one of them is ignored",
    ),
    (
        "kueue_cycle.yaml",
        concat!(
            r#"apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: a}
spec: {parentName: b}
"#,
            "---\n",
            r#"apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: b}
spec: {parentName: a}
"#,
        ),
        "Cohort \"a\": spec.parentName: Invalid value: \"b\": cohort cycle: a -> b -> a",
    ),
    (
        "kueue_dup.yaml",
        concat!(
            rf_f!(),
            "---\n",
            r#"apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: f}
spec: {nodeLabels: {a: b}}
"#,
        ),
        "ResourceFlavor \"f\": metadata.name: Duplicate value: \"f\": more than one ResourceFlavor has this name; one of them is ignored",
    ),
    (
        "kueue_tolerated.yaml",
        concat!(
            rf_f!(),
            "---\n",
            r#"apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: solo}
spec:
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: f
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 2, borrowingLimit: 2}
"#,
        ),
        "ClusterQueue \"solo\": spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: Invalid value: \"2\": must be nil when cohort is empty",
    ),
];

fn kueue_applies(text: &str) -> bool {
    text.contains("kueue.x-k8s.io")
}

fn kai_applies(text: &str) -> bool {
    text.contains("scheduling.run.ai") || text.contains("kind: Pod") || text.contains("kind: Node")
}

fn fails(out: &Output) -> bool {
    match out.status.code() {
        Some(0) => false,
        Some(1) => true,
        other => panic!("exit {other:?}: {}", String::from_utf8_lossy(&out.stderr)),
    }
}

/// Runs `gpuquota ARGS FILE` and returns (refused, stderr).
fn refused(args: &[&str], file: &str) -> (bool, String) {
    let mut all = args.to_vec();
    all.push(file);
    let out = gpuquota(&all);
    (
        fails(&out),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The engine commands that read `text`'s objects.
fn engine_commands(text: &str) -> Vec<&'static [&'static str]> {
    let mut commands: Vec<&'static [&'static str]> = Vec::new();
    if kueue_applies(text) {
        commands.extend([
            &["kueue", "schedule"][..],
            &["kueue", "quotas"][..],
            &["kueue", "shares"][..],
        ]);
    }
    if kai_applies(text) {
        commands.extend([&["kai", "schedule"][..], &["kai", "fairshare"][..]]);
    }
    commands
}

#[test]
fn validate_fails_exactly_when_an_engine_refuses() {
    let mut refused_count = 0;
    for (name, text, message) in SAME_ANSWER {
        let file = write(name, text);
        let (validate_refuses, stderr) = refused(&["validate"], &file);
        let mut engine_refuses = false;
        for command in engine_commands(text) {
            let (this, engine_stderr) = refused(command, &file);
            engine_refuses |= this;
            // An input problem the validator finds is refused by every engine command that
            // reads the object, with the validator's line.
            if validate_refuses && !stderr.contains("engine: ") {
                assert!(this, "{name}: {command:?} accepts what validate refuses");
                assert!(
                    engine_stderr.contains(message),
                    "{name}: {command:?}: {engine_stderr}"
                );
            }
        }
        assert_eq!(validate_refuses, engine_refuses, "{name}: {stderr}");
        assert!(stderr.contains(message), "{name}: {stderr}");
        refused_count += usize::from(engine_refuses);
    }
    assert_eq!(refused_count, 11);
}

/// An input with no object a command can use is an error (code `no-objects`, exit 1) in every
/// engine command, as in `validate`: nothing is silently reported as an empty result.
#[test]
fn no_usable_object_is_an_error_in_every_command() {
    let file = write(
        "secret_only.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata: {name: x}\n",
    );
    let empty = write("empty.yaml", "");
    for f in [&file, &empty] {
        let (no, stderr) = refused(&["validate"], f);
        assert!(no, "{stderr}");
        assert!(
            stderr.contains("error: no object gpuquota reads (Kueue, KAI or core kinds) in the input; nothing to validate"),
            "{stderr}"
        );
        const KUEUE: &str = "error: no object `gpuquota kueue` reads in the input (ResourceFlavor, ClusterQueue, Cohort, LocalQueue, Workload, WorkloadPriorityClass or a job); nothing to do";
        const KAI: &str = "error: no object `gpuquota kai` reads in the input (Queue, PodGroup, Pod, Node or a job); nothing to do";
        let commands = [
            ("kueue", "schedule"),
            ("kueue", "quotas"),
            ("kueue", "shares"),
        ]
        .map(|c| (c, KUEUE))
        .into_iter()
        .chain([("kai", "schedule"), ("kai", "fairshare")].map(|c| (c, KAI)));
        for ((engine, sub), line) in commands {
            let command = &[engine, sub][..];
            let (no, stderr) = refused(command, f);
            assert!(no, "{command:?}: {stderr}");
            assert!(stderr.lines().any(|l| l == line), "{command:?}: {stderr}");
        }
    }
}
