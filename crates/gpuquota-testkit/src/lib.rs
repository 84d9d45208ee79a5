//! Test support shared by the workspace's tests (a dev-dependency only; not published): one
//! proptest configuration, one arbtest budget, scenario file readers ([`files`]) and one
//! random-platform strategy, with the quota-forest preset ([`Shape::quota_forest`]) and the
//! differential check ([`check_view`]) of a fair-sharing quota view against the reference
//! tree ([`quota_tree`], the slow oracle of Kueue's quota arithmetic).
//!
//! The platform is a Kueue cohort forest: Cohorts `c0..` (a parent always has a lower
//! index, so there are no cycles), ClusterQueues `q0..` (each with a LocalQueue of the same
//! name in namespace `ns`), quotas with borrowing and lending limits on a list of
//! flavor-resources, admitted workloads (`a0..`, with `status.admission`) and pending ones
//! (`p0..`). A [`Shape`] says how large and how varied it is; [`Platform::documents`]
//! renders it as one manifest per object, so that a test can shuffle their order.
//!
//! ```
//! use gpuquota_testkit::{Shape, platform};
//! use proptest::strategy::{Strategy, ValueTree};
//! use proptest::test_runner::TestRunner;
//!
//! let mut runner = TestRunner::deterministic();
//! let p = platform(Shape::default()).new_tree(&mut runner).unwrap().current();
//! let docs = p.documents();
//! assert!(docs.iter().any(|d| d.contains("kind: ClusterQueue")));
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod files;

use std::ops::Range;

use crate::quota_tree::{FlavorResource, Node, ReferenceTree};
use gpuquota_fairshare::view::{self, NodeId, QuotaView};
use gpuquota_model::Model;
use proptest::prelude::*;

pub mod quota_tree;

/// Whether the tests run under CI (`CI` set): no shrinking, smaller budgets.
pub fn ci() -> bool {
    std::env::var_os("CI").is_some()
}

/// The proptest configuration of every property test: `cases` cases (`PROPTEST_CASES`
/// overrides), shrinking locally and none under CI.
pub fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(cases),
        max_shrink_iters: if ci() { 0 } else { 256 },
        ..ProptestConfig::default()
    }
}

/// Milliseconds per arbtest check: `GPUQUOTA_FUZZ_MS` if set, else `local` (at most 300
/// under CI).
pub fn budget_ms(local: u64) -> u64 {
    std::env::var("GPUQUOTA_FUZZ_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if ci() { local.min(300) } else { local })
}

/// How the cohorts hang together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tree {
    /// Each cohort under any lower-numbered cohort or none: a forest.
    Forest,
    /// `c0` the root, every other cohort directly under it.
    Star,
}

/// How large and how varied a [`Platform`] is.
#[derive(Debug, Clone)]
pub struct Shape {
    /// The flavor-resources `(flavor, resource)` quotas are on, in order.
    pub frs: Vec<(&'static str, &'static str)>,
    /// Number of Cohorts.
    pub cohorts: Range<usize>,
    /// How the cohorts hang together.
    pub tree: Tree,
    /// Cohorts declare quota on the first this-many flavor-resources.
    pub cohort_frs: usize,
    /// Number of ClusterQueues.
    pub queues: Range<usize>,
    /// ClusterQueues declare quota on the first `1..=queue_frs.end - 1` flavor-resources.
    pub queue_frs: Range<usize>,
    /// Nominal quotas.
    pub nominal: Range<u8>,
    /// Borrowing limits (set on about half the nodes that have a parent).
    pub borrowing_limit: Range<u8>,
    /// Lending limits (set on about half the nodes that have a parent).
    pub lending_limit: Range<u8>,
    /// A ClusterQueue's lending limit is at most its nominal quota (as the API server
    /// requires); otherwise it is left as drawn.
    pub clamp_lending_limit: bool,
    /// Every ClusterQueue is in a cohort.
    pub always_in_cohort: bool,
    /// Some ClusterQueues name the implicit cohort `implicit` (no Cohort object).
    pub implicit_cohort: bool,
    /// Fair sharing: a `Configuration` with `fairSharing: {}` and a weight per ClusterQueue.
    pub fair_sharing: bool,
    /// Some ClusterQueues set `borrowWithinCohort.policy: LowerPriority` (else `Never`).
    pub borrow_within_cohort: bool,
    /// Some ClusterQueues are `StrictFIFO` (else `BestEffortFIFO`).
    pub strict_fifo: bool,
    /// Admitted workloads.
    pub admitted: Range<usize>,
    /// Pending workloads.
    pub pending: Range<usize>,
    /// Pods per workload.
    pub pods: Range<u8>,
    /// Units of the flavor-resource's resource per pod.
    pub per_pod: Range<u8>,
}

impl Default for Shape {
    /// Two GPU flavors, up to three cohorts in a forest, up to five ClusterQueues with
    /// every preemption setting, a few admitted and pending workloads.
    fn default() -> Shape {
        Shape {
            frs: vec![("f0", "nvidia.com/gpu"), ("f1", "nvidia.com/gpu")],
            cohorts: 1..4,
            tree: Tree::Forest,
            cohort_frs: 1,
            queues: 1..6,
            queue_frs: 1..3,
            nominal: 0..6,
            borrowing_limit: 0..5,
            lending_limit: 0..5,
            clamp_lending_limit: true,
            always_in_cohort: false,
            implicit_cohort: false,
            fair_sharing: false,
            borrow_within_cohort: true,
            strict_fifo: true,
            admitted: 0..6,
            pending: 1..8,
            pods: 1..4,
            per_pod: 1..4,
        }
    }
}

impl Shape {
    /// The quota forest of the differential tests against the reference tree
    /// ([`quota_tree::ReferenceTree`]): three flavor-resources of two
    /// resources, a cohort forest (possibly empty), ClusterQueues in a cohort, in the
    /// implicit cohort `implicit` or alone, limits as drawn (a lending limit may exceed the
    /// nominal quota: a tree built without the validator), admitted usage on every
    /// flavor-resource and no pending workload. Tests that build the cohort engine's world
    /// narrow it (two GPU flavors, clamped lending limits, pending workloads).
    pub fn quota_forest() -> Shape {
        Shape {
            frs: vec![
                ("a100", "nvidia.com/gpu"),
                ("h100", "nvidia.com/gpu"),
                ("a100", "example.com/nic"),
            ],
            cohorts: 0..4,
            tree: Tree::Forest,
            cohort_frs: 3,
            queues: 1..6,
            queue_frs: 3..4,
            nominal: 0..12,
            borrowing_limit: 0..6,
            lending_limit: 0..8,
            clamp_lending_limit: false,
            implicit_cohort: true,
            admitted: 0..12,
            pending: 0..1,
            pods: 1..2,
            per_pod: 0..14,
            ..Shape::default()
        }
    }
}

/// `fairSharing.weight` of a node as the manifests state it (1 when unset).
///
/// # Panics
/// On a weight that is not a number (the platforms write integers).
pub fn weight_of(model: &Model, node: &Node) -> f64 {
    let w = match node {
        Node::ClusterQueue(n) => model
            .cluster_queues
            .get(n)
            .and_then(|c| c.spec.fair_sharing.as_ref())
            .and_then(|f| f.weight.as_ref()),
        Node::Cohort(n) => model
            .cohorts
            .get(n)
            .and_then(|c| c.spec.fair_sharing.as_ref())
            .and_then(|f| f.weight.as_ref()),
    };
    w.map_or(1.0, |q| q.to_string().parse().expect("a numeric weight"))
}

/// The differential check of a fair-sharing quota view against the reference tree with the
/// same usage: for every node of `nodes` and every flavor-resource of the view, the
/// `SubtreeQuota`, `localQuota`, usage and `SubtreeQuota` keys, then the node's weighted
/// share and dominant resource with the weight of `model`.
///
/// # Errors
/// The first number that differs, naming the node.
pub fn check_view<V: QuotaView + ?Sized>(
    v: &V,
    nodes: &[(Node, NodeId)],
    model: &Model,
    reference: &ReferenceTree<'_>,
) -> Result<(), TestCaseError> {
    for (node, id) in nodes {
        let id = *id;
        for (f, fr) in v.flavor_resources().iter().enumerate() {
            let rf = FlavorResource::new(fr.flavor.as_str(), fr.resource.as_str());
            prop_assert_eq!(
                v.subtree_quota_at(id, f),
                reference.subtree_quota(node, &rf),
                "subtreeQuota {}",
                node
            );
            prop_assert_eq!(
                v.local_quota_at(id, f),
                reference.local_quota(node, &rf),
                "localQuota {}",
                node
            );
            prop_assert_eq!(
                v.usage_at(id, f),
                reference.usage(node, &rf),
                "usage {}",
                node
            );
            prop_assert_eq!(
                v.in_subtree(id, f),
                reference.subtree_flavor_resources(node).contains(&rf),
                "SubtreeQuota keys {}",
                node
            );
        }
        let drs = view::drs(v, id);
        let (share, dominant) = reference.weighted_share(node, weight_of(model, node));
        prop_assert_eq!(drs.weighted_share(), share, "weightedShare {}", node);
        prop_assert_eq!(
            drs.dominant_resource,
            dominant,
            "dominant resource {}",
            node
        );
    }
    Ok(())
}

/// A node's own quota on one flavor-resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    /// `nominalQuota`.
    pub nominal: u8,
    /// `borrowingLimit` (written only for a node with a parent).
    pub borrowing_limit: Option<u8>,
    /// `lendingLimit` (written only for a node with a parent).
    pub lending_limit: Option<u8>,
}

/// A Cohort `c{index}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CohortSpec {
    /// The parent cohort's index (always lower).
    pub parent: Option<usize>,
    /// Quotas on the first flavor-resources.
    pub quotas: Vec<Quota>,
}

/// Where a ClusterQueue hangs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parent {
    /// No cohort.
    None,
    /// Cohort `c{index}`.
    Cohort(usize),
    /// The implicit cohort `implicit`.
    Implicit,
}

/// A ClusterQueue `q{index}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueSpec {
    /// Its cohort.
    pub cohort: Parent,
    /// Quotas on the first flavor-resources.
    pub quotas: Vec<Quota>,
    /// `preemption.withinClusterQueue`: 0 `Never`, 1 `LowerPriority`, 2
    /// `LowerOrNewerEqualPriority`.
    pub within: u8,
    /// `preemption.reclaimWithinCohort`: 0 `Never`, 1 `LowerPriority`, 2 `Any`.
    pub reclaim: u8,
    /// `borrowWithinCohort.policy: LowerPriority` (only when reclaiming).
    pub borrow_within_cohort: bool,
    /// `queueingStrategy: StrictFIFO` (else `BestEffortFIFO`).
    pub strict_fifo: bool,
    /// `fairSharing.weight` (written only under [`Shape::fair_sharing`]).
    pub weight: u8,
}

/// An admitted workload `a{index}`: one PodSet `main` admitted to its ClusterQueue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdmittedSpec {
    /// The ClusterQueue (and LocalQueue) index.
    pub queue: usize,
    /// The flavor-resource it was admitted on (the queue's first when it has no quota there).
    pub fr: usize,
    /// Pods.
    pub pods: u8,
    /// Units per pod.
    pub per_pod: u8,
    /// `spec.priority`.
    pub priority: i32,
}

/// A pending workload `p{index}`: one PodSet `main` requesting the first flavor-resource's
/// resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PendingSpec {
    /// The LocalQueue (and ClusterQueue) index.
    pub queue: usize,
    /// Pods.
    pub pods: u8,
    /// Units per pod.
    pub per_pod: u8,
    /// `spec.priority`.
    pub priority: i32,
}

/// A random platform (see the crate docs).
#[derive(Debug, Clone)]
pub struct Platform {
    /// The flavor-resources.
    pub frs: Vec<(&'static str, &'static str)>,
    /// Fair sharing on (a `Configuration` and weights).
    pub fair_sharing: bool,
    /// Cohorts `c0..`.
    pub cohorts: Vec<CohortSpec>,
    /// ClusterQueues `q0..`.
    pub queues: Vec<QueueSpec>,
    /// Admitted workloads `a0..`.
    pub admitted: Vec<AdmittedSpec>,
    /// Pending workloads `p0..`.
    pub pending: Vec<PendingSpec>,
}

fn quota(s: &Shape) -> impl Strategy<Value = Quota> + use<> {
    (
        s.nominal.clone(),
        proptest::option::of(s.borrowing_limit.clone()),
        proptest::option::of(s.lending_limit.clone()),
    )
        .prop_map(|(nominal, borrowing_limit, lending_limit)| Quota {
            nominal,
            borrowing_limit,
            lending_limit,
        })
}

/// The random-platform strategy of `shape`.
pub fn platform(shape: Shape) -> impl Strategy<Value = Platform> {
    (shape.cohorts.clone(), shape.queues.clone()).prop_flat_map(move |(nc, nq)| {
        let s = shape.clone();
        let parent = proptest::collection::vec(proptest::option::of(0usize..8), nc);
        let cohort_quotas =
            proptest::collection::vec(proptest::collection::vec(quota(&s), s.cohort_frs), nc);
        let cohort_choice = if nc == 0 {
            Just(Parent::None).boxed()
        } else if s.always_in_cohort {
            (0..nc).prop_map(Parent::Cohort).boxed()
        } else if s.implicit_cohort {
            prop_oneof![
                2 => (0..nc).prop_map(Parent::Cohort),
                1 => Just(Parent::Implicit),
                1 => Just(Parent::None),
            ]
            .boxed()
        } else {
            proptest::option::of(0..nc)
                .prop_map(|c| c.map_or(Parent::None, Parent::Cohort))
                .boxed()
        };
        let (bwc_on, strict_on) = (s.borrow_within_cohort, s.strict_fifo);
        let queues = proptest::collection::vec(
            (
                cohort_choice,
                proptest::collection::vec(quota(&s), s.queue_frs.clone()),
                0u8..3,
                0u8..3,
                any::<bool>().prop_map(move |b| b && bwc_on),
                any::<bool>().prop_map(move |b| b && strict_on),
                0u8..3,
            )
                .prop_map(|(cohort, quotas, within, reclaim, bwc, strict, weight)| {
                    QueueSpec {
                        cohort,
                        quotas,
                        within,
                        reclaim,
                        borrow_within_cohort: bwc,
                        strict_fifo: strict,
                        weight,
                    }
                }),
            nq,
        );
        let nfr = s.frs.len().max(1);
        let admitted = proptest::collection::vec(
            (0..nq, 0..nfr, s.pods.clone(), s.per_pod.clone(), 0i32..3).prop_map(
                |(queue, fr, pods, per_pod, priority)| AdmittedSpec {
                    queue,
                    fr,
                    pods,
                    per_pod,
                    priority,
                },
            ),
            s.admitted.clone(),
        );
        let pending = proptest::collection::vec(
            (0..nq, s.pods.clone(), s.per_pod.clone(), 0i32..3).prop_map(
                |(queue, pods, per_pod, priority)| PendingSpec {
                    queue,
                    pods,
                    per_pod,
                    priority,
                },
            ),
            s.pending.clone(),
        );
        let tree = s.tree;
        let clamp = s.clamp_lending_limit;
        let frs = s.frs.clone();
        let fair_sharing = s.fair_sharing;
        (parent, cohort_quotas, queues, admitted, pending).prop_map(
            move |(parents, cohort_quotas, mut queues, admitted, pending)| {
                let cohorts = parents
                    .iter()
                    .zip(cohort_quotas)
                    .enumerate()
                    .map(|(i, (p, quotas))| CohortSpec {
                        parent: match tree {
                            // only lower-numbered parents: no cycles
                            Tree::Forest => p.filter(|&p| p < i),
                            Tree::Star => (i > 0).then_some(0),
                        },
                        quotas,
                    })
                    .collect();
                if clamp {
                    for q in &mut queues {
                        for quota in &mut q.quotas {
                            quota.lending_limit = quota.lending_limit.map(|l| l.min(quota.nominal));
                        }
                    }
                }
                Platform {
                    frs: frs.clone(),
                    fair_sharing,
                    cohorts,
                    queues,
                    admitted,
                    pending,
                }
            },
        )
    })
}

const API: &str = "apiVersion: kueue.x-k8s.io/v1beta2";

impl Platform {
    /// The resource groups of a node's quotas on the first flavor-resources (one group
    /// covering every resource named, each flavor with its own resources); limits only
    /// when the node has a parent.
    fn groups(&self, quotas: &[Quota], with_limits: bool) -> String {
        let frs = &self.frs[..quotas.len().min(self.frs.len())];
        let mut resources: Vec<&str> = Vec::new();
        let mut flavors: Vec<&str> = Vec::new();
        for (f, r) in frs {
            if !resources.contains(r) {
                resources.push(r);
            }
            if !flavors.contains(f) {
                flavors.push(f);
            }
        }
        let mut s = format!(
            "  resourceGroups:\n  - coveredResources: [{}]\n    flavors:\n",
            resources.join(", ")
        );
        for flavor in flavors {
            s.push_str(&format!("    - name: {flavor}\n      resources:\n"));
            for ((f, r), q) in frs.iter().zip(quotas) {
                if *f != flavor {
                    continue;
                }
                s.push_str(&format!(
                    "      - name: {r}\n        nominalQuota: \"{}\"\n",
                    q.nominal
                ));
                if with_limits {
                    if let Some(b) = q.borrowing_limit {
                        s.push_str(&format!("        borrowingLimit: \"{b}\"\n"));
                    }
                    if let Some(l) = q.lending_limit {
                        s.push_str(&format!("        lendingLimit: \"{l}\"\n"));
                    }
                }
            }
        }
        s
    }

    /// One manifest per object: ResourceFlavors, the Configuration (fair sharing), Cohorts,
    /// ClusterQueues with their LocalQueues, admitted and pending workloads.
    pub fn documents(&self) -> Vec<String> {
        let mut docs = Vec::new();
        let mut flavors: Vec<&str> = Vec::new();
        for (f, _) in &self.frs {
            if !flavors.contains(f) {
                flavors.push(f);
                docs.push(format!(
                    "{API}\nkind: ResourceFlavor\nmetadata: {{name: {f}}}\n---\n"
                ));
            }
        }
        if self.fair_sharing {
            docs.push(
                "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing: {}\n---\n"
                    .to_owned(),
            );
        }
        for (i, c) in self.cohorts.iter().enumerate() {
            let mut s = format!("{API}\nkind: Cohort\nmetadata: {{name: c{i}}}\nspec:\n");
            if let Some(p) = c.parent {
                s.push_str(&format!("  parentName: c{p}\n"));
            }
            if c.quotas.is_empty() {
                if c.parent.is_none() {
                    s.push_str("  {}\n");
                }
            } else {
                s.push_str(&self.groups(&c.quotas, c.parent.is_some()));
            }
            s.push_str("---\n");
            docs.push(s);
        }
        for (i, q) in self.queues.iter().enumerate() {
            docs.push(self.cluster_queue(i, q));
        }
        for (i, a) in self.admitted.iter().enumerate() {
            docs.push(self.admitted_workload(i, a));
        }
        for (i, p) in self.pending.iter().enumerate() {
            let (_, r) = self.frs[0];
            docs.push(workload(
                &format!("p{i}"),
                p.queue,
                p.priority,
                100 + i,
                p.pods,
                r,
                p.per_pod,
            ));
        }
        docs
    }

    fn cluster_queue(&self, i: usize, q: &QueueSpec) -> String {
        const WITHIN: [&str; 3] = ["Never", "LowerPriority", "LowerOrNewerEqualPriority"];
        const RECLAIM: [&str; 3] = ["Never", "LowerPriority", "Any"];
        let reclaim = RECLAIM[usize::from(q.reclaim % 3)];
        let bwc = if q.borrow_within_cohort && reclaim != "Never" {
            "LowerPriority"
        } else {
            "Never"
        };
        let strategy = if q.strict_fifo {
            "StrictFIFO"
        } else {
            "BestEffortFIFO"
        };
        let mut s = format!(
            "{API}\nkind: ClusterQueue\nmetadata: {{name: q{i}}}\nspec:\n  namespaceSelector: {{}}\n"
        );
        let cohort = match q.cohort {
            Parent::None => None,
            Parent::Cohort(c) if c < self.cohorts.len() => Some(format!("c{c}")),
            Parent::Cohort(_) => None,
            Parent::Implicit => Some("implicit".to_owned()),
        };
        if let Some(c) = &cohort {
            s.push_str(&format!("  cohortName: {c}\n"));
        }
        s.push_str(&format!("  queueingStrategy: {strategy}\n"));
        s.push_str(&format!(
            "  preemption: {{withinClusterQueue: {}, reclaimWithinCohort: {reclaim}, borrowWithinCohort: {{policy: {bwc}}}}}\n",
            WITHIN[usize::from(q.within % 3)]
        ));
        if self.fair_sharing {
            s.push_str(&format!("  fairSharing: {{weight: \"{}\"}}\n", q.weight));
        }
        s.push_str(&self.groups(&q.quotas, cohort.is_some()));
        s.push_str("---\n");
        s.push_str(&format!(
            "{API}\nkind: LocalQueue\nmetadata: {{name: q{i}, namespace: ns}}\nspec: {{clusterQueue: q{i}}}\n---\n"
        ));
        s
    }

    fn admitted_workload(&self, i: usize, a: &AdmittedSpec) -> String {
        let queue = &self.queues[a.queue];
        // the queue's own flavor-resource, or its first
        let fr = if a.fr < queue.quotas.len() { a.fr } else { 0 };
        let (flavor, resource) = self.frs[fr];
        let mut s = workload(
            &format!("a{i}"),
            a.queue,
            a.priority,
            i,
            a.pods,
            resource,
            a.per_pod,
        );
        s.truncate(s.len() - 4);
        let total = u32::from(a.pods) * u32::from(a.per_pod);
        s.push_str(&format!(
            "status:\n  conditions:\n  - type: QuotaReserved\n    status: \"True\"\n    lastTransitionTime: \"2026-01-01T01:{:02}:{:02}Z\"\n  admission:\n    clusterQueue: q{}\n    podSetAssignments:\n    - name: main\n      count: {}\n      flavors:\n        {resource}: {flavor}\n      resourceUsage:\n        {resource}: \"{total}\"\n---\n",
            i / 60,
            i % 60,
            a.queue,
            a.pods,
        ));
        s
    }
}

/// A workload in namespace `ns` queued to LocalQueue `q{queue}`, created `created` seconds
/// after 2026-01-01T00:00:00Z, with one PodSet `main` of `pods` pods requesting `per_pod`
/// of `resource` each.
fn workload(
    name: &str,
    queue: usize,
    priority: i32,
    created: usize,
    pods: u8,
    resource: &str,
    per_pod: u8,
) -> String {
    format!(
        "{API}\nkind: Workload\nmetadata:\n  name: {name}\n  namespace: ns\n  uid: uid-{name}\n  creationTimestamp: \"2026-01-01T00:{:02}:{:02}Z\"\nspec:\n  queueName: q{queue}\n  priority: {priority}\n  podSets:\n  - name: main\n    count: {pods}\n    template:\n      spec:\n        containers:\n        - name: c\n          resources:\n            requests:\n              {resource}: \"{per_pod}\"\n---\n",
        created / 60 % 60,
        created % 60
    )
}
