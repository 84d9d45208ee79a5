//! The layout planner: `prepare` groups GPUs into classes and builds their options, `exact`
//! holds the per-GPU programme and the class branch and bound, `heuristic` the local search
//! and LP-guided rounding, `bound` the certified Lagrangian bound. The crate docs describe the
//! method, its complexity and the properties the tests check.
//!
//! [`Plan`] is the JSON of `gpuquota mig plan --output json` (`{"value", "reconfigured",
//! "fragmentation", "optimal", "satisfied": {resource: count}, "gpus": [{"node", "index",
//! "changed", "instances": [{"profile", "start", "busy"}]}], "bound"}`, `bound` only when set
//! (the certified upper bound of a heuristic plan); `gpuquota schema mig-plan` prints its
//! JSON Schema (feature `schema`) and [`crate::plan_table`] its table.

use indexmap::IndexMap;

#[cfg(any(test, feature = "testkit"))]
use crate::input::PlanInstance;
use crate::layout::Instance;

mod bound;
mod class;
mod exact;
mod heuristic;
mod prepare;

pub(crate) use prepare::Prepared;
pub(crate) use prepare::check_weights;
pub use prepare::gpu_fragmentation;

/// The default work budget of the exact solver (state × option steps, about 1–2 ns each).
pub const DEFAULT_BUDGET: u64 = 200_000_000;

/// The largest back-pointer table of the exact solver (states × GPUs, 2 bytes each).
const MAX_TABLE: u64 = 16_000_000;

/// Planner settings.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PlanOptions {
    /// Skip both exact solvers: the local search, LP-guided rounding and the certified bound
    /// only (`mig plan --fast`).
    pub fast: bool,
    /// Work budget of the exact dynamic programme (states × options summed over GPUs); beyond
    /// it the greedy with a certified bound runs.
    pub budget: u64,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            fast: false,
            budget: DEFAULT_BUDGET,
        }
    }
}

impl PlanOptions {
    /// Sets fast mode (no exact solver).
    pub fn with_fast(mut self, fast: bool) -> Self {
        self.fast = fast;
        self
    }

    /// Sets the work budget.
    pub fn with_budget(mut self, budget: u64) -> Self {
        self.budget = budget;
        self
    }
}

/// An error planning.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// A weighted value does not fit in 64 bits.
    #[error("weighted demand overflows: {0}")]
    Overflow(&'static str),
}

/// The plan: the JSON contract of `gpuquota mig plan`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Plan {
    /// Weighted satisfied demand `W`.
    pub value: u64,
    /// GPUs whose profile counts change (or whose MIG mode is switched on) `R`.
    pub reconfigured: u32,
    /// Fragmentation `F`: per GPU, free compute slices minus the largest profile still placeable.
    pub fragmentation: u32,
    /// Whether the plan is proven optimal for `(W, R, F)`.
    pub optimal: bool,
    /// Satisfied instances per demanded resource, in demand order.
    pub satisfied: IndexMap<String, u32>,
    /// Every GPU in input order.
    pub gpus: Vec<GpuPlan>,
    /// When not proven optimal: a certified upper bound on `value`.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub bound: Option<u64>,
}

/// One GPU of the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GpuPlan {
    /// Node.
    pub node: String,
    /// GPU index.
    pub index: u32,
    /// Whether the layout changes.
    pub changed: bool,
    /// The planned instances, by start.
    pub instances: Vec<PlannedInstance>,
    /// Whether MIG is enabled in the plan (false only for a MIG-disabled GPU left alone).
    #[cfg_attr(feature = "serde", serde(skip))]
    pub mig_enabled: bool,
    /// Catalogue name of the model.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub model: String,
    /// Instances assigned to demand (planner-internal detail, for tests and tables).
    #[cfg_attr(feature = "serde", serde(skip))]
    pub assigned: Vec<Instance>,
}

/// One planned instance.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PlannedInstance {
    /// Profile name.
    pub profile: String,
    /// Start unit.
    pub start: u8,
    /// Whether a workload runs on it (kept from the input).
    pub busy: bool,
}

/// Plans `problem` exactly within the budget, else greedily with a certified bound.
///
/// # Errors
/// [`PlanError::Overflow`] if weights × counts exceed `u64`.
///
/// # Complexity
/// Option tables: O(C · L · 2ⁿ) for C classes of identical GPUs, L ≤ 2,319 layouts per model
/// and n ≤ 7 instances. Exact: O(S · Σ_g |options_g|) for S = Π(c_q + 1) capped demand states.
/// Greedy: O(passes · G · |options| · Q).
#[cfg(any(test, feature = "testkit"))]
pub(crate) fn plan(problem: &PlanInstance<'_>, options: &PlanOptions) -> Result<Plan, PlanError> {
    Prepared::new(problem)?.solve(options)
}

/// The greedy fallback alone (local search over per-class supply options), without a bound.
///
/// # Errors
/// [`PlanError::Overflow`].
///
/// # Complexity
/// O(C · L) to build the tables, then O(passes · G · |options| · Q).
#[cfg(any(test, feature = "testkit"))]
pub(crate) fn greedy(problem: &PlanInstance<'_>) -> Result<Plan, PlanError> {
    let p = Prepared::new(problem)?;
    let choice = p.greedy_choice();
    Ok(p.finish_greedy(&choice, false, None))
}

impl<'p, 'c> Prepared<'p, 'c> {
    /// Solves: exact within the budget, else greedy with a certified bound.
    ///
    /// # Errors
    /// [`PlanError::Overflow`].
    ///
    /// # Complexity
    /// Exact: O(S · Σ_g |options_g|) with S = Π(c_q + 1) states (bounded by the budget).
    /// Otherwise: an LP over at most 40 groups of interchangeable GPUs (dense simplex,
    /// O(iterations · rows · columns)), the local search, and 60 bound iterations of
    /// O(Σ_classes |options| · Q).
    #[cfg(any(test, feature = "testkit"))]
    pub(crate) fn solve(&self, options: &PlanOptions) -> Result<Plan, PlanError> {
        Ok(self.solve_checked(options))
    }

    /// [`Prepared::solve`]: infallible once the weights are checked ([`Prepared::new`]).
    pub(crate) fn solve_checked(&self, options: &PlanOptions) -> Plan {
        let mut partial = None;
        if !options.fast {
            if let Some(plan) = self.exact(options.budget) {
                return plan;
            }
            match self.class_exact() {
                Some((choice, true)) => return self.finish_greedy(&choice, true, None),
                Some((choice, false)) => partial = Some(choice),
                None => {}
            }
        }
        let plain = self.greedy_choice();
        let (guided, mu) = self.lp_choice();
        let score = |c: &[usize]| (self.value_of(c), std::cmp::Reverse(self.r_of(c)));
        let mut choice = if score(&guided) > score(&plain) {
            guided
        } else {
            plain
        };
        if let Some(p) = partial
            && score(&p) > score(&choice)
        {
            choice = p;
        }
        let value = self.value_of(&choice);
        let bound = self.bound(value, mu);
        let optimal = false;
        let mut plan = self.finish_greedy(&choice, optimal, Some(bound));
        if plan.value >= bound && plan.reconfigured == 0 && plan.fragmentation == 0 {
            plan.optimal = true;
            plan.bound = None;
        }
        plan
    }
}

impl Plan {
    /// The plan as YAML (the same fields as the JSON contract).
    ///
    /// # Errors
    /// The serializer's message (not expected for this shape).
    #[cfg(feature = "yaml")]
    pub fn to_yaml(&self) -> Result<String, String> {
        serde_saphyr::to_string(self).map_err(|e| e.to_string())
    }
}
