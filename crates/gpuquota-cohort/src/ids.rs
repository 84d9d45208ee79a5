//! Typed dense indices of the engine and the tables they index.
//!
//! Every object kind the engine resolves has its own `u32`-backed index newtype (the shape
//! `regex-automata` and `regalloc2` use): [`ResourceId`], [`FlavorId`], [`FrId`] (a
//! flavor-resource pair), [`NodeId`] (a node of the quota forest), [`CqId`] (a ClusterQueue)
//! and [`WlId`] (a workload). A [`Table<I, T>`] holds one `T` per id of kind `I` and is
//! indexed by `I` only, so a value of one kind cannot index another kind's table by mistake:
//! `world.workloads[cq]` does not compile.
//!
//! ```
//! use gpuquota_cohort::ids::{CqId, Table, WlId};
//!
//! let mut t: Table<WlId, &str> = Table::new();
//! let a = t.push("team-a/job-1");
//! let b = t.push("team-a/job-2");
//! assert_eq!(t[b], "team-a/job-2");
//! assert_eq!(t.ids().collect::<Vec<_>>(), vec![a, b]);
//! assert_eq!(b.index(), 1);
//! assert_eq!(CqId::new(7).to_string(), "7");
//! ```

pub use gpuquota_model::ids::{Id, Table};

gpuquota_model::define_id!(
    /// A resource name of [`World::resources`](crate::World) (ids follow name order).
    pub ResourceId
);
gpuquota_model::define_id!(
    /// A flavor of [`World::flavors`](crate::World) (ids follow name order).
    pub FlavorId
);
gpuquota_model::define_id!(
    /// A (flavor, resource) pair of [`World::frs`](crate::World) (flavor, then resource
    /// name order).
    pub FrId
);
gpuquota_model::define_id!(
    /// A node (Cohort or ClusterQueue) of the quota forest
    /// ([`QuotaForest::nodes`](crate::tree::QuotaForest)).
    pub NodeId
);
gpuquota_model::define_id!(
    /// A ClusterQueue of [`World::cluster_queues`](crate::World) (name order).
    pub CqId
);
gpuquota_model::define_id!(
    /// A workload of [`World::workloads`](crate::World) (key order).
    pub WlId
);
gpuquota_model::define_id!(
    /// A scheduling-shape group of one ClusterQueue's pending queue.
    pub(crate) Slot
);
