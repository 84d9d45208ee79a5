//! The advisor: from a simulated month to a decision. An `Advice` names a scenario, knobs
//! (the `gpuquota sim sweep --set` paths, each with a domain), constraints and objectives;
//! [`advise`] returns the Pareto front of the configurations meeting every constraint, the
//! recommended one, and what each knob changes around it.
//!
//! # Input
//! ```yaml
//! apiVersion: gpuquota.dev/v1alpha1
//! kind: Advice
//! metadata: {name: seed-quotas}
//! spec:
//!   scenario: kueue.yaml
//!   vary:
//!   - {path: clusterQueues.batch.h200-nvl.nvidia.com/gpu.borrowingLimit, values: 0..8}
//!   - {path: clusterQueues.*.rtx-pro-6000.nvidia.com/gpu.nominalQuota, split: 14}
//!   - {path: nodes.h200.count, values: 1..2, costPerMonth: "24000"}
//!   constraints:
//!   - p95TimeToAdmission{class=inference} <= 1m
//!   - budget{name=batch-monthly} not exceeded
//!   objectives:
//!   - minimize: cost
//!   - maximize: utilisation{cardType=H200}
//! ```
//! - `values`: scalars, or `A..B` (every integer from A to B); `split: N` (with `step`,
//!   default 1) over a path whose ClusterQueue segment is `*`: every way of sharing N among
//!   the ClusterQueues that have that quota, in non-negative multiples of `step`, so every
//!   configuration's shares sum to the pool (C(N/step + k − 1, k − 1) of them for k queues).
//! - `costPerMonth`: the price of one unit of the knob (a decimal in the bill's currency);
//!   a configuration's `cost` is the bill plus, for every priced knob, the price × (its
//!   value − the scenario's value): the scenario's value is 1 for `nodes.NODE.count` and 0
//!   for other paths. Money is summed in integer minor units (cents).
//! - Metrics, constraints and their units: [`metric`] (the one list).
//!
//! # Search
//! The grid is the product of the knobs' domains (at most [`spec::MAX_POINTS`]). The search
//! returns every configuration's figures exactly as the exhaustive sweep of the grid would,
//! while simulating far fewer runs where the platform's structure allows:
//!
//! 1. **Decomposition.** Two ClusterQueues can affect each other only through a shared
//!    cohort tree (borrowing, lending, reclaim, fair sharing) or shared Nodes (a flavor of
//!    each selects a common Node, or they share a flavor; without any Node, as in Kueue's
//!    perf-generator configs, only quota limits admission and a shared flavor does not
//!    couple). Knobs are grouped into
//!    components whose ClusterQueues cannot affect another component's; a knob of the
//!    whole scenario (a `spec` path such as `kueue.fairSharing`) joins everything. Each
//!    component's sub-grid is simulated with the other knobs as the scenario writes them,
//!    plus the scenario itself: Σ over components of Π of their domains, instead of
//!    Π over all knobs. A configuration's figures are then assembled without simulating
//!    it: every workload (its wait, its preempted and used GPU-time) and every queue-scoped
//!    budget from the run of the component owning its ClusterQueue, the rest from the
//!    scenario's run; the bill and the card counts as the scenario's plus each component's
//!    change. Since the figures are sums and percentiles over workloads, the assembled
//!    figures equal those of the configuration's own run whenever the components are
//!    independent.
//! 2. **Check.** Independence is checked on every run: a component's run must leave every
//!    workload and budget outside its queues exactly as the scenario's run has it, and submit
//!    the same workloads. When one does not (a budget scoped to several queues' namespace, a
//!    node shared through labels the grouping did not see), the decomposition is dropped
//!    and the whole grid is simulated; the output's `search.note` says why.
//! 3. **Front.** With every configuration's figures known, the configurations meeting every
//!    constraint are filtered and the Pareto front over the objectives is computed exactly
//!    (pairwise dominance); configurations with identical objective figures are one row,
//!    the one closest to the scenario as written, with `alike` counting the others. The
//!    recommendation is the feasible configuration first by the objectives in order, then
//!    closest to the scenario as written: fewest knobs changed, then the least summed
//!    change of the numbers it sets (a split's shares each), then grid order. So when
//!    several configurations are equally good, the advice changes the least.
//!
//! Where the structure does not hold: a KAI cluster is one pool (above); a cohort shares one pool, so knobs of ClusterQueues
//! in one cohort are simulated together (the seed platform's five queues are one cohort, so
//! its grid is simulated whole); waits are **not** assumed monotone in a quota — with
//! preemption, a larger quota of one queue can lengthen another's wait in the same cohort,
//! and a larger borrowing limit can make a borrower's work be preempted more — so no point
//! is skipped on a monotonicity argument, and the front is exact, not an estimate.
//!
//! Runs are simulated in parallel (rayon), each deterministic; the assembly and the front
//! are in grid order, so the output does not depend on the thread count. The simulations
//! can also be split among machines ([`shard`]: `--shard I/N`, `--merge`, `--emit-job`),
//! with the same output byte for byte.
//!
//! Knobs are the sweep's model edits (`gpuquota_sim::sweep`'s module docs, the one list of
//! paths): ClusterQueue quotas and fair-sharing weights, Cohort fair-sharing weights,
//! ResourceQuota caps (`resourceQuotas.NAMESPACE.NAME.hard.RESOURCE`) and Node counts, or
//! any `spec` path of the scenario; for a KAI scenario, the fields of its Queues as KAI's
//! Queue CRD (`scheduling.run.ai/v2`) names them:
//!
//! | knob | sets | value |
//! |---|---|---|
//! | `queues.QUEUE.RESOURCE.quota` | `spec.resources.RESOURCE.quota` (deserved) | decimal ≥ 0, or `-1` (unlimited) |
//! | `queues.QUEUE.RESOURCE.limit` | `spec.resources.RESOURCE.limit` (hard cap) | decimal ≥ 0, or `-1` (unlimited) |
//! | `queues.QUEUE.RESOURCE.overQuotaWeight` | `spec.resources.RESOURCE.overQuotaWeight` | decimal ≥ 0 |
//! | `queues.QUEUE.priority` | `spec.priority` | whole number |
//!
//! `RESOURCE` is `gpu` (devices), `cpu` (millicores) or `memory` (megabytes), as in the CRD;
//! `queues.*.RESOURCE.FIELD` with `split: N` shares N among the leaf Queues (those no Queue
//! names as its parent) that set that field. `nodes.NODE.count` applies to KAI's Nodes too;
//! Kueue's paths on a KAI scenario, and `queues.` paths on a Kueue one, are refused by name.
//!
//! **KAI scenarios** are run through the simulator's public API (`Simulation::from_model`
//! with the scenario's settings, then `simulate`), and measured by the same metrics
//! ([`metric`], which says what each means for a KAI run). Their grid is one component,
//! simulated whole: each KAI session divides the whole cluster among all queues (deserved
//! quota first, the rest by over-quota weight), so any queue's knob can move every
//! queue's share and no decomposition holds. The recommendation's patch
//! ([`output::patch_yaml_of`]: the changed Queues, `scheduling.run.ai/v2`), `sim diff`,
//! plot and page are made as for Kueue ([`gpuquota_sim::diff::diff_runs`]).

pub mod metric;
pub mod output;
pub mod search;
pub mod seed;
pub mod shard;
pub mod spec;

use gpuquota_model::diag::{Diagnostic, Diagnostics};
use gpuquota_sim::sweep::{Evaluator, SyncReadFn};

pub use output::{Advice, Row, SearchSummary};
pub use search::Options;
pub use spec::{Plan, parse};

/// Diagnostic code of an advice that does not apply.
pub const INVALID_ADVICE: gpuquota_model::diag::Code =
    gpuquota_model::diag::Code::new("invalid-advice");

/// The queues a `*` path names, each with its concrete path, in name order: for
/// `clusterQueues.*.REST` the ClusterQueues whose quota `REST` names; for KAI's
/// `queues.*.RESOURCE.FIELD` the leaf Queues (no Queue names them as its parent) whose
/// `spec.resources.RESOURCE.FIELD` is set.
pub fn split_queues(model: &gpuquota_model::Model, path: &str) -> Vec<(String, String)> {
    if let Some(rest) = path.strip_prefix("queues.*.") {
        let parents: std::collections::BTreeSet<&str> = model
            .queues
            .values()
            .filter_map(|q| q.spec.parent_queue.as_deref())
            .collect();
        let Some((resource, field)) = rest.split_once('.') else {
            return Vec::new();
        };
        return model
            .queues
            .iter()
            .filter(|(name, _)| !parents.contains(name.as_str()))
            .filter(|(_, q)| {
                let r = q.spec.resources.as_ref().and_then(|r| match resource {
                    "gpu" => r.gpu.as_ref(),
                    "cpu" => r.cpu.as_ref(),
                    "memory" => r.memory.as_ref(),
                    _ => None,
                });
                r.is_some_and(|r| match field {
                    "quota" => r.quota.is_some(),
                    "limit" => r.limit.is_some(),
                    "overQuotaWeight" => r.over_quota_weight.is_some(),
                    _ => false,
                })
            })
            .map(|(name, _)| (name.clone(), format!("queues.{name}.{rest}")))
            .collect();
    }
    let Some(rest) = path.strip_prefix("clusterQueues.*.") else {
        return Vec::new();
    };
    model
        .cluster_queues
        .keys()
        .filter_map(|cq| {
            let p = format!("clusterQueues.{cq}.{rest}");
            let mut m = model.clone();
            gpuquota_sim::sweep::set_cluster_queue(&mut m, &p, "0")
                .ok()
                .map(|()| (cq.clone(), p))
        })
        .collect()
}

/// A scenario read for advice: its evaluator and the model as written.
pub struct Prepared<'a> {
    /// Loads and simulates configurations.
    pub evaluator: Evaluator<'a>,
    /// The scenario as written, when it is Kueue's or ResourceQuota's (`None` for KAI's:
    /// its configurations are run with [`Evaluator::run_kai`]).
    pub scenario: Option<gpuquota_sim::Scenario>,
    /// The objects of the scenario as written (of either engine): what the knobs edit.
    pub model: gpuquota_model::Model,
}

/// Reads the scenario `text` (display name `name`, file stem `stem`; `read` loads the
/// files it names).
///
/// # Errors
/// As [`Evaluator::load`].
pub fn prepare<'a>(
    name: &str,
    text: &str,
    stem: &str,
    read: &'a SyncReadFn<'a>,
) -> Result<Prepared<'a>, Diagnostics> {
    let evaluator = Evaluator::new(name, text, stem, read)?;
    if evaluator.is_kai() {
        let model = evaluator.load_kai(&[])?.model().clone();
        return Ok(Prepared {
            evaluator,
            scenario: None,
            model,
        });
    }
    let scenario = evaluator.load(&[])?;
    Ok(Prepared {
        evaluator,
        model: scenario.model.clone(),
        scenario: Some(scenario),
    })
}

/// Runs the advice `plan` on the prepared scenario (the crate docs' method).
///
/// # Errors
/// A knob that does not apply (the diagnostics name the configuration), a metric the
/// scenario has no figure for (a class, budget or card type it does not have, `cost`
/// without metering), a thread pool that cannot start.
///
/// # Complexity
/// (Σ over components of Π of their domains) simulations, spread over the threads, then
/// O(points² × objectives) for the front.
pub fn advise(
    plan: &Plan,
    prepared: &Prepared<'_>,
    opts: &Options<'_>,
) -> Result<Advice, Diagnostics> {
    let ev = search::evaluate(plan, &prepared.evaluator, &prepared.model, opts)?;
    let current = current_values(plan, &prepared.model);
    let advice = output::assemble(plan, &ev, &current)?;
    Ok(advice)
}

/// Each knob's value in the scenario as written (its index in the knob's domain): the value
/// whose edits leave the model unchanged; `None` when no value does, or for a `spec` path.
pub fn current_values(plan: &Plan, model: &gpuquota_model::Model) -> Vec<Option<usize>> {
    plan.knobs
        .iter()
        .map(|k| {
            (0..k.settings.len()).find(|&v| {
                let mut m = model.clone();
                k.settings[v].iter().all(|(p, x)| {
                    gpuquota_sim::sweep::is_model_edit(p)
                        && gpuquota_sim::sweep::set_model(&mut m, p, x).is_ok()
                }) && m == *model
            })
        })
        .collect()
}

fn refuse(m: String) -> Diagnostics {
    Diagnostics(vec![Diagnostic::error(INVALID_ADVICE, m)])
}
