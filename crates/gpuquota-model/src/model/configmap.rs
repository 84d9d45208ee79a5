//! Core `v1` ConfigMaps, and the configurations users keep inside them.

use std::collections::BTreeMap;

use crate::meta::ObjectMeta;

/// The key of Kueue's manager configuration in its ConfigMap (`kueue-manager-config`).
pub const KUEUE_CONFIG_KEY: &str = "controller_manager_config.yaml";

/// A ConfigMap (`v1`).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ConfigMap {
    /// Metadata (namespaced).
    #[cfg_attr(feature = "serde", serde(default))]
    pub metadata: ObjectMeta,
    /// Text data.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub data: BTreeMap<String, String>,
    /// Binary data (kept, not read).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "BTreeMap::is_empty")
    )]
    pub binary_data: BTreeMap<String, String>,
    /// `immutable`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub immutable: Option<bool>,
}

impl ConfigMap {
    /// `namespace/name`.
    pub fn key(&self) -> String {
        format!(
            "{}/{}",
            self.metadata.namespace.as_deref().unwrap_or("default"),
            self.metadata.name
        )
    }

    /// The documents embedded in the ConfigMap that the importer reads as objects of their
    /// own, with the field path each came from: Kueue's manager configuration (key
    /// `controller_manager_config.yaml`, in any ConfigMap; Kueue's is `kueue-manager-config`).
    pub fn embedded_documents(&self) -> Vec<(String, &str)> {
        self.data
            .iter()
            .filter(|(k, _)| k.as_str() == KUEUE_CONFIG_KEY)
            .map(|(k, v)| (format!("data.{k}"), v.as_str()))
            .collect()
    }
}
