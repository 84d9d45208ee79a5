//! Typed indices and per-resource amounts for the session engine.
//!
//! * [`define_id!`](gpuquota_model::define_id) makes a `u32`-backed index newtype (as `regex-automata` and `regalloc2`
//!   do): [`JobId`] into [`Cluster::jobs`](crate::Cluster), [`TaskId`] into a job's tasks,
//!   [`QueueId`] into the queue tree, [`NodeId`] into [`Cluster::nodes`](crate::Cluster).
//!   A value of one kind cannot index another kind's table by mistake: an [`IdVec`] is
//!   indexed only by its own kind ([`PerQueue`] for the queue tree's tables, such as
//!   [`Division::fair_share`](crate::Division); [`PerJob`] for the session's per-job
//!   tables).
//! * [`PerResource`] holds one value per [`Resource`] (GPU, CPU, memory), indexed by the
//!   resource; its checked arithmetic returns `None` on overflow, which the session reports
//!   as [`SessionError::Overflow`](crate::session::SessionError::Overflow) instead of
//!   wrapping.
//!
//! ```
//! use gpuquota_rank::ids::{PerResource, QueueId};
//! use gpuquota_rank::Resource;
//!
//! let a = PerResource::new(3, 2000, 0);
//! let b = PerResource::new(1, 500, 7);
//! let sum = a.checked_add(&b).expect("no overflow");
//! assert_eq!(sum[Resource::Cpu], 2500);
//! assert!(PerResource::new(i128::MAX, 0, 0).checked_add(&b).is_none());
//! let q = QueueId::new(4);
//! assert_eq!(q.index(), 4);
//!
//! use gpuquota_rank::ids::PerQueue;
//! let fair: PerQueue<PerResource<i128>> = vec![PerResource::ZERO, sum].into_iter().collect();
//! assert_eq!(fair[QueueId::new(1)][Resource::Gpu], 4);
//!
//! use gpuquota_rank::ids::{JobId, PerJob};
//! let mut evicted: PerJob<bool> = PerJob::filled(false, 3);
//! evicted[JobId::new(2)] = true;
//! assert_eq!(evicted.ids().filter(|&j| evicted[j]).collect::<Vec<_>>(), [JobId::new(2)]);
//! ```

use std::ops::{Index, IndexMut};

use crate::division::Resource;

pub use gpuquota_model::define_id;
pub use gpuquota_model::ids::{Id, Table as IdVec};

/// One entry per queue of the tree, in input order.
pub type PerQueue<T> = IdVec<QueueId, T>;

/// One entry per job of [`Cluster::jobs`](crate::Cluster), in input order.
pub type PerJob<T> = IdVec<JobId, T>;

define_id!(
    /// A job (PodGroup) of [`Cluster::jobs`](crate::Cluster).
    pub JobId
);
define_id!(
    /// A task (pod) within its job.
    pub TaskId
);
define_id!(
    /// A queue of the tree.
    pub QueueId
);
define_id!(
    /// A node of [`Cluster::nodes`](crate::Cluster).
    pub NodeId
);

/// One value per resource (GPU, CPU, memory), indexed by [`Resource`]. It orders as its
/// array does (GPU first), so it can key an ordered map.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Hash)]
pub struct PerResource<T>(pub [T; 3]);

impl<T> Index<Resource> for PerResource<T> {
    type Output = T;
    fn index(&self, r: Resource) -> &T {
        &self.0[r.index()]
    }
}

impl<T> IndexMut<Resource> for PerResource<T> {
    fn index_mut(&mut self, r: Resource) -> &mut T {
        &mut self.0[r.index()]
    }
}

impl<T> From<[T; 3]> for PerResource<T> {
    fn from(a: [T; 3]) -> Self {
        PerResource(a)
    }
}

impl<T: Copy> PerResource<T> {
    /// `f(r)` for every resource.
    pub fn from_fn(f: impl Fn(Resource) -> T) -> Self {
        PerResource(Resource::ALL.map(f))
    }

    /// True when `f` holds for every resource.
    pub fn all(&self, f: impl Fn(Resource, T) -> bool) -> bool {
        Resource::ALL.into_iter().all(|r| f(r, self[r]))
    }

    /// True when `f` holds for some resource.
    pub fn any(&self, f: impl Fn(Resource, T) -> bool) -> bool {
        Resource::ALL.into_iter().any(|r| f(r, self[r]))
    }
}

impl PerResource<i128> {
    /// Zero everywhere.
    pub const ZERO: PerResource<i128> = PerResource([0; 3]);

    /// GPU, CPU and memory amounts.
    pub const fn new(gpu: i128, cpu: i128, memory: i128) -> Self {
        PerResource([gpu, cpu, memory])
    }

    /// The sum, `None` on overflow in any resource.
    #[must_use]
    pub fn checked_add(&self, o: &Self) -> Option<Self> {
        Some(PerResource([
            self.0[0].checked_add(o.0[0])?,
            self.0[1].checked_add(o.0[1])?,
            self.0[2].checked_add(o.0[2])?,
        ]))
    }

    /// The sum, saturating at the bounds of `i128` in each resource (for reports of amounts
    /// a session has already checked).
    #[must_use]
    pub fn saturating_add(&self, o: &Self) -> Self {
        PerResource([
            self.0[0].saturating_add(o.0[0]),
            self.0[1].saturating_add(o.0[1]),
            self.0[2].saturating_add(o.0[2]),
        ])
    }

    /// The difference, saturating at the bounds of `i128` in each resource.
    #[must_use]
    pub fn saturating_sub(&self, o: &Self) -> Self {
        PerResource([
            self.0[0].saturating_sub(o.0[0]),
            self.0[1].saturating_sub(o.0[1]),
            self.0[2].saturating_sub(o.0[2]),
        ])
    }

    /// The difference, `None` on overflow in any resource.
    #[must_use]
    pub fn checked_sub(&self, o: &Self) -> Option<Self> {
        Some(PerResource([
            self.0[0].checked_sub(o.0[0])?,
            self.0[1].checked_sub(o.0[1])?,
            self.0[2].checked_sub(o.0[2])?,
        ]))
    }
}
