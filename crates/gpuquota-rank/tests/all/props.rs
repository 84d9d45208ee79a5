//! Property tests of the division (issue 5): sums, corrected-mode caps, strict tiers, order
//! independence, and agreement with a slow rational-arithmetic reference of KAI's algorithm.

use gpuquota_model::Timestamp;
use gpuquota_rank::fixed::SCALE;
use gpuquota_rank::ids::{PerResource, QueueId};
use gpuquota_rank::{DivisionOptions, Hierarchy, Mode, QueueInput, Resource, ResourceParams};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    gpuquota_testkit::config(96)
}

/// One generated queue, in quarter GPUs.
#[derive(Debug, Clone)]
struct GenQ {
    parent: Option<usize>,
    d: Option<i64>,
    w: i64,
    l: Option<i64>,
    req: i64,
    prio: i32,
    creation: i64,
    usage_pct: i64,
}

fn gen_tree() -> impl Strategy<Value = (Vec<GenQ>, i64)> {
    let q = (
        prop_oneof![1 => Just(None), 6 => (0i64..24).prop_map(Some)],
        0i64..5,
        prop_oneof![3 => Just(None), 2 => (0i64..40).prop_map(Some)],
        0i64..48,
        1i32..4,
        0i64..3,
        prop_oneof![3 => Just(0i64), 1 => 0i64..101],
    );
    (
        1usize..4,
        proptest::collection::vec((q, 0usize..4), 1..10),
        0i64..120,
    )
        .prop_map(|(roots, qs, total)| {
            let mut out = Vec::new();
            for (i, ((d, w, l, req, prio, creation, usage_pct), pick)) in qs.into_iter().enumerate()
            {
                // The first `roots` queues are top level; later ones hang under an earlier queue.
                let parent = if i < roots { None } else { Some(pick % i) };
                out.push(GenQ {
                    parent,
                    d,
                    w,
                    l,
                    req,
                    prio,
                    creation,
                    usage_pct,
                });
            }
            (out, total)
        })
}

const Q: i128 = SCALE / 4;

fn build(qs: &[GenQ], order: &[usize]) -> Vec<QueueInput> {
    // `order[k]` = original index of the queue placed at position k.
    let mut pos = vec![0usize; qs.len()];
    for (k, &o) in order.iter().enumerate() {
        pos[o] = k;
    }
    order
        .iter()
        .map(|&o| {
            let g = &qs[o];
            let mut resources = [ResourceParams::default(); 3];
            resources[0] = ResourceParams {
                deserved: g.d.map(|d| i128::from(d) * Q),
                weight: i128::from(g.w) * SCALE,
                limit: g.l.map(|l| i128::from(l) * Q),
                request: i128::from(g.req) * Q,
                usage: i128::from(g.usage_pct) * SCALE / 100,
            };
            QueueInput {
                name: format!("q{o}"),
                parent: g.parent.map(|p| QueueId::new(pos[p])),
                priority: g.prio,
                creation: Some(Timestamp::from_unix_seconds(g.creation)),
                uid: String::new(),
                resources,
            }
        })
        .collect()
}

fn divide(qs: &[GenQ], total: i64, mode: Mode, k: i128) -> (Hierarchy, gpuquota_rank::Division) {
    let order: Vec<usize> = (0..qs.len()).collect();
    let h = Hierarchy::new(build(qs, &order)).unwrap();
    let d = h
        .divide(
            PerResource::new(i128::from(total) * Q, 0, 0),
            &DivisionOptions::default().with_mode(mode).with_k_value(k),
        )
        .unwrap();
    (h, d)
}

fn groups(h: &Hierarchy) -> Vec<(Option<QueueId>, Vec<QueueId>)> {
    let mut g = vec![(None, h.roots().to_vec())];
    for q in h.ids() {
        if !h.is_leaf(q) {
            g.push((Some(q), h.children(q).to_vec()));
        }
    }
    g
}

fn requestable(h: &Hierarchy, d: &gpuquota_rank::Division, q: QueueId) -> i128 {
    let req = d.request[q][Resource::Gpu];
    h.queue(q).resources[0].limit.map_or(req, |l| l.min(req))
}

// ---------- a slow rational reference of KAI's division ----------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct R(i128, i128);

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 { a.abs() } else { gcd(b, a % b) }
}

impl R {
    fn n(a: i128, b: i128) -> R {
        let g = gcd(a, b).max(1);
        let s = if b < 0 { -1 } else { 1 };
        R(s * a / g, s * b / g)
    }
    fn i(a: i128) -> R {
        R(a, 1)
    }
    fn add(self, o: R) -> R {
        R::n(self.0 * o.1 + o.0 * self.1, self.1 * o.1)
    }
    fn sub(self, o: R) -> R {
        R::n(self.0 * o.1 - o.0 * self.1, self.1 * o.1)
    }
    fn mul(self, o: R) -> R {
        R::n(self.0 * o.0, self.1 * o.1)
    }
    fn div(self, o: R) -> R {
        R::n(self.0 * o.1, self.1 * o.0)
    }
    fn lt(self, o: R) -> bool {
        self.0 * o.1 < o.0 * self.1
    }
    fn le(self, o: R) -> bool {
        !o.lt(self)
    }
    fn floor(self) -> R {
        R::i(self.0.div_euclid(self.1))
    }
    fn min(self, o: R) -> R {
        if o.lt(self) { o } else { self }
    }
    fn max(self, o: R) -> R {
        if self.lt(o) { o } else { self }
    }
}

struct RefQ {
    d: Option<R>,
    w: R,
    l: Option<R>,
    req: R,
    u: R,
    prio: i32,
    creation: i64,
    name: String,
    fs: R,
}

fn ref_divide(qs: &mut [RefQ], sibs: &[usize], total: R, k: R) {
    let requestable = |q: &RefQ| q.l.map_or(q.req, |l| l.min(q.req));
    let remreq = |q: &RefQ| requestable(q).sub(q.fs).max(R::i(0));
    let mut rem = total;
    for &s in sibs {
        let g = qs[s].d.unwrap_or(total).min(requestable(&qs[s]));
        qs[s].fs = qs[s].fs.add(g);
        rem = rem.sub(g);
    }
    if rem.le(R::i(0)) {
        return;
    }
    let mut prios: Vec<i32> = sibs.iter().map(|&s| qs[s].prio).collect();
    prios.sort_unstable_by(|a, b| b.cmp(a));
    prios.dedup();
    for p in prios {
        if rem.le(R::i(0)) {
            break;
        }
        let tier: Vec<usize> = sibs.iter().copied().filter(|&s| qs[s].prio == p).collect();
        let mut rec: Vec<(usize, R)> = Vec::new();
        loop {
            let amount = rem;
            let wtot = tier
                .iter()
                .filter(|&&q| R::i(0).lt(remreq(&qs[q])))
                .fold(R::i(0), |a, &q| a.add(qs[q].w));
            if wtot == R::i(0) {
                break;
            }
            let sw: Vec<R> = tier
                .iter()
                .map(|&q| {
                    if remreq(&qs[q]) == R::i(0) {
                        return R::i(0);
                    }
                    let nw = qs[q].w.div(wtot);
                    nw.add(k.mul(nw.sub(qs[q].u))).max(R::i(0))
                })
                .collect();
            let total_sw = sw.iter().fold(R::i(0), |a, &b| a.add(b));
            if total_sw == R::i(0) {
                break;
            }
            let mut again = false;
            for (i, &q) in tier.iter().enumerate() {
                if rem == R::i(0) {
                    break;
                }
                let need = remreq(&qs[q]);
                if need == R::i(0) || qs[q].w == R::i(0) {
                    continue;
                }
                let share = amount.mul(sw[i]).div(total_sw);
                let give;
                if need.le(share) {
                    give = need;
                    rec.retain(|r| r.0 != q);
                } else {
                    give = share.floor();
                    let frac = share.sub(give);
                    if R::i(0).lt(frac) {
                        rec.retain(|r| r.0 != q);
                        rec.push((q, frac));
                    }
                }
                if give == R::i(0) {
                    continue;
                }
                qs[q].fs = qs[q].fs.add(give);
                rem = rem.sub(give);
                again |= need.lt(share);
            }
            if !again || rem == R::i(0) {
                break;
            }
        }
        rec.sort_by(|a, b| {
            if b.1.lt(a.1) {
                std::cmp::Ordering::Less
            } else if a.1.lt(b.1) {
                std::cmp::Ordering::Greater
            } else {
                qs[a.0]
                    .creation
                    .cmp(&qs[b.0].creation)
                    .then(qs[a.0].name.cmp(&qs[b.0].name))
            }
        });
        for (q, _) in rec {
            if rem.le(R::i(0)) {
                break;
            }
            let g = R::i(1).min(rem);
            qs[q].fs = qs[q].fs.add(g);
            rem = rem.sub(g);
        }
    }
}

fn reference(qs: &[GenQ], total: i64, h: &Hierarchy, d: &gpuquota_rank::Division, k: R) -> Vec<R> {
    let mut rq: Vec<RefQ> = qs
        .iter()
        .enumerate()
        .map(|(i, g)| RefQ {
            d: g.d.map(|v| R::n(i128::from(v), 4)),
            w: R::i(i128::from(g.w)),
            l: g.l.map(|v| R::n(i128::from(v), 4)),
            req: R::n(d.request[QueueId::new(i)][Resource::Gpu], SCALE),
            u: R::n(i128::from(g.usage_pct), 100),
            prio: g.prio,
            creation: g.creation,
            name: format!("q{i}"),
            fs: R::i(0),
        })
        .collect();
    let ix = |qs: &[QueueId]| qs.iter().map(|q| q.index()).collect::<Vec<usize>>();
    ref_divide(&mut rq, &ix(h.roots()), R::n(i128::from(total), 4), k);
    let mut order = ix(h.roots());
    let mut head = 0;
    while head < order.len() {
        let q = order[head];
        head += 1;
        let ch = ix(h.children(QueueId::new(q)));
        if !ch.is_empty() {
            let t = rq[q].fs;
            ref_divide(&mut rq, &ch, t, k);
            order.extend(ch);
        }
    }
    rq.into_iter().map(|q| q.fs).collect()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn exact_mode_agrees_with_rational_reference((qs, total) in gen_tree(), k in 0i128..3) {
        let (h, d) = divide(&qs, total, Mode::Kai, k * SCALE);
        let want = reference(&qs, total, &h, &d, R::i(k));
        for (i, w) in want.iter().enumerate() {
            prop_assert_eq!(R::n(d.fair_share[QueueId::new(i)][Resource::Gpu], SCALE), *w, "queue q{}", i);
        }
    }

    #[test]
    fn shares_sum_to_at_most_the_total_unless_phase1_oversubscribes((qs, total) in gen_tree()) {
        for mode in [Mode::Kai, Mode::Corrected] {
            let (h, d) = divide(&qs, total, mode, SCALE);
            for (parent, sibs) in groups(&h) {
                let t = parent.map_or(i128::from(total) * Q, |p| d.fair_share[p][Resource::Gpu]);
                let p1: i128 = sibs.iter().map(|&s| d.phase1[s][Resource::Gpu]).sum();
                let fs: i128 = sibs.iter().map(|&s| d.fair_share[s][Resource::Gpu]).sum();
                if p1 <= t {
                    prop_assert!(fs <= t, "{:?}: {} > {}", parent, fs, t);
                } else {
                    // Oversubscribed: nothing beyond phase 1.
                    prop_assert_eq!(fs, p1);
                }
            }
        }
    }

    #[test]
    fn corrected_mode_never_exceeds_limit_or_request((qs, total) in gen_tree()) {
        let (h, d) = divide(&qs, total, Mode::Corrected, SCALE);
        for q in h.ids() {
            prop_assert!(d.fair_share[q][Resource::Gpu] <= requestable(&h, &d, q), "q{}", q);
        }
    }

    #[test]
    fn priority_tiers_are_strict(mut qs_total in gen_tree()) {
        for q in &mut qs_total.0 {
            q.usage_pct = 0;
        }
        let (qs, total) = qs_total;
        let (h, d) = divide(&qs, total, Mode::Kai, SCALE);
        for (_, sibs) in groups(&h) {
            for &hi in &sibs {
                let hq = h.queue(hi);
                let starving = hq.resources[0].weight > 0 && d.fair_share[hi][Resource::Gpu] < requestable(&h, &d, hi);
                if !starving {
                    continue;
                }
                for &lo in &sibs {
                    if h.queue(lo).priority < hq.priority {
                        prop_assert_eq!(d.fair_share[lo][Resource::Gpu], d.phase1[lo][Resource::Gpu], "q{} over quota while q{} starves", lo, hi);
                    }
                }
            }
        }
    }

    #[test]
    fn input_order_does_not_matter((qs, total) in gen_tree(), seed in any::<u64>()) {
        let (_, d) = divide(&qs, total, Mode::Kai, SCALE);
        // A permutation that keeps the tree valid (any order is valid: parents are by index).
        let mut order: Vec<usize> = (0..qs.len()).collect();
        let mut x = seed | 1;
        for i in (1..order.len()).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            order.swap(i, (x % (i as u64 + 1)) as usize);
        }
        let h2 = Hierarchy::new(build(&qs, &order)).unwrap();
        let d2 = h2.divide(
            PerResource::new(i128::from(total) * Q, 0, 0), &DivisionOptions::default()).unwrap();
        for (k, &o) in order.iter().enumerate() {
            prop_assert_eq!(d2.fair_share[QueueId::new(k)][Resource::Gpu], d.fair_share[QueueId::new(o)][Resource::Gpu], "q{}", o);
        }
    }
}
