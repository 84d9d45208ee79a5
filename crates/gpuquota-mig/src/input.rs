//! The planning input (`gpuquota mig plan FILE`) and its validation against a catalogue.

use indexmap::IndexMap;

use crate::catalogue::{Catalogue, GpuModel, ProfileIndex};
#[cfg(feature = "yaml")]
use crate::documents::read_documents;
use crate::layout::{Instance, Layout, LayoutProblem, check};

/// Which instances the planner must leave alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum Mode {
    /// A GPU with any busy instance keeps its whole layout (GPU operator MIG manager
    /// semantics: a busy GPU cannot be re-cut).
    #[default]
    KeepBusyGpus,
    /// Busy instances stay at their placement; free units may be re-cut (dynamic MIG,
    /// re-cut around busy instances).
    PinBusyInstances,
}

/// How a demand's weight is derived when the demand does not give one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum WeightPolicy {
    /// Every instance weighs 1.
    #[default]
    Count,
    /// An instance weighs its profile's compute slices.
    ComputeSlices,
    /// An instance weighs its profile's memory slices (the smallest, if the name has different
    /// footprints on the models of the input).
    MemorySlices,
}

/// The planning input, as the CLI reads it (YAML or JSON).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub struct PlanRequest {
    /// Which instances must stay.
    #[cfg_attr(feature = "serde", serde(default))]
    pub mode: Mode,
    /// The default weight of a demand.
    #[cfg_attr(feature = "serde", serde(default))]
    pub weights: WeightPolicy,
    /// The GPUs and their current layouts.
    #[cfg_attr(feature = "serde", serde(default))]
    pub gpus: Vec<GpuSpec>,
    /// Demand per resource name.
    #[cfg_attr(feature = "serde", serde(default))]
    pub demand: Vec<DemandSpec>,
    /// Nodes given by their labels: each GPU's current layout comes from the node's
    /// `nvidia.com/mig.config` label and the mig-parted config of the input.
    #[cfg_attr(feature = "serde", serde(default))]
    pub nodes: Vec<NodeSpec>,
    /// The mig-parted configs that came with the input (other documents of the file).
    #[cfg_attr(feature = "serde", serde(skip))]
    pub mig_parted: Vec<crate::parted::MigPartedConfig>,
}

/// A node given by its labels, as GPU Feature Discovery and the GPU operator's MIG manager
/// write them: `nvidia.com/gpu.product` (the model), `nvidia.com/gpu.count` (GPUs, as the
/// `mixed` and `none` strategies count them) and `nvidia.com/mig.config` (the named
/// mig-parted config applied; absent = `all-disabled`, the ClusterPolicy default).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub struct NodeSpec {
    /// Node name.
    pub name: String,
    /// Node labels (strings, as Kubernetes stores them).
    #[cfg_attr(feature = "serde", serde(default))]
    pub labels: IndexMap<String, String>,
}

/// One GPU of the input.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub struct GpuSpec {
    /// Node name.
    pub node: String,
    /// GPU index on the node.
    pub index: u32,
    /// Catalogue model name, `nvidia.com/gpu.product` value or nvidia-smi product name.
    pub model: String,
    /// The current layout; `[]` = MIG enabled with no instances; absent = MIG disabled.
    #[cfg_attr(feature = "serde", serde(default))]
    pub instances: Option<Vec<InstanceSpec>>,
    /// For a MIG-disabled GPU: whether a workload holds the whole GPU.
    #[cfg_attr(feature = "serde", serde(default))]
    pub busy: bool,
}

/// One current instance.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub struct InstanceSpec {
    /// Profile name (`3g.20gb`), resource name or NVML id.
    pub profile: String,
    /// Start unit in the driver's grid.
    pub start: u8,
    /// Whether a workload runs on it.
    #[cfg_attr(feature = "serde", serde(default))]
    pub busy: bool,
}

/// One demand line.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub struct DemandSpec {
    /// Resource name (`nvidia.com/mig-2g.10gb`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub resource: Option<String>,
    /// Or a profile name (`2g.10gb`), turned into its resource name.
    #[cfg_attr(feature = "serde", serde(default))]
    pub profile: Option<String>,
    /// Number of instances wanted.
    pub count: u32,
    /// Weight per instance (overrides the policy), at least 1.
    #[cfg_attr(feature = "serde", serde(default))]
    pub weight: Option<u64>,
}

/// A problem in the planning input, naming the GPU (node, index) or demand line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// The file did not parse.
    #[error("{0}")]
    Parse(String),
    /// The model is not in the catalogue.
    #[error("node {node} GPU {index}: unknown GPU model {model:?}")]
    UnknownModel {
        /// Node.
        node: String,
        /// GPU index.
        index: u32,
        /// Model as written.
        model: String,
    },
    /// The profile is not a profile of the GPU's model.
    #[error("node {node} GPU {index}: model {model} has no MIG profile {profile:?}")]
    UnknownProfile {
        /// Node.
        node: String,
        /// GPU index.
        index: u32,
        /// Catalogue model name.
        model: String,
        /// Profile as written.
        profile: String,
    },
    /// The current layout breaks a driver rule.
    #[error("node {node} GPU {index}: {problem}")]
    Layout {
        /// Node.
        node: String,
        /// GPU index.
        index: u32,
        /// The rule broken (names the profile and start).
        problem: LayoutProblem,
    },
    /// `busy: true` on a GPU whose MIG is enabled (mark its instances busy instead).
    #[error(
        "node {node} GPU {index}: busy applies to MIG-disabled GPUs only; mark the instances busy"
    )]
    BusyMigGpu {
        /// Node.
        node: String,
        /// GPU index.
        index: u32,
    },
    /// The same (node, index) twice.
    #[error("node {node} GPU {index}: listed twice")]
    DuplicateGpu {
        /// Node.
        node: String,
        /// GPU index.
        index: u32,
    },
    /// A node given by labels cannot be expanded into GPUs.
    #[error("node {node}: {reason}")]
    Node {
        /// Node name.
        node: String,
        /// What is wrong.
        reason: String,
    },
    /// A demand line is malformed.
    #[error("demand[{line}]: {reason}")]
    Demand {
        /// Zero-based position in `demand`.
        line: usize,
        /// What is wrong.
        reason: String,
    },
}

/// One GPU after validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedGpu<'c> {
    /// Node.
    pub node: String,
    /// GPU index on the node.
    pub index: u32,
    /// The model.
    pub model: &'c GpuModel,
    /// The current layout (`None` = MIG disabled).
    pub current: Option<Layout>,
    /// The busy instances of the current layout.
    pub busy: Vec<Instance>,
    /// A MIG-disabled GPU held whole by a workload.
    pub whole_busy: bool,
}

impl ResolvedGpu<'_> {
    /// Whether anything runs on the GPU.
    pub fn is_busy(&self) -> bool {
        self.whole_busy || !self.busy.is_empty()
    }
}

/// One demanded resource after merging lines with the same resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedDemand {
    /// Resource name.
    pub resource: String,
    /// Instances wanted.
    pub count: u32,
    /// Weight per instance.
    pub weight: u64,
}

/// A validated planning instance: what [`crate::run`] solves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanInstance<'c> {
    /// Which instances stay.
    pub mode: Mode,
    /// GPUs in input order.
    pub gpus: Vec<ResolvedGpu<'c>>,
    /// Demand in first-appearance order.
    pub demand: Vec<ResolvedDemand>,
}

impl PlanRequest {
    /// Parses YAML (or JSON) and returns the request with the paths of unknown fields and the
    /// lines of skipped documents (a kind mig commands do not read, a ConfigMap with no
    /// mig-parted config), which the caller may warn about (see
    /// [`crate::file_check::unknown_diagnostics`]). Other documents of the
    /// input are read as [`crate::read_documents`] does: mig-parted configs (bare or in a
    /// ConfigMap) are attached to the request, `Node` objects become [`NodeSpec`]s.
    ///
    /// # Errors
    /// [`InputError::Parse`] with the parser's message and the field path.
    #[cfg(feature = "yaml")]
    pub fn from_yaml(text: &str) -> Result<(PlanRequest, Vec<String>, Vec<String>), InputError> {
        let docs = read_documents(text)?;
        let Some(mut req) = docs.request else {
            return Err(InputError::Parse(
                "no planning input: expected a mapping with `gpus` (or `nodes`) and `demand`"
                    .into(),
            ));
        };
        req.mig_parted = docs.configs;
        Ok((req, docs.unknown_fields, docs.skipped))
    }

    /// Validates the request against `catalogue`, reporting every problem.
    ///
    /// # Errors
    /// Every [`InputError`] found, GPUs first (in input order), then demand lines.
    ///
    /// # Complexity
    /// O(G · n² + D) for G GPUs of at most n instances and D demand lines.
    pub fn resolve<'c>(
        &self,
        catalogue: &'c Catalogue,
    ) -> Result<PlanInstance<'c>, Vec<InputError>> {
        let mut errors = Vec::new();
        let mut gpus = Vec::with_capacity(self.gpus.len());
        let mut seen = std::collections::BTreeSet::new();
        for g in &self.gpus {
            if !seen.insert((g.node.clone(), g.index)) {
                errors.push(InputError::DuplicateGpu {
                    node: g.node.clone(),
                    index: g.index,
                });
            }
            match resolve_gpu(catalogue, g) {
                Ok(r) => gpus.push(r),
                Err(mut e) => errors.append(&mut e),
            }
        }
        for node in &self.nodes {
            match self.node_gpus(catalogue, node) {
                Ok(specs) => {
                    for g in &specs {
                        if !seen.insert((g.node.clone(), g.index)) {
                            errors.push(InputError::DuplicateGpu {
                                node: g.node.clone(),
                                index: g.index,
                            });
                        }
                    }
                    for g in specs {
                        match resolve_gpu(catalogue, &g) {
                            Ok(r) => gpus.push(r),
                            Err(mut e) => errors.append(&mut e),
                        }
                    }
                }
                Err(e) => errors.push(e),
            }
        }
        let mut demand: IndexMap<String, ResolvedDemand> = IndexMap::new();
        let models: Vec<&GpuModel> = gpus.iter().map(|g| g.model).collect();
        for (line, d) in self.demand.iter().enumerate() {
            let resource = match (&d.resource, &d.profile) {
                // The device plugin writes `+` as `.` in resource names.
                (Some(r), None) => r.trim().replace('+', "."),
                (None, Some(p)) => crate::catalogue::resource_name(p.trim()),
                _ => {
                    errors.push(InputError::Demand {
                        line,
                        reason: "give exactly one of resource and profile".into(),
                    });
                    continue;
                }
            };
            let known = catalogue
                .models()
                .iter()
                .any(|m| m.profiles().iter().any(|p| p.resource_name() == resource));
            if resource.starts_with("nvidia.com/mig-") && !known {
                errors.push(InputError::Demand {
                    line,
                    reason: format!("{resource:?} is not the resource of any catalogue profile"),
                });
                continue;
            }
            if !resource.starts_with("nvidia.com/mig-") {
                errors.push(InputError::Demand {
                    line,
                    reason: format!(
                        "{resource:?} is not a MIG resource name (nvidia.com/mig-<profile>)"
                    ),
                });
                continue;
            }
            let weight = match d.weight {
                Some(0) => {
                    errors.push(InputError::Demand {
                        line,
                        reason: "weight must be at least 1".into(),
                    });
                    continue;
                }
                Some(w) => w,
                None => policy_weight(self.weights, &resource, &models),
            };
            match demand.get_mut(&resource) {
                Some(prev) if prev.weight != weight => errors.push(InputError::Demand {
                    line,
                    reason: format!(
                        "{resource} appears again with weight {weight} (earlier {})",
                        prev.weight
                    ),
                }),
                Some(prev) => match prev.count.checked_add(d.count) {
                    Some(c) => prev.count = c,
                    None => errors.push(InputError::Demand {
                        line,
                        reason: "count overflows".into(),
                    }),
                },
                None => {
                    demand.insert(
                        resource.clone(),
                        ResolvedDemand {
                            resource,
                            count: d.count,
                            weight,
                        },
                    );
                }
            }
        }
        if errors.is_empty() {
            Ok(PlanInstance {
                mode: self.mode,
                gpus,
                demand: demand.into_values().collect(),
            })
        } else {
            Err(errors)
        }
    }
}

impl PlanRequest {
    /// The GPUs a labelled node has, with the layouts its `nvidia.com/mig.config` gives.
    fn node_gpus(
        &self,
        catalogue: &Catalogue,
        node: &NodeSpec,
    ) -> Result<Vec<GpuSpec>, InputError> {
        let err = |reason: String| InputError::Node {
            node: node.name.clone(),
            reason,
        };
        let product = node
            .labels
            .get("nvidia.com/gpu.product")
            .ok_or_else(|| err("label nvidia.com/gpu.product missing".into()))?;
        let count: u32 = node
            .labels
            .get("nvidia.com/gpu.count")
            .ok_or_else(|| err("label nvidia.com/gpu.count missing".into()))?
            .trim()
            .parse()
            .map_err(|_| err("label nvidia.com/gpu.count is not a count".into()))?;
        if count > 64 {
            return Err(err(format!(
                "nvidia.com/gpu.count {count}: at most 64 GPUs per node"
            )));
        }
        let model = catalogue
            .resolve(product)
            .map_err(|_| err(format!("unknown GPU model {product:?}")))?;
        let config = node.labels.get("nvidia.com/mig.config").map(|s| s.trim());
        let mut out = Vec::with_capacity(count as usize);
        for index in 0..count {
            let setting = match config {
                None | Some("all-disabled") if self.mig_parted.is_empty() => {
                    crate::parted::GpuSetting::Disabled
                }
                None => crate::parted::GpuSetting::Disabled,
                Some(name) => {
                    let Some(cfg) = self
                        .mig_parted
                        .iter()
                        .rev()
                        .find(|c| c.mig_configs.contains_key(name))
                    else {
                        return Err(err(format!(
                            "nvidia.com/mig.config {name:?}: no mig-parted config of the input defines it"
                        )));
                    };
                    crate::parted::setting(cfg, name, model, index)
                        .map_err(|e| err(format!("GPU {index}: {e}")))?
                }
            };
            let instances = match setting {
                crate::parted::GpuSetting::Layout(l) => Some(
                    l.instances()
                        .iter()
                        .map(|i| InstanceSpec {
                            profile: model
                                .profile_at(i.profile)
                                .map_or_else(String::new, |p| p.name().to_owned()),
                            start: i.start,
                            busy: false,
                        })
                        .collect(),
                ),
                _ => None,
            };
            out.push(GpuSpec {
                node: node.name.clone(),
                index,
                model: model.name().to_owned(),
                instances,
                busy: false,
            });
        }
        Ok(out)
    }
}

fn policy_weight(policy: WeightPolicy, resource: &str, models: &[&GpuModel]) -> u64 {
    let profiles = models
        .iter()
        .filter_map(|m| m.profiles().iter().find(|p| p.resource_name() == resource));
    let w = match policy {
        WeightPolicy::Count => Some(1),
        WeightPolicy::ComputeSlices => profiles
            .map(|p| u64::from(p.compute_slices()))
            .min()
            .or_else(|| {
                // Not on any model of the input: the `Ng` of the name (it cannot be served anyway).
                let name = resource.trim_start_matches("nvidia.com/mig-");
                name.split('g').next().and_then(|n| n.parse().ok())
            }),
        WeightPolicy::MemorySlices => profiles.map(|p| u64::from(p.memory_slices())).min(),
    };
    w.unwrap_or(1).max(1)
}

fn resolve_gpu<'c>(
    catalogue: &'c Catalogue,
    g: &GpuSpec,
) -> Result<ResolvedGpu<'c>, Vec<InputError>> {
    let model = catalogue.resolve(&g.model).map_err(|_| {
        vec![InputError::UnknownModel {
            node: g.node.clone(),
            index: g.index,
            model: g.model.clone(),
        }]
    })?;
    let Some(specs) = &g.instances else {
        return Ok(ResolvedGpu {
            node: g.node.clone(),
            index: g.index,
            model,
            current: None,
            busy: Vec::new(),
            whole_busy: g.busy,
        });
    };
    let mut errors = Vec::new();
    if g.busy {
        errors.push(InputError::BusyMigGpu {
            node: g.node.clone(),
            index: g.index,
        });
    }
    let mut instances = Vec::with_capacity(specs.len());
    let mut busy = Vec::new();
    for s in specs {
        match model.profile(&s.profile) {
            Ok(p) => {
                let i = Instance {
                    start: s.start,
                    profile: p.index(),
                };
                instances.push(i);
                if s.busy {
                    busy.push(i);
                }
            }
            Err(_) => errors.push(InputError::UnknownProfile {
                node: g.node.clone(),
                index: g.index,
                model: model.name().to_owned(),
                profile: s.profile.clone(),
            }),
        }
    }
    for problem in check(model, &instances) {
        errors.push(InputError::Layout {
            node: g.node.clone(),
            index: g.index,
            problem,
        });
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    instances.sort();
    busy.sort();
    Ok(ResolvedGpu {
        node: g.node.clone(),
        index: g.index,
        model,
        current: Some(Layout::from_sorted(instances)),
        busy,
        whole_busy: false,
    })
}

/// A profile index paired with its model, for callers that build inputs programmatically.
pub fn instance(model: &GpuModel, profile: &str, start: u8) -> Option<Instance> {
    model
        .profile(profile)
        .ok()
        .map(|p: &crate::catalogue::Profile| Instance {
            start,
            profile: ProfileIndex(p.index().0),
        })
}
