//! `validate` and the engines agree on what is an input error: the same inputs go to
//! `validate`, `kueue schedule` and `kai schedule`, and `validate` fails exactly when an engine
//! refuses the input (it runs every engine's input builder as the final check), naming the
//! problem.

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

/// (name, input, a line part `validate` prints about it).
const SAME_ANSWER: &[(&str, &str, &str)] = &[
    // Only the KAI engine refuses it: validate prints the engine's error, tagged.
    (
        "kai_ghost_node.yaml",
        r#"apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team}
spec: {resources: {gpu: {quota: 1, limit: -1, overQuotaWeight: 1}}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml, labels: {kai.scheduler/queue: team}}
spec: {schedulerName: kai-scheduler, nodeName: ghost, containers: [{name: c, resources: {requests: {nvidia.com/gpu: 1}}}]}
status: {phase: Running}
---
apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {allocatable: {nvidia.com/gpu: 8}}
"#,
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
        r#"apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team}
spec: {resources: {gpu: {quota: 1, limit: -1, overQuotaWeight: 1}}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml, labels: {kai.scheduler/queue: team}}
spec: {schedulerName: kai-scheduler, containers: [{name: c, resources: {requests: {nvidia.com/gpu: "1e-40"}}}]}
"#,
        "resources.requests[nvidia.com/gpu]: Invalid value: \"1e-9\": must be an integer",
    ),
    (
        "kai_quota.yaml",
        r#"apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: dept}
spec: {resources: {gpu: {quota: 1e30, limit: -1, overQuotaWeight: 1}}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team}
spec: {parentQueue: dept, resources: {gpu: {quota: 1, limit: -1, overQuotaWeight: 1}}}
"#,
        "spec.resources.gpu.quota: Invalid value: \"1000000000000E\": must be at most 1E",
    ),
    (
        "kueue_config.yaml",
        r#"apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
fairSharing: {enable: true, preemptionStrategies: [Sometimes]}
"#,
        "fairSharing.preemptionStrategies",
    ),
    (
        "kueue_neg.yaml",
        r#"apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: f}
---
apiVersion: kueue.x-k8s.io/v1beta2
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
        r#"apiVersion: v1
kind: ResourceQuota
metadata: {name: cap, namespace: ml}
spec: {hard: {limits.nvidia.com/gpu: 4, requests.nvidia.com/gpu: 4}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: f}
"#,
        "warning: ResourceQuota \"ml/cap\": spec.hard[limits.nvidia.com/gpu]: accepted by the API server",
    ),
];

/// Inputs `validate` refuses by upstream's rules (duplicates, invalid names, cohort cycles)
/// that the engines' input builders still accept: the engines are to adopt the model's
/// validation (one validator), after which these join `SAME_ANSWER`.
const VALIDATE_STRICTER: &[(&str, &str)] = &[
    (
        "kai_badname.yaml",
        r#"apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: Team_A}
spec: {resources: {gpu: {quota: 1, limit: -1, overQuotaWeight: 1}}}
"#,
    ),
    (
        "kai_dup.yaml",
        r#"apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team}
spec: {resources: {gpu: {quota: 1, limit: -1, overQuotaWeight: 1}}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team}
spec: {resources: {gpu: {quota: 2, limit: -1, overQuotaWeight: 1}}}
"#,
    ),
    (
        "kueue_cycle.yaml",
        r#"apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: a}
spec: {parentName: b}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: b}
spec: {parentName: a}
"#,
    ),
    (
        "kueue_dup.yaml",
        r#"apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: f}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: f}
spec: {nodeLabels: {a: b}}
"#,
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

#[test]
fn validate_fails_exactly_when_an_engine_refuses() {
    let mut refused = 0;
    for (name, text, message) in SAME_ANSWER {
        let file = write(name, text);
        let validate = gpuquota(&["validate", &file]);
        let mut engine_refuses = false;
        if kueue_applies(text) {
            engine_refuses |= fails(&gpuquota(&["kueue", "schedule", &file]));
        }
        if kai_applies(text) {
            engine_refuses |= fails(&gpuquota(&["kai", "schedule", &file]));
        }
        let stderr = String::from_utf8_lossy(&validate.stderr);
        assert_eq!(fails(&validate), engine_refuses, "{name}: {stderr}");
        assert!(stderr.contains(message), "{name}: {stderr}");
        refused += usize::from(engine_refuses);
    }
    assert_eq!(refused, 6);
}

#[test]
fn validate_refuses_what_upstream_refuses_even_where_engines_are_lenient() {
    for (name, text) in VALIDATE_STRICTER {
        let file = write(name, text);
        let validate = gpuquota(&["validate", &file]);
        assert!(fails(&validate), "{name}");
    }
}
