//! The text table of [`SharesReport`], on the workspace's one table layout
//! ([`gpuquota_model::text`]).

use gpuquota_model::text::{Table, Width};

use crate::shares::SharesReport;

impl SharesReport {
    /// The text `kueue shares --output table` prints: one row per ClusterQueue, then per
    /// Cohort, with its share (`inf` for a zero weight while borrowing, `-` where Kueue
    /// reports none) and dominant resource.
    ///
    /// # Complexity
    /// O(size of the report).
    pub fn table(&self, width: Width) -> String {
        let mut t = Table::new(["KIND", "NAME", "SHARE", "DOMINANT"]).right([2]);
        let rows = self
            .cluster_queues
            .iter()
            .map(|(n, s)| ("ClusterQueue", n, s))
            .chain(self.cohorts.iter().map(|(n, s)| ("Cohort", n, s)));
        for (kind, name, s) in rows {
            let (share, dominant) = match s {
                None => ("-".to_owned(), "-".to_owned()),
                Some(s) => (
                    if s.share == i64::MAX {
                        "inf".to_owned()
                    } else {
                        s.share.to_string()
                    },
                    s.dominant_resource
                        .clone()
                        .unwrap_or_else(|| "-".to_owned()),
                ),
            };
            t.row([kind.to_owned(), name.clone(), share, dominant]);
        }
        t.render(width)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shares::NodeShare;

    #[test]
    fn shares_table_prints_every_name_whole() {
        let mut r = SharesReport::default();
        let long = "a-cluster-queue-whose-name-is-longer-than-thirty-six-characters";
        r.cluster_queues.insert(
            long.into(),
            Some(NodeShare {
                share: i64::MAX,
                dominant_resource: Some("example.com/a-long-extended-resource".into()),
            }),
        );
        r.cohorts.insert("platform".into(), None);
        let t = r.table(Width::Full);
        assert!(t.contains(long), "{t}");
        assert!(
            t.contains("inf  example.com/a-long-extended-resource\n"),
            "{t}"
        );
        assert!(t.contains("Cohort        platform"), "{t}");
    }
}
