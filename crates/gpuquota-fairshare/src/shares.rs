//! `status.fairSharing.weightedShare` of every ClusterQueue and Cohort of a [`Model`], as Kueue
//! reports it (the data behind `gpuquota kueue shares`).
//!
//! [`SharesReport`] is the JSON of `kueue shares --output json`: `{"clusterQueues": {cq:
//! {"share": 250, "dominantResource": "nvidia.com/gpu"}}, "cohorts": {cohort: {...}}}`,
//! `null` where Kueue reports no share; `gpuquota schema kueue-shares` prints its JSON
//! Schema (feature `schema`), [`SharesReport::table`] its text table.

use std::collections::BTreeMap;

use gpuquota_model::kueue::{ResourceGroup, Workload};
use gpuquota_model::{Amount, Model, ResourceName};

use crate::drs::{FlavorResource, FrQuantities, parse_weight};
use crate::error::FairShareError;
use crate::tree::{FairShareTree, FairShareTreeBuilder, NodeQuota};

/// One node's reported share.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NodeShare {
    /// `status.fairSharing.weightedShare`: `ceil(ratio / weight)`, `i64::MAX` for weight 0
    /// while borrowing, 0 when not borrowing or without a parent.
    pub share: i64,
    /// The dominant resource; `null` when no resource has a positive ratio.
    pub dominant_resource: Option<String>,
}

/// Shares of every ClusterQueue and Cohort object, by name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct SharesReport {
    /// ClusterQueues; `null` for a ClusterQueue in a cohort tree with a cycle (Kueue disables it).
    pub cluster_queues: BTreeMap<String, Option<NodeShare>>,
    /// Cohort objects (implicit cohorts have no status and are not listed); `null` for a
    /// cohort in a tree with a cycle.
    pub cohorts: BTreeMap<String, Option<NodeShare>>,
}

/// The quota tree of a model, with the objects left out because their tree has a cycle.
#[derive(Debug, Clone)]
pub struct ModelTree {
    /// The tree of every ClusterQueue and Cohort not in a cyclic tree.
    pub tree: FairShareTree,
    /// ClusterQueues left out (their cohort tree has a cycle).
    pub excluded_cluster_queues: Vec<String>,
    /// Cohorts left out (on a cycle or below one).
    pub excluded_cohorts: Vec<String>,
}

fn add_groups(
    node: &mut crate::tree::NodeBuilder<'_>,
    object: &str,
    groups: &[ResourceGroup],
) -> Result<(), FairShareError> {
    for (gi, g) in groups.iter().enumerate() {
        for (fi, f) in g.flavors.iter().enumerate() {
            for (ri, r) in f.resources.iter().enumerate() {
                let path = format!("spec.resourceGroups[{gi}].flavors[{fi}].resources[{ri}]");
                let amount = |field: &str, q: Option<&gpuquota_model::Quantity>| {
                    q.map(|q| {
                        if q.is_negative() {
                            Err(FairShareError::Negative {
                                object: object.to_string(),
                                field: format!("{path}.{field}"),
                                value: q.to_string(),
                            })
                        } else {
                            Ok(q.to_amount(&r.name))
                        }
                    })
                    .transpose()
                };
                let nominal =
                    amount("nominalQuota", r.nominal_quota.as_ref())?.unwrap_or(Amount::ZERO);
                let q = NodeQuota {
                    nominal,
                    borrowing_limit: amount("borrowingLimit", r.borrowing_limit.as_ref())?,
                    lending_limit: amount("lendingLimit", r.lending_limit.as_ref())?,
                };
                node.quota(FlavorResource::new(f.name.clone(), r.name.as_str()), q);
            }
        }
    }
    Ok(())
}

/// The usage a workload with quota reserved charges to its ClusterQueue, per flavor-resource:
/// `status.admission.podSetAssignments[*].resourceUsage` at the assigned flavors, scaled down
/// for `status.reclaimablePods` (per-pod amount × remaining count). `None` when the workload has
/// no quota reserved or has finished.
pub fn workload_usage(wl: &Workload) -> Option<(String, FrQuantities)> {
    if wl.is_finished() {
        return None;
    }
    let status = wl.status.as_ref()?;
    let admission = status.admission.as_ref()?;
    let mut out = FrQuantities::new();
    for psa in &admission.pod_set_assignments {
        let reclaim = status
            .reclaimable_pods
            .iter()
            .find(|r| r.name == psa.name)
            .map_or(0, |r| i64::from(r.count.max(0)));
        let count = psa.count.map(i64::from);
        for (res, flavor) in &psa.flavors {
            let Some(q) = psa.resource_usage.get(res) else {
                continue;
            };
            let mut a = q.to_amount(res);
            if let Some(c) = count
                && reclaim > 0
                && c > 0
            {
                let per_pod = a.0 / c;
                a = Amount(per_pod.saturating_mul((c - reclaim).max(0)));
            }
            let slot = out
                .entry(FlavorResource {
                    flavor: flavor.clone(),
                    resource: res.clone(),
                })
                .or_insert(Amount::ZERO);
            *slot = slot.saturating_add(a);
        }
    }
    Some((admission.cluster_queue.clone(), out))
}

/// Builds the quota tree of a model: Cohort objects, implicit cohorts, ClusterQueues with
/// their quotas and `fairSharing.weight`, and the usage of every workload holding a quota
/// reservation (workloads of unknown ClusterQueues are ignored, as Kueue's cache does).
///
/// Trees with a cohort cycle are left out (Kueue disables them) and listed in the result.
///
/// # Errors
/// A negative quota, an invalid weight.
///
/// # Complexity
/// O(N·F + W) for N nodes, F flavor-resources and W workloads.
pub(crate) fn tree_from_model(model: &Model) -> Result<ModelTree, FairShareError> {
    // Cohorts whose parent chain enters a cycle (one linear pass).
    let names: Vec<&String> = model.cohorts.keys().collect();
    let parents: Vec<Option<usize>> = model
        .cohorts
        .values()
        .map(|co| {
            co.spec
                .parent_name
                .as_deref()
                .and_then(|p| names.binary_search_by(|x| x.as_str().cmp(p)).ok())
        })
        .collect();
    let cyclic: Vec<String> = crate::tree::chain_depths(&parents)
        .iter()
        .zip(&names)
        .filter(|(d, _)| d.is_none())
        .map(|(_, n)| (*n).clone())
        .collect();
    let cyclic_set: std::collections::BTreeSet<&str> = cyclic.iter().map(String::as_str).collect();
    let mut b = FairShareTreeBuilder::new();
    for (name, co) in &model.cohorts {
        if cyclic_set.contains(name.as_str()) {
            continue;
        }
        let object = format!("Cohort \"{name}\"");
        let w = parse_weight(
            &object,
            co.spec
                .fair_sharing
                .as_ref()
                .and_then(|f| f.weight.as_ref()),
        )?;
        let mut n = b.cohort(name, co.spec.parent_name.as_deref(), w)?;
        add_groups(&mut n, &object, &co.spec.resource_groups)?;
    }
    let mut excluded_cqs = Vec::new();
    for (name, cq) in &model.cluster_queues {
        let cohort = cq.spec.cohort_name.as_deref().filter(|c| !c.is_empty());
        if cohort.is_some_and(|c| cyclic_set.contains(c)) {
            excluded_cqs.push(name.clone());
            continue;
        }
        let object = format!("ClusterQueue \"{name}\"");
        let w = parse_weight(
            &object,
            cq.spec
                .fair_sharing
                .as_ref()
                .and_then(|f| f.weight.as_ref()),
        )?;
        let mut n = b.cluster_queue(name, cohort, w)?;
        add_groups(&mut n, &object, &cq.spec.resource_groups)?;
    }
    for wl in model.workloads.values() {
        if let Some((cq, usage)) = workload_usage(wl)
            && model.cluster_queues.contains_key(&cq)
            && !excluded_cqs.contains(&cq)
        {
            for (fr, a) in usage {
                b.usage(&cq, fr, a.0);
            }
        }
    }
    let tree = b.build()?;
    drop(cyclic_set);
    Ok(ModelTree {
        tree,
        excluded_cluster_queues: excluded_cqs,
        excluded_cohorts: cyclic,
    })
}

/// Every ClusterQueue's and Cohort object's `status.fairSharing.weightedShare` and dominant
/// resource, computed exactly as Kueue's cache does (kubernetes-sigs/kueue:
/// `pkg/cache/scheduler/fair_sharing.go`).
///
/// ```
/// use gpuquota_model::import_str;
/// let yaml = r#"
/// apiVersion: kueue.x-k8s.io/v1beta2
/// kind: ClusterQueue
/// metadata: {name: a}
/// spec:
///   cohortName: org
///   resourceGroups:
///   - coveredResources: [nvidia.com/gpu]
///     flavors: [{name: a100, resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}]
/// ---
/// apiVersion: kueue.x-k8s.io/v1beta2
/// kind: ClusterQueue
/// metadata: {name: b}
/// spec:
///   cohortName: org
///   resourceGroups:
///   - coveredResources: [nvidia.com/gpu]
///     flavors: [{name: a100, resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}]
/// ---
/// apiVersion: kueue.x-k8s.io/v1beta2
/// kind: Workload
/// metadata: {name: w, namespace: ns}
/// spec:
///   queueName: q
///   podSets: [{name: main, count: 1, template: {spec: {containers: []}}}]
/// status:
///   admission:
///     clusterQueue: a
///     podSetAssignments:
///     - name: main
///       flavors: {nvidia.com/gpu: a100}
///       resourceUsage: {nvidia.com/gpu: "6"}
/// "#;
/// let model = import_str("m.yaml", yaml).unwrap().model;
/// let report = gpuquota_fairshare::shares::kueue_shares(&model)?;
/// let a = report.cluster_queues["a"].as_ref().unwrap();
/// assert_eq!((a.share, a.dominant_resource.as_deref()), (250, Some("nvidia.com/gpu")));
/// # Ok::<(), gpuquota_fairshare::FairShareError>(())
/// ```
///
/// The Kueue objects are validated first by the workspace's one validator
/// ([`gpuquota_model::validate::check_kinds`]), so this refuses exactly what
/// `gpuquota validate` refuses among them (a cohort cycle included).
///
/// # Errors
/// [`FairShareError::Validation`] with the validator's errors; otherwise a negative quota,
/// an invalid weight or a cohort tree deeper than the limit.
///
/// # Complexity
/// O(N·F log R + W).
pub fn kueue_shares(model: &Model) -> Result<SharesReport, FairShareError> {
    gpuquota_model::validate::check_kinds(model, gpuquota_model::validate::KUEUE_KINDS)
        .map_err(FairShareError::Validation)?;
    kueue_shares_unvalidated(model)
}

/// [`kueue_shares`] without the validator in front: the objects as Kueue's cache takes them
/// when no API server stands in between. A tree with a cohort cycle is then left out (no
/// share), as Kueue disables it.
///
/// # Errors
/// As [`tree_from_model`].
///
/// # Complexity
/// O(N·F log R + W).
pub(crate) fn kueue_shares_unvalidated(model: &Model) -> Result<SharesReport, FairShareError> {
    let mt = tree_from_model(model)?;
    let t = &mt.tree;
    let share = |id| {
        let d = t.drs(id);
        NodeShare {
            share: d.weighted_share(),
            dominant_resource: d
                .dominant_resource
                .map(|r: ResourceName| r.as_str().to_string()),
        }
    };
    let mut report = SharesReport::default();
    for name in model.cluster_queues.keys() {
        let v = t.cluster_queue(name).map(share);
        report.cluster_queues.insert(name.clone(), v);
    }
    for name in model.cohorts.keys() {
        let v = t.cohort(name).map(share);
        report.cohorts.insert(name.clone(), v);
    }
    Ok(report)
}

#[cfg(all(test, feature = "yaml"))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use gpuquota_model::import_str;

    const YAML: &str = r#"
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: org}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: research}
spec:
  parentName: org
  fairSharing: {weight: "2"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: vision}
spec:
  cohortName: research
  resourceGroups:
  - coveredResources: [cpu, nvidia.com/gpu]
    flavors:
    - name: a100
      resources:
      - {name: cpu, nominalQuota: "8"}
      - {name: nvidia.com/gpu, nominalQuota: 2}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: prod}
spec:
  cohortName: org
  resourceGroups:
  - coveredResources: [cpu, nvidia.com/gpu]
    flavors:
    - name: a100
      resources:
      - {name: cpu, nominalQuota: "32"}
      - {name: nvidia.com/gpu, nominalQuota: 6}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: lonely}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: a100, resources: [{name: cpu, nominalQuota: "1"}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: implicit-member}
spec:
  cohortName: nobody-declared-me
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: a100, resources: [{name: cpu, nominalQuota: "1"}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: loop-a}
spec: {parentName: loop-b}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: loop-b}
spec: {parentName: loop-a}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: in-loop}
spec:
  cohortName: loop-a
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: a100, resources: [{name: cpu, nominalQuota: "1"}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: big, namespace: vision}
spec:
  queueName: q
  podSets: [{name: main, count: 4, template: {spec: {containers: []}}}]
status:
  admission:
    clusterQueue: vision
    podSetAssignments:
    - name: main
      count: 4
      flavors: {cpu: a100, nvidia.com/gpu: a100}
      resourceUsage: {cpu: "8", nvidia.com/gpu: "4"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: done, namespace: vision}
spec:
  queueName: q
  podSets: [{name: main, count: 1, template: {spec: {containers: []}}}]
status:
  conditions:
  - {type: Finished, status: "True", reason: Succeeded, message: "", lastTransitionTime: "2025-01-01T00:00:00Z"}
  admission:
    clusterQueue: vision
    podSetAssignments:
    - name: main
      flavors: {nvidia.com/gpu: a100}
      resourceUsage: {nvidia.com/gpu: "100"}
"#;

    fn share(v: i64, r: Option<&str>) -> Option<NodeShare> {
        Some(NodeShare {
            share: v,
            dominant_resource: r.map(str::to_string),
        })
    }

    #[test]
    fn shares_of_a_hierarchy() {
        let model = import_str("m.yaml", YAML).unwrap().model;
        // The fixture has a cohort cycle, which the validated entry point refuses.
        let e = kueue_shares(&model).unwrap_err().to_string();
        assert!(
        e.contains("Cohort \"loop-a\": spec.parentName: Invalid value: \"loop-b\": cohort cycle: loop-a -> loop-b -> loop-a"),
        "{e}"
    );
        let r = kueue_shares_unvalidated(&model).unwrap();
        // vision borrows 2 GPUs; lendable at research = potentialAvailable(research) = 8 GPUs
        // (research has no limits: 0 local + org's 8) → 2000 / 8 = 250. cpu is within nominal.
        assert_eq!(
            r.cluster_queues["vision"],
            share(250, Some("nvidia.com/gpu"))
        );
        // research (weight 2) borrows 2 of org's 8 → 250 / 2 = 125.
        assert_eq!(r.cohorts["research"], share(125, Some("nvidia.com/gpu")));
        assert_eq!(r.cohorts["org"], share(0, None));
        assert_eq!(r.cluster_queues["prod"], share(0, None));
        assert_eq!(r.cluster_queues["lonely"], share(0, None));
        assert_eq!(r.cluster_queues["implicit-member"], share(0, None));
        // Implicit cohorts have no object and no status.
        assert!(!r.cohorts.contains_key("nobody-declared-me"));
        // A cohort cycle disables the tree: no share.
        assert_eq!(r.cluster_queues["in-loop"], None);
        assert_eq!(r.cohorts["loop-a"], None);
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["clusterQueues"]["vision"]["share"], 250);
        assert_eq!(
            json["clusterQueues"]["vision"]["dominantResource"],
            "nvidia.com/gpu"
        );
        assert_eq!(json["clusterQueues"]["in-loop"], serde_json::Value::Null);
        assert_eq!(
            json["cohorts"]["org"]["dominantResource"],
            serde_json::Value::Null
        );
    }

    /// A chain of `depth` cohorts with one ClusterQueue at the bottom.
    fn chain(depth: usize) -> String {
        let mut y = String::new();
        for i in 0..depth {
            let parent = if i == 0 {
                String::new()
            } else {
                format!("  parentName: c{:05}\n", i - 1)
            };
            y += &format!(
                "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {{name: c{i:05}}}\nspec:\n{parent}  resourceGroups:\n  - coveredResources: [cpu]\n    flavors: [{{name: f, resources: [{{name: cpu, nominalQuota: 1}}]}}]\n---\n"
            );
        }
        y += &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: leaf}}\nspec:\n  cohortName: c{:05}\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors: [{{name: f, resources: [{{name: cpu, nominalQuota: 1}}]}}]\n---\n",
            depth - 1
        );
        y
    }

    #[test]
    fn cyclic_cohorts_left_out_do_not_hide_the_depth_limit() {
        let mut y = chain(1001);
        y += "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: a}\nspec: {parentName: b}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: b}\nspec: {parentName: a}\n---\n";
        let model = gpuquota_model::import_str("t.yaml", &y).unwrap().model;
        let tree = tree_from_model(&model);
        // tree_from_model leaves cyclic cohorts out and then refuses the depth
        assert_eq!(
            tree.unwrap_err(),
            FairShareError::TreeTooDeep {
                cohort: "c01000".into()
            }
        );
    }
}
