//! DRF properties (Ghodsi et al., NSDI 2011) with brute force as oracle.
#![allow(clippy::needless_range_loop)]

use gpuquota_fairshare::drf::{DrfUser, drf, drf_tasks};
use gpuquota_fairshare::ratio::Ratio;
use gpuquota_fairshare::waterfill::{WfQueue, water_fill};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    gpuquota_testkit::config(96)
}

fn r(n: i64) -> Ratio {
    Ratio::int(n.into())
}

fn task() -> impl Strategy<Value = Vec<i64>> {
    prop::collection::vec(0i64..4, 2).prop_filter("not all zero", |v| v.iter().any(|x| *x > 0))
}

fn instance() -> impl Strategy<Value = (Vec<i64>, Vec<DrfUser>)> {
    (
        prop::collection::vec(1i64..13, 2),
        prop::collection::vec((1u32..4, task(), prop::option::of(1i64..6)), 2..4),
    )
        .prop_map(|(cap, us)| {
            let users = us
                .into_iter()
                .enumerate()
                .map(|(i, (w, t, m))| DrfUser {
                    name: format!("u{i}"),
                    weight: w,
                    task: t,
                    max_tasks: m,
                })
                .collect();
            (cap, users)
        })
}

/// Nᵢ(bundle): tasks of user i a bundle supports.
fn utility(u: &DrfUser, bundle: &[Ratio]) -> Ratio {
    let mut best: Option<Ratio> = None;
    for (k, d) in u.task.iter().enumerate() {
        if *d > 0 {
            let v = bundle[k].checked_div(r(*d)).unwrap();
            best = Some(best.map_or(v, |b| b.min(v)));
        }
    }
    best.unwrap_or(Ratio::ZERO)
}

fn bundle(u: &DrfUser, x: Ratio) -> Vec<Ratio> {
    u.task
        .iter()
        .map(|d| x.checked_mul(r(*d)).unwrap())
        .collect()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn sharing_incentive_envy_freeness_pareto((cap, users) in instance()) {
        let x = drf(&cap, &users).unwrap();
        let wsum: i64 = users.iter().map(|u| i64::from(u.weight)).sum();
        let used: Vec<Ratio> = (0..cap.len())
            .map(|k| {
                users.iter().zip(&x).fold(Ratio::ZERO, |s, (u, xi)| s.checked_add(xi.checked_mul(r(u.task[k])).unwrap()).unwrap())
            })
            .collect();
        for k in 0..cap.len() {
            prop_assert!(used[k] <= r(cap[k]), "capacity exceeded");
        }
        for (i, u) in users.iter().enumerate() {
            // SI: at least the tasks of a private weighted slice of every resource.
            let slice: Vec<Ratio> = cap.iter().map(|c| Ratio::new(i128::from(*c) * i128::from(u.weight), wsum.into()).unwrap()).collect();
            let mut si = utility(u, &slice);
            if let Some(m) = u.max_tasks { si = si.min(r(m)); }
            prop_assert!(x[i] >= si, "SI violated for {}", u.name);
            // EF: no user prefers another's weight-scaled bundle.
            for (j, v) in users.iter().enumerate() {
                if i == j { continue; }
                let scaled: Vec<Ratio> = bundle(v, x[j]).into_iter()
                    .map(|b| b.checked_mul(Ratio::new(u.weight.into(), v.weight.into()).unwrap()).unwrap())
                    .collect();
                prop_assert!(x[i] >= utility(u, &scaled).min(u.max_tasks.map_or(utility(u, &scaled), r)),
                    "{} envies {}", u.name, v.name);
            }
            // PE (Leontief form): an unsatisfied user needs a saturated resource.
            if u.max_tasks.is_none_or(|m| x[i] < r(m)) {
                prop_assert!((0..cap.len()).any(|k| u.task[k] > 0 && used[k] == r(cap[k])),
                    "{} could grow", u.name);
            }
        }
    }

    #[test]
    fn strategy_proof_against_every_small_misreport((cap, users) in instance()) {
        let x = drf(&cap, &users).unwrap();
        for i in 0..users.len() {
            for a in 0..4 {
                for b in 0..4 {
                    if a == 0 && b == 0 { continue; }
                    let mut lie = users.clone();
                    lie[i].task = vec![a, b];
                    let y = drf(&cap, &lie).unwrap();
                    let got = bundle(&lie[i], y[i]);
                    let mut true_tasks = utility(&users[i], &got);
                    if let Some(m) = users[i].max_tasks { true_tasks = true_tasks.min(r(m)); }
                    prop_assert!(true_tasks <= x[i], "{} gains by reporting {:?}", users[i].name, [a, b]);
                }
            }
        }
    }

    #[test]
    fn population_monotone_with_positive_demands((cap, mut users) in instance()) {
        // With a zero entry in some task vector this fails (see
        // `population_monotonicity_needs_positive_demands`): keep every entry ≥ 1.
        for u in &mut users {
            for d in &mut u.task {
                *d = (*d).max(1);
            }
        }
        let x = drf(&cap, &users).unwrap();
        for gone in 0..users.len() {
            let rest: Vec<DrfUser> = users.iter().enumerate().filter(|(i, _)| *i != gone).map(|(_, u)| u.clone()).collect();
            let y = drf(&cap, &rest).unwrap();
            let mut k = 0;
            for (i, xi) in x.iter().enumerate() {
                if i == gone { continue; }
                prop_assert!(y[k] >= *xi);
                k += 1;
            }
        }
    }

    #[test]
    fn single_resource_equals_water_filling(
        cap in 1i64..60,
        us in prop::collection::vec((1u32..4, 1i64..4, 1i64..10), 1..5),
    ) {
        let users: Vec<DrfUser> = us.iter().enumerate()
            .map(|(i, (w, d, m))| DrfUser { name: format!("u{i}"), weight: *w, task: vec![*d], max_tasks: Some(*m) })
            .collect();
        let qs: Vec<WfQueue> = us.iter().enumerate()
            .map(|(i, (w, d, m))| WfQueue::new(format!("u{i}"), *w, d * m))
            .collect();
        let x = drf(&[cap], &users).unwrap();
        let wf = water_fill(cap, &qs).unwrap();
        for (i, (_, d, _)) in us.iter().enumerate() {
            prop_assert_eq!(x[i].checked_mul(r(*d)).unwrap(), wf.fluid(&qs, i).unwrap());
        }
    }

    #[test]
    fn discrete_drf_within_one_task_of_capacity((cap, users) in instance()) {
        let t = drf_tasks(&cap, &users).unwrap();
        for k in 0..cap.len() {
            let used: i64 = users.iter().zip(&t).map(|(u, n)| u.task[k] * n).sum();
            prop_assert!(used <= cap[k]);
        }
        // Nobody can take one more task (online DRF stops only when nothing fits).
        for (i, u) in users.iter().enumerate() {
            if u.max_tasks.is_some_and(|m| t[i] >= m) { continue; }
            let fits = (0..cap.len()).all(|k| {
                let used: i64 = users.iter().zip(&t).map(|(v, n)| v.task[k] * n).sum();
                used + u.task[k] <= cap[k]
            });
            prop_assert!(!fits);
        }
    }
}

/// From the DRF paper: DRF is not resource-monotone. Doubling CPU lowers u2 and u3.
#[test]
fn resource_non_monotonicity_is_expected() {
    let users = [
        DrfUser::new("u1", 1, vec![2, 1]),
        DrfUser::new("u2", 1, vec![1, 2]),
        DrfUser::new("u3", 1, vec![2, 2]),
    ];
    let before = drf(&[100, 100], &users).unwrap();
    assert_eq!(before, vec![r(20), r(20), r(20)]);
    let after = drf(&[200, 100], &users).unwrap();
    let third = |n| Ratio::new(n, 3).unwrap();
    assert_eq!(after, vec![third(100), third(50), third(50)]);
    assert!(after[1] < before[1] && after[2] < before[2]);
}

/// Found by the property test: with zero entries in task vectors, progressive filling is not
/// population-monotone. u1 needs only memory and blocks u0 early; when u1 leaves, u0 takes
/// more CPU and u2 ends with fewer tasks (3/2 → 4/3).
#[test]
fn population_monotonicity_needs_positive_demands() {
    let users = [
        DrfUser::new("u0", 1, vec![1, 1]),
        DrfUser::new("u1", 1, vec![0, 1]),
        DrfUser::new("u2", 1, vec![1, 0]),
    ];
    let half = |n| Ratio::new(n, 2).unwrap();
    assert_eq!(
        drf(&[2, 1], &users).unwrap(),
        vec![half(1), half(1), half(3)]
    );
    let without_u1 = [users[0].clone(), users[2].clone()];
    let third = |n| Ratio::new(n, 3).unwrap();
    assert_eq!(drf(&[2, 1], &without_u1).unwrap(), vec![third(2), third(4)]);
}

#[test]
fn paper_example_exact() {
    let users = [
        DrfUser::new("A", 1, vec![1, 4]),
        DrfUser::new("B", 1, vec![3, 1]),
    ];
    assert_eq!(drf(&[9, 18], &users).unwrap(), vec![r(3), r(2)]);
}
