//! The parsed form of one input document: a tree whose mappings keep the keys in the order
//! the file writes them, whatever features the embedder's `serde_json` has.
//!
//! The typed readers go through this tree, never through `serde_json::Value`: a
//! `serde_json::Map` sorts its keys unless `serde_json/preserve_order` is on somewhere in the
//! build graph, and the order of `mig-configs`, of a config's `mig-devices` and of a
//! ConfigMap's `data` keys shows in results (the problems of [`crate::validate_config`] come
//! in config order; among ConfigMap keys the last config defining a name wins). A repeated key
//! keeps its first position and its last value, as `serde_json` does with `preserve_order`.
//!
//! As a [`Deserializer`] the tree behaves like `serde_json::Value` does (numbers, `null` for
//! `Option`, enums as a string or a single-key mapping) and fails with `serde_json::Error`, so
//! the readers' messages are the ones they had.

use indexmap::IndexMap;
use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, MapAccess, SeqAccess,
    Unexpected, VariantAccess, Visitor,
};
// serde_json's error type: its messages for type errors are the ones the readers had when
// they went through `serde_json::Value` (`null`, floats in their shortest form).
use serde_json::Error;

/// One value of a document.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tree {
    /// `null`, `~`, an empty value, or a number that is not finite.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A non-negative integer.
    Unsigned(u64),
    /// A negative integer.
    Negative(i64),
    /// A finite float.
    Float(f64),
    /// A string.
    Str(String),
    /// A sequence.
    Seq(Vec<Tree>),
    /// A mapping, keys in document order.
    Map(IndexMap<String, Tree>),
}

impl Tree {
    /// The value of `key` in a mapping (`None` for a missing key or a value that is not a
    /// mapping).
    pub(crate) fn get(&self, key: &str) -> Option<&Tree> {
        self.as_map().and_then(|m| m.get(key))
    }

    /// The string, if this is one.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Tree::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The mapping, if this is one.
    pub(crate) fn as_map(&self) -> Option<&IndexMap<String, Tree>> {
        match self {
            Tree::Map(m) => Some(m),
            _ => None,
        }
    }

    fn unexpected(&self) -> Unexpected<'_> {
        match self {
            Tree::Null => Unexpected::Unit,
            Tree::Bool(b) => Unexpected::Bool(*b),
            Tree::Unsigned(n) => Unexpected::Unsigned(*n),
            Tree::Negative(n) => Unexpected::Signed(*n),
            Tree::Float(x) => Unexpected::Float(*x),
            Tree::Str(s) => Unexpected::Str(s),
            Tree::Seq(_) => Unexpected::Seq,
            Tree::Map(_) => Unexpected::Map,
        }
    }
}

impl<'de> de::Deserialize<'de> for Tree {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Tree, D::Error> {
        d.deserialize_any(TreeVisitor)
    }
}

struct TreeVisitor;

impl<'de> Visitor<'de> for TreeVisitor {
    type Value = Tree;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any valid YAML or JSON value")
    }

    fn visit_bool<E>(self, b: bool) -> Result<Tree, E> {
        Ok(Tree::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Tree, E> {
        Ok(u64::try_from(n).map_or(Tree::Negative(n), Tree::Unsigned))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Tree, E> {
        Ok(Tree::Unsigned(n))
    }

    fn visit_i128<E: de::Error>(self, n: i128) -> Result<Tree, E> {
        match (u64::try_from(n), i64::try_from(n)) {
            (Ok(u), _) => Ok(Tree::Unsigned(u)),
            (_, Ok(i)) => Ok(Tree::Negative(i)),
            _ => Err(E::custom("JSON number out of range")),
        }
    }

    fn visit_u128<E: de::Error>(self, n: u128) -> Result<Tree, E> {
        u64::try_from(n)
            .map(Tree::Unsigned)
            .map_err(|_| E::custom("JSON number out of range"))
    }

    fn visit_f64<E>(self, x: f64) -> Result<Tree, E> {
        Ok(if x.is_finite() {
            Tree::Float(x)
        } else {
            Tree::Null
        })
    }

    fn visit_str<E>(self, s: &str) -> Result<Tree, E> {
        Ok(Tree::Str(s.to_owned()))
    }

    fn visit_string<E>(self, s: String) -> Result<Tree, E> {
        Ok(Tree::Str(s))
    }

    fn visit_none<E>(self) -> Result<Tree, E> {
        Ok(Tree::Null)
    }

    fn visit_unit<E>(self) -> Result<Tree, E> {
        Ok(Tree::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Tree, D::Error> {
        de::Deserialize::deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tree, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4_096));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Tree::Seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tree, A::Error> {
        let mut out = IndexMap::new();
        while let Some((k, v)) = map.next_entry::<String, Tree>()? {
            // A repeated key: first position, last value.
            out.insert(k, v);
        }
        Ok(Tree::Map(out))
    }
}

impl<'de> IntoDeserializer<'de, Error> for Tree {
    type Deserializer = Tree;

    fn into_deserializer(self) -> Tree {
        self
    }
}

/// The elements of a sequence, for [`SeqAccess`].
struct Items(std::vec::IntoIter<Tree>);

impl<'de> SeqAccess<'de> for Items {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.0.next().map(|v| seed.deserialize(v)).transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

/// The entries of a mapping, for [`MapAccess`].
struct Entries {
    iter: indexmap::map::IntoIter<String, Tree>,
    value: Option<Tree>,
}

impl<'de> MapAccess<'de> for Entries {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        match self.iter.next() {
            Some((k, v)) => {
                self.value = Some(v);
                seed.deserialize(k.into_deserializer()).map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        match self.value.take() {
            Some(v) => seed.deserialize(v),
            None => Err(de::Error::custom("value is missing")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

fn visit_seq<'de, V: Visitor<'de>>(items: Vec<Tree>, visitor: V) -> Result<V::Value, Error> {
    let len = items.len();
    let mut access = Items(items.into_iter());
    let out = visitor.visit_seq(&mut access)?;
    if access.0.len() == 0 {
        Ok(out)
    } else {
        Err(de::Error::invalid_length(len, &"fewer elements in array"))
    }
}

fn visit_map<'de, V: Visitor<'de>>(
    map: IndexMap<String, Tree>,
    visitor: V,
) -> Result<V::Value, Error> {
    let len = map.len();
    let mut access = Entries {
        iter: map.into_iter(),
        value: None,
    };
    let out = visitor.visit_map(&mut access)?;
    if access.iter.len() == 0 {
        Ok(out)
    } else {
        Err(de::Error::invalid_length(len, &"fewer elements in map"))
    }
}

impl<'de> Deserializer<'de> for Tree {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            Tree::Null => visitor.visit_unit(),
            Tree::Bool(b) => visitor.visit_bool(b),
            Tree::Unsigned(n) => visitor.visit_u64(n),
            Tree::Negative(n) => visitor.visit_i64(n),
            Tree::Float(x) => visitor.visit_f64(x),
            Tree::Str(s) => visitor.visit_string(s),
            Tree::Seq(items) => visit_seq(items, visitor),
            Tree::Map(map) => visit_map(map, visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            Tree::Null => visitor.visit_none(),
            other => visitor.visit_some(other),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self {
            Tree::Str(variant) => visitor.visit_enum(Variant {
                variant,
                value: None,
            }),
            Tree::Map(map) if map.len() == 1 => {
                let mut iter = map.into_iter();
                match iter.next() {
                    Some((variant, value)) => visitor.visit_enum(Variant {
                        variant,
                        value: Some(value),
                    }),
                    None => Err(de::Error::invalid_value(
                        Unexpected::Map,
                        &"map with a single key",
                    )),
                }
            }
            Tree::Map(_) => Err(de::Error::invalid_value(
                Unexpected::Map,
                &"map with a single key",
            )),
            other => Err(de::Error::invalid_type(
                other.unexpected(),
                &"string or map",
            )),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        drop(self);
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map struct identifier
    }
}

/// An enum written as its variant name or as a mapping `{variant: value}`.
struct Variant {
    variant: String,
    value: Option<Tree>,
}

impl<'de> EnumAccess<'de> for Variant {
    type Error = Error;
    type Variant = VariantValue;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, VariantValue), Error> {
        let v = seed.deserialize(self.variant.into_deserializer())?;
        Ok((v, VariantValue(self.value)))
    }
}

/// The value of an enum's variant (`None` when the enum was written as its name).
struct VariantValue(Option<Tree>);

impl<'de> VariantAccess<'de> for VariantValue {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        match self.0 {
            None | Some(Tree::Null) => Ok(()),
            Some(other) => Err(de::Error::invalid_type(other.unexpected(), &"unit variant")),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        match self.0 {
            Some(v) => seed.deserialize(v),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"newtype variant",
            )),
        }
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Some(Tree::Seq(items)) => visit_seq(items, visitor),
            Some(other) => Err(de::Error::invalid_type(
                other.unexpected(),
                &"tuple variant",
            )),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"tuple variant",
            )),
        }
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Some(Tree::Map(map)) => visit_map(map, visitor),
            Some(other) => Err(de::Error::invalid_type(
                other.unexpected(),
                &"struct variant",
            )),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"struct variant",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[test]
    fn mappings_keep_document_order_and_the_last_value_of_a_repeated_key() {
        let t: Tree = serde_json::from_str(r#"{"z": 1, "a": 2, "m": 3, "a": 4}"#).unwrap();
        let keys: Vec<&str> = t.as_map().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["z", "a", "m"]);
        assert_eq!(t.get("a"), Some(&Tree::Unsigned(4)));
        let m = IndexMap::<String, u32>::deserialize(t).unwrap();
        assert_eq!(m.keys().collect::<Vec<_>>(), ["z", "a", "m"]);
    }

    #[test]
    fn type_errors_read_as_serde_json_values_word_them() {
        let cases = [
            (r#""0x10""#, "u32"),
            ("-1", "u32"),
            ("1.5", "u32"),
            ("99999999999", "u32"),
            ("[1, 2]", "u32"),
            (r#"{"a": 1}"#, "string"),
            ("true", "string"),
            ("null", "string"),
            ("2.50", "string"),
            ("null", "u32"),
        ];
        for (json, ty) in cases {
            let tree: Tree = serde_json::from_str(json).unwrap();
            let value: serde_json::Value = serde_json::from_str(json).unwrap();
            let (ours, theirs) = match ty {
                "u32" => (
                    u32::deserialize(tree).unwrap_err().to_string(),
                    u32::deserialize(value).unwrap_err().to_string(),
                ),
                _ => (
                    String::deserialize(tree).unwrap_err().to_string(),
                    String::deserialize(value).unwrap_err().to_string(),
                ),
            };
            assert_eq!(ours, theirs, "{json} as {ty}");
        }
    }
}
