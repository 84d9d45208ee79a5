//! Kueue objects (`kueue.x-k8s.io` `v1beta1` and `v1beta2`), field for field.
//!
//! Field names follow v1beta2; the v1beta1 spellings are accepted as aliases on import
//! (`cohort` → `cohortName`, Cohort `parent` → `parentName`, `priorityClassName` +
//! `priorityClassSource` → `priorityClassRef`). Enum-valued fields keep unknown spellings so that
//! [`mod@crate::validate`] can report them with their field path.

use std::collections::BTreeMap;

use crate::core::PodSpec;
use crate::meta::{Condition, LabelSelector, ObjectMeta, Taint, Toleration, string_enum};
use crate::quantity::Quantity;
use crate::resource::ResourceName;

string_enum! {
    /// `spec.queueingStrategy` of a ClusterQueue.
    QueueingStrategy {
        /// Only the head may be admitted; an inadmissible head blocks the queue.
        StrictFifo = "StrictFIFO",
        /// An inadmissible head is set aside and the next workload is tried (the default).
        BestEffortFifo = "BestEffortFIFO",
    }
}

string_enum! {
    /// `stopPolicy` of a ClusterQueue or LocalQueue.
    StopPolicy {
        /// Not stopped (the default).
        None = "None",
        /// No new admissions; admitted workloads keep running.
        Hold = "Hold",
        /// No new admissions and admitted workloads are evicted.
        HoldAndDrain = "HoldAndDrain",
    }
}

string_enum! {
    /// `preemption.withinClusterQueue`.
    WithinClusterQueue {
        /// Never preempt inside the ClusterQueue (the default).
        Never = "Never",
        /// Preempt lower-priority workloads.
        LowerPriority = "LowerPriority",
        /// Preempt lower-priority workloads, and equal-priority ones admitted later.
        LowerOrNewerEqualPriority = "LowerOrNewerEqualPriority",
    }
}

string_enum! {
    /// `preemption.reclaimWithinCohort`.
    ReclaimWithinCohort {
        /// Never reclaim (the default).
        Never = "Never",
        /// Reclaim from lower-priority borrowers.
        LowerPriority = "LowerPriority",
        /// Reclaim from any borrower.
        Any = "Any",
    }
}

string_enum! {
    /// `preemption.borrowWithinCohort.policy`.
    BorrowWithinCohortPolicy {
        /// Never preempt while borrowing (the default).
        Never = "Never",
        /// Preempt lower-priority workloads while borrowing.
        LowerPriority = "LowerPriority",
    }
}

string_enum! {
    /// `flavorFungibility.whenCanBorrow` / `whenCanPreempt`.
    FungibilityPolicy {
        /// Stop at the first flavor where the workload can borrow / preempt.
        MayStopSearch = "MayStopSearch" | "Borrow" | "Preempt",
        /// Try the next flavor first.
        TryNextFlavor = "TryNextFlavor",
    }
}

string_enum! {
    /// `flavorFungibility.preference`.
    FlavorFungibilityPreference {
        /// Prefer a flavor where the workload borrows over one where it preempts.
        BorrowingOverPreemption = "BorrowingOverPreemption",
        /// Prefer a flavor where the workload preempts over one where it borrows.
        PreemptionOverBorrowing = "PreemptionOverBorrowing",
    }
}

string_enum! {
    /// `admissionScope.admissionMode` of a ClusterQueue.
    AdmissionMode {
        /// Order workloads in the ClusterQueue by their LocalQueue's decayed usage.
        UsageBasedAdmissionFairSharing = "UsageBasedAdmissionFairSharing",
        /// No admission fair sharing.
        NoAdmissionFairSharing = "NoAdmissionFairSharing",
    }
}

/// `spec` of a ResourceFlavor.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ResourceFlavorSpec {
    /// Labels a PodSet's node selector must agree with to get this flavor.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub node_labels: BTreeMap<String, String>,
    /// Taints a PodSet must tolerate (`NoSchedule`/`NoExecute`).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Vec::is_empty")
    )]
    pub node_taints: Vec<Taint>,
    /// Tolerations added to admitted pods; they also neutralise matching `nodeTaints`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Vec::is_empty")
    )]
    pub tolerations: Vec<Toleration>,
    /// Topology-aware scheduling (kept, not interpreted).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub topology_name: Option<String>,
}

/// A ResourceFlavor: one kind of capacity (a card type, a node pool).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ResourceFlavor {
    /// Metadata (cluster-scoped).
    #[cfg_attr(feature = "serde", serde(default))]
    pub metadata: ObjectMeta,
    /// Spec.
    #[cfg_attr(feature = "serde", serde(default))]
    pub spec: ResourceFlavorSpec,
}

/// One resource's quota in one flavor.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ResourceQuota {
    /// Resource name; must equal the group's `coveredResources` entry at the same index.
    #[cfg_attr(feature = "serde", serde(default))]
    pub name: ResourceName,
    /// Quota owned (required).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub nominal_quota: Option<Quantity>,
    /// Most that may be borrowed above nominal; unset = unlimited.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub borrowing_limit: Option<Quantity>,
    /// Most of the unused nominal quota others may borrow; unset = all of it.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub lending_limit: Option<Quantity>,
}

impl Default for ResourceName {
    fn default() -> Self {
        ResourceName::new("")
    }
}

/// A flavor's quotas inside a resource group.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct FlavorQuotas {
    /// The ResourceFlavor's name.
    #[cfg_attr(feature = "serde", serde(default))]
    pub name: String,
    /// One entry per covered resource, in the same order.
    #[cfg_attr(feature = "serde", serde(default))]
    pub resources: Vec<ResourceQuota>,
}

/// A resource group: resources that always get the same flavor.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ResourceGroup {
    /// The resources of the group.
    #[cfg_attr(feature = "serde", serde(default))]
    pub covered_resources: Vec<ResourceName>,
    /// Flavors in preference order.
    #[cfg_attr(feature = "serde", serde(default))]
    pub flavors: Vec<FlavorQuotas>,
}

/// `fairSharing` of a ClusterQueue, Cohort or LocalQueue.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct FairSharing {
    /// Weight; default 1 when `fairSharing` is given. 0 means an infinite share when borrowing.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub weight: Option<Quantity>,
}

/// `preemption.borrowWithinCohort`.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct BorrowWithinCohort {
    /// `Never` (default) or `LowerPriority`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub policy: Option<BorrowWithinCohortPolicy>,
    /// Only candidates with priority ≤ this may be preempted while the preemptor borrows.
    #[cfg_attr(
        feature = "serde",
        serde(
            deserialize_with = "crate::strict::opt_int",
            default,
            skip_serializing_if = "Option::is_none"
        )
    )]
    pub max_priority_threshold: Option<i32>,
}

/// `spec.preemption` of a ClusterQueue.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ClusterQueuePreemption {
    /// Default `Never`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub within_cluster_queue: Option<WithinClusterQueue>,
    /// Default `Never`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub reclaim_within_cohort: Option<ReclaimWithinCohort>,
    /// Default policy `Never`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub borrow_within_cohort: Option<BorrowWithinCohort>,
}

/// `spec.flavorFungibility` of a ClusterQueue.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct FlavorFungibility {
    /// Default `MayStopSearch`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub when_can_borrow: Option<FungibilityPolicy>,
    /// Default `TryNextFlavor`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub when_can_preempt: Option<FungibilityPolicy>,
    /// Only when both `when*` are `TryNextFlavor`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub preference: Option<FlavorFungibilityPreference>,
}

/// One admission-check rule.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct AdmissionCheckStrategyRule {
    /// The AdmissionCheck's name.
    #[cfg_attr(feature = "serde", serde(default))]
    pub name: String,
    /// Flavors the check applies to (empty: all).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Vec::is_empty")
    )]
    pub on_flavors: Vec<String>,
}

/// `spec.admissionChecksStrategy`.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct AdmissionChecksStrategy {
    /// Rules.
    #[cfg_attr(feature = "serde", serde(default))]
    pub admission_checks: Vec<AdmissionCheckStrategyRule>,
}

/// `spec.admissionScope`.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct AdmissionScope {
    /// The admission mode.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub admission_mode: Option<AdmissionMode>,
}

/// `spec` of a ClusterQueue.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ClusterQueueSpec {
    /// Resource groups (≤ 16).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Vec::is_empty")
    )]
    pub resource_groups: Vec<ResourceGroup>,
    /// The cohort this queue belongs to (v1beta1: `cohort`).
    #[cfg_attr(
        feature = "serde",
        serde(default, alias = "cohort", skip_serializing_if = "Option::is_none")
    )]
    pub cohort_name: Option<String>,
    /// Default `BestEffortFIFO`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub queueing_strategy: Option<QueueingStrategy>,
    /// Namespaces whose workloads may use this queue; unset = none, `{}` = all.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub namespace_selector: Option<LabelSelector>,
    /// Flavor fungibility.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub flavor_fungibility: Option<FlavorFungibility>,
    /// Preemption policies.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub preemption: Option<ClusterQueuePreemption>,
    /// v1beta1 list of admission checks.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Vec::is_empty")
    )]
    pub admission_checks: Vec<String>,
    /// Admission checks per flavor.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub admission_checks_strategy: Option<AdmissionChecksStrategy>,
    /// Default `None`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub stop_policy: Option<StopPolicy>,
    /// Fair-sharing weight.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub fair_sharing: Option<FairSharing>,
    /// Admission fair sharing scope.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub admission_scope: Option<AdmissionScope>,
    /// Concurrent admission (alpha upstream; kept, not interpreted).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub concurrent_admission_policy: Option<crate::opaque::Opaque>,
}

impl ClusterQueueSpec {
    /// `queueingStrategy` with its default.
    pub fn queueing_strategy(&self) -> QueueingStrategy {
        self.queueing_strategy
            .clone()
            .unwrap_or(QueueingStrategy::BestEffortFifo)
    }

    /// `stopPolicy` with its default.
    pub fn stop_policy(&self) -> StopPolicy {
        self.stop_policy.clone().unwrap_or(StopPolicy::None)
    }

    /// `preemption.withinClusterQueue` with its default.
    pub fn within_cluster_queue(&self) -> WithinClusterQueue {
        self.preemption
            .as_ref()
            .and_then(|p| p.within_cluster_queue.clone())
            .unwrap_or(WithinClusterQueue::Never)
    }

    /// `preemption.reclaimWithinCohort` with its default.
    pub fn reclaim_within_cohort(&self) -> ReclaimWithinCohort {
        self.preemption
            .as_ref()
            .and_then(|p| p.reclaim_within_cohort.clone())
            .unwrap_or(ReclaimWithinCohort::Never)
    }

    /// `preemption.borrowWithinCohort` policy and threshold with defaults.
    pub fn borrow_within_cohort(&self) -> (BorrowWithinCohortPolicy, Option<i32>) {
        match self
            .preemption
            .as_ref()
            .and_then(|p| p.borrow_within_cohort.as_ref())
        {
            Some(b) => (
                b.policy.clone().unwrap_or(BorrowWithinCohortPolicy::Never),
                b.max_priority_threshold,
            ),
            None => (BorrowWithinCohortPolicy::Never, None),
        }
    }

    /// `flavorFungibility` with defaults: (whenCanBorrow, whenCanPreempt, preference).
    pub fn flavor_fungibility(
        &self,
    ) -> (
        FungibilityPolicy,
        FungibilityPolicy,
        Option<FlavorFungibilityPreference>,
    ) {
        let f = self.flavor_fungibility.clone().unwrap_or_default();
        (
            f.when_can_borrow
                .unwrap_or(FungibilityPolicy::MayStopSearch),
            f.when_can_preempt
                .unwrap_or(FungibilityPolicy::TryNextFlavor),
            f.preference,
        )
    }

    /// Every flavor name referenced by the resource groups, in order.
    pub fn flavor_names(&self) -> impl Iterator<Item = &str> {
        self.resource_groups
            .iter()
            .flat_map(|g| g.flavors.iter().map(|f| f.name.as_str()))
    }
}

/// A ClusterQueue: one department's quota.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ClusterQueue {
    /// Metadata (cluster-scoped).
    #[cfg_attr(feature = "serde", serde(default))]
    pub metadata: ObjectMeta,
    /// Spec.
    #[cfg_attr(feature = "serde", serde(default))]
    pub spec: ClusterQueueSpec,
    /// Status: kept verbatim (the engines recompute it).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub status: Option<crate::opaque::Opaque>,
}

/// `spec` of a Cohort.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct CohortSpec {
    /// Parent cohort (v1alpha1: `parent`); unset = a root.
    #[cfg_attr(
        feature = "serde",
        serde(default, alias = "parent", skip_serializing_if = "Option::is_none")
    )]
    pub parent_name: Option<String>,
    /// The cohort's own quota, shared by its subtree.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Vec::is_empty")
    )]
    pub resource_groups: Vec<ResourceGroup>,
    /// Weight against sibling cohorts.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub fair_sharing: Option<FairSharing>,
}

/// A Cohort: an inner node of the quota tree.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct Cohort {
    /// Metadata (cluster-scoped).
    #[cfg_attr(feature = "serde", serde(default))]
    pub metadata: ObjectMeta,
    /// Spec.
    #[cfg_attr(feature = "serde", serde(default))]
    pub spec: CohortSpec,
    /// Status: kept verbatim.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub status: Option<crate::opaque::Opaque>,
}

/// `spec` of a LocalQueue.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct LocalQueueSpec {
    /// The ClusterQueue this namespace queue feeds.
    #[cfg_attr(feature = "serde", serde(default))]
    pub cluster_queue: String,
    /// Default `None`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub stop_policy: Option<StopPolicy>,
    /// Weight for admission fair sharing.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub fair_sharing: Option<FairSharing>,
}

/// A LocalQueue: a namespace's entry to a ClusterQueue.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct LocalQueue {
    /// Metadata (namespaced).
    #[cfg_attr(feature = "serde", serde(default))]
    pub metadata: ObjectMeta,
    /// Spec.
    #[cfg_attr(feature = "serde", serde(default))]
    pub spec: LocalQueueSpec,
    /// Status (admission fair sharing usage lives here): kept verbatim.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub status: Option<crate::opaque::Opaque>,
}

/// A WorkloadPriorityClass.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct WorkloadPriorityClass {
    /// Metadata (cluster-scoped).
    #[cfg_attr(feature = "serde", serde(default))]
    pub metadata: ObjectMeta,
    /// Priority value.
    #[cfg_attr(
        feature = "serde",
        serde(deserialize_with = "crate::strict::int", default)
    )]
    pub value: i32,
    /// Description (≤ 2048 characters).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub description: Option<String>,
}

/// The pod template of a PodSet.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct PodTemplateSpec {
    /// Template metadata (boxed: most templates have none, and a pod set is stored for
    /// every Workload).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub metadata: Option<Box<ObjectMeta>>,
    /// Pod spec.
    #[cfg_attr(feature = "serde", serde(default))]
    pub spec: PodSpec,
}

/// A PodSet: `count` identical pods.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct PodSet {
    /// Name (default `main`).
    #[cfg_attr(feature = "serde", serde(default = "default_pod_set_name"))]
    pub name: String,
    /// Pod template.
    #[cfg_attr(feature = "serde", serde(default))]
    pub template: PodTemplateSpec,
    /// Number of pods (default 1).
    #[cfg_attr(
        feature = "serde",
        serde(deserialize_with = "crate::strict::int", default = "default_count")
    )]
    pub count: i32,
    /// Smallest acceptable count for partial admission.
    #[cfg_attr(
        feature = "serde",
        serde(
            deserialize_with = "crate::strict::opt_int",
            default,
            skip_serializing_if = "Option::is_none"
        )
    )]
    pub min_count: Option<i32>,
    /// Topology request (kept, not interpreted).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub topology_request: Option<crate::opaque::Opaque>,
}

fn default_pod_set_name() -> String {
    "main".to_owned()
}

#[cfg_attr(not(feature = "serde"), allow(dead_code))]
fn default_count() -> i32 {
    1
}

impl Default for PodSet {
    fn default() -> Self {
        PodSet {
            name: default_pod_set_name(),
            template: PodTemplateSpec::default(),
            count: 1,
            min_count: None,
            topology_request: None,
        }
    }
}

/// `spec.priorityClassRef` (v1beta2).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct PriorityClassRef {
    /// `kueue.x-k8s.io` or `scheduling.k8s.io`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub group: String,
    /// `WorkloadPriorityClass` or `PriorityClass`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub kind: String,
    /// The class name.
    #[cfg_attr(feature = "serde", serde(default))]
    pub name: String,
}

/// `spec` of a Workload.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct WorkloadSpec {
    /// 1–18 pod sets.
    #[cfg_attr(feature = "serde", serde(default))]
    pub pod_sets: Vec<PodSet>,
    /// LocalQueue name.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub queue_name: Option<String>,
    /// v1beta2 priority class reference.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub priority_class_ref: Option<PriorityClassRef>,
    /// v1beta1 priority class name.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub priority_class_name: Option<String>,
    /// v1beta1 priority class source (`kueue.x-k8s.io/workloadpriorityclass` or
    /// `scheduling.k8s.io/priorityclass`).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub priority_class_source: Option<String>,
    /// Resolved priority (default 0).
    #[cfg_attr(
        feature = "serde",
        serde(
            deserialize_with = "crate::strict::opt_int",
            default,
            skip_serializing_if = "Option::is_none"
        )
    )]
    pub priority: Option<i32>,
    /// `false` deactivates the workload.
    #[cfg_attr(
        feature = "serde",
        serde(
            deserialize_with = "crate::strict::opt_bool",
            default,
            skip_serializing_if = "Option::is_none"
        )
    )]
    pub active: Option<bool>,
    /// Maximum execution time.
    #[cfg_attr(
        feature = "serde",
        serde(
            deserialize_with = "crate::strict::opt_int",
            default,
            skip_serializing_if = "Option::is_none"
        )
    )]
    pub maximum_execution_time_seconds: Option<i32>,
    /// Preemption gates (kept).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub preemption_gates: Option<crate::opaque::Opaque>,
}

impl WorkloadSpec {
    /// The referenced priority class as (is a WorkloadPriorityClass, name), from either API
    /// version's fields.
    pub fn priority_class(&self) -> Option<(bool, &str)> {
        if let Some(r) = &self.priority_class_ref {
            return Some((
                r.group != "scheduling.k8s.io" && r.kind != "PriorityClass",
                &r.name,
            ));
        }
        self.priority_class_name.as_deref().map(|n| {
            let wpc = self
                .priority_class_source
                .as_deref()
                .is_some_and(|s| s.eq_ignore_ascii_case("kueue.x-k8s.io/workloadpriorityclass"));
            (wpc, n)
        })
    }
}

/// One PodSet's assignment in `status.admission`.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct PodSetAssignment {
    /// PodSet name.
    #[cfg_attr(feature = "serde", serde(default))]
    pub name: String,
    /// Flavor per resource.
    #[cfg_attr(feature = "serde", serde(default))]
    pub flavors: BTreeMap<ResourceName, String>,
    /// Total usage of the pod set (all pods).
    #[cfg_attr(feature = "serde", serde(default))]
    pub resource_usage: BTreeMap<ResourceName, Quantity>,
    /// Admitted pod count (after partial admission).
    #[cfg_attr(
        feature = "serde",
        serde(
            deserialize_with = "crate::strict::opt_int",
            default,
            skip_serializing_if = "Option::is_none"
        )
    )]
    pub count: Option<i32>,
    /// Topology assignment (kept).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub topology_assignment: Option<crate::opaque::Opaque>,
}

/// `status.admission` of a Workload.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct Admission {
    /// The ClusterQueue that reserved quota.
    #[cfg_attr(feature = "serde", serde(default))]
    pub cluster_queue: String,
    /// Per pod set.
    #[cfg_attr(feature = "serde", serde(default))]
    pub pod_set_assignments: Vec<PodSetAssignment>,
}

/// `status.reclaimablePods[]`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ReclaimablePod {
    /// PodSet name.
    #[cfg_attr(feature = "serde", serde(default))]
    pub name: String,
    /// Pods of the set that finished and no longer need quota.
    #[cfg_attr(
        feature = "serde",
        serde(deserialize_with = "crate::strict::int", default)
    )]
    pub count: i32,
}

/// `status` of a Workload.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct WorkloadStatus {
    /// Set when quota is reserved.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub admission: Option<Admission>,
    /// Conditions (`QuotaReserved`, `Admitted`, `Evicted`, `Finished`, …).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Vec::is_empty")
    )]
    pub conditions: Vec<Condition>,
    /// Finished pods per pod set.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Vec::is_empty")
    )]
    pub reclaimable_pods: Vec<ReclaimablePod>,
    /// `requeueState`, `admissionChecks`, `resourceRequests`, …: kept verbatim.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: BTreeMap<String, crate::opaque::Opaque>,
}

/// A Workload: the unit Kueue admits.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct Workload {
    /// Metadata (namespaced; `creationTimestamp` orders the queue).
    #[cfg_attr(feature = "serde", serde(default))]
    pub metadata: ObjectMeta,
    /// Spec.
    #[cfg_attr(feature = "serde", serde(default))]
    pub spec: WorkloadSpec,
    /// Status (boxed: a pending Workload has none, and the model stores every Workload
    /// inline in its map).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub status: Option<Box<WorkloadStatus>>,
}

impl Workload {
    /// `namespace/name`.
    pub fn key(&self) -> String {
        format!(
            "{}/{}",
            self.metadata.namespace.as_deref().unwrap_or("default"),
            self.metadata.name
        )
    }

    /// The condition of type `t`, if present.
    pub fn condition(&self, t: &str) -> Option<&Condition> {
        self.status
            .as_ref()
            .and_then(|s| s.conditions.iter().find(|c| c.type_ == t))
    }

    /// True when `status.admission` is set (quota reserved).
    pub fn is_admitted(&self) -> bool {
        self.status.as_ref().is_some_and(|s| s.admission.is_some())
    }

    /// True when the workload has finished (condition `Finished=True`).
    pub fn is_finished(&self) -> bool {
        self.condition("Finished").is_some_and(Condition::is_true)
    }
}

/// `fairSharing` of Kueue's Configuration.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct FairSharingConfig {
    /// v1beta1 switch; v1beta2 enables fair sharing by the stanza's presence.
    #[cfg_attr(
        feature = "serde",
        serde(
            deserialize_with = "crate::strict::opt_bool",
            default,
            skip_serializing_if = "Option::is_none"
        )
    )]
    pub enable: Option<bool>,
    /// `LessThanOrEqualToFinalShare`, `LessThanInitialShare`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Vec::is_empty")
    )]
    pub preemption_strategies: Vec<String>,
}

/// `admissionFairSharing` of Kueue's Configuration.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct AdmissionFairSharingConfig {
    /// Half-life of the decayed usage (Go duration, e.g. `10m`).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub usage_half_life_time: Option<String>,
    /// Sampling interval (Go duration, default `5m`).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub usage_sampling_interval: Option<String>,
    /// Weight per resource (default 1).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub resource_weights: BTreeMap<ResourceName, Quantity>,
}

/// `waitForPodsReady` of Kueue's Configuration (kubernetes-sigs/kueue
/// apis/config/v1beta1/configuration_types.go); unset fields take upstream's defaults
/// (`timeout` 5m, `blockAdmission` as `enable`, requeuing timestamp `Eviction`, backoff base
/// 60 s and maximum 3600 s, no backoff limit).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct WaitForPodsReady {
    /// `enable` (v1beta1; v1beta2 enables by the stanza's presence).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub enable: Option<bool>,
    /// `timeout` (Go duration, default `5m`): from admission to PodsReady.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub timeout: Option<String>,
    /// `blockAdmission` (default: on when enabled): no admission while an admitted workload
    /// is not ready.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub block_admission: Option<bool>,
    /// `recoveryTimeout` (Go duration): for a workload whose pods were ready and lost
    /// readiness.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub recovery_timeout: Option<String>,
    /// `requeuingStrategy`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub requeuing_strategy: Option<RequeuingStrategy>,
}

/// `waitForPodsReady.requeuingStrategy`.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct RequeuingStrategy {
    /// `timestamp`: `Eviction` (default) or `Creation`, the time a requeued workload queues by.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub timestamp: Option<String>,
    /// `backoffLimitCount`: timeouts before deactivation (unset: requeued without end).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub backoff_limit_count: Option<i64>,
    /// `backoffBaseSeconds` (default 60).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub backoff_base_seconds: Option<i64>,
    /// `backoffMaxSeconds` (default 3600).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub backoff_max_seconds: Option<i64>,
}

/// Kueue's `Configuration` (`config.kueue.x-k8s.io`): the knobs that change decisions.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct Configuration {
    /// `config.kueue.x-k8s.io/v1beta1` or `…/v1beta2` (set by the importer).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "String::is_empty")
    )]
    pub api_version: String,
    /// Metadata, if given.
    #[cfg_attr(feature = "serde", serde(default))]
    pub metadata: ObjectMeta,
    /// Fair sharing; enabled when present (and, in v1beta1, `enable: true`).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub fair_sharing: Option<FairSharingConfig>,
    /// Admission fair sharing.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub admission_fair_sharing: Option<AdmissionFairSharingConfig>,
    /// `waitForPodsReady`: the PodsReady timeout, admission blocking and requeuing backoff.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub wait_for_pods_ready: Option<WaitForPodsReady>,
    /// `resources.excludeResourcePrefixes`, `transformations` (kept).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub resources: Option<crate::opaque::Opaque>,
    /// Every other configuration field (controller, webhook, integrations, …): kept verbatim.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: BTreeMap<String, crate::opaque::Opaque>,
}

impl Configuration {
    /// True when `waitForPodsReady` is on: v1beta1 by `enable: true`, v1beta2 by the
    /// stanza's presence (an explicit `enable` is honoured in both).
    pub fn wait_for_pods_ready_enabled(&self) -> bool {
        let v1beta1 = self.api_version.ends_with("/v1beta1");
        self.wait_for_pods_ready
            .as_ref()
            .is_some_and(|w| w.enable.unwrap_or(!v1beta1))
    }

    /// True when fair sharing is on: v1beta1 by `enable: true`, v1beta2 by the stanza's
    /// presence (an explicit `enable: false` is honoured in both).
    pub fn fair_sharing_enabled(&self) -> bool {
        let v1beta1 = self.api_version.ends_with("/v1beta1");
        self.fair_sharing
            .as_ref()
            .is_some_and(|f| f.enable.unwrap_or(!v1beta1))
    }
}
