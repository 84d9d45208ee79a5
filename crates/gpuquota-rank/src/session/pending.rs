//! Why each job is still pending after the session: upstream's unschedulable reasons with
//! the quota numbers behind them.

use super::*;

impl Engine<'_> {
    /// The jobs with pending pods left, with upstream's reason and the numbers behind it.
    ///
    /// # Complexity
    /// O(J · P) for J jobs of P pods; the quota numbers a message ends with are formatted
    /// once per leaf and request (O(log J) to find them again).
    pub(super) fn pending(&self) -> Vec<Pending> {
        let mut out = Vec::new();
        let mut numbers_of: std::collections::BTreeMap<(QueueId, Amt), String> =
            std::collections::BTreeMap::new();
        for (ji, j) in jobs_enumerated(self.c) {
            if j.foreign || !self.tstate[ji].contains(&TState::Pending) {
                continue;
            }
            let (pending, gang) = self.needed_tasks(ji);
            // A job at its minMember with only elastic extras left is running, not pending.
            if gang == 0 {
                continue;
            }
            let take: Vec<TaskId> = pending.iter().copied().take(gang.max(1)).collect();
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
                    let r = Resource::ALL
                        .into_iter()
                        .find(|&r| req[r] > 0)
                        .unwrap_or(GPU);
                    let d = self.details(leaf, r, req, false);
                    let numbers = numbers_of.entry((leaf, req)).or_insert_with(|| format!(
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
                    ));
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
