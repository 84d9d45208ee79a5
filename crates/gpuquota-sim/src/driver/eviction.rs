//! Evictions that take time (Kueue runs).
//!
//! A preempted workload's pods do not vanish at the instant of the preemption: Kubernetes
//! sends them SIGTERM and kills them after the pod's `terminationGracePeriodSeconds`, and
//! Kueue clears the Workload's quota reservation only once its job is suspended and its pods
//! are gone. This module gives each workload its eviction latency and keeps, per workload,
//! the eviction under way.
//!
//! # The latency of a workload
//! - The annotation `gpuquota.dev/eviction-time` (a Go duration such as `45s` or `2m`) on the
//!   Workload, when present;
//! - else the largest `terminationGracePeriodSeconds` (whole seconds, ≥ 0) of its PodSets'
//!   pod templates, when one states it;
//! - else none: the quota is released at the instant of the preemption.
//!
//! Kubernetes's default grace period is 30 s, but a workload that states neither keeps the
//! instant release: that is the model every scenario written before had, and their results
//! stay as they were. Stating the field (or the annotation) is what turns the latency on,
//! for that workload only. An invalid value is refused when the scenario is read (an
//! `invalid-scenario` error naming the Workload and the field).
//!
//! # While a victim terminates
//! As soon as one workload has a latency, the scheduler holds evictions
//! ([`gpuquota_cohort::Scheduler::hold_evictions`]): a victim is marked `Evicted` and keeps
//! its quota, its devices and its run until its latency has passed; then its run ends as
//! `Preempted` (the run's end is when the pods are gone), its quota is released and it
//! queues again. Its preemptor is not admitted before, issues no second preemption for
//! the same need, and other workloads do not take the freed quota first (the engine's rules,
//! taken from upstream). A victim without a latency is released at once, as before.
//!
//! Only preemptions by the scheduler take time; node failures, drain deadlines, budget stops
//! and `HoldAndDrain` still release at once.

use gpuquota_cohort::World;
use gpuquota_cohort::world::WlId;
use gpuquota_model::diag::Diagnostic;
use gpuquota_model::kueue::Workload;

use crate::scenario::EVICTION_TIME_ANNOTATION;

/// The pod spec field Kubernetes waits before it kills a terminating pod.
const GRACE_FIELD: &str = "terminationGracePeriodSeconds";

/// A workload's eviction latency in ms (`Ok(None)`: none stated), or the error naming the
/// bad field.
///
/// # Errors
/// An annotation that is not a Go duration, or a grace period that is not a whole number
/// of seconds ≥ 0 (or overflows).
pub(crate) fn latency_ms(w: &Workload) -> Result<Option<i64>, Diagnostic> {
    let bad = |field: String, msg: String| {
        Diagnostic::error(crate::scenario::INVALID_SCENARIO, msg).field(field)
    };
    if let Some(s) = w.metadata.annotations.get(EVICTION_TIME_ANNOTATION) {
        return match crate::scenario::duration_ms(s) {
            Some(ms) if ms >= 0 => Ok(Some(ms)),
            _ => Err(bad(
                format!("metadata.annotations[{EVICTION_TIME_ANNOTATION}]"),
                format!("invalid Go duration {s:?} (e.g. 30s, 2m)"),
            )),
        };
    }
    let mut most: Option<i64> = None;
    for (i, ps) in w.spec.pod_sets.iter().enumerate() {
        let Some(v) = ps.template.spec.other.get(GRACE_FIELD) else {
            continue;
        };
        let ms = v
            .as_value()
            .as_i64()
            .filter(|s| *s >= 0)
            .and_then(|s| s.checked_mul(1000));
        match ms {
            Some(ms) => most = Some(most.map_or(ms, |m| m.max(ms))),
            None => {
                return Err(bad(
                    format!("spec.podSets[{i}].template.spec.{GRACE_FIELD}"),
                    format!("invalid {GRACE_FIELD} {}: whole seconds ≥ 0", v.as_value()),
                ));
            }
        }
    }
    Ok(most)
}

/// An eviction under way: the victim keeps its quota until its pods are gone.
pub(crate) struct Terminating {
    /// The preemption's reason.
    pub(crate) reason: String,
    /// Its preemptor.
    pub(crate) by: String,
}

/// Every workload's eviction latency and the evictions under way.
pub(crate) struct Evictions {
    /// Latency per workload, ms (0: released at once).
    latency: Vec<i64>,
    /// The eviction under way per workload.
    pub(crate) terminating: Vec<Option<Terminating>>,
    /// Whether any workload has a latency (the scheduler then holds evictions).
    on: bool,
}

impl Evictions {
    /// The latencies of `world`'s workloads as `model` states them (a value refused when the
    /// scenario was read counts as none).
    ///
    /// # Complexity
    /// O(workloads × (log workloads + PodSets)).
    pub(crate) fn new(model: &gpuquota_model::Model, world: &World) -> Evictions {
        // one pass over the model first: most runs state no latency and build nothing
        if !model
            .workloads
            .values()
            .any(|m| matches!(latency_ms(m), Ok(Some(l)) if l > 0))
        {
            return Evictions {
                latency: Vec::new(),
                terminating: Vec::new(),
                on: false,
            };
        }
        let latency: Vec<i64> = world
            .workloads
            .iter()
            .map(|w| {
                model
                    .workloads
                    .get(&w.key)
                    .and_then(|m| latency_ms(m).ok().flatten())
                    .unwrap_or(0)
            })
            .collect();
        let on = latency.iter().any(|&l| l > 0);
        let terminating = if on {
            (0..latency.len()).map(|_| None).collect()
        } else {
            Vec::new()
        };
        Evictions {
            latency,
            terminating,
            on,
        }
    }

    /// Whether evictions take time in this run.
    pub(crate) fn on(&self) -> bool {
        self.on
    }

    /// `wl`'s latency, ms.
    pub(crate) fn latency(&self, wl: WlId) -> i64 {
        self.latency.get(wl.index()).copied().unwrap_or(0)
    }
}
