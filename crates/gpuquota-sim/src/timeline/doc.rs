//! `spec.timeline` as written: the document types, read with serde (camelCase; unknown
//! fields are warnings, as in every other document of the scenario).

use serde::Deserialize;

/// One entry of `spec.timeline`.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct EventDoc {
    /// When: RFC 3339, or a Go duration from `spec.start` (`"216h"`). Required.
    #[serde(default)]
    pub at: Option<String>,
    /// Manifest files (relative to the scenario) whose objects are created, or replaced when
    /// an object of the same kind, name and namespace exists.
    #[serde(default)]
    pub apply: Vec<String>,
    /// JSON merge patches (RFC 7386) on existing objects.
    #[serde(default)]
    pub patch: Vec<PatchDoc>,
    /// Objects deleted.
    #[serde(default)]
    pub delete: Vec<ObjectRefDoc>,
    /// Node events.
    #[serde(default)]
    pub nodes: Option<NodesDoc>,
    /// A MIG maintenance window.
    #[serde(default)]
    pub mig_layout: Option<MigLayoutDoc>,
}

/// One merge patch: `{kind, name, namespace?, mergePatch}`.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct PatchDoc {
    /// The object's kind (`ClusterQueue`).
    #[serde(default)]
    pub kind: String,
    /// Its name.
    #[serde(default)]
    pub name: String,
    /// Its namespace (namespaced kinds; `default` when absent).
    #[serde(default)]
    pub namespace: Option<String>,
    /// The patch, in the object's API form (`{spec: {stopPolicy: Hold}}`).
    #[serde(default)]
    pub merge_patch: serde_json::Value,
}

/// An object by kind, name and namespace.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ObjectRefDoc {
    /// Kind.
    #[serde(default)]
    pub kind: String,
    /// Name.
    #[serde(default)]
    pub name: String,
    /// Namespace (namespaced kinds; `default` when absent).
    #[serde(default)]
    pub namespace: Option<String>,
}

/// `nodes`: failed, drained and recovered nodes.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct NodesDoc {
    /// Nodes that fail now.
    #[serde(default)]
    pub down: Vec<String>,
    /// Nodes cordoned now.
    #[serde(default)]
    pub drain: Vec<String>,
    /// How long drained nodes' running pods may still run (Go duration).
    #[serde(default)]
    pub drain_deadline: Option<String>,
    /// Nodes back (and uncordoned).
    #[serde(default)]
    pub up: Vec<String>,
}

/// `migLayout`: `{node, config}`.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct MigLayoutDoc {
    /// The node.
    #[serde(default)]
    pub node: String,
    /// A mig-parted config name from the cluster files.
    #[serde(default)]
    pub config: String,
}
