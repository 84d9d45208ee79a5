//! Worked examples of KAI's division and the quirks of its phase 3 (leftover units), through the
//! division API.

use gpuquota_model::Timestamp;
use gpuquota_rank::fixed::SCALE;
use gpuquota_rank::ids::PerResource;
use gpuquota_rank::{
    DivisionError, DivisionOptions, Hierarchy, Mode, QueueInput, Resource, ResourceParams,
};

/// A GPU-only queue: deserved, weight, request (whole or fractional GPUs), limit, priority.
pub(crate) struct Q {
    pub(crate) name: &'static str,
    pub(crate) parent: Option<usize>,
    pub(crate) d: f64,
    pub(crate) w: f64,
    pub(crate) req: f64,
    pub(crate) limit: Option<f64>,
    pub(crate) prio: i32,
    pub(crate) usage: f64,
}

pub(crate) fn q(name: &'static str, d: f64, w: f64, req: f64) -> Q {
    Q {
        name,
        parent: None,
        d,
        w,
        req,
        limit: None,
        prio: 100,
        usage: 0.0,
    }
}

fn nano(x: f64) -> i128 {
    (x * 1e9).round() as i128
}

pub(crate) fn gpu_shares(qs: &[Q], total: f64, mode: Mode, k: f64) -> Vec<String> {
    let inputs: Vec<QueueInput> = qs
        .iter()
        .enumerate()
        .map(|(i, x)| {
            let mut resources = [ResourceParams::default(); 3];
            resources[0] = ResourceParams {
                deserved: if x.d < 0.0 { None } else { Some(nano(x.d)) },
                weight: nano(x.w),
                limit: x.limit.map(nano),
                request: nano(x.req),
                usage: nano(x.usage),
            };
            QueueInput {
                name: x.name.into(),
                parent: x.parent.map(gpuquota_rank::ids::QueueId::new),
                priority: x.prio,
                creation: Some(Timestamp::from_unix_seconds(1_700_000_000 + i as i64)),
                uid: String::new(),
                resources,
            }
        })
        .collect();
    let h = Hierarchy::new(inputs).unwrap();
    let d = h
        .divide(
            PerResource::new(nano(total), 0, 0),
            &DivisionOptions::default()
                .with_mode(mode)
                .with_k_value(nano(k)),
        )
        .unwrap();
    d.fair_share
        .iter()
        .map(|f| gpuquota_rank::fixed::format_decimal(f[Resource::Gpu]))
        .collect()
}

fn kai(qs: &[Q], total: f64) -> Vec<String> {
    gpu_shares(qs, total, Mode::Kai, 1.0)
}

#[test]
fn e1_basic_three_queues_leftover_to_older_queue() {
    // Worked example: a 4, b 5, c 1 (a and c tie at .4; a is older).
    let r = kai(
        &[
            q("a", 2.0, 1.0, 10.0),
            q("b", 1.0, 3.0, 10.0),
            q("c", 0.0, 1.0, 2.0),
        ],
        10.0,
    );
    assert_eq!(r, ["4", "5", "1"]);
}

#[test]
fn e2_priority_tiers_are_strict_issue_143() {
    let mut a = q("A", 1.0, 1.0, 1.0);
    a.prio = 2;
    let mut b = q("B", 1.0, 2.0, 3.0);
    b.prio = 1;
    let mut c = q("C", 0.0, 1.0, 2.0);
    c.prio = 1;
    assert_eq!(kai(&[a, b, c], 5.0), ["1", "3", "1"]);
}

#[test]
fn priority_beats_weight_over_quota() {
    // "priority does affect over-quota, even when overQuotaWeight is set".
    let mut hi = q("hi", 0.0, 1.0, 10.0);
    hi.prio = 2;
    let mut lo = q("lo", 0.0, 100.0, 10.0);
    lo.prio = 1;
    assert_eq!(kai(&[hi, lo], 6.0), ["6", "0"]);
}

#[test]
fn e3_oversubscription_a04() {
    assert_eq!(kai(&[q("q", 3.0, 1.0, 2.0)], 1.0), ["2"]);
}

#[test]
fn e4_hierarchy_with_fractions() {
    let mut qs = vec![q("A", 3.0, 1.0, 0.0), q("B", 3.0, 1.0, 0.0)];
    let mut a1 = q("a1", 1.0, 1.0, 4.5);
    a1.parent = Some(0);
    let mut a2 = q("a2", 2.0, 3.0, 5.0);
    a2.parent = Some(0);
    let mut b1 = q("b1", 3.0, 1.0, 9.0);
    b1.parent = Some(1);
    qs.extend([a1, a2, b1]);
    assert_eq!(kai(&qs, 10.0), ["5", "5", "2", "3", "5"]);
}

#[test]
fn e5_fraction_exact_request_a26() {
    let mut q3 = q("q3", 2.0, 2.0, 1.65);
    q3.limit = Some(2.0);
    let r = kai(
        &[q("q1", 12.0, 12.0, 32.55), q("q2", 7.0, 7.0, 9.5), q3],
        45.0,
    );
    assert_eq!(r, ["32.55", "9.5", "1.65"]);
}

#[test]
fn runai_docs_weight_follows_quota() {
    let r = kai(
        &[
            q("p1", 20.0, 20.0, 60.0),
            q("p2", 30.0, 30.0, 80.0),
            q("p3", 10.0, 10.0, 5.0),
        ],
        100.0,
    );
    assert_eq!(r, ["38", "57", "5"]);
}

#[test]
fn quirk_leftover_overshoots_request_and_limit_in_kai_mode_only() {
    let mut a = q("a", 0.0, 1.0, 1.7);
    a.limit = Some(1.7);
    let b = q("b", 0.0, 1.0, 5.0);
    let qs = [a, b];
    assert_eq!(kai(&qs, 3.0), ["2", "1"]);
    assert_eq!(gpu_shares(&qs, 3.0, Mode::Corrected, 1.0), ["1.7", "1.3"]);
    // With total 2.5 the last unit is only .5.
    assert_eq!(kai(&qs, 2.5), ["1.5", "1"]);
}

#[test]
fn weight_zero_gets_no_over_quota() {
    assert_eq!(
        kai(&[q("a", 1.0, 0.0, 5.0), q("b", 1.0, 1.0, 2.0)], 10.0),
        ["1", "2"]
    );
}

#[test]
fn unlimited_deserved_takes_everything_it_asks() {
    assert_eq!(
        kai(&[q("a", -1.0, 1.0, 7.0), q("b", 0.0, 1.0, 5.0)], 10.0),
        ["7", "3"]
    );
}

#[test]
fn cpu_rounding_9999_three_ways() {
    // Precision: 9999 millicores split three ways gives 3333 each.
    assert_eq!(
        kai(
            &[
                q("a", 0.0, 1.0, 1e6),
                q("b", 0.0, 1.0, 1e6),
                q("c", 0.0, 1.0, 1e6)
            ],
            9999.0
        ),
        ["3333", "3333", "3333"]
    );
}

#[test]
fn time_based_table_section_4() {
    let two = |ua: f64, ub: f64, k: f64, d: f64| {
        let mut a = q("a", d, 1.0, 100.0);
        a.usage = ua;
        let mut b = q("b", d, 1.0, 100.0);
        b.usage = ub;
        gpu_shares(&[a, b], 16.0, Mode::Kai, k)
    };
    assert_eq!(two(0.0, 0.0, 1.0, 0.0), ["8", "8"]);
    assert_eq!(two(0.6, 0.1, 1.0, 0.0), ["5", "11"]);
    assert_eq!(two(1.0, 0.0, 1.0, 0.0), ["0", "16"]);
    assert_eq!(two(0.5, 0.0, 0.5, 0.0), ["6", "10"]);
    assert_eq!(two(0.5, 0.0, 2.0, 0.0), ["4", "12"]);
    assert_eq!(two(0.9, 0.0, 1.0, 4.0), ["5", "11"]);
    // Weighted: 10 GPUs, 3:1, U_a = .3 → 7 / 3.
    let mut a = q("a", 0.0, 3.0, 100.0);
    a.usage = 0.3;
    let b = q("b", 0.0, 1.0, 100.0);
    assert_eq!(gpu_shares(&[a, b], 10.0, Mode::Kai, 1.0), ["7", "3"]);
    let _ = SCALE;
}

/// GPU-only queues in nano-units, exactly (no `f64`): `(name, parent, deserved, request)`,
/// weight 1 each.
fn exact(qs: &[(&str, Option<usize>, Option<i128>, i128)]) -> Hierarchy {
    let inputs = qs
        .iter()
        .map(|&(name, parent, deserved, request)| {
            let mut resources = [ResourceParams::default(); 3];
            resources[0] = ResourceParams {
                deserved,
                weight: SCALE,
                limit: None,
                request,
                usage: 0,
            };
            QueueInput {
                name: name.into(),
                parent: parent.map(gpuquota_rank::ids::QueueId::new),
                priority: 100,
                creation: None,
                uid: String::new(),
                resources,
            }
        })
        .collect();
    Hierarchy::new(inputs).unwrap()
}

fn overflow_at(err: DivisionError) -> (String, Resource) {
    match err {
        DivisionError::Overflow { queue, resource } => (queue, resource),
        other => panic!("expected an overflow, got {other}"),
    }
}

/// Two leaves whose requests fit `i128` but whose sum does not: the parent's demand is
/// reported, not wrapped.
#[test]
fn demand_sum_overflow_names_the_parent() {
    let half = i128::MAX / 2 + 1;
    let h = exact(&[
        ("p", None, None, 0),
        ("a", Some(0), Some(0), half),
        ("b", Some(0), Some(0), half),
    ]);
    let err = h
        .divide(PerResource::new(SCALE, 0, 0), &DivisionOptions::default())
        .unwrap_err();
    assert_eq!(overflow_at(err), ("p".to_string(), Resource::Gpu));
}

/// Three top-level queues, each deserving and requesting half of `i128`'s range, on an empty
/// cluster: the phase-1 remainder `0 − 3·half` leaves `i128`, at the third queue.
#[test]
fn phase1_remainder_overflow_names_the_queue() {
    let half = i128::MAX / 2;
    let h = exact(&[
        ("a", None, Some(half), half),
        ("b", None, Some(half), half),
        ("c", None, Some(half), half),
    ]);
    for mode in [Mode::Kai, Mode::Corrected] {
        let err = h
            .divide(
                PerResource::ZERO,
                &DivisionOptions::default().with_mode(mode),
            )
            .unwrap_err();
        assert_eq!(overflow_at(err), ("c".to_string(), Resource::Gpu));
    }
}

/// Amounts whose sum with the total leaves `i128` but whose actual sums (each group's
/// remainder, each fair share) all fit: the division is exact, not an overflow.
#[test]
fn huge_amounts_that_fit_are_divided_exactly() {
    let quarter = i128::MAX / 4;
    let h = exact(&[
        ("a", None, Some(0), quarter),
        ("b", None, Some(0), quarter),
        ("c", None, Some(quarter), quarter),
    ]);
    let total = quarter / 2 * 5;
    let d = h
        .divide(PerResource::new(total, 0, 0), &DivisionOptions::default())
        .unwrap();
    let fs: Vec<i128> = d.fair_share.iter().map(|f| f[Resource::Gpu]).collect();
    // c's deserved quarter first, then the rest (1.5 quarters, rounded to whole units)
    // split evenly between a and b, the leftover unit to the first in input order.
    assert_eq!(fs.iter().sum::<i128>(), total);
    assert_eq!(fs[2], quarter);
    assert!(fs[0] >= fs[1] && fs[0] - fs[1] <= SCALE, "{fs:?}");
}
