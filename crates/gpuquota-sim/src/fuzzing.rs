//! The check function of the scenario fuzz target and its arbtest smoke test.

use crate::scenario::{self, Retry};

/// Most workload instances (and perf-generator ClusterQueues) a fuzzed scenario may make.
pub const FUZZ_INSTANCES: u64 = 400;
/// The horizon a fuzzed scenario is cut to (virtual ms).
pub const FUZZ_HORIZON_MS: i64 = 60_000;
/// The shortest fixed retry interval a fuzzed `resourcequota` scenario keeps (virtual ms).
pub const FUZZ_MIN_RETRY_MS: i64 = 50;

/// Arbitrary bytes as a scenario: the text before the first NUL byte is the scenario file,
/// the text after it is the content of every file it names (`spec.cluster`,
/// `spec.workloads[].file`). A scenario that parses is simulated with a bounded budget
/// (at most [`FUZZ_INSTANCES`] instances, the horizon cut to [`FUZZ_HORIZON_MS`], fixed
/// retries no shorter than [`FUZZ_MIN_RETRY_MS`]) and every output is rendered. Panics if
/// the parser, the simulation or a renderer panics, or if the report breaks conservation
/// (a workload missing or listed twice, runs out of order or overlapping).
pub fn check_scenario(data: &[u8]) {
    let (head, tail) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let (Ok(text), Ok(files)) = (std::str::from_utf8(head), std::str::from_utf8(tail)) else {
        return;
    };
    let parsed = scenario::with_instance_limit(FUZZ_INSTANCES, || {
        scenario::from_str("fuzz.yaml", text, "fuzz", &|rel: &str| {
            Ok((rel.to_owned(), files.to_owned()))
        })
    });
    let Ok(mut sc) = parsed else {
        return;
    };
    if sc.instances.len() as u64 > FUZZ_INSTANCES
        || sc.model.workloads.len() as u64 > FUZZ_INSTANCES
        || sc.model.cluster_queues.len() as u64 > FUZZ_INSTANCES
    {
        return;
    }
    sc.end_ms = Some(
        sc.end_ms
            .map_or(FUZZ_HORIZON_MS, |e| e.min(FUZZ_HORIZON_MS)),
    );
    if let Retry::Fixed(ms) = sc.retry {
        sc.retry = Retry::Fixed(ms.max(FUZZ_MIN_RETRY_MS));
    }
    let Ok(report) = crate::simulate(&sc) else {
        return;
    };
    let keys: Vec<&str> = report
        .outcome
        .workloads
        .iter()
        .map(|w| w.key.as_str())
        .collect();
    assert!(
        keys.windows(2).all(|p| p[0] < p[1]),
        "workloads listed out of order or twice"
    );
    assert_eq!(keys.len(), report.outcome.workloads.len());
    for w in &report.outcome.workloads {
        for r in &w.runs {
            assert!(
                r.start_ms <= r.end_ms,
                "a run of {} ends before it starts",
                w.key
            );
        }
        for p in w.runs.windows(2) {
            assert!(p[0].end_ms <= p[1].start_ms, "runs of {} overlap", w.key);
        }
    }
    let _ = report.to_json_string();
    let _ = report.to_csv();
    let _ = report.to_table();
    let _ = report.to_kueue_summary(&std::collections::BTreeMap::new());
    let _ = crate::plot::svg(&sc, &report);
}
