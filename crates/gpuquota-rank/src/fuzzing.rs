//! Checks shared by the fuzz target and the arbtest smoke test (feature `fuzzing`).
//!
//! Each function takes arbitrary input, runs a public entry point and asserts the properties
//! that must hold for every input: no panic, a typed error or a well-formed result.

use arbitrary::{Arbitrary, Unstructured};

use crate::division::Resource;
use crate::division::{DivisionOptions, Hierarchy, Mode, QueueInput, ResourceParams};
use crate::fixed::SCALE;
use crate::ids::{PerResource, QueueId};
use crate::session::{SessionOptions, run_session};
use crate::snapshot::{BuildOptions, Cluster};

/// A queue tree and totals drawn from bytes (small values, any shape, cycles included).
#[derive(Debug, Clone)]
pub struct FuzzTree {
    /// The queues.
    pub queues: Vec<QueueInput>,
    /// The totals (nano-units).
    pub totals: PerResource<i128>,
    /// Division options.
    pub options: DivisionOptions,
}

impl<'a> Arbitrary<'a> for FuzzTree {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let n = u.int_in_range(0..=12usize)?;
        let mut queues = Vec::with_capacity(n);
        for i in 0..n {
            let mut resources = [ResourceParams::default(); 3];
            for p in &mut resources {
                let amt = |u: &mut Unstructured<'a>| -> arbitrary::Result<i128> {
                    Ok(i128::from(u.int_in_range(0..=64u32)?) * SCALE / 4)
                };
                *p = ResourceParams {
                    deserved: if u.ratio(1, 6)? { None } else { Some(amt(u)?) },
                    weight: i128::from(u.int_in_range(0..=5u32)?) * SCALE / 2,
                    limit: if u.ratio(1, 2)? { None } else { Some(amt(u)?) },
                    request: amt(u)?,
                    usage: i128::from(u.int_in_range(0..=100u32)?) * SCALE / 100,
                };
            }
            let parent = if i == 0 || u.ratio(1, 3)? {
                None
            } else {
                Some(QueueId::new(u.int_in_range(0..=n - 1)?))
            };
            queues.push(QueueInput {
                name: format!("q{i}"),
                parent,
                priority: u.int_in_range(0..=3)?,
                creation: None,
                uid: String::new(),
                resources,
            });
        }
        let mut totals = PerResource::ZERO;
        for t in &mut totals.0 {
            *t = i128::from(u.int_in_range(0..=400u32)?) * SCALE / 4;
        }
        let options = DivisionOptions {
            mode: if u.arbitrary()? {
                Mode::Kai
            } else {
                Mode::Corrected
            },
            k_value: i128::from(u.int_in_range(0..=3u32)?) * SCALE / 2,
        };
        Ok(FuzzTree {
            queues,
            totals,
            options,
        })
    }
}

/// The division never panics; a valid tree divides, and every sibling set stays within its
/// amount unless phase 1 oversubscribed it; corrected mode never exceeds requestable.
pub fn check_division(bytes: &[u8]) {
    let mut u = Unstructured::new(bytes);
    let Ok(t) = FuzzTree::arbitrary(&mut u) else {
        return;
    };
    let Ok(h) = Hierarchy::new(t.queues) else {
        return;
    };
    let d = h
        .divide(t.totals, &t.options)
        .unwrap_or_else(|e| panic!("small inputs must divide: {e}"));
    for r in Resource::ALL {
        let mut sets: Vec<(i128, Vec<QueueId>)> = vec![(t.totals[r], h.roots().to_vec())];
        for q in h.ids() {
            if !h.is_leaf(q) {
                sets.push((d.fair_share[q][r], h.children(q).to_vec()));
            }
        }
        for (total, sibs) in sets {
            let p1: i128 = sibs.iter().map(|&s| d.phase1[s][r]).sum();
            let fs: i128 = sibs.iter().map(|&s| d.fair_share[s][r]).sum();
            if p1 <= total {
                assert!(fs <= total, "{fs} > {total}");
            } else {
                assert_eq!(fs, p1);
            }
        }
        if t.options.mode == Mode::Corrected {
            for q in h.ids() {
                let p = &h.queue(q).resources[r.index()];
                let req = d.request[q][r];
                let cap = p.limit.map_or(req, |l| l.min(req));
                assert!(d.fair_share[q][r] <= cap);
            }
        }
    }
}

/// Reading manifests and running a session never panic: either a typed error or a result in
/// which every evicted or allocated job exists.
pub fn check_session(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    let mut importer = gpuquota_model::Importer::new();
    importer.add_str("fuzz.yaml", &text);
    let Ok(imported) = importer.finish() else {
        return;
    };
    // The validated build must not panic either; the session then runs on what the engine's
    // own checks accept, a superset of what the validator lets through.
    let _ = Cluster::from_model(&imported.model, &BuildOptions::default());
    let Ok(cluster) = Cluster::from_model_unvalidated(&imported.model, &BuildOptions::default())
    else {
        return;
    };
    let Ok(result) = run_session(&cluster, &SessionOptions::default()) else {
        return;
    };
    for a in &result.allocated {
        assert!(cluster.jobs.iter().any(|j| j.key == a.pod_group));
    }
    for e in &result.evicted {
        assert!(cluster.jobs.iter().any(|j| j.key == e.pod_group));
    }
}
