//! The imported objects ([`Model`]) and a finished import ([`Imported`]).

use std::collections::BTreeMap;

use super::{Duplicate, ImportWarning};
use crate::core::{Namespace, Node, Pod, PriorityClass, ResourceQuota};
use crate::kai::{PodGroup, Queue};
use crate::kueue::{
    ClusterQueue, Cohort, Configuration, LocalQueue, ResourceFlavor, Workload,
    WorkloadPriorityClass,
};

/// Every object of an import, keyed by name (`namespace/name` for namespaced kinds).
///
/// `BTreeMap`s keep the model independent of document order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Model {
    /// Kueue ResourceFlavors.
    pub resource_flavors: BTreeMap<String, ResourceFlavor>,
    /// Kueue ClusterQueues.
    pub cluster_queues: BTreeMap<String, ClusterQueue>,
    /// Kueue Cohorts (explicit objects; implicit cohorts are only names in ClusterQueues).
    pub cohorts: BTreeMap<String, Cohort>,
    /// Kueue LocalQueues.
    pub local_queues: BTreeMap<String, LocalQueue>,
    /// Kueue Workloads.
    pub workloads: BTreeMap<String, Workload>,
    /// Kueue WorkloadPriorityClasses.
    pub workload_priority_classes: BTreeMap<String, WorkloadPriorityClass>,
    /// Kubernetes PriorityClasses.
    pub priority_classes: BTreeMap<String, PriorityClass>,
    /// Kubernetes Namespaces.
    pub namespaces: BTreeMap<String, Namespace>,
    /// Kubernetes ResourceQuotas.
    pub resource_quotas: BTreeMap<String, ResourceQuota>,
    /// Kubernetes Pods.
    pub pods: BTreeMap<String, Pod>,
    /// Kubernetes Nodes.
    pub nodes: BTreeMap<String, Node>,
    /// KAI Queues.
    pub queues: BTreeMap<String, Queue>,
    /// KAI PodGroups.
    pub pod_groups: BTreeMap<String, PodGroup>,
    /// Kueue's Configuration, if one was given.
    pub configuration: Option<Configuration>,
    /// Objects seen more than once (reported by validation).
    pub duplicates: Vec<Duplicate>,
    /// Jobs, JobSets, Deployments, … keyed `Kind/namespace/name` (see [`crate::workloads`]).
    pub workload_objects: BTreeMap<String, crate::workloads::WorkloadObject>,
    /// Core ConfigMaps, keyed `namespace/name`.
    pub config_maps: BTreeMap<String, crate::workloads::ConfigMap>,
    /// gpuquota GPU-hour Budgets ([`crate::budget`]).
    pub budgets: BTreeMap<String, crate::budget::Budget>,
}

impl Model {
    /// Number of objects of every kind.
    pub fn len(&self) -> usize {
        self.resource_flavors.len()
            + self.cluster_queues.len()
            + self.cohorts.len()
            + self.local_queues.len()
            + self.workloads.len()
            + self.workload_priority_classes.len()
            + self.priority_classes.len()
            + self.namespaces.len()
            + self.resource_quotas.len()
            + self.pods.len()
            + self.nodes.len()
            + self.queues.len()
            + self.pod_groups.len()
            + usize::from(self.configuration.is_some())
            + self.workload_objects.len()
            + self.config_maps.len()
            + self.budgets.len()
    }

    /// True when no object was imported.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A finished import: the model and the warnings raised on the way.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Imported {
    /// The objects.
    pub model: Model,
    /// Skipped kinds, unknown fields, unexpected API versions, sorted by origin.
    pub warnings: Vec<ImportWarning>,
}
