//! An advice in shards, as `gpuquota sim sweep` shards a sweep: the simulations a search
//! needs (the scenario as written, then each component's sub-grid, the crate docs' order)
//! are cut into N contiguous slices ([`gpuquota_sim::sweep::shard_range`]); shard I
//! simulates slice I and prints its runs ([`Shard`], `gpuquota advise FILE --shard I/N`);
//! [`merge`] joins every shard's runs and makes the advice from them, byte for byte the
//! advice of the unsharded run (`gpuquota advise FILE --merge SHARD…`). [`manifests`]
//! writes the Kubernetes Indexed Job that runs the shards as pods.
//!
//! A shard's JSON (`gpuquota schema advice-shard`): `{"kind": "AdviceShard", "name",
//! "shard": {"index", "count"}, "fingerprint": {"advice", "scenario", "files": {FILE:
//! digest}}, "exhaustive", "simulations", "first", "runs": [run…]}`: `fingerprint` holds
//! SHA-256 digests (lower-case hex) of the advice file's bytes, the scenario file's and
//! every file the scenario reads, so that shards of different advices are refused;
//! `simulations` is the number of simulations of the whole search, `first` the number of
//! this shard's first, `runs` what the metrics need of each run (per workload its queue,
//! class, wait, preempted and used GPU-time; per budget its least remaining GPU-hours; the
//! bill; the cards).
//!
//! The search checks after its runs that the components it simulated apart are independent
//! (crate docs, step 2); an unsharded advice then simulates the whole grid instead, but
//! shards cannot, so [`merge`] refuses shards whose runs break the decomposition and says
//! to run them again with `--exhaustive`.

use std::collections::BTreeMap;

use gpuquota_model::diag::Diagnostics;
use serde::{Deserialize, Serialize};

use crate::metric::Run;
use crate::search::{self, Options};
use crate::spec::Plan;
use crate::{Advice, Prepared, refuse};

/// `kind` of a shard's JSON.
pub const SHARD_KIND: &str = "AdviceShard";

/// Which shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ShardIndex {
    /// 0-based (a Kubernetes Indexed Job's `JOB_COMPLETION_INDEX`).
    pub index: usize,
    /// Shards in all.
    pub count: usize,
}

/// SHA-256 digests, lower-case hex, of what an advice reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Fingerprint {
    /// The advice file's bytes.
    pub advice: String,
    /// The scenario file's bytes.
    pub scenario: String,
    /// Every file the scenario reads, by the name it gives it.
    pub files: BTreeMap<String, String>,
}

/// One shard's runs (module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Shard {
    /// [`SHARD_KIND`].
    pub kind: String,
    /// The advice's name.
    pub name: String,
    /// Which shard.
    pub shard: ShardIndex,
    /// What the shard's runs read.
    pub fingerprint: Fingerprint,
    /// Whether every configuration is simulated (`--exhaustive`).
    pub exhaustive: bool,
    /// Simulations of the whole search.
    pub simulations: usize,
    /// The number of this shard's first simulation.
    pub first: usize,
    /// Its runs, in order.
    runs: Vec<Run>,
}

impl Shard {
    /// The shard as JSON, with a final newline.
    pub fn to_json_string(&self) -> String {
        let mut s = serde_json::to_string(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Reads a shard's JSON.
    ///
    /// # Errors
    /// Not JSON, not a shard (the message says which).
    pub fn from_json(text: &str) -> Result<Shard, String> {
        let s: Shard =
            serde_json::from_str(text).map_err(|e| format!("not an advice shard: {e}"))?;
        if s.kind != SHARD_KIND {
            return Err(format!(
                "kind {:?}: not an advice shard ({SHARD_KIND})",
                s.kind
            ));
        }
        Ok(s)
    }

    /// The number of simulations it holds.
    pub fn len(&self) -> usize {
        self.runs.len()
    }

    /// Whether it holds no simulation (more shards than simulations).
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }
}

/// The fingerprint of an advice (`advice_text`) over the scenario (`scenario_text`) as
/// `prepared` read it.
pub fn fingerprint(advice_text: &str, scenario_text: &str, prepared: &Prepared<'_>) -> Fingerprint {
    use gpuquota_sim::sweep::sha256_hex;
    Fingerprint {
        advice: sha256_hex(advice_text.as_bytes()),
        scenario: sha256_hex(scenario_text.as_bytes()),
        files: prepared.evaluator.file_digests(),
    }
}

/// Simulates shard `index` of `count` of the advice `plan` (module docs); `fingerprint` as
/// [`fingerprint`] makes it.
///
/// # Errors
/// As [`crate::advise`]; `index` not below `count`.
pub fn run(
    plan: &Plan,
    prepared: &Prepared<'_>,
    opts: &Options<'_>,
    fingerprint: Fingerprint,
    (index, count): (usize, usize),
) -> Result<Shard, Diagnostics> {
    if index >= count {
        return Err(refuse(format!(
            "shard {index}/{count}: the index must be below the count"
        )));
    }
    let comps = search::planned(plan, &prepared.model, opts.exhaustive);
    let jobs = search::jobs(plan, &comps);
    let range = gpuquota_sim::sweep::shard_range(jobs.len(), index, count);
    let runs = search::simulate_all(&prepared.evaluator, &jobs[range.clone()], opts)?;
    Ok(Shard {
        kind: SHARD_KIND.to_owned(),
        name: plan.name.clone(),
        shard: ShardIndex { index, count },
        fingerprint,
        exhaustive: opts.exhaustive,
        simulations: jobs.len(),
        first: range.start,
        runs,
    })
}

/// Joins the shards (each with the name of its file, for messages) into the advice the
/// unsharded run makes (module docs); `fingerprint` is the advice's own ([`fingerprint`]).
///
/// # Errors
/// No shard; a shard of another advice, scenario or file (its fingerprint), of another
/// shard count or search; a shard given twice or missing; runs that break the search's
/// decomposition; then as [`crate::advise`].
pub fn merge(
    plan: &Plan,
    prepared: &Prepared<'_>,
    fingerprint: &Fingerprint,
    shards: Vec<(String, Shard)>,
) -> Result<Advice, Diagnostics> {
    let Some((_, first)) = shards.first() else {
        return Err(refuse("no shard to merge".into()));
    };
    let (count, exhaustive, first_i) = (first.shard.count, first.exhaustive, first.shard.index);
    let comps = search::planned(plan, &prepared.model, exhaustive);
    let jobs = search::jobs(plan, &comps);
    let mut slots: Vec<Option<(String, Shard)>> = (0..count).map(|_| None).collect();
    for (file, s) in shards {
        if s.fingerprint != *fingerprint {
            return Err(refuse(format!(
                "{file}: a shard of another advice, scenario or scenario file (its fingerprint differs)"
            )));
        }
        if s.shard.count != count || s.exhaustive != exhaustive {
            return Err(refuse(format!(
                "{file}: shard {}/{}{} does not belong with shard {}/{count}{} of the first file",
                s.shard.index,
                s.shard.count,
                if s.exhaustive { " (exhaustive)" } else { "" },
                first_i,
                if exhaustive { " (exhaustive)" } else { "" },
            )));
        }
        let range = gpuquota_sim::sweep::shard_range(jobs.len(), s.shard.index, count);
        if s.shard.index >= count
            || s.simulations != jobs.len()
            || s.first != range.start
            || s.runs.len() != range.len()
        {
            return Err(refuse(format!(
                "{file}: shard {}/{count} does not hold the simulations {}..{} of {}",
                s.shard.index,
                range.start,
                range.end,
                jobs.len()
            )));
        }
        let i = s.shard.index;
        if let Some((other, _)) = &slots[i] {
            return Err(refuse(format!(
                "{file}: shard {i}/{count} is given twice (also {other})"
            )));
        }
        slots[i] = Some((file, s));
    }
    let missing: Vec<String> = slots
        .iter()
        .enumerate()
        .filter(|(_, s)| s.is_none())
        .map(|(i, _)| i.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(refuse(format!(
            "shards {} of {count} are missing",
            missing.join(", ")
        )));
    }
    let runs: Vec<Run> = slots
        .into_iter()
        .flatten()
        .flat_map(|(_, s)| s.runs)
        .collect();
    let ev = search::combine(comps, &jobs, runs).map_err(|why| {
        refuse(format!(
            "the shards' runs show that the knobs' components are not independent ({why}); run the shards again with --exhaustive"
        ))
    })?;
    let current = crate::current_values(plan, &prepared.model);
    crate::output::assemble(plan, &ev, &current)
}

/// What [`manifests`] needs besides the Job's names.
#[derive(Debug, Clone, Copy)]
pub struct JobFiles<'a> {
    /// The advice file's name (no directory) and text.
    pub advice: (&'a str, &'a str),
    /// `spec.scenario` as the advice writes it and the scenario's text.
    pub scenario: (&'a str, &'a str),
    /// Every file the scenario reads, by the name it gives it, with its text.
    pub files: &'a [(String, String)],
}

/// The Kubernetes manifests that run the advice's shards (the sweep's, from
/// [`gpuquota_sim::sweep::manifests_running`]): the ConfigMap holding the advice, its
/// scenario and every file the scenario reads, each at its path relative to the advice,
/// and the Indexed Job whose pods run `gpuquota advise /scenario/ADVICE --shard
/// $(JOB_COMPLETION_INDEX)/N --quiet` (with `--exhaustive` when `exhaustive`).
/// `job.scenario`, `job.files` and `job.axes` are not read.
///
/// # Errors
/// As [`gpuquota_sim::sweep::manifests`]: a name Kubernetes would refuse, a file outside
/// the advice's directory, more than a ConfigMap holds.
pub fn manifests(
    job: &gpuquota_sim::sweep::JobRequest<'_>,
    files: &JobFiles<'_>,
    exhaustive: bool,
) -> Result<String, String> {
    // the scenario's files are named relative to the scenario, which the advice names
    // relative to itself
    let dir = files
        .scenario
        .0
        .rsplit_once('/')
        .map(|(d, _)| format!("{d}/"))
        .unwrap_or_default();
    let mut all: Vec<(String, String)> =
        vec![(files.scenario.0.to_owned(), files.scenario.1.to_owned())];
    all.extend(
        files
            .files
            .iter()
            .map(|(p, t)| (format!("{dir}{}", p.trim_start_matches("./")), t.clone())),
    );
    let request = gpuquota_sim::sweep::JobRequest {
        scenario: files.advice,
        files: &all,
        axes: &[],
        ..*job
    };
    let mut args = vec!["advise".to_owned(), format!("/scenario/{}", files.advice.0)];
    if exhaustive {
        args.push("--exhaustive".into());
    }
    gpuquota_sim::sweep::manifests_running(
        &request,
        "advice",
        args,
        &format!(
            "gpuquota advise {} --merge {}-*.json",
            files.advice.0, job.name
        ),
    )
}
