//! The advisor on the seed month, for the default run's section "what the advisor would
//! change and why": the example advice (`gpuquota example advice`), the assistant's and
//! data science's share of their twelve RTX PRO 6000 and batch's H200 NVL borrowing limit
//! of 0, 4 or 8.

use gpuquota_model::diag::{Diagnostic, Diagnostics, codes};

use crate::{Advice, Options, advise, parse, prepare, split_queues};

/// The section's advice: the seed example (`gpuquota example advice`), a 39-point grid.
pub const SECTION_ADVICE: &str = gpuquota_sim::seed::ADVICE;

/// The seed files by name.
fn read(rel: &str) -> Result<(String, String), Diagnostic> {
    use gpuquota_sim::seed;
    let text = match rel {
        "kueue.yaml" => seed::KUEUE,
        "platform.yaml" => seed::PLATFORM,
        "month.yaml" => seed::MONTH,
        _ => {
            return Err(Diagnostic::error(
                codes::READ_FAILED,
                format!("{rel}: not a seed file"),
            ));
        }
    };
    Ok((rel.to_owned(), text.to_owned()))
}

/// Runs `advice` (YAML) over the seed month's Kueue scenario.
///
/// # Errors
/// As [`crate::advise`]; an advice that does not parse.
pub fn run(advice: &str, opts: &Options<'_>) -> Result<Advice, Diagnostics> {
    let prepared = prepare("kueue.yaml", gpuquota_sim::seed::KUEUE, "kueue", &read)?;
    let plan = parse("advice.yaml", advice, &|p| split_queues(&prepared.model, p))?;
    advise(&plan, &prepared, opts)
}

/// The default run's section: [`Advice::summary`] of [`SECTION_ADVICE`].
///
/// # Errors
/// As [`run`].
pub fn section() -> Result<String, Diagnostics> {
    Ok(run(SECTION_ADVICE, &Options::default())?.summary())
}
