//! Kubernetes core objects: Pod, Node, Namespace, ResourceQuota, PriorityClass.

use std::collections::BTreeMap;

use crate::meta::{LabelSelector, ObjectMeta, Taint, Toleration};
use crate::quantity::Quantity;

pub use crate::resource_list::ResourceList;

/// `resources` of a container or pod.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ResourceRequirements {
    /// Requested amounts.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "ResourceList::is_empty")
    )]
    pub requests: ResourceList,
    /// Limits; a limit without a request defaults the request (Kubernetes defaulting).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "ResourceList::is_empty")
    )]
    pub limits: ResourceList,
    /// Dynamic resource claims (kept, not interpreted).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub claims: Option<crate::opaque::Opaque>,
}

impl ResourceRequirements {
    /// Requests after defaulting: a resource with a limit and no request requests its limit.
    pub fn effective_requests(&self) -> ResourceList {
        let mut out = self.requests.clone();
        for (name, limit) in &self.limits {
            out.entry(name.clone()).or_insert(*limit);
        }
        out
    }
}

/// A container: its name, resources and, for init containers, `restartPolicy: Always`
/// (a sidecar). Other container fields are kept verbatim.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct Container {
    /// Container name.
    #[cfg_attr(feature = "serde", serde(default))]
    pub name: String,
    /// Requests and limits.
    #[cfg_attr(feature = "serde", serde(default))]
    pub resources: ResourceRequirements,
    /// `Always` marks a sidecar init container.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub restart_policy: Option<String>,
    /// `image`, `command`, `env`, …: kept verbatim, not interpreted.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: BTreeMap<String, crate::opaque::Opaque>,
}

/// The parts of a pod spec that quota decisions read; other fields are kept verbatim.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct PodSpec {
    /// Regular containers.
    #[cfg_attr(feature = "serde", serde(default))]
    pub containers: Vec<Container>,
    /// Init containers (sidecars when `restartPolicy: Always`).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Vec::is_empty")
    )]
    pub init_containers: Vec<Container>,
    /// Pod overhead added to the requests.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "ResourceList::is_empty")
    )]
    pub overhead: ResourceList,
    /// Pod-level resources (Kubernetes PodLevelResources): their cpu, memory and
    /// `hugepages-*` requests replace the containers' sum for those resources only; every
    /// other resource (GPUs, extended resources) stays the containers' (see
    /// [`PodSpec::effective_requests`]).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub resources: Option<ResourceRequirements>,
    /// Node selector labels.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub node_selector: BTreeMap<String, String>,
    /// Tolerations.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Vec::is_empty")
    )]
    pub tolerations: Vec<Toleration>,
    /// Affinity (kept; Kueue evaluates required node affinity against flavor labels).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub affinity: Option<crate::opaque::Opaque>,
    /// The node a running pod is bound to.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub node_name: Option<String>,
    /// Priority class name.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub priority_class_name: Option<String>,
    /// Resolved priority value.
    #[cfg_attr(
        feature = "serde",
        serde(
            deserialize_with = "crate::strict::opt_int",
            default,
            skip_serializing_if = "Option::is_none"
        )
    )]
    pub priority: Option<i32>,
    /// `schedulerName` (e.g. `kai-scheduler`).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub scheduler_name: Option<String>,
    /// Every other pod spec field: kept verbatim, not interpreted.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: BTreeMap<String, crate::opaque::Opaque>,
}

impl PodSpec {
    /// The pod's effective requests, by the Kubernetes rule
    /// (kubernetes/kubernetes `staging/src/k8s.io/component-helpers/resource/helpers.go`,
    /// `PodRequests`, which Kueue's `pkg/workload/workload.go` and KAI call): the larger of
    /// (regular containers + sidecars) and, for each init container, (that container + the
    /// sidecars started before it); then, when pod-level `resources` request a resource
    /// pod-level resources support (cpu, memory, `hugepages-*`), those pod-level values
    /// replace the containers' for exactly those resources, and the containers' extended
    /// resources (GPUs) are kept; then the overhead is added. A limit without a request
    /// counts as the request, for containers and the pod level alike (Kueue's
    /// `UseLimitsAsMissingRequestsInPod`, `pkg/workload/resources.go`).
    ///
    /// Returns `None` if a sum overflows the exact representation.
    pub fn effective_requests(&self) -> Option<ResourceList> {
        let mut total = ResourceList::new();
        let mut sidecars = ResourceList::new();
        let mut init_peak = ResourceList::new();
        for init in &self.init_containers {
            let req = init.resources.effective_requests();
            if init.restart_policy.as_deref() == Some("Always") {
                // A sidecar keeps running beside every later init container.
                add_into(&mut sidecars, &req)?;
                max_into(&mut init_peak, &sidecars);
            } else {
                let mut running = sidecars.clone();
                add_into(&mut running, &req)?;
                max_into(&mut init_peak, &running);
            }
        }
        for c in &self.containers {
            add_into(&mut total, &c.resources.effective_requests())?;
        }
        add_into(&mut total, &sidecars)?;
        max_into(&mut total, &init_peak);
        if let Some(pod) = &self.resources {
            let pod = pod.effective_requests();
            // `IsPodLevelRequestsSet`: only a supported resource switches pod-level
            // requests on, and only supported resources are replaced.
            for (name, q) in pod
                .iter()
                .filter(|(name, _)| is_pod_level_resource(name.as_str()))
            {
                total.insert(name.clone(), *q);
            }
        }
        add_into(&mut total, &self.overhead)?;
        Some(total)
    }
}

/// True for the resources pod-level `resources` may set: `cpu`, `memory` and `hugepages-*`
/// (kubernetes/kubernetes `staging/src/k8s.io/component-helpers/resource/helpers.go`,
/// `IsSupportedPodLevelResource`).
pub fn is_pod_level_resource(name: &str) -> bool {
    matches!(name, "cpu" | "memory") || name.starts_with("hugepages-")
}

fn add_into(acc: &mut ResourceList, other: &ResourceList) -> Option<()> {
    for (k, v) in other {
        let cur = acc.get(k).copied().unwrap_or(Quantity::ZERO);
        let (m1, e1) = cur.as_decimal();
        let (m2, e2) = v.as_decimal();
        let e = e1.min(e2);
        let scale = |m: i128, from: i32| -> Option<i128> {
            let shift = u32::try_from(from - e).ok()?;
            m.checked_mul(10_i128.checked_pow(shift)?)
        };
        let sum = scale(m1, e1)?.checked_add(scale(m2, e2)?)?;
        let q = Quantity::from_decimal(sum, e)?.with_format(v.format());
        acc.insert(k.clone(), q);
    }
    Some(())
}

fn max_into(acc: &mut ResourceList, other: &ResourceList) {
    for (k, v) in other {
        match acc.get(k) {
            Some(cur) if cur >= v => {}
            _ => {
                acc.insert(k.clone(), *v);
            }
        }
    }
}

/// `status` of a Pod.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct PodStatus {
    /// `Pending`, `Running`, `Succeeded`, `Failed`, `Unknown`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub phase: Option<String>,
    /// When the pod started.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub start_time: Option<crate::time::Timestamp>,
    /// Conditions, container statuses and the rest: kept verbatim.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: BTreeMap<String, crate::opaque::Opaque>,
}

/// A Pod (`v1`).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct Pod {
    /// Metadata (KAI reads the `kai.scheduler/queue` label and `pod-group-name` annotation).
    #[cfg_attr(feature = "serde", serde(default))]
    pub metadata: ObjectMeta,
    /// Spec.
    #[cfg_attr(feature = "serde", serde(default))]
    pub spec: PodSpec,
    /// Status.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub status: Option<PodStatus>,
}

/// `spec` of a Node.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct NodeSpec {
    /// Node taints.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Vec::is_empty")
    )]
    pub taints: Vec<Taint>,
    /// Cordoned.
    #[cfg_attr(
        feature = "serde",
        serde(
            deserialize_with = "crate::strict::opt_bool",
            default,
            skip_serializing_if = "Option::is_none"
        )
    )]
    pub unschedulable: Option<bool>,
    /// `podCIDR`, `providerID`, …: kept verbatim.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: BTreeMap<String, crate::opaque::Opaque>,
}

/// `status` of a Node.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct NodeStatus {
    /// What pods may request on the node.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "ResourceList::is_empty")
    )]
    pub allocatable: ResourceList,
    /// The node's raw capacity.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "ResourceList::is_empty")
    )]
    pub capacity: ResourceList,
    /// Addresses, conditions, node info, …: kept verbatim.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: BTreeMap<String, crate::opaque::Opaque>,
}

/// A Node (`v1`).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct Node {
    /// Metadata (labels such as `nvidia.com/gpu.product`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub metadata: ObjectMeta,
    /// Spec.
    #[cfg_attr(feature = "serde", serde(default))]
    pub spec: NodeSpec,
    /// Status.
    #[cfg_attr(feature = "serde", serde(default))]
    pub status: NodeStatus,
}

/// A Namespace (`v1`); its labels feed ClusterQueue `namespaceSelector`s.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct Namespace {
    /// Metadata.
    #[cfg_attr(feature = "serde", serde(default))]
    pub metadata: ObjectMeta,
    /// Spec and status: kept verbatim.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: BTreeMap<String, crate::opaque::Opaque>,
}

/// A scope selector requirement of a ResourceQuota.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ScopedResourceSelectorRequirement {
    /// `PriorityClass`, `BestEffort`, …
    #[cfg_attr(feature = "serde", serde(default))]
    pub scope_name: String,
    /// `In`, `NotIn`, `Exists`, `DoesNotExist`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub operator: String,
    /// Values for `In`/`NotIn`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Vec::is_empty")
    )]
    pub values: Vec<String>,
}

/// `spec.scopeSelector` of a ResourceQuota.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ScopeSelector {
    /// Requirements, all of which must hold.
    #[cfg_attr(feature = "serde", serde(default))]
    pub match_expressions: Vec<ScopedResourceSelectorRequirement>,
}

/// `spec` of a ResourceQuota.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ResourceQuotaSpec {
    /// Hard caps, keyed as written (`requests.nvidia.com/gpu`, `limits.cpu`, `cpu`, `pods`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub hard: BTreeMap<String, Quantity>,
    /// Plain scopes (`BestEffort`, `NotTerminating`, …).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Vec::is_empty")
    )]
    pub scopes: Vec<String>,
    /// Scope selector (e.g. a PriorityClass scope).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub scope_selector: Option<ScopeSelector>,
}

/// A Kubernetes ResourceQuota (`v1`): a hard cap per namespace.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ResourceQuota {
    /// Metadata (namespaced).
    #[cfg_attr(feature = "serde", serde(default))]
    pub metadata: ObjectMeta,
    /// Spec.
    #[cfg_attr(feature = "serde", serde(default))]
    pub spec: ResourceQuotaSpec,
    /// Status (`used`, `hard`): kept verbatim.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub status: Option<crate::opaque::Opaque>,
}

impl ResourceQuota {
    /// True when the quota's scope selector admits a pod of `priority_class` (no selector: all).
    pub fn applies_to_priority_class(&self, priority_class: Option<&str>) -> bool {
        let Some(sel) = &self.spec.scope_selector else {
            return true;
        };
        sel.match_expressions.iter().all(|r| {
            if r.scope_name != "PriorityClass" {
                return true;
            }
            match r.operator.as_str() {
                "In" => priority_class.is_some_and(|p| r.values.iter().any(|v| v == p)),
                "NotIn" => priority_class.is_none_or(|p| !r.values.iter().any(|v| v == p)),
                "Exists" => priority_class.is_some(),
                "DoesNotExist" => priority_class.is_none(),
                _ => false,
            }
        })
    }
}

/// A PriorityClass (`scheduling.k8s.io/v1`).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct PriorityClass {
    /// Metadata.
    #[cfg_attr(feature = "serde", serde(default))]
    pub metadata: ObjectMeta,
    /// The priority value.
    #[cfg_attr(
        feature = "serde",
        serde(deserialize_with = "crate::strict::int", default)
    )]
    pub value: i32,
    /// The default class for pods without one.
    #[cfg_attr(
        feature = "serde",
        serde(deserialize_with = "crate::strict::boolean", default)
    )]
    pub global_default: bool,
    /// Description.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub description: Option<String>,
    /// `PreemptLowerPriority` or `Never`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub preemption_policy: Option<String>,
}

/// Selector type alias kept for symmetry with Kueue's `namespaceSelector`.
pub type NamespaceSelector = LabelSelector;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::ResourceName;

    fn list(pairs: &[(&str, &str)]) -> ResourceList {
        pairs
            .iter()
            .map(|(k, v)| (ResourceName::new(*k), v.parse().unwrap()))
            .collect()
    }

    fn container(req: &[(&str, &str)], sidecar: bool) -> Container {
        Container {
            resources: ResourceRequirements {
                requests: list(req),
                ..Default::default()
            },
            restart_policy: sidecar.then(|| "Always".to_owned()),
            ..Default::default()
        }
    }

    #[test]
    fn pod_requests_take_the_larger_of_containers_and_init() {
        let spec = PodSpec {
            containers: vec![
                container(&[("cpu", "1")], false),
                container(&[("cpu", "500m")], false),
            ],
            init_containers: vec![container(&[("cpu", "2"), ("memory", "1Gi")], false)],
            overhead: list(&[("cpu", "100m")]),
            ..Default::default()
        };
        assert_eq!(
            spec.effective_requests().unwrap(),
            list(&[("cpu", "2100m"), ("memory", "1Gi")])
        );
    }

    #[test]
    fn sidecars_add_to_containers_and_later_inits() {
        let spec = PodSpec {
            containers: vec![container(&[("cpu", "1")], false)],
            init_containers: vec![
                container(&[("cpu", "1")], true),
                container(&[("cpu", "3")], false),
            ],
            ..Default::default()
        };
        // containers 1 + sidecar 1 = 2; init peak: sidecar 1 + init 3 = 4.
        assert_eq!(spec.effective_requests().unwrap(), list(&[("cpu", "4")]));
    }

    fn pod_level(req: &[(&str, &str)], lim: &[(&str, &str)]) -> Option<ResourceRequirements> {
        Some(ResourceRequirements {
            requests: list(req),
            limits: list(lim),
            ..Default::default()
        })
    }

    // The cases of kubernetes/kubernetes
    // staging/src/k8s.io/component-helpers/resource/helpers_test.go (`TestPodLevelResourceRequests`).
    #[test]
    fn pod_level_resources_replace_only_cpu_memory_and_hugepages() {
        // "pod level memory and container level cpu resources": {2Mi} + container {2m}.
        let spec = PodSpec {
            resources: pod_level(&[("memory", "2Mi")], &[]),
            containers: vec![container(&[("cpu", "2m")], false)],
            ..Default::default()
        };
        assert_eq!(
            spec.effective_requests().unwrap(),
            list(&[("cpu", "2m"), ("memory", "2Mi")])
        );
        // "pod level unsupported resources set at pod-level": storage is ignored.
        let spec = PodSpec {
            resources: pod_level(&[("storage", "2Mi")], &[]),
            containers: vec![container(&[("memory", "3Mi")], false)],
            ..Default::default()
        };
        assert_eq!(
            spec.effective_requests().unwrap(),
            list(&[("memory", "3Mi")])
        );
        // "pod-level resources, container-level resources, init and sidecar container set":
        // the pod level (15Mi, 18m) wins over the containers' 11Mi, 12m.
        let spec = PodSpec {
            resources: pod_level(&[("memory", "15Mi"), ("cpu", "18m")], &[]),
            containers: vec![container(&[("memory", "3Mi"), ("cpu", "2m")], false)],
            init_containers: vec![
                container(&[("memory", "5Mi"), ("cpu", "4m")], true),
                container(&[("memory", "6Mi"), ("cpu", "8m")], false),
            ],
            ..Default::default()
        };
        assert_eq!(
            spec.effective_requests().unwrap(),
            list(&[("cpu", "18m"), ("memory", "15Mi")])
        );
    }

    #[test]
    fn pod_level_resources_keep_the_containers_gpus_and_add_overhead() {
        // A container's GPU limit (8) stays; the pod-level cpu limit becomes the request;
        // the overhead is added after the pod level.
        let mut gpu = container(&[], false);
        gpu.resources.limits = list(&[("nvidia.com/gpu", "8")]);
        let spec = PodSpec {
            resources: pod_level(&[("memory", "16Gi")], &[("cpu", "4")]),
            containers: vec![gpu, container(&[("cpu", "1"), ("memory", "1Gi")], false)],
            overhead: list(&[("cpu", "250m")]),
            ..Default::default()
        };
        assert_eq!(
            spec.effective_requests().unwrap(),
            list(&[
                ("cpu", "4250m"),
                ("memory", "16Gi"),
                ("nvidia.com/gpu", "8")
            ])
        );
    }

    #[test]
    fn limits_default_requests() {
        let r = ResourceRequirements {
            limits: list(&[("nvidia.com/gpu", "2")]),
            ..Default::default()
        };
        assert_eq!(r.effective_requests(), list(&[("nvidia.com/gpu", "2")]));
    }
}
