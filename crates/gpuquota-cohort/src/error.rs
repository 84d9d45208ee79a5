//! Typed errors and warnings.

use std::fmt;

/// The stable diagnostic codes this engine emits (see [`gpuquota_model::diag`]).
pub mod codes {
    use gpuquota_model::diag::Code;

    /// The same preemptor preempted the same victim more than once in one run.
    pub const PREEMPTION_LOOP: Code = Code::new("preemption-loop");
    /// A cohort tree deeper than [`gpuquota_model::limits::MAX_TREE_DEPTH`].
    pub const TREE_TOO_DEEP: Code = gpuquota_model::limits::TREE_TOO_DEEP;
    /// Fair sharing is configured, but the classical engine runs (`kueue schedule` without
    /// `--fair-sharing`).
    pub const FAIR_SHARING_NOT_RUN: Code = Code::new("fair-sharing-not-run");
    /// A feature the engine does not model (admission checks, topology-aware scheduling, a
    /// Configuration field); it is ignored.
    pub const NOT_MODELLED: Code = Code::new("not-modelled");
    /// A cohort named but not defined: an implicit cohort without quota is used.
    pub const IMPLICIT_COHORT: Code = Code::new("implicit-cohort");
    /// A cohort on a parent cycle (only without the validator,
    /// [`gpuquota_model::validate::Validation::EngineOnly`]): the tree's ClusterQueues are inactive.
    pub const COHORT_CYCLE: Code = Code::new("cohort-cycle");
    /// A ClusterQueue is inactive (a flavor it names is missing).
    pub const INACTIVE_QUEUE: Code = Code::new("inactive-cluster-queue");
    /// Admitted workloads exceed a quota; they keep running.
    pub const OVER_ADMISSION: Code = Code::new("over-admission");
    /// A configuration Kueue's API server refuses but its scheduler runs (only without the
    /// validator, [`gpuquota_model::validate::Validation::EngineOnly`]); applied as Kueue's cache does.
    pub const API_SERVER_REJECTS: Code = Code::new("api-server-rejects");
}

/// One malformed object: the kind, the name, the field path and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, thiserror::Error)]
#[error("{kind} {name:?}: {field}: {message}")]
pub struct BuildProblem {
    /// Object kind (`ClusterQueue`, `Workload`, …), as the validator or the builder named it.
    pub kind: String,
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

impl BuildProblem {
    /// The problem as a [`gpuquota_model::diag::Diagnostic`] (severity error, engine `kueue`).
    pub fn diagnostic(&self) -> gpuquota_model::diag::Diagnostic {
        gpuquota_model::diag::Diagnostic::error(self.code, self.message.clone())
            .object(self.kind.clone(), self.name.clone())
            .field(self.field.clone())
            .engine("kueue")
    }
}

/// Every malformed object found while building a [`crate::World`]; nothing is built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct Error {
    /// The problems: the validator's in its order when it refused the input
    /// ([`crate::Input::from_model`]), otherwise the engine's own, sorted.
    pub problems: Vec<BuildProblem>,
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
    /// The stable code ([`codes`]); tools filter warnings by it, never by message text.
    /// Last, so that warnings still sort by kind, name and message.
    pub code: gpuquota_model::diag::Code,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {:?}: {}", self.kind, self.name, self.message)
    }
}
