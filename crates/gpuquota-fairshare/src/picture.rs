//! The static quota picture of every cohort tree and every KAI queue tree: what each node
//! owns, reserves, lends and can reach at most, usage playing no part. `gpuquota quotas`
//! prints it ([`Picture::table`], or its JSON); `gpuquota schema quotas` prints the JSON
//! Schema of [`Picture`] (feature `schema`).
//!
//! The cohort half is drawn from [`QuotaTree`] ([`crate::quota`]), the one implementation of
//! Kueue's quota arithmetic that the admission engine and fair sharing use too, over the
//! Cohorts and ClusterQueues of the model; the KAI half is read straight off the `Queue`
//! objects, and the one document joins both. It lives in this crate because this is the lowest
//! crate holding the quota arithmetic.
//!
//! ```
//! # #[cfg(feature = "yaml")] {
//! let yaml = "apiVersion: kueue.x-k8s.io/v1beta2
//! kind: ClusterQueue
//! metadata: {name: team}
//! spec:
//!   resourceGroups:
//!   - coveredResources: [nvidia.com/gpu]
//!     flavors: [{name: h200, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]
//! ";
//! let mut importer = gpuquota_model::Importer::new();
//! importer.add_str("team.yaml", yaml);
//! let model = importer.finish().expect("imports").model;
//! let p = gpuquota_fairshare::picture::picture(&model).expect("no cohort cycle");
//! assert_eq!(p.cohort_trees[0].nodes[0].quotas[0].most_it_can_use, "8");
//! assert!(p.to_table().contains("ClusterQueue \"team\" (no cohort): h200 / nvidia.com/gpu"));
//! # }
//! ```
//!
//! # JSON (`--output json`), stable
//!
//! ```text
//! {
//!   "cohortTrees": [                      // one per root, roots by name; a ClusterQueue
//!     {                                   // without a cohort is a tree of its own
//!       "root": "platform",
//!       "rootKind": "Cohort",             // "Cohort" | "ClusterQueue"
//!       "nodes": [                        // depth-first, child cohorts then ClusterQueues,
//!         {                               // each group by name
//!           "kind": "Cohort",             // "Cohort" | "ClusterQueue"
//!           "name": "platform",
//!           "parent": null,               // cohort name or null
//!           "depth": 0,
//!           "implicit": false,            // a cohort named by others without a Cohort object
//!           "quotas": [                   // by (flavor, resource); a ClusterQueue lists its
//!             {                           // own entries, a cohort every entry of its subtree
//!               "flavor": "h200-nvl",
//!               "resource": "nvidia.com/gpu",
//!               "nominalQuota": "0",      // Kubernetes quantity strings, in Kueue's units
//!               "borrowingLimit": null,   // null = unset (unlimited)
//!               "lendingLimit": null,     // null = unset (lends everything)
//!               "subtreeQuota": "8",      // capacity visible at this node
//!               "guaranteed": "8",        // nominal − lendingLimit (a root: all of it)
//!               "lendsAtMost": "0",       // what flows to the parent (a root: 0)
//!               "mostItCanUse": "8"       // nominal + borrowingLimit, capped by the tree
//!             }
//!           ]
//!         }
//!       ]
//!     }
//!   ],
//!   "kaiQueueTrees": [                    // one per top-level Queue (department), by name
//!     {
//!       "root": "data-science",
//!       "queues": [                       // depth-first, children by name
//!         {
//!           "name": "data-science",
//!           "parent": null,
//!           "depth": 0,
//!           "priority": 100,              // spec.priority, default 100
//!           "resources": {                // only the resources the spec sets
//!             "gpu": {"quota": 12, "limit": -1, "overQuotaWeight": 12}
//!           }                             // numbers as in the CRD (-1 = unlimited),
//!         }                               // null when a field is unset
//!       ]
//!     }
//!   ]
//! }
//! ```
//! A quantity too large for Kueue's integers prints as `"unlimited"`. Queues whose parents
//! form a cycle or are missing are listed as trees of their own at the end, marked by their
//! `parent`.
//!

use std::collections::{BTreeMap, BTreeSet};

use gpuquota_model::kai::QueueResource;
use gpuquota_model::kueue::ResourceGroup;
use gpuquota_model::limits::MAX_TREE_DEPTH;
use gpuquota_model::text::{Table, Width};
use gpuquota_model::{Amount, FlavorResource, Model, Quantity, ResourceName};

use crate::quota::{FrQuota as Quota, QuotaTree};

/// The whole picture: what `gpuquota quotas --output json` prints.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct Picture {
    /// One per root, roots by name; a ClusterQueue without a cohort is a tree of its own.
    pub cohort_trees: Vec<CohortTree>,
    /// One per top-level Queue (department), by name; then the queues on a parent cycle.
    pub kai_queue_trees: Vec<KaiTree>,
}

#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
/// One cohort tree.
pub struct CohortTree {
    /// The root's name.
    pub root: String,
    /// `Cohort` or `ClusterQueue`.
    pub root_kind: &'static str,
    /// Depth-first from the root, child cohorts then ClusterQueues, each group by name.
    pub nodes: Vec<NodeQuotas>,
}

#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
/// One node of a cohort tree.
pub struct NodeQuotas {
    /// `Cohort` or `ClusterQueue`.
    pub kind: &'static str,
    /// Its name.
    pub name: String,
    /// Its parent cohort, `null` for the root.
    pub parent: Option<String>,
    /// 0 for the root.
    pub depth: usize,
    /// A cohort named by others without a Cohort object.
    pub implicit: bool,
    /// By (flavor, resource): a ClusterQueue's own entries, a cohort's every entry of its
    /// subtree.
    pub quotas: Vec<FrQuota>,
}

#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
/// One flavor-resource of a node; quantities are Kubernetes quantity strings in Kueue's
/// units (`"unlimited"` when too large for Kueue's integers).
pub struct FrQuota {
    /// The ResourceFlavor.
    pub flavor: String,
    /// The resource.
    pub resource: String,
    /// `nominalQuota`.
    pub nominal_quota: String,
    /// `borrowingLimit`; `null` = unset (unlimited).
    pub borrowing_limit: Option<String>,
    /// `lendingLimit`; `null` = unset (lends everything).
    pub lending_limit: Option<String>,
    /// The capacity visible at this node.
    pub subtree_quota: String,
    /// nominal − lendingLimit (a root: all of it).
    pub guaranteed: String,
    /// What flows to the parent (a root: 0).
    pub lends_at_most: String,
    /// nominal + borrowingLimit, capped by the tree.
    pub most_it_can_use: String,
}

#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
/// One KAI queue tree.
pub struct KaiTree {
    /// The top-level queue.
    pub root: String,
    /// Depth-first from the root, children by name.
    pub queues: Vec<KaiQueue>,
}

#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
/// One KAI queue.
pub struct KaiQueue {
    /// Its name.
    pub name: String,
    /// `spec.parentQueue`, `null` when unset.
    pub parent: Option<String>,
    /// 0 for a top-level queue.
    pub depth: usize,
    /// `spec.priority`, default 100.
    pub priority: i32,
    /// `gpu`, `cpu`, `memory`: only the resources the spec sets.
    pub resources: BTreeMap<&'static str, KaiResource>,
}

#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
/// One resource of a KAI queue: numbers as in the CRD (-1 = unlimited), `null` when unset
/// (gpu in devices, cpu in millicores, memory in MB).
pub struct KaiResource {
    /// `quota`.
    pub quota: Option<f64>,
    /// `limit`.
    pub limit: Option<f64>,
    /// `overQuotaWeight`.
    pub over_quota_weight: Option<f64>,
}

fn amount(resource: &ResourceName, a: Amount) -> String {
    if a.is_unlimited() {
        "unlimited".to_owned()
    } else {
        resource.format_amount(a)
    }
}

/// Why the quota picture cannot be drawn.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuotaTreeError {
    /// Cohorts whose `parentName`s form a cycle (Kueue deactivates the whole tree).
    #[error("cohort cycle: {}", .0.join(" -> "))]
    CohortCycle(Vec<String>),
    /// A cohort chain deeper than [`MAX_TREE_DEPTH`] levels.
    #[error("cohort {0:?} is nested more than {MAX_TREE_DEPTH} levels deep")]
    TooDeep(String),
}

fn non_empty(s: Option<&String>) -> Option<&str> {
    s.map(String::as_str).filter(|s| !s.is_empty())
}

/// Refuses `parentName` cycles and chains deeper than [`MAX_TREE_DEPTH`], walking every chain
/// once (a name already known to reach a root ends the walk); the cycle is reported from the
/// first cohort (by name) whose chain closes it.
fn check_chains(model: &Model) -> Result<(), QuotaTreeError> {
    let mut reaches_root: BTreeSet<&str> = BTreeSet::new();
    let mut depth_of: BTreeMap<&str, usize> = BTreeMap::new();
    for name in model.cohorts.keys() {
        let mut path: Vec<&str> = vec![name.as_str()];
        let mut on_path: BTreeMap<&str, usize> = BTreeMap::from([(name.as_str(), 0)]);
        let mut current = name.as_str();
        let mut base = 0usize;
        while let Some(p) = model
            .cohorts
            .get(current)
            .and_then(|c| non_empty(c.spec.parent_name.as_ref()))
        {
            if let Some(&start) = on_path.get(p) {
                let mut cycle: Vec<String> =
                    path[start..].iter().map(|n| (*n).to_owned()).collect();
                cycle.push(p.to_owned());
                return Err(QuotaTreeError::CohortCycle(cycle));
            }
            if reaches_root.contains(p) {
                base = depth_of.get(p).copied().unwrap_or(0) + 1;
                break;
            }
            on_path.insert(p, path.len());
            path.push(p);
            current = p;
        }
        // path[i] sits len-1-i levels above the end of the walk.
        let len = path.len();
        for (i, n) in path.iter().enumerate() {
            let depth = base + (len - 1 - i);
            if depth > MAX_TREE_DEPTH {
                return Err(QuotaTreeError::TooDeep((*n).to_owned()));
            }
            reaches_root.insert(n);
            depth_of.insert(n, depth);
        }
    }
    Ok(())
}

/// The cohort forest of a model as the picture reads it: cohorts (explicit objects, and the
/// implicit ones other objects name) by name, then ClusterQueues by name, with Kueue's quota
/// numbers from a [`QuotaTree`].
struct ModelForest<'m> {
    names: Vec<&'m str>,
    /// Children: child cohorts by name, then ClusterQueues by name.
    children: Vec<Vec<usize>>,
    /// Roots: cohorts without a parent, then ClusterQueues without a cohort, each by name.
    roots: Vec<usize>,
    /// Every flavor-resource of the model's quotas, ascending.
    frs: Vec<FlavorResource>,
    /// The flavor-resources each node's own spec declares, in spec order.
    own: Vec<Vec<usize>>,
    tree: QuotaTree,
}

impl<'m> ModelForest<'m> {
    /// The forest of `model` (whose cohort chains [`check_chains`] accepted).
    fn new(model: &'m Model) -> ModelForest<'m> {
        let mut cohorts: BTreeSet<&'m str> = model.cohorts.keys().map(String::as_str).collect();
        for cq in model.cluster_queues.values() {
            cohorts.extend(non_empty(cq.spec.cohort_name.as_ref()));
        }
        for co in model.cohorts.values() {
            cohorts.extend(non_empty(co.spec.parent_name.as_ref()));
        }
        let cohort_ix: BTreeMap<&str, usize> =
            cohorts.iter().enumerate().map(|(i, n)| (*n, i)).collect();
        let mut names: Vec<&'m str> = cohorts.iter().copied().collect();
        names.extend(model.cluster_queues.keys().map(String::as_str));
        let n = names.len();
        let nc = cohorts.len();
        let mut parent: Vec<Option<usize>> = vec![None; n];
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut groups: Vec<&'m [ResourceGroup]> = vec![&[]; n];
        for (name, co) in &model.cohorts {
            let i = cohort_ix[name.as_str()];
            groups[i] = &co.spec.resource_groups;
            if let Some(p) = non_empty(co.spec.parent_name.as_ref()) {
                parent[i] = Some(cohort_ix[p]);
                children[cohort_ix[p]].push(i);
            }
        }
        for (k, cq) in model.cluster_queues.values().enumerate() {
            let i = nc + k;
            groups[i] = &cq.spec.resource_groups;
            if let Some(c) = non_empty(cq.spec.cohort_name.as_ref()) {
                parent[i] = Some(cohort_ix[c]);
                children[cohort_ix[c]].push(i);
            }
        }
        // Each node's own entries in spec order, the first one of a flavor-resource counting.
        let mut entries: Vec<Vec<(FlavorResource, Quota)>> = vec![Vec::new(); n];
        for (g, out) in groups.iter().zip(&mut entries) {
            for f in g.iter().flat_map(|g| &g.flavors) {
                for r in &f.resources {
                    let fr = FlavorResource {
                        flavor: f.name.clone(),
                        resource: r.name.clone(),
                    };
                    if out.iter().any(|(x, _)| *x == fr) {
                        continue;
                    }
                    let amount = |q: &Quantity| q.to_amount(&fr.resource);
                    let q = Quota {
                        nominal: r.nominal_quota.as_ref().map_or(Amount::ZERO, amount),
                        borrowing_limit: r.borrowing_limit.as_ref().map(amount),
                        lending_limit: r.lending_limit.as_ref().map(amount),
                        declared: true,
                    };
                    out.push((fr, q));
                }
            }
        }
        let frs: Vec<FlavorResource> = entries
            .iter()
            .flatten()
            .map(|(fr, _)| fr.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let nf = frs.len();
        let mut quotas = vec![Quota::default(); n * nf];
        let mut own = vec![Vec::new(); n];
        for (i, e) in entries.into_iter().enumerate() {
            for (fr, q) in e {
                let f = frs.binary_search(&fr).unwrap_or(0);
                quotas[i * nf + f] = q;
                own[i].push(f);
            }
        }
        let cohort: Vec<bool> = (0..n).map(|i| i < nc).collect();
        let tree = QuotaTree::new(&parent, &children, &cohort, nf, quotas);
        let roots = (0..n).filter(|&i| parent[i].is_none()).collect();
        ModelForest {
            names,
            children,
            roots,
            frs,
            own,
            tree,
        }
    }
}

/// The quota picture of `model`, its cohort half drawn from Kueue's quota arithmetic
/// ([`QuotaTree`], the one the engines admit against).
///
/// # Errors
/// A cohort cycle (or a chain deeper than the tree allows).
///
/// # Complexity
/// O(nodes × flavor-resources + entries log flavor-resources + queues log queues).
pub fn picture(model: &Model) -> Result<Picture, QuotaTreeError> {
    check_chains(model)?;
    let forest = ModelForest::new(model);
    let t = &forest.tree;
    let kind = |i: usize| {
        if t.is_cohort(i) {
            "Cohort"
        } else {
            "ClusterQueue"
        }
    };
    let mut cohort_trees = Vec::new();
    for &root in &forest.roots {
        let mut nodes = Vec::new();
        let mut stack = vec![(root, 0usize)];
        while let Some((node, depth)) = stack.pop() {
            let frs: Vec<usize> = if t.is_cohort(node) {
                (0..forest.frs.len())
                    .filter(|&f| t.in_subtree(node, f))
                    .collect()
            } else {
                forest.own[node].clone()
            };
            let quotas = frs
                .into_iter()
                .map(|f| {
                    let fr = &forest.frs[f];
                    let q = t.quota(node, f);
                    let r = &fr.resource;
                    FrQuota {
                        flavor: fr.flavor.clone(),
                        resource: r.as_str().to_owned(),
                        nominal_quota: amount(r, q.nominal),
                        borrowing_limit: q.borrowing_limit.map(|a| amount(r, a)),
                        lending_limit: q.lending_limit.map(|a| amount(r, a)),
                        subtree_quota: amount(r, t.subtree_quota(node, f)),
                        guaranteed: amount(r, t.guaranteed(node, f)),
                        lends_at_most: amount(r, t.lends_at_most(node, f)),
                        most_it_can_use: amount(r, t.potential_available(node, f)),
                    }
                })
                .collect();
            let name = forest.names[node];
            nodes.push(NodeQuotas {
                kind: kind(node),
                name: name.to_owned(),
                parent: t.parent(node).map(|p| forest.names[p].to_owned()),
                depth,
                implicit: t.is_cohort(node) && !model.cohorts.contains_key(name),
                quotas,
            });
            for &child in forest.children[node].iter().rev() {
                stack.push((child, depth + 1));
            }
        }
        cohort_trees.push(CohortTree {
            root: forest.names[root].to_owned(),
            root_kind: kind(root),
            nodes,
        });
    }
    Ok(Picture {
        cohort_trees,
        kai_queue_trees: kai_trees(model),
    })
}

/// Exact decimal text of a KAI value, read back as the CRD's float64.
fn kai_number(q: Option<&Quantity>) -> Option<f64> {
    let q = q?;
    let (m, e) = q.as_decimal();
    format!("{m}e{e}").parse::<f64>().ok()
}

fn kai_trees(model: &Model) -> Vec<KaiTree> {
    let mut children: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut roots: Vec<&str> = Vec::new();
    for (name, q) in &model.queues {
        match q.spec.parent_queue.as_deref().filter(|p| !p.is_empty()) {
            Some(p) if model.queues.contains_key(p) && p != name => {
                children.entry(p).or_default().push(name)
            }
            _ => roots.push(name),
        }
    }
    let mut placed: BTreeSet<&str> = BTreeSet::new();
    let mut trees = Vec::new();
    // Queues not reachable from a root sit on a parent cycle: each cycle is listed from its
    // smallest name, after the proper trees.
    let mut walk_roots: Vec<&str> = roots;
    loop {
        for root in walk_roots.drain(..) {
            if placed.contains(root) {
                continue;
            }
            let mut queues = Vec::new();
            let mut stack = vec![(root, 0usize)];
            while let Some((name, depth)) = stack.pop() {
                if !placed.insert(name) {
                    continue;
                }
                let Some(q) = model.queues.get(name) else {
                    continue;
                };
                let mut resources = BTreeMap::new();
                if let Some(r) = &q.spec.resources {
                    for (key, res) in [("gpu", &r.gpu), ("cpu", &r.cpu), ("memory", &r.memory)] {
                        if let Some(QueueResource {
                            quota,
                            over_quota_weight,
                            limit,
                        }) = res
                        {
                            resources.insert(
                                key,
                                KaiResource {
                                    quota: kai_number(quota.as_ref()),
                                    limit: kai_number(limit.as_ref()),
                                    over_quota_weight: kai_number(over_quota_weight.as_ref()),
                                },
                            );
                        }
                    }
                }
                queues.push(KaiQueue {
                    name: name.to_owned(),
                    parent: q.spec.parent_queue.clone().filter(|p| !p.is_empty()),
                    depth,
                    priority: q.priority(),
                    resources,
                });
                if let Some(cs) = children.get(name) {
                    for c in cs.iter().rev() {
                        stack.push((c, depth + 1));
                    }
                }
            }
            trees.push(KaiTree {
                root: root.to_owned(),
                queues,
            });
        }
        match model
            .queues
            .keys()
            .map(String::as_str)
            .find(|n| !placed.contains(n))
        {
            Some(n) => walk_roots.push(n),
            None => break,
        }
    }
    trees
}

// ---------------------------------------------------------------------------------------------
// Tables

/// Rows under headers on the workspace's table layout; columns not in `left` are
/// right-aligned.
fn layout(headers: &[&str], rows: &[Vec<String>], left: &[usize], width: Width) -> String {
    let mut t =
        Table::new(headers.iter().copied()).right((0..headers.len()).filter(|i| !left.contains(i)));
    for r in rows {
        t.row(r.iter().cloned());
    }
    t.render(width)
}

const KUEUE_LEGEND: &str = "NOMINAL: nominalQuota; BL/LL: borrowingLimit/lendingLimit (- unset);
GUARANTEED: nominal - lendingLimit (a root: all); LENDS: lends at most;
MAX: the most it can use (nominal + borrowingLimit, capped by the tree)\n";

impl Picture {
    /// [`Picture::table`] at full width.
    pub fn to_table(&self) -> String {
        self.table(Width::Full)
    }

    /// The picture as tables, one per cohort tree and flavor-resource, then the KAI queues,
    /// `width` wide at most (wide cells wrap, nothing is cut). A KAI queue's resource that is
    /// unlimited with no quota (quota and limit both -1) gets no row, and a line under the
    /// table says so ([`Picture::table_with`] shows every resource).
    pub fn table(&self, width: Width) -> String {
        render_table_at(self, width, false)
    }

    /// [`Picture::table`]; with `all_resources`, the KAI queue table has a row for every
    /// resource of every queue, the unlimited ones too.
    pub fn table_with(&self, width: Width, all_resources: bool) -> String {
        render_table_at(self, width, all_resources)
    }
}

/// True for a KAI queue resource that is unlimited with no quota (quota and limit -1): the
/// row [`Picture::table`] leaves out.
fn unlimited_without_quota(r: &KaiResource) -> bool {
    r.quota == Some(-1.0) && r.limit == Some(-1.0)
}

fn render_table_at(p: &Picture, width: Width, all_resources: bool) -> String {
    let mut out = String::new();
    if p.cohort_trees.is_empty() {
        out.push_str("No ClusterQueues or Cohorts.\n");
    }
    for t in &p.cohort_trees {
        // One block per flavor-resource of the tree.
        let mut frs: BTreeSet<(&str, &str)> = BTreeSet::new();
        for n in &t.nodes {
            for q in &n.quotas {
                frs.insert((&q.flavor, &q.resource));
            }
        }
        let title = if t.root_kind == "Cohort" {
            format!("Cohort tree {:?}", t.root)
        } else {
            format!("ClusterQueue {:?} (no cohort)", t.root)
        };
        if frs.is_empty() {
            out.push_str(&format!("{title}: no quotas\n\n"));
        }
        for (flavor, resource) in frs {
            out.push_str(&format!("{title}: {flavor} / {resource}"));
            out.push('\n');
            let mut rows = Vec::new();
            for n in &t.nodes {
                let Some(q) = n
                    .quotas
                    .iter()
                    .find(|q| q.flavor == flavor && q.resource == resource)
                else {
                    continue;
                };
                let label = if n.kind == "Cohort" {
                    format!("{}{} (cohort)", "  ".repeat(n.depth), n.name)
                } else {
                    format!("{}{}", "  ".repeat(n.depth), n.name)
                };
                rows.push(vec![
                    label,
                    q.nominal_quota.clone(),
                    q.borrowing_limit.clone().unwrap_or_else(|| "-".into()),
                    q.lending_limit.clone().unwrap_or_else(|| "-".into()),
                    q.guaranteed.clone(),
                    q.lends_at_most.clone(),
                    q.most_it_can_use.clone(),
                ]);
            }
            out.push_str(&layout(
                &["NODE", "NOMINAL", "BL", "LL", "GUARANTEED", "LENDS", "MAX"],
                &rows,
                &[0],
                width,
            ));
            out.push('\n');
        }
    }
    if !p.cohort_trees.is_empty() {
        out.push_str(KUEUE_LEGEND);
    }
    if !p.kai_queue_trees.is_empty() {
        out.push_str(
            "\nKAI queues (gpu in devices, cpu in millicores, memory in MB; -1 unlimited)\n",
        );
        let mut rows = Vec::new();
        // the resources left out somewhere, in the table's order
        let mut left_out: Vec<&str> = Vec::new();
        let num = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{v}"));
        for t in &p.kai_queue_trees {
            for q in &t.queues {
                let label = format!("{}{}", "  ".repeat(q.depth), q.name);
                let mut shown = 0;
                for (k, r) in &q.resources {
                    if all_resources || !unlimited_without_quota(r) {
                        shown += 1;
                    } else if !left_out.contains(k) {
                        left_out.push(k);
                    }
                }
                if shown == 0 {
                    rows.push(vec![
                        label.clone(),
                        q.priority.to_string(),
                        "-".into(),
                        "-".into(),
                        "-".into(),
                        "-".into(),
                    ]);
                }
                let ordered = ["gpu", "cpu", "memory"]
                    .into_iter()
                    .filter_map(|k| q.resources.get(k).map(|r| (k, r)))
                    .filter(|(_, r)| all_resources || !unlimited_without_quota(r));
                for (i, (res, r)) in ordered.enumerate() {
                    let (l, prio) = if i == 0 {
                        (label.clone(), q.priority.to_string())
                    } else {
                        (String::new(), String::new())
                    };
                    rows.push(vec![
                        l,
                        prio,
                        res.to_owned(),
                        num(r.quota),
                        num(r.limit),
                        num(r.over_quota_weight),
                    ]);
                }
            }
        }
        out.push_str(&layout(
            &["QUEUE", "PRIORITY", "RESOURCE", "QUOTA", "LIMIT", "WEIGHT"],
            &rows,
            &[0, 2],
            width,
        ));
        if !left_out.is_empty() {
            let order = |k: &&str| ["gpu", "cpu", "memory"].iter().position(|o| o == k);
            left_out.sort_by_key(|k| (order(k), *k));
            out.push_str(&format!(
                "Not shown: {} where quota and limit are -1 (unlimited, no quota).\n",
                left_out.join(", ")
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "yaml")]
    #[test]
    fn kai_resources_unlimited_without_quota_are_left_out_unless_asked() {
        let model = gpuquota_model::import_str(
            "kai.yaml",
            "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: team}\nspec:\n  resources:\n    gpu: {quota: 2, overQuotaWeight: 1, limit: -1}\n    cpu: {quota: -1, overQuotaWeight: 1, limit: -1}\n    memory: {quota: 100, overQuotaWeight: 1, limit: -1}\n---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: open}\nspec:\n  resources:\n    gpu: {quota: -1, overQuotaWeight: 1, limit: -1}\n",
        )
        .unwrap()
        .model;
        let p = picture(&model).unwrap();
        let kai = |t: String| t[t.find("KAI queues").unwrap()..].to_owned();
        // cpu of `team` and gpu of `open` are unlimited with no quota: no row; `open` keeps
        // its row, with dashes
        assert_eq!(
            kai(p.table(Width::Full)),
            "KAI queues (gpu in devices, cpu in millicores, memory in MB; -1 unlimited)
QUEUE  PRIORITY  RESOURCE  QUOTA  LIMIT  WEIGHT
open        100  -             -      -       -
team        100  gpu           2     -1       1
                 memory      100     -1       1
Not shown: gpu, cpu where quota and limit are -1 (unlimited, no quota).
"
        );
        assert_eq!(
            kai(p.table_with(Width::Full, true)),
            "KAI queues (gpu in devices, cpu in millicores, memory in MB; -1 unlimited)
QUEUE  PRIORITY  RESOURCE  QUOTA  LIMIT  WEIGHT
open        100  gpu          -1     -1       1
team        100  gpu           2     -1       1
                 cpu          -1     -1       1
                 memory      100     -1       1
"
        );
    }

    #[test]
    fn kai_numbers_are_exact_decimals() {
        assert_eq!(kai_number(Some(&"0.5".parse().unwrap())), Some(0.5));
        assert_eq!(kai_number(Some(&"-1".parse().unwrap())), Some(-1.0));
        assert_eq!(kai_number(Some(&"32.55".parse().unwrap())), Some(32.55));
        assert_eq!(kai_number(None), None);
    }
}
