//! The Configuration's `featureGates`, read once when the world is built.
//!
//! Every gate of Kueue's gate list (kubernetes-sigs/kueue: pkg/features/kube_features.go,
//! defaults of Kueue 0.20) is in [`UPSTREAM_GATES`], in one of three groups:
//!
//! * **Modelled** ([`GateKind::Modelled`]): the gate changes what the scheduler decides and the
//!   engine honours both of its values (a field of [`FeatureGates`]):
//!   `AdmissionFairSharing` (off: a Configuration's `admissionFairSharing` is not used),
//!   `AdmissionGatedBy` (off: the `kueue.x-k8s.io/admission-gated-by` annotation does not
//!   keep a Workload pending), `ElasticJobsViaWorkloadSlices` (read by the job importer),
//!   `FairSharingPreemptWithinNominal` (off: a fair-sharing preemptor within its nominal quota
//!   no longer takes every candidate of other queues: the strategies decide for all of them),
//!   `FairSharingPrioritizeNonBorrowing` (off: the fair-sharing tournament no longer puts a
//!   head whose subtree does not borrow first), `FlavorFungibilityPreserveScanProgress` (off:
//!   a flavor scan restarts whenever the ClusterQueue's generation moved on, however recent,
//!   and a skipped entry forgets its progress), `PartialAdmission` (off: `minCount` is not
//!   used to admit fewer pods), `PrioritizePreemptorWorkloads` (on: a head waiting for its
//!   preemptions is ordered first in the cycle, in both iterators, and reserves its capacity
//!   when it finds no candidates, as a ClusterQueue that cannot always reclaim does),
//!   `PrioritySortingWithinCohort` (off: entries are not ordered by priority, and a Workload
//!   preempted with reason `InCohortReclaimWhileBorrowing` queues by its preemption time
//!   plus one millisecond), `QuotaCheckStrategy` (off: `resources.quotaCheckStrategy` is not
//!   read, so `IgnoreUndeclared` is not warned about), `ReclaimablePods` (off:
//!   `status.reclaimablePods` does not lower a Workload's counts),
//!   `RecomputeAssignmentUponPreemptionTargetsOverlap` (off: an entry whose targets overlap
//!   an earlier entry's is skipped without computing its assignment again).
//! * **Accepted silently** ([`GateKind::NoDecisionEffect`]): metrics, observability and
//!   status reporting, the visibility API, MultiKueue (not simulated), job integrations and
//!   the importer's naming, webhooks' validation, controller plumbing, and the caching of
//!   topology-aware scheduling.
//! * **Warned** ([`GateKind::NotModelled`]): the gate changes decisions but the engine does
//!   not model it (topology-aware scheduling and its placement gates, `FlavorFungibility`,
//!   Dynamic Resource Allocation's gates, `SchedulingEquivalenceHashing`, `ConcurrentAdmission`,
//!   `PriorityBoost`, ...): whatever value it is given, a warning names
//!   `featureGates.<name>` and the run is as with upstream's default.
//!
//! A name not in the list is a warning naming it as unknown; a value that is not a boolean
//! is an error naming the field.

/// How the engine treats an upstream feature gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateKind {
    /// Changes decisions; both values are honoured.
    Modelled,
    /// Does not change what the scheduler decides; accepted without a warning.
    NoDecisionEffect,
    /// Changes decisions and is not modelled; a warning names it.
    NotModelled,
}

/// One upstream feature gate: name, upstream default (Kueue 0.20), how the engine treats it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GateInfo {
    /// The gate's name as written in `featureGates`.
    pub name: &'static str,
    /// Its default in upstream's gate list.
    pub default: bool,
    /// How the engine treats it.
    pub kind: GateKind,
}

const fn g(name: &'static str, default: bool, kind: GateKind) -> GateInfo {
    GateInfo {
        name,
        default,
        kind,
    }
}

use GateKind::{Modelled as M, NoDecisionEffect as S, NotModelled as W};

/// Every gate of kubernetes-sigs/kueue pkg/features/kube_features.go, sorted by name.
pub const UPSTREAM_GATES: &[GateInfo] = &[
    g("AdmissionFairSharing", true, M),
    g("AdmissionGatedBy", true, M),
    g("AssignQueueLabelsForPods", true, S),
    g("CleanupProvisioningRequestsOnEviction", true, S),
    g("ConcurrentAdmission", false, W),
    g("CustomMetricLabels", false, S),
    g("DeferRayServiceFinalizationForRedisCleanup", true, S),
    g("DisableWaitForPodsReady", false, W),
    g("ElasticJobsViaWorkloadSlices", true, M),
    g("ElasticJobsViaWorkloadSlicesWithTAS", false, W),
    g("FailureRecoveryPolicy", false, S),
    g("FairSharingPreemptWithinNominal", true, M),
    g("FairSharingPrioritizeNonBorrowing", true, M),
    g("FastQuotaReleaseInPodIntegration", false, W),
    g("FinishOrphanedWorkloads", true, S),
    g("FlavorFungibility", true, W),
    g("FlavorFungibilityPreserveScanProgress", true, M),
    g("KueueDRAIntegration", true, W),
    g("KueueDRAIntegrationConsumableCapacity", false, W),
    g("KueueDRAIntegrationExtendedResource", true, W),
    g("KueueDRAIntegrationPartitionableDevices", true, W),
    g("KueueDRARejectWorkloadsWhenDRADisabled", true, W),
    g("LWSImmutableGroupSize", true, S),
    g("LocalQueueMetrics", true, S),
    g("ManagedJobsNamespaceSelectorAlwaysRespected", true, S),
    g("MetricForWorkloadCreationLatency", true, S),
    g("MetricsForCohorts", true, S),
    g("MultiKueue", true, S),
    g("MultiKueueAdaptersForCustomJobs", true, S),
    g("MultiKueueClusterProfile", false, S),
    g("MultiKueueIncrementalDispatcherConfig", true, S),
    g("MultiKueueIncrementalDispatcherRespectConfigOrder", true, S),
    g("MultiKueueKubeConfigPathValidation", true, S),
    g("MultiKueueManagerQuotaAutomation", false, S),
    g("MultiKueueOrchestratedPreemption", false, S),
    g("MultiKueueRemoteSpecSync", true, S),
    g("PartialAdmission", true, M),
    g("PodIntegrationValidateGroupOwner", true, S),
    g("PrioritizePreemptorWorkloads", false, M),
    g("PriorityBoost", false, W),
    g("PrioritySortingWithinCohort", true, M),
    g("QuotaCheckStrategy", true, M),
    g("ReclaimablePods", true, M),
    g("RecomputeAssignmentUponPreemptionTargetsOverlap", true, M),
    g("RejectUpdatesToCQWithInvalidOnFlavors", false, S),
    g("RemoveFinalizersWithStrictPatch", true, S),
    g("SchedulerLibraryIntegration", false, W),
    g("SchedulingEquivalenceHashing", true, W),
    g("ShortWorkloadNames", false, S),
    g("SkipAncestorCheckForDeletedWorkloads", true, S),
    g("SkipReassignmentForPodOwnedWorkloads", true, W),
    g("SparkApplicationIntegration", false, S),
    g("TASAssignmentsEncodingByHostnamePrefix", true, S),
    g("TASBalancedPlacement", false, W),
    g("TASCacheNodeMatchResults", true, S),
    g("TASCacheTopologyTree", true, S),
    g("TASCachingRemainingResources", true, S),
    g("TASFailedNodeReplacement", true, W),
    g("TASFailedNodeReplacementFailFast", true, W),
    g("TASHandleOverlappingFlavors", true, W),
    g("TASMultiLayerTopology", true, W),
    g("TASProfileMixed", true, W),
    g("TASRecomputeAssignmentWithinSchedulingCycle", true, W),
    g("TASReplaceNodeDueToNotReadyOverFixedTime", false, W),
    g("TASReplaceNodeOnNodeTaints", true, W),
    g("TASReplaceNodeOnPodTermination", true, W),
    g("TASRespectNodeAffinityPreferred", false, W),
    g("TASValidateWorkloadSliceSize", true, S),
    g("TLSOptions", true, S),
    g("TopologyAwareScheduling", true, W),
    g("UnadmittedWorkloadsExplicitStatus", false, S),
    g("UnadmittedWorkloadsObservability", true, S),
    g("ValidateRayAndSparkJobUpdates", true, S),
    g("VectorizedResourceRequests", true, S),
    g("VisibilityOnDemand", true, S),
    g("WorkloadIdentifierAnnotations", true, S),
    g("WorkloadPriorityClassDefaulting", true, W),
    g("WorkloadRequestUseMergePatch", false, S),
    g("WorkloadValidateResourcesAreNonNegative", true, S),
    g("WorkloadValidationForPodSetMetadata", true, S),
];

/// The upstream gate named `name`, if any.
pub fn gate_info(name: &str) -> Option<&'static GateInfo> {
    UPSTREAM_GATES
        .binary_search_by(|g| g.name.cmp(name))
        .ok()
        .map(|i| &UPSTREAM_GATES[i])
}

/// The modelled feature gates, each at upstream's default unless the Configuration's
/// `featureGates` sets it (see the module docs for what each one changes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeatureGates {
    /// `AdmissionFairSharing` (beta, on).
    pub admission_fair_sharing: bool,
    /// `AdmissionGatedBy` (beta, on).
    pub admission_gated_by: bool,
    /// `ElasticJobsViaWorkloadSlices` (beta, on; read by the job importer).
    pub elastic_jobs_via_workload_slices: bool,
    /// `FairSharingPreemptWithinNominal` (beta, on).
    pub fair_sharing_preempt_within_nominal: bool,
    /// `FairSharingPrioritizeNonBorrowing` (beta, on).
    pub fair_sharing_prioritize_non_borrowing: bool,
    /// `FlavorFungibilityPreserveScanProgress` (beta, on).
    pub flavor_fungibility_preserve_scan_progress: bool,
    /// `PartialAdmission` (beta, on).
    pub partial_admission: bool,
    /// `PrioritizePreemptorWorkloads` (alpha, off).
    pub prioritize_preemptor_workloads: bool,
    /// `PrioritySortingWithinCohort` (beta, on).
    pub priority_sorting_within_cohort: bool,
    /// `QuotaCheckStrategy` (beta, on).
    pub quota_check_strategy: bool,
    /// `ReclaimablePods` (beta, on).
    pub reclaimable_pods: bool,
    /// `RecomputeAssignmentUponPreemptionTargetsOverlap` (beta, on).
    pub recompute_assignment_upon_preemption_targets_overlap: bool,
}

impl Default for FeatureGates {
    /// Upstream's defaults.
    fn default() -> FeatureGates {
        FeatureGates {
            admission_fair_sharing: true,
            admission_gated_by: true,
            elastic_jobs_via_workload_slices: true,
            fair_sharing_preempt_within_nominal: true,
            fair_sharing_prioritize_non_borrowing: true,
            flavor_fungibility_preserve_scan_progress: true,
            partial_admission: true,
            prioritize_preemptor_workloads: false,
            priority_sorting_within_cohort: true,
            quota_check_strategy: true,
            reclaimable_pods: true,
            recompute_assignment_upon_preemption_targets_overlap: true,
        }
    }
}

impl FeatureGates {
    /// The field of a modelled gate, `None` for any other name.
    fn field(&mut self, name: &str) -> Option<&mut bool> {
        Some(match name {
            "AdmissionFairSharing" => &mut self.admission_fair_sharing,
            "AdmissionGatedBy" => &mut self.admission_gated_by,
            "ElasticJobsViaWorkloadSlices" => &mut self.elastic_jobs_via_workload_slices,
            "FairSharingPreemptWithinNominal" => &mut self.fair_sharing_preempt_within_nominal,
            "FairSharingPrioritizeNonBorrowing" => &mut self.fair_sharing_prioritize_non_borrowing,
            "FlavorFungibilityPreserveScanProgress" => {
                &mut self.flavor_fungibility_preserve_scan_progress
            }
            "PartialAdmission" => &mut self.partial_admission,
            "PrioritizePreemptorWorkloads" => &mut self.prioritize_preemptor_workloads,
            "PrioritySortingWithinCohort" => &mut self.priority_sorting_within_cohort,
            "QuotaCheckStrategy" => &mut self.quota_check_strategy,
            "ReclaimablePods" => &mut self.reclaimable_pods,
            "RecomputeAssignmentUponPreemptionTargetsOverlap" => {
                &mut self.recompute_assignment_upon_preemption_targets_overlap
            }
            _ => return None,
        })
    }

    /// Sets the modelled gate `name`; false (nothing set) for any other name.
    pub fn set(&mut self, name: &str, on: bool) -> bool {
        match self.field(name) {
            Some(f) => {
                *f = on;
                true
            }
            None => false,
        }
    }

    /// Reads `featureGates` (an object of gate name → boolean): the gates, with a warning
    /// `(featureGates.<name>, message)` for each gate that is warned about or unknown and an
    /// error for each value that is not a boolean (or a `featureGates` that is not an
    /// object).
    ///
    /// # Complexity
    /// O(gates × log upstream gates).
    #[cfg(feature = "serde")]
    pub fn read(
        value: &serde_json::Value,
        warnings: &mut Vec<super::ConfigFinding>,
        errors: &mut Vec<super::ConfigFinding>,
    ) -> FeatureGates {
        let mut gates = FeatureGates::default();
        if value.is_null() {
            return gates;
        }
        let Some(map) = value.as_object() else {
            errors.push((
                "featureGates".into(),
                "must be a map of feature gate names to booleans".into(),
            ));
            return gates;
        };
        for (name, v) in map {
            let path = format!("featureGates.{name}");
            let Some(on) = v.as_bool() else {
                errors.push((path, format!("Invalid value: {v}: must be a boolean")));
                continue;
            };
            match gate_info(name).map(|g| g.kind) {
                Some(GateKind::Modelled) => {
                    gates.set(name, on);
                }
                Some(GateKind::NoDecisionEffect) => {}
                Some(GateKind::NotModelled) => warnings.push((
                    path,
                    "not modelled by the admission engine; ignored (the run is as if it were \
                     unset)"
                        .to_owned(),
                )),
                None => warnings.push((
                    path,
                    "unknown feature gate; ignored (Kueue refuses to start with it)".to_owned(),
                )),
            }
        }
        gates
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_list_is_sorted_and_every_modelled_gate_has_a_field() {
        assert!(UPSTREAM_GATES.windows(2).all(|w| w[0].name < w[1].name));
        assert_eq!(UPSTREAM_GATES.len(), 80);
        let defaults = FeatureGates::default();
        for g in UPSTREAM_GATES {
            let mut gates = FeatureGates::default();
            let modelled = gates.field(g.name).map(|f| *f);
            assert_eq!(
                modelled.is_some(),
                g.kind == GateKind::Modelled,
                "{}",
                g.name
            );
            if let Some(d) = modelled {
                assert_eq!(d, g.default, "{}", g.name);
                assert!(gates.set(g.name, !d));
                assert_ne!(gates, defaults, "{}", g.name);
            }
        }
    }

    #[cfg(feature = "serde")]
    #[test]
    fn values_are_checked_and_names_classified() {
        let v: serde_json::Value = serde_json::from_str(
            r#"{"PrioritySortingWithinCohort": false, "MetricsForCohorts": false,
                "TopologyAwareScheduling": true, "NoSuchGate": true, "PartialAdmission": "no"}"#,
        )
        .expect("json");
        let (mut w, mut e) = (Vec::new(), Vec::new());
        let gates = FeatureGates::read(&v, &mut w, &mut e);
        w.sort();
        assert!(!gates.priority_sorting_within_cohort);
        assert!(gates.partial_admission);
        assert_eq!(
            w,
            [
                (
                    "featureGates.NoSuchGate".to_owned(),
                    "unknown feature gate; ignored (Kueue refuses to start with it)".to_owned()
                ),
                (
                    "featureGates.TopologyAwareScheduling".to_owned(),
                    "not modelled by the admission engine; ignored (the run is as if it were unset)"
                        .to_owned()
                ),
            ]
        );
        assert_eq!(
            e,
            [(
                "featureGates.PartialAdmission".to_owned(),
                "Invalid value: \"no\": must be a boolean".to_owned()
            )]
        );
    }
}
