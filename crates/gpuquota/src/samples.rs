//! A commented sample of every input format the `gpuquota` commands read (`gpuquota
//! example`), with the command lines that run it.
//!
//! Each sample is a file under the crate's `samples/` (or one of the seed platform's files,
//! [`crate::sim::seed`]) that the commands it names run unchanged (the CLI's
//! `tests/examples.rs` runs every one through the binary under `--strict`).

/// One sample input.
#[derive(Debug)]
#[non_exhaustive]
pub struct Sample {
    /// What `gpuquota example NAME` takes.
    pub name: &'static str,
    /// The name the sample is meant to be saved as (`NAME.yaml`, but for the seed platform's
    /// files, which name each other by the names the default run gives them).
    pub file: &'static str,
    /// The format, in a few words.
    pub about: &'static str,
    /// Command lines that run the sample as saved (as `file`, next to the other samples; the
    /// seed platform's next to the other seed files).
    pub commands: &'static [&'static str],
    /// The file.
    pub text: &'static str,
}

/// Every sample, in the order `gpuquota example` lists them.
pub const SAMPLES: &[Sample] = &[
    Sample {
        name: "kueue",
        file: "kueue.yaml",
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
        file: "kai.yaml",
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
        file: "kai-usage.yaml",
        about: "historical usage for KAI's time-based fairshare (with the kai sample)",
        commands: &[
            "gpuquota kai fairshare kai.yaml --usage kai-usage.yaml",
            "gpuquota kai schedule kai.yaml --usage kai-usage.yaml",
        ],
        text: include_str!("../samples/kai-usage.yaml"),
    },
    Sample {
        name: "mig-plan",
        file: "mig-plan.yaml",
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
        file: "meter.yaml",
        about: "metering document: window, prices, departments, allocation records",
        commands: &["gpuquota meter meter.yaml"],
        text: include_str!("../samples/meter.yaml"),
    },
    Sample {
        name: "sim",
        file: "sim.yaml",
        about: "simulation scenario: the kueue sample through two days of virtual time",
        commands: &[
            "gpuquota sim sim.yaml",
            "gpuquota sim sim.yaml --output table",
        ],
        text: include_str!("../samples/sim.yaml"),
    },
    Sample {
        name: "budget",
        file: "budget.yaml",
        about: "GPU-hour budgets (Budget): per queue or namespaces, per period, when spent",
        commands: &[
            "gpuquota validate kueue.yaml budget.yaml",
            "gpuquota meter meter.yaml --output openmetrics --budgets budget.yaml",
        ],
        text: include_str!("../samples/budget.yaml"),
    },
    Sample {
        name: "seed-platform",
        file: "platform.yaml",
        about: "the seed platform (the default run's): Kueue objects, ResourceQuota caps, budget",
        commands: &[
            "gpuquota validate platform.yaml",
            "gpuquota quotas platform.yaml kai-platform.yaml",
        ],
        text: crate::sim::seed::PLATFORM,
    },
    Sample {
        name: "seed-month",
        file: "month.yaml",
        about: "the seed platform's month of work as Kueue Workloads (with seed-platform)",
        commands: &["gpuquota validate platform.yaml month.yaml"],
        text: crate::sim::seed::MONTH,
    },
    Sample {
        name: "seed-resourcequota",
        file: "resourcequota.yaml",
        about: "the seed month under ResourceQuota only (reads platform.yaml, month.yaml)",
        commands: &["gpuquota sim resourcequota.yaml -o table"],
        text: crate::sim::seed::RESOURCEQUOTA,
    },
    Sample {
        name: "seed-kueue",
        file: "kueue.yaml",
        about: "the seed month under Kueue (reads platform.yaml, month.yaml)",
        commands: &["gpuquota sim kueue.yaml -o table"],
        text: crate::sim::seed::KUEUE,
    },
    Sample {
        name: "advice",
        file: "advice.yaml",
        about: "advice: the seed month's quotas that meet each class's wait at the least lost work (reads kueue.yaml)",
        commands: &["gpuquota advise advice.yaml --explain"],
        text: crate::sim::seed::ADVICE,
    },
    Sample {
        name: "seed-kueue-no-lending-limit",
        file: "kueue-no-lending-limit.yaml",
        about: "the seed month under Kueue with the assistant's lendingLimit unset (reads platform.yaml, month.yaml)",
        commands: &["gpuquota sim diff kueue.yaml kueue-no-lending-limit.yaml -o table"],
        text: crate::sim::seed::KUEUE_NO_LENDING_LIMIT,
    },
    Sample {
        name: "seed-kai-platform",
        file: "kai-platform.yaml",
        about: "the seed platform's KAI / Run:ai Queues (read after seed-platform)",
        commands: &["gpuquota quotas platform.yaml kai-platform.yaml"],
        text: crate::sim::seed::KAI_PLATFORM,
    },
    Sample {
        name: "seed-kai-month",
        file: "kai-month.yaml",
        about: "the seed platform's month of work as KAI PodGroups (with seed-platform and seed-kai-platform)",
        commands: &["gpuquota validate platform.yaml kai-platform.yaml kai-month.yaml"],
        text: crate::sim::seed::KAI_MONTH,
    },
    Sample {
        name: "seed-kai",
        file: "kai.yaml",
        about: "the seed month under KAI / Run:ai (reads platform.yaml, kai-platform.yaml, kai-month.yaml)",
        commands: &["gpuquota sim kai.yaml -o table"],
        text: crate::sim::seed::KAI,
    },
    Sample {
        name: "advice-kai",
        file: "advice-kai.yaml",
        about: "advice: the seed month's KAI queues (batch's GPU limit, the assistant's deserved GPUs) that meet each class's wait within the budget (reads kai.yaml)",
        commands: &["gpuquota advise advice-kai.yaml --explain"],
        text: crate::sim::seed::ADVICE_KAI,
    },
    Sample {
        name: "seed-mig-configs",
        file: "mig-configs.yaml",
        about: "the seed platform's mig-parted configs (a ConfigMap) that the MIG window drill names",
        commands: &["gpuquota validate platform.yaml mig-configs.yaml"],
        text: crate::sim::seed::MIG_CONFIGS,
    },
    Sample {
        name: "seed-drill-server-fails-resourcequota",
        file: "drill-server-fails-resourcequota.yaml",
        about: "drill: rtx-a down for a day in the seed month, ResourceQuota only (reads platform.yaml, month.yaml)",
        commands: &["gpuquota sim drill-server-fails-resourcequota.yaml -o table"],
        text: crate::sim::seed::DRILL_SERVER_FAILS_RESOURCEQUOTA,
    },
    Sample {
        name: "seed-drill-server-fails-kueue",
        file: "drill-server-fails-kueue.yaml",
        about: "drill: rtx-a down for a day in the seed month under Kueue (reads platform.yaml, month.yaml)",
        commands: &["gpuquota sim drill-server-fails-kueue.yaml -o table"],
        text: crate::sim::seed::DRILL_SERVER_FAILS_KUEUE,
    },
    Sample {
        name: "seed-drill-mig-window-resourcequota",
        file: "drill-mig-window-resourcequota.yaml",
        about: "drill: rtx-b's MIG layout changed in a Sunday window, ResourceQuota only (reads platform.yaml, mig-configs.yaml, month.yaml)",
        commands: &["gpuquota sim drill-mig-window-resourcequota.yaml -o table"],
        text: crate::sim::seed::DRILL_MIG_WINDOW_RESOURCEQUOTA,
    },
    Sample {
        name: "seed-drill-mig-window-kueue",
        file: "drill-mig-window-kueue.yaml",
        about: "drill: rtx-b's MIG layout changed in a Sunday window under Kueue (reads platform.yaml, mig-configs.yaml, month.yaml)",
        commands: &["gpuquota sim drill-mig-window-kueue.yaml -o table"],
        text: crate::sim::seed::DRILL_MIG_WINDOW_KUEUE,
    },
    Sample {
        name: "seed-mig-plan",
        file: "seed-mig-plan.yaml",
        about: "the seed platform's MIG plan: the notebooks' eight 1g.24gb instances on rtx-b",
        commands: &["gpuquota mig plan seed-mig-plan.yaml"],
        text: crate::sim::seed::MIG_PLAN,
    },
];

/// The text `gpuquota example list` prints: every sample with what it is, the file to save it
/// as when that is not `NAME.yaml`, and its commands.
pub fn list() -> String {
    let width = SAMPLES.iter().map(|s| s.name.len()).max().unwrap_or(0);
    let mut out = String::from(
        "Sample inputs; save one with `gpuquota example NAME > NAME.yaml` (or the file shown), then run it:\n",
    );
    for s in SAMPLES {
        out.push_str(&format!("\n  {:width$}  {}\n", s.name, s.about));
        if s.file != format!("{}.yaml", s.name) {
            out.push_str(&format!("  {:width$}    > {}\n", "", s.file));
        }
        for c in s.commands {
            out.push_str(&format!("  {:width$}    {c}\n", ""));
        }
    }
    out
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
                assert!(c.contains(s.file), "{c}");
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
