//! The KAI driver: arrivals and completions at their millisecond, a scheduling session
//! every `sessionInterval` (a kernel tick), the session's decisions applied to one
//! [`LiveCluster`].

use std::collections::{BTreeMap, BTreeSet};

use gpuquota_model::Error;
use gpuquota_model::diag::{Diagnostic, Diagnostics};
use gpuquota_rank::division::{DivisionOptions, Mode, Resource};
use gpuquota_rank::ids::{PerQueue, PerResource, QueueId};
use gpuquota_rank::live::LiveCluster;
use gpuquota_rank::live::queue_changes::QueueChanges;
use gpuquota_rank::{BuildOptions, Input, SessionOptions};

use crate::kai::report::{KaiJob, KaiOutcome, KaiRun, KaiRunEnd, QueueSeries};
use crate::kai::scenario::KaiScenario;
use crate::kai::usage::UsageDb;
use crate::kernel::{Driver, Event, Kind, Queue};
use crate::scenario::at_ms;

pub(crate) mod caps;
mod nodes;
mod queues;
pub mod usage;

/// A policy outside KAI consulted before every session (a budget, a maintenance window):
/// jobs of a queue it closes stay pending, invisible to the session, until it opens again;
/// running jobs are not touched unless [`SessionHook::to_stop`] names them. Only
/// [`SessionHook::may_admit`] is required; the other methods let a policy follow the runs
/// (the GPU-hour budgets of [`crate::kai::budget`] do).
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
    fn started(&mut self, job: &str, now_ms: i64, placement: &[(&NodeLabels, PerResource<i128>)]) {
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

/// The most series points one run may hold: a point is one queue in one session (its fair
/// share and allocation, 16 bytes, and about as much again in the JSON report). A scenario
/// whose `spec.end` and `spec.kai.sessionInterval` would make more is refused before the
/// run, naming the number; a run without `spec.end` stops there with a warning.
pub const MAX_SERIES_POINTS: u64 = 10_000_000;

/// The up-front check of [`MAX_SERIES_POINTS`] for a run with an end: `queues` series of one
/// point per session.
fn check_series_points(sc: &KaiScenario, queues: usize) -> Result<(), Diagnostics> {
    let Some(end) = sc.end_ms else {
        return Ok(());
    };
    let interval = u64::try_from(sc.session_interval_ms.max(1)).unwrap_or(1);
    let sessions = u64::try_from(end.max(0)).unwrap_or(0).div_ceil(interval);
    let series = queues.max(1) as u64;
    let points = sessions.saturating_mul(series);
    if points <= MAX_SERIES_POINTS {
        return Ok(());
    }
    let (field, advice) = match sc.source {
        crate::kai::scenario::Source::Simulation => (
            "spec.kai.sessionInterval",
            "use a longer sessionInterval or an earlier spec.end",
        ),
        crate::kai::scenario::Source::TimeAware => ("Cycles", "simulate fewer cycles"),
    };
    Err(Diagnostics(vec![
        Diagnostic::error(
            crate::scenario::INVALID_SCENARIO,
            format!(
                "{sessions} sessions of {series} queues make {points} series points: more than \
                 the limit of {MAX_SERIES_POINTS} (a guard against exhausting memory); {advice}"
            ),
        )
        .object("Simulation", sc.name.clone())
        .field(field),
    ]))
}

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

/// The event loop's state: the live cluster, every job's runs, the pending events, and
/// the per-queue series, with one method per phase of a session step.
struct Sim<'s> {
    sc: &'s KaiScenario,
    live: LiveCluster,
    warnings: Vec<Diagnostic>,
    /// Min-runtimes, preemption delays or staleness: a session's decisions depend on the
    /// clock, so none is skipped.
    time_dependent: bool,
    totals: PerResource<i128>,
    /// Job key → (queue as written, leaf index).
    job_queue: BTreeMap<String, (String, Option<QueueId>)>,
    /// Priorities as built.
    priority_of: BTreeMap<String, (i32, bool)>,
    /// The priority a hook's deprioritized job runs at.
    lowest: i32,
    demoted: BTreeSet<String>,
    held: BTreeSet<String>,
    node_ix: BTreeMap<String, usize>,
    options: SessionOptions,
    db: Option<UsageDb>,
    /// The simulated jobs (those the snapshot knows), in key order.
    keys: Vec<String>,
    index: BTreeMap<&'s str, usize>,
    st: Vec<JobState>,
    /// Arrivals (time, job), handed to the kernel's queue at the start.
    arrivals: Vec<(i64, usize)>,
    /// The completions the last session's placements made, for the kernel's queue.
    completions: Vec<Event>,
    series: Vec<QueueSeries>,
    /// Per queue of the live tree, its series, once the timeline rebuilt the tree
    /// ([`queues`]); `None`: queue `q`'s series is `series[q]`.
    series_of: Option<Vec<usize>>,
    fair: Vec<f64>,
    /// Something changed since the last session.
    dirty: bool,
    /// The last session only placed pods (no eviction), no pod is pending any more, and no
    /// usage database moves the fair shares: the next session would decide nothing (every
    /// action starts from a pending pod, and a gang it placed is whole, so not stale), so it
    /// is skipped until an arrival or a completion.
    quiet: bool,
    /// Jobs waiting (arrived, not running).
    pending: usize,
    sessions_run: u64,
    /// The fair shares of the last session run.
    last_fs: PerQueue<PerResource<i128>>,
    now_ms: i64,
    makespan: i64,
    evictions: u64,
    /// Allocation per queue (parents hold their subtree), kept in step with the cluster.
    alloc: PerQueue<PerResource<i128>>,
    /// Each queue's path from its root.
    paths: PerQueue<Vec<QueueId>>,
    /// The namespaces' ResourceQuotas ([`crate::kai::caps`]).
    caps: crate::kai::caps::Caps,
    /// Jobs whose pods the API server refuses (held).
    forbidden: BTreeSet<String>,
}

/// A session at `t` that could not complete, as the engine's own error says it
/// (`gpuquota_rank`'s conversion: an overflow, code `kai-too-large`, or the division's error,
/// its kind and code kept), each message prefixed with the session's instant.
fn session_error(t: i64, e: gpuquota_rank::session::SessionError) -> Error {
    let err = Error::from(e);
    let d: Vec<Diagnostic> = err
        .diagnostics()
        .iter()
        .map(|d| {
            let mut d = d.clone();
            d.message = format!("session at {t} ms: {}", d.message);
            d
        })
        .collect();
    if err.is_overflow() {
        Error::overflow(Diagnostics(d))
    } else {
        Error::engine(Diagnostics(d))
    }
}

/// A division the engine refused at run time (its kind and diagnostic).
fn division_error(e: gpuquota_rank::division::DivisionError) -> Error {
    Error::from(e)
}

impl<'s> Sim<'s> {
    /// Takes the scenario's cluster ([`cluster`]) and parks every job until its arrival.
    ///
    /// # Complexity
    /// O(J log J) for J jobs.
    fn new(sc: &'s KaiScenario, input: Input) -> Result<Sim<'s>, Diagnostics> {
        let cluster = input.cluster();
        let mut warnings: Vec<Diagnostic> = cluster.warnings.0.clone();
        // a job whose queue is not a leaf Queue of the files never runs: say so by name
        for j in cluster.jobs.iter().filter(|j| j.queue.is_none()) {
            let kind = if sc.model.pod_groups.contains_key(&j.key) {
                "PodGroup"
            } else {
                "Pod"
            };
            warnings.push(
                Diagnostic::warning(
                    gpuquota_model::diag::codes::NOT_FOUND,
                    format!(
                        "job {} names queue {:?}, which is not a leaf Queue of the files: it stays pending (QueueDoesNotExist)",
                        j.key, j.queue_name
                    ),
                )
                .object(kind, j.key.clone()),
            );
        }
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
        let job_queue: BTreeMap<String, (String, Option<QueueId>)> = cluster
            .jobs
            .iter()
            .map(|j| (j.key.clone(), (j.queue_name.clone(), j.queue)))
            .collect();
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
        let caps = crate::kai::caps::Caps::new(&sc.model, cluster);
        let live = LiveCluster::new(input);
        let node_ix: BTreeMap<String, usize> = live
            .cluster()
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.clone(), i))
            .collect();
        let options = SessionOptions::default().with_division(
            DivisionOptions::default()
                .with_mode(Mode::Kai)
                .with_k_value(sc.k_value),
        );
        let db = sc
            .usage
            .clone()
            .map(|u| UsageDb::new(u, sc.start, nq, totals));
        // Only jobs the snapshot knows are simulated.
        let known: Vec<&'s String> = sc
            .jobs
            .keys()
            .filter(|k| job_queue.contains_key(*k))
            .collect();
        let keys: Vec<String> = known.iter().map(|k| (*k).clone()).collect();
        let index: BTreeMap<&'s str, usize> = known
            .iter()
            .enumerate()
            .map(|(i, k)| (k.as_str(), i))
            .collect();
        let st: Vec<JobState> = keys
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
        let arrivals: Vec<(i64, usize)> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (sc.jobs[k].created_ms.max(0), i))
            .collect();
        let series: Vec<QueueSeries> = queue_names
            .iter()
            .enumerate()
            .map(|(q, n)| QueueSeries {
                name: n.clone(),
                parent: live.cluster().hierarchy.queues()[q]
                    .parent
                    .map(|p| queue_names[p.index()].clone()),
                fair_share: Vec::new(),
                allocated: Vec::new(),
            })
            .collect();
        let h = &live.cluster().hierarchy;
        let paths: PerQueue<Vec<QueueId>> = h.ids().map(|q| h.path(q)).collect();
        Ok(Sim {
            sc,
            live,
            warnings,
            time_dependent,
            totals,
            job_queue,
            priority_of,
            lowest,
            demoted: BTreeSet::new(),
            held: BTreeSet::new(),
            node_ix,
            options,
            db,
            keys,
            index,
            st,
            arrivals,
            completions: Vec::new(),
            series,
            series_of: None,
            fair: vec![0.0; nq],
            dirty: true,
            quiet: false,
            pending: 0,
            sessions_run: 0,
            last_fs: PerQueue::default(),
            now_ms: 0,
            makespan: 0,
            evictions: 0,
            alloc: PerQueue::from_vec(vec![PerResource::ZERO; nq]),
            paths,
            caps,
            forbidden: BTreeSet::new(),
        })
    }

    /// Applies one event at `at` (the kernel's order: completions first, then arrivals,
    /// each by job): the usage database advances to it, a live run's completion ends it, an
    /// arrival submits the job's pods.
    ///
    /// # Complexity
    /// O(J) per event (the live cluster's key order).
    fn apply_event(&mut self, e: Event, hook: &mut Option<&mut dyn SessionHook>) {
        let at = e.t;
        if let Some(db) = self.db.as_mut() {
            db.advance(at, self.alloc.as_slice());
        }
        self.now_ms = at;
        match e.kind {
            Kind::Completion { index, generation } => {
                let j = index as usize;
                if u64::from(generation) != self.st[j].generation
                    || self.st[j].state != State::Running
                {
                    return;
                }
                self.complete(j, at, hook);
            }
            Kind::Arrival(j) => {
                let j = j as usize;
                if self.live.submit(&self.keys[j]) {
                    self.st[j].state = State::Pending;
                    self.pending += 1;
                    self.dirty = true;
                    self.quiet = false;
                }
            }
            Kind::Tick
            | Kind::Budget
            | Kind::Requeue(_)
            | Kind::Timeline(_)
            | Kind::Deadline { .. }
            | Kind::Released { .. }
            | Kind::PodsDone { .. }
            | Kind::PodsReady { .. } => {}
        }
    }

    /// Job `j` finished its work at `ct`.
    fn complete(&mut self, j: usize, ct: i64, hook: &mut Option<&mut dyn SessionHook>) {
        self.live.finish(&self.keys[j]);
        self.caps.finished(&self.keys[j]);
        if let Some(h) = hook.as_mut() {
            h.stopped(&self.keys[j], ct);
        }
        let s = &mut self.st[j];
        if let (Some(r), Some(leaf)) = (s.runs.last(), self.job_queue[&self.keys[j]].1) {
            for &q in &self.paths[leaf] {
                self.alloc[q] = self.alloc[q].saturating_sub(&r.usage);
            }
        }
        s.state = State::Done;
        s.finished_ms = Some(ct);
        s.left_ms = Some(0);
        if let Some(r) = s.runs.last_mut() {
            r.end_ms = ct;
            r.end = KaiRunEnd::Finished;
        }
        self.makespan = self.makespan.max(ct);
        self.dirty = true;
        self.quiet = false;
    }

    /// Work left of job `j` when its run ends at `t`: what remains with `resume`, else its
    /// whole runtime again.
    fn left_after(&self, j: usize, t: i64) -> Option<i64> {
        let s = &self.st[j];
        s.left_ms.map(|left| {
            let done = (t - s.work_from).max(0);
            if self.sc.resume {
                (left - done).max(0)
            } else {
                self.sc.jobs[&self.keys[j]].runtime_ms.unwrap_or(left)
            }
        })
    }

    /// Stops the running jobs the hook ends at `t` (their pods are deleted and recreated
    /// pending, as for an eviction); true when it stopped any.
    ///
    /// # Complexity
    /// O(S · (log J + J)) for S stopped jobs, plus O(Q) for the allocations.
    fn hook_stops(&mut self, t: i64, h: &mut dyn SessionHook) -> bool {
        let stops = h.to_stop(t);
        if stops.is_empty() {
            return false;
        }
        if let Some(db) = self.db.as_mut() {
            db.advance(t, self.alloc.as_slice());
        }
        for (key, by) in stops {
            let Some(&j) = self.index.get(key.as_str()) else {
                continue;
            };
            if self.st[j].state != State::Running {
                continue;
            }
            self.live.finish(&key);
            self.live.submit(&key);
            h.stopped(&key, t);
            self.end_run(j, t, KaiRunEnd::Stopped { by });
        }
        self.alloc = self.live.queue_allocated();
        true
    }

    /// Feeds the usage database's usage at `t` to the queues; with `run_it` false, also
    /// decides whether the session must run anyway (pending work whose fair share moved).
    ///
    /// # Errors
    /// A division error (an overflowing usage).
    fn feed_usage(&mut self, t: i64, run_it: bool) -> Result<bool, Error> {
        let Some(db) = self.db.as_mut() else {
            return Ok(run_it);
        };
        db.advance(t, self.alloc.as_slice());
        let usage = db.usage(t).to_vec();
        for (q, u) in usage.into_iter().enumerate() {
            self.live
                .set_usage(QueueId::new(q), u)
                .map_err(division_error)?;
        }
        if run_it {
            return Ok(true);
        }
        // Nothing changed but the usage: the session decides exactly what the last one
        // decided (nothing) unless the fair shares moved.
        let d = self
            .live
            .cluster()
            .hierarchy
            .divide(self.totals, &self.options.division)
            .map_err(division_error)?;
        if self.pending > 0 && d.fair_share != self.last_fs {
            return Ok(true);
        }
        for (q, f) in d.fair_share.iter().enumerate() {
            self.fair[q] = f[Resource::Gpu] as f64 / 1e9;
        }
        Ok(false)
    }

    /// Asks the hook about every pending job: held jobs are hidden from the session,
    /// deprioritized ones demoted (and restored once open again).
    ///
    /// # Complexity
    /// O(J log J).
    fn admit(&mut self, t: i64, h: &mut dyn SessionHook) {
        for j in 0..self.st.len() {
            if self.st[j].state != State::Pending {
                continue;
            }
            let key = &self.keys[j];
            let q = &self.job_queue[key].0;
            let admission = h.admission(key, q, t);
            let open = admission != Admission::Closed;
            if !open && self.held.insert(key.clone()) {
                self.live.set_held(key, true);
            } else if open && self.held.remove(key) {
                self.live.set_held(key, false);
            }
            let demote = admission == Admission::Deprioritized;
            if open && demote != self.demoted.contains(key) {
                let (p, pre) = if demote {
                    self.demoted.insert(key.clone());
                    (self.lowest, true)
                } else {
                    self.demoted.remove(key);
                    self.priority_of.get(key).copied().unwrap_or((0, true))
                };
                self.live.set_priority(key, p, pre);
            }
        }
    }

    /// The namespaces' ResourceQuotas before a session: pending jobs whose pods the API
    /// server refuses are held with its `Forbidden` message, the others released (unless
    /// the hook holds them).
    ///
    /// # Complexity
    /// O(J) without ResourceQuotas, else [`crate::kai::caps::Caps::admit`].
    fn apply_caps(&mut self) {
        if self.caps.is_empty() {
            return;
        }
        let st = &self.st;
        let pending: Vec<&str> = self
            .keys
            .iter()
            .enumerate()
            .filter(|(j, _)| st[*j].state == State::Pending)
            .map(|(_, k)| k.as_str())
            .collect();
        let unfinished: Vec<&str> = self
            .keys
            .iter()
            .enumerate()
            .filter(|(j, _)| matches!(st[*j].state, State::Pending | State::Running))
            .map(|(_, k)| k.as_str())
            .collect();
        for (key, refused) in self.caps.admit(&pending, &unfinished) {
            match refused {
                Some(m) => {
                    self.live.set_held(&key, true);
                    if let Some(&j) = self.index.get(key.as_str()) {
                        self.st[j].pending = Some(("Forbidden".to_owned(), m));
                    }
                    self.forbidden.insert(key);
                }
                None => {
                    if self.forbidden.remove(&key) && !self.held.contains(&key) {
                        self.live.set_held(&key, false);
                    }
                }
            }
        }
    }

    /// Runs the session at `t` and applies its decisions: evictions first (their runs end
    /// now), then allocations (runs start after the bind latency).
    ///
    /// # Errors
    /// A session error (an overflowing amount).
    ///
    /// # Complexity
    /// [`LiveCluster::session`], plus O(P log P) per decision for its P pods.
    fn session(&mut self, t: i64, hook: &mut Option<&mut dyn SessionHook>) -> Result<(), Error> {
        self.live.set_now(at_ms(self.sc.start, t));
        if let Some(h) = hook.as_mut() {
            self.admit(t, &mut **h);
        }
        self.apply_caps();
        self.sessions_run += 1;
        let result = self
            .live
            .session(&self.options)
            .map_err(|e| session_error(t, e))?;
        for (q, f) in result.division.fair_share.iter().enumerate() {
            self.fair[q] = f[Resource::Gpu] as f64 / 1e9;
        }
        self.last_fs.clone_from(&result.division.fair_share);
        for e in &result.evicted {
            self.evicted(e, t, hook);
        }
        for a in &result.allocated {
            self.allocated(a, t, hook);
        }
        self.dirty = !result.allocated.is_empty() || !result.evicted.is_empty();
        self.quiet = self.dirty
            && result.evicted.is_empty()
            && self.db.is_none()
            && !self.live.has_pending_pods();
        // The messages are moved, not copied: O(pending jobs) per session.
        for p in result.pending {
            if let Some(&j) = self.index.get(p.pod_group.as_str()) {
                self.st[j].pending = Some((p.reason.as_str().to_owned(), p.message));
            }
        }
        if self.dirty {
            self.alloc = self.live.queue_allocated();
            if let Some(db) = self.db.as_mut() {
                db.advance(t, self.alloc.as_slice());
            }
        }
        Ok(())
    }

    /// An eviction of the session at `t`: the job's run ends, it is pending again.
    fn evicted(
        &mut self,
        e: &gpuquota_rank::session::Eviction,
        t: i64,
        hook: &mut Option<&mut dyn SessionHook>,
    ) {
        let Some(&j) = self.index.get(e.pod_group.as_str()) else {
            return;
        };
        if self.st[j].state != State::Running {
            return;
        }
        if let Some(h) = hook.as_mut() {
            h.stopped(&self.keys[j], t);
        }
        self.end_run(
            j,
            t,
            KaiRunEnd::Evicted {
                action: e.action,
                by: e.by.clone(),
            },
        );
    }

    /// Ends running job `j`'s run at `t` with `end` (an eviction or a hook's stop): the job
    /// is pending again, its work left as [`Sim::left_after`] says.
    fn end_run(&mut self, j: usize, t: i64, end: KaiRunEnd) {
        self.evictions += 1;
        self.pending += 1;
        let left = self.left_after(j, t);
        let s = &mut self.st[j];
        s.state = State::Pending;
        s.generation += 1;
        if let Some(r) = s.runs.last_mut() {
            r.start_ms = r.start_ms.min(t);
            r.end_ms = t;
            r.end = end;
        }
        if s.left_ms.is_some() {
            s.left_ms = left;
        }
    }

    /// What job `key`'s running pods hold: usage, nodes, usage per node, GPU devices and
    /// MIG instances per node.
    ///
    /// # Complexity
    /// O(P log P) for its P pods.
    fn holdings(&self, key: &str) -> RunHoldings {
        let live = &self.live;
        live.job(key)
            .map(|job| {
                let mut u = PerResource::ZERO;
                let mut nodes = BTreeSet::new();
                let mut per: BTreeMap<String, PerResource<i128>> = BTreeMap::new();
                let mut dev: BTreeMap<String, (i128, BTreeMap<String, i64>)> = BTreeMap::new();
                for task in job
                    .tasks
                    .iter()
                    .filter(|t| t.status == gpuquota_rank::snapshot::TaskStatus::Running)
                {
                    u = u.saturating_add(&task.req);
                    if let Some(n) = task.node {
                        let name = &live.cluster().nodes[n.index()].name;
                        nodes.insert(name.clone());
                        let e = per.entry(name.clone()).or_default();
                        *e = e.saturating_add(&task.req);
                        let d = dev.entry(name.clone()).or_default();
                        d.0 = d
                            .0
                            .saturating_add(task.req[Resource::Gpu].saturating_sub(task.mig_gpu));
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
            .unwrap_or_default()
    }

    /// An allocation of the session at `t`: a pending job's run starts after the bind
    /// latency (its completion is scheduled); a running (elastic) job's run goes on with
    /// the larger usage.
    fn allocated(
        &mut self,
        a: &gpuquota_rank::session::Allocation,
        t: i64,
        hook: &mut Option<&mut dyn SessionHook>,
    ) {
        let Some(&j) = self.index.get(a.pod_group.as_str()) else {
            return;
        };
        let (usage, nodes, placement, devices) = self.holdings(&a.pod_group);
        let bind = self.sc.bind_latency_ms;
        if let Some(h) = hook.as_mut() {
            let at: Vec<(&NodeLabels, PerResource<i128>)> = placement
                .iter()
                .filter_map(|(n, u)| {
                    self.node_ix
                        .get(n)
                        .map(|&i| (&self.live.cluster().nodes[i].labels, *u))
                })
                .collect();
            if self.st[j].state == State::Running {
                h.stopped(&self.keys[j], t);
                h.started(&self.keys[j], t, &at);
            } else {
                h.started(&self.keys[j], t + bind, &at);
            }
        }
        let s = &mut self.st[j];
        if s.state == State::Running {
            // More pods of an elastic job: the run goes on with the larger usage.
            if let Some(r) = s.runs.last_mut() {
                r.usage = usage;
                r.nodes = nodes;
                r.placement = placement;
                r.devices = devices;
            }
            return;
        }
        let start = t + bind;
        self.pending = self.pending.saturating_sub(1);
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
            // a job's runs are fewer than its sessions (at most `MAX_SESSIONS`)
            let generation = u32::try_from(s.generation).unwrap_or(u32::MAX);
            self.completions.push(Event::new(
                start + left,
                Kind::Completion {
                    index: j as u32,
                    generation,
                },
            ));
        }
    }

    /// The outcome once the loop has run `sessions` sessions: runs still going are cut at
    /// the end, every job's report.
    ///
    /// # Complexity
    /// O(J log J).
    fn outcome(mut self, sessions: u64, hook: &Option<&mut dyn SessionHook>) -> KaiOutcome {
        let sc = self.sc;
        let interval = sc.session_interval_ms.max(1);
        let end_ms = sc
            .end_ms
            .unwrap_or_else(|| self.now_ms.max((sessions as i64 - 1).max(0) * interval));
        let mut jobs = Vec::with_capacity(self.keys.len());
        for (j, k) in self.keys.iter().enumerate() {
            let s = &mut self.st[j];
            if s.state == State::Running
                && let Some(r) = s.runs.last_mut()
            {
                r.end_ms = end_ms.max(r.start_ms);
                r.end = KaiRunEnd::Cut;
            }
            let inst = &sc.jobs[k];
            jobs.push(KaiJob {
                key: k.clone(),
                queue: self.job_queue[k].0.clone(),
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
        self.warnings.sort();
        KaiOutcome {
            name: sc.name.clone(),
            start: sc.start,
            end_ms,
            makespan_ms: self.makespan,
            session_interval_ms: interval,
            sessions,
            sessions_run: self.sessions_run,
            evictions: self.evictions,
            jobs,
            queues: self.series,
            queue_order: sc.queue_order.clone(),
            warnings: self.warnings,
            budgets: None,
            chargeback: None,
            fidelity: None,
            timeline: Vec::new(),
        }
    }
}

/// A run's holdings: usage, nodes, usage per node, devices per node.
type RunHoldings = (
    PerResource<i128>,
    Vec<String>,
    Vec<(String, PerResource<i128>)>,
    Vec<crate::kai::report::NodeDevices>,
);

/// The scenario's KAI snapshot through the engine's own entry point, the one place the
/// simulator builds it (`now` is the scenario's start).
///
/// # Errors
/// The objects the snapshot refuses (the engine's typed diagnostics).
pub(crate) fn cluster(sc: &KaiScenario) -> Result<Input, Diagnostics> {
    crate::count::bump(|c| &mut c.cluster_builds);
    let options = gpuquota_rank::Options::default()
        .with_build(BuildOptions::default().with_now(Some(sc.start)));
    Input::from_model(&sc.model, &options).map_err(Error::into_diagnostics)
}

/// Runs a KAI scenario on its cluster ([`cluster`]) with the kernel, telling `progress`
/// each session (its `events` are the sessions). The scenario's timeline runs with it: each
/// Queue change is staged and applied to the live cluster right before the next session
/// ([`LiveCluster::apply_queue_changes`]), which runs even if nothing else changed.
///
/// # Errors
/// The objects the KAI snapshot refuses (typed diagnostics naming object and field), or a
/// session error (an overflowing amount).
///
/// # Complexity
/// One session of the engine (`gpuquota_rank::run`'s) per session in which something changed (an arrival, a
/// completion, a decision of the previous session, or — with time-based fairshare — pending
/// work whose fair share moves with the usage); other sessions are skipped, as they would
/// decide nothing. So is the session after one that only placed pods and left none pending
/// (without a usage database): every action starts from a pending pod. Arrivals and
/// completions cost O(log E + J) (the kernel's queue of E events, the live cluster's key
/// order). A session that runs opens on the state the live cluster kept from the previous
/// one ([`LiveCluster::session`]).
pub(crate) fn run_reporting(
    sc: &KaiScenario,
    cluster: Input,
    hook: Option<&mut dyn SessionHook>,
    progress: &mut crate::progress::Reporter<'_>,
) -> Result<KaiOutcome, Error> {
    let mut sim = Sim::new(sc, cluster).map_err(Error::invalid_input)?;
    check_series_points(sc, sim.series.len()).map_err(Error::invalid_input)?;
    let interval = sc.session_interval_ms.max(1);
    let known = std::mem::take(&mut sim.arrivals)
        .into_iter()
        .map(|(t, j)| Event::new(t, Kind::Arrival(j as u32)));
    let mut queue = Queue::with_known(known);
    queue.push(Event::new(0, Kind::Tick));
    // the last session is the last before the end: no event after it is applied
    let end = sc.end_ms.map(|e| {
        if e <= 0 {
            e
        } else {
            (e - 1) / interval * interval + 1
        }
    });
    let series = sim.series.len().max(1) as u64;
    let driver = KaiDriver {
        sim,
        hook,
        progress,
        interval,
        series,
        sessions: 0,
        session_due: false,
        stopped: false,
        error: None,
        staged: QueueChanges::default(),
        nodes: nodes::KaiNodes::default(),
        rebuild: None,
    };
    // a copy of the model only with a timeline
    let platform = (!sc.timeline.events.is_empty()).then(|| crate::kernel::Platform {
        events: &sc.timeline.events,
        model: sc.model.clone(),
    });
    crate::kernel::run(driver, queue, end, platform)
}

/// The KAI driver's state besides the simulation: the hook, the progress, the sessions run
/// and whether the current instant holds one.
struct KaiDriver<'s, 'h, 'r, 'p> {
    sim: Sim<'s>,
    hook: Option<&'h mut dyn SessionHook>,
    progress: &'r mut crate::progress::Reporter<'p>,
    interval: i64,
    /// Series per session (at least 1).
    series: u64,
    sessions: u64,
    /// A session tick was applied at the current instant.
    session_due: bool,
    /// The run ended (after its last session, a limit, or a session error).
    stopped: bool,
    error: Option<Error>,
    /// Queue changes of the timeline waiting for the next session.
    staged: QueueChanges,
    /// The timeline's node state and every event's effect ([`nodes`]).
    nodes: nodes::KaiNodes,
    /// The platform as the timeline left it, when a Queue was created, deleted or moved
    /// since the last session: the next session opens on its tree ([`queues`]).
    rebuild: Option<gpuquota_model::Model>,
}

impl KaiDriver<'_, '_, '_, '_> {
    /// The session at `t`, its series points, and the next session's tick; false when the
    /// run ends here.
    fn session_at(&mut self, t: i64, queue: &mut Queue) -> Result<bool, Error> {
        let sim = &mut self.sim;
        sim.now_ms = sim.now_ms.max(t);
        if let Some(model) = self.rebuild.take() {
            // the tree built from the platform as it is now holds every staged change
            self.staged = QueueChanges::default();
            sim.rebuild_queues(&model, t, self.sessions)?;
        } else if !self.staged.is_empty() {
            apply_staged(sim, &mut self.staged, t)?;
        }
        let mut run_it = (sim.dirty && !sim.quiet) || sim.time_dependent;
        if let Some(h) = self.hook.as_mut() {
            run_it |= h.advance(t);
            run_it |= sim.hook_stops(t, &mut **h);
        }
        if sim.quiet && !run_it {
            // What the skipped session would have left: no decision.
            sim.dirty = false;
            sim.quiet = false;
        }
        let run_it = sim.feed_usage(t, run_it)?;
        if run_it {
            sim.session(t, &mut self.hook)?;
            for e in sim.completions.drain(..) {
                queue.push(e);
            }
        }
        match &sim.series_of {
            None => {
                for (q, s) in sim.series.iter_mut().enumerate() {
                    s.fair_share.push(sim.fair[q]);
                    s.allocated
                        .push(sim.alloc[QueueId::new(q)][Resource::Gpu] as f64 / 1e9);
                }
            }
            Some(map) => {
                for s in &mut sim.series {
                    s.fair_share.push(0.0);
                    s.allocated.push(0.0);
                }
                for (q, &i) in map.iter().enumerate() {
                    let s = &mut sim.series[i];
                    if let (Some(f), Some(a)) = (s.fair_share.last_mut(), s.allocated.last_mut()) {
                        *f = sim.fair[q];
                        *a = sim.alloc[QueueId::new(q)][Resource::Gpu] as f64 / 1e9;
                    }
                }
            }
        }
        self.sessions += 1;
        let end = sim.sc.end_ms;
        if end.is_none() && queue.next_time().is_none() && !sim.dirty {
            return Ok(false);
        }
        let next = (self.sessions as i64).saturating_mul(self.interval);
        if end.is_some_and(|e| next >= e) {
            return Ok(false);
        }
        let sessions = self.sessions;
        if sessions >= MAX_SESSIONS || sessions.saturating_mul(self.series) >= MAX_SERIES_POINTS {
            self.progress.tick(next, sessions);
            let series = self.series;
            sim.warnings.push(Diagnostic::warning(
                crate::scenario::NOT_SIMULATED,
                format!("stopped after {sessions} sessions of {series} queues (no spec.end and the cluster never settled; at most {MAX_SESSIONS} sessions and {MAX_SERIES_POINTS} series points)"),
            ));
            return Ok(false);
        }
        queue.push(Event::new(next, Kind::Tick));
        Ok(true)
    }
}

/// Applies the staged Queue changes to the live cluster right before the session at `t`,
/// which then runs (its division changes). A change the live cluster cannot take in place
/// (a Queue created, a new parent or min-runtime) is a `not-simulated` error.
fn apply_staged(sim: &mut Sim<'_>, staged: &mut QueueChanges, t: i64) -> Result<(), Error> {
    let options = BuildOptions::default().with_now(Some(sim.sc.start));
    let applied = sim
        .live
        .apply_queue_changes(staged, &options)
        .map_err(Error::invalid_input)?;
    if !applied.rebuild.is_empty() {
        return Err(Error::invalid_input(Diagnostics(vec![Diagnostic::error(
            crate::scenario::NOT_SIMULATED,
            format!(
                "at {t} ms: Queue(s) {} created or moved in the tree (a new parent or min-runtime), which a KAI run does not simulate; quota, limit, weight and priority changes are",
                applied.rebuild.join(", ")
            ),
        )
        .field("spec.timeline")])));
    }
    sim.dirty = true;
    sim.quiet = false;
    Ok(())
}

impl Driver for KaiDriver<'_, '_, '_, '_> {
    type Report = Result<KaiOutcome, Error>;

    fn instant(&mut self, _: i64) {
        self.session_due = false;
    }

    /// An arrival, a completion or a drain's deadline; a tick is the session of the
    /// instant, run once every event at it is applied.
    fn apply(&mut self, e: Event, _: &mut Queue) {
        if self.stopped {
            return;
        }
        match e.kind {
            Kind::Tick => self.session_due = true,
            Kind::Deadline { index, generation } => {
                self.drain_deadline(e.t, index, generation);
            }
            _ => self.sim.apply_event(e, &mut self.hook),
        }
    }

    /// The timeline's Queue changes are staged; they take effect at the next session
    /// ([`QueueChanges`]), which runs then even if nothing else changed. Node changes apply
    /// at once ([`nodes`]).
    fn timeline(
        &mut self,
        t: i64,
        event: &crate::timeline::Event,
        changes: &crate::timeline::Changes,
        model: &gpuquota_model::Model,
        queue: &mut Queue,
    ) -> bool {
        if self.stopped {
            return false;
        }
        let mut effect = super::timeline_effect(t, event, changes);
        if let Err(e) = self.node_changes(t, changes, &mut effect, queue) {
            self.error = Some(e);
            self.stopped = true;
            return false;
        }
        self.nodes.effects.push(effect);
        for c in &changes.objects {
            if c.kind != gpuquota_model::Kind::Queue {
                continue;
            }
            let before = match &c.before {
                Some(crate::timeline::Object::Queue(q)) => Some(&**q),
                _ => None,
            };
            let after = model.queues.get(&c.key);
            if self.rebuild.is_some() || queues::reshapes(before, after) {
                self.rebuild = Some(model.clone());
            }
            self.staged.stage(before, after);
        }
        true
    }

    fn decide(&mut self, t: i64, queue: &mut Queue) -> bool {
        if self.stopped {
            return false;
        }
        if !self.session_due {
            return true;
        }
        self.progress.tick(t, self.sessions);
        let go_on = match self.session_at(t, queue) {
            Ok(go_on) => go_on,
            Err(e) => {
                self.error = Some(e);
                false
            }
        };
        self.stopped = !go_on;
        go_on
    }

    fn report(self) -> Result<KaiOutcome, Error> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let sim = self.sim;
        let sessions = self.sessions;
        let interval = self.interval;
        let end_ms = sim
            .sc
            .end_ms
            .unwrap_or_else(|| sim.now_ms.max((sessions as i64 - 1).max(0) * interval));
        self.progress.finish(end_ms, sessions);
        let mut outcome = sim.outcome(sessions, &self.hook);
        outcome.timeline = self.nodes.effects;
        Ok(outcome)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session's overflow is the engine's overflow error with its own code, not an invalid
    /// input: the instant leads the engine's message.
    #[test]
    fn a_session_error_keeps_the_engines_kind_and_code() {
        let e = session_error(5_000, gpuquota_rank::session::SessionError::Overflow);
        assert!(e.is_overflow());
        assert!(!e.is_invalid_input());
        let d = &e.diagnostics().0[0];
        assert_eq!(d.code, gpuquota_rank::snapshot::codes::TOO_LARGE);
        assert_eq!(d.code.as_str(), "kai-too-large");
        assert_eq!(d.engine, "kai");
        assert_eq!(
            d.message,
            "session at 5000 ms: session: an allocated or free amount overflows (requests too large)"
        );
    }
}
