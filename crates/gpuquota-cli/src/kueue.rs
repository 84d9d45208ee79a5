//! `gpuquota kueue`: Kueue's admission engine over manifests (engine crate `gpuquota-cohort`).
//!
//! JSON contracts (stdout, pretty printed):
//! - `schedule`: `{"cycles", "admitted": [{workload, clusterQueue, cycle, podSets: [{name,
//!   count, flavors}]}], "preempted": [{workload, clusterQueue, preemptor, reason, cycle}],
//!   "pending": [{workload, clusterQueue, reason, message}], "warnings": [{severity, code,
//!   kind, name, message, engine}]}` — `warnings` only when the run has one (a
//!   `preemption-loop`: the same preemptor preempted the same victim twice), so runs without
//!   one print what they always printed; each warning is also printed on stderr and, under
//!   `--strict`, fails the command (exit 1, nothing on stdout);
//! - `quotas`: `{"clusterQueues": {cq: {flavor: {resource: {nominal, borrowingLimit,
//!   lendingLimit, usage, available, potentialAvailable}}}}, "cohorts": {cohort: {flavor:
//!   {resource: {nominal, subtreeQuota, usage, borrowingLimit, lendingLimit}}}}}`;
//! - `shares`: `{"clusterQueues": {cq: {"share": 250, "dominantResource": "nvidia.com/gpu"}},
//!   "cohorts": {cohort: {…}}}` — `status.fairSharing.weightedShare` as Kueue reports it
//!   (`gpuquota_fairshare::shares::kueue_shares`); `null` where Kueue reports no share.
//!
//! `schedule --budgets FILE --usage REPORT.json` applies GPU-hour Budgets first
//! ([`crate::budgets`]): a workload held back by a spent `Wait` budget is listed in `pending`
//! with reason `BudgetExhausted`; without the flags the output is unchanged.
//!
//! `schedule` runs Kueue's fair sharing (`gpuquota_cohort::fair`) when the Kueue
//! `Configuration` in the files enables it (`fairSharing`) or `--fair-sharing` is given, and
//! admission fair sharing when the Configuration has `admissionFairSharing` (for the
//! ClusterQueues whose `admissionScope` asks for it).
//!
//! Live-cluster states Kueue tolerates are warnings on stderr; malformed objects are listed on
//! stderr with exit code 1.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use gpuquota_cohort::{ScheduleReport, World};

use crate::common::{CliError, OutputFormat, read_file, to_json};

/// Kueue subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum KueueCommand {
    /// Run Kueue's scheduling cycles over a cluster state: admissions, preemptions, and why
    /// every other workload waits.
    Schedule {
        /// Manifests (YAML or JSON, several documents per file).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Stop after N cycles (default: until a cycle changes nothing).
        #[arg(long)]
        cycles: Option<u32>,
        /// Fair sharing (DRS tournament, fair-sharing preemption) even without a
        /// Configuration enabling it.
        #[arg(long)]
        fair_sharing: bool,
        /// Output format.
        #[arg(long, value_enum, default_value = "json")]
        output: OutputFormat,
        /// GPU-hour Budgets (manifests) to apply, with --usage.
        #[arg(long, requires = "usage")]
        budgets: Option<PathBuf>,
        /// A `gpuquota meter` JSON report of the budgets' period so far.
        #[arg(long, requires = "budgets")]
        usage: Option<PathBuf>,
    },
    /// Every ClusterQueue's and Cohort's fair-sharing share (`status.fairSharing.
    /// weightedShare`) and dominant resource, as Kueue reports them.
    Shares {
        /// Manifests (YAML or JSON, several documents per file).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value = "json")]
        output: OutputFormat,
    },
    /// Quotas, usage, available and potentially available capacity of every ClusterQueue and
    /// Cohort, as Kueue's cache computes them.
    Quotas {
        /// Manifests (YAML or JSON, several documents per file).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value = "json")]
        output: OutputFormat,
    },
}

/// Imports the manifests; `Err(code)` after printing every problem.
fn import(files: &[PathBuf]) -> Result<Result<gpuquota_model::Model, ExitCode>, CliError> {
    let mut importer = gpuquota_model::Importer::new();
    for f in files {
        let text = read_file(f)?;
        importer.add_str(&f.display().to_string(), &text);
    }
    let imported = match importer.finish() {
        Ok(i) => i,
        Err(errors) => {
            for e in &errors.0 {
                eprintln!("error: {e}");
            }
            return Ok(Err(ExitCode::from(1)));
        }
    };
    for w in &imported.warnings {
        eprintln!("warning: {w}");
    }
    Ok(Ok(imported.model))
}

/// Imports and builds the world; `Err(code)` after printing every problem.
fn load(files: &[PathBuf]) -> Result<Result<World, ExitCode>, CliError> {
    match import(files)? {
        Ok(model) => world_from(&model, false),
        Err(code) => Ok(Err(code)),
    }
}

/// Builds the world and prints its warnings (`fair`: fair sharing runs, so the engine's
/// "orders and preempts classically" warning does not apply).
fn world_from(
    model: &gpuquota_model::Model,
    fair: bool,
) -> Result<Result<World, ExitCode>, CliError> {
    match World::build(model) {
        Ok(world) => {
            for w in &world.warnings {
                if fair && w.kind == "Configuration" && w.message.contains("fair sharing") {
                    continue;
                }
                eprintln!("warning: {w}");
            }
            Ok(Ok(world))
        }
        Err(e) => {
            for p in &e.problems {
                eprintln!("error: {p}");
            }
            Ok(Err(ExitCode::from(1)))
        }
    }
}

pub(crate) fn run(command: KueueCommand) -> Result<ExitCode, CliError> {
    match command {
        KueueCommand::Schedule {
            files,
            cycles,
            fair_sharing,
            output,
            budgets,
            usage,
        } => {
            let mut model = match import(&files)? {
                Ok(m) => m,
                Err(code) => return Ok(code),
            };
            let applied = crate::budgets::apply(&mut model, budgets.as_deref(), usage.as_deref())?;
            let settings = match gpuquota_fairshare::config::settings_from_configuration(
                model.configuration.as_ref(),
                fair_sharing,
            ) {
                Ok(s) => s,
                Err(errors) => {
                    for e in &errors.0 {
                        eprintln!("error: {e}");
                    }
                    return Ok(ExitCode::from(1));
                }
            };
            let world = match world_from(&model, settings.enabled)? {
                Ok(w) => w,
                Err(code) => return Ok(code),
            };
            let report = if settings.enabled || settings.admission.is_some() {
                match gpuquota_cohort::fair::schedule(&world, &model, settings, cycles) {
                    Ok(r) => r,
                    Err(e) => {
                        eprintln!("error: {e}");
                        return Ok(ExitCode::from(1));
                    }
                }
            } else {
                gpuquota_cohort::schedule(&world, cycles)
            };
            let mut report = report;
            if let Some(a) = applied {
                // held back by a spent Wait budget: pending, with upstream-style fields
                for (workload, cq, message) in a.held {
                    report.pending.push(gpuquota_cohort::report::PendingOut {
                        explanation: format!("{workload} waits: {message}."),
                        workload,
                        cluster_queue: cq,
                        reason: gpuquota_model::budget::BUDGET_EXHAUSTED.into(),
                        message,
                    });
                }
                report.pending.sort_by(|x, y| x.workload.cmp(&y.workload));
            }
            // decision warnings (a preempt/readmit loop): stderr, and in the report itself;
            // under --strict they fail the command before anything is printed on stdout
            if crate::common::print_diagnostics(&report.warnings) {
                return Ok(ExitCode::from(1));
            }
            match output {
                OutputFormat::Json => print!("{}", to_json(&report)?),
                OutputFormat::Table => print!("{}", schedule_table(&report)),
                other => {
                    return Err(CliError(format!(
                        "kueue schedule: --output {other:?} is not supported (json, table)"
                    )));
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        KueueCommand::Shares { files, output } => {
            let model = match import(&files)? {
                Ok(m) => m,
                Err(code) => return Ok(code),
            };
            let report = match gpuquota_fairshare::shares::kueue_shares(&model) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("error: {e}");
                    return Ok(ExitCode::from(1));
                }
            };
            match output {
                OutputFormat::Json => print!("{}", to_json(&report)?),
                OutputFormat::Table => print!("{}", shares_table(&report)),
                other => {
                    return Err(CliError(format!(
                        "kueue shares: --output {other:?} is not supported (json, table)"
                    )));
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        KueueCommand::Quotas { files, output } => {
            let world = match load(&files)? {
                Ok(w) => w,
                Err(code) => return Ok(code),
            };
            let report = gpuquota_cohort::quotas(&world);
            match output {
                OutputFormat::Json => print!("{}", to_json(&report)?),
                OutputFormat::Table => print!("{}", quotas_table(&report)),
                other => {
                    return Err(CliError(format!(
                        "kueue quotas: --output {other:?} is not supported (json, table)"
                    )));
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn shares_table(r: &gpuquota_fairshare::shares::SharesReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<12} {:<36} {:>10}  DOMINANT",
        "KIND", "NAME", "SHARE"
    );
    let rows = r
        .cluster_queues
        .iter()
        .map(|(n, s)| ("ClusterQueue", n, s))
        .chain(r.cohorts.iter().map(|(n, s)| ("Cohort", n, s)));
    for (kind, name, s) in rows {
        let (share, dom) = match s {
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
        let _ = writeln!(
            out,
            "{:<12} {:<36} {:>10}  {}",
            kind,
            cut(name, 36),
            share,
            cut(&dom, 18)
        );
    }
    out
}

fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_owned()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('~');
        t
    }
}

/// Splits `s` into lines of at most `width` characters at spaces.
fn wrap(s: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut cur = String::new();
    for word in s.split(' ') {
        if !cur.is_empty() && cur.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

/// The schedule as 80-column text.
pub(crate) fn schedule_table(r: &ScheduleReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "cycles: {}", r.cycles);
    let _ = writeln!(out, "\nadmitted ({}):", r.admitted.len());
    for a in &r.admitted {
        let flavors: Vec<String> = a
            .pod_sets
            .iter()
            .map(|p| {
                let f: Vec<String> = p.flavors.iter().map(|(k, v)| format!("{k}={v}")).collect();
                format!("{}x{} {}", p.name, p.count, f.join(","))
            })
            .collect();
        let _ = writeln!(
            out,
            "  c{:<3} {:<28} {:<14} {}",
            a.cycle,
            cut(&a.workload, 28),
            cut(&a.cluster_queue, 14),
            cut(&flavors.join("; "), 29)
        );
    }
    let _ = writeln!(out, "\npreempted ({}):", r.preempted.len());
    for p in &r.preempted {
        let _ = writeln!(
            out,
            "  c{:<3} {:<26} by {:<24} {}",
            p.cycle,
            cut(&p.workload, 26),
            cut(&p.preemptor, 24),
            cut(&p.reason, 18)
        );
    }
    let _ = writeln!(out, "\npending ({}):", r.pending.len());
    for p in &r.pending {
        let _ = writeln!(
            out,
            "  {:<30} {:<14} {}",
            cut(&p.workload, 30),
            cut(&p.cluster_queue, 14),
            cut(&p.reason, 30)
        );
        for line in wrap(&p.explanation, 74) {
            let _ = writeln!(out, "    {line}");
        }
    }
    // only when there is one, so tables of runs without warnings stay as they were
    if !r.warnings.is_empty() {
        let _ = writeln!(out, "\nwarnings ({}):", r.warnings.len());
        for w in &r.warnings {
            let _ = writeln!(out, "  {}", w.code);
            for line in wrap(&w.message, 74) {
                let _ = writeln!(out, "    {line}");
            }
        }
    }
    out
}

fn quotas_table(r: &gpuquota_cohort::QuotasReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<16} {:<18} {:<14} {:>6} {:>6} {:>6} {:>6}",
        "ClusterQueue", "flavor", "resource", "nom", "usage", "avail", "max"
    );
    for (cq, flavors) in &r.cluster_queues {
        for (f, res) in flavors {
            for (rn, q) in res {
                let _ = writeln!(
                    out,
                    "{:<16} {:<18} {:<14} {:>6} {:>6} {:>6} {:>6}",
                    cut(cq, 16),
                    cut(f, 18),
                    cut(rn, 14),
                    cut(&q.nominal, 6),
                    cut(&q.usage, 6),
                    cut(&q.available, 6),
                    cut(&q.potential_available, 6)
                );
            }
        }
    }
    let _ = writeln!(
        out,
        "\n{:<16} {:<18} {:<14} {:>6} {:>8} {:>6}",
        "Cohort", "flavor", "resource", "nom", "subtree", "usage"
    );
    for (co, flavors) in &r.cohorts {
        for (f, res) in flavors {
            for (rn, q) in res {
                let _ = writeln!(
                    out,
                    "{:<16} {:<18} {:<14} {:>6} {:>8} {:>6}",
                    cut(co, 16),
                    cut(f, 18),
                    cut(rn, 14),
                    cut(&q.nominal, 6),
                    cut(&q.subtree_quota, 8),
                    cut(&q.usage, 6)
                );
            }
        }
    }
    out
}

/// The seed section: the seed platform's day scheduled by Kueue's rules.
#[allow(dead_code)] // superseded in the default run by the simulated month (gpuquota_sim::seed)
pub(crate) fn seed_section() -> Result<String, CliError> {
    let mut importer = gpuquota_model::Importer::new();
    importer.add_str("kueue.yaml", crate::seed::KUEUE_YAML);
    importer.add_str("kueue-workloads.yaml", crate::seed::KUEUE_WORKLOADS_YAML);
    let imported = importer.finish()?;
    let world = World::build(&imported.model).map_err(|e| CliError(e.to_string()))?;
    // The day in two steps: everything but the last arrival (the 02:00 fine-tuning job),
    // then that arrival.
    let mut s = gpuquota_cohort::Scheduler::new(&world);
    let last = world
        .workloads
        .iter()
        .filter(|w| w.admitted.is_none())
        .map(|w| w.created)
        .max();
    let late: Vec<u32> = (0..world.workloads.len() as u32)
        .filter(|&i| {
            let w = &world.workloads[i as usize];
            w.admitted.is_none() && Some(w.created) == last
        })
        .collect();
    for &i in &late {
        s.withhold(i);
    }
    s.run(None);
    for &i in &late {
        s.arrive(i);
    }
    s.run(None);
    let r = ScheduleReport::from_scheduler(&world, &s);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} cycle(s); {} admissions, {} preemptions, {} pending at the end",
        r.cycles,
        s.admitted.len(),
        r.preempted.len(),
        r.pending.len()
    );
    for a in &s.admitted {
        let w = &world.workloads[a.wl as usize];
        let flavors: Vec<String> = a
            .pod_sets
            .iter()
            .flat_map(|p| p.2.values().cloned())
            .collect();
        let _ = writeln!(
            out,
            "  c{:<2} admitted  {:<28} {:<12} {}{}",
            a.cycle,
            cut(&w.key, 28),
            cut(&world.cluster_queues[a.cq as usize].name, 12),
            cut(&flavors.join(","), 17),
            if a.borrowing > 0 { " borrows" } else { "" }
        );
    }
    for p in &r.preempted {
        let _ = writeln!(
            out,
            "  c{:<2} preempted {:<26} for {:<12} {}",
            p.cycle,
            cut(&p.workload, 26),
            cut(p.preemptor.rsplit('/').next().unwrap_or(""), 12),
            cut(&p.reason, 19)
        );
    }
    for p in &r.pending {
        let _ = writeln!(
            out,
            "      pending   {:<28} {}",
            cut(&p.workload, 28),
            cut(&p.reason, 28)
        );
        for line in wrap(&p.explanation, 62) {
            let _ = writeln!(out, "                {line}");
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_section_tells_the_day_in_80_columns() {
        let text = seed_section().unwrap();
        for line in text.lines() {
            assert!(line.chars().count() <= 80, "too wide: {line}");
        }
        // batch borrows data science's idle H200s at night ...
        assert!(
            text.contains("admitted  analytics/batch-nightly-01   batch        h200-nvl borrows")
        );
        // ... and the 02:00 fine-tuning job reclaims them
        assert_eq!(
            text.lines()
                .filter(|l| l.contains("preempted analytics/batch-nightly-"))
                .count(),
            8
        );
        assert!(text.contains("for fine-tuning  InCohortReclamation"));
        assert!(text.contains("admitted  data-science/fine-tuning     data-science h200-nvl\n"));
    }

    #[test]
    fn schedule_json_contract() {
        let yaml = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: on-demand}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors: [{name: on-demand, resources: [{name: cpu, nominalQuota: 6}]}]\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq, namespace: ns}\nspec: {clusterQueue: cq}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w, namespace: ns}\nspec:\n  queueName: lq\n  podSets:\n  - name: main\n    count: 3\n    template: {spec: {containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]}}\n";
        let model = gpuquota_model::import_str("t.yaml", yaml).unwrap().model;
        let world = World::build(&model).unwrap();
        let json = to_json(&gpuquota_cohort::schedule(&world, None)).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "cycles": 1,
                "admitted": [{"workload": "ns/w", "clusterQueue": "cq", "cycle": 1,
                              "podSets": [{"name": "main", "count": 3, "flavors": {"cpu": "on-demand"}}]}],
                "preempted": [],
                "pending": []
            })
        );
        let q = serde_json::to_value(gpuquota_cohort::quotas(&world)).unwrap();
        assert_eq!(
            q["clusterQueues"]["cq"]["on-demand"]["cpu"],
            serde_json::json!({"nominal": "6", "borrowingLimit": null, "lendingLimit": null,
                               "usage": "0", "available": "6", "potentialAvailable": "6"})
        );
    }
}
