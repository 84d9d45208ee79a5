//! `gpuquota quotas FILES… [--output table|json]`: the static quota picture of every cohort
//! tree and every KAI queue tree. Usage plays no part: the picture says what each node owns,
//! reserves, lends and can reach at most.
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
//! Import warnings (unknown kinds and fields) go to stderr prefixed `warning: `; under the
//! global `--strict` they are errors. An input with no ClusterQueue, Cohort or KAI Queue is an
//! error.
//!
//! Exit codes: 0; 1 when a file is not UTF-8 text, a document cannot be read, a warning is
//! given under `--strict`, nothing can be shown, or the cohorts form a cycle; 2 when a file
//! cannot be opened.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::ExitCode;

use gpuquota::model::kai::QueueResource;
use gpuquota::model::quota_tree::{FlavorResource, Node, ReferenceTree};
use gpuquota::model::{Amount, Importer, Model, Quantity, ResourceName};
use serde::Serialize;

use crate::common::{CliError, table_width, to_json};
use gpuquota::model::text::{Table, Width};

/// `--output` of `quotas`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum QuotasOutput {
    /// Tables, one per cohort tree and flavor-resource, then the KAI queues.
    Table,
    /// The JSON contract (documented above; `gpuquota schema quotas`).
    Json,
}

/// Arguments of `gpuquota quotas`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  gpuquota quotas kueue.yaml                  the cohort tree: owns, lends, can use at most
  gpuquota quotas kai.yaml -o json            the KAI queue tree as JSON
  gpuquota quotas kueue.yaml kai.yaml --wide  both, tables at full width")]
pub(crate) struct QuotasArgs {
    /// Manifest files: YAML (several documents each) or JSON.
    #[arg(required = true, value_name = "FILES")]
    files: Vec<PathBuf>,
    /// Output format [default: table].
    #[arg(short, long, value_enum)]
    output: Option<QuotasOutput>,
}

/// The whole picture.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Picture {
    cohort_trees: Vec<CohortTree>,
    kai_queue_trees: Vec<KaiTree>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct CohortTree {
    root: String,
    root_kind: &'static str,
    nodes: Vec<NodeQuotas>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct NodeQuotas {
    kind: &'static str,
    name: String,
    parent: Option<String>,
    depth: usize,
    implicit: bool,
    quotas: Vec<FrQuota>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct FrQuota {
    flavor: String,
    resource: String,
    nominal_quota: String,
    borrowing_limit: Option<String>,
    lending_limit: Option<String>,
    subtree_quota: String,
    guaranteed: String,
    lends_at_most: String,
    most_it_can_use: String,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct KaiTree {
    root: String,
    queues: Vec<KaiQueue>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct KaiQueue {
    name: String,
    parent: Option<String>,
    depth: usize,
    priority: i32,
    resources: BTreeMap<&'static str, KaiResource>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct KaiResource {
    quota: Option<f64>,
    limit: Option<f64>,
    over_quota_weight: Option<f64>,
}

fn amount(resource: &ResourceName, a: Amount) -> String {
    if a.is_unlimited() {
        "unlimited".to_owned()
    } else {
        resource.format_amount(a)
    }
}

/// The quota picture of `model`.
///
/// # Errors
/// A cohort cycle (or a chain deeper than the tree allows).
pub(crate) fn picture(model: &Model) -> Result<Picture, CliError> {
    let tree = ReferenceTree::new(model)?;
    let mut cohort_trees = Vec::new();
    for root in tree.roots() {
        let mut nodes = Vec::new();
        let mut stack = vec![(root.clone(), 0usize)];
        while let Some((node, depth)) = stack.pop() {
            let frs: Vec<FlavorResource> = match &node {
                Node::ClusterQueue(_) => tree.own_flavor_resources(&node),
                Node::Cohort(_) => tree.subtree_flavor_resources(&node).into_iter().collect(),
            };
            let quotas = frs
                .iter()
                .map(|fr| {
                    let q = tree.quota(&node, fr);
                    let r = &fr.resource;
                    FrQuota {
                        flavor: fr.flavor.clone(),
                        resource: r.as_str().to_owned(),
                        nominal_quota: amount(r, q.nominal),
                        borrowing_limit: q.borrowing_limit.map(|a| amount(r, a)),
                        lending_limit: q.lending_limit.map(|a| amount(r, a)),
                        subtree_quota: amount(r, tree.subtree_quota(&node, fr)),
                        guaranteed: amount(r, tree.guaranteed(&node, fr)),
                        lends_at_most: amount(r, tree.lendable(&node, fr)),
                        most_it_can_use: amount(r, tree.potential_available(&node, fr)),
                    }
                })
                .collect();
            nodes.push(NodeQuotas {
                kind: node.kind(),
                name: node.name().to_owned(),
                parent: tree.parent(&node).map(|p| p.name().to_owned()),
                depth,
                implicit: matches!(&node, Node::Cohort(n) if !model.cohorts.contains_key(n)),
                quotas,
            });
            for child in tree.children(&node).into_iter().rev() {
                stack.push((child, depth + 1));
            }
        }
        cohort_trees.push(CohortTree {
            root: root.name().to_owned(),
            root_kind: root.kind(),
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

/// The picture as tables at full width.
pub(crate) fn render_table(p: &Picture) -> String {
    render_table_at(p, Width::Full)
}

/// The picture as tables, `width` wide at most (wide cells wrap, nothing is cut).
pub(crate) fn render_table_at(p: &Picture, width: Width) -> String {
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
        let num = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{v}"));
        for t in &p.kai_queue_trees {
            for q in &t.queues {
                let label = format!("{}{}", "  ".repeat(q.depth), q.name);
                if q.resources.is_empty() {
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
                    .filter_map(|k| q.resources.get(k).map(|r| (k, r)));
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
    }
    out
}

fn import(
    sources: &[(String, String)],
) -> Result<(Model, Vec<gpuquota::model::Diagnostic>), Vec<String>> {
    let mut importer = Importer::new();
    for (name, text) in sources {
        importer.add_str(name, text);
    }
    match importer.finish() {
        Ok(imported) => Ok((imported.model, imported.warnings)),
        Err(errors) => Err(errors.0.iter().map(ToString::to_string).collect()),
    }
}

pub(crate) fn run(args: QuotasArgs) -> Result<ExitCode, CliError> {
    let sources = match crate::validate::read_sources(&args.files)? {
        Ok(s) => s,
        Err(problems) => {
            for p in &problems {
                eprintln!("{p}");
            }
            return Ok(ExitCode::from(1));
        }
    };
    let (model, warnings) = match import(&sources) {
        Ok(v) => v,
        Err(errors) => {
            for e in &errors {
                eprintln!("{}", crate::common::error_line(e));
            }
            eprintln!("error: {} document error(s)", errors.len());
            return Ok(ExitCode::from(1));
        }
    };
    if crate::common::print_diagnostics(&warnings) {
        return Ok(ExitCode::from(1));
    }
    if model.cluster_queues.is_empty() && model.cohorts.is_empty() && model.queues.is_empty() {
        eprintln!(
            "error: {}",
            gpuquota::model::Diagnostic::error(
                gpuquota::model::diag::codes::NO_OBJECTS,
                "no ClusterQueue, Cohort or KAI Queue in the input; nothing to show",
            )
        );
        return Ok(ExitCode::from(1));
    }
    let p = match picture(&model) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{}", crate::common::error_line(&e.to_string()));
            return Ok(ExitCode::from(1));
        }
    };
    match args.output.unwrap_or(QuotasOutput::Table) {
        QuotasOutput::Json => out!("{}", to_json(&p)?),
        QuotasOutput::Table => out!("{}", render_table_at(&p, table_width())),
    }
    Ok(ExitCode::SUCCESS)
}

/// The seed platform's quota picture (the first section of `gpuquota` without arguments).
pub(crate) fn seed_section() -> Result<String, CliError> {
    let sources = [
        ("kueue.yaml".to_owned(), crate::seed::KUEUE_YAML.to_owned()),
        ("kai.yaml".to_owned(), crate::seed::KAI_YAML.to_owned()),
    ];
    let (model, _) = import(&sources).map_err(|e| CliError(e.join("\n")))?;
    Ok(render_table(&picture(&model)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed_picture() -> Picture {
        let sources = [
            ("kueue.yaml".to_owned(), crate::seed::KUEUE_YAML.to_owned()),
            ("kai.yaml".to_owned(), crate::seed::KAI_YAML.to_owned()),
        ];
        picture(&import(&sources).unwrap().0).unwrap()
    }

    fn find<'a>(p: &'a Picture, node: &str, flavor: &str) -> &'a FrQuota {
        p.cohort_trees[0]
            .nodes
            .iter()
            .find(|n| n.name == node)
            .and_then(|n| n.quotas.iter().find(|q| q.flavor == flavor))
            .unwrap()
    }

    #[test]
    fn seed_quota_picture() {
        let p = seed_picture();
        assert_eq!(p.cohort_trees.len(), 1);
        let t = &p.cohort_trees[0];
        assert_eq!(t.root, "platform");
        let names: Vec<&str> = t.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "platform",
                "assistant",
                "batch",
                "data-science",
                "notebooks",
                "translation"
            ]
        );
        // (node, flavor, nominal, guaranteed, lends at most, most it can use)
        let expected = [
            // No borrowingLimit: the inference queues may borrow data science's 4 idle cards.
            ("assistant", "rtx-pro-6000", "8", "8", "0", "12"),
            ("translation", "rtx-pro-6000", "2", "2", "0", "6"),
            ("data-science", "h200-nvl", "8", "0", "8", "8"),
            ("data-science", "rtx-pro-6000", "4", "0", "4", "4"),
            ("notebooks", "rtx-pro-6000-1g24", "8", "0", "8", "8"),
            ("batch", "h200-nvl", "0", "0", "0", "8"),
            ("batch", "rtx-pro-6000", "0", "0", "0", "4"),
            ("platform", "rtx-pro-6000", "0", "4", "0", "4"),
            ("platform", "h200-nvl", "0", "8", "0", "8"),
        ];
        for (node, flavor, nominal, guaranteed, lends, most) in expected {
            let q = find(&p, node, flavor);
            assert_eq!(
                (
                    q.nominal_quota.as_str(),
                    q.guaranteed.as_str(),
                    q.lends_at_most.as_str(),
                    q.most_it_can_use.as_str()
                ),
                (nominal, guaranteed, lends, most),
                "{node} {flavor}"
            );
        }
        assert_eq!(
            find(&p, "batch", "h200-nvl").borrowing_limit.as_deref(),
            Some("8")
        );
        assert_eq!(
            find(&p, "assistant", "rtx-pro-6000")
                .lending_limit
                .as_deref(),
            Some("0")
        );
        assert_eq!(p.kai_queue_trees.len(), 5);
        let ds = p
            .kai_queue_trees
            .iter()
            .find(|t| t.root == "data-science")
            .unwrap();
        assert_eq!(ds.queues.len(), 2);
        assert_eq!(ds.queues[1].name, "fine-tuning");
        assert_eq!(ds.queues[1].depth, 1);
        assert_eq!(ds.queues[1].resources["gpu"].quota, Some(12.0));
        assert_eq!(ds.queues[1].resources["cpu"].limit, Some(-1.0));
    }

    #[test]
    fn tables_fit_80_columns() {
        let text = render_table(&seed_picture());
        for line in text.lines() {
            assert!(line.chars().count() <= 80, "{line:?}");
        }
        assert!(text.contains("Cohort tree \"platform\": h200-nvl / nvidia.com/gpu"));
    }

    #[test]
    fn kai_numbers_are_exact_decimals() {
        assert_eq!(kai_number(Some(&"0.5".parse().unwrap())), Some(0.5));
        assert_eq!(kai_number(Some(&"-1".parse().unwrap())), Some(-1.0));
        assert_eq!(kai_number(Some(&"32.55".parse().unwrap())), Some(32.55));
        assert_eq!(kai_number(None), None);
    }
}
