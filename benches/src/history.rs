//! A recorded month as `kubectl get workloads -A -o yaml` prints it, generated for the
//! history benchmarks: `n` Kueue Workloads (about 2 KB of YAML each, so 100,000 make about
//! 200 MB) over 30 days in four departments, each with the conditions a cluster keeps
//! (`QuotaReserved`, `Admitted`, `PodsReady`, `Finished`, and for one in twenty an
//! earlier preemption: `Evicted`/`Preempted` cleared, `schedulingStats`, `requeueState`),
//! plus the platform that replays it (sized to the month, so that it really admits, queues
//! and preempts) and the scenario.

use std::fmt::Write as _;

use crate::SplitMix64;

/// Departments (namespaces, one ClusterQueue and LocalQueue `main` each).
pub const DEPARTMENTS: usize = 4;

/// GPUs of each department's ClusterQueue for a month of `n` Workloads: 32 per 10,000
/// (at least 8), so that the month's demand (about 3.75 GPUs for about 2.2 hours per
/// Workload, some 1,170 GPUs busy on average at 100,000) fills about nine tenths of the
/// 4 × 320 GPUs of a 100,000-Workload month and the queues really wait, borrow and preempt.
pub fn department_gpus(n: usize) -> usize {
    (n * 32 / 10_000).max(8)
}

/// The platform of a month of `n` Workloads: one flavor `h100` for GPUs, CPU and memory
/// (the dump's Workloads request all three, and a resource no flavor covers admits
/// nothing), a ClusterQueue of [`department_gpus`] GPUs (8 CPUs and 64 Gi a GPU) per
/// department in one cohort, their LocalQueues, and the priority classes `low` and `high`.
pub fn platform(n: usize) -> String {
    let gpus = department_gpus(n);
    let mut s = String::from(
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: h100}\n",
    );
    for d in 0..DEPARTMENTS {
        let _ = write!(
            s,
            "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {{name: team-{d}}}\nspec:\n  cohort: lab\n  namespaceSelector: {{}}\n  preemption: {{withinClusterQueue: LowerPriority, reclaimWithinCohort: Any}}\n  resourceGroups:\n  - coveredResources: [cpu, memory, nvidia.com/gpu]\n    flavors:\n    - {{name: h100, resources: [{{name: cpu, nominalQuota: {cpu}}}, {{name: memory, nominalQuota: {mem}Gi}}, {{name: nvidia.com/gpu, nominalQuota: {gpus}}}]}}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {{name: team-{d}}}\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {{name: main, namespace: team-{d}}}\nspec: {{clusterQueue: team-{d}}}\n",
            cpu = gpus * 8,
            mem = gpus * 64,
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

/// The whole replay of a month of `n` Workloads whose dump is `dump`: the scenario
/// [`SCENARIO`] with [`platform`]`(n)`, imported and simulated on the Kueue engine.
///
/// # Panics
/// When the scenario does not load or simulate (generated input: a bug of the generator).
pub fn replay(n: usize, dump: &str) -> gpuquota_sim::Report {
    let platform = platform(n);
    let sim = gpuquota_sim::fuzzing::scenario("month.yaml", SCENARIO, "month", &|f: &str| {
        Ok((
            f.to_owned(),
            if f == "platform.yaml" {
                platform.clone()
            } else {
                dump.to_owned()
            },
        ))
    })
    .expect("valid scenario");
    gpuquota_sim::fuzzing::run_kueue(&sim).expect("simulates")
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

    #[test]
    fn the_generated_month_replays_with_admissions() {
        let dump = month_dump(400);
        let f = replay(400, &dump)
            .fidelity
            .expect("a recorded month has fidelity");
        let admitted = f
            .workloads
            .iter()
            .filter(|w| w.simulated_admitted_ms.is_some())
            .count();
        assert_eq!((f.workloads.len(), admitted), (400, 400));
        // the 17 recorded with an earlier preemption have no first admission to compare
        let evicted = f
            .workloads
            .iter()
            .filter(|w| w.recorded_evictions > 0)
            .count();
        assert_eq!(evicted, 17);
        assert_eq!(f.all.compared, 383);
    }
}
