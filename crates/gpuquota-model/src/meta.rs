//! Object metadata and the small shared Kubernetes types (taints, tolerations, selectors).

use std::collections::BTreeMap;

use crate::time::Timestamp;

/// The part of `metadata` that gpuquota reads; other metadata fields are accepted and kept.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ObjectMeta {
    /// `metadata.name`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub name: String,
    /// `metadata.namespace` (namespaced kinds only).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub namespace: Option<String>,
    /// `metadata.labels`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub labels: BTreeMap<String, String>,
    /// `metadata.annotations`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub annotations: BTreeMap<String, String>,
    /// `metadata.creationTimestamp`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub creation_timestamp: Option<Timestamp>,
    /// `metadata.uid`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub uid: Option<String>,
    /// Bookkeeping fields a live cluster adds (`resourceVersion`, `generation`, `finalizers`,
    /// `managedFields`, `ownerReferences`, …): kept verbatim, never interpreted.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: BTreeMap<String, crate::opaque::Opaque>,
}

/// A node taint (`key`, `value`, `effect`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct Taint {
    /// Taint key.
    #[cfg_attr(feature = "serde", serde(default))]
    pub key: String,
    /// Taint value.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub value: Option<String>,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub effect: String,
    /// When the taint was added (informational).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub time_added: Option<String>,
}

/// A pod or flavor toleration.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct Toleration {
    /// Key matched; empty with `Exists` tolerates everything.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub key: Option<String>,
    /// `Equal` (default) or `Exists`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub operator: Option<String>,
    /// Value matched with `Equal`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub value: Option<String>,
    /// Effect matched; empty matches every effect.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub effect: Option<String>,
    /// Only with `NoExecute`.
    #[cfg_attr(
        feature = "serde",
        serde(
            deserialize_with = "crate::strict::opt_int",
            default,
            skip_serializing_if = "Option::is_none"
        )
    )]
    pub toleration_seconds: Option<i64>,
}

impl Toleration {
    /// True when this toleration tolerates `taint` (the Kubernetes rule).
    pub fn tolerates(&self, taint: &Taint) -> bool {
        if let Some(effect) = self.effect.as_deref().filter(|e| !e.is_empty())
            && effect != taint.effect
        {
            return false;
        }
        let key = self.key.as_deref().unwrap_or("");
        if !key.is_empty() && key != taint.key {
            return false;
        }
        match self.operator.as_deref().unwrap_or("Equal") {
            "Exists" => true,
            "Equal" | "" => {
                // An empty key with Equal is not allowed by validation; treat it as no match.
                !key.is_empty()
                    && self.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or("")
            }
            _ => false,
        }
    }
}

/// A label selector requirement (`key`, `operator`, `values`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct LabelSelectorRequirement {
    /// Label key.
    #[cfg_attr(feature = "serde", serde(default))]
    pub key: String,
    /// `In`, `NotIn`, `Exists` or `DoesNotExist`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub operator: String,
    /// Values for `In`/`NotIn`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Vec::is_empty")
    )]
    pub values: Vec<String>,
}

/// A Kubernetes label selector. `{}` selects everything.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct LabelSelector {
    /// Exact label matches.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub match_labels: BTreeMap<String, String>,
    /// Set-based requirements.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Vec::is_empty")
    )]
    pub match_expressions: Vec<LabelSelectorRequirement>,
}

impl LabelSelector {
    /// True when `labels` satisfy every term of the selector (an empty selector matches all).
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.match_labels
            .iter()
            .all(|(k, v)| labels.get(k) == Some(v))
            && self.match_expressions.iter().all(|r| {
                let value = labels.get(&r.key);
                match r.operator.as_str() {
                    "In" => value.is_some_and(|v| r.values.contains(v)),
                    "NotIn" => value.is_none_or(|v| !r.values.contains(v)),
                    "Exists" => value.is_some(),
                    "DoesNotExist" => value.is_none(),
                    _ => false,
                }
            })
    }
}

/// A status condition (`type`, `status`, `reason`, `message`, `lastTransitionTime`).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct Condition {
    /// Condition type, e.g. `QuotaReserved`.
    #[cfg_attr(feature = "serde", serde(rename = "type", default))]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub status: String,
    /// Machine-readable reason.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub reason: Option<String>,
    /// Human-readable message.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub message: Option<String>,
    /// When the condition last changed.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub last_transition_time: Option<Timestamp>,
    /// `observedGeneration` and other bookkeeping.
    #[cfg_attr(
        feature = "serde",
        serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub other: BTreeMap<String, crate::opaque::Opaque>,
}

impl Condition {
    /// True when `status` is `True`.
    pub fn is_true(&self) -> bool {
        self.status == "True"
    }
}

/// Declares a string-valued API enum that keeps unknown spellings, so that validation (not
/// deserialisation) reports them with a field path.
macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal $(| $alias:literal)*,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
            /// A value upstream does not accept; validation reports it.
            Unknown(String),
        }

        impl $name {
            /// The accepted spellings, for error messages.
            pub const ALLOWED: &'static [&'static str] = &[$($text),+];

            /// The upstream spelling.
            pub fn as_str(&self) -> &str {
                match self {
                    $($name::$variant => $text,)+
                    $name::Unknown(s) => s,
                }
            }

            /// True unless the value is [`Self::Unknown`].
            pub fn is_known(&self) -> bool {
                !matches!(self, $name::Unknown(_))
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                match s.as_str() {
                    $($text $(| $alias)* => $name::$variant,)+
                    _ => $name::Unknown(s),
                }
            }
        }

        impl From<$name> for String {
            fn from(v: $name) -> String {
                v.as_str().to_owned()
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        #[cfg(feature = "serde")]
        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        #[cfg(feature = "serde")]
        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                String::deserialize(d).map($name::from)
            }
        }
    };
}

pub(crate) use string_enum;
