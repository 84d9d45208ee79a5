//! `gpuquota mig plan|export|validate|profiles`: the MIG planner's input read from a file,
//! its layouts and mig-parted configs checked, the catalogue's models looked up.

use std::path::Path;

use crate::command::{Context, Failure};
use crate::mig::{Catalogue, GpuModel, InputError, PlanRequest, Profiles};

/// The planning input of `file`, resolved against the built-in catalogue; unknown fields
/// (with "did you mean") and skipped documents are printed as warnings.
///
/// # Errors
/// A file that cannot be read, input problems (each, then their count), warnings under
/// `strict`.
pub fn load(
    cx: &mut Context<'_>,
    file: &Path,
    options: &crate::mig::Options,
) -> Result<crate::mig::Input<'static>, Failure> {
    let text = crate::model::source::read_text(file).map_err(Failure::read)?;
    let (req, unknown, skipped) = PlanRequest::from_yaml(&text)
        .map_err(|e| Failure::input([format!("{}: {e}", file.display())]))?;
    let name = file.display().to_string();
    if cx.diagnostics(&crate::mig::file_check::unknown_diagnostics(
        &name, &unknown, &skipped,
    )) {
        return Err(Failure::exit(1));
    }
    crate::mig::Input::new(&req, Catalogue::builtin(), options).map_err(|e| {
        if e.is_invalid_input() {
            problem_lines(file, e.diagnostics().iter().map(|d| d.message.as_str()))
        } else {
            // weights × counts beyond the planner's arithmetic, as the planner says it
            Failure::from(e)
        }
    })
}

/// `mig validate`: the planning input's layouts and demand, and every named mig-parted
/// config ([`crate::mig::file_check::check_documents`]); the summary lines to print. The
/// diagnostics and problems are printed.
///
/// # Errors
/// A file that cannot be read or parsed, any error (every warning under `strict`).
pub fn validate(cx: &mut Context<'_>, file: &Path) -> Result<Vec<String>, Failure> {
    let text = crate::model::source::read_text(file).map_err(Failure::read)?;
    let docs = crate::mig::read_documents(&text)
        .map_err(|e| Failure::input([format!("{}: {e}", file.display())]))?;
    let name = file.display().to_string();
    let checked = crate::mig::file_check::check_documents(&name, docs, Catalogue::builtin());
    let mut failed = cx.diagnostics(&checked.diagnostics);
    if !checked.errors.is_empty() {
        for line in problems(file, &checked.errors).lines {
            cx.line(&line);
        }
        failed = true;
    }
    if failed {
        return Err(Failure::exit(1));
    }
    Ok(checked.summary)
}

/// The planning input's problems, then their count (exit 1).
fn problems(file: &Path, errors: &[InputError]) -> Failure {
    problem_lines(file, errors.iter().map(ToString::to_string))
}

/// Each problem as `FILE: problem`, then their count (exit 1).
fn problem_lines<S: std::fmt::Display>(file: &Path, errors: impl Iterator<Item = S>) -> Failure {
    let f = file.display();
    let mut lines: Vec<String> = errors.map(|e| format!("{f}: {e}")).collect();
    lines.push(format!("{f}: {} problem(s)", lines.len()));
    Failure::input(lines)
}

/// `mig profiles [MODEL]`: the catalogue's model named by catalogue or product name, or
/// every model.
///
/// # Errors
/// A name the catalogue does not know (exit 1).
pub fn models(model: Option<&str>) -> Result<Vec<&'static GpuModel>, Failure> {
    let c = Catalogue::builtin();
    match model {
        Some(m) => c
            .resolve(m)
            .map(|x| vec![x])
            .map_err(|e| Failure::input([e.to_string()])),
        None => Ok(c.models().iter().collect()),
    }
}

/// The JSON document of `mig profiles`: one model when one was named, else all of them.
pub fn profiles<'a>(models: &[&'a GpuModel], named: bool) -> Profiles<'a> {
    let mut v: Vec<_> = models.iter().map(|m| crate::mig::model_report(m)).collect();
    match (named, v.len()) {
        (true, 1) => Profiles::One(v.remove(0)),
        _ => Profiles::All(v),
    }
}
