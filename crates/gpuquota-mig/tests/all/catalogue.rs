//! Catalogue and layout facts from NVIDIA's MIG user guide, checked by enumeration.

use std::collections::BTreeSet;

use gpuquota_mig::{Catalogue, GpuModel, Instance, Layout, LayoutProblem, check};

use crate::reference;

fn model(name: &str) -> &'static GpuModel {
    Catalogue::builtin().resolve(name).expect("model")
}

fn at(m: &GpuModel, profile: &str, start: u8) -> Instance {
    Instance {
        start,
        profile: m.profile(profile).expect("profile").index(),
    }
}

#[test]
fn max_instances_reproduced_by_enumeration_for_every_profile() {
    for m in Catalogue::builtin().models() {
        let layouts = m.layouts();
        for p in m.profiles() {
            let most = layouts
                .iter()
                .map(|l| {
                    l.instances()
                        .iter()
                        .filter(|i| i.profile == p.index())
                        .count()
                })
                .max()
                .unwrap_or(0);
            if p.placements().is_empty() {
                // Thor iGPU: no placement grid in the catalogue; not a packing target.
                assert_eq!(most, 0, "{} {}", m.name(), p.name());
            } else {
                assert_eq!(
                    most,
                    usize::from(p.max_instances()),
                    "{} {}",
                    m.name(),
                    p.name()
                );
            }
        }
    }
}

#[test]
fn independent_enumeration_agrees_with_the_crate() {
    for name in [
        "A100-40GB",
        "A30",
        "RTX PRO 6000 Blackwell",
        "RTX PRO 5000 Blackwell",
    ] {
        let m = model(name);
        let mine: Vec<Vec<Instance>> = m.layouts().iter().map(|l| l.instances().to_vec()).collect();
        assert_eq!(mine, reference::all_layouts(m), "{name}");
    }
    assert_eq!(
        model("RTX PRO 5000 Blackwell").layouts().len(),
        reference::all_layouts(model("RTX PRO 5000 Blackwell")).len()
    );
}

#[test]
fn seven_slice_family_counts() {
    for m in Catalogue::builtin()
        .models()
        .iter()
        .filter(|m| m.compute_slices() == 7)
    {
        let layouts = m.layouts();
        assert_eq!(layouts.len(), 2319, "{}", m.name());
        let multisets: BTreeSet<Vec<u8>> = layouts.iter().map(|l| l.counts(m)).collect();
        assert_eq!(multisets.len(), 128, "{}", m.name());
        let maximal = multisets
            .iter()
            .filter(|a| {
                !multisets
                    .iter()
                    .any(|b| b != *a && b.iter().zip(a.iter()).all(|(x, y)| x >= y))
            })
            .count();
        assert_eq!(maximal, 44, "{}", m.name());
    }
}

#[test]
fn a100_classic_nineteen_configurations() {
    let m = model("A100-40GB");
    let allowed: BTreeSet<_> = ["1g.5gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"]
        .iter()
        .map(|n| m.profile(n).expect("p").index())
        .collect();
    let sub: Vec<&Layout> = m
        .layouts()
        .iter()
        .filter(|l| l.instances().iter().all(|i| allowed.contains(&i.profile)))
        .collect();
    let is_subset =
        |a: &Layout, b: &Layout| a.instances().iter().all(|i| b.instances().contains(i));
    let maximal: Vec<&&Layout> = sub
        .iter()
        .filter(|a| !sub.iter().any(|b| b != *a && is_subset(a, b)))
        .collect();
    assert_eq!(maximal.len(), 19);
    let multisets: BTreeSet<Vec<u8>> = maximal.iter().map(|l| l.counts(m)).collect();
    let max_multisets = multisets
        .iter()
        .filter(|a| {
            !multisets
                .iter()
                .any(|b| b != *a && b.iter().zip(a.iter()).all(|(x, y)| x >= y))
        })
        .count();
    assert_eq!(max_multisets, 12);
}

#[test]
fn other_counts() {
    assert_eq!(model("A30").layouts().len(), 76);
    assert_eq!(model("RTX PRO 6000 Blackwell").layouts().len(), 717);
    assert_eq!(model("Thor iGPU").layouts().len(), 1);
}

#[test]
fn invariants_of_mig_md_4_4() {
    let a = model("A100-40GB");
    // No +me twice per GPU.
    assert!(matches!(
        &check(a, &[at(a, "1g.5gb+me", 0), at(a, "1g.5gb+me", 2)])[..],
        [LayoutProblem::MediaExtensionConflict { .. }]
    ));
    // 3g occupies 4 units: 3g@0 and 1g@3 overlap.
    assert!(matches!(
        &check(a, &[at(a, "3g.20gb", 0), at(a, "1g.5gb", 3)])[..],
        [LayoutProblem::Overlap { .. }]
    ));
    // 1g never at unit 7; the 2x-memory 1g can use it.
    assert!(matches!(
        &check(a, &[at(a, "1g.5gb", 7)])[..],
        [LayoutProblem::InvalidStart { .. }]
    ));
    assert!(check(a, &[at(a, "1g.10gb", 6)]).is_empty());
    // 4g only at 0.
    for s in 1..8 {
        assert!(!check(a, &[at(a, "4g.20gb", s)]).is_empty());
    }
    // 4g + 3g is valid (R510+).
    assert!(check(a, &[at(a, "4g.20gb", 0), at(a, "3g.20gb", 4)]).is_empty());
    // RTX +me.all only with -me.
    let r = model("RTX PRO 6000 Blackwell");
    for other in ["1g.24gb", "1g.24gb+gfx", "1g.24gb+me"] {
        let p = check(r, &[at(r, "1g.24gb+me.all", 0), at(r, other, 3)]);
        assert!(
            p.iter()
                .any(|e| matches!(e, LayoutProblem::MeAllConflict { .. })),
            "{other}"
        );
    }
    assert!(check(r, &[at(r, "2g.48gb+me.all", 0), at(r, "2g.48gb-me", 6)]).is_empty());
    assert!(
        check(
            r,
            &[
                at(r, "1g.24gb+me.all", 0),
                at(r, "1g.24gb-me", 3),
                at(r, "2g.48gb-me", 6)
            ]
        )
        .is_empty()
    );
    // A30: 1g.6gb+me and 2g.12gb+me share the single OFA.
    let a30 = model("A30");
    assert!(!check(a30, &[at(a30, "1g.6gb+me", 0), at(a30, "2g.12gb+me", 2)]).is_empty());
    // The 1g.10gb footprint differs by model.
    let a80 = model("A100-80GB");
    assert!(check(a80, &[at(a80, "1g.10gb", 1)]).is_empty());
    assert!(!check(a, &[at(a, "1g.10gb", 1)]).is_empty());
}

#[test]
fn every_invalid_single_start_is_rejected_with_its_reason() {
    for m in Catalogue::builtin().models() {
        for p in m.profiles() {
            for s in 0..16u8 {
                let problems = check(
                    m,
                    &[Instance {
                        start: s,
                        profile: p.index(),
                    }],
                );
                let allowed = p.placements().iter().any(|x| x.start == s);
                assert_eq!(
                    problems.is_empty(),
                    allowed,
                    "{} {}@{s}",
                    m.name(),
                    p.name()
                );
            }
        }
    }
}

/// Every MIG profile name the GPU operator's default mig-parted configuration uses (the
/// `mig-devices` keys of the `default-mig-parted-config` ConfigMap, NVIDIA/gpu-operator
/// `assets/state-mig-manager/0400_configmap.yaml` at a22dbf6, 2026-08-21), listed by hand.
const DEFAULT_CONFIG_PROFILES: [&str; 78] = [
    "1g.5gb",
    "1g.5gb+me",
    "1g.6gb",
    "1g.6gb+me",
    "1g.10gb",
    "1g.10gb+me",
    "1g.12gb",
    "1g.12gb+me",
    "1g.18gb",
    "1g.18gb+me",
    "1g.20gb",
    "1g.23gb",
    "1g.23gb+me",
    "1g.24gb",
    "1g.24gb+gfx",
    "1g.24gb+me",
    "1g.24gb+me.all",
    "1g.24gb-me",
    "1g.34gb",
    "1g.34gb+me",
    "1g.35gb",
    "1g.35gb+me",
    "1g.36gb",
    "1g.45gb",
    "1g.47gb",
    "1g.67gb",
    "1g.70gb",
    "2g.10gb",
    "2g.12gb",
    "2g.12gb+me",
    "2g.20gb",
    "2g.24gb",
    "2g.35gb",
    "2g.36gb",
    "2g.45gb",
    "2g.47gb",
    "2g.48gb",
    "2g.48gb+gfx",
    "2g.48gb+me.all",
    "2g.48gb-me",
    "2g.67gb",
    "2g.70gb",
    "3g.20gb",
    "3g.40gb",
    "3g.47gb",
    "3g.48gb",
    "3g.71gb",
    "3g.72gb",
    "3g.90gb",
    "3g.93gb",
    "3g.95gb",
    "3g.135gb",
    "3g.139gb",
    "4g.20gb",
    "4g.24gb",
    "4g.40gb",
    "4g.47gb",
    "4g.48gb",
    "4g.71gb",
    "4g.72gb",
    "4g.90gb",
    "4g.93gb",
    "4g.95gb",
    "4g.96gb",
    "4g.96gb+gfx",
    "4g.135gb",
    "4g.139gb",
    "7g.40gb",
    "7g.80gb",
    "7g.94gb",
    "7g.96gb",
    "7g.141gb",
    "7g.144gb",
    "7g.180gb",
    "7g.186gb",
    "7g.189gb",
    "7g.269gb",
    "7g.278gb",
];

#[test]
fn every_profile_of_the_default_mig_parted_config_resolves() {
    let c = Catalogue::builtin();
    let unresolved: Vec<&str> = DEFAULT_CONFIG_PROFILES
        .iter()
        .copied()
        .filter(|p| c.models().iter().all(|m| m.profile(p).is_err()))
        .collect();
    assert_eq!(unresolved, Vec::<&str>::new());
    // Also as resource names, the way the device plugin advertises them (`+` becomes `.`).
    for p in DEFAULT_CONFIG_PROFILES {
        let r = format!("nvidia.com/mig-{}", p.replace('+', "."));
        assert!(
            c.models().iter().any(|m| m.profile(&r).is_ok()),
            "{r} resolves"
        );
    }
}

#[test]
fn the_early_gb200_names_resolve_to_gb200_profiles_that_stay_unconfirmed() {
    // NVIDIA/gpu-operator 748827774 ("[MIG] add support for HGX GB200") named GB200's
    // (PCI 0x294110DE) profiles 1g.24gb, 3g.95gb, 4g.95gb and 7g.189gb; the all-balanced entry
    // for the same device filter now uses 1g.23gb, 3g.93gb and 7g.186gb. No published
    // `nvidia-smi mig -lgip/-lgipp` dump of this model confirms the placements.
    let gb200 = model("0x294110DE");
    assert_eq!(gb200.name(), "GB200-186GB");
    for (early, current, g) in [
        ("1g.24gb", "1g.23gb", 1),
        ("3g.95gb", "3g.93gb", 3),
        ("4g.95gb", "4g.93gb", 4),
        ("7g.189gb", "7g.186gb", 7),
    ] {
        let p = gb200.profile(early).expect("early name resolves");
        assert_eq!(p.name(), current);
        assert_eq!(p.compute_slices(), g);
        assert!(p.unconfirmed(), "{current} stays unconfirmed");
        assert!(
            p.unconfirmed_fields().iter().any(|f| f == "placements"),
            "{current}: placements unconfirmed"
        );
    }
    assert!(gb200.unconfirmed());
}
