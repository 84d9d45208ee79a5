//! MIG for gpuquota: a catalogue of GPU models with their MIG profiles and placements, layout
//! validation, an exact layout planner and mig-parted export.
//!
//! ```
//! use gpuquota_mig::{Catalogue, Input, Options, PlanRequest, run};
//!
//! let (request, unknown_fields, skipped_documents) = PlanRequest::from_yaml(r#"
//! mode: keep-busy-gpus
//! weights: count
//! gpus:
//!   - {node: node-a, index: 0, model: NVIDIA A100-SXM4-40GB,
//!      instances: [{profile: 3g.20gb, start: 4, busy: true}]}
//!   - {node: node-a, index: 1, model: NVIDIA-A100-SXM4-40GB, instances: []}
//! demand:
//!   - {resource: nvidia.com/mig-2g.10gb, count: 3}
//! "#)?;
//! assert!(unknown_fields.is_empty() && skipped_documents.is_empty());
//! let input = Input::new(&request, Catalogue::builtin(), &Options::default())?;
//! let p = run(&input);
//! // GPU 0 runs work, so it keeps its layout; GPU 1 is cut into 3 x 2g.10gb.
//! assert_eq!((p.value, p.reconfigured, p.optimal), (3, 1, true));
//! assert_eq!(p.satisfied["nvidia.com/mig-2g.10gb"], 3);
//! assert!(!p.gpus[0].changed && p.gpus[1].changed);
//! let starts: Vec<(&str, u8)> =
//!     p.gpus[1].instances.iter().map(|i| (i.profile.as_str(), i.start)).collect();
//! assert_eq!(starts, [("2g.10gb", 0), ("2g.10gb", 2), ("2g.10gb", 4)]);
//! // The same plan as mig-parted config, one named config per node.
//! assert!(gpuquota_mig::mig_parted_config(&p).contains("\"2g.10gb\": 3"));
//!
//! // The catalogue: placements in the driver's units (RTX PRO 6000: a 12-unit grid).
//! let rtx = Catalogue::builtin().resolve("NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition")?;
//! let one_g = rtx.profile("nvidia.com/mig-1g.24gb")?;
//! let starts: Vec<u8> = one_g.placements().iter().map(|x| x.start).collect();
//! assert_eq!((one_g.compute_slices(), one_g.max_instances(), starts), (1, 4, vec![0, 3, 6, 9]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The way in
//!
//! [`Input::new`] resolves a [`PlanRequest`] (read with [`PlanRequest::from_yaml`] or built
//! as Rust values; MIG planning reads no Kubernetes objects, so this stands where the other
//! engines have `Input::from_model`) against a [`Catalogue`] with the [`Options`], refusing
//! every input problem as one [`gpuquota_model::Error`]; [`run`] plans it, infallibly, and
//! returns the [`Report`] (a [`Plan`]); [`Plan::verify`] checks a plan against its input
//! with a checker independent of the planner. There is no other way in: the planner's stages
//! (the exact solvers, the greedy fallback) are private, and the options choose between them
//! ([`PlanOptions::fast`], [`PlanOptions::budget`]). The catalogue, layout checks
//! ([`check`]), the resolved problem ([`PlanRequest::resolve`], [`PlanInstance`], read by
//! [`plan_table`]) and mig-parted files ([`parted`], [`mig_parted_config`]) stay public for
//! their types.
//!
//! # What the crate does
//!
//! * [`Catalogue`]: every GPU model of `mig-profiles.json` (turned into a Rust table by the
//!   build script and built once; nothing is read or parsed at run time), keyed by model and
//!   NVML profile id, with
//!   profile names and resource names as aliases. [`Catalogue::resolve`] accepts catalogue
//!   names, `nvidia.com/gpu.product` label values (also with GFD's `-MIG-<profile>` and
//!   `-SHARED` suffixes), nvidia-smi product names and PCI ids.
//! * [`Layout`] and [`check`]: a GPU's instances as (profile, start) and the driver's rules —
//!   allowed starts, no overlapping units, one OFA holder (`+me`) per GPU, RTX `+me.all` only
//!   beside `-me` profiles, media engine counters. [`advertised_resources`] gives what a node
//!   advertises under the device plugin's `single`, `mixed` and `none` strategies.
//! * [`run`] ([`Input`]): the layout planning problem with the lexicographic objective (weighted
//!   satisfied demand `W`, then reconfigured GPUs `R`, then fragmentation `F`), under
//!   [`Mode::KeepBusyGpus`] (GPU operator MIG manager) or [`Mode::PinBusyInstances`] (dynamic
//!   MIG). `mig plan --fast` ([`PlanOptions::fast`]) keeps the greedy path alone.
//! * [`mig_parted_config`] and [`placements_yaml`]: mig-parted `version: v1` configs (one named
//!   config per node) and explicit placements.
//! * [`read_documents`], [`validate_config`], [`parted`]: mig-parted configs as *input*, bare
//!   or inside the GPU operator's ConfigMap, and `Node` objects whose `nvidia.com/mig.config`
//!   label names the config that gives their GPUs' current layouts.
//!
//! # Input formats
//!
//! A `mig` input file is YAML (one or more `---` documents) or JSON (one value or a stream).
//! Each document is one of:
//!
//! * **The planning input** (at most one per file): `mode` (`keep-busy-gpus` |
//!   `pin-busy-instances`), `weights` (`count` | `compute-slices` | `memory-slices`), `gpus`
//!   (`node`, `index`, `model`, `instances: [{profile, start, busy}]` — absent = MIG disabled
//!   — and `busy` for a MIG-disabled GPU held whole), `demand` (`resource` or `profile`,
//!   `count`, optional `weight`) and `nodes` (below).
//! * **A mig-parted config** (`NVIDIA/mig-parted: api/spec/v1/spec.go`): `version: v1`,
//!   `mig-configs: {name: [{device-filter, devices, mig-enabled, mig-devices}]}`.
//! * **A ConfigMap** (`kind: ConfigMap`) whose `data` values hold mig-parted configs, as the
//!   GPU operator's `default-mig-parted-config` does (`NVIDIA/gpu-operator:
//!   assets/state-mig-manager/0400_configmap.yaml`).
//! * **A `Node`** (or a `List` of them, as `kubectl get nodes -o yaml` prints): its
//!   `metadata.name` and `metadata.labels` become a `nodes` entry.
//!
//! A `nodes` entry is `{name, labels}`: `nvidia.com/gpu.product` gives the model,
//! `nvidia.com/gpu.count` the number of GPUs (indices `0..count`), `nvidia.com/mig.config` the
//! named config of the file's mig-parted configs that the MIG manager applied (absent: MIG
//! disabled, the ClusterPolicy default `all-disabled`). Entries are walked in order and the
//! last one selecting a GPU wins; the placement is the first layout with the config's profile
//! counts in the catalogue's layout order (mig-parted lets the driver place instances), and
//! every such instance is idle (list the GPU under `gpus` to mark busy instances). A label
//! naming a config the file does not define is an error naming the node.
//!
//! Scalars follow Kubernetes: a quoted scalar is a string, so `count: "0x10"` is a type error
//! naming `demand[0].count` (an unquoted `0x10` is 16). Booleans are YAML 1.2's `true` /
//! `false` only, so `node: n` stays the string `n` (a deliberate deviation from Kubernetes'
//! YAML 1.1 reader). Unknown fields are warned about with a "did you mean"
//! ([`unknown_field_message`]); other kinds are skipped with a warning; the CLI makes both
//! errors under `--strict`. Two planning inputs in one file are an error.
//!
//! # Properties (each is checked by the tests named in brackets)
//!
//! 1. **Every valid layout validates and every invalid one is rejected with its reason.**
//!    Enumerating the layouts the rules allow gives 2,319 layouts, 128 profile multisets and
//!    44 maximal multisets on every 7-slice GPU, 76 on A30, 717 on RTX PRO 6000, 19 maximal
//!    placement layouts and 12 maximal multisets on A100 with `1g/2g/3g/4g/7g`; the maximum
//!    count of every profile over all layouts equals the documented `max_instances`
//!    (`catalogue::*`, `layout::tests`).
//! 2. **Plans are valid.** An independent checker ([`Plan::verify`], which recomputes `F` from its
//!    definition instead of calling the planner's tables) accepts every plan: layouts pass
//!    [`check`], busy work is kept as the mode demands, `changed`/`reconfigured` match the
//!    profile multisets, `satisfied` never exceeds demand, and `value` and `fragmentation`
//!    equal their definitions (`props::*`, `smoke::*`, `fleet::*`).
//! 3. **Exact where it says so.** `optimal: true` means `(W, R)` is proven optimal. When the
//!    per-GPU programme ran (within [`PlanOptions::budget`]) `F` is optimal too and the plan
//!    equals the optimum `(W, R, F)` of an exhaustive reference solver
//!    (`props::exact_plan_equals_exhaustive_optimum`); the class branch and bound equals the
//!    `(W, R)` of an independent dynamic programme over GPUs on instances of up to 64 GPUs
//!    (`props::class_exact_equals_reference_w_and_r`), proves mixed 1,000-GPU fleets in
//!    both modes (`fleet::class_solver_proves_mixed_fleets`) and, on the benchmark's mixed
//!    1,000-GPU fleets (all empty, 30 % occupied, both modes), proves the `(W, R)` that the
//!    HiGHS MILP solver finds on the same input
//!    (`fleet::class_solver_proves_benchmark_mixed_fleets`), and proves all 48 instances of a
//!    seeded random mixed set (8–1,000 GPUs of four models, 0/30/60 % occupied, both modes,
//!    demand at 50/90/110 % of the compute slices) with the `(W, R)` of an independent
//!    HiGHS MILP (`fleet::class_solver_proves_the_random_mixed_set`). Proving is not
//!    guaranteed: a phase that reaches its node limit leaves `optimal: false` (property 4
//!    then holds).
//! 4. **Never worse than the greedy fallback**, and a plan that is not proven carries a
//!    certified upper bound on `W` in `bound`
//!    (`props::never_worse_than_greedy_and_bound_holds`).
//! 5. **Deterministic and independent of the GPU order.** Same input, same plan, bit for bit;
//!    reordering the GPUs keeps `(W, R, F)`, for the exact and the `--fast` paths alike,
//!    because GPUs are grouped into classes in key order and every pass walks classes, never
//!    input positions (`props::deterministic_and_gpu_order_independent`,
//!    `fleet::plan_is_gpu_order_independent_at_fleet_size` on 2,000 mixed GPUs).
//! 6. **Inputs as users have them.** A quoted count is a string, mig-parted configs are
//!    validated entry by entry, a config covering every profile of NVIDIA's default
//!    mig-parted config validates, node labels give current layouts, and mappings are read
//!    in the file's key order whatever features `serde_json` has in the build (`inputs::*`,
//!    `inputs::document_order_decides_without_serde_json_preserve_order`).
//!
//! # Method
//!
//! GPUs with the same model, current layout and busy set form one **class** with an integer
//! count; classes are numbered in key order. A class's **supply options** are the distinct
//! demand-capped supply vectors of its candidate layouts (the current one at cost 0; every
//! other allowed layout whose profile multiset differs at cost 1), Pareto-pruned.
//!
//! 1. **Per-GPU programme** (small instances): an option is a candidate layout with the idle
//!    instances it assigns; a dynamic programme over GPUs on the assigned vector is exact in
//!    `(W, R, F)`. It runs when states × options stay within [`PlanOptions::budget`].
//!    O(S · Σ_g |options_g|), S = Π(c_q + 1) capped demand states.
//! 2. **Class branch and bound** (otherwise): integer counts `x[c][o]` of GPUs of class `c`
//!    taking option `o` (classes with identical option lists share variables), with
//!    `Σ_o x[c][o] = n_c`, served `z_q ≤ d_q` and `z_q ≤ fixed_q + Σ s[o][q]·x[c][o]`. The
//!    groups and demanded resources split into connected components (a group and a resource
//!    are linked when an option of the group supplies it; models with no profile name in
//!    common never share one); `W` and `R` add up over components, so each is solved on its
//!    own, with its own bounds and node limit. A component whose group LP would have more
//!    than 400 columns (a pinned fleet, where every busy GPU is its own class) is solved
//!    over **families** instead: classes whose options have the same maximal supplies (each
//!    of them one of every member's options) share one count per maximal supply (cost 1),
//!    and keep one count per distinct current supply (cost 0, for the members with that
//!    supply). Any member realises a family count with an option of its own class of at
//!    least that supply and at most that cost, and every class option is covered by one, so
//!    the family programme has the same optimum `(W, R)` with 3–5× fewer columns (the
//!    1,000-GPU pinned fleets: 220–330 instead of 700–1,800). Per component, phase 1
//!    maximises `W = Σ w_q z_q`; phase 2 minimises `R` subject to `W ≥ W*`. Each phase is a
//!    best-first branch and bound that splits the most fractional served amount `z_q` when
//!    one is fractional (it is `min(d_q, supply_q)`, an integer, in some optimal integer
//!    solution), else the most fractional count, with LP bounds (the
//!    `microlp` crate's simplex, re-solved from the parent's basis after each branching
//!    bound) rounded to the integer they certify (tolerance 10⁻⁶ relative), an incumbent
//!    from the local search, and a rounding heuristic (counts rounded down, then the local
//!    search). Every incumbent is scored in exact integers. A phase that exceeds its node limit
//!    (2,000, fewer for large LPs: 400,000 / columns, at least 50) stops unproven; the plan then falls back to step 3 with its best incumbent as a
//!    candidate. Per node O(LP re-solve) over Σ_c |options_c| + Q columns and C + Q rows.
//! 3. **Heuristic with a bound** (`--fast`, or an unproven step 2): the local search from
//!    the current layouts and an LP-guided rounding, the better kept, with a Lagrangian bound
//!    evaluated in exact integer arithmetic (`bound`). O(passes · G · |options| · Q).
//!
//! After steps 2 and 3, demand is assigned GPU by GPU in class order and each GPU takes the
//! realisation (layout and assigned subset, at most 2ⁿ subsets, n ≤ 7) with the least `F`:
//! `F` is a tie-break there, not proven optimal.
//!
//! # Decisions and deviations from upstream
//!
//! * **Plans at fleet size changed**: since the class branch and bound, `mig plan` proves
//!   `(W, R)` on large fleets where it used to return a heuristic plan; the JSON fields are
//!   the same, the values can be better (higher `value`, fewer `reconfigured`) and `bound`
//!   disappears where optimality is proven. `optimal` now certifies `(W, R)`; `F` is exact
//!   only where the per-GPU programme ran.
//! * **LP crate**: `microlp` (pure Rust, deterministic: no randomness, no clock unless a time
//!   limit is set, which the planner never does) supplies the LP bounds; the branch and bound,
//!   the node limit and the exact integer scoring are the planner's own.
//! * **mig-parted validation**: an entry without `device-filter` must fit at least one
//!   catalogue model (mig-parted itself only finds out on the node); with a filter it must fit
//!   every catalogue model the filter names, and a filter id the catalogue does not know is a
//!   warning. `mig-enabled: true` without `mig-devices` is an error (`api/spec/v1/spec.go`
//!   requires the field).
//! * **Legacy profile names**: GB200's early `1g.24gb`, `3g.95gb`, `4g.95gb` and `7g.189gb`
//!   (still in NVIDIA's default mig-parted config) resolve to `1g.23gb`, `3g.93gb`, `4g.93gb`
//!   and `7g.186gb` ([`Profile::legacy_names`]); the plan prints the current names.
//! * **Reconfigured** means the profile multiset changed, as mig-parted's `Equals` test and the
//!   GPU operator see it, or MIG is switched on for a MIG-disabled GPU. Under
//!   `pin-busy-instances` a layout with the *same* multiset as the current one is never
//!   proposed with other placements (that would destroy and recreate instances without being
//!   counted), so `changed` ⇔ multiset changed in both modes, and "layout changed" and the
//!   multiset definition of `R` coincide.
//! * **MIG-disabled GPUs**: a GPU without `instances` has MIG disabled; `busy: true` on it means
//!   a workload holds the whole GPU (extension of the issue's input format). An idle
//!   MIG-disabled GPU may be given a layout (counts as reconfigured); it contributes 0 to `F`.
//! * **Weights**: per demand `weight` (integer ≥ 1) overrides the policy; `compute-slices`
//!   weighs a resource by its profile's compute slices; `memory-slices` by its memory slices,
//!   taking the smallest where one name has different footprints on the input's models
//!   (`1g.10gb` is 1 slice on A100-80GB, 2 on A100-40GB). Lines for the same resource are
//!   summed (their weights must agree).
//! * **Fragmentation** follows the definition literally: per GPU, free compute slices minus the
//!   largest profile (engine rules included) still placeable in the units left free by the busy
//!   and assigned instances. Models without a placement grid (Thor) contribute 0.
//! * **Output**: the JSON contract of issue 6 exactly; `bound` is added after `gpus` only when
//!   the plan is not proven optimal. `satisfied` lists every demanded resource in demand order,
//!   also with 0.
//! * **Ties** after `(W, R, F)`: the layout with fewer instances (nothing is cut that no demand
//!   asked for), then catalogue order; across GPUs the exact solver lets the later GPU change.
//!   A MIG-mode toggle is not costed separately from other reconfigurations.
//! * **Engines**: `+me.all` is modelled as a synthetic `media` counter (see [`Engines`]); OFA
//!   capacity defaults to 1 where the catalogue gives none; decoder/encoder/JPEG counters are
//!   enforced only where the catalogue gives totals (RTX PRO 6000).
//! * Driver-version rules (`3g + 4g` needs R510+, `1g.10gb` on A100-40GB needs R525+) are not
//!   enforced: the catalogue describes current drivers.
//! * **Input**: an empty planning file is an error, not an empty plan; a demanded resource
//!   that no profile of any catalogue model has (a typo such as `nvidia.com/mig-9g.5gb`) is
//!   an error naming the demand line. A resource of a model absent from the input is valid
//!   demand that simply cannot be served.
//!
//! # Unconfirmed catalogue data
//!
//! [`GpuModel::unconfirmed`] and [`Profile::unconfirmed_fields`] carry the flags of the JSON.
//! In short: placements not seen in `nvidia-smi mig -lgipp` output (H100-96GB/GH200-96/H20,
//! H200, GH200-144G, B200, GB200, B300, GB300 — inferred from the common 7-slice geometry);
//! profile ids partly assumed (B200, GB200, GH200-144; all of B300/GB300); GiB and SM counts
//! of several models; B200 decoder counts and the A30 `1g.6gb` NVDEC; RTX PRO 5000/4500 ids
//! and placements (assumed `{0,1}:1`, `{0}:2`); the RTX PRO 6000 12-unit grid seen on driver
//! 610 only; media exclusivity on A30 and RTX PRO, inferred from engine totals. Thor iGPU is
//! listed without a placement grid and is not a packing target (only the empty layout).
//!
//! # Crate features
//!
//! * `serde` (default): `Serialize`/`Deserialize` on the catalogue's types, the planning input
//!   ([`PlanRequest`] and its parts), mig-parted configs and the [`Plan`], and
//!   [`Catalogue::from_json`] (serde_json). Forwards to the model's `serde`.
//! * `yaml` (default, implies `serde`): the readers of `mig` input files, [`read_documents`]
//!   and [`PlanRequest::from_yaml`] (YAML through serde-saphyr, JSON through serde_json, with
//!   unknown fields through serde_ignored), and [`Plan::to_yaml`]. Forwards to the model's
//!   `yaml`.
//! * `schema`: JSON Schemas of the reports (`schemars`), for `gpuquota schema`.
//! * `fuzzing`: the `fuzzing` module with the checks the fuzz target and the arbtest smoke
//!   tests run (adds `arbitrary`, implies `yaml`). It does not change any output.
//!
//! With `default-features = false` the catalogue, layout checks ([`check`],
//! [`advertised_resources`]), mig-parted validation ([`validate_config`]), the planner and the
//! export ([`mig_parted_config`], [`placements_yaml`], which quote strings themselves) build
//! without serde, serde_json or a YAML parser: the built-in catalogue is the build script's
//! Rust table, and a [`PlanRequest`] or [`MigPartedConfig`] is built as plain Rust values.
//! The readers keep each mapping's keys in the order the file writes them whatever
//! features `serde_json` has in the build (the order of `mig-configs` shows in
//! [`validate_config`]'s problems and, among a ConfigMap's keys, decides which config of a
//! name counts).
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(clippy::unwrap_used, clippy::expect_used)]

pub mod catalogue;
pub mod documents;
pub mod entry;
pub mod export;
pub mod file_check;
pub mod input;
pub mod layout;
mod lp;
pub mod parted;
pub mod plan;
mod table;
#[cfg(feature = "yaml")]
mod tree;
pub mod verify;

#[cfg(feature = "fuzzing")]
pub mod fuzzing;
#[cfg(feature = "testkit")]
#[doc(hidden)]
pub mod testkit;

pub use catalogue::{
    CardFraction, Catalogue, CatalogueError, Engines, GpuModel, MediaVariant, ModelIndex,
    Placement, Profile, ProfileIndex, resource_name,
};
#[cfg(feature = "yaml")]
pub use documents::read_documents;
pub use documents::{MigDocuments, unknown_field_message};
pub use entry::{Input, Options, Report, run};
pub use export::{mig_parted_config, placements_yaml};
pub use input::{
    DemandSpec, GpuSpec, InputError, InstanceSpec, Mode, NodeSpec, PlanInstance, PlanRequest,
    ResolvedDemand, ResolvedGpu, WeightPolicy,
};
pub use layout::{
    Instance, Layout, LayoutProblem, MigStrategy, NodeGpu, StrategyError, advertised_resources,
    check,
};
pub use parted::{
    ConfigEntry, ConfigProblem, DeviceFilter, Devices, GpuSetting, MigPartedConfig, layout_for,
    validate_config,
};
pub use plan::{
    DEFAULT_BUDGET, GpuPlan, Plan, PlanError, PlanOptions, PlannedInstance, gpu_fragmentation,
};
pub use table::{ModelReport, ProfileReport, Profiles, model_report, plan_table, profiles_table};
pub use verify::Violation;
