//! The parts of Kueue's `Configuration` that change what a workload asks for:
//! `resources.excludeResourcePrefixes` and `resources.transformations`, applied to every
//! PodSet's per-pod requests exactly where Kueue applies them (after the pod's effective
//! requests are computed, before they are multiplied by the pod count; upstream
//! `totalRequestsFromPodSets` in kubernetes-sigs/kueue: pkg/workload/workload.go, with the
//! types of kubernetes-sigs/kueue: apis/config/v1beta2/configuration_types.go).
//!
//! Rules, one by one:
//!
//! 1. A request whose resource name starts with one of `excludeResourcePrefixes` is dropped.
//! 2. A remaining request whose name is the `input` of a transformation produces, for every
//!    `outputs` entry, `quantity × factor` (exact decimal arithmetic); with `multiplyBy`, the
//!    quantity is first multiplied by the request of the resource `multiplyBy` names, when the
//!    pod requests it. Outputs of several inputs under one name are summed; a negative sum is
//!    0. `strategy: Retain` (the default) keeps the input request as requested, `Replace`
//!    drops it (`Replace` with no outputs makes Kueue ignore the resource).
//! 3. Requests that no transformation names are kept; a kept request and an output of the same
//!    name are summed.
//!
//! `resources.deviceClassMappings` (Dynamic Resource Allocation) map device classes to a quota
//! resource: a PodSet's claims from templates add their devices to that resource in its
//! per-pod requests, after the rules above (upstream `totalRequestsFromPodSets` adds the
//! preprocessed DRA resources after the transformations); see
//! `gpuquota_model::workloads::dra` for the count and for what Kueue refuses. The
//! Configuration is checked as Kueue's `validateDeviceClassMappings` checks it
//! (kubernetes-sigs/kueue: pkg/config/validation.go): at most 16 mappings, each with a name
//! used once and 1 to 8 device classes, a class named once per mapping and mapped to one
//! resource only. A mapping's `sources` (partitionable devices' counters, consumable
//! capacity; both on by default in Kueue 0.19) are not modelled: a warning names the field,
//! and a Workload using such a class stays pending with a message saying so.
//!
//! `featureGates` are read into [`FeatureGates`]: see [`gates`] for the
//! list of every upstream gate, those honoured, those accepted silently and those warned about.
//!
//! Not modelled (each a warning naming the field):
//! `resources.quotaCheckStrategy: IgnoreUndeclared`, and the Configuration fields that change
//! admission but that the engine does not simulate (`waitForPodsReady`, the feature gates that
//! change decisions but are not modelled, `multiKueue`, ...). Fields that only configure the controller process (`health`,
//! `metrics`, `webhook`, `leaderElection`, `controller`, `clientConnection`,
//! `internalCertManagement`, `namespace`) and the job-integration fields the importer reads
//! (`integrations`, `manageJobsWithoutQueueName`, `managedJobsNamespaceSelector`) do not
//! change what the engine decides and are passed over without a warning.

use std::collections::BTreeMap;

pub mod gates;
pub use gates::{FeatureGates, GateInfo, GateKind, UPSTREAM_GATES, gate_info};

use gpuquota_model::core::ResourceList;
use gpuquota_model::kueue::Configuration;
use gpuquota_model::{Quantity, ResourceName};

/// The Configuration field of the PodsReady timeout: the admission engine warns that it
/// does not model it (a run in time, the simulator, does).
pub const WAIT_FOR_PODS_READY: &str = "waitForPodsReady";

/// One `resources.transformations` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Transformation {
    /// `input`.
    pub input: ResourceName,
    /// `strategy: Replace` (else `Retain`).
    pub replace: bool,
    /// `multiplyBy`.
    pub multiply_by: Option<ResourceName>,
    /// `outputs`: quantity per unit of input.
    pub outputs: BTreeMap<ResourceName, Quantity>,
}

/// `resources.excludeResourcePrefixes` and `resources.transformations`, checked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResourceRules {
    /// `excludeResourcePrefixes`.
    pub exclude_prefixes: Vec<String>,
    /// `transformations`, by input.
    pub transformations: BTreeMap<ResourceName, Transformation>,
    /// `deviceClassMappings` (DRA), by device class: the quota resource it counts under,
    /// and whether its mapping has `sources` (counter- or capacity-backed quota, not
    /// modelled). The first mapping naming a class wins, as upstream's mapper keeps it
    /// (kubernetes-sigs/kueue: pkg/dra/mapper.go, `PopulateFromConfiguration`).
    pub device_class_mappings: BTreeMap<String, (String, bool)>,
    /// `featureGates` (the Configuration's top-level field, read with the rules).
    pub feature_gates: FeatureGates,
}

/// `resources.deviceClassMappings`, checked as upstream's `validateDeviceClassMappings`.
#[cfg(feature = "serde")]
fn device_class_mappings(
    path: &str,
    items: &[serde_json::Value],
    rules: &mut ResourceRules,
    warnings: &mut Vec<ConfigFinding>,
    errors: &mut Vec<ConfigFinding>,
) {
    if items.len() > 16 {
        errors.push((
            path.to_owned(),
            format!("Too many: {}: must have at most 16 items", items.len()),
        ));
    }
    let mut names: Vec<&str> = Vec::new();
    for (i, m) in items.iter().enumerate() {
        let base = format!("{path}[{i}]");
        let name = m
            .get("name")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("");
        if name.is_empty() {
            errors.push((format!("{base}.name"), "Required value".into()));
        } else if names.contains(&name) {
            errors.push((format!("{base}.name"), format!("Duplicate value: {name:?}")));
        } else {
            names.push(name);
        }
        let sources = m
            .get("sources")
            .and_then(serde_json::Value::as_array)
            .is_some_and(|s| !s.is_empty());
        if sources {
            warnings.push((
                format!("{base}.sources"),
                "counter- and capacity-backed quota (partitionable devices, consumable capacity) \
                 is not modelled; Workloads using these device classes stay pending"
                    .into(),
            ));
        }
        for k in m.as_object().into_iter().flat_map(|o| o.keys()) {
            if !matches!(k.as_str(), "name" | "deviceClassNames" | "sources") {
                warnings.push((format!("{base}.{k}"), "unknown field; ignored".into()));
            }
        }
        let classes: Vec<&serde_json::Value> = m
            .get("deviceClassNames")
            .and_then(serde_json::Value::as_array)
            .map(|l| l.iter().collect())
            .unwrap_or_default();
        if classes.is_empty() {
            errors.push((
                format!("{base}.deviceClassNames"),
                "Required value: at least one device class name is required".into(),
            ));
        }
        if classes.len() > 8 {
            errors.push((
                format!("{base}.deviceClassNames"),
                format!("Too many: {}: must have at most 8 items", classes.len()),
            ));
        }
        let mut seen: Vec<&str> = Vec::new();
        for (j, dc) in classes.iter().enumerate() {
            let at = format!("{base}.deviceClassNames[{j}]");
            let Some(dc) = dc.as_str() else {
                errors.push((at, "must be a string".into()));
                continue;
            };
            if seen.contains(&dc) {
                errors.push((at, format!("Duplicate value: {dc:?}")));
                continue;
            }
            seen.push(dc);
            match rules.device_class_mappings.get(dc) {
                Some((existing, _)) if existing != name => errors.push((
                    at,
                    format!(
                        "Invalid value: {dc:?}: device class already mapped to resource {existing}"
                    ),
                )),
                Some(_) => {}
                None => {
                    rules
                        .device_class_mappings
                        .insert(dc.to_owned(), (name.to_owned(), sources));
                }
            }
        }
    }
}

/// A problem or warning found in the Configuration: (field path, message).
pub type ConfigFinding = (String, String);

/// Configuration fields that only configure the controller process or the job integrations
/// (which the importer applies): they do not change what the engine decides.
const NO_DECISION_EFFECT: &[&str] = &[
    "apiVersion",
    "kind",
    "namespace",
    "health",
    "metrics",
    "webhook",
    "leaderElection",
    "controller",
    "clientConnection",
    "internalCertManagement",
    "pprofBindAddress",
    "integrations",
    "manageJobsWithoutQueueName",
    "managedJobsNamespaceSelector",
    "objectRetentionPolicies",
];

impl ResourceRules {
    /// Reads the rules from the Configuration: `Ok((rules, warnings))`, or every invalid field
    /// (Kueue's config validation refuses to start with them).
    ///
    /// # Errors
    /// Field paths and messages of every invalid entry.
    ///
    /// # Complexity
    /// O(fields + transformations × outputs × log).
    pub fn from_configuration(
        config: Option<&Configuration>,
    ) -> Result<(ResourceRules, Vec<ConfigFinding>), Vec<ConfigFinding>> {
        #[cfg_attr(not(feature = "serde"), allow(unused_mut))]
        let mut rules = ResourceRules::default();
        let mut warnings = Vec::new();
        #[cfg_attr(not(feature = "serde"), allow(unused_mut))]
        let mut errors = Vec::new();
        let Some(config) = config else {
            return Ok((rules, warnings));
        };
        for (key, _value) in &config.other {
            if NO_DECISION_EFFECT.contains(&key.as_str()) {
                continue;
            }
            // feature gates one by one (see [`FeatureGates::read`])
            #[cfg(feature = "serde")]
            if key == "featureGates" {
                rules.feature_gates =
                    FeatureGates::read(_value.as_value(), &mut warnings, &mut errors);
                continue;
            }
            warnings.push((
                key.clone(),
                "not modelled by the admission engine; ignored (the run is as if it were unset)"
                    .to_owned(),
            ));
        }
        // read into the model, but the admission engine has no time: the simulator models it
        if config.wait_for_pods_ready.is_some() {
            warnings.push((
                WAIT_FOR_PODS_READY.to_owned(),
                "not modelled by the admission engine; ignored (the run is as if it were unset)"
                    .to_owned(),
            ));
        }
        // `resources` is kept verbatim only with the `serde` feature.
        #[cfg(feature = "serde")]
        let Some(res) = &config.resources else {
            // `featureGates` may have found errors
            return if errors.is_empty() {
                Ok((rules, warnings))
            } else {
                errors.sort();
                Err(errors)
            };
        };
        #[cfg(feature = "serde")]
        let Some(obj) = res.as_object() else {
            return Err(vec![("resources".into(), "must be an object".into())]);
        };
        #[cfg(feature = "serde")]
        let quota_check_strategy = rules.feature_gates.quota_check_strategy;
        #[cfg(feature = "serde")]
        for (key, value) in obj {
            let path = format!("resources.{key}");
            match key.as_str() {
                "excludeResourcePrefixes" => match value.as_array() {
                    Some(items) => {
                        for (i, item) in items.iter().enumerate() {
                            match item.as_str() {
                                Some(p) => rules.exclude_prefixes.push(p.to_owned()),
                                None => errors.push((format!("{path}[{i}]"), "must be a string".into())),
                            }
                        }
                    }
                    None if value.is_null() => {}
                    None => errors.push((path, "must be a list of strings".into())),
                },
                "transformations" => match value.as_array() {
                    Some(items) => {
                        for (i, item) in items.iter().enumerate() {
                            let base = format!("{path}[{i}]");
                            match transformation(&base, item, &mut warnings) {
                                Ok(t) => {
                                    if rules.transformations.contains_key(&t.input) {
                                        errors.push((
                                            format!("{base}.input"),
                                            format!("Duplicate value: {:?}", t.input.as_str()),
                                        ));
                                    } else {
                                        rules.transformations.insert(t.input.clone(), t);
                                    }
                                }
                                Err(mut e) => errors.append(&mut e),
                            }
                        }
                    }
                    None if value.is_null() => {}
                    None => errors.push((path, "must be a list".into())),
                },
                "quotaCheckStrategy" => match value.as_str() {
                    None if value.is_null() => {}
                    Some("BlockUndeclared") => {}
                    // with the gate off Kueue does not read the field
                    Some("IgnoreUndeclared") if !quota_check_strategy => {}
                    Some("IgnoreUndeclared") => warnings.push((
                        path,
                        "IgnoreUndeclared is not modelled; resources a ClusterQueue does not cover are checked as with BlockUndeclared".into(),
                    )),
                    Some(other) => errors.push((
                        path,
                        format!("Unsupported value: {other:?}: supported values: BlockUndeclared, IgnoreUndeclared"),
                    )),
                    None => errors.push((path, "must be a string".into())),
                },
                "deviceClassMappings" => match value.as_array() {
                    Some(items) => device_class_mappings(&path, items, &mut rules, &mut warnings, &mut errors),
                    None if value.is_null() => {}
                    None => errors.push((path, "must be a list".into())),
                },
                _ => warnings.push((path, "unknown field; ignored".into())),
            }
        }
        warnings.sort();
        errors.sort();
        if errors.is_empty() {
            Ok((rules, warnings))
        } else {
            Err(errors)
        }
    }

    /// The mapping of device class `dc`: the quota resource and whether it has `sources`.
    pub fn device_class(&self, dc: &str) -> Option<(&str, bool)> {
        self.device_class_mappings
            .get(dc)
            .map(|(r, s)| (r.as_str(), *s))
    }

    /// True when the rules change nothing.
    pub fn is_empty(&self) -> bool {
        self.exclude_prefixes.is_empty() && self.transformations.is_empty()
    }

    /// The per-pod requests after the rules; `None` when a product or sum cannot be held
    /// exactly.
    ///
    /// # Complexity
    /// O(requests × (prefixes + outputs × log)).
    pub fn apply(&self, requests: &ResourceList) -> Option<ResourceList> {
        if self.is_empty() {
            return Some(requests.clone());
        }
        let kept: ResourceList = requests
            .iter()
            .filter(|(r, _)| {
                !self
                    .exclude_prefixes
                    .iter()
                    .any(|p| r.as_str().starts_with(p.as_str()))
            })
            .map(|(r, q)| (r.clone(), *q))
            .collect();
        let mut retained = ResourceList::new();
        let mut generated = ResourceList::new();
        for (name, q) in &kept {
            let Some(t) = self.transformations.get(name) else {
                retained.insert(name.clone(), *q);
                continue;
            };
            let mut base = *q;
            if let Some(m) = &t.multiply_by
                && let Some(mq) = kept.get(m)
            {
                base = mul(base, *mq)?;
            }
            for (out, factor) in &t.outputs {
                let v = mul(base, *factor)?;
                let cur = generated.get(out).copied().unwrap_or(Quantity::ZERO);
                generated.insert(out.clone(), add(cur, v)?.with_format(factor.format()));
            }
            if !t.replace {
                retained.insert(name.clone(), *q);
            }
        }
        for (name, q) in generated {
            let q = if q.is_negative() { Quantity::ZERO } else { q };
            let cur = retained.get(&name).copied();
            let v = match cur {
                Some(c) => add(c, q)?,
                None => q,
            };
            retained.insert(name, v);
        }
        Some(retained)
    }
}

#[cfg(feature = "serde")]
fn transformation(
    base: &str,
    v: &serde_json::Value,
    warnings: &mut Vec<ConfigFinding>,
) -> Result<Transformation, Vec<ConfigFinding>> {
    let mut errors = Vec::new();
    let Some(obj) = v.as_object() else {
        return Err(vec![(base.to_owned(), "must be an object".into())]);
    };
    let input = match obj.get("input").and_then(|x| x.as_str()) {
        Some(s) if !s.is_empty() => ResourceName::new(s),
        _ => {
            errors.push((format!("{base}.input"), "Required value".into()));
            ResourceName::new("")
        }
    };
    let replace = match obj.get("strategy").and_then(|x| x.as_str()) {
        None | Some("Retain") => false,
        Some("Replace") => true,
        Some(other) => {
            errors.push((
                format!("{base}.strategy"),
                format!("Unsupported value: {other:?}: supported values: Retain, Replace"),
            ));
            false
        }
    };
    let multiply_by = obj
        .get("multiplyBy")
        .and_then(|x| x.as_str())
        .filter(|s| !s.is_empty())
        .map(ResourceName::new);
    let mut outputs = BTreeMap::new();
    if let Some(outs) = obj.get("outputs") {
        match outs.as_object() {
            Some(m) => {
                for (k, q) in m {
                    match serde_json::from_value::<Quantity>(q.clone()) {
                        Ok(q) => {
                            outputs.insert(ResourceName::new(k.as_str()), q);
                        }
                        Err(e) => errors.push((format!("{base}.outputs[{k}]"), e.to_string())),
                    }
                }
            }
            None if outs.is_null() => {}
            None => errors.push((format!("{base}.outputs"), "must be a map".into())),
        }
    }
    for k in obj.keys() {
        if !matches!(k.as_str(), "input" | "strategy" | "multiplyBy" | "outputs") {
            warnings.push((format!("{base}.{k}"), "unknown field; ignored".into()));
        }
    }
    if errors.is_empty() {
        Ok(Transformation {
            input,
            replace,
            multiply_by,
            outputs,
        })
    } else {
        Err(errors)
    }
}

fn mul(a: Quantity, b: Quantity) -> Option<Quantity> {
    let (m1, e1) = a.as_decimal();
    let (m2, e2) = b.as_decimal();
    Quantity::from_decimal(m1.checked_mul(m2)?, e1.checked_add(e2)?)
        .map(|q| q.with_format(a.format()))
}

fn add(a: Quantity, b: Quantity) -> Option<Quantity> {
    let (m1, e1) = a.as_decimal();
    let (m2, e2) = b.as_decimal();
    let e = e1.min(e2);
    let scale = |m: i128, from: i32| -> Option<i128> {
        m.checked_mul(10_i128.checked_pow(u32::try_from(from - e).ok()?)?)
    };
    Quantity::from_decimal(scale(m1, e1)?.checked_add(scale(m2, e2)?)?, e)
        .map(|q| q.with_format(a.format()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).expect("quantity")
    }

    fn rules(yaml: &str) -> ResourceRules {
        let v: serde_json::Value = serde_json::from_str(yaml).expect("json");
        let c = Configuration {
            resources: Some(v.into()),
            ..Configuration::default()
        };
        ResourceRules::from_configuration(Some(&c))
            .expect("valid")
            .0
    }

    fn list(items: &[(&str, &str)]) -> ResourceList {
        items
            .iter()
            .map(|(r, v)| (ResourceName::new(*r), q(v)))
            .collect()
    }

    #[test]
    fn exclude_then_transform_like_upstream() {
        let r = rules(
            r#"{"excludeResourcePrefixes": ["example.com/ignored"],
                "transformations": [
                  {"input": "nvidia.com/mig-1g.5gb", "strategy": "Replace",
                   "outputs": {"example.com/accelerator-memory": "5Gi", "example.com/credits": "10"}},
                  {"input": "cpu", "strategy": "Retain", "outputs": {"example.com/credits": "1"}}
                ]}"#,
        );
        let out = r
            .apply(&list(&[
                ("nvidia.com/mig-1g.5gb", "2"),
                ("cpu", "500m"),
                ("example.com/ignored-thing", "7"),
            ]))
            .expect("fits");
        assert_eq!(
            out,
            list(&[
                ("cpu", "500m"),
                ("example.com/accelerator-memory", "10Gi"),
                // 2 × 10 + 0.5 × 1
                ("example.com/credits", "20500m"),
            ])
        );
    }

    #[test]
    fn multiply_by_scales_outputs_not_the_retained_input() {
        let r = rules(
            r#"{"transformations": [{"input": "example.com/gpu-memory", "multiplyBy": "nvidia.com/gpu",
                 "outputs": {"example.com/total-memory": "1"}}]}"#,
        );
        let out = r
            .apply(&list(&[
                ("example.com/gpu-memory", "8Gi"),
                ("nvidia.com/gpu", "4"),
            ]))
            .expect("fits");
        assert_eq!(
            out,
            list(&[
                ("example.com/gpu-memory", "8Gi"),
                ("example.com/total-memory", "32Gi"),
                ("nvidia.com/gpu", "4"),
            ])
        );
    }

    #[test]
    fn replace_without_outputs_ignores_the_resource_and_negative_sums_are_zero() {
        let r = rules(
            r#"{"transformations": [
                 {"input": "example.com/noise", "strategy": "Replace"},
                 {"input": "example.com/allowance", "strategy": "Replace", "outputs": {"example.com/credits": "-5"}}]}"#,
        );
        let out = r
            .apply(&list(&[
                ("example.com/noise", "3"),
                ("example.com/allowance", "1"),
                ("example.com/credits", "2"),
            ]))
            .expect("fits");
        // the generated -5 is floored to 0 on its own; it does not reduce the request of 2
        assert_eq!(out, list(&[("example.com/credits", "2")]));
    }

    #[test]
    fn invalid_entries_are_all_reported() {
        let v: serde_json::Value = serde_json::from_str(
            r#"{"transformations": [{"strategy": "Swap"}, {"input": "cpu"}, {"input": "cpu"}],
                "quotaCheckStrategy": "Sometimes"}"#,
        )
        .expect("json");
        let c = Configuration {
            resources: Some(v.into()),
            ..Configuration::default()
        };
        let e = ResourceRules::from_configuration(Some(&c)).unwrap_err();
        let fields: Vec<&str> = e.iter().map(|x| x.0.as_str()).collect();
        assert_eq!(
            fields,
            [
                "resources.quotaCheckStrategy",
                "resources.transformations[0].input",
                "resources.transformations[0].strategy",
                "resources.transformations[2].input",
            ]
        );
    }

    // kubernetes-sigs/kueue: pkg/config/validation.go, `validateDeviceClassMappings`;
    // pkg/dra/mapper.go (the first mapping of a class wins)
    #[test]
    fn device_class_mappings_are_read_and_checked_like_upstream() {
        let r = rules(
            r#"{"deviceClassMappings": [
                 {"name": "nvidia.com/gpu", "deviceClassNames": ["gpu.nvidia.com", "gpu.example.com"]},
                 {"name": "example.com/mig", "deviceClassNames": ["mig.nvidia.com"],
                  "sources": [{"counter": {"driver": "gpu.nvidia.com", "name": "memory"}}]}]}"#,
        );
        assert_eq!(
            r.device_class("gpu.example.com"),
            Some(("nvidia.com/gpu", false))
        );
        assert_eq!(
            r.device_class("mig.nvidia.com"),
            Some(("example.com/mig", true))
        );
        assert_eq!(r.device_class("nic.example.com"), None);
        // the mappings change no request by themselves
        assert!(r.is_empty());
        let v: serde_json::Value = serde_json::from_str(
            r#"{"deviceClassMappings": [
                 {"name": "a", "deviceClassNames": ["x", "x"]},
                 {"name": "a", "deviceClassNames": []},
                 {"name": "b", "deviceClassNames": ["x"]}]}"#,
        )
        .expect("json");
        let c = Configuration {
            resources: Some(v.into()),
            ..Configuration::default()
        };
        let e = ResourceRules::from_configuration(Some(&c)).unwrap_err();
        assert_eq!(
            e,
            [
                (
                    "resources.deviceClassMappings[0].deviceClassNames[1]".to_owned(),
                    "Duplicate value: \"x\"".to_owned()
                ),
                (
                    "resources.deviceClassMappings[1].deviceClassNames".to_owned(),
                    "Required value: at least one device class name is required".to_owned()
                ),
                (
                    "resources.deviceClassMappings[1].name".to_owned(),
                    "Duplicate value: \"a\"".to_owned()
                ),
                (
                    "resources.deviceClassMappings[2].deviceClassNames[0]".to_owned(),
                    "Invalid value: \"x\": device class already mapped to resource a".to_owned()
                ),
            ]
        );
    }
}
