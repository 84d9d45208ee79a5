//! KAI's time-based-fairshare simulator config (kai-scheduler/KAI-Scheduler:
//! `pkg/env-tests/timeaware/timeaware.go`, `TimeAwareSimulation`) read as a whole scenario:
//! its queues, nodes and jobs become KAI objects, its cycles virtual time.

use std::collections::BTreeMap;

use gpuquota_model::Timestamp;
use gpuquota_model::diag::{Diagnostic, Diagnostics, codes};
use gpuquota_model::kai::POD_GROUP_ANNOTATION;

use super::{
    JobInstance, KaiScenario, Source, TIMEAWARE_CYCLE_MS, UsageParams, Window, err, failure,
    k_nanos,
};

/// A case-insensitive view of a mapping (Go's `encoding/json` matches field names without
/// regard to case, and `sigs.k8s.io/yaml` decodes through it).
struct Fields<'a> {
    map: Option<&'a serde_json::Map<String, serde_json::Value>>,
    path: String,
}

impl<'a> Fields<'a> {
    fn get(&self, key: &str) -> Option<&'a serde_json::Value> {
        self.map?
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v)
            .filter(|v| !v.is_null())
    }

    fn unknown(&self, known: &[&str], source: &str, warnings: &mut Diagnostics) {
        for k in self.map.into_iter().flat_map(|m| m.keys()) {
            if !known.iter().any(|n| n.eq_ignore_ascii_case(k)) {
                warnings.push(
                    Diagnostic::warning(codes::UNKNOWN_FIELD, "unknown field")
                        .source(source)
                        .field(format!("{}{k}", self.path)),
                );
            }
        }
    }
}

fn fields<'a>(v: &'a serde_json::Value, path: String) -> Fields<'a> {
    Fields {
        map: v.as_object(),
        path,
    }
}

fn int_field(f: &Fields<'_>, key: &str, source: &str, errors: &mut Diagnostics) -> Option<i64> {
    let v = f.get(key)?;
    match v.as_i64() {
        Some(i) => Some(i),
        None => {
            errors.push(
                Diagnostic::error(codes::INVALID_TYPE, format!("expected an integer, got {v}"))
                    .source(source)
                    .field(format!("{}{key}", f.path)),
            );
            None
        }
    }
}

fn float_field(f: &Fields<'_>, key: &str, source: &str, errors: &mut Diagnostics) -> Option<f64> {
    let v = f.get(key)?;
    match v.as_f64() {
        Some(x) => Some(x),
        None => {
            errors.push(
                Diagnostic::error(codes::INVALID_TYPE, format!("expected a number, got {v}"))
                    .source(source)
                    .field(format!("{}{key}", f.path)),
            );
            None
        }
    }
}

fn str_field(f: &Fields<'_>, key: &str) -> String {
    f.get(key)
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_owned()
}

/// The most nodes, queues and jobs a simulator config may declare.
const MAX_OBJECTS: i64 = 1_000_000;

/// The scenario of a time-based-fairshare simulator config.
pub(super) fn timeaware(
    name: &str,
    stem: &str,
    v: &serde_json::Value,
) -> Result<KaiScenario, Diagnostics> {
    let mut warnings = Diagnostics::default();
    let mut errors = Diagnostics::default();
    let top = fields(v, String::new());
    top.unknown(&crate::scenario::KAI_SIMULATOR_FIELDS, name, &mut warnings);
    // Defaults as `TimeAwareSimulation.SetDefaults` (kai-scheduler/KAI-Scheduler:
    // pkg/env-tests/timeaware/timeaware.go).
    let cycles = int_field(&top, "Cycles", name, &mut errors).unwrap_or(100);
    let window = int_field(&top, "WindowSize", name, &mut errors).unwrap_or(5);
    let half = int_field(&top, "HalfLifePeriod", name, &mut errors).unwrap_or(0);
    let k = float_field(&top, "KValue", name, &mut errors).unwrap_or(1.0);
    if !(0..=10_000_000).contains(&cycles) {
        errors.push(
            err("must be between 0 and 10,000,000")
                .source(name)
                .field("Cycles"),
        );
    }
    if window <= 0 || window > 10_000_000 {
        errors.push(
            err("must be a positive number of cycles (at most 10,000,000)")
                .source(name)
                .field("WindowSize"),
        );
    }
    if half > 10_000_000 {
        errors.push(
            err("at most 10,000,000 cycles")
                .source(name)
                .field("HalfLifePeriod"),
        );
    }
    let mut out = TimeAware {
        name,
        docs: Vec::new(),
        jobs: BTreeMap::new(),
        warnings,
        errors,
    };
    let queue_order = out.queues(&top);
    out.nodes(&top);
    out.jobs(&top);
    let TimeAware {
        docs,
        jobs,
        mut warnings,
        errors,
        ..
    } = out;
    if errors.has_errors() {
        return Err(failure(errors, warnings));
    }
    let mut text = String::new();
    for d in &docs {
        text.push_str("---\n");
        text.push_str(&serde_json::to_string(d).unwrap_or_default());
        text.push('\n');
    }
    let imported = gpuquota_model::import_str(&format!("{name} (generated)"), &text)
        .map_err(|e| Diagnostics(e.0))?;
    warnings.extend(imported.warnings);
    let cycle = TIMEAWARE_CYCLE_MS;
    Ok(KaiScenario {
        name: stem.to_owned(),
        source: Source::TimeAware,
        start: Timestamp::EPOCH,
        end_ms: Some(cycles * cycle),
        session_interval_ms: cycle,
        bind_latency_ms: 0,
        resume: false,
        k_value: k_nanos(k),
        usage: Some(UsageParams {
            window: Window::Sliding {
                size_ms: window * cycle,
            },
            half_life_ms: (half > 0).then_some(half * cycle),
            fetch_interval_ms: cycle,
            resolution_ms: cycle,
        }),
        model: imported.model,
        jobs,
        queue_order,
        warnings,
        metering: None,
        timeline: crate::timeline::Timeline::default(),
        recorded: Vec::new(),
    })
}

/// The objects a time-based-fairshare simulator config declares, as they are generated
/// (queues, then nodes, then jobs, as upstream's config lists them).
struct TimeAware<'a> {
    name: &'a str,
    docs: Vec<serde_json::Value>,
    jobs: BTreeMap<String, JobInstance>,
    warnings: Diagnostics,
    errors: Diagnostics,
}

impl TimeAware<'_> {
    /// `Queues`: one KAI Queue each, GPU quota only; the queue names in order.
    fn queues(&mut self, top: &Fields<'_>) -> Vec<String> {
        let name = self.name;
        let mut queue_order = Vec::new();
        let Some(queues) = top.get("Queues").and_then(|q| q.as_array()) else {
            return queue_order;
        };
        for (i, q) in queues.iter().enumerate() {
            let f = fields(q, format!("Queues[{i}]."));
            f.unknown(
                &["Name", "Parent", "Priority", "DeservedGPUs", "Weight"],
                name,
                &mut self.warnings,
            );
            let qname = str_field(&f, "Name");
            if qname.is_empty() {
                self.errors.push(
                    err("required")
                        .source(name)
                        .field(format!("Queues[{i}].Name")),
                );
                continue;
            }
            let parent = str_field(&f, "Parent");
            let priority = int_field(&f, "Priority", name, &mut self.errors).unwrap_or(100);
            let deserved = float_field(&f, "DeservedGPUs", name, &mut self.errors).unwrap_or(0.0);
            let weight = float_field(&f, "Weight", name, &mut self.errors).unwrap_or(1.0);
            let mut spec = serde_json::json!({
                "priority": priority,
                // Upstream replaces the whole resources block with the GPU entry: CPU and memory
                // keep Go's zero values.
                "resources": {
                    "gpu": {"quota": deserved, "overQuotaWeight": weight, "limit": -1},
                    "cpu": {"quota": 0, "overQuotaWeight": 0, "limit": 0},
                    "memory": {"quota": 0, "overQuotaWeight": 0, "limit": 0},
                },
            });
            if !parent.is_empty() {
                spec["parentQueue"] = parent.into();
            }
            self.docs.push(serde_json::json!({
                "apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
                "metadata": {"name": qname}, "spec": spec,
            }));
            queue_order.push(qname);
        }
        queue_order
    }

    /// `Nodes`: `Count` nodes of `GPUs` GPUs each, named as upstream names them.
    fn nodes(&mut self, top: &Fields<'_>) {
        let name = self.name;
        let Some(nodes) = top.get("Nodes").and_then(|q| q.as_array()) else {
            return;
        };
        let mut node_names: BTreeMap<i64, usize> = BTreeMap::new();
        let mut node_count: i64 = 0;
        for (i, n) in nodes.iter().enumerate() {
            let f = fields(n, format!("Nodes[{i}]."));
            f.unknown(&["GPUs", "Count"], name, &mut self.warnings);
            let gpus = int_field(&f, "GPUs", name, &mut self.errors).unwrap_or(0);
            let count = int_field(&f, "Count", name, &mut self.errors).unwrap_or(0);
            if gpus < 0 || count < 0 {
                self.errors.push(
                    err("must not be negative")
                        .source(name)
                        .field(format!("Nodes[{i}]")),
                );
                continue;
            }
            node_count += count;
            if node_count > MAX_OBJECTS {
                self.errors.push(
                    err("more than 1,000,000 nodes: not simulated")
                        .source(name)
                        .field("Nodes"),
                );
                break;
            }
            for _ in 0..count {
                let seen = node_names.entry(gpus).or_insert(0);
                let nname = if *seen == 0 {
                    format!("test-node-{gpus}")
                } else {
                    format!("test-node-{gpus}-{seen}")
                };
                *seen += 1;
                self.docs.push(serde_json::json!({
                    "apiVersion": "v1", "kind": "Node", "metadata": {"name": nname},
                    "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "nvidia.com/gpu": gpus.to_string()},
                               "capacity": {"cpu": "8", "memory": "16Gi", "nvidia.com/gpu": gpus.to_string()}},
                }));
            }
        }
    }

    /// `Jobs`: per queue, `NumJobs` PodGroups of `NumPods` pods asking `GPUs` GPUs each.
    fn jobs(&mut self, top: &Fields<'_>) {
        let name = self.name;
        let jobs_v = top.get("Jobs");
        let Some(m) = jobs_v.and_then(|j| j.as_object()) else {
            if jobs_v.is_some() {
                self.errors.push(
                    Diagnostic::error(
                        codes::INVALID_TYPE,
                        "expected a mapping from queue name to jobs",
                    )
                    .source(name)
                    .field("Jobs"),
                );
            }
            return;
        };
        let mut total: i64 = 0;
        for (queue, spec) in m {
            let f = fields(spec, format!("Jobs.{queue}."));
            f.unknown(&["GPUs", "NumPods", "NumJobs"], name, &mut self.warnings);
            let gpus = int_field(&f, "GPUs", name, &mut self.errors).unwrap_or(0);
            let pods = int_field(&f, "NumPods", name, &mut self.errors).unwrap_or(0);
            let n = int_field(&f, "NumJobs", name, &mut self.errors).unwrap_or(0);
            if gpus < 0 || pods < 0 || n < 0 {
                self.errors.push(
                    err("must not be negative")
                        .source(name)
                        .field(format!("Jobs.{queue}")),
                );
                continue;
            }
            total = total.saturating_add(n.saturating_mul(pods.max(1)));
            if total > MAX_OBJECTS {
                self.errors.push(
                    err("more than 1,000,000 pods: not simulated")
                        .source(name)
                        .field("Jobs"),
                );
                break;
            }
            for j in 0..n {
                self.job(queue, j, pods, gpus);
            }
        }
    }

    /// Job `j` of `queue`: its PodGroup and pods, created at time 0.
    fn job(&mut self, queue: &str, j: i64, pods: i64, gpus: i64) {
        let pg = format!("{queue}-{j}");
        self.docs.push(serde_json::json!({
            "apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
            "metadata": {"name": pg, "namespace": "simulation",
                         "creationTimestamp": Timestamp::EPOCH.to_string()},
            "spec": {"queue": queue, "minMember": 1},
        }));
        for p in 0..pods {
            self.docs.push(serde_json::json!({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": format!("{pg}-{p}"), "namespace": "simulation",
                             "creationTimestamp": Timestamp::EPOCH.to_string(),
                             "annotations": {POD_GROUP_ANNOTATION: pg}},
                "spec": {"schedulerName": "kai-scheduler", "containers": [{"name": "ubuntu-container",
                         "resources": {"limits": {"nvidia.com/gpu": gpus.to_string()}}}]},
                "status": {"phase": "Pending"},
            }));
        }
        let key = format!("simulation/{pg}");
        self.jobs.insert(
            key.clone(),
            JobInstance {
                key,
                class: queue.to_owned(),
                created_ms: 0,
                runtime_ms: None,
            },
        );
    }
}
