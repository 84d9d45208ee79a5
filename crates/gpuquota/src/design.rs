//! The design record: how the workspace is cut, why, and where each upstream rule comes from.
//!
//! This page is documentation only; it has no items. It replaces the private research notes
//! the code was first written from: every statement here is in our own words, and every
//! upstream rule is cited by repository and file so that it can be held against the source.
//!
//! # Crates and the direction of their dependencies
//!
//! ```text
//! gpuquota-cli           flags in, reports out (thin: no algorithm, no rendering logic)
//!    └── gpuquota        the facade: re-exports, this design record, the guide
//!         └── gpuquota-sim          virtual time over the engines
//!              ├── gpuquota-cohort      Kueue admission (uses gpuquota-fairshare)
//!              ├── gpuquota-fairshare   Kueue's dominant resource share, water-filling, DRF
//!              ├── gpuquota-rank        KAI Scheduler / Run:ai division and sessions
//!              ├── gpuquota-mig         MIG layouts and plans
//!              └── gpuquota-metering    GPU-hours, showback, chargeback (uses gpuquota-mig)
//!                   └── gpuquota-model  objects, quantities, import, the one validator,
//!                                       diagnostics, bounded reading of sources
//! ```
//!
//! Dependencies only point down. An embedder who needs one algorithm takes one engine crate
//! and the model; nothing above it is compiled. The simulator sits above the engines because
//! it drives each of them through the same entry points the snapshot commands use: Kueue's
//! input is built once by `gpuquota_cohort::Input::from_model` (world, tolerated
//! states, fair-sharing policy) and then driven by the scheduler it hands out
//! (`Input::scheduler`), KAI's input once by `gpuquota_rank::Input::from_model` and its
//! cluster kept across sessions by `gpuquota_rank::live::LiveCluster::new(input)`, each
//! session the engine's own; the engines' diagnostics and codes reach the caller unchanged. One kernel (one event
//! queue with a total order, one loop over instants) knows no engine and runs a driver per
//! engine (`kueue`, `resourcequota`, `kai`): built from the model once, it applies the
//! instant's events, then decides. (Only `Deprioritize`
//! budgets build one more Kueue world, of the original model, to pick the workloads that get
//! a low-priority twin.) So a one-step simulation and a snapshot command can never disagree
//! (that agreement is a property test of `gpuquota-sim`). The simulator's own way in has the
//! engines' shape: `Simulation::from_model` or `Simulation::from_files` (the scenario
//! document read and parsed once, its `spec.engine` picking the mode), then `simulate`. The
//! CLI renders nothing itself: every table, JSON
//! document and CSV row is produced by the library that owns the report, so an embedder gets
//! byte-for-byte what the command prints.
//!
//! # Where a check belongs
//!
//! There is one validator, [`model::validate()`](crate::model::validate()), and one
//! diagnostic type, [`model::diag::Diagnostic`](crate::model::diag::Diagnostic) (severity,
//! kind, object, field path, stable code, message). The rule for placing a check:
//!
//! * **Shape and API-server rules** (required fields, name syntax, quantity syntax, the
//!   CRDs' CEL rules and the admission webhooks of Kueue and KAI, duplicate objects, unknown
//!   fields and kinds) live in `gpuquota-model`. They are the same whichever command reads
//!   the file, so one mistake has one wording and one field path everywhere.
//! * **Engine rules** that only make sense for one algorithm (a cohort tree that is too deep
//!   for Kueue's walk, an amount that does not fit KAI's fixed-point unit, a MIG profile
//!   missing from the catalogue, a metering weight whose denominator is not representable)
//!   live in the engine's input builder and are reported through the same diagnostic type,
//!   with codes the engine's crate declares.
//! * `gpuquota validate` runs the model validator and then every engine's input builder, so
//!   it fails exactly when some engine would refuse the input, and names the engine.
//!
//! No code reads a diagnostic's message to pick its code or its kind: the code is chosen
//! where the problem is found (an engine's typed problem carries it, as the Kueue job
//! conversion's reason for not converting an object does), and the CLI filters and
//! escalates diagnostics by code (`--strict` turns every warning into an error). Parser
//! errors are no exception: the YAML reader matches on the parser's error variants, and the
//! JSON reader's visitor records why it stopped (a key it saw twice, or a value at the
//! nesting level where serde_json refuses an array or object, a level the visitor counts
//! itself) for the reader to pick `duplicate-key` or `limit-exceeded` from; serde_json's
//! text, with its line and column, is only shown. A value at that level that fails for
//! another reason is told apart by where serde_json's error lies (its typed line and column,
//! on the bracket that opens the value), not by what the error says. The validator's
//! `duplicate-object` is a `Duplicate` problem on an object's own `metadata.name` (a duplicate
//! inside an object is on another field), and the MIG file check's `unknown-kind` warnings are
//! the documents its reader lists as skipped, apart from the unknown fields it lists.
//!
//! # One way in per engine, and one error
//!
//! Every engine crate has the same four names at its root: `Input`, `Options`, `Report` and
//! `run`. The input is built once from the [`model::Model`](crate::model::Model) and the
//! options (`Input::from_model`; MIG from its planning request, metering from its records,
//! since neither reads Kubernetes objects) and every problem of the input is refused there;
//! `run(&Input)` then needs nothing else. A run returns `Result` only where it can fail over
//! a checked input (KAI's exact session sums can overflow; a metering input is plain data
//! checked as it is metered), and says so. There is no second way in: the builders below
//! the inputs (Kueue's world builders and scheduler constructors, KAI's snapshot builders
//! and session, MIG's planner stages, fair sharing's manifest tree) are crate-private. What
//! a caller used to change between building and running is an option (the validator or only
//! the engine's own checks, fair-sharing settings left unread for the quotas, KAI's measured
//! usage and weight-follows-quota, MIG's fast mode); a caller that steps a run takes its
//! stepping state from the checked input (`kueue::Input::scheduler`,
//! `kai::live::LiveCluster::new`). A plan checker is a function of the report and its input
//! (`mig::Plan::verify`). The engines' own scenario tests, which build snapshots the way
//! upstream's tests create objects and edit them between steps, reach that lower layer
//! through a hidden `testkit` feature (dev-dependencies and benches only; not part of the
//! public API or the API snapshots). The facade's table lists the entry points, the
//! simulator's included.
//!
//! Every fallible entry point returns one [`Error`](crate::Error), after jiff's error design
//! (BurntSushi/jiff `src/error/mod.rs`): an opaque type over a private kind, told apart by
//! predicates (`is_invalid_input`, `is_limit`, `is_io`, `is_overflow`, `is_engine`) and
//! carrying the typed diagnostics. The engines keep their own typed problems inside (the
//! Kueue build problems, KAI's session and division errors, MIG's input and plan errors,
//! metering's errors, fair sharing's errors) and convert them with `From` at their crate's
//! edge; the kind follows the problem's type or variant, never its text.
//!
//! # Why each engine has its own fixed-point unit
//!
//! Quantities are parsed once, at the edge, into exact decimals. Each engine then converts
//! them into the integer unit its upstream computes in, because exact conformance depends on
//! rounding exactly where upstream rounds:
//!
//! * **Kueue** (`gpuquota-cohort`, `gpuquota-fairshare`): CPU in milli-units, every other
//!   resource in base units rounded up, saturating 64-bit arithmetic with an "unlimited"
//!   sentinel, as kubernetes-sigs/kueue `pkg/resources/amount.go` does. Dominant resource
//!   shares are Kueue's integer per-mille values.
//! * **KAI** (`gpuquota-rank`): integers of nano-units, so fractional GPU requests and
//!   millicores are exact; the division of kai-scheduler/KAI-Scheduler
//!   `pkg/scheduler/plugins/proportion/resource_division/resource_division.go` works in
//!   floats upstream, and we reproduce its whole-unit phases exactly in integers (remainders
//!   as fixed-point fractions of 10⁻¹⁸).
//! * **MIG** (`gpuquota-mig`): memory slices and compute slices of the card, the driver's own
//!   placement grid (8 units on A100/H100/H200, 12 on RTX PRO 6000).
//! * **Metering** (`gpuquota-metering`): `1/720720` card-seconds (720720 = lcm(1..16)), so
//!   every MIG slice and every time-sliced replica is an integer; money in integer minor
//!   units with prices in micro-units per card-hour, each printed line rounded once.
//!
//! A shared unit would force one engine to round where its upstream does not.
//!
//! # Determinism
//!
//! Same input, same output, bit for bit: no hash maps in decision paths (the clippy
//! configuration forbids them), every sort has a total order with a final tie-break on a
//! name, no wall clock and no randomness outside seeded tests and the simulator's virtual
//! clock. Where upstream iterates a Go map (arbitrary order), we choose an order and say so
//! in the engine's "deviations" section.
//!
//! # Upstream sources, engine by engine
//!
//! **Kueue** (kubernetes-sigs/kueue), feature gates at their defaults:
//!
//! | concern | upstream file |
//! |---|---|
//! | quota tree: subtree quota, guaranteed quota, usage, available, potential available | `pkg/cache/scheduler/resource_node.go`, `pkg/cache/scheduler/clusterqueue_snapshot.go` |
//! | the hierarchical-cohort invariant | `keps/79-hierarchical-cohorts/README.md` |
//! | amount arithmetic | `pkg/resources/amount.go` |
//! | pending queues, inadmissible sets, requeueing | `pkg/cache/queue/cluster_queue.go`, `pkg/cache/queue/manager.go` |
//! | the scheduling cycle, classical entry order | `pkg/scheduler/scheduler.go` |
//! | flavor assignment, partial admission | `pkg/scheduler/flavorassigner/flavorassigner.go`, `pkg/scheduler/flavorassigner/podset_reducer.go` |
//! | classical preemption | `pkg/scheduler/preemption/preemption.go`, `pkg/scheduler/preemption/classical/hierarchical_preemption.go`, `pkg/scheduler/preemption/common/ordering.go`, `pkg/scheduler/preemption/common/preemption_policy.go` |
//! | fair-sharing order (the tournament) | `pkg/scheduler/fair_sharing_iterator.go` |
//! | fair-sharing preemption | `pkg/scheduler/preemption/fairsharing/strategy.go`, `pkg/scheduler/preemption/fairsharing/ordering.go`, `pkg/scheduler/preemption/fairsharing/target.go` |
//! | dominant resource share | `pkg/cache/scheduler/fair_sharing.go` |
//! | admission fair sharing | `pkg/util/admissionfairsharing/admission_fair_sharing.go` (KEP-4136) |
//! | reasons and conditions | `apis/kueue/v1beta2/workload_types.go` |
//! | job integrations | `pkg/controller/jobframework`, `pkg/controller/jobs/*` |
//! | performance harness | `test/performance/scheduler/runner/generator` |
//!
//! **KAI Scheduler / Run:ai** (kai-scheduler/KAI-Scheduler):
//!
//! | concern | upstream file |
//! |---|---|
//! | fair-share division (deserved, over-quota by priority, leftover units) | `pkg/scheduler/plugins/proportion/resource_division/resource_division.go` |
//! | queue order | `pkg/scheduler/plugins/proportion/queue_order/queue_order.go` |
//! | reclaim rules | `pkg/scheduler/plugins/proportion/reclaimable/reclaimable.go`, `pkg/scheduler/plugins/proportion/reclaimable/strategies/strategies.go` |
//! | capacity policy (limits, over-quota) | `pkg/scheduler/plugins/proportion/capacity_policy/capacity_policy.go` |
//! | the session's actions | `pkg/scheduler/actions/{allocate,reclaim,preempt,consolidation,stalegangeviction}` |
//! | node scoring (bin-pack, spread) | `pkg/scheduler/plugins/nodeplacement` |
//! | time-based fairshare | `pkg/scheduler/cache/usagedb`, `docs/time-based-fairshare/README.md` |
//! | pod grouper | `pkg/podgrouper/podgrouper/plugins/*` |
//!
//! Run:ai's departments, projects, ranks and over-quota weights follow NVIDIA's Run:ai
//! documentation ("How the Scheduler Works", "Concepts and Principles", the Projects and
//! Departments pages) and map onto a two-level KAI queue tree ([`kai::runai`](crate::kai::runai)).
//!
//! **MIG**: the profiles, placements and engine rules of NVIDIA's MIG user guide, and the
//! config format of NVIDIA/mig-parted. **DCGM**: NVIDIA/dcgm-exporter's metric and label
//! names (`internal/pkg/transformation/const.go`). **Fair-share theory**: weighted max-min
//! fairness (water-filling) and Dominant Resource Fairness (Ghodsi, Zaharia, Hindman,
//! Konwinski, Shenker, Stoica, NSDI 2011).
//!
//! # A worked example of hierarchical-cohort quota
//!
//! Kueue's quota arithmetic is written once, in `gpuquota_fairshare::quota::QuotaTree`; the
//! admission engine's forest, fair sharing's views and the `gpuquota quotas` picture all read
//! it. The test kit keeps a slow reference that recomputes every number from its definition by
//! plain recursion, and differential tests compare the two on random forests. Their unit
//! tests share one small tree, computed by hand from Kueue's formulas. One flavor and one
//! resource:
//!
//! ```text
//! root        Cohort, nominal 0
//! ├── teamA   Cohort, nominal 4, borrowingLimit 6, lendingLimit 2
//! │   ├── a1  ClusterQueue, nominal 10, lendingLimit 4, usage 9
//! │   └── a2  ClusterQueue, nominal 6, borrowingLimit 3, usage 7
//! └── b1      ClusterQueue, nominal 8, usage 5
//! ```
//!
//! | node | subtree quota | guaranteed | usage | usage passed up | available | potential available |
//! |---|---|---|---|---|---|---|
//! | a1 | 10 | 6 | 9 | 3 | 7 | 26 |
//! | a2 | 6 | 0 | 7 | 7 | 2 | 9 |
//! | teamA | 14 | 12 | 10 | 0 | 7 | 20 |
//! | b1 | 8 | 0 | 5 | 5 | 5 | 10 |
//! | root | 10 | – | 5 | – | 5 | 10 |
//!
//! A node passes up only the usage above what it keeps for itself (a1: 9 − 6; teamA:
//! max(0, 10 − 12)).
//! A ClusterQueue keeps `nominal − lendingLimit` for itself (a1 keeps 6 and lends 4), and a
//! cohort's subtree quota is its own nominal plus what its children lend (teamA: 4 + 4 + 6).
//! a2 is borrowing (7 of 6), so a one-unit request in a2 has borrowing level 1 (teamA has
//! room), and a2's dominant resource share is its borrowed 1 × 1000 over the 20 teamA could
//! lend: 50.
//!
//! # Deliberate deviations
//!
//! Each engine lists where it departs from upstream on purpose, and why, in a section of its
//! own crate docs: [`kueue`](crate::kueue#deliberate-deviations),
//! [`fairshare`](crate::fairshare#deviations-from-upstream-on-purpose),
//! [`kai`](crate::kai#deviations-from-upstream-on-purpose),
//! [`mig`](crate::mig#decisions-and-deviations-from-upstream),
//! [`metering`](crate::metering#deviations-and-choices) and
//! [`sim`](crate::sim#deliberate-deviations-and-limits). The common ones: one depth limit of
//! 1,000 levels for every tree ([`model::limits::MAX_TREE_DEPTH`](crate::model::limits::MAX_TREE_DEPTH);
//! upstream has none), a total order where upstream iterates a map, and exact integers where
//! upstream rounds floats in a way that depends on evaluation order.
