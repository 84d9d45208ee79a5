//! Shared input generators for the gpuquota benchmarks (deterministic, seeded).
//!
//! The benchmarks themselves live in `benches/benches/*.rs`, one file per engine; figures and
//! the commands that produced them are in `benches/README.md`.

pub mod history;
pub mod kai;
pub mod mig;
pub mod placement;
pub mod rank;
pub mod timeline;

/// Whether the benchmark binary runs in criterion's test mode, where every benchmark runs once
/// and the inputs are shrunk: `cargo test --bench NAME` (as CI runs it; cargo then passes no
/// `--bench` to the binary) or `cargo bench -- --test`.
pub fn test_mode() -> bool {
    let mut args = std::env::args();
    args.any(|a| a == "--test") || !std::env::args().any(|a| a == "--bench")
}

/// SplitMix64: a tiny, portable, seeded generator so that every bench input is reproducible.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `0..bound` (`bound > 0`).
    pub fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound.max(1)
    }
}

/// Output form of [`kueue_snapshot`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Multi-document YAML (`---` between documents), block style, as `kubectl get -o yaml`
    /// writes each object.
    Yaml,
    /// A stream of JSON objects, one per line.
    Json,
    /// Multi-document YAML, each document one flow mapping on one line
    /// (`{apiVersion: v1, kind: Workload, metadata: {name: w-1, ...}, ...}`), as generators
    /// that print YAML without indentation write it.
    YamlFlow,
    /// Multi-document YAML whose top-level fields are block style and whose values are flow
    /// collections (`metadata: {name: w-1, namespace: team-a}`), as Kueue's documentation
    /// writes its examples.
    YamlMixed,
}

/// `v` as one line of flow YAML: strings plain where YAML reads them as the same string
/// (letters first, then letters, digits, `.`, `/`, `-`, `_`; no YAML 1.1 boolean or null
/// spelling), double-quoted otherwise (JSON's string form, a valid double-quoted scalar).
pub fn flow_yaml(v: &serde_json::Value, out: &mut String) {
    use serde_json::Value;
    match v {
        Value::Null => out.push('~'),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => {
            let plain = s.starts_with(|c: char| c.is_ascii_alphabetic())
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '/' | '-' | '_'))
                && !matches!(
                    s.to_ascii_lowercase().as_str(),
                    "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "y" | "n"
                );
            if plain {
                out.push_str(s);
            } else {
                out.push_str(&serde_json::to_string(s).unwrap_or_default());
            }
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                flow_yaml(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                flow_yaml(&Value::String(k.clone()), out);
                out.push_str(": ");
                flow_yaml(item, out);
            }
            out.push('}');
        }
    }
}

/// A cluster snapshot at Kueue's large scale: 2 ResourceFlavors, `cluster_queues / 100`
/// Cohorts of 100 ClusterQueues each (2 flavors × cpu, memory, nvidia.com/gpu with seeded
/// quotas and limits), one LocalQueue per ClusterQueue, 3 WorkloadPriorityClasses, and
/// `workloads` pending Workloads spread over the LocalQueues (1 to 4 pods each requesting
/// cpu, memory and 0 to 2 GPUs, a priority class and a creation time). With 1,000
/// ClusterQueues and 55,000 Workloads the YAML form is 28 MB, the JSON form 24 MB.
///
/// The same `(cluster_queues, workloads, seed)` always gives the same text. Generator command:
/// `cargo run --release -p gpuquota-benches --example snapshot -- 1000 55000 yaml > snap.yaml`.
///
/// Every ClusterQueue has `reclaimWithinCohort: Any` and `withinClusterQueue: LowerPriority`.
/// From about 10,000 Workloads on, that platform is a preemption livelock (a reclaimed
/// workload is readmitted ahead of its preemptor, which preempts it again, as upstream Kueue
/// does at its default feature gates), so `kueue schedule` runs to its cycle bound: the text
/// measures the engine's loop handling, not one converging schedule. [`kueue_snapshot_with`]
/// with [`Reclaim::Never`] writes the same objects with `reclaimWithinCohort: Never`, a
/// schedule that converges.
pub fn kueue_snapshot(
    cluster_queues: usize,
    workloads: usize,
    seed: u64,
    format: Format,
) -> String {
    kueue_snapshot_with(cluster_queues, workloads, seed, format, Reclaim::Any)
}

/// The ClusterQueues' `preemption.reclaimWithinCohort` in [`kueue_snapshot_with`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reclaim {
    /// `Any`: the looping platform of [`kueue_snapshot`].
    Any,
    /// `LowerPriority`.
    LowerPriority,
    /// `Never`: no ClusterQueue reclaims lent quota, so a run of cycles converges (every
    /// cycle admits or parks heads until none is left to try).
    Never,
}

impl Reclaim {
    /// The policy's name in a ClusterQueue's `spec.preemption.reclaimWithinCohort`.
    pub fn as_str(self) -> &'static str {
        match self {
            Reclaim::Any => "Any",
            Reclaim::LowerPriority => "LowerPriority",
            Reclaim::Never => "Never",
        }
    }
}

/// [`kueue_snapshot`] with the ClusterQueues' `reclaimWithinCohort` set to `reclaim`; every
/// other byte (names, quotas, requests, times: the same seeded draws) is that of
/// [`kueue_snapshot`]. Generator command of the converging form:
/// `cargo run --release -p gpuquota-benches --example snapshot -- 1000 55000 yaml --reclaim never`.
pub fn kueue_snapshot_with(
    cluster_queues: usize,
    workloads: usize,
    seed: u64,
    format: Format,
    reclaim: Reclaim,
) -> String {
    use serde_json::json;
    let mut rng = SplitMix64::new(seed);
    let mut docs: Vec<serde_json::Value> = Vec::new();
    for f in ["on-demand", "spot"] {
        docs.push(json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
            "metadata": {"name": f}, "spec": {"nodeLabels": {"instance-type": f}}
        }));
    }
    for (name, value) in [("low", 100), ("mid", 500), ("high", 1000)] {
        docs.push(json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass",
            "metadata": {"name": name}, "value": value
        }));
    }
    let cohorts = cluster_queues.div_ceil(100).max(1);
    for c in 0..cohorts {
        docs.push(json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort",
            "metadata": {"name": format!("cohort-{c}")}
        }));
    }
    for q in 0..cluster_queues {
        let c = q / 100;
        let mut flavors = Vec::new();
        for f in ["on-demand", "spot"] {
            let gpu = rng.below(9);
            flavors.push(json!({"name": f, "resources": [
                {"name": "cpu", "nominalQuota": format!("{}", 16 + rng.below(64)), "borrowingLimit": format!("{}", rng.below(100))},
                {"name": "memory", "nominalQuota": format!("{}Gi", 64 + rng.below(512))},
                {"name": "nvidia.com/gpu", "nominalQuota": gpu, "lendingLimit": rng.below(gpu + 1)},
            ]}));
        }
        docs.push(json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
            "metadata": {"name": format!("cq-{q}")},
            "spec": {
                "cohortName": format!("cohort-{c}"),
                "namespaceSelector": {},
                "preemption": {"reclaimWithinCohort": reclaim.as_str(), "withinClusterQueue": "LowerPriority"},
                "resourceGroups": [{"coveredResources": ["cpu", "memory", "nvidia.com/gpu"], "flavors": flavors}]
            }
        }));
        docs.push(json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
            "metadata": {"name": format!("lq-{q}"), "namespace": format!("ns-{c}")},
            "spec": {"clusterQueue": format!("cq-{q}")}
        }));
    }
    for w in 0..workloads {
        let q = (rng.below(cluster_queues.max(1) as u64)) as usize;
        let c = q / 100;
        let (class, priority) =
            [("low", 100), ("mid", 500), ("high", 1000)][(rng.below(3)) as usize];
        let minute = w / 60;
        let created = format!(
            "2026-03-{:02}T{:02}:{:02}:{:02}Z",
            1 + (minute / 1440) % 28,
            (minute / 60) % 24,
            minute % 60,
            w % 60
        );
        let job = format!("job-{w}");
        docs.push(json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
            "metadata": {
                "name": format!("job-{job}-{:05x}", rng.below(1 << 20)),
                "namespace": format!("ns-{c}"),
                "creationTimestamp": created,
            },
            "spec": {
                "queueName": format!("lq-{q}"),
                "priorityClassRef": {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": class},
                "priority": priority,
                "podSets": [{
                    "name": "main",
                    "count": 1 + rng.below(4),
                    "template": {"spec": {"containers": [{
                        "name": "main",
                        "resources": {"requests": {
                            "cpu": format!("{}", 1 + rng.below(8)),
                            "memory": format!("{}Gi", 1 + rng.below(32)),
                            "nvidia.com/gpu": rng.below(3),
                        }}
                    }]}}
                }]
            }
        }));
    }
    let mut out = String::with_capacity(docs.len() * 400);
    for d in &docs {
        match format {
            Format::Json => {
                out.push_str(&serde_json::to_string(d).unwrap_or_default());
                out.push('\n');
            }
            Format::Yaml => {
                out.push_str("---\n");
                out.push_str(&serde_saphyr::to_string(d).unwrap_or_default());
            }
            Format::YamlFlow => {
                out.push_str("---\n");
                flow_yaml(d, &mut out);
                out.push('\n');
            }
            Format::YamlMixed => {
                out.push_str("---\n");
                for (k, v) in d.as_object().into_iter().flatten() {
                    out.push_str(k);
                    out.push_str(": ");
                    flow_yaml(v, &mut out);
                    out.push('\n');
                }
            }
        }
    }
    out
}
