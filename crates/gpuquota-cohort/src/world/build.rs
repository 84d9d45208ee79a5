//! [`World::build`](super::World::build), one function per phase, in the order the phases
//! run: the Configuration, the validation of queues and cohorts, the names (dense ids), the
//! flavor-resource table, the quota forest, the ClusterQueues, the workloads (PodSets,
//! priority, queue, admission), the over-admission check and the ResourceQuotas. Problems and
//! warnings are sorted at the end, so the order of the phases does not show in the output.

use std::collections::{BTreeMap, BTreeSet};

use gpuquota_model::core::ResourceList;
use gpuquota_model::kueue::{
    BorrowWithinCohortPolicy, FlavorFungibilityPreference, FungibilityPolicy, QueueingStrategy,
    ReclaimWithinCohort, ResourceGroup, StopPolicy, WithinClusterQueue, Workload,
};
use gpuquota_model::{Amount, Model, Quantity, ResourceName, Timestamp};

use super::{
    AdmittedInfo, CqId, CqInfo, FlavorId, FlavorInfo, GroupInfo, NodeRequirement, PodSetInfo,
    QueueRef, ReclaimPolicy, ResourceId, RqInfo, TOPOLOGY_ANNOTATIONS, WithinPolicy, WorkloadInfo,
    World,
};
use crate::error::{BuildProblem, Error, Warning, codes};
use crate::ids::{Table, WlId};
use crate::tree::{FrId, FrQuota, Node, NodeId, NodeKind, QuotaForest, Usage};

mod checks;
mod dra;

/// Per live workload, per PodSet: the per-pod requests after the Configuration's rules
/// (`None` when a sum overflows).
type PerPod = Vec<Vec<Option<ResourceList>>>;

/// Dense ids of every resource and flavor name the objects mention (both sorted).
struct Names {
    resources: Table<ResourceId, ResourceName>,
    flavors: Table<FlavorId, FlavorInfo>,
}

impl Names {
    /// The id of a resource name (every name the objects use has one).
    fn rid(&self, name: &str) -> ResourceId {
        self.resources
            .binary_search_by(|r| r.as_str().cmp(name))
            .map(ResourceId::new)
            .unwrap_or_default()
    }

    /// The id of a flavor name.
    fn fid(&self, name: &str) -> FlavorId {
        self.flavors
            .binary_search_by(|f| f.name.as_str().cmp(name))
            .map(FlavorId::new)
            .unwrap_or_default()
    }
}

/// The flavor-resource pairs that have quota or usage, and their dense index.
struct FrTable {
    frs: Table<FrId, (FlavorId, ResourceId)>,
    index: Vec<Option<FrId>>,
    nres: usize,
}

impl FrTable {
    /// The flavor-resource id of (flavor, resource), if the pair has quota or usage.
    fn of(&self, f: FlavorId, r: ResourceId) -> Option<FrId> {
        self.index[f.index() * self.nres + r.index()]
    }
}

/// The quota forest: cohorts first (ids `0..nc`), then ClusterQueues in name order.
struct Forest {
    tree: QuotaForest,
    nc: usize,
    /// Per node: its tree's root is a cohort on a parent cycle.
    cycle_root: Table<NodeId, bool>,
}

/// The ClusterQueue id of a name.
fn cq_of(cq_names: &[&String], name: &str) -> Option<CqId> {
    cq_names
        .binary_search_by(|c| c.as_str().cmp(name))
        .ok()
        .map(CqId::new)
}

/// The errors of the workspace's one validator
/// ([`gpuquota_model::validate::diagnostics_of`]) on the kinds this engine reads
/// ([`crate::KINDS`]), as this engine's problems: same code, field path and wording as
/// `gpuquota validate` prints them, and in its order. Empty when the input is valid.
pub(super) fn validation(model: &Model) -> Vec<BuildProblem> {
    let options = gpuquota_model::validate::Options::default();
    let found = gpuquota_model::validate::diagnostics_of(model, &options, crate::KINDS);
    found
        .errors()
        .map(|d| BuildProblem {
            kind: d.kind.clone(),
            name: d.name.clone(),
            field: d.field.clone(),
            message: d.message.clone(),
            code: d.code,
        })
        .collect()
}

#[derive(Default)]
pub(super) struct Builder {
    problems: Vec<BuildProblem>,
    warnings: Vec<Warning>,
    /// The Configuration's feature gates (phase 1).
    gates: crate::config::FeatureGates,
}

fn quantity_amount(q: &Quantity, r: &ResourceName) -> Amount {
    q.to_amount(r)
}

impl Builder {
    fn problem(
        &mut self,
        kind: &'static str,
        name: &str,
        field: String,
        message: impl Into<String>,
    ) {
        self.problems.push(BuildProblem {
            kind: kind.to_owned(),
            name: name.to_owned(),
            field,
            message: message.into(),
            code: gpuquota_model::diag::codes::INVALID,
        });
    }

    fn warn(
        &mut self,
        code: gpuquota_model::diag::Code,
        kind: &'static str,
        name: &str,
        message: impl Into<String>,
    ) {
        self.warnings.push(Warning {
            code,
            kind,
            name: name.to_owned(),
            message: message.into(),
        });
    }

    /// Runs every phase; `Err` with every problem found.
    pub(super) fn build(mut self, model: &Model) -> Result<World, Error> {
        let rules = self.configuration(model);
        self.gates = rules.feature_gates;
        self.validate_queues(model);
        let live: Vec<&Workload> = model
            .workloads
            .values()
            .filter(|w| !w.is_finished())
            .collect();
        let dra = dra::charges(model, &live, &rules);
        let (names, per_pod) = names(model, &live, &rules, &dra);
        let frt = flavor_resources(model, &live, &names);
        let cq_names: Vec<&String> = model.cluster_queues.keys().collect();
        let forest = self.forest(model, &names, &frt, &cq_names);
        let cluster_queues = self.cluster_queues(model, &names, &forest, &cq_names);
        let ctx = WorkloadCtx {
            model,
            names: &names,
            frt: &frt,
            tree: &forest.tree,
            cluster_queues: &cluster_queues,
            cq_names: &cq_names,
        };
        let (workloads, usage) = self.workloads(&ctx, &live, &per_pod, &dra);
        self.over_admission(&ctx, &usage);
        let namespaces = model
            .namespaces
            .iter()
            .map(|(n, ns)| (n.clone(), ns.metadata.labels.clone()))
            .collect();
        let resource_quotas = self.resource_quotas(model, &names);

        if !self.problems.is_empty() {
            self.problems.sort();
            self.problems.dedup();
            return Err(Error {
                problems: self.problems,
            });
        }
        self.warnings.sort();
        self.warnings.dedup();
        let Names { resources, flavors } = names;
        let pods = resources
            .binary_search_by(|r| r.as_str().cmp("pods"))
            .ok()
            .map(ResourceId::new);
        Ok(World {
            feature_gates: self.gates,
            pods,
            resources,
            flavors,
            frs: frt.frs,
            fr_index: frt.index,
            tree: forest.tree,
            cluster_queues,
            workloads,
            namespaces,
            resource_quotas,
            initial_usage: usage,
            warnings: self.warnings,
        })
    }

    /// Phase 1: the Configuration (fair sharing, `resources`, unmodelled fields) and
    /// duplicate objects.
    fn configuration(&mut self, model: &Model) -> crate::config::ResourceRules {
        if model
            .configuration
            .as_ref()
            .is_some_and(|c| c.fair_sharing_enabled())
        {
            self.warn(
codes::FAIR_SHARING_NOT_RUN,
                "Configuration",
                "",
                "fair sharing is configured; this engine orders and preempts classically (fair sharing is the gpuquota-fairshare engine)",
            );
        }
        let config_name = model
            .configuration
            .as_ref()
            .map(|c| c.metadata.name.clone())
            .unwrap_or_default();
        let rules =
            match crate::config::ResourceRules::from_configuration(model.configuration.as_ref()) {
                Ok((rules, warnings)) => {
                    for (field, message) in warnings {
                        self.warn(
                            codes::NOT_MODELLED,
                            "Configuration",
                            &config_name,
                            format!("{field}: {message}"),
                        );
                    }
                    rules
                }
                Err(errors) => {
                    for (field, message) in errors {
                        self.problem("Configuration", &config_name, field, message);
                    }
                    crate::config::ResourceRules::default()
                }
            };
        for d in &model.duplicates {
            self.warn(
                gpuquota_model::diag::codes::DUPLICATE_OBJECT,
                "Object",
                &d.name,
                format!(
                    "{} defined more than once; the last definition is used",
                    d.kind.as_str()
                ),
            );
        }
        rules
    }

    /// Phase 2: field checks of every ClusterQueue and Cohort.
    fn validate_queues(&mut self, model: &Model) {
        for (name, cq) in &model.cluster_queues {
            self.check_cq_enums(name, cq);
            let has_parent = cq
                .spec
                .cohort_name
                .as_deref()
                .is_some_and(|c| !c.is_empty());
            self.check_groups(
                "ClusterQueue",
                name,
                &cq.spec.resource_groups,
                has_parent,
                true,
            );
        }
        for (name, co) in &model.cohorts {
            let has_parent = co
                .spec
                .parent_name
                .as_deref()
                .is_some_and(|c| !c.is_empty());
            self.check_groups("Cohort", name, &co.spec.resource_groups, has_parent, false);
        }
    }

    /// Phase 5: the quota forest (cohorts explicit and implicit, then ClusterQueues), the
    /// cycle and depth checks, and every node's quotas.
    ///
    /// # Complexity
    /// O(N log N + N × F) for N nodes and F flavor-resources.
    fn forest(
        &mut self,
        model: &Model,
        names: &Names,
        frt: &FrTable,
        cq_names: &[&String],
    ) -> Forest {
        let mut cohort_names: BTreeSet<String> = model.cohorts.keys().cloned().collect();
        let mut implicit = BTreeSet::new();
        for (cq_name, cq) in &model.cluster_queues {
            if let Some(c) = cq.spec.cohort_name.as_deref().filter(|c| !c.is_empty())
                && !model.cohorts.contains_key(c)
            {
                if implicit.insert(c.to_owned()) {
                    self.warn(
codes::IMPLICIT_COHORT,"Cohort", c, format!("no Cohort object (named by ClusterQueue {cq_name:?}); an implicit cohort without quota is used"));
                }
                cohort_names.insert(c.to_owned());
            }
        }
        for (co_name, co) in &model.cohorts {
            if let Some(p) = co.spec.parent_name.as_deref().filter(|c| !c.is_empty())
                && !model.cohorts.contains_key(p)
            {
                if implicit.insert(p.to_owned()) {
                    self.warn(
codes::IMPLICIT_COHORT,"Cohort", p, format!("no Cohort object (parent of {co_name:?}); an implicit cohort without quota is used"));
                }
                cohort_names.insert(p.to_owned());
            }
        }
        let cohort_list: Vec<String> = cohort_names.into_iter().collect();
        let cohort_id = |name: &str| {
            cohort_list
                .binary_search_by(|c| c.as_str().cmp(name))
                .ok()
                .map(NodeId::new)
        };
        let nc = cohort_list.len();
        let mut nodes: Table<NodeId, Node> =
            Table::from_vec(Vec::with_capacity(nc + cq_names.len()));
        for name in &cohort_list {
            nodes.push(Node {
                name: name.clone(),
                kind: NodeKind::Cohort,
                parent: None,
                children: Vec::new(),
                height: 0,
                root: NodeId::default(),
            });
        }
        for (i, name) in cq_names.iter().enumerate() {
            nodes.push(Node {
                name: (*name).clone(),
                kind: NodeKind::ClusterQueue(CqId::new(i)),
                parent: None,
                children: Vec::new(),
                height: 0,
                root: NodeId::default(),
            });
        }
        // cohort parents, with cycle detection
        let mut parent_of: Vec<Option<NodeId>> = vec![None; nc];
        for (i, name) in cohort_list.iter().enumerate() {
            if let Some(co) = model.cohorts.get(name)
                && let Some(p) = co.spec.parent_name.as_deref().filter(|c| !c.is_empty())
            {
                parent_of[i] = cohort_id(p);
            }
        }
        // one linear pass: a cohort whose chain enters a cycle has no depth
        let depths = gpuquota_fairshare::tree::chain_depths(
            &parent_of
                .iter()
                .map(|p| p.map(NodeId::index))
                .collect::<Vec<_>>(),
        );
        let in_cycle: Vec<bool> = depths.iter().map(Option::is_none).collect();
        for (i, d) in depths.iter().enumerate() {
            if *d == Some(gpuquota_model::limits::MAX_TREE_DEPTH + 1) {
                self.problems.push(BuildProblem {
                    kind: "Cohort".to_owned(),
                    name: cohort_list[i].clone(),
                    field: "spec.parentName".into(),
                    message: format!(
                        "the cohort tree is deeper than {} levels (the limit every gpuquota engine applies; real platforms use 2 to 5)",
                        gpuquota_model::limits::MAX_TREE_DEPTH
                    ),
                    code: crate::error::codes::TREE_TOO_DEEP,
                });
            }
        }
        for i in 0..nc {
            if in_cycle[i] {
                self.warn(
                    codes::COHORT_CYCLE,
                    "Cohort",
                    &cohort_list[i],
                    "its parent chain has a cycle; every ClusterQueue of the tree is inactive",
                );
                parent_of[i] = None;
            }
        }
        // break cycles: nodes on a cycle keep no parent (their subtrees stay separate roots)
        for (i, p) in parent_of.iter().enumerate() {
            if let Some(p) = *p {
                let i = NodeId::new(i);
                nodes[i].parent = Some(p);
                nodes[p].children.push(i);
            }
        }
        let mut cq_parent: Vec<Option<NodeId>> = Vec::with_capacity(cq_names.len());
        for (i, name) in cq_names.iter().enumerate() {
            let cq = &model.cluster_queues[*name];
            let p = cq
                .spec
                .cohort_name
                .as_deref()
                .filter(|c| !c.is_empty())
                .and_then(cohort_id);
            cq_parent.push(p);
            if let Some(p) = p {
                let id = NodeId::new(nc + i);
                nodes[id].parent = Some(p);
                nodes[p].children.push(id);
            }
        }
        for n in &mut nodes {
            n.children.sort_unstable();
        }
        let nfr = frt.frs.len();
        let quotas = node_quotas(model, names, frt, &cohort_list, cq_names, nodes.len());
        let tree = QuotaForest::new(nodes, nfr, quotas);
        // roots in a cycle tree
        let cycle_root: Table<NodeId, bool> = tree
            .nodes
            .iter()
            .map(|n| {
                let r = n.root.index();
                r < nc && in_cycle[r]
            })
            .collect();
        Forest {
            tree,
            nc,
            cycle_root,
        }
    }

    /// Phase 6: every ClusterQueue with its policies resolved and why it is inactive.
    fn cluster_queues(
        &mut self,
        model: &Model,
        names: &Names,
        forest: &Forest,
        cq_names: &[&String],
    ) -> Table<CqId, CqInfo> {
        let (nc, cycle_root) = (forest.nc, &forest.cycle_root);
        let mut cluster_queues = Table::from_vec(Vec::with_capacity(cq_names.len()));
        for (i, name) in cq_names.iter().enumerate() {
            let cq = &model.cluster_queues[*name];
            let s = &cq.spec;
            let groups: Vec<GroupInfo> = s
                .resource_groups
                .iter()
                .map(|g| GroupInfo {
                    covered: g
                        .covered_resources
                        .iter()
                        .map(|r| names.rid(r.as_str()))
                        .collect(),
                    flavors: g.flavors.iter().map(|f| names.fid(&f.name)).collect(),
                })
                .collect();
            let mut inactive = None;
            let missing: Vec<&str> = s
                .flavor_names()
                .filter(|f| !model.resource_flavors.contains_key(*f))
                .collect();
            if !missing.is_empty() {
                self.warn(
                    codes::INACTIVE_QUEUE,
                    "ClusterQueue",
                    name,
                    format!(
                        "flavor(s) {} not found; the ClusterQueue is inactive (FlavorNotFound)",
                        missing.join(", ")
                    ),
                );
                inactive = Some("FlavorNotFound");
            }
            if s.stop_policy() != StopPolicy::None && inactive.is_none() {
                inactive = Some("Stopped");
            }
            let node = NodeId::new(nc + i);
            if cycle_root[node] && inactive.is_none() {
                inactive = Some("CohortCycle");
            }
            if !s.admission_checks.is_empty() || s.admission_checks_strategy.is_some() {
                self.warn(
codes::NOT_MODELLED,"ClusterQueue", name, "admission checks are not modelled; workloads are treated as admitted once quota is reserved");
            }
            let (bwc, thr) = s.borrow_within_cohort();
            let (wb, wp, pref) = s.flavor_fungibility();
            cluster_queues.push(CqInfo {
                name: (*name).clone(),
                node,
                groups,
                strict_fifo: s.queueing_strategy() == QueueingStrategy::StrictFifo,
                within: match s.within_cluster_queue() {
                    WithinClusterQueue::LowerPriority => WithinPolicy::LowerPriority,
                    WithinClusterQueue::LowerOrNewerEqualPriority => {
                        WithinPolicy::LowerOrNewerEqualPriority
                    }
                    _ => WithinPolicy::Never,
                },
                reclaim: match s.reclaim_within_cohort() {
                    ReclaimWithinCohort::LowerPriority => ReclaimPolicy::LowerPriority,
                    ReclaimWithinCohort::Any => ReclaimPolicy::Any,
                    _ => ReclaimPolicy::Never,
                },
                borrow_within_cohort: bwc == BorrowWithinCohortPolicy::LowerPriority,
                max_priority_threshold: thr,
                borrow_try_next: wb == FungibilityPolicy::TryNextFlavor,
                preempt_try_next: wp == FungibilityPolicy::TryNextFlavor,
                preemption_over_borrowing: pref
                    == Some(FlavorFungibilityPreference::PreemptionOverBorrowing),
                namespace_selector: s.namespace_selector.clone(),
                inactive,
            });
        }
        cluster_queues
    }

    /// Phase 7: every live workload (PodSets, priority, queue, admission) and the usage of
    /// the admitted ones.
    fn workloads(
        &mut self,
        ctx: &WorkloadCtx<'_>,
        live: &[&Workload],
        per_pod: &PerPod,
        dra: &[dra::Dra],
    ) -> (Table<WlId, WorkloadInfo>, Usage) {
        let model = ctx.model;
        let mut workloads = Table::from_vec(Vec::with_capacity(live.len()));
        let mut usage = ctx.tree.empty_usage();
        for (wi, w) in live.iter().enumerate() {
            let key = w.key();
            let ns = w
                .metadata
                .namespace
                .clone()
                .unwrap_or_else(|| "default".to_owned());
            let n_ps = w.spec.pod_sets.len();
            if n_ps == 0 || n_ps > 18 {
                self.problem(
                    "Workload",
                    &key,
                    "spec.podSets".into(),
                    format!("must have 1 to 18 items, has {n_ps}"),
                );
            }
            let mut pod_sets = self.pod_sets(ctx.names, &key, w, &per_pod[wi]);
            for (ps, q) in pod_sets.iter_mut().zip(&dra[wi].quota) {
                ps.claims.clone_from(q);
            }
            let (priority, priority_class) = priority(model, w);
            let (queue, lq_key) = queue_ref(model, w, &ns, ctx.cq_names);
            let admitted = self.admission(ctx, w, &key, &lq_key, &queue, &mut usage);
            workloads.push(WorkloadInfo {
                key: key.clone(),
                namespace: ns,
                uid_raw: w.metadata.uid.clone().filter(|u| !u.is_empty()),
                job_uid: w
                    .metadata
                    .labels
                    .get("kueue.x-k8s.io/job-uid")
                    .cloned()
                    .filter(|u| !u.is_empty()),
                uid: w.metadata.uid.clone().unwrap_or(key),
                priority,
                priority_class,
                // upstream `GetQueueOrderTimestamp`: a workload evicted by the PodsReady timeout
                // (requeuing timestamp Eviction, the default) or by an admission check queues
                // by its eviction time, any other by its creation time
                created: w
                    .condition("Evicted")
                    .filter(|c| {
                        c.is_true()
                            && matches!(
                                c.reason.as_deref(),
                                Some("PodsReadyTimeout" | "AdmissionCheck")
                            )
                    })
                    .and_then(|c| c.last_transition_time)
                    .or_else(|| self.reclaimed_while_borrowing(w))
                    .or(w.metadata.creation_timestamp)
                    .unwrap_or(Timestamp::EPOCH),
                active: w.spec.active.unwrap_or(true),
                dra_refused: dra[wi].refused.clone(),
                gated_by: admission_gate(self.gates, w),
                pod_sets,
                queue,
                admitted,
            });
        }
        (workloads, usage)
    }

    /// With `PrioritySortingWithinCohort` off, upstream's `GetQueueOrderTimestamp` queues a
    /// workload preempted with reason `InCohortReclaimWhileBorrowing` one millisecond after
    /// its `Preempted` condition's transition (kubernetes-sigs/kueue: pkg/workload/workload.go).
    fn reclaimed_while_borrowing(&self, w: &Workload) -> Option<Timestamp> {
        if self.gates.priority_sorting_within_cohort {
            return None;
        }
        let c = w.condition("Preempted").filter(|c| {
            c.is_true() && c.reason.as_deref() == Some("InCohortReclaimWhileBorrowing")
        })?;
        let t = c.last_transition_time?;
        let nanos = t.unix_nanos().checked_add(1_000_000)?;
        let secs = i64::try_from(nanos.div_euclid(1_000_000_000)).ok()?;
        let sub = u32::try_from(nanos.rem_euclid(1_000_000_000)).ok()?;
        Timestamp::from_unix(secs, sub)
    }

    /// A workload's PodSets: field checks, topology warnings, per-pod requests in dense ids
    /// and the counts after reclaimable pods.
    fn pod_sets(
        &mut self,
        names: &Names,
        key: &str,
        w: &Workload,
        per_pod_requests: &[Option<ResourceList>],
    ) -> Vec<PodSetInfo> {
        let mut pod_sets = Vec::with_capacity(w.spec.pod_sets.len());
        for (pi, ps) in w.spec.pod_sets.iter().enumerate() {
            // the field path is formatted only when a message names it (a trace has 10⁵ PodSets)
            let base = || format!("spec.podSets[{pi}]");
            // topology-aware scheduling is not modelled: say so for every request of it
            if ps.topology_request.is_some() {
                self.warn(
codes::NOT_MODELLED,
                        "Workload",
                        key,
                        format!("{}.topologyRequest: topology-aware scheduling is not modelled; the PodSet is admitted by quota alone", base()),
                    );
            }
            if let Some(meta) = &ps.template.metadata {
                for a in meta
                    .annotations
                    .keys()
                    .filter(|a| TOPOLOGY_ANNOTATIONS.contains(&a.as_str()))
                {
                    self.warn(
codes::NOT_MODELLED,
                            "Workload",
                            key,
                            format!("{}.template.metadata.annotations[{a}]: topology-aware scheduling is not modelled; the PodSet is admitted by quota alone", base()),
                        );
                }
            }
            if ps.count < 0 {
                self.problem(
                    "Workload",
                    key,
                    format!("{}.count", base()),
                    "must be greater than or equal to 0",
                );
            }
            if let Some(m) = ps.min_count
                && (m < 1 || m > ps.count)
            {
                self.problem(
                    "Workload",
                    key,
                    format!("{}.minCount", base()),
                    "minCount should be positive and less or equal to count",
                );
            }
            let mut per_pod = Vec::new();
            match &per_pod_requests[pi] {
                None => self.problem(
                    "Workload",
                    key,
                    format!("{}.template.spec", base()),
                    "resource requests overflow",
                ),
                Some(req) => {
                    for (r, q) in req {
                        if r.as_str() == "pods" {
                            self.problem(
                                "Workload",
                                key,
                                format!("{}.template.spec.containers.resources", base()),
                                "the key pods is reserved for internal kueue use",
                            );
                            continue;
                        }
                        if q.is_negative() {
                            self.problem(
                                "Workload",
                                key,
                                format!(
                                    "{}.template.spec.containers.resources.requests[{r}]",
                                    base()
                                ),
                                "must be greater than or equal to 0",
                            );
                            continue;
                        }
                        let a = q.to_amount(r);
                        per_pod.push((names.rid(r.as_str()), a.0));
                    }
                }
            }
            let spec = &ps.template.spec;
            // upstream `podSetsCountsAfterReclaim` (ReclaimablePods gate, on by default):
            // the pods a workload reports as reclaimable need no quota, whether it is
            // admitted or pending (kubernetes-sigs/kueue: pkg/workload/workload.go)
            let count = ps.count.max(0);
            let reclaimable = w
                .status
                .as_ref()
                .filter(|_| self.gates.reclaimable_pods)
                .and_then(|st| st.reclaimable_pods.iter().find(|r| r.name == ps.name))
                .map_or(0, |r| r.count.clamp(0, count));
            pod_sets.push(PodSetInfo {
                name: ps.name.clone(),
                count: count - reclaimable,
                min_count: ps.min_count,
                per_pod,
                node_selector: spec.node_selector.clone(),
                tolerations: spec.tolerations.clone(),
                affinity: parse_affinity(spec.affinity.as_ref()),
                claims: Vec::new(),
            });
        }
        pod_sets
    }

    /// An admitted workload's reservation (usage added to `usage`), or the warnings of a
    /// pending one whose queue is missing.
    fn admission(
        &mut self,
        ctx: &WorkloadCtx<'_>,
        w: &Workload,
        key: &str,
        lq_key: &str,
        queue: &QueueRef,
        usage: &mut Usage,
    ) -> Option<AdmittedInfo> {
        let (model, names, frt, tree, cluster_queues) =
            (ctx.model, ctx.names, ctx.frt, ctx.tree, ctx.cluster_queues);
        let mut admitted = None;
        if let Some(st) = &w.status
            && let Some(adm) = &st.admission
        {
            // upstream evicts admitted workloads of a HoldAndDrain LocalQueue or ClusterQueue
            let drain = |p: Option<&StopPolicy>| p.is_some_and(|p| *p == StopPolicy::HoldAndDrain);
            // ... and deactivated ones (`spec.active: false`, evicted as Deactivated)
            let drained = !w.spec.active.unwrap_or(true)
                || drain(
                    model
                        .local_queues
                        .get(lq_key)
                        .and_then(|lq| lq.spec.stop_policy.as_ref()),
                )
                || drain(
                    model
                        .cluster_queues
                        .get(adm.cluster_queue.as_str())
                        .and_then(|cq| cq.spec.stop_policy.as_ref()),
                );
            match cq_of(ctx.cq_names, &adm.cluster_queue) {
                    None => self.warn(
gpuquota_model::diag::codes::NOT_FOUND,
                        "Workload",
                        key,
                        format!("admitted to ClusterQueue {:?}, which does not exist; its usage is not counted", adm.cluster_queue),
                    ),
                    Some(c) => {
                        let mut u: BTreeMap<FrId, Amount> = BTreeMap::new();
                        let mut uses = BTreeSet::new();
                        let mut counts = Vec::new();
                        for (ai, psa) in adm.pod_set_assignments.iter().enumerate() {
                            let spec_ps = w.spec.pod_sets.iter().find(|p| p.name == psa.name);
                            let count = psa.count.or(spec_ps.map(|p| p.count)).unwrap_or(0).max(0);
                            counts.push(count);
                            let reclaimable = st
                                .reclaimable_pods
                                .iter()
                                .filter(|_| self.gates.reclaimable_pods)
                                .find(|r| r.name == psa.name)
                                .map(|r| r.count.clamp(0, count))
                                .unwrap_or(0);
                            for (r, f) in &psa.flavors {
                                // every admitted pair is in the table (phase 4 collects them)
                                if let Some(fr) = frt.of(names.fid(f), names.rid(r.as_str())) {
                                    uses.insert(fr);
                                }
                            }
                            for (r, q) in &psa.resource_usage {
                                if q.is_negative() {
                                    self.problem("Workload", key, format!("status.admission.podSetAssignments[{ai}].resourceUsage[{r}]"), "must be greater than or equal to 0");
                                    continue;
                                }
                                let Some(f) = psa.flavors.get(r) else { continue };
                                let Some(fr) = frt.of(names.fid(f), names.rid(r.as_str())) else { continue };
                                let mut a = q.to_amount(r);
                                if reclaimable > 0 && count > 0 {
                                    a = Amount(a.0 / i64::from(count) * i64::from(count - reclaimable));
                                }
                                let e = u.entry(fr).or_insert(Amount::ZERO);
                                *e = e.saturating_add(a);
                            }
                        }
                        // upstream `quotaReservationTime`: without QuotaReserved=True, "now"
                        let time = match w.condition("QuotaReserved") {
                            Some(c) if c.is_true() => {
                                c.last_transition_time.unwrap_or(Timestamp::EPOCH)
                            }
                            _ => crate::preempt::now(),
                        };
                        let evicted = w.condition("Evicted").is_some_and(|c| c.is_true());
                        let node = cluster_queues[c].node;
                        for (&fr, &a) in &u {
                            tree.add_usage(usage, node, fr, a);
                        }
                        admitted = Some(AdmittedInfo {
                            cq: c,
                            usage: u.into_iter().collect(),
                            uses: uses.into_iter().collect(),
                            time,
                            evicted,
                            counts,
                            drained,
                        });
                    }
                }
        } else {
            match queue {
                QueueRef::LocalQueueMissing(q) => self.warn(
                    gpuquota_model::diag::codes::NOT_FOUND,
                    "Workload",
                    key,
                    format!("LocalQueue {q:?} doesn't exist; the workload stays pending"),
                ),
                QueueRef::ClusterQueueMissing(q) => self.warn(
                    gpuquota_model::diag::codes::NOT_FOUND,
                    "Workload",
                    key,
                    format!("ClusterQueue {q:?} doesn't exist; the workload stays pending"),
                ),
                _ => {}
            }
        }
        admitted
    }

    /// Phase 8: ClusterQueues whose admitted workloads exceed their quota (tolerated).
    fn over_admission(&mut self, ctx: &WorkloadCtx<'_>, usage: &Usage) {
        let (tree, frs, resources, flavors) = (
            ctx.tree,
            &ctx.frt.frs,
            &ctx.names.resources,
            &ctx.names.flavors,
        );
        for cq in ctx.cluster_queues {
            for (fr, &(f, r)) in frs.iter_enumerated() {
                if tree.available_raw(usage, cq.node, fr) < Amount::ZERO {
                    self.warn(
codes::OVER_ADMISSION,
                        "ClusterQueue",
                        &cq.name,
                        format!(
                            "admitted workloads exceed the quota for {} in flavor {}; they keep running",
                            resources[r], flavors[f].name
                        ),
                    );
                }
            }
        }
    }

    /// Phase 9: the namespace ResourceQuotas' hard caps the engine enforces.
    fn resource_quotas(&mut self, model: &Model, names: &Names) -> Vec<RqInfo> {
        let mut resource_quotas = Vec::new();
        for (key, rq) in &model.resource_quotas {
            let ns = rq
                .metadata
                .namespace
                .clone()
                .unwrap_or_else(|| "default".to_owned());
            let mut hard = Vec::new();
            let mut claims = Vec::new();
            for (k, q) in &rq.spec.hard {
                if k.ends_with(dra::CLAIMS_PER_CLASS_SUFFIX) && !k.starts_with("requests.")
                    || k == dra::CLAIM_OBJECT_COUNT
                {
                    claims.push((k.clone(), q.value().unwrap_or(i64::MAX)));
                } else if k == "pods" {
                    hard.push((k.clone(), None, Amount(q.value().unwrap_or(i64::MAX))));
                } else if let Some(r) = rq_resource(k) {
                    let rn = ResourceName::new(r);
                    hard.push((k.clone(), Some(names.rid(r)), q.to_amount(&rn)));
                }
            }
            if rq.spec.hard.keys().any(|k| k.starts_with("limits.")) {
                self.warn(
                    gpuquota_model::diag::codes::IGNORED_BY_ENGINES,
                    "ResourceQuota",
                    key,
                    "limits.* caps are not enforced by the admission engine (requests only)",
                );
            }
            resource_quotas.push(RqInfo {
                name: rq.metadata.name.clone(),
                claims_used: dra::standing_claims(model, &ns, &claims),
                namespace: ns,
                hard,
                claims,
                object: rq.clone(),
            });
        }

        resource_quotas
    }
}

/// What the workload phase reads of the earlier phases.
struct WorkloadCtx<'a> {
    model: &'a Model,
    names: &'a Names,
    frt: &'a FrTable,
    tree: &'a QuotaForest,
    cluster_queues: &'a Table<CqId, CqInfo>,
    cq_names: &'a [&'a String],
}

/// Phase 3: dense ids of every resource and flavor name (quotas, requests after the
/// Configuration's `rules`, admissions, ResourceQuota caps) and every PodSet's per-pod
/// requests.
fn names(
    model: &Model,
    live: &[&Workload],
    rules: &crate::config::ResourceRules,
    dra: &[dra::Dra],
) -> (Names, PerPod) {
    let mut res_names: BTreeSet<String> = BTreeSet::new();
    let mut flv_names: BTreeSet<String> = model.resource_flavors.keys().cloned().collect();
    let add_groups =
        |groups: &[ResourceGroup], res: &mut BTreeSet<String>, flv: &mut BTreeSet<String>| {
            for g in groups {
                for r in &g.covered_resources {
                    res.insert(r.as_str().to_owned());
                }
                for f in &g.flavors {
                    flv.insert(f.name.clone());
                    // a flavor may name resources the group does not cover (a field
                    // error reported above); they still get ids so no lookup misses
                    for rq in &f.resources {
                        res.insert(rq.name.as_str().to_owned());
                    }
                }
            }
        };
    for cq in model.cluster_queues.values() {
        add_groups(&cq.spec.resource_groups, &mut res_names, &mut flv_names);
    }
    for co in model.cohorts.values() {
        add_groups(&co.spec.resource_groups, &mut res_names, &mut flv_names);
    }
    // workloads: requests and admissions
    let mut per_pod_all: PerPod = Vec::with_capacity(live.len());
    for (wi, w) in live.iter().enumerate() {
        let mut v = Vec::new();
        for (pi, ps) in w.spec.pod_sets.iter().enumerate() {
            let req = ps.template.spec.effective_requests().and_then(|r| {
                if rules.is_empty() {
                    Some(r)
                } else {
                    rules.apply(&r)
                }
            });
            // upstream adds the DRA devices after the transformations, per pod
            let req = match (req, dra[wi].per_pod.get(pi)) {
                (Some(mut r), Some(devices)) => devices
                    .iter()
                    .try_for_each(|(name, n)| dra::add_devices(&mut r, name, *n))
                    .map(|()| r),
                (req, _) => req,
            };
            if let Some(req) = &req {
                for r in req.keys() {
                    // owned only when new: the same few names recur in every workload
                    if !res_names.contains(r.as_str()) {
                        res_names.insert(r.as_str().to_owned());
                    }
                }
            }
            v.push(req);
        }
        per_pod_all.push(v);
        if let Some(adm) = w.status.as_ref().and_then(|s| s.admission.as_ref()) {
            for psa in &adm.pod_set_assignments {
                for (r, f) in &psa.flavors {
                    res_names.insert(r.as_str().to_owned());
                    flv_names.insert(f.clone());
                }
                for r in psa.resource_usage.keys() {
                    res_names.insert(r.as_str().to_owned());
                }
            }
        }
    }
    for rq in model.resource_quotas.values() {
        for k in rq.spec.hard.keys() {
            if let Some(r) = rq_resource(k) {
                res_names.insert(r.to_owned());
            }
        }
    }
    let resources: Table<ResourceId, ResourceName> = res_names
        .iter()
        .map(|s| ResourceName::new(s.as_str()))
        .collect();
    let flavors: Table<FlavorId, FlavorInfo> = flv_names
        .iter()
        .map(|n| match model.resource_flavors.get(n) {
            Some(rf) => FlavorInfo {
                name: n.clone(),
                exists: true,
                node_labels: rf.spec.node_labels.clone(),
                node_taints: rf.spec.node_taints.clone(),
                tolerations: rf.spec.tolerations.clone(),
            },
            None => FlavorInfo {
                name: n.clone(),
                ..FlavorInfo::default()
            },
        })
        .collect();
    (Names { resources, flavors }, per_pod_all)
}

/// Phase 4: the flavor-resource pairs with quota (any ClusterQueue or Cohort) or usage
/// (any admission), sorted, and their dense index.
fn flavor_resources(model: &Model, live: &[&Workload], names: &Names) -> FrTable {
    let mut fr_set: BTreeSet<(FlavorId, ResourceId)> = BTreeSet::new();
    let collect_frs = |groups: &[ResourceGroup], set: &mut BTreeSet<(FlavorId, ResourceId)>| {
        for g in groups {
            for f in &g.flavors {
                for rq in &f.resources {
                    set.insert((names.fid(&f.name), names.rid(rq.name.as_str())));
                }
            }
        }
    };
    for cq in model.cluster_queues.values() {
        collect_frs(&cq.spec.resource_groups, &mut fr_set);
    }
    for co in model.cohorts.values() {
        collect_frs(&co.spec.resource_groups, &mut fr_set);
    }
    for w in live {
        if let Some(adm) = w.status.as_ref().and_then(|s| s.admission.as_ref()) {
            for psa in &adm.pod_set_assignments {
                for (r, f) in &psa.flavors {
                    fr_set.insert((names.fid(f), names.rid(r.as_str())));
                }
            }
        }
    }
    let frs: Table<FrId, (FlavorId, ResourceId)> = fr_set.into_iter().collect();
    let mut fr_index = vec![None; names.flavors.len() * names.resources.len()];
    for (fr, &(f, r)) in frs.iter_enumerated() {
        fr_index[f.index() * names.resources.len() + r.index()] = Some(fr);
    }
    FrTable {
        frs,
        index: fr_index,
        nres: names.resources.len(),
    }
}

/// Every node's declared quotas (cohorts `0..cohort_list.len()`, then ClusterQueues), dense
/// by flavor-resource.
///
/// # Complexity
/// O(N × F) for N nodes and F flavor-resources.
fn node_quotas(
    model: &Model,
    names: &Names,
    frt: &FrTable,
    cohort_list: &[String],
    cq_names: &[&String],
    n_nodes: usize,
) -> Vec<FrQuota> {
    let nc = cohort_list.len();
    let nfr = frt.frs.len();
    let mut quotas = vec![FrQuota::default(); n_nodes * nfr];
    let mut fill = |node: usize, groups: &[ResourceGroup]| {
        for g in groups {
            for f in &g.flavors {
                for rq in &f.resources {
                    let Some(fr) = frt.of(names.fid(&f.name), names.rid(rq.name.as_str())) else {
                        continue;
                    };
                    let q = &mut quotas[node * nfr + fr.index()];
                    q.declared = true;
                    q.nominal = rq
                        .nominal_quota
                        .as_ref()
                        .map(|x| quantity_amount(x, &rq.name))
                        .unwrap_or(Amount::ZERO);
                    q.borrowing_limit = rq
                        .borrowing_limit
                        .as_ref()
                        .map(|x| quantity_amount(x, &rq.name));
                    q.lending_limit = rq
                        .lending_limit
                        .as_ref()
                        .map(|x| quantity_amount(x, &rq.name));
                }
            }
        }
    };
    for (i, name) in cohort_list.iter().enumerate() {
        if let Some(co) = model.cohorts.get(name) {
            fill(i, &co.spec.resource_groups);
        }
    }
    for (i, name) in cq_names.iter().enumerate() {
        fill(nc + i, &model.cluster_queues[*name].spec.resource_groups);
    }
    quotas
}

/// A workload's effective priority and the PriorityClass name of its pods.
fn priority(model: &Model, w: &Workload) -> (i32, Option<String>) {
    let class = w.spec.priority_class();
    let priority = w.spec.priority.unwrap_or_else(|| match class {
        Some((true, n)) => model
            .workload_priority_classes
            .get(n)
            .map(|c| c.value)
            .unwrap_or(0),
        Some((false, n)) => model.priority_classes.get(n).map(|c| c.value).unwrap_or(0),
        None => model
            .priority_classes
            .values()
            .find(|c| c.global_default)
            .map(|c| c.value)
            .unwrap_or(0),
    });
    let priority_class = w
        .spec
        .pod_sets
        .iter()
        .find_map(|p| p.template.spec.priority_class_name.clone())
        .or_else(|| class.filter(|c| !c.0).map(|c| c.1.to_owned()));
    (priority, priority_class)
}

/// Where a workload queues (and its LocalQueue's `namespace/name`).
fn queue_ref(model: &Model, w: &Workload, ns: &str, cq_names: &[&String]) -> (QueueRef, String) {
    let qname = w.spec.queue_name.clone().unwrap_or_default();
    let lq_key = format!("{ns}/{qname}");
    let queue = match model.local_queues.get(&lq_key) {
        None => QueueRef::LocalQueueMissing(qname),
        Some(lq)
            if lq
                .spec
                .stop_policy
                .as_ref()
                .is_some_and(|p| *p != StopPolicy::None) =>
        {
            QueueRef::LocalQueueStopped(qname)
        }
        Some(lq) => match cq_of(cq_names, &lq.spec.cluster_queue) {
            Some(c) => QueueRef::Cq(c),
            None => QueueRef::ClusterQueueMissing(lq.spec.cluster_queue.clone()),
        },
    };
    (queue, lq_key)
}

/// The resource a ResourceQuota `hard` key caps through requests (`requests.X`, or `cpu`,
/// `memory`, `ephemeral-storage` written bare).
fn rq_resource(key: &str) -> Option<&str> {
    if let Some(r) = key.strip_prefix("requests.") {
        return Some(r);
    }
    matches!(key, "cpu" | "memory" | "ephemeral-storage").then_some(key)
}

/// Without the `serde` feature a pod's affinity is not kept (an empty placeholder).
#[cfg(not(feature = "serde"))]
fn parse_affinity(_: Option<&gpuquota_model::Opaque>) -> Vec<Vec<NodeRequirement>> {
    Vec::new()
}

#[cfg(feature = "serde")]
fn parse_affinity(v: Option<&gpuquota_model::Opaque>) -> Vec<Vec<NodeRequirement>> {
    let Some(terms) = v
        .and_then(|a| a.get("nodeAffinity"))
        .and_then(|a| a.get("requiredDuringSchedulingIgnoredDuringExecution"))
        .and_then(|a| a.get("nodeSelectorTerms"))
        .and_then(|a| a.as_array())
    else {
        return Vec::new();
    };
    terms
        .iter()
        .map(|t| {
            t.get("matchExpressions")
                .and_then(|m| m.as_array())
                .map(|exprs| {
                    exprs
                        .iter()
                        .map(|e| NodeRequirement {
                            key: e
                                .get("key")
                                .and_then(|x| x.as_str())
                                .unwrap_or("")
                                .to_owned(),
                            operator: e
                                .get("operator")
                                .and_then(|x| x.as_str())
                                .unwrap_or("")
                                .to_owned(),
                            values: e
                                .get("values")
                                .and_then(|x| x.as_array())
                                .map(|vs| {
                                    vs.iter()
                                        .filter_map(|v| v.as_str().map(str::to_owned))
                                        .collect()
                                })
                                .unwrap_or_default(),
                        })
                        .collect()
                })
                .unwrap_or_default()
        })
        .collect()
}

/// The annotation that gates a Workload's admission (kubernetes-sigs/kueue:
/// pkg/constants/constants.go, `AdmissionGatedByAnnotation`).
const ADMISSION_GATED_BY_ANNOTATION: &str = "kueue.x-k8s.io/admission-gated-by";

/// The admission gate of `w`: its non-empty `kueue.x-k8s.io/admission-gated-by` value,
/// unless the Configuration's `featureGates` sets `AdmissionGatedBy: false`.
fn admission_gate(
    gates: crate::config::FeatureGates,
    w: &gpuquota_model::kueue::Workload,
) -> Option<String> {
    if !gates.admission_gated_by {
        return None;
    }
    w.metadata
        .annotations
        .get(ADMISSION_GATED_BY_ANNOTATION)
        .filter(|v| !v.is_empty())
        .cloned()
}
