//! A recorded month as `kubectl get workloads -A -o yaml` prints it, generated for the
//! history benchmarks: `n` Kueue Workloads (about 2 KB of YAML each, so 100,000 make about
//! 200 MB) over 30 days in four departments, each with the conditions a cluster keeps
//! (`QuotaReserved`, `Admitted`, `PodsReady`, `Finished`, and for one in twenty an
//! earlier preemption: `Evicted`/`Preempted` cleared, `schedulingStats`, `requeueState`),
//! plus the platform that replays it and the scenario.

use std::fmt::Write as _;

use crate::SplitMix64;

/// Departments (namespaces, one ClusterQueue and LocalQueue `main` each).
pub const DEPARTMENTS: usize = 4;

/// The platform: one flavor, a ClusterQueue of 256 GPUs per department in one cohort,
/// their LocalQueues, and the priority classes `low` and `high`.
pub fn platform() -> String {
    let mut s = String::from(
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: h100}\n",
    );
    for d in 0..DEPARTMENTS {
        let _ = write!(
            s,
            "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {{name: team-{d}}}\nspec:\n  cohort: lab\n  namespaceSelector: {{}}\n  preemption: {{withinClusterQueue: LowerPriority, reclaimWithinCohort: Any}}\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - {{name: h100, resources: [{{name: nvidia.com/gpu, nominalQuota: 256}}]}}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {{name: team-{d}}}\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {{name: main, namespace: team-{d}}}\nspec: {{clusterQueue: team-{d}}}\n"
        );
    }
    s.push_str("---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\nmetadata: {name: high}\nvalue: 1000\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\nmetadata: {name: low}\nvalue: 10\n");
    s
}

/// The replay scenario of the month: the platform in `platform.yaml`, the dump in
/// `dump.yaml`, 30 days from 2026-11-01.
pub const SCENARIO: &str = "apiVersion: gpuquota.dev/v1alpha1
kind: Simulation
metadata: {name: recorded-month}
spec:
  engine: kueue
  cluster: [platform.yaml]
  start: \"2026-11-01T00:00:00Z\"
  end: \"2026-12-01T00:00:00Z\"
  workloads:
  - history: {files: [dump.yaml]}
";

/// `YYYY-MM-DDTHH:MM:SSZ` of `s` seconds after 2026-11-01T00:00:00Z (within November).
fn time(s: u64) -> String {
    let day = s / 86_400;
    let r = s % 86_400;
    format!(
        "2026-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        11 + day / 30,
        day % 30 + 1,
        r / 3600,
        r % 3600 / 60,
        r % 60
    )
}

/// The month's dump of `n` Workloads (seeded: the same `n` gives the same bytes).
pub fn month_dump(n: usize) -> String {
    let mut rng = SplitMix64::new(35);
    let mut s = String::with_capacity(n * 2200 + 64);
    s.push_str("apiVersion: v1\nkind: List\nmetadata:\n  resourceVersion: \"\"\nitems:\n");
    let span = 29 * 86_400u64;
    for i in 0..n {
        let d = i % DEPARTMENTS;
        let created = (i as u64) * span / (n.max(1) as u64);
        let wait = rng.below(600);
        let admitted = created + wait;
        let ready = admitted + 5 + rng.below(30);
        let runtime = 600 + rng.below(4 * 3600);
        let finished = admitted + runtime;
        let gpus = 1 << rng.below(4);
        let high = rng.below(10) == 0;
        let preempted = rng.below(20) == 0;
        let (class, prio) = if high { ("high", 1000) } else { ("low", 10) };
        let _ = write!(
            s,
            "- apiVersion: kueue.x-k8s.io/v1beta1
  kind: Workload
  metadata:
    creationTimestamp: \"{created}\"
    generation: 1
    labels:
      kueue.x-k8s.io/job-uid: 5f0c{i:08x}-0000-4000-8000-00000000{d:04x}
    name: job-train-{i}-{i:05x}
    namespace: team-{d}
    ownerReferences:
    - apiVersion: batch/v1
      blockOwnerDeletion: true
      controller: true
      kind: Job
      name: train-{i}
      uid: 5f0c{i:08x}-0000-4000-8000-00000000{d:04x}
    resourceVersion: \"{rv}\"
    uid: 7a1e{i:08x}-0000-4000-8000-00000000{d:04x}
  spec:
    active: true
    podSets:
    - count: 1
      name: main
      template:
        metadata: {{}}
        spec:
          containers:
          - image: registry.example/train:v1
            name: trainer
            resources:
              limits:
                nvidia.com/gpu: \"{gpus}\"
              requests:
                cpu: \"{cpu}\"
                memory: {mem}Gi
                nvidia.com/gpu: \"{gpus}\"
          restartPolicy: Never
    priority: {prio}
    priorityClassName: {class}
    priorityClassSource: kueue.x-k8s.io/workloadpriorityclass
    queueName: main
  status:
    admission:
      clusterQueue: team-{d}
      podSetAssignments:
      - count: 1
        flavors:
          cpu: h100
          memory: h100
          nvidia.com/gpu: h100
        name: main
        resourceUsage:
          cpu: \"{cpu}\"
          memory: {mem}Gi
          nvidia.com/gpu: \"{gpus}\"
    conditions:
    - lastTransitionTime: \"{admitted_t}\"
      message: Quota reserved in ClusterQueue team-{d}
      observedGeneration: 1
      reason: QuotaReserved
      status: \"True\"
      type: QuotaReserved
    - lastTransitionTime: \"{admitted_t}\"
      message: The workload is admitted
      observedGeneration: 1
      reason: Admitted
      status: \"True\"
      type: Admitted
    - lastTransitionTime: \"{ready_t}\"
      message: All pods reached readiness and the workload is running
      observedGeneration: 1
      reason: PodsReady
      status: \"True\"
      type: PodsReady
    - lastTransitionTime: \"{finished_t}\"
      message: Job finished successfully
      observedGeneration: 1
      reason: Succeeded
      status: \"True\"
      type: Finished
",
            created = time(created),
            rv = 100_000 + i,
            cpu = gpus * 8,
            mem = gpus * 64,
            admitted_t = time(admitted),
            ready_t = time(ready),
            finished_t = time(finished),
        );
        if preempted {
            let _ = write!(
                s,
                "    - lastTransitionTime: \"{t}\"
      message: 'Previously: Preempted to accommodate a workload due to reclamation within the cohort'
      observedGeneration: 1
      reason: QuotaReserved
      status: \"False\"
      type: Evicted
    - lastTransitionTime: \"{t}\"
      message: 'Previously: Preempted to accommodate a workload due to reclamation within the cohort'
      observedGeneration: 1
      reason: QuotaReserved
      status: \"False\"
      type: Preempted
    requeueState:
      count: 1
    schedulingStats:
      evictions:
      - count: 1
        reason: Preempted
        underlyingCause: InCohortReclamation
",
                t = time(admitted)
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_month_dump_is_about_two_kilobytes_a_workload_and_reads_back() {
        let dump = month_dump(100);
        let per = dump.len() / 100;
        assert!((1500..2500).contains(&per), "{per} bytes per workload");
        let h = gpuquota_sim::history::load(&[("dump.yaml".to_owned(), dump)]).unwrap();
        assert_eq!(h.records.len(), 100);
        assert_eq!(time(86_400 + 3661), "2026-11-02T01:01:01Z");
    }

    #[test]
    fn a_dump_beyond_the_parsers_default_node_budget_reads() {
        // 2,000 Workloads of about 118 lines are some 500,000 YAML nodes, twice the
        // parser's default budget of 250,000
        let dump = month_dump(2_000);
        let h = gpuquota_sim::history::load(&[("dump.yaml".to_owned(), dump)]).unwrap();
        assert_eq!(h.records.len(), 2_000);
    }
}
