//! `gpuquota kai fairshare` and `gpuquota kai schedule`: the KAI cluster built from the
//! manifests and the command's flags, then the division or one session.
//!
//! Input problems end the command with exit 1, one per line. Warnings (unknown fields and
//! kinds, orphan queues, usage entries for missing queues) are printed as `warning: …`; under
//! `strict` they print as `error: …` and the command exits 1 before any output.

use std::path::{Path, PathBuf};

use crate::command::{Context, Failure};
use crate::kai::division::{DivisionOptions, Mode};
use crate::kai::fixed::SCALE;
use crate::kai::report::{FairshareReport, ScheduleReport};
use crate::kai::session::{Placement, SessionOptions};
use crate::kai::snapshot::{BuildOptions, parse_total};
use crate::kai::usage::UsageInput;
use crate::kai::{Input, Options};
use crate::model::{Diagnostic, Model, Timestamp};

/// The flags of the `kai` commands that shape the cluster and the division.
#[derive(Debug, Clone, Default)]
pub struct Flags {
    /// Cluster total replacing the node sum: `gpu=N[,cpu=Q,memory=Q]` (`--total`).
    pub total: Option<String>,
    /// Corrected mode instead of KAI-compatible results (`--corrected`).
    pub corrected: bool,
    /// Session time, RFC 3339; default the latest timestamp in the input (`--now`).
    pub now: Option<String>,
    /// Time-based fairshare: historical usage file (`--usage`).
    pub usage: Option<PathBuf>,
    /// Time-based fairshare kValue (`--k-value`).
    pub k_value: Option<f64>,
    /// Run:ai: only this node pool, as its own division (`--node-pool`).
    pub node_pool: Option<String>,
    /// Run:ai without "Over quota weight": every weight follows quota.
    pub weight_follows_quota: bool,
    /// KAI's `queueLabelKey` (`--queue-label-key`).
    pub queue_label_key: Option<String>,
}

/// A checked KAI input ready for the division or a session: the cluster and the
/// division's options.
#[derive(Debug)]
#[non_exhaustive]
pub struct Prepared {
    /// The input (its session options carry the division's).
    pub input: Input,
}

/// Imports the manifests ([`crate::command::inputs::load_model`]), lets `edit` change the
/// model, and builds the input with `flags` and the session's `placement`.
///
/// # Errors
/// Input problems (exit 1), a file that cannot be opened (exit 2), warnings under `strict`.
pub fn prepare(
    cx: &mut Context<'_>,
    files: &[PathBuf],
    flags: &Flags,
    placement: Placement,
    edit: impl FnOnce(&mut Context<'_>, &mut Model) -> Result<(), Failure>,
) -> Result<Prepared, Failure> {
    let mut model = crate::command::inputs::load_model(
        cx,
        files,
        crate::model::validate::KAI_USABLE,
        "gpuquota kai",
    )?;
    edit(cx, &mut model)?;
    build(cx, model, flags, placement)
}

fn build(
    cx: &mut Context<'_>,
    model: Model,
    args: &Flags,
    placement: Placement,
) -> Result<Prepared, Failure> {
    let mut problems = Vec::new();
    let total = match args.total.as_deref().map(parse_total) {
        None => [None; 3],
        Some(Ok(t)) => t,
        Some(Err(e)) => {
            problems.push(e);
            [None; 3]
        }
    };
    let now = match args.now.as_deref().map(Timestamp::parse) {
        None => None,
        Some(Ok(t)) => Some(t),
        Some(Err(e)) => {
            problems.push(format!("--now: {e}"));
            None
        }
    };
    if let Some(k) = args.k_value
        && !k.is_finite()
    {
        problems.push("--k-value: not a number".into());
    }
    let usage = match &args.usage {
        Some(p) => {
            let text = crate::model::source::read_text(p).map_err(Failure::read)?;
            match UsageInput::parse(&text) {
                Ok(u) => Some(u),
                Err(e) => {
                    problems.push(format!("{}: {e}", p.display()));
                    None
                }
            }
        }
        None => None,
    };
    if !problems.is_empty() {
        return Err(Failure::input(problems));
    }
    let model = match &args.node_pool {
        Some(pool) => crate::kai::runai::node_pool_view(&model, pool),
        None => model,
    };
    let mut division = DivisionOptions::default()
        .with_mode(if args.corrected {
            Mode::Corrected
        } else {
            Mode::Kai
        })
        .with_k_value(SCALE);
    if let Some(k) = usage.as_ref().and_then(UsageInput::k_value_nanos) {
        division.k_value = k;
    }
    if let Some(k) = args.k_value {
        division.k_value = (k.max(0.0) * SCALE as f64).round() as i128;
    }
    let options = Options::default()
        .with_build(
            BuildOptions::default()
                .with_total(total)
                .with_now(now)
                .with_queue_label_key(args.queue_label_key.clone()),
        )
        .with_session(
            SessionOptions::default()
                .with_division(division)
                .with_placement(placement),
        )
        .with_usage(usage)
        .with_weight_follows_quota(args.weight_follows_quota);
    let input = match Input::from_model(&model, &options) {
        Ok(input) => input,
        Err(e) => {
            let (warnings, errors): (Vec<&Diagnostic>, Vec<&Diagnostic>) =
                e.diagnostics().iter().partition(|d| !d.is_error(false));
            if !warnings.is_empty() {
                // a usage file that does not fit: the snapshot's warnings come first
                let warnings: Vec<Diagnostic> = warnings.into_iter().cloned().collect();
                let _ = cx.diagnostics(&warnings);
            }
            // Errors print bare, one per line (the contract the CLI tests pin).
            return Err(Failure::input(errors.iter().map(ToString::to_string)));
        }
    };
    if cx.diagnostics(&input.warnings().0) {
        // `strict`: the warnings (printed as errors) fail the command.
        return Err(Failure::exit(1));
    }
    Ok(Prepared { input })
}

/// `gpuquota kai fairshare`: every queue's fair share.
///
/// # Errors
/// As [`prepare`], or a division that fails.
pub fn fairshare(
    cx: &mut Context<'_>,
    files: &[PathBuf],
    flags: &Flags,
) -> Result<FairshareReport, Failure> {
    let p = prepare(cx, files, flags, Placement::default(), |_, _| Ok(()))?;
    Ok(crate::kai::fairshare(&p.input)?)
}

/// `gpuquota kai schedule`: one session with `placement`; with `budgets` and `budget_usage`
/// the spent budgets hold PodGroups back (each noted on standard error; the report is
/// unchanged).
///
/// # Errors
/// As [`prepare`] and [`crate::command::budgets::apply`], or a session that fails.
pub fn schedule(
    cx: &mut Context<'_>,
    files: &[PathBuf],
    flags: &Flags,
    placement: Placement,
    budgets: Option<&Path>,
    budget_usage: Option<&Path>,
) -> Result<ScheduleReport, Failure> {
    let p = prepare(cx, files, flags, placement, |cx, m| {
        if let Some(a) = crate::command::budgets::apply(cx, m, budgets, budget_usage)? {
            for (g, q, message) in a.held {
                cx.line(&format!(
                    "note: PodGroup {g} (queue {q}) is held back: BudgetExhausted: {message}"
                ));
            }
            for g in a.deprioritized {
                cx.line(&format!(
                    "note: PodGroup {g} is admitted only as priority class train (BudgetExhausted)"
                ));
            }
        }
        Ok(())
    })?;
    let result = crate::kai::run(&p.input)?;
    Ok(crate::kai::report::schedule_report(&result))
}
