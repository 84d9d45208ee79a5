//! The drivers, one per engine, that the kernel ([`crate::kernel`]) runs: `kueue`
//! (`gpuquota-cohort`'s scheduler driven instant by instant), `resourcequota` (namespace
//! ResourceQuotas only) and `kai` (KAI's sessions on `gpuquota-rank`'s live cluster). Each is a per-run state with one method per phase of an
//! instant; what both read and write besides their own state is one context (the scenario,
//! the world, the instances, the warnings, the budgets and the progress), and both are built
//! over the one world that `gpuquota_cohort::Input::from_model` made.

use gpuquota_cohort::World;
use gpuquota_model::ResourceName;
use gpuquota_model::diag::{Diagnostic, Diagnostics};

mod capacity;
pub(crate) mod eviction;
pub mod kai;
mod kueue;
mod nodes;
mod placement;
mod pods_ready;
pub(crate) mod reclaim;
mod resourcequota;
pub(crate) mod retries;

pub(crate) use kueue::run_kueue;

/// Per workload of `world` (in its order), the durations annotation `key` states on the
/// workload `model` holds, read by `parse`; empty lists when no workload states it, and for
/// a value refused when the scenario was read (its error was reported then).
///
/// # Complexity
/// O(workloads × log workloads).
pub(crate) fn annotated_durations(
    model: &gpuquota_model::Model,
    world: &gpuquota_cohort::World,
    key: &str,
    parse: impl Fn(&gpuquota_model::kueue::Workload) -> Result<Vec<i64>, Diagnostic>,
) -> Vec<Vec<i64>> {
    let stated = model
        .workloads
        .values()
        .any(|m| m.metadata.annotations.contains_key(key));
    if !stated {
        return Vec::new();
    }
    world
        .workloads
        .iter()
        .map(|w| {
            model
                .workloads
                .get(&w.key)
                .and_then(|m| parse(m).ok())
                .unwrap_or_default()
        })
        .collect()
}
pub(crate) use resourcequota::run_resource_quota;

use crate::engine::{Counters, HeldBack, NO_END, Outcome, QueueOutcome, WorkloadOutcome};
use crate::scenario::{Engine, Instance, Scenario};

/// What an event loop reads and writes besides its own state: the scenario, the built
/// world, each workload's instance, and the run's warnings, budgets and progress.
pub(crate) struct Context<'a, 'p> {
    pub(crate) sc: &'a Scenario,
    pub(crate) world: &'a World,
    pub(crate) insts: &'a [Option<&'a Instance>],
    pub(crate) warnings: &'a mut Diagnostics,
    pub(crate) budgets: &'a mut Option<crate::budget::Budgets>,
    pub(crate) progress: &'a mut crate::progress::Reporter<'p>,
}

impl Context<'_, '_> {
    /// The run's end: `spec.end`, else the last event (`last_t`), with a warning when
    /// workloads still run then. Charges the budgets up to it and tells the progress.
    fn end_of_run(&mut self, running: bool, last_t: i64, events: u64) -> i64 {
        let end = self.sc.end_ms;
        if let Some(b) = self.budgets.as_mut() {
            b.advance(end.unwrap_or(last_t));
        }
        let end_ms = match end {
            Some(e) => e,
            None => {
                if running {
                    self.warnings.push(Diagnostic::warning(
                        NO_END,
                        "workloads without a gpuquota.dev/runtime run until spec.end, and the scenario has none: the run ends at the last event",
                    ));
                }
                last_t
            }
        };
        self.progress.finish(end_ms, events);
        end_ms
    }

    /// A workload's class and creation time as its outcome shows them.
    fn class_and_created(&self, wl: usize) -> (String, i64) {
        (
            self.insts[wl].map(|x| x.class.clone()).unwrap_or_default(),
            self.insts[wl].map_or(0, |x| x.created_ms),
        )
    }
}

/// The platform a run with a timeline changes: the scenario's timeline over a copy of its
/// model (`None` without a timeline: no copy is made).
///
/// # Complexity
/// O(model size) with a timeline, O(1) without.
fn platform(sc: &Scenario) -> Option<crate::kernel::Platform<'_>> {
    (!sc.timeline.events.is_empty()).then(|| crate::kernel::Platform {
        events: &sc.timeline.events,
        model: sc.model.clone(),
    })
}

/// The engine inputs a run builds after its first, one per rebuild of the platform (a
/// timeline event that changes objects other than by quota numbers, a deleted
/// ClusterQueue that leaves), kept for the whole run because the driver reads the world
/// of the last one. At most as many as [`Worlds::for_scenario`] made room for (a room
/// left empty costs one word).
pub(crate) struct Worlds {
    cells: Vec<std::cell::OnceCell<gpuquota_cohort::Input>>,
    next: std::cell::Cell<usize>,
}

impl Worlds {
    /// Room for the rebuilds of `sc`'s timeline: one per event that changes objects, plus
    /// one per deleted ClusterQueue (it may leave later, once its workloads are gone).
    pub(crate) fn for_scenario(sc: &Scenario) -> Worlds {
        let n: usize = sc
            .timeline
            .events
            .iter()
            .map(|e| {
                usize::from(!e.objects.is_empty())
                    + e.objects
                        .iter()
                        .filter(|o| {
                            matches!(&o.op, crate::timeline::Op::Delete { kind, .. }
                                if *kind == gpuquota_model::Kind::ClusterQueue)
                        })
                        .count()
            })
            .sum();
        Worlds {
            cells: (0..n).map(|_| std::cell::OnceCell::new()).collect(),
            next: std::cell::Cell::new(0),
        }
    }

    /// Keeps `input` for the run; `None` when the room is used up.
    pub(crate) fn add(&self, input: gpuquota_cohort::Input) -> Option<&gpuquota_cohort::Input> {
        let i = self.next.get();
        let cell = self.cells.get(i)?;
        self.next.set(i + 1);
        cell.set(input).ok()?;
        cell.get()
    }
}

/// A timeline event's effect with its object changes listed (the driver fills in the rest).
fn timeline_effect(
    t: i64,
    event: &crate::timeline::Event,
    changes: &crate::timeline::Changes,
) -> crate::engine::TimelineEffect {
    use crate::timeline::Change;
    crate::engine::TimelineEffect {
        index: event.index,
        at_ms: t,
        changes: changes
            .objects
            .iter()
            .map(|c| {
                let how = match c.change {
                    Change::Created => "created",
                    Change::Replaced => "replaced",
                    Change::Deleted => "deleted",
                };
                (c.kind.as_str().to_owned(), c.key.clone(), how)
            })
            .collect(),
        ..crate::engine::TimelineEffect::default()
    }
}

/// A rebuilt world a run cannot follow: the error naming the event's instant and what
/// changed.
fn unfollowable(t: i64, what: &str) -> Diagnostics {
    Diagnostics(vec![
        Diagnostic::error(
            crate::scenario::NOT_SIMULATED,
            format!("a timeline event at {t} ms changes the platform's {what}; this run cannot follow it"),
        )
        .field("spec.timeline"),
    ])
}

/// Whether two worlds hold the same workloads in the same order (a run's histories are
/// indexed by them).
fn same_workloads(a: &World, b: &World) -> bool {
    a.workloads.len() == b.workloads.len()
        && a.workloads
            .iter()
            .zip(b.workloads.iter())
            .all(|(x, y)| x.key == y.key)
}

/// The engine input of a changed platform, through the engine's entry point as the run's
/// first (with `spec.kueue.fairSharing: true` passed on): its world, and the fair-sharing
/// policy its scheduler takes.
///
/// # Errors
/// The engine's refusal.
fn rebuilt_world(
    sc: &Scenario,
    model: &gpuquota_model::Model,
) -> Result<gpuquota_cohort::Input, Diagnostics> {
    crate::count::bump(|c| &mut c.world_builds);
    let options =
        gpuquota_cohort::Options::default().with_fair_sharing(sc.fair_sharing == Some(true));
    gpuquota_cohort::Input::from_model(model, &options)
        .map_err(gpuquota_model::Error::into_diagnostics)
}

/// The pending reason of a workload created at or after the simulation's end.
fn created_after_end() -> (String, String) {
    (
        "Pending".to_owned(),
        "created at or after the simulation's end".to_owned(),
    )
}

/// An engine's run at its end, as [`finish`] reads it to build the outcome.
pub(crate) trait Finish<'a, 'p> {
    /// The engine that ran.
    const ENGINE: Engine;
    /// The context shared with the other engine.
    fn cx(&mut self) -> &mut Context<'a, 'p>;
    /// Where the event loop stopped.
    fn end(&self) -> EndOfRun;
    /// Every workload's history, the runs still live cut at `end_ms`.
    fn workload_outcomes(&mut self, end_ms: i64) -> Vec<WorkloadOutcome>;
    /// Every queue's outcome.
    fn queue_outcomes(&self) -> Vec<QueueOutcome>;
    /// The flavor-resources its runs and queues name when they are not the world's (a
    /// timeline rebuilt it); `None`: the world's.
    fn flavor_resources(&mut self) -> Option<Vec<(String, ResourceName)>> {
        None
    }
    /// Every workload's failed attempts, the runs under way counted up to `end_ms` (empty
    /// when no workload fails).
    fn failures(&mut self, _end_ms: i64) -> Vec<crate::engine::FailureOutcome> {
        Vec::new()
    }
    /// What each timeline event did.
    fn timeline_effects(&mut self) -> Vec<crate::engine::TimelineEffect> {
        Vec::new()
    }
}

/// Where an event loop stopped: what [`finish`] needs of it besides its outcomes.
#[derive(Clone, Debug)]
pub(crate) struct EndOfRun {
    /// Whether a workload still runs.
    pub(crate) running: bool,
    /// The time of the last event, ms since start.
    pub(crate) last_t: i64,
    /// The run's counters.
    pub(crate) counters: Counters,
    /// The victims held back after a second eviction at one instant.
    pub(crate) held_back: Vec<HeldBack>,
    /// The Nodes checked (0: none).
    pub(crate) nodes: u32,
}

/// The outcome of a run: its end ([`Context::end_of_run`]), then every workload's history
/// with the runs still live cut there, then every queue's outcome.
pub(crate) fn finish<'a, 'p: 'a, R: Finish<'a, 'p>>(mut run: R) -> Outcome {
    let mut end = run.end();
    let end_ms = run
        .cx()
        .end_of_run(end.running, end.last_t, end.counters.events);
    let failures = run.failures(end_ms);
    let workloads = run.workload_outcomes(end_ms);
    let held_back = std::mem::take(&mut end.held_back);
    Outcome {
        engine: R::ENGINE,
        end_ms,
        frs: run
            .flavor_resources()
            .unwrap_or_else(|| flavor_resources(run.cx().world, R::ENGINE)),
        workloads,
        queues: run.queue_outcomes(),
        warnings: Vec::new(),
        counters: end.counters,
        held_back,
        nodes: end.nodes,
        timeline: run.timeline_effects(),
        failures,
    }
}

/// The flavor-resources the runs and queues of `engine` name: the world's under Kueue, one
/// pseudo-flavor `""` per resource under ResourceQuota.
pub(crate) fn flavor_resources(world: &World, engine: Engine) -> Vec<(String, ResourceName)> {
    match engine {
        Engine::ResourceQuota => world
            .resources
            .iter()
            .map(|r| (String::new(), r.clone()))
            .collect(),
        Engine::Kueue => world
            .frs
            .iter()
            .map(|&(f, r)| (world.flavors[f].name.clone(), world.resources[r].clone()))
            .collect(),
    }
}
