//! Upstream KAI action tests, encoded with the defaults of KAI's test harness
//! (`pkg/scheduler/test_utils`): queues get CPU/memory quota and limit -1, weight 1; a test
//! without departments puts every queue under a department `default` with GPU quota -1 and
//! weight = quota (-1); every job is a gang of all its tasks; jobs are created in list order
//! after a stable sort by priority (descending). Each test names the upstream file and test.

use std::fmt::Write as _;

use gpuquota_model::import_str;
use gpuquota_rank::report::schedule_report;
use gpuquota_rank::session::SessionOptions;
use gpuquota_rank::snapshot::BuildOptions;
use gpuquota_rank::testkit::run_session;
use serde_json::{Value, json};

/// A KAI harness topology: `queue(name, parent, deservedGPUs, weight)`, `node(name, gpus)`,
/// `job(name, queue, priority, gpus per task, tasks: node or None)`.
/// `(name, queue, priority, gpus per task, task nodes)`.
type JobRow = (String, String, i32, f64, Vec<Option<String>>);

#[derive(Default)]
struct Topo {
    queues: Vec<(String, Option<String>, f64, f64)>,
    departments: Vec<(String, f64)>,
    nodes: Vec<(String, u32)>,
    jobs: Vec<JobRow>,
    /// `MaxAllowedGPUs` per queue (limit); absent = -1.
    limits: Vec<(String, f64)>,
}

impl Topo {
    fn queue(mut self, name: &str, parent: Option<&str>, deserved: f64, weight: f64) -> Self {
        self.queues
            .push((name.into(), parent.map(Into::into), deserved, weight));
        self
    }
    fn limit(mut self, name: &str, gpus: f64) -> Self {
        self.limits.push((name.into(), gpus));
        self
    }
    fn department(mut self, name: &str, deserved: f64) -> Self {
        self.departments.push((name.into(), deserved));
        self
    }
    fn node(mut self, name: &str, gpus: u32) -> Self {
        self.nodes.push((name.into(), gpus));
        self
    }
    fn job(
        mut self,
        name: &str,
        queue: &str,
        prio: i32,
        gpus: f64,
        tasks: &[Option<&str>],
    ) -> Self {
        let tasks = tasks.iter().map(|t| t.map(Into::into)).collect();
        self.jobs
            .push((name.into(), queue.into(), prio, gpus, tasks));
        self
    }

    fn yaml(&self) -> String {
        let mut y = String::new();
        let mut queues: Vec<(String, Option<String>, f64, f64)> = Vec::new();
        if self.departments.is_empty() {
            queues.push(("default".into(), None, -1.0, -1.0));
            for (n, _, d, w) in &self.queues {
                queues.push((n.clone(), Some("default".into()), *d, *w));
            }
        } else {
            for (n, d) in &self.departments {
                queues.push((n.clone(), None, *d, *d));
            }
            queues.extend(self.queues.iter().cloned());
        }
        for (i, (n, parent, d, w)) in queues.iter().enumerate() {
            let parent = parent
                .as_ref()
                .map_or(String::new(), |p| format!("  parentQueue: {p}\n"));
            let limit = self
                .limits
                .iter()
                .find(|(q, _)| q == n)
                .map_or(-1.0, |l| l.1);
            let _ = write!(
                y,
                "---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {{name: {n}, creationTimestamp: \"2025-01-01T01:{i:02}:00Z\"}}\nspec:\n{parent}  resources:\n    gpu: {{quota: {d}, overQuotaWeight: {w}, limit: {limit}}}\n    cpu: {{quota: -1, overQuotaWeight: 1, limit: -1}}\n    memory: {{quota: -1, overQuotaWeight: 1, limit: -1}}\n"
            );
        }
        for (n, g) in &self.nodes {
            let _ = write!(
                y,
                "---\napiVersion: v1\nkind: Node\nmetadata: {{name: {n}}}\nstatus:\n  allocatable: {{nvidia.com/gpu: \"{g}\", cpu: \"20\", memory: 20G}}\n"
            );
        }
        let mut jobs: Vec<_> = self.jobs.iter().collect();
        jobs.sort_by_key(|j| -j.2);
        let count = jobs.len();
        let mut prios: Vec<i32> = Vec::new();
        for (i, (name, queue, prio, gpus, tasks)) in jobs.into_iter().enumerate() {
            if !prios.contains(prio) {
                prios.push(*prio);
            }
            let minutes = 24 * 60 - (count - i);
            let created = format!("2025-01-01T{:02}:{:02}:00Z", minutes / 60, minutes % 60);
            let _ = write!(
                y,
                "---\napiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {{name: {name}, namespace: test, creationTimestamp: \"{created}\"}}\nspec: {{minMember: {}, queue: {queue}, priorityClassName: pc{prio}}}\n",
                tasks.len()
            );
            for (t, node) in tasks.iter().enumerate() {
                let (res, frac) = if *gpus < 1.0 {
                    (String::new(), format!(", gpu-fraction: \"{gpus}\""))
                } else {
                    (
                        format!("limits: {{nvidia.com/gpu: \"{gpus}\"}}"),
                        String::new(),
                    )
                };
                // "node@time": running on node, being deleted since time.
                let (node, deletion) = match node.as_deref().map(|n| n.split_once('@')) {
                    Some(Some((n, d))) => {
                        (Some(n.to_string()), format!(", deletionTimestamp: \"{d}\""))
                    }
                    _ => (node.clone(), String::new()),
                };
                let (node, status) = match node {
                    Some(n) => (
                        format!("  nodeName: {n}\n"),
                        format!("{{phase: Running, startTime: \"{created}\"}}"),
                    ),
                    None => (String::new(), "{phase: Pending}".to_string()),
                };
                let _ = write!(
                    y,
                    "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}-{t}, namespace: test, creationTimestamp: \"{created}\"{deletion}, labels: {{kai.scheduler/queue: {queue}}}, annotations: {{pod-group-name: {name}{frac}}}}}\nspec:\n{node}  containers: [{{name: c, resources: {{{res}}}}}]\nstatus: {status}\n"
                );
            }
        }
        for p in prios {
            let _ = write!(
                y,
                "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: pc{p}}}\nvalue: {p}\n"
            );
        }
        y
    }

    /// The `kai fairshare` JSON.
    fn fairshare(&self) -> Value {
        let model = import_str("upstream.yaml", &self.yaml()).unwrap().model;
        let cluster =
            gpuquota_rank::testkit::cluster_unvalidated(&model, &BuildOptions::default()).unwrap();
        serde_json::to_value(
            gpuquota_rank::testkit::fairshare_report(&cluster, &Default::default()).unwrap(),
        )
        .unwrap()
    }

    /// The `kai schedule` JSON of one session at `2025-01-02T00:00:00Z`.
    fn schedule(&self) -> Value {
        let yaml = self.yaml();
        let model = import_str("upstream.yaml", &yaml)
            .unwrap_or_else(|e| panic!("{e}\n{yaml}"))
            .model;
        let cluster = gpuquota_rank::testkit::cluster_unvalidated(
            &model,
            &BuildOptions::default().with_now(Some("2025-01-02T00:00:00Z".parse().unwrap())),
        )
        .unwrap();
        serde_json::to_value(schedule_report(
            &run_session(&cluster, &SessionOptions::default()).unwrap(),
        ))
        .unwrap()
    }
}

/// `(podGroup, pipelined, nodes)` of every allocation.
fn allocated(v: &Value) -> Vec<(String, bool, Vec<String>)> {
    v["allocated"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            let mut nodes: Vec<String> = a["pods"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["node"].as_str().unwrap_or("-").to_string())
                .collect();
            nodes.dedup();
            (
                a["podGroup"].as_str().unwrap().to_string(),
                a["pipelined"].as_bool().unwrap(),
                nodes,
            )
        })
        .collect()
}

const TRAIN: i32 = 50;

/// `allocate/allocate_test.go` "No nodes": without nodes (and without `--total`) the cluster
/// is empty and both pending jobs stay pending.
#[test]
fn allocate_no_nodes_keeps_jobs_pending() {
    let v = Topo::default()
        .queue("queue0", None, 0.0, 0.0)
        .queue("queue1", None, 1.0, 0.0)
        .job("pending_job0", "queue0", TRAIN, 1.0, &[None])
        .job("pending_job1", "queue1", TRAIN, 1.0, &[None])
        .schedule();
    assert_eq!(v["allocated"], json!([]));
    assert_eq!(v["evicted"], json!([]));
    let pending: Vec<&str> = v["pending"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["podGroup"].as_str().unwrap())
        .collect();
    assert_eq!(pending, ["test/pending_job0", "test/pending_job1"]);
}

/// `reclaim/reclaim_test.go` "queue1 is under deserved quota, queue0 is over deserved quota
/// and will go below quota - reclaim": the harness's implicit department `default` has GPU
/// quota -1 and weight -1 (weight = quota), which upstream accepts. The 2×10-GPU gang of
/// queue0 is reclaimed whole for queue1's 10-GPU job, which is pipelined onto node0.
#[test]
fn reclaim_default_department_with_weight_minus_one_b02() {
    let v = Topo::default()
        .queue("queue0", None, 10.0, 1.0)
        .queue("queue1", None, 10.0, 1.0)
        .node("node0", 16)
        .node("node1", 16)
        .job(
            "q0_running_job",
            "queue0",
            TRAIN,
            10.0,
            &[Some("node0"), Some("node1")],
        )
        .job("q1_pending_job", "queue1", TRAIN, 10.0, &[None])
        .schedule();
    assert_eq!(
        v["evicted"],
        json!([{"podGroup": "test/q0_running_job", "queue": "queue0", "action": "reclaim",
                "by": "test/q1_pending_job"}])
    );
    assert_eq!(
        allocated(&v),
        [(
            "test/q1_pending_job".to_string(),
            true,
            vec!["node0".to_string()]
        )]
    );
}

/// `reclaim/reclaim_test.go` "Reclaim jobs according to queue fair share": department d1
/// (deserved 1) holds queue0 and queue1 (deserved 1, weight 1, 3 running 1-GPU jobs each on
/// a 6-GPU node) and reclaimer_queue (deserved 2, weight 0). The 2-task reclaimer takes the
/// lowest-priority job of each queue and is pipelined onto node0.
#[test]
fn reclaim_jobs_according_to_queue_fair_share() {
    let n0 = &[Some("node0")];
    let v = Topo::default()
        .department("d1", 1.0)
        .queue("queue0", Some("d1"), 1.0, 1.0)
        .queue("queue1", Some("d1"), 1.0, 1.0)
        .queue("reclaimer_queue", Some("d1"), 2.0, 0.0)
        .node("node0", 6)
        .job("q0_running_job0", "queue0", TRAIN, 1.0, n0)
        .job("q0_running_job1", "queue0", TRAIN, 1.0, n0)
        .job("q0_running_job2", "queue0", TRAIN - 1, 1.0, n0)
        .job("q1_running_job0", "queue1", TRAIN, 1.0, n0)
        .job("q1_running_job1", "queue1", TRAIN, 1.0, n0)
        .job("q1_running_job2", "queue1", TRAIN - 1, 1.0, n0)
        .job("reclaimer", "reclaimer_queue", TRAIN, 1.0, &[None, None])
        .schedule();
    let mut evicted: Vec<(&str, &str, &str)> = v["evicted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["podGroup"].as_str().unwrap(),
                e["action"].as_str().unwrap(),
                e["by"].as_str().unwrap(),
            )
        })
        .collect();
    evicted.sort_unstable();
    assert_eq!(
        evicted,
        [
            ("test/q0_running_job2", "reclaim", "test/reclaimer"),
            ("test/q1_running_job2", "reclaim", "test/reclaimer"),
        ]
    );
    assert_eq!(
        allocated(&v),
        [(
            "test/reclaimer".to_string(),
            true,
            vec!["node0".to_string()]
        )]
    );
}

/// `(podGroup, action, by)` of every eviction, sorted.
fn evicted(v: &Value) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = v["evicted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["podGroup"].as_str().unwrap().to_string(),
                e["action"].as_str().unwrap().to_string(),
                e["by"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect();
    out.sort_unstable();
    out
}

fn ev(pg: &str, action: &str, by: &str) -> (String, String, String) {
    (pg.to_string(), action.to_string(), by.to_string())
}

/// `reclaim/reclaim_test.go` "queue0 is over fair share, queue1 is under fair share - reclaim
/// for job with multiple tasks from job with multiple tasks": four 1-GPU nodes; queue0
/// (deserved 1, weight 0) runs a 3-task gang on node0..2 and a 1-GPU job on node3; queue1
/// (deserved 2) wants a 3-task gang. KAI evicts only the gang: the newer 1-GPU job is a
/// victim candidate too, but it can stay where it is once the reclaimer is placed.
#[test]
fn reclaim_keeps_victims_the_reclaimer_does_not_need() {
    let v = Topo::default()
        .queue("queue0", None, 1.0, 0.0)
        .queue("queue1", None, 2.0, 1.0)
        .node("node0", 1)
        .node("node1", 1)
        .node("node2", 1)
        .node("node3", 1)
        .job(
            "q0_job0",
            "queue0",
            TRAIN,
            1.0,
            &[Some("node0"), Some("node1"), Some("node2")],
        )
        .job("q0_job1", "queue0", TRAIN, 1.0, &[Some("node3")])
        .job("q1_job1", "queue1", TRAIN, 1.0, &[None, None, None])
        .schedule();
    assert_eq!(evicted(&v), [ev("test/q0_job0", "reclaim", "test/q1_job1")]);
    assert_eq!(
        allocated(&v),
        [(
            "test/q1_job1".to_string(),
            true,
            vec![
                "node0".to_string(),
                "node1".to_string(),
                "node2".to_string()
            ]
        )]
    );
}

/// `preempt/preempt_test.go` "3 train job running, 1 build job pending for the same queue -
/// no need to preempt both": a 2-GPU node holds trains of 0.5, 1 and 0.5 GPU; a 1-GPU build
/// job of the same queue preempts only the whole-GPU train (the newest 0.5 train comes first
/// in victim order but is not needed) and is pipelined onto node0.
#[test]
fn preempt_no_need_to_preempt_both() {
    let v = Topo::default()
        .queue("queue0", None, 2.0, 0.0)
        .node("node0", 2)
        .job("running_job0", "queue0", TRAIN, 0.5, &[Some("node0")])
        .job("running_job1", "queue0", TRAIN, 1.0, &[Some("node0")])
        .job("running_job2", "queue0", TRAIN, 0.5, &[Some("node0")])
        .job("pending_job0", "queue0", 100, 1.0, &[None])
        .schedule();
    assert_eq!(
        evicted(&v),
        [ev("test/running_job1", "preempt", "test/pending_job0")]
    );
    assert_eq!(
        allocated(&v),
        [(
            "test/pending_job0".to_string(),
            true,
            vec!["node0".to_string()]
        )]
    );
}

/// `allocate/allocate_stuck_in_releasing_test.go` "Releasing victim allows pipelining of
/// pending pod": a pod deleted 30 s ago is Releasing; the pending job is pipelined onto its GPU
/// and nothing is evicted this session.
#[test]
fn releasing_pod_allows_pipelining() {
    let v = Topo::default()
        .queue("queue0", None, 1.0, 0.0)
        .node("node0", 1)
        .job(
            "victim_job",
            "queue0",
            TRAIN,
            1.0,
            &[Some("node0@2025-01-01T23:59:30Z")],
        )
        .job("pending_job", "queue0", TRAIN, 1.0, &[None])
        .schedule();
    assert_eq!(v["evicted"], json!([]));
    assert_eq!(
        allocated(&v),
        [(
            "test/pending_job".to_string(),
            true,
            vec!["node0".to_string()]
        )]
    );
}

/// `allocate/allocate_stuck_in_releasing_test.go` "StuckInReleasing victim does not allow
/// pipelining": a pod deleted more than 2 minutes ago (KAI's
/// `DefaultStuckInReleasingThreshold`) keeps its GPU; the pending job stays pending.
#[test]
fn stuck_in_releasing_pod_blocks_pipelining() {
    let v = Topo::default()
        .queue("queue0", None, 1.0, 0.0)
        .node("node0", 1)
        .job(
            "victim_job",
            "queue0",
            TRAIN,
            1.0,
            &[Some("node0@2025-01-01T23:50:00Z")],
        )
        .job("pending_job", "queue0", TRAIN, 1.0, &[None])
        .schedule();
    assert_eq!(v["allocated"], json!([]));
    assert_eq!(v["evicted"], json!([]));
    assert_eq!(v["pending"][0]["podGroup"], "test/pending_job");
}

/// `integration_tests/reclaim/reclaim_test.go` "Job with a StuckInReleasing pod is not a
/// reclaim victim": on a 1-GPU node, queue1 (deserved 0) holds the GPU with a pod stuck in
/// releasing; queue0 (deserved 1) cannot reclaim it and its job stays pending.
#[test]
fn stuck_in_releasing_job_is_not_a_reclaim_victim() {
    let v = Topo::default()
        .queue("queue0", None, 1.0, 1.0)
        .queue("queue1", None, 0.0, 1.0)
        .node("node0", 1)
        .job(
            "stuck_over_quota_job",
            "queue1",
            TRAIN,
            1.0,
            &[Some("node0@2025-01-01T23:50:00Z")],
        )
        .job("reclaimer_job", "queue0", TRAIN, 1.0, &[None])
        .schedule();
    assert_eq!(v["allocated"], json!([]));
    assert_eq!(v["evicted"], json!([]));
    assert_eq!(v["pending"][0]["podGroup"], "test/reclaimer_job");
}

/// `integration_tests/preempt/preempt_test.go` "Job with a Running pod and a StuckInReleasing
/// pod - preempt evicts the Running sibling": only the stuck pod is protected; the job's
/// running pod is preempted for the build job, which takes its GPU.
#[test]
fn preempt_evicts_the_running_sibling_of_a_stuck_pod() {
    let v = Topo::default()
        .queue("queue0", None, 2.0, 0.0)
        .node("node0", 2)
        .job("preemptor_job", "queue0", 100, 1.0, &[None])
        .job(
            "mixed_victim_job",
            "queue0",
            TRAIN,
            1.0,
            &[Some("node0"), Some("node0@2025-01-01T23:50:00Z")],
        )
        .schedule();
    assert_eq!(
        evicted(&v),
        [ev("test/mixed_victim_job", "preempt", "test/preemptor_job")]
    );
    assert_eq!(
        allocated(&v),
        [(
            "test/preemptor_job".to_string(),
            true,
            vec!["node0".to_string()]
        )]
    );
}

/// KAI's task states (`pod_info.getTaskStatus`): a Pending pod that already has a node is
/// `Bound`, i.e. allocated to its queue and not demand for placement; a pod being deleted is
/// `Releasing` and counts neither as allocated nor as requested.
#[test]
fn bound_and_releasing_pods_in_the_fairshare_report() {
    let yaml = r#"
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: q}
spec: {resources: {gpu: {quota: 4, overQuotaWeight: 1, limit: -1}}}
---
apiVersion: v1
kind: Node
metadata: {name: n0}
status: {allocatable: {nvidia.com/gpu: "8", cpu: "8", memory: 8Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: bound, namespace: ns, labels: {kai.scheduler/queue: q}}
spec: {nodeName: n0, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "2"}}}]}
status: {phase: Pending}
---
apiVersion: v1
kind: Pod
metadata: {name: going, namespace: ns, labels: {kai.scheduler/queue: q}, deletionTimestamp: "2025-01-01T00:00:00Z"}
spec: {nodeName: n0, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "3"}}}]}
status: {phase: Running, startTime: "2024-12-31T00:00:00Z"}
---
apiVersion: v1
kind: Pod
metadata: {name: waiting, namespace: ns, labels: {kai.scheduler/queue: q}, creationTimestamp: "2025-01-01T00:00:30Z"}
spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]}
status: {phase: Pending}
"#;
    let model = import_str("states.yaml", yaml).unwrap().model;
    let cluster =
        gpuquota_rank::testkit::cluster_unvalidated(&model, &BuildOptions::default()).unwrap();
    let fs = serde_json::to_value(
        gpuquota_rank::testkit::fairshare_report(&cluster, &Default::default()).unwrap(),
    )
    .unwrap();
    assert_eq!(fs["queues"]["q"]["gpu"]["allocated"], "2");
    assert_eq!(fs["queues"]["q"]["gpu"]["requested"], "3");
    let v = serde_json::to_value(schedule_report(
        &run_session(&cluster, &SessionOptions::default()).unwrap(),
    ))
    .unwrap();
    // The waiting pod fits on the 3 idle GPUs without touching the releasing ones.
    assert_eq!(
        allocated(&v),
        [("ns/waiting".to_string(), false, vec!["n0".to_string()])]
    );
    assert_eq!(v["evicted"], json!([]));
}

/// The harness's implicit department (GPU quota -1) in the `kai fairshare` report: deserved
/// prints as KAI's sentinel `"-1"`, its limit as `null`, and its fair share is what phase 1
/// gives an unlimited-deserved queue: its whole request (30 of 32 GPUs). Below it, queue0 and
/// queue1 (deserved 10, weight 1) get 10 each and queue0 the 10 left over (same shape as
/// reclaim test B-02, with queue0 running 2×10 and queue1 asking for 10).
#[test]
fn unlimited_deserved_department_in_the_fairshare_report() {
    let v = Topo::default()
        .queue("queue0", None, 10.0, 1.0)
        .queue("queue1", None, 10.0, 1.0)
        .node("node0", 16)
        .node("node1", 16)
        .job(
            "q0_running_job",
            "queue0",
            TRAIN,
            10.0,
            &[Some("node0"), Some("node1")],
        )
        .job("q1_pending_job", "queue1", TRAIN, 10.0, &[None])
        .fairshare();
    assert_eq!(
        v["queues"]["default"]["gpu"],
        json!({"deserved": "-1", "fairShare": "30", "allocated": "20", "requested": "30",
               "limit": null})
    );
    assert_eq!(v["queues"]["queue0"]["gpu"]["fairShare"], "20");
    assert_eq!(v["queues"]["queue1"]["gpu"]["fairShare"], "10");
    assert_eq!(v["queues"]["queue0"]["cpu"]["deserved"], "-1");
    assert_eq!(v["queues"]["queue0"]["cpu"]["limit"], Value::Null);
}

/// `consolidation/consolidation_test.go` "3 jobs are running on different GPUs, 1 job
/// pending - Consolidate and verify not all preemptors are evicted as well": node0 (4 GPUs) runs a
/// 3-GPU train, node1 (4 GPUs) a 1-GPU and a 2-GPU train; a 2-GPU train is pending (1 GPU
/// free on each node). Only the 1-GPU job moves (to node0); the 2-GPU job stays on node1
/// and the pending job is pipelined next to it.
#[test]
fn consolidation_moves_only_the_victims_it_needs() {
    let v = Topo::default()
        .queue("queue0", None, 2.0, 0.0)
        .node("node0", 4)
        .node("node1", 4)
        .job("running_job0", "queue0", TRAIN, 3.0, &[Some("node0")])
        .job("running_job1", "queue0", TRAIN, 1.0, &[Some("node1")])
        .job("running_job2", "queue0", TRAIN, 2.0, &[Some("node1")])
        .job("pending_job0", "queue0", TRAIN, 2.0, &[None])
        .schedule();
    assert_eq!(
        evicted(&v),
        [ev(
            "test/running_job1",
            "consolidation",
            "test/pending_job0"
        )]
    );
    let mut alloc = allocated(&v);
    alloc.sort();
    assert_eq!(
        alloc,
        [
            (
                "test/pending_job0".to_string(),
                true,
                vec!["node1".to_string()]
            ),
            (
                "test/running_job1".to_string(),
                true,
                vec!["node0".to_string()]
            ),
        ]
    );
}

/// `consolidation/consolidation_test.go` "2 jobs of 0.5 task running on different GPUs,
/// 1 job of 1 gpus is pending - Consolidate and run the pending job": the running fractions sit
/// on GPU groups "0" and "1" (KAI's `runai-gpu-group` label), so no whole GPU is free until
/// one fraction moves next to the other.
#[test]
fn gpu_groups_place_running_fractions_consolidation_e06() {
    let t = Topo::default()
        .queue("queue0", None, 2.0, 0.0)
        .node("node0", 2)
        .job("running_job0", "queue0", TRAIN, 0.5, &[Some("node0")])
        .job("running_job1", "queue0", TRAIN, 0.5, &[Some("node0")])
        .job("pending_job0", "queue0", TRAIN, 1.0, &[None]);
    let yaml = t.yaml().replacen(
        "labels: {kai.scheduler/queue: queue0}, annotations: {pod-group-name: running_job0,",
        "labels: {kai.scheduler/queue: queue0, runai-gpu-group: \"0\"}, annotations: {pod-group-name: running_job0,",
        1,
    ).replacen(
        "labels: {kai.scheduler/queue: queue0}, annotations: {pod-group-name: running_job1,",
        "labels: {kai.scheduler/queue: queue0, runai-gpu-group: \"1\"}, annotations: {pod-group-name: running_job1,",
        1,
    );
    assert_eq!(yaml.matches("runai-gpu-group").count(), 2);
    let model = import_str("e06.yaml", &yaml).unwrap().model;
    let cluster =
        gpuquota_rank::testkit::cluster_unvalidated(&model, &BuildOptions::default()).unwrap();
    let v = serde_json::to_value(schedule_report(
        &run_session(&cluster, &SessionOptions::default()).unwrap(),
    ))
    .unwrap();
    assert_eq!(
        evicted(&v),
        [ev(
            "test/running_job1",
            "consolidation",
            "test/pending_job0"
        )]
    );
    let pipelined: Vec<(String, bool)> = allocated(&v)
        .into_iter()
        .map(|(pg, p, _)| (pg, p))
        .collect();
    assert_eq!(
        pipelined,
        [
            ("test/pending_job0".to_string(), true),
            ("test/running_job1".to_string(), true),
        ]
    );
}

/// `--total gpu=N[,cpu=Q,memory=Q]`: GPU in devices (fractions allowed), CPU and memory as
/// Kubernetes quantities; an empty value, a repeated resource, a negative or unknown one are
/// errors, never silently ignored.
#[test]
fn total_flag_parsing() {
    use gpuquota_rank::snapshot::parse_total;
    let t = parse_total("gpu=2.5,cpu=500m,memory=1Gi").unwrap();
    assert_eq!(
        t,
        [
            Some(2_500_000_000),
            Some(500_000_000_000),
            Some(1_073_741_824_000_000_000)
        ]
    );
    assert_eq!(parse_total("cpu=4").unwrap()[0], None);
    for bad in ["", "gpu=2,gpu=3", "gpu=-1", "gpu=abc", "disk=1", "gpu"] {
        assert!(parse_total(bad).is_err(), "{bad:?} accepted");
    }
}

/// KAI's pod grouper (`defaultgrouper.CalcPodGroupQueue`): a pod with no queue label and no
/// PodGroup goes to its `project` label's queue, else to `default-queue`.
#[test]
fn pods_without_queue_label_use_project_then_default_queue() {
    let yaml = r#"
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: default-queue}
spec: {resources: {gpu: {quota: 1, overQuotaWeight: 1, limit: -1}}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team-a}
spec: {resources: {gpu: {quota: 1, overQuotaWeight: 1, limit: -1}}}
---
apiVersion: v1
kind: Pod
metadata: {name: plain, namespace: ns}
spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]}
status: {phase: Pending}
---
apiVersion: v1
kind: Pod
metadata: {name: projected, namespace: ns, labels: {project: team-a}}
spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: "2"}}}]}
status: {phase: Pending}
"#;
    let model = import_str("q.yaml", yaml).unwrap().model;
    let cluster = gpuquota_rank::testkit::cluster_unvalidated(
        &model,
        &BuildOptions::default().with_total(gpuquota_rank::snapshot::parse_total("gpu=4").unwrap()),
    )
    .unwrap();
    let fs = serde_json::to_value(
        gpuquota_rank::testkit::fairshare_report(&cluster, &Default::default()).unwrap(),
    )
    .unwrap();
    assert_eq!(fs["queues"]["default-queue"]["gpu"]["requested"], "1");
    assert_eq!(fs["queues"]["team-a"]["gpu"]["requested"], "2");
}

/// `plugins/proportion/proportion_test.go` "Set fair share for 2 hierarchy queues -
/// simplified": departments d1, d2 with one project each (q1, q2); deserved 2, weight 1,
/// every project requesting 100 GPUs; each entry overrides deserved, weight and priority.
#[test]
fn proportion_two_hierarchy_queues_simplified() {
    // (name, total, [deserved d1,q1,d2,q2], [weight d1,d2], [priority d1,d2], expected FS)
    type Entry = (
        &'static str,
        u32,
        [u32; 4],
        [u32; 2],
        [u32; 2],
        [&'static str; 4],
    );
    let entries: [Entry; 7] = [
        (
            "sanity",
            4,
            [2, 2, 2, 2],
            [1, 1],
            [0, 0],
            ["2", "2", "2", "2"],
        ),
        (
            "deserved department quota",
            4,
            [3, 2, 1, 2],
            [1, 1],
            [0, 0],
            ["3", "3", "1", "2"],
        ),
        (
            "over-quota",
            12,
            [3, 2, 1, 2],
            [1, 1],
            [0, 0],
            ["7", "7", "5", "5"],
        ),
        (
            "over-quota weight",
            12,
            [3, 2, 1, 2],
            [1, 7],
            [0, 0],
            ["4", "4", "8", "8"],
        ),
        (
            "weight reversed",
            12,
            [3, 2, 1, 2],
            [7, 1],
            [0, 0],
            ["10", "10", "2", "2"],
        ),
        (
            "priority",
            12,
            [1, 1, 1, 1],
            [7, 1],
            [1, 2],
            ["1", "1", "11", "11"],
        ),
        (
            "priority reversed",
            12,
            [1, 1, 1, 1],
            [1, 7],
            [2, 1],
            ["11", "11", "1", "1"],
        ),
    ];
    for (name, total, d, w, p, expected) in entries {
        let mut yaml = String::new();
        for (q, parent, dq, wq, pq) in [
            ("d1", None, d[0], w[0], p[0]),
            ("q1", Some("d1"), d[1], 1, 0),
            ("d2", None, d[2], w[1], p[1]),
            ("q2", Some("d2"), d[3], 1, 0),
        ] {
            let parent = parent.map_or(String::new(), |x| format!("parentQueue: {x}, "));
            let _ = write!(
                yaml,
                "---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {{name: {q}}}\nspec: {{{parent}priority: {pq}, resources: {{gpu: {{quota: {dq}, overQuotaWeight: {wq}, limit: -1}}}}}}\n"
            );
        }
        for q in ["q1", "q2"] {
            let _ = write!(
                yaml,
                "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {q}-p, namespace: ns, labels: {{kai.scheduler/queue: {q}}}}}\nspec: {{containers: [{{name: c, resources: {{limits: {{nvidia.com/gpu: \"100\"}}}}}}]}}\nstatus: {{phase: Pending}}\n"
            );
        }
        let model = import_str("pt.yaml", &yaml).unwrap().model;
        let cluster = gpuquota_rank::testkit::cluster_unvalidated(
            &model,
            &BuildOptions::default()
                .with_total(gpuquota_rank::snapshot::parse_total(&format!("gpu={total}")).unwrap()),
        )
        .unwrap();
        let fs = serde_json::to_value(
            gpuquota_rank::testkit::fairshare_report(&cluster, &Default::default()).unwrap(),
        )
        .unwrap();
        let got: Vec<&str> = ["d1", "q1", "d2", "q2"]
            .iter()
            .map(|q| fs["queues"][q]["gpu"]["fairShare"].as_str().unwrap())
            .collect();
        assert_eq!(got, expected, "{name}");
    }
}

/// Consolidating reclaim, in the shape of `integration_tests/consolidation_and_reclaim` "4
/// jobs of queue0 - 3 running 1 pending will consolidate, 1 pending job from queue1 -
/// reclaim" without queue0's pending job (which the consolidation action would serve first
/// in the same cycle): queue0 (deserved 4) runs 2 GPUs on node0 and 2 + 1 on node1 (4 GPUs
/// each); queue1 (deserved 4) wants 4 GPUs on one node. Reclaim moves running_job1 to node0
/// and kills only running_job2, the final state upstream reaches; the reclaimer is pipelined
/// onto node1.
#[test]
fn consolidating_reclaim_moves_a_victim_and_kills_one() {
    let v = Topo::default()
        .queue("queue0", None, 4.0, 0.0)
        .queue("queue1", None, 4.0, 0.0)
        .node("node0", 4)
        .node("node1", 4)
        .job("running_job0", "queue0", TRAIN, 2.0, &[Some("node0")])
        .job("running_job1", "queue0", TRAIN, 2.0, &[Some("node1")])
        .job("running_job2", "queue0", TRAIN, 1.0, &[Some("node1")])
        .job("pending_job1", "queue1", TRAIN, 4.0, &[None])
        .schedule();
    assert_eq!(
        evicted(&v),
        [
            ev("test/running_job1", "reclaim", "test/pending_job1"),
            ev("test/running_job2", "reclaim", "test/pending_job1"),
        ]
    );
    let mut alloc = allocated(&v);
    alloc.sort();
    assert_eq!(
        alloc,
        [
            (
                "test/pending_job1".to_string(),
                true,
                vec!["node1".to_string()]
            ),
            (
                "test/running_job1".to_string(),
                true,
                vec!["node0".to_string()]
            ),
        ]
    );
    assert_eq!(v["pending"], json!([]));
}

/// `consolidation/consolidation_test.go` "2 jobs of 1 task running on different GPUs, 2
/// pending jobs with multiple tasks, one job can partially be allocated": node0 (4 GPUs) runs
/// 2, node1 (4 GPUs) runs 2 + 1; pending_job0 wants 4 GPUs (never fits), pending_job1 is
/// elastic (minMember 1) with two 3-GPU pods. Consolidation moves only the 2-GPU job to node0
/// (the 1-GPU job stays) and pipelines one pod of pending_job1 onto node1.
#[test]
fn consolidation_picks_the_victim_the_job_needs_out_of_order() {
    let t = Topo::default()
        .queue("queue0", None, 2.0, 0.0)
        .node("node0", 4)
        .node("node1", 4)
        .job("running_job0", "queue0", TRAIN, 2.0, &[Some("node0")])
        .job("running_job1", "queue0", TRAIN, 2.0, &[Some("node1")])
        .job("running_job2", "queue0", TRAIN, 1.0, &[Some("node1")])
        .job("pending_job0", "queue0", TRAIN, 4.0, &[None])
        .job("pending_job1", "queue0", TRAIN, 3.0, &[None, None]);
    let yaml = t.yaml().replacen(
        "spec: {minMember: 2, queue: queue0, priorityClassName: pc50}",
        "spec: {minMember: 1, queue: queue0, priorityClassName: pc50}",
        1,
    );
    let model = import_str("c3.yaml", &yaml).unwrap().model;
    let cluster = gpuquota_rank::testkit::cluster_unvalidated(
        &model,
        &BuildOptions::default().with_now(Some("2025-01-02T00:00:00Z".parse().unwrap())),
    )
    .unwrap();
    let v = serde_json::to_value(schedule_report(
        &run_session(&cluster, &SessionOptions::default()).unwrap(),
    ))
    .unwrap();
    assert_eq!(
        evicted(&v),
        [ev(
            "test/running_job1",
            "consolidation",
            "test/pending_job1"
        )]
    );
    let mut alloc = allocated(&v);
    alloc.sort();
    assert_eq!(
        alloc,
        [
            (
                "test/pending_job1".to_string(),
                true,
                vec!["node1".to_string()]
            ),
            (
                "test/running_job1".to_string(),
                true,
                vec!["node0".to_string()]
            ),
        ]
    );
}

/// PodGroup `minMember: 0` (KAI's CRD: minimum 0, "no gang requirement: all pods are
/// scheduled elastically"): of three 1-GPU pods on a 2-GPU node two start, one stays
/// pending; a negative minMember is a typed error.
#[test]
fn min_member_zero_is_fully_elastic() {
    let yaml = |min: i32| {
        format!(
            r#"
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {{name: a}}
spec: {{resources: {{gpu: {{quota: 2, overQuotaWeight: 1, limit: -1}}}}}}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {{name: g, namespace: ns}}
spec: {{minMember: {min}, queue: a}}
---
apiVersion: v1
kind: Node
metadata: {{name: n0}}
status: {{allocatable: {{nvidia.com/gpu: "2", cpu: "8", memory: 8Gi}}}}
{}"#,
            (0..3)
                .map(|i| format!(
                    "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}, namespace: ns, labels: {{kai.scheduler/queue: a}}, annotations: {{pod-group-name: g}}}}\nspec: {{containers: [{{name: c, resources: {{limits: {{nvidia.com/gpu: \"1\"}}}}}}]}}\nstatus: {{phase: Pending}}\n"
                ))
                .collect::<String>()
        )
    };
    let build = |min: i32| {
        let model = import_str("m.yaml", &yaml(min)).unwrap().model;
        gpuquota_rank::testkit::cluster_unvalidated(&model, &BuildOptions::default())
    };
    let cluster = build(0).unwrap();
    let v = serde_json::to_value(schedule_report(
        &run_session(&cluster, &SessionOptions::default()).unwrap(),
    ))
    .unwrap();
    assert_eq!(v["allocated"][0]["podGroup"], "ns/g");
    assert_eq!(v["allocated"][0]["pods"].as_array().unwrap().len(), 2);
    assert!(build(-1).is_err());
}

/// KAI's job solver re-places scenario victims for preempt as well as reclaim (its
/// `allow-consolidating-reclaim` switch is passed to every by-pod solver): a 2-GPU build job
/// (never consolidated) finds one free GPU on each node; the newest train is preempted and
/// moved next to the other one instead of being killed.
#[test]
fn preempt_moves_a_victim_that_fits_elsewhere() {
    let v = Topo::default()
        .queue("queue0", None, 4.0, 0.0)
        .node("node0", 2)
        .node("node1", 2)
        .job("train_a", "queue0", TRAIN, 1.0, &[Some("node0")])
        .job("train_b", "queue0", TRAIN, 1.0, &[Some("node1")])
        .job("build", "queue0", 100, 2.0, &[None])
        .schedule();
    assert_eq!(evicted(&v), [ev("test/train_b", "preempt", "test/build")]);
    let mut alloc = allocated(&v);
    alloc.sort();
    assert_eq!(
        alloc,
        [
            ("test/build".to_string(), true, vec!["node1".to_string()]),
            ("test/train_b".to_string(), true, vec!["node0".to_string()]),
        ]
    );
}

/// KAI's `cleanQueueOrphans`: a queue whose parent does not exist is dropped with its children
/// (a warning upstream, not an error); their jobs are pending with `QueueDoesNotExist`.
#[test]
fn orphan_queues_are_dropped_with_their_children() {
    let yaml = r#"
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: dept}
spec: {parentQueue: missing, resources: {gpu: {quota: 2, overQuotaWeight: 1, limit: -1}}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: proj}
spec: {parentQueue: dept, resources: {gpu: {quota: 1, overQuotaWeight: 1, limit: -1}}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: ok}
spec: {resources: {gpu: {quota: 1, overQuotaWeight: 1, limit: -1}}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns, labels: {kai.scheduler/queue: proj}}
spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]}
status: {phase: Pending}
"#;
    let model = import_str("o.yaml", yaml).unwrap().model;
    let cluster = gpuquota_rank::testkit::cluster_unvalidated(
        &model,
        &BuildOptions::default().with_total(gpuquota_rank::snapshot::parse_total("gpu=4").unwrap()),
    )
    .unwrap();
    assert_eq!(cluster.orphan_queues, ["dept", "proj"]);
    let fs = serde_json::to_value(
        gpuquota_rank::testkit::fairshare_report(&cluster, &Default::default()).unwrap(),
    )
    .unwrap();
    assert_eq!(fs["queues"].as_object().unwrap().len(), 1);
    let v = serde_json::to_value(schedule_report(
        &run_session(&cluster, &SessionOptions::default()).unwrap(),
    ))
    .unwrap();
    assert_eq!(v["pending"][0]["reason"], "QueueDoesNotExist");
    assert_eq!(v["pending"][0]["queue"], "proj");
}

/// `allocate/allocateFractionalGpu_test.go` "Pipeline fractional interactive gpu task when a
/// task is evicting - dont allocate a new gpu": GPU group "0" holds a running 0.5 and a
/// releasing 0.5; the pending 0.5 is pipelined onto that shared GPU (KAI's gpusharingorder
/// outranks availability) instead of opening the empty second GPU.
#[test]
fn fraction_pipelined_onto_the_shared_gpu_being_released() {
    let t = Topo::default()
        .queue("queue0", None, 2.0, 0.0)
        .node("node0", 2)
        .job("running_job0", "queue0", 100, 0.5, &[Some("node0")])
        .job(
            "releasing_job0",
            "queue0",
            100,
            0.5,
            &[Some("node0@2025-01-01T23:59:30Z")],
        )
        .job("pending_job0", "queue0", 100, 0.5, &[None]);
    let yaml = t
        .yaml()
        .replace(
            "labels: {kai.scheduler/queue: queue0}, annotations: {pod-group-name: running_job0,",
            "labels: {kai.scheduler/queue: queue0, runai-gpu-group: \"0\"}, annotations: {pod-group-name: running_job0,",
        )
        .replace(
            "labels: {kai.scheduler/queue: queue0}, annotations: {pod-group-name: releasing_job0,",
            "labels: {kai.scheduler/queue: queue0, runai-gpu-group: \"0\"}, annotations: {pod-group-name: releasing_job0,",
        );
    assert_eq!(yaml.matches("runai-gpu-group").count(), 2);
    let model = import_str("frac.yaml", &yaml).unwrap().model;
    let cluster = gpuquota_rank::testkit::cluster_unvalidated(
        &model,
        &BuildOptions::default().with_now(Some("2025-01-02T00:00:00Z".parse().unwrap())),
    )
    .unwrap();
    let v = serde_json::to_value(schedule_report(
        &run_session(&cluster, &SessionOptions::default()).unwrap(),
    ))
    .unwrap();
    assert_eq!(
        allocated(&v),
        [(
            "test/pending_job0".to_string(),
            true,
            vec!["node0".to_string()]
        )]
    );
}

/// `PodGroupInfo.IsStale` counts active *used* pods (running, releasing, stuck in
/// releasing): a 2-pod gang with one running and one releasing pod is not stale, while the
/// same gang with only its running pod left is evicted once past the grace period.
#[test]
fn releasing_pods_keep_a_gang_from_being_stale() {
    let run = |second: Option<&str>, gpus: u32| {
        let mut tasks = vec![Some("node0")];
        tasks.push(second);
        let t = Topo::default()
            .queue("queue0", None, 2.0, 0.0)
            .node("node0", gpus)
            .job("gang", "queue0", TRAIN, 1.0, &tasks);
        let yaml = t.yaml().replace(
            "metadata: {name: gang, namespace: test,",
            "metadata: {name: gang, namespace: test, annotations: {kai.scheduler/stale-podgroup-timestamp: \"2025-01-01T00:00:00Z\"},",
        );
        let model = import_str("s.yaml", &yaml).unwrap().model;
        let cluster = gpuquota_rank::testkit::cluster_unvalidated(
            &model,
            &BuildOptions::default().with_now(Some("2025-01-02T00:00:00Z".parse().unwrap())),
        )
        .unwrap();
        serde_json::to_value(schedule_report(
            &run_session(&cluster, &SessionOptions::default()).unwrap(),
        ))
        .unwrap()
    };
    let with_releasing = run(Some("node0@2025-01-01T23:59:30Z"), 2);
    assert_eq!(with_releasing["evicted"], json!([]));
    // The second pod pending and unplaceable (a 1-GPU node): one used pod of two.
    let without = run(None, 1);
    assert_eq!(
        without["evicted"],
        json!([{"podGroup": "test/gang", "queue": "queue0", "action": "stalegang", "by": null}])
    );
}

/// `allocate/allocate_test.go` "try to allocate interactive after train when over-quota -
/// train should be preempted for interactive to run": queue0 (deserved 1, weight 1, limit 1)
/// runs a 1-GPU train on a 2-GPU node; its 1-GPU interactive job fails allocate on the limit,
/// preempt evicts the train, and the interactive job is pipelined (upstream expects one
/// pipeline action): KAI's preempt solver allocates the preemptor pipeline-only.
#[test]
fn interactive_after_train_over_quota_is_pipelined() {
    let v = Topo::default()
        .queue("queue0", None, 1.0, 1.0)
        .limit("queue0", 1.0)
        .node("node0", 2)
        .job("running_job_train", "queue0", TRAIN, 1.0, &[Some("node0")])
        .job("pending_job_interactive", "queue0", 100, 1.0, &[None])
        .schedule();
    assert_eq!(
        evicted(&v),
        [ev(
            "test/running_job_train",
            "preempt",
            "test/pending_job_interactive"
        )]
    );
    assert_eq!(
        allocated(&v),
        [(
            "test/pending_job_interactive".to_string(),
            true,
            vec!["node0".to_string()]
        )]
    );
    assert_eq!(v["pending"], json!([]));
}

const LABELLED_PODS: &str = r#"
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team-a}
spec: {resources: {gpu: {quota: 2, overQuotaWeight: 1, limit: -1}}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team-b}
spec: {resources: {gpu: {quota: 2, overQuotaWeight: 1, limit: -1}}}
---
apiVersion: v1
kind: Pod
metadata: {name: runai, namespace: ns, labels: {runai/queue: team-a}}
spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]}
status: {phase: Pending}
---
apiVersion: v1
kind: Pod
metadata: {name: both, namespace: ns, labels: {kai.scheduler/queue: team-b, runai/queue: team-a}}
spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: "2"}}}]}
status: {phase: Pending}
---
apiVersion: v1
kind: Pod
metadata: {name: acme, namespace: ns, labels: {acme/queue: team-b}}
spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: "4"}}}]}
status: {phase: Pending}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: pg, namespace: ns, labels: {runai/queue: team-b}}
spec: {minMember: 1}
---
apiVersion: v1
kind: Pod
metadata: {name: pg-0, namespace: ns, annotations: {pod-group-name: pg}}
spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: "8"}}}]}
status: {phase: Pending}
"#;

fn requested_with_key(key: Option<&str>) -> (Value, Value, Vec<String>) {
    let model = import_str("labels.yaml", LABELLED_PODS).unwrap().model;
    let cluster = gpuquota_rank::testkit::cluster_unvalidated(
        &model,
        &BuildOptions::default()
            .with_total(gpuquota_rank::snapshot::parse_total("gpu=16").unwrap())
            .with_queue_label_key(key.map(str::to_string)),
    )
    .unwrap();
    let fs = serde_json::to_value(
        gpuquota_rank::testkit::fairshare_report(&cluster, &Default::default()).unwrap(),
    )
    .unwrap();
    let queueless: Vec<String> = cluster
        .jobs
        .iter()
        .filter(|j| j.queue.is_none())
        .map(|j| format!("{} -> {}", j.key, j.queue_name))
        .collect();
    (
        fs["queues"]["team-a"]["gpu"]["requested"].clone(),
        fs["queues"]["team-b"]["gpu"]["requested"].clone(),
        queueless,
    )
}

/// KAI's `queueLabelKey` (default `kai.scheduler/queue`): without a configured key a pod's
/// `kai.scheduler/queue` label wins, Run:ai's `runai/queue` is read when it is absent, and a
/// PodGroup without `spec.queue` takes its own label; with a configured key only that label is
/// read (the other pods fall back to `default-queue`, which does not exist here).
#[test]
fn queue_label_key_default_runai_and_configured() {
    // runai (1) → team-a; both (2) → team-b by kai.scheduler/queue; acme (4) has no known
    // label → default-queue; pg (8) → team-b by its runai/queue label.
    let (a, b, none) = requested_with_key(None);
    assert_eq!((a, b), (json!("1"), json!("10")));
    assert_eq!(none, ["ns/acme -> default-queue"]);
    let (a, b, none) = requested_with_key(Some("acme/queue"));
    assert_eq!((a, b), (json!("0"), json!("4")));
    assert_eq!(
        none,
        [
            "ns/both -> default-queue",
            "ns/pg -> ",
            "ns/runai -> default-queue"
        ]
    );
    let (a, b, _) = requested_with_key(Some("runai/queue"));
    assert_eq!((a, b), (json!("3"), json!("8")));
}

/// A topology whose `gpus < 1` tasks ask for GPU memory instead: each
/// `gpu-fraction: "<f>"` becomes `gpu-memory: "<f × mem>"` MiB, and every node carries
/// `nvidia.com/gpu.memory: "<label>"` (KAI's harness labels every node with 100 MiB,
/// `pkg/scheduler/test_utils/nodes_fake/nodes.go`).
fn by_memory(t: &Topo, label: &str, per_gpu: f64) -> String {
    let mut y = t.yaml();
    for (n, _) in &t.nodes {
        y = y.replace(
            &format!("metadata: {{name: {n}}}"),
            &format!("metadata: {{name: {n}, labels: {{nvidia.com/gpu.memory: \"{label}\"}}}}"),
        );
    }
    for (_, _, _, gpus, _) in &t.jobs {
        if *gpus < 1.0 {
            y = y.replace(
                &format!("gpu-fraction: \"{gpus}\""),
                &format!("gpu-memory: \"{}\"", gpus * per_gpu),
            );
        }
    }
    y
}

fn schedule_yaml(yaml: &str) -> Value {
    let model = import_str("upstream.yaml", yaml).unwrap().model;
    let cluster = gpuquota_rank::testkit::cluster_unvalidated(
        &model,
        &BuildOptions::default().with_now(Some("2025-01-02T00:00:00Z".parse().unwrap())),
    )
    .unwrap();
    serde_json::to_value(schedule_report(
        &run_session(&cluster, &SessionOptions::default()).unwrap(),
    ))
    .unwrap()
}

fn fairshare_yaml(yaml: &str) -> Value {
    let model = import_str("upstream.yaml", yaml).unwrap().model;
    let cluster =
        gpuquota_rank::testkit::cluster_unvalidated(&model, &BuildOptions::default()).unwrap();
    serde_json::to_value(
        gpuquota_rank::testkit::fairshare_report(&cluster, &Default::default()).unwrap(),
    )
    .unwrap()
}

const BUILD: i32 = 100;

/// `allocate/allocateGpuMemory_test.go` "Non preemptible job requests gpu memory over
/// deserved quota": 3 × 40 MiB of 100 MiB GPUs is 1.2 GPUs, over queue0's deserved 1 for a
/// non-preemptible job: the gang stays pending with nothing accepted.
#[test]
fn gpu_memory_non_preemptible_over_deserved_stays_pending() {
    let t = Topo::default()
        .queue("queue0", None, 1.0, 1.0)
        .node("node0", 2)
        .job("pending_job-0", "queue0", BUILD, 0.4, &[None, None, None]);
    let v = schedule_yaml(&by_memory(&t, "100", 100.0));
    assert_eq!(v["allocated"], json!([]));
    assert_eq!(v["pending"][0]["podGroup"], "test/pending_job-0");
}

/// `allocate/allocateGpuMemory_test.go` "Preemptible job requests gpu memory over queue
/// limit": the same 1.2 GPUs are over queue0's limit of 1.
#[test]
fn gpu_memory_over_the_queue_limit_stays_pending() {
    let t = Topo::default()
        .queue("queue0", None, 1.0, 1.0)
        .limit("queue0", 1.0)
        .node("node0", 2)
        .job("pending_job-0", "queue0", TRAIN, 0.4, &[None, None, None]);
    let v = schedule_yaml(&by_memory(&t, "100", 100.0));
    assert_eq!(v["allocated"], json!([]));
    assert_eq!(v["pending"][0]["podGroup"], "test/pending_job-0");
}

/// `allocate/allocateGpuMemory_test.go` "Basic request gpu by memory when cluster is empty":
/// 50 MiB of a 100 MiB GPU is bound to node0 as half a GPU.
#[test]
fn gpu_memory_on_an_empty_cluster_is_bound_as_half_a_gpu() {
    let t = Topo::default()
        .queue("queue0", None, 1.0, 1.0)
        .node("node0", 1)
        .job("pending_job-0", "queue0", BUILD, 0.5, &[None]);
    let y = by_memory(&t, "100", 100.0);
    let v = schedule_yaml(&y);
    assert_eq!(
        allocated(&v),
        [(
            "test/pending_job-0".to_string(),
            false,
            vec!["node0".to_string()]
        )]
    );
    // Once running there it is charged 0.5 GPU.
    let running = y
        .replace(
            "spec:\n  containers",
            "spec:\n  nodeName: node0\n  containers",
        )
        .replace("{phase: Pending}", "{phase: Running}");
    assert_eq!(
        fairshare_yaml(&running)["queues"]["queue0"]["gpu"]["allocated"],
        "0.5"
    );
}

/// Real sizes: an 80 GB A100 labels 81920 MiB, which KAI floors to 81900. 20000 MiB is
/// ceil(24.42…) = 25 hundredths of it; four fit one GPU (80000 ≤ 81900 MiB), the fifth
/// waits. A pending request adds 20000 / 81900 GPUs to its queue's demand, unrounded:
/// five of them 1.221001225 GPUs (each rounded up to the nano-GPU: 0.244200245).
#[test]
fn gpu_memory_shares_of_an_a100_80gb() {
    let tasks = [None, None, None, None, None];
    let mut t = Topo::default()
        .queue("queue0", None, 2.0, 1.0)
        .node("node0", 1);
    for i in 0..5 {
        t = t.job(&format!("j{i}"), "queue0", TRAIN, 0.25, &tasks[..1]);
    }
    let y = by_memory(&t, "81920", 80000.0);
    assert!(y.contains("gpu-memory: \"20000\""));
    let fs = fairshare_yaml(&y);
    assert_eq!(fs["queues"]["queue0"]["gpu"]["requested"], "1.221001225");
    let v = schedule_yaml(&y);
    let placed: Vec<String> = allocated(&v).into_iter().map(|a| a.0).collect();
    assert_eq!(placed.len(), 4, "{v}");
    assert_eq!(v["pending"].as_array().unwrap().len(), 1, "{v}");
}
