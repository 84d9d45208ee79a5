//! Queue accounting and the capacity policy: the allocated amounts of every queue (a
//! parent holds its subtree) and the checks a placement must pass at the leaf and every
//! ancestor (limit; deserved for non-preemptible work), with the messages and quota numbers
//! of a failed check. Upstream: `kai-scheduler/KAI-Scheduler:
//! pkg/scheduler/plugins/proportion/capacity_policy` (the proportion plugin's
//! `capacity_policy.go` and `non_preemptible.go`).

use super::*;

/// A failed capacity check: the queue (the leaf or an ancestor) and the resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CapFail {
    /// The queue's limit would be exceeded.
    OverLimit(QueueId, Resource),
    /// Non-preemptible work would exceed the queue's deserved quota.
    NonPreemptible(QueueId, Resource),
}

/// True when `v` is within `cap` (`None`: unlimited).
pub(super) fn unl_le(v: i128, cap: Option<i128>) -> bool {
    cap.is_none_or(|c| v <= c)
}

impl Engine<'_> {
    pub(super) fn account(&mut self, leaf: QueueId, req: Amt, np: bool, add: bool) {
        let of = self.overflow;
        let mut cur = Some(leaf);
        while let Some(q) = cur {
            if add {
                inc_all(&mut self.alloc[q], &req, of);
                if np {
                    inc_all(&mut self.alloc_np[q], &req, of);
                }
            } else {
                dec_all(&mut self.alloc[q], &req, of);
                if np {
                    dec_all(&mut self.alloc_np[q], &req, of);
                }
            }
            cur = self.c.hierarchy.queue(q).parent;
        }
    }

    pub(super) fn params(&self, q: QueueId, r: Resource) -> &crate::division::ResourceParams {
        &self.c.hierarchy.queue(q).resources[r.index()]
    }

    /// `min(L, max(D, FS))`; `None` = unlimited.
    pub(super) fn allocatable(&self, q: QueueId, r: Resource) -> Option<i128> {
        let p = self.params(q, r);
        match p.deserved {
            None => p.limit,
            Some(d) => {
                let a = d.max(self.fs[q][r]);
                Some(p.limit.map_or(a, |l| l.min(a)))
            }
        }
    }

    /// Capacity policy at the leaf and every ancestor.
    ///
    /// # Complexity
    /// O(d) for a leaf at depth d.
    pub(super) fn capacity(&self, leaf: QueueId, req: Amt, np: bool) -> Option<CapFail> {
        self.capacity_freed(leaf, req, np, Amt::ZERO, Amt::ZERO)
    }

    /// Capacity policy at the leaf and every ancestor once `freed` (of which `freed_np` is
    /// non-preemptible) is released in `leaf` (preemption victims, all of the preemptor's
    /// own leaf, so their release counts at the leaf and at every ancestor). Callers pass the
    /// victims' summed requests (an overflow of any sum is recorded, as everywhere in the
    /// session).
    ///
    /// # Complexity
    /// O(d) for a leaf at depth d.
    pub(super) fn capacity_freed(
        &self,
        leaf: QueueId,
        req: Amt,
        np: bool,
        freed: Amt,
        freed_np: Amt,
    ) -> Option<CapFail> {
        let mut cur = Some(leaf);
        while let Some(q) = cur {
            for r in Resource::ALL {
                let of = self.overflow;
                let a = minus(self.alloc[q][r], freed[r], of);
                let anp = minus(self.alloc_np[q][r], freed_np[r], of);
                let p = self.params(q, r);
                if req[r] > 0 && !unl_le(plus(a, req[r], of), p.limit) {
                    return Some(CapFail::OverLimit(q, r));
                }
                if np && req[r] > 0 && !unl_le(plus(anp, req[r], of), p.deserved) {
                    return Some(CapFail::NonPreemptible(q, r));
                }
            }
            cur = self.c.hierarchy.queue(q).parent;
        }
        None
    }

    pub(super) fn cap_fail(&mut self, ji: JobId, f: CapFail, req: Amt) {
        let (reason, q, r) = match f {
            CapFail::OverLimit(q, r) => (Reason::OverLimit, q, r),
            CapFail::NonPreemptible(q, r) => (Reason::NonPreemptibleOverQuota, q, r),
        };
        let p = self.params(q, r);
        let res = r;
        let name = &self.c.hierarchy.queue(q).name;
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

    pub(super) fn details(&self, q: QueueId, r: Resource, req: Amt, np: bool) -> QuotaDetails {
        let p = self.params(q, r);
        QuotaDetails {
            queue: self.c.hierarchy.queue(q).name.clone(),
            resource: r,
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
}
