//! Runs that repeat: each cohort tree is replayed instead of computed once its own state has
//! come back, exactly, to what it was `p` cycles earlier.
//!
//! Cohort trees never interact under classical ordering (a cycle's entries of one tree read
//! and change only that tree's usage, queues and reservations; preemption targets stay in the
//! preemptor's tree), unless a namespace ResourceQuota or an admitted workload spans two
//! trees, in which case the whole forest is one group. The engine is deterministic, so a
//! group whose state at the end of cycle `f` equals its state at the end of cycle `f − p`
//! repeats those `p` cycles for ever. From then on [`Scheduler::run`] leaves the group's
//! ClusterQueues out of the cycle and adds the recorded admissions and preemptions of the
//! matching cycle of the period instead; a group in which no ClusterQueue has a head
//! never changes again and is left out as well. When the run ends, each replayed group is
//! brought to the state it would have (its absolute numbers moved on by the whole periods,
//! then the `(end − f) mod p` cycles left run for that group alone), and the records of
//! every cycle are put in the order the cycle would have made them (entry order: borrowing
//! level, priority, queue time, UID). The records, the cycle count, the stop rule (a cycle
//! that admits, preempts and moves nothing; no heads) and the final state are those of
//! running every cycle; `tests/all/repeat.rs` compares both on random platforms.
//!
//! This is what keeps a preemption loop cheap (the victim is readmitted ahead of its
//! preemptor and preempted again, as upstream Kueue does at its default feature gates): the
//! run goes on to its bound of `4 × workloads + 64` cycles.
//!
//! Finding a period, per group:
//! 1. a cheap signature of every cycle (the group's admissions, preemptions and queue
//!    fingerprint) and, per candidate period `p ≤` [`MAX_PERIOD`], how many consecutive
//!    cycles matched the one `p` before; `2p` in a row make `p` a candidate;
//! 2. the proof: the group's whole state ([`GroupKey`]) at the end of cycle `s`, `p` more
//!    cycles, and the state again; only equal values (not hashes) freeze the group. A failed
//!    proof waits longer before the next one.
//!
//! The state compared: usage of the group's nodes; per ClusterQueue its queue (active heap,
//! inadmissible set, evicted marks), sticky preemptor and candidate list; per workload its
//! reservation (admission time as its rank: the time is only compared,
//! [`crate::preempt::Admitted::key`]), pending reason, and scan progress with its cycle and
//! queue generation replaced by what the next nomination tests of them.
//!
//! Only [`Policy::stateless`] policies take part (classical ordering and preemption); fair
//! sharing's shares and clocks are not in the key, so a fair-sharing run runs every cycle.

use super::{AdmittedRecord, LastTried, Pending, Policy, PreemptedRecord, Scheduler};
use crate::ids::Table;
use crate::queues::Queue;
use crate::tree::{FrId, NodeId};
use crate::world::{CqId, QueueRef, WlId, World};
use gpuquota_model::{Amount, Timestamp};

/// The longest period looked for, in cycles.
pub(crate) const MAX_PERIOD: usize = 1024;

/// The independent parts of a world: ClusterQueues, nodes and workloads per group.
struct Groups {
    of_cq: Table<CqId, usize>,
    cqs: Vec<Vec<CqId>>,
    nodes: Vec<Vec<NodeId>>,
    wls: Vec<Vec<WlId>>,
}

impl Groups {
    /// One group per cohort tree (by root), or one for everything when a namespace
    /// ResourceQuota or an admitted workload couples trees.
    ///
    /// # Complexity
    /// O(ClusterQueues + nodes + workloads).
    fn new(world: &World) -> Groups {
        let ncq = world.cluster_queues.len();
        let nn = world.tree.nodes.len();
        let root = |node: NodeId| world.tree.nodes[node].root;
        let mut of_root: Table<NodeId, usize> = Table::filled(usize::MAX, nn);
        let mut of_cq: Table<CqId, usize> = Table::filled(0, ncq);
        let mut n = 0;
        for (c, cq) in world.cluster_queues.iter_enumerated() {
            let r = root(cq.node);
            if of_root[r] == usize::MAX {
                of_root[r] = n;
                n += 1;
            }
            of_cq[c] = of_root[r];
        }
        let mut coupled = !world.resource_quotas.is_empty();
        let mut of_wl: Table<WlId, Option<usize>> = Table::filled(None, world.workloads.len());
        for (i, w) in world.workloads.iter_enumerated() {
            let q = match w.queue {
                QueueRef::Cq(c) => Some(of_cq[c]),
                _ => None,
            };
            let a = w.admitted.as_ref().map(|a| of_cq[a.cq]);
            if let (Some(x), Some(y)) = (q, a)
                && x != y
            {
                coupled = true;
            }
            of_wl[i] = q.or(a);
        }
        if coupled && n > 0 {
            n = 1;
            of_cq.iter_mut().for_each(|g| *g = 0);
            of_root.iter_mut().for_each(|g| {
                if *g != usize::MAX {
                    *g = 0;
                }
            });
            of_wl.iter_mut().flatten().for_each(|g| *g = 0);
        }
        let mut cqs = vec![Vec::new(); n];
        for (c, &g) in of_cq.iter_enumerated() {
            cqs[g].push(c);
        }
        let mut nodes = vec![Vec::new(); n];
        for node in world.tree.nodes.ids() {
            let g = of_root[root(node)];
            if g != usize::MAX {
                nodes[g].push(node);
            }
        }
        let mut wls = vec![Vec::new(); n];
        for (i, g) in of_wl.iter_enumerated() {
            if let Some(g) = g {
                wls[*g].push(i);
            }
        }
        Groups {
            of_cq,
            cqs,
            nodes,
            wls,
        }
    }
}

/// A reservation with its admission time as a rank: (ClusterQueue, usage, flavor-resources,
/// time rank, evicted).
type NormalReservation = (CqId, Vec<(FrId, Amount)>, Vec<FrId>, u32, bool);

/// Everything of one group the next cycle reads and the report prints, with absolute cycle
/// numbers and queue generations replaced by the relations the engine tests.
#[derive(Debug, PartialEq)]
pub(crate) struct GroupKey {
    usage: Vec<Amount>,
    /// Per workload: reservation, pending reason, (scan progress, written in the last cycle,
    /// no workload left its queue since).
    #[allow(clippy::type_complexity)]
    wls: Vec<(
        Option<NormalReservation>,
        Option<Pending>,
        Option<(LastTried, bool, bool)>,
    )>,
    /// Per ClusterQueue: candidate list, queue, sticky preemptor.
    cqs: Vec<(Vec<WlId>, Queue, Option<WlId>)>,
}

/// One cycle of a group's period: whether it had a head, its records, its queues'
/// fingerprint after the cycle.
#[derive(Debug, Clone)]
struct Phase {
    heads: bool,
    admitted: Vec<AdmittedRecord>,
    preempted: Vec<PreemptedRecord>,
    fp: (usize, u64),
}

/// A proof in progress: the group's state at the end of cycle `start`, the queue
/// generations of its nodes then, and the phases since.
struct Proof {
    period: u32,
    start: u32,
    key: GroupKey,
    generation: Vec<u64>,
    phases: Vec<Phase>,
}

/// The period detector of one live group.
struct Live {
    signatures: Vec<u64>,
    matched: Vec<u32>,
    failures: u32,
    next_try: u32,
    proof: Option<Proof>,
}

/// A replayed group: frozen at the end of cycle `at`, repeating `phases` (cycle `at + 1 + j`
/// is phase `j mod p`); `generation_step` is what one period adds to each node's queue
/// generation.
struct Frozen {
    at: u32,
    phases: Vec<Phase>,
    generation_step: Vec<u64>,
}

impl Frozen {
    fn period(&self) -> u32 {
        self.phases.len() as u32
    }

    fn phase(&self, cycle: u32) -> &Phase {
        &self.phases[((cycle - self.at - 1) % self.period()) as usize]
    }
}

/// The physical queue fingerprints of a run in which no group is live any more: of all
/// queues, and per group (see [`Scheduler::emulated_fp`]).
struct StillFp {
    all: (usize, u64),
    groups: Vec<(usize, u64)>,
}

enum Mode {
    Live(Box<Live>),
    /// No head: the group never changes again.
    Dead,
    Frozen(Box<Frozen>),
}

/// SplitMix64's finalizer, the mixing step of a signature.
fn mix(h: u64, x: u64) -> u64 {
    let mut z = (h ^ x).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl<P: Policy> Scheduler<'_, P> {
    /// The whole state of group `g`, normalised (see [`GroupKey`]).
    ///
    /// # Complexity
    /// O(w log w + usage counters + queued workloads) for the group's w workloads.
    fn group_key(&self, groups: &Groups, g: usize) -> GroupKey {
        let frs = self.world.tree.frs;
        let mut times: Vec<(Timestamp, u32)> = groups.wls[g]
            .iter()
            .filter_map(|&w| self.reservations[w].as_ref().map(|r| r.time))
            .collect();
        times.sort_unstable();
        times.dedup();
        let rank = |t: (Timestamp, u32)| times.partition_point(|&x| x < t) as u32;
        let usage = groups.nodes[g]
            .iter()
            .flat_map(|&n| {
                let i = n.index() * frs;
                self.usage.0[i..i + frs].iter().copied()
            })
            .collect();
        let wls = groups.wls[g]
            .iter()
            .map(|&w| {
                let wi = w;
                let r = self.reservations[wi].as_ref().map(|r| {
                    (
                        r.cq,
                        r.usage.clone(),
                        r.uses.clone(),
                        rank(r.time),
                        r.evicted,
                    )
                });
                let l = self.last_tried[wi].as_ref().map(|(l, c, gen_)| {
                    let fresh = match self.world.workloads[wi].queue {
                        QueueRef::Cq(cq) => {
                            let node = self.world.cluster_queues[cq].node;
                            *gen_ >= self.generation[node]
                        }
                        _ => false,
                    };
                    (l.clone(), *c == self.cycle, fresh)
                });
                (r, self.pending[wi].clone(), l)
            })
            .collect();
        let cqs = groups.cqs[g]
            .iter()
            .map(|&c| {
                (
                    self.by_cq[c].iter().map(|k| k.4).collect(),
                    self.queues[c].clone(),
                    self.sticky[c],
                )
            })
            .collect();
        GroupKey { usage, wls, cqs }
    }

    /// The fingerprint of group `g`'s queues.
    fn group_fp(&self, groups: &Groups, g: usize) -> (usize, u64) {
        groups.cqs[g].iter().fold((0, 0), |(n, h), &c| {
            let (qn, qh) = self.queues[c].fingerprint();
            (n + qn, h.wrapping_add(qh))
        })
    }

    /// The queues' fingerprint after `cycle` as running every cycle would have it: the
    /// physical one with each frozen group's frozen part replaced by its phase's.
    ///
    /// `still` holds the physical fingerprints (all queues, then per group) once no group
    /// runs cycles any more: the queues then never change, so they are not summed again.
    ///
    /// # Complexity
    /// O(ClusterQueues) without `still`, O(groups) with it.
    fn emulated_fp(
        &self,
        groups: &Groups,
        modes: &[Mode],
        cycle: u32,
        still: Option<&StillFp>,
    ) -> (usize, u64) {
        let (mut n, mut h) = match still {
            Some(s) => s.all,
            None => self.queue_fingerprint(),
        };
        for (g, m) in modes.iter().enumerate() {
            if let Mode::Frozen(f) = m
                && cycle > f.at
            {
                let phys = match still {
                    Some(s) => s.groups[g],
                    None => self.group_fp(groups, g),
                };
                let now = f.phase(cycle).fp;
                n = n - phys.0 + now.0;
                h = h.wrapping_sub(phys.1).wrapping_add(now.1);
            }
        }
        (n, h)
    }

    /// [`Scheduler::run`] with repeating groups replayed (see the module docs).
    ///
    /// # Complexity
    /// O(Σ cycles each group really runs × its cycle cost + cycles × groups + records ×
    /// log records).
    pub(super) fn run_replaying(&mut self, max: Option<u32>, bound: u32) {
        let groups = Groups::new(&self.world);
        let ng = groups.cqs.len();
        let mut modes: Vec<Mode> = (0..ng)
            .map(|_| {
                Mode::Live(Box::new(Live {
                    signatures: Vec::new(),
                    matched: vec![0; MAX_PERIOD + 1],
                    failures: 0,
                    next_try: 0,
                    proof: None,
                }))
            })
            .collect();
        self.held = Table::filled(false, self.world.cluster_queues.len());
        let mut live = ng;
        let mut any_frozen = false;
        let mut had_heads = vec![false; ng];
        // the physical fingerprints, taken once no group is live (nothing runs after that)
        let mut still: Option<StillFp> = None;
        while self.cycle < bound {
            let next = self.cycle + 1;
            if live == 0 && still.is_none() {
                still = Some(StillFp {
                    all: self.queue_fingerprint(),
                    groups: (0..ng).map(|g| self.group_fp(&groups, g)).collect(),
                });
            }
            let before = (
                self.admitted.len(),
                self.preempted.len(),
                self.emulated_fp(&groups, &modes, self.cycle, still.as_ref()),
            );
            let ran = live > 0 && self.run_cycle();
            let real = (self.admitted.len(), self.preempted.len());
            let frozen_heads = modes.iter().any(|m| match m {
                Mode::Frozen(f) => f.phase(next).heads,
                _ => false,
            });
            if !ran && !frozen_heads {
                break;
            }
            if !ran {
                self.cycle = next;
            }
            for m in &modes {
                if let Mode::Frozen(f) = m {
                    let ph = f.phase(next);
                    self.admitted
                        .extend(ph.admitted.iter().map(|a| AdmittedRecord {
                            cycle: next,
                            ..a.clone()
                        }));
                    self.preempted
                        .extend(ph.preempted.iter().map(|p| PreemptedRecord {
                            cycle: next,
                            ..p.clone()
                        }));
                }
            }
            let after = (
                self.admitted.len(),
                self.preempted.len(),
                self.emulated_fp(&groups, &modes, next, still.as_ref()),
            );
            if max.is_none() && before == after {
                break;
            }
            if live == 0 {
                continue;
            }
            had_heads.iter_mut().for_each(|h| *h = false);
            if ran {
                for &c in &self.last_heads {
                    had_heads[groups.of_cq[c]] = true;
                }
            }
            for g in 0..ng {
                let Mode::Live(l) = &mut modes[g] else {
                    continue;
                };
                if !had_heads[g] {
                    modes[g] = Mode::Dead;
                    live -= 1;
                    for &c in &groups.cqs[g] {
                        self.held[c] = true;
                    }
                    continue;
                }
                let admitted: Vec<AdmittedRecord> = self.admitted[before.0..real.0]
                    .iter()
                    .filter(|a| groups.of_cq[a.cq] == g)
                    .cloned()
                    .collect();
                let preempted: Vec<PreemptedRecord> = self.preempted[before.1..real.1]
                    .iter()
                    .filter(|p| groups.of_cq[p.cq] == g)
                    .cloned()
                    .collect();
                let fp = self.group_fp(&groups, g);
                if let Some(frozen) = self.observe(&groups, g, l, admitted, preempted, fp) {
                    modes[g] = Mode::Frozen(frozen);
                    live -= 1;
                    any_frozen = true;
                    for &c in &groups.cqs[g] {
                        self.held[c] = true;
                    }
                }
            }
        }
        self.catch_up(&groups, &modes);
        self.held = Table::new();
        if any_frozen {
            let world_arc = std::sync::Arc::clone(&self.world);
            let world: &World = &world_arc;
            let uid_rank = &self.uid_rank;
            let key = |wl: WlId, b: u32| {
                let w = &world.workloads[wl];
                (b, std::cmp::Reverse(w.priority), w.created, uid_rank[wl])
            };
            self.admitted
                .sort_by_key(|a| (a.cycle, key(a.wl, a.sort_borrowing)));
            self.preempted
                .sort_by_key(|p| (p.cycle, key(p.preemptor, p.sort_borrowing)));
        }
    }

    /// Feeds group `g`'s cycle just run to its detector; returns the group frozen when a
    /// period is proven.
    ///
    /// # Complexity
    /// O([`MAX_PERIOD`] + the cycle's records); a proof step costs one
    /// [`Self::group_key`].
    fn observe(
        &self,
        groups: &Groups,
        g: usize,
        l: &mut Live,
        admitted: Vec<AdmittedRecord>,
        preempted: Vec<PreemptedRecord>,
        fp: (usize, u64),
    ) -> Option<Box<Frozen>> {
        let mut h = mix(fp.0 as u64, fp.1);
        for a in &admitted {
            h = mix(
                h,
                (u64::from(u32::from(a.wl)) << 32) | u64::from(u32::from(a.cq)),
            );
            h = mix(h, u64::from(a.borrowing));
        }
        h = mix(h, u64::MAX);
        for p in &preempted {
            h = mix(
                h,
                (u64::from(u32::from(p.wl)) << 32) | u64::from(u32::from(p.preemptor)),
            );
            h = mix(h, p.reason as u64);
        }
        l.signatures.push(h);
        let n = l.signatures.len();
        let mut candidate = None;
        for p in 1..=MAX_PERIOD.min(n - 1) {
            if l.signatures[n - 1] == l.signatures[n - 1 - p] {
                l.matched[p] += 1;
                if candidate.is_none() && l.matched[p] as usize >= 2 * p {
                    candidate = Some(p as u32);
                }
            } else {
                l.matched[p] = 0;
            }
        }
        if let Some(proof) = l.proof.as_mut() {
            proof.phases.push(Phase {
                heads: true,
                admitted,
                preempted,
                fp,
            });
            if self.cycle < proof.start + proof.period {
                return None;
            }
            let proof = l.proof.take()?;
            if self.group_key(groups, g) == proof.key {
                let generation_step = groups.nodes[g]
                    .iter()
                    .zip(&proof.generation)
                    .map(|(&n, then)| self.generation[n] - then)
                    .collect();
                return Some(Box::new(Frozen {
                    at: self.cycle,
                    phases: proof.phases,
                    generation_step,
                }));
            }
            l.failures = (l.failures + 1).min(16);
            l.next_try = self.cycle.saturating_add(16 << l.failures);
            return None;
        }
        if let Some(period) = candidate
            && self.cycle >= l.next_try
        {
            l.proof = Some(Proof {
                period,
                start: self.cycle,
                key: self.group_key(groups, g),
                generation: groups.nodes[g]
                    .iter()
                    .map(|&n| self.generation[n])
                    .collect(),
                phases: Vec::new(),
            });
        }
        None
    }

    /// Brings every frozen group to the state running every cycle would have left it in:
    /// its absolute numbers (admission and scan-progress cycles written in its last period,
    /// queue generations) move on by the whole periods since it froze, then the cycles left
    /// run for the group alone (their records are already in, replayed, and are dropped).
    ///
    /// # Complexity
    /// O(groups' workloads + cycles left × the group's cycle cost).
    fn catch_up(&mut self, groups: &Groups, modes: &[Mode]) {
        let end = self.cycle;
        let (admitted, preempted) = (self.admitted.len(), self.preempted.len());
        for (g, m) in modes.iter().enumerate() {
            let Mode::Frozen(f) = m else {
                continue;
            };
            let p = f.period();
            let since = end - f.at;
            let (times, left) = (since / p, since % p);
            let shift = times * p;
            let last_start = f.at - p;
            for &w in &groups.wls[g] {
                let wi = w;
                if let Some((_, c, gen_)) = self.last_tried[wi].as_mut()
                    && *c > last_start
                {
                    *c += shift;
                    if let QueueRef::Cq(cq) = self.world.workloads[wi].queue {
                        let node = self.world.cluster_queues[cq].node;
                        if let Ok(i) = groups.nodes[g].binary_search(&node) {
                            *gen_ += f.generation_step[i] * u64::from(times);
                        }
                    }
                }
                if let Some(r) = self.reservations[wi].as_mut()
                    && r.time.1 > last_start
                {
                    r.time.1 += shift;
                }
            }
            for &c in &groups.cqs[g] {
                for k in &mut self.by_cq[c] {
                    if k.2.0.1 > last_start {
                        k.2.0.1 += shift;
                    }
                }
            }
            for (i, &n) in groups.nodes[g].iter().enumerate() {
                self.generation[n] += f.generation_step[i] * u64::from(times);
            }
            self.skipped = self.skipped.max(since);
            if left > 0 {
                for (c, held) in self.held.iter_enumerated_mut() {
                    *held = groups.of_cq[c] != g;
                }
                self.cycle = f.at + shift;
                for _ in 0..left {
                    if !self.run_cycle() {
                        self.cycle += 1;
                    }
                }
                self.admitted.truncate(admitted);
                self.preempted.truncate(preempted);
            }
        }
        self.cycle = end;
    }
}
