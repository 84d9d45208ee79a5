//! Namespace ResourceQuotas under KAI: the API server refuses a job's pods (403
//! `Forbidden`) while its namespace's quota has no room for them, whatever the scheduler.
//!
//! A job's pods are created when it arrives, if every unscoped ResourceQuota of its
//! namespace has room for their requests (`requests.<extended resource>`, such as
//! `requests.nvidia.com/gpu` or a MIG instance, and `pods`) beside the pods of the
//! namespace's other created, unfinished jobs; otherwise the job is held, invisible to the
//! sessions, with the API server's message, and tried again before each session (the
//! controller's retries), in key order. Created pods count until their job finishes (an
//! evicted job's pods are recreated at once). CPU and memory keys and scoped quotas are not
//! applied.

use std::collections::BTreeMap;

use gpuquota_model::Model;
use gpuquota_rank::Cluster;

/// One hard cap: (key as written, resource or `None` for `pods`, limit).
type Hard = (String, Option<String>, i64);

/// The quotas, each job's charge, and which jobs' pods exist.
#[derive(Debug, Clone, Default)]
pub(crate) struct Caps {
    /// (namespace, name, hard caps), in key order.
    quotas: Vec<(String, String, Vec<Hard>)>,
    /// Per job of the cluster (its key), per resource: its pods' requests; `""`: pods.
    charge: BTreeMap<String, BTreeMap<String, i64>>,
    /// Jobs whose pods exist.
    created: BTreeMap<String, bool>,
}

impl Caps {
    /// The model's unscoped ResourceQuotas and the cluster's jobs.
    ///
    /// # Complexity
    /// O(quotas + tasks).
    pub(crate) fn new(model: &Model, cluster: &Cluster) -> Caps {
        let mut quotas = Vec::new();
        for q in model.resource_quotas.values() {
            if q.spec.scope_selector.is_some() || !q.spec.scopes.is_empty() {
                continue;
            }
            let hard: Vec<Hard> = q
                .spec
                .hard
                .iter()
                .filter_map(|(k, v)| {
                    let limit = v.value()?;
                    if k == "pods" {
                        return Some((k.clone(), None, limit));
                    }
                    let r = k.strip_prefix("requests.")?;
                    r.contains('/')
                        .then(|| (k.clone(), Some(r.to_owned()), limit))
                })
                .collect();
            if !hard.is_empty() {
                quotas.push((
                    q.metadata.namespace.clone().unwrap_or_default(),
                    q.metadata.name.clone(),
                    hard,
                ));
            }
        }
        let mut charge = BTreeMap::new();
        if !quotas.is_empty() {
            for j in &cluster.jobs {
                let mut c: BTreeMap<String, i64> = BTreeMap::new();
                for t in &j.tasks {
                    *c.entry(String::new()).or_default() += 1;
                    if !t.fractional {
                        let nano = (t.req[gpuquota_rank::Resource::Gpu] - t.mig_gpu).max(0);
                        let whole = nano.saturating_add(999_999_999) / 1_000_000_000;
                        if whole > 0 {
                            *c.entry("nvidia.com/gpu".to_owned()).or_default() +=
                                i64::try_from(whole).unwrap_or(i64::MAX);
                        }
                    }
                    for &(p, n) in &t.mig {
                        if let Some(name) = cluster.mig_profiles.get(p) {
                            *c.entry(name.clone()).or_default() += n;
                        }
                    }
                }
                charge.insert(j.key.clone(), c);
            }
        }
        Caps {
            quotas,
            charge,
            created: BTreeMap::new(),
        }
    }

    /// True when no quota applies (nothing to check).
    pub(crate) fn is_empty(&self) -> bool {
        self.quotas.is_empty()
    }

    fn namespace(key: &str) -> &str {
        key.split('/').next().unwrap_or("")
    }

    fn amount(&self, job: &str, resource: Option<&String>) -> i64 {
        self.charge
            .get(job)
            .and_then(|c| c.get(resource.map_or("", String::as_str)))
            .copied()
            .unwrap_or(0)
    }

    /// Creates the pods of the `pending` jobs not yet created whose quotas have room,
    /// in key order, beside the created jobs of `unfinished`; returns each pending job's
    /// verdict: `None` when its pods exist, else the API server's 403 message.
    ///
    /// # Complexity
    /// O(jobs × quotas × caps).
    pub(crate) fn admit(
        &mut self,
        pending: &[&str],
        unfinished: &[&str],
    ) -> Vec<(String, Option<String>)> {
        let mut out = Vec::new();
        if self.quotas.is_empty() {
            return out;
        }
        // used[q][k] over the created, unfinished jobs
        let mut used: Vec<Vec<i64>> = self
            .quotas
            .iter()
            .map(|(ns, _, hard)| {
                hard.iter()
                    .map(|(_, r, _)| {
                        unfinished
                            .iter()
                            .filter(|j| {
                                Self::namespace(j) == ns
                                    && self.created.get(**j).copied().unwrap_or(false)
                            })
                            .map(|j| self.amount(j, r.as_ref()))
                            .sum()
                    })
                    .collect()
            })
            .collect();
        for &job in pending {
            if self.created.get(job).copied().unwrap_or(false) {
                out.push((job.to_owned(), None));
                continue;
            }
            let ns = Self::namespace(job);
            let mut refused = None;
            'q: for (qi, (qns, name, hard)) in self.quotas.iter().enumerate() {
                if qns != ns {
                    continue;
                }
                for (k, (key, r, limit)) in hard.iter().enumerate() {
                    let req = self.amount(job, r.as_ref());
                    if req > 0 && used[qi][k].saturating_add(req) > *limit {
                        refused = Some(format!(
                            "exceeded quota: {name}, requested: {key}={req}, used: {key}={}, limited: {key}={limit}",
                            used[qi][k]
                        ));
                        break 'q;
                    }
                }
            }
            if refused.is_none() {
                self.created.insert(job.to_owned(), true);
                for (qi, (qns, _, hard)) in self.quotas.iter().enumerate() {
                    if qns == ns {
                        for (k, (_, r, _)) in hard.iter().enumerate() {
                            used[qi][k] += self.amount(job, r.as_ref());
                        }
                    }
                }
            }
            out.push((job.to_owned(), refused));
        }
        out
    }

    /// Job `job` finished: its pods no longer count.
    pub(crate) fn finished(&mut self, job: &str) {
        self.created.remove(job);
    }
}
