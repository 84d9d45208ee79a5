//! Layouts: a GPU's MIG instances as (profile, start), their validation, and the resources a
//! node then advertises under the device plugin's strategies.

use std::collections::BTreeMap;

use crate::catalogue::{Engines, GpuModel, ProfileIndex};

/// One GPU instance: a profile at a start unit of the driver's grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Instance {
    /// First placement unit (ordered first, so layouts sort by start).
    pub start: u8,
    /// The profile within the GPU's model.
    pub profile: ProfileIndex,
}

/// Why a set of instances is not a layout the driver accepts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LayoutProblem {
    /// The profile index does not exist on the model.
    #[error("profile index {0} does not exist on this model")]
    NoSuchProfile(u8),
    /// The start is not one of the profile's placements.
    #[error("profile {profile} cannot start at {start} (allowed starts: {allowed:?})")]
    InvalidStart {
        /// Profile name.
        profile: String,
        /// The start given.
        start: u8,
        /// The starts the driver allows.
        allowed: Vec<u8>,
    },
    /// Two instances share placement units.
    #[error("profile {profile} at {start} overlaps {other} at {other_start}")]
    Overlap {
        /// Profile name of the later instance.
        profile: String,
        /// Its start.
        start: u8,
        /// Profile name of the earlier instance.
        other: String,
        /// Its start.
        other_start: u8,
    },
    /// Two media-extension instances on a GPU with one OFA (at most one `+me` per GPU).
    #[error(
        "profile {profile} at {start}: only one media-extension (OFA) instance per GPU, {other} already holds it"
    )]
    MediaExtensionConflict {
        /// The second holder.
        profile: String,
        /// Its start.
        start: u8,
        /// The first holder.
        other: String,
    },
    /// `+me.all` takes every media engine, so only `-me` profiles may sit beside it.
    #[error(
        "profile {profile} at {start} cannot sit beside {me_all}, which takes all media engines (only -me profiles can)"
    )]
    MeAllConflict {
        /// The instance that is not `-me`.
        profile: String,
        /// Its start.
        start: u8,
        /// The `+me.all` profile.
        me_all: String,
    },
    /// A media engine counter is exceeded.
    #[error("{engine} engines: the instances need {used}, the GPU has {total}")]
    EngineCapacity {
        /// Engine name (`nvdec`, `nvenc`, `nvjpg`).
        engine: &'static str,
        /// Sum over the instances.
        used: u32,
        /// The GPU's capacity.
        total: u32,
    },
}

/// A valid layout of one GPU: instances sorted by start.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Layout {
    instances: Vec<Instance>,
}

impl Layout {
    /// The empty layout (MIG enabled, no instances).
    pub fn empty() -> Layout {
        Layout {
            instances: Vec::new(),
        }
    }

    /// Validates `instances` against `model` and returns them as a layout.
    ///
    /// # Errors
    /// Every problem found (see [`check`]).
    ///
    /// # Complexity
    /// O(n²) for n instances (n ≤ 7).
    pub fn new(
        model: &GpuModel,
        mut instances: Vec<Instance>,
    ) -> Result<Layout, Vec<LayoutProblem>> {
        let problems = check(model, &instances);
        if problems.is_empty() {
            instances.sort();
            Ok(Layout { instances })
        } else {
            Err(problems)
        }
    }

    pub(crate) fn from_sorted(instances: Vec<Instance>) -> Layout {
        Layout { instances }
    }

    /// The instances, sorted by start.
    pub fn instances(&self) -> &[Instance] {
        &self.instances
    }

    /// Units covered, as a bitmask.
    pub fn mask(&self, model: &GpuModel) -> u16 {
        self.instances
            .iter()
            .filter_map(|i| {
                let p = model.profile_at(i.profile)?;
                Some(
                    crate::catalogue::Placement {
                        start: i.start,
                        size: p.size(),
                    }
                    .mask(),
                )
            })
            .fold(0, |a, m| a | m)
    }

    /// Profile → count (the multiset mig-parted compares), indexed by profile index.
    pub fn counts(&self, model: &GpuModel) -> Vec<u8> {
        let mut c = vec![0u8; model.profiles().len()];
        for i in &self.instances {
            if let Some(x) = c.get_mut(usize::from(i.profile.0)) {
                *x = x.saturating_add(1);
            }
        }
        c
    }
}

/// Checks a set of instances against the driver's rules: allowed starts, no overlapping units,
/// at most one OFA holder (`+me`), `+me.all` only beside `-me` profiles, and the media engine
/// counters. Returns every problem, in instance order (empty = valid).
///
/// # Complexity
/// O(n²) for n instances.
pub fn check(model: &GpuModel, instances: &[Instance]) -> Vec<LayoutProblem> {
    let mut problems = Vec::new();
    let mut placed: Vec<(u16, &crate::catalogue::Profile, u8)> = Vec::new();
    for inst in instances {
        let Some(p) = model.profile_at(inst.profile) else {
            problems.push(LayoutProblem::NoSuchProfile(inst.profile.0));
            continue;
        };
        let Some(pl) = p.placements().iter().find(|x| x.start == inst.start) else {
            problems.push(LayoutProblem::InvalidStart {
                profile: p.name().to_owned(),
                start: inst.start,
                allowed: p.placements().iter().map(|x| x.start).collect(),
            });
            continue;
        };
        let mask = pl.mask();
        if let Some((_, other, other_start)) = placed.iter().find(|(m, _, _)| m & mask != 0) {
            problems.push(LayoutProblem::Overlap {
                profile: p.name().to_owned(),
                start: inst.start,
                other: other.name().to_owned(),
                other_start: *other_start,
            });
        }
        placed.push((mask, p, inst.start));
    }
    // Engine rules, over every instance whose profile exists.
    let me_all = placed
        .iter()
        .find(|(_, p, _)| p.media() == crate::catalogue::MediaVariant::MeAll);
    if let Some((_, all, all_start)) = me_all {
        for (_, p, s) in &placed {
            let same = std::ptr::eq(*p, *all) && s == all_start;
            if !same && p.media() != crate::catalogue::MediaVariant::NoMe {
                problems.push(LayoutProblem::MeAllConflict {
                    profile: p.name().to_owned(),
                    start: *s,
                    me_all: all.name().to_owned(),
                });
            }
        }
    }
    let totals = model.engine_totals();
    let mut ofa_holder: Option<&str> = None;
    let mut ofa_used = 0u32;
    for (_, p, s) in &placed {
        let need = u32::from(p.engines().0[0]);
        if need == 0 {
            continue;
        }
        ofa_used += need;
        if ofa_used > u32::from(totals.0[0]) {
            problems.push(LayoutProblem::MediaExtensionConflict {
                profile: p.name().to_owned(),
                start: *s,
                other: ofa_holder.unwrap_or("another instance").to_owned(),
            });
        } else {
            ofa_holder = Some(p.name());
        }
    }
    if me_all.is_none() {
        for e in 1..4 {
            let total = totals.0[e];
            if total == Engines::UNLIMITED {
                continue;
            }
            let used: u32 = placed
                .iter()
                .map(|(_, p, _)| u32::from(p.engines().0[e]))
                .sum();
            if used > u32::from(total) {
                problems.push(LayoutProblem::EngineCapacity {
                    engine: Engines::NAMES[e],
                    used,
                    total: u32::from(total),
                });
            }
        }
    }
    problems
}

/// Placement options of a model sorted by (start, profile): `(profile, start, mask, engines)`.
pub(crate) fn options(model: &GpuModel) -> Vec<(ProfileIndex, u8, u16, Engines)> {
    let mut opts = Vec::new();
    for p in model.profiles() {
        for pl in p.placements() {
            opts.push((p.index(), pl.start, pl.mask(), p.engines()));
        }
    }
    opts.sort_by_key(|&(p, s, _, _)| (s, p));
    opts
}

/// Whether `add` fits the engine counters beside `used`; returns the new use.
pub(crate) fn add_engines(used: Engines, add: Engines, totals: Engines) -> Option<Engines> {
    let mut out = used;
    for e in 0..5 {
        let v = used.0[e].checked_add(add.0[e])?;
        if totals.0[e] != Engines::UNLIMITED && v > totals.0[e] {
            return None;
        }
        out.0[e] = v;
    }
    Some(out)
}

/// Enumerates every valid layout of `model` (depth-first over placements sorted by start).
pub(crate) fn enumerate(model: &GpuModel) -> Vec<Layout> {
    let opts = options(model);
    let mut out = Vec::new();
    let mut stack = Vec::new();
    dfs(
        &opts,
        0,
        0,
        Engines::default(),
        model.engine_totals(),
        &mut stack,
        &mut out,
    );
    out.sort();
    out
}

fn dfs(
    opts: &[(ProfileIndex, u8, u16, Engines)],
    from: usize,
    mask: u16,
    used: Engines,
    totals: Engines,
    stack: &mut Vec<Instance>,
    out: &mut Vec<Layout>,
) {
    out.push(Layout::from_sorted(stack.clone()));
    for (i, &(p, s, m, e)) in opts.iter().enumerate().skip(from) {
        if m & mask != 0 {
            continue;
        }
        let Some(next) = add_engines(used, e, totals) else {
            continue;
        };
        stack.push(Instance {
            start: s,
            profile: p,
        });
        dfs(opts, i + 1, mask | m, next, totals, stack, out);
        stack.pop();
    }
}

/// The device plugin's `--mig-strategy` (k8s-device-plugin `MIG_STRATEGY`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum MigStrategy {
    /// MIG is ignored; every GPU is one `nvidia.com/gpu`.
    None,
    /// Every GPU must be MIG-enabled with one identical, non-empty MIG type; its instances are
    /// advertised as `nvidia.com/gpu`.
    Single,
    /// Each MIG type is its own resource `nvidia.com/mig-<profile>`; MIG-disabled GPUs stay
    /// `nvidia.com/gpu`.
    Mixed,
}

/// One GPU of a node as the device plugin sees it: `None` = MIG disabled.
#[derive(Debug, Clone, Copy)]
pub struct NodeGpu<'a> {
    /// The GPU's model.
    pub model: &'a GpuModel,
    /// Its layout, or `None` when MIG is disabled.
    pub layout: Option<&'a Layout>,
}

/// Why the `single` strategy cannot advertise a node (GFD labels the product
/// `<model>-MIG-INVALID` with count 0).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StrategyError {
    /// A GPU has MIG disabled.
    #[error("mig strategy single: GPU {0} has MIG disabled")]
    MigDisabled(usize),
    /// A GPU has MIG enabled but no instances.
    #[error("mig strategy single: GPU {0} has MIG enabled but no instances")]
    Empty(usize),
    /// More than one MIG type on the node.
    #[error("mig strategy single: more than one MIG type on the node ({0} and {1})")]
    MixedTypes(String, String),
}

/// The extended resources a node advertises under `strategy` (resource name → count, sorted).
///
/// # Errors
/// [`StrategyError`] when `single` is not applicable.
///
/// # Complexity
/// O(total instances · log resources).
pub fn advertised_resources(
    strategy: MigStrategy,
    gpus: &[NodeGpu<'_>],
) -> Result<BTreeMap<String, u32>, StrategyError> {
    let mut out = BTreeMap::new();
    match strategy {
        MigStrategy::None => {
            if !gpus.is_empty() {
                out.insert("nvidia.com/gpu".to_owned(), gpus.len() as u32);
            }
        }
        MigStrategy::Mixed => {
            for g in gpus {
                match g.layout {
                    None => *out.entry("nvidia.com/gpu".to_owned()).or_insert(0) += 1,
                    Some(l) => {
                        for i in l.instances() {
                            if let Some(p) = g.model.profile_at(i.profile) {
                                *out.entry(p.resource_name().to_owned()).or_insert(0) += 1;
                            }
                        }
                    }
                }
            }
        }
        MigStrategy::Single => {
            let mut kind: Option<&str> = None;
            let mut count = 0u32;
            for (idx, g) in gpus.iter().enumerate() {
                let l = g.layout.ok_or(StrategyError::MigDisabled(idx))?;
                if l.instances().is_empty() {
                    return Err(StrategyError::Empty(idx));
                }
                for i in l.instances() {
                    let name = g.model.profile_at(i.profile).map_or("?", |p| p.name());
                    match kind {
                        Some(k) if k != name => {
                            return Err(StrategyError::MixedTypes(k.to_owned(), name.to_owned()));
                        }
                        _ => kind = Some(name),
                    }
                    count += 1;
                }
            }
            if count > 0 {
                out.insert("nvidia.com/gpu".to_owned(), count);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Catalogue;

    fn inst(m: &GpuModel, name: &str, start: u8) -> Instance {
        Instance {
            start,
            profile: m.profile(name).unwrap().index(),
        }
    }

    #[test]
    fn three_g_takes_four_units_and_blocks_one_g_at_six() {
        let m = Catalogue::builtin().resolve("A100-40GB").unwrap();
        let p = check(m, &[inst(m, "3g.20gb", 4), inst(m, "1g.5gb", 6)]);
        assert_eq!(
            p,
            vec![LayoutProblem::Overlap {
                profile: "1g.5gb".into(),
                start: 6,
                other: "3g.20gb".into(),
                other_start: 4
            }]
        );
        let p = check(m, &[inst(m, "1g.5gb", 7)]);
        assert!(matches!(
            &p[..],
            [LayoutProblem::InvalidStart { start: 7, .. }]
        ));
        let p = check(m, &[inst(m, "4g.20gb", 4)]);
        assert!(matches!(&p[..], [LayoutProblem::InvalidStart { allowed, .. }] if allowed == &[0]));
    }

    #[test]
    fn one_me_per_gpu_and_me_all_only_beside_no_me() {
        let m = Catalogue::builtin().resolve("A100-40GB").unwrap();
        let p = check(m, &[inst(m, "1g.5gb+me", 0), inst(m, "1g.5gb+me", 1)]);
        assert!(matches!(
            &p[..],
            [LayoutProblem::MediaExtensionConflict { start: 1, .. }]
        ));
        let r = Catalogue::builtin()
            .resolve("RTX PRO 6000 Blackwell")
            .unwrap();
        assert!(check(r, &[inst(r, "1g.24gb+me.all", 0), inst(r, "1g.24gb-me", 3)]).is_empty());
        let p = check(r, &[inst(r, "1g.24gb+me.all", 0), inst(r, "1g.24gb", 3)]);
        assert!(matches!(
            &p[..],
            [LayoutProblem::MeAllConflict { start: 3, .. }]
        ));
    }

    #[test]
    fn layout_counts_match_mig_md() {
        let c = Catalogue::builtin();
        assert_eq!(c.resolve("A100-40GB").unwrap().layouts().len(), 2319);
        assert_eq!(c.resolve("A30").unwrap().layouts().len(), 76);
        assert_eq!(
            c.resolve("RTX PRO 6000 Blackwell").unwrap().layouts().len(),
            717
        );
    }

    #[test]
    fn strategies() {
        let r = Catalogue::builtin()
            .resolve("RTX PRO 6000 Blackwell")
            .unwrap();
        let l = Layout::new(r, (0..4).map(|k| inst(r, "1g.24gb", k * 3)).collect()).unwrap();
        let gpus = [
            NodeGpu {
                model: r,
                layout: Some(&l),
            },
            NodeGpu {
                model: r,
                layout: None,
            },
        ];
        let mixed = advertised_resources(MigStrategy::Mixed, &gpus).unwrap();
        assert_eq!(mixed.get("nvidia.com/mig-1g.24gb"), Some(&4));
        assert_eq!(mixed.get("nvidia.com/gpu"), Some(&1));
        assert_eq!(
            advertised_resources(MigStrategy::None, &gpus)
                .unwrap()
                .get("nvidia.com/gpu"),
            Some(&2)
        );
        assert_eq!(
            advertised_resources(MigStrategy::Single, &gpus),
            Err(StrategyError::MigDisabled(1))
        );
        let single = advertised_resources(MigStrategy::Single, &gpus[..1]).unwrap();
        assert_eq!(single.get("nvidia.com/gpu"), Some(&4));
    }
}
