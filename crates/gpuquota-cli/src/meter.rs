//! `gpuquota meter FILE`: GPU-hours per department and card type, showback and chargeback.
//!
//! FILE is YAML (or JSON) as described in issue 7 and in `gpuquota::metering::input`. `dcgm:`
//! entries are paths of Prometheus text exposition files, relative to FILE's directory.
//! Unknown fields are reported on stderr with their path and a "did you mean" (an error under
//! the global `--strict`); invalid input is reported on stderr with exit code 1. The report's
//! own warnings (more cards held of a type than its capacity, overbooked MIG instances,
//! coverage gaps, …) are printed on stderr in every output format, after the file's name;
//! under `--strict` each is an error: exit 1 and nothing on stdout.
//!
//! `--output openmetrics [--budgets FILE]` writes the GPU-hours used (and each Budget's
//! hours, used and remaining) as OpenMetrics text (`gpuquota::metering::openmetrics`).
//!
//! `--prometheus URL [--start T --end T --step S --query Q --timeout S]` adds the DCGM series
//! of a live Prometheus (`gpuquota::command::prometheus`); a server that cannot be read is
//! exit status 2 with nothing on stdout.

use std::path::{Path, PathBuf};

use crate::common::CliError;

/// Arguments of `gpuquota meter`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  gpuquota meter meter.yaml -o table                 the chargeback table
  gpuquota meter meter.yaml -o csv > chargeback.csv  one row per department and card type
  gpuquota meter meter.yaml -o json --report bill.html   the JSON contract (`gpuquota schema meter`), and the bill as one HTML page")]
pub(crate) struct MeterArgs {
    /// The metering input: window, prices, departments, records, series, samples, DCGM files.
    file: PathBuf,
    /// Output format [default: table on a terminal, json otherwise].
    #[arg(short, long, value_enum)]
    output: Option<MeterOutput>,
    /// GPU-hour Budgets (manifests) whose used and remaining hours `--output openmetrics`
    /// adds, charged from this report.
    #[arg(long)]
    budgets: Option<PathBuf>,
    /// Also write the bill as one self-contained HTML page.
    #[arg(long, value_name = "FILE.html")]
    report: Option<PathBuf>,
    /// Replace the `--report` file if it exists (else refused).
    #[arg(long, requires = "report")]
    force: bool,
    /// Also read the DCGM series from this live Prometheus (http://HOST:PORT).
    #[arg(long, value_name = "URL")]
    prometheus: Option<String>,
    /// With --prometheus: the first instant asked for (RFC 3339 or unix seconds)
    /// [default: the window's start].
    #[arg(long, requires = "prometheus")]
    start: Option<String>,
    /// With --prometheus: the last instant asked for [default: the window's end].
    #[arg(long, requires = "prometheus")]
    end: Option<String>,
    /// With --prometheus: seconds between points [default: 60].
    #[arg(long, requires = "prometheus")]
    step: Option<i64>,
    /// With --prometheus: the PromQL query [default: DCGM_FI_DEV_GPU_UTIL].
    #[arg(long, requires = "prometheus")]
    query: Option<String>,
    /// With --prometheus: seconds one query may take [default: 120].
    #[arg(long, requires = "prometheus")]
    timeout: Option<u64>,
}

/// `--output` of `meter`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum MeterOutput {
    /// The JSON contract (documented in `gpuquota::metering::report`; `gpuquota schema meter`).
    Json,
    /// One row per department, card type and service, then idle and totals.
    Csv,
    /// The chargeback table.
    Table,
    /// OpenMetrics text: GPU-hours used, and with `--budgets` budget and remaining hours,
    /// per department and card type.
    Openmetrics,
}

pub(crate) fn run(args: MeterArgs) -> Result<(), CliError> {
    let output = crate::common::output_or(args.output, MeterOutput::Table, MeterOutput::Json);
    // refuse before any work: an existing file without --force, a link, a non-file
    if let Some(path) = &args.report {
        gpuquota::model::write::check_target(path, args.force)?;
    }
    let live = args.prometheus.map(|url| {
        let mut p = gpuquota::command::prometheus::PrometheusArgs::new(url);
        (p.start, p.end, p.step, p.query, p.timeout) =
            (args.start, args.end, args.step, args.query, args.timeout);
        p
    });
    let outcome = execute_with(
        &args.file,
        output,
        args.budgets.as_deref(),
        args.report.is_some(),
        live.as_ref(),
    )?;
    if outcome.code != 0 {
        return Err(CliError::with_lines(outcome.code, outcome.stderr));
    }
    for line in &outcome.stderr {
        eprintln!("{line}");
    }
    if let (Some(path), Some(html)) = (&args.report, &outcome.html) {
        gpuquota::model::write::file(path, html.as_bytes(), args.force)?;
    }
    out!("{}", outcome.stdout);
    Ok(())
}

/// What one `gpuquota meter` run prints and returns.
#[derive(Debug)]
pub(crate) struct Outcome {
    pub(crate) code: u8,
    pub(crate) stdout: String,
    pub(crate) stderr: Vec<String>,
    /// The bill as an HTML page, when asked for and the input was metered.
    pub(crate) html: Option<String>,
}

/// Reads, validates and meters FILE; input problems give exit code 1 with the error on stderr.
#[cfg(test)]
pub(crate) fn execute(path: &Path, output: MeterOutput) -> Result<Outcome, CliError> {
    execute_with(path, output, None, false, None)
}

/// As [`execute`], with the Budgets of `budgets` for `--output openmetrics`, the bill's
/// HTML page when `html`, and the DCGM series of a live Prometheus when `live`.
pub(crate) fn execute_with(
    path: &Path,
    output: MeterOutput,
    budgets: Option<&Path>,
    html: bool,
    live: Option<&gpuquota::command::prometheus::PrometheusArgs>,
) -> Result<Outcome, CliError> {
    let rules = match budgets {
        Some(b) => gpuquota::command::budgets::load_rules(b)?,
        None => Vec::new(),
    };
    let metered = match live {
        Some(p) => gpuquota::command::prometheus::meter(path, crate::common::strict(), p),
        None => gpuquota::metering::file::meter_file(path, crate::common::strict()),
    };
    let metered = match metered {
        Ok(m) => m,
        Err(refused) => {
            return Ok(Outcome {
                code: refused.code,
                stdout: String::new(),
                stderr: refused.lines,
                html: None,
            });
        }
    };
    let (report, stderr) = (metered.report, metered.warnings);
    let stdout = match output {
        MeterOutput::Json => report.to_json(),
        MeterOutput::Csv => report.to_csv(),
        MeterOutput::Table => report.table(crate::common::table_width()),
        MeterOutput::Openmetrics => {
            let json: serde_json::Value = serde_json::from_str(&report.to_json())?;
            let state = gpuquota::metering::budget::from_meter_report(rules, &json)
                .map_err(CliError::usage)?;
            gpuquota::metering::openmetrics::render(&report, &state)
        }
    };
    let html = html.then(|| gpuquota::report::meter(&report.to_output()));
    Ok(Outcome {
        code: 0,
        stdout,
        stderr,
        html,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str, files: &[(&str, &str)]) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("gpuquota-meter-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (f, text) in files {
            std::fs::write(dir.join(f), text).unwrap();
        }
        dir
    }

    const ISSUE: &str = r#"
window: {start: "2025-04-01T00:00:00Z", end: "2025-05-01T00:00:00Z"}
currency: USD
rounding: half-even
migWeights: compute-slices
basis: allocated
borrowed: informational
idle: platform
cardTypes: [{name: H200, model: NVIDIA H200 NVL, pricePerHour: "4.50", capacity: 16}]
departments: [{name: A, namespaces: [team-a], quota: {H200: 8}}, {name: B, quota: {H200: 6}}, {name: C, quota: {H200: 2}}]
records:
  - {department: A, cardType: H200, gpus: 8, start: "2025-04-01T00:00:00Z", end: "2025-04-16T00:00:00Z", holder: node-1/GPU-0}
  - {namespace: team-a, cardType: H200, gpus: 12, start: "2025-04-16T00:00:00Z", end: "2025-04-26T00:00:00Z", holder: node-1/GPU-0}
  - {department: A, cardType: H200, gpus: 4, start: "2025-04-26T00:00:00Z"}
  - {department: B, cardType: H200, gpus: 2, start: "2025-04-01T00:00:00Z"}
  - {department: C, cardType: H200, gpus: 2, start: "2025-04-01T00:00:00Z", end: "2025-04-26T00:00:00Z"}
"#;

    #[test]
    fn issue_contract_json() {
        let dir = scratch("contract", &[("m.yaml", ISSUE)]);
        let out = execute(&dir.join("m.yaml"), MeterOutput::Json).unwrap();
        assert_eq!(out.code, 0, "{:?}", out.stderr);
        assert!(out.stderr.is_empty());
        let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        assert_eq!(
            v["window"],
            serde_json::json!({"start": "2025-04-01T00:00:00Z", "end": "2025-05-01T00:00:00Z"})
        );
        assert_eq!(v["currency"], "USD");
        assert_eq!(
            v["lines"][0],
            serde_json::json!({"department": "A", "cardType": "H200",
                "allocatedHours": "6240.000000", "ownHours": "5280.000000",
                "borrowedHours": "960.000000", "quotaHours": "5760.000000",
                "chargedHours": "6240.000000", "cost": "28080.00", "idleShare": "0.00",
                "total": "28080.00", "utilization": null})
        );
        assert_eq!(
            v["idle"],
            serde_json::json!([{"cardType": "H200", "hours": "2640.000000", "cost": "11880.00"}])
        );
        assert_eq!(
            v["totals"],
            serde_json::json!({"cost": "51840.00", "exactCost": "51840.000000", "drift": "0.00"})
        );
        assert_eq!(v["warnings"], serde_json::json!([]));
        let csv = execute(&dir.join("m.yaml"), MeterOutput::Csv).unwrap();
        assert!(
            csv.stdout
                .starts_with("department,cardType,service,allocatedHours")
        );
        let table = execute(&dir.join("m.yaml"), MeterOutput::Table).unwrap();
        assert!(table.stdout.lines().all(|l| l.chars().count() <= 80));
    }

    #[test]
    fn bad_input_exits_1_naming_the_record() {
        let overlap = ISSUE.replace(
            "{department: B, cardType: H200, gpus: 2, start: \"2025-04-01T00:00:00Z\"}",
            "{department: B, cardType: H200, gpus: 2, start: \"2025-04-10T00:00:00Z\", holder: node-1/GPU-0}",
        );
        let dir = scratch(
            "bad",
            &[
                ("overlap.yaml", &overlap),
                ("typo.yaml", &format!("{ISSUE}colour: blue\n")),
                ("dcgm.yaml", &format!("{ISSUE}dcgm: [missing.prom]\n")),
                ("yaml.yaml", "window: [1, 2"),
            ],
        );
        let out = execute(&dir.join("overlap.yaml"), MeterOutput::Json).unwrap();
        assert_eq!(out.code, 1);
        assert!(out.stdout.is_empty());
        assert!(
            out.stderr[0].contains("records[3]") && out.stderr[0].contains("node-1/GPU-0"),
            "{:?}",
            out.stderr
        );
        let out = execute(&dir.join("typo.yaml"), MeterOutput::Json).unwrap();
        assert_eq!(out.code, 0);
        assert!(
            out.stderr[0].contains("unknown field colour"),
            "{:?}",
            out.stderr
        );
        // a dcgm: file that cannot be read is a file that cannot be read: exit 2 (README)
        let out = execute(&dir.join("dcgm.yaml"), MeterOutput::Json).unwrap();
        assert_eq!(out.code, 2);
        assert!(out.stderr[0].contains("missing.prom"));
        let out = execute(&dir.join("yaml.yaml"), MeterOutput::Json).unwrap();
        assert_eq!(out.code, 1);
    }

    #[test]
    fn every_problem_is_listed_with_the_file() {
        let text = "window: {start: 0, end: 3600}\n\
            cardTypes: [{name: H200, model: NVIDIA H200 NVL, pricePerHour: \"4.50\"}]\n\
            records:\n\
            \x20 - {department: A, cardType: X, gpus: 1, start: 0, end: 60}\n\
            \x20 - {department: A, cardType: H200, mig: 9g.1gb, start: 0, end: 60}\n\
            \x20 - {department: A, cardType: H200, gpus: 1, start: 90, end: 60}\n\
            series: [{department: A, cardType: H200, step: 7, values: [1]}]\n";
        let neg = "window: {start: 0, end: 3600}\n\
            cardTypes: [{name: H200, capacity: -1}]\n\
            records: [{department: A, cardType: H200, gpus: -2, start: 0}]\n";
        let dir = scratch(
            "every",
            &[("m.yaml", text), ("neg.yaml", neg), ("empty.yaml", "")],
        );
        let out = execute(&dir.join("m.yaml"), MeterOutput::Json).unwrap();
        let file = dir.join("m.yaml").display().to_string();
        assert_eq!(out.code, 1);
        assert!(out.stdout.is_empty());
        assert_eq!(
            out.stderr,
            [
                format!("error: {file}: records[0].cardType: unknown card type \"X\""),
                format!(
                    "error: {file}: records[1]: unknown MIG profile \"9g.1gb\" for card type H200"
                ),
                format!("error: {file}: records[2]: end 60 is before start 90"),
                format!("error: {file}: series[0]: step 7s does not divide the window of 3600s"),
            ]
        );
        let out = execute(&dir.join("neg.yaml"), MeterOutput::Json).unwrap();
        assert_eq!(out.code, 1);
        assert_eq!(out.stderr.len(), 2, "{:?}", out.stderr);
        assert!(out.stderr[0].contains("cardTypes[0]: invalid value: integer `-1`"));
        assert!(out.stderr[1].contains("records[0]: invalid value: integer `-2`"));
        let out = execute(&dir.join("empty.yaml"), MeterOutput::Json).unwrap();
        assert_eq!(out.code, 1);
        assert!(
            out.stderr[0]
                .ends_with("empty input: expected a mapping with window, cardTypes and records")
        );
    }
}
