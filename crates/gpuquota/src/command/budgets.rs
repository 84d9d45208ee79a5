//! `--budgets FILE --usage REPORT.json` of `kueue schedule` and `kai schedule`, `--budgets`
//! of `meter`: GPU-hour budgets ([`crate::model::budget`]) applied to a snapshot from a
//! `meter` report of the period so far ([`crate::metering::budget::from_meter_report`],
//! [`crate::metering::budget::apply_to_model`]).

use std::path::Path;

use crate::command::{Context, Failure};
use crate::metering::budget::{Applied, apply_to_model, from_meter_report};
use crate::model::budget::BudgetRule;

/// Reads the budgets and the usage report and applies the spent budgets to `model`; every
/// spent budget is noted on standard error (`note: …`).
///
/// # Errors
/// A budget file that does not import or validate, a usage report that is not a `meter`
/// JSON report, or only one of the two files.
pub fn apply(
    cx: &mut Context<'_>,
    model: &mut crate::model::Model,
    budgets: Option<&Path>,
    usage: Option<&Path>,
) -> Result<Option<Applied>, Failure> {
    let (budgets, usage) = match (budgets, usage) {
        (None, None) => return Ok(None),
        (Some(b), Some(u)) => (b, u),
        _ => {
            return Err(Failure::usage(
                "--budgets and --usage go together: the budgets and a `gpuquota meter` report of the period so far",
            ));
        }
    };
    let rules = load_rules(budgets)?;
    let text = crate::model::source::read_text(usage).map_err(Failure::read)?;
    let report: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Failure::usage(format!("{}: {e}", usage.display())))?;
    let state = from_meter_report(rules, &report).map_err(Failure::usage)?;
    let applied = apply_to_model(model, &state);
    for n in &applied.notes {
        cx.line(&format!("note: {n}"));
    }
    Ok(Some(applied))
}

/// The Budgets of a manifest file, validated ([`crate::model::budget::rules`]).
///
/// # Errors
/// Every problem of every Budget, or a file without any (exit 2).
pub fn load_rules(budgets: &Path) -> Result<Vec<BudgetRule>, Failure> {
    let text = crate::model::source::read_text(budgets).map_err(Failure::read)?;
    let imported = crate::model::import_str(&budgets.display().to_string(), &text)
        .map_err(|e| Failure::usage(e.to_string()))?;
    let rules = crate::model::budget::rules(&imported.model).map_err(|errors| {
        let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
        Failure::usage(lines.join("\n"))
    })?;
    if rules.is_empty() {
        return Err(Failure::usage(format!(
            "{}: no Budget objects",
            budgets.display()
        )));
    }
    Ok(rules)
}
