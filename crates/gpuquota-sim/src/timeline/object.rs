//! The kinds a timeline may change (the platform's objects), generic access to them in a
//! [`Model`] by kind and key, and their API-server form.

use gpuquota_model::budget::Budget;
use gpuquota_model::core::{Namespace, Node, PriorityClass, ResourceQuota};
use gpuquota_model::kai::Queue;
use gpuquota_model::kueue::{
    ClusterQueue, Cohort, LocalQueue, ResourceFlavor, WorkloadPriorityClass,
};
use gpuquota_model::{Kind, Model};
use serde_json::Value;

macro_rules! platform {
    ($( $variant:ident : $ty:ty => $field:ident, $api:literal ;)*) => {
        /// One object of a kind a timeline may change, as the API server would store it.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Object {
            $(
                #[doc = concat!("A ", stringify!($variant), ".")]
                $variant(Box<$ty>),
            )*
        }

        impl Object {
            /// Its kind.
            pub fn kind(&self) -> Kind {
                match self {
                    $( Object::$variant(_) => Kind::$variant, )*
                }
            }

            /// Puts it into `model` under `key`; the object it replaced, if any.
            ///
            /// # Complexity
            /// O(log objects of its kind) plus the clone.
            pub(crate) fn put(&self, model: &mut Model, key: &str) -> Option<Object> {
                match self {
                    $( Object::$variant(o) => model
                        .$field
                        .insert(key.to_owned(), (**o).clone())
                        .map(|old| Object::$variant(Box::new(old))), )*
                }
            }
        }

        /// The kinds a timeline may change, in [`Kind`] order.
        pub const KINDS: &[Kind] = &[$( Kind::$variant, )*];

        /// The `apiVersion` the timeline writes for a kind when it re-reads an object.
        pub(crate) fn api_version(kind: Kind) -> Option<&'static str> {
            match kind {
                $( Kind::$variant => Some($api), )*
                _ => None,
            }
        }

        /// Removes the object; the object removed, if it existed.
        pub(crate) fn remove(model: &mut Model, kind: Kind, key: &str) -> Option<Object> {
            match kind {
                $( Kind::$variant => model.$field.remove(key).map(|o| Object::$variant(Box::new(o))), )*
                _ => None,
            }
        }

        /// The object's JSON form, `None` when it does not exist.
        pub(crate) fn value_of(model: &Model, kind: Kind, key: &str) -> Option<Value> {
            match kind {
                $( Kind::$variant => model.$field.get(key).and_then(|o| serde_json::to_value(o).ok()), )*
                _ => None,
            }
        }

        /// Takes every object of the platform kinds out of `model`, sorted by kind then key.
        pub(crate) fn drain(model: &mut Model) -> Vec<(Kind, String, Object)> {
            let mut out = Vec::new();
            $(
                for (k, o) in std::mem::take(&mut model.$field) {
                    out.push((Kind::$variant, k, Object::$variant(Box::new(o))));
                }
            )*
            out
        }

        /// A copy of `model` with the platform kinds, Nodes and ConfigMaps only (no
        /// workloads, pods or workload objects): what a timeline reads and validates.
        pub(crate) fn platform_of(model: &Model) -> Model {
            Model {
                $( $field: model.$field.clone(), )*
                config_maps: model.config_maps.clone(),
                ..Model::default()
            }
        }
    };
}

platform! {
    ResourceFlavor: ResourceFlavor => resource_flavors, "kueue.x-k8s.io/v1beta2";
    ClusterQueue: ClusterQueue => cluster_queues, "kueue.x-k8s.io/v1beta2";
    Cohort: Cohort => cohorts, "kueue.x-k8s.io/v1beta2";
    LocalQueue: LocalQueue => local_queues, "kueue.x-k8s.io/v1beta2";
    WorkloadPriorityClass: WorkloadPriorityClass => workload_priority_classes, "kueue.x-k8s.io/v1beta2";
    PriorityClass: PriorityClass => priority_classes, "scheduling.k8s.io/v1";
    Namespace: Namespace => namespaces, "v1";
    ResourceQuota: ResourceQuota => resource_quotas, "v1";
    Node: Node => nodes, "v1";
    Queue: Queue => queues, "scheduling.run.ai/v2";
    Budget: Budget => budgets, "gpuquota.dev/v1alpha1";
}

/// The kind named `name` if a timeline may change it.
pub(crate) fn kind_named(name: &str) -> Option<Kind> {
    KINDS.iter().copied().find(|k| k.as_str() == name)
}

/// The model key of an object: `namespace/name` for namespaced kinds (namespace `default`
/// when not given, as kubectl assumes), else the name.
pub(crate) fn key_of(kind: Kind, name: &str, namespace: Option<&str>) -> String {
    if kind.is_namespaced() {
        format!("{}/{name}", namespace.unwrap_or("default"))
    } else {
        name.to_owned()
    }
}

/// True when anything but the platform kinds (and ConfigMaps) is in `model`.
pub(crate) fn non_platform(model: &Model) -> Option<&'static str> {
    if !model.workloads.is_empty() {
        Some("Workload")
    } else if !model.pods.is_empty() {
        Some("Pod")
    } else if !model.pod_groups.is_empty() {
        Some("PodGroup")
    } else if model.configuration.is_some() {
        Some("Configuration")
    } else if let Some(o) = model.workload_objects.values().next() {
        Some(o.kind.as_str())
    } else if !model.config_maps.is_empty() {
        Some("ConfigMap")
    } else {
        None
    }
}
