//! `gpuquota completions SHELL`: the shell completion script, generated from the command
//! definition by `clap_complete`, so it always matches the installed binary.

use clap::CommandFactory;

use crate::common::CliError;

/// Arguments of `gpuquota completions`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples (install, then start a new shell; PowerShell: `... powershell >> $PROFILE`):
  bash        gpuquota completions bash > ~/.local/share/bash-completion/completions/gpuquota
  zsh         gpuquota completions zsh > ~/.zfunc/_gpuquota   # with fpath+=(~/.zfunc) in ~/.zshrc
  fish        gpuquota completions fish > ~/.config/fish/completions/gpuquota.fish")]
pub(crate) struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

/// The completion script of `shell` for the `gpuquota` command.
pub(crate) fn script(shell: clap_complete::Shell) -> Vec<u8> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut crate::Cli::command(), "gpuquota", &mut out);
    out
}

pub(crate) fn run(args: CompletionsArgs) -> Result<(), CliError> {
    crate::common::write_stdout(&script(args.shell))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap_complete::Shell;

    fn text(shell: Shell) -> String {
        String::from_utf8(script(shell)).unwrap()
    }

    #[test]
    fn every_shell_completes_the_subcommands() {
        for shell in [
            Shell::Bash,
            Shell::Elvish,
            Shell::Fish,
            Shell::PowerShell,
            Shell::Zsh,
        ] {
            let s = text(shell);
            for sub in [
                "validate", "quotas", "kueue", "kai", "mig", "meter", "example",
            ] {
                assert!(s.contains(sub), "{shell:?} completion lacks {sub}");
            }
        }
    }

    #[test]
    fn bash_script_defines_the_completion_function() {
        let s = text(Shell::Bash);
        assert!(s.contains("_gpuquota()"), "{s}");
        assert!(s.contains("complete -F _gpuquota"), "{s}");
        // Nested subcommands and their flags are completed too.
        assert!(
            s.contains("gpuquota__subcmd__kueue__subcmd__schedule"),
            "{s}"
        );
        assert!(s.contains("--cycles"), "{s}");
    }

    #[test]
    fn zsh_and_fish_scripts_name_the_command() {
        assert!(text(Shell::Zsh).starts_with("#compdef gpuquota\n"));
        assert!(text(Shell::Fish).contains("complete -c gpuquota "));
    }
}
