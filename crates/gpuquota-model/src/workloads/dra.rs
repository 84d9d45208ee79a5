//! Dynamic Resource Allocation (`resource.k8s.io`): DeviceClass, ResourceClaim,
//! ResourceClaimTemplate and ResourceSlice, and the `spec.resourceClaims` of pods and pod
//! templates, read as three upstream components count them.
//!
//! The four kinds are read in `resource.k8s.io/v1` (and `v1beta1`, `v1beta2`, whose claim
//! requests are read in both shapes: `exactly: {deviceClassName, allocationMode, count}` of
//! `v1`/`v1beta2`, and the same fields directly on the request in `v1beta1`). They are kept
//! in [`Model::workload_objects`](crate::Model::workload_objects) like LimitRanges (key
//! `Kind/namespace/name`; the cluster-scoped DeviceClass and ResourceSlice under the
//! namespace `default`) and never get an unknown-field warning. Another version is read
//! the same way, with a warning.
//!
//! A request's `allocationMode` defaults to `ExactCount` and its `count` to 1, as the API
//! server defaults them (kubernetes/kubernetes: pkg/apis/resource/v1/defaults.go).
//!
//! # What each engine counts
//!
//! | Engine | Counts | Upstream file |
//! |---|---|---|
//! | Kueue | per pod, per claim from a template (`resourceClaimTemplateName`), per `exactly` request with `ExactCount`: `count` devices of its class, mapped to a quota resource by the Configuration's `resources.deviceClassMappings` and added to the PodSet's per-pod requests (so × the PodSet's count); `adminAccess: true` requests count 0 ([`kueue_requests`]) | kubernetes-sigs/kueue: pkg/dra/claims.go, pkg/dra/mapper.go, pkg/workload/workload.go (`totalRequestsFromPodSets`) |
//! | Kueue refuses (the Workload stays pending, reason `Misconfigured`) | a claim by name (`resourceClaimName`), `allocationMode: All` or another mode, `firstAvailable`, a request with neither `exactly` nor `firstAvailable`, a device class with no mapping, a missing template | kubernetes-sigs/kueue: pkg/controller/core/workload_controller.go (`handleDRA`), pkg/dra/claims.go |
//! | ResourceQuota | per ResourceClaim (one per pod per template claim): `count/resourceclaims.resource.k8s.io` 1 and `<class>.deviceclass.resource.k8s.io/devices` = `count` (`ExactCount`), [`ALLOCATION_RESULTS_MAX_SIZE`] (`All`), the largest alternative per class (`firstAvailable`), 0 for an unknown mode ([`claim_quota_usage`]) | kubernetes/kubernetes: pkg/quota/v1/evaluator/core/resource_claims.go |
//! | KAI | per pod, per claim (by name, or the claim its template makes): `exactly` requests whose class name contains `gpu` (any case) count as GPUs, `ExactCount` its `count` (0 → 1), `All` as 1; a node offers the devices of the ResourceSlices for it (`nodeName`, or `allNodes`) whose driver contains `gpu` ([`kai_pod_gpus`], [`kai_node_gpus`]) | NVIDIA/KAI-Scheduler: pkg/common/resources/dra.go, pkg/common/resources/dra_node_resources.go |
//!
//! # Every kind and field, and what becomes of it
//!
//! | Kind / field | Read by | Decision | Upstream file |
//! |---|---|---|---|
//! | Pod (and every pod template) `spec.resourceClaims[].name`, `resourceClaimTemplateName` | Kueue, ResourceQuota, KAI | modelled as in the table above | kubernetes-sigs/kueue: pkg/dra/claims.go; NVIDIA/KAI-Scheduler: pkg/common/resources/dra.go |
//! | Pod `spec.resourceClaims[].resourceClaimName` | Kueue, KAI | Kueue: refused (pending, `Misconfigured`, "KueueDRAIntegration feature does not support use of resource claims"); KAI: the named claim counted; ResourceQuota: not charged per pod (the claim exists once) | kubernetes-sigs/kueue: pkg/controller/core/workload_controller.go, pkg/workload/workload.go (`HasResourceClaim`) |
//! | Pod `status.resourceClaimStatuses` | KAI | the claim a template made, when it is in the files | NVIDIA/KAI-Scheduler: pkg/common/resources/dra.go (`GetResourceClaimName`) |
//! | containers' `resources.claims` | — | kept, not read: every claim of the pod counts whatever container uses it, as upstream counts per pod | kubernetes-sigs/kueue: pkg/dra/claims.go |
//! | ResourceClaimTemplate `spec.spec.devices.requests[]` | Kueue, ResourceQuota, KAI | modelled | as above |
//! | ResourceClaim `spec.devices.requests[]` | ResourceQuota (claim by name: not per pod), KAI | modelled | as above |
//! | request `exactly.deviceClassName`, `allocationMode`, `count`, `adminAccess` | all | modelled (`adminAccess: true`: Kueue 0) | kubernetes-sigs/kueue: pkg/dra/claims.go |
//! | request `firstAvailable[]` | all | Kueue: refused; ResourceQuota: largest alternative per class; KAI: 0 | kubernetes-sigs/kueue: pkg/dra/claims.go; kubernetes/kubernetes: pkg/quota/v1/evaluator/core/resource_claims.go; NVIDIA/KAI-Scheduler: pkg/common/resources/dra.go |
//! | request `exactly.selectors[]` (CEL) | — | warned (`not-modelled`): not evaluated, every device of the class is taken to match (Kueue also compiles them and checks them against the cluster's devices) | kubernetes-sigs/kueue: pkg/dra/claims.go (`validateCELSelectorsAgainstDevices`) |
//! | claim `devices.constraints`, `devices.config` | — | warned (`not-modelled`) | — |
//! | a request of the wrong shape (`count: "2"`) | — | warned (`invalid-workload-object`); the claim counts no devices | — |
//! | DeviceClass (any field) | — | read (kept); its `selectors` and `config` are not needed by any count (Kueue maps the class by name, KAI tests the name) | kubernetes-sigs/kueue: pkg/dra/mapper.go |
//! | DeviceClass `spec.extendedResourceName` | — | warned (`not-modelled`): extended resources backed by DRA | kubernetes-sigs/kueue: pkg/dra/extended_resources.go |
//! | ResourceSlice `spec.driver`, `nodeName`, `allNodes`, `devices[]` | KAI | modelled: the node's GPUs (added to its `nvidia.com/gpu` allocatable) | NVIDIA/KAI-Scheduler: pkg/common/resources/dra_node_resources.go |
//! | ResourceSlice `spec.sharedCounters`, `devices[].consumesCounters` | — | warned (`not-modelled`): partitionable devices | kubernetes-sigs/kueue: pkg/dra/counters.go |
//! | ResourceSlice `spec.pool`, `nodeSelector`, device `attributes`, `capacity` | — | kept, not read | — |
//! | Configuration `resources.deviceClassMappings[].name`, `deviceClassNames` | Kueue | modelled and validated | kubernetes-sigs/kueue: pkg/dra/mapper.go, pkg/config/validation.go |
//! | Configuration `resources.deviceClassMappings[].sources` | — | warned: counter- and capacity-backed quota (partitionable devices / MIG counters, consumable capacity; Kueue 0.19 turns the first on by default) is not modelled; a Workload using such a class stays pending with a message saying so, rather than being charged nothing | kubernetes-sigs/kueue: pkg/dra/counters.go, pkg/dra/capacity.go |
//! | ResourceQuota `spec.hard[<class>.deviceclass.resource.k8s.io/devices]`, `[count/resourceclaims.resource.k8s.io]` | Kueue engine, ResourceQuota engine | valid (whole numbers); caps the claims the pods of Workloads with a reservation (running, in the simulator) make from templates, plus the claims by name in the namespace | kubernetes/kubernetes: pkg/quota/v1/evaluator/core/resource_claims.go |
//! | ResourceQuota `spec.hard[requests.<class>.deviceclass.resource.k8s.io/devices]` | — | valid, warned (`ignored-by-engines`): the evaluator charges claims under the key without `requests.`, so it caps nothing | kubernetes/kubernetes: pkg/quota/v1/evaluator/core/resource_claims.go |
//!
//! Deviations: upstream examines the device classes of one template in map order when
//! several are unmapped; gpuquota names the first in name order. A template missing from
//! the files leaves the Workload pending with the message Kueue's failed lookup gives
//! (`failed to get claim spec for ResourceClaimTemplate … not found`) and a
//! `missing-reference` warning. ResourceQuota usage is the claims of the Workloads with a
//! reservation plus the namespace's ResourceClaim objects that no pod owns (claims by
//! name); a claim a pod owns was made from a template and counts with its Workload. A pod or pod template naming a claim or template that
//! is not in the files gets a `missing-reference` warning. Kubernetes' DRA scheduling
//! (which device a claim is allocated from, per node) is not modelled beyond KAI's per-node
//! GPU count.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{ObjectKind, Warnings, WorkloadObject, codes};
use crate::core::PodSpec;
use crate::kueue::PodSet;
use crate::model::Model;

/// The API group of the DRA kinds.
pub const GROUP: &str = "resource.k8s.io";
/// The API versions read without a warning.
pub const VERSIONS: &[&str] = &["v1", "v1beta1", "v1beta2"];
/// The suffix of a ResourceQuota key counting the devices of one class
/// (`<class>.deviceclass.resource.k8s.io/devices`).
pub const CLAIMS_PER_CLASS_SUFFIX: &str = ".deviceclass.resource.k8s.io/devices";
/// The ResourceQuota key counting ResourceClaim objects.
pub const CLAIM_OBJECT_COUNT: &str = "count/resourceclaims.resource.k8s.io";
/// The most devices one allocation holds (`AllocationResultsMaxSize`); kube's claim
/// evaluator charges an `All` request this many.
pub const ALLOCATION_RESULTS_MAX_SIZE: i64 = 32;
/// Kueue's message for a Workload with a claim referenced by name.
pub const KUEUE_CLAIM_BY_NAME: &str =
    "KueueDRAIntegration feature does not support use of resource claims";

/// One entry of a pod's `spec.resourceClaims`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodClaim {
    /// `name` (what containers' `resources.claims` refer to).
    pub name: String,
    /// `resourceClaimName`: a shared claim by name.
    pub claim: Option<String>,
    /// `resourceClaimTemplateName`: a claim made per pod from this template.
    pub template: Option<String>,
}

/// One device request of a claim spec, in the `v1` shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceRequest {
    /// `exactly` (or a `v1beta1` request's own fields).
    Exactly(ExactRequest),
    /// `firstAvailable`: alternatives, in order.
    FirstAvailable(Vec<ExactRequest>),
    /// Neither is set.
    Neither,
}

/// An exact device request (or one `firstAvailable` alternative).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExactRequest {
    /// `deviceClassName`.
    pub device_class_name: String,
    /// `allocationMode` (default `ExactCount`).
    pub allocation_mode: String,
    /// `count` (default 1 with `ExactCount`, 0 otherwise).
    pub count: i64,
    /// `adminAccess: true`.
    pub admin_access: bool,
    /// Has `selectors`.
    pub has_selectors: bool,
}

/// The pod claims of `spec` (`spec.resourceClaims`); entries that are not objects are
/// skipped (the warning pass names them).
pub fn pod_claims(spec: &PodSpec) -> Vec<PodClaim> {
    let Some(list) = spec
        .other
        .get("resourceClaims")
        .and_then(|v| v.as_value().as_array())
    else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|c| {
            let str_of = |k: &str| c.get(k).and_then(Value::as_str).map(str::to_owned);
            Some(PodClaim {
                name: str_of("name").unwrap_or_default(),
                claim: c.as_object().and_then(|_| str_of("resourceClaimName")),
                template: c
                    .as_object()
                    .and_then(|_| str_of("resourceClaimTemplateName")),
            })
            .filter(|_| c.is_object())
        })
        .collect()
}

fn exact(v: &Value) -> Result<ExactRequest, String> {
    let mode = match v.get("allocationMode") {
        None | Some(Value::Null) => "ExactCount".to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err("allocationMode: must be a string".into()),
    };
    let count = match v.get("count") {
        None | Some(Value::Null) => i64::from(mode == "ExactCount"),
        Some(c) => c.as_i64().ok_or("count: must be an integer")?,
    };
    Ok(ExactRequest {
        device_class_name: v
            .get("deviceClassName")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        allocation_mode: mode,
        count,
        admin_access: v.get("adminAccess").and_then(Value::as_bool) == Some(true),
        has_selectors: v
            .get("selectors")
            .and_then(Value::as_array)
            .is_some_and(|s| !s.is_empty()),
    })
}

/// The device requests of a ResourceClaimSpec (`devices.requests`).
///
/// # Errors
/// The field (relative to the claim spec) and problem of the first request of the wrong
/// shape.
pub fn device_requests(claim_spec: &Value) -> Result<Vec<DeviceRequest>, String> {
    let Some(reqs) = claim_spec.get("devices").and_then(|d| d.get("requests")) else {
        return Ok(Vec::new());
    };
    let Some(reqs) = reqs.as_array() else {
        return Err("devices.requests: must be a list".into());
    };
    let mut out = Vec::with_capacity(reqs.len());
    for (i, r) in reqs.iter().enumerate() {
        let at = |e: String| format!("devices.requests[{i}].{e}");
        if let Some(alts) = r.get("firstAvailable").filter(|v| !v.is_null()) {
            let Some(alts) = alts.as_array() else {
                return Err(at("firstAvailable: must be a list".into()));
            };
            let mut subs = Vec::with_capacity(alts.len());
            for (k, a) in alts.iter().enumerate() {
                subs.push(exact(a).map_err(|e| at(format!("firstAvailable[{k}].{e}")))?);
            }
            out.push(DeviceRequest::FirstAvailable(subs));
        } else if let Some(e) = r.get("exactly").filter(|v| !v.is_null()) {
            out.push(DeviceRequest::Exactly(
                exact(e).map_err(|e| at(format!("exactly.{e}")))?,
            ));
        } else if r.get("deviceClassName").is_some() {
            // v1beta1: the exact request's fields sit on the request itself
            out.push(DeviceRequest::Exactly(exact(r).map_err(at)?));
        } else {
            out.push(DeviceRequest::Neither);
        }
    }
    Ok(out)
}

fn object<'m>(
    model: &'m Model,
    kind: ObjectKind,
    ns: &str,
    name: &str,
) -> Option<&'m WorkloadObject> {
    model
        .workload_objects
        .get(&format!("{}/{ns}/{name}", kind.as_str()))
}

/// The ResourceClaimSpec of template `name` in `ns` (`spec.spec`), if it is in the files.
pub fn template_spec<'m>(model: &'m Model, ns: &str, name: &str) -> Option<&'m Value> {
    let t = object(model, ObjectKind::ResourceClaimTemplate, ns, name)?;
    Some(t.spec.as_value().get("spec").unwrap_or(&Value::Null))
}

/// The spec of claim `name` in `ns`, if it is in the files.
pub fn claim_spec<'m>(model: &'m Model, ns: &str, name: &str) -> Option<&'m Value> {
    object(model, ObjectKind::ResourceClaim, ns, name).map(|c| c.spec.as_value())
}

/// How Kueue's Configuration maps one device class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClassMapping {
    /// Counted under this quota resource.
    Resource(String),
    /// Its mapping has `sources` (counters or capacity), which are not modelled.
    NotModelled(String),
}

/// Kueue's per-pod DRA requests of every PodSet (same order as `pod_sets`), as
/// `GetResourceRequestsForResourceClaimTemplates` computes them: quota resource → devices.
/// `lookup` gives the mapping of a device class (`None`: unmapped).
///
/// # Errors
/// The condition message with which Kueue leaves the Workload pending (reason
/// `Misconfigured`), exactly as upstream formats it; a missing template and a class whose
/// mapping is not modelled get gpuquota's own message. Device classes are examined in
/// name order (upstream iterates a map).
pub fn kueue_requests(
    model: &Model,
    ns: &str,
    pod_sets: &[PodSet],
    lookup: &dyn Fn(&str) -> Option<ClassMapping>,
) -> Result<Vec<BTreeMap<String, i64>>, String> {
    let claims: Vec<Vec<PodClaim>> = pod_sets
        .iter()
        .map(|p| pod_claims(&p.template.spec))
        .collect();
    if claims.iter().flatten().any(|c| c.claim.is_some()) {
        return Err(KUEUE_CLAIM_BY_NAME.to_owned());
    }
    let mut out = Vec::with_capacity(pod_sets.len());
    for (i, (ps, pcs)) in pod_sets.iter().zip(&claims).enumerate() {
        let mut per_pod: BTreeMap<String, i64> = BTreeMap::new();
        for (j, pc) in pcs.iter().enumerate() {
            let Some(t) = &pc.template else { continue };
            let base = format!("spec.podSets[{i}].template.spec.resourceClaims[{j}]");
            let Some(spec) = template_spec(model, ns, t) else {
                return Err(format!(
                    "failed to get claim spec for ResourceClaimTemplate {t} in podset {}: \
                     resourceclaimtemplates.resource.k8s.io {t:?} not found",
                    ps.name
                ));
            };
            let reqs = device_requests(spec).map_err(|e| format!("{base}.{e}"))?;
            let mut per_class: BTreeMap<String, i64> = BTreeMap::new();
            for (k, r) in reqs.iter().enumerate() {
                let at = format!("{base}.devices.requests[{k}]");
                let e = match r {
                    DeviceRequest::FirstAvailable(_) => {
                        return Err(format!(
                            "{at}: Invalid value: \"null\": ResourceClaimTemplate {t}: \
                             FirstAvailable device selection is not supported"
                        ));
                    }
                    DeviceRequest::Neither => {
                        return Err(format!(
                            "{at}: Invalid value: \"null\": ResourceClaimTemplate {t}: \
                             Exactly must be set if FirstAvailable is nil"
                        ));
                    }
                    DeviceRequest::Exactly(e) => e,
                };
                if e.admin_access {
                    continue;
                }
                match e.allocation_mode.as_str() {
                    "ExactCount" => {}
                    "All" => {
                        return Err(format!(
                            "{at}.exactly.allocationMode: Invalid value: \"All\": \
                             ResourceClaimTemplate {t}: AllocationMode 'All' is not supported"
                        ));
                    }
                    m => {
                        return Err(format!(
                            "{at}.exactly.allocationMode: Invalid value: {m:?}: \
                             ResourceClaimTemplate {t}: unsupported allocation mode: {m}"
                        ));
                    }
                }
                if e.device_class_name.is_empty() {
                    continue;
                }
                let c = per_class.entry(e.device_class_name.clone()).or_insert(0);
                *c = c.saturating_add(e.count);
            }
            for (dc, n) in per_class {
                match lookup(&dc) {
                    None => {
                        return Err(format!(
                            "{base}.resourceClaimTemplateName: Not found: \"DeviceClass {dc} is \
                             not mapped in DRA configuration for podset {}\"",
                            ps.name
                        ));
                    }
                    Some(ClassMapping::NotModelled(m)) => {
                        return Err(format!(
                            "{base}: DeviceClass {dc} is mapped to {m} with sources (counters or \
                             capacity), which gpuquota does not model; not admitted"
                        ));
                    }
                    Some(ClassMapping::Resource(r)) => {
                        let c = per_pod.entry(r).or_insert(0);
                        *c = c.saturating_add(n);
                    }
                }
            }
        }
        out.push(per_pod);
    }
    Ok(out)
}

/// kube's claim evaluator: what one ResourceClaim with this spec charges a namespace's
/// ResourceQuota (`count/resourceclaims.resource.k8s.io` and the per-class device keys).
///
/// # Errors
/// The field and problem of a request of the wrong shape.
pub fn claim_quota_usage(claim_spec: &Value) -> Result<BTreeMap<String, i64>, String> {
    let mut out: BTreeMap<String, i64> = BTreeMap::new();
    out.insert(CLAIM_OBJECT_COUNT.to_owned(), 1);
    let devices = |e: &ExactRequest| match e.allocation_mode.as_str() {
        "ExactCount" => e.count,
        "All" => ALLOCATION_RESULTS_MAX_SIZE,
        _ => 0,
    };
    let mut add = |class: &str, n: i64| {
        let c = out
            .entry(format!("{class}{CLAIMS_PER_CLASS_SUFFIX}"))
            .or_insert(0);
        *c = c.saturating_add(n);
    };
    for r in device_requests(claim_spec)? {
        match r {
            DeviceRequest::Exactly(e) => add(&e.device_class_name, devices(&e)),
            DeviceRequest::FirstAvailable(subs) => {
                let mut worst: BTreeMap<&str, i64> = BTreeMap::new();
                for s in &subs {
                    let w = worst.entry(s.device_class_name.as_str()).or_insert(0);
                    *w = (*w).max(devices(s));
                }
                for (class, n) in worst {
                    add(class, n);
                }
            }
            // an empty request names no class: upstream charges the key of class ""
            DeviceRequest::Neither => add("", 0),
        }
    }
    Ok(out)
}

/// The ResourceQuota charge of the claims one pod with `spec` creates from templates
/// (`resourceClaimTemplateName`): the sum of [`claim_quota_usage`] over its template
/// claims whose template is in the files. Claims by name exist once per namespace and are
/// not charged per pod.
pub fn pod_template_claims_usage(model: &Model, ns: &str, spec: &PodSpec) -> BTreeMap<String, i64> {
    let mut out: BTreeMap<String, i64> = BTreeMap::new();
    for pc in pod_claims(spec) {
        let Some(t) = &pc.template else { continue };
        let Some(u) = template_spec(model, ns, t).and_then(|s| claim_quota_usage(s).ok()) else {
            continue;
        };
        for (k, v) in u {
            let c = out.entry(k).or_insert(0);
            *c = c.saturating_add(v);
        }
    }
    out
}

/// KAI's test for a GPU device class or driver: the name contains `gpu` in any case.
pub fn kai_is_gpu_class(name: &str) -> bool {
    name.to_ascii_lowercase().contains("gpu")
}

fn kai_claim_gpus(spec: &Value) -> i64 {
    let Ok(reqs) = device_requests(spec) else {
        return 0;
    };
    let mut n: i64 = 0;
    for r in reqs {
        let DeviceRequest::Exactly(e) = r else {
            continue;
        };
        if !kai_is_gpu_class(&e.device_class_name) {
            continue;
        }
        n = n.saturating_add(match e.allocation_mode.as_str() {
            "ExactCount" if e.count > 0 => e.count,
            "ExactCount" | "All" => 1,
            _ => 0,
        });
    }
    n
}

/// The GPUs KAI counts for a pod through its claims: a claim by name is read from the
/// ResourceClaim in the files; a claim from a template from the claim the pod's
/// `status.resourceClaimStatuses` names when it is in the files, else from the template
/// (the claim the pod gets is made from it). Claims not in the files count 0 (the warning
/// pass names them).
pub fn kai_pod_gpus(
    model: &Model,
    ns: &str,
    spec: &PodSpec,
    status_claims: &BTreeMap<String, String>,
) -> i64 {
    let mut n: i64 = 0;
    for pc in pod_claims(spec) {
        let by_status = status_claims
            .get(&pc.name)
            .and_then(|c| claim_spec(model, ns, c));
        let s = match (&pc.claim, &pc.template) {
            (Some(c), _) => claim_spec(model, ns, c),
            (None, Some(t)) => by_status.or_else(|| template_spec(model, ns, t)),
            (None, None) => None,
        };
        if let Some(s) = s {
            n = n.saturating_add(kai_claim_gpus(s));
        }
    }
    n
}

/// A pod's `status.resourceClaimStatuses`: pod claim name → generated claim name.
pub fn status_claim_names(pod: &crate::core::Pod) -> BTreeMap<String, String> {
    pod.status
        .as_ref()
        .and_then(|s| s.other.get("resourceClaimStatuses"))
        .and_then(|v| v.as_value().as_array())
        .map(|l| {
            l.iter()
                .filter_map(|e| {
                    Some((
                        e.get("name")?.as_str()?.to_owned(),
                        e.get("resourceClaimName")?.as_str()?.to_owned(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// KAI's GPUs of every node from the ResourceSlices in the files: per node name, the
/// devices of the slices for it (`nodeName`) whose `driver` contains `gpu`; slices with
/// `allNodes: true` count for every node and are returned apart.
pub fn kai_node_gpus(model: &Model) -> (BTreeMap<String, i64>, i64) {
    let mut per_node: BTreeMap<String, i64> = BTreeMap::new();
    let mut all = 0_i64;
    for o in model.workload_objects.values() {
        if o.kind != ObjectKind::ResourceSlice {
            continue;
        }
        let s = o.spec.as_value();
        if !s
            .get("driver")
            .and_then(Value::as_str)
            .is_some_and(kai_is_gpu_class)
        {
            continue;
        }
        let n = s
            .get("devices")
            .and_then(Value::as_array)
            .map_or(0, |d| i64::try_from(d.len()).unwrap_or(i64::MAX));
        match s
            .get("nodeName")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
        {
            Some(node) => {
                let c = per_node.entry(node.to_owned()).or_insert(0_i64);
                *c = c.saturating_add(n);
            }
            None if s.get("allNodes").and_then(Value::as_bool) == Some(true) => {
                all = all.saturating_add(n);
            }
            None => {}
        }
    }
    (per_node, all)
}

/// Warns about every DRA field that is read but not modelled, every DRA object of an
/// unknown version or wrong shape, and every claim or template a pod or Workload names
/// that is not in the files.
pub(crate) fn warn(model: &Model, warnings: &mut Warnings) {
    for o in model.workload_objects.values() {
        if !matches!(
            o.kind,
            ObjectKind::DeviceClass
                | ObjectKind::ResourceClaim
                | ObjectKind::ResourceClaimTemplate
                | ObjectKind::ResourceSlice
        ) {
            continue;
        }
        let kind = o.kind.as_str();
        let name = if matches!(o.kind, ObjectKind::DeviceClass | ObjectKind::ResourceSlice) {
            o.metadata.name.clone()
        } else {
            o.ns_name()
        };
        let origin = o.origin.as_ref();
        let version = o.api_version.rsplit_once('/').map_or("", |(_, v)| v);
        if !VERSIONS.contains(&version) {
            warnings.field(
                origin,
                crate::diag::codes::UNKNOWN_API_VERSION,
                kind,
                &name,
                "apiVersion",
                format!(
                    "{} is not a version gpuquota reads; read as resource.k8s.io/v1",
                    o.api_version
                ),
            );
        }
        let spec = o.spec.as_value();
        let mut invalid: Option<String> = None;
        let mut nm = |field: String, what: &str| {
            warnings.field(
                origin,
                codes::NOT_MODELLED,
                kind,
                &name,
                &field,
                format!("{what} is not modelled; ignored"),
            );
        };
        match o.kind {
            ObjectKind::DeviceClass if spec.get("extendedResourceName").is_some() => {
                nm(
                    "spec.extendedResourceName".into(),
                    "an extended resource backed by DRA",
                );
            }
            ObjectKind::ResourceSlice => {
                if spec.get("sharedCounters").is_some() {
                    nm(
                        "spec.sharedCounters".into(),
                        "partitionable devices (shared counters)",
                    );
                }
                for (i, d) in spec
                    .get("devices")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    if d.get("consumesCounters").is_some() {
                        nm(
                            format!("spec.devices[{i}].consumesCounters"),
                            "partitionable devices (counter consumption)",
                        );
                    }
                }
            }
            ObjectKind::ResourceClaim | ObjectKind::ResourceClaimTemplate => {
                let (prefix, cs) = if o.kind == ObjectKind::ResourceClaim {
                    ("spec", spec)
                } else {
                    ("spec.spec", spec.get("spec").unwrap_or(&Value::Null))
                };
                match device_requests(cs) {
                    Err(e) => invalid = Some(format!("{prefix}.{e}")),
                    Ok(reqs) => {
                        for (i, r) in reqs.iter().enumerate() {
                            let sel = match r {
                                DeviceRequest::Exactly(e) => e.has_selectors,
                                DeviceRequest::FirstAvailable(s) => {
                                    s.iter().any(|e| e.has_selectors)
                                }
                                DeviceRequest::Neither => false,
                            };
                            if sel {
                                nm(
                                    format!("{prefix}.devices.requests[{i}]"),
                                    "a CEL device selector (every device of the class is taken to match)",
                                );
                            }
                        }
                    }
                }
                for f in ["constraints", "config"] {
                    if cs.get("devices").and_then(|d| d.get(f)).is_some() {
                        nm(
                            format!("{prefix}.devices.{f}"),
                            "a claim's device constraint or configuration",
                        );
                    }
                }
            }
            _ => {}
        }
        if let Some(e) = invalid {
            let (field, msg) = e.split_once(": ").unwrap_or((e.as_str(), ""));
            warnings.field(
                origin,
                codes::INVALID_OBJECT,
                kind,
                &name,
                field,
                format!("{msg}; the claim counts no devices"),
            );
        }
    }
    // references from pods and Workloads
    let mut check = |origin: Option<&crate::model::Origin>,
                     kind: &str,
                     name: &str,
                     ns: &str,
                     field: &str,
                     spec: &PodSpec| {
        for (j, pc) in pod_claims(spec).iter().enumerate() {
            let (what, found, target) = match (&pc.claim, &pc.template) {
                (Some(c), _) => ("ResourceClaim", claim_spec(model, ns, c).is_some(), c),
                (None, Some(t)) => (
                    "ResourceClaimTemplate",
                    template_spec(model, ns, t).is_some(),
                    t,
                ),
                (None, None) => continue,
            };
            if !found {
                warnings.field(
                    origin,
                    codes::MISSING_REFERENCE,
                    kind,
                    name,
                    &format!("{field}.resourceClaims[{j}]"),
                    format!("{what} {target:?} is not in the files; its devices are not counted"),
                );
            }
        }
    };
    for (key, w) in &model.workloads {
        let ns = w.metadata.namespace.as_deref().unwrap_or("default");
        for (i, ps) in w.spec.pod_sets.iter().enumerate() {
            check(
                None,
                "Workload",
                key,
                ns,
                &format!("spec.podSets[{i}].template.spec"),
                &ps.template.spec,
            );
        }
    }
    for (key, p) in &model.pods {
        let ns = p.metadata.namespace.as_deref().unwrap_or("default");
        check(None, "Pod", key, ns, "spec", &p.spec);
    }
}

#[cfg(all(test, feature = "yaml"))]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(requests: Value) -> Value {
        json!({"devices": {"requests": requests}})
    }

    // kubernetes/kubernetes: pkg/quota/v1/evaluator/core/resource_claims_test.go ("simple",
    // "many-requests", "count", "all", "prioritized-list")
    #[test]
    fn claim_evaluator_counts_as_upstream() {
        let one = json!({"name": "req-0", "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}});
        let u = claim_quota_usage(&spec(json!([one.clone()]))).unwrap();
        assert_eq!(u[CLAIM_OBJECT_COUNT], 1);
        assert_eq!(u["gpu.deviceclass.resource.k8s.io/devices"], 1);
        let five = claim_quota_usage(&spec(json!([
            one.clone(),
            one.clone(),
            one.clone(),
            one.clone(),
            one
        ])))
        .unwrap();
        assert_eq!(five["gpu.deviceclass.resource.k8s.io/devices"], 5);
        let count = claim_quota_usage(&spec(
            json!([{"name": "r", "exactly": {"deviceClassName": "gpu", "count": 5}}]),
        ))
        .unwrap();
        assert_eq!(count["gpu.deviceclass.resource.k8s.io/devices"], 5);
        let all = claim_quota_usage(&spec(
            json!([{"name": "r", "exactly": {"deviceClassName": "gpu", "allocationMode": "All"}}]),
        ))
        .unwrap();
        assert_eq!(all["gpu.deviceclass.resource.k8s.io/devices"], 32);
        let fa = claim_quota_usage(&spec(json!([{"name": "r", "firstAvailable": [
            {"name": "a", "deviceClassName": "gpu", "count": 2},
            {"name": "b", "deviceClassName": "gpu", "count": 3},
            {"name": "c", "deviceClassName": "small-gpu", "count": 1}]}])))
        .unwrap();
        assert_eq!(fa["gpu.deviceclass.resource.k8s.io/devices"], 3);
        assert_eq!(fa["small-gpu.deviceclass.resource.k8s.io/devices"], 1);
        // an unknown mode counts 0
        let odd = claim_quota_usage(&spec(
            json!([{"name": "r", "exactly": {"deviceClassName": "gpu", "allocationMode": "Some"}}]),
        ))
        .unwrap();
        assert_eq!(odd["gpu.deviceclass.resource.k8s.io/devices"], 0);
    }

    #[test]
    fn v1beta1_requests_read_like_v1() {
        let beta = spec(json!([{"name": "r", "deviceClassName": "gpu", "count": 4}]));
        let v1 = spec(json!([{"name": "r", "exactly": {"deviceClassName": "gpu", "count": 4}}]));
        assert_eq!(
            device_requests(&beta).unwrap(),
            device_requests(&v1).unwrap()
        );
        assert_eq!(
            device_requests(&spec(
                json!([{"name": "r", "exactly": {"deviceClassName": "g", "count": "4"}}])
            ))
            .unwrap_err(),
            "devices.requests[0].exactly.count: must be an integer"
        );
    }

    #[test]
    fn kai_counts_gpu_classes_only() {
        let s = spec(json!([
            {"name": "a", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 6}},
            {"name": "b", "exactly": {"deviceClassName": "GPU-small", "allocationMode": "All"}},
            {"name": "c", "exactly": {"deviceClassName": "nic.example.com", "count": 2}},
            {"name": "d", "firstAvailable": [{"name": "x", "deviceClassName": "gpu.nvidia.com", "count": 8}]}]));
        // 6 + 1 (All counts one) ; the NIC and the firstAvailable request count nothing
        assert_eq!(kai_claim_gpus(&s), 7);
    }
}
