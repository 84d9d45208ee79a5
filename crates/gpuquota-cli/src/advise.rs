//! `gpuquota advise`: the advisor (the method, metrics and output are documented in
//! `gpuquota::advise`).

use std::path::PathBuf;

use gpuquota::advise;

use crate::common::{CliError, print_diagnostics, strict};

/// `--output` of `advise`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum AdviceOutput {
    /// The front, the recommendation and the binding constraint as text.
    Table,
    /// The whole advice (`gpuquota schema advice`).
    Json,
    /// One CSV row per configuration shown.
    Csv,
}

/// `gpuquota advise` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  gpuquota --out seed && gpuquota advise seed/advice.yaml --explain    the seed month's advice
  gpuquota advise seed/advice.yaml --patch-out recommended.yaml --diff    the patch and the what-if
  gpuquota advise seed/advice.yaml --report advice.html       the advice as one HTML page")]
pub(crate) struct AdviseArgs {
    /// The `Advice` file (its `spec.scenario` is read relative to it).
    file: PathBuf,
    /// Output format [default: table on a terminal, json otherwise].
    #[arg(short, long, value_enum)]
    output: Option<AdviceOutput>,
    /// With the table: which knob moved which figure, one at a time around the
    /// recommendation.
    #[arg(long)]
    explain: bool,
    /// Write the recommendation as YAML (the changed ClusterQueues and Nodes) to this file.
    #[arg(long, value_name = "FILE")]
    patch_out: Option<PathBuf>,
    /// Also print `sim diff` of the scenario as written against the recommendation (table,
    /// on stdout after the advice).
    #[arg(long)]
    diff: bool,
    /// Write the `sim diff` plot of current against recommended (SVG) to this file.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Write the advice as one self-contained HTML page (the front, the recommendation and
    /// why, and the scenario as written against the recommendation).
    #[arg(long, value_name = "FILE.html")]
    report: Option<PathBuf>,
    /// Replace files --patch-out, --plot and --report would overwrite.
    #[arg(long)]
    force: bool,
    /// Simulate every configuration instead of decomposing the grid (the reference).
    #[arg(long)]
    exhaustive: bool,
    /// Worker threads (default: all cores, or RAYON_NUM_THREADS).
    #[arg(short, long, value_name = "N", value_parser = gpuquota::sim::sweep::parse_threads)]
    jobs: Option<usize>,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
    /// Simulate only slice I (0-based) of N of the search's simulations and print them as
    /// JSON (`gpuquota schema advice-shard`), for --merge.
    #[arg(long, value_name = "I/N", value_parser = gpuquota::sim::sweep::parse_shard,
          conflicts_with_all = ["merge", "explain", "patch_out", "diff", "plot", "report"])]
    shard: Option<(usize, usize)>,
    /// Make the advice from every shard's JSON instead of simulating (the output of the
    /// unsharded run, byte for byte).
    #[arg(long, value_name = "SHARD.json", num_args = 1..)]
    merge: Vec<PathBuf>,
    /// Instead of running, print a Kubernetes Indexed Job with this many shards (pods), the
    /// ConfigMap holding the advice and its scenario's files, and how to merge the shards.
    #[arg(long, value_name = "N", value_parser = gpuquota::sim::sweep::parse_shard_count,
          conflicts_with_all = ["shard", "merge"])]
    emit_job: Option<usize>,
    /// The emitted Job's LocalQueue (`kueue.x-k8s.io/queue-name`).
    #[arg(long, default_value = "default")]
    queue: String,
    /// The emitted Job's namespace.
    #[arg(long, default_value = "default")]
    namespace: String,
    /// The emitted Job's container image (it must hold the `gpuquota` binary).
    #[arg(long, default_value = "ghcr.io/gpuquota/gpuquota:latest")]
    image: String,
}

pub(crate) fn run(a: AdviseArgs) -> Result<(), CliError> {
    // refuse before any work: an existing file without --force, a link, a non-file
    for path in [&a.patch_out, &a.plot, &a.report].into_iter().flatten() {
        gpuquota::model::write::check_target(path, a.force)?;
    }
    let (name, text, dir, _) = crate::sweep::read_scenario(&a.file)?;
    let scenario_rel = serde_saphyr::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v["spec"]["scenario"].as_str().map(str::to_owned));
    let Some(scenario_rel) = scenario_rel else {
        // the parser names what is wrong
        return Err(match advise::parse(&name, &text, &|_| Vec::new()) {
            Err(d) => CliError::diagnostics(d.iter()),
            Ok(_) => CliError::input([format!("{name}: spec.scenario: missing")]),
        });
    };
    let scenario_path = dir.join(&scenario_rel);
    let (sname, stext, sdir, stem) = crate::sweep::read_scenario(&scenario_path)?;
    let read = move |rel: &str| {
        let p = sdir.join(rel);
        let shown = gpuquota::model::source::display_name(&p);
        gpuquota::model::source::read_text(&p).map(|t| (shown, t))
    };
    let prepared =
        advise::prepare(&sname, &stext, &stem, &read).map_err(|d| CliError::load(d.iter()))?;
    let plan = match advise::parse(&name, &text, &|p| advise::split_queues(&prepared.model, p)) {
        Ok(p) => p,
        Err(d) => return Err(CliError::diagnostics(d.iter())),
    };
    if print_diagnostics(plan.warnings.iter()) && strict() {
        return Err(CliError::exit(1));
    }
    let fingerprint = advise::shard::fingerprint(&text, &stext, &prepared);
    if let Some(n) = a.emit_job {
        return match gpuquota::sim::sweep::scenario_files(&sname, &stext, &stem, &[], &read) {
            Ok(files) => emit_job(&a, &text, (&scenario_rel, &stext), &files, n),
            Err(d) => Err(CliError::diagnostics(d.iter())),
        };
    }
    let bar = crate::sweep::progress_bar(a.quiet);
    let tick = |n: usize, total: usize| {
        bar.set_length(total as u64);
        bar.set_position(n as u64);
    };
    let opts = advise::Options {
        threads: a.jobs,
        progress: Some(&tick),
        exhaustive: a.exhaustive,
    };
    if let Some(shard) = a.shard {
        let result = advise::shard::run(&plan, &prepared, &opts, fingerprint, shard);
        bar.finish_and_clear();
        return match result {
            Ok(s) => {
                print!("{}", s.to_json_string());
                Ok(())
            }
            Err(d) => Err(CliError::load(d.iter())),
        };
    }
    let result = if a.merge.is_empty() {
        advise::advise(&plan, &prepared, &opts)
    } else {
        let mut shards = Vec::new();
        for f in &a.merge {
            let t = crate::common::read_file(f)?;
            let s = advise::shard::Shard::from_json(&t)
                .map_err(|m| CliError::usage(format!("{}: {m}", f.display())))?;
            shards.push((gpuquota::model::source::display_name(f), s));
        }
        advise::shard::merge(&plan, &prepared, &fingerprint, shards)
    };
    bar.finish_and_clear();
    let advice = result.map_err(|d| CliError::load(d.iter()))?;
    let format = crate::common::output_or(a.output, AdviceOutput::Table, AdviceOutput::Json);
    let mut out = match format {
        AdviceOutput::Table => advice.to_table(a.explain, crate::common::table_width()),
        AdviceOutput::Json => advice.to_json_string(),
        AdviceOutput::Csv => advice.to_csv(),
    };
    if let (Some(p), None) = (&a.report, &advice.recommended) {
        // nothing to compare against: the page shows the closest configurations
        let html = gpuquota::report::advise(&advice, None).map_err(CliError::usage)?;
        gpuquota::model::write::file(p, html.as_bytes(), a.force)?;
    }
    let page_with_what_if = a.report.is_some() && advice.recommended.is_some();
    if a.patch_out.is_some() || a.diff || a.plot.is_some() || page_with_what_if {
        let Some(settings) = advice.chosen_settings(&plan) else {
            return Err(CliError::usage("no configuration to recommend"));
        };
        let Some(scenario) = &prepared.scenario else {
            return Err(CliError::usage(
                "--patch-out, --diff, --plot and --report compare Kueue or ResourceQuota runs; for a KAI scenario the advice is its table, JSON or CSV",
            ));
        };
        let chosen = prepared
            .evaluator
            .run(&settings)
            .map_err(|d| CliError::diagnostics(d.iter()))?;
        if let Some(p) = &a.patch_out {
            let yaml = advise::output::patch_yaml(scenario, &chosen.0, &settings)
                .map_err(CliError::usage)?;
            gpuquota::model::write::file(p, yaml.as_bytes(), a.force)?;
        }
        if a.diff || a.plot.is_some() || page_with_what_if {
            let current = prepared
                .evaluator
                .run(&[])
                .map_err(|d| CliError::diagnostics(d.iter()))?;
            if a.diff {
                let d = gpuquota::sim::diff::diff(&current.0, &current.1, &chosen.0, &chosen.1);
                out.push_str("\ncurrent (A) against recommended (B):\n");
                out.push_str(&gpuquota::sim::diff::table(&d));
            }
            if let Some(p) = &a.plot {
                let svg = gpuquota::sim::diff::svg(&current.0, &current.1, &chosen.0, &chosen.1)
                    .map_err(CliError::usage)?;
                gpuquota::model::write::file(p, svg.as_bytes(), a.force)?;
            }
            if let Some(p) = a.report.as_ref().filter(|_| page_with_what_if) {
                let html = gpuquota::report::advise(
                    &advice,
                    Some((&current.0, &current.1, &chosen.0, &chosen.1)),
                )
                .map_err(CliError::usage)?;
                gpuquota::model::write::file(p, html.as_bytes(), a.force)?;
            }
        }
    }
    print!("{out}");
    Ok(())
}

/// `--emit-job N`: the ConfigMap and the Indexed Job (`gpuquota::advise::shard::manifests`).
fn emit_job(
    a: &AdviseArgs,
    text: &str,
    scenario: (&str, &str),
    files: &[(String, String)],
    shards: usize,
) -> Result<(), CliError> {
    let stem = a.file.file_stem().map(|s| s.to_string_lossy().into_owned());
    let file = a.file.file_name().map(|s| s.to_string_lossy().into_owned());
    let yaml = advise::shard::manifests(
        &gpuquota::sim::sweep::JobRequest {
            name: &crate::sweep::job_name("advise", &stem.unwrap_or_default()),
            namespace: &a.namespace,
            queue: &a.queue,
            image: &a.image,
            scenario: ("", ""),
            files: &[],
            axes: &[],
            shards,
        },
        &advise::shard::JobFiles {
            advice: (&file.unwrap_or_default(), text),
            scenario,
            files,
        },
        a.exhaustive,
    )
    .map_err(CliError::usage)?;
    print!("{yaml}");
    Ok(())
}
