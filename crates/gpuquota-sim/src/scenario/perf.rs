//! Kueue's perf-test generator config (kubernetes-sigs/kueue:
//! `test/performance/scheduler/configs/*/generator.yaml`) read as a whole scenario: its
//! cohorts, ClusterQueues (each with its Namespace and LocalQueue) and workload sets.

use std::collections::BTreeMap;

use gpuquota_model::diag::{Diagnostic, Diagnostics, codes};
use gpuquota_model::kueue::Workload;
use gpuquota_model::{Importer, Timestamp};
use serde::Deserialize;

use super::{
    Engine, Instance, PERF_CLASS_LABEL, Retry, Scalar, Scenario, WorkloadsSet, err, generate_set,
    instance_limit,
};

/// Kueue's perf-test generator config (kubernetes-sigs/kueue:
/// `test/performance/scheduler/configs/*/generator.yaml`) read as a whole scenario.
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(extend("required" = ["cohorts"])))]
pub struct PerfConfig {
    #[serde(default)]
    topology: Option<serde_json::Value>,
    #[serde(default)]
    dra: Option<serde_json::Value>,
    #[serde(default)]
    resource_flavor: Option<FlavorConfig>,
    /// The cohorts to generate, each with its ClusterQueues and workloads.
    #[serde(default)]
    cohorts: Vec<CohortSet>,
}

#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct FlavorConfig {
    #[serde(default)]
    name: String,
}

#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
struct CohortSet {
    #[serde(default)]
    class_name: String,
    #[serde(default)]
    count: u32,
    #[serde(default)]
    queues_sets: Vec<QueuesSet>,
}

#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
struct QueuesSet {
    #[serde(default)]
    class_name: String,
    #[serde(default)]
    count: u32,
    nominal_quota: Scalar,
    #[serde(default)]
    borrowing_limit: Option<Scalar>,
    #[serde(default)]
    reclaim_within_cohort: Option<String>,
    #[serde(default)]
    within_cluster_queue: Option<String>,
    #[serde(default)]
    device_nominal_quota: Option<Scalar>,
    #[serde(default)]
    device_borrowing_limit: Option<Scalar>,
    #[serde(default)]
    workloads_sets: Vec<WorkloadsSet>,
}

/// The scenario of a perf-generator config; `warnings` are the reader's so far.
pub(super) fn perf_scenario(
    stem: &str,
    cfg: PerfConfig,
    mut warnings: Diagnostics,
) -> Result<Scenario, Diagnostics> {
    let mut errors = Diagnostics::default();
    if cfg.topology.is_some() || cfg.dra.is_some() {
        errors.push(
            err("topology-aware scheduling and DRA devices are not simulated").field(
                if cfg.topology.is_some() {
                    "topology"
                } else {
                    "dra"
                },
            ),
        );
    }
    if cfg.cohorts.is_empty() {
        errors.push(err("config must contain at least one cohort").field("cohorts"));
    }
    let flavor = cfg
        .resource_flavor
        .as_ref()
        .map(|f| f.name.clone())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "rf".to_owned());
    let mut build = PerfBuild {
        objects: vec![serde_json::json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
            "metadata": {"name": flavor},
        })],
        flavor,
        first: perf_first_interval(&cfg),
        start: Timestamp::EPOCH,
        generated: Vec::new(),
        errors,
    };
    for (ci_set, cset) in cfg.cohorts.iter().enumerate() {
        build.cohort_set(ci_set, cset);
    }
    let PerfBuild {
        objects,
        start,
        generated,
        mut errors,
        ..
    } = build;
    if errors.has_errors() {
        errors.extend(warnings.0);
        return Err(errors);
    }
    let mut text = String::new();
    for o in &objects {
        text.push_str("---\n");
        text.push_str(&serde_json::to_string(o).unwrap_or_default());
        text.push('\n');
    }
    let mut importer = Importer::new();
    importer.add_str(&format!("{stem} (generated queues)"), &text);
    let imported = importer
        .finish()
        .map_err(|e| Diagnostics(e.0.into_iter().map(|e| err(e.to_string())).collect()))?;
    for w in imported.warnings {
        warnings.push(Diagnostic::warning(codes::UNKNOWN_FIELD, w.to_string()));
    }
    let mut model = imported.model;
    let mut instances = BTreeMap::new();
    for (w, inst) in generated {
        model.workloads.insert(inst.key.clone(), w);
        instances.insert(inst.key.clone(), inst);
    }
    Ok(Scenario {
        name: stem.to_owned(),
        engine: Engine::Kueue,
        start,
        end_ms: None,
        fair_sharing: None,
        cycle_latency_ms: 0,
        resume: false,
        retry: Retry::JobBackoff,
        metering: None,
        model,
        instances,
        warnings,
        timeline: crate::timeline::Timeline::default(),
        recorded: Vec::new(),
    })
}

/// Time 0 of a perf-generator config is the first creation: the smallest interval of a
/// non-empty set.
fn perf_first_interval(cfg: &PerfConfig) -> i64 {
    let first = cfg
        .cohorts
        .iter()
        .filter(|c| c.count > 0)
        .flat_map(|c| c.queues_sets.iter().filter(|q| q.count > 0))
        .flat_map(|q| q.workloads_sets.iter())
        .filter(|s| s.count > 0 && !s.workloads.is_empty())
        .map(|s| s.creation_interval_ms)
        .min()
        .unwrap_or(0);
    i64::try_from(first).unwrap_or(0)
}

/// The objects and workloads a perf-generator config makes, as they are made.
struct PerfBuild {
    flavor: String,
    first: i64,
    start: Timestamp,
    objects: Vec<serde_json::Value>,
    generated: Vec<(Workload, Instance)>,
    errors: Diagnostics,
}

impl PerfBuild {
    /// `cohorts[ci_set]`: its cohorts, each with its ClusterQueues.
    fn cohort_set(&mut self, ci_set: usize, cset: &CohortSet) {
        if cset.count > 100_000 {
            self.errors.push(
                err("more than 100,000 cohorts: not simulated (a guard against exhausting memory)")
                    .field(format!("cohorts[{ci_set}].count")),
            );
            return;
        }
        for ci in 0..cset.count {
            let cohort = format!("{}-{ci}", cset.class_name);
            self.objects.push(serde_json::json!({
                "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort",
                "metadata": {"name": cohort}, "spec": {},
            }));
            for (qi, qset) in cset.queues_sets.iter().enumerate() {
                self.queues_set(ci_set, qi, cset.count, &cohort, qset);
            }
        }
    }

    /// `cohorts[ci_set].queuesSets[qi]` in one cohort, after the guards on its size.
    fn queues_set(
        &mut self,
        ci_set: usize,
        qi: usize,
        cohorts: u32,
        cohort: &str,
        qset: &QueuesSet,
    ) {
        if qset.device_nominal_quota.is_some() || qset.device_borrowing_limit.is_some() {
            self.errors
                .push(err("DRA device quotas are not simulated").field(format!(
                    "cohorts[{ci_set}].queuesSets[{qi}].deviceNominalQuota"
                )));
        }
        if u64::from(cohorts) * u64::from(qset.count) > 1_000_000 {
            self.errors.push(err("more than 1,000,000 ClusterQueues: not simulated (a guard against exhausting memory)").field(format!("cohorts[{ci_set}].queuesSets[{qi}].count")));
            return;
        }
        if u64::from(cohorts) * u64::from(qset.count) > instance_limit() {
            self.errors.push(
                err(format!(
                    "more than {} ClusterQueues: not simulated (a guard against exhausting memory)",
                    instance_limit()
                ))
                .field(format!("cohorts[{ci_set}].queuesSets[{qi}].count")),
            );
            return;
        }
        for q in 0..qset.count {
            let cq = format!("{}-{qi}-{q}-{cohort}", qset.class_name);
            self.cluster_queue(&cq, cohort, qset);
            for (si, set) in qset.workloads_sets.iter().enumerate() {
                if let Err(m) = generate_set(
                    set,
                    si,
                    &cq,
                    &cq,
                    "cpu",
                    self.first,
                    self.start,
                    &mut self.generated,
                ) {
                    self.errors.push(err(m).field(format!(
                        "cohorts[{ci_set}].queuesSets[{qi}].workloadsSets[{si}]"
                    )));
                }
            }
        }
    }

    /// One ClusterQueue `cq` of a queues set, with its Namespace and LocalQueue (both named
    /// as the ClusterQueue).
    fn cluster_queue(&mut self, cq: &str, cohort: &str, qset: &QueuesSet) {
        let flavor = &self.flavor;
        let mut res = serde_json::json!({"name": "cpu", "nominalQuota": qset.nominal_quota.text()});
        if let Some(b) = &qset.borrowing_limit {
            let b = b.text();
            if !b.is_empty() {
                res["borrowingLimit"] = serde_json::Value::String(b);
            }
        }
        let mut preemption = serde_json::Map::new();
        if let Some(p) = qset
            .reclaim_within_cohort
            .as_ref()
            .filter(|p| !p.is_empty())
        {
            preemption.insert("reclaimWithinCohort".into(), p.clone().into());
        }
        if let Some(p) = qset.within_cluster_queue.as_ref().filter(|p| !p.is_empty()) {
            preemption.insert("withinClusterQueue".into(), p.clone().into());
        }
        self.objects.push(serde_json::json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
            "metadata": {"name": cq, "labels": {PERF_CLASS_LABEL: qset.class_name}},
            "spec": {"cohort": cohort, "namespaceSelector": {}, "preemption": preemption,
                     "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [{"name": flavor, "resources": [res]}]}]},
        }));
        self.objects.push(serde_json::json!({
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": cq},
        }));
        self.objects.push(serde_json::json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
            "metadata": {"name": cq, "namespace": cq}, "spec": {"clusterQueue": cq},
        }));
    }
}
