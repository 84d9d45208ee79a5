//! Typed indices and per-resource amounts for the session engine.
//!
//! * [`define_id!`](crate::define_id) makes a `u32`-backed index newtype (as `regex-automata` and `regalloc2`
//!   do): [`JobId`] into [`Cluster::jobs`](crate::Cluster), [`TaskId`] into a job's tasks,
//!   [`QueueId`] into the queue tree, [`NodeId`] into [`Cluster::nodes`](crate::Cluster).
//!   A value of one kind cannot index another kind's table by mistake: an [`IdVec`] is
//!   indexed only by its own kind ([`PerQueue`] for the queue tree's tables, such as
//!   [`Division::fair_share`](crate::Division)).
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
//! ```

use std::marker::PhantomData;
use std::ops::{Index, IndexMut};

use crate::division::Resource;

/// Defines a `u32`-backed index newtype with `new`, `index` and `Display`.
#[macro_export]
macro_rules! define_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(u32);

        impl $name {
            /// The id of position `i`. Tables are bounded by the input limits, far below
            /// `u32::MAX`; a larger position saturates (and then indexes out of range, which
            /// the table reports, instead of aliasing another entry).
            pub fn new(i: usize) -> $name {
                $name(u32::try_from(i).unwrap_or(u32::MAX))
            }

            /// The position in its table.
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl $crate::ids::Id for $name {
            fn new(i: usize) -> $name {
                $name::new(i)
            }

            fn index(self) -> usize {
                $name::index(self)
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

/// An index newtype made by [`define_id!`](crate::define_id): what an [`IdVec`] is indexed by.
pub trait Id: Copy {
    /// The id of position `i`.
    fn new(i: usize) -> Self;
    /// The position in its table.
    fn index(self) -> usize;
}

/// A table with one entry per id of kind `I`, indexed only by `I` (so a [`JobId`] cannot
/// index a table of queues).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdVec<I, T> {
    items: Vec<T>,
    id: PhantomData<fn(I) -> I>,
}

/// One entry per queue of the tree, in input order.
pub type PerQueue<T> = IdVec<QueueId, T>;

impl<I, T> Default for IdVec<I, T> {
    fn default() -> Self {
        IdVec::from_vec(Vec::new())
    }
}

impl<I, T> IdVec<I, T> {
    /// The table whose entry `I::new(i)` is `items[i]`.
    pub fn from_vec(items: Vec<T>) -> Self {
        IdVec {
            items,
            id: PhantomData,
        }
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True without entries.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The entries in id order.
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.items.iter()
    }

    /// The entries in id order, as a slice (positions are the ids' indices).
    pub fn as_slice(&self) -> &[T] {
        &self.items
    }

    /// The entries, as a vector (positions are the ids' indices).
    pub fn into_vec(self) -> Vec<T> {
        self.items
    }
}

impl<I: Id, T> IdVec<I, T> {
    /// `(id, entry)` in id order.
    pub fn iter_enumerated(&self) -> impl Iterator<Item = (I, &T)> {
        self.items.iter().enumerate().map(|(i, t)| (I::new(i), t))
    }

    /// Every id of the table, in order.
    pub fn ids(&self) -> impl Iterator<Item = I> + use<I, T> {
        (0..self.items.len()).map(I::new)
    }

    /// The entry of `id`, `None` outside the table.
    pub fn get(&self, id: I) -> Option<&T> {
        self.items.get(id.index())
    }
}

impl<I: Id, T> Index<I> for IdVec<I, T> {
    type Output = T;
    fn index(&self, id: I) -> &T {
        &self.items[id.index()]
    }
}

impl<I: Id, T> IndexMut<I> for IdVec<I, T> {
    fn index_mut(&mut self, id: I) -> &mut T {
        &mut self.items[id.index()]
    }
}

impl<I, T> FromIterator<T> for IdVec<I, T> {
    fn from_iter<It: IntoIterator<Item = T>>(it: It) -> Self {
        IdVec::from_vec(it.into_iter().collect())
    }
}

impl<'a, I, T> IntoIterator for &'a IdVec<I, T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

define_id!(
    /// A job (PodGroup) of [`Cluster::jobs`](crate::Cluster).
    JobId
);
define_id!(
    /// A task (pod) within its job.
    TaskId
);
define_id!(
    /// A queue of the tree.
    QueueId
);
define_id!(
    /// A node of [`Cluster::nodes`](crate::Cluster).
    NodeId
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
