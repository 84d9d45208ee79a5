//! Failed runs and the Job controller's retries (Kueue runs).
//!
//! # Input
//! - `gpuquota.dev/fail-after` on a Workload (or on the Job it is made from): a
//!   comma-separated list of Go durations > 0, one per attempt of the job's pods: attempt
//!   `k` (counted from 1 over the workload's whole life) fails that long after it started,
//!   unless its runtime ends first; attempts past the list succeed. `1h` alone: the first
//!   attempt fails after 1 h and the second runs to completion; `1h,1h,1h`: three failures.
//! - The Job's `spec.backoffLimit` (Kubernetes' default 6) for a Workload made from a
//!   `batch/v1` Job in the cluster files; a Workload written as such has no Job controller
//!   to retry it, so its limit is 0.
//!
//! # Model
//! A failed pod is replaced by the Job controller within the same admitted Workload:
//! Kueue does not see pod failures, the Workload keeps its quota and stays admitted, and the
//! job's pods start again after the controller's pod-failure back-off, 10 s doubling with
//! each failure and capped at 10 min (kubernetes/kubernetes `pkg/controller/job/
//! job_controller.go`, `DefaultJobPodFailureBackOff`, `MaxJobPodFailureBackOff`; the
//! Kubernetes documentation's "six minutes" is older). The new attempt starts its runtime
//! over. When the failures exceed `backoffLimit`, the Job fails, and Kueue's job
//! reconciler sets the Workload's `Finished` condition with reason `Failed`
//! (kubernetes-sigs/kueue `pkg/controller/jobframework/reconciler.go`,
//! `pkg/controller/jobs/job/job_controller.go` `Finished`): the run ends `Finished` at the
//! last failure and its quota is released; the workload's failure record says it failed.
//! A preemption ends the attempt under way without a failure; the next run goes on with
//! the next attempt.
//!
//! # Report
//! Per workload with a failure (JSON `failures[]`): failed attempts, retries (the failed
//! attempts the Job controller replaced), whether the Job failed (and when), and the lost
//! GPU-hours: each failed attempt's duration × the `nvidia.com/gpu` its run held.

use std::collections::BTreeMap;

use gpuquota_cohort::World;
use gpuquota_model::Model;
use gpuquota_model::diag::Diagnostic;
use gpuquota_model::kueue::Workload;

use crate::engine::FailureOutcome;

/// The annotation listing how long each attempt runs before it fails.
pub(crate) const FAIL_AFTER_ANNOTATION: &str = "gpuquota.dev/fail-after";

/// Kubernetes' default `backoffLimit` of a Job.
pub(crate) const DEFAULT_BACKOFF_LIMIT: u32 = 6;

/// The Job controller's first pod-failure back-off, ms.
const FIRST_BACKOFF_MS: i64 = 10_000;

/// Its cap, ms.
const MAX_BACKOFF_MS: i64 = 600_000;

/// The pod-failure back-off after the `failures`-th failure (1-based), ms: 10 s × 2^(n−1),
/// at most 10 min.
pub(crate) fn backoff_ms(failures: u32) -> i64 {
    let shift = failures.saturating_sub(1).min(16);
    (FIRST_BACKOFF_MS << shift).min(MAX_BACKOFF_MS)
}

/// A workload's attempt durations before failure (`Ok(empty)`: none stated).
///
/// # Errors
/// An entry that is not a Go duration > 0.
pub(crate) fn fail_after(w: &Workload) -> Result<Vec<i64>, Diagnostic> {
    let Some(s) = w.metadata.annotations.get(FAIL_AFTER_ANNOTATION) else {
        return Ok(Vec::new());
    };
    s.split(',')
        .map(|p| match crate::scenario::duration_ms(p.trim()) {
            Some(ms) if ms > 0 => Ok(ms),
            _ => Err(Diagnostic::error(
                crate::scenario::INVALID_SCENARIO,
                format!(
                    "invalid {FAIL_AFTER_ANNOTATION} entry {:?}: Go durations > 0, comma-separated (e.g. 30m,1h)",
                    p.trim()
                ),
            )
            .field(format!("metadata.annotations[{FAIL_AFTER_ANNOTATION}]"))),
        })
        .collect()
}

/// The `backoffLimit` of every Workload made from a Job, by Workload key.
fn job_limits(model: &Model) -> BTreeMap<String, u32> {
    let mut out = BTreeMap::new();
    for obj in model.workload_objects.values() {
        if obj.kind != gpuquota_model::workloads::ObjectKind::Job {
            continue;
        }
        let limit = obj
            .spec
            .as_value()
            .get("backoffLimit")
            .and_then(serde_json::Value::as_u64)
            .map_or(DEFAULT_BACKOFF_LIMIT, |l| {
                u32::try_from(l).unwrap_or(u32::MAX)
            });
        let name = gpuquota_model::workloads::names::workload_name(
            "Job",
            "batch",
            &obj.metadata.name,
            obj.metadata.uid.as_deref().unwrap_or(""),
        );
        out.insert(format!("{}/{name}", obj.namespace()), limit);
    }
    out
}

/// A failure planned for the run under way.
struct Planned {
    /// When the attempt fails, ms.
    at: i64,
    /// How long it ran, ms.
    ran: i64,
    /// Whether this failure fails the Job.
    last: bool,
}

/// Every workload's attempts, limits and failures.
pub(crate) struct Retries {
    fails: Vec<Vec<i64>>,
    limit: Vec<u32>,
    /// The failures planned for each run under way.
    planned: Vec<Vec<Planned>>,
    /// What happened so far, per workload.
    record: Vec<FailureOutcome>,
    on: bool,
}

impl Retries {
    /// The attempts of `world`'s workloads as `model` states them (a value refused when the
    /// scenario was read counts as none).
    ///
    /// # Complexity
    /// O(workloads × log workloads + Jobs).
    pub(crate) fn new(model: &Model, world: &World) -> Retries {
        let fails = super::annotated_durations(model, world, FAIL_AFTER_ANNOTATION, fail_after);
        let on = fails.iter().any(|f| !f.is_empty());
        if !on {
            return Retries {
                fails: Vec::new(),
                limit: Vec::new(),
                planned: Vec::new(),
                record: Vec::new(),
                on,
            };
        }
        let limits = job_limits(model);
        let limit = world
            .workloads
            .iter()
            .map(|w| limits.get(&w.key).copied().unwrap_or(0))
            .collect();
        let n = fails.len();
        Retries {
            fails,
            limit,
            planned: (0..n).map(|_| Vec::new()).collect(),
            record: vec![FailureOutcome::default(); n],
            on,
        }
    }

    /// Whether any workload fails in this run.
    pub(crate) fn on(&self) -> bool {
        self.on
    }

    /// Plans the run of `w` starting at `begin` with `left` ms of runtime (`None`: until the
    /// end): its attempts' failures and back-offs. Returns when the run ends (its
    /// completion, or the Job's failure), `None` when it runs until the end.
    pub(crate) fn plan(&mut self, w: usize, begin: i64, left: Option<i64>) -> Option<i64> {
        if !self.on || self.fails[w].is_empty() {
            return left.map(|l| begin.saturating_add(l));
        }
        let mut planned = Vec::new();
        let (mut t, mut failures) = (begin, self.record[w].failed_attempts);
        let end = loop {
            let next = self.fails[w].get(failures as usize).copied();
            match next {
                Some(f) if left.is_none_or(|l| f < l) => {
                    t = t.saturating_add(f);
                    failures += 1;
                    let last = failures > self.limit[w];
                    planned.push(Planned {
                        at: t,
                        ran: f,
                        last,
                    });
                    if last {
                        break Some(t);
                    }
                    t = t.saturating_add(backoff_ms(failures));
                }
                _ => break left.map(|l| t.saturating_add(l)),
            }
        };
        self.planned[w] = planned;
        end
    }

    /// The run of `w` ended at `t` (completed, failed or preempted) holding `gpus` GPUs:
    /// the failures planned up to `t` happened. Returns whether the Job failed.
    pub(crate) fn commit(&mut self, w: usize, t: i64, gpus: i64) -> bool {
        if !self.on {
            return false;
        }
        let mut failed = false;
        for p in std::mem::take(&mut self.planned[w]) {
            if p.at > t {
                break;
            }
            let r = &mut self.record[w];
            r.failed_attempts += 1;
            r.lost_gpu_ms = r.lost_gpu_ms.saturating_add(p.ran.saturating_mul(gpus));
            if p.last {
                r.failed_ms = Some(p.at);
                failed = true;
            } else {
                r.retries += 1;
            }
        }
        failed
    }

    /// Every workload's record (empty when no workload fails).
    pub(crate) fn outcomes(&self) -> Vec<FailureOutcome> {
        self.record.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::backoff_ms;

    /// 10 s, 20 s, 40 s, … capped at 600 s from the 7th failure (10 × 2⁶ = 640 s).
    #[test]
    fn backoff_doubles_from_ten_seconds_to_ten_minutes() {
        let got: Vec<i64> = (1..=8).map(backoff_ms).collect();
        assert_eq!(
            got,
            [
                10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 600_000, 600_000
            ]
        );
        assert_eq!(backoff_ms(400), 600_000);
    }
}
