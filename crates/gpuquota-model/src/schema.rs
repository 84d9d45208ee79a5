//! The field names of the model's types, read from their `Deserialize` implementations, for
//! "did you mean" hints on unknown fields.
//!
//! [`field_names`] drives a type's derived `Deserialize` with a probing deserializer that walks
//! down a field path (one entry per level) and records the `fields` list serde's derive passes
//! to `deserialize_struct` at the end of the path. The candidates are therefore always exactly
//! the fields the importer reads, without a hand-kept table that could drift.

use std::cell::RefCell;
use std::fmt;

#[cfg(feature = "serde")]
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// One step of a field path: a field (or map key) or a list element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A field name or map key.
    Field(String),
    /// A list element.
    Index,
}

/// The field names of the struct found at `path` inside `T`, or `None` when the path does
/// not lead to a struct (a map, a free-form value, a scalar).
///
/// # Complexity
/// `O(|path| + fields)`: one probing pass down the path.
pub fn field_names<'de, T: de::Deserialize<'de>>(path: &[Step]) -> Option<&'static [&'static str]> {
    let found = RefCell::new(None);
    let _ = T::deserialize(Probe {
        path,
        found: &found,
    });
    found.into_inner()
}

#[derive(Debug)]
struct Stop;

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("probe stopped")
    }
}

impl std::error::Error for Stop {}

impl de::Error for Stop {
    fn custom<M: fmt::Display>(_: M) -> Stop {
        Stop
    }
}

struct Probe<'p> {
    path: &'p [Step],
    found: &'p RefCell<Option<&'static [&'static str]>>,
}

impl<'de> Deserializer<'de> for Probe<'_> {
    type Error = Stop;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
        Err(Stop)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Stop> {
        if self.path.is_empty() {
            *self.found.borrow_mut() = Some(fields);
            return Err(Stop);
        }
        self.deserialize_map(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        match self.path.split_first() {
            Some((Step::Field(key), rest)) => visitor.visit_map(OneEntry {
                key: Some(key),
                rest,
                found: self.found,
            }),
            _ => Err(Stop),
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        match self.path.split_first() {
            Some((Step::Index, rest)) => visitor.visit_seq(OneElement {
                rest: Some(rest),
                found: self.found,
            }),
            _ => Err(Stop),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Stop> {
        visitor.visit_newtype_struct(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct tuple tuple_struct enum identifier ignored_any
    }
}

struct OneEntry<'p> {
    key: Option<&'p String>,
    rest: &'p [Step],
    found: &'p RefCell<Option<&'static [&'static str]>>,
}

impl<'de> MapAccess<'de> for OneEntry<'_> {
    type Error = Stop;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Stop> {
        match self.key.take() {
            Some(key) => seed
                .deserialize(de::value::StrDeserializer::<Stop>::new(key))
                .map(Some),
            None => Err(Stop),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Stop> {
        seed.deserialize(Probe {
            path: self.rest,
            found: self.found,
        })
    }
}

struct OneElement<'p> {
    rest: Option<&'p [Step]>,
    found: &'p RefCell<Option<&'static [&'static str]>>,
}

impl<'de> SeqAccess<'de> for OneElement<'_> {
    type Error = Stop;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Stop> {
        match self.rest.take() {
            Some(rest) => seed
                .deserialize(Probe {
                    path: rest,
                    found: self.found,
                })
                .map(Some),
            None => Err(Stop),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kueue::ClusterQueue;

    fn f(s: &str) -> Step {
        Step::Field(s.to_owned())
    }

    #[test]
    fn finds_nested_struct_fields() {
        let path = [
            f("spec"),
            f("resourceGroups"),
            Step::Index,
            f("flavors"),
            Step::Index,
            f("resources"),
            Step::Index,
        ];
        let names = field_names::<ClusterQueue>(&path).unwrap();
        assert!(names.contains(&"nominalQuota"), "{names:?}");
        assert!(names.contains(&"lendingLimit"));
        let top = field_names::<ClusterQueue>(&[]).unwrap();
        assert_eq!(top, ["metadata", "spec", "status"]);
        // A map of free-form values has no field list.
        assert_eq!(
            field_names::<ClusterQueue>(&[f("metadata"), f("labels")]),
            None
        );
    }
}
