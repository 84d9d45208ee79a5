//! mig-parted configs as input: parsing (`version: v1`, `mig-configs`), validation of every
//! named config against the catalogue, and the layout a node's `nvidia.com/mig.config` label
//! gives its GPUs.
//!
//! The format is mig-parted's `api/spec/v1` (`NVIDIA/mig-parted: api/spec/v1/spec.go`): a
//! config name maps to a list of entries; an entry applies to the GPUs that match its
//! `device-filter` (one PCI `0xDDDDVVVV` id or a list; absent = every GPU) and its `devices`
//! (`all` or a list of indices); `mig-enabled: false` entries must not list `mig-devices`.
//! Entries are walked in order, as `NVIDIA/mig-parted: pkg/mig/config/config.go` does, so a
//! later entry that selects the same GPU overrides an earlier one.

use indexmap::IndexMap;

use crate::catalogue::{Catalogue, GpuModel};
use crate::layout::Layout;

/// A mig-parted config file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub struct MigPartedConfig {
    /// Must be `v1`.
    pub version: String,
    /// Named configs, in file order.
    pub mig_configs: IndexMap<String, Vec<ConfigEntry>>,
}

/// One entry of a named config.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub struct ConfigEntry {
    /// PCI `device+vendor` ids the entry applies to; absent = every GPU.
    #[cfg_attr(feature = "serde", serde(default))]
    pub device_filter: Option<DeviceFilter>,
    /// `all` or a list of GPU indices.
    pub devices: Devices,
    /// Whether MIG is on.
    pub mig_enabled: bool,
    /// Profile name → count.
    #[cfg_attr(feature = "serde", serde(default))]
    pub mig_devices: Option<IndexMap<String, u32>>,
}

/// `device-filter`: one id or a list.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(untagged))]
pub enum DeviceFilter {
    /// One id.
    One(String),
    /// Several ids.
    Many(Vec<String>),
}

impl DeviceFilter {
    /// The ids.
    pub fn ids(&self) -> Vec<&str> {
        match self {
            DeviceFilter::One(s) => vec![s.as_str()],
            DeviceFilter::Many(v) => v.iter().map(String::as_str).collect(),
        }
    }
}

/// `devices`: `all` or indices.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(untagged))]
pub enum Devices {
    /// The word `all` (anything else is reported by [`validate_config`]).
    All(String),
    /// GPU indices.
    List(Vec<u32>),
}

impl Devices {
    fn selects(&self, index: u32) -> bool {
        match self {
            Devices::All(_) => true,
            Devices::List(v) => v.contains(&index),
        }
    }
}

impl ConfigEntry {
    /// Whether the entry applies to GPU `index` of `model` (matching a device-filter id
    /// against the model's PCI ids, case-insensitively).
    pub fn applies(&self, model: &GpuModel, index: u32) -> bool {
        self.devices.selects(index)
            && self.device_filter.as_ref().is_none_or(|f| {
                f.ids().iter().any(|id| {
                    model
                        .pci_device_ids()
                        .iter()
                        .any(|m| m.eq_ignore_ascii_case(id.trim()))
                })
            })
    }
}

/// What a config gives one GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GpuSetting {
    /// No entry selects the GPU: mig-parted leaves it alone.
    Untouched,
    /// MIG disabled.
    Disabled,
    /// MIG enabled with this layout (the first valid placement of the profile counts in the
    /// catalogue's layout order: mig-parted lets the driver place instances).
    Layout(Layout),
}

/// A problem with a config entry, naming the config and entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("mig-configs.{config}[{entry}]: {reason}")]
pub struct ConfigProblem {
    /// Config name.
    pub config: String,
    /// Zero-based entry.
    pub entry: usize,
    /// What is wrong.
    pub reason: String,
    /// Whether it is only a warning (a device id the catalogue does not know).
    pub warning: bool,
}

/// The layout with exactly these profile counts on `model`, or why there is none.
///
/// # Errors
/// The first profile the model lacks, or that no valid layout has these counts.
///
/// # Complexity
/// O(|layouts| · profiles), about 2,319 × 7 on 7-slice GPUs.
pub fn layout_for(model: &GpuModel, devices: &IndexMap<String, u32>) -> Result<Layout, String> {
    let mut want = vec![0u32; model.profiles().len()];
    for (name, count) in devices {
        let p = model
            .profile(name)
            .map_err(|_| format!("{} has no profile {name:?}", model.name()))?;
        want[usize::from(p.index().0)] += count;
    }
    model
        .layouts()
        .iter()
        .find(|l| {
            let mut c = vec![0u32; want.len()];
            for i in l.instances() {
                c[usize::from(i.profile.0)] += 1;
            }
            c == want
        })
        .cloned()
        .ok_or_else(|| {
            let listed: Vec<String> = devices.iter().map(|(n, c)| format!("{c} x {n}")).collect();
            format!("{} does not fit on {}", listed.join(" + "), model.name())
        })
}

/// Checks every named config against `catalogue`: the version, `devices`, `mig-enabled`
/// against `mig-devices`, and that each entry's profile counts form a valid layout on every
/// model its device filter names (on at least one catalogue model when it has no filter).
///
/// # Complexity
/// O(entries · models · |layouts|).
pub fn validate_config(catalogue: &Catalogue, config: &MigPartedConfig) -> Vec<ConfigProblem> {
    let mut out = Vec::new();
    if config.version != "v1" {
        out.push(ConfigProblem {
            config: String::new(),
            entry: 0,
            reason: format!("version {:?}: only v1 is defined", config.version),
            warning: false,
        });
    }
    for (name, entries) in &config.mig_configs {
        let mut push = |entry: usize, reason: String, warning: bool| {
            out.push(ConfigProblem {
                config: name.clone(),
                entry,
                reason,
                warning,
            })
        };
        if entries.is_empty() {
            push(0, "a config needs at least one entry".into(), false);
        }
        for (i, e) in entries.iter().enumerate() {
            if let Devices::All(s) = &e.devices
                && s != "all"
            {
                push(
                    i,
                    format!("devices {s:?}: expected `all` or a list of indices"),
                    false,
                );
            }
            let devices = match (&e.mig_devices, e.mig_enabled) {
                (Some(d), false) if !d.is_empty() => {
                    push(i, "mig-devices given with mig-enabled: false".into(), false);
                    continue;
                }
                (_, false) => continue,
                (None, true) => {
                    push(i, "mig-enabled: true needs mig-devices".into(), false);
                    continue;
                }
                (Some(d), true) => d,
            };
            let models: Vec<&GpuModel> = match &e.device_filter {
                Some(f) => {
                    let mut v = Vec::new();
                    for id in f.ids() {
                        let found: Vec<&GpuModel> = catalogue
                            .models()
                            .iter()
                            .filter(|m| {
                                m.pci_device_ids()
                                    .iter()
                                    .any(|x| x.eq_ignore_ascii_case(id.trim()))
                            })
                            .collect();
                        if found.is_empty() {
                            push(
                                i,
                                format!("device-filter {id}: no catalogue model has this id"),
                                true,
                            );
                        }
                        for m in found {
                            if !v.iter().any(|x: &&GpuModel| x.index() == m.index()) {
                                v.push(m);
                            }
                        }
                    }
                    for m in &v {
                        if let Err(reason) = layout_for(m, devices) {
                            push(i, reason, false);
                        }
                    }
                    continue;
                }
                None => catalogue.models().iter().collect(),
            };
            let mut first_reason = None;
            let fits = models.iter().any(|m| match layout_for(m, devices) {
                Ok(_) => true,
                Err(r) => {
                    // Prefer a reason from a model that has every named profile.
                    let has_all = devices.keys().all(|n| m.profile(n).is_ok());
                    if has_all && first_reason.is_none() {
                        first_reason = Some(r);
                    }
                    false
                }
            });
            if !fits {
                let listed: Vec<String> =
                    devices.iter().map(|(n, c)| format!("{c} x {n}")).collect();
                push(
                    i,
                    first_reason.unwrap_or_else(|| {
                        format!(
                            "no catalogue model has every profile of {}",
                            listed.join(" + ")
                        )
                    }),
                    false,
                );
            }
        }
    }
    out
}

/// What config `name` gives GPU `index` of `model`: the last entry that selects it wins.
///
/// # Errors
/// The config is not defined, or the selected entry does not fit the model.
pub fn setting(
    config: &MigPartedConfig,
    name: &str,
    model: &GpuModel,
    index: u32,
) -> Result<GpuSetting, String> {
    let entries = config
        .mig_configs
        .get(name)
        .ok_or_else(|| format!("mig-parted config {name:?} is not defined"))?;
    let mut out = GpuSetting::Untouched;
    for e in entries.iter().filter(|e| e.applies(model, index)) {
        out = match (&e.mig_devices, e.mig_enabled) {
            (_, false) => GpuSetting::Disabled,
            (None, true) => GpuSetting::Layout(Layout::from_sorted(Vec::new())),
            (Some(d), true) => GpuSetting::Layout(layout_for(model, d)?),
        };
    }
    Ok(out)
}
