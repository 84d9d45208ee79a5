//! An independent checker of a plan against its instance.
//!
//! [`Plan::verify`](crate::Plan::verify) shares no code with the planner beyond the driver rules of [`crate::check`]: it
//! rebuilds each planned layout from the plan's profile names, recomputes `R`, `W` and `F` from
//! their definitions (fragmentation by trying every placement of every profile against the
//! held units and [`crate::check`], not with the planner's tables), and reports every broken
//! rule as a typed [`Violation`].

use indexmap::IndexMap;

use crate::catalogue::GpuModel;
use crate::input::{Mode, PlanInstance, ResolvedGpu};
use crate::layout::{Instance, Layout, LayoutProblem, check};
use crate::plan::{GpuPlan, Plan};

/// One rule a plan breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Violation {
    /// The plan has a different number of GPU entries than the instance.
    #[error("{planned} plan entries for {expected} GPUs")]
    GpuCount {
        /// GPUs in the instance.
        expected: usize,
        /// Entries in the plan.
        planned: usize,
    },
    /// The plan's entries are not in the instance's GPU order.
    #[error("node {node} GPU {index}: plan entries out of order")]
    Order {
        /// Node of the instance's GPU at this position.
        node: String,
        /// Its index.
        index: u32,
    },
    /// A planned profile is not a profile of the GPU's model.
    #[error("node {node} GPU {index}: unknown profile {profile:?}")]
    UnknownProfile {
        /// Node.
        node: String,
        /// GPU index.
        index: u32,
        /// Profile as planned.
        profile: String,
    },
    /// A planned layout breaks a driver rule.
    #[error("node {node} GPU {index}: {problem}")]
    Layout {
        /// Node.
        node: String,
        /// GPU index.
        index: u32,
        /// The rule.
        problem: LayoutProblem,
    },
    /// A GPU that must keep its layout (busy under `keep-busy-gpus`, or held whole) changed.
    #[error("node {node} GPU {index}: busy GPU changed")]
    BusyGpuChanged {
        /// Node.
        node: String,
        /// GPU index.
        index: u32,
    },
    /// A busy instance is not in the planned layout at its placement.
    #[error("node {node} GPU {index}: busy instance at {start} removed")]
    BusyInstanceRemoved {
        /// Node.
        node: String,
        /// GPU index.
        index: u32,
        /// Start unit of the busy instance.
        start: u8,
    },
    /// `changed` disagrees with the profile multisets.
    #[error("node {node} GPU {index}: changed is {changed} but the multiset is {}", if *.changed { "kept" } else { "changed" })]
    ChangedFlag {
        /// Node.
        node: String,
        /// GPU index.
        index: u32,
        /// The flag as planned.
        changed: bool,
    },
    /// An assigned instance is not an idle instance of the planned layout.
    #[error("node {node} GPU {index}: assigned instance at {start} is not idle in the layout")]
    AssignedNotIdle {
        /// Node.
        node: String,
        /// GPU index.
        index: u32,
        /// Start unit.
        start: u8,
    },
    /// An instance is assigned twice.
    #[error("node {node} GPU {index}: an instance is assigned twice")]
    AssignedTwice {
        /// Node.
        node: String,
        /// GPU index.
        index: u32,
    },
    /// An assigned instance's resource is not demanded.
    #[error("node {node} GPU {index}: assigned {resource} is not demanded")]
    NotDemanded {
        /// Node.
        node: String,
        /// GPU index.
        index: u32,
        /// Resource name.
        resource: String,
    },
    /// More instances of a resource are assigned than demanded.
    #[error("{resource}: {assigned} assigned, {demanded} demanded")]
    OverDemand {
        /// Resource name.
        resource: String,
        /// Assigned instances.
        assigned: u32,
        /// Demanded instances.
        demanded: u32,
    },
    /// `satisfied` disagrees with the assignment.
    #[error("{resource}: satisfied does not match the assignment")]
    Satisfied {
        /// Resource name.
        resource: String,
    },
    /// A reported figure (`value`, `reconfigured`, `fragmentation`) disagrees with the layouts.
    #[error("{field} {reported} but the layouts give {actual}")]
    Figure {
        /// `value`, `reconfigured` or `fragmentation`.
        field: &'static str,
        /// As reported.
        reported: u64,
        /// As recomputed.
        actual: u64,
    },
    /// The reported bound is below the value.
    #[error("bound {bound} below value {value}")]
    Bound {
        /// The bound.
        bound: u64,
        /// The value.
        value: u64,
    },
}

/// Checks `plan` against `instance`: every planned layout passes [`crate::check`], busy work
/// is kept as the mode demands (the whole layout under `keep-busy-gpus`, each busy instance
/// under `pin-busy-instances`), `changed` and `reconfigured` match the profile multisets,
/// assigned instances are idle instances of the planned layout whose resource is demanded,
/// `satisfied` never exceeds demand, and `value` and `fragmentation` equal their definitions.
///
/// # Errors
/// Every [`Violation`] found, GPUs in order, then the totals.
///
/// # Complexity
/// O(G · (n² + P · n)) for G GPUs, n instances per GPU and P placements per model.
pub(crate) fn verify(instance: &PlanInstance<'_>, plan: &Plan) -> Result<(), Vec<Violation>> {
    let mut out = Vec::new();
    if plan.gpus.len() != instance.gpus.len() {
        return Err(vec![Violation::GpuCount {
            expected: instance.gpus.len(),
            planned: plan.gpus.len(),
        }]);
    }
    let mut satisfied: IndexMap<&str, u32> = instance
        .demand
        .iter()
        .map(|d| (d.resource.as_str(), 0))
        .collect();
    let (mut reconfigured, mut fragmentation) = (0u64, 0u64);
    for (g, p) in instance.gpus.iter().zip(&plan.gpus) {
        if (p.node.as_str(), p.index) != (g.node.as_str(), g.index) {
            out.push(Violation::Order {
                node: g.node.clone(),
                index: g.index,
            });
            continue;
        }
        let Some(layout) = planned_layout(g, p, &mut out) else {
            continue;
        };
        let same = check_kept(instance.mode, g, p, &layout, &mut out);
        reconfigured += u64::from(!same);
        check_assigned(g, p, &layout, &mut satisfied, &mut out);
        if p.mig_enabled {
            let held: Vec<Instance> = g.busy.iter().chain(&p.assigned).copied().collect();
            fragmentation += u64::from(free_minus_largest(g.model, &held));
        }
    }
    let value = check_demand(instance, plan, &satisfied, &mut out);
    check_figures(plan, [value, reconfigured, fragmentation], &mut out);
    if out.is_empty() { Ok(()) } else { Err(out) }
}

/// The planned layout of one GPU, or `None` (with the violations pushed) when a profile is
/// unknown or the layout is invalid.
///
/// # Complexity
/// O(n²) for n instances ([`check`]).
fn planned_layout(g: &ResolvedGpu<'_>, p: &GpuPlan, out: &mut Vec<Violation>) -> Option<Layout> {
    let (node, index) = (&g.node, g.index);
    let mut instances = Vec::new();
    let mut unknown = false;
    for i in &p.instances {
        match g.model.profile(&i.profile) {
            Ok(prof) => instances.push(Instance {
                start: i.start,
                profile: prof.index(),
            }),
            Err(_) => {
                unknown = true;
                out.push(Violation::UnknownProfile {
                    node: node.clone(),
                    index,
                    profile: i.profile.clone(),
                });
            }
        }
    }
    if unknown {
        return None;
    }
    let problems = check(g.model, &instances);
    if !problems.is_empty() {
        out.extend(problems.into_iter().map(|problem| Violation::Layout {
            node: node.clone(),
            index,
            problem,
        }));
        return None;
    }
    instances.sort();
    Some(Layout::from_sorted(instances))
}

/// Busy work kept as the mode demands and the `changed` flag; returns whether the profile
/// multiset (and MIG mode) is unchanged.
///
/// # Complexity
/// O(n²) for n instances.
fn check_kept(
    mode: Mode,
    g: &ResolvedGpu<'_>,
    p: &GpuPlan,
    layout: &Layout,
    out: &mut Vec<Violation>,
) -> bool {
    let (node, index) = (&g.node, g.index);
    let keeps_all = g.whole_busy || (mode == Mode::KeepBusyGpus && !g.busy.is_empty());
    let same = match &g.current {
        None => !p.mig_enabled,
        Some(l0) => p.mig_enabled && multiset(g.model, l0) == multiset(g.model, layout),
    };
    if keeps_all && (!same || g.current.as_ref().is_some_and(|l0| l0 != layout)) {
        out.push(Violation::BusyGpuChanged {
            node: node.clone(),
            index,
        });
    }
    if let Some(b) = g.busy.iter().find(|b| !layout.instances().contains(b)) {
        out.push(Violation::BusyInstanceRemoved {
            node: node.clone(),
            index,
            start: b.start,
        });
    }
    if p.changed == same {
        out.push(Violation::ChangedFlag {
            node: node.clone(),
            index,
            changed: p.changed,
        });
    }
    same
}

/// Assigned instances are distinct idle instances of the planned layout whose resource is
/// demanded; counts them into `satisfied`.
///
/// # Complexity
/// O(a · n + a log a) for a assigned and n planned instances.
fn check_assigned(
    g: &ResolvedGpu<'_>,
    p: &GpuPlan,
    layout: &Layout,
    satisfied: &mut IndexMap<&str, u32>,
    out: &mut Vec<Violation>,
) {
    let (node, index) = (&g.node, g.index);
    for a in &p.assigned {
        if !layout.instances().contains(a) || g.busy.contains(a) {
            out.push(Violation::AssignedNotIdle {
                node: node.clone(),
                index,
                start: a.start,
            });
            continue;
        }
        let res = g
            .model
            .profile_at(a.profile)
            .map(|x| x.resource_name())
            .unwrap_or("");
        match satisfied.get_mut(res) {
            Some(v) => *v += 1,
            None => out.push(Violation::NotDemanded {
                node: node.clone(),
                index,
                resource: res.to_owned(),
            }),
        }
    }
    let mut dedup = p.assigned.clone();
    dedup.sort();
    dedup.dedup();
    if dedup.len() != p.assigned.len() {
        out.push(Violation::AssignedTwice {
            node: node.clone(),
            index,
        });
    }
}

/// `satisfied` within demand and as reported; returns the weighted value `W`.
///
/// # Complexity
/// O(Q).
fn check_demand(
    instance: &PlanInstance<'_>,
    plan: &Plan,
    satisfied: &IndexMap<&str, u32>,
    out: &mut Vec<Violation>,
) -> u64 {
    let mut value = 0u64;
    for d in &instance.demand {
        let s = satisfied.get(d.resource.as_str()).copied().unwrap_or(0);
        if s > d.count {
            out.push(Violation::OverDemand {
                resource: d.resource.clone(),
                assigned: s,
                demanded: d.count,
            });
        }
        if plan.satisfied.get(&d.resource) != Some(&s) {
            out.push(Violation::Satisfied {
                resource: d.resource.clone(),
            });
        }
        value = value.saturating_add(u64::from(s).saturating_mul(d.weight));
    }
    value
}

/// The reported `value`, `reconfigured` and `fragmentation` equal the recomputed ones, and a
/// bound is not below the value.
fn check_figures(
    plan: &Plan,
    [value, reconfigured, fragmentation]: [u64; 3],
    out: &mut Vec<Violation>,
) {
    for (field, reported, actual) in [
        ("value", plan.value, value),
        ("reconfigured", u64::from(plan.reconfigured), reconfigured),
        (
            "fragmentation",
            u64::from(plan.fragmentation),
            fragmentation,
        ),
    ] {
        if reported != actual {
            out.push(Violation::Figure {
                field,
                reported,
                actual,
            });
        }
    }
    if let Some(b) = plan.bound
        && b < plan.value
    {
        out.push(Violation::Bound {
            bound: b,
            value: plan.value,
        });
    }
}

/// Profile counts of a layout, by catalogue profile index.
fn multiset(model: &GpuModel, layout: &Layout) -> Vec<u32> {
    let mut c = vec![0u32; model.profiles().len()];
    for i in layout.instances() {
        if let Some(x) = c.get_mut(usize::from(i.profile.0)) {
            *x += 1;
        }
    }
    c
}

/// `F` of one GPU from its definition: free compute slices minus the compute slices of the
/// largest profile that [`check`] accepts beside `held` at some placement. A model without a
/// placement grid contributes 0.
fn free_minus_largest(model: &GpuModel, held: &[Instance]) -> u32 {
    if model.profiles().iter().all(|p| p.placements().is_empty()) {
        return 0;
    }
    let used: u32 = held
        .iter()
        .filter_map(|i| model.profile_at(i.profile))
        .map(|p| u32::from(p.compute_slices()))
        .sum();
    let mut largest = 0u32;
    let mut with = held.to_vec();
    for p in model.profiles() {
        if u32::from(p.compute_slices()) <= largest {
            continue;
        }
        for pl in p.placements() {
            with.push(Instance {
                start: pl.start,
                profile: p.index(),
            });
            let fits = check(model, &with).is_empty();
            with.pop();
            if fits {
                largest = u32::from(p.compute_slices());
                break;
            }
        }
    }
    u32::from(model.compute_slices())
        .saturating_sub(used)
        .saturating_sub(largest)
}
