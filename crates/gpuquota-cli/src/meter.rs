//! `gpuquota meter FILE`: GPU-hours per department and card type, showback and chargeback.
//!
//! FILE is YAML (or JSON) as described in issue 7 and in `gpuquota_metering::input`. `dcgm:`
//! entries are paths of Prometheus text exposition files, relative to FILE's directory.
//! Unknown fields are reported on stderr; invalid input is reported on stderr with exit code 1.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use gpuquota_metering::{
    CardType, Config, Currency, Department, Document, IdleMode, Input, Owner, QuotaStep, Record,
    Shape, Window, meter, money::L,
};

use crate::common::{CliError, OutputFormat, read_file};

/// Arguments of `gpuquota meter`.
#[derive(Debug, clap::Args)]
pub(crate) struct MeterArgs {
    /// The metering input: window, prices, departments, records, series, samples, DCGM files.
    file: PathBuf,
    /// Output format: json (the documented contract), csv or table.
    #[arg(long, value_enum, default_value = "json")]
    output: OutputFormat,
}

pub(crate) fn run(args: MeterArgs) -> Result<ExitCode, CliError> {
    if args.output == OutputFormat::Yaml {
        return Err(CliError(
            "meter prints json, csv or table, not yaml".to_owned(),
        ));
    }
    let text = read_file(&args.file)?;
    let file = args.file.display().to_string();
    let doc = match Document::from_yaml(&text) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("{file}: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    for field in &doc.unknown_fields {
        eprintln!("warning: {file}: unknown field {field} ignored");
    }
    let dir = args
        .file
        .parent()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    let mut dcgm = Vec::with_capacity(doc.dcgm.len());
    for name in &doc.dcgm {
        let path = dir.join(name);
        match std::fs::read_to_string(&path) {
            Ok(t) => dcgm.push((name.clone(), t)),
            Err(e) => {
                eprintln!("{file}: dcgm file {}: {e}", path.display());
                return Ok(ExitCode::from(1));
            }
        }
    }
    let report = match doc.into_input(&dcgm).and_then(|input| meter(&input)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{file}: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    let out = match args.output {
        OutputFormat::Json | OutputFormat::Yaml => report.to_json(),
        OutputFormat::Csv => report.to_csv(),
        OutputFormat::Table => report.to_table(),
    };
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}

const HOUR: i64 = 3600;
const DAY: i64 = 86_400;

fn whole(dept: &str, card: &str, n: u64, start: i64, end: i64) -> Record {
    Record {
        owner: Owner::Department(dept.to_owned()),
        card_type: card.to_owned(),
        shape: Shape::Whole(n),
        start,
        end: Some(end),
        holder: None,
        service: None,
    }
}

/// The seed platform's month (April 2026, 30 days) as a metering input.
///
/// List prices are configuration; the seed uses plausible cloud-like ones: H200 NVL $4.50 and
/// RTX PRO 6000 $1.60 per card-hour. The month repeats the day of `mission.md`: the assistant
/// (8 RTX) and translation (2 RTX) hold their cards all month; on weekdays 5 to 8 notebooks
/// (MIG 1g.24gb on rtx-b) run 08:00–18:00 and data science fine-tunes on 4 RTX 09:00–17:00;
/// every night batch borrows the 8 idle H200 at 20:00, its second wave is reclaimed at 02:00 by
/// data science's 8-H200 fine-tuning job, which runs until 14:00.
pub(crate) fn seed_input() -> Result<Input, CliError> {
    let start = 1_775_001_600; // 2026-04-01T00:00:00Z, a Wednesday
    let window = Window {
        start,
        end: start + 30 * DAY,
    };
    let mut config = Config::new(window, Currency::from_code("USD")?);
    config.idle = IdleMode::Weighted;
    let mut input = Input::new(config);
    let mut rtx = CardType::new("rtx-pro-6000", 1_600_000);
    rtx.model = Some("NVIDIA RTX PRO 6000 Blackwell Server Edition".to_owned());
    rtx.capacity = Some(16);
    let mut h200 = CardType::new("h200-nvl", 4_500_000);
    h200.model = Some("NVIDIA H200 NVL".to_owned());
    h200.capacity = Some(8);
    input.card_types = vec![rtx, h200];
    let quota = |pairs: &[(&str, i128)]| -> BTreeMap<String, Vec<QuotaStep>> {
        pairs
            .iter()
            .map(|(c, n)| {
                (
                    (*c).to_owned(),
                    vec![QuotaStep {
                        from: i64::MIN,
                        cards_units: n * L,
                    }],
                )
            })
            .collect()
    };
    let dept = |name: &str, ns: &str, q: BTreeMap<String, Vec<QuotaStep>>| Department {
        name: name.to_owned(),
        namespaces: vec![ns.to_owned()],
        quota: q,
    };
    input.departments = vec![
        dept(
            "platform-team",
            "platform-team",
            quota(&[("rtx-pro-6000", 8)]),
        ),
        dept(
            "customer-service",
            "customer-service",
            quota(&[("rtx-pro-6000", 2)]),
        ),
        dept(
            "data-science",
            "data-science",
            quota(&[("h200-nvl", 8), ("rtx-pro-6000", 4)]),
        ),
        // mig-1g.24gb: 8 instances = 2 RTX cards under compute-slice weights (1/4 each)
        dept("engineering", "engineering", quota(&[("rtx-pro-6000", 2)])),
        dept("analytics", "analytics", BTreeMap::new()),
    ];
    let r = &mut input.records;
    r.push(whole(
        "platform-team",
        "rtx-pro-6000",
        8,
        window.start,
        window.end,
    ));
    r.push(whole(
        "customer-service",
        "rtx-pro-6000",
        2,
        window.start,
        window.end,
    ));
    for d in 0..30 {
        let day = window.start + d * DAY;
        let weekday = (d + 2) % 7 < 5; // day 0 is a Wednesday
        if weekday {
            let notebooks = 5 + (d % 4) as u64;
            for i in 0..notebooks {
                r.push(Record {
                    owner: Owner::Namespace("engineering".to_owned()),
                    card_type: "rtx-pro-6000".to_owned(),
                    shape: Shape::Mig {
                        profile: "1g.24gb".to_owned(),
                        count: 1,
                    },
                    start: day + 8 * HOUR,
                    end: Some(day + 18 * HOUR),
                    holder: Some(format!("rtx-b/GPU-{}/{}", i / 4, i % 4)),
                    service: None,
                });
            }
            r.push(whole(
                "data-science",
                "rtx-pro-6000",
                4,
                day + 9 * HOUR,
                day + 17 * HOUR,
            ));
        }
        // fine-tuning from 02:00 to 14:00 on all 8 H200
        r.push(whole(
            "data-science",
            "h200-nvl",
            8,
            day + 2 * HOUR,
            day + 14 * HOUR,
        ));
        // batch: first wave 20:00-24:00, second wave 00:00-02:00 (reclaimed at 02:00)
        r.push(whole(
            "analytics",
            "h200-nvl",
            8,
            day + 20 * HOUR,
            day + DAY,
        ));
        if d + 1 < 30 {
            r.push(whole(
                "analytics",
                "h200-nvl",
                8,
                day + DAY,
                day + DAY + 2 * HOUR,
            ));
        }
    }
    Ok(input)
}

/// The seed section: the month as a chargeback table (idle recovered in proportion to cost).
pub(crate) fn seed_section() -> Result<String, CliError> {
    let report = meter(&seed_input()?)?;
    Ok(format!(
        "April 2026, basis allocated, idle recovered by weight.\n\
         List prices (configuration): H200 NVL $4.50/h, RTX PRO 6000 $1.60/h.\n{}",
        report.to_table()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_month_reconciles_to_the_cent() {
        let report = meter(&seed_input().unwrap()).unwrap();
        let out = report.to_output();
        // capacity: (16 × 1.60 + 8 × 4.50) × 720 h = 44 352.00, all recovered
        assert_eq!(out.totals.cost, "44352.00");
        assert_eq!(out.totals.drift, "0.00");
        let analytics = out
            .lines
            .iter()
            .find(|l| l.department == "analytics")
            .unwrap();
        // 8 cards × (4 h × 30 nights + 2 h × 29 mornings), all borrowed (quota 0)
        assert_eq!(analytics.allocated_hours, "1424.000000");
        assert_eq!(analytics.borrowed_hours, "1424.000000");
        let table = seed_section().unwrap();
        assert!(table.lines().all(|l| l.chars().count() <= 80), "{table}");
    }
}
