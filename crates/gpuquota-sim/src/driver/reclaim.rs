//! Partial completion (Kueue runs): a PodSet's pods finishing one by one release their share
//! of the quota, as upstream's `status.reclaimablePods` does (kubernetes-sigs/kueue
//! `pkg/workload/workload.go`, the job integration's `ReclaimablePods`; the scheduler's cache
//! then counts only the pods still to run).
//!
//! # Input
//! `gpuquota.dev/pod-runtimes` on a Workload (or on the Job it is made from) with one
//! PodSet: a comma-separated list of Go durations ≥ 0, one per pod, in pod order
//! (`count` entries). Pod `i` runs `d_i` from the run's start. Without
//! `gpuquota.dev/runtime`, the workload's runtime is the longest `d_i`; with it, that
//! runtime ends the run as before and pods still running then end with it.
//!
//! # Model
//! At each instant where pods finish (before the run's end), the quota of those pods
//! (the run's usage ÷ its admitted pod count × pods finished) leaves the workload's
//! reservation and the cohort tree's inadmissible workloads are requeued, so a waiting
//! workload is admitted as soon as enough pods have finished. With partial admission, the
//! admitted pods are the list's first ones. Limits: the run keeps its whole usage in the
//! report's runs (their GPU-hours count every pod to the end), node devices are freed only
//! when the workload ends, a preempted workload's pods all run again when it is readmitted,
//! and workloads admitted in the input release nothing early.

use gpuquota_cohort::World;
use gpuquota_model::diag::Diagnostic;
use gpuquota_model::kueue::Workload;

/// The annotation listing each pod's runtime.
pub(crate) const POD_RUNTIMES_ANNOTATION: &str = "gpuquota.dev/pod-runtimes";

/// A workload's pod runtimes, ms (`Ok(empty)`: none stated).
///
/// # Errors
/// An entry that is not a Go duration ≥ 0, a Workload with more than one PodSet, or a list
/// whose length is not the PodSet's `count`.
pub(crate) fn pod_runtimes(w: &Workload) -> Result<Vec<i64>, Diagnostic> {
    let Some(s) = w.metadata.annotations.get(POD_RUNTIMES_ANNOTATION) else {
        return Ok(Vec::new());
    };
    let bad = |msg: String| {
        Diagnostic::error(crate::scenario::INVALID_SCENARIO, msg)
            .field(format!("metadata.annotations[{POD_RUNTIMES_ANNOTATION}]"))
    };
    let list = s
        .split(',')
        .map(|p| match crate::scenario::duration_ms(p.trim()) {
            Some(ms) if ms >= 0 => Ok(ms),
            _ => Err(bad(format!(
                "invalid {POD_RUNTIMES_ANNOTATION} entry {:?}: Go durations ≥ 0, comma-separated (e.g. 1h,90m)",
                p.trim()
            ))),
        })
        .collect::<Result<Vec<i64>, Diagnostic>>()?;
    match w.spec.pod_sets.as_slice() {
        [ps] if usize::try_from(ps.count).ok() == Some(list.len()) => Ok(list),
        [ps] => Err(bad(format!(
            "{} pod runtimes for a PodSet of {} pods: one per pod",
            list.len(),
            ps.count
        ))),
        _ => Err(bad(format!(
            "{POD_RUNTIMES_ANNOTATION} needs a Workload with exactly one PodSet"
        ))),
    }
}

/// Every workload's pod runtimes and admitted pod count.
pub(crate) struct PodRuntimes {
    list: Vec<Vec<i64>>,
    /// Pods admitted in the run under way.
    admitted: Vec<u32>,
    on: bool,
}

impl PodRuntimes {
    /// The pod runtimes of `world`'s workloads as `model` states them (a value refused when
    /// the scenario was read counts as none).
    ///
    /// # Complexity
    /// O(workloads × log workloads).
    pub(crate) fn new(model: &gpuquota_model::Model, world: &World) -> PodRuntimes {
        let list = super::annotated_durations(model, world, POD_RUNTIMES_ANNOTATION, pod_runtimes);
        let on = list.iter().any(|l| !l.is_empty());
        if !on {
            return PodRuntimes {
                list: Vec::new(),
                admitted: Vec::new(),
                on,
            };
        }
        let admitted = world
            .workloads
            .iter()
            .map(|w| {
                w.pod_sets
                    .first()
                    .map_or(0, |p| u32::try_from(p.count).unwrap_or(0))
            })
            .collect();
        PodRuntimes { list, admitted, on }
    }

    /// Whether any workload's pods finish one by one.
    pub(crate) fn on(&self) -> bool {
        self.on
    }

    /// `w` was admitted with `count` pods.
    pub(crate) fn admitted(&mut self, w: usize, count: i32) {
        if let Some(a) = self.admitted.get_mut(w) {
            *a = u32::try_from(count).unwrap_or(0);
        }
    }

    /// The instants after `begin` at which some of `w`'s admitted pods finish before the
    /// last of them and before `end` (the run's end, when known), sorted and distinct.
    pub(crate) fn instants(&self, w: usize, begin: i64, end: Option<i64>) -> Vec<i64> {
        let Some(list) = self.list.get(w).filter(|l| !l.is_empty()) else {
            return Vec::new();
        };
        let k = (self.admitted[w] as usize).min(list.len());
        let pods = &list[..k];
        let last = pods.iter().copied().max().unwrap_or(0);
        let mut at: Vec<i64> = pods
            .iter()
            .filter(|&&d| d < last)
            .map(|&d| begin.saturating_add(d))
            .filter(|&t| end.is_none_or(|e| t < e))
            .collect();
        at.sort_unstable();
        at.dedup();
        at
    }

    /// How many of `w`'s admitted pods finish at `t` in a run started at `begin`, and how
    /// many were admitted.
    pub(crate) fn done_at(&self, w: usize, begin: i64, t: i64) -> (i64, i64) {
        let Some(list) = self.list.get(w) else {
            return (0, 0);
        };
        let k = (self.admitted[w] as usize).min(list.len());
        let n = list[..k]
            .iter()
            .filter(|&&d| begin.saturating_add(d) == t)
            .count();
        (n as i64, k as i64)
    }
}
