//! Dynamic Resource Allocation in the admission engine: per Workload, the devices its
//! PodSets' claims from templates add to the per-pod requests under the Configuration's
//! `deviceClassMappings` (or the message with which Kueue refuses them), and the
//! ResourceQuota claim keys each pod charges (kubernetes/kubernetes:
//! pkg/quota/v1/evaluator/core/resource_claims.go).

use std::collections::BTreeMap;

use gpuquota_model::core::ResourceList;
use gpuquota_model::kueue::Workload;
use gpuquota_model::{Model, Quantity, ResourceName};

use crate::config::ResourceRules;

/// `<class>.deviceclass.resource.k8s.io/devices`: a ResourceQuota key counting the devices
/// of one class that ResourceClaims request.
pub(super) const CLAIMS_PER_CLASS_SUFFIX: &str = ".deviceclass.resource.k8s.io/devices";
/// The ResourceQuota key counting ResourceClaim objects.
pub(super) const CLAIM_OBJECT_COUNT: &str = "count/resourceclaims.resource.k8s.io";

/// One Workload's DRA charges.
#[derive(Debug, Clone, Default)]
pub(super) struct Dra {
    /// Per PodSet: quota resource → devices per pod (empty when it has no claims).
    pub(super) per_pod: Vec<BTreeMap<String, i64>>,
    /// Kueue's refusal message (the Workload stays pending `Misconfigured`).
    pub(super) refused: Option<String>,
    /// Per PodSet: ResourceQuota claim key → amount per pod.
    pub(super) quota: Vec<Vec<(String, i64)>>,
}

/// The DRA charges of every live Workload, in `live` order.
#[cfg(feature = "serde")]
pub(super) fn charges(model: &Model, live: &[&Workload], rules: &ResourceRules) -> Vec<Dra> {
    use gpuquota_model::workloads::dra::{self, ClassMapping};
    let lookup = |dc: &str| {
        rules.device_class(dc).map(|(r, sources)| {
            if sources {
                ClassMapping::NotModelled(r.to_owned())
            } else {
                ClassMapping::Resource(r.to_owned())
            }
        })
    };
    live.iter()
        .map(|w| {
            let has_claims = w
                .spec
                .pod_sets
                .iter()
                .any(|p| p.template.spec.other.contains_key("resourceClaims"));
            if !has_claims {
                return Dra::default();
            }
            let ns = w.metadata.namespace.as_deref().unwrap_or("default");
            let quota = w
                .spec
                .pod_sets
                .iter()
                .map(|p| {
                    dra::pod_template_claims_usage(model, ns, &p.template.spec)
                        .into_iter()
                        .collect()
                })
                .collect();
            match dra::kueue_requests(model, ns, &w.spec.pod_sets, &lookup) {
                Ok(per_pod) => Dra {
                    per_pod,
                    refused: None,
                    quota,
                },
                Err(m) => Dra {
                    per_pod: Vec::new(),
                    refused: Some(m),
                    quota,
                },
            }
        })
        .collect()
}

/// Without the `serde` feature pod templates keep no claims: nothing to charge.
#[cfg(not(feature = "serde"))]
pub(super) fn charges(_: &Model, live: &[&Workload], _: &ResourceRules) -> Vec<Dra> {
    vec![Dra::default(); live.len()]
}

/// `req` with `n` devices of `resource` added; `None` when the sum cannot be held.
pub(super) fn add_devices(req: &mut ResourceList, resource: &str, n: i64) -> Option<()> {
    let name = ResourceName::new(resource);
    let sum = match req.get(&name) {
        None => Quantity::from_integer(n),
        Some(q) => {
            let (m, e) = q.as_decimal();
            let (m, e) = if e >= 0 {
                (
                    m.checked_mul(10_i128.checked_pow(u32::try_from(e).ok()?)?)?,
                    0,
                )
            } else {
                (m, e)
            };
            let add = i128::from(n).checked_mul(10_i128.checked_pow(u32::try_from(-e).ok()?)?)?;
            Quantity::from_decimal(m.checked_add(add)?, e)?.with_format(q.format())
        }
    };
    req.insert(name, sum);
    Some(())
}

/// What the ResourceClaim objects of namespace `ns` that no pod owns (claims by name, which
/// exist once) use of each claim key in `keys`; claims a pod owns were made from a template
/// and are counted with their Workload.
#[cfg(feature = "serde")]
pub(super) fn standing_claims(model: &Model, ns: &str, keys: &[(String, i64)]) -> Vec<i64> {
    use gpuquota_model::workloads::{ObjectKind, dra};
    let mut used = vec![0_i64; keys.len()];
    if keys.is_empty() {
        return used;
    }
    for o in model.workload_objects.values() {
        if o.kind != ObjectKind::ResourceClaim || o.namespace() != ns {
            continue;
        }
        let owned_by_pod = o
            .metadata
            .other
            .get("ownerReferences")
            .and_then(|r| r.as_array())
            .is_some_and(|refs| {
                refs.iter()
                    .any(|r| r.get("kind").and_then(serde_json::Value::as_str) == Some("Pod"))
            });
        if owned_by_pod {
            continue;
        }
        let Ok(usage) = dra::claim_quota_usage(o.spec.as_value()) else {
            continue;
        };
        for ((k, _), u) in keys.iter().zip(used.iter_mut()) {
            *u = u.saturating_add(usage.get(k).copied().unwrap_or(0));
        }
    }
    used
}

/// Without the `serde` feature no ResourceClaim is kept.
#[cfg(not(feature = "serde"))]
pub(super) fn standing_claims(_: &Model, _: &str, keys: &[(String, i64)]) -> Vec<i64> {
    vec![0; keys.len()]
}
