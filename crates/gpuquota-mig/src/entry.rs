//! The engine's uniform entry point: [`Input::new`], then [`run`].
//!
//! MIG planning does not read Kubernetes objects: its input is a [`PlanRequest`] (GPUs with
//! their current layouts, and the demand), read from a planning document with
//! [`PlanRequest::from_yaml`] or built as plain Rust values, and resolved against a
//! [`Catalogue`]. So the shape is `Input::new(&request, &catalogue, &options)` in place of
//! the other engines' `Input::from_model(&model, &options)`; every input problem is refused
//! there, and [`run`] cannot fail.
//!
//! ```
//! use gpuquota_mig::{Catalogue, Input, Options, PlanRequest, run};
//!
//! let (request, _unknown_fields, _skipped) = PlanRequest::from_yaml(r#"
//! gpus: [{node: n, index: 0, model: NVIDIA A100-SXM4-40GB, instances: []}]
//! demand: [{resource: nvidia.com/mig-3g.20gb, count: 2}]
//! "#)?;
//! let input = Input::new(&request, Catalogue::builtin(), &Options::default())?;
//! let plan = run(&input);
//! assert_eq!((plan.value, plan.reconfigured), (2, 1));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use gpuquota_model::Error;
use gpuquota_model::diag::{Diagnostic, codes};

use crate::catalogue::Catalogue;
use crate::input::{InputError, PlanInstance, PlanRequest};
use crate::plan::{Plan, PlanError, PlanOptions, Prepared, check_weights};

/// The engine name every MIG diagnostic carries.
const ENGINE: &str = "mig";

/// What [`run`] applies (kept in the [`Input`]): fast mode and the exact solver's work
/// budget.
pub use crate::plan::PlanOptions as Options;

/// What [`run`] returns: the layouts, the demand served, the GPUs reconfigured.
pub type Report = Plan;

/// A checked MIG planning input: the resolved GPUs and demand, and the options.
#[derive(Debug, Clone)]
pub struct Input<'c> {
    instance: PlanInstance<'c>,
    options: PlanOptions,
}

impl<'c> Input<'c> {
    /// Resolves `request` against `catalogue` (every GPU model, profile and current layout
    /// checked) and checks that the weighted demand fits the planner's arithmetic.
    ///
    /// # Errors
    /// [`Error::is_invalid_input`]: every problem of the request at once, each naming the
    /// GPU (node, index) or demand line; [`Error::is_overflow`] when `Σ weight × count`
    /// exceeds `u64`.
    ///
    /// # Complexity
    /// O(G · n + Q) for G GPUs of at most n instances and Q demand lines.
    pub fn new(
        request: &PlanRequest,
        catalogue: &'c Catalogue,
        options: &Options,
    ) -> Result<Input<'c>, Error> {
        let instance = request.resolve(catalogue).map_err(input_errors)?;
        Input::from_instance(instance, options)
    }

    /// An input from a resolved problem ([`Input::new`] after resolving; the test kit).
    ///
    /// # Errors
    /// [`Error::is_overflow`] when `Σ weight × count` exceeds `u64`.
    pub(crate) fn from_instance(
        instance: PlanInstance<'c>,
        options: &Options,
    ) -> Result<Input<'c>, Error> {
        check_weights(&instance).map_err(Error::from)?;
        Ok(Input {
            instance,
            options: options.clone(),
        })
    }

    /// The resolved GPUs and demand.
    pub fn instance(&self) -> &PlanInstance<'c> {
        &self.instance
    }

    /// The options.
    pub fn options(&self) -> &Options {
        &self.options
    }
}

/// Plans `input`: the layouts that serve the most weighted demand, then reconfigure the
/// fewest GPUs, then leave the least fragmentation; exact within the work budget, else
/// greedy with a certified bound.
///
/// Infallible: every input problem is refused by [`Input::new`].
///
/// # Complexity
/// Option tables: O(C · L · 2ⁿ) for C classes of identical GPUs, L ≤ 2,319 layouts per
/// model and n ≤ 7 instances; exact: O(S · Σ_g |options_g|) for S = Π(c_q + 1) capped demand
/// states, within the budget; greedy: O(passes · G · |options| · Q).
pub fn run(input: &Input<'_>) -> Report {
    Prepared::build(&input.instance).solve_checked(&input.options)
}

impl Plan {
    /// Checks this plan against `input` with a checker independent of the planner
    /// ([`crate::verify`]): every layout valid for its GPU model, busy instances kept,
    /// `changed`, `reconfigured`, `satisfied`, `value` and `fragmentation` equal to their
    /// definitions. A plan from [`run`] on the same input always passes; a plan read back
    /// from elsewhere may not.
    ///
    /// # Errors
    /// Every [`crate::Violation`] found, GPUs in order, then the totals.
    ///
    /// # Complexity
    /// O(G · (n² + P · n)) for G GPUs, n instances per GPU and P placements per model.
    pub fn verify(&self, input: &Input<'_>) -> Result<(), Vec<crate::Violation>> {
        crate::verify::verify(&input.instance, self)
    }
}

fn input_errors(errors: Vec<InputError>) -> Error {
    Error::invalid_input(errors.iter().map(input_diagnostic).collect::<Vec<_>>())
}

/// One input problem as a diagnostic (the message names the GPU or the demand line).
fn input_diagnostic(e: &InputError) -> Diagnostic {
    let code = match e {
        InputError::Parse(_) => codes::MALFORMED,
        _ => codes::INVALID,
    };
    Diagnostic::error(code, e.to_string()).engine(ENGINE)
}

impl From<InputError> for Error {
    /// An unreadable or invalid planning input.
    fn from(e: InputError) -> Error {
        Error::invalid_input(input_diagnostic(&e))
    }
}

impl From<PlanError> for Error {
    /// Weights × counts beyond `u64`.
    fn from(e: PlanError) -> Error {
        match e {
            PlanError::Overflow(_) => {
                Error::overflow(Diagnostic::error(codes::OVERFLOW, e.to_string()).engine(ENGINE))
            }
        }
    }
}

#[cfg(all(test, feature = "yaml"))]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    fn request(yaml: &str) -> PlanRequest {
        PlanRequest::from_yaml(yaml).expect("parses").0
    }

    #[test]
    fn every_input_problem_is_refused_before_the_run() {
        let r = request(
            "gpus: [{node: n, index: 0, model: no-such-gpu, instances: []}, {node: n, index: 0, model: NVIDIA A100-SXM4-40GB, instances: []}]\ndemand: []\n",
        );
        let e = Input::new(&r, Catalogue::builtin(), &Options::default()).expect_err("refused");
        assert!(e.is_invalid_input());
        assert_eq!(
            e.to_string(),
            "node n GPU 0: unknown GPU model \"no-such-gpu\"\nnode n GPU 0: listed twice"
        );
    }

    #[test]
    fn a_weighted_demand_beyond_u64_is_an_overflow() {
        let r = request(&format!(
            "gpus: [{{node: n, index: 0, model: NVIDIA A100-SXM4-40GB, instances: []}}]\ndemand: [{{resource: nvidia.com/mig-1g.5gb, count: 4, weight: {}}}]\n",
            u64::MAX / 2
        ));
        let e = Input::new(&r, Catalogue::builtin(), &Options::default()).expect_err("overflow");
        assert!(e.is_overflow());
        assert_eq!(e.diagnostics().0[0].code, codes::OVERFLOW);
        assert_eq!(
            e.to_string(),
            "weighted demand overflows: sum of weight x count"
        );
    }

    #[test]
    fn run_is_the_planner() {
        let r = request(
            "gpus: [{node: n, index: 0, model: NVIDIA A100-SXM4-40GB, instances: []}]\ndemand: [{resource: nvidia.com/mig-3g.20gb, count: 2}]\n",
        );
        let input = Input::new(&r, Catalogue::builtin(), &Options::default()).expect("valid");
        let p = run(&input);
        assert_eq!((p.value, p.reconfigured, p.optimal), (2, 1, true));
        assert_eq!(
            Some(p),
            crate::plan::plan(input.instance(), input.options()).ok()
        );
    }

    #[test]
    fn a_plan_verifies_against_its_input_and_a_wrong_figure_is_named() {
        // one empty A100-40GB, two 3g.20gb wanted: both fit, the GPU is reconfigured once
        let r = request(
            "gpus: [{node: n, index: 0, model: NVIDIA A100-SXM4-40GB, instances: []}]\ndemand: [{resource: nvidia.com/mig-3g.20gb, count: 2}]\n",
        );
        let input = Input::new(&r, Catalogue::builtin(), &Options::default()).expect("valid");
        let mut p = run(&input);
        assert_eq!(p.verify(&input), Ok(()));
        p.reconfigured = 2;
        assert_eq!(
            p.verify(&input),
            Err(vec![crate::Violation::Figure {
                field: "reconfigured",
                reported: 2,
                actual: 1,
            }])
        );
    }
}
