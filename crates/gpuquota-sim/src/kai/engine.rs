//! The KAI event loop: arrivals and completions at their millisecond, a scheduling session
//! every `sessionInterval`, the session's decisions applied to one [`LiveCluster`].

use std::collections::{BTreeMap, BTreeSet};

use gpuquota_model::diag::{Diagnostic, Diagnostics};
use gpuquota_rank::division::{DivisionOptions, Mode};
use gpuquota_rank::live::LiveCluster;
use gpuquota_rank::{BuildOptions, Cluster, SessionOptions};

use super::report::{KaiJob, KaiOutcome, KaiRun, KaiRunEnd, QueueSeries};
use super::scenario::KaiScenario;
use super::usage::UsageDb;
use crate::scenario::at_ms;

/// A policy outside KAI consulted before every session (a budget, a maintenance window):
/// jobs of a queue it closes stay pending, invisible to the session, until it opens again;
/// running jobs are not touched unless [`SessionHook::to_stop`] names them. Only
/// [`SessionHook::may_admit`] is required; the other methods let a policy follow the runs
/// (the GPU-hour budgets of [`super::budget`] do).
pub trait SessionHook {
    /// May `queue` (a leaf) start new work in the session at `now_ms`?
    fn may_admit(&mut self, queue: &str, now_ms: i64) -> bool;

    /// How a pending job (`namespace/name`) of `queue` may start new work at `now_ms`
    /// (default: [`SessionHook::may_admit`] of its queue).
    fn admission(&mut self, job: &str, queue: &str, now_ms: i64) -> Admission {
        let _ = job;
        if self.may_admit(queue, now_ms) {
            Admission::Open
        } else {
            Admission::Closed
        }
    }

    /// Called before a session at `now_ms`: false when nothing the hook decides changed
    /// since the previous call, so a session that would decide nothing may be skipped
    /// (default: true, every session runs).
    fn advance(&mut self, now_ms: i64) -> bool {
        let _ = now_ms;
        true
    }

    /// A run of `job` started at `now_ms` with this usage per node (nano-units: GPU devices,
    /// millicores, bytes), the node's labels alongside.
    fn started(&mut self, job: &str, now_ms: i64, placement: &[(&NodeLabels, [i128; 3])]) {
        let _ = (job, now_ms, placement);
    }

    /// The run of `job` ended at `now_ms` (finished, evicted, stopped).
    fn stopped(&mut self, job: &str, now_ms: i64) {
        let _ = (job, now_ms);
    }

    /// Running jobs to end now, each with who ends it (its run's `by`).
    fn to_stop(&mut self, now_ms: i64) -> Vec<(String, String)> {
        let _ = now_ms;
        Vec::new()
    }

    /// The pending reason and message of a job the hook holds back (for the report).
    fn pending(&self, job: &str) -> Option<(String, String)> {
        let _ = job;
        None
    }
}

/// A node's labels, as [`SessionHook::started`] sees them.
pub type NodeLabels = BTreeMap<String, String>;

/// What a [`SessionHook`] says about a pending job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// It may start as it is.
    Open,
    /// It stays pending, invisible to the session.
    Closed,
    /// It may start only as preemptible work at a priority below every other job's.
    Deprioritized,
}

/// The most sessions one run may hold (a guard against a scenario without end that never
/// settles).
pub const MAX_SESSIONS: u64 = 50_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    NotArrived,
    Pending,
    Running,
    Done,
}

struct JobState {
    state: State,
    /// Work left, ms (`None`: runs until the end).
    left_ms: Option<i64>,
    /// When the current run's work started (after the bind latency).
    work_from: i64,
    /// Completion events of older runs are stale.
    generation: u64,
    runs: Vec<KaiRun>,
    first_start: Option<i64>,
    finished_ms: Option<i64>,
    pending: Option<(String, String)>,
}

/// Runs a KAI scenario.
///
/// # Errors
/// The objects the KAI snapshot refuses (typed diagnostics naming object and field), or a
/// session error (an overflowing amount).
///
/// # Complexity
/// One [`gpuquota_rank::run_session`] per session in which something changed (an arrival, a
/// completion, a decision of the previous session, or — with time-based fairshare — pending
/// work whose fair share moves with the usage); other sessions are skipped, as they would
/// decide nothing. So is the session after one that only placed pods and left none pending
/// (without a usage database): every action starts from a pending pod. Arrivals and completions cost O(log J + J) (the live cluster's key order).
pub fn run(
    sc: &KaiScenario,
    hook: Option<&mut dyn SessionHook>,
) -> Result<KaiOutcome, Diagnostics> {
    let options = crate::progress::RunOptions::default();
    run_reporting(
        sc,
        hook,
        &mut crate::progress::Reporter::new(&options, sc.end_ms),
    )
}

/// [`run`], telling `progress` each session (its `events` are the sessions).
pub(crate) fn run_reporting(
    sc: &KaiScenario,
    mut hook: Option<&mut dyn SessionHook>,
    progress: &mut crate::progress::Reporter<'_>,
) -> Result<KaiOutcome, Diagnostics> {
    let cluster = Cluster::from_model(
        &sc.model,
        &BuildOptions {
            now: Some(sc.start),
            ..Default::default()
        },
    )?;
    let mut warnings: Vec<Diagnostic> = cluster.warnings.0.clone();
    let time_dependent = cluster
        .queues
        .iter()
        .any(|q| q.preempt_min_runtime.is_some() || q.reclaim_min_runtime.is_some())
        || cluster
            .jobs
            .iter()
            .any(|j| j.preemption_delay.is_some() || j.staleness_grace.is_some());
    let totals = cluster.totals;
    let nq = cluster.hierarchy.queues().len();
    let queue_names: Vec<String> = cluster
        .hierarchy
        .queues()
        .iter()
        .map(|q| q.name.clone())
        .collect();
    // Job key → (queue as written, leaf index).
    let job_queue: BTreeMap<String, (String, Option<usize>)> = cluster
        .jobs
        .iter()
        .map(|j| {
            (
                j.key.clone(),
                (j.queue_name.clone(), j.queue.map(|q| q.index())),
            )
        })
        .collect();
    // Priorities as built, and the priority a hook's deprioritized job runs at.
    let priority_of: BTreeMap<String, (i32, bool)> = cluster
        .jobs
        .iter()
        .map(|j| (j.key.clone(), (j.priority, j.preemptible)))
        .collect();
    let lowest = priority_of
        .values()
        .map(|p| p.0)
        .min()
        .unwrap_or(0)
        .saturating_sub(1);
    let mut demoted: BTreeSet<String> = BTreeSet::new();
    let mut live = LiveCluster::new(cluster);
    let node_ix: BTreeMap<String, usize> = live
        .cluster()
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.clone(), i))
        .collect();
    let options = SessionOptions {
        division: DivisionOptions {
            mode: Mode::Kai,
            k_value: sc.k_value,
        },
        ..Default::default()
    };
    let mut db = sc
        .usage
        .clone()
        .map(|u| UsageDb::new(u, sc.start, nq, totals));

    // Only jobs the snapshot knows are simulated.
    let keys: Vec<String> = sc
        .jobs
        .keys()
        .filter(|k| job_queue.contains_key(*k))
        .cloned()
        .collect();
    let index: BTreeMap<&str, usize> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| (k.as_str(), i))
        .collect();
    let mut st: Vec<JobState> = keys
        .iter()
        .map(|k| JobState {
            state: State::NotArrived,
            left_ms: sc.jobs[k].runtime_ms,
            work_from: 0,
            generation: 0,
            runs: Vec::new(),
            first_start: None,
            finished_ms: None,
            pending: None,
        })
        .collect();
    // Arrivals in time order (ties by key).
    let mut arrivals: Vec<(i64, usize)> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| (sc.jobs[k].created_ms.max(0), i))
        .collect();
    arrivals.sort();
    let mut next_arrival = 0usize;
    // Completions: (time, job, generation).
    let mut completions: BTreeSet<(i64, usize, u64)> = BTreeSet::new();

    let interval = sc.session_interval_ms.max(1);
    let end = sc.end_ms;
    let mut series: Vec<QueueSeries> = queue_names
        .iter()
        .enumerate()
        .map(|(q, n)| QueueSeries {
            name: n.clone(),
            parent: live.cluster().hierarchy.queues()[q]
                .parent
                .map(|p| queue_names[p].clone()),
            fair_share: Vec::new(),
            allocated: Vec::new(),
        })
        .collect();
    let mut fair: Vec<f64> = vec![0.0; nq];
    let mut dirty = true;
    // The last session only placed pods (no eviction), no pod is pending any more, and no
    // usage database moves the fair shares: the next session would decide nothing (every
    // action starts from a pending pod, and a gang it placed is whole, so not stale), so it
    // is skipped until an arrival or a completion.
    let mut quiet = false;
    // Jobs waiting (arrived, not running), and the fair shares of the last session run.
    let mut pending: usize = 0;
    let mut sessions_run: u64 = 0;
    let mut last_fs: Vec<[i128; 3]> = Vec::new();
    let mut sessions: u64 = 0;
    let mut now_ms: i64 = 0;
    let mut makespan = 0i64;
    let mut held: BTreeSet<String> = BTreeSet::new();
    let mut evictions: u64 = 0;
    // Allocation per queue (parents hold their subtree), kept in step with the cluster.
    let mut alloc: Vec<[i128; 3]> = vec![[0; 3]; nq];
    let paths: Vec<Vec<usize>> = (0..nq).map(|q| live.cluster().hierarchy.path(q)).collect();
    loop {
        let t = sessions as i64 * interval;
        if end.is_some_and(|e| t >= e) {
            break;
        }
        progress.tick(t, sessions);
        if sessions >= MAX_SESSIONS {
            warnings.push(Diagnostic::warning(
                crate::scenario::NOT_SIMULATED,
                format!("stopped after {MAX_SESSIONS} sessions (no spec.end and the cluster never settled)"),
            ));
            break;
        }
        // Events up to and including `t`: completions first, then arrivals.
        loop {
            let c = completions.first().copied();
            let a = arrivals.get(next_arrival).copied();
            let (at, is_completion) = match (c, a) {
                (Some(c), Some(a)) if c.0 <= a.0 => (c.0, true),
                (Some(c), None) => (c.0, true),
                (_, Some(a)) => (a.0, false),
                (None, None) => break,
            };
            if at > t || end.is_some_and(|e| at >= e) {
                break;
            }
            if let Some(db) = db.as_mut() {
                db.advance(at, &alloc);
            }
            now_ms = at;
            if is_completion {
                let Some((ct, j, g)) = completions.pop_first() else {
                    break;
                };
                if st[j].generation != g || st[j].state != State::Running {
                    continue;
                }
                live.finish(&keys[j]);
                if let Some(h) = hook.as_mut() {
                    h.stopped(&keys[j], ct);
                }
                let s = &mut st[j];
                if let (Some(r), Some(leaf)) = (s.runs.last(), job_queue[&keys[j]].1) {
                    for &q in &paths[leaf] {
                        for (a, u) in alloc[q].iter_mut().zip(r.usage) {
                            *a = a.saturating_sub(u);
                        }
                    }
                }
                s.state = State::Done;
                s.finished_ms = Some(ct);
                s.left_ms = Some(0);
                if let Some(r) = s.runs.last_mut() {
                    r.end_ms = ct;
                    r.end = KaiRunEnd::Finished;
                }
                makespan = makespan.max(ct);
                dirty = true;
                quiet = false;
            } else {
                let (_, j) = arrivals[next_arrival];
                next_arrival += 1;
                if live.submit(&keys[j]) {
                    st[j].state = State::Pending;
                    pending += 1;
                    dirty = true;
                    quiet = false;
                }
            }
        }
        now_ms = now_ms.max(t);
        let mut run_it = (dirty && !quiet) || time_dependent;
        if let Some(h) = hook.as_mut() {
            run_it |= h.advance(t);
            let stops = h.to_stop(t);
            if !stops.is_empty() {
                if let Some(db) = db.as_mut() {
                    db.advance(t, &alloc);
                }
                for (key, by) in stops {
                    let Some(&j) = index.get(key.as_str()) else {
                        continue;
                    };
                    if st[j].state != State::Running {
                        continue;
                    }
                    // The pods are deleted and recreated pending, as for an eviction.
                    live.finish(&key);
                    live.submit(&key);
                    h.stopped(&key, t);
                    evictions += 1;
                    pending += 1;
                    let s = &mut st[j];
                    s.state = State::Pending;
                    s.generation += 1;
                    if let Some(r) = s.runs.last_mut() {
                        r.start_ms = r.start_ms.min(t);
                        r.end_ms = t;
                        r.end = KaiRunEnd::Stopped { by };
                    }
                    if let Some(left) = s.left_ms {
                        let done = (t - s.work_from).max(0);
                        s.left_ms = Some(if sc.resume {
                            (left - done).max(0)
                        } else {
                            sc.jobs[&keys[j]].runtime_ms.unwrap_or(left)
                        });
                    }
                }
                alloc = live.queue_allocated();
                run_it = true;
            }
        }
        if quiet && !run_it {
            // What the skipped session would have left: no decision.
            dirty = false;
            quiet = false;
        }
        if let Some(db) = db.as_mut() {
            db.advance(t, &alloc);
            let usage = db.usage(t).to_vec();
            for (q, u) in usage.into_iter().enumerate() {
                live.set_usage(q, u).map_err(|e| {
                    Diagnostics(vec![gpuquota_rank::snapshot::division_diagnostic(&e)])
                })?;
            }
            if !run_it {
                // Nothing changed but the usage: the session decides exactly what the last
                // one decided (nothing) unless the fair shares moved.
                let d = live
                    .cluster()
                    .hierarchy
                    .divide(totals, &options.division)
                    .map_err(|e| {
                        Diagnostics(vec![gpuquota_rank::snapshot::division_diagnostic(&e)])
                    })?;
                if pending > 0 && d.fair_share != last_fs {
                    run_it = true;
                } else {
                    for (q, f) in d.fair_share.iter().enumerate() {
                        fair[q] = f[0] as f64 / 1e9;
                    }
                }
            }
        }
        if run_it {
            live.set_now(at_ms(sc.start, t));
            if let Some(h) = hook.as_mut() {
                for (j, s) in st.iter().enumerate() {
                    if s.state != State::Pending {
                        continue;
                    }
                    let q = &job_queue[&keys[j]].0;
                    let admission = h.admission(&keys[j], q, t);
                    let open = admission != Admission::Closed;
                    if !open && held.insert(keys[j].clone()) {
                        live.set_held(&keys[j], true);
                    } else if open && held.remove(&keys[j]) {
                        live.set_held(&keys[j], false);
                    }
                    let demote = admission == Admission::Deprioritized;
                    if open && demote != demoted.contains(&keys[j]) {
                        let (p, pre) = if demote {
                            demoted.insert(keys[j].clone());
                            (lowest, true)
                        } else {
                            demoted.remove(&keys[j]);
                            priority_of.get(&keys[j]).copied().unwrap_or((0, true))
                        };
                        live.set_priority(&keys[j], p, pre);
                    }
                }
            }
            sessions_run += 1;
            let result = live.session(&options).map_err(|e| {
                Diagnostics(vec![Diagnostic::error(
                    crate::ENGINE_PROBLEM,
                    format!("session at {t} ms: {e}"),
                )])
            })?;
            for (q, f) in result.division.fair_share.iter().enumerate() {
                fair[q] = f[0] as f64 / 1e9;
            }
            last_fs.clone_from(&result.division.fair_share);
            // Evictions first: their runs end now.
            for e in &result.evicted {
                let Some(&j) = index.get(e.pod_group.as_str()) else {
                    continue;
                };
                let s = &mut st[j];
                if s.state != State::Running {
                    continue;
                }
                if let Some(h) = hook.as_mut() {
                    h.stopped(&keys[j], t);
                }
                evictions += 1;
                pending += 1;
                s.state = State::Pending;
                s.generation += 1;
                if let Some(r) = s.runs.last_mut() {
                    r.start_ms = r.start_ms.min(t);
                    r.end_ms = t;
                    r.end = KaiRunEnd::Evicted {
                        action: e.action,
                        by: e.by.clone(),
                    };
                }
                if let Some(left) = s.left_ms {
                    let done = (t - s.work_from).max(0);
                    s.left_ms = Some(if sc.resume {
                        (left - done).max(0)
                    } else {
                        sc.jobs[&keys[j]].runtime_ms.unwrap_or(left)
                    });
                }
            }
            for a in &result.allocated {
                let Some(&j) = index.get(a.pod_group.as_str()) else {
                    continue;
                };
                let job = live.job(&a.pod_group);
                let (usage, nodes, placement, devices) = job
                    .map(|job| {
                        let mut u = [0i128; 3];
                        let mut nodes = BTreeSet::new();
                        let mut per: BTreeMap<String, [i128; 3]> = BTreeMap::new();
                        let mut dev: BTreeMap<String, (i128, BTreeMap<String, i64>)> =
                            BTreeMap::new();
                        for task in job
                            .tasks
                            .iter()
                            .filter(|t| t.status == gpuquota_rank::snapshot::TaskStatus::Running)
                        {
                            for (r, v) in u.iter_mut().enumerate() {
                                *v = v.saturating_add(task.req.0[r]);
                            }
                            if let Some(n) = task.node {
                                let name = &live.cluster().nodes[n.index()].name;
                                nodes.insert(name.clone());
                                let e = per.entry(name.clone()).or_default();
                                for (r, v) in e.iter_mut().enumerate() {
                                    *v = v.saturating_add(task.req.0[r]);
                                }
                                let d = dev.entry(name.clone()).or_default();
                                d.0 = d.0.saturating_add(task.req.0[0] - task.mig_gpu);
                                for &(p, c) in &task.mig {
                                    if let Some(p) = live.cluster().mig_profiles.get(p) {
                                        *d.1.entry(p.clone()).or_default() += c;
                                    }
                                }
                            }
                        }
                        (
                            u,
                            nodes.into_iter().collect::<Vec<_>>(),
                            per.into_iter().collect::<Vec<_>>(),
                            dev.into_iter()
                                .map(|(n, (g, m))| (n, g, m.into_iter().collect()))
                                .collect::<Vec<_>>(),
                        )
                    })
                    .unwrap_or_default();
                if let Some(h) = hook.as_mut() {
                    let at: Vec<(&super::engine::NodeLabels, [i128; 3])> = placement
                        .iter()
                        .filter_map(|(n, u)| {
                            node_ix
                                .get(n)
                                .map(|&i| (&live.cluster().nodes[i].labels, *u))
                        })
                        .collect();
                    if st[j].state == State::Running {
                        h.stopped(&keys[j], t);
                        h.started(&keys[j], t, &at);
                    } else {
                        h.started(&keys[j], t + sc.bind_latency_ms, &at);
                    }
                }
                let s = &mut st[j];
                if s.state == State::Running {
                    // More pods of an elastic job: the run goes on with the larger usage.
                    if let Some(r) = s.runs.last_mut() {
                        r.usage = usage;
                        r.nodes = nodes;
                        r.placement = placement;
                        r.devices = devices;
                    }
                    continue;
                }
                let start = t + sc.bind_latency_ms;
                pending = pending.saturating_sub(1);
                s.state = State::Running;
                s.work_from = start;
                s.first_start.get_or_insert(start);
                s.pending = None;
                s.runs.push(KaiRun {
                    start_ms: start,
                    end_ms: start,
                    end: KaiRunEnd::Cut,
                    usage,
                    nodes,
                    placement,
                    devices,
                });
                if let Some(left) = s.left_ms {
                    completions.insert((start + left, j, s.generation));
                }
            }
            dirty = !result.allocated.is_empty() || !result.evicted.is_empty();
            quiet = dirty && result.evicted.is_empty() && db.is_none() && !live.has_pending_pods();
            // The messages are moved, not copied: O(pending jobs) per session.
            for p in result.pending {
                if let Some(&j) = index.get(p.pod_group.as_str()) {
                    st[j].pending = Some((p.reason.as_str().to_owned(), p.message));
                }
            }
            if dirty {
                alloc = live.queue_allocated();
                if let Some(db) = db.as_mut() {
                    db.advance(t, &alloc);
                }
            }
        }
        for (q, s) in series.iter_mut().enumerate() {
            s.fair_share.push(fair[q]);
            s.allocated.push(alloc[q][0] as f64 / 1e9);
        }
        sessions += 1;
        if end.is_none() {
            let future = next_arrival < arrivals.len() || !completions.is_empty();
            if !future && !dirty {
                break;
            }
        }
    }
    let end_ms = end.unwrap_or_else(|| now_ms.max((sessions as i64 - 1).max(0) * interval));
    progress.finish(end_ms, sessions);
    let mut jobs = Vec::with_capacity(keys.len());
    for (j, k) in keys.iter().enumerate() {
        let s = &mut st[j];
        if s.state == State::Running
            && let Some(r) = s.runs.last_mut()
        {
            r.end_ms = end_ms.max(r.start_ms);
            r.end = KaiRunEnd::Cut;
        }
        let inst = &sc.jobs[k];
        jobs.push(KaiJob {
            key: k.clone(),
            queue: job_queue[k].0.clone(),
            class: inst.class.clone(),
            created_ms: inst.created_ms,
            runs: std::mem::take(&mut s.runs),
            first_start_ms: s.first_start,
            finished_ms: s.finished_ms,
            pending: if matches!(s.state, State::Pending | State::NotArrived) {
                let held_back = hook.as_ref().and_then(|h| h.pending(k));
                Some(held_back.or_else(|| s.pending.clone()).unwrap_or_else(|| {
                    if s.state == State::NotArrived {
                        ("NotArrived".to_owned(), "created after the end".to_owned())
                    } else {
                        (
                            "Unschedulable".to_owned(),
                            "no session ran after it arrived".to_owned(),
                        )
                    }
                }))
            } else {
                None
            },
        });
    }
    warnings.sort();
    Ok(KaiOutcome {
        name: sc.name.clone(),
        start: sc.start,
        end_ms,
        makespan_ms: makespan,
        session_interval_ms: interval,
        sessions,
        sessions_run,
        evictions,
        jobs,
        queues: series,
        queue_order: sc.queue_order.clone(),
        warnings,
        budgets: None,
        chargeback: None,
    })
}
