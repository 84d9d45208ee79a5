//! The typed errors of every public entry point.

use thiserror::Error;

/// Everything that can go wrong in this crate. Each variant names the object and field at fault.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FairShareError {
    /// A quantity that must not be negative is negative.
    #[error("{object}: {field}: must not be negative (got {value})")]
    Negative {
        /// The object (e.g. `ClusterQueue "cq"`).
        object: String,
        /// The field path.
        field: String,
        /// The offending value as written.
        value: String,
    },
    /// A `fairSharing.weight` Kueue's webhook rejects (negative, or in `(0, 1e-9]`).
    #[error("{object}: spec.fairSharing.weight: {message} (got {value})")]
    InvalidWeight {
        /// The object.
        object: String,
        /// The weight as written.
        value: String,
        /// Why it is rejected.
        message: String,
    },
    /// Two objects of one kind share a name.
    #[error("{kind} \"{name}\": defined twice")]
    Duplicate {
        /// `ClusterQueue`, `Cohort`, `head`, `queue`, `user`, …
        kind: String,
        /// The repeated name.
        name: String,
    },
    /// A reference to an object that does not exist.
    #[error("{object}: {field}: unknown {kind} \"{name}\"")]
    UnknownReference {
        /// The referring object.
        object: String,
        /// The referring field.
        field: String,
        /// The kind referred to.
        kind: String,
        /// The missing name.
        name: String,
    },
    /// The input fails the workspace's one validator
    /// ([`gpuquota_model::validate::check_kinds`] on the Kueue kinds): its error
    /// diagnostics, exactly as `gpuquota validate` reports them.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Validation(gpuquota_model::Diagnostics),
    /// The cohort parent chain loops.
    #[error(
        "Cohort \"{cohort}\": spec.parentName: the cohort hierarchy has a cycle through this cohort"
    )]
    CohortCycle {
        /// A cohort on the cycle.
        cohort: String,
    },
    /// The cohort tree is deeper than [`gpuquota_model::limits::MAX_TREE_DEPTH`] levels
    /// (code [`gpuquota_model::limits::TREE_TOO_DEEP`]); upstream Kueue sets no limit.
    #[error(
        "Cohort \"{cohort}\": spec.parentName: the cohort tree is deeper than {} levels (the limit every gpuquota engine applies; real platforms use 2 to 5)",
        gpuquota_model::limits::MAX_TREE_DEPTH
    )]
    TreeTooDeep {
        /// The first cohort below the limit (at depth limit + 1).
        cohort: String,
    },
    /// An integer computation does not fit the integer type.
    #[error("{context}: arithmetic overflow")]
    Overflow {
        /// What was being computed.
        context: String,
    },
    /// The guarantees (floors) together exceed the capacity.
    #[error("{context}: the floors add up to {floors}, more than the capacity {capacity}")]
    FloorsExceedCapacity {
        /// Where (root or node name).
        context: String,
        /// Σ effective floors.
        floors: i128,
        /// The capacity.
        capacity: i128,
    },
    /// A parameter outside its allowed range.
    #[error("{object}: {field}: {message}")]
    Invalid {
        /// The object.
        object: String,
        /// The field path.
        field: String,
        /// What is wrong.
        message: String,
    },
}

impl FairShareError {
    /// The stable diagnostic code of the error.
    pub fn code(&self) -> gpuquota_model::diag::Code {
        match self {
            FairShareError::TreeTooDeep { .. } => gpuquota_model::limits::TREE_TOO_DEEP,
            _ => gpuquota_model::diag::codes::INVALID,
        }
    }

    pub(crate) fn invalid(
        object: impl Into<String>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        FairShareError::Invalid {
            object: object.into(),
            field: field.into(),
            message: message.into(),
        }
    }

    pub(crate) fn overflow(context: impl Into<String>) -> Self {
        FairShareError::Overflow {
            context: context.into(),
        }
    }
}

impl From<FairShareError> for gpuquota_model::Error {
    /// The crate's edge: the validator's diagnostics as they are, any other problem as one
    /// diagnostic with [`FairShareError::code`]. The kind follows the variant: a tree too
    /// deep is a limit, an overflow is overflow, everything else invalid input.
    fn from(e: FairShareError) -> gpuquota_model::Error {
        use gpuquota_model::Error;
        let one = |e: &FairShareError| gpuquota_model::Diagnostic::error(e.code(), e.to_string());
        match e {
            FairShareError::Validation(d) => Error::invalid_input(d),
            FairShareError::TreeTooDeep { .. } => Error::limit(one(&e)),
            FairShareError::Overflow { .. } => Error::overflow(gpuquota_model::Diagnostic::error(
                gpuquota_model::diag::codes::OVERFLOW,
                e.to_string(),
            )),
            _ => Error::invalid_input(one(&e)),
        }
    }
}

/// Several independent configuration problems, reported together.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
pub struct ConfigErrors(pub Vec<FairShareError>);

#[cfg(test)]
mod edge_tests {
    use super::FairShareError;

    #[test]
    fn the_kind_follows_the_variant() {
        let deep = gpuquota_model::Error::from(FairShareError::TreeTooDeep { cohort: "c".into() });
        assert!(deep.is_limit());
        assert_eq!(
            deep.diagnostics().0[0].code,
            gpuquota_model::limits::TREE_TOO_DEEP
        );
        let overflow = gpuquota_model::Error::from(FairShareError::overflow("drs"));
        assert!(overflow.is_overflow());
        assert_eq!(overflow.to_string(), "drs: arithmetic overflow");
        let dup = gpuquota_model::Error::from(FairShareError::Duplicate {
            kind: "ClusterQueue".into(),
            name: "a".into(),
        });
        assert!(dup.is_invalid_input());
        assert_eq!(dup.to_string(), "ClusterQueue \"a\": defined twice");
    }
}
