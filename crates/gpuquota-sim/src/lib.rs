//! A deterministic virtual-time simulator over the gpuquota engines: days of arrivals,
//! admissions, preemptions and completions replayed in milliseconds of CPU, decided by the
//! engines themselves (Kueue's admission engine `gpuquota-cohort`, driven incrementally), or
//! by namespace ResourceQuotas alone as the baseline.
//!
//! The way in has the engines' shape: a [`Simulation`] is built once, from a
//! [`gpuquota_model::Model`] and [`Options`] ([`Simulation::from_model`]: an embedder that
//! holds its cluster and workloads as objects) or from a `Simulation` scenario document and
//! the files it names ([`Simulation::from_files`]), and [`simulate`] runs it with the
//! engine's own entry point (Kueue: `gpuquota_cohort::Input::from_model`; KAI:
//! `gpuquota_rank::Input::from_model`), whose diagnostics and codes pass through.
//!
//! ```
//! use gpuquota_model::Timestamp;
//! use gpuquota_sim::{Mode, Options, Simulation, simulate};
//!
//! let cluster = r#"
//! apiVersion: kueue.x-k8s.io/v1beta2
//! kind: ResourceFlavor
//! metadata: {name: h200}
//! ---
//! apiVersion: kueue.x-k8s.io/v1beta2
//! kind: ClusterQueue
//! metadata: {name: batch}
//! spec:
//!   namespaceSelector: {}
//!   resourceGroups:
//!   - coveredResources: [nvidia.com/gpu]
//!     flavors: [{name: h200, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]
//! ---
//! apiVersion: kueue.x-k8s.io/v1beta2
//! kind: LocalQueue
//! metadata: {name: lq, namespace: batch}
//! spec: {clusterQueue: batch}
//! ---
//! apiVersion: kueue.x-k8s.io/v1beta2
//! kind: Workload
//! metadata:
//!   name: train
//!   namespace: batch
//!   annotations: {gpuquota.dev/runtime: 2h, gpuquota.dev/repeat: 6h}
//! spec:
//!   queueName: lq
//!   podSets: [{name: main, count: 8, template: {spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: "1"}}}]}}}]
//! "#;
//! let model = gpuquota_model::import_str("cluster.yaml", cluster).expect("valid objects").model;
//! let start = Timestamp::parse("2026-04-01T00:00:00Z").expect("a timestamp");
//! let options = Options::new(Mode::Kueue, start).with_name("day").with_end_ms(Some(86_400_000));
//! let sim = Simulation::from_model(&model, &options).expect("valid annotations");
//! let report = simulate(&sim).expect("well-formed objects");
//! let json = report.to_json();
//! assert_eq!(json["endMs"], 86_400_000);
//! assert_eq!(json["makespanMs"], 18 * 3_600_000 + 2 * 3_600_000); // the 18:00 copy ends at 20:00
//! assert_eq!(json["workloads"].as_array().map(Vec::len), Some(4)); // train, train-1..3
//! assert_eq!(json["workloads"][0]["runs"][0]["usage"]["h200"]["nvidia.com/gpu"], "8");
//!
//! // the same day as a scenario document beside its cluster file
//! let dir = std::env::temp_dir().join(format!("gpuquota-sim-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).expect("a directory");
//! std::fs::write(dir.join("cluster.yaml"), cluster).expect("written");
//! std::fs::write(dir.join("day.yaml"), r#"
//! apiVersion: gpuquota.dev/v1alpha1
//! kind: Simulation
//! metadata: {name: day}
//! spec:
//!   engine: kueue
//!   cluster: [cluster.yaml]
//!   start: "2026-04-01T00:00:00Z"
//!   end: "2026-04-02T00:00:00Z"
//! "#).expect("written");
//! let from_files = Simulation::from_files(&dir.join("day.yaml")).expect("valid scenario");
//! assert_eq!(from_files.mode(), Mode::Kueue);
//! assert_eq!(simulate(&from_files).expect("simulates").to_json_string(), report.to_json_string());
//! std::fs::remove_dir_all(&dir).ok();
//! ```
//!
//! # Kernel and drivers
//!
//! One kernel runs every engine. It holds one event queue, ordered totally by (time, kind,
//! index, generation) with the kinds in this order at one instant: completions, arrivals,
//! the driver's own ticks (Kueue's next cycle after a cycle latency, a KAI session), budget
//! period boundaries, requeues of held-back victims, and the events of `spec.timeline`
//! ([`timeline`]; the kernel applies each to the platform's model and hands the changes to
//! the driver, after every other event of its instant and before the decision). Its one
//! loop pops an instant, hands each of its events to the engine's driver, then lets the
//! driver decide once (O(events × log events) for the queue, plus the drivers' own cost).
//! A driver per engine is built from the model once, through the engine's own entry point,
//! so its diagnostics and codes pass through: `kueue` and `resourcequota` over the world of
//! `gpuquota_cohort::Input::from_model`, `kai` over `gpuquota_rank::Input::from_model`.
//! What a Kueue or ResourceQuota run produced is an [`engine::Outcome`]; a KAI run's is a
//! [`kai::KaiOutcome`]. The KAI scenario reading, report, budgets and plot are still KAI's
//! own ([`kai`]).
//!
//! # The scenario file
//!
//! ```yaml
//! apiVersion: gpuquota.dev/v1alpha1   # warned about when different
//! kind: Simulation                    # required
//! metadata: {name: night-reclaim}     # the report's name (default: the file stem)
//! spec:
//!   engine: kueue                     # kueue (default) | resourcequota | kai (see [`kai`])
//!   cluster: [platform.yaml]          # manifests, paths relative to this file
//!   start: "2026-04-01T00:00:00Z"     # required, RFC 3339: virtual time 0
//!   end: "2026-04-02T00:00:00Z"       # optional: default, when every workload has finished
//!   resume: false                     # true: a readmitted workload keeps the work done
//!   kueue:
//!     fairSharing: false              # optional: default from a Kueue Configuration in cluster
//!     cycleLatency: 0s                # Go duration: how long one scheduling cycle takes
//!   resourceQuota:
//!     retryInterval: 10s              # optional fixed retry of a rejected workload
//!   workloads:
//!   - file: jobs.yaml                 # more manifests (Workloads as `kueue schedule` reads them)
//!   - generator:                      # Kueue perf-generator classes for one LocalQueue
//!       namespace: ns                 #   the workloads' namespace
//!       localQueue: lq                #   their spec.queueName
//!       resource: nvidia.com/gpu      #   what `request` asks for (default cpu)
//!       workloadsSets: [...]          #   as in Kueue's generator.yaml (below)
//!   - trace: {format: helios, file: cluster_log.csv, queueBy: vc}   # a public trace ([`trace`])
//!   - history: {files: [dump.yaml]}   # a recorded month (kubectl dump, [`history`])
//!   timeline:                         # the platform changing while the run goes on ([`timeline`])
//!   - at: 36h                         #   RFC 3339, or a Go duration from start
//!     patch: [{kind: ClusterQueue, name: batch, mergePatch: {spec: {stopPolicy: Hold}}}]
//! ```
//!
//! Field by field:
//! - `spec.engine`: `kueue` decides with Kueue's admission engine; `resourcequota` with
//!   namespace ResourceQuotas only (below). `kai` is reserved for the KAI mode.
//! - `spec.cluster`: the manifests every other command reads (ResourceFlavors,
//!   ClusterQueues, Cohorts, LocalQueues, Namespaces, ResourceQuotas, PriorityClasses, a
//!   Kueue `Configuration`, Workloads). Workloads in them are simulated too. Every file is
//!   read through the one bounded reader (`gpuquota_model::source::read_text`).
//! - `spec.start`, `spec.end`: virtual time runs in integer milliseconds from `start`; events
//!   at or after `end` are not processed and runs still going at `end` are `Cut`.
//! - `spec.resume`: Kueue's perf runner restarts a preempted workload's runtime from zero
//!   when it is admitted again (the default); `true` keeps the work done.
//! - `spec.kueue.fairSharing`: `true` or `false` overrides the `Configuration`; unset, fair
//!   sharing (and admission fair sharing) follow the `Configuration`.
//! - `spec.kueue.cycleLatency`: a cycle starting at `t` evicts its victims at `t`, its
//!   admissions start at `t + cycleLatency`, and the next cycle starts then.
//! - `spec.resourceQuota.retryInterval`: see the `resourcequota` engine.
//! - `spec.set`: a mapping of `clusterQueues.CQ[.FLAVOR[.RESOURCE]].FIELD` paths to values,
//!   applied to the cluster files' ClusterQueues after they are read, with the grammar of
//!   `gpuquota sim sweep --set` ([`sweep::set_cluster_queue`]; `none` unsets a limit), so a
//!   variant of a platform is a scenario, not a copy of its files
//!   (`{"clusterQueues.assistant.lendingLimit": none}`). A bad path or value is an error
//!   naming `spec.set.<path>`.
//! - `spec.workloads[].file`: more manifests, read like `spec.cluster`.
//! - `spec.workloads[].trace`: a public GPU-cluster trace (Helios, Philly, Alibaba PAI 2020,
//!   Alibaba 2023, AcmeTrace, Alibaba spot 2026), one Workload per job; the mapping of each
//!   format is in [`trace`].
//! - `spec.workloads[].history`: the cluster's own recorded Workloads, Jobs and Pods
//!   (`kubectl get … -o yaml`), each replayed from its recorded arrival for its recorded
//!   run; what is read and inferred is in [`history`].
//! - `spec.workloads[].generator`: upstream's `workloadsSets` for one LocalQueue, named and
//!   timed as upstream's generator does (below), starting from `start`.
//! - `spec.timeline`: platform objects created, replaced (`apply`), merge-patched (`patch`)
//!   or deleted (`delete`) at an instant, node events and MIG layout windows; read and
//!   checked with the scenario, each problem naming `spec.timeline[i]` and the field. Each
//!   event applies after every other event of its instant (completions, arrivals, retries)
//!   and before that instant's scheduling decision. Under Kueue an object change rebuilds
//!   the engine's world through its entry point and carries the admitted workloads across
//!   (`gpuquota_cohort::cycle::transition`): a changed ClusterQueue keeps them (a quota
//!   decrease evicts nothing), `stopPolicy: Hold` stops admission, `HoldAndDrain` also
//!   evicts (a `Preempted` run with reason `ClusterQueueStopped` or `LocalQueueStopped`,
//!   `by` `ClusterQueue/NAME` or `LocalQueue/NAMESPACE/NAME`), a deleted ClusterQueue with
//!   admitted workloads stays, admitting nothing, until the last of them ends, and a new
//!   ClusterQueue or Cohort joins (and lends) at that instant; the pending workloads queue
//!   again. Under `resourcequota` a changed ResourceQuota caps the next pod creation and
//!   evicts nothing. Under KAI a Queue's change (quota, limit, weight, priority; created,
//!   deleted, moved) takes effect at the next session, node events at once with the next
//!   session seeing the new node set, and the KAI report gets the same `timeline` section
//!   ([`timeline`]'s docs). Limits: admission fair sharing's LocalQueue ledgers restart at each
//!   rebuild; Budgets with a timeline are refused (`not-simulated`); a change that adds a
//!   resource while Nodes are checked (or, under `resourcequota`, at all) ends the run
//!   with a `not-simulated` error. An event that changes only quota numbers
//!   (`nominalQuota`, `borrowingLimit`, `lendingLimit`) or fair-sharing weights of
//!   ClusterQueues and Cohorts builds nothing: the scheduler updates its world in place
//!   (`gpuquota_cohort::Scheduler::update`), with the same decisions as a rebuild. Every
//!   rebuilt world of another change is kept until the run ends (the driver reads it):
//!   memory grows by one world per such event.
//!
//! Per workload (annotations, or labels):
//! - arrival: `metadata.creationTimestamp` (default `start`; one before `start` arrives at 0
//!   and keeps its timestamp for queue order, so its `createdMs` is negative);
//! - `gpuquota.dev/runtime`: a Go duration (`200ms`, `4h30m`; fractions of a ms round up);
//!   without it, Kueue's perf label `kueue.x-k8s.io/performance-scheduler-running-ms`
//!   (integer ms); without either the workload runs until `end`;
//! - `gpuquota.dev/repeat`: a Go duration; a fresh copy named `<name>-<k>` (k = 1, 2, …) is
//!   created every period after the first arrival until `end` (needs `spec.end`);
//! - `gpuquota.dev/eviction-time` (Kueue): a Go duration ≥ 0, how long the workload's pods
//!   take to go once it is preempted; without it, the largest
//!   `terminationGracePeriodSeconds` of its PodSets' pod templates (whole seconds ≥ 0) when
//!   one states it; without either, none (see "Evictions that take time" below). A bad value
//!   is an `invalid-scenario` error naming the Workload and the field;
//! - `gpuquota.dev/pod-runtimes` (Kueue, a Workload with one PodSet): one Go duration per
//!   pod, comma-separated (`1h,2h,2h,3h`); each pod's share of the quota is released when it
//!   ends, as upstream's reclaimable pods are; without `gpuquota.dev/runtime` the workload
//!   ends with its last pod (see "Partial completion" below);
//! - `gpuquota.dev/fail-after` (Kueue): comma-separated Go durations, how long the job's
//!   attempts run before they fail, attempt by attempt; the Job's `spec.backoffLimit`
//!   decides the retries (see "Failed attempts and retries" below). Both lists are
//!   validated like the eviction time;
//! - class: its WorkloadPriorityClass (`spec.priorityClassRef`, or `priorityClassName` with
//!   `priorityClassSource: kueue.x-k8s.io/workloadpriorityclass`), else its PriorityClass
//!   (the Workload's, else its pods' `priorityClassName`), else `gpuquota.dev/class`
//!   (annotation or label), else the label `kueue.x-k8s.io/performance-scheduler-class`,
//!   else `""`.
//!
//! Workloads admitted in the input (`status.admission`) run from time 0. Finished ones are
//! left out, as `kueue schedule` leaves them out.
//!
//! # Kueue's perf-test generator config, unchanged
//!
//! A file with a top-level `cohorts` list (kubernetes-sigs/kueue:
//! `test/performance/scheduler/configs/*/generator.yaml`, read as
//! `test/performance/scheduler/runner/generator/generator.go` reads it) is a whole scenario:
//! one ResourceFlavor `rf` (or `resourceFlavor.name`); per cohort set `count` cohorts
//! `<className>-<i>`; per queue set `count` ClusterQueues `<className>-<setIdx>-<i>-<cohort>`
//! with `cpu` `nominalQuota` and `borrowingLimit` (numbers or strings), `preemption`
//! `reclaimWithinCohort` / `withinClusterQueue`, an empty namespace selector and the class
//! label, each with a Namespace and a LocalQueue of the same name; per workloads set `count`
//! rounds, each template created after a sleep of `creationIntervalMs`, named
//! `<className>-<setIdx>-<round>-<templateIdx>`, one pod (`podCount`) requesting `request`
//! cpu, with `priority` and `runtimeMs`. Time 0 (`start` = `1970-01-01T00:00:00Z`) is the
//! first creation, so every `…Ms` counts from it. `topology`, `dra` and the TAS / device
//! fields are refused (not simulated). Upstream creates no Cohort objects; the simulator
//! creates empty ones (the same quota tree) so the engine does not warn about implicit
//! cohorts. The crate ships both upstream shapes in `data/`: `kueue-baseline.yaml` (5 × 6
//! ClusterQueues, 15,000 workloads) and `kueue-large-scale.yaml` (10 × 100, 50,000).
//!
//! # Semantics
//!
//! - **Order at an instant**: completions (quota released, the cohort tree's inadmissible
//!   workloads requeued as upstream's `QueueAssociatedInadmissibleWorkloadsAfter` does), then
//!   arrivals, then scheduling cycles until a cycle admits nothing, evicts nothing and parks
//!   nothing in an inadmissible set (the stop rule of `kueue schedule`: a cycle that only
//!   parks a head is not a fixed point, Kueue's loop pops the next head at once).
//! - **Decisions are the engine's**: heads, ordering, flavor assignment, preemption targets,
//!   requeueing (BestEffortFIFO inadmissible sets with scheduling-equivalence hashing,
//!   StrictFIFO), all by `gpuquota_cohort::Scheduler` through its incremental API
//!   (`gpuquota_cohort::incremental`). One world holds every instance; nothing is rebuilt per
//!   event.
//! - **Evictions**: a victim's run ends `Preempted` at the cycle that chose it, with
//!   upstream's reason and the preemptor; its quota is released and it requeues by its
//!   creation timestamp (upstream `GetQueueOrderTimestamp` keeps creation order for
//!   preemption). Readmitted, its runtime starts over (unless `resume`).
//! - **Evictions that take time** (Kueue): a victim with an eviction latency
//!   (`gpuquota.dev/eviction-time`, else its pod templates' `terminationGracePeriodSeconds`)
//!   is marked `Evicted` by the cycle but keeps its quota, its devices and its run until its
//!   pods are gone, `latency` after the preemption; its run then ends `Preempted` (so its
//!   `endMs` is the release), its quota is released and it queues again. Meanwhile
//!   upstream's rules hold (kubernetes-sigs/kueue `pkg/scheduler/scheduler.go`,
//!   `pkg/scheduler/preemption/preemption.go`): the preemptor is not admitted before its
//!   victims' quota is released; it issues no second preemption of a victim already
//!   evicted (`preemptions` counts each once); and no other workload takes the freed quota
//!   first when the Configuration's `featureGates` turns `PrioritizePreemptorWorkloads` on,
//!   as upstream's test does: a head waiting for its preemptions is then processed before
//!   the cycle's other entries (classical and fair-sharing alike) and its
//!   request fills the cycle's snapshot. The Kubernetes default grace period (30 s) is not
//!   assumed for a workload that states neither: every scenario written before keeps its
//!   instant release and its results, and stating the field or the annotation is what turns
//!   the latency on, for that workload. A run in which no workload has a latency decides
//!   exactly as before. Only the scheduler's preemptions take time: node failures, drain
//!   deadlines, budget stops and `HoldAndDrain` still release at once; a victim whose pods
//!   still waited for devices has none to stop and is released at once; the grace time
//!   counts as work done under `resume`. Ported upstream test:
//!   `test/integration/singlecluster/scheduler/preemption_test.go`, "Should prevent other
//!   workloads from stealing quota when a preemptor is waiting for multiple evictions"
//!   and its fair-sharing twin in
//!   `test/integration/singlecluster/scheduler/fairsharing/fair_sharing_test.go`
//!   (`tests/all/evictions.rs`), both with that gate on, as upstream's are.
//! - **Partial completion** (Kueue, `gpuquota.dev/pod-runtimes`): at each instant where some
//!   of a running workload's pods end before its last one, their share (the run's usage ÷
//!   admitted pods × pods ended) leaves its reservation
//!   (`gpuquota_cohort::Scheduler::reclaim`, upstream's `status.reclaimablePods`) and the
//!   cohort tree's inadmissible workloads are requeued, so a waiting workload is admitted
//!   as soon as enough pods have ended. The runs in the report keep their whole usage, node
//!   devices are freed when the workload ends, a readmitted workload runs all its pods
//!   again, workloads admitted in the input release nothing early, and the pod times count
//!   from the run's start (a retried attempt does not restart them).
//! - **Failed attempts and retries** (Kueue, `gpuquota.dev/fail-after`): attempt `k` of a
//!   workload fails after the `k`-th duration unless its runtime ends first. The Job
//!   controller replaces the failed pods within the same admitted Workload (Kueue sees no
//!   pod failure: the quota stays reserved) after its pod-failure back-off, 10 s doubling,
//!   at most 10 min (kubernetes/kubernetes `pkg/controller/job/job_controller.go`), and the
//!   new attempt starts its runtime over. When the failures exceed the Job's
//!   `spec.backoffLimit` (default 6; 0 for a Workload not made from a `batch/v1` Job), the
//!   Job fails: the Workload is `Finished` with reason `Failed` (its run ends `Finished`
//!   then and releases its quota). The JSON's `failures[]` lists, per workload with a failed
//!   attempt, `workload`, `failedAttempts`, `retries`, `failedMs` (`null` when the Job did
//!   not fail) and `lostGpuHours` (each failed attempt's duration × its run's
//!   `nvidia.com/gpu`, six decimals). A preemption ends the attempt under way without a
//!   failure.
//! - **Preemption loops**: at its default feature gates Kueue can readmit a victim ahead of
//!   its preemptor (the classical iterator orders by borrowing level before priority, fair
//!   sharing by share; `gpuquota-cohort`'s crate docs, property 12), and the preemptor then
//!   evicts it again. Upstream such a loop advances only as fast as evictions complete: the
//!   scheduler's cycle only marks the victim `Evicted`; its quota is released, and it goes
//!   back to its queue, after its job has stopped (kubernetes-sigs/kueue:
//!   `keps/83-workload-preemption`, "Workload preemption doesn't imply immediate Pod
//!   termination"; `pkg/controller/core/workload_controller.go`), and the preemptor is
//!   admitted in a later cycle. The simulator's instant is a burst of cycles in zero
//!   virtual time (with `cycleLatency: 0`; a positive latency puts every cycle at its own
//!   instant), so it bounds the loop in the same place: a victim evicted at `t` goes back
//!   to its queue at once, as `kueue schedule` requeues it (so one instant still admits and
//!   preempts what `kueue schedule` does, property 4), but a workload evicted a second time
//!   at `t` is held back and requeued at `t + 1` ms, the simulator's resolution. So no
//!   workload has more than two runs ending at one instant through preemptions, and virtual
//!   time advances. Every preemptor that preempted the same victim more than once is
//!   listed in `preemptionLoops` and is a `preemption-loop` warning (stderr; an error under
//!   `--strict`). The `cycle-bound` warning (4 × workloads + 64 cycles at one instant) stays
//!   as a guard.
//! - **`resourcequota` engine**: no queueing. A workload is created when every ResourceQuota
//!   of its namespace that applies to it (`requests.*`, bare `cpu` / `memory`, `pods`;
//!   priority-class scopes) has room; otherwise the API server answers 403 Forbidden
//!   (`exceeded quota: …`) and the Job controller retries. By default the retry follows
//!   Kubernetes' Job controller (kubernetes/kubernetes: `pkg/controller/job/job_controller.go`,
//!   `DefaultJobApiBackOff` = 1 s, doubling, `MaxJobApiBackOff` = 60 s);
//!   `spec.resourceQuota.retryInterval` makes it a fixed interval. Runs' usage has the
//!   pseudo-flavor `""`; its "queues" are the namespaces with a ResourceQuota, their
//!   `requests` caps as nominal.
//! - **Node capacity** (both engines, when the cluster files have Nodes): a quota admits,
//!   the kube-scheduler still needs a free device. A workload whose quota is reserved (Kueue's
//!   admission; under `resourcequota` its pods' creation, which charges the quota) runs
//!   only when the extended resources it requests (`nvidia.com/gpu`, MIG instances, …) are
//!   free on the nodes it may use: under Kueue the nodes matching its flavor's
//!   `nodeLabels` (a flavor's capacity of a resource is their summed allocatable); under
//!   `resourcequota` the nodes its pod set's `nodeSelector` selects and, when its LocalQueue
//!   leads to a ClusterQueue with a flavor covering the resource, that ClusterQueue's first
//!   such flavor's `nodeLabels` (the card type its usage is billed as). Otherwise it keeps
//!   its quota and its pods stay `Pending` with the kube-scheduler's reason `Unschedulable`
//!   and message (`0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) didn't
//!   match Pod's node affinity/selector.`), until devices free up; the waiting workloads are
//!   tried in the order they began to wait. Its run starts then (`reservedMs` < `startMs`
//!   in the JSON), and its runtime with it. A workload evicted while its pods wait has a
//!   run with `startMs` = `endMs`. Cordoned nodes hold nothing; pod-by-pod placement,
//!   taints, CPU and memory are not checked (a workload's demand per resource may split
//!   across nodes; the nodes are filled greedily in name order). Without Nodes nothing but
//!   the quotas caps the runs, and the report says so (`capacityChecked: false`, and a
//!   sentence in the table).
//! - **`waitForPodsReady`** (Kueue engine, a `Configuration` with the stanza enabled: v1beta1
//!   by `enable: true`, v1beta2 by its presence): a workload's `PodsReady` turns true when
//!   all its pods run (at admission without Nodes, when its devices are free with Nodes),
//!   delayed by the Workload annotation `gpuquota.dev/pods-ready-after` (a Go duration, or
//!   `never`; anything else is refused with the annotation named). An admitted workload not
//!   ready `timeout` (default 5m) after its admission is evicted: its run ends `Preempted`,
//!   reason `PodsReadyTimeout`, `by: waitForPodsReady`; its quota is released and it queues
//!   again after `min(backoffBaseSeconds × 2^(n−1), backoffMaxSeconds)` s for its n-th
//!   timeout (defaults 60 and 3600), by its eviction time (`requeuingStrategy.timestamp:
//!   Eviction`, the default) or its creation time (`Creation`). Upstream adds a random
//!   jitter of up to 0.01 % to the backoff; the simulator adds its expected value
//!   (0.005 %, whole ms rounded half up, before the cap: 60 s → 60,003 ms) so that a run
//!   stays a function of its input with no seed. A timeout that would take the count past
//!   `backoffLimitCount` deactivates the workload instead: its run ends with reason
//!   `DeactivatedDueToRequeuingLimitExceeded`, it never queues again, and it is pending at
//!   the end with that reason. The requeue count of a workload is the number of its runs
//!   with reason `PodsReadyTimeout`. With `blockAdmission` (default: on), no cycle runs
//!   while an admitted workload is not ready, and of the workloads one cycle admits, those
//!   after the first not-ready one go back to their queue (upstream's scheduler waits before
//!   admitting them). The Kueue engine alone (`kueue schedule`) still warns that it does not
//!   model the stanza; the simulator does not. Limits: `recoveryTimeout` is read and
//!   checked but never applies (a running workload never loses readiness here: a lost node
//!   ends its run); the eviction time orders a workload inside its ClusterQueue's queue,
//!   while a cycle still orders heads of different ClusterQueues by creation time; an
//!   eviction takes no time; a timeline rebuild forgets eviction-time queue orders.
//!   (kubernetes-sigs/kueue pkg/controller/core/workload_controller.go,
//!   pkg/workload/workload.go `UpdateRequeueState`, pkg/scheduler/scheduler.go.)
//!
//!   Upstream's tests in kubernetes-sigs/kueue
//!   test/integration/singlecluster/scheduler/podsready/scheduler_test.go, ported in
//!   `tests/all/pods_ready.rs` with hand-computed times (timeouts of 10 min of virtual
//!   time, `backoffBaseSeconds: 1`):
//!   - ported: "Long PodsReady timeout" / "Should unblock admission of new workloads in
//!     other ClusterQueues once the admitted workload exceeds timeout" (both variants, the
//!     `PodsReady` and `Started` reasons being one state here), "Should unblock admission
//!     of new workloads once the admitted workload is deleted" (the workload ends instead),
//!     "Should block admission of one new workload if two are considered in the same
//!     scheduling cycle"; "Short PodsReady timeout" / "Should requeue a workload which
//!     exceeded the timeout to reach PodsReady=True", "Should re-admit a timed out workload
//!     and deactivate a workload exceeded the re-queue count limit. After that
//!     re-activating a workload" (up to the deactivation); "Tiny PodsReady timeout" /
//!     "Should unblock admission of new workloads in other ClusterQueues once the admitted
//!     workload exceeds timeout"; "Should move the evicted workload at the end of the
//!     queue"; "Requeuing timestamp set to Creation" / "Should prioritize workloads
//!     submitted earlier"; and of "SchedulerWithWaitForPodsReadyNonblockingMode": "Should
//!     not block admission of one new workload if two are considered in the same
//!     scheduling cycle", "Should re-admit a timed out workload", "Should keep the evicted
//!     workload at the front of the queue".
//!   - out of reach: the reactivation at the end of the deactivation test (a user setting
//!     `spec.active: true` mid-run: a timeline cannot patch a Workload yet); assertions on
//!     metrics and on ClusterQueue status counters (the report has runs, not metrics).
//!   - the job controller's waitForPodsReady tests (kubernetes-sigs/kueue
//!     test/integration/singlecluster/controller/jobs/job/) are out of reach: they drive
//!     readiness through a Job's `status.ready` and check the Job's suspension and pod
//!     templates, and the simulator has no Job controller (Jobs become workloads through
//!     the importer only).
//!
//! # Output (`gpuquota sim FILE [--output json|table|csv|kueue-summary] [--plot FILE.svg]`)
//!
//! The JSON is the typed [`SimReport`] (KAI mode: [`kai::KaiReport`]; `sim diff`:
//! [`diff::DiffReport`]; `sim sweep`/`merge`: [`sweep::Table`]), every field documented
//! there; `gpuquota schema sim`, `sim-diff` and `sim-sweep` print their JSON Schemas (feature
//! `schema`), and `gpuquota schema scenario` the scenario file's
//! ([`scenario::SimulationDoc`], [`scenario::PerfConfig`], [`kai::scenario::SimulationDoc`]).
//! Pretty printed, fields in this order:
//! `{"engine", "start", "endMs", "makespanMs", "workloads": [{"workload", "queue", "class",
//! "createdMs", "runs": [{["reservedMs"], "startMs", "endMs", "end", ["reason", "by"], "usage": {flavor:
//! {resource: quantity}}}], "finishedMs", ["pending": {"reason", "message"}]}], "classes":
//! {class: {"count", "finished", "evictions", "meanTimeToAdmissionMs",
//! "p50TimeToAdmissionMs", "p95TimeToAdmissionMs", "meanTimeToFinishMs", "readmissions",
//! "meanRequeueWaitMs", "p95RequeueWaitMs"}}, "queues": {queue:
//! {"nominal": {flavor: {resource: quantity}}, "meanUsagePercent", "borrowedMs": {flavor:
//! {resource: integer}}}}, "preemptions", ["preemptionLoops": [{"preemptor", "victim",
//! "preemptions", "firstMs", "lastMs", "heldBack"}]], "capacityChecked", ["timeline":
//! [{"index", "atMs", "changes": [{"kind", "name", "change"}], "admissionsStopped",
//! "admissionsResumed", "evicted": [{"workload", "reason"}], "terminating":
//! [{"clusterQueue", ["leftMs"]}], "capacityBefore", "capacityAfter"}]], "warnings":
//! [string]}`.
//! - Every `…Ms` is integer milliseconds since `start`; `endMs` is `spec.end` (or the last
//!   event); `makespanMs` the last completion (0 without any); `finishedMs` is `null` for a
//!   workload that did not finish.
//! - `runs[].end` is `Finished`, `Preempted` (with `reason` and `by`) or `Cut`; `usage` is
//!   the quota the engine charged (count × per-pod requests per flavor and resource);
//!   `startMs` is when its pods ran, and `reservedMs`, present only when they first waited
//!   for free devices, when its quota was reserved.
//! - `pending` is present for a workload pending at the end (never admitted, or evicted and
//!   not readmitted): upstream's `QuotaReserved=False` reason and message (`Forbidden` with
//!   the API server's message under `resourcequota`), or `Unschedulable` with the
//!   kube-scheduler's message when its quota is reserved but its pods wait for devices.
//! - `classes`: `meanTimeToAdmissionMs` is first admission (quota reserved, not the device
//!   wait after it) − creation averaged (floor) over
//!   the class's admitted workloads; p50 / p95 are nearest-rank; `meanTimeToFinishMs`
//!   completion − creation over finished workloads. Deviation: Kueue's recorder divides by
//!   every workload of the class, counting one never admitted as 0; `--output
//!   kueue-summary` keeps upstream's formula. The wait after a preemption is apart from the
//!   first admission: `readmissions` counts the evictions followed by another run,
//!   `meanRequeueWaitMs` (floor) and `p95RequeueWaitMs` (nearest-rank) the time from each
//!   such eviction to the readmission (an eviction still waiting at the end has none).
//! - `queues`: `meanUsagePercent` is ∫usage dt × 100 / (nominal × `endMs`) as Kueue's checker
//!   computes it, averaged over the queue's flavor-resources with a nominal quota, rounded to
//!   0.1, and `null` for a queue with no nominal quota (it only borrows: its use is in
//!   `borrowedMs`; the table prints `-`); `borrowedMs` is ∫ max(0, usage − nominal) dt in resource units × ms (CPU in cores,
//!   memory in bytes, GPUs in devices).
//! - `preemptions` counts `Preempted` runs; `capacityChecked` is whether the runs were
//!   checked against the Nodes' devices (`false`: the cluster files have none); `warnings`
//!   are the input's and the engine's warnings (each also printed on stderr whatever
//!   `--output`, an error under `--strict`).
//! - `preemptionLoops` (only when there is one): each preemptor that ended runs of the
//!   same victim more than once, with how many (`preemptions`), the first and last of them
//!   (`firstMs`, `lastMs`) and how many were a second eviction at one instant after which
//!   the victim was held back 1 ms (`heldBack`); see "Preemption loops" above.
//! - `failures` (only when a workload has a failed attempt, after `timeline` in the
//!   object): `[{"workload", "failedAttempts", "retries", "failedMs", "lostGpuHours"}]`, in
//!   workload order; see "Failed attempts and retries" above.
//! - `timeline` (only with `spec.timeline`): one entry per event in the order they applied:
//!   its `index` in `spec.timeline` and instant (`atMs`); the objects it changed
//!   (`changes[].change` is `created`, `replaced` or `deleted`); the queues that stopped
//!   or resumed admitting (`admissionsStopped`, `admissionsResumed`: ClusterQueue names,
//!   LocalQueue keys); the workloads it evicted with upstream's reason (`evicted`); the
//!   deleted ClusterQueues kept until their last admitted workload ended (`terminating`,
//!   `leftMs` when it left); and the nominal quota of all ClusterQueues (under
//!   `resourcequota`: the ResourceQuotas' hard caps) per flavor and resource before and
//!   after it (`capacityBefore`, `capacityAfter`). The table prints one sentence per event
//!   ("Timeline event 0 at 01:00: ClusterQueue batch replaced. Admissions stopped: batch.
//!   Evicted: ns/a (ClusterQueueStopped).").
//! - `--output csv`: `workload,queue,class,startMs,endMs,end,flavor,resource,amount`, one row
//!   per run and flavor-resource.
//! - `--output kueue-summary`: the summary document of Kueue's perf runner
//!   (kubernetes-sigs/kueue: `test/performance/scheduler/runner/recorder/recorder.go`), so
//!   the checks of its `rangespec.yaml` (`checker/checker_test.go`) apply; see
//!   [`Report::to_kueue_summary`].
//! - `--output table`: per queue and per class, then sentences ("batch borrowed 64.0
//!   GPU-hours of h200-nvl.", "8 of batch's workloads were preempted at 02:00 when
//!   data-science reclaimed."), the last on node capacity ("Node capacity was checked
//!   against 3 Nodes: 29 runs waited for free devices (Unschedulable), 58h in all." or
//!   "Node capacity was not checked: the cluster files have no Nodes, so quotas are the
//!   only cap.").
//! - `--plot FILE.svg`: [`plot::svg`]: GPUs in use per department as step functions over
//!   dates and hours, one panel per card type with its capacity and the summed nominal
//!   quota, preemptions and spent budgets marked. Every picture (this one,
//!   [`kai::plot::svg`], [`diff::svg`], [`sweep::Table::svg`]) gives a department the same
//!   colour: its place among the scenario's `spec.metering` departments, sorted.
//!
//! # Progress
//!
//! [`simulate_with_options`] (in every mode) calls
//! [`progress::RunOptions::progress`] with the virtual time reached against `spec.end` and
//! the events done, at most once per whole percent or [`progress::EVENTS_PER_CALL`]
//! events, and last at the report's `endMs`; the report is the same. `gpuquota sim`
//! draws it as a bar on stderr when stderr is a terminal (not with `--quiet`), and passes
//! no callback otherwise.
//!
//! # Sweeps (`gpuquota sim sweep FILE --set PATH=v1,v2 … [--shard I/N] [--emit-job N]`)
//!
//! The cartesian product of the `--set` values, each run simulated deterministically in
//! parallel, one row per run; `gpuquota sim merge` joins shard tables into the unsharded
//! table (only shards of one sweep: each table carries a fingerprint of the scenario, the
//! files it reads and the grid); `--emit-job N` prints a Kubernetes Indexed Job running N
//! shards under Kueue and the ConfigMap of the files it mounts. Paths reach into `spec`
//! (an unknown path is an error naming it), into the ClusterQueues' quotas
//! (`clusterQueues.batch.borrowingLimit`), the timeline's instants and merge-patch values
//! (`timeline[0].at=36h,48h`) and the seeds of generated traces (`seed=1..20`);
//! rows carry the cost per department when the scenario has `spec.metering`. Kueue,
//! ResourceQuota and KAI scenarios are swept alike. Runs, threads and shards have fixed
//! limits. The table's columns, the path grammar, the limits, the SVG and the Job are
//! documented in [`sweep`].
//!
//! # Properties
//!
//! Each is a proptest over random scenarios in `tests/all/properties.rs`, named as here:
//!
//! 1. **conservation**: every workload appears once and ends finished, cut (running at the
//!    end) or pending with a reason; its runs are in order and never overlap.
//! 2. **capacity**: at every instant, checked by an independent sweep over the runs, no
//!    ClusterQueue uses more than nominal + borrowingLimit, no cohort more than its subtree
//!    quota, and every lendingLimit holds.
//! 3. **determinism**: the same scenario gives the same bytes, whatever the order of the
//!    documents in its files.
//! 4. **agreement**: a scenario whose workloads all arrive at 0 without runtimes, simulated
//!    for one instant, admits and preempts exactly what `kueue schedule` does on the same
//!    snapshot (same workloads, same reasons, same preemptors).
//! 5. **node capacity** (`tests/all/node_capacity.rs`, over random nodes, flavors, quotas and
//!    workloads under all three engines): at every instant the devices in use of each card
//!    type are at most what its Nodes hold (KAI also per node).
//! 6. **makespan bound**: with zero cycle latency and every workload finished, the makespan
//!    is at least the work / capacity lower bound (Σ usage × runtime ÷ the cluster's quota,
//!    per flavor-resource) and at least every workload's arrival + runtime.
//!
//! # KAI mode
//!
//! `spec.engine: kai`, and KAI's time-based-fairshare simulator config as a whole
//! scenario, are simulated by [`kai`] (KAI's sessions over virtual time, time-based
//! fairshare, KAI's simulator CSV, the two-queue oscillation and why it flips), through the
//! same [`Simulation`]: the parsed document's `spec.engine` (or KAI's simulator keys) picks
//! the mode, the text is parsed once.
//!
//! # Up-front limits
//!
//! What memory a run needs is foreseen from the scenario, and a scenario past a limit is
//! refused before anything of it is made, with an error naming the object, the field, the
//! number it would make and the limit (`gpuquota sim` exits 1):
//!
//! | what | limit | field named |
//! |---|---|---|
//! | workloads (KAI: jobs): those of the files and generators, every trace row, every `gpuquota.dev/repeat` copy until `spec.end` | [`scenario::MAX_INSTANCES`] (500,000) | the repeat annotation of the workload that goes past it, or `spec.workloads[i].trace.file` |
//! | Budget periods up to `spec.end`, over all budgets (each is kept for the report) | [`MAX_BUDGET_PERIODS`] (1,000,000) | the Budget's `spec.period` |
//! | KAI sessions up to `spec.end` times queues (a series point each) | [`kai::engine::MAX_SERIES_POINTS`] (10,000,000) | `spec.kai.sessionInterval` (`Cycles` for KAI's simulator config) |
//!
//! A KAI run without `spec.end` stops at the series limit with a warning. The peak memory of
//! a run near the workload limit is in `benches/README.md` ("Up-front limits").
//!
//! # Deliberate deviations and limits
//!
//! - Jobs and Pods become workloads only through the model's importer (as `kueue schedule`
//!   reads them); the simulator adds no conversion of its own.
//! - Admission fair sharing (a Kueue `Configuration` with `admissionFairSharing`, a
//!   ClusterQueue with `admissionScope.admissionMode: UsageBasedAdmissionFairSharing`) runs
//!   over virtual time as upstream's controllers run it (`gpuquota_cohort::afs_clock`): at
//!   time 0 every LocalQueue's ledger starts from its
//!   `status.fairSharing.admissionFairSharingStatus.consumedResources`; it is sampled every
//!   `usageSamplingInterval` after its last update (`consumed ← consumed·(1−α) + admitted·α`,
//!   `α = 1 − 0.5^(elapsed / usageHalfLifeTime)`, with `admitted` the LocalQueue's running
//!   usage); an admission pushes the entry penalty `α(usageSamplingInterval) · requests`,
//!   settled into `consumed` (after one decay step) as the workload becomes Admitted, which
//!   is the cycle's instant here (no admission checks). Heads of such a ClusterQueue are taken
//!   by the lowest `Σ resourceWeight · (consumed + penalty) / LocalQueue weight`, as
//!   `kueue schedule` takes them on a snapshot. Amounts are exact decimals rounded down to
//!   nano-units, as upstream's `MulByFloat`. Deviations: upstream's LocalQueue controller
//!   also samples early when an event of the queue finds a penalty not yet settled (only
//!   possible here with a `cycleLatency`, whose admissions are settled at the cycle); the
//!   entry penalty counts the requests the ClusterQueue covers (upstream: all requests,
//!   unless `IgnoreUndeclared`).
//!
//! # The bill of a run
//!
//! `spec.metering` (the `meter` document without `window` and `records`; card types may
//! list their Kueue `flavors`) makes the simulator meter its own runs through
//! `gpuquota-metering` and add the `meter` report as `"chargeback"` (before `"warnings"`),
//! with the lost hours of preempted runs; see [`bill`]. `spec.metering.chargeLostWork`
//! (`true` by default: the department that held the cards pays for them) set to `false`
//! books the hours of preempted runs to a `lost-work` line the platform absorbs instead.
//!
//! # Fidelity to a recorded month
//!
//! When the workloads were recorded (a `history:` source, or a trace that records waits:
//! Helios, AcmeTrace; under `engine: kai` as well, a history's PodGroups, [`kai`]), the
//! report gains `"fidelity"` (after `"chargeback"`, before
//! `"warnings"`; absent otherwise, so other runs print the same bytes): the run against
//! the record ([`history::fidelity`]). Fields: `source` (`history` or `trace`),
//! `workloads` (per workload, by key: `key`, `class`, `queue` (`namespace/LocalQueue`),
//! `createdMs`, `recordedAdmittedMs`, `simulatedAdmittedMs`, `recordedEvictions`,
//! `recordedPreemptions`, `simulatedPreemptions`, `recordedEndMs`, `simulatedEndMs`,
//! `admissionErrorMs`, `simulated`), `groups` (per recorded class and LocalQueue: `class`,
//! `queue`, `workloads`, `compared`, `meanAdmissionErrorMs`, `p95AdmissionErrorMs`,
//! `kendallTau`, `preemptions`: {`matched`, `missed`, `extra`}), `all` (the same over every
//! workload), `departments` (`department`, `recordedGpuSeconds`, `simulatedGpuSeconds`)
//! and `notes` (`workload`, `code`, `atMs`, `message`: the differences the model can
//! explain, e.g. a recorded eviction for `NodeFailures` that a timeline event would
//! replay). Times are ms since `start`; a figure that cannot be computed is `null`. The
//! table prints the groups, the departments' GPU-hours, the ten largest errors and the
//! first ten notes; the HTML report (`--report`) a section with the same figures.
//!
//! `gpuquota sim --output workloads` writes a run as the objects a kubectl dump of its
//! cluster holds ([`history::write`]): Kueue Workloads with their conditions, or a KAI run's
//! PodGroups and Pods. Read back as a `history:` source under the same scenario (cluster,
//! `start`, `end`, options), the replay is the run again and its fidelity exact (no error
//! of time to admission, τ 1, every preemption matched, equal GPU-seconds, no note) when
//! `spec.resume` is off and no budget stops a run; for Kueue also when evicted runs last
//! whole seconds and no pods wait for devices after their reservation, for KAI when no job
//! is a repeat copy.
//!
//! # What-if and the seed month
//!
//! `gpuquota sim diff A.yaml B.yaml [--output json|table] [--plot FILE.svg]` compares two
//! scenarios over the same workloads per department ([`diff`]; when the workloads differ,
//! it says so first, and `--strict` fails). KAI scenarios are not compared. The seed platform's month
//! ships as data files (`data/seed/`), simulated under ResourceQuota only, Kueue and KAI /
//! Run:ai, and is the CLI's default run ([`seed`]).
//!
//! # GPU-hour budgets
//!
//! `Budget` objects (`gpuquota.dev/v1alpha1`, [`gpuquota_model::budget`]) in the cluster
//! files are charged from the simulated usage and enforced at admission, under both engines,
//! through the engine-neutral gate of [`budget`] (which the KAI mode calls the same way, see
//! [`kai::budget`]):
//! `Wait` holds a covered workload back (pending `BudgetExhausted`) until the budget
//! renews, `Deprioritize` queues it at a priority below every other workload (Kueue; under
//! `resourcequota`, which has no priorities, it only reports), `Notify` only reports, and
//! `stopRunning` ends running work `Preempted` with reason `BudgetExhausted` and `by`
//! `Budget/<name>`. A `spec.queue` budget covers the workloads of that ClusterQueue (under
//! `resourcequota` too: the ClusterQueue their LocalQueue names). A budget's `cardType`
//! counts `resourcequota` usage, which has no flavor, on the card type the bill charges it
//! to ([`bill::unflavored_flavor`]). The JSON gains
//! `"budgets"` (before `"warnings"`, only when the scenario has budgets; see
//! [`budget::report`]).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod bill;
pub mod budget;
pub mod chart;
pub(crate) mod count;
pub mod diff;
mod driver;
pub mod engine;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod history;
pub mod kai;
mod kernel;
pub mod plot;
pub mod progress;
pub mod report;
pub mod scenario;
#[cfg(feature = "schema")]
pub mod schema;
pub mod seed;
pub mod simulation;
pub mod sweep;
pub mod timeline;
pub mod trace;

use gpuquota_cohort::World;
use gpuquota_model::diag::{Diagnostic, Diagnostics};

pub use engine::{Outcome, Run, RunEnd, WorkloadOutcome};
pub use report::{Report, SimReport};
pub use scenario::{Engine, Scenario};
pub use simulation::{
    Mode, Options, Simulation, SimulationReport, simulate, simulate_with_options,
};

/// Simulates a resolved Kueue or ResourceQuota scenario, calling `options.progress` as the
/// run advances ([`progress`]).
///
/// # Errors
/// The engine's problems with the objects (its own diagnostics and codes, from
/// `gpuquota_cohort::Input::from_model`), or an invalid budget.
///
/// # Complexity
/// The world's build once (twice with `Deprioritize` budgets, see [`deprioritized_twins`])
/// plus the kernel's loop (crate docs, "Kernel and drivers"); the progress calls are bounded (at most 100 +
/// events / 65,536 + 2).
pub(crate) fn simulate_scenario(
    sc: &Scenario,
    options: &progress::RunOptions<'_>,
) -> Result<Report, Diagnostics> {
    let mut reporter = progress::Reporter::new(options, sc.end_ms);
    let rules = budget_rules(&sc.model)?;
    // node events and MIG windows follow the budgets' gate; a rebuilt world does not yet
    if !rules.is_empty() && sc.timeline.events.iter().any(|e| !e.objects.is_empty()) {
        return Err(Diagnostics(vec![
            Diagnostic::error(
                scenario::NOT_SIMULATED,
                "a timeline with Budgets is not simulated yet: remove the Budgets or the timeline",
            )
            .field("spec.timeline"),
        ]));
    }
    check_budget_periods(&rules, sc.start, sc.end_ms)?;
    let twinned = deprioritized_twins(sc, &rules)?;
    let input = kueue_input(twinned.as_ref().unwrap_or(&sc.model), sc.fair_sharing)?;
    let mut warnings = sc.warnings.clone();
    if sc.engine == Engine::Kueue {
        // the live-cluster states the engine tolerates, with the engine's own codes; the
        // simulator models `waitForPodsReady`, which the engine alone does not
        let pods_ready = sc
            .model
            .configuration
            .as_ref()
            .is_some_and(|c| c.wait_for_pods_ready.is_some());
        for w in input.warnings() {
            if pods_ready
                && w.kind == "Configuration"
                && w.message
                    .starts_with(gpuquota_cohort::config::WAIT_FOR_PODS_READY)
            {
                continue;
            }
            warnings.push(
                Diagnostic::warning(w.code, w.message.clone())
                    .object(w.kind, w.name.clone())
                    .engine("kueue"),
            );
        }
    }
    let world = input.world();
    let insts = instances(sc, world);
    let mut budgets = (!rules.is_empty()).then(|| new_budgets(sc, world, rules));
    if let Some(b) = &budgets {
        // the card types usage is weighed by: the flavors' and, for usage without a flavor
        // (ResourceQuota), every card type it may resolve to (`bill::unflavored_rate`)
        let mut known = b.card_types();
        let cards = budget::card_map(sc);
        known.extend(cards.cards.iter().map(|c| c.name.clone()));
        if cards.cards.is_empty() {
            known.extend(sc.model.resource_flavors.keys().cloned());
        }
        warnings.extend(budget::reference_warnings(&sc.model, &known));
    }
    let worlds = driver::Worlds::for_scenario(sc);
    let cx = driver::Context {
        sc,
        world,
        insts: &insts,
        warnings: &mut warnings,
        budgets: &mut budgets,
        progress: &mut reporter,
    };
    let outcome = match sc.engine {
        Engine::ResourceQuota => driver::run_resource_quota(cx, &worlds),
        Engine::Kueue => driver::run_kueue(cx, &input, &worlds),
    };
    finish_report(sc, outcome, warnings, budgets.as_ref())
}

/// [`simulate_scenario`] without a progress callback.
///
/// # Errors
/// As [`simulate_scenario`].
pub(crate) fn simulate_kueue(sc: &Scenario) -> Result<Report, Diagnostics> {
    simulate_scenario(sc, &progress::RunOptions::default())
}

/// Kueue's input through the engine's own entry point, the one place the simulator builds
/// it: the world, the tolerated states and, when fair sharing (or admission fair sharing)
/// is on, its policy. `fair_sharing: Some(true)` forces fair sharing on; `Some(false)` is
/// already in the model's `Configuration` ([`scenario::apply_fair_sharing`]).
fn kueue_input(
    model: &gpuquota_model::Model,
    fair_sharing: Option<bool>,
) -> Result<gpuquota_cohort::Input, Diagnostics> {
    count::bump(|c| &mut c.world_builds);
    gpuquota_cohort::Input::from_model(
        model,
        &gpuquota_cohort::Options::default().with_fair_sharing(fair_sharing == Some(true)),
    )
    .map_err(gpuquota_model::Error::into_diagnostics)
}

/// The model a run with `Deprioritize` budgets simulates, under Kueue: each pending
/// workload those budgets cover gets a twin at a priority below every other
/// ([`budget::with_twins`]); `None` when there is nothing to twin.
fn deprioritized_twins(
    sc: &Scenario,
    rules: &[gpuquota_model::budget::BudgetRule],
) -> Result<Option<gpuquota_model::Model>, Diagnostics> {
    let deprioritize = |r: &gpuquota_model::budget::BudgetRule| {
        r.when_spent == gpuquota_model::budget::WhenSpent::Deprioritize
    };
    if sc.engine != Engine::Kueue || !rules.iter().any(deprioritize) {
        return Ok(None);
    }
    count::bump(|c| &mut c.world_builds);
    // the workloads as the engine reads them; the Configuration's fair sharing plays no part
    let input0 = gpuquota_cohort::Input::from_model(
        &sc.model,
        &gpuquota_cohort::Options::default().with_ignore_fair_sharing(true),
    )
    .map_err(gpuquota_model::Error::into_diagnostics)?;
    let w0 = input0.world();
    let mut keys = Vec::new();
    let mut lowest = i32::MAX;
    for w in &w0.workloads {
        lowest = lowest.min(w.priority);
        let q = queue_name(w0, w);
        if rules
            .iter()
            .any(|r| deprioritize(r) && r.scope.covers(&w.namespace, &q))
            && w.admitted.is_none()
        {
            keys.push(w.key.clone());
        }
    }
    Ok(Some(budget::with_twins(
        &sc.model,
        &keys,
        lowest.saturating_sub(1).max(i32::MIN + 1),
    )))
}

/// Each workload's instance (a twin shares its original's).
fn instances<'s>(sc: &'s Scenario, world: &World) -> Vec<Option<&'s scenario::Instance>> {
    world
        .workloads
        .iter()
        .map(|w| {
            sc.instances.get(&w.key).or_else(|| {
                w.key
                    .strip_suffix(budget::TWIN_SUFFIX)
                    .and_then(|k| sc.instances.get(k))
            })
        })
        .collect()
}

/// The run's budget ledgers over the world's workloads and flavor-resources.
fn new_budgets(
    sc: &Scenario,
    world: &World,
    rules: Vec<gpuquota_model::budget::BudgetRule>,
) -> budget::Budgets {
    let queues: Vec<String> = world
        .workloads
        .iter()
        .map(|w| queue_name(world, w))
        .collect();
    let wls: Vec<(&str, &str, &str)> = world
        .workloads
        .iter()
        .zip(&queues)
        .map(|(w, q)| (w.namespace.as_str(), q.as_str(), w.key.as_str()))
        .collect();
    let frs = driver::flavor_resources(world, sc.engine);
    let origin = i64::try_from(sc.start.unix_nanos().div_euclid(1_000_000)).unwrap_or(0);
    budget::Budgets::new(rules, origin, &wls, &frs, &budget::card_map(sc))
}

/// The report of a run: its outcome with the twins merged back, the sorted warnings, the
/// budgets and the chargeback.
fn finish_report(
    sc: &Scenario,
    mut outcome: Outcome,
    mut warnings: Diagnostics,
    budgets: Option<&budget::Budgets>,
) -> Result<Report, Diagnostics> {
    budget::merge_twins(&mut outcome);
    let loops = report::preemption_loops(&outcome);
    for l in &loops {
        warnings.push(report::preemption_loop_warning(l));
    }
    warnings.sort();
    outcome.warnings = warnings.iter().map(ToString::to_string).collect();
    let mut report = Report::new(sc.name.clone(), sc.start, outcome);
    report.diagnostics = warnings;
    report.preemption_loops = loops;
    if let Some(b) = budgets {
        report.budgets = Some(budget::report(b));
    }
    if sc.metering.is_some() {
        let (bill, ws) = bill::chargeback(sc, &report.outcome)?;
        for w in ws.0 {
            report.outcome.warnings.push(w.to_string());
            report.diagnostics.push(w);
        }
        report.chargeback = Some(bill);
    }
    report.fidelity = history::fidelity::of_run(sc, &report.outcome);
    Ok(report)
}

/// The ClusterQueue a workload queues in (`""` without one).
fn queue_name(world: &World, w: &gpuquota_cohort::world::WorkloadInfo) -> String {
    match &w.queue {
        gpuquota_cohort::world::QueueRef::Cq(c) => world.cluster_queues[*c].name.clone(),
        _ => String::new(),
    }
}

/// The most budget periods one run may hold over all its budgets (each is kept for the
/// report). A scenario whose `spec.end` and budget `spec.period`s would make more is refused
/// before the run, naming the number.
pub const MAX_BUDGET_PERIODS: u64 = 1_000_000;

/// The periods of `rule` the report of a run from `start` (ms since the epoch) to
/// `start + end` holds: those the window `[start, start + end]` touches (the last one opens at
/// the end when a period ends there); exact for fixed periods, an upper bound (a month of 28
/// days) for monthly ones.
fn periods_in(rule: &gpuquota_model::budget::BudgetRule, start: i64, end: i64) -> u64 {
    use gpuquota_model::budget::Period;
    let last = i128::from(start) + i128::from(end.max(0));
    let count = match rule.period {
        Period::Every { ms } => {
            let a = i128::from(rule.anchor(start));
            let ms = i128::from(ms.max(1));
            (last - a).div_euclid(ms) - (i128::from(start) - a).div_euclid(ms) + 1
        }
        Period::Monthly => i128::from(end.max(0)) / (28 * 86_400_000) + 2,
    };
    u64::try_from(count).unwrap_or(u64::MAX)
}

/// The up-front check of [`MAX_BUDGET_PERIODS`] for a run with `spec.end` (`end_ms`, from
/// `start`): the budget that goes past the limit is an error on its `spec.period`.
///
/// # Errors
/// That error.
pub(crate) fn check_budget_periods(
    rules: &[gpuquota_model::budget::BudgetRule],
    start: gpuquota_model::Timestamp,
    end_ms: Option<i64>,
) -> Result<(), Diagnostics> {
    let Some(end) = end_ms else {
        return Ok(());
    };
    let origin = i64::try_from(start.unix_nanos().div_euclid(1_000_000)).unwrap_or(0);
    let mut total: u64 = 0;
    for rule in rules {
        let n = periods_in(rule, origin, end);
        total = total.saturating_add(n);
        if total > MAX_BUDGET_PERIODS {
            let period = match rule.period {
                gpuquota_model::budget::Period::Every { ms } => format!("of {ms} ms"),
                gpuquota_model::budget::Period::Monthly => "(monthly)".to_owned(),
            };
            return Err(Diagnostics(vec![
                Diagnostic::error(
                    scenario::INVALID_SCENARIO,
                    format!(
                        "the period {period} divides the run up to spec.end into {n} periods, \
                         {total} over all budgets: more than the limit of {MAX_BUDGET_PERIODS} \
                         (a guard against exhausting memory); use a longer period or an \
                         earlier spec.end"
                    ),
                )
                .object("Budget", rule.name.clone())
                .field("spec.period"),
            ]));
        }
    }
    Ok(())
}

/// The scenario's budgets in name order; an invalid one is an error naming its field, with the
/// code the model gives it where the problem is found ([`gpuquota_model::budget::rules`]).
pub(crate) fn budget_rules(
    model: &gpuquota_model::Model,
) -> Result<Vec<gpuquota_model::budget::BudgetRule>, Diagnostics> {
    gpuquota_model::budget::rules(model)
}
