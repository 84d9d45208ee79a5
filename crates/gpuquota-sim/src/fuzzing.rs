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
    let Ok(report) = crate::simulate_kueue(&sc) else {
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

/// Arbitrary bytes as command-line arguments of `gpuquota sim sweep` and `gpuquota kai`: the
/// text split at NUL bytes, each piece given to every argument parser (`--set`, `--shard`,
/// `-j`, `--emit-job`, Go durations, `--now`, `--total`), all pieces together to
/// [`crate::sweep::parse_axes`] as the `--set`s of one sweep, whose first and last runs are
/// then applied to a small scenario document, and the emitted manifests rendered with the
/// first two pieces as namespace and queue. Panics if a parser panics or accepts a value
/// above its limit.
pub fn check_arguments(data: &[u8]) {
    use crate::sweep::{self, Axis};
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let pieces: Vec<&str> = text.split('\0').collect();
    for p in &pieces {
        if let Ok(a) = Axis::parse(p) {
            assert!(!a.values.is_empty() && a.values.len() <= sweep::MAX_RUNS);
        }
        if let Ok((i, n)) = sweep::parse_shard(p) {
            assert!(i < n && n <= sweep::MAX_SHARDS, "--shard {p}");
        }
        if let Ok(n) = sweep::parse_threads(p) {
            assert!((1..=sweep::MAX_THREADS).contains(&n), "-j {p}");
        }
        if let Ok(n) = sweep::parse_shard_count(p) {
            assert!((1..=sweep::MAX_SHARDS).contains(&n), "--emit-job {p}");
        }
        if let Some(ms) = scenario::duration_ms(p) {
            assert!(ms >= 0, "duration {p}");
        }
        let _ = gpuquota_model::Timestamp::parse(p);
        let _ = gpuquota_rank::snapshot::parse_total(p);
        let _ = sweep::escape_kubelet(p);
    }
    let Ok(axes) = sweep::parse_axes(&pieces) else {
        return;
    };
    let runs = axes
        .iter()
        .try_fold(1usize, |n, a| n.checked_mul(a.values.len()))
        .expect("the grid's size fits");
    assert!(runs <= sweep::MAX_RUNS, "{runs} runs");
    let _ = sweep::grid_fingerprint(&axes);
    let doc = serde_json::json!({
        "kind": "Simulation",
        "spec": {"engine": "kueue", "workloads": [{"trace": {"generate": {"jobs": 1}}}]}
    });
    for i in [0, runs - 1] {
        let params = sweep::run_parameters(&axes, i);
        let _ = sweep::edit_run(&doc, true, &params);
        let _ = sweep::edit_run(&doc, false, &params);
    }
    let (namespace, queue) = (pieces[0], pieces.get(1).copied().unwrap_or("q"));
    let _ = sweep::manifests(&sweep::JobRequest {
        name: "sweep-fuzz",
        namespace,
        queue,
        image: "gpuquota",
        scenario: ("fuzz.yaml", text),
        files: &[],
        axes: &axes,
        shards: 2,
    });
}

pub use crate::count::Counts;

/// The work counted since the last call on this thread (scenario reads and parses, engine
/// input builds), zeroed: the tests' proof that a run reads, parses and builds each once.
pub fn counts() -> crate::count::Counts {
    crate::count::take()
}

/// A file reader for [`scenario()`]: a path relative to the scenario to (display name, text).
pub type ReadFn<'a> = dyn Fn(&str) -> Result<(String, String), gpuquota_model::Diagnostic> + 'a;

/// A simulation from a scenario document's text with `read` loading the files it names (the
/// fuzz target's and the tests' in-memory files; [`crate::Simulation::from_files`] reads them
/// from disk), parsed once.
///
/// # Errors
/// Every problem found, as [`crate::Simulation::from_files`].
pub fn scenario(
    name: &str,
    text: &str,
    stem: &str,
    read: &ReadFn<'_>,
) -> Result<crate::Simulation, gpuquota_model::Diagnostics> {
    crate::simulation::from_text(name, text, stem, read)
}

/// [`crate::simulate`] of a Kueue or ResourceQuota simulation, its report by value.
///
/// # Errors
/// As [`crate::simulate`]'s diagnostics, or one error for a KAI simulation.
pub fn run_kueue(
    simulation: &crate::Simulation,
) -> Result<crate::Report, gpuquota_model::Diagnostics> {
    crate::simulate(simulation)
        .map_err(gpuquota_model::Error::into_diagnostics)?
        .into_kueue()
        .ok_or_else(|| wrong_mode("a KAI simulation has no Kueue report"))
}

/// [`crate::simulate`] of a KAI simulation, its report by value.
///
/// # Errors
/// As [`crate::simulate`]'s diagnostics, or one error for a Kueue simulation.
pub fn run_kai(
    simulation: &crate::Simulation,
) -> Result<crate::kai::KaiOutcome, gpuquota_model::Diagnostics> {
    crate::simulate(simulation)
        .map_err(gpuquota_model::Error::into_diagnostics)?
        .into_kai()
        .ok_or_else(|| wrong_mode("a Kueue simulation has no KAI report"))
}

fn wrong_mode(message: &str) -> gpuquota_model::Diagnostics {
    gpuquota_model::Diagnostics(vec![gpuquota_model::Diagnostic::error(
        crate::scenario::INVALID_SCENARIO,
        message,
    )])
}

/// [`crate::Simulation::from_files`] with the error's diagnostics (the tests' reader).
///
/// # Errors
/// As [`crate::Simulation::from_files`].
pub fn load(path: &std::path::Path) -> Result<crate::Simulation, gpuquota_model::Diagnostics> {
    crate::Simulation::from_files(path).map_err(gpuquota_model::Error::into_diagnostics)
}
