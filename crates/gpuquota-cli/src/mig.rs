//! `gpuquota mig`: the MIG catalogue, layout validation, the layout planner and mig-parted
//! export (engine crate `gpuquota-mig`).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use gpuquota_mig::{
    Catalogue, GpuSpec, InputError, InstanceSpec, Plan, PlanInstance, PlanOptions, PlanRequest,
};

use crate::common::{CliError, OutputFormat, print_diagnostics, read_file, to_json};
use gpuquota_model::diag::{Diagnostic, codes};

/// MIG subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum MigCommand {
    /// Plan MIG layouts that serve a demand: maximise weighted satisfied demand, then change
    /// as few GPUs as possible, then leave the least fragmentation.
    Plan {
        /// Planning input (YAML or JSON): mode, weights, gpus, demand.
        file: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value = "json")]
        output: OutputFormat,
        /// Work budget of the exact per-GPU programme; beyond it the exact class solver runs.
        #[arg(long, default_value_t = gpuquota_mig::DEFAULT_BUDGET)]
        budget: u64,
        /// Skip the exact solvers: the greedy local search with a certified bound only.
        #[arg(long)]
        fast: bool,
    },
    /// Check the layouts in a planning input and every named config of the mig-parted configs
    /// in it (bare or in a ConfigMap); exit 1 listing every problem.
    Validate {
        /// Planning input and/or mig-parted config (YAML or JSON, one or more documents).
        file: PathBuf,
    },
    /// Print the MIG catalogue, or the profiles of one model.
    Profiles {
        /// Catalogue model name, `nvidia.com/gpu.product` value or nvidia-smi product name.
        model: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value = "table")]
        output: OutputFormat,
    },
    /// Plan, then print the mig-parted config (one config per node) or explicit placements.
    Export {
        /// Planning input (YAML or JSON).
        file: PathBuf,
        /// Print explicit placements instead of the mig-parted config.
        #[arg(long)]
        placements: bool,
        /// Work budget of the exact per-GPU programme.
        #[arg(long, default_value_t = gpuquota_mig::DEFAULT_BUDGET)]
        budget: u64,
        /// Skip the exact solvers (as `mig plan --fast`).
        #[arg(long)]
        fast: bool,
    },
}

pub(crate) fn run(command: MigCommand) -> Result<ExitCode, CliError> {
    match command {
        MigCommand::Plan {
            file,
            output,
            budget,
            fast,
        } => {
            let (req, problem) = match load(&file)? {
                Ok(x) => x,
                Err(code) => return Ok(code),
            };
            let _ = req;
            let options = PlanOptions::default().with_budget(budget).with_fast(fast);
            let plan = gpuquota_mig::plan(&problem, &options)?;
            match output {
                OutputFormat::Json => print!("{}", to_json(&plan)?),
                OutputFormat::Yaml => print!("{}", plan.to_yaml().map_err(CliError)?),
                OutputFormat::Table => print!("{}", table(&problem, &plan)),
                OutputFormat::Csv => {
                    return Err(CliError("mig plan: --output csv is not supported".into()));
                }
                OutputFormat::Openmetrics => {
                    return Err(CliError(
                        "mig plan: --output openmetrics is not supported".into(),
                    ));
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        MigCommand::Validate { file } => validate(&file),
        MigCommand::Profiles { model, output } => profiles(model.as_deref(), output),
        MigCommand::Export {
            file,
            placements,
            budget,
            fast,
        } => {
            let (_, problem) = match load(&file)? {
                Ok(x) => x,
                Err(code) => return Ok(code),
            };
            let options = PlanOptions::default().with_budget(budget).with_fast(fast);
            let plan = gpuquota_mig::plan(&problem, &options)?;
            if placements {
                print!(
                    "{}",
                    gpuquota_mig::placements_yaml(&plan, Catalogue::builtin())
                );
            } else {
                print!("{}", gpuquota_mig::mig_parted_config(&plan));
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

type Loaded = (PlanRequest, PlanInstance<'static>);

/// Reads and validates FILE; on problems prints every one to stderr and yields exit code 1.
fn load(file: &std::path::Path) -> Result<Result<Loaded, ExitCode>, CliError> {
    let text = read_file(file)?;
    let (req, unknown) = match PlanRequest::from_yaml(&text) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("{}: {e}", file.display());
            return Ok(Err(ExitCode::from(1)));
        }
    };
    if warn(file, &unknown) {
        return Ok(Err(ExitCode::from(1)));
    }
    match req.resolve(Catalogue::builtin()) {
        Ok(problem) => Ok(Ok((req, problem))),
        Err(errors) => {
            report(file, &errors);
            Ok(Err(ExitCode::from(1)))
        }
    }
}

/// Prints unknown fields (with "did you mean") and skipped documents as warnings (errors
/// under `--strict`); true when the command must fail.
fn warn(file: &std::path::Path, unknown: &[String]) -> bool {
    let name = file.display().to_string();
    let diags: Vec<Diagnostic> = unknown
        .iter()
        .map(|u| {
            let (code, message) = if u.ends_with("; skipped") {
                (codes::UNKNOWN_KIND, u.clone())
            } else {
                (codes::UNKNOWN_FIELD, gpuquota_mig::unknown_field_message(u))
            };
            Diagnostic::warning(code, message)
                .source(name.clone())
                .engine("mig")
        })
        .collect();
    print_diagnostics(&diags)
}

/// `mig validate`: the planning input's layouts and demand, and every named mig-parted config.
fn validate(file: &std::path::Path) -> Result<ExitCode, CliError> {
    let text = read_file(file)?;
    let docs = match gpuquota_mig::read_documents(&text) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("{}: {e}", file.display());
            return Ok(ExitCode::from(1));
        }
    };
    let mut unknown = docs.unknown_fields.clone();
    unknown.extend(docs.skipped.iter().cloned());
    let mut failed = warn(file, &unknown);
    let mut lines = Vec::new();
    if !docs.configs.is_empty() {
        let (mut names, mut entries) = (0usize, 0usize);
        let mut diags = Vec::new();
        for cfg in &docs.configs {
            names += cfg.mig_configs.len();
            entries += cfg.mig_configs.values().map(Vec::len).sum::<usize>();
            for p in gpuquota_mig::validate_config(Catalogue::builtin(), cfg) {
                let d = if p.warning {
                    Diagnostic::warning(codes::UNKNOWN_FIELD, p.reason.clone())
                } else {
                    Diagnostic::error(codes::INVALID, p.reason.clone())
                };
                let field = if p.config.is_empty() {
                    "version".to_owned()
                } else {
                    format!("mig-configs.{}[{}]", p.config, p.entry)
                };
                diags.push(
                    d.source(file.display().to_string())
                        .field(field)
                        .engine("mig"),
                );
            }
        }
        failed |= print_diagnostics(&diags);
        lines.push(format!(
            "ok: {names} mig-parted configs, {entries} entries checked against the catalogue"
        ));
    }
    if let Some(mut req) = docs.request {
        req.mig_parted = docs.configs;
        match req.resolve(Catalogue::builtin()) {
            Ok(problem) => {
                let instances: usize = problem
                    .gpus
                    .iter()
                    .map(|g| g.current.as_ref().map_or(0, |l| l.instances().len()))
                    .sum();
                lines.push(format!(
                    "ok: {} GPUs, {instances} instances, {} demanded resources",
                    problem.gpus.len(),
                    problem.demand.len()
                ));
            }
            Err(errors) => {
                report(file, &errors);
                failed = true;
            }
        }
    }
    if failed {
        return Ok(ExitCode::from(1));
    }
    for l in lines {
        println!("{l}");
    }
    Ok(ExitCode::SUCCESS)
}

fn report(file: &std::path::Path, errors: &[InputError]) {
    for e in errors {
        eprintln!("{}: {e}", file.display());
    }
    eprintln!("{}: {} problem(s)", file.display(), errors.len());
}

fn profiles(model: Option<&str>, output: OutputFormat) -> Result<ExitCode, CliError> {
    let c = Catalogue::builtin();
    let models: Vec<&gpuquota_mig::GpuModel> = match model {
        Some(m) => match c.resolve(m) {
            Ok(x) => vec![x],
            Err(e) => {
                eprintln!("{e}");
                return Ok(ExitCode::from(1));
            }
        },
        None => c.models().iter().collect(),
    };
    match output {
        OutputFormat::Json | OutputFormat::Yaml => {
            let v: Vec<ModelJson<'_>> = models.iter().map(|m| model_json(m)).collect();
            match (model.is_some(), v.first()) {
                (true, Some(one)) => print!("{}", to_json(one)?),
                _ => print!("{}", to_json(&v)?),
            }
        }
        OutputFormat::Table | OutputFormat::Csv | OutputFormat::Openmetrics => {
            let mut out = String::new();
            for m in models {
                let _ = writeln!(
                    out,
                    "{}\n  {} compute slices, {} memory slices, {} placement units{}",
                    m.name(),
                    m.compute_slices(),
                    m.memory_slices(),
                    m.placement_units(),
                    if m.unconfirmed() {
                        " [unconfirmed data]"
                    } else {
                        ""
                    }
                );
                let _ = writeln!(
                    out,
                    "  {:<16} {:>4} {:>2} {:>3} {:>3}  placements",
                    "profile", "id", "g", "mem", "max"
                );
                for p in m.profiles() {
                    let pl: Vec<String> = p
                        .placements()
                        .iter()
                        .map(|x| format!("{}:{}", x.start, x.size))
                        .collect();
                    let id = p.id().map_or_else(|| "-".to_owned(), |i| i.to_string());
                    let _ = writeln!(
                        out,
                        "  {:<16} {:>4} {:>2} {:>3} {:>3}  {}{}",
                        p.name(),
                        id,
                        p.compute_slices(),
                        p.memory_slices(),
                        p.max_instances(),
                        pl.join(" "),
                        if p.unconfirmed() { " *" } else { "" }
                    );
                }
            }
            print!("{out}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One model in `mig profiles --output json` (fields in this order).
#[derive(serde::Serialize)]
struct ModelJson<'a> {
    model: &'a str,
    product_names: &'a [String],
    compute_slices: u8,
    memory_slices: u8,
    placement_units: u8,
    unconfirmed: bool,
    profiles: Vec<ProfileJson<'a>>,
}

/// One profile in `mig profiles --output json`.
#[derive(serde::Serialize)]
struct ProfileJson<'a> {
    name: &'a str,
    resource: &'a str,
    id: Option<u32>,
    compute_slices: u8,
    memory_slices: u8,
    max_instances: u8,
    placements: &'a [gpuquota_mig::Placement],
    unconfirmed: bool,
}

fn model_json(m: &gpuquota_mig::GpuModel) -> ModelJson<'_> {
    ModelJson {
        model: m.name(),
        product_names: m.product_names(),
        compute_slices: m.compute_slices(),
        memory_slices: m.memory_slices(),
        placement_units: m.placement_units(),
        unconfirmed: m.unconfirmed(),
        profiles: m
            .profiles()
            .iter()
            .map(|p| ProfileJson {
                name: p.name(),
                resource: p.resource_name(),
                id: p.id(),
                compute_slices: p.compute_slices(),
                memory_slices: p.memory_slices(),
                max_instances: p.max_instances(),
                placements: p.placements(),
                unconfirmed: p.unconfirmed(),
            })
            .collect(),
    }
}

/// A plan as an 80-column table.
fn table(problem: &PlanInstance<'_>, plan: &Plan) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "value {}  reconfigured {}  fragmentation {}  optimal {}{}",
        plan.value,
        plan.reconfigured,
        plan.fragmentation,
        if plan.optimal { "yes" } else { "no" },
        plan.bound
            .map_or_else(String::new, |b| format!("  bound {b}"))
    );
    let _ = writeln!(out, "{:<44} {:>8} {:>9}", "resource", "demand", "satisfied");
    for d in &problem.demand {
        let s = plan.satisfied.get(&d.resource).copied().unwrap_or(0);
        let _ = writeln!(out, "{:<44} {:>8} {:>9}", d.resource, d.count, s);
    }
    let _ = writeln!(
        out,
        "{:<16} {:>3} {:<7} instances (profile@start, * busy)",
        "node", "gpu", "changed"
    );
    for (k, g) in plan.gpus.iter().enumerate() {
        let mut items: Vec<String> = g
            .instances
            .iter()
            .map(|i| format!("{}@{}{}", i.profile, i.start, if i.busy { "*" } else { "" }))
            .collect();
        if !g.mig_enabled {
            let held = problem.gpus.get(k).is_some_and(|x| x.whole_busy);
            items = vec![
                if held {
                    "(MIG disabled, in use)"
                } else {
                    "(MIG disabled)"
                }
                .into(),
            ];
        } else if items.is_empty() {
            items = vec!["(none)".into()];
        }
        let mut line = format!(
            "{:<16} {:>3} {:<7}",
            g.node,
            g.index,
            if g.changed { "yes" } else { "no" }
        );
        let indent = line.len();
        let mut width = indent;
        for item in items {
            if width + 1 + item.len() > 80 && width > indent {
                let _ = writeln!(out, "{line}");
                line = " ".repeat(indent);
                width = indent;
            }
            line.push(' ');
            line.push_str(&item);
            width += 1 + item.len();
        }
        let _ = writeln!(out, "{line}");
    }
    out
}

/// The seed section: the plan for the notebooks' demand (8 × `nvidia.com/mig-1g.24gb`) on
/// node `rtx-b`, whose cards 0 and 1 run all-1g.24gb and cards 2–7 are whole GPUs (2–5 held
/// by the assistant service).
pub(crate) fn seed_section() -> Result<String, CliError> {
    let model = "NVIDIA RTX PRO 6000 Blackwell Server Edition";
    let gpus = (0..8u32)
        .map(|index| GpuSpec {
            node: "rtx-b".into(),
            index,
            model: model.into(),
            instances: (index < 2).then(|| {
                (0..4u8)
                    .map(|k| InstanceSpec {
                        profile: "1g.24gb".into(),
                        start: 3 * k,
                        busy: false,
                    })
                    .collect()
            }),
            busy: (2..6).contains(&index),
        })
        .collect();
    let req = PlanRequest {
        gpus,
        demand: vec![gpuquota_mig::DemandSpec {
            resource: Some("nvidia.com/mig-1g.24gb".into()),
            profile: None,
            count: 8,
            weight: None,
        }],
        ..PlanRequest::default()
    };
    let problem = req.resolve(Catalogue::builtin()).map_err(|errors| {
        CliError(
            errors
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; "),
        )
    })?;
    let plan = gpuquota_mig::plan(&problem, &PlanOptions::default())?;
    Ok(table(&problem, &plan))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_section_serves_all_notebooks_without_reconfiguring() {
        let out = seed_section().unwrap();
        assert!(
            out.starts_with("value 8  reconfigured 0  fragmentation 0  optimal yes\n"),
            "{out}"
        );
        assert!(out.contains("nvidia.com/mig-1g.24gb"));
        assert!(out.lines().all(|l| l.len() <= 80), "{out}");
    }

    #[test]
    fn plan_table_wraps_at_80_columns() {
        let (req, _) = PlanRequest::from_yaml(
            "gpus:\n  - {node: a-rather-long-node-name, index: 7, model: A100-40GB, instances: []}\n\
             demand:\n  - {profile: 1g.5gb, count: 7}\n",
        )
        .unwrap();
        let problem = req.resolve(Catalogue::builtin()).unwrap();
        let plan = gpuquota_mig::plan(&problem, &PlanOptions::default()).unwrap();
        assert_eq!(plan.value, 7);
        let t = table(&problem, &plan);
        assert!(t.lines().all(|l| l.len() <= 80), "{t}");
        assert_eq!(t.matches("1g.5gb@").count(), 7);
    }
}
