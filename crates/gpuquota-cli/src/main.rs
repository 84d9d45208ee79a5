//! The `gpuquota` command.
//!
//! With no arguments it loads the built-in seed platform and prints what every engine decides
//! for it. Subcommands read Kubernetes manifests (YAML or JSON, several documents per file).
#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[allow(dead_code)] // helpers are used as the engine subcommands land
mod common;
mod kai;
mod kueue;
mod meter;
mod mig;
mod quotas;
mod seed;
mod sim;
mod validate;

/// Deterministic quota scheduling for shared GPU platforms.
#[derive(Debug, Parser)]
#[command(name = "gpuquota", version, about, long_about = None)]
struct Cli {
    /// Treat every warning (unknown fields and kinds, tolerated states, decision warnings)
    /// as an error: print it as one and exit 1.
    #[arg(long, global = true)]
    strict: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    // Engine subcommands are added here, one variant per engine, dispatched in `main`.
    /// KAI Scheduler / Run:ai: fair shares and scheduling sessions (deserved quota, over-quota
    /// weight, rank, limit, reclaim, preempt, consolidation, stale gangs).
    Kai {
        #[command(subcommand)]
        command: kai::KaiCommand,
    },
    /// MIG: the profile catalogue, layout validation, the layout planner, mig-parted export.
    Mig {
        #[command(subcommand)]
        command: mig::MigCommand,
    },
    /// Metering: GPU-hours per department and card type, showback and chargeback.
    Meter(meter::MeterArgs),
    /// Validate manifests as upstream's API server and webhooks would; print every problem.
    Validate(validate::ValidateArgs),
    /// The quota picture: per cohort tree and KAI queue tree, what each node owns, reserves,
    /// lends and can use at most.
    Quotas(quotas::QuotasArgs),
    /// Kueue: schedule workloads (admissions, preemptions, why each waits) and show quotas.
    Kueue {
        #[command(subcommand)]
        command: kueue::KueueCommand,
    },
    /// Simulate a scenario in virtual time: arrivals, admissions, preemptions, completions.
    Sim(sim::SimArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    common::set_strict(cli.strict);
    let result = match cli.command {
        None => seed::run(),
        Some(Command::Kai { command }) => kai::run(command),
        Some(Command::Mig { command }) => mig::run(command),
        Some(Command::Meter(args)) => meter::run(args),
        Some(Command::Validate(args)) => validate::run(args),
        Some(Command::Quotas(args)) => quotas::run(args),
        Some(Command::Kueue { command }) => kueue::run(command),
        Some(Command::Sim(args)) => sim::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::from(2)
        }
    }
}
