//! The one error type every entry point of gpuquota returns.
//!
//! An [`Error`] is opaque: what went wrong is told by its typed [`Diagnostic`]s (each names
//! the input, the object, the field and a stable [`Code`](crate::diag::Code)), and which kind
//! of failure it is by predicates ([`Error::is_invalid_input`], [`Error::is_limit`],
//! [`Error::is_io`], [`Error::is_overflow`], [`Error::is_engine`]). The kind is chosen where
//! the error is made, by the constructor called, never by reading a message.
//!
//! The engines keep their own typed problems inside (a MIG plan's `PlanError`, KAI's
//! `SessionError`, ...) and convert them at their crate's edge, so a caller of any engine
//! handles one type:
//!
//! ```
//! use gpuquota_model::{Diagnostic, Error, diag::codes};
//!
//! let e = Error::invalid_input(Diagnostic::error(codes::INVALID, "must be nil when cohort is empty")
//!     .object("ClusterQueue", "research")
//!     .field("spec.resourceGroups[0].flavors[0].resources[0].lendingLimit"));
//! assert!(e.is_invalid_input());
//! assert!(!e.is_limit());
//! assert_eq!(e.diagnostics().len(), 1);
//! assert_eq!(
//!     e.to_string(),
//!     "ClusterQueue \"research\": spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: must be nil when cohort is empty"
//! );
//! ```

use std::fmt;

use crate::diag::{Diagnostic, Diagnostics};

/// The error of every gpuquota entry point: one or more typed diagnostics and the kind of
/// failure (see the [module docs](self)).
///
/// Displays as its error diagnostics, one per line.
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    inner: Box<Inner>,
}

#[derive(Clone, PartialEq, Eq)]
struct Inner {
    kind: ErrorKind,
    diagnostics: Diagnostics,
}

/// The kinds of failure; private so that kinds can be added without breaking callers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ErrorKind {
    /// The input was refused: malformed, invalid or inconsistent objects.
    InvalidInput,
    /// An up-front limit of the input's size or of the work it asks for was hit.
    Limit,
    /// A file or stream could not be read.
    Io,
    /// An integer quantity overflowed.
    Overflow,
    /// The engine could not complete over a valid input (an infeasible request, a
    /// configuration the engine refuses at run time).
    Engine,
}

impl Error {
    fn new(kind: ErrorKind, diagnostics: impl Into<Diagnostics>) -> Error {
        Error {
            inner: Box::new(Inner {
                kind,
                diagnostics: diagnostics.into(),
            }),
        }
    }

    /// The input was refused (malformed, invalid or inconsistent objects).
    pub fn invalid_input(diagnostics: impl Into<Diagnostics>) -> Error {
        Error::new(ErrorKind::InvalidInput, diagnostics)
    }

    /// An up-front limit was hit (workloads, periods, series points, reader limits).
    pub fn limit(diagnostics: impl Into<Diagnostics>) -> Error {
        Error::new(ErrorKind::Limit, diagnostics)
    }

    /// A file or stream could not be read.
    pub fn io(diagnostics: impl Into<Diagnostics>) -> Error {
        Error::new(ErrorKind::Io, diagnostics)
    }

    /// An integer quantity overflowed.
    pub fn overflow(diagnostics: impl Into<Diagnostics>) -> Error {
        Error::new(ErrorKind::Overflow, diagnostics)
    }

    /// The engine could not complete over a valid input.
    pub fn engine(diagnostics: impl Into<Diagnostics>) -> Error {
        Error::new(ErrorKind::Engine, diagnostics)
    }

    /// Whether the input was refused.
    pub fn is_invalid_input(&self) -> bool {
        self.inner.kind == ErrorKind::InvalidInput
    }

    /// Whether an up-front limit was hit.
    pub fn is_limit(&self) -> bool {
        self.inner.kind == ErrorKind::Limit
    }

    /// Whether a file or stream could not be read.
    pub fn is_io(&self) -> bool {
        self.inner.kind == ErrorKind::Io
    }

    /// Whether an integer quantity overflowed.
    pub fn is_overflow(&self) -> bool {
        self.inner.kind == ErrorKind::Overflow
    }

    /// Whether the engine could not complete over a valid input.
    pub fn is_engine(&self) -> bool {
        self.inner.kind == ErrorKind::Engine
    }

    /// Every diagnostic: the errors, and warnings found on the way when the entry point
    /// reports them with its errors.
    pub fn diagnostics(&self) -> &Diagnostics {
        &self.inner.diagnostics
    }

    /// The diagnostics, owned.
    pub fn into_diagnostics(self) -> Diagnostics {
        self.inner.diagnostics
    }
}

impl From<Diagnostic> for Diagnostics {
    fn from(d: Diagnostic) -> Diagnostics {
        Diagnostics(vec![d])
    }
}

impl From<Vec<Diagnostic>> for Diagnostics {
    fn from(v: Vec<Diagnostic>) -> Diagnostics {
        Diagnostics(v)
    }
}

/// Diagnostics with an error are an invalid input unless a constructor says otherwise.
impl From<Diagnostics> for Error {
    fn from(d: Diagnostics) -> Error {
        Error::invalid_input(d)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.inner.kind)
            .field("diagnostics", &self.inner.diagnostics.0)
            .finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let errors = self.inner.diagnostics.errors().count();
        for d in self.inner.diagnostics.iter() {
            // show the errors; warnings only when there is no error at all
            if errors > 0 && !d.is_error(false) {
                continue;
            }
            if !first {
                f.write_str("\n")?;
            }
            first = false;
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::codes;

    #[test]
    fn kinds_are_told_by_predicates_only() {
        let d = || Diagnostic::error(codes::LIMIT_EXCEEDED, "too many");
        let all = [
            Error::invalid_input(d()),
            Error::limit(d()),
            Error::io(d()),
            Error::overflow(d()),
            Error::engine(d()),
        ];
        let preds: [fn(&Error) -> bool; 5] = [
            Error::is_invalid_input,
            Error::is_limit,
            Error::is_io,
            Error::is_overflow,
            Error::is_engine,
        ];
        for (i, e) in all.iter().enumerate() {
            for (j, p) in preds.iter().enumerate() {
                assert_eq!(p(e), i == j, "error {i}, predicate {j}");
            }
        }
    }

    #[test]
    fn display_lists_errors_before_warnings_are_shown() {
        let e = Error::from(Diagnostics(vec![
            Diagnostic::warning(codes::UNKNOWN_FIELD, "ignored").field("spec.x"),
            Diagnostic::error(codes::INVALID, "bad").object("Workload", "ns/a"),
            Diagnostic::error(codes::INVALID, "worse").object("Workload", "ns/b"),
        ]));
        assert!(e.is_invalid_input());
        assert_eq!(
            e.to_string(),
            "Workload \"ns/a\": bad\nWorkload \"ns/b\": worse"
        );
        assert_eq!(e.diagnostics().len(), 3);
        let w = Error::engine(Diagnostic::warning(codes::UNKNOWN_FIELD, "only").field("f"));
        assert_eq!(w.to_string(), "f: only");
    }
}
