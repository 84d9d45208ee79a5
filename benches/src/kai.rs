//! The KAI simulator's day: the input of the `kai_sim` bench, also written as files by
//! `cargo run --release -p gpuquota-benches --example kai_day -- JOBS NODES DIR [HOURS] [USAGE]`
//! for end-to-end runs of `gpuquota sim DIR/day.yaml`.

use std::fmt::Write as _;

/// The cluster of the day (`c.yaml`): `nodes` nodes of 8 GPUs, 128 cores and 1 TiB;
/// 4 departments (deserved 900 GPUs, weight 1) of 3 projects (deserved 300 GPUs, weight 1);
/// `jobs` one-pod jobs of 1, 2, 4 or 8 GPUs arriving evenly over 24 h, running 10 min to
/// 4 h, one in five at priority 125 (non-preemptible). The same arguments give the same bytes
/// (a fixed xorshift sequence).
pub fn day_cluster(jobs: usize, nodes: usize) -> String {
    let mut c = String::new();
    c.push_str("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: inference}\nvalue: 125\n");
    for n in 0..nodes {
        let _ = write!(
            c,
            "---\napiVersion: v1\nkind: Node\nmetadata: {{name: node-{n:03}}}\nstatus: {{allocatable: {{nvidia.com/gpu: \"8\", cpu: \"128\", memory: 1Ti}}}}\n"
        );
    }
    for d in 0..4 {
        let _ = write!(
            c,
            "---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {{name: dept-{d}}}\nspec: {{resources: {{gpu: {{quota: 900, overQuotaWeight: 1, limit: -1}}}}}}\n"
        );
        for p in 0..3 {
            let _ = write!(
                c,
                "---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {{name: proj-{d}-{p}}}\nspec: {{parentQueue: dept-{d}, resources: {{gpu: {{quota: 300, overQuotaWeight: 1, limit: -1}}}}}}\n"
            );
        }
    }
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for j in 0..jobs {
        let at = j as u64 * 86_400 / jobs as u64;
        let (h, m, s) = (at / 3600, at / 60 % 60, at % 60);
        let gpus = [1, 2, 4, 8][(next() % 4) as usize];
        let runtime = 600 + next() % (4 * 3600 - 600);
        let q = format!("proj-{}-{}", next() % 4, next() % 3);
        let pc = if next() % 5 == 0 {
            ", priorityClassName: inference"
        } else {
            ""
        };
        let _ = write!(
            c,
            "---\napiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {{name: j{j:05}, namespace: ns, creationTimestamp: \"2026-04-01T{h:02}:{m:02}:{s:02}Z\", annotations: {{gpuquota.dev/runtime: {runtime}s}}}}\nspec: {{queue: {q}, minMember: 1{pc}}}\n"
        );
        let _ = write!(
            c,
            "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: j{j:05}-0, namespace: ns, annotations: {{pod-group-name: j{j:05}}}}}\nspec: {{schedulerName: kai-scheduler, containers: [{{name: c, resources: {{limits: {{nvidia.com/gpu: \"{gpus}\"}}}}}}]}}\nstatus: {{phase: Pending}}\n"
        );
    }
    c
}

/// The `Simulation` document of the day over `cluster` (a 1 s session from
/// 2026-04-01T00:00:00Z for `hours`), with `usage` as the `spec.kai.usage` flow mapping
/// (`None`: no usage database, no time-based fairshare).
pub fn day_simulation(cluster: &str, hours: u32, usage: Option<&str>) -> String {
    let end = 1_775_001_600_i64 + i64::from(hours) * 3600;
    let end = gpuquota_model::Timestamp::from_unix_seconds(end);
    let usage = usage.map_or(String::new(), |u| format!(", usage: {u}"));
    format!(
        "apiVersion: gpuquota.dev/v1alpha1\nkind: Simulation\nmetadata: {{name: day}}\nspec:\n  engine: kai\n  cluster: [{cluster}]\n  start: \"2026-04-01T00:00:00Z\"\n  end: \"{end}\"\n  kai: {{sessionInterval: 1s{usage}}}\n"
    )
}
