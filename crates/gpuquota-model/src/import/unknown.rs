//! Unknown-field tracking for the typed decoding: a [`serde::Deserializer`] wrapper
//! ([`Tracked`]) that records the path of every value a derived `Deserialize` skips (reads
//! with `deserialize_ignored_any`: a field it has no member for).
//!
//! The path to the value being read is a chain of segments on the stack, one per map
//! entry, sequence element, `Some` and newtype. A map key is kept the way the inner
//! deserializer hands it over: borrowed from the input where it can be (`visit_borrowed_str`:
//! serde_json's and the block YAML reader's keys without escapes), otherwise copied into one
//! scratch buffer per object, which each map truncates back to where it began after every
//! entry; integer and boolean keys are kept as numbers. The text of a path
//! (`spec.resourceGroups[0].flavors`) and its steps are only built for a field that is
//! unknown, so reading a document without unknown fields allocates nothing here.
//!
//! The fields recorded and their paths are those of `serde_ignored`'s wrapper
//! (dtolnay/serde-ignored, `src/lib.rs`), which the importer used before: the same values
//! count as ignored, keys are captured from the same visits, and a map entry whose key was
//! none of a string, an integer or a boolean fails the decoding with "non-string key". Errors
//! pass through unchanged, so `serde_path_to_error`'s paths (the exact path wraps its tracker
//! inside this one) are the same too. Test `unknown_fields_in_nested_lists_keep_their_whole_path`
//! pins the warnings on every reader.
//!
//! Why not `serde_ignored` itself (measured 2026-12-07, `benches/README.md`, "Unknown
//! fields: own tracker or serde_ignored"): with `serde_ignored::Deserializer` in this
//! tracker's place, importing the 55,000-Workload snapshot took 9–11 % more CPU as JSON
//! (median 0.360 s against 0.330 s over 18 interleaved runs each) and 2 % more as block
//! YAML. The rule was to switch unless it was more than 10 % slower; at the edge of that
//! bound, and above the 5 % any benchmark may slow, the tracker stays, and its tests keep
//! `serde_ignored` as the oracle of every path it records.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Visitor};

use crate::schema::Step;

/// The unknown fields found while one object was read.
#[derive(Debug, Default)]
pub(super) struct Unknown {
    /// Each unknown field, in the order read: its path in Kubernetes' notation
    /// (`spec.groups[0].name`) and as steps.
    pub(super) fields: Vec<(String, Vec<Step>)>,
    /// Keys the inner deserializer could not lend (escaped, or built by it), one per open
    /// map at most: each map's key starts where the map's own part of the buffer begins.
    scratch: String,
}

/// A map key as captured.
#[derive(Debug, Clone, Copy)]
enum Key<'de> {
    /// Borrowed from the input.
    Borrowed(&'de str),
    /// A range of [`Unknown::scratch`].
    Scratch(usize, usize),
    Signed(i128),
    Unsigned(u128),
    Bool(bool),
}

/// One step of the path to the value being read.
#[derive(Debug, Clone, Copy)]
enum Segment<'de> {
    /// The value of a map entry.
    Key(Key<'de>),
    /// An element of a sequence.
    Index(usize),
    /// The root, the inside of a `Some`, a newtype or a newtype variant (no step of its own).
    Same,
}

/// The path to the value being read, innermost segment first.
#[derive(Debug)]
struct Path<'p, 'de> {
    parent: Option<&'p Path<'p, 'de>>,
    segment: Segment<'de>,
}

impl<'p, 'de> Path<'p, 'de> {
    fn child(&'p self, segment: Segment<'de>) -> Path<'p, 'de> {
        Path {
            parent: Some(self),
            segment,
        }
    }
}

impl Unknown {
    /// Records `path` as an unknown field.
    ///
    /// # Complexity
    /// Linear in the path's depth and length.
    fn record(&mut self, path: &Path<'_, '_>) {
        let mut segments = Vec::new();
        let mut at = Some(path);
        while let Some(p) = at {
            segments.push(p.segment);
            at = p.parent;
        }
        let mut text = String::new();
        let mut steps = Vec::new();
        for segment in segments.iter().rev() {
            match segment {
                Segment::Same => {}
                Segment::Index(i) => {
                    use fmt::Write as _;
                    let _ = write!(text, "[{i}]");
                    steps.push(Step::Index);
                }
                Segment::Key(key) => {
                    let key = self.key_text(key);
                    if !text.is_empty() {
                        text.push('.');
                    }
                    text.push_str(&key);
                    steps.push(Step::Field(key.into_owned()));
                }
            }
        }
        self.fields.push((text, steps));
    }

    fn key_text<'a>(&'a self, key: &Key<'a>) -> Cow<'a, str> {
        match *key {
            Key::Borrowed(s) => Cow::Borrowed(s),
            Key::Scratch(start, end) => Cow::Borrowed(self.scratch.get(start..end).unwrap_or("")),
            Key::Signed(n) => Cow::Owned(n.to_string()),
            Key::Unsigned(n) => Cow::Owned(n.to_string()),
            Key::Bool(b) => Cow::Owned(b.to_string()),
        }
    }
}

/// A deserializer that records into an [`Unknown`] every value read as ignored below it.
pub(super) struct Tracked<'p, 'u, 'de, D> {
    de: D,
    unknown: &'u mut Unknown,
    path: Path<'p, 'de>,
}

impl<'u, 'de, D> Tracked<'static, 'u, 'de, D> {
    /// Wraps `de`, whose value is the root of the paths recorded.
    pub(super) fn new(de: D, unknown: &'u mut Unknown) -> Self {
        Tracked {
            de,
            unknown,
            path: Path {
                parent: None,
                segment: Segment::Same,
            },
        }
    }
}

/// Calls `$m!` with every `Deserializer` method but `deserialize_ignored_any`, as
/// `name(extra arguments)`.
macro_rules! deserialize_methods {
    ($m:ident) => {
        $m! {
            deserialize_any();
            deserialize_bool();
            deserialize_i8();
            deserialize_i16();
            deserialize_i32();
            deserialize_i64();
            deserialize_i128();
            deserialize_u8();
            deserialize_u16();
            deserialize_u32();
            deserialize_u64();
            deserialize_u128();
            deserialize_f32();
            deserialize_f64();
            deserialize_char();
            deserialize_str();
            deserialize_string();
            deserialize_bytes();
            deserialize_byte_buf();
            deserialize_option();
            deserialize_unit();
            deserialize_unit_struct(name: &'static str);
            deserialize_newtype_struct(name: &'static str);
            deserialize_seq();
            deserialize_tuple(len: usize);
            deserialize_tuple_struct(name: &'static str, len: usize);
            deserialize_map();
            deserialize_struct(name: &'static str, fields: &'static [&'static str]);
            deserialize_enum(name: &'static str, variants: &'static [&'static str]);
            deserialize_identifier();
        }
    };
}

/// The methods of [`Tracked`]: the visitor is wrapped with the same path.
macro_rules! tracked_methods {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
            let Tracked { de, unknown, path } = self;
            de.$method($($arg,)* Wrap { visitor, unknown, path: &path })
        }
    )*};
}

impl<'de, D: de::Deserializer<'de>> de::Deserializer<'de> for Tracked<'_, '_, 'de, D> {
    type Error = D::Error;

    deserialize_methods!(tracked_methods);

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.unknown.record(&self.path);
        self.de.deserialize_ignored_any(visitor)
    }

    fn is_human_readable(&self) -> bool {
        self.de.is_human_readable()
    }
}

/// A visitor (or enum access) whose nested values are read by [`Tracked`] deserializers.
struct Wrap<'p, 'u, 'de, X> {
    visitor: X,
    unknown: &'u mut Unknown,
    path: &'p Path<'p, 'de>,
}

/// Visits handed on unchanged, `name(argument type)`.
macro_rules! forward_visits {
    ($($method:ident($ty:ty);)*) => {$(
        fn $method<E: de::Error>(self, v: $ty) -> Result<Self::Value, E> {
            self.visitor.$method(v)
        }
    )*};
}

impl<'de, X: Visitor<'de>> Visitor<'de> for Wrap<'_, '_, 'de, X> {
    type Value = X::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.visitor.expecting(f)
    }

    forward_visits! {
        visit_bool(bool);
        visit_i8(i8);
        visit_i16(i16);
        visit_i32(i32);
        visit_i64(i64);
        visit_i128(i128);
        visit_u8(u8);
        visit_u16(u16);
        visit_u32(u32);
        visit_u64(u64);
        visit_u128(u128);
        visit_f32(f32);
        visit_f64(f64);
        visit_char(char);
        visit_str(&str);
        visit_borrowed_str(&'de str);
        visit_string(String);
        visit_bytes(&[u8]);
        visit_borrowed_bytes(&'de [u8]);
        visit_byte_buf(Vec<u8>);
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.visitor.visit_unit()
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.visitor.visit_none()
    }

    fn visit_some<D: de::Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        self.visitor.visit_some(Tracked {
            de,
            unknown: self.unknown,
            path: self.path.child(Segment::Same),
        })
    }

    fn visit_newtype_struct<D: de::Deserializer<'de>>(
        self,
        de: D,
    ) -> Result<Self::Value, D::Error> {
        self.visitor.visit_newtype_struct(Tracked {
            de,
            unknown: self.unknown,
            path: self.path.child(Segment::Same),
        })
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, access: A) -> Result<Self::Value, A::Error> {
        self.visitor.visit_seq(Seq {
            access,
            unknown: self.unknown,
            path: self.path,
            index: 0,
        })
    }

    fn visit_map<A: de::MapAccess<'de>>(self, access: A) -> Result<Self::Value, A::Error> {
        let base = self.unknown.scratch.len();
        self.visitor.visit_map(Map {
            access,
            unknown: self.unknown,
            path: self.path,
            key: None,
            base,
        })
    }

    fn visit_enum<A: de::EnumAccess<'de>>(self, access: A) -> Result<Self::Value, A::Error> {
        self.visitor.visit_enum(Wrap {
            visitor: access,
            unknown: self.unknown,
            path: self.path,
        })
    }
}

impl<'p, 'u, 'de, X: de::EnumAccess<'de>> de::EnumAccess<'de> for Wrap<'p, 'u, 'de, X> {
    type Error = X::Error;
    type Variant = Wrap<'p, 'u, 'de, X::Variant>;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Self::Variant), X::Error> {
        let Wrap {
            visitor,
            unknown,
            path,
        } = self;
        let (value, variant) = visitor.variant_seed(seed)?;
        Ok((
            value,
            Wrap {
                visitor: variant,
                unknown,
                path,
            },
        ))
    }
}

impl<'de, X: de::VariantAccess<'de>> de::VariantAccess<'de> for Wrap<'_, '_, 'de, X> {
    type Error = X::Error;

    fn unit_variant(self) -> Result<(), X::Error> {
        self.visitor.unit_variant()
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value, X::Error> {
        self.visitor.newtype_variant_seed(Seeded {
            seed,
            unknown: self.unknown,
            path: self.path.child(Segment::Same),
        })
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, X::Error> {
        self.visitor.tuple_variant(
            len,
            Wrap {
                visitor,
                unknown: self.unknown,
                path: self.path,
            },
        )
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, X::Error> {
        self.visitor.struct_variant(
            fields,
            Wrap {
                visitor,
                unknown: self.unknown,
                path: self.path,
            },
        )
    }
}

/// A seed whose value is read by a [`Tracked`] deserializer at `path`.
struct Seeded<'p, 'u, 'de, S> {
    seed: S,
    unknown: &'u mut Unknown,
    path: Path<'p, 'de>,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Seeded<'_, '_, 'de, S> {
    type Value = S::Value;

    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<S::Value, D::Error> {
        self.seed.deserialize(Tracked {
            de,
            unknown: self.unknown,
            path: self.path,
        })
    }
}

/// A sequence whose elements are read at their index.
struct Seq<'p, 'u, 'de, A> {
    access: A,
    unknown: &'u mut Unknown,
    path: &'p Path<'p, 'de>,
    index: usize,
}

impl<'de, A: de::SeqAccess<'de>> de::SeqAccess<'de> for Seq<'_, '_, 'de, A> {
    type Error = A::Error;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, A::Error> {
        let index = self.index;
        self.index = self.index.saturating_add(1);
        self.access.next_element_seed(Seeded {
            seed,
            unknown: self.unknown,
            path: self.path.child(Segment::Index(index)),
        })
    }

    fn size_hint(&self) -> Option<usize> {
        self.access.size_hint()
    }
}

/// A map whose values are read under their key.
struct Map<'p, 'u, 'de, A> {
    access: A,
    unknown: &'u mut Unknown,
    path: &'p Path<'p, 'de>,
    /// The key just read, until its value is read.
    key: Option<Key<'de>>,
    /// Where this map's part of [`Unknown::scratch`] begins.
    base: usize,
}

impl<'de, A: de::MapAccess<'de>> de::MapAccess<'de> for Map<'_, '_, 'de, A> {
    type Error = A::Error;

    fn next_key_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, A::Error> {
        self.unknown.scratch.truncate(self.base);
        self.key = None;
        self.access.next_key_seed(KeySeed {
            seed,
            key: &mut self.key,
            scratch: &mut self.unknown.scratch,
        })
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        let key = self
            .key
            .take()
            .ok_or_else(|| de::Error::custom("non-string key"))?;
        let value = self.access.next_value_seed(Seeded {
            seed,
            unknown: &mut *self.unknown,
            path: self.path.child(Segment::Key(key)),
        });
        self.unknown.scratch.truncate(self.base);
        value
    }

    fn size_hint(&self) -> Option<usize> {
        self.access.size_hint()
    }
}

/// A key's seed, deserializer and visitor (one type for the three roles): whatever key the
/// inner deserializer visits is noted in `key` on its way to the real visitor.
struct KeySeed<'k, 'de, X> {
    seed: X,
    key: &'k mut Option<Key<'de>>,
    scratch: &'k mut String,
}

impl<'de, X> KeySeed<'_, 'de, X> {
    /// Notes a key that cannot be borrowed by copying it into the scratch buffer.
    fn copy(&mut self, s: &str) {
        let start = self.scratch.len();
        self.scratch.push_str(s);
        *self.key = Some(Key::Scratch(start, self.scratch.len()));
    }
}

impl<'de, X: DeserializeSeed<'de>> DeserializeSeed<'de> for KeySeed<'_, 'de, X> {
    type Value = X::Value;

    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<X::Value, D::Error> {
        let KeySeed { seed, key, scratch } = self;
        seed.deserialize(KeySeed {
            seed: de,
            key,
            scratch,
        })
    }
}

/// The methods of the key's deserializer: the visitor is wrapped to note the key.
macro_rules! key_methods {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
            let KeySeed { seed, key, scratch } = self;
            seed.$method($($arg,)* KeySeed { seed: visitor, key, scratch })
        }
    )*};
}

impl<'de, D: de::Deserializer<'de>> de::Deserializer<'de> for KeySeed<'_, 'de, D> {
    type Error = D::Error;

    deserialize_methods!(key_methods);

    key_methods! {
        deserialize_ignored_any();
    }

    fn is_human_readable(&self) -> bool {
        self.seed.is_human_readable()
    }
}

/// Visits that note the key, `name(argument type) => Key variant`.
macro_rules! noting_visits {
    ($($method:ident($ty:ty) => $variant:ident;)*) => {$(
        fn $method<E: de::Error>(self, v: $ty) -> Result<Self::Value, E> {
            *self.key = Some(Key::$variant(v.into()));
            self.seed.$method(v)
        }
    )*};
}

/// Visits handed on unchanged by the key's visitor, `name(argument type)`.
macro_rules! forward_key_visits {
    ($($method:ident($ty:ty);)*) => {$(
        fn $method<E: de::Error>(self, v: $ty) -> Result<Self::Value, E> {
            self.seed.$method(v)
        }
    )*};
}

impl<'de, X: Visitor<'de>> Visitor<'de> for KeySeed<'_, 'de, X> {
    type Value = X::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.seed.expecting(f)
    }

    noting_visits! {
        visit_bool(bool) => Bool;
        visit_i8(i8) => Signed;
        visit_i16(i16) => Signed;
        visit_i32(i32) => Signed;
        visit_i64(i64) => Signed;
        visit_i128(i128) => Signed;
        visit_u8(u8) => Unsigned;
        visit_u16(u16) => Unsigned;
        visit_u32(u32) => Unsigned;
        visit_u64(u64) => Unsigned;
        visit_u128(u128) => Unsigned;
        visit_borrowed_str(&'de str) => Borrowed;
    }

    forward_key_visits! {
        visit_f32(f32);
        visit_f64(f64);
        visit_char(char);
        visit_bytes(&[u8]);
        visit_borrowed_bytes(&'de [u8]);
        visit_byte_buf(Vec<u8>);
    }

    fn visit_str<E: de::Error>(mut self, v: &str) -> Result<Self::Value, E> {
        self.copy(v);
        self.seed.visit_str(v)
    }

    fn visit_string<E: de::Error>(mut self, v: String) -> Result<Self::Value, E> {
        self.copy(&v);
        self.seed.visit_string(v)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.seed.visit_unit()
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.seed.visit_none()
    }

    fn visit_some<D: de::Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        self.seed.visit_some(de)
    }

    fn visit_newtype_struct<D: de::Deserializer<'de>>(
        self,
        de: D,
    ) -> Result<Self::Value, D::Error> {
        let KeySeed { seed, key, scratch } = self;
        seed.visit_newtype_struct(KeySeed {
            seed: de,
            key,
            scratch,
        })
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, access: A) -> Result<Self::Value, A::Error> {
        self.seed.visit_seq(access)
    }

    fn visit_map<A: de::MapAccess<'de>>(self, access: A) -> Result<Self::Value, A::Error> {
        self.seed.visit_map(access)
    }

    fn visit_enum<A: de::EnumAccess<'de>>(self, access: A) -> Result<Self::Value, A::Error> {
        let KeySeed { seed, key, scratch } = self;
        seed.visit_enum(KeySeed {
            seed: access,
            key,
            scratch,
        })
    }
}

impl<'de, X: de::EnumAccess<'de>> de::EnumAccess<'de> for KeySeed<'_, 'de, X> {
    type Error = X::Error;
    type Variant = X::Variant;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, X::Variant), X::Error> {
        let KeySeed {
            seed: access,
            key,
            scratch,
        } = self;
        access.variant_seed(KeySeed { seed, key, scratch })
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde::Deserialize;
    use serde_json::{Value, json};

    use super::{Tracked, Unknown};
    use crate::kueue::{ClusterQueue, Workload};
    use crate::schema::Step;

    type Fields = Vec<(String, Vec<Step>)>;

    /// The oracle: `serde_ignored`'s paths, in the notation the importer used to derive from
    /// them.
    fn oracle_path(path: &serde_ignored::Path<'_>, text: &mut String, steps: &mut Vec<Step>) {
        use serde_ignored::Path as P;
        match path {
            P::Root => {}
            P::Seq { parent, index } => {
                oracle_path(parent, text, steps);
                text.push_str(&format!("[{index}]"));
                steps.push(Step::Index);
            }
            P::Map { parent, key } => {
                oracle_path(parent, text, steps);
                if !text.is_empty() {
                    text.push('.');
                }
                text.push_str(key);
                steps.push(Step::Field(key.clone()));
            }
            P::Some { parent } | P::NewtypeStruct { parent } | P::NewtypeVariant { parent } => {
                oracle_path(parent, text, steps);
            }
        }
    }

    fn oracle<'de, T: Deserialize<'de>, D: serde::Deserializer<'de>>(
        de: D,
    ) -> (Result<T, String>, Fields) {
        let mut fields = Vec::new();
        let result = T::deserialize(serde_ignored::Deserializer::new(de, &mut |p| {
            let (mut text, mut steps) = (String::new(), Vec::new());
            oracle_path(&p, &mut text, &mut steps);
            fields.push((text, steps));
        }))
        .map_err(|e| e.to_string());
        (result, fields)
    }

    fn tracked<'de, T: Deserialize<'de>, D: serde::Deserializer<'de>>(
        de: D,
    ) -> (Result<T, String>, Fields) {
        let mut unknown = Unknown::default();
        let result = T::deserialize(Tracked::new(de, &mut unknown)).map_err(|e| e.to_string());
        (result, unknown.fields)
    }

    /// Both wrappers over the JSON text (borrowed and escaped keys) and over its tree (owned
    /// keys) of one kind: the same result or error message, the same fields.
    fn agree<T: for<'de> Deserialize<'de> + PartialEq + std::fmt::Debug>(text: &str) {
        let (a, fa) = oracle::<T, _>(&mut serde_json::Deserializer::from_str(text));
        let (b, fb) = tracked::<T, _>(&mut serde_json::Deserializer::from_str(text));
        assert_eq!(a, b, "{text}");
        assert_eq!(fa, fb, "{text}");
        if let Ok(value) = serde_json::from_str::<Value>(text) {
            let (a, fa) = oracle::<T, _>(value.clone());
            let (b, fb) = tracked::<T, _>(value);
            assert_eq!(a, b, "{text}");
            assert_eq!(fa, fb, "{text}");
        }
    }

    const CLUSTER_QUEUE: &str = r#"{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
        "metadata": {"name": "q", "labels": {"a": "b"}, "x0": 1},
        "spec": {"resourceGroups": [
            {"coveredResources": ["cpu"], "x1": [{"y": 1}], "flavors": [
                {"name": "a", "resources": [{"name": "cpu", "nominalQuota": 1, "nominalQuta": 2}]},
                {"name": "b", "r\u00e9sources": 1, "resources": [{"name": "cpu", "nominalQuota": 1, "x\"2": 3}]}]}],
          "preemption": {"withinClusterQueue": "Never", "x3": {"a": [1, {"b": 2}]}},
          "queueingStrategy": "BestEffortFIFO", "x4": null}}"#;

    const WORKLOAD: &str = r#"{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
        "metadata": {"name": "w", "namespace": "ns"},
        "spec": {"queueName": "q", "x\\5": 1, "podSets": [
            {"name": "main", "count": 2, "template": {"spec": {"containers": [
                {"name": "c", "resources": {"requests": {"cpu": "1", "nvidia.com/gpu": 1}}}]}}},
            {"name": "w", "count": 1, "zzz": 1, "template": {"spec": {"containers": []}}}]},
        "status": {"conditions": [], "x6": 1}}"#;

    #[test]
    fn the_same_fields_as_serde_ignored() {
        agree::<ClusterQueue>(CLUSTER_QUEUE);
        agree::<Workload>(WORKLOAD);
        // Errors half-way, with fields recorded before them.
        agree::<ClusterQueue>(&CLUSTER_QUEUE.replace("\"Never\"", "3"));
        agree::<Workload>(&WORKLOAD.replace("\"count\": 1", "\"count\": \"x\""));
        let (_, fields) =
            tracked::<ClusterQueue, _>(&mut serde_json::Deserializer::from_str(CLUSTER_QUEUE));
        let paths: Vec<&str> = fields.iter().map(|(p, _)| p.as_str()).collect();
        assert!(
            paths.contains(&"spec.resourceGroups[0].flavors[1].resources[0].x\"2"),
            "{paths:?}"
        );
        assert!(
            paths.contains(&"spec.resourceGroups[0].flavors[1].r\u{e9}sources"),
            "{paths:?}"
        );
    }

    #[derive(Debug, Clone, PartialEq, Deserialize)]
    struct Small {
        #[serde(default)]
        a: u32,
    }

    /// Keys that are numbers or booleans are recorded as their text; any other key fails
    /// with the oracle's message.
    #[test]
    fn keys_that_are_not_strings() {
        use serde::de::value::{Error, MapDeserializer};
        let ints = || MapDeserializer::<_, Error>::new(vec![(7u64, 1u32), (9, 2)].into_iter());
        assert_eq!(tracked::<Small, _>(ints()), oracle::<Small, _>(ints()));
        let (_, fields) = tracked::<Small, _>(ints());
        assert_eq!(fields.len(), 2);
        assert_eq!(fields[0].0, "7");
        let bools = || MapDeserializer::<_, Error>::new(vec![(true, 1u32)].into_iter());
        assert_eq!(tracked::<Small, _>(bools()), oracle::<Small, _>(bools()));
        let chars = || MapDeserializer::<_, Error>::new(vec![('a', 1u32)].into_iter());
        let (result, fields) = tracked::<Small, _>(chars());
        assert_eq!(
            (result.clone(), fields.clone()),
            oracle::<Small, _>(chars())
        );
        assert_eq!(result, Err("non-string key".to_owned()));
    }

    fn scalar() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (0u32..100).prop_map(|n| json!(n)),
            "[a-z]{0,3}".prop_map(Value::String),
        ]
    }

    fn tree() -> impl Strategy<Value = Value> {
        scalar().prop_recursive(4, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::btree_map(
                    prop_oneof![
                        Just("name".to_owned()),
                        Just("resources".to_owned()),
                        Just("flavors".to_owned()),
                        Just("nominalQuota".to_owned()),
                        Just("x\\u0079".to_owned()),
                        "[a-z]{1,3}"
                    ],
                    inner,
                    0..4
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Any tree as a ClusterQueue's resource groups or a Workload's pod sets: the same
        /// outcome and fields as the oracle.
        #[test]
        fn random_trees_give_the_oracles_fields(groups in tree(), pod_sets in tree()) {
            let cq = json!({"metadata": {"name": "q"}, "spec": {"resourceGroups": groups}});
            agree::<ClusterQueue>(&cq.to_string());
            let w = json!({"metadata": {"name": "w"}, "spec": {"podSets": pod_sets}});
            agree::<Workload>(&w.to_string());
        }
    }
}
