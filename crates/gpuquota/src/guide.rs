//! The user's guide: the questions platform engineers ask, and the command or call that
//! answers each.
//!
//! This page is documentation only; it has no items. Every command below reads the same
//! manifests (`kubectl get ... -o yaml` output, one file per object, or a `-` for standard
//! input) through the same importer and validator as the library calls next to it, so the
//! command and the call give the same answer. `gpuquota example NAME` prints a commented
//! sample of every input format; each sample runs unchanged through the commands it lists.
//!
//! # Before anything: is the input what I think it is?
//!
//! `gpuquota validate FILES` reports every problem at once, naming kind, object and field,
//! as the API server and the webhooks would, then what each engine would refuse. Unknown
//! fields and kinds are warnings with a "did you mean"; `--strict` makes them errors. In
//! code: [`model::import_str`](crate::model::import_str) then
//! [`model::validate()`](crate::model::validate()).
//!
//! # Why is this job pending? (Kueue)
//!
//! `gpuquota kueue schedule FILES` runs Kueue's scheduling cycles on the snapshot and prints,
//! for every workload left pending, upstream's reason and message
//! (`couldn't assign flavors to pod set main: insufficient unused quota ...`). Jobs, JobSets,
//! Kubeflow jobs, Ray, LeaderWorkerSets and plain pods are turned into the Workloads Kueue's
//! job framework would create. `gpuquota kueue quotas` shows what each ClusterQueue and
//! Cohort owns, lends and may borrow. In code:
//! [`kueue::Input::from_model`](crate::kueue::Input::from_model) then
//! [`kueue::run`](crate::kueue::run) (and [`kueue::quotas`](crate::kueue::quotas)).
//!
//! # Who gets preempted, and when? (over time)
//!
//! `gpuquota sim SCENARIO` replays arrivals, completions and the nightly jobs in virtual
//! time under Kueue or plain ResourceQuota: every run of every workload, who preempted whom
//! with upstream's reason, time to admission per class, borrowed quota per ClusterQueue, and
//! `--plot usage.svg` for the picture. Kueue's own performance-test configurations run
//! unchanged. In code: `sim::Simulation::from_model` (or `from_files`) then
//! `sim::simulate` ([`sim`](crate::sim)).
//!
//! # What is each department's fair share? (KAI Scheduler, Run:ai)
//!
//! `gpuquota kai fairshare FILES` divides the cluster as KAI's proportion plugin does:
//! deserved quota first, then over-quota weight tier by tier in whole units; `--usage` adds
//! time-based fairshare from historical usage. `gpuquota kai schedule FILES` runs one
//! scheduling session: allocation with gangs, consolidation, reclaim, preemption and stale
//! gangs, each pending job with its reason. In code:
//! [`kai::Input::from_model`](crate::kai::Input::from_model), then
//! [`kai::fairshare`](crate::kai::fairshare) or [`kai::run`](crate::kai::run).
//!
//! # Which MIG layout serves the notebooks?
//!
//! `gpuquota mig plan REQUEST` chooses layouts that serve the most weighted demand, then
//! reconfigure the fewest GPUs, then fragment least, and says whether the plan is proven
//! optimal; `--output mig-parted` writes the config the GPU operator applies. In code:
//! [`mig::Input::new`](crate::mig::Input::new) then [`mig::run`](crate::mig::run).
//!
//! # What does each department pay?
//!
//! `gpuquota meter INPUT` integrates allocations, sampled series or DCGM exporter scrapes
//! into GPU-hours per department and card type (MIG slices weighted by their share of the
//! card), borrowed hours, and a bill in integer minor units that adds up to the cent. In
//! code: [`metering::Input::from_document`](crate::metering::Input::from_document) then
//! [`metering::run`](crate::metering::run).
//!
//! # What if...?
//!
//! Change one field in a copy of the manifests (a `lendingLimit: 0`, `fairSharing` on) and
//! run the same command or scenario on both copies: every output is deterministic, so any
//! difference is the change's effect.
//!
//! # Exit status, for scripts
//!
//! Every command exits 0 on success, 1 when the input has problems (each printed on
//! standard error; also warnings under `--strict`), 2 on a usage error (an unknown command,
//! flag or value, or a file that cannot be read). Nothing is written to standard output
//! after an error. In code, every fallible call returns the one
//! [`Error`](crate::Error); its predicates tell an invalid input
//! ([`Error::is_invalid_input`](crate::Error::is_invalid_input)) from an unreadable file
//! ([`Error::is_io`](crate::Error::is_io)), a limit, an overflow or an engine failure.
