//! MIG geometry and the weight policies.
//!
//! The geometry (compute and memory slices per card, and per profile compute slices, memory
//! slices and max instances) comes from the MIG catalogue of `gpuquota-mig`, the one
//! documented engine → engine dependency of this crate.

use std::collections::BTreeMap;

use crate::MeteringError;
use crate::money::L;

/// How a MIG instance is weighted as a fraction of its card.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum MigPolicy {
    /// `compute_slices(p) / C`: never books more than one card per card (the default).
    #[default]
    ComputeSlices,
    /// `memory_slices(p) / M`: never books more than one card per card.
    MemorySlices,
    /// `1 / max_instances(p)`: can book more than one card when profiles are mixed; the engine
    /// then warns.
    MaxInstances,
    /// A caller-supplied weight per profile name, as `(numerator, denominator)` in cards.
    Table(BTreeMap<String, (u64, u64)>),
}

impl MigPolicy {
    /// The name used in input files.
    pub fn as_str(&self) -> &'static str {
        match self {
            MigPolicy::ComputeSlices => "compute-slices",
            MigPolicy::MemorySlices => "memory-slices",
            MigPolicy::MaxInstances => "max-instances",
            MigPolicy::Table(_) => "table",
        }
    }

    /// Whether a valid partition can exceed one card under this policy.
    pub(crate) fn can_overbook(&self) -> bool {
        matches!(self, MigPolicy::MaxInstances | MigPolicy::Table(_))
    }
}

/// One MIG profile's numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProfileGeometry {
    /// Compute slices the instance takes.
    pub compute_slices: u32,
    /// Memory slices the instance takes.
    pub memory_slices: u32,
    /// How many instances of this profile fit one card.
    pub max_instances: u32,
}

/// A card model's MIG geometry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigGeometry {
    /// The catalogue's model name (`H200-141GB (H200 SXM, H200 NVL)`).
    pub model: String,
    /// Compute slices per card (`C`).
    pub compute_slices: u32,
    /// Memory slices per card (`M`).
    pub memory_slices: u32,
    /// Profiles by name, current names and the catalogue's legacy names
    /// ([`gpuquota_mig::Profile::legacy_names`]).
    pub profiles: BTreeMap<String, ProfileGeometry>,
}

impl MigGeometry {
    /// The geometry of a card model from the MIG catalogue (`gpuquota_mig::Catalogue`),
    /// found by catalogue model name, `modelName` label, `nvidia.com/gpu.product` label or
    /// PCI id (case, blanks versus dashes and a leading `NVIDIA` are ignored).
    ///
    /// # Complexity
    /// O(models × aliases) plus O(profiles).
    pub fn builtin(model: &str) -> Option<MigGeometry> {
        let m = gpuquota_mig::Catalogue::builtin().resolve(model).ok()?;
        Some(MigGeometry {
            model: m.name().to_owned(),
            compute_slices: u32::from(m.compute_slices()),
            memory_slices: u32::from(m.memory_slices()),
            profiles: profile_geometries(m),
        })
    }

    /// The profile's numbers; a media-extension or graphics variant (`1g.18gb+me`,
    /// `1g.24gb-me`, `…+gfx`) takes its base profile's numbers when the base exists.
    pub fn profile(&self, name: &str) -> Option<ProfileGeometry> {
        let base = name.split(['+', '-']).next().unwrap_or(name);
        self.profiles
            .get(base)
            .or_else(|| self.profiles.get(name))
            .copied()
    }
}

/// Every profile of `m` by its current name and by the names earlier drivers gave it (GB200's
/// `3g.95gb` for `3g.93gb`, as NVIDIA/gpu-operator
/// `assets/state-mig-manager/0400_configmap.yaml` still spells it); a current name wins over a
/// legacy one.
fn profile_geometries(m: &gpuquota_mig::GpuModel) -> BTreeMap<String, ProfileGeometry> {
    let geometry = |p: &gpuquota_mig::Profile| ProfileGeometry {
        compute_slices: u32::from(p.compute_slices()),
        memory_slices: u32::from(p.memory_slices()),
        max_instances: u32::from(p.max_instances()),
    };
    let mut out = BTreeMap::new();
    for p in m.profiles() {
        for l in p.legacy_names() {
            out.entry(l.clone()).or_insert_with(|| geometry(p));
        }
    }
    for p in m.profiles() {
        out.insert(p.name().to_owned(), geometry(p));
    }
    out
}

/// The weight of one instance of `profile` in `1/L` cards under `policy`.
///
/// # Errors
/// [`MeteringError::UnknownProfile`] when the card type has no such profile (or no MIG
/// geometry), [`MeteringError::WeightNotRepresentable`] when the weight's denominator does not
/// divide `L`.
pub fn mig_weight(
    policy: &MigPolicy,
    geometry: Option<&MigGeometry>,
    card_type: &str,
    profile: &str,
) -> Result<i128, MeteringError> {
    let unknown = || MeteringError::UnknownProfile {
        what: format!("MIG profile {profile}"),
        card_type: card_type.to_owned(),
        profile: profile.to_owned(),
    };
    let (num, den) = match policy {
        MigPolicy::Table(t) => {
            let base = profile.split(['+', '-']).next().unwrap_or(profile);
            *t.get(profile).or_else(|| t.get(base)).ok_or_else(unknown)?
        }
        _ => {
            let g = geometry.ok_or_else(unknown)?;
            let p = g.profile(profile).ok_or_else(unknown)?;
            match policy {
                MigPolicy::ComputeSlices => {
                    (u64::from(p.compute_slices), u64::from(g.compute_slices))
                }
                MigPolicy::MemorySlices => (u64::from(p.memory_slices), u64::from(g.memory_slices)),
                _ => (1, u64::from(p.max_instances)),
            }
        }
    };
    ratio_units(num, den).ok_or_else(|| MeteringError::WeightNotRepresentable {
        what: format!("MIG profile {profile} of {card_type}"),
        numerator: num,
        denominator: den,
    })
}

/// `num/den` cards in `1/L` units, or `None` when `den` is zero or does not divide `L`.
pub(crate) fn ratio_units(num: u64, den: u64) -> Option<i128> {
    let den = i128::from(den);
    if den == 0 || L % den != 0 {
        return None;
    }
    i128::from(num).checked_mul(L / den)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_early_gb200_profile_names_weigh_as_the_current_ones() {
        let g = MigGeometry::builtin("NVIDIA GB200").expect("GB200 is in the catalogue");
        for (early, current) in [
            ("1g.24gb", "1g.23gb"),
            ("3g.95gb", "3g.93gb"),
            ("4g.95gb", "4g.93gb"),
            ("7g.189gb", "7g.186gb"),
        ] {
            assert_eq!(g.profile(early), g.profile(current), "{early}");
            assert!(g.profile(early).is_some(), "{early}");
        }
        // 3 of 7 compute slices: 3/7 of a card; 7g.189gb is the whole card.
        let w = |p: &str| mig_weight(&MigPolicy::ComputeSlices, Some(&g), "GB200", p);
        assert_eq!(w("3g.95gb"), Ok(3 * (L / 7)));
        assert_eq!(w("7g.189gb"), Ok(L));
    }
}
