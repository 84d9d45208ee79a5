//! Property tests: every invariant the crate docs state.

use std::collections::BTreeMap;

use gpuquota_metering::money::{L, apportion};
use gpuquota_metering::{
    Basis, BorrowedMode, CardType, Config, Currency, Department, IdleMode, Input, Owner, QuotaStep,
    Record, Report, Shape, Window,
};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    gpuquota_testkit::config(if gpuquota_testkit::ci() { 48 } else { 96 })
}

const DEPTS: [&str; 3] = ["A", "B", "C"];

/// A generated platform: card types with capacities, departments with quotas, and records laid
/// out on physical slots so that no slot is double booked and capacity is never exceeded.
#[derive(Debug, Clone)]
struct Case {
    end: i64,
    caps: Vec<u64>,
    quotas: Vec<Vec<u64>>, // [dept][card]
    records: Vec<Record>,
}

fn case() -> impl Strategy<Value = Case> {
    (1usize..=2, 1i64..=20).prop_flat_map(|(n_cards, hours)| {
        let end = hours * 600;
        let caps = proptest::collection::vec(1u64..=4, n_cards);
        caps.prop_flat_map(move |caps| {
            let quotas = caps
                .iter()
                .map(|c| proptest::collection::vec(0..=*c, 3))
                .collect::<Vec<_>>();
            // per slot: up to 4 (gap, length, dept, mig) runs
            let slots: Vec<_> = caps
                .iter()
                .enumerate()
                .flat_map(|(ci, c)| (0..*c).map(move |s| (ci, s)))
                .map(|(ci, s)| {
                    (
                        Just((ci, s)),
                        proptest::collection::vec(
                            (
                                0i64..900,
                                1i64..2400,
                                0usize..3,
                                any::<bool>(),
                                any::<bool>(),
                            ),
                            0..4,
                        ),
                    )
                })
                .collect();
            (Just(caps.clone()), quotas, slots).prop_map(move |(caps, quotas, slots)| {
                let mut records = Vec::new();
                for ((ci, s), runs) in slots {
                    let mut t = -300;
                    for (gap, len, d, mig, open) in runs {
                        t += gap;
                        let start = t;
                        t += len;
                        let shape = if mig {
                            Shape::Mig {
                                profile: "3g.71gb".to_owned(),
                                count: 2,
                            }
                        } else {
                            Shape::Whole(1)
                        };
                        records.push(Record {
                            owner: if d == 2 {
                                Owner::Namespace("team-c".to_owned())
                            } else {
                                Owner::Department(DEPTS[d].to_owned())
                            },
                            card_type: format!("T{ci}"),
                            shape,
                            start,
                            end: if open { None } else { Some(t) },
                            holder: Some(format!("node/{ci}-{s}")),
                            service: None,
                        });
                        if open {
                            break;
                        }
                    }
                }
                // quotas transposed to [dept][card], never oversubscribing a card type
                let mut q = vec![vec![0u64; caps.len()]; 3];
                for (ci, per_card) in quotas.iter().enumerate() {
                    let mut left = caps[ci];
                    for d in 0..3 {
                        q[d][ci] = per_card[d].min(left);
                        left -= q[d][ci];
                    }
                }
                Case {
                    end,
                    caps,
                    quotas: q,
                    records,
                }
            })
        })
    })
}

fn input(c: &Case, window: Window, basis: Basis, borrowed: BorrowedMode, idle: IdleMode) -> Input {
    let mut cfg = Config::new(window, Currency::from_code("USD").unwrap());
    cfg.basis = basis;
    cfg.borrowed = borrowed;
    cfg.idle = idle;
    let mut input = Input::new(cfg);
    for (i, cap) in c.caps.iter().enumerate() {
        let mut ct = CardType::new(&format!("T{i}"), 1_234_500 + 1_000_000 * i as i128);
        ct.model = Some("NVIDIA H200".to_owned());
        ct.capacity = Some(*cap);
        input.card_types.push(ct);
    }
    for (d, name) in DEPTS.iter().enumerate() {
        let mut quota = BTreeMap::new();
        for (ci, q) in c.quotas[d].iter().enumerate() {
            quota.insert(
                format!("T{ci}"),
                vec![QuotaStep {
                    from: i64::MIN,
                    cards_units: i128::from(*q) * L,
                }],
            );
        }
        input.departments.push(Department {
            name: (*name).to_owned(),
            namespaces: if d == 2 {
                vec!["team-c".to_owned()]
            } else {
                vec![]
            },
            quota,
        });
    }
    input.records = c.records.clone();
    input
}

fn full(c: &Case) -> Window {
    Window {
        start: 0,
        end: c.end,
    }
}

fn reconciles(r: &Report) {
    let mut sum = 0i128;
    for l in &r.lines {
        assert_eq!(l.total_minor, l.cost_minor + l.idle_share_minor);
        sum += l.total_minor;
    }
    for i in r.idle.iter().filter(|i| !i.recovered) {
        sum += i.cost_minor;
    }
    assert_eq!(sum, r.totals.cost_minor);
}

proptest! {
    #![proptest_config(config())]

    /// 1. Every apportionment sums to its total exactly and is within one unit of the quota.
    #[test]
    fn apportionment_is_exact(total in 0i128..10_000_000, weights in proptest::collection::vec(0i128..1_000_000, 1..8)) {
        let sum: i128 = weights.iter().sum();
        prop_assume!(sum > 0);
        let shares = apportion(total, &weights).unwrap();
        prop_assert_eq!(shares.iter().sum::<i128>(), total);
        for (s, w) in shares.iter().zip(&weights) {
            let exact_floor = total * w / sum;
            prop_assert!(*s == exact_floor || *s == exact_floor + 1);
        }
    }

    /// 3. allocated + idle = capacity × T, and every report reconciles to the cent
    /// (all idle modes).
    #[test]
    fn allocated_plus_idle_is_capacity(c in case(), mode in 0usize..3) {
        let idle = [IdleMode::Platform, IdleMode::Weighted, IdleMode::Even][mode];
        let r = gpuquota_metering::run(&input(&c, full(&c), Basis::Allocated, BorrowedMode::Informational, idle)).unwrap();
        reconciles(&r);
        for (ci, cap) in c.caps.iter().enumerate() {
            let alloc: i128 = r.lines.iter().filter(|l| l.card_index == ci).map(|l| l.allocated_units).sum();
            let idle = r.idle.iter().find(|i| i.card_type == format!("T{ci}")).unwrap().units;
            prop_assert_eq!(alloc + idle, i128::from(*cap) * L * i128::from(c.end));
        }
        // the exact total is the capacity at list price
        let exact: i128 = c.caps.iter().enumerate()
            .map(|(i, cap)| i128::from(*cap) * i128::from(c.end) * L * (1_234_500 + 1_000_000 * i as i128))
            .sum();
        prop_assert_eq!(r.totals.exact_cost_num, exact);
    }

    /// 4. Window additivity in units: [0, m) + [m, T) = [0, T) for every line.
    #[test]
    fn window_split_is_additive(c in case(), cut in 0i64..=1000) {
        let m = c.end * cut / 1000;
        let units = |w: Window| -> BTreeMap<(String, usize), (i128, i128, i128)> {
            if w.is_empty() {
                return BTreeMap::new();
            }
            let r = gpuquota_metering::run(&input(&c, w, Basis::Allocated, BorrowedMode::Informational, IdleMode::Platform)).unwrap();
            r.lines.iter().map(|l| ((l.department.clone(), l.card_index), (l.allocated_units, l.borrowed_units, l.quota_units))).collect()
        };
        let whole = units(full(&c));
        let a = units(Window { start: 0, end: m });
        let b = units(Window { start: m, end: c.end });
        let mut sum: BTreeMap<(String, usize), (i128, i128, i128)> = BTreeMap::new();
        for (k, v) in a.into_iter().chain(b) {
            let e = sum.entry(k).or_default();
            e.0 += v.0; e.1 += v.1; e.2 += v.2;
        }
        sum.retain(|_, v| *v != (0, 0, 0));
        let mut whole = whole;
        whole.retain(|_, v| *v != (0, 0, 0));
        prop_assert_eq!(sum, whole);
    }

    /// 5. Order independence: a permuted input gives the same report, bit for bit.
    #[test]
    fn order_independent(c in case(), seed in any::<u64>(), basis in any::<bool>()) {
        let basis = if basis { Basis::Quota } else { Basis::Allocated };
        let a = gpuquota_metering::run(&input(&c, full(&c), basis, BorrowedMode::Charged, IdleMode::Weighted)).unwrap();
        let mut shuffled = c.clone();
        let mut s = seed | 1;
        for i in (1..shuffled.records.len()).rev() {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;
            let j = (s % (i as u64 + 1)) as usize;
            shuffled.records.swap(i, j);
        }
        let mut inp = input(&shuffled, full(&c), basis, BorrowedMode::Charged, IdleMode::Weighted);
        inp.departments.reverse();
        inp.card_types.reverse();
        let b = gpuquota_metering::run(&inp).unwrap();
        prop_assert_eq!(a.to_json(), b.to_json());
    }

    /// 6. borrowed ≤ allocated, own ≤ quota, own + borrowed = allocated, and no borrowing when
    /// the quota covers the capacity.
    #[test]
    fn borrowed_bounds(c in case()) {
        let r = gpuquota_metering::run(&input(&c, full(&c), Basis::Allocated, BorrowedMode::Informational, IdleMode::Platform)).unwrap();
        for l in &r.lines {
            prop_assert!(l.borrowed_units <= l.allocated_units);
            prop_assert!(l.own_units <= l.quota_units);
            prop_assert_eq!(l.own_units + l.borrowed_units, l.allocated_units);
        }
        let mut generous = c.clone();
        for q in &mut generous.quotas {
            *q = generous.caps.clone();
        }
        let r = gpuquota_metering::run(&input(&generous, full(&c), Basis::Allocated, BorrowedMode::Informational, IdleMode::Platform)).unwrap();
        for l in &r.lines {
            if l.department != "unassigned" {
                prop_assert_eq!(l.borrowed_units, 0);
            }
        }
    }

    /// 7. Basis quota with lender credits: the charges plus the unbooked line always make the
    /// capacity, and with quotas that book the whole capacity the departments' charges equal
    /// Σ quota × T whatever the borrowing.
    #[test]
    fn lender_credits_keep_the_total(c in case()) {
        let r = gpuquota_metering::run(&input(&c, full(&c), Basis::Quota, BorrowedMode::Charged, IdleMode::Platform)).unwrap();
        reconciles(&r);
        for (ci, cap) in c.caps.iter().enumerate() {
            let charged: i128 = r.lines.iter().filter(|l| l.card_index == ci).map(|l| l.charged_units).sum();
            let idle = r.idle.iter().find(|i| i.card_type == format!("T{ci}")).unwrap().units;
            prop_assert_eq!(charged + idle, i128::from(*cap) * L * i128::from(c.end));
        }
        // quotas that book everything: A gets the whole capacity
        let mut booked = c.clone();
        booked.quotas = vec![c.caps.clone(), vec![0; c.caps.len()], vec![0; c.caps.len()]];
        let r = gpuquota_metering::run(&input(&booked, full(&c), Basis::Quota, BorrowedMode::Charged, IdleMode::Platform)).unwrap();
        for (ci, cap) in c.caps.iter().enumerate() {
            let charged: i128 = r.lines.iter().filter(|l| l.card_index == ci).map(|l| l.charged_units).sum();
            prop_assert_eq!(charged, i128::from(*cap) * L * i128::from(c.end));
        }
    }

    /// 2. No holder is booked twice: adding a record that overlaps an existing holding of the
    /// same holder is refused with DoubleBooked, and nothing is returned.
    #[test]
    fn double_booking_is_refused(c in case(), pick in any::<prop::sample::Index>(), shift in 0i64..100) {
        prop_assume!(!c.records.is_empty());
        let mut bad = c.clone();
        let r = &c.records[pick.index(c.records.len())];
        // an open record is closed at the window end, so one starting at or after it holds
        // nothing and cannot be double booked
        let end = r.end.unwrap_or(c.end);
        prop_assume!(end - r.start > shift);
        let mut dup = r.clone();
        dup.start = r.start + shift;
        dup.owner = Owner::Department("B".to_owned());
        bad.records.push(dup);
        let res = gpuquota_metering::run(&input(&bad, full(&c), Basis::Allocated, BorrowedMode::Informational, IdleMode::Platform));
        let is_double_booked = res
            .as_ref()
            .err()
            .is_some_and(|e| e.is_invalid_input() && e.to_string().contains("; double booking over ["));
        prop_assert!(is_double_booked, "{:?}", res);
    }
}

proptest! {
    #![proptest_config(config())]

    /// Metering totals equal the sum of intervals: intervals aligned to a step, the evaluated
    /// grid of their counts (left-point rule) and raw scrapes every step (lookback = step) all
    /// give the same units per department, exactly.
    #[test]
    fn grid_and_scrapes_match_intervals(
        runs in proptest::collection::vec((0usize..3, 0i64..40, 1i64..40, 1u64..3), 1..8),
        step in prop::sample::select(vec![60i64, 300, 900]),
    ) {
        let n = 40i64;
        let window = Window { start: 0, end: n * step };
        let base = || {
            let mut cfg = Config::new(window, Currency::from_code("EUR").unwrap());
            cfg.lookback = step;
            let mut input = Input::new(cfg);
            input.card_types.push(CardType::new("H200", 4_500_000));
            input
        };
        let mut by_intervals = base();
        let mut counts = vec![vec![0u64; n as usize]; 3];
        for (d, k0, len, gpus) in &runs {
            let k1 = (k0 + len).min(n);
            by_intervals.records.push(Record {
                owner: Owner::Department(DEPTS[*d].to_owned()),
                card_type: "H200".to_owned(),
                shape: Shape::Whole(*gpus),
                start: k0 * step,
                end: Some(k1 * step),
                holder: None,
                service: None,
            });
            for k in *k0..k1 {
                counts[*d][k as usize] += gpus;
            }
        }
        let mut by_grid = base();
        let mut by_scrapes = base();
        for (d, c) in counts.iter().enumerate() {
            by_grid.series.push(gpuquota_metering::GridSeries {
                owner: Owner::Department(DEPTS[d].to_owned()),
                card_type: "H200".to_owned(),
                shape: Shape::Whole(1),
                start: None,
                step,
                values: c.iter().map(|v| (*v > 0).then_some(*v)).collect(),
                lookback: None,
                service: None,
            });
            by_scrapes.samples.push(gpuquota_metering::RawSeries {
                owner: Owner::Department(DEPTS[d].to_owned()),
                card_type: "H200".to_owned(),
                shape: Shape::Whole(1),
                lookback: None,
                points: c.iter().enumerate().map(|(k, v)| (k as i64 * step, *v)).collect(),
                stale_at: vec![],
                holder: None,
                service: None,
                busy_micro: None,
                label: None,
            });
        }
        let units = |input: &Input| -> Vec<(String, i128)> {
            gpuquota_metering::run(input).unwrap().lines.iter().filter(|l| l.allocated_units > 0)
                .map(|l| (l.department.clone(), l.allocated_units)).collect()
        };
        let want = units(&by_intervals);
        prop_assert_eq!(&units(&by_grid), &want);
        prop_assert_eq!(&units(&by_scrapes), &want);
    }
}
