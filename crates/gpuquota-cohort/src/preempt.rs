//! Classical preemption (`kueue.md` §6.1–§6.3, upstream `pkg/scheduler/preemption` with
//! `classical/*`): candidate selection across hierarchical cohorts, candidate ordering, greedy
//! removal with fill-back, the borrowing / no-borrowing attempts, and upstream's reasons.

use gpuquota_model::{Amount, Timestamp};

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
    pub reservations: &'a [Option<Reservation>],
    /// Admitted workloads per ClusterQueue.
    pub by_cq: &'a [Vec<WlId>],
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
    let node = world.cluster_queues[r.cq as usize].node;
    for &(fr, a) in &r.usage {
        world.tree.remove_usage(usage, node, fr, a);
    }
}

/// Adds a reservation's usage to the snapshot.
pub fn add_reservation(world: &World, usage: &mut Usage, r: &Reservation) {
    let node = world.cluster_queues[r.cq as usize].node;
    for &(fr, a) in &r.usage {
        world.tree.add_usage(usage, node, fr, a);
    }
}

impl Admitted<'_> {
    fn res(&self, wl: WlId) -> &Reservation {
        // Candidates are drawn from `by_cq`, which only lists reserved workloads.
        match &self.reservations[wl as usize] {
            Some(r) => r,
            None => unreachable_reservation(),
        }
    }

    fn uses_any(&self, wl: WlId, frs: &[FrId]) -> bool {
        let uses = &self.res(wl).uses;
        frs.iter().any(|f| uses.binary_search(f).is_ok())
    }

    /// Upstream `CandidatesOrdering`: evicted first, other ClusterQueues first, lower priority,
    /// more recently admitted, UID.
    fn ordering(&self, preemptor_cq: CqId, a: &Cand, b: &Cand) -> std::cmp::Ordering {
        let w = self.world;
        let (ra, rb) = (self.res(a.wl), self.res(b.wl));
        rb.evicted
            .cmp(&ra.evicted)
            .then_with(|| (a.cq == preemptor_cq).cmp(&(b.cq == preemptor_cq)))
            .then_with(|| {
                w.workloads[a.wl as usize]
                    .priority
                    .cmp(&w.workloads[b.wl as usize].priority)
            })
            .then_with(|| rb.time.cmp(&ra.time))
            .then_with(|| {
                w.workloads[a.wl as usize]
                    .uid
                    .cmp(&w.workloads[b.wl as usize].uid)
            })
            .then_with(|| a.wl.cmp(&b.wl))
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
        ctx: &Ctx<'_>,
        hier: &mut Vec<Cand>,
        prio: &mut Vec<Cand>,
    ) {
        let w = self.world;
        if w.tree.within_nominal(usage, node, ctx.frs_need) {
            return;
        }
        match w.tree.nodes[node as usize].kind {
            NodeKind::Cohort => {
                for &c in &w.tree.nodes[node as usize].children {
                    self.collect_subtree(usage, c, lca, advantage, ctx, hier, prio);
                }
            }
            NodeKind::ClusterQueue(cq) => {
                if w.cluster_queues[cq as usize].inactive.is_some() {
                    return;
                }
                for &v in &self.by_cq[cq as usize] {
                    if !self.uses_any(v, ctx.frs_need) {
                        continue;
                    }
                    let vp = w.workloads[v as usize].priority;
                    let allowed = match ctx.reclaim {
                        ReclaimPolicy::Never => false,
                        ReclaimPolicy::LowerPriority => vp < ctx.priority,
                        ReclaimPolicy::Any => true,
                    };
                    if !allowed {
                        continue;
                    }
                    let variant = if advantage {
                        Variant::Hierarchical
                    } else if !ctx.bwc
                        || vp >= ctx.priority
                        || ctx.threshold.is_some_and(|t| vp > t)
                    {
                        Variant::ReclaimWithoutBorrowing
                    } else {
                        Variant::ReclaimWhileBorrowing
                    };
                    let c = Cand {
                        wl: v,
                        cq,
                        lca: Some(lca),
                        variant,
                    };
                    if advantage {
                        hier.push(c);
                    } else {
                        prio.push(c);
                    }
                }
            }
        }
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
        let node = self.world.cluster_queues[c.cq as usize].node;
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
    /// `usage` is the cycle's snapshot; it is restored before returning.
    ///
    /// # Complexity
    /// O(C log C + C × R × depth) for C candidates and R requested flavor-resources.
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
        let cqi = &w.cluster_queues[cq as usize];
        let node = cqi.node;
        let me = &w.workloads[wl as usize];
        let ctx = Ctx {
            frs_need,
            reclaim: cqi.reclaim,
            bwc: cqi.borrow_within_cohort,
            threshold: cqi.max_priority_threshold,
            priority: me.priority,
        };
        // same-queue candidates
        let mut same = Vec::new();
        if cqi.within != WithinPolicy::Never {
            for &v in &self.by_cq[cq as usize] {
                if v == wl || !self.uses_any(v, frs_need) {
                    continue;
                }
                let vw = &w.workloads[v as usize];
                let ok = match cqi.within {
                    WithinPolicy::Never => false,
                    WithinPolicy::LowerPriority => vw.priority < me.priority,
                    WithinPolicy::LowerOrNewerEqualPriority => {
                        vw.priority < me.priority
                            || (vw.priority == me.priority && me.created < vw.created)
                    }
                };
                if ok {
                    same.push(Cand {
                        wl: v,
                        cq,
                        lca: None,
                        variant: Variant::WithinCq,
                    });
                }
            }
        }
        // cohort candidates
        let mut hier = Vec::new();
        let mut prio = Vec::new();
        if t.parent(node).is_some() && cqi.reclaim != ReclaimPolicy::Never {
            let (mut adv, mut remaining) = fit_in_quota(w, usage, node, requests);
            let mut prev = node;
            let mut cur = t.parent(node);
            while let Some(a) = cur {
                for &c in &t.nodes[a as usize].children {
                    if c != prev {
                        self.collect_subtree(usage, c, a, adv, &ctx, &mut hier, &mut prio);
                    }
                }
                let (fits, rem) = fit_in_quota(w, usage, a, &remaining);
                adv |= fits;
                remaining = rem;
                prev = a;
                cur = t.parent(a);
            }
        }
        let sort = |v: &mut Vec<Cand>| v.sort_by(|a, b| self.ordering(cq, a, b));
        sort(&mut same);
        sort(&mut hier);
        sort(&mut prio);
        let no_other = hier.is_empty() && prio.is_empty();
        let no_hier = hier.is_empty();
        let split = |v: &Vec<Cand>| -> (Vec<Cand>, Vec<Cand>) {
            let k = v.iter().take_while(|c| self.res(c.wl).evicted).count();
            (v[..k].to_vec(), v[k..].to_vec())
        };
        let (eh, nh) = split(&hier);
        let (ep, np) = split(&prio);
        let (es, ns) = split(&same);
        let seq: Vec<Cand> = eh
            .into_iter()
            .chain(ep)
            .chain(es)
            .chain(nh)
            .chain(np)
            .chain(ns)
            .collect();
        if seq.is_empty() {
            return Vec::new();
        }
        let bwc_forbidden = !cqi.borrow_within_cohort;
        let under_nominal = frs_need
            .iter()
            .all(|&fr| t.usage(usage, node, fr) < t.quota(node, fr).nominal);
        let attempts: &[bool] = if no_other || (bwc_forbidden && !under_nominal) {
            &[true]
        } else if bwc_forbidden && no_hier {
            &[false, true]
        } else {
            &[true, false]
        };
        for &allow in attempts {
            let mut chosen: Vec<Cand> = Vec::new();
            let mut found = false;
            for c in &seq {
                if !self.valid(usage, c, cq, allow, frs_need) {
                    continue;
                }
                remove_reservation(w, usage, self.res(c.wl));
                chosen.push(*c);
                if self.fits(usage, node, requests, allow) {
                    found = true;
                    break;
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

struct Ctx<'a> {
    frs_need: &'a [FrId],
    reclaim: ReclaimPolicy,
    bwc: bool,
    threshold: Option<i32>,
    priority: i32,
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
        if t.subtree_quota(n, fr) < t.usage(usage, n, fr).saturating_add(v) {
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
