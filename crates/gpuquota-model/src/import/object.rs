//! One typed object of any kind read ([`Object`]): its decoding with unknown-field tracking,
//! and its insertion into the [`Model`] (the smaller canonical copy of a duplicate is kept).

use std::collections::BTreeMap;

use serde_json::Value;

use super::unknown::{Tracked, Unknown};
use crate::core::{Namespace, Node, Pod, PriorityClass, ResourceQuota};
use crate::kai::{PodGroup, Queue};
use crate::kueue::{
    ClusterQueue, Cohort, Configuration, LocalQueue, ResourceFlavor, Workload,
    WorkloadPriorityClass,
};
use crate::meta::ObjectMeta;
use crate::model::{Duplicate, Kind, Model};
use crate::schema;

fn canonical<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

macro_rules! objects {
    ($($kind:ident => $ty:ty, $field:ident;)+) => {
        /// One typed object of any kind gpuquota reads.
        #[derive(Debug)]
        pub(crate) enum Object {
            $($kind(Box<$ty>),)+
            Configuration(Box<Configuration>),
        }

        impl Object {
            pub(crate) fn kind(&self) -> Kind {
                match self {
                    $(Object::$kind(_) => Kind::$kind,)+
                    Object::Configuration(_) => Kind::Configuration,
                }
            }

            pub(super) fn metadata_mut(&mut self) -> Option<&mut ObjectMeta> {
                match self {
                    $(Object::$kind(o) => Some(&mut o.metadata),)+
                    Object::Configuration(_) => None,
                }
            }

            /// `name` or `namespace/name` as reported in diagnostics.
            pub(crate) fn display_name(&self) -> Option<String> {
                let meta = match self {
                    $(Object::$kind(o) => &o.metadata,)+
                    Object::Configuration(o) => &o.metadata,
                };
                let name = if meta.name.is_empty() {
                    meta.other.get("generateName").and_then(|v| v.as_str())?
                } else {
                    meta.name.as_str()
                };
                Some(match &meta.namespace {
                    Some(ns) => format!("{ns}/{name}"),
                    None => name.to_owned(),
                })
            }

            /// Deserializes `kind` from any deserializer, collecting ignored fields.
            pub(crate) fn deserialize_kind<'de, D: serde::Deserializer<'de>>(
                kind: Kind,
                de: D,
                ignored: &mut Vec<(String, Vec<schema::Step>)>,
            ) -> Result<Object, D::Error> {
                let mut unknown = Unknown::default();
                let de = Tracked::new(de, &mut unknown);
                use serde::Deserialize;
                let object = match kind {
                    $(Kind::$kind => <$ty>::deserialize(de).map(|o| Object::$kind(Box::new(o))),)+
                    Kind::Configuration => {
                        Configuration::deserialize(de).map(|o| Object::Configuration(Box::new(o)))
                    }
                };
                // Recorded before an error too: the exact path warns about them either way.
                ignored.append(&mut unknown.fields);
                let mut object = object?;
                object.shrink();
                Ok(object)
            }

            pub(super) fn decode(
                kind: Kind,
                value: Value,
                ignored: &mut Vec<(String, Vec<schema::Step>)>,
            ) -> Result<Object, serde_path_to_error::Error<serde_json::Error>> {
                let mut track = serde_path_to_error::Track::new();
                let de = serde_path_to_error::Deserializer::new(value, &mut track);
                Object::deserialize_kind(kind, de, ignored)
                    .map_err(|e| serde_path_to_error::Error::new(track.path(), e))
            }

            pub(super) fn field_names(kind: Kind, path: &[schema::Step]) -> Option<&'static [&'static str]> {
                match kind {
                    $(Kind::$kind => schema::field_names::<$ty>(path),)+
                    Kind::Configuration => schema::field_names::<Configuration>(path),
                }
            }

            /// Every kind an [`Object`] can hold, in the order of the list below.
            #[cfg(test)]
            const KINDS: &'static [Kind] = &[$(Kind::$kind,)+ Kind::Configuration];

            pub(super) fn insert(self, model: &mut Model, api_version: String) {
                match self {
                    $(Object::$kind(o) => insert_keyed(model, Kind::$kind, *o, |m| &mut m.$field, |o| &o.metadata),)+
                    Object::Configuration(mut config) => {
                        config.api_version = api_version;
                        let config = *config;
                        let kind = Kind::Configuration;
                        match &model.configuration {
                            Some(existing) if canonical(existing) <= canonical(&config) => {
                                model.duplicates.push(Duplicate { kind, name: String::new() });
                            }
                            Some(_) => {
                                model.duplicates.push(Duplicate { kind, name: String::new() });
                                model.configuration = Some(config);
                            }
                            None => model.configuration = Some(config),
                        }
                    }
                }
            }
        }
    };
}

objects! {
    ResourceFlavor => ResourceFlavor, resource_flavors;
    ClusterQueue => ClusterQueue, cluster_queues;
    Cohort => Cohort, cohorts;
    LocalQueue => LocalQueue, local_queues;
    Workload => Workload, workloads;
    WorkloadPriorityClass => WorkloadPriorityClass, workload_priority_classes;
    PriorityClass => PriorityClass, priority_classes;
    Namespace => Namespace, namespaces;
    ResourceQuota => ResourceQuota, resource_quotas;
    Pod => Pod, pods;
    Node => Node, nodes;
    Queue => Queue, queues;
    PodGroup => PodGroup, pod_groups;
    Budget => crate::budget::Budget, budgets;
}

impl Object {
    /// Gives back the spare capacity of the vectors a deserializer grows (a `Vec` read from
    /// a sequence of one element keeps room for four): a Workload's pod sets alone are about
    /// 700 bytes each, so a snapshot of 55,000 Workloads held 150 MB of unused slots.
    ///
    /// # Complexity
    /// Linear in the object's pod sets and containers.
    fn shrink(&mut self) {
        fn pod_spec(spec: &mut crate::core::PodSpec) {
            spec.containers.shrink_to_fit();
            spec.init_containers.shrink_to_fit();
        }
        match self {
            Object::Workload(w) => {
                w.spec.pod_sets.shrink_to_fit();
                for p in &mut w.spec.pod_sets {
                    pod_spec(&mut p.template.spec);
                }
            }
            Object::Pod(p) => pod_spec(&mut p.spec),
            _ => {}
        }
    }
}

fn insert_keyed<T, F, M>(model: &mut Model, kind: Kind, object: T, map: F, meta: M)
where
    T: serde::Serialize,
    F: Fn(&mut Model) -> &mut BTreeMap<String, T>,
    M: Fn(&T) -> &ObjectMeta,
{
    let m = meta(&object);
    let key = if kind.is_namespaced() {
        // Not `format!`: this runs once per object, and the formatting machinery costs
        // more than the two copies.
        let namespace = m.namespace.as_deref().unwrap_or("default");
        let mut key = String::with_capacity(namespace.len() + 1 + m.name.len());
        key.push_str(namespace);
        key.push('/');
        key.push_str(&m.name);
        key
    } else {
        m.name.clone()
    };
    let target = map(model);
    let replace = match target.get(&key) {
        None => true,
        Some(existing) => {
            let keep_new = canonical(&object) < canonical(existing);
            model.duplicates.push(Duplicate {
                kind,
                name: key.clone(),
            });
            keep_new
        }
    };
    if replace {
        map(model).insert(key, object);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Kind::ALL` (written out in the model) lists exactly the kinds read, in this order.
    #[test]
    fn every_kind_is_read() {
        assert_eq!(Kind::ALL, Object::KINDS);
    }
}
