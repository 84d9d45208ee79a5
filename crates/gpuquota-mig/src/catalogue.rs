//! The MIG catalogue: GPU models, their profiles and the placements the driver allows.
//!
//! The built-in catalogue is `data/mig-profiles.json` (profiles and placements from NVIDIA's MIG
//! user guide), embedded with `include_str!` and parsed once. Profiles are keyed by model and NVML
//! profile id; profile names are display aliases, because the same name means different footprints
//! on different models (`1g.10gb` is one memory slice on A100-80GB and two on A100-40GB).

use std::fmt;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::layout::Layout;

/// The embedded profile table.
const BUILTIN_JSON: &str = include_str!("../data/mig-profiles.json");

/// An error loading a catalogue or resolving a name in it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogueError {
    /// The catalogue JSON did not parse.
    #[error("catalogue JSON: {0}")]
    Json(String),
    /// A model in the catalogue is inconsistent (placement outside the grid, too many units...).
    #[error("catalogue model {model:?}: {reason}")]
    Invalid {
        /// The model's catalogue name.
        model: String,
        /// What is wrong.
        reason: String,
    },
    /// No model matches the name, product label value or nvidia-smi product name.
    #[error(
        "unknown GPU model {0:?} (not a catalogue model, `nvidia.com/gpu.product` value or nvidia-smi name)"
    )]
    UnknownModel(String),
    /// The model has no profile of that name, resource name or id.
    #[error("GPU model {model:?} has no MIG profile {profile:?}")]
    UnknownProfile {
        /// The model's catalogue name.
        model: String,
        /// The profile as written.
        profile: String,
    },
}

/// Dense index of a model in its catalogue (catalogue order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ModelIndex(pub u16);

/// Dense index of a profile within its model (catalogue order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ProfileIndex(pub u8);

/// A half-open interval `[start, start + size)` of placement units, in the driver's units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Placement {
    /// First unit.
    pub start: u8,
    /// Number of units.
    pub size: u8,
}

impl Placement {
    /// The units as a bitmask (bit `i` = unit `i`); the grid has at most 16 units.
    pub fn mask(self) -> u16 {
        let ones = if self.size >= 16 {
            u16::MAX
        } else {
            (1u16 << self.size) - 1
        };
        ones.checked_shl(u32::from(self.start)).unwrap_or(0)
    }
}

/// The media variant a profile name's suffix declares (MIG User Guide, Universal MIG).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MediaVariant {
    /// No suffix.
    Plain,
    /// `+me`: at least one media engine, holds the OFA.
    Me,
    /// `+me.all`: all media engines and the OFA; only `-me` profiles may sit beside it.
    MeAll,
    /// `-me`: compute only, no media engines.
    NoMe,
    /// `+gfx`: graphics APIs inside the instance.
    Gfx,
}

impl MediaVariant {
    fn of(name: &str) -> Self {
        if name.ends_with("+me.all") {
            MediaVariant::MeAll
        } else if name.ends_with("+me") {
            MediaVariant::Me
        } else if name.ends_with("-me") {
            MediaVariant::NoMe
        } else if name.ends_with("+gfx") {
            MediaVariant::Gfx
        } else {
            MediaVariant::Plain
        }
    }
}

/// Engine counters of one GPU or one profile: `[ofa, nvdec, nvenc, nvjpg, media]`.
///
/// `media` is a synthetic counter encoding the `+me.all` rule: every profile that is not `-me`
/// uses 1, a `+me.all` profile uses [`Engines::MEDIA_ALL`], and a GPU has capacity
/// `MEDIA_ALL`, so `+me.all` fits only beside `-me` profiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Engines(pub [u8; 5]);

impl Engines {
    /// Engine names, in counter order.
    pub const NAMES: [&'static str; 5] = ["ofa", "nvdec", "nvenc", "nvjpg", "media"];
    /// The `media` use of a `+me.all` profile and the `media` capacity of every GPU.
    pub const MEDIA_ALL: u8 = 16;
    /// Capacity used for counters the catalogue does not limit.
    pub const UNLIMITED: u8 = u8::MAX;
}

/// How a card's capacity is split when a MIG instance is charged as a fraction of its card
/// (chargeback weights).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CardFraction {
    /// (a) `1 / max_instances`.
    PerMaxInstances,
    /// (b) `compute_slices / model compute_slices` (sub-additive on every valid layout).
    ComputeSlices,
    /// (c) `memory_slices / model memory_slices` (sub-additive on every valid layout).
    MemorySlices,
}

/// One MIG GPU-instance profile of one model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    index: ProfileIndex,
    name: String,
    resource: String,
    id: Option<u32>,
    compute_slices: u8,
    memory_slices: u8,
    max_instances: u8,
    placements: Vec<Placement>,
    media: MediaVariant,
    engines: Engines,
    memory_gb_nominal: u32,
    sms: Option<u32>,
    model_compute_slices: u8,
    model_memory_slices: u8,
    unconfirmed: bool,
    unconfirmed_fields: Vec<String>,
    legacy_names: Vec<String>,
}

impl Profile {
    /// Index within the model.
    pub fn index(&self) -> ProfileIndex {
        self.index
    }
    /// The profile name as `nvidia-smi` prints it (`1g.24gb+me.all`).
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The Kubernetes resource name under the device plugin's `mixed` strategy:
    /// `nvidia.com/mig-` + name with `+` replaced by `.` (`nvidia.com/mig-1g.24gb.me.all`).
    pub fn resource_name(&self) -> &str {
        &self.resource
    }
    /// NVML profile id (`None` where the catalogue does not know it: RTX PRO 5000/4500, Thor).
    pub fn id(&self) -> Option<u32> {
        self.id
    }
    /// Compute slices (the `N` of `Ng`).
    pub fn compute_slices(&self) -> u8 {
        self.compute_slices
    }
    /// Memory slices (fraction of memory in the model's `memory_slices`).
    pub fn memory_slices(&self) -> u8 {
        self.memory_slices
    }
    /// Documented maximum number of instances of this profile on one GPU.
    pub fn max_instances(&self) -> u8 {
        self.max_instances
    }
    /// Allowed placements in the driver's units, exactly as the catalogue gives them.
    pub fn placements(&self) -> &[Placement] {
        &self.placements
    }
    /// Size in placement units (all placements of a profile have one size).
    pub fn size(&self) -> u8 {
        self.placements.first().map_or(0, |p| p.size)
    }
    /// The media variant of the name's suffix.
    pub fn media(&self) -> MediaVariant {
        self.media
    }
    /// Engine use (see [`Engines`]).
    pub fn engines(&self) -> Engines {
        self.engines
    }
    /// Nominal memory in GB (the `Mgb` of the name).
    pub fn memory_gb_nominal(&self) -> u32 {
        self.memory_gb_nominal
    }
    /// Streaming multiprocessors, where known.
    pub fn sms(&self) -> Option<u32> {
        self.sms
    }
    /// Whether any of this profile's data is unconfirmed.
    pub fn unconfirmed(&self) -> bool {
        self.unconfirmed
    }
    /// Which fields are unconfirmed, as the catalogue words them.
    pub fn unconfirmed_fields(&self) -> &[String] {
        &self.unconfirmed_fields
    }

    /// Names earlier boards or drivers gave this profile (GB200's `3g.95gb` for `3g.93gb`,
    /// mig-parted issue #227); [`GpuModel::profile`] accepts them, and NVIDIA's default
    /// mig-parted config still uses them.
    pub fn legacy_names(&self) -> &[String] {
        &self.legacy_names
    }
    /// The instance's share of its card as an exact fraction `(numerator, denominator)`.
    pub fn card_fraction(&self, policy: CardFraction) -> (u32, u32) {
        match policy {
            CardFraction::PerMaxInstances => (1, u32::from(self.max_instances.max(1))),
            CardFraction::ComputeSlices => (
                u32::from(self.compute_slices),
                u32::from(self.model_compute_slices.max(1)),
            ),
            CardFraction::MemorySlices => (
                u32::from(self.memory_slices),
                u32::from(self.model_memory_slices.max(1)),
            ),
        }
    }
}

/// One GPU model of the catalogue.
#[derive(Debug)]
pub struct GpuModel {
    index: ModelIndex,
    name: String,
    product_names: Vec<String>,
    pci_device_ids: Vec<String>,
    memory_gb: u32,
    compute_slices: u8,
    memory_slices: u8,
    placement_units: u8,
    engine_totals: Engines,
    profiles: Vec<Profile>,
    unconfirmed: bool,
    unconfirmed_reason: Option<String>,
    notes: Vec<String>,
    aliases: Vec<String>,
    layouts: OnceLock<Vec<Layout>>,
}

impl PartialEq for GpuModel {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index && self.name == other.name && self.profiles == other.profiles
    }
}
impl Eq for GpuModel {}

impl GpuModel {
    /// Index in the catalogue.
    pub fn index(&self) -> ModelIndex {
        self.index
    }
    /// Catalogue name (`A100-40GB`, `RTX PRO 6000 Blackwell (Server / Workstation / Max-Q)`).
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Catalogue name without the parenthesised comment (`H100-94GB`).
    pub fn short_name(&self) -> &str {
        short(&self.name)
    }
    /// nvidia-smi product names of this model.
    pub fn product_names(&self) -> &[String] {
        &self.product_names
    }
    /// PCI `device+vendor` ids as mig-parted's `device-filter` writes them.
    pub fn pci_device_ids(&self) -> &[String] {
        &self.pci_device_ids
    }
    /// Card memory in GB.
    pub fn memory_gb(&self) -> u32 {
        self.memory_gb
    }
    /// Compute slices of the whole card (7, 4, 3 or 2).
    pub fn compute_slices(&self) -> u8 {
        self.compute_slices
    }
    /// Memory slices of the whole card.
    pub fn memory_slices(&self) -> u8 {
        self.memory_slices
    }
    /// Placement units of the driver's grid (8; 4 on A30; 12 on RTX PRO 6000; 0 on Thor).
    pub fn placement_units(&self) -> u8 {
        self.placement_units
    }
    /// Engine capacities (see [`Engines`]).
    pub fn engine_totals(&self) -> Engines {
        self.engine_totals
    }
    /// Profiles in catalogue order.
    pub fn profiles(&self) -> &[Profile] {
        &self.profiles
    }
    /// The profile at `index`.
    pub fn profile_at(&self, index: ProfileIndex) -> Option<&Profile> {
        self.profiles.get(usize::from(index.0))
    }
    /// Whether any of the model's data is unconfirmed.
    pub fn unconfirmed(&self) -> bool {
        self.unconfirmed || self.profiles.iter().any(|p| p.unconfirmed)
    }
    /// Why the model is unconfirmed, as the catalogue words it.
    pub fn unconfirmed_reason(&self) -> Option<&str> {
        self.unconfirmed_reason.as_deref()
    }
    /// Notes from the catalogue.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Resolves a profile by name (`3g.20gb`), resource name (`nvidia.com/mig-3g.20gb`), or
    /// NVML id written as a number (`9`).
    ///
    /// # Errors
    /// [`CatalogueError::UnknownProfile`] naming the model and the profile.
    ///
    /// # Complexity
    /// O(profiles), at most 11.
    pub fn profile(&self, profile: &str) -> Result<&Profile, CatalogueError> {
        let p = profile.trim();
        let found = self
            .profiles
            .iter()
            .find(|x| x.name == p || x.resource == p)
            .or_else(|| {
                let bare = p.strip_prefix("nvidia.com/mig-").unwrap_or(p);
                self.profiles
                    .iter()
                    .find(|x| x.legacy_names.iter().any(|l| l == bare))
            })
            .or_else(|| {
                p.parse::<u32>()
                    .ok()
                    .and_then(|id| self.profiles.iter().find(|x| x.id == Some(id)))
            });
        found.ok_or_else(|| CatalogueError::UnknownProfile {
            model: self.name.clone(),
            profile: profile.to_owned(),
        })
    }

    /// The profile with NVML id `id`.
    pub fn profile_by_id(&self, id: u32) -> Option<&Profile> {
        self.profiles.iter().find(|x| x.id == Some(id))
    }

    /// Every valid layout of this model (including the empty one), computed once.
    ///
    /// # Complexity
    /// The first call enumerates by depth-first search over placements with a unit bitmask
    /// and engine counters: O(|layouts| · placements), about 2,319 × 33 steps on 7-slice GPUs.
    /// Later calls are O(1).
    pub fn layouts(&self) -> &[Layout] {
        self.layouts.get_or_init(|| crate::layout::enumerate(self))
    }

    fn matches(&self, key: &str) -> bool {
        self.aliases.iter().any(|a| a == key)
    }
}

impl fmt::Display for GpuModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// A set of GPU models.
#[derive(Debug, PartialEq, Eq)]
pub struct Catalogue {
    models: Vec<GpuModel>,
}

static BUILTIN: OnceLock<Catalogue> = OnceLock::new();

impl Catalogue {
    /// The built-in catalogue (every model of `mig-profiles.json`), parsed on first use.
    ///
    /// # Panics
    /// Never in practice: the embedded table is checked by the crate's tests. (If it could not
    /// be parsed the call would panic, since it is data compiled into the crate, not user input.)
    pub fn builtin() -> &'static Catalogue {
        BUILTIN.get_or_init(|| {
            #[allow(clippy::expect_used)] // compiled-in data, verified by tests
            Catalogue::from_json(BUILTIN_JSON).expect("embedded mig-profiles.json is valid")
        })
    }

    /// Parses a catalogue in the `mig-profiles.json` format.
    ///
    /// # Errors
    /// [`CatalogueError::Json`] for malformed JSON; [`CatalogueError::Invalid`] for a placement
    /// outside the model's grid, a grid wider than 16 units, more than 255 profiles or models
    /// with colliding names.
    pub fn from_json(json: &str) -> Result<Catalogue, CatalogueError> {
        let raw: RawCatalogue =
            serde_json::from_str(json).map_err(|e| CatalogueError::Json(e.to_string()))?;
        let mut models = Vec::with_capacity(raw.gpus.len());
        for (i, g) in raw.gpus.into_iter().enumerate() {
            let index = ModelIndex(u16::try_from(i).map_err(|_| CatalogueError::Invalid {
                model: g.model.clone(),
                reason: "more than 65535 models".into(),
            })?);
            models.push(build_model(index, g)?);
        }
        for (i, m) in models.iter().enumerate() {
            for other in &models[..i] {
                if let Some(a) = m.aliases.iter().find(|a| other.aliases.contains(a)) {
                    return Err(CatalogueError::Invalid {
                        model: m.name.clone(),
                        reason: format!("name {a:?} also names {:?}", other.name),
                    });
                }
            }
        }
        Ok(Catalogue { models })
    }

    /// Models in catalogue order.
    pub fn models(&self) -> &[GpuModel] {
        &self.models
    }

    /// The model at `index`.
    pub fn model_at(&self, index: ModelIndex) -> Option<&GpuModel> {
        self.models.get(usize::from(index.0))
    }

    /// Resolves a model from its catalogue name (`A100-40GB`, with or without the parenthesised
    /// comment), a `nvidia.com/gpu.product` label value (`NVIDIA-A100-SXM4-40GB`, also with
    /// GPU Feature Discovery's `-MIG-<profile>` and `-SHARED` suffixes), an nvidia-smi product
    /// name (`NVIDIA A100-SXM4-40GB`) or a PCI id (`0x20B010DE`). Case, spaces versus dashes and
    /// a leading `NVIDIA` are ignored.
    ///
    /// # Errors
    /// [`CatalogueError::UnknownModel`].
    ///
    /// # Complexity
    /// O(models × aliases), about 100 string compares.
    pub fn resolve(&self, name: &str) -> Result<&GpuModel, CatalogueError> {
        let key = label_key(name);
        self.models
            .iter()
            .find(|m| m.matches(&key))
            .ok_or_else(|| CatalogueError::UnknownModel(name.to_owned()))
    }
}

/// `nvidia.com/mig-` + profile name with `+` replaced by `.` (the device plugin's `mixed`
/// strategy, `internal/rm/rm.go`).
pub fn resource_name(profile: &str) -> String {
    format!("nvidia.com/mig-{}", profile.replace('+', "."))
}

fn short(name: &str) -> &str {
    name.split(" (").next().unwrap_or(name).trim()
}

/// Normalises a name for matching: lower case, spaces/underscores to dashes, no leading
/// `nvidia-`, no GFD `-shared` or `-mig-<profile>` suffix.
fn label_key(s: &str) -> String {
    let mut k: String = s
        .trim()
        .chars()
        .map(|c| match c {
            ' ' | '_' => '-',
            c => c.to_ascii_lowercase(),
        })
        .collect();
    if let Some(rest) = k.strip_prefix("nvidia-") {
        k = rest.to_owned();
    }
    if let Some(pos) = k.find("-mig-") {
        k.truncate(pos);
    }
    if let Some(rest) = k.strip_suffix("-shared") {
        k = rest.to_owned();
    }
    k
}

#[derive(Deserialize)]
struct RawCatalogue {
    gpus: Vec<RawGpu>,
}

#[derive(Deserialize)]
struct RawGpu {
    model: String,
    #[serde(default)]
    product_names: Vec<String>,
    #[serde(default)]
    pci_device_ids: Vec<String>,
    #[serde(default)]
    memory_gb: u32,
    compute_slices: u8,
    #[serde(default)]
    memory_slices: u8,
    #[serde(default)]
    placement_units: Option<u8>,
    #[serde(default)]
    engine_totals: RawEngines,
    profiles: Vec<RawProfile>,
    #[serde(default)]
    unconfirmed: bool,
    #[serde(default)]
    unconfirmed_reason: Option<String>,
    #[serde(default)]
    notes: Vec<String>,
}

#[derive(Deserialize, Default)]
struct RawEngines {
    ofa: Option<u8>,
    nvdec: Option<u8>,
    nvenc: Option<u8>,
    nvjpg: Option<u8>,
}

#[derive(Deserialize)]
struct RawProfile {
    name: String,
    id: Option<u32>,
    compute_slices: u8,
    memory_slices: u8,
    max_instances: u8,
    #[serde(default)]
    placements: Vec<Placement>,
    #[serde(default)]
    media_extension: Option<bool>,
    #[serde(default)]
    memory_gb_nominal: u32,
    #[serde(default)]
    sms: Option<u32>,
    #[serde(default)]
    ofa: Option<u8>,
    #[serde(default)]
    nvdec: Option<u8>,
    #[serde(default)]
    nvenc: Option<u8>,
    #[serde(default)]
    nvjpg: Option<u8>,
    #[serde(default)]
    unconfirmed: bool,
    #[serde(default)]
    unconfirmed_fields: Vec<String>,
    #[serde(default)]
    legacy_names: Vec<String>,
}

fn build_model(index: ModelIndex, g: RawGpu) -> Result<GpuModel, CatalogueError> {
    let units = g.placement_units.unwrap_or(0);
    let invalid = |reason: String| CatalogueError::Invalid {
        model: g.model.clone(),
        reason,
    };
    if units > 16 {
        return Err(invalid(format!("{units} placement units (at most 16)")));
    }
    let totals = Engines([
        g.engine_totals.ofa.unwrap_or(1),
        g.engine_totals.nvdec.unwrap_or(Engines::UNLIMITED),
        g.engine_totals.nvenc.unwrap_or(Engines::UNLIMITED),
        g.engine_totals.nvjpg.unwrap_or(Engines::UNLIMITED),
        Engines::MEDIA_ALL,
    ]);
    let mut profiles = Vec::with_capacity(g.profiles.len());
    for (i, p) in g.profiles.into_iter().enumerate() {
        let pindex =
            ProfileIndex(u8::try_from(i).map_err(|_| invalid("more than 255 profiles".into()))?);
        let media = MediaVariant::of(&p.name);
        let media_extension = p
            .media_extension
            .unwrap_or(matches!(media, MediaVariant::Me | MediaVariant::MeAll));
        for pl in &p.placements {
            if pl.size == 0 || u16::from(pl.start) + u16::from(pl.size) > u16::from(units) {
                return Err(invalid(format!(
                    "profile {}: placement {}:{} outside the {units}-unit grid",
                    p.name, pl.start, pl.size
                )));
            }
            if p.placements.first().map(|f| f.size) != Some(pl.size) {
                return Err(invalid(format!(
                    "profile {}: placements differ in size",
                    p.name
                )));
            }
        }
        let engines = Engines([
            p.ofa.unwrap_or(u8::from(media_extension)),
            p.nvdec.unwrap_or(0),
            p.nvenc.unwrap_or(0),
            p.nvjpg.unwrap_or(0),
            match media {
                MediaVariant::MeAll => Engines::MEDIA_ALL,
                MediaVariant::NoMe => 0,
                _ => 1,
            },
        ]);
        profiles.push(Profile {
            index: pindex,
            resource: resource_name(&p.name),
            name: p.name,
            id: p.id,
            compute_slices: p.compute_slices,
            memory_slices: p.memory_slices,
            max_instances: p.max_instances,
            placements: p.placements,
            media,
            engines,
            memory_gb_nominal: p.memory_gb_nominal,
            sms: p.sms,
            model_compute_slices: g.compute_slices,
            model_memory_slices: g.memory_slices,
            unconfirmed: p.unconfirmed,
            unconfirmed_fields: p.unconfirmed_fields,
            legacy_names: p.legacy_names,
        });
    }
    let mut aliases = vec![label_key(&g.model), label_key(short(&g.model))];
    for n in &g.product_names {
        aliases.push(label_key(short(n)));
    }
    for id in &g.pci_device_ids {
        aliases.push(label_key(id));
    }
    aliases.sort();
    aliases.dedup();
    Ok(GpuModel {
        index,
        name: g.model,
        product_names: g.product_names,
        pci_device_ids: g.pci_device_ids,
        memory_gb: g.memory_gb,
        compute_slices: g.compute_slices,
        memory_slices: g.memory_slices,
        placement_units: units,
        engine_totals: totals,
        profiles,
        unconfirmed: g.unconfirmed,
        unconfirmed_reason: g.unconfirmed_reason,
        notes: g.notes,
        aliases,
        layouts: OnceLock::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_has_every_model() {
        let c = Catalogue::builtin();
        assert_eq!(c.models().len(), 16);
        assert_eq!(c.models()[0].name(), "A100-40GB");
    }

    #[test]
    fn resolves_labels_and_smi_names() {
        let c = Catalogue::builtin();
        for (q, want) in [
            ("NVIDIA A100-SXM4-40GB", "A100-40GB"),
            ("NVIDIA-A100-SXM4-40GB", "A100-40GB"),
            ("A100-SXM4-40GB-MIG-1g.5gb", "A100-40GB"),
            ("a100-40gb", "A100-40GB"),
            ("NVIDIA-H200-NVL", "H200-141GB (H200 SXM, H200 NVL)"),
            ("H100-94GB", "H100-94GB (H100 NVL)"),
            (
                "0x2BB510DE",
                "RTX PRO 6000 Blackwell (Server / Workstation / Max-Q)",
            ),
            (
                "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition-SHARED",
                "RTX PRO 6000 Blackwell (Server / Workstation / Max-Q)",
            ),
        ] {
            assert_eq!(c.resolve(q).map(|m| m.name()), Ok(want), "{q}");
        }
        assert_eq!(
            c.resolve("Tesla V100").map(|m| m.name()),
            Err(CatalogueError::UnknownModel("Tesla V100".into()))
        );
    }

    #[test]
    fn same_name_different_footprint() {
        let c = Catalogue::builtin();
        let a40 = c.resolve("A100-40GB").unwrap().profile("1g.10gb").unwrap();
        let a80 = c.resolve("A100-80GB").unwrap().profile("1g.10gb").unwrap();
        assert_eq!(
            (a40.id(), a40.size(), a40.max_instances()),
            (Some(15), 2, 4)
        );
        assert_eq!(
            (a80.id(), a80.size(), a80.max_instances()),
            (Some(19), 1, 7)
        );
    }

    #[test]
    fn rtx_grid_is_twelve_units() {
        let m = Catalogue::builtin()
            .resolve("NVIDIA RTX PRO 6000 Blackwell Server Edition")
            .unwrap();
        assert_eq!(m.placement_units(), 12);
        let p = m.profile("nvidia.com/mig-1g.24gb.me.all").unwrap();
        assert_eq!(p.name(), "1g.24gb+me.all");
        assert_eq!(p.media(), MediaVariant::MeAll);
        let starts: Vec<u8> = p.placements().iter().map(|x| x.start).collect();
        assert_eq!(starts, [0, 3, 6, 9]);
        assert_eq!(m.profile("14").unwrap().name(), "1g.24gb");
        assert_eq!(p.card_fraction(CardFraction::PerMaxInstances), (1, 1));
        assert_eq!(p.card_fraction(CardFraction::ComputeSlices), (1, 4));
    }

    #[test]
    fn masks() {
        assert_eq!(Placement { start: 4, size: 4 }.mask(), 0b1111_0000);
        assert_eq!(Placement { start: 0, size: 16 }.mask(), u16::MAX);
    }

    #[test]
    fn rejects_bad_catalogue() {
        assert!(matches!(
            Catalogue::from_json("{"),
            Err(CatalogueError::Json(_))
        ));
        let bad = r#"{"gpus":[{"model":"X","compute_slices":1,"placement_units":2,
            "profiles":[{"name":"1g.1gb","id":1,"compute_slices":1,"memory_slices":1,
            "max_instances":1,"placements":[{"start":2,"size":1}]}]}]}"#;
        assert!(matches!(
            Catalogue::from_json(bad),
            Err(CatalogueError::Invalid { .. })
        ));
    }
}
