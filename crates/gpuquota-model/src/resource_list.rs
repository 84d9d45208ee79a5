//! [`ResourceList`]: a map of resource name to quantity (`requests`, `limits`,
//! `allocatable`, …) held as one sorted vector.
//!
//! A pod's resource list has a handful of entries; a `BTreeMap` leaf node holds room for
//! eleven (about 640 bytes even for one entry), so a snapshot of 55,000 Workloads spent
//! 35 MB on those nodes alone. This map keeps the entries sorted by name in a vector sized
//! to fit, with the part of `BTreeMap`'s interface the workspace uses, the same iteration
//! order (ascending name) and the same serde form (a map with its keys in ascending order;
//! a key given twice keeps the last value, as `BTreeMap` does).
//!
//! ```
//! # #[cfg(feature = "serde")] {
//! use gpuquota_model::core::ResourceList;
//! use gpuquota_model::{Quantity, ResourceName};
//!
//! let mut list = ResourceList::new();
//! list.insert(ResourceName::new("nvidia.com/gpu"), "2".parse()?);
//! list.insert(ResourceName::new("cpu"), "500m".parse()?);
//! assert_eq!(list.get("cpu").map(Quantity::to_string).as_deref(), Some("500m"));
//! let names: Vec<&str> = list.keys().map(ResourceName::as_str).collect();
//! assert_eq!(names, ["cpu", "nvidia.com/gpu"]);
//! assert_eq!(serde_json::to_string(&list)?, r#"{"cpu":"500m","nvidia.com/gpu":"2"}"#);
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::borrow::Borrow;
#[cfg(feature = "serde")]
use std::fmt;

#[cfg(feature = "serde")]
use serde::de::{MapAccess, Visitor};
#[cfg(feature = "serde")]
use serde::ser::SerializeMap;

use crate::quantity::Quantity;
use crate::resource::ResourceName;

/// A map of resource name to quantity, sorted by name (see the [module docs](self)).
///
/// Lookups are binary searches (`O(log n)`); an insertion of a new name shifts the entries
/// after it (`O(n)`, with `n` a handful).
#[derive(Debug, Clone, PartialEq, Eq, Default, PartialOrd, Ord)]
pub struct ResourceList(Vec<(ResourceName, Quantity)>);

impl ResourceList {
    /// An empty list.
    pub const fn new() -> ResourceList {
        ResourceList(Vec::new())
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True without entries.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn find<Q>(&self, name: &Q) -> Result<usize, usize>
    where
        ResourceName: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.0.binary_search_by(|(k, _)| k.borrow().cmp(name))
    }

    /// The quantity of `name`.
    pub fn get<Q>(&self, name: &Q) -> Option<&Quantity>
    where
        ResourceName: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(name).ok().map(|i| &self.0[i].1)
    }

    /// The quantity of `name`, mutably.
    pub fn get_mut<Q>(&mut self, name: &Q) -> Option<&mut Quantity>
    where
        ResourceName: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(name).ok().map(|i| &mut self.0[i].1)
    }

    /// The entry of `name` with its stored name.
    pub fn get_key_value<Q>(&self, name: &Q) -> Option<(&ResourceName, &Quantity)>
    where
        ResourceName: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(name).ok().map(|i| (&self.0[i].0, &self.0[i].1))
    }

    /// True when `name` has an entry.
    pub fn contains_key<Q>(&self, name: &Q) -> bool
    where
        ResourceName: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(name).is_ok()
    }

    /// Sets the quantity of `name`, returning the one it replaces.
    pub fn insert(&mut self, name: ResourceName, quantity: Quantity) -> Option<Quantity> {
        match self.find(name.as_str()) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, quantity)),
            Err(i) => {
                self.0.insert(i, (name, quantity));
                None
            }
        }
    }

    /// Removes the entry of `name`, returning its quantity.
    pub fn remove<Q>(&mut self, name: &Q) -> Option<Quantity>
    where
        ResourceName: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(name).ok().map(|i| self.0.remove(i).1)
    }

    /// Keeps the entries for which `keep` is true.
    pub fn retain(&mut self, mut keep: impl FnMut(&ResourceName, &mut Quantity) -> bool) {
        self.0.retain_mut(|(k, v)| keep(k, v));
    }

    /// Removes every entry.
    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// The entry of `name`, for in-place insertion or update.
    pub fn entry(&mut self, name: ResourceName) -> Entry<'_> {
        match self.find(name.as_str()) {
            Ok(index) => Entry::Occupied(OccupiedEntry { list: self, index }),
            Err(index) => Entry::Vacant(VacantEntry {
                list: self,
                index,
                name,
            }),
        }
    }

    /// The entries in ascending name order.
    pub fn iter(&self) -> Iter<'_> {
        Iter(self.0.iter())
    }

    /// The entries in ascending name order, quantities mutable.
    pub fn iter_mut(&mut self) -> IterMut<'_> {
        IterMut(self.0.iter_mut())
    }

    /// The names in ascending order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &ResourceName> + ExactSizeIterator {
        self.0.iter().map(|(k, _)| k)
    }

    /// The quantities in ascending name order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Quantity> + ExactSizeIterator {
        self.0.iter().map(|(_, v)| v)
    }

    /// The quantities in ascending name order, mutable.
    pub fn values_mut(
        &mut self,
    ) -> impl DoubleEndedIterator<Item = &mut Quantity> + ExactSizeIterator {
        self.0.iter_mut().map(|(_, v)| v)
    }

    /// The names in ascending order, consuming the list.
    pub fn into_keys(self) -> impl DoubleEndedIterator<Item = ResourceName> + ExactSizeIterator {
        self.0.into_iter().map(|(k, _)| k)
    }

    /// The quantities in ascending name order, consuming the list.
    pub fn into_values(self) -> impl DoubleEndedIterator<Item = Quantity> + ExactSizeIterator {
        self.0.into_iter().map(|(_, v)| v)
    }

    /// The first entry (smallest name).
    pub fn first_key_value(&self) -> Option<(&ResourceName, &Quantity)> {
        self.0.first().map(|(k, v)| (k, v))
    }

    /// The last entry (largest name).
    pub fn last_key_value(&self) -> Option<(&ResourceName, &Quantity)> {
        self.0.last().map(|(k, v)| (k, v))
    }

    /// Gives back spare capacity.
    pub fn shrink_to_fit(&mut self) {
        self.0.shrink_to_fit();
    }
}

/// An entry of a [`ResourceList`], from [`ResourceList::entry`].
pub enum Entry<'a> {
    /// The name has a quantity.
    Occupied(OccupiedEntry<'a>),
    /// The name has none.
    Vacant(VacantEntry<'a>),
}

/// An entry with a quantity.
pub struct OccupiedEntry<'a> {
    list: &'a mut ResourceList,
    index: usize,
}

/// An entry without a quantity.
pub struct VacantEntry<'a> {
    list: &'a mut ResourceList,
    index: usize,
    name: ResourceName,
}

impl<'a> OccupiedEntry<'a> {
    /// The quantity.
    pub fn get(&self) -> &Quantity {
        &self.list.0[self.index].1
    }

    /// The quantity, mutably.
    pub fn get_mut(&mut self) -> &mut Quantity {
        &mut self.list.0[self.index].1
    }

    /// The quantity, for the list's lifetime.
    pub fn into_mut(self) -> &'a mut Quantity {
        &mut self.list.0[self.index].1
    }

    /// Replaces the quantity, returning the old one.
    pub fn insert(&mut self, quantity: Quantity) -> Quantity {
        std::mem::replace(self.get_mut(), quantity)
    }

    /// The name.
    pub fn key(&self) -> &ResourceName {
        &self.list.0[self.index].0
    }

    /// Removes the entry, returning its quantity.
    pub fn remove(self) -> Quantity {
        self.list.0.remove(self.index).1
    }
}

impl<'a> VacantEntry<'a> {
    /// Inserts `quantity` for the entry's name.
    pub fn insert(self, quantity: Quantity) -> &'a mut Quantity {
        self.list.0.insert(self.index, (self.name, quantity));
        &mut self.list.0[self.index].1
    }

    /// The name.
    pub fn key(&self) -> &ResourceName {
        &self.name
    }
}

impl<'a> Entry<'a> {
    /// The quantity, inserting `default` first when there is none.
    pub fn or_insert(self, default: Quantity) -> &'a mut Quantity {
        self.or_insert_with(|| default)
    }

    /// The quantity, inserting `default()` first when there is none.
    pub fn or_insert_with(self, default: impl FnOnce() -> Quantity) -> &'a mut Quantity {
        match self {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => v.insert(default()),
        }
    }

    /// Applies `f` to the quantity when there is one.
    pub fn and_modify(mut self, f: impl FnOnce(&mut Quantity)) -> Self {
        if let Entry::Occupied(o) = &mut self {
            f(o.get_mut());
        }
        self
    }

    /// The name.
    pub fn key(&self) -> &ResourceName {
        match self {
            Entry::Occupied(o) => o.key(),
            Entry::Vacant(v) => v.key(),
        }
    }
}

/// The entries of a [`ResourceList`] in ascending name order.
#[derive(Debug, Clone)]
pub struct Iter<'a>(std::slice::Iter<'a, (ResourceName, Quantity)>);

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a ResourceName, &'a Quantity);

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (k, v))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|(k, v)| (k, v))
    }
}

impl ExactSizeIterator for Iter<'_> {}

/// The entries of a [`ResourceList`] in ascending name order, quantities mutable.
#[derive(Debug)]
pub struct IterMut<'a>(std::slice::IterMut<'a, (ResourceName, Quantity)>);

impl<'a> Iterator for IterMut<'a> {
    type Item = (&'a ResourceName, &'a mut Quantity);

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (&*k, v))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl DoubleEndedIterator for IterMut<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|(k, v)| (&*k, v))
    }
}

impl ExactSizeIterator for IterMut<'_> {}

impl<'a> IntoIterator for &'a ResourceList {
    type Item = (&'a ResourceName, &'a Quantity);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for &'a mut ResourceList {
    type Item = (&'a ResourceName, &'a mut Quantity);
    type IntoIter = IterMut<'a>;

    fn into_iter(self) -> IterMut<'a> {
        self.iter_mut()
    }
}

impl IntoIterator for ResourceList {
    type Item = (ResourceName, Quantity);
    type IntoIter = std::vec::IntoIter<(ResourceName, Quantity)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl FromIterator<(ResourceName, Quantity)> for ResourceList {
    /// The entries sorted by name; a name given twice keeps its last quantity.
    fn from_iter<I: IntoIterator<Item = (ResourceName, Quantity)>>(iter: I) -> Self {
        let mut entries: Vec<(ResourceName, Quantity)> = iter.into_iter().collect();
        // A stable sort keeps equal names in their given order; the last one wins.
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(ResourceName, Quantity)> = Vec::with_capacity(entries.len());
        for e in entries {
            match out.last_mut() {
                Some(last) if last.0 == e.0 => *last = e,
                _ => out.push(e),
            }
        }
        ResourceList(out)
    }
}

impl<const N: usize> From<[(ResourceName, Quantity); N]> for ResourceList {
    fn from(entries: [(ResourceName, Quantity); N]) -> Self {
        entries.into_iter().collect()
    }
}

impl Extend<(ResourceName, Quantity)> for ResourceList {
    fn extend<I: IntoIterator<Item = (ResourceName, Quantity)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl<Q> std::ops::Index<&Q> for ResourceList
where
    ResourceName: Borrow<Q>,
    Q: Ord + ?Sized,
{
    type Output = Quantity;

    /// The quantity of `name`.
    ///
    /// # Panics
    /// When `name` has no entry, as `BTreeMap`'s index does.
    #[allow(clippy::expect_used)]
    fn index(&self, name: &Q) -> &Quantity {
        self.get(name).expect("no entry found for key")
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for ResourceList {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for ResourceList {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ResourceList;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ResourceList, A::Error> {
                // Sized to the hint, but never more than a pod's list needs.
                let mut out = ResourceList(Vec::with_capacity(map.size_hint().unwrap_or(0).min(8)));
                while let Some((k, v)) = map.next_entry::<ResourceName, Quantity>()? {
                    // Written in order, as the maps of kubectl and serializers are: a push.
                    match out.0.last() {
                        Some((last, _)) if *last < k => out.0.push((k, v)),
                        None => out.0.push((k, v)),
                        _ => {
                            out.insert(k, v);
                        }
                    }
                }
                out.0.shrink_to_fit();
                Ok(out)
            }
        }
        d.deserialize_map(V)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    fn q(s: &str) -> Quantity {
        s.parse().unwrap()
    }

    #[test]
    fn reads_and_writes_like_a_btreemap() {
        let text = r#"{"nvidia.com/gpu": 2, "cpu": "500m", "memory": "1Gi", "cpu": "2"}"#;
        let list: ResourceList = serde_json::from_str(text).unwrap();
        let map: BTreeMap<ResourceName, Quantity> = serde_json::from_str(text).unwrap();
        assert_eq!(
            serde_json::to_string(&list).unwrap(),
            serde_json::to_string(&map).unwrap()
        );
        assert_eq!(list.get("cpu"), Some(&q("2")));
        assert_eq!(list["memory"], q("1Gi"));
        let err = serde_json::from_str::<ResourceList>("[1]").unwrap_err();
        let map_err = serde_json::from_str::<BTreeMap<ResourceName, Quantity>>("[1]").unwrap_err();
        assert_eq!(err.to_string(), map_err.to_string());
    }

    #[test]
    fn entries_update_in_place() {
        let mut list = ResourceList::new();
        *list.entry(ResourceName::new("cpu")).or_insert(q("1")) = q("3");
        list.entry(ResourceName::new("cpu")).or_insert(q("9"));
        list.entry(ResourceName::new("a")).or_insert_with(|| q("0"));
        assert_eq!(list.get("cpu"), Some(&q("3")));
        assert_eq!(list.remove("a"), Some(q("0")));
        assert_eq!(list.len(), 1);
    }

    proptest! {
        /// Any sequence of inserts and removes leaves the list equal, entry for entry and in
        /// order, to a `BTreeMap` given the same sequence (the oracle).
        #[test]
        fn behaves_as_a_btreemap(ops in prop::collection::vec((0u8..6, 0u32..100, any::<bool>()), 0..40)) {
            let mut list = ResourceList::new();
            let mut map = BTreeMap::new();
            for (name, amount, insert) in ops {
                let name = ResourceName::new(format!("r{name}"));
                if insert {
                    let amount = Quantity::from_integer(i64::from(amount));
                    prop_assert_eq!(list.insert(name.clone(), amount), map.insert(name, amount));
                } else {
                    prop_assert_eq!(list.remove(name.as_str()), map.remove(name.as_str()));
                }
            }
            let from_list: Vec<_> = list.iter().collect();
            let from_map: Vec<_> = map.iter().collect();
            prop_assert_eq!(from_list, from_map);
            let collected: ResourceList = map.clone().into_iter().collect();
            prop_assert_eq!(collected, list);
        }
    }
}
