//! Fleet-size properties: order independence of `(W, R, F)` on 2,000 mixed GPUs, and proven
//! optimality of the class solver on a mixed 1,000-GPU fleet.

use gpuquota_mig::testkit::plan;
use gpuquota_mig::testkit::verify;
use gpuquota_mig::testkit::{fleet, mixed, random_set};
use gpuquota_mig::{Catalogue, Mode, PlanOptions, PlanRequest};

fn key(req: &PlanRequest, options: &PlanOptions) -> (u64, u32, u32, bool) {
    let problem = req.resolve(Catalogue::builtin()).expect("valid");
    let p = plan(&problem, options).expect("plans");
    assert_eq!(verify(&problem, &p), Ok(()));
    (p.value, p.reconfigured, p.fragmentation, p.optimal)
}

/// Property 5 at fleet size (issue: fragmentation 51 or 52 by GPU order on 2,000 GPUs).
#[test]
fn plan_is_gpu_order_independent_at_fleet_size() {
    for options in [
        PlanOptions::default(),
        PlanOptions::default().with_fast(true),
    ] {
        let req = fleet(11, 2000, Mode::KeepBusyGpus);
        let a = key(&req, &options);
        let mut reversed = req.clone();
        reversed.gpus.reverse();
        let mut rotated = req.clone();
        rotated.gpus.rotate_left(777);
        assert_eq!(key(&reversed, &options), a);
        assert_eq!(key(&rotated, &options), a);
    }
}

/// Property 3 at fleet size: the class solver proves `(W, R)` on mixed 1,000-GPU fleets.
#[test]
fn class_solver_proves_mixed_fleets() {
    for mode in [Mode::KeepBusyGpus, Mode::PinBusyInstances] {
        let req = fleet(5, 1000, mode);
        let (_, _, _, optimal) = key(&req, &PlanOptions::default());
        assert!(optimal, "{mode:?}");
    }
}

/// Property 3 on the benchmark's mixed 1,000-GPU fleets (the all-empty one used to stop
/// unproven in the min-`R` phase): proven, with the `(W, R)` an independent MILP solver
/// (HiGHS, on the same input written by the `mig_fleet` example) finds.
#[test]
fn class_solver_proves_benchmark_mixed_fleets() {
    for (occupied, mode, expected) in [
        (0, Mode::KeepBusyGpus, (4962, 807)),
        (3, Mode::KeepBusyGpus, (4698, 698)),
        (3, Mode::PinBusyInstances, (4911, 797)),
    ] {
        let req = mixed(7, 1000, occupied, mode);
        let (w, r, _, optimal) = key(&req, &PlanOptions::default());
        assert!(optimal, "{occupied} {mode:?}");
        assert_eq!((w, u64::from(r)), expected, "{occupied} {mode:?}");
    }
}

/// `(W, R)` of [`random_set`] by an independent two-stage MILP (HiGHS 1.16 with zero gaps,
/// its own layout enumeration from the catalogue's placements and engine counters, its own
/// GPU classes; run outside the project on the inputs `--example random_set -- --write DIR`
/// writes).
const RANDOM_SET_MILP: [(&str, u64, u32); 48] = [
    ("8-occ0-keep-d50", 25, 3),
    ("8-occ30-keep-d90", 43, 6),
    ("8-occ60-keep-d110", 31, 3),
    ("8-occ0-pin-d50", 50, 5),
    ("8-occ30-pin-d90", 79, 7),
    ("8-occ60-pin-d110", 71, 6),
    ("16-occ0-keep-d90", 170, 14),
    ("16-occ30-keep-d110", 122, 10),
    ("16-occ60-keep-d50", 41, 4),
    ("16-occ0-pin-d90", 113, 13),
    ("16-occ30-pin-d110", 116, 15),
    ("16-occ60-pin-d50", 82, 9),
    ("32-occ0-keep-d110", 343, 26),
    ("32-occ30-keep-d50", 188, 15),
    ("32-occ60-keep-d90", 124, 10),
    ("32-occ0-pin-d110", 322, 31),
    ("32-occ30-pin-d50", 158, 16),
    ("32-occ60-pin-d90", 252, 21),
    ("64-occ0-keep-d50", 222, 32),
    ("64-occ30-keep-d90", 508, 38),
    ("64-occ60-keep-d110", 557, 29),
    ("64-occ0-pin-d50", 297, 34),
    ("64-occ30-pin-d90", 575, 58),
    ("64-occ60-pin-d110", 545, 59),
    ("128-occ0-keep-d90", 1023, 107),
    ("128-occ30-keep-d110", 973, 97),
    ("128-occ60-keep-d50", 490, 49),
    ("128-occ0-pin-d90", 1241, 93),
    ("128-occ30-pin-d110", 1509, 120),
    ("128-occ60-pin-d50", 448, 62),
    ("256-occ0-keep-d110", 2327, 241),
    ("256-occ30-keep-d50", 866, 116),
    ("256-occ60-keep-d90", 1719, 120),
    ("256-occ0-pin-d110", 2420, 243),
    ("256-occ30-pin-d50", 1550, 114),
    ("256-occ60-pin-d90", 2188, 203),
    ("512-occ0-keep-d50", 2944, 263),
    ("512-occ30-keep-d90", 5733, 359),
    ("512-occ60-keep-d110", 3908, 240),
    ("512-occ0-pin-d50", 2373, 265),
    ("512-occ30-pin-d90", 4080, 397),
    ("512-occ60-pin-d110", 4420, 464),
    ("1000-occ0-keep-d90", 6653, 823),
    ("1000-occ30-keep-d110", 8792, 742),
    ("1000-occ60-keep-d50", 3826, 375),
    ("1000-occ0-pin-d90", 8215, 827),
    ("1000-occ30-pin-d110", 7403, 875),
    ("1000-occ60-pin-d50", 4979, 471),
];

/// Property 3 on the random mixed set (48 instances, 8–1,000 GPUs, four models, 0/30/60 %
/// occupied, both modes, demand at 50/90/110 % of the compute slices): every plan is proven
/// and has the independent MILP's `(W, R)`.
#[test]
fn class_solver_proves_the_random_mixed_set() {
    let set = random_set();
    assert_eq!(set.len(), RANDOM_SET_MILP.len());
    for ((label, req), (name, w, r)) in set.iter().zip(RANDOM_SET_MILP) {
        assert_eq!(label, name);
        let (value, reconfigured, _, optimal) = key(req, &PlanOptions::default());
        assert!(optimal, "{label}");
        assert_eq!((value, reconfigured), (w, r), "{label}");
    }
}
