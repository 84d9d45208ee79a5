//! Resource names and how Kueue prints amounts of them.

use std::borrow::Cow;
use std::fmt;

/// A Kubernetes resource name (`cpu`, `memory`, `nvidia.com/gpu`, `nvidia.com/mig-1g.24gb`).
///
/// The names every manifest repeats ([`CPU`], [`MEMORY`], [`EPHEMERAL_STORAGE`],
/// [`NVIDIA_GPU`], [`PODS`]) are held without an allocation of their own, so that a snapshot
/// of 55,000 Workloads does not hold 165,000 copies of `cpu`, `memory` and `nvidia.com/gpu`.
/// Equality, order and hashing are those of the name's text.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResourceName(Cow<'static, str>);

/// The names held without an allocation.
const WELL_KNOWN: &[&str] = &[CPU, MEMORY, NVIDIA_GPU, EPHEMERAL_STORAGE, PODS];

/// `name` as a well-known static name, if it is one.
fn well_known(name: &str) -> Option<&'static str> {
    WELL_KNOWN.iter().copied().find(|w| *w == name)
}

#[cfg(feature = "serde")]
impl serde::Serialize for ResourceName {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for ResourceName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        #[cfg(feature = "serde")]
        impl serde::de::Visitor<'_> for V {
            type Value = ResourceName;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ResourceName, E> {
                Ok(match well_known(v) {
                    Some(w) => ResourceName(Cow::Borrowed(w)),
                    None => ResourceName(Cow::Owned(v.to_owned())),
                })
            }

            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<ResourceName, E> {
                Ok(ResourceName::new(v))
            }
        }
        d.deserialize_string(V)
    }
}

/// `cpu`.
pub const CPU: &str = "cpu";
/// `memory`.
pub const MEMORY: &str = "memory";
/// `ephemeral-storage`.
pub const EPHEMERAL_STORAGE: &str = "ephemeral-storage";
/// `nvidia.com/gpu`, a whole GPU.
pub const NVIDIA_GPU: &str = "nvidia.com/gpu";
/// `pods`, the resource Kueue adds itself when a ClusterQueue covers it.
pub const PODS: &str = "pods";
/// The prefix of a MIG resource under the device plugin's `mixed` strategy.
pub const MIG_PREFIX: &str = "nvidia.com/mig-";

impl ResourceName {
    /// Wraps a resource name; validation lives in [`mod@crate::validate`].
    pub fn new(name: impl Into<String>) -> ResourceName {
        let name = name.into();
        match well_known(&name) {
            Some(w) => ResourceName(Cow::Borrowed(w)),
            None => ResourceName(Cow::Owned(name)),
        }
    }

    /// The name as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// True for `cpu`, the one resource Kueue counts in milli-units.
    pub fn is_cpu(&self) -> bool {
        self.0 == CPU
    }

    /// True for resources Kueue prints in binary notation (`memory`, `ephemeral-storage`).
    pub fn is_byte_sized(&self) -> bool {
        self.0 == MEMORY || self.0 == EPHEMERAL_STORAGE
    }

    /// True for a whole GPU or a MIG instance resource of NVIDIA's device plugin.
    pub fn is_gpu(&self) -> bool {
        self.0 == NVIDIA_GPU || self.0.starts_with(MIG_PREFIX)
    }

    /// The MIG profile of a `nvidia.com/mig-<profile>` resource.
    pub fn mig_profile(&self) -> Option<&str> {
        self.0.strip_prefix(MIG_PREFIX)
    }
}

impl fmt::Display for ResourceName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for ResourceName {
    fn from(s: &str) -> Self {
        ResourceName::new(s)
    }
}

impl AsRef<str> for ResourceName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for ResourceName {
    fn borrow(&self) -> &str {
        &self.0
    }
}

/// A (flavor, resource) pair: the unit of quota accounting.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct FlavorResource {
    /// ResourceFlavor name.
    pub flavor: String,
    /// Resource name.
    pub resource: ResourceName,
}

impl FlavorResource {
    /// A pair.
    pub fn new(flavor: impl Into<String>, resource: impl Into<String>) -> FlavorResource {
        FlavorResource {
            flavor: flavor.into(),
            resource: ResourceName::new(resource.into()),
        }
    }
}

impl fmt::Display for FlavorResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.flavor, self.resource)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quantity::Amount;

    #[test]
    fn formats_like_kueue() {
        assert_eq!(ResourceName::new("cpu").format_amount(Amount(6000)), "6");
        assert_eq!(ResourceName::new("cpu").format_amount(Amount(500)), "500m");
        assert_eq!(
            ResourceName::new("memory").format_amount(Amount(36 * 1024 * 1024 * 1024)),
            "36Gi"
        );
        assert_eq!(
            ResourceName::new("nvidia.com/gpu").format_amount(Amount(8)),
            "8"
        );
        assert_eq!(
            ResourceName::new("example.com/x").format_amount(Amount(2000)),
            "2k"
        );
    }

    #[test]
    fn well_known_names_compare_as_text() {
        let a = ResourceName::new("cpu");
        let b: ResourceName = serde_json::from_str("\"cpu\"").unwrap();
        let c: ResourceName = serde_json::from_str("\"example.com/x\"").unwrap();
        assert_eq!(a, b);
        assert!(matches!(a.0, Cow::Borrowed(_)));
        assert!(matches!(b.0, Cow::Borrowed(_)));
        assert!(a < c && c < ResourceName::new("memory"));
        assert_eq!(serde_json::to_string(&c).unwrap(), "\"example.com/x\"");
        assert_eq!(c.as_str(), "example.com/x");
    }

    #[test]
    fn recognises_gpus() {
        assert!(ResourceName::new("nvidia.com/mig-1g.24gb").is_gpu());
        assert_eq!(
            ResourceName::new("nvidia.com/mig-1g.24gb").mig_profile(),
            Some("1g.24gb")
        );
        assert!(!ResourceName::new("cpu").is_gpu());
    }
}
