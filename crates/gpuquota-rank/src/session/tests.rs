//! The session's shortcuts (the memo of steps that change nothing, repeated picks) against
//! the session without them: same decisions, same messages, on random clusters built around
//! backlogs of alike jobs (the case the shortcuts serve).

use std::fmt::Write as _;

use proptest::prelude::*;

use super::*;
use crate::division::{DivisionOptions, Mode};
use crate::snapshot::BuildOptions;

/// A job shape: GPUs per pod (0 = half a GPU by `gpu-fraction`), pods, minMember, priority
/// class (0 none, 1 `inference` = 125, 2 `low` = 40), copies, and whether the copies run
/// (on the first node they fit).
type Shape = (u8, u8, u8, u8, u8, bool);

fn yaml(nodes: &[u8], leaves: &[(u8, u8, i8, u8)], shapes: &[(usize, Shape)]) -> String {
    yaml_with(nodes, leaves, shapes, false)
}

/// [`yaml`], with running pods on the node with the most room (`spread`, which leaves the
/// nodes fragmented) instead of the first that fits.
fn yaml_with(
    nodes: &[u8],
    leaves: &[(u8, u8, i8, u8)],
    shapes: &[(usize, Shape)],
    spread: bool,
) -> String {
    let mut y = String::new();
    y.push_str("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: inference}\nvalue: 125\n");
    y.push_str("---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low}\nvalue: 40\n");
    for (i, g) in nodes.iter().enumerate() {
        let _ = write!(
            y,
            "---\napiVersion: v1\nkind: Node\nmetadata: {{name: n{i}}}\nstatus: {{allocatable: {{nvidia.com/gpu: \"{g}\", cpu: \"64\", memory: 512Gi}}}}\n"
        );
    }
    for d in 0..2 {
        let _ = write!(
            y,
            "---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {{name: d{d}}}\nspec: {{resources: {{gpu: {{quota: -1, overQuotaWeight: 1, limit: -1}}}}}}\n"
        );
    }
    for (i, &(dept, quota, extra, weight)) in leaves.iter().enumerate() {
        // The limit is unlimited (-1) or `extra` above the quota.
        let limit = if extra < 0 {
            -1
        } else {
            i16::from(quota) + i16::from(extra)
        };
        let _ = write!(
            y,
            "---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {{name: q{i}, creationTimestamp: \"2025-01-01T00:00:{i:02}Z\"}}\nspec: {{parentQueue: d{}, resources: {{gpu: {{quota: {quota}, overQuotaWeight: {weight}, limit: {limit}}}}}}}\n",
            dept % 2
        );
    }
    let mut free: Vec<u32> = nodes.iter().map(|&g| u32::from(g) * 2).collect();
    let mut seq = 0u32;
    for &(leaf, (gpus, pods, min, class, copies, running)) in shapes {
        let class = [
            "",
            ", priorityClassName: inference",
            ", priorityClassName: low",
        ][usize::from(class % 3)];
        for _ in 0..copies {
            seq += 1;
            let name = format!("j{seq:03}");
            let _ = write!(
                y,
                "---\napiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {{name: {name}, namespace: ns, creationTimestamp: \"2025-01-01T{:02}:{:02}:00Z\"}}\nspec: {{queue: q{leaf}, minMember: {}{class}}}\n",
                seq / 60,
                seq % 60,
                min.clamp(1, pods)
            );
            // Half-GPU units.
            let need = if gpus == 0 { 1 } else { u32::from(gpus) * 2 };
            for p in 0..pods {
                let (res, frac) = if gpus == 0 {
                    (String::new(), ", gpu-fraction: \"0.5\"")
                } else {
                    (format!("limits: {{nvidia.com/gpu: \"{gpus}\"}}"), "")
                };
                let node = if running && spread {
                    (0..free.len())
                        .filter(|&n| free[n] >= need)
                        .max_by_key(|&n| (free[n], std::cmp::Reverse(n)))
                } else if running {
                    free.iter().position(|&f| f >= need)
                } else {
                    None
                };
                let (node_line, status) = match node {
                    Some(n) => {
                        free[n] -= need;
                        (
                            format!(", nodeName: n{n}"),
                            "{phase: Running, startTime: \"2025-01-01T00:00:00Z\"}",
                        )
                    }
                    None => (String::new(), "{phase: Pending}"),
                };
                let _ = write!(
                    y,
                    "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}-{p}, namespace: ns, labels: {{kai.scheduler/queue: q{leaf}}}, annotations: {{pod-group-name: {name}{frac}}}}}\nspec: {{containers: [{{name: c, resources: {{{res}}}}}]{node_line}}}\nstatus: {status}\n"
                );
            }
        }
    }
    y
}

/// Shapes with GPUs per pod from `gpus`.
fn shape_of(gpus: Vec<u8>) -> impl Strategy<Value = Shape> {
    (
        prop::sample::select(gpus),
        1u8..=3,
        0u8..=3,
        0u8..3,
        1u8..=6,
        any::<bool>(),
    )
}

fn cluster_yaml() -> impl Strategy<Value = String> {
    cluster_yaml_of(vec![0u8, 1, 1, 2, 4, 8])
}

/// Random clusters whose pods ask for GPUs from `gpus` (0 = half a GPU).
fn cluster_yaml_of(gpus: Vec<u8>) -> impl Strategy<Value = String> {
    (
        prop::collection::vec(prop::sample::select(vec![0u8, 2, 4, 8]), 0..=4),
        prop::collection::vec(
            (
                0u8..2,
                0u8..=8,
                prop::sample::select(vec![-1i8, 0, 4, 8]),
                0u8..=2,
            ),
            1..=4,
        ),
    )
        .prop_flat_map(move |(nodes, leaves)| {
            let n = leaves.len();
            (
                Just(nodes),
                Just(leaves),
                prop::collection::vec((0..n, shape_of(gpus.clone())), 1..=8),
            )
        })
        .prop_map(|(nodes, leaves, shapes)| yaml(&nodes, &leaves, &shapes))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// The memo and the repeated picks are pure shortcuts: every decision, reason and
    /// message is the one of the session that recomputes each step and walks the queue tree
    /// for every pick.
    #[test]
    fn shortcuts_change_no_decision(y in cluster_yaml(), spread in any::<bool>(), corrected in any::<bool>()) {
        let model = gpuquota_model::import_str("c.yaml", &y).expect("valid manifests").model;
        let now = "2025-01-01T06:00:00Z".parse().expect("a timestamp");
        let c = Cluster::from_model(&model, &BuildOptions { now: Some(now), ..Default::default() })
            .expect("a cluster");
        let o = SessionOptions {
            placement: if spread { Placement::Spread } else { Placement::Binpack },
            division: DivisionOptions {
                mode: if corrected { Mode::Corrected } else { Mode::Kai },
                ..DivisionOptions::default()
            },
            ..SessionOptions::default()
        };
        let fast = run(&c, &o, true);
        let plain = run(&c, &o, false);
        prop_assert_eq!(fast, plain, "{}", y);
    }
}

/// Oversubscribed clusters: one to three 8-GPU nodes, two to four leaves with small quotas,
/// and long backlogs (up to 12 copies of a shape) of one-pod jobs of 1 to 8 GPUs, about
/// half of them running, packed or spread over the nodes: demand is several times the
/// capacity, so allocate fails for most jobs and consolidation (on spread, fragmented
/// nodes), reclaim and preempt run over backlogs of alike jobs.
fn oversubscribed_yaml() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(Just(8u8), 1..=3),
        prop::collection::vec(
            (
                0u8..2,
                0u8..=8,
                prop::sample::select(vec![-1i8, -1, 8]),
                0u8..=2,
            ),
            2..=4,
        ),
    )
        .prop_flat_map(|(nodes, leaves)| {
            let n = leaves.len();
            let shape = (
                prop::sample::select(vec![1u8, 2, 2, 4, 4, 8]),
                Just(1u8),
                Just(1u8),
                0u8..3,
                1u8..=12,
                prop::bool::weighted(0.5),
            );
            (
                Just(nodes),
                Just(leaves),
                prop::collection::vec((0..n, shape), 2..=8),
                any::<bool>(),
            )
        })
        .prop_map(|(nodes, leaves, shapes, spread)| yaml_with(&nodes, &leaves, &shapes, spread))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The shortcuts on oversubscribed clusters (long backlogs of alike one-pod jobs, the
    /// case where an action is finished once every job left replays a memoized failure):
    /// every decision, reason and message is the plain session's.
    #[test]
    fn shortcuts_change_no_decision_oversubscribed(y in oversubscribed_yaml(), spread in any::<bool>()) {
        let model = gpuquota_model::import_str("c.yaml", &y).expect("valid manifests").model;
        let now = "2025-01-01T06:00:00Z".parse().expect("a timestamp");
        let c = Cluster::from_model(&model, &BuildOptions { now: Some(now), ..Default::default() })
            .expect("a cluster");
        let o = SessionOptions {
            placement: if spread { Placement::Spread } else { Placement::Binpack },
            ..SessionOptions::default()
        };
        let fast = run(&c, &o, true);
        let plain = run(&c, &o, false);
        prop_assert_eq!(fast, plain, "{}", y);
    }
}

/// One step of a live cluster's life: `(kind, job)`; kind 0 submits, 1 finishes, 2 holds
/// or releases the `job`-th job (of all, in key order), 3 runs a session, 4 moves the
/// clock `job` minutes on and runs a session.
type LiveOp = (u8, u8);

/// What a step of [`live_trace`] shows: the session's outcome (when it ran one) and the
/// queue allocations after it.
type LiveStep = (
    Option<Result<SessionResult, SessionError>>,
    crate::ids::PerQueue<PerResource<i128>>,
);

/// Drives a live cluster through `ops`, keeping the open state or not; every session's
/// result (or error) and the queue allocations after every step.
fn live_trace(c: &Cluster, o: &SessionOptions, ops: &[LiveOp], keep: bool) -> Vec<LiveStep> {
    let keys: Vec<String> = c.jobs.iter().map(|j| j.key.clone()).collect();
    let mut live = crate::live::LiveCluster::from_cluster(c.clone());
    live.set_keep(keep);
    let mut held = std::collections::BTreeSet::new();
    let mut now = c.now;
    let mut out = Vec::new();
    for &(kind, job) in ops {
        let key = keys.get(usize::from(job) % keys.len().max(1));
        let mut result = None;
        match (kind % 5, key) {
            (0, Some(k)) => {
                live.submit(k);
            }
            (1, Some(k)) => {
                live.finish(k);
            }
            (2, Some(k)) => {
                let h = held.insert(k.clone()) || !held.remove(k);
                live.set_held(k, h);
            }
            (3, _) => result = Some(live.session(o)),
            (4, _) => {
                now = gpuquota_model::Timestamp::from_unix_seconds(
                    now.unix_seconds() + i64::from(job) * 60,
                );
                live.set_now(now);
                result = Some(live.session(o));
            }
            _ => {}
        }
        out.push((result, live.queue_allocated()));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// The open state kept across a live cluster's sessions ([`Kept`]) is a pure shortcut:
    /// through random arrivals, departures, holds and sessions, every session decides what
    /// a session opening on a state built afresh decides, and the queue allocations agree.
    #[test]
    fn kept_state_changes_no_decision(
        y in cluster_yaml_of(vec![1u8, 1, 2, 4, 8]),
        fractions in cluster_yaml(),
        use_fractions in prop::bool::weighted(0.2),
        backlog in oversubscribed_yaml(),
        use_backlog in prop::bool::weighted(0.3),
        ops in prop::collection::vec((0u8..5, any::<u8>()), 1..=40),
        spread in any::<bool>(),
    ) {
        let y = if use_fractions {
            fractions
        } else if use_backlog {
            backlog
        } else {
            y
        };
        let model = gpuquota_model::import_str("c.yaml", &y).expect("valid manifests").model;
        let now = "2025-01-01T06:00:00Z".parse().expect("a timestamp");
        let c = Cluster::from_model(&model, &BuildOptions { now: Some(now), ..Default::default() })
            .expect("a cluster");
        let o = SessionOptions {
            placement: if spread { Placement::Spread } else { Placement::Binpack },
            ..SessionOptions::default()
        };
        let kept = live_trace(&c, &o, &ops, true);
        let fresh = live_trace(&c, &o, &ops, false);
        prop_assert_eq!(kept, fresh, "{}", y);
    }
}

/// A backlog of identical jobs behind one that fits: the replayed failures carry the same
/// reason and message as the first, and the allocation is the same.
#[test]
fn a_backlog_of_alike_jobs_fails_alike() {
    let y = yaml(
        &[8],
        &[(0, 8, -1, 1), (1, 0, -1, 1)],
        &[(0, (4, 1, 1, 0, 5, false)), (1, (8, 1, 1, 0, 3, false))],
    );
    let model = gpuquota_model::import_str("c.yaml", &y)
        .expect("valid manifests")
        .model;
    let c = Cluster::from_model(&model, &BuildOptions::default()).expect("a cluster");
    let o = SessionOptions::default();
    let fast = run(&c, &o, true).expect("a session");
    assert_eq!(fast, run(&c, &o, false).expect("a session"));
    assert_eq!(fast.allocated.len(), 2);
    assert_eq!(fast.pending.len(), 6);
    let msgs: std::collections::BTreeSet<&str> = fast.pending[..3]
        .iter()
        .map(|p| p.message.as_str())
        .collect();
    assert_eq!(msgs.len(), 1, "{:?}", fast.pending);
}

/// The per-pod tables follow the job list by id: a row inserted or removed moves the later
/// jobs' rows with it, and `(job, pod)` reads the pod of that job's row.
#[test]
fn jagged_rows_follow_job_ids() {
    let (j0, j1, j2) = (JobId::new(0), JobId::new(1), JobId::new(2));
    let mut t = Jagged {
        offs: vec![0, 2, 3],
        data: vec![10, 11, 20],
    };
    t.insert_row(j1, 2, 0);
    t[(j1, TaskId::new(1))] = 15;
    assert_eq!(
        (&t[j0], &t[j1], &t[j2]),
        (&[10, 11][..], &[0, 15][..], &[20][..])
    );
    t.remove_row(j0);
    assert_eq!(t[(j0, TaskId::new(1))], 15);
    assert_eq!(t[(j1, TaskId::new(0))], 20);
    assert_eq!(t.offs, [0, 2, 3]);
}
