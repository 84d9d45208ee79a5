//! Classical preemption (upstream `pkg/scheduler/preemption` with
//! `classical/*`): candidate selection across hierarchical cohorts, candidate ordering, greedy
//! removal with fill-back, the borrowing / no-borrowing attempts, and upstream's reasons.

use gpuquota_model::{Amount, Timestamp};

use crate::ids::Table;
use crate::tree::{FrId, NodeId, NodeKind, Usage};
use crate::world::{CqId, ReclaimPolicy, WithinPolicy, WlId, World};

/// Why a workload is preempted (upstream's `Preempted` condition reasons).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PreemptReason {
    /// By a higher-priority workload of the same ClusterQueue.
    InClusterQueue,
    /// Its ClusterQueue borrows quota the preemptor's queue reclaims.
    InCohortReclamation,
    /// The preemptor keeps borrowing (`borrowWithinCohort`).
    InCohortReclaimWhileBorrowing,
    /// Fair sharing (reserved for the fair-sharing engine; never produced here).
    InCohortFairSharing,
}

impl PreemptReason {
    /// Upstream spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            PreemptReason::InClusterQueue => "InClusterQueue",
            PreemptReason::InCohortReclamation => "InCohortReclamation",
            PreemptReason::InCohortReclaimWhileBorrowing => "InCohortReclaimWhileBorrowing",
            PreemptReason::InCohortFairSharing => "InCohortFairSharing",
        }
    }

    /// The phrase upstream's preemption message uses.
    pub fn phrase(self) -> &'static str {
        match self {
            PreemptReason::InClusterQueue => "prioritization in the ClusterQueue",
            PreemptReason::InCohortReclamation => "reclamation within the cohort",
            PreemptReason::InCohortReclaimWhileBorrowing => {
                "reclamation within the cohort while borrowing"
            }
            PreemptReason::InCohortFairSharing => "Fair Sharing within the cohort",
        }
    }
}

/// A chosen victim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    /// The victim.
    pub wl: WlId,
    /// Why.
    pub reason: PreemptReason,
}

/// The run's "now": later than every time in the input. Upstream orders preemption
/// candidates by their `QuotaReserved` transition time and takes the current time for a
/// workload without `QuotaReserved=True`; workloads admitted during the run were admitted now.
pub fn now() -> Timestamp {
    Timestamp::from_unix_seconds(i64::MAX)
}

/// A quota reservation held by a workload (input admission or admitted during the run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reservation {
    /// ClusterQueue.
    pub cq: CqId,
    /// Usage per flavor-resource.
    pub usage: Vec<(FrId, Amount)>,
    /// Flavor-resources its flavors use (sorted).
    pub uses: Vec<FrId>,
    /// Admission time: (QuotaReserved time, cycle admitted in this run or 0).
    pub time: (Timestamp, u32),
    /// Already `Evicted=True`.
    pub evicted: bool,
}

/// Read access to the admitted workloads for a target search.
pub struct Admitted<'a> {
    /// The world.
    pub world: &'a World,
    /// Reservation per workload (`None` = not admitted).
    pub reservations: &'a Table<WlId, Option<Reservation>>,
    /// Admitted workloads per ClusterQueue as their ordering keys, each list sorted (the
    /// workload id is the key's last field).
    pub by_cq: &'a Table<CqId, Vec<CandKey>>,
    /// Rank of every workload's UID (the final tie-break).
    pub uid_rank: &'a Table<WlId, u32>,
}

/// The static part of upstream's candidate ordering, identical for every candidate of one
/// ClusterQueue: evicted first, lower priority, more recently admitted, UID.
///
/// The last field is the set of flavor-resources the reservation uses (see [`uses_mask`]);
/// the workload id before it is unique, so it never decides the order.
pub type CandKey = (u8, i32, std::cmp::Reverse<(Timestamp, u32)>, u32, WlId, u64);

/// A set of flavor-resources as bits (bit `i` for flavor-resource `i`), or every bit when
/// one of them is 64 or more (the set is then not known from the bits alone).
///
/// # Complexity
/// O(frs).
pub fn uses_mask(frs: &[FrId]) -> u64 {
    let mut m = 0u64;
    for f in frs {
        if f.index() >= 64 {
            return u64::MAX;
        }
        m |= 1u64 << f.index();
    }
    m
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    WithinCq,
    Hierarchical,
    ReclaimWithoutBorrowing,
    ReclaimWhileBorrowing,
}

impl Variant {
    fn reason(self) -> PreemptReason {
        match self {
            Variant::WithinCq => PreemptReason::InClusterQueue,
            Variant::Hierarchical | Variant::ReclaimWithoutBorrowing => {
                PreemptReason::InCohortReclamation
            }
            Variant::ReclaimWhileBorrowing => PreemptReason::InCohortReclaimWhileBorrowing,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Cand {
    wl: WlId,
    cq: CqId,
    lca: Option<NodeId>,
    variant: Variant,
}

/// Removes a reservation's usage from the snapshot.
pub fn remove_reservation(world: &World, usage: &mut Usage, r: &Reservation) {
    let node = world.cluster_queues[r.cq].node;
    for &(fr, a) in &r.usage {
        world.tree.remove_usage(usage, node, fr, a);
    }
}

/// Adds a reservation's usage to the snapshot.
pub fn add_reservation(world: &World, usage: &mut Usage, r: &Reservation) {
    let node = world.cluster_queues[r.cq].node;
    for &(fr, a) in &r.usage {
        world.tree.add_usage(usage, node, fr, a);
    }
}

impl Admitted<'_> {
    fn res(&self, wl: WlId) -> &Reservation {
        // Candidates are drawn from `by_cq`, which only lists reserved workloads.
        match &self.reservations[wl] {
            Some(r) => r,
            None => unreachable_reservation(),
        }
    }

    /// The ordering key of an admitted workload (see [`CandKey`]).
    pub fn key(
        world: &World,
        reservations: &Table<WlId, Option<Reservation>>,
        uid_rank: &Table<WlId, u32>,
        wl: WlId,
    ) -> CandKey {
        let (evicted, time, uses) = match &reservations[wl] {
            Some(r) => (r.evicted, r.time, uses_mask(&r.uses)),
            None => (false, (Timestamp::EPOCH, 0), u64::MAX),
        };
        (
            u8::from(!evicted),
            world.workloads[wl].priority,
            std::cmp::Reverse(time),
            uid_rank[wl],
            wl,
            uses,
        )
    }

    fn uses_any(&self, wl: WlId, frs: &[FrId]) -> bool {
        let uses = &self.res(wl).uses;
        frs.iter().any(|f| uses.binary_search(f).is_ok())
    }

    fn fits(
        &self,
        usage: &Usage,
        node: NodeId,
        requests: &[(FrId, Amount)],
        allow_borrowing: bool,
    ) -> bool {
        let t = &self.world.tree;
        requests.iter().all(|&(fr, req)| {
            if !allow_borrowing && t.borrowing_with(usage, node, fr, req) {
                return false;
            }
            req <= t.available(usage, node, fr)
        })
    }

    fn collect_subtree(
        &self,
        usage: &Usage,
        node: NodeId,
        lca: NodeId,
        advantage: bool,
        frs_need: &[FrId],
        out: &mut Vec<Source>,
    ) {
        let w = self.world;
        if w.tree.within_nominal(usage, node, frs_need) {
            return;
        }
        match w.tree.nodes[node].kind {
            NodeKind::Cohort => {
                for &c in &w.tree.nodes[node].children {
                    self.collect_subtree(usage, c, lca, advantage, frs_need, out);
                }
            }
            NodeKind::ClusterQueue(cq) => {
                if w.cluster_queues[cq].inactive.is_none() && !self.by_cq[cq].is_empty() {
                    out.push(Source {
                        cq,
                        lca: Some(lca),
                        advantage,
                    });
                }
            }
        }
    }

    /// The candidate `v` (priority `vp`, the priority its [`CandKey`] holds) of `src` if it
    /// passes the policy and uses a flavor-resource that needs preemption.
    ///
    /// The policy is checked first: it reads only the key, while the flavor-resource check
    /// reads the reservation (both are pure tests, so their order cannot change the answer).
    fn admit_candidate(&self, src: &Source, v: WlId, vp: i32, ctx: &Ctx<'_>) -> Option<Cand> {
        if v == ctx.wl {
            return None;
        }
        if src.lca.is_none() {
            let ok = match ctx.within {
                WithinPolicy::Never => false,
                WithinPolicy::LowerPriority => vp < ctx.priority,
                WithinPolicy::LowerOrNewerEqualPriority => {
                    vp < ctx.priority
                        || (vp == ctx.priority && ctx.created < self.world.workloads[v].created)
                }
            };
            if !ok || !self.uses_any(v, ctx.frs_need) {
                return None;
            }
            return Some(Cand {
                wl: v,
                cq: src.cq,
                lca: None,
                variant: Variant::WithinCq,
            });
        }
        let allowed = match ctx.reclaim {
            ReclaimPolicy::Never => false,
            ReclaimPolicy::LowerPriority => vp < ctx.priority,
            ReclaimPolicy::Any => true,
        };
        if !allowed || !self.uses_any(v, ctx.frs_need) {
            return None;
        }
        let variant = if src.advantage {
            Variant::Hierarchical
        } else if !ctx.bwc || vp >= ctx.priority || ctx.threshold.is_some_and(|t| vp > t) {
            Variant::ReclaimWithoutBorrowing
        } else {
            Variant::ReclaimWhileBorrowing
        };
        Some(Cand {
            wl: v,
            cq: src.cq,
            lca: src.lca,
            variant,
        })
    }

    /// True when the policy rejects a workload of `src` with priority `vp` for its priority
    /// and, the merge taking each list in priority order within a pass, every later workload
    /// of `src` as well.
    ///
    /// # Complexity
    /// O(1).
    fn priority_exhausted(src: &Source, vp: i32, ctx: &Ctx<'_>) -> bool {
        if src.lca.is_none() {
            match ctx.within {
                WithinPolicy::Never => true,
                WithinPolicy::LowerPriority => vp >= ctx.priority,
                WithinPolicy::LowerOrNewerEqualPriority => vp > ctx.priority,
            }
        } else {
            match ctx.reclaim {
                ReclaimPolicy::Never => true,
                ReclaimPolicy::LowerPriority => vp >= ctx.priority,
                ReclaimPolicy::Any => false,
            }
        }
    }

    /// True when a workload with priority `vp` of the cohort source `src`, and every later
    /// workload of it in a pass, would be a `ReclaimWithoutBorrowing` candidate, which an
    /// attempt that allows borrowing rejects ([`Admitted::valid`]): the conditions only get
    /// truer as the priority rises.
    ///
    /// # Complexity
    /// O(1).
    fn reclaims_without_borrowing_from(src: &Source, vp: i32, ctx: &Ctx<'_>) -> bool {
        if src.lca.is_none() || src.advantage {
            return false;
        }
        !ctx.bwc || vp >= ctx.priority || ctx.threshold.is_some_and(|t| vp > t)
    }

    /// True when a cohort source's queue, or one of its ancestors below the LCA, is within
    /// nominal on `frs_need`: [`Admitted::valid`] then rejects every candidate of the source.
    ///
    /// # Complexity
    /// O(depth × frs_need).
    fn source_within_nominal(&self, usage: &Usage, src: &Source, frs_need: &[FrId]) -> bool {
        let Some(lca) = src.lca else {
            return false;
        };
        let t = &self.world.tree;
        let node = self.world.cluster_queues[src.cq].node;
        if t.within_nominal(usage, node, frs_need) {
            return true;
        }
        t.ancestors(node)
            .take_while(|&a| a != lca)
            .any(|a| t.within_nominal(usage, a, frs_need))
    }

    /// True when some workload of `sources` is a candidate.
    fn any_candidate(&self, sources: &[Source], ctx: &Ctx<'_>) -> bool {
        sources.iter().any(|src| {
            self.by_cq[src.cq]
                .iter()
                .any(|k| self.admit_candidate(src, k.4, k.1, ctx).is_some())
        })
    }

    fn valid(
        &self,
        usage: &Usage,
        c: &Cand,
        preemptor_cq: CqId,
        allow: bool,
        frs_need: &[FrId],
    ) -> bool {
        if c.cq == preemptor_cq {
            return true;
        }
        if allow && c.variant == Variant::ReclaimWithoutBorrowing {
            return false;
        }
        let t = &self.world.tree;
        let node = self.world.cluster_queues[c.cq].node;
        if t.within_nominal(usage, node, frs_need) {
            return false;
        }
        for a in t.ancestors(node) {
            if Some(a) == c.lca {
                break;
            }
            if t.within_nominal(usage, a, frs_need) {
                return false;
            }
        }
        true
    }

    /// Upstream `GetTargets` for classical preemption: the minimal (w.r.t. the greedy order)
    /// set of workloads to preempt so that `requests` fit in `cq`, or nothing.
    ///
    /// `usage` is the cycle's snapshot; it is restored before returning. Candidates are never
    /// collected and sorted: each ClusterQueue keeps its admitted workloads sorted by
    /// [`CandKey`], and the candidate sequence is a lazy k-way merge of those lists.
    ///
    /// # Complexity
    /// O(Q log Q + V × (log Q + R × depth)) for Q ClusterQueues holding candidates, V
    /// workloads visited before the requests fit, and R requested flavor-resources.
    pub fn targets(
        &self,
        usage: &mut Usage,
        cq: CqId,
        wl: WlId,
        requests: &[(FrId, Amount)],
        frs_need: &[FrId],
    ) -> Vec<Target> {
        let w = self.world;
        let t = &w.tree;
        let cqi = &w.cluster_queues[cq];
        let node = cqi.node;
        let me = &w.workloads[wl];
        // the flavor-resources needing preemption as bits: a candidate whose key's bits miss
        // them all uses none of them (no bits when one is 64 or more: then nothing is skipped)
        let need_bits = match uses_mask(frs_need) {
            u64::MAX => None,
            m => Some(m),
        };
        let ctx = Ctx {
            frs_need,
            within: cqi.within,
            reclaim: cqi.reclaim,
            bwc: cqi.borrow_within_cohort,
            threshold: cqi.max_priority_threshold,
            priority: me.priority,
            created: me.created,
            wl,
        };
        let same: Vec<Source> = if cqi.within != WithinPolicy::Never && !self.by_cq[cq].is_empty() {
            vec![Source {
                cq,
                lca: None,
                advantage: false,
            }]
        } else {
            Vec::new()
        };
        let mut cohort_sources = Vec::new();
        if t.parent(node).is_some() && cqi.reclaim != ReclaimPolicy::Never {
            let (mut adv, mut remaining) = fit_in_quota(w, usage, node, requests);
            let mut prev = node;
            let mut cur = t.parent(node);
            while let Some(a) = cur {
                for &c in &t.nodes[a].children {
                    if c != prev {
                        self.collect_subtree(usage, c, a, adv, frs_need, &mut cohort_sources);
                    }
                }
                let (fits, rem) = fit_in_quota(w, usage, a, &remaining);
                adv |= fits;
                remaining = rem;
                prev = a;
                cur = t.parent(a);
            }
        }
        let (hier, prio): (Vec<Source>, Vec<Source>) =
            cohort_sources.into_iter().partition(|s| s.advantage);
        let has_hier = self.any_candidate(&hier, &ctx);
        let has_prio = self.any_candidate(&prio, &ctx);
        if !has_hier && !has_prio && !self.any_candidate(&same, &ctx) {
            return Vec::new();
        }
        let no_other = !has_hier && !has_prio;
        let bwc_forbidden = !cqi.borrow_within_cohort;
        let under_nominal = frs_need
            .iter()
            .all(|&fr| t.usage(usage, node, fr) < t.quota(node, fr).nominal);
        let attempts: &[bool] = if no_other || (bwc_forbidden && !under_nominal) {
            &[true]
        } else if bwc_forbidden && !has_hier {
            &[false, true]
        } else {
            &[true, false]
        };
        let groups: [&[Source]; 3] = [&hier, &prio, &same];
        let any_evicted = groups
            .iter()
            .flat_map(|g| g.iter())
            .any(|s| self.by_cq[s.cq].first().is_some_and(|k| k.0 == 0));
        let passes: &[bool] = if any_evicted {
            &[true, false]
        } else {
            &[false]
        };
        for &allow in attempts {
            let mut chosen: Vec<Cand> = Vec::new();
            let mut found = false;
            'passes: for &evicted_pass in passes {
                for g in groups {
                    let mut merge = Merge::new(self, g, evicted_pass);
                    while let Some((si, pos, v, vp, bits)) = merge.peek() {
                        let src = &g[si];
                        // A source whose remaining candidates would all be rejected is dropped:
                        // usage only falls while an attempt runs, so a queue (or an ancestor
                        // below the LCA) within nominal stays so, and the list is in priority
                        // order within a pass, so a policy bound on priority cuts its tail.
                        if Self::priority_exhausted(src, vp, &ctx)
                            || (allow && Self::reclaims_without_borrowing_from(src, vp, &ctx))
                            || self.source_within_nominal(usage, src, frs_need)
                        {
                            merge.drop_top();
                            continue;
                        }
                        merge.advance(self, si, pos);
                        if need_bits.is_some_and(|n| bits & n == 0) {
                            // uses no flavor-resource that needs preemption: admit_candidate
                            // would reject it, without its reservation being read
                            continue;
                        }
                        let Some(c) = self.admit_candidate(src, v, vp, &ctx) else {
                            continue;
                        };
                        // `valid` holds here: its within-nominal test is the
                        // `source_within_nominal` above on the same usage, and its
                        // `ReclaimWithoutBorrowing` test under `allow` is
                        // `reclaims_without_borrowing_from`, both of which dropped the source
                        debug_assert!(self.valid(usage, &c, cq, allow, frs_need));
                        remove_reservation(w, usage, self.res(c.wl));
                        chosen.push(c);
                        if self.fits(usage, node, requests, allow) {
                            found = true;
                            break 'passes;
                        }
                    }
                }
            }
            if found {
                // fill back in reverse order
                let mut i = chosen.len() as isize - 2;
                while i >= 0 {
                    let iu = i as usize;
                    add_reservation(w, usage, self.res(chosen[iu].wl));
                    if self.fits(usage, node, requests, allow) {
                        let last = chosen.len() - 1;
                        chosen[iu] = chosen[last];
                        chosen.pop();
                    } else {
                        remove_reservation(w, usage, self.res(chosen[iu].wl));
                    }
                    i -= 1;
                }
                for c in &chosen {
                    add_reservation(w, usage, self.res(c.wl));
                }
                return chosen
                    .iter()
                    .map(|c| Target {
                        wl: c.wl,
                        reason: c.variant.reason(),
                    })
                    .collect();
            }
            for c in &chosen {
                add_reservation(w, usage, self.res(c.wl));
            }
        }
        Vec::new()
    }
}

/// One ClusterQueue whose admitted workloads are candidates, with the LCA it was found at
/// (`None` for the preemptor's own queue) and whether the preemptor had the hierarchical
/// advantage there.
#[derive(Debug, Clone, Copy)]
struct Source {
    cq: CqId,
    lca: Option<NodeId>,
    advantage: bool,
}

/// A lazy k-way merge of the sorted candidate lists of several sources, restricted to their
/// evicted prefixes or to the rest.
struct Merge {
    heap: std::collections::BinaryHeap<std::cmp::Reverse<(CandKey, usize, usize)>>,
    ends: Vec<usize>,
    cqs: Vec<CqId>,
}

impl Merge {
    /// The merge of `sources`' evicted prefixes (`evicted_pass`) or of the rest.
    ///
    /// # Complexity
    /// O(S log A) for S sources of at most A admitted workloads (the heap is built in O(S)).
    fn new(a: &Admitted<'_>, sources: &[Source], evicted_pass: bool) -> Merge {
        let mut heap = Vec::with_capacity(sources.len());
        let mut ends = Vec::with_capacity(sources.len());
        let mut cqs = Vec::with_capacity(sources.len());
        for (i, s) in sources.iter().enumerate() {
            let list = &a.by_cq[s.cq];
            let split = list.partition_point(|k| k.0 == 0);
            let (start, end) = if evicted_pass {
                (0, split)
            } else {
                (split, list.len())
            };
            ends.push(end);
            cqs.push(s.cq);
            if start < end {
                heap.push(std::cmp::Reverse((list[start], i, start)));
            }
        }
        Merge {
            heap: std::collections::BinaryHeap::from(heap),
            ends,
            cqs,
        }
    }

    /// The next candidate in upstream's order: (source index, position, workload, its
    /// priority and flavor-resource bits as its key holds them). It stays the merge's first until [`Merge::advance`]
    /// replaces it with its source's next candidate or [`Merge::drop_top`] drops the source.
    ///
    /// # Complexity
    /// O(1).
    fn peek(&self) -> Option<(usize, usize, WlId, i32, u64)> {
        let std::cmp::Reverse((key, si, pos)) = self.heap.peek()?;
        Some((*si, *pos, key.4, key.1, key.5))
    }

    /// Drops the first candidate and, with it, the rest of its source.
    ///
    /// # Complexity
    /// O(log S) for S sources.
    fn drop_top(&mut self) {
        self.heap.pop();
    }

    /// Replaces the first candidate, at `pos` of source `si`, with the candidate after it in
    /// that source (one sift instead of a pop and a push; the heap holds the same keys
    /// either way, and keys are distinct, so the order is the same), or drops the source
    /// when it has no more.
    ///
    /// # Complexity
    /// O(log S) for S sources.
    fn advance(&mut self, a: &Admitted<'_>, si: usize, pos: usize) {
        let next = pos + 1;
        if next < self.ends[si] {
            let list = &a.by_cq[self.cqs[si]];
            if let Some(mut top) = self.heap.peek_mut() {
                *top = std::cmp::Reverse((list[next], si, next));
            }
        } else {
            self.heap.pop();
        }
    }
}

struct Ctx<'a> {
    frs_need: &'a [FrId],
    within: WithinPolicy,
    reclaim: ReclaimPolicy,
    bwc: bool,
    threshold: Option<i32>,
    priority: i32,
    created: Timestamp,
    wl: WlId,
}

#[cold]
fn unreachable_reservation() -> ! {
    // by_cq and reservations are kept in step by the scheduler; reaching this is a bug.
    panic!("admitted workload without a reservation")
}

/// Upstream `QuantitiesFitInQuota`: does `req` fit in `n`'s subtree quota, and what remains
/// to be found above `n`.
fn fit_in_quota(
    w: &World,
    usage: &Usage,
    n: NodeId,
    req: &[(FrId, Amount)],
) -> (bool, Vec<(FrId, Amount)>) {
    let t = &w.tree;
    let mut fits = true;
    let mut rem = Vec::with_capacity(req.len());
    for &(fr, v) in req {
        if t.borrowing_with(usage, n, fr, v) {
            fits = false;
        }
        rem.push((
            fr,
            v.saturating_sub(t.local_available(usage, n, fr))
                .max(Amount::ZERO),
        ));
    }
    (fits, rem)
}
