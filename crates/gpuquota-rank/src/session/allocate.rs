//! The allocate action (`kai-scheduler/KAI-Scheduler: pkg/scheduler/actions/allocate`).

use super::*;

impl Engine<'_> {
    pub(super) fn try_allocate(&mut self, ji: JobId) -> bool {
        let j = self.job(ji);
        let Some(q) = j.queue else {
            return false;
        };
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
            let core: Vec<TaskId> = pending[..gang].to_vec();
            let req = self.job_req(ji, &core);
            if let Some(f) = self.capacity(q, req, np) {
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
                        format_decimal(req[GPU])
                    ));
                    return false;
                }
            }
        }
        for &ti in &pending[gang..] {
            let req = self.task(ji, ti).req;
            if let Some(f) = self.capacity(q, req, np) {
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

    pub(super) fn allocate(&mut self) {
        let lists = self.leaf_lists(|_, _| true);
        self.run_action(
            Step::Allocate,
            lists,
            |_, _| false,
            |e, _, ji| {
                e.memoized(Step::Allocate, ji, |e| {
                    let _ = e.try_allocate(ji);
                });
            },
        );
    }
}
