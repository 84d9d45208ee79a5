//! MIG for gpuquota: a catalogue of GPU models with their MIG profiles and placements, layout
//! validation, an exact layout planner and mig-parted export.
//!
//! ```
//! use gpuquota_mig::{Catalogue, PlanOptions, PlanRequest, plan};
//!
//! let (request, unknown_fields) = PlanRequest::from_yaml(r#"
//! mode: keep-busy-gpus
//! weights: count
//! gpus:
//!   - {node: node-a, index: 0, model: NVIDIA A100-SXM4-40GB,
//!      instances: [{profile: 3g.20gb, start: 4, busy: true}]}
//!   - {node: node-a, index: 1, model: NVIDIA-A100-SXM4-40GB, instances: []}
//! demand:
//!   - {resource: nvidia.com/mig-2g.10gb, count: 3}
//! "#)?;
//! assert!(unknown_fields.is_empty());
//! let problem = request.resolve(Catalogue::builtin()).map_err(|e| format!("{e:?}"))?;
//! let p = plan(&problem, &PlanOptions::default())?;
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
//! # What the crate does
//!
//! * [`Catalogue`]: every GPU model of `mig-profiles.json` (embedded with `include_str!` and
//!   parsed once; nothing is read at run time), keyed by model and NVML profile id, with
//!   profile names and resource names as aliases. [`Catalogue::resolve`] accepts catalogue
//!   names, `nvidia.com/gpu.product` label values (also with GFD's `-MIG-<profile>` and
//!   `-SHARED` suffixes), nvidia-smi product names and PCI ids.
//! * [`Layout`] and [`check`]: a GPU's instances as (profile, start) and the driver's rules —
//!   allowed starts, no overlapping units, one OFA holder (`+me`) per GPU, RTX `+me.all` only
//!   beside `-me` profiles, media engine counters. [`advertised_resources`] gives what a node
//!   advertises under the device plugin's `single`, `mixed` and `none` strategies.
//! * [`plan()`]: the layout planning problem of `mig.md` §4.1 with the lexicographic objective
//!   (weighted satisfied demand `W`, then reconfigured GPUs `R`, then fragmentation `F`), under
//!   [`Mode::KeepBusyGpus`] (GPU operator MIG manager) or [`Mode::PinBusyInstances`] (dynamic
//!   MIG).
//! * [`mig_parted_config`] and [`placements_yaml`]: mig-parted `version: v1` configs (one named
//!   config per node) and explicit placements.
//!
//! # Properties (each is checked by the tests named in brackets)
//!
//! 1. **Every valid layout validates and every invalid one is rejected with its reason.**
//!    Enumerating the layouts the rules allow reproduces `mig.md`: 2,319 layouts, 128 profile
//!    multisets and 44 maximal multisets on every 7-slice GPU, 76 on A30, 717 on RTX PRO 6000,
//!    19 maximal placement layouts and 12 maximal multisets on A100 with `1g/2g/3g/4g/7g`; the
//!    maximum count of every profile over all layouts equals the documented `max_instances`
//!    (`catalogue::*`, `layout::tests`).
//! 2. **Plans are valid.** An independent checker ([`verify`]) accepts every plan: layouts
//!    pass [`check`], busy work is kept as the mode demands, `changed`/`reconfigured` match the
//!    profile multisets, `satisfied` never exceeds demand, and `value` and `fragmentation`
//!    equal their definitions (`props::*`, `smoke::*`).
//! 3. **Exact where it says so.** With `optimal: true` the plan equals the optimum `(W, R, F)`
//!    of an exhaustive reference solver written independently of the planner
//!    (`props::exact_plan_equals_exhaustive_optimum`, both modes, all weight policies).
//! 4. **Never worse than the greedy fallback**, and when the budget is exceeded the reported
//!    `bound` is a certified upper bound on `W` (`props::never_worse_than_greedy_and_bound_holds`).
//! 5. **Deterministic.** Same input, same plan, bit for bit; reversing the GPU order keeps
//!    `(W, R, F)` (`props::deterministic_and_gpu_order_independent`). No hash maps, no clocks;
//!    floats only inside the LP that guides the large-instance heuristic — every reported
//!    number is recomputed in integers.
//!
//! # Method
//!
//! GPUs with the same model, current layout and busy set share one option table. An option is
//! a candidate layout (the current one at cost 0; every other allowed layout whose profile
//! multiset differs at cost 1) together with the idle instances it assigns to demand; options
//! with the same assigned vector keep the cheapest `(R, F)`. A dynamic programme over GPUs on
//! the assigned vector (capped by demand and by total supply) is exact. Beyond
//! [`PlanOptions::budget`], a configuration LP over interchangeable GPUs is solved, rounded
//! down and polished by a local search (also run alone from the current layouts; the better of
//! the two is kept), and the LP's duals seed a Lagrangian bound evaluated in exact integer
//! arithmetic (`bound` in the output). Complexities are on each entry point.
//!
//! # Decisions and deviations from upstream
//!
//! * **Reconfigured** means the profile multiset changed, as mig-parted's `Equals` test and the
//!   GPU operator see it, or MIG is switched on for a MIG-disabled GPU. Under
//!   `pin-busy-instances` a layout with the *same* multiset as the current one is never
//!   proposed with other placements (that would destroy and recreate instances without being
//!   counted), so `changed` ⇔ multiset changed in both modes, and `mig.md`'s "L ≠ L⁰" and the
//!   multiset definition of `R` coincide.
//! * **MIG-disabled GPUs**: a GPU without `instances` has MIG disabled; `busy: true` on it means
//!   a workload holds the whole GPU (extension of the issue's input format). An idle
//!   MIG-disabled GPU may be given a layout (counts as reconfigured); it contributes 0 to `F`.
//! * **Weights**: per demand `weight` (integer ≥ 1) overrides the policy; `compute-slices`
//!   weighs a resource by its profile's compute slices; `memory-slices` by its memory slices,
//!   taking the smallest where one name has different footprints on the input's models
//!   (`1g.10gb` is 1 slice on A100-80GB, 2 on A100-40GB). Lines for the same resource are
//!   summed (their weights must agree).
//! * **Fragmentation** follows `mig.md` §4.1 literally: per GPU, free compute slices minus the
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
//! # Unconfirmed catalogue data (`mig.md` §6)
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
//! * `fuzzing`: the [`fuzzing`] module with the checks the fuzz target and the arbtest smoke
//!   tests run (adds `arbitrary`). It does not change any output.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(clippy::unwrap_used, clippy::expect_used)]

pub mod catalogue;
pub mod documents;
pub mod export;
pub mod input;
pub mod layout;
mod lp;
pub mod parted;
pub mod plan;
pub mod verify;

#[cfg(feature = "fuzzing")]
pub mod fuzzing;

pub use catalogue::{
    CardFraction, Catalogue, CatalogueError, Engines, GpuModel, MediaVariant, ModelIndex,
    Placement, Profile, ProfileIndex, resource_name,
};
pub use documents::{MigDocuments, read_documents, unknown_field_message};
pub use export::{mig_parted_config, placements_yaml};
/// The former name of [`PlanInstance`].
#[allow(deprecated)]
pub use input::Problem;
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
    DEFAULT_BUDGET, GpuPlan, Plan, PlanError, PlanOptions, PlannedInstance, Prepared,
    gpu_fragmentation, greedy, plan,
};
pub use verify::{Violation, verify};
