//! The text tables of a [`Plan`] and of the catalogue, and the catalogue's JSON report, on
//! the workspace's one table layout ([`gpuquota_model::text`]: nothing is cut,
//! [`Width::Fit`] wraps).

use std::fmt::Write as _;

use gpuquota_model::text::{Table, Width};

use crate::catalogue::{GpuModel, Placement};
use crate::input::PlanInstance;
use crate::plan::Plan;

/// The text `mig plan --output table` prints: the plan's figures, demand against satisfied
/// per resource, then every GPU with its instances (`profile@start`, `*` when busy).
///
/// # Complexity
/// O(GPUs × instances + demand).
pub fn plan_table(problem: &PlanInstance<'_>, plan: &Plan, width: Width) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "value {}  reconfigured {}  fragmentation {}  optimal {}{}",
        plan.value,
        plan.reconfigured,
        plan.fragmentation,
        if plan.optimal { "yes" } else { "no" },
        plan.bound
            .map_or_else(String::new, |b| format!("  bound {b}"))
    );
    let mut demand = Table::new(["RESOURCE", "DEMAND", "SATISFIED"]).right([1, 2]);
    for d in &problem.demand {
        let s = plan.satisfied.get(&d.resource).copied().unwrap_or(0);
        demand.row([d.resource.clone(), d.count.to_string(), s.to_string()]);
    }
    out.push_str(&demand.render(width));
    let mut gpus = Table::new([
        "NODE",
        "GPU",
        "CHANGED",
        "INSTANCES (profile@start, * busy)",
    ])
    .right([1]);
    for (k, g) in plan.gpus.iter().enumerate() {
        let instances = if !g.mig_enabled {
            if problem.gpus.get(k).is_some_and(|x| x.whole_busy) {
                "(MIG disabled, in use)".to_owned()
            } else {
                "(MIG disabled)".to_owned()
            }
        } else if g.instances.is_empty() {
            "(none)".to_owned()
        } else {
            let items: Vec<String> = g
                .instances
                .iter()
                .map(|i| format!("{}@{}{}", i.profile, i.start, if i.busy { "*" } else { "" }))
                .collect();
            items.join(" ")
        };
        gpus.row([
            g.node.clone(),
            g.index.to_string(),
            if g.changed { "yes" } else { "no" }.to_owned(),
            instances,
        ]);
    }
    out.push_str(&gpus.render(width));
    out
}

/// The text `mig profiles --output table` prints: per model its slices, then one row per
/// profile (`*` marks data not confirmed by NVIDIA's documentation).
///
/// # Complexity
/// O(profiles × placements).
pub fn profiles_table(models: &[&GpuModel], width: Width) -> String {
    let mut out = String::new();
    for m in models {
        let _ = writeln!(
            out,
            "{}\n  {} compute slices, {} memory slices, {} placement units{}",
            m.name(),
            m.compute_slices(),
            m.memory_slices(),
            m.placement_units(),
            if m.unconfirmed() {
                " [unconfirmed data]"
            } else {
                ""
            }
        );
        let mut t = Table::new(["PROFILE", "ID", "G", "MEM", "MAX", "PLACEMENTS"]).right(1..5);
        for p in m.profiles() {
            let pl: Vec<String> = p
                .placements()
                .iter()
                .map(|x| format!("{}:{}", x.start, x.size))
                .collect();
            t.row([
                p.name().to_owned(),
                p.id().map_or_else(|| "-".to_owned(), |i| i.to_string()),
                p.compute_slices().to_string(),
                p.memory_slices().to_string(),
                p.max_instances().to_string(),
                format!(
                    "{}{}",
                    pl.join(" "),
                    if p.unconfirmed() { " *" } else { "" }
                ),
            ]);
        }
        let inner = match width {
            Width::Full => Width::Full,
            Width::Fit(w) => Width::Fit(w.saturating_sub(2)),
        };
        for line in t.render(inner).lines() {
            let _ = writeln!(out, "  {line}");
        }
    }
    out
}

/// One model in `mig profiles --output json` (fields in this order, camelCase like every JSON
/// output: `productNames`, `computeSlices`, ...; they were snake_case before).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct ModelReport<'a> {
    /// The catalogue name (`A100-SXM4-40GB`, ...).
    pub model: &'a str,
    /// The `nvidia.com/gpu.product` / nvidia-smi names it is known by.
    pub product_names: &'a [String],
    /// Compute slices (GPCs).
    pub compute_slices: u8,
    /// Memory slices.
    pub memory_slices: u8,
    /// Placement units of the placement grid.
    pub placement_units: u8,
    /// True when NVIDIA's documentation does not confirm this model's data.
    pub unconfirmed: bool,
    /// Its profiles, in catalogue order.
    pub profiles: Vec<ProfileReport<'a>>,
}

/// `mig profiles` prints one model when one is named, else the list.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(untagged))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[allow(missing_docs)] // a doc comment would enter the JSON Schema; the enum's doc says it
pub enum Profiles<'a> {
    One(ModelReport<'a>),
    All(Vec<ModelReport<'a>>),
}

/// One profile in `mig profiles --output json` (camelCase: `computeSlices`, `maxInstances`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct ProfileReport<'a> {
    /// `1g.10gb`, ...
    pub name: &'a str,
    /// The extended resource of the mixed strategy (`nvidia.com/mig-1g.10gb`).
    pub resource: &'a str,
    /// NVML's GPU instance profile id, `null` when unknown.
    pub id: Option<u32>,
    /// Compute slices.
    pub compute_slices: u8,
    /// Memory slices.
    pub memory_slices: u8,
    /// The most instances of this profile one GPU holds.
    pub max_instances: u8,
    /// Where an instance may start and how many units it takes.
    pub placements: &'a [Placement],
    /// True when NVIDIA's documentation does not confirm this profile's data.
    pub unconfirmed: bool,
}

/// The `mig profiles --output json` entry of one model.
///
/// # Complexity
/// O(profiles).
pub fn model_report(m: &GpuModel) -> ModelReport<'_> {
    ModelReport {
        model: m.name(),
        product_names: m.product_names(),
        compute_slices: m.compute_slices(),
        memory_slices: m.memory_slices(),
        placement_units: m.placement_units(),
        unconfirmed: m.unconfirmed(),
        profiles: m
            .profiles()
            .iter()
            .map(|p| ProfileReport {
                name: p.name(),
                resource: p.resource_name(),
                id: p.id(),
                compute_slices: p.compute_slices(),
                memory_slices: p.memory_slices(),
                max_instances: p.max_instances(),
                placements: p.placements(),
                unconfirmed: p.unconfirmed(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::Catalogue;

    #[test]
    fn profiles_table_lists_every_profile_of_a_model() {
        let c = Catalogue::builtin();
        let m = c.resolve("A100-40GB").unwrap();
        let t = profiles_table(&[m], Width::Full);
        assert!(t.starts_with(m.name()), "{t}");
        for p in m.profiles() {
            assert!(t.contains(&format!("  {} ", p.name())), "{t}");
        }
        assert!(!t.contains('~'));
    }

    #[cfg(feature = "serde")]
    #[test]
    fn profiles_serialise_as_the_one_model_or_the_list() {
        let c = Catalogue::builtin();
        let one = model_report(c.resolve("A100-40GB").unwrap());
        let bare = serde_json::to_value(&one).unwrap();
        assert_eq!(bare["model"], "A100-40GB");
        assert_eq!(
            serde_json::to_value(Profiles::One(one.clone())).unwrap(),
            bare
        );
        let all = serde_json::to_value(Profiles::All(vec![one])).unwrap();
        assert_eq!(all, serde_json::Value::Array(vec![bare]));
    }
}
