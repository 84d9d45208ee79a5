//! The stale gang eviction action (`kai-scheduler/KAI-Scheduler:
//! pkg/scheduler/actions/stalegangeviction`).

use super::*;

impl Engine<'_> {
    /// Evicts the gangs below minMember for longer than their staleness grace.
    ///
    /// # Complexity
    /// O(T) for T pods; allocates only for a job it evicts.
    pub(super) fn stale_gangs(&mut self) {
        for (ji, j) in jobs_enumerated(self.c) {
            if self.evicted_job[ji] {
                continue;
            }
            if j.foreign {
                continue;
            }
            let running = self.tstate[ji]
                .iter()
                .filter(|s| **s == TState::Running)
                .count();
            // KAI counts active *used* pods (`GetNumActiveUsedTasks`): releasing and stuck
            // pods still hold the gang together; only running ones are evicted.
            let used = running
                + self.tstate[ji]
                    .iter()
                    .filter(|s| matches!(s, TState::Releasing | TState::Stuck))
                    .count();
            // Checked first: most jobs hold their gang, and the check needs no allocation.
            if running == 0 || used >= j.min_member {
                continue;
            }
            let succeeded = j.tasks.iter().any(|t| t.status == TaskStatus::Succeeded);
            if succeeded {
                continue;
            }
            let active = tasks_where(&self.tstate[ji], |s| *s == TState::Running);
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
            if minus(self.c.now.unix_nanos(), since.unix_nanos(), self.overflow) >= grace {
                self.evict(ji, &active, Action::StaleGang, None);
            }
        }
    }
}
