//! The engine's uniform entry point: an [`Input`], then [`run`].
//!
//! Metering reads no Kubernetes objects: its input is allocation records, sampled series,
//! DCGM scrapes and the card types, departments and prices they are charged at. So the shape
//! is [`Input::from_document`] (a metering [`Document`] and its DCGM files) or
//! [`Input::new`] with the [`Options`] (then the public fields filled as plain Rust values),
//! in place of the other engines' `Input::from_model(&model, &options)`; then [`run`].
//!
//! `run` is fallible: an [`Input`] is plain data with public fields, so the records are
//! checked against the declared card types, departments and services, and the window, as
//! they are metered, and exact sums of card-time and money can overflow. Every problem is
//! one [`Error`] carrying the diagnostics, each naming the record and field.
//!
//! ```
//! use gpuquota_metering::{Document, Input, run};
//!
//! let doc = Document::from_yaml(r#"
//! window: {start: 0, end: 3600}
//! currency: EUR
//! cardTypes: [{name: H100, model: NVIDIA H100 80GB HBM3, pricePerHour: "2.00", capacity: 1}]
//! departments: [{name: A, namespaces: [a]}]
//! records: [{department: A, cardType: H100, gpus: 1, start: 0, end: 1800}]
//! "#)?;
//! let report = run(&Input::from_document(&doc, &[])?)?;
//! assert_eq!(report.to_output().lines[0].cost, "1.00");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use gpuquota_model::Error;
use gpuquota_model::diag::{Diagnostic, codes};

use crate::MeteringError;
use crate::engine::Input;
use crate::input::Document;
use crate::report::Report;

/// The engine name every metering diagnostic carries.
const ENGINE: &str = "metering";

/// The report-wide settings (window, currency, rounding, basis, ...): what [`Input::new`]
/// starts from and [`run`] applies; kept in [`Input::config`].
pub use crate::engine::Config as Options;

impl Input {
    /// Converts a metering document into an input; `dcgm_files` holds the name and text of
    /// each file listed in `dcgm:`, in the same order ([`Document::into_input`]).
    ///
    /// # Errors
    /// [`Error::is_invalid_input`] naming the record and field, [`Error::is_io`] for a DCGM
    /// file that cannot be read.
    pub fn from_document(doc: &Document, dcgm_files: &[(String, String)]) -> Result<Input, Error> {
        doc.into_input(dcgm_files).map_err(Error::from)
    }
}

/// Meters `input`: GPU-hours per department and card type, borrowed hours, idle capacity
/// and the bill in integer minor units.
///
/// # Errors
/// Fallible at run time (see the [module docs](self)): a record naming an undeclared card
/// type, department or service, or outside the window, is [`Error::is_invalid_input`]; a
/// sum beyond exact arithmetic is [`Error::is_overflow`].
///
/// # Complexity
/// O(n log n + E·G) for n records/holds, E distinct change instants per card type and G
/// department groups; grid series cost O(points) (summed on a dense grid first).
pub fn run(input: &Input) -> Result<Report, Error> {
    crate::engine::meter(input).map_err(Error::from)
}

fn diagnostics(e: &MeteringError, out: &mut Vec<Diagnostic>) {
    match e {
        MeteringError::Several(all) => {
            for e in all {
                diagnostics(e, out);
            }
        }
        MeteringError::Read(d) => out.push(d.clone()),
        MeteringError::Parse(_) => {
            out.push(Diagnostic::error(codes::MALFORMED, e.to_string()).engine(ENGINE));
        }
        MeteringError::Overflow(_) => {
            out.push(Diagnostic::error(codes::OVERFLOW, e.to_string()).engine(ENGINE));
        }
        _ => out.push(Diagnostic::error(codes::INVALID, e.to_string()).engine(ENGINE)),
    }
}

/// Whether every problem of `e` is one kind (`Read`, `Overflow`).
fn all(e: &MeteringError, kind: &dyn Fn(&MeteringError) -> bool) -> bool {
    match e {
        MeteringError::Several(v) => !v.is_empty() && v.iter().all(|e| all(e, kind)),
        e => kind(e),
    }
}

impl From<MeteringError> for Error {
    /// Each problem as a diagnostic; an unreadable file is I/O, an overflow is overflow
    /// (when every problem is one), everything else invalid input.
    fn from(e: MeteringError) -> Error {
        let mut out = Vec::new();
        diagnostics(&e, &mut out);
        if all(&e, &|e| matches!(e, MeteringError::Read(_))) {
            Error::io(out)
        } else if all(&e, &|e| matches!(e, MeteringError::Overflow(_))) {
            Error::overflow(out)
        } else {
            Error::invalid_input(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_follow_the_variants() {
        let read =
            MeteringError::Read(Diagnostic::error(codes::READ_FAILED, "gone").source("a.prom"));
        let e = Error::from(read);
        assert!(e.is_io());
        assert_eq!(e.to_string(), "a.prom: gone");

        let e = Error::from(MeteringError::Several(vec![
            MeteringError::Overflow("records[0]".into()),
            MeteringError::Overflow("records[1]".into()),
        ]));
        assert!(e.is_overflow());
        assert_eq!(e.diagnostics().len(), 2);
        assert_eq!(
            e.to_string(),
            "records[0]: arithmetic overflow\nrecords[1]: arithmetic overflow"
        );

        let e = Error::from(MeteringError::Several(vec![
            MeteringError::Overflow("records[0]".into()),
            MeteringError::ZeroCount("records[1]".into()),
        ]));
        assert!(e.is_invalid_input());
        assert_eq!(e.diagnostics().0[1].code, codes::INVALID);
        assert_eq!(
            e.diagnostics().0[1].message,
            "records[1]: the count must be at least 1"
        );
    }
}
