//! Exact repetition of a run: when the whole scheduling state at the end of a cycle equals
//! the state `p` cycles earlier, every later cycle repeats the last `p` ones (the engine is
//! deterministic and a cycle reads nothing but that state), so [`Scheduler::run`] adds the
//! records of the skipped whole periods at once and runs only the `(bound − cycle) mod p`
//! cycles that are left. The final state and every record are those of running each cycle.
//!
//! This is what makes a run that never converges cheap: a preemption loop (the victim is
//! readmitted ahead of its preemptor and preempted again, as upstream Kueue does at its
//! default feature gates) goes on to the cycle bound, `4 × workloads + 64` cycles.
//!
//! Two steps find a period:
//!
//! 1. A cheap signature of every cycle (its admissions, preemptions and the queues'
//!    fingerprint) and, per candidate period `p ≤` [`MAX_PERIOD`], the number of consecutive
//!    cycles whose signature equals the one `p` cycles before. Once `2p` cycles in a row
//!    agree, `p` is a candidate.
//! 2. The proof: the whole state ([`StateKey`]) is captured, `p` more cycles run as usual,
//!    and the state is captured again. Only when both are equal (not a hash: the values) are
//!    the periods skipped. A failed proof waits longer before the next one, so its cost stays
//!    a small part of the run.
//!
//! What the state holds, and why each part is exact:
//! - the committed usage, the queues (active heaps, inadmissible sets, evicted marks),
//!   the sticky preemptor of every ClusterQueue, each workload's pending reason (it is output)
//!   and the admitted candidate lists;
//! - each reservation with its admission time replaced by the time's rank among the
//!   reservations (the time is only ever compared: [`crate::preempt::Admitted::key`]);
//! - each workload's scan progress with its cycle and queue generation replaced by what the
//!   next nomination tests of them (written in the last cycle; no workload left its queue
//!   since), the only uses of those numbers.
//!
//! Only policies that keep no state of their own between cycles take part
//! ([`Policy::stateless`]: classical ordering and preemption); fair sharing's shares and
//! clocks are not part of the key, so a fair-sharing run runs every cycle.

use super::{AdmittedRecord, LastTried, Pending, Policy, PreemptedRecord, Scheduler};
use crate::queues::Queue;
use crate::tree::{FrId, Usage};
use crate::world::{CqId, WlId};
use gpuquota_model::{Amount, Timestamp};

/// The longest period looked for, in cycles.
pub(crate) const MAX_PERIOD: usize = 1024;

/// A reservation with its admission time as a rank: (ClusterQueue, usage, flavor-resources,
/// time rank, evicted).
type NormalReservation = (CqId, Vec<(FrId, Amount)>, Vec<FrId>, u32, bool);

/// Everything the next cycle reads and the report prints, with absolute cycle numbers and
/// queue generations replaced by the relations the engine tests (see the module docs).
#[derive(Debug, PartialEq)]
pub(crate) struct StateKey {
    usage: Usage,
    reservations: Vec<Option<NormalReservation>>,
    by_cq: Vec<Vec<WlId>>,
    queues: Vec<Queue>,
    sticky: Vec<Option<WlId>>,
    pending: Vec<Option<Pending>>,
    /// (scan progress, written in the last cycle, no workload left its queue since).
    last_tried: Vec<Option<(LastTried, bool, bool)>>,
}

/// A proof in progress: the state at the end of cycle `start`, and the record counts and
/// queue generations then.
pub(crate) struct Proof {
    pub(crate) period: u32,
    pub(crate) start: u32,
    key: StateKey,
    admitted: usize,
    preempted: usize,
    generation: Vec<u64>,
}

/// The period detector of one run (see the module docs).
pub(crate) struct Detector {
    /// Signatures of the cycles run so far.
    signatures: Vec<u64>,
    /// Per period `p` (index), how many consecutive cycles matched the one `p` before.
    matched: Vec<u32>,
    /// Failed proofs so far, and the cycle before which no new proof starts.
    failures: u32,
    next_try: u32,
    proof: Option<Proof>,
}

/// SplitMix64's finalizer, the mixing step of a signature.
fn mix(h: u64, x: u64) -> u64 {
    let mut z = (h ^ x).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Detector {
    pub(crate) fn new() -> Detector {
        Detector {
            signatures: Vec::new(),
            matched: vec![0; MAX_PERIOD + 1],
            failures: 0,
            next_try: 0,
            proof: None,
        }
    }
}

/// What [`Scheduler::observe`] asks the run loop to do.
pub(crate) enum Step {
    /// Run the next cycle.
    Continue,
    /// The run repeats the cycles after the proof's start from now on (proven); skip whole
    /// periods.
    Skip(Box<Proof>),
}

impl<P: Policy> Scheduler<'_, P> {
    /// The whole scheduling state, normalised (see [`StateKey`]).
    ///
    /// # Complexity
    /// O(W log W + usage counters + queued workloads).
    pub(crate) fn state_key(&self) -> StateKey {
        let mut times: Vec<(Timestamp, u32)> =
            self.reservations.iter().flatten().map(|r| r.time).collect();
        times.sort_unstable();
        times.dedup();
        let rank = |t: (Timestamp, u32)| times.partition_point(|&x| x < t) as u32;
        let reservations = self
            .reservations
            .iter()
            .map(|r| {
                r.as_ref().map(|r| {
                    (
                        r.cq,
                        r.usage.clone(),
                        r.uses.clone(),
                        rank(r.time),
                        r.evicted,
                    )
                })
            })
            .collect();
        let last_tried = self
            .last_tried
            .iter()
            .enumerate()
            .map(|(wl, l)| {
                l.as_ref().map(|(l, c, g)| {
                    let node = match self.world.workloads[wl].queue {
                        crate::world::QueueRef::Cq(cq) => {
                            self.world.cluster_queues[cq as usize].node as usize
                        }
                        _ => 0,
                    };
                    (
                        l.clone(),
                        *c == self.cycle,
                        self.generation.get(node).is_some_and(|now| g >= now),
                    )
                })
            })
            .collect();
        StateKey {
            usage: self.usage.clone(),
            reservations,
            by_cq: self
                .by_cq
                .iter()
                .map(|l| l.iter().map(|k| k.4).collect())
                .collect(),
            queues: self.queues.clone(),
            sticky: self.sticky.clone(),
            pending: self.pending.clone(),
            last_tried,
        }
    }

    /// Feeds the cycle just run (its records start at `admitted` and `preempted`; `queues` is
    /// the queues' fingerprint after it) to the detector and says whether the rest of the run
    /// is a proven repetition.
    ///
    /// # Complexity
    /// O([`MAX_PERIOD`] + the cycle's records); a proof step costs one [`Self::state_key`].
    pub(crate) fn observe(
        &self,
        d: &mut Detector,
        admitted: usize,
        preempted: usize,
        queues: (usize, u64),
    ) -> Step {
        let mut h = mix(queues.0 as u64, queues.1);
        for a in &self.admitted[admitted..] {
            h = mix(h, (u64::from(a.wl) << 32) | u64::from(a.cq));
            h = mix(h, u64::from(a.borrowing));
        }
        h = mix(h, u64::MAX);
        for p in &self.preempted[preempted..] {
            h = mix(h, (u64::from(p.wl) << 32) | u64::from(p.preemptor));
            h = mix(h, p.reason as u64);
        }
        d.signatures.push(h);
        let n = d.signatures.len();
        let mut candidate = None;
        for p in 1..=MAX_PERIOD.min(n - 1) {
            if d.signatures[n - 1] == d.signatures[n - 1 - p] {
                d.matched[p] += 1;
                if candidate.is_none() && d.matched[p] as usize >= 2 * p {
                    candidate = Some(p as u32);
                }
            } else {
                d.matched[p] = 0;
            }
        }
        if let Some(proof) = &d.proof {
            if self.cycle < proof.start + proof.period {
                return Step::Continue;
            }
            let Some(proof) = d.proof.take() else {
                return Step::Continue;
            };
            if self.state_key() == proof.key {
                return Step::Skip(Box::new(proof));
            }
            d.failures = (d.failures + 1).min(16);
            d.next_try = self.cycle.saturating_add(16 << d.failures);
            return Step::Continue;
        }
        if let Some(period) = candidate
            && self.cycle >= d.next_try
        {
            d.proof = Some(Proof {
                period,
                start: self.cycle,
                key: self.state_key(),
                admitted: self.admitted.len(),
                preempted: self.preempted.len(),
                generation: self.generation.clone(),
            });
        }
        Step::Continue
    }

    /// Skips the whole periods left before `bound`: the run repeats the `period` cycles
    /// after `start` (proven by [`Self::observe`]), so their records are added again with
    /// their cycles shifted, and every absolute number in the state (the cycle, admission
    /// cycles, scan-progress cycles, queue generations) moves on as running those cycles
    /// would have moved it.
    ///
    /// # Complexity
    /// O(skipped records + W + nodes).
    pub(crate) fn skip_periods(&mut self, proof: &Proof, bound: u32) {
        let (period, start) = (proof.period, proof.start);
        let times = bound.saturating_sub(self.cycle) / period;
        if times == 0 {
            return;
        }
        let admitted: Vec<AdmittedRecord> = self.admitted[proof.admitted..].to_vec();
        let preempted: Vec<PreemptedRecord> = self.preempted[proof.preempted..].to_vec();
        self.admitted.reserve(admitted.len() * times as usize);
        self.preempted.reserve(preempted.len() * times as usize);
        for k in 1..=times {
            for a in &admitted {
                let mut a = a.clone();
                a.cycle += k * period;
                self.admitted.push(a);
            }
            for p in &preempted {
                let mut p = p.clone();
                p.cycle += k * period;
                self.preempted.push(p);
            }
        }
        let shift = times * period;
        let gen_shift: Vec<u64> = self
            .generation
            .iter()
            .zip(&proof.generation)
            .map(|(now, then)| (now - then) * u64::from(times))
            .collect();
        for (wl, l) in self.last_tried.iter_mut().enumerate() {
            if let Some((_, c, g)) = l
                && *c > start
            {
                *c += shift;
                if let crate::world::QueueRef::Cq(cq) = self.world.workloads[wl].queue {
                    *g += gen_shift[self.world.cluster_queues[cq as usize].node as usize];
                }
            }
        }
        for r in self.reservations.iter_mut().flatten() {
            if r.time.1 > start {
                r.time.1 += shift;
            }
        }
        for list in &mut self.by_cq {
            for k in list.iter_mut() {
                if k.2.0.1 > start {
                    k.2.0.1 += shift;
                }
            }
        }
        for (g, s) in self.generation.iter_mut().zip(&gen_shift) {
            *g += s;
        }
        self.cycle += shift;
        self.skipped += shift;
    }
}
