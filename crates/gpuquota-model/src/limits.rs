//! The limits every engine and command applies to its input, in one place.
//!
//! Upstream Kueue and KAI set no depth limit on cohort or queue trees; gpuquota refuses trees
//! deeper than [`MAX_TREE_DEPTH`] so that every walk up a tree is bounded and no input can make
//! a command run for minutes. Real platforms use depths of 2 to 5.

/// The deepest cohort or queue tree accepted: a chain of this many levels above a
/// ClusterQueue or leaf queue (the root counts as one level).
pub const MAX_TREE_DEPTH: usize = 1000;

/// Diagnostic code for a tree deeper than [`MAX_TREE_DEPTH`].
pub const TREE_TOO_DEEP: crate::diag::Code = crate::diag::Code::new("tree-too-deep");

pub use crate::source::{MAX_INPUT_BYTES, MAX_STREAM_BYTES};
