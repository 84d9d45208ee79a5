//! NVIDIA device plugin GPU sharing (time-slicing and MPS), read from the plugin's
//! configuration ConfigMap (NVIDIA/k8s-device-plugin: `api/config/v1/config.go`,
//! `api/config/v1/sharing.go`, `api/config/v1/replicas.go`).
//!
//! A ConfigMap value is a sharing configuration when it is YAML with `version: v1` and a
//! `sharing` stanza: `sharing.timeSlicing` or `sharing.mps`, each with `renameByDefault`,
//! `failRequestsGreaterThanOne` and `resources[]` (`name`, `rename`, `replicas`). The
//! configuration of a node is the ConfigMap key named by its `nvidia.com/device-plugin.config`
//! label, else the key `default`, else the only key. Reading these configurations needs the
//! `yaml` feature (on by default); without it only the node labels count.
//!
//! The plugin advertises `replicas × GPUs` of the shared resource, and GPU feature discovery
//! labels the node with `nvidia.com/gpu.count` (physical GPUs), `nvidia.com/gpu.replicas` and
//! `nvidia.com/gpu.sharing-strategy` together (NVIDIA/k8s-device-plugin
//! `internal/lm/resource.go`, `baseLabeler`). So a node's advertised count is derived from the
//! configuration only when the node tells its physical GPUs apart from the advertised ones:
//! * with `nvidia.com/gpu.replicas`: already advertised, unchanged;
//! * with `nvidia.com/gpu.count` only: `count × replicas`;
//! * renamed (`rename`, or `nvidia.com/gpu.shared` with `renameByDefault`) while the node
//!   still lists only the plain `nvidia.com/gpu`: that plain count is physical, and becomes
//!   `count × replicas` of the renamed resource;
//! * otherwise (a live node without discovery labels) its allocatable already holds
//!   `replicas × GPUs` and is kept as it is — multiplying it again would count every replica
//!   twice.
//!
//! In every case the plain resource is no longer advertised when renamed, and the node gets the
//! labels `nvidia.com/gpu.replicas` and `nvidia.com/gpu.sharing-strategy` (`time-slicing` or
//! `mps`) as the plugin sets them.
//!
//! Metering reads the replicas per GPU of every node from the same rules
//! ([`replicas_per_gpu`]): a time-sliced replica is `1/replicas` of a GPU.
//!
//! Replicas of one GPU have no memory or fault isolation: when running pods of namespaces of
//! different departments (the namespace's `department` label, else the namespace itself)
//! share a time-sliced or MPS-shared node, a warning names them.
//!
//! HAMi's vGPU requests (Project-HAMi/HAMi `pkg/device/nvidia/device.go`: `nvidia.com/gpu`
//! is the number of vGPUs, each a share of one card by `nvidia.com/gpumem` MiB or
//! `nvidia.com/gpumem-percentage` percent of its memory and `nvidia.com/gpucores` percent of
//! its cores) are not modelled: HAMi defines no single fraction of a card for a vGPU (memory
//! and cores are independent, and an unset memory means the whole card). Every Pod, Kueue
//! Workload and workload object whose containers request or limit one of these names gets a
//! warning ([`HAMI_NOT_MODELLED`]) naming them; its `nvidia.com/gpu` counts whole GPUs in
//! every engine and in metering.

use std::collections::{BTreeMap, BTreeSet};

use super::{Warnings, codes};
use crate::model::Model;
use crate::quantity::Quantity;
use crate::resource::ResourceName;

/// The node label choosing the plugin configuration key.
pub const CONFIG_LABEL: &str = "nvidia.com/device-plugin.config";
/// GPU feature discovery's physical GPU count label.
pub const GPU_COUNT_LABEL: &str = "nvidia.com/gpu.count";
/// The label the plugin sets once it advertises replicas.
pub const REPLICAS_LABEL: &str = "nvidia.com/gpu.replicas";
/// The label naming the sharing strategy.
pub const STRATEGY_LABEL: &str = "nvidia.com/gpu.sharing-strategy";
/// The namespace label naming a department (for the isolation warning).
pub const DEPARTMENT_LABEL: &str = "department";
/// HAMi's per-vGPU resource names (Project-HAMi/HAMi `pkg/device/nvidia/device.go` defaults):
/// memory in MiB, memory in percent, cores in percent.
pub const HAMI_RESOURCES: [&str; 3] = [
    "nvidia.com/gpumem",
    "nvidia.com/gpumem-percentage",
    "nvidia.com/gpucores",
];
/// Warning: an object requests HAMi vGPU resources, which are not modelled.
pub const HAMI_NOT_MODELLED: crate::diag::Code = crate::diag::Code::new("hami-not-modelled");

/// One `resources[]` entry.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ReplicatedResource {
    /// The resource shared (`nvidia.com/gpu`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub name: String,
    /// The name to advertise the replicas under.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub rename: Option<String>,
    /// Replicas per GPU.
    #[cfg_attr(feature = "serde", serde(default))]
    pub replicas: i64,
    /// `devices` and other fields: kept.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: BTreeMap<String, crate::opaque::Opaque>,
}

/// `sharing.timeSlicing` or `sharing.mps`.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ReplicatedResources {
    /// Advertise replicas as `<name>.shared` unless a `rename` is given.
    #[cfg_attr(feature = "serde", serde(default))]
    pub rename_by_default: bool,
    /// Requests of more than one replica fail.
    #[cfg_attr(feature = "serde", serde(default))]
    pub fail_requests_greater_than_one: bool,
    /// The shared resources.
    #[cfg_attr(feature = "serde", serde(default))]
    pub resources: Vec<ReplicatedResource>,
}

/// `sharing`.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct Sharing {
    /// Time-slicing.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub time_slicing: Option<ReplicatedResources>,
    /// MPS.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub mps: Option<ReplicatedResources>,
}

/// A device plugin configuration (`version: v1`).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct PluginConfig {
    /// `v1`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub version: String,
    /// Sharing.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub sharing: Option<Sharing>,
    /// `flags`, `resources`: kept.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: BTreeMap<String, crate::opaque::Opaque>,
}

impl PluginConfig {
    /// The strategy and its settings, if the configuration shares GPUs.
    pub fn strategy(&self) -> Option<(&'static str, &ReplicatedResources)> {
        let s = self.sharing.as_ref()?;
        if let Some(t) = s.time_slicing.as_ref().filter(|t| !t.resources.is_empty()) {
            return Some(("time-slicing", t));
        }
        s.mps
            .as_ref()
            .filter(|m| !m.resources.is_empty())
            .map(|m| ("mps", m))
    }
}

/// The sharing configurations of every ConfigMap, by ConfigMap key then data key.
#[cfg(feature = "yaml")]
fn configs(model: &Model) -> BTreeMap<String, BTreeMap<String, PluginConfig>> {
    let mut out = BTreeMap::new();
    for (key, cm) in &model.config_maps {
        let mut found = BTreeMap::new();
        for (k, v) in &cm.data {
            if !v.contains("sharing") {
                continue;
            }
            if let Ok(c) = serde_saphyr::from_str::<PluginConfig>(v)
                && c.version == "v1"
                && c.strategy().is_some()
            {
                found.insert(k.clone(), c);
            }
        }
        if !found.is_empty() {
            out.insert(key.clone(), found);
        }
    }
    out
}

/// Without the `yaml` feature the device plugin's configuration files inside ConfigMaps are not
/// read (they are YAML text); only the node labels count.
#[cfg(not(feature = "yaml"))]
fn configs(_: &Model) -> BTreeMap<String, BTreeMap<String, PluginConfig>> {
    BTreeMap::new()
}

/// Applies the sharing configuration to every node it covers and warns about shared GPUs
/// without isolation between departments.
///
/// # Complexity
/// `O(nodes + pods)` after the `O(c)` parse of the ConfigMaps.
#[cfg_attr(not(feature = "serde"), allow(dead_code))]
pub(crate) fn apply(model: &mut Model, warnings: &mut Warnings) {
    #[cfg(feature = "serde")]
    warn_hami(model, warnings);
    let all = configs(model);
    // One plugin configuration per cluster; with several ConfigMaps the first key wins.
    let Some((cm_key, keys)) = all.into_iter().next() else {
        return;
    };
    let mut shared_nodes: BTreeSet<String> = BTreeSet::new();
    for (name, node) in model.nodes.iter_mut() {
        let cfg = match node.metadata.labels.get(CONFIG_LABEL) {
            Some(k) => keys.get(k),
            None => keys
                .get("default")
                .or_else(|| (keys.len() == 1).then(|| keys.values().next()).flatten()),
        };
        let Some(cfg) = cfg else { continue };
        let Some((strategy, rr)) = cfg.strategy() else {
            continue;
        };
        shared_nodes.insert(name.clone());
        if node.metadata.labels.contains_key(REPLICAS_LABEL) {
            continue; // already advertised by the plugin
        }
        for r in &rr.resources {
            let res = ResourceName::new(r.name.as_str());
            let target = match (&r.rename, rr.rename_by_default) {
                (Some(n), _) if !n.is_empty() => n.clone(),
                (_, true) => format!("{}.shared", r.name),
                _ => r.name.clone(),
            };
            let target_res = ResourceName::new(target.as_str());
            let labels = &node.metadata.labels;
            let plain = node.status.allocatable.get(&res).and_then(Quantity::value);
            // The physical count, when the node tells it apart from the advertised one.
            let physical = if let Some(c) = labels.get(GPU_COUNT_LABEL) {
                c.parse::<i64>().ok()
            } else if target != r.name && !node.status.allocatable.contains_key(&target_res) {
                // The plugin drops the plain name once it advertises the renamed one: a node
                // still listing only the plain name lists its physical GPUs.
                plain
            } else {
                // A live node's allocatable already holds `replicas × GPUs` (the plugin
                // advertises every replica); multiplying again would count them twice.
                None
            };
            if let Some(physical) = physical {
                let Some(total) = physical.checked_mul(r.replicas.max(1)) else {
                    continue;
                };
                let Some(q) = Quantity::from_decimal(i128::from(total), 0) else {
                    continue;
                };
                for list in [&mut node.status.allocatable, &mut node.status.capacity] {
                    if target != r.name {
                        list.remove(&res);
                    }
                    list.insert(target_res.clone(), q);
                }
            } else if !node.status.allocatable.contains_key(&target_res) {
                continue; // nothing advertised and nothing to derive it from
            }
            node.metadata
                .labels
                .insert(REPLICAS_LABEL.to_owned(), r.replicas.to_string());
            node.metadata
                .labels
                .insert(STRATEGY_LABEL.to_owned(), strategy.to_owned());
        }
    }
    // Isolation: departments sharing one node's GPU replicas.
    let mut by_node: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for pod in model.pods.values() {
        let Some(n) = pod.spec.node_name.as_deref() else {
            continue;
        };
        if !shared_nodes.contains(n) {
            continue;
        }
        let running = pod
            .status
            .as_ref()
            .and_then(|s| s.phase.as_deref())
            .is_none_or(|p| p == "Running");
        if !running {
            continue;
        }
        let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
        let dept = model
            .namespaces
            .get(ns)
            .and_then(|n| n.metadata.labels.get(DEPARTMENT_LABEL).cloned())
            .unwrap_or_else(|| ns.to_owned());
        by_node.entry(n).or_default().insert(dept);
    }
    for (node, depts) in by_node {
        if depts.len() > 1 {
            let list: Vec<&str> = depts.iter().map(String::as_str).collect();
            warnings.push(
                None,
                codes::NO_ISOLATION,
                "Node",
                node,
                format!(
                    "GPUs shared by the device plugin (ConfigMap {cm_key}) run pods of \
                     departments {}; replicas of one GPU have no memory or fault isolation",
                    list.join(", ")
                ),
            );
        }
    }
}

/// Replicas per physical GPU of time-slicing or MPS: by node, and for nodes the files do
/// not list (which carry no configuration label as far as the files tell).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReplicasPerGpu {
    /// Per node the files list: its replicas, or `None` when it does not share GPUs.
    pub by_node: BTreeMap<String, Option<u64>>,
    /// The configuration a node without the `nvidia.com/device-plugin.config` label gets
    /// (the key `default`, else the only key), if it shares GPUs.
    pub default: Option<u64>,
}

impl ReplicasPerGpu {
    /// The replicas per GPU of node `node`: its own, else the default configuration's.
    pub fn of(&self, node: &str) -> Option<u64> {
        match self.by_node.get(node) {
            Some(v) => *v,
            None => self.default,
        }
    }
}

/// The `nvidia.com/gpu` replicas of a configuration (the first resource when none is named
/// `nvidia.com/gpu`), if it shares GPUs.
fn config_replicas(cfg: &PluginConfig) -> Option<u64> {
    let (_, rr) = cfg.strategy()?;
    let r = rr
        .resources
        .iter()
        .find(|r| r.name == "nvidia.com/gpu")
        .or_else(|| rr.resources.first())?;
    u64::try_from(r.replicas).ok().filter(|n| *n >= 1)
}

/// The replicas per GPU the device plugin advertises on each node, for metering: a node's
/// `nvidia.com/gpu.replicas` label (set by the plugin, or by the import from the
/// configuration), else the configuration its `nvidia.com/device-plugin.config` label names,
/// else the default configuration (key `default`, else the only key). Nodes whose
/// configuration shares nothing have no value.
///
/// # Complexity
/// `O(nodes)` after the `O(c)` parse of the ConfigMaps.
pub fn replicas_per_gpu(model: &Model) -> ReplicasPerGpu {
    let all = configs(model);
    let keys = all.into_iter().next().map(|(_, k)| k).unwrap_or_default();
    let default_cfg = keys
        .get("default")
        .or_else(|| (keys.len() == 1).then(|| keys.values().next()).flatten());
    let mut out = ReplicasPerGpu {
        default: default_cfg.and_then(config_replicas),
        ..ReplicasPerGpu::default()
    };
    for (name, node) in &model.nodes {
        let labelled = node
            .metadata
            .labels
            .get(REPLICAS_LABEL)
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|n| *n >= 1);
        let from_config = match node.metadata.labels.get(CONFIG_LABEL) {
            Some(k) => keys.get(k).and_then(config_replicas),
            None => default_cfg.and_then(config_replicas),
        };
        // A node the files list without shared GPUs gets no value (not the default's).
        out.by_node
            .insert(name.clone(), labelled.or(from_config).filter(|n| *n > 1));
    }
    out
}

/// The HAMi resource names requested or limited anywhere in `v`: under a `requests` or
/// `limits` map of any depth (containers of a Pod, of a pod template, of a Kueue PodSet).
#[cfg(feature = "serde")]
fn hami_names(v: &serde_json::Value, out: &mut BTreeSet<&'static str>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                if (k == "requests" || k == "limits")
                    && let serde_json::Value::Object(r) = x
                {
                    out.extend(HAMI_RESOURCES.iter().filter(|n| r.contains_key(**n)));
                }
                hami_names(x, out);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| hami_names(x, out)),
        _ => {}
    }
}

/// One warning per Pod, Kueue Workload and workload object that requests HAMi vGPU
/// resources ([`HAMI_NOT_MODELLED`]), naming the resources.
///
/// # Complexity
/// `O(size of the objects)`.
#[cfg(feature = "serde")]
fn warn_hami(model: &Model, warnings: &mut Warnings) {
    let mut push =
        |kind: &str, name: &str, origin: Option<&super::Origin>, v: serde_json::Value| {
            let mut found = BTreeSet::new();
            hami_names(&v, &mut found);
            if found.is_empty() {
                return;
            }
            let names: Vec<&str> = found.into_iter().collect();
            warnings.push(
                origin,
                HAMI_NOT_MODELLED,
                kind,
                name,
                format!(
                    "HAMi vGPU resources {} are not modelled: each nvidia.com/gpu it asks for \
                 counts as a whole GPU, not as the share of a card HAMi gives it",
                    names.join(", ")
                ),
            );
        };
    for (key, pod) in &model.pods {
        push(
            "Pod",
            key,
            None,
            serde_json::to_value(&pod.spec).unwrap_or_default(),
        );
    }
    for (key, wl) in &model.workloads {
        push(
            "Workload",
            key,
            None,
            serde_json::to_value(&wl.spec).unwrap_or_default(),
        );
    }
    for o in model.workload_objects.values() {
        push(
            o.kind.as_str(),
            &o.ns_name(),
            o.origin.as_ref(),
            o.spec.as_value().clone(),
        );
    }
}
