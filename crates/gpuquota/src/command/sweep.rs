//! `gpuquota sim sweep` and `gpuquota sim merge`: parameter sweeps over one scenario (the
//! table and its columns are documented in [`crate::sim::sweep`]).

use std::path::{Path, PathBuf};

use crate::command::{Context, Failure, Progress};
use crate::model::Diagnostic;
use crate::sim::sweep::{self, Axis, Table};

/// A scenario named on the command line: its display name, text, directory and stem.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ScenarioFile {
    /// The name diagnostics give it.
    pub name: String,
    /// Its text.
    pub text: String,
    /// The directory the files it names are relative to.
    pub dir: PathBuf,
    /// The file name without its extension.
    pub stem: String,
}

impl ScenarioFile {
    /// Reads `file` (standard input for `-`).
    ///
    /// # Errors
    /// Exit 2 when it cannot be opened, 1 when it is not UTF-8 text or too large.
    pub fn read(file: &Path) -> Result<ScenarioFile, Failure> {
        let name = crate::model::source::display_name(file);
        // an error diagnostic: its line says `error: ` under any strictness
        let text = crate::model::source::read_text(file).map_err(|d| Failure::load([&d], false))?;
        let dir = file.parent().map(PathBuf::from).unwrap_or_default();
        let stem = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(ScenarioFile {
            name,
            text,
            dir,
            stem,
        })
    }

    /// Reads the files the scenario names, relative to its directory: display name and text.
    pub fn reader(&self) -> impl Fn(&str) -> Result<(String, String), Diagnostic> + Sync + use<> {
        let dir = self.dir.clone();
        move |rel: &str| {
            let p = dir.join(rel);
            let shown = crate::model::source::display_name(&p);
            crate::model::source::read_text(&p).map(|t| (shown, t))
        }
    }
}

/// The Kubernetes Job a sweep or the advisor emits instead of running (`--emit-job N`).
#[derive(Debug, Clone, Copy)]
pub struct Job<'a> {
    /// Shards (pods).
    pub shards: usize,
    /// The LocalQueue (`kueue.x-k8s.io/queue-name`).
    pub queue: &'a str,
    /// The namespace.
    pub namespace: &'a str,
    /// The container image (it must hold the `gpuquota` binary).
    pub image: &'a str,
}

/// What a sweep writes besides its table.
#[derive(Debug, Clone, Copy, Default)]
pub struct Written<'a> {
    /// An SVG chart of the table (`--plot`).
    pub plot: Option<&'a Path>,
    /// The table as one HTML page (`--report`).
    pub report: Option<&'a Path>,
    /// Replace the files if they exist (else refused).
    pub force: bool,
}

/// An emitted Job's name, a DNS-1123 label: `PREFIX-` and the file stem, cut to 57
/// characters so that the pods' host names (`NAME-INDEX`, up to index 99999) stay within 63.
pub fn job_name(prefix: &str, stem: &str) -> String {
    let mut name = format!("{prefix}-{}", crate::sim::trace::sanitize(stem));
    name.truncate(57);
    name.trim_end_matches('-').to_owned()
}

/// `gpuquota sim sweep --emit-job N`: the ConfigMap and the Indexed Job
/// ([`crate::sim::sweep::manifests`]) as YAML.
///
/// # Errors
/// A `--set` that does not parse (exit 2), a scenario or file that cannot be read.
pub fn emit_job(
    cx: &Context<'_>,
    file: &Path,
    sets: &[String],
    job: &Job<'_>,
) -> Result<String, Failure> {
    let axes = sweep::parse_axes(sets).map_err(Failure::usage)?;
    let s = ScenarioFile::read(file)?;
    let files = sweep::scenario_files(&s.name, &s.text, &s.stem, &axes, &s.reader())
        .map_err(|d| Failure::diagnostics(d.iter(), cx.strict))?;
    let file_name = file
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    sweep::manifests(&sweep::JobRequest {
        name: &job_name("sweep", &s.stem),
        namespace: job.namespace,
        queue: job.queue,
        image: job.image,
        scenario: (&file_name, &s.text),
        files: &files,
        axes: &axes,
        shards: job.shards,
    })
    .map_err(Failure::usage)
}

/// `gpuquota sim sweep`: every run of the cartesian product of `sets` (or of one shard),
/// `threads` workers, the table's chart and page written as asked. A summary of the runs'
/// warnings goes to standard error unless `quiet` (always under `strict`, which fails on it).
///
/// # Errors
/// A `--set` that does not parse, a file that exists without `force`, too many threads in
/// `RAYON_NUM_THREADS`, a scenario or run that fails.
#[allow(clippy::too_many_arguments)]
pub fn run(
    cx: &mut Context<'_>,
    file: &Path,
    sets: &[String],
    shard: Option<(usize, usize)>,
    threads: Option<usize>,
    written: Written<'_>,
    quiet: bool,
    progress: &dyn Progress,
) -> Result<Table, Failure> {
    let axes: Vec<Axis> = sweep::parse_axes(sets).map_err(Failure::usage)?;
    let s = ScenarioFile::read(file)?;
    // refuse before any work: an existing file without force, a link, a non-file
    for path in [written.plot, written.report].into_iter().flatten() {
        crate::model::write::check_target(path, written.force)?;
    }
    // rayon's own default reads RAYON_NUM_THREADS: held to the same limit as `-j`
    if threads.is_none()
        && let Ok(v) = std::env::var("RAYON_NUM_THREADS")
        && v.trim()
            .parse::<u128>()
            .is_ok_and(|n| n > sweep::MAX_THREADS as u128)
    {
        return Err(Failure::usage(format!(
            "RAYON_NUM_THREADS={v}: more than the limit of {} threads",
            sweep::MAX_THREADS
        )));
    }
    progress.start();
    let tick = |n: usize, total: usize| progress.tick(n, total);
    let opts = sweep::Options {
        shard,
        threads,
        progress: Some(&tick),
    };
    let result = sweep::run_with(&s.name, &s.text, &s.stem, &axes, &opts, &s.reader());
    progress.finish();
    let table = result.map_err(|d| Failure::load(d.iter(), cx.strict))?;
    let warned = table.rows.iter().filter(|r| r.warnings > 0).count();
    if warned > 0 {
        if !quiet || cx.strict {
            cx.line(&format!(
                "{}: {warned} of {} runs have warnings (`gpuquota sim FILE` with their parameters shows them)",
                if cx.strict { "error" } else { "warning" },
                table.rows.len()
            ));
        }
        if cx.strict {
            return Err(Failure::exit(1));
        }
    }
    if let Some(path) = written.plot {
        let svg = table.svg().map_err(Failure::usage)?;
        crate::model::write::file(path, svg.as_bytes(), written.force)?;
    }
    if let Some(path) = written.report {
        let html = crate::report::sweep(&table).map_err(Failure::usage)?;
        crate::model::write::file(path, html.as_bytes(), written.force)?;
    }
    Ok(table)
}

/// `gpuquota sim merge`: the shards' JSON tables joined into the unsharded table.
///
/// # Errors
/// A file that cannot be read or is not a sweep table (exit 2), shards that do not belong
/// together (exit 1).
pub fn merge(files: &[PathBuf]) -> Result<Table, Failure> {
    let mut shards = Vec::new();
    for f in files {
        let text = crate::model::source::read_text(f).map_err(Failure::read)?;
        let v: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| Failure::usage(format!("{}: {e}", f.display())))?;
        let t =
            Table::from_json(&v).map_err(|m| Failure::usage(format!("{}: {m}", f.display())))?;
        shards.push((crate::model::source::display_name(f), t));
    }
    sweep::merge_named(shards).map_err(|m| Failure::input([m]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_names_are_dns_labels_short_enough_for_their_pods() {
        assert_eq!(job_name("sweep", "sim"), "sweep-sim");
        let long = "a".repeat(80);
        let name = job_name("advise", &long);
        assert_eq!(name.len(), 57);
        assert_eq!(name, format!("advise-{}", "a".repeat(50)));
        // a cut that ends in a hyphen drops it
        let name = job_name("sweep", &format!("{}-b", "a".repeat(50)));
        assert_eq!(name, format!("sweep-{}", "a".repeat(50)));
    }
}
