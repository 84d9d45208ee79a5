//! `--budgets FILE --usage REPORT.json` of `kueue schedule` and `kai schedule`: GPU-hour
//! budgets ([`gpuquota::model::budget`]) applied to a snapshot from a `meter` report of the
//! period so far ([`gpuquota::metering::budget::from_meter_report`],
//! [`gpuquota::metering::budget::apply_to_model`]).

use std::path::Path;

use gpuquota::metering::budget::{Applied, apply_to_model, from_meter_report};

use crate::common::{CliError, read_file};

/// Reads the budgets and the usage report and applies the spent budgets to `model`; every
/// spent budget is noted on stderr.
///
/// # Errors
/// A budget file that does not import or validate, a usage report that is not a `meter`
/// JSON report, or only one of the two flags.
pub(crate) fn apply(
    model: &mut gpuquota::model::Model,
    budgets: Option<&Path>,
    usage: Option<&Path>,
) -> Result<Option<Applied>, CliError> {
    let (budgets, usage) = match (budgets, usage) {
        (None, None) => return Ok(None),
        (Some(b), Some(u)) => (b, u),
        _ => {
            return Err(CliError::usage(
                "--budgets and --usage go together: the budgets and a `gpuquota meter` report of the period so far",
            ));
        }
    };
    let rules = load_rules(budgets)?;
    let report: serde_json::Value = serde_json::from_str(&read_file(usage)?)
        .map_err(|e| CliError::usage(format!("{}: {e}", usage.display())))?;
    let state = from_meter_report(rules, &report).map_err(CliError::usage)?;
    let applied = apply_to_model(model, &state);
    for n in &applied.notes {
        eprintln!("note: {n}");
    }
    Ok(Some(applied))
}

/// The Budgets of a manifest file, validated.
///
/// # Errors
/// Every problem of every Budget, or a file without any.
pub(crate) fn load_rules(
    budgets: &Path,
) -> Result<Vec<gpuquota::model::budget::BudgetRule>, CliError> {
    let text = read_file(budgets)?;
    let imported = gpuquota::model::import_str(&budgets.display().to_string(), &text)
        .map_err(|e| CliError::usage(e.to_string()))?;
    let mut rules = Vec::new();
    let mut problems = Vec::new();
    for (name, b) in &imported.model.budgets {
        match b.rule() {
            Ok(r) => rules.push(r),
            Err(ps) => problems.extend(ps.into_iter().map(|p| {
                format!(
                    "Budget {name:?}: {}: {}{}{}",
                    p.field,
                    p.error_type.as_str(),
                    p.value.map(|v| format!(": {v}")).unwrap_or_default(),
                    if p.detail.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", p.detail)
                    }
                )
            })),
        }
    }
    if !problems.is_empty() {
        return Err(CliError::usage(problems.join("\n")));
    }
    if rules.is_empty() {
        return Err(CliError::usage(format!(
            "{}: no Budget objects",
            budgets.display()
        )));
    }
    Ok(rules)
}
