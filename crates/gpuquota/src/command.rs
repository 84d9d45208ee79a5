//! The commands of the `gpuquota` binary as library calls: each reads its inputs, runs its
//! engine and hands back what the command prints, so the binary only parses flags and prints.
//!
//! Every command ends in success or in one [`Failure`]: the exit status and the lines to
//! print on standard error. Lines a command prints on standard error while it runs (warnings,
//! notes, `--verbose` reads) go through the [`Context`]'s sink as they are made.
//!
//! Exit status: 1 for problems in the input (or warnings under `strict`), 2 for usage errors
//! and files that cannot be opened.

use std::fmt;

use crate::model::Diagnostic;
use crate::model::diag::codes;

pub mod advise;
pub mod budgets;
pub mod inputs;
pub mod kai;
pub mod kueue;
pub mod mig;
pub mod prometheus;
pub mod sim;
pub mod sweep;

/// How a command ends other than in success: the exit status and the lines to print on
/// standard error (each already starting with `error: ` or `warning: `).
#[derive(Debug)]
#[non_exhaustive]
pub struct Failure {
    /// The exit status: 1 for problems in the input, 2 for usage and unreadable files.
    pub code: u8,
    /// The lines to print on standard error, in order.
    pub lines: Vec<String>,
}

impl Failure {
    /// Exit status 2 with `error: MESSAGE` (a usage error, a file that cannot be opened or
    /// written).
    pub fn usage(message: impl fmt::Display) -> Failure {
        Failure {
            code: 2,
            lines: vec![format!("error: {message}")],
        }
    }

    /// Exit status `code` with nothing more to print (what failed is printed already).
    pub fn exit(code: u8) -> Failure {
        Failure {
            code,
            lines: Vec::new(),
        }
    }

    /// Exit status `code` with these lines.
    pub fn with_lines(code: u8, lines: Vec<String>) -> Failure {
        Failure { code, lines }
    }

    /// Exit status 1 with one line per problem of the input ([`error_line`]).
    pub fn input<S: AsRef<str>>(problems: impl IntoIterator<Item = S>) -> Failure {
        Failure {
            code: 1,
            lines: problems
                .into_iter()
                .map(|p| error_line(p.as_ref()))
                .collect(),
        }
    }

    /// Exit status 1 with one line per diagnostic and its severity (`warning:` is `error:`
    /// under `strict`).
    pub fn diagnostics<'a>(
        diagnostics: impl IntoIterator<Item = &'a Diagnostic>,
        strict: bool,
    ) -> Failure {
        Failure {
            code: 1,
            lines: diagnostics
                .into_iter()
                .map(|d| diagnostic_line(d, strict))
                .collect(),
        }
    }

    /// [`Failure::diagnostics`] of a scenario or file that could not be loaded: exit status
    /// 2 when one of them says a file (the scenario or one it names: `cluster:`,
    /// `workloads[].file`, a trace) cannot be read, as for every command; else 1.
    pub fn load<'a>(
        diagnostics: impl IntoIterator<Item = &'a Diagnostic> + Clone,
        strict: bool,
    ) -> Failure {
        let unreadable = diagnostics
            .clone()
            .into_iter()
            .any(|d| d.code == codes::READ_FAILED);
        let mut e = Failure::diagnostics(diagnostics, strict);
        if unreadable {
            e.code = 2;
        }
        e
    }

    /// The failure of a file that could not be read ([`crate::model::source::read_text`]'s
    /// diagnostic): exit status 1 for a file that is not UTF-8 text or too large, 2 for one
    /// that cannot be opened.
    pub fn read(d: Diagnostic) -> Failure {
        let mut e = Failure::usage(&d);
        if d.code != codes::READ_FAILED {
            e.code = 1;
        }
        e
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.lines.join("\n"))
    }
}

impl<E: std::error::Error> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure::usage(e)
    }
}

/// `line` as an error line: every error starts with `error: ` (a line that already says
/// `error: ` or `warning: ` is kept as it is).
pub fn error_line(line: &str) -> String {
    if line.starts_with("error: ") || line.starts_with("warning: ") {
        line.to_owned()
    } else {
        format!("error: {line}")
    }
}

/// One diagnostic as a line with its severity: `warning: …`, or `error: …` when it is an
/// error (every warning is under `strict`).
pub fn diagnostic_line(d: &Diagnostic, strict: bool) -> String {
    let severity = if d.is_error(strict) {
        "error"
    } else {
        "warning"
    };
    format!("{severity}: {d}")
}

/// A progress display of a long run (a sweep's or the advisor's simulations), fed from any
/// worker thread.
pub trait Progress: Sync {
    /// The work starts (every check before it has passed): show the display.
    fn start(&self);
    /// `done` of `total` finished.
    fn tick(&self, done: usize, total: usize);
    /// The work is over: clear the display.
    fn finish(&self);
}

/// No progress display.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self) {}
    fn tick(&self, _: usize, _: usize) {}
    fn finish(&self) {}
}

/// What a command needs of its caller besides its inputs: the global settings and where
/// the lines it prints on standard error while it runs go.
pub struct Context<'a> {
    /// Every warning is an error (`--strict`).
    pub strict: bool,
    /// Say which reader took each manifest file (`--verbose`).
    pub verbose: bool,
    stderr: Box<dyn FnMut(&str) + 'a>,
}

impl fmt::Debug for Context<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("strict", &self.strict)
            .field("verbose", &self.verbose)
            .finish_non_exhaustive()
    }
}

impl<'a> Context<'a> {
    /// A context whose standard-error lines go to `stderr`, one call per line (without its
    /// newline).
    pub fn new(strict: bool, verbose: bool, stderr: impl FnMut(&str) + 'a) -> Context<'a> {
        Context {
            strict,
            verbose,
            stderr: Box::new(stderr),
        }
    }

    /// Prints one line on standard error.
    pub fn line(&mut self, line: &str) {
        (self.stderr)(line);
    }

    /// Prints diagnostics, one line each with its severity ([`diagnostic_line`]); true when
    /// one of them is an error (every warning is under `strict`): the command must fail.
    pub fn diagnostics<'d>(
        &mut self,
        diagnostics: impl IntoIterator<Item = &'d Diagnostic>,
    ) -> bool {
        let mut failed = false;
        for d in diagnostics {
            failed |= d.is_error(self.strict);
            let line = diagnostic_line(d, self.strict);
            self.line(&line);
        }
        failed
    }

    /// Prints warnings that have no code of their own (`warning: …`, `error: …` under
    /// `strict`); under `strict` a warning fails the command (exit 1).
    ///
    /// # Errors
    /// Exit 1 under `strict` when there is a warning.
    pub fn warnings<W: fmt::Display>(&mut self, warnings: &[W]) -> Result<(), Failure> {
        let severity = if self.strict { "error" } else { "warning" };
        for w in warnings {
            let line = format!("{severity}: {w}");
            self.line(&line);
        }
        if self.strict && !warnings.is_empty() {
            return Err(Failure::exit(1));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_carry_the_exit_status_and_prefixed_lines() {
        let f = Failure::input(["bad field", "warning: kept", "error: kept too"]);
        assert_eq!(f.code, 1);
        assert_eq!(
            f.lines,
            ["error: bad field", "warning: kept", "error: kept too"]
        );
        let f = Failure::usage("no such file");
        assert_eq!(
            (f.code, f.to_string()),
            (2, "error: no such file".to_owned())
        );
        let unreadable = Diagnostic::error(codes::READ_FAILED, "cannot open").source("a.yaml");
        let malformed = Diagnostic::error(codes::MALFORMED, "not YAML").source("b.yaml");
        assert_eq!(Failure::load([&malformed], false).code, 1);
        let f = Failure::load([&malformed, &unreadable], false);
        assert_eq!(f.code, 2);
        assert_eq!(
            f.lines,
            ["error: b.yaml: not YAML", "error: a.yaml: cannot open"]
        );
        assert_eq!(Failure::read(unreadable).code, 2);
        assert_eq!(Failure::read(malformed).code, 1);
    }

    #[test]
    fn the_context_prints_warnings_and_fails_on_them_only_when_strict() {
        let warning = Diagnostic::warning(codes::UNKNOWN_FIELD, "unknown field x");
        let mut lines = Vec::new();
        let failed =
            Context::new(false, false, |l| lines.push(l.to_owned())).diagnostics([&warning]);
        assert!(!failed);
        assert_eq!(lines, ["warning: unknown field x"]);
        let mut lines = Vec::new();
        let mut cx = Context::new(true, false, |l| lines.push(l.to_owned()));
        assert!(cx.diagnostics([&warning]));
        let f = cx.warnings(&["loop"]).expect_err("strict");
        assert_eq!((f.code, f.lines.len()), (1, 0));
        drop(cx);
        assert_eq!(lines, ["error: unknown field x", "error: loop"]);
        let mut cx = Context::new(false, false, |_| {});
        assert!(cx.warnings::<&str>(&[]).is_ok());
    }
}
