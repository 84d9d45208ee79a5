//! Resource names and how Kueue prints amounts of them.

use std::fmt;

use crate::quantity::{Amount, Quantity};

/// A Kubernetes resource name (`cpu`, `memory`, `nvidia.com/gpu`, `nvidia.com/mig-1g.24gb`).
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct ResourceName(String);

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
        ResourceName(name.into())
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

    /// The quantity Kueue reports for `amount` of this resource: CPU as a milli-quantity,
    /// memory and ephemeral storage in binary notation, everything else in decimal notation.
    pub fn quantity_of(&self, amount: Amount) -> Quantity {
        if self.is_cpu() {
            Quantity::from_milli(amount.0)
        } else if self.is_byte_sized() {
            Quantity::from_bytes(amount.0)
        } else {
            Quantity::from_integer(amount.0)
        }
    }

    /// `amount` of this resource as a canonical Kubernetes quantity string (`6`, `500m`, `36Gi`).
    pub fn format_amount(&self, amount: Amount) -> String {
        self.quantity_of(amount).to_string()
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn recognises_gpus() {
        assert!(ResourceName::new("nvidia.com/mig-1g.24gb").is_gpu());
        assert_eq!(
            ResourceName::new("nvidia.com/mig-1g.24gb").mig_profile(),
            Some("1g.24gb")
        );
        assert!(!ResourceName::new("cpu").is_gpu());
    }
}
