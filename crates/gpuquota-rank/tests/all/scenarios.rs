//! Session scenarios through real manifests, one per upstream rule (kai-scheduler/KAI-Scheduler:
//! `pkg/scheduler/actions`, `plugins/nodeplacement`).

use std::fmt::Write as _;

use gpuquota_model::import_str;
use gpuquota_rank::report::schedule_report;
use gpuquota_rank::session::{Action, Placement, Reason, SessionOptions, SessionResult};
use gpuquota_rank::snapshot::{BuildOptions, Cluster};
use gpuquota_rank::testkit::fairshare_report;
use gpuquota_rank::testkit::run_session;
use gpuquota_rank::{DivisionOptions, Mode, Resource};
use serde_json::Value;

/// A manifest builder in the shape of KAI's test harness.
#[derive(Default)]
pub(crate) struct Sc {
    pub(crate) yaml: String,
    seq: u32,
}

pub(crate) struct JobSpec<'a> {
    pub(crate) class: &'a str,
    pub(crate) min: usize,
    /// `(gpus, node)`: node `Some` = running there; gpus < 1 uses `gpu-fraction`.
    pub(crate) pods: Vec<(f64, Option<&'a str>)>,
    pub(crate) extra_spec: &'a str,
    pub(crate) annotations: &'a str,
    pub(crate) start: &'a str,
}

pub(crate) fn job<'a>(class: &'a str, pods: Vec<(f64, Option<&'a str>)>) -> JobSpec<'a> {
    JobSpec {
        class,
        min: pods.len(),
        pods,
        extra_spec: "",
        annotations: "",
        start: "2025-01-01T00:00:00Z",
    }
}

impl Sc {
    pub(crate) fn queue(
        &mut self,
        name: &str,
        parent: Option<&str>,
        quota: f64,
        weight: f64,
        limit: f64,
        prio: i32,
    ) -> &mut Self {
        self.seq += 1;
        let parent = parent.map_or(String::new(), |p| format!("  parentQueue: {p}\n"));
        let _ = write!(
            self.yaml,
            "---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {{name: {name}, creationTimestamp: \"2025-01-01T00:00:{:02}Z\"}}\nspec:\n{parent}  priority: {prio}\n  resources:\n    gpu: {{quota: {quota}, overQuotaWeight: {weight}, limit: {limit}}}\n",
            self.seq % 60
        );
        self
    }

    pub(crate) fn node(&mut self, name: &str, gpus: u32) -> &mut Self {
        let _ = write!(
            self.yaml,
            "---\napiVersion: v1\nkind: Node\nmetadata: {{name: {name}}}\nstatus:\n  allocatable: {{nvidia.com/gpu: \"{gpus}\", cpu: \"64\", memory: 512Gi}}\n"
        );
        self
    }

    /// A PodGroup `ns/name` with its pods; creation order = call order.
    pub(crate) fn job(&mut self, key: &str, queue: &str, j: JobSpec<'_>) -> &mut Self {
        self.seq += 1;
        let (ns, name) = key.split_once('/').unwrap();
        let created = format!("2025-01-01T{:02}:{:02}:00Z", self.seq / 60, self.seq % 60);
        let ann = if j.annotations.is_empty() {
            String::new()
        } else {
            format!(", annotations: {{{}}}", j.annotations)
        };
        let _ = write!(
            self.yaml,
            "---\napiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {{name: {name}, namespace: {ns}, creationTimestamp: \"{created}\"{ann}}}\nspec: {{queue: {queue}, minMember: {}, priorityClassName: {}{}}}\n",
            j.min, j.class, j.extra_spec
        );
        for (i, (g, node)) in j.pods.iter().enumerate() {
            let (gpu_res, frac) = if *g < 1.0 {
                (String::new(), format!(", gpu-fraction: \"{g}\""))
            } else {
                (
                    format!("limits: {{nvidia.com/gpu: \"{g}\"}}"),
                    String::new(),
                )
            };
            let (node_line, status) = match node {
                Some(n) if n.starts_with("succeeded") => {
                    (String::new(), "{phase: Succeeded}".to_string())
                }
                Some(n) => (
                    format!("  nodeName: {n}\n"),
                    format!("{{phase: Running, startTime: \"{}\"}}", j.start),
                ),
                None => (String::new(), "{phase: Pending}".to_string()),
            };
            let _ = write!(
                self.yaml,
                "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}-{i}\n  namespace: {ns}\n  creationTimestamp: \"{created}\"\n  labels: {{kai.scheduler/queue: {queue}}}\n  annotations: {{pod-group-name: {name}{frac}}}\nspec:\n{node_line}  containers: [{{name: c, resources: {{{gpu_res}}}}}]\nstatus: {status}\n"
            );
        }
        self
    }

    pub(crate) fn cluster(&self, now: Option<&str>) -> Cluster {
        let imported = import_str("scenario.yaml", &self.yaml)
            .unwrap_or_else(|e| panic!("{e}\n{}", self.yaml));
        let now = now.map(|n| n.parse().unwrap());
        gpuquota_rank::testkit::cluster(&imported.model, &BuildOptions::default().with_now(now))
            .unwrap()
    }

    pub(crate) fn run(&self) -> SessionResult {
        self.run_with(None, &SessionOptions::default())
    }

    pub(crate) fn run_with(&self, now: Option<&str>, o: &SessionOptions) -> SessionResult {
        run_session(&self.cluster(now), o).unwrap()
    }
}

fn allocated(r: &SessionResult) -> Vec<(String, bool)> {
    r.allocated
        .iter()
        .map(|a| (a.pod_group.clone(), a.pipelined))
        .collect()
}

fn evicted(r: &SessionResult) -> Vec<(String, Action, Option<String>)> {
    r.evicted
        .iter()
        .map(|e| (e.pod_group.clone(), e.action, e.by.clone()))
        .collect()
}

fn pending(r: &SessionResult) -> Vec<(String, Reason)> {
    r.pending
        .iter()
        .map(|p| (p.pod_group.clone(), p.reason))
        .collect()
}

fn s(x: &str) -> String {
    x.to_string()
}

#[test]
fn gang_is_all_or_nothing() {
    // "Don't allocate gang job if not all tasks are allocatable": 2×2 GPUs on one 2-GPU node.
    let mut sc = Sc::default();
    sc.queue("q", None, 2.0, 1.0, -1.0, 100).node("n1", 2);
    sc.job("ns/g", "q", job("train", vec![(2.0, None), (2.0, None)]));
    let r = sc.run();
    assert!(r.allocated.is_empty());
    assert_eq!(pending(&r), [(s("ns/g"), Reason::Unschedulable)]);
    assert!(
        r.pending[0].message.ends_with(
            "(queue q gpu: deserved 2, fair share 2, allocated 0, requested 4, limit unlimited)"
        ),
        "{}",
        r.pending[0].message
    );
}

#[test]
fn gang_spans_nodes() {
    // "Allocate build gang job on 2 nodes".
    let mut sc = Sc::default();
    sc.queue("q", None, 4.0, 1.0, -1.0, 100)
        .node("n1", 2)
        .node("n2", 2);
    sc.job("ns/g", "q", job("build", vec![(2.0, None), (2.0, None)]));
    let r = sc.run();
    assert_eq!(allocated(&r), [(s("ns/g"), false)]);
    let nodes: Vec<Option<String>> = r.allocated[0].pods.iter().map(|p| p.1.clone()).collect();
    assert_eq!(nodes, [Some(s("n1")), Some(s("n2"))]);
}

#[test]
fn allocate_is_work_conserving_d08() {
    // Two queues with deserved 1 each on 4 GPUs get 2 GPUs each.
    let mut sc = Sc::default();
    sc.queue("q1", None, 1.0, 0.0, -1.0, 100)
        .queue("q2", None, 1.0, 0.0, -1.0, 100)
        .node("n1", 4);
    for i in 0..2 {
        sc.job(&format!("ns/a{i}"), "q1", job("train", vec![(1.0, None)]));
        sc.job(&format!("ns/b{i}"), "q2", job("train", vec![(1.0, None)]));
    }
    let r = sc.run();
    assert_eq!(r.allocated.len(), 4);
    assert!(r.pending.is_empty());
}

#[test]
fn over_limit_at_the_leaf() {
    let mut sc = Sc::default();
    sc.queue("q", None, 1.0, 1.0, 2.0, 100).node("n1", 8);
    sc.job("ns/r", "q", job("train", vec![(2.0, Some("n1"))]));
    sc.job("ns/p", "q", job("train", vec![(1.0, None)]));
    let r = sc.run();
    assert_eq!(pending(&r), [(s("ns/p"), Reason::OverLimit)]);
    assert_eq!(
        r.pending[0].message,
        "queue q would exceed its gpu limit: allocated 2 + requested 1 > limit 2 (deserved 1)"
    );
    let d = r.pending[0].details.as_ref().unwrap();
    assert_eq!(
        (d.used, d.requested, d.limit),
        (2_000_000_000, 1_000_000_000, Some(2_000_000_000))
    );
}

#[test]
fn limit_zero_blocks_every_request() {
    let mut sc = Sc::default();
    sc.queue("q", None, 0.0, 1.0, 0.0, 100).node("n1", 8);
    sc.job("ns/p", "q", job("train", vec![(1.0, None)]));
    assert_eq!(pending(&sc.run()), [(s("ns/p"), Reason::OverLimit)]);
}

#[test]
fn non_preemptible_checked_at_every_ancestor_d11() {
    // Department deserved 1 blocks an interactive 2-GPU job even though the project has 2.
    let mut sc = Sc::default();
    sc.queue("dep", None, 1.0, 1.0, -1.0, 100)
        .queue("proj", Some("dep"), 2.0, 1.0, -1.0, 100)
        .node("n1", 8);
    sc.job("ns/b", "proj", job("build", vec![(2.0, None)]));
    let r = sc.run();
    assert_eq!(pending(&r), [(s("ns/b"), Reason::NonPreemptibleOverQuota)]);
    let d = r.pending[0].details.as_ref().unwrap();
    assert_eq!(d.queue, "dep");
    assert_eq!(d.deserved, Some(1_000_000_000));
    // A preemptible job of the same size runs over quota.
    let mut sc = Sc::default();
    sc.queue("dep", None, 1.0, 1.0, -1.0, 100)
        .queue("proj", Some("dep"), 2.0, 1.0, -1.0, 100)
        .node("n1", 8);
    sc.job("ns/t", "proj", job("train", vec![(2.0, None)]));
    assert_eq!(allocated(&sc.run()), [(s("ns/t"), false)]);
}

#[test]
fn queue_does_not_exist() {
    let mut sc = Sc::default();
    sc.queue("q", None, 1.0, 1.0, -1.0, 100).node("n1", 8);
    sc.job("ns/x", "nope", job("train", vec![(1.0, None)]));
    let r = sc.run();
    assert_eq!(pending(&r), [(s("ns/x"), Reason::QueueDoesNotExist)]);
}

fn reclaim_base() -> Sc {
    let mut sc = Sc::default();
    sc.queue("team-a", None, 2.0, 1.0, -1.0, 100)
        .queue("team-b", None, 2.0, 1.0, -1.0, 100)
        .node("n1", 4);
    for i in 0..4 {
        sc.job(
            &format!("a/j{i}"),
            "team-a",
            job("train", vec![(1.0, Some("n1"))]),
        );
    }
    sc
}

#[test]
fn reclaim_takes_over_quota_newest_first() {
    let mut sc = reclaim_base();
    sc.job(
        "b/g",
        "team-b",
        job("train", vec![(1.0, None), (1.0, None)]),
    );
    let r = sc.run();
    assert_eq!(
        evicted(&r),
        [
            (s("a/j3"), Action::Reclaim, Some(s("b/g"))),
            (s("a/j2"), Action::Reclaim, Some(s("b/g")))
        ]
    );
    assert_eq!(allocated(&r), [(s("b/g"), true)]);
    assert!(r.pending.is_empty());
}

#[test]
fn reclaimer_may_not_exceed_its_fair_share() {
    // team-b asks 3 > FS 2: CanReclaimResources fails.
    let mut sc = reclaim_base();
    sc.job(
        "b/g",
        "team-b",
        job("train", vec![(1.0, None), (1.0, None), (1.0, None)]),
    );
    let r = sc.run();
    assert!(r.evicted.is_empty());
    assert_eq!(pending(&r), [(s("b/g"), Reason::Unschedulable)]);
    assert!(
        r.pending[0].message.contains("exceeds its fair share 2"),
        "{}",
        r.pending[0].message
    );
}

#[test]
fn last_victim_may_go_below_quota_b02() {
    // A 20-GPU gang is evicted whole to seat a 10-GPU job.
    let mut sc = Sc::default();
    sc.queue("q0", None, 10.0, 1.0, -1.0, 100)
        .queue("q1", None, 10.0, 1.0, -1.0, 100);
    sc.node("n1", 10).node("n2", 10);
    let mut pods = vec![(1.0, Some("n1")); 10];
    pods.extend(vec![(1.0, Some("n2")); 10]);
    sc.job("a/big", "q0", job("train", pods));
    sc.job("b/j", "q1", job("train", vec![(10.0, None)]));
    let r = sc.run();
    assert_eq!(evicted(&r), [(s("a/big"), Action::Reclaim, Some(s("b/j")))]);
    assert_eq!(allocated(&r), [(s("b/j"), true)]);
}

#[test]
fn non_preemptible_jobs_are_never_victims_b16() {
    let mut sc = Sc::default();
    sc.queue("team-a", None, 2.0, 1.0, -1.0, 100)
        .queue("team-b", None, 2.0, 1.0, -1.0, 100)
        .node("n1", 4);
    for i in 0..4 {
        sc.job(
            &format!("a/j{i}"),
            "team-a",
            job("inference", vec![(1.0, Some("n1"))]),
        );
    }
    sc.job("b/g", "team-b", job("train", vec![(1.0, None)]));
    let r = sc.run();
    assert!(r.evicted.is_empty());
    assert_eq!(pending(&r), [(s("b/g"), Reason::Unschedulable)]);
}

#[test]
fn unlimited_deserved_queue_is_never_reclaimed_b23() {
    let mut sc = Sc::default();
    sc.queue("free", None, -1.0, 1.0, -1.0, 100)
        .queue("team-b", None, 2.0, 1.0, -1.0, 100)
        .node("n1", 4);
    for i in 0..4 {
        sc.job(
            &format!("a/j{i}"),
            "free",
            job("train", vec![(1.0, Some("n1"))]),
        );
    }
    sc.job("b/g", "team-b", job("train", vec![(1.0, None)]));
    assert!(sc.run().evicted.is_empty());
}

#[test]
fn reclaim_min_runtime_protects_victims() {
    let mut sc = Sc::default();
    sc.yaml.push_str("---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: team-a}\nspec:\n  reclaimMinRuntime: 1h\n  resources:\n    gpu: {quota: 2, overQuotaWeight: 1, limit: -1}\n");
    sc.queue("team-b", None, 2.0, 1.0, -1.0, 100).node("n1", 4);
    for i in 0..4 {
        let mut j = job("train", vec![(1.0, Some("n1"))]);
        j.start = "2025-01-01T09:30:00Z";
        sc.job(&format!("a/j{i}"), "team-a", j);
    }
    sc.job("b/g", "team-b", job("train", vec![(1.0, None)]));
    // 30 minutes after start: protected.
    let r = sc.run_with(Some("2025-01-01T10:00:00Z"), &SessionOptions::default());
    assert!(r.evicted.is_empty());
    // Two hours after start: reclaimable.
    let r = sc.run_with(Some("2025-01-01T11:30:00Z"), &SessionOptions::default());
    assert_eq!(evicted(&r), [(s("a/j3"), Action::Reclaim, Some(s("b/g")))]);
}

#[test]
fn preemption_delay_not_elapsed() {
    let mut sc = reclaim_base();
    let mut j = job("train", vec![(1.0, None)]);
    j.extra_spec = ", preemptionDelay: 10m";
    sc.job("b/g", "team-b", j);
    // The PodGroup was created at 00:05 (its sequence number); 5 minutes later.
    let r = sc.run_with(Some("2025-01-01T00:10:00Z"), &SessionOptions::default());
    assert!(r.evicted.is_empty());
    assert_eq!(pending(&r), [(s("b/g"), Reason::PreemptionDelayNotElapsed)]);
    // 30 minutes later the delay has elapsed.
    let r = sc.run_with(Some("2025-01-01T00:35:00Z"), &SessionOptions::default());
    assert_eq!(evicted(&r), [(s("a/j3"), Action::Reclaim, Some(s("b/g")))]);
}

#[test]
fn preempt_within_queue_by_priority() {
    // Inference (125) preempts train (50) in its own queue.
    let mut sc = Sc::default();
    sc.queue("q", None, 2.0, 1.0, -1.0, 100).node("n1", 2);
    sc.job("ns/t0", "q", job("train", vec![(1.0, Some("n1"))]));
    sc.job("ns/t1", "q", job("train", vec![(1.0, Some("n1"))]));
    sc.job("ns/inf", "q", job("inference", vec![(1.0, None)]));
    let r = sc.run();
    assert_eq!(
        evicted(&r),
        [(s("ns/t1"), Action::Preempt, Some(s("ns/inf")))]
    );
    assert_eq!(allocated(&r), [(s("ns/inf"), true)]);
}

#[test]
fn equal_or_non_preemptible_priorities_never_preempt() {
    // Inference does not preempt build (non-preemptible); train does not preempt train.
    let mut sc = Sc::default();
    sc.queue("q", None, 2.0, 1.0, -1.0, 100).node("n1", 2);
    sc.job("ns/b0", "q", job("build", vec![(1.0, Some("n1"))]));
    sc.job("ns/t0", "q", job("train", vec![(1.0, Some("n1"))]));
    sc.job("ns/t1", "q", job("train", vec![(1.0, None)]));
    let r = sc.run();
    assert!(r.evicted.is_empty());
    assert_eq!(pending(&r), [(s("ns/t1"), Reason::Unschedulable)]);
}

#[test]
fn preemption_swaps_train_for_interactive_under_a_limit_d12() {
    let mut sc = Sc::default();
    sc.queue("q", None, 2.0, 1.0, 2.0, 100).node("n1", 8);
    sc.job("ns/t0", "q", job("train", vec![(1.0, Some("n1"))]));
    sc.job("ns/t1", "q", job("train", vec![(1.0, Some("n1"))]));
    sc.job("ns/b", "q", job("build", vec![(1.0, None)]));
    let r = sc.run();
    assert_eq!(
        evicted(&r),
        [(s("ns/t1"), Action::Preempt, Some(s("ns/b")))]
    );
    // Pipelined onto the train's releasing GPU although a GPU is idle: KAI's preempt solver
    // allocates the preemptor pipeline-only (issue "Reliability"; upstream allocate test
    // "interactive after train when over-quota" expects one pipeline action).
    assert_eq!(allocated(&r), [(s("ns/b"), true)]);
}

fn stale(grace: Option<&str>, stale_since: &str, succeeded: bool) -> Sc {
    let mut sc = Sc::default();
    sc.queue("q", None, 4.0, 1.0, -1.0, 100).node("n1", 4);
    let mut pods = vec![(1.0, Some("n1"))];
    pods.push((1.0, if succeeded { Some("succeeded") } else { None }));
    let mut j = job("train", pods);
    let spec = grace
        .map(|g| format!(", stalenessGracePeriod: {g}"))
        .unwrap_or_default();
    let ann = format!("kai.scheduler/stale-podgroup-timestamp: \"{stale_since}\"");
    j.extra_spec = Box::leak(spec.into_boxed_str());
    j.annotations = Box::leak(ann.into_boxed_str());
    sc.job("ns/g", "q", j);
    // The pending pod cannot start: another job holds the rest of the node.
    sc.job("ns/other", "q", job("build", vec![(3.0, Some("n1"))]));
    sc
}

#[test]
fn stale_gang_eviction_grace_periods() {
    let now = Some("2025-01-01T01:00:00Z");
    let o = SessionOptions::default();
    // Grace 10s, stale for 30s: evicted, `by` null.
    let r = stale(Some("10s"), "2025-01-01T00:59:30Z", false).run_with(now, &o);
    assert_eq!(evicted(&r), [(s("ns/g"), Action::StaleGang, None)]);
    // Grace 120s, stale for 61s: kept.
    let r = stale(Some("120s"), "2025-01-01T00:58:59Z", false).run_with(now, &o);
    assert!(r.evicted.is_empty());
    // Default 60s, stale for 61s: evicted.
    let r = stale(None, "2025-01-01T00:58:59Z", false).run_with(now, &o);
    assert_eq!(evicted(&r), [(s("ns/g"), Action::StaleGang, None)]);
    // Negative grace: never.
    let r = stale(Some("-1s"), "2024-01-01T00:00:00Z", false).run_with(now, &o);
    assert!(r.evicted.is_empty());
    // A Succeeded pod means the gang is finishing, not stale.
    let r = stale(Some("0s"), "2024-01-01T00:00:00Z", true).run_with(now, &o);
    assert!(r.evicted.is_empty());
}

#[test]
fn consolidation_moves_a_job_to_fit_a_gang() {
    // Two 2-GPU nodes, one 1-GPU train job on each; a 2-GPU job needs one node whole.
    let mut sc = Sc::default();
    sc.queue("q", None, 4.0, 1.0, -1.0, 100)
        .node("n1", 2)
        .node("n2", 2);
    sc.job("ns/a", "q", job("train", vec![(1.0, Some("n1"))]));
    sc.job("ns/b", "q", job("train", vec![(1.0, Some("n2"))]));
    sc.job("ns/big", "q", job("train", vec![(2.0, None)]));
    let r = sc.run();
    assert_eq!(
        evicted(&r),
        [(s("ns/b"), Action::Consolidation, Some(s("ns/big")))]
    );
    let big = r
        .allocated
        .iter()
        .find(|a| a.pod_group == "ns/big")
        .unwrap();
    assert!(big.pipelined);
    assert_eq!(big.pods[0].1.as_deref(), Some("n2"));
    let moved = r.allocated.iter().find(|a| a.pod_group == "ns/b").unwrap();
    assert_eq!(moved.pods[0].1.as_deref(), Some("n1"));
}

#[test]
fn gpu_fractions_share_one_device() {
    let mut sc = Sc::default();
    sc.queue("q", None, 1.0, 1.0, -1.0, 100).node("n1", 1);
    sc.job("ns/h0", "q", job("train", vec![(0.5, None)]));
    sc.job("ns/h1", "q", job("train", vec![(0.5, None)]));
    sc.job("ns/h2", "q", job("train", vec![(0.5, None)]));
    let r = sc.run();
    assert_eq!(allocated(&r), [(s("ns/h0"), false), (s("ns/h1"), false)]);
    assert_eq!(pending(&r), [(s("ns/h2"), Reason::Unschedulable)]);
}

#[test]
fn binpack_and_spread_node_scoring() {
    let mut sc = Sc::default();
    sc.queue("q", None, 8.0, 1.0, -1.0, 100)
        .node("n1", 4)
        .node("n2", 4);
    sc.job("ns/r", "q", job("train", vec![(2.0, Some("n2"))]));
    sc.job("ns/p", "q", job("train", vec![(1.0, None)]));
    let node = |p: Placement| {
        let o = SessionOptions::default().with_placement(p);
        sc.run_with(None, &o).allocated[0].pods[0].1.clone()
    };
    assert_eq!(node(Placement::Binpack).as_deref(), Some("n2"));
    assert_eq!(node(Placement::Spread).as_deref(), Some("n1"));
}

#[test]
fn elastic_extras_are_reclaimed_before_the_core_b50() {
    let mut sc = Sc::default();
    sc.queue("team-a", None, 1.0, 0.0, -1.0, 100)
        .queue("team-b", None, 2.0, 1.0, -1.0, 100)
        .node("n1", 3);
    let mut j = job("train", vec![(1.0, Some("n1")); 3]);
    j.min = 1;
    sc.job("a/elastic", "team-a", j);
    sc.job("b/j", "team-b", job("train", vec![(2.0, None)]));
    let r = sc.run();
    assert_eq!(
        evicted(&r),
        [(s("a/elastic"), Action::Reclaim, Some(s("b/j")))]
    );
    // The core pod keeps running: the job is not stale and the reclaimer is seated.
    assert_eq!(allocated(&r), [(s("b/j"), true)]);
}

#[test]
fn fairshare_json_contract() {
    let mut sc = Sc::default();
    sc.queue("q1", None, 12.0, 12.0, -1.0, 100)
        .queue("q2", None, 7.0, 7.0, -1.0, 100)
        .queue("q3", None, 2.0, 2.0, 2.0, 100);
    sc.job("ns/a", "q1", job("train", vec![(32.0, None), (0.55, None)]));
    sc.job("ns/b", "q2", job("train", vec![(9.0, None), (0.5, None)]));
    sc.job("ns/c", "q3", job("train", vec![(0.5, None)]));
    let imported = import_str("s.yaml", &sc.yaml).unwrap();
    let total = gpuquota_rank::snapshot::parse_total("gpu=45,cpu=8,memory=64Gi").unwrap();
    let c = gpuquota_rank::testkit::cluster(
        &imported.model,
        &BuildOptions::default().with_total(total),
    )
    .unwrap();
    let v =
        serde_json::to_value(fairshare_report(&c, &DivisionOptions::default()).unwrap()).unwrap();
    let q1 = &v["queues"]["q1"]["gpu"];
    assert_eq!(q1["fairShare"], "32.55");
    assert_eq!(q1["deserved"], "12");
    assert_eq!(q1["requested"], "32.55");
    assert_eq!(q1["allocated"], "0");
    assert_eq!(q1["limit"], Value::Null);
    assert_eq!(v["queues"]["q2"]["gpu"]["fairShare"], "9.5");
    assert_eq!(v["queues"]["q3"]["gpu"]["fairShare"], "0.5");
    assert_eq!(v["queues"]["q3"]["gpu"]["limit"], "2");
    // cpu/memory absent from the queue: unlimited deserved and limit, no demand.
    // Unlimited deserved prints as KAI's sentinel "-1" (Queue CRD, queue metrics).
    assert_eq!(v["queues"]["q1"]["cpu"]["deserved"], "-1");
    assert_eq!(v["queues"]["q1"]["memory"]["deserved"], "-1");
    assert_eq!(v["queues"]["q1"]["cpu"]["limit"], Value::Null);
    assert_eq!(v["queues"]["q1"]["cpu"]["fairShare"], "0");
}

#[test]
fn fairshare_json_quantities() {
    let yaml = r#"
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: q}
spec:
  resources:
    gpu: {quota: 1, overQuotaWeight: 1, limit: -1}
    cpu: {quota: 500, overQuotaWeight: 1, limit: 2000}
    memory: {quota: 1000, overQuotaWeight: 1, limit: -1}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns, labels: {kai.scheduler/queue: q}}
spec:
  nodeName: node-a
  containers: [{name: c, resources: {requests: {cpu: 250m, memory: 1Gi}}}]
status: {phase: Running}
---
apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {allocatable: {cpu: "4", memory: 16Gi}}
"#;
    let imported = import_str("s.yaml", yaml).unwrap();
    let c = gpuquota_rank::testkit::cluster(&imported.model, &BuildOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let v =
        serde_json::to_value(fairshare_report(&c, &DivisionOptions::default()).unwrap()).unwrap();
    let cpu = &v["queues"]["q"]["cpu"];
    assert_eq!(cpu["deserved"], "500m");
    assert_eq!(cpu["limit"], "2");
    assert_eq!(cpu["allocated"], "250m");
    assert_eq!(cpu["fairShare"], "250m");
    let mem = &v["queues"]["q"]["memory"];
    assert_eq!(mem["deserved"], "1G");
    assert_eq!(mem["allocated"], "1Gi");
    assert_eq!(mem["fairShare"], "1Gi");
}

#[test]
fn schedule_json_contract() {
    let mut sc = reclaim_base();
    sc.job("b/g", "team-b", job("train", vec![(1.0, None)]));
    let v = serde_json::to_value(schedule_report(&sc.run())).unwrap();
    assert_eq!(
        v,
        serde_json::json!({
            "allocated": [{"podGroup": "b/g", "queue": "team-b", "pipelined": true,
                           "pods": [{"pod": "b/g-0", "node": "n1"}]}],
            "evicted": [{"podGroup": "a/j3", "queue": "team-a", "action": "reclaim", "by": "b/g"}],
            "pending": []
        })
    );
}

#[test]
fn corrected_mode_changes_only_the_quirks() {
    let mut sc = Sc::default();
    sc.queue("a", None, 0.0, 1.0, 1.7, 100)
        .queue("b", None, 0.0, 1.0, -1.0, 100);
    sc.job("ns/a", "a", job("train", vec![(0.85, None), (0.85, None)]));
    sc.job("ns/b", "b", job("train", vec![(5.0, None)]));
    let imported = import_str("s.yaml", &sc.yaml).unwrap();
    let total = gpuquota_rank::snapshot::parse_total("gpu=3").unwrap();
    let c = gpuquota_rank::testkit::cluster(
        &imported.model,
        &BuildOptions::default().with_total(total),
    )
    .unwrap();
    let kai =
        serde_json::to_value(fairshare_report(&c, &DivisionOptions::default()).unwrap()).unwrap();
    assert_eq!(kai["queues"]["a"]["gpu"]["fairShare"], "2");
    assert_eq!(kai["queues"]["b"]["gpu"]["fairShare"], "1");
    let fixed = serde_json::to_value(
        fairshare_report(&c, &DivisionOptions::default().with_mode(Mode::Corrected)).unwrap(),
    )
    .unwrap();
    assert_eq!(fixed["queues"]["a"]["gpu"]["fairShare"], "1.7");
    assert_eq!(fixed["queues"]["b"]["gpu"]["fairShare"], "1.3");
}

#[test]
fn now_defaults_to_the_latest_timestamp() {
    let sc = reclaim_base();
    let c = sc.cluster(None);
    // The last object created is a/j3 at 00:05 (queues 1–2, jobs 3–6 in sequence).
    assert_eq!(c.now.to_string(), "2025-01-01T00:06:00Z");
}

#[test]
fn non_preemptible_message_names_the_department() {
    let mut sc = Sc::default();
    sc.queue("dep", None, 1.0, 1.0, -1.0, 100)
        .queue("proj", Some("dep"), 2.0, 1.0, -1.0, 100)
        .node("n1", 8);
    sc.job("ns/b", "proj", job("build", vec![(2.0, None)]));
    let r = sc.run();
    assert_eq!(
        r.pending[0].message,
        "non-preemptible jobs may only use deserved quota: queue dep has 0 gpu of non-preemptible work allocated + requested 2 > deserved 1 (limit unlimited)"
    );
}

#[test]
fn time_based_fairshare_from_a_usage_file() {
    // Time-based fairshare: 16 GPUs, k = 1, U_a = .6, U_b = .1 → 5 / 11.
    let mut sc = Sc::default();
    sc.queue("a", None, 0.0, 1.0, -1.0, 100)
        .queue("b", None, 0.0, 1.0, -1.0, 100);
    sc.job("ns/a", "a", job("train", vec![(16.0, None)]));
    sc.job("ns/b", "b", job("train", vec![(16.0, None)]));
    let imported = import_str("s.yaml", &sc.yaml).unwrap();
    let total = gpuquota_rank::snapshot::parse_total("gpu=16").unwrap();
    let mut c = gpuquota_rank::testkit::cluster(
        &imported.model,
        &BuildOptions::default().with_total(total),
    )
    .unwrap();
    let usage = gpuquota_rank::usage::UsageInput::parse(
        "kValue: 1\nqueues:\n  a: {gpu: 0.6}\n  b: {gpu: 0.1}\n",
    )
    .unwrap();
    for (q, u) in usage.normalized(c.now).unwrap() {
        let i = c.hierarchy.find(&q).unwrap();
        c.hierarchy.set_usage(i, u).unwrap();
    }
    let v =
        serde_json::to_value(fairshare_report(&c, &DivisionOptions::default()).unwrap()).unwrap();
    assert_eq!(v["queues"]["a"]["gpu"]["fairShare"], "5");
    assert_eq!(v["queues"]["b"]["gpu"]["fairShare"], "11");
}

#[test]
fn runai_weight_follows_quota_when_over_quota_weight_is_disabled() {
    // Run:ai departments: 100 GPUs, p1 20/60, p2 30/80, p3 10/5 (written weights 1 are replaced by
    // quota).
    let mut sc = Sc::default();
    sc.queue("dept", None, 100.0, 1.0, -1.0, 100)
        .queue("p1", Some("dept"), 20.0, 1.0, -1.0, 100)
        .queue("p2", Some("dept"), 30.0, 1.0, -1.0, 100)
        .queue("p3", Some("dept"), 10.0, 1.0, -1.0, 100);
    sc.job("ns/a", "p1", job("train", vec![(60.0, None)]));
    sc.job("ns/b", "p2", job("train", vec![(80.0, None)]));
    sc.job("ns/c", "p3", job("train", vec![(5.0, None)]));
    let imported = import_str("s.yaml", &sc.yaml).unwrap();
    let total = gpuquota_rank::snapshot::parse_total("gpu=100").unwrap();
    let mut c = gpuquota_rank::testkit::cluster(
        &imported.model,
        &BuildOptions::default().with_total(total),
    )
    .unwrap();
    gpuquota_rank::runai::weight_follows_quota(&mut c.hierarchy, false);
    let v =
        serde_json::to_value(fairshare_report(&c, &DivisionOptions::default()).unwrap()).unwrap();
    let fs = |q: &str| {
        v["queues"][q]["gpu"]["fairShare"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!((fs("p1"), fs("p2"), fs("p3")), (s("38"), s("57"), s("5")));
    // With over-quota weight enabled the written weights (1 each) split the 45 evenly.
    let mut c = gpuquota_rank::testkit::cluster(
        &imported.model,
        &BuildOptions::default().with_total(total),
    )
    .unwrap();
    gpuquota_rank::runai::weight_follows_quota(&mut c.hierarchy, true);
    let v =
        serde_json::to_value(fairshare_report(&c, &DivisionOptions::default()).unwrap()).unwrap();
    let fs = |q: &str| {
        v["queues"][q]["gpu"]["fairShare"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!((fs("p1"), fs("p2"), fs("p3")), (s("43"), s("52"), s("5")));
}

#[test]
fn runai_department_quota_vs_its_projects() {
    let mut sc = Sc::default();
    sc.queue("dep", None, 1.0, 1.0, -1.0, 100)
        .queue("p1", Some("dep"), 2.0, 1.0, -1.0, 100)
        .queue("p2", Some("dep"), 1.0, 1.0, -1.0, 100);
    let c = sc.cluster(None);
    let over = gpuquota_rank::runai::department_overcommit(&c.hierarchy);
    assert_eq!(over.len(), 1);
    assert_eq!(over[0].department, "dep");
    assert_eq!(over[0].department_quota, 1_000_000_000);
    assert_eq!(over[0].projects_quota, Some(3_000_000_000));
}

#[test]
fn runai_node_pools_are_separate_divisions() {
    let mut sc = Sc::default();
    sc.queue("q", None, 2.0, 1.0, -1.0, 100);
    for (name, pool) in [("n-a", "pool-a"), ("n-b", "pool-b")] {
        let _ = write!(
            sc.yaml,
            "---\napiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{kai.scheduler/node-pool: {pool}}}}}\nstatus: {{allocatable: {{nvidia.com/gpu: \"4\"}}}}\n"
        );
    }
    let imported = import_str("s.yaml", &sc.yaml).unwrap();
    assert_eq!(
        gpuquota_rank::runai::node_pools(&imported.model),
        ["pool-a", "pool-b"]
    );
    let view = gpuquota_rank::runai::node_pool_view(&imported.model, "pool-a");
    assert_eq!(view.nodes.keys().collect::<Vec<_>>(), ["n-a"]);
    let c = gpuquota_rank::testkit::cluster(&view, &BuildOptions::default()).unwrap();
    assert_eq!(c.totals[Resource::Gpu], 4_000_000_000);
}

#[test]
fn rank_names_map_to_priorities_in_order() {
    use gpuquota_rank::runai::rank_priority;
    assert!(rank_priority("very-high") > rank_priority("high"));
    assert!(rank_priority("high") > rank_priority("MediumLow"));
    assert_eq!(rank_priority("MediumLow"), Some(100));
}

#[test]
fn victims_alternate_between_queues_as_their_shares_drop() {
    // q0 and q1 both run 3 (FS 2 each); a 2-GPU reclaimer in q2 takes one from each: after
    // the first victim the other queue is the more over-served one.
    let mut sc = Sc::default();
    sc.queue("q0", None, 1.0, 1.0, -1.0, 100)
        .queue("q1", None, 1.0, 1.0, -1.0, 100)
        .queue("q2", None, 2.0, 1.0, -1.0, 100)
        .node("n1", 6);
    for i in 0..3 {
        sc.job(
            &format!("a/j{i}"),
            "q0",
            job("train", vec![(1.0, Some("n1"))]),
        );
        sc.job(
            &format!("b/j{i}"),
            "q1",
            job("train", vec![(1.0, Some("n1"))]),
        );
    }
    sc.job("c/g", "q2", job("train", vec![(1.0, None), (1.0, None)]));
    let r = sc.run();
    assert_eq!(
        evicted(&r),
        [
            (s("b/j2"), Action::Reclaim, Some(s("c/g"))),
            (s("a/j2"), Action::Reclaim, Some(s("c/g")))
        ]
    );
}

#[test]
fn pods_of_other_schedulers_hold_resources_but_are_not_jobs() {
    let mut sc = Sc::default();
    sc.queue("q", None, 4.0, 1.0, -1.0, 100).node("n1", 4);
    sc.yaml.push_str(
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: other, namespace: sys}\nspec:\n  schedulerName: default-scheduler\n  nodeName: n1\n  containers: [{name: c, resources: {limits: {nvidia.com/gpu: \"3\"}}}]\nstatus: {phase: Running}\n",
    );
    sc.job("ns/p", "q", job("train", vec![(2.0, None)]));
    let c = sc.cluster(None);
    // The divided total leaves out the other scheduler's 3 GPUs.
    assert_eq!(c.totals[Resource::Gpu], 1_000_000_000);
    let r = run_session(&c, &SessionOptions::default()).unwrap();
    assert!(r.allocated.is_empty());
    assert_eq!(pending(&r), [(s("ns/p"), Reason::Unschedulable)]);
}

#[test]
fn missing_gpu_block_means_no_quota_and_no_limit() {
    let yaml = "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q}\nspec: {}\n";
    let imported = import_str("s.yaml", yaml).unwrap();
    let c = gpuquota_rank::testkit::cluster_unvalidated(&imported.model, &BuildOptions::default())
        .unwrap();
    let p = c.hierarchy.queues()[0].resources[0];
    assert_eq!((p.deserved, p.weight, p.limit), (Some(0), 0, None));
    let cpu = c.hierarchy.queues()[0].resources[1];
    assert_eq!(
        (cpu.deserved, cpu.weight, cpu.limit),
        (None, 1_000_000_000, None)
    );
}

#[test]
fn mig_instances_count_as_gpu_equivalents_and_place_as_their_own_resource() {
    let yaml = r#"
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: nb}
spec: {resources: {gpu: {quota: 2, overQuotaWeight: 1, limit: -1}}}
---
apiVersion: v1
kind: Node
metadata: {name: rtx-b}
status: {allocatable: {nvidia.com/gpu: "6", nvidia.com/mig-1g.24gb: "8", cpu: "64", memory: 512Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: nb-0, namespace: eng, labels: {kai.scheduler/queue: nb}}
spec: {containers: [{name: c, resources: {limits: {nvidia.com/mig-1g.24gb: "2"}}}]}
status: {phase: Pending}
"#;
    let imported = import_str("s.yaml", yaml).unwrap();
    let c = gpuquota_rank::testkit::cluster(&imported.model, &BuildOptions::default()).unwrap();
    // 6 whole GPUs + 8 instances × g = 1 (KAI's GetSumGPUs).
    assert_eq!(c.totals[Resource::Gpu], 14_000_000_000);
    let v =
        serde_json::to_value(fairshare_report(&c, &DivisionOptions::default()).unwrap()).unwrap();
    assert_eq!(v["queues"]["nb"]["gpu"]["requested"], "2");
    let r = run_session(&c, &SessionOptions::default()).unwrap();
    assert_eq!(allocated(&r), [(s("eng/nb-0"), false)]);
    assert_eq!(r.allocated[0].pods[0].1.as_deref(), Some("rtx-b"));
}

#[test]
fn queue_cycles_are_reported_not_looped() {
    let yaml = "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: root}\nspec: {}\n---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: a}\nspec: {parentQueue: b}\n---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: b}\nspec: {parentQueue: a}\n---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: c}\nspec: {parentQueue: a}\n";
    let imported = import_str("s.yaml", yaml).unwrap();
    let err =
        gpuquota_rank::testkit::cluster_unvalidated(&imported.model, &BuildOptions::default())
            .unwrap_err();
    assert!(err.to_string().contains("loops back"), "{err}");
}

#[test]
fn usage_of_a_department_is_the_sum_of_its_projects() {
    let mut sc = Sc::default();
    sc.queue("d1", None, 0.0, 1.0, -1.0, 100)
        .queue("d2", None, 0.0, 1.0, -1.0, 100)
        .queue("a", Some("d1"), 0.0, 1.0, -1.0, 100)
        .queue("b", Some("d1"), 0.0, 1.0, -1.0, 100)
        .queue("c", Some("d2"), 0.0, 1.0, -1.0, 100);
    sc.job("ns/a", "a", job("train", vec![(16.0, None)]));
    sc.job("ns/c", "c", job("train", vec![(16.0, None)]));
    let imported = import_str("s.yaml", &sc.yaml).unwrap();
    let total = gpuquota_rank::snapshot::parse_total("gpu=16").unwrap();
    let mut c = gpuquota_rank::testkit::cluster(
        &imported.model,
        &BuildOptions::default().with_total(total),
    )
    .unwrap();
    let usage = gpuquota_rank::usage::UsageInput::parse(
        "queues:\n  a: {gpu: 0.3}\n  b: {gpu: 0.3}\n  c: {gpu: 0.1}\n  gone: {gpu: 0.5}\n",
    )
    .unwrap();
    let unknown = usage.apply(&mut c.hierarchy, c.now).unwrap();
    assert_eq!(unknown, ["gone"]);
    let d1 = c.hierarchy.find("d1").unwrap();
    assert_eq!(c.hierarchy.queue(d1).resources[0].usage, 600_000_000);
    // d1 at .6 and d2 at .1 split 16 as in the time-based fairshare test above: 5 / 11.
    let v =
        serde_json::to_value(fairshare_report(&c, &DivisionOptions::default()).unwrap()).unwrap();
    assert_eq!(v["queues"]["d1"]["gpu"]["fairShare"], "5");
    assert_eq!(v["queues"]["d2"]["gpu"]["fairShare"], "11");
}
