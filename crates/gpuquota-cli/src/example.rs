//! `gpuquota example`: a commented sample of every input format the commands read.
//!
//! Each sample is a file under `samples/` that the commands it names run unchanged
//! (`tests/examples.rs` runs every one through the binary under `--strict`).

use std::process::ExitCode;

use crate::common::CliError;

/// One sample input.
#[derive(Debug)]
pub(crate) struct Sample {
    /// What `gpuquota example NAME` takes; the sample is meant to be saved as `NAME.yaml`.
    pub(crate) name: &'static str,
    /// The format, in a few words.
    pub(crate) about: &'static str,
    /// Command lines that run the sample as saved (`NAME.yaml` next to the other samples).
    pub(crate) commands: &'static [&'static str],
    /// The file.
    pub(crate) text: &'static str,
}

/// Every sample, in the order `gpuquota example` lists them.
pub(crate) const SAMPLES: &[Sample] = &[
    Sample {
        name: "kueue",
        about: "Kueue platform: ResourceFlavors, Cohorts, ClusterQueues, LocalQueues, Workloads",
        commands: &[
            "gpuquota validate kueue.yaml",
            "gpuquota quotas kueue.yaml",
            "gpuquota kueue schedule kueue.yaml",
            "gpuquota kueue quotas kueue.yaml",
            "gpuquota kueue shares kueue.yaml",
        ],
        text: include_str!("../samples/kueue.yaml"),
    },
    Sample {
        name: "kai",
        about: "KAI Scheduler / Run:ai platform: Queues, PodGroups, Pods, Nodes",
        commands: &[
            "gpuquota validate kai.yaml",
            "gpuquota quotas kai.yaml",
            "gpuquota kai fairshare kai.yaml",
            "gpuquota kai schedule kai.yaml",
        ],
        text: include_str!("../samples/kai.yaml"),
    },
    Sample {
        name: "kai-usage",
        about: "historical usage for KAI's time-based fairshare (with the kai sample)",
        commands: &[
            "gpuquota kai fairshare kai.yaml --usage kai-usage.yaml",
            "gpuquota kai schedule kai.yaml --usage kai-usage.yaml",
        ],
        text: include_str!("../samples/kai-usage.yaml"),
    },
    Sample {
        name: "mig-plan",
        about: "MIG planning request: GPUs with their current layouts, the demand",
        commands: &[
            "gpuquota mig validate mig-plan.yaml",
            "gpuquota mig plan mig-plan.yaml",
            "gpuquota mig export mig-plan.yaml",
        ],
        text: include_str!("../samples/mig-plan.yaml"),
    },
    Sample {
        name: "meter",
        about: "metering document: window, prices, departments, allocation records",
        commands: &["gpuquota meter meter.yaml"],
        text: include_str!("../samples/meter.yaml"),
    },
    Sample {
        name: "sim",
        about: "simulation scenario: the kueue sample through two days of virtual time",
        commands: &[
            "gpuquota sim sim.yaml",
            "gpuquota sim sim.yaml --output table",
        ],
        text: include_str!("../samples/sim.yaml"),
    },
    Sample {
        name: "budget",
        about: "GPU-hour budgets (Budget): per queue or namespaces, per period, when spent",
        commands: &[
            "gpuquota validate kueue.yaml budget.yaml",
            "gpuquota meter meter.yaml --output openmetrics --budgets budget.yaml",
        ],
        text: include_str!("../samples/budget.yaml"),
    },
];

/// Arguments of `gpuquota example`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  gpuquota example                          list the samples and the commands that read them
  gpuquota example kueue > kueue.yaml       save one
  gpuquota kueue schedule kueue.yaml        and run it")]
pub(crate) struct ExampleArgs {
    /// The sample to print; `list` (the default) lists them all.
    #[arg(value_name = "LIST|NAME", default_value = "list", value_parser = names())]
    name: String,
}

/// `list` and every sample's name, for the argument's possible values.
fn names() -> clap::builder::PossibleValuesParser {
    let mut values = vec![clap::builder::PossibleValue::new("list").help("list the samples")];
    values.extend(
        SAMPLES
            .iter()
            .map(|s| clap::builder::PossibleValue::new(s.name).help(s.about)),
    );
    clap::builder::PossibleValuesParser::new(values)
}

/// The text `gpuquota example list` prints.
pub(crate) fn list() -> String {
    let width = SAMPLES.iter().map(|s| s.name.len()).max().unwrap_or(0);
    let mut out = String::from(
        "Sample inputs; save one with `gpuquota example NAME > NAME.yaml`, then run it:\n",
    );
    for s in SAMPLES {
        out.push_str(&format!("\n  {:width$}  {}\n", s.name, s.about));
        for c in s.commands {
            out.push_str(&format!("  {:width$}    {c}\n", ""));
        }
    }
    out
}

pub(crate) fn run(args: ExampleArgs) -> Result<ExitCode, CliError> {
    let text = match SAMPLES.iter().find(|s| s.name == args.name) {
        Some(sample) => sample.text.to_string(),
        None => list(),
    };
    crate::common::write_stdout(text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_commands_name_their_sample() {
        let mut names: Vec<&str> = SAMPLES.iter().map(|s| s.name).collect();
        names.push("list");
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count);
        for s in SAMPLES {
            assert!(!s.commands.is_empty(), "{}", s.name);
            for c in s.commands {
                assert!(c.starts_with("gpuquota "), "{c}");
                assert!(c.contains(&format!("{}.yaml", s.name)), "{c}");
            }
        }
    }

    #[test]
    fn every_sample_opens_with_a_comment_naming_its_commands() {
        for s in SAMPLES {
            assert!(s.text.starts_with("# "), "{}", s.name);
            let command = s.commands[0].split_whitespace().nth(1).unwrap();
            let header: String = s.text.lines().take_while(|l| l.starts_with('#')).collect();
            assert!(header.contains(command), "{}: {header}", s.name);
        }
    }

    #[test]
    fn list_names_every_sample_and_command() {
        let text = list();
        let width = SAMPLES.iter().map(|s| s.name.len()).max().unwrap();
        for s in SAMPLES {
            assert!(
                text.contains(&format!("  {:width$}  {}\n", s.name, s.about)),
                "{text}"
            );
            for c in s.commands {
                assert!(text.contains(&format!("{c}\n")), "{text}");
            }
        }
    }
}
