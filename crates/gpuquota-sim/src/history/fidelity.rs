//! Fidelity: how far a replay is from what the cluster recorded.
