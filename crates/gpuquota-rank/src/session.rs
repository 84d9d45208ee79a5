//! One KAI scheduling session: allocate → consolidation → reclaim → preempt →
//! stalegangeviction, on a [`Cluster`] snapshot.
//!
//! Fair shares are computed once when the session opens (as the proportion plugin does in
//! `OnSessionOpen`) and stay fixed; allocations and evictions update the queues' allocated
//! amounts as decisions are committed. With no nodes, the session runs at quota level on one
//! virtual pool of [`Cluster::totals`].
//!
//! A job placed by an action that evicts victims (reclaim, preempt, consolidation) is
//! reported `pipelined`, even where it lands on idle resources: KAI's job solver allocates
//! the preemptor pipeline-only (`kai-scheduler/KAI-Scheduler:
//! pkg/scheduler/actions/common/solvers`, `AllocateJob(…, isPipelineOnly=true)`), so it binds
//! once its victims are gone (allocate test "interactive after train when over-quota").

// Per-resource arrays `[_; 3]` (GPU, CPU, memory) are indexed in parallel by resource.
#![allow(clippy::needless_range_loop)]

use std::cmp::Ordering;

use crate::division::{Division, DivisionError, DivisionOptions, Resource};
use crate::fixed::{SCALE, cmp_products, format_decimal};
use crate::snapshot::{Cluster, DEFAULT_STALENESS_GRACE_NANOS, TaskStatus};

/// Node scoring strategy (§5.2), for GPUs and CPU alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Placement {
    /// Fullest node (and most used GPU) first — KAI's default.
    #[default]
    Binpack,
    /// Emptiest node (and least used GPU) first.
    Spread,
}

/// Session settings (upstream defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionOptions {
    /// Division options (mode, kValue).
    pub division: DivisionOptions,
    /// Node placement.
    pub placement: Placement,
    /// `max-consolidation-preemptees` (16).
    pub max_consolidation_preemptees: usize,
    /// `default-staleness-grace-period` (60 s), nanoseconds; negative = never.
    pub default_staleness_grace: i128,
    /// `reclaimerSaturationMultiplier` in nano (10⁹ = 1.0; values below 1 count as 1).
    pub reclaimer_saturation_multiplier: i128,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            division: DivisionOptions::default(),
            placement: Placement::Binpack,
            max_consolidation_preemptees: 16,
            default_staleness_grace: DEFAULT_STALENESS_GRACE_NANOS,
            reclaimer_saturation_multiplier: SCALE,
        }
    }
}

/// The action that evicted a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Action {
    /// Cross-queue reclaim.
    Reclaim,
    /// In-queue preemption by priority.
    Preempt,
    /// Moved to defragment.
    Consolidation,
    /// Stale gang eviction.
    StaleGang,
}

impl Action {
    /// The contract's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Reclaim => "reclaim",
            Action::Preempt => "preempt",
            Action::Consolidation => "consolidation",
            Action::StaleGang => "stalegang",
        }
    }
}

/// Upstream's unschedulable reasons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reason {
    /// A non-preemptible job would exceed deserved quota at some level.
    NonPreemptibleOverQuota,
    /// A limit would be exceeded at some level.
    OverLimit,
    /// The job's queue does not exist (or is not a leaf).
    QueueDoesNotExist,
    /// The job may not reclaim/preempt yet.
    PreemptionDelayNotElapsed,
    /// No placement, reclaim or preemption found room for the gang.
    Unschedulable,
}

impl Reason {
    /// Upstream's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::NonPreemptibleOverQuota => "NonPreemptibleOverQuota",
            Reason::OverLimit => "OverLimit",
            Reason::QueueDoesNotExist => "QueueDoesNotExist",
            Reason::PreemptionDelayNotElapsed => "PreemptionDelayNotElapsed",
            Reason::Unschedulable => "Unschedulable",
        }
    }
}

/// Quota numbers behind a reason, at the queue level where the check failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuotaDetails {
    /// The queue where the check failed (the leaf or an ancestor).
    pub queue: String,
    /// The resource.
    pub resource: Resource,
    /// Deserved (`None` = unlimited), nano-units.
    pub deserved: Option<i128>,
    /// Used: allocated (non-preemptible allocated for `NonPreemptibleOverQuota`), nano-units.
    pub used: i128,
    /// Requested by the job, nano-units.
    pub requested: i128,
    /// Limit (`None` = unlimited), nano-units.
    pub limit: Option<i128>,
    /// Fair share, nano-units.
    pub fair_share: i128,
}

/// A job that got pods placed in this session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allocation {
    /// `ns/name` of the PodGroup.
    pub pod_group: String,
    /// Queue.
    pub queue: String,
    /// Placed onto resources still being freed by evictions.
    pub pipelined: bool,
    /// `(pod, node)`; node `None` at quota level.
    pub pods: Vec<(String, Option<String>)>,
}

/// An evicted job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Eviction {
    /// `ns/name` of the PodGroup.
    pub pod_group: String,
    /// Queue.
    pub queue: String,
    /// The action.
    pub action: Action,
    /// The job the eviction made room for (`None` for stale gangs).
    pub by: Option<String>,
}

/// A job still pending after the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    /// `ns/name` of the PodGroup.
    pub pod_group: String,
    /// Queue as written.
    pub queue: String,
    /// Upstream's reason.
    pub reason: Reason,
    /// A plain sentence with the numbers.
    pub message: String,
    /// The quota numbers, when a quota check failed.
    pub details: Option<QuotaDetails>,
}

/// The session's decisions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionResult {
    /// Allocations in decision order.
    pub allocated: Vec<Allocation>,
    /// Evictions in decision order.
    pub evicted: Vec<Eviction>,
    /// Jobs with pending pods left, in PodGroup key order.
    pub pending: Vec<Pending>,
    /// The fair shares the session used.
    pub division: Division,
}

/// Victim units: `(job, tasks)`.
type Units = [(usize, Vec<usize>)];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TState {
    Pending,
    Running,
    /// Placed this session (`true` = pipelined).
    Placed(bool),
    Releasing,
    /// Deleted long ago and still holding its resources: never released and never evicted
    /// (its job's running pods still can be).
    Stuck,
    Other,
}

#[derive(Debug, Clone, Default)]
struct PlaceRec {
    node: Option<usize>,
    /// `(device, from_idle, from_releasing)`.
    devs: Vec<(usize, i128, i128)>,
    /// CPU, memory (and GPU at pool level in slot 0): `(from_idle, from_releasing)`.
    take: [(i128, i128); 3],
    /// MIG instances: `(profile, from_idle, from_releasing)`.
    mig: Vec<(usize, i64, i64)>,
}

impl PlaceRec {
    fn pipelined(&self) -> bool {
        self.take.iter().any(|t| t.1 > 0)
            || self.devs.iter().any(|d| d.2 > 0)
            || self.mig.iter().any(|m| m.2 > 0)
    }
}

#[derive(Debug, Clone)]
struct NodeState {
    idle: [i128; 3],
    rel: [i128; 3],
    /// Per device: (used, releasing).
    devs: Vec<(i128, i128)>,
    /// Per MIG profile: (idle, releasing) instances.
    mig: Vec<(i64, i64)>,
}

/// Lazy victim generation state: a cursor into each victim queue's job list and the
/// allocation left in each once the victims so far are gone.
#[derive(Debug, Default)]
struct VictimGen {
    cursors: Vec<usize>,
    sim: Vec<[i128; 3]>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CapFail {
    OverLimit(usize, usize),
    NonPreemptible(usize, usize),
}

struct Engine<'a> {
    c: &'a Cluster,
    /// `(node, runai-gpu-group)` → device, for running fractions at session open.
    gpu_groups: std::collections::BTreeMap<(usize, String), usize>,
    o: SessionOptions,
    fs: Vec<[i128; 3]>,
    alloc: Vec<[i128; 3]>,
    alloc_np: Vec<[i128; 3]>,
    nodes: Vec<NodeState>,
    pool: NodeState,
    tstate: Vec<Vec<TState>>,
    place: Vec<Vec<PlaceRec>>,
    /// Jobs evicted this session (no longer victims, not stale candidates).
    evicted_job: Vec<bool>,
    allocated: Vec<Allocation>,
    evicted: Vec<Eviction>,
    /// `(job, action, by)` already recorded.
    evicted_keys: std::collections::BTreeSet<(usize, Action, Option<String>)>,
    /// Index into `allocated` per job.
    alloc_idx: Vec<Option<usize>>,
    /// Last failure reason per job.
    fail: Vec<Option<(Reason, Option<CapFail>, String)>>,
    delayed: Vec<bool>,
}

/// Runs one session.
///
/// # Errors
/// [`DivisionError`] when the fair-share division fails (overflow).
///
/// # Complexity
/// Division as in [`crate::Hierarchy::divide`]; each pending job costs one hierarchical queue
/// pick (O(Q)) plus its placement (O(N · G) per pod for N nodes of G GPUs); each reclaim or
/// preempt attempt sorts its victims (O(V log V)) and probes O(log V) prefixes.
pub fn run_session(c: &Cluster, options: &SessionOptions) -> Result<SessionResult, DivisionError> {
    let division = c.hierarchy.divide(c.totals, &options.division)?;
    let mut e = Engine::new(c, *options, division.fair_share.clone());
    e.allocate();
    if !c.nodes.is_empty() {
        e.consolidate();
    }
    e.reclaim();
    e.preempt();
    e.stale_gangs();
    let pending = e.pending();
    Ok(SessionResult {
        allocated: e.allocated,
        evicted: e.evicted,
        pending,
        division,
    })
}

fn unl_le(v: i128, cap: Option<i128>) -> bool {
    cap.is_none_or(|c| v <= c)
}

fn ratio(a: i128, b: i128) -> f64 {
    if b == 0 {
        if a > 0 { f64::INFINITY } else { 0.0 }
    } else {
        a as f64 / b as f64
    }
}

impl<'a> Engine<'a> {
    fn new(c: &'a Cluster, o: SessionOptions, fs: Vec<[i128; 3]>) -> Engine<'a> {
        let nq = c.hierarchy.queues().len();
        let mut e = Engine {
            c,
            gpu_groups: std::collections::BTreeMap::new(),
            o,
            fs,
            alloc: vec![[0; 3]; nq],
            alloc_np: vec![[0; 3]; nq],
            nodes: c
                .nodes
                .iter()
                .map(|n| NodeState {
                    idle: n.allocatable,
                    rel: [0; 3],
                    devs: vec![(0, 0); n.gpus],
                    mig: n.mig.iter().map(|&c| (c, 0)).collect(),
                })
                .collect(),
            pool: NodeState {
                idle: c.totals,
                rel: [0; 3],
                devs: Vec::new(),
                mig: Vec::new(),
            },
            tstate: Vec::with_capacity(c.jobs.len()),
            place: Vec::with_capacity(c.jobs.len()),
            evicted_job: vec![false; c.jobs.len()],
            allocated: Vec::new(),
            evicted: Vec::new(),
            evicted_keys: std::collections::BTreeSet::new(),
            alloc_idx: vec![None; c.jobs.len()],
            fail: vec![None; c.jobs.len()],
            delayed: vec![false; c.jobs.len()],
        };
        for (ji, j) in c.jobs.iter().enumerate() {
            let mut st = Vec::with_capacity(j.tasks.len());
            let mut pl = Vec::with_capacity(j.tasks.len());
            for t in &j.tasks {
                let s = match t.status {
                    TaskStatus::Pending => TState::Pending,
                    TaskStatus::Running => TState::Running,
                    TaskStatus::Releasing => TState::Releasing,
                    TaskStatus::StuckInReleasing => TState::Stuck,
                    _ => TState::Other,
                };
                let mut rec = PlaceRec::default();
                if matches!(s, TState::Running | TState::Releasing | TState::Stuck) {
                    rec = e.occupy(t);
                }
                if s == TState::Running
                    && let Some(q) = j.queue
                {
                    e.account(q, t.req, !j.preemptible, true);
                }
                st.push(s);
                pl.push(rec);
            }
            e.tstate.push(st);
            e.place.push(pl);
            // Pods being deleted at session open: their resources are being freed.
            for (ti, t) in j.tasks.iter().enumerate() {
                if t.status == TaskStatus::Releasing {
                    e.release(ji, ti);
                }
            }
        }
        e
    }

    // ---------- accounting ----------

    fn account(&mut self, leaf: usize, req: [i128; 3], np: bool, add: bool) {
        let mut cur = Some(leaf);
        while let Some(q) = cur {
            for r in 0..3 {
                if add {
                    self.alloc[q][r] += req[r];
                    if np {
                        self.alloc_np[q][r] += req[r];
                    }
                } else {
                    self.alloc[q][r] -= req[r];
                    if np {
                        self.alloc_np[q][r] -= req[r];
                    }
                }
            }
            cur = self.c.hierarchy.queues()[q].parent;
        }
    }

    fn params(&self, q: usize, r: usize) -> &crate::division::ResourceParams {
        &self.c.hierarchy.queues()[q].resources[r]
    }

    /// `min(L, max(D, FS))`; `None` = unlimited.
    fn allocatable(&self, q: usize, r: usize) -> Option<i128> {
        let p = self.params(q, r);
        match p.deserved {
            None => p.limit,
            Some(d) => {
                let a = d.max(self.fs[q][r]);
                Some(p.limit.map_or(a, |l| l.min(a)))
            }
        }
    }

    /// Capacity policy at the leaf and every ancestor, with `freed` already subtracted from
    /// the queues on `freed_path` (preemption victims of the same queue).
    fn capacity(
        &self,
        leaf: usize,
        req: [i128; 3],
        np: bool,
        freed: &[(usize, [i128; 3], bool)],
    ) -> Option<CapFail> {
        let mut cur = Some(leaf);
        while let Some(q) = cur {
            for r in 0..3 {
                let mut a = self.alloc[q][r];
                let mut anp = self.alloc_np[q][r];
                for &(fq, f, fnp) in freed {
                    if self.c.hierarchy.path(fq).contains(&q) {
                        a -= f[r];
                        if fnp {
                            anp -= f[r];
                        }
                    }
                }
                let p = self.params(q, r);
                if req[r] > 0 && !unl_le(a + req[r], p.limit) {
                    return Some(CapFail::OverLimit(q, r));
                }
                if np && req[r] > 0 && !unl_le(anp + req[r], p.deserved) {
                    return Some(CapFail::NonPreemptible(q, r));
                }
            }
            cur = self.c.hierarchy.queues()[q].parent;
        }
        None
    }

    // ---------- placement ----------

    fn node_mut(&mut self, node: Option<usize>) -> &mut NodeState {
        match node {
            Some(n) => &mut self.nodes[n],
            None => &mut self.pool,
        }
    }

    /// Marks a running task's resources as used at session start.
    fn occupy(&mut self, t: &crate::snapshot::Task) -> PlaceRec {
        let pool_level = self.c.nodes.is_empty();
        let node = if pool_level { None } else { t.node };
        let fractional = t.fractional;
        let req = if pool_level { t.req } else { dev_req(t) };
        let ns = self.node_mut(node);
        let mut mig = Vec::new();
        if !pool_level {
            for &(p, c) in &t.mig {
                ns.mig[p].0 -= c;
                mig.push((p, c, 0));
            }
        }
        let mut rec = PlaceRec {
            node,
            mig,
            ..PlaceRec::default()
        };
        let first = if pool_level || ns.devs.is_empty() {
            0
        } else {
            1
        };
        for r in first..3 {
            ns.idle[r] -= req[r];
            rec.take[r] = (req[r], 0);
        }
        if first == 1 && req[0] > 0 {
            if fractional {
                // The device of its GPU group if known; a new group takes the first empty
                // device; otherwise pack onto the most used device that still fits.
                let group = match (node, &t.gpu_group) {
                    (Some(n), Some(g)) => Some((n, g.clone())),
                    _ => None,
                };
                let known = group.as_ref().and_then(|k| self.gpu_groups.get(k).copied());
                let ns = match node {
                    Some(n) => &mut self.nodes[n],
                    None => &mut self.pool,
                };
                let mut best: Option<usize> = known;
                if best.is_none() && group.is_some() {
                    best = ns.devs.iter().position(|d| d.0 == 0);
                }
                if best.is_none() {
                    for (i, d) in ns.devs.iter().enumerate() {
                        if SCALE - d.0 >= req[0] && best.is_none_or(|b| d.0 > ns.devs[b].0) {
                            best = Some(i);
                        }
                    }
                }
                let i = best.unwrap_or(0);
                if let Some(k) = group {
                    self.gpu_groups.insert(k, i);
                }
                ns.devs[i].0 += req[0];
                rec.devs.push((i, req[0], 0));
            } else {
                let mut need = req[0] / SCALE;
                for i in 0..ns.devs.len() {
                    if need == 0 {
                        break;
                    }
                    if ns.devs[i].0 == 0 {
                        ns.devs[i].0 = SCALE;
                        rec.devs.push((i, SCALE, 0));
                        need -= 1;
                    }
                }
                // Overcommitted input: charge the node's idle GPU anyway.
                ns.idle[0] -= need * SCALE;
                rec.take[0] = (need * SCALE, 0);
            }
        }
        rec
    }

    fn node_fits(&self, n: usize, req: [i128; 3], fractional: bool) -> Option<bool> {
        let ns = &self.nodes[n];
        let mut now = true;
        for r in 1..3 {
            if req[r] > ns.idle[r] + ns.rel[r] {
                return None;
            }
            now &= req[r] <= ns.idle[r];
        }
        if req[0] > 0 {
            if fractional {
                let fit_future = ns.devs.iter().any(|d| SCALE - d.0 >= req[0]);
                if !fit_future {
                    return None;
                }
                now &= ns.devs.iter().any(|d| SCALE - d.0 - d.1 >= req[0]);
            } else {
                let need = (req[0] / SCALE) as usize;
                let future = ns.devs.iter().filter(|d| d.0 == 0).count();
                if future < need {
                    return None;
                }
                now &= ns.devs.iter().filter(|d| d.0 == 0 && d.1 == 0).count() >= need;
            }
        }
        Some(now)
    }

    fn node_idle_gpu(&self, n: usize) -> i128 {
        self.nodes[n].devs.iter().map(|d| SCALE - d.0 - d.1).sum()
    }

    /// Places one task; `None` when nothing fits.
    fn place_task(&mut self, ji: usize, ti: usize) -> Option<PlaceRec> {
        let t = &self.c.jobs[ji].tasks[ti];
        let req = if self.c.nodes.is_empty() {
            t.req
        } else {
            dev_req(t)
        };
        if self.c.nodes.is_empty() {
            let p = &mut self.pool;
            let mut rec = PlaceRec::default();
            for r in 0..3 {
                if req[r] > p.idle[r] + p.rel[r] {
                    return None;
                }
            }
            for r in 0..3 {
                let from_idle = req[r].min(p.idle[r].max(0));
                let from_rel = req[r] - from_idle;
                p.idle[r] -= from_idle;
                p.rel[r] -= from_rel;
                rec.take[r] = (from_idle, from_rel);
            }
            return Some(rec);
        }
        let gpu_job = req[0] > 0;
        let mut best: Option<(usize, bool, i128, i128)> = None; // node, now, free, total
        for n in 0..self.nodes.len() {
            if !self.c.nodes[n].admits(t) {
                continue;
            }
            let Some(mut now) = self.node_fits(n, req, t.fractional) else {
                continue;
            };
            let ns = &self.nodes[n];
            if t.mig.iter().any(|&(p, c)| ns.mig[p].0 + ns.mig[p].1 < c) {
                continue;
            }
            now &= t.mig.iter().all(|&(p, c)| ns.mig[p].0 >= c);
            let (free, total) = if gpu_job {
                (self.node_idle_gpu(n), self.c.nodes[n].allocatable[0])
            } else {
                (self.nodes[n].idle[1], self.c.nodes[n].allocatable[1])
            };
            let better = match best {
                None => true,
                Some((_, bnow, bfree, btotal)) => {
                    if now != bnow {
                        now
                    } else {
                        match self.o.placement {
                            Placement::Binpack => free < bfree,
                            Placement::Spread => {
                                cmp_products(
                                    free.max(0) as u128,
                                    btotal.max(0) as u128,
                                    bfree.max(0) as u128,
                                    total.max(0) as u128,
                                ) == Ordering::Greater
                            }
                        }
                    }
                }
            };
            if better {
                best = Some((n, now, free, total));
            }
        }
        let (n, _, _, _) = best?;
        let fractional = t.fractional;
        let spread = self.o.placement == Placement::Spread;
        let ns = &mut self.nodes[n];
        let mut rec = PlaceRec {
            node: Some(n),
            ..PlaceRec::default()
        };
        for &(p, c) in &t.mig {
            let from_idle = c.min(ns.mig[p].0.max(0));
            let from_rel = c - from_idle;
            ns.mig[p].0 -= from_idle;
            ns.mig[p].1 -= from_rel;
            rec.mig.push((p, from_idle, from_rel));
        }
        for r in 1..3 {
            let from_idle = req[r].min(ns.idle[r].max(0));
            let from_rel = req[r] - from_idle;
            ns.idle[r] -= from_idle;
            ns.rel[r] -= from_rel;
            rec.take[r] = (from_idle, from_rel);
        }
        if req[0] > 0 {
            if fractional {
                let mut pick: Option<usize> = None;
                for (i, d) in ns.devs.iter().enumerate() {
                    if SCALE - d.0 < req[0] {
                        continue;
                    }
                    let now = SCALE - d.0 - d.1 >= req[0];
                    // KAI's gpusharingorder (weight 10,000) outranks availability (1,000): a
                    // GPU already shared by fractions is preferred, even when the room on it
                    // is still being released (pipelined), over an empty GPU.
                    let shared = |d: (i128, i128)| d.0 > 0 || (d.1 > 0 && d.1 < SCALE);
                    let better = match pick {
                        None => true,
                        Some(p) => {
                            let pd = ns.devs[p];
                            let pnow = SCALE - pd.0 - pd.1 >= req[0];
                            if shared(*d) != shared(pd) {
                                shared(*d)
                            } else if now != pnow {
                                now
                            } else if spread {
                                d.0 + d.1 < pd.0 + pd.1
                            } else {
                                d.0 + d.1 > pd.0 + pd.1
                            }
                        }
                    };
                    if better {
                        pick = Some(i);
                    }
                }
                let i = pick?;
                let d = &mut ns.devs[i];
                let from_idle = req[0].min((SCALE - d.0 - d.1).max(0));
                let from_rel = req[0] - from_idle;
                d.0 += req[0];
                d.1 -= from_rel;
                ns.idle[0] -= from_idle;
                ns.rel[0] -= from_rel;
                rec.devs.push((i, from_idle, from_rel));
            } else {
                let mut need = req[0] / SCALE;
                for pass in 0..2 {
                    for i in 0..ns.devs.len() {
                        if need == 0 {
                            break;
                        }
                        let d = ns.devs[i];
                        if d.0 == 0 && ((pass == 0 && d.1 == 0) || (pass == 1 && d.1 > 0)) {
                            let from_rel = d.1;
                            ns.devs[i] = (SCALE, 0);
                            ns.idle[0] -= SCALE - from_rel;
                            ns.rel[0] -= from_rel;
                            rec.devs.push((i, SCALE - from_rel, from_rel));
                            need -= 1;
                        }
                    }
                }
            }
        }
        Some(rec)
    }

    /// Undoes a placement made in this session.
    fn unplace(&mut self, rec: &PlaceRec, req: [i128; 3]) {
        let pool_level = self.c.nodes.is_empty();
        let ns = self.node_mut(rec.node);
        let first = if pool_level { 0 } else { 1 };
        for r in first..3 {
            ns.idle[r] += rec.take[r].0;
            ns.rel[r] += rec.take[r].1;
        }
        if !pool_level {
            for &(i, fi, fr) in &rec.devs {
                ns.devs[i].0 -= fi + fr;
                ns.devs[i].1 += fr;
                ns.idle[0] += fi;
                ns.rel[0] += fr;
            }
            ns.idle[0] += rec.take[0].0;
            for &(p, fi, fr) in &rec.mig {
                ns.mig[p].0 += fi;
                ns.mig[p].1 += fr;
            }
        }
        let _ = req;
    }

    /// Turns a running (or placed) task's resources into releasing ones.
    fn release(&mut self, ji: usize, ti: usize) {
        let rec = std::mem::take(&mut self.place[ji][ti]);
        let req = self.c.jobs[ji].tasks[ti].req;
        let pool_level = self.c.nodes.is_empty();
        let ns = self.node_mut(rec.node);
        let first = if pool_level { 0 } else { 1 };
        for r in first..3 {
            ns.rel[r] += req[r];
        }
        if !pool_level {
            for &(i, fi, fr) in &rec.devs {
                ns.devs[i].0 -= fi + fr;
                ns.devs[i].1 += fi + fr;
                ns.rel[0] += fi + fr;
            }
            // Overcommitted GPU charged to idle at start comes back as releasing too.
            ns.rel[0] += rec.take[0].0;
            for &(p, fi, fr) in &rec.mig {
                ns.mig[p].1 += fi + fr;
            }
        }
        self.place[ji][ti] = rec;
        self.tstate[ji][ti] = TState::Releasing;
    }

    // ---------- ordering ----------

    fn job_req(&self, ji: usize, tasks: &[usize]) -> [i128; 3] {
        let mut s = [0i128; 3];
        for &ti in tasks {
            for (r, v) in s.iter_mut().enumerate() {
                *v += self.c.jobs[ji].tasks[ti].req[r];
            }
        }
        s
    }

    /// Pending tasks to place now: the gang part (to reach minMember) or, for a job already at
    /// minMember, its pending elastic extras.
    fn needed_tasks(&self, ji: usize) -> (Vec<usize>, usize) {
        let j = &self.c.jobs[ji];
        let active = self.tstate[ji]
            .iter()
            .filter(|s| matches!(s, TState::Running | TState::Placed(_)))
            .count();
        let pending: Vec<usize> = (0..j.tasks.len())
            .filter(|&t| self.tstate[ji][t] == TState::Pending)
            .collect();
        let gang = j.min_member.saturating_sub(active);
        (pending, gang)
    }

    fn drs(&self, q: usize, extra: [i128; 3], sign: i128) -> f64 {
        let mut m = 0.0f64;
        for r in 0..3 {
            let a = self.alloc[q][r] + sign * extra[r];
            let v = match self.allocatable(q, r) {
                None => ratio(a, self.c.totals[r]),
                Some(0) => a as f64 / SCALE as f64 * 1000.0,
                Some(al) => ratio(a, al),
            };
            m = m.max(v);
        }
        m
    }

    /// Sibling queue order (§3.3): `Less` when `a` (with its candidate job `ja`) goes first.
    fn queue_cmp(&self, a: usize, ja: [i128; 3], b: usize, jb: [i128; 3]) -> Ordering {
        let over = |q: usize| (0..3).all(|r| self.fs[q][r] < self.alloc[q][r]);
        let starved = |q: usize, j: [i128; 3]| {
            (0..3).all(|r| unl_le(self.alloc[q][r] + j[r], self.params(q, r).deserved))
        };
        let penal = |q: usize, j: [i128; 3]| {
            (0..3).any(|r| self.alloc[q][r] + j[r] > 0 && self.allocatable(q, r) == Some(0))
        };
        let qa = &self.c.hierarchy.queues()[a];
        let qb = &self.c.hierarchy.queues()[b];
        over(a)
            .cmp(&over(b))
            .then(starved(b, jb).cmp(&starved(a, ja)))
            .then(qb.priority.cmp(&qa.priority))
            .then(penal(a, ja).cmp(&penal(b, jb)))
            .then(self.drs(a, ja, 1).total_cmp(&self.drs(b, jb, 1)))
            .then(self.drs(a, [0; 3], 0).total_cmp(&self.drs(b, [0; 3], 0)))
            .then_with(|| {
                let sa: Vec<Option<i128>> = (0..3).map(|r| self.allocatable(a, r)).collect();
                let sb: Vec<Option<i128>> = (0..3).map(|r| self.allocatable(b, r)).collect();
                let le = |x: Option<i128>, y: Option<i128>| match (x, y) {
                    (_, None) => true,
                    (None, Some(_)) => false,
                    (Some(x), Some(y)) => x <= y,
                };
                let a_le = (0..3).all(|r| le(sa[r], sb[r])) && sa != sb;
                let b_le = (0..3).all(|r| le(sb[r], sa[r])) && sa != sb;
                if a_le {
                    Ordering::Less
                } else if b_le {
                    Ordering::Greater
                } else {
                    Ordering::Equal
                }
            })
            .then(qa.creation.cmp(&qb.creation))
            .then(qa.name.cmp(&qb.name))
    }

    fn job_cmp(&self, a: usize, b: usize) -> Ordering {
        let ja = &self.c.jobs[a];
        let jb = &self.c.jobs[b];
        let elastic = |ji: usize| {
            let j = &self.c.jobs[ji];
            let active = self.tstate[ji]
                .iter()
                .filter(|s| matches!(s, TState::Running | TState::Placed(_)))
                .count();
            active.cmp(&j.min_member)
        };
        jb.priority
            .cmp(&ja.priority)
            .then(elastic(a).cmp(&elastic(b)))
            .then(ja.creation.cmp(&jb.creation))
            .then(ja.uid.cmp(&jb.uid))
            .then(ja.key.cmp(&jb.key))
    }

    /// Candidate jobs per leaf queue in job order.
    fn leaf_lists(&self, pred: impl Fn(usize) -> bool) -> Vec<Vec<usize>> {
        let nq = self.c.hierarchy.queues().len();
        let mut lists = vec![Vec::new(); nq];
        for (ji, j) in self.c.jobs.iter().enumerate() {
            if let Some(q) = j.queue
                && !self.evicted_job[ji]
                && self.tstate[ji].contains(&TState::Pending)
                && pred(ji)
            {
                lists[q].push(ji);
            }
        }
        for l in &mut lists {
            l.sort_by(|&a, &b| self.job_cmp(a, b));
            l.reverse(); // pop from the back
        }
        lists
    }

    /// The best (leaf, job) in hierarchical queue order.
    fn pick(&self, lists: &[Vec<usize>]) -> Option<(usize, usize)> {
        self.pick_among(self.c.hierarchy.roots(), lists)
    }

    fn pick_among(&self, sibs: &[usize], lists: &[Vec<usize>]) -> Option<(usize, usize)> {
        let mut best: Option<(usize, usize, usize, [i128; 3])> = None;
        for &q in sibs {
            let cand = if self.c.hierarchy.is_leaf(q) {
                lists[q].last().map(|&j| (q, j))
            } else {
                self.pick_among(self.c.hierarchy.children(q), lists)
            };
            let Some((leaf, ji)) = cand else { continue };
            let (pend, gang) = self.needed_tasks(ji);
            let take: Vec<usize> = pend.iter().copied().take(gang.max(1)).collect();
            let req = self.job_req(ji, &take);
            let better = match &best {
                None => true,
                Some((bq, _, _, breq)) => self.queue_cmp(q, req, *bq, *breq) == Ordering::Less,
            };
            if better {
                best = Some((q, leaf, ji, req));
            }
        }
        best.map(|(_, l, j, _)| (l, j))
    }

    // ---------- actions ----------

    fn set_fail(&mut self, ji: usize, reason: Reason, cap: Option<CapFail>, msg: String) {
        self.fail[ji] = Some((reason, cap, msg));
    }

    /// Places `tasks` of `ji` all or nothing; returns the records or `None` (rolled back).
    fn place_all(&mut self, ji: usize, tasks: &[usize]) -> Option<Vec<PlaceRec>> {
        let mut recs = Vec::with_capacity(tasks.len());
        for &ti in tasks {
            match self.place_task(ji, ti) {
                Some(r) => recs.push(r),
                None => {
                    for (k, r) in recs.iter().enumerate().rev() {
                        let req = self.c.jobs[ji].tasks[tasks[k]].req;
                        self.unplace(r, req);
                    }
                    return None;
                }
            }
        }
        Some(recs)
    }

    fn commit_placed(&mut self, ji: usize, tasks: &[usize], recs: Vec<PlaceRec>) {
        let j = &self.c.jobs[ji];
        let Some(q) = j.queue else { return };
        let mut pods = Vec::new();
        let mut pipelined = false;
        for (&ti, rec) in tasks.iter().zip(recs) {
            let p = rec.pipelined();
            pipelined |= p;
            pods.push((
                j.tasks[ti].key.clone(),
                rec.node.map(|n| self.c.nodes[n].name.clone()),
            ));
            self.account(q, j.tasks[ti].req, !j.preemptible, true);
            self.tstate[ji][ti] = TState::Placed(p);
            self.place[ji][ti] = rec;
        }
        if pods.is_empty() {
            return;
        }
        let qname = self.c.hierarchy.queues()[q].name.clone();
        if let Some(i) = self.alloc_idx[ji] {
            let a = &mut self.allocated[i];
            a.pipelined |= pipelined;
            a.pods.extend(pods);
        } else {
            self.alloc_idx[ji] = Some(self.allocated.len());
            self.allocated.push(Allocation {
                pod_group: j.key.clone(),
                queue: qname,
                pipelined,
                pods,
            });
        }
    }

    /// Commits a placement found by a victim-evicting action (reclaim, preempt,
    /// consolidation): KAI's job solver allocates the preemptor pipeline-only
    /// (`AllocateJob(…, isPipelineOnly=true)`), so it is reported pipelined even where it
    /// landed on idle resources.
    fn commit_pipelined(&mut self, ji: usize, tasks: &[usize], recs: Vec<PlaceRec>) {
        self.commit_placed(ji, tasks, recs);
        for &ti in tasks {
            if let TState::Placed(p) = &mut self.tstate[ji][ti] {
                *p = true;
            }
        }
        if let Some(i) = self.alloc_idx[ji] {
            self.allocated[i].pipelined = true;
        }
    }

    fn try_allocate(&mut self, ji: usize) -> bool {
        let j = &self.c.jobs[ji];
        let Some(q) = j.queue else { return false };
        let np = !j.preemptible;
        let (pending, gang) = self.needed_tasks(ji);
        if gang > pending.len() {
            self.set_fail(
                ji,
                Reason::Unschedulable,
                None,
                format!(
                    "the gang needs {} more pods to reach minMember {} but only {} are pending",
                    gang,
                    j.min_member,
                    pending.len()
                ),
            );
            return false;
        }
        let mut any = false;
        if gang > 0 {
            let core: Vec<usize> = pending[..gang].to_vec();
            let req = self.job_req(ji, &core);
            if let Some(f) = self.capacity(q, req, np, &[]) {
                self.cap_fail(ji, f, req);
                return false;
            }
            match self.place_all(ji, &core) {
                Some(recs) => {
                    self.commit_placed(ji, &core, recs);
                    any = true;
                }
                None => {
                    self.set_fail(ji, Reason::Unschedulable, None, format!(
                        "no node placement fits the gang of {} pods ({} GPUs) in the free capacity",
                        core.len(),
                        format_decimal(req[0])
                    ));
                    return false;
                }
            }
        }
        for &ti in &pending[gang..] {
            let req = self.c.jobs[ji].tasks[ti].req;
            if let Some(f) = self.capacity(q, req, np, &[]) {
                if !any {
                    self.cap_fail(ji, f, req);
                }
                continue;
            }
            if let Some(rec) = self.place_task(ji, ti) {
                self.commit_placed(ji, &[ti], vec![rec]);
                any = true;
            } else if !any {
                self.set_fail(
                    ji,
                    Reason::Unschedulable,
                    None,
                    "no node has room for the elastic pod".into(),
                );
            }
        }
        any
    }

    fn cap_fail(&mut self, ji: usize, f: CapFail, req: [i128; 3]) {
        let (reason, q, r) = match f {
            CapFail::OverLimit(q, r) => (Reason::OverLimit, q, r),
            CapFail::NonPreemptible(q, r) => (Reason::NonPreemptibleOverQuota, q, r),
        };
        let p = self.params(q, r);
        let res = Resource::ALL[r];
        let name = &self.c.hierarchy.queues()[q].name;
        let fmt = |v: Option<i128>| v.map_or("unlimited".to_string(), |v| fmt_res(res, v));
        let msg = match reason {
            Reason::OverLimit => format!(
                "queue {name} would exceed its {res} limit: allocated {} + requested {} > limit {} (deserved {})",
                fmt_res(res, self.alloc[q][r]),
                fmt_res(res, req[r]),
                fmt(p.limit),
                fmt(p.deserved)
            ),
            _ => format!(
                "non-preemptible jobs may only use deserved quota: queue {name} has {} {res} of non-preemptible work allocated + requested {} > deserved {} (limit {})",
                fmt_res(res, self.alloc_np[q][r]),
                fmt_res(res, req[r]),
                fmt(p.deserved),
                fmt(p.limit)
            ),
        };
        self.set_fail(ji, reason, Some(f), msg);
    }

    fn allocate(&mut self) {
        let mut lists = self.leaf_lists(|_| true);
        while let Some((leaf, ji)) = self.pick(&lists) {
            lists[leaf].pop();
            let _ = self.try_allocate(ji);
        }
    }

    fn still_pending_gang(&self, ji: usize) -> Option<Vec<usize>> {
        let (pending, gang) = self.needed_tasks(ji);
        if gang == 0 || gang > pending.len() {
            return None;
        }
        Some(pending[..gang].to_vec())
    }

    fn delay_elapsed(&self, ji: usize) -> bool {
        let j = &self.c.jobs[ji];
        match (j.preemption_delay, j.creation) {
            (Some(d), Some(c)) => self.c.now.unix_nanos() - c.unix_nanos() >= d,
            _ => true,
        }
    }

    fn runtime_ok(&self, ji: usize, min: Option<i128>) -> bool {
        match (min, self.c.jobs[ji].last_start) {
            (Some(m), Some(s)) if m > 0 => self.c.now.unix_nanos() - s.unix_nanos() >= m,
            _ => true,
        }
    }

    /// Running units of a job that can be evicted: elastic extras one by one (newest task
    /// name last), then the core as one unit.
    fn victim_units(&self, ji: usize) -> Vec<Vec<usize>> {
        let j = &self.c.jobs[ji];
        let running: Vec<usize> = (0..j.tasks.len())
            .filter(|&t| matches!(self.tstate[ji][t], TState::Running))
            .collect();
        if running.is_empty() {
            return Vec::new();
        }
        let mut units = Vec::new();
        let extras = running.len().saturating_sub(j.min_member);
        for k in (0..extras).rev() {
            units.push(vec![running[running.len() - extras + k]]);
        }
        // minMember 0: every pod is an extra and there is no core unit.
        if extras < running.len() {
            units.push(running[..running.len() - extras].to_vec());
        }
        units
    }

    /// Evicts a set of tasks, returning nothing; records the eviction once per job/action/by.
    fn evict(&mut self, ji: usize, tasks: &[usize], action: Action, by: Option<&str>) {
        let j = &self.c.jobs[ji];
        for &ti in tasks {
            if let Some(q) = j.queue {
                self.account(q, j.tasks[ti].req, !j.preemptible, false);
            }
            self.release(ji, ti);
        }
        if !self.tstate[ji].contains(&TState::Running) {
            self.evicted_job[ji] = true;
        }
        let by = by.map(str::to_string);
        if self.evicted_keys.insert((ji, action, by.clone())) {
            self.evicted.push(Eviction {
                pod_group: j.key.clone(),
                queue: j.queue_name.clone(),
                action,
                by,
            });
        }
    }

    /// Tries victim prefixes (exponential then binary search from `k0`) and returns the
    /// smallest count whose release lets `tasks` be placed.
    fn min_prefix(
        &mut self,
        ji: usize,
        tasks: &[usize],
        victims: &[(usize, Vec<usize>)],
        k0: usize,
    ) -> Option<usize> {
        let fits = |e: &mut Engine<'_>, k: usize| -> bool { e.fits_with(ji, tasks, &victims[..k]) };
        let n = victims.len();
        let k0 = k0.min(n);
        if fits(self, k0) {
            return Some(k0);
        }
        // Exponential probe.
        let mut lo = k0; // known failing
        let mut step = 1;
        let hi = loop {
            let k = (lo + step).min(n);
            if fits(self, k) {
                break k;
            }
            if k == n {
                return None;
            }
            lo = k;
            step *= 2;
        };
        let (mut lo, mut hi) = (lo, hi);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if fits(self, mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Some(hi)
    }

    /// Whether `tasks` of job `ji` can be placed once `victims` are released (state restored).
    fn fits_with(&mut self, ji: usize, tasks: &[usize], victims: &[(usize, Vec<usize>)]) -> bool {
        let e = self;
        let snap_nodes = e.nodes.clone();
        let snap_pool = e.pool.clone();
        let snap_place: Vec<(usize, usize, PlaceRec)> = victims
            .iter()
            .flat_map(|(vj, ts)| ts.iter().map(|&t| (*vj, t, e.place[*vj][t].clone())))
            .collect();
        for (vj, ts) in victims {
            for &t in ts {
                e.release(*vj, t);
            }
        }
        let ok = e.place_all(ji, tasks).is_some();
        e.nodes = snap_nodes;
        e.pool = snap_pool;
        for (vj, t, rec) in snap_place {
            e.place[vj][t] = rec;
            e.tstate[vj][t] = TState::Running;
        }
        ok
    }

    /// Drops the victims the job does not need, as KAI's solver does when it puts every
    /// victim of a scenario back after placing the preemptor (`TryToVirtuallyAllocate…`): a
    /// victim that can stay where it is keeps running. Tried from the last victim of the
    /// prefix (the least evictable) to the first; `keep_ok` re-checks any other condition
    /// (the capacity policy for preempt). A unit of a job stays evicted while a later unit
    /// of the same job (its core) is evicted.
    ///
    /// # Complexity
    /// O(k) resource checks for a prefix of k victims, plus one placement probe for each
    /// victim smaller than the surplus the prefix frees (none when the prefix frees exactly
    /// what the job needs).
    fn prune_victims(
        &mut self,
        ji: usize,
        tasks: &[usize],
        victims: &[(usize, Vec<usize>)],
        keep_ok: &dyn Fn(&Engine<'_>, &Units) -> bool,
    ) -> Vec<(usize, Vec<usize>)> {
        let mut kept: Vec<bool> = vec![true; victims.len()];
        // What the victims free beyond the job's need, summed over the cluster: a victim
        // larger than this surplus is needed, without a placement probe.
        let need = self.job_req(ji, tasks);
        let mut surplus = self.free_capacity();
        for (vj, ts) in victims {
            let r = self.job_req(*vj, ts);
            for (s, v) in surplus.iter_mut().zip(r) {
                *s += v;
            }
        }
        for (s, v) in surplus.iter_mut().zip(need) {
            *s -= v;
        }
        for i in (0..victims.len()).rev() {
            let vj = victims[i].0;
            if (i + 1..victims.len()).any(|j| kept[j] && victims[j].0 == vj) {
                continue;
            }
            let vr = self.job_req(vj, &victims[i].1);
            if (0..3).any(|r| vr[r] > surplus[r].max(0)) {
                continue;
            }
            kept[i] = false;
            let rest: Vec<(usize, Vec<usize>)> = victims
                .iter()
                .zip(&kept)
                .filter(|(_, k)| **k)
                .map(|(v, _)| v.clone())
                .collect();
            if keep_ok(self, &rest) && self.fits_with(ji, tasks, &rest) {
                for (s, v) in surplus.iter_mut().zip(vr) {
                    *s -= v;
                }
            } else {
                kept[i] = true;
            }
        }
        victims
            .iter()
            .zip(&kept)
            .filter(|(_, k)| **k)
            .map(|(v, _)| v.clone())
            .collect()
    }

    fn victim_job_cmp(&self, a: usize, b: usize) -> Ordering {
        let ja = &self.c.jobs[a];
        let jb = &self.c.jobs[b];
        ja.priority
            .cmp(&jb.priority)
            .then(jb.creation.cmp(&ja.creation))
            .then(jb.uid.cmp(&ja.uid))
            .then(jb.key.cmp(&ja.key))
    }

    /// The leveled pair: the first differing queues on the two root→leaf paths.
    fn leveled(&self, a: usize, b: usize) -> Option<(usize, usize)> {
        let pa = self.c.hierarchy.path(a);
        let pb = self.c.hierarchy.path(b);
        for i in 0..pa.len().min(pb.len()) {
            if pa[i] != pb[i] {
                return Some((pa[i], pb[i]));
            }
        }
        None
    }

    /// The proportion victim prefilter (§3.4 step 3) on the leveled pair.
    fn filter_victim(&self, rl: usize, vl: usize, req: [i128; 3]) -> bool {
        let exceeds =
            (0..3).any(|r| !unl_le(self.alloc[rl][r] + req[r], self.params(rl, r).deserved));
        if exceeds {
            return (0..3).any(|r| !unl_le(self.alloc[vl][r], self.allocatable(vl, r)));
        }
        let mut over = false;
        let mut under = false;
        for r in 0..3 {
            if req[r] == 0 {
                continue;
            }
            let Some(d) = self.params(vl, r).deserved else {
                continue;
            };
            match self.alloc[vl][r].cmp(&d) {
                Ordering::Greater => over = true,
                Ordering::Less => under = true,
                Ordering::Equal => {}
            }
        }
        over || !under
    }

    /// The reclaim validator (§3.4 step 5).
    fn reclaimable(
        &self,
        leaf: usize,
        req: [i128; 3],
        victims: &[(usize, Vec<usize>)],
    ) -> Result<(), String> {
        let nq = self.c.hierarchy.queues().len();
        let mut remaining: Vec<Option<[i128; 3]>> = vec![None; nq];
        let mut involved: Vec<[bool; 3]> = vec![[false; 3]; nq];
        for (vj, ts) in victims {
            let j = &self.c.jobs[*vj];
            let Some(vq) = j.queue else { continue };
            let Some((rl, vl)) = self.leveled(leaf, vq) else {
                return Err("victim in the reclaimer's own queue".into());
            };
            let rem = remaining[vl].unwrap_or(self.alloc[vl]);
            let maintain = (0..3).any(|r| !unl_le(rem[r], self.allocatable(vl, r)));
            let guarantee = (0..3)
                .all(|r| unl_le(self.alloc[rl][r] + req[r], self.params(rl, r).deserved))
                && (0..3).any(|r| !unl_le(rem[r], self.params(vl, r).deserved));
            if !maintain && !guarantee {
                return Err(format!(
                    "queue {} is within its fair share and the reclaimer is not starved",
                    self.c.hierarchy.queues()[vl].name
                ));
            }
            let mut vreq = [0i128; 3];
            for &t in ts {
                for (r, v) in vreq.iter_mut().enumerate() {
                    *v += j.tasks[t].req[r];
                }
            }
            let mut cur = Some(vq);
            while let Some(q) = cur {
                let mut rm = remaining[q].unwrap_or(self.alloc[q]);
                for r in 0..3 {
                    rm[r] -= vreq[r];
                    involved[q][r] |= vreq[r] > 0;
                }
                remaining[q] = Some(rm);
                cur = self.c.hierarchy.queues()[q].parent;
            }
        }
        // Boundary check from the reclaimer's leaf up.
        let mult = self.o.reclaimer_saturation_multiplier.max(SCALE);
        for x in self.c.hierarchy.path(leaf).into_iter().rev() {
            let sibs: &[usize] = match self.c.hierarchy.queues()[x].parent {
                Some(p) => self.c.hierarchy.children(p),
                None => self.c.hierarchy.roots(),
            };
            let xrem = remaining[x].unwrap_or(self.alloc[x]);
            for &s in sibs {
                if s == x {
                    continue;
                }
                let Some(srem) = remaining[s] else { continue };
                for r in 0..3 {
                    if !(involved[s][r] || req[r] > 0) {
                        continue;
                    }
                    let load = xrem[r] + req[r];
                    let fx = self.fs[x][r];
                    let fsib = self.fs[s][r];
                    // ratioX > 1 ⇔ load > FS_X (FS 0 with load > 0 is +∞).
                    if load <= fx || fsib <= 0 {
                        continue;
                    }
                    let fail = if fx == 0 {
                        true
                    } else if mult == SCALE {
                        // load/fx ≥ srem/fsib ⇔ load·fsib ≥ srem·fx
                        srem[r] <= 0
                            || cmp_products(load as u128, fsib as u128, srem[r] as u128, fx as u128)
                                != Ordering::Less
                    } else {
                        ratio(load, fx) * (mult as f64 / SCALE as f64) >= ratio(srem[r], fsib)
                    };
                    if fail {
                        return Err(format!(
                            "queue {} would end above its fair share and more saturated than {}",
                            self.c.hierarchy.queues()[x].name,
                            self.c.hierarchy.queues()[s].name
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// Running preemptible jobs per leaf queue, in victim order (lowest priority, newest
    /// first).
    fn running_by_leaf(&self) -> Vec<Vec<usize>> {
        let mut lists = vec![Vec::new(); self.c.hierarchy.queues().len()];
        for (vj, job) in self.c.jobs.iter().enumerate() {
            if let Some(q) = job.queue
                && job.preemptible
                && !self.evicted_job[vj]
                && self.tstate[vj].contains(&TState::Running)
            {
                lists[q].push(vj);
            }
        }
        for l in &mut lists {
            l.sort_by(|&a, &b| self.victim_job_cmp(a, b));
        }
        lists
    }

    /// Reverse queue order between two victim queues with their simulated allocations
    /// (`Less` = `a` gives up a job first): over-utilized first, then not starved, then lower
    /// priority, then the higher dominant resource share, then the newer queue.
    fn victim_order(&self, a: usize, aa: [i128; 3], b: usize, ab: [i128; 3]) -> Ordering {
        let over = |q: usize, al: [i128; 3]| (0..3).all(|r| self.fs[q][r] < al[r]);
        let starved =
            |q: usize, al: [i128; 3]| (0..3).all(|r| unl_le(al[r], self.params(q, r).deserved));
        let qa = &self.c.hierarchy.queues()[a];
        let qb = &self.c.hierarchy.queues()[b];
        over(b, ab)
            .cmp(&over(a, aa))
            .then(starved(a, aa).cmp(&starved(b, ab)))
            .then(qa.priority.cmp(&qb.priority))
            .then(self.drs_of(b, ab).total_cmp(&self.drs_of(a, aa)))
            .then(qb.creation.cmp(&qa.creation))
            .then(qb.name.cmp(&qa.name))
    }

    fn drs_of(&self, q: usize, al: [i128; 3]) -> f64 {
        let mut m = 0.0f64;
        for r in 0..3 {
            let v = match self.allocatable(q, r) {
                None => ratio(al[r], self.c.totals[r]),
                Some(0) => al[r] as f64 / SCALE as f64 * 1000.0,
                Some(x) => ratio(al[r], x),
            };
            m = m.max(v);
        }
        m
    }

    /// Appends the units of the next eligible victim job: the victim queue first in reverse
    /// queue order given what was already taken from each, then its lowest-priority, newest
    /// job; evicted jobs and jobs protected by min-runtime are skipped.
    fn next_victim_job(
        &self,
        vq: &[(usize, Option<i128>)],
        running: &[Vec<usize>],
        vg: &mut VictimGen,
        out: &mut Vec<(usize, Vec<usize>)>,
    ) {
        if vg.cursors.len() != vq.len() {
            vg.cursors = vec![0; vq.len()];
            vg.sim = vq.iter().map(|&(q, _)| self.alloc[q]).collect();
        }
        loop {
            // Advance every cursor to its next eligible job, then pick the best queue.
            let mut best: Option<usize> = None;
            for i in 0..vq.len() {
                let (q, min_rt) = vq[i];
                let list = &running[q];
                while vg.cursors[i] < list.len() {
                    let vj = list[vg.cursors[i]];
                    if self.evicted_job[vj]
                        || !self.tstate[vj].contains(&TState::Running)
                        || !self.runtime_ok(vj, min_rt)
                    {
                        vg.cursors[i] += 1;
                    } else {
                        break;
                    }
                }
                if vg.cursors[i] >= list.len() {
                    continue;
                }
                let better = match best {
                    None => true,
                    Some(b) => {
                        self.victim_order(q, vg.sim[i], vq[b].0, vg.sim[b]) == Ordering::Less
                    }
                };
                if better {
                    best = Some(i);
                }
            }
            let Some(i) = best else { return };
            let vj = running[vq[i].0][vg.cursors[i]];
            vg.cursors[i] += 1;
            let units = self.victim_units(vj);
            if units.is_empty() {
                continue;
            }
            for u in units {
                for &t in &u {
                    for r in 0..3 {
                        vg.sim[i][r] -= self.c.jobs[vj].tasks[t].req[r];
                    }
                }
                out.push((vj, u));
            }
            return;
        }
    }

    fn free_capacity(&self) -> [i128; 3] {
        let mut free = [0i128; 3];
        if self.c.nodes.is_empty() {
            for (r, f) in free.iter_mut().enumerate() {
                *f = self.pool.idle[r] + self.pool.rel[r];
            }
        } else {
            for n in &self.nodes {
                for (r, f) in free.iter_mut().enumerate() {
                    *f += n.idle[r] + n.rel[r];
                }
            }
        }
        free
    }

    fn reclaim(&mut self) {
        let running = self.running_by_leaf();
        let mut lists = self.leaf_lists(|_| true);
        while let Some((leaf, ji)) = self.pick(&lists) {
            lists[leaf].pop();
            let Some(tasks) = self.still_pending_gang(ji) else {
                continue;
            };
            if !self.delay_elapsed(ji) {
                self.delayed[ji] = true;
                continue;
            }
            let j = &self.c.jobs[ji];
            let np = !j.preemptible;
            let req = self.job_req(ji, &tasks);
            if let Some(f) = self.capacity(leaf, req, np, &[]) {
                self.cap_fail(ji, f, req);
                continue;
            }
            // CanReclaimResources at the leaf.
            if let Some(r) = (0..3).find(|&r| self.alloc[leaf][r] + req[r] > self.fs[leaf][r]) {
                let res = Resource::ALL[r];
                self.set_fail(ji, Reason::Unschedulable, None, format!(
                    "queue {} cannot reclaim: allocated {} + requested {} {res} exceeds its fair share {}",
                    self.c.hierarchy.queues()[leaf].name,
                    fmt_res(res, self.alloc[leaf][r]),
                    fmt_res(res, req[r]),
                    fmt_res(res, self.fs[leaf][r])
                ));
                continue;
            }
            // Victim queues: other leaves with running preemptible jobs, passing the
            // proportion prefilter on the leveled pair; in reverse queue order.
            let mut vq: Vec<(usize, Option<i128>)> = Vec::new();
            for (q, list) in running.iter().enumerate() {
                if q == leaf || list.is_empty() {
                    continue;
                }
                let Some((rl, vl)) = self.leveled(leaf, q) else {
                    continue;
                };
                if self.filter_victim(rl, vl, req) {
                    vq.push((q, self.c.queues[vl].reclaim_min_runtime));
                }
            }
            // Victims are generated lazily: enough to cover the shortfall, then more only if
            // the placement search needs them.
            let mut cursor = VictimGen::default();
            let mut victims: Vec<(usize, Vec<usize>)> = Vec::new();
            let mut free = self.free_capacity();
            while (0..3).any(|r| free[r] < req[r]) {
                let before = victims.len();
                self.next_victim_job(&vq, &running, &mut cursor, &mut victims);
                if victims.len() == before {
                    break;
                }
                for (vj, ts) in &victims[before..] {
                    for &t in ts {
                        for (r, f) in free.iter_mut().enumerate() {
                            *f += self.c.jobs[*vj].tasks[t].req[r];
                        }
                    }
                }
            }
            let k0 = victims.len();
            for _ in 0..(k0 + 8) {
                self.next_victim_job(&vq, &running, &mut cursor, &mut victims);
            }
            if victims.is_empty() {
                self.set_fail(
                    ji,
                    Reason::Unschedulable,
                    None,
                    "no free room and no reclaimable victims in other queues".into(),
                );
                continue;
            }
            let mut found = self.min_prefix(ji, &tasks, &victims, k0);
            if found.is_none() {
                let before = victims.len();
                loop {
                    let n = victims.len();
                    self.next_victim_job(&vq, &running, &mut cursor, &mut victims);
                    if victims.len() == n {
                        break;
                    }
                }
                if victims.len() > before {
                    found = self.min_prefix(ji, &tasks, &victims, k0);
                }
            }
            let Some(k) = found else {
                self.set_fail(
                    ji,
                    Reason::Unschedulable,
                    None,
                    "even evicting every reclaimable victim would not make room for the gang"
                        .into(),
                );
                continue;
            };
            let chosen = self.prune_victims(ji, &tasks, &victims[..k], &|_, _| true);
            // Consolidating reclaim (KAI's `allow-consolidating-reclaim`, on by default): a
            // victim that fits elsewhere once the reclaimer is placed is moved, not killed,
            // and only the killed victims go to the validator.
            let moved = self.movable_victims(ji, &tasks, &chosen);
            let killed: Vec<(usize, Vec<usize>)> = chosen
                .iter()
                .filter(|(vj, _)| !moved.contains(vj))
                .cloned()
                .collect();
            // With every victim moved the validator sees no victim and approves, as upstream
            // does (PR #1565's bypass); the corrected mode applies that PR's fix: the
            // reclaimer must then stay within its deserved quota.
            if killed.is_empty()
                && self.o.division.mode == crate::division::Mode::Corrected
                && (0..3)
                    .any(|r| !unl_le(self.alloc[leaf][r] + req[r], self.params(leaf, r).deserved))
            {
                self.set_fail(
                    ji,
                    Reason::Unschedulable,
                    None,
                    "reclaim refused: every victim would only be moved and the reclaimer would \
                     exceed its deserved quota"
                        .into(),
                );
                continue;
            }
            if let Err(msg) = self.reclaimable(leaf, req, &killed) {
                self.set_fail(
                    ji,
                    Reason::Unschedulable,
                    None,
                    format!("reclaim refused: {msg}"),
                );
                continue;
            }
            let key = self.c.jobs[ji].key.clone();
            for (vj, ts) in &chosen {
                self.evict(*vj, ts, Action::Reclaim, Some(&key));
            }
            if let Some(recs) = self.place_all(ji, &tasks) {
                self.commit_pipelined(ji, &tasks, recs);
                self.fail[ji] = None;
            }
            self.replace_moved(&chosen, &moved);
        }
    }

    /// The victim jobs of `victims` that can be re-placed once all of them are released and
    /// job `ji` is placed, tried in job order (the reverse of the victim order); a job is
    /// moved only when it is one unit of the list. The state is restored.
    ///
    /// # Complexity
    /// One placement of the job and of each victim: O((1 + V) · N · G).
    fn movable_victims(&mut self, ji: usize, tasks: &[usize], victims: &Units) -> Vec<usize> {
        if self.c.nodes.is_empty() {
            return Vec::new();
        }
        let saved_nodes = self.nodes.clone();
        let saved_pool = self.pool.clone();
        let saved: Vec<(usize, usize, PlaceRec, TState)> = victims
            .iter()
            .flat_map(|(vj, ts)| {
                ts.iter()
                    .map(|&t| (*vj, t, self.place[*vj][t].clone(), self.tstate[*vj][t]))
            })
            .collect();
        for (vj, ts) in victims {
            for &t in ts {
                self.release(*vj, t);
            }
        }
        let mut moved = Vec::new();
        if self.place_all(ji, tasks).is_some() {
            for (i, (vj, ts)) in victims.iter().enumerate().rev() {
                let single = victims
                    .iter()
                    .enumerate()
                    .all(|(j, (other, _))| j == i || other != vj);
                let whole = self.tstate[*vj]
                    .iter()
                    .all(|s| !matches!(s, TState::Running));
                if single && whole && self.place_all(*vj, ts).is_some() {
                    moved.push(*vj);
                }
            }
        }
        self.nodes = saved_nodes;
        self.pool = saved_pool;
        for (vj, t, rec, st) in saved {
            self.place[vj][t] = rec;
            self.tstate[vj][t] = st;
        }
        moved
    }

    /// The smallest victim count whose resources cover the gang's shortfall in free capacity
    /// (a lower bound for the placement search).
    fn quota_prefix(&self, req: [i128; 3], victims: &[(usize, Vec<usize>)]) -> usize {
        let mut free = self.free_capacity();
        let mut k = 0;
        while k < victims.len() && (0..3).any(|r| free[r] < req[r]) {
            let (vj, ts) = &victims[k];
            for &t in ts {
                for (r, f) in free.iter_mut().enumerate() {
                    *f += self.c.jobs[*vj].tasks[t].req[r];
                }
            }
            k += 1;
        }
        k
    }

    fn preempt(&mut self) {
        let running = self.running_by_leaf();
        let mut lists = self.leaf_lists(|_| true);
        while let Some((leaf, ji)) = self.pick(&lists) {
            lists[leaf].pop();
            let Some(tasks) = self.still_pending_gang(ji) else {
                continue;
            };
            if !self.delay_elapsed(ji) {
                self.delayed[ji] = true;
                continue;
            }
            let prio = self.c.jobs[ji].priority;
            let np = !self.c.jobs[ji].preemptible;
            let req = self.job_req(ji, &tasks);
            // Same leaf, strictly lower priority (the list is sorted by priority first).
            let cands: Vec<usize> = running[leaf]
                .iter()
                .copied()
                .take_while(|&vj| self.c.jobs[vj].priority < prio)
                .filter(|&vj| {
                    vj != ji
                        && !self.evicted_job[vj]
                        && self.tstate[vj].contains(&TState::Running)
                        && self.runtime_ok(vj, self.c.queues[leaf].preempt_min_runtime)
                })
                .collect();
            if cands.is_empty() {
                continue;
            }
            let victims: Vec<(usize, Vec<usize>)> = cands
                .iter()
                .flat_map(|&vj| self.victim_units(vj).into_iter().map(move |u| (vj, u)))
                .collect();
            // The smallest prefix passing the capacity policy (victims freed) and placement.
            let mut k0 = 0;
            loop {
                let freed: Vec<(usize, [i128; 3], bool)> = victims[..k0]
                    .iter()
                    .map(|(vj, ts)| (leaf, self.job_req(*vj, ts), !self.c.jobs[*vj].preemptible))
                    .collect();
                if self.capacity(leaf, req, np, &freed).is_none() {
                    break;
                }
                if k0 == victims.len() {
                    break;
                }
                k0 += 1;
            }
            let freed: Vec<(usize, [i128; 3], bool)> = victims[..k0]
                .iter()
                .map(|(vj, ts)| (leaf, self.job_req(*vj, ts), false))
                .collect();
            if let Some(f) = self.capacity(leaf, req, np, &freed) {
                self.cap_fail(ji, f, req);
                continue;
            }
            let k0 = k0.max(self.quota_prefix(req, &victims));
            let Some(k) = self.min_prefix(ji, &tasks, &victims, k0) else {
                continue;
            };
            let cap_ok = |e: &Engine<'_>, rest: &[(usize, Vec<usize>)]| {
                let freed: Vec<(usize, [i128; 3], bool)> = rest
                    .iter()
                    .map(|(vj, ts)| (leaf, e.job_req(*vj, ts), false))
                    .collect();
                e.capacity(leaf, req, np, &freed).is_none()
            };
            let chosen = self.prune_victims(ji, &tasks, &victims[..k], &cap_ok);
            let mut moved = self.movable_victims(ji, &tasks, &chosen);
            let killed: Vec<(usize, Vec<usize>)> = chosen
                .iter()
                .filter(|(vj, _)| !moved.contains(vj))
                .cloned()
                .collect();
            if !cap_ok(self, &killed) {
                moved.clear();
            }
            let key = self.c.jobs[ji].key.clone();
            for (vj, ts) in &chosen {
                self.evict(*vj, ts, Action::Preempt, Some(&key));
            }
            if let Some(recs) = self.place_all(ji, &tasks) {
                self.commit_pipelined(ji, &tasks, recs);
                self.fail[ji] = None;
            }
            self.replace_moved(&chosen, &moved);
        }
    }

    /// Re-places the moved victims after the job they made room for, reported pipelined.
    fn replace_moved(&mut self, chosen: &Units, moved: &[usize]) {
        for (vj, ts) in chosen.iter().filter(|(vj, _)| moved.contains(vj)) {
            if let Some(r) = self.place_all(*vj, ts) {
                self.commit_placed(*vj, ts, r);
                if let Some(i) = self.alloc_idx[*vj] {
                    self.allocated[i].pipelined = true;
                }
            }
        }
    }

    fn consolidate(&mut self) {
        let mut lists = self.leaf_lists(|ji| self.c.jobs[ji].preemptible);
        while let Some((leaf, ji)) = self.pick(&lists) {
            lists[leaf].pop();
            let Some(tasks) = self.still_pending_gang(ji) else {
                continue;
            };
            let req = self.job_req(ji, &tasks);
            if self.capacity(leaf, req, false, &[]).is_some() {
                continue;
            }
            // Only when the free capacity would hold the job.
            let mut free = [0i128; 3];
            for n in &self.nodes {
                for (r, f) in free.iter_mut().enumerate() {
                    *f += n.idle[r];
                }
            }
            if (0..3).any(|r| free[r] < req[r]) {
                continue;
            }
            let mut cands: Vec<usize> = (0..self.c.jobs.len())
                .filter(|&vj| {
                    let v = &self.c.jobs[vj];
                    vj != ji
                        && v.preemptible
                        && !self.evicted_job[vj]
                        && self.tstate[vj]
                            .iter()
                            .all(|s| !matches!(s, TState::Placed(_) | TState::Releasing))
                        && self.tstate[vj].contains(&TState::Running)
                })
                .collect();
            cands.sort_by(|&a, &b| {
                let qa = self.c.jobs[a].queue.unwrap_or(0);
                let qb = self.c.jobs[b].queue.unwrap_or(0);
                self.victim_order(qa, self.alloc[qa], qb, self.alloc[qb])
                    .then(self.victim_job_cmp(a, b))
            });
            let max = self.o.max_consolidation_preemptees.min(cands.len());
            // The first prefix of the victim order that frees room for the job, cut to the
            // victims the job needs (KAI's solver finds such per-node scenarios), then checked
            // for re-placement; failing that, the whole prefix with every victim moved.
            let units = |e: &Engine<'_>, vs: &[usize]| -> Vec<(usize, Vec<usize>)> {
                vs.iter()
                    .map(|&vj| {
                        let ts = (0..e.c.jobs[vj].tasks.len())
                            .filter(|&t| e.tstate[vj][t] == TState::Running)
                            .collect();
                        (vj, ts)
                    })
                    .collect()
            };
            let mut found: Option<Vec<usize>> = None;
            for k in 1..=max {
                let prefix = &cands[..k];
                let u = units(self, prefix);
                if !self.fits_with(ji, &tasks, &u) {
                    continue;
                }
                let mut sub = prefix.to_vec();
                for i in (0..k).rev() {
                    if sub.len() == 1 {
                        break;
                    }
                    let rest: Vec<usize> = sub.iter().copied().filter(|&v| v != cands[i]).collect();
                    let ru = units(self, &rest);
                    if self.fits_with(ji, &tasks, &ru) {
                        sub = rest;
                    }
                }
                if self.consolidation_moves(ji, &tasks, &sub) {
                    found = Some(sub);
                    break;
                }
                if self.consolidation_moves(ji, &tasks, prefix) {
                    found = Some(prefix.to_vec());
                    break;
                }
            }
            let Some(mut victims) = found else {
                continue;
            };
            // Like reclaim and preempt: a victim the job does not need stays where it is
            // (KAI re-places every scenario victim after the preemptor; test "verify not all
            // preemptors are evicted as well"). Tried from the last victim to the first.
            for i in (0..cands.len().min(max)).rev() {
                if victims.len() == 1 {
                    break;
                }
                let Some(pos) = victims.iter().position(|&v| v == cands[i]) else {
                    continue;
                };
                let mut rest = victims.clone();
                rest.remove(pos);
                if self.consolidation_moves(ji, &tasks, &rest) {
                    victims = rest;
                }
            }
            let key = self.c.jobs[ji].key.clone();
            let moved: Vec<(usize, Vec<usize>)> = victims
                .iter()
                .map(|&vj| {
                    let ts: Vec<usize> = (0..self.c.jobs[vj].tasks.len())
                        .filter(|&t| self.tstate[vj][t] == TState::Running)
                        .collect();
                    (vj, ts)
                })
                .collect();
            for (vj, ts) in &moved {
                self.evict(*vj, ts, Action::Consolidation, Some(&key));
            }
            if let Some(r) = self.place_all(ji, &tasks) {
                self.commit_pipelined(ji, &tasks, r);
            }
            for (vj, ts) in &moved {
                if let Some(r) = self.place_all(*vj, ts) {
                    self.commit_placed(*vj, ts, r);
                    self.evicted_job[*vj] = true;
                    // A moved job starts once its evicted pods are gone: KAI reports it
                    // Pipelined wherever it lands.
                    if let Some(i) = self.alloc_idx[*vj] {
                        self.allocated[i].pipelined = true;
                    }
                }
            }
            self.fail[ji] = None;
        }
    }

    /// Whether moving `victims` lets job `ji` be placed with every victim re-placed (not on
    /// resources being freed); the state is restored.
    ///
    /// # Complexity
    /// One placement of the job and of each victim: O((1 + V) · N · G).
    fn consolidation_moves(&mut self, ji: usize, tasks: &[usize], victims: &[usize]) -> bool {
        let saved_nodes = self.nodes.clone();
        let saved_place = self.place.clone();
        let saved_state = self.tstate.clone();
        for &vj in victims {
            for t in 0..self.c.jobs[vj].tasks.len() {
                if self.tstate[vj][t] == TState::Running {
                    self.release(vj, t);
                }
            }
        }
        let mut ok = self.place_all(ji, tasks).is_some();
        if ok {
            for &vj in victims {
                let ts: Vec<usize> = (0..self.c.jobs[vj].tasks.len())
                    .filter(|&t| self.tstate[vj][t] == TState::Releasing)
                    .collect();
                // Victims may not land back on resources that are being freed.
                if self.place_all(vj, &ts).is_none() {
                    ok = false;
                    break;
                }
            }
        }
        self.nodes = saved_nodes;
        self.place = saved_place;
        self.tstate = saved_state;
        ok
    }

    fn stale_gangs(&mut self) {
        for ji in 0..self.c.jobs.len() {
            if self.evicted_job[ji] {
                continue;
            }
            let j = &self.c.jobs[ji];
            if j.foreign {
                continue;
            }
            let active: Vec<usize> = (0..j.tasks.len())
                .filter(|&t| self.tstate[ji][t] == TState::Running)
                .collect();
            // KAI counts active *used* pods (`GetNumActiveUsedTasks`): releasing and stuck
            // pods still hold the gang together; only running ones are evicted.
            let used = active.len()
                + self.tstate[ji]
                    .iter()
                    .filter(|s| matches!(s, TState::Releasing | TState::Stuck))
                    .count();
            let succeeded = j.tasks.iter().any(|t| t.status == TaskStatus::Succeeded);
            if active.is_empty() || succeeded || used >= j.min_member {
                continue;
            }
            // Jobs topped up in this session are not stale.
            if self.tstate[ji]
                .iter()
                .any(|s| matches!(s, TState::Placed(_)))
            {
                continue;
            }
            let grace = j.staleness_grace.unwrap_or(self.o.default_staleness_grace);
            if grace < 0 {
                continue;
            }
            let since = j.stale_since.unwrap_or(self.c.now);
            if self.c.now.unix_nanos() - since.unix_nanos() >= grace {
                self.evict(ji, &active, Action::StaleGang, None);
            }
        }
    }

    fn details(&self, q: usize, r: usize, req: [i128; 3], np: bool) -> QuotaDetails {
        let p = self.params(q, r);
        QuotaDetails {
            queue: self.c.hierarchy.queues()[q].name.clone(),
            resource: Resource::ALL[r],
            deserved: p.deserved,
            used: if np {
                self.alloc_np[q][r]
            } else {
                self.alloc[q][r]
            },
            requested: req[r],
            limit: p.limit,
            fair_share: self.fs[q][r],
        }
    }

    fn pending(&self) -> Vec<Pending> {
        let mut out = Vec::new();
        for (ji, j) in self.c.jobs.iter().enumerate() {
            if j.foreign || !self.tstate[ji].contains(&TState::Pending) {
                continue;
            }
            let (pending, gang) = self.needed_tasks(ji);
            // A job at its minMember with only elastic extras left is running, not pending.
            if gang == 0 {
                continue;
            }
            let take: Vec<usize> = pending.iter().copied().take(gang.max(1)).collect();
            let req = self.job_req(ji, &take);
            let (reason, message, details) = match (j.queue, &self.fail[ji]) {
                (None, _) => (
                    Reason::QueueDoesNotExist,
                    format!(
                        "queue {:?} does not exist (or is not a leaf queue)",
                        j.queue_name
                    ),
                    None,
                ),
                (Some(_), Some((reason, Some(f), msg))) => {
                    let (q, r) = match *f {
                        CapFail::OverLimit(q, r) | CapFail::NonPreemptible(q, r) => (q, r),
                    };
                    let np = matches!(f, CapFail::NonPreemptible(..));
                    (*reason, msg.clone(), Some(self.details(q, r, req, np)))
                }
                (Some(leaf), fail) => {
                    // No quota check failed: the numbers of the leaf queue for the resource
                    // the job asks most of (GPU first).
                    let r = (0..3).find(|&r| req[r] > 0).unwrap_or(0);
                    let d = self.details(leaf, r, req, false);
                    let numbers = format!(
                        " (queue {} {}: deserved {}, fair share {}, allocated {}, requested {}, limit {})",
                        d.queue,
                        d.resource,
                        d.deserved
                            .map_or("unlimited".into(), |v| fmt_res(d.resource, v)),
                        fmt_res(d.resource, d.fair_share),
                        fmt_res(d.resource, d.used),
                        fmt_res(d.resource, d.requested),
                        d.limit
                            .map_or("unlimited".into(), |v| fmt_res(d.resource, v)),
                    );
                    let (reason, msg) = match fail {
                        _ if self.delayed[ji] => (
                            Reason::PreemptionDelayNotElapsed,
                            "no free room, and the job's preemption delay has not elapsed, so it may not reclaim or preempt yet".to_string(),
                        ),
                        Some((reason, _, msg)) => (*reason, msg.clone()),
                        None => (
                            Reason::Unschedulable,
                            "the job was not scheduled in this session".to_string(),
                        ),
                    };
                    (reason, format!("{msg}{numbers}"), Some(d))
                }
            };
            out.push(Pending {
                pod_group: j.key.clone(),
                queue: j.queue_name.clone(),
                reason,
                message,
                details,
            });
        }
        out
    }
}

/// The part of a task's request placed on nodes as devices: its GPU request without the
/// MIG GPU-equivalents (MIG instances are placed as their own resources).
fn dev_req(t: &crate::snapshot::Task) -> [i128; 3] {
    [t.req[0] - t.mig_gpu, t.req[1], t.req[2]]
}

/// A nano-unit amount of a resource as the contract prints it (GPUs as decimals, CPU and
/// memory as Kubernetes quantities).
pub fn fmt_res(r: Resource, v: i128) -> String {
    match r {
        Resource::Gpu => format_decimal(v),
        // Nano-millicores are pico-cores; a Kubernetes quantity holds nano-cores.
        Resource::Cpu => {
            crate::fixed::to_quantity(v / 1000).map_or_else(|| format_decimal(v), |q| q.to_string())
        }
        Resource::Memory => memory_string(v),
    }
}

fn memory_string(v: i128) -> String {
    // Bytes (nano): whole bytes print BinarySI when a multiple of 1024, DecimalSI otherwise.
    let bytes = v / SCALE;
    if v % SCALE == 0
        && let Ok(b) = i64::try_from(bytes)
    {
        if b != 0 && b % 1024 == 0 {
            return gpuquota_model::Quantity::from_bytes(b).to_string();
        }
        return gpuquota_model::Quantity::from_integer(b).to_string();
    }
    crate::fixed::to_quantity(v).map_or_else(|| format_decimal(v), |q| q.to_string())
}
