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
