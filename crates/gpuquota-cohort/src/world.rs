//! The world: every Kueue object of a [`Model`] resolved into dense tables (flavors, resources,
//! flavor-resources, the quota tree, ClusterQueues, workloads) plus the usage of admitted
//! workloads. Built once; the scheduler never clones it.

use std::collections::{BTreeMap, BTreeSet};

use gpuquota_model::kueue::{
    BorrowWithinCohortPolicy, ClusterQueue, FlavorFungibilityPreference, FungibilityPolicy,
    QueueingStrategy, ReclaimWithinCohort, ResourceGroup, StopPolicy, WithinClusterQueue, Workload,
};
use gpuquota_model::meta::{LabelSelector, Taint, Toleration};
use gpuquota_model::{Amount, Model, Quantity, ResourceName, Timestamp};

use crate::error::{Error, Problem, Warning};
use crate::tree::{FrId, FrQuota, Node, NodeId, NodeKind, QuotaTree, Usage};

/// Dense id of a resource name (ids follow name order).
pub type ResourceId = u32;
/// Dense id of a flavor name (ids follow name order).
pub type FlavorId = u32;
/// Index of a ClusterQueue in [`World::cluster_queues`] (name order).
pub type CqId = u32;
/// Index of a workload in [`World::workloads`] (key order).
pub type WlId = u32;

const NONE_FR: u32 = u32::MAX;

/// The pod-template annotations that ask for topology-aware scheduling
/// (kubernetes-sigs/kueue: apis/kueue/v1beta2/topology_types.go).
pub const TOPOLOGY_ANNOTATIONS: &[&str] = &[
    "kueue.x-k8s.io/podset-required-topology",
    "kueue.x-k8s.io/podset-preferred-topology",
    "kueue.x-k8s.io/podset-unconstrained-topology",
];

/// A ResourceFlavor as the flavor assigner needs it.
#[derive(Debug, Clone, Default)]
pub struct FlavorInfo {
    /// Name.
    pub name: String,
    /// False when only referenced (no ResourceFlavor object).
    pub exists: bool,
    /// `spec.nodeLabels`.
    pub node_labels: BTreeMap<String, String>,
    /// `spec.nodeTaints`.
    pub node_taints: Vec<Taint>,
    /// `spec.tolerations`.
    pub tolerations: Vec<Toleration>,
}

/// `preemption.withinClusterQueue`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WithinPolicy {
    /// `Never`.
    Never,
    /// `LowerPriority`.
    LowerPriority,
    /// `LowerOrNewerEqualPriority`.
    LowerOrNewerEqualPriority,
}

/// `preemption.reclaimWithinCohort`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReclaimPolicy {
    /// `Never`.
    Never,
    /// `LowerPriority`.
    LowerPriority,
    /// `Any`.
    Any,
}

/// One resource group of a ClusterQueue.
#[derive(Debug, Clone)]
pub struct GroupInfo {
    /// Covered resources in spec order.
    pub covered: Vec<ResourceId>,
    /// Flavors in preference order.
    pub flavors: Vec<FlavorId>,
}

/// A ClusterQueue with its policies resolved to upstream defaults.
#[derive(Debug, Clone)]
pub struct CqInfo {
    /// Name.
    pub name: String,
    /// Its leaf in the quota tree.
    pub node: NodeId,
    /// Resource groups.
    pub groups: Vec<GroupInfo>,
    /// `StrictFIFO` (else `BestEffortFIFO`).
    pub strict_fifo: bool,
    /// `withinClusterQueue`.
    pub within: WithinPolicy,
    /// `reclaimWithinCohort`.
    pub reclaim: ReclaimPolicy,
    /// `borrowWithinCohort.policy == LowerPriority`.
    pub borrow_within_cohort: bool,
    /// `borrowWithinCohort.maxPriorityThreshold`.
    pub max_priority_threshold: Option<i32>,
    /// `whenCanBorrow == TryNextFlavor`.
    pub borrow_try_next: bool,
    /// `whenCanPreempt == TryNextFlavor`.
    pub preempt_try_next: bool,
    /// `preference == PreemptionOverBorrowing`.
    pub preemption_over_borrowing: bool,
    /// `namespaceSelector` (`None` selects no namespace).
    pub namespace_selector: Option<LabelSelector>,
    /// Why the queue is inactive (`FlavorNotFound`, `Stopped`, `CohortCycle`), if it is.
    pub inactive: Option<&'static str>,
}

impl CqInfo {
    /// The resource group covering `r`, if any.
    pub fn group_of(&self, r: ResourceId) -> Option<usize> {
        self.groups.iter().position(|g| g.covered.contains(&r))
    }
}

/// A node-affinity requirement (`key`, `operator`, `values`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeRequirement {
    /// Label key.
    pub key: String,
    /// `In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`, `Lt`.
    pub operator: String,
    /// Values.
    pub values: Vec<String>,
}

/// One PodSet's scheduling shape.
#[derive(Debug, Clone)]
pub struct PodSetInfo {
    /// Name.
    pub name: String,
    /// `count`.
    pub count: i32,
    /// `minCount`.
    pub min_count: Option<i32>,
    /// Requests of one pod, Kueue units, in resource-name order (zeros kept).
    pub per_pod: Vec<(ResourceId, i64)>,
    /// `nodeSelector`.
    pub node_selector: BTreeMap<String, String>,
    /// Pod tolerations.
    pub tolerations: Vec<Toleration>,
    /// Required node-affinity terms (ORed; expressions ANDed).
    pub affinity: Vec<Vec<NodeRequirement>>,
}

/// Where a pending workload queues, or why it cannot queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueueRef {
    /// Pending in this ClusterQueue.
    Cq(CqId),
    /// `spec.queueName` names no LocalQueue.
    LocalQueueMissing(String),
    /// The LocalQueue is stopped.
    LocalQueueStopped(String),
    /// The LocalQueue's ClusterQueue does not exist.
    ClusterQueueMissing(String),
}

/// An admitted workload's quota reservation.
#[derive(Debug, Clone)]
pub struct AdmittedInfo {
    /// The ClusterQueue holding the reservation.
    pub cq: CqId,
    /// Usage per flavor-resource (after reclaimable pods).
    pub usage: Vec<(FrId, Amount)>,
    /// Flavor-resources the admission uses (per its flavors), sorted.
    pub uses: Vec<FrId>,
    /// QuotaReserved transition time ([`crate::preempt::now`] without `QuotaReserved=True`).
    pub time: Timestamp,
    /// `Evicted=True` already.
    pub evicted: bool,
    /// Admitted count per PodSet.
    pub counts: Vec<i32>,
    /// It is deactivated or its LocalQueue or ClusterQueue has `stopPolicy: HoldAndDrain`:
    /// Kueue evicts it, so the run starts with its quota released and the workload pending.
    pub drained: bool,
}

/// A Workload resolved for scheduling.
#[derive(Debug, Clone)]
pub struct WorkloadInfo {
    /// `namespace/name`.
    pub key: String,
    /// Namespace.
    pub namespace: String,
    /// UID (or the key when unset), the final tie-break.
    pub uid: String,
    /// `metadata.uid` as written (upstream prints `UNKNOWN` when unset).
    pub uid_raw: Option<String>,
    /// The `kueue.x-k8s.io/job-uid` label.
    pub job_uid: Option<String>,
    /// Effective priority.
    pub priority: i32,
    /// PriorityClass name of its pods (for ResourceQuota scopes).
    pub priority_class: Option<String>,
    /// Queue-order timestamp: `creationTimestamp`, or the eviction time of a workload evicted
    /// by the PodsReady timeout or an admission check.
    pub created: Timestamp,
    /// `spec.active` (default true).
    pub active: bool,
    /// PodSets.
    pub pod_sets: Vec<PodSetInfo>,
    /// Where it queues.
    pub queue: QueueRef,
    /// The reservation of an admitted workload.
    pub admitted: Option<AdmittedInfo>,
}

/// A namespace ResourceQuota's hard caps that the engine enforces.
#[derive(Debug, Clone)]
pub struct RqInfo {
    /// Name (without namespace).
    pub name: String,
    /// Namespace.
    pub namespace: String,
    /// `(hard key as written, resource or None for pods, hard amount)`.
    pub hard: Vec<(String, Option<ResourceId>, Amount)>,
    /// The quota object (scope selector).
    pub object: gpuquota_model::core::ResourceQuota,
}

/// Every object resolved into dense tables.
#[derive(Debug, Clone)]
pub struct World {
    /// Resource names (sorted).
    pub resources: Vec<ResourceName>,
    /// Flavors (sorted).
    pub flavors: Vec<FlavorInfo>,
    /// Flavor-resources (sorted by flavor then resource name).
    pub frs: Vec<(FlavorId, ResourceId)>,
    fr_index: Vec<u32>,
    /// The quota forest.
    pub tree: QuotaTree,
    /// ClusterQueues (sorted).
    pub cluster_queues: Vec<CqInfo>,
    /// Workloads (sorted by key), finished ones excluded.
    pub workloads: Vec<WorkloadInfo>,
    /// Namespace labels (for `namespaceSelector`).
    pub namespaces: BTreeMap<String, BTreeMap<String, String>>,
    /// ResourceQuotas per namespace.
    pub resource_quotas: Vec<RqInfo>,
    /// Usage of the admitted workloads at the start.
    pub initial_usage: Usage,
    /// Tolerated live-cluster states.
    pub warnings: Vec<Warning>,
    /// The id of the `pods` resource, if any object names it.
    pub pods: Option<ResourceId>,
}

impl World {
    /// The flavor-resource id of (flavor, resource), if the pair has any quota or usage.
    pub fn fr(&self, f: FlavorId, r: ResourceId) -> Option<FrId> {
        let v = self.fr_index[f as usize * self.resources.len() + r as usize];
        (v != NONE_FR).then_some(v)
    }

    /// Resource id of a name.
    pub fn resource_id(&self, name: &str) -> Option<ResourceId> {
        self.resources
            .binary_search_by(|r| r.as_str().cmp(name))
            .ok()
            .map(|i| i as ResourceId)
    }

    /// Flavor id of a name.
    pub fn flavor_id(&self, name: &str) -> Option<FlavorId> {
        self.flavors
            .binary_search_by(|f| f.name.as_str().cmp(name))
            .ok()
            .map(|i| i as FlavorId)
    }

    /// ClusterQueue id of a name.
    pub fn cq_id(&self, name: &str) -> Option<CqId> {
        self.cluster_queues
            .binary_search_by(|c| c.name.as_str().cmp(name))
            .ok()
            .map(|i| i as CqId)
    }

    /// Workload id of a key.
    pub fn workload_id(&self, key: &str) -> Option<WlId> {
        self.workloads
            .binary_search_by(|w| w.key.as_str().cmp(key))
            .ok()
            .map(|i| i as WlId)
    }

    /// The name of a flavor-resource's resource.
    pub fn fr_resource(&self, fr: FrId) -> &ResourceName {
        &self.resources[self.frs[fr as usize].1 as usize]
    }

    /// The name of a flavor-resource's flavor.
    pub fn fr_flavor(&self, fr: FrId) -> &str {
        &self.flavors[self.frs[fr as usize].0 as usize].name
    }

    /// Builds the world from an imported model.
    ///
    /// # Errors
    /// [`Error`] listing every malformed object (nothing is built).
    ///
    /// # Complexity
    /// O(objects × log objects + nodes × frs).
    pub fn build(model: &Model) -> Result<World, Error> {
        Builder::default().build(model)
    }
}

#[derive(Default)]
struct Builder {
    problems: Vec<Problem>,
    warnings: Vec<Warning>,
}

fn quantity_amount(q: &Quantity, r: &ResourceName) -> Amount {
    q.to_amount(r)
}

impl Builder {
    fn problem(
        &mut self,
        kind: &'static str,
        name: &str,
        field: String,
        message: impl Into<String>,
    ) {
        self.problems.push(Problem {
            kind,
            name: name.to_owned(),
            field,
            message: message.into(),
            code: gpuquota_model::diag::codes::INVALID,
        });
    }

    fn warn(&mut self, kind: &'static str, name: &str, message: impl Into<String>) {
        self.warnings.push(Warning {
            kind,
            name: name.to_owned(),
            message: message.into(),
        });
    }

    fn check_groups(
        &mut self,
        kind: &'static str,
        name: &str,
        groups: &[ResourceGroup],
        has_parent: bool,
        is_cq: bool,
    ) {
        let mut seen_res = BTreeSet::new();
        let mut seen_flv = BTreeSet::new();
        for (gi, g) in groups.iter().enumerate() {
            if g.covered_resources.is_empty() {
                // `coveredResources` has `MinItems=1` in upstream's CRD
                // (kubernetes-sigs/kueue: apis/kueue/v1beta2/clusterqueue_types.go)
                self.problem(
                    kind,
                    name,
                    format!("spec.resourceGroups[{gi}].coveredResources"),
                    "must have at least 1 item",
                );
            }
            for (ri, r) in g.covered_resources.iter().enumerate() {
                if !seen_res.insert(r.as_str().to_owned()) {
                    self.problem(
                        kind,
                        name,
                        format!("spec.resourceGroups[{gi}].coveredResources[{ri}]"),
                        format!("Duplicate value: {:?}", r.as_str()),
                    );
                }
                if r.as_str() == "" {
                    self.problem(
                        kind,
                        name,
                        format!("spec.resourceGroups[{gi}].coveredResources[{ri}]"),
                        "resource name must not be empty",
                    );
                }
            }
            if g.flavors.is_empty() {
                self.problem(
                    kind,
                    name,
                    format!("spec.resourceGroups[{gi}].flavors"),
                    "must have at least 1 item",
                );
            }
            for (fi, f) in g.flavors.iter().enumerate() {
                let base = format!("spec.resourceGroups[{gi}].flavors[{fi}]");
                if !seen_flv.insert(f.name.clone()) {
                    self.problem(
                        kind,
                        name,
                        format!("{base}.name"),
                        format!("Duplicate value: {:?}", f.name),
                    );
                }
                if f.resources.len() != g.covered_resources.len() {
                    self.problem(
                        kind,
                        name,
                        format!("{base}.resources"),
                        "flavors must have the same number of resources as the coveredResources",
                    );
                }
                for (ri, rq) in f.resources.iter().enumerate() {
                    let rbase = format!("{base}.resources[{ri}]");
                    if g.covered_resources.get(ri) != Some(&rq.name) {
                        self.problem(
                            kind,
                            name,
                            format!("{rbase}.name"),
                            "must match the name in coveredResources",
                        );
                    }
                    match &rq.nominal_quota {
                        None => self.problem(
                            kind,
                            name,
                            format!("{rbase}.nominalQuota"),
                            "Required value",
                        ),
                        Some(q) if q.is_negative() => self.problem(
                            kind,
                            name,
                            format!("{rbase}.nominalQuota"),
                            "must be greater than or equal to 0",
                        ),
                        _ => {}
                    }
                    for (field, v) in [
                        ("borrowingLimit", &rq.borrowing_limit),
                        ("lendingLimit", &rq.lending_limit),
                    ] {
                        if let Some(q) = v {
                            if q.is_negative() {
                                self.problem(
                                    kind,
                                    name,
                                    format!("{rbase}.{field}"),
                                    "must be greater than or equal to 0",
                                );
                            }
                            if !has_parent {
                                // the API server rejects this, but Kueue's cache tolerates
                                // it (a root has nothing to borrow from or lend to) and
                                // upstream's scheduler tests use it: a warning, not an error
                                let msg = if is_cq {
                                    "must be nil when cohort is empty"
                                } else {
                                    "must be nil when parent is empty"
                                };
                                self.warn(
                                    kind,
                                    name,
                                    format!("{rbase}.{field}: {msg}; ignored (no parent)"),
                                );
                            }
                        }
                    }
                    if is_cq
                        && let (Some(ll), Some(nq)) = (&rq.lending_limit, &rq.nominal_quota)
                        && ll > nq
                    {
                        // rejected by the webhook, tolerated by Kueue's cache: the guaranteed
                        // part max(0, nominal - lendingLimit) is 0, everything is lent
                        self.warn(
                            kind,
                            name,
                            format!(
                                "{rbase}.lendingLimit: must be less than or equal to the nominalQuota; the whole nominal quota is lent"
                            ),
                        );
                    }
                }
            }
        }
    }

    fn check_cq_enums(&mut self, name: &str, cq: &ClusterQueue) {
        let s = &cq.spec;
        let mut bad = |field: &str, value: &str, allowed: &[&str]| {
            self.problems.push(Problem {
                kind: "ClusterQueue",
                name: name.to_owned(),
                field: field.to_owned(),
                message: format!(
                    "Unsupported value: {value:?}: supported values: {}",
                    allowed.join(", ")
                ),
                code: gpuquota_model::diag::codes::INVALID,
            });
        };
        if let Some(q @ QueueingStrategy::Unknown(_)) = &s.queueing_strategy {
            bad(
                "spec.queueingStrategy",
                q.as_str(),
                QueueingStrategy::ALLOWED,
            );
        }
        if let Some(q @ StopPolicy::Unknown(_)) = &s.stop_policy {
            bad("spec.stopPolicy", q.as_str(), StopPolicy::ALLOWED);
        }
        if let Some(p) = &s.preemption {
            if let Some(q @ WithinClusterQueue::Unknown(_)) = &p.within_cluster_queue {
                bad(
                    "spec.preemption.withinClusterQueue",
                    q.as_str(),
                    WithinClusterQueue::ALLOWED,
                );
            }
            if let Some(q @ ReclaimWithinCohort::Unknown(_)) = &p.reclaim_within_cohort {
                bad(
                    "spec.preemption.reclaimWithinCohort",
                    q.as_str(),
                    ReclaimWithinCohort::ALLOWED,
                );
            }
            if let Some(b) = &p.borrow_within_cohort
                && let Some(q @ BorrowWithinCohortPolicy::Unknown(_)) = &b.policy
            {
                bad(
                    "spec.preemption.borrowWithinCohort.policy",
                    q.as_str(),
                    BorrowWithinCohortPolicy::ALLOWED,
                );
            }
        }
        if let Some(f) = &s.flavor_fungibility {
            if let Some(q @ FungibilityPolicy::Unknown(_)) = &f.when_can_borrow {
                bad(
                    "spec.flavorFungibility.whenCanBorrow",
                    q.as_str(),
                    FungibilityPolicy::ALLOWED,
                );
            }
            if let Some(q @ FungibilityPolicy::Unknown(_)) = &f.when_can_preempt {
                bad(
                    "spec.flavorFungibility.whenCanPreempt",
                    q.as_str(),
                    FungibilityPolicy::ALLOWED,
                );
            }
            if let Some(q @ FlavorFungibilityPreference::Unknown(_)) = &f.preference {
                bad(
                    "spec.flavorFungibility.preference",
                    q.as_str(),
                    FlavorFungibilityPreference::ALLOWED,
                );
            }
        }
        let (b, p, pref) = s.flavor_fungibility();
        if pref.is_some()
            && !(b == FungibilityPolicy::TryNextFlavor && p == FungibilityPolicy::TryNextFlavor)
        {
            // rejected by the API server; Kueue's scheduler applies the preference anyway
            self.warn(
                "ClusterQueue",
                name,
                "spec.flavorFungibility.preference: preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor; applied as given",
            );
        }
        if s.reclaim_within_cohort() == ReclaimWithinCohort::Never
            && s.borrow_within_cohort().0 != BorrowWithinCohortPolicy::Never
        {
            // rejected by the API server; Kueue's scheduler runs it (and upstream's scheduler
            // tests use it): only the ClusterQueue's own workloads can be preempted
            self.warn(
                "ClusterQueue",
                name,
                "spec.preemption: reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never; applied as given",
            );
        }
    }

    fn build(mut self, model: &Model) -> Result<World, Error> {
        if model
            .configuration
            .as_ref()
            .is_some_and(|c| c.fair_sharing_enabled())
        {
            self.warn(
                "Configuration",
                "",
                "fair sharing is configured; this engine orders and preempts classically (fair sharing is the gpuquota-fairshare engine)",
            );
        }
        // ---- Configuration: resources.excludeResourcePrefixes and transformations
        let config_name = model
            .configuration
            .as_ref()
            .map(|c| c.metadata.name.clone())
            .unwrap_or_default();
        let rules =
            match crate::config::ResourceRules::from_configuration(model.configuration.as_ref()) {
                Ok((rules, warnings)) => {
                    for (field, message) in warnings {
                        self.warn("Configuration", &config_name, format!("{field}: {message}"));
                    }
                    rules
                }
                Err(errors) => {
                    for (field, message) in errors {
                        self.problem("Configuration", &config_name, field, message);
                    }
                    crate::config::ResourceRules::default()
                }
            };
        for d in &model.duplicates {
            self.warn(
                "Object",
                &d.name,
                format!(
                    "{} defined more than once; the last definition is used",
                    d.kind.as_str()
                ),
            );
        }
        // ---- validation of queues and cohorts
        for (name, cq) in &model.cluster_queues {
            self.check_cq_enums(name, cq);
            let has_parent = cq
                .spec
                .cohort_name
                .as_deref()
                .is_some_and(|c| !c.is_empty());
            self.check_groups(
                "ClusterQueue",
                name,
                &cq.spec.resource_groups,
                has_parent,
                true,
            );
        }
        for (name, co) in &model.cohorts {
            let has_parent = co
                .spec
                .parent_name
                .as_deref()
                .is_some_and(|c| !c.is_empty());
            self.check_groups("Cohort", name, &co.spec.resource_groups, has_parent, false);
        }

        // ---- names
        let mut res_names: BTreeSet<String> = BTreeSet::new();
        let mut flv_names: BTreeSet<String> = model.resource_flavors.keys().cloned().collect();
        let add_groups =
            |groups: &[ResourceGroup], res: &mut BTreeSet<String>, flv: &mut BTreeSet<String>| {
                for g in groups {
                    for r in &g.covered_resources {
                        res.insert(r.as_str().to_owned());
                    }
                    for f in &g.flavors {
                        flv.insert(f.name.clone());
                        // a flavor may name resources the group does not cover (a field
                        // error reported above); they still get ids so no lookup misses
                        for rq in &f.resources {
                            res.insert(rq.name.as_str().to_owned());
                        }
                    }
                }
            };
        for cq in model.cluster_queues.values() {
            add_groups(&cq.spec.resource_groups, &mut res_names, &mut flv_names);
        }
        for co in model.cohorts.values() {
            add_groups(&co.spec.resource_groups, &mut res_names, &mut flv_names);
        }
        // workloads: requests and admissions
        let live: Vec<&Workload> = model
            .workloads
            .values()
            .filter(|w| !w.is_finished())
            .collect();
        let mut per_pod_all: Vec<Vec<Option<BTreeMap<ResourceName, Quantity>>>> =
            Vec::with_capacity(live.len());
        for w in &live {
            let mut v = Vec::new();
            for ps in &w.spec.pod_sets {
                let req = ps
                    .template
                    .spec
                    .effective_requests()
                    .and_then(|r| rules.apply(&r));
                if let Some(req) = &req {
                    for r in req.keys() {
                        res_names.insert(r.as_str().to_owned());
                    }
                }
                v.push(req);
            }
            per_pod_all.push(v);
            if let Some(adm) = w.status.as_ref().and_then(|s| s.admission.as_ref()) {
                for psa in &adm.pod_set_assignments {
                    for (r, f) in &psa.flavors {
                        res_names.insert(r.as_str().to_owned());
                        flv_names.insert(f.clone());
                    }
                    for r in psa.resource_usage.keys() {
                        res_names.insert(r.as_str().to_owned());
                    }
                }
            }
        }
        for rq in model.resource_quotas.values() {
            for k in rq.spec.hard.keys() {
                if let Some(r) = rq_resource(k) {
                    res_names.insert(r.to_owned());
                }
            }
        }
        let resources: Vec<ResourceName> = res_names
            .iter()
            .map(|s| ResourceName::new(s.as_str()))
            .collect();
        let rid = |name: &str| -> ResourceId {
            resources
                .binary_search_by(|r| r.as_str().cmp(name))
                .map(|i| i as ResourceId)
                .unwrap_or(0)
        };
        let flavors: Vec<FlavorInfo> = flv_names
            .iter()
            .map(|n| match model.resource_flavors.get(n) {
                Some(rf) => FlavorInfo {
                    name: n.clone(),
                    exists: true,
                    node_labels: rf.spec.node_labels.clone(),
                    node_taints: rf.spec.node_taints.clone(),
                    tolerations: rf.spec.tolerations.clone(),
                },
                None => FlavorInfo {
                    name: n.clone(),
                    ..FlavorInfo::default()
                },
            })
            .collect();
        let fid = |name: &str| -> FlavorId {
            flavors
                .binary_search_by(|f| f.name.as_str().cmp(name))
                .map(|i| i as FlavorId)
                .unwrap_or(0)
        };

        // ---- flavor-resources
        let mut fr_set: BTreeSet<(FlavorId, ResourceId)> = BTreeSet::new();
        let collect_frs = |groups: &[ResourceGroup], set: &mut BTreeSet<(FlavorId, ResourceId)>| {
            for g in groups {
                for f in &g.flavors {
                    for rq in &f.resources {
                        set.insert((fid(&f.name), rid(rq.name.as_str())));
                    }
                }
            }
        };
        for cq in model.cluster_queues.values() {
            collect_frs(&cq.spec.resource_groups, &mut fr_set);
        }
        for co in model.cohorts.values() {
            collect_frs(&co.spec.resource_groups, &mut fr_set);
        }
        for w in &live {
            if let Some(adm) = w.status.as_ref().and_then(|s| s.admission.as_ref()) {
                for psa in &adm.pod_set_assignments {
                    for (r, f) in &psa.flavors {
                        fr_set.insert((fid(f), rid(r.as_str())));
                    }
                }
            }
        }
        let frs: Vec<(FlavorId, ResourceId)> = fr_set.into_iter().collect();
        let mut fr_index = vec![NONE_FR; flavors.len() * resources.len()];
        for (i, &(f, r)) in frs.iter().enumerate() {
            fr_index[f as usize * resources.len() + r as usize] = i as u32;
        }
        let fr_of =
            |f: FlavorId, r: ResourceId| fr_index[f as usize * resources.len() + r as usize];

        // ---- nodes: cohorts (explicit + implicit) then ClusterQueues
        let mut cohort_names: BTreeSet<String> = model.cohorts.keys().cloned().collect();
        let mut implicit = BTreeSet::new();
        for (cq_name, cq) in &model.cluster_queues {
            if let Some(c) = cq.spec.cohort_name.as_deref().filter(|c| !c.is_empty())
                && !model.cohorts.contains_key(c)
            {
                if implicit.insert(c.to_owned()) {
                    self.warn("Cohort", c, format!("no Cohort object (named by ClusterQueue {cq_name:?}); an implicit cohort without quota is used"));
                }
                cohort_names.insert(c.to_owned());
            }
        }
        for (co_name, co) in &model.cohorts {
            if let Some(p) = co.spec.parent_name.as_deref().filter(|c| !c.is_empty())
                && !model.cohorts.contains_key(p)
            {
                if implicit.insert(p.to_owned()) {
                    self.warn("Cohort", p, format!("no Cohort object (parent of {co_name:?}); an implicit cohort without quota is used"));
                }
                cohort_names.insert(p.to_owned());
            }
        }
        let cohort_list: Vec<String> = cohort_names.into_iter().collect();
        let cohort_id = |name: &str| {
            cohort_list
                .binary_search_by(|c| c.as_str().cmp(name))
                .ok()
                .map(|i| i as NodeId)
        };
        let nc = cohort_list.len();
        let cq_names: Vec<&String> = model.cluster_queues.keys().collect();
        let mut nodes: Vec<Node> = Vec::with_capacity(nc + cq_names.len());
        for name in &cohort_list {
            nodes.push(Node {
                name: name.clone(),
                kind: NodeKind::Cohort,
                parent: None,
                children: Vec::new(),
                height: 0,
                root: 0,
            });
        }
        for (i, name) in cq_names.iter().enumerate() {
            nodes.push(Node {
                name: (*name).clone(),
                kind: NodeKind::ClusterQueue(i as u32),
                parent: None,
                children: Vec::new(),
                height: 0,
                root: 0,
            });
        }
        // cohort parents, with cycle detection
        let mut parent_of: Vec<Option<NodeId>> = vec![None; nc];
        for (i, name) in cohort_list.iter().enumerate() {
            if let Some(co) = model.cohorts.get(name)
                && let Some(p) = co.spec.parent_name.as_deref().filter(|c| !c.is_empty())
            {
                parent_of[i] = cohort_id(p);
            }
        }
        // one linear pass: a cohort whose chain enters a cycle has no depth
        let depths = gpuquota_fairshare::tree::chain_depths(
            &parent_of
                .iter()
                .map(|p| p.map(|x| x as usize))
                .collect::<Vec<_>>(),
        );
        let in_cycle: Vec<bool> = depths.iter().map(Option::is_none).collect();
        for (i, d) in depths.iter().enumerate() {
            if *d == Some(gpuquota_model::limits::MAX_TREE_DEPTH + 1) {
                self.problems.push(Problem {
                    kind: "Cohort",
                    name: cohort_list[i].clone(),
                    field: "spec.parentName".into(),
                    message: format!(
                        "the cohort tree is deeper than {} levels (the limit every gpuquota engine applies; real platforms use 2 to 5)",
                        gpuquota_model::limits::MAX_TREE_DEPTH
                    ),
                    code: crate::error::codes::TREE_TOO_DEEP,
                });
            }
        }
        for i in 0..nc {
            if in_cycle[i] {
                self.warn(
                    "Cohort",
                    &cohort_list[i],
                    "its parent chain has a cycle; every ClusterQueue of the tree is inactive",
                );
                parent_of[i] = None;
            }
        }
        // break cycles: nodes on a cycle keep no parent (their subtrees stay separate roots)
        for (i, p) in parent_of.iter().enumerate() {
            if let Some(p) = *p {
                nodes[i].parent = Some(p);
                nodes[p as usize].children.push(i as NodeId);
            }
        }
        let mut cq_parent: Vec<Option<NodeId>> = Vec::with_capacity(cq_names.len());
        for (i, name) in cq_names.iter().enumerate() {
            let cq = &model.cluster_queues[*name];
            let p = cq
                .spec
                .cohort_name
                .as_deref()
                .filter(|c| !c.is_empty())
                .and_then(cohort_id);
            cq_parent.push(p);
            if let Some(p) = p {
                nodes[nc + i].parent = Some(p);
                nodes[p as usize].children.push((nc + i) as NodeId);
            }
        }
        for n in &mut nodes {
            n.children.sort_unstable();
        }
        let nfr = frs.len();
        let mut quotas = vec![FrQuota::default(); nodes.len() * nfr];
        let mut fill = |node: usize, groups: &[ResourceGroup]| {
            for g in groups {
                for f in &g.flavors {
                    for rq in &f.resources {
                        let fr = fr_of(fid(&f.name), rid(rq.name.as_str()));
                        if fr == NONE_FR {
                            continue;
                        }
                        let q = &mut quotas[node * nfr + fr as usize];
                        q.declared = true;
                        q.nominal = rq
                            .nominal_quota
                            .as_ref()
                            .map(|x| quantity_amount(x, &rq.name))
                            .unwrap_or(Amount::ZERO);
                        q.borrowing_limit = rq
                            .borrowing_limit
                            .as_ref()
                            .map(|x| quantity_amount(x, &rq.name));
                        q.lending_limit = rq
                            .lending_limit
                            .as_ref()
                            .map(|x| quantity_amount(x, &rq.name));
                    }
                }
            }
        };
        for (i, name) in cohort_list.iter().enumerate() {
            if let Some(co) = model.cohorts.get(name) {
                fill(i, &co.spec.resource_groups);
            }
        }
        for (i, name) in cq_names.iter().enumerate() {
            fill(nc + i, &model.cluster_queues[*name].spec.resource_groups);
        }
        let tree = QuotaTree::new(nodes, nfr, quotas);
        // roots in a cycle tree
        let cycle_root: Vec<bool> = (0..tree.nodes.len())
            .map(|n| {
                let r = tree.nodes[n].root as usize;
                r < nc && in_cycle[r]
            })
            .collect();

        // ---- ClusterQueues
        let mut cluster_queues = Vec::with_capacity(cq_names.len());
        for (i, name) in cq_names.iter().enumerate() {
            let cq = &model.cluster_queues[*name];
            let s = &cq.spec;
            let groups: Vec<GroupInfo> = s
                .resource_groups
                .iter()
                .map(|g| GroupInfo {
                    covered: g
                        .covered_resources
                        .iter()
                        .map(|r| rid(r.as_str()))
                        .collect(),
                    flavors: g.flavors.iter().map(|f| fid(&f.name)).collect(),
                })
                .collect();
            let mut inactive = None;
            let missing: Vec<&str> = s
                .flavor_names()
                .filter(|f| !model.resource_flavors.contains_key(*f))
                .collect();
            if !missing.is_empty() {
                self.warn(
                    "ClusterQueue",
                    name,
                    format!(
                        "flavor(s) {} not found; the ClusterQueue is inactive (FlavorNotFound)",
                        missing.join(", ")
                    ),
                );
                inactive = Some("FlavorNotFound");
            }
            if s.stop_policy() != StopPolicy::None && inactive.is_none() {
                inactive = Some("Stopped");
            }
            if cycle_root[nc + i] && inactive.is_none() {
                inactive = Some("CohortCycle");
            }
            if !s.admission_checks.is_empty() || s.admission_checks_strategy.is_some() {
                self.warn("ClusterQueue", name, "admission checks are not modelled; workloads are treated as admitted once quota is reserved");
            }
            let (bwc, thr) = s.borrow_within_cohort();
            let (wb, wp, pref) = s.flavor_fungibility();
            cluster_queues.push(CqInfo {
                name: (*name).clone(),
                node: (nc + i) as NodeId,
                groups,
                strict_fifo: s.queueing_strategy() == QueueingStrategy::StrictFifo,
                within: match s.within_cluster_queue() {
                    WithinClusterQueue::LowerPriority => WithinPolicy::LowerPriority,
                    WithinClusterQueue::LowerOrNewerEqualPriority => {
                        WithinPolicy::LowerOrNewerEqualPriority
                    }
                    _ => WithinPolicy::Never,
                },
                reclaim: match s.reclaim_within_cohort() {
                    ReclaimWithinCohort::LowerPriority => ReclaimPolicy::LowerPriority,
                    ReclaimWithinCohort::Any => ReclaimPolicy::Any,
                    _ => ReclaimPolicy::Never,
                },
                borrow_within_cohort: bwc == BorrowWithinCohortPolicy::LowerPriority,
                max_priority_threshold: thr,
                borrow_try_next: wb == FungibilityPolicy::TryNextFlavor,
                preempt_try_next: wp == FungibilityPolicy::TryNextFlavor,
                preemption_over_borrowing: pref
                    == Some(FlavorFungibilityPreference::PreemptionOverBorrowing),
                namespace_selector: s.namespace_selector.clone(),
                inactive,
            });
        }
        let cq_of = |name: &str| {
            cq_names
                .binary_search_by(|c| c.as_str().cmp(name))
                .ok()
                .map(|i| i as CqId)
        };

        // ---- workloads
        let mut workloads = Vec::with_capacity(live.len());
        let mut usage = tree.empty_usage();
        for (wi, w) in live.iter().enumerate() {
            let key = w.key();
            let ns = w
                .metadata
                .namespace
                .clone()
                .unwrap_or_else(|| "default".to_owned());
            let n_ps = w.spec.pod_sets.len();
            if n_ps == 0 || n_ps > 18 {
                self.problem(
                    "Workload",
                    &key,
                    "spec.podSets".into(),
                    format!("must have 1 to 18 items, has {n_ps}"),
                );
            }
            let mut pod_sets = Vec::with_capacity(n_ps);
            for (pi, ps) in w.spec.pod_sets.iter().enumerate() {
                let base = format!("spec.podSets[{pi}]");
                // topology-aware scheduling is not modelled: say so for every request of it
                if ps.topology_request.is_some() {
                    self.warn(
                        "Workload",
                        &key,
                        format!("{base}.topologyRequest: topology-aware scheduling is not modelled; the PodSet is admitted by quota alone"),
                    );
                }
                if let Some(meta) = &ps.template.metadata {
                    for a in meta
                        .annotations
                        .keys()
                        .filter(|a| TOPOLOGY_ANNOTATIONS.contains(&a.as_str()))
                    {
                        self.warn(
                            "Workload",
                            &key,
                            format!("{base}.template.metadata.annotations[{a}]: topology-aware scheduling is not modelled; the PodSet is admitted by quota alone"),
                        );
                    }
                }
                if ps.count < 0 {
                    self.problem(
                        "Workload",
                        &key,
                        format!("{base}.count"),
                        "must be greater than or equal to 0",
                    );
                }
                if let Some(m) = ps.min_count
                    && (m < 1 || m > ps.count)
                {
                    self.problem(
                        "Workload",
                        &key,
                        format!("{base}.minCount"),
                        "minCount should be positive and less or equal to count",
                    );
                }
                let mut per_pod = Vec::new();
                match &per_pod_all[wi][pi] {
                    None => self.problem(
                        "Workload",
                        &key,
                        format!("{base}.template.spec"),
                        "resource requests overflow",
                    ),
                    Some(req) => {
                        for (r, q) in req {
                            if r.as_str() == "pods" {
                                self.problem(
                                    "Workload",
                                    &key,
                                    format!("{base}.template.spec.containers.resources"),
                                    "the key pods is reserved for internal kueue use",
                                );
                                continue;
                            }
                            if q.is_negative() {
                                self.problem(
                                    "Workload",
                                    &key,
                                    format!(
                                        "{base}.template.spec.containers.resources.requests[{r}]"
                                    ),
                                    "must be greater than or equal to 0",
                                );
                                continue;
                            }
                            let a = q.to_amount(r);
                            per_pod.push((rid(r.as_str()), a.0));
                        }
                    }
                }
                let spec = &ps.template.spec;
                // upstream `podSetsCountsAfterReclaim` (ReclaimablePods gate, on by default):
                // the pods a workload reports as reclaimable need no quota, whether it is
                // admitted or pending (kubernetes-sigs/kueue: pkg/workload/workload.go)
                let count = ps.count.max(0);
                let reclaimable = w
                    .status
                    .as_ref()
                    .and_then(|st| st.reclaimable_pods.iter().find(|r| r.name == ps.name))
                    .map_or(0, |r| r.count.clamp(0, count));
                pod_sets.push(PodSetInfo {
                    name: ps.name.clone(),
                    count: count - reclaimable,
                    min_count: ps.min_count,
                    per_pod,
                    node_selector: spec.node_selector.clone(),
                    tolerations: spec.tolerations.clone(),
                    affinity: parse_affinity(spec.affinity.as_ref()),
                });
            }
            // priority
            let class = w.spec.priority_class();
            let priority = w.spec.priority.unwrap_or_else(|| match class {
                Some((true, n)) => model
                    .workload_priority_classes
                    .get(n)
                    .map(|c| c.value)
                    .unwrap_or(0),
                Some((false, n)) => model.priority_classes.get(n).map(|c| c.value).unwrap_or(0),
                None => model
                    .priority_classes
                    .values()
                    .find(|c| c.global_default)
                    .map(|c| c.value)
                    .unwrap_or(0),
            });
            let priority_class = w
                .spec
                .pod_sets
                .iter()
                .find_map(|p| p.template.spec.priority_class_name.clone())
                .or_else(|| class.filter(|c| !c.0).map(|c| c.1.to_owned()));
            // queue
            let qname = w.spec.queue_name.clone().unwrap_or_default();
            let lq_key = format!("{ns}/{qname}");
            let queue = match model.local_queues.get(&lq_key) {
                None => QueueRef::LocalQueueMissing(qname),
                Some(lq)
                    if lq
                        .spec
                        .stop_policy
                        .as_ref()
                        .is_some_and(|p| *p != StopPolicy::None) =>
                {
                    QueueRef::LocalQueueStopped(qname)
                }
                Some(lq) => match cq_of(&lq.spec.cluster_queue) {
                    Some(c) => QueueRef::Cq(c),
                    None => QueueRef::ClusterQueueMissing(lq.spec.cluster_queue.clone()),
                },
            };
            // admission
            let mut admitted = None;
            if let Some(st) = &w.status
                && let Some(adm) = &st.admission
            {
                // upstream evicts admitted workloads of a HoldAndDrain LocalQueue or ClusterQueue
                let drain =
                    |p: Option<&StopPolicy>| p.is_some_and(|p| *p == StopPolicy::HoldAndDrain);
                // ... and deactivated ones (`spec.active: false`, evicted as Deactivated)
                let drained = !w.spec.active.unwrap_or(true)
                    || drain(
                        model
                            .local_queues
                            .get(&lq_key)
                            .and_then(|lq| lq.spec.stop_policy.as_ref()),
                    )
                    || drain(
                        model
                            .cluster_queues
                            .get(adm.cluster_queue.as_str())
                            .and_then(|cq| cq.spec.stop_policy.as_ref()),
                    );
                match cq_of(&adm.cluster_queue) {
                    None => self.warn(
                        "Workload",
                        &key,
                        format!("admitted to ClusterQueue {:?}, which does not exist; its usage is not counted", adm.cluster_queue),
                    ),
                    Some(c) => {
                        let mut u: BTreeMap<FrId, Amount> = BTreeMap::new();
                        let mut uses = BTreeSet::new();
                        let mut counts = Vec::new();
                        for (ai, psa) in adm.pod_set_assignments.iter().enumerate() {
                            let spec_ps = w.spec.pod_sets.iter().find(|p| p.name == psa.name);
                            let count = psa.count.or(spec_ps.map(|p| p.count)).unwrap_or(0).max(0);
                            counts.push(count);
                            let reclaimable = st
                                .reclaimable_pods
                                .iter()
                                .find(|r| r.name == psa.name)
                                .map(|r| r.count.clamp(0, count))
                                .unwrap_or(0);
                            for (r, f) in &psa.flavors {
                                let fr = fr_of(fid(f), rid(r.as_str()));
                                uses.insert(fr);
                            }
                            for (r, q) in &psa.resource_usage {
                                if q.is_negative() {
                                    self.problem("Workload", &key, format!("status.admission.podSetAssignments[{ai}].resourceUsage[{r}]"), "must be greater than or equal to 0");
                                    continue;
                                }
                                let Some(f) = psa.flavors.get(r) else { continue };
                                let fr = fr_of(fid(f), rid(r.as_str()));
                                let mut a = q.to_amount(r);
                                if reclaimable > 0 && count > 0 {
                                    a = Amount(a.0 / i64::from(count) * i64::from(count - reclaimable));
                                }
                                let e = u.entry(fr).or_insert(Amount::ZERO);
                                *e = e.saturating_add(a);
                            }
                        }
                        // upstream `quotaReservationTime`: without QuotaReserved=True, "now"
                        let time = match w.condition("QuotaReserved") {
                            Some(c) if c.is_true() => {
                                c.last_transition_time.unwrap_or(Timestamp::EPOCH)
                            }
                            _ => crate::preempt::now(),
                        };
                        let evicted = w.condition("Evicted").is_some_and(|c| c.is_true());
                        let node = cluster_queues[c as usize].node;
                        for (&fr, &a) in &u {
                            tree.add_usage(&mut usage, node, fr, a);
                        }
                        admitted = Some(AdmittedInfo {
                            cq: c,
                            usage: u.into_iter().collect(),
                            uses: uses.into_iter().collect(),
                            time,
                            evicted,
                            counts,
                            drained,
                        });
                    }
                }
            } else {
                match &queue {
                    QueueRef::LocalQueueMissing(q) => self.warn(
                        "Workload",
                        &key,
                        format!("LocalQueue {q:?} doesn't exist; the workload stays pending"),
                    ),
                    QueueRef::ClusterQueueMissing(q) => self.warn(
                        "Workload",
                        &key,
                        format!("ClusterQueue {q:?} doesn't exist; the workload stays pending"),
                    ),
                    _ => {}
                }
            }
            workloads.push(WorkloadInfo {
                key: key.clone(),
                namespace: ns,
                uid_raw: w.metadata.uid.clone().filter(|u| !u.is_empty()),
                job_uid: w
                    .metadata
                    .labels
                    .get("kueue.x-k8s.io/job-uid")
                    .cloned()
                    .filter(|u| !u.is_empty()),
                uid: w.metadata.uid.clone().unwrap_or(key),
                priority,
                priority_class,
                // upstream `GetQueueOrderTimestamp`: a workload evicted by the PodsReady timeout
                // (requeuing timestamp Eviction, the default) or by an admission check queues
                // by its eviction time, any other by its creation time
                created: w
                    .condition("Evicted")
                    .filter(|c| {
                        c.is_true()
                            && matches!(
                                c.reason.as_deref(),
                                Some("PodsReadyTimeout" | "AdmissionCheck")
                            )
                    })
                    .and_then(|c| c.last_transition_time)
                    .or(w.metadata.creation_timestamp)
                    .unwrap_or(Timestamp::EPOCH),
                active: w.spec.active.unwrap_or(true),
                pod_sets,
                queue,
                admitted,
            });
        }
        // over-admission
        for cq in &cluster_queues {
            for fr in 0..nfr as FrId {
                if tree.available_raw(&usage, cq.node, fr) < Amount::ZERO {
                    let (f, r) = frs[fr as usize];
                    self.warn(
                        "ClusterQueue",
                        &cq.name,
                        format!(
                            "admitted workloads exceed the quota for {} in flavor {}; they keep running",
                            resources[r as usize], flavors[f as usize].name
                        ),
                    );
                }
            }
        }
        // ---- namespaces and resource quotas
        let namespaces = model
            .namespaces
            .iter()
            .map(|(n, ns)| (n.clone(), ns.metadata.labels.clone()))
            .collect();
        let mut resource_quotas = Vec::new();
        for (key, rq) in &model.resource_quotas {
            let ns = rq
                .metadata
                .namespace
                .clone()
                .unwrap_or_else(|| "default".to_owned());
            let mut hard = Vec::new();
            for (k, q) in &rq.spec.hard {
                if k == "pods" {
                    hard.push((k.clone(), None, Amount(q.value().unwrap_or(i64::MAX))));
                } else if let Some(r) = rq_resource(k) {
                    let rn = ResourceName::new(r);
                    hard.push((k.clone(), Some(rid(r)), q.to_amount(&rn)));
                }
            }
            if rq.spec.hard.keys().any(|k| k.starts_with("limits.")) {
                self.warn(
                    "ResourceQuota",
                    key,
                    "limits.* caps are not enforced by the admission engine (requests only)",
                );
            }
            resource_quotas.push(RqInfo {
                name: rq.metadata.name.clone(),
                namespace: ns,
                hard,
                object: rq.clone(),
            });
        }

        if !self.problems.is_empty() {
            self.problems.sort();
            self.problems.dedup();
            return Err(Error {
                problems: self.problems,
            });
        }
        self.warnings.sort();
        self.warnings.dedup();
        let pods = resources
            .binary_search_by(|r| r.as_str().cmp("pods"))
            .ok()
            .map(|i| i as ResourceId);
        Ok(World {
            pods,
            resources,
            flavors,
            frs,
            fr_index,
            tree,
            cluster_queues,
            workloads,
            namespaces,
            resource_quotas,
            initial_usage: usage,
            warnings: self.warnings,
        })
    }
}

/// The resource a ResourceQuota `hard` key caps through requests (`requests.X`, or `cpu`,
/// `memory`, `ephemeral-storage` written bare).
fn rq_resource(key: &str) -> Option<&str> {
    if let Some(r) = key.strip_prefix("requests.") {
        return Some(r);
    }
    matches!(key, "cpu" | "memory" | "ephemeral-storage").then_some(key)
}

fn parse_affinity(v: Option<&serde_json::Value>) -> Vec<Vec<NodeRequirement>> {
    let Some(terms) = v
        .and_then(|a| a.get("nodeAffinity"))
        .and_then(|a| a.get("requiredDuringSchedulingIgnoredDuringExecution"))
        .and_then(|a| a.get("nodeSelectorTerms"))
        .and_then(|a| a.as_array())
    else {
        return Vec::new();
    };
    terms
        .iter()
        .map(|t| {
            t.get("matchExpressions")
                .and_then(|m| m.as_array())
                .map(|exprs| {
                    exprs
                        .iter()
                        .map(|e| NodeRequirement {
                            key: e
                                .get("key")
                                .and_then(|x| x.as_str())
                                .unwrap_or("")
                                .to_owned(),
                            operator: e
                                .get("operator")
                                .and_then(|x| x.as_str())
                                .unwrap_or("")
                                .to_owned(),
                            values: e
                                .get("values")
                                .and_then(|x| x.as_array())
                                .map(|vs| {
                                    vs.iter()
                                        .filter_map(|v| v.as_str().map(str::to_owned))
                                        .collect()
                                })
                                .unwrap_or_default(),
                        })
                        .collect()
                })
                .unwrap_or_default()
        })
        .collect()
}
