//! The scheduling-equivalence shape of a workload as bytes ([`shape_key`]): the key that
//! groups a ClusterQueue's workloads for upstream's SchedulingEquivalenceHashing.

/// The bytes of a workload's scheduling-equivalence shape ([`Scheduler::shape_of`]): its
/// effective priority and every field of its PodSets, each string and list length-prefixed,
/// so two workloads have the same bytes exactly when those fields are equal.
///
/// # Complexity
/// O(size of the PodSets).
pub(super) fn shape_key(w: &crate::world::WorkloadInfo) -> Vec<u8> {
    fn str(key: &mut Vec<u8>, s: &str) {
        len(key, s.len());
        key.extend_from_slice(s.as_bytes());
    }
    fn len(key: &mut Vec<u8>, n: usize) {
        key.extend_from_slice(&(n as u64).to_le_bytes());
    }
    fn opt_str(key: &mut Vec<u8>, s: Option<&str>) {
        match s {
            Some(s) => {
                key.push(1);
                str(key, s);
            }
            None => key.push(0),
        }
    }
    let mut key = Vec::with_capacity(64 + 64 * w.pod_sets.len());
    key.extend_from_slice(&w.priority.to_le_bytes());
    len(&mut key, w.pod_sets.len());
    for p in &w.pod_sets {
        str(&mut key, &p.name);
        key.extend_from_slice(&p.count.to_le_bytes());
        match p.min_count {
            Some(m) => {
                key.push(1);
                key.extend_from_slice(&m.to_le_bytes());
            }
            None => key.push(0),
        }
        len(&mut key, p.per_pod.len());
        for &(r, q) in &p.per_pod {
            key.extend_from_slice(&u32::from(r).to_le_bytes());
            key.extend_from_slice(&q.to_le_bytes());
        }
        len(&mut key, p.node_selector.len());
        for (k, v) in &p.node_selector {
            str(&mut key, k);
            str(&mut key, v);
        }
        len(&mut key, p.tolerations.len());
        for t in &p.tolerations {
            opt_str(&mut key, t.key.as_deref());
            opt_str(&mut key, t.operator.as_deref());
            opt_str(&mut key, t.value.as_deref());
            opt_str(&mut key, t.effect.as_deref());
            match t.toleration_seconds {
                Some(s) => {
                    key.push(1);
                    key.extend_from_slice(&s.to_le_bytes());
                }
                None => key.push(0),
            }
        }
        len(&mut key, p.affinity.len());
        for term in &p.affinity {
            len(&mut key, term.len());
            for r in term {
                str(&mut key, &r.key);
                str(&mut key, &r.operator);
                len(&mut key, r.values.len());
                for v in &r.values {
                    str(&mut key, v);
                }
            }
        }
        len(&mut key, p.claims.len());
        for (k, n) in &p.claims {
            str(&mut key, k);
            key.extend_from_slice(&n.to_le_bytes());
        }
    }
    key
}

#[cfg(test)]
mod tests {
    use super::shape_key;
    use crate::world::{CqId, NodeRequirement, PodSetInfo, QueueRef, ResourceId, WorkloadInfo};
    use gpuquota_model::Timestamp;
    use gpuquota_model::meta::Toleration;

    fn workload(priority: i32, pod_sets: Vec<PodSetInfo>) -> WorkloadInfo {
        WorkloadInfo {
            key: "ns/w".into(),
            namespace: "ns".into(),
            uid: "ns/w".into(),
            uid_raw: None,
            job_uid: None,
            priority,
            priority_class: None,
            created: Timestamp::EPOCH,
            active: true,
            dra_refused: None,
            gated_by: None,
            pod_sets,
            queue: QueueRef::Cq(CqId::new(0)),
            admitted: None,
        }
    }

    fn pod_set() -> PodSetInfo {
        PodSetInfo {
            name: "main".into(),
            count: 2,
            min_count: None,
            per_pod: vec![(ResourceId::new(0), 1000), (ResourceId::new(2), 1)],
            node_selector: [("zone".to_owned(), "a".to_owned())].into_iter().collect(),
            tolerations: Vec::new(),
            affinity: Vec::new(),
            claims: Vec::new(),
        }
    }

    /// The shape key groups workloads exactly as the text of their priority and PodSets
    /// (the key it replaced) does: one variant per field, and strings that only a missing
    /// length prefix would confuse.
    #[test]
    fn shape_key_equality_is_field_equality() {
        let base = pod_set();
        let mut variants: Vec<WorkloadInfo> = vec![workload(0, vec![base.clone()])];
        variants.push(workload(1, vec![base.clone()]));
        variants.push(workload(0, vec![base.clone(), base.clone()]));
        variants.push(workload(0, Vec::new()));
        type Edit = Box<dyn Fn(&mut PodSetInfo)>;
        let mut edits: Vec<Edit> = vec![
            Box::new(|p| p.name = "mai".into()),
            Box::new(|p| p.count = 3),
            Box::new(|p| p.min_count = Some(1)),
            Box::new(|p| p.min_count = Some(2)),
            Box::new(|p| p.per_pod = vec![(ResourceId::new(0), 1000)]),
            Box::new(|p| p.per_pod = vec![(ResourceId::new(0), 1000), (ResourceId::new(2), 2)]),
            Box::new(|p| p.per_pod = vec![(ResourceId::new(1), 1000), (ResourceId::new(2), 1)]),
            Box::new(|p| {
                p.node_selector = [("zone".to_owned(), "ab".to_owned())].into_iter().collect()
            }),
            Box::new(|p| {
                p.node_selector = [("zonea".to_owned(), String::new())].into_iter().collect()
            }),
            Box::new(|p| p.node_selector.clear()),
            Box::new(|p| {
                p.tolerations = vec![Toleration {
                    key: Some("gpu".into()),
                    operator: Some("Exists".into()),
                    ..Toleration::default()
                }]
            }),
            Box::new(|p| {
                p.tolerations = vec![Toleration {
                    key: Some("gpu".into()),
                    value: Some("Exists".into()),
                    ..Toleration::default()
                }]
            }),
            Box::new(|p| {
                p.tolerations = vec![Toleration {
                    effect: Some("NoExecute".into()),
                    toleration_seconds: Some(30),
                    ..Toleration::default()
                }]
            }),
            Box::new(|p| {
                p.affinity = vec![vec![NodeRequirement {
                    key: "zone".into(),
                    operator: "In".into(),
                    values: vec!["a".into(), "b".into()],
                }]]
            }),
            Box::new(|p| {
                p.affinity = vec![vec![NodeRequirement {
                    key: "zone".into(),
                    operator: "In".into(),
                    values: vec!["ab".into()],
                }]]
            }),
            Box::new(|p| p.affinity = vec![Vec::new()]),
        ];
        for edit in edits.drain(..) {
            let mut p = base.clone();
            edit(&mut p);
            variants.push(workload(0, vec![p]));
        }
        // an equal copy built separately
        variants.push(workload(0, vec![pod_set()]));
        let text = |w: &WorkloadInfo| format!("{}|{:?}", w.priority, w.pod_sets);
        for a in &variants {
            for b in &variants {
                assert_eq!(
                    shape_key(a) == shape_key(b),
                    text(a) == text(b),
                    "{} vs {}",
                    text(a),
                    text(b)
                );
            }
        }
        assert_eq!(shape_key(&variants[0]), shape_key(variants.last().unwrap()));
    }
}
