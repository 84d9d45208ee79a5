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

/// One recorded run of the generated month (times in seconds after 2026-11-01T00:00:00Z).
#[derive(Clone, Copy, Debug)]
pub struct Run {
    /// Its number (`train-{i}`).
    pub i: usize,
    /// Its department (`team-{d}`).
    pub d: usize,
    /// Arrival.
    pub created: u64,
    /// Quota reserved and admitted (the pod starts).
    pub admitted: u64,
    /// Pods ready.
    pub ready: u64,
    /// Finished.
    pub finished: u64,
    /// GPUs (1, 2, 4 or 8).
    pub gpus: u64,
    /// Priority class `high` (else `low`).
    pub high: bool,
    /// Recorded with an earlier preemption.
    pub preempted: bool,
}

/// The month's `n` runs (seeded: the same `n` gives the same runs), arrivals spread evenly
/// over 29 days.
pub fn runs(n: usize) -> impl Iterator<Item = Run> {
    let mut rng = SplitMix64::new(35);
    let span = 29 * 86_400u64;
    (0..n).map(move |i| {
        let created = (i as u64) * span / (n.max(1) as u64);
        let admitted = created + rng.below(600);
        let ready = admitted + 5 + rng.below(30);
        let finished = admitted + 600 + rng.below(4 * 3600);
        let gpus = 1 << rng.below(4);
        let high = rng.below(10) == 0;
        let preempted = rng.below(20) == 0;
        Run {
            i,
            d: i % DEPARTMENTS,
            created,
            admitted,
            ready,
            finished,
            gpus,
            high,
            preempted,
        }
    })
}

/// The month's dump of `n` Workloads (seeded: the same `n` gives the same bytes).
pub fn month_dump(n: usize) -> String {
    let mut s = String::with_capacity(n * 2200 + 64);
    s.push_str("apiVersion: v1\nkind: List\nmetadata:\n  resourceVersion: \"\"\nitems:\n");
    for r in runs(n) {
        let Run {
            i,
            d,
            created,
            admitted,
            ready,
            finished,
            gpus,
            high,
            preempted,
        } = r;
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

/// 2026-11-01T00:00:00Z, unix seconds.
pub const T0: u64 = 1_793_491_200;

/// Seconds between the samples of [`month_openmetrics`] (and the step to ask for them).
pub const SCRAPE_SECONDS: u64 = 300;

/// The same month as a Prometheus holds it (the pod `train-{i}-0` of Job `train-{i}`, one
/// per run): OpenMetrics text for `promtool tsdb create-blocks-from openmetrics`, every
/// [`SCRAPE_SECONDS`] while the object exists. kube-state-metrics' `kube_pod_created`,
/// `kube_pod_labels` (queue-name and priority-class labels) and `kube_pod_owner` from
/// creation until ten minutes after the pod finished, `kube_pod_start_time` from its
/// start, `kube_pod_completion_time` from its end,
/// `kube_pod_container_resource_requests{resource="nvidia_com_gpu"}` throughout, and the
/// DCGM exporter's `DCGM_FI_DEV_GPU_UTIL` per GPU while the pod runs. A run recorded with a
/// preemption is one pod here (pod series keep no conditions).
///
/// # Errors
/// What writing to `out` returns.
pub fn month_openmetrics(n: usize, out: &mut impl std::io::Write) -> std::io::Result<()> {
    let step = SCRAPE_SECONDS;
    // the grid points in [from, to]
    let grid = move |from: u64, to: u64| (from.div_ceil(step)..=to / step).map(move |k| k * step);
    let gone = |r: &Run| r.finished + 600;
    let base = |r: &Run| {
        format!(
            "namespace=\"team-{}\",pod=\"train-{}-0\",uid=\"u{}\"",
            r.d, r.i, r.i
        )
    };
    type Family = (&'static str, fn(&Run) -> Option<(u64, u64)>);
    let families: [Family; 3] = [
        ("kube_pod_created", |r| Some((r.created, r.created))),
        ("kube_pod_start_time", |r| Some((r.admitted, r.admitted))),
        ("kube_pod_completion_time", |r| {
            Some((r.finished, r.finished))
        }),
    ];
    for (name, from_value) in families {
        writeln!(out, "# TYPE {name} gauge")?;
        for r in runs(n) {
            let Some((from, value)) = from_value(&r) else {
                continue;
            };
            let l = base(&r);
            for t in grid(from, gone(&r)) {
                writeln!(out, "{name}{{{l}}} {} {}", T0 + value, T0 + t)?;
            }
        }
    }
    writeln!(out, "# TYPE kube_pod_container_resource_requests gauge")?;
    for r in runs(n) {
        let l = base(&r);
        for t in grid(r.created, gone(&r)) {
            writeln!(
                out,
                "kube_pod_container_resource_requests{{{l},container=\"c\",node=\"node-{}\",resource=\"nvidia_com_gpu\",unit=\"integer\"}} {} {}",
                r.i % 160,
                r.gpus,
                T0 + t
            )?;
        }
    }
    writeln!(out, "# TYPE kube_pod_labels gauge")?;
    for r in runs(n) {
        let l = base(&r);
        let class = if r.high { "high" } else { "low" };
        for t in grid(r.created, gone(&r)) {
            writeln!(
                out,
                "kube_pod_labels{{{l},label_kueue_x_k8s_io_queue_name=\"main\",label_kueue_x_k8s_io_priority_class=\"{class}\"}} 1 {}",
                T0 + t
            )?;
        }
    }
    writeln!(out, "# TYPE kube_pod_owner gauge")?;
    for r in runs(n) {
        let l = base(&r);
        for t in grid(r.created, gone(&r)) {
            writeln!(
                out,
                "kube_pod_owner{{{l},owner_kind=\"Job\",owner_name=\"train-{}\",owner_is_controller=\"true\"}} 1 {}",
                r.i,
                T0 + t
            )?;
        }
    }
    writeln!(out, "# TYPE DCGM_FI_DEV_GPU_UTIL gauge")?;
    for r in runs(n) {
        for g in 0..r.gpus {
            for t in grid(r.admitted, r.finished.saturating_sub(1)) {
                writeln!(
                    out,
                    "DCGM_FI_DEV_GPU_UTIL{{gpu=\"{g}\",UUID=\"GPU-{}-{g}\",device=\"nvidia{g}\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node-{}\",container=\"c\",namespace=\"team-{}\",pod=\"train-{}-0\"}} 50 {}",
                    r.i,
                    r.i % 160,
                    r.d,
                    r.i,
                    T0 + t
                )?;
            }
        }
    }
    writeln!(out, "# EOF")
}

/// The replay scenario of the month read from a live Prometheus at `url` (platform in
/// `platform.yaml`, 30 days from 2026-11-01, step [`SCRAPE_SECONDS`]).
pub fn live_scenario(url: &str) -> String {
    SCENARIO.replace(
        "history: {files: [dump.yaml]}",
        &format!(
            "history: {{prometheus: {{url: \"{url}\", start: \"2026-11-01T00:00:00Z\", end: \"2026-12-01T00:00:00Z\", step: {SCRAPE_SECONDS}}}}}"
        ),
    )
}

/// The metering document of the month (the departments `team-0` … and the card type of
/// the DCGM series, 4 × [`department_gpus`] cards) for `gpuquota meter --prometheus`.
pub fn meter_document(n: usize) -> String {
    let departments: Vec<String> = (0..DEPARTMENTS)
        .map(|d| format!("{{name: team-{d}, namespaces: [team-{d}]}}"))
        .collect();
    format!(
        "window: {{start: \"2026-11-01T00:00:00Z\", end: \"2026-12-01T00:00:00Z\"}}\ncurrency: USD\ncardTypes: [{{name: H100, model: NVIDIA H100 80GB HBM3, pricePerHour: \"2.00\", capacity: {}}}]\ndepartments: [{}]\n",
        DEPARTMENTS * department_gpus(n),
        departments.join(", ")
    )
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
