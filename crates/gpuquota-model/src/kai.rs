//! KAI Scheduler / Run:ai objects: `Queue` (`scheduling.run.ai/v2`) and `PodGroup`
//! (`scheduling.run.ai/v2alpha2`).
//!
//! KAI's CRD declares the per-resource `quota`, `overQuotaWeight` and `limit` as float64; they are
//! read here through their shortest decimal form into exact [`Quantity`] values, so `0.5` GPUs
//! and `32.55` GPUs are held exactly. `-1` means unlimited. CPU is in millicores and memory in
//! megabytes (10⁶ bytes), as in the CRD.

use std::collections::BTreeMap;

use crate::meta::ObjectMeta;
use crate::quantity::Quantity;

/// KAI's default queue priority (`DefaultQueuePriority`).
pub const DEFAULT_QUEUE_PRIORITY: i32 = 100;
/// The label on a Pod naming its KAI queue.
pub const QUEUE_LABEL: &str = "kai.scheduler/queue";
/// The annotation on a Pod naming its PodGroup.
pub const POD_GROUP_ANNOTATION: &str = "pod-group-name";
/// The annotation asking for a fraction of a GPU.
pub const GPU_FRACTION_ANNOTATION: &str = "gpu-fraction";

/// The `{quota, overQuotaWeight, limit}` triple of one resource.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct QueueResource {
    /// Deserved quota; `-1` = unlimited.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub quota: Option<Quantity>,
    /// Weight for the over-quota share; `0` = never over quota.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub over_quota_weight: Option<Quantity>,
    /// Hard cap; `-1` = unlimited.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub limit: Option<Quantity>,
}

/// `spec.resources` of a Queue.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct QueueResources {
    /// GPUs in devices (fractions allowed).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub gpu: Option<QueueResource>,
    /// CPU in millicores.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub cpu: Option<QueueResource>,
    /// Memory in megabytes (10⁶ bytes).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub memory: Option<QueueResource>,
}

/// `spec` of a KAI Queue.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct QueueSpec {
    /// Cosmetic name.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub display_name: Option<String>,
    /// Parent queue; empty = top level (a Run:ai department).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub parent_queue: Option<String>,
    /// Queue priority (Run:ai rank); default 100.
    #[cfg_attr(
        feature = "serde",
        serde(
            deserialize_with = "crate::strict::opt_int",
            default,
            skip_serializing_if = "Option::is_none"
        )
    )]
    pub priority: Option<i32>,
    /// Minimum runtime before preemption (Go duration).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub preempt_min_runtime: Option<String>,
    /// Minimum runtime before reclaim (Go duration).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub reclaim_min_runtime: Option<String>,
    /// Per-resource quota, weight and limit (required by KAI's webhook).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub resources: Option<QueueResources>,
}

/// A KAI Queue (Run:ai department or project).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct Queue {
    /// Metadata (cluster-scoped; `creationTimestamp` breaks ties in the division).
    #[cfg_attr(feature = "serde", serde(default))]
    pub metadata: ObjectMeta,
    /// Spec.
    #[cfg_attr(feature = "serde", serde(default))]
    pub spec: QueueSpec,
    /// Status (`allocated`, `requested`, …): kept verbatim.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub status: Option<crate::opaque::Opaque>,
}

impl Queue {
    /// `spec.priority` with KAI's default.
    pub fn priority(&self) -> i32 {
        self.spec.priority.unwrap_or(DEFAULT_QUEUE_PRIORITY)
    }
}

/// `spec` of a PodGroup.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct PodGroupSpec {
    /// Gang minimum (≥ 1).
    #[cfg_attr(
        feature = "serde",
        serde(
            deserialize_with = "crate::strict::opt_int",
            default,
            skip_serializing_if = "Option::is_none"
        )
    )]
    pub min_member: Option<i32>,
    /// Leaf queue name.
    #[cfg_attr(feature = "serde", serde(default))]
    pub queue: String,
    /// Priority class (`train` 50, `build-preemptible` 75, `build` 100, `inference` 125).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub priority_class_name: Option<String>,
    /// `preemptible`, `non-preemptible` or empty (derived from priority).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub preemptibility: Option<String>,
    /// Multi-level gangs (kept).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub sub_groups: Option<crate::opaque::Opaque>,
    /// Minimum number of sub-groups (kept).
    #[cfg_attr(
        feature = "serde",
        serde(
            deserialize_with = "crate::strict::opt_int",
            default,
            skip_serializing_if = "Option::is_none"
        )
    )]
    pub min_sub_group: Option<i32>,
    /// Topology constraint (kept).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub topology_constraint: Option<crate::opaque::Opaque>,
    /// Marked unschedulable.
    #[cfg_attr(
        feature = "serde",
        serde(
            deserialize_with = "crate::strict::opt_bool",
            default,
            skip_serializing_if = "Option::is_none"
        )
    )]
    pub mark_unschedulable: Option<bool>,
    /// Scheduling backoff.
    #[cfg_attr(
        feature = "serde",
        serde(
            deserialize_with = "crate::strict::opt_int",
            default,
            skip_serializing_if = "Option::is_none"
        )
    )]
    pub scheduling_backoff: Option<i32>,
    /// Per-job stale-gang grace period (Go duration).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub staleness_grace_period: Option<String>,
    /// A pending job may not reclaim/preempt before this long (Go duration).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub preemption_delay: Option<String>,
}

/// A KAI PodGroup: the gang / job unit.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct PodGroup {
    /// Metadata (namespaced).
    #[cfg_attr(feature = "serde", serde(default))]
    pub metadata: ObjectMeta,
    /// Spec.
    #[cfg_attr(feature = "serde", serde(default))]
    pub spec: PodGroupSpec,
    /// Status: kept verbatim.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub status: Option<crate::opaque::Opaque>,
}

/// KAI's built-in priority classes and their values.
pub fn builtin_priority_class(name: &str) -> Option<i32> {
    match name {
        "train" => Some(50),
        "build-preemptible" => Some(75),
        "build" => Some(100),
        "inference" => Some(125),
        _ => None,
    }
}

/// Parses a Go duration (`90s`, `1h30m`, `500ms`, `2h`) into whole nanoseconds.
///
/// Returns `None` for malformed input or overflow.
pub fn parse_go_duration(s: &str) -> Option<i128> {
    let s = s.trim();
    let (neg, mut rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: i128 = 0;
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number = &rest[..num_end];
        rest = &rest[num_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = &rest[..unit_end];
        rest = &rest[unit_end..];
        let scale: i128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        let q = Quantity::parse(number).ok()?;
        if q.is_negative() {
            return None;
        }
        let (m, e) = q.as_decimal();
        let value = if e >= 0 {
            m.checked_mul(10_i128.checked_pow(e as u32)?)?
                .checked_mul(scale)?
        } else {
            m.checked_mul(scale)? / 10_i128.checked_pow((-e) as u32)?
        };
        total = total.checked_add(value)?;
    }
    Some(if neg { -total } else { total })
}

/// Labels and annotations of the KAI objects, for completeness of imports.
pub type Labels = BTreeMap<String, String>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations() {
        assert_eq!(parse_go_duration("90s"), Some(90_000_000_000));
        assert_eq!(parse_go_duration("1h30m"), Some(5_400_000_000_000));
        assert_eq!(parse_go_duration("1.5s"), Some(1_500_000_000));
        assert_eq!(parse_go_duration("500ms"), Some(500_000_000));
        assert_eq!(parse_go_duration("0"), Some(0));
        assert_eq!(parse_go_duration("5"), None);
        assert_eq!(parse_go_duration("5x"), None);
    }
}
