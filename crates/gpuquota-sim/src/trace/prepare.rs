//! Checking a `trace:` entry and reading its files.

use gpuquota_model::Diagnostic;

use super::{Format, Loaded, MAX_GENERATED_JOBS, TraceSource, load, quota, sanitize, synthetic};

/// A trace read and checked, ready to become workloads.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    pub(crate) file: String,
    pub(crate) format: Format,
    pub(crate) queue_by: Option<&'static str>,
    pub(crate) queue: Option<String>,
    pub(crate) namespace: Option<String>,
    pub(crate) milli_gpu_resource: Option<String>,
    pub(crate) loaded: Loaded,
    /// `cluster_gpu_number.csv`: display name and text.
    pub(crate) gpu_number: Option<(String, String)>,
    /// The `share:` rule.
    pub(crate) share: Option<quota::Share>,
    /// The node list: display name and text.
    pub(crate) node_list: Option<(String, String)>,
}

/// Errors of a `trace:` entry: (field, message).
type Errors = Vec<(String, String)>;

/// Why a `trace:` entry was not prepared.
#[derive(Debug)]
pub(crate) enum Failure {
    /// Its fields: (field under the entry, message).
    Fields(Errors),
    /// One of its files could not be read or loaded: the field naming the file, and the
    /// problem with the file as its source (`read-failed`, `not-utf8` … from the reader,
    /// `malformed` with the line when the trace's text is not of its format).
    File(String, Diagnostic),
}

/// Checks a `trace:` entry and reads its files; errors are messages for `field`.
///
/// Phases: the format, the trace's source ([`check_source`]), the other files
/// ([`check_files`]), `share` ([`check_share`]), the queue mapping ([`check_queue`]), then,
/// when all are valid, the files read ([`read_files`]).
pub(crate) fn prepare(
    t: &TraceSource,
    read: &crate::scenario::ReadFn<'_>,
) -> Result<Prepared, Failure> {
    let mut errs: Errors = Vec::new();
    let format = Format::parse(&t.format);
    if format.is_none() {
        errs.push((
            "format".into(),
            format!(
                "unknown trace format {:?}: expected helios, philly, alibaba-pai-2020, alibaba-2023, acme or alibaba-spot-2026",
                t.format
            ),
        ));
    }
    check_source(t, format, &mut errs);
    check_files(t, format, &mut errs);
    let share = check_share(t, &mut errs);
    let queue_by = format.and_then(|f| check_queue(t, f, &mut errs));
    if !errs.is_empty() {
        return Err(Failure::Fields(errs));
    }
    let Some(format) = format else {
        return Err(Failure::Fields(errs));
    };
    read_files(t, format, queue_by, share, read)
}

/// `file` or `generate`, one of them, and a generator's bounds.
fn check_source(t: &TraceSource, format: Option<Format>, errs: &mut Errors) {
    match (&t.generate, t.file.is_empty()) {
        (None, true) => errs.push((
            "file".into(),
            "required: the trace file (or generate)".into(),
        )),
        (Some(_), false) => errs.push((
            "generate".into(),
            "give either file or generate, not both".into(),
        )),
        (Some(g), true) => {
            if !matches!(format, Some(Format::Helios | Format::Philly) | None) {
                errs.push((
                    "generate".into(),
                    format!(
                        "no generator for the {} format: helios and philly have one",
                        t.format
                    ),
                ));
            }
            if g.jobs.is_some_and(|j| j > MAX_GENERATED_JOBS) {
                errs.push((
                    "generate.jobs".into(),
                    format!("at most {MAX_GENERATED_JOBS} jobs"),
                ));
            }
            if g.vcs == Some(0) {
                errs.push(("generate.vcs".into(), "at least 1 virtual cluster".into()));
            }
        }
        (None, false) => {}
    }
}

/// `nodeFile` and `gpuNumberFile`: only with the formats that have them.
fn check_files(t: &TraceSource, format: Option<Format>, errs: &mut Errors) {
    if t.node_file.is_some() && format.is_some_and(|f| f != Format::Alibaba2023) {
        errs.push((
            "nodeFile".into(),
            "only the alibaba-2023 format has a node list".into(),
        ));
    }
    if t.gpu_number_file.is_some() {
        if format.is_some_and(|f| f != Format::Helios) {
            errs.push((
                "gpuNumberFile".into(),
                "only the helios format has cluster_gpu_number.csv".into(),
            ));
        } else if t.queue.is_some() || t.queue_by.as_deref().is_some_and(|q| q != "vc") {
            errs.push((
                "gpuNumberFile".into(),
                "the GPUs per VC are quotas of the VCs' ClusterQueues: it needs queueBy: vc".into(),
            ));
        }
    }
}

/// The `share:` rule, its `by` and `gpus`; refused beside `gpuNumberFile`.
fn check_share(t: &TraceSource, errs: &mut Errors) -> Option<quota::Share> {
    t.share.as_ref().and_then(|sh| {
        let by = match sh.by.as_deref() {
            None => Some(quota::ShareBy::Equal),
            Some(b) => quota::ShareBy::parse(b),
        };
        if by.is_none() {
            errs.push((
                "share.by".into(),
                format!(
                    "unknown share {:?}: expected equal or demand",
                    sh.by.as_deref().unwrap_or_default()
                ),
            ));
        }
        if sh.gpus == Some(0) {
            errs.push(("share.gpus".into(), "at least 1 GPU to share".into()));
        }
        if t.gpu_number_file.is_some() {
            errs.push((
                "share".into(),
                "give either gpuNumberFile or share: both set the VCs' GPU quotas".into(),
            ));
        }
        by.map(|by| quota::Share { by, gpus: sh.gpus })
    })
}

/// The job field naming the queue (`None` with `queue`), and PAI's task table.
fn check_queue(t: &TraceSource, f: Format, errs: &mut Errors) -> Option<&'static str> {
    let mut queue_by = None;
    let fields = f.queue_fields();
    match (&t.queue_by, &t.queue) {
        (Some(_), Some(_)) => errs.push((
            "queue".into(),
            "give either queueBy or queue, not both".into(),
        )),
        (Some(q), None) => match fields.iter().find(|x| **x == q.as_str()) {
            Some(x) => queue_by = Some(*x),
            None => errs.push((
                "queueBy".into(),
                format!(
                    "{:?} is not a field of the {} format: expected one of {}",
                    q,
                    t.format,
                    fields.join(", ")
                ),
            )),
        },
        (None, Some(q)) if sanitize(q).is_empty() => {
            errs.push(("queue".into(), "an empty queue name".into()))
        }
        (None, Some(_)) => {}
        (None, None) => queue_by = fields.first().copied(),
    }
    if f == Format::AlibabaPai2020 && t.task_file.is_none() {
        errs.push((
            "taskFile".into(),
            "required for alibaba-pai-2020: pai_task_table.csv".into(),
        ));
    }
    queue_by
}

/// Reads (or generates) the trace and its other files, and loads the trace.
fn read_files(
    t: &TraceSource,
    format: Format,
    queue_by: Option<&'static str>,
    share: Option<quota::Share>,
    read: &crate::scenario::ReadFn<'_>,
) -> Result<Prepared, Failure> {
    let (shown, text) = match &t.generate {
        Some(g) => {
            let (jobs, vcs, seed) = (
                g.jobs.unwrap_or(1000),
                g.vcs.unwrap_or(14),
                g.seed.unwrap_or(1),
            );
            let text = if format == Format::Helios {
                synthetic::helios(jobs, vcs, seed)
            } else {
                synthetic::philly(jobs, vcs, seed)
            };
            (format!("generated {} trace (seed {seed})", t.format), text)
        }
        None => read(&t.file).map_err(|d| Failure::File("file".to_owned(), d))?,
    };
    let node_list = match &t.node_file {
        Some(f) => Some(read(f).map_err(|d| Failure::File("nodeFile".to_owned(), d))?),
        None => None,
    };
    let gpu_number = match &t.gpu_number_file {
        Some(f) => Some(read(f).map_err(|d| Failure::File("gpuNumberFile".to_owned(), d))?),
        None => None,
    };
    let tasks = match &t.task_file {
        Some(tf) if format == Format::AlibabaPai2020 => Some(
            read(tf)
                .map_err(|d| Failure::File("taskFile".to_owned(), d))?
                .1,
        ),
        _ => None,
    };
    let loaded = load(format, &text, tasks.as_deref()).map_err(|m| {
        Failure::File(
            "file".to_owned(),
            Diagnostic::error(gpuquota_model::diag::codes::MALFORMED, m).source(shown.clone()),
        )
    })?;
    Ok(Prepared {
        file: shown,
        format,
        queue_by,
        queue: t.queue.clone(),
        namespace: t.namespace.clone(),
        milli_gpu_resource: t.milli_gpu_resource.clone().filter(|r| !r.is_empty()),
        loaded,
        gpu_number,
        share,
        node_list,
    })
}
