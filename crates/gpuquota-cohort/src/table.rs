//! The text tables of [`ScheduleReport`] and [`QuotasReport`], on the workspace's one table
//! layout ([`gpuquota_model::text`]): nothing is ever cut, [`Width::Fit`] wraps.

use std::fmt::Write as _;

use gpuquota_model::text::{Table, Width, wrap};

use gpuquota_model::Quantity;

use crate::report::{QuotasReport, ScheduleReport};

/// `table` indented by `prefix`, keeping within `width` (the indent counts).
fn indented(table: &Table, width: Width, prefix: &str) -> String {
    let inner = match width {
        Width::Full => Width::Full,
        Width::Fit(w) => Width::Fit(w.saturating_sub(prefix.len() as u16).max(20)),
    };
    let mut out = String::new();
    for line in table.render(inner).lines() {
        let _ = writeln!(out, "{prefix}{line}");
    }
    out
}

/// The column prose wraps at: 74 when the table is full width (prose is not a cell).
fn prose(width: Width, indent: usize) -> usize {
    match width {
        Width::Full => 74,
        Width::Fit(w) => usize::from(w).saturating_sub(indent).max(20),
    }
}

impl ScheduleReport {
    /// The text `kueue schedule --output table` prints: the admissions, preemptions and
    /// pending workloads as tables (each pending workload followed by the sentence saying why
    /// it waits), then the decision warnings when there is one.
    ///
    /// # Complexity
    /// O(size of the report).
    pub fn table(&self, width: Width) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "cycles: {}", self.cycles);
        let _ = writeln!(out, "\nadmitted ({}):", self.admitted.len());
        if !self.admitted.is_empty() {
            let mut t = Table::new(["CYCLE", "WORKLOAD", "CLUSTERQUEUE", "PODSETS"]).right([0]);
            for a in &self.admitted {
                let pod_sets: Vec<String> = a
                    .pod_sets
                    .iter()
                    .map(|p| {
                        let f: Vec<String> =
                            p.flavors.iter().map(|(k, v)| format!("{k}={v}")).collect();
                        format!("{}x{} {}", p.name, p.count, f.join(","))
                    })
                    .collect();
                t.row([
                    a.cycle.to_string(),
                    a.workload.clone(),
                    a.cluster_queue.clone(),
                    pod_sets.join("; "),
                ]);
            }
            out.push_str(&indented(&t, width, "  "));
        }
        let _ = writeln!(out, "\npreempted ({}):", self.preempted.len());
        if !self.preempted.is_empty() {
            let mut t =
                Table::new(["CYCLE", "WORKLOAD", "CLUSTERQUEUE", "BY", "REASON"]).right([0]);
            for p in &self.preempted {
                t.row([
                    p.cycle.to_string(),
                    p.workload.clone(),
                    p.cluster_queue.clone(),
                    p.preemptor.clone(),
                    p.reason.clone(),
                ]);
            }
            out.push_str(&indented(&t, width, "  "));
        }
        let _ = writeln!(out, "\npending ({}):", self.pending.len());
        for p in &self.pending {
            let queue = if p.cluster_queue.is_empty() {
                "-"
            } else {
                &p.cluster_queue
            };
            let _ = writeln!(out, "  {} ({queue}): {}", p.workload, p.reason);
            for line in wrap(&p.explanation, prose(width, 4)) {
                let _ = writeln!(out, "    {line}");
            }
        }
        // only when there is one, so tables of runs without warnings stay as they were
        if !self.warnings.is_empty() {
            let _ = writeln!(out, "\nwarnings ({}):", self.warnings.len());
            for w in &self.warnings {
                let _ = writeln!(out, "  {}", w.code);
                for line in wrap(&w.message, prose(width, 4)) {
                    let _ = writeln!(out, "    {line}");
                }
            }
        }
        out
    }
}

impl QuotasReport {
    /// The text `kueue quotas --output table` prints: one row per ClusterQueue
    /// flavor-resource (nominal, usage, available, potentially available), then one per
    /// Cohort flavor-resource (nominal, subtree quota, usage).
    ///
    /// # Complexity
    /// O(size of the report).
    pub fn table(&self, width: Width) -> String {
        let dash = |v: &Option<Quantity>| {
            v.as_ref()
                .map_or_else(|| "-".to_owned(), Quantity::to_string)
        };
        let mut cqs = Table::new([
            "CLUSTERQUEUE",
            "FLAVOR",
            "RESOURCE",
            "NOMINAL",
            "BL",
            "LL",
            "USAGE",
            "AVAILABLE",
            "MAX",
        ])
        .right(3..9);
        for (cq, flavors) in &self.cluster_queues {
            for (f, res) in flavors {
                for (rn, q) in res {
                    cqs.row([
                        cq.clone(),
                        f.clone(),
                        rn.clone(),
                        q.nominal.to_string(),
                        dash(&q.borrowing_limit),
                        dash(&q.lending_limit),
                        q.usage.to_string(),
                        q.available.to_string(),
                        q.potential_available.to_string(),
                    ]);
                }
            }
        }
        let mut cohorts = Table::new([
            "COHORT", "FLAVOR", "RESOURCE", "NOMINAL", "SUBTREE", "USAGE", "BL", "LL",
        ])
        .right(3..8);
        for (co, flavors) in &self.cohorts {
            for (f, res) in flavors {
                for (rn, q) in res {
                    cohorts.row([
                        co.clone(),
                        f.clone(),
                        rn.clone(),
                        q.nominal.to_string(),
                        q.subtree_quota.to_string(),
                        q.usage.to_string(),
                        dash(&q.borrowing_limit),
                        dash(&q.lending_limit),
                    ]);
                }
            }
        }
        let mut out = cqs.render(width);
        out.push('\n');
        out.push_str(&cohorts.render(width));
        out.push_str(
            "\nBL/LL: borrowingLimit/lendingLimit (- unset); MAX: potentially available\n",
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{CqQuotaOut, PendingOut};
    use std::collections::BTreeMap;

    #[test]
    fn long_values_are_printed_whole() {
        let q = |s: &str| s.parse::<gpuquota_model::Quantity>().unwrap();
        let long = "a-cluster-queue-with-a-name-longer-than-any-column-had";
        let q = CqQuotaOut {
            nominal: q("18922Gi"),
            borrowing_limit: None,
            lending_limit: Some(q("2")),
            usage: q("0"),
            available: q("18922Gi"),
            potential_available: q("18922Gi"),
        };
        let mut res = BTreeMap::new();
        res.insert("memory".to_owned(), q);
        let mut fl = BTreeMap::new();
        fl.insert("on-demand".to_owned(), res);
        let mut r = QuotasReport {
            cluster_queues: BTreeMap::new(),
            cohorts: BTreeMap::new(),
        };
        r.cluster_queues.insert(long.to_owned(), fl);
        let full = r.table(Width::Full);
        assert!(full.contains(long), "{full}");
        assert_eq!(full.matches("18922Gi").count(), 3, "{full}");
        assert!(!full.contains('~'));
        // the 54-character name is one word: at 80 columns the table wraps only between
        // words, so it stays as wide as that word needs rather than splitting it
        let fit = r.table(Width::Fit(80));
        assert!(fit.contains(long), "{fit}");
        assert_eq!(fit.matches("18922Gi").count(), 3, "{fit}");
        let widest = |t: &str| t.lines().map(|l| l.chars().count()).max().unwrap_or(0);
        assert!(widest(&fit) <= widest(&full), "{fit}");
    }

    #[test]
    fn pending_lines_keep_name_queue_and_reason() {
        let r = ScheduleReport {
            cycles: 1,
            admitted: vec![],
            preempted: vec![],
            pending: vec![PendingOut {
                workload: "ns/a-workload-with-a-long-name-that-was-cut-before".into(),
                cluster_queue: "a-long-cluster-queue".into(),
                reason: "Pending".into(),
                message: String::new(),
                explanation: "waits for quota".into(),
            }],
            warnings: vec![],
        };
        let t = r.table(Width::Full);
        assert!(t.contains(
            "  ns/a-workload-with-a-long-name-that-was-cut-before (a-long-cluster-queue): Pending\n    waits for quota\n"
        ), "{t}");
    }
}
