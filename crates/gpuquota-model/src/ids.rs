//! Typed dense indices and the tables they index, shared by the engines.
//!
//! [`define_id!`](crate::define_id) makes a `u32`-backed index newtype (the shape
//! `regex-automata` and `regalloc2` use) that implements [`Id`]; a [`Table<I, T>`] holds one
//! `T` per id of kind `I` and is indexed by `I` only, so a value of one kind cannot index
//! another kind's table by mistake. The Kueue engine (`gpuquota-cohort`) and the KAI engine
//! (`gpuquota-rank`) define their own id kinds with it.
//!
//! ```
//! use gpuquota_model::ids::{Id, Table};
//!
//! gpuquota_model::define_id!(
//!     /// A job of a table of jobs.
//!     pub JobId
//! );
//! let mut t: Table<JobId, &str> = Table::new();
//! let a = t.push("team-a/job-1");
//! let b = t.push("team-a/job-2");
//! assert_eq!(t[b], "team-a/job-2");
//! assert_eq!(t.ids().collect::<Vec<_>>(), vec![a, b]);
//! assert_eq!(b.index(), 1);
//! assert_eq!(JobId::new(7).to_string(), "7");
//! ```

use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut, Index, IndexMut};

/// A dense index kind: `new(i)` is the id of position `i`, `index()` gives it back.
pub trait Id: Copy + Ord + fmt::Debug {
    /// The id of position `i`.
    fn new(i: usize) -> Self;
    /// The position in its table.
    fn index(self) -> usize;
}

/// Defines a `u32`-backed index newtype with `new`, `index`, `Display` and [`Id`].
#[macro_export]
macro_rules! define_id {
    ($(#[$meta:meta])* $vis:vis $name:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        $vis struct $name(u32);

        impl $name {
            /// The id of position `i`. Tables are bounded by the input limits, far below
            /// `u32::MAX`; a larger position saturates (and then indexes out of range, which
            /// the table reports, instead of aliasing another entry).
            #[inline]
            $vis fn new(i: usize) -> $name {
                $name(u32::try_from(i).unwrap_or(u32::MAX))
            }

            /// The position in its table.
            #[inline]
            $vis fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl $crate::ids::Id for $name {
            #[inline]
            fn new(i: usize) -> $name {
                $name::new(i)
            }
            #[inline]
            fn index(self) -> usize {
                $name::index(self)
            }
        }

        impl From<$name> for u32 {
            #[inline]
            fn from(id: $name) -> u32 {
                id.0
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

/// A vector indexed by one id kind: `Table<WlId, T>` holds one `T` per workload.
///
/// It dereferences to the slice of its values (for `len`, `iter` and the other read-only
/// slice methods); indexing takes the id, so the table of one kind cannot be read with
/// another kind's id.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Table<I, T> {
    items: Vec<T>,
    _id: PhantomData<fn(I) -> I>,
}

impl<I, T: fmt::Debug> fmt::Debug for Table<I, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.items.fmt(f)
    }
}

impl<I, T> Default for Table<I, T> {
    fn default() -> Self {
        Table::from_vec(Vec::new())
    }
}

impl<I, T> Table<I, T> {
    /// An empty table.
    pub fn new() -> Self {
        Table::from_vec(Vec::new())
    }

    /// The table whose entry of id `i` is `items[i]`.
    pub fn from_vec(items: Vec<T>) -> Self {
        Table {
            items,
            _id: PhantomData,
        }
    }

    /// The values in id order, as a slice (positions are the ids' indices).
    pub fn as_slice(&self) -> &[T] {
        &self.items
    }

    /// The values in id order.
    pub fn into_vec(self) -> Vec<T> {
        self.items
    }
}

impl<I: Id, T> Table<I, T> {
    /// `n` copies of `value`.
    pub fn filled(value: T, n: usize) -> Self
    where
        T: Clone,
    {
        Table::from_vec(vec![value; n])
    }

    /// Appends `value` and returns its id.
    pub fn push(&mut self, value: T) -> I {
        let id = I::new(self.items.len());
        self.items.push(value);
        id
    }

    /// The entry of `id`, if the table has one.
    #[inline]
    pub fn get(&self, id: I) -> Option<&T> {
        self.items.get(id.index())
    }

    /// The entry of `id` to change, if the table has one.
    #[inline]
    pub fn get_mut(&mut self, id: I) -> Option<&mut T> {
        self.items.get_mut(id.index())
    }

    /// Every id of the table, in order.
    pub fn ids(&self) -> impl DoubleEndedIterator<Item = I> + ExactSizeIterator + use<I, T> {
        (0..self.items.len()).map(I::new)
    }

    /// `(id, value)` pairs in id order.
    pub fn iter_enumerated(&self) -> impl DoubleEndedIterator<Item = (I, &T)> + '_ {
        self.items.iter().enumerate().map(|(i, t)| (I::new(i), t))
    }

    /// `(id, value)` pairs in id order, values mutable.
    pub fn iter_enumerated_mut(&mut self) -> impl Iterator<Item = (I, &mut T)> + '_ {
        self.items
            .iter_mut()
            .enumerate()
            .map(|(i, t)| (I::new(i), t))
    }
}

impl<I, T> Deref for Table<I, T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        &self.items
    }
}

impl<I, T> DerefMut for Table<I, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.items
    }
}

impl<I: Id, T> Index<I> for Table<I, T> {
    type Output = T;
    #[inline]
    fn index(&self, id: I) -> &T {
        &self.items[id.index()]
    }
}

impl<I: Id, T> IndexMut<I> for Table<I, T> {
    #[inline]
    fn index_mut(&mut self, id: I) -> &mut T {
        &mut self.items[id.index()]
    }
}

impl<I, T> FromIterator<T> for Table<I, T> {
    fn from_iter<It: IntoIterator<Item = T>>(iter: It) -> Self {
        Table::from_vec(iter.into_iter().collect())
    }
}

impl<'a, I, T> IntoIterator for &'a Table<I, T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl<'a, I, T> IntoIterator for &'a mut Table<I, T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter_mut()
    }
}

impl<I, T> IntoIterator for Table<I, T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

impl<I, T> Extend<T> for Table<I, T> {
    fn extend<It: IntoIterator<Item = T>>(&mut self, iter: It) {
        self.items.extend(iter);
    }
}
