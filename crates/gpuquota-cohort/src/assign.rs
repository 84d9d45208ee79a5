//! Flavor assignment (upstream `pkg/scheduler/flavorassigner`).

use std::collections::BTreeMap;

use gpuquota_model::Amount;
use gpuquota_model::meta::Toleration;

use crate::explain::{FlavorReason, NoFitReason};
use crate::tree::{FrId, Usage};
use crate::world::{
    CqId, FlavorId, GroupInfo, NodeRequirement, PodSetInfo, ResourceId, WlId, World,
};

/// The coarse mode of an assignment (`NoFit < Preempt < Fit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mode {
    /// Does not fit even with preemption.
    NoFit,
    /// Fits after preemption (possibly without candidates).
    Preempt,
    /// Fits now.
    Fit,
}

/// The fine preemption mode used to rank flavors
/// (`noFit < noPreemptionCandidates < preempt < reclaim < fit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PMode {
    /// No fit.
    NoFit,
    /// Preemption would be needed but found no targets.
    NoCandidates,
    /// Preemption inside the ClusterQueue is needed.
    Preempt,
    /// Only reclamation from other ClusterQueues is needed.
    Reclaim,
    /// Fits.
    Fit,
}

impl PMode {
    fn coarse(self) -> Mode {
        match self {
            PMode::NoFit => Mode::NoFit,
            PMode::Fit => Mode::Fit,
            _ => Mode::Preempt,
        }
    }
}

/// `(preemption mode, borrowing level)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Granular {
    p: PMode,
    borrow: u32,
}

const WORST: Granular = Granular {
    p: PMode::NoFit,
    borrow: u32::MAX,
};
const BEST: Granular = Granular {
    p: PMode::Fit,
    borrow: 0,
};

/// Upstream `isPreferred(a, b)`.
fn is_preferred(a: Granular, b: Granular, preemption_over_borrowing: bool) -> bool {
    if a.p == PMode::NoFit {
        return false;
    }
    if b.p == PMode::NoFit {
        return true;
    }
    let (an, bn) = (a.p == PMode::NoCandidates, b.p == PMode::NoCandidates);
    if an != bn {
        return !an;
    }
    if preemption_over_borrowing {
        if a.borrow != b.borrow {
            return a.borrow < b.borrow;
        }
        a.p > b.p
    } else {
        if a.p != b.p {
            return a.p > b.p;
        }
        a.borrow < b.borrow
    }
}

/// The result of a preemption simulation for one flavor-resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Possibility {
    /// No targets.
    NoCandidates,
    /// Targets include workloads of the preemptor's ClusterQueue.
    Preempt,
    /// All targets are in other ClusterQueues.
    Reclaim,
}

/// The preemption oracle: simulates preemption for `quantity` of one flavor-resource and
/// returns the possibility and the borrowing level after the preemptions.
pub trait Oracle {
    /// Upstream `SimulatePreemption`.
    fn simulate(&mut self, usage: &mut Usage, fr: FrId, quantity: Amount) -> (Possibility, u32);
    /// True when fair sharing is on (preemption is then simulated whenever
    /// `reclaimWithinCohort` is not `Never`).
    fn fair_sharing(&self) -> bool {
        false
    }
}

/// One resource's chosen flavor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlavorChoice {
    /// Resource.
    pub resource: ResourceId,
    /// Flavor.
    pub flavor: FlavorId,
    /// Mode on this flavor.
    pub mode: Mode,
    /// Borrowing level.
    pub borrow: u32,
    /// Index of the last flavor examined (−1 when the whole list was scanned).
    pub tried: i32,
}

/// One PodSet's assignment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodSetAssignment {
    /// Index in the workload's PodSets.
    pub index: usize,
    /// Assigned pod count (after partial admission).
    pub count: i32,
    /// Chosen flavors (resource order).
    pub flavors: Vec<FlavorChoice>,
    /// Reasons the PodSet does not simply fit (empty = Fit).
    pub reasons: Vec<FlavorReason>,
    /// Total requests of the PodSet (resource order).
    pub requests: Vec<(ResourceId, i64)>,
    no_fit_override: Option<NoFitReason>,
    /// Flavors that did not fit: (flavor, resource group, reason).
    attempts: Vec<(FlavorId, usize, PMode, Option<NoFitReason>)>,
    /// True when at least one flavor was examined.
    attempted: bool,
}

impl PodSetAssignment {
    /// Worst mode of the PodSet.
    pub fn mode(&self) -> Mode {
        if self.reasons.is_empty() {
            return Mode::Fit;
        }
        self.flavors
            .iter()
            .map(|f| f.mode)
            .min()
            .unwrap_or(Mode::NoFit)
    }
}

/// A workload's flavor assignment.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Assignment {
    /// Per PodSet (stops at the first PodSet that failed).
    pub pod_sets: Vec<PodSetAssignment>,
    /// Borrowing level (max over flavors).
    pub borrowing: u32,
    /// Accumulated usage per flavor-resource (sorted, zeros dropped).
    pub usage: Vec<(FrId, Amount)>,
    /// Why a NoFit assignment failed (`UnadmittedWorkloadsObservability`).
    pub no_fit_reason: Option<NoFitReason>,
}

impl Assignment {
    /// The representative (worst) mode; an empty assignment is NoFit.
    pub fn mode(&self) -> Mode {
        if self.pod_sets.is_empty() {
            return Mode::NoFit;
        }
        self.pod_sets
            .iter()
            .map(PodSetAssignment::mode)
            .min()
            .unwrap_or(Mode::NoFit)
    }

    /// Flavor-resources whose flavor was assigned in Preempt mode.
    pub fn frs_need_preemption(&self, world: &World) -> Vec<FrId> {
        let mut out: Vec<FrId> = self
            .pod_sets
            .iter()
            .flat_map(|ps| ps.flavors.iter())
            .filter(|f| f.mode == Mode::Preempt)
            .filter_map(|f| world.fr(f.flavor, f.resource))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Last tried flavor index per (PodSet, resource), for scan progress.
    pub fn last_tried(&self) -> Vec<Vec<(ResourceId, i32)>> {
        self.pod_sets
            .iter()
            .map(|ps| ps.flavors.iter().map(|f| (f.resource, f.tried)).collect())
            .collect()
    }
}

/// Scan progress from a previous attempt: per PodSet, per resource, the last tried index.
pub type LastTried = Vec<Vec<(ResourceId, i32)>>;

/// Everything the assigner reads.
pub struct Assigner<'a> {
    /// The world.
    pub world: &'a World,
    /// The ClusterQueue.
    pub cq: CqId,
    /// The workload.
    pub wl: WlId,
    /// The flavors nominated earlier in the cycle, per PodSet as (resource, flavor): when
    /// set, every other flavor is skipped (upstream's nomination mapping, which pins the
    /// flavors while an assignment is computed again for overlapping preemption targets).
    pub pinned: Option<&'a [Vec<(ResourceId, FlavorId)>]>,
}

fn taint_string(t: &gpuquota_model::meta::Taint) -> String {
    format!(
        "{{{} {} {} {}}}",
        t.key,
        t.value.as_deref().unwrap_or(""),
        t.effect,
        t.time_added.as_deref().unwrap_or("<nil>")
    )
}

/// Upstream `flavorSelector` + match against a fake node with the flavor's labels.
fn affinity_matches(ps: &PodSetInfo, labels: &BTreeMap<String, String>) -> bool {
    for (k, v) in &ps.node_selector {
        if labels.contains_key(k) && labels.get(k) != Some(v) {
            return false;
        }
    }
    if ps.affinity.is_empty() {
        return true;
    }
    let mut terms: Vec<Vec<&NodeRequirement>> = Vec::new();
    for t in &ps.affinity {
        let kept: Vec<&NodeRequirement> =
            t.iter().filter(|e| labels.contains_key(&e.key)).collect();
        if kept.is_empty() {
            return true; // an empty term matches anything
        }
        terms.push(kept);
    }
    terms.iter().any(|t| t.iter().all(|e| e.matches(labels)))
}

fn untolerated<'t>(
    taints: &'t [gpuquota_model::meta::Taint],
    pod: &[Toleration],
    flavor: &[Toleration],
) -> Option<&'t gpuquota_model::meta::Taint> {
    taints.iter().find(|t| {
        (t.effect == "NoSchedule" || t.effect == "NoExecute")
            && !pod.iter().chain(flavor.iter()).any(|tol| tol.tolerates(t))
    })
}

fn severity(r: Option<NoFitReason>) -> u8 {
    match r {
        Some(NoFitReason::NoMatchingFlavor) => 4,
        Some(NoFitReason::ExceedsMaxQuota) => 3,
        Some(NoFitReason::WaitingForQuota) => 2,
        None => 0,
    }
}

fn most_severe(a: Option<NoFitReason>, b: Option<NoFitReason>) -> Option<NoFitReason> {
    if severity(a) >= severity(b) { a } else { b }
}

impl Assigner<'_> {
    /// Upstream `fitsResourceQuota`.
    #[allow(clippy::too_many_arguments)]
    fn fits_resource_quota(
        &self,
        usage: &mut Usage,
        oracle: &mut dyn Oracle,
        fr: Option<FrId>,
        flavor: FlavorId,
        resource: ResourceId,
        assumed: Amount,
        request: i64,
        reasons: &mut Vec<FlavorReason>,
    ) -> (PMode, u32, Option<NoFitReason>) {
        let w = self.world;
        let t = &w.tree;
        let node = w.cluster_queues[self.cq].node;
        let (available, max_capacity, nominal) = match fr {
            Some(fr) => (
                t.available(usage, node, fr),
                t.potential_available(node, fr),
                t.quota(node, fr).nominal,
            ),
            None => (Amount::ZERO, Amount::ZERO, Amount::ZERO),
        };
        let val = assumed.saturating_add(Amount(request));
        if val > max_capacity {
            reasons.push(FlavorReason::ExceedsMaximum {
                resource,
                flavor,
                previous: assumed,
                request: Amount(request),
                maximum: max_capacity,
            });
            return (PMode::NoFit, 0, Some(NoFitReason::ExceedsMaxQuota));
        }
        let Some(fr) = fr else {
            return (PMode::Fit, 0, None);
        };
        let (borrow, may_reclaim) = t.borrowing_level(usage, node, fr, val);
        if val <= available {
            return (PMode::Fit, borrow, None);
        }
        reasons.push(FlavorReason::InsufficientUnused {
            resource,
            flavor,
            needed: val.saturating_sub(available),
        });
        let cq = &w.cluster_queues[self.cq];
        let fs_reclaim = oracle.fair_sharing() && cq.reclaim != crate::world::ReclaimPolicy::Never;
        if nominal >= val || may_reclaim || cq.borrow_within_cohort || fs_reclaim {
            let (p, b) = oracle.simulate(usage, fr, val);
            let mode = match p {
                Possibility::NoCandidates => PMode::NoCandidates,
                Possibility::Preempt => PMode::Preempt,
                Possibility::Reclaim => PMode::Reclaim,
            };
            return (mode, b, None);
        }
        (PMode::NoFit, borrow, Some(NoFitReason::WaitingForQuota))
    }

    /// Assigns flavors to every PodSet (`counts` overrides the PodSet counts for partial
    /// admission; `last` resumes a previous scan): one `assign_pod_set` per PodSet
    /// until one fails, then the accumulated usage and, for a NoFit, upstream's reason.
    ///
    /// # Complexity
    /// O(PodSets × resources × flavors × depth), plus the oracle's cost for flavors that need
    /// preemption.
    pub fn assign(
        &self,
        snapshot: &mut Usage,
        oracle: &mut dyn Oracle,
        counts: Option<&[i32]>,
        last: Option<&LastTried>,
    ) -> Assignment {
        let w = self.world;
        let wl = &w.workloads[self.wl];
        let mut a = Assignment::default();
        // accumulated usage per flavor-resource (a handful of entries: a Vec beats a map)
        let mut usage: Vec<(FrId, Amount)> = Vec::new();
        for (pi, ps) in wl.pod_sets.iter().enumerate() {
            let count = counts.and_then(|c| c.get(pi).copied()).unwrap_or(ps.count);
            let (psa, failed) = self.assign_pod_set(snapshot, oracle, pi, ps, count, last, &usage);
            for fc in &psa.flavors {
                if let (Some(fr), Some(q)) = (
                    w.fr(fc.flavor, fc.resource),
                    psa.requests.iter().find(|x| x.0 == fc.resource),
                ) && q.1 != 0
                {
                    match usage.iter_mut().find(|x| x.0 == fr) {
                        Some(e) => e.1 = e.1.saturating_add(Amount(q.1)),
                        None => usage.push((fr, Amount(q.1))),
                    }
                }
                a.borrowing = a.borrowing.max(fc.borrow);
            }
            a.pod_sets.push(psa);
            if failed {
                break;
            }
        }
        usage.sort_unstable_by_key(|x| x.0);
        a.usage = usage;
        if a.mode() == Mode::NoFit {
            a.no_fit_reason = resolve_no_fit(&a);
        }
        a
    }

    /// The total requests of `count` pods of `ps`, in resource order; with a `pods`
    /// resource in the ClusterQueue's groups, the pod count is requested as well.
    fn pod_set_requests(&self, ps: &PodSetInfo, count: i32) -> Vec<(ResourceId, i64)> {
        let cq = &self.world.cluster_queues[self.cq];
        let pods_res = self.world.pods;
        let pods_group = pods_res.and_then(|r| cq.group_of(r));
        let mut requests: Vec<(ResourceId, i64)> = ps
            .per_pod
            .iter()
            .map(|&(r, q)| (r, q.saturating_mul(i64::from(count))))
            .collect();
        if let (Some(r), Some(_)) = (pods_res, pods_group) {
            match requests.iter_mut().find(|x| x.0 == r) {
                Some(x) => x.1 = i64::from(count),
                None => {
                    requests.push((r, i64::from(count)));
                    requests.sort_unstable_by_key(|x| x.0);
                }
            }
        }
        requests
    }

    /// One PodSet's assignment against the usage `usage` the earlier PodSets accumulated:
    /// one [`Self::scan_group`] per resource group its requests need, in resource order.
    /// Returns the assignment and whether the PodSet failed (a resource no group covers, or
    /// a group without a fitting flavor: its reasons replace the others).
    ///
    /// # Complexity
    /// O(resources × flavors × depth), plus the oracle's cost.
    #[allow(clippy::too_many_arguments)]
    fn assign_pod_set(
        &self,
        snapshot: &mut Usage,
        oracle: &mut dyn Oracle,
        pi: usize,
        ps: &PodSetInfo,
        count: i32,
        last: Option<&LastTried>,
        usage: &[(FrId, Amount)],
    ) -> (PodSetAssignment, bool) {
        let cq = &self.world.cluster_queues[self.cq];
        let requests = self.pod_set_requests(ps, count);
        let mut flavors: Vec<FlavorChoice> = Vec::new();
        let mut reasons: Vec<FlavorReason> = Vec::new();
        let mut scan = PodSetScan::default();
        let mut failed = false;
        let mut no_fit_override = None;
        for &(res, qty) in &requests {
            let Some(g) = cq.group_of(res) else {
                if qty == 0 {
                    continue;
                }
                reasons.clear();
                reasons.push(FlavorReason::ResourceUnavailable { resource: res });
                no_fit_override = Some(NoFitReason::NoMatchingFlavor);
                flavors.clear();
                failed = true;
                break;
            };
            if flavors.iter().any(|f| f.resource == res) {
                continue;
            }
            let start = last
                .and_then(|l| l.get(pi))
                .and_then(|v| v.iter().find(|x| x.0 == res))
                .map(|x| (x.1 + 1).max(0) as usize)
                .unwrap_or(0);
            let place = Place { pi, ps, res, g };
            let mut group =
                self.scan_group(snapshot, oracle, &place, start, &requests, usage, &mut scan);
            if group.best.is_empty() || group.best_mode.p == PMode::NoFit {
                // the failing group's reasons replace everything gathered so far
                reasons = group.reasons;
                flavors.clear();
                failed = true;
                break;
            }
            if group.best_mode.p != PMode::Fit {
                reasons.append(&mut group.reasons);
            }
            flavors.extend(group.best);
        }
        flavors.sort_by_key(|f| f.resource);
        let psa = PodSetAssignment {
            index: pi,
            count,
            flavors,
            reasons,
            requests,
            no_fit_override,
            attempted: scan.attempted_any || !scan.attempts.is_empty(),
            attempts: scan.attempts,
        };
        (psa, failed)
    }

    /// Upstream's flavor scan of one resource group from flavor `start`: every flavor that
    /// passes [`Self::flavor_rejected`] is tried with [`Self::flavor_fit`]; the scan stops at
    /// the first flavor the fungibility policy keeps, else the most preferred one wins.
    ///
    /// # Complexity
    /// O(flavors × covered resources × depth), plus the oracle's cost.
    #[allow(clippy::too_many_arguments)]
    fn scan_group(
        &self,
        snapshot: &mut Usage,
        oracle: &mut dyn Oracle,
        place: &Place<'_>,
        start: usize,
        requests: &[(ResourceId, i64)],
        usage: &[(FrId, Amount)],
        scan: &mut PodSetScan,
    ) -> GroupScan {
        let cq = &self.world.cluster_queues[self.cq];
        let group = &cq.groups[place.g];
        let mut reasons: Vec<FlavorReason> = Vec::new();
        let mut best: Vec<FlavorChoice> = Vec::new();
        let mut best_mode = WORST;
        let mut attempted: i32 = -1;
        let mut idx = start;
        while idx < group.flavors.len() {
            attempted = idx as i32;
            let f = group.flavors[idx];
            idx += 1;
            if self.flavor_rejected(place, f, &mut reasons, scan) {
                continue;
            }
            let (rep, no_fit, choices) =
                self.flavor_fit(snapshot, oracle, f, group, requests, usage, &mut reasons);
            scan.attempted_any = true;
            if rep.p == PMode::NoFit {
                scan.attempts.push((f, place.g, rep.p, no_fit));
            }
            if !should_try_next(rep, cq.borrow_try_next, cq.preempt_try_next) {
                best = choices;
                best_mode = rep;
                break;
            }
            if is_preferred(rep, best_mode, cq.preemption_over_borrowing) {
                best = choices;
                best_mode = rep;
            }
        }
        let tried = if attempted == group.flavors.len() as i32 - 1 {
            -1
        } else {
            attempted
        };
        for c in &mut best {
            c.tried = tried;
        }
        GroupScan {
            best,
            best_mode,
            reasons,
        }
    }

    /// True when flavor `f` is skipped before any quota is looked at: not nominated (while
    /// pinned), missing, an untolerated taint, or the PodSet's node affinity; the reason is
    /// recorded (and, but for the nomination, the attempt).
    fn flavor_rejected(
        &self,
        place: &Place<'_>,
        f: FlavorId,
        reasons: &mut Vec<FlavorReason>,
        scan: &mut PodSetScan,
    ) -> bool {
        let flavor = &self.world.flavors[f];
        let (ps, g) = (place.ps, place.g);
        if let Some(pin) = self.pinned
            && !pin
                .get(place.pi)
                .is_some_and(|v| v.iter().any(|&(r, fl)| r == place.res && fl == f))
        {
            reasons.push(FlavorReason::NotNominated {
                flavor: f,
                resource: place.res,
            });
            return true;
        }
        let no_match = Some(NoFitReason::NoMatchingFlavor);
        if !flavor.exists {
            reasons.push(FlavorReason::FlavorNotFound { flavor: f });
            scan.attempts.push((f, g, PMode::NoFit, no_match));
            return true;
        }
        if let Some(t) = untolerated(&flavor.node_taints, &ps.tolerations, &flavor.tolerations) {
            reasons.push(FlavorReason::UntoleratedTaint {
                flavor: f,
                taint: taint_string(t),
            });
            scan.attempts.push((f, g, PMode::NoFit, no_match));
            return true;
        }
        if !affinity_matches(ps, &flavor.node_labels) {
            reasons.push(FlavorReason::NodeAffinityMismatch { flavor: f });
            scan.attempts.push((f, g, PMode::NoFit, no_match));
            return true;
        }
        false
    }

    /// Flavor `f` against the quota for every request of `group`'s covered resources: the
    /// representative mode (upstream's preferred worst over the resources), the most severe
    /// NoFit reason, and the choices of the resources that fit.
    ///
    /// # Complexity
    /// O(covered resources × depth), plus the oracle's cost.
    #[allow(clippy::too_many_arguments)]
    fn flavor_fit(
        &self,
        snapshot: &mut Usage,
        oracle: &mut dyn Oracle,
        f: FlavorId,
        group: &GroupInfo,
        requests: &[(ResourceId, i64)],
        usage: &[(FrId, Amount)],
        reasons: &mut Vec<FlavorReason>,
    ) -> (Granular, Option<NoFitReason>, Vec<FlavorChoice>) {
        let w = self.world;
        let cq = &w.cluster_queues[self.cq];
        let mut rep = BEST;
        let mut choices = Vec::with_capacity(group.covered.len());
        let mut flavor_no_fit = None;
        for &(r, val) in requests.iter().filter(|(r, _)| group.covered.contains(r)) {
            let fr = w.fr(f, r);
            let assumed = fr
                .and_then(|fr| usage.iter().find(|x| x.0 == fr).map(|x| x.1))
                .unwrap_or(Amount::ZERO);
            let (pm, borrow, nf) =
                self.fits_resource_quota(snapshot, oracle, fr, f, r, assumed, val, reasons);
            flavor_no_fit = most_severe(flavor_no_fit, nf);
            let mode = Granular { p: pm, borrow };
            if is_preferred(rep, mode, cq.preemption_over_borrowing) {
                rep = mode;
            }
            if rep.p == PMode::NoFit {
                continue;
            }
            choices.push(FlavorChoice {
                resource: r,
                flavor: f,
                mode: pm.coarse(),
                borrow,
                tried: 0,
            });
        }
        (rep, flavor_no_fit, choices)
    }
}

/// Where a resource group's scan runs: PodSet `pi` (`ps`), the resource `res` that asked
/// for it, and the group's index `g` in the ClusterQueue.
struct Place<'a> {
    pi: usize,
    ps: &'a PodSetInfo,
    res: ResourceId,
    g: usize,
}

/// What the flavor scans of one PodSet record for upstream's NoFit reason.
#[derive(Default)]
struct PodSetScan {
    /// Flavors that did not fit: (flavor, resource group, mode, reason).
    attempts: Vec<(FlavorId, usize, PMode, Option<NoFitReason>)>,
    /// True when at least one flavor was tried against the quota.
    attempted_any: bool,
}

/// One resource group's scan: the chosen flavor's choices (empty when none was kept), its
/// mode, and the reasons gathered over the flavors tried.
struct GroupScan {
    best: Vec<FlavorChoice>,
    best_mode: Granular,
    reasons: Vec<FlavorReason>,
}

fn should_try_next(m: Granular, borrow_try_next: bool, preempt_try_next: bool) -> bool {
    if m.p == PMode::NoFit || m.p == PMode::NoCandidates {
        return true;
    }
    if (m.p == PMode::Preempt || m.p == PMode::Reclaim) && preempt_try_next {
        return true;
    }
    m.borrow > 0 && borrow_try_next
}

/// Upstream `resolveNoFitReason`: per resource group the least severe failing flavor, across
/// groups the most severe.
fn resolve_no_fit(a: &Assignment) -> Option<NoFitReason> {
    let mut overall = None;
    for ps in &a.pod_sets {
        if ps.mode() != Mode::NoFit {
            continue;
        }
        if !ps.attempted {
            overall = most_severe(
                overall,
                Some(ps.no_fit_override.unwrap_or(NoFitReason::NoMatchingFlavor)),
            );
            continue;
        }
        let mut per_group: BTreeMap<usize, Option<NoFitReason>> = BTreeMap::new();
        for &(_, g, m, r) in &ps.attempts {
            if m != PMode::NoFit {
                continue;
            }
            match per_group.get(&g) {
                Some(&e) if severity(r) >= severity(e) => {}
                _ => {
                    per_group.insert(g, r);
                }
            }
        }
        let mut psr = ps.no_fit_override;
        for r in per_group.values() {
            psr = most_severe(psr, *r);
        }
        overall = most_severe(overall, psr);
    }
    overall
}

/// Upstream `podset_reducer`: the counts for step `k` of `D` when reducing toward `minCount`.
pub fn reduced_counts(pod_sets: &[PodSetInfo], k: i64, total: i64) -> Vec<i32> {
    pod_sets
        .iter()
        .map(|p| {
            let delta = i64::from(p.count - p.min_count.unwrap_or(p.count));
            let cut = if total == 0 { 0 } else { delta * k / total };
            (i64::from(p.count) - cut) as i32
        })
        .collect()
}

/// Total reducible pods `D = Σ (count − minCount)`.
pub fn reducible(pod_sets: &[PodSetInfo]) -> i64 {
    pod_sets
        .iter()
        .map(|p| i64::from(p.count - p.min_count.unwrap_or(p.count)).max(0))
        .sum()
}
