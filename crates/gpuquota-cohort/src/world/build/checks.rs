//! Field checks of ClusterQueues and Cohorts as upstream's webhooks make them (the problems
//! they reject) and as its cache tolerates them (warnings), for the validation phase of
//! [`Builder`].

use std::collections::BTreeSet;

use gpuquota_model::kueue::{
    BorrowWithinCohortPolicy, ClusterQueue, FlavorFungibilityPreference, FungibilityPolicy,
    QueueingStrategy, ReclaimWithinCohort, ResourceGroup, StopPolicy, WithinClusterQueue,
};

use super::Builder;
use crate::error::BuildProblem;

impl Builder {
    pub(super) fn check_groups(
        &mut self,
        kind: &'static str,
        name: &str,
        groups: &[ResourceGroup],
        has_parent: bool,
        is_cq: bool,
    ) {
        let mut seen_res = BTreeSet::new();
        let mut seen_flv = BTreeSet::new();
        for (gi, g) in groups.iter().enumerate() {
            if g.covered_resources.is_empty() {
                // `coveredResources` has `MinItems=1` in upstream's CRD
                // (kubernetes-sigs/kueue: apis/kueue/v1beta2/clusterqueue_types.go)
                self.problem(
                    kind,
                    name,
                    format!("spec.resourceGroups[{gi}].coveredResources"),
                    "must have at least 1 item",
                );
            }
            for (ri, r) in g.covered_resources.iter().enumerate() {
                if !seen_res.insert(r.as_str().to_owned()) {
                    self.problem(
                        kind,
                        name,
                        format!("spec.resourceGroups[{gi}].coveredResources[{ri}]"),
                        format!("Duplicate value: {:?}", r.as_str()),
                    );
                }
                if r.as_str() == "" {
                    self.problem(
                        kind,
                        name,
                        format!("spec.resourceGroups[{gi}].coveredResources[{ri}]"),
                        "resource name must not be empty",
                    );
                }
            }
            if g.flavors.is_empty() {
                self.problem(
                    kind,
                    name,
                    format!("spec.resourceGroups[{gi}].flavors"),
                    "must have at least 1 item",
                );
            }
            for (fi, f) in g.flavors.iter().enumerate() {
                let base = format!("spec.resourceGroups[{gi}].flavors[{fi}]");
                if !seen_flv.insert(f.name.clone()) {
                    self.problem(
                        kind,
                        name,
                        format!("{base}.name"),
                        format!("Duplicate value: {:?}", f.name),
                    );
                }
                if f.resources.len() != g.covered_resources.len() {
                    self.problem(
                        kind,
                        name,
                        format!("{base}.resources"),
                        "flavors must have the same number of resources as the coveredResources",
                    );
                }
                for (ri, rq) in f.resources.iter().enumerate() {
                    let rbase = format!("{base}.resources[{ri}]");
                    if g.covered_resources.get(ri) != Some(&rq.name) {
                        self.problem(
                            kind,
                            name,
                            format!("{rbase}.name"),
                            "must match the name in coveredResources",
                        );
                    }
                    match &rq.nominal_quota {
                        None => self.problem(
                            kind,
                            name,
                            format!("{rbase}.nominalQuota"),
                            "Required value",
                        ),
                        Some(q) if q.is_negative() => self.problem(
                            kind,
                            name,
                            format!("{rbase}.nominalQuota"),
                            "must be greater than or equal to 0",
                        ),
                        _ => {}
                    }
                    for (field, v) in [
                        ("borrowingLimit", &rq.borrowing_limit),
                        ("lendingLimit", &rq.lending_limit),
                    ] {
                        if let Some(q) = v {
                            if q.is_negative() {
                                self.problem(
                                    kind,
                                    name,
                                    format!("{rbase}.{field}"),
                                    "must be greater than or equal to 0",
                                );
                            }
                            if !has_parent {
                                // the API server rejects this, but Kueue's cache tolerates
                                // it (a root has nothing to borrow from or lend to) and
                                // upstream's scheduler tests use it: a warning, not an error
                                let msg = if is_cq {
                                    "must be nil when cohort is empty"
                                } else {
                                    "must be nil when parent is empty"
                                };
                                self.warn(
                                    crate::error::codes::API_SERVER_REJECTS,
                                    kind,
                                    name,
                                    format!("{rbase}.{field}: {msg}; ignored (no parent)"),
                                );
                            }
                        }
                    }
                    if is_cq
                        && let (Some(ll), Some(nq)) = (&rq.lending_limit, &rq.nominal_quota)
                        && ll > nq
                    {
                        // rejected by the webhook, tolerated by Kueue's cache: the guaranteed
                        // part max(0, nominal - lendingLimit) is 0, everything is lent
                        self.warn(
crate::error::codes::API_SERVER_REJECTS,
                            kind,
                            name,
                            format!(
                                "{rbase}.lendingLimit: must be less than or equal to the nominalQuota; the whole nominal quota is lent"
                            ),
                        );
                    }
                }
            }
        }
    }

    pub(super) fn check_cq_enums(&mut self, name: &str, cq: &ClusterQueue) {
        let s = &cq.spec;
        let mut bad = |field: &str, value: &str, allowed: &[&str]| {
            self.problems.push(BuildProblem {
                kind: "ClusterQueue".to_owned(),
                name: name.to_owned(),
                field: field.to_owned(),
                message: format!(
                    "Unsupported value: {value:?}: supported values: {}",
                    allowed.join(", ")
                ),
                code: gpuquota_model::diag::codes::INVALID,
            });
        };
        if let Some(q @ QueueingStrategy::Unknown(_)) = &s.queueing_strategy {
            bad(
                "spec.queueingStrategy",
                q.as_str(),
                QueueingStrategy::ALLOWED,
            );
        }
        if let Some(q @ StopPolicy::Unknown(_)) = &s.stop_policy {
            bad("spec.stopPolicy", q.as_str(), StopPolicy::ALLOWED);
        }
        if let Some(p) = &s.preemption {
            if let Some(q @ WithinClusterQueue::Unknown(_)) = &p.within_cluster_queue {
                bad(
                    "spec.preemption.withinClusterQueue",
                    q.as_str(),
                    WithinClusterQueue::ALLOWED,
                );
            }
            if let Some(q @ ReclaimWithinCohort::Unknown(_)) = &p.reclaim_within_cohort {
                bad(
                    "spec.preemption.reclaimWithinCohort",
                    q.as_str(),
                    ReclaimWithinCohort::ALLOWED,
                );
            }
            if let Some(b) = &p.borrow_within_cohort
                && let Some(q @ BorrowWithinCohortPolicy::Unknown(_)) = &b.policy
            {
                bad(
                    "spec.preemption.borrowWithinCohort.policy",
                    q.as_str(),
                    BorrowWithinCohortPolicy::ALLOWED,
                );
            }
        }
        if let Some(f) = &s.flavor_fungibility {
            if let Some(q @ FungibilityPolicy::Unknown(_)) = &f.when_can_borrow {
                bad(
                    "spec.flavorFungibility.whenCanBorrow",
                    q.as_str(),
                    FungibilityPolicy::ALLOWED,
                );
            }
            if let Some(q @ FungibilityPolicy::Unknown(_)) = &f.when_can_preempt {
                bad(
                    "spec.flavorFungibility.whenCanPreempt",
                    q.as_str(),
                    FungibilityPolicy::ALLOWED,
                );
            }
            if let Some(q @ FlavorFungibilityPreference::Unknown(_)) = &f.preference {
                bad(
                    "spec.flavorFungibility.preference",
                    q.as_str(),
                    FlavorFungibilityPreference::ALLOWED,
                );
            }
        }
        let (b, p, pref) = s.flavor_fungibility();
        if pref.is_some()
            && !(b == FungibilityPolicy::TryNextFlavor && p == FungibilityPolicy::TryNextFlavor)
        {
            // rejected by the API server; Kueue's scheduler applies the preference anyway
            self.warn(
crate::error::codes::API_SERVER_REJECTS,
                "ClusterQueue",
                name,
                "spec.flavorFungibility.preference: preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor; applied as given",
            );
        }
        if s.reclaim_within_cohort() == ReclaimWithinCohort::Never
            && s.borrow_within_cohort().0 != BorrowWithinCohortPolicy::Never
        {
            // rejected by the API server; Kueue's scheduler runs it (and upstream's scheduler
            // tests use it): only the ClusterQueue's own workloads can be preempted
            self.warn(
crate::error::codes::API_SERVER_REJECTS,
                "ClusterQueue",
                name,
                "spec.preemption: reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never; applied as given",
            );
        }
    }
}
