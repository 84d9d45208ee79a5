//! The KAI mode: KAI Scheduler's scheduling sessions over virtual time, decided by
//! `gpuquota-rank`'s session on one live cluster, with time-based fairshare fed from the
//! simulated usage.
//!
//! ```
//! use gpuquota_sim::{Mode, Simulation, simulate};
//!
//! // KAI's time-based-fairshare simulator config, as its simulator reads it.
//! let config = "
//! Cycles: 64
//! WindowSize: 16
//! HalfLifePeriod: 8
//! Nodes: [{GPUs: 8, Count: 1}]
//! Queues:
//! - {Name: dept, Parent: \"\"}
//! - {Name: a, Parent: dept}
//! - {Name: b, Parent: dept}
//! Jobs:
//!   a: {GPUs: 8, NumPods: 1, NumJobs: 10}
//!   b: {GPUs: 8, NumPods: 1, NumJobs: 10}
//! ";
//! let path = std::env::temp_dir().join(format!("gpuquota-kai-doc-{}.yaml", std::process::id()));
//! std::fs::write(&path, config).expect("written");
//! let sim = Simulation::from_files(&path).expect("valid config");
//! std::fs::remove_file(&path).ok();
//! assert_eq!(sim.mode(), Mode::Kai);
//! let out = simulate(&sim).expect("runs").into_kai().expect("a KAI report");
//! let csv = out.to_csv();
//! assert!(csv.starts_with("Time,QueueID,Allocation,FairShare\n0,dept,8.000000,8.000000\n"));
//! assert_eq!(csv.lines().count(), 1 + 64 * 3);
//! // The node changes hands: both queues get it in turn.
//! let a = &out.queues.iter().find(|q| q.name == "a").expect("queue a").allocated;
//! assert!(a.contains(&8.0) && a.contains(&0.0));
//! ```
//!
//! # Two inputs
//!
//! **A `Simulation` with `spec.engine: kai`** (the scenario of the crate docs, plus):
//!
//! ```yaml
//! spec:
//!   engine: kai
//!   cluster: [cluster.yaml]          # Nodes, Queues, PriorityClasses, PodGroups, Pods, Jobs…
//!   start: "2026-04-01T00:00:00Z"
//!   end: "2026-04-02T00:00:00Z"      # optional: default, when nothing is left to do
//!   resume: false                    # true: an evicted job keeps the work done
//!   kai:
//!     sessionInterval: 1s            # KAI's schedule-period (default 1s)
//!     bindLatency: 0s                # an allocated pod starts this long after its session
//!     kValue: 1                      # the proportion plugin's kValue (default 1.0)
//!     usage:                         # time-based fairshare; absent: off (usage 0)
//!       windowType: sliding          # sliding (default) | tumbling | cron
//!       windowSize: 168h             # default one week
//!       halfLifePeriod: 24h          # default off
//!       tumblingWindowStartTime: "2026-04-01T00:00:00Z"   # tumbling only
//!       cronString: "0 0 * * MON"    # cron only
//!       fetchInterval: 1m            # how often the usage is read (KAI's default 1m)
//!       queryResolution: 1m          # the sampling step (KAI's default 1m)
//!   workloads:
//!   - file: jobs.yaml
//!   - trace: {format: helios, file: cluster_log.csv}   # a public trace, into leaf Queues ([`crate::trace`])
//! ```
//!
//! The job unit is KAI's: a PodGroup with its pods, a pod without one (a one-pod job, as
//! KAI's default grouper makes it), and every workload object KAI's pod grouper turns into
//! PodGroups (batch/v1 Jobs, PyTorchJobs, …; see `gpuquota_model::workloads`). The queue,
//! priority, preemptibility (priority ≥ 100 is non-preemptible in KAI's default build) and
//! minMember are read as `gpuquota kai schedule` reads them. Per job, on the PodGroup (which
//! copies its top owner's annotations), else on its first pod: `gpuquota.dev/runtime` (Go
//! duration; without it the job runs until the end), `gpuquota.dev/repeat` (a copy
//! `<name>-<k>` of the PodGroup and its pods every period until `end`) and
//! `gpuquota.dev/class`. The arrival is the PodGroup's (else the pod's)
//! `creationTimestamp`, default `start`. Pod phases and nodes in the input are not read:
//! every pod starts pending at its job's arrival.
//!
//! **KAI's time-based-fairshare simulator config, unchanged**
//! (kai-scheduler/KAI-Scheduler: `cmd/time-based-fairshare-simulator`, read as
//! `pkg/env-tests/timeaware/timeaware.go` reads it): top-level `Cycles` (default 100),
//! `WindowSize` (cycles, default 5), `HalfLifePeriod` (cycles, default 0 = no decay),
//! `KValue` (default 1.0), `Nodes` (`GPUs`, `Count`), `Queues` (`Name`, `Parent` — empty
//! for a top-level department —, `Priority` default 100, `DeservedGPUs` default 0, `Weight`
//! default 1; GPU limit unlimited, CPU and memory with Go's zero values, as upstream replaces
//! the whole resources block), `Jobs` (per queue: `NumJobs` PodGroups of `NumPods` pods of
//! `GPUs` GPUs, minMember 1, no runtime). Field names match in any letter case and `null` is
//! unset, as upstream's YAML → JSON decoding does. **One cycle** is upstream's loop body:
//! the scheduler runs (a session), then the queues' allocation is appended to the fake usage
//! database's history (one sample) and the last session's fair shares are recorded; the
//! window is the last `WindowSize` samples and the decay `0.5^(age/HalfLifePeriod)` in
//! samples (`pkg/scheduler/cache/usagedb/fake/fake_with_history.go`). Here a cycle is one
//! session of 10 ms virtual time (upstream sleeps 10 ms per cycle), so the JSON's times are
//! upstream's wall-clock times; the CSV counts cycles.
//!
//! # Semantics
//!
//! - **Order at an instant**: completions (resources freed), then arrivals; a session runs at
//!   every multiple of `sessionInterval` (time 0 included) and sees what arrived up to then.
//! - **A session** is the engine's session (`gpuquota_rank::run`) (allocate, consolidation, reclaim,
//!   preempt, stale gangs) on the live cluster ([`gpuquota_rank::live`]): the decisions
//!   are the engine's, nothing is re-decided here. Evictions are applied first (the victims'
//!   pods are deleted at once and recreated pending by their controller, as KAI's binder and
//!   the Job controller do with a grace period of 0), then allocations (pipelined ones too:
//!   their resources were just freed). A moved job (consolidation) ends its run `Evicted`
//!   and starts a new one on its new nodes in the same session. An evicted job's runtime
//!   starts over (unless `resume`).
//! - **Time-based fairshare** ([`usage`]): the queues' allocation (a parent holds its
//!   subtree) is sampled every `queryResolution`; every `fetchInterval` the usage is read over
//!   the window with the half-life decay and normalized by the capacity, and the sessions
//!   until the next read divide with it: the over-quota weight of a queue becomes
//!   `max(0, w + kValue·(w − usage))` for its share `w` of its siblings' weights
//!   (`gpuquota_rank::division`, KAI's `resource_division`).
//! - **Preemptible and non-preemptible work** behave as KAI's session makes them behave:
//!   non-preemptible jobs only within deserved quota (at every level), over-quota resources
//!   only to preemptible jobs, and reclaim returns deserved quota to a queue below it.
//! - **Skipped sessions**: a session whose inputs equal the previous one's (no arrival, no
//!   completion, no decision in the previous session, the same fair shares, no time-dependent
//!   rule such as min-runtime, preemption delay or staleness grace) decides nothing, so it is
//!   not run; its series points are still recorded.
//! - A [`SessionHook`] is asked before every session whether a queue may
//!   start new work; the jobs of a closed queue stay pending and invisible to the session.
//! - **Namespace ResourceQuotas** in the cluster files apply as under the other controls
//!   (the API server enforces them whatever the scheduler): before every session, a pending
//!   job whose pods do not exist yet gets them if every unscoped ResourceQuota of its
//!   namespace has room for their requests (`requests.<extended resource>`, such as
//!   `requests.nvidia.com/gpu` or a MIG instance, and `pods`) beside the pods of the
//!   namespace's other unfinished jobs; otherwise it stays pending, invisible to the
//!   session, with reason `Forbidden` and the API server's message (`exceeded quota: …`),
//!   and is tried again before the next session, in key order. CPU and memory keys and
//!   scoped quotas are not applied. Tested in `tests/all/kai_caps.rs`.
//! - **GPU-hour budgets** (`Budget` objects in the cluster files) go through the same
//!   engine-neutral gate as in the Kueue mode ([`crate::budget`]), behind a session hook
//!   ([`budget`]: charging per node card type, `Wait`, `Deprioritize` as preemptible work
//!   at the lowest priority, `Notify`, `stopRunning`). Each is tested in
//!   `tests/all/kai_budgets.rs`.
//! - **The bill**: `spec.metering` (as in the Kueue mode, [`crate::bill`]; card types match
//!   nodes by `model`, departments give their `quota` per card type) adds the `chargeback`
//!   section ([`crate::bill::kai_chargeback`]).
//! - **Time-sliced and MPS GPUs**: a node the NVIDIA device plugin's sharing configuration
//!   covers (a ConfigMap in the cluster files, `gpuquota_model::workloads::sharing`)
//!   advertises `replicas × GPUs` of `nvidia.com/gpu`, and the sessions admit against that;
//!   metering and budgets count each replica as `1/replicas` of a card.
//!
//! # Why the two-queue oscillation flips, and what sets its period
//!
//! KAI's example (`examples/time-based-fairshare/two-queue-oscillation`: 16 GPUs, two queues
//! with no deserved quota and equal weights, each with a backlog of 16-GPU jobs, window 256
//! cycles, half-life 128, kValue 1) is `tests/data/kai/two-queue-oscillation.yaml`, and
//! `tests/all/kai.rs` checks its run cycle by cycle. At cycle 0 the fair shares are 8 and 8 and
//! team-a (first in job order) takes the node: allocate may go over the fair share. From
//! then on the cluster is always full, so the two usages add up to 1: with `u` the holder's
//! usage the holder's adjusted weight is `1 − u`, the waiting queue's `u`, and the waiting
//! queue's fair share is `16·u` GPUs, divided in whole units with the leftover unit to the
//! larger remainder. It may reclaim only when its whole 16-GPU job fits within its fair
//! share, i.e. when `16·u` rounds to 16: when the holder's usage is above 31/32 of the
//! window (its weighted share of the samples). The flip is therefore not gradual: the fair
//! share climbs unit by unit (8, 11, 12, …, 15) while the allocation stays, then the waiting
//! queue reclaims the whole node in one session and the roles swap.
//!
//! The period is the time the new waiting queue's usage takes to fall from its level at the
//! flip to 1/32. With decay, `τ` samples after losing the node a queue that held it for at
//! least the `W − τ` samples before has `(r^τ − r^W)/(1 − r^W)` of the weighted window
//! (`r = 2^(−1/H)`, window `W`, half-life `H`); that is below 1/32 once
//! `r^τ < r^W + (1 − r^W)/32`: τ = 240 cycles for W = 256, H = 128, the same for both
//! queues, so the allocation is a square wave of period 480. The first flip comes at cycle
//! 1 (team-a's only sample is 100 %) and the second at cycle 30 (team-a's single old sample
//! has decayed below 1/32 of the 30 in the window), then one every 240 cycles. Without decay the period is set by the window alone: the holder must have at
//! most 8 of the 256 samples, 248 cycles (249 for the queue that loses the tie at exactly
//! 8, where both remainders are 15.5). A larger `kValue` steepens the weights and brings the
//! flip earlier; a longer window or half-life lengthens the period; more, smaller jobs let
//! the allocation follow the fair share unit by unit instead of flipping.
//!
//! # Output
//!
//! JSON (`gpuquota sim FILE`), fields in this order: `{"engine": "kai", "start", "endMs",
//! "makespanMs", "sessionIntervalMs", "sessions", "workloads": [{"workload", "queue" (the
//! leaf queue), "class", "createdMs", "runs": [{"startMs", "endMs", "end" (`Finished`,
//! `Evicted` with "action" — reclaim, preempt, consolidation, stale — and "by", or `Cut`),
//! "usage": {"gpu": "4", "cpu": "8", "memory": "16Gi"} (the run's pods' requests as KAI
//! counts them, fractions and MIG as GPU equivalents; zero CPU and memory left out),
//! "nodes": [names]}], "finishedMs", ["pending": {"reason", "message"}]}], "classes" (as
//! the Kueue mode's), "queues": {queue: {"parent", "meanAllocatedGpu", "fairShare": [GPU
//! per session], "allocated": [GPU per session, after the session]}}, "evictions": {action:
//! count}, "preemptions" (evicted runs), ["budgets"], ["chargeback"], ["fidelity"],
//! "warnings"}`. Series values are rounded to 10⁻⁶. A run a spent `stopRunning` budget
//! ended has `"end": "Evicted"`, `"action": "budget"`, `"reason": "BudgetExhausted"` and
//! `"by": "Budget/<name>"`; `budgets` (only with budgets) is [`crate::budget::to_json`]'s,
//! `chargeback` (only with `spec.metering`) the Kueue mode's, and `fidelity` (only when the
//! workloads were recorded: a history's PodGroups, or a trace that records waits, Helios
//! or AcmeTrace) the Kueue mode's section with the same fields
//! ([`crate::history::fidelity`]): a job's admission is its first binding (session + bind
//! latency; recorded: its pods' earliest `status.startTime`, the first run of the
//! PodGroup's `gpuquota.dev/evictions`, or the trace's submission + wait), a run evicted by
//! a session (reclaim, preempt, consolidation, stale) is a preemption matched against the
//! recorded ones (`reason` `Preempted`, the action as the cause), the end is its
//! completion.
//!
//! `--output csv` writes KAI's simulator CSV for either input: `Time,QueueID,Allocation,
//! FairShare`, one row per queue per session, `Time` the session index, numbers with six
//! decimals as Go's `%f` (`pkg/env-tests/timeaware/data.go`); rows of one cycle follow the
//! config's queue order (upstream iterates a Go map: its order varies run to run).
//! `--output table`: mean and last allocation and fair share per queue, then the evictions,
//! the bill and the fidelity section (as the Kueue mode prints them).
//! `--output workloads`: the run as a kubectl dump of the cluster's PodGroups and Pods
//! ([`crate::history::write::kai_objects_yaml`], exact as its docs say), which a `history:`
//! source reads back.
//! `--plot FILE.svg`: [`plot::svg`], allocation against fair share per leaf queue (the two
//! series of KAI's `plot_simple.py`), one panel each.
//!
//! # Properties
//!
//! Each is a proptest in `tests/all/kai_properties.rs`, named as here:
//!
//! 1. **kai_node_capacity**: at every instant, by an independent sweep over the runs, no
//!    node holds more GPUs than it has.
//! 2. **kai_queue_limits**: at every instant no queue is above its GPU limit, and no queue's
//!    non-preemptible work is above its deserved quota.
//! 3. **kai_gangs_whole**: every run holds the whole gang, a job's runs never overlap, and a
//!    finished job ran its whole runtime in its last run.
//! 4. **kai_determinism**: the same scenario gives the same bytes, whatever the order of its
//!    documents.
//! 5. **kai_converges_to_static_fair_share**: with usage decay off (no time-based
//!    fairshare) and every queue saturated with preemptible one-GPU jobs, the allocation
//!    settles on the fair share `gpuquota kai fairshare` computes for the same cluster.
//!
//! # Deviations from upstream, on purpose
//!
//! - Decisions per session are deterministic (KAI's are too, given a snapshot); upstream's
//!   simulator runs the scheduler every 1 ms against a real API server, so several sessions,
//!   binder and controller delays fall into one of its 10 ms cycles and its rows vary run to
//!   run. Here a cycle is exactly one session with instant binding.
//! - Upstream's simulator creates one node per `Nodes` entry whatever its `Count` (all named
//!   `test-node-<GPUs>`); here `Count` nodes are made (`test-node-<GPUs>`, then
//!   `test-node-<GPUs>-<i>`), as its README documents the field.
//! - Prometheus evaluates `sum_over_time` on a subquery grid; here each sample is the
//!   allocation held over the step ending at its stamp, and the window holds the stamps in
//!   `(now − windowSize, now]`.
//! - Pods bind at once (or after `bindLatency`) and terminate at once: no grace periods, no
//!   image pulls, no `Releasing` state between sessions.

pub use crate::budget::kai as budget;
pub use crate::driver::kai as engine;
pub(crate) use crate::driver::kai::caps;
pub use crate::driver::kai::usage;
pub use crate::plot::kai as plot;
pub use crate::report::kai as report;
pub use crate::scenario::kai as scenario;

pub use engine::{Admission, SessionHook};
pub use report::{KaiJob, KaiOutcome, KaiReport, KaiRun, KaiRunEnd, QueueSeries};
pub use scenario::KaiScenario;

use gpuquota_model::diag::Diagnostics;

/// Simulates a KAI scenario.
///
/// # Errors
/// The objects the KAI snapshot refuses, or a session error.
///
/// # Complexity
/// See [`engine::run_reporting`].
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn simulate(sc: &KaiScenario) -> Result<KaiOutcome, Diagnostics> {
    simulate_with_options(sc, &crate::progress::RunOptions::default())
        .map_err(gpuquota_model::Error::into_diagnostics)
}

/// Simulates a KAI scenario, calling `options.progress` once per whole percent of the
/// window (or every [`crate::progress::EVENTS_PER_CALL`] sessions) and at the end; the
/// outcome is the same as [`simulate`]'s.
///
/// # Errors
/// As [`simulate`], a session error of the engine's own kind and code
/// ([`gpuquota_model::Error::is_overflow`] or [`gpuquota_model::Error::is_engine`]), any
/// other an invalid input.
pub(crate) fn simulate_with_options(
    sc: &KaiScenario,
    options: &crate::progress::RunOptions<'_>,
) -> Result<KaiOutcome, gpuquota_model::Error> {
    let invalid = crate::simulation::error;
    let mut progress = crate::progress::Reporter::new(options, sc.end_ms);
    let rules = crate::budget_rules(&sc.model).map_err(invalid)?;
    crate::check_budget_periods(&rules, sc.start, sc.end_ms).map_err(invalid)?;
    let cluster = engine::cluster(sc).map_err(invalid)?;
    let mut budgets = if rules.is_empty() {
        None
    } else {
        // job key → the queue the KAI snapshot puts it in
        let queue_of: std::collections::BTreeMap<String, String> = cluster
            .cluster()
            .jobs
            .iter()
            .map(|j| (j.key.clone(), j.queue_name.clone()))
            .collect();
        Some(budget::KaiBudgets::new(sc, rules, &queue_of))
    };
    let mut out = match budgets.as_mut() {
        Some(h) => engine::run_reporting(sc, cluster, Some(h), &mut progress)?,
        None => engine::run_reporting(sc, cluster, None, &mut progress)?,
    };
    if let Some(h) = budgets.as_mut() {
        h.budgets.advance(out.end_ms);
        out.budgets = Some(crate::budget::report(&h.budgets));
    }
    finish(sc, out).map_err(invalid)
}

/// Warnings in order, then the bill when the scenario has `spec.metering`.
fn finish(sc: &KaiScenario, mut out: KaiOutcome) -> Result<KaiOutcome, Diagnostics> {
    let mut w = sc.warnings.clone();
    if !sc.model.budgets.is_empty() {
        // a node's card type is its product label, named by spec.metering.cardTypes
        let products = budget::card_products(sc.metering.as_ref());
        let cards: std::collections::BTreeSet<String> = sc
            .model
            .nodes
            .values()
            .map(|n| budget::card_of_node(&products, &n.metadata.labels))
            .collect();
        w.extend(crate::budget::reference_warnings(&sc.model, &cards));
    }
    w.extend(std::mem::take(&mut out.warnings));
    if sc.metering.is_some() {
        let (bill, ws) = crate::bill::kai_chargeback(sc, &out)?;
        w.extend(ws.0);
        out.chargeback = Some(bill);
    }
    w.sort();
    out.warnings = w.0;
    out.fidelity = crate::history::fidelity::of_kai_run(sc, &out);
    Ok(out)
}
