//! The objects gpuquota decides on ([`Model`]), the kinds read ([`Kind`]), where a document
//! came from ([`Origin`]), the workload objects kept for the conversions ([`WorkloadObject`],
//! [`ConfigMap`]) and a finished import ([`Imported`]).
//!
//! This module is the bottom of the crate's reading pipeline, which runs one way:
//!
//! 1. **Reading** ([`crate::import`]): manifests into a [`Model`], with every problem as a
//!    [`Diagnostic`]; Jobs, JobSets, … and ConfigMaps are kept verbatim
//!    ([`Model::workload_objects`], [`Model::config_maps`]).
//! 2. **Conversion** ([`crate::workloads::convert`]): the kept workload objects into Kueue
//!    Workloads and KAI PodGroups and Pods, added to the same [`Model`].
//!    [`crate::import::Importer::finish`] and [`crate::import_str`] run it after reading.
//! 3. **Validation** ([`crate::validate()`]): reads the [`Model`], whoever built it.
//!
//! Each step depends only on the ones before it and on this module; none reaches back.

use std::collections::BTreeMap;
use std::fmt;

pub mod configmap;
pub(crate) mod workload_object;

pub use configmap::ConfigMap;
pub use workload_object::{ObjectKind, WorkloadObject};

use crate::core::{Namespace, Node, Pod, PriorityClass, ResourceQuota};
use crate::diag::Diagnostic;
use crate::kai::{PodGroup, Queue};
use crate::kueue::{
    ClusterQueue, Cohort, Configuration, LocalQueue, ResourceFlavor, Workload,
    WorkloadPriorityClass,
};

/// Every kind gpuquota reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// Kueue ResourceFlavor.
    ResourceFlavor,
    /// Kueue ClusterQueue.
    ClusterQueue,
    /// Kueue Cohort.
    Cohort,
    /// Kueue LocalQueue.
    LocalQueue,
    /// Kueue Workload.
    Workload,
    /// Kueue WorkloadPriorityClass.
    WorkloadPriorityClass,
    /// Kubernetes PriorityClass.
    PriorityClass,
    /// Kubernetes Namespace.
    Namespace,
    /// Kubernetes ResourceQuota.
    ResourceQuota,
    /// Kubernetes Pod.
    Pod,
    /// Kubernetes Node.
    Node,
    /// KAI Queue.
    Queue,
    /// KAI PodGroup.
    PodGroup,
    /// Kueue Configuration.
    Configuration,
    /// gpuquota GPU-hour Budget ([`crate::budget`]).
    Budget,
}

impl Kind {
    /// Every kind gpuquota reads.
    pub const ALL: &'static [Kind] = &[
        Kind::ResourceFlavor,
        Kind::ClusterQueue,
        Kind::Cohort,
        Kind::LocalQueue,
        Kind::Workload,
        Kind::WorkloadPriorityClass,
        Kind::PriorityClass,
        Kind::Namespace,
        Kind::ResourceQuota,
        Kind::Pod,
        Kind::Node,
        Kind::Queue,
        Kind::PodGroup,
        Kind::Budget,
        Kind::Configuration,
    ];

    /// The Kubernetes kind name.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::ResourceFlavor => "ResourceFlavor",
            Kind::ClusterQueue => "ClusterQueue",
            Kind::Cohort => "Cohort",
            Kind::LocalQueue => "LocalQueue",
            Kind::Workload => "Workload",
            Kind::WorkloadPriorityClass => "WorkloadPriorityClass",
            Kind::PriorityClass => "PriorityClass",
            Kind::Namespace => "Namespace",
            Kind::ResourceQuota => "ResourceQuota",
            Kind::Pod => "Pod",
            Kind::Node => "Node",
            Kind::Queue => "Queue",
            Kind::PodGroup => "PodGroup",
            Kind::Configuration => "Configuration",
            Kind::Budget => "Budget",
        }
    }

    /// True for namespaced kinds (keyed `namespace/name`).
    pub fn is_namespaced(self) -> bool {
        matches!(
            self,
            Kind::LocalQueue | Kind::Workload | Kind::ResourceQuota | Kind::Pod | Kind::PodGroup
        )
    }

    /// The kind for an `apiVersion` group and `kind`, if gpuquota reads it.
    #[cfg_attr(not(feature = "yaml"), allow(dead_code))]
    pub(crate) fn from_group_kind(group: &str, kind: &str) -> Option<Kind> {
        Some(match (group, kind) {
            ("kueue.x-k8s.io", "ResourceFlavor") => Kind::ResourceFlavor,
            ("kueue.x-k8s.io", "ClusterQueue") => Kind::ClusterQueue,
            ("kueue.x-k8s.io", "Cohort") => Kind::Cohort,
            ("kueue.x-k8s.io", "LocalQueue") => Kind::LocalQueue,
            ("kueue.x-k8s.io", "Workload") => Kind::Workload,
            ("kueue.x-k8s.io", "WorkloadPriorityClass") => Kind::WorkloadPriorityClass,
            ("scheduling.k8s.io", "PriorityClass") => Kind::PriorityClass,
            ("", "Namespace") => Kind::Namespace,
            ("", "ResourceQuota") => Kind::ResourceQuota,
            ("", "Pod") => Kind::Pod,
            ("", "Node") => Kind::Node,
            ("scheduling.run.ai", "Queue") => Kind::Queue,
            ("scheduling.run.ai", "PodGroup") => Kind::PodGroup,
            ("config.kueue.x-k8s.io", "Configuration") => Kind::Configuration,
            ("gpuquota.dev", "Budget") => Kind::Budget,
            _ => return None,
        })
    }

    /// The API versions upstream serves for this kind.
    #[cfg_attr(not(feature = "yaml"), allow(dead_code))]
    pub(crate) fn known_versions(self) -> &'static [&'static str] {
        match self {
            Kind::ResourceFlavor
            | Kind::ClusterQueue
            | Kind::LocalQueue
            | Kind::Workload
            | Kind::WorkloadPriorityClass => &["v1beta1", "v1beta2"],
            Kind::Cohort => &["v1alpha1", "v1beta1", "v1beta2"],
            Kind::PriorityClass
            | Kind::Namespace
            | Kind::ResourceQuota
            | Kind::Pod
            | Kind::Node => &["v1"],
            Kind::Queue => &["v2"],
            Kind::PodGroup => &["v2alpha2"],
            Kind::Configuration => &["v1beta1", "v1beta2"],
            Kind::Budget => &["v1alpha1"],
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a document came from: file (or source) name and 1-based document index.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Origin {
    /// File name or other source label.
    pub source: String,
    /// 1-based index of the document in the source.
    pub document: usize,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (document {})", self.source, self.document)
    }
}

/// An object that appeared more than once under the same kind and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Duplicate {
    /// Kind.
    pub kind: Kind,
    /// Name (`namespace/name` for namespaced kinds).
    pub name: String,
}

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
    pub workload_objects: BTreeMap<String, WorkloadObject>,
    /// Core ConfigMaps, keyed `namespace/name`.
    pub config_maps: BTreeMap<String, ConfigMap>,
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
    pub warnings: Vec<Diagnostic>,
}
