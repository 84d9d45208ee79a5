//! The queues' GPU quotas a trace brings: Helios' `cluster_gpu_number.csv`
//! ([`super::helios::gpu_numbers`]) or the `share:` rule ([`ShareSpec`]), written into the
//! ClusterQueues (Kueue) or the leaf Queues (KAI) of the cluster files.

use std::collections::{BTreeMap, BTreeSet};

use gpuquota_model::Quantity;
use gpuquota_model::diag::{Diagnostic, Diagnostics};

use super::{TRACE_ROW_SKIPPED, sanitize};

/// `share:` of a `trace:` entry: the GPUs divided among the trace's queues as their quotas.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ShareSpec {
    /// `equal` (the default) or `demand`.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "Option<ShareBy>"))]
    pub by: Option<String>,
    /// The GPUs to divide (default: the cluster's nodes' `nvidia.com/gpu`, else the
    /// queues' present GPU quotas).
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(range(min = 1)))]
    pub gpus: Option<u32>,
}

/// How `share:` divides the GPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum ShareBy {
    /// The same number of GPUs per queue.
    #[default]
    Equal,
    /// In proportion to each queue's GPU demand in the replay window.
    Demand,
}

impl ShareBy {
    /// `equal` or `demand`.
    pub fn parse(s: &str) -> Option<ShareBy> {
        match s {
            "equal" => Some(ShareBy::Equal),
            "demand" => Some(ShareBy::Demand),
            _ => None,
        }
    }
}

/// A checked `share:`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Share {
    pub(crate) by: ShareBy,
    pub(crate) gpus: Option<u32>,
}

/// Where the trace's GPU quotas go: Kueue's `nominalQuota` of one flavor's GPU resource, or
/// a KAI leaf Queue's `resources.gpu.quota`.
pub(crate) struct Target<'a> {
    /// The GPU resource (`nvidia.com/gpu`, or `milliGpuResource`, in thousandths).
    pub(crate) resource: &'a str,
    /// `milliGpuResource` is set: quotas are written in thousandths.
    pub(crate) milli: bool,
    /// KAI mode: leaf Queues instead of ClusterQueues.
    pub(crate) kai: bool,
    /// Queues that are another's parent (KAI).
    parents: BTreeSet<String>,
}

impl<'a> Target<'a> {
    pub(crate) fn new(
        model: &gpuquota_model::Model,
        resource: &'a str,
        milli: bool,
        kai: bool,
    ) -> Self {
        let parents = if kai {
            model
                .queues
                .values()
                .filter_map(|q| q.spec.parent_queue.clone())
                .collect()
        } else {
            BTreeSet::new()
        };
        Target {
            resource,
            milli,
            kai,
            parents,
        }
    }

    /// The present GPU quota of queue `name` in whole GPUs (0 when unset or negative), or
    /// why it cannot take one: `no-leaf-queue`, `not-a-leaf-queue` (KAI),
    /// `no-cluster-queue`, `no-gpu-quota`, `several-gpu-flavors` (Kueue).
    ///
    /// # Complexity
    /// O(log queues + quotas of the ClusterQueue).
    pub(crate) fn check(
        &self,
        model: &gpuquota_model::Model,
        name: &str,
    ) -> Result<u64, &'static str> {
        let whole = |q: Option<&Quantity>, scale: i64| {
            q.and_then(Quantity::value)
                .map_or(0, |v| u64::try_from(v.max(0) / scale).unwrap_or(0))
        };
        if self.kai {
            let q = model.queues.get(name).ok_or("no-leaf-queue")?;
            if self.parents.contains(name) {
                return Err("not-a-leaf-queue");
            }
            let gpu = q.spec.resources.as_ref().and_then(|r| r.gpu.as_ref());
            return Ok(whole(gpu.and_then(|g| g.quota.as_ref()), 1));
        }
        let cq = model.cluster_queues.get(name).ok_or("no-cluster-queue")?;
        let mut hits = cq
            .spec
            .resource_groups
            .iter()
            .flat_map(|g| g.flavors.iter())
            .flat_map(|f| f.resources.iter())
            .filter(|r| r.name.as_str() == self.resource);
        match (hits.next(), hits.next()) {
            (Some(one), None) => Ok(whole(
                one.nominal_quota.as_ref(),
                if self.milli { 1000 } else { 1 },
            )),
            (None, _) => Err("no-gpu-quota"),
            (Some(_), Some(_)) => Err("several-gpu-flavors"),
        }
    }

    /// Sets queue `name`'s GPU quota to `gpus` whole GPUs; `name` passed [`Target::check`].
    /// `Err("quota-overflow")` when the amount does not fit.
    pub(crate) fn set(
        &self,
        model: &mut gpuquota_model::Model,
        name: &str,
        gpus: u64,
    ) -> Result<(), &'static str> {
        let scaled = if self.milli && !self.kai {
            gpus.checked_mul(1000)
        } else {
            Some(gpus)
        };
        let value = scaled
            .and_then(|v| i64::try_from(v).ok())
            .map(Quantity::from_integer)
            .ok_or("quota-overflow")?;
        if self.kai {
            if let Some(q) = model.queues.get_mut(name) {
                let r = q.spec.resources.get_or_insert_with(Default::default);
                r.gpu.get_or_insert_with(Default::default).quota = Some(value);
            }
            return Ok(());
        }
        if let Some(one) = model.cluster_queues.get_mut(name).and_then(|cq| {
            cq.spec
                .resource_groups
                .iter_mut()
                .flat_map(|g| g.flavors.iter_mut())
                .flat_map(|f| f.resources.iter_mut())
                .find(|r| r.name.as_str() == self.resource)
        }) {
            one.nominal_quota = Some(value);
        }
        Ok(())
    }
}

/// One warning per reason, `N VC quotas not applied (reason)` (or `queue quotas` for a
/// share), source the file, field `field`.
fn warn_not_applied(
    warnings: &mut Diagnostics,
    skipped: BTreeMap<&'static str, u64>,
    what: &str,
    file: &str,
    field: &str,
) {
    for (reason, n) in skipped {
        warnings.push(
            Diagnostic::warning(
                TRACE_ROW_SKIPPED,
                format!("{n} {what} not applied ({reason})"),
            )
            .source(file.to_owned())
            .field(field.to_owned()),
        );
    }
}

/// Sets each VC's GPU quota from Helios' `cluster_gpu_number.csv`
/// ([`super::helios::gpu_numbers`]): the VC's ClusterQueue's `nominalQuota` of its GPU
/// resource, or under KAI its leaf Queue's `resources.gpu.quota`; what it cannot apply is
/// one warning per reason.
///
/// # Complexity
/// O(rows × VCs + VCs × quotas of a ClusterQueue).
pub(crate) fn apply_gpu_numbers(
    model: &mut gpuquota_model::Model,
    target: &Target<'_>,
    (file, text): (&str, &str),
    start_ms: i64,
    field: &str,
    warnings: &mut Diagnostics,
) {
    let field = format!("{field}.gpuNumberFile");
    let super::helios::GpuNumbers { vcs, malformed, .. } =
        match super::helios::gpu_numbers(text, start_ms) {
            Ok(x) => x,
            Err(m) => {
                warnings.push(
                    Diagnostic::warning(TRACE_ROW_SKIPPED, format!("no quota read: {m}"))
                        .source(file.to_owned())
                        .field(field),
                );
                return;
            }
        };
    let mut skipped: BTreeMap<&'static str, u64> = BTreeMap::new();
    if malformed > 0 {
        skipped.insert("malformed-row", malformed);
    }
    for (vc, gpus) in vcs {
        let name = sanitize(&vc);
        if let Err(reason) = target
            .check(model, &name)
            .and_then(|_| target.set(model, &name, u64::from(gpus)))
        {
            *skipped.entry(reason).or_insert(0) += 1;
        }
    }
    warn_not_applied(warnings, skipped, "VC quotas", file, &field);
}

/// The GPU demand of one trace job in the replay window, in GPU-thousandths × ms: its
/// GPUs × the part of `[arrival, arrival + runtime]` inside `[0, end]`, the arrival
/// clamped to 0 as the simulator clamps it (all of the runtime without `spec.end`).
/// `None` on overflow.
///
/// # Complexity
/// O(pod sets).
pub(crate) fn demand(job: &super::Job, created_ms: i64, end_ms: Option<i64>) -> Option<u128> {
    let from = created_ms.max(0);
    let to = from.saturating_add(job.runtime_ms.max(0));
    let to = end_ms.map_or(to, |e| to.min(e));
    let ms = u128::try_from(to.saturating_sub(from).max(0)).ok()?;
    let mut milli: u128 = 0;
    for s in &job.pod_sets {
        milli = milli.checked_add(u128::from(s.gpu_milli).checked_mul(u128::from(s.count))?)?;
    }
    milli.checked_mul(ms)
}

/// What a share divides among: each of the trace's queues (sanitised names) with its GPU
/// demand ([`demand`], summed over the jobs kept), `None` once it overflowed.
pub(crate) type Demands = BTreeMap<String, Option<u128>>;

/// Adds one job's demand to `queue`'s.
pub(crate) fn add_demand(d: &mut Demands, queue: &str, job: Option<u128>) {
    match d.get_mut(queue) {
        Some(v) => *v = v.zip(job).and_then(|(a, b)| a.checked_add(b)),
        None => {
            d.insert(queue.to_owned(), job);
        }
    }
}

/// Divides `total` GPUs among queues of weights `w` (in order) by the largest remainder:
/// each gets ⌊total · wᵢ / W⌋, and the GPUs left go one each to the largest remainders
/// `total · wᵢ mod W`, ties to the earlier queue (the queues are in name order). All
/// weights 0 share equally. `None` on overflow.
///
/// # Complexity
/// O(queues × log queues).
///
/// ```text
/// largest_remainder(10, [43200, 3600]) = [9, 1]   (9.23 and 0.77: the 1 left goes to 0.77)
/// largest_remainder(9, [1, 1])         = [5, 4]   (4.5 each: the tie goes to the first)
/// ```
pub(crate) fn largest_remainder(total: u64, w: &[u128]) -> Option<Vec<u64>> {
    if w.is_empty() {
        return Some(Vec::new());
    }
    let sum = w.iter().try_fold(0u128, |a, &x| a.checked_add(x))?;
    if sum == 0 {
        return largest_remainder(total, &vec![1; w.len()]);
    }
    let t = u128::from(total);
    let mut out = Vec::with_capacity(w.len());
    let mut rem = Vec::with_capacity(w.len());
    for (i, &x) in w.iter().enumerate() {
        let p = t.checked_mul(x)?;
        out.push(u64::try_from(p / sum).ok()?);
        rem.push((std::cmp::Reverse(p % sum), i));
    }
    let given: u64 = out.iter().sum();
    rem.sort_unstable();
    for &(_, i) in rem.iter().take(usize::try_from(total - given).ok()?) {
        out[i] += 1;
    }
    Some(out)
}

/// The `share:` rule: divides the GPUs (`share.gpus`, else the nodes' `nvidia.com/gpu`
/// allocatable, else the queues' present GPU quotas) among the trace's queues that can take
/// a quota, equally or by their demand, by the largest remainder ([`largest_remainder`]);
/// the queues it cannot give a quota are one warning per reason (`N queue quotas not
/// applied (reason)`).
///
/// # Complexity
/// O(nodes + queues × (log queues + quotas of a ClusterQueue)).
pub(crate) fn apply_share(
    model: &mut gpuquota_model::Model,
    target: &Target<'_>,
    share: Share,
    demands: &Demands,
    file: &str,
    field: &str,
    warnings: &mut Diagnostics,
) {
    let field = format!("{field}.share");
    let mut skipped: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut queues: Vec<(&str, Option<u128>)> = Vec::new();
    let mut present: u64 = 0;
    for (name, d) in demands {
        match target.check(model, name) {
            Ok(q) => {
                present = present.saturating_add(q);
                queues.push((name, *d));
            }
            Err(reason) => *skipped.entry(reason).or_insert(0) += 1,
        }
    }
    let note = |warnings: &mut Diagnostics, m: String| {
        warnings.push(
            Diagnostic::warning(TRACE_ROW_SKIPPED, m)
                .source(file.to_owned())
                .field(field.clone()),
        );
    };
    let nodes: u64 = model
        .nodes
        .values()
        .filter_map(|n| {
            n.status
                .allocatable
                .get(&gpuquota_model::ResourceName::new("nvidia.com/gpu"))
        })
        .filter_map(Quantity::value)
        .map(|v| u64::try_from(v).unwrap_or(0))
        .fold(0, u64::saturating_add);
    let total = match share.gpus {
        Some(g) => u64::from(g),
        None if nodes > 0 => nodes,
        None => present,
    };
    if queues.is_empty() || total == 0 {
        if total == 0 && !queues.is_empty() {
            note(
                warnings,
                "no GPUs to share: set share.gpus (the cluster has no node GPUs and the queues no GPU quota)".into(),
            );
        }
        warn_not_applied(warnings, skipped, "queue quotas", file, &field);
        return;
    }
    let weights: Option<Vec<u128>> = match share.by {
        ShareBy::Equal => Some(vec![1; queues.len()]),
        ShareBy::Demand => queues.iter().map(|q| q.1).collect(),
    };
    let gpus = weights.and_then(|w| largest_remainder(total, &w));
    let Some(gpus) = gpus else {
        note(
            warnings,
            "the GPU demand overflows: no queue quota applied".into(),
        );
        *skipped.entry("demand-overflow").or_insert(0) += queues.len() as u64;
        warn_not_applied(warnings, skipped, "queue quotas", file, &field);
        return;
    };
    if share.by == ShareBy::Demand && queues.iter().all(|q| q.1 == Some(0)) {
        note(
            warnings,
            "no GPU demand in the replay window: the GPUs are shared equally".into(),
        );
    }
    for ((name, _), g) in queues.iter().zip(gpus) {
        if let Err(reason) = target.set(model, name, g) {
            *skipped.entry(reason).or_insert(0) += 1;
        }
    }
    warn_not_applied(warnings, skipped, "queue quotas", file, &field);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn largest_remainder_by_hand() {
        // 10 × (43200, 3600) / 46800 = (9.23, 0.77): floors 9 + 0, the 1 left to 0.77
        assert_eq!(largest_remainder(10, &[43200, 3600]), Some(vec![9, 1]));
        // equal halves of 9: the tie goes to the first (name order)
        assert_eq!(largest_remainder(9, &[1, 1]), Some(vec![5, 4]));
        // thirds of 8: 2.67 each, the 2 left to the first two
        assert_eq!(largest_remainder(8, &[1, 1, 1]), Some(vec![3, 3, 2]));
        // 16 × (43200, 3600) / 46800 = (14.77, 1.23): the 1 left to 14.77
        assert_eq!(largest_remainder(16, &[43200, 3600]), Some(vec![15, 1]));
        // a queue without demand gets nothing; all without demand share equally
        assert_eq!(largest_remainder(7, &[0, 5]), Some(vec![0, 7]));
        assert_eq!(largest_remainder(7, &[0, 0]), Some(vec![4, 3]));
        assert_eq!(largest_remainder(5, &[]), Some(vec![]));
        assert_eq!(largest_remainder(u64::MAX, &[u128::MAX, 1]), None);
    }

    proptest::proptest! {
        /// The quotas add up to the total, each is within 1 of its exact share, and a
        /// larger weight never gets fewer GPUs.
        #[test]
        fn largest_remainder_is_exact_and_monotone(
            total in 0u64..10_000,
            w in proptest::collection::vec(0u128..1_000_000, 1..20),
        ) {
            let q = largest_remainder(total, &w).expect("no overflow");
            proptest::prop_assert_eq!(q.iter().sum::<u64>(), total);
            let sum: u128 = w.iter().sum();
            let w: Vec<u128> = if sum == 0 { vec![1; w.len()] } else { w };
            let sum: u128 = w.iter().sum();
            for (i, &x) in w.iter().enumerate() {
                let exact = u128::from(total) * x;
                let got = u128::from(q[i]) * sum;
                proptest::prop_assert!(got + sum > exact && got < exact + sum);
                for (j, &y) in w.iter().enumerate() {
                    if x > y {
                        proptest::prop_assert!(q[i] >= q[j], "{:?} {:?}", w, q);
                    }
                    if x == y && i < j {
                        proptest::prop_assert!(q[i] >= q[j] && q[i] <= q[j] + 1);
                    }
                }
            }
        }
    }
}
