//! The `gpuquota` command.
//!
//! With no arguments it loads the built-in seed platform and prints what every engine decides
//! for it. Subcommands read Kubernetes manifests (YAML or JSON, several documents per file).
//! Exit status: 0 success, 1 problems in the input (or warnings under `--strict`), 2 usage
//! (see [`AFTER_HELP`]); every error line `main` prints starts with `error: `.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::{CommandFactory as _, Parser, Subcommand};

mod advise;
#[macro_use]
mod common;
mod completions;
mod example;
mod kai;
mod kueue;
mod man;
mod meter;
mod mig;
mod quotas;
mod schema;
mod sim;
mod sweep;
mod validate;

/// The end of the root help: the no-argument run, examples, exit status (also in README.md).
const AFTER_HELP: &str = "\
Without a command, gpuquota prints what every engine decides for its built-in seed platform
(three servers, 24 GPUs, five departments): the quota picture, a month simulated under
ResourceQuota only, Kueue and KAI/Run:ai (who borrowed, was preempted, waited; the budget;
the bill) and a MIG plan, each with the commands that reproduce it. It writes no file unless
asked: `gpuquota --out DIR` writes the scenario files and plots into DIR (existing files are
refused unless --force is given).

Examples:
  gpuquota                                  the seed platform through every engine
  gpuquota --out seed                       the same, its files and plots written to seed/
  gpuquota example kueue > kueue.yaml       a commented Kueue platform to start from
  gpuquota validate kueue.yaml              every problem, naming object and field
  gpuquota kueue schedule kueue.yaml --output table
  kubectl get resourceflavors,cohorts,clusterqueues,localqueues,workloads -A -o yaml \\
    | gpuquota kueue schedule -             `-` reads standard input
  gpuquota example mig-plan > mig-plan.yaml && gpuquota mig plan mig-plan.yaml --output yaml

Exit status:
  0  success
  1  problems in the input (each printed on stderr), or warnings under --strict
  2  usage: an unknown command, flag or value, or a file that cannot be read";

/// Deterministic quota scheduling for shared GPU platforms: Kueue, KAI/Run:ai, MIG, metering.
#[derive(Debug, Parser)]
#[command(name = "gpuquota", version, long_about = None, after_help = AFTER_HELP)]
struct Cli {
    /// Treat every warning (unknown fields and kinds, tolerated states, decision warnings)
    /// as an error: print it as one and exit 1.
    #[arg(long, global = true)]
    strict: bool,
    /// Print tables at full width even on a terminal (into a pipe or file they always are).
    #[arg(long, global = true)]
    wide: bool,
    /// Say on stderr which reader took each manifest file of `validate`, `quotas`, `kueue`
    /// and `kai` and why (`import: FILE: read by the …`).
    #[arg(long, global = true)]
    verbose: bool,
    /// Without a command: also write the seed platform's scenario files and plots into this
    /// directory (created if missing). Without it the run writes no file.
    #[arg(long, value_name = "DIR")]
    out: Option<std::path::PathBuf>,
    /// Without a command, with `--out`: replace files already in DIR (else refused).
    #[arg(long, requires = "out")]
    force: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

// Help lists the commands by `display_order`, not by declaration order: inputs 10–20, engines
// 30–80 (a new one takes a free number there, e.g. 70), tooling 90+. A variant without one
// would be listed first.
#[derive(Debug, Subcommand)]
enum Command {
    // Engine subcommands are added here, one variant per engine, dispatched in `main`.
    /// KAI Scheduler / Run:ai: fair shares and scheduling sessions (deserved quota, over-quota
    /// weight, rank, limit, reclaim, preempt, consolidation, stale gangs).
    #[command(display_order = 40)]
    Kai {
        #[command(subcommand)]
        command: kai::KaiCommand,
    },
    /// MIG: the profile catalogue, layout validation, the layout planner, mig-parted export.
    #[command(display_order = 50)]
    Mig {
        #[command(subcommand)]
        command: mig::MigCommand,
    },
    /// Metering: GPU-hours per department and card type, showback and chargeback.
    #[command(display_order = 60)]
    Meter(meter::MeterArgs),
    /// Validate manifests as upstream's API server and webhooks would; print every problem.
    #[command(display_order = 10)]
    Validate(validate::ValidateArgs),
    /// The quota picture: per cohort tree and KAI queue tree, what each node owns, reserves,
    /// lends and can use at most.
    #[command(display_order = 20)]
    Quotas(quotas::QuotasArgs),
    /// Kueue: schedule workloads (admissions, preemptions, why each waits) and show quotas.
    #[command(display_order = 30)]
    Kueue {
        #[command(subcommand)]
        command: kueue::KueueCommand,
    },
    /// Simulate a scenario in virtual time: arrivals, admissions, preemptions, completions.
    #[command(display_order = 70)]
    Sim(sim::SimArgs),
    /// Recommend quotas and capacity: the Pareto front of a grid of configurations that
    /// meet each class's service level, simulated.
    #[command(display_order = 80)]
    Advise(advise::AdviseArgs),
    /// Print a commented sample of an input format, or list them with the commands they feed.
    #[command(display_order = 90)]
    Example(example::ExampleArgs),
    /// Print the JSON Schema of a command's JSON output.
    #[command(display_order = 93)]
    Schema(schema::SchemaArgs),
    /// Print the shell completion script (bash, elvish, fish, powershell, zsh).
    #[command(display_order = 91)]
    Completions(completions::CompletionsArgs),
    /// Print the manual page (roff) of gpuquota or of one of its commands.
    #[command(display_order = 92)]
    Man(man::ManArgs),
}

/// mimalloc instead of the system allocator: trace replays and big imports build and free
/// millions of small strings and maps, and glibc's malloc spent a third of their time
/// (`benches/README.md`, "Trace replay and sweeps"). Outputs do not depend on it.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    if cli.command.is_some() && (cli.out.is_some() || cli.force) {
        Cli::command()
            .error(
                clap::error::ErrorKind::ArgumentConflict,
                "--out and --force belong to the run without a command; a command's own flags follow its name",
            )
            .exit();
    }
    common::set_strict(cli.strict);
    common::set_wide(cli.wide);
    common::set_verbose(cli.verbose);
    let result = match cli.command {
        None => gpuquota::seed::run(cli.out.as_deref(), cli.force)
            .map_err(common::CliError::usage)
            .and_then(|text| common::write_stdout(text.as_bytes())),
        Some(Command::Kai { command }) => kai::run(command),
        Some(Command::Mig { command }) => mig::run(command),
        Some(Command::Meter(args)) => meter::run(args),
        Some(Command::Validate(args)) => validate::run(args),
        Some(Command::Quotas(args)) => quotas::run(args),
        Some(Command::Kueue { command }) => kueue::run(command),
        Some(Command::Sim(args)) => sim::run(args),
        Some(Command::Advise(args)) => advise::run(args),
        Some(Command::Example(args)) => example::run(args),
        Some(Command::Completions(args)) => completions::run(args),
        Some(Command::Man(args)) => man::run(args),
        Some(Command::Schema(args)) => schema::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            for line in &err.lines {
                eprintln!("{line}");
            }
            ExitCode::from(err.code)
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn command_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn root_help_orders_commands_and_documents_the_contract() {
        let help = Cli::command().render_long_help().to_string();
        let at = |name: &str| {
            help.find(&format!("\n  {name} "))
                .unwrap_or_else(|| panic!("{name} missing from\n{help}"))
        };
        let order = [
            "validate",
            "quotas",
            "kueue",
            "kai",
            "mig",
            "meter",
            "example",
            "completions",
            "man",
        ];
        for pair in order.windows(2) {
            assert!(
                at(pair[0]) < at(pair[1]),
                "{} before {}\n{help}",
                pair[0],
                pair[1]
            );
        }
        assert!(
            help.contains("Without a command, gpuquota prints"),
            "{help}"
        );
        assert!(help.contains("Exit status:\n  0  success\n  1  problems in the input"));
        assert!(
            help.trim_end().ends_with("or a file that cannot be read"),
            "{help}"
        );
    }

    #[test]
    fn every_leaf_subcommand_ends_its_help_with_examples() {
        fn walk(cmd: &clap::Command, path: &str, leaves: &mut Vec<String>) {
            let subs: Vec<&clap::Command> = cmd
                .get_subcommands()
                .filter(|c| c.get_name() != "help")
                .collect();
            if subs.is_empty() {
                let after = cmd.get_after_help().map(ToString::to_string);
                let after = after.unwrap_or_default();
                assert!(after.starts_with("Examples"), "{path}: {after:?}");
                let examples = after
                    .lines()
                    .skip(1)
                    .filter(|l| l.starts_with("  ") && l.contains("gpuquota "))
                    .count();
                assert!((2..=3).contains(&examples), "{path}: {after}");
                leaves.push(path.to_owned());
            }
            for s in subs {
                walk(s, &format!("{path} {}", s.get_name()), leaves);
            }
        }
        let mut leaves = Vec::new();
        walk(&Cli::command(), "gpuquota", &mut leaves);
        assert!(
            leaves.contains(&"gpuquota kueue schedule".to_owned()),
            "{leaves:?}"
        );
        assert!(leaves.len() >= 16, "{leaves:?}");
    }

    #[test]
    fn version_is_the_workspace_version() {
        assert_eq!(Cli::command().get_version(), Some("0.1.0"));
    }
}
