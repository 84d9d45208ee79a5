//! `gpuquota kueue schedule|shares|quotas`: the Kueue engine on manifest files.
//!
//! Live-cluster states Kueue tolerates are warnings on standard error; malformed objects end
//! the command with exit 1, one line each.

use std::path::{Path, PathBuf};

use crate::command::{Context, Failure};
use crate::kueue::{Input, Options, QuotasReport, ScheduleReport};

fn import(cx: &mut Context<'_>, files: &[PathBuf]) -> Result<crate::model::Model, Failure> {
    let usable = crate::model::validate::KUEUE_USABLE;
    crate::command::inputs::load_model(cx, files, usable, "gpuquota kueue")
}

/// `gpuquota kueue schedule`: the scheduling cycles with `options`; with `budgets` and
/// `usage` the workloads a spent `Wait` budget holds back are pending with reason
/// `BudgetExhausted`. The engine's decision warnings are printed.
///
/// # Errors
/// Input problems, warnings under `strict`, budgets that do not apply.
pub fn schedule(
    cx: &mut Context<'_>,
    files: &[PathBuf],
    options: &Options,
    budgets: Option<&Path>,
    usage: Option<&Path>,
) -> Result<ScheduleReport, Failure> {
    let mut model = import(cx, files)?;
    let applied = crate::command::budgets::apply(cx, &mut model, budgets, usage)?;
    // the Configuration's fair-sharing settings, the objects and the weights, checked once;
    // running never needs the model again
    let input = Input::from_model(&model, options).map_err(|errors| {
        Failure::input(errors.diagnostics().iter().map(|e| format!("error: {e}")))
    })?;
    // the input holds everything the run reads: give the model's memory back to the
    // allocator before the run allocates its own
    drop(model);
    cx.warnings(input.warnings())?;
    let mut report = crate::kueue::run(&input);
    if let Some(a) = applied {
        // held back by a spent Wait budget: pending, with upstream-style fields
        for (workload, cq, message) in a.held {
            report.pending.push(crate::kueue::report::PendingOut {
                explanation: format!("{workload} waits: {message}."),
                workload,
                cluster_queue: cq,
                reason: crate::model::budget::BUDGET_EXHAUSTED.into(),
                message,
            });
        }
        report.pending.sort_by(|x, y| x.workload.cmp(&y.workload));
    }
    // decision warnings (a preempt/readmit loop): stderr, and in the report itself; under
    // `strict` they fail the command before anything is printed on stdout
    if cx.diagnostics(&report.warnings) {
        return Err(Failure::exit(1));
    }
    Ok(report)
}

/// `gpuquota kueue shares`: every ClusterQueue's and Cohort's weighted share.
///
/// # Errors
/// Input problems, one line each.
pub fn shares(
    cx: &mut Context<'_>,
    files: &[PathBuf],
) -> Result<crate::fairshare::shares::SharesReport, Failure> {
    let model = import(cx, files)?;
    match crate::fairshare::shares::kueue_shares(&model) {
        Ok(r) => Ok(r),
        // the validator's errors, one per line, as `kueue schedule` prints them
        Err(crate::fairshare::FairShareError::Validation(problems)) => Err(Failure::input(
            problems.iter().map(|p| format!("error: {p}")),
        )),
        Err(e) => Err(Failure::input([format!("error: {e}")])),
    }
}

/// `gpuquota kueue quotas`: quotas, usage and available capacity as Kueue's cache computes
/// them; tolerated states are printed as warnings.
///
/// # Errors
/// Input problems, warnings under `strict`.
pub fn quotas(cx: &mut Context<'_>, files: &[PathBuf]) -> Result<QuotasReport, Failure> {
    // the quotas need no fair-sharing policy: its settings and weights are not read
    let input = Input::from_model(
        &import(cx, files)?,
        &Options::default().with_ignore_fair_sharing(true),
    )
    .map_err(|e| Failure::input(e.diagnostics().iter().map(build_line)))?;
    cx.warnings(input.warnings())?;
    Ok(crate::kueue::quotas(&input))
}

/// One engine build problem as `kueue quotas` prints it: `error: Kind "name": field: message`
/// (the field printed even when empty, as the engine's own problem did).
fn build_line(d: &crate::model::diag::Diagnostic) -> String {
    format!("error: {} {:?}: {}: {}", d.kind, d.name, d.field, d.message)
}
