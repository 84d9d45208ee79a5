//! `gpuquota mig`: the MIG catalogue, layout validation, the layout planner and mig-parted
//! export (engine crate `gpuquota-mig`).

use std::path::PathBuf;

use clap::Subcommand;
use gpuquota::command::mig;
use gpuquota::mig::{Catalogue, PlanOptions};

use crate::common::{CliError, cx, output_or, table_width, to_json};

/// `--output` of `mig plan`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum PlanOutput {
    /// The plan as JSON (documented in `gpuquota::mig::plan`; `gpuquota schema mig-plan`).
    Json,
    /// The same plan as YAML.
    Yaml,
    /// Figures, demand against satisfied, and every GPU's instances.
    Table,
}

/// `--output` of `mig profiles`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ProfilesOutput {
    /// One block per model, one row per profile.
    Table,
    /// The catalogue as JSON (`gpuquota::mig::ModelReport`; `gpuquota schema mig-profiles`).
    Json,
}

/// MIG subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum MigCommand {
    /// Plan MIG layouts that serve a demand: maximise weighted satisfied demand, then change
    /// as few GPUs as possible, then leave the least fragmentation.
    #[command(after_help = "\
Examples:
  gpuquota mig plan mig-plan.yaml -o table        the layouts that serve the demand
  gpuquota mig plan mig-plan.yaml --fast -o json  greedy search with a certified bound
  gpuquota mig plan mig-plan.yaml -o yaml         the plan as YAML")]
    Plan {
        /// Planning input (YAML or JSON): mode, weights, gpus, demand.
        file: PathBuf,
        /// Output format [default: table on a terminal, json otherwise].
        #[arg(short, long, value_enum)]
        output: Option<PlanOutput>,
        /// Work budget of the exact per-GPU programme; beyond it the exact class solver runs.
        #[arg(long, default_value_t = gpuquota::mig::DEFAULT_BUDGET)]
        budget: u64,
        /// Skip the exact solvers: the greedy local search with a certified bound only.
        #[arg(long)]
        fast: bool,
    },
    /// Check the layouts in a planning input and every named config of the mig-parted configs
    /// in it (bare or in a ConfigMap); exit 1 listing every problem.
    #[command(after_help = "\
Examples:
  gpuquota mig validate mig-plan.yaml  the layouts and demand against the catalogue
  gpuquota mig export mig-plan.yaml > config.yaml && gpuquota mig validate config.yaml
      a mig-parted config, as `mig export` writes it")]
    Validate {
        /// Planning input and/or mig-parted config (YAML or JSON, one or more documents).
        file: PathBuf,
    },
    /// Print the MIG catalogue, or the profiles of one model.
    #[command(after_help = "\
Examples:
  gpuquota mig profiles                   every model's profiles
  gpuquota mig profiles A100-40GB         one model, by catalogue or product name
  gpuquota mig profiles H200-NVL -o json  as JSON (`gpuquota schema mig-profiles`)")]
    Profiles {
        /// Catalogue model name, `nvidia.com/gpu.product` value or nvidia-smi product name.
        model: Option<String>,
        /// Output format [default: table on a terminal, json otherwise].
        #[arg(short, long, value_enum)]
        output: Option<ProfilesOutput>,
    },
    /// Plan, then print the mig-parted config (one config per node) or explicit placements.
    #[command(after_help = "\
Examples:
  gpuquota mig export mig-plan.yaml > config.yaml  the mig-parted config, one per node
  gpuquota mig export mig-plan.yaml --placements   explicit placements instead")]
    Export {
        /// Planning input (YAML or JSON).
        file: PathBuf,
        /// Print explicit placements instead of the mig-parted config.
        #[arg(long)]
        placements: bool,
        /// Work budget of the exact per-GPU programme.
        #[arg(long, default_value_t = gpuquota::mig::DEFAULT_BUDGET)]
        budget: u64,
        /// Skip the exact solvers (as `mig plan --fast`).
        #[arg(long)]
        fast: bool,
    },
}

pub(crate) fn run(command: MigCommand) -> Result<(), CliError> {
    match command {
        MigCommand::Plan {
            file,
            output,
            budget,
            fast,
        } => {
            let options = PlanOptions::default().with_budget(budget).with_fast(fast);
            let input = mig::load(&mut cx(), &file, &options)?;
            let plan = gpuquota::mig::run(&input);
            match output_or(output, PlanOutput::Table, PlanOutput::Json) {
                PlanOutput::Json => out!("{}", to_json(&plan)?),
                PlanOutput::Yaml => out!("{}", plan.to_yaml().map_err(CliError::usage)?),
                PlanOutput::Table => out!(
                    "{}",
                    gpuquota::mig::plan_table(input.instance(), &plan, table_width())
                ),
            }
            Ok(())
        }
        MigCommand::Validate { file } => {
            for line in mig::validate(&mut cx(), &file)? {
                outln!("{line}");
            }
            Ok(())
        }
        MigCommand::Profiles { model, output } => profiles(model.as_deref(), output),
        MigCommand::Export {
            file,
            placements,
            budget,
            fast,
        } => {
            let options = PlanOptions::default().with_budget(budget).with_fast(fast);
            let input = mig::load(&mut cx(), &file, &options)?;
            let plan = gpuquota::mig::run(&input);
            if placements {
                out!(
                    "{}",
                    gpuquota::mig::placements_yaml(&plan, Catalogue::builtin())
                );
            } else {
                out!("{}", gpuquota::mig::mig_parted_config(&plan));
            }
            Ok(())
        }
    }
}

/// Reads and validates FILE; every problem ends the command (exit 1).
fn profiles(model: Option<&str>, output: Option<ProfilesOutput>) -> Result<(), CliError> {
    let models = mig::models(model)?;
    match output_or(output, ProfilesOutput::Table, ProfilesOutput::Json) {
        ProfilesOutput::Json => out!("{}", to_json(&mig::profiles(&models, model.is_some()))?),
        ProfilesOutput::Table => {
            out!("{}", gpuquota::mig::profiles_table(&models, table_width()));
        }
    }
    Ok(())
}
