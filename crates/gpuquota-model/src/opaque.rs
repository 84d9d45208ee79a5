//! [`Opaque`]: a field the model keeps verbatim without reading it.
//!
//! Kubernetes objects carry parts no engine decides on (a workload's `status`, a pod's
//! `affinity` terms before the engines read them, the catch-all of unknown fields). The model
//! keeps them so that re-serialising an object gives back what was read. With the `serde`
//! feature (on by default) an `Opaque` is a JSON value ([`serde_json::Value`]) and serialises
//! exactly as that value (`#[serde(transparent)]`): the JSON output is the same bytes as when
//! these fields were `serde_json::Value`. Without the feature it is an empty placeholder, so the
//! field types of the model do not change with the features; an embedder who builds a model as
//! plain Rust values leaves these fields at their default.
//!
//! ```
//! # #[cfg(feature = "serde")] {
//! use gpuquota_model::Opaque;
//!
//! let status = Opaque::from(serde_json::json!({"phase": "Running"}));
//! assert_eq!(status.get("phase").and_then(|v| v.as_str()), Some("Running"));
//! assert_eq!(serde_json::to_string(&status).unwrap(), r#"{"phase":"Running"}"#);
//! assert!(Opaque::default().is_null());
//! # }
//! ```

/// A part of an object kept verbatim: a JSON value with the `serde` feature, an empty
/// placeholder without it. See the [module docs](self).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(transparent))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(transparent))]
pub struct Opaque(#[cfg(feature = "serde")] serde_json::Value);

impl Opaque {
    /// The kept value (`null` when the field was empty).
    #[cfg(feature = "serde")]
    pub fn as_value(&self) -> &serde_json::Value {
        &self.0
    }

    /// The kept value, mutable.
    #[cfg(feature = "serde")]
    pub fn as_value_mut(&mut self) -> &mut serde_json::Value {
        &mut self.0
    }

    /// The kept value, by value.
    #[cfg(feature = "serde")]
    pub fn into_value(self) -> serde_json::Value {
        self.0
    }

    /// Whether nothing is kept: JSON `null`, or always without the `serde` feature.
    pub fn is_null(&self) -> bool {
        #[cfg(feature = "serde")]
        {
            self.0.is_null()
        }
        #[cfg(not(feature = "serde"))]
        {
            true
        }
    }
}

#[cfg(feature = "serde")]
impl From<serde_json::Value> for Opaque {
    fn from(value: serde_json::Value) -> Self {
        Opaque(value)
    }
}

#[cfg(feature = "serde")]
impl From<Opaque> for serde_json::Value {
    fn from(value: Opaque) -> Self {
        value.0
    }
}

/// Read access to the kept JSON value (`get`, `as_str`, `as_array`, ...).
#[cfg(feature = "serde")]
impl std::ops::Deref for Opaque {
    type Target = serde_json::Value;

    fn deref(&self) -> &serde_json::Value {
        &self.0
    }
}

#[cfg(feature = "serde")]
impl std::ops::DerefMut for Opaque {
    fn deref_mut(&mut self) -> &mut serde_json::Value {
        &mut self.0
    }
}

#[cfg(all(test, feature = "serde"))]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn serialises_like_the_value_it_keeps() {
        let text = r#"{"a":[1,"x",null],"b":{"c":true}}"#;
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        let o: Opaque = serde_json::from_str(text).unwrap();
        assert_eq!(o.as_value(), &v);
        assert_eq!(
            serde_json::to_string(&o).unwrap(),
            serde_json::to_string(&v).unwrap()
        );
    }

    #[test]
    fn a_null_option_field_reads_as_none_as_before() {
        #[cfg_attr(feature = "serde", derive(serde::Deserialize))]
        struct S {
            #[cfg_attr(feature = "serde", serde(default))]
            o: Option<Opaque>,
            #[cfg_attr(feature = "serde", serde(default))]
            v: Option<serde_json::Value>,
        }
        let s: S = serde_json::from_str(r#"{"o":null,"v":null}"#).unwrap();
        assert_eq!(s.o, None);
        assert_eq!(s.v, None);
    }

    #[test]
    fn a_flattened_catch_all_keeps_the_same_keys() {
        #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
        struct S {
            name: String,
            #[cfg_attr(feature = "serde", serde(flatten))]
            other: BTreeMap<String, Opaque>,
        }
        let text = r#"{"name":"n","x":{"y":1},"z":[2]}"#;
        let s: S = serde_json::from_str(text).unwrap();
        assert_eq!(s.other.keys().collect::<Vec<_>>(), ["x", "z"]);
        assert_eq!(serde_json::to_string(&s).unwrap(), text);
    }
}
