//! Scalar fields read as the API server reads them: an integer field takes a number, never a
//! quoted string (`count: "3"` is refused, as Kubernetes' JSON decoder refuses it after its YAML
//! to JSON conversion), and a boolean field takes `true`/`false`, never `"true"`.
//!
//! The YAML reader would otherwise parse a quoted scalar into a number when asked for one;
//! these functions ask for whatever the scalar is and accept only the right type, so the fast
//! typed import and the exact import through a generic tree read every input the same way.

use std::fmt;
use std::marker::PhantomData;

#[cfg(feature = "serde")]
use serde::de::{self, Deserializer, Visitor};

struct Int<T>(PhantomData<T>);

impl<'de, T: TryFrom<i64> + TryFrom<u64>> Visitor<'de> for Int<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an integer ({})", std::any::type_name::<T>())
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        T::try_from(v).map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        T::try_from(v).map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &self))
    }
}

/// An integer field.
pub(crate) fn int<'de, D: Deserializer<'de>, T: TryFrom<i64> + TryFrom<u64>>(
    d: D,
) -> Result<T, D::Error> {
    d.deserialize_any(Int(PhantomData))
}

struct Opt<V>(V);

impl<'de, V: Visitor<'de> + Clone> Visitor<'de> for Opt<V> {
    type Value = Option<V::Value>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self.0).map(Some)
    }
}

impl<T> Clone for Int<T> {
    fn clone(&self) -> Self {
        Int(PhantomData)
    }
}

/// An optional integer field (`null` is absent).
pub(crate) fn opt_int<'de, D: Deserializer<'de>, T: TryFrom<i64> + TryFrom<u64>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    d.deserialize_option(Opt(Int(PhantomData)))
}

#[derive(Clone)]
struct Bool;

impl Visitor<'_> for Bool {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a boolean (true or false)")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<bool, E> {
        Ok(v)
    }
}

/// A boolean field.
pub(crate) fn boolean<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    d.deserialize_any(Bool)
}

/// An optional boolean field (`null` is absent).
pub(crate) fn opt_bool<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    d.deserialize_option(Opt(Bool))
}
