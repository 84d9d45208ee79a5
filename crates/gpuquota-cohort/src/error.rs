//! Typed errors and warnings.

use std::fmt;

/// The stable diagnostic codes this engine emits (see [`gpuquota_model::diag`]).
pub mod codes {
    use gpuquota_model::diag::Code;

    /// The same preemptor preempted the same victim more than once in one run.
    pub const PREEMPTION_LOOP: Code = Code::new("preemption-loop");
    /// A cohort tree deeper than [`gpuquota_model::limits::MAX_TREE_DEPTH`].
    pub const TREE_TOO_DEEP: Code = gpuquota_model::limits::TREE_TOO_DEEP;
}

/// One malformed object: the kind, the name, the field path and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, thiserror::Error)]
#[error("{kind} {name:?}: {field}: {message}")]
pub struct Problem {
    /// Object kind (`ClusterQueue`, `Workload`, …).
    pub kind: &'static str,
    /// Object name (`namespace/name` for namespaced kinds).
    pub name: String,
    /// Field path, e.g. `spec.resourceGroups[0].flavors[1].resources[0].nominalQuota`.
    pub field: String,
    /// What is wrong.
    pub message: String,
    /// The stable diagnostic code (`invalid` for field errors the API server would report,
    /// [`codes::TREE_TOO_DEEP`] for the depth limit).
    pub code: gpuquota_model::diag::Code,
}

impl Problem {
    /// The problem as a [`gpuquota_model::diag::Diagnostic`] (severity error, engine `kueue`).
    pub fn diagnostic(&self) -> gpuquota_model::diag::Diagnostic {
        gpuquota_model::diag::Diagnostic::error(self.code, self.message.clone())
            .object(self.kind, self.name.clone())
            .field(self.field.clone())
            .engine("kueue")
    }
}

/// Every malformed object found while building a [`crate::World`]; nothing is built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct Error {
    /// The problems, sorted.
    pub problems: Vec<Problem>,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} malformed object(s)", self.problems.len())?;
        for p in &self.problems {
            write!(f, "\n  {p}")?;
        }
        Ok(())
    }
}

/// A live-cluster state Kueue tolerates (inactive queue, missing LocalQueue, implicit cohort,
/// over-admission, …), reported on the side.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Warning {
    /// Object kind.
    pub kind: &'static str,
    /// Object name.
    pub name: String,
    /// What Kueue does about it.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {:?}: {}", self.kind, self.name, self.message)
    }
}
