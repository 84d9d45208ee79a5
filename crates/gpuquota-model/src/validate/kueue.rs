//! Kueue's own kinds: ClusterQueue (resource groups, limits, enums, preemption and
//! fungibility), Cohort, ResourceFlavor, LocalQueue and the Configuration.

use super::*;
use crate::kueue::{
    AdmissionChecksStrategy, ClusterQueuePreemption, ClusterQueueSpec, FlavorFungibility,
};

pub(super) const GE0: &str = "must be greater than or equal to 0";

pub(super) fn non_negative(cx: &mut Ctx<'_>, field: &str, q: &Quantity) {
    if q.is_negative() {
        cx.invalid(field, quote_q(q), GE0);
    }
}

pub(super) fn fair_sharing(cx: &mut Ctx<'_>, field: &str, fs: Option<&FairSharing>) {
    let Some(w) = fs.and_then(|f| f.weight.as_ref()) else {
        return;
    };
    let field = format!("{field}.weight");
    if w.is_negative() {
        cx.invalid(field, quote_q(w), GE0);
    } else if !w.is_zero() && Quantity::from_decimal(1, -9).is_some_and(|nano| *w <= nano) {
        cx.invalid(
            field,
            quote_q(w),
            "must be 0 or greater than 1n (0.000000001)",
        );
    }
}

/// Resource groups of a ClusterQueue (`is_cohort == false`) or a Cohort. `linked` tells whether
/// the object has a cohort (ClusterQueue) or a parent (Cohort), which limits require.
pub(super) fn resource_groups(
    cx: &mut Ctx<'_>,
    groups: &[ResourceGroup],
    is_cohort: bool,
    linked: bool,
) {
    if groups.len() > 16 {
        cx.too_many("spec.resourceGroups", groups.len(), 16);
    }
    let mut seen_resources: BTreeSet<&str> = BTreeSet::new();
    let mut seen_flavors: BTreeSet<&str> = BTreeSet::new();
    let (mut total_flavors, mut total_resources) = (0usize, 0usize);
    let unlinked = if is_cohort {
        "must be nil when parent is empty"
    } else {
        "must be nil when cohort is empty"
    };
    for (i, g) in groups.iter().enumerate() {
        let gp = format!("spec.resourceGroups[{i}]");
        total_flavors += g.flavors.len();
        total_resources += g.covered_resources.len();
        if g.covered_resources.is_empty() {
            cx.required(
                format!("{gp}.coveredResources"),
                "must have at least 1 item",
            );
        } else if g.covered_resources.len() > 64 {
            cx.too_many(
                format!("{gp}.coveredResources"),
                g.covered_resources.len(),
                64,
            );
        }
        for (j, r) in g.covered_resources.iter().enumerate() {
            let field = format!("{gp}.coveredResources[{j}]");
            qualified(cx, &field, r.as_str());
            if !seen_resources.insert(r.as_str()) {
                cx.duplicate(field, r.as_str());
            }
        }
        if g.flavors.is_empty() {
            cx.required(format!("{gp}.flavors"), "must have at least 1 item");
        } else if g.flavors.len() > 64 {
            cx.too_many(format!("{gp}.flavors"), g.flavors.len(), 64);
        }
        if g.flavors.len().saturating_mul(g.covered_resources.len()) > 512 {
            cx.too_many(
                format!("{gp}.flavors"),
                g.flavors.len().saturating_mul(g.covered_resources.len()),
                512,
            );
        }
        let mut mismatch_reported = false;
        for (j, f) in g.flavors.iter().enumerate() {
            let fp = format!("{gp}.flavors[{j}]");
            if f.name.is_empty() {
                cx.required(format!("{fp}.name"), "");
            } else {
                reference_name(cx, &format!("{fp}.name"), &f.name);
            }
            if !seen_flavors.insert(f.name.as_str()) {
                cx.duplicate(format!("{fp}.name"), &f.name);
            }
            if f.resources.is_empty() {
                cx.required(format!("{fp}.resources"), "must have at least 1 item");
            } else if f.resources.len() > 64 {
                cx.too_many(format!("{fp}.resources"), f.resources.len(), 64);
            }
            if f.resources.len() != g.covered_resources.len() && !mismatch_reported {
                mismatch_reported = true;
                cx.invalid(
                    gp.clone(),
                    quote("object"),
                    "flavors must have the same number of resources as the coveredResources",
                );
            }
            let mut names: BTreeSet<&str> = BTreeSet::new();
            for (k, rq) in f.resources.iter().enumerate() {
                let rp = format!("{fp}.resources[{k}]");
                if !names.insert(rq.name.as_str()) {
                    cx.duplicate(format!("{rp}.name"), rq.name.as_str());
                }
                if let Some(covered) = g.covered_resources.get(k)
                    && covered != &rq.name
                {
                    cx.invalid(
                        format!("{rp}.name"),
                        quote(rq.name.as_str()),
                        "must match the name in coveredResources",
                    );
                }
                match &rq.nominal_quota {
                    None => cx.required(format!("{rp}.nominalQuota"), ""),
                    Some(q) => non_negative(cx, &format!("{rp}.nominalQuota"), q),
                }
                if let Some(bl) = &rq.borrowing_limit {
                    let field = format!("{rp}.borrowingLimit");
                    non_negative(cx, &field, bl);
                    if !linked {
                        cx.invalid(field, quote_q(bl), unlinked);
                    }
                }
                if let Some(ll) = &rq.lending_limit {
                    let field = format!("{rp}.lendingLimit");
                    non_negative(cx, &field, ll);
                    if !linked {
                        cx.invalid(field.clone(), quote_q(ll), unlinked);
                    }
                    if !is_cohort
                        && let Some(nominal) = &rq.nominal_quota
                        && ll > nominal
                    {
                        cx.invalid(
                            field,
                            quote_q(ll),
                            "must be less than or equal to the nominalQuota",
                        );
                    }
                }
            }
        }
    }
    if total_flavors > 256 {
        cx.too_many("spec.resourceGroups[*].flavors", total_flavors, 256);
    }
    if total_resources > 256 {
        cx.too_many(
            "spec.resourceGroups[*].coveredResources",
            total_resources,
            256,
        );
    }
}

pub(super) fn cluster_queue(cx: &mut Ctx<'_>, cq: &ClusterQueue, model: &Model) {
    object_meta(cx, &cq.metadata, false);
    let spec = &cq.spec;
    let cohort = spec.cohort_name.as_deref().unwrap_or("");
    if !cohort.is_empty() {
        reference_name(cx, "spec.cohortName", cohort);
    }
    if let Some(s) = &spec.queueing_strategy {
        cx.enum_value(
            "spec.queueingStrategy",
            s.is_known(),
            s.as_str(),
            crate::kueue::QueueingStrategy::ALLOWED,
            true,
        );
    }
    resource_groups(cx, &spec.resource_groups, false, !cohort.is_empty());
    if let Some(p) = &spec.preemption {
        preemption(cx, spec, p);
    }
    if let Some(ff) = &spec.flavor_fungibility {
        flavor_fungibility(cx, spec, ff);
    }
    if let Some(s) = &spec.stop_policy {
        cx.enum_value(
            "spec.stopPolicy",
            s.is_known(),
            s.as_str(),
            StopPolicy::ALLOWED,
            false,
        );
    }
    fair_sharing(cx, "spec.fairSharing", spec.fair_sharing.as_ref());
    if let Some(sel) = &spec.namespace_selector {
        label_selector(cx, "spec.namespaceSelector", sel);
    }
    if let Some(mode) = spec
        .admission_scope
        .as_ref()
        .and_then(|s| s.admission_mode.as_ref())
    {
        cx.enum_value(
            "spec.admissionScope.admissionMode",
            mode.is_known(),
            mode.as_str(),
            crate::kueue::AdmissionMode::ALLOWED,
            false,
        );
    }
    if let Some(strategy) = &spec.admission_checks_strategy {
        admission_checks_strategy(cx, spec, strategy);
    }
    // Cross-object: every flavor must exist.
    flavor_references(cx, &spec.resource_groups, model);
}

/// `spec.preemption`: its enums, and `borrowWithinCohort` only with reclaiming.
fn preemption(cx: &mut Ctx<'_>, spec: &ClusterQueueSpec, p: &ClusterQueuePreemption) {
    if let Some(v) = &p.within_cluster_queue {
        cx.enum_value(
            "spec.preemption.withinClusterQueue",
            v.is_known(),
            v.as_str(),
            crate::kueue::WithinClusterQueue::ALLOWED,
            false,
        );
    }
    if let Some(v) = &p.reclaim_within_cohort {
        cx.enum_value(
            "spec.preemption.reclaimWithinCohort",
            v.is_known(),
            v.as_str(),
            crate::kueue::ReclaimWithinCohort::ALLOWED,
            false,
        );
    }
    if let Some(b) = &p.borrow_within_cohort
        && let Some(v) = &b.policy
    {
        cx.enum_value(
            "spec.preemption.borrowWithinCohort.policy",
            v.is_known(),
            v.as_str(),
            BorrowWithinCohortPolicy::ALLOWED,
            false,
        );
    }
    let (policy, _) = spec.borrow_within_cohort();
    if spec.reclaim_within_cohort() == crate::kueue::ReclaimWithinCohort::Never
        && policy != BorrowWithinCohortPolicy::Never
    {
        cx.invalid(
            "spec.preemption",
            quote("object"),
            "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never",
        );
    }
}

/// `spec.flavorFungibility`: its enums, and a preference only when both policies try the
/// next flavor.
fn flavor_fungibility(cx: &mut Ctx<'_>, spec: &ClusterQueueSpec, ff: &FlavorFungibility) {
    for (field, v) in [
        ("whenCanBorrow", &ff.when_can_borrow),
        ("whenCanPreempt", &ff.when_can_preempt),
    ] {
        if let Some(v) = v {
            cx.enum_value(
                format!("spec.flavorFungibility.{field}"),
                v.is_known(),
                v.as_str(),
                FungibilityPolicy::ALLOWED,
                false,
            );
        }
    }
    if let Some(pref) = &ff.preference {
        cx.enum_value(
            "spec.flavorFungibility.preference",
            pref.is_known(),
            pref.as_str(),
            crate::kueue::FlavorFungibilityPreference::ALLOWED,
            false,
        );
        let (borrow, preempt, _) = spec.flavor_fungibility();
        if borrow != FungibilityPolicy::TryNextFlavor || preempt != FungibilityPolicy::TryNextFlavor
        {
            cx.invalid(
                "spec.flavorFungibility.preference",
                quote(pref.as_str()),
                "may only be set when whenCanBorrow and whenCanPreempt are both TryNextFlavor",
            );
        }
    }
}

/// `spec.admissionChecksStrategy`: not beside `admissionChecks`, 1–64 rules, each naming a
/// check and flavors of the ClusterQueue.
fn admission_checks_strategy(
    cx: &mut Ctx<'_>,
    spec: &ClusterQueueSpec,
    strategy: &AdmissionChecksStrategy,
) {
    if !spec.admission_checks.is_empty() {
        cx.invalid(
            "spec",
            quote("object"),
            "either admissionChecks or admissionChecksStrategy can be set, but not both",
        );
    }
    let rules = &strategy.admission_checks;
    let field = "spec.admissionChecksStrategy.admissionChecks";
    if rules.is_empty() {
        cx.required(field, "must have at least 1 item");
    } else if rules.len() > 64 {
        cx.too_many(field, rules.len(), 64);
    }
    let flavors: BTreeSet<&str> = spec.flavor_names().collect();
    let allowed: Vec<&str> = flavors.iter().copied().collect();
    for (i, rule) in rules.iter().enumerate() {
        if rule.name.is_empty() {
            cx.required(format!("{field}[{i}].name"), "");
        }
        if rule.on_flavors.len() > 64 {
            cx.too_many(format!("{field}[{i}].onFlavors"), rule.on_flavors.len(), 64);
        }
        for (j, f) in rule.on_flavors.iter().enumerate() {
            if !flavors.contains(f.as_str()) {
                cx.not_supported(format!("{field}[{i}].onFlavors[{j}]"), f, &allowed);
            }
        }
    }
}

pub(super) fn flavor_references(cx: &mut Ctx<'_>, groups: &[ResourceGroup], model: &Model) {
    for (i, g) in groups.iter().enumerate() {
        for (j, f) in g.flavors.iter().enumerate() {
            if !f.name.is_empty() && !model.resource_flavors.contains_key(&f.name) {
                cx.not_found(
                    format!("spec.resourceGroups[{i}].flavors[{j}].name"),
                    &f.name,
                    "no ResourceFlavor of this name",
                );
            }
        }
    }
}

pub(super) fn cohort(
    cx: &mut Ctx<'_>,
    co: &Cohort,
    model: &Model,
    cycles: &BTreeMap<&str, Vec<&str>>,
) {
    object_meta(cx, &co.metadata, false);
    let parent = co.spec.parent_name.as_deref().unwrap_or("");
    if !parent.is_empty() {
        reference_name(cx, "spec.parentName", parent);
    }
    resource_groups(cx, &co.spec.resource_groups, true, !parent.is_empty());
    fair_sharing(cx, "spec.fairSharing", co.spec.fair_sharing.as_ref());
    flavor_references(cx, &co.spec.resource_groups, model);
    // Cross-object: a cycle through parentName disables the whole tree in Kueue.
    if let Some(cycle) = cycles.get(co.metadata.name.as_str()) {
        cx.invalid(
            "spec.parentName",
            quote(parent),
            format!("cohort cycle: {}", show_cycle(cycle)),
        );
    }
}

pub(super) fn resource_flavor(cx: &mut Ctx<'_>, rf: &ResourceFlavor) {
    object_meta(cx, &rf.metadata, false);
    let spec = &rf.spec;
    if spec.node_labels.len() > 8 {
        cx.too_many("spec.nodeLabels", spec.node_labels.len(), 8);
    }
    labels(cx, "spec.nodeLabels", &spec.node_labels);
    if spec.node_taints.len() > 8 {
        cx.too_many("spec.nodeTaints", spec.node_taints.len(), 8);
    }
    let mut seen: BTreeSet<(&str, &str)> = BTreeSet::new();
    for (i, t) in spec.node_taints.iter().enumerate() {
        let field = format!("spec.nodeTaints[{i}]");
        taint(cx, &field, t);
        if !seen.insert((t.key.as_str(), t.effect.as_str())) {
            cx.duplicate(field, &format!("{}:{}", t.key, t.effect));
        }
    }
    if spec.tolerations.len() > 8 {
        cx.too_many("spec.tolerations", spec.tolerations.len(), 8);
    }
    for (i, t) in spec.tolerations.iter().enumerate() {
        toleration(cx, &format!("spec.tolerations[{i}]"), t);
    }
    if spec.topology_name.is_some() && spec.node_labels.is_empty() {
        cx.required(
            "spec.nodeLabels",
            "at least one nodeLabel is required when topology is set",
        );
    }
}

pub(super) fn local_queue(cx: &mut Ctx<'_>, lq: &LocalQueue, model: &Model) {
    object_meta(cx, &lq.metadata, true);
    let cq = &lq.spec.cluster_queue;
    if cq.is_empty() {
        cx.required("spec.clusterQueue", "");
    } else {
        reference_name(cx, "spec.clusterQueue", cq);
        if !model.cluster_queues.contains_key(cq) {
            cx.not_found("spec.clusterQueue", cq, "no ClusterQueue of this name");
        }
    }
    if let Some(s) = &lq.spec.stop_policy {
        cx.enum_value(
            "spec.stopPolicy",
            s.is_known(),
            s.as_str(),
            StopPolicy::ALLOWED,
            false,
        );
    }
    fair_sharing(cx, "spec.fairSharing", lq.spec.fair_sharing.as_ref());
}

pub(super) fn configuration(cx: &mut Ctx<'_>, config: &crate::kueue::Configuration) {
    if config.fair_sharing_enabled()
        && let Some(fs) = &config.fair_sharing
    {
        let s: Vec<&str> = fs
            .preemption_strategies
            .iter()
            .map(String::as_str)
            .collect();
        let field = "fairSharing.preemptionStrategies";
        const S1: &str = "LessThanOrEqualToFinalShare";
        const S2: &str = "LessThanInitialShare";
        let ok = matches!(s.as_slice(), [S1] | [S2] | [S1, S2]);
        if s.is_empty() {
            // Upstream defaults an empty list to both strategies in order; accept it.
        } else if !ok {
            cx.invalid(
                field,
                format!("{s:?}"),
                format!("must be one of [{S1}], [{S2}] or [{S1}, {S2}]"),
            );
        }
    }
    if config.wait_for_pods_ready_enabled()
        && let Some(w) = &config.wait_for_pods_ready
    {
        wait_for_pods_ready(cx, w);
    }
    if let Some(afs) = &config.admission_fair_sharing {
        if let Some(v) = &afs.usage_half_life_time {
            match kai::parse_go_duration(v) {
                Some(d) if d >= 0 => {}
                _ => cx.invalid(
                    "admissionFairSharing.usageHalfLifeTime",
                    quote(v),
                    "must be a duration greater than or equal to 0",
                ),
            }
        }
        if let Some(v) = &afs.usage_sampling_interval {
            match kai::parse_go_duration(v) {
                Some(d) if d > 0 => {}
                _ => cx.invalid(
                    "admissionFairSharing.usageSamplingInterval",
                    quote(v),
                    "must be a duration greater than 0",
                ),
            }
        }
        for (r, w) in &afs.resource_weights {
            non_negative(cx, &format!("admissionFairSharing.resourceWeights[{r}]"), w);
        }
    }
}

/// `waitForPodsReady`, checked as upstream's `validateWaitForPodsReady`
/// (kubernetes-sigs/kueue pkg/config/validation.go): durations and counts not negative, a
/// known requeuing timestamp.
fn wait_for_pods_ready(cx: &mut Ctx<'_>, w: &crate::kueue::WaitForPodsReady) {
    for (field, v) in [
        ("waitForPodsReady.timeout", &w.timeout),
        ("waitForPodsReady.recoveryTimeout", &w.recovery_timeout),
    ] {
        if let Some(v) = v {
            match kai::parse_go_duration(v) {
                Some(d) if d >= 0 => {}
                Some(_) => cx.invalid(field, quote(v), GE0),
                None => cx.invalid(field, quote(v), "must be a duration (e.g. 5m, 90s)"),
            }
        }
    }
    let Some(r) = &w.requeuing_strategy else {
        return;
    };
    if let Some(t) = &r.timestamp {
        cx.enum_value(
            "waitForPodsReady.requeuingStrategy.timestamp",
            matches!(t.as_str(), "Eviction" | "Creation"),
            t,
            &["Creation", "Eviction"],
            false,
        );
    }
    for (field, v) in [
        (
            "waitForPodsReady.requeuingStrategy.backoffLimitCount",
            r.backoff_limit_count,
        ),
        (
            "waitForPodsReady.requeuingStrategy.backoffBaseSeconds",
            r.backoff_base_seconds,
        ),
        (
            "waitForPodsReady.requeuingStrategy.backoffMaxSeconds",
            r.backoff_max_seconds,
        ),
    ] {
        match v {
            Some(n) if n < 0 => cx.invalid(field, n.to_string(), GE0),
            Some(n) if n > i64::from(i32::MAX) => {
                cx.invalid(field, n.to_string(), "must fit a 32-bit integer")
            }
            _ => {}
        }
    }
}
