//! The world: every Kueue object of a [`Model`] resolved into dense tables (flavors, resources,
//! flavor-resources, the quota tree, ClusterQueues, workloads) plus the usage of admitted
//! workloads. Built once; the scheduler never clones it.

use std::collections::BTreeMap;

use gpuquota_model::meta::{LabelSelector, Taint, Toleration};
use gpuquota_model::{Amount, Model, ResourceName, Timestamp};

mod build;

use crate::error::{Error, Warning};
use crate::ids::Table;
pub use crate::ids::{CqId, FlavorId, ResourceId, WlId};
use crate::tree::{FrId, NodeId, QuotaForest, Usage};

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

impl NodeRequirement {
    /// Whether this requirement holds for a node's `labels` (the operators of Kubernetes'
    /// node selector requirements; `Gt`/`Lt` compare integers, an unknown operator never
    /// holds).
    ///
    /// # Complexity
    /// O(log labels + values).
    pub fn matches(&self, labels: &std::collections::BTreeMap<String, String>) -> bool {
        let r = self;
        let v = labels.get(&r.key);
        match r.operator.as_str() {
            "In" => v.is_some_and(|v| r.values.contains(v)),
            "NotIn" => v.is_none_or(|v| !r.values.contains(v)),
            "Exists" => v.is_some(),
            "DoesNotExist" => v.is_none(),
            "Gt" | "Lt" => {
                let (Some(v), Some(x)) = (
                    v.and_then(|v| v.parse::<i64>().ok()),
                    r.values.first().and_then(|x| x.parse::<i64>().ok()),
                ) else {
                    return false;
                };
                if r.operator == "Gt" { v > x } else { v < x }
            }
            _ => false,
        }
    }
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
    /// ResourceQuota claim keys one pod charges through the ResourceClaims its templates
    /// make (`count/resourceclaims.resource.k8s.io`,
    /// `<class>.deviceclass.resource.k8s.io/devices`), sorted by key.
    pub claims: Vec<(String, i64)>,
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
    /// Kueue refuses its resource claims (Dynamic Resource Allocation): the message it
    /// stays pending with (reason `Misconfigured`).
    pub dra_refused: Option<String>,
    /// The `kueue.x-k8s.io/admission-gated-by` annotation when set and not empty: the
    /// workload is not admissible while it is (kubernetes-sigs/kueue: pkg/workload/workload.go,
    /// `HasAdmissionGate`, `IsAdmissible`; the `AdmissionGatedBy` feature, beta and on by
    /// default since Kueue 0.19, pkg/features/kube_features.go). `None` when the
    /// Configuration's `featureGates` turns `AdmissionGatedBy` off.
    pub gated_by: Option<String>,
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
    /// The ResourceClaim keys (`<class>.deviceclass.resource.k8s.io/devices`,
    /// `count/resourceclaims.resource.k8s.io`) and their hard amounts.
    pub claims: Vec<(String, i64)>,
    /// Per claim key, what the namespace's ResourceClaim objects not owned by a pod (claims
    /// by name) already use.
    pub claims_used: Vec<i64>,
    /// The quota object (scope selector).
    pub object: gpuquota_model::core::ResourceQuota,
}

/// Every object resolved into dense tables.
#[derive(Debug, Clone)]
pub struct World {
    /// Resource names (sorted).
    pub resources: Table<ResourceId, ResourceName>,
    /// Flavors (sorted).
    pub flavors: Table<FlavorId, FlavorInfo>,
    /// Flavor-resources (sorted by flavor then resource name).
    pub frs: Table<FrId, (FlavorId, ResourceId)>,
    /// `fr_index[flavor * resources + resource]`: the pair's flavor-resource.
    fr_index: Vec<Option<FrId>>,
    /// The quota forest.
    pub tree: QuotaForest,
    /// ClusterQueues (sorted).
    pub cluster_queues: Table<CqId, CqInfo>,
    /// Workloads (sorted by key), finished ones excluded.
    pub workloads: Table<WlId, WorkloadInfo>,
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
    /// The Configuration's feature gates (upstream defaults without one).
    pub feature_gates: crate::config::FeatureGates,
}

impl World {
    /// The flavor-resource id of (flavor, resource), if the pair has any quota or usage.
    pub fn fr(&self, f: FlavorId, r: ResourceId) -> Option<FrId> {
        self.fr_index[f.index() * self.resources.len() + r.index()]
    }

    /// Resource id of a name.
    pub fn resource_id(&self, name: &str) -> Option<ResourceId> {
        self.resources
            .binary_search_by(|r| r.as_str().cmp(name))
            .ok()
            .map(ResourceId::new)
    }

    /// Flavor id of a name.
    pub fn flavor_id(&self, name: &str) -> Option<FlavorId> {
        self.flavors
            .binary_search_by(|f| f.name.as_str().cmp(name))
            .ok()
            .map(FlavorId::new)
    }

    /// ClusterQueue id of a name.
    pub fn cq_id(&self, name: &str) -> Option<CqId> {
        self.cluster_queues
            .binary_search_by(|c| c.name.as_str().cmp(name))
            .ok()
            .map(CqId::new)
    }

    /// Workload id of a key.
    pub fn workload_id(&self, key: &str) -> Option<WlId> {
        self.workloads
            .binary_search_by(|w| w.key.as_str().cmp(key))
            .ok()
            .map(WlId::new)
    }

    /// The name of a flavor-resource's resource.
    pub fn fr_resource(&self, fr: FrId) -> &ResourceName {
        &self.resources[self.frs[fr].1]
    }

    /// The name of a flavor-resource's flavor.
    pub fn fr_flavor(&self, fr: FrId) -> &str {
        &self.flavors[self.frs[fr].0].name
    }

    /// Builds the world from an imported model, after the workspace's one validator.
    ///
    /// The objects of the kinds this engine reads ([`crate::KINDS`]) are validated first with
    /// [`gpuquota_model::validate::diagnostics_of`], the check `gpuquota validate` runs: any
    /// error there is returned as it is (same code, field path and wording), so this engine
    /// refuses exactly what `validate` refuses among its objects, including what Kueue's
    /// API server refuses but its scheduler would run (a `borrowingLimit` without a cohort)
    /// and cohort cycles (see the crate docs). The engine's own checks
    /// ([`World::build_unvalidated`]) then run on valid input.
    ///
    /// # Errors
    /// [`Error`] listing every problem (nothing is built).
    ///
    /// # Complexity
    /// O(objects × log objects + nodes × frs).
    pub(crate) fn build(model: &Model) -> Result<World, Error> {
        let problems = build::validation(model);
        if !problems.is_empty() {
            return Err(Error { problems });
        }
        build::Builder::default().build(model)
    }

    /// Builds the world from objects as Kueue's scheduler takes them when no API server
    /// stands in between (upstream's scheduler unit tests create them so): only the checks
    /// this engine needs to run are made, and what Kueue's cache tolerates is a [`Warning`]
    /// — upstream's test names (`q_borrowing`), a `borrowingLimit` without a cohort (ignored),
    /// a `lendingLimit` above the nominal quota, duplicate objects (the last one is used), a
    /// cohort cycle (every ClusterQueue of the tree is inactive, reason `CohortCycle`, as
    /// `kubernetes-sigs/kueue: pkg/cache/scheduler/snapshot.go` leaves such cohorts out).
    ///
    /// # Errors
    /// [`Error`] listing every malformed object the engine cannot run (nothing is built).
    ///
    /// # Complexity
    /// O(objects × log objects + nodes × frs).
    pub(crate) fn build_unvalidated(model: &Model) -> Result<World, Error> {
        build::Builder::default().build(model)
    }
}
